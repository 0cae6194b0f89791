"""The Claude synthesizer and selection model, against a recording fake
client: no network, no SDK needed."""

import copy
import json
import subprocess
import sys
import warnings

import pytest

from rowvoi.corpus import (
    Artifact,
    Capability,
    CorpusStore,
    SearchHit,
    SelectorFallbackWarning,
    SynopsisWarning,
    build,
    from_mcp_tools,
    make_llm_selector,
    make_thin_description_predicate,
    search,
    select,
    with_synopsis,
)
from rowvoi.rag.claude import DEFAULT_MODEL
from rowvoi.rag.claude_corpus import (
    SYNOPSIS_SYSTEM,
    ClaudeSelectionModel,
    ClaudeSynthesizer,
)


def tool_reply(name, data, stop_reason="tool_use"):
    return {
        "stop_reason": stop_reason,
        "content": [{"type": "tool_use", "id": "toolu_1", "name": name, "input": data}],
    }


class FakeClient:
    """Records every request; answers with ``reply(request)``."""

    def __init__(self, reply):
        self.reply = reply
        self.requests = []
        self.messages = self

    def create(self, **request):
        self.requests.append(copy.deepcopy(request))
        return self.reply(request) if callable(self.reply) else self.reply


TOOLS = [
    {
        "server": "jira",
        "name": "get_project_versions",
        "description": "Versions.",
        "inputSchema": {"type": "object", "properties": {"project_key": {"type": "string"}}},
    },
    {
        "server": "jira",
        "name": "create_issue",
        "description": "Create a Jira issue (story, task or bug) in a project.",
    },
    {"server": "slack", "name": "send_message", "description": "Post a message to a channel."},
]


def test_synthesizer_request_is_forced_cached_and_shows_the_schema():
    client = FakeClient(
        tool_reply(
            "record_synopsis", {"synopsis": "  Lists the release\n versions of a Jira project.  "}
        )
    )
    synth = ClaudeSynthesizer(client=client)
    raw = {
        "name": "get_project_versions",
        "description": "Versions.",
        "parameters": {"type": "object", "properties": {"project_key": {"type": "string"}}},
    }
    assert synth(Artifact("jira.get_project_versions", raw)) == (
        "Lists the release versions of a Jira project."
    )
    (req,) = client.requests
    assert req["model"] == DEFAULT_MODEL and req["max_tokens"] == 512
    assert req["tool_choice"] == {"type": "tool", "name": "record_synopsis"}
    assert [t["name"] for t in req["tools"]] == ["record_synopsis"]
    assert req["system"] == [
        {"type": "text", "text": SYNOPSIS_SYSTEM, "cache_control": {"type": "ephemeral"}}
    ]
    text = req["messages"][0]["content"][0]["text"]
    assert text.startswith("Item id: jira.get_project_versions")
    assert '"project_key"' in text and '"Versions."' in text


def test_synthesizer_id_follows_model_prompt_and_input_limit():
    c = FakeClient(tool_reply("record_synopsis", {"synopsis": "s"}))
    ids = {
        ClaudeSynthesizer(client=c).synthesizer_id,
        ClaudeSynthesizer(client=c, model="claude-sonnet-4-6").synthesizer_id,
        ClaudeSynthesizer(client=c, system="Summarize the tool.").synthesizer_id,
        ClaudeSynthesizer(client=c, max_input_chars=100).synthesizer_id,
    }
    assert len(ids) == 4
    assert ClaudeSynthesizer(client=c).synthesizer_id == ClaudeSynthesizer(client=c).synthesizer_id
    long = ClaudeSynthesizer(client=c, max_input_chars=50)
    long(Artifact("a", "x" * 500))
    assert c.requests[-1]["messages"][0]["content"][0]["text"].endswith("x" * 50 + "\n[... cut]")


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (tool_reply("record_synopsis", {"synopsis": " \n "}), "empty synopsis"),
        (tool_reply("record_synopsis", {"synopsis": ["a"]}), "must be a string"),
        (tool_reply("record_synopsis", {}), "must be a string"),
        (tool_reply("record_other", {"synopsis": "x"}), "no record_synopsis tool call"),
        (
            tool_reply("record_synopsis", {"synopsis": "x"}, stop_reason="max_tokens"),
            "cut off at max_tokens=512",
        ),
        ({"content": "text"}, "no content list"),
    ],
)
def test_synthesizer_refuses_malformed_replies(reply, message):
    with pytest.raises(ValueError, match=message):
        ClaudeSynthesizer(client=FakeClient(reply))(Artifact("a", {"description": ""}))


def test_synthesizer_under_with_synopsis_in_a_build():
    """Gated tools get Claude's synopsis (its id folds into the strategy
    id); a failed reply for one skips that synopsis with a warning."""

    def reply(request):
        text = request["messages"][0]["content"][0]["text"]
        if "slack.send_message" in text:
            return tool_reply("record_synopsis", {"synopsis": ""})  # malformed: empty
        return tool_reply(
            "record_synopsis",
            {"synopsis": "Lists the release versions planned for a Jira project."},
        )

    client = FakeClient(reply)
    synth = ClaudeSynthesizer(client=client)
    strat = with_synopsis(
        Capability(), synthesize=synth, when=make_thin_description_predicate(min_chars=30)
    )
    assert synth.synthesizer_id in strat.strategy_id
    src = from_mcp_tools(TOOLS, embedder="hashing")
    src.indexing_strategy = strat
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        corpus = build(src, store=CorpusStore.memory(), progress=False)
    assert len(client.requests) == 2  # the two thin tools, not create_issue
    (w,) = [w for w in caught if issubclass(w.category, SynopsisWarning)]
    assert "slack.send_message" in str(w.message) and "empty synopsis" in str(w.message)
    hit = search(corpus, "planned release versions", mode="lexical")[0]
    assert (hit.artifact_id, hit.surface_kind) == ("jira.get_project_versions", "synopsis")


HITS = [
    SearchHit("jira.create_issue", "capability", 0.71, "jira.create_issue: Create a Jira issue"),
    SearchHit("github.create_issue", "capability", 0.70, "github.create_issue: Open an issue"),
]


def test_selection_model_drives_make_llm_selector():
    client = FakeClient(tool_reply("record_selection", {"ids": ["github.create_issue"]}))
    sel = select(
        HITS,
        strategy=make_llm_selector(ClaudeSelectionModel(client=client)),
        query="file a bug on the GitHub repo",
    )
    assert sel.selected_ids == ["github.create_issue"]
    (req,) = client.requests
    assert req["tool_choice"] == {"type": "tool", "name": "record_selection"}
    assert req["system"][0]["cache_control"] == {"type": "ephemeral"}
    prompt = req["messages"][0]["content"][0]["text"]
    assert "file a bug on the GitHub repo" in prompt and '"id": "jira.create_issue"' in prompt
    assert json.loads(ClaudeSelectionModel(client=client)("p")) == {"ids": ["github.create_issue"]}


@pytest.mark.parametrize(
    "reply",
    [
        tool_reply("record_selection", {"ids": "github.create_issue"}),
        tool_reply("record_selection", {"ids": ["made.up"]}),
        tool_reply("record_selection", {"ids": ["github.create_issue"]}, stop_reason="max_tokens"),
        {"stop_reason": "end_turn", "content": [{"type": "text", "text": "GitHub."}]},
    ],
)
def test_a_bad_claude_reply_falls_back_to_the_heuristic(reply):
    pick = make_llm_selector(ClaudeSelectionModel(client=FakeClient(reply)))
    with pytest.warns(SelectorFallbackWarning):
        sel = select(HITS, strategy=pick, query="file a bug on the GitHub repo")
    assert sel.selected_ids == ["jira.create_issue", "github.create_issue"]


def test_bad_settings_and_no_sdk_import():
    c = FakeClient(tool_reply("record_synopsis", {"synopsis": "s"}))
    with pytest.raises(TypeError, match="system"):
        ClaudeSynthesizer(client=c, system="")
    with pytest.raises(ValueError, match="max_input_chars"):
        ClaudeSynthesizer(client=c, max_input_chars=0)
    with pytest.raises(TypeError, match=r"messages\.create"):
        ClaudeSelectionModel(client=object())
    with pytest.raises(ValueError, match="non-empty"):
        ClaudeSelectionModel(client=c)("  ")
    code = "import sys, rowvoi.rag.claude_corpus, rowvoi.corpus; print('anthropic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
