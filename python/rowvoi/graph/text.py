"""Graph to text for prompts: a neighbourhood as ``SUBJECT --RELATION-->
OBJECT`` lines, with edge budgets, bridge edges and short aliases.

The walk runs in the C engine (``rv_graph_facts``): breadth-first from the
start nodes, over edges in both directions (each line keeps the edge's own
direction).  Every node within ``depth - 1`` hops is expanded; each of its
edges is examined once.  An edge whose type is in ``bridge_edge_types`` is
*traversed but never printed* -- its far node is still reached -- so a node
whose only edges are bridges (a chunk linked to entities by high-volume
``MENTIONED_IN`` edges, say) still yields the facts around the nodes it
bridges to.  Any other edge is printed unless ``max_edges`` lines are
written (the walk stops there) or its subject already has
``max_edges_per_subject`` lines; either way the walk follows it.  So the
budget is filled with printable edges whenever enough exist within
``depth``.  Lines come in walk order: nearer facts first.

Aliases: every node in the text gets a short alias ``N1``, ``N2``, ... --
start nodes first (in the order given), then others by first appearance
(subject before object) -- with a map back to the node ids, so a model can
answer with an alias (``aliases=True`` prints aliases instead of ids).

Examples
--------
>>> from rowvoi.graph import MemoryGraph, graph_to_text
>>> g = MemoryGraph.from_edges([
...     ("chunk-7", "Ada", "MENTIONED_IN"), ("chunk-7", "Babbage", "MENTIONED_IN"),
...     ("Ada", "Babbage", "WORKED_WITH"), ("Ada", "London", "BORN_IN"),
...     ("Babbage", "London", "LIVED_IN")])
>>> out = graph_to_text(g, ["chunk-7"], depth=2, max_edges=2,
...                     bridge_edge_types={"MENTIONED_IN"})
>>> print(out.text)
Ada --WORKED_WITH--> Babbage
Ada --BORN_IN--> London
>>> out.aliases
{'N1': 'chunk-7', 'N2': 'Ada', 'N3': 'Babbage', 'N4': 'London'}
>>> print(graph_to_text(g, ["chunk-7"], depth=2, max_edges=1, aliases=True,
...                     bridge_edge_types={"MENTIONED_IN"}).text)
N2 --WORKED_WITH--> N3
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any

from rowvoi.graph.store import Edge, _window_array, snapshot

__all__ = ["GraphText", "graph_to_text"]


@dataclass
class GraphText:
    """The result of :func:`graph_to_text`.

    Attributes
    ----------
    lines : list of str
        One ``SUBJECT --RELATION--> OBJECT`` line per printed edge.
    edges : list of Edge
        The printed edges, line by line.
    depths : list of int
        Hops from the start nodes to the node whose expansion printed each
        line.
    aliases : dict
        ``"N1"`` -> node id, for every node in the text (start nodes first).
    """

    lines: list[str] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    depths: list[int] = field(default_factory=list)
    aliases: dict[str, Hashable] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """The lines joined by newlines."""
        return "\n".join(self.lines)

    def alias_of(self, node_id: Hashable) -> str:
        """The alias of a node id (KeyError when it is not in the text)."""
        for alias, v in self.aliases.items():
            if v == node_id:
                return alias
        raise KeyError(node_id)

    def resolve(self, alias: str) -> Hashable:
        """The node id behind an alias such as ``"N3"`` (KeyError naming the
        known aliases when unknown)."""
        try:
            return self.aliases[alias.strip()]
        except KeyError:
            raise KeyError(f"unknown alias {alias!r}; known: {', '.join(self.aliases)}") from None

    def legend(self) -> str:
        """One ``N1 = id`` line per alias."""
        return "\n".join(f"{a} = {v}" for a, v in self.aliases.items())


def _count(value: Any, name: str, lo: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < lo:
        raise ValueError(f"{name}={value!r}: must be an int >= {lo}")
    return int(value)


def graph_to_text(
    graph: Any,
    ids: Iterable[Hashable],
    *,
    depth: int = 3,
    max_edges: int = 25,
    max_edges_per_subject: int | None = None,
    bridge_edge_types: Iterable[str] = (),
    aliases: bool = False,
    label: Callable[[Hashable], str] | None = None,
    window: Any = None,
    node_budget: int | None = None,
) -> GraphText:
    """Serialise the neighbourhood of ``ids`` as ``SUBJECT --RELATION-->
    OBJECT`` lines (see the module notes for the walk).

    Parameters
    ----------
    graph : GraphStore
        Any graph store (runs on its snapshot).
    ids : iterable of node ids
        Start nodes (unknown ids are skipped; a single string is one id).
    depth : int
        Nodes within ``depth - 1`` hops are expanded (1: the start nodes'
        own edges).
    max_edges : int
        Lines written, at most (exactly this many when enough printable
        edges lie within reach).
    max_edges_per_subject : int, optional
        Lines with one subject, at most.
    bridge_edge_types : iterable of str
        Edge types followed but never printed.
    aliases : bool
        Print ``N1``-style aliases instead of node ids.
    label : callable, optional
        ``node_id -> str`` for printing (ignored with ``aliases``).
    window : (start, end), optional
        Only nodes and edges inside ``[start, end)`` (or without a time).
    node_budget : int, optional
        Nodes expanded, at most.

    Raises
    ------
    ValueError
        A negative depth or budget, a bad window.
    """
    topo = getattr(graph, "topology", None)  # a CorpusGraph: no documents needed
    g = topo() if callable(topo) else snapshot(graph)
    depth = _count(depth, "depth", 0)
    max_edges = _count(max_edges, "max_edges", 0)
    per = (
        0
        if max_edges_per_subject is None
        else _count(max_edges_per_subject, "max_edges_per_subject", 1)
    )
    budget = 0 if node_budget is None else _count(node_budget, "node_budget", 1)
    if isinstance(bridge_edge_types, str):
        bridge_edge_types = [bridge_edge_types]
    bridges = g._types_array(bridge_edge_types)
    seeds = g._seed_indexes(ids)
    edges, depths = g._h.facts(
        seeds,
        min(depth, 2**32 - 1),
        max_edges,
        per,
        bridges if bridges is not None and len(bridges) else None,
        budget,
        _window_array(window),
    )
    out = GraphText()
    order: dict[Hashable, str] = {}

    def alias(v: Hashable) -> str:
        if v not in order:
            order[v] = f"N{len(order) + 1}"
            out.aliases[order[v]] = v
        return order[v]

    for s in seeds.tolist():
        alias(g._ids[s])
    name = label if label is not None else str
    for e, d in zip(edges.tolist(), depths.tolist()):
        edge = g._edge(e)
        a, b = alias(edge.src), alias(edge.dst)
        subj, obj = (a, b) if aliases else (name(edge.src), name(edge.dst))
        out.lines.append(f"{subj} --{edge.type}--> {obj}")
        out.edges.append(edge)
        out.depths.append(int(d))
    return out
