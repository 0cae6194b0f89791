"""The compiled hot path of a corpus search (rowvoi.index._hot) against its
Python reference: the dense hits built by ``dense_hits`` equal those of
``rank._dense_hits_reference`` field for field (texts, metadata,
``explain``, order, types) on hypothesis-chosen record tables with equal
scores, several surfaces per artifact, surface metadata, filter fields and
non-ASCII text; ``unit_query`` equals its definition (a float64 sum of
squares in index order) bit for bit and ``any_nonzero`` NumPy's
``count_nonzero``; bad tables and arrays are refused."""

import dataclasses
import itertools
import json
import math
from array import array
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from rowvoi.corpus import CorpusStore, build, from_mapping, search
from rowvoi.corpus.base import DEFERRED, SearchHit
from rowvoi.corpus.retrieval import rank
from rowvoi.corpus.storage.records import RecordTable, _json_bytes, _Strings
from rowvoi.errors import IndexFormatError, InvalidArgumentError, RangeError
from rowvoi.index import _hot

TEXTS = ["", "wing", "Lift and drag", "Flügel — Auftrieb", "θ = 3°", "a\u0000b", "🛩 high"]
KINDS = ["body", "document", "title"]
#: what both builders' tests draw: a table's artifact ids, the hits' source
#: (an unnamed corpus or one named), the index that answered the dense side
ARTIFACT_IDS = st.lists(st.text(min_size=1, max_size=6), min_size=1, max_size=25, unique=True)
SOURCES = st.sampled_from([None, "cran"])
ANSWERED_BY = st.sampled_from(["flat", "hnsw"])


def _table(draw_artifacts, rng):
    """A RecordTable filled by hand: artifacts with 1-3 surfaces each,
    random record ids (ascending, with gaps), metadata and filter fields
    sometimes empty."""
    n_art = len(draw_artifacts)
    aids = sorted(draw_artifacts)  # artifact ranks follow id order
    recs = []  # (artifact rank, surface index, kind code, text, metadata)
    for a in range(n_art):
        for s in range(int(rng.integers(1, 4))):
            meta = {} if rng.random() < 0.5 else {"chunk_index": s, "page": int(rng.integers(9))}
            recs.append(
                (a, int(rng.integers(0, 5)), int(rng.integers(3)), str(rng.choice(TEXTS)), meta)
            )
    order = rng.permutation(len(recs))  # record ids do not follow artifacts
    recs = [recs[i] for i in order]
    t = RecordTable(1)
    t.ids = np.cumsum(rng.integers(1, 4, size=len(recs))).astype(np.int64)
    t.art = np.array([r[0] for r in recs], dtype=np.int32)
    t.surface = np.array([r[1] for r in recs], dtype=np.int64)
    t.kind = np.array([r[2] for r in recs], dtype=np.int32)
    t.kinds = list(KINDS)
    t.one_per_artifact = len(set(t.art.tolist())) == len(recs)
    t._artifact_ids = _Strings([a.encode() for a in aids])
    fields = [
        {} if rng.random() < 0.4 else {"year": int(rng.integers(1950, 2000)), "venue": "JAS"}
        for _ in aids
    ]
    t._filter_fields = _Strings([_json_bytes(json.dumps(f)) for f in fields])
    t._texts = _Strings([r[3].encode() for r in recs])
    t._metadata = _Strings([_json_bytes(json.dumps(r[4])) for r in recs])
    return t


def _candidates(t, rng, n, sort):
    """n distinct live ids with float32 scores from a small set (ties),
    best first as the vector index gives them (ties by record id), or
    shuffled."""
    ids = rng.choice(t.ids, size=min(n, len(t)), replace=False).astype(np.int64)
    scores = rng.choice(np.float32([0.9, 0.5, 0.25, -0.125, 0.0]), size=len(ids))
    scores = scores.astype(np.float32)
    if sort:
        o = np.lexsort((ids, -scores.astype(np.float64)))
        ids, scores = ids[o], scores[o]
    return ids, scores


def _fields(hits):
    """Every field of every hit, read (a compiled builder's hits defer
    some: see SearchHit's Notes), with the types and key orders a caller
    could see."""
    names = [f.name for f in dataclasses.fields(SearchHit)]
    return [
        (
            type(h),
            [getattr(h, name) for name in names],
            type(h.score),
            type(h.record_id),
            type(h.text),
            list(h.explain or ()),
            list(h.metadata),
        )
        for h in hits
    ]


@settings(max_examples=200, deadline=None)
@given(
    ARTIFACT_IDS,
    st.integers(1, 60),
    st.integers(1, 12),
    st.booleans(),
    st.booleans(),
    SOURCES,
    ANSWERED_BY,
    st.integers(0, 2**32 - 1),
)
def test_dense_hits_equal_the_reference(arts, n, k, per_artifact, sort, name, answered, seed):
    rng = np.random.default_rng(seed)
    t = _table(arts, rng)
    ids, scores = _candidates(t, rng, n, sort)
    p = rank.Params(k, "dense", "rrf", 60, 0.5, 8.0, None, per_artifact, None, 50, "auto", False)
    c = SimpleNamespace(name=name)
    for sc in (scores, scores.astype(np.float64)):
        want = rank._dense_hits_reference(c.name, t, ids, sc, answered, p)
        got = rank._dense_hits(c.name, t, ids, sc, answered, p)
        assert _fields(got) == _fields(want)
        assert got == want
    # the compiled builder alone declines candidates not strictly best
    # first (equal scores: the caller orders them)
    sl = scores.tolist()
    strict = all(a > b for a, b in itertools.pairwise(sl))
    assert strict or not sort or len(set(sl)) < len(sl)
    direct = _hot.dense_hits(
        t._hit_table(), ids, scores, None, k, per_artifact, name, "x", "dense"
    )
    assert (direct is None) == (not strict)


@settings(max_examples=200, deadline=None)
@given(
    ARTIFACT_IDS,
    st.integers(1, 40),
    st.sampled_from(["hybrid", "dense", "lexical"]),
    st.sampled_from(["rrf", "blend"]),
    st.sampled_from([None, {}, {"title": 2.0, "body": 0.5}]),
    SOURCES,
    ANSWERED_BY,
    st.integers(0, 2**32 - 1),
)
def test_fused_hits_equal_the_reference(arts, n, mode, fusion, weights, name, answered, seed):
    # the final candidates of a hybrid (or weighted) search, in the order
    # given, with ranks and raw scores on each side (0: not returned there)
    # and, for hybrid RRF, each hit's evidence: hit for hit the Python
    # reference's
    rng = np.random.default_rng(seed)
    t = _table(arts, rng)
    pos = rng.choice(len(t), size=min(n, len(t)), replace=False).astype(np.int64)
    ids = t.ids[pos]
    m = len(pos)
    scores = rng.choice([0.5, 0.25, 1 / 61 + 1 / 62, 0.0], size=m).astype(np.float64)
    d_rank = np.where(rng.random(m) < 0.7, rng.integers(1, 500, size=m), 0).astype(np.int64)
    l_rank = np.where(rng.random(m) < 0.7, rng.integers(1, 500, size=m), 0).astype(np.int64)
    d_score = np.where(d_rank > 0, rng.normal(size=m), 0.0)
    l_score = np.where(l_rank > 0, rng.gamma(2.0, size=m), 0.0)
    evidence = rng.random(m) if mode == "hybrid" and fusion == "rrf" else None
    p = rank.Params(m, mode, fusion, 60, 0.5, 8.0, None, True, weights, 50, "auto", False)
    opened = SimpleNamespace(gen=SimpleNamespace(lexical=None))
    want = rank._fused_hits_reference(
        opened,
        "q",
        t,
        pos,
        ids,
        scores,
        (d_rank, d_score, l_rank, l_score),
        evidence,
        p,
        name,
        answered,
    )
    args = (pos, ids, scores, d_rank, d_score, l_rank, l_score, evidence, weights, name, mode)
    fus = fusion if mode == "hybrid" else None
    got = _hot.fused_hits(t._hit_table(), *args, fus, answered)
    assert _fields(got) == _fields(want)
    assert [h.explain for h in got] == [h.explain for h in want]
    assert [list(h.explain) for h in got] == [list(h.explain) for h in want]  # key order
    assert got == want
    if m:
        # independent objects: nothing shared between hits or with the inputs
        got[0].explain["answered_by"].append("x")
        got[0].metadata["x"] = 1
        assert _hot.fused_hits(t._hit_table(), *args, fus, answered) == want


SCORE_VALUES = [0.5, 0.25, 0.0, -0.0, -1.0, math.inf, -math.inf, math.nan, 1e-300]


@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 40),
    st.lists(st.sampled_from(SCORE_VALUES), max_size=120),
    st.booleans(),
    st.booleans(),
    st.booleans(),
    st.integers(0, 2**32 - 1),
)
def test_order_is_lexsort_element_for_element(n_rec, scores, with_tie, repeat, falling, seed):
    """The compiled result order equals np.lexsort((surface[pos], art[pos],
    [-tie,] -scores)): NaN last, -0.0 equal to 0.0, infinities, positions
    repeated (equal keys keep their input order); scores in any order, or
    already falling (then only runs of equal scores are sorted -- a NaN
    among them sorts the whole)."""
    rng = np.random.default_rng(seed)
    art = rng.integers(0, 6, n_rec).astype(np.int32)
    surface = rng.integers(0, 3, n_rec).astype(np.int64)
    pos = rng.integers(0, n_rec, len(scores)) if repeat else rng.permutation(n_rec)
    pos = pos[: len(scores)].astype(np.int64)
    sc = np.array(scores[: len(pos)], dtype=np.float64)
    if falling:
        sc = np.sort(sc)[::-1].copy()  # (a NaN, sorted last, now comes first)
    tie = rng.choice(np.array(SCORE_VALUES), len(pos)) if with_tie else None
    keys = [surface[pos], art[pos]] + ([-tie] if with_tie else []) + [-sc]
    want = np.lexsort(keys)
    got = _hot.order(art, surface, pos, sc, tie)
    assert got.dtype == np.intp and got.tolist() == want.tolist()


def test_order_refuses_bad_arrays():
    art, surface = np.zeros(4, dtype=np.int32), np.zeros(4, dtype=np.int64)
    pos, sc = np.arange(3, dtype=np.int64), np.zeros(3)
    assert _hot.order(art, surface, pos[:0], sc[:0]).tolist() == []
    for bad in (
        (art.astype(np.int64), surface, pos, sc, None),
        (art, surface[:3], pos, sc, None),
        (art, surface, pos.astype(np.int32), sc, None),
        (art, surface, pos, sc.astype(np.float32), None),
        (art, surface, pos, sc[:2], None),
        (art, surface, pos, sc, np.zeros(2)),
        (art, surface, pos, np.zeros(6)[::2], None),
    ):
        with pytest.raises(ValueError, match="1-D, C-contiguous"):
            _hot.order(*bad)
    with pytest.raises(ValueError, match="position 4 out of range"):
        _hot.order(art, surface, pos + 2, sc)
    with pytest.raises(ValueError, match="position -1 out of range"):
        _hot.order(art, surface, pos - 1, sc)


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from([1, 3, 40, 2048, 2049, 5000, 2**24 + 3]),
    st.integers(0, 2**32 - 1),
    st.integers(0, 300),
    st.integers(0, 300),
)
def test_union_is_the_merge_of_two_ranked_lists(n_rec, seed, n_a, n_b):
    """The engine's union (one radix sort) gives what np.unique and a
    search of each list give: the positions ascending, each with its
    1-based rank in either list (0 where absent)."""
    rng = np.random.default_rng(seed)
    pool = rng.choice(n_rec, size=min(n_rec, 400), replace=False).astype(np.int64)
    a = rng.permutation(pool)[: min(n_a, len(pool))]
    b = rng.permutation(pool)[: min(n_b, len(pool))]
    u, ra, rb = _hot.union(a, b, n_rec)
    want = np.unique(np.concatenate([a, b]))
    assert u.dtype == ra.dtype == rb.dtype == np.int64
    assert u.tolist() == want.tolist()
    rank_a = {int(p): i + 1 for i, p in enumerate(a)}
    rank_b = {int(p): i + 1 for i, p in enumerate(b)}
    assert ra.tolist() == [rank_a.get(p, 0) for p in want.tolist()]
    assert rb.tolist() == [rank_b.get(p, 0) for p in want.tolist()]


def test_union_refuses_bad_lists():
    a, b = np.array([4, 2], dtype=np.int64), np.array([1, 9], dtype=np.int64)
    for bad in (
        (a.astype(np.int32), b, 10),
        (a, np.arange(4, dtype=np.int64)[::2], 10),
        (a, b, -1),
    ):
        with pytest.raises(ValueError, match="1-D, C-contiguous"):
            _hot.union(*bad)
    with pytest.raises(RangeError, match=r"position 9 \(list b, rank 2\) out of range"):
        _hot.union(a, b, 9)
    with pytest.raises(InvalidArgumentError, match="list a holds position 4 twice"):
        _hot.union(np.array([4, 4], dtype=np.int64), b, 10)


@pytest.mark.parametrize("rrf_k", [1, 60, 1000])
def test_rrf_is_the_numpy_sum_bit_for_bit(rrf_k):
    """The engine's reciprocal rank fusion of a union's ranks equals the
    sum the fusion wrote with NumPy masks (dense term first), bit for
    bit: ranks of one list, of both, of neither, up to 1,000."""
    rng = np.random.default_rng(rrf_k)
    ra = rng.integers(0, 1001, 5000).astype(np.int64)
    rb = rng.integers(0, 1001, 5000).astype(np.int64)
    ra[:100] = rb[100:200] = 0
    want = np.zeros(len(ra), dtype=np.float64)
    there = ra > 0
    want[there] = 1.0 / (rrf_k + ra[there])
    there = rb > 0
    want[there] += 1.0 / (rrf_k + rb[there])
    got = _hot.rrf(ra, rb, rrf_k)
    assert got.dtype == np.float64
    assert got.tobytes() == want.tobytes()
    with pytest.raises(ValueError, match="1-D, C-contiguous"):
        _hot.rrf(ra.astype(np.int32), rb, rrf_k)
    with pytest.raises(ValueError, match="of one length"):
        _hot.rrf(ra, rb[:-1], rrf_k)
    with pytest.raises(InvalidArgumentError, match="rrf_k = 0"):
        _hot.rrf(ra, rb, 0)
    with pytest.raises(InvalidArgumentError, match=r"rank_a\[3\] = -2"):
        _hot.rrf(np.array([1, 2, 3, -2], dtype=np.int64), ra[:4].copy(), rrf_k)


def test_fused_hits_refuses_bad_arrays():
    t = _table(["a", "b"], np.random.default_rng(4))
    n = len(t)
    pos = np.arange(n, dtype=np.int64)
    ids, sc = t.ids.copy(), np.zeros(n)
    rk = np.zeros(n, dtype=np.int64)
    good = [pos, ids, sc, rk, sc, rk, sc, sc]
    ht = t._hit_table()
    for i, bad in [
        (0, pos.astype(np.int32)),
        (2, sc.astype(np.float32)),
        (3, rk[:-1]),
        (4, np.zeros((n, 1))),
        (6, sc[::-1][::-1].repeat(2)[::2]),  # a strided view
        (7, sc[:-1]),  # the evidence
        (7, sc.astype(np.float32)),
    ]:
        args = list(good)
        args[i] = bad
        with pytest.raises(ValueError, match="1-D, C-contiguous, of one length"):
            _hot.fused_hits(ht, *args, None, None, "hybrid", "rrf", "flat")
    with pytest.raises(ValueError, match=f"position {n} out of range"):
        _hot.fused_hits(
            ht, pos + 1, ids, sc, rk, sc, rk, sc, None, None, None, "hybrid", "rrf", "flat"
        )


def test_hits_are_independent_objects():
    t = _table(["a", "b"], np.random.default_rng(3))
    ids, scores = t.ids[:2].copy(), np.float32([0.5, 0.25])
    p = rank.Params(2, "dense", "rrf", 60, 0.5, 8.0, None, False, None, 2, "auto", False)
    c = SimpleNamespace(name=None)
    h1 = rank._dense_hits(c.name, t, ids, scores, "flat", p)
    h2 = rank._dense_hits(c.name, t, ids, scores, "flat", p)
    h1[0].metadata["x"] = 1
    h1[0].explain["answered_by"].append("bm25")
    assert "x" not in h2[0].metadata and h2[0].explain["answered_by"] == ["flat"]
    assert h1[0].metadata is not h1[1].metadata
    with pytest.raises(AttributeError):
        h1[0].score = 2.0  # still a frozen dataclass
    assert h1[0] == SearchHit(**dataclasses.asdict(h1[0]))
    assert h1[0].metadata == {**h2[0].metadata, "x": 1}  # (the first read's object is kept)


def test_an_unknown_id_raises_as_the_reference():
    t = _table(["a", "b", "c"], np.random.default_rng(5))
    bad = int(t.ids.max()) + 7
    ids = np.array([int(t.ids[0]), bad], dtype=np.int64)
    scores = np.float32([0.5, 0.25])
    p = rank.Params(2, "dense", "rrf", 60, 0.5, 8.0, None, True, None, 50, "auto", False)
    c = SimpleNamespace(name=None)
    for fn in (rank._dense_hits, rank._dense_hits_reference):
        with pytest.raises(IndexFormatError, match=f"record id {bad} is in the index files"):
            fn(c.name, t, ids, scores, "flat", p)
    # also beyond the k kept: every candidate must be a record
    p1 = p._replace(k=1, per_artifact=False)
    with pytest.raises(IndexFormatError, match=f"record id {bad}"):
        rank._dense_hits(c.name, t, ids, scores, "flat", p1)


@settings(max_examples=60, deadline=None)
@given(
    n_arts=st.integers(1, 40),
    seed=st.integers(0, 2**32 - 1),
    n_cand=st.integers(1, 70),
)
def test_record_lookup_finds_every_id_and_only_those(n_arts, seed, n_cand):
    # dense_hits looks all candidates up at once (binary searches advanced
    # together): every id of the table at its position, in any order and
    # number; an id below, between or above the table's ids is missing
    rng = np.random.default_rng(seed)
    t = _table([f"a{i:03d}" for i in range(n_arts)], rng)
    ht = t._hit_table()
    pick = rng.integers(0, len(t), n_cand)
    ids = t.ids[pick].copy()
    sc = np.float32(-np.arange(n_cand, dtype=np.float64) - 1.0)  # strictly falling
    hits = _hot.dense_hits(ht, ids, sc, None, n_cand, False, None, "flat", "dense")
    assert [h.record_id for h in hits] == ids.tolist()
    assert [h.surface_index for h in hits] == t.surface[pick].tolist()
    present = set(t.ids.tolist())
    absent = [int(t.ids.min()) - 1, int(t.ids.max()) + 1]
    absent += [x for x in range(int(t.ids.min()), int(t.ids.max())) if x not in present][:3]
    for bad in absent:
        at = int(rng.integers(0, n_cand + 1))
        ids_bad = np.insert(ids, at, bad).astype(np.int64)
        sc_bad = np.float32(-np.arange(n_cand + 1, dtype=np.float64) - 1.0)
        assert _hot.dense_hits(ht, ids_bad, sc_bad, None, 1, False, None, "f", "d") is None


def test_dense_hits_argument_checks():
    t = _table(["a", "b", "c"], np.random.default_rng(7))
    ht = t._hit_table()
    ids = t.ids[:2].copy()
    sc = np.float32([0.5, 0.25])
    assert _hot.dense_hits(ht, ids[:0], sc[:0], None, 3, True, None, "flat", "dense") == []
    # types or layouts it does not take: None without positions (the caller
    # converts), ValueError with them
    assert _hot.dense_hits(ht, ids.astype(np.int32), sc, None, 3, True, None, "f", "d") is None
    assert _hot.dense_hits(ht, ids, sc.astype(np.float16), None, 3, True, None, "f", "d") is None
    assert _hot.dense_hits(ht, ids, sc[:1], None, 3, True, None, "f", "d") is None
    pos = t.positions(ids)
    with pytest.raises(ValueError, match="ids must be int64"):
        _hot.dense_hits(ht, ids[::-1][::-1].astype(np.int32), sc, pos, 3, True, None, "f", "d")
    with pytest.raises(ValueError, match="pos must be int64"):
        _hot.dense_hits(ht, ids, sc, pos[:1], 3, True, None, "f", "d")
    with pytest.raises(ValueError, match="position 99 out of range"):
        _hot.dense_hits(ht, ids, sc, np.array([0, 99]), 3, True, None, "f", "d")
    with pytest.raises(ValueError, match="k=0"):
        _hot.dense_hits(ht, ids, sc, None, 0, True, None, "f", "d")
    assert len(ht) == len(t)


def test_hit_table_refuses_inconsistent_columns():
    t = _table(["a", "b"], np.random.default_rng(11))
    good = dict(
        ids=t.ids,
        art=t.art,
        kind=t.kind,
        surface=t.surface,
        kinds=t.kinds,
        texts=t._texts.blob,
        t_off=t._texts.offsets,
        metadata=t._metadata.blob,
        m_off=t._metadata.offsets,
        filter_fields=t._filter_fields.blob,
        f_off=t._filter_fields.offsets,
        artifact_ids=t._artifact_ids.blob,
        a_off=t._artifact_ids.offsets,
        hit_type=SearchHit,
        loads=json.loads,
    )
    _hot.HitTable(*good.values())
    n = len(t)
    bad = [
        ({"art": t.art[:-1]}, "different lengths"),
        ({"texts": t._texts.blob + b"x"}, "texts offsets do not span"),
        (
            {
                "m_off": array(
                    "q", [0, len(t._metadata.blob) + 1] + [len(t._metadata.blob)] * (n - 1)
                )
            },
            "metadata offsets",
        ),
        ({"art": np.full(n, 5, dtype=np.int32)}, "artifact rank 5 out of range"),
        ({"kind": np.full(n, 3, dtype=np.int32)}, "kind code 3 out of range"),
        ({"ids": np.zeros(n, dtype=np.int64)}, "not strictly ascending"),
    ]
    for change, msg in bad:
        if msg == "not strictly ascending" and n < 2:
            continue
        with pytest.raises(ValueError, match=msg):
            _hot.HitTable(*{**good, **change}.values())
    with pytest.raises(ValueError):  # a wrong element type
        _hot.HitTable(*{**good, "art": t.art.astype(np.int64)}.values())
    # the hit class is made through its own slot: it must be a class
    with pytest.raises(TypeError, match="hit_type must be a class, not function"):
        _hot.HitTable(*{**good, "hit_type": lambda: None}.values())


def test_hit_classes_with_and_without_the_slots():
    """The builders write SearchHit's three slots in place; a hit class
    without them (or with some of them) gets the same values through
    ``object.__setattr__``: into its slots or its ``__dict__``."""
    t = _table([f"a{i}" for i in range(6)], np.random.default_rng(5))
    args = [
        t.ids, t.art, t.kind, t.surface, t.kinds, t._texts.blob, t._texts.offsets,
        t._metadata.blob, t._metadata.offsets, t._filter_fields.blob, t._filter_fields.offsets,
        t._artifact_ids.blob, t._artifact_ids.offsets,
    ]  # fmt: skip

    class Plain:  # attributes in __dict__ only
        pass

    class Half:  # two of the three in slots, the Deferred in __dict__
        __slots__ = ("__dict__", "artifact_id", "score")

    class ReadOnly:  # a property where a slot would be: not written in place
        __slots__ = ("__dict__", "_rv_deferred", "artifact_id")
        score = property(lambda self: self.__dict__["score"])

    ids = t.ids[:5].copy()
    sc = np.float32([0.9, 0.7, 0.5, 0.3, 0.1])
    want = _hot.dense_hits(t._hit_table(), ids, sc, None, 5, False, None, "flat", "dense")
    assert [type(h) for h in want] == [SearchHit] * 5 and vars(want[0]) == {}
    for cls in (Plain, Half):
        ht = _hot.HitTable(*args, cls, json.loads)
        got = _hot.dense_hits(ht, ids, sc, None, 5, False, None, "flat", "dense")
        assert [type(h) for h in got] == [cls] * 5
        assert [(h.artifact_id, h.score) for h in got] == [(h.artifact_id, h.score) for h in want]
        assert all(type(vars(h)[DEFERRED]) is _hot.Deferred for h in got)
        assert all(vars(h)[DEFERRED].text() == w.text for h, w in zip(got, want))
    ht = _hot.HitTable(*args, ReadOnly, json.loads)
    with pytest.raises(AttributeError):  # (set through the property, which has no setter)
        _hot.dense_hits(ht, ids, sc, None, 5, False, None, "flat", "dense")


_F64 = st.floats(allow_nan=False, allow_infinity=False, width=64)


_F32 = st.floats(allow_nan=False, allow_infinity=False, width=32)
# values at the edges of each type: zeros, subnormals, the largest finite
_EDGES = {
    np.float32: st.sampled_from([0.0, -0.0, 1e-45, 1e-40, 1e-20, 3.4e38]),
    np.float64: st.sampled_from([0.0, -0.0, 5e-324, 1e-200, 1e200, 1.7e308]),
}


def _unit_reference(values, dtype):
    """``unit_query``'s definition in Python: the components as float64,
    the sum of their squares in index order (Python floats: one IEEE
    double rounding per operation), its square root, then each component
    divided in float64 and rounded once to float32 (no division when the
    norm is 0; a sum that overflows makes the norm inf)."""
    xs = np.asarray(values, dtype=dtype).astype(np.float64)
    s = 0.0
    for v in xs.tolist():
        s += v * v
    n = math.sqrt(s)
    with np.errstate(over="ignore"):
        return (xs / n if n > 0 else xs).astype(np.float32)


@settings(max_examples=400, deadline=None)
@given(
    st.data(),
    st.sampled_from([np.float32, np.float64]),
    st.sampled_from([1, 2, 3]),
)
def test_unit_query_is_its_definition_bit_for_bit(data, dtype, step):
    width = _F32 if dtype is np.float32 else _F64
    values = data.draw(st.lists(st.one_of(width, _EDGES[dtype]), min_size=1, max_size=400))
    base = np.array(values * step, dtype=dtype)
    x = base[::step]  # strided too
    before = base.tobytes()
    want = _unit_reference(x, dtype)
    got = _hot.unit_query(x)
    assert got.dtype == np.float32 and got.flags.c_contiguous and got.shape == x.shape
    assert got.view(np.uint32).tolist() == want.view(np.uint32).tolist()
    assert base.tobytes() == before  # the input is not changed
    if dtype is np.float32:  # the same values as float64: the same bits
        assert _hot.unit_query(x.astype(np.float64)).tobytes() == got.tobytes()


def test_unit_query_rounds_every_operation():
    # a vector whose first component comes out one float apart when the
    # third square is added by a fused multiply-add (one rounding fewer):
    # the rule's result, as _unit_reference computes it, not the fused one
    x = np.array(
        [
            float.fromhex(h)
            for h in ("-0x1.b582164065512p-1", "0x1.da375b2fa0b84p-2", "-0x1.b8048c6b71b38p-3")
        ]
    )
    got = _hot.unit_query(x)
    assert float(got[0]) == float.fromhex("-0x1.b7886p-1") != float.fromhex("-0x1.b7885ep-1")
    assert got.view(np.uint32).tolist() == _unit_reference(x, np.float64).view(np.uint32).tolist()


def test_unit_query_zero_overflow_and_refusals():
    assert _hot.unit_query(np.zeros(3, dtype=np.float32)).tolist() == [0.0, 0.0, 0.0]
    # squares overflowing double: the norm is inf and the components zeros,
    # as NumPy's x / np.linalg.norm(x)
    assert _hot.unit_query(np.array([1e200, -1e200])).tolist() == [0.0, -0.0]
    assert _hot.unit_query(np.array([3.0, 4.0])).tolist() == [
        0.6000000238418579,
        0.800000011920929,
    ]
    for bad in (np.array([1.0, np.nan]), np.array([np.inf, 0.0], dtype=np.float32)):
        with pytest.raises(ValueError, match="NaN or infinite"):
            _hot.unit_query(bad)
    for bad in (
        np.ones(3, dtype=np.float16),
        np.ones(3, dtype=np.int64),
        np.ones((1, 3)),
        np.ones(3, dtype=">f8" if np.little_endian else "<f8"),
    ):
        with pytest.raises(ValueError, match="1-D float32 or float64"):
            _hot.unit_query(bad)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from([0.0, -0.0, 1e-45, -1.0, math.nan, math.inf]), max_size=12),
    st.sampled_from([np.float32, np.float64]),
    st.sampled_from([1, 2]),
)
def test_any_nonzero_is_count_nonzero(values, dtype, step):
    x = np.array(values * step, dtype=dtype)[::step]
    assert _hot.any_nonzero(x) is bool(np.count_nonzero(x))


def test_any_nonzero_refuses_other_arrays():
    for bad in (
        np.ones(3, dtype=np.int32),
        np.ones((1, 3), dtype=np.float32),
        np.ones(3, ">f4" if np.little_endian else "<f4"),
    ):
        with pytest.raises(ValueError, match="1-D float32 or float64"):
            _hot.any_nonzero(bad)


def test_query_vector_is_unit_query():
    rng = np.random.default_rng(0)
    swapped = rng.standard_normal(9).astype(">f4" if np.little_endian else "<f4")
    for v in (
        rng.standard_normal(384).astype(np.float32),
        rng.standard_normal((1, 17)),
        [3, 4],
        np.arange(5, dtype=np.int32),
        swapped,
    ):
        flat = np.asarray(v).reshape(-1)
        want = _unit_reference(flat, np.float64)
        assert rank.query_vector(v).view(np.uint32).tolist() == want.view(np.uint32).tolist()
    assert not rank.query_vector(np.zeros(4)).any()
    for bad in ([np.nan, 1.0], np.array([1.0, np.inf], dtype=np.float32), np.ones((2, 2)), []):
        with pytest.raises(ValueError, match="query_vector must be one finite vector"):
            rank.query_vector(bad)


def test_search_through_the_compiled_builder():
    """A built corpus with several surfaces, metadata and filter fields:
    search's hits are the reference builder's."""
    from rowvoi.corpus import Chunked

    docs = {
        f"d{i}": {"text": f"Wing note {i}. Flügel {i % 3}. Heat {i % 2}.", "year": 1950 + i}
        for i in range(12)
    }
    corpus = build(
        from_mapping(
            docs,
            embedder="hashing:16",
            strategy=Chunked(chunk_size=3, overlap=0, text_key="text"),
            metadata_of=lambda aid, raw: {"year": raw["year"]},
        ),
        store=CorpusStore.memory(),
    )
    for per_artifact in (True, False):
        hits = search(corpus, "wing heat", k=5, per_artifact=per_artifact)
        assert hits and all(h.metadata["year"] >= 1950 for h in hits)
        assert any("chunk_index" in h.metadata for h in hits)
        cur = corpus._generations.loaded
        q = rank.query_vector(corpus.embedder.embed(["wing heat"])[0])
        ids, sc = cur.dense._search_vector(q, 50 if per_artifact else 5, True, 1)
        p = rank.Params(
            5, "dense", "rrf", 60, 0.5, 8.0, None, per_artifact, None, 50, "auto", False
        )
        assert hits == rank._dense_hits_reference(corpus.name, cur.records, ids, sc, "flat", p)


def test_dense_search_hands_back_what_it_does_not_decide():
    """rowvoi.index._hot.dense_search: hits equal to dense_hits of the index's own
    candidates; None for vectors the general path must judge and for equal
    scores; [] for a zero vector; bad arguments refused."""
    from rowvoi.index.flat import FlatIndex

    docs = {f"d{i}": f"wing {i} lift {i % 4}" for i in range(30)}
    corpus = build(from_mapping(docs, embedder="hashing:16"), store=CorpusStore.memory())
    search(corpus, "wing", mode="dense")
    cur = corpus._generations.loaded
    ht, cap, threads, one = cur.fast
    assert isinstance(cur.dense, FlatIndex) and one and threads == 1

    def run(x, k=5, fetch_k=50, kplus1=False):
        return _hot.dense_search(ht, cap, x, k, fetch_k, False, kplus1, 1, None, "flat", "dense")

    q = np.random.default_rng(2).standard_normal(16)
    ids, sc = cur.dense._search_vector(rank.query_vector(q), 50, True, 1)
    want = _hot.dense_hits(ht, ids, sc, None, 5, False, None, "flat", "dense")
    assert want is not None
    assert run(q) == want == run(np.repeat(q, 2)[::2]) == run(q, kplus1=True)
    for bad in (
        np.ones(15),  # another dimension
        np.ones((1, 16)),  # 2-D
        np.arange(16),  # integers
        np.ones(16, dtype=np.float64).astype(">f8" if np.little_endian else "<f8"),
        np.array([np.nan] + [1.0] * 15),
        np.full(16, np.inf, dtype=np.float32),
    ):
        assert run(bad) is None
    assert run(np.zeros(16)) == [] and run(np.full(16, 1e-200)) == []
    # two records with one vector: equal scores -> None
    twins = build(
        from_mapping({"a": "heat flow", "b": "heat flow", "c": "shock"}, embedder="hashing:16"),
        store=CorpusStore.memory(),
    )
    search(twins, "heat", mode="dense")
    tw = twins._generations.loaded.fast
    v = twins.embedder.embed(["heat flow"])[0]
    assert _hot.dense_search(tw[0], tw[1], v, 1, 2, False, True, 1, None, "flat", "dense") is None
    with pytest.raises(ValueError, match="need 1 <= k <= fetch_k"):
        run(q, k=0)
    with pytest.raises(ValueError, match="need 1 <= k <= fetch_k"):
        run(q, k=6, fetch_k=5)
    with pytest.raises(ValueError):
        _hot.dense_search(ht, ht, q, 5, 50, False, False, 1, None, "flat", "dense")


def test_blend_refuses_bad_arguments():
    """``_hot.blend`` takes int64 ids and ranks of one length and float64
    scores, each 1-D and C-contiguous; a query vector of the flat index's
    type and dimension; capsules of the right kind; the engine refuses
    ranks past their lists and an alpha outside [0, 1]."""
    from rowvoi.index.flat import FlatIndex
    from rowvoi.index.lexical import BM25Index

    ids = np.array([0, 1, 2], dtype=np.int64)
    ra = np.array([1, 0, 2], dtype=np.int64)
    rb = np.array([0, 1, 0], dtype=np.int64)
    sa, sb = np.array([0.5, 0.25]), np.array([3.0])
    got = _hot.blend(ids, ra, rb, sa, sb, 0.5, 1.0)
    want = 0.5 * np.array([0.5, 0.0, 0.25]) + 0.5 * np.array([0.0, 3.0, 0.0]) / (
        np.array([0.0, 3.0, 0.0]) + 1.0
    )
    assert got.tobytes() == want.tobytes()
    for bad in (
        (ids.astype(np.int32), ra, rb, sa, sb),
        (ids, ra[:2], rb, sa, sb),
        (ids, ra, rb, sa.astype(np.float32), sb),
        (ids, ra, rb, sa, np.array([[3.0]])),
    ):
        with pytest.raises(ValueError, match="1-D"):
            _hot.blend(*bad, 0.5, 1.0)
    with pytest.raises(InvalidArgumentError, match=r"rank_a\[2\] = 2"):
        _hot.blend(ids, ra, rb, sa[:1].copy(), sb, 0.5, 1.0)
    with pytest.raises(InvalidArgumentError, match="alpha = 2"):
        _hot.blend(ids, ra, rb, sa, sb, 2.0, 1.0)
    flat = FlatIndex(2, metric="ip")
    flat.add([[1, 0], [0, 1], [1, 1]])
    flat._freeze()
    cap = flat._h.capsule()
    q = np.array([1.0, 2.0], dtype=np.float32)
    got = _hot.blend(ids, ra, rb, sa, sb, 0.5, 1.0, cap, q)
    assert got[1] == 0.5 * 2.0 + 0.5 * 3.0 / 4.0  # (record 1's cosine asked: 2)
    for badq in (None, q.astype(np.float64), np.ones(3, dtype=np.float32)):
        with pytest.raises(ValueError, match="query_vector"):
            _hot.blend(ids, ra, rb, sa, sb, 0.5, 1.0, cap, badq)
    with pytest.raises(ValueError):
        _hot.blend(ids, ra, rb, sa, sb, 0.5, 1.0, object(), q)
    bm = BM25Index()
    bm.add(["cats purr", "dogs bark", "cats and dogs"])
    with pytest.raises(TypeError):
        _hot.blend(ids, ra, rb, sa, sb, 0.5, 1.0, bm25=bm._core.capsule(), query=3)
    with pytest.raises(RangeError):
        _hot.blend(
            np.array([7], dtype=np.int64),
            np.zeros(1, dtype=np.int64),
            np.zeros(1, dtype=np.int64),
            sa,
            sb,
            0.5,
            1.0,
            cap,
            q,
        )
