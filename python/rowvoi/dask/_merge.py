"""Merge the shards' candidates into the hits of one corpus.

The shards each return their best ``fetch_k`` records per side
(:func:`rowvoi.dask._shard.shard_pass`), scored on the collection's scale
(exact cosines; BM25 under the collection's statistics), with the exact
other-side score of each. The collection's candidate list of a side is the
best ``fetch_k`` of their union -- exact, since each of those records is
among its own shard's best ``fetch_k`` -- and from there on this module
does what :func:`rowvoi.corpus.retrieval.rank.rank` does on one corpus, in
the same order and with the same arithmetic: result order (score, then
artifact id, then surface index), fusion (RRF over the merged lists'
ranks, or the blend of both exact scores), surface weights, RRF ties
ordered by evidence, the cut at ``fetch_k``, the per-artifact collapse
(an artifact lives in one shard, so collapsing after the merge is exact),
the top ``k``, and each hit's ``explain``.

One difference is inherent: a single index breaks exact ties *at its own
``fetch_k`` cut* by record id, which depends on the build history; the
merge breaks them by artifact id and surface index. Results differ only
when records with equal scores straddle a ``fetch_k`` cut.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rowvoi.corpus.base import SearchHit, new_hit
from rowvoi.corpus.retrieval.rank import Params

from ._shard import metadata_of

__all__ = ["Merged", "merge"]

#: Why a dense search finds nothing for an all-zero query vector.
_ZERO_VECTOR = (
    "the query's embedding is the zero vector (nothing in the query the "
    "embedder represents), so no cosine can rank the records"
)


class Merged:
    """The merged candidates of one query (see :func:`merge`)."""

    def __init__(self, hits: list[SearchHit], cut: bool, n_allowed: int, reason: str | None):
        self.hits = hits
        self.cut = cut
        self.n_allowed = n_allowed
        self.reason = reason


def _order(scores: np.ndarray, art: np.ndarray, surf: np.ndarray, tie: Any = None) -> np.ndarray:
    """Result order: score desc, (tie desc), artifact rank, surface index."""
    if tie is None:
        return np.lexsort((surf, art, -scores))
    return np.lexsort((surf, art, -tie, -scores))


def merge(
    parts: list[dict[str, Any]],
    query_has_vec: bool,
    p: Params,
    name: str | None,
    fetch_k: int,
) -> Merged:
    """The hits of one query from its shards' candidates ``parts`` (one
    :func:`~rowvoi.dask._shard.shard_pass` result per shard), searched with
    ``fetch_k`` candidates per side."""
    live = [(s, r) for s, r in enumerate(parts) if "none" not in r]
    n_allowed = sum(r["n_allowed"] for _, r in live)
    if not live:
        reasons = [r["none"] for r in parts if r["none"] != "the shard is empty"]
        return Merged([], False, 0, reasons[0] if reasons else "no record matches the filter")
    # one table of every record any shard returned: key = (shard, local id)
    shard_of: list[int] = []
    local: list[int] = []
    cos_l: list[float] = []
    bm_l: list[float] = []
    fields: list[Any] = []
    terms: list[Any] = []
    d_rows: list[tuple[int, float]] = []
    l_rows: list[tuple[int, float]] = []
    tokens: list[str] = []
    vec_ok = False
    filtered = any(r["filtered"] for _, r in live)
    for s, r in live:
        base = len(local)
        ids = r["ids"]
        n = len(ids)
        shard_of.extend([s] * n)
        local.extend(ids.tolist())
        cos_l.extend(r["cos"].tolist())
        bm_l.extend(r["bm"].tolist())
        fields.extend(r["fields"])
        terms.extend(r["terms"] if r["terms"] else [None] * n)
        at = {cid: base + j for j, cid in enumerate(ids.tolist())}
        d_rows.extend((at[c], sc) for c, sc in zip(r["d_ids"].tolist(), r["d_sc"].tolist()))
        l_rows.extend((at[c], sc) for c, sc in zip(r["l_ids"].tolist(), r["l_sc"].tolist()))
        if not tokens:
            tokens = r["tokens"]
        vec_ok = vec_ok or bool(r["vec_ok"])
    n = len(local)
    if not n:
        return Merged([], False, n_allowed, _why_empty(p, query_has_vec, vec_ok, tokens, filtered))
    art_ids = [f[0] for f in fields]
    # artifact ranks in code point order (comparing ranks compares ids)
    uniq = sorted(set(art_ids))
    rank_of = {a: i for i, a in enumerate(uniq)}
    art = np.array([rank_of[a] for a in art_ids], dtype=np.int64)
    surf = np.array([int(f[2]) for f in fields], dtype=np.int64)
    cos = np.array(cos_l, dtype=np.float64)
    bm = np.array(bm_l, dtype=np.float64)

    def side(rows: list[tuple[int, float]]) -> tuple[np.ndarray, np.ndarray]:
        """The collection's list of a side: best fetch_k, in result order."""
        if not rows:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        ix = np.array([r[0] for r in rows], dtype=np.int64)
        sc = np.array([r[1] for r in rows], dtype=np.float64)
        o = _order(sc, art[ix], surf[ix])[:fetch_k]
        return ix[o], sc[o]

    d_ix, d_sc = side(d_rows)
    l_ix, l_sc = side(l_rows)
    cut = len(d_ix) >= fetch_k or len(l_ix) >= fetch_k
    if p.mode == "dense":
        c_ix, c_sc = d_ix, d_sc
    elif p.mode == "lexical":
        c_ix, c_sc = l_ix, l_sc
    else:
        c_ix = np.unique(np.concatenate([d_ix, l_ix]))
        if p.fusion == "rrf":
            acc = np.zeros(len(c_ix), dtype=np.float64)
            acc[np.searchsorted(c_ix, d_ix)] += 1.0 / (p.rrf_k + np.arange(1, len(d_ix) + 1))
            acc[np.searchsorted(c_ix, l_ix)] += 1.0 / (p.rrf_k + np.arange(1, len(l_ix) + 1))
        else:
            acc = _blend(cos, bm, c_ix, p)
        o = _order(acc, art[c_ix], surf[c_ix])
        c_ix, c_sc = c_ix[o], acc[o]
    if not len(c_ix):
        return Merged([], False, n_allowed, _why_empty(p, query_has_vec, vec_ok, tokens, filtered))
    cut = cut or len(c_ix) > fetch_k
    if p.weights:
        w = np.array([p.weights.get(fields[i][1], 1.0) for i in c_ix.tolist()], dtype=np.float64)
        c_sc = c_sc * w
        o = _order(c_sc, art[c_ix], surf[c_ix])
        c_ix, c_sc = c_ix[o], c_sc[o]
    known: dict[int, float] = {}
    if p.mode == "hybrid" and p.fusion == "rrf":
        c_ix, c_sc, known = _rrf_ties(c_ix, c_sc, art, surf, cos, bm, p, fetch_k)
    c_ix, c_sc = c_ix[:fetch_k], c_sc[:fetch_k]
    if p.per_artifact:
        seen: set[int] = set()
        keep: list[int] = []
        for i, a in enumerate(art[c_ix].tolist()):
            if a not in seen:
                seen.add(a)
                keep.append(i)
                if len(keep) == p.k:
                    break
        c_ix, c_sc = c_ix[keep], c_sc[keep]
    else:
        c_ix, c_sc = c_ix[: p.k], c_sc[: p.k]
    evidence: dict[int, float] = {}
    if p.mode == "hybrid" and p.fusion == "rrf":
        need = [i for i in c_ix.tolist() if i not in known]
        evidence = dict(known)
        if need:
            got = _blend(cos, bm, np.array(need, dtype=np.int64), p)
            evidence.update(zip(need, got.tolist()))
    d_rank = {i: r for r, i in enumerate(d_ix.tolist(), 1)}
    l_rank = {i: r for r, i in enumerate(l_ix.tolist(), 1)}
    d_scores, l_scores = d_sc.tolist(), l_sc.tolist()
    hybrid = p.mode == "hybrid"
    hits = []
    for i, score in zip(c_ix.tolist(), c_sc.tolist()):
        artifact_id, kind, surface_index, text, meta = fields[i]
        dr, lr = d_rank.get(i), l_rank.get(i)
        why: dict[str, Any] = {
            "mode": p.mode,
            "answered_by": (["flat"] if dr else []) + (["bm25"] if lr else []),
            "dense": None if dr is None else {"rank": dr, "cosine": d_scores[dr - 1]},
            "lexical": None if lr is None else {"rank": lr, "bm25": l_scores[lr - 1]},
            "surface_weight": 1.0 if not p.weights else p.weights.get(kind, 1.0),
        }
        if hybrid:
            why["fusion"] = p.fusion
            why["fused"] = score
        if p.explain and lr is not None and terms[i] is not None:
            why["lexical"]["terms"] = terms[i]
        if i in evidence:
            why["evidence"] = evidence[i]
        why["shard"] = shard_of[i]
        hits.append(
            new_hit(
                artifact_id,
                kind,
                score,
                text,
                metadata_of(meta),
                name,
                surface_index,
                local[i],
                why,
            )
        )
    return Merged(hits, cut, n_allowed, None)


def _blend(cos: np.ndarray, bm: np.ndarray, ix: np.ndarray, p: Params) -> np.ndarray:
    """alpha * cosine + (1 - alpha) * bm25 / (bm25 + sat_k) of records ix
    (a side without a score for a record counts 0, as on one corpus)."""
    c = np.nan_to_num(cos[ix], nan=0.0)
    b = np.nan_to_num(bm[ix], nan=0.0)
    b = np.where(b < 0.0, 0.0, b)
    out: np.ndarray = p.alpha * c + (1.0 - p.alpha) * b / (b + p.sat_k)
    return out


def _rrf_ties(
    c_ix: np.ndarray,
    sc: np.ndarray,
    art: np.ndarray,
    surf: np.ndarray,
    cos: np.ndarray,
    bm: np.ndarray,
    p: Params,
    fetch_k: int,
) -> tuple[np.ndarray, np.ndarray, dict[int, float]]:
    """Equal RRF scores ordered by evidence, as
    :func:`rowvoi.corpus.retrieval.rank._break_rrf_ties` orders them."""
    n = min(len(sc), fetch_k)
    if n < 2:
        return c_ix, sc, {}
    if p.per_artifact:
        firsts = np.sort(np.unique(art[c_ix[:n]], return_index=True)[1])
        last = int(firsts[p.k - 1]) if len(firsts) >= p.k else n - 1
    else:
        last = min(p.k, n) - 1
    srt = np.sort(sc)
    shared = srt[1:][srt[1:] == srt[:-1]]
    shared = shared[shared >= sc[last]]
    if not len(shared):
        return c_ix, sc, {}
    tied = np.isin(sc, shared)
    tie = np.zeros(len(sc), dtype=np.float64)
    tie[tied] = _blend(cos, bm, c_ix[tied], p)
    o = _order(sc, art[c_ix], surf[c_ix], tie)
    known = dict(zip(c_ix[tied].tolist(), tie[tied].tolist()))
    return c_ix[o], sc[o], known


def _why_empty(p: Params, has_vec: bool, vec_ok: bool, tokens: list[str], filtered: bool) -> str:
    """Why a search that ran found nothing (as one corpus says it)."""
    why = []
    if p.mode != "lexical":
        if has_vec and not vec_ok:
            why.append(_ZERO_VECTOR)
        else:
            why.append("the vector index returned no record")
    if p.mode != "dense":
        if not tokens:
            why.append(
                "the query has no searchable terms (the analyzer drops punctuation and stopwords)"
            )
        else:
            among = " (of those the filter and surface kinds allow)" if filtered else ""
            shown = ", ".join(map(repr, list(dict.fromkeys(tokens))[:8]))
            why.append(f"no record{among} contains a query term (analysed: {shown})")
    return "; and ".join(why)
