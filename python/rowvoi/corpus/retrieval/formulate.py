"""Query formulation: turn one query into the queries a search runs.

A :data:`Formulator` is ``query -> str | Sequence[str]``: a rewrite, an
expansion, several paraphrases. ``search(..., formulate=f)`` searches each
query ``f`` returns and fuses the candidate lists, best surface per
artifact (see :mod:`~rowvoi.corpus.retrieval.rerank`); without
``formulate`` (or with :func:`identity_formulator`) the query is searched
verbatim, exactly as before. A formulator returns queries, never
sub-tasks: planning belongs to the agent above.

:func:`make_llm_formulator` wraps any text completion (a model, a proxy, a
test double) into a formulator that never makes a search worse than the
raw query: any error or empty reply falls back to the identity, with a
:class:`FormulationWarning`. ``rowvoi.rag.claude_search.ClaudeFormulator``
is one on Claude (the ``claude`` extra).

>>> f = make_llm_formulator(lambda prompt: "wing lift\\n2. aerofoil lift", n=2)
>>> f("lift of wings")
['lift of wings', 'wing lift', 'aerofoil lift']
"""

from __future__ import annotations

import hashlib
import re
import warnings
from collections.abc import Callable, Sequence
from typing import Any

__all__ = [
    "Formulator",
    "FORMULATION_PROMPT",
    "FormulationWarning",
    "identity_formulator",
    "make_llm_formulator",
    "parse_queries",
]

#: A query string -> one query (``str``) or several (``Sequence[str]``).
Formulator = Callable[[str], "str | Sequence[str]"]

#: Default prompt of :func:`make_llm_formulator` (``{n}``, ``{query}``).
FORMULATION_PROMPT = (
    "Rewrite the search query into {n} short, diverse alternative search queries "
    "that would retrieve the same target documents: fix typos, expand jargon and "
    "abbreviations, add synonyms, but keep each a terse search phrase. One query "
    "per line, no numbering, no commentary.\n\nQuery: {query}"
)


class FormulationWarning(UserWarning):
    """An LLM formulator failed or replied nothing; the raw query is searched."""


def identity_formulator(query: str) -> str:
    """The default formulator: the query, unchanged.

    >>> identity_formulator("wing lift")
    'wing lift'
    """
    return query


_BULLET = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)]|\(\d+\))\s*")


def parse_queries(reply: Any) -> list[str]:
    """The queries in a model's reply: a list of strings as is, a string
    split into lines; numbering, bullets and surrounding quotes removed,
    empty lines and repeats dropped.

    >>> parse_queries('1. "wing lift"\\n- drag\\n\\nwing lift')
    ['wing lift', 'drag']
    """
    lines = reply.splitlines() if isinstance(reply, str) else list(reply)
    out: list[str] = []
    for line in lines:
        if not isinstance(line, str):
            raise TypeError(f"a reply line must be a str, got {type(line).__name__}")
        q = _BULLET.sub("", line).strip().strip("\"'`").strip()
        if q and q not in out:
            out.append(q)
    return out


def make_llm_formulator(
    complete: Callable[[str], Any],
    *,
    prompt: str | None = FORMULATION_PROMPT,
    n: int = 3,
    keep_original: bool = True,
    fallback: Formulator | None = None,
    formulator_id: str | None = None,
) -> Callable[[str], list[str]]:
    """A :data:`Formulator` on a text completion ``complete``.

    Parameters
    ----------
    complete : callable
        ``prompt -> reply``: the reply is a string (one query per line) or
        a sequence of strings. With ``prompt=None`` it receives the raw
        query instead (for a callable that builds its own request).
    prompt : str or None
        Template with ``{n}`` and ``{query}`` (default
        :data:`FORMULATION_PROMPT`).
    n : int
        Alternative queries kept from the reply (>= 1).
    keep_original : bool
        Search the raw query too, first (default): a rewrite can only add
        candidates, never lose the ones the query finds itself.
    fallback : Formulator, optional
        Used when ``complete`` raises or replies no query (default
        :func:`identity_formulator`); a :class:`FormulationWarning` names
        the failure.
    formulator_id : str, optional
        The identity stamped on the result (``formulator_id``); default
        from the prompt's hash.

    Examples
    --------
    >>> def broken(prompt): raise TimeoutError("model timed out")
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     make_llm_formulator(broken)("wing lift"), str(w[0].message)
    (['wing lift'], 'formulation failed (TimeoutError: model timed out); searching the query as given')
    """
    if not callable(complete):
        raise TypeError(f"complete must be a callable prompt -> reply, not {complete!r}")
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if prompt is not None and ("{query}" not in prompt):
        raise ValueError("prompt must contain {query} (and may contain {n})")
    back = fallback or identity_formulator

    def fall(query: str, why: str) -> list[str]:
        warnings.warn(
            f"formulation failed ({why}); searching the query as given",
            FormulationWarning,
            stacklevel=3,
        )
        got = back(query)
        return [got] if isinstance(got, str) else list(got)

    def formulate(query: str) -> list[str]:
        try:
            text = query if prompt is None else prompt.format(n=n, query=query)
            qs = parse_queries(complete(text))[:n]
        except Exception as exc:  # (any failure: never worse than the query)
            return fall(query, f"{type(exc).__name__}: {exc}")
        if not qs:
            return fall(query, "empty reply")
        out = ([query] if keep_original else []) + [q for q in qs if q != query]
        return out

    digest = hashlib.sha256((prompt or "").encode()).hexdigest()[:12]
    formulate.formulator_id = formulator_id or f"llm:{digest}:n={n}"  # type: ignore[attr-defined]
    return formulate
