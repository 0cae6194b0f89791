"""Discover: the one-call search tool -- retrieve, select, disclose.

:func:`discover` runs a search, commits to the few results worth acting on
(or abstains; :func:`~rowvoi.corpus.retrieval.selection.select`) and hands back each
committed result's payload (:func:`~rowvoi.corpus.retrieval.disclosure.disclose`) as a
:class:`DiscoveryResult` whose :meth:`~DiscoveryResult.to_dict` is plain
JSON -- what an agent's tool or an HTTP endpoint returns.

Several corpora at once (federation)
------------------------------------
Pass a list of corpora (or names) and each is searched on its own. Scores
of different corpora are never compared: each source is first gated on its
**own** absolute floor -- its hits below the floor are dropped, on its own
scale -- and the survivors are then fused by rank
(:func:`~rowvoi.corpus.retrieval.fusion.fuse_hits`, weighted reciprocal rank fusion).
The fused ranking is never floored (fused scores are ordinal). The same
artifact id in two corpora stays two results, told apart by ``source``.
``merge="score"`` merges raw scores instead, and is allowed only when every
corpus was built with the same embedder (checked); ``merge`` may also be a
callable ``{name: hits} -> hits``.

Floors
------
``min_score`` is opt-in abstention. For one corpus: a number, ``None`` or
``"auto"``. For several: ``None``, ``"auto"`` or a mapping
``{name: number | "auto" | None}`` (a bare number raises: one number cannot
be right on several scales). ``"auto"`` reads the floor calibrated for the
corpus and the search's mode from the corpus's ``calibration`` table (see
:func:`calibration_key` and :mod:`rowvoi.corpus.retrieval.calibration`); when none
is stored, or it no longer applies (another embedder, analyzer or
strategy, other blend parameters: :func:`calibration_problem`), or the
search reweights or boosts scores (``surface_weights``, ``boost``), or
reranks them with an unnamed reranker, :class:`NoFloorWarning` is
issued and no floor applies -- never a guessed one. A floor compares each
hit's :func:`~rowvoi.corpus.retrieval.selection.floor_score`: for a hybrid RRF
search, the hit's absolute evidence rather than its rank-only RRF score.
A reranked search (``rerank=``) reads the floor calibrated for its
reranker (:func:`calibration_key` with the reranker's tag).

Thread-safety: :func:`discover` is safe to call from many threads on shared
corpora (searches only read).
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rowvoi._validate import integer as _check_int
from rowvoi.corpus.base import SearchHit, plain, tag_source
from rowvoi.corpus.retrieval.calibration import (
    calibration_key,
    calibration_problem,
    search_tag,
    stored_calibration,
)
from rowvoi.corpus.retrieval.corpus import kept_corpus, search
from rowvoi.corpus.retrieval.disclosure import (
    DISCLOSURE_LEVELS,
    BodyLoader,
    Disclosure,
    ResourceStore,
    disclose,
)
from rowvoi.corpus.retrieval.expansion import NeighborhoodPolicy
from rowvoi.corpus.retrieval.fusion import DFLT_RRF_K, fuse_hits
from rowvoi.corpus.retrieval.rerank import is_anonymous
from rowvoi.corpus.retrieval.selection import (
    DFLT_GAP_RATIO,
    DFLT_MAX_K,
    DFLT_REL_THRESHOLD,
    Selection,
    Selector,
    _top_evidence,
    check_floor,
    floor_score,
    ranked,
    select,
    strategy_name,
)

__all__ = [
    "DiscoveryResult",
    "discover",
    "calibration_key",
    "NoFloorWarning",
    "MERGES",
    "stored_calibration",
]

#: The named ways federated discovery merges its sources.
MERGES = ("rrf", "score")


class NoFloorWarning(UserWarning):
    """``min_score="auto"`` found no usable calibrated floor, so the search
    does not abstain by absolute score."""


@dataclass(frozen=True)
class DiscoveryResult:
    """What :func:`discover` found and committed to.

    Attributes
    ----------
    query, mode, strategy, disclose_level : str
        Echo the request (``strategy`` names a callable by its
        ``__name__``).
    results : list[Disclosure]
        One per committed hit, best first (empty when abstaining).
    abstained : bool
    reason : str
        The rule that ended the commit (see :class:`Selection`); federated
        discovery adds ``"abstain:no_candidates"`` when no corpus returned
        anything and ``"abstain:below_floor"`` when every corpus that did
        was gated by its floor.
    n_retrieved : int
        Hits retrieved before any floor (summed over corpora).
    signals : dict
        The selection's signals (``top_score``, ``n_candidates``,
        ``n_selected``, ``min_ratio``, ``min_score``, ``floor_compares``,
        ``top_floor_score``: what the floor compared and its best value,
        see :class:`Selection`), ``floor_from``
        (``"given"``, ``"calibration"`` or None), ``top_evidence`` for a
        hybrid RRF search (the best evidence among the hits: what the floor
        compared), ``no_hits`` when the search found nothing (why:
        :attr:`rowvoi.corpus.SearchHits.reason`) and, for several corpora,
        ``per_source``: ``{name: {n_retrieved, top_score, floor,
        abstained}}`` (plus ``top_evidence``, and ``no_hits`` for a corpus
        whose search found nothing).
    selection : Selection or None
        The selection behind the results (its hits keep every field; not
        part of :meth:`to_dict`).

    Examples
    --------
    >>> r = DiscoveryResult("q", "hybrid", "conservative", "metadata", [], True,
    ...                     "abstain:no_candidates", 0)
    >>> r.ids, r.to_dict()["abstained"]
    ([], True)
    """

    query: str
    mode: str
    strategy: str
    disclose_level: str
    results: list[Disclosure]
    abstained: bool
    reason: str
    n_retrieved: int
    signals: dict[str, Any] = field(default_factory=dict)
    selection: Selection | None = field(default=None, repr=False, compare=False)

    @property
    def ids(self) -> list[str]:
        """The committed artifact ids, best first."""
        return [d.artifact_id for d in self.results]

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python form (lists, dicts, str, float, int, bool, None)."""
        return {
            "query": self.query,
            "mode": self.mode,
            "strategy": self.strategy,
            "disclose_level": self.disclose_level,
            "results": [d.to_dict() for d in self.results],
            "abstained": bool(self.abstained),
            "reason": self.reason,
            "n_retrieved": int(self.n_retrieved),
            "signals": plain(self.signals),
        }


# ------------------------------------------------------------------ floors
def _calibrated_floor(corpus: Any, mode: str, search_kw: Mapping[str, Any]) -> float | None:
    """The floor stored for ``corpus`` and this search, or None (warned)."""
    name = getattr(corpus, "name", None)
    label = f"corpus {name!r}" if name else "the corpus"
    if search_kw.get("surface_weights"):
        warnings.warn(
            f"{label}: surface_weights rescale scores, and floors are calibrated "
            "without them; not abstaining by absolute score",
            NoFloorWarning,
            stacklevel=4,
        )
        return None
    if search_kw.get("boost") is not None:
        warnings.warn(
            f"{label}: a boost shifts scores, and floors are calibrated without "
            "one; not abstaining by absolute score (pass min_score=<number>)",
            NoFloorWarning,
            stacklevel=4,
        )
        return None
    tag = search_tag(search_kw)
    if is_anonymous(tag):
        warnings.warn(
            f"{label}: the reranker has no name (a rerank_id attribute), so no floor "
            "can be stored for its scores; not abstaining by absolute score (name it: "
            "reranker.rerank_id = 'my-reranker', then calibrate with it)",
            NoFloorWarning,
            stacklevel=4,
        )
        return None
    key = calibration_key(mode, str(search_kw.get("fusion", "rrf")), tag)
    record = stored_calibration(corpus, key)
    if record is None:
        warnings.warn(
            f"{label}: no floor is calibrated for {key!r} searches; not abstaining "
            "by absolute score (calibrate one, or pass min_score=<number>)",
            NoFloorWarning,
            stacklevel=4,
        )
        return None
    floor = record.get("min_score")
    problem = calibration_problem(corpus, record, mode, search_kw)
    if problem is not None:
        warnings.warn(
            f"{label}: the floor for {key!r} was {problem}; not abstaining by "
            "absolute score (calibrate again: rowvoi calibrate, or "
            "rowvoi.corpus.calibrate_min_score)",
            NoFloorWarning,
            stacklevel=4,
        )
        return None
    if (
        floor is None
        or isinstance(floor, bool)
        or not isinstance(floor, numbers.Real)
        or not math.isfinite(floor)
    ):
        warnings.warn(
            f"{label}: the calibration for {key!r} holds no usable floor "
            f"({floor!r}); not abstaining by absolute score",
            NoFloorWarning,
            stacklevel=4,
        )
        return None
    return float(floor)


def _floor(
    corpus: Any, spec: Any, mode: str, search_kw: Mapping[str, Any]
) -> tuple[float | None, str | None]:
    """``(floor, where it came from)`` for one corpus and one floor spec."""
    if isinstance(spec, str):
        if spec != "auto":
            raise ValueError(f"min_score must be a number, None or 'auto', got {spec!r}")
        value = _calibrated_floor(corpus, mode, search_kw)
        return value, ("calibration" if value is not None else None)
    value = check_floor(spec)
    return value, ("given" if value is not None else None)


# ------------------------------------------------------------------ checks
def _open(corpus: Any) -> Any:
    if isinstance(corpus, str):
        return kept_corpus(corpus)
    if corpus is None:
        raise TypeError("discover needs a corpus (an open corpus or a corpus name), got None")
    return corpus


# ------------------------------------------------------------------ discover
def discover(
    corpus: Any,
    query: str,
    *,
    k: int = 10,
    mode: str = "hybrid",
    strategy: str | Selector = "conservative",
    disclose_level: str = "metadata",
    filter: Mapping[str, Any] | None = None,
    surfaces: Any = None,
    max_k: int = DFLT_MAX_K,
    rel: float = DFLT_REL_THRESHOLD,
    gap_ratio: float = DFLT_GAP_RATIO,
    min_score: Any = None,
    merge: str | Callable[[dict[str, list[SearchHit]]], Sequence[SearchHit]] = "rrf",
    merge_weights: Mapping[str, float] | None = None,
    merge_rrf_k: float | None = None,
    loader: BodyLoader | None = None,
    store: ResourceStore | None = None,
    expand: NeighborhoodPolicy | None = None,
    roots: Sequence[Any] | None = None,
    **search_kw: Any,
) -> DiscoveryResult:
    """Search, commit to the best few results (or abstain), disclose them.

    Parameters
    ----------
    corpus : corpus, str, or list of them
        An open corpus or a corpus name (kept open by the process:
        :func:`~rowvoi.corpus.retrieval.corpus.kept_corpus`); a list or
        tuple of them for federated discovery (see the module docstring).
    query : str
        The user's request, searched verbatim.
    k : int
        Candidates retrieved (per corpus when federated; the fused ranking
        is cut to ``k`` too).
    mode : {"hybrid", "dense", "lexical"}
        The search mode (default hybrid).
    strategy, max_k, rel, gap_ratio
        Selection (see :func:`~rowvoi.corpus.retrieval.selection.select`).
    disclose_level : {"metadata", "body", "bundled"}
        How much to load for each committed hit (default ``"metadata"``,
        no I/O).
    filter, surfaces
        Passed to :func:`rowvoi.corpus.search`.
    min_score : float, "auto", Mapping or None
        The absolute floor (see the module docstring); None never abstains.
    merge : {"rrf", "score"} or callable
        Federated only: how the sources' survivors combine.
    merge_weights : Mapping[str, float] or None
        Federated only: per-corpus trust weights for RRF (default 1.0).
    merge_rrf_k : float or None
        Federated only: the RRF constant across corpora (default 60;
        distinct from a hybrid search's own ``rrf_k`` in ``search_kw``).
    loader, store, expand, roots
        Disclosure options (see :func:`~rowvoi.corpus.retrieval.disclosure.disclose`);
        roots default to each corpus's allowed roots.
    **search_kw
        Any other :func:`rowvoi.corpus.search` keyword (``fusion``,
        ``rrf_k``, ``alpha``, ``surface_weights``, ``index``, ...).

    Returns
    -------
    DiscoveryResult

    Raises
    ------
    ValueError
        Bad ``k``, strategy, level or floor; a bare number as the floor of
        several corpora; floors or weights naming a corpus not searched;
        two corpora of one name; ``merge="score"`` over corpora with
        different embedders; an unknown merge. Search errors (unknown
        corpus, mode, filter field...) propagate unchanged.

    Examples
    --------
    >>> from rowvoi.corpus import CorpusStore, build, from_mapping
    >>> docs = from_mapping({"a": "wing stall at high angle of attack",
    ...                      "b": "boundary layer transition on a flat plate",
    ...                      "c": "shock waves in supersonic nozzles"},
    ...                     name="aero", embedder="hashing")
    >>> aero = build(docs, store=CorpusStore.memory(), progress=False)
    >>> res = discover(aero, "stall of a wing", mode="lexical")
    >>> res.ids, res.reason
    (['a'], 'exhausted')
    >>> res.to_dict()["results"][0]["summary"]
    'wing stall at high angle of attack'
    """
    k = _check_int("k", k, 1)
    strategy_label = strategy_name(strategy)
    if disclose_level not in DISCLOSURE_LEVELS:
        raise ValueError(
            f"unknown disclosure level {disclose_level!r}; use one of "
            f"{', '.join(DISCLOSURE_LEVELS)}"
        )
    common: dict[str, Any] = dict(strategy=strategy, max_k=max_k, rel=rel, gap_ratio=gap_ratio)
    disclosure: dict[str, Any] = dict(
        level=disclose_level, loader=loader, store=store, expand=expand, roots=roots
    )
    if isinstance(corpus, (list, tuple)):
        return _federated(
            list(corpus),
            query,
            k=k,
            mode=mode,
            strategy_label=strategy_label,
            filter=filter,
            surfaces=surfaces,
            min_score=min_score,
            merge=merge,
            merge_weights=merge_weights,
            merge_rrf_k=merge_rrf_k,
            common=common,
            disclosure=disclosure,
            search_kw=search_kw,
        )
    c = _open(corpus)
    if isinstance(min_score, Mapping):
        raise TypeError(
            "a mapping of floors is for several corpora; for one corpus pass a "
            "number, 'auto' or None"
        )
    floor, floor_from = _floor(c, min_score, mode, search_kw)
    hits = search(c, query, k=k, mode=mode, filter=filter, surfaces=surfaces, **search_kw)
    selection = select(hits, min_score=floor, query=query, **common)
    results = disclose(selection, corpus=c, **disclosure)
    signals = dict(selection.signals)
    signals["floor_from"] = floor_from
    evidence = _top_evidence(hits)
    if evidence is not None:
        signals["top_evidence"] = evidence
    if not hits and getattr(hits, "reason", None):
        signals["no_hits"] = hits.reason
    return DiscoveryResult(
        query,
        mode,
        strategy_label,
        disclose_level,
        results,
        selection.abstained,
        selection.reason,
        len(hits),
        signals,
        selection,
    )


def _federated(
    corpora: list[Any],
    query: str,
    *,
    k: int,
    mode: str,
    strategy_label: str,
    filter: Any,
    surfaces: Any,
    min_score: Any,
    merge: Any,
    merge_weights: Any,
    merge_rrf_k: Any,
    common: dict[str, Any],
    disclosure: dict[str, Any],
    search_kw: dict[str, Any],
) -> DiscoveryResult:
    if not corpora:
        raise ValueError("discover got an empty list of corpora; name at least one")
    opened = [_open(c) for c in corpora]
    names: list[str] = []
    for c in opened:
        name = getattr(c, "name", None)
        if not isinstance(name, str) or not name:
            raise ValueError(
                "federated discovery tells corpora apart by name; open or build "
                "each corpus under a name"
            )
        if name in names:
            raise ValueError(f"corpus {name!r} is listed twice")
        names.append(name)
    floors = _federated_floor_specs(min_score, names)
    if merge_weights is not None:
        unknown = [w for w in merge_weights if w not in names]
        if unknown:
            raise ValueError(f"merge_weights names corpora that are not searched: {unknown}")
    if not (callable(merge) or merge in MERGES):
        raise ValueError(
            f"unknown merge {merge!r}; use one of {', '.join(MERGES)} or a "
            "callable {name: hits} -> hits"
        )
    if merge == "score":
        ids = {c.embedder_id for c in opened}
        if len(ids) > 1:
            raise ValueError(
                "merge='score' compares raw scores, which needs one embedder for "
                f"every corpus; these use {sorted(ids)}; use merge='rrf'"
            )
    per_source: dict[str, dict[str, Any]] = {}
    survivors: dict[str, list[SearchHit]] = {}
    floor_from: dict[str, str | None] = {}
    n_retrieved = 0
    for name, c in zip(names, opened):
        floor, floor_from[name] = _floor(c, floors.get(name), mode, search_kw)
        found = search(c, query, k=k, mode=mode, filter=filter, surfaces=surfaces, **search_kw)
        hits = tag_source(ranked(found), name)
        kept = hits if floor is None else [h for h in hits if floor_score(h) >= floor]
        n_retrieved += len(hits)
        survivors[name] = kept
        per_source[name] = {
            "n_retrieved": len(hits),
            "top_score": float(hits[0].score) if hits else None,
            "floor": floor,
            "abstained": not kept,
        }
        evidence = _top_evidence(hits)
        if evidence is not None:
            per_source[name]["top_evidence"] = evidence
        if not hits and getattr(found, "reason", None):
            per_source[name]["no_hits"] = found.reason
    merged = _merge(survivors, merge, merge_weights, merge_rrf_k, k)
    selection = select(merged, min_score=None, query=query, **common)
    reason = selection.reason
    if not merged:
        any_hits = any(p["n_retrieved"] for p in per_source.values())
        reason = "abstain:below_floor" if any_hits else "abstain:no_candidates"
    results = disclose(selection, corpus=dict(zip(names, opened)), **disclosure)
    signals = dict(selection.signals)
    signals["floor_from"] = floor_from
    signals["per_source"] = per_source
    return DiscoveryResult(
        query,
        mode,
        strategy_label,
        str(disclosure["level"]),
        results,
        selection.abstained,
        reason,
        n_retrieved,
        signals,
        selection,
    )


def _federated_floor_specs(min_score: Any, names: list[str]) -> dict[str, Any]:
    if min_score is None or isinstance(min_score, str):
        if isinstance(min_score, str) and min_score != "auto":
            raise ValueError(
                f"min_score must be None, 'auto' or a mapping {{name: floor}}, got {min_score!r}"
            )
        return {n: min_score for n in names}
    if isinstance(min_score, Mapping):
        unknown = [n for n in min_score if n not in names]
        if unknown:
            raise ValueError(f"min_score names corpora that are not searched: {unknown}")
        return dict(min_score)
    raise ValueError(
        f"min_score={min_score!r} cannot apply to several corpora: each scores on its own "
        "scale; pass 'auto' (each corpus's calibrated floor), a mapping {name: floor}, "
        "or None"
    )


def _merge(
    survivors: dict[str, list[SearchHit]], merge: Any, weights: Any, rrf_k: Any, k: int
) -> list[SearchHit]:
    if merge == "rrf":
        by_source: dict[str | None, Sequence[SearchHit]] = {
            name: hits for name, hits in survivors.items()
        }
        return fuse_hits(
            by_source, rrf_k=DFLT_RRF_K if rrf_k is None else rrf_k, weights=weights, k=k
        )
    if merge == "score":
        pooled = [h for hits in survivors.values() for h in hits]
        return ranked(pooled)[:k]
    out = merge({n: list(h) for n, h in survivors.items()})
    if out is None or isinstance(out, (str, bytes)) or not hasattr(out, "__iter__"):
        raise TypeError(f"merge must return a sequence of SearchHit, got {type(out).__name__}")
    return ranked(out)[:k]
