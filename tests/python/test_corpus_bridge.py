"""rowvoi.rag.corpus: search hits as chunks and priors, searches as probes,
and the example that runs the decision layer on a corpus."""

import pathlib
import runpy
import threading

import numpy as np
import pytest

from rowvoi import StopRules
from rowvoi.corpus import CorpusStore, SearchHit, build, from_mapping, search
from rowvoi.rag import RetrievalSession, next_question, select_context
from rowvoi.rag.corpus import (
    HIT,
    MISS,
    SearchProbe,
    SearchProbeRunner,
    chunk_ids,
    count_tokens,
    hits_to_chunks,
    prior_from_hits,
    probe_outcomes,
)
from rowvoi.rag.protocols import ProbeRunner

ROOT = pathlib.Path(__file__).resolve().parents[2]


def mem(docs, name, **kw):
    return build(
        from_mapping(docs, name=name, embedder="hashing", **kw),
        store=CorpusStore.memory(),
        progress=False,
    )


@pytest.fixture(scope="module")
def kb():
    return mem(
        {
            "cert": "the tls certificate expired on the gateway",
            "pool": "database connection pool exhausted, too many connections",
            "disk": "no space left on device, the disk is full",
            "dns": "temporary failure in name resolution",
            "misc": "vpn setup notes",
        },
        "kb",
    )


def test_token_counts_use_the_minilm_tokenizer():
    from tokenizers import Tokenizer

    from rowvoi.index.embed import locate_minilm

    tok = Tokenizer.from_file(str(locate_minilm()[1]))
    tok.no_padding()
    tok.no_truncation()
    texts = ["Supersonic flow over a wedge.", "x509: certificate has expired", "a"]
    expected = [len(tok.encode(t, add_special_tokens=False).ids) for t in texts]
    assert count_tokens(texts) == expected == count_tokens(texts, tokens="minilm")
    assert count_tokens([""]) == [1]
    assert count_tokens(["two words."], tokens="words") == [3]
    with pytest.raises(ValueError, match="tokens must be"):
        count_tokens(["x"], tokens="bpe")
    with pytest.raises(TypeError, match="not a str"):
        count_tokens([3])


def test_token_count_fallback_is_documented_and_warned(monkeypatch):
    import rowvoi.rag.corpus as bridge
    from rowvoi.index.embed import ModelNotFoundError

    def missing(path):
        raise ModelNotFoundError("the MiniLM tokenizer is not installed")

    monkeypatch.setattr(bridge, "minilm_tokenizer", missing)
    monkeypatch.setattr(bridge, "_fallback_warned", False)
    with pytest.warns(RuntimeWarning, match="fall back to words"):
        assert count_tokens(["The shock attaches."]) == [4]
    with pytest.raises(ModelNotFoundError):
        count_tokens(["x"], tokens="minilm")


def test_hits_to_chunks_and_select_context(kb):
    hits = search(kb, "certificate expired disk full", mode="lexical", k=5)
    chunks = hits_to_chunks(hits)
    assert [c.id for c in chunks] == [f"kb/{h.artifact_id}" for h in hits]
    assert [c.text for c in chunks] == [h.text for h in hits]
    assert [c.tokens for c in chunks] == count_tokens([h.text for h in hits])
    support = {"expiry": {"kb/cert"}, "space": {"kb/disk"}}
    sel = select_context(chunks, ["expiry", "space"], support)
    assert sorted(sel.chunks) == ["kb/cert", "kb/disk"]
    assert sel.total_cost == sum(c.tokens for c in chunks if c.id in sel.chunks)
    custom = hits_to_chunks(hits, tokens=len, id_of=lambda h: h.artifact_id)
    assert [(c.id, c.tokens) for c in custom] == [(h.artifact_id, len(h.text)) for h in hits]
    with pytest.raises(ValueError, match="integer >= 1"):
        hits_to_chunks(hits, tokens=lambda t: 0)
    with pytest.raises(TypeError, match="SearchHit"):
        hits_to_chunks(["x"])


def test_chunk_ids_are_unique_and_readable():
    hits = [
        SearchHit("a", "chunk", 1.0, "", surface_index=0),
        SearchHit("a", "chunk", 0.9, "", surface_index=3),
        SearchHit("a", "chunk", 0.8, "", source="other", surface_index=0),
        SearchHit("b", "doc", 0.5, ""),
    ]
    assert chunk_ids(hits) == ["a#0", "a#3", "other/a", "b"]
    with pytest.raises(ValueError, match="chunk id"):
        chunk_ids([SearchHit("a", "d", 1.0, ""), SearchHit("a", "d", 0.5, "")])


def test_prior_from_hits():
    hits = [
        SearchHit("a", "d", 3.0, ""),
        SearchHit("b", "d", 1.0, ""),
        SearchHit("c", "d", -2.0, ""),
    ]
    assert prior_from_hits(hits).tolist() == [0.75, 0.25, 0.0]
    assert prior_from_hits([SearchHit("a", "d", -1.0, "")] * 2).tolist() == [0.5, 0.5]
    with pytest.raises(ValueError, match="at least one"):
        prior_from_hits([])
    with pytest.raises(ValueError, match="finite"):
        prior_from_hits([SearchHit("a", "d", float("nan"), "")])


def test_probe_outcomes_are_real_searches(kb):
    cands = ["cert", "pool", "disk", "dns"]
    probes = [
        "certificate expired",
        "too many connections",
        SearchProbe("disk full"),
        "name resolution",
        "vpn",
    ]
    frame = probe_outcomes(kb, cands, probes)
    assert frame.attrs["candidates"] == cands
    assert list(frame.columns) == probes
    for p in probes:
        q = p.query if isinstance(p, SearchProbe) else p
        found = {h.artifact_id for h in search(kb, q, mode="lexical", k=100)}
        assert frame[p].tolist() == [HIT if c in found else MISS for c in cands]
    assert frame["certificate expired"].tolist() == [HIT, MISS, MISS, MISS]
    assert frame["vpn"].tolist() == [MISS] * 4
    # a floor on the probe's own scale turns weak matches into misses
    strict = probe_outcomes(kb, cands, ["the disk"], min_score=1e9)
    assert strict["the disk"].tolist() == [MISS] * 4
    # hits are accepted as candidates; a probe's mode and filter are used
    hits = search(kb, "disk", mode="lexical")
    f = probe_outcomes(kb, hits, [SearchProbe("disk", mode="lexical")])
    assert f.attrs["candidates"] == [h.artifact_id for h in hits]
    with pytest.raises(ValueError, match="unique"):
        probe_outcomes(kb, ["cert", "cert"], ["x"])
    with pytest.raises(ValueError, match="unique"):
        probe_outcomes(kb, ["cert"], ["x", "x"])
    with pytest.raises(ValueError, match="at least one candidate"):
        probe_outcomes(kb, [], ["x"])
    with pytest.raises(TypeError, match="query string or a SearchProbe"):
        probe_outcomes(kb, ["cert"], [3])


def test_search_probe_is_hashable_and_validated():
    a = SearchProbe("disk", "lexical", {"kind": "runbook"})
    b = SearchProbe("disk", "lexical", {"kind": "runbook"})
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert str(a) == 'disk [lexical, {"kind": "runbook"}]'
    with pytest.raises(ValueError, match="non-empty query"):
        SearchProbe("  ")
    with pytest.raises(TypeError, match="mapping"):
        SearchProbe("x", filter=[1])


def test_runner_searches_the_evidence(kb):
    logs = mem({"l1": "x509: certificate has expired", "l2": "GET /health 200"}, "logs")
    runner = SearchProbeRunner(logs)
    assert isinstance(runner, ProbeRunner)
    assert runner.run("certificate expired") == HIT
    assert runner.run("no space left on device") == MISS
    assert [p for p, _ in runner.log] == ["certificate expired", "no space left on device"]
    assert [h.artifact_id for h in runner.log[0][1]] == ["l1"]
    assert SearchProbeRunner(logs, min_score=1e9).run("certificate expired") == MISS
    # shared between threads: every run is logged
    shared = SearchProbeRunner(logs)
    threads = [
        threading.Thread(target=lambda: [shared.run("health") for _ in range(20)])
        for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(shared.log) == 80 and all(hits for _, hits in shared.log)


def test_retrieval_session_and_next_question_on_searches(kb):
    logs = mem({"l1": "disk usage alert: no space left on device"}, "logs2")
    hits = search(kb, "service is failing", mode="hybrid", k=5)
    cands = ["cert", "pool", "disk", "dns"]
    probes = ["certificate expired", "too many connections", "no space left", "name resolution"]
    outcomes = probe_outcomes(kb, cands, probes)
    suggestion = next_question(outcomes)
    assert suggestion.col in probes and suggestion.expected_voi == pytest.approx(
        -(0.25 * np.log2(0.25) + 0.75 * np.log2(0.75))
    )
    session = RetrievalSession(outcomes, runner=SearchProbeRunner(logs), noise=0.0)
    session.run(StopRules(epsilon_posterior=0.01))
    assert cands[session.best_candidate] == "disk"
    assert session.state.max_posterior == pytest.approx(1.0)
    assert all(isinstance(step.outcome, str) for step in session.history)
    # a prior from the search's scores is a valid prior
    chosen = [h for h in hits if h.artifact_id in cands]
    if chosen:
        RetrievalSession(probe_outcomes(kb, chosen, probes), prior=prior_from_hits(chosen))


def test_example_runs(capsys):
    ns = runpy.run_path(str(ROOT / "examples" / "corpus_to_decisions.py"), run_name="example")
    assert ns["main"]() == "tls-expiry"
    out = capsys.readouterr().out
    assert "covers 5 of 5 causes" in out
    assert "probe 'certificate expired': hit" in out
    assert "runbook: tls-expiry" in out
