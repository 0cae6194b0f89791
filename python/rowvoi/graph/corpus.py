"""The link graph inside a corpus: :class:`CorpusGraph`.

A built corpus (:mod:`rowvoi.corpus`) stores its edges in ``docs.sqlite``
(:mod:`rowvoi.corpus.indexing.edges` says how they get there). :class:`CorpusGraph`
serves them as a :class:`~rowvoi.graph.GraphStore`:

* **Nodes** are the corpus's artifacts (ids: artifact ids, numbered in
  artifact-id order), plus the *dangling* targets of links -- ids that are
  not artifacts of the corpus, or ``(source, id)`` pairs naming another
  corpus. A dangling node has no documents: traversal never returns it
  (it may still route a walk, e.g. a seed of
  :func:`~rowvoi.graph.reverse_dependency_policy` outside the corpus);
  :meth:`CorpusGraph.is_dangling` tells, :attr:`CorpusGraph.n_dangling`
  counts the links that end at one.
* **Edges** are the links, typed, directed, with their optional time and
  text, in source-artifact order, each source's in extraction order.
* **Documents** (for selections and scoring) are the artifacts' records
  (surfaces), in plan order, with the corpus's own vectors (its dense
  index: nothing is re-embedded), then the edges' texts, embedded with the
  corpus's embedder when first needed.

The hot structure is the C engine's CSR, built from the links of one
committed generation, read in one snapshot -- the same snapshot
consistency as search -- and cached per generation (per store object): a
build's commit makes the next call rebuild it, a reader never sees links
of one generation with artifacts of another. Hop expansion, neighbours and
fan-in are memory walks in C. The vectors are attached on first use
(:meth:`CorpusGraph.snapshot`), not for neighbour queries.

Node times come from a filter field named by ``time_field`` (ints, or
ISO-8601 strings / dates as milliseconds since the epoch).

Thread-safety: a CorpusGraph may be shared by threads; the per-generation
cache is built under a lock, and the graphs it hands out are immutable.

Examples
--------
>>> from rowvoi.corpus import CorpusStore, build, from_mapping
>>> from rowvoi.corpus.indexing.edges import FieldEdges
>>> docs = {"core": {"text": "array maths"},
...         "stats": {"text": "statistical tests", "deps": ["core"]},
...         "plots": {"text": "charts", "deps": ["core", "colour"]}}
>>> corpus = build(from_mapping(docs, embedder="hashing:64"), store=CorpusStore.memory(),
...                edges=FieldEdges({"deps": "REF"}))
>>> g = CorpusGraph(corpus)
>>> g.reverse_neighbors("core"), g.fan_in("core"), g.neighbors("plots")
(['plots', 'stats'], 2, ['core', 'colour'])
>>> g.is_dangling("colour"), g.n_dangling
(True, 1)
"""

from __future__ import annotations

import json
import threading
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rowvoi._time import NO_TIME, to_time
from rowvoi.corpus.base import SearchHit, SearchHits, ledger_key
from rowvoi.corpus.retrieval.corpus import Corpus, as_corpus, search
from rowvoi.graph.store import Edge, GraphData, MemoryGraph, Node
from rowvoi.graph.surfaces import Surface, no_kinds

__all__ = ["CorpusGraph", "graph_of"]


@dataclass
class _Generation:
    """One generation's graph arrays (shared by the two engine graphs)."""

    generation: int
    ids: list[Hashable]
    n_artifacts: int
    src: np.ndarray
    dst: np.ndarray
    etype: np.ndarray
    type_names: list[str]
    node_time: np.ndarray | None
    etime: np.ndarray | None
    edge_text: list[str | None]
    n_dangling: int
    topology: MemoryGraph
    full: MemoryGraph | None = None
    record_ids: np.ndarray | None = None
    max_fan_in: dict[str | None, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _load(snap: Any, time_field: str | None) -> _Generation:
    """Read artifacts and links of the snapshot; build the topology CSR."""
    import pandas as pd  # here, not at import: the CLI loads this module for every command

    con = snap.con
    if time_field is None:
        arts = con.execute(
            "SELECT aid, artifact_id, NULL FROM artifacts ORDER BY artifact_id"
        ).fetchall()
    else:
        path = '$."' + time_field.replace('"', '\\"') + '"'
        arts = con.execute(
            "SELECT aid, artifact_id, json_extract(filter_fields, ?) FROM "
            "artifacts ORDER BY artifact_id",
            (path,),
        ).fetchall()
    ids: list[Hashable] = [a for _, a, _ in arts]
    index = {a: i for i, a in enumerate(ids)}
    n_art = len(ids)
    node_times = None
    if time_field is not None:
        node_times = [
            NO_TIME if t is None else to_time(t, name=f"{a!r} {time_field}") for _, a, t in arts
        ]
    rows = snap.links()
    m = len(rows)
    # one list per column (not zip(*rows): that makes an iterator per row,
    # and the collector then sweeps the rows again and again, 10x slower)
    s_col, typ_col, tsrc_col, tgt_col, text_col, t_col = ([r[i] for r in rows] for i in range(6))
    # ids -> node indexes by pandas' hash index (C), -1 when absent
    by_id = pd.Index(ids[:n_art], dtype=object)
    src = (
        by_id.get_indexer(pd.Index(s_col, dtype=object)).astype(np.int64)
        if m
        else np.zeros(0, dtype=np.int64)
    )
    dst = (
        by_id.get_indexer(pd.Index(tgt_col, dtype=object)).astype(np.int64)
        if m
        else np.zeros(0, dtype=np.int64)
    )
    if m:
        dst[np.fromiter((bool(ts) for ts in tsrc_col), dtype=bool, count=m)] = -1
    if m and src.min() < 0:  # a link whose source left: never committed (defensive)
        keep = np.flatnonzero(src >= 0)
        src, dst = src[keep], dst[keep]
        pick = keep.tolist()
        typ_col, tsrc_col, tgt_col, text_col, t_col = (
            [c[i] for i in pick] for c in (typ_col, tsrc_col, tgt_col, text_col, t_col)
        )
        m = len(pick)
    codes, uniques = pd.factorize(pd.Series(typ_col, dtype=object), sort=False)
    if len(uniques) > 65536:
        raise ValueError("the corpus's links use more than 65536 edge types")
    etype = codes.astype(np.uint16)
    names = [str(u) for u in uniques] or [""]
    n_dangling = 0
    for j in np.flatnonzero(dst < 0).tolist():  # targets that are not artifacts
        key: Hashable = tgt_col[j] if not tsrc_col[j] else (tsrc_col[j], tgt_col[j])
        d = index.get(key)
        if d is None:
            d = index[key] = len(ids)
            ids.append(key)
        dst[j] = d
        n_dangling += 1
    has_time = any(t is not None for t in t_col)
    etime = (
        np.fromiter((NO_TIME if t is None else t for t in t_col), dtype=np.int64, count=m)
        if has_time
        else None
    )
    texts = list(text_col)
    n = len(ids)
    ntime = None
    if node_times is not None:
        ntime = np.full(n, NO_TIME, dtype=np.int64)
        ntime[:n_art] = [NO_TIME if t is None else t for t in node_times]
    topo = MemoryGraph.from_arrays(
        src, dst, node_ids=ids, edge_type=etype, type_names=names, node_time=ntime, edge_time=etime
    )
    return _Generation(
        snap.generation, ids, n_art, src, dst, etype, names, ntime, etime, texts, n_dangling, topo
    )


class CorpusGraph:
    """A :class:`~rowvoi.graph.GraphStore` over a corpus's links (see the
    module notes).

    Parameters
    ----------
    corpus : Corpus, CorpusStore or str
        A built corpus, its store, or a corpus name.
    time_field : str, optional
        The filter field holding each artifact's time (node times, for
        windows).
    search_mode : {"dense", "lexical", "hybrid"}
        How :meth:`search` (the seeds of :func:`~rowvoi.graph.traverse`'s
        collapsed-tree policy) searches the corpus; default ``"dense"``,
        on the scale of the cosines leaves are scored with.

    Attributes
    ----------
    corpus : Corpus
    source : str or None
        The corpus name (hits carry it).

    Raises
    ------
    CorpusNotFound
        No such corpus.
    """

    def __init__(
        self, corpus: Any, *, time_field: str | None = None, search_mode: str = "dense"
    ) -> None:
        if time_field is not None and (not isinstance(time_field, str) or not time_field):
            raise TypeError("time_field must be a filter field name (a non-empty str)")
        if search_mode not in ("dense", "lexical", "hybrid"):
            raise ValueError(f"search_mode={search_mode!r}: use 'dense', 'lexical' or 'hybrid'")
        self.corpus = as_corpus(corpus)
        self.source = self.corpus.name
        self.time_field = time_field
        self.search_mode = search_mode
        self._lock = threading.Lock()
        self._kinds_cache: tuple[int, frozenset[str]] | None = None

    def __repr__(self) -> str:
        return f"CorpusGraph({self.corpus!r})"

    # ------------------------------------------------------------ caching
    def _cache(self) -> dict[str | None, _Generation]:
        store: Any = self.corpus.store  # the cache rides on the store (one per directory)
        cache: dict[str | None, _Generation] | None = getattr(store, "_graph_cache", None)
        if cache is None:
            with self._lock:
                cache = getattr(store, "_graph_cache", None)
                if cache is None:
                    cache = store._graph_cache = {}
        return cache

    def _current(self, snap: Any | None = None) -> _Generation:
        """The cached graph of the committed generation (built when the
        generation is new), read in one snapshot."""
        if snap is None:
            with self.corpus.store.snapshot() as s:
                return self._current(s)
        cache = self._cache()
        key = self.time_field
        gen = cache.get(key)
        if gen is not None and gen.generation == snap.generation:
            return gen
        with self._lock:
            gen = cache.get(key)
            if gen is None or gen.generation != snap.generation:
                gen = _load(snap, self.time_field)
                # one generation per key: an older one is dropped
                cache[key] = gen
            return gen

    @property
    def generation(self) -> int:
        """The committed generation the graph belongs to."""
        return self._current().generation

    def topology(self) -> MemoryGraph:
        """The CSR of the committed generation without documents: what
        neighbours, walks and :func:`~rowvoi.graph.graph_to_text` need.
        Cached per generation."""
        return self._current().topology

    def snapshot(self, *, embedder: Any = None) -> MemoryGraph:
        """The graph of the committed generation with documents and
        vectors: each artifact's records (plan order; vectors from the
        corpus's dense index, used as stored) and each edge's text
        (embedded with the corpus's embedder). What
        :class:`~rowvoi.graph.VectorSelection` and policies run on; its
        ``embedder`` embeds text queries. Cached per generation.

        Raises
        ------
        EmbedderUnavailable, EmbedderMismatch
            The corpus's embedder cannot be recreated here (pass the
            corpus opened with it).
        """

        def full(snap: Any) -> MemoryGraph:
            gen = self._current(snap)
            if gen.full is not None and embedder is None:
                return gen.full
            return self._full(snap, gen, embedder)

        return self.corpus._generations.retried(
            full, f"{self.corpus.label} kept changing while its graph was loaded"
        )

    def _full(self, snap: Any, gen: _Generation, embedder: Any) -> MemoryGraph:
        with gen.lock:
            if gen.full is not None and embedder is None:
                return gen.full
            emb = embedder if embedder is not None else self.corpus._query_embedder(snap.state)
            rows = snap.con.execute(
                "SELECT r.id, r.text FROM records r JOIN artifacts a ON a.aid = r.aid "
                "ORDER BY a.artifact_id, r.surface_index"
            ).fetchall()
            arts = snap.con.execute(
                "SELECT a.artifact_id, count(r.id) FROM artifacts a JOIN records r ON "
                "r.aid = a.aid GROUP BY a.aid ORDER BY a.artifact_id"
            ).fetchall()
            index = gen.topology._index
            counts = np.array([c for _, c in arts], dtype=np.int64)
            node_of = np.array([index[a] for a, _ in arts], dtype=np.int64)
            rec_ids = np.array([r[0] for r in rows], dtype=np.int64)
            doc_entity = np.repeat(node_of, counts)
            texts = [r[1] for r in rows]
            loaded = self.corpus._generations.open(snap, lexical=False, dense=True)
            dim = int(snap.state.get("dim") or 0)
            vecs = (
                loaded.dense.get(rec_ids)
                if loaded.dense is not None and len(rec_ids)
                else np.zeros((0, max(dim, 1)), dtype=np.float32)
            )
            n = len(gen.ids)
            e_docs = [(e, t) for e, t in enumerate(gen.edge_text) if t]
            if e_docs:
                doc_entity = np.concatenate(
                    [doc_entity, np.array([n + e for e, _ in e_docs], dtype=np.int64)]
                )
                texts += [t for _, t in e_docs]
                evecs = np.asarray(emb.embed([t for _, t in e_docs]), dtype=np.float32)
                vecs = np.vstack(
                    [np.asarray(vecs, dtype=np.float32).reshape(-1, evecs.shape[1]), evecs]
                )
            g = MemoryGraph.from_arrays(
                gen.src,
                gen.dst,
                node_ids=gen.ids,
                edge_type=gen.etype,
                type_names=gen.type_names,
                node_time=gen.node_time,
                edge_time=gen.etime,
                doc_entity=doc_entity,
                doc_text=texts,
                embedder=emb,
                vectors=vecs if len(texts) else None,
            )
            if embedder is None:
                gen.full = g
                gen.record_ids = rec_ids
            return g

    def record_ids(self, documents: Iterable[Any]) -> list[int | None]:
        """The corpus record id of each document of :meth:`snapshot`'s
        graph (a :class:`~rowvoi.graph.Document` or its number; None for
        an edge's document).

        Raises
        ------
        ValueError
            A document of another generation's graph (take a new
            selection).
        """
        g = self.snapshot()
        gen = self._current()
        if gen.full is not g or gen.record_ids is None:
            raise ValueError("these documents belong to another generation of the corpus")
        out: list[int | None] = []
        for d in documents:
            i = int(getattr(d, "id", d))
            out.append(int(gen.record_ids[i]) if 0 <= i < len(gen.record_ids) else None)
        return out

    # ------------------------------------------------------------ queries
    def __getitem__(self, node_id: Hashable) -> Node:
        """The :class:`Node` of an artifact (or dangling target) with its
        time; KeyError when the graph has no such node."""
        return self.topology()[node_id]

    def __contains__(self, node_id: object) -> bool:
        return node_id in self.topology()

    def __len__(self) -> int:
        return self.topology().n_nodes

    @property
    def n_nodes(self) -> int:
        """Artifacts plus dangling targets."""
        return self.topology().n_nodes

    @property
    def n_edges(self) -> int:
        """Links (dangling ones included)."""
        return self.topology().n_edges

    @property
    def n_dangling(self) -> int:
        """Links whose target is not an artifact of the corpus."""
        return self._current().n_dangling

    def is_dangling(self, node_id: Hashable) -> bool:
        """Is ``node_id`` a link target that is not an artifact here?"""
        gen = self._current()
        i = gen.topology._node_index(node_id)
        return i is not None and i >= gen.n_artifacts

    def dangling(self) -> list[Hashable]:
        """The dangling targets, in order of first appearance."""
        gen = self._current()
        return list(gen.ids[gen.n_artifacts :])

    def node_ids(self) -> list[Hashable]:
        """Every node id: artifacts (by id), then dangling targets."""
        return self.topology().node_ids()

    def neighbors(self, node_id: Hashable, edge_type: str | None = None) -> list[Hashable]:
        """Targets of the artifact's links (of ``edge_type``, or any),
        de-duplicated, first seen first; ``[]`` for an unknown id."""
        return self.topology().neighbors(node_id, edge_type)

    def reverse_neighbors(self, node_id: Hashable, edge_type: str | None = None) -> list[Hashable]:
        """Artifacts whose links point at ``node_id`` (of ``edge_type``, or
        any), de-duplicated, first seen first."""
        return self.topology().reverse_neighbors(node_id, edge_type)

    def fan_in(self, node_id: Hashable, edge_type: str | None = None) -> int:
        """How many distinct artifacts link to ``node_id``."""
        return self.topology().fan_in(node_id, edge_type)

    def max_fan_in(self, edge_type: str | None = None) -> int:
        """The largest :meth:`fan_in` in the graph (computed once per
        generation and type)."""
        gen = self._current()
        if edge_type not in gen.max_fan_in:
            gen.max_fan_in[edge_type] = gen.topology.max_fan_in(edge_type)
        return gen.max_fan_in[edge_type]

    def edge_types(self, node_id: Hashable | None = None) -> list[str]:
        """Types on a node's out-links, or every type in the corpus."""
        return self.topology().edge_types(node_id) if self.n_edges else []

    def edges_of(
        self,
        node_id: Hashable,
        direction: str = "out",
        edge_type: str | None = None,
        window: Any = None,
    ) -> list[Edge]:
        """A node's :class:`Edge` objects (see
        :meth:`MemoryGraph.edges_of`)."""
        return self.topology().edges_of(node_id, direction, edge_type, window)

    def edge_text(self, index: int) -> str | None:
        """The text of link number ``index`` (None when it has none)."""
        gen = self._current()
        if not 0 <= int(index) < len(gen.edge_text):
            raise IndexError(f"edge index {index!r}: the graph has {len(gen.edge_text)} edges")
        return gen.edge_text[int(index)]

    def bfs(self, seeds: Iterable[Hashable], **kwargs: Any) -> list[tuple[Hashable, int]]:
        """Breadth-first hop expansion in C (see :meth:`MemoryGraph.bfs`)."""
        return self.topology().bfs(seeds, **kwargs)

    def documents(self, node_id: Hashable) -> list[str]:
        """The artifact's record texts in plan order (``[]`` for a
        dangling target or an unknown id)."""
        if not isinstance(node_id, (str, int)) or isinstance(node_id, bool):
            return []
        with self.corpus.store.snapshot() as snap:
            entry = snap.artifact(ledger_key(node_id))
            if entry is None:
                return []
            return [r[4] for r in snap.artifact_records(entry["aid"])]

    def export(self) -> GraphData:
        """The whole graph, documents included (:meth:`snapshot`'s)."""
        return self.snapshot().export()

    # ------------------------------------------------- surfaces (policies)
    def embed_query(self, query: Any) -> np.ndarray:
        """The query as a unit vector: text through the corpus's embedder
        (:meth:`~rowvoi.corpus.embedders.CorpusEmbedder.embed_query`: a
        query the corpus was just searched with is not embedded again)."""
        if isinstance(query, str):
            v = self.corpus.embedder.embed_query(query)
        else:
            v = np.asarray(query, dtype=np.float32)
        n = float(np.linalg.norm(v))
        unit: np.ndarray = v / n if n > 0 else v
        return unit

    def search(self, query: Any, k: int, kinds: Iterable[str] | None = None) -> SearchHits:
        """The corpus's best ``k`` surfaces of ``kinds`` (best per
        artifact), as :class:`~rowvoi.corpus.SearchHit` objects, searched
        in :attr:`search_mode`. Kinds the corpus lacks match nothing (an
        empty :class:`~rowvoi.corpus.SearchHits` says so in its
        ``reason``)."""
        kinds = None if kinds is None else list(kinds)
        if kinds is not None:
            with self.corpus.store.snapshot() as snap:
                present = self._kinds(snap)
            asked, kinds = kinds, [k_ for k_ in kinds if k_ in present]
            if not kinds:
                return SearchHits.empty(no_kinds(asked, present))
        if isinstance(query, str):
            return search(self.corpus, query, k=k, mode=self.search_mode, surfaces=kinds)
        return search(self.corpus, "", k=k, mode="dense", surfaces=kinds, query_vector=query)

    def _kinds(self, snap: Any) -> frozenset[str]:
        """The surface kinds of the snapshot's generation (counted once per
        generation: a scan of every record)."""
        cached = self._kinds_cache
        if cached is None or cached[0] != snap.generation:
            cached = (snap.generation, frozenset(snap.kinds()))
            self._kinds_cache = cached  # one assignment: safe across threads
        return cached[1]

    def surfaces(self, artifact_id: Hashable) -> list[Surface]:
        """An artifact's surfaces in plan order, with their stored vectors
        (:class:`rowvoi.graph.surfaces.Surface`; ``[]`` when unknown)."""
        if not isinstance(artifact_id, (str, int)) or isinstance(artifact_id, bool):
            return []
        gens = self.corpus._generations

        def read(snap: Any) -> list[Surface]:
            entry = snap.artifact(ledger_key(artifact_id))
            if entry is None:
                return []
            rows = snap.artifact_records(entry["aid"])
            loaded = gens.open(snap, lexical=False, dense=True)
            vecs = (
                loaded.dense.get([r[0] for r in rows])
                if rows and loaded.dense is not None
                else [None] * len(rows)
            )
            return [Surface(artifact_id, r[2], r[4], r[1], v) for r, v in zip(rows, vecs)]

        return gens.retried(read, f"{self.corpus.label} kept changing")

    def search_hits(self, hits: Iterable[Any]) -> list[SearchHit]:
        """Walk results as ordinary :class:`~rowvoi.corpus.SearchHit`
        objects of this corpus: ``source``, ``record_id`` and the record's
        metadata (its surface metadata and the artifact's filter fields)
        and surface kind filled in (by ``artifact_id`` and
        ``surface_index``); ``walk_depth`` and ``seed`` kept in
        ``metadata``."""
        hits = list(hits)
        out = []
        with self.corpus.store.snapshot() as snap:
            for h in hits:
                entry = (
                    snap.artifact(ledger_key(h.artifact_id))
                    if isinstance(h.artifact_id, (str, int))
                    else None
                )
                rid, meta, kind = h.record_id, {}, h.surface_kind
                if entry is not None and h.surface_index is not None:
                    row = snap.con.execute(
                        "SELECT id, metadata, kind FROM records WHERE aid = ? AND "
                        "surface_index = ?",
                        (entry["aid"], int(h.surface_index)),
                    ).fetchone()
                    if row is not None:
                        rid, kind = int(row[0]), row[2]
                        meta = json.loads(row[1])
                    meta.update(entry["filter_fields"])
                meta.update(h.metadata)
                out.append(
                    SearchHit(
                        h.artifact_id,
                        kind,
                        float(h.score),
                        h.text,
                        meta,
                        source=self.source,
                        surface_index=h.surface_index,
                        record_id=rid,
                        explain=h.explain,
                    )
                )
        return out


def graph_of(store: Any) -> Any:
    """The store a graph walk or selection runs on: a
    :class:`CorpusGraph` for a :class:`rowvoi.corpus.Corpus` (its link
    graph, surfaces and search), any other store as it is.

    >>> from rowvoi.graph import MemoryGraph
    >>> g = MemoryGraph.from_edges([("a", "b")])
    >>> graph_of(g) is g
    True
    """
    return CorpusGraph(store) if isinstance(store, Corpus) else store
