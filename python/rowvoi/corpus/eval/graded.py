"""Graded relevance per theme, named diagnostic sets, and A/B comparison.

Where a :class:`~rowvoi.corpus.eval.cases.DiscoveryCase` is one query with
its gold ids, a :class:`GradedCase` is one *artifact* with a graded label
per *theme* (a standing question such as "storage engines" asked of the
whole corpus). The levels, weakest first, are :data:`RELEVANCE_LEVELS`:

``none``, ``tangential``
    not relevant (gain 0);
``partial``
    a weak positive: touches the theme without being about it (gain 1);
``strong``
    clearly relevant (gain 2);
``core``
    what the theme is about (gain 3).

(``uses-tools`` is read as ``partial``, the ``ir`` spelling.) Gains are
:data:`LEVEL_GAINS`, a parameter everywhere.

Each theme is searched with one *probe* text; probes and the corpus
signature the labels were judged against live in the ``__meta__`` line of
the cases file (:func:`save_graded_cases`, :func:`read_meta`).

Named diagnostic sets (:class:`NamedSets`) make regressions concrete:
*distractors* are non-relevant artifacts known to rank high (every one in
the top ``k`` is a false positive) and *hard positives* are relevant ones
known to be hard to find. :func:`compare_indexings` ranks every theme probe
on several corpora (indexing strategies, embedders, search settings) and
reports graded nDCG, the distractor false-positive rate and hard-positive
recall per corpus, and where each named artifact landed;
:meth:`ComparisonReport.regressions` lists the named artifacts that got
worse than the baseline -- an empty list is a passing test gate.

All functions are deterministic and thread-safe.

>>> cases = [GradedCase("a", {"t": "core"}), GradedCase("b", {"t": "none"}),
...          GradedCase("c", {"t": "partial"}, hard=True)]
>>> to_graded_qrels(cases, "t", probe="the theme")
({'theme:t': 'the theme'}, {'theme:t': {'a': 3.0, 'c': 1.0}})
>>> row, named = score_ranking(["b", "a"], cases, "t", k=5,
...                            named_sets=NamedSets("t", distractors=("b",)))
>>> round(row["ndcg"], 4), row["fp_rate"], named["b"]["rank"]
(0.5213, 1.0, 1)
"""

from __future__ import annotations

import math
import numbers
import os
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rowvoi.corpus.eval.cases import read_jsonl, read_meta, write_jsonl
from rowvoi.corpus.eval.metrics import ndcg_at
from rowvoi.corpus.eval.retrieval import DFLT_MODE, open_if_name, search_hits

__all__ = [
    "RELEVANCE_LEVELS",
    "LEVEL_GAINS",
    "GradedCase",
    "save_graded_cases",
    "load_graded_cases",
    "read_meta",
    "level_histogram",
    "to_graded_qrels",
    "NamedSets",
    "derive_named_sets",
    "fp_rate_on_distractors",
    "recall_on_hard_positives",
    "NamedSetReport",
    "evaluate_named_sets",
    "score_ranking",
    "ComparisonReport",
    "compare_indexings",
]

#: The relevance levels, weakest first.
RELEVANCE_LEVELS = ("none", "tangential", "partial", "strong", "core")
#: Gain of each level in graded nDCG.
LEVEL_GAINS: Mapping[str, float] = {
    "none": 0.0,
    "tangential": 0.0,
    "partial": 1.0,
    "strong": 2.0,
    "core": 3.0,
}
_ALIASES = {"uses-tools": "partial"}
_POSITIVE_ROLE = ("strong", "core")


def _level(theme: str, level: Any) -> str:
    level = _ALIASES.get(level, level)
    if level not in RELEVANCE_LEVELS:
        raise ValueError(
            f"theme {theme!r}: unknown relevance level {level!r}; use one of "
            f"{', '.join(RELEVANCE_LEVELS)}"
        )
    return str(level)


@dataclass(frozen=True)
class GradedCase:
    """One artifact's graded relevance to one or more themes.

    Attributes
    ----------
    artifact_id : str
    labels : mapping
        ``{theme: level}``, levels from :data:`RELEVANCE_LEVELS`.
    evidence : mapping
        ``{theme: why}``: the reason for a label, for a human to audit.
    observed : mapping
        ``{theme: score}`` a ranking gave the artifact when the labels were
        frozen (used to derive distractors).
    hard : bool
        The artifact is known to be hard to find (a thin description, an
        unusual vocabulary); relevant hard artifacts are hard positives.
    is_distractor : mapping
        ``{theme: bool}``: an explicit distractor verdict, overriding the
        rule of :func:`derive_named_sets`.
    metadata : mapping
    """

    artifact_id: str
    labels: Mapping[str, str] = field(default_factory=dict)
    evidence: Mapping[str, str] = field(default_factory=dict)
    observed: Mapping[str, float] = field(default_factory=dict)
    hard: bool = False
    is_distractor: Mapping[str, bool] = field(default_factory=dict)
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.artifact_id, str) or not self.artifact_id:
            raise ValueError(f"artifact_id must be a non-empty string, got {self.artifact_id!r}")
        object.__setattr__(
            self, "labels", {str(t): _level(str(t), lv) for t, lv in dict(self.labels).items()}
        )
        obs: dict[str, float] = {}
        for t, v in dict(self.observed).items():
            if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v):
                raise ValueError(f"observed[{t!r}] must be a finite number, got {v!r}")
            obs[str(t)] = float(v)
        object.__setattr__(self, "observed", obs)
        object.__setattr__(self, "evidence", dict(self.evidence))
        object.__setattr__(
            self, "is_distractor", {str(t): bool(v) for t, v in dict(self.is_distractor).items()}
        )
        object.__setattr__(self, "metadata", dict(self.metadata))

    def level(self, theme: str) -> str:
        """The level for ``theme`` (``"none"`` when unlabelled)."""
        return self.labels.get(theme, "none")

    def gain(self, theme: str, *, gains: Mapping[str, float] = LEVEL_GAINS) -> float:
        """The gain for ``theme`` (a level missing from ``gains``: 0.0)."""
        return float(gains.get(self.level(theme), 0.0))

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python form (empty optional fields omitted)."""
        out: dict[str, Any] = {"artifact_id": self.artifact_id, "labels": dict(self.labels)}
        for key in ("evidence", "observed", "is_distractor", "metadata"):
            if getattr(self, key):
                out[key] = dict(getattr(self, key))
        if self.hard:
            out["hard"] = True
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> GradedCase:
        """Inverse of :meth:`to_dict` (``thin_description`` is read as
        ``hard``, the ``ir`` spelling)."""
        if not isinstance(d, Mapping) or "artifact_id" not in d:
            raise ValueError("a graded case is a JSON object with an 'artifact_id'")
        return cls(
            str(d["artifact_id"]),
            d.get("labels") or {},
            d.get("evidence") or {},
            d.get("observed") or {},
            bool(d.get("hard", d.get("thin_description", False))),
            d.get("is_distractor") or {},
            d.get("metadata") or {},
        )


def save_graded_cases(
    cases: Iterable[GradedCase],
    path: str | os.PathLike[str],
    *,
    meta: Mapping[str, Any] | None = None,
) -> Path:
    """Write graded cases as JSONL (atomically); ``meta`` -- conventionally
    ``{"probes": {theme: text}, "corpus_signature": ...}`` -- first."""
    return write_jsonl(path, [c.to_dict() for c in cases], meta=meta)


def load_graded_cases(path: str | os.PathLike[str]) -> list[GradedCase]:
    """The graded cases of a JSONL file; ``ValueError`` names a bad line."""
    out = []
    for n, obj in read_jsonl(path)[1]:
        try:
            out.append(GradedCase.from_dict(obj))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{path}:{n}: {exc}") from None
    return out


def level_histogram(cases: Sequence[GradedCase], theme: str) -> dict[str, int]:
    """``{level: count}`` for ``theme``, every level present.

    >>> level_histogram([GradedCase("a", {"t": "core"})], "t")["core"]
    1
    """
    counts = Counter(c.level(theme) for c in cases)
    return {lv: counts.get(lv, 0) for lv in RELEVANCE_LEVELS}


def to_graded_qrels(
    cases: Sequence[GradedCase],
    theme: str,
    *,
    probe: str | None = None,
    gains: Mapping[str, float] = LEVEL_GAINS,
    query_id: str | None = None,
) -> tuple[dict[str, str], dict[str, dict[str, float]]]:
    """``(queries, qrels)`` of one theme: one query (``probe``, default the
    theme's name) judging every artifact of positive gain at its gain."""
    qid = query_id or f"theme:{theme}"
    judged = {c.artifact_id: c.gain(theme, gains=gains) for c in cases}
    return {qid: probe or theme}, {qid: {a: g for a, g in judged.items() if g > 0}}


# ---------------------------------------------------------------- named sets
@dataclass(frozen=True)
class NamedSets:
    """The named diagnostic sets of one theme (ids sorted, unique)."""

    theme: str
    distractors: tuple[str, ...] = ()
    hard_positives: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "distractors", tuple(sorted(set(map(str, self.distractors)))))
        object.__setattr__(
            self, "hard_positives", tuple(sorted(set(map(str, self.hard_positives))))
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python form."""
        return {
            "theme": self.theme,
            "distractors": list(self.distractors),
            "hard_positives": list(self.hard_positives),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> NamedSets:
        """Inverse of :meth:`to_dict`."""
        return cls(
            str(d["theme"]),
            tuple(d.get("distractors") or ()),
            tuple(d.get("hard_positives") or ()),
        )


def derive_named_sets(
    cases: Sequence[GradedCase],
    theme: str,
    *,
    observed_floor: float,
    gains: Mapping[str, float] = LEVEL_GAINS,
) -> NamedSets:
    """The named sets of ``theme``, from the labels alone.

    Distractors: artifacts of gain 0 whose ``observed`` score for the theme
    is at least ``observed_floor`` (they ranked high enough to pollute the
    top), unless ``is_distractor[theme]`` says otherwise. Hard positives:
    ``strong`` or ``core`` artifacts marked ``hard``.

    >>> cs = [GradedCase("x", {"t": "none"}, observed={"t": 0.8}),
    ...       GradedCase("y", {"t": "none"}, observed={"t": 0.1}),
    ...       GradedCase("z", {"t": "core"}, hard=True)]
    >>> derive_named_sets(cs, "t", observed_floor=0.5)
    NamedSets(theme='t', distractors=('x',), hard_positives=('z',))
    """
    distractors, hard = [], []
    for c in cases:
        verdict = c.is_distractor.get(theme)
        if verdict is None:
            seen = c.observed.get(theme)
            verdict = (
                c.gain(theme, gains=gains) <= 0 and seen is not None and seen >= observed_floor
            )
        if verdict:
            distractors.append(c.artifact_id)
        if c.level(theme) in _POSITIVE_ROLE and c.hard:
            hard.append(c.artifact_id)
    return NamedSets(theme, tuple(distractors), tuple(hard))


def _share_in_top(ranking: Sequence[str], ids: Iterable[str], k: int) -> float:
    ids = tuple(dict.fromkeys(ids))
    if not ids:
        return 0.0
    top = set(list(dict.fromkeys(ranking))[:k])
    return sum(1 for i in ids if i in top) / len(ids)


def fp_rate_on_distractors(
    ranking: Sequence[str], distractor_ids: Iterable[str], *, k: int
) -> float:
    """Share of the named distractors in the top ``k`` (0.0 for none named)."""
    return _share_in_top(ranking, distractor_ids, k)


def recall_on_hard_positives(
    ranking: Sequence[str], hard_positive_ids: Iterable[str], *, k: int
) -> float:
    """Share of the named hard positives in the top ``k`` (0.0 for none named)."""
    return _share_in_top(ranking, hard_positive_ids, k)


def _named(
    ranking: Sequence[str], sets: NamedSets, k: int, scores: Mapping[str, float] | None
) -> tuple[dict[str, float], dict[str, dict[str, Any]]]:
    rank_of = {a: i + 1 for i, a in enumerate(dict.fromkeys(ranking))}
    row = {
        "fp_rate": fp_rate_on_distractors(ranking, sets.distractors, k=k),
        "hard_positive_recall": recall_on_hard_positives(ranking, sets.hard_positives, k=k),
    }
    roles = {
        **{d: "distractor" for d in sets.distractors},
        **{h: "hard_positive" for h in sets.hard_positives},
    }
    named = {
        a: {"role": role, "rank": rank_of.get(a), "score": (scores or {}).get(a)}
        for a, role in roles.items()
    }
    return row, named


def score_ranking(
    ranking: Sequence[str],
    cases: Sequence[GradedCase],
    theme: str,
    *,
    k: int,
    named_sets: NamedSets | None = None,
    scores: Mapping[str, float] | None = None,
    gains: Mapping[str, float] = LEVEL_GAINS,
) -> tuple[dict[str, float], dict[str, dict[str, Any]]]:
    """One theme ranking's graded nDCG@k and where each named id landed.

    Returns ``(row, named)``: ``row`` is ``{"ndcg"}`` plus, with
    ``named_sets``, ``"fp_rate"`` and ``"hard_positive_recall"``;
    ``named`` maps each named id to ``{"role", "rank", "score"}`` (rank
    1-based, None when absent).
    """
    _, qrels = to_graded_qrels(cases, theme, gains=gains, query_id="q")
    row = {"ndcg": ndcg_at(ranking, qrels["q"], k)}
    named: dict[str, dict[str, Any]] = {}
    if named_sets is not None:
        extra, named = _named(ranking, named_sets, k, scores)
        row.update(extra)
    return row, named


@dataclass(frozen=True)
class NamedSetReport:
    """:func:`evaluate_named_sets`' outcome for one theme: the rates and the
    ids behind them (distractors seen in the top ``k``, hard positives
    missed)."""

    theme: str
    k: int
    fp_rate: float
    hard_positive_recall: float
    distractors_seen: tuple[str, ...] = ()
    hard_positives_missed: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python form."""
        return {
            "theme": self.theme,
            "k": self.k,
            "fp_rate": self.fp_rate,
            "hard_positive_recall": self.hard_positive_recall,
            "distractors_seen": list(self.distractors_seen),
            "hard_positives_missed": list(self.hard_positives_missed),
        }


def evaluate_named_sets(
    corpus: Any,
    named_sets: NamedSets,
    *,
    probe: str,
    mode: str = DFLT_MODE,
    k: int = 10,
    surfaces: Any = None,
    **search_kw: Any,
) -> NamedSetReport:
    """Search ``probe`` once and score the theme's named sets at ``k``."""
    from rowvoi._validate import integer as _check_int

    k = _check_int("k", k, 1)
    hits = search_hits(
        open_if_name(corpus), probe, k=k, mode=mode, surfaces=surfaces, search_kw=search_kw
    )
    ranking = [h.artifact_id for h in hits]
    row, _ = _named(ranking, named_sets, k, None)
    top = set(ranking[:k])
    return NamedSetReport(
        named_sets.theme,
        k,
        row["fp_rate"],
        row["hard_positive_recall"],
        tuple(d for d in named_sets.distractors if d in top),
        tuple(h for h in named_sets.hard_positives if h not in top),
    )


# ---------------------------------------------------------------- comparison
@dataclass(frozen=True)
class ComparisonReport:
    """The outcome of :func:`compare_indexings`.

    Attributes
    ----------
    k : int
    themes, labels : tuple of str
    baseline : str
        The label :meth:`regressions` compares against (the first).
    metrics : dict
        ``{label: {theme: {"ndcg", "fp_rate"?, "hard_positive_recall"?}}}``.
    named : dict
        ``{theme: {artifact id: {"role", "by_label": {label: {"rank",
        "score"}}}}}``: where each named artifact landed per label (rank
        None: not in the ranking).
    """

    k: int
    themes: tuple[str, ...]
    labels: tuple[str, ...]
    baseline: str
    metrics: dict[str, dict[str, dict[str, float]]]
    named: dict[str, dict[str, dict[str, Any]]]

    def regressions(
        self, *, threshold: int = 0, baseline: str | None = None
    ) -> list[dict[str, Any]]:
        """Named artifacts that fared worse than on ``baseline``.

        A hard positive regresses when its rank grows by more than
        ``threshold`` places; a distractor when its rank shrinks (rises) by
        more than ``threshold``. An artifact absent from a ranking ranks
        below every present one. One dict per regression: ``theme``,
        ``artifact_id``, ``role``, ``label``, ``baseline_rank``,
        ``candidate_rank``. ``assert not report.regressions()`` is the gate.
        """
        from rowvoi._validate import integer as _check_int

        threshold = _check_int("threshold", threshold, 0)
        base = self.baseline if baseline is None else baseline
        if base not in self.labels:
            raise ValueError(f"unknown baseline {base!r}; labels are {list(self.labels)}")
        out = []
        for theme in self.themes:
            for aid, info in self.named.get(theme, {}).items():
                by = info["by_label"]
                b = by[base]["rank"]
                b_eff = math.inf if b is None else b
                for label in self.labels:
                    if label == base:
                        continue
                    c = by[label]["rank"]
                    c_eff = math.inf if c is None else c
                    if info["role"] == "hard_positive":
                        worse = c_eff > b_eff and (c is None or c - b_eff > threshold)
                    else:
                        worse = c_eff < b_eff and (b is None or b - c_eff > threshold)
                    if worse:
                        out.append(
                            {
                                "theme": theme,
                                "artifact_id": aid,
                                "role": info["role"],
                                "label": label,
                                "baseline_rank": b,
                                "candidate_rank": c,
                            }
                        )
        return out

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python form."""
        return {
            "k": self.k,
            "themes": list(self.themes),
            "labels": list(self.labels),
            "baseline": self.baseline,
            "metrics": {
                lb: {t: dict(r) for t, r in th.items()} for lb, th in self.metrics.items()
            },
            "named": {
                t: {
                    a: {
                        "role": i["role"],
                        "by_label": {lb: dict(c) for lb, c in i["by_label"].items()},
                    }
                    for a, i in ids.items()
                }
                for t, ids in self.named.items()
            },
        }

    def __str__(self) -> str:
        lines = [
            f"{len(self.labels)} configurations x {len(self.themes)} themes, k={self.k}; "
            f"baseline {self.baseline!r}"
        ]
        for label in self.labels:
            for theme in self.themes:
                row = self.metrics[label][theme]
                cells = "  ".join(f"{m} {v:.4f}" for m, v in row.items())
                lines.append(f"  {label:<16} {theme:<16} {cells}")
        return "\n".join(lines)


#: ``ranker(probe, *, k) -> hits``: a comparison arm that is not one search.
Ranker = Callable[..., Sequence[Any]]


def compare_indexings(
    corpora: Mapping[str, Any],
    cases: Sequence[GradedCase],
    *,
    themes: Sequence[str],
    probes: Mapping[str, str],
    k: int = 20,
    named_sets: Mapping[str, NamedSets] | None = None,
    mode: str = DFLT_MODE,
    rank_depth: int = 1000,
    gains: Mapping[str, float] = LEVEL_GAINS,
    surfaces: Any = None,
    search_kw_by_label: Mapping[str, Mapping[str, Any]] | None = None,
    **search_kw: Any,
) -> ComparisonReport:
    """Rank every theme probe on every corpus; compare to the first.

    Parameters
    ----------
    corpora : mapping
        ``{label: corpus, corpus name, or ranker}``; a ranker is a function
        ``(probe, *, k) -> hits`` (objects with ``artifact_id`` and
        ``score``, best first). The first label is the baseline. One corpus
        may appear under several labels with different
        ``search_kw_by_label`` settings, to compare search settings.
    cases : sequence of GradedCase
    themes : sequence of str
    probes : mapping
        ``{theme: probe text}`` (usually ``read_meta(path)["probes"]``).
    k : int
        Cutoff of the metrics.
    named_sets : mapping or None
        ``{theme: NamedSets}``.
    mode, surfaces, **search_kw
        Search settings of every corpus arm.
    rank_depth : int
        Each ranking is fetched this deep (>= k), so a buried named
        artifact still gets a rank.
    gains : mapping
        Level gains of graded nDCG.
    search_kw_by_label : mapping or None
        Per-label search settings on top of the shared ones (not for
        ranker arms; not ``k`` or ``per_artifact``).

    Returns
    -------
    ComparisonReport

    Raises
    ------
    ValueError
        No corpora, a theme without a probe, ``rank_depth < k``, settings
        naming an unknown label, a ranker, or ``k`` / ``per_artifact``.
    """
    from rowvoi._validate import integer as _check_int

    labels = tuple(corpora)
    if not labels:
        raise ValueError("compare_indexings needs at least one corpus")
    k = _check_int("k", k, 1)
    rank_depth = _check_int("rank_depth", rank_depth, 1)
    if rank_depth < k:
        raise ValueError(f"rank_depth ({rank_depth}) must be >= k ({k})")
    themes = tuple(themes)
    missing = [t for t in themes if t not in probes]
    if missing:
        raise ValueError(f"no probe text for theme(s) {missing}")
    per_label = {str(lb): dict(v) for lb, v in (search_kw_by_label or {}).items()}
    unknown = sorted(set(per_label) - set(labels))
    if unknown:
        raise ValueError(f"search_kw_by_label names unknown label(s) {unknown}")
    if any({"k", "per_artifact"} & set(v) for v in per_label.values()):
        raise ValueError(
            "search_kw_by_label cannot set k or per_artifact: every ranking is "
            "per artifact, rank_depth deep"
        )

    def ranker_of(label: str) -> Ranker:
        arm = corpora[label]
        if callable(arm) and not hasattr(arm, "store"):
            if label in per_label:
                raise ValueError(
                    f"search_kw_by_label names {label!r}, a ranker; search "
                    "settings only apply to corpora"
                )
            ranker: Ranker = arm
            return ranker
        c = open_if_name(arm)
        kw = {"mode": mode, "surfaces": surfaces, **search_kw, **per_label.get(label, {})}
        arm_mode, arm_surfaces = kw.pop("mode"), kw.pop("surfaces")

        def rank(probe: str, *, k: int) -> list[Any]:
            return search_hits(c, probe, k=k, mode=arm_mode, surfaces=arm_surfaces, search_kw=kw)

        return rank

    metrics: dict[str, dict[str, dict[str, float]]] = {}
    named: dict[str, dict[str, dict[str, Any]]] = {t: {} for t in themes}
    for label in labels:
        rank = ranker_of(label)
        metrics[label] = {}
        for theme in themes:
            first: dict[str, Any] = {}
            for hit in rank(probes[theme], k=rank_depth):
                first.setdefault(str(hit.artifact_id), hit)
            ranking = list(first)[:rank_depth]
            sets = (named_sets or {}).get(theme)
            row, where = score_ranking(
                ranking,
                cases,
                theme,
                k=k,
                named_sets=sets,
                scores={a: float(first[a].score) for a in ranking},
                gains=gains,
            )
            metrics[label][theme] = row
            for aid, cell in where.items():
                entry = named[theme].setdefault(aid, {"role": cell["role"], "by_label": {}})
                entry["by_label"][label] = {"rank": cell["rank"], "score": cell["score"]}
    return ComparisonReport(k, themes, labels, labels[0], metrics, named)
