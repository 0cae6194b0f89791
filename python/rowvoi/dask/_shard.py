"""One shard of a sharded corpus, opened where it is searched.

Everything here runs where a shard is served: on a Dask worker (threads
or processes, on any machine that reads the root), or in the caller's
process when no cluster is used. A shard is loaded once per (root, shard,
generation) into :data:`_CACHE` (worker-resident state: it stays loaded
between queries) with the collection's BM25 statistics applied to its
lexical index (:meth:`rowvoi.index.lexical.BM25Index.set_collection_stats`),
so that its BM25 scores are those of one index over all the shards'
documents; a worker that has not loaded it (a new worker, or one that took
over a lost worker's shards) loads it from storage on its first query.

:func:`shard_pass` answers a batch of queries on one shard: for each, the
shard's best ``fetch`` records on each side (dense: exact cosines of the
flat index; lexical: BM25 under the collection statistics), filters and
surface kinds applied inside the kernels, and for every record either side
returned, its exact score on the other side too (a blend, or the evidence
of an RRF hit, needs both): a record lives in exactly one shard, so the
merged candidates of the whole collection get every score they need from
this one round.
"""

from __future__ import annotations

import json
import pickle
import threading
from pathlib import Path
from typing import Any

import numpy as np

from rowvoi.corpus.retrieval.rank import Params
from rowvoi.corpus.storage.generation import Generation, Generations, Wanted, opened_in
from rowvoi.corpus.storage.store import CorpusStore
from rowvoi.errors import QueryError
from rowvoi.index._hot import any_nonzero

from ._manifest import ShardedCorpusError, read_stats, shard_dir_name

__all__ = [
    "LoadedShard",
    "ShardMoved",
    "shard",
    "shard_pass",
    "run_pass",
    "loaded_keys",
    "load_count",
    "metadata_of",
    "run_passes",
    "ShardServer",
    "pack",
    "unpack",
]


class ShardMoved(ShardedCorpusError):
    """A shard's committed generation is not the one the manifest names
    (a build is between its shard commits and its manifest)."""


class LoadedShard:
    """A shard's pinned generation, loaded, with collection statistics.

    Attributes
    ----------
    root : str
    index : int
    generation : int
        The shard generation the manifest named (0: never built).
    gen : Generation or None
        Indexes, record table and filter schema (None: an empty shard).
    """

    def __init__(self, root: str, index: int, generation: int, stats: dict[str, Any] | None):
        self.root = root
        self.index = index
        self.generation = generation
        self.store = CorpusStore(Path(root) / shard_dir_name(index))
        self.gen: Generation | None = None
        #: the statistics file applied; held by a pass and a change of them
        self.stats_name: str | None = None
        self.lock = threading.RLock()
        self.n_records = 0
        self.one_per_artifact = True
        if generation == 0:
            return
        holder = Generations(self.store)
        with self.store.snapshot() as snap:
            if snap.generation != generation:
                raise ShardMoved(
                    f"shard {index} of {root} is at generation {snap.generation}, the manifest "
                    f"names {generation}"
                )
            self.n_records = int(snap.state.get("n_records") or 0)
            if not self.n_records:
                return
            gen = holder.open(snap, lexical=True, dense=True, records=True)
        if gen.lexical is not None and stats is not None:
            gen.lexical.set_collection_stats(stats)
        self.gen = gen
        assert gen.records is not None
        self.one_per_artifact = gen.records.one_per_artifact


#: (root, shard index) -> the shard loaded last there (one generation each).
_CACHE: dict[tuple[str, int], LoadedShard] = {}
#: Shards this process has loaded from storage (a count, for monitoring).
LOADS = 0
_LOCK = threading.Lock()
#: (root, stats file) -> statistics read (the last file per root).
_STATS: dict[str, tuple[str, dict[str, Any]]] = {}


def _stats_of(root: str, manifest: dict[str, Any]) -> dict[str, Any] | None:
    name = manifest["stats"]
    if name is None:
        return None
    got = _STATS.get(root)
    if got is not None and got[0] == name:
        return got[1]
    try:
        stats = read_stats(root, manifest)
    except FileNotFoundError:
        # a newer build published its own statistics and removed these: the
        # caller reads the manifest again
        raise ShardMoved(
            f"the statistics file {name} of {root} was replaced by a newer generation"
        ) from None
    _STATS[root] = (name, stats)
    return stats


def shard(root: str, index: int, manifest: dict[str, Any]) -> LoadedShard:
    """Shard ``index`` of the sharded corpus at ``root`` at the generation
    ``manifest`` names: from this process's cache, else loaded (and kept,
    replacing an older generation of it). A shard still at the generation
    named, under new collection statistics (another shard changed), keeps
    its indexes and takes the new statistics (:func:`run_pass` holds the
    shard's lock, so no pass sees a mix)."""
    key = (root, index)
    want = manifest["shard_generations"][index]
    with _LOCK:
        cur = _CACHE.get(key)
        if cur is not None and cur.generation == want:
            if cur.gen is not None and cur.stats_name != manifest["stats"]:
                with cur.lock:
                    if cur.gen.lexical is not None:
                        cur.gen.lexical.set_collection_stats(_stats_of(root, manifest))
                    cur.stats_name = manifest["stats"]
            return cur
        loaded = LoadedShard(root, index, want, _stats_of(root, manifest))
        loaded.stats_name = manifest["stats"]
        _CACHE[key] = loaded
        global LOADS
        LOADS += 1
        return loaded


def loaded_keys() -> list[tuple[str, int, int]]:
    """(root, shard, generation) of every shard this process holds."""
    with _LOCK:
        return [(r, i, s.generation) for (r, i), s in _CACHE.items()]


def load_count() -> int:
    """Shards this process has loaded from storage so far."""
    return LOADS


def _none(reason: str) -> dict[str, Any]:
    return {"none": reason, "n_allowed": 0, "one": True}


def shard_pass(
    sh: LoadedShard,
    queries: list[str],
    qvecs: list[np.ndarray | None],
    p: Params,
    filter: dict[str, Any] | None,
    fetch: list[int],
) -> list[dict[str, Any]]:
    """The candidates of each query on one shard (see the module notes).

    Each result is ``{"none": reason, "n_allowed": 0}`` when the filter
    and surface kinds allow no record of the shard, else a dict of arrays
    over the union of the shard's dense and lexical candidates: ``d_ids``,
    ``d_sc`` (the dense list, best first), ``l_ids``, ``l_sc`` (the
    lexical list), ``ids`` (ascending), ``cos``, ``bm`` (each record's
    exact score on each side; NaN: that side has no score for it),
    ``fields`` (artifact id, kind, surface index, text, metadata per id),
    ``terms`` (per id, the BM25 terms with ``explain``), ``n_allowed``,
    ``tokens`` (the query's analysed terms).
    """
    gen = sh.gen
    if gen is None:
        return [_none("the shard is empty") for _ in queries]
    table = gen.records
    assert table is not None
    want_dense = p.mode in ("dense", "hybrid")
    want_lex = p.mode in ("lexical", "hybrid")
    snap_cm = None
    opened: Any = None
    need_snap = bool(filter) or not table.has_text
    if not need_snap and p.kinds is None:
        allowed, none_allowed = None, None
    else:
        want = Wanted(want_lex, want_dense, False, filter, p.kinds, None, "the corpus")
        snap_cm = sh.store.snapshot()
        snap = snap_cm.__enter__()
    try:
        if snap_cm is not None:
            if snap.generation != sh.generation:
                raise ShardMoved(
                    f"shard {sh.index} moved to generation {snap.generation} (the manifest "
                    f"names {sh.generation})"
                )
            try:
                opened = opened_in(gen, snap, want)
            except QueryError as exc:
                if not _absent_fields_only(exc, filter):
                    raise
                # fields no artifact of this shard has (another shard's
                # artifacts have them): no record here can match
                return [
                    dict(_none("no record matches the filter"), unknown=list(exc.problems))
                    for _ in queries
                ]
            allowed, none_allowed = opened.allowed, opened.none_allowed
        out = []
        for query, qvec, f in zip(queries, qvecs, fetch):
            if none_allowed is not None:
                out.append(_none(none_allowed))
                continue
            out.append(_one(gen, opened, query, qvec, p, allowed, f))
        return out
    finally:
        if snap_cm is not None:
            snap_cm.__exit__(None, None, None)


def _absent_fields_only(exc: QueryError, filter: Any) -> bool:
    """Does the filter fail on this shard only for naming fields it does
    not have? (Then none of its records can match -- unless the filter asks
    for a field's absence, ``$exists``, which such a shard cannot answer
    from its schema: that stays an error.)"""
    return (
        bool(exc.problems)
        and all("unknown column" in p for p in exc.problems)
        and "$exists" not in json.dumps(filter, default=str)
    )


_NO_I = np.zeros(0, dtype=np.int64)
_NO_F = np.zeros(0, dtype=np.float64)


def _one(
    gen: Generation,
    opened: Any,
    query: str,
    qvec: np.ndarray | None,
    p: Params,
    allowed: Any,
    f: int,
) -> dict[str, Any]:
    table = gen.records
    assert table is not None
    want_dense = p.mode in ("dense", "hybrid")
    want_lex = p.mode in ("lexical", "hybrid")
    n_allowed = len(table) if allowed is None else len(allowed)
    vec_ok = qvec is not None and gen.flat is not None and bool(any_nonzero(qvec))
    d_ids, d_sc = _NO_I, _NO_F
    if want_dense and vec_ok:
        d_ids, d_sc = gen.flat.search(
            qvec, f, filter=allowed, exact=True, n_threads=gen.scan_threads
        )
        d_ids = np.asarray(d_ids, dtype=np.int64)
        d_sc = np.asarray(d_sc, dtype=np.float64)
    l_ids, l_sc = _NO_I, _NO_F
    lex = gen.lexical
    if want_lex and lex is not None:
        res = lex.search(query, f, filter=allowed)
        l_ids = np.asarray(res.ids, dtype=np.int64)
        l_sc = np.asarray(res.scores, dtype=np.float64)
    ids = np.unique(np.concatenate([d_ids, l_ids]))
    n = len(ids)
    cos = np.full(n, np.nan)
    bm = np.full(n, np.nan)
    if n:
        cos[np.searchsorted(ids, d_ids)] = d_sc
        bm[np.searchsorted(ids, l_ids)] = l_sc
        if p.mode == "hybrid":
            need = ids[np.isnan(cos)]
            if len(need) and vec_ok:
                r = gen.flat.rescore(qvec, need, len(need))
                found = np.asarray(r.ids) >= 0
                rid = np.asarray(r.ids)[found]
                cos[np.searchsorted(ids, rid)] = np.asarray(r.scores)[found]
            need = ids[np.isnan(bm)]
            if len(need) and lex is not None:
                r2 = lex.search(query, len(need), filter=need)
                rid = np.asarray(r2.ids, dtype=np.int64)
                bm[np.searchsorted(ids, rid)] = np.asarray(r2.scores, dtype=np.float64)
    if n and table.has_text:
        fields = _raw_fields(table, table.positions(ids))
    elif n:
        rows = opened.rows(ids.tolist())
        fields = []
        for cid in ids.tolist():
            row = rows[cid]
            meta = json.loads(row["metadata"])
            meta.update(json.loads(row["filter_fields"]))
            fields.append(
                (row["artifact_id"], row["kind"], row["surface_index"], row["text"], meta)
            )
    else:
        fields = []
    terms: list[Any] = []
    if p.explain and lex is not None:
        in_lex = set(l_ids.tolist())
        for cid in ids.tolist():
            if cid in in_lex:
                terms.append(
                    [
                        {
                            "term": t.term,
                            "tf": t.tf,
                            "df": t.df,
                            "idf": t.idf,
                            "contribution": t.contribution,
                        }
                        for t in lex.explain(query, cid).terms
                    ]
                )
            else:
                terms.append(None)
    tokens = [] if lex is None else lex.analyzer.tokenize(query)
    return {
        "d_ids": d_ids,
        "d_sc": d_sc,
        "l_ids": l_ids,
        "l_sc": l_sc,
        "ids": ids,
        "cos": cos,
        "bm": bm,
        "fields": fields,
        "terms": terms,
        "n_allowed": n_allowed,
        "tokens": tokens,
        "vec_ok": vec_ok,
        "one": table.one_per_artifact,
        "filtered": allowed is not None,
    }


def _raw_fields(table: Any, pos: np.ndarray) -> list[tuple[str, str, int, str, Any]]:
    """``(artifact_id, kind, surface_index, text, (metadata, filter fields))``
    of the records at positions ``pos``, the two objects as their stored
    JSON bytes: decoded (:func:`metadata_of`) only for the records that
    become hits, after the merge."""
    texts, metas = table._texts, table._metadata
    t_blob, t_off = texts.blob, texts.offsets
    m_blob, m_off = metas.blob, metas.offsets
    ff = table._filter_fields
    f_blob, f_off = ff.blob, ff.offsets
    ai = table._artifact_ids
    a_blob, a_off = ai.blob, ai.offsets
    art, kind, surface = table._columns()
    kinds = table.kinds
    out = []
    for i in pos.tolist():
        a = art[i]
        out.append(
            (
                a_blob[a_off[a] : a_off[a + 1]].decode(),
                kinds[kind[i]],
                surface[i],
                t_blob[t_off[i] : t_off[i + 1]].decode(),
                (bytes(m_blob[m_off[i] : m_off[i + 1]]), bytes(f_blob[f_off[a] : f_off[a + 1]])),
            )
        )
    return out


def metadata_of(raw: Any) -> dict[str, Any]:
    """A hit's metadata from what :func:`shard_pass` returned for it: the
    surface's metadata updated with the artifact's filter fields."""
    if isinstance(raw, dict):
        return dict(raw)
    meta_b, ff_b = raw
    meta: dict[str, Any] = json.loads(meta_b) if meta_b else {}
    if ff_b:
        meta.update(json.loads(ff_b))
    return meta


def run_pass(
    root: str,
    index: int,
    manifest: dict[str, Any],
    queries: list[str],
    qvecs: list[np.ndarray | None],
    p: Params,
    filter: dict[str, Any] | None,
    fetch: list[int],
) -> list[dict[str, Any]]:
    """:func:`shard_pass` on shard ``index``, loaded here if need be (the
    task a worker runs)."""
    while True:
        sh = shard(root, index, manifest)
        with sh.lock:
            if sh.stats_name == manifest["stats"] or sh.gen is None:
                return shard_pass(sh, queries, qvecs, p, filter, fetch)
        # (another manifest's statistics were applied meanwhile: apply ours)


def run_passes(
    root: str,
    indexes: list[int],
    manifest: dict[str, Any],
    queries: list[str],
    qvecs: list[np.ndarray | None],
    p: Params,
    filter: dict[str, Any] | None,
    fetch: list[int],
) -> list[list[dict[str, Any]]]:
    """:func:`run_pass` on each of the shards ``indexes`` (those one worker
    serves), in that order."""
    return [run_pass(root, i, manifest, queries, qvecs, p, filter, fetch) for i in indexes]


class ShardServer:
    """The Dask actor through which a worker serves its shards.

    A client holds one per worker it sends shards to; a call of
    :meth:`passes` goes straight from the client to the worker (no
    scheduler, no task, no second trip to fetch the result), and the shards
    it loads stay in the worker process's cache (:func:`shard`) between
    calls, as they would for a task. Its argument and its result each
    travel as one pickle (:func:`pack`, :func:`unpack`): Dask would
    otherwise walk the nested lists, dicts and arrays item by item to
    serialise them, which took longer than the pass itself (lexical p50 at
    20k documents under load: 48 ms per query, 11 ms as pickles; the study
    ``python -m bench run dask_corpus_serving`` sets this serving against
    the pinned task per shard it replaced).
    """

    def passes(self, root: str, indexes: list[int], args: bytes) -> bytes:
        """:func:`run_passes` of the shards ``indexes`` in the worker that
        holds this actor; ``args``: ``pack((manifest, queries, qvecs, p,
        filter, fetch))``, the answer ``pack``-ed too."""
        manifest, queries, qvecs, p, filter, fetch = unpack(args)
        return pack(run_passes(root, indexes, manifest, queries, qvecs, p, filter, fetch))


def pack(obj: Any) -> bytes:
    """``obj`` as one pickle, for a call between a client and the workers
    of its own cluster (:class:`ShardServer`)."""
    return pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)


def unpack(blob: bytes) -> Any:
    """What :func:`pack` made, unpickled: only ever a blob from the client
    or a worker of the same cluster (as Dask itself unpickles what they
    send)."""
    return pickle.loads(blob)
