"""Indexing strategies: how one artifact becomes filter fields and surfaces.

An :class:`IndexingStrategy` decomposes one artifact into an
:class:`~rowvoi.corpus.base.IndexPlan`. Shipped strategies:

:class:`WholeText`
    One surface: the whole text. The default for files and mappings.
:class:`Chunked`
    Overlapping chunks of at most ``chunk_size`` characters, or -- with
    ``max_tokens`` -- at most that many tokens of the MiniLM tokenizer, so
    no chunk is silently truncated by the embedder (256 tokens). The
    default for records.
:class:`Capability`
    One surface, ``"id: description"``: a tool or skill catalogue, where
    the name and the description carry the meaning.
:class:`Fields`
    Several named fields of a record as separate surfaces (a title and an
    abstract, a description and a body), each of its own kind, optionally
    chunked; searches may restrict to kinds or weigh them.

Filter fields come from the source (``metadata_of``, ``metadata_keys``),
not from these strategies: they never enter the embedded text.

Identity and persistence
------------------------
:func:`strategy_id` names a strategy and its parameters; the corpus stores
it, and a build whose strategy id differs re-decomposes every artifact
(texts that did not change keep their vectors: the embedding cache is keyed
by content). :func:`strategy_to_spec` / :func:`strategy_from_spec` turn a
shipped strategy into ``{"name", "params"}`` and back (scalar and
list-of-string parameters only), for the registry. A custom strategy needs
only a ``decompose(artifact_id, raw)`` method; give it a ``strategy_id``
attribute that changes whenever its output would, or its class name and
scalar attributes stand in.

Thread-safety: strategies are immutable and ``decompose`` is pure; the
tokenizer of ``Chunked(max_tokens=...)`` is loaded once per process and is
thread-safe.

Examples
--------
>>> plan = Chunked(chunk_size=40, overlap=10).decompose(
...     "a", "Supersonic flow over a wedge. The shock attaches at the nose. Heat rises.")
>>> [s.text for s in plan.surfaces]
['Supersonic flow over a wedge.', 'a wedge. The shock attaches at the nose.', 'the nose. Heat rises.']
>>> [s.metadata["chunk_index"] for s in plan.surfaces]
[0, 1, 2]
>>> plan = Fields(("title", "body")).decompose("d1", {"title": "Wings", "body": "Lift and drag."})
>>> [(s.kind, s.text) for s in plan.surfaces]
[('title', 'Wings'), ('body', 'Lift and drag.')]
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from rowvoi import _validate as _v
from rowvoi.corpus.base import IndexPlan, Surface

__all__ = [
    "IndexingStrategy",
    "WholeText",
    "Chunked",
    "Fields",
    "Capability",
    "text_of",
    "minilm_tokenizer",
    "STRATEGY_REGISTRY",
    "strategy_to_spec",
    "strategy_from_spec",
    "strategy_id",
    "DFLT_CHUNK_SIZE",
    "DFLT_CHUNK_OVERLAP",
    "DFLT_CHUNK_MAX_TOKENS",
]

#: Default chunk length in characters.
DFLT_CHUNK_SIZE = 1200
#: Default overlap between consecutive chunks, in characters.
DFLT_CHUNK_OVERLAP = 200
#: Content tokens per chunk for token-bounded chunking under MiniLM: the
#: model reads 256 tokens including ``[CLS]`` and ``[SEP]``; 250 leaves room
#: for those and for the token or two a chunk can gain when its text is
#: tokenized on its own.
DFLT_CHUNK_MAX_TOKENS = 250


@runtime_checkable
class IndexingStrategy(Protocol):
    """Decompose one artifact into filter fields and embeddable surfaces.

    Any object with this method is a strategy:

    >>> class Upper:
    ...     def decompose(self, artifact_id, raw):
    ...         return IndexPlan({}, [Surface(artifact_id, "document", text_of(raw).upper())])
    >>> isinstance(Upper(), IndexingStrategy)
    True
    """

    def decompose(self, artifact_id: str, raw: Any) -> IndexPlan:
        """The plan for one artifact."""
        ...


def text_of(raw: Any, text_key: str | None = None) -> str:
    """The text of a raw artifact payload.

    * a ``str`` is its own text; ``bytes`` are decoded as UTF-8 (invalid
      sequences replaced);
    * a mapping gives ``raw[text_key]`` when ``text_key`` is set (missing
      key: ``""``), else ``raw["text"]`` when present, else its string
      values joined by blank lines, in key order;
    * ``None`` is ``""``; anything else is ``str(raw)``.

    >>> text_of({"title": "Wings", "year": 1962, "body": "Lift."})
    'Wings\\n\\nLift.'
    >>> text_of({"text": "t", "title": "x"}), text_of({"a": "b"}, "summary")
    ('t', '')
    """
    if raw is None:
        return ""
    if isinstance(raw, str):
        return raw
    if isinstance(raw, (bytes, bytearray)):
        return bytes(raw).decode("utf-8", "replace")
    if isinstance(raw, Mapping):
        if text_key is not None:
            value = raw.get(text_key)
            return "" if value is None else text_of(value)
        if "text" in raw:
            return text_of(raw["text"])
        return "\n\n".join(v for v in raw.values() if isinstance(v, str) and v)
    return str(raw)


def _check_opt_str(name: str, value: Any) -> str | None:
    if value is not None and (not isinstance(value, str) or not value):
        raise TypeError(f"{name} must be a non-empty str or None, not {value!r}")
    return value


class _Strategy:
    """Shared plumbing: parameters, equality, repr, identity."""

    _params: tuple[str, ...] = ()

    def params(self) -> dict[str, Any]:
        """The constructor parameters (JSON-ready)."""
        out = {}
        for name in self._params:
            value = getattr(self, name)
            out[name] = list(value) if isinstance(value, tuple) else value
        return out

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.params() == self.params()

    def __hash__(self) -> int:
        return hash((type(self).__name__, json.dumps(self.params(), sort_keys=True)))

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"{type(self).__name__}({args})"

    @property
    def strategy_id(self) -> str:
        """``Name{json params}``: changes whenever the output could."""
        return f"{type(self).__name__}{json.dumps(self.params(), sort_keys=True)}"


class WholeText(_Strategy):
    """One surface: the artifact's whole text (see :func:`text_of`).

    Parameters
    ----------
    text_key : str, optional
        For mapping payloads: the key holding the text.
    kind : str
        The surface kind (default ``"document"``).

    Examples
    --------
    >>> WholeText().decompose("a", "  Some text  ").surfaces[0].text
    'Some text'
    >>> WholeText().decompose("a", "   ").surfaces
    []
    """

    _params = ("text_key", "kind")

    def __init__(self, *, text_key: str | None = None, kind: str = "document") -> None:
        self.text_key = _check_opt_str("text_key", text_key)
        self.kind = _check_opt_str("kind", kind) or "document"

    def decompose(self, artifact_id: str, raw: Any) -> IndexPlan:
        """One ``document``-granularity surface, or none for empty text."""
        text = text_of(raw, self.text_key).strip()
        return IndexPlan({}, [Surface(artifact_id, self.kind, text, "document")] if text else [])


# ------------------------------------------------------------------ chunks

_BREAKS = (re.compile(r"\n\s*\n"), re.compile(r"[.!?;:]['\")\]]*\s"), re.compile(r"\s"))


def _char_spans(text: str, size: int, overlap: int) -> list[tuple[int, int]]:
    """(start, end) character spans: each at most ``size`` long, ending at
    the latest paragraph break, else sentence end, else whitespace in its
    second half (a hard cut only when there is none); the next span starts
    ``overlap`` characters before the end, moved forward to a word start."""
    n = len(text)
    spans: list[tuple[int, int]] = []
    start = 0
    while start < n:
        end = min(n, start + size)
        if end < n:
            window = text[start + size // 2 : end + 1]
            for pat in _BREAKS:
                found = [m.end() for m in pat.finditer(window)]
                if found:
                    end = start + size // 2 + found[-1]
                    break
            end = min(end, start + size)
        spans.append((start, end))
        if end >= n:
            break
        nxt = max(end - overlap, start + 1)
        if nxt < end:
            m = re.compile(r"\s+").search(text, nxt, end)
            if m is not None and m.end() < end:
                nxt = m.end()
            elif m is None or m.end() >= end:
                nxt = end
        start = nxt
    return spans


@functools.lru_cache(maxsize=4)
def minilm_tokenizer(path: str | None = None) -> Any:
    """The MiniLM WordPiece tokenizer (a ``tokenizers.Tokenizer`` with no
    truncation and no padding) that ``Chunked(max_tokens=...)`` counts with.

    ``path`` is a ``tokenizer.json``; None finds the installed MiniLM
    model's. Loaded once per path and shared (a ``tokenizers.Tokenizer``
    may be used from several threads). Count tokens of a text as
    ``len(minilm_tokenizer().encode(text, add_special_tokens=False).ids)``.

    Raises
    ------
    rowvoi.index.embed.ModelNotFoundError
        No path given and the MiniLM model package is not installed (the
        message names the package to install).
    """
    from tokenizers import Tokenizer

    if path is None:
        from rowvoi.index.embed import ModelNotFoundError, locate_minilm

        try:
            path = str(locate_minilm()[1])
        except ModelNotFoundError as exc:
            raise ModelNotFoundError(
                f"Chunked(max_tokens=...) counts tokens with the MiniLM "
                f"tokenizer, which is not installed: {exc}"
            ) from exc
    tok = Tokenizer.from_file(path)
    tok.no_truncation()
    tok.no_padding()
    return tok


def _token_spans(
    text: str, max_tokens: int, overlap_tokens: int, token_model: str | None
) -> list[tuple[int, int]]:
    """(start, end) character spans of windows of ``max_tokens`` tokens."""
    offsets = minilm_tokenizer(token_model).encode(text, add_special_tokens=False).offsets
    if not offsets:
        return []
    spans = []
    step = max(1, max_tokens - overlap_tokens)
    i = 0
    while i < len(offsets):
        j = min(len(offsets), i + max_tokens)
        spans.append((offsets[i][0], offsets[j - 1][1]))
        if j >= len(offsets):
            break
        i += step
    return spans


class Chunked(_Strategy):
    """Split the text into overlapping chunks, one surface each.

    Parameters
    ----------
    chunk_size : int
        Longest chunk in characters (default 1200). Chunks end at a
        paragraph break, else a sentence end, else whitespace.
    overlap : int, optional
        Characters shared by consecutive chunks, less than ``chunk_size``
        (default 200, or a sixth of a smaller ``chunk_size``); in token
        mode, the same *fraction* of tokens.
    text_key : str, optional
        For mapping payloads: the key holding the text.
    kind : str
        Surface kind (default ``"chunk"``).
    max_tokens : int, optional
        Chunk by tokens instead: at most this many tokens of
        ``token_model`` per chunk (:data:`DFLT_CHUNK_MAX_TOKENS` suits
        MiniLM).
    token_model : str, optional
        Path of a ``tokenizer.json`` (Hugging Face ``tokenizers``); default
        the MiniLM tokenizer. Token mode raises
        :class:`rowvoi.index.embed.ModelNotFoundError` when it is missing (never a
        silent switch to characters).

    Each chunk's surface metadata holds ``chunk_index``, ``n_chunks`` and
    its character span ``start``/``end`` in the text (stripped of
    surrounding whitespace).

    Raises
    ------
    ValueError
        ``chunk_size < 1``, ``overlap`` negative or not below
        ``chunk_size``, ``max_tokens < 1``.

    Examples
    --------
    >>> plan = Chunked(max_tokens=4, overlap=0).decompose("a", "one two three four five six")
    >>> [s.text for s in plan.surfaces]
    ['one two three four', 'five six']
    """

    _params = ("chunk_size", "overlap", "text_key", "kind", "max_tokens", "token_model")

    def __init__(
        self,
        *,
        chunk_size: int = DFLT_CHUNK_SIZE,
        overlap: int | None = None,
        text_key: str | None = None,
        kind: str = "chunk",
        max_tokens: int | None = None,
        token_model: str | None = None,
    ) -> None:
        self.chunk_size = _v.integer("chunk_size", chunk_size, 1)
        if overlap is None:
            overlap = min(DFLT_CHUNK_OVERLAP, self.chunk_size // 6)
        self.overlap = _v.integer("overlap", overlap, 0)
        if self.overlap >= self.chunk_size:
            raise ValueError(f"overlap={overlap} must be less than chunk_size={chunk_size}")
        self.text_key = _check_opt_str("text_key", text_key)
        self.kind = _check_opt_str("kind", kind) or "chunk"
        self.max_tokens = None if max_tokens is None else _v.integer("max_tokens", max_tokens, 1)
        if token_model is not None:
            token_model = os.fspath(token_model)
        self.token_model = _check_opt_str("token_model", token_model)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """The chunks' character spans in ``text`` (before stripping)."""
        if self.max_tokens is not None:
            ov = round(self.max_tokens * self.overlap / self.chunk_size)
            return _token_spans(
                text, self.max_tokens, min(ov, self.max_tokens - 1), self.token_model
            )
        return _char_spans(text, self.chunk_size, self.overlap)

    def surfaces(self, artifact_id: str, text: str, kind: str | None = None) -> list[Surface]:
        """The chunk surfaces of ``text`` (empty chunks dropped)."""
        pieces = []
        for start, end in self.spans(text):
            piece = text[start:end]
            lead = len(piece) - len(piece.lstrip())
            piece = piece.strip()
            if piece:
                pieces.append((piece, start + lead, start + lead + len(piece)))
        n = len(pieces)
        return [
            Surface(
                artifact_id,
                kind or self.kind,
                p,
                "chunk",
                {"chunk_index": i, "n_chunks": n, "start": s, "end": e},
            )
            for i, (p, s, e) in enumerate(pieces)
        ]

    def decompose(self, artifact_id: str, raw: Any) -> IndexPlan:
        """One ``chunk``-granularity surface per chunk."""
        return IndexPlan({}, self.surfaces(artifact_id, text_of(raw, self.text_key)))


class Fields(_Strategy):
    """Named fields of a mapping payload as separate surfaces.

    Parameters
    ----------
    fields : sequence of str
        The keys to index, in plan order; each becomes surfaces of its own
        kind (the key). Missing or empty fields give no surface.
    chunked : sequence of str
        Fields to split into chunks (kind = the field name, granularity
        ``"chunk"``) with the chunking parameters below; the others are one
        ``"field"`` surface each.
    chunk_size, overlap, max_tokens, token_model
        As for :class:`Chunked`.

    Raises
    ------
    ValueError
        No fields, a repeated field, or a ``chunked`` field not in
        ``fields``.
    TypeError
        At decomposition, a payload that is not a mapping.

    Examples
    --------
    >>> plan = Fields(("title", "body"), chunked=("body",), chunk_size=12, overlap=0).decompose(
    ...     "d1", {"title": "Wings", "body": "Lift. Drag. Stall."})
    >>> [(s.kind, s.text, s.granularity) for s in plan.surfaces]
    [('title', 'Wings', 'field'), ('body', 'Lift. Drag.', 'chunk'), ('body', 'Stall.', 'chunk')]
    """

    _params = ("fields", "chunked", "chunk_size", "overlap", "max_tokens", "token_model")

    def __init__(
        self,
        fields: Sequence[str] = ("title", "body"),
        *,
        chunked: Sequence[str] = (),
        chunk_size: int = DFLT_CHUNK_SIZE,
        overlap: int | None = None,
        max_tokens: int | None = None,
        token_model: str | None = None,
    ) -> None:
        if isinstance(fields, str) or isinstance(chunked, str):
            raise TypeError("fields and chunked must be sequences of str, not one str")
        self.fields = tuple(fields)
        self.chunked = tuple(chunked)
        if not self.fields:
            raise ValueError("Fields needs at least one field")
        for f in self.fields + self.chunked:
            if not isinstance(f, str) or not f:
                raise TypeError(f"field names must be non-empty str, not {f!r}")
        if len(set(self.fields)) != len(self.fields):
            raise ValueError(f"fields {list(self.fields)} repeat a name")
        extra = [f for f in self.chunked if f not in self.fields]
        if extra:
            raise ValueError(f"chunked fields {extra} are not among fields {list(self.fields)}")
        self._chunker = Chunked(
            chunk_size=chunk_size, overlap=overlap, max_tokens=max_tokens, token_model=token_model
        )
        self.chunk_size, self.overlap = self._chunker.chunk_size, self._chunker.overlap
        self.max_tokens, self.token_model = self._chunker.max_tokens, self._chunker.token_model

    def decompose(self, artifact_id: str, raw: Any) -> IndexPlan:
        """Surfaces per field, in the order of ``fields``."""
        if not isinstance(raw, Mapping):
            raise TypeError(
                f"artifact {artifact_id!r}: the Fields strategy needs a mapping "
                f"payload with keys {list(self.fields)}, not {type(raw).__name__}"
            )
        out: list[Surface] = []
        for name in self.fields:
            text = text_of(raw.get(name))
            if name in self.chunked:
                out.extend(self._chunker.surfaces(artifact_id, text, kind=name))
            elif text.strip():
                out.append(Surface(artifact_id, name, text.strip(), "field"))
        return IndexPlan({}, out)


class Capability(_Strategy):
    """One surface naming a capability: its id, then its description.

    The text is ``"<artifact id>: <description>"`` (the id alone when the
    description is empty), one ``document``-granularity surface of kind
    ``kind``. Built for catalogues of things an agent can call or load --
    tools, skills -- where the id is the name the agent uses
    (``jira.create_issue``) and only the name and the description carry
    meaning: the rest of the payload (a parameter schema, a body) is not
    embedded. :func:`rowvoi.corpus.from_mcp_tools` uses it.

    Parameters
    ----------
    text_key : str
        For mapping payloads: the key holding the description (default
        ``"description"``); a ``str`` payload is the description itself.
    kind : str
        The surface kind (default ``"capability"``).

    Examples
    --------
    >>> plan = Capability().decompose(
    ...     "jira.create_issue", {"description": "Open a ticket.", "parameters": {}})
    >>> [(s.kind, s.text) for s in plan.surfaces]
    [('capability', 'jira.create_issue: Open a ticket.')]
    >>> Capability().decompose("ping", {"description": ""}).surfaces[0].text
    'ping'
    """

    _params = ("text_key", "kind")

    def __init__(self, *, text_key: str = "description", kind: str = "capability") -> None:
        self.text_key = _check_opt_str("text_key", text_key) or "description"
        self.kind = _check_opt_str("kind", kind) or "capability"

    def decompose(self, artifact_id: str, raw: Any) -> IndexPlan:
        """One surface: ``"id: description"``, or the id alone."""
        description = text_of(raw.get(self.text_key) if isinstance(raw, Mapping) else raw)
        description = " ".join(description.split())
        text = f"{artifact_id}: {description}" if description else artifact_id
        return IndexPlan({}, [Surface(artifact_id, self.kind, text, "document")])


#: Shipped strategies by name, for :func:`strategy_from_spec`.
STRATEGY_REGISTRY: dict[str, type] = {
    "WholeText": WholeText,
    "Chunked": Chunked,
    "Fields": Fields,
    "Capability": Capability,
}


def strategy_to_spec(strategy: Any) -> dict[str, Any]:
    """``{"name", "params"}`` of a shipped strategy (JSON-ready).

    Raises
    ------
    ValueError
        For a custom strategy (not in :data:`STRATEGY_REGISTRY`): it cannot
        be recreated from data; build such corpora from Python.

    Examples
    --------
    >>> strategy_to_spec(Chunked(max_tokens=250))["params"]["max_tokens"]
    250
    >>> strategy_from_spec(strategy_to_spec(Fields(("t", "w")))) == Fields(("t", "w"))
    True
    """
    cls = type(strategy)
    if STRATEGY_REGISTRY.get(cls.__name__) is not cls:
        raise ValueError(
            f"{cls.__name__} is not a shipped strategy "
            f"({', '.join(STRATEGY_REGISTRY)}); it cannot be stored as a spec"
        )
    return {"name": cls.__name__, "params": strategy.params()}


def strategy_from_spec(spec: Mapping[str, Any] | None) -> Any:
    """Recreate a shipped strategy from ``{"name", "params"}``; ``None``
    gives ``None`` (the source's default strategy then applies).

    Raises
    ------
    ValueError
        An unknown name, or parameters the strategy does not take.

    Examples
    --------
    >>> strategy_from_spec({"name": "Chunked", "params": {"chunk_size": 300}})
    Chunked(chunk_size=300, overlap=50, text_key=None, kind='chunk', max_tokens=None, token_model=None)
    """
    if spec is None:
        return None
    if not isinstance(spec, Mapping) or not isinstance(spec.get("name"), str):
        raise ValueError(f"a strategy spec is {{'name': ..., 'params': {{...}}}}, not {spec!r}")
    cls = STRATEGY_REGISTRY.get(spec["name"])
    if cls is None:
        raise ValueError(
            f"unknown strategy {spec['name']!r}; shipped strategies: "
            f"{', '.join(STRATEGY_REGISTRY)}"
        )
    params = dict(spec.get("params") or {})
    try:
        if cls is Fields:
            fields = params.pop("fields", ("title", "body"))
            params["chunked"] = tuple(params.get("chunked", ()))
            return cls(tuple(fields), **params)
        return cls(**params)
    except TypeError as exc:
        raise ValueError(f"strategy spec {dict(spec)!r}: {exc}") from None


def strategy_id(strategy: Any) -> str:
    """The identity of a strategy, stored in the corpus: a change
    re-decomposes every artifact.

    A ``strategy_id`` attribute wins; otherwise the class's qualified name
    and its scalar attributes.

    >>> strategy_id(WholeText())
    'WholeText{"kind": "document", "text_key": null}'
    >>> class Mine:
    ...     size = 3
    ...     def __init__(self): self.size = 5
    ...     def decompose(self, artifact_id, raw): ...
    >>> strategy_id(Mine())
    'custom:rowvoi.corpus.indexing.strategy.Mine{"size": 5}'
    """
    sid = getattr(strategy, "strategy_id", None)
    if isinstance(sid, str) and sid:
        return sid
    if not callable(getattr(strategy, "decompose", None)):
        raise TypeError(
            f"{type(strategy).__name__} is not an indexing strategy: it has no "
            "decompose(artifact_id, raw) method"
        )
    cls = type(strategy)
    attrs = {
        k: v
        for k, v in sorted(vars(strategy).items())
        if not k.startswith("_") and (v is None or isinstance(v, (str, int, float, bool)))
    }
    return f"custom:{cls.__module__}.{cls.__qualname__}{json.dumps(attrs, sort_keys=True)}"
