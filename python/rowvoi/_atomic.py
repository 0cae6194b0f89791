"""Atomic file replacement: the one durability path of the Python layer
(ground floor: imports only the standard library).

Every file rowvoi writes from Python goes through here, the same way the C
engine's saves go through ``src/core/atomic_file.c``:

1. write the new content to a temporary sibling of the target,
   ``NAME.tmp-HOST-PID-RAND``, created with mode ``0666 & ~umask`` (like any
   ``open()``; :func:`tempfile.mkstemp` would give ``0600``), or with the
   exact ``mode=`` a caller gives (set while the file is still empty, so
   its bytes are never readable under another mode: private files such as
   a corpus's are written with ``mode=0o600``);
2. ``fsync`` it;
3. ``rename`` it over the target (atomic on POSIX: a reader sees the old
   file or the new one, never a mix);
4. ``fsync`` the directory, so the rename itself survives a power cut.

A crash before step 3 leaves the old file intact and a temporary behind.
**Stale temporaries** are removed by the next write to the same target (and
by :func:`clean_stale`): a temporary of this naming is stale when the
process named in it is gone -- same host (``HOST`` is this machine's name)
and ``kill(PID, 0)`` reports no such process -- or, for a temporary written
on another host (a shared file system), when it is older than
:data:`FOREIGN_MAX_AGE` seconds.  Temporaries of a live process, including
this one, are never touched; only names of exactly this pattern are.

API
---
:func:`atomic_path`
    context manager yielding a temporary path to write by name (for
    libraries that only write to a path); commits on normal exit, removes
    the temporary on an exception.
:func:`atomic_write`
    ``atomic_write(path, writer)`` calls ``writer(file_object)``.
:func:`atomic_write_bytes`
    writes a bytes object.
:func:`owner_tag`, :func:`owner_alive`
    the ``HOST-PID-RAND`` tags, for callers that name whole generations of
    files (see :class:`rowvoi.index.hnsw.HNSWIndex`).
:func:`sha256_file`
    the SHA-256 of a file's bytes, read in 1 MiB blocks (the checksum the
    files above are verified with).
:func:`private_dir`, :func:`open_lock_file`
    a directory only its owner may enter (``0700``), and a lock file opened
    without following a symbolic link (``0600``; never another file).

Examples
--------
>>> import os, tempfile
>>> from rowvoi._atomic import atomic_write_bytes, atomic_write
>>> d = tempfile.mkdtemp()
>>> target = os.path.join(d, "notes.txt")
>>> atomic_write_bytes(target, b"first")
>>> atomic_write(target, lambda fh: fh.write(b"second"))
>>> open(target, "rb").read(), os.listdir(d)
(b'second', ['notes.txt'])
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import secrets
import socket
import stat
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

__all__ = [
    "atomic_path",
    "atomic_write",
    "atomic_write_bytes",
    "clean_stale",
    "fsync_dir",
    "fsync_path",
    "owner_tag",
    "owner_alive",
    "is_stale_tag",
    "FOREIGN_MAX_AGE",
    "sha256_file",
    "check_mode",
    "create_exclusive",
    "private_dir",
    "open_lock_file",
    "PRIVATE_FILE",
    "PRIVATE_DIR",
]

#: The mode of a private file (owner read and write).
PRIVATE_FILE = 0o600
#: The mode of a private directory (owner only).
PRIVATE_DIR = 0o700

#: Age (seconds) after which a temporary written on another host counts as
#: stale (its process cannot be checked from here).
FOREIGN_MAX_AGE = 24 * 3600

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)

_TAG = re.compile(r"^(?P<host>[A-Za-z0-9_-]+)-(?P<pid>[0-9]+)-(?P<rand>[0-9a-f]{8,16})$")


def _host() -> str:
    """This machine's name, reduced to ``[A-Za-z0-9_-]`` and 32 characters
    (the C engine reduces it the same way)."""
    name = socket.gethostname() or "host"
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)[:32] or "host"


def owner_tag() -> str:
    """A fresh ``HOST-PID-RAND`` tag naming this process.

    >>> import os
    >>> tag = owner_tag()
    >>> f"-{os.getpid()}-" in tag, owner_alive(tag)
    (True, True)
    """
    return f"{_host()}-{os.getpid()}-{secrets.token_hex(4)}"


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return True  # not a pid we could have written: do not touch
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    except OSError:
        return True
    return True


def owner_alive(tag: str) -> bool | None:
    """Is the process named by a tag alive?  None when it ran on another
    host (or the tag is not one of ours), where it cannot be checked."""
    m = _TAG.match(tag)
    if not m or m.group("host") != _host():
        return None
    return _pid_alive(int(m.group("pid")))


def is_stale_tag(tag: str, mtime: float, now: float | None = None) -> bool:
    """The staleness rule of the module notes, for a tag and a file's
    modification time.

    >>> is_stale_tag(owner_tag(), 0.0)           # this live process: never
    False
    >>> is_stale_tag("elsewhere_host-1-abcdef01", 0.0)  # foreign and ancient
    True
    >>> is_stale_tag("not a tag", 0.0)
    False
    """
    if not _TAG.match(tag):
        return False
    alive = owner_alive(tag)
    if alive is None:
        now = time.time() if now is None else now
        return now - mtime > FOREIGN_MAX_AGE
    return not alive


def _temp_prefix(path: Path) -> str:
    return path.name + ".tmp-"


def clean_stale(path: str | os.PathLike[str]) -> list[str]:
    """Remove stale temporaries of ``path`` (see the module notes); returns
    the names removed.  Best effort: errors are ignored."""
    p = Path(path)
    prefix = _temp_prefix(p)
    removed: list[str] = []
    try:
        entries = list(os.scandir(p.parent))
    except OSError:
        return removed
    for e in entries:
        if not e.name.startswith(prefix):
            continue
        try:
            st = e.stat(follow_symlinks=False)
            if not stat.S_ISREG(st.st_mode):
                continue
            if is_stale_tag(e.name[len(prefix) :], st.st_mtime):
                os.unlink(e.path)
                removed.append(e.name)
        except OSError:
            continue
    return removed


def fsync_dir(directory: str | os.PathLike[str]) -> None:
    """fsync a directory so renames in it are durable (best effort: some
    file systems refuse to open directories)."""
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def fsync_path(path: str | os.PathLike[str]) -> None:
    """fsync a file another writer produced (e.g. a peer library's save), so
    its bytes are durable before a rename or manifest publishes it."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def check_mode(mode: int | None) -> int | None:
    """``mode`` if it is None or permission bits (an int from 0 to
    ``0o777``), else raise.

    Raises
    ------
    TypeError
        ``mode`` is not an int.
    ValueError
        It is negative or has bits above ``0o777`` (set-id, sticky).

    >>> check_mode(0o600) == 0o600, check_mode(None)
    (True, None)
    >>> check_mode(0o4755)
    Traceback (most recent call last):
    ...
    ValueError: mode 0o4755: give permission bits only (0 to 0o777)
    """
    if mode is None:
        return None
    if isinstance(mode, bool) or not isinstance(mode, int):
        raise TypeError(f"mode must be an int such as 0o600, not {type(mode).__name__}")
    if not 0 <= mode <= 0o777:
        raise ValueError(f"mode {mode:#o}: give permission bits only (0 to 0o777)")
    return mode


def create_exclusive(path: str | os.PathLike[str], mode: int | None = None) -> int:
    """Create the new file ``path`` (never an existing one, never through a
    symbolic link) and return a descriptor open for writing. ``mode`` None
    gives ``0666 & ~umask``; else exactly ``mode``, set while the file is
    still empty."""
    mode = check_mode(mode)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _CLOEXEC | _NOFOLLOW
    fd = os.open(path, flags, 0o666 if mode is None else mode)
    if mode is not None:
        try:
            os.fchmod(fd, mode)  # the umask may have cleared bits of it
        except BaseException:
            os.close(fd)
            os.unlink(path)
            raise
    return fd


def _create_temp(path: Path, mode: int | None = None) -> tuple[int, str]:
    """Create a new temporary sibling of path (mode: see create_exclusive)."""
    prefix = str(path.parent / _temp_prefix(path))
    for _ in range(100):
        tmp = prefix + owner_tag()
        try:
            fd = create_exclusive(tmp, mode)
        except FileExistsError:
            continue
        return fd, tmp
    raise FileExistsError(errno.EEXIST, "cannot find a free temporary name beside", str(path))


def private_dir(path: str | os.PathLike[str], *, tighten: bool = True) -> Path:
    """Make ``path`` a directory only its owner may enter (``0700``) and
    return it: created with that mode (missing parents too), or, when it
    exists, this user owns it and ``tighten`` is true, its group and other
    bits cleared. A directory of another user is left as it is.

    Raises
    ------
    NotADirectoryError
        ``path`` exists and is not a directory.
    OSError
        It cannot be created.

    >>> import os, stat, tempfile
    >>> d = private_dir(os.path.join(tempfile.mkdtemp(), "a", "b"))
    >>> oct(stat.S_IMODE(d.stat().st_mode)), oct(stat.S_IMODE(d.parent.stat().st_mode))
    ('0o700', '0o700')
    """
    p = Path(path)
    missing = []
    q = p
    while not os.path.lexists(q) and q != q.parent:
        missing.append(q)
        q = q.parent
    for d in reversed(missing):
        try:
            os.mkdir(d, PRIVATE_DIR)
        except FileExistsError:
            continue  # made meanwhile by another process: checked below
        os.chmod(d, PRIVATE_DIR)  # (still empty) the umask may have cleared bits
    st = os.stat(p)
    if not stat.S_ISDIR(st.st_mode):
        raise NotADirectoryError(errno.ENOTDIR, "not a directory", str(p))
    if tighten and st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) != PRIVATE_DIR:
        os.chmod(p, PRIVATE_DIR)
    return p


def open_lock_file(path: str | os.PathLike[str]) -> int:
    """Open (creating it, ``0600``) the lock file ``path`` for reading and
    writing, without ever touching another file: a symbolic link there is
    not followed, and anything but a regular file of one link (a FIFO, a
    device, a hard link to another file) is refused. Nothing is truncated.
    A lock file of this user with looser permissions is tightened to
    ``0600``.

    Raises
    ------
    PermissionError
        ``path`` is a symbolic link, or not a plain regular file; the
        message names it and says to remove it.
    OSError
        It cannot be opened.

    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "x.lock")
    >>> fd = open_lock_file(p); os.close(fd)
    >>> oct(os.stat(p).st_mode & 0o777)
    '0o600'
    >>> os.remove(p); os.symlink(os.devnull, p)
    >>> open_lock_file(p)
    Traceback (most recent call last):
    ...
    PermissionError: ...x.lock: a symbolic link where a lock file belongs; it was not followed: remove it
    """
    base = os.O_RDWR | _CLOEXEC | _NOFOLLOW | _NONBLOCK | getattr(os, "O_NOCTTY", 0)
    created = False
    try:
        fd = os.open(path, base | os.O_CREAT | os.O_EXCL, PRIVATE_FILE)
        created = True
    except FileExistsError:
        try:
            fd = os.open(path, base)
        except OSError as exc:
            if os.path.islink(path):
                raise _refused(path, "a symbolic link where a lock file belongs") from None
            if exc.errno == errno.ENOENT:  # removed meanwhile: create it
                return open_lock_file(path)
            raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _refused(path, "not a regular file where a lock file belongs")
        if st.st_nlink != 1:
            raise _refused(path, f"a lock file with {st.st_nlink} links (another file's name)")
        if created or (st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) != PRIVATE_FILE):
            os.fchmod(fd, PRIVATE_FILE)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _refused(path: str | os.PathLike[str], what: str) -> PermissionError:
    return PermissionError(f"{os.fspath(path)}: {what}; it was not followed: remove it")


@contextmanager
def atomic_path(path: str | os.PathLike[str], *, mode: int | None = None) -> Iterator[str]:
    """Yield a temporary path beside ``path``; on normal exit fsync it and
    rename it over ``path`` (then fsync the directory); on an exception
    remove it and leave ``path`` untouched.

    The temporary exists (empty) when the block starts, with mode
    ``0666 & ~umask``, or exactly ``mode`` when given; the block may
    rewrite it by name (a rewrite keeps its mode) or replace it (then the
    replacement's mode is the one the file gets).  Stale temporaries of
    ``path`` are removed first.

    >>> import os, tempfile
    >>> target = os.path.join(tempfile.mkdtemp(), "graph.bin")
    >>> with atomic_path(target) as tmp:
    ...     with open(tmp, "wb") as fh:
    ...         _ = fh.write(b"data")
    >>> open(target, "rb").read()
    b'data'
    """
    p = Path(path)
    check_mode(mode)
    clean_stale(p)
    fd, tmp = _create_temp(p, mode)
    os.close(fd)
    try:
        yield tmp
        fsync_path(tmp)
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    fsync_dir(p.parent)


def atomic_write(
    path: str | os.PathLike[str],
    writer: Callable[[IO[bytes]], Any],
    *,
    mode: int | None = None,
) -> None:
    """Replace ``path`` atomically with what ``writer(fh)`` writes to the
    binary file object it is given (``mode``: see :func:`atomic_path`).

    >>> import json, os, tempfile
    >>> target = os.path.join(tempfile.mkdtemp(), "meta.json")
    >>> atomic_write(target, lambda fh: fh.write(json.dumps({"a": 1}).encode()))
    >>> json.load(open(target))
    {'a': 1}
    """
    with atomic_path(path, mode=mode) as tmp, open(tmp, "wb") as fh:
        writer(fh)


def atomic_write_bytes(
    path: str | os.PathLike[str], data: bytes, *, mode: int | None = None
) -> None:
    """Replace ``path`` atomically with ``data`` (``mode``: see
    :func:`atomic_path`).

    >>> import os, tempfile
    >>> target = os.path.join(tempfile.mkdtemp(), "x.bin")
    >>> atomic_write_bytes(target, b"\\x00\\x01")
    >>> open(target, "rb").read()
    b'\\x00\\x01'
    """
    atomic_write(path, lambda fh: fh.write(data), mode=mode)


def sha256_file(path: str | os.PathLike[str]) -> str:
    """SHA-256 (hex) of the bytes of the file ``path``, read in 1 MiB
    blocks (constant memory). Raises ``OSError`` if it cannot be read.

    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "f"); _ = open(p, "wb").write(b"abc")
    >>> sha256_file(p)[:16]
    'ba7816bf8f01cfea'
    """
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
