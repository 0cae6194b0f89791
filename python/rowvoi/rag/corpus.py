"""The bridge from corpus search results to rowvoi's decisions.

A corpus search (:func:`rowvoi.corpus.search`) ranks documents by relevance.
The decision layer (:mod:`rowvoi.rag`) answers the next questions: which of
those chunks are *enough* to support an answer (:func:`select_context`), and
when several candidates remain, which probe would tell them apart best
(:func:`next_question`, :class:`RetrievalSession`). This module connects
the two:

:func:`hits_to_chunks`
    Search hits as :class:`~rowvoi.rag.Chunk` objects whose cost is their
    token count, so a set cover over claims minimises context tokens.
:func:`prior_from_hits`
    Retrieval scores as a prior over candidates.
:class:`SearchProbe`, :func:`probe_outcomes`, :class:`SearchProbeRunner`
    Searches as retrieval probes. A probe is a query (with an optional
    mode and filter). Its *predicted* outcome for a candidate document is
    ``"hit"`` when the probe's search over the candidates' corpus returns
    that document, else ``"miss"``; its *observed* outcome is what the same
    search returns over the *evidence* -- a corpus built from what is
    actually in front of you (an incident's logs, a user's file, a
    ticket): ``"hit"`` when it finds anything (at or above a floor). The
    probe worth running is the one whose hit or miss on the evidence best
    splits the candidates, and each observation reweights them.

Token counts
------------
Tokens are counted with the MiniLM WordPiece tokenizer that rowvoi ships
with (the one the embedder and ``Chunked(max_tokens=...)`` use), without
special tokens. When it is not installed, ``tokens="auto"`` (the default)
falls back to one token per word or punctuation mark -- a deterministic
approximation that undercounts WordPiece on rare words -- and warns once;
``tokens="minilm"`` raises instead. Every chunk costs at least 1.

Thread-safety: the functions are pure; a :class:`SearchProbeRunner` may be
shared between threads (its log is appended under a lock), as searches
only read.
"""

from __future__ import annotations

import json
import re
import threading
import warnings
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from rowvoi._validate import integer as _check_int
from rowvoi.corpus import SearchHit, minilm_tokenizer, search
from rowvoi.corpus.retrieval.selection import check_floor
from rowvoi.index.embed import ModelNotFoundError
from rowvoi.rag.context import Chunk

__all__ = [
    "hits_to_chunks",
    "chunk_ids",
    "count_tokens",
    "prior_from_hits",
    "SearchProbe",
    "probe_outcomes",
    "SearchProbeRunner",
    "HIT",
    "MISS",
]

#: The outcome of a probe that finds something.
HIT = "hit"
#: The outcome of a probe that finds nothing.
MISS = "miss"

_WORD = re.compile(r"\w+|[^\w\s]")
_fallback_warned = False
_warn_lock = threading.Lock()


# ------------------------------------------------------------------ tokens
def _word_count(text: str) -> int:
    return len(_WORD.findall(text))


def count_tokens(texts: Iterable[str], *, tokens: str = "auto") -> list[int]:
    """Token counts of ``texts`` (each at least 1).

    Parameters
    ----------
    texts : iterable of str
    tokens : {"auto", "minilm", "words"}
        ``"minilm"``: the MiniLM WordPiece tokenizer (raises
        :class:`~rowvoi.index.embed.ModelNotFoundError` when it is missing);
        ``"words"``: words and punctuation marks; ``"auto"``: MiniLM when
        available, else words (with one warning per process).

    Examples
    --------
    >>> count_tokens(["The shock attaches at the nose.", ""], tokens="words")
    [7, 1]
    """
    items = list(texts)
    for i, t in enumerate(items):
        if not isinstance(t, str):
            raise TypeError(f"texts[{i}] is a {type(t).__name__}, not a str")
    if tokens == "words":
        return [max(1, _word_count(t)) for t in items]
    if tokens not in ("auto", "minilm"):
        raise ValueError(f"tokens must be 'auto', 'minilm', 'words' or a callable, got {tokens!r}")
    try:
        tok = minilm_tokenizer(None)
    except (ModelNotFoundError, ImportError) as exc:
        if tokens == "minilm":
            raise
        global _fallback_warned
        with _warn_lock:
            first, _fallback_warned = not _fallback_warned, True
        if first:
            warnings.warn(
                f"token counts fall back to words and punctuation marks: {exc}",
                RuntimeWarning,
                stacklevel=2,
            )
        return [max(1, _word_count(t)) for t in items]
    encs = tok.encode_batch(items, add_special_tokens=False) if items else []
    return [max(1, len(e.ids)) for e in encs]


# ------------------------------------------------------------------ chunks
def chunk_ids(hits: Sequence[SearchHit]) -> list[str]:
    """The chunk id of each hit: unique, readable and stable.

    ``artifact_id``, prefixed by ``source/`` when the hit names its corpus,
    and suffixed by ``#surface_index`` for the hits of an artifact that
    contributes several surfaces.

    Raises ``ValueError`` if two hits still share an id (the same surface
    given twice).

    >>> from rowvoi.corpus.base import SearchHit
    >>> chunk_ids([SearchHit("a", "chunk", 1.0, "", surface_index=0),
    ...            SearchHit("a", "chunk", 0.9, "", surface_index=2),
    ...            SearchHit("b", "doc", 0.5, "", source="wiki")])
    ['a#0', 'a#2', 'wiki/b']
    """
    base = [
        f"{h.source}/{h.artifact_id}" if h.source is not None else str(h.artifact_id) for h in hits
    ]
    counts: dict[str, int] = {}
    for b in base:
        counts[b] = counts.get(b, 0) + 1
    out = [
        f"{b}#{h.surface_index}" if counts[b] > 1 and h.surface_index is not None else b
        for b, h in zip(base, hits)
    ]
    seen: set[str] = set()
    for cid in out:
        if cid in seen:
            raise ValueError(
                f"two hits have chunk id {cid!r} (the same surface twice?); "
                "pass id_of= to name them"
            )
        seen.add(cid)
    return out


def hits_to_chunks(
    hits: Sequence[SearchHit],
    *,
    tokens: str | Callable[[str], int] = "auto",
    id_of: Callable[[SearchHit], Hashable] | None = None,
) -> list[Chunk]:
    """Search hits as :class:`~rowvoi.rag.Chunk` objects costed in tokens.

    Parameters
    ----------
    hits : Sequence[SearchHit]
        E.g. :func:`rowvoi.corpus.search` results (or a
        :class:`~rowvoi.corpus.Selection`'s ``candidates``).
    tokens : {"auto", "minilm", "words"} or callable
        How to count each hit's text (see :func:`count_tokens`), or a
        callable ``text -> int`` (> 0).
    id_of : callable or None
        ``hit -> chunk id``; default :func:`chunk_ids`.

    Returns
    -------
    list[Chunk]
        In the order of ``hits``; ``Chunk.text`` is the hit's text.

    Examples
    --------
    >>> from rowvoi.corpus.base import SearchHit
    >>> from rowvoi.rag import select_context
    >>> hits = [SearchHit("pricing", "chunk", 0.9, "Pro costs $40 per seat."),
    ...         SearchHit("faq", "chunk", 0.7, "Pro costs $40 per seat; it shipped in May.")]
    >>> chunks = hits_to_chunks(hits, tokens="words")
    >>> [(c.id, c.tokens) for c in chunks]
    [('pricing', 7), ('faq', 12)]
    >>> support = {"price": {"pricing", "faq"}, "date": {"faq"}}
    >>> select_context(chunks, ["price", "date"], support).chunks
    ['faq']
    """
    hit_list = list(hits)
    for i, h in enumerate(hit_list):
        if not isinstance(h, SearchHit):
            raise TypeError(f"hits[{i}] is a {type(h).__name__}, not a SearchHit")
    if id_of is None:
        ids: list[Hashable] = list(chunk_ids(hit_list))
    else:
        ids = [id_of(h) for h in hit_list]
    texts = [h.text for h in hit_list]
    if callable(tokens):
        counts = []
        for cid, t in zip(ids, texts):
            n = tokens(t)
            if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
                raise ValueError(
                    f"tokens({cid!r}) returned {n!r}; a token count is an integer >= 1"
                )
            counts.append(int(n))
    else:
        counts = count_tokens(texts, tokens=tokens)
    return [Chunk(cid, text, n) for cid, text, n in zip(ids, texts, counts)]


def prior_from_hits(hits: Sequence[SearchHit]) -> np.ndarray:
    """Retrieval scores as a prior over the hits (sums to 1).

    Scores below zero count as zero; when no score is positive the prior
    is uniform. Meaningful within one ranking (one scale).

    >>> from rowvoi.corpus.base import SearchHit
    >>> prior_from_hits([SearchHit("a", "d", 3.0, ""), SearchHit("b", "d", 1.0, "")]).tolist()
    [0.75, 0.25]
    """
    scores = np.array([float(h.score) for h in hits], dtype=np.float64)
    if scores.size == 0:
        raise ValueError("prior_from_hits needs at least one hit")
    if not np.all(np.isfinite(scores)):
        raise ValueError("every hit needs a finite score to act as a prior")
    w = np.clip(scores, 0.0, None)
    total = w.sum()
    return w / total if total > 0 else np.full(scores.size, 1.0 / scores.size)


# ------------------------------------------------------------------ probes
@dataclass(frozen=True)
class SearchProbe:
    """A search used as a retrieval probe.

    Parameters
    ----------
    query : str
        What to search for.
    mode : str or None
        The search mode; None takes the runner's (or
        :func:`probe_outcomes`') mode.
    filter : Mapping or None
        A metadata filter for the search (the filter language of
        :mod:`rowvoi.query`).

    Probes are hashable (equal query, mode and filter hash alike), so they
    label the columns of an outcome matrix. A plain string is a probe with
    that query.

    Examples
    --------
    >>> SearchProbe("disk full") == SearchProbe("disk full"), str(SearchProbe("dns", "lexical"))
    (True, 'dns [lexical]')
    """

    query: str
    mode: str | None = None
    filter: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.query, str) or not self.query.strip():
            raise ValueError(f"a probe needs a non-empty query string, got {self.query!r}")
        if self.filter is not None and not isinstance(self.filter, Mapping):
            raise TypeError(
                f"a probe's filter must be a mapping, got {type(self.filter).__name__}"
            )

    def _filter_key(self) -> str | None:
        if self.filter is None:
            return None
        return json.dumps(self.filter, sort_keys=True, default=str)

    def __hash__(self) -> int:
        return hash((self.query, self.mode, self._filter_key()))

    def __str__(self) -> str:
        extra = [x for x in (self.mode, self._filter_key()) if x]
        return f"{self.query} [{', '.join(extra)}]" if extra else self.query


def _as_probe(probe: Any) -> SearchProbe:
    if isinstance(probe, SearchProbe):
        return probe
    if isinstance(probe, str):
        return SearchProbe(probe)
    raise TypeError(f"a probe is a query string or a SearchProbe, got {type(probe).__name__}")


def _run(
    corpus: Any, probe: SearchProbe, *, mode: str, k: int, search_kw: Mapping[str, Any]
) -> list[SearchHit]:
    return search(
        corpus, probe.query, k=k, mode=probe.mode or mode, filter=probe.filter, **search_kw
    )


def probe_outcomes(
    corpus: Any,
    candidates: Sequence[str | SearchHit],
    probes: Sequence[str | SearchProbe],
    *,
    mode: str = "lexical",
    depth: int = 1000,
    min_score: float | None = None,
    **search_kw: Any,
) -> pd.DataFrame:
    """The predicted outcome matrix of search probes over candidate documents.

    Cell ``[i, p]`` is :data:`HIT` when probe ``p``, searched over
    ``corpus``, returns candidate ``i`` among its first ``depth`` results
    (at or above ``min_score`` when given), else :data:`MISS`: "if
    candidate ``i`` is the answer, probing the evidence with ``p`` should
    find something". Feed it to :class:`~rowvoi.rag.RetrievalSession` (with
    a :class:`SearchProbeRunner` over the evidence) or to
    :func:`~rowvoi.rag.next_question`.

    Parameters
    ----------
    corpus : corpus or name
        The corpus the candidates come from.
    candidates : Sequence[str or SearchHit]
        Artifact ids (or hits, by their ``artifact_id``), unique.
    probes : Sequence[str or SearchProbe]
        The probes (unique); strings are queries.
    mode : str
        The default search mode (default ``"lexical"``: a BM25 search
        returns exactly the documents sharing a term with the probe, which
        is what "the probe finds it" should mean; dense search returns every
        document, so use it with ``min_score``).
    depth : int
        Results retrieved per probe (default 1000).
    min_score : float or None
        A floor on the probe's own score scale.
    **search_kw
        Any other :func:`rowvoi.corpus.search` keyword.

    Returns
    -------
    DataFrame
        Candidates (positions 0..n-1, in the order given) x probes; the
        candidate ids are in ``frame.attrs["candidates"]``.

    Raises
    ------
    ValueError
        No candidates or probes, duplicates, ``depth`` < 1, a bad floor.
    """
    ids = [c.artifact_id if isinstance(c, SearchHit) else c for c in candidates]
    if not ids:
        raise ValueError("probe_outcomes needs at least one candidate")
    if len(set(ids)) != len(ids):
        raise ValueError("candidates must be unique artifact ids")
    plist = [_as_probe(p) for p in probes]
    if not plist:
        raise ValueError("probe_outcomes needs at least one probe")
    if len(set(plist)) != len(plist):
        raise ValueError("probes must be unique")
    depth = _check_int("depth", depth, 1)
    floor = check_floor(min_score)
    columns: dict[Any, list[str]] = {}
    for given, p in zip(probes, plist):
        found = {
            h.artifact_id
            for h in _run(corpus, p, mode=mode, k=depth, search_kw=search_kw)
            if floor is None or float(h.score) >= floor
        }
        columns[given] = [HIT if c in found else MISS for c in ids]
    frame: pd.DataFrame = pd.DataFrame(columns, columns=list(columns))
    frame.attrs["candidates"] = list(ids)
    return frame


class SearchProbeRunner:
    """A :class:`~rowvoi.rag.ProbeRunner` that runs each probe as a search.

    ``run(probe)`` searches ``corpus`` -- the evidence -- and returns
    :data:`HIT` when the search returns at least one result at or above
    ``min_score`` (any result when None), else :data:`MISS`: the value
    space of :func:`probe_outcomes`.

    Parameters
    ----------
    corpus : corpus or name
        The evidence to probe.
    mode : str
        Default search mode (default ``"lexical"``, see
        :func:`probe_outcomes`).
    min_score : float or None
        Floor on the probe's own score scale.
    **search_kw
        Any other :func:`rowvoi.corpus.search` keyword.

    Attributes
    ----------
    log : list[tuple[Hashable, list[SearchHit]]]
        Every probe run and the hits it returned, in order.

    Examples
    --------
    >>> from rowvoi.corpus import CorpusStore, build, from_mapping
    >>> logs = build(from_mapping({"l1": "x509: certificate has expired"}, name="logs"),
    ...              store=CorpusStore.memory(), embedder="hashing", progress=False)
    >>> runner = SearchProbeRunner(logs)
    >>> runner.run("expired certificate"), runner.run("disk full")
    ('hit', 'miss')
    """

    def __init__(
        self,
        corpus: Any,
        *,
        mode: str = "lexical",
        min_score: float | None = None,
        **search_kw: Any,
    ) -> None:
        self.corpus = corpus
        self.mode = mode
        self.min_score = check_floor(min_score)
        self.search_kw = dict(search_kw)
        self.log: list[tuple[Hashable, list[SearchHit]]] = []
        self._lock = threading.Lock()

    def run(self, probe: Hashable) -> str:
        """Search the evidence with ``probe``; :data:`HIT` or :data:`MISS`."""
        p = _as_probe(probe)
        # the best hit decides: if it is below the floor, so is every other
        hits = _run(self.corpus, p, mode=self.mode, k=1, search_kw=self.search_kw)
        with self._lock:
            self.log.append((probe, hits))
        found = any(self.min_score is None or float(h.score) >= self.min_score for h in hits)
        return HIT if found else MISS
