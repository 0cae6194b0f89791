"""Graph stores: the :class:`GraphStore` protocol and the built-in
in-memory store over the C engine's CSR.

Model
-----
* **Nodes** have ids (any hashable: ``str``, ``int``, tuples), an optional
  time and optional text (one string or several: each is a *document*).
* **Edges** are typed and directed (``src -> dst``), may repeat and loop,
  and may carry a time and text (an edge document).  Edges are numbered
  ``0, 1, ...`` in the order given: :attr:`Edge.index`.
* **Documents** hang off one entity each (a node or an edge) and are
  numbered node documents first (node order, then each node's texts in
  order), then edge documents (edge order).  With an embedder (any object
  with ``embed(texts) -> (n, dim) array``, e.g.
  :class:`rowvoi.index.embed.HashingEmbedder`) or explicit ``vectors`` each
  document has a vector, so selections can rank them.
* **Times** are ints in your unit; ISO-8601 strings and datetimes become
  milliseconds since the Unix epoch (UTC when no zone).  See
  :mod:`rowvoi._time`.

Listing order is deterministic everywhere: out-edges before in-edges, each
in input order; neighbours de-duplicated, first seen first.

Thread-safety: a :class:`MemoryGraph` is immutable once built; every method
may run concurrently from many threads (the engine calls release the GIL).

Examples
--------
>>> from rowvoi.graph import MemoryGraph
>>> g = MemoryGraph.from_edges([("app", "lib", "REF"), ("cli", "lib", "REF"),
...                             ("lib", "core", "REF"), ("app", "cli", "CALLS")])
>>> g.neighbors("app"), g.reverse_neighbors("lib"), g.fan_in("lib", "REF")
(['lib', 'cli'], ['app', 'cli'], 2)
>>> g.edge_types("app"), g.edge_types()
(['REF', 'CALLS'], ['REF', 'CALLS'])
"""

from __future__ import annotations

import numbers
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

import rowvoi.index._graph as _graph
from rowvoi._rows import edge_rows, node_rows
from rowvoi._time import NO_TIME, times_array, to_window
from rowvoi.index.embed import HashingEmbedder, MiniLMEmbedder

__all__ = [
    "Node",
    "Edge",
    "Document",
    "GraphData",
    "GraphStore",
    "MemoryGraph",
    "snapshot",
    "release_build_memory",
]

_DIRS = ("out", "in", "both")


@dataclass(frozen=True)
class Node:
    """A node: its ``id`` and ``time`` (None when it has none)."""

    id: Hashable
    time: int | None = None


@dataclass(frozen=True)
class Edge:
    """A directed, typed edge: position ``index`` in the store's edge list,
    ``src`` and ``dst`` node ids, ``type`` (a string) and ``time``."""

    index: int
    src: Hashable
    dst: Hashable
    type: str
    time: int | None = None


@dataclass(frozen=True)
class Document:
    """A document: its number ``id`` in the graph, the ``entity`` it hangs
    off (a :class:`Node` or an :class:`Edge`) and its text ``content``."""

    id: int
    entity: Node | Edge
    content: str


@dataclass
class GraphData:
    """A whole graph as plain lists: what a store exports and
    :meth:`MemoryGraph.from_data` builds from.

    ``node_texts[i]`` is a list of the node's documents; ``edge_text[e]``
    an edge's document text or None.  Times are ints or None.
    """

    node_ids: list[Hashable] = field(default_factory=list)
    node_times: list[Any] = field(default_factory=list)
    node_texts: list[Any] = field(default_factory=list)
    edge_src: list[Hashable] = field(default_factory=list)
    edge_dst: list[Hashable] = field(default_factory=list)
    edge_types: list[Any] = field(default_factory=list)
    edge_times: list[Any] = field(default_factory=list)
    edge_texts: list[Any] = field(default_factory=list)

    @classmethod
    def from_rows(cls, edges: Any, nodes: Any = None) -> GraphData:
        """Edge and node rows in the formats of
        :meth:`MemoryGraph.from_edges`, as lists."""
        data = cls()
        for v, text, t in node_rows(nodes if nodes is not None else []):
            data.node_ids.append(v)
            data.node_texts.append(text)
            data.node_times.append(t)
        for s, d, typ, text, t in edge_rows(edges):
            data.edge_src.append(s)
            data.edge_dst.append(d)
            data.edge_types.append(typ)
            data.edge_texts.append(text)
            data.edge_times.append(t)
        return data


@runtime_checkable
class GraphStore(Protocol):
    """What :func:`rowvoi.graph.traverse`, selections and graph-to-text need
    from a graph store.

    ``graph[node_id]`` resolves a node to its :class:`Node` (KeyError when
    absent); ``neighbors`` / ``reverse_neighbors`` list node ids (out-edge
    targets / in-edge sources, of one type or any, de-duplicated, first
    seen first; ``[]`` for an unknown node); ``fan_in`` counts distinct
    sources; ``edge_types`` lists the types on a node's out-edges (or in the
    whole graph); ``documents`` lists a node's document texts; ``edges_of``
    lists a node's :class:`Edge` objects (types, times; out-edges before
    in-edges, in edge order; optionally inside a window); ``export``
    returns the whole graph as :class:`GraphData` (what the C engine's CSR
    is built from).  ``isinstance(x, GraphStore)`` checks method names only.
    """

    def __getitem__(self, node_id: Hashable) -> Node: ...

    def neighbors(self, node_id: Hashable, edge_type: str | None = None) -> list[Hashable]: ...

    def reverse_neighbors(
        self, node_id: Hashable, edge_type: str | None = None
    ) -> list[Hashable]: ...

    def fan_in(self, node_id: Hashable, edge_type: str | None = None) -> int: ...

    def edge_types(self, node_id: Hashable | None = None) -> list[str]: ...

    def documents(self, node_id: Hashable) -> list[str]: ...

    def edges_of(
        self,
        node_id: Hashable,
        direction: str = "out",
        edge_type: str | None = None,
        window: Any = None,
    ) -> list[Edge]: ...

    def export(self) -> GraphData: ...


def _texts_of(value: Any, where: str) -> list[str]:
    if value is None or (isinstance(value, float) and value != value):
        return []
    if isinstance(value, str):
        return [value] if value else []
    if isinstance(value, Iterable):
        texts = list(value)
        for t in texts:
            if not isinstance(t, str):
                raise TypeError(f"{where}: texts must be strings, got {type(t).__name__}")
        return [t for t in texts if t]
    raise TypeError(
        f"{where}: text must be a string or a list of strings, got {type(value).__name__}"
    )


def _check_id(node_id: Any, where: str) -> Hashable:
    if node_id is None or (isinstance(node_id, float) and node_id != node_id):
        raise ValueError(f"{where}: node ids must not be missing")
    try:
        hash(node_id)
    except TypeError:
        raise TypeError(f"{where}: node id {node_id!r} is not hashable") from None
    checked: Hashable = node_id
    return checked


def _owned(a: Any, dtype: Any) -> np.ndarray:
    """``a`` as a C-contiguous array of ``dtype`` that nobody else holds,
    read-only: the engine reads a store's index arrays in place, so a
    caller that later changes the array it passed must not change them
    (copied only when the conversion did not already make a new array)."""
    arr = np.ascontiguousarray(a, dtype=dtype)
    if isinstance(a, np.ndarray) and np.may_share_memory(arr, a):
        arr = arr.copy()
    arr.flags.writeable = False
    return arr


# ------------------------------------------------------------ the store


class MemoryGraph:
    """The built-in graph store: the C engine's CSR over node, edge and
    document arrays (see the module notes for the model).

    Build it with :meth:`from_edges` (edge lists or DataFrames) or
    :meth:`from_data`; it implements :class:`GraphStore` and is the
    snapshot every selection, walk and graph-to-text runs on.

    Parameters are those of :meth:`from_data`.

    Thread-safety: immutable once built; share it freely between threads.
    """

    def __init__(
        self, data: GraphData, *, embedder: Any = None, vectors: Any = None, metric: str = "cosine"
    ) -> None:
        ids: list[Hashable] = []
        index: dict[Hashable, int] = {}
        for i, v in enumerate(data.node_ids):
            v = _check_id(v, f"node_ids[{i}]")
            if v in index:
                raise ValueError(
                    f"node id {v!r} is listed twice (node_ids[{index[v]}] and node_ids[{i}])"
                )
            index[v] = len(ids)
            ids.append(v)
        src = np.empty(len(data.edge_src), dtype=np.int64)
        dst = np.empty(len(data.edge_src), dtype=np.int64)
        if len(data.edge_dst) != len(data.edge_src):
            raise ValueError("edge_src and edge_dst differ in length")
        for e, (s, d) in enumerate(zip(data.edge_src, data.edge_dst)):
            for k, v in enumerate((s, d)):
                v = _check_id(v, f"edge {e} {'dst' if k else 'src'}")
                j = index.get(v)
                if j is None:  # a dangling endpoint becomes a node without data
                    j = index[v] = len(ids)
                    ids.append(v)
                (dst if k else src)[e] = j
        n, m = len(ids), len(src)
        types: dict[str, int] = {}
        etype = np.zeros(m, dtype=np.uint16)
        for e, t in enumerate(data.edge_types or [None] * m):
            t = "" if t is None or (isinstance(t, float) and t != t) else str(t)
            if t not in types:
                if len(types) >= 65536:
                    raise ValueError("more than 65536 edge types")
                types[t] = len(types)
            etype[e] = types[t]
        node_times = list(data.node_times) + [None] * (n - len(data.node_times))
        node_time = times_array(node_times, n, "node_times") if data.node_times else None
        etime = times_array(data.edge_times, m, "edge_times") if data.edge_times else None
        # documents: node texts in node order, then edge texts in edge order
        doc_entity: list[int] = []
        doc_text: list[str] = []
        node_texts = list(data.node_texts) + [None] * (n - len(data.node_texts))
        for i in range(n):
            for t in _texts_of(node_texts[i], f"node {ids[i]!r}"):
                doc_entity.append(i)
                doc_text.append(t)
        for e, t in enumerate(data.edge_texts or []):
            for tt in _texts_of(t, f"edge {e}"):
                doc_entity.append(n + e)
                doc_text.append(tt)
        self._build(
            ids,
            index,
            src,
            dst,
            etype,
            list(types),
            node_time,
            etime,
            np.asarray(doc_entity, dtype=np.int64),
            doc_text,
            embedder,
            vectors,
            metric,
        )

    def _build(
        self,
        ids: list[Hashable],
        index: dict[Hashable, int],
        src: np.ndarray,
        dst: np.ndarray,
        etype: np.ndarray,
        type_names: list[str],
        node_time: np.ndarray | None,
        etime: np.ndarray | None,
        doc_entity: np.ndarray,
        doc_text: list[str],
        embedder: Any,
        vectors: Any,
        metric: str,
        vector_rows: np.ndarray | None = None,
    ) -> None:
        """Checked arrays in, engine handle out (shared by every builder)."""
        if metric not in ("cosine", "ip"):
            raise ValueError(f"metric={metric!r}: use 'cosine' or 'ip' (inner product)")
        self.embedder = embedder
        self.metric = metric
        self._ids, self._index = ids, index
        self._src, self._dst, self._etype = src, dst, etype
        self._type_names = type_names
        self._type_code = {t: i for i, t in enumerate(type_names)}
        self._node_time, self._etime = node_time, etime
        self._doc_entity, self._doc_text = doc_entity, doc_text
        n = len(ids)
        vec = self._vectors_for(doc_text, embedder, vectors, vector_rows)
        if vec is not None and vec.size:
            # checked once, here, as the vectors are handed over (ValueError
            # naming the first NaN or infinite component); the engine's
            # builds then skip their own pass over them (finite_rows)
            _graph.check_vectors(vec)
        self._vectors = vec
        # the engine's node ids are the indexes themselves (its identity fast
        # path); labels stay here.  Our embedders' rows are unit or zero, so
        # the engine need not compute norms for them.  The engine borrows the
        # vectors, types and times: this store keeps them, unchanged.
        unit = vectors is None and isinstance(embedder, (HashingEmbedder, MiniLMEmbedder))
        self._h = _graph.GraphHandle.create(
            np.arange(n, dtype=np.int64),
            node_time,
            src,
            dst,
            etype,
            etime,
            doc_entity,
            vec,
            vector_rows,
            metric,
            False,
            True,
            unit,
            True,
        )
        self._n_nodes = n

    @classmethod
    def from_arrays(
        cls,
        src: Any,
        dst: Any,
        *,
        node_ids: Sequence[Hashable] | None = None,
        n_nodes: int | None = None,
        edge_type: Any = None,
        type_names: Sequence[str] | None = None,
        node_time: Any = None,
        edge_time: Any = None,
        doc_entity: Any = None,
        doc_text: Sequence[str] | None = None,
        embedder: Any = None,
        vectors: Any = None,
        metric: str = "cosine",
        vector_rows: Any = None,
    ) -> MemoryGraph:
        """Build from integer arrays, without a Python loop over the edges
        (for large graphs, and for stores that keep integer codes).

        Parameters
        ----------
        src, dst : int arrays
            Node indexes ``0 .. n_nodes - 1`` of each edge's ends.
        node_ids : sequence, optional
            The id of each node index (default: the indexes themselves).
        n_nodes : int, optional
            Number of nodes when ``node_ids`` is not given (default: one
            past the largest index used).
        edge_type : int array, optional
            Type code of each edge (0 .. 65535) naming ``type_names[code]``
            (default names: the codes as strings).
        node_time, edge_time : int arrays, optional
            Times, with ``-2**63`` for "no time".
        doc_entity : int array, optional
            Entity of each document: node index, or ``n_nodes + edge index``.
        doc_text : sequence of str, optional
            Each document's text (required with ``doc_entity``).
        embedder, vectors, metric
            As :meth:`from_edges`.
        vector_rows : int array, optional
            Row of ``vectors`` for each document, so documents may share
            rows and ``vectors`` may be a larger matrix (a corpus's whole
            dense index, say) that is used in place, not copied.

        The engine reads the store's index, type and time arrays in place
        (no second copy in C): an array the caller still holds is copied
        once here (read-only), so changing it later changes nothing.  The
        vectors are checked once, here, to be finite; the builds trust
        that check.

        Raises
        ------
        ValueError
            Arrays of different lengths, an index out of range, repeated
            ids, a NaN or infinite vector component (named).
        """
        src = _owned(src, np.int64)
        dst = _owned(dst, np.int64)
        if src.ndim != 1 or src.shape != dst.shape:
            raise ValueError(
                f"src and dst must be 1-D of one length, got {src.shape} and {dst.shape}"
            )
        if node_ids is None:
            n = (
                int(n_nodes)
                if n_nodes is not None
                else (int(max(src.max(), dst.max())) + 1 if len(src) else 0)
            )
            ids: list[Hashable] = list(range(n))
            index: dict[Hashable, int] = {i: i for i in range(n)}
        else:
            ids = list(node_ids)
            index = {}
            for i, v in enumerate(ids):
                if index.setdefault(_check_id(v, f"node_ids[{i}]"), i) != i:
                    raise ValueError(f"node id {v!r} is listed twice")
            n = len(ids)
        for name, a in (("src", src), ("dst", dst)):
            if len(a) and (a.min() < 0 or a.max() >= n):
                raise ValueError(f"{name} holds node indexes outside 0 .. {n - 1}")
        m = len(src)
        if edge_type is None:
            etype = np.zeros(m, dtype=np.uint16)
        else:
            codes = np.asarray(edge_type)
            if codes.shape != (m,) or (m and (codes.min() < 0 or codes.max() > 65535)):
                raise ValueError("edge_type must hold one code in 0 .. 65535 per edge")
            etype = _owned(codes, np.uint16)
        top = int(etype.max()) + 1 if m else 1
        names = (
            [str(i) for i in range(top)] if type_names is None else [str(t) for t in type_names]
        )
        if len(names) < top:
            raise ValueError(f"type_names has {len(names)} names for codes up to {top - 1}")

        def times(a: Any, k: int, name: str) -> np.ndarray | None:
            if a is None:
                return None
            arr = _owned(a, np.int64)
            if arr.shape != (k,):
                raise ValueError(f"{name} must hold {k} times, got shape {arr.shape}")
            return arr

        ent = np.zeros(0, dtype=np.int64) if doc_entity is None else _owned(doc_entity, np.int64)
        texts = list(doc_text) if doc_text is not None else []
        if len(texts) != len(ent):
            raise ValueError(f"{len(ent)} document entities but {len(texts)} texts")
        if len(ent) and (ent.min() < 0 or ent.max() >= n + m):
            raise ValueError(f"doc_entity holds entities outside 0 .. {n + m - 1}")
        g = cls.__new__(cls)
        g._build(
            ids,
            index,
            src,
            dst,
            etype,
            names,
            times(node_time, n, "node_time"),
            times(edge_time, m, "edge_time"),
            ent,
            texts,
            embedder,
            vectors,
            metric,
            None if vector_rows is None else np.ascontiguousarray(vector_rows, dtype=np.int64),
        )
        return g

    @staticmethod
    def _vectors_for(
        texts: list[str], embedder: Any, vectors: Any, vector_rows: np.ndarray | None = None
    ) -> np.ndarray | None:
        if vectors is not None:
            vec = np.ascontiguousarray(vectors, dtype=np.float32)
            if vector_rows is not None:
                if vec.ndim != 2 or vector_rows.shape != (len(texts),):
                    raise ValueError(
                        f"vectors has shape {vec.shape} and vector_rows "
                        f"{vector_rows.shape}: need a 2-D matrix and one row "
                        f"number per document ({len(texts)})"
                    )
            elif vec.ndim != 2 or vec.shape[0] != len(texts):
                raise ValueError(
                    f"vectors has shape {vec.shape}: need one row per document ({len(texts)}, dim)"
                )
            if vec.shape[1] == 0:
                raise ValueError("vectors have dimension 0")
            return vec
        if embedder is None:
            return None
        if not hasattr(embedder, "embed"):
            raise TypeError(
                "embedder must have an embed(texts) method (e.g. rowvoi.index.embed.HashingEmbedder)"
            )
        if not texts:
            dim = getattr(embedder, "dim", None)
            return np.zeros((0, int(dim)), dtype=np.float32) if dim else None
        return np.ascontiguousarray(embedder.embed(texts), dtype=np.float32)

    # ----------------------------------------------------------- builders
    @classmethod
    def from_edges(
        cls,
        edges: Any,
        nodes: Any = None,
        *,
        embedder: Any = None,
        vectors: Any = None,
        metric: str = "cosine",
    ) -> MemoryGraph:
        """Build from edge rows and optional node rows.

        Parameters
        ----------
        edges : iterable or pandas.DataFrame
            Tuples ``(src, dst[, type[, text[, time]]])``, dicts with keys
            ``src``, ``dst`` and optionally ``type``, ``text``, ``time``, or
            a DataFrame with those columns.  Missing type: ``""``.
        nodes : iterable or pandas.DataFrame, optional
            Node ids, dicts with ``id`` and optionally ``text`` (a string or
            a list of strings: one document each) and ``time``, or a
            DataFrame with those columns.  Nodes are numbered in this order;
            edge endpoints not listed are appended (no text, no time).
        embedder : object with ``embed(texts)``, optional
            Embeds every document text (float32 rows).
        vectors : array (n_docs, dim), optional
            Document vectors instead of an embedder (document order: see the
            module notes).
        metric : {"cosine", "ip"}
            Similarity of a query and a document vector.

        Raises
        ------
        ValueError, TypeError
            A malformed row (naming it), a repeated node id, a bad time.
        """
        return cls(
            GraphData.from_rows(edges, nodes), embedder=embedder, vectors=vectors, metric=metric
        )

    @classmethod
    def from_data(
        cls, data: GraphData, *, embedder: Any = None, vectors: Any = None, metric: str = "cosine"
    ) -> MemoryGraph:
        """Build from a :class:`GraphData` (what :meth:`export` returns)."""
        return cls(data, embedder=embedder, vectors=vectors, metric=metric)

    # --------------------------------------------------------- properties
    @property
    def n_nodes(self) -> int:
        """Number of nodes (dangling edge endpoints included)."""
        return self._n_nodes

    @property
    def n_edges(self) -> int:
        """Number of edges."""
        return len(self._src)

    @property
    def n_documents(self) -> int:
        """Number of documents."""
        return len(self._doc_text)

    @property
    def dim(self) -> int:
        """Vector dimension (0 without vectors)."""
        return self._h.dim

    def __len__(self) -> int:
        return self._n_nodes

    def __contains__(self, node_id: object) -> bool:
        try:
            return node_id in self._index
        except TypeError:
            return False

    def __repr__(self) -> str:
        return (
            f"<MemoryGraph {self.n_nodes} nodes, {self.n_edges} edges, "
            f"{self.n_documents} documents, dim {self.dim}>"
        )

    # ------------------------------------------------------ index <-> id
    def _node_index(self, node_id: Hashable) -> int | None:
        try:
            return self._index.get(node_id)
        except TypeError:
            return None

    def _node(self, i: int) -> Node:
        t = None if self._node_time is None else int(self._node_time[i])
        return Node(self._ids[i], None if t == NO_TIME else t)

    def _edge(self, e: int) -> Edge:
        t = None if self._etime is None else int(self._etime[e])
        return Edge(
            int(e),
            self._ids[self._src[e]],
            self._ids[self._dst[e]],
            self._type_names[self._etype[e]],
            None if t == NO_TIME else t,
        )

    def _entity(self, x: int) -> Node | Edge:
        return self._node(x) if x < self._n_nodes else self._edge(x - self._n_nodes)

    def _document(self, d: int) -> Document:
        return Document(int(d), self._entity(int(self._doc_entity[d])), self._doc_text[d])

    def _type(self, edge_type: str | None) -> int:
        """Engine type code; -1 for any; -2 for a type the graph lacks."""
        if edge_type is None:
            return -1
        return self._type_code.get(str(edge_type), -2)

    # --------------------------------------------------- GraphStore protocol
    def __getitem__(self, node_id: Hashable) -> Node:
        i = self._node_index(node_id)
        if i is None:
            raise KeyError(node_id)
        return self._node(i)

    def node_ids(self) -> list[Hashable]:
        """Every node id, in node order."""
        return list(self._ids)

    def edge(self, index: int) -> Edge:
        """Edge number ``index`` (IndexError when out of range)."""
        if not isinstance(index, numbers.Integral) or not 0 <= index < self.n_edges:
            raise IndexError(f"edge index {index!r}: the graph has {self.n_edges} edges")
        return self._edge(int(index))

    def edges_of(
        self,
        node_id: Hashable,
        direction: str = "out",
        edge_type: str | None = None,
        window: Any = None,
    ) -> list[Edge]:
        """Edges of a node: ``direction`` "out", "in" or "both" (out-edges
        first), each in input order; ``[]`` for an unknown node."""
        if direction not in _DIRS:
            raise ValueError(f"direction={direction!r}: use 'out', 'in' or 'both'")
        i = self._node_index(node_id)
        t = self._type(edge_type)
        if i is None or t == -2:
            return []
        w = _window_array(window)
        edges, _ = self._h.neighbours(i, direction, t, w)
        return [self._edge(int(e)) for e in edges]

    def _listed(self, node_id: Hashable, direction: str, edge_type: str | None) -> list[Hashable]:
        i = self._node_index(node_id)
        t = self._type(edge_type)
        if i is None or t == -2:
            return []
        _, nbrs = self._h.neighbours(i, direction, t, None)
        seen: set[int] = set()
        out: list[Hashable] = []
        for v in nbrs.tolist():
            if v not in seen:
                seen.add(v)
                out.append(self._ids[v])
        return out

    def neighbors(self, node_id: Hashable, edge_type: str | None = None) -> list[Hashable]:
        """Targets of the node's out-edges (of ``edge_type``, or any),
        de-duplicated, first seen first; ``[]`` for an unknown node."""
        return self._listed(node_id, "out", edge_type)

    def reverse_neighbors(self, node_id: Hashable, edge_type: str | None = None) -> list[Hashable]:
        """Sources of the edges pointing at the node (of ``edge_type``, or
        any), de-duplicated, first seen first; ``[]`` for an unknown node."""
        return self._listed(node_id, "in", edge_type)

    def fan_in(self, node_id: Hashable, edge_type: str | None = None) -> int:
        """How many distinct nodes point at the node (by ``edge_type``, or
        any): its in-degree over sources."""
        return len(self.reverse_neighbors(node_id, edge_type))

    def max_fan_in(self, edge_type: str | None = None) -> int:
        """The largest :meth:`fan_in` over all nodes (0 without edges)."""
        t = self._type(edge_type)
        if t == -2 or not self.n_edges:
            return 0
        keep = np.ones(self.n_edges, dtype=bool) if t < 0 else self._etype == t
        # distinct (dst, src) pairs as one int64 key each (node indexes < 2**32)
        keys = np.unique(self._dst[keep] * np.int64(1 << 32) + self._src[keep])
        if not len(keys):
            return 0
        return int(np.bincount(keys >> 32).max())

    def edge_types(self, node_id: Hashable | None = None) -> list[str]:
        """Types on the node's out-edges (first seen first), or every type
        in the graph (first seen first) when ``node_id`` is None."""
        if node_id is None:
            return list(self._type_names)
        out: list[str] = []
        for e in self.edges_of(node_id, "out"):
            if e.type not in out:
                out.append(e.type)
        return out

    def documents(self, node_id: Hashable) -> list[str]:
        """The node's document texts, in order (``[]`` when none)."""
        i = self._node_index(node_id)
        if i is None:
            return []
        docs = self._h.entity_docs(np.array([i], dtype=np.int64))
        return [self._doc_text[d] for d in docs.tolist()]

    def export(self) -> GraphData:
        """The whole graph as :class:`GraphData` (round-trips through
        :meth:`from_data`)."""
        n = self._n_nodes
        texts: list[list[str]] = [[] for _ in range(n + self.n_edges)]
        for d, x in enumerate(self._doc_entity.tolist()):
            texts[x].append(self._doc_text[d])

        def times(arr: np.ndarray | None, k: int) -> list[int | None]:
            if arr is None:
                return [None] * k
            return [None if t == NO_TIME else t for t in arr.tolist()[:k]]

        return GraphData(
            node_ids=list(self._ids),
            node_times=times(self._node_time, n),
            node_texts=texts[:n],
            edge_src=[self._ids[s] for s in self._src.tolist()],
            edge_dst=[self._ids[d] for d in self._dst.tolist()],
            edge_types=[self._type_names[t] for t in self._etype.tolist()],
            edge_times=times(self._etime, self.n_edges),
            edge_texts=[t[0] if len(t) == 1 else (t or None) for t in texts[n:]],
        )

    # --------------------------------------------------------------- walks
    def bfs(
        self,
        seeds: Iterable[Hashable],
        *,
        max_depth: int = 1,
        node_budget: int | None = None,
        direction: str = "both",
        edge_types: Iterable[str] | None = None,
        window: Any = None,
    ) -> list[tuple[Hashable, int]]:
        """Breadth-first hop expansion: ``(node id, depth)`` pairs, seeds
        first (unknown seeds skipped, repeats once), then level by level in
        order of discovery.  Each node is visited once; the walk stops at
        ``max_depth`` hops or ``node_budget`` nodes (seeds included), so
        cycles, self-loops and huge fan-out terminate."""
        if direction not in _DIRS:
            raise ValueError(f"direction={direction!r}: use 'out', 'in' or 'both'")
        if (
            isinstance(max_depth, bool)
            or not isinstance(max_depth, numbers.Integral)
            or max_depth < 0
        ):
            raise ValueError(f"max_depth={max_depth!r}: must be an int >= 0")
        budget = _budget(node_budget, "node_budget")
        idx = self._seed_indexes(seeds)
        types = self._types_array(edge_types)
        if types is not None and not len(types):
            budget = min(budget, len(idx)) if budget else len(idx)
            types = None
            max_depth = 0
        nodes, depth = self._h.bfs(
            idx, min(int(max_depth), 2**32 - 1), budget, direction, types, _window_array(window)
        )
        return [(self._ids[v], int(d)) for v, d in zip(nodes.tolist(), depth.tolist())]

    def _seed_indexes(self, seeds: Iterable[Hashable]) -> np.ndarray:
        if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Iterable):
            seeds = [seeds]
        idx = [self._node_index(s) for s in seeds]
        return np.asarray([i for i in idx if i is not None], dtype=np.int64)

    def _types_array(self, edge_types: Iterable[str] | None) -> np.ndarray | None:
        """Engine codes of the named types (unknown names dropped), or None."""
        if edge_types is None:
            return None
        if isinstance(edge_types, str):
            edge_types = [edge_types]
        codes = [self._type_code[t] for t in map(str, edge_types) if t in self._type_code]
        return np.asarray(codes, dtype=np.uint16)


def _budget(value: Any, name: str) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name}={value!r}: must be an int >= 1 (or None for no limit)")
    return int(value)


def _window_array(window: Any) -> np.ndarray | None:
    w = to_window(window)
    return None if w is None else np.asarray(w, dtype=np.int64)


def release_build_memory() -> None:
    """Give back to the system the arrays that freed graphs keep for the
    next build.

    When a graph (a :class:`MemoryGraph`, or a :class:`CorpusGraph` of an
    older generation) is garbage-collected, the engine keeps its large
    arrays (1 MiB and up; at most about two graphs' worth) so that the next
    build reuses them instead of faulting in fresh pages (1M nodes, 5M
    edges: about 48 MB; bench/results/graph.md has the times). A process
    that is done building graphs calls this to return that memory. Graphs
    still alive are unaffected, and later builds work as before (they
    start from fresh pages).

    Thread-safety: safe from any thread, at any time (the engine serialises
    it with builds and frees).

    >>> from rowvoi.graph import MemoryGraph, release_build_memory
    >>> g = MemoryGraph.from_edges([("a", "b", "KNOWS")])
    >>> del g
    >>> release_build_memory()
    >>> MemoryGraph.from_edges([("a", "b", "KNOWS")]).neighbors("a")
    ['b']
    """
    _graph.trim()


def snapshot(store: Any, *, embedder: Any = None) -> MemoryGraph:
    """The :class:`MemoryGraph` a store's selections and walks run on: the
    store itself when it is one, a store's own ``snapshot()`` (a
    :class:`~rowvoi.graph.CorpusGraph`'s, say: a corpus is wrapped in one by
    :func:`~rowvoi.graph.corpus.graph_of` before it comes here), else one
    built from ``store.export()`` (with the store's ``embedder`` attribute
    unless one is given).

    Raises
    ------
    TypeError
        The store has no ``export`` method.
    """
    if isinstance(store, MemoryGraph) and embedder is None:
        return store
    snap = getattr(store, "snapshot", None)
    if callable(snap) and not isinstance(store, MemoryGraph):
        snapshot: MemoryGraph = snap() if embedder is None else snap(embedder=embedder)
        return snapshot
    if not hasattr(store, "export"):
        raise TypeError(
            f"{type(store).__name__} is not a graph store: it needs an "
            "export() method (see rowvoi.graph.GraphStore)"
        )
    emb = embedder if embedder is not None else getattr(store, "embedder", None)
    return MemoryGraph.from_data(store.export(), embedder=emb)
