"""A committed generation, opened: what a search reads, in memory.

A search reads one committed generation of a corpus. Opening it reads,
from one snapshot, everything a search needs -- the BM25 index and the
vector index (base files, tombstones deleted, delta added:
:mod:`rowvoi.corpus.storage.index_files`), the record table
(:class:`~rowvoi.corpus.storage.records.RecordTable`) and the filter schema
-- into one :class:`Generation`; from then on the search only searches it.
Large base files load in a thread of their own while the record table is
read (:func:`~rowvoi.corpus.storage.index_files.load_bases`): at 100,000
documents that is most of the first search.
:class:`Generations` keeps a corpus's opened generation: the parts are
loaded once, by the first search that needs them, and reused as long as
the generation is the committed one, which
:meth:`~rowvoi.corpus.storage.store.CorpusStore.committed_generation`
tells without a transaction (one read of SQLite's WAL-index header), so a
search of a generation still committed reads no SQL at all.

A search opens its generation through :meth:`Generations.read`, one
call that hands back an :class:`Opened`: the generation, the records the
search's filter allows, and nothing left to load; the retry on a fresh
snapshot while commits replace base files is in there too.

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

import contextlib
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypeVar

import numpy as np

from rowvoi.corpus.base import CorpusEmpty
from rowvoi.corpus.storage.index_files import (
    Bases,
    Delta,
    load_bases,
    load_dense,
    load_lexical,
    read_delta,
)
from rowvoi.corpus.storage.records import RecordTable
from rowvoi.corpus.storage.snapshot import Snapshot
from rowvoi.corpus.storage.store import BaseFileDamaged, BaseFileGone, CorpusStore
from rowvoi.errors import IndexFormatError, QueryError
from rowvoi.index.flat import FlatIndex

__all__ = [
    "Generation",
    "Generations",
    "Wanted",
    "Opened",
    "Stale",
    "PARALLEL_SCAN_MIN",
    "RETRIES",
    "empty_message",
    "filter_schema",
    "opened_in",
]

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
_T = TypeVar("_T")

#: Fresh snapshots a search takes while commits keep replacing its files.
RETRIES = 8
#: Most kind restrictions whose IdSet one generation keeps.
_KIND_SETS_MAX = 32


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
    lexical_capsule : object or None
        What the compiled lexical path needs once the BM25 index is
        loaded: its engine handle's capsule (searched under the index's
        read lock).
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
    lexical_capsule: Any = None
    kind_sets: dict[tuple[str, ...], Any] = field(default_factory=dict)

    def serves(self, lexical: bool, dense: bool) -> bool:
        """Is everything a search of these sides needs loaded?"""
        return (
            self.records is not None
            and (self.has_lexical or not lexical)
            and (self.has_dense or not dense)
        )


class Wanted(NamedTuple):
    """What a search needs of the generation it opens (see
    :meth:`Generations.read`).

    Attributes
    ----------
    lexical, dense : bool
        The indexes it reads.
    hnsw : bool
        It reads the HNSW graph (an error when the corpus has none).
    filter : Mapping or None
        Its filter document (:mod:`rowvoi.query`).
    kinds : list of str or None
        The surface kinds it is restricted to.
    name : str or None
        The corpus's name, for the advice in messages.
    label : str
        The corpus, for messages (``corpus 'NAME'``).
    """

    lexical: bool
    dense: bool
    hnsw: bool
    filter: Mapping[str, Any] | None
    kinds: list[str] | None
    name: str | None
    label: str


class Opened:
    """A committed generation opened for one search: all it reads, from
    :meth:`Generations.read`; a context manager that holds the snapshot it
    was opened through (if any) until the block ends.

    Attributes
    ----------
    gen : Generation
        The generation: its indexes (tombstones and delta applied), record
        table and filter schema, shared by the searches of that generation
        and never changed once published.
    allowed : IdSet or None
        The records the search's filter and surface kinds allow (None:
        all).
    none_allowed : str or None
        Why no record is allowed, when none is (the search then finds
        nothing).
    """

    __slots__ = ("_snap", "_stack", "allowed", "gen", "none_allowed")

    def __init__(
        self,
        gen: Generation,
        allowed: Any = None,
        none_allowed: str | None = None,
        snap: Snapshot | None = None,
    ) -> None:
        self.gen = gen
        self.allowed = allowed
        self.none_allowed = none_allowed
        self._snap = snap
        self._stack: contextlib.ExitStack | None = None

    def __enter__(self) -> Opened:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """End the snapshot the generation was opened through (if any)."""
        stack, self._stack, self._snap = self._stack, None, None
        if stack is not None:
            stack.close()

    @property
    def state(self) -> dict[str, Any]:
        """The generation's committed state."""
        return self.gen.state

    def rows(self, ids: list[int]) -> dict[int, dict[str, Any]]:
        """The records' rows (``{id: {artifact_id, kind, surface_index,
        text, metadata, filter_fields, ...}}``), read from the snapshot the
        generation was opened through: only needed when the record table
        holds no texts, which a generation opened from memory always
        holds."""
        if self._snap is None:
            raise RuntimeError("this generation was opened from memory, or closed: no rows")
        return self._snap.rows(ids)


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
        return self._load(snap, lexical, dense, records)[0]

    def _load(
        self,
        snap: Snapshot,
        lexical: bool,
        dense: bool,
        records: bool,
        schema: Any = None,
        ids: np.ndarray | None = None,
        kinds: list[str] | None = None,
    ) -> tuple[Generation, Any]:
        """:meth:`open`, and the IdSet of the records a search may find:
        the filter's ``ids`` (read from the snapshot before, with the
        generation's ``schema``), else the records of ``kinds`` (None:
        all)."""
        with self._lock:
            cur = self.loaded
            if cur is not None and cur.generation > snap.generation:
                raise Stale()
            if cur is None or cur.generation != snap.generation:
                cur = Generation(snap.generation, snap.state)
            # what the snapshot says of the parts missing, read first ...
            lexical = lexical and not cur.has_lexical
            dense = dense and not cur.has_dense
            delta = read_delta(snap, lexical=lexical, dense=dense) if lexical or dense else None
            # large base files load in a thread of their own meanwhile
            bases = None
            if delta is not None and records and cur.records is None:
                bases = load_bases(self.store, delta)
            try:
                if records and cur.records is None:
                    cur.records = RecordTable.load(snap)
                if cur.schema is None:
                    cur.schema = filter_schema(snap) if schema is None else schema
            except BaseException:
                if bases is not None:
                    bases.wait()  # (the table's problem is the one told)
                raise
            # ... then the indexes (base files, tombstones deleted, delta
            # added) and the records allowed
            _load_indexes(self.store, cur, delta, bases)
            self.loaded = cur
        return cur, _allowed_set(cur, ids, kinds)

    def _schema(self, snap: Snapshot) -> Any:
        """The filter schema of the snapshot's generation: the opened
        one's when it is that generation, else read."""
        cur = self.loaded
        if cur is not None and cur.generation == snap.generation and cur.schema is not None:
            return cur.schema
        return filter_schema(snap)

    def read(self, want: Wanted) -> Opened:
        """The committed generation, opened once for a search (use it as a
        context manager): everything ``want`` asks for loaded, the filter
        run, and nothing left to read but, for a record table without
        texts, the hits' rows, from the same snapshot, which stays open
        until the block ends.

        From memory (no SQL) when nothing filters and the generation opened
        last is still the committed one and serves; else through a
        snapshot, which loads what its generation lacks. A snapshot older
        than the generation opened already, or naming base files a newer
        commit has replaced, is retried on a fresh one (up to
        :data:`RETRIES`; :meth:`~rowvoi.corpus.storage.store.CorpusStore.confirm_damage`
        tells a race from damage).

        Raises
        ------
        CorpusEmpty
            The generation holds no records.
        ValueError
            ``want.hnsw`` of a corpus without an HNSW graph.
        rowvoi.errors.QueryError
            The filter does not fit the corpus's fields (each problem
            prefixed with ``want.label``).
        BaseFileDamaged, rowvoi.errors.IndexFormatError
            A file of the committed generation is damaged.
        RuntimeError
            The corpus kept changing (:data:`RETRIES` commits).

        Examples
        --------
        >>> from rowvoi.corpus import CorpusStore, build, from_mapping
        >>> c = build(from_mapping({"a": "lift", "b": "drag"}, embedder="hashing:8"),
        ...           store=CorpusStore.memory())
        >>> want = Wanted(True, False, False, None, ["title"], None, "the corpus")
        >>> with Generations(c.store).read(want) as opened:
        ...     len(opened.gen.lexical), opened.none_allowed
        (2, "the corpus has no surfaces of kind 'title' (its kinds: document)")
        """
        if not want.filter and want.kinds is None:
            cur = self.current()
            if (
                cur is not None
                and cur.serves(want.lexical, want.dense)
                and cur.records is not None
                and cur.records.has_text
            ):
                _check_searchable(cur.state, cur.generation, want)
                return Opened(cur)

        def opened(snap: Snapshot) -> Opened:
            _check_searchable(snap.state, snap.generation, want)
            schema = self._schema(snap) if want.filter else None
            ids = _filter_ids(snap, schema, want) if want.filter else None
            gen, allowed = self._load(
                snap, want.lexical, want.dense, True, schema, ids, want.kinds
            )
            return _opened(gen, allowed, want, snap)

        got, stack = self._retried(opened, f"{want.label} kept changing during the search")
        got._stack = stack
        return got

    def retried(self, read: Callable[[Snapshot], _T], what: str) -> _T:
        """``read(snap)`` on a fresh snapshot of the store, taken again
        while commits race it: when ``read`` raises :class:`Stale`, or
        :class:`BaseFileGone` / :class:`BaseFileDamaged` for a file a
        newer commit replaced (:meth:`~rowvoi.corpus.storage.store.CorpusStore.confirm_damage`
        tells a race from damage, and raises on damage); up to
        :data:`RETRIES` snapshots. The snapshot ends before this returns.

        Raises
        ------
        BaseFileDamaged, rowvoi.errors.IndexFormatError
            A file of the committed generation is damaged.
        RuntimeError
            ``what`` (e.g. ``corpus 'c' kept changing``), after
            :data:`RETRIES` commits.

        Examples
        --------
        >>> store = CorpusStore.memory(); store.create()
        >>> Generations(store).retried(lambda snap: snap.generation, "it kept changing")
        0
        """
        got, stack = self._retried(read, what)
        stack.close()
        return got

    def _retried(
        self, read: Callable[[Snapshot], _T], what: str
    ) -> tuple[_T, contextlib.ExitStack]:
        """:meth:`retried`, with the snapshot ``read`` succeeded on still
        open: close the stack when done with it."""
        for _ in range(RETRIES):
            stack = contextlib.ExitStack()
            try:
                got = read(stack.enter_context(self.store.snapshot()))
            except Stale:
                stack.close()
                continue
            except (BaseFileGone, BaseFileDamaged) as exc:
                stack.close()  # (outside the snapshot)
                self.store.confirm_damage(exc)  # raises unless a newer commit replaced it
                continue
            except BaseException:
                stack.close()
                raise
            return got, stack
        raise RuntimeError(f"{what} ({RETRIES} commits); retry")


def empty_message(name: str | None, label: str) -> str:
    """What :class:`~rowvoi.corpus.CorpusEmpty` says of a corpus.

    >>> empty_message("aero", "corpus 'aero'")
    "corpus 'aero' is empty; build it first: rowvoi build aero"
    """
    if name:
        return f"corpus {name!r} is empty; build it first: rowvoi build {name}"
    return f"{label} is empty; build it first"


def _check_searchable(state: Mapping[str, Any], generation: int, want: Wanted) -> None:
    if generation == 0 or not state.get("n_records"):
        raise CorpusEmpty(empty_message(want.name, want.label))
    if want.hnsw and not state.get("hnsw"):
        fix = f"rowvoi build {want.name} --hnsw" if want.name else "build(..., hnsw=True)"
        raise ValueError(
            f"{want.label} has no HNSW index; build one ({fix}) or search with "
            "index='flat' or 'auto'"
        )


def _load_indexes(
    store: CorpusStore, cur: Generation, delta: Delta | None, bases: Bases | None = None
) -> None:
    """Load the generation's indexes that ``delta`` was read for (none
    when None; their base files from ``bases`` when they were loading in
    a thread), with the BM25 index's handle for the compiled lexical
    path (:attr:`Generation.lexical_capsule`), then what the compiled
    dense path needs once the record table and a flat index are there
    (:attr:`Generation.fast`)."""
    if delta is not None and delta.lexical:
        cur.lexical = load_lexical(store, delta, None if bases is None else bases.lexical())
        cur.lexical_capsule = cur.lexical._core.capsule()
        cur.has_lexical = True
    if delta is not None and delta.dense:
        cur.dense = load_dense(store, delta, None if bases is None else bases.dense())
        if isinstance(cur.dense, FlatIndex):
            # never changed once published: searches skip its lock
            cur.dense._freeze()
        cur.flat = getattr(cur.dense, "exact", cur.dense)
        cur.dense_size = 0 if cur.flat is None else len(cur.flat)
        cur.scan_threads = 1 if cur.dense_size < PARALLEL_SCAN_MIN else 0
        cur.has_dense = True
    table = cur.records
    if (
        cur.fast is None
        and isinstance(cur.dense, FlatIndex)
        and table is not None
        and table.has_text
        and cur.generation > 0
        and cur.state.get("n_records")
    ):
        cur.fast = (
            table._hit_table(),
            cur.dense._h.capsule(),
            cur.scan_threads,
            table.one_per_artifact,
        )


def _filter_ids(snap: Snapshot, schema: Any, want: Wanted) -> np.ndarray:
    """The ids of the records ``want``'s filter (and surface kinds) allow:
    the filter compiled to SQL over the typed filter table of the
    snapshot, whose fields ``schema`` types."""
    from rowvoi.query import compile_where, parse_filter
    from rowvoi.query.sql import SQLITE

    where: str | None = None
    args: list[Any] = []
    try:
        node = parse_filter(want.filter, schema)
    except QueryError as exc:
        raise QueryError([f"{want.label}: {p}" for p in exc.problems]) from None
    if node is not None:
        where, args = compile_where(node, SQLITE)
    return snap.ids_where(where, args, want.kinds)


def _opened(gen: Generation, allowed: Any, want: Wanted, snap: Snapshot) -> Opened:
    """The generation opened for a search, with the IdSet of records its
    filter and surface restriction allow (None: all) and why none is, when
    none is."""
    why = None
    if allowed is not None and not len(allowed):
        why = _none_allowed(gen, bool(want.filter), want.kinds)
    return Opened(gen, allowed, why, snap)


def opened_in(gen: Generation, snap: Snapshot, want: Wanted) -> Opened:
    """A loaded generation opened for one search through ``snap`` (an
    open snapshot of that generation): the records ``want``'s filter and
    surface kinds allow, and why none is, when none is. What a caller that
    holds its generation itself (a shard served from memory) uses in place
    of :meth:`Generations.read`.

    Raises
    ------
    rowvoi.errors.QueryError
        The filter does not fit the generation's fields.

    Examples
    --------
    >>> from rowvoi.corpus import CorpusStore, build, from_mapping
    >>> c = build(from_mapping({"a": "lift", "b": "drag"}, embedder="hashing:8"),
    ...           store=CorpusStore.memory())
    >>> want = Wanted(True, False, False, None, ["title"], None, "the corpus")
    >>> with c.store.snapshot() as snap:
    ...     gen = Generations(c.store).open(snap, lexical=True, dense=False, records=True)
    ...     opened_in(gen, snap, want).none_allowed
    "the corpus has no surfaces of kind 'title' (its kinds: document)"
    """
    ids = _filter_ids(snap, gen.schema, want) if want.filter else None
    return _opened(gen, _allowed_set(gen, ids, want.kinds), want, snap)


def _allowed_set(gen: Generation, ids: np.ndarray | None, kinds: list[str] | None) -> Any:
    """The IdSet of the filter's ``ids`` (read from the snapshot), else of
    the records of ``kinds`` (None: all)."""
    from rowvoi.index.idset import IdSet

    if ids is not None:
        return IdSet(ids)
    if kinds is not None and gen.records is not None:
        return _kinds_allowed(gen, gen.records, kinds)
    return None


def _kinds_allowed(loaded: Generation, rec: RecordTable, kinds: list[str] | None) -> Any:
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


def _none_allowed(loaded: Generation, filtered: bool, kinds: list[str] | None) -> str:
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
