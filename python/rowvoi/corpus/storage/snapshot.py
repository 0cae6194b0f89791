"""A read transaction over a corpus: :class:`Snapshot`.

A snapshot reads the committed generation's state and rows from one
SQLite read transaction of ``docs.sqlite`` (WAL: never blocked by a
builder, and never seeing a later commit). The store opens it
(:meth:`rowvoi.corpus.storage.store.CorpusStore.snapshot`) and decodes the
state once per committed generation; what a snapshot answers is plain
Python values and numpy arrays, read by the queries below -- the one place
that knows the tables' columns (:mod:`rowvoi.corpus.storage.layout`).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rowvoi.corpus.storage.layout import AID_COLUMN, LINK_COLUMNS
from rowvoi.errors import IndexFormatError

__all__ = ["Snapshot"]


class Snapshot:
    """One read transaction over a corpus: the committed state and rows.

    Obtained from :meth:`~rowvoi.corpus.storage.store.CorpusStore.snapshot`
    (or, for a builder inside its own transaction,
    :meth:`~rowvoi.corpus.storage.store.CorpusStore.view`); valid inside its
    ``with`` block, in the thread that opened it. Methods return plain
    Python values.

    >>> from rowvoi.corpus import CorpusStore, build, from_mapping
    >>> c = build(from_mapping({"a": "x"}, embedder="hashing:8"), store=CorpusStore.memory())
    >>> with c.store.snapshot() as snap:
    ...     snap.generation, snap.kinds(), snap.base["lexical"]
    (1, {'document': 1}, 'lexical.1.rvx')
    """

    def __init__(self, con: sqlite3.Connection, state: dict[str, Any], db_path: Path) -> None:
        self.con = con
        #: The committed state (decoded and checked by the store).
        self.state = state
        #: The database read (for messages).
        self.db_path = db_path

    @property
    def generation(self) -> int:
        """The committed generation (0: never built)."""
        return int(self.state.get("generation", 0))

    @property
    def base(self) -> dict[str, Any]:
        """``{"generation", "lexical", "dense", "next_id"}`` of the base files."""
        return dict(self.state.get("base") or {})

    def counts(self) -> dict[str, int]:
        """``n_artifacts``, ``n_records``, ``n_delta`` (records added since
        the base) and ``n_tombstones``."""
        c = self.con
        base_next = int(self.base.get("next_id", 0))
        return {
            "n_artifacts": c.execute("SELECT count(*) FROM artifacts").fetchone()[0],
            "n_records": c.execute("SELECT count(*) FROM records").fetchone()[0],
            "n_delta": c.execute(
                "SELECT count(*) FROM records WHERE id >= ?", (base_next,)
            ).fetchone()[0],
            "n_tombstones": c.execute("SELECT count(*) FROM tombstones").fetchone()[0],
        }

    def n_records(self) -> int:
        """Live records."""
        return int(self.con.execute("SELECT count(*) FROM records").fetchone()[0])

    def _damaged(self, what: str) -> Exception:
        """The error for rows a damaged ``docs.sqlite`` holds (SQLite checks
        neither NOT NULL nor types when it reads a page)."""
        return IndexFormatError(
            f"RV_E_CORRUPT: {self.db_path}: damaged corpus database ({what}); rebuild the corpus"
        )

    def tombstones(self) -> np.ndarray:
        """Ids in the base files that are no longer live (int64, ascending)."""
        rows = self.con.execute("SELECT id FROM tombstones ORDER BY id").fetchall()
        if not all(type(r[0]) is int for r in rows):
            raise self._damaged("a tombstone that is not an integer id")
        return np.array([r[0] for r in rows], dtype=np.int64)

    def delta_texts(self, batch: int = 10_000) -> Iterator[tuple[np.ndarray, list[str]]]:
        """``(ids, texts)`` batches of the records added since the base."""
        cur = self.con.execute(
            "SELECT id, text FROM records WHERE id >= ? ORDER BY id",
            (int(self.base.get("next_id", 0)),),
        )
        while True:
            rows = cur.fetchmany(batch)
            if not rows:
                return
            if not all(type(r[0]) is int and type(r[1]) is str for r in rows):
                raise self._damaged("a record added since the base without an id or text")
            yield (np.array([r[0] for r in rows], dtype=np.int64), [r[1] for r in rows])

    def delta_vectors(
        self, dim: int, batch: int = 10_000
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """``(ids, vectors)`` batches of the delta's vectors."""
        cur = self.con.execute("SELECT id, vector FROM delta_vectors ORDER BY id")
        while True:
            rows = cur.fetchmany(batch)
            if not rows:
                return
            if not all(
                type(r[0]) is int and type(r[1]) is bytes and len(r[1]) == 4 * dim for r in rows
            ):
                raise self._damaged(f"a delta vector that is not {dim} float32 values")
            ids = np.array([r[0] for r in rows], dtype=np.int64)
            vecs = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
            yield ids, vecs.reshape(len(rows), dim)

    def fields(self) -> list[tuple[str, str, bool]]:
        """``(name, type, integer)`` of every filter field, by name."""
        return [
            (n, t, bool(i))
            for n, t, i in self.con.execute("SELECT name, type, integer FROM fields ORDER BY name")
        ]

    def distinct_values(self, field: str, limit: int) -> list[Any]:
        """Up to ``limit`` distinct non-null values of a filter field."""
        from rowvoi.query.sql import quote_ident

        q = quote_ident(field)
        return [
            v
            for (v,) in self.con.execute(
                f"SELECT DISTINCT {q} FROM filter_values WHERE {q} IS NOT NULL ORDER BY {q} "
                "LIMIT ?",
                (limit,),
            )
        ]

    def ids_where(
        self, where_sql: str | None, params: Sequence[Any], kinds: Sequence[str] | None
    ) -> np.ndarray:
        """Record ids whose artifact's filter values satisfy ``where_sql``
        (a compiled filter over ``filter_values``, or ``None``) and whose
        kind is in ``kinds`` (or any kind), ascending."""
        sql = "SELECT id FROM records"
        conds: list[str] = []
        args: list[Any] = []
        if where_sql is not None:
            conds.append(f'aid IN (SELECT "{AID_COLUMN}" FROM filter_values WHERE {where_sql})')
            args.extend(params)
        if kinds is not None:
            conds.append("kind IN (SELECT value FROM json_each(?))")
            args.append(json.dumps(list(kinds)))
        if conds:
            sql += " WHERE " + " AND ".join(conds)
        rows = self.con.execute(sql + " ORDER BY id", args).fetchall()
        return np.array([r[0] for r in rows], dtype=np.int64)

    def rows(self, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        """Records by id: ``{id: {artifact_id, aid, surface_index, kind,
        granularity, text, metadata, filter_fields}}`` (ids not live are
        absent)."""
        if len(ids) == 0:
            return {}
        out: dict[int, dict[str, Any]] = {}
        for part in _chunks([int(i) for i in ids]):
            cur = self.con.execute(
                "SELECT r.id, r.aid, r.surface_index, r.kind, r.granularity, r.text, r.metadata, "
                "a.artifact_id, a.filter_fields FROM records r JOIN artifacts a ON a.aid = r.aid "
                f"WHERE r.id IN ({_marks(len(part))})",
                part,
            )
            out.update(
                (
                    r[0],
                    {
                        "aid": r[1],
                        "surface_index": r[2],
                        "kind": r[3],
                        "granularity": r[4],
                        "text": r[5],
                        "metadata": r[6],
                        "artifact_id": r[7],
                        "filter_fields": r[8],
                    },
                )
                for r in cur
            )
        return out

    def brief(self, ids: Sequence[int]) -> dict[int, tuple[int, str, str, int]]:
        """``{id: (aid, kind, artifact_id, surface_index)}`` for live ids
        (cheap: no text)."""
        if len(ids) == 0:
            return {}
        out: dict[int, tuple[int, str, str, int]] = {}
        for part in _chunks([int(i) for i in ids]):
            cur = self.con.execute(
                "SELECT r.id, r.aid, r.kind, a.artifact_id, r.surface_index FROM records r "
                f"JOIN artifacts a ON a.aid = r.aid WHERE r.id IN ({_marks(len(part))})",
                part,
            )
            out.update((r[0], (r[1], r[2], r[3], r[4])) for r in cur)
        return out

    def ledger(self) -> dict[str, str]:
        """``{artifact id: version}`` of every artifact in the ledger (the
        version is the change signal the build recorded)."""
        return dict(self.con.execute("SELECT artifact_id, version FROM artifacts"))

    def artifact(self, artifact_id: str) -> dict[str, Any] | None:
        """The ledger entry of an artifact, or ``None``."""
        row = self.con.execute(
            "SELECT aid, version, strategy_id, embedder_id, filter_fields "
            "FROM artifacts WHERE artifact_id = ?",
            (artifact_id,),
        ).fetchone()
        if row is None:
            return None
        return {
            "aid": row[0],
            "version": row[1],
            "strategy_id": row[2],
            "embedder_id": row[3],
            "filter_fields": json.loads(row[4]),
        }

    def artifact_records(self, aid: int, kind: str | None = None) -> list[tuple[Any, ...]]:
        """``(id, surface_index, kind, granularity, text, metadata)`` rows of
        one artifact in plan order."""
        sql = (
            "SELECT id, surface_index, kind, granularity, text, metadata FROM records "
            "WHERE aid = ?"
        )
        args: list[Any] = [aid]
        if kind is not None:
            sql += " AND kind = ?"
            args.append(kind)
        return self.con.execute(sql + " ORDER BY surface_index", args).fetchall()

    def links(self) -> list[tuple[str, str, str, str, str | None, int | None]]:
        """Every stored link as ``(source, edge_type, target_source, target,
        text, time)``, by source artifact id, then in extraction order
        (``target_source`` is ``''`` for this corpus). ``[]`` for a corpus
        whose links table predates the link graph."""
        cols = [r[1] for r in self.con.execute("PRAGMA table_info(links)")]
        if cols != LINK_COLUMNS:
            return []
        return self.con.execute(
            "SELECT source, edge_type, target_source, target, text, time "
            "FROM links ORDER BY source, seq"
        ).fetchall()

    def n_links(self) -> int:
        """Stored links (dangling ones included)."""
        cols = [r[1] for r in self.con.execute("PRAGMA table_info(links)")]
        if cols != LINK_COLUMNS:
            return 0
        return int(self.con.execute("SELECT count(*) FROM links").fetchone()[0])

    def kinds(self) -> dict[str, int]:
        """Surface kinds and their record counts."""
        return dict(
            self.con.execute("SELECT kind, count(*) FROM records GROUP BY kind ORDER BY kind")
        )


def _chunks(ids: list[int], size: int = 500) -> Iterator[list[int]]:
    for i in range(0, len(ids), size):
        yield ids[i : i + size]


def _marks(n: int) -> str:
    return ", ".join("?" * n)
