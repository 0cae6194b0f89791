"""Approximate vector search: :class:`HNSWIndex`, HNSW graphs through hnswlib.

An :class:`HNSWIndex` keeps an exact twin (a :class:`~rowvoi.index.flat.FlatIndex`
of the same vectors) beside its graph, for exact re-scoring, filters and
recall checks. It follows the conventions of :mod:`rowvoi.index.flat`
(metrics, ids, ties, results, bad input, threads, files, copies and
loading of files rowvoi did not write), and adds one: the graph file is
checked structurally by the engine (``rv_hnsw_check``) before hnswlib reads
a byte of it (see :meth:`HNSWIndex.load`).

Examples
--------
>>> import numpy as np
>>> from rowvoi.index.hnsw import HNSWIndex
>>> index = HNSWIndex(dim=3, metric="cosine", seed=1)
>>> index.add(np.array([[1, 0, 0], [0, 1, 0], [1, 1, 0]]))
array([0, 1, 2])
>>> index.search(np.array([1.0, 0.2, 0.0]), k=2).ids
array([0, 2])
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import pickle
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

import rowvoi._status as _status
from rowvoi import _validate as _v
from rowvoi._atomic import (
    atomic_write_bytes,
    check_mode,
    create_exclusive,
    fsync_dir,
    fsync_path,
    is_stale_tag,
    owner_tag,
    private_dir,
    sha256_file,
)
from rowvoi.errors import IndexFormatError, RvIOError, status_error
from rowvoi.index import _file as _indexfile, _flat
from rowvoi.index._rwlock import RWLock
from rowvoi.index.flat import (
    METRICS,
    FlatIndex,
    NeighborResult,
    _as_ids,
    _as_matrix,
    _shape_result,
    _threads,
)
from rowvoi.index.idset import IdSet, as_idset

__all__ = [
    "HNSWIndex",
    "FILTER_EXACT_RATIO",
    "HNSW_MAX_ELEMENTS",
    "HNSW_MAX_M",
]

_HNSW_FORMAT = 2
_HNSW_READS = (1, 2)
_HNSW_SPACE = {"cosine": "cosine", "ip": "ip", "l2": "l2"}
_MANIFEST = "hnsw.json"
_V1_PARTS = ("hnsw.bin", "exact.rvf")
# part files of a generation: hnsw.<n>.<tag>.bin, exact.<n>.<tag>.rvf, and the
# temporaries of the engine's save of the latter (exact.<n>.<tag>.rvf.tmp-...)
_PART = re.compile(
    r"^(?:hnsw|exact)\.(?P<n>[0-9]+)\.(?P<tag>[A-Za-z0-9_-]+-[0-9]+-[0-9a-f]{8,16})"
    r"\.(?:bin|rvf)(?:\.tmp-.+)?$"
)

#: Test hook: called with a stage name at each step of :meth:`HNSWIndex.save`
#: (``"graph"``, ``"exact"``, ``"manifest"``, ``"committed"``). None, and
#: never set by rowvoi itself; kill tests set it in a child process.
_save_hook: Callable[[str], None] | None = None


def _stage(name: str) -> None:
    if _save_hook is not None:
        _save_hook(name)


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


def _corrupt(msg: str) -> Exception:
    return status_error(_status.E_CORRUPT, msg)


#: Most elements an HNSW graph may hold (and the largest ``max_elements``):
#: hnswlib numbers its elements with 32-bit ids and keeps ``2**32 - 1`` for
#: "none".
HNSW_MAX_ELEMENTS: int = 2**32 - 2
#: Largest ``M`` (graph degree) of an :class:`HNSWIndex`.
HNSW_MAX_M: int = int(_flat.HNSW_MAX_M)
_INT64_MAX = 2**63 - 1
# hnsw.json is a few hundred bytes; a larger one is refused before it is read
_MANIFEST_LIMIT = 1 << 20
_MAX_SUPERSEDED = 64
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
# the names a manifest may give its parts (no temporaries, no separators)
_PART_NAME = {
    "hnsw_file": re.compile(
        r"^hnsw\.(?P<n>[0-9]{1,19})\.[A-Za-z0-9_-]+-[0-9]+-[0-9a-f]{8,16}\.bin$"
    ),
    "exact_file": re.compile(
        r"^exact\.(?P<n>[0-9]{1,19})\.[A-Za-z0-9_-]+-[0-9]+-[0-9a-f]{8,16}\.rvf$"
    ),
}
_MANIFEST_KEYS = (
    "format",
    "format_version",
    "dim",
    "metric",
    "M",
    "ef_construction",
    "ef",
    "seed",
    "max_elements",
    "element_count",
    "size",
    "hnsw_sha256",
)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _check_manifest(meta: Any, where: Path) -> dict[str, Any]:
    """Every field of a parsed ``hnsw.json`` checked for type and range, and
    against the others (the part files are checked against it on load);
    returns it with version 1's implied fields filled in. Raises
    IndexFormatError naming the file and the field."""

    def bad(what: str) -> Exception:
        return _corrupt(
            f"{where}: {what}; the manifest was altered or damaged: rebuild the index "
            "(or save it again from a good copy)"
        )

    if not isinstance(meta, dict) or meta.get("format") != "rowvoi-hnsw":
        raise _corrupt(f"{where}: not a rowvoi HNSW description")
    missing = [key for key in _MANIFEST_KEYS if key not in meta]
    if missing:
        raise _corrupt(f"{where}: not a rowvoi HNSW description (no {', '.join(missing)})")
    version = meta["format_version"]
    if not _is_int(version):
        raise bad(f"format_version = {version!r} is not an integer")
    if version not in _HNSW_READS:
        raise status_error(
            _status.E_VERSION,
            f"{where.parent}: HNSW format version {version}; this rowvoi "
            f"reads versions {', '.join(map(str, _HNSW_READS))}: save the index again with "
            "the rowvoi that wrote it, or rebuild it",
        )

    def integer(key: str, low: int, high: int) -> int:
        v = meta[key]
        if not _is_int(v) or not low <= v <= high:
            raise bad(f"{key} = {v!r} is not an integer in {low} .. {high}")
        return int(v)

    integer("dim", 1, int(_flat.MAX_DIM))
    if not isinstance(meta["metric"], str) or meta["metric"] not in METRICS:
        raise bad(f"metric = {meta['metric']!r} is not one of {', '.join(METRICS)}")
    integer("M", 2, HNSW_MAX_M)
    integer("ef_construction", 1, _INT64_MAX)
    integer("ef", 1, _INT64_MAX)
    integer("seed", 0, _INT64_MAX)
    count = integer("element_count", 0, HNSW_MAX_ELEMENTS)
    integer("max_elements", max(1, count), HNSW_MAX_ELEMENTS)
    integer("size", 0, count)
    if not isinstance(meta["hnsw_sha256"], str) or not _SHA256.match(meta["hnsw_sha256"]):
        raise bad("hnsw_sha256 is not a SHA-256 digest (64 lowercase hex digits)")
    if version == 1:
        meta["hnsw_file"], meta["exact_file"], meta["generation"] = (*_V1_PARTS, 0)
        meta["superseded"] = []
        return meta
    gen = integer("generation", 1, _INT64_MAX)
    for key, pattern in _PART_NAME.items():
        name = meta.get(key)
        m = pattern.match(name) if isinstance(name, str) else None
        if m is None:
            raise bad(f"{key} = {name!r} is not a part file name")
        if int(m.group("n")) != gen:
            raise bad(f"{key} = {name!r} is not a part of generation {gen}")
    superseded = meta.get("superseded")
    if (
        not isinstance(superseded, list)
        or len(superseded) > _MAX_SUPERSEDED
        or not all(
            isinstance(n, str) and (n in _V1_PARTS or any(p.match(n) for p in _PART_NAME.values()))
            for n in superseded
        )
    ):
        raise bad("superseded is not a list of part file names")
    return meta


def _open_index_dir(d: Path, follow_symlinks: bool) -> int:
    """The directory of a saved HNSWIndex, opened (see _indexfile.open_dir)."""
    try:
        return _indexfile.open_dir(d, follow_symlinks=follow_symlinks)
    except NotADirectoryError as exc:
        what = "is a file" if d.is_file() else "is not a directory"
        raise _corrupt(
            f"{d} {what}, not a saved HNSWIndex (HNSWIndex.save writes a directory)"
        ) from exc
    except FileNotFoundError as exc:
        raise _corrupt(f"{d} does not exist: no {_MANIFEST}; not a saved HNSWIndex") from exc


def _read_manifest(d: Path, dfd: int | None = None) -> dict[str, Any]:
    """The checked ``hnsw.json`` of directory d (opened as dfd, or here);
    raises IndexFormatError for anything that is not a saved HNSWIndex."""
    if dfd is None:
        own = _open_index_dir(d, True)
        try:
            return _read_manifest(d, own)
        finally:
            os.close(own)
    where = d / _MANIFEST
    try:
        fd, size = _indexfile.open_file(_MANIFEST, follow_symlinks=False, dir_fd=dfd, shown=where)
    except RvIOError as exc:
        if exc.errno == errno.ENOENT:
            raise _corrupt(f"{d} has no {_MANIFEST}; not a saved HNSWIndex") from None
        raise
    try:
        raw = _indexfile.read_small(fd, size, _MANIFEST_LIMIT, str(where))
    finally:
        os.close(fd)
    try:
        meta = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise _corrupt(f"{where}: not valid JSON ({exc})") from exc
    return _check_manifest(meta, where)


def _clean_parts(d: Path, keep: set[str], replaced: set[str]) -> None:
    """After a commit: remove the parts of the generation the commit replaced,
    and parts (or their temporaries) of generations whose saving process is
    gone. Parts of live processes' saves in progress stay."""
    try:
        entries = list(os.scandir(d))
    except OSError:
        return
    for e in entries:
        if e.name in keep:
            continue
        try:
            if e.name in replaced:
                os.unlink(e.path)
                continue
            m = _PART.match(e.name)
            if m and is_stale_tag(m.group("tag"), e.stat(follow_symlinks=False).st_mtime):
                os.unlink(e.path)
        except OSError:
            continue


class _EfGate:
    """hnswlib keeps one search ``ef`` per index (``set_ef``), read by every
    ``knn_query``. Searches share the graph only with searches of the same
    ``ef``; a search wanting another ``ef`` waits for the graph to drain
    (and holds back newcomers meanwhile), then sets it."""

    __slots__ = ("_cond", "_ef", "_users", "_waiting")

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._ef: int | None = None
        self._users = 0
        self._waiting: Counter[int] = Counter()

    def _others_waiting(self, ef: int) -> bool:
        return any(n for e, n in self._waiting.items() if e != ef)

    @contextmanager
    def use(self, graph: Any, ef: int) -> Iterator[None]:
        with self._cond:
            self._waiting[ef] += 1
            try:
                while self._users and (self._ef != ef or self._others_waiting(ef)):
                    self._cond.wait()
            finally:
                self._waiting[ef] -= 1
                if not self._waiting[ef]:
                    del self._waiting[ef]
            if self._ef != ef:
                graph.set_ef(ef)
                self._ef = ef
            self._users += 1
        try:
            yield
        finally:
            with self._cond:
                self._users -= 1
                if not self._users:
                    self._cond.notify_all()


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
        Initial capacity (at most :data:`HNSW_MAX_ELEMENTS`); grows
        automatically.
    n_threads : int
        Threads used by :meth:`add`. The default, 1, makes the graph (and so
        every result) deterministic; more threads build faster but insert in
        a varying order.

    Notes
    -----
    Thread-safety: every method may be called from any thread at any time.
    The index owns one phase-fair reader-writer lock: searches, ``get``,
    ``ids``, ``len``, ``in``, :meth:`save` and pickling share it; :meth:`add`
    and :meth:`remove` take it alone and are never starved. hnswlib keeps a
    single search ``ef`` per graph, so concurrent searches asking for
    different ``ef`` values (or ``exact_rescore`` pools) take turns; searches
    with the same ``ef`` run together. Change the index through its own
    methods only, not through :attr:`exact`.

    Examples
    --------
    >>> import numpy as np
    >>> from rowvoi.index.flat import recall_at_k
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
        dim = _v.integer("dim", dim, 1, _flat.MAX_DIM)
        _v.choice("metric", metric, METRICS)
        self.M = _v.integer("M", M, 2, HNSW_MAX_M)
        self.ef_construction = _v.integer("ef_construction", ef_construction, 1)
        self.ef = _v.integer("ef", ef, 1)
        self.seed = _v.integer("seed", seed, 0, 2**63 - 1)
        max_elements = _v.integer("max_elements", max_elements, 1, HNSW_MAX_ELEMENTS)
        self.n_threads = _threads("n_threads", n_threads)
        self._exact = FlatIndex(dim, metric, storage="int8")
        self._g = hnswlib.Index(space=_HNSW_SPACE[metric], dim=dim)
        self._g.init_index(
            max_elements=max_elements,
            M=self.M,
            ef_construction=self.ef_construction,
            random_seed=self.seed,
        )
        self._lock = RWLock()
        self._gate = _EfGate()

    def __reduce__(self) -> tuple[Any, tuple[dict[str, Any]]]:
        """Pickling (and :func:`copy.deepcopy`): the exact twin's bytes and
        hnswlib's own serialisation of the graph. For trusted data only,
        like every pickle: unpickling runs what the pickle names, and the
        graph goes to hnswlib unchecked (:meth:`load` checks a saved
        directory; send that to another machine or user)."""
        # pickle and copy.deepcopy: hnswlib serialises its graph itself; both
        # parts are turned into bytes here, under the lock, not later by the
        # pickler (an add could run by then)
        with self._lock.read():
            state = {
                "M": self.M,
                "ef_construction": self.ef_construction,
                "ef": self.ef,
                "seed": self.seed,
                "n_threads": self.n_threads,
                "exact": self._exact.to_bytes(),
                "graph": pickle.dumps(self._g, protocol=pickle.HIGHEST_PROTOCOL),
            }
        return (_hnsw_from_state, (state,))

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
        ``exact=True`` to its search for exact answers). Read it; change the
        index only through :class:`HNSWIndex` methods."""
        return self._exact

    def __len__(self) -> int:
        with self._lock.read():
            return len(self._exact)

    def __contains__(self, id: object) -> bool:
        with self._lock.read():
            return id in self._exact

    def __repr__(self) -> str:
        return (
            f"HNSWIndex(dim={self.dim}, metric={self.metric!r}, M={self.M}, "
            f"ef_construction={self.ef_construction}, ef={self.ef}, size={len(self)})"
        )

    def ids(self) -> np.ndarray:
        """Live ids in insertion order."""
        with self._lock.read():
            return self._exact.ids()

    def get(self, ids: Any) -> np.ndarray:
        """Stored vectors (unit vectors under cosine)."""
        with self._lock.read():
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
        NeighborResult(ids=array([0]), scores=array([0.], dtype=float32))
        """
        arr, _ = _as_matrix("vectors", vectors, self.dim)
        idarr = None if ids is None else _as_ids("ids", ids, arr.shape[0])
        with self._lock.write():
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
                self._g.add_items(
                    data, assigned.astype(np.uint64), num_threads=self.n_threads or -1
                )
            except BaseException:
                self._exact.remove(assigned)
                raise
            return assigned

    def remove(self, ids: Any) -> int:
        """Remove vectors by id (hnswlib marks them deleted)."""
        idarr = _as_ids("ids", ids)
        with self._lock.write():
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
        n_allowed = _v.integer("n_allowed", n_allowed, 0)
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
    ) -> NeighborResult:
        """Approximate top-k for each query.

        Parameters
        ----------
        queries : array_like
            ``(n_queries, dim)`` or ``(dim,)``; checked as
            :meth:`FlatIndex.search` checks them (NaN, infinite, too large
            for float32, or zero under cosine: the same errors).
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
        NeighborResult

        Examples
        --------
        >>> h = HNSWIndex(2)
        >>> _ = h.add([[1, 0], [0, 1]])
        >>> h.search([0, 0], k=1)
        Traceback (most recent call last):
        ...
        rowvoi.errors.InvalidArgumentError: RV_E_INVALID_ARG: queries[0] is a zero vector, which has no cosine
        """
        arr, single = _as_matrix("queries", queries, self.dim)
        # the engine's own query checks, so both indexes reject the same input
        self._exact._h.check_queries(arr)
        k = _v.integer("k", k, 1)
        ef_q = self.ef if ef is None else _v.integer("ef", ef, 1)
        threads = self.n_threads if n_threads is None else _threads("n_threads", n_threads)
        flt = as_idset(filter)
        if exact_rescore is True:
            pool = max(4 * k, 2 * ef_q)
        elif exact_rescore is False or exact_rescore is None:
            pool = k
        else:
            pool = max(_v.integer("exact_rescore", exact_rescore, 1), k)
        with self._lock.read():
            n_avail = len(self._exact)
            if flt is not None:
                if self.filter_route(len(flt)) == "exact":
                    return self._exact.search(
                        arr[0] if single else arr, k, filter=flt, n_threads=threads, exact=True
                    )
                n_avail = min(n_avail, len(flt))  # hnswlib raises if fewer qualify
            pool = min(pool, n_avail)
            kk = min(k, n_avail)
            if kk == 0:
                empty = np.empty((arr.shape[0], 0))
                return _shape_result(empty.astype(np.int64), empty.astype(np.float32), single)
            fn: Callable[[int], bool] | None = None
            if flt is not None:
                fn = flt.as_frozenset().__contains__
            try:
                with self._gate.use(self._g, max(ef_q, pool)):
                    labels, dist = self._g.knn_query(
                        arr, k=pool, num_threads=threads or -1, filter=fn
                    )
            except RuntimeError:
                # hnswlib could not collect `pool` results (a tight filter or a
                # graph cut off by deletions): answer exactly instead.
                return self._exact.search(
                    arr[0] if single else arr, k, filter=flt, n_threads=threads, exact=True
                )
            labels = labels.astype(np.int64)
            if pool > k or exact_rescore:
                return self._exact.rescore(
                    arr[0] if single else arr,
                    labels[0] if single else labels,
                    kk,
                    n_threads=threads,
                )
        return _shape_result(labels, self._to_scores(dist), single)

    # files -------------------------------------------------------------
    def save(self, path: str | os.PathLike[str], *, mode: int | None = None) -> None:
        """Write the index into directory ``path``, atomically as a whole.

        The directory holds one *generation* of part files --
        ``hnsw.<n>.<tag>.bin`` (hnswlib's graph) and ``exact.<n>.<tag>.rvf``
        (the exact twin) -- and the manifest ``hnsw.json`` (parameters, the
        part names and a SHA-256 of the graph). A save writes and fsyncs the
        new generation's parts beside the current ones, then replaces
        ``hnsw.json`` atomically (temporary, fsync, rename): that rename is
        the one commit point, so a crash at any moment leaves a directory
        that loads either the previous index or the new one, never a mix.
        After the commit the replaced generation's parts are deleted (the
        manifest lists them as ``superseded``, so the next save deletes them
        if this one is killed first), as are parts left by saves whose
        process is gone (``<tag>`` names the host and process; the rule of
        :mod:`rowvoi._atomic`). Files get mode
        ``0666 & ~umask``, or exactly ``mode`` when given (``0o600``:
        private; a directory ``save`` creates then gets ``0700``), set before
        any byte is written. A manifest was chosen over writing a new directory
        and renaming it because a non-empty directory cannot be renamed over
        another atomically on POSIX; the manifest keeps ``path`` a plain
        directory, as before. Directories saved by earlier versions (fixed
        names ``hnsw.bin`` and ``exact.rvf``) still load, and are converted
        by the next save.

        Thread-safety: a read -- runs alongside searches; changes wait.
        Two saves to one directory at once are safe (the later commit
        wins), but keep to one writer per directory.

        Examples
        --------
        >>> import numpy as np, tempfile
        >>> h = HNSWIndex(4, metric="ip", M=8, seed=3)
        >>> _ = h.add(np.arange(40.0).reshape(10, 4))
        >>> d = tempfile.mkdtemp()
        >>> h.save(d)
        >>> h.save(d)  # replaces the first generation
        >>> sorted(name.split(".")[0] for name in os.listdir(d))
        ['exact', 'hnsw', 'hnsw']
        >>> back = HNSWIndex.load(d)
        >>> back.M, len(back), back.search([1, 1, 1, 1], k=2).ids
        (8, 10, array([9, 8]))
        """
        d = Path(path)
        check_mode(mode)
        if d.exists() and not d.is_dir():
            raise NotADirectoryError(f"{d} is a file; HNSWIndex.save writes a directory")
        if mode is None:
            d.mkdir(parents=True, exist_ok=True)
        else:
            private_dir(d)
        with self._lock.read():
            try:
                old = _read_manifest(d)
            except (IndexFormatError, RvIOError):  # none, or none usable: replaced
                old = None
            # what this commit supersedes: the current generation, and any
            # generation an earlier commit superseded but did not get to delete
            replaced = (
                set()
                if old is None
                else {
                    old["hnsw_file"],
                    old["exact_file"],
                    *(name for name in old["superseded"] if (d / name).exists()),
                }
            )
            n = 1 if old is None else old["generation"] + 1
            tag = owner_tag()
            graph = d / f"hnsw.{n}.{tag}.bin"
            exact = d / f"exact.{n}.{tag}.rvf"
            try:
                # hnswlib rewrites the file by name, keeping the mode it was made with
                os.close(create_exclusive(graph, mode))
                self._g.save_index(str(graph))
                digest = sha256_file(graph)
                fsync_path(graph)
                _stage("graph")
                self._exact.save(exact, mode=mode)
                _stage("exact")
                fsync_dir(d)
                meta = {
                    "format": "rowvoi-hnsw",
                    "format_version": _HNSW_FORMAT,
                    "generation": n,
                    "hnsw_file": graph.name,
                    "exact_file": exact.name,
                    "superseded": sorted(replaced),
                    "dim": self.dim,
                    "metric": self.metric,
                    "M": self.M,
                    "ef_construction": self.ef_construction,
                    "ef": self.ef,
                    "seed": self.seed,
                    "max_elements": int(self._g.get_max_elements()),
                    "element_count": int(self._g.get_current_count()),
                    "size": len(self._exact),
                    "hnsw_sha256": digest,
                }
                _stage("manifest")
                atomic_write_bytes(d / _MANIFEST, json.dumps(meta, indent=1).encode(), mode=mode)
            except BaseException:
                for part in (graph, exact):
                    try:
                        part.unlink()
                    except OSError:
                        pass
                raise
        _stage("committed")
        _clean_parts(d, keep={graph.name, exact.name}, replaced=replaced)

    @classmethod
    def load(
        cls, path: str | os.PathLike[str], *, n_threads: int = 1, follow_symlinks: bool = True
    ) -> HNSWIndex:
        """Load an index written by :meth:`save`.

        Nothing in the directory is trusted: before hnswlib sees the graph,
        ``hnsw.json`` is checked field by field (types, ranges, names of the
        part files, agreement of the counts), the graph file against its
        SHA-256 *and* structurally (:c:func:`rv_hnsw_check`: header against
        the file size and ``hnsw.json``; entry point, levels, every link
        count and every neighbour id in range), the exact twin by its own
        checksums, and the graph's labels against the twin's ids. hnswlib
        then reads a private, sealed copy of the bytes that were checked.
        Every file is opened without blocking and must be a regular file (a
        FIFO or a device in its place is refused at once); the files inside
        the directory are never followed if they are symbolic links, and
        ``path`` itself only when ``follow_symlinks`` is true (a corpus
        loads its graphs with ``False``). Loading reserves room for the
        stored elements only, whatever ``max_elements`` says (the graph
        grows on :meth:`add`). The digest in ``hnsw.json`` only catches
        accidents (it sits in the directory it protects); the structural
        checks are what make a hostile directory harmless: it loads as
        the graph it describes or raises.

        Raises
        ------
        rowvoi.errors.IndexFormatError
            ``path`` is a file or not a saved index, a part is missing,
            altered or of another format version, a field of ``hnsw.json`` is
            of the wrong type or out of range, or the graph fails a
            structural check (the message names the file and the defect).
        rowvoi.errors.RvIOError
            A file cannot be read (permissions), is not a regular file, or
            is a symbolic link where links are not followed.

        Examples
        --------
        >>> import numpy as np, tempfile, json
        >>> h = HNSWIndex(4, metric="l2", M=8, seed=3)
        >>> _ = h.add(np.arange(40.0).reshape(10, 4))
        >>> d = tempfile.mkdtemp(); h.save(d)
        >>> meta = json.load(open(os.path.join(d, "hnsw.json")))
        >>> meta["ef"] = "abc"
        >>> _ = open(os.path.join(d, "hnsw.json"), "w").write(json.dumps(meta))
        >>> HNSWIndex.load(d)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        rowvoi.errors.IndexFormatError: RV_E_CORRUPT: .../hnsw.json: ef = 'abc' is not an integer in 1 .. 9223372036854775807; ...
        """
        d = Path(path)
        threads = _threads("n_threads", n_threads)
        dfd = _open_index_dir(d, follow_symlinks)
        try:
            meta = _read_manifest(d, dfd)
            for _ in range(5):
                try:
                    return cls._load_generation(d, dfd, meta, threads)
                except _PartMissing as missing:
                    # a save may have committed a newer generation and removed
                    # this one between our reads: follow the manifest
                    newer = _read_manifest(d, dfd)
                    if (newer["hnsw_file"], newer["exact_file"]) == (
                        meta["hnsw_file"],
                        meta["exact_file"],
                    ):
                        raise _corrupt(
                            f"{missing.args[0]}: missing (named by "
                            f"{d / _MANIFEST}); the index is incomplete"
                        ) from None
                    meta = newer
            raise _corrupt(f"{d}: the index kept changing while it was being loaded")
        finally:
            os.close(dfd)

    @classmethod
    def _load_generation(
        cls, d: Path, dfd: int, meta: dict[str, Any], n_threads: int
    ) -> HNSWIndex:
        hnswlib = _import_hnswlib()
        graph, exact_path = d / meta["hnsw_file"], d / meta["exact_file"]
        exact = _open_part(dfd, meta["exact_file"], exact_path, FlatIndex._load_fd)
        if (
            exact.dim != meta["dim"]
            or exact.metric != meta["metric"]
            or len(exact) != meta["size"]
        ):
            raise _corrupt(
                f"{d}: {exact_path.name} (dim {exact.dim}, {exact.metric}, "
                f"{len(exact)} vectors) does not match {_MANIFEST} (dim {meta['dim']}, "
                f"{meta['metric']}, size {meta['size']})"
            )
        fd, size = _open_part(dfd, meta["hnsw_file"], graph, None)
        try:
            # the smallest file of element_count elements, before any copy
            n, dim, m = meta["element_count"], meta["dim"], meta["M"]
            least = _flat.HNSW_HEADER_SIZE + n * (4 + 8 * m + 4 * dim + 8 + 4)
            if size < least:
                raise _corrupt(
                    f"{graph}: {size} bytes, truncated ({n} elements of dim {dim}, M {m} "
                    f"need at least {least})"
                )
            with _indexfile.private_copy(fd, size, str(graph)) as (mem, private):
                if hashlib.sha256(mem).hexdigest() != meta["hnsw_sha256"]:
                    raise _corrupt(f"{graph}: checksum mismatch (altered or truncated)")
                try:
                    info = _flat.hnsw_check(
                        mem, dim, m, meta["ef_construction"], n, meta["max_elements"]
                    )
                except IndexFormatError as exc:
                    reason = str(exc).split(": ", 1)[-1]
                    raise _corrupt(
                        f"{graph}: {reason}; hnswlib would crash on it, so it is not loaded: "
                        "rebuild the index"
                    ) from None
                _check_labels(mem, info, exact, graph)
                g = hnswlib.Index(space=_HNSW_SPACE[meta["metric"]], dim=dim)
                g.load_index(private, max_elements=max(1, n))
        finally:
            os.close(fd)
        if g.get_current_count() != n:  # pragma: no cover - checked above
            raise _corrupt(f"{graph}: element count does not match {_MANIFEST}")
        self = cls.__new__(cls)
        self.M, self.ef_construction, self.ef = meta["M"], meta["ef_construction"], meta["ef"]
        self.seed = meta["seed"]
        self.n_threads = n_threads
        self._exact = exact
        self._g = g
        self._lock = RWLock()
        self._gate = _EfGate()
        return self


def _open_part(dfd: int, name: str, shown: Path, loader: Callable[[int, Path], Any] | None) -> Any:
    """Open part `name` of an HNSW directory (never following a link):
    ``loader(fd, shown)`` when given (the fd is closed after), else
    ``(fd, size)`` for the caller to close. A part that is not there raises
    _PartMissing (a newer save may have replaced it)."""
    try:
        fd, size = _indexfile.open_file(name, follow_symlinks=False, dir_fd=dfd, shown=shown)
    except RvIOError as exc:
        if exc.errno == errno.ENOENT:
            raise _PartMissing(shown) from None
        raise
    if loader is None:
        return fd, size
    try:
        return loader(fd, shown)
    finally:
        os.close(fd)


def _check_labels(mem: Any, info: Mapping[str, Any], exact: FlatIndex, graph: Path) -> None:
    """The graph's labels (hnswlib's ids) against the exact twin: unique, and
    the live ones exactly the twin's ids (searches map labels to vectors)."""
    n = info["element_count"]
    if n == 0:
        if len(exact):
            raise _corrupt(f"{graph}: an empty graph, but the exact twin holds {len(exact)}")
        return
    step = info["element_size"]
    base = int(_flat.HNSW_HEADER_SIZE)
    labels = np.ndarray(
        (n,), dtype=np.uint64, buffer=mem, offset=base + info["label_offset"], strides=(step,)
    )
    flags = np.ndarray((n,), dtype=np.uint8, buffer=mem, offset=base + 2, strides=(step,))
    live = labels[(flags & 1) == 0]
    every = np.sort(labels)  # (sorting: np.unique is far slower on numpy 2.4)
    if n > 1 and bool((every[1:] == every[:-1]).any()):
        raise _corrupt(f"{graph}: two elements share a label (id); rebuild the index")
    ids = np.sort(exact.ids()).astype(np.uint64)
    if len(live) != len(ids) or not np.array_equal(np.sort(live), ids):
        raise _corrupt(
            f"{graph}: the graph's live ids ({len(live)}) are not the exact twin's "
            f"({len(ids)}); the parts do not belong together: rebuild the index"
        )


class _PartMissing(Exception):
    """A part named by the manifest is not there (internal to load)."""


def _hnsw_from_state(state: dict[str, Any]) -> HNSWIndex:
    """Unpickle an :class:`HNSWIndex` (module level, so pickle can name it).
    Trusted data only: the graph goes to hnswlib's unpickler unchecked."""
    self = HNSWIndex.__new__(HNSWIndex)
    self.M, self.ef_construction, self.ef = state["M"], state["ef_construction"], state["ef"]
    self.seed, self.n_threads = state["seed"], state["n_threads"]
    self._exact = FlatIndex.from_bytes(state["exact"])
    self._g = pickle.loads(state["graph"])
    self._lock = RWLock()
    self._gate = _EfGate()
    return self
