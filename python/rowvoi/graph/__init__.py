"""Graphs around retrieval: a typed link graph in the C engine, vector
selections (Raphtory's ``VectorSelection``), graph-to-text for prompts and
a safe walker (``traverse``).

* :class:`MemoryGraph` -- the built-in store: CSR adjacency (both
  directions) over typed, directed edges with optional times and texts;
  documents on nodes and edges, with vectors from an embedder.
* :class:`CorpusGraph` -- the link graph inside a corpus (its ``links``,
  written at build time by :mod:`rowvoi.corpus.indexing.edges`), cached per
  generation; its documents are the corpus's records and vectors.
* :class:`GraphStore` -- the protocol other stores implement
  (:class:`rowvoi.graph.kuzu_store.KuzuGraph` for the embedded Kùzu database).
* :class:`VectorSelection` and its constructors -- scored document sets
  grown by hops and by similarity rounds computed in C.
* :func:`graph_to_text` -- ``SUBJECT --RELATION--> OBJECT`` lines with
  edge budgets, bridge edge types and short aliases.
* :func:`traverse` with :class:`WalkPolicy` -- a walk whose safety (visited
  set, depth cap, node budget) belongs to the walker.
* :func:`release_build_memory` -- return the arrays that freed graphs keep
  for the next build.

>>> from rowvoi.graph import MemoryGraph, graph_to_text
>>> g = MemoryGraph.from_edges([("a", "b", "KNOWS"), ("b", "c", "KNOWS")])
>>> print(graph_to_text(g, ["a"], depth=2).text)
a --KNOWS--> b
b --KNOWS--> c
"""

from rowvoi.graph.selection import (
    VectorSelection,
    documents_by_similarity,
    edges_by_similarity,
    empty_selection,
    entities_by_similarity,
    nodes_by_similarity,
)
from rowvoi.graph.corpus import CorpusGraph
from rowvoi.graph.store import (
    Document,
    Edge,
    GraphData,
    GraphStore,
    MemoryGraph,
    Node,
    release_build_memory,
    snapshot,
)
from rowvoi.graph.text import GraphText, graph_to_text
from rowvoi.graph.walk import (
    WalkHit,
    WalkPolicy,
    WalkState,
    collapsed_tree_policy,
    reverse_dependency_policy,
    traverse,
)

__all__ = [
    "MemoryGraph",
    "CorpusGraph",
    "GraphStore",
    "GraphData",
    "Node",
    "Edge",
    "Document",
    "snapshot",
    "release_build_memory",
    "VectorSelection",
    "documents_by_similarity",
    "entities_by_similarity",
    "nodes_by_similarity",
    "edges_by_similarity",
    "empty_selection",
    "GraphText",
    "graph_to_text",
    "traverse",
    "WalkPolicy",
    "WalkState",
    "WalkHit",
    "collapsed_tree_policy",
    "reverse_dependency_policy",
]
