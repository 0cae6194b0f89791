"""Connections to a corpus's ``docs.sqlite``, and the commit check
without a transaction: the WAL-index header.

Every connection :mod:`rowvoi.corpus.storage.store` opens is made here
(:func:`connect`) and counted per database file, for one reason: the
header check reads ``docs.sqlite-shm`` through a descriptor of its own
(:func:`wal_header`), and POSIX drops *all* of a process's record locks on
a file when *any* of its descriptors of that file is closed -- SQLite's
among them. So that descriptor is closed only once no connection of ours
to the database is open (see the notes above :func:`_pin`).

Thread-safety: the table of open files is guarded by a lock; a
:class:`WalHeader` may be read by any number of threads.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import threading
from pathlib import Path
from typing import Any

__all__ = ["WalHeader", "Pinned", "connect", "wal_header"]

# SQLite's WAL-index header (https://www.sqlite.org/walformat.html, "The
# WAL-Index Header"): the first 96 bytes of ``docs.sqlite-shm`` are two
# 48-byte copies of one header that every commit rewrites -- the second
# copy, a memory barrier, then the first -- and whose change counter, frame
# count, salts and checksum tell any two commits apart. Every SQLite that
# opens the database reads and writes it (processes of different SQLite
# versions share it), so its layout is fixed: version 3007000.
_WAL_HEADER = 48
_WAL_VERSION = 3007000


class WalHeader:
    """Reads the WAL-index header of one ``-shm`` file: a commit check in
    one ``pread``, with no lock and no statement.

    The descriptor belongs to the process-wide table below (never closed
    here). ``pread`` rather than a map: a file shrunk under a map faults
    the process when read; ``pread`` past its end returns short, which
    reads as "changed". Any number of threads may read through one.

    Examples
    --------
    >>> import os, tempfile
    >>> fd, path = tempfile.mkstemp()
    >>> _ = os.write(fd, b"not a WAL index")
    >>> WalHeader(fd).token() is None   # too short to be a header
    True
    >>> os.close(fd); os.remove(path)
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
    returns the key for :func:`_unpin` and :func:`wal_header`."""
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


def wal_header(key: str) -> WalHeader | None:
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
        reader = WalHeader(fd) if known else None
        have[st.st_dev, st.st_ino] = reader
        return reader


class Pinned:
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


def connect(db: Path, *, create: bool = False) -> tuple[Pinned, sqlite3.Connection]:
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
    return Pinned(con, key), con
