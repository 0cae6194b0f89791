"""Id sets: the one filter type every search takes.

A corpus owns its record ids (``int64`` in ``0 .. MAX_ID``); every index --
:class:`rowvoi.index.lexical.BM25Index`, :class:`rowvoi.index.flat.FlatIndex`,
:class:`rowvoi.index.hnsw.HNSWIndex` -- files entries under them, and every
search takes ``filter=``: ``None``, an :class:`IdSet`, or any iterable of
ids (turned into an :class:`IdSet` for the call). The kernels apply the
filter while they rank, so a filtered top-k is exact -- never a truncated
list filtered afterwards -- and costs less as the set shrinks.

Build an :class:`IdSet` once when the same filter serves many searches (a
hybrid query, a batch, a session): the C set is built in O(n) once, and
membership is O(1) whatever its size.

Examples
--------
>>> from rowvoi.index.idset import IdSet
>>> allowed = IdSet([30, 10, 20, 10])
>>> len(allowed), 20 in allowed, 25 in allowed
(3, True, False)
>>> allowed.to_numpy()
array([10, 20, 30])
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from rowvoi.index import _idset

__all__ = ["IdSet", "MAX_ID", "as_idset"]

#: Largest record id any index accepts (``2**63 - 2``).
MAX_ID: int = int(_idset.MAX_ID)


def _as_id_array(name: str, ids: Any) -> np.ndarray:
    """A 1-D int64 array of ids in ``0 .. MAX_ID``, or a specific error."""
    if isinstance(ids, np.ndarray):
        arr = ids
    elif isinstance(ids, numbers.Integral) and not isinstance(ids, bool):
        arr = np.asarray([int(ids)])
    elif isinstance(ids, (str, bytes)):
        raise TypeError(f"{name} must be an iterable of integer ids, not {type(ids).__name__}")
    else:
        try:
            items = list(ids)
        except TypeError:
            raise TypeError(
                f"{name} must be an iterable of integer ids, not {type(ids).__name__}"
            ) from None
        arr = np.asarray(items) if items else np.empty(0, dtype=np.int64)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.size == 0:
        arr = arr.astype(np.int64)
    if arr.ndim != 1 or not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(
            f"{name} must be a 1-D array of integers, got dtype {arr.dtype} and shape {arr.shape}"
        )
    if arr.size and (arr.min() < 0 or (arr.dtype == np.uint64 and arr.max() > MAX_ID)):
        bad = arr[arr < 0][0] if arr.min() < 0 else arr.max()
        raise ValueError(f"{name} contains {bad}: ids must be in 0 .. {MAX_ID}")
    return np.ascontiguousarray(arr, dtype=np.int64)


class IdSet:
    """An immutable set of record ids, built once and shared by searches.

    Parameters
    ----------
    ids : iterable of int
        The ids (any order; repeats collapse). Each must be in
        ``0 .. MAX_ID``; ids that no index holds are simply never matched.

    Raises
    ------
    TypeError
        ``ids`` is not an iterable of integers.
    ValueError
        An id is negative or above :data:`MAX_ID`.

    Notes
    -----
    Memory is about 16 bytes per id (sorted ids and a hash table over them).
    An IdSet is immutable, so any number of threads may search with it at
    once.

    Examples
    --------
    >>> s = IdSet(range(5))
    >>> sorted(s) == [0, 1, 2, 3, 4], IdSet([]) == IdSet(()), len(IdSet([]))
    (True, True, 0)
    >>> IdSet([-1])
    Traceback (most recent call last):
    ...
    ValueError: ids contains -1: ids must be in 0 .. 9223372036854775806
    """

    __slots__ = ("_core", "_frozen")

    def __init__(self, ids: Iterable[int] = ()) -> None:
        self._core = _idset.IdSetCore.create(_as_id_array("ids", ids))
        self._frozen: frozenset[int] | None = None

    def __len__(self) -> int:
        return len(self._core)

    def __contains__(self, id: object) -> bool:
        if isinstance(id, bool) or not isinstance(id, (int, np.integer)):
            return False
        id = int(id)
        return 0 <= id <= MAX_ID and self._core.contains(id)

    def __iter__(self) -> Iterator[int]:
        ids: list[int] = self.to_numpy().tolist()
        return iter(ids)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, IdSet):
            return NotImplemented
        return len(self) == len(other) and bool(np.array_equal(self.to_numpy(), other.to_numpy()))

    def __hash__(self) -> int:
        return hash(self.to_numpy().tobytes())

    def __repr__(self) -> str:
        ids = self.to_numpy()
        shown = ", ".join(str(i) for i in ids[:5].tolist()) + (", ..." if len(ids) > 5 else "")
        return f"IdSet([{shown}], n={len(ids)})"

    def to_numpy(self) -> np.ndarray:
        """The ids in ascending order, as an ``int64`` array (a copy)."""
        return self._core.ids()

    def as_frozenset(self) -> frozenset[int]:
        """The ids as a Python ``frozenset`` (built once, then cached), for
        callers that test membership from Python, such as hnswlib's filter
        callback."""
        if self._frozen is None:
            self._frozen = frozenset(self.to_numpy().tolist())
        return self._frozen

    def _capsule(self) -> Any:
        """The C set for the engine's kernels (keeps this set alive)."""
        return self._core.capsule()


def as_idset(filter: IdSet | Iterable[int] | None, name: str = "filter") -> IdSet | None:
    """``None`` stays ``None``; an :class:`IdSet` is used as is; any other
    iterable of ids becomes an :class:`IdSet` (errors name ``name``).

    >>> as_idset(None) is None, len(as_idset([3, 3, 4]))
    (True, 2)
    """
    if filter is None or isinstance(filter, IdSet):
        return filter
    s = IdSet.__new__(IdSet)
    s._core = _idset.IdSetCore.create(_as_id_array(name, filter))
    s._frozen = None
    return s
