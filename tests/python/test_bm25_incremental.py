"""BM25 as the corpus uses it: caller ids, incremental changes equal to a
fresh build (bit for bit), filters equal to brute force, and the format
change (a version-1 file asks to be rebuilt)."""

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from rowvoi.errors import IndexFormatError
from rowvoi.index.idset import IdSet
from rowvoi.index.lexical import BM25Index
from rowvoi.index.text import Analyzer

WORDS = ["apple", "banana", "cherry", "delta", "echo", "foxtrot", "golf", "hotel", "india"]
PLAIN = Analyzer(stem=False, stopwords=False)
DATA = Path(__file__).resolve().parents[1] / "data"

texts = st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join)
queries = st.lists(st.sampled_from(WORDS + ["unknown"]), min_size=1, max_size=5).map(" ".join)


def same_results(a: BM25Index, b: BM25Index, qs, k=10, flt=None):
    for q in qs:
        for exhaustive in (False, True):
            ra = a.search(q, k, filter=flt, exhaustive=exhaustive)
            rb = b.search(q, k, filter=flt, exhaustive=exhaustive)
            assert ra.ids.tolist() == rb.ids.tolist(), q
            assert ra.scores.tolist() == rb.scores.tolist(), q  # bit for bit


ops = st.lists(
    st.tuples(
        st.sampled_from(["add", "add1", "delete", "replace", "compact", "reload"]),
        st.lists(st.tuples(st.integers(0, 60), texts), min_size=1, max_size=6),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ops,
    st.lists(queries, min_size=1, max_size=4),
    st.sampled_from(["lucene", "robertson", "atire", "bm25l", "bm25+"]),
)
def test_incremental_changes_equal_a_fresh_build(ops, qs, variant):
    """Any sequence of adds (batched and one by one), deletes, replacements
    (delete + re-add under the same id), compactions and save/load rounds
    ranks exactly as an index built at once from the live documents."""
    ix = BM25Index(PLAIN, variant=variant)
    live: dict[int, str] = {}
    for op, items in ops:
        items = list(dict(items).items())  # one text per id
        if op in ("add", "add1"):
            new = [(i, t) for i, t in items if i not in live]
            if op == "add" and new:
                ix.add([t for _, t in new], ids=[i for i, _ in new])
            for i, t in new if op == "add1" else []:
                ix.add([t], ids=[i])
            live.update(new)
        elif op == "delete":
            gone = [i for i, _ in items if i in live]
            assert ix.delete(gone) == len(gone)
            for i in gone:
                del live[i]
        elif op == "replace":
            hit = [(i, t) for i, t in items if i in live]
            if hit:
                ix.delete([i for i, _ in hit])
                ix.add([t for _, t in hit], ids=[i for i, _ in hit])
                live.update(hit)
        elif op == "compact":
            ix.compact()
        else:
            ix = BM25Index.from_bytes(ix.to_bytes())
    fresh = BM25Index(PLAIN, variant=variant)
    order = sorted(live, reverse=True)  # a different slot order on purpose
    fresh.add([live[i] for i in order], ids=order)
    assert sorted(ix.ids().tolist()) == sorted(live)
    assert ix.stats()["total_len"] == fresh.stats()["total_len"]
    same_results(ix, fresh, qs, k=len(live) + 1)
    for i in list(live)[:3]:
        for q in qs:
            assert ix.explain(q, i).score == fresh.explain(q, i).score


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(texts, min_size=1, max_size=80),
    st.lists(queries, min_size=1, max_size=4),
    st.sets(st.integers(0, 100)),
    st.integers(1, 15),
    st.integers(1, 3),
)
def test_filtered_search_equals_brute_force(docs, qs, allowed, k, batches):
    """The filtered top-k is the unfiltered ranking restricted to the
    filter, cut at k -- never a truncated list filtered afterwards."""
    ix = BM25Index(PLAIN)
    step = max(1, len(docs) // batches)
    for a in range(0, len(docs), step):
        ix.add(docs[a : a + step], ids=[3 * i for i in range(a, min(a + step, len(docs)))])
    if len(docs) > 2:
        ix.delete([3])
    flt = IdSet(allowed)
    for q in qs:
        full = ix.search(q, len(docs), exhaustive=True)
        want = [(i, s) for i, s in full if i in allowed][:k]
        for exhaustive in (False, True):
            got = ix.search(q, k, filter=flt, exhaustive=exhaustive)
            assert list(got) == want
        plain = ix.search(q, k, filter=sorted(allowed))  # any iterable works
        assert list(plain) == want
    batch = ix.search_batch(qs, k, filter=flt, n_threads=2)
    for j, q in enumerate(qs):
        assert list(batch[j]) == list(ix.search(q, k, filter=flt))


def test_filter_paths_direct_and_pruned():
    rng = np.random.default_rng(4)
    vocab = [f"w{i}" for i in range(400)]
    docs = [" ".join(vocab[min(int(x), 399)] for x in rng.pareto(0.7, 20)) for _ in range(5000)]
    ix = BM25Index(PLAIN)
    ix.add(docs, ids=np.arange(10, 5010))
    small = IdSet(rng.choice(np.arange(10, 5010), 20, replace=False))
    large = IdSet(np.arange(10, 5010, 2))
    for q in ["w0 w1", "w3 w17 w120", "w2"]:
        r = ix.search(q, 10, filter=small)
        assert r.stats["filter_direct"] and r.stats["filter_docs"] == 20
        assert set(r.ids.tolist()) <= set(small)
        r = ix.search(q, 10, filter=large)
        assert not r.stats["filter_direct"] and r.stats["filter_docs"] == 2500
        assert all(i % 2 == 0 for i in r.ids.tolist())
    assert len(ix.search("w0", 10, filter=[])) == 0
    assert len(ix.search("w0", 10, filter=[1, 2, 3])) == 0  # ids not in the index


def test_caller_ids_api():
    ix = BM25Index(PLAIN)
    assert ix.add(["apple pie", "apple tart"], ids=[900, 12]).tolist() == [900, 12]
    assert ix.add(["cherry"]).tolist() == [901]
    assert ix.search("apple").ids.tolist() == [12, 900]  # equal scores: lower id first
    assert ix.explain("apple", 900).terms[0].tf == 1
    assert ix.doc(12) == (2, "live") and 12 in ix and 13 not in ix
    assert ix.ids().tolist() == [900, 12, 901]
    with pytest.raises(ValueError, match="already in the index"):
        ix.add(["x"], ids=[12])
    with pytest.raises(ValueError, match="more than once"):
        ix.add(["x", "y"], ids=[5, 5])
    with pytest.raises(ValueError, match=r"ids contains -1"):
        ix.add(["x"], ids=[-1])
    with pytest.raises(ValueError, match="1 entries for 2 documents"):
        ix.add(["x", "y"], ids=[5])
    with pytest.raises(TypeError):
        ix.add(["x"], ids=["a"])
    with pytest.raises(ValueError, match="not in the index"):
        ix.explain("apple", 13)
    with pytest.raises(ValueError, match="not in the index"):
        ix.doc(-5)
    assert len(ix) == 3 and ix.stats()["next_id"] == 902


def test_format_1_files_ask_for_a_rebuild(tmp_path):
    old = DATA / "bm25_format1.rvx"  # saved by the version before caller ids
    assert old.read_bytes()[8] == 1
    with pytest.raises(IndexFormatError, match="rebuild the index") as info:
        BM25Index.load(old)
    assert info.value.status_name == "RV_E_VERSION"
    with pytest.raises(IndexFormatError, match="version 1"):
        BM25Index.from_bytes(old.read_bytes())
    ix = BM25Index()
    ix.add(["The quick brown fox", "Foxes are quick"], ids=[0, 2])
    path = tmp_path / "lexical.rvx"
    ix.save(path)
    data = path.read_bytes()
    assert data[8] == 2
    assert BM25Index.load(path).search("quick fox").ids.tolist() == [2, 0]


def test_changes_cost_the_change_not_the_index():
    """Work of an add or delete does not grow with the index: compared by
    the postings touched, not by time (timing belongs to
    bench/suites/bm25_incremental.py)."""
    rng = np.random.default_rng(8)
    vocab = [f"w{i}" for i in range(3000)]
    docs = [" ".join(vocab[min(int(x), 2999)] for x in rng.pareto(0.8, 30)) for _ in range(20000)]
    ix = BM25Index(PLAIN)
    ix.add(docs)
    before = ix.stats()
    ix.delete([5, 6, 7])
    ix.add(["w1 w2 w3", "w4", "w5 w5"], ids=[5, 6, 7])
    after = ix.stats()
    # the new documents went into a small segment of their own: the big one
    # was neither rewritten nor merged
    assert after["n_segments"] == before["n_segments"] + 1
    assert after["n_postings"] == before["n_postings"] + 5  # w1 w2 w3, w4, w5 (tf 2)
    assert after["n_tombstoned"] == 3
