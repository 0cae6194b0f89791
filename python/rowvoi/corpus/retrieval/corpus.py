"""The corpus handle, and a search: open the generation once, then rank.

:class:`Corpus` is a built corpus opened for reading: its store, the
embedder queries are embedded with (the one it was built with, pinned by
id and recreated at the first dense query), and the generation searches
read (:class:`~rowvoi.corpus.storage.generation.Generations`).

:func:`search` goes one way. It checks its arguments
(:func:`rowvoi.corpus.retrieval.rank.params`), then opens the committed
generation once, in one call into storage
(:meth:`~rowvoi.corpus.storage.generation.Generations.read`: from memory
while the generation opened last is still the committed one, no SQL; else
through one snapshot, which loads what the generation lacks -- indexes with
tombstones and delta applied, the record table, the filter schema -- and
runs the filter's SQL; a snapshot whose base files a newer commit replaced
is retried there), embeds the query, and then only ranks what was opened
(:func:`rowvoi.corpus.retrieval.rank.rank`: what the modes, fusions,
filters and the per-artifact collapse do is told there).
:func:`records_for_artifact` is the sibling lookup beneath expansion.

Examples
--------
>>> from rowvoi.corpus import CorpusStore, build, from_mapping
>>> docs = {"a": "Lift and drag of a thin wing", "b": "Heat transfer in pipes",
...         "c": "Wing flutter at high speed"}
>>> corpus = build(from_mapping(docs, embedder="hashing"), store=CorpusStore.memory())
>>> [h.artifact_id for h in search(corpus, "wing lift", mode="lexical", k=2)]
['a', 'c']
"""

from __future__ import annotations

import json
import os
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

import numpy as np

from rowvoi._validate import integer
from rowvoi.corpus.base import (
    CorpusEmpty,
    EmbedderMismatch,
    EmbedderUnavailable,
    NoLedgerEntry,
    Record,
    SearchHits,
    ledger_key,
)
from rowvoi.corpus.embedders import CorpusEmbedder, embedder_for_id, make_embedder
from rowvoi.corpus.retrieval.rank import (
    DFLT_BLEND_ALPHA,
    DFLT_BM25_SAT_K,
    DFLT_RRF_K,
    FETCH_GROWTH,
    MAX_FETCH_K,
    fast_dense,
    params,
    query_vector as unit_query_vector,
    rank,
)
from rowvoi.corpus.retrieval.rerank import (
    DFLT_RERANK_MAX_CHARS,
    _check_text_choice,
    queries_of,
    refine,
    resolve_reranker,
)
from rowvoi.corpus.storage.damage import check_files
from rowvoi.corpus.storage.generation import Generations, Wanted, empty_message
from rowvoi.corpus.storage.layout import DB
from rowvoi.corpus.storage.paths import corpus_dir
from rowvoi.corpus.storage.store import (
    CorpusStore,
    rebuild_advice,
    repair_command,
)

__all__ = [
    "Corpus",
    "open_corpus",
    "as_corpus",
    "kept_corpus",
    "search",
    "records_for_artifact",
    "KEPT_CORPORA",
]

#: Corpora named in searches that a process keeps open (see
#: :func:`kept_corpus`), the least recently named closed first.
KEPT_CORPORA = 4
# {corpus folder: (identity of the folder and its docs.sqlite, the corpus)},
# the most recently named last
_kept: OrderedDict[str, tuple[tuple[int, ...], Corpus]] = OrderedDict()
_kept_lock = threading.Lock()


class Corpus:
    """A built, queryable corpus: a store plus its (lazily loaded) embedder.

    Parameters
    ----------
    name : str or None
        The corpus name (``None`` for an anonymous corpus).
    store : CorpusStore
    embedder : spec, optional
        The embedder to query with; it must be the one the corpus was built
        with (:class:`EmbedderMismatch` otherwise). Default: recreated from
        the corpus's pinned embedder id at the first dense query.

    Attributes
    ----------
    last_build : BuildReport or None
        Set by :func:`rowvoi.corpus.build`.
    source_roots : tuple of str or None
        Set by :func:`rowvoi.corpus.build` from the source the caller
        built with: the folder of a :func:`~rowvoi.corpus.from_files`
        source, ``()`` for another source. The disclosure's allowed roots
        (:func:`~rowvoi.corpus.retrieval.disclosure.allowed_roots`); None (a corpus
        opened by name) defers to the registry.

    Notes
    -----
    Thread-safety: a corpus may be searched from any number of threads at
    once, also while another process builds it: each search reads one
    committed generation (indexes and rows from one snapshot); the indexes
    and the record table (:class:`~rowvoi.corpus.storage.records.RecordTable`) of a
    new generation are loaded once, by the first search that sees it. A
    search without a filter whose generation is still the committed one
    (:meth:`CorpusStore.committed_generation`: one read of SQLite's
    WAL-index header) answers from them without any SQL.

    Examples
    --------
    >>> from rowvoi.corpus import build, from_mapping
    >>> corpus = build(from_mapping({"a": "lift of a wing"}, embedder="hashing:16"),
    ...                store=CorpusStore.memory())
    >>> [h.artifact_id for h in corpus.search("wing", mode="lexical")]
    ['a']
    >>> corpus.embedder_id
    'hash-v1:dim=16,words=1-2,chars=3-5,cw=1,seed=0'
    """

    def __init__(self, name: str | None, store: CorpusStore, embedder: Any = None) -> None:
        if not isinstance(store, CorpusStore):
            raise TypeError(f"store must be a CorpusStore, not {type(store).__name__}")
        self.name = name
        self.store = store
        self._explicit = embedder is not None
        self._embedder: CorpusEmbedder | None = (
            None if embedder is None else make_embedder(embedder, persistent=not store.temporary)
        )
        self._lock = threading.Lock()  # (recreating the embedder)
        #: The generation searches read, opened once (per generation).
        self._generations = Generations(store)
        self.last_build: Any = None
        self.source_roots: tuple[str, ...] | None = None

    def __repr__(self) -> str:
        return f"Corpus({self.name!r}, {str(self.store.path)!r})"

    @property
    def label(self) -> str:
        """``corpus 'NAME'`` (or the path of an anonymous one), for messages."""
        return f"corpus {self.name!r}" if self.name else f"the corpus at {self.store.path}"

    @property
    def embedder_id(self) -> str | None:
        """The embedder id the corpus was built with (``None`` before a build)."""
        with self.store.snapshot() as snap:
            return snap.state.get("embedder_id")

    @property
    def embedder(self) -> CorpusEmbedder:
        """The embedder queries use (recreated from the pinned id on first
        use). Raises :class:`EmbedderUnavailable` when it cannot be."""
        with self.store.snapshot() as snap:
            return self._query_embedder(snap.state)

    def _query_embedder(self, state: Mapping[str, Any]) -> CorpusEmbedder:
        eid = state.get("embedder_id")
        if eid is None:
            raise CorpusEmpty(self._empty_message())
        emb = self._embedder
        if emb is not None and emb.embedder_id == eid:
            return emb
        if emb is not None and self._explicit:
            fix = f"rowvoi build {self.name} --embedder SPEC" if self.name else "rebuild it"
            raise EmbedderMismatch(
                f"{self.label} was built with embedder {eid!r}, not {emb.embedder_id!r}: "
                f"query it with the embedder it was built with, or rebuild it with this one "
                f"({fix})"
            )
        with self._lock:
            if self._embedder is None or self._embedder.embedder_id != eid:
                made = embedder_for_id(eid, corpus=self.name)
                if made is None:
                    who = repr(self.name) if self.name else "..."
                    raise EmbedderUnavailable(
                        f"{self.label} was built with the callable embedder {eid!r}, which "
                        f"cannot be recreated from its id; pass it again: "
                        f"open_corpus({who}, embedder=(function, {eid!r}))"
                    )
                self._embedder = made
            return self._embedder

    def _empty_message(self) -> str:
        return empty_message(self.name, self.label)

    # --------------------------------------------------------------- API
    def search(self, query: str, **kwargs: Any) -> SearchHits:
        """:func:`search` on this corpus."""
        return search(self, query, **kwargs)

    def records_for_artifact(
        self, artifact_id: str, *, surface_kind: str | None = None
    ) -> list[Record]:
        """:func:`records_for_artifact` on this corpus."""
        return records_for_artifact(self, artifact_id, surface_kind=surface_kind)

    def info(self, *, check: bool = False) -> dict[str, Any]:
        """What the corpus holds: name, path, generation, counts, surface
        kinds, links (``n_links``) and the edge extractor (``edges``),
        filter fields and types, embedder, strategy, analyzer, files and
        bytes on disk, and ``damage``: the damaged files found
        (:func:`rowvoi.corpus.check`; a list of ``{"file", "problem",
        "repairable"}``) with ``repair``, the command that repairs them
        (``None`` when nothing was found). Loads no index and no model:
        damage is judged by looking at the files, unless ``check`` (then
        every index file is loaded and verified, and ``docs.sqlite``
        checked).

        >>> from rowvoi.corpus import CorpusStore, build, from_mapping
        >>> c = build(from_mapping({"a": "x y"}, embedder="hashing:16"),
        ...           store=CorpusStore.memory())
        >>> info = c.info()
        >>> info["n_artifacts"], info["n_records"], info["kinds"], info["embedder"]["dim"]
        (1, 1, {'document': 1}, 16)
        >>> info["damage"], c.info(check=True)["damage"]
        ([], [])
        """
        with self.store.snapshot() as snap:
            s = snap.state
            counts = snap.counts()
            damage = check_files(self.store, snap, deep=check)
            out = {
                "name": self.name,
                "path": str(self.store.path),
                "generation": snap.generation,
                **counts,
                "kinds": snap.kinds(),
                "n_links": snap.n_links(),
                "edges": s.get("edges"),
                "fields": {n: t for n, t, _ in snap.fields()},
                "embedder": {
                    "id": s.get("embedder_id"),
                    "dim": s.get("dim"),
                    "spec": s.get("embedder_spec"),
                },
                "strategy": {"id": s.get("strategy_id"), "spec": s.get("strategy_spec")},
                "lexical": s.get("lexical"),
                "source": s.get("source"),
                "base_generation": snap.base.get("generation"),
                "created": s.get("created"),
                "updated": s.get("updated"),
                "damage": [d.to_dict() for d in damage],
                "repair": None
                if not damage
                else repair_command(self.store)
                if all(d.repairable for d in damage)
                else rebuild_advice(self.store),
            }
        files = self.store.files()
        sizes = {p.name: p.stat().st_size for p in files if p.exists()}
        out["files"] = sizes
        out["bytes"] = sum(sizes.values())
        return out


def open_corpus(
    name: str | None = None, *, embedder: Any = None, store: CorpusStore | None = None
) -> Corpus:
    """Open a built corpus by name (or its store), without loading anything.

    The embedding model is loaded at the first dense or hybrid query (so
    ``info``, lexical search and sibling lookups never load it), and it is
    the embedder the corpus was built with: pinned by id, recreated
    strictly. The MiniLM model is loaded once per process and shared by
    every corpus that uses it, and recent queries' vectors are remembered
    (see :mod:`rowvoi.corpus.embedders`): opening a corpus by name for
    each search costs no model load.

    Parameters
    ----------
    name : str, optional
        The corpus name (see :mod:`rowvoi.corpus.storage.paths`).
    embedder : spec, optional
        Query with this embedder instead of recreating the pinned one (a
        callable's corpus needs it); its id must match.
    store : CorpusStore, optional
        Open this store instead of the named one.

    Raises
    ------
    CorpusNotFound
        No such corpus (nothing is created).
    EmbedderMismatch
        ``embedder`` is not the corpus's.
    rowvoi.errors.IndexFormatError
        The directory holds another format version.

    Examples
    --------
    >>> import os, tempfile
    >>> os.environ["ROWVOI_HOME"] = tempfile.mkdtemp()
    >>> open_corpus("nothing-here")
    Traceback (most recent call last):
    ...
    rowvoi.corpus.base.CorpusNotFound: no corpus 'nothing-here' (looked in ...); build it first: rowvoi build nothing-here --files DIR
    >>> os.path.exists(os.path.join(os.environ["ROWVOI_HOME"], "corpora", "nothing-here"))
    False
    >>> del os.environ["ROWVOI_HOME"]
    """
    if store is None:
        if name is None:
            raise TypeError("open_corpus needs a name or a store")
        store = CorpusStore.local(name)
    elif name is None:
        name = store.name
    store.require()
    corpus = Corpus(name, store, embedder=embedder)
    with store.snapshot() as snap:
        eid = snap.state.get("embedder_id")
        if embedder is not None and eid is not None:
            corpus._query_embedder(snap.state)
    return corpus


def _identity(folder: Any) -> tuple[int, ...] | None:
    """The corpus folder's and its database's (device, inode); None when
    either is missing."""
    try:
        a = os.stat(folder)
        b = os.stat(os.path.join(folder, DB))
    except OSError:
        return None
    return (a.st_dev, a.st_ino, b.st_dev, b.st_ino)


# corpora a forked child inherited from its parent's _kept: never used nor
# closed (their SQLite connections are the parent's), only kept referenced
_inherited: list[Any] = []


def _after_fork_in_child() -> None:
    """In a forked child: set the parent's kept corpora aside (a child must
    not use, nor close, its parent's SQLite connections) and take a new
    lock; the child opens the corpora it names itself."""
    global _kept, _kept_lock
    _inherited.append(_kept)
    _kept = OrderedDict()
    _kept_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def kept_corpus(name: str) -> Corpus:
    """The corpus ``name`` as the searches that name it use it: opened once
    and kept open by the process, so that a search, ``discover`` or a tool
    call naming a corpus finds its indexes in memory instead of loading
    them again (at 100,000 documents a load takes about 0.7 s).

    The :data:`KEPT_CORPORA` most recently named corpora stay open (each
    holds its indexes while it is searched, as an opened corpus does); a
    corpus whose folder or ``docs.sqlite`` was deleted or replaced since is
    opened afresh, and a new build of it is found as by any opened corpus
    (the next search reads the newly committed generation). Each call
    costs two ``stat`` calls. To control a corpus's lifetime yourself,
    hold the :func:`open_corpus` of it instead. A forked child does not
    use its parent's kept corpora: it opens its own.

    Thread-safe: threads naming one corpus share one :class:`Corpus`.

    Raises
    ------
    ValueError
        A name that is not a valid corpus name.
    CorpusNotFound
        No such corpus.
    rowvoi.errors.IndexFormatError
        The directory holds another format version.
    """
    folder = str(corpus_dir(name))
    ident = _identity(folder)
    if ident is not None:
        with _kept_lock:
            held = _kept.get(folder)
            if held is not None and held[0] == ident:
                _kept.move_to_end(folder)
                return held[1]
    corpus = open_corpus(name)
    if ident is not None:
        with _kept_lock:
            held = _kept.get(folder)
            if held is not None and held[0] == ident:
                return held[1]  # another thread opened it meanwhile
            _kept[folder] = (ident, corpus)
            _kept.move_to_end(folder)
            while len(_kept) > KEPT_CORPORA:
                _kept.popitem(last=False)
    return corpus


def as_corpus(corpus: Any) -> Corpus:
    """``corpus`` as an open :class:`Corpus`: itself, the named corpus, or
    the corpus of a store.

    Raises
    ------
    TypeError
        Anything else.
    CorpusNotFound
        No such corpus.
    """
    if isinstance(corpus, Corpus):
        return corpus
    if isinstance(corpus, str):
        return open_corpus(corpus)
    if isinstance(corpus, CorpusStore):
        return open_corpus(store=corpus)
    raise TypeError(
        f"corpus must be a Corpus, a corpus name or a CorpusStore, not {type(corpus).__name__}"
    )


class SearchesItself(Protocol):
    """A corpus of another kind that :func:`search` hands its arguments to
    (a :class:`rowvoi.dask.ShardedCorpus`): its class's
    ``__rowvoi_search__(corpus, query, **keywords)`` returns the hits."""

    def __rowvoi_search__(self, query: str, **kw: Any) -> SearchHits: ...


def search(
    corpus: Corpus | str | SearchesItself,
    query: str,
    *,
    k: int = 10,
    mode: str = "dense",
    fusion: str = "rrf",
    rrf_k: int = DFLT_RRF_K,
    alpha: float = DFLT_BLEND_ALPHA,
    bm25_sat_k: float = DFLT_BM25_SAT_K,
    filter: Mapping[str, Any] | None = None,
    surfaces: Iterable[str] | str | None = None,
    per_artifact: bool = True,
    surface_weights: Mapping[str, float] | None = None,
    fetch_k: int | None = None,
    index: str = "auto",
    explain: bool = False,
    query_vector: Any = None,
    rerank: Any = None,
    rerank_text: Any = "surface",
    rerank_max_chars: int = DFLT_RERANK_MAX_CHARS,
    formulate: Any = None,
    boost: Any = None,
) -> SearchHits:
    """The top ``k`` hits for ``query`` (see the module notes).

    Parameters
    ----------
    corpus : Corpus or str
        An open corpus, or a corpus name (kept open by the process for the
        next search that names it: :func:`kept_corpus`).
    query : str
        The query text, embedded verbatim (dense) and analysed (lexical).
    k : int
        Hits to return (>= 1).
    mode : {"dense", "lexical", "hybrid"}
    fusion : {"rrf", "blend"}
        Hybrid fusion (ignored otherwise).
    rrf_k : int
        RRF rank constant, in ``1 .. 2**62``.
    alpha : float
        Blend's dense weight, in [0, 1].
    bm25_sat_k : float
        Blend's BM25 saturation constant (> 0).
    filter : mapping, optional
        A :mod:`rowvoi.query` filter over the corpus's filter fields.
    surfaces : str or iterable of str, optional
        Only these surface kinds.
    per_artifact : bool
        Keep the best surface per artifact (default True).
    surface_weights : mapping, optional
        ``{kind: weight}`` (finite, >= 0) multiplying first-stage scores;
        kinds the corpus lacks are ignored.
    fetch_k : int, optional
        Candidates per index in the first fetch (see the module notes);
        >= ``k``. With ``per_artifact``, more are fetched when the
        collapse leaves fewer than ``k`` artifacts.
    index : {"auto", "flat", "hnsw"}
        The vector index: the HNSW graph when the corpus has one, else the
        flat index (``"auto"``); the flat index (``"flat"``); the HNSW
        graph (``"hnsw"``, an error without one). A flat search is exact:
        the results of a float32 scan, bit for bit, read mostly from the
        index's int8 copy.
    explain : bool
        Add per-term BM25 contributions to each hit's ``explain``.
    query_vector : array_like, optional
        Use this embedding of the query instead of embedding ``query``
        (dense and hybrid modes); it is scaled to unit length here (the
        norm summed in float64), so its own scale does not matter.

    Returns
    -------
    SearchHits
        A list of :class:`SearchHit`, best first; fewer than ``k`` only
        when fewer qualify (artifacts with ``per_artifact``, else records),
        whatever the index. An empty one says why in its ``reason``: no
        record matches the filter, the corpus has no surfaces of the kinds
        asked for, the query has no searchable terms (lexical), its
        embedding is the zero vector (dense), no record contains a query
        term.

    Raises
    ------
    CorpusNotFound
        A corpus name that does not exist.
    CorpusEmpty
        The corpus has no records: ``corpus 'X' is empty; build it first:
        rowvoi build X``.
    ValueError, TypeError
        ``k <= 0``, an unknown mode, fusion or index, bad numbers.
    rowvoi.errors.QueryError
        A filter naming an unknown field, using an operator its type does
        not allow, or a value of the wrong type (every problem listed).
    EmbedderMismatch, EmbedderUnavailable
        The corpus's embedder cannot be used here (dense and hybrid).
    rowvoi.corpus.retrieval.rerank.RerankError
        A bad rerank spec or ``rerank_text``, a reranker that returns the
        wrong number of scores or a non-finite one, a boost that returns no
        finite number, a formulator that returns no query.

    Notes
    -----
    Thread-safe (see :class:`Corpus`) when the reranker, formulator and
    boost are.

    Examples
    --------
    >>> from rowvoi.corpus import build, from_mapping
    >>> corpus = build(from_mapping({"a": "lift of a wing", "b": "shock on a wedge"},
    ...                             embedder="hashing"), store=CorpusStore.memory())
    >>> [h.artifact_id for h in search(corpus, "wedge shock", mode="hybrid", fusion="blend")]
    ['b', 'a']
    >>> search(corpus, "wing", k=0)
    Traceback (most recent call last):
    ...
    ValueError: k=0: must be in 1 .. 100000
    """
    hook = None if type(corpus) is Corpus else getattr(type(corpus), "__rowvoi_search__", None)
    if hook is not None:
        # another kind of corpus that searches itself (a sharded corpus of
        # rowvoi.dask): same arguments, same hits
        found: SearchHits = hook(
            corpus,
            query,
            k=k,
            mode=mode,
            fusion=fusion,
            rrf_k=rrf_k,
            alpha=alpha,
            bm25_sat_k=bm25_sat_k,
            filter=filter,
            surfaces=surfaces,
            per_artifact=per_artifact,
            surface_weights=surface_weights,
            fetch_k=fetch_k,
            index=index,
            explain=explain,
            query_vector=query_vector,
            rerank=rerank,
            rerank_text=rerank_text,
            rerank_max_chars=rerank_max_chars,
            formulate=formulate,
            boost=boost,
        )
        return found
    if type(corpus) is Corpus:
        c = corpus
    elif isinstance(corpus, str):
        c = kept_corpus(corpus)
    else:
        c = as_corpus(corpus)
    if not isinstance(query, str):
        raise TypeError(f"query must be a str, not {type(query).__name__}")
    if rerank is not None or formulate is not None or boost is not None:
        return _refined(
            c,
            query,
            k=k,
            per_artifact=per_artifact,
            fetch_k=fetch_k,
            rerank=rerank,
            rerank_text=rerank_text,
            rerank_max_chars=rerank_max_chars,
            formulate=formulate,
            boost=boost,
            first=dict(
                mode=mode,
                fusion=fusion,
                rrf_k=rrf_k,
                alpha=alpha,
                bm25_sat_k=bm25_sat_k,
                filter=filter,
                surfaces=surfaces,
                surface_weights=surface_weights,
                index=index,
                explain=explain,
                query_vector=query_vector,
            ),
        )
    p = params(
        k,
        mode,
        fusion,
        rrf_k,
        alpha,
        bm25_sat_k,
        surfaces,
        per_artifact,
        surface_weights,
        fetch_k,
        index,
        explain,
    )
    if filter is not None and not isinstance(filter, Mapping):
        raise TypeError(
            f"filter must be a mapping (a filter document), not {type(filter).__name__}"
        )
    # the hot path: an unfiltered dense search of a vector on a flat index,
    # one compiled call on the opened generation (fast_dense)
    hot = (
        p.mode == "dense"
        and type(query_vector) is np.ndarray
        and not filter
        and p.kinds is None
        and p.weights is None
        and p.vector_index != "hnsw"
    )
    qvec = None if query_vector is None or hot else unit_query_vector(query_vector)
    want = Wanted(
        p.mode in ("lexical", "hybrid"),
        p.mode in ("dense", "hybrid"),
        p.mode != "lexical" and p.vector_index == "hnsw",
        filter,
        p.kinds,
        c.name,
        c.label,
    )
    with c._generations.read(want) as opened:
        if hot:
            hits = fast_dense(opened, query_vector, p, c.name)
            if hits is not None:
                return hits
            qvec = unit_query_vector(query_vector)
        dense = opened.gen.dense
        if want.dense and qvec is None:
            embedder = c._query_embedder(opened.state)
            if dense is not None:
                qvec = embedder.embed_query(query)
        elif want.dense and dense is not None and qvec is not None and qvec.shape[0] != dense.dim:
            raise EmbedderMismatch(
                f"query_vector has {qvec.shape[0]} dimensions; {c.label} "
                f"holds {dense.dim}-dimensional vectors"
            )
        return rank(opened, query, qvec, p, c.name)


def _refined(
    c: Corpus,
    query: str,
    *,
    k: int,
    per_artifact: bool,
    fetch_k: int | None,
    rerank: Any,
    rerank_text: Any,
    rerank_max_chars: int,
    formulate: Any,
    boost: Any,
    first: dict[str, Any],
) -> SearchHits:
    """A search with a second stage (:mod:`rowvoi.corpus.retrieval.rerank`)."""
    reranker = resolve_reranker(rerank)
    _check_text_choice(rerank_text)
    max_chars = integer("rerank_max_chars", rerank_max_chars, 1)
    if boost is not None and not callable(boost):
        raise TypeError(f"boost must be a callable hit -> float, not {type(boost).__name__}")
    queries = [query] if formulate is None else queries_of(formulate, query)
    if first.get("query_vector") is not None and queries != [query]:
        raise ValueError(
            "query_vector embeds one query; it cannot be combined with a "
            "formulate that returns other queries"
        )
    # the checks of a plain search (k, mode, fetch_k, ...), and its fetch_k
    p = params(
        k,
        first["mode"],
        first["fusion"],
        first["rrf_k"],
        first["alpha"],
        first["bm25_sat_k"],
        first["surfaces"],
        per_artifact,
        first["surface_weights"],
        fetch_k,
        first["index"],
        first["explain"],
    )
    if reranker is None and boost is None and len(queries) == 1:
        return search(c, queries[0], k=k, per_artifact=per_artifact, fetch_k=fetch_k, **first)
    n = p.fetch_k if fetch_k is not None else max(5 * p.k, 50)

    def first_stage(q: str, m: int) -> SearchHits:
        return search(c, q, k=m, per_artifact=False, fetch_k=m, **first)

    return refine(
        first_stage,
        c,
        query,
        k=p.k,
        per_artifact=p.per_artifact,
        fetch_k=n,
        max_fetch=MAX_FETCH_K,
        growth=FETCH_GROWTH,
        queries=queries,
        reranker=reranker,
        rerank_text=rerank_text,
        max_chars=max_chars,
        boost=boost,
    )


# --------------------------------------------------------------- siblings


def records_for_artifact(
    store_or_corpus: Any, artifact_id: str, *, surface_kind: str | None = None
) -> list[Record]:
    """All stored records of an artifact, in plan order (``surface_index``).

    The sibling lookup beneath expansion: a hit names its artifact and its
    ``surface_index``; this returns every surface of that artifact, read
    from the ledger in one snapshot (never by re-deriving ids). No model
    and no index is loaded; ``vector`` is ``None``.

    Parameters
    ----------
    store_or_corpus : Corpus, CorpusStore or str
        A corpus, its store, or a corpus name.
    artifact_id : str
    surface_kind : str, optional
        Only records of this kind (a known artifact without such records
        gives ``[]``).

    Raises
    ------
    NoLedgerEntry
        The corpus has no such artifact (a ``KeyError``).
    CorpusNotFound
        No such corpus.

    Examples
    --------
    >>> from rowvoi.corpus import CorpusStore, build, from_mapping, Fields
    >>> src = from_mapping({"d1": {"title": "Wings", "body": "Lift. Drag."}},
    ...                    strategy=Fields(("title", "body")), embedder="hashing:16")
    >>> corpus = build(src, store=CorpusStore.memory())
    >>> [(r.surface_index, r.surface_kind, r.text) for r in records_for_artifact(corpus, "d1")]
    [(0, 'title', 'Wings'), (1, 'body', 'Lift. Drag.')]
    >>> records_for_artifact(corpus, "nope")
    Traceback (most recent call last):
    ...
    rowvoi.corpus.base.NoLedgerEntry: artifact 'nope' is not in the corpus at ...
    """
    if isinstance(store_or_corpus, Corpus):
        store, label = store_or_corpus.store, store_or_corpus.label
    elif isinstance(store_or_corpus, CorpusStore):
        store = store_or_corpus
        label = f"corpus {store.name!r}" if store.name else f"the corpus at {store.path}"
    elif isinstance(store_or_corpus, str):
        store = CorpusStore.local(store_or_corpus)
        label = f"corpus {store_or_corpus!r}"
    elif hasattr(type(store_or_corpus), "__rowvoi_records__"):
        # another kind of corpus that finds its records itself (a sharded
        # corpus of rowvoi.dask: the artifact's shard)
        records: list[Record] = type(store_or_corpus).__rowvoi_records__(
            store_or_corpus, artifact_id, surface_kind=surface_kind
        )
        return records
    elif hasattr(store_or_corpus, "store"):
        return records_for_artifact(store_or_corpus.store, artifact_id, surface_kind=surface_kind)
    else:
        raise TypeError(
            f"expected a Corpus, CorpusStore or corpus name, not {type(store_or_corpus).__name__}"
        )
    key = ledger_key(artifact_id)
    with store.snapshot() as snap:
        entry = snap.artifact(key)
        if entry is None:
            raise NoLedgerEntry(f"artifact {key!r} is not in {label}")
        rows = snap.artifact_records(entry["aid"], surface_kind)
    out = []
    for rid, idx, kind, gran, text, meta in rows:
        m = json.loads(meta)
        m.update(entry["filter_fields"])
        out.append(
            Record(
                Record.make_id(key, kind, idx),
                key,
                kind,
                idx,
                text,
                None,
                m,
                record_id=int(rid),
                granularity=gran,
            )
        )
    return out
