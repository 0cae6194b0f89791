"""Search a corpus: dense, lexical or hybrid, with hard metadata filters.

:func:`search` ranks a corpus's records for a query in one of
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
calibrated ones of :mod:`rowvoi.corpus.calibration` -- compare the
evidence of an RRF hit and the score of any other hit
(:func:`rowvoi.corpus.selection.floor_score`); the RRF order is kept.

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
>>> from rowvoi.corpus import CorpusStore, build, from_mapping
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
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from rowvoi import _validate as _v
from rowvoi._validate import integer as _check_int
from rowvoi.corpus._hot import (
    any_nonzero as _any_nonzero,
    dense_hits as _dense_hits_c,
    dense_search as _dense_search_c,
    unit_query as _unit_query,
)
from rowvoi.corpus.base import (
    CorpusEmpty,
    EmbedderMismatch,
    EmbedderUnavailable,
    NoLedgerEntry,
    Record,
    SearchHit,
    SearchHits,
    ledger_key,
    new_hit,
)
from rowvoi.corpus.embedders import CorpusEmbedder, embedder_for_id, make_embedder
from rowvoi.corpus.records import RecordTable
from rowvoi.corpus.store import (
    BaseFileDamaged,
    BaseFileGone,
    CorpusStore,
    Snapshot,
    load_dense,
    load_lexical,
)
from rowvoi.errors import IndexFormatError, QueryError
from rowvoi.index.flat import FlatIndex
from rowvoi.index.hnsw import HNSWIndex

__all__ = [
    "Corpus",
    "open_corpus",
    "search",
    "records_for_artifact",
    "MODES",
    "FUSIONS",
    "INDEXES",
    "DFLT_RRF_K",
    "DFLT_BLEND_ALPHA",
    "DFLT_BM25_SAT_K",
    "MAX_FETCH_K",
    "FETCH_GROWTH",
]

#: Ranking modes of :func:`search`.
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
#: One query scans a flat index of fewer vectors on one thread, and a
#: larger one on all cores (the engine's work rule may still use fewer).
#: The exact screen of 100k 384-d vectors on a 2-core machine: 1.5x faster
#: on two threads when the second core is free, within 2 % when another
#: process holds it (bench/results/flat_int8_paths.md); at 50k the gain is
#: as large but the second thread costs 5-10 % under that load.
PARALLEL_SCAN_MIN = 100_000
#: Largest ``fetch_k`` accepted.
MAX_FETCH_K = 100_000
#: Categorical filter fields with at most this many distinct values get
#: them as their canonical values (case- and spacing-insensitive matching).
_MAX_CATEGORIES = 10_000
_RETRIES = 8


@dataclass
class _Loaded:
    """Indexes, filter schema and record table loaded for one generation
    (from snapshots of it); parts are added under the corpus's lock, each
    published before its ``has_`` flag, and never change afterwards."""

    generation: int
    state: dict[str, Any]
    lexical: Any = None
    dense: Any = None
    records: RecordTable | None = None
    dense_size: int = 0  # vectors in the flat index (an HNSW graph's exact twin)
    flat: Any = None  # that flat index
    has_lexical: bool = False
    has_dense: bool = False
    schema: Any = None
    # what the compiled dense path needs, once the record table (with its
    # texts) and a flat index (no HNSW graph) are loaded: (hit table, the
    # frozen index's capsule, scan threads, records one per artifact)
    fast: tuple[Any, Any, int, bool] | None = None
    # IdSets of the records of some surface kinds (key: the sorted kinds),
    # from the record table: a kinds-only restriction needs no SQL
    kind_sets: dict[tuple[str, ...], Any] = field(default_factory=dict)

    def serves(self, lexical: bool, dense: bool) -> bool:
        """Is everything a search of these sides needs loaded?"""
        return (
            self.records is not None
            and (self.has_lexical or not lexical)
            and (self.has_dense or not dense)
        )


class _Stale(Exception):
    """The snapshot is older than what is loaded: take a fresh one."""


class Corpus:
    """A built, queryable corpus: a store plus its (lazily loaded) embedder.

    Parameters
    ----------
    name : str or None
        The corpus name (``None`` for an anonymous corpus).
    store : CorpusStore
    embedder : spec, optional
        The embedder to query with; it must be the one the corpus was built
        with (:class:`EmbedderMismatch` otherwise). Default: recreated from
        the corpus's pinned embedder id at the first dense query.

    Attributes
    ----------
    last_build : BuildReport or None
        Set by :func:`rowvoi.corpus.build`.
    source_roots : tuple of str or None
        Set by :func:`rowvoi.corpus.build` from the source the caller
        built with: the folder of a :func:`~rowvoi.corpus.from_files`
        source, ``()`` for another source. The disclosure's allowed roots
        (:func:`~rowvoi.corpus.disclosure.allowed_roots`); None (a corpus
        opened by name) defers to the registry.

    Notes
    -----
    Thread-safety: a corpus may be searched from any number of threads at
    once, also while another process builds it: each search reads one
    committed generation (indexes and rows from one snapshot); the indexes
    and the record table (:class:`~rowvoi.corpus.records.RecordTable`) of a
    new generation are loaded once, by the first search that sees it. A
    search without a filter whose generation is still the committed one
    (:meth:`CorpusStore.committed_generation`: one read of SQLite's
    WAL-index header) answers from them without any SQL.

    Examples
    --------
    >>> from rowvoi.corpus import build, from_mapping
    >>> corpus = build(from_mapping({"a": "lift of a wing"}, embedder="hashing:16"),
    ...                store=CorpusStore.memory())
    >>> [h.artifact_id for h in corpus.search("wing", mode="lexical")]
    ['a']
    >>> corpus.embedder_id
    'hash-v1:dim=16,words=1-2,chars=3-5,cw=1,seed=0'
    """

    def __init__(self, name: str | None, store: CorpusStore, embedder: Any = None) -> None:
        if not isinstance(store, CorpusStore):
            raise TypeError(f"store must be a CorpusStore, not {type(store).__name__}")
        self.name = name
        self.store = store
        self._explicit = embedder is not None
        self._embedder: CorpusEmbedder | None = (
            None if embedder is None else make_embedder(embedder, persistent=not store.temporary)
        )
        self._lock = threading.Lock()
        self._loaded: _Loaded | None = None
        self.last_build: Any = None
        self.source_roots: tuple[str, ...] | None = None

    def __repr__(self) -> str:
        return f"Corpus({self.name!r}, {str(self.store.path)!r})"

    @property
    def label(self) -> str:
        """``corpus 'NAME'`` (or the path of an anonymous one), for messages."""
        return f"corpus {self.name!r}" if self.name else f"the corpus at {self.store.path}"

    @property
    def embedder_id(self) -> str | None:
        """The embedder id the corpus was built with (``None`` before a build)."""
        with self.store.snapshot() as snap:
            return snap.state.get("embedder_id")

    @property
    def embedder(self) -> CorpusEmbedder:
        """The embedder queries use (recreated from the pinned id on first
        use). Raises :class:`EmbedderUnavailable` when it cannot be."""
        with self.store.snapshot() as snap:
            return self._query_embedder(snap.state)

    def _query_embedder(self, state: Mapping[str, Any]) -> CorpusEmbedder:
        eid = state.get("embedder_id")
        if eid is None:
            raise CorpusEmpty(self._empty_message())
        emb = self._embedder
        if emb is not None and emb.embedder_id == eid:
            return emb
        if emb is not None and self._explicit:
            fix = f"rowvoi build {self.name} --embedder SPEC" if self.name else "rebuild it"
            raise EmbedderMismatch(
                f"{self.label} was built with embedder {eid!r}, not {emb.embedder_id!r}: "
                f"query it with the embedder it was built with, or rebuild it with this one "
                f"({fix})"
            )
        with self._lock:
            if self._embedder is None or self._embedder.embedder_id != eid:
                made = embedder_for_id(eid, corpus=self.name)
                if made is None:
                    who = repr(self.name) if self.name else "..."
                    raise EmbedderUnavailable(
                        f"{self.label} was built with the callable embedder {eid!r}, which "
                        f"cannot be recreated from its id; pass it again: "
                        f"open_corpus({who}, embedder=(function, {eid!r}))"
                    )
                self._embedder = made
            return self._embedder

    def _empty_message(self) -> str:
        if self.name:
            return f"corpus {self.name!r} is empty; build it first: rowvoi build {self.name}"
        return f"{self.label} is empty; build it first"

    # ------------------------------------------------------------ loading
    def _indexes(
        self, snap: Snapshot, lexical: bool, dense: bool, records: bool = False
    ) -> _Loaded:
        """The indexes (and, with ``records``, the record table) of the
        snapshot's generation, loading what is missing."""
        gen = snap.generation
        with self._lock:
            cur = self._loaded
            if cur is not None and cur.generation > gen:
                raise _Stale()
            if cur is None or cur.generation != gen:
                cur = _Loaded(gen, snap.state)
            if lexical and not cur.has_lexical:
                cur.lexical = load_lexical(self.store, snap)
                cur.has_lexical = True
            if dense and not cur.has_dense:
                cur.dense = load_dense(self.store, snap)
                if isinstance(cur.dense, FlatIndex):
                    # never changed once published: searches skip its lock
                    cur.dense._freeze()
                cur.flat = getattr(cur.dense, "exact", cur.dense)
                cur.dense_size = 0 if cur.flat is None else len(cur.flat)
                cur.has_dense = True
            if records and cur.records is None:
                cur.records = RecordTable.load(snap)
            if cur.schema is None:
                cur.schema = _schema(snap)
            table = cur.records
            if (
                cur.fast is None
                and isinstance(cur.dense, FlatIndex)
                and table is not None
                and table.has_text
                and gen > 0
                and cur.state.get("n_records")
            ):
                ht = table._hits if table._hits is not None else table._hit_table()
                threads = 1 if cur.dense_size < PARALLEL_SCAN_MIN else 0
                cur.fast = (ht, cur.dense._h.capsule(), threads, table.one_per_artifact)
            self._loaded = cur
            return cur

    def _current(self) -> _Loaded | None:
        """What is loaded, if its generation is still the committed one
        (:meth:`CorpusStore.committed_generation`: no transaction), else
        ``None``."""
        cur = self._loaded
        if cur is None:
            return None
        gen = self.store.committed_generation()
        return cur if gen is not None and gen == cur.generation else None

    # --------------------------------------------------------------- API
    def search(self, query: str, **kwargs: Any) -> SearchHits:
        """:func:`search` on this corpus."""
        return search(self, query, **kwargs)

    def records_for_artifact(
        self, artifact_id: str, *, surface_kind: str | None = None
    ) -> list[Record]:
        """:func:`records_for_artifact` on this corpus."""
        return records_for_artifact(self, artifact_id, surface_kind=surface_kind)

    def info(self, *, check: bool = False) -> dict[str, Any]:
        """What the corpus holds: name, path, generation, counts, surface
        kinds, links (``n_links``) and the edge extractor (``edges``),
        filter fields and types, embedder, strategy, analyzer, files and
        bytes on disk, and ``damage``: the damaged files found
        (:func:`rowvoi.corpus.check`; a list of ``{"file", "problem",
        "repairable"}``) with ``repair``, the command that repairs them
        (``None`` when nothing was found). Loads no index and no model:
        damage is judged by looking at the files, unless ``check`` (then
        every index file is loaded and verified, and ``docs.sqlite``
        checked).

        >>> from rowvoi.corpus import CorpusStore, build, from_mapping
        >>> c = build(from_mapping({"a": "x y"}, embedder="hashing:16"),
        ...           store=CorpusStore.memory())
        >>> info = c.info()
        >>> info["n_artifacts"], info["n_records"], info["kinds"], info["embedder"]["dim"]
        (1, 1, {'document': 1}, 16)
        >>> info["damage"], c.info(check=True)["damage"]
        ([], [])
        """
        from rowvoi.corpus.repair import check_files
        from rowvoi.corpus.store import rebuild_advice, repair_command

        with self.store.snapshot() as snap:
            s = snap.state
            counts = snap.counts()
            damage = check_files(self.store, snap, deep=check)
            out = {
                "name": self.name,
                "path": str(self.store.path),
                "generation": snap.generation,
                **counts,
                "kinds": snap.kinds(),
                "n_links": snap.n_links(),
                "edges": s.get("edges"),
                "fields": {n: t for n, t, _ in snap.fields()},
                "embedder": {
                    "id": s.get("embedder_id"),
                    "dim": s.get("dim"),
                    "spec": s.get("embedder_spec"),
                },
                "strategy": {"id": s.get("strategy_id"), "spec": s.get("strategy_spec")},
                "lexical": s.get("lexical"),
                "source": s.get("source"),
                "base_generation": snap.base.get("generation"),
                "created": s.get("created"),
                "updated": s.get("updated"),
                "damage": [d.to_dict() for d in damage],
                "repair": None
                if not damage
                else repair_command(self.store)
                if all(d.repairable for d in damage)
                else rebuild_advice(self.store),
            }
        files = self.store.files()
        sizes = {p.name: p.stat().st_size for p in files if p.exists()}
        out["files"] = sizes
        out["bytes"] = sum(sizes.values())
        return out


def _schema(snap: Snapshot) -> Any:
    """The filter schema of a generation (its typed, filterable fields)."""
    from rowvoi.query import QuerySchema

    cols: dict[str, Any] = {}
    for name, t, integer in snap.fields():
        if t == "json":
            continue
        spec: dict[str, Any] = {"type": t}
        if t == "numeric":
            spec["integer"] = integer
        if t == "categorical":
            values = snap.distinct_values(name, _MAX_CATEGORIES + 1)
            if len(values) <= _MAX_CATEGORIES:
                spec["values"] = [str(v) for v in values]
        cols[name] = spec
    try:
        return QuerySchema(cols)
    except QueryError as exc:  # the stored field list is damaged (NULL names, types)
        raise IndexFormatError(
            f"RV_E_CORRUPT: {snap.store.db_path}: damaged corpus database (its filter "
            f"fields: {exc}); rebuild the corpus"
        ) from None


def open_corpus(
    name: str | None = None, *, embedder: Any = None, store: CorpusStore | None = None
) -> Corpus:
    """Open a built corpus by name (or its store), without loading anything.

    The embedding model is loaded at the first dense or hybrid query (so
    ``info``, lexical search and sibling lookups never load it), and it is
    the embedder the corpus was built with: pinned by id, recreated
    strictly.

    Parameters
    ----------
    name : str, optional
        The corpus name (see :mod:`rowvoi.corpus.paths`).
    embedder : spec, optional
        Query with this embedder instead of recreating the pinned one (a
        callable's corpus needs it); its id must match.
    store : CorpusStore, optional
        Open this store instead of the named one.

    Raises
    ------
    CorpusNotFound
        No such corpus (nothing is created).
    EmbedderMismatch
        ``embedder`` is not the corpus's.
    rowvoi.errors.IndexFormatError
        The directory holds another format version.

    Examples
    --------
    >>> import os, tempfile
    >>> os.environ["ROWVOI_HOME"] = tempfile.mkdtemp()
    >>> open_corpus("nothing-here")
    Traceback (most recent call last):
    ...
    rowvoi.corpus.base.CorpusNotFound: no corpus 'nothing-here' (looked in ...); build it first: rowvoi build nothing-here --files DIR
    >>> os.path.exists(os.path.join(os.environ["ROWVOI_HOME"], "corpora", "nothing-here"))
    False
    >>> del os.environ["ROWVOI_HOME"]
    """
    if store is None:
        if name is None:
            raise TypeError("open_corpus needs a name or a store")
        store = CorpusStore.local(name)
    elif name is None:
        name = store.name
    store.require()
    corpus = Corpus(name, store, embedder=embedder)
    with store.snapshot() as snap:
        eid = snap.state.get("embedder_id")
        if embedder is not None and eid is not None:
            corpus._query_embedder(snap.state)
    return corpus


def _as_corpus(corpus: Any) -> Corpus:
    if isinstance(corpus, Corpus):
        return corpus
    if isinstance(corpus, str):
        return open_corpus(corpus)
    if isinstance(corpus, CorpusStore):
        return open_corpus(store=corpus)
    raise TypeError(
        f"corpus must be a Corpus, a corpus name or a CorpusStore, not {type(corpus).__name__}"
    )


# ------------------------------------------------------------- validation


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


def search(
    corpus: Corpus | str,
    query: str,
    *,
    k: int = 10,
    mode: str = "dense",
    fusion: str = "rrf",
    rrf_k: int = DFLT_RRF_K,
    alpha: float = DFLT_BLEND_ALPHA,
    bm25_sat_k: float = DFLT_BM25_SAT_K,
    filter: Mapping[str, Any] | None = None,
    surfaces: Iterable[str] | str | None = None,
    per_artifact: bool = True,
    surface_weights: Mapping[str, float] | None = None,
    fetch_k: int | None = None,
    index: str = "auto",
    explain: bool = False,
    query_vector: Any = None,
) -> SearchHits:
    """The top ``k`` hits for ``query`` (see the module notes).

    Parameters
    ----------
    corpus : Corpus or str
        An open corpus, or a corpus name.
    query : str
        The query text, embedded verbatim (dense) and analysed (lexical).
    k : int
        Hits to return (>= 1).
    mode : {"dense", "lexical", "hybrid"}
    fusion : {"rrf", "blend"}
        Hybrid fusion (ignored otherwise).
    rrf_k : int
        RRF rank constant (>= 1).
    alpha : float
        Blend's dense weight, in [0, 1].
    bm25_sat_k : float
        Blend's BM25 saturation constant (> 0).
    filter : mapping, optional
        A :mod:`rowvoi.query` filter over the corpus's filter fields.
    surfaces : str or iterable of str, optional
        Only these surface kinds.
    per_artifact : bool
        Keep the best surface per artifact (default True).
    surface_weights : mapping, optional
        ``{kind: weight}`` (finite, >= 0) multiplying first-stage scores;
        kinds the corpus lacks are ignored.
    fetch_k : int, optional
        Candidates per index in the first fetch (see the module notes);
        >= ``k``. With ``per_artifact``, more are fetched when the
        collapse leaves fewer than ``k`` artifacts.
    index : {"auto", "flat", "hnsw"}
        The vector index: the HNSW graph when the corpus has one, else the
        flat index (``"auto"``); the flat index (``"flat"``); the HNSW
        graph (``"hnsw"``, an error without one). A flat search is exact:
        the results of a float32 scan, bit for bit, read mostly from the
        index's int8 copy.
    explain : bool
        Add per-term BM25 contributions to each hit's ``explain``.
    query_vector : array_like, optional
        Use this embedding of the query instead of embedding ``query``
        (dense and hybrid modes); it is scaled to unit length here (the
        norm summed in float64), so its own scale does not matter.

    Returns
    -------
    SearchHits
        A list of :class:`SearchHit`, best first; fewer than ``k`` only
        when fewer qualify (artifacts with ``per_artifact``, else records),
        whatever the index. An empty one says why in its ``reason``: no
        record matches the filter, the corpus has no surfaces of the kinds
        asked for, the query has no searchable terms (lexical), its
        embedding is the zero vector (dense), no record contains a query
        term.

    Raises
    ------
    CorpusNotFound
        A corpus name that does not exist.
    CorpusEmpty
        The corpus has no records: ``corpus 'X' is empty; build it first:
        rowvoi build X``.
    ValueError, TypeError
        ``k <= 0``, an unknown mode, fusion or index, bad numbers.
    rowvoi.errors.QueryError
        A filter naming an unknown field, using an operator its type does
        not allow, or a value of the wrong type (every problem listed).
    EmbedderMismatch, EmbedderUnavailable
        The corpus's embedder cannot be used here (dense and hybrid).

    Notes
    -----
    Thread-safe (see :class:`Corpus`).

    Examples
    --------
    >>> from rowvoi.corpus import build, from_mapping
    >>> corpus = build(from_mapping({"a": "lift of a wing", "b": "shock on a wedge"},
    ...                             embedder="hashing"), store=CorpusStore.memory())
    >>> [h.artifact_id for h in search(corpus, "wedge shock", mode="hybrid", fusion="blend")]
    ['b', 'a']
    >>> search(corpus, "wing", k=0)
    Traceback (most recent call last):
    ...
    ValueError: k=0: must be in 1 .. 100000
    """
    c = corpus if type(corpus) is Corpus else _as_corpus(corpus)
    if not isinstance(query, str):
        raise TypeError(f"query must be a str, not {type(query).__name__}")
    # each check's common valid case first (a plain int, float or str in
    # range), the full checks (conversions, messages) otherwise
    if not (type(k) is int and 1 <= k <= MAX_FETCH_K):
        k = _check_int("k", k, 1, MAX_FETCH_K)
    if not (type(mode) is str and mode in MODES):
        mode = _v.choice("mode", mode, MODES)
    if not (type(fusion) is str and fusion in FUSIONS):
        fusion = _v.choice("fusion", fusion, FUSIONS)
    if not (type(rrf_k) is int and rrf_k >= 1):
        rrf_k = _check_int("rrf_k", rrf_k, 1)
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
    if filter is not None and not isinstance(filter, Mapping):
        raise TypeError(
            f"filter must be a mapping (a filter document), not {type(filter).__name__}"
        )
    if (
        mode == "dense"
        and type(query_vector) is np.ndarray
        and not filter
        and kinds is None
        and weights is None
        and index != "hnsw"
    ):
        # the hot path: an unfiltered dense search of a vector on a flat
        # index, from the loaded generation while it is still the committed
        # one, in one compiled call (rowvoi._hot.dense_search: the query's
        # unit form, the exact scan, the hits); what that call leaves
        # undecided (equal scores, a bad vector) takes the path below
        cur = c._current()
        fast = None if cur is None else cur.fast
        if fast is not None:
            ht, flat, threads, one = fast
            collapse = bool(per_artifact) and not one
            kplus1 = k < fetch_k and not collapse
            size = cur.dense_size  # type: ignore[union-attr]
            f = fetch_k
            while True:
                hits = _dense_search_c(
                    ht,
                    flat,
                    query_vector,
                    k,
                    f,
                    collapse,
                    kplus1,
                    threads,
                    c.name,
                    "flat",
                    "dense",
                )
                # ([]: an all-zero query; fewer than k after the collapse of
                # all f candidates asked for: fetch more, as _search_loaded)
                if hits is None or not (collapse and 0 < len(hits) < k and f < size):
                    break
                f = _grown(f, size)
            if hits is not None:
                return SearchHits(hits) if hits else SearchHits.empty(_ZERO_VECTOR)
    qvec = None if query_vector is None else _query_vector(query_vector)
    params = _Params(
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
    plain = not filter and kinds is None
    want_lex = mode in ("lexical", "hybrid")
    want_dense = mode in ("dense", "hybrid")
    for _ in range(_RETRIES):
        try:
            if plain:
                # the generation loaded is still the committed one: answer from
                # memory (indexes and record table of that generation), no SQL
                cur = c._current()
                if cur is not None and cur.serves(want_lex, want_dense):
                    assert cur.records is not None
                    if cur.records.has_text:
                        return _search_loaded(c, cur, None, query, qvec, None, params)
            with c.store.snapshot() as snap:
                return _search_snapshot(c, snap, query, qvec, filter, params)
        except _Stale:
            continue
        except (BaseFileGone, BaseFileDamaged) as exc:
            c.store.confirm_damage(exc)  # raises unless a newer commit replaced the file
            continue
    raise RuntimeError(f"{c.label} kept changing during the search ({_RETRIES} commits); retry")


class _Params(NamedTuple):
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


def _query_vector(v: Any) -> np.ndarray:
    """A query vector as float32 of unit length (an all-zero one stays
    zero): :func:`rowvoi._hot.unit_query` (the norm summed in float64 in
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


#: dtypes :func:`_query_vector` hands to the compiled normaliser as they are
_QV_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _allowed(
    c: Corpus,
    snap: Snapshot,
    loaded: _Loaded,
    filter: Mapping[str, Any] | None,
    kinds: list[str] | None,
) -> Any:
    """The IdSet of records a filter and surface restriction allow (None: all)."""
    from rowvoi.index.idset import IdSet
    from rowvoi.query import compile_where, parse_filter
    from rowvoi.query.sql import SQLITE

    if not filter and kinds is None:
        return None
    if not filter and loaded.records is not None:
        return _kinds_allowed(loaded, loaded.records, kinds)
    where: str | None = None
    args: list[Any] = []
    if filter:
        try:
            node = parse_filter(filter, loaded.schema)
        except QueryError as exc:
            raise QueryError([f"{c.label}: {p}" for p in exc.problems]) from None
        if node is not None:
            where, args = compile_where(node, SQLITE)
    return IdSet(snap.ids_where(where, args, kinds))


#: Most kind restrictions whose IdSet one generation keeps.
_KIND_SETS_MAX = 32


def _kinds_allowed(loaded: _Loaded, rec: RecordTable, kinds: list[str] | None) -> Any:
    """The IdSet of the records of ``kinds``, from the generation's record
    table ``rec`` (``loaded.records``): the same ids as
    ``Snapshot.ids_where(None, [], kinds)``, without SQL.  Kept per
    generation (a walk restricts every search of its seeds to the same
    kinds); threads racing on a new key compute equal sets, and the one
    stored last is kept."""
    from rowvoi.index.idset import IdSet

    key = tuple(sorted(set(kinds or ())))
    got = loaded.kind_sets.get(key)
    if got is None:
        codes = [i for i, k in enumerate(rec.kinds) if k in key]
        got = IdSet(rec.ids[np.isin(rec.kind, codes)])
        if len(loaded.kind_sets) < _KIND_SETS_MAX:
            loaded.kind_sets[key] = got
    return got


def _check_searchable(c: Corpus, state: Mapping[str, Any], generation: int, p: _Params) -> None:
    if generation == 0 or not state.get("n_records"):
        raise CorpusEmpty(c._empty_message())
    if p.mode != "lexical" and p.vector_index == "hnsw" and not state.get("hnsw"):
        fix = f"rowvoi build {c.name} --hnsw" if c.name else "build(..., hnsw=True)"
        raise ValueError(
            f"{c.label} has no HNSW index; build one ({fix}) or search with index='flat' or 'auto'"
        )


def _search_snapshot(
    c: Corpus,
    snap: Snapshot,
    query: str,
    qvec: np.ndarray | None,
    filter: Mapping[str, Any] | None,
    p: _Params,
) -> SearchHits:
    """A search through a snapshot: loads what its generation lacks, and
    runs the filter's SQL."""
    state = snap.state
    _check_searchable(c, state, snap.generation, p)
    want_dense = p.mode in ("dense", "hybrid")
    want_lex = p.mode in ("lexical", "hybrid")
    if want_dense and qvec is None:
        c._query_embedder(state)  # before loading: fail fast without a model
    loaded = c._indexes(snap, lexical=want_lex, dense=want_dense, records=True)
    allowed = _allowed(c, snap, loaded, filter, p.kinds)
    if allowed is not None and len(allowed) == 0:
        return SearchHits.empty(_none_allowed(loaded, bool(filter), p.kinds))
    return _search_loaded(c, loaded, snap, query, qvec, allowed, p)


def _none_allowed(loaded: _Loaded, filtered: bool, kinds: list[str] | None) -> str:
    """Why a filter and surface restriction allow no record."""
    have = [] if loaded.records is None else loaded.records.kinds
    if kinds is not None and not set(kinds) & set(have):
        s = "s" if len(kinds) > 1 else ""
        return (
            f"the corpus has no surfaces of kind{s} {', '.join(map(repr, kinds))} "
            f"(its kinds: {', '.join(have) or 'none'})"
        )
    if kinds is not None and filtered:
        s = "s" if len(kinds) > 1 else ""
        return f"no record of kind{s} {', '.join(map(repr, kinds))} matches the filter"
    return "no record matches the filter"


#: Why a search of an all-zero query vector finds nothing.
_ZERO_VECTOR = (
    "the query's embedding is the zero vector (nothing in the query the "
    "embedder represents), so no cosine can rank the records"
)


def _why_empty(
    loaded: _Loaded, query: str, qvec: np.ndarray | None, allowed: Any, p: _Params
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
    positions in the record table."""

    ids: np.ndarray
    scores: np.ndarray
    pos: np.ndarray

    def ranks(self) -> tuple[dict[int, int], list[float]]:
        """``({record id: 1-based rank}, scores)``: the score of rank ``r``
        is ``scores[r - 1]``."""
        ids = self.ids.tolist()
        return dict(zip(ids, range(1, len(ids) + 1))), self.scores.tolist()


_NO_IDS = np.zeros(0, dtype=np.int64)
_NO_SCORES = np.zeros(0, dtype=np.float64)


def _ranked(table: RecordTable, ids: np.ndarray, scores: np.ndarray) -> _Ranked:
    """Candidates in result order: score, then artifact id, then surface
    index -- an order that does not depend on the build history (record ids
    do)."""
    if not len(ids):
        return _Ranked(_NO_IDS, _NO_SCORES, _NO_IDS)
    ids = np.asarray(ids, dtype=np.int64)
    sc = np.asarray(scores, dtype=np.float64)
    pos = table.positions(ids)
    o = table.order(pos, sc)
    return _Ranked(ids[o], sc[o], pos[o])


#: Factor by which the candidate fetch grows when a per-artifact collapse
#: left fewer than ``k`` artifacts (see "Candidates and collapse").
FETCH_GROWTH = 4


def _grown(fetch_k: int, bound: int) -> int:
    """The next fetch after ``fetch_k`` (``< bound``) fell short: times
    :data:`FETCH_GROWTH`, never past ``bound`` (the records a search could
    return), where every index is exhausted."""
    return min(bound, fetch_k * FETCH_GROWTH)


def _search_loaded(
    c: Corpus,
    loaded: _Loaded,
    snap: Snapshot | None,
    query: str,
    qvec: np.ndarray | None,
    allowed: Any,
    p: _Params,
) -> SearchHits:
    """Rank with the loaded generation's indexes and record table; ``snap``
    (of that generation) is needed only when the table holds no texts.

    When the per-artifact collapse leaves fewer than ``k`` artifacts while
    an index's candidates were cut at ``fetch_k`` (more records could
    follow), the search runs again with :func:`_grown` candidates, until
    ``k`` artifacts are found or no list is cut (every index exhausted)."""
    table = loaded.records
    assert table is not None
    if snap is None:
        _check_searchable(c, loaded.state, loaded.generation, p)
    if p.mode != "lexical" and loaded.dense is not None:
        if qvec is None:
            qvec = c._query_embedder(loaded.state).embed([query])[0]
        elif qvec.shape[0] != loaded.dense.dim:
            raise EmbedderMismatch(
                f"query_vector has {qvec.shape[0]} dimensions; {c.label} "
                f"holds {loaded.dense.dim}-dimensional vectors"
            )
    collapse = p.per_artifact and not table.one_per_artifact
    while True:
        hits, cut = _search_fetch(c, loaded, snap, query, qvec, allowed, p)
        if collapse and cut and len(hits) < p.k:
            # (the records a search could return: where every index is exhausted)
            bound = len(table) if allowed is None else min(len(table), len(allowed))
            if p.fetch_k < bound:
                p = p._replace(fetch_k=_grown(p.fetch_k, bound))
                continue
        if not hits:
            return SearchHits.empty(_why_empty(loaded, query, qvec, allowed, p))
        return SearchHits(hits)


def _search_fetch(
    c: Corpus,
    loaded: _Loaded,
    snap: Snapshot | None,
    query: str,
    qvec: np.ndarray | None,
    allowed: Any,
    p: _Params,
) -> tuple[list[SearchHit], bool]:
    """One pass of :func:`_search_loaded` with ``p.fetch_k`` candidates per
    index (``qvec`` already embedded): the hits, and whether a candidate
    list was cut at ``fetch_k`` (an index returned all it was asked for, or
    the fused list was longer), so that more candidates could follow."""
    table = loaded.records
    assert table is not None
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
            threads = 1 if loaded.dense_size < PARALLEL_SCAN_MIN else 0
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
        return _dense_hits(c, table, d_ids, d_sc, answered_dense, p), cut
    dense = _ranked(table, d_ids, d_sc)
    if want_lex:
        res = loaded.lexical.search(query, p.fetch_k, filter=allowed)
        lex = _ranked(table, res.ids, res.scores)
        cut = cut or len(lex.ids) >= p.fetch_k
    else:
        lex = _ranked(table, _NO_IDS, _NO_IDS)
    cands = _fuse(loaded, table, query, qvec, dense, lex, p)
    if not len(cands.ids):
        return [], False
    cut = cut or len(cands.ids) > p.fetch_k
    if p.weights:
        w = np.array([p.weights.get(kind, 1.0) for kind in table.kinds], dtype=np.float64)
        scores = cands.scores * w[table.kind[cands.pos]]
        o = table.order(cands.pos, scores)
        cands = _Ranked(cands.ids[o], scores[o], cands.pos[o])
    if p.mode == "hybrid" and p.fusion == "rrf":
        cands, known = _break_rrf_ties(loaded, table, query, qvec, dense, lex, cands, p)
    ids, scores, pos = cands.ids, cands.scores, cands.pos
    ids, scores, pos = ids[: p.fetch_k], scores[: p.fetch_k], pos[: p.fetch_k]
    if p.per_artifact:
        # the best surface of each artifact: its first in result order
        seen: set[int] = set()
        keep: list[int] = []
        for i, a in enumerate(table.art[pos].tolist()):
            if a not in seen:
                seen.add(a)
                keep.append(i)
                if len(keep) == p.k:
                    break
        ids, scores, pos = ids[keep], scores[keep], pos[keep]
    else:
        ids, scores, pos = ids[: p.k], scores[: p.k], pos[: p.k]
    id_list = ids.tolist()
    evidence: dict[int, float] = {}
    if p.mode == "hybrid" and p.fusion == "rrf":
        # RRF scores depend on ranks only, so they cannot be floored; each hit
        # carries its absolute evidence (its blend score) for floors instead
        # (the ties' evidence is already known)
        evidence = {cid: known[cid] for cid in id_list if cid in known}
        need = np.array([cid for cid in id_list if cid not in known], dtype=np.int64)
        if len(need):
            got = _blend_scores(loaded, query, qvec, dense, lex, need, p)
            evidence.update(zip(need.tolist(), got.tolist()))
    d_rank, d_scores = dense.ranks()
    l_rank, l_scores = lex.ranks()
    if table.has_text:
        fields = table.hits_fields(pos)
    else:
        rows = _rows(snap, loaded.generation, id_list)
        fields = []
        for cid in id_list:
            row = rows[cid]
            meta = json.loads(row["metadata"])
            meta.update(json.loads(row["filter_fields"]))
            fields.append(
                (row["artifact_id"], row["kind"], row["surface_index"], row["text"], meta)
            )
    hybrid = p.mode == "hybrid"
    hits = []
    for cid, score, (artifact_id, kind, surface_index, text, meta) in zip(
        id_list, scores.tolist(), fields
    ):
        # explain: which indexes returned the record, its rank and raw score
        # on each side, the surface weight, the fused score
        dr = d_rank.get(cid)
        lr = l_rank.get(cid)
        why: dict[str, Any] = {
            "mode": p.mode,
            "answered_by": ([answered_dense] if dr else []) + (["bm25"] if lr else []),
            "dense": None if dr is None else {"rank": dr, "cosine": d_scores[dr - 1]},
            "lexical": None if lr is None else {"rank": lr, "bm25": l_scores[lr - 1]},
            "surface_weight": 1.0 if not p.weights else p.weights.get(kind, 1.0),
        }
        if hybrid:
            why["fusion"] = p.fusion
            why["fused"] = score
        if p.explain and lr is not None and loaded.lexical is not None:
            why["lexical"]["terms"] = _terms(loaded.lexical, query, cid)
        if cid in evidence:
            why["evidence"] = evidence[cid]
        hits.append(new_hit(artifact_id, kind, score, text, meta, c.name, surface_index, cid, why))
    return hits, cut


def _dense_hits(
    c: Corpus,
    table: RecordTable,
    ids: np.ndarray,
    scores: np.ndarray,
    answered: str,
    p: _Params,
) -> list[SearchHit]:
    """The hits of a dense search without surface weights, from the vector
    index's candidates (best first, ties by record id) and a record table
    holding the texts: :func:`_dense_hits_reference`'s result, built in
    one compiled pass (:func:`rowvoi._hot.dense_hits`: positions,
    collapse, texts, metadata, hits). Candidates with equal scores are
    first put in result order here (:meth:`RecordTable.order`); an id the
    table lacks raises :class:`~rowvoi.errors.IndexFormatError`
    (:meth:`RecordTable.positions`)."""
    ht = table._hits
    if ht is None:
        ht = table._hit_table()
    collapse = p.per_artifact and not table.one_per_artifact
    hits: list[SearchHit] | None = _dense_hits_c(
        ht, ids, scores, None, p.k, collapse, c.name, answered, p.mode
    )
    if hits is None:
        # equal scores, an unknown id (positions raises) or unusual dtypes
        ids = np.ascontiguousarray(ids, dtype=np.int64)
        scores = np.ascontiguousarray(scores)
        if scores.dtype != np.float32:
            scores = scores.astype(np.float64)
        pos = table.positions(ids)
        o = table.order(pos, scores)
        hits = _dense_hits_c(
            ht, ids[o], scores[o], pos[o], p.k, collapse, c.name, answered, p.mode
        )
    return hits


def _dense_hits_reference(
    c: Corpus,
    table: RecordTable,
    ids: np.ndarray,
    scores: np.ndarray,
    answered: str,
    p: _Params,
) -> list[SearchHit]:
    """:func:`_dense_hits` in Python: the specification of the compiled
    builder (:func:`rowvoi._hot.dense_hits`), which the tests hold to it
    hit for hit. :func:`_search_loaded`'s steps for this case (the result
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
        o = table.order(pos, scores)
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
    mode, name = p.mode, c.name
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


def _rows(snap: Snapshot | None, generation: int, ids: list[int]) -> dict[int, dict[str, Any]]:
    """The hits' rows, read from a snapshot of their generation."""
    if snap is None or snap.generation != generation:
        raise _Stale()
    return snap.rows(ids)


def _fuse(
    loaded: _Loaded,
    table: RecordTable,
    query: str,
    qvec: np.ndarray | None,
    dense: _Ranked,
    lex: _Ranked,
    p: _Params,
) -> _Ranked:
    """The first-stage candidates with their (fused) scores, in result
    order."""
    if p.mode == "dense":
        return dense
    if p.mode == "lexical":
        return lex
    union = np.unique(np.concatenate([dense.ids, lex.ids]))
    if p.fusion == "rrf":
        # sum over the lists of 1 / (rrf_k + rank): the dense term first, as
        # floating-point addition is done in a fixed order
        acc = np.zeros(len(union), dtype=np.float64)
        acc[np.searchsorted(union, dense.ids)] += 1.0 / (
            p.rrf_k + np.arange(1, len(dense.ids) + 1)
        )
        acc[np.searchsorted(union, lex.ids)] += 1.0 / (p.rrf_k + np.arange(1, len(lex.ids) + 1))
    else:
        acc = _blend_scores(loaded, query, qvec, dense, lex, union, p)
    return _ranked(table, union, acc)


def _break_rrf_ties(
    loaded: _Loaded,
    table: RecordTable,
    query: str,
    qvec: np.ndarray | None,
    dense: _Ranked,
    lex: _Ranked,
    cands: _Ranked,
    p: _Params,
) -> tuple[_Ranked, dict[int, float]]:
    """The RRF candidates with equal scores ordered by their evidence, and
    ``{record id: evidence}`` of the records whose evidence was computed.

    An RRF score depends on ranks only, and equal scores are common: a
    record ranked (1, 2) by (dense, lexical) and one ranked (2, 1) score
    ``1 / (rrf_k + 1) + 1 / (rrf_k + 2)`` both (the sum is exact either
    way round), and so do a record only one side returned at rank ``r``
    and one only the other side returned at rank ``r``. Ranks cannot say
    which is better; the records' evidence (their blend score, as for
    floors) measures how well each actually matches, so it orders them,
    highest first; then artifact id and surface index, as for any equal
    scores. Evidence is computed only for the records that share a score
    with another and can reach the results: the records up to the one that
    completes the top ``k`` (``k`` distinct artifacts with
    ``per_artifact``), within the first ``fetch_k``, and the rest of its
    group of equal scores -- reordering a group never changes which records
    lie before its end, so groups after it cannot change the results.
    Candidates without such ties come back unchanged.
    """
    sc = cands.scores
    n = min(len(sc), p.fetch_k)
    if n < 2:
        return cands, {}
    if p.per_artifact:
        firsts = np.sort(np.unique(table.art[cands.pos[:n]], return_index=True)[1])
        last = int(firsts[p.k - 1]) if len(firsts) >= p.k else n - 1
    else:
        last = min(p.k, n) - 1
    srt = np.sort(sc)
    shared = srt[1:][srt[1:] == srt[:-1]]
    shared = shared[shared >= sc[last]]
    if not len(shared):
        return cands, {}
    tied = np.isin(sc, shared)
    tie = np.zeros(len(sc), dtype=np.float64)
    tie[tied] = _blend_scores(loaded, query, qvec, dense, lex, cands.ids[tied], p)
    o = table.order(cands.pos, sc, tie)
    known = dict(zip(cands.ids[tied].tolist(), tie[tied].tolist()))
    return _Ranked(cands.ids[o], sc[o], cands.pos[o]), known


def _blend_scores(
    loaded: _Loaded,
    query: str,
    qvec: np.ndarray | None,
    dense: _Ranked,
    lex: _Ranked,
    cids: np.ndarray,
    p: _Params,
) -> np.ndarray:
    """``alpha * cosine + (1 - alpha) * bm25 / (bm25 + sat_k)`` of each
    record id of ``cids``, each side scored exactly (a side that did not
    return a record is asked for its score; a record BM25 does not match
    scores 0)."""
    n = len(cids)
    cos = np.zeros(n, dtype=np.float64)
    bm = np.zeros(n, dtype=np.float64)
    have_cos = np.zeros(n, dtype=bool)
    have_bm = np.zeros(n, dtype=bool)
    by_id = np.argsort(cids, kind="stable")
    sorted_ids = cids[by_id]

    def place(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(indexes into cids of those ids that are in cids, which of ids)."""
        at = np.minimum(np.searchsorted(sorted_ids, ids), max(n - 1, 0))
        hit = sorted_ids[at] == ids if n else np.zeros(len(ids), dtype=bool)
        return by_id[at[hit]], hit

    at, hit = place(dense.ids)
    cos[at], have_cos[at] = dense.scores[hit], True
    at, hit = place(lex.ids)
    bm[at], have_bm[at] = lex.scores[hit], True
    need_cos = cids[~have_cos]
    if len(need_cos) and qvec is not None and loaded.dense is not None and np.any(qvec):
        flat = getattr(loaded.dense, "exact", loaded.dense)
        r = flat.rescore(qvec, need_cos, len(need_cos))
        found = r.ids >= 0
        at, hit = place(r.ids[found])
        cos[at] = r.scores[found][hit]
    need_bm = cids[~have_bm]
    if len(need_bm) and loaded.lexical is not None:
        r = loaded.lexical.search(query, len(need_bm), filter=need_bm)
        at, hit = place(np.asarray(r.ids, dtype=np.int64))
        bm[at] = np.asarray(r.scores, dtype=np.float64)[hit]
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


def records_for_artifact(
    store_or_corpus: Any, artifact_id: str, *, surface_kind: str | None = None
) -> list[Record]:
    """All stored records of an artifact, in plan order (``surface_index``).

    The sibling lookup beneath expansion: a hit names its artifact and its
    ``surface_index``; this returns every surface of that artifact, read
    from the ledger in one snapshot (never by re-deriving ids). No model
    and no index is loaded; ``vector`` is ``None``.

    Parameters
    ----------
    store_or_corpus : Corpus, CorpusStore or str
        A corpus, its store, or a corpus name.
    artifact_id : str
    surface_kind : str, optional
        Only records of this kind (a known artifact without such records
        gives ``[]``).

    Raises
    ------
    NoLedgerEntry
        The corpus has no such artifact (a ``KeyError``).
    CorpusNotFound
        No such corpus.

    Examples
    --------
    >>> from rowvoi.corpus import CorpusStore, build, from_mapping, Fields
    >>> src = from_mapping({"d1": {"title": "Wings", "body": "Lift. Drag."}},
    ...                    strategy=Fields(("title", "body")), embedder="hashing:16")
    >>> corpus = build(src, store=CorpusStore.memory())
    >>> [(r.surface_index, r.surface_kind, r.text) for r in records_for_artifact(corpus, "d1")]
    [(0, 'title', 'Wings'), (1, 'body', 'Lift. Drag.')]
    >>> records_for_artifact(corpus, "nope")
    Traceback (most recent call last):
    ...
    rowvoi.corpus.base.NoLedgerEntry: artifact 'nope' is not in the corpus at ...
    """
    if isinstance(store_or_corpus, Corpus):
        store, label = store_or_corpus.store, store_or_corpus.label
    elif isinstance(store_or_corpus, CorpusStore):
        store = store_or_corpus
        label = f"corpus {store.name!r}" if store.name else f"the corpus at {store.path}"
    elif isinstance(store_or_corpus, str):
        store = CorpusStore.local(store_or_corpus)
        label = f"corpus {store_or_corpus!r}"
    elif hasattr(store_or_corpus, "store"):
        return records_for_artifact(store_or_corpus.store, artifact_id, surface_kind=surface_kind)
    else:
        raise TypeError(
            f"expected a Corpus, CorpusStore or corpus name, not {type(store_or_corpus).__name__}"
        )
    key = ledger_key(artifact_id)
    with store.snapshot() as snap:
        entry = snap.artifact(key)
        if entry is None:
            raise NoLedgerEntry(f"artifact {key!r} is not in {label}")
        rows = snap.artifact_records(entry["aid"], surface_kind)
    out = []
    for rid, idx, kind, gran, text, meta in rows:
        m = json.loads(meta)
        m.update(entry["filter_fields"])
        out.append(
            Record(
                Record.make_id(key, kind, idx),
                key,
                kind,
                idx,
                text,
                None,
                m,
                record_id=int(rid),
                granularity=gran,
            )
        )
    return out
