"""The dense search's fast path (no surface weights, record table in
memory) gives exactly what the general path gives: same hits, order,
scores and ``explain`` -- also with exact ties, several surfaces per
artifact, ``per_artifact=False``, an explicit ``fetch_k`` and deleted
records; and the loaded flat index is frozen."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from rowvoi.corpus import CorpusStore, Fields, WholeText, build, from_mapping, search
from rowvoi.dense import FlatIndex


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
WORDS = ["lift", "drag", "wing", "flow", "shock", "heat"]


def _docs(rng, n, fields):
    docs = {}
    for i in range(n):
        words = lambda: " ".join(rng.choice(WORDS, size=rng.integers(1, 4)))  # noqa: E731
        docs[f"d{rng.integers(0, 10 * n):04d}-{i}"] = (
            {"title": words(), "body": words()} if fields else words()
        )
    return docs


def _hits(hits):
    return [
        (h.artifact_id, h.surface_kind, h.surface_index, h.record_id, h.score, h.text, h.explain)
        for h in hits
    ]


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
    index = corpus._loaded.dense
    assert isinstance(index, FlatIndex)
    with pytest.raises(RuntimeError, match="read-only"):
        index.add(np.ones((1, 8), dtype=np.float32), ids=[99])
