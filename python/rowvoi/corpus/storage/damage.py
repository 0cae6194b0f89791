"""How a corpus's index files are found damaged.

Every index file is derived from ``docs.sqlite`` (see
:mod:`rowvoi.corpus.storage.layout`), so damage is judged against it:
:func:`check_files` looks at the base files of a snapshot's generation --
missing, not a regular file (or, for ``hnsw.<g>/``, not a directory with
its ``hnsw.json`` and the parts it names), empty -- and, ``deep``, loads
each as a search would (checksums and structure, by the engine's loaders)
and compares it with the generation's records (the same ids, the corpus's
dimension), and checks ``docs.sqlite`` itself (``PRAGMA quick_check``).
A file's :func:`fingerprint` (size, modification time, inode) tells
whether it changed since it was written or last verified, so a deep check
loads only what changed. What repairs the damage is
:func:`rowvoi.corpus.repair`; what ``rowvoi info`` shows is this check.
"""

from __future__ import annotations

import dataclasses
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rowvoi.corpus.storage.index_files import load_problem
from rowvoi.corpus.storage.snapshot import Snapshot
from rowvoi.corpus.storage.store import CorpusStore
from rowvoi.errors import IndexFormatError

__all__ = ["IndexDamage", "check_files", "fingerprint", "base_ids", "load_base"]

_MANIFEST_MAX = 1 << 20  # bytes of hnsw.json read by the shallow check


@dataclass(frozen=True)
class IndexDamage:
    """One damaged file of a corpus.

    Attributes
    ----------
    file : str
        Its name in the corpus directory (``dense.3.rvf``, ``hnsw.3``,
        ``docs.sqlite``).
    problem : str
        What is wrong, in words.
    repairable : bool
        :func:`rowvoi.corpus.repair` rebuilds it (every index file); False for
        ``docs.sqlite``, which is rebuilt from the source.

    >>> str(IndexDamage("dense.3.rvf", "missing"))
    'dense.3.rvf: missing'
    """

    file: str
    problem: str
    repairable: bool = True

    def __str__(self) -> str:
        return f"{self.file}: {self.problem}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return dataclasses.asdict(self)


def _file_problem(path: Path, kind: str) -> str | None:
    """What is wrong with an index file or directory, judged without
    reading it (None: nothing seen)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return "missing"
    except OSError as exc:
        return f"cannot be examined ({exc.strerror})"
    if stat.S_ISLNK(st.st_mode):
        return "a symbolic link, not the index file the corpus wrote"
    if kind != "hnsw":
        if not stat.S_ISREG(st.st_mode):
            return "not a regular file"
        return "empty" if st.st_size == 0 else None
    if not stat.S_ISDIR(st.st_mode):
        return "not a directory (an HNSW index is a directory)"
    manifest = path / "hnsw.json"
    problem = _file_problem(manifest, "file")
    if problem is not None:
        return f"hnsw.json: {problem}"
    try:
        with open(manifest, "rb") as fh:
            meta = json.loads(fh.read(_MANIFEST_MAX))
    except (OSError, ValueError):
        return "hnsw.json: not a readable JSON document"
    if not isinstance(meta, dict):
        return "hnsw.json: not an HNSW description"
    parts = (
        ("hnsw.bin", "exact.rvf")
        if meta.get("format_version") == 1
        else (meta.get("hnsw_file"), meta.get("exact_file"))
    )
    for part in parts:
        if not isinstance(part, str) or not part or "/" in part or part in (".", ".."):
            return "hnsw.json: names no valid part file"
        problem = _file_problem(path / part, "file")
        if problem is not None:
            return f"{part} (named by hnsw.json): {problem}"
    return None


def base_ids(snap: Snapshot) -> np.ndarray:
    """The ids the base files of the snapshot's generation hold, ascending:
    the live base records and the tombstoned ones."""
    base_next = int(snap.base.get("next_id", 0))
    rows = snap.con.execute(
        "SELECT id FROM records WHERE id < ? UNION ALL SELECT id FROM tombstones ORDER BY 1",
        (base_next,),
    ).fetchall()
    return np.array([r[0] for r in rows], dtype=np.int64)


def load_base(store: CorpusStore, snap: Snapshot, kind: str, name: str) -> Any:
    """The base file ``name`` of ``kind`` (``"lexical"``, ``"dense"`` or
    ``"hnsw"``) loaded as it is, without the snapshot's tombstones and
    delta (what a check compares with the base's records). Raises what
    the engine's loader raises."""
    from rowvoi.index.flat import FlatIndex
    from rowvoi.index.hnsw import HNSWIndex
    from rowvoi.index.lexical import BM25Index

    cls: Any = {"lexical": BM25Index, "dense": FlatIndex, "hnsw": HNSWIndex}[kind]
    return cls.load(store.path / name)


def _deep_problem(
    store: CorpusStore, snap: Snapshot, kind: str, name: str, ids: Any
) -> str | None:
    """What loading the base file shows (None: it loads and holds the
    generation's records)."""
    try:
        index = load_base(store, snap, kind, name)
    except (IndexFormatError, OSError) as exc:
        return load_problem(store, name, exc)
    if kind != "lexical":
        dim = snap.state.get("dim")
        if dim and index.dim != int(dim):
            return f"holds {index.dim}-dimensional vectors; the corpus's are {dim}"
    held = np.sort(np.asarray(index.ids(), dtype=np.int64))
    if held.shape != ids.shape or not np.array_equal(held, ids):
        return (
            f"holds {len(held)} records where generation {snap.generation} has "
            f"{len(ids)}, or other ones (a file of another corpus or generation?)"
        )
    return None


def fingerprint(path: str | os.PathLike[str]) -> list[Any] | None:
    """What changes when a file (or the files of a directory) is written
    or replaced: size, modification time and inode of each (``None`` when
    it cannot be examined). Index files are never rewritten in place (a new
    generation gets new names), so an unchanged fingerprint means a file
    verified before -- or written by the commit that named it -- need not
    be loaded again. (The status-change time is left out: a ``chmod`` is
    no damage.)

    >>> import tempfile
    >>> d = tempfile.mkdtemp(); fingerprint(d) == fingerprint(d), fingerprint(d + "/none")
    (True, None)
    """
    try:
        st = os.lstat(path)
        entries = [("", st)]
        if stat.S_ISDIR(st.st_mode):
            entries += sorted((e.name, e.stat(follow_symlinks=False)) for e in os.scandir(path))
    except OSError:
        return None
    return [[n, s.st_size, s.st_mtime_ns, s.st_ino] for n, s in entries]


def check_files(
    store: CorpusStore,
    snap: Snapshot,
    *,
    deep: bool,
    database: bool | None = None,
    verified: dict[str, Any] | None = None,
) -> list[IndexDamage]:
    """The damaged base files of the snapshot's generation (see the module
    notes): by looking at them (cheap: a ``stat`` each, and ``hnsw.json``
    read), or, with ``deep``, also by loading each one.

    ``database`` (default: ``deep``) also runs SQLite's ``quick_check`` on
    ``docs.sqlite``. ``verified`` maps file names to the
    :func:`fingerprint` they had when written (the build records it with
    the base, ``base["fingerprints"]``) or when a deep check last passed:
    such a file is not loaded while its fingerprint is the same, and each
    file that passes a deep check is entered (the mapping is updated in
    place).
    """
    out: list[IndexDamage] = []
    ids = None
    for kind in ("lexical", "dense", "hnsw"):
        name = snap.base.get(kind)
        if not name:
            continue
        if not isinstance(name, str) or "/" in name or name in (".", ".."):
            out.append(IndexDamage(str(name), "not an index file name", repairable=True))
            continue
        problem = _file_problem(store.path / name, kind)
        if problem is None and deep:
            fp = fingerprint(store.path / name) if verified is not None else None
            if fp is not None and verified is not None and verified.get(name) == fp:
                continue
            if ids is None:
                ids = base_ids(snap)
            problem = _deep_problem(store, snap, kind, name, ids)
            if problem is None and fp is not None and verified is not None:
                verified[name] = fp
        if problem is not None:
            out.append(IndexDamage(name, problem))
    if deep if database is None else database:
        try:
            rows = snap.con.execute("PRAGMA quick_check").fetchall()
            verdict = "; ".join(str(r[0]) for r in rows[:5])
        except Exception as exc:  # noqa: BLE001 - sqlite3 or a decoding error
            verdict = str(exc)
        if verdict != "ok":
            out.append(IndexDamage("docs.sqlite", verdict, repairable=False))
    return out
