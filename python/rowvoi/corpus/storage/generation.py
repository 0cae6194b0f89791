"""A committed generation, opened: what a search reads, in memory.

A search reads one committed generation of a corpus. Opening it reads,
from one snapshot, everything a search needs -- the BM25 index and the
vector index (base files, tombstones deleted, delta added:
:mod:`rowvoi.corpus.storage.index_files`), the record table
(:class:`~rowvoi.corpus.storage.records.RecordTable`) and the filter schema
-- into one :class:`Generation`; from then on the search only searches it.
:class:`Generations` keeps a corpus's opened generation: the parts are
loaded once, by the first search that needs them, and reused as long as
the generation is the committed one, which
:meth:`~rowvoi.corpus.storage.store.CorpusStore.committed_generation`
tells without a transaction (one read of SQLite's WAL-index header), so a
search of a generation still committed reads no SQL at all.

Thread-safety: parts are loaded under the holder's lock, each published
before its ``has_`` flag, and never change afterwards; any number of
searches read a :class:`Generation` at once.

Examples
--------
>>> from rowvoi.corpus import CorpusStore, build, from_mapping
>>> c = build(from_mapping({"a": "lift", "b": "drag"}, embedder="hashing:8"),
...           store=CorpusStore.memory())
>>> opened = Generations(c.store)
>>> with c.store.snapshot() as snap:
...     gen = opened.open(snap, lexical=True, dense=True, records=True)
>>> gen.generation, len(gen.lexical), gen.dense.dim, len(gen.records)
(1, 2, 8, 2)
>>> opened.current() is gen    # nothing committed since: no SQL
True
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from rowvoi.corpus.storage.index_files import load_dense, load_lexical
from rowvoi.corpus.storage.records import RecordTable
from rowvoi.corpus.storage.snapshot import Snapshot
from rowvoi.corpus.storage.store import CorpusStore
from rowvoi.errors import IndexFormatError, QueryError
from rowvoi.index.flat import FlatIndex

__all__ = ["Generation", "Generations", "Stale", "PARALLEL_SCAN_MIN", "filter_schema"]

#: One query scans a flat index of fewer vectors on one thread, and a
#: larger one on all cores (the engine's work rule may still use fewer).
#: The exact screen of 100k 384-d vectors on a 2-core machine: 1.5x faster
#: on two threads when the second core is free, within 2 % when another
#: process holds it (bench/results/flat_int8_paths.md); at 50k the gain is
#: as large but the second thread costs 5-10 % under that load.
PARALLEL_SCAN_MIN = 100_000
#: Categorical filter fields with at most this many distinct values get
#: them as their canonical values (case- and spacing-insensitive matching).
_MAX_CATEGORIES = 10_000


class Stale(Exception):
    """The snapshot is older than the generation opened: take a fresh one."""


@dataclass
class Generation:
    """One committed generation, opened (see the module notes).

    Attributes
    ----------
    generation : int
    state : dict
        The generation's committed state.
    lexical : BM25Index or None
        Its BM25 index (``has_lexical``: loaded).
    dense : FlatIndex, HNSWIndex or None
        Its vector index (``has_dense``: loaded; None when nothing was
        ever embedded).
    flat : FlatIndex or None
        The flat index (an HNSW graph's exact twin), ``dense_size``
        vectors, scanned on ``scan_threads`` threads (0: all cores).
    records : RecordTable or None
        Its record table.
    schema : rowvoi.query.QuerySchema or None
        Its filter fields, typed.
    fast : tuple or None
        What the compiled dense path needs, once the record table (with
        its texts) and a flat index (no HNSW graph) are loaded: (hit table,
        the frozen index's capsule, scan threads, records one per
        artifact).
    kind_sets : dict
        IdSets of the records of some surface kinds (key: the sorted
        kinds), kept by the searches that restricted to them.
    """

    generation: int
    state: dict[str, Any]
    lexical: Any = None
    dense: Any = None
    records: RecordTable | None = None
    dense_size: int = 0
    flat: Any = None
    scan_threads: int = 1
    has_lexical: bool = False
    has_dense: bool = False
    schema: Any = None
    fast: tuple[Any, Any, int, bool] | None = None
    kind_sets: dict[tuple[str, ...], Any] = field(default_factory=dict)

    def serves(self, lexical: bool, dense: bool) -> bool:
        """Is everything a search of these sides needs loaded?"""
        return (
            self.records is not None
            and (self.has_lexical or not lexical)
            and (self.has_dense or not dense)
        )


class Generations:
    """The opened generation of one corpus's store (see the module notes).

    Parameters
    ----------
    store : CorpusStore
    """

    def __init__(self, store: CorpusStore) -> None:
        self.store = store
        self._lock = threading.Lock()
        #: The generation opened last (whatever is committed now).
        self.loaded: Generation | None = None

    def current(self) -> Generation | None:
        """The opened generation, if it is still the committed one
        (:meth:`~rowvoi.corpus.storage.store.CorpusStore.committed_generation`:
        no transaction), else ``None``."""
        cur = self.loaded
        if cur is None:
            return None
        gen = self.store.committed_generation()
        return cur if gen is not None and gen == cur.generation else None

    def open(
        self, snap: Snapshot, *, lexical: bool, dense: bool, records: bool = False
    ) -> Generation:
        """The snapshot's generation, with the indexes asked for (and, with
        ``records``, the record table) and its filter schema, loading what
        is missing.

        Raises
        ------
        Stale
            A newer generation is opened already (take a fresh snapshot).
        BaseFileGone
            A base file was deleted by a newer commit (retry).
        BaseFileDamaged, rowvoi.errors.IndexFormatError
            A base file or ``docs.sqlite`` is damaged.
        """
        gen = snap.generation
        with self._lock:
            cur = self.loaded
            if cur is not None and cur.generation > gen:
                raise Stale()
            if cur is None or cur.generation != gen:
                cur = Generation(gen, snap.state)
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
                cur.scan_threads = 1 if cur.dense_size < PARALLEL_SCAN_MIN else 0
                cur.has_dense = True
            if records and cur.records is None:
                cur.records = RecordTable.load(snap)
            if cur.schema is None:
                cur.schema = filter_schema(snap)
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
                cur.fast = (ht, cur.dense._h.capsule(), cur.scan_threads, table.one_per_artifact)
            self.loaded = cur
            return cur


def filter_schema(snap: Snapshot) -> Any:
    """The filter schema of the snapshot's generation (its typed,
    filterable fields) as a :class:`rowvoi.query.QuerySchema`.

    Raises
    ------
    rowvoi.errors.IndexFormatError
        The stored field list is damaged.
    """
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
            f"RV_E_CORRUPT: {snap.db_path}: damaged corpus database (its filter "
            f"fields: {exc}); rebuild the corpus"
        ) from None
