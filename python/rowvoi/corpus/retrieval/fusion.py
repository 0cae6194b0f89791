"""Fuse ranked hit lists from several sources by rank, never by raw score.

Scores from different corpora (or modes, or embedders) live on scales that
cannot be compared: a cosine of 0.6 in one corpus says nothing about a BM25
score of 12 in another. :func:`fuse_hits` therefore lets raw scores order
and de-duplicate hits *within* each source only; across sources only ranks
meet, by weighted reciprocal rank fusion (Cormack, Clarke and Buettcher,
SIGIR 2009)::

    fused(d) = sum over lists L holding d of  weight(L) / (rrf_k + rank_L(d))

with ranks starting at 1. The fused score is ordinal -- good for ordering
and relative cuts (:func:`rowvoi.corpus.select`), meaningless against an
absolute floor, so floors are applied per source, before fusion
(:func:`rowvoi.corpus.discover` does this).

Identity: by default a result is ``(source, artifact_id)``, so the same id
in two corpora stays two results. ``identity="pointer"`` merges hits whose
:attr:`~rowvoi.corpus.base.SearchHit.pointer` is equal (corpora that index
the same files); a callable ``hit -> hashable`` merges hits with equal keys
(a falsy key falls back to ``(source, artifact_id)``).

Everything here is pure (input hits are never modified) and thread-safe.

>>> from rowvoi.corpus.base import SearchHit
>>> a = [SearchHit("x", "document", 0.9, ""), SearchHit("y", "document", 0.5, "")]
>>> b = [SearchHit("y", "document", 14.0, ""), SearchHit("z", "document", 3.0, "")]
>>> fused = fuse_hits({"docs": a, "wiki": b}, rrf_k=60)
>>> [(h.source, h.artifact_id, round(h.score * 61, 4)) for h in fused]
[('docs', 'x', 1.0), ('wiki', 'y', 1.0), ('docs', 'y', 0.9839), ('wiki', 'z', 0.9839)]
>>> fused[1].metadata["source_score"], fused[1].metadata["source_rank"]
(14.0, 1)
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

from rowvoi import _validate as _v
from rowvoi._validate import integer as _check_int
from rowvoi.corpus.base import SearchHit, tag_source
from rowvoi.corpus.retrieval.rank import DFLT_RRF_K
from rowvoi.corpus.retrieval.selection import ranked

__all__ = ["fuse_hits", "Identity", "DFLT_RRF_K"]

#: How cross-source duplicates are recognised: ``None`` (never merge),
#: ``"pointer"`` (equal pointers merge) or a callable ``hit -> hashable``.
Identity = None | str | Callable[[SearchHit], Hashable]


def _check_weights(weights: Mapping[Any, Any] | None) -> dict[Any, float]:
    if weights is None:
        return {}
    if not isinstance(weights, Mapping):
        raise TypeError(
            f"weights must be a mapping source -> weight, got {type(weights).__name__}"
        )
    out: dict[Any, float] = {}
    for name, w in weights.items():
        if isinstance(w, bool) or not isinstance(w, numbers.Real) or not math.isfinite(w) or w < 0:
            raise ValueError(f"weights[{name!r}] must be a finite number >= 0, got {w!r}")
        out[name] = float(w)
    return out


def _identity_fn(identity: Identity) -> Callable[[SearchHit], Hashable]:
    """``hit -> key``; keys of the default identity and of ``identity``
    never collide (they are tagged)."""
    if identity is None:
        return lambda h: ("hit", h.source, h.artifact_id)
    if isinstance(identity, str):
        if identity != "pointer":
            raise ValueError(
                f"unknown identity {identity!r}; use None, 'pointer' or a "
                "callable hit -> hashable key"
            )

        def by_pointer(h: SearchHit) -> Hashable:
            p = h.pointer
            return ("key", "pointer", p) if p else ("hit", h.source, h.artifact_id)

        return by_pointer
    if not callable(identity):
        raise TypeError(
            f"identity must be None, 'pointer' or a callable, got {type(identity).__name__}"
        )

    def by_callable(h: SearchHit) -> Hashable:
        key = identity(h)
        if not key:
            return ("hit", h.source, h.artifact_id)
        try:
            hash(key)
        except TypeError:
            raise TypeError(
                f"identity returned an unhashable key {key!r} for {h.artifact_id!r}"
            ) from None
        return ("key", key)

    return by_callable


def _dedupe(hits: list[SearchHit], key: Callable[[SearchHit], Hashable]) -> list[SearchHit]:
    """One hit per identity, the best-scoring one; ``hits`` is ranked, so
    that is the first occurrence."""
    seen: set[Hashable] = set()
    out: list[SearchHit] = []
    for h in hits:
        k = key(h)
        if k not in seen:
            seen.add(k)
            out.append(h)
    return out


def fuse_hits(
    hits_by_source: Mapping[str | None, Sequence[SearchHit]],
    *,
    rrf_k: float = DFLT_RRF_K,
    weights: Mapping[str, float] | None = None,
    identity: Identity = None,
    k: int | None = None,
) -> list[SearchHit]:
    """Merge per-source ranked hit lists into one ranking, by rank.

    Parameters
    ----------
    hits_by_source : Mapping[str or None, Sequence[SearchHit]]
        ``{source name: hits}``. Hits without a ``source`` are stamped with
        their key (existing tags win, so one corpus under two keys still
        counts as one source); the key ``None`` holds untagged hits, which
        stay untagged. Within each list hits are ranked by their own score
        and duplicates (by identity) collapse to the best one before ranks
        are counted.
    rrf_k : float
        The rank constant (>= 0; default 60).
    weights : Mapping[str, float] or None
        Per-list trust, by key (default 1.0; finite, >= 0). Keys naming no
        list are ignored.
    identity : None, "pointer" or callable
        How hits from different lists are recognised as one result (see the
        module docstring). Default: ``(source, artifact_id)``.
    k : int or None
        Keep at most this many fused hits.

    Returns
    -------
    list[SearchHit]
        Best first. With two or more lists (even if some are empty) each hit
        carries its fused score in ``score`` and, in ``metadata``,
        ``source_score`` and ``source_rank`` (its raw score and rank in its
        own list) and ``fused_sources`` (the sources of every list that held
        the result, in mapping order). The representative of a merged
        result is its best-ranked hit (ties: the earlier list). Ties in
        fused score go to the better rank, then the earlier list. A single
        list passes through with its raw scores (ranked, de-duplicated,
        tagged), since there is nothing to fuse.

    Raises
    ------
    ValueError
        ``rrf_k`` < 0, a negative or non-finite weight, ``k`` < 1, an
        unknown identity name, or a non-finite score.
    TypeError
        ``hits_by_source`` is not a mapping, or holds a non-hit; ``k`` is not
        an integer.

    Examples
    --------
    The same file indexed by two corpora merges under ``identity="pointer"``:

    >>> from rowvoi.corpus.base import SearchHit
    >>> a = [SearchHit("1", "document", 0.8, "", {"path": "/d/x.md"})]
    >>> b = [SearchHit("x.md", "chunk", 7.0, "", {"path": "/d/x.md"})]
    >>> [h.artifact_id for h in fuse_hits({"a": a, "b": b})]
    ['1', 'x.md']
    >>> (one,) = fuse_hits({"a": a, "b": b}, identity="pointer")
    >>> one.artifact_id, one.metadata["fused_sources"], round(one.score, 5)
    ('1', ['a', 'b'], 0.03279)
    """
    if not isinstance(hits_by_source, Mapping):
        raise TypeError(
            f"hits_by_source must be a mapping source -> hits, got {type(hits_by_source).__name__}"
        )
    rrf = _v.real("rrf_k", rrf_k, low=0.0, finite=True)
    w = _check_weights(weights)
    limit = None if k is None else _check_int("k", k, 1)
    key = _identity_fn(identity)
    lists: list[tuple[Any, list[SearchHit]]] = []
    for name, hits in hits_by_source.items():
        tagged = tag_source(ranked(hits), name)
        lists.append((name, _dedupe(tagged, key)))
    if len(lists) == 1:
        only = lists[0][1]
        return only if limit is None else only[:limit]

    # per result: [fused score, best rank, list position of best, hit, sources]
    fused: dict[Hashable, list[Any]] = {}
    order: list[Hashable] = []
    for li, (name, hits) in enumerate(lists):
        weight = w.get(name, 1.0)
        for rank, h in enumerate(hits, start=1):
            kk = key(h)
            entry = fused.get(kk)
            if entry is None:
                entry = fused[kk] = [0.0, rank, li, h, []]
                order.append(kk)
            elif rank < entry[1]:
                entry[1], entry[2], entry[3] = rank, li, h
            entry[0] += weight / (rrf + rank)
            if h.source not in entry[4]:
                entry[4].append(h.source)
    ranked_keys = sorted(
        range(len(order)),
        key=lambda i: (-fused[order[i]][0], fused[order[i]][1], fused[order[i]][2], i),
    )
    out: list[SearchHit] = []
    for i in ranked_keys[:limit] if limit is not None else ranked_keys:
        score, rank, _li, h, sources = fused[order[i]]
        meta = dict(h.metadata)
        meta["source_score"] = float(h.score)
        meta["source_rank"] = int(rank)
        meta["fused_sources"] = list(sources)
        out.append(dataclasses.replace(h, score=float(score), metadata=meta))
    return out
