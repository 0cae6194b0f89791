"""The second stage of a search: rerank, formulation, score boosts.

Each changes the results in a test that fails without it, and leaves them
identical when it is the identity; reranked floors live under their own
calibration key; unnamed rerankers and boosts never persist or read a
floor; bad specs and bad reranker output fail with specific messages; the
Claude adapters are driven by a recording fake client (no network).
"""

from __future__ import annotations

import math
import warnings
from itertools import pairwise
from typing import Any

import pytest

from rowvoi.corpus import (
    Chunked,
    CorpusStore,
    Fields,
    IndexPlan,
    NoFloorWarning,
    RerankError,
    build,
    calibrate_min_score,
    calibration_key,
    discover,
    expand,
    field_contains_any,
    from_mapping,
    load_calibration,
    make_llm_formulator,
    parent_policy,
    resolve_reranker,
    search,
)
from rowvoi.corpus.retrieval.formulate import FormulationWarning
from rowvoi.corpus.retrieval.rerank import passage_texts, rerank_tag

DOCS = {
    "wing": {
        "title": "Wing lift",
        "body": "Lift and drag of a thin wing at low speed.",
        "tags": "aero",
    },
    "flutter": {
        "title": "Wing flutter",
        "body": "Flutter of a wing at high speed.",
        "tags": "aero",
    },
    "pipe": {
        "title": "Pipe flow",
        "body": "Heat transfer and friction in pipes.",
        "tags": "thermal",
    },
    "shock": {
        "title": "Shock waves",
        "body": "Oblique shock on a wedge at Mach two.",
        "tags": "aero",
    },
    "boiler": {
        "title": "Boiler design",
        "body": "Water tube boilers and heat exchangers.",
        "tags": "thermal",
    },
}


class _Tagged(Fields):
    """Fields, with the ``tags`` field as a filter field."""

    def decompose(self, artifact_id: str, raw: Any) -> IndexPlan:
        plan = super().decompose(artifact_id, raw)
        return IndexPlan({"tags": raw["tags"]}, plan.surfaces)


@pytest.fixture(scope="module")
def corpus() -> Any:
    src = from_mapping(DOCS, strategy=_Tagged(("title", "body")), embedder="hashing")
    return build(src, store=CorpusStore.memory())


def ids(hits: Any) -> list[str]:
    return [h.artifact_id for h in hits]


def named(fn: Any, name: str) -> Any:
    fn.rerank_id = name
    return fn


MODES = [("dense", "rrf"), ("lexical", "rrf"), ("hybrid", "rrf"), ("hybrid", "blend")]


# ------------------------------------------------------------------ rerank
def test_rerank_reorders_by_the_rerankers_scores(corpus: Any) -> None:
    plain = search(corpus, "wing speed wedge", mode="lexical", k=3)
    assert ids(plain)[0] != "shock"

    def prefers_shock(query: str, texts: list[str]) -> list[float]:
        return [1.0 if "shock" in t.lower() else 0.0 for t in texts]

    got = search(corpus, "wing speed wedge", mode="lexical", k=3, rerank=prefers_shock)
    assert ids(got)[0] == "shock"
    assert got[0].score == 1.0
    assert got[0].explain["rerank"]["score"] == 1.0
    assert got[0].explain["first_stage"]["rank"] >= 1


@pytest.mark.parametrize("mode,fusion", MODES)
def test_a_constant_reranker_keeps_the_first_stage_order(
    corpus: Any, mode: str, fusion: str
) -> None:
    for q in ("wing speed", "heat", "shock wedge"):
        plain = search(corpus, q, mode=mode, fusion=fusion, k=4)
        got = search(corpus, q, mode=mode, fusion=fusion, k=4, rerank=lambda q, t: [0.5] * len(t))
        assert ids(got) == ids(plain)
        assert [h.explain["first_stage"]["score"] for h in got] == [h.score for h in plain]


def test_rerank_text_artifact_reads_the_whole_artifact(corpus: Any) -> None:
    seen: list[list[str]] = []

    def spy(query: str, texts: list[str]) -> list[float]:
        seen.append(list(texts))
        return [0.0] * len(texts)

    search(corpus, "wing", mode="lexical", k=1, rerank=spy, rerank_text="artifact")
    assert "Wing lift\n\nLift and drag of a thin wing at low speed." in seen[0]
    hits = search(corpus, "wing", mode="lexical", k=2, per_artifact=False)
    assert passage_texts(corpus, hits, "surface") == [h.text for h in hits]
    assert passage_texts(corpus, hits, lambda c, h: h.artifact_id.upper()) == [
        h.artifact_id.upper() for h in hits
    ]


def test_rerank_text_artifact_keeps_chunk_overlap_once() -> None:
    # a chunked artifact: consecutive chunks share ~40 characters; the
    # artifact text a reranker reads is the text once, as expand shows it
    text = " ".join(f"w{i:03d}" for i in range(120))
    src = from_mapping(
        {"long": text, "short": "w000 apart"},
        strategy=Chunked(chunk_size=120, overlap=40),
        embedder="hashing",
    )
    c = build(src, store=CorpusStore.memory())
    recs = c.records_for_artifact("long")
    assert len(recs) > 3
    shared = [a.metadata["end"] - b.metadata["start"] for a, b in pairwise(recs)]
    assert min(shared) > 0  # the chunks do overlap
    hits = search(c, "w050", mode="lexical", k=1, per_artifact=False)
    assert hits[0].artifact_id == "long"
    (got,) = passage_texts(c, hits, "artifact", max_chars=10_000)
    assert got == text
    assert got.count("w050") == 1  # a blank-line join would repeat each overlap
    whole = expand(hits[0], c, policy=parent_policy())
    assert got == whole.text
    assert passage_texts(c, hits, "artifact", max_chars=50) == [text[:50]]


def test_rerank_fetches_fetch_k_candidates(corpus: Any) -> None:
    sizes: list[int] = []

    def count(query: str, texts: list[str]) -> list[float]:
        sizes.append(len(texts))
        return [0.0] * len(texts)

    search(corpus, "wing", mode="dense", k=1, rerank=count, fetch_k=3)
    assert sizes == [3]


@pytest.mark.parametrize(
    "bad,match",
    [
        (lambda q, t: [0.1] * (len(t) - 1), r"scores for \d+ texts; a reranker must return one"),
        (lambda q, t: [math.nan] * len(t), r"non-finite score \(nan\) for text 0"),
        (lambda q, t: "high", r"not a sequence of numbers|scores for"),
    ],
)
def test_bad_reranker_output_is_a_specific_error(corpus: Any, bad: Any, match: str) -> None:
    with pytest.raises(RerankError, match=match):
        search(corpus, "wing", mode="lexical", rerank=bad)


def test_bad_rerank_specs(corpus: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(RerankError, match=r"unknown rerank spec 'nope'; expected a callable"):
        search(corpus, "wing", rerank="nope")
    monkeypatch.delenv("ROWVOI_CROSS_ENCODER", raising=False)
    with pytest.raises(
        RerankError, match=r"no package on PyPI ships one's weights.*ROWVOI_CROSS_ENCODER"
    ):
        resolve_reranker("cross-encoder")
    with pytest.raises(RerankError, match=r"no model.onnx in"):
        resolve_reranker("cross-encoder:/nonexistent/folder")
    with pytest.raises(TypeError, match="rerank must be a callable"):
        resolve_reranker(3)
    with pytest.raises(RerankError, match="rerank_text='page'"):
        search(corpus, "wing", rerank=lambda q, t: [0.0] * len(t), rerank_text="page")


# ------------------------------------------------------------------ formulation
def test_formulation_finds_what_the_raw_query_misses(corpus: Any) -> None:
    assert "boiler" not in ids(search(corpus, "wing", mode="lexical", k=5))
    got = search(corpus, "wing", mode="lexical", k=5, formulate=lambda q: [q, "boilers"])
    assert "boiler" in ids(got)
    assert {h.explain["query"] for h in got} == {"wing", "boilers"}


@pytest.mark.parametrize("mode,fusion", MODES)
def test_identity_formulation_changes_nothing(corpus: Any, mode: str, fusion: str) -> None:
    for q in ("wing speed", "heat pipes"):
        plain = search(corpus, q, mode=mode, fusion=fusion, k=3)
        for f in (lambda q: q, lambda q: [q], lambda q: [q, q, " "]):
            got = search(corpus, q, mode=mode, fusion=fusion, k=3, formulate=f)
            assert [(h.artifact_id, h.score) for h in got] == [
                (h.artifact_id, h.score) for h in plain
            ]


def test_multi_query_fusion_keeps_each_surfaces_best_score(corpus: Any) -> None:
    a = search(corpus, "shock wedge", mode="lexical", k=5)
    b = search(corpus, "heat", mode="lexical", k=5)
    got = search(corpus, "shock wedge", mode="lexical", k=5, formulate=lambda q: [q, "heat"])
    best = {h.artifact_id: h.score for h in a}
    for h in b:
        best[h.artifact_id] = max(best.get(h.artifact_id, -1.0), h.score)
    assert {h.artifact_id: h.score for h in got} == best
    assert [h.score for h in got] == sorted((h.score for h in got), reverse=True)


def test_bad_formulations(corpus: Any) -> None:
    with pytest.raises(RerankError, match="formulate returned no query"):
        search(corpus, "wing", formulate=lambda q: [])
    with pytest.raises(RerankError, match="a formulator returns a query"):
        search(corpus, "wing", formulate=lambda q: 3)


def test_llm_formulator_falls_back_to_the_identity() -> None:
    calls: list[str] = []

    def complete(prompt: str) -> str:
        calls.append(prompt)
        return "1. aerofoil lift\n- lift of wings\n"

    f = make_llm_formulator(complete, n=1)
    assert f("wing lift") == ["wing lift", "aerofoil lift"]
    assert "Query: wing lift" in calls[0]
    for bad in (lambda p: "", lambda p: 1 / 0, lambda p: ["", "  "]):
        with pytest.warns(FormulationWarning):
            assert make_llm_formulator(bad)("wing lift") == ["wing lift"]


# ------------------------------------------------------------------ boosts
def test_a_boost_changes_the_order(corpus: Any) -> None:
    plain = search(corpus, "wing speed", mode="lexical", k=5)
    assert ids(plain)[0] != "pipe"
    boosted = search(
        corpus,
        "wing speed heat",
        mode="lexical",
        k=5,
        boost=field_contains_any("tags", ["Thermal"], 100.0),
    )
    assert set(ids(boosted)[:2]) == {"pipe", "boiler"}
    assert boosted[0].explain["boost"] == 100.0


@pytest.mark.parametrize("mode,fusion", MODES)
def test_a_zero_boost_changes_nothing(corpus: Any, mode: str, fusion: str) -> None:
    for q in ("wing speed", "heat pipes", "shock"):
        # (a boost fetches max(5 k, 50) candidates, as a collapsing search
        # does; without the collapse, a plain search fetches k unless told)
        for per_artifact, fetch in ((True, None), (False, 50)):
            plain = search(
                corpus, q, mode=mode, fusion=fusion, k=3, per_artifact=per_artifact, fetch_k=fetch
            )
            got = search(
                corpus,
                q,
                mode=mode,
                fusion=fusion,
                k=3,
                per_artifact=per_artifact,
                boost=lambda h: 0.0,
            )
            assert [(h.artifact_id, h.surface_kind, h.score) for h in got] == [
                (h.artifact_id, h.surface_kind, h.score) for h in plain
            ]


def test_a_bad_boost_is_a_specific_error(corpus: Any) -> None:
    with pytest.raises(RerankError, match="a ScoreBoost must return a finite number"):
        search(corpus, "wing", boost=lambda h: math.inf)
    with pytest.raises(TypeError, match="boost must be a callable"):
        search(corpus, "wing", boost=1.0)


# ------------------------------------------------------------------ floors
def test_calibration_keys_are_separate() -> None:
    assert calibration_key("hybrid") == "hybrid"
    assert calibration_key("hybrid", "rerank-m+artifact") == "hybrid+rerank-m+artifact"
    m = named(lambda q, t: [0.0] * len(t), "m")
    assert (
        calibration_key("hybrid", "rrf", rerank_tag(m, "artifact")) == "hybrid+rerank-m+artifact"
    )
    assert rerank_tag(m, "artifact", max_chars=500) == "rerank-m+artifact500"


def test_a_reranked_floor_is_stored_and_read_under_its_own_key(corpus: Any) -> None:
    rr = named(lambda q, t: [1.0 if "wing" in s.lower() else 0.1 for s in t], "wingy")
    cal = calibrate_min_score(corpus, ["wing lift"], ["boiler heat"], mode="lexical", rerank=rr)
    assert cal.key == "lexical+rerank-wingy+surface"
    assert 0.1 < cal.min_score <= 1.0
    assert load_calibration(corpus, "lexical") is None  # the plain key holds nothing
    assert load_calibration(corpus, "lexical", rerank=rr).min_score == cal.min_score
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoFloorWarning)
        res = discover(corpus, "boiler heat", mode="lexical", min_score="auto", rerank=rr)
    assert res.abstained and res.signals["floor_from"] == "calibration"
    # the plain search finds no floor under its own key
    with pytest.warns(NoFloorWarning, match="no floor is calibrated for 'lexical'"):
        discover(corpus, "boiler heat", mode="lexical", min_score="auto")


def test_an_unnamed_reranker_cannot_persist_or_read_a_floor(corpus: Any) -> None:
    anon = lambda q, t: [0.5] * len(t)  # noqa: E731
    with pytest.raises(ValueError, match=r"unnamed reranker.*rerank_id"):
        calibrate_min_score(corpus, ["wing"], ["boiler"], mode="lexical", rerank=anon)
    cal = calibrate_min_score(
        corpus, ["wing"], ["boiler"], mode="lexical", rerank=anon, save=False
    )
    assert cal.key == "lexical+rerank-~anonymous+surface"
    with pytest.warns(NoFloorWarning, match="reranker has no name"):
        res = discover(corpus, "wing", mode="lexical", min_score="auto", rerank=anon)
    assert res.signals["floor_from"] is None


def test_boosted_scores_refuse_auto_floors(corpus: Any) -> None:
    calibrate_min_score(corpus, ["wing lift"], ["boiler heat"], mode="dense")
    with pytest.warns(NoFloorWarning, match="a boost shifts scores"):
        res = discover(corpus, "wing", mode="dense", min_score="auto", boost=lambda h: 0.0)
    assert res.signals["floor_from"] is None
    with pytest.raises(ValueError, match="with a boost cannot be saved"):
        calibrate_min_score(corpus, ["wing"], ["boiler"], mode="dense", boost=lambda h: 0.0)


def test_discover_passes_rerank_through(corpus: Any) -> None:
    rr = named(lambda q, t: [1.0 if "boiler" in s.lower() else 0.0 for s in t], "boil")
    res = discover(corpus, "heat", mode="lexical", rerank=rr, rerank_text="artifact")
    assert res.ids[0] == "boiler"


# ------------------------------------------------------------------ Claude
class _Messages:
    def __init__(self, replies: list[Any]) -> None:
        self.replies = replies
        self.requests: list[dict[str, Any]] = []

    def create(self, **request: Any) -> Any:
        self.requests.append(request)
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply


class _Client:
    def __init__(self, *replies: Any) -> None:
        self.messages = _Messages(list(replies))


def _tool(name: str, data: Any) -> dict[str, Any]:
    return {
        "stop_reason": "tool_use",
        "content": [{"type": "tool_use", "name": name, "input": data}],
    }


def test_claude_reranker_request_and_validation(corpus: Any) -> None:
    from rowvoi.rag.claude_search import ClaudeReranker

    def reply(n: int, best: int) -> dict[str, Any]:
        return _tool(
            "record_relevance",
            {
                "scores": [{"id": str(i), "score": 1.0 if i == best else 0.1} for i in range(n)]
                + [{"id": "99", "score": 1.0}]
            },
        )

    client = _Client(reply(2, 1))
    rr = ClaudeReranker(client=client, model="m1")
    assert rr("wing", ["a", "b"]) == [0.1, 1.0]
    req = client.messages.requests[0]
    assert req["tool_choice"] == {"type": "tool", "name": "record_relevance"}
    assert req["messages"][0]["content"][0]["cache_control"] == {"type": "ephemeral"}
    assert '<passage id="1">\nb' in req["messages"][0]["content"][0]["text"]
    assert "wing" in req["messages"][0]["content"][1]["text"]
    assert rr.rerank_id.startswith("claude-m1-")
    bad = [
        (_tool("record_relevance", {"scores": [{"id": "0", "score": 0.5}]}), "scores no passage"),
        (
            _tool(
                "record_relevance", {"scores": [{"id": "0", "score": 2}, {"id": "1", "score": 0}]}
            ),
            r"in \[0, 1\]",
        ),
        (
            _tool(
                "record_relevance",
                {
                    "scores": [
                        {"id": "0", "score": 0.1},
                        {"id": "0", "score": 0.2},
                        {"id": "1", "score": 0},
                    ]
                },
            ),
            "scored twice",
        ),
        (
            {"stop_reason": "end_turn", "content": [{"type": "text", "text": "hi"}]},
            "no record_relevance",
        ),
    ]
    for r, match in bad:
        with pytest.raises(ValueError, match=match):
            ClaudeReranker(client=_Client(r))("wing", ["a", "b"])
    # through a search: the reranker's favourite comes first
    hits = search(corpus, "wing", mode="lexical", k=2, per_artifact=False)
    n = len(search(corpus, "wing", mode="lexical", k=10, per_artifact=False, fetch_k=50))
    got = search(
        corpus,
        "wing",
        mode="lexical",
        k=2,
        fetch_k=50,
        rerank=ClaudeReranker(client=_Client(reply(n, n - 1))),
    )
    assert ids(got)[0] != hits[0].artifact_id or n == 1


def test_claude_formulator_falls_back(corpus: Any) -> None:
    from rowvoi.rag.claude_search import ClaudeFormulator

    client = _Client(_tool("record_queries", {"queries": ["boilers", "wing"]}))
    f = ClaudeFormulator(client=client, n=2)
    assert f("wing") == ["wing", "boilers"]
    assert client.messages.requests[0]["tool_choice"]["name"] == "record_queries"
    for r in (
        RuntimeError("network down"),
        _tool("record_queries", {"queries": []}),
        _tool("record_queries", {"other": 1}),
    ):
        with pytest.warns(FormulationWarning):
            assert ClaudeFormulator(client=_Client(r))("wing") == ["wing"]
    got = search(
        corpus,
        "wing",
        mode="lexical",
        k=5,
        formulate=ClaudeFormulator(
            client=_Client(_tool("record_queries", {"queries": ["boilers"]}))
        ),
    )
    assert "boiler" in ids(got)


# ------------------------------------------------------------------ tools
def test_tool_surfaces_take_the_second_stage(corpus: Any) -> None:
    from rowvoi.corpus import tools

    q = "wing speed wedge"
    plain = tools.search(q, corpus=corpus, mode="lexical")
    assert plain == discover(corpus, q, mode="lexical").to_dict()
    first = [r["artifact_id"] for r in plain["results"]]
    assert first and first[0] != "shock"

    def prefers_shock(query: str, texts: list[str]) -> list[float]:
        return [1.0 if "shock" in t.lower() else 0.0 for t in texts]

    got = tools.search(q, corpus=corpus, mode="lexical", rerank=prefers_shock)
    assert got["results"][0]["artifact_id"] == "shock"
    tool = tools.make_search(corpus, mode="lexical", rerank=prefers_shock)
    assert tool(q) == got
    boosted = tools.make_search(
        corpus, mode="lexical", boost=field_contains_any("tags", ["thermal"], 5.0)
    )
    assert {r["artifact_id"] for r in boosted("wing heat")["results"]} <= {"pipe", "boiler"}
    assert tools.search("aerofoil", corpus=corpus, mode="lexical")["results"] == []
    rewrite = tools.make_search(corpus, mode="lexical", formulate=lambda s: [s, "flutter"])
    assert [r["artifact_id"] for r in rewrite("aerofoil")["results"]] == ["flutter"]
    # an identity formulation and a zero boost leave the tool's answer as it was
    same = tools.make_search(corpus, mode="lexical", formulate=lambda s: s, boost=lambda h: 0.0)
    assert same(q) == plain


def test_tool_surfaces_check_the_second_stage_when_made(
    corpus: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rowvoi.corpus import tools

    monkeypatch.delenv("ROWVOI_CROSS_ENCODER", raising=False)
    with pytest.raises(RerankError, match="set ROWVOI_CROSS_ENCODER"):
        tools.make_search(corpus, rerank="cross-encoder")
    with pytest.raises(RerankError, match="rerank_text='page'"):
        tools.make_search(corpus, rerank_text="page")
    with pytest.raises(RerankError, match="rerank_text='page'"):
        tools.search("wing", corpus=corpus, rerank_text="page")
    with pytest.raises(TypeError, match="boost must be a callable, not float"):
        tools.make_search(corpus, boost=0.5)
    with pytest.raises(TypeError, match="formulate must be a callable, not str"):
        tools.make_search(corpus, formulate="wing")
