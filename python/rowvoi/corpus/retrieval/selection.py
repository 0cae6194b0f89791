"""Select: commit to a few of the ranked hits, or abstain.

A search returns a ranked list; an agent should act on few, high-precision
results rather than the whole list. :func:`select` turns the ranking into a
:class:`Selection` -- the committed hits, the rule that ended the commit and
the numbers behind it -- with one of these strategies:

``"conservative"`` (default)
    Keep the top hit and every hit scoring at least ``rel`` x the top score,
    at most ``max_k`` of them. Relative to the top, so it works unchanged on
    dense cosines, BM25 scores and fused scores, whose scales differ by
    orders of magnitude.
``"rel_threshold"``
    The same relative band and cap under the strategy name ``ir`` uses for
    it; it selects exactly what ``"conservative"`` selects.
``"score_gap"``
    Keep hits until one scores below ``gap_ratio`` x the hit before it (the
    "elbow" of the score curve), at most ``max_k``.
``"top_k"``
    The first ``max_k`` hits.
``"abs_threshold"``
    Every hit scoring at least ``min_score`` (required), at most ``max_k``.
a callable ``Selector``
    ``hits -> subset``: any rule of your own (a language model's choice, a
    business rule). Its answer must be a subset of the hits; it is put back
    in rank order and capped at ``max_k``. A selector with a true
    ``takes_query`` attribute is called as ``selector(hits, query=query)``
    with the request passed to :func:`select` (:func:`rowvoi.corpus.discover`
    passes it).

:func:`make_llm_selector` builds such a selector on a language model (any
``complete(prompt) -> str``): the model reads the request and the top
candidates and names the ids worth acting on; a reply that fails in any way
(an exception, no JSON list of ids, an id that is not a candidate) gives
the heuristic selection instead, never an error or a guess.

Abstention is opt-in: relative structure alone cannot tell "everything is
irrelevant" from "everything is relevant", so only an absolute floor can.
``min_score`` is that floor, for every strategy: hits below it are never
selected, and when even the top hit is below it the selection abstains
(``reason == "abstain:below_floor"``). Floors are specific to a corpus, a
mode and an embedder (a cosine, a BM25 score and a blend score live on
different scales); :func:`rowvoi.corpus.discover` can load a calibrated one
(:mod:`rowvoi.corpus.retrieval.calibration`). A floor compares each hit's
:func:`floor_score`: its score, except for hits of a hybrid RRF search,
whose rank-only score cannot be floored and whose absolute evidence is
compared instead (see :mod:`rowvoi.corpus.retrieval.corpus`).

Relative rules (``conservative``, ``rel_threshold``, ``score_gap``) need a
non-negative top score: a ratio to a negative number means nothing, so they
raise ``ValueError`` rather than guess. Hits in the tail may be negative (a
dense search can return negative cosines); they are simply below the band.

Ranking and ties: hits are ranked by score, highest first; equal scores keep
their input order. Every function here is pure and thread-safe.

>>> from rowvoi.corpus.base import SearchHit
>>> hits = [SearchHit("a", "document", 0.91, "alpha"),
...         SearchHit("b", "document", 0.88, "beta"),
...         SearchHit("c", "document", 0.40, "gamma")]
>>> sel = select(hits)
>>> sel.selected_ids, sel.reason
(['a', 'b'], 'rel_threshold')
>>> select(hits, min_score=0.95).abstained
True
"""

from __future__ import annotations

import json
import math
import numbers
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rowvoi import _validate as _v
from rowvoi._validate import integer as _check_int
from rowvoi.corpus.base import SearchHit

__all__ = [
    "floor_score",
    "Selection",
    "Selector",
    "select",
    "strategy_name",
    "SELECT_STRATEGIES",
    "DFLT_MAX_K",
    "DFLT_REL_THRESHOLD",
    "DFLT_GAP_RATIO",
    "LLMSelector",
    "SelectorFallbackWarning",
    "make_llm_selector",
    "LLM_SELECT_PROMPT",
]

#: ``hits -> subset``: a selection rule of your own (see :func:`select`).
Selector = Callable[[Sequence[SearchHit]], Sequence[SearchHit]]

#: The named strategies :func:`select` accepts.
SELECT_STRATEGIES = ("conservative", "rel_threshold", "score_gap", "top_k", "abs_threshold")

#: Never commit to more hits than this by default (few, precise answers).
DFLT_MAX_K = 3
#: Keep a hit when it scores at least this fraction of the top score.
DFLT_REL_THRESHOLD = 0.9
#: ``score_gap`` cuts before a hit scoring below this fraction of the previous.
DFLT_GAP_RATIO = 0.5

_RELATIVE = ("conservative", "rel_threshold", "score_gap")


@dataclass(frozen=True)
class Selection:
    """The committed subset of a ranked list of hits.

    Attributes
    ----------
    selected : list[SearchHit]
        The committed hits, best first; empty if and only if ``abstained``.
    candidates : list[SearchHit]
        Every input hit, ranked (score descending, ties in input order),
        kept for audit.
    abstained : bool
        True when nothing was committed.
    reason : str
        The rule that ended the commit: ``"rel_threshold"``, ``"score_gap"``,
        ``"abs_threshold"`` (the floor cut the tail), ``"max_k"`` (the cap),
        ``"exhausted"`` (every candidate kept), ``"selector"`` (a callable
        chose), or when abstaining ``"abstain:no_candidates"``,
        ``"abstain:below_floor"``, ``"abstain:selector"``.
    signals : dict
        The numbers behind the decision: ``top_score`` (None without
        candidates), ``n_candidates``, ``n_selected``, ``min_ratio`` (the
        lowest selected score over the top score; None when nothing is
        selected or the top score is 0), ``min_score`` (the floor, or
        None), ``floor_compares`` (what a floor compares: ``"evidence"``
        when a hit carries it -- a hybrid RRF search's -- else
        ``"score"``) and ``top_floor_score`` (the highest
        :func:`floor_score` among the candidates, the number that decides
        whether a floor abstains; None without candidates). A hybrid RRF
        hit's score can lie below the floor while its evidence reaches it:
        report ``top_floor_score`` beside the floor, never ``top_score``.

    Examples
    --------
    >>> from rowvoi.corpus.base import SearchHit
    >>> sel = select([SearchHit("x", "document", 2.0, "t")], strategy="top_k")
    >>> sel.selected_ids, sel.sufficient, sel.to_dict()["signals"]["top_score"]
    (['x'], True, 2.0)
    """

    selected: list[SearchHit]
    candidates: list[SearchHit]
    abstained: bool
    reason: str
    signals: dict[str, Any] = field(default_factory=dict)

    @property
    def selected_ids(self) -> list[str]:
        """The committed artifact ids, best first."""
        return [h.artifact_id for h in self.selected]

    @property
    def sufficient(self) -> bool:
        """A hint for an agent's loop: True when something was committed.

        A signal, not a directive: whether to search again is the caller's
        decision.
        """
        return not self.abstained

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python form for JSON (no numpy scalars)."""
        return {
            "selected": [h.to_dict() for h in self.selected],
            "candidates": [h.to_dict() for h in self.candidates],
            "abstained": bool(self.abstained),
            "reason": self.reason,
            "signals": dict(self.signals),
        }


# ------------------------------------------------------------- validation
def check_floor(min_score: Any, what: str = "min_score") -> float | None:
    """Validate an absolute score floor: None or a finite real number.

    Raises ``TypeError`` for a non-number and ``ValueError`` for NaN or an
    infinity, naming ``what``.

    >>> check_floor(None), check_floor(0.25)
    (None, 0.25)
    """
    return None if min_score is None else _v.real(what, min_score, finite=True)


def floor_score(hit: SearchHit) -> float:
    """The number an absolute floor compares for ``hit``.

    Its ``explain["evidence"]`` when it has one -- a hit of a hybrid RRF
    search, whose score depends on ranks only and cannot be floored -- and
    its score otherwise.

    >>> from rowvoi.corpus.base import SearchHit
    >>> floor_score(SearchHit("a", "d", 0.8, "")), floor_score(
    ...     SearchHit("a", "d", 0.0325, "", explain={"evidence": 0.61}))
    (0.8, 0.61)
    """
    if _has_evidence(hit):
        return float(hit.explain["evidence"])  # type: ignore[index]
    return float(hit.score)


def _has_evidence(hit: SearchHit) -> bool:
    """Does :func:`floor_score` read the hit's evidence (not its score)?"""
    why = hit.explain
    if why is None:
        return False
    ev = why.get("evidence")
    return isinstance(ev, numbers.Real) and not isinstance(ev, bool) and math.isfinite(ev)


def _top_evidence(hits: Sequence[SearchHit]) -> float | None:
    """The best :func:`floor_score` of ``hits`` when they carry evidence (a
    hybrid RRF search's: what floors compare), else ``None``."""
    if not any(h.explain is not None and "evidence" in h.explain for h in hits):
        return None
    return max(floor_score(h) for h in hits)


def ranked(hits: Sequence[SearchHit]) -> list[SearchHit]:
    """The hits sorted by score, highest first; equal scores keep input order.

    Raises ``TypeError`` for anything that is not a :class:`SearchHit` and
    ``ValueError`` for a score that is not a finite number.

    >>> from rowvoi.corpus.base import SearchHit
    >>> [h.artifact_id for h in ranked([SearchHit("a", "d", 1.0, ""),
    ...                                 SearchHit("b", "d", 3.0, ""),
    ...                                 SearchHit("c", "d", 1.0, "")])]
    ['b', 'a', 'c']
    """
    if isinstance(hits, (str, bytes, SearchHit)) or not hasattr(hits, "__iter__"):
        raise TypeError(f"hits must be a sequence of SearchHit, got {type(hits).__name__}")
    hits = list(hits)
    for i, h in enumerate(hits):
        if not isinstance(h, SearchHit):
            raise TypeError(f"hits[{i}] is a {type(h).__name__}, not a SearchHit")
        s = h.score
        if isinstance(s, bool) or not isinstance(s, numbers.Real) or not math.isfinite(s):
            raise ValueError(
                f"hits[{i}] ({h.artifact_id!r}) has score {s!r}; scores must be finite numbers"
            )
    order = sorted(range(len(hits)), key=lambda i: -float(hits[i].score))
    return [hits[i] for i in order]


def strategy_name(strategy: Any) -> str:
    """The name of a selection strategy: a named strategy itself, a
    callable's ``__name__`` (``"selector"`` without one).

    Raises ``ValueError`` for an unknown name and ``TypeError`` for
    anything else, before any search runs.

    >>> strategy_name("score_gap"), strategy_name(lambda hits: hits[:1])
    ('score_gap', '<lambda>')
    """
    if isinstance(strategy, str):
        if strategy not in SELECT_STRATEGIES:
            raise ValueError(
                f"unknown selection strategy {strategy!r}; use one of "
                f"{', '.join(SELECT_STRATEGIES)} or a callable hits -> subset"
            )
        return strategy
    if callable(strategy):
        return str(getattr(strategy, "__name__", "selector"))
    raise TypeError(
        f"strategy must be a name or a callable hits -> subset, got {type(strategy).__name__}"
    )


# ------------------------------------------------------------------ rules
def _relative_band(hits: list[SearchHit], rel: float) -> list[SearchHit]:
    top = float(hits[0].score)
    return [h for h in hits if float(h.score) >= rel * top]


def _elbow(hits: list[SearchHit], gap_ratio: float) -> list[SearchHit]:
    kept = [hits[0]]
    for h in hits[1:]:
        if float(h.score) < gap_ratio * float(kept[-1].score):
            break
        kept.append(h)
    return kept


def _from_selector(
    selector: Callable[..., Any], hits: list[SearchHit], query: str | None = None
) -> list[SearchHit]:
    """Run a callable selector; its answer must be a subset of ``hits``.

    The answer is put back in rank order and de-duplicated, so a selector
    cannot reorder the ranking or commit to one hit twice.
    """
    if getattr(selector, "takes_query", False) is True:
        if query is None:
            raise ValueError(
                f"the selector {strategy_name(selector)!r} reads the request: pass "
                "query= to select (discover passes it)"
            )
        chosen = selector(list(hits), query=query)
    else:
        chosen = selector(list(hits))
    if chosen is None or isinstance(chosen, (str, bytes)) or not hasattr(chosen, "__iter__"):
        raise TypeError(
            f"a selector must return a sequence of the hits it chose, got {type(chosen).__name__}"
        )
    position = {id(h): i for i, h in enumerate(hits)}
    picked: set[int] = set()
    for h in chosen:
        i = position.get(id(h))
        if i is None:
            i = next((j for j, c in enumerate(hits) if c == h), None)
        if i is None:
            name = getattr(h, "artifact_id", h)
            raise ValueError(
                f"the selector returned {name!r}, which is not one of the "
                "candidate hits; a selector may only choose among the hits "
                "it is given"
            )
        picked.add(i)
    return [hits[i] for i in sorted(picked)]


def select(
    hits: Sequence[SearchHit],
    *,
    strategy: str | Selector = "conservative",
    max_k: int = DFLT_MAX_K,
    rel: float = DFLT_REL_THRESHOLD,
    gap_ratio: float = DFLT_GAP_RATIO,
    min_score: float | None = None,
    query: str | None = None,
) -> Selection:
    """Commit to a few of the ranked hits, or abstain.

    Parameters
    ----------
    hits : Sequence[SearchHit]
        The candidates, e.g. the result of :func:`rowvoi.corpus.search`.
        They are ranked by score (highest first, ties in input order).
    strategy : str or callable
        ``"conservative"`` (default), ``"rel_threshold"``, ``"score_gap"``,
        ``"top_k"``, ``"abs_threshold"`` or a ``Selector`` callable
        ``hits -> subset`` (see the module docstring).
    max_k : int
        Never commit to more than this many hits (>= 1); the cap of every
        strategy, callables included.
    rel : float
        The relative band of ``conservative`` and ``rel_threshold``, in
        (0, 1]: keep hits scoring at least ``rel`` x the top score.
    gap_ratio : float
        The elbow of ``score_gap``, in (0, 1].
    min_score : float or None
        An absolute floor on the hits' own scale, for every strategy: hits
        whose :func:`floor_score` is below it are never selected, and the
        selection abstains when no hit reaches it. None (default) never
        abstains. Required by ``abs_threshold``.
    query : str or None
        The request the hits answer, for a selector that reads it (one with
        ``takes_query = True``, e.g. :func:`make_llm_selector`'s); the
        named strategies ignore it.

    Returns
    -------
    Selection
        ``abstained`` is True exactly when ``selected`` is empty.

    Raises
    ------
    ValueError
        Unknown strategy; ``max_k`` < 1; ``rel`` or ``gap_ratio`` outside
        (0, 1]; a non-finite score or floor; ``abs_threshold`` without
        ``min_score``; a relative strategy whose top score (after the floor)
        is negative; a selector answering with a hit it was not given; a
        selector that reads the request called without ``query``.
    TypeError
        A hit that is not a :class:`SearchHit`, a ``max_k`` that is not an
        integer, a strategy that is neither a name nor a callable, or a selector that does not return a
        sequence.

    Examples
    --------
    >>> from rowvoi.corpus.base import SearchHit
    >>> hits = [SearchHit(x, "document", s, "")
    ...         for x, s in [("a", 10.0), ("b", 9.5), ("c", 9.2), ("d", 9.1), ("e", 2.0)]]
    >>> sel = select(hits)
    >>> sel.selected_ids, sel.reason
    (['a', 'b', 'c'], 'max_k')
    >>> select(hits, strategy="score_gap", max_k=10).selected_ids
    ['a', 'b', 'c', 'd']
    >>> select(hits, strategy="abs_threshold", min_score=9.3).selected_ids
    ['a', 'b']
    >>> select(hits, strategy=lambda hs: [hs[3], hs[0]]).selected_ids
    ['a', 'd']
    """
    max_k = _check_int("max_k", max_k, 1)
    floor = check_floor(min_score)
    if query is not None and not isinstance(query, str):
        raise TypeError(f"query must be a str or None, not {type(query).__name__}")
    strategy_name(strategy)  # an unknown name or a non-callable fails here
    name = strategy if isinstance(strategy, str) else None
    if name in ("conservative", "rel_threshold"):
        rel = _v.real("rel", rel, low=0.0, low_open=True, high=1.0)
    if name == "score_gap":
        gap_ratio = _v.real("gap_ratio", gap_ratio, low=0.0, low_open=True, high=1.0)
    if name == "abs_threshold" and floor is None:
        raise ValueError("strategy 'abs_threshold' needs min_score= (the absolute floor)")

    candidates = ranked(hits)
    compared = [floor_score(h) for h in candidates]
    signals: dict[str, Any] = {
        "top_score": float(candidates[0].score) if candidates else None,
        "n_candidates": len(candidates),
        "n_selected": 0,
        "min_ratio": None,
        "min_score": floor,
        "floor_compares": "evidence" if any(map(_has_evidence, candidates)) else "score",
        "top_floor_score": max(compared) if compared else None,
    }
    if not candidates:
        return Selection([], candidates, True, "abstain:no_candidates", signals)
    eligible = (
        candidates if floor is None else [h for h, f in zip(candidates, compared) if f >= floor]
    )
    if not eligible:
        return Selection([], candidates, True, "abstain:below_floor", signals)
    floor_cut = len(eligible) < len(candidates)
    if name in _RELATIVE and float(eligible[0].score) < 0:
        raise ValueError(
            f"strategy {name!r} compares scores to the top score, which is negative "
            f"({float(eligible[0].score):g}); use strategy 'top_k' or 'abs_threshold', "
            "or search in a mode whose scores are non-negative (lexical, hybrid)"
        )

    if name in ("conservative", "rel_threshold"):
        kept, rule = _relative_band(eligible, rel), "rel_threshold"
    elif name == "score_gap":
        kept, rule = _elbow(eligible, gap_ratio), "score_gap"
    elif name in ("top_k", "abs_threshold"):
        kept, rule = eligible, name  # only the floor and the cap apply
    else:
        kept, rule = _from_selector(strategy, eligible, query), "selector"  # type: ignore[arg-type]
        if not kept:
            return Selection([], candidates, True, "abstain:selector", signals)

    if len(kept) > max_k:
        kept, reason = kept[:max_k], "max_k"
    elif rule == "selector":
        reason = "selector"
    elif len(kept) < len(eligible):
        reason = rule
    elif floor_cut:
        reason = "abs_threshold"
    else:
        reason = "exhausted"
    top = float(candidates[0].score)
    signals["n_selected"] = len(kept)
    signals["min_ratio"] = float(kept[-1].score) / top if top > 0 else None
    return Selection(kept, candidates, False, reason, signals)


# ------------------------------------------------------------ LLM selector
#: Default prompt of :func:`make_llm_selector`; ``{query}``, ``{max_k}`` and
#: ``{candidates}`` (one JSON object per line: ``id``, ``text``) are filled in.
LLM_SELECT_PROMPT = (
    "A user asked: {query}\n\n"
    "A search returned these candidates, best first (one JSON object per line):\n"
    "{candidates}\n\n"
    "Choose the candidates that actually serve the request -- at most {max_k}, "
    "fewer when fewer fit, none when none fits. A candidate that is only on the "
    "same topic does not serve it. Reply with a JSON object and nothing else: "
    '{{"ids": [the chosen ids, copied exactly]}}.'
)


class SelectorFallbackWarning(UserWarning):
    """An LLM selector's model failed (the message says how) and the
    heuristic selection was used instead.

    >>> issubclass(SelectorFallbackWarning, UserWarning)
    True
    """


_JSON_START = re.compile(r"[\[{]")


def _parse_ids(reply: Any) -> list[str]:
    """The ids of a model reply: a JSON list of strings, or an object whose
    ``ids`` is one, possibly inside prose or a code fence. ValueError
    otherwise."""
    if not isinstance(reply, str):
        raise ValueError(f"the model returned a {type(reply).__name__}, not a str")
    decoder = json.JSONDecoder()
    for m in _JSON_START.finditer(reply):
        try:
            value, _ = decoder.raw_decode(reply, m.start())
        except ValueError:
            continue
        if isinstance(value, dict):
            if "ids" not in value:
                continue
            value = value["ids"]
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return value
        raise ValueError(f"the reply's ids are not a list of strings: {value!r}")
    raise ValueError(f"the reply holds no JSON list of ids: {reply[:200]!r}")


class LLMSelector:
    """A :data:`Selector` that asks a language model which hits to commit to
    (made by :func:`make_llm_selector`; see there).

    Attributes
    ----------
    takes_query : bool
        True: :func:`select` calls it as ``selector(hits, query=...)``.
    __name__ : str
        ``"llm_selector"``, the strategy name :func:`select` reports.
    """

    takes_query = True
    __name__ = "llm_selector"

    def __init__(
        self,
        complete: Callable[[str], str],
        *,
        prompt: str,
        max_k: int,
        max_candidates: int,
        max_text_chars: int,
        fallback: str,
        rel: float,
        gap_ratio: float,
    ) -> None:
        self.complete = complete
        self.prompt = prompt
        self.max_k = max_k
        self.max_candidates = max_candidates
        self.max_text_chars = max_text_chars
        self.fallback = fallback
        self.rel = rel
        self.gap_ratio = gap_ratio

    def __repr__(self) -> str:
        return (
            f"make_llm_selector({getattr(self.complete, '__name__', type(self.complete).__name__)}, "
            f"max_k={self.max_k}, max_candidates={self.max_candidates}, "
            f"fallback={self.fallback!r})"
        )

    @staticmethod
    def labels(hits: Sequence[SearchHit]) -> list[str]:
        """The id each hit is shown under: its artifact id, prefixed with
        its source (``source:id``) when two hits share an id."""
        ids = [h.artifact_id for h in hits]
        if len(set(ids)) == len(ids):
            return ids
        return [f"{h.source}:{h.artifact_id}" if h.source else h.artifact_id for h in hits]

    def render(self, query: str, hits: Sequence[SearchHit]) -> tuple[str, dict[str, SearchHit]]:
        """The prompt for ``hits`` (the first ``max_candidates``) and the map
        from the ids it shows back to the hits."""
        shown = list(hits)[: self.max_candidates]
        by_label: dict[str, SearchHit] = {}
        lines = []
        for label, h in zip(self.labels(shown), shown):
            if label in by_label:
                continue  # another surface of a shown artifact
            by_label[label] = h
            text = " ".join(h.text.split())
            if len(text) > self.max_text_chars:
                text = text[: self.max_text_chars] + "..."
            lines.append(json.dumps({"id": label, "text": text}, ensure_ascii=False))
        prompt = self.prompt.format(query=query, max_k=self.max_k, candidates="\n".join(lines))
        return prompt, by_label

    def choose(self, hits: Sequence[SearchHit], query: str) -> list[SearchHit]:
        """The model's choice, validated; raises ``ValueError`` (a malformed
        reply, an unknown id, more than ``max_k`` ids) or whatever the
        model raised."""
        prompt, by_label = self.render(query, hits)
        ids = _parse_ids(self.complete(prompt))
        unknown = [i for i in ids if i not in by_label]
        if unknown:
            raise ValueError(f"the reply names ids that are not candidates: {unknown!r}")
        picked = list(dict.fromkeys(ids))
        if len(picked) > self.max_k:
            raise ValueError(f"the reply chose {len(picked)} ids, more than max_k={self.max_k}")
        return [by_label[i] for i in picked]

    def heuristic(self, hits: Sequence[SearchHit]) -> list[SearchHit]:
        """The fallback: :func:`select` with the ``fallback`` strategy."""
        return select(
            hits, strategy=self.fallback, max_k=self.max_k, rel=self.rel, gap_ratio=self.gap_ratio
        ).selected

    def __call__(self, hits: Sequence[SearchHit], query: str | None = None) -> list[SearchHit]:
        """The hits the model chose among ``hits``, or -- when it fails in
        any way -- the heuristic selection, with a
        :class:`SelectorFallbackWarning` saying why."""
        hits = list(hits)
        if not hits:
            return []
        if not isinstance(query, str) or not query.strip():
            raise ValueError("an LLM selector needs the request: pass query= to select")
        try:
            return self.choose(hits, query)
        except Exception as exc:
            warnings.warn(
                f"the LLM selector fell back to {self.fallback!r}: {type(exc).__name__}: {exc}",
                SelectorFallbackWarning,
                stacklevel=2,
            )
            return self.heuristic(hits)


def make_llm_selector(
    complete: Callable[[str], str],
    *,
    prompt: str = LLM_SELECT_PROMPT,
    max_k: int = DFLT_MAX_K,
    max_candidates: int = 10,
    max_text_chars: int = 500,
    fallback: str = "conservative",
    rel: float = DFLT_REL_THRESHOLD,
    gap_ratio: float = DFLT_GAP_RATIO,
) -> LLMSelector:
    """A selector that lets a language model choose among the top hits,
    and falls back to the heuristic selection on any failure.

    Pass it as ``strategy=`` to :func:`select` (with ``query=``) or to
    :func:`rowvoi.corpus.discover` (which passes the query). The model
    sees the request and the first ``max_candidates`` hits -- each as its
    id and matched text -- and replies with the ids worth acting on.

    Parameters
    ----------
    complete : callable
        ``prompt -> reply text``: any language model (a test double, an
        SDK call, :class:`rowvoi.rag.claude_corpus.ClaudeSelectionModel`).
        The reply must hold a JSON list of ids or ``{"ids": [...]}``
        (surrounding prose and code fences are tolerated); an empty list is
        a valid answer and makes the selection abstain
        (``reason == "abstain:selector"``).
    prompt : str
        The template, with ``{query}``, ``{max_k}`` and ``{candidates}``
        (default :data:`LLM_SELECT_PROMPT`).
    max_k : int
        The most ids the model may choose (a reply with more is a failure);
        also the fallback's cap.
    max_candidates : int
        How many of the top hits the model sees (default 10); the others
        cannot be chosen.
    max_text_chars : int
        Each candidate's text is cut to this many characters in the prompt.
    fallback : str
        The named strategy used when the model fails (default
        ``"conservative"``), with ``rel`` and ``gap_ratio``; deterministic.

    Returns
    -------
    LLMSelector
        ``selector(hits, query=...) -> chosen hits``.

    Failures that fall back (each with a :class:`SelectorFallbackWarning`):
    ``complete`` raises; the reply is not a str or holds no JSON list of
    string ids; it names an id that is not among the shown candidates; it
    chooses more than ``max_k``. Calling the selector without a query is a
    usage error (``ValueError``), not a fallback.

    Raises
    ------
    TypeError
        ``complete`` not callable; ``prompt`` not a str.
    ValueError
        A ``prompt`` without ``{query}`` or ``{candidates}``; ``fallback``
        not a named strategy that needs no floor; bad ``max_k``,
        ``max_candidates``, ``max_text_chars``, ``rel`` or ``gap_ratio``.

    Examples
    --------
    >>> from rowvoi.corpus.base import SearchHit
    >>> hits = [SearchHit("jira.create_issue", "capability", 0.71, "jira.create_issue: Create an issue"),
    ...         SearchHit("github.create_issue", "capability", 0.70, "github.create_issue: Open an issue"),
    ...         SearchHit("slack.send_message", "capability", 0.30, "slack.send_message: Post")]
    >>> pick = make_llm_selector(lambda prompt: '{"ids": ["github.create_issue"]}')
    >>> select(hits, strategy=pick, query="file a bug on the repo").selected_ids
    ['github.create_issue']
    >>> import warnings
    >>> broken = make_llm_selector(lambda prompt: "I would pick the Jira one.")
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", SelectorFallbackWarning)
    ...     select(hits, strategy=broken, query="file a bug on the repo").selected_ids
    ['jira.create_issue', 'github.create_issue']
    """
    if not callable(complete):
        raise TypeError(
            f"complete must be a callable prompt -> reply text, not {type(complete).__name__}"
        )
    if not isinstance(prompt, str):
        raise TypeError(f"prompt must be a str, not {type(prompt).__name__}")
    for field_name in ("{query}", "{candidates}"):
        if field_name not in prompt:
            raise ValueError(f"the prompt must contain {field_name}")
    if fallback not in SELECT_STRATEGIES or fallback == "abs_threshold":
        raise ValueError(
            f"fallback must be one of conservative, rel_threshold, score_gap, top_k "
            f"(a strategy that needs no floor), not {fallback!r}"
        )
    max_k = _check_int("max_k", max_k, 1)
    max_candidates = _check_int("max_candidates", max_candidates, 1)
    max_text_chars = _check_int("max_text_chars", max_text_chars, 1)
    rel = _v.real("rel", rel, low=0.0, low_open=True, high=1.0)
    gap_ratio = _v.real("gap_ratio", gap_ratio, low=0.0, low_open=True, high=1.0)
    return LLMSelector(
        complete,
        prompt=prompt,
        max_k=max_k,
        max_candidates=max_candidates,
        max_text_chars=max_text_chars,
        fallback=fallback,
        rel=rel,
        gap_ratio=gap_ratio,
    )
