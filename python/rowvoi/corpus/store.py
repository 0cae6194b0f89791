"""The corpus store: one directory, one commit point.

Layout of a corpus directory (DESIGN §5)::

    manifest.json       a description (format, embedder, analyzer, strategy,
                        counts); replaced atomically after each commit; never
                        read to decide anything
    docs.sqlite         the truth, in WAL mode (plus -wal and -shm while open)
    build.lock          the builder lock; holds the builder's pid
    lexical.<g>.rvx     the BM25 index of base generation g (engine file)
    dense.<g>.rvf       the flat vector index of base generation g, or
    hnsw.<g>/           its HNSW graph (a directory written by
                        rowvoi.index.hnsw.HNSWIndex.save, whose exact twin also
                        answers exact searches) when the corpus has one
    embeddings.sqlite   the embedding cache (rowvoi.corpus.vectors): every
                        live record's vector by embedder id and text hash;
                        a cache, written outside the commit point

Everything but ``docs.sqlite`` is derived from it: a damaged or missing
index file is reported with the command that rebuilds it
(:func:`repair_command`, :func:`rowvoi.corpus.repair`), and a base file a
snapshot names but the directory lacks is told apart from one a newer
commit replaced (:meth:`CorpusStore.confirm_damage`).

``docs.sqlite`` holds the ``state`` (committed generation, base files,
embedder id and dimension, analyzer and BM25 settings, strategy id, the
record id counter), the ``artifacts`` (the ledger: version, strategy id,
embedder id and filter fields per artifact), the ``records`` (one per
surface: int64 id, artifact, plan-global surface index, kind, text,
surface metadata, content hash), the typed ``filter_values`` table that
filters run against (one typed column per filter field; ``fields`` lists
their types), the ``delta_vectors`` and ``tombstones`` described below,
the ``links`` of the link graph (one row per edge: source artifact id,
edge type, target corpus -- ``''`` for this one -- and artifact id, its
position among the source's links, optional text and time; see
:mod:`rowvoi.corpus.edges`), and the ``calibration`` table of
calibrated abstention floors (one JSON record per search key, written by
:meth:`CorpusStore.set_calibration` under the builder lock; see
:mod:`rowvoi.corpus.calibration`).

Base plus delta
---------------
The index files are written only when a build *compacts*: they then hold
every live record, and carry the generation in their names. Between
compactions a build writes nothing but SQLite rows: records added since the
base (ids at or above the base's ``next_id``, their vectors in
``delta_vectors``) and ``tombstones`` (ids in the base files that are no
longer live). A reader loads the base files, deletes the tombstones and
adds the delta -- with the engine's incremental BM25 and flat index, so the
scores equal those of a fresh build -- which makes an edit cost work in
proportion to the change, at build time and in bytes written. A build
compacts when the delta exceeds :data:`COMPACT_MIN` records and
:data:`COMPACT_RATIO` of the live ones (or when it rebuilds everything).

Commit protocol
---------------
1. New index files (if compacting) are written under their generation's
   names, fsynced, and the directory fsynced.
2. One SQLite transaction publishes the new generation together with its
   rows (ledger, records, delta, tombstones, state): the single commit
   point. ``synchronous=FULL``, so a committed generation survives a power
   cut.
3. ``manifest.json`` is replaced (a description only).
4. Index files of other generations are deleted (and the next builder
   deletes any left by a killed one).

A SIGKILL before step 2 leaves the previous generation (the uncommitted
transaction is rolled back by SQLite; stray files are ignored, then
removed); after it, the new one. Readers read the generation and its rows
from one SQLite snapshot (WAL: never blocked by the builder); a reader
whose snapshot names base files a newer commit has since deleted retries
on a fresh snapshot. A reader that has loaded a generation learns whether
anything was committed since without a transaction: it reads the header
of SQLite's WAL index (``docs.sqlite-shm``), which every commit rewrites,
and compares it with the one it read before its last snapshot
(:meth:`CorpusStore.committed_generation`).

One builder at a time: ``build.lock`` is held with ``flock`` and names the
holder's pid; a second builder gets :class:`CorpusLocked`. The kernel
drops the lock of a process that dies, so a killed builder's lock is taken
over by the next build. The lock file is opened without following a
symbolic link and never truncated unless it is a plain file of its own
(:func:`rowvoi._atomic.open_lock_file`): a link or a hard link planted
there is refused, and its target left intact.

Privacy
-------
A corpus holds every text it indexed, so it is private to its owner,
whatever the umask: the directory is ``0700`` and every file in it
``0600`` -- ``docs.sqlite`` and its ``-wal``/``-shm`` (SQLite gives them
the database's mode), ``manifest.json``, the index files and ``hnsw.<g>/``
(a ``0700`` directory of ``0600`` files), their temporaries and the lock
file. Each file is *created* with its mode (set while it is still empty),
never loosened and tightened afterwards. A corpus written by an older
version with looser modes is tightened by the next write that takes the
builder lock (a build, a calibration); ``chmod -R go= DIR`` does it by
hand.

Trust
-----
Index file names come from ``docs.sqlite``, which a corpus received from
elsewhere could fill with anything: each is checked by
:func:`check_index_name` (a plain name of this directory, of the form the
builder writes) before anything opens it.

Examples
--------
>>> store = CorpusStore.memory()
>>> store.exists(), store.name
(False, None)
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import shutil
import sqlite3
import stat
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rowvoi import _status
from rowvoi._atomic import (
    PRIVATE_DIR,
    PRIVATE_FILE,
    atomic_write_bytes,
    create_exclusive,
    fsync_dir,
    open_lock_file,
    private_dir,
)
from rowvoi.corpus.base import CorpusError, CorpusLocked, CorpusNotFound
from rowvoi.corpus.paths import check_name, corpus_dir
from rowvoi.errors import IndexFormatError

if TYPE_CHECKING:
    from rowvoi.index.flat import FlatIndex
    from rowvoi.index.hnsw import HNSWIndex
    from rowvoi.index.lexical import BM25Index

__all__ = [
    "CorpusStore",
    "Snapshot",
    "BaseFileGone",
    "BaseFileDamaged",
    "repair_command",
    "damaged_file_error",
    "rebuild_advice",
    "base_count",
    "default_lexical",
    "new_lexical",
    "load_lexical",
    "load_dense",
    "is_corpus_dir",
    "remove_corpus",
    "HNSW_PARAMS",
    "FLAT_STORAGE",
    "base_files",
    "check_index_name",
    "index_path",
    "pid_lock",
    "holder_text",
    "FORMAT",
    "FORMAT_VERSION",
    "COMPACT_MIN",
    "COMPACT_RATIO",
    "AID_COLUMN",
    "ensure_links_table",
]

#: The ``format`` written in ``manifest.json`` and in the state table.
FORMAT = "rowvoi-corpus"
#: Version of the directory layout and SQLite schema.
FORMAT_VERSION = 1
#: A build compacts (rewrites the index files) when the delta exceeds this
#: many records ...
COMPACT_MIN = 1000
#: ... and this fraction of the live records.
COMPACT_RATIO = 0.05
#: The artifact key column of ``filter_values`` (reserved prefix: it can
#: never clash with a filter field).
AID_COLUMN = "__rowvoi_aid"

#: HNSW settings of corpora built with ``hnsw=True`` (single-threaded
#: insertion: the graph, and so every result, is deterministic).
HNSW_PARAMS = {"M": 16, "ef_construction": 200, "ef": 64, "seed": 100}

#: Storage of the flat vector index: float32 rows plus an int8 copy, so that
#: a large corpus is scanned in int8 and its candidates re-scored exactly in
#: float32 (``search(index="auto")``), while ``index="flat"`` scans float32.
FLAT_STORAGE = "int8"

MANIFEST = "manifest.json"
DB = "docs.sqlite"
LOCK = "build.lock"
_INDEX_FILE = re.compile(r"^(?:lexical\.\d+\.rvx|dense\.\d+\.rvf|hnsw\.\d+)(?:\.tmp-.+)?$")
#: The name a base's index file of each kind has (see the layout above).
_BASE_NAME = {
    "lexical": re.compile(r"lexical\.[0-9]{1,19}\.rvx"),
    "dense": re.compile(r"dense\.[0-9]{1,19}\.rvf"),
    "hnsw": re.compile(r"hnsw\.[0-9]{1,19}"),
}

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS artifacts (
    aid INTEGER PRIMARY KEY,
    artifact_id TEXT NOT NULL UNIQUE,
    version TEXT NOT NULL,
    strategy_id TEXT NOT NULL,
    embedder_id TEXT NOT NULL,
    filter_fields TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS records (
    id INTEGER PRIMARY KEY,
    aid INTEGER NOT NULL,
    surface_index INTEGER NOT NULL,
    kind TEXT NOT NULL,
    granularity TEXT NOT NULL,
    text TEXT NOT NULL,
    metadata TEXT NOT NULL,
    content_hash BLOB NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS records_by_artifact ON records (aid, surface_index);
CREATE INDEX IF NOT EXISTS records_by_hash ON records (content_hash);
CREATE TABLE IF NOT EXISTS delta_vectors (id INTEGER PRIMARY KEY, vector BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS tombstones (id INTEGER PRIMARY KEY);
CREATE TABLE IF NOT EXISTS fields (
    name TEXT PRIMARY KEY, type TEXT NOT NULL, integer INTEGER NOT NULL,
    declared INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS filter_values ("{AID_COLUMN}" INTEGER PRIMARY KEY);
CREATE TABLE IF NOT EXISTS links (
    source TEXT NOT NULL, edge_type TEXT NOT NULL, target_source TEXT NOT NULL,
    target TEXT NOT NULL, seq INTEGER NOT NULL, text TEXT, time INTEGER,
    PRIMARY KEY (source, seq)
) WITHOUT ROWID;
CREATE UNIQUE INDEX IF NOT EXISTS links_once ON links (source, edge_type, target_source, target);
CREATE TABLE IF NOT EXISTS calibration (mode TEXT PRIMARY KEY, record TEXT NOT NULL)
    WITHOUT ROWID;
"""


_LINK_COLUMNS = ["source", "edge_type", "target_source", "target", "seq", "text", "time"]


def ensure_links_table(con: sqlite3.Connection) -> None:
    """Give a corpus created before links were written (whose reserved
    ``links`` table was always empty) the current ``links`` table. Only a
    builder calls this, inside its transaction."""
    cols = [r[1] for r in con.execute("PRAGMA table_info(links)")]
    if cols == _LINK_COLUMNS:
        return
    if cols and con.execute("SELECT 1 FROM links LIMIT 1").fetchone() is not None:
        raise IndexFormatError(
            "RV_E_CORRUPT: docs.sqlite: a links table of an unknown layout "
            "holds rows; rebuild the corpus"
        )
    con.execute("DROP TABLE IF EXISTS links")
    for stmt in _SCHEMA.split(";"):
        if "IF NOT EXISTS links" in stmt:
            con.execute(stmt)


def _shm_dir() -> str | None:
    d = "/dev/shm"
    return d if os.path.isdir(d) and os.access(d, os.W_OK | os.X_OK) else None


# SQLite's WAL-index header (https://www.sqlite.org/walformat.html, "The
# WAL-Index Header"): the first 96 bytes of ``docs.sqlite-shm`` are two
# 48-byte copies of one header that every commit rewrites -- the second
# copy, a memory barrier, then the first -- and whose change counter, frame
# count, salts and checksum tell any two commits apart. Every SQLite that
# opens the database reads and writes it (processes of different SQLite
# versions share it), so its layout is fixed: version 3007000.
_WAL_HEADER = 48
_WAL_VERSION = 3007000


class _WalHeader:
    """Reads the WAL-index header of one ``-shm`` file: a commit check in
    one ``pread``, with no lock and no statement.

    The descriptor belongs to the process-wide table below (never closed
    here). ``pread`` rather than a map: a file shrunk under a map faults
    the process when read; ``pread`` past its end returns short, which
    reads as "changed". Any number of threads may read through one.
    """

    __slots__ = ("_fd",)

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def token(self) -> bytes | None:
        """Both copies of the header, or None while they differ (a commit
        is being published), before the header is valid, or when the file
        is shorter: then no check can say "unchanged". Equal tokens at two
        moments mean no commit was published in between (its first copy is
        written last)."""
        try:
            head = os.pread(self._fd, 2 * _WAL_HEADER, 0)
        except OSError:
            return None
        # (byte 12: isInit, set once the header is valid)
        if (
            len(head) != 2 * _WAL_HEADER
            or head[:_WAL_HEADER] != head[_WAL_HEADER:]
            or head[12] != 1
        ):
            return None
        return head

    def unchanged(self, token: bytes) -> bool:
        """No commit since ``token`` (a value :meth:`token` returned)."""
        try:
            return os.pread(self._fd, 2 * _WAL_HEADER, 0) == token
        except OSError:
            return False


# POSIX record locks belong to a process and a file: closing *any*
# descriptor of a file drops all the locks the process holds on it,
# including those SQLite's connections hold on ``docs.sqlite-shm`` (the
# "dead man switch" byte that stops another process from truncating the
# file under SQLite's own map, the WAL read marks that keep a checkpoint
# from overwriting pages a reader's snapshot still needs). So a descriptor
# opened on that file for the header check is closed only once no
# connection of ours to the database is open: every connection this module
# opens is counted here, from before it opens until after it has closed.
#
#   realpath of docs.sqlite -> [open connections of ours,
#                               {(st_dev, st_ino) of the -shm: its reader or None},
#                               [descriptors to close when the count is 0]]
_SHM_LOCK = threading.Lock()
_SHM_FILES: dict[str, list[Any]] = {}


def _pin(db: Path) -> str:
    """Count one more connection of ours to ``db`` (before it opens);
    returns the key for :func:`_unpin` and :func:`_wal_header`."""
    key = os.path.realpath(db)
    with _SHM_LOCK:
        entry = _SHM_FILES.get(key)
        if entry is None:
            entry = _SHM_FILES[key] = [0, {}, []]
        entry[0] += 1
    return key


def _unpin(key: str) -> None:
    """One connection of ours to the database fewer (after it has closed);
    the last one closes the descriptors of its ``-shm`` files."""
    with _SHM_LOCK:
        entry = _SHM_FILES[key]
        entry[0] -= 1
        if entry[0]:
            return
        del _SHM_FILES[key]
    for fd in entry[2]:
        try:
            os.close(fd)
        except OSError:
            pass


def _wal_header(key: str) -> _WalHeader | None:
    """The header reader of the database's ``-shm`` file, opened once per
    file and process; for a pinned connection that has read the database
    (which opened the file, and keeps it open while it lives). None when
    there is none this check can use (no file, or a layout it does not
    know: decided once per file): the caller then asks
    ``PRAGMA data_version``."""
    shm = key + "-shm"
    with _SHM_LOCK:
        entry = _SHM_FILES[key]
        try:
            st = os.stat(shm)
        except OSError:
            return None
        have = entry[1]
        if (st.st_dev, st.st_ino) in have:
            return have[st.st_dev, st.st_ino]  # type: ignore[no-any-return]
        try:
            fd = os.open(shm, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            return None
        entry[2].append(fd)  # closed only with the last connection (above)
        st = os.fstat(fd)  # (the file opened: the path may have changed)
        if (st.st_dev, st.st_ino) in have:
            return have[st.st_dev, st.st_ino]  # type: ignore[no-any-return]
        # the layout, by its version (the first field; a commit never
        # changes it): another one, or none yet, and the pragma tells
        try:
            version = os.pread(fd, 4, 0)
        except OSError:
            version = b""
        known = len(version) == 4 and int.from_bytes(version, sys.byteorder) == _WAL_VERSION
        reader = _WalHeader(fd) if known else None
        have[st.st_dev, st.st_ino] = reader
        return reader


class _Pinned:
    """One connection of ours to ``docs.sqlite``, counted by :func:`_pin`:
    :meth:`close` (also on garbage collection) closes it, then uncounts it.
    A connection that fails to close stays counted (its ``-shm``
    descriptors stay open: a leak, never a dropped lock)."""

    __slots__ = ("con", "key")

    def __init__(self, con: sqlite3.Connection, key: str) -> None:
        self.con: sqlite3.Connection | None = con
        self.key = key

    def close(self) -> None:
        con = self.con
        if con is None:
            return
        self.con = None
        try:
            con.close()
        except Exception:  # noqa: BLE001 - still open: keep the count
            return
        _unpin(self.key)

    def __del__(self) -> None:
        try:
            self.close()
        except BaseException:  # noqa: BLE001 - at interpreter exit
            pass


def _connect(db: Path, *, create: bool = False) -> tuple[_Pinned, sqlite3.Connection]:
    """A connection to ``db`` in autocommit mode, counted by :func:`_pin`
    from before it opens (and uncounted if it fails to). Without ``create``
    it never creates the file. ``check_same_thread`` is off only so that
    the garbage collector may close it from another thread: each of ours
    is used by one thread at a time. Returns its holder (which closes it)
    and the connection. Raises what ``sqlite3.connect`` raises."""
    key = _pin(db)
    try:
        con = sqlite3.connect(
            str(db) if create else f"file:{db}?mode=rw",
            uri=not create,
            timeout=60.0,
            isolation_level=None,
            check_same_thread=False,
        )
    except BaseException:
        _unpin(key)
        raise
    return _Pinned(con, key), con


class CorpusStore:
    """The directory of one corpus (see the module notes).

    Parameters
    ----------
    path : path
        The corpus directory. Nothing is created until a build runs.
    name : str, optional
        The corpus name (default: the directory's name for
        :meth:`local`, none otherwise).

    Notes
    -----
    Thread-safety: a store may be shared by threads; each thread reads
    through its own SQLite connection. One builder per corpus at a time,
    across processes (:meth:`lock`).

    Examples
    --------
    >>> import tempfile
    >>> store = CorpusStore(tempfile.mkdtemp() + "/papers", name="papers")
    >>> store.exists()
    False
    >>> store.create(); store.exists(), [p.name for p in store.files()][:1]
    (True, ['docs.sqlite'])
    >>> with store.snapshot() as snap:
    ...     snap.generation, snap.counts()["n_records"]
    (0, 0)
    """

    def __init__(self, path: str | os.PathLike[str], *, name: str | None = None) -> None:
        self.path = Path(path).expanduser().absolute()
        self.name = name
        self.temporary = False
        self._local = threading.local()
        self._states: dict[str, dict[str, Any]] = {}  # committed generation -> state

    def __repr__(self) -> str:
        return f"CorpusStore({str(self.path)!r}, name={self.name!r})"

    @classmethod
    def local(cls, name: str) -> CorpusStore:
        """The store of the named corpus under
        :func:`rowvoi.corpus.paths.corpora_dir` (not created).

        >>> import os; os.environ["ROWVOI_HOME"] = "/tmp/rv-doc"
        >>> str(CorpusStore.local("papers").path)
        '/tmp/rv-doc/corpora/papers'
        >>> del os.environ["ROWVOI_HOME"]
        """
        return cls(corpus_dir(name), name=check_name(name))

    @classmethod
    def memory(cls) -> CorpusStore:
        """An anonymous corpus for tests and notebooks, in a temporary
        directory (in ``/dev/shm``, a memory file system, where there is
        one) that is deleted when the store is garbage-collected or the
        process exits. It behaves exactly as a stored corpus.
        """
        d = tempfile.mkdtemp(prefix="rowvoi-corpus-", dir=_shm_dir())
        store = cls(d)
        store.temporary = True
        weakref.finalize(store, shutil.rmtree, d, True)
        return store

    # ------------------------------------------------------------- files
    @property
    def db_path(self) -> Path:
        """``docs.sqlite``."""
        return self.path / DB

    def exists(self) -> bool:
        """Has a build created this corpus (its ``docs.sqlite``)?"""
        return self.db_path.is_file()

    def _label(self) -> str:
        return f"corpus {self.name!r}" if self.name else f"the corpus at {self.path}"

    def require(self) -> None:
        """Raise :class:`CorpusNotFound` unless the corpus exists (creates
        nothing)."""
        if not self.exists():
            if self.name:
                raise CorpusNotFound(
                    f"no corpus {self.name!r} (looked in {self.path}); build "
                    f"it first: rowvoi build {self.name} --files DIR"
                )
            raise CorpusNotFound(f"no corpus at {self.path}: build one there first")

    def files(self) -> list[Path]:
        """The corpus's files, including those inside its index directories
        (``hnsw.<g>/``), sorted."""
        if not self.path.is_dir():
            return []
        return sorted(p for p in self.path.rglob("*") if p.is_file())

    def disk_bytes(self) -> int:
        """Bytes on disk of the corpus's files."""
        total = 0
        for p in self.files():
            try:
                total += p.stat().st_size
            except OSError:
                continue
        return total

    # -------------------------------------------------------- connections
    def connection(self) -> sqlite3.Connection:
        """This thread's connection to ``docs.sqlite`` (opened once per
        thread; never creates the file: :class:`CorpusNotFound` if absent).
        Autocommit mode: transactions are explicit. For reading only
        (builders use :meth:`writer_connection`)."""
        con: sqlite3.Connection | None = getattr(self._local, "con", None)
        if con is not None:
            return con
        self.require()
        try:
            pinned, con = _connect(self.db_path)
        except sqlite3.OperationalError as exc:
            raise CorpusNotFound(f"{self._label()}: cannot open {self.db_path}: {exc}") from None
        con.execute("PRAGMA busy_timeout = 60000")
        # reads map the file (no copy into SQLite's page cache per lookup)
        con.execute("PRAGMA mmap_size = 1073741824")
        # a first read opens the WAL index (docs.sqlite-shm) for as long as
        # the connection lives; from then on its header tells whether anyone
        # has committed (committed_generation)
        wal = None
        try:
            con.execute("PRAGMA schema_version").fetchone()
        except sqlite3.DatabaseError:
            pass  # a damaged file: the first snapshot says how
        else:
            wal = _wal_header(pinned.key)
        self._local.pinned = pinned
        self._local.wal = wal
        self._local.con = con
        return con

    def writer_connection(self) -> sqlite3.Connection:
        """The builder's connection (``synchronous=FULL``: a commit is
        durable before the old generation's files are deleted). Kept open
        between builds of this store object, so that closing it does not
        checkpoint the WAL after every build; only the holder of
        :meth:`lock` uses it, one build at a time."""
        self.require()
        con = getattr(self, "_writer", None)
        if con is None:
            pinned, con = _connect(self.db_path)
            try:
                con.execute("PRAGMA busy_timeout = 60000")
                con.execute("PRAGMA synchronous=FULL")
            except sqlite3.DatabaseError as exc:
                pinned.close()
                raise IndexFormatError(
                    f"RV_E_CORRUPT: {self.db_path}: not a rowvoi corpus ({exc}); "
                    f"{rebuild_advice(self)}"
                ) from None
            self._writer_pinned = pinned
            self._writer: sqlite3.Connection | None = con
        return con

    def close_writer(self) -> None:
        """Close the builder's connection (``rm`` does before deleting)."""
        con = getattr(self, "_writer", None)
        if con is not None:
            self._writer = None
            self._writer_pinned.close()

    def close(self) -> None:
        """Close the calling thread's connection (others close with their
        threads)."""
        con = getattr(self._local, "con", None)
        if con is not None:
            self._local.con = None
            self._local.seen = None
            self._local.wal = None
            pinned, self._local.pinned = self._local.pinned, None
            pinned.close()

    def create(self) -> None:
        """Create the directory and an empty corpus (builders only; idempotent).

        Raises
        ------
        CorpusExists
            ``path`` is a file, or a non-empty directory that is not a corpus.
        """
        from rowvoi.corpus.base import CorpusExists

        if self.path.exists() and not self.path.is_dir():
            raise CorpusExists(f"{self.path} is a file, not a corpus directory")
        if (
            self.path.is_dir()
            and not self.exists()
            and any(p.name not in (LOCK,) for p in self.path.iterdir())
        ):
            raise CorpusExists(
                f"{self.path} is a non-empty directory that is not a corpus; "
                "choose another name or path"
            )
        private_dir(self.path)
        try:
            # made 0600 before SQLite opens it: its -wal and -shm get its mode
            os.close(create_exclusive(self.db_path, PRIVATE_FILE))
        except FileExistsError:  # a creation killed before its commit: redone below
            if os.path.islink(self.db_path):
                raise CorpusExists(
                    f"{self.db_path} is a symbolic link; a corpus keeps its own "
                    "database: remove the link"
                ) from None
        pinned, con = _connect(self.db_path, create=True)
        try:
            con.execute("PRAGMA journal_mode=WAL")
            con.execute("PRAGMA synchronous=FULL")
            con.execute("BEGIN IMMEDIATE")
            for stmt in _SCHEMA.split(";"):
                if stmt.strip():
                    con.execute(stmt)
            have = {k for (k,) in con.execute("SELECT key FROM state")}
            init = {
                "format": FORMAT,
                "format_version": FORMAT_VERSION,
                "generation": 0,
                "next_id": 0,
                "base": {"generation": 0, "lexical": None, "dense": None, "next_id": 0},
                "created": time.time(),
            }
            con.executemany(
                "INSERT INTO state VALUES (?, ?)",
                [(k, json.dumps(v)) for k, v in init.items() if k not in have],
            )
            con.execute("COMMIT")
        finally:
            pinned.close()
        fsync_dir(self.path)

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[Snapshot]:
        """A read transaction: the committed generation and its rows, as one
        consistent snapshot (a builder's later commit is not seen; it never
        waits for a builder).

        Raises
        ------
        CorpusNotFound
            The corpus does not exist.
        rowvoi.errors.IndexFormatError
            ``docs.sqlite`` is not a corpus of this format version, or is
            damaged (raised by the first query that reads the damage).
        """
        con = self.connection()
        # what says "no commit since", read before the snapshot starts: while
        # it stays the same, the generation this snapshot reads is still the
        # committed one (committed_generation). The WAL-index header where
        # there is one; else SQLite's data_version of this connection (its
        # own cursor, kept: a cursor per pragma would leave a weak reference
        # behind on the connection each time)
        wal = self._local.wal
        probe: Any
        if wal is not None:
            probe, version = wal, wal.token()
        else:
            probe = con.cursor()
            try:
                version = probe.execute("PRAGMA data_version").fetchone()[0]
            except sqlite3.DatabaseError:
                version = None  # a damaged file: the snapshot below says how
        con.execute("BEGIN")
        try:
            snap = Snapshot(self, con)
            self._local.seen = None if version is None else (con, version, snap.generation, probe)
            try:
                yield snap
            except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
                # damage past the state table surfaces at the first query
                # that reads it: plain DatabaseError ("malformed"), a schema
                # without the corpus's tables or columns ("no such ..."), or
                # text that is not UTF-8 (decoded by Python, or by SQLite's
                # own "Could not decode to UTF-8" in a pragma's result); busy,
                # locked and the like stay
                damaged = (
                    type(exc) is sqlite3.DatabaseError
                    or isinstance(exc, UnicodeDecodeError)
                    or (
                        isinstance(exc, sqlite3.OperationalError)
                        and str(exc).startswith(("no such ", "Could not decode to UTF-8"))
                    )
                )
                if damaged:
                    raise IndexFormatError(
                        f"RV_E_CORRUPT: {self.db_path}: damaged corpus database ({exc}); "
                        f"{rebuild_advice(self)}"
                    ) from None
                raise
        finally:
            try:
                con.execute("COMMIT")
            except sqlite3.Error:
                pass

    def confirm_damage(self, exc: BaseFileGone | BaseFileDamaged) -> None:
        """Tell a race from damage, for a reader whose snapshot named a base
        file that is not there (:class:`BaseFileGone`) or would not load
        (:class:`BaseFileDamaged`): return when the committed generation no
        longer names it (a newer commit replaced it and is deleting it: read
        that one), else raise the error that names the file and the repair
        command. Call it outside any :meth:`snapshot` of this thread.

        Raises
        ------
        BaseFileDamaged
            The committed generation's file is missing or damaged.
        """
        with self.snapshot() as snap:
            names = base_files(snap.base)
            generation = snap.generation
        if exc.name not in names:
            return
        if isinstance(exc, BaseFileDamaged):
            raise exc
        if not os.path.lexists(self.path / exc.name):
            raise damaged_file_error(
                self, exc.name, f"missing (an index file of generation {generation})"
            ) from None

    def committed_generation(self) -> int | None:
        """The generation committed now, known without a read transaction,
        or ``None`` when it is not known (take a :meth:`snapshot`).

        It is the generation the calling thread's last snapshot read, as
        long as nobody -- another thread, a builder, another process -- has
        committed to ``docs.sqlite`` since that snapshot began. What tells
        is SQLite's WAL-index header (the first 96 bytes of
        ``docs.sqlite-shm``, which every commit rewrites; see
        https://www.sqlite.org/walformat.html), read with one ``pread``:
        no lock, no statement. Where that file cannot be read so,
        ``PRAGMA data_version`` of the thread's connection tells instead (a
        statement, and a read lock taken and dropped: two ``fcntl`` calls).
        Readers never write, so any change of the corpus shows; a commit
        that changes nothing a search reads (a calibration record), a
        checkpoint that restarts the WAL, or a header caught mid-update
        merely sends the next search through a snapshot.

        Thread-safety: per thread (each thread's own connection).
        """
        seen = getattr(self._local, "seen", None)
        con = getattr(self._local, "con", None)
        if seen is None or con is None or seen[0] is not con:
            return None
        probe = seen[3]
        if type(probe) is _WalHeader:
            return seen[2] if probe.unchanged(seen[1]) else None
        try:
            # (the snapshot's cursor: the one-row result is read to its end,
            # so the statement is reset and holds no read transaction)
            version = probe.execute("PRAGMA data_version").fetchone()[0]
        except sqlite3.Error:
            return None
        return seen[2] if version == seen[1] else None

    # --------------------------------------------------------------- lock
    @contextlib.contextmanager
    def lock(self) -> Iterator[dict[str, Any]]:
        """Hold the builder lock (``build.lock``, :func:`pid_lock`). Yields
        what the file said before (``{"pid": ...}`` of the previous holder,
        which may be a dead builder's: the kernel released its lock).

        Raises
        ------
        CorpusLocked
            Another live process holds it; the message names its pid.
        """
        private_dir(self.path)

        def busy(holder: Mapping[str, Any]) -> BaseException:
            return CorpusLocked(
                f"{self._label()} is being built by {holder_text(holder)}; "
                "one build at a time: wait for it to finish"
            )

        with pid_lock(self.path / LOCK, busy) as previous:
            self.tighten()
            yield previous

    def tighten(self) -> list[str]:
        """Make the corpus private (see "Privacy" in the module notes): its
        directories ``0700``, its files ``0600`` -- what a corpus written
        by an older version with looser modes gets at its next write (the
        builder lock calls this). Symbolic links are not followed; entries
        of another user are left alone. Returns the paths changed
        (relative)."""
        changed: list[str] = []
        if not self.path.is_dir():
            return changed
        uid = os.geteuid()
        for dirpath, dirnames, filenames in os.walk(self.path):
            for name in [".", *dirnames, *filenames]:
                p = os.path.join(dirpath, name)
                try:
                    st = os.lstat(p)
                except OSError:
                    continue
                if st.st_uid != uid:
                    continue
                want = (
                    PRIVATE_DIR
                    if stat.S_ISDIR(st.st_mode)
                    else PRIVATE_FILE
                    if stat.S_ISREG(st.st_mode)
                    else None
                )
                if want is None or stat.S_IMODE(st.st_mode) == want:
                    continue
                if _fchmod_same(p, st, want):
                    changed.append(os.path.normpath(os.path.relpath(p, self.path)))
        return changed

    # -------------------------------------------------------- calibration
    def calibration(self, key: str) -> dict[str, Any] | None:
        """The calibration record stored under ``key`` (a JSON object), or
        None when there is none; ``{}`` when the stored text is not a JSON
        object. Reads one snapshot."""
        with self.snapshot() as snap:
            row = snap.con.execute(
                "SELECT record FROM calibration WHERE mode = ?", (key,)
            ).fetchone()
        if row is None:
            return None
        try:
            record = json.loads(row[0])
        except (TypeError, ValueError):
            return {}
        return record if isinstance(record, dict) else {}

    def set_calibration(
        self, key: str, record: Mapping[str, Any], *, expect: Mapping[str, Any] | None = None
    ) -> None:
        """Store (or replace) the calibration record under ``key``.

        Written under the builder lock (:meth:`lock`), through the builder's
        connection, in one transaction: readers see the old record or the new
        one, never a mix, and a build never runs meanwhile. ``expect`` maps
        state keys (``embedder_id``, ...) to the values the record was
        computed against; if the committed state differs (a build changed
        the corpus since), nothing is written.

        Raises
        ------
        CorpusLocked
            A build holds the lock: calibrate again once it is done.
        CorpusError
            The corpus changed in a way ``expect`` forbids.
        """
        if not isinstance(key, str) or not key:
            raise ValueError(f"a calibration key must be a non-empty str, got {key!r}")
        data = json.dumps(dict(record), sort_keys=True, allow_nan=False)
        self.require()
        with self.lock():
            con = self.writer_connection()
            con.execute("BEGIN IMMEDIATE")
            try:
                if expect:
                    state = {
                        k: json.loads(v)
                        for k, v in con.execute(
                            "SELECT key, value FROM state WHERE key IN (SELECT value FROM "
                            "json_each(?))",
                            (json.dumps(list(expect)),),
                        )
                    }
                    changed = [k for k, v in expect.items() if state.get(k) != v]
                    if changed:
                        raise CorpusError(
                            f"{self._label()} changed ({', '.join(sorted(changed))}) while it "
                            "was being calibrated; calibrate again"
                        )
                con.execute(
                    "INSERT OR REPLACE INTO calibration (mode, record) VALUES (?, ?)", (key, data)
                )
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise

    def calibration_keys(self) -> list[str]:
        """The keys of the stored calibration records, sorted."""
        with self.snapshot() as snap:
            return [k for (k,) in snap.con.execute("SELECT mode FROM calibration ORDER BY mode")]

    # ------------------------------------------------------------ cleanup
    def clean_files(self, keep: Sequence[str | None]) -> list[str]:
        """Delete index files (and their temporaries) not named in ``keep``;
        returns the names deleted. Only a lock holder calls this."""
        removed = []
        keep_set = {k for k in keep if k}
        for p in self.path.iterdir() if self.path.is_dir() else ():
            if p.name in keep_set or not _INDEX_FILE.match(p.name):
                continue
            try:
                if p.is_dir():
                    shutil.rmtree(p)
                else:
                    p.unlink()
                removed.append(p.name)
            except OSError:
                continue
        if removed:
            fsync_dir(self.path)
        return removed

    def write_manifest(self, state: Mapping[str, Any]) -> bool:
        """Describe the corpus in ``manifest.json``: format, name, embedder
        (id, dimension, spec), strategy, analyzer and BM25 settings, vector
        index, source -- what stays put between builds (generations and
        counts live in ``docs.sqlite``). Replaced atomically, and only when
        the description changes; returns whether it was written."""
        doc = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "name": state.get("name"),
            "embedder": {
                "id": state.get("embedder_id"),
                "dim": state.get("dim"),
                "spec": state.get("embedder_spec"),
            },
            "strategy": {"id": state.get("strategy_id"), "spec": state.get("strategy_spec")},
            "lexical": state.get("lexical"),
            "hnsw": state.get("hnsw"),
            "source": state.get("source"),
            "created": state.get("created"),
            "note": "a description; docs.sqlite holds the committed generation and its rows",
        }
        data = json.dumps(doc, indent=1).encode()
        try:
            if (self.path / MANIFEST).read_bytes() == data:
                return False
        except OSError:
            pass
        atomic_write_bytes(self.path / MANIFEST, data, mode=PRIVATE_FILE)
        return True


def _fchmod_same(path: str, st: os.stat_result, mode: int) -> bool:
    """Set ``mode`` on the entry at ``path`` through a descriptor opened
    without following a link, if it is still the one ``st`` describes (no
    FIFO or device is waited on). Whether it was set."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return False
    try:
        now = os.fstat(fd)
        if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
            return False
        os.fchmod(fd, mode)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


@contextlib.contextmanager
def pid_lock(
    path: str | os.PathLike[str], busy: Callable[[Mapping[str, Any]], BaseException]
) -> Iterator[dict[str, Any]]:
    """Hold an exclusive, non-blocking ``flock`` on the file ``path``, which
    names the holder (``{"pid", "host", "started"}``) while it is held.

    The kernel drops the lock of a process that dies, so a lock left by a
    killed holder is simply taken over: the context yields what the file
    said before (the dead holder's pid, or ``{}``), so that the caller can
    report the takeover. The file is emptied on release. The folder of
    ``path`` must exist.

    The file is opened by :func:`rowvoi._atomic.open_lock_file`: created
    ``0600`` without truncating, never through a symbolic link, and only
    if it is a plain regular file of one link, so a link planted there
    never gets another file truncated or written.

    Parameters
    ----------
    path : path
        The lock file (created if absent).
    busy : callable
        ``holder -> exception`` raised (with the live holder's info) when
        another open file description holds the lock -- another process,
        or another ``pid_lock`` on the same file in this one.

    Raises
    ------
    PermissionError
        ``path`` is a symbolic link, a hard link or not a regular file
        (the message says to remove it).

    Thread-safety: one holder per file, across threads and processes.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "x.lock")
    >>> with pid_lock(p, lambda h: RuntimeError(holder_text(h))) as before:
    ...     try:
    ...         with pid_lock(p, lambda h: RuntimeError("busy")):
    ...             pass
    ...     except RuntimeError as exc:
    ...         print(exc, before)
    busy {}
    """
    fd = open_lock_file(path)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise
            raise busy(_read_lock(fd)) from None
        previous = _read_lock(fd)
        info = {"pid": os.getpid(), "host": os.uname().nodename, "started": time.time()}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(info).encode(), 0)
        try:
            yield previous
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def holder_text(holder: Mapping[str, Any]) -> str:
    """How a lock holder is named in messages.

    >>> holder_text({"pid": 12, "host": "h", "started": None})
    'process 12 (on h, since an unknown time)'
    """
    who = f"process {holder.get('pid')}" if holder.get("pid") else "another process"
    return f"{who} (on {holder.get('host', '?')}, since {_when(holder.get('started'))})"


def base_files(base: Mapping[str, Any]) -> list[str]:
    """The names of a base's index files and directories, each checked by
    :func:`check_index_name` (``IndexFormatError`` for a bad one).

    >>> base_files({"lexical": "lexical.3.rvx", "dense": None, "hnsw": "hnsw.3"})
    ['lexical.3.rvx', 'hnsw.3']
    """
    return [check_index_name(k, base[k]) for k in ("lexical", "dense", "hnsw") if base.get(k)]


def check_index_name(kind: str, name: Any) -> str:
    """``name`` if it is a name the builder gives an index file of ``kind``
    (``"lexical"``: ``lexical.<g>.rvx``, ``"dense"``: ``dense.<g>.rvf``,
    ``"hnsw"``: ``hnsw.<g>``), else raise -- the one check every index
    file name read from ``docs.sqlite`` passes before anything opens it.

    Such a name is a plain name inside the corpus directory: no separator,
    no ``..``, not absolute, no NUL. A received corpus whose database names
    ``../../etc/passwd`` or ``/dev/zero`` is refused here.

    Raises
    ------
    rowvoi.errors.IndexFormatError
        ``RV_E_CORRUPT``: another name (or not a string); the message
        names it and says to rebuild.

    Examples
    --------
    >>> check_index_name("lexical", "lexical.12.rvx")
    'lexical.12.rvx'
    >>> check_index_name("dense", "../dense.1.rvf")
    Traceback (most recent call last):
    ...
    rowvoi.errors.IndexFormatError: RV_E_CORRUPT: docs.sqlite names the dense index file '../dense.1.rvf', not a file name of the corpus directory (dense.<generation>.rvf); the corpus is damaged or was not written by rowvoi: delete it and build it again
    """
    pattern = _BASE_NAME.get(kind)
    if pattern is None:
        raise ValueError(f"kind {kind!r}: index files are lexical, dense or hnsw")
    if isinstance(name, str) and pattern.fullmatch(name):
        return name
    form = {"lexical": "lexical.<generation>.rvx", "dense": "dense.<generation>.rvf"}.get(
        kind, "hnsw.<generation>"
    )
    raise IndexFormatError(
        f"RV_E_CORRUPT: docs.sqlite names the {kind} index file {name!r}, not a file "
        f"name of the corpus directory ({form}); the corpus is damaged or was not "
        "written by rowvoi: delete it and build it again"
    )


def index_path(store: CorpusStore, kind: str, name: Any) -> Path:
    """The path of a base's index file ``name`` of ``kind`` in ``store``,
    after :func:`check_index_name`.

    >>> index_path(CorpusStore("/c"), "hnsw", "hnsw.2").as_posix()
    '/c/hnsw.2'
    """
    return store.path / check_index_name(kind, name)


def _read_lock(fd: int) -> dict[str, Any]:
    try:
        data = os.pread(fd, 4096, 0)
        info = json.loads(data.decode()) if data.strip() else {}
        return info if isinstance(info, dict) else {}
    except (OSError, ValueError):
        return {}


def _when(t: Any) -> str:
    if not isinstance(t, (int, float)):
        return "an unknown time"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))


class Snapshot:
    """One read transaction over a corpus: the committed state and rows.

    Obtained from :meth:`CorpusStore.snapshot`; valid inside its ``with``
    block, in the thread that opened it. Methods return plain Python
    values.

    >>> from rowvoi.corpus import build, from_mapping
    >>> c = build(from_mapping({"a": "x"}, embedder="hashing:8"), store=CorpusStore.memory())
    >>> with c.store.snapshot() as snap:
    ...     snap.generation, snap.kinds(), snap.base["lexical"]
    (1, {'document': 1}, 'lexical.1.rvx')
    """

    def __init__(self, store: CorpusStore, con: sqlite3.Connection) -> None:
        self.store = store
        self.con = con
        try:
            row = con.execute("SELECT value FROM state WHERE key = 'generation'").fetchone()
            writer = con is getattr(store, "_writer", None)
            known = store._states.get(row[0]) if row is not None and not writer else None
            fresh = known is None
            if known is None:
                rows = con.execute("SELECT key, value FROM state").fetchall()
                # a damaged file may hold text that is not UTF-8 (sqlite3
                # raises UnicodeDecodeError) or values that are not JSON
                cached: dict[str, Any] = {k: json.loads(v) for k, v in rows}
            else:
                cached = known
        except (sqlite3.DatabaseError, ValueError, TypeError) as exc:
            raise IndexFormatError(
                f"RV_E_CORRUPT: {store.db_path}: not a rowvoi corpus ({exc}); "
                f"{rebuild_advice(store)}"
            ) from None
        if fresh and row is not None and not writer:
            # a committed generation names one state (every commit writes a new
            # one), so readers decode it once per store; the builder's own
            # connection may see its uncommitted state and never caches
            store._states = {row[0]: cached}
        self.state: dict[str, Any] = cached
        if self.state.get("format") != FORMAT:
            raise IndexFormatError(
                f"RV_E_CORRUPT: {store.db_path}: not a rowvoi corpus; {rebuild_advice(store)}"
            )
        if self.state.get("format_version") != FORMAT_VERSION:
            raise IndexFormatError(
                f"RV_E_VERSION: {store.db_path}: corpus format version "
                f"{self.state.get('format_version')}; this rowvoi reads version "
                f"{FORMAT_VERSION}: rebuild the corpus (delete it and run rowvoi build)",
                _status.E_VERSION,
            )

    @property
    def generation(self) -> int:
        """The committed generation (0: never built)."""
        return int(self.state.get("generation", 0))

    @property
    def base(self) -> dict[str, Any]:
        """``{"generation", "lexical", "dense", "next_id"}`` of the base files."""
        return dict(self.state.get("base") or {})

    def counts(self) -> dict[str, int]:
        """``n_artifacts``, ``n_records``, ``n_delta`` (records added since
        the base) and ``n_tombstones``."""
        c = self.con
        base_next = int(self.base.get("next_id", 0))
        return {
            "n_artifacts": c.execute("SELECT count(*) FROM artifacts").fetchone()[0],
            "n_records": c.execute("SELECT count(*) FROM records").fetchone()[0],
            "n_delta": c.execute(
                "SELECT count(*) FROM records WHERE id >= ?", (base_next,)
            ).fetchone()[0],
            "n_tombstones": c.execute("SELECT count(*) FROM tombstones").fetchone()[0],
        }

    def n_records(self) -> int:
        """Live records."""
        return int(self.con.execute("SELECT count(*) FROM records").fetchone()[0])

    def _damaged(self, what: str) -> Exception:
        """The error for rows a damaged ``docs.sqlite`` holds (SQLite checks
        neither NOT NULL nor types when it reads a page)."""
        from rowvoi.errors import IndexFormatError

        return IndexFormatError(
            f"RV_E_CORRUPT: {self.store.db_path}: damaged corpus database ({what}); "
            "rebuild the corpus"
        )

    def tombstones(self) -> np.ndarray:
        """Ids in the base files that are no longer live (int64, ascending)."""
        rows = self.con.execute("SELECT id FROM tombstones ORDER BY id").fetchall()
        if not all(type(r[0]) is int for r in rows):
            raise self._damaged("a tombstone that is not an integer id")
        return np.array([r[0] for r in rows], dtype=np.int64)

    def delta_texts(self, batch: int = 10_000) -> Iterator[tuple[np.ndarray, list[str]]]:
        """``(ids, texts)`` batches of the records added since the base."""
        cur = self.con.execute(
            "SELECT id, text FROM records WHERE id >= ? ORDER BY id",
            (int(self.base.get("next_id", 0)),),
        )
        while True:
            rows = cur.fetchmany(batch)
            if not rows:
                return
            if not all(type(r[0]) is int and type(r[1]) is str for r in rows):
                raise self._damaged("a record added since the base without an id or text")
            yield (np.array([r[0] for r in rows], dtype=np.int64), [r[1] for r in rows])

    def delta_vectors(
        self, dim: int, batch: int = 10_000
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """``(ids, vectors)`` batches of the delta's vectors."""
        cur = self.con.execute("SELECT id, vector FROM delta_vectors ORDER BY id")
        while True:
            rows = cur.fetchmany(batch)
            if not rows:
                return
            if not all(
                type(r[0]) is int and type(r[1]) is bytes and len(r[1]) == 4 * dim for r in rows
            ):
                raise self._damaged(f"a delta vector that is not {dim} float32 values")
            ids = np.array([r[0] for r in rows], dtype=np.int64)
            vecs = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
            yield ids, vecs.reshape(len(rows), dim)

    def fields(self) -> list[tuple[str, str, bool]]:
        """``(name, type, integer)`` of every filter field, by name."""
        return [
            (n, t, bool(i))
            for n, t, i in self.con.execute("SELECT name, type, integer FROM fields ORDER BY name")
        ]

    def distinct_values(self, field: str, limit: int) -> list[Any]:
        """Up to ``limit`` distinct non-null values of a filter field."""
        from rowvoi.query.sql import quote_ident

        q = quote_ident(field)
        return [
            v
            for (v,) in self.con.execute(
                f"SELECT DISTINCT {q} FROM filter_values WHERE {q} IS NOT NULL ORDER BY {q} "
                "LIMIT ?",
                (limit,),
            )
        ]

    def ids_where(
        self, where_sql: str | None, params: Sequence[Any], kinds: Sequence[str] | None
    ) -> np.ndarray:
        """Record ids whose artifact's filter values satisfy ``where_sql``
        (a compiled filter over ``filter_values``, or ``None``) and whose
        kind is in ``kinds`` (or any kind), ascending."""
        sql = "SELECT id FROM records"
        conds: list[str] = []
        args: list[Any] = []
        if where_sql is not None:
            conds.append(f'aid IN (SELECT "{AID_COLUMN}" FROM filter_values WHERE {where_sql})')
            args.extend(params)
        if kinds is not None:
            conds.append("kind IN (SELECT value FROM json_each(?))")
            args.append(json.dumps(list(kinds)))
        if conds:
            sql += " WHERE " + " AND ".join(conds)
        rows = self.con.execute(sql + " ORDER BY id", args).fetchall()
        return np.array([r[0] for r in rows], dtype=np.int64)

    def rows(self, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        """Records by id: ``{id: {artifact_id, aid, surface_index, kind,
        granularity, text, metadata, filter_fields}}`` (ids not live are
        absent)."""
        if len(ids) == 0:
            return {}
        out: dict[int, dict[str, Any]] = {}
        for part in _chunks([int(i) for i in ids]):
            cur = self.con.execute(
                "SELECT r.id, r.aid, r.surface_index, r.kind, r.granularity, r.text, r.metadata, "
                "a.artifact_id, a.filter_fields FROM records r JOIN artifacts a ON a.aid = r.aid "
                f"WHERE r.id IN ({_marks(len(part))})",
                part,
            )
            out.update(
                (
                    r[0],
                    {
                        "aid": r[1],
                        "surface_index": r[2],
                        "kind": r[3],
                        "granularity": r[4],
                        "text": r[5],
                        "metadata": r[6],
                        "artifact_id": r[7],
                        "filter_fields": r[8],
                    },
                )
                for r in cur
            )
        return out

    def brief(self, ids: Sequence[int]) -> dict[int, tuple[int, str, str, int]]:
        """``{id: (aid, kind, artifact_id, surface_index)}`` for live ids
        (cheap: no text)."""
        if len(ids) == 0:
            return {}
        out: dict[int, tuple[int, str, str, int]] = {}
        for part in _chunks([int(i) for i in ids]):
            cur = self.con.execute(
                "SELECT r.id, r.aid, r.kind, a.artifact_id, r.surface_index FROM records r "
                f"JOIN artifacts a ON a.aid = r.aid WHERE r.id IN ({_marks(len(part))})",
                part,
            )
            out.update((r[0], (r[1], r[2], r[3], r[4])) for r in cur)
        return out

    def ledger(self) -> dict[str, str]:
        """``{artifact id: version}`` of every artifact in the ledger (the
        version is the change signal the build recorded)."""
        return dict(self.con.execute("SELECT artifact_id, version FROM artifacts"))

    def artifact(self, artifact_id: str) -> dict[str, Any] | None:
        """The ledger entry of an artifact, or ``None``."""
        row = self.con.execute(
            "SELECT aid, version, strategy_id, embedder_id, filter_fields "
            "FROM artifacts WHERE artifact_id = ?",
            (artifact_id,),
        ).fetchone()
        if row is None:
            return None
        return {
            "aid": row[0],
            "version": row[1],
            "strategy_id": row[2],
            "embedder_id": row[3],
            "filter_fields": json.loads(row[4]),
        }

    def artifact_records(self, aid: int, kind: str | None = None) -> list[tuple[Any, ...]]:
        """``(id, surface_index, kind, granularity, text, metadata)`` rows of
        one artifact in plan order."""
        sql = (
            "SELECT id, surface_index, kind, granularity, text, metadata FROM records "
            "WHERE aid = ?"
        )
        args: list[Any] = [aid]
        if kind is not None:
            sql += " AND kind = ?"
            args.append(kind)
        return self.con.execute(sql + " ORDER BY surface_index", args).fetchall()

    def links(self) -> list[tuple[str, str, str, str, str | None, int | None]]:
        """Every stored link as ``(source, edge_type, target_source, target,
        text, time)``, by source artifact id, then in extraction order
        (``target_source`` is ``''`` for this corpus). ``[]`` for a corpus
        whose links table predates the link graph."""
        cols = [r[1] for r in self.con.execute("PRAGMA table_info(links)")]
        if cols != _LINK_COLUMNS:
            return []
        return self.con.execute(
            "SELECT source, edge_type, target_source, target, text, time "
            "FROM links ORDER BY source, seq"
        ).fetchall()

    def n_links(self) -> int:
        """Stored links (dangling ones included)."""
        cols = [r[1] for r in self.con.execute("PRAGMA table_info(links)")]
        if cols != _LINK_COLUMNS:
            return 0
        return int(self.con.execute("SELECT count(*) FROM links").fetchone()[0])

    def kinds(self) -> dict[str, int]:
        """Surface kinds and their record counts."""
        return dict(
            self.con.execute("SELECT kind, count(*) FROM records GROUP BY kind ORDER BY kind")
        )


def _chunks(ids: list[int], size: int = 500) -> Iterator[list[int]]:
    for i in range(0, len(ids), size):
        yield ids[i : i + size]


def _marks(n: int) -> str:
    return ", ".join("?" * n)


def is_corpus_dir(path: Path) -> bool:
    """Does ``path`` hold a corpus (a ``docs.sqlite``)?

    >>> import tempfile, pathlib
    >>> is_corpus_dir(pathlib.Path(tempfile.mkdtemp()))
    False
    """
    return (path / DB).is_file()


def remove_corpus(store: CorpusStore) -> None:
    """Delete a corpus directory (under its builder lock, so a running
    build is never pulled from under; raises :class:`CorpusLocked` then).

    >>> import tempfile
    >>> store = CorpusStore(tempfile.mkdtemp() + "/old", name="old"); store.create()
    >>> remove_corpus(store); store.path.exists()
    False
    """
    store.require()
    with store.lock():
        store.close()
        store.close_writer()
        for p in list(store.path.iterdir()):
            if p.name == LOCK:
                continue
            if p.is_dir():
                shutil.rmtree(p)
            else:
                p.unlink()
    try:
        (store.path / LOCK).unlink()
        store.path.rmdir()
    except OSError as exc:
        raise CorpusError(f"{store.path}: could not remove the directory ({exc})") from None


# ------------------------------------------------------------ index loading


class BaseFileGone(FileNotFoundError):
    """A base file named by a snapshot is gone: a newer commit replaced it
    (readers retry on a fresh snapshot), or it is missing from the committed
    generation (damage: :meth:`CorpusStore.confirm_damage` tells which).

    >>> gone = BaseFileGone("/corpora/notes/dense.3.rvf")
    >>> isinstance(gone, FileNotFoundError), gone.name
    (True, 'dense.3.rvf')
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__(errno.ENOENT, "index file missing", os.fspath(path))
        self.path = Path(path)
        self.name = self.path.name


class BaseFileDamaged(IndexFormatError):
    """A base file named by a snapshot would not load, or holds other
    records than its generation's. The message names the file, the problem
    and the repair command (:func:`damaged_file_error`); ``name`` is the
    file's name in the corpus directory. (Readers first make sure that the
    committed generation still names it: :meth:`CorpusStore.confirm_damage`.)

    >>> err = BaseFileDamaged("RV_E_CORRUPT: ...", name="lexical.2.rvx")
    >>> isinstance(err, IndexFormatError), err.name
    (True, 'lexical.2.rvx')
    """

    def __init__(self, message: str, code: int | None = None, *, name: str) -> None:
        super().__init__(message, code)
        self.name = name


def repair_command(store: CorpusStore) -> str:
    """The command that rebuilds a corpus's index files from its stored
    rows and embedding cache (:func:`rowvoi.corpus.repair`).

    >>> repair_command(CorpusStore("/data/c", name="notes"))
    'rowvoi build notes --repair'
    >>> repair_command(CorpusStore("/data/c"))
    "rowvoi.corpus.repair(CorpusStore('/data/c'))"
    """
    if store.name:
        return f"rowvoi build {store.name} --repair"
    return f"rowvoi.corpus.repair(CorpusStore({str(store.path)!r}))"


def rebuild_advice(store: CorpusStore) -> str:
    """What to do when ``docs.sqlite`` itself is damaged: it holds the
    corpus's rows, the truth the index files are rebuilt from, so the corpus
    is rebuilt from its source.

    >>> rebuild_advice(CorpusStore("/data/c", name="notes"))
    "its rows are the corpus's truth and the index files cannot restore them: rebuild corpus 'notes' from its source: rowvoi rm notes --keep-registration, then rowvoi build notes"
    """
    how = (
        f"rowvoi rm {store.name} --keep-registration, then rowvoi build {store.name}"
        if store.name
        else f"delete {store.path} and build it again"
    )
    return (
        "its rows are the corpus's truth and the index files cannot restore them: "
        f"rebuild {store._label()} from its source: {how}"
    )


def damaged_file_error(
    store: CorpusStore, name: str, problem: str, code: int | None = None
) -> BaseFileDamaged:
    """The error for a damaged or missing index file ``name`` of ``store``:
    it names the file, the problem and the repair command.

    >>> print(damaged_file_error(CorpusStore("/c", name="notes"), "dense.2.rvf", "missing"))
    RV_E_CORRUPT: /c/dense.2.rvf: missing; repair corpus 'notes' (its index files are rebuilt from docs.sqlite and the embedding cache, nothing is re-embedded): rowvoi build notes --repair
    """
    return BaseFileDamaged(
        f"RV_E_CORRUPT: {store.path / name}: {problem}; repair {store._label()} (its index "
        "files are rebuilt from docs.sqlite and the embedding cache, nothing is re-embedded): "
        f"{repair_command(store)}",
        code,
        name=name,
    )


def _load_problem(store: CorpusStore, name: str, exc: BaseException) -> str:
    """The loader's message without its status prefix and the file's path."""
    msg = str(exc)
    for prefix in ("RV_E_CORRUPT: ", "RV_E_VERSION: "):
        if msg.startswith(prefix):
            msg = msg[len(prefix) :]
    for path in (str(store.path / name) + "/", str(store.path / name)):
        if msg.startswith(path):
            msg = msg[len(path) :].lstrip(": ") or msg
            break
    return msg or type(exc).__name__


def base_count(snap: Snapshot) -> int:
    """The records the base index files of the snapshot's generation hold:
    the live base records plus the tombstoned ones.

    >>> store = CorpusStore.memory(); store.create()
    >>> with store.snapshot() as snap:
    ...     base_count(snap)
    0
    """
    c = snap.counts()
    return c["n_records"] - c["n_delta"] + c["n_tombstones"]


def _check_base_size(store: CorpusStore, snap: Snapshot, name: str, n: int, what: str) -> None:
    want = base_count(snap)
    if n != want:
        raise damaged_file_error(
            store,
            name,
            f"holds {n} {what} where generation {snap.generation} has {want} "
            "(a file of another corpus or generation?)",
        )


#: The lexical settings a build uses unless told otherwise: the default
#: analyzer and Lucene BM25 (k1 = 1.2, b = 0.75).
def default_lexical() -> dict[str, Any]:
    """``{"analyzer": ..., "bm25": {...}}`` of a new corpus.

    >>> default_lexical()["bm25"]
    {'variant': 'lucene', 'k1': 1.2, 'b': 0.75}
    """
    from rowvoi.index.text import Analyzer

    return {"analyzer": Analyzer().to_dict(), "bm25": {"variant": "lucene", "k1": 1.2, "b": 0.75}}


def new_lexical(conf: Mapping[str, Any]) -> BM25Index:
    """An empty BM25 index with a corpus's lexical settings.

    >>> new_lexical(default_lexical()).params["variant"]
    'lucene'
    """
    from rowvoi.index.lexical import BM25Index
    from rowvoi.index.text import Analyzer

    return BM25Index(Analyzer.from_dict(conf["analyzer"]), **conf["bm25"])


def load_lexical(store: CorpusStore, snap: Snapshot) -> BM25Index:
    """The BM25 index of the snapshot's generation: the base file, minus
    the tombstones, plus the delta's texts (added with their record ids).

    Raises
    ------
    BaseFileGone
        The base file was deleted by a newer commit (retry).

    Examples
    --------
    >>> from rowvoi.corpus import build, from_mapping
    >>> c = build(from_mapping({"a": "lift", "b": "drag"}, embedder="hashing:8"),
    ...           store=CorpusStore.memory())
    >>> with c.store.snapshot() as snap:
    ...     len(load_lexical(c.store, snap)), load_dense(c.store, snap).dim
    (2, 8)
    """
    from rowvoi.index.lexical import BM25Index

    name = snap.base.get("lexical")
    if name:
        path = index_path(store, "lexical", name)
        try:
            index = BM25Index.load(path, follow_symlinks=False)
        except OSError:
            if not os.path.lexists(path):
                raise BaseFileGone(path) from None
            raise
        except IndexFormatError as exc:
            if not os.path.lexists(path):
                raise BaseFileGone(path) from None
            raise damaged_file_error(
                store, name, _load_problem(store, name, exc), exc.code
            ) from None
        _check_base_size(store, snap, name, len(index), "documents")
    else:
        index = new_lexical(snap.state.get("lexical") or default_lexical())
    tomb = snap.tombstones()
    if len(tomb):
        index.delete(tomb)
    for ids, texts in snap.delta_texts():
        index.add(texts, ids=ids)
    return index


def load_dense(store: CorpusStore, snap: Snapshot) -> FlatIndex | HNSWIndex | None:
    """The vector index (inner product over unit vectors = cosine) of the
    snapshot's generation: base file, minus tombstones, plus delta vectors
    -- a :class:`~rowvoi.index.flat.FlatIndex`, or an
    :class:`~rowvoi.index.hnsw.HNSWIndex` for a corpus built with ``hnsw=True``.
    ``None`` when the corpus has no dimension yet (nothing was ever
    embedded).

    Raises
    ------
    BaseFileGone
        The base file was deleted by a newer commit (retry).

    Examples
    --------
    >>> store = CorpusStore.memory(); store.create()
    >>> with store.snapshot() as snap:
    ...     load_dense(store, snap) is None   # nothing embedded yet
    True
    """
    from rowvoi.errors import IndexFormatError as _Format
    from rowvoi.index.flat import FlatIndex
    from rowvoi.index.hnsw import HNSWIndex

    dim = snap.state.get("dim")
    if not dim:
        return None
    name = snap.base.get("dense")
    hnsw = snap.base.get("hnsw")
    index: FlatIndex | HNSWIndex
    if hnsw or name:
        file = str(hnsw or name)
        path = index_path(store, "hnsw" if hnsw else "dense", file)
        try:
            index = (HNSWIndex if hnsw else FlatIndex).load(path, follow_symlinks=False)
        except OSError:
            if not os.path.lexists(path):
                raise BaseFileGone(path) from None
            raise
        except _Format as exc:
            if not os.path.lexists(path):
                raise BaseFileGone(path) from None
            raise damaged_file_error(
                store, file, _load_problem(store, file, exc), exc.code
            ) from None
        if index.dim != int(dim):
            raise damaged_file_error(
                store, file, f"holds {index.dim}-dimensional vectors; the corpus's are {dim}"
            )
        _check_base_size(store, snap, file, len(index), "vectors")
    elif snap.state.get("hnsw"):
        params = snap.state["hnsw"]
        if not isinstance(params, dict) or set(params) - set(HNSW_PARAMS):
            raise _Format(
                f"RV_E_CORRUPT: {store.path / 'docs.sqlite'}: HNSW settings {params!r} are "
                f"not a subset of {sorted(HNSW_PARAMS)}; the corpus was altered: rebuild it"
            )
        try:
            index = HNSWIndex(int(dim), metric="ip", **params)
        except ValueError as exc:  # the constructor's own checks
            raise _Format(
                f"RV_E_CORRUPT: {store.path / 'docs.sqlite'}: bad HNSW settings ({exc}); "
                "the corpus was altered: rebuild it"
            ) from None
    else:
        index = FlatIndex(int(dim), metric="ip", storage=FLAT_STORAGE)
    tomb = snap.tombstones()
    if len(tomb):
        index.remove(tomb)
    for ids, vecs in snap.delta_vectors(int(dim)):
        index.add(vecs, ids=ids)
    return index
