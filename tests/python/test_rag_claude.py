"""The Claude adapters, against a recording fake client: no network, no SDK needed."""

import copy
import json
import subprocess
import sys

import pytest

from rowvoi.rag import Chunk, extract_and_select, select_context
from rowvoi.rag.claude import (
    DEFAULT_MODEL,
    ClaudeClaimExtractor,
    ClaudeSupportJudge,
)
from rowvoi.rag.protocols import ClaimExtractor, SupportJudge

CHUNKS = [
    Chunk("doc1#p2", "The Pro plan costs $40/seat/mo.", tokens=180),
    Chunk("doc2#p1", "v4.2 shipped March 3rd, 2026.", tokens=150),
    Chunk("faq#p1", "Pricing, releases, and SSO.", tokens=1550),
]
PAIRS = [(c.id, c.text) for c in CHUNKS]
CLAIMS = ["pro_plan_price", "v42_release_date"]


def tool_reply(name, data, stop_reason="tool_use", text=None):
    content = [{"type": "text", "text": text}] if text else []
    content.append({"type": "tool_use", "id": "toolu_1", "name": name, "input": data})
    return {"stop_reason": stop_reason, "content": content}


class FakeClient:
    """Records every request; answers with the replies it was given, in turn."""

    def __init__(self, *replies):
        self.replies = list(replies)
        self.requests = []
        self.messages = self

    def create(self, **request):
        self.requests.append(copy.deepcopy(request))
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        return reply() if callable(reply) else reply


class Obj:
    """An SDK-like reply: attributes instead of keys."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


def support_reply(entries):
    return tool_reply("record_support", {"support": entries})


GOOD_SUPPORT = support_reply(
    [
        {"claim": "pro_plan_price", "chunk_ids": ["doc1#p2", "faq#p1"]},
        {"claim": "v42_release_date", "chunk_ids": ["doc2#p1", "faq#p1"]},
    ]
)


# ----------------------------------------------------------------- imports
def test_importing_needs_no_sdk_and_rag_does_not_import_it():
    code = (
        "import sys, rowvoi.rag\n"
        "assert 'rowvoi.rag.claude' not in sys.modules\n"
        "import rowvoi.rag.claude\n"
        "assert 'anthropic' not in sys.modules\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr


def test_building_without_a_client_needs_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "anthropic", None)  # as if not installed
    for cls in (ClaudeClaimExtractor, ClaudeSupportJudge):
        with pytest.raises(ImportError, match=r'pip install "rowvoi\[claude\]"'):
            cls()


def test_client_and_settings_are_checked():
    with pytest.raises(TypeError, match=r"messages\.create"):
        ClaudeSupportJudge(client=object())
    with pytest.raises(TypeError, match="model"):
        ClaudeSupportJudge(client=FakeClient(GOOD_SUPPORT), model="")
    with pytest.raises(ValueError, match="max_tokens"):
        ClaudeClaimExtractor(client=FakeClient(GOOD_SUPPORT), max_tokens=0)


def test_they_implement_the_protocols():
    assert isinstance(ClaudeClaimExtractor(client=FakeClient(GOOD_SUPPORT)), ClaimExtractor)
    assert isinstance(ClaudeSupportJudge(client=FakeClient(GOOD_SUPPORT)), SupportJudge)


# ------------------------------------------------------------ the extractor
def test_extractor_request_shape_and_parsing():
    client = FakeClient(
        tool_reply(
            "record_claims", {"claims": [" price of Pro ", "v4.2 date", "price of Pro", ""]}
        )
    )
    extractor = ClaudeClaimExtractor(client=client, model="claude-test-1", max_tokens=321)
    assert extractor.extract("How much is Pro and when did v4.2 ship?") == [
        "price of Pro",
        "v4.2 date",
    ]
    (req,) = client.requests
    assert req["model"] == "claude-test-1" and req["max_tokens"] == 321
    assert [t["name"] for t in req["tools"]] == ["record_claims"]
    assert req["tools"][0]["input_schema"]["required"] == ["claims"]
    assert req["tool_choice"] == {"type": "tool", "name": "record_claims"}
    assert isinstance(req["system"], str) and "record_claims" in req["system"]
    (msg,) = req["messages"]
    assert msg["role"] == "user"
    assert "How much is Pro and when did v4.2 ship?" in msg["content"][0]["text"]
    assert ClaudeClaimExtractor(client=FakeClient(GOOD_SUPPORT)).model == DEFAULT_MODEL


def test_extractor_rejects_bad_queries_without_a_request():
    client = FakeClient(GOOD_SUPPORT)
    with pytest.raises(TypeError):
        ClaudeClaimExtractor(client=client).extract(42)
    with pytest.raises(ValueError, match="empty"):
        ClaudeClaimExtractor(client=client).extract("   ")
    assert client.requests == []


@pytest.mark.parametrize(
    "reply, message",
    [
        (tool_reply("record_claims", {}), "no 'claims' field"),
        (tool_reply("record_claims", {"claims": "price"}), "list of strings"),
        (tool_reply("record_claims", {"claims": ["price", 3]}), "list of strings"),
        (tool_reply("record_claims", {"claims": ["  "]}), "lists no claims"),
        (tool_reply("record_claims", ["price"]), "must be an object"),
        (tool_reply("other_tool", {"claims": ["x"]}), "no record_claims tool call"),
        (
            {"stop_reason": "end_turn", "content": [{"type": "text", "text": "price"}]},
            "no record_claims tool call",
        ),
        ({"stop_reason": "max_tokens", "content": []}, "max_tokens=4096"),
        ({"stop_reason": "end_turn"}, "no content"),
    ],
)
def test_extractor_malformed_replies(reply, message):
    with pytest.raises(ValueError, match=message):
        ClaudeClaimExtractor(client=FakeClient(reply)).extract("q?")


# ---------------------------------------------------------------- the judge
def test_judge_request_shape_and_cache_breakpoint():
    client = FakeClient(GOOD_SUPPORT)
    judge = ClaudeSupportJudge(client=client, model="claude-test-2")
    support = judge.judge(PAIRS, CLAIMS)
    assert support == {
        "pro_plan_price": {"doc1#p2", "faq#p1"},
        "v42_release_date": {"doc2#p1", "faq#p1"},
    }
    (req,) = client.requests  # one request for the whole matrix
    assert req["model"] == "claude-test-2" and req["max_tokens"] == 4096
    (tool,) = req["tools"]
    assert tool["name"] == "record_support"
    item = tool["input_schema"]["properties"]["support"]["items"]
    assert item["required"] == ["claim", "chunk_ids"]
    assert req["tool_choice"] == {"type": "tool", "name": "record_support"}
    (msg,) = req["messages"]
    chunks_block, claims_block = msg["content"]
    # the chunks are the cached prefix: the breakpoint sits on their block, and only there
    assert chunks_block["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in claims_block
    assert "cache_control" not in tool and isinstance(req["system"], str)
    for cid, text in PAIRS:
        assert f'<chunk id="{cid}">' in chunks_block["text"] and text in chunks_block["text"]
        assert cid not in claims_block["text"]
    for claim in CLAIMS:
        assert claim in claims_block["text"] and claim not in chunks_block["text"]


def test_same_chunks_give_the_same_cached_prefix():
    client = FakeClient(GOOD_SUPPORT)
    judge = ClaudeSupportJudge(client=client)
    judge.judge(PAIRS, CLAIMS)
    judge.judge(PAIRS, ["pro_plan_price"])
    first, second = client.requests
    prefix = ("model", "system", "tools", "tool_choice")
    assert all(first[k] == second[k] for k in prefix)
    assert first["messages"][0]["content"][0] == second["messages"][0]["content"][0]
    assert first["messages"][0]["content"][1] != second["messages"][0]["content"][1]


def test_judge_drops_unknown_claims_and_chunk_ids_and_fills_every_claim():
    reply = support_reply(
        [
            {"claim": "pro_plan_price", "chunk_ids": ["doc1#p2", "doc9#p9"]},
            {"claim": "refund_policy", "chunk_ids": ["faq#p1"]},
            {"claim": "pro_plan_price", "chunk_ids": ["faq#p1"]},  # repeated: merged
        ]
    )
    support = ClaudeSupportJudge(client=FakeClient(reply)).judge(PAIRS, CLAIMS)
    assert support == {"pro_plan_price": {"doc1#p2", "faq#p1"}, "v42_release_date": set()}
    assert list(support) == CLAIMS


def test_judge_maps_non_string_ids_back():
    pairs = [(1, "one"), (("doc", 2), "two")]
    reply = support_reply([{"claim": "7", "chunk_ids": ["1", "('doc', 2)"]}])
    assert ClaudeSupportJudge(client=FakeClient(reply)).judge(pairs, [7]) == {7: {1, ("doc", 2)}}
    with pytest.raises(ValueError, match="distinct as text"):
        ClaudeSupportJudge(client=FakeClient(reply)).judge([(1, "a"), ("1", "b")], [7])
    with pytest.raises(ValueError, match="unique"):
        ClaudeSupportJudge(client=FakeClient(reply)).judge([(1, "a"), (1, "b")], [7])
    with pytest.raises(ValueError, match="unique"):
        ClaudeSupportJudge(client=FakeClient(reply)).judge(pairs, [7, 7])


def test_judge_without_claims_or_chunks_sends_nothing():
    client = FakeClient(GOOD_SUPPORT)
    judge = ClaudeSupportJudge(client=client)
    assert judge.judge(PAIRS, []) == {}
    assert judge.judge([], CLAIMS) == {c: set() for c in CLAIMS}
    assert client.requests == []
    with pytest.raises(TypeError, match="pair"):
        judge.judge(["doc1#p2"], CLAIMS)
    with pytest.raises(TypeError, match="str"):
        judge.judge([("a", 5)], CLAIMS)


@pytest.mark.parametrize(
    "reply, message",
    [
        (tool_reply("record_support", {}), "no 'support' field"),
        (tool_reply("record_support", {"support": {"pro_plan_price": []}}), "must be a list"),
        (support_reply(["pro_plan_price"]), r"support\[0\] must be an object"),
        (support_reply([{"claim": "pro_plan_price"}]), r"support\[0\] has no 'chunk_ids'"),
        (support_reply([{"chunk_ids": []}]), r"support\[0\] has no 'claim'"),
        (support_reply([{"claim": 3, "chunk_ids": []}]), r"support\[0\]\.claim must be a string"),
        (
            support_reply([{"claim": "pro_plan_price", "chunk_ids": "doc1#p2"}]),
            r"chunk_ids must be a list of strings",
        ),
        (
            support_reply([{"claim": "pro_plan_price", "chunk_ids": [1]}]),
            r"chunk_ids must be a list of strings",
        ),
        (tool_reply("record_support", "nope"), "must be an object"),
        (
            {"stop_reason": "end_turn", "content": [{"type": "text", "text": "All supported."}]},
            "no record_support tool call",
        ),
        (
            {
                "stop_reason": "max_tokens",
                "content": [{"type": "tool_use", "name": "record_support", "input": {}}],
            },
            "cut off at max_tokens",
        ),
        ({"content": None}, "no content"),
    ],
)
def test_judge_malformed_replies(reply, message):
    with pytest.raises(ValueError, match=message):
        ClaudeSupportJudge(client=FakeClient(reply)).judge(PAIRS, CLAIMS)


def test_sdk_style_objects_are_read_too():
    block = Obj(
        type="tool_use",
        id="toolu_1",
        name="record_support",
        input={"support": [{"claim": "pro_plan_price", "chunk_ids": ["doc1#p2"]}]},
    )
    reply = Obj(stop_reason="tool_use", content=[Obj(type="text", text="Here:"), block])
    assert ClaudeSupportJudge(client=FakeClient(reply)).judge(PAIRS, CLAIMS) == {
        "pro_plan_price": {"doc1#p2"},
        "v42_release_date": set(),
    }


def test_force_tool_false_offers_the_tool_without_forcing_it():
    client = FakeClient(GOOD_SUPPORT)
    ClaudeSupportJudge(client=client, force_tool=False).judge(PAIRS, CLAIMS)
    assert client.requests[0]["tool_choice"] == {"type": "auto"}
    assert "record_support" in client.requests[0]["system"]


# ---------------------------------------------------------------- end to end
def test_select_context_fed_by_the_fake_judge():
    judge = ClaudeSupportJudge(client=FakeClient(GOOD_SUPPORT))
    support = judge.judge(PAIRS, CLAIMS)
    selection = select_context(CHUNKS, CLAIMS, support)
    assert sorted(selection.chunks) == ["doc1#p2", "doc2#p1"]
    assert selection.total_cost == 330.0 and selection.coverage == 1.0


def test_extract_and_select_with_both_adapters():
    extractor = ClaudeClaimExtractor(
        client=FakeClient(tool_reply("record_claims", {"claims": CLAIMS + ["refund_policy"]}))
    )
    hallucinating = support_reply(
        [
            {"claim": "pro_plan_price", "chunk_ids": ["doc1#p2", "faq#p1"]},
            {"claim": "v42_release_date", "chunk_ids": ["doc2#p1", "faq#p1", "blog#x"]},
            {"claim": "refund_policy", "chunk_ids": []},
            {"claim": "sso", "chunk_ids": ["faq#p1"]},
        ]
    )
    judge = ClaudeSupportJudge(client=FakeClient(hallucinating))
    selection = extract_and_select(
        "Pro price, v4.2 date, refunds?", CHUNKS, extractor=extractor, judge=judge
    )
    assert sorted(selection.chunks) == ["doc1#p2", "doc2#p1"]
    assert selection.missing_claims == {"refund_policy"}
    assert selection.coverage == pytest.approx(2 / 3)
    assert json.loads(json.dumps(sorted(selection.covered_claims))) == sorted(CLAIMS)


# ------------------------------------------------ the real SDK, offline
def test_with_the_real_sdk_over_a_mock_transport():
    anthropic = pytest.importorskip("anthropic")
    try:  # anthropic 2.x runs on httpx2, earlier releases on httpx
        import httpx2 as httpx
    except ImportError:
        httpx = pytest.importorskip("httpx")
    seen = []

    def handler(request):
        body = json.loads(request.content)
        seen.append(body)
        return httpx.Response(
            200,
            json={
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": body["model"],
                "stop_reason": "tool_use",
                "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 5},
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "record_support",
                        "input": {
                            "support": [{"claim": "pro_plan_price", "chunk_ids": ["doc1#p2"]}]
                        },
                    }
                ],
            },
        )

    client = anthropic.Anthropic(
        api_key="test-key",
        max_retries=0,
        http_client=httpx.Client(transport=httpx.MockTransport(handler)),
    )
    support = ClaudeSupportJudge(client=client).judge(PAIRS, CLAIMS)
    assert support == {"pro_plan_price": {"doc1#p2"}, "v42_release_date": set()}
    (body,) = seen
    assert body["model"] == DEFAULT_MODEL
    assert body["messages"][0]["content"][0]["cache_control"] == {"type": "ephemeral"}
    assert body["tool_choice"] == {"type": "tool", "name": "record_support"}
