"""Claude as a search's reranker and query formulator (the ``claude`` extra).

:class:`ClaudeReranker` is a reranker for ``rowvoi.corpus.search(...,
rerank=...)``: ``(query, texts) -> scores``, one request per search.
:class:`ClaudeFormulator` is a formulator for ``search(..., formulate=...)``:
``query -> [queries]``. Both follow :mod:`rowvoi.rag.claude`: one tool
whose input schema is the answer, forced with ``tool_choice``; the
variable text behind a prompt-cache breakpoint (``cache_control``) after
the fixed tools and system prompt; replies validated (a malformed one is a
``ValueError`` that says what was wrong). The formulator falls back to the
raw query on any failure (:func:`rowvoi.corpus.make_llm_formulator`); the
reranker raises, since a search asked to rerank must not silently not.

>>> class Messages:
...     def create(self, **request):
...         self.request = request
...         return {"stop_reason": "tool_use", "content": [{"type": "tool_use",
...                 "name": "record_relevance", "input": {"scores": [
...                 {"id": "1", "score": 0.9}, {"id": "0", "score": 0.2}]}}]}
>>> class Client:
...     messages = Messages()
>>> rr = ClaudeReranker(client=Client())
>>> rr("wing lift", ["pipe flow", "lift of a wing"])
[0.2, 0.9]
>>> rr.client.messages.request["tool_choice"], rr.rerank_id
({'type': 'tool', 'name': 'record_relevance'}, 'claude-claude-haiku-4-5-...')
"""

from __future__ import annotations

import hashlib
import json
import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any

from rowvoi.rag.claude import DEFAULT_MAX_TOKENS, DEFAULT_MODEL, _ClaudeAdapter, _string_list

__all__ = ["ClaudeReranker", "ClaudeFormulator", "RELEVANCE_TOOL", "QUERIES_TOOL"]

RELEVANCE_TOOL = "record_relevance"
QUERIES_TOOL = "record_queries"

_RERANK_SYSTEM = (
    "You judge search results. For the search query, rate how relevant each "
    "numbered passage is to what the searcher wants, from 0.0 (unrelated) to 1.0 "
    "(exactly what they need). Judge each passage on its own. Call "
    f"{RELEVANCE_TOOL} with one entry per passage id."
)
_FORMULATE_SYSTEM = (
    "You rewrite search queries. Give short, diverse alternative search queries "
    "that would retrieve the same target documents: fix typos, expand jargon and "
    "abbreviations, add synonyms; keep each a terse search phrase. Call "
    f"{QUERIES_TOOL} with the queries."
)
_RELEVANCE_SCHEMA = {
    "name": RELEVANCE_TOOL,
    "description": "Record the relevance of every passage to the query.",
    "input_schema": {
        "type": "object",
        "properties": {
            "scores": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string"},
                        "score": {"type": "number", "minimum": 0, "maximum": 1},
                    },
                    "required": ["id", "score"],
                },
            }
        },
        "required": ["scores"],
    },
}
_QUERIES_SCHEMA = {
    "name": QUERIES_TOOL,
    "description": "Record the alternative search queries.",
    "input_schema": {
        "type": "object",
        "properties": {"queries": {"type": "array", "items": {"type": "string"}}},
        "required": ["queries"],
    },
}


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:8]


class ClaudeReranker(_ClaudeAdapter):
    """Rerank a search's candidates with Claude: ``(query, texts) -> scores``.

    One request per call: the passages (numbered ``0 .. n-1``, each cut at
    ``max_chars``) in one content block behind a cache breakpoint, then
    the query; the reply is the ``record_relevance`` tool call, one score
    in [0, 1] per passage id. ``rerank_id`` names the model and prompt, so
    a floor calibrated with it is stored under its own key.

    Parameters
    ----------
    client, model, max_tokens, force_tool
        As :class:`rowvoi.rag.claude.ClaudeClaimExtractor`.
    max_chars : int
        Characters of a passage sent (default 2000).

    Raises
    ------
    ValueError
        From a call: a malformed reply (no tool call, a passage without a
        score or scored twice, a score outside [0, 1]), or one cut off at
        ``max_tokens``.
    """

    def __init__(
        self,
        *,
        client: Any = None,
        model: str = DEFAULT_MODEL,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        force_tool: bool = True,
        max_chars: int = 2000,
    ) -> None:
        super().__init__(client=client, model=model, max_tokens=max_tokens, force_tool=force_tool)
        if isinstance(max_chars, bool) or not isinstance(max_chars, int) or max_chars < 1:
            raise ValueError(f"max_chars must be a positive integer, got {max_chars!r}")
        self.max_chars = max_chars
        self.rerank_id = f"claude-{model}-{_digest(_RERANK_SYSTEM, str(max_chars))}"

    def __call__(self, query: str, texts: Sequence[str]) -> list[float]:
        """One relevance score in [0, 1] per text, in order."""
        if not isinstance(query, str):
            raise TypeError(f"query must be a str, got {type(query).__name__}")
        items = list(texts)
        if not items:
            return []
        passages = "Passages:\n\n" + "\n\n".join(
            f'<passage id="{i}">\n{t[: self.max_chars]}\n</passage>' for i, t in enumerate(items)
        )
        data = self._ask(
            _RERANK_SYSTEM,
            _RELEVANCE_SCHEMA,
            [
                {"type": "text", "text": passages, "cache_control": {"type": "ephemeral"}},
                {"type": "text", "text": f"Search query: {json.dumps(query)}"},
            ],
        )
        entries = data.get("scores")
        if not isinstance(entries, (list, tuple)):
            raise ValueError(f"{RELEVANCE_TOOL}.scores must be a list, got {entries!r}")
        got: dict[int, float] = {}
        for j, e in enumerate(entries):
            where = f"{RELEVANCE_TOOL}.scores[{j}]"
            if not isinstance(e, Mapping) or "id" not in e or "score" not in e:
                raise ValueError(f"{where} must be an object with id and score, got {e!r}")
            pid, s = str(e["id"]).strip(), e["score"]
            if not pid.isdigit() or int(pid) >= len(items):
                continue  # a passage we did not send
            ok = not isinstance(s, bool) and isinstance(s, numbers.Real)
            if not ok or not (math.isfinite(float(s)) and 0.0 <= float(s) <= 1.0):
                raise ValueError(f"{where}.score must be a number in [0, 1], got {s!r}")
            if int(pid) in got:
                raise ValueError(f"{where}: passage {pid} is scored twice")
            got[int(pid)] = float(s)
        missing = [i for i in range(len(items)) if i not in got]
        if missing:
            raise ValueError(
                f"the {RELEVANCE_TOOL} call scores no passage {missing[:5]!r} "
                f"(of {len(items)}); every passage needs a score"
            )
        return [got[i] for i in range(len(items))]


class ClaudeFormulator(_ClaudeAdapter):
    """Rewrite a query into several with Claude: ``query -> [queries]``.

    The raw query comes first, then up to ``n`` rewrites from the
    ``record_queries`` tool call; any failure (no client reply, a
    malformed one, an empty one) searches the raw query alone with a
    :class:`rowvoi.corpus.FormulationWarning`
    (:func:`rowvoi.corpus.make_llm_formulator`).

    >>> class Messages:
    ...     def create(self, **request):
    ...         return {"stop_reason": "tool_use", "content": [{"type": "tool_use",
    ...                 "name": "record_queries", "input": {"queries": ["aerofoil lift"]}}]}
    >>> class Client:
    ...     messages = Messages()
    >>> ClaudeFormulator(client=Client())("wing lift")
    ['wing lift', 'aerofoil lift']
    """

    def __init__(
        self,
        *,
        client: Any = None,
        model: str = DEFAULT_MODEL,
        max_tokens: int = 1024,
        force_tool: bool = True,
        n: int = 3,
    ) -> None:
        super().__init__(client=client, model=model, max_tokens=max_tokens, force_tool=force_tool)
        from rowvoi.corpus.retrieval.formulate import make_llm_formulator

        self.n = n
        self.formulator_id = f"claude-{model}-{_digest(_FORMULATE_SYSTEM)}-n{n}"
        self._formulate = make_llm_formulator(
            self.rewrite, prompt=None, n=n, formulator_id=self.formulator_id
        )

    def rewrite(self, query: str) -> list[str]:
        """The model's rewrites of ``query`` (raises ``ValueError`` on a
        malformed reply)."""
        data = self._ask(
            _FORMULATE_SYSTEM,
            _QUERIES_SCHEMA,
            [
                {
                    "type": "text",
                    "text": f"Give {self.n} alternative queries.\n\nQuery: {json.dumps(query)}",
                }
            ],
        )
        if "queries" not in data:
            raise ValueError(
                f"the {QUERIES_TOOL} call has no 'queries' field (fields: {sorted(data)!r})"
            )
        return _string_list(data["queries"], f"{QUERIES_TOOL}.queries")

    def __call__(self, query: str) -> list[str]:
        """The raw query and the model's rewrites (the raw query alone on
        any failure)."""
        return self._formulate(query)
