"""The second stage of a search: rerank, score boosts, several queries.

:func:`rowvoi.corpus.search` ranks a corpus in one pass (the first stage,
:mod:`~rowvoi.corpus.retrieval.rank`). Three opt-in keywords refine it, in
this order, and all three leave a search untouched when absent:

``formulate``
    a :data:`Formulator` ``query -> str | Sequence[str]`` (see
    :mod:`~rowvoi.corpus.retrieval.formulate`). Each query it returns is
    searched; the candidate lists are fused by keeping, for each surface,
    its best score over the queries (the hit of the query that scored it
    best, which ``explain["query"]`` names), so the per-artifact collapse
    keeps the best surface per artifact across all queries.
``rerank``
    a :data:`Reranker` ``(query, texts) -> scores``: the first stage
    fetches ``fetch_k`` candidate surfaces (default ``max(5 k, 50)``), the
    reranker scores the text of each (:func:`passage_texts`, chosen by
    ``rerank_text``) against the user's query (not the formulated ones: it
    judges the real intent), and the candidates are re-ordered by that
    score, equal scores keeping their first-stage order. A hit's score is
    then the reranker's; its first-stage score, rank and evidence move to
    ``explain["first_stage"]``.
``boost``
    a :data:`ScoreBoost` ``hit -> float`` added to each candidate's score
    after fusion and the rerank, before the per-artifact collapse
    (:func:`field_contains_any` is a ready-made one).

Then the per-artifact collapse (the first surface of each artifact in the
new order) and the top ``k``. When the collapse leaves fewer than ``k``
artifacts although a candidate list was full, the stage runs again on more
candidates (as the first stage does).

Floors
------
A reranked score lives on the reranker's scale, not cosine, BM25 or the
blend's, so a floor calibrated on first-stage scores would be mis-scaled.
A reranked search therefore has its own calibration key,
``calibration_key(mode, "rerank-<id>+<rerank_text>")`` (:func:`rerank_tag`):
``calibrate_min_score(..., rerank=...)`` stores under it and
``discover(..., min_score="auto", rerank=...)`` reads from it. The ``<id>``
is the reranker's ``rerank_id`` attribute; a callable without one is
*anonymous* (``~anonymous`` in its tag), and its floor is never stored nor
read: two different lambdas would share a key. A boosted search's scores
depend on the boost, which no key can name: ``min_score="auto"`` with a
``boost`` warns and applies no floor, and such a floor cannot be saved.

Examples
--------
>>> from rowvoi.corpus import CorpusStore, build, from_mapping, search
>>> docs = {"a": "wing lift and drag", "b": "wing flutter", "c": "pipe flow"}
>>> corpus = build(from_mapping(docs, embedder="hashing"), store=CorpusStore.memory())
>>> [h.artifact_id for h in search(corpus, "wing", mode="lexical")]
['b', 'a']
>>> def longest(query, texts):
...     return [float(len(t)) for t in texts]
>>> [h.artifact_id for h in search(corpus, "wing", mode="lexical", rerank=longest)]
['a', 'b']
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import numbers
import os
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rowvoi.corpus.base import NoLedgerEntry, SearchHit, SearchHits
from rowvoi.corpus.retrieval.stitching import stitch

__all__ = [
    "Reranker",
    "ScoreBoost",
    "RERANK_TEXTS",
    "DFLT_RERANK_MAX_CHARS",
    "CROSS_ENCODER",
    "CROSS_ENCODER_ENV",
    "RerankError",
    "CrossEncoderReranker",
    "resolve_reranker",
    "rerank_tag",
    "is_anonymous",
    "passage_texts",
    "field_contains_any",
    "refine",
]

#: ``(query, texts) -> scores``: one finite score per text, in order, higher
#: = more relevant. A ``rerank_id`` attribute names it (for floors).
Reranker = Callable[[str, Sequence[str]], Sequence[float]]
#: ``hit -> float``, added to each candidate's score after fusion and the
#: rerank, before the per-artifact collapse.
ScoreBoost = Callable[[SearchHit], float]
#: The built-in ``rerank_text`` choices (a callable ``(corpus, hit) -> str``
#: is also accepted).
RERANK_TEXTS = ("surface", "artifact")
#: Cap on the characters of one ``rerank_text="artifact"`` passage.
DFLT_RERANK_MAX_CHARS = 2000
#: The ``rerank=`` string naming an ONNX cross-encoder.
CROSS_ENCODER = "cross-encoder"
#: Environment variable naming the folder of the ONNX cross-encoder
#: ``rerank="cross-encoder"`` loads.
CROSS_ENCODER_ENV = "ROWVOI_CROSS_ENCODER"
#: Longest reranker id kept as is in a tag (longer ones are hashed).
MAX_ID_CHARS = 48
#: The tag part of an unnamed callable.
ANONYMOUS = "~anonymous"


class RerankError(ValueError):
    """A reranker, a rerank spec, a boost or a formulation cannot be used;
    the message says what to do."""


# ------------------------------------------------------------------ specs
_CROSS_ENCODERS: dict[str, CrossEncoderReranker] = {}
_CROSS_LOCK = threading.Lock()


def _no_cross_encoder() -> str:
    return (
        f"rerank={CROSS_ENCODER!r} needs a cross-encoder exported to ONNX, and no "
        "package on PyPI ships one's weights, so rowvoi cannot install one for you. "
        "Put a cross-encoder's model.onnx and tokenizer.json in one folder (an export "
        "of e.g. cross-encoder/ms-marco-MiniLM-L-6-v2) and pass "
        f"rerank='{CROSS_ENCODER}:/path/to/folder' or set {CROSS_ENCODER_ENV}=/path/to/"
        "folder (it runs on onnxruntime and tokenizers, which rowvoi installs); "
        "or pass any callable (query, texts) -> scores, e.g. "
        "rowvoi.rag.claude_search.ClaudeReranker() (pip install 'rowvoi[claude]')"
    )


def resolve_reranker(spec: Any) -> Reranker | None:
    """The reranker ``spec`` names, or ``None`` for no rerank.

    ``spec`` is ``None``, any callable ``(query, texts) -> scores``
    (returned as is), ``"cross-encoder"`` (the ONNX cross-encoder in the
    folder :data:`CROSS_ENCODER_ENV` names) or ``"cross-encoder:<folder>"``
    (:class:`CrossEncoderReranker`, loaded once per folder).

    Raises
    ------
    RerankError
        An unknown string, or ``"cross-encoder"`` with no folder named
        (the message says where to get one and how to point rowvoi at it).
    TypeError
        Anything else.

    Examples
    --------
    >>> resolve_reranker(len) is len, resolve_reranker(None)
    (True, None)
    >>> resolve_reranker("nope")
    Traceback (most recent call last):
    ...
    rowvoi.corpus.retrieval.rerank.RerankError: unknown rerank spec 'nope'; expected a callable, 'cross-encoder' or 'cross-encoder:<folder>'.
    """
    if spec is None or callable(spec):
        return spec  # type: ignore[no-any-return]
    if not isinstance(spec, str):
        raise TypeError(
            f"rerank must be a callable (query, texts) -> scores or a spec string, "
            f"not {type(spec).__name__}"
        )
    if spec == CROSS_ENCODER:
        folder = os.environ.get(CROSS_ENCODER_ENV, "")
        if not folder:
            raise RerankError(_no_cross_encoder())
    elif spec.startswith(CROSS_ENCODER + ":") and spec[len(CROSS_ENCODER) + 1 :]:
        folder = spec[len(CROSS_ENCODER) + 1 :]
    else:
        raise RerankError(
            f"unknown rerank spec {spec!r}; expected a callable, {CROSS_ENCODER!r} "
            f"or '{CROSS_ENCODER}:<folder>'."
        )
    key = str(Path(folder).expanduser().resolve())
    with _CROSS_LOCK:
        made = _CROSS_ENCODERS.get(key)
        if made is None:
            made = _CROSS_ENCODERS[key] = CrossEncoderReranker(key)
    return made


class CrossEncoderReranker:
    """A cross-encoder exported to ONNX, scoring ``(query, passage)`` pairs.

    The folder holds ``model.onnx`` (a BERT-style sequence classifier:
    inputs ``input_ids``, ``attention_mask`` and optionally
    ``token_type_ids``; first output ``(batch, 1)`` or ``(batch,)``
    logits) and ``tokenizer.json`` (a Hugging Face ``tokenizers`` file).
    Each pair is encoded as one sequence pair, truncated to ``max_length``
    tokens, and its logit squashed by a sigmoid into (0, 1), so relative
    selectors see non-negative scores. Pairs run one at a time (a score
    never depends on the batch). ``rerank_id`` names the model file by
    hash, so floors calibrated with it are kept apart from other models'.

    Raises
    ------
    RerankError
        A missing or unreadable file, a model without the BERT inputs or
        with more than one logit per pair, onnxruntime / tokenizers not
        installed (``pip install onnxruntime tokenizers``); when called, a model
        that fails on a pair (e.g. token ids beyond its vocabulary).
    ValueError
        ``max_length`` not an integer >= 4.
    """

    def __init__(self, folder: str | os.PathLike[str], *, max_length: int = 512) -> None:
        path = Path(folder)
        model, tok_file = path / "model.onnx", path / "tokenizer.json"
        for f in (model, tok_file):
            if not f.is_file():
                raise RerankError(
                    f"no {f.name} in {path}: a cross-encoder folder holds model.onnx "
                    f"and tokenizer.json. {_no_cross_encoder()}"
                )
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise RerankError(
                f"the cross-encoder reranker needs onnxruntime and tokenizers: "
                f"pip install onnxruntime tokenizers ({exc})"
            ) from exc
        self.folder = path
        if isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 4:
            raise ValueError(f"max_length must be an integer >= 4 (tokens), got {max_length!r}")
        self.max_length = max_length
        try:
            tok = Tokenizer.from_file(str(tok_file))
        except Exception as exc:  # (tokenizers raises a bare Exception on a bad file)
            raise RerankError(
                f"{tok_file} is not a readable Hugging Face tokenizers file ({exc}); "
                "use the tokenizer.json exported with the cross-encoder"
            ) from exc
        tok.no_padding()
        tok.enable_truncation(max_length=self.max_length)
        self._tok = tok
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        so.inter_op_num_threads = 1
        so.log_severity_level = 3
        try:
            self._sess = ort.InferenceSession(
                str(model), sess_options=so, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # (onnxruntime's own error types)
            raise RerankError(
                f"{model} is not a loadable ONNX model ({type(exc).__name__}: "
                f"{str(exc).strip()[:300]}); export the cross-encoder to ONNX again"
            ) from exc
        names = {i.name for i in self._sess.get_inputs()}
        if not {"input_ids", "attention_mask"} <= names:
            raise RerankError(
                f"{model} is not a BERT-style cross-encoder: it needs inputs input_ids "
                f"and attention_mask (it has {', '.join(sorted(names))})"
            )
        extra = names - {"input_ids", "attention_mask", "token_type_ids"}
        if extra:
            raise RerankError(
                f"{model} takes inputs a BERT-style cross-encoder does not "
                f"({', '.join(sorted(extra))}); it needs input_ids, attention_mask and "
                "optionally token_type_ids"
            )
        shape = self._sess.get_outputs()[0].shape
        if not shape or (len(shape) > 1 and any(isinstance(d, int) and d != 1 for d in shape[1:])):
            raise RerankError(
                f"{model}'s first output has shape {shape}; a cross-encoder reranker needs "
                "one logit per pair, (batch, 1) or (batch,)"
            )
        self._types = "token_type_ids" in names
        digest = hashlib.sha256(model.read_bytes()).hexdigest()[:12]
        self.rerank_id = f"xenc-{digest}"

    def __repr__(self) -> str:
        return f"CrossEncoderReranker({str(self.folder)!r})"

    def __call__(self, query: str, texts: Sequence[str]) -> list[float]:
        """The sigmoid of the model's logit for each ``(query, text)``."""
        out: list[float] = []
        for text in texts:
            e = self._tok.encode(query, text)
            feeds = {
                "input_ids": np.array([e.ids], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask], dtype=np.int64),
            }
            if self._types:
                feeds["token_type_ids"] = np.array([e.type_ids], dtype=np.int64)
            try:
                got = np.asarray(self._sess.run(None, feeds)[0])
            except Exception as exc:  # (onnxruntime's own error types)
                raise RerankError(
                    f"the cross-encoder in {self.folder} failed on text {len(out)} "
                    f"({type(exc).__name__}: {str(exc).strip()[:300]}); are model.onnx "
                    "and tokenizer.json from the same export?"
                ) from exc
            if got.size != 1:
                raise RerankError(
                    f"the cross-encoder in {self.folder} returned {got.size} values for "
                    "one pair; a cross-encoder reranker needs one logit per pair"
                )
            logit = float(got.reshape(-1)[0])
            out.append(1.0 / (1.0 + math.exp(-logit)) if logit > -700 else 0.0)
        return out


# ------------------------------------------------------------------ tags
def _safe(text: str) -> str:
    text = re.sub(r"[^A-Za-z0-9._:@-]", "_", text)
    if len(text) > MAX_ID_CHARS:
        text = text[:32] + "~" + hashlib.sha256(text.encode()).hexdigest()[:12]
    return text


def _named(obj: Any, attr: str) -> str:
    name = getattr(obj, attr, None)
    return _safe(name) if isinstance(name, str) and name else ANONYMOUS


def rerank_tag(
    reranker: Any, rerank_text: Any = "surface", *, max_chars: int = DFLT_RERANK_MAX_CHARS
) -> str | None:
    """The calibration tag of one reranked configuration (``None`` without
    a reranker): ``rerank-<id>+<rerank_text>``, everything that sets the
    score scale. ``<id>`` is the reranker's ``rerank_id`` (``~anonymous``
    without one: :func:`is_anonymous`); a ``rerank_text`` callable is named
    by its ``rerank_text_id``; an ``"artifact"`` text cut at another
    ``max_chars`` than :data:`DFLT_RERANK_MAX_CHARS` adds it.

    >>> def m(query, texts): return [0.0] * len(texts)
    >>> m.rerank_id = "m"
    >>> rerank_tag(m, "artifact"), rerank_tag(None)
    ('rerank-m+artifact', None)
    >>> rerank_tag(lambda q, t: [], "surface")
    'rerank-~anonymous+surface'
    """
    if reranker is None:
        return None
    if callable(rerank_text):
        text = _named(rerank_text, "rerank_text_id")
    elif rerank_text == "artifact" and max_chars != DFLT_RERANK_MAX_CHARS:
        text = f"artifact{int(max_chars)}"
    else:
        text = str(rerank_text)
    return f"rerank-{_named(reranker, 'rerank_id')}+{text}"


def is_anonymous(tag: str | None) -> bool:
    """Does ``tag`` rest on an unnamed callable (so it names no one scale)?

    >>> is_anonymous("rerank-~anonymous+surface"), is_anonymous("rerank-m+surface")
    (True, False)
    """
    return tag is not None and ANONYMOUS in tag


# ------------------------------------------------------------------ texts
def _check_text_choice(rerank_text: Any) -> None:
    if not callable(rerank_text) and rerank_text not in RERANK_TEXTS:
        raise RerankError(
            f"rerank_text={rerank_text!r}: expected 'surface', 'artifact' or a "
            "callable (corpus, hit) -> str"
        )


def passage_texts(
    corpus: Any,
    hits: Sequence[SearchHit],
    rerank_text: Any = "surface",
    *,
    max_chars: int = DFLT_RERANK_MAX_CHARS,
) -> list[str]:
    """The text the reranker scores for each hit.

    ``"surface"``: the matched surface's own text. ``"artifact"``: every
    stored surface of the hit's artifact in plan order
    (``corpus.records_for_artifact``) joined by
    :func:`~rowvoi.corpus.retrieval.stitching.stitch` (a chunker's overlap
    kept once, as :func:`~rowvoi.corpus.expand` shows it), cut at
    ``max_chars`` (read once per artifact; an artifact the corpus no
    longer holds falls back to the matched surface). A callable
    is called as ``rerank_text(corpus, hit)`` and must return a str.

    >>> from rowvoi.corpus import CorpusStore, Fields, build, from_mapping, search
    >>> src = from_mapping({"d": {"title": "Wings", "body": "Lift and drag."}},
    ...                    strategy=Fields(("title", "body")), embedder="hashing:16")
    >>> c = build(src, store=CorpusStore.memory())
    >>> hits = search(c, "wings", mode="lexical", per_artifact=False)
    >>> passage_texts(c, hits), passage_texts(c, hits, "artifact")
    (['Wings'], ['Wings\\n\\nLift and drag.'])
    """
    _check_text_choice(rerank_text)
    if rerank_text == "surface":
        return [h.text for h in hits]
    out = []
    if callable(rerank_text):
        for i, h in enumerate(hits):
            t = rerank_text(corpus, h)
            if not isinstance(t, str):
                raise RerankError(
                    f"rerank_text returned {type(t).__name__} for candidate {i} "
                    f"({h.artifact_id!r}); it must return the text to score, a str"
                )
            out.append(t)
        return out
    cache: dict[str, str] = {}
    for h in hits:
        text = cache.get(h.artifact_id)
        if text is None:
            try:
                recs = corpus.records_for_artifact(h.artifact_id)
                text = stitch(recs)[:max_chars]
            except NoLedgerEntry:
                text = h.text
            cache[h.artifact_id] = text
        out.append(text)
    return out


# ------------------------------------------------------------------ boosts
def field_contains_any(field: str, values: Iterable[Any], boost: float) -> ScoreBoost:
    """A :data:`ScoreBoost`: ``boost`` for a hit whose metadata ``field``
    holds any of ``values`` (equal to one, or a list containing one;
    strings compared case-insensitively), else 0.

    >>> from rowvoi.corpus.base import SearchHit
    >>> b = field_contains_any("tags", ["GPU"], 0.25)
    >>> b(SearchHit("a", "d", 1.0, "", {"tags": ["cuda", "gpu"]})), b(SearchHit("b", "d", 1.0, ""))
    (0.25, 0.0)
    """
    if not isinstance(field, str) or not field:
        raise TypeError(f"field must be a metadata field name, not {field!r}")
    amount = float(boost)
    if not math.isfinite(amount):
        raise ValueError(f"boost must be a finite number, got {boost!r}")

    def norm(v: Any) -> Any:
        return v.casefold() if isinstance(v, str) else v

    wanted = {norm(v) for v in values}

    def boost_hit(hit: SearchHit) -> float:
        got = hit.metadata.get(field) if isinstance(hit.metadata, Mapping) else None
        items = got if isinstance(got, (list, tuple, set, frozenset)) else [got]
        return amount if any(norm(v) in wanted for v in items if v is not None) else 0.0

    boost_hit.__name__ = f"field_contains_any_{field}"
    return boost_hit


# ------------------------------------------------------------------ checks
def _scores(got: Any, n: int, what: str) -> list[float]:
    try:
        arr = np.asarray(got, dtype=np.float64)
    except (TypeError, ValueError):
        raise RerankError(
            f"{what} returned {type(got).__name__}, not a sequence of numbers; a "
            "reranker must return one finite score per text, in order"
        ) from None
    if arr.ndim != 1 or len(arr) != n:
        raise RerankError(
            f"{what} returned {arr.size if arr.ndim else 'a scalar'} scores for {n} texts; "
            "a reranker must return one finite score per text, in order"
        )
    bad = np.flatnonzero(~np.isfinite(arr))
    if len(bad):
        raise RerankError(
            f"{what} returned a non-finite score ({float(arr[bad[0]])!r}) for text {int(bad[0])}; "
            "a reranker must return one finite score per text"
        )
    scores: list[float] = arr.tolist()
    return scores


def _boost(boost: ScoreBoost, hit: SearchHit) -> float:
    b = boost(hit)
    if isinstance(b, bool) or not isinstance(b, numbers.Real) or not math.isfinite(b):
        raise RerankError(
            f"boost returned {b!r} for hit {hit.artifact_id!r}; a ScoreBoost must "
            "return a finite number (0.0 for no boost)"
        )
    return float(b)


def queries_of(formulate: Any, query: str) -> list[str]:
    """The distinct non-empty queries ``formulate(query)`` returns, in order.

    >>> queries_of(lambda q: [q, " wing lift ", q, ""], "wing")
    ['wing', 'wing lift']
    """
    if not callable(formulate):
        raise TypeError(
            f"formulate must be a callable query -> str | list of str, not "
            f"{type(formulate).__name__}"
        )
    got = formulate(query)
    items = [got] if isinstance(got, str) else got
    if not isinstance(items, Sequence) or not all(isinstance(q, str) for q in items):
        raise RerankError(
            f"formulate returned {got!r}; a formulator returns a query (str) or a "
            "sequence of queries"
        )
    out = list(dict.fromkeys(q.strip() for q in items if q.strip()))
    if not out:
        raise RerankError(
            f"formulate returned no query for {query!r}; return the query itself to "
            "search it unchanged"
        )
    return out


# ------------------------------------------------------------------ stage
def _key(h: SearchHit) -> tuple[Any, ...]:
    return (h.source, h.artifact_id, h.surface_index, h.record_id, h.surface_kind)


def refine(
    first_stage: Callable[[str, int], SearchHits],
    corpus: Any,
    query: str,
    *,
    k: int,
    per_artifact: bool,
    fetch_k: int,
    max_fetch: int,
    growth: int,
    queries: Sequence[str],
    reranker: Reranker | None,
    rerank_text: Any,
    max_chars: int,
    boost: ScoreBoost | None,
) -> SearchHits:
    """The second stage (see the module notes): ``first_stage(q, n)``
    returns the best ``n`` surfaces for query ``q``; the result is the top
    ``k`` hits after fusion of ``queries``, the rerank, the boost and the
    collapse."""
    n = fetch_k
    while True:
        lists = [first_stage(q, n) for q in queries]
        full = any(len(hs) >= n for hs in lists)
        best: dict[tuple[Any, ...], tuple[float, int, SearchHit, str]] = {}
        order = 0
        for q, hs in zip(queries, lists):
            for h in hs:
                key = _key(h)
                was = best.get(key)
                if was is None or h.score > was[0]:
                    best[key] = (h.score, order if was is None else was[1], h, q)
                order += 1
        ranked = sorted(best.values(), key=lambda t: (-t[0], t[1]))[:n]
        cands: list[SearchHit] = []
        for _, _, h, q in ranked:
            why = dict(h.explain or {})
            if len(queries) > 1:
                why["query"] = q
            cands.append(dataclasses.replace(h, explain=why))
        if reranker is not None and cands:
            texts = passage_texts(corpus, cands, rerank_text, max_chars=max_chars)
            name = getattr(reranker, "rerank_id", None) or getattr(
                reranker, "__name__", type(reranker).__name__
            )
            scores = _scores(reranker(query, texts), len(texts), f"reranker {name!r}")
            moved = []
            for rank, (h, s) in enumerate(zip(cands, scores), 1):
                why = dict(h.explain or {})
                first = {"score": h.score, "rank": rank}
                if "evidence" in why:
                    first["evidence"] = why.pop("evidence")
                why["first_stage"] = first
                why["rerank"] = {"score": s, "id": getattr(reranker, "rerank_id", None)}
                moved.append(dataclasses.replace(h, score=s, explain=why))
            cands = [moved[i] for i in sorted(range(len(moved)), key=lambda i: -scores[i])]
        if boost is not None:
            boosted = []
            for h in cands:
                b = _boost(boost, h)
                why = dict(h.explain or {})
                why["boost"] = b
                boosted.append(dataclasses.replace(h, score=h.score + b, explain=why))
            cands = sorted(boosted, key=lambda h: -h.score)  # (stable: ties keep order)
        if per_artifact:
            seen: set[tuple[Any, str]] = set()
            out = []
            for h in cands:
                a = (h.source, h.artifact_id)
                if a not in seen:
                    seen.add(a)
                    out.append(h)
                    if len(out) == k:
                        break
        else:
            out = cands[:k]
        if len(out) >= k or not full or n >= max_fetch:
            break
        n = min(n * growth, max_fetch)
    if not out:
        reasons = [getattr(hs, "reason", None) for hs in lists]
        reason = next((r for r in reasons if r), "no record matched")
        return SearchHits.empty(reason)
    return SearchHits(out)
