"""Opening index files that rowvoi did not necessarily write.

Every loader of a saved index (:meth:`rowvoi.index.lexical.BM25Index.load`,
:meth:`rowvoi.index.flat.FlatIndex.load`, :meth:`rowvoi.index.hnsw.HNSWIndex.load`
and, through them, a corpus's index files) opens its file here and reads
only through the descriptor it got, so what was checked is what is read:

* the file is opened ``O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC``, so a
  FIFO or a device in its place opens at once instead of blocking, and is
  then refused by :func:`fstat <os.fstat>` on that descriptor (only regular
  files are read);
* ``follow_symlinks=False`` adds ``O_NOFOLLOW``: a symbolic link as the last
  component is refused (files inside a directory rowvoi did not write --
  an HNSW directory's parts, a corpus's index files -- are never followed;
  a path the caller names may be a link when the caller allows it);
* ``dir_fd`` opens a name relative to an already opened directory, so the
  parts of a saved HNSW index are read from the directory that was checked,
  even if the path is renamed meanwhile.

:func:`private_copy` gives a library that reads only by path (hnswlib) the
exact bytes that were checked: a sealed, unlinked in-memory copy
(``memfd``) opened through ``/proc/self/fd``, or, where Linux's memfd or
``/proc`` is missing, a copy in a fresh private (0700) temporary directory.
"""

from __future__ import annotations

import contextlib
import errno
import mmap
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import rowvoi._status as _status
from rowvoi.errors import status_error

__all__ = ["open_dir", "open_file", "private_copy", "read_small"]

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISLNK, "a symbolic link"),
)


def kind(mode: int) -> str:
    """What a file of this ``st_mode`` is, for messages.

    >>> kind(stat.S_IFIFO | 0o644), kind(stat.S_IFREG | 0o600)
    ('a FIFO (named pipe)', 'a regular file')
    """
    for test, name in _KINDS:
        if test(mode):
            return name
    return "a regular file" if stat.S_ISREG(mode) else "not a regular file"


def _io_error(message: str) -> Exception:
    return status_error(_status.E_IO, message)


def _link_refused(shown: str) -> Exception:
    return _io_error(
        f"{shown} is a symbolic link; rowvoi does not follow links to files inside a "
        "saved index or corpus directory: replace the link with the file itself"
    )


def open_file(
    path: str | os.PathLike[str],
    *,
    follow_symlinks: bool = True,
    dir_fd: int | None = None,
    shown: str | os.PathLike[str] | None = None,
) -> tuple[int, int]:
    """Open a regular file for reading without blocking: ``(fd, size)``.

    ``shown`` names the file in messages (default: ``path``). Raises
    :class:`rowvoi.errors.RvIOError` (an :class:`OSError`) naming the file
    when it cannot be opened, is a symbolic link and ``follow_symlinks`` is
    false, or is not a regular file (a FIFO, socket, device or directory:
    nothing is read from it). The caller closes ``fd``.

    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> os.mkfifo(os.path.join(d, "x.rvf"))
    >>> open_file(os.path.join(d, "x.rvf"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    rowvoi.errors.RvIOError: RV_E_IO: .../x.rvf is a FIFO (named pipe), not a regular file: ...
    """
    name = os.fspath(shown if shown is not None else path)
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    if not follow_symlinks:
        flags |= os.O_NOFOLLOW
    try:
        fd = os.open(path, flags, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow_symlinks:
            raise _link_refused(name) from None
        err = _io_error(f"cannot open {name}: {exc.strerror}")
        if isinstance(err, OSError):
            err.errno = exc.errno  # errno checks of the caller keep working
        raise err from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _io_error(
                f"{name} is {kind(st.st_mode)}, not a regular file: an index file must be "
                "a regular file (nothing was read from it)"
            )
    except BaseException:
        os.close(fd)
        raise
    return fd, st.st_size


def open_dir(path: str | os.PathLike[str], *, follow_symlinks: bool = True) -> int:
    """Open a directory for ``dir_fd`` use; the caller closes it.

    Raises :class:`FileNotFoundError` when nothing is there,
    :class:`NotADirectoryError` when something else is (neither blocks on a
    FIFO), and :class:`rowvoi.errors.RvIOError` for a symbolic link when
    ``follow_symlinks`` is false.

    >>> import tempfile
    >>> fd = open_dir(tempfile.mkdtemp()); os.close(fd)
    """
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NONBLOCK | os.O_CLOEXEC
    if not follow_symlinks:
        flags |= os.O_NOFOLLOW
    try:
        return os.open(path, flags)
    except OSError as exc:
        # O_DIRECTORY | O_NOFOLLOW on a link to a directory fails with
        # ENOTDIR on Linux (ELOOP elsewhere): refused either way
        if not follow_symlinks and (
            exc.errno == errno.ELOOP or (exc.errno == errno.ENOTDIR and os.path.islink(path))
        ):
            raise _link_refused(os.fspath(path)) from None
        raise


def read_small(fd: int, size: int, limit: int, shown: str) -> bytes:
    """The whole content of a small regular file open as ``fd`` (``size``
    bytes by its fstat), refusing files over ``limit`` bytes before reading
    them (:class:`rowvoi.errors.IndexFormatError`).

    >>> import tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "m.json")
    >>> _ = open(p, "w").write("{}")
    >>> fd, n = open_file(p)
    >>> read_small(fd, n, 1 << 20, p); os.close(fd)
    b'{}'
    """
    if size > limit:
        raise status_error(
            _status.E_CORRUPT,
            f"{shown}: {size} bytes, more than the {limit} bytes such a file can have",
        )
    parts, got = [], 0
    while got < size:
        chunk = os.pread(fd, size - got, got)
        if not chunk:
            break
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)


def _copy(src: int, dst: int, size: int, shown: str) -> None:
    """Copy bytes 0 .. size of src into dst (at its offset 0)."""
    done = 0
    while done < size:
        try:
            n = os.sendfile(dst, src, done, size - done)
        except OSError as exc:
            if exc.errno not in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSOCK):
                raise
            n = -1
        if n < 0:  # no sendfile between these files: copy through memory
            chunk = os.pread(src, min(size - done, 1 << 24), done)
            n = os.write(dst, chunk) if chunk else 0
        if n == 0:
            raise status_error(
                _status.E_CORRUPT, f"{shown}: the file shrank while it was read; load it again"
            )
        done += n


def _proc_path(fd: int) -> str | None:
    path = f"/proc/self/fd/{fd}"
    return path if os.path.exists(path) else None


@contextlib.contextmanager
def private_copy(src: int, size: int, shown: str) -> Iterator[tuple[mmap.mmap, str]]:
    """A private, read-only copy of the first ``size`` bytes of the regular
    file open as ``src``: ``(its bytes as an mmap, a path that opens those
    same bytes)``, both valid inside the ``with`` block only.

    The copy is what the caller checks and what the library reading the
    path gets: nothing outside this process can change it in between (a
    memfd sealed against writes, growing and shrinking; elsewhere a file in
    a fresh 0700 temporary directory, removed on exit). ``size`` must be
    at least 1.

    >>> import tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "g.bin")
    >>> _ = open(p, "wb").write(b"graph bytes")
    >>> fd, n = open_file(p)
    >>> with private_copy(fd, n, p) as (mem, path):
    ...     bytes(mem[:5]), open(path, "rb").read()
    (b'graph', b'graph bytes')
    >>> os.close(fd)
    """
    memfd = getattr(os, "memfd_create", None)
    seals = getattr(os, "F_ADD_SEALS", None)
    if memfd is not None and seals is not None and _proc_path(src) is not None:
        fd = memfd("rowvoi-hnsw", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        try:
            _copy(src, fd, size, shown)
            import fcntl

            fcntl.fcntl(
                fd,
                fcntl.F_ADD_SEALS,
                fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE | fcntl.F_SEAL_SEAL,
            )
            mem = mmap.mmap(fd, size, prot=mmap.PROT_READ)
            try:
                yield mem, f"/proc/self/fd/{fd}"
            finally:
                mem.close()
        finally:
            os.close(fd)
        return
    tmp = Path(tempfile.mkdtemp(prefix="rowvoi-load-"))  # mode 0700
    try:
        target = tmp / "copy"
        fd = os.open(target, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            _copy(src, fd, size, shown)
            mem = mmap.mmap(fd, size, prot=mmap.PROT_READ)
            try:
                yield mem, str(target)
            finally:
                mem.close()
        finally:
            os.close(fd)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
