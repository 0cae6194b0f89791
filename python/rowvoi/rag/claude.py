"""Claude-backed claim extraction and support judgement (the ``claude`` extra).

:class:`ClaudeClaimExtractor` and :class:`ClaudeSupportJudge` implement
:class:`~rowvoi.rag.protocols.ClaimExtractor` and
:class:`~rowvoi.rag.protocols.SupportJudge` with Anthropic's Messages API, so
:func:`rowvoi.rag.extract_and_select` can run on a real model::

    pip install "rowvoi[claude]"

    from rowvoi.rag import extract_and_select
    from rowvoi.rag.claude import ClaudeClaimExtractor, ClaudeSupportJudge

    selection = extract_and_select(query, chunks, extractor=ClaudeClaimExtractor(),
                                   judge=ClaudeSupportJudge())

How the requests are built:

* **One request per matrix.** The extractor asks once per query; the judge
  asks once for every claim against every chunk, never per pair.
* **Structured output through a tool.** Each request offers one tool whose
  input schema is the answer (``record_claims``, ``record_support``) and, by
  default, forces it with ``tool_choice``; the reply is read from that tool
  call, never parsed out of prose.
* **Chunks behind a prompt-cache breakpoint.** The judge's chunk text is one
  content block carrying ``cache_control: {"type": "ephemeral"}``, after the
  fixed tools and system prompt and before the claims. Judging new claims
  against the same chunks then reads the prefix from the cache (the API
  caches only prefixes above a model-dependent minimum length).
* **Validated replies.** A claim or chunk id the model was not given is
  dropped (as :func:`rowvoi.rag.select_context` drops unknown chunk ids); a
  malformed reply -- no tool call, missing fields, wrong types, a reply cut
  off at ``max_tokens`` -- is a ``ValueError`` that says what was wrong.

``rowvoi.rag`` never imports this module, and importing it does not import
``anthropic``: the SDK is loaded only when an object is built without
``client=``. Any object with a ``messages.create(**request)`` method works as
the client (an ``anthropic.Anthropic``, a proxy, a test double); replies may
be SDK objects or plain dicts of the same shape.

Examples
--------
A stand-in client shows the request and feeds a reply:

>>> class Messages:
...     def create(self, **request):
...         self.request = request
...         claims = ["price of the Pro plan", "release date of v4.2"]
...         return {"stop_reason": "tool_use", "content": [
...             {"type": "tool_use", "name": "record_claims", "input": {"claims": claims}}]}
>>> class Client:
...     messages = Messages()
>>> extractor = ClaudeClaimExtractor(client=Client())
>>> extractor.extract("How much is Pro, and when did v4.2 ship?")
['price of the Pro plan', 'release date of v4.2']
>>> extractor.client.messages.request["tool_choice"]
{'type': 'tool', 'name': 'record_claims'}
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

__all__ = ["ClaudeClaimExtractor", "ClaudeSupportJudge", "DEFAULT_MODEL", "DEFAULT_MAX_TOKENS"]

#: Model used when none is given: fast and inexpensive, and it accepts the
#: forced tool choice these adapters send. Pass ``model=`` to use another.
DEFAULT_MODEL = "claude-haiku-4-5"
#: Output budget of one request, in tokens.
DEFAULT_MAX_TOKENS = 4096

CLAIMS_TOOL = "record_claims"
SUPPORT_TOOL = "record_support"

_EXTRACT_SYSTEM = (
    "You break a user's question into the separate facts a complete answer must be "
    "backed by. Each claim names one fact the answer needs, as a short self-contained "
    "phrase (for example 'price of the Pro plan'); it is not the answer itself. Give "
    "each fact once, in the order the question raises them. Reply only by calling the "
    f"{CLAIMS_TOOL} tool."
)

_JUDGE_SYSTEM = (
    "You judge retrieved passages for a question-answering system. For each claim, list "
    "the ids of the chunks whose text states the claimed fact or directly implies it; a "
    "chunk that is only on the same topic does not support it. Use only ids that appear "
    "in a <chunk id=...> tag. Give one entry per claim, with the claim copied exactly as "
    "given, and an empty list when no chunk supports it. Reply only by calling the "
    f"{SUPPORT_TOOL} tool."
)

_CLAIMS_SCHEMA = {
    "name": CLAIMS_TOOL,
    "description": "Record the claims an answer to the user's question must support.",
    "input_schema": {
        "type": "object",
        "properties": {
            "claims": {
                "type": "array",
                "items": {"type": "string"},
                "description": "One short phrase per fact the answer needs.",
            },
        },
        "required": ["claims"],
    },
}

_SUPPORT_SCHEMA = {
    "name": SUPPORT_TOOL,
    "description": "Record which chunks support each claim.",
    "input_schema": {
        "type": "object",
        "properties": {
            "support": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "claim": {"type": "string", "description": "The claim, copied exactly."},
                        "chunk_ids": {
                            "type": "array",
                            "items": {"type": "string"},
                            "description": "Ids of the supporting chunks.",
                        },
                    },
                    "required": ["claim", "chunk_ids"],
                },
            },
        },
        "required": ["support"],
    },
}


def _field(obj: Any, name: str) -> Any:
    """``obj.name`` for SDK objects, ``obj[name]`` for dicts; None when absent."""
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def _labels(items: Sequence[Hashable], what: str) -> dict[str, Hashable]:
    """Map the text each item is shown as in the prompt back to the item."""
    out: dict[str, Hashable] = {}
    for item in items:
        label = str(item)
        if label in out:
            if out[label] == item:
                raise ValueError(f"{what}s must be unique: {item!r} appears more than once")
            raise ValueError(
                f"{what} {out[label]!r} and {item!r} both read {label!r} in a "
                f"prompt; {what}s must be distinct as text"
            )
        out[label] = item
    return out


class _ClaudeAdapter:
    """Shared plumbing: the client, the request, the tool call in the reply."""

    def __init__(
        self,
        *,
        client: Any = None,
        model: str = DEFAULT_MODEL,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        force_tool: bool = True,
    ) -> None:
        if not isinstance(model, str) or not model:
            raise TypeError(f"model must be a non-empty model id string, got {model!r}")
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise ValueError(f"max_tokens must be a positive integer, got {max_tokens!r}")
        if client is None:
            client = self._default_client()
        create = getattr(getattr(client, "messages", None), "create", None)
        if not callable(create):
            raise TypeError(
                f"client must have a messages.create(...) method (an "
                f"anthropic.Anthropic, or a stand-in), got {type(client).__name__}"
            )
        self.client = client
        self.model = model
        self.max_tokens = max_tokens
        self.force_tool = bool(force_tool)

    def _default_client(self) -> Any:
        name = type(self).__name__
        try:
            import anthropic
        except ImportError as exc:
            raise ImportError(
                f'{name} needs the anthropic package: pip install "rowvoi[claude]" '
                "(or pass client= with any object that has messages.create)"
            ) from exc
        return anthropic.Anthropic()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(model={self.model!r}, max_tokens={self.max_tokens}, "
            f"force_tool={self.force_tool})"
        )

    def _ask(
        self,
        system: str | list[dict[str, Any]],
        tool: dict[str, Any],
        content: list[dict[str, Any]],
    ) -> dict[str, Any]:
        """Send one request offering ``tool``; return the input of its call.
        ``system`` is a string or a list of content blocks (one may carry a
        cache breakpoint)."""
        request = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "system": system,
            "tools": [tool],
            "tool_choice": (
                {"type": "tool", "name": tool["name"]} if self.force_tool else {"type": "auto"}
            ),
            "messages": [{"role": "user", "content": content}],
        }
        return _tool_input(self.client.messages.create(**request), tool["name"], self.max_tokens)


def _tool_input(response: Any, name: str, max_tokens: int) -> dict[str, Any]:
    """The input of the ``name`` tool call in a Messages API reply, validated."""
    stop = _field(response, "stop_reason")
    if stop == "max_tokens":
        raise ValueError(
            f"the reply was cut off at max_tokens={max_tokens} before the "
            f"{name} call was complete; raise max_tokens"
        )
    content = _field(response, "content")
    if not isinstance(content, (list, tuple)):
        raise ValueError(
            f"the reply has no content list (got {type(content).__name__}); "
            "expected a Messages API response"
        )
    for block in content:
        if _field(block, "type") == "tool_use" and _field(block, "name") == name:
            data = _field(block, "input")
            if not isinstance(data, Mapping):
                raise ValueError(
                    f"the {name} call's input must be an object, got {type(data).__name__}"
                )
            return dict(data)
    kinds = [_field(b, "type") for b in content]
    raise ValueError(
        f"the reply has no {name} tool call (stop_reason={stop!r}, content "
        f"blocks {kinds!r}); the model answered without the tool"
    )


def _string_list(value: Any, where: str) -> list[str]:
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{where} must be a list of strings, got {value!r}")
    return list(value)


class ClaudeClaimExtractor(_ClaudeAdapter):
    """Decompose a query into the claims an answer must support, with Claude.

    Implements :class:`rowvoi.rag.protocols.ClaimExtractor`: one request per
    query, the claims returned through the ``record_claims`` tool.

    Parameters
    ----------
    client : object or None
        Anything with ``messages.create(**request)``. None builds
        ``anthropic.Anthropic()`` (reading ``ANTHROPIC_API_KEY``), which
        needs ``pip install "rowvoi[claude]"``.
    model : str
        Model id (default :data:`DEFAULT_MODEL`).
    max_tokens : int
        Output budget per request, in tokens (default 4096).
    force_tool : bool
        Force the tool call with ``tool_choice`` (default). Some models
        reject a forced tool choice (the API answers HTTP 400); with
        ``force_tool=False`` the tool is offered with ``tool_choice`` auto
        and the prompt asks for it, and a reply without it is a
        ``ValueError``.

    Raises
    ------
    ImportError
        When ``client`` is None and ``anthropic`` is not installed.
    TypeError
        When ``client`` has no ``messages.create``, or ``model`` is not a
        string.
    ValueError
        When ``max_tokens`` is not a positive integer.

    Notes
    -----
    Thread-safety: the object only holds its settings, so it may be shared
    by threads as far as the client may (``anthropic.Anthropic`` may).

    Examples
    --------
    >>> class Messages:
    ...     def create(self, **request):
    ...         return {"stop_reason": "tool_use", "content": [{"type": "tool_use",
    ...                 "name": "record_claims", "input": {"claims": ["a", "b", "a"]}}]}
    >>> class Client:
    ...     messages = Messages()
    >>> ClaudeClaimExtractor(client=Client(), model="claude-sonnet-4-6").extract("q?")
    ['a', 'b']
    """

    def extract(self, query: str) -> list[str]:
        """Return the claims an answer to ``query`` must support.

        Parameters
        ----------
        query : str
            The user's question (non-empty).

        Returns
        -------
        list[str]
            The claims, stripped of surrounding whitespace, duplicates
            removed (first occurrence kept), in the model's order.

        Raises
        ------
        TypeError
            If query is not a string.
        ValueError
            If query is empty, or the reply is malformed: no
            ``record_claims`` call, ``claims`` missing or not a list of
            strings, no non-empty claim, or cut off at ``max_tokens``.
        """
        if not isinstance(query, str):
            raise TypeError(f"query must be a str, got {type(query).__name__}")
        if not query.strip():
            raise ValueError("query is empty: there is nothing to extract claims from")
        data = self._ask(
            _EXTRACT_SYSTEM, _CLAIMS_SCHEMA, [{"type": "text", "text": f"Question:\n{query}"}]
        )
        if "claims" not in data:
            raise ValueError(
                f"the {CLAIMS_TOOL} call has no 'claims' field (fields: {sorted(data)!r})"
            )
        claims: list[str] = []
        for c in _string_list(data["claims"], f"{CLAIMS_TOOL}.claims"):
            c = c.strip()
            if c and c not in claims:
                claims.append(c)
        if not claims:
            raise ValueError(f"the {CLAIMS_TOOL} call lists no claims for query {query!r}")
        return claims


class ClaudeSupportJudge(_ClaudeAdapter):
    """Decide which chunks support which claims, with Claude.

    Implements :class:`rowvoi.rag.protocols.SupportJudge`: one request fills
    the whole claims x chunks matrix through the ``record_support`` tool.
    The chunks form one content block behind a prompt-cache breakpoint
    (``cache_control: {"type": "ephemeral"}``) and the claims follow it, so
    judging other claims against the same chunks reuses the cached prefix.
    Chunks appear in the prompt as ``<chunk id="...">text</chunk>`` with
    ``str(id)`` as the id, and claims as ``str(claim)``; both must therefore
    be distinct as text.

    Parameters
    ----------
    client : object or None
        Anything with ``messages.create(**request)``. None builds
        ``anthropic.Anthropic()`` (reading ``ANTHROPIC_API_KEY``), which
        needs ``pip install "rowvoi[claude]"``.
    model : str
        Model id (default :data:`DEFAULT_MODEL`).
    max_tokens : int
        Output budget per request, in tokens (default 4096); the reply
        grows with claims x supporting chunks.
    force_tool : bool
        Force the tool call with ``tool_choice`` (default); see
        :class:`ClaudeClaimExtractor`.

    Raises
    ------
    ImportError, TypeError, ValueError
        As :class:`ClaudeClaimExtractor`.

    Notes
    -----
    Thread-safety: as :class:`ClaudeClaimExtractor`.

    Examples
    --------
    >>> class Messages:
    ...     def create(self, **request):
    ...         self.request = request
    ...         support = [{"claim": "price", "chunk_ids": ["a", "made-up"]},
    ...                    {"claim": "not asked", "chunk_ids": ["b"]}]
    ...         return {"stop_reason": "tool_use", "content": [{"type": "tool_use",
    ...                 "name": "record_support", "input": {"support": support}}]}
    >>> class Client:
    ...     messages = Messages()
    >>> judge = ClaudeSupportJudge(client=Client())
    >>> judge.judge([("a", "Pro costs $40."), ("b", "v4.2 shipped in March.")],
    ...             ["price", "date"])
    {'price': {'a'}, 'date': set()}
    >>> chunks_block = judge.client.messages.request["messages"][0]["content"][0]
    >>> chunks_block["cache_control"], '<chunk id="a">' in chunks_block["text"]
    ({'type': 'ephemeral'}, True)
    """

    def judge(
        self, chunks: Sequence[tuple[Hashable, str]], claims: Sequence[Hashable]
    ) -> dict[Hashable, set[Hashable]]:
        """Map each claim to the set of chunk ids that support it.

        Parameters
        ----------
        chunks : Sequence[tuple[Hashable, str]]
            ``(id, text)`` pairs of the retrieved chunks; ids unique.
        claims : Sequence[Hashable]
            Claims to check support for.

        Returns
        -------
        dict[Hashable, set[Hashable]]
            Every claim, in order, mapped to its supporting chunk ids (an
            empty set when none). Claims and chunk ids the reply names but
            the request did not hold are dropped. No request is sent when
            there are no claims or no chunks.

        Raises
        ------
        TypeError
            If a chunk is not an ``(id, text)`` pair with a str text.
        ValueError
            For duplicate chunk ids or claims (also as text), or a malformed
            reply: no ``record_support`` call, ``support`` missing or not a
            list, an entry that is not an object with a string ``claim`` and
            a list of string ``chunk_ids``, or a reply cut off at
            ``max_tokens``.
        """
        pairs = _chunk_pairs(chunks)
        claim_list = list(claims)
        claim_of = _labels(claim_list, "claim")
        chunk_of = _labels([cid for cid, _ in pairs], "chunk id")
        result: dict[Hashable, set[Hashable]] = {c: set() for c in claim_list}
        if not claim_list or not pairs:
            return result
        chunk_text = "Retrieved chunks:\n\n" + "\n\n".join(
            f"<chunk id={json.dumps(str(cid), ensure_ascii=False)}>\n{text}\n</chunk>"
            for cid, text in pairs
        )
        claims_text = (
            "Claims (copy each exactly into the claim field):\n"
            + json.dumps(list(claim_of), ensure_ascii=False, indent=1)
            + f"\n\nCall {SUPPORT_TOOL} with one entry per claim."
        )
        data = self._ask(
            _JUDGE_SYSTEM,
            _SUPPORT_SCHEMA,
            [
                {"type": "text", "text": chunk_text, "cache_control": {"type": "ephemeral"}},
                {"type": "text", "text": claims_text},
            ],
        )
        if "support" not in data:
            raise ValueError(
                f"the {SUPPORT_TOOL} call has no 'support' field (fields: {sorted(data)!r})"
            )
        entries = data["support"]
        if not isinstance(entries, (list, tuple)):
            raise ValueError(
                f"{SUPPORT_TOOL}.support must be a list, got {type(entries).__name__}"
            )
        for i, entry in enumerate(entries):
            where = f"{SUPPORT_TOOL}.support[{i}]"
            if not isinstance(entry, Mapping):
                raise ValueError(f"{where} must be an object, got {type(entry).__name__}")
            for key in ("claim", "chunk_ids"):
                if key not in entry:
                    raise ValueError(f"{where} has no {key!r} field")
            if not isinstance(entry["claim"], str):
                raise ValueError(f"{where}.claim must be a string, got {entry['claim']!r}")
            ids = _string_list(entry["chunk_ids"], f"{where}.chunk_ids")
            claim = claim_of.get(entry["claim"].strip(), claim_of.get(entry["claim"]))
            if claim is None:
                continue  # a claim we did not ask about
            result[claim].update(chunk_of[s] for s in ids if s in chunk_of)
        return result


def _chunk_pairs(chunks: Sequence[tuple[Hashable, str]]) -> list[tuple[Hashable, str]]:
    if isinstance(chunks, (str, bytes)):
        raise TypeError("chunks must be a sequence of (id, text) pairs, not a string")
    pairs = []
    for i, item in enumerate(chunks):
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise TypeError(f"chunks[{i}] must be an (id, text) pair, got {item!r}")
        cid, text = item
        if not isinstance(text, str):
            raise TypeError(f"chunks[{i}] text must be a str, got {type(text).__name__}")
        pairs.append((cid, text))
    return pairs
