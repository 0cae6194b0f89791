"""The process lock: an exclusive ``flock`` on a file that names its holder.

One implementation for every lock of the corpora: a corpus's builder lock
(``build.lock``, :meth:`rowvoi.corpus.storage.store.CorpusStore.lock`), the
registry's (``corpora.json.lock``,
:mod:`rowvoi.corpus.storage.registry_file`) and a maintenance run's
(``maintain.lock``, :func:`rowvoi.corpus.maintenance.runs.maintain`).

* The file is opened by :func:`rowvoi._atomic.open_lock_file`: created
  ``0600`` without truncating, never through a symbolic link, and only if
  it is a plain regular file of one link -- a link, a hard link, a FIFO or
  a device planted there is refused (``PermissionError``), and the file it
  leads to is never truncated or written.
* While the lock is held, the file names its holder (``{"pid", "host",
  "started"}``); it is emptied on release.
* The kernel drops the lock of a process that dies, so the lock of a
  killed holder is simply taken over: the lock yields what the file said
  before (the dead holder's ``pid``, or ``{}``), and the caller can report
  the takeover.
* Either it waits for the holder to release the lock, or, given ``busy``,
  it refuses at once with the exception ``busy`` makes of the live
  holder's entry (another process, or another open of the same file in
  this one).

Thread-safety: one holder per file, across threads and processes.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from rowvoi._atomic import open_lock_file

__all__ = ["pid_lock", "holder_text"]


@contextlib.contextmanager
def pid_lock(
    path: str | os.PathLike[str],
    busy: Callable[[Mapping[str, Any]], BaseException] | None = None,
) -> Iterator[dict[str, Any]]:
    """Hold an exclusive ``flock`` on the file ``path``, which names the
    holder (``{"pid", "host", "started"}``) while it is held (see the
    module notes). Yields what the file said before (a dead holder's
    entry, or ``{}``). The folder of ``path`` must exist.

    Parameters
    ----------
    path : path
        The lock file (created if absent).
    busy : callable, optional
        ``holder -> exception``: raised (with the live holder's entry)
        when another open file description holds the lock. Without it,
        wait until the lock is free.

    Raises
    ------
    PermissionError
        ``path`` is a symbolic link, a hard link or not a regular file
        (the message says to remove it).

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
    >>> with pid_lock(p) as before:   # waits (here: free at once)
    ...     before
    {}
    """
    fd = open_lock_file(path)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if busy is None else fcntl.LOCK_NB))
        except OSError as exc:
            if busy is None or exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
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
