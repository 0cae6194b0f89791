"""Vector selections over a graph: Raphtory's ``VectorSelection``.

A selection is an ordered set of documents of one graph (see
:mod:`rowvoi.graph.store`), each with a score.  Documents hang off
entities (nodes and edges).  It starts from a similarity search or empty
(:func:`documents_by_similarity`, :func:`entities_by_similarity`,
:func:`nodes_by_similarity`, :func:`edges_by_similarity`,
:func:`empty_selection`) and grows by hops over the graph.

Rules every method keeps
------------------------
* Adding a document already selected keeps its score and place; unknown
  node ids and edges are ignored.
* **Hops.**  Two documents are one hop apart when they are on the same
  entity, or one is on an edge and the other on an endpoint of that edge
  (so two nodes' documents are two hops apart, through the edge's).  For
  the entity methods, two entities are one hop apart when they are two
  nodes joined by an edge, a node and an edge on it, or two edges sharing
  an endpoint.  Edge direction does not matter for hops.
* **Similarity rounds.**  Each round takes every unselected candidate one
  hop from the selection (gathered once, scored in one batch by the C
  engine) and adds them in descending similarity, ties by the lower
  document (or entity) number, until the limit; then it repeats from the
  grown selection and stops when a round adds nothing.  So a nearer, less
  similar document is taken before a farther, more similar one.  An entity
  scores its best document; all its documents are added with that score.
* **Windows** are half-open ``[start, end)`` of ints or ISO-8601 strings
  (strings become milliseconds since the Unix epoch, UTC when no zone).
  Under a window only entities whose time is inside it (or that have no
  time) take part: a hop never starts from, passes through or lands on an
  entity outside.  (Raphtory counts a node as inside a window when it has
  any activity there, its own or an edge's; leave node times unset and
  give edges their times to get the same windows.)
* **Queries** are text (embedded with the graph's embedder) or a vector of
  the graph's dimension.  Similarity is the graph's metric (cosine by
  default).

Thread-safety: each selection has its own lock; every method takes it, so
a selection may be shared between threads (methods run one at a time on
it).  The graph is immutable and shared by any number of selections; the
engine's rounds run with the GIL released.

Examples
--------
>>> from rowvoi.index.embed import HashingEmbedder
>>> from rowvoi.graph import MemoryGraph, empty_selection
>>> g = MemoryGraph.from_edges(
...     [("alice", "acme", "WORKS_AT", "alice works at acme"),
...      ("bob", "acme", "WORKS_AT", "bob works at acme"),
...      ("bob", "paris", "LIVES_IN", "bob lives in paris")],
...     nodes=[{"id": "alice", "text": "alice, engineer"},
...            {"id": "bob", "text": "bob, designer"},
...            {"id": "acme", "text": "acme corporation"},
...            {"id": "paris", "text": "paris, france"}],
...     embedder=HashingEmbedder(dim=64))
>>> sel = empty_selection(g)
>>> sel.add_nodes(["alice"])
>>> sel.expand(2)
>>> [n.id for n in sel.nodes()], [(e.src, e.dst) for e in sel.edges()]
(['alice', 'acme'], [('alice', 'acme')])
>>> sel.expand_documents_by_similarity("bob lives in paris", limit=6)
>>> [d.content for d in sel.get_documents()][3:]
['bob works at acme', 'bob, designer', 'bob lives in paris']
"""

from __future__ import annotations

import numbers
import threading
from collections.abc import Iterable
from typing import Any

import numpy as np

from rowvoi.graph.corpus import graph_of
from rowvoi.graph.store import Document, Edge, MemoryGraph, Node, _window_array, snapshot

__all__ = [
    "VectorSelection",
    "documents_by_similarity",
    "entities_by_similarity",
    "nodes_by_similarity",
    "edges_by_similarity",
    "empty_selection",
]


def _limit(limit: Any) -> int:
    if isinstance(limit, bool) or not isinstance(limit, numbers.Integral) or limit < 0:
        raise ValueError(f"limit={limit!r}: must be an int >= 0")
    return int(limit)


def _query(graph: MemoryGraph, query: Any) -> np.ndarray:
    """The query as a float32 vector of the graph's dimension."""
    if graph.dim == 0:
        raise ValueError(
            "the graph has no document vectors: build it with an embedder "
            "or vectors to rank by similarity"
        )
    if isinstance(query, str):
        if graph.embedder is None:
            raise TypeError(
                "a text query needs the graph's embedder: build the graph with "
                "embedder=..., or pass the query as a vector"
            )
        vec = np.asarray(graph.embedder.embed([query]), dtype=np.float32)[0]
    else:
        try:
            vec = np.asarray(query, dtype=np.float32)
        except (TypeError, ValueError):
            raise TypeError(
                f"query must be a string or a vector of numbers, got {type(query).__name__}"
            ) from None
    if vec.ndim != 1 or vec.shape[0] != graph.dim:
        raise ValueError(
            f"query has shape {vec.shape}: the graph's vectors have dimension {graph.dim}"
        )
    return np.ascontiguousarray(vec)


class VectorSelection:
    """An ordered set of scored documents over a graph (see the module
    notes for hops, rounds, windows and queries).

    Create one with :func:`empty_selection` or a ``*_by_similarity``
    function; ``VectorSelection(graph)`` is an empty selection too (any
    :class:`~rowvoi.graph.GraphStore` works: it runs on the store's
    snapshot).
    """

    def __init__(
        self, graph: Any, _docs: np.ndarray | None = None, _scores: np.ndarray | None = None
    ) -> None:
        self._g = snapshot(graph_of(graph))
        self._docs = np.zeros(0, dtype=np.int64) if _docs is None else _docs
        self._scores = np.zeros(0, dtype=np.float32) if _scores is None else _scores
        self._lock = threading.RLock()

    @property
    def graph(self) -> MemoryGraph:
        """The graph (snapshot) the selection's documents belong to."""
        return self._g

    def __len__(self) -> int:
        with self._lock:
            return len(self._docs)

    def __repr__(self) -> str:
        return f"<VectorSelection {len(self)} documents of {self._g!r}>"

    # ----------------------------------------------------------- internals
    def _state(self) -> tuple[np.ndarray, np.ndarray]:
        with self._lock:
            return self._docs, self._scores

    def _extend(self, docs: np.ndarray, scores: np.ndarray) -> None:
        """Append documents not yet selected (first occurrence wins)."""
        if not len(docs):
            return
        _, first = np.unique(docs, return_index=True)
        first.sort()
        docs, scores = docs[first], scores[first]
        keep = ~np.isin(docs, self._docs)
        self._docs = np.concatenate([self._docs, docs[keep]])
        self._scores = np.concatenate([self._scores, scores[keep].astype(np.float32)])

    def _append_new(self, docs: np.ndarray, scores: np.ndarray) -> None:
        """Append documents the engine guarantees are new and distinct."""
        self._docs = np.concatenate([self._docs, docs])
        self._scores = np.concatenate([self._scores, scores.astype(np.float32)])

    def _entity_docs(self, entities: list[int]) -> np.ndarray:
        if not entities:
            return np.zeros(0, dtype=np.int64)
        return self._g._h.entity_docs(np.asarray(entities, dtype=np.int64))

    # ------------------------------------------------------------- adding
    def add_nodes(self, nodes: Iterable[Any]) -> None:
        """Add all the documents of the given nodes, each with score 0.

        ``nodes`` are node ids or :class:`~rowvoi.graph.Node` objects;
        unknown ids are ignored; documents already selected keep their
        score.  Returns None.
        """
        g = self._g
        ents = []
        for v in _items(nodes):
            i = g._node_index(v.id if isinstance(v, Node) else v)
            if i is not None:
                ents.append(i)
        docs = self._entity_docs(ents)
        with self._lock:
            self._extend(docs, np.zeros(len(docs), dtype=np.float32))

    def add_edges(self, edges: Iterable[Any]) -> None:
        """Add all the documents of the given edges, each with score 0.

        ``edges`` are :class:`~rowvoi.graph.Edge` objects, ``(src, dst)``
        pairs (every edge from src to dst, any type) or ``(src, dst, type)``
        triples; unknown ones are ignored; documents already selected keep
        their score.  Returns None.
        """
        g = self._g
        ents = []
        for e in _items(edges):
            for idx in _edge_indexes(g, e):
                ents.append(g.n_nodes + idx)
        docs = self._entity_docs(ents)
        with self._lock:
            self._extend(docs, np.zeros(len(docs), dtype=np.float32))

    def append(self, selection: VectorSelection) -> VectorSelection:
        """A **new** selection: this one's documents, then those of
        ``selection`` not already in it (with their scores).  Both inputs
        are left unchanged.

        Raises
        ------
        ValueError
            The selections belong to different graphs.
        """
        if not isinstance(selection, VectorSelection):
            raise TypeError(f"append takes a VectorSelection, not {type(selection).__name__}")
        if selection._g is not self._g:
            raise ValueError("cannot append a selection of another graph")
        other_docs, other_scores = selection._state()
        docs, scores = self._state()
        out = VectorSelection(self._g, docs.copy(), scores.copy())
        out._extend(other_docs, other_scores)
        return out

    def copy(self) -> VectorSelection:
        """An independent copy of this selection."""
        docs, scores = self._state()
        return VectorSelection(self._g, docs.copy(), scores.copy())

    # ------------------------------------------------------------ reading
    def nodes(self) -> list[Node]:
        """The nodes that hold a selected document, in order of their first
        selected document."""
        return [x for x in self._entities() if isinstance(x, Node)]

    def edges(self) -> list[Edge]:
        """The edges that hold a selected document, in order of their first
        selected document."""
        return [x for x in self._entities() if isinstance(x, Edge)]

    def _entities(self) -> list[Node | Edge]:
        docs, _ = self._state()
        ents = self._g._doc_entity[docs]
        _, first = np.unique(ents, return_index=True)
        return [self._g._entity(int(x)) for x in ents[np.sort(first)].tolist()]

    def get_documents(self) -> list[Document]:
        """The selected documents, in selection order."""
        docs, _ = self._state()
        return [self._g._document(d) for d in docs.tolist()]

    def get_documents_with_scores(self) -> list[tuple[Document, float]]:
        """The selected documents with their scores (float), in selection
        order.  Documents added by hops or by id have score 0."""
        docs, scores = self._state()
        return [(self._g._document(d), float(s)) for d, s in zip(docs.tolist(), scores.tolist())]

    def document_ids(self) -> np.ndarray:
        """The selected documents' numbers (int64), in selection order."""
        docs: np.ndarray = self._state()[0].copy()
        return docs

    # ------------------------------------------------------------ growing
    def expand(self, hops: int, window: Any = None) -> None:
        """Add every document within ``hops`` hops of the selection (score
        0), optionally only inside ``window``.  Returns None.

        Raises
        ------
        ValueError
            ``hops`` is not an int >= 0, or a bad window.
        """
        if isinstance(hops, bool) or not isinstance(hops, numbers.Integral) or hops < 0:
            raise ValueError(f"hops={hops!r}: must be an int >= 0")
        w = _window_array(window)
        with self._lock:
            new = self._g._h.doc_hops(self._docs, min(int(hops), 2**32 - 1), w)
            self._append_new(new, np.zeros(len(new), dtype=np.float32))

    def expand_documents_by_similarity(self, query: Any, limit: int, window: Any = None) -> None:
        """Add the adjacent documents most similar to ``query``, round by
        round (see the module notes), until the selection holds a **total**
        of ``limit`` documents or no candidate is left.  A selection already
        holding ``limit`` or more is left as it is.  Returns None.

        Raises
        ------
        ValueError
            ``limit`` < 0, a query of the wrong dimension, a graph without
            vectors, a bad window.
        TypeError
            A text query on a graph without an embedder.
        """
        limit = _limit(limit)
        q = _query(self._g, query)
        w = _window_array(window)
        with self._lock:
            if limit <= len(self._docs):
                return
            docs, scores = self._g._h.similar(
                self._docs, "documents", q, limit - len(self._docs), w
            )
            self._append_new(docs, scores)

    def _expand_entities(self, kinds: str, query: Any, limit: int, window: Any) -> None:
        limit = _limit(limit)
        q = _query(self._g, query)
        w = _window_array(window)
        with self._lock:
            if not limit:
                return
            docs, scores = self._g._h.similar(self._docs, kinds, q, limit, w)
            self._append_new(docs, scores)

    def expand_entities_by_similarity(self, query: Any, limit: int, window: Any = None) -> None:
        """Add the adjacent entities (nodes and edges) most similar to
        ``query`` -- each with all its documents -- round by round, until
        ``limit`` **new** entities were added or none is left.  Returns
        None.  Errors as :meth:`expand_documents_by_similarity`."""
        self._expand_entities("entities", query, limit, window)

    def expand_nodes_by_similarity(self, query: Any, limit: int, window: Any = None) -> None:
        """As :meth:`expand_entities_by_similarity`, over nodes only:
        ``limit`` is the most **new** nodes added."""
        self._expand_entities("nodes", query, limit, window)

    def expand_edges_by_similarity(self, query: Any, limit: int, window: Any = None) -> None:
        """As :meth:`expand_entities_by_similarity`, over edges only:
        ``limit`` is the most **new** edges added."""
        self._expand_entities("edges", query, limit, window)


def _items(values: Any) -> list[Any]:
    if isinstance(values, (str, bytes, Node, Edge)) or not isinstance(values, Iterable):
        raise TypeError("pass a list of ids (wrap a single id in a list)")
    return list(values)


def _edge_indexes(g: MemoryGraph, e: Any) -> list[int]:
    """Edge indexes named by an Edge, a (src, dst) pair or a triple."""
    if isinstance(e, Edge):
        if 0 <= e.index < g.n_edges and g._edge(e.index) == e:
            return [e.index]
        return []
    if isinstance(e, (str, bytes)) or not isinstance(e, tuple | list) or len(e) not in (2, 3):
        raise TypeError(f"edge {e!r}: use an Edge, a (src, dst) pair or a (src, dst, type) triple")
    src, dst = e[0], e[1]
    typ = e[2] if len(e) == 3 else None
    return [x.index for x in g.edges_of(src, "out", typ) if x.dst == dst]


# --------------------------------------------------------- constructors


def empty_selection(graph: Any) -> VectorSelection:
    """An empty selection over ``graph`` (any graph store)."""
    return VectorSelection(graph)


def _by_similarity(graph: Any, kinds: str, query: Any, limit: int, window: Any) -> VectorSelection:
    g = snapshot(graph_of(graph))
    limit = _limit(limit)
    q = _query(g, query)
    w = _window_array(window)
    if not limit:
        return VectorSelection(g)
    docs, scores = g._h.top_k(kinds, q, limit, w)
    return VectorSelection(g, docs, scores.astype(np.float32))


def documents_by_similarity(
    graph: Any, query: Any, limit: int, window: Any = None
) -> VectorSelection:
    """A selection of the ``limit`` documents most similar to ``query``
    over the whole graph (ties: lower document number), optionally only
    inside ``window``.  Errors as
    :meth:`VectorSelection.expand_documents_by_similarity`.

    Cost: one score per document of the graph (a scan of every vector);
    on a :class:`MemoryGraph` or :class:`CorpusGraph` the engine scans on
    every CPU once the scan reaches 4M vector components (the answer does
    not depend on it), and the GIL is released meanwhile."""
    return _by_similarity(graph, "documents", query, limit, window)


def entities_by_similarity(
    graph: Any, query: Any, limit: int, window: Any = None
) -> VectorSelection:
    """A selection of the ``limit`` entities (nodes and edges) whose best
    document is most similar to ``query``, each with all its documents."""
    return _by_similarity(graph, "entities", query, limit, window)


def nodes_by_similarity(graph: Any, query: Any, limit: int, window: Any = None) -> VectorSelection:
    """As :func:`entities_by_similarity`, over nodes only."""
    return _by_similarity(graph, "nodes", query, limit, window)


def edges_by_similarity(graph: Any, query: Any, limit: int, window: Any = None) -> VectorSelection:
    """As :func:`entities_by_similarity`, over edges only."""
    return _by_similarity(graph, "edges", query, limit, window)
