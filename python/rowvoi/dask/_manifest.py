"""The manifest of a sharded corpus: its one commit point.

A sharded corpus is a root directory (``0700``) holding ``shards`` ordinary
corpus directories (``shard-000``, ``shard-001``, ...), each a complete
corpus in the existing on-disk format, and ``sharded.json`` (``0600``), the
manifest: the sharded generation and the generation of every shard it is
made of, and the file of the collection's BM25 statistics of that
generation (``stats-GGGGGG.json``). A build commits each shard, writes the
statistics, then replaces the manifest in one atomic rename: a reader that
reads the manifest sees either the whole old generation or the whole new
one, never a mix.

The manifest is read as untrusted input: a regular file (no symbolic
link), at most :data:`MAX_BYTES`, a JSON object of exactly the known keys
and types; anything else raises :class:`ShardedCorpusError` naming the
file and what is wrong.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rowvoi._atomic import PRIVATE_FILE, atomic_write_bytes
from rowvoi.corpus.base import CorpusError, ledger_key

__all__ = [
    "FORMAT",
    "VERSION",
    "MANIFEST",
    "MAX_SHARDS",
    "MAX_BYTES",
    "ShardedCorpusError",
    "shard_of",
    "shard_dir_name",
    "stats_name",
    "read_manifest",
    "write_manifest",
    "read_stats",
    "write_stats",
    "is_sharded",
]

#: The manifest's ``format`` value.
FORMAT = "rowvoi-sharded-corpus"
#: The manifest layout this code reads and writes.
VERSION = 1
#: The manifest's file name in the root.
MANIFEST = "sharded.json"
#: Most shards a sharded corpus may have.
MAX_SHARDS = 4096
#: Largest manifest read (bytes): a manifest of MAX_SHARDS shards is far smaller.
MAX_BYTES = 1 << 20
#: Largest statistics file read (bytes).
MAX_STATS_BYTES = 1 << 31

_KEYS: dict[str, type | tuple[type, ...]] = {
    "format": str,
    "version": int,
    "name": (str, type(None)),
    "shards": int,
    "route": str,
    "generation": int,
    "shard_generations": list,
    "embedder_id": (str, type(None)),
    "stats": (str, type(None)),
    "n_records": int,
    "n_artifacts": int,
    "published": float,
}
#: The routing of artifacts to shards (see :func:`shard_of`).
ROUTE = "blake2b-64-mod"


class ShardedCorpusError(CorpusError):
    """A sharded corpus that cannot be used as asked: a damaged or foreign
    manifest, a shard that moved, a change of the shard count, no worker
    that can serve a shard."""


def shard_of(artifact_id: Any, shards: int) -> int:
    """The shard of an artifact: the first 8 bytes of the BLAKE2b digest
    of its ledger key (the id as text, UTF-8), big-endian, modulo
    ``shards`` -- stable across processes, machines and Python versions
    (unlike :func:`hash`).

    >>> shard_of("wing.md", 4), shard_of("wing.md", 4) == shard_of("wing.md", 4)
    (3, True)
    >>> shard_of(17, 3) == shard_of("17", 3)
    True
    """
    key = ledger_key(artifact_id).encode("utf-8", "surrogatepass")
    h = int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "big")
    return h % shards


def shard_dir_name(i: int) -> str:
    """``shard-007``: the directory of shard ``i`` in the root."""
    return f"shard-{i:03d}"


def stats_name(generation: int) -> str:
    """``stats-000004.json``: the statistics file of a sharded generation."""
    return f"stats-{generation:06d}.json"


def is_sharded(root: str | os.PathLike[str]) -> bool:
    """Does ``root`` hold a sharded corpus (a manifest, not a symlink)?"""
    try:
        return stat.S_ISREG(os.lstat(Path(root) / MANIFEST).st_mode)
    except OSError:
        return False


def _bad(path: Path, what: str) -> ShardedCorpusError:
    return ShardedCorpusError(
        f"{path}: {what}; this is not a manifest rowvoi wrote (rebuild the sharded "
        "corpus with rowvoi.dask.build_sharded, or restore the file)"
    )


def _read_private(path: Path, limit: int) -> bytes:
    """The bytes of a regular file (no symlink followed), at most limit."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise _bad(path, f"cannot be opened ({exc.strerror or exc}; a symbolic link?)") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _bad(path, "is not a regular file")
        if st.st_size > limit:
            raise _bad(path, f"is {st.st_size} bytes (at most {limit})")
        chunks = []
        got = 0
        while True:
            b = os.read(fd, 1 << 20)
            if not b:
                break
            got += len(b)
            if got > limit:
                raise _bad(path, f"is over {limit} bytes")
            chunks.append(b)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_manifest(root: str | os.PathLike[str]) -> dict[str, Any]:
    """The checked manifest of the sharded corpus at ``root``.

    Raises
    ------
    FileNotFoundError
        No manifest (not a sharded corpus, or never published).
    ShardedCorpusError
        A manifest that is not one rowvoi wrote: not a regular file, too
        large, not a JSON object, unknown or missing keys, wrong types,
        impossible values.
    """
    path = Path(root) / MANIFEST
    data = _read_private(path, MAX_BYTES)
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        raise _bad(path, "is not JSON") from None
    if not isinstance(doc, dict):
        raise _bad(path, "is not a JSON object")
    keys = set(doc)
    if keys != set(_KEYS):
        extra, missing = sorted(keys - set(_KEYS)), sorted(set(_KEYS) - keys)
        what = []
        if extra:
            what.append(f"unknown keys {extra}")
        if missing:
            what.append(f"missing keys {missing}")
        raise _bad(path, "has " + " and ".join(what))
    for key, typ in _KEYS.items():
        v = doc[key]
        if typ is float and type(v) is int:
            v = doc[key] = float(v)
        if isinstance(v, bool) or not isinstance(v, typ):
            raise _bad(path, f"{key!r} is {type(v).__name__}")
    if doc["format"] != FORMAT:
        raise _bad(path, f"format {doc['format']!r} is not {FORMAT!r}")
    if doc["version"] != VERSION:
        raise ShardedCorpusError(
            f"{path}: manifest version {doc['version']} (this rowvoi reads {VERSION}); "
            "use the rowvoi that built it, or rebuild"
        )
    if doc["route"] != ROUTE:
        raise _bad(path, f"route {doc['route']!r} is not {ROUTE!r}")
    n = doc["shards"]
    if not 1 <= n <= MAX_SHARDS:
        raise _bad(path, f"shards = {n} (1 .. {MAX_SHARDS})")
    gens = doc["shard_generations"]
    if len(gens) != n or any(type(g) is not int or g < 0 for g in gens):
        raise _bad(path, f"shard_generations must be {n} integers >= 0")
    if doc["generation"] < 1 or doc["n_records"] < 0 or doc["n_artifacts"] < 0:
        raise _bad(path, "generation, n_records or n_artifacts out of range")
    if doc["stats"] is not None and doc["stats"] != stats_name(doc["generation"]):
        raise _bad(path, f"stats {doc['stats']!r} is not {stats_name(doc['generation'])!r}")
    if doc["name"] is not None:
        from rowvoi.corpus.storage.paths import check_name

        try:
            check_name(doc["name"])
        except (ValueError, TypeError):
            raise _bad(path, f"name {doc['name']!r} is not a corpus name") from None
    return doc


def write_manifest(root: str | os.PathLike[str], doc: Mapping[str, Any]) -> None:
    """Publish ``doc`` as the manifest: one atomic rename, ``0600``."""
    body = json.dumps(dict(doc), sort_keys=True, indent=1).encode()
    atomic_write_bytes(Path(root) / MANIFEST, body, mode=PRIVATE_FILE)


def write_stats(
    root: str | os.PathLike[str],
    generation: int,
    shard_gens: Sequence[int],
    stats: Mapping[str, Any],
) -> str:
    """Write the collection statistics of a sharded generation (``0600``);
    returns the file name."""
    name = stats_name(generation)
    doc = {"generation": generation, "shard_generations": list(shard_gens), **stats}
    atomic_write_bytes(Path(root) / name, json.dumps(doc).encode(), mode=PRIVATE_FILE)
    return name


def read_stats(root: str | os.PathLike[str], manifest: Mapping[str, Any]) -> dict[str, Any]:
    """The collection statistics a manifest names, checked against it:
    ``{"n_docs", "total_len", "df"}``."""
    path = Path(root) / str(manifest["stats"])
    data = _read_private(path, MAX_STATS_BYTES)
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        raise _bad(path, "is not JSON") from None
    ok = (
        isinstance(doc, dict)
        and doc.get("generation") == manifest["generation"]
        and doc.get("shard_generations") == manifest["shard_generations"]
        and type(doc.get("n_docs")) is int
        and type(doc.get("total_len")) is int
        and isinstance(doc.get("df"), dict)
        and doc["n_docs"] >= 0
        and doc["total_len"] >= 0
    )
    if not ok:
        raise _bad(path, "does not hold the statistics of the manifest's generation")
    df = doc["df"]
    for t, d in df.items():
        if type(d) is not int or not 0 < d <= doc["n_docs"]:
            raise _bad(path, f"df of {t!r} is {d!r}")
    return {"n_docs": doc["n_docs"], "total_len": doc["total_len"], "df": df}
