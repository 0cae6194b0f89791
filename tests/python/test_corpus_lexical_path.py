"""The lexical search's fast path (no surface weights, no ``explain`` terms,
record table in memory: hits from the compiled builder, and only ``k + 1``
candidates when no collapse can drop one) gives exactly what the general
path gives: same hits, order, scores and ``explain`` -- also with exact
ties (many documents of the same words), several surfaces per artifact,
``per_artifact=False``, an explicit ``fetch_k`` and deleted records."""

import itertools

import numpy as np
from conftest import hit_rows as _hits, tie_docs as _docs
from hypothesis import given, settings, strategies as st

from rowvoi.corpus import CorpusStore, Fields, WholeText, build, from_mapping, search


@settings(max_examples=30, deadline=None)
@given(
    st.integers(1, 80),
    st.booleans(),
    st.integers(1, 15),
    st.booleans(),
    st.sampled_from([None, 1, 3, 40]),
    st.integers(0, 2**32 - 1),
)
def test_fast_path_equals_general_path(n, fields, k, per_artifact, fetch_extra, seed):
    """Surface weights of 1.0 send a search down the general path (fusion
    code, rank dictionaries, all fetch_k candidates, per-hit Python)
    without changing a score, so both paths must agree hit for hit."""
    rng = np.random.default_rng(seed)
    strategy = Fields(("title", "body")) if fields else WholeText()
    docs = _docs(rng, n, fields)
    corpus = build(
        from_mapping(docs, strategy=strategy, embedder="hashing:8"), store=CorpusStore.memory()
    )
    if n > 3:  # an incremental build that deletes two artifacts
        keep = dict(list(docs.items())[2:])
        corpus = build(
            from_mapping(keep, strategy=strategy, embedder="hashing:8"), store=corpus.store
        )
    kinds = ["title", "body"] if fields else ["document"]
    ones = {kind: 1.0 for kind in kinds}
    # (weights change fetch_k's default, so both searches name it)
    default = max(5 * k, 50) if per_artifact else k
    fetch_k = default if fetch_extra is None else k + fetch_extra
    # (a surface kind restricts the search to a set of records: the
    # filtered search of the same compiled call)
    for q, surfaces in itertools.product(
        ("lift", "wing drag", "heat heat flow", "nothing here"),
        (None, "body") if fields else (None,),
    ):
        kw = dict(
            k=k, mode="lexical", per_artifact=per_artifact, fetch_k=fetch_k, surfaces=surfaces
        )
        fast = search(corpus, q, **kw)
        slow = search(corpus, q, surface_weights=ones, **kw)
        assert _hits(fast) == _hits(slow)
        assert fast.reason == slow.reason


def test_fast_path_asks_for_k_plus_one_and_again_on_a_tie(monkeypatch):
    """Without a collapse, the lexical index is asked for k + 1 records;
    when the k-th and (k + 1)-th tie, once more for fetch_k -- and the hits
    are those of the general path either way.  That is one compiled call
    (``_hot.lexical_search``, filtered or not: it reports how many
    candidates it found, orders tied ones as the general path does, and
    hands them back only for an id the record table lacks);
    ``BM25Index.search`` is not asked."""
    from rowvoi.index._hot import lexical_search
    from rowvoi.index.idset import IdSet
    from rowvoi.index.lexical import BM25Index

    asked = []
    real = BM25Index.search

    def spy(self, query, k=10, **kw):
        asked.append(k)
        return real(self, query, k, **kw)

    monkeypatch.setattr(BM25Index, "search", spy)
    ones = {"document": 1.0}
    args = (True, False, None, "bm25", "lexical")
    # distinct documents: no two score the same for "wing"
    docs = {f"d{i:02d}": "wing " + " ".join(["lift"] * i) for i in range(30)}
    corpus = build(from_mapping(docs, embedder="hashing:8"), store=CorpusStore.memory())
    search(corpus, "wing", mode="lexical")  # loads the generation
    gen = corpus._generations.loaded
    ht, cap = gen.records._hit_table(), gen.lexical_capsule
    hits, n, none = lexical_search(ht, cap, "wing", 5, 50, *args)
    assert (len(hits), n, none) == (5, 6, None)
    # filtered: the odd records only, asked for k + 1 of them
    odd = IdSet(gen.records.ids[1::2])
    hits, n, none = lexical_search(ht, cap, "wing", 5, 50, *args, odd._capsule())
    assert (len(hits), n, none) == (5, 6, None)
    assert {h.record_id for h in hits} <= set(gen.records.ids[1::2].tolist())
    del asked[:]
    got = search(corpus, "wing", mode="lexical", k=5)
    assert asked == []  # (the compiled call)
    assert _hits(got) == _hits(
        search(corpus, "wing", mode="lexical", k=5, fetch_k=50, surface_weights=ones)
    )
    # twenty identical documents: the 5th and 6th tie
    tied = build(
        from_mapping({f"t{i:02d}": "wing lift" for i in range(20)}, embedder="hashing:8"),
        store=CorpusStore.memory(),
    )
    search(tied, "wing", mode="lexical")
    gen = tied._generations.loaded
    ht, cap = gen.records._hit_table(), gen.lexical_capsule
    hits, n, none = lexical_search(ht, cap, "wing", 5, 50, *args)
    # asked again: all 20 match, and the hits are put in result order here
    assert (len(hits), n, none) == (5, 20, None)
    assert [h.artifact_id for h in hits] == [f"t{i:02d}" for i in range(5)]
    odd = IdSet(gen.records.ids[1::2])
    hits, n, none = lexical_search(ht, cap, "wing", 5, 50, *args, odd._capsule())
    assert (len(hits), n, none) == (5, 10, None)
    assert [h.artifact_id for h in hits] == [f"t{i:02d}" for i in range(1, 10, 2)]
    # the candidates come back, nothing built, only for an id the table
    # lacks (a table of 8 of the 20 records): with ties and without
    few = build(
        from_mapping({f"t{i:02d}": "wing lift" for i in range(8)}, embedder="hashing:8"),
        store=CorpusStore.memory(),
    )
    search(few, "wing", mode="lexical")
    few_ht = few._generations.loaded.records._hit_table()
    none, ids, scores = lexical_search(few_ht, cap, "wing", 5, 50, *args)
    assert none is None and len(ids) == len(scores) == 20
    assert ids.dtype == np.int64 and scores.dtype == np.float32
    none, ids, _ = lexical_search(
        few_ht, corpus._generations.loaded.lexical_capsule, "wing", 25, 50, *args
    )
    assert none is None and len(ids) == 26  # (distinct scores: k + 1 asked)
    del asked[:]
    got = search(tied, "wing", mode="lexical", k=5)
    assert asked == []
    assert [h.artifact_id for h in got] == [f"t{i:02d}" for i in range(5)]
    assert _hits(got) == _hits(
        search(tied, "wing", mode="lexical", k=5, fetch_k=50, surface_weights=ones)
    )


def test_compiled_lexical_search_checks_its_arguments():
    """``_hot.lexical_search`` refuses what its caller must never pass: a
    capsule of another kind, k outside 1 .. fetch_k, a query that is not
    text -- and finds nothing for a query without known terms."""
    import pytest

    from rowvoi.index._hot import lexical_search

    corpus = build(
        from_mapping({"a": "wing lift", "b": "drag"}, embedder="hashing:8"),
        store=CorpusStore.memory(),
    )
    search(corpus, "wing", mode="lexical")
    gen = corpus._generations.loaded
    ht, cap = gen.records._hit_table(), gen.lexical_capsule
    args = (True, False, None, "bm25", "lexical")
    assert lexical_search(ht, cap, "nothing known", 2, 10, *args) == ([], 0, None)
    assert lexical_search(ht, cap, b"wing", 1, 10, *args)[0][0].artifact_id == "a"
    with pytest.raises(ValueError, match=r"(?i)capsule"):
        lexical_search(ht, gen.records, "wing", 2, 10, *args)
    with pytest.raises(ValueError, match="need 1 <= k <= fetch_k"):
        lexical_search(ht, cap, "wing", 0, 10, *args)
    with pytest.raises(ValueError, match="need 1 <= k <= fetch_k"):
        lexical_search(ht, cap, "wing", 11, 10, *args)
    with pytest.raises(TypeError, match="query must be str or bytes"):
        lexical_search(ht, cap, 42, 2, 10, *args)
    with pytest.raises(ValueError, match="UTF-8"):
        lexical_search(ht, cap, "\ud800", 2, 10, *args)


def test_explain_terms_take_the_general_path():
    """``explain=True`` adds each hit's matched terms (general path); the
    rest of the explanation is the fast path's."""
    docs = {"a": "wing lift", "b": "wing drag drag", "c": "heat"}
    corpus = build(from_mapping(docs, embedder="hashing:8"), store=CorpusStore.memory())
    plain = search(corpus, "wing drag", mode="lexical", k=2)
    full = search(corpus, "wing drag", mode="lexical", k=2, explain=True)
    assert [h.artifact_id for h in plain] == [h.artifact_id for h in full] == ["b", "a"]
    for p, f in zip(plain, full):
        assert p.explain["lexical"]["rank"] == f.explain["lexical"]["rank"]
        assert p.explain["lexical"]["bm25"] == f.explain["lexical"]["bm25"] == p.score
        assert p.explain["dense"] is None and p.explain["answered_by"] == ["bm25"]
        assert "terms" in f.explain["lexical"] and "terms" not in p.explain["lexical"]
