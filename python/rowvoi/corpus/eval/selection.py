"""Score the commit, apart from the ranking; tune the selector.

:func:`~rowvoi.corpus.eval.retrieval.evaluate_discovery` scores how a
corpus *ranks*; :func:`evaluate_selection` scores what
:func:`~rowvoi.corpus.retrieval.selection.select` then *commits to* out of the ``k``
candidates. Selection metrics are conditioned on retrieval: a case whose
gold is not among its ``k`` candidates is a retrieval miss, left out of
every selection metric, so a low number here is the selector's doing.

``conditional_commit_rate``
    among cases whose gold was retrieved, the share where the selection
    holds at least one gold id (the headline).
``selection_precision``
    mean of ``|selected & gold| / |selected|`` over those cases that
    committed to something.
``selection_recall``
    mean of ``|selected & gold| / |gold & retrieved|``: of the gold the
    selector was shown, how much it kept.
``selection_f1``
    mean per-case F1 (an empty commit scores 0).
``mean_selected_size``
    mean number of committed results over those cases.
``abstention_accuracy``
    share of abstention cases (no gold) where nothing was committed.
``commit_precision``
    ``|selected & gold| / |selected|`` pooled over every committed result
    of every gold case, retrieval misses included: the precision of
    :func:`~rowvoi.corpus.discover` as a user sees it.
``results_per_query``
    mean number of committed results over every gold case.
``overall_f1``
    mean per-case F1 over every gold case against *all* its gold ids,
    retrieval misses included (an empty commit scores 0): search and
    selection together, as a user meets them. Unlike the conditioned
    metrics, it does not reward a ranking for failing to retrieve a hard
    case's gold (which drops the case from their denominator).

:func:`sweep_selector` scores a grid ``max_k x rel x min_score`` from one
retrieval pass per case (selection does not change the ranking), and
returns a :class:`SelectionSweep` with :meth:`~SelectionSweep.best`,
:meth:`~SelectionSweep.frontier`, :meth:`~SelectionSweep.table` and
:meth:`~SelectionSweep.to_dict`. Its :meth:`~SelectionSweep.best` is
tuned and scored on the same cases, so it is optimistic;
:meth:`~SelectionSweep.held_out` tunes on some of the cases and scores
the rest (k-fold, no new search): the figure to expect on new queries.

Comparing two systems or configurations by the conditioned metrics is
fair only on one set of cases: each scores the cases whose gold *its own*
ranking retrieved, so a ranking that surfaces a hard case's gold low in
the list (where a selector of 3 does not reach) is charged a 0 the other
ranking is never charged. Compare them on the cases both retrieved, or by
``overall_f1``.

Thread-safe and deterministic, like the searches it runs.

Examples
--------
>>> from rowvoi.corpus import CorpusStore, build, from_mapping
>>> from rowvoi.corpus.eval import DiscoveryCase
>>> docs = {"a": "wing stall at high angle of attack", "b": "stall of a compressor blade",
...         "c": "shock waves in supersonic nozzles"}
>>> aero = build(from_mapping(docs, embedder="hashing"), store=CorpusStore.memory(),
...              progress=False)
>>> cases = [DiscoveryCase("wing stall", ["a"]), DiscoveryCase("supersonic shock", ["c"])]
>>> r = evaluate_selection(aero, cases, mode="lexical", max_k=1)
>>> r.conditional_commit_rate, r.selection_precision, r.mean_selected_size
(1.0, 1.0, 1.0)
>>> sweep = sweep_selector(aero, cases, mode="lexical", max_k_grid=(1, 3), rel_grid=(0.1, 0.9))
>>> best = sweep.best(); (best.max_k, best.rel, best.report.selection_f1)
(1, 0.9, 1.0)
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rowvoi.corpus.eval.cases import DiscoveryCase, case_id
from rowvoi.corpus.eval.retrieval import (
    DFLT_MODE,
    Progress,
    check_cases,
    open_if_name,
    search_hits,
)
from rowvoi.corpus.retrieval.selection import (
    DFLT_GAP_RATIO,
    DFLT_MAX_K,
    DFLT_REL_THRESHOLD,
    check_floor,
    select,
    strategy_name,
)

__all__ = [
    "SWEEP_METRICS",
    "DFLT_SWEEP_MAX_K",
    "DFLT_SWEEP_REL",
    "DFLT_SWEEP_MIN_SCORE",
    "DFLT_SWEEP_OBJECTIVE",
    "SelectionReport",
    "SelectionGridPoint",
    "SelectionSweep",
    "HeldOutFold",
    "HeldOut",
    "evaluate_selection",
    "sweep_selector",
]

#: Metrics a sweep can optimise or plot; only ``mean_selected_size`` and
#: ``results_per_query`` are better when smaller.
SWEEP_METRICS = (
    "selection_f1",
    "selection_precision",
    "selection_recall",
    "conditional_commit_rate",
    "abstention_accuracy",
    "commit_precision",
    "overall_f1",
    "mean_selected_size",
    "results_per_query",
)
_MINIMIZE = frozenset({"mean_selected_size", "results_per_query"})
DFLT_SWEEP_MAX_K = (1, 2, 3, 5, 8)
DFLT_SWEEP_REL = (0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
DFLT_SWEEP_MIN_SCORE: tuple[float | None, ...] = (None,)
DFLT_SWEEP_OBJECTIVE = "selection_f1"


def _f1(hit: int, n_selected: int, n_gold: int) -> float:
    """F1 of a commit of ``n_selected`` holding ``hit`` of ``n_gold``
    (0 when nothing is selected or nothing hit)."""
    return 2 * hit / (n_selected + n_gold) if hit else 0.0


def _mean(values: Sequence[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


@dataclass(frozen=True)
class SelectionReport:
    """Selection quality over a set of cases (see the module docstring for
    each metric; None where a metric has no case to average over).

    Attributes
    ----------
    conditional_commit_rate, selection_precision, selection_recall,
    selection_f1, mean_selected_size, abstention_accuracy, commit_precision,
    overall_f1, results_per_query : float or None
    n_cases, n_gold, n_abstention, n_gold_retrieved : int
        ``n_gold_retrieved`` is the shared denominator of the conditioned
        metrics.
    config : dict
        ``strategy``, ``mode``, ``k``, ``max_k``, ``rel``, ``gap_ratio``,
        ``min_score``.
    rows : list of dict
        Per case (from :func:`evaluate_selection` only): ``index``, ``qid``,
        ``selected`` ids, ``reason``, ``gold_retrieved`` (count) and
        ``gold_selected`` (count).
    """

    conditional_commit_rate: float | None
    selection_precision: float | None
    selection_recall: float | None
    selection_f1: float | None
    mean_selected_size: float | None
    abstention_accuracy: float | None
    commit_precision: float | None
    overall_f1: float | None
    results_per_query: float | None
    n_cases: int
    n_gold: int
    n_abstention: int
    n_gold_retrieved: int
    config: dict[str, Any] = field(default_factory=dict)
    rows: list[dict[str, Any]] = field(default_factory=list)

    def metric(self, name: str) -> float | None:
        """One metric by name (a :data:`SWEEP_METRICS` name)."""
        if name not in SWEEP_METRICS:
            raise ValueError(
                f"unknown selection metric {name!r}; use one of {', '.join(SWEEP_METRICS)}"
            )
        value: float | None = getattr(self, name)
        return value

    def to_dict(self, *, rows: bool = True) -> dict[str, Any]:
        """Plain-Python form."""
        out: dict[str, Any] = {m: getattr(self, m) for m in SWEEP_METRICS}
        out.update(
            n_cases=self.n_cases,
            n_gold=self.n_gold,
            n_abstention=self.n_abstention,
            n_gold_retrieved=self.n_gold_retrieved,
            config=dict(self.config),
        )
        if rows and self.rows:
            out["rows"] = [dict(r) for r in self.rows]
        return out

    def __str__(self) -> str:
        def f(v: float | None) -> str:
            return "n/a" if v is None else f"{v:.4f}"

        c = self.config
        return "\n".join(
            [
                f"{self.n_cases} cases ({self.n_gold} with gold, {self.n_abstention} abstention); "
                f"{c.get('strategy')} max_k={c.get('max_k')} rel={c.get('rel')} "
                f"min_score={c.get('min_score')}; mode {c.get('mode')}, k={c.get('k')}",
                f"conditional commit rate: {f(self.conditional_commit_rate)} "
                f"(over {self.n_gold_retrieved} cases whose gold was retrieved)",
                f"selection precision:     {f(self.selection_precision)}",
                f"selection recall:        {f(self.selection_recall)}",
                f"selection F1:            {f(self.selection_f1)}",
                f"mean selected size:      {f(self.mean_selected_size)}",
                f"commit precision:        {f(self.commit_precision)} "
                f"at {f(self.results_per_query)} results per query",
                f"overall F1:              {f(self.overall_f1)} (every gold case, all its gold)",
                f"abstention accuracy:     {f(self.abstention_accuracy)}",
            ]
        )


def score_selection(
    scored: Sequence[tuple[int, DiscoveryCase, list[Any]]],
    *,
    strategy: Any,
    max_k: int,
    rel: float,
    gap_ratio: float,
    min_score: float | None,
    config: dict[str, Any],
    keep_rows: bool,
) -> SelectionReport:
    """Score one selector setting over pre-retrieved ``(index, case, hits)``."""
    precisions: list[float] = []
    recalls: list[float] = []
    f1s: list[float] = []
    sizes: list[int] = []
    all_sizes: list[int] = []
    overall: list[float] = []
    pooled_hit = pooled_sel = 0
    n_gold = n_retrieved = n_committed = n_abst = n_abst_ok = 0
    rows: list[dict[str, Any]] = []
    for index, case, hits in scored:
        sel = select(
            hits,
            strategy=strategy,
            max_k=max_k,
            rel=rel,
            gap_ratio=gap_ratio,
            min_score=min_score,
            query=case.query,
        )
        chosen = sel.selected_ids
        chosen_set = set(chosen)
        gold = set(case.gold)
        gold_retrieved = gold & {h.artifact_id for h in hits}
        hit = len(chosen_set & gold)
        if keep_rows:
            rows.append(
                {
                    "index": index,
                    "qid": case_id(index),
                    "selected": chosen,
                    "reason": sel.reason,
                    "gold_retrieved": len(gold_retrieved),
                    "gold_selected": hit,
                }
            )
        if case.gold_is_none:
            n_abst += 1
            n_abst_ok += not chosen
            continue
        n_gold += 1
        all_sizes.append(len(chosen))
        pooled_hit += hit
        pooled_sel += len(chosen)
        overall.append(_f1(hit, len(chosen), len(gold)))
        if not gold_retrieved:
            continue
        n_retrieved += 1
        recall = hit / len(gold_retrieved)
        precision = hit / len(chosen) if chosen else None
        recalls.append(recall)
        sizes.append(len(chosen))
        if precision is not None:
            precisions.append(precision)
        f1s.append(_f1(hit, len(chosen), len(gold_retrieved)))
        n_committed += hit > 0
    return SelectionReport(
        conditional_commit_rate=n_committed / n_retrieved if n_retrieved else None,
        selection_precision=_mean(precisions),
        selection_recall=_mean(recalls),
        selection_f1=_mean(f1s),
        mean_selected_size=_mean(sizes),
        abstention_accuracy=n_abst_ok / n_abst if n_abst else None,
        commit_precision=pooled_hit / pooled_sel if pooled_sel else None,
        overall_f1=_mean(overall),
        results_per_query=_mean(all_sizes),
        n_cases=len(scored),
        n_gold=n_gold,
        n_abstention=n_abst,
        n_gold_retrieved=n_retrieved,
        config={
            **config,
            "max_k": max_k,
            "rel": rel,
            "gap_ratio": gap_ratio,
            "min_score": min_score,
        },
        rows=rows,
    )


def _retrieve(
    corpus: Any,
    cases: Sequence[DiscoveryCase],
    *,
    k: int,
    mode: str,
    surfaces: Any,
    search_kw: dict[str, Any],
    progress: Progress | None,
) -> list[tuple[int, DiscoveryCase, list[Any]]]:
    c = open_if_name(corpus)
    out = []
    for i, case in enumerate(cases):
        out.append(
            (
                i,
                case,
                search_hits(c, case.query, k=k, mode=mode, surfaces=surfaces, search_kw=search_kw),
            )
        )
        if progress is not None:
            progress(i + 1, len(cases))
    return out


def evaluate_selection(
    corpus: Any,
    cases: Sequence[DiscoveryCase],
    *,
    strategy: Any = "conservative",
    mode: str = DFLT_MODE,
    k: int = 10,
    surfaces: Iterable[str] | str | None = None,
    max_k: int = DFLT_MAX_K,
    rel: float = DFLT_REL_THRESHOLD,
    gap_ratio: float = DFLT_GAP_RATIO,
    min_score: float | None = None,
    progress: Progress | None = None,
    **search_kw: Any,
) -> SelectionReport:
    """Retrieve ``k`` candidates per case, select, and score the commit.

    Parameters
    ----------
    corpus : Corpus or str
    cases : sequence of DiscoveryCase
    strategy, max_k, rel, gap_ratio, min_score
        The selection (see :func:`rowvoi.corpus.retrieval.selection.select`).
    mode : {"hybrid", "dense", "lexical"}
    k : int
        Candidates retrieved per case (the selector's window); hold it
        equal to :func:`evaluate_discovery`'s cutoff to compare the stages.
    surfaces, **search_kw
        Passed to :func:`rowvoi.corpus.search`.
    progress : callable or None
        ``progress(done, total)`` after each search.

    Returns
    -------
    SelectionReport
        With per-case ``rows``.

    Raises
    ------
    TypeError, ValueError
        Bad cases or selection settings (checked before any search); search
        errors propagate.
    """
    from rowvoi._validate import integer as _check_int

    cases = check_cases(cases)
    k = _check_int("k", k, 1)
    name = strategy_name(strategy)
    select(
        [], strategy=strategy, max_k=max_k, rel=rel, gap_ratio=gap_ratio, min_score=min_score
    )  # validates the settings before searching
    scored = _retrieve(
        corpus, cases, k=k, mode=mode, surfaces=surfaces, search_kw=search_kw, progress=progress
    )
    return score_selection(
        scored,
        strategy=strategy,
        max_k=max_k,
        rel=rel,
        gap_ratio=gap_ratio,
        min_score=check_floor(min_score),
        config={
            "strategy": name,
            "mode": mode,
            "k": k,
            **{kk: v for kk, v in search_kw.items() if isinstance(v, (str, int, float, bool))},
        },
        keep_rows=True,
    )


# ------------------------------------------------------------------ sweep
def _rank_value(value: float | None, metric: str, minimize: bool | None = None) -> float:
    """Larger is better: None is worst, a minimised metric is negated."""
    if value is None:
        return -math.inf
    lower = metric in _MINIMIZE if minimize is None else minimize
    return -value if lower else value


def _check_metric(metric: str) -> str:
    if metric not in SWEEP_METRICS:
        raise ValueError(
            f"unknown selection metric {metric!r}; use one of {', '.join(SWEEP_METRICS)}"
        )
    return metric


def _tiebreak(index: int, p: SelectionGridPoint) -> tuple[float, int, float, float, int]:
    """Among equally good points: the smaller mean selection, then the
    smaller max_k, the larger rel, the higher floor (None lowest), then
    grid order -- fewer, surer commits."""
    size = p.report.mean_selected_size
    return (
        math.inf if size is None else size,
        p.max_k,
        -p.rel,
        math.inf if p.min_score is None else -p.min_score,
        index,
    )


@dataclass(frozen=True)
class SelectionGridPoint:
    """One setting of a sweep and its :class:`SelectionReport`."""

    max_k: int
    rel: float
    min_score: float | None
    report: SelectionReport

    @property
    def params(self) -> dict[str, Any]:
        """``{"max_k", "rel", "min_score"}``."""
        return {"max_k": self.max_k, "rel": self.rel, "min_score": self.min_score}

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python form: the parameters and the report (without rows)."""
        return {**self.params, "report": self.report.to_dict(rows=False)}


@dataclass(frozen=True)
class HeldOutFold:
    """One fold of :meth:`SelectionSweep.held_out`.

    Attributes
    ----------
    fold : int
        The fold scored here: the cases at positions ``i`` with
        ``i % folds == fold``.
    point : SelectionGridPoint
        The setting tuned on the other folds, with its report there.
    tuned_value : float or None
        The metric on the cases it was tuned on (in-sample).
    report : SelectionReport
        The same setting on this fold's cases (held out).
    """

    fold: int
    point: SelectionGridPoint
    tuned_value: float | None
    report: SelectionReport

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python form."""
        return {
            "fold": self.fold,
            **self.point.params,
            "tuned_value": self.tuned_value,
            "report": self.report.to_dict(rows=False),
        }


@dataclass(frozen=True)
class HeldOut:
    """What a sweep's tuning achieves on cases it was not tuned on.

    Attributes
    ----------
    metric : str
        The metric tuned and reported.
    folds : list of HeldOutFold
        One per fold.
    """

    metric: str
    folds: list[HeldOutFold]

    @property
    def value(self) -> float | None:
        """The mean of the folds' held-out metric (folds without a value,
        e.g. no case with retrieved gold, left out; None when none has one)."""
        vals = [v for v in (f.report.metric(self.metric) for f in self.folds) if v is not None]
        return math.fsum(vals) / len(vals) if vals else None

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python form."""
        return {
            "metric": self.metric,
            "value": self.value,
            "folds": [f.to_dict() for f in self.folds],
        }

    def __str__(self) -> str:
        def f(v: float | None) -> str:
            return "n/a" if v is None else f"{v:.4f}"

        lines = [f"held-out {self.metric}: {f(self.value)} over {len(self.folds)} folds"]
        for fo in self.folds:
            p = fo.point
            lines.append(
                f"  fold {fo.fold}: max_k={p.max_k} rel={p.rel:g} min_score={p.min_score} "
                f"tuned {f(fo.tuned_value)} -> held out {f(fo.report.metric(self.metric))}"
            )
        return "\n".join(lines)


@dataclass(frozen=True)
class SelectionSweep:
    """A grid of selector settings, each scored on the same retrieval.

    Attributes
    ----------
    points : list of SelectionGridPoint
        In grid order (``max_k`` outermost, then ``rel``, then
        ``min_score``).
    objective : str
        The metric :meth:`best` optimises by default.
    config : dict
        ``strategy``, ``mode``, ``k``, ``gap_ratio`` and the case counts.
    """

    points: list[SelectionGridPoint]
    objective: str
    config: dict[str, Any] = field(default_factory=dict)
    # the one retrieval pass and the strategy object, kept for held_out()
    _scored: tuple[tuple[int, DiscoveryCase, list[Any]], ...] = field(
        default=(), repr=False, compare=False
    )
    _strategy: Any = field(default="conservative", repr=False, compare=False)

    def best(
        self, metric: str | None = None, *, minimize: bool | None = None
    ) -> SelectionGridPoint:
        """The point with the best ``metric`` (default :attr:`objective`).

        ``minimize`` defaults to True only for ``mean_selected_size`` and
        ``results_per_query``. Ties go to the smaller mean selected size,
        then the smaller ``max_k``, then the larger ``rel``, then the
        higher floor (None lowest), then grid order: fewer, surer commits.
        Raises ``ValueError`` for an empty sweep or an unknown metric.
        """
        metric = _check_metric(metric or self.objective)
        if not self.points:
            raise ValueError("the sweep has no points")
        return min(
            enumerate(self.points),
            key=lambda ip: (
                -_rank_value(ip[1].report.metric(metric), metric, minimize),
                *_tiebreak(*ip),
            ),
        )[1]

    def frontier(
        self, *, x: str = "selection_recall", y: str = "selection_precision"
    ) -> list[SelectionGridPoint]:
        """The Pareto front of ``x`` against ``y`` (both better when larger;
        a size metric on an axis is better when smaller): the points no
        other point matches on both axes and beats on one. Sorted by ``x``
        ascending; of points with identical coordinates the one :meth:`best`
        would prefer is kept. Points where either metric is None are left out.
        """
        _check_metric(x)
        _check_metric(y)
        pts = [
            (p, _rank_value(p.report.metric(x), x), _rank_value(p.report.metric(y), y))
            for p in self.points
        ]
        pts = [t for t in pts if math.isfinite(t[1]) and math.isfinite(t[2])]
        order = {id(p): i for i, p in enumerate(self.points)}
        front: dict[tuple[float, float], SelectionGridPoint] = {}
        for p, px, py in pts:
            dominated = any(qx >= px and qy >= py and (qx > px or qy > py) for _, qx, qy in pts)
            if dominated:
                continue
            held = front.get((px, py))
            if held is None or _tiebreak(order[id(p)], p) < _tiebreak(order[id(held)], held):
                front[(px, py)] = p
        return [front[c] for c in sorted(front)]

    def table(self, *, sort_by: str | None = None) -> str:
        """The grid as text, one row per point, best ``sort_by`` (default
        :attr:`objective`) first; the ``min_score`` column only when a
        point sets a floor."""
        metric = _check_metric(sort_by or self.objective)
        rows = sorted(self.points, key=lambda p: -_rank_value(p.report.metric(metric), metric))
        floors = any(p.min_score is not None for p in self.points)

        def f(v: float | None) -> str:
            return "n/a" if v is None else f"{v:.4f}"

        head = (
            ["max_k", "rel"]
            + (["min_score"] if floors else [])
            + ["commit", "precision", "recall", "F1", "size", "abstain"]
        )
        lines = ["".join(f"{h:>10}" for h in head)]
        for p in rows:
            r = p.report
            cells = [str(p.max_k), f"{p.rel:.2f}"]
            if floors:
                cells.append("none" if p.min_score is None else f"{p.min_score:.4g}")
            cells += [
                f(r.conditional_commit_rate),
                f(r.selection_precision),
                f(r.selection_recall),
                f(r.selection_f1),
                f(r.mean_selected_size),
                f(r.abstention_accuracy),
            ]
            lines.append("".join(f"{c:>10}" for c in cells))
        return "\n".join(lines)

    def held_out(self, folds: int = 2, metric: str | None = None) -> HeldOut:
        """Tune on part of the cases, score on the rest: what :meth:`best`
        promises on cases it was not tuned on.

        :meth:`best` picks the setting that scores best on the very cases
        it is scored on, so its figure is optimistic. Here case ``i`` (its
        position in the swept cases) belongs to fold ``i % folds``; for
        each fold, the best setting on the other folds (by :meth:`best`'s
        rule, ties included) is scored on that fold alone. No search runs:
        the sweep's one retrieval pass is reused. Pure, deterministic and
        thread-safe.

        Parameters
        ----------
        folds : int
            Number of folds, from 2 to the number of cases.
        metric : str or None
            The metric tuned and reported (default :attr:`objective`).

        Returns
        -------
        HeldOut

        Raises
        ------
        ValueError
            ``folds`` out of range, an unknown metric, or a sweep built by
            hand (without its retrieval pass).

        Examples
        --------
        >>> from rowvoi.corpus import CorpusStore, build, from_mapping
        >>> from rowvoi.corpus.eval import DiscoveryCase
        >>> docs = {"a": "wing stall", "b": "compressor stall", "c": "supersonic shock"}
        >>> aero = build(from_mapping(docs, embedder="hashing"), store=CorpusStore.memory(),
        ...              progress=False)
        >>> cases = [DiscoveryCase("wing stall", ["a"]), DiscoveryCase("shock", ["c"]),
        ...          DiscoveryCase("stall", ["a", "b"]), DiscoveryCase("supersonic", ["c"])]
        >>> sweep = sweep_selector(aero, cases, mode="lexical", max_k_grid=(1, 2),
        ...                        rel_grid=(0.5,))
        >>> ho = sweep.held_out(folds=2)
        >>> [(f.fold, f.point.max_k, f.report.n_cases) for f in ho.folds]
        [(0, 1, 2), (1, 2, 2)]
        >>> round(ho.value, 4), round(sweep.best().report.selection_f1, 4)
        (0.9167, 1.0)
        """
        from rowvoi._validate import integer as _check_int

        metric = _check_metric(metric or self.objective)
        if not self._scored or not self.points:
            raise ValueError(
                "this sweep has no retrieval pass to re-score; build it with sweep_selector()"
            )
        folds = _check_int("folds", folds, 2, len(self._scored))
        config = {kk: v for kk, v in self.config.items() if not kk.startswith("n_")}
        gap_ratio = float(self.config.get("gap_ratio", DFLT_GAP_RATIO))

        def score(part: Sequence[Any], p: SelectionGridPoint) -> SelectionReport:
            return score_selection(
                part,
                strategy=self._strategy,
                max_k=p.max_k,
                rel=p.rel,
                gap_ratio=gap_ratio,
                min_score=p.min_score,
                config=config,
                keep_rows=False,
            )

        out = []
        for f in range(folds):
            train = [t for i, t in enumerate(self._scored) if i % folds != f]
            test = [t for i, t in enumerate(self._scored) if i % folds == f]
            tuned = SelectionSweep(
                [
                    SelectionGridPoint(p.max_k, p.rel, p.min_score, score(train, p))
                    for p in self.points
                ],
                metric,
            ).best()
            out.append(HeldOutFold(f, tuned, tuned.report.metric(metric), score(test, tuned)))
        return HeldOut(metric, out)

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python form: the configuration, the best point, the front
        and every point."""
        return {
            "objective": self.objective,
            "config": dict(self.config),
            "best": self.best().to_dict() if self.points else None,
            "frontier": [p.params for p in self.frontier()],
            "points": [p.to_dict() for p in self.points],
        }

    def __str__(self) -> str:
        c = self.config
        out = [
            f"{len(self.points)} settings ({c.get('strategy')}, mode {c.get('mode')}, "
            f"k={c.get('k')}); {c.get('n_cases')} cases, {c.get('n_gold_retrieved')} "
            "with gold retrieved",
            self.table(),
        ]
        if self.points:
            b = self.best()
            v = b.report.metric(self.objective)
            out.append(
                f"best {self.objective}: {'n/a' if v is None else f'{v:.4f}'} at "
                f"max_k={b.max_k} rel={b.rel:g} min_score={b.min_score}"
            )
        return "\n".join(out)


def _grid(name: str, values: Any, check: Any) -> list[Any]:
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{name} must be a sequence, got {values!r}")
    out = list(dict.fromkeys(check(v) for v in values))
    if not out:
        raise ValueError(f"{name} is empty; give at least one value")
    return out


def _check_rel(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not 0 < float(v) <= 1:
        raise ValueError(f"rel values must be numbers in (0, 1], got {v!r}")
    return float(v)


def sweep_selector(
    corpus: Any,
    cases: Sequence[DiscoveryCase],
    *,
    strategy: Any = "conservative",
    mode: str = DFLT_MODE,
    k: int = 10,
    surfaces: Iterable[str] | str | None = None,
    max_k_grid: Sequence[int] = DFLT_SWEEP_MAX_K,
    rel_grid: Sequence[float] = DFLT_SWEEP_REL,
    min_score_grid: Sequence[float | None] = DFLT_SWEEP_MIN_SCORE,
    gap_ratio: float = DFLT_GAP_RATIO,
    objective: str = DFLT_SWEEP_OBJECTIVE,
    progress: Progress | None = None,
    **search_kw: Any,
) -> SelectionSweep:
    """Score every ``max_k x rel x min_score`` setting from one search per case.

    Parameters
    ----------
    corpus : Corpus or str
    cases : sequence of DiscoveryCase
    strategy : str or callable
        Held fixed over the grid (``rel`` is the band of ``conservative`` /
        ``rel_threshold``; other strategies ignore it and repeat rows).
    mode, k, surfaces, **search_kw
        The one retrieval pass (see :func:`evaluate_selection`).
    max_k_grid : sequence of int
        Caps to try (each >= 1; duplicates dropped).
    rel_grid : sequence of float
        Relative bands to try, each in (0, 1].
    min_score_grid : sequence of float or None
        Absolute floors to try (None: no floor).
    gap_ratio : float
        Held fixed (``score_gap`` only).
    objective : str
        The default metric of :meth:`SelectionSweep.best`, from
        :data:`SWEEP_METRICS`.
    progress : callable or None
        ``progress(done, total)`` after each search.

    Returns
    -------
    SelectionSweep

    Raises
    ------
    TypeError, ValueError
        Bad cases, an empty or invalid grid, an unknown objective: before
        any search.
    """
    from rowvoi._validate import integer as _check_int

    cases = check_cases(cases)
    k = _check_int("k", k, 1)
    objective = _check_metric(objective)
    name = strategy_name(strategy)
    ks = _grid("max_k_grid", max_k_grid, lambda v: _check_int("max_k", v, 1))
    rels = _grid("rel_grid", rel_grid, _check_rel)
    floors = _grid("min_score_grid", min_score_grid, check_floor)
    scored = _retrieve(
        corpus, cases, k=k, mode=mode, surfaces=surfaces, search_kw=search_kw, progress=progress
    )
    config = {"strategy": name, "mode": mode, "k": k}
    points = [
        SelectionGridPoint(
            mk,
            rl,
            fl,
            score_selection(
                scored,
                strategy=strategy,
                max_k=mk,
                rel=rl,
                gap_ratio=gap_ratio,
                min_score=fl,
                config=config,
                keep_rows=False,
            ),
        )
        for mk in ks
        for rl in rels
        for fl in floors
    ]
    first = points[0].report
    config.update(
        gap_ratio=gap_ratio,
        n_cases=first.n_cases,
        n_gold=first.n_gold,
        n_abstention=first.n_abstention,
        n_gold_retrieved=first.n_gold_retrieved,
        **{kk: v for kk, v in search_kw.items() if isinstance(v, (str, int, float, bool))},
    )
    return SelectionSweep(points, objective, config, tuple(scored), strategy)
