"""Score a corpus's ranking against evaluation cases.

:func:`evaluate_discovery` searches once per case and reports, in one pass:

* the ranking metrics of :mod:`~rowvoi.corpus.eval.metrics` (nDCG,
  recall, precision, MRR, MAP) at every cutoff asked for, averaged over the
  cases that have gold, with the cases' graded gains;
* a failure class per case. With gold: ``hit_rank_1`` (a gold id ranks
  first), ``surfaced_low_rank`` (the best gold id ranks 2..``primary_k``),
  ``retrieval_miss`` (no gold id in the top ``primary_k``). Without gold
  (abstention cases): ``abstention_ok`` (the top score is below
  ``abstain_threshold``, or nothing was found), ``false_action`` (the top
  score reaches it) or ``abstention_unscored`` (no threshold given);
* one row per case (its metrics, gold rank, top score and class) and the
  rankings themselves, exportable as a TREC run file
  (:meth:`DiscoveryReport.write_run`).

An input of abstention cases only is tolerated: the metrics are then empty
and :attr:`DiscoveryReport.primary` is None. :func:`retrieval_report` is
the metrics-only path; it scores any retriever (a corpus or a function
``query, *, limit -> [ids]``) and raises ``ValueError`` when no case has
gold, since there is nothing to measure.

The searches run one after another; the functions are thread-safe (a
corpus may be searched from many threads) and deterministic.

Examples
--------
>>> from rowvoi.corpus import CorpusStore, build, from_mapping
>>> from rowvoi.corpus.eval import DiscoveryCase, evaluate_discovery
>>> docs = {"a": "wing stall at high angle of attack",
...         "b": "boundary layer transition on a flat plate",
...         "c": "shock waves in supersonic nozzles"}
>>> aero = build(from_mapping(docs, embedder="hashing"), store=CorpusStore.memory(),
...              progress=False)
>>> cases = [DiscoveryCase("stall of a wing", ["a"]),
...          DiscoveryCase("supersonic shock", ["c"]),
...          DiscoveryCase("pasta recipes", [])]
>>> report = evaluate_discovery(aero, cases, mode="lexical", k_values=(1, 3))
>>> report.metrics["ndcg@1"], report.failure_classes
(1.0, {'hit_rank_1': 2, 'abstention_unscored': 1})
"""

from __future__ import annotations

import math
import numbers
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rowvoi.corpus.eval.cases import DiscoveryCase, case_id, to_qrels
from rowvoi.corpus.eval.metrics import METRICS, write_run

__all__ = [
    "DFLT_K_VALUES",
    "DFLT_METRICS",
    "DFLT_MODE",
    "FAILURE_CLASSES",
    "Retriever",
    "RetrievalReport",
    "DiscoveryReport",
    "as_doc_retriever",
    "evaluate_discovery",
    "retrieval_report",
]

#: Cutoffs reported by default.
DFLT_K_VALUES = (1, 5, 10)
#: Metrics reported by default (every name of :data:`~rowvoi.corpus.eval.metrics.METRICS`).
DFLT_METRICS = ("ndcg", "recall", "precision", "mrr", "map")
#: The search mode evaluated by default.
DFLT_MODE = "hybrid"
#: Every failure class, gold cases first.
FAILURE_CLASSES = (
    "hit_rank_1",
    "surfaced_low_rank",
    "retrieval_miss",
    "abstention_ok",
    "false_action",
    "abstention_unscored",
)

#: ``retriever(query, *, limit) -> [artifact ids, best first]``.
Retriever = Callable[..., Sequence[str]]
#: ``progress(done, total)``, called after each case.
Progress = Callable[[int, int], None]


# ----------------------------------------------------------------- checks
def check_cases(cases: Any) -> list[DiscoveryCase]:
    """``cases`` as a list, every item a :class:`DiscoveryCase` (``TypeError``
    otherwise)."""
    if isinstance(cases, (str, bytes, DiscoveryCase)) or not hasattr(cases, "__iter__"):
        raise TypeError("cases must be a sequence of DiscoveryCase (see load_cases)")
    out = list(cases)
    for i, c in enumerate(out):
        if not isinstance(c, DiscoveryCase):
            raise TypeError(f"cases[{i}] is a {type(c).__name__}, not a DiscoveryCase")
    return out


def check_k_values(k_values: Any, primary_k: int | None = None) -> tuple[int, ...]:
    """Sorted, de-duplicated cutoffs (each an integer >= 1), with
    ``primary_k`` included."""
    from rowvoi._validate import integer as _check_int

    if isinstance(k_values, numbers.Integral) and not isinstance(k_values, bool):
        k_values = (k_values,)
    if isinstance(k_values, (str, bytes)) or not hasattr(k_values, "__iter__"):
        raise TypeError(f"k_values must be a sequence of integers, got {k_values!r}")
    ks = {_check_int("k", k, 1) for k in k_values}
    if primary_k is not None:
        ks.add(_check_int("primary_k", primary_k, 1))
    if not ks:
        raise ValueError("k_values is empty; give at least one cutoff")
    return tuple(sorted(ks))


def check_metrics(metrics: Any) -> tuple[str, ...]:
    """The metric names, validated against :data:`METRICS`."""
    if isinstance(metrics, str):
        metrics = (metrics,)
    names = tuple(dict.fromkeys(metrics))
    unknown = [m for m in names if m not in METRICS]
    if unknown or not names:
        raise ValueError(f"unknown metric(s) {unknown}; choose from {', '.join(METRICS)}")
    return names


def _threshold(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"abstain_threshold must be a finite number or None, got {value!r}")
    return float(value)


def search_hits(
    corpus: Any, query: str, *, k: int, mode: str, surfaces: Any, search_kw: Mapping[str, Any]
) -> list[Any]:
    """One search, one hit per artifact (the unit cases judge)."""
    from rowvoi.corpus.retrieval.corpus import search

    return search(corpus, query, k=k, mode=mode, surfaces=surfaces, per_artifact=True, **search_kw)


def open_if_name(corpus: Any) -> Any:
    """An open corpus for a corpus name; anything else unchanged."""
    if isinstance(corpus, str):
        from rowvoi.corpus.retrieval.corpus import open_corpus

        return open_corpus(corpus)
    if corpus is None:
        raise TypeError("expected a corpus or a corpus name, got None")
    return corpus


def as_doc_retriever(
    corpus: Any, *, mode: str = DFLT_MODE, surfaces: Any = None, **search_kw: Any
) -> Retriever:
    """A function ``retriever(query, *, limit=10) -> [artifact ids]`` over
    ``corpus`` (an open corpus or a name), one id per artifact, best first.

    >>> from rowvoi.corpus import CorpusStore, build, from_mapping
    >>> c = build(from_mapping({"a": "wing lift", "b": "pipe flow"}, embedder="hashing"),
    ...           store=CorpusStore.memory(), progress=False)
    >>> as_doc_retriever(c, mode="lexical")("pipe", limit=5)
    ['b']
    """
    c = open_if_name(corpus)

    def retriever(query: str, *, limit: int = 10) -> list[str]:
        return [
            h.artifact_id
            for h in search_hits(
                c, query, k=limit, mode=mode, surfaces=surfaces, search_kw=search_kw
            )
        ]

    return retriever


# ----------------------------------------------------------------- reports
@dataclass(frozen=True)
class RetrievalReport:
    """Ranking metrics over the gold-bearing cases.

    Attributes
    ----------
    metrics : dict
        ``{"ndcg@10": mean, ...}``, every metric at every cutoff, averaged
        over the ``n_queries`` cases with gold (empty when there are none).
    per_query : dict
        ``{qid: {"ndcg@10": value, ...}}``, qids from
        :func:`~rowvoi.corpus.eval.cases.case_id`.
    n_queries : int
    k_values : tuple of int
    """

    metrics: dict[str, float]
    per_query: dict[str, dict[str, float]]
    n_queries: int
    k_values: tuple[int, ...]

    def primary_at(self, k: int, metric: str = "ndcg") -> float | None:
        """The mean of ``metric@k`` (None when not computed)."""
        return self.metrics.get(f"{metric}@{k}")

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python form."""
        return {
            "metrics": dict(self.metrics),
            "per_query": {q: dict(v) for q, v in self.per_query.items()},
            "n_queries": self.n_queries,
            "k_values": list(self.k_values),
        }


def score_rankings(
    rankings: Mapping[str, Sequence[str]],
    qrels: Mapping[str, Mapping[str, float]],
    k_values: tuple[int, ...],
    metrics: tuple[str, ...],
) -> RetrievalReport:
    """Score ``{qid: ranking}`` against ``{qid: {id: gain}}`` (every qid of
    ``qrels``; a qid without a ranking scores as an empty ranking)."""
    keys = [f"{m}@{k}" for m in metrics for k in k_values]
    per_query = {
        qid: {
            f"{m}@{k}": METRICS[m](rankings.get(qid, ()), gains, k)
            for m in metrics
            for k in k_values
        }
        for qid, gains in qrels.items()
    }
    n = len(per_query)
    means = {key: math.fsum(v[key] for v in per_query.values()) / n for key in keys} if n else {}
    return RetrievalReport(means, per_query, n, k_values)


@dataclass(frozen=True)
class DiscoveryReport:
    """The outcome of :func:`evaluate_discovery`.

    Attributes
    ----------
    retrieval : RetrievalReport
        The ranking metrics over the gold-bearing cases.
    failure_classes : dict
        ``{class: count}`` for the classes that occurred (see the module
        docstring), in :data:`FAILURE_CLASSES` order.
    rows : list of dict
        One per case, in case order: ``index``, ``qid``, ``query``,
        ``source_id``, ``n_gold``, ``gold_rank`` (1-based rank of the best
        gold id in the retrieved list, None if absent or no gold),
        ``top_score`` (None without hits), ``failure_class`` and
        ``metrics`` (empty for an abstention case).
    rankings : dict
        ``{qid: [artifact ids]}``: what each case retrieved.
    n_cases, n_gold, n_abstention : int
    primary_k : int
    abstention_accuracy : float or None
        Share of abstention cases classed ``abstention_ok`` (None without
        a threshold or without abstention cases).
    config : dict
        The search the numbers belong to: ``mode``, ``depth``,
        ``abstain_threshold``, ``surfaces`` and the other search keywords.
    """

    retrieval: RetrievalReport
    failure_classes: dict[str, int]
    rows: list[dict[str, Any]]
    rankings: dict[str, list[str]]
    n_cases: int
    n_gold: int
    n_abstention: int
    primary_k: int
    abstention_accuracy: float | None
    config: dict[str, Any] = field(default_factory=dict)

    @property
    def metrics(self) -> dict[str, float]:
        """The mean metrics, ``{"ndcg@10": value, ...}``."""
        return self.retrieval.metrics

    @property
    def primary(self) -> float | None:
        """Mean nDCG@``primary_k`` (None when no case has gold)."""
        return self.retrieval.primary_at(self.primary_k)

    @property
    def mode(self) -> str:
        """The search mode evaluated."""
        return str(self.config.get("mode"))

    def to_dict(self, *, rows: bool = True) -> dict[str, Any]:
        """Plain-Python form (``rows=False`` leaves out the per-case rows
        and rankings)."""
        out: dict[str, Any] = {
            "primary": self.primary,
            "primary_k": self.primary_k,
            "metrics": dict(self.metrics),
            "failure_classes": dict(self.failure_classes),
            "n_cases": self.n_cases,
            "n_gold": self.n_gold,
            "n_abstention": self.n_abstention,
            "abstention_accuracy": self.abstention_accuracy,
            "config": dict(self.config),
        }
        if rows:
            out["rows"] = [dict(r) for r in self.rows]
        return out

    def write_run(self, path: Any, *, tag: str = "rowvoi") -> Any:
        """Write the gold-bearing cases' rankings as a TREC run file (see
        :func:`~rowvoi.corpus.eval.metrics.write_run`); returns the path."""
        gold = {r["qid"] for r in self.rows if r["n_gold"]}
        return write_run(path, {q: r for q, r in self.rankings.items() if q in gold}, tag=tag)

    def __str__(self) -> str:
        primary = "n/a" if self.primary is None else f"{self.primary:.4f}"
        lines = [
            f"{self.n_cases} cases ({self.n_gold} with gold, {self.n_abstention} "
            f"abstention); mode {self.mode}",
            f"nDCG@{self.primary_k}: {primary}",
        ]
        ks = self.retrieval.k_values
        names = list(dict.fromkeys(key.split("@")[0] for key in self.metrics))
        if names:
            lines.append("metric     " + "".join(f"{'@' + str(k):>9}" for k in ks))
            for m in names:
                lines.append(f"{m:<11}" + "".join(f"{self.metrics[f'{m}@{k}']:9.4f}" for k in ks))
        if self.failure_classes:
            lines.append(
                "failures: " + ", ".join(f"{c} {n}" for c, n in self.failure_classes.items())
            )
        if self.abstention_accuracy is not None:
            lines.append(f"abstention accuracy: {self.abstention_accuracy:.4f}")
        return "\n".join(lines)


# ----------------------------------------------------------------- evaluate
def evaluate_discovery(
    corpus: Any,
    cases: Sequence[DiscoveryCase],
    *,
    k_values: Sequence[int] = DFLT_K_VALUES,
    primary_k: int = 10,
    metrics: Sequence[str] = DFLT_METRICS,
    mode: str = DFLT_MODE,
    surfaces: Iterable[str] | str | None = None,
    abstain_threshold: float | None = None,
    depth: int | None = None,
    progress: Progress | None = None,
    **search_kw: Any,
) -> DiscoveryReport:
    """Search once per case; report metrics, failure classes and per-case rows.

    Parameters
    ----------
    corpus : Corpus or str
        An open corpus or a corpus name.
    cases : sequence of DiscoveryCase
    k_values : sequence of int
        Cutoffs (>= 1) to report every metric at; ``primary_k`` is added.
    primary_k : int
        The cutoff of the headline (:attr:`DiscoveryReport.primary`,
        nDCG) and of the failure classes.
    metrics : sequence of str
        Names from :data:`~rowvoi.corpus.eval.metrics.METRICS`.
    mode : {"hybrid", "dense", "lexical"}
    surfaces : str or iterable of str, optional
        Only these surface kinds.
    abstain_threshold : float or None
        Score abstention cases: correct when the top score is below it.
    depth : int or None
        Hits retrieved per case (default: the largest cutoff; at least
        that). MAP over a 1000-deep run: ``k_values=(10, 1000)``. Every
        cutoff is scored on this one ranking; a hybrid search fetches its
        candidates in proportion to the depth, so its top 10 may differ
        between depths 10 and 1000 (the metrics describe the search run).
    progress : callable or None
        ``progress(done, total)`` after each case.
    **search_kw
        Any other :func:`rowvoi.corpus.search` keyword (``fusion``,
        ``alpha``, ``filter``, ...).

    Returns
    -------
    DiscoveryReport

    Raises
    ------
    TypeError, ValueError
        A case that is not a :class:`DiscoveryCase`, a bad cutoff, an
        unknown metric, a non-finite threshold; search errors (unknown
        mode, empty corpus) propagate unchanged.
    """
    from rowvoi._validate import integer as _check_int

    cases = check_cases(cases)
    ks = check_k_values(k_values, primary_k)
    names = check_metrics(metrics)
    threshold = _threshold(abstain_threshold)
    depth = max(ks) if depth is None else max(_check_int("depth", depth, 1), max(ks))
    c = open_if_name(corpus)
    rows: list[dict[str, Any]] = []
    rankings: dict[str, list[str]] = {}
    classes: Counter[str] = Counter()
    _, qrels = to_qrels(cases)
    for i, case in enumerate(cases):
        hits = search_hits(
            c, case.query, k=depth, mode=mode, surfaces=surfaces, search_kw=search_kw
        )
        qid = case_id(i)
        ranking = [h.artifact_id for h in hits]
        rankings[qid] = ranking
        top = float(hits[0].score) if hits else None
        gold_rank = None
        if case.gold_is_none:
            if threshold is None:
                cls = "abstention_unscored"
            elif top is None or top < threshold:
                cls = "abstention_ok"
            else:
                cls = "false_action"
        else:
            gold = set(case.gold)
            gold_rank = next((r for r, d in enumerate(ranking, 1) if d in gold), None)
            if gold_rank is None or gold_rank > primary_k:
                cls = "retrieval_miss"
            elif gold_rank == 1:
                cls = "hit_rank_1"
            else:
                cls = "surfaced_low_rank"
        classes[cls] += 1
        rows.append(
            {
                "index": i,
                "qid": qid,
                "query": case.query,
                "source_id": case.source_id,
                "n_gold": len(case.gold),
                "gold_rank": gold_rank,
                "top_score": top,
                "failure_class": cls,
            }
        )
        if progress is not None:
            progress(i + 1, len(cases))
    retrieval = score_rankings(rankings, qrels, ks, names)
    for row in rows:
        row["metrics"] = dict(retrieval.per_query.get(row["qid"], {}))
    n_gold = retrieval.n_queries
    n_abst = len(cases) - n_gold
    accuracy = (classes["abstention_ok"] / n_abst) if threshold is not None and n_abst else None
    config = {
        "mode": mode,
        "depth": depth,
        "abstain_threshold": threshold,
        "surfaces": None
        if surfaces is None
        else ([surfaces] if isinstance(surfaces, str) else list(surfaces)),
        **{k: v for k, v in search_kw.items() if _plain(v)},
    }
    return DiscoveryReport(
        retrieval,
        {c_: classes[c_] for c_ in FAILURE_CLASSES if classes[c_]},
        rows,
        rankings,
        len(cases),
        n_gold,
        n_abst,
        primary_k,
        accuracy,
        config,
    )


def _plain(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool, list, dict, tuple))


def retrieval_report(
    corpus_or_retriever: Any,
    cases: Sequence[DiscoveryCase],
    *,
    k_values: Sequence[int] = DFLT_K_VALUES,
    metrics: Sequence[str] = DFLT_METRICS,
    mode: str = DFLT_MODE,
    surfaces: Iterable[str] | str | None = None,
    limit: int | None = None,
    **search_kw: Any,
) -> RetrievalReport:
    """Ranking metrics only, for any retriever.

    Parameters
    ----------
    corpus_or_retriever : Corpus, str or callable
        A corpus (or name), searched with ``mode``, ``surfaces`` and
        ``search_kw``; or a function ``retriever(query, *, limit) -> [ids]``
        (then those arguments must be left out).
    cases : sequence of DiscoveryCase
        Abstention cases are skipped.
    k_values, metrics
        As for :func:`evaluate_discovery`.
    limit : int or None
        Ids retrieved per query (default: the largest cutoff).

    Returns
    -------
    RetrievalReport

    Raises
    ------
    ValueError
        No case has gold, or search settings given with a retriever
        function.

    Examples
    --------
    >>> from rowvoi.corpus.eval import DiscoveryCase
    >>> fixed = lambda query, *, limit: ["b", "a"][:limit]
    >>> r = retrieval_report(fixed, [DiscoveryCase("q", ["a"])], k_values=(1, 2))
    >>> r.metrics["recall@1"], r.metrics["mrr@2"]
    (0.0, 0.5)
    """
    from rowvoi._validate import integer as _check_int

    cases = check_cases(cases)
    ks = check_k_values(k_values)
    names = check_metrics(metrics)
    queries, qrels = to_qrels(cases)
    if not qrels:
        raise ValueError(
            "no case has gold ids, so there is nothing to rank against; "
            "abstention cases are scored by evaluate_discovery"
        )
    limit = max(ks) if limit is None else _check_int("limit", limit, 1)
    if callable(corpus_or_retriever) and not hasattr(corpus_or_retriever, "store"):
        if search_kw or surfaces is not None or mode != DFLT_MODE:
            raise ValueError(
                "mode, surfaces and search keywords configure a corpus search; "
                "a retriever function takes only (query, *, limit)"
            )
        retriever = corpus_or_retriever
    else:
        retriever = as_doc_retriever(
            corpus_or_retriever, mode=mode, surfaces=surfaces, **search_kw
        )
    rankings = {qid: [str(d) for d in retriever(q, limit=limit)] for qid, q in queries.items()}
    return score_rankings(rankings, qrels, ks, names)
