"""Reads confined to a folder: the one way the corpus layer opens a file
that data named (a folder's entries, a disclosure pointer).

A file is read only if it is a *regular* file reached *inside* a root,
whatever happens on disk meanwhile:

* the path is resolved (``..`` and symbolic links) and must lie inside the
  root -- a link leading out of it is refused;
* the resolved path is then opened one component at a time from a
  descriptor of the root, each with ``O_NOFOLLOW``, so a folder or the file
  swapped for a symbolic link between the check and the open is refused
  (no check-then-use window);
* the file is opened with ``O_NONBLOCK`` (a FIFO or a device never blocks
  the open) and ``fstat``-ed: anything but a regular file is refused before
  a byte is read.

Refusals raise :class:`Refused`, which carries a short ``reason``
(``"symlink"``, ``"special"``, ``"name"``) for reports; other failures are
the ``OSError`` the system gave (a missing file, a permission).

Thread-safety: stateless; every call opens and closes its own descriptors.
"""

from __future__ import annotations

import errno
import os
import stat

__all__ = [
    "Refused",
    "inside",
    "check_text_path",
    "resolve_inside",
    "open_beneath",
    "open_regular",
    "read_fd",
]

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_NOCTTY = getattr(os, "O_NOCTTY", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_FILE_FLAGS = os.O_RDONLY | _CLOEXEC | _NOFOLLOW | _NONBLOCK | _NOCTTY
_DIR_FLAGS = os.O_RDONLY | _CLOEXEC | _NOFOLLOW | _DIRECTORY


class Refused(PermissionError):
    """A path that is not read: it leads outside the root (``reason``
    ``"symlink"``), is not a regular file (``"special"``), or cannot name a
    file at all (``"name"``: a NUL byte, an empty or relative-escaping
    name).

    >>> Refused("special", "x is a FIFO").reason
    'special'
    """

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def inside(path: str, root: str) -> bool:
    """Is the absolute, resolved ``path`` the resolved ``root`` or inside it?

    >>> inside("/a/b/c", "/a/b"), inside("/a/bc", "/a/b"), inside("/a/b", "/a/b")
    (True, False, True)
    """
    try:
        return os.path.commonpath([path, root]) == root
    except ValueError:  # a mix of absolute and relative
        return False


def check_text_path(path: object) -> str:
    """``path`` if it is a str that can name a file, else :class:`Refused`
    (reason ``"name"``).

    >>> check_text_path("a\\x00b")
    Traceback (most recent call last):
    ...
    rowvoi.corpus._confine.Refused: 'a\\x00b' holds a NUL byte, so it names no file; not read
    """
    if not isinstance(path, str) or not path:
        raise Refused("name", f"{path!r} is not a file path; not read")
    if "\x00" in path:
        raise Refused("name", f"{path!r} holds a NUL byte, so it names no file; not read")
    try:
        os.fsencode(path)
    except UnicodeError:
        raise Refused(
            "name", f"{path!r} holds text no file name can (a lone surrogate); not read"
        ) from None
    return path


def resolve_inside(path: str, root: str) -> str | None:
    """The path of ``path`` relative to ``root`` once both are resolved
    (``..`` and every symbolic link), or None when it leads outside.
    ``root`` must already be resolved (:func:`os.path.realpath`)."""
    real = os.path.realpath(check_text_path(path))
    if not inside(real, root):
        return None
    return os.path.relpath(real, root)


def _check_open(fd: int, shown: str) -> os.stat_result:
    try:
        st = os.fstat(fd)
    except BaseException:
        os.close(fd)
        raise
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise Refused("special", f"{shown} is not a regular file ({_kind(st.st_mode)}); not read")
    return st


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "not a file"


def open_beneath(root: str, rel: str) -> tuple[int, os.stat_result]:
    """Open the regular file ``rel`` (a resolved path relative to the
    resolved ``root``, as :func:`resolve_inside` returns) for reading,
    walking from a descriptor of ``root`` one component at a time with
    ``O_NOFOLLOW``; returns the descriptor (the caller closes it) and its
    ``fstat``.

    Raises
    ------
    Refused
        A component is (now) a symbolic link (``"symlink"``), the file is
        not a regular file (``"special"``), ``rel`` escapes the root
        (``"name"``).
    OSError
        The system's error (``FileNotFoundError``, ``PermissionError``...).

    >>> import os, tempfile
    >>> root = os.path.realpath(tempfile.mkdtemp()); os.mkfifo(os.path.join(root, "f"))
    >>> open_beneath(root, "f")
    Traceback (most recent call last):
    ...
    rowvoi.corpus._confine.Refused: f is not a regular file (a FIFO); not read
    """
    parts = rel.split(os.sep)
    if rel in ("", ".") or os.path.isabs(rel) or any(p in ("", ".", "..") for p in parts):
        raise Refused("name", f"{rel!r} is not a path inside the root; not read")
    dfd = os.open(root, os.O_RDONLY | _CLOEXEC | _DIRECTORY)
    try:
        for part in parts[:-1]:
            try:
                nfd = os.open(part, _DIR_FLAGS, dir_fd=dfd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise Refused(
                        "symlink",
                        f"{rel}: its folder {part!r} changed into a symbolic link or a "
                        "file while it was opened; not read",
                    ) from None
                raise
            os.close(dfd)
            dfd = nfd
        name = parts[-1]
        st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        if stat.S_ISLNK(st.st_mode):
            raise Refused(
                "symlink", f"{rel} changed into a symbolic link while it was opened; not read"
            )
        if not stat.S_ISREG(st.st_mode):  # never opened: a device's open may act
            raise Refused(
                "special", f"{rel} is not a regular file ({_kind(st.st_mode)}); not read"
            )
        try:
            fd = os.open(name, _FILE_FLAGS, dir_fd=dfd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise Refused(
                    "symlink", f"{rel} changed into a symbolic link while it was opened; not read"
                ) from None
            raise
    finally:
        os.close(dfd)
    return fd, _check_same(fd, st, rel)


def _check_same(fd: int, before: os.stat_result, shown: str) -> os.stat_result:
    """fstat the new descriptor: a regular file, the one checked before."""
    st = _check_open(fd, shown)
    if (st.st_dev, st.st_ino) != (before.st_dev, before.st_ino):
        os.close(fd)
        raise Refused("symlink", f"{shown} was replaced while it was opened; not read")
    return st


def open_regular(path: str) -> tuple[int, os.stat_result]:
    """Open the regular file at the resolved absolute ``path`` (final
    component not followed, ``O_NONBLOCK``, checked with ``fstat``) -- for
    the reads a caller allowed outside any root (``follow_symlinks=True``).
    Raises as :func:`open_beneath`."""
    check_text_path(path)
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        raise Refused(
            "symlink", f"{path} changed into a symbolic link while it was opened; not read"
        )
    if not stat.S_ISREG(st.st_mode):
        raise Refused("special", f"{path} is not a regular file ({_kind(st.st_mode)}); not read")
    try:
        fd = os.open(path, _FILE_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Refused(
                "symlink", f"{path} changed into a symbolic link while it was opened; not read"
            ) from None
        raise
    return fd, _check_same(fd, st, path)


def read_fd(fd: int, limit: int | None = None) -> bytes:
    """Read ``fd`` to its end (or ``limit`` bytes), then close it."""
    with os.fdopen(fd, "rb", closefd=True) as f:
        return f.read() if limit is None else f.read(limit)
