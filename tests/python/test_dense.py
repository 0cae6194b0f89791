"""Vector indexes: exact search against numpy, threads, files, HNSW recall."""

import json
import os

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from rowvoi.errors import IndexFormatError, InvalidArgumentError, RangeError
from rowvoi.index.flat import FlatIndex, recall_at_k
from rowvoi.index.hnsw import HNSWIndex
from rowvoi.index.idset import IdSet


def numpy_knn(data, ids, queries, k, metric):
    """Reference: numpy scores, ranked by (score, lower id) with a stable sort."""
    data = data.astype(np.float64)
    q = queries.astype(np.float64)
    if metric == "cosine":
        data = data / np.linalg.norm(data, axis=1, keepdims=True)
        q = q / np.linalg.norm(q, axis=1, keepdims=True)
    if metric == "l2":
        scores = ((q[:, None, :] - data[None, :, :]) ** 2).sum(-1)
        key = scores
    else:
        scores = q @ data.T
        key = -scores
    order_ids = np.argsort(ids, kind="stable")
    out_ids, out_scores = [], []
    for row_key, row_scores in zip(key, scores):
        # sort by id first, then stably by key: ties keep the lower id first
        o = order_ids[np.argsort(row_key[order_ids], kind="stable")][:k]
        out_ids.append(ids[o])
        out_scores.append(row_scores[o])
    return np.array(out_ids), np.array(out_scores)


def int_data(rng, n, dim, lo=-3, hi=4):
    return rng.integers(lo, hi, size=(n, dim)).astype(np.float32)


@pytest.mark.parametrize("metric", ["ip", "l2"])
@pytest.mark.parametrize("storage", ["float32", "float16"])
def test_exact_equals_numpy_argsort_with_ties(metric, storage):
    rng = np.random.default_rng(3)
    data = int_data(rng, 600, 9)  # few distinct scores: many ties
    ids = rng.permutation(5000)[:600].astype(np.int64)
    queries = int_data(rng, 20, 9)
    ix = FlatIndex(9, metric=metric, storage=storage)
    ix.add(data, ids=ids)
    got = ix.search(queries, k=25, exact=True)
    want_ids, want_scores = numpy_knn(data, ids, queries, 25, metric)
    np.testing.assert_array_equal(got.ids, want_ids)
    np.testing.assert_array_equal(got.scores, want_scores.astype(np.float32))
    # the compact scan re-scores in float32: same answer on exact integer data
    got2 = ix.search(queries, k=25)
    np.testing.assert_array_equal(got2.ids, want_ids)


def test_cosine_matches_numpy():
    rng = np.random.default_rng(4)
    data = rng.normal(size=(800, 24)).astype(np.float32)
    queries = rng.normal(size=(15, 24)).astype(np.float32)
    ix = FlatIndex(24)
    ix.add(data)
    got = ix.search(queries, k=10)
    want_ids, want_scores = numpy_knn(data, np.arange(800), queries, 10, "cosine")
    np.testing.assert_array_equal(got.ids, want_ids)
    np.testing.assert_allclose(got.scores, want_scores, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(ix.get([0, 5]), axis=1), 1.0, atol=1e-6)


@settings(max_examples=30, deadline=None)
@given(
    st.integers(1, 60),
    st.integers(1, 6),
    st.integers(1, 12),
    st.integers(0, 10**6),
    st.sampled_from(["ip", "l2"]),
)
def test_property_exact_knn_is_numpy_argsort(n, dim, k, seed, metric):
    rng = np.random.default_rng(seed)
    data = int_data(rng, n, dim, -2, 3)
    queries = int_data(rng, 3, dim, -2, 3)
    ix = FlatIndex(dim, metric=metric)
    ix.add(data)
    got = ix.search(queries, k=k)
    want_ids, want_scores = numpy_knn(data, np.arange(n), queries, k, metric)
    np.testing.assert_array_equal(got.ids, want_ids)
    np.testing.assert_array_equal(got.scores, want_scores.astype(np.float32))


@pytest.mark.parametrize("storage", ["float32", "float16", "int8"])
def test_thread_count_does_not_change_results(storage):
    rng = np.random.default_rng(5)
    data = rng.normal(size=(6000, 40)).astype(np.float32)
    queries = rng.normal(size=(30, 40)).astype(np.float32)
    ix = FlatIndex(40, metric="cosine", storage=storage)
    ix.add(data)
    a = ix.search(queries, k=12, n_threads=1)
    b = ix.search(queries, k=12, n_threads=4)
    np.testing.assert_array_equal(a.ids, b.ids)
    assert a.scores.tobytes() == b.scores.tobytes()


@pytest.mark.parametrize("storage", ["float16", "int8"])
def test_compact_storage_recall(storage):
    rng = np.random.default_rng(6)
    data = rng.normal(size=(5000, 64)).astype(np.float32)
    queries = rng.normal(size=(50, 64)).astype(np.float32)
    exact = FlatIndex(64, metric="ip")
    exact.add(data)
    ix = FlatIndex(64, metric="ip", storage=storage, rescore_factor=4)
    ix.add(data)
    truth = exact.search(queries, k=10)
    got = ix.search(queries, k=10)
    assert recall_at_k(got.ids, truth.ids) >= 0.99
    same = got.ids == truth.ids
    np.testing.assert_allclose(got.scores[same], truth.scores[same], rtol=1e-5, atol=1e-5)


def test_single_query_and_small_index():
    ix = FlatIndex(3, metric="ip")
    ix.add([[1, 0, 0], [0, 1, 0]])
    res = ix.search([1, 2, 3], k=5)
    assert res.ids.shape == (2,) and list(res.ids) == [1, 0]
    empty = FlatIndex(3)
    assert empty.search([[1, 2, 3]], k=3).ids.shape == (1, 0)


def test_remove_compact_filter_and_ids():
    rng = np.random.default_rng(7)
    data = rng.normal(size=(100, 8)).astype(np.float32)
    ix = FlatIndex(8, metric="l2")
    ix.add(data, ids=np.arange(1000, 1100))
    assert ix.search(data[10], k=1).ids[0] == 1010
    assert ix.remove([1010, 1011]) == 2
    assert 1010 not in ix and 1012 in ix and len(ix) == 98 and ix.n_deleted == 2
    assert 1010 not in ix.search(data[10], k=5).ids
    with pytest.raises(RangeError, match="1010"):
        ix.remove([1010])
    before = ix.search(data[:5], k=4)
    ix.compact()
    assert ix.n_deleted == 0
    after = ix.search(data[:5], k=4)
    np.testing.assert_array_equal(before.ids, after.ids)
    res = ix.search(data[10], k=10, filter=[1050, 1060, 1010, 99999])
    assert sorted(res.ids.tolist()) == [1050, 1060]
    assert ix.search(data[10], k=3, filter=[]).ids.shape == (0,)
    assert ix.ids()[:3].tolist() == [1000, 1001, 1002]
    ix.add(data[10], ids=[1010])  # a removed id may come back
    assert ix.search(data[10], k=1).ids[0] == 1010
    assert ix.add(data[0])[0] == 1100  # auto ids continue after the largest


def test_bad_input_errors():
    ix = FlatIndex(4)
    with pytest.raises(ValueError, match=r"vectors has shape \(2, 3\)"):
        ix.add(np.ones((2, 3)))
    with pytest.raises(InvalidArgumentError, match=r"vectors\[1\]\[2\] = nan"):
        ix.add([[1, 1, 1, 1], [1, 1, np.nan, 1]])
    with pytest.raises(InvalidArgumentError, match="zero vector"):
        ix.add(np.zeros((1, 4)))
    with pytest.raises(TypeError, match="real numeric"):
        ix.add(np.array([["a", "b", "c", "d"]]))
    assert len(ix) == 0
    ix.add(np.ones((2, 4)))
    with pytest.raises(ValueError, match="k=0"):
        ix.search(np.ones(4), k=0)
    with pytest.raises(ValueError, match=r"queries has shape \(5,\)"):
        ix.search(np.ones(5))
    with pytest.raises(InvalidArgumentError, match="queries"):
        ix.search([np.inf, 0, 0, 0])
    with pytest.raises(InvalidArgumentError, match="already in the index"):
        ix.add(np.ones(4), ids=[0])
    with pytest.raises(InvalidArgumentError, match="more than once"):
        ix.add(np.ones((2, 4)), ids=[9, 9])
    with pytest.raises(ValueError, match="ids contains -1"):
        ix.add(np.ones(4), ids=[-1])
    with pytest.raises(ValueError, match="metric="):
        FlatIndex(4, metric="manhattan")
    with pytest.raises(ValueError, match="storage="):
        FlatIndex(4, storage="int4")
    with pytest.raises(ValueError, match="dim=0"):
        FlatIndex(0)
    with pytest.raises(RangeError, match="float16"):
        FlatIndex(2, metric="ip", storage="float16").add([[1e6, 0]])


@pytest.mark.parametrize("storage", ["float32", "int8"])
def test_save_load_round_trip(tmp_path, storage):
    rng = np.random.default_rng(8)
    data = rng.normal(size=(300, 16)).astype(np.float32)
    queries = rng.normal(size=(7, 16)).astype(np.float32)
    ix = FlatIndex(16, metric="l2", storage=storage, rescore_factor=3)
    ix.add(data)
    ix.remove([0, 1])
    path = tmp_path / "dense.rvf"
    ix.save(path)
    assert not [p for p in os.listdir(tmp_path) if ".tmp-" in p]
    back = FlatIndex.load(path)
    assert (back.dim, back.metric, back.storage, back.rescore_factor, len(back)) == (
        16,
        "l2",
        storage,
        3,
        298,
    )
    a, b = ix.search(queries, k=9), back.search(queries, k=9)
    np.testing.assert_array_equal(a.ids, b.ids)
    assert a.scores.tobytes() == b.scores.tobytes()


def test_corrupt_files_raise_index_format_error(tmp_path):
    rng = np.random.default_rng(9)
    ix = FlatIndex(8)
    ix.add(rng.normal(size=(20, 8)))
    path = tmp_path / "x.rvf"
    ix.save(path)
    good = path.read_bytes()
    bad = tmp_path / "bad.rvf"
    for pos in list(range(0, 96, 5)) + [96, 200, len(good) - 1]:
        blob = bytearray(good)
        blob[pos] ^= 0x10
        bad.write_bytes(bytes(blob))
        with pytest.raises(IndexFormatError):
            FlatIndex.load(bad)
    for cut in (0, 10, 95, 97, len(good) - 1):
        bad.write_bytes(good[:cut])
        with pytest.raises(IndexFormatError):
            FlatIndex.load(bad)
    bad.write_bytes(b"PK\x03\x04 a zip file, not an index")
    with pytest.raises(IndexFormatError, match="magic") as info:
        FlatIndex.load(bad)
    assert info.value.status_name == "RV_E_CORRUPT"
    blob = bytearray(good)
    blob[8] = 9
    bad.write_bytes(bytes(blob))
    with pytest.raises(IndexFormatError, match="version 9") as info:
        FlatIndex.load(bad)
    assert info.value.status_name == "RV_E_VERSION"
    with pytest.raises(OSError):
        FlatIndex.load(tmp_path / "missing.rvf")


def test_rescore_api():
    ix = FlatIndex(2, metric="ip")
    ix.add([[1, 0], [0, 1], [2, 2]], ids=[4, 5, 6])
    res = ix.rescore([[1, 1], [1, 0]], [[4, 5, 6], [5, -1, 5]], k=2)
    np.testing.assert_array_equal(res.ids, [[6, 4], [5, -1]])
    with pytest.raises(RangeError, match="candidate id 9"):
        ix.rescore([1, 1], [9], k=1)


# ------------------------------------------------------------------- HNSW


def clustered(rng, n, dim, n_centers=50, spread=0.15, n_queries=0):
    """Points around shared centers, and queries drawn around the same ones."""
    centers = rng.normal(size=(n_centers, dim))

    def draw(m):
        x = centers[rng.integers(0, n_centers, m)] + spread * rng.normal(size=(m, dim))
        return x.astype(np.float32)

    return draw(n), draw(n_queries)


@pytest.fixture(scope="module")
def hnsw_setup():
    rng = np.random.default_rng(10)
    data, queries = clustered(rng, 4000, 32, n_queries=100)
    exact = FlatIndex(32)
    exact.add(data)
    hnsw = HNSWIndex(32, M=8, ef_construction=60, ef=16, seed=1)
    hnsw.add(data)
    return data, queries, exact, hnsw


def test_hnsw_recall_against_exact(hnsw_setup):
    _data, queries, exact, hnsw = hnsw_setup
    truth = exact.search(queries, k=10).ids
    got = hnsw.search(queries, k=10)
    assert got.ids.shape == (100, 10)
    assert recall_at_k(got.ids, truth) >= 0.95
    lifted = hnsw.search(queries, k=10, exact_rescore=128)
    assert recall_at_k(lifted.ids, truth) >= 0.99
    assert recall_at_k(lifted.ids, truth) > recall_at_k(got.ids, truth)
    # re-scored scores are the exact index's float32 scores
    full = exact.search(queries, k=10)
    same = lifted.ids == full.ids
    np.testing.assert_allclose(lifted.scores[same], full.scores[same], atol=1e-6)
    # graph scores are similarities too
    hit = got.ids[:, 0] == full.ids[:, 0]
    assert hit.mean() > 0.9
    np.testing.assert_allclose(got.scores[hit, 0], full.scores[hit, 0], atol=1e-4)


def test_hnsw_is_deterministic_for_a_seed():
    rng = np.random.default_rng(11)
    data, q = clustered(rng, 1500, 16, n_queries=20)
    a = HNSWIndex(16, M=6, ef_construction=40, ef=10, seed=5)
    b = HNSWIndex(16, M=6, ef_construction=40, ef=10, seed=5)
    a.add(data)
    b.add(data)
    np.testing.assert_array_equal(a.search(q, k=5).ids, b.search(q, k=5).ids)
    np.testing.assert_array_equal(
        a.search(q, k=5, n_threads=1).ids, a.search(q, k=5, n_threads=4).ids
    )


def test_hnsw_remove_filter_grow_and_errors():
    rng = np.random.default_rng(12)
    data = rng.normal(size=(300, 8)).astype(np.float32)
    h = HNSWIndex(8, metric="l2", max_elements=10, ef=50)
    h.add(data[:150])
    h.add(data[150:], ids=np.arange(1000, 1150))  # grows past max_elements
    assert len(h) == 300 and 1000 in h
    assert h.search(data[5], k=1).ids[0] == 5
    h.remove([5])
    assert 5 not in h.search(data[5], k=10).ids
    res = h.search(data[5], k=3, filter=[7, 8, 1001])
    assert sorted(res.ids.tolist()) == [7, 8, 1001]
    with pytest.raises(InvalidArgumentError, match="already"):
        h.add(data[0], ids=[7])
    with pytest.raises(ValueError, match="queries has shape"):
        h.search(np.ones(3))
    with pytest.raises(ValueError, match="M=1"):
        HNSWIndex(8, M=1)
    h.add(data[5], ids=[5])
    assert h.search(data[5], k=1).ids[0] == 5


def test_hnsw_save_load(tmp_path, hnsw_setup):
    _data, queries, _exact, hnsw = hnsw_setup
    hnsw.save(tmp_path / "ix")
    back = HNSWIndex.load(tmp_path / "ix")
    assert (back.M, back.ef_construction, back.ef, back.seed, len(back)) == (8, 60, 16, 1, 4000)
    np.testing.assert_array_equal(back.search(queries, k=10).ids, hnsw.search(queries, k=10).ids)
    # the manifest names the generation's graph file
    graph = tmp_path / "ix" / json.loads((tmp_path / "ix" / "hnsw.json").read_text())["hnsw_file"]
    blob = bytearray(graph.read_bytes())
    blob[len(blob) // 2] ^= 1
    graph.write_bytes(bytes(blob))
    with pytest.raises(IndexFormatError, match="checksum"):
        HNSWIndex.load(tmp_path / "ix")
    with pytest.raises(IndexFormatError, match=r"hnsw\.json"):
        HNSWIndex.load(tmp_path / "nothing")


# ------------------------------------------------------------------ filters


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 300),
    st.sampled_from(["cosine", "ip", "l2"]),
    st.sampled_from(["float32", "int8"]),
    st.integers(1, 12),
    st.lists(st.integers(0, 400), max_size=120),
    st.integers(0, 2**32 - 1),
)
def test_flat_filter_equals_numpy_brute_force(n, metric, storage, k, allowed, seed):
    """A filtered search ranks exactly the allowed vectors (float32 rows:
    exact=True also under int8 storage): it equals the unfiltered ranking
    restricted to the filter, and numpy's where float32 is exact (integer
    data under ip and l2; cosine normalises, so numpy's float64 can order
    near-parallel vectors differently)."""
    rng = np.random.default_rng(seed)
    data = int_data(rng, n, 6)
    data[np.all(data == 0, axis=1), 0] = 1  # no zero vectors under cosine
    ids = rng.permutation(n).astype(np.int64) * 2 + 1  # odd ids, any order
    ix = FlatIndex(6, metric, storage=storage)
    ix.add(data, ids=ids)
    gone = ids[: n // 10]
    if len(gone):
        ix.remove(gone)
    q = int_data(rng, 3, 6)
    q[np.all(q == 0, axis=1), 0] = 1
    keep = np.isin(ids, np.array(sorted(set(allowed)), dtype=np.int64)) & ~np.isin(ids, gone)
    res = ix.search(q, k=k, filter=allowed, exact=True)
    kk = min(k, int(keep.sum()))
    assert res.ids.shape == (3, kk)
    full = ix.search(q, k=n, exact=True)
    allowed_set = set(allowed)
    for row in range(3):
        want = [
            (i, sc)
            for i, sc in zip(full.ids[row].tolist(), full.scores[row].tolist())
            if i in allowed_set
        ][:kk]
        assert list(zip(res.ids[row].tolist(), res.scores[row].tolist())) == want
    if kk and metric != "cosine":
        want_ids, want_scores = numpy_knn(data[keep], ids[keep], q, kk, metric)
        np.testing.assert_array_equal(res.ids, want_ids)
        np.testing.assert_array_equal(res.scores, want_scores.astype(np.float32))


def test_hnsw_filter_routes_both_sides():
    """Small filters go to the exact twin (results identical to the exact
    index); large ones walk the graph with hnswlib's filter (recall)."""
    rng = np.random.default_rng(21)
    n, d = 3000, 16
    centers = rng.normal(size=(20, d))
    data = (centers[rng.integers(0, 20, n)] + 0.3 * rng.normal(size=(n, d))).astype(np.float32)
    queries = (centers[rng.integers(0, 20, 40)] + 0.3 * rng.normal(size=(40, d))).astype(
        np.float32
    )
    h = HNSWIndex(d, "cosine", M=16, ef_construction=100, ef=64, seed=3)
    h.add(data)
    limit = int((580.0 * n) ** 0.5)  # FILTER_EXACT_RATIO: 1,319 of 3,000
    small = IdSet(rng.choice(n, 300, replace=False))
    large = IdSet(rng.choice(n, 2400, replace=False))
    assert h.filter_route(len(small)) == "exact" and h.filter_route(limit) == "exact"
    assert h.filter_route(len(large)) == "hnsw" and h.filter_route(limit + 1) == "hnsw"
    exact = FlatIndex(d, "cosine")
    exact.add(data)
    got = h.search(queries, k=10, filter=small)
    want = exact.search(queries, k=10, filter=small)
    np.testing.assert_array_equal(got.ids, want.ids)  # exact side: identical
    np.testing.assert_allclose(got.scores, want.scores, rtol=1e-6)  # row vs panel kernel
    got = h.search(queries, k=10, filter=large)
    want = exact.search(queries, k=10, filter=large)
    assert set(got.ids.ravel().tolist()) <= set(large)
    assert recall_at_k(got.ids, want.ids) >= 0.9  # walk side: recall
    # a filter naming ids the index lacks cannot make the walk fail
    mostly_missing = IdSet(list(range(0, 40)) + list(range(10**6, 10**6 + 3000)))
    got = h.search(queries[0], k=10, filter=mostly_missing)
    assert sorted(got.ids.tolist()) == sorted(
        exact.search(queries[0], k=10, filter=mostly_missing).ids.tolist()
    )


# ------------------------------------------------- exact search of int8 storage


def _hard_data(kind, rng, n, dim):
    """Data on which an int8 screen is hard (see the C test
    test_screen_equals_brute_force): near-duplicates, exact duplicates,
    norms over many decades, spikes below the int8 step, tiny values."""
    x = rng.standard_normal((n, dim)).astype(np.float32)
    if kind == "clusters":
        centres = rng.standard_normal((3, dim)).astype(np.float32)
        x = centres[rng.integers(0, 3, n)] + np.float32(1e-5) * x
    elif kind == "duplicates":
        x = x[rng.integers(0, max(1, n // 3), n)]
    elif kind == "scales":
        x *= (10.0 ** rng.uniform(-12, 12, (n, 1))).astype(np.float32)
    elif kind == "spikes":
        x *= np.float32(1e-4)
        x[np.arange(n), rng.integers(0, dim, n)] = 1.0
    elif kind == "integers":
        x = rng.integers(-2, 3, (n, dim)).astype(np.float32)
    elif kind == "tiny":
        x *= np.float32(1e-35)
    x[np.all(x == 0, axis=1), 0] = 1.0  # no zero rows (cosine)
    return x


@settings(max_examples=80, deadline=None)
@given(
    st.integers(1, 700),
    st.sampled_from([1, 3, 4, 16, 17, 45, 384]),
    st.sampled_from(["gauss", "clusters", "duplicates", "scales", "spikes", "integers", "tiny"]),
    st.sampled_from(["ip", "cosine", "l2"]),
    st.integers(1, 80),
    st.booleans(),
    st.integers(0, 2**32 - 1),
)
def test_int8_exact_search_is_brute_force(n, dim, kind, metric, k, filtered, seed):
    """``exact=True`` on int8 storage screens with the int8 copy and scores
    exactly only what the screen's bounds cannot rule out; whatever the
    data, its results -- ids, order, float32 scores bit for bit -- are those
    of scoring every live (allowed) vector: :meth:`FlatIndex.rescore` of all
    of them. Queries include a stored vector (ties at the top) and copies of
    it scaled down."""
    rng = np.random.default_rng(seed)
    data = _hard_data(kind, rng, n, dim)
    ids = rng.permutation(n).astype(np.int64) * 3
    ix = FlatIndex(dim, metric, storage="int8")
    ix.add(data, ids=ids)
    gone = ids[rng.random(n) < 0.1]
    if 0 < len(gone) < n:
        ix.remove(gone)
    live = ix.ids()
    q = np.concatenate([data[n // 2 : n // 2 + 1], _hard_data(kind, rng, 3, dim)])
    q[2] = q[0] * np.float32(1e-3)
    allowed = live[rng.random(len(live)) < 0.5] if filtered else None
    cand = live if allowed is None else allowed
    for threads in (1, 2):
        got = ix.search(q, k=k, exact=True, filter=allowed, n_threads=threads)
        if not len(cand):
            assert got.ids.shape == (4, 0)
            continue
        want = ix.rescore(q, np.tile(cand, (4, 1)), k=k)
        kk = min(k, len(cand))
        np.testing.assert_array_equal(got.ids, want.ids[:, :kk])
        assert got.scores.tobytes() == want.scores[:, :kk].tobytes()


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 400),
    st.sampled_from([1, 4, 5, 17, 64, 384, 512]),
    st.sampled_from([0.0, 0.02, 0.1, 0.4, 0.9]),
    st.sampled_from([0.05, 0.5, 1.0]),
    st.sampled_from(["ip", "cosine"]),
    st.integers(1, 40),
    st.integers(0, 2**32 - 1),
)
def test_int8_exact_search_sparse_queries(n, dim, q_density, x_density, metric, k, seed):
    """Sparse queries (most components zero, as the hashing embedder's):
    the int8 screen then reads only the panel lines of the query's nonzero
    code quads, and must still return what scoring every vector in float32
    returns, bit for bit -- with whole zero quads, lone nonzero components,
    components too small for a nonzero code, and sparse stored vectors."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, dim)).astype(np.float32)
    x *= rng.random((n, dim)) < x_density
    x[np.all(x == 0, axis=1), 0] = 1.0
    ix = FlatIndex(dim, metric, storage="int8")
    ix.add(x)
    q = rng.standard_normal((5, dim)).astype(np.float32)
    q *= rng.random((5, dim)) < q_density  # scattered zeros
    quads = np.repeat(rng.random((5, (dim + 3) // 4)) < 0.5, 4, axis=1)[:, :dim]
    q[1] *= quads[1]  # whole zero quads
    q[2] = x[n // 2] * quads[2]  # a stored row, some quads cut: ties
    q[3, 1::2] *= np.float32(1e-7)  # codes of zero beside large ones
    q[np.all(q == 0, axis=1), dim - 1] = 1.0
    got = ix.search(q, k=k, exact=True)
    want = ix.rescore(q, np.tile(ix.ids(), (5, 1)), k=k)
    kk = min(k, n)
    np.testing.assert_array_equal(got.ids, want.ids[:, :kk])
    assert got.scores.tobytes() == want.scores[:, :kk].tobytes()


def test_int8_exact_search_large_index_threads():
    """Several chunks of rows and two threads: still the brute force, bit
    for bit (clustered data, so many rows are near the cut)."""
    rng = np.random.default_rng(7)
    data = _hard_data("clusters", rng, 5000, 384)
    ix = FlatIndex(384, "ip", storage="int8")
    ix.add(data)
    q = _hard_data("clusters", rng, 6, 384)
    for k in (1, 11, 50, 500):
        got = ix.search(q, k=k, exact=True, n_threads=2)
        want = ix.rescore(q, np.tile(ix.ids(), (6, 1)), k=k)
        np.testing.assert_array_equal(got.ids, want.ids)
        assert got.scores.tobytes() == want.scores.tobytes()


def test_frozen_index_refuses_changes_and_still_searches():
    ix = FlatIndex(2, metric="ip", storage="int8")
    ix.add([[1.0, 0.0], [0.0, 1.0]], ids=[4, 9])
    ix._freeze()
    for change in (lambda: ix.add([[1.0, 1.0]]), lambda: ix.remove([4]), ix.compact):
        with pytest.raises(RuntimeError, match="read-only"):
            change()
    ids, scores = ix._search_vector(np.array([0.0, 1.0], dtype=np.float32), 5, True, 1)
    assert ids.tolist() == [9, 4] and scores.tolist() == [1.0, 0.0]
    assert ix.search([0.0, 1.0], k=1).ids.tolist() == [9]
