"""The embedding cache of a corpus: ``embeddings.sqlite``.

Every vector a build computes (or takes from the corpus's index files) is
kept here, keyed by ``(embedder id, content hash)`` -- the SHA-256 prefix of
the text that :mod:`rowvoi.corpus.indexing.build` stores with each record. It is a
cache, not part of the corpus's committed state: an entry is true whatever
generation is committed (the same embedder id gives the same vector for
the same text), so it may be written outside the build's one commit point.
That is what it is for:

* **An interrupted build resumes.** A build commits the cache after every
  embedder batch, in its own SQLite database, while the corpus's own
  transaction stays open until the build's single commit. Ctrl-C (or a
  kill) rolls the corpus back to its previous generation, but the vectors
  already computed stay here, and the next build takes them instead of
  embedding those texts again (:attr:`BuildReport.cache_hits`).
* **Damaged index files are rebuilt without re-embedding.**
  :func:`rowvoi.corpus.repair` rebuilds the vector index from the records'
  content hashes and this cache.

After each compaction the cache holds the vector of every live record (a
corpus built before the cache existed is filled from its vector index then),
and entries of other embedders or of texts no longer in the corpus are
dropped, so it stays about the size of the vector index. Only the builder
(the holder of the corpus's build lock) opens it. Writes use SQLite's WAL
with ``synchronous=NORMAL`` -- a batch is committed when a process is killed,
not necessarily when power fails -- and :meth:`EmbeddingCache.sync` makes
it durable (a checkpoint with fsync) before the build's own commit. A
cache that is not a readable SQLite database is replaced by an empty one
(it only costs re-embedding). The file is created with mode ``0600``.

Examples
--------
>>> import tempfile, pathlib, numpy as np
>>> cache = EmbeddingCache(pathlib.Path(tempfile.mkdtemp()) / CACHE_FILE)
>>> cache.put("toy-v1", [b"h1" * 8], np.ones((1, 4), dtype=np.float32))
>>> sorted(cache.get("toy-v1", 4, [b"h1" * 8, b"h2" * 8]))
[b'h1h1h1h1h1h1h1h1']
>>> cache.count("toy-v1"), cache.count("other")
(1, 0)
>>> cache.close()
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from rowvoi._atomic import PRIVATE_FILE, create_exclusive

__all__ = ["CACHE_FILE", "EmbeddingCache", "cache_info"]

#: The cache's file name in the corpus directory.
CACHE_FILE = "embeddings.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS embedders (
    eid INTEGER PRIMARY KEY, embedder_id TEXT NOT NULL UNIQUE, dim INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS vectors (
    eid INTEGER NOT NULL, hash BLOB NOT NULL, vector BLOB NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS vectors_key ON vectors (eid, hash);
"""
_CHUNK = 500  # bound parameters per statement


class EmbeddingCache:
    """The embedding cache at ``path`` (created on first use, mode 0600).

    Thread-safety: one builder at a time uses it (the corpus's build lock);
    the object itself is not shared between threads.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._con: sqlite3.Connection | None = None
        self._eids: dict[str, tuple[int, int]] = {}

    # ------------------------------------------------------------ opening
    def _connect(self) -> sqlite3.Connection:
        if self._con is not None:
            return self._con
        try:
            con = self._open()
        except sqlite3.DatabaseError:
            # not a database (or a damaged one): a cache, so start afresh
            self._discard()
            con = self._open()
        self._con = con
        return con

    def _open(self) -> sqlite3.Connection:
        if not os.path.lexists(self.path):
            # created private, whatever the umask (SQLite gives its -wal and
            # -shm files the database file's mode)
            try:
                os.close(create_exclusive(self.path, PRIVATE_FILE))
            except FileExistsError:  # another builder made it first
                pass
        # a URI connection, so that ATTACH takes the corpus's read-only URI
        con = sqlite3.connect(
            _uri(self.path), uri=True, timeout=60.0, isolation_level=None, check_same_thread=False
        )
        try:
            con.execute("PRAGMA busy_timeout = 60000")
            # rows of 1.5-6 KB (384-1536 float32s): 16 KB pages hold them with
            # little slack (a new database only; ignored once it has content)
            con.execute("PRAGMA page_size = 16384")
            con.execute("PRAGMA journal_mode=WAL")
            con.execute("PRAGMA synchronous=NORMAL")
            for stmt in _SCHEMA.split(";"):
                if stmt.strip():
                    con.execute(stmt)
            con.execute("SELECT count(*) FROM embedders").fetchone()
        except BaseException:
            con.close()
            raise
        return con

    def _discard(self) -> None:
        self.close()
        for suffix in ("", "-wal", "-shm", "-journal"):
            try:
                os.unlink(str(self.path) + suffix)
            except FileNotFoundError:
                pass

    def close(self) -> None:
        """Close the connection (the cache stays on disk)."""
        con, self._con = self._con, None
        self._eids.clear()
        if con is not None:
            con.close()

    def _eid(self, embedder_id: str, dim: int | None) -> tuple[int, int] | None:
        """``(eid, dim)`` of an embedder id, registered when ``dim`` is
        given; None when unknown."""
        got = self._eids.get(embedder_id)
        if got is not None:
            return got
        con = self._connect()
        row = con.execute(
            "SELECT eid, dim FROM embedders WHERE embedder_id = ?", (embedder_id,)
        ).fetchone()
        if row is None:
            if dim is None:
                return None
            cur = con.execute(
                "INSERT INTO embedders (embedder_id, dim) VALUES (?, ?)", (embedder_id, int(dim))
            )
            row = (int(cur.lastrowid or 0), int(dim))
        got = (int(row[0]), int(row[1]))
        self._eids[embedder_id] = got
        return got

    # ------------------------------------------------------------ reading
    def get(
        self, embedder_id: str, dim: int | None, hashes: Sequence[bytes]
    ) -> dict[bytes, np.ndarray]:
        """The cached float32 vectors of ``hashes`` (those present and
        finite), by hash; none unless the cache's vectors of this embedder
        have dimension ``dim`` (any, when ``dim`` is None)."""
        if not hashes:
            return {}
        try:
            key = self._eid(embedder_id, None)
            if key is None or (dim is not None and key[1] != dim):
                return {}
            dim = key[1]
            out: dict[bytes, np.ndarray] = {}
            con = self._connect()
            want = list(dict.fromkeys(hashes))
            for i in range(0, len(want), _CHUNK):
                part = want[i : i + _CHUNK]
                rows = con.execute(
                    "SELECT hash, vector FROM vectors WHERE eid = ? AND hash IN "
                    f"({', '.join('?' * len(part))})",
                    (key[0], *part),
                ).fetchall()
                for h, blob in rows:
                    if len(blob) != 4 * dim:
                        continue
                    v = np.frombuffer(blob, dtype=np.float32)
                    if np.isfinite(v).all():
                        out[bytes(h)] = v
            return out
        except sqlite3.DatabaseError:
            self._discard()  # damaged: a miss, and a fresh cache from now on
            return {}

    def has(self, embedder_id: str) -> bool:
        """Does the cache hold any vector of ``embedder_id``?"""
        try:
            key = self._eid(embedder_id, None)
            if key is None:
                return False
            con = self._connect()
            row = con.execute("SELECT 1 FROM vectors WHERE eid = ? LIMIT 1", (key[0],)).fetchone()
            return row is not None
        except sqlite3.DatabaseError:
            self._discard()
            return False

    def count(self, embedder_id: str) -> int:
        """Vectors cached for ``embedder_id``."""
        key = self._eid(embedder_id, None)
        if key is None:
            return 0
        con = self._connect()
        return int(
            con.execute("SELECT count(*) FROM vectors WHERE eid = ?", (key[0],)).fetchone()[0]
        )

    # ------------------------------------------------------------ writing
    def put(self, embedder_id: str, hashes: Sequence[bytes], vectors: np.ndarray) -> None:
        """Add vectors (rows of ``vectors``, float32) under their text hashes,
        in one committed transaction; hashes already cached are kept."""
        if len(hashes) == 0:
            return
        vecs = np.ascontiguousarray(vectors, dtype=np.float32)
        if vecs.ndim != 2 or vecs.shape[0] != len(hashes):
            raise ValueError(f"{len(hashes)} hashes but vectors of shape {vecs.shape}")
        try:
            self._put(embedder_id, hashes, vecs)
        except (sqlite3.DatabaseError, _Mismatch):
            # damaged, or holding vectors of another dimension under this
            # embedder's id (which no build writes): start afresh, keep the batch
            self._discard()
            self._put(embedder_id, hashes, vecs)

    def _put(self, embedder_id: str, hashes: Sequence[bytes], vecs: np.ndarray) -> None:
        con = self._connect()
        con.execute("BEGIN IMMEDIATE")
        try:
            key = self._eid(embedder_id, int(vecs.shape[1]))
            assert key is not None
            if key[1] != vecs.shape[1]:
                raise _Mismatch(embedder_id)
            con.executemany(
                "INSERT OR IGNORE INTO vectors (eid, hash, vector) VALUES (?, ?, ?)",
                [(key[0], bytes(h), v.tobytes()) for h, v in zip(hashes, vecs)],
            )
            con.execute("COMMIT")
        except BaseException:
            try:
                con.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            self._eids.clear()
            raise

    def sync(self) -> None:
        """Make every committed batch durable (a WAL checkpoint, which
        fsyncs the log and the database)."""
        if self._con is None:
            return
        try:
            self._con.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        except sqlite3.DatabaseError:
            pass  # a cache: losing it costs re-embedding, never a wrong answer

    # ----------------------------------------------------- upkeep (builder)
    def missing(self, embedder_id: str, db: Path) -> list[tuple[int, bytes]]:
        """``(id, content hash)`` of the live records of the corpus database
        ``db`` (committed) whose vector is not cached for ``embedder_id``, by
        id."""
        key = self._eid(embedder_id, None)
        con = self._connect()
        con.execute("ATTACH DATABASE ? AS corpus", (_ro_uri(db),))
        try:
            if key is None:
                rows = con.execute(
                    "SELECT id, content_hash FROM corpus.records ORDER BY id"
                ).fetchall()
            else:
                rows = con.execute(
                    "SELECT r.id, r.content_hash FROM corpus.records r WHERE NOT EXISTS "
                    "(SELECT 1 FROM vectors v WHERE v.eid = ? AND v.hash = r.content_hash) "
                    "ORDER BY r.id",
                    (key[0],),
                ).fetchall()
        finally:
            con.execute("DETACH DATABASE corpus")
        return [(int(i), bytes(h)) for i, h in rows]

    def prune(self, embedder_id: str, db: Path) -> int:
        """Drop the entries of other embedders and of texts no live record
        of the corpus database ``db`` (committed) holds; returns how many."""
        key = self._eid(embedder_id, None)
        con = self._connect()
        con.execute("ATTACH DATABASE ? AS corpus", (_ro_uri(db),))
        try:
            con.execute("BEGIN IMMEDIATE")
            try:
                if key is None:
                    n = con.execute("DELETE FROM vectors").rowcount
                    con.execute("DELETE FROM embedders")
                else:
                    n = con.execute(
                        "DELETE FROM vectors WHERE eid != ? OR hash NOT IN "
                        "(SELECT content_hash FROM corpus.records)",
                        (key[0],),
                    ).rowcount
                    con.execute("DELETE FROM embedders WHERE eid != ?", (key[0],))
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
        finally:
            self._eids.clear()
            con.execute("DETACH DATABASE corpus")
        return int(n)


class _Mismatch(Exception):
    """The cache's vectors of an embedder id have another dimension."""


def _uri(path: Path) -> str:
    from urllib.parse import quote

    return f"file:{quote(str(path.absolute()))}"


def _ro_uri(db: Path) -> str:
    return _uri(db) + "?mode=ro"


def cache_info(path: str | os.PathLike[str]) -> dict[str, int]:
    """``{embedder id: vectors}`` of the cache at ``path`` without creating
    it (``{}`` when absent or unreadable).

    >>> cache_info("/nonexistent/embeddings.sqlite")
    {}
    """
    p = Path(path)
    if not p.is_file():
        return {}
    try:
        con = sqlite3.connect(_ro_uri(p), uri=True)
    except sqlite3.Error:
        return {}
    try:
        rows = con.execute(
            "SELECT e.embedder_id, count(v.eid) FROM embedders e LEFT JOIN vectors v "
            "ON v.eid = e.eid GROUP BY e.eid ORDER BY e.embedder_id"
        ).fetchall()
        return {str(k): int(n) for k, n in rows}
    except sqlite3.Error:
        return {}
    finally:
        con.close()
