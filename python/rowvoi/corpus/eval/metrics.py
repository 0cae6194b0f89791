"""Ranking metrics, defined as trec_eval defines them.

Each metric takes a ranking (artifact ids, best first), the judgements of
one query as ``{artifact id: gain}`` and a cutoff ``k``:

``ndcg``
    trec_eval's ``ndcg_cut_k``: DCG of the top ``k`` with the judged gains
    (``gain / log2(rank + 1)``), over the DCG of the ideal ordering of all
    judged gains, cut at ``k``.
``precision``
    ``P_k``: relevant ids in the top ``k``, over ``k`` (a ranking shorter
    than ``k`` is padded with non-relevant results, as trec_eval does).
``recall``
    ``recall_k``: relevant ids in the top ``k`` over all relevant ids.
``mrr``
    reciprocal rank of the first relevant id within the top ``k`` (0 when
    none); trec_eval's ``recip_rank`` when the ranking is ``k`` deep.
``map``
    ``map_cut_k``: the sum of the precision at each relevant id in the top
    ``k``, over all relevant ids; trec_eval's ``map`` when the ranking is
    ``k`` deep.

An id is *relevant* when its gain is > 0 (trec_eval: judged at level >= 1,
which integer judgements >= 1 satisfy alike). A ranking that repeats an id
counts it at its first position only.

Ties. These functions score the ranking in the order given. trec_eval
re-sorts a run file by score, breaking ties by document id *descending*;
:func:`rank_run` applies that rule to ``{id: score}``, and :func:`to_run`
writes a ranking with scores that make its order explicit (strictly
decreasing), so trec_eval scores exactly the order rowvoi scored. rowvoi's
own searches break ties by input order (see
:func:`rowvoi.corpus.retrieval.selection.ranked`).

All functions are pure and thread-safe.

>>> gains = {"a": 3, "c": 1}
>>> round(ndcg_at(["a", "b", "c"], gains, 3), 4), precision_at(["a", "b", "c"], gains, 2)
(0.9639, 0.5)
>>> recall_at(["b", "c"], gains, 2), reciprocal_rank(["b", "c"], gains, 10)
(0.5, 0.5)
>>> average_precision(["a", "b", "c"], gains, 10)  # (1/1 + 2/3) / 2
0.8333333333333333
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from rowvoi.corpus.eval.cases import write_text_atomic

__all__ = [
    "METRICS",
    "ndcg_at",
    "precision_at",
    "recall_at",
    "reciprocal_rank",
    "average_precision",
    "rank_run",
    "to_run",
    "write_run",
    "write_qrels",
]


def _unique(ranking: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(ranking))


def _relevant(gains: Mapping[str, float]) -> set[str]:
    return {d for d, g in gains.items() if g > 0}


def ndcg_at(ranking: Sequence[str], gains: Mapping[str, float], k: int) -> float:
    """Normalised DCG of the top ``k`` (0.0 without relevant ids)."""
    ranking = _unique(ranking)[:k]
    ideal = sorted((float(g) for g in gains.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    if idcg <= 0:
        return 0.0
    dcg = sum(max(float(gains.get(d, 0.0)), 0.0) / math.log2(i + 2) for i, d in enumerate(ranking))
    return dcg / idcg


def precision_at(ranking: Sequence[str], gains: Mapping[str, float], k: int) -> float:
    """Relevant ids in the top ``k``, over ``k``."""
    rel = _relevant(gains)
    return sum(1 for d in _unique(ranking)[:k] if d in rel) / k


def recall_at(ranking: Sequence[str], gains: Mapping[str, float], k: int) -> float:
    """Relevant ids in the top ``k``, over all relevant ids (0.0 without any)."""
    rel = _relevant(gains)
    if not rel:
        return 0.0
    return sum(1 for d in _unique(ranking)[:k] if d in rel) / len(rel)


def reciprocal_rank(ranking: Sequence[str], gains: Mapping[str, float], k: int) -> float:
    """1 / rank of the first relevant id in the top ``k`` (0.0 if none)."""
    rel = _relevant(gains)
    for i, d in enumerate(_unique(ranking)[:k]):
        if d in rel:
            return 1.0 / (i + 1)
    return 0.0


def average_precision(ranking: Sequence[str], gains: Mapping[str, float], k: int) -> float:
    """Average precision of the top ``k`` (divided by all relevant ids)."""
    rel = _relevant(gains)
    if not rel:
        return 0.0
    hits, total = 0, 0.0
    for i, d in enumerate(_unique(ranking)[:k]):
        if d in rel:
            hits += 1
            total += hits / (i + 1)
    return total / len(rel)


#: The metric functions by name: ``f(ranking, gains, k) -> float``.
METRICS: dict[str, Callable[[Sequence[str], Mapping[str, float], int], float]] = {
    "ndcg": ndcg_at,
    "recall": recall_at,
    "precision": precision_at,
    "mrr": reciprocal_rank,
    "map": average_precision,
}


def rank_run(scores: Mapping[str, float]) -> list[str]:
    """The ids of ``{id: score}`` in trec_eval's order: score descending,
    ties by id descending (string order).

    >>> rank_run({"d1": 0.5, "d3": 0.5, "d2": 0.9})
    ['d2', 'd3', 'd1']
    """
    return [d for d, _ in sorted(scores.items(), key=lambda t: (-float(t[1]), _Desc(t[0])))]


class _Desc:
    """Sort key wrapper inverting string order."""

    __slots__ = ("s",)

    def __init__(self, s: str) -> None:
        self.s = s

    def __lt__(self, other: _Desc) -> bool:
        return self.s > other.s

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Desc) and self.s == other.s


def to_run(rankings: Mapping[str, Sequence[str]]) -> dict[str, dict[str, float]]:
    """``{qid: {id: score}}`` with scores ``n, n-1, ..., 1`` down each
    ranking (``n`` its length), so that any tool re-sorting by score sees
    exactly the given order (no ties to break).

    >>> to_run({"q1": ["b", "a", "b"]})
    {'q1': {'b': 2.0, 'a': 1.0}}
    """
    out: dict[str, dict[str, float]] = {}
    for qid, ranking in rankings.items():
        ids = _unique(ranking)
        out[qid] = {d: float(len(ids) - i) for i, d in enumerate(ids)}
    return out


def write_run(
    path: str | os.PathLike[str], rankings: Mapping[str, Sequence[str]], *, tag: str = "rowvoi"
) -> Path:
    """Write rankings as a TREC run file (``qid Q0 id rank score tag``),
    scores from :func:`to_run`. Ids must not contain whitespace.
    """
    lines = []
    for qid, scores in to_run(rankings).items():
        for rank, (d, s) in enumerate(scores.items(), 1):
            if any(c.isspace() for c in d):
                raise ValueError(f"id {d!r} contains whitespace; a TREC run file cannot hold it")
            lines.append(f"{qid} Q0 {d} {rank} {s:g} {tag}\n")
    return write_text_atomic(path, "".join(lines))


def write_qrels(path: str | os.PathLike[str], qrels: Mapping[str, Mapping[str, float]]) -> Path:
    """Write judgements as a TREC qrels file (``qid 0 id gain``); gains
    must be integers, as trec_eval reads them."""
    lines = []
    for qid, judged in qrels.items():
        for d, g in judged.items():
            if float(g) != int(g):
                raise ValueError(f"trec_eval reads integer judgements; {qid}/{d} has {g!r}")
            lines.append(f"{qid} 0 {d} {int(g)}\n")
    return write_text_atomic(path, "".join(lines))
