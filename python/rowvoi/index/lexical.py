"""BM25 lexical search: an inverted index in C, searched top-k.

:class:`BM25Index` analyses documents with an :class:`~rowvoi.index.text.Analyzer`
(recorded in the index and in saved files, so queries are analysed the same
way), keeps posting lists with term frequencies, and answers top-k queries
with MaxScore dynamic pruning -- which returns exactly what scoring every
posting would (``exhaustive=True`` does that, for checking).

Conventions
-----------
* **Document ids** are the caller's: ``add(documents, ids=[...])`` files
  each document under an ``int64`` id in ``0 .. MAX_ID`` (a corpus passes
  its record ids), as :meth:`rowvoi.index.flat.FlatIndex.add` does. Without
  ``ids`` the documents get the next ids: one past the largest id ever
  added, so ``0, 1, 2, ...`` for an index fed without ids. Results,
  :meth:`~BM25Index.explain`, :meth:`~BM25Index.doc` and
  :meth:`~BM25Index.delete` speak these ids.
* **Scores** are ``float32``; results come in score order, ties broken by
  the lower id. Only documents containing at least one query term are
  returned, so fewer than ``k`` results is normal, and a query without a
  known term returns an empty result (not an error).
* **Variants** (``variant=``): ``"lucene"`` (default), ``"robertson"``,
  ``"atire"``, ``"bm25l"`` and ``"bm25+"``, with ``k1`` (>= 0), ``b`` (in
  [0, 1]) and, for BM25L/BM25+, ``delta`` (default 0.5 / 1.0). The formulas
  are in ``include/rowvoi/bm25.h``; Lucene's matches ``bm25s``'s ``lucene``
  method weight for weight.
* **Empty documents** (or only stopwords) get an id and count in the
  statistics but never match.
* **Changes are incremental**: an add indexes only the new documents, a
  delete takes a document out of the results *and* the statistics (N,
  document frequencies, average length) at once, so scores always equal
  those of an index built from the live documents alone. A deleted id may
  be added again with new text. :meth:`BM25Index.compact` only reclaims the
  memory of deleted documents; it changes no score and no id.
* **Filters**: ``search(..., filter=ids)`` ranks only documents whose id is
  in ``ids`` (an :class:`rowvoi.index.idset.IdSet` or any iterable of ids), inside
  the kernel, so the top-k is exact and a small filter is cheap.
* **Threads**: a :class:`BM25Index` may be shared between threads; every
  method is thread-safe. Each index owns one phase-fair reader-writer lock
  (:class:`rowvoi.index._rwlock.RWLock`): reads (searches, explain, sizes,
  statistics, documents, vocabulary, save, to_bytes, pickling) share it and
  run concurrently with the GIL released; changes (add, delete, compact,
  set_params) take it alone, wait for running reads and hold back new ones,
  so a change is never starved by back-to-back searches (nor the searches
  by back-to-back changes). :meth:`BM25Index.search_batch` also spreads its
  queries over threads and returns the same results for any ``n_threads``.
* **Copies**: ``pickle`` and :func:`copy.deepcopy` go through
  :meth:`BM25Index.to_bytes` (the saved file's bytes), so a copy is an
  independent index that searches identically, and indexes can be sent to
  ``multiprocessing`` workers. Pickles are for trusted data, like every
  pickle (unpickling runs whatever the pickle names); an index received
  from elsewhere travels as a saved file or as :meth:`BM25Index.to_bytes`,
  which :meth:`BM25Index.load` and :meth:`BM25Index.from_bytes` check
  structure by structure before trusting it.

Examples
--------
>>> from rowvoi.index.lexical import BM25Index
>>> index = BM25Index()
>>> index.add(["The quick brown fox", "A lazy brown dog", "Foxes are quick"]).tolist()
[0, 1, 2]
>>> result = index.search("quick fox", k=2)
>>> result.ids.tolist(), [round(float(s), 3) for s in result.scores]
([2, 0], [0.476, 0.406])
>>> index.search("unknown words").ids.tolist()
[]
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from rowvoi import _validate as _v
from rowvoi.index import _bm25, _file as _indexfile, _idset
from rowvoi.index._rwlock import RWLock
from rowvoi.index.idset import IdSet, _as_id_array, as_idset
from rowvoi.index.text import Analyzer

__all__ = [
    "BM25Index",
    "merge_stats",
    "SearchResult",
    "BatchResult",
    "Explanation",
    "TermExplanation",
    "VARIANTS",
    "FORMAT_VERSION",
]

#: The BM25 variants, by name.
VARIANTS: tuple[str, ...] = ("lucene", "robertson", "atire", "bm25l", "bm25+")

#: On-disk format version of saved indexes.
FORMAT_VERSION: int = _bm25.FORMAT_VERSION

_DEFAULT_DELTA = {"bm25l": 0.5, "bm25+": 1.0}


@dataclass(frozen=True)
class SearchResult:
    """The top-k documents of one query.

    What :meth:`BM25Index.search` returns, and one row of a
    :class:`BatchResult`. Iterating gives ``(id, score)`` pairs. The vector
    indexes return :class:`rowvoi.index.flat.NeighborResult` instead: a pair of
    arrays shaped like the query batch, without statistics.

    Attributes
    ----------
    ids : numpy.ndarray
        Document ids (``int64``), best first.
    scores : numpy.ndarray
        Their BM25 scores (``float32``), non-increasing.
    stats : dict
        Work done: ``n_query_terms`` (distinct known terms), ``docs_scored``,
        ``postings_scored`` and ``postings_total`` (postings in the query
        terms' lists); pruning shows as ``postings_scored < postings_total``.
        With a filter, ``filter_docs`` (live documents it allows) and
        ``filter_direct`` (True when they were scored one by one).
    """

    ids: np.ndarray
    scores: np.ndarray
    stats: dict[str, Any] = field(default_factory=dict, compare=False)

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    def __iter__(self) -> Iterator[tuple[int, float]]:
        return iter(zip(self.ids.tolist(), self.scores.tolist()))


@dataclass(frozen=True)
class BatchResult:
    """Top-k of many queries, one row per query.

    Attributes
    ----------
    ids : numpy.ndarray
        ``(n_queries, k)`` ``int64``; rows are padded with ``-1``.
    scores : numpy.ndarray
        ``(n_queries, k)`` ``float32``; padded with NaN.
    counts : numpy.ndarray
        ``(n_queries,)`` number of results of each query.
    """

    ids: np.ndarray
    scores: np.ndarray
    counts: np.ndarray

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    def __getitem__(self, q: int) -> SearchResult:
        n = int(self.counts[q])
        return SearchResult(self.ids[q, :n].copy(), self.scores[q, :n].copy())


@dataclass(frozen=True)
class TermExplanation:
    """One query term's part of a score.

    ``weight`` is the single-precision BM25 weight w(t, d) of the variant and
    ``contribution = qtf * weight``.
    """

    term: str
    qtf: int
    tf: int
    df: int
    idf: float
    weight: float
    contribution: float


@dataclass(frozen=True)
class Explanation:
    """Why a document got its score for a query.

    ``terms`` lists the distinct query terms found in the index, in the
    order the score is summed (ascending term id); the contributions add up
    (in double precision, rounded to float32) to exactly ``score``, which is
    what :meth:`BM25Index.search` reports. ``unknown_terms`` are query terms
    the index has never seen (they contribute nothing).
    """

    doc_id: int
    score: float
    doc_len: int
    avgdl: float
    n_docs: int
    params: dict[str, Any]
    terms: list[TermExplanation]
    unknown_terms: list[str]

    def total(self) -> float:
        """The contributions summed as the engine sums them."""
        acc = 0.0
        for t in self.terms:
            acc += t.contribution
        return float(np.float32(acc))


def _doc_id(doc_id: Any) -> int:
    """A document id argument: an integer (ValueError if no document can
    have it)."""
    v = _v.integer("doc_id", doc_id)
    if not 0 <= v <= _bm25.MAX_ID:
        raise ValueError(f"document id {v} is not in the index")
    return v


def _check_params(variant: Any, k1: Any, b: Any, delta: Any) -> tuple[str, float, float, float]:
    variant = _v.choice("variant", variant, VARIANTS)
    k1 = _v.real("k1", k1, low=0.0, high=1e6, finite=True)
    b = _v.fraction("b", b)
    if delta is None:
        delta = _DEFAULT_DELTA.get(variant, 0.0)
    if variant in _DEFAULT_DELTA:
        delta = _v.real("delta", delta, low=0.0, high=1e6, finite=True)
    elif _v.real("delta", delta) != 0.0:
        raise ValueError(f"delta={delta!r}: only 'bm25l' and 'bm25+' take a delta")
    return variant, k1, b, float(delta)


class BM25Index:
    """An inverted index over analysed text with BM25 top-k search.

    Parameters
    ----------
    analyzer : Analyzer, optional
        How documents and queries are analysed (default :class:`Analyzer()`).
    variant : str, default "lucene"
        One of :data:`VARIANTS`.
    k1 : float, default 1.2
        Term-frequency saturation, >= 0.
    b : float, default 0.75
        Length normalisation, in [0, 1].
    delta : float, optional
        BM25L / BM25+ lower bound (default 0.5 / 1.0); other variants take
        none.

    Notes
    -----
    Thread-safety: every method may be called from any thread at any time
    (see the module notes): reads share the index's lock, changes take it
    alone and are never starved.

    Examples
    --------
    >>> index = BM25Index(k1=0.9, b=0.4)
    >>> ids = index.add(["red apples", "green apples and pears", "red cars"])
    >>> index.search("red apple").ids.tolist()
    [0, 2, 1]
    >>> index.delete([0])
    1
    >>> index.search("red apple").ids.tolist()
    [2, 1]
    >>> index.n_docs, len(index)
    (3, 2)

    Caller ids and filters:

    >>> shop = BM25Index()
    >>> shop.add(["red shoes", "red hat", "blue shoes"], ids=[101, 205, 307]).tolist()
    [101, 205, 307]
    >>> shop.search("red shoes").ids.tolist()
    [101, 205, 307]
    >>> shop.search("red shoes", filter=[205, 307]).ids.tolist()
    [205, 307]
    """

    __slots__ = ("_core", "_lock")

    def __init__(
        self,
        analyzer: Analyzer | None = None,
        *,
        variant: str = "lucene",
        k1: float = 1.2,
        b: float = 0.75,
        delta: float | None = None,
    ):
        if analyzer is None:
            analyzer = Analyzer()
        if not isinstance(analyzer, Analyzer):
            raise TypeError(
                f"analyzer must be a rowvoi.index.text.Analyzer, not {type(analyzer).__name__}"
            )
        variant, k1, b, delta = _check_params(variant, k1, b, delta)
        self._core = _bm25.BM25Core.create(analyzer._engine_options(), variant, k1, b, delta)
        self._lock = RWLock()

    @classmethod
    def _wrap(cls, core: Any) -> BM25Index:
        self = cls.__new__(cls)
        self._core = core
        self._lock = RWLock()
        return self

    def __reduce__(self) -> tuple[Any, tuple[bytes]]:
        # pickle and copy.deepcopy: through the saved file's bytes
        return (BM25Index.from_bytes, (self.to_bytes(),))

    # ------------------------------------------------------------- building
    def add(self, documents: Iterable[str | bytes], ids: Any = None) -> np.ndarray:
        """Analyse and index documents; returns their ids (``int64``).

        Parameters
        ----------
        documents : iterable of str or bytes
            The texts (``bytes`` are UTF-8).
        ids : array_like of int, optional
            One id per document, each in ``0 .. MAX_ID``, distinct and not
            live in the index (a deleted id may come back with new text). By
            default the documents get the next ids: one past the largest id
            ever added.

        Cost is proportional to the new documents (their postings), not to
        the index. All or nothing: if anything fails -- an id that is
        negative, repeated or already live (:class:`ValueError` naming it),
        ``bytes`` that are not valid UTF-8 under ``on_invalid_utf8="error"``
        (the :class:`ValueError` names the document and byte offset) --
        nothing is added.

        Examples
        --------
        >>> index = BM25Index()
        >>> index.add(["alpha", ""]).tolist(), index.add(["beta"]).tolist()
        ([0, 1], [2])
        >>> index.add(["gamma"], ids=[40]).tolist(), index.add(["delta"]).tolist()
        ([40], [41])
        """
        docs = _v.texts("documents", documents)
        idarr = None
        if ids is not None:
            idarr = _as_id_array("ids", ids)
            if idarr.shape[0] != len(docs):
                raise ValueError(f"ids has {idarr.shape[0]} entries for {len(docs)} documents")
        with self._lock.write():
            added: np.ndarray = self._core.add(docs, idarr)
        return added

    def delete(self, ids: Iterable[int] | int) -> int:
        """Delete documents by id; returns how many were deleted.

        They leave the results and the statistics at once. Raises
        :class:`ValueError` naming the first id that is not live (unknown or
        already deleted) or an id given twice; nothing is deleted then.

        >>> index = BM25Index()
        >>> _ = index.add(["apple pie", "apple tart"], ids=[7, 8])
        >>> index.delete([7]), 7 in index, 8 in index
        (1, False, True)
        """
        arr = np.atleast_1d(np.asarray(ids))
        if arr.size and not np.issubdtype(arr.dtype, np.integer):
            raise TypeError(f"ids must be integers, not {arr.dtype}")
        arr = arr.astype(np.int64).ravel()
        with self._lock.write():
            return int(self._core.delete(np.ascontiguousarray(arr)))

    def compact(self) -> None:
        """Reclaim the memory of deleted documents (their postings).

        Ids, statistics and scores do not change: deleted documents left the
        statistics when they were deleted. O(index).

        >>> index = BM25Index()
        >>> _ = index.add(["apple pie", "apple tart", "cherry pie"])
        >>> _ = index.delete([1])
        >>> before = index.search("apple").scores.tolist()
        >>> index.compact()
        >>> index.search("apple").scores.tolist() == before, index.n_docs
        (True, 2)
        """
        with self._lock.write():
            self._core.compact()

    def set_params(
        self,
        *,
        variant: str | None = None,
        k1: float | None = None,
        b: float | None = None,
        delta: float | None = None,
    ) -> None:
        """Change the scoring parameters (no re-indexing needed).

        >>> index = BM25Index()
        >>> index.set_params(variant="bm25+")
        >>> index.params
        {'variant': 'bm25+', 'k1': 1.2, 'b': 0.75, 'delta': 1.0}
        """
        with self._lock.write():
            cur = self._core.params()
            variant = cur["variant"] if variant is None else variant
            if delta is None and variant == cur["variant"] and variant in _DEFAULT_DELTA:
                delta = cur["delta"]
            v, k1_, b_, d = _check_params(
                variant, cur["k1"] if k1 is None else k1, cur["b"] if b is None else b, delta
            )
            self._core.set_params(v, k1_, b_, d)

    # ------------------------------------------------ collection statistics
    def own_stats(self) -> dict[str, Any]:
        """This index's own BM25 statistics, as a shard of a collection
        contributes them: ``{"n_docs": live documents, "total_len": their
        summed lengths (terms), "df": {term: live documents containing
        it}}`` (terms with df 0 left out). Summed over the shards of a
        collection (:func:`merge_stats`), they are the statistics one index
        over all of its documents would have.

        >>> index = BM25Index()
        >>> _ = index.add(["cats purr", "dogs bark", "cats and dogs"])
        >>> index.own_stats()
        {'n_docs': 3, 'total_len': 6, 'df': {'cat': 2, 'purr': 1, 'dog': 2, 'bark': 1}}
        """
        with self._lock.read():
            info = self._core.info()
            n_live = int(info["n_live"])
            total = int(info["total_len"])
            dfs = self._core.doc_freqs()
            vocab = self._core.vocabulary()
        df = {t: int(d) for t, d in zip(vocab, dfs.tolist()) if d}
        return {"n_docs": n_live, "total_len": total, "df": df}

    def set_collection_stats(self, stats: Mapping[str, Any] | None) -> None:
        """Score with a collection's statistics (this index one shard of
        it), so that scores equal those of one index over the whole
        collection; ``None``: back to the index's own.

        ``stats`` is :meth:`own_stats` summed over the collection's shards
        (:func:`merge_stats`): ``n_docs`` (N), ``total_len`` (avgdl =
        total_len / N) and ``df`` ({term: documents containing it}; every
        term of this index must be there). They hold until the index
        changes (:meth:`add`, :meth:`delete`, :meth:`compact`,
        :meth:`set_params` return it to its own statistics).

        Raises
        ------
        ValueError
            Statistics that cannot cover this index: fewer documents, a
            shorter total length, a term missing or with a df below this
            index's or above N.

        Examples
        --------
        >>> a, b = BM25Index(), BM25Index()
        >>> _ = a.add(["cats purr", "dogs bark"]); _ = b.add(["cats and dogs"])
        >>> whole = BM25Index(); _ = whole.add(["cats purr", "dogs bark", "cats and dogs"])
        >>> stats = merge_stats([a.own_stats(), b.own_stats()])
        >>> a.set_collection_stats(stats)
        >>> a.search("cats").scores.tolist() == whole.search("cats", k=1).scores.tolist()
        True
        """
        if stats is None:
            with self._lock.write():
                self._core.set_collection_stats(0, 0, None)
            return
        if not isinstance(stats, Mapping):
            raise TypeError(f"stats must be a mapping (see own_stats), not {type(stats).__name__}")
        missing = {"n_docs", "total_len", "df"} - set(stats)
        if missing:
            raise ValueError(f"stats lacks {', '.join(sorted(missing))} (see own_stats)")
        n_docs = _v.integer("stats['n_docs']", stats["n_docs"], 1)
        total = _v.integer("stats['total_len']", stats["total_len"], 0)
        df = stats["df"]
        if not isinstance(df, Mapping):
            raise TypeError("stats['df'] must be a mapping {term: document frequency}")
        with self._lock.write():
            vocab = self._core.vocabulary()
            own = self._core.doc_freqs()
            arr = np.zeros(len(vocab), dtype=np.uint64)
            for t, (term, d) in enumerate(zip(vocab, own.tolist())):
                g = df.get(term)
                if g is None:
                    if d:
                        raise ValueError(
                            f"stats['df'] lacks the term {term!r} of this index: collection "
                            "statistics must be summed over every shard, this one included"
                        )
                    continue
                if type(g) is not int:
                    g = _v.integer(f"stats['df'][{term!r}]", g, 0)
                if g < 0:
                    raise ValueError(f"stats['df'][{term!r}] = {g}: must be >= 0")
                arr[t] = g
            try:
                self._core.set_collection_stats(n_docs, total, arr)
            except (ValueError, IndexError) as exc:
                raise ValueError(f"collection statistics do not cover this index: {exc}") from None

    # --------------------------------------------------------------- search
    def search(
        self,
        query: str | bytes,
        k: int = 10,
        *,
        filter: IdSet | Iterable[int] | None = None,
        exhaustive: bool = False,
    ) -> SearchResult:
        """The top ``k`` documents for a query (score desc, id asc).

        ``filter`` (an :class:`~rowvoi.index.idset.IdSet` or iterable of ids)
        ranks only documents whose id is in it; the top-k is exact among
        them (ids not in the index are ignored). ``exhaustive=True`` scores
        every posting instead of pruning; the result is identical, only
        slower.

        >>> index = BM25Index()
        >>> _ = index.add(["cats purr", "dogs bark", "cats and dogs"])
        >>> index.search("cats", k=5).ids.tolist()
        [0, 2]
        >>> index.search("cats", k=5, filter=[1, 2]).ids.tolist()
        [2]
        >>> index.search("", k=5).ids.tolist()
        []
        """
        _v.text("query", query)
        flt = as_idset(filter)
        k = _v.integer("k", k, 1)
        cap = flt._capsule() if flt is not None else None
        ids, scores, stats = self._search_locked(query, k, bool(exhaustive), cap)
        return SearchResult(ids, scores, cast(dict[str, Any], stats))

    def _search_locked(self, query: str | bytes, k: int, exhaustive: bool, cap: Any) -> Any:
        """The engine's search of checked arguments under the read lock
        (taken without a context manager: a search's hot path), ``k``
        capped at the live documents (no buffers larger than the index):
        ``(ids, scores, stats)``."""
        lock = self._lock
        lock.acquire_read()
        try:
            k = min(k, max(1, self._n_live()))
            return self._core.search(query, k, exhaustive, cap)
        finally:
            lock.release_read()

    def _scores_of(self, query: str, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``search(query, len(ids), filter=ids)``'s ids and scores, for a
        caller whose ``ids`` are checked already (int64, C-contiguous,
        1-D, not empty, every id >= 0, none repeated): the BM25 scores of
        given records (a hybrid search's evidence of those its lexical list
        lacks), without the argument checks and the result's statistics.
        Same lock, same results.

        >>> index = BM25Index()
        >>> _ = index.add(["cats purr", "dogs bark", "cats and dogs"])
        >>> index._scores_of("cats", np.array([2, 1], dtype=np.int64))[0].tolist()
        [2]
        """
        cap = _idset.IdSetCore.create(ids).capsule()
        found, scores, _ = self._search_locked(query, len(ids), False, cap)
        return found, scores

    def search_batch(
        self,
        queries: Sequence[str | bytes],
        k: int = 10,
        *,
        filter: IdSet | Iterable[int] | None = None,
        n_threads: int = 0,
        exhaustive: bool = False,
    ) -> BatchResult:
        """Search many queries on ``n_threads`` threads (0: all cores).

        Results do not depend on ``n_threads``. Rows have ``min(k, live
        documents)`` columns (at least 1): no query can return more
        documents than the index holds. ``filter`` applies to every query.

        >>> index = BM25Index()
        >>> _ = index.add(["cats purr", "dogs bark", "cats and dogs"])
        >>> r = index.search_batch(["cats", "dogs", "fish"], k=2)
        >>> r.ids.tolist(), r.counts.tolist()
        ([[0, 2], [1, 2], [-1, -1]], [2, 2, 0])
        """
        qs = _v.texts("queries", queries)
        flt = as_idset(filter)
        k = _v.integer("k", k, 1)
        n_threads = _v.integer("n_threads", n_threads, 0)
        cap = flt._capsule() if flt is not None else None
        with self._lock.read():
            k = min(k, max(1, self._n_live()))
            ids, scores, counts = self._core.search_batch(
                qs, k, bool(exhaustive), int(n_threads), cap
            )
        return BatchResult(ids, scores, counts.astype(np.int64))

    def explain(self, query: str | bytes, doc_id: int) -> Explanation:
        """Per-term contributions to one document's score for a query.

        >>> index = BM25Index()
        >>> _ = index.add(["red fish blue fish", "one fish"])
        >>> e = index.explain("blue fish", 0)
        >>> [(t.term, t.tf) for t in e.terms]
        [('fish', 2), ('blue', 1)]
        >>> e.total() == e.score == float(index.search("blue fish").scores[0])
        True
        """
        _v.text("query", query)
        doc_id = _doc_id(doc_id)
        with self._lock.read():
            rows, score, dl = self._core.explain(query, doc_id)
            info = self._core.info()
            terms = [
                TermExplanation(
                    self._core.term(t), int(qtf), int(tf), int(df), float(idf), float(w), float(c)
                )
                for (t, qtf, tf, df, idf, w, c) in rows
            ]
            unknown = []
            for tok in Analyzer._from_engine(self._core.analyzer()).tokenize(query):
                if self._core.lookup(tok) < 0 and tok not in unknown:
                    unknown.append(tok)
            params = dict(self._core.params())
        return Explanation(
            doc_id,
            float(score),
            int(dl),
            float(info["avgdl"]),
            int(info["n_stats_docs"]),
            params,
            terms,
            unknown,
        )

    # ----------------------------------------------------------- inspection
    def _n_live(self) -> int:
        # callers hold the lock
        return int(self._core.n_live())

    @property
    def analyzer(self) -> Analyzer:
        """The analyzer documents and queries go through."""
        with self._lock.read():
            return Analyzer._from_engine(self._core.analyzer())

    @property
    def params(self) -> dict[str, Any]:
        """``{"variant", "k1", "b", "delta"}``."""
        with self._lock.read():
            params: dict[str, Any] = dict(self._core.params())
        return params

    @property
    def n_docs(self) -> int:
        """Documents held: live, and deleted ones until :meth:`compact`."""
        with self._lock.read():
            return int(self._core.info()["n_docs"])

    def __len__(self) -> int:
        """Number of live (searchable) documents."""
        with self._lock.read():
            return int(self._core.info()["n_live"])

    def __contains__(self, doc_id: object) -> bool:
        """Is a live document filed under ``doc_id``?"""
        if isinstance(doc_id, bool) or not isinstance(doc_id, numbers.Integral):
            return False
        if not 0 <= int(doc_id) <= _bm25.MAX_ID:
            return False
        with self._lock.read():
            return bool(self._core.contains(int(doc_id)))

    def ids(self) -> np.ndarray:
        """Live ids (``int64``) in the order their documents were added."""
        with self._lock.read():
            ids: np.ndarray = self._core.ids()
        return ids

    def stats(self) -> dict[str, Any]:
        """Sizes and statistics: ``n_docs``, ``n_live``, ``n_tombstoned``
        (deleted, memory not yet reclaimed), ``n_stats_docs`` (N: the live
        documents), ``total_len``, ``avgdl``, ``n_terms``, ``n_postings``,
        ``n_segments``, ``memory_bytes``, ``next_id``."""
        with self._lock.read():
            info: dict[str, Any] = dict(self._core.info())
        return info

    def doc_freq(self, term: str) -> int:
        """Documents containing an analysed term (0 when unknown).

        >>> index = BM25Index()
        >>> _ = index.add(["Running fast", "runs"])
        >>> index.doc_freq("run"), index.doc_freq("running")
        (2, 0)
        """
        _v.text("term", term)
        with self._lock.read():
            t = self._core.lookup(term)
            return 0 if t < 0 else int(self._core.doc_freq(t))

    def doc(self, doc_id: int) -> tuple[int, str]:
        """``(length, state)`` of the latest document filed under ``doc_id``;
        state is ``"live"``, ``"tombstoned"`` (deleted, memory not yet
        reclaimed) or ``"purged"`` (deleted, postings dropped). Raises
        :class:`ValueError` for an id the index does not hold (deleted ids
        are forgotten by :meth:`compact`)."""
        doc_id = _doc_id(doc_id)
        with self._lock.read():
            length, state = self._core.doc(doc_id)
        return int(length), str(state)

    def vocabulary(self) -> list[str]:
        """Every term in the dictionary, by term id."""
        with self._lock.read():
            return list(self._core.vocabulary())

    # ---------------------------------------------------------- persistence
    def save(self, path: str | os.PathLike[str], *, mode: int | None = None) -> None:
        """Write the index to ``path`` atomically: a temporary sibling
        (``PATH.tmp-HOST-PID-RAND``) is written, fsynced and renamed over
        ``path``, so a crash leaves the old file or the new one, never a
        mix. The file gets mode ``0666 & ~umask`` like any new file, or
        exactly ``mode`` when given (``0o600``: private; set before any
        byte is written, whatever the umask); a temporary left by a killed
        save is removed by the next save to the same path once its process
        is gone.

        Raises ``ValueError``/``TypeError`` for a ``mode`` that is not
        permission bits (0 to ``0o777``).

        Thread-safety: a read -- runs alongside searches; changes wait.

        >>> import tempfile, os
        >>> index = BM25Index()
        >>> _ = index.add(["saved text"])
        >>> with tempfile.TemporaryDirectory() as d:
        ...     index.save(os.path.join(d, "lexical.rvx"))
        ...     BM25Index.load(os.path.join(d, "lexical.rvx")).search("text").ids.tolist()
        [0]
        """
        from rowvoi._atomic import check_mode

        check_mode(mode)
        with self._lock.read():
            self._core.save(os.fspath(path), mode)

    @classmethod
    def load(cls, path: str | os.PathLike[str], *, follow_symlinks: bool = True) -> BM25Index:
        """Read an index written by :meth:`save`.

        The file is opened without blocking and must be a regular file (a
        FIFO, socket or device in its place is refused at once, nothing
        read); ``follow_symlinks=False`` refuses a symbolic link as well (a
        corpus loads its own files that way). Every structure is checked
        before it is trusted.

        Raises :class:`rowvoi.errors.IndexFormatError` (a ``ValueError``) for
        a truncated, damaged or foreign file or another format version, and
        :class:`rowvoi.errors.RvIOError` (an :class:`OSError`) when the file
        cannot be read, is not a regular file, or is a refused symbolic link.

        >>> import os, tempfile
        >>> d = tempfile.mkdtemp(); index = BM25Index(); _ = index.add(["text"])
        >>> index.save(os.path.join(d, "real.rvx"))
        >>> os.symlink(os.path.join(d, "real.rvx"), os.path.join(d, "link.rvx"))
        >>> len(BM25Index.load(os.path.join(d, "link.rvx")))
        1
        >>> BM25Index.load(os.path.join(d, "link.rvx"), follow_symlinks=False)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        rowvoi.errors.RvIOError: RV_E_IO: .../link.rvx is a symbolic link; rowvoi does not follow ...
        """
        fd, _ = _indexfile.open_file(path, follow_symlinks=follow_symlinks)
        try:
            return cls._wrap(_bm25.BM25Core.load_fd(fd, os.fspath(path)))
        finally:
            os.close(fd)

    def to_bytes(self) -> bytes:
        """The saved file's bytes, in memory (also what ``pickle`` and
        :func:`copy.deepcopy` use). :meth:`from_bytes` checks them as
        :meth:`load` checks a file; a *pickle* of an index, like every
        pickle, is for trusted data only (unpickling runs what it names).

        >>> import pickle
        >>> index = BM25Index()
        >>> _ = index.add(["pickled text", "other words"])
        >>> pickle.loads(pickle.dumps(index)).search("text").ids.tolist()
        [0]
        """
        with self._lock.read():
            return bytes(self._core.to_bytes())

    @classmethod
    def from_bytes(cls, data: bytes) -> BM25Index:
        """Inverse of :meth:`to_bytes`; errors as :meth:`load`."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"data must be bytes, not {type(data).__name__}")
        return cls._wrap(_bm25.BM25Core.from_bytes(bytes(data)))

    def __repr__(self) -> str:
        with self._lock.read():
            p = self._core.params()
            info = self._core.info()
        return (
            f"BM25Index(n_docs={info['n_docs']}, live={info['n_live']}, "
            f"variant={p['variant']!r}, k1={p['k1']}, b={p['b']})"
        )


def merge_stats(parts: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The statistics of a collection from those of its shards
    (:meth:`BM25Index.own_stats` of each): document counts, total lengths
    and each term's document frequencies summed -- exactly the statistics
    one index over all their documents has.

    >>> merge_stats([{"n_docs": 2, "total_len": 4, "df": {"cat": 1}},
    ...              {"n_docs": 1, "total_len": 3, "df": {"cat": 1, "dog": 1}}])
    {'n_docs': 3, 'total_len': 7, 'df': {'cat': 2, 'dog': 1}}
    """
    n = total = 0
    df: dict[str, int] = {}
    for part in parts:
        n += int(part["n_docs"])
        total += int(part["total_len"])
        for term, d in part["df"].items():
            df[term] = df.get(term, 0) + int(d)
    return {"n_docs": n, "total_len": total, "df": df}
