"""Calibrated abstention: the score floor below which a corpus says "nothing here".

A search always returns its best hits, even for a question the corpus
knows nothing about. Relative selection rules cannot tell "everything is
irrelevant" from "everything is relevant"; only an absolute floor on the
score can. The right floor depends on the corpus, the embedder, the
analyzer and the search mode, so it is measured, not guessed:
:func:`calibrate_min_score` searches two sets of queries -- questions the
corpus should answer (in scope) and questions it should refuse (out of
scope) -- takes each query's best :func:`~rowvoi.corpus.retrieval.selection.floor_score`
over its top ``k`` hits, and picks the floor that best separates the two
distributions, maximising

    weight x sensitivity + (1 - weight) x specificity

where sensitivity is the fraction of in-scope queries still answered (best
score >= floor) and specificity the fraction of out-of-scope queries
refused. ``weight = 0.5`` (default) is balanced accuracy (Youden's J);
lower it to refuse more readily. Among equally good floors the one with
the widest margin to the nearest scores wins (then the lower one), and
the floor sits halfway between the two scores around it, so it does not
hug either distribution (half the spread of the scores beyond the extreme
one when every query of a kind is on one side, e.g. when no out-of-scope
query gets any hit).

Which score is floored
----------------------
Dense (a cosine), lexical (a BM25 score) and hybrid ``blend`` searches
(``alpha x cosine + (1 - alpha) x bm25 / (bm25 + bm25_sat_k)``) score on an
absolute scale: a weak match scores low whatever the query. Reciprocal
rank fusion does not: ``sum 1 / (rrf_k + rank)`` depends only on ranks, so
the top hit of *every* query -- about wings or about lasagne -- scores
about ``2 / (rrf_k + 1)``, and no floor can separate them (a floor on RRF
scores either refuses everything or nothing). Peers that floor RRF anyway
leak raw cosines into the fused score, and their RRF abstention is their
weakest. Here a hybrid RRF search keeps its rank-fused order, and each hit
also carries its absolute **evidence** -- its blend score, both sides
scored exactly (``explain["evidence"]``) -- which is what floors compare
(:func:`~rowvoi.corpus.retrieval.selection.floor_score`). RRF abstention is then as
good as blend's (bench/results/calibration.md measures it).

Storage and invalidation
------------------------
``save=True`` stores the result in the corpus's ``calibration`` table under
:func:`calibration_key` (the mode, plus the fusion for a non-RRF hybrid
search), through :meth:`CorpusStore.set_calibration` (under the builder
lock, one transaction). The record names what the floor was measured
against -- embedder id, strategy id, analyzer and BM25 settings
(``lexical_id``), and for hybrid searches ``alpha`` and ``bm25_sat_k`` --
and :func:`calibration_problem` checks them at every use:
:func:`rowvoi.corpus.discover` with ``min_score="auto"`` ignores a floor
whose embedder (dense and hybrid), analyzer (lexical and hybrid) or
strategy changed since, or whose blend parameters differ from the
search's, with a :class:`~rowvoi.corpus.retrieval.discovery.NoFloorWarning` that
says to calibrate again. New or edited documents do not invalidate a
floor (the scales stay put); recalibrate after large changes all the same.

The hashing embedder does not separate topics (it measures shared words
and character n-grams, not meaning): its floors are stored and used like
any other, but expect a poor separation, which the result reports.

Thread-safety: :func:`calibrate_min_score` only reads while it searches
(safe alongside other searches); saving takes the builder lock, so it
fails with :class:`~rowvoi.corpus.base.CorpusLocked` while a build runs.

Examples
--------
>>> from rowvoi.corpus import CorpusStore, build, from_mapping
>>> docs = {"a": "lift and drag of a swept wing", "b": "shock waves on a wedge",
...         "c": "boundary layer transition on a flat plate"}
>>> c = build(from_mapping(docs, name="aero", embedder="hashing"),
...           store=CorpusStore.memory(), progress=False)
>>> cal = calibrate_min_score(c, ["wing lift", "wedge shock", "plate boundary layer"],
...                           ["apple pie recipe", "football results"], mode="lexical")
>>> cal.sensitivity, cal.specificity, cal.key
(1.0, 1.0, 'lexical')
>>> from rowvoi.corpus import discover
>>> discover(c, "apple crumble", mode="lexical", min_score="auto").abstained
True
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import numbers
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rowvoi._validate import integer as _check_int
from rowvoi.corpus.retrieval.corpus import as_corpus, search
from rowvoi.corpus.retrieval.rank import DFLT_BLEND_ALPHA, DFLT_BM25_SAT_K, FUSIONS, MODES
from rowvoi.corpus.retrieval.rerank import (
    DFLT_RERANK_MAX_CHARS,
    is_anonymous,
    rerank_tag,
    resolve_reranker,
)
from rowvoi.corpus.retrieval.selection import floor_score

__all__ = [
    "Calibration",
    "calibrate_min_score",
    "load_calibration",
    "calibration_key",
    "search_tag",
    "calibration_problem",
    "stored_calibration",
    "top_scores",
    "abstention_rates",
    "best_floor",
    "read_queries",
    "DFLT_CALIB_WEIGHT",
    "DFLT_CALIB_K",
    "RECORD_VERSION",
]

#: Default weight on sensitivity (answering in-scope queries) against
#: specificity (refusing out-of-scope ones): balanced.
DFLT_CALIB_WEIGHT = 0.5
#: Hits per query whose best floor score is taken (match discover's ``k``).
DFLT_CALIB_K = 10
#: Version of the stored record's layout.
RECORD_VERSION = 1

_BLEND_PARAMS = ("alpha", "bm25_sat_k")


# ------------------------------------------------------------------ keys
def calibration_key(mode: str, fusion: str | None = "rrf", tag: str | None = None) -> str:
    """The key a calibrated floor is stored under for a search.

    The mode, and for a hybrid search with a fusion other than RRF the
    fusion too (``"hybrid+blend"``): floors live on the scale of the score
    they were calibrated on. A reranked search's scores are the
    reranker's, so its ``tag`` (:func:`~rowvoi.corpus.retrieval.rerank.rerank_tag`,
    ``"rerank-<id>+<rerank_text>"``) is added. A second argument that is
    not a fusion name is read as the tag (``calibration_key(mode, tag)``).

    >>> calibration_key("dense"), calibration_key("hybrid"), calibration_key("hybrid", "blend")
    ('dense', 'hybrid', 'hybrid+blend')
    >>> calibration_key("hybrid")
    'hybrid'
    >>> calibration_key("hybrid", "rerank-m+artifact")
    'hybrid+rerank-m+artifact'
    >>> calibration_key("hybrid", "blend", "rerank-m+surface")
    'hybrid+blend+rerank-m+surface'
    """
    if fusion is not None and fusion not in FUSIONS and tag is None:
        fusion, tag = "rrf", fusion
    key = f"{mode}+{fusion}" if mode == "hybrid" and fusion not in (None, "rrf") else mode
    return key if tag is None else f"{key}+{tag}"


def search_tag(search_kw: Mapping[str, Any]) -> str | None:
    """The calibration tag of a search's keywords: its reranker's
    (:func:`~rowvoi.corpus.retrieval.rerank.rerank_tag`), or None."""
    spec = search_kw.get("rerank")
    if spec is None:
        return None
    return rerank_tag(
        resolve_reranker(spec),
        search_kw.get("rerank_text", "surface"),
        max_chars=search_kw.get("rerank_max_chars", DFLT_RERANK_MAX_CHARS),
    )


def stored_calibration(corpus: Any, key: str) -> dict[str, Any] | None:
    """The calibration record stored on ``corpus`` under ``key``, or None.

    Records live in the corpus's ``calibration`` table as JSON objects; the
    fields that decide whether a floor still applies are ``min_score`` (the
    floor, on the scale of the searches ``key`` names), ``embedder_id``,
    ``strategy_id``, ``lexical_id`` and ``params`` (see
    :func:`calibration_problem`). A stored text that is not a JSON object
    reads as ``{}``.

    >>> from rowvoi.corpus import CorpusStore, build, from_mapping
    >>> c = build(from_mapping({"a": "x"}, embedder="hashing"), store=CorpusStore.memory())
    >>> stored_calibration(c, "hybrid") is None
    True
    """
    store = getattr(corpus, "store", None)
    if store is None:
        return None
    stored: dict[str, Any] | None = store.calibration(key)
    return stored


def _lexical_id(conf: Any) -> str | None:
    """A short, stable id of a corpus's analyzer and BM25 settings."""
    if conf is None:
        return None
    text = json.dumps(conf, sort_keys=True, separators=(",", ":"))
    return "lex-" + hashlib.sha256(text.encode()).hexdigest()[:16]


def _fingerprint(state: Mapping[str, Any]) -> dict[str, Any]:
    """What a floor depends on, from a corpus's committed state."""
    return {
        "embedder_id": state.get("embedder_id"),
        "strategy_id": state.get("strategy_id"),
        "lexical_id": _lexical_id(state.get("lexical")),
    }


def _relevant(mode: str) -> tuple[str, ...]:
    """The fingerprint fields that can move a ``mode`` search's scores."""
    if mode == "dense":
        return ("embedder_id", "strategy_id")
    if mode == "lexical":
        return ("lexical_id", "strategy_id")
    return ("embedder_id", "lexical_id", "strategy_id")


def _search_params(mode: str, fusion: str, search_kw: Mapping[str, Any]) -> dict[str, float]:
    """The parameters that set a hybrid search's floor scale (none otherwise)."""
    if mode != "hybrid":
        return {}
    return {
        "alpha": float(search_kw.get("alpha", DFLT_BLEND_ALPHA)),
        "bm25_sat_k": float(search_kw.get("bm25_sat_k", DFLT_BM25_SAT_K)),
    }


def calibration_problem(
    corpus: Any, record: Mapping[str, Any], mode: str, search_kw: Mapping[str, Any] | None = None
) -> str | None:
    """Why a stored floor must not be used for this search, or None if it may.

    Compares what the record was calibrated against with the corpus's
    committed state: the embedder (dense and hybrid searches), the analyzer
    and BM25 settings (lexical and hybrid), the strategy (all), and for a
    hybrid search the ``alpha`` and ``bm25_sat_k`` of ``search_kw``. A field
    the record lacks is not checked (records written by hand or by older
    versions hold only ``min_score`` and ``embedder_id``).

    >>> from rowvoi.corpus import CorpusStore, build, from_mapping
    >>> c = build(from_mapping({"a": "x"}, embedder="hashing"), store=CorpusStore.memory())
    >>> calibration_problem(c, {"min_score": 1.0, "embedder_id": c.embedder_id}, "dense") is None
    True
    >>> calibration_problem(c, {"min_score": 1.0, "embedder_id": "other"}, "dense")
    "calibrated with embedder 'other', not 'hash-v1:dim=384,...'"
    """
    with corpus.store.snapshot() as snap:
        now = _fingerprint(snap.state)
    names = {
        "embedder_id": "embedder",
        "strategy_id": "strategy",
        "lexical_id": "analyzer and BM25 settings",
    }
    for fld in _relevant(mode):
        was = record.get(fld)
        if was is not None and was != now[fld]:
            return f"calibrated with {names[fld]} {was!r}, not {now[fld]!r}"
    params = record.get("params")
    if mode == "hybrid" and isinstance(params, Mapping):
        want = _search_params(mode, str((search_kw or {}).get("fusion", "rrf")), search_kw or {})
        for p in _BLEND_PARAMS:
            if p in params and not _close(params[p], want[p]):
                return f"calibrated with {p}={params[p]!r}, not {want[p]!r}"
    return None


def _close(a: Any, b: float) -> bool:
    return isinstance(a, numbers.Real) and abs(float(a) - b) <= 1e-12 * max(1.0, abs(b))


# ------------------------------------------------------------------ queries
def _query_texts(queries: Any, what: str) -> list[str]:
    """Plain query strings from strings or objects with a ``.query``."""
    if isinstance(queries, (str, bytes)) or not isinstance(queries, Iterable):
        raise TypeError(
            f"{what} must be a list of query strings (or of objects with a "
            f".query), not {type(queries).__name__}"
        )
    out = []
    for i, q in enumerate(queries):
        text = q if isinstance(q, str) else getattr(q, "query", None)
        if not isinstance(text, str):
            raise TypeError(
                f"{what}[{i}] is a {type(q).__name__}: expected a query string "
                "or an object with a .query string"
            )
        if not text.strip():
            raise ValueError(f"{what}[{i}] is an empty query; remove it")
        out.append(text)
    if not out:
        raise ValueError(
            f"{what} is empty: calibration needs queries of both kinds, in scope and out of scope"
        )
    return out


def read_queries(path: Any) -> list[str]:
    """Queries from a file: one per line (blank lines and lines starting
    with ``#`` skipped); or a ``.json`` list of strings or of objects with a
    ``"query"``; or ``.jsonl`` lines of either (a ``{"__meta__": ...}`` line
    is skipped, so evaluation case files work).

    Raises
    ------
    OSError
        The file cannot be read.
    ValueError
        A JSON entry that is neither a string nor an object with a string
        ``"query"``, or a file with no query (the message names the file).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "q.txt"
    >>> _ = p.write_text("# aero\\nwing stall\\n\\nshock waves\\n")
    >>> read_queries(p)
    ['wing stall', 'shock waves']
    """
    from pathlib import Path

    p = Path(path)
    text = p.read_text(encoding="utf-8")
    suffix = p.suffix.lower()
    if suffix == ".json":
        try:
            items = json.loads(text)
        except ValueError as exc:
            raise ValueError(f"{p}: not valid JSON ({exc})") from None
        if not isinstance(items, list):
            raise ValueError(f"{p}: expected a JSON list of queries")
    elif suffix == ".jsonl":
        items = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                items.append(json.loads(line))
            except ValueError as exc:
                raise ValueError(f"{p}:{n}: not valid JSON ({exc})") from None
        items = [x for x in items if not (isinstance(x, dict) and "__meta__" in x)]
    else:
        items = [
            ln.strip()
            for ln in text.splitlines()
            if ln.strip() and not ln.lstrip().startswith("#")
        ]
    out = []
    for i, x in enumerate(items):
        q = x.get("query") if isinstance(x, dict) else x
        if not isinstance(q, str) or not q.strip():
            raise ValueError(
                f'{p}: entry {i + 1} is not a query string or an object with a "query" string'
            )
        out.append(q.strip())
    if not out:
        raise ValueError(f"{p}: holds no query")
    return out


# ------------------------------------------------------------------ scoring
def top_scores(
    corpus: Any,
    queries: Sequence[Any],
    *,
    mode: str = "hybrid",
    fusion: str = "rrf",
    k: int = DFLT_CALIB_K,
    **search_kw: Any,
) -> list[float]:
    """Each query's best :func:`~rowvoi.corpus.retrieval.selection.floor_score` over
    its top ``k`` hits (``-inf`` when a query gets no hit: it is refused at
    any floor), in input order.

    Queries are embedded in one batch (dense and hybrid modes).

    >>> from rowvoi.corpus import CorpusStore, build, from_mapping
    >>> c = build(from_mapping({"a": "wing lift"}, embedder="hashing"),
    ...           store=CorpusStore.memory())
    >>> top_scores(c, ["wing", "pie"], mode="lexical")[1]
    -inf
    """
    c = as_corpus(corpus)
    texts = _query_texts(queries, "queries")
    if mode not in MODES:
        raise ValueError(f"mode={mode!r}: expected one of {', '.join(map(repr, MODES))}")
    if fusion not in FUSIONS:
        raise ValueError(f"fusion={fusion!r}: expected one of {', '.join(map(repr, FUSIONS))}")
    k = _check_int("k", k, 1)
    if "query_vector" in search_kw:
        raise TypeError("top_scores embeds its queries itself; do not pass query_vector")
    vectors: Any = [None] * len(texts)
    if mode != "lexical":
        vectors = c.embedder.embed(texts)
    out = []
    for text, vec in zip(texts, vectors):
        kw = dict(search_kw)
        if vec is not None:
            kw["query_vector"] = vec
        hits = search(c, text, k=k, mode=mode, fusion=fusion, **kw)
        out.append(max((floor_score(h) for h in hits), default=-math.inf))
    return out


def abstention_rates(
    in_scores: Sequence[float], out_scores: Sequence[float], floor: float
) -> dict[str, float]:
    """How a floor treats two score lists: ``sensitivity`` (fraction of
    in-scope scores >= floor: answered) and ``specificity`` (fraction of
    out-of-scope scores < floor: refused). An empty list gives NaN.

    >>> abstention_rates([0.6, 0.7, 0.3], [0.1, 0.5], 0.4)
    {'sensitivity': 0.6666666666666666, 'specificity': 0.5}
    """
    f = float(floor)
    sens = sum(1 for s in in_scores if s >= f) / len(in_scores) if in_scores else math.nan
    spec = sum(1 for s in out_scores if s < f) / len(out_scores) if out_scores else math.nan
    return {"sensitivity": sens, "specificity": spec}


def best_floor(
    in_scores: Sequence[float], out_scores: Sequence[float], weight: float = DFLT_CALIB_WEIGHT
) -> tuple[float, float, float, float]:
    """``(floor, sensitivity, specificity, margin)``: the floor that
    maximises ``weight x sensitivity + (1 - weight) x specificity`` over
    two lists of best scores (see the module docstring for the candidates
    and the tie-breaks). :func:`calibrate_min_score` without the searches,
    for scores you already have.

    >>> floor, sens, spec, margin = best_floor([0.6, 0.7, 0.8], [0.1, 0.3, 0.65])
    >>> round(floor, 4), sens, round(spec, 4), round(margin, 4)
    (0.45, 1.0, 0.6667, 0.15)
    >>> floor, sens, spec, margin = best_floor([0.6, 0.7, 0.8], [0.1, 0.3, 0.65], weight=0.2)
    >>> round(floor, 4), round(sens, 4), spec
    (0.675, 0.6667, 1.0)
    """
    pos, neg = [float(x) for x in in_scores], [float(x) for x in out_scores]
    if not pos or not neg:
        raise ValueError("best_floor needs scores of both kinds, in scope and out of scope")
    if (
        isinstance(weight, bool)
        or not isinstance(weight, numbers.Real)
        or not 0.0 <= float(weight) <= 1.0
    ):
        raise ValueError(f"weight must be a number in [0, 1], got {weight!r}")
    finite = sorted({s for s in pos + neg if math.isfinite(s)})
    if not finite:
        return 0.0, 0.0, 1.0, 0.0
    # the extreme floors (answer all, refuse all) keep half the spread as margin
    pad = ((finite[-1] - finite[0]) or max(abs(finite[0]), 1.0)) / 2
    cands = [(finite[0] - pad, pad)]
    cands += [((a + b) / 2, (b - a) / 2) for a, b in itertools.pairwise(finite)]
    cands.append((finite[-1] + pad, pad))
    best = None
    for floor, margin in cands:
        r = abstention_rates(pos, neg, floor)
        obj = weight * r["sensitivity"] + (1 - weight) * r["specificity"]
        key = (round(obj, 12), margin, -floor)
        if best is None or key > best[0]:
            best = (key, floor, r["sensitivity"], r["specificity"], margin)
    assert best is not None
    return best[1], best[2], best[3], best[4]


# ------------------------------------------------------------------ result
@dataclass(frozen=True)
class Calibration:
    """A calibrated abstention floor for one corpus and one kind of search.

    Attributes
    ----------
    corpus : str or None
        The corpus name.
    key, mode : str
        What searches the floor is for (:func:`calibration_key`).
    fusion : str or None
        The hybrid fusion (None for dense and lexical searches).
    min_score : float
        The floor, on the scale of :func:`~rowvoi.corpus.retrieval.selection.floor_score`
        (``explain["evidence"]`` for RRF hits).
    sensitivity, specificity : float
        On the calibration queries: fractions of in-scope queries answered
        and out-of-scope queries refused at ``min_score``.
    weight : float
        The weight on sensitivity the floor was chosen with.
    margin : float
        Half the gap between the two scores around the floor.
    in_scores, out_scores : tuple of float
        Each calibration query's best floor score, in input order (the two
        distributions; ``-inf`` for a query with no hit).
    k : int
        Hits per query the best score was taken over.
    embedder_id, strategy_id, lexical_id : str or None
        What the scores were measured against (see :func:`calibration_problem`).
    params : dict
        ``alpha`` and ``bm25_sat_k`` of a hybrid search (else empty).
    generation : int
        The corpus generation the queries were searched in.
    created : float
        When (seconds since the epoch).
    saved : bool
        Whether it was stored on the corpus.

    Examples
    --------
    >>> cal = Calibration("aero", "dense", "dense", None, 0.45, 1.0, 0.96, 0.5, 0.01,
    ...                   (0.6, 0.7), (0.2, 0.65), 10)
    >>> cal.balanced_accuracy, cal.separable, cal.to_dict()["n_in"]
    (0.98, False, 2)
    """

    corpus: str | None
    key: str
    mode: str
    fusion: str | None
    min_score: float
    sensitivity: float
    specificity: float
    weight: float
    margin: float
    in_scores: tuple[float, ...]
    out_scores: tuple[float, ...]
    k: int
    embedder_id: str | None = None
    strategy_id: str | None = None
    lexical_id: str | None = None
    params: dict[str, float] = field(default_factory=dict)
    generation: int = 0
    created: float = 0.0
    saved: bool = False

    @property
    def balanced_accuracy(self) -> float:
        """``(sensitivity + specificity) / 2``."""
        return (self.sensitivity + self.specificity) / 2

    @property
    def youden_j(self) -> float:
        """``sensitivity + specificity - 1`` (0: no separation, 1: perfect)."""
        return self.sensitivity + self.specificity - 1

    @property
    def separable(self) -> bool:
        """Does every in-scope score exceed every out-of-scope score?"""
        return min(self.in_scores) > max(self.out_scores)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON form (the stored record): the fields above plus
        ``n_in``, ``n_out``, ``balanced_accuracy``, ``separable`` and
        ``version``; ``-inf`` scores are written as None."""

        def plain(xs: Sequence[float]) -> list[float | None]:
            return [float(x) if math.isfinite(x) else None for x in xs]

        return {
            "version": RECORD_VERSION,
            "corpus": self.corpus,
            "key": self.key,
            "mode": self.mode,
            "fusion": self.fusion,
            "min_score": float(self.min_score),
            "sensitivity": self.sensitivity,
            "specificity": self.specificity,
            "balanced_accuracy": self.balanced_accuracy,
            "separable": self.separable,
            "weight": self.weight,
            "margin": self.margin,
            "k": self.k,
            "n_in": len(self.in_scores),
            "n_out": len(self.out_scores),
            "in_scores": plain(self.in_scores),
            "out_scores": plain(self.out_scores),
            "embedder_id": self.embedder_id,
            "strategy_id": self.strategy_id,
            "lexical_id": self.lexical_id,
            "params": dict(self.params),
            "generation": self.generation,
            "created": self.created,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, saved: bool = False) -> Calibration:
        """The inverse of :meth:`to_dict` (``KeyError`` for a record that
        is not a full calibration, such as a hand-written floor).

        >>> cal = Calibration(None, "lexical", "lexical", None, 2.5, 1.0, 1.0, 0.5, 0.5,
        ...                   (3.0,), (2.0, float("-inf")), 10)
        >>> Calibration.from_dict(cal.to_dict()) == cal
        True
        """

        def floats(xs: Sequence[Any]) -> tuple[float, ...]:
            return tuple(-math.inf if x is None else float(x) for x in xs)

        return cls(
            d.get("corpus"),
            d["key"],
            d["mode"],
            d.get("fusion"),
            float(d["min_score"]),
            float(d["sensitivity"]),
            float(d["specificity"]),
            float(d["weight"]),
            float(d["margin"]),
            floats(d["in_scores"]),
            floats(d["out_scores"]),
            int(d["k"]),
            d.get("embedder_id"),
            d.get("strategy_id"),
            d.get("lexical_id"),
            dict(d.get("params") or {}),
            int(d.get("generation", 0)),
            float(d.get("created", 0.0)),
            saved,
        )

    def rates(self, floor: float | None = None) -> dict[str, float]:
        """:func:`abstention_rates` of the calibration queries at ``floor``
        (default: the calibrated one)."""
        return abstention_rates(
            self.in_scores, self.out_scores, self.min_score if floor is None else floor
        )

    def __str__(self) -> str:
        def span(xs: Sequence[float]) -> str:
            f = sorted(x for x in xs if math.isfinite(x))
            if not f:
                return "no hits"
            return f"min {f[0]:.4f}  median {f[len(f) // 2]:.4f}  max {f[-1]:.4f}"

        scale = (
            "evidence (blend score) of the RRF hits"
            if (self.mode == "hybrid" and self.fusion == "rrf")
            else f"{self.key} score"
        )
        return "\n".join(
            [
                f"floor {self.min_score:.4f} for {self.key!r} searches of "
                f"{'corpus ' + repr(self.corpus) if self.corpus else 'the corpus'} "
                f"({scale}; best of top {self.k})",
                f"  in scope:     {len(self.in_scores):4d} queries, answered "
                f"{self.sensitivity:6.1%}   scores {span(self.in_scores)}",
                f"  out of scope: {len(self.out_scores):4d} queries, refused  "
                f"{self.specificity:6.1%}   scores {span(self.out_scores)}",
                f"  balanced accuracy {self.balanced_accuracy:.4f}, margin {self.margin:.4f}, "
                f"weight {self.weight:g}" + ("  (perfectly separated)" if self.separable else ""),
                "  saved: discover(..., min_score='auto') uses it"
                if self.saved
                else "  not saved",
            ]
        )

    def plot(self, path: Any, *, title: str | None = None) -> None:
        """Draw both score distributions and the floor to an image file
        (PNG, SVG, PDF: by the suffix).

        Raises
        ------
        ImportError
            matplotlib is missing: ``pip install 'rowvoi[plot]'``.
        """
        plot_distributions(
            self.in_scores,
            self.out_scores,
            self.min_score,
            path,
            title=title or f"{self.corpus or 'corpus'}: {self.key} floor {self.min_score:.3f}",
            xlabel=(
                "evidence (blend score) of the best RRF hit"
                if self.mode == "hybrid" and self.fusion == "rrf"
                else "best score in the top k"
            ),
        )


def plot_distributions(
    in_scores: Sequence[float],
    out_scores: Sequence[float],
    floor: float | None,
    path: Any,
    *,
    title: str = "",
    xlabel: str = "best score",
    labels: tuple[str, str] = ("in scope", "out of scope"),
) -> None:
    """Histogram two score distributions with a floor line and save it.

    Uses matplotlib's non-interactive Agg canvas (no display needed); the
    file is written atomically (:func:`rowvoi._atomic.atomic_write`).

    Raises
    ------
    ImportError
        matplotlib is missing; the message names the ``rowvoi[plot]`` extra.
    """
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError("plotting needs matplotlib: pip install 'rowvoi[plot]'") from None
    from rowvoi._atomic import atomic_write

    ins = [s for s in in_scores if math.isfinite(s)]
    outs = [s for s in out_scores if math.isfinite(s)]
    allv = ins + outs + ([floor] if floor is not None else [])
    lo, hi = (min(allv), max(allv)) if allv else (0.0, 1.0)
    if hi <= lo:
        hi = lo + 1.0
    bins = [lo + (hi - lo) * i / 40 for i in range(41)]
    fig = Figure(figsize=(7, 3.6), dpi=110)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    ax.hist(ins, bins=bins, alpha=0.6, color="#1f77b4", label=f"{labels[0]} ({len(ins)})")
    ax.hist(outs, bins=bins, alpha=0.6, color="#d62728", label=f"{labels[1]} ({len(outs)})")
    if floor is not None:
        ax.axvline(floor, color="black", linestyle="--", linewidth=1.2, label=f"floor {floor:.3f}")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("queries")
    if title:
        ax.set_title(title)
    ax.legend(loc="upper left", fontsize="small")
    fig.tight_layout()
    from pathlib import Path

    fmt = Path(path).suffix.lstrip(".").lower() or "png"
    atomic_write(path, lambda fh: fig.savefig(fh, format=fmt))


# ------------------------------------------------------------------ calibrate
def calibrate_min_score(
    corpus: Any,
    in_scope: Sequence[Any],
    out_of_scope: Sequence[Any],
    *,
    mode: str = "hybrid",
    fusion: str = "rrf",
    weight: float = DFLT_CALIB_WEIGHT,
    k: int = DFLT_CALIB_K,
    save: bool = True,
    **search_kw: Any,
) -> Calibration:
    """Choose the score floor that best separates in-scope from out-of-scope
    queries (see the module docstring), and by default store it.

    Parameters
    ----------
    corpus : Corpus, str or CorpusStore
        An open corpus or a corpus name.
    in_scope, out_of_scope : sequence of str (or of objects with ``.query``)
        Queries the corpus should answer, and queries it should refuse;
        both non-empty.
    mode : {"hybrid", "dense", "lexical"}
        The search mode (default hybrid, as :func:`rowvoi.corpus.discover`).
    fusion : {"rrf", "blend"}
        Hybrid fusion (ignored otherwise). For RRF the floor applies to
        each hit's evidence (see the module docstring).
    weight : float
        Weight on sensitivity, in [0, 1] (default 0.5: balanced).
    k : int
        Hits per query searched; use the ``k`` you discover with.
    save : bool
        Store the floor on the corpus for ``min_score="auto"`` (default).
    **search_kw
        Other :func:`rowvoi.corpus.search` keywords (``alpha``,
        ``bm25_sat_k``, ``surfaces``, ``filter``, ``rerank``, ...).
        ``surface_weights`` and ``boost`` cannot be saved (they rescale
        scores); a ``rerank`` is saved under its own key
        (:func:`calibration_key` with its tag), and only when the reranker
        is named (a ``rerank_id`` attribute).

    Returns
    -------
    Calibration

    Raises
    ------
    ValueError
        An empty query list or query, an unknown mode or fusion, a weight
        outside [0, 1], ``surface_weights`` or ``boost`` with ``save=True``,
        an unnamed reranker with ``save=True``.
    TypeError
        Queries that are not strings (or objects with a ``.query``).
    CorpusLocked
        ``save=True`` while a build holds the corpus (calibrate again after).
    CorpusError
        The corpus was rebuilt with another embedder, analyzer or strategy
        while it was being calibrated (nothing is saved).

    Notes
    -----
    Searches only read, so calibrating is safe alongside other searches;
    the save takes the builder lock.
    """
    c = as_corpus(corpus)
    pos_q = _query_texts(in_scope, "in_scope")
    neg_q = _query_texts(out_of_scope, "out_of_scope")
    if (
        isinstance(weight, bool)
        or not isinstance(weight, numbers.Real)
        or not 0.0 <= float(weight) <= 1.0
    ):
        raise ValueError(f"weight must be a number in [0, 1], got {weight!r}")
    if mode not in MODES:
        raise ValueError(f"mode={mode!r}: expected one of {', '.join(map(repr, MODES))}")
    if fusion not in FUSIONS:
        raise ValueError(f"fusion={fusion!r}: expected one of {', '.join(map(repr, FUSIONS))}")
    if save and search_kw.get("surface_weights"):
        raise ValueError(
            "a floor calibrated with surface_weights cannot be saved: stored "
            "floors apply to unweighted searches; pass save=False and give "
            "the returned min_score to discover yourself"
        )
    if save and search_kw.get("boost") is not None:
        raise ValueError(
            "a floor calibrated with a boost cannot be saved: a boost shifts scores "
            "by an amount no key can name; pass save=False and give the returned "
            "min_score to discover yourself"
        )
    tag = search_tag(search_kw)
    if save and is_anonymous(tag):
        raise ValueError(
            "a floor calibrated with an unnamed reranker (or rerank_text callable) "
            "cannot be saved: its scores have no name to be stored under, and two "
            "different callables would share one key. Give it a stable name "
            "(reranker.rerank_id = 'my-reranker'; rerank_text.rerank_text_id = ...) "
            "or pass save=False"
        )
    k = _check_int("k", k, 1)
    with c.store.snapshot() as snap:
        fp = _fingerprint(snap.state)
        generation = snap.generation
        built = {
            "embedder_id": snap.state.get("embedder_id"),
            "strategy_id": snap.state.get("strategy_id"),
            "lexical": snap.state.get("lexical"),
        }
    scores = top_scores(c, pos_q + neg_q, mode=mode, fusion=fusion, k=k, **search_kw)
    pos, neg = scores[: len(pos_q)], scores[len(pos_q) :]
    floor, sens, spec, margin = best_floor(pos, neg, float(weight))
    eff_fusion = fusion if mode == "hybrid" else None
    cal = Calibration(
        c.name,
        calibration_key(mode, fusion, tag),
        mode,
        eff_fusion,
        float(floor),
        sens,
        spec,
        float(weight),
        float(margin),
        tuple(pos),
        tuple(neg),
        k,
        fp["embedder_id"],
        fp["strategy_id"],
        fp["lexical_id"],
        _search_params(mode, fusion, search_kw),
        generation,
        time.time(),
    )
    if save:
        c.store.set_calibration(cal.key, cal.to_dict(), expect=built)
        cal = Calibration.from_dict(cal.to_dict(), saved=True)
    return cal


def load_calibration(
    corpus: Any,
    mode: str = "hybrid",
    fusion: str = "rrf",
    *,
    rerank: Any = None,
    rerank_text: Any = "surface",
    rerank_max_chars: int = DFLT_RERANK_MAX_CHARS,
) -> Calibration | None:
    """The calibration stored for ``mode``/``fusion`` searches of
    ``corpus`` (reranked by ``rerank`` reading ``rerank_text``, when
    given), or None (none stored, or a hand-written record that holds
    only a floor). Whether it still applies is :func:`calibration_problem`'s
    question.

    >>> from rowvoi.corpus import CorpusStore, build, from_mapping
    >>> c = build(from_mapping({"a": "wing lift", "b": "shock wave"}, embedder="hashing"),
    ...           store=CorpusStore.memory())
    >>> cal = calibrate_min_score(c, ["wing lift"], ["lift a car", "pie"], mode="lexical")
    >>> load_calibration(c, "lexical") == cal, load_calibration(c, "dense")
    (True, None)
    """
    c = as_corpus(corpus)
    tag = search_tag(
        {"rerank": rerank, "rerank_text": rerank_text, "rerank_max_chars": rerank_max_chars}
    )
    if is_anonymous(tag):
        return None
    record = stored_calibration(c, calibration_key(mode, fusion, tag))
    if not record:
        return None
    try:
        return Calibration.from_dict(record, saved=True)
    except (KeyError, TypeError, ValueError):
        return None
