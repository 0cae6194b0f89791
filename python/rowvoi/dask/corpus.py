"""Corpora beyond one machine: sharded build and search on Dask.

A *sharded corpus* is ``shards`` ordinary corpora (the on-disk format of
:mod:`rowvoi.corpus`, each complete) under one root on storage every
worker can read, plus a manifest (:mod:`rowvoi.dask._manifest`) that names
the generation of each: the one commit point of the whole.

:func:`build_sharded` routes every artifact to a shard by a stable hash of
its id (:func:`~rowvoi.dask._manifest.shard_of`), builds each shard in one
Dask task with :func:`rowvoi.corpus.build` (incremental: a second run
changes nothing, an edited artifact touches only its shard), gathers the
BM25 statistics of the collection (document count, summed lengths,
document frequencies) and publishes a new manifest only when a shard
changed.

:func:`open_sharded` returns a :class:`ShardedCorpus`, which
:func:`rowvoi.corpus.search` accepts. A search embeds the query once,
sends the query (or a batch of them) to every shard in one round, and
merges (:mod:`rowvoi.dask._merge`): lexical scores use the collection's
statistics, so BM25 equals one index over all documents; dense top-k is an
exact merge of exact per-shard top-k; fusion, surface weights and the
per-artifact collapse happen after the merge; filters apply inside each
shard's kernels. The hits equal those of one corpus built from the same
records (ids, order, scores), in every mode and fusion.

Examples
--------
>>> import tempfile
>>> from rowvoi.corpus import from_mapping, search
>>> from rowvoi.dask import build_sharded, open_sharded
>>> docs = {"wing.md": "Lift and drag of a thin wing", "pipe.md": "Heat transfer in pipes",
...         "flutter.md": "Wing flutter at high speed"}
>>> root = tempfile.mkdtemp()
>>> report = build_sharded(from_mapping(docs, embedder="hashing"), None, shards=3,
...                        root=root, client="sync")
>>> report.generation, report.changed_shards
(1, [0, 1, 2])
>>> corpus = open_sharded(root, client="local")
>>> [h.artifact_id for h in search(corpus, "wing lift", mode="lexical", k=2)]
['wing.md', 'flutter.md']
>>> build_sharded(from_mapping(docs, embedder="hashing"), None, shards=3, root=root,
...               client="sync").changed_shards
[]
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import os
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rowvoi._atomic import private_dir
from rowvoi.corpus.base import CorpusEmpty, CorpusNotFound, SearchHits
from rowvoi.corpus.embedders import CorpusEmbedder, embedder_for_id
from rowvoi.corpus.indexing.sources import CorpusSource
from rowvoi.corpus.retrieval.rank import (
    DFLT_BLEND_ALPHA,
    DFLT_BM25_SAT_K,
    DFLT_RRF_K,
    FETCH_GROWTH,
    Params,
    params,
    query_vector as unit_query_vector,
)
from rowvoi.corpus.storage.lock import holder_text, pid_lock
from rowvoi.corpus.storage.paths import check_name, corpus_dir
from rowvoi.errors import QueryError

from . import _shard
from ._manifest import (
    FORMAT,
    MANIFEST,
    MAX_SHARDS,
    ROUTE,
    VERSION,
    ShardedCorpusError,
    is_sharded,
    read_manifest,
    shard_dir_name,
    shard_of,
    stats_name,
    write_manifest,
    write_stats,
)
from ._merge import merge

__all__ = [
    "build_sharded",
    "open_sharded",
    "ShardedCorpus",
    "ShardedBuildReport",
    "ShardedCorpusError",
    "shard_of",
    "is_sharded",
    "remove_sharded",
]

#: Seconds a search waits for a build that committed shards to publish its
#: manifest (a shard ahead of the manifest cannot serve the old generation).
PUBLISH_WAIT = 60.0
#: Times a batch is resent after the workers serving it were lost.
RESUBMITS = 2
#: Seconds a list of the cluster's workers is trusted before it is asked again.
WORKERS_TTL = 1.0
#: Seconds between checks that a worker answering a call is still alive.
POLL = 0.25
#: Seconds a search waits for a cluster with no worker to have one again.
WORKER_WAIT = 10.0
#: Seconds a worker whose connection failed is given to leave the scheduler's list.
LOST_WAIT = 10.0
_LOCK_FILE = "sharded.lock"


# ----------------------------------------------------------------- build


@dataclass
class ShardedBuildReport:
    """What :func:`build_sharded` did.

    Attributes
    ----------
    root : str
    generation : int
        The published sharded generation (unchanged when no shard changed).
    shard_generations : list of int
    changed_shards : list of int
        Shards whose build committed a new generation.
    n_records, n_artifacts : int
        Of the whole collection.
    shard_reports : list of dict
        Per shard: ``n_seen``, ``n_new``, ``n_changed``, ``n_unchanged``,
        ``n_deleted``, ``records_added``, ``records_removed``, ``seconds``.
    seconds : float
        Wall time.
    """

    root: str
    generation: int
    shard_generations: list[int]
    changed_shards: list[int]
    n_records: int
    n_artifacts: int
    shard_reports: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0


class _RoutedSource(CorpusSource):
    """A source restricted to the artifacts routed to one shard (the
    source's scope read where the shard is built: a folder is walked
    there)."""

    def __init__(self, base: CorpusSource, shard: int, shards: int) -> None:
        self.__dict__.update(copy.copy(base.__dict__))
        self._base = base
        self._shard = shard
        self._shards = shards

    def items(self) -> Any:
        for aid, raw in self._base.items():
            if shard_of(aid, self._shards) == self._shard:
                yield aid, raw

    def ids(self) -> Any:
        for aid in self._base.ids():
            if shard_of(aid, self._shards) == self._shard:
                yield aid

    def skipped(self) -> dict[str, int]:
        return self._base.skipped()


def _split_source(source: CorpusSource, shards: int) -> list[CorpusSource]:
    """One source per shard: a plain dict scope split here, any other scope
    (a folder, a fetcher) filtered where it is read."""
    if type(source.scope) is dict:
        parts: list[dict[Any, Any]] = [{} for _ in range(shards)]
        for key, raw in source.scope.items():
            parts[shard_of(key, shards)][key] = raw
        out = []
        for i in range(shards):
            s = copy.copy(source)
            s.scope = parts[i]
            out.append(s)
        return out
    return [_RoutedSource(source, i, shards) for i in range(shards)]


def _route_records(part: Any, shards: int, id_key: str) -> list[Any]:
    """A partition of a bag (records) or DataFrame, split by shard."""
    import pandas as pd

    if isinstance(part, pd.DataFrame):
        if id_key not in part.columns:
            raise ValueError(
                f"the DataFrame has no id column {id_key!r} (pass id_key=): sharding "
                "routes rows by their id"
            )
        sh = np.array([shard_of(v, shards) for v in part[id_key].tolist()], dtype=np.int64)
        return [part[sh == i] for i in range(shards)]
    out: list[list[Any]] = [[] for _ in range(shards)]
    for rec in part:
        if not isinstance(rec, Mapping) or id_key not in rec:
            raise ValueError(
                f"every record of the bag must be a mapping with an {id_key!r} field "
                f"(got {type(rec).__name__}); pass id_key= for another field"
            )
        out[shard_of(rec[id_key], shards)].append(rec)
    return out


def _pick(routed: list[Any], i: int) -> Any:
    return routed[i]


def _records_source(pieces: Sequence[Any], spec: dict[str, Any]) -> CorpusSource:
    """The source of one shard from its pieces of every partition."""
    import pandas as pd

    from rowvoi.corpus.indexing.sources import from_dataframe, from_records

    kw: dict[str, Any] = {"embedder": spec["embedder"] or "default"}
    if spec["filter_types"] is not None:
        kw["filter_types"] = spec["filter_types"]
    if pieces and all(isinstance(p, pd.DataFrame) for p in pieces):
        frame = pd.concat(list(pieces)) if len(pieces) > 1 else pieces[0]
        return from_dataframe(
            frame,
            name=None,
            text_column=spec["text_key"],
            id_column=spec["id_key"],
            metadata_columns=spec["metadata_keys"],
            strategy=spec["strategy"],
            **kw,
        )
    records = [r for piece in pieces for r in piece]
    return from_records(
        name=None,
        fetcher=lambda: records,
        strategy=spec["strategy"],
        metadata_keys=spec["metadata_keys"],
        id_key=spec["id_key"],
        text_key=spec["text_key"],
        **kw,
    )


def _own_stats(root: str, i: int, generation: int) -> dict[str, Any] | None:
    """The BM25 statistics of shard ``i`` at ``generation`` (None: no
    lexical index), cached next to it per generation."""
    import json

    from rowvoi._atomic import PRIVATE_FILE, atomic_write_bytes
    from rowvoi.corpus.storage.index_files import load_lexical, read_delta
    from rowvoi.corpus.storage.store import CorpusStore

    cache = Path(root) / f"{shard_dir_name(i)}.stats.json"
    try:
        doc = json.loads(cache.read_bytes())
        if isinstance(doc, dict) and doc.get("generation") == generation:
            st = doc.get("stats")
            if st is None or (isinstance(st, dict) and isinstance(st.get("df"), dict)):
                return st
    except (OSError, ValueError):
        pass
    store = CorpusStore(Path(root) / shard_dir_name(i))
    with store.snapshot() as snap:
        if snap.generation != generation:
            raise ShardedCorpusError(
                f"shard {i} of {root} moved to generation {snap.generation} during the build"
            )
        lex = (
            load_lexical(store, read_delta(snap, dense=False))
            if snap.state.get("n_records")
            else None
        )
    stats = None if lex is None else lex.own_stats()
    atomic_write_bytes(
        cache, json.dumps({"generation": generation, "stats": stats}).encode(), mode=PRIVATE_FILE
    )
    return stats


def _build_shard(
    root: str, i: int, source: Any, spec: dict[str, Any], *pieces: Any
) -> dict[str, Any]:
    """Build shard ``i`` (a Dask task): incremental, one commit; returns its
    generation, counts, embedder id, statistics and what the build did."""
    from rowvoi.corpus.indexing.build import build
    from rowvoi.corpus.storage.store import CorpusStore

    if source is None:
        source = _records_source(pieces, spec)
    store = CorpusStore(Path(root) / shard_dir_name(i))
    before = None
    if store.exists():
        with store.snapshot() as snap:
            before = snap.generation
    corpus = build(
        source,
        store=store,
        embedder=spec["embedder"],
        full=spec["full"],
        batch_size=spec["batch_size"],
        progress=False,
        edges=spec["edges"],
    )
    rep = corpus.last_build
    with store.snapshot() as snap:
        gen = snap.generation
        state = dict(snap.state)
    out = {
        "shard": i,
        "generation": gen,
        "changed": before != gen,
        "n_records": int(state.get("n_records") or 0),
        "n_artifacts": int(state.get("n_artifacts") or 0),
        "embedder_id": state.get("embedder_id"),
        "report": {
            k: getattr(rep, k)
            for k in (
                "n_seen",
                "n_new",
                "n_changed",
                "n_unchanged",
                "n_deleted",
                "records_added",
                "records_removed",
                "seconds",
            )
        },
    }
    out["stats"] = _own_stats(root, i, gen) if gen else None
    return out


def _resolve_root(name: str | None, root: Any) -> Path:
    if root is not None:
        return Path(root).expanduser().absolute()
    if name is None:
        raise TypeError("build_sharded needs a name or a root")
    return corpus_dir(name)


def _is_bag(obj: Any) -> bool:
    try:
        import dask.bag as db
    except ImportError:  # pragma: no cover
        return False
    return isinstance(obj, db.Bag)


def _is_ddf(obj: Any) -> bool:
    import dask.dataframe as dd

    return isinstance(obj, dd.DataFrame)


def build_sharded(
    source: Any,
    name: str | None = None,
    *,
    shards: int,
    client: Any = None,
    root: str | os.PathLike[str] | None = None,
    embedder: Any = None,
    strategy: Any = None,
    edges: Any = None,
    full: bool = True,
    batch_size: int = 256,
    id_key: str = "id",
    text_key: str = "text",
    metadata_keys: Sequence[str] | None = None,
    filter_types: Mapping[str, str] | None = None,
) -> ShardedBuildReport:
    """Build or incrementally update a sharded corpus (see the module notes).

    Parameters
    ----------
    source : CorpusSource, dask.bag.Bag or dask.dataframe.DataFrame
        Any :mod:`rowvoi.corpus` source (a dict scope is split here; a
        folder or fetcher is read, and filtered, where each shard is
        built), or a Dask bag of record mappings / a Dask DataFrame with
        one row per artifact: then the text never passes through the
        client (each partition is split by shard on a worker).
    name : str, optional
        The corpus name: the root defaults to its directory under
        :func:`rowvoi.corpus.corpora_dir`, and it is named in the manifest.
    shards : int
        Number of shards (1 .. 4096); fixed once the corpus exists.
    client : None, str or distributed.Client
        Where the shard tasks run: a ``distributed.Client``; ``None`` for
        the active client, else Dask's threads; or a local scheduler name
        (``"sync"``, ``"threads"``, ``"processes"``).
    root : path, optional
        The sharded corpus's directory (every worker must read and write
        it): created ``0700``.
    embedder, strategy, edges :
        As for :func:`rowvoi.corpus.build` (``embedder`` overrides the
        source's; ``strategy`` is used for a bag or DataFrame source,
        whose records become :func:`~rowvoi.corpus.from_records` sources).
    full : bool
        Prune artifacts the source no longer has (default True).
    id_key, text_key, metadata_keys, filter_types :
        For a bag or DataFrame source: the id and text fields (columns),
        the fields lifted into filter fields, their declared types.

    Returns
    -------
    ShardedBuildReport

    Raises
    ------
    ShardedCorpusError
        ``shards`` differs from the existing corpus's, another process is
        building it, its manifest is damaged, or the shards disagree on
        the embedder.
    """
    from ._run import Runner

    t0 = time.perf_counter()
    if isinstance(shards, bool) or not isinstance(shards, int):
        raise TypeError(f"shards must be an int, not {type(shards).__name__}")
    if not 1 <= shards <= MAX_SHARDS:
        raise ValueError(f"shards={shards}: must be in 1 .. {MAX_SHARDS}")
    if name is not None:
        name = check_name(name)
    top = _resolve_root(name, root)
    private_dir(top)
    spec = {
        "embedder": embedder,
        "strategy": strategy,
        "edges": edges,
        "full": bool(full),
        "batch_size": int(batch_size),
        "id_key": id_key,
        "text_key": text_key,
        "metadata_keys": None if metadata_keys is None else list(metadata_keys),
        "filter_types": None if filter_types is None else dict(filter_types),
    }

    def busy(holder: Mapping[str, Any]) -> BaseException:
        return ShardedCorpusError(
            f"the sharded corpus at {top} is being built by {holder_text(holder)}; "
            "one build at a time (wait for it, or stop it)"
        )

    runner = Runner(client if not isinstance(client, str) or client != "local" else "sync")
    with pid_lock(top / _LOCK_FILE, busy):
        old = (
            read_manifest(top)
            if (top / MANIFEST).exists() or (top / MANIFEST).is_symlink()
            else None
        )
        if old is not None and old["shards"] != shards:
            raise ShardedCorpusError(
                f"the sharded corpus at {top} has {old['shards']} shards, not {shards}: the "
                "shard of an artifact depends on the count; build it under a new root"
            )
        from dask import delayed

        root_s = str(top)
        tasks = []
        if _is_bag(source) or _is_ddf(source):
            parts = source.to_delayed()
            if hasattr(parts, "flatten"):
                parts = list(parts.flatten())
            routed = [delayed(_route_records, pure=True)(p, shards, id_key) for p in parts]
            for i in range(shards):
                pieces = [delayed(_pick, pure=True)(r, i) for r in routed]
                tasks.append(delayed(_build_shard, pure=False)(root_s, i, None, spec, *pieces))
        elif isinstance(source, CorpusSource):
            if strategy is not None and source.indexing_strategy is not strategy:
                source = copy.copy(source)
                source.indexing_strategy = strategy
            for i, s in enumerate(_split_source(source, shards)):
                tasks.append(delayed(_build_shard, pure=False)(root_s, i, s, spec))
        else:
            raise TypeError(
                "source must be a rowvoi.corpus source (CorpusSource), a dask.bag.Bag of "
                f"records or a dask.dataframe.DataFrame, not {type(source).__name__}"
            )
        results = runner.compute(tasks, "building shards")
        results.sort(key=lambda r: r["shard"])
        gens = [r["generation"] for r in results]
        eids = {r["embedder_id"] for r in results if r["n_records"]}
        if len(eids) > 1:
            raise ShardedCorpusError(
                f"the shards of {top} were built with different embedders ({sorted(eids)}); "
                "rebuild with one embedder= for all"
            )
        n_records = sum(r["n_records"] for r in results)
        n_artifacts = sum(r["n_artifacts"] for r in results)
        changed = [
            r["shard"]
            for r in results
            if old is None or gens[r["shard"]] != old["shard_generations"][r["shard"]]
        ]
        if old is not None and not changed:
            gen = old["generation"]
        else:
            gen = 1 if old is None else old["generation"] + 1
            from rowvoi.index.lexical import merge_stats

            parts_stats = [r["stats"] for r in results if r["stats"] is not None]
            stats_file = None
            if parts_stats:
                stats_file = write_stats(root_s, gen, gens, merge_stats(parts_stats))
            doc = {
                "format": FORMAT,
                "version": VERSION,
                "name": name,
                "shards": shards,
                "route": ROUTE,
                "generation": gen,
                "shard_generations": gens,
                "embedder_id": next(iter(eids)) if eids else None,
                "stats": stats_file,
                "n_records": n_records,
                "n_artifacts": n_artifacts,
                "published": time.time(),
            }
            write_manifest(top, doc)  # the commit point
            for p in top.glob("stats-*.json"):
                if p.name != stats_file:
                    with contextlib.suppress(OSError):
                        p.unlink()
    return ShardedBuildReport(
        root_s,
        gen,
        gens,
        changed,
        n_records,
        n_artifacts,
        [r["report"] for r in results],
        time.perf_counter() - t0,
    )


# ---------------------------------------------------------------- search


def _resolve_client(client: Any) -> Any:
    """None: the active distributed client, else in-process; "local":
    in-process; a client: it."""
    if isinstance(client, str):
        if client != "local":
            raise ValueError(
                f"client={client!r}: pass a distributed.Client, None or 'local' (serve the "
                "shards in this process)"
            )
        return None
    if client is None:
        try:
            from distributed import default_client

            return default_client()
        except (ImportError, ValueError):
            return None
    if not all(hasattr(client, a) for a in ("submit", "gather", "scheduler_info")):
        raise TypeError(f"client must be a distributed.Client, not {type(client).__name__}")
    return client


class ShardedCorpus:
    """A sharded corpus opened for search (:func:`open_sharded`).

    :func:`rowvoi.corpus.search` accepts it (and so do the functions built
    on it); :meth:`search_batch` answers many queries in one round.

    Attributes
    ----------
    name : str or None
    root : str
    client : distributed.Client or None
        Where the shards are served (None: in this process).

    Notes
    -----
    Each shard is loaded once per generation where it is served -- on the
    worker the shard is assigned to (shard ``i`` on the ``i``-th worker,
    round robin), kept there between queries -- with the collection's BM25
    statistics applied. A worker that is lost is replaced transparently:
    its shards are loaded from storage by the workers that take over its
    calls; with no worker left, the search raises
    :class:`ShardedCorpusError`. A search reads the manifest's generation
    (checked for a change before every batch: one ``stat``), so it never
    mixes generations.
    """

    def __init__(self, root: str, name: str | None, client: Any) -> None:
        self.root = root
        self.name = name
        self.client = client
        self._lock = threading.Lock()
        self._sig: tuple[int, int, int] | None = None
        self._manifest: dict[str, Any] = {}
        self._embedder: CorpusEmbedder | None = None
        #: worker address -> (the future holding its ShardServer actor, the actor)
        self._actors: dict[str, tuple[Any, Any]] = {}
        self._known: list[str] = []
        self._known_at = 0.0
        self._serve_lock = threading.RLock()
        self._refresh()

    def __repr__(self) -> str:
        return f"ShardedCorpus({self.name!r}, {self.root!r}, shards={self.shards})"

    @property
    def label(self) -> str:
        """How messages name it."""
        return f"corpus {self.name!r}" if self.name else f"the sharded corpus at {self.root}"

    @property
    def shards(self) -> int:
        """Number of shards."""
        return int(self._manifest["shards"])

    @property
    def generation(self) -> int:
        """The published sharded generation read last."""
        return int(self._manifest["generation"])

    @property
    def manifest(self) -> dict[str, Any]:
        """The manifest read last (a copy)."""
        return copy.deepcopy(self._manifest)

    def _refresh(self) -> dict[str, Any]:
        path = Path(self.root) / MANIFEST
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            raise CorpusNotFound(f"no sharded corpus at {self.root} (no {MANIFEST})") from None
        sig = (st.st_ino, st.st_mtime_ns, st.st_size)
        with self._lock:
            if sig != self._sig:
                self._manifest = read_manifest(self.root)
                self._sig = sig
            return self._manifest

    def info(self) -> dict[str, Any]:
        """The corpus and each shard: ``{"name", "root", "generation",
        "shards", "n_records", "n_artifacts", "embedder_id", "shard_info":
        [{"shard", "path", "generation", "n_records", "n_artifacts"}]}``."""
        from rowvoi.corpus.storage.store import CorpusStore

        m = self._refresh()
        rows = []
        for i, g in enumerate(m["shard_generations"]):
            store = CorpusStore(Path(self.root) / shard_dir_name(i))
            n_rec = n_art = 0
            if store.exists():
                with store.snapshot() as snap:
                    n_rec = int(snap.state.get("n_records") or 0) if snap.generation else 0
                    n_art = int(snap.state.get("n_artifacts") or 0) if snap.generation else 0
            rows.append(
                {
                    "shard": i,
                    "path": str(store.path),
                    "generation": g,
                    "n_records": n_rec,
                    "n_artifacts": n_art,
                }
            )
        return {
            "name": m["name"],
            "root": self.root,
            "generation": m["generation"],
            "shards": m["shards"],
            "n_records": m["n_records"],
            "n_artifacts": m["n_artifacts"],
            "embedder_id": m["embedder_id"],
            "shard_info": rows,
        }

    #: No folder a pointer of its hits may name (pass roots= to disclose).
    source_roots: tuple[str, ...] = ()

    def __rowvoi_records__(self, artifact_id: str, *, surface_kind: str | None = None) -> Any:
        """The hook :func:`rowvoi.corpus.records_for_artifact` calls (and
        so :func:`rowvoi.corpus.expand`): the artifact's records, read from
        its shard."""
        from rowvoi.corpus.base import ledger_key
        from rowvoi.corpus.retrieval.corpus import records_for_artifact
        from rowvoi.corpus.storage.store import CorpusStore

        m = self._refresh()
        i = shard_of(ledger_key(artifact_id), m["shards"])
        store = CorpusStore(Path(self.root) / shard_dir_name(i))
        return records_for_artifact(store, artifact_id, surface_kind=surface_kind)

    # ------------------------------------------------------------ search
    def __rowvoi_search__(self, query: str, **kw: Any) -> SearchHits:
        """The hook :func:`rowvoi.corpus.search` calls."""
        return self.search(query, **kw)

    def search(self, query: str, **kw: Any) -> SearchHits:
        """:func:`rowvoi.corpus.search` of this corpus (same arguments)."""
        if not isinstance(query, str):
            raise TypeError(f"query must be a str, not {type(query).__name__}")
        qv = kw.pop("query_vector", None)
        return self.search_batch([query], query_vectors=None if qv is None else [qv], **kw)[0]

    def search_batch(
        self,
        queries: Sequence[str],
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
        query_vectors: Sequence[Any] | None = None,
        rerank: Any = None,
        rerank_text: Any = "surface",
        rerank_max_chars: int = 4000,
        formulate: Any = None,
        boost: Any = None,
    ) -> list[SearchHits]:
        """The hits of many queries, each as :func:`rowvoi.corpus.search`
        gives them on one corpus, sent to the shards in one round (on a cluster,
        one call per worker for the whole batch, through the worker's
        :class:`rowvoi.dask._shard.ShardServer` actor; another round only
        for the queries whose per-artifact collapse needs more candidates).

        ``index="hnsw"`` is refused: a sharded search is exact (the flat
        indexes), whatever the shards hold. A second stage (``rerank``,
        ``formulate``, ``boost``) is not run on a sharded corpus: rerank
        its hits yourself.
        """
        if rerank is not None or formulate is not None or boost is not None:
            raise ValueError(
                "rerank, formulate and boost are not available on a sharded corpus; "
                "search it, then rerank the hits (rowvoi.corpus.retrieval.rerank)"
            )
        qs = list(queries)
        for q in qs:
            if not isinstance(q, str):
                raise TypeError(f"queries must be str, not {type(q).__name__}")
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
        if p.vector_index == "hnsw":
            raise ValueError(
                f"{self.label} is sharded: its search is exact (flat indexes); use index='auto' "
                "or 'flat'"
            )
        if filter is not None and not isinstance(filter, Mapping):
            raise TypeError(
                f"filter must be a mapping (a filter document), not {type(filter).__name__}"
            )
        flt = None if not filter else dict(filter)
        if query_vectors is not None and len(query_vectors) != len(qs):
            raise ValueError("query_vectors must hold one vector per query")
        m = self._refresh()
        if not m["n_records"]:
            raise CorpusEmpty(f"{self.label} is empty; build it first")
        qvecs: list[np.ndarray | None] = [None] * len(qs)
        if p.mode != "lexical":
            if query_vectors is not None:
                qvecs = [unit_query_vector(v) for v in query_vectors]
            else:
                emb = self._query_embedder(m)
                if qs:
                    # (as one corpus embeds a query: the embedder's vector as it is)
                    qvecs = list(emb.embed(qs))
        out: list[SearchHits | None] = [None] * len(qs)
        fetch = [p.fetch_k] * len(qs)
        todo = list(range(len(qs)))
        while todo:
            parts, m = self._round(
                m,
                [qs[i] for i in todo],
                [qvecs[i] for i in todo],
                p,
                flt,
                [fetch[i] for i in todo],
            )
            again = []
            for j, qi in enumerate(todo):
                per = [sh[j] for sh in parts]
                unknown = [r["unknown"] for r in per if "unknown" in r]
                built = [r for r in per if r.get("none") != "the shard is empty"]
                if unknown and len(unknown) == len(built):
                    # no shard knows the field: the error one corpus gives
                    raise QueryError([f"{self.label}: {pr}" for pr in unknown[0]])
                mg = merge(per, qvecs[qi] is not None, p, self.name, fetch[qi])
                collapse = p.per_artifact and not all(r["one"] for r in per)
                if collapse and mg.cut and len(mg.hits) < p.k:
                    bound = mg.n_allowed
                    if fetch[qi] < bound:
                        fetch[qi] = min(bound, fetch[qi] * FETCH_GROWTH)
                        again.append(qi)
                        continue
                out[qi] = SearchHits(mg.hits) if mg.hits else SearchHits.empty(mg.reason)
            todo = again
        return [h if h is not None else SearchHits.empty(None) for h in out]

    def _query_embedder(self, m: Mapping[str, Any]) -> CorpusEmbedder:
        eid = m["embedder_id"]
        if eid is None:
            raise CorpusEmpty(f"{self.label} is empty; build it first")
        emb = self._embedder
        if emb is not None and emb.embedder_id == eid:
            return emb
        made = embedder_for_id(eid, corpus=self.name)
        if made is None:
            from rowvoi.corpus.base import EmbedderUnavailable

            raise EmbedderUnavailable(
                f"{self.label} was built with the callable embedder {eid!r}, which cannot be "
                "recreated from its id; search it with query_vector="
            )
        self._embedder = made
        return made

    def _round(
        self,
        m: dict[str, Any],
        qs: list[str],
        qvecs: list[np.ndarray | None],
        p: Params,
        flt: dict[str, Any] | None,
        fetch: list[int],
    ) -> tuple[list[list[dict[str, Any]]], dict[str, Any]]:
        """One round: every shard answers the batch. A shard ahead of the
        manifest (a build between its commits and its publication): wait for
        the manifest, then search the new generation."""
        deadline = time.monotonic() + PUBLISH_WAIT
        while True:
            try:
                results = self._run(m, qs, qvecs, p, flt, fetch)
                break
            except _shard.ShardMoved as exc:
                newer = self._wait_publish(m, deadline, exc)
                m = newer
        return results, m

    def _wait_publish(self, m: dict[str, Any], deadline: float, exc: Exception) -> dict[str, Any]:
        while time.monotonic() < deadline:
            cur = self._refresh()
            if cur["generation"] != m["generation"]:
                return cur
            time.sleep(0.05)
        raise ShardedCorpusError(
            f"{self.label}: {exc}; a build committed shards but has not published its "
            f"manifest within {PUBLISH_WAIT:.0f} s (a build that failed: run it again)"
        ) from None

    def _run(
        self,
        m: dict[str, Any],
        qs: list[str],
        qvecs: list[np.ndarray | None],
        p: Params,
        flt: dict[str, Any] | None,
        fetch: list[int],
    ) -> list[list[dict[str, Any]]]:
        n = m["shards"]
        live = [i for i in range(n) if m["shard_generations"][i]]
        if self.client is None:
            res = []
            for i in live:
                res.append(_shard.run_pass(self.root, i, m, qs, qvecs, p, flt, fetch))
        else:
            res = self._run_cluster(m, live, qs, qvecs, p, flt, fetch)
        # (one_per_artifact: whether a collapse can drop anything)
        return res

    def _run_cluster(
        self,
        m: dict[str, Any],
        live: list[int],
        qs: list[str],
        qvecs: list[np.ndarray | None],
        p: Params,
        flt: dict[str, Any] | None,
        fetch: list[int],
    ) -> list[list[dict[str, Any]]]:
        """One call per worker, answering the batch on each shard the worker
        holds (shard ``i`` on the ``i``-th live worker, round robin, so it
        stays loaded there), through that worker's :class:`_shard.ShardServer`
        actor: straight from the client to the worker and back, no scheduler
        in between. A call whose worker is lost is sent again, the shards
        reassigned over the live workers (which load them from storage)."""
        moves = 0
        workers = self._workers(fresh=False)
        while True:
            assign: dict[str, list[int]] = {}
            for i in live:
                assign.setdefault(workers[i % len(workers)], []).append(i)
            calls = {}
            lost = False
            args = _shard.pack((m, qs, qvecs, p, flt, fetch))
            for w, idx in assign.items():
                try:
                    calls[w] = self._call(w, idx, args)
                except _WorkerLost:
                    lost = True
                    break
            got: dict[int, list[dict[str, Any]]] = {}
            if not lost:
                for w, call in calls.items():
                    try:
                        res = _shard.unpack(self._await(call, w))
                    except _WorkerLost:
                        lost = True
                        break
                    for i, r in zip(assign[w], res):
                        got[i] = r
            if not lost:
                return [got[i] for i in live]
            moves += 1
            if moves > RESUBMITS * max(1, len(live)):
                raise ShardedCorpusError(
                    f"{self.label}: the workers serving its shards kept failing; no "
                    "worker could load them"
                )
            workers = self._workers(fresh=True)

    def _workers(self, *, fresh: bool) -> list[str]:
        """The cluster's workers (sorted addresses), asked of the scheduler
        at most once a second unless ``fresh``; none: a ShardedCorpusError."""
        now = time.monotonic()
        if fresh or not self._known or now - self._known_at > WORKERS_TTL:
            deadline = now + WORKER_WAIT
            while True:
                info = self.client.scheduler_info(n_workers=-1)
                self._known = sorted(info.get("workers", {}))
                # (none: they may be restarting -- a nanny replaces a lost one)
                if self._known or time.monotonic() >= deadline:
                    break
                time.sleep(0.1)
            self._known_at = now
            # (actors on workers that left are dropped: their futures released)
            for w in [w for w in self._actors if w not in self._known]:
                self._drop(w)
        if not self._known:
            raise ShardedCorpusError(
                f"{self.label}: no Dask worker is alive to load its shards (the cluster "
                f"has had no workers for {WORKER_WAIT:.0f} s); start workers, then search again"
            )
        return self._known

    def _drop(self, worker: str) -> None:
        with self._serve_lock:
            fut = self._actors.pop(worker, (None, None))[0]
        if fut is not None:
            with contextlib.suppress(Exception):
                fut.cancel()

    def _alive(self, worker: str) -> bool:
        return worker in self._workers(fresh=True)

    def _call(self, worker: str, indexes: list[int], args: bytes) -> Any:
        """Start ``ShardServer.passes(root, indexes, args)`` on ``worker``."""
        try:
            return self._actor(worker).passes(self.root, indexes, args)
        except (OSError, RuntimeError) as exc:
            if not _lost(exc):
                raise
            self._drop(worker)
            raise _WorkerLost(worker) from None

    def _actor(self, worker: str) -> Any:
        """This client's :class:`_shard.ShardServer` on ``worker`` (made on
        first use; the future that holds it is kept, or Dask would release
        it)."""
        with self._serve_lock:
            got = self._actors.get(worker)
            if got is not None:
                return got[1]
            fut = self.client.submit(
                _shard.ShardServer,
                workers=[worker],
                allow_other_workers=False,
                actor=True,
                pure=False,
            )
            try:
                actor = self._await(fut, worker)
            except _WorkerLost:
                fut.cancel()
                raise
            self._actors[worker] = (fut, actor)
            return actor

    def _await(self, fut: Any, worker: str) -> Any:
        """The result of ``fut`` (an actor call or the making of an actor on
        ``worker``), polled so that a lost worker is noticed: then
        :class:`_WorkerLost` (its actor dropped). An error the call raised
        (a bad filter, a shard moved) is raised as it is."""
        while True:
            try:
                return fut.result(timeout=POLL)
            except (TimeoutError, asyncio.TimeoutError):
                if not self._alive(worker):
                    self._drop(worker)
                    raise _WorkerLost(worker) from None
            except (OSError, RuntimeError) as exc:
                if not _lost(exc):
                    raise
                # (the actor's worker went away during the call, or before it)
                deadline = time.monotonic() + LOST_WAIT
                while self._alive(worker) and time.monotonic() < deadline:
                    time.sleep(0.05)
                self._drop(worker)
                raise _WorkerLost(worker) from None


def _lost(exc: BaseException) -> bool:
    """Is ``exc`` how Dask reports an actor's worker as gone (rather than an
    error the shard's pass raised)?"""
    if isinstance(exc, RuntimeError):
        return str(exc).startswith("Worker holding Actor was lost")
    from distributed.comm.core import CommClosedError

    return isinstance(exc, CommClosedError) or str(exc) == "Unable to contact Actor's worker"


class _WorkerLost(Exception):
    """A worker serving shards is gone (its calls are sent elsewhere)."""


def open_sharded(name_or_root: str | os.PathLike[str], client: Any = None) -> ShardedCorpus:
    """Open a sharded corpus by name (under :func:`rowvoi.corpus.corpora_dir`)
    or root directory, without loading any shard.

    Parameters
    ----------
    name_or_root : str or path
        A corpus name, or the root :func:`build_sharded` wrote.
    client : None, "local" or distributed.Client
        Where the shards are served: a ``distributed.Client`` (the shards
        load on its workers and stay there); ``"local"`` (in this
        process); ``None`` (the active client if there is one, else
        ``"local"``).

    Raises
    ------
    CorpusNotFound
        Nothing sharded there.
    ShardedCorpusError
        A damaged or foreign manifest.
    """
    s = os.fspath(name_or_root)
    name: str | None = None
    if os.sep in s or s.startswith(".") or Path(s).is_absolute():
        root = Path(s).expanduser().absolute()
    else:
        name = check_name(s)
        root = corpus_dir(name)
    if not is_sharded(root):
        raise CorpusNotFound(
            f"no sharded corpus at {root} (no {MANIFEST}); build it first: "
            f"rowvoi build {name or 'NAME'} ... --shards N"
        )
    corpus = ShardedCorpus(str(root), None, _resolve_client(client))
    corpus.name = name if name is not None else corpus._manifest["name"]
    return corpus


def remove_sharded(name_or_root: str | os.PathLike[str]) -> None:
    """Delete a sharded corpus: every shard (each under its own builder
    lock), the manifest and statistics files, then the root -- under the
    sharded build lock, so a running build is never pulled from under.

    Raises
    ------
    CorpusNotFound
        Nothing sharded there.
    ShardedCorpusError
        A build holds the lock, the manifest is not one rowvoi wrote, or the
        root holds files of its own (they are left, and named).
    """
    from rowvoi.corpus.storage.store import CorpusStore, remove_corpus

    corpus = open_sharded(name_or_root, client="local")
    top = Path(corpus.root)
    shards = corpus.shards

    def busy(holder: Mapping[str, Any]) -> BaseException:
        return ShardedCorpusError(
            f"the sharded corpus at {top} is being built by {holder_text(holder)}; "
            "remove it when the build is over"
        )

    with pid_lock(top / _LOCK_FILE, busy):
        for i in range(shards):
            store = CorpusStore(top / shard_dir_name(i))
            if store.exists():
                remove_corpus(store)
            with contextlib.suppress(FileNotFoundError):
                (top / f"{shard_dir_name(i)}.stats.json").unlink()
        for p in top.glob("stats-*.json"):
            p.unlink()
        (top / MANIFEST).unlink()
    (top / _LOCK_FILE).unlink()
    left = sorted(p.name for p in top.iterdir())
    if left:
        raise ShardedCorpusError(
            f"{top}: the shards and the manifest are removed; these files are not the "
            f"corpus's and were left: {', '.join(left)}"
        )
    top.rmdir()


def stats_file_name(generation: int) -> str:
    """The statistics file of a sharded generation (see the manifest)."""
    return stats_name(generation)
