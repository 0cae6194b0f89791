"""The registry's file, ``corpora.json``: read, and rewritten under its lock.

The registry maps each corpus name to the recipe that rebuilds it (what an
entry holds, and how one is checked: :mod:`rowvoi.corpus.maintenance.registry`). This
module only reads and writes the file
(:func:`rowvoi.corpus.storage.paths.registry_path`)::

    {"format": "rowvoi-corpora", "version": 1, "corpora": {NAME: ENTRY, ...}}

A change is a read-modify-write under the registry's lock
(``corpora.json.lock``, the process lock of
:mod:`rowvoi.corpus.storage.lock`: it waits for another writer), and the
file is replaced atomically, so concurrent registrations do not lose each
other. The file and its lock are ``0600``, a folder created for them
``0700``, whatever the umask.

Examples
--------
>>> import os, tempfile
>>> os.environ["ROWVOI_HOME"] = tempfile.mkdtemp()
>>> with edit() as doc:
...     doc["corpora"]["notes"] = {"kind": "files", "root": "/srv/notes"}
>>> get("notes")["root"], sorted(registered())
('/srv/notes', ['notes'])
>>> del os.environ["ROWVOI_HOME"]
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rowvoi._atomic import PRIVATE_FILE, atomic_write_bytes, private_dir
from rowvoi.corpus.storage.lock import pid_lock
from rowvoi.corpus.storage.paths import check_name, registry_path

__all__ = ["REGISTRY_VERSION", "read", "edit", "get", "registered"]

#: Version of ``corpora.json``.
REGISTRY_VERSION = 1
_FORMAT = "rowvoi-corpora"


def read(path: Path) -> dict[str, Any]:
    """The registry document at ``path`` (an empty one when there is no
    file).

    Raises
    ------
    ValueError
        The file is not a registry of a version this rowvoi reads; the
        message says what to do.
    """
    if not path.exists():
        return {"format": _FORMAT, "version": REGISTRY_VERSION, "corpora": {}}
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not valid JSON ({exc}); fix or remove the file") from None
    if (
        not isinstance(doc, dict)
        or doc.get("format") != _FORMAT
        or not isinstance(doc.get("corpora"), dict)
    ):
        raise ValueError(f"{path}: not a rowvoi corpus registry; fix or remove the file")
    if not isinstance(doc.get("version"), int) or doc["version"] > REGISTRY_VERSION:
        raise ValueError(
            f"{path}: registry version {doc.get('version')!r}; this rowvoi reads "
            f"version {REGISTRY_VERSION} (upgrade rowvoi)"
        )
    return doc


@contextlib.contextmanager
def edit() -> Iterator[dict[str, Any]]:
    """Read-modify-write of the registry under its lock: yields the
    document, and writes it back (atomically) when the block ends without
    an exception. Waits while another process edits it.

    Raises
    ------
    ValueError
        As :func:`read`.
    PermissionError
        A link or a special file where the lock file belongs.
    """
    path = registry_path()
    private_dir(path.parent, tighten=False)  # (a folder it creates is 0700)
    with pid_lock(str(path) + ".lock"):
        doc = read(path)
        yield doc
        atomic_write_bytes(
            path,
            (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode(),
            mode=PRIVATE_FILE,
        )


def get(name: str) -> dict[str, Any] | None:
    """The registry entry of ``name``, or ``None``.

    >>> import os, tempfile
    >>> os.environ["ROWVOI_HOME"] = tempfile.mkdtemp()
    >>> get("notes") is None
    True
    >>> del os.environ["ROWVOI_HOME"]
    """
    check_name(name)
    entry = read(registry_path())["corpora"].get(name)
    return None if entry is None else dict(entry)


def registered() -> dict[str, dict[str, Any]]:
    """Every registered entry, by name.

    >>> import os, tempfile
    >>> os.environ["ROWVOI_HOME"] = tempfile.mkdtemp()
    >>> registered()
    {}
    >>> del os.environ["ROWVOI_HOME"]
    """
    return {k: dict(v) for k, v in read(registry_path())["corpora"].items()}
