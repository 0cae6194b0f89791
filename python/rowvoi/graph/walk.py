"""A safe graph walk: :func:`traverse` under a pluggable :class:`WalkPolicy`.

The loop -- *score the frontier, select, commit, expand* -- belongs to
:func:`traverse`, and so does the safety, which no policy can opt out of:

* a **visited set**: a node (by ``policy.node_id``) is committed at most once;
* a **depth cap**: nodes at ``max_depth`` are committed but not expanded;
* a **node budget**: at most ``node_budget`` nodes are committed;
* a **fan-out cap**: at most ``max_fan_out`` items are read from one
  ``policy.expand`` call, so even an endless generator ends.

So cycles, self-loops, dangling edges (neighbours that are not nodes),
huge fan-out and a policy whose ``stop`` never fires all terminate.

Policies see the store verbatim.  Two ship here:

* :func:`collapsed_tree_policy` -- a match on a *summary* surface routes to
  that artifact's best *leaf* surfaces; it needs a :class:`~rowvoi.graph.surfaces.SurfaceStore`
  (a ``search`` callable and a per-artifact ``surfaces`` accessor;
  :class:`~rowvoi.graph.surfaces.MemorySurfaces` is the in-memory one; a corpus's
  :class:`~rowvoi.graph.CorpusGraph` is another, which also routes to the
  leaves of child artifacts through ``PARENT`` links);
* :func:`reverse_dependency_policy` -- from caller-chosen seeds, walk
  reverse edges (dependents of a library) over any
  :class:`~rowvoi.graph.GraphStore`, scoring each node's best document.

Results are search hits (:class:`rowvoi.corpus.SearchHit`; ``WalkHit`` is
the same class), best first, with ``metadata["walk_depth"]`` and
``metadata["seed"]`` (the seed the walk came from).  On a corpus
(a :class:`rowvoi.corpus.Corpus` or a :class:`~rowvoi.graph.CorpusGraph`)
they are ordinary hits of that corpus -- ``source``, ``record_id``,
``surface_index`` and the record's metadata filled in -- so they fuse with
flat search results (:func:`rowvoi.corpus.fuse_hits`).

Examples
--------
>>> from rowvoi.index.embed import HashingEmbedder
>>> from rowvoi.graph import (MemoryGraph, reverse_dependency_policy,
...                           traverse)
>>> g = MemoryGraph.from_edges(
...     [("plotting", "numpy", "REF"), ("stats", "numpy", "REF"),
...      ("report", "stats", "REF"), ("report", "report", "REF")],
...     nodes=[{"id": "plotting", "text": "draw charts and plots"},
...            {"id": "stats", "text": "statistical tests and models"},
...            {"id": "report", "text": "statistical reports with charts"}],
...     embedder=HashingEmbedder(dim=64))
>>> hits = traverse("statistics", g, policy=reverse_dependency_policy(seeds=["numpy"]))
>>> [(h.artifact_id, h.metadata["walk_depth"], h.metadata["seed"]) for h in hits]
[('stats', 1, 'numpy'), ('report', 2, 'numpy'), ('plotting', 1, 'numpy')]
"""

from __future__ import annotations

import itertools
import numbers
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from rowvoi.corpus.base import SearchHit, SearchHits
from rowvoi.graph.corpus import CorpusGraph, graph_of
from rowvoi.graph.store import MemoryGraph, snapshot
from rowvoi.graph.surfaces import Surface

__all__ = [
    "WalkHit",
    "WalkState",
    "WalkPolicy",
    "traverse",
    "collapsed_tree_policy",
    "reverse_dependency_policy",
]


#: A walk's result is an ordinary search hit (one hit type for corpus
#: results): :class:`rowvoi.corpus.SearchHit`, with ``metadata["walk_depth"]``
#: and ``metadata["seed"]``, so walks fuse with searches
#: (:func:`rowvoi.corpus.fuse_hits`).
WalkHit = SearchHit


@dataclass
class WalkState:
    """The walker-owned state of one :func:`traverse` call.

    ``visited`` (committed node ids), ``budget`` and ``max_depth`` are the
    safety the walker enforces; ``results`` are the emitted hits; ``cache``
    is scratch space for the policy (e.g. the query's vector).  A policy may
    read all of it; the walker alone changes ``visited`` and ``results``.
    """

    query: Any
    max_depth: int
    budget: int
    visited: set[Hashable] = field(default_factory=set)
    results: list[WalkHit] = field(default_factory=list)
    cache: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class WalkPolicy(Protocol):
    """The graph semantics of a walk (never its safety).

    ``seed(query, store, state)`` gives the first frontier;
    ``score(node, store, state)`` a float (higher is better);
    ``select(scored, state)`` picks which ``(node, score)`` pairs to commit
    this step (best first); ``expand(node, store, state)`` yields
    neighbours; ``node_id(node)`` is the hashable visited-set key;
    ``stop(state)`` ends the walk early; ``to_hit(node, score, depth, seed,
    store, state)`` makes a :class:`WalkHit`, or None for a router-only
    node (one that routes but is not itself a result).

    Optionally, ``empty_reason(store, state)`` says why a walk found
    nothing, in the policy's terms (e.g. no surfaces of its kinds), or
    returns None; :func:`traverse` puts it in the result's ``reason``,
    else says what the walk did (nodes visited, budget, depth).
    """

    def seed(self, query: Any, store: Any, state: WalkState) -> Iterable[Any]: ...

    def score(self, node: Any, store: Any, state: WalkState) -> float: ...

    def select(
        self, scored: list[tuple[Any, float]], state: WalkState
    ) -> list[tuple[Any, float]]: ...

    def expand(self, node: Any, store: Any, state: WalkState) -> Iterable[Any]: ...

    def node_id(self, node: Any) -> Hashable: ...

    def stop(self, state: WalkState) -> bool: ...

    def to_hit(
        self, node: Any, score: float, depth: int, seed: Hashable, store: Any, state: WalkState
    ) -> WalkHit | None: ...


def _count(value: Any, name: str, lo: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < lo:
        raise ValueError(f"{name}={value!r}: must be an int >= {lo}")
    return int(value)


def traverse(
    query: Any,
    store: Any,
    *,
    policy: WalkPolicy,
    max_depth: int = 2,
    node_budget: int = 64,
    k: int = 10,
    max_fan_out: int = 100_000,
) -> SearchHits:
    """Walk ``store`` from ``query`` under ``policy``; return the top ``k``
    hits, best first (ties keep commit order).

    Each step scores the frontier (distinct, unvisited nodes), lets the
    policy select, commits the selection best first (until the budget),
    emits hits, and gathers the next frontier from the committed nodes
    above ``max_depth``.  See the module notes for the safety.

    Parameters
    ----------
    query : str or vector
        Passed to the policy.
    store : object
        Passed to the policy verbatim -- except a
        :class:`rowvoi.corpus.Corpus`, which is wrapped in a
        :class:`~rowvoi.graph.CorpusGraph` (its links, surfaces and search);
        the hits are then the corpus's own (see the module notes).
    policy : WalkPolicy
    max_depth : int
        Hops from a seed; nodes at this depth are not expanded.
    node_budget : int
        Nodes committed, at most.
    k : int
        Hits returned, at most.
    max_fan_out : int
        Items read from one ``policy.expand`` call, at most.

    Returns
    -------
    SearchHits
        A list of hits; an empty one says why in ``reason``: the policy's
        own account when it has one (``empty_reason``: e.g. the corpus has
        no surfaces of the policy's summary kinds, or no seed is a node of
        the graph), else what the walk did -- no start node, or the nodes
        it visited, none of them a result, and whether the node budget or
        ``max_depth`` stopped it.

    Raises
    ------
    ValueError
        A negative depth, a budget, ``k`` or ``max_fan_out`` below 1.
    """
    max_depth = _count(max_depth, "max_depth", 0)
    node_budget = _count(node_budget, "node_budget", 1)
    k = _count(k, "k", 1)
    max_fan_out = _count(max_fan_out, "max_fan_out", 1)
    store = graph_of(store)
    state = WalkState(query=query, max_depth=max_depth, budget=node_budget)
    frontier: list[tuple[Any, int, Hashable]] = []
    for node in itertools.islice(policy.seed(query, store, state), max_fan_out):
        frontier.append((node, 0, policy.node_id(node)))
    n_seeds = len(frontier)
    depth_cut = False  # a committed node at max_depth was not expanded
    stopped = False
    while frontier and not stopped and len(state.visited) < node_budget:
        # distinct unvisited nodes, first occurrence (and its seed) wins
        info: dict[Hashable, tuple[int, Hashable]] = {}
        pending = []
        for node, depth, seed in frontier:
            nid = policy.node_id(node)
            if nid in state.visited or nid in info:
                continue
            info[nid] = (depth, seed)
            pending.append(node)
        scored = [(node, float(policy.score(node, store, state))) for node in pending]
        chosen = policy.select(scored, state)
        frontier = []
        for node, score in chosen:
            nid = policy.node_id(node)
            if nid in state.visited or nid not in info:
                continue
            if len(state.visited) >= node_budget:
                break
            depth, seed = info[nid]
            state.visited.add(nid)
            hit = policy.to_hit(node, score, depth, seed, store, state)
            if hit is not None:
                state.results.append(hit)
            if policy.stop(state):
                stopped = True
                break
            if depth < max_depth:
                for nxt in itertools.islice(policy.expand(node, store, state), max_fan_out):
                    if policy.node_id(nxt) not in state.visited:
                        frontier.append((nxt, depth + 1, seed))
            else:
                depth_cut = True
    ranked = sorted(range(len(state.results)), key=lambda i: -state.results[i].score)
    hits = [state.results[i] for i in ranked[:k]]
    if hits:
        return SearchHits(hits if not isinstance(store, CorpusGraph) else store.search_hits(hits))
    return SearchHits.empty(_empty_reason(policy, store, state, n_seeds, depth_cut))


def _empty_reason(
    policy: WalkPolicy, store: Any, state: WalkState, n_seeds: int, depth_cut: bool
) -> str:
    """Why a walk found nothing: the policy's ``empty_reason`` when it
    gives one, else what the walk did."""
    own = getattr(policy, "empty_reason", None)
    if callable(own):
        why = own(store, state)
        if why:
            return str(why)
    if not n_seeds:
        return "the policy found no node to start the walk from"
    n = len(state.visited)
    why = f"the walk visited {n} node{'s' if n != 1 else ''}, none of them a result"
    limits = []
    if n >= state.budget:
        limits.append(f"the node budget ({state.budget}) ran out")
    if depth_cut:
        limits.append(f"max_depth={state.max_depth} stopped it before their neighbours")
    return why + (f" ({'; '.join(limits)})" if limits else "")


_Select = Callable[[list[tuple[Any, float]], "WalkState"], list[tuple[Any, float]]]


def _best_first(scored: list[tuple[Any, float]], state: WalkState) -> list[tuple[Any, float]]:
    """Every scored node, best first (ties keep frontier order)."""
    return sorted(scored, key=lambda p: -p[1])


# ------------------------------------------------------------- policies


@dataclass
class _CollapsedTree:
    summary_kinds: tuple[str, ...]
    leaf_kinds: tuple[str, ...]
    seed_k: int
    child_edge_type: str | None = "PARENT"
    select: _Select = _best_first

    def _q(self, store: Any, state: WalkState) -> np.ndarray:
        if "q" not in state.cache:
            state.cache["q"] = store.embed_query(state.query)
        q: np.ndarray = state.cache["q"]
        return q

    def _leaves(self, store: Any, aid: Hashable) -> list[Surface]:
        """The artifact's own leaves, then its children's (artifacts whose
        ``child_edge_type`` links point at it, when the store has links)."""
        own = [s for s in store.surfaces(aid) if s.kind in self.leaf_kinds]
        if self.child_edge_type is None or not hasattr(store, "reverse_neighbors"):
            return own
        for child in store.reverse_neighbors(aid, self.child_edge_type):
            own += [s for s in store.surfaces(child) if s.kind in self.leaf_kinds]
        return own

    def seed(self, query: Any, store: Any, state: WalkState) -> Iterable[Any]:
        found = store.search(query, self.seed_k, self.summary_kinds)
        state.cache["seed_reason"] = getattr(found, "reason", None)
        return [("summary", h) for h in found]

    def empty_reason(self, store: Any, state: WalkState) -> str | None:
        if state.visited:
            if state.max_depth == 0:
                return (
                    "the summaries found route to their leaf surfaces one hop "
                    "away, and max_depth=0 stops before them: use max_depth >= 1"
                )
            return None
        why = state.cache.get("seed_reason")
        kinds = ", ".join(self.summary_kinds)
        return f"no surface of the summary kinds ({kinds}) matched the query" + (
            f": {why}" if why else ""
        )

    def score(self, node: Any, store: Any, state: WalkState) -> float:
        if node[0] == "summary":
            return float(node[1].score)
        v = node[1].vector
        return 0.0 if v is None else float(np.dot(self._q(store, state), v))

    def expand(self, node: Any, store: Any, state: WalkState) -> Iterable[Any]:
        if node[0] != "summary":
            return []
        return [("leaf", s) for s in self._leaves(store, node[1].artifact_id)]

    def node_id(self, node: Any) -> Hashable:
        if node[0] == "summary":
            return ("summary", node[1].artifact_id)
        return ("leaf", node[1].artifact_id, node[1].index)

    def stop(self, state: WalkState) -> bool:
        return False

    def to_hit(
        self, node: Any, score: float, depth: int, seed: Any, store: Any, state: WalkState
    ) -> WalkHit | None:
        # this policy's nodes (and so its seeds) are (kind, surface) tuples
        kind, item = node
        if kind == "summary":
            if self._leaves(store, item.artifact_id):
                return None  # a router: its leaves are the results
            return WalkHit(
                item.artifact_id,
                item.surface_kind,
                score,
                item.text,
                {"walk_depth": depth, "seed": seed[1]},
                surface_index=item.surface_index,
            )
        return WalkHit(
            item.artifact_id,
            item.kind,
            score,
            item.text,
            {"walk_depth": depth, "seed": seed[1]},
            surface_index=item.index,
        )


def collapsed_tree_policy(
    *,
    summary_kinds: Sequence[str] = ("description", "synopsis", "capability", "document"),
    leaf_kinds: Sequence[str] = ("chunk", "readme_chunk"),
    seed_k: int = 10,
    child_edge_type: str | None = "PARENT",
) -> WalkPolicy:
    """Route a summary match to that artifact's best leaf surfaces.

    Seeds on the top ``seed_k`` matches among ``summary_kinds`` surfaces
    (``store.search``) and descends to each routed artifact's
    ``leaf_kinds`` surfaces, scored by cosine to the query.  A summary is a
    router (not a result) only when its artifact has leaves, so a corpus of
    single-surface artifacts returns its summaries instead of nothing.  The
    store is a :class:`~rowvoi.graph.surfaces.SurfaceStore`; use ``max_depth >= 1``.

    On a store with links (a corpus: :class:`~rowvoi.graph.CorpusGraph`),
    an artifact's leaves are its own leaf surfaces and those of its
    children -- the artifacts whose ``child_edge_type`` links (default
    ``"PARENT"``: child -> parent) point at it -- so a summary document
    routes to the best chunks of the documents filed under it.  None:
    own surfaces only.
    """
    if child_edge_type is not None and (
        not isinstance(child_edge_type, str) or not child_edge_type
    ):
        raise TypeError("child_edge_type must be an edge type (str) or None")
    return _CollapsedTree(
        tuple(summary_kinds), tuple(leaf_kinds), _count(seed_k, "seed_k", 1), child_edge_type
    )


@dataclass
class _ReverseDependency:
    seeds: tuple[Hashable, ...]
    edge_type: str | None
    fan_in_weight: float
    proximity_weight: float
    select: _Select = _best_first

    def _graph(self, store: Any, state: WalkState) -> MemoryGraph:
        if "graph" not in state.cache:
            g = snapshot(store)
            state.cache["graph"] = g
            if self.fan_in_weight > 0:  # the prior's scale, only when it counts
                state.cache["max_fan_in"] = (
                    store.max_fan_in(self.edge_type)
                    if hasattr(store, "max_fan_in")
                    else g.max_fan_in(self.edge_type)
                )
            q = state.query
            state.cache["q"] = (
                None
                if g.dim == 0
                else (
                    np.asarray(g.embedder.embed([q]), dtype=np.float32)[0]
                    if isinstance(q, str)
                    else np.asarray(q, dtype=np.float32)
                )
            )
        graph: MemoryGraph = state.cache["graph"]
        return graph

    def seed(self, query: Any, store: Any, state: WalkState) -> Iterable[Any]:
        return list(self.seeds)

    def empty_reason(self, store: Any, state: WalkState) -> str | None:
        if not self.seeds:
            return "the policy has no seeds"
        g = self._graph(store, state)
        if all(g._node_index(s) is None for s in self.seeds):
            shown = ", ".join(map(repr, self.seeds[:8]))
            return f"none of the seeds ({shown}) is a node of the graph"
        via = f"{self.edge_type} links" if self.edge_type else "links"
        return (
            f"the walk visited {len(state.visited)} node"
            f"{'s' if len(state.visited) != 1 else ''} (the seeds and their "
            f"dependents over {via}, up to max_depth={state.max_depth}), none "
            "of them with documents"
        )

    def _best(self, node: Hashable, store: Any, state: WalkState) -> tuple[float, str, int | None]:
        g = self._graph(store, state)
        i = g._node_index(node)
        q = state.cache["q"]
        if i is None or q is None:
            return 0.0, "", None
        docs = g._h.entity_docs(np.array([i], dtype=np.int64))
        if not len(docs):
            return 0.0, "", None
        scores = g._h.score_docs(np.ascontiguousarray(q, dtype=np.float32), docs)
        j = int(np.argmax(scores))
        return float(scores[j]), g._doc_text[int(docs[j])], j

    def score(self, node: Any, store: Any, state: WalkState) -> float:
        return self._best(node, store, state)[0]

    def expand(self, node: Any, store: Any, state: WalkState) -> Iterable[Any]:
        sources: list[Hashable] = store.reverse_neighbors(node, self.edge_type)
        return sources

    def node_id(self, node: Any) -> Hashable:
        nid: Hashable = node
        return nid

    def stop(self, state: WalkState) -> bool:
        return False

    def to_hit(
        self, node: Any, score: float, depth: int, seed: Hashable, store: Any, state: WalkState
    ) -> WalkHit | None:
        if not store.documents(node):
            return None  # no documents (a seed outside the corpus, a dangling target)
        cos, text, idx = self._best(node, store, state)
        fan = store.fan_in(node, self.edge_type)
        top = state.cache.get("max_fan_in", 0)
        total = (
            cos
            + self.fan_in_weight * (fan / top if top else 0.0)
            + self.proximity_weight / (1 + depth)
        )
        meta = {"walk_depth": depth, "fan_in": fan}
        if depth > 0:
            meta["seed"] = seed
        return WalkHit(node, "document", total, text, meta, surface_index=idx)


def reverse_dependency_policy(
    *,
    seeds: Iterable[Hashable],
    edge_type: str | None = "REF",
    fan_in_weight: float = 0.0,
    proximity_weight: float = 0.0,
) -> WalkPolicy:
    """Walk ``edge_type`` edges backwards from caller-chosen ``seeds``.

    Commits each seed that is a node of the store, then its dependents (the
    nodes whose ``edge_type`` edges point at it; any type when None), then
    theirs, up to ``max_depth``.  A node without documents (a seed outside
    the corpus, a dangling edge target) routes without being a result.  Score: the best cosine of the node's documents to the
    query, plus ``fan_in_weight`` times its fan-in over the largest fan-in,
    plus ``proximity_weight / (1 + hops)``.  Hits carry
    ``metadata["walk_depth"]``, ``["fan_in"]`` and, for dependents,
    ``["seed"]``.  The store is any :class:`~rowvoi.graph.GraphStore`
    (scored on its snapshot's document vectors).
    """
    if isinstance(seeds, (str, bytes)):
        raise TypeError("seeds must be a list of node ids (wrap a single id in a list)")
    for name, w in (("fan_in_weight", fan_in_weight), ("proximity_weight", proximity_weight)):
        if not isinstance(w, numbers.Real) or not np.isfinite(w) or w < 0:
            raise ValueError(f"{name}={w!r}: must be finite and >= 0")
    return _ReverseDependency(
        tuple(seeds), edge_type, float(fan_in_weight), float(proximity_weight)
    )
