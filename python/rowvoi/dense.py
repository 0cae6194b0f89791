"""Vector indexes: exact search in the C engine, and HNSW through hnswlib.

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
* **Results**: ``search`` returns a :class:`SearchResult` of ``ids`` and
  ``scores``, each ``(n_queries, n_found)`` where ``n_found = min(k,
  eligible vectors)``; a single 1-D query gives 1-D arrays.
* **Bad input** raises a ``ValueError`` naming the argument: vectors of the
  wrong dimension, NaN or infinite components, zero vectors under cosine,
  ``k < 1``. Loading a damaged or foreign file raises
  :class:`rowvoi.errors.IndexFormatError`.

Examples
--------
>>> import numpy as np
>>> from rowvoi.dense import FlatIndex
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

import hashlib
import json
import numbers
import os
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from rowvoi import _flat
from rowvoi.errors import IndexFormatError
from rowvoi.idset import IdSet, _as_id_array, as_idset

__all__ = ["SearchResult", "FlatIndex", "HNSWIndex", "recall_at_k", "METRICS", "STORAGES",
           "FILTER_EXACT_RATIO"]

METRICS = ("cosine", "ip", "l2")
STORAGES = ("float32", "float16", "int8")


class SearchResult(NamedTuple):
    """Ids and scores of a search, best first.

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


def _check_metric(metric: str) -> str:
    if metric not in METRICS:
        raise ValueError(f"metric={metric!r}: expected one of {', '.join(METRICS)}")
    return metric


def _check_int(name: str, value: Any, lo: int, hi: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    value = int(value)
    if value < lo or (hi is not None and value > hi):
        bound = f">= {lo}" if hi is None else f"in {lo} .. {hi}"
        raise ValueError(f"{name}={value}: must be {bound}")
    return value


def _threads(name: str, value: Any) -> int:
    return _check_int(name, value, 0, 1 << 16)


def _as_matrix(name: str, x: Any, dim: int) -> tuple[np.ndarray, bool]:
    """(float32 C-contiguous (n, dim) array, was it a single 1-D vector)."""
    arr = np.asarray(x)
    if arr.dtype == object or not (
        np.issubdtype(arr.dtype, np.number) or arr.dtype == bool
    ) or np.issubdtype(arr.dtype, np.complexfloating):
        raise TypeError(f"{name} must be a real numeric array, got dtype {arr.dtype}")
    single = arr.ndim == 1
    if single:
        arr = arr.reshape(1, -1)
    if arr.ndim != 2 or arr.shape[1] != dim:
        raise ValueError(
            f"{name} has shape {np.shape(x)}; expected (n, {dim}) or ({dim},) "
            f"for this {dim}-dimensional index"
        )
    return np.ascontiguousarray(arr, dtype=np.float32), single


def _as_ids(name: str, ids: Any, n: int | None = None) -> np.ndarray:
    arr = _as_id_array(name, ids)
    if n is not None and arr.shape[0] != n:
        raise ValueError(f"{name} has {arr.shape[0]} entries for {n} vectors")
    return arr


def _shape_result(ids: np.ndarray, scores: np.ndarray, single: bool) -> SearchResult:
    if single:
        return SearchResult(ids[0], scores[0])
    return SearchResult(ids, scores)


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


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
    in float32, which is faster on large indexes at a small recall risk.

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
        dim = _check_int("dim", dim, 1, _flat.MAX_DIM)
        _check_metric(metric)
        if storage not in STORAGES:
            raise ValueError(f"storage={storage!r}: expected one of {', '.join(STORAGES)}")
        rescore_factor = _check_int("rescore_factor", rescore_factor, 1, 1024)
        self.n_threads = _threads("n_threads", n_threads)
        self._h = _flat.FlatHandle.create(dim, metric, storage, rescore_factor)

    @classmethod
    def _wrap(cls, handle: Any, n_threads: int = 0) -> FlatIndex:
        self = cls.__new__(cls)
        self._h = handle
        self.n_threads = n_threads
        return self

    # properties --------------------------------------------------------
    @property
    def dim(self) -> int:
        """Vector dimension."""
        return self._h.dim

    @property
    def metric(self) -> str:
        """``"cosine"``, ``"ip"`` or ``"l2"``."""
        return self._h.metric

    @property
    def storage(self) -> str:
        """``"float32"``, ``"float16"`` or ``"int8"``."""
        return self._h.storage

    @property
    def rescore_factor(self) -> int:
        """Candidate pool per result for compact storage."""
        return self._h.rescore_factor

    @property
    def n_deleted(self) -> int:
        """Removed vectors whose storage :meth:`compact` would reclaim."""
        return self._h.n_deleted

    def __len__(self) -> int:
        return self._h.size

    def __contains__(self, id: object) -> bool:
        if isinstance(id, bool) or not isinstance(id, numbers.Integral):
            return False
        return 0 <= int(id) <= _flat.MAX_ID and self._h.contains(int(id))

    def __repr__(self) -> str:
        return (f"FlatIndex(dim={self.dim}, metric={self.metric!r}, storage={self.storage!r}, "
                f"size={len(self)})")

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
        return self._h.add(arr, idarr)

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
        return self._h.remove(_as_ids("ids", ids))

    def compact(self) -> None:
        """Reclaim the storage of removed vectors (ids and order are kept)."""
        self._h.compact()

    # reading -----------------------------------------------------------
    def ids(self) -> np.ndarray:
        """Live ids in insertion order (int64)."""
        return self._h.ids()

    def get(self, ids: Any) -> np.ndarray:
        """Stored vectors of the given ids, ``(n, dim)`` float32 (unit vectors
        under cosine)."""
        return self._h.get(_as_ids("ids", ids))

    def search(
        self,
        queries: Any,
        k: int = 10,
        *,
        filter: IdSet | Iterable[int] | None = None,
        n_threads: int | None = None,
        exact: bool = False,
        rescore_factor: int | None = None,
    ) -> SearchResult:
        """Top-k vectors for each query.

        Parameters
        ----------
        queries : array_like
            ``(n_queries, dim)`` or one ``(dim,)`` vector.
        k : int
            Results per query (>= 1).
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
            Scan the float32 rows even under compact storage.
        rescore_factor : int, optional
            Candidate pool per result for this search (compact storage).

        Returns
        -------
        SearchResult
            ``ids`` and ``scores``, best first; ties by lower id.

        Examples
        --------
        >>> import numpy as np
        >>> ix = FlatIndex(2, metric="ip")
        >>> _ = ix.add([[1, 0], [1, 0], [0, 1]], ids=[7, 3, 5])
        >>> ix.search([[2, 0]], k=3)
        SearchResult(ids=array([[3, 7, 5]]), scores=array([[2., 2., 0.]], dtype=float32))
        >>> ix.search([2, 0], k=2, filter=[5, 7]).ids
        array([7, 5])
        """
        arr, single = _as_matrix("queries", queries, self.dim)
        k = _check_int("k", k, 1)
        threads = self.n_threads if n_threads is None else _threads("n_threads", n_threads)
        rf = 0 if rescore_factor is None else _check_int("rescore_factor", rescore_factor, 1, 1024)
        flt = as_idset(filter)
        cap = flt._capsule() if flt is not None else None
        ids, scores, found = self._h.search(arr, k, threads, rf, bool(exact), cap)
        return _shape_result(ids[:, :found], scores[:, :found], single)

    def rescore(self, queries: Any, candidates: Any, k: int = 10, *,
                n_threads: int | None = None) -> SearchResult:
        """Exact float32 scores of given candidates, best k per query.

        Parameters
        ----------
        queries : array_like
            ``(n_queries, dim)`` or ``(dim,)``.
        candidates : array_like of int
            ``(n_queries, n_cand)`` ids (``-1`` = none; repeats count once).
        k : int
            Results per query.

        Returns
        -------
        SearchResult
            Rows shorter than k (fewer candidates) are padded with id -1 and
            score NaN.

        Examples
        --------
        >>> ix = FlatIndex(2, metric="ip")
        >>> _ = ix.add([[1, 0], [0, 1], [1, 1]])
        >>> ix.rescore([[1, 2]], [[0, 1, -1]], k=3)
        SearchResult(ids=array([[ 1,  0, -1]]), scores=array([[ 2.,  1., nan]], dtype=float32))
        """
        arr, single = _as_matrix("queries", queries, self.dim)
        cand = np.asarray(candidates)
        if cand.ndim == 1 and single:
            cand = cand.reshape(1, -1)
        if cand.ndim != 2 or cand.shape[0] != arr.shape[0] or not np.issubdtype(cand.dtype, np.integer):
            raise ValueError(f"candidates must be an integer array of shape ({arr.shape[0]}, n_cand), "
                             f"got {cand.dtype} {cand.shape}")
        k = _check_int("k", k, 1)
        threads = self.n_threads if n_threads is None else _threads("n_threads", n_threads)
        ids, scores, _ = self._h.rescore(arr, np.ascontiguousarray(cand, dtype=np.int64), k, threads)
        return _shape_result(ids, scores, single)

    # files -------------------------------------------------------------
    def save(self, path: str | os.PathLike) -> None:
        """Write the index to ``path`` atomically (temporary file, fsync,
        rename). Only live vectors are written.

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
        self._h.save(os.fspath(path))

    @classmethod
    def load(cls, path: str | os.PathLike, *, n_threads: int = 0) -> FlatIndex:
        """Load an index written by :meth:`save`.

        Raises
        ------
        rowvoi.errors.IndexFormatError
            The file is truncated, altered, not a flat index, or of another
            format version.
        OSError
            The file cannot be read.
        """
        return cls._wrap(_flat.FlatHandle.load(os.fspath(path)), _threads("n_threads", n_threads))


# --------------------------------------------------------------- HNSWIndex

_HNSW_FORMAT = 1
_HNSW_SPACE = {"cosine": "cosine", "ip": "ip", "l2": "l2"}

#: :meth:`HNSWIndex.filter_route`: a filter allowing ``m`` ids of an index
#: of ``n`` is answered by the exact twin when ``m * m <= FILTER_EXACT_RATIO
#: * n``.  A filtered graph walk costs about ``c_walk * n / m`` (it visits
#: nodes until ``ef`` allowed ones turn up), the exact scan about ``c_scan *
#: m`` (one float32 row per allowed vector); they cross at ``m =
#: sqrt(c_walk / c_scan * n)``.  ``bench/filters.py`` measured ``c_walk /
#: c_scan`` ~ 580 on 50,000 384-d vectors (M=16, ef=64): the switch at
#: ~5,400 allowed (11%); the model puts it at ~24,000 of 1,000,000 (2.4%).
FILTER_EXACT_RATIO: float = 580.0


def _import_hnswlib() -> Any:
    try:
        import hnswlib
    except ImportError as exc:  # pragma: no cover - hnswlib is a dependency
        raise ImportError(
            "HNSWIndex needs the hnswlib package: pip install hnswlib "
            "(set HNSWLIB_NO_NATIVE=1 when building it for other machines)"
        ) from exc
    return hnswlib


class HNSWIndex:
    """Approximate nearest neighbours with hnswlib, behind the FlatIndex
    interface.

    The graph lives in hnswlib; a :class:`FlatIndex` twin holds the same
    vectors for ``exact_rescore``, :meth:`get`, id bookkeeping and recall
    checks. The twin keeps its float32 rows row by row (``storage="int8"``,
    which adds an int8 scan copy of a quarter of that size), so re-scoring a
    candidate reads just that vector; search it with ``exact=True`` for exact
    answers. Vectors are thus held about 2.25 times in all.

    Parameters
    ----------
    dim : int
        Vector dimension.
    metric : {"cosine", "ip", "l2"}
        Scores as for :class:`FlatIndex` (hnswlib's distances ``1 - x`` are
        turned back into similarities).
    M : int
        Graph degree (hnswlib ``M``, 2 .. 1024).
    ef_construction : int
        Candidate list size while building.
    ef : int
        Default candidate list size while searching (raised to ``k`` when
        smaller).
    seed : int
        hnswlib's random seed for the level of each element.
    max_elements : int
        Initial capacity; grows automatically.
    n_threads : int
        Threads used by :meth:`add`. The default, 1, makes the graph (and so
        every result) deterministic; more threads build faster but insert in
        a varying order.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> data = rng.normal(size=(2000, 32)).astype(np.float32)
    >>> hnsw = HNSWIndex(32, metric="cosine", M=16, ef_construction=100, ef=50, seed=7)
    >>> _ = hnsw.add(data)
    >>> exact = FlatIndex(32, metric="cosine")
    >>> _ = exact.add(data)
    >>> q = rng.normal(size=(50, 32))
    >>> recall_at_k(hnsw.search(q, k=10).ids, exact.search(q, k=10).ids) > 0.9
    True
    >>> bool((hnsw.search(q, k=10, exact_rescore=200).ids == exact.search(q, k=10).ids).all())
    True
    """

    def __init__(
        self,
        dim: int,
        metric: str = "cosine",
        *,
        M: int = 16,
        ef_construction: int = 200,
        ef: int = 64,
        seed: int = 100,
        max_elements: int = 1024,
        n_threads: int = 1,
    ) -> None:
        hnswlib = _import_hnswlib()
        dim = _check_int("dim", dim, 1, _flat.MAX_DIM)
        _check_metric(metric)
        self.M = _check_int("M", M, 2, 1024)
        self.ef_construction = _check_int("ef_construction", ef_construction, 1)
        self.ef = _check_int("ef", ef, 1)
        self.seed = _check_int("seed", seed, 0, 2**63 - 1)
        max_elements = _check_int("max_elements", max_elements, 1)
        self.n_threads = _threads("n_threads", n_threads)
        self._exact = FlatIndex(dim, metric, storage="int8")
        self._g = hnswlib.Index(space=_HNSW_SPACE[metric], dim=dim)
        self._g.init_index(max_elements=max_elements, M=self.M,
                           ef_construction=self.ef_construction, random_seed=self.seed)

    # properties --------------------------------------------------------
    @property
    def dim(self) -> int:
        """Vector dimension."""
        return self._exact.dim

    @property
    def metric(self) -> str:
        """``"cosine"``, ``"ip"`` or ``"l2"``."""
        return self._exact.metric

    @property
    def exact(self) -> FlatIndex:
        """The flat twin holding the same vectors (int8 scan copy; pass
        ``exact=True`` to its search for exact answers)."""
        return self._exact

    def __len__(self) -> int:
        return len(self._exact)

    def __contains__(self, id: object) -> bool:
        return id in self._exact

    def __repr__(self) -> str:
        return (f"HNSWIndex(dim={self.dim}, metric={self.metric!r}, M={self.M}, "
                f"ef_construction={self.ef_construction}, ef={self.ef}, size={len(self)})")

    def ids(self) -> np.ndarray:
        """Live ids in insertion order."""
        return self._exact.ids()

    def get(self, ids: Any) -> np.ndarray:
        """Stored vectors (unit vectors under cosine)."""
        return self._exact.get(ids)

    # mutation ----------------------------------------------------------
    def add(self, vectors: Any, ids: Any = None) -> np.ndarray:
        """Add vectors to the graph and the exact twin; returns their ids.

        Same rules as :meth:`FlatIndex.add`; a removed id may be added again.

        Examples
        --------
        >>> import numpy as np
        >>> h = HNSWIndex(2, metric="l2")
        >>> h.add(np.eye(2))
        array([0, 1])
        >>> h.remove([0]); h.add([[5.0, 5.0]], ids=[0])
        1
        array([0])
        >>> h.search([5, 5], k=1)
        SearchResult(ids=array([0]), scores=array([0.], dtype=float32))
        """
        arr, _ = _as_matrix("vectors", vectors, self.dim)
        idarr = None if ids is None else _as_ids("ids", ids, arr.shape[0])
        assigned = self._exact.add(arr, idarr)  # validates everything first
        if len(assigned) == 0:
            return assigned
        try:
            need = self._g.get_current_count() + len(assigned)
            if need > self._g.get_max_elements():
                self._g.resize_index(max(need, 2 * self._g.get_max_elements()))
            # hnswlib normalises cosine vectors itself; give it the same unit
            # vectors the exact twin holds so both score identically.
            data = self._exact.get(assigned) if self.metric == "cosine" else arr
            self._g.add_items(data, assigned.astype(np.uint64),
                              num_threads=self.n_threads or -1)
        except BaseException:
            self._exact.remove(assigned)
            raise
        return assigned

    def remove(self, ids: Any) -> int:
        """Remove vectors by id (hnswlib marks them deleted)."""
        idarr = _as_ids("ids", ids)
        n = self._exact.remove(idarr)
        for i in idarr:
            self._g.mark_deleted(int(i))
        return n

    # search ------------------------------------------------------------
    def filter_route(self, n_allowed: int) -> str:
        """Which search answers a filter that allows ``n_allowed`` ids.

        ``"exact"`` -- the exact twin, scanning only the allowed vectors,
        exact top-k -- when ``n_allowed ** 2 <= FILTER_EXACT_RATIO *
        len(self)``, else ``"hnsw"`` (hnswlib's walk with a filter
        callback). With few allowed nodes a walk visits many disallowed ones
        before it finds ``ef`` allowed, while the exact scan costs one panel
        of 16 vectors per allowed vector; ``bench/filters.py`` measured where
        the two cross (``bench/results/filters.md``).

        Examples
        --------
        >>> h = HNSWIndex(8)
        >>> _ = h.add(np.random.default_rng(0).normal(size=(1000, 8)))
        >>> h.filter_route(10), h.filter_route(900)
        ('exact', 'hnsw')
        """
        n_allowed = _check_int("n_allowed", n_allowed, 0)
        return "exact" if n_allowed * n_allowed <= FILTER_EXACT_RATIO * len(self) else "hnsw"

    def _to_scores(self, dist: np.ndarray) -> np.ndarray:
        if self.metric == "l2":
            return dist.astype(np.float32)
        return (1.0 - dist).astype(np.float32)

    def search(
        self,
        queries: Any,
        k: int = 10,
        *,
        ef: int | None = None,
        filter: IdSet | Iterable[int] | None = None,
        n_threads: int | None = None,
        exact_rescore: bool | int = False,
    ) -> SearchResult:
        """Approximate top-k for each query.

        Parameters
        ----------
        queries : array_like
            ``(n_queries, dim)`` or ``(dim,)``.
        k : int
            Results per query.
        ef : int, optional
            Candidate list size for this search (default: the index's
            ``ef``); raised to the number of results asked of the graph.
        filter : IdSet or iterable of int, optional
            Only these ids may be returned. A filter of at most
            :meth:`filter_route` ``"exact"`` size is answered by the exact
            twin (exact top-k, and cheaper than walking a graph where few
            nodes qualify); a larger one by hnswlib's filter callback. When
            the graph cannot reach k allowed vectors, the exact twin answers
            too.
        n_threads : int, optional
            Query threads (0: all cores); each query is independent, so the
            result does not depend on it.
        exact_rescore : bool or int
            Ask the graph for a larger pool of candidates (``True``: ``max(4k,
            2 ef)``; an int: that many) searched with ``ef >= pool``, then rank
            the pool by exact float32 scores with the flat index's tie rule.
            The wider pool is what lifts recall; the re-scoring makes the
            ranking and scores identical to the exact index for every vector
            in the pool.

        Returns
        -------
        SearchResult
        """
        arr, single = _as_matrix("queries", queries, self.dim)
        k = _check_int("k", k, 1)
        ef_q = self.ef if ef is None else _check_int("ef", ef, 1)
        threads = self.n_threads if n_threads is None else _threads("n_threads", n_threads)
        flt = as_idset(filter)
        n_avail = len(self)
        if flt is not None:
            if self.filter_route(len(flt)) == "exact":
                return self._exact.search(arr[0] if single else arr, k, filter=flt,
                                          n_threads=threads, exact=True)
            n_avail = min(n_avail, len(flt))  # hnswlib raises if fewer qualify
        if exact_rescore is True:
            pool = max(4 * k, 2 * ef_q)
        elif exact_rescore is False or exact_rescore is None:
            pool = k
        else:
            pool = _check_int("exact_rescore", exact_rescore, 1)
            pool = max(pool, k)
        pool = min(pool, n_avail)
        kk = min(k, n_avail)
        if kk == 0:
            empty = np.empty((arr.shape[0], 0))
            return _shape_result(empty.astype(np.int64), empty.astype(np.float32), single)
        self._g.set_ef(max(ef_q, pool))
        fn: Callable[[int], bool] | None = None
        if flt is not None:
            fn = flt.as_frozenset().__contains__
        try:
            labels, dist = self._g.knn_query(arr, k=pool, num_threads=threads or -1, filter=fn)
        except RuntimeError:
            # hnswlib could not collect `pool` results (a tight filter or a
            # graph cut off by deletions): answer exactly instead.
            return self._exact.search(arr[0] if single else arr, k, filter=flt,
                                      n_threads=threads, exact=True)
        labels = labels.astype(np.int64)
        if pool > k or exact_rescore:
            return self._exact.rescore(arr[0] if single else arr,
                                       labels[0] if single else labels, kk, n_threads=threads)
        return _shape_result(labels, self._to_scores(dist), single)

    # files -------------------------------------------------------------
    def save(self, path: str | os.PathLike) -> None:
        """Write the index into directory ``path``: ``hnsw.bin`` (hnswlib),
        ``exact.rvf`` (the exact twin) and ``hnsw.json`` (parameters and a
        SHA-256 of ``hnsw.bin``, written last). Each file is written to a
        temporary name and renamed into place.

        Examples
        --------
        >>> import numpy as np, tempfile
        >>> h = HNSWIndex(4, metric="ip", M=8, seed=3)
        >>> _ = h.add(np.arange(40.0).reshape(10, 4))
        >>> d = tempfile.mkdtemp()
        >>> h.save(d)
        >>> back = HNSWIndex.load(d)
        >>> back.M, len(back), back.search([1, 1, 1, 1], k=2).ids
        (8, 10, array([9, 8]))
        """
        d = Path(path)
        d.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix="hnsw.bin.tmp-", dir=d)
        os.close(fd)
        try:
            self._g.save_index(tmp)
            with open(tmp, "rb") as fh:
                digest = hashlib.sha256()
                for block in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(block)
                os.fsync(fh.fileno())
            os.replace(tmp, d / "hnsw.bin")
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        self._exact.save(d / "exact.rvf")
        meta = {
            "format": "rowvoi-hnsw",
            "format_version": _HNSW_FORMAT,
            "dim": self.dim,
            "metric": self.metric,
            "M": self.M,
            "ef_construction": self.ef_construction,
            "ef": self.ef,
            "seed": self.seed,
            "max_elements": int(self._g.get_max_elements()),
            "element_count": int(self._g.get_current_count()),
            "size": len(self),
            "hnsw_sha256": digest.hexdigest(),
        }
        _atomic_write_bytes(d / "hnsw.json", json.dumps(meta, indent=1).encode())

    @classmethod
    def load(cls, path: str | os.PathLike, *, n_threads: int = 1) -> HNSWIndex:
        """Load an index written by :meth:`save`.

        Raises
        ------
        rowvoi.errors.IndexFormatError
            A file is missing, altered or of another format version (the
            graph file is checked against its SHA-256 before hnswlib reads
            it).
        """
        hnswlib = _import_hnswlib()
        d = Path(path)
        try:
            meta = json.loads((d / "hnsw.json").read_text())
        except FileNotFoundError as exc:
            raise IndexFormatError(f"{d}: no hnsw.json; not a saved HNSWIndex", 6,
                                   "RV_E_CORRUPT") from exc
        except (ValueError, UnicodeDecodeError) as exc:
            raise IndexFormatError(f"{d / 'hnsw.json'}: not valid JSON ({exc})", 6,
                                   "RV_E_CORRUPT") from exc
        keys = ("format", "format_version", "dim", "metric", "M", "ef_construction", "ef",
                "seed", "max_elements", "element_count", "size", "hnsw_sha256")
        if not isinstance(meta, dict) or meta.get("format") != "rowvoi-hnsw" or any(
                key not in meta for key in keys):
            raise IndexFormatError(f"{d / 'hnsw.json'}: not a rowvoi HNSW description", 6,
                                   "RV_E_CORRUPT")
        if meta["format_version"] != _HNSW_FORMAT:
            raise IndexFormatError(
                f"{d}: HNSW format version {meta['format_version']}; this rowvoi reads "
                f"version {_HNSW_FORMAT}", 7, "RV_E_VERSION")
        graph = d / "hnsw.bin"
        try:
            with open(graph, "rb") as fh:
                digest = hashlib.sha256()
                for block in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(block)
        except FileNotFoundError as exc:
            raise IndexFormatError(f"{graph}: missing", 6, "RV_E_CORRUPT") from exc
        if digest.hexdigest() != meta["hnsw_sha256"]:
            raise IndexFormatError(f"{graph}: checksum mismatch (altered or truncated)", 6,
                                   "RV_E_CORRUPT")
        exact = FlatIndex.load(d / "exact.rvf")
        if exact.dim != meta["dim"] or exact.metric != meta["metric"] or len(exact) != meta["size"]:
            raise IndexFormatError(f"{d}: exact.rvf does not match hnsw.json", 6, "RV_E_CORRUPT")
        self = cls.__new__(cls)
        self.M, self.ef_construction, self.ef = meta["M"], meta["ef_construction"], meta["ef"]
        self.seed = meta["seed"]
        self.n_threads = _threads("n_threads", n_threads)
        self._exact = exact
        self._g = hnswlib.Index(space=_HNSW_SPACE[meta["metric"]], dim=meta["dim"])
        self._g.load_index(str(graph), max_elements=int(meta["max_elements"]))
        if self._g.get_current_count() != meta["element_count"]:
            raise IndexFormatError(f"{graph}: element count does not match hnsw.json", 6,
                                   "RV_E_CORRUPT")
        return self
