"""The corpus store: one directory, one commit point.

:class:`CorpusStore` is a corpus's directory (its layout and schema:
:mod:`rowvoi.corpus.storage.layout`): the connections to ``docs.sqlite``
(:mod:`rowvoi.corpus.storage.wal`), its creation, the read transactions
(:meth:`CorpusStore.snapshot`, :class:`~rowvoi.corpus.storage.snapshot.Snapshot`),
the builder lock, the calibration records, the manifest and the clean-up of
index files; and what a damaged corpus is told: a base file a snapshot
names but the directory lacks is told apart from one a newer commit
replaced (:meth:`CorpusStore.confirm_damage`), and every damage is reported
with the command that repairs it (:func:`repair_command`) or, for
``docs.sqlite`` itself, how to rebuild (:func:`rebuild_advice`).

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
holder's pid (:mod:`rowvoi.corpus.storage.lock`); a second builder gets
:class:`~rowvoi.corpus.base.CorpusLocked`. The kernel drops the lock of a
process that dies, so a killed builder's lock is taken over by the next
build. The lock file is opened without following a symbolic link and never
truncated unless it is a plain file of its own
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

Examples
--------
>>> store = CorpusStore.memory()
>>> store.exists(), store.name
(False, None)
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import sqlite3
import stat
import tempfile
import threading
import time
import weakref
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import rowvoi._status as _status
from rowvoi._atomic import (
    PRIVATE_DIR,
    PRIVATE_FILE,
    atomic_write_bytes,
    create_exclusive,
    fsync_dir,
    private_dir,
)
from rowvoi.corpus.base import CorpusError, CorpusExists, CorpusLocked, CorpusNotFound
from rowvoi.corpus.storage.layout import (
    DB,
    FORMAT,
    FORMAT_VERSION,
    INDEX_FILE,
    LOCK,
    MANIFEST,
    SCHEMA,
    base_files,
)
from rowvoi.corpus.storage.lock import holder_text, pid_lock
from rowvoi.corpus.storage.paths import check_name, corpus_dir
from rowvoi.corpus.storage.snapshot import Snapshot
from rowvoi.corpus.storage.wal import WalHeader, connect, wal_header
from rowvoi.errors import IndexFormatError

__all__ = [
    "CorpusStore",
    "BaseFileGone",
    "BaseFileDamaged",
    "repair_command",
    "damaged_file_error",
    "rebuild_advice",
    "is_corpus_dir",
    "remove_corpus",
]


def _shm_dir() -> str | None:
    d = "/dev/shm"
    return d if os.path.isdir(d) and os.access(d, os.W_OK | os.X_OK) else None


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
        :func:`rowvoi.corpus.storage.paths.corpora_dir` (not created).

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
            pinned, con = connect(self.db_path)
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
            wal = wal_header(pinned.key)
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
            pinned, con = connect(self.db_path)
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
        pinned, con = connect(self.db_path, create=True)
        try:
            con.execute("PRAGMA journal_mode=WAL")
            con.execute("PRAGMA synchronous=FULL")
            con.execute("BEGIN IMMEDIATE")
            for stmt in SCHEMA.split(";"):
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
            snap = self.view(con)
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

    def view(self, con: sqlite3.Connection) -> Snapshot:
        """The committed state read through ``con`` inside a transaction the
        caller holds, as a :class:`~rowvoi.corpus.storage.snapshot.Snapshot`
        -- what :meth:`snapshot` yields, and what a builder reads through its
        own connection (:meth:`writer_connection`, whose transaction sees its
        uncommitted rows).

        Each committed generation names one state (every commit writes a new
        one), so readers decode it once per store; the builder's connection
        may see its uncommitted state and never caches.

        Raises
        ------
        rowvoi.errors.IndexFormatError
            ``docs.sqlite`` is not a corpus (``RV_E_CORRUPT``), or one of
            another format version (``RV_E_VERSION``).
        """
        try:
            row = con.execute("SELECT value FROM state WHERE key = 'generation'").fetchone()
            writer = con is getattr(self, "_writer", None)
            known = self._states.get(row[0]) if row is not None and not writer else None
            fresh = known is None
            if known is None:
                rows = con.execute("SELECT key, value FROM state").fetchall()
                # a damaged file may hold text that is not UTF-8 (sqlite3
                # raises UnicodeDecodeError) or values that are not JSON
                state: dict[str, Any] = {k: json.loads(v) for k, v in rows}
            else:
                state = known
        except (sqlite3.DatabaseError, ValueError, TypeError) as exc:
            raise IndexFormatError(
                f"RV_E_CORRUPT: {self.db_path}: not a rowvoi corpus ({exc}); "
                f"{rebuild_advice(self)}"
            ) from None
        if fresh and row is not None and not writer:
            self._states = {row[0]: state}
        if state.get("format") != FORMAT:
            raise IndexFormatError(
                f"RV_E_CORRUPT: {self.db_path}: not a rowvoi corpus; {rebuild_advice(self)}"
            )
        if state.get("format_version") != FORMAT_VERSION:
            raise IndexFormatError(
                f"RV_E_VERSION: {self.db_path}: corpus format version "
                f"{state.get('format_version')}; this rowvoi reads version "
                f"{FORMAT_VERSION}: rebuild the corpus (delete it and run rowvoi build)",
                _status.E_VERSION,
            )
        return Snapshot(con, state, self.db_path)

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
        if type(probe) is WalHeader:
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
        """Hold the builder lock (``build.lock``, :func:`~rowvoi.corpus.storage.lock.pid_lock`). Yields
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
            if p.name in keep_set or not INDEX_FILE.match(p.name):
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
