"""Rank one opened generation: dense, lexical or hybrid, with hard filters.

A search (:func:`rowvoi.corpus.search`) opens the committed generation of
a corpus once (:mod:`rowvoi.corpus.storage.generation`: indexes with
tombstones and delta applied, record table, filter schema) and then only
searches it, here: :func:`rank` ranks its records for a query in one of
:data:`MODES`:

``"dense"`` (default)
    cosine similarity of the query's embedding: exact flat index (its int8
    copy screens every vector with proven error bounds, float32 scores
    decide: the results of a float32 scan, bit for bit), or the HNSW graph
    when the corpus has one and ``index`` allows it;
``"lexical"``
    Okapi BM25 (Lucene variant, k1 = 1.2, b = 0.75) over the analysed text;
    never loads the embedding model;
``"hybrid"``
    both, fused by one of :data:`FUSIONS`: ``"rrf"`` (reciprocal rank
    fusion, ``sum 1 / (rrf_k + rank)`` over the two candidate lists) or
    ``"blend"`` (``alpha * cosine + (1 - alpha) * bm25 / (bm25 +
    bm25_sat_k)``, which keeps the magnitude of the scores: better for
    abstention floors). Blend scores every candidate of either list on both
    sides exactly (a record BM25 did not return has BM25 score 0; a
    record the vector search did not return gets its exact cosine), so a
    fused score never mixes scales -- also when one side finds nothing: the
    other side's hits are then scored on the fused scale all the same.

Floors and RRF
--------------
An RRF score is ``sum 1 / (rrf_k + rank)``: it depends on ranks only, so
a query about cooking and a query about wing flutter both give their top
hit about ``2 / (rrf_k + 1)``, and no absolute floor can tell them apart.
Each hit of a hybrid RRF search therefore also carries its **evidence**,
``explain["evidence"]``: the blend score of that hit (the formula above,
with the search's ``alpha`` and ``bm25_sat_k``, both sides scored
exactly), an absolute quantity. Floors -- ``min_score`` of
:func:`rowvoi.corpus.select`, :func:`rowvoi.corpus.discover` and the
calibrated ones of :mod:`rowvoi.corpus.retrieval.calibration` -- compare the
evidence of an RRF hit and the score of any other hit
(:func:`rowvoi.corpus.retrieval.selection.floor_score`); the RRF order is kept.

Filters and surfaces
--------------------
``filter`` is a document of the :mod:`rowvoi.query` filter language over
the corpus's filter fields (``{"year": {"$gte": 1960}, "venue":
"JAS"}``), validated against their declared types and compiled by the
query layer to parameterised SQL over the typed ``filter_values`` table.
``surfaces`` restricts to surface kinds. Both become one
:class:`~rowvoi.index.idset.IdSet` that the kernels apply while they rank, so a
filtered top-k is exact.

Candidates and collapse
-----------------------
Each index returns ``fetch_k`` candidates (default ``max(5 k, 50)`` when
collapsing per artifact or weighting surfaces, else ``k``); surface
weights multiply each candidate's first-stage score; ``per_artifact=True``
keeps the best surface per artifact; then the top ``k``. When the
collapse leaves fewer than ``k`` artifacts although a candidate list was
cut at ``fetch_k`` (an artifact with many surfaces -- a long chunked
document -- can fill the whole fetch), the search runs again with
:data:`FETCH_GROWTH` times as many candidates (an HNSW search's ``ef``
grows with them), until ``k`` artifacts are found or every index has
returned all the records it can (never more than the corpus, or the
filter, holds): a search returns ``k`` artifacts whenever ``k`` qualify,
whatever the mode, fusion, index and filter. The first fetch decides
most searches; the result is that of the last fetch (a hybrid RRF
search's scores are those of its candidate lists). Equal scores are
ordered by artifact id, then surface index: deterministic, and independent
of the build history (an incremental build ranks as a fresh build of the
same documents). Only at an index's own ``fetch_k`` cut do exact ties go
to the lower record id. Equal RRF scores are frequent (ranks (1, 2) and
(2, 1) sum to the same score, and so do two records each returned by one
side only, at the same rank); ranks cannot order them, so they are ordered
by their evidence (see "Floors and RRF"), highest first, before artifact id.

Every hit carries ``explain``: which indexes returned it
(``answered_by``), its rank and raw score on each side, the fused score
and the surface weight; ``explain=True`` adds each query term's BM25
contribution.

Examples
--------
>>> from rowvoi.corpus import CorpusStore, build, from_mapping, search
>>> docs = {"a": "Lift and drag of a thin wing", "b": "Heat transfer in pipes",
...         "c": "Wing flutter at high speed"}
>>> corpus = build(from_mapping(docs, embedder="hashing"), store=CorpusStore.memory())
>>> [h.artifact_id for h in search(corpus, "wing lift", mode="lexical", k=2)]
['a', 'c']
>>> hit = search(corpus, "wing", mode="hybrid", k=1)[0]
>>> hit.explain["answered_by"], hit.explain["fusion"]
(['flat', 'bm25'], 'rrf')
"""

from __future__ import annotations

import json
import math
import operator
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from rowvoi import _validate as _v
from rowvoi._validate import integer as _check_int
from rowvoi.corpus.base import SearchHit, SearchHits, new_hit
from rowvoi.corpus.storage.generation import Generation, Opened
from rowvoi.corpus.storage.records import RecordTable
from rowvoi.index._hot import (
    any_nonzero as _any_nonzero,
    blend as _blend_hot,
    dense_hits as _dense_hits_c,
    dense_search as _dense_search_c,
    fused_hits as _fused_hits_c,
    lexical_search as _lexical_search_c,
    order as _order_c,
    rrf as _rrf_c,
    union as _union_c,
    unit_query as _unit_query,
)
from rowvoi.index.flat import FlatIndex
from rowvoi.index.hnsw import HNSWIndex

__all__ = [
    "MODES",
    "FUSIONS",
    "INDEXES",
    "DFLT_RRF_K",
    "DFLT_BLEND_ALPHA",
    "DFLT_BM25_SAT_K",
    "MAX_FETCH_K",
    "FETCH_GROWTH",
    "Params",
    "params",
    "query_vector",
    "fast_dense",
    "rank",
]

#: Ranking modes of a search.
MODES = ("dense", "lexical", "hybrid")
#: Hybrid fusion methods.
FUSIONS = ("rrf", "blend")
#: Vector index choices.
INDEXES = ("auto", "flat", "hnsw")
#: The RRF rank constant (``1 / (rrf_k + rank)``).
DFLT_RRF_K = 60
#: Dense weight of the blend fusion.
DFLT_BLEND_ALPHA = 0.5
#: BM25 saturation of the blend fusion: ``bm25 / (bm25 + k)`` lies in [0, 1)
#: without per-query normalisation, so absolute magnitudes survive.
DFLT_BM25_SAT_K = 8.0
#: Largest ``fetch_k`` accepted.
MAX_FETCH_K = 100_000
#: Largest ``rrf_k`` accepted: ``rrf_k + rank`` stays exact in int64 (the
#: engine's ``rv_records_rrf``).
MAX_RRF_K = 2**62


def _check_surfaces(surfaces: Any) -> list[str] | None:
    if surfaces is None:
        return None
    if isinstance(surfaces, str):
        surfaces = [surfaces]
    try:
        kinds = list(surfaces)
    except TypeError:
        raise TypeError("surfaces must be a surface kind or an iterable of kinds") from None
    for k in kinds:
        if not isinstance(k, str):
            raise TypeError(f"surfaces holds {k!r}, not a kind name")
    return sorted(set(kinds))


def _check_weights(weights: Any) -> dict[str, float] | None:
    if weights is None:
        return None
    if not isinstance(weights, Mapping):
        raise TypeError("surface_weights must be a mapping {kind: weight}")
    out = {}
    for kind, w in weights.items():
        if not isinstance(kind, str):
            raise TypeError(f"surface_weights key {kind!r} is not a kind name")
        out[kind] = _v.real(f"surface_weights[{kind!r}]", w, low=0.0, finite=True)
    return out


# ----------------------------------------------------------------- search


class Params(NamedTuple):
    """A search's checked arguments (see :func:`params`)."""

    k: int
    mode: str
    fusion: str
    rrf_k: int
    alpha: float
    sat_k: float
    kinds: list[str] | None
    per_artifact: bool
    weights: dict[str, float] | None
    fetch_k: int
    vector_index: str  # ("index" would shadow tuple.index)
    explain: bool


def params(
    k: Any,
    mode: Any,
    fusion: Any,
    rrf_k: Any,
    alpha: Any,
    bm25_sat_k: Any,
    surfaces: Any,
    per_artifact: Any,
    surface_weights: Any,
    fetch_k: Any,
    index: Any,
    explain: Any,
) -> Params:
    """A search's arguments checked (see :func:`rowvoi.corpus.search`), in
    that order: the first bad one raises ``ValueError`` or ``TypeError``.

    >>> p = params(3, "hybrid", "rrf", 60, 0.5, 8.0, "title", True, None, None, "auto", False)
    >>> p.kinds, p.fetch_k
    (['title'], 50)
    >>> params(0, "dense", "rrf", 60, 0.5, 8.0, None, True, None, None, "auto", False)
    Traceback (most recent call last):
    ...
    ValueError: k=0: must be in 1 .. 100000
    """
    # each check's common valid case first (a plain int, float or str in
    # range), the full checks (conversions, messages) otherwise
    if not (type(k) is int and 1 <= k <= MAX_FETCH_K):
        k = _check_int("k", k, 1, MAX_FETCH_K)
    if not (type(mode) is str and mode in MODES):
        mode = _v.choice("mode", mode, MODES)
    if not (type(fusion) is str and fusion in FUSIONS):
        fusion = _v.choice("fusion", fusion, FUSIONS)
    if not (type(rrf_k) is int and 1 <= rrf_k <= MAX_RRF_K):
        rrf_k = _check_int("rrf_k", rrf_k, 1, MAX_RRF_K)
    if not (type(alpha) is float and 0.0 <= alpha <= 1.0):
        alpha = _v.real("alpha", alpha, low=0.0, high=1.0)
    if not (type(bm25_sat_k) is float and 0.0 < bm25_sat_k < math.inf):
        bm25_sat_k = _v.real("bm25_sat_k", bm25_sat_k, low=0.0, low_open=True, finite=True)
    if not (type(index) is str and index in INDEXES):
        index = _v.choice("index", index, INDEXES)
    kinds = None if surfaces is None else _check_surfaces(surfaces)
    weights = None if surface_weights is None else _check_weights(surface_weights)
    if fetch_k is None:
        fetch_k = max(5 * k, 50) if (per_artifact or weights) else k
    else:
        fetch_k = _check_int("fetch_k", fetch_k, k, MAX_FETCH_K)
    return Params(
        k,
        mode,
        fusion,
        rrf_k,
        alpha,
        bm25_sat_k,
        kinds,
        bool(per_artifact),
        weights,
        fetch_k,
        index,
        bool(explain),
    )


def fast_dense(
    opened: Opened, vector: np.ndarray, p: Params, name: str | None
) -> SearchHits | None:
    """The hot path: an unfiltered dense search of a vector on a flat index
    of the generation ``opened``, in one compiled call
    (:func:`rowvoi.index._hot.dense_search`: the query's unit form, the
    exact scan, the hits). ``None`` when the generation offers no such
    path, or that call leaves the result undecided (equal scores, a bad
    vector): :func:`rank` decides then."""
    loaded = opened.gen
    fast = loaded.fast
    if fast is None:
        return None
    ht, flat, threads, one = fast
    k = p.k
    collapse = p.per_artifact and not one
    kplus1 = k < p.fetch_k and not collapse
    size = loaded.dense_size
    f = p.fetch_k
    while True:
        hits = _dense_search_c(
            ht, flat, vector, k, f, collapse, kplus1, threads, name, "flat", "dense"
        )
        # ([]: an all-zero query; fewer than k after the collapse of all f
        # candidates asked for: fetch more, as rank does)
        if hits is None or not (collapse and 0 < len(hits) < k and f < size):
            break
        f = _grown(f, size)
    if hits is None:
        return None
    return SearchHits(hits) if hits else SearchHits.empty(_ZERO_VECTOR)


def query_vector(v: Any) -> np.ndarray:
    """A query vector as float32 of unit length (an all-zero one stays
    zero): :func:`rowvoi.index._hot.unit_query` (the norm summed in float64 in
    index order; each component divided in float64, rounded once).
    ValueError for anything but one finite vector."""
    arr = v
    if type(arr) is not np.ndarray or arr.dtype not in _QV_DTYPES:
        arr = np.asarray(v, dtype=np.float64)
    if arr.ndim == 2 and arr.shape[0] == 1:
        arr = arr[0]
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError("query_vector must be one finite vector, shape (dim,)")
    try:
        return _unit_query(arr)
    except ValueError:
        raise ValueError("query_vector must be one finite vector, shape (dim,)") from None


#: dtypes :func:`query_vector` hands to the compiled normaliser as they are
_QV_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


#: Why a search of an all-zero query vector finds nothing.
_ZERO_VECTOR = (
    "the query's embedding is the zero vector (nothing in the query the "
    "embedder represents), so no cosine can rank the records"
)


def _why_empty(
    loaded: Generation, query: str, qvec: np.ndarray | None, allowed: Any, p: Params
) -> str:
    """Why a search that ran (some record allowed) found nothing."""
    why = []
    if p.mode != "lexical":
        if qvec is not None and not _any_nonzero(qvec):
            why.append(_ZERO_VECTOR)
        else:
            why.append("the vector index returned no record")
    if p.mode != "dense":
        terms = [] if loaded.lexical is None else loaded.lexical.analyzer.tokenize(query)
        if not terms:
            why.append(
                "the query has no searchable terms (the analyzer drops punctuation and stopwords)"
            )
        else:
            among = "" if allowed is None else " (of those the filter and surface kinds allow)"
            shown = ", ".join(map(repr, list(dict.fromkeys(terms))[:8]))
            why.append(f"no record{among} contains a query term (analysed: {shown})")
    return "; and ".join(why)


@dataclass
class _Ranked:
    """One candidate list, best first: record ids, float64 scores and
    positions in the record table; for a hybrid search's fused list, each
    record's 1-based rank in the dense and in the lexical list (int64, 0
    where that list lacks it), carried through every reordering."""

    ids: np.ndarray
    scores: np.ndarray
    pos: np.ndarray
    d_rank: np.ndarray | None = None
    l_rank: np.ndarray | None = None

    def take(self, at: Any, scores: np.ndarray | None = None) -> _Ranked:
        """The candidates ``at`` (indexes, a permutation or a slice), in
        that order, with ``scores`` instead of their own when given
        (already taken)."""
        return _Ranked(
            self.ids[at],
            self.scores[at] if scores is None else scores,
            self.pos[at],
            None if self.d_rank is None else self.d_rank[at],
            None if self.l_rank is None else self.l_rank[at],
        )

    def ranks_of(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Of each record id of ``ids``: its 1-based rank in this list and
        its score here (int64 and float64 arrays), or ``0`` and ``0.0``
        when the list lacks it (one sorted lookup for them all, whatever
        the list's length)."""
        n = len(self.ids)
        if not n or not len(ids):
            return np.zeros(len(ids), dtype=np.int64), np.zeros(len(ids), dtype=np.float64)
        by_id = np.argsort(self.ids, kind="stable")
        srt = self.ids[by_id]
        at = np.minimum(np.searchsorted(srt, ids), n - 1)
        found = srt[at] == ids
        where = by_id[at]
        rank = np.where(found, where + 1, 0).astype(np.int64, copy=False)
        score = np.where(found, self.scores[where], 0.0).astype(np.float64, copy=False)
        return rank, score


_NO_IDS = np.zeros(0, dtype=np.int64)
_NO_SCORES = np.zeros(0, dtype=np.float64)


def _descending(scores: np.ndarray) -> bool:
    """Are ``scores`` strictly descending (no two equal, no NaN), so that
    their records are in result order already, whatever the ties' keys?"""
    n = len(scores)
    return n < 2 or np.count_nonzero(scores[1:] < scores[:-1]) == n - 1


def _order(
    table: RecordTable, pos: np.ndarray, scores: np.ndarray, tie: np.ndarray | None = None
) -> np.ndarray:
    """The permutation that ranks records (positions ``pos`` in ``table``)
    by score, descending, then ``tie`` descending (when given: a second key
    for equal scores, one value per record), then artifact id, then surface
    index -- the order of search results, independent of record ids (a
    stable total order)."""
    if _descending(scores):
        return np.arange(len(scores))
    return _sorted_order(table, pos, scores, tie)


def _sorted_order(
    table: RecordTable, pos: np.ndarray, scores: np.ndarray, tie: np.ndarray | None = None
) -> np.ndarray:
    """:func:`_order`'s permutation, sorted whether or not ``scores`` are
    already descending."""
    # np.lexsort((table.surface[pos], table.art[pos], [-tie,] -scores)),
    # element for element, in one comparison sort
    return _order_c(
        table.art,
        table.surface,
        np.ascontiguousarray(pos, dtype=np.int64),
        np.ascontiguousarray(scores, dtype=np.float64),
        None if tie is None else np.ascontiguousarray(tie, dtype=np.float64),
    )


def _ranked(table: RecordTable, ids: np.ndarray, scores: np.ndarray) -> _Ranked:
    """Candidates in result order: score, then artifact id, then surface
    index -- an order that does not depend on the build history (record ids
    do)."""
    if not len(ids):
        return _Ranked(_NO_IDS, _NO_SCORES, _NO_IDS)
    ids = np.asarray(ids, dtype=np.int64)
    sc = np.asarray(scores, dtype=np.float64)
    pos = table.positions(ids)
    if _descending(sc):
        return _Ranked(ids, sc, pos)  # (no permutation to copy through)
    o = _sorted_order(table, pos, sc)
    return _Ranked(ids[o], sc[o], pos[o])


def _side_scores(side: _Ranked, rank: np.ndarray) -> np.ndarray:
    """The scores (float64) in ``side`` of the records ranked ``rank``
    there (1-based; 0.0 for rank 0: not in it)."""
    out = np.zeros(len(rank), dtype=np.float64)
    there = rank > 0
    out[there] = side.scores[rank[there] - 1]
    return out


#: Factor by which the candidate fetch grows when a per-artifact collapse
#: left fewer than ``k`` artifacts (see "Candidates and collapse").
FETCH_GROWTH = 4


def _grown(fetch_k: int, bound: int) -> int:
    """The next fetch after ``fetch_k`` (``< bound``) fell short: times
    :data:`FETCH_GROWTH`, never past ``bound`` (the records a search could
    return), where every index is exhausted."""
    return min(bound, fetch_k * FETCH_GROWTH)


def rank(
    opened: Opened,
    query: str,
    qvec: np.ndarray | None,
    p: Params,
    name: str | None,
) -> SearchHits:
    """The hits of a search of the generation ``opened`` for it
    (:meth:`~rowvoi.corpus.storage.generation.Generations.read`): its
    indexes and record table, the records its filter allows, the query's
    text and, for a dense or hybrid search of a corpus with vectors, its
    unit embedding ``qvec``; hits carry ``name`` as their source. Nothing
    else is read (the hits' rows, when the table holds no texts, come from
    ``opened`` too).

    When the per-artifact collapse leaves fewer than ``k`` artifacts while
    an index's candidates were cut at ``fetch_k`` (more records could
    follow), the search runs again with :func:`_grown` candidates, until
    ``k`` artifacts are found or no list is cut (every index exhausted)."""
    if opened.none_allowed is not None:
        return SearchHits.empty(opened.none_allowed)
    loaded, allowed = opened.gen, opened.allowed
    table = loaded.records
    assert table is not None
    collapse = p.per_artifact and not table.one_per_artifact
    while True:
        hits, cut = _fetch(opened, query, qvec, p, name)
        if collapse and cut and len(hits) < p.k:
            # (the records a search could return: where every index is exhausted)
            bound = len(table) if allowed is None else min(len(table), len(allowed))
            if p.fetch_k < bound:
                p = p._replace(fetch_k=_grown(p.fetch_k, bound))
                continue
        if not hits:
            return SearchHits.empty(_why_empty(loaded, query, qvec, allowed, p))
        return SearchHits(hits)


def _fetch(
    opened: Opened,
    query: str,
    qvec: np.ndarray | None,
    p: Params,
    name: str | None,
) -> tuple[list[SearchHit], bool]:
    """One pass of :func:`rank` with ``p.fetch_k`` candidates per
    index (``qvec`` already embedded): the hits, and whether a candidate
    list was cut at ``fetch_k`` (an index returned all it was asked for, or
    the fused list was longer), so that more candidates could follow."""
    loaded, allowed = opened.gen, opened.allowed
    table = loaded.records
    assert table is not None
    if (
        p.mode == "lexical"
        and not p.weights
        and not p.explain
        and table.has_text
        and loaded.lexical is not None
    ):
        return _lexical_hits(
            loaded.lexical, loaded.lexical_capsule, allowed, query, name, table, p
        )
    want_dense = p.mode in ("dense", "hybrid")
    want_lex = p.mode in ("lexical", "hybrid")
    d_ids: np.ndarray = _NO_IDS
    d_sc: np.ndarray = _NO_IDS
    answered_dense = "flat"
    if want_dense and loaded.dense is not None and qvec is not None and _any_nonzero(qvec):
        index = loaded.dense
        if isinstance(index, HNSWIndex) and p.vector_index != "flat":
            # approximate; candidates re-scored exactly (float32 cosines)
            answered_dense = "hnsw"
            d_ids, d_sc = index.search(qvec, p.fetch_k, filter=allowed, exact_rescore=True)
        else:
            # exact, whatever the size: the screen reads the same int8
            # copy as an approximate int8 scan would, and in float32 only
            # the rows its bounds cannot rule out (the approximate scan
            # re-scores 8 * fetch_k); faster at every size and on every
            # data set measured (bench/results/flat_int8_paths.md)
            index = loaded.flat  # (an HNSW graph's exact twin)
            threads = loaded.scan_threads
            if (
                allowed is None
                and qvec.dtype == np.float32
                and qvec.shape == (index.dim,)
                and qvec.flags.c_contiguous
            ):
                # (a checked query vector: search()'s argument checks skipped)
                k = p.k
                if (
                    p.mode == "dense"
                    and k < p.fetch_k
                    and not p.weights
                    and (table.one_per_artifact or not p.per_artifact)
                ):
                    # no collapse can drop a candidate, so the hits are
                    # the best k of the fetch_k candidates: the best k + 1
                    # tell them unless the k-th and (k + 1)-th tie (their
                    # order then depends on candidates further down)
                    d_ids, d_sc = index._search_vector(qvec, k + 1, True, threads)
                    if len(d_ids) == k + 1 and d_sc.item(k - 1) == d_sc.item(k):
                        d_ids, d_sc = index._search_vector(qvec, p.fetch_k, True, threads)
                else:
                    d_ids, d_sc = index._search_vector(qvec, p.fetch_k, True, threads)
            else:
                d_ids, d_sc = index.search(
                    qvec, p.fetch_k, filter=allowed, exact=True, n_threads=threads
                )
    cut = len(d_ids) >= p.fetch_k
    if p.mode == "dense" and not p.weights and table.has_text:
        return _dense_hits(name, table, d_ids, d_sc, answered_dense, p), cut
    dense = _ranked(table, d_ids, d_sc)
    if want_lex:
        res = loaded.lexical.search(query, p.fetch_k, filter=allowed)
        lex = _ranked(table, res.ids, res.scores)
        cut = cut or len(lex.ids) >= p.fetch_k
    else:
        lex = _ranked(table, _NO_IDS, _NO_IDS)
    # a hybrid search without weights or a collapse reads only the first k
    # candidates: only those that can be among them are put in order
    head = (
        p.k
        if p.mode == "hybrid"
        and not p.weights
        and not (p.per_artifact and not table.one_per_artifact)
        else None
    )
    # the most a record missing from a list can score there: that list's
    # last score when it is an exact search's, cut at fetch_k (more could
    # follow); 0 for BM25 when nothing was cut (every match is listed); not
    # known otherwise (an approximate list)
    bounds = (
        float(dense.scores[-1])
        if answered_dense == "flat" and len(dense.ids) >= p.fetch_k
        else math.inf,
        float(lex.scores[-1]) if len(lex.ids) >= p.fetch_k else 0.0,
    )
    cands, n_cands = _fuse(loaded, table, query, qvec, dense, lex, p, head, bounds)
    if not len(cands.ids):
        return [], False
    cut = cut or n_cands > p.fetch_k
    if p.weights:
        w = np.array([p.weights.get(kind, 1.0) for kind in table.kinds], dtype=np.float64)
        scores = cands.scores * w[table.kind[cands.pos]]
        o = _order(table, cands.pos, scores)
        cands = cands.take(o, scores[o])
    head_ev: np.ndarray | None = None
    if p.mode == "hybrid" and p.fusion == "rrf":
        cands, head_ev = _break_rrf_ties(loaded, table, query, qvec, dense, lex, cands, p)
    if p.per_artifact and not table.one_per_artifact:
        # the best surface of each artifact: its first in result order
        seen: set[int] = set()
        keep: list[int] = []
        for i, a in enumerate(table.art[cands.pos[: p.fetch_k]].tolist()):
            if a not in seen:
                seen.add(a)
                keep.append(i)
                if len(keep) == p.k:
                    break
        hits_at: Any = np.array(keep, dtype=np.intp)
    else:
        hits_at = slice(0, min(p.k, p.fetch_k))
    final = cands.take(hits_at)
    ids, scores, pos = final.ids, final.scores, final.pos
    # each hit's rank and score on each side (0: not returned by that side);
    # RRF scores depend on ranks only, so they cannot be floored: each hit
    # carries its absolute evidence (its blend score) for floors instead,
    # computed with the ties' (_break_rrf_ties: every hit lies in its head)
    evidence = None if head_ev is None else head_ev[hits_at]
    if final.d_rank is not None and final.l_rank is not None:
        d_rank, l_rank = final.d_rank, final.l_rank
        d_scores, l_scores = _side_scores(dense, d_rank), _side_scores(lex, l_rank)
    else:
        d_rank, d_scores = dense.ranks_of(ids)
        l_rank, l_scores = lex.ranks_of(ids)
    fusion = p.fusion if p.mode == "hybrid" else None
    if table.has_text and not (p.explain and loaded.lexical is not None):
        hits = _fused_hits_c(
            table._hit_table(),
            np.ascontiguousarray(pos, dtype=np.int64),
            np.ascontiguousarray(ids, dtype=np.int64),
            np.ascontiguousarray(scores, dtype=np.float64),
            d_rank,
            d_scores,
            l_rank,
            l_scores,
            evidence,
            p.weights,
            name,
            p.mode,
            fusion,
            answered_dense,
        )
        return hits, cut
    return (
        _fused_hits_reference(
            opened,
            query,
            table,
            pos,
            ids,
            scores,
            (d_rank, d_scores, l_rank, l_scores),
            evidence,
            p,
            name,
            answered_dense,
        ),
        cut,
    )


def _fused_hits_reference(
    opened: Opened,
    query: str,
    table: RecordTable,
    pos: np.ndarray,
    ids: np.ndarray,
    scores: np.ndarray,
    sides: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    evidence: np.ndarray | None,
    p: Params,
    name: str | None,
    answered_dense: str,
) -> list[SearchHit]:
    """The hits of :func:`_fetch`'s final candidates (positions ``pos``,
    record ids, scores, in result order), each with its ``explain``: which
    indexes returned it, its rank and raw score on each side (``sides``:
    dense ranks and scores, lexical ranks and scores, 0 where a side did
    not return it), the surface weight, the fused score of a hybrid search,
    the evidence of a hybrid RRF one (``evidence``: one per hit, float64;
    None for other searches) and, with ``p.explain``, each term of
    ``query``'s contribution. Per-hit Python: the specification of the compiled
    builder (:func:`rowvoi.index._hot.fused_hits`, which :func:`_fetch`
    uses when the table holds the texts and no term is explained; the
    tests hold it to this hit for hit), and the path of a table without
    texts (rows read from ``opened``)."""
    loaded = opened.gen
    id_list = ids.tolist()
    if table.has_text:
        fields = table.hits_fields(pos)
    else:
        rows = opened.rows(id_list)
        fields = []
        for cid in id_list:
            row = rows[cid]
            meta = json.loads(row["metadata"])
            meta.update(json.loads(row["filter_fields"]))
            fields.append(
                (row["artifact_id"], row["kind"], row["surface_index"], row["text"], meta)
            )
    hybrid = p.mode == "hybrid"
    mode, fusion, weights = p.mode, p.fusion, p.weights
    terms = p.explain and loaded.lexical is not None
    both, dense_only, lex_only = [answered_dense, "bm25"], [answered_dense], ["bm25"]
    d_rank, d_scores, l_rank, l_scores = (side.tolist() for side in sides)
    ev_list = [None] * len(id_list) if evidence is None else evidence.tolist()
    hits = []
    for cid, score, dr, ds, lr, ls, ev, (artifact_id, kind, surface_index, text, meta) in zip(
        id_list, scores.tolist(), d_rank, d_scores, l_rank, l_scores, ev_list, fields, strict=True
    ):
        # explain: which indexes returned the record, its rank and raw score
        # on each side, the surface weight, the fused score
        why: dict[str, Any] = {
            "mode": mode,
            "answered_by": (both[:] if lr else dense_only[:])
            if dr
            else (lex_only[:] if lr else []),
            "dense": {"rank": dr, "cosine": ds} if dr else None,
            "lexical": {"rank": lr, "bm25": ls} if lr else None,
            "surface_weight": 1.0 if not weights else weights.get(kind, 1.0),
        }
        if hybrid:
            why["fusion"] = fusion
            why["fused"] = score
        if terms and lr:
            why["lexical"]["terms"] = _terms(loaded.lexical, query, cid)
        if ev is not None:
            why["evidence"] = ev
        hits.append(new_hit(artifact_id, kind, score, text, meta, name, surface_index, cid, why))
    return hits


def _lexical_hits(
    index: Any,
    capsule: Any,
    allowed: Any,
    query: str,
    name: str | None,
    table: RecordTable,
    p: Params,
) -> tuple[list[SearchHit], bool]:
    """One pass of :func:`_fetch` for a lexical search without surface
    weights or ``explain`` terms, of a table holding the texts: the same
    hits, built by the compiled builder (:func:`_dense_hits`, which gives
    a lexical hit its explain when ``answered`` is "bm25") instead of
    per-hit Python.  When no collapse can drop a candidate, the index is
    asked for the best ``k + 1`` records, not ``fetch_k``: they tell the
    best ``k`` unless the ``k``-th and ``(k + 1)``-th score the same (their
    order then depends on candidates further down, and the ``fetch_k``
    are asked for) -- so a search at ``k`` = 100 scores and orders about
    100 candidates, not ``fetch_k`` = 500.

    The search (among ``allowed``'s records, when given) and the hits are
    one compiled call through the index's engine handle (``capsule``, the
    generation's :attr:`~rowvoi.corpus.storage.generation.Generation.lexical_capsule`)
    under the index's read lock (:func:`rowvoi.index._hot.lexical_search`),
    equal scores put in result order there too; its candidates come back
    only when one is not a record of the table (:func:`_dense_hits`
    reports it)."""
    collapse = p.per_artifact and not table.one_per_artifact
    lock = index._lock
    lock.acquire_read()
    try:
        got = _lexical_search_c(
            table._hit_table(),
            capsule,
            query,
            p.k,
            p.fetch_k,
            not collapse,
            collapse,
            name,
            "bm25",
            p.mode,
            None if allowed is None else allowed._capsule(),
        )
    finally:
        lock.release_read()
    if got[0] is not None:  # (the hits, and how many candidates)
        return got[0], got[1] >= p.fetch_k
    ids, scores = got[1], got[2]  # (the candidates, for the general path)
    return _dense_hits(name, table, ids, scores, "bm25", p), len(ids) >= p.fetch_k


def _dense_hits(
    name: str | None,
    table: RecordTable,
    ids: np.ndarray,
    scores: np.ndarray,
    answered: str,
    p: Params,
) -> list[SearchHit]:
    """The hits of a dense search without surface weights, from the vector
    index's candidates (best first, ties by record id) and a record table
    holding the texts: :func:`_dense_hits_reference`'s result, built in
    one compiled pass (:func:`rowvoi.index._hot.dense_hits`: positions,
    collapse, texts, metadata, hits). Candidates with equal scores are
    first put in result order here (:func:`_order`); an id the
    table lacks raises :class:`~rowvoi.errors.IndexFormatError`
    (:meth:`RecordTable.positions`)."""
    ht = table._hit_table()
    collapse = p.per_artifact and not table.one_per_artifact
    hits: list[SearchHit] | None = _dense_hits_c(
        ht, ids, scores, None, p.k, collapse, name, answered, p.mode
    )
    if hits is None:
        # equal scores, an unknown id (positions raises) or unusual dtypes
        ids = np.ascontiguousarray(ids, dtype=np.int64)
        scores = np.ascontiguousarray(scores)
        if scores.dtype != np.float32:
            scores = scores.astype(np.float64)
        pos = table.positions(ids)
        o = _order(table, pos, scores)
        hits = _dense_hits_c(ht, ids[o], scores[o], pos[o], p.k, collapse, name, answered, p.mode)
    return hits


def _dense_hits_reference(
    name: str | None,
    table: RecordTable,
    ids: np.ndarray,
    scores: np.ndarray,
    answered: str,
    p: Params,
) -> list[SearchHit]:
    """:func:`_dense_hits` in Python: the specification of the compiled
    builder (:func:`rowvoi.index._hot.dense_hits`), which the tests hold to it
    hit for hit. :func:`rank`'s steps for this case (the result
    order, the collapse, the ``explain`` of a dense hit) with no fusion, no
    second candidate list and no rank dictionaries."""
    n = len(ids)
    if not n:
        return []
    pos = table.positions(ids)
    sc_list = scores.tolist()
    # the result order (score, artifact, surface): the index's order unless
    # two candidates have equal scores
    if not all(map(operator.gt, sc_list, sc_list[1:])):
        o = _order(table, pos, scores)
        ids, scores, pos = ids[o], scores[o], pos[o]
        sc_list = scores.tolist()
    k = p.k
    pos_list = pos.tolist()
    keep: Iterable[int]
    if p.per_artifact and not table.one_per_artifact:
        # the best surface of each artifact: its first in result order
        art = table._columns()[0]
        seen: set[int] = set()
        kept: list[int] = []
        for i, j in enumerate(pos_list):
            a = art[j]
            if a not in seen:
                seen.add(a)
                kept.append(i)
                if len(kept) == k:
                    break
        keep = kept
    else:
        keep = range(min(n, k))
    id_list = ids.tolist()
    fields = table.hits_fields([pos_list[i] for i in keep])
    mode = p.mode
    hits = []
    for i, (artifact_id, kind, surface_index, text, meta) in zip(keep, fields):
        s = sc_list[i]
        why = {
            "mode": mode,
            "answered_by": [answered],
            "dense": {"rank": i + 1, "cosine": s},
            "lexical": None,
            "surface_weight": 1.0,
        }
        hits.append(
            new_hit(artifact_id, kind, s, text, meta, name, surface_index, id_list[i], why)
        )
    return hits


def _fuse(
    loaded: Generation,
    table: RecordTable,
    query: str,
    qvec: np.ndarray | None,
    dense: _Ranked,
    lex: _Ranked,
    p: Params,
    head: int | None = None,
    bounds: tuple[float, float] = (math.inf, math.inf),
) -> tuple[_Ranked, int]:
    """The first-stage candidates with their (fused) scores, in result
    order, and how many there are. With ``head``, a hybrid search returns
    only the candidates that can be among the first ``head`` (those
    scoring at least the ``head``-th best: every tie at the edge), in
    order -- the first ``head`` of the whole order, without sorting the
    rest; a blend then scores exactly only the candidates that can be
    among them (``bounds``: the most a record the dense or the lexical
    list lacks can score there; see :func:`_blend_scores`)."""
    if p.mode == "dense":
        return dense, len(dense.ids)
    if p.mode == "lexical":
        return lex, len(lex.ids)
    # the union by table position, ascending (the table's ids ascend, so
    # positions sort as ids do, and no id is looked up again), with each
    # record's rank on each side: one radix sort in the engine, where a
    # binary search per candidate mispredicts at nearly every step
    upos, d_rank, l_rank = _union_c(
        np.ascontiguousarray(dense.pos, dtype=np.int64),
        np.ascontiguousarray(lex.pos, dtype=np.int64),
        len(table),
    )
    union = table.ids[upos]
    if p.fusion == "rrf":
        # sum over the lists of 1 / (rrf_k + rank): the dense term first, as
        # floating-point addition is done in a fixed order (in the engine:
        # NumPy's boolean masks over the union cost about 5 % of a search
        # at k = 100)
        acc = _rrf_c(d_rank, l_rank, p.rrf_k)
    else:
        acc = _blend_scores(
            loaded, query, qvec, dense, lex, union, p, (d_rank, l_rank), head, bounds
        )
    n = len(union)
    if head is not None and 0 < head < n and not np.isnan(acc).any():
        edge = np.partition(acc, n - head)[n - head]  # the head-th best score
        sel = np.flatnonzero(acc >= edge)
        o = sel[_order(table, upos[sel], acc[sel])]
    else:
        o = _order(table, upos, acc)
    return _Ranked(union[o], acc[o], upos[o], d_rank[o], l_rank[o]), n


def _break_rrf_ties(
    loaded: Generation,
    table: RecordTable,
    query: str,
    qvec: np.ndarray | None,
    dense: _Ranked,
    lex: _Ranked,
    cands: _Ranked,
    p: Params,
) -> tuple[_Ranked, np.ndarray]:
    """The RRF candidates with equal scores ordered by their evidence, and
    the evidence (float64) of the first of them, in their new order: of
    every record that can be a hit.

    An RRF score depends on ranks only, and equal scores are common: a
    record ranked (1, 2) by (dense, lexical) and one ranked (2, 1) score
    ``1 / (rrf_k + 1) + 1 / (rrf_k + 2)`` both (the sum is exact either
    way round), and so do a record only one side returned at rank ``r``
    and one only the other side returned at rank ``r``. Ranks cannot say
    which is better; the records' evidence (their blend score, as for
    floors) measures how well each actually matches, so it orders them,
    highest first; then artifact id and surface index, as for any equal
    scores. Evidence is computed, in one call, for the records that can
    reach the results: the records up to the one that completes the top
    ``k`` (``k`` distinct artifacts with ``per_artifact``), within the
    first ``fetch_k``, and the rest of its group of equal scores --
    reordering a group never changes which records lie before its end, so
    groups after it cannot change the results. Candidates without ties
    among those come back unchanged.
    """
    sc = cands.scores
    n = min(len(sc), p.fetch_k)
    if n < 1:
        return cands, _NO_SCORES
    if p.per_artifact and not table.one_per_artifact:
        firsts = np.sort(np.unique(table.art[cands.pos[:n]], return_index=True)[1])
        last = int(firsts[p.k - 1]) if len(firsts) >= p.k else n - 1
    else:
        last = min(p.k, n) - 1
    # the records that can be hits: those scoring at least the one that
    # completes the top k (candidates are sorted by score, descending; the
    # group of its score may reach past fetch_k); their evidence orders
    # their ties and goes with the hits -- one call
    end = int(np.count_nonzero(sc >= sc[last]))
    head = cands.ids[:end]
    sides = None
    if cands.d_rank is not None and cands.l_rank is not None:
        sides = (cands.d_rank[:end], cands.l_rank[:end])
    ev = _blend_scores(loaded, query, qvec, dense, lex, head, p, sides)
    if end < 2 or not np.any(sc[1:end] == sc[: end - 1]):
        return cands, ev  # no tie among them: the order stands
    # only the head is reordered: every candidate after it scores less than
    # all of it, and their order (no evidence: equal ties) stands
    at = np.arange(len(sc))
    at[:end] = _order(table, cands.pos[:end], sc[:end], ev)
    return cands.take(at), ev[at[:end]]


def _blend_scores(
    loaded: Generation,
    query: str,
    qvec: np.ndarray | None,
    dense: _Ranked,
    lex: _Ranked,
    cids: np.ndarray,
    p: Params,
    sides: tuple[np.ndarray, np.ndarray] | None = None,
    head: int | None = None,
    bounds: tuple[float, float] = (math.inf, math.inf),
) -> np.ndarray:
    """``alpha * cosine + (1 - alpha) * bm25 / (bm25 + sat_k)`` of each
    record id of ``cids``, each side scored exactly (a side that did not
    return a record is asked for its score; a record BM25 does not match
    scores 0). ``sides``, when given: each record's 1-based rank in
    ``dense`` and in ``lex`` (0: not there), so neither list is searched.

    With ``sides``, a checked query vector (or none) and the indexes'
    engine handles at hand, one compiled call
    (:func:`rowvoi.index._hot.blend`, the engine's ``rv_records_blend``)
    does it all under both indexes' read locks; otherwise, and as its
    specification (the tests hold the two to each other bit for bit),
    :func:`_blend_scores_numpy`. The compiled call with ``head`` computes
    only the records that can be among the best ``head`` values, every
    other one ``-inf`` (``bounds``: the most a record missing from the
    dense or the lexical list can score there), so the best ``head``, ties
    included, and their order are those of every record computed."""
    flat = None if loaded.dense is None else getattr(loaded.dense, "exact", loaded.dense)
    if (
        sides is not None
        and (loaded.lexical is None or loaded.lexical_capsule is not None)
        and (
            qvec is None
            or flat is None
            or (
                isinstance(flat, FlatIndex)
                and qvec.dtype == np.float32
                and qvec.shape == (flat.dim,)
                and qvec.flags.c_contiguous
            )
        )
    ):
        return _blend_c(loaded, query, qvec, flat, dense, lex, cids, p, sides, head, bounds)
    return _blend_scores_numpy(loaded, query, qvec, dense, lex, cids, p, sides)


def _blend_c(
    loaded: Generation,
    query: str,
    qvec: np.ndarray | None,
    flat: FlatIndex | None,
    dense: _Ranked,
    lex: _Ranked,
    cids: np.ndarray,
    p: Params,
    sides: tuple[np.ndarray, np.ndarray],
    head: int | None = None,
    bounds: tuple[float, float] = (math.inf, math.inf),
) -> np.ndarray:
    """:func:`_blend_scores` in one compiled call, holding the read locks of
    the BM25 index and of a flat index not frozen (a frozen one never
    changes again)."""
    use_flat = flat is not None and qvec is not None
    lexical = loaded.lexical
    locks = []
    if lexical is not None:
        locks.append(lexical._lock)
    if use_flat and not flat._frozen:  # type: ignore[union-attr]
        locks.append(flat._lock)  # type: ignore[union-attr]
    held = []
    try:
        for lock in locks:
            lock.acquire_read()
            held.append(lock)
        return _blend_hot(
            np.ascontiguousarray(cids, dtype=np.int64),
            np.ascontiguousarray(sides[0], dtype=np.int64),
            np.ascontiguousarray(sides[1], dtype=np.int64),
            np.ascontiguousarray(dense.scores, dtype=np.float64),
            np.ascontiguousarray(lex.scores, dtype=np.float64),
            p.alpha,
            p.sat_k,
            flat._h.capsule() if use_flat else None,  # type: ignore[union-attr]
            qvec if use_flat else None,
            flat.n_threads if use_flat else 0,  # type: ignore[union-attr]
            loaded.lexical_capsule if lexical is not None else None,
            query,
            head or 0,
            bounds[0],
            bounds[1],
        )
    finally:
        for lock in reversed(held):
            lock.release_read()


def _blend_scores_numpy(
    loaded: Generation,
    query: str,
    qvec: np.ndarray | None,
    dense: _Ranked,
    lex: _Ranked,
    cids: np.ndarray,
    p: Params,
    sides: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """:func:`_blend_scores` in NumPy, each index asked through its Python
    methods: the path of a search whose candidates came without ranks, or
    whose query vector or indexes the compiled call does not take, and the
    specification of that call."""
    n = len(cids)
    by_id = np.argsort(cids, kind="stable")
    sorted_ids = cids[by_id]

    def place(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(indexes into cids of those ids that are in cids, which of ids)."""
        at = np.minimum(np.searchsorted(sorted_ids, ids), max(n - 1, 0))
        hit = sorted_ids[at] == ids if n else np.zeros(len(ids), dtype=bool)
        return by_id[at[hit]], hit

    if sides is not None:
        have_cos, have_bm = sides[0] > 0, sides[1] > 0
        cos, bm = _side_scores(dense, sides[0]), _side_scores(lex, sides[1])
    else:
        cos, bm = np.zeros(n, dtype=np.float64), np.zeros(n, dtype=np.float64)
        have_cos, have_bm = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
        at, hit = place(dense.ids)
        cos[at], have_cos[at] = dense.scores[hit], True
        at, hit = place(lex.ids)
        bm[at], have_bm[at] = lex.scores[hit], True
    need_cos = cids[~have_cos]
    if len(need_cos) and qvec is not None and loaded.dense is not None and np.any(qvec):
        flat = getattr(loaded.dense, "exact", loaded.dense)
        if qvec.dtype == np.float32 and qvec.shape == (flat.dim,) and qvec.flags.c_contiguous:
            # (a checked query vector: rescore()'s argument checks skipped)
            r_ids, r_sc = flat._rescore_vector(
                qvec, np.ascontiguousarray(need_cos, dtype=np.int64)
            )
        else:
            r = flat.rescore(qvec, need_cos, len(need_cos))
            found = r.ids >= 0
            r_ids, r_sc = r.ids[found], r.scores[found]
        at, hit = place(r_ids)
        cos[at] = r_sc[hit]
    need_bm = cids[~have_bm]
    if len(need_bm) and loaded.lexical is not None:
        # (record ids: int64, distinct, >= 0 -- the search's checks skipped)
        r_ids, r_bm = loaded.lexical._scores_of(
            query, np.ascontiguousarray(need_bm, dtype=np.int64)
        )
        at, hit = place(r_ids)
        bm[at] = r_bm.astype(np.float64)[hit]
    # max(bm25, 0.0) as Python's max takes it
    b = np.where(bm < 0.0, 0.0, bm)
    return p.alpha * cos + (1.0 - p.alpha) * b / (b + p.sat_k)


def _terms(lexical: Any, query: str, cid: int) -> list[dict[str, Any]]:
    """Each query term's BM25 contribution to a record's score."""
    return [
        {"term": t.term, "tf": t.tf, "df": t.df, "idf": t.idf, "contribution": t.contribution}
        for t in lexical.explain(query, cid).terms
    ]


# --------------------------------------------------------------- siblings
