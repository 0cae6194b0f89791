"""Writing evaluation cases: the deterministic parts around a generator.

Cases can be written by hand, taken from a test collection, or generated:
a language model reads an artifact's description and writes queries a
user with that need might type ("back-translation"). The model is yours --
rowvoi ships no SDK -- behind two small protocols:

:class:`QueryGenerator`
    ``generator(description, *, n) -> [query, ...]``: up to ``n`` queries
    for one artifact's description.
:class:`AbstentionGenerator`
    ``generator(*, n, theme) -> [query, ...]``: queries that *nothing* in
    a corpus about ``theme`` answers (abstention cases).

What rowvoi does around them is deterministic and tested:

* :func:`mask_name` removes the artifact's own name from the description
  before the generator reads it, so generated queries describe the need,
  not the name (a query naming its answer measures string matching);
* the *leak guard* (:func:`leaks_name`) drops generated queries that still
  contain the name -- as a phrase, or every word of a multi-word name in
  any order, which is what a bag-of-words ranker would match;
* descriptions shorter than ``min_chars`` are skipped and counted;
  ``max_artifacts`` takes the first artifacts by sorted id, so a capped run
  is the same on every machine;
* :func:`build_eval_set` adds abstention cases so they make up
  ``abstention_frac`` of the set: ``ceil(frac * G / (1 - frac))`` of them
  for ``G`` gold cases;
* :func:`corpus_signature` is an order-independent hash of the artifact
  ids, for the ``__meta__`` line of a case file.

>>> mask_name("ci-advisor reviews CI runs; use CI Advisor daily", "ci_advisor")
'this capability reviews CI runs; use this capability daily'
>>> leaks_name("which advisor for ci failures?", "ci-advisor"), leaks_name("ci logs", "ci-advisor")
(True, False)
"""

from __future__ import annotations

import hashlib
import math
import numbers
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import PurePath
from typing import Any, Protocol, runtime_checkable

from rowvoi.corpus.eval.cases import DiscoveryCase

__all__ = [
    "QueryGenerator",
    "AbstentionGenerator",
    "GeneratedCases",
    "NAME_PLACEHOLDER",
    "DFLT_QUERIES_PER_ARTIFACT",
    "DFLT_ABSTENTION_FRAC",
    "DFLT_MIN_DESCRIPTION_CHARS",
    "mask_name",
    "leaks_name",
    "generate_cases",
    "generate_abstention_cases",
    "build_eval_set",
    "corpus_signature",
]

#: What a masked name becomes.
NAME_PLACEHOLDER = "this capability"
_FALLBACK_PLACEHOLDER = "the item"
DFLT_QUERIES_PER_ARTIFACT = 5
DFLT_ABSTENTION_FRAC = 0.15
DFLT_MIN_DESCRIPTION_CHARS = 20


@runtime_checkable
class QueryGenerator(Protocol):
    """Writes up to ``n`` user queries for one artifact description."""

    def __call__(self, description: str, *, n: int) -> Sequence[str]:
        """The queries (blank ones are dropped)."""
        ...


@runtime_checkable
class AbstentionGenerator(Protocol):
    """Writes ``n`` queries that nothing in a corpus about ``theme`` answers."""

    def __call__(self, *, n: int, theme: str) -> Sequence[str]:
        """The queries (blank ones are dropped)."""
        ...


def _tokens(name: str) -> list[str]:
    """The name's words, lower-cased: split at spaces, hyphens, underscores
    and dots; one-letter pieces are dropped (they would mask articles)."""
    return [t for t in re.split(r"[\s_.\-]+", name.lower()) if len(t) >= 2]


def _pattern(name: str) -> re.Pattern[str] | None:
    words = _tokens(name)
    if not words:
        return None
    spaced = r"[\s_\-]+".join(map(re.escape, words))
    joined = "".join(map(re.escape, words))
    forms = sorted({spaced, joined}, key=len, reverse=True)
    return re.compile(r"(?<!\w)(?:" + "|".join(forms) + r")(?!\w)", re.IGNORECASE)


def mask_name(text: str, name: str, *, placeholder: str = NAME_PLACEHOLDER) -> str:
    """``text`` with every mention of ``name`` replaced by ``placeholder``.

    A mention is the name's words in order, joined by any run of spaces,
    hyphens or underscores, or written together (``ci-advisor``,
    ``CI Advisor``, ``ci_advisor``, ``ciadvisor``); case-insensitive and
    whole-word (``ci`` does not match inside ``specific``). A placeholder
    that would itself mention the name is replaced by a neutral one. A name
    with no word of two letters or more masks nothing.

    >>> mask_name("Capability tracker", "capability")
    'the item tracker'
    """
    pattern = _pattern(name)
    if pattern is None:
        return text
    if pattern.search(placeholder):
        placeholder = _FALLBACK_PLACEHOLDER
    return pattern.sub(placeholder, text)


def leaks_name(query: str, name: str) -> bool:
    """Whether ``query`` gives the name away: it mentions it (as
    :func:`mask_name` matches), or -- for a name of two words or more --
    holds all of its words in any order. One shared word is not a leak:
    that is the overlap an evaluation should measure."""
    pattern = _pattern(name)
    if pattern is None:
        return False
    if pattern.search(query):
        return True
    words = set(_tokens(name))
    return len(words) >= 2 and words <= set(re.findall(r"\w+", query.lower()))


def _describe(raw: Any) -> str:
    from rowvoi.corpus.indexing.strategy import text_of

    if isinstance(raw, Mapping):
        description = raw.get("description")
        if isinstance(description, str):
            return description
    return text_of(raw)


def _name_of(artifact_id: str, raw: Any) -> str:
    if isinstance(raw, Mapping):
        name = raw.get("name")
        if isinstance(name, str) and name.strip():
            return name
    return PurePath(artifact_id).stem or artifact_id


class GeneratedCases(list[DiscoveryCase]):
    """A list of :class:`DiscoveryCase` with what generation left out:
    ``skipped_short`` (descriptions under ``min_chars``) and ``leaks_dropped``
    (queries the leak guard removed)."""

    skipped_short: int = 0
    leaks_dropped: int = 0


def _check_n(name: str, value: Any, low: int) -> int:
    from rowvoi._validate import integer as _check_int

    return _check_int(name, value, low)


def generate_cases(
    source: Any,
    *,
    query_generator: QueryGenerator,
    k: int = DFLT_QUERIES_PER_ARTIFACT,
    mask_names: bool = True,
    describe: Callable[[Any], str] | None = None,
    name_of: Callable[[str, Any], str] | None = None,
    min_chars: int = DFLT_MIN_DESCRIPTION_CHARS,
    max_artifacts: int | None = None,
    corpus_name: str | None = None,
) -> GeneratedCases:
    """One gold case per generated query, up to ``k`` per artifact.

    Parameters
    ----------
    source : CorpusSource or mapping
        The artifacts (``source.items()`` or a ``{id: raw}`` mapping).
    query_generator : QueryGenerator
        Called once per artifact with the (masked) description.
    k : int
        Queries asked per artifact (>= 1).
    mask_names : bool
        Mask the name in the description and drop leaking queries.
    describe : callable or None
        ``raw -> description`` (default: a mapping's ``description``, else
        the artifact's text).
    name_of : callable or None
        ``(artifact id, raw) -> name`` (default: a mapping's ``name``, else
        the id's file stem).
    min_chars : int
        Skip (and count) shorter descriptions.
    max_artifacts : int or None
        Use only the first ``max_artifacts`` artifacts by sorted id.
    corpus_name : str or None
        Written into each case.

    Returns
    -------
    GeneratedCases
        Cases in artifact order, then generator order; ``source_id`` is the
        artifact id.

    Raises
    ------
    TypeError
        A generator that is not callable or returns something other than a
        list of strings. The generator's own errors propagate.
    """
    if not callable(query_generator):
        raise TypeError(
            "query_generator must be a callable (description, *, n) -> [str]; "
            "rowvoi ships no model, bring your own"
        )
    k = _check_n("k", k, 1)
    min_chars = _check_n("min_chars", min_chars, 0)
    items = list(source.items())
    items = [(str(a), raw) for a, raw in items]
    if max_artifacts is not None:
        items = sorted(items, key=lambda t: t[0])[: _check_n("max_artifacts", max_artifacts, 0)]
    describe = describe or _describe
    name_of = name_of or _name_of
    out = GeneratedCases()
    for artifact_id, raw in items:
        text = describe(raw) or ""
        if len(text.strip()) < min_chars:
            out.skipped_short += 1
            continue
        name = name_of(artifact_id, raw)
        queries = query_generator(mask_name(text, name) if mask_names else text, n=k)
        if isinstance(queries, (str, bytes)) or not hasattr(queries, "__iter__"):
            raise TypeError(
                f"the query generator returned {type(queries).__name__}, not a list of strings"
            )
        for q in list(queries)[:k]:
            if not isinstance(q, str):
                raise TypeError(
                    f"the query generator returned a {type(q).__name__} among "
                    "its queries; queries are strings"
                )
            q = q.strip()
            if not q:
                continue
            if mask_names and leaks_name(q, name):
                out.leaks_dropped += 1
                continue
            out.append(
                DiscoveryCase(
                    q,
                    (artifact_id,),
                    corpus=corpus_name,
                    source_id=artifact_id,
                    metadata={"generator": "back-translation", "masked": bool(mask_names)},
                )
            )
    return out


def generate_abstention_cases(
    n: int, *, generator: AbstentionGenerator | None, theme: str, corpus_name: str | None = None
) -> list[DiscoveryCase]:
    """``n`` abstention cases (no gold) from ``generator`` (none asked: []).

    Raises ``TypeError`` when cases are asked for without a generator.
    """
    n = _check_n("n", n, 0)
    if n == 0:
        return []
    if not callable(generator):
        raise TypeError("abstention cases need an abstention_generator (*, n, theme) -> [str]")
    out = []
    for q in list(generator(n=n, theme=theme))[:n]:
        if isinstance(q, str) and q.strip():
            out.append(
                DiscoveryCase(
                    q.strip(),
                    (),
                    corpus=corpus_name,
                    metadata={"generator": "abstention", "theme": theme},
                )
            )
    return out


def build_eval_set(
    source: Any,
    *,
    query_generator: QueryGenerator,
    abstention_generator: AbstentionGenerator | None = None,
    k: int = DFLT_QUERIES_PER_ARTIFACT,
    abstention_frac: float = DFLT_ABSTENTION_FRAC,
    theme: str = "this corpus",
    corpus_name: str | None = None,
    **gen_kwargs: Any,
) -> list[DiscoveryCase]:
    """Gold cases from :func:`generate_cases`, then abstention cases making
    up ``abstention_frac`` of the whole: ``ceil(frac * G / (1 - frac))`` of
    them for ``G`` gold cases.

    Raises ``ValueError`` if ``abstention_frac`` is outside [0, 1) or
    ``k`` < 1, before anything is generated.

    >>> gen = lambda text, *, n: [f"how to {w}" for w in text.split()[:n]]
    >>> out = lambda *, n, theme: [f"off-topic {i}" for i in range(n)]
    >>> cases = build_eval_set({"a.md": "measure drag lift stall", "b.md": "heat flux wall"},
    ...                        query_generator=gen, abstention_generator=out, k=2,
    ...                        min_chars=5, abstention_frac=0.2)
    >>> [c.query for c in cases]
    ['how to measure', 'how to drag', 'how to heat', 'how to flux', 'off-topic 0']
    """
    if (
        isinstance(abstention_frac, bool)
        or not isinstance(abstention_frac, numbers.Real)
        or not 0.0 <= float(abstention_frac) < 1.0
    ):
        raise ValueError(f"abstention_frac must be in [0, 1), got {abstention_frac!r}")
    _check_n("k", k, 1)
    gold = generate_cases(
        source, query_generator=query_generator, k=k, corpus_name=corpus_name, **gen_kwargs
    )
    n = math.ceil(abstention_frac * len(gold) / (1.0 - abstention_frac)) if gold else 0
    return list(gold) + generate_abstention_cases(
        n, generator=abstention_generator, theme=theme, corpus_name=corpus_name
    )


def corpus_signature(source_or_corpus: Any) -> str:
    """A 16-hex-digit hash of the sorted artifact ids of a source, a
    ``{id: raw}`` mapping or a built corpus: the same set of ids gives the
    same signature in any order.

    >>> corpus_signature({"b": 1, "a": 2}) == corpus_signature({"a": 0, "b": 0})
    True
    """
    if isinstance(source_or_corpus, Mapping):
        ids = [str(a) for a in source_or_corpus]
    elif hasattr(source_or_corpus, "items") and hasattr(source_or_corpus, "scope"):
        ids = [a for a, _ in source_or_corpus.items()]
    else:
        from rowvoi.corpus.eval.cases import corpus_artifact_ids

        ids = list(corpus_artifact_ids(source_or_corpus))
    return hashlib.sha256("\n".join(sorted(ids)).encode("utf-8")).hexdigest()[:16]
