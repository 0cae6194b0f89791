"""A search asked for ``k`` artifacts returns ``k`` whenever the corpus (or
the filter) holds them, whatever the mode, fusion and index: the
per-artifact collapse of a chunked corpus is never starved by the
candidate fetch (issue 28, item 9).

Before the fix, three long documents whose chunks all match the query
filled the default fetch of 50 candidates, and the collapse kept 3 of
``k = 10`` artifacts (HNSW and exact alike)."""

import hashlib

import numpy as np
import pytest

from rowvoi.corpus import Chunked, CorpusStore, build, from_mapping, search
from rowvoi.corpus.retrieval import rank as retrieve

N_BIG, N_SMALL, BIG_CHUNKS = 3, 15, 120
QUERY = "wing lift flutter"


def _docs():
    docs = {}
    for i in range(N_BIG):
        text = " ".join(f"Wing lift flutter at speed {i}{j}." for j in range(BIG_CHUNKS))
        docs[f"big{i}"] = {"text": text, "group": "a"}
    for i in range(N_SMALL):
        text = f"Wing heat of pipe number {i}. Boundary layer {i}."
        docs[f"small{i:02d}"] = {"text": text, "group": "a" if i < 8 else "b"}
    return docs


@pytest.fixture(scope="module")
def corpora():
    out = {}
    for hnsw in (False, True):
        src = from_mapping(
            _docs(),
            strategy=Chunked(chunk_size=40, overlap=0, text_key="text"),
            embedder="hashing:512",
            metadata_of=lambda aid, raw: {"group": raw["group"]},
            filter_types={"group": "categorical"},
        )
        out[hnsw] = build(src, store=CorpusStore.memory(), hnsw=hnsw)
    info = out[False].info()
    # the premise: many surfaces per long document, one per short one
    assert info["n_artifacts"] == N_BIG + N_SMALL
    assert info["n_records"] >= N_BIG * 100 + N_SMALL
    return out


CONFIGS = [
    dict(mode="lexical"),
    dict(mode="dense", index="flat"),
    dict(mode="dense", index="hnsw"),
    dict(mode="dense", index="auto"),
    dict(mode="hybrid", fusion="rrf", index="flat"),
    dict(mode="hybrid", fusion="rrf", index="hnsw"),
    dict(mode="hybrid", fusion="blend", index="flat"),
    dict(mode="hybrid", fusion="blend", index="hnsw"),
]
RESTRICTIONS = [
    ({}, N_BIG + N_SMALL),
    ({"filter": {"group": "a"}}, N_BIG + 8),
    ({"filter": {"group": "b"}}, N_SMALL - 8),
    ({"surfaces": "chunk"}, N_BIG + N_SMALL),
    ({"filter": {"group": "a"}, "surfaces": ["chunk"]}, N_BIG + 8),
]


def _ids(hits):
    return [h.artifact_id for h in hits]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(c.values()))
@pytest.mark.parametrize("restriction,available", RESTRICTIONS)
@pytest.mark.parametrize("k", [10, 40])
def test_k_artifacts_whenever_the_corpus_holds_them(corpora, config, restriction, available, k):
    corpus = corpora[config.get("index", "flat") != "flat"]
    hits = search(corpus, QUERY, k=k, **config, **restriction)
    ids = _ids(hits)
    assert len(ids) == len(set(ids))  # one hit per artifact
    assert len(ids) == min(k, available)
    if k >= available:  # every artifact the restriction allows
        want = {
            a
            for a, raw in _docs().items()
            if "filter" not in restriction or raw["group"] == restriction["filter"]["group"]
        }
        assert set(ids) == want
    if config["mode"] == "dense" or config["mode"] == "lexical":
        scores = [h.score for h in hits]
        assert scores == sorted(scores, reverse=True)


def _exact(corpus, k, **kw):
    """The best k artifacts from every record ranked (no fetch cut), the
    first record of each artifact in result order."""
    n = corpus.info()["n_records"]
    every = search(corpus, QUERY, k=n, fetch_k=n, per_artifact=False, **kw)
    seen, out = set(), []
    for h in every:
        if h.artifact_id not in seen:
            seen.add(h.artifact_id)
            out.append((h.artifact_id, h.record_id, h.score))
    return out[:k]


@pytest.mark.parametrize("mode", ["lexical", "dense"])
@pytest.mark.parametrize("restriction", [{}, {"filter": {"group": "a"}}, {"surfaces": "chunk"}])
def test_exact_modes_give_the_exact_top_artifacts(corpora, mode, restriction):
    """Exact search (BM25, flat dense) after the fetch grew: the k best
    artifacts by their best surface, the same as collapsing a ranking of
    every record."""
    corpus = corpora[False]
    kw = dict(mode=mode, **restriction)
    hits = search(corpus, QUERY, k=10, **kw)
    assert [(h.artifact_id, h.record_id, h.score) for h in hits] == _exact(corpus, 10, **kw)


def test_the_first_fetch_was_short(corpora):
    """The premise of the tests above: the first fetch (max(5 k, 50)
    surfaces) holds the chunks of the three long documents only."""
    corpus = corpora[False]
    first = search(corpus, QUERY, k=50, fetch_k=50, per_artifact=False, mode="dense")
    assert {h.artifact_id for h in first} == {f"big{i}" for i in range(N_BIG)}


def _noisy(texts):
    """A deterministic embedder without exact ties: a chunk of a long
    document lies near the query's direction, a short document further
    off, each with noise seeded by its text."""
    out = np.zeros((len(texts), 16), dtype=np.float32)
    for i, t in enumerate(texts):
        rng = np.random.default_rng(list(hashlib.sha256(t.encode()).digest()))
        out[i] = rng.normal(scale=0.1, size=16)
        out[i, 0] += 1.0 if "lift" in t else 0.3
    return out


def test_compiled_dense_search_fetches_more(monkeypatch):
    """The compiled dense call (a query vector on a flat index) grows its
    fetch as the general path does, and both give the same hits."""
    src = from_mapping(
        _docs(),
        strategy=Chunked(chunk_size=40, overlap=0, text_key="text"),
        embedder=(_noisy, "test-noisy-v1"),
    )
    corpus = build(src, store=CorpusStore.memory())
    n = corpus.info()["n_records"]
    calls = []
    real = retrieve._dense_search_c

    def spy(*args):
        out = real(*args)
        calls.append((args[4], None if out is None else len(out)))
        return out

    monkeypatch.setattr(retrieve, "_dense_search_c", spy)
    qv = np.zeros(16, dtype=np.float32)
    qv[0] = 1.0
    search(corpus, QUERY, k=1, query_vector=qv)  # loads the generation
    del calls[:]
    hits = search(corpus, QUERY, k=10, query_vector=qv)
    assert len({h.artifact_id for h in hits}) == len(hits) == 10
    # the first call (fetch 50) collapsed to the 3 long documents; the
    # fetch grew by FETCH_GROWTH until 10 artifacts were found, every
    # call answered by the compiled code
    assert calls[0] == (50, N_BIG)
    grown = [min(50 * retrieve.FETCH_GROWTH**i, n) for i in range(len(calls))]
    assert [f for f, _ in calls] == grown and len(calls) > 1
    assert calls[-1][1] == 10 and all(got is not None for _, got in calls)
    slow = search(corpus, QUERY, k=10, query_vector=qv, surface_weights={"chunk": 1.0})
    key = [(h.artifact_id, h.record_id, h.score, h.explain) for h in hits]
    assert key == [(h.artifact_id, h.record_id, h.score, h.explain) for h in slow]


def test_an_explicit_fetch_k_is_the_first_fetch(corpora):
    corpus = corpora[False]
    for fetch_k in (10, 11, 400):
        hits = search(corpus, QUERY, k=10, fetch_k=fetch_k, mode="dense")
        assert len({h.artifact_id for h in hits}) == 10
    # without the collapse nothing grows: the k best surfaces
    hits = search(corpus, QUERY, k=10, per_artifact=False, mode="dense")
    assert len(hits) == 10 and {h.artifact_id for h in hits} <= {"big0", "big1", "big2"}


def test_a_zero_query_vector_still_finds_nothing(corpora):
    corpus = corpora[False]
    assert search(corpus, "", k=10, query_vector=np.zeros(512)) == []


def test_cli_search_on_a_chunked_hnsw_corpus_returns_k(tmp_path, monkeypatch, capsys):
    """The report's case: ``rowvoi search --k 10`` on a corpus built with
    ``--hnsw`` in chunks, dense (HNSW and exact) and every other mode."""
    import json

    from rowvoi.cli.main import main

    monkeypatch.setenv("ROWVOI_HOME", str(tmp_path / "home"))
    recs = tmp_path / "docs.jsonl"
    recs.write_text("\n".join(json.dumps({"id": a, **raw}) for a, raw in _docs().items()))
    argv = ["build", "long", "--records", str(recs), "--embedder", "hashing", "--hnsw"]
    assert main([*argv, "--strategy", "chunked", "--chunk-size", "40", "--overlap", "1"]) == 0
    capsys.readouterr()
    for extra in (
        ["--mode", "dense"],
        ["--mode", "dense", "--index", "flat"],
        ["--mode", "lexical"],
        ["--mode", "hybrid"],
        ["--mode", "hybrid", "--fusion", "blend"],
    ):
        assert main(["search", "long", QUERY, "--k", "10", "--json", *extra]) == 0
        hits = json.loads(capsys.readouterr().out)["hits"]
        assert len({h["artifact_id"] for h in hits}) == len(hits) == 10, extra
