"""Exact vector search in the C engine: :class:`FlatIndex`, and what both
vector indexes share (:class:`NeighborResult`, the metrics, :func:`recall_at_k`).

The approximate index, HNSW through hnswlib, is :mod:`rowvoi.index.hnsw`.

Both indexes share one interface: ``add(vectors, ids=None)``,
``search(queries, k)``, ``remove(ids)``, ``save(path)`` /
``load(path)``, ``ids()``, ``get(ids)``, ``len()`` and ``in``.  Vectors go in
as numpy arrays of shape ``(n, dim)`` (any real dtype; converted to
float32) and results come back as numpy arrays.

Conventions
-----------
* **Metrics** and the score each search returns:

  ``"cosine"`` (default)
      cosine similarity, higher first. Vectors are normalised when added,
      so :meth:`FlatIndex.get` returns unit vectors.
  ``"ip"``
      inner product, higher first.
  ``"l2"``
      squared Euclidean distance, lower first.

* **Ties** are broken by the lower id, for every thread count: the same
  inputs always give the same ranking.
* **Ids** are integers in ``0 .. 2**63 - 2``; by default they number the
  vectors from one past the largest id ever added. Adding an id that is
  already live is an error (remove it first to replace a vector).
* **Results**: ``search`` returns a :class:`NeighborResult` of ``ids`` and
  ``scores``, each ``(n_queries, n_found)`` where ``n_found = min(k,
  eligible vectors)``; a single 1-D query gives 1-D arrays.
* **Bad input** raises a ``ValueError`` naming the argument: vectors of the
  wrong dimension, NaN or infinite components, values too large for float32
  (:class:`rowvoi.errors.RangeError`), zero vectors under cosine, ``k < 1``
  -- the same errors from both indexes, for vectors and queries alike. ``k``
  larger than the index is fine (fewer results come back; nothing is
  allocated for the missing ones). Loading a damaged or foreign file raises
  :class:`rowvoi.errors.IndexFormatError`.
* **Threads**: every method of both indexes is thread-safe. Each index owns
  one phase-fair reader-writer lock (:class:`rowvoi.index._rwlock.RWLock`):
  reads (search, rescore, ids, get, ``len``, ``in``, sizes, save,
  to_bytes, pickling) share it and run concurrently with the GIL released;
  changes (add, remove, compact) take it alone, wait for running reads and
  hold back new ones, so a change is never starved by back-to-back searches
  (nor the searches by back-to-back changes). ``dim``, ``metric``,
  ``storage`` and ``rescore_factor`` never change and are read without it.
* **Files**: every file is written to a temporary sibling, fsynced and
  renamed into place (mode ``0666 & ~umask``, like any new file), so a crash
  leaves the previous index loadable; :meth:`HNSWIndex.save` publishes its
  several files at once through its manifest (see there). Temporaries left
  by a killed save are removed by the next save once their process is gone.
* **Copies**: ``pickle`` and :func:`copy.deepcopy` give an independent index
  that searches identically (through :meth:`FlatIndex.to_bytes`, the saved
  file's bytes, and hnswlib's own serialisation), so indexes can be sent to
  ``multiprocessing`` workers. Pickles are for trusted data, like every
  pickle: unpickling runs whatever the pickle names, and an HNSW pickle's
  graph goes to hnswlib's own unpickler unchecked. Indexes received from
  elsewhere travel as saved files: :meth:`FlatIndex.load`,
  :meth:`FlatIndex.from_bytes` and :meth:`HNSWIndex.load` check every byte
  before trusting it.
* **Loading** files rowvoi did not write is safe: every loader opens its
  file without blocking and reads it only if it is a regular file (a FIFO
  or device in its place is refused at once), checks every field before it
  trusts it, and raises :class:`rowvoi.errors.IndexFormatError` naming the
  file and the defect; :meth:`HNSWIndex.load` checks the graph's structure
  before hnswlib sees it (see there). ``follow_symlinks=False`` refuses a
  symbolic link in place of the file (a corpus loads its files that way).

Examples
--------
>>> import numpy as np
>>> from rowvoi.index.flat import FlatIndex
>>> index = FlatIndex(dim=3, metric="cosine")
>>> index.add(np.array([[1, 0, 0], [0, 1, 0], [1, 1, 0]]))
array([0, 1, 2])
>>> ids, scores = index.search(np.array([1.0, 0.2, 0.0]), k=2)
>>> ids
array([0, 2])
>>> np.round(scores, 3)
array([0.981, 0.832], dtype=float32)
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Iterable
from typing import Any, NamedTuple

import numpy as np

import rowvoi._status as _status
from rowvoi import _validate as _v
from rowvoi._atomic import (
    check_mode,
)
from rowvoi.errors import status_error
from rowvoi.index import _file as _indexfile, _flat
from rowvoi.index._rwlock import RWLock
from rowvoi.index.idset import IdSet, _as_id_array, as_idset

__all__ = [
    "NeighborResult",
    "FlatIndex",
    "recall_at_k",
    "METRICS",
    "STORAGES",
]

METRICS = ("cosine", "ip", "l2")
STORAGES = ("float32", "float16", "int8")


class NeighborResult(NamedTuple):
    """Ids and scores of the nearest vectors, best first, for one query
    vector or a batch of them: what :meth:`FlatIndex.search`,
    :meth:`FlatIndex.rescore` and :meth:`HNSWIndex.search` return.

    A tuple of two arrays, so ``ids, scores = index.search(q)`` unpacks it;
    a batch is two ``(n_queries, n_found)`` arrays (``n_found`` is the same
    for every query). This is deliberately not
    :class:`rowvoi.index.lexical.SearchResult`: a BM25 result is one query's
    ragged hit list with work statistics, iterated as ``(id, score)`` pairs,
    and its batch form is :class:`rowvoi.index.lexical.BatchResult` with a count
    per query. (rowvoi 0.1.0 named this class ``SearchResult`` as well.)

    Attributes
    ----------
    ids : numpy.ndarray
        int64 ids, ``(n_queries, n_found)`` (1-D for a single query).
    scores : numpy.ndarray
        float32 scores in the index's metric (see the module notes).
    """

    ids: np.ndarray
    scores: np.ndarray


# ------------------------------------------------------------------ helpers


def _threads(name: str, value: Any) -> int:
    return _v.integer(name, value, 0, 1 << 16)


def _as_matrix(name: str, x: Any, dim: int) -> tuple[np.ndarray, bool]:
    """(float32 C-contiguous (n, dim) array, was it a single 1-D vector)."""
    arr = np.asarray(x)
    if (
        arr.dtype == object
        or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool)
        or np.issubdtype(arr.dtype, np.complexfloating)
    ):
        raise TypeError(f"{name} must be a real numeric array, got dtype {arr.dtype}")
    single = arr.ndim == 1
    if single:
        arr = arr.reshape(1, -1)
    if arr.ndim != 2 or arr.shape[1] != dim:
        raise ValueError(
            f"{name} has shape {np.shape(x)}; expected (n, {dim}) or ({dim},) "
            f"for this {dim}-dimensional index"
        )
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.ascontiguousarray(arr, dtype=np.float32)
    if out.dtype != arr.dtype and not np.isfinite(out).all():
        # the first bad component: if it was finite before the conversion,
        # it overflowed -- say so, not "must be finite" (the engine names
        # NaN and infinite input itself)
        i, j = (int(v) for v in np.argwhere(~np.isfinite(out))[0])
        if np.isfinite(arr[i, j]):
            raise status_error(
                _status.E_RANGE,
                f"{name}[{i}][{j}] = {float(arr[i, j])!r} overflows float32 (largest "
                f"magnitude {float(np.finfo(np.float32).max):.8g}): scale the vectors down",
            )
    return out, single


def _as_ids(name: str, ids: Any, n: int | None = None) -> np.ndarray:
    arr = _as_id_array(name, ids)
    if n is not None and arr.shape[0] != n:
        raise ValueError(f"{name} has {arr.shape[0]} entries for {n} vectors")
    return arr


def _shape_result(ids: np.ndarray, scores: np.ndarray, single: bool) -> NeighborResult:
    if single:
        return NeighborResult(ids[0], scores[0])
    return NeighborResult(ids, scores)


def recall_at_k(found: np.ndarray, truth: np.ndarray) -> float:
    """Mean fraction of the true top-k ids that a search found.

    Parameters
    ----------
    found, truth : numpy.ndarray
        ``(n_queries, k)`` id arrays (``-1`` entries are ignored).

    Examples
    --------
    >>> import numpy as np
    >>> recall_at_k(np.array([[1, 2], [3, 9]]), np.array([[2, 1], [3, 4]]))
    0.75
    """
    found = np.atleast_2d(found)
    truth = np.atleast_2d(truth)
    if found.shape[0] != truth.shape[0]:
        raise ValueError("found and truth must have one row per query")
    hits = total = 0
    for f, t in zip(found, truth):
        t = t[t >= 0]
        hits += len(np.intersect1d(f[f >= 0], t))
        total += len(t)
    return hits / total if total else 1.0


# --------------------------------------------------------------- FlatIndex


class FlatIndex:
    """Exact (brute-force) vector index in the C engine.

    Every search scores every live vector, on several threads, so results
    are exact top-k. Optional compact storage scans float16 or int8 copies
    and re-scores a candidate pool of ``k * rescore_factor`` vectors per query
    in float32, which is faster on large indexes at a small recall risk; with
    ``exact=True`` an int8 index is still exact and still fast (inner product
    and cosine): its int8 copy, with a proven bound on each vector's
    quantisation error, rules out the vectors that cannot reach the top k,
    and the rest are scored in float32 -- the results equal a float32 scan
    of every vector, bit for bit.

    Parameters
    ----------
    dim : int
        Vector dimension (1 .. 65536).
    metric : {"cosine", "ip", "l2"}
        See the module notes.
    storage : {"float32", "float16", "int8"}
        What the scan reads. float16/int8 keep the float32 rows as well, for
        exact re-scoring.
    rescore_factor : int
        Candidate pool per result for compact storage (1 .. 1024).
    n_threads : int
        Default threads for searches; 0 means all cores.

    Notes
    -----
    Thread-safety: every method may be called from any thread at any time
    (see the module notes); searches share the index, changes take it alone
    and are never starved.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> data = rng.normal(size=(1000, 16)).astype(np.float32)
    >>> exact = FlatIndex(16, metric="ip")
    >>> _ = exact.add(data)
    >>> fast = FlatIndex(16, metric="ip", storage="int8")
    >>> _ = fast.add(data)
    >>> q = rng.normal(size=(5, 16))
    >>> bool((exact.search(q, k=10).ids == fast.search(q, k=10).ids).all())
    True
    >>> len(exact), 3 in exact
    (1000, True)
    """

    def __init__(
        self,
        dim: int,
        metric: str = "cosine",
        *,
        storage: str = "float32",
        rescore_factor: int = 8,
        n_threads: int = 0,
    ) -> None:
        dim = _v.integer("dim", dim, 1, _flat.MAX_DIM)
        _v.choice("metric", metric, METRICS)
        _v.choice("storage", storage, STORAGES)
        rescore_factor = _v.integer("rescore_factor", rescore_factor, 1, 1024)
        self.n_threads = _threads("n_threads", n_threads)
        self._setup(_flat.FlatHandle.create(dim, metric, storage, rescore_factor))

    def _setup(self, handle: Any) -> None:
        self._h = handle
        self._lock = RWLock()
        # set once by _freeze: no change ever again, so searches skip the lock
        self._frozen = False
        # fixed for the life of the handle, so read without the lock
        self._dim = int(handle.dim)
        self._metric = str(handle.metric)
        self._storage = str(handle.storage)
        self._rescore_factor = int(handle.rescore_factor)

    @classmethod
    def _wrap(cls, handle: Any, n_threads: int = 0) -> FlatIndex:
        self = cls.__new__(cls)
        self.n_threads = n_threads
        self._setup(handle)
        return self

    def __reduce__(self) -> tuple[Any, tuple[bytes, int]]:
        # pickle and copy.deepcopy: through the saved file's bytes
        return (_flat_from_state, (self.to_bytes(), self.n_threads))

    # properties --------------------------------------------------------
    @property
    def dim(self) -> int:
        """Vector dimension."""
        return self._dim

    @property
    def metric(self) -> str:
        """``"cosine"``, ``"ip"`` or ``"l2"``."""
        return self._metric

    @property
    def storage(self) -> str:
        """``"float32"``, ``"float16"`` or ``"int8"``."""
        return self._storage

    @property
    def rescore_factor(self) -> int:
        """Candidate pool per result for compact storage."""
        return self._rescore_factor

    @property
    def n_deleted(self) -> int:
        """Removed vectors whose storage :meth:`compact` would reclaim."""
        with self._lock.read():
            return int(self._h.n_deleted)

    def __len__(self) -> int:
        with self._lock.read():
            return int(self._h.size)

    def __contains__(self, id: object) -> bool:
        if isinstance(id, bool) or not isinstance(id, numbers.Integral):
            return False
        if not 0 <= int(id) <= _flat.MAX_ID:
            return False
        with self._lock.read():
            return bool(self._h.contains(int(id)))

    def __repr__(self) -> str:
        return (
            f"FlatIndex(dim={self.dim}, metric={self.metric!r}, storage={self.storage!r}, "
            f"size={len(self)})"
        )

    # mutation ----------------------------------------------------------
    def add(self, vectors: Any, ids: Any = None) -> np.ndarray:
        """Add vectors; returns their ids.

        Parameters
        ----------
        vectors : array_like
            ``(n, dim)``, or one ``(dim,)`` vector.
        ids : array_like of int, optional
            One id per vector; by default they continue after the largest id
            ever added.

        Returns
        -------
        numpy.ndarray
            The int64 ids used.

        Raises
        ------
        ValueError
            Wrong shape, NaN or infinite values, zero vectors under cosine,
            an id that is negative, repeated or already live. Nothing is added
            then.

        Examples
        --------
        >>> import numpy as np
        >>> ix = FlatIndex(2, metric="l2")
        >>> ix.add(np.eye(2), ids=[10, 20])
        array([10, 20])
        >>> ix.add([3.0, 4.0])
        array([21])
        >>> ix.add([[np.nan, 0.0]])
        Traceback (most recent call last):
        ...
        rowvoi.errors.InvalidArgumentError: RV_E_INVALID_ARG: vectors[0][0] = nan: vectors must be finite
        """
        arr, _ = _as_matrix("vectors", vectors, self.dim)
        idarr = None if ids is None else _as_ids("ids", ids, arr.shape[0])
        with self._lock.write():
            self._check_not_frozen()
            added: np.ndarray = self._h.add(arr, idarr)
        return added

    def remove(self, ids: Any) -> int:
        """Remove vectors by id; returns how many were removed.

        Raises a ``ValueError`` naming the first id that is not in the index
        (nothing is removed then). Storage is reclaimed by :meth:`compact`,
        :meth:`save` and :meth:`load`.

        Examples
        --------
        >>> import numpy as np
        >>> ix = FlatIndex(2)
        >>> _ = ix.add(np.ones((3, 2)))
        >>> ix.remove([1])
        1
        >>> ix.ids()
        array([0, 2])
        """
        idarr = _as_ids("ids", ids)
        with self._lock.write():
            self._check_not_frozen()
            removed = int(self._h.remove(idarr))
        return removed

    def compact(self) -> None:
        """Reclaim the storage of removed vectors (ids and order are kept)."""
        with self._lock.write():
            self._check_not_frozen()
            self._h.compact()

    def _freeze(self) -> None:
        """Make the index read-only for good: :meth:`add`, :meth:`remove`
        and :meth:`compact` raise ``RuntimeError`` from now on, and
        :meth:`_search_vector` skips the lock (no change can run beside
        it). For an owner that publishes the index to many searching threads
        once it is complete (a corpus's loaded generation).

        >>> ix = FlatIndex(2)
        >>> _ = ix.add([[1.0, 0.0]])
        >>> ix._freeze()
        >>> ix.add([[0.0, 1.0]])
        Traceback (most recent call last):
        ...
        RuntimeError: this FlatIndex is read-only (frozen by its owner); build a new one to change it
        """
        with self._lock.write():
            self._frozen = True

    def _check_not_frozen(self) -> None:
        if self._frozen:
            raise RuntimeError(
                "this FlatIndex is read-only (frozen by its owner); build a new one to change it"
            )

    # reading -----------------------------------------------------------
    def ids(self) -> np.ndarray:
        """Live ids in insertion order (int64)."""
        with self._lock.read():
            ids: np.ndarray = self._h.ids()
        return ids

    def get(self, ids: Any) -> np.ndarray:
        """Stored vectors of the given ids, ``(n, dim)`` float32 (unit vectors
        under cosine)."""
        idarr = _as_ids("ids", ids)
        with self._lock.read():
            rows: np.ndarray = self._h.get(idarr)
        return rows

    def search(
        self,
        queries: Any,
        k: int = 10,
        *,
        filter: IdSet | Iterable[int] | None = None,
        n_threads: int | None = None,
        exact: bool = False,
        rescore_factor: int | None = None,
    ) -> NeighborResult:
        """Top-k vectors for each query.

        Parameters
        ----------
        queries : array_like
            ``(n_queries, dim)`` or one ``(dim,)`` vector.
        k : int
            Results per query (>= 1); at most the number of eligible vectors
            come back, and buffers are sized by that, not by ``k``.
        filter : IdSet or iterable of int, optional
            Only these ids may be returned (ids not in the index are
            ignored; each must be in ``0 .. MAX_ID``). Applied inside the
            scan: only the panels of 16 rows holding an allowed vector are
            scored, so the top-k is exact among the allowed vectors and a
            small filter is cheap.
        n_threads : int, optional
            Threads for this search (0: all cores); the result is the same for
            any count.
        exact : bool
            Exact float32 results under compact storage too: int8 storage
            screens with its int8 copy and scores in float32 every vector
            the screen's error bounds cannot rule out (inner product and
            cosine; ids, order and scores are those of scoring every
            vector); float16 storage and the L2 metric scan the float32
            rows.
        rescore_factor : int, optional
            Candidate pool per result for this search (compact storage).

        Returns
        -------
        NeighborResult
            ``ids`` and ``scores``, best first; ties by lower id.

        Examples
        --------
        >>> import numpy as np
        >>> ix = FlatIndex(2, metric="ip")
        >>> _ = ix.add([[1, 0], [1, 0], [0, 1]], ids=[7, 3, 5])
        >>> ix.search([[2, 0]], k=3)
        NeighborResult(ids=array([[3, 7, 5]]), scores=array([[2., 2., 0.]], dtype=float32))
        >>> ix.search([2, 0], k=2, filter=[5, 7]).ids
        array([7, 5])
        """
        arr, single = _as_matrix("queries", queries, self.dim)
        k = _v.integer("k", k, 1)
        threads = self.n_threads if n_threads is None else _threads("n_threads", n_threads)
        rf = 0 if rescore_factor is None else _v.integer("rescore_factor", rescore_factor, 1, 1024)
        flt = as_idset(filter)
        fcap = flt._capsule() if flt is not None else None
        with self._lock.read():
            # never allocate result slots for more vectors than can be found
            cap = self._h.size if flt is None else min(self._h.size, len(flt))
            ids, scores, found = self._h.search(
                arr, min(k, max(1, cap)), threads, rf, bool(exact), fcap
            )
        return _shape_result(ids[:, :found], scores[:, :found], single)

    def _search_vector(
        self, q: np.ndarray, k: int, exact: bool, n_threads: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`search` of one query, unfiltered, for a caller that has
        checked its arguments (the corpus's hot path): ``q`` float32,
        C-contiguous, shape ``(dim,)``; ``k >= 1``; ``n_threads >= 0``. The
        engine still rejects NaN and infinite components. Same lock, same
        results as :meth:`search`.

        >>> ix = FlatIndex(2, metric="ip")
        >>> _ = ix.add([[1, 0], [0, 1]], ids=[4, 9])
        >>> ix._search_vector(np.array([0.0, 1.0], dtype=np.float32), 5, True, 1)[0]
        array([9, 4])
        """
        if self._frozen:
            # (no writer can ever run: _freeze took the write lock to set it)
            return self._h.search1(q, k, n_threads, exact)  # type: ignore[no-any-return]
        lock = self._lock
        lock.acquire_read()
        try:
            return self._h.search1(q, k, n_threads, exact)  # type: ignore[no-any-return]
        finally:
            lock.release_read()

    def _rescore_vector(
        self, q: np.ndarray, candidates: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`rescore` of one query and all its candidates, for a
        caller that has checked its arguments (the corpus's hybrid
        search): ``q`` float32, C-contiguous, shape ``(dim,)``;
        ``candidates`` int64, C-contiguous, 1-D, not empty. The ids found
        (best first; ``-1`` padding removed) and their float32 scores.
        Same lock, same results as :meth:`rescore`; an unknown id raises
        ValueError as there.

        >>> ix = FlatIndex(2, metric="ip")
        >>> _ = ix.add([[1, 0], [0, 1], [1, 1]])
        >>> ix._rescore_vector(np.array([1, 2], dtype=np.float32), np.array([0, 1]))
        (array([1, 0]), array([2., 1.], dtype=float32))
        """
        n = candidates.shape[0]
        if self._frozen:
            ids, scores, found = self._h.rescore(
                q.reshape(1, -1), candidates.reshape(1, -1), n, self.n_threads
            )
        else:
            with self._lock.read():
                ids, scores, found = self._h.rescore(
                    q.reshape(1, -1), candidates.reshape(1, -1), n, self.n_threads
                )
        m = int(found[0])
        return ids[0, :m], scores[0, :m]

    def rescore(
        self, queries: Any, candidates: Any, k: int = 10, *, n_threads: int | None = None
    ) -> NeighborResult:
        """Exact float32 scores of given candidates, best k per query.

        Parameters
        ----------
        queries : array_like
            ``(n_queries, dim)`` or ``(dim,)``.
        candidates : array_like of int
            ``(n_queries, n_cand)`` ids (``-1`` = none; repeats count once).
        k : int
            Results per query; rows have ``min(k, n_cand)`` columns (no
            query can have more results than candidates).

        Returns
        -------
        NeighborResult
            Rows shorter than that (repeated or ``-1`` candidates) are padded
            with id -1 and score NaN.

        Examples
        --------
        >>> ix = FlatIndex(2, metric="ip")
        >>> _ = ix.add([[1, 0], [0, 1], [1, 1]])
        >>> ix.rescore([[1, 2]], [[0, 1, -1]], k=3)
        NeighborResult(ids=array([[ 1,  0, -1]]), scores=array([[ 2.,  1., nan]], dtype=float32))
        """
        arr, single = _as_matrix("queries", queries, self.dim)
        cand = np.asarray(candidates)
        if cand.ndim == 1 and single:
            cand = cand.reshape(1, -1)
        if (
            cand.ndim != 2
            or cand.shape[0] != arr.shape[0]
            or not np.issubdtype(cand.dtype, np.integer)
        ):
            raise ValueError(
                f"candidates must be an integer array of shape ({arr.shape[0]}, n_cand), "
                f"got {cand.dtype} {cand.shape}"
            )
        k = min(_v.integer("k", k, 1), max(1, cand.shape[1]))
        threads = self.n_threads if n_threads is None else _threads("n_threads", n_threads)
        cand = np.ascontiguousarray(cand, dtype=np.int64)
        with self._lock.read():
            ids, scores, _ = self._h.rescore(arr, cand, k, threads)
        return _shape_result(ids, scores, single)

    # files -------------------------------------------------------------
    def save(self, path: str | os.PathLike[str], *, mode: int | None = None) -> None:
        """Write the index to ``path`` atomically (temporary sibling, fsync,
        rename, fsync of the directory; mode ``0666 & ~umask``, or exactly
        ``mode`` when given -- ``0o600``: private -- set before any byte is
        written). Only live vectors are written. A temporary left by a
        killed save is removed by the next save to the same path once its
        process is gone.

        Thread-safety: a read -- runs alongside searches; changes wait.

        Examples
        --------
        >>> import numpy as np, tempfile, os
        >>> ix = FlatIndex(3, metric="l2", storage="int8")
        >>> _ = ix.add(np.arange(12.0).reshape(4, 3))
        >>> path = os.path.join(tempfile.mkdtemp(), "dense.rvf")
        >>> ix.save(path)
        >>> back = FlatIndex.load(path)
        >>> back.storage, len(back), back.search([0, 1, 2], k=1).ids
        ('int8', 4, array([0]))
        """
        path = os.fspath(path)
        check_mode(mode)
        with self._lock.read():
            self._h.save(path, mode)

    @classmethod
    def load(
        cls, path: str | os.PathLike[str], *, n_threads: int = 0, follow_symlinks: bool = True
    ) -> FlatIndex:
        """Load an index written by :meth:`save`.

        The file is opened without blocking and must be a regular file (a
        FIFO, socket or device in its place is refused at once, nothing
        read); ``follow_symlinks=False`` refuses a symbolic link as well (a
        corpus loads its own files that way). Everything read is checked
        (magic, version, sizes, checksums) before it is trusted.

        Raises
        ------
        rowvoi.errors.IndexFormatError
            The file is truncated, altered, not a flat index, or of another
            format version.
        rowvoi.errors.RvIOError
            The file cannot be read, is not a regular file, or is a
            symbolic link and ``follow_symlinks`` is false (an
            :class:`OSError`).

        Examples
        --------
        >>> import tempfile
        >>> d = tempfile.mkdtemp(); os.mkfifo(os.path.join(d, "dense.rvf"))
        >>> FlatIndex.load(os.path.join(d, "dense.rvf"))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        rowvoi.errors.RvIOError: RV_E_IO: .../dense.rvf is a FIFO (named pipe), not a regular file: ...
        """
        threads = _threads("n_threads", n_threads)
        fd, _ = _indexfile.open_file(path, follow_symlinks=follow_symlinks)
        try:
            return cls._load_fd(fd, path, threads)
        finally:
            os.close(fd)

    @classmethod
    def _load_fd(cls, fd: int, name: str | os.PathLike[str], n_threads: int = 0) -> FlatIndex:
        """Load from an open regular file (read from its start; ``name`` is
        for messages; the caller closes ``fd``)."""
        return cls._wrap(_flat.FlatHandle.load_fd(fd, os.fspath(name)), n_threads)

    def to_bytes(self) -> bytes:
        """The bytes :meth:`save` would write (also what ``pickle`` and
        :func:`copy.deepcopy` use). :meth:`from_bytes` checks them as
        :meth:`load` checks a file; a *pickle* of an index, like every
        pickle, is for trusted data only (unpickling runs what it names).

        Examples
        --------
        >>> import copy
        >>> ix = FlatIndex(2, metric="ip")
        >>> _ = ix.add([[1, 0], [0, 1]], ids=[4, 9])
        >>> back = FlatIndex.from_bytes(ix.to_bytes())
        >>> back.ids(), copy.deepcopy(ix).search([0, 1], k=1).ids
        (array([4, 9]), array([9]))
        """
        with self._lock.read():
            return bytes(self._h.to_bytes())

    @classmethod
    def from_bytes(cls, data: bytes, *, n_threads: int = 0) -> FlatIndex:
        """Inverse of :meth:`to_bytes`; errors as :meth:`load`."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"data must be bytes, not {type(data).__name__}")
        return cls._wrap(
            _flat.FlatHandle.from_bytes(bytes(data)), _threads("n_threads", n_threads)
        )


def _flat_from_state(data: bytes, n_threads: int) -> FlatIndex:
    """Unpickle a :class:`FlatIndex` (module level, so pickle can name it)."""
    return FlatIndex.from_bytes(data, n_threads=n_threads)


# --------------------------------------------------------------- HNSWIndex

#: Version of ``hnsw.json``. Version 2 names the generation's part files;
#: version 1 (fixed names ``hnsw.bin`` and ``exact.rvf``) still loads.
