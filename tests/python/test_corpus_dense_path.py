"""The dense search's fast path (no surface weights, record table in
memory) gives exactly what the general path gives: same hits, order,
scores and ``explain`` -- also with exact ties, several surfaces per
artifact, ``per_artifact=False``, an explicit ``fetch_k`` and deleted
records; and the loaded flat index is frozen."""

import numpy as np
import pytest
from conftest import hit_rows as _hits, tie_docs as _docs
from hypothesis import given, settings, strategies as st

from rowvoi.corpus import CorpusStore, Fields, WholeText, build, from_mapping, search
from rowvoi.index.flat import FlatIndex


def _vectors(texts):
    """A deterministic embedder with many exact ties: each text's vector is
    made of small integers taken from its words (equal word multisets ->
    equal vectors)."""
    out = np.zeros((len(texts), 8), dtype=np.float32)
    for i, t in enumerate(texts):
        for w in t.split():
            out[i, sum(map(ord, w)) % 8] += 1.0
        out[i, 7] += 0.5  # never a zero vector
    return out


EMB = (_vectors, "test-ties-v1")


@settings(max_examples=25, deadline=None)
@given(
    st.integers(1, 60),
    st.booleans(),
    st.integers(1, 15),
    st.booleans(),
    st.sampled_from([None, 1, 3, 40]),
    st.integers(0, 2**32 - 1),
)
def test_fast_path_equals_general_path(n, fields, k, per_artifact, fetch_extra, seed):
    """Surface weights of 1.0 send a search down the general path (fusion
    code, rank dictionaries, all fetch_k candidates) without changing a
    score, so both paths must agree hit for hit."""
    rng = np.random.default_rng(seed)
    strategy = Fields(("title", "body")) if fields else WholeText()
    docs = _docs(rng, n, fields)
    corpus = build(from_mapping(docs, strategy=strategy, embedder=EMB), store=CorpusStore.memory())
    if n > 3:  # an incremental build that deletes two artifacts
        keep = dict(list(docs.items())[2:])
        corpus = build(from_mapping(keep, strategy=strategy, embedder=EMB), store=corpus.store)
    kinds = ["title", "body"] if fields else ["document"]
    ones = {kind: 1.0 for kind in kinds}
    # (weights change fetch_k's default, so both searches name it)
    default = max(5 * k, 50) if per_artifact else k
    fetch_k = default if fetch_extra is None else k + fetch_extra
    for words in (["lift"], ["wing", "drag"], ["heat", "heat", "flow"]):
        q = " ".join(words)
        vec = _vectors([q])[0]
        for qv in (None, vec):
            kw = dict(
                k=k, mode="dense", per_artifact=per_artifact, fetch_k=fetch_k, query_vector=qv
            )
            fast = search(corpus, q, **kw)
            slow = search(corpus, q, surface_weights=ones, **kw)
            assert _hits(fast) == _hits(slow)


def test_loaded_flat_index_is_frozen():
    corpus = build(
        from_mapping({"a": "lift wing", "b": "heat flow"}, embedder=EMB),
        store=CorpusStore.memory(),
    )
    assert search(corpus, "lift", mode="dense", k=1)[0].artifact_id == "a"
    index = corpus._generations.loaded.dense
    assert isinstance(index, FlatIndex)
    with pytest.raises(RuntimeError, match="read-only"):
        index.add(np.ones((1, 8), dtype=np.float32), ids=[99])


def _corpus_of(n, seed):
    rng = np.random.default_rng(seed)
    return build(
        from_mapping(_docs(rng, n, True), strategy=Fields(("title", "body")), embedder=EMB),
        store=CorpusStore.memory(),
    )


def test_compiled_dense_search_is_taken_and_hands_back_ties(monkeypatch):
    """A dense search of a vector answers through rowvoi.index._hot.dense_search
    (one call), except where that call hands back (equal scores near the
    top): then the general path answers, with the same hits as weights of
    1.0 give; float64, strided and float32 vectors alike."""
    from rowvoi.corpus.retrieval import rank as retrieve

    calls = []
    real = retrieve._dense_search_c

    def spy(*args):
        out = real(*args)
        calls.append(out is not None)
        return out

    monkeypatch.setattr(retrieve, "_dense_search_c", spy)
    # (distinct texts and hashing vectors: no exact ties; title and body,
    # so per_artifact collapses)
    docs = {
        f"d{i}": {"title": f"wing {i}", "body": f"lift {i * 7} drag {i % 5}"} for i in range(40)
    }
    corpus = build(
        from_mapping(docs, strategy=Fields(("title", "body")), embedder="hashing:32"),
        store=CorpusStore.memory(),
    )
    ones = {"title": 1.0, "body": 1.0}
    rng = np.random.default_rng(1)
    search(corpus, "q", query_vector=rng.standard_normal(32))  # loads the generation
    decided = 0
    for _trial in range(30):
        base = rng.standard_normal(32)
        for qv in (base.astype(np.float32), base, np.repeat(base, 2)[::2]):
            for per_artifact in (True, False):
                kw = dict(k=int(rng.integers(1, 9)), mode="dense", per_artifact=per_artifact)
                kw["fetch_k"] = max(5 * kw["k"], 50) if per_artifact else kw["k"]
                del calls[:]
                got = search(corpus, "q", query_vector=qv, **kw)
                assert len(calls) == 1  # tried once, whatever it answered
                decided += calls[0]
                want = search(corpus, "q", query_vector=qv, surface_weights=ones, **kw)
                assert _hits(got) == _hits(want)
    assert decided > 100  # most searches are answered by the compiled call
    # ties at the top: equal title vectors -> handed back, same answer
    tied = build(
        from_mapping({"a": "wing lift", "b": "lift wing", "c": "heat"}, embedder=EMB),
        store=CorpusStore.memory(),
    )
    search(tied, "heat", mode="dense")
    del calls[:]
    hits = search(tied, "q", k=1, query_vector=_vectors(["wing lift"])[0])
    assert calls == [False] and [h.artifact_id for h in hits] == ["a"]


def test_compiled_dense_search_keeps_the_errors():
    from rowvoi.corpus import EmbedderMismatch

    corpus = _corpus_of(10, 3)
    for bad in (np.array([np.nan] * 8), np.full(8, np.inf, dtype=np.float32)):
        with pytest.raises(ValueError, match="query_vector must be one finite vector"):
            search(corpus, "q", query_vector=bad)
    with pytest.raises(EmbedderMismatch, match="query_vector has 5 dimensions"):
        search(corpus, "q", query_vector=np.ones(5, dtype=np.float32))
    with pytest.raises(ValueError, match="has no HNSW index"):
        search(corpus, "q", query_vector=np.ones(8, dtype=np.float32), index="hnsw")
    assert search(corpus, "q", query_vector=np.zeros(8)) == []
    # a (1, dim) row and a byte-swapped vector: the general path, same hits
    v = np.arange(8, dtype=np.float32) + 1
    want = _hits(search(corpus, "q", query_vector=v))
    assert _hits(search(corpus, "q", query_vector=v[None, :])) == want
    assert _hits(search(corpus, "q", query_vector=v.astype(v.dtype.newbyteorder()))) == want


@pytest.mark.stress
def test_compiled_dense_search_from_many_threads():
    """Eight threads search one corpus for two seconds through the compiled
    call (the GIL released in the scan): every answer is the one a single
    thread got."""
    import threading
    import time

    corpus = _corpus_of(60, 11)
    rng = np.random.default_rng(5)
    queries = [rng.standard_normal(8).astype(np.float32) for _ in range(16)]
    want = [_hits(search(corpus, "q", k=5, query_vector=q)) for q in queries]
    stop = time.monotonic() + 2.0
    bad, done = [], [0]

    def worker(t):
        i = t
        while time.monotonic() < stop:
            j = i % len(queries)
            if _hits(search(corpus, "q", k=5, query_vector=queries[j])) != want[j]:
                bad.append(j)
            i += 1
        done[0] += i - t

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not bad and done[0] > 1000
