"""A :class:`~rowvoi.graph.GraphStore` over Kùzu, the embedded graph
database speaking Cypher (``pip install rowvoi[kuzu]``).

The graph lives in two tables of a Kùzu database (names prefixed by
``table_prefix``): nodes ``{prefix}Node(id STRING PRIMARY KEY, k INT64,
time INT64, texts STRING[])`` and edges ``{prefix}Edge(FROM .. TO ..,
idx INT64, type STRING, time INT64, text STRING)``.  Node ids round-trip
as ``str`` or ``int`` (stored with a one-letter tag); ``k`` and ``idx``
keep the node and edge order, so every listing comes in the same order as
:class:`~rowvoi.graph.MemoryGraph`'s and the two stores answer alike.

The protocol's queries (``neighbors``, ``reverse_neighbors``, ``fan_in``,
``edge_types``, ``documents``, ``graph[id]``) are Cypher against the
database.  Selections, graph-to-text and the hop kernels run on
:meth:`KuzuGraph.snapshot`: a :class:`~rowvoi.graph.MemoryGraph` built from
:meth:`KuzuGraph.export` (the C engine's CSR), cached until the store is
written to through this object.

Thread-safety: one Kùzu connection serves the store, guarded by a lock:
every method may be called from any thread (calls run one at a time).

Examples
--------
>>> import tempfile, os
>>> from rowvoi.graph.kuzu_store import KuzuGraph
>>> path = os.path.join(tempfile.mkdtemp(), "db")
>>> g = KuzuGraph.from_edges(path, [("app", "lib", "REF"), ("cli", "lib", "REF")],
...                          max_db_size=1 << 30)
>>> g.reverse_neighbors("lib"), g.fan_in("lib")
(['app', 'cli'], 2)
>>> g.close()
"""

from __future__ import annotations

import os
import threading
from collections.abc import Hashable
from typing import Any

from rowvoi._time import to_time, to_window
from rowvoi.graph.store import Edge, GraphData, MemoryGraph, Node, _texts_of

__all__ = ["KuzuGraph"]


def _import_kuzu() -> Any:
    try:
        import kuzu
    except ImportError as exc:  # pragma: no cover - exercised without the extra
        raise ImportError(
            "the Kùzu store needs the kuzu package: pip install 'rowvoi[kuzu]'"
        ) from exc
    return kuzu


def _enc(node_id: Hashable) -> str:
    if isinstance(node_id, bool) or not isinstance(node_id, (str, int)):
        raise TypeError(f"node id {node_id!r}: the Kùzu store keeps str or int ids")
    return ("i:" if isinstance(node_id, int) else "s:") + str(node_id)


def _dec(text: str) -> Hashable:
    return int(text[2:]) if text.startswith("i:") else text[2:]


class KuzuGraph:
    """A graph store in a Kùzu database (see the module notes).

    Parameters
    ----------
    database : str, path or kuzu.Database
        Path of the database (created if missing) or an open one.
    embedder : object with ``embed(texts)``, optional
        Used by :meth:`snapshot` to embed documents (selections, walks).
    table_prefix : str
        Prefix of the two table names (letters, digits, underscores).
    **database_options
        Passed to ``kuzu.Database`` when this store opens it (e.g.
        ``buffer_pool_size``, ``max_db_size`` in bytes: Kùzu reserves 8 TiB
        of address space per database unless told otherwise).
    """

    def __init__(
        self,
        database: Any,
        *,
        embedder: Any = None,
        table_prefix: str = "Rv",
        **database_options: Any,
    ) -> None:
        kuzu = _import_kuzu()
        if not table_prefix.replace("_", "").isalnum():
            raise ValueError(f"table_prefix={table_prefix!r}: letters, digits and underscores")
        self._owns_db = not isinstance(database, kuzu.Database)
        self._db = (
            kuzu.Database(os.fspath(database), **database_options) if self._owns_db else database
        )
        self._con = kuzu.Connection(self._db)
        self._lock = threading.RLock()
        self.embedder = embedder
        self._n = f"{table_prefix}Node"
        self._e = f"{table_prefix}Edge"
        self._snap: MemoryGraph | None = None
        with self._lock:
            tables = {row[1] for row in self._rows("CALL show_tables() RETURN *")}
            if self._n not in tables:
                self._con.execute(
                    f"CREATE NODE TABLE {self._n}(id STRING, k INT64, time INT64, "
                    "texts STRING[], PRIMARY KEY(id))"
                )
            if self._e not in tables:
                self._con.execute(
                    f"CREATE REL TABLE {self._e}(FROM {self._n} TO {self._n}, "
                    "idx INT64, type STRING, time INT64, text STRING)"
                )

    def _rows(self, query: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        with self._lock:
            result = self._con.execute(query, params or {})
            rows: list[list[Any]] = []
            while result.has_next():
                rows.append(result.get_next())
            return rows

    def close(self) -> None:
        """Close the connection, and the database when this store opened
        it (the files stay)."""
        with self._lock:
            self._con.close()
            if self._owns_db:
                self._db.close()

    # ------------------------------------------------------------ writing
    @classmethod
    def from_edges(
        cls,
        database: Any,
        edges: Any,
        nodes: Any = None,
        *,
        embedder: Any = None,
        table_prefix: str = "Rv",
        **database_options: Any,
    ) -> KuzuGraph:
        """A store holding the given edges and nodes (the formats of
        :meth:`rowvoi.graph.MemoryGraph.from_edges`)."""
        g = cls(database, embedder=embedder, table_prefix=table_prefix, **database_options)
        g.add(GraphData.from_rows(edges, nodes))
        return g

    def add(self, data: GraphData) -> None:
        """Add nodes and edges (edge endpoints that are not nodes become
        nodes without data).  Node ids must be new; edges are numbered after
        the edges already stored."""
        with self._lock:
            k0 = self._rows(f"MATCH (n:{self._n}) RETURN count(n)")[0][0]
            e0 = self._rows(f"MATCH ()-[e:{self._e}]->() RETURN count(e)")[0][0]
            known = {r[0] for r in self._rows(f"MATCH (n:{self._n}) RETURN n.id")}
            rows: list[dict[str, Any]] = []
            times = list(data.node_times) + [None] * (len(data.node_ids) - len(data.node_times))
            texts = list(data.node_texts) + [None] * (len(data.node_ids) - len(data.node_texts))
            for i, v in enumerate(data.node_ids):
                key = _enc(v)
                if key in known:
                    raise ValueError(f"node id {v!r} is already in the store")
                known.add(key)
                rows.append(
                    {
                        "id": key,
                        "k": k0 + len(rows),
                        "time": to_time(times[i], name=f"node_times[{i}]"),
                        "texts": _texts_of(texts[i], f"node {v!r}"),
                    }
                )
            for s, d in zip(data.edge_src, data.edge_dst):
                for v in (s, d):
                    key = _enc(v)
                    if key not in known:
                        known.add(key)
                        rows.append({"id": key, "k": k0 + len(rows), "time": None, "texts": []})
            if rows:
                # CAST: a column of nulls would otherwise be typed as STRING
                self._con.execute(
                    f"UNWIND $rows AS r CREATE (:{self._n} {{id: r.id, k: r.k, "
                    "time: CAST(r.time AS INT64), "
                    "texts: CAST(r.texts AS STRING[])})",
                    {"rows": rows},
                )
            m = len(data.edge_src)
            types = list(data.edge_types) or [None] * m
            etimes = list(data.edge_times) or [None] * m
            etexts = list(data.edge_texts) or [None] * m
            erows = []
            for e in range(m):
                text = _texts_of(etexts[e], f"edge {e}")
                erows.append(
                    {
                        "s": _enc(data.edge_src[e]),
                        "d": _enc(data.edge_dst[e]),
                        "idx": e0 + e,
                        "type": "" if types[e] is None else str(types[e]),
                        "time": to_time(etimes[e], name=f"edge_times[{e}]"),
                        "text": text[0] if text else None,
                    }
                )
            if erows:
                self._con.execute(
                    f"UNWIND $rows AS r MATCH (a:{self._n} {{id: r.s}}), "
                    f"(b:{self._n} {{id: r.d}}) CREATE (a)-[:{self._e} {{idx: r.idx, "
                    "type: r.type, time: CAST(r.time AS INT64), "
                    "text: CAST(r.text AS STRING)}]->(b)",
                    {"rows": erows},
                )
            self._snap = None

    # --------------------------------------------------- GraphStore protocol
    def __getitem__(self, node_id: Hashable) -> Node:
        rows = self._rows(f"MATCH (n:{self._n} {{id: $id}}) RETURN n.time", {"id": _enc(node_id)})
        if not rows:
            raise KeyError(node_id)
        return Node(node_id, rows[0][0])

    def __contains__(self, node_id: object) -> bool:
        try:
            self[node_id]
        except (KeyError, TypeError):
            return False
        return True

    def _listed(self, node_id: Hashable, pattern: str, edge_type: str | None) -> list[Hashable]:
        where = "" if edge_type is None else "WHERE e.type = $t "
        params: dict[str, Any] = {"id": _enc(node_id)}
        if edge_type is not None:
            params["t"] = str(edge_type)
        rows = self._rows(f"MATCH {pattern} {where}RETURN m.id ORDER BY e.idx", params)
        out: list[Hashable] = []
        seen: set[str] = set()
        for (key,) in rows:
            if key not in seen:
                seen.add(key)
                out.append(_dec(key))
        return out

    def neighbors(self, node_id: Hashable, edge_type: str | None = None) -> list[Hashable]:
        """Targets of the node's out-edges (of ``edge_type``, or any),
        de-duplicated in edge order; ``[]`` for an unknown node."""
        return self._listed(
            node_id, f"(n:{self._n} {{id: $id}})-[e:{self._e}]->(m:{self._n})", edge_type
        )

    def reverse_neighbors(self, node_id: Hashable, edge_type: str | None = None) -> list[Hashable]:
        """Sources of the edges pointing at the node, de-duplicated in edge
        order; ``[]`` for an unknown node."""
        return self._listed(
            node_id, f"(m:{self._n})-[e:{self._e}]->(n:{self._n} {{id: $id}})", edge_type
        )

    def fan_in(self, node_id: Hashable, edge_type: str | None = None) -> int:
        """How many distinct nodes point at the node (by ``edge_type``)."""
        return len(self.reverse_neighbors(node_id, edge_type))

    def max_fan_in(self, edge_type: str | None = None) -> int:
        """The largest :meth:`fan_in` over all nodes (0 without edges)."""
        where = "" if edge_type is None else "WHERE e.type = $t "
        rows = self._rows(
            f"MATCH (a:{self._n})-[e:{self._e}]->(b:{self._n}) {where}"
            "WITH b, count(DISTINCT a) AS c RETURN max(c)",
            {} if edge_type is None else {"t": str(edge_type)},
        )
        return int(rows[0][0] or 0) if rows else 0

    def edge_types(self, node_id: Hashable | None = None) -> list[str]:
        """Types on the node's out-edges, or in the whole graph, first seen
        first (edge order)."""
        if node_id is None:
            rows = self._rows(f"MATCH ()-[e:{self._e}]->() RETURN e.type ORDER BY e.idx")
        else:
            rows = self._rows(
                f"MATCH (n:{self._n} {{id: $id}})-[e:{self._e}]->() RETURN e.type ORDER BY e.idx",
                {"id": _enc(node_id)},
            )
        return list(dict.fromkeys(r[0] for r in rows))

    def edges_of(
        self,
        node_id: Hashable,
        direction: str = "out",
        edge_type: str | None = None,
        window: Any = None,
    ) -> list[Edge]:
        """Edges of a node: ``direction`` "out", "in" or "both" (out-edges
        first), each in edge order; under ``window`` only edges inside it
        whose far end is inside too, and none when the node is outside (as
        :meth:`rowvoi.graph.MemoryGraph.edges_of`)."""
        if direction not in ("out", "in", "both"):
            raise ValueError(f"direction={direction!r}: use 'out', 'in' or 'both'")
        w = to_window(window)

        def inside(t: int | None) -> bool:
            return w is None or t is None or w[0] <= t < w[1]

        where = "" if edge_type is None else "WHERE e.type = $t "
        params: dict[str, Any] = {"id": _enc(node_id)}
        if edge_type is not None:
            params["t"] = str(edge_type)
        rows = self._rows(f"MATCH (n:{self._n} {{id: $id}}) RETURN n.time", {"id": params["id"]})
        if not rows or not inside(rows[0][0]):
            return []
        out: list[Edge] = []
        for side in ("out", "in"):
            if direction not in (side, "both"):
                continue
            pattern = (
                f"(n:{self._n} {{id: $id}})-[e:{self._e}]->(m:{self._n})"
                if side == "out"
                else f"(m:{self._n})-[e:{self._e}]->(n:{self._n} {{id: $id}})"
            )
            for idx, typ, t, far, far_t in self._rows(
                f"MATCH {pattern} {where}RETURN e.idx, e.type, e.time, m.id, m.time "
                "ORDER BY e.idx",
                params,
            ):
                if not (inside(t) and inside(far_t)):
                    continue
                a, b = (node_id, _dec(far)) if side == "out" else (_dec(far), node_id)
                out.append(Edge(int(idx), a, b, typ, t))
        return out

    def documents(self, node_id: Hashable) -> list[str]:
        """The node's document texts (``[]`` when none or unknown)."""
        rows = self._rows(f"MATCH (n:{self._n} {{id: $id}}) RETURN n.texts", {"id": _enc(node_id)})
        return list(rows[0][0] or []) if rows else []

    def export(self) -> GraphData:
        """The whole graph as :class:`~rowvoi.graph.GraphData`, in node and
        edge order."""
        nodes = self._rows(f"MATCH (n:{self._n}) RETURN n.id, n.time, n.texts ORDER BY n.k")
        edges = self._rows(
            f"MATCH (a:{self._n})-[e:{self._e}]->(b:{self._n}) "
            "RETURN a.id, b.id, e.type, e.time, e.text ORDER BY e.idx"
        )
        return GraphData(
            node_ids=[_dec(r[0]) for r in nodes],
            node_times=[r[1] for r in nodes],
            node_texts=[list(r[2] or []) for r in nodes],
            edge_src=[_dec(r[0]) for r in edges],
            edge_dst=[_dec(r[1]) for r in edges],
            edge_types=[r[2] for r in edges],
            edge_times=[r[3] for r in edges],
            edge_texts=[r[4] for r in edges],
        )

    def snapshot(self, *, embedder: Any = None) -> MemoryGraph:
        """The store as a :class:`~rowvoi.graph.MemoryGraph` (cached until
        :meth:`add`; a different ``embedder`` builds a fresh one)."""
        with self._lock:
            if embedder is not None:
                return MemoryGraph.from_data(self.export(), embedder=embedder)
            if self._snap is None:
                self._snap = MemoryGraph.from_data(self.export(), embedder=self.embedder)
            return self._snap

    def __repr__(self) -> str:
        return f"<KuzuGraph tables {self._n}/{self._e}>"
