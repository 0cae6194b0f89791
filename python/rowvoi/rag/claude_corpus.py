"""Claude at the corpus's language-model seams (the ``claude`` extra).

Two adapters, built like :mod:`rowvoi.rag.claude` (one request each, the
answer through a forced tool, the fixed part of the request behind a
prompt-cache breakpoint, replies validated):

:class:`ClaudeSynthesizer`
    A :data:`rowvoi.corpus.indexing.synopsis.Synthesizer` for
    :func:`rowvoi.corpus.with_synopsis`: an artifact in, its synopsis out
    (``record_synopsis`` tool). It carries a ``synthesizer_id`` naming the
    model, the prompt and the input limit, so changing any of them
    re-synthesizes on the next build.
:class:`ClaudeSelectionModel`
    The ``complete(prompt) -> str`` of
    :func:`rowvoi.corpus.make_llm_selector`: the selector's prompt in, the
    chosen ids out as ``{"ids": [...]}`` (``record_selection`` tool); the
    selector validates the ids against the candidates and falls back to the
    heuristic on any failure.

::

    pip install "rowvoi[claude]"

    from rowvoi.corpus import with_synopsis, make_thin_description_predicate, make_llm_selector
    from rowvoi.rag.claude_corpus import ClaudeSelectionModel, ClaudeSynthesizer

    strategy = with_synopsis(Capability(), synthesize=ClaudeSynthesizer(),
                             when=make_thin_description_predicate())
    selector = make_llm_selector(ClaudeSelectionModel())

In both, the system prompt is one block with ``cache_control: {"type":
"ephemeral"}``: it and the tool are the same in every request of a build or
a session, so they are read from the cache after the first (the API caches
only prefixes above a model-dependent minimum length). Importing this module
does not import ``anthropic``; any object with ``messages.create(**request)``
is a client (a test double included).

Examples
--------
>>> class Messages:
...     def create(self, **request):
...         self.request = request
...         return {"stop_reason": "tool_use", "content": [{"type": "tool_use",
...                 "name": "record_synopsis", "input": {"synopsis": "Lists a project's versions."}}]}
>>> class Client:
...     messages = Messages()
>>> from rowvoi.corpus import Artifact
>>> synth = ClaudeSynthesizer(client=Client())
>>> synth(Artifact("jira.get_project_versions", {"description": "Versions."}))
"Lists a project's versions."
>>> synth.client.messages.request["tool_choice"]
{'type': 'tool', 'name': 'record_synopsis'}
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from rowvoi.rag.claude import DEFAULT_MODEL, _ClaudeAdapter

__all__ = [
    "ClaudeSynthesizer",
    "ClaudeSelectionModel",
    "SYNOPSIS_SYSTEM",
    "SYNOPSIS_TOOL",
    "SELECTION_TOOL",
]

SYNOPSIS_TOOL = "record_synopsis"
SELECTION_TOOL = "record_selection"

#: Default instructions of :class:`ClaudeSynthesizer` (part of its id).
SYNOPSIS_SYSTEM = (
    "You write the synopsis a search index stores for an item of a catalogue (a "
    "tool, a document, a package), so that a user's request for what the item does "
    "finds it. In two or three plain sentences say what the item does, for what, on "
    "which objects, in the words a user would use to ask for it; use what the item's "
    "fields and parameters show when its description is short. Do not invent "
    "capabilities the item does not show. Reply only by calling the "
    f"{SYNOPSIS_TOOL} tool."
)

_SELECT_SYSTEM = (
    "You choose, among search results, the ones that serve a user's request. Follow "
    "the instructions in the user message and reply only by calling the "
    f"{SELECTION_TOOL} tool, with ids copied exactly from the candidates."
)

_SYNOPSIS_SCHEMA = {
    "name": SYNOPSIS_TOOL,
    "description": "Record the synopsis of the catalogue item.",
    "input_schema": {
        "type": "object",
        "properties": {
            "synopsis": {"type": "string", "description": "Two or three plain sentences."}
        },
        "required": ["synopsis"],
    },
}

_SELECTION_SCHEMA = {
    "name": SELECTION_TOOL,
    "description": "Record the ids of the chosen candidates (an empty list when none fits).",
    "input_schema": {
        "type": "object",
        "properties": {
            "ids": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Chosen candidate ids, copied exactly.",
            }
        },
        "required": ["ids"],
    },
}


class _CachedAdapter(_ClaudeAdapter):
    """:class:`rowvoi.rag.claude._ClaudeAdapter` with the system prompt as a
    cached block (the same in every request)."""

    def _ask_cached(self, system: str, tool: dict[str, Any], text: str) -> dict[str, Any]:
        block = {"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}
        return self._ask([block], tool, [{"type": "text", "text": text}])


def _artifact_text(artifact: Any, limit: int) -> str:
    """What the model reads of an artifact: its id, then its payload (a
    mapping as JSON, keys sorted), cut to ``limit`` characters."""
    raw = getattr(artifact, "raw", artifact)
    if isinstance(raw, Mapping):
        body = json.dumps(raw, sort_keys=True, ensure_ascii=False, default=str, indent=1)
    elif isinstance(raw, (bytes, bytearray)):
        body = bytes(raw).decode("utf-8", "replace")
    else:
        body = "" if raw is None else str(raw)
    if len(body) > limit:
        body = body[:limit] + "\n[... cut]"
    return f"Item id: {getattr(artifact, 'id', '')}\n\nItem:\n{body}"


class ClaudeSynthesizer(_CachedAdapter):
    """Write an artifact's synopsis with Claude (a ``Synthesizer``).

    One request per artifact; the synopsis comes back through the
    ``record_synopsis`` tool, whitespace collapsed. The request shows the
    artifact's id and payload (a mapping as sorted JSON: for an MCP tool,
    its name, description and parameter schema), cut to
    ``max_input_chars``.

    Parameters
    ----------
    client, model, max_tokens, force_tool
        As :class:`rowvoi.rag.claude.ClaudeClaimExtractor` (``max_tokens``
        default 512 here: a synopsis is short).
    system : str
        The instructions (default :data:`SYNOPSIS_SYSTEM`).
    max_input_chars : int
        The most characters of payload sent (default 8000).

    Attributes
    ----------
    synthesizer_id : str
        ``"claude:<model>:<sha256 of system and max_input_chars, 12 hex>"``:
        what :func:`rowvoi.corpus.with_synopsis` folds into the strategy id.

    Raises
    ------
    ImportError, TypeError, ValueError
        As :class:`rowvoi.rag.claude.ClaudeClaimExtractor`; also a
        ``system`` that is not a non-empty str or a bad ``max_input_chars``.

    Notes
    -----
    A malformed reply (no tool call, no non-empty ``synopsis`` string, cut
    off at ``max_tokens``) raises ``ValueError``; under ``with_synopsis``
    that artifact is indexed without a synopsis, with a warning.

    Examples
    --------
    >>> class Client:
    ...     class messages:
    ...         @staticmethod
    ...         def create(**request):
    ...             return {"stop_reason": "tool_use", "content": [{"type": "tool_use",
    ...                     "name": "record_synopsis", "input": {"synopsis": "  "}}]}
    >>> ClaudeSynthesizer(client=Client(), model="claude-sonnet-4-6").synthesizer_id[:25]
    'claude:claude-sonnet-4-6:'
    >>> ClaudeSynthesizer(client=Client())("just text")
    Traceback (most recent call last):
    ...
    ValueError: the record_synopsis call has an empty synopsis
    """

    def __init__(
        self,
        *,
        client: Any = None,
        model: str = DEFAULT_MODEL,
        max_tokens: int = 512,
        force_tool: bool = True,
        system: str = SYNOPSIS_SYSTEM,
        max_input_chars: int = 8000,
    ) -> None:
        if not isinstance(system, str) or not system.strip():
            raise TypeError(f"system must be a non-empty str, got {system!r}")
        if (
            isinstance(max_input_chars, bool)
            or not isinstance(max_input_chars, int)
            or max_input_chars < 1
        ):
            raise ValueError(
                f"max_input_chars must be a positive integer, got {max_input_chars!r}"
            )
        super().__init__(client=client, model=model, max_tokens=max_tokens, force_tool=force_tool)
        self.system = system
        self.max_input_chars = max_input_chars
        digest = hashlib.sha256(f"{system}\x00{max_input_chars}".encode()).hexdigest()[:12]
        self.synthesizer_id = f"claude:{model}:{digest}"

    def __call__(self, artifact: Any) -> str:
        """The synopsis of ``artifact`` (an :class:`rowvoi.corpus.Artifact`,
        or a payload alone)."""
        data = self._ask_cached(
            self.system, _SYNOPSIS_SCHEMA, _artifact_text(artifact, self.max_input_chars)
        )
        text = data.get("synopsis")
        if not isinstance(text, str):
            raise ValueError(f"the {SYNOPSIS_TOOL} call's synopsis must be a string, got {text!r}")
        text = " ".join(text.split())
        if not text:
            raise ValueError(f"the {SYNOPSIS_TOOL} call has an empty synopsis")
        return text


class ClaudeSelectionModel(_CachedAdapter):
    """The language model of :func:`rowvoi.corpus.make_llm_selector`, on
    Claude: ``model(prompt) -> '{"ids": [...]}'``.

    The selector's prompt (the request and the candidates) is sent as the
    user message; the ids come back through the forced
    ``record_selection`` tool and are returned as JSON text, which the
    selector validates against its candidates. A malformed reply raises
    ``ValueError``, and the selector falls back to its heuristic.

    Parameters
    ----------
    client, model, max_tokens, force_tool
        As :class:`rowvoi.rag.claude.ClaudeClaimExtractor` (the defaults are
        its defaults).

    Examples
    --------
    >>> class Client:
    ...     class messages:
    ...         @staticmethod
    ...         def create(**request):
    ...             return {"stop_reason": "tool_use", "content": [{"type": "tool_use",
    ...                     "name": "record_selection", "input": {"ids": ["a"]}}]}
    >>> ClaudeSelectionModel(client=Client())("Choose ...")
    '{"ids": ["a"]}'
    """

    def __call__(self, prompt: str) -> str:
        """The ids the model chose, as ``{"ids": [...]}`` JSON text."""
        if not isinstance(prompt, str) or not prompt.strip():
            raise ValueError("prompt must be a non-empty str")
        data = self._ask_cached(_SELECT_SYSTEM, _SELECTION_SCHEMA, prompt)
        ids = data.get("ids")
        if not isinstance(ids, (list, tuple)) or not all(isinstance(i, str) for i in ids):
            raise ValueError(
                f"the {SELECTION_TOOL} call's ids must be a list of strings, got {ids!r}"
            )
        return json.dumps({"ids": list(ids)}, ensure_ascii=False)
