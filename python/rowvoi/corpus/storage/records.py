"""The record table of one committed generation, held in memory.

A search ranks record ids. Turning them into hits needs, per candidate,
its artifact id and surface index (equal scores are ordered by them, and
``per_artifact`` keeps one surface per artifact) and its surface kind
(surface weights), and for the ``k`` hits returned also the text and the
metadata. :class:`RecordTable` holds all of that for every live record of
one generation, read from one snapshot together with the indexes
(:mod:`rowvoi.corpus.storage.generation` loads both at once), so that a search whose
generation is still the committed one reads no SQL at all: the order of
ties, the collapse and the weights are array operations, and a hit's
fields are decoded from the table -- for a dense search in one compiled
pass over its arrays (:meth:`RecordTable._hit_table`, a view that copies
nothing, and ``rowvoi.index._hot.dense_hits``).

Memory
------
Per record: its id and surface index (8 bytes each), artifact rank and
kind code (4 bytes each) and two offsets (8 bytes each): 40 bytes. Per artifact: its
id and filter fields as UTF-8 plus two offsets. The texts and the surface
metadata are held as UTF-8 as well -- their size in ``docs.sqlite`` --
when they total at most :data:`TEXT_BUDGET` bytes; beyond that they stay
on disk and each search reads its ``k`` hits' rows from its snapshot. So a
corpus of 1M records holds about 40 MB of arrays, plus its artifact ids
(about 20 MB for 1M artifacts with ten-character ids), plus the texts
(about 0.3 GB for 1M 45-word documents) only under the budget. A load
reads the rows in batches of :data:`_BATCH`, each batch's strings joined
into one buffer as it comes, so what it holds beyond the table is about
one batch of rows and the buffers' final join.

Thread-safety: a table never changes after :meth:`RecordTable.load`, so
any number of threads may read it at once.

Examples
--------
>>> from rowvoi.corpus import CorpusStore, build, from_mapping
>>> c = build(from_mapping({"b": "drag", "a": "lift"}, embedder="hashing:8"),
...           store=CorpusStore.memory())
>>> with c.store.snapshot() as snap:
...     table = RecordTable.load(snap)
>>> len(table), table.generation, table.has_text
(2, 1, True)
>>> pos = table.positions([1, 0])
>>> [table.hit_fields(int(i))[:4] for i in pos]
[('a', 'document', 0, 'lift'), ('b', 'document', 0, 'drag')]
"""

from __future__ import annotations

import json
import math
import os
from array import array
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from rowvoi.corpus.base import SearchHit
from rowvoi.errors import IndexFormatError
from rowvoi.index._hot import HitTable

if TYPE_CHECKING:
    from rowvoi.corpus.storage.snapshot import Snapshot

__all__ = ["TEXT_BUDGET", "RecordTable"]

#: Largest total size (bytes of UTF-8) of the texts and surface metadata
#: that a :class:`RecordTable` holds in memory; a larger corpus reads its
#: hits' texts from ``docs.sqlite`` at each search.
TEXT_BUDGET = 256 << 20

#: Rows read from SQLite at a time.
_BATCH = 16_384


class _Strings:
    """Strings as one UTF-8 buffer and int64 offsets (no object per string;
    an ``array`` indexes to Python ints faster than numpy does)."""

    __slots__ = ("blob", "offsets")

    def __init__(self, parts: Sequence[bytes]) -> None:
        pieces = _Pieces()
        pieces.add(parts)
        self.blob, self.offsets = pieces.joined()

    @classmethod
    def of(cls, pieces: _Pieces) -> _Strings:
        """The strings added to ``pieces``, in order."""
        self = cls.__new__(cls)
        self.blob, self.offsets = pieces.joined()
        return self

    def __getitem__(self, i: int) -> str:
        off = self.offsets
        return self.blob[off[i] : off[i + 1]].decode()

    @property
    def nbytes(self) -> int:
        return len(self.blob) + self.offsets.itemsize * len(self.offsets)


class _Pieces:
    """Strings gathered batch by batch: each batch joined into one buffer
    as it comes (no object per string outlives its batch)."""

    __slots__ = ("blobs", "lengths")

    def __init__(self) -> None:
        self.blobs: list[bytes] = []
        self.lengths: list[np.ndarray] = []

    def add(self, parts: Sequence[bytes]) -> None:
        """Append a batch of strings (UTF-8)."""
        self.blobs.append(b"".join(parts))
        self.lengths.append(np.fromiter(map(len, parts), dtype=np.int64, count=len(parts)))

    def joined(self) -> tuple[bytes, array[int]]:
        """(every string in one buffer, the n + 1 offsets into it)."""
        n = sum(map(len, self.lengths))
        off = np.zeros(n + 1, dtype=np.int64)
        if n:
            np.cumsum(np.concatenate(self.lengths), out=off[1:])
        blob = self.blobs[0] if len(self.blobs) == 1 else b"".join(self.blobs)
        self.blobs, self.lengths = [], []
        return blob, array("q", off.tobytes())


class RecordTable:
    """Every live record of one generation: ids, and per record its
    artifact's rank (artifacts ordered by id), surface index, kind, and,
    under :data:`TEXT_BUDGET`, text and metadata. Built by :meth:`load`;
    never changes afterwards (thread-safe to read).

    Attributes
    ----------
    generation : int
        The generation it was read from.
    ids : numpy.ndarray
        Live record ids, int64, ascending; position ``i`` in the arrays
        below describes ``ids[i]``.
    art : numpy.ndarray
        int32: the record's artifact as its rank among the generation's
        artifact ids in code point order (so comparing ranks compares ids).
    surface : numpy.ndarray
        int64: the plan-global surface index.
    kind : numpy.ndarray
        int32: index into :attr:`kinds`.
    kinds : list of str
        The surface kinds, sorted.
    has_text : bool
        Whether texts and metadata are held (:meth:`hit_fields` needs them).
    one_per_artifact : bool
        No two records share an artifact (a per-artifact collapse keeps
        every record).
    """

    def __init__(self, generation: int) -> None:
        self.generation = generation
        self.ids = np.zeros(0, dtype=np.int64)
        self.art = np.zeros(0, dtype=np.int32)
        self.surface = np.zeros(0, dtype=np.int64)
        self.kind = np.zeros(0, dtype=np.int32)
        self.kinds: list[str] = []
        self.one_per_artifact = True
        self._artifact_ids = _Strings([])
        self._filter_fields = _Strings([])
        self._texts: _Strings | None = None
        self._metadata: _Strings | None = None
        self._cols: tuple[memoryview, memoryview, memoryview] | None = None
        self._hits: HitTable | None = None
        # record id -> position (-1: none), built at the first positions()
        # call when the ids are dense enough (False: not yet; None: never)
        self._pos_of: np.ndarray | bool | None = False
        self._source = "docs.sqlite"  # for messages: the database read

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    def __repr__(self) -> str:
        return (
            f"RecordTable(generation={self.generation}, records={len(self)}, "
            f"has_text={self.has_text}, nbytes={self.nbytes})"
        )

    @property
    def has_text(self) -> bool:
        """Are the texts and metadata in memory?"""
        return self._texts is not None

    @property
    def nbytes(self) -> int:
        """Bytes held by the arrays and strings (Python object headers
        aside)."""
        n = self.ids.nbytes + self.art.nbytes + self.surface.nbytes + self.kind.nbytes
        n += self._artifact_ids.nbytes + self._filter_fields.nbytes
        if isinstance(self._pos_of, np.ndarray):
            n += self._pos_of.nbytes
        if self._texts is not None and self._metadata is not None:
            n += self._texts.nbytes + self._metadata.nbytes
        return n

    @classmethod
    def load(cls, snap: Snapshot, text_budget: int | None = None) -> RecordTable:
        """Read the table of the snapshot's generation (two scans: the
        artifacts by id, the records by id).

        Parameters
        ----------
        snap : Snapshot
            An open snapshot; the table describes its generation.
        text_budget : int, optional
            Hold texts and metadata only up to this many bytes (default
            :data:`TEXT_BUDGET`).
        """
        budget = TEXT_BUDGET if text_budget is None else int(text_budget)
        try:
            return cls._read(snap, budget)
        except (TypeError, ValueError, AttributeError, OverflowError) as exc:
            if isinstance(exc, IndexFormatError):
                raise
            # a damaged database can hold NULL or another type in any column
            # (SQLite does not check NOT NULL or types when it reads a page)
            raise IndexFormatError(
                f"RV_E_CORRUPT: {snap.db_path}: damaged corpus database (a stored "
                f"value of the wrong type: {exc}); rebuild the corpus",
                6,
                "RV_E_CORRUPT",
            ) from None

    @classmethod
    def _read(cls, snap: Snapshot, budget: int) -> RecordTable:
        self = cls(snap.generation)
        self._source = str(snap.db_path)
        con = snap.con
        # SQLite orders TEXT by its UTF-8 bytes, which is code point order:
        # Python's order of str
        a_aid, self._artifact_ids, self._filter_fields = _artifacts(con)
        by_aid = np.argsort(a_aid, kind="stable")
        aid_sorted = a_aid[by_aid]
        # the character count bounds the UTF-8 size from below: a corpus
        # surely over the budget never decodes its texts; the database's
        # files bound it from above: one surely under it skips the count (a
        # scan of every text). Either way the sizes read decide below.
        with_text = _stored_bytes(snap.db_path) <= budget or (
            con.execute(
                "SELECT coalesce(sum(length(text)) + sum(length(metadata)), 0) FROM records"
            ).fetchone()[0]
            <= budget
        )
        cols = "id, aid, surface_index, kind" + (", text, metadata" if with_text else "")
        cur = con.execute(f"SELECT {cols} FROM records ORDER BY id")
        ids: list[np.ndarray] = []
        aids: list[np.ndarray] = []
        surf: list[np.ndarray] = []
        kind_at: list[np.ndarray] = []
        seen: dict[str, int] = {}  # kind -> its number in order of first sight
        texts: _Pieces | None = _Pieces() if with_text else None
        metas: _Pieces | None = _Pieces() if with_text else None
        size = 0
        rows = cur.fetchmany(_BATCH)
        while rows:
            c = list(zip(*rows))
            rows = []  # (a batch's rows go before the next batch is read)
            ids.append(np.array(c[0], dtype=np.int64))
            aids.append(np.array(c[1], dtype=np.int64))
            surf.append(np.array(c[2], dtype=np.int64))
            kind_at.append(
                np.fromiter((seen.setdefault(k, len(seen)) for k in c[3]), np.int32, len(c[3]))
            )
            if texts is not None and metas is not None:
                t = [s.encode() for s in c[4]]
                m = [_json_bytes(s) for s in c[5]]
                size += sum(map(len, t)) + sum(map(len, m))
                if size > budget:
                    texts = metas = None
                else:
                    texts.add(t)
                    metas.add(m)
            del c
            rows = cur.fetchmany(_BATCH)
        if ids:
            self.ids = np.concatenate(ids)
            r_aid = np.concatenate(aids)
            self.surface = np.concatenate(surf)
        else:
            r_aid = np.zeros(0, dtype=np.int64)
        at = np.searchsorted(aid_sorted, r_aid)
        if len(r_aid) and (
            at.max() >= len(aid_sorted) or not np.array_equal(aid_sorted[at], r_aid)
        ):
            raise IndexFormatError(
                f"RV_E_CORRUPT: {snap.db_path}: records of artifacts that are not in "
                "the ledger; rebuild the corpus",
                6,
                "RV_E_CORRUPT",
            )
        self.art = by_aid[at].astype(np.int32)
        self.one_per_artifact = bool(len(np.unique(self.art)) == len(self.art))
        self.kinds = sorted(seen)
        # from the order of first sight to the sorted order
        renumber = np.zeros(len(seen), dtype=np.int32)
        for i, k in enumerate(self.kinds):
            renumber[seen[k]] = i
        self.kind = renumber[np.concatenate(kind_at)] if kind_at else self.kind
        if texts is not None and metas is not None:
            self._texts = _Strings.of(texts)
            self._metadata = _Strings.of(metas)
        return self

    def _columns(self) -> tuple[memoryview, memoryview, memoryview]:
        """(art, kind, surface) as memoryviews: one record's values as
        Python ints without a numpy scalar (built once; a race builds equal
        views)."""
        cols = self._cols
        if cols is None:
            cols = self._cols = (
                self.art.data,
                self.kind.data,
                self.surface.data,
            )
        return cols

    def _hit_table(self) -> HitTable:
        """The compiled view of the table that builds dense hits
        (:func:`rowvoi.index._hot.dense_hits`): built once (its columns checked
        then), shared by every search of this generation; a race builds
        equal views.

        Raises
        ------
        RuntimeError
            The table holds no texts (:attr:`has_text` is false).
        """
        ht = self._hits
        if ht is None:
            texts, metas = self._texts, self._metadata
            if texts is None or metas is None:
                raise RuntimeError("this record table holds no texts (over TEXT_BUDGET)")
            ht = self._hits = HitTable(
                self.ids,
                self.art,
                self.kind,
                self.surface,
                self.kinds,
                texts.blob,
                texts.offsets,
                metas.blob,
                metas.offsets,
                self._filter_fields.blob,
                self._filter_fields.offsets,
                self._artifact_ids.blob,
                self._artifact_ids.offsets,
                SearchHit,
                self._json_object,
            )
        return ht

    def _json_object(self, data: bytes) -> dict[str, Any]:
        """A stored metadata or filter-field object; a damaged database's
        bytes (not JSON, or JSON but not an object) raise IndexFormatError."""
        try:
            obj = json.loads(data)
        except (ValueError, RecursionError):
            obj = None
        if not isinstance(obj, dict):
            raise IndexFormatError(
                f"RV_E_CORRUPT: {self._source}: damaged corpus database (stored metadata "
                f"{bytes(data[:40])!r} is not a JSON object); rebuild the corpus",
                6,
                "RV_E_CORRUPT",
            )
        return obj

    def positions(self, ids: Iterable[int] | np.ndarray) -> np.ndarray:
        """Positions (int64) of live record ids in the table.

        Raises
        ------
        rowvoi.errors.IndexFormatError
            An id is not a live record of this generation: the index files
            and ``docs.sqlite`` disagree (rebuild the corpus).
        """
        arr = np.asarray(ids, dtype=np.int64)
        if self._pos_of is False:
            self._pos_of = self._position_table()
        lut = self._pos_of
        if isinstance(lut, np.ndarray) and arr.size:
            # one gather, where a binary search per id mispredicts at
            # nearly every step (ids come in score order, not sorted)
            lo, hi = arr.min(), arr.max()
            if lo >= 0 and hi < len(lut):
                pos = lut[arr].astype(np.int64, copy=False)
                if pos.min() >= 0:
                    return pos
        pos = self.ids.searchsorted(arr)
        n = len(self.ids)
        # (bytes comparison: cheaper than numpy's all() on a few ids)
        if arr.size and (n == 0 or self.ids.take(pos, mode="clip").tobytes() != arr.tobytes()):
            bad = arr[~np.isin(arr, self.ids)]
            raise IndexFormatError(
                f"RV_E_CORRUPT: record id {int(bad.flat[0])} is in the index files of "
                f"generation {self.generation} but not among its records; rebuild the corpus",
                6,
                "RV_E_CORRUPT",
            )
        return pos

    def _position_table(self) -> np.ndarray | None:
        """``{record id: position}`` as an array indexed by id (-1 where no
        record has that id), when the ids are dense enough that it costs
        at most 16 bytes a record more than the table (ids up to 4 times
        the records, plus 1,024); ``None`` otherwise (positions then
        binary-search the ids)."""
        n = len(self.ids)
        if n == 0 or int(self.ids[0]) < 0:
            return None
        top = int(self.ids[-1])
        if top >= 4 * n + 1024:
            return None
        lut = np.full(top + 1, -1, dtype=np.int32 if n < 2**31 else np.int64)
        lut[self.ids] = np.arange(n, dtype=lut.dtype)
        return lut

    def artifact_id(self, i: int) -> str:
        """The artifact id of the record at position ``i``."""
        return self._artifact_ids[int(self.art[i])]

    def hit_fields(self, i: int) -> tuple[str, str, int, str, dict[str, Any]]:
        """``(artifact_id, kind, surface_index, text, metadata)`` of the
        record at position ``i`` (see :meth:`hits_fields`)."""
        return self.hits_fields([i])[0]

    def hits_fields(
        self, positions: Sequence[int] | np.ndarray
    ) -> list[tuple[str, str, int, str, dict[str, Any]]]:
        """``(artifact_id, kind, surface_index, text, metadata)`` of the
        records at these positions: metadata is a new dict of the surface's
        metadata updated with the artifact's filter fields.

        Raises
        ------
        RuntimeError
            The table holds no texts (:attr:`has_text` is false).
        """
        texts, metas = self._texts, self._metadata
        if texts is None or metas is None:
            raise RuntimeError("this record table holds no texts (over TEXT_BUDGET)")
        pos = positions.tolist() if isinstance(positions, np.ndarray) else positions
        kinds = self.kinds
        t_blob, t_off = texts.blob, texts.offsets
        m_blob, m_off = metas.blob, metas.offsets
        f_blob, f_off = self._filter_fields.blob, self._filter_fields.offsets
        a_blob, a_off = self._artifact_ids.blob, self._artifact_ids.offsets
        art, kind, surface = self._columns()
        out = []
        for i in pos:
            a = art[i]
            ms, me = m_off[i], m_off[i + 1]
            meta: dict[str, Any] = self._json_object(m_blob[ms:me]) if me > ms else {}
            fs, fe = f_off[a], f_off[a + 1]
            if fe > fs:
                meta.update(self._json_object(f_blob[fs:fe]))
            out.append(
                (
                    a_blob[a_off[a] : a_off[a + 1]].decode(),
                    kinds[kind[i]],
                    surface[i],
                    t_blob[t_off[i] : t_off[i + 1]].decode(),
                    meta,
                )
            )
        return out


def _artifacts(con: Any) -> tuple[np.ndarray, _Strings, _Strings]:
    """The artifacts, ordered by id: their ``aid`` (int64), ids and filter
    fields (an empty object as nothing: decoded as ``{}`` unread), read
    batch by batch."""
    cur = con.execute("SELECT aid, artifact_id, filter_fields FROM artifacts ORDER BY artifact_id")
    aids: list[np.ndarray] = []
    names, fields = _Pieces(), _Pieces()
    rows = cur.fetchmany(_BATCH)
    while rows:
        c = list(zip(*rows))
        rows = []
        aids.append(np.array(c[0], dtype=np.int64))
        names.add([s.encode() for s in c[1]])
        fields.add([_json_bytes(s) for s in c[2]])
        del c
        rows = cur.fetchmany(_BATCH)
    a_aid = np.concatenate(aids) if aids else np.zeros(0, dtype=np.int64)
    return a_aid, _Strings.of(names), _Strings.of(fields)


def _stored_bytes(db_path: Any) -> float:
    """Bytes of a database and its write-ahead log on disk (every text it
    holds is in them, uncompressed); infinite when they cannot be sized."""
    try:
        n = os.stat(db_path).st_size
    except (OSError, TypeError, ValueError):
        return math.inf
    try:
        n += os.stat(f"{os.fspath(db_path)}-wal").st_size
    except FileNotFoundError:
        pass
    except (OSError, TypeError, ValueError):
        return math.inf
    return n


def _json_bytes(doc: str) -> bytes:
    """A stored JSON object as UTF-8, the empty object as ``b""``."""
    return b"" if doc == "{}" else doc.encode()
