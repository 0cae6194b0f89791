"""A catalogue of MCP tools as a corpus: one search tool over many tools.

An agent that loads every tool's schema into its context pays for all of
them on every turn and picks worse as the catalogue grows. Index the
catalogue instead, and give the agent one search tool:
:func:`from_mcp_tools` turns tool definitions (the ``tools/list`` answers
of MCP servers, or any records of the same shape) into a
:class:`~rowvoi.corpus.CorpusSource`, and
:func:`~rowvoi.corpus.discover` over the built corpus returns the few
tools that fit a request -- each hit carrying what is needed to call it --
or abstains.

What is indexed
    Each tool is one ``capability`` surface, ``"server.tool: description"``
    (:class:`~rowvoi.corpus.indexing.strategy.Capability`). The parameter
    schema is never embedded: it is long, generic (``owner``, ``limit``,
    ``page``) and would drown the description.
What changes a tool
    :func:`mcp_tool_signal`, a SHA-256 over the name, the description and
    the schema (canonical JSON, so key order does not count): a tool whose
    schema changed is re-indexed on the next build, so its hits carry the
    new schema (its text did not change, so its vector comes from the
    embedding cache).
What a hit carries
    ``metadata``: ``name`` (the artifact id, ``server.tool``), ``server``
    (``None`` for a tool given without one), ``tool`` (the name to call on
    that server), ``param_names`` (the top-level argument names, in schema
    order) and ``input_schema`` (the whole schema). ``server`` and ``tool``
    are filter fields (``filter={"server": "jira"}``); the other two ride
    on the hits and are not filterable.
Ids
    ``server.tool`` when the tool has a server (a ``server`` key, or the
    key of a ``{server: [tools]}`` mapping), else the tool's name; they must
    be unique, and the error says which tool repeats and how to namespace
    it.

Nothing here depends on an MCP library: a tool is a mapping or any object
with a ``name`` attribute (an ``mcp.types.Tool``, say), read by
:func:`mcp_tool_record`.

Examples
--------
>>> from rowvoi.corpus import CorpusStore, build, discover
>>> src = from_mcp_tools({
...     "web": [{"name": "fetch_url", "description": "Fetch a web page and return its text",
...              "inputSchema": {"type": "object", "properties": {"url": {"type": "string"}}}}],
...     "mail": [{"name": "send_email", "description": "Send an email to a recipient"}]},
...     embedder="hashing")
>>> sorted(src.ids())
['mail.send_email', 'web.fetch_url']
>>> corpus = build(src, store=CorpusStore.memory(), progress=False)
>>> hit = discover(corpus, "fetch page text", mode="lexical").results[0]
>>> hit.artifact_id, hit.metadata["server"], hit.metadata["tool"], hit.metadata["param_names"]
('web.fetch_url', 'web', 'fetch_url', ['url'])
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import rowvoi.corpus._confine as _confine
from rowvoi.corpus.base import CorpusError
from rowvoi.corpus.indexing.sources import CorpusSource, resolve_fetcher
from rowvoi.corpus.indexing.strategy import Capability

__all__ = [
    "MCP_TOOL_PARAM_KEYS",
    "MAX_MCP_TOOLS_BYTES",
    "McpToolError",
    "mcp_tool_record",
    "mcp_tool_signal",
    "mcp_tool_id",
    "read_mcp_tools",
    "from_mcp_tools",
]

#: Where a tool's parameter schema is looked up, in this order: MCP says
#: ``inputSchema``; some clients and model APIs say ``input_schema`` or
#: ``parameters``.
MCP_TOOL_PARAM_KEYS = ("parameters", "inputSchema", "input_schema")
#: The largest tool catalogue file :func:`read_mcp_tools` reads (64 MiB).
MAX_MCP_TOOLS_BYTES = 64 * 1024 * 1024
# keys of an MCP ``tools/list`` result besides its tools
_LIST_RESULT_KEYS = frozenset({"tools", "nextCursor", "_meta"})


class McpToolError(CorpusError, ValueError):
    """A tool catalogue that cannot be indexed: not a list or mapping of
    tools, a tool without a name, a schema that is not a JSON object, two
    tools with one id. The message names the tool and says what to fix.

    >>> issubclass(McpToolError, ValueError)
    True
    """


def _field(tool: Any, key: str) -> Any:
    if isinstance(tool, Mapping):
        return tool.get(key)
    return getattr(tool, key, None)


def _has(tool: Any, key: str) -> bool:
    if isinstance(tool, Mapping):
        return key in tool
    return getattr(tool, key, None) is not None


def _label(where: str | None, name: Any) -> str:
    shown = f" {name!r}" if isinstance(name, str) and name else ""
    return f"{where}{shown}" if where else f"tool{shown}"


def _check_word(value: Any, what: str, label: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise McpToolError(f"{label}: {what} must be a non-empty string, not {value!r}")
    if "\x00" in value:
        raise McpToolError(f"{label}: {what} {value!r} holds a NUL character")
    return value


def _plain_json(value: Any, label: str) -> Any:
    """``value`` as plain JSON (a copy), or McpToolError."""
    try:
        return json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise McpToolError(
            f"{label}: the parameter schema is not plain JSON ({exc}); give a JSON "
            "Schema object of strings, numbers, booleans, lists and objects"
        ) from None
    except RecursionError:
        raise McpToolError(f"{label}: the parameter schema nests too deeply") from None


def mcp_tool_record(tool: Any, *, where: str | None = None) -> dict[str, Any]:
    """Normalize one duck-typed tool to ``{name, description, parameters}``.

    ``tool`` is a mapping or an object (an ``mcp.types.Tool``, say) with a
    ``name``, an optional ``description`` and an optional parameter schema
    under one of :data:`MCP_TOOL_PARAM_KEYS`; a ``server`` it names is kept
    as ``"server"``. Every other field (annotations, output schemas, titles)
    is dropped, so it neither reaches the index nor invalidates it. The
    schema is copied as plain JSON; a missing one is ``{}``.

    Parameters
    ----------
    tool : mapping or object
    where : str, optional
        How to name the tool in error messages (``"tool #3 of server
        'jira'"``).

    Raises
    ------
    McpToolError
        A missing or empty name, a description that is not a string, a
        schema that is not a JSON object (or whose ``properties`` is not
        one), two schema keys holding different schemas.

    Examples
    --------
    >>> mcp_tool_record({"name": "ping", "inputSchema": {"type": "object"}})
    {'name': 'ping', 'description': '', 'parameters': {'type': 'object'}}
    >>> mcp_tool_record({"name": "ping", "inputSchema": "object"})
    Traceback (most recent call last):
    ...
    rowvoi.corpus.indexing.mcp_tools.McpToolError: tool 'ping': its inputSchema is a str; give a JSON Schema object such as {"type": "object", "properties": {...}}
    """
    if tool is None or isinstance(tool, (str, bytes, list, tuple)):
        raise McpToolError(
            f"{where or 'tool'} is a {type(tool).__name__}, not a tool; give a "
            "mapping (or object) with a 'name', a 'description' and an 'inputSchema'"
        )
    name = _field(tool, "name")
    label = _label(where, name)
    if name is None:
        raise McpToolError(f"{label} has no 'name'; every tool needs the name it is called by")
    _check_word(name, "its name", label)
    description = _field(tool, "description")
    if description is None:
        description = ""
    if not isinstance(description, str):
        raise McpToolError(
            f"{label}: its description is a {type(description).__name__}; give a "
            "string (or leave it out)"
        )
    schema: Any = None
    found: str | None = None
    for key in MCP_TOOL_PARAM_KEYS:
        value = _field(tool, key)
        if value is None:
            continue
        if not isinstance(value, Mapping):
            raise McpToolError(
                f"{label}: its {key} is a {type(value).__name__}; give a JSON Schema "
                'object such as {"type": "object", "properties": {...}}'
            )
        value = _plain_json(dict(value), label)
        if found is not None and value != schema:
            raise McpToolError(
                f"{label} has two different schemas, under {found!r} and {key!r}; keep one"
            )
        schema, found = value, found or key
    if schema is None:
        schema = {}
    props = schema.get("properties")
    if props is not None and not isinstance(props, Mapping):
        raise McpToolError(
            f"{label}: its schema's 'properties' is a {type(props).__name__}; give an "
            "object mapping each argument name to its schema"
        )
    out: dict[str, Any] = {"name": name, "description": description, "parameters": schema}
    server = _field(tool, "server")
    if server is not None:
        out["server"] = _check_word(server, "its server", label)
    return out


def mcp_tool_id(record: Mapping[str, Any]) -> str:
    """The artifact id of a normalized tool record: ``server.tool``, or the
    tool's name when it has no server.

    >>> mcp_tool_id({"name": "create_issue", "server": "jira"}), mcp_tool_id({"name": "ping"})
    ('jira.create_issue', 'ping')
    """
    server = record.get("server")
    return f"{server}.{record['name']}" if server else str(record["name"])


def mcp_tool_signal(artifact_id: str, raw: Any) -> str:
    """Change signal for a tool: SHA-256 over ``(name, description, parameters)``.

    The parameter schema takes part in the hash even though it is never
    embedded, so a schema change re-indexes the tool on the next build and
    its hits carry the new schema. The schema is serialized as canonical
    JSON (sorted keys), so key order does not count as a change. ``raw`` is
    a tool in any form :func:`mcp_tool_record` accepts.

    >>> len(mcp_tool_signal("ping", {"name": "ping"}))
    64
    >>> a = {"name": "f", "inputSchema": {"type": "object", "required": ["x"]}}
    >>> b = {"name": "f", "parameters": {"required": ["x"], "type": "object"}}
    >>> mcp_tool_signal("f", a) == mcp_tool_signal("f", b)
    True
    """
    rec = mcp_tool_record(raw, where=f"tool {artifact_id!r}")
    doc = json.dumps(
        [rec["name"], rec["description"], rec["parameters"]],
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(doc.encode("utf-8", "surrogatepass")).hexdigest()


def _is_catalogue_path(tools: Any) -> bool:
    if isinstance(tools, os.PathLike):
        return True
    return isinstance(tools, str) and tools.lower().endswith(".json")


def read_mcp_tools(path: str | os.PathLike[str]) -> Any:
    """The JSON document of a tool catalogue file (a list of tools, a
    ``{server: [tools]}`` object or a ``tools/list`` result; see
    :func:`from_mcp_tools`).

    Only a regular file is read (a FIFO or device is refused before a byte
    is read), and at most :data:`MAX_MCP_TOOLS_BYTES`.

    Raises
    ------
    FileNotFoundError
        No such file.
    McpToolError
        Not a regular file, too large, not UTF-8 JSON.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "tools.json"
    >>> _ = f.write_text('[{"name": "ping"}]')
    >>> read_mcp_tools(f)
    [{'name': 'ping'}]
    """
    p = Path(path).expanduser()
    try:
        fd, st = _confine.open_regular(os.path.realpath(p))
    except FileNotFoundError:
        raise FileNotFoundError(f"{p}: no such file (the tool catalogue)") from None
    except _confine.Refused as exc:
        raise McpToolError(f"{exc}: a tool catalogue is a plain JSON file") from None
    except OSError as exc:
        raise McpToolError(f"{p}: cannot open the tool catalogue: {exc.strerror or exc}") from None
    if st.st_size > MAX_MCP_TOOLS_BYTES:
        os.close(fd)
        raise McpToolError(
            f"{p} is {st.st_size:,} bytes, more than the {MAX_MCP_TOOLS_BYTES:,} "
            "bytes read from a tool catalogue"
        )
    data = _confine.read_fd(fd, MAX_MCP_TOOLS_BYTES + 1)
    if len(data) > MAX_MCP_TOOLS_BYTES:
        raise McpToolError(f"{p} holds more than {MAX_MCP_TOOLS_BYTES:,} bytes")
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise McpToolError(f"{p}: not UTF-8 text ({exc})") from None
    except json.JSONDecodeError as exc:
        raise McpToolError(
            f"{p}: not valid JSON ({exc.msg}, line {exc.lineno} column {exc.colno})"
        ) from None
    except RecursionError:
        raise McpToolError(f"{p}: JSON nested too deeply") from None


def _is_tool_like(value: Any) -> bool:
    """A mapping (or object) that looks like one tool, not a container."""
    if isinstance(value, Mapping):
        return any(k in value for k in ("name", "description", *MCP_TOOL_PARAM_KEYS))
    return not isinstance(value, (str, bytes, list, tuple)) and _has(value, "name")


def _entries(data: Any) -> Iterator[tuple[str, str | None, Any, str | None]]:
    """``(where, server, tool, name from a key)`` for every tool of a
    catalogue in any accepted form."""
    if isinstance(data, Mapping):
        tools = data.get("tools")
        if isinstance(tools, (list, tuple)) and set(data) <= _LIST_RESULT_KEYS:
            data = tools  # an MCP tools/list result
        else:
            for key, value in data.items():
                if not isinstance(key, str) or not key.strip():
                    raise McpToolError(
                        f"catalogue key {key!r}: keys are server names (with a list "
                        "of tools) or tool names (with one tool)"
                    )
                if isinstance(value, (list, tuple)):
                    for i, tool in enumerate(value):
                        yield f"tool #{i} of server {key!r}", key, tool, None
                elif _is_tool_like(value):
                    yield f"tool {key!r}", None, value, key
                else:
                    raise McpToolError(
                        f"catalogue entry {key!r} is a {type(value).__name__} that is "
                        "neither a list of tools (for a server) nor a tool record; "
                        'give {"server": [tool, ...]} or {"tool_name": {tool}}'
                    )
            return
    if isinstance(data, (str, bytes)) or not hasattr(data, "__iter__"):
        raise McpToolError(
            f"a tool catalogue is a list of tools, a {{server: [tools]}} mapping or a "
            f"{{tool name: tool}} mapping, not a {type(data).__name__}"
        )
    for i, tool in enumerate(data):
        yield f"tool #{i}", None, tool, None


def _catalogue(data: Any) -> dict[str, dict[str, Any]]:
    """``{id: normalized record}`` of a catalogue, validated."""
    out: dict[str, dict[str, Any]] = {}
    first: dict[str, str] = {}
    for where, server, tool, key_name in _entries(data):
        if key_name is not None and _field(tool, "name") is None:
            tool = {**tool, "name": key_name} if isinstance(tool, Mapping) else tool
        rec = mcp_tool_record(tool, where=where)
        if server is not None:
            own = rec.get("server")
            if own is not None and own != server:
                raise McpToolError(
                    f"{where} ({rec['name']!r}) says server {own!r}; it is listed under "
                    f"{server!r}: drop its 'server' key or move it"
                )
            rec["server"] = server
        aid = mcp_tool_id(rec)
        if aid in out:
            hint = (
                "; give each tool its server (a 'server' key, or a {server: [tools]} "
                "mapping) so that ids become 'server.tool'"
                if "server" not in rec
                else "; a server lists each tool once"
            )
            raise McpToolError(f"{where}: id {aid!r} is taken by {first[aid]}{hint}")
        out[aid] = rec
        first[aid] = where
    return out


class _ToolScope(Mapping[str, dict[str, Any]]):
    """The normalized tools of a catalogue by id. A file or fetcher
    catalogue (``fresh=True``) is read again by each iteration -- each
    build iterates its scope once -- so a long-lived source sees edits."""

    def __init__(self, load: Callable[[], Any], *, fresh: bool) -> None:
        self._load_fn = load
        self._fresh = fresh
        self._data: dict[str, dict[str, Any]] | None = None

    def _load(self) -> dict[str, dict[str, Any]]:
        if self._data is None:
            self._data = _catalogue(self._load_fn())
        return self._data

    def __getitem__(self, key: str) -> dict[str, Any]:
        return self._load()[key]

    def __iter__(self) -> Iterator[str]:
        if self._fresh:
            self._data = None
        return iter(list(self._load()))

    def __len__(self) -> int:
        return len(self._load())


class _CatalogueFile:
    """A fetcher reading a catalogue file at each build (picklable)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __call__(self) -> Any:
        return read_mcp_tools(self.path)


def _tool_metadata(artifact_id: str, raw: Any) -> dict[str, Any]:
    rec = raw if isinstance(raw, Mapping) else mcp_tool_record(raw)
    schema = rec.get("parameters") or {}
    props = schema.get("properties") or {}
    return {
        "name": artifact_id,
        "server": rec.get("server"),
        "tool": rec["name"],
        "param_names": [str(p) for p in props],
        "input_schema": schema,
    }


def from_mcp_tools(
    tools: Any, *, name: str | None = "tools", strategy: Any = None, **kwargs: Any
) -> CorpusSource:
    """A catalogue of MCP tools as a corpus, for tool search.

    Each tool is indexed on its name and description only, as one
    ``"server.tool: description"`` surface
    (:class:`~rowvoi.corpus.indexing.strategy.Capability`); its parameter
    schema never enters the embedded text, but it drives invalidation
    through :func:`mcp_tool_signal` (a changed schema re-indexes the tool)
    and rides on every hit as metadata: ``server``, ``tool``,
    ``param_names``, ``input_schema`` (see the module notes).

    Parameters
    ----------
    tools : list, mapping, callable, str or path
        The catalogue, one of:

        * a list of tools (mappings or objects; see
          :func:`mcp_tool_record`), each optionally naming its ``server``;
        * ``{server: [tools]}``, several servers' ``tools/list`` answers
          (every tool then belongs to its key's server);
        * ``{tool name: tool}`` (the key names a tool that has no
          ``name``; a tool's own name wins);
        * an MCP ``tools/list`` result, ``{"tools": [...]}`` (no other keys
          than ``nextCursor`` and ``_meta``);
        * a path to a JSON file holding one of those (a ``Path``, or a
          string ending in ``.json``), read with :func:`read_mcp_tools` at
          each build (a build walks its scope once);
        * a fetcher returning one of those: a zero-argument callable or a
          ``"module:attr"`` reference (:func:`~rowvoi.corpus.resolve_fetcher`:
          importing runs that module's code), called at each build.

        A list or mapping is checked at once; a file or fetcher at the
        build.
    name : str or None
        The corpus name (default ``"tools"``).
    strategy : IndexingStrategy, optional
        Default :class:`~rowvoi.corpus.indexing.strategy.Capability`.
    **kwargs
        Passed to :class:`~rowvoi.corpus.CorpusSource` (``embedder``,
        ``filter_types``, ...).

    Raises
    ------
    McpToolError
        A catalogue that is not a list or mapping of tools, a tool without a
        name, a schema that is not a JSON object, a repeated id (the
        message says how to namespace it).

    Examples
    --------
    >>> src = from_mcp_tools([{"name": "ping", "description": "Check the server is up"}])
    >>> src.name, src.indexing_strategy.decompose("ping", src.scope["ping"]).surfaces[0].text
    ('tools', 'ping: Check the server is up')
    >>> from_mcp_tools([{"name": "ping"}, {"name": "ping"}])
    Traceback (most recent call last):
    ...
    rowvoi.corpus.indexing.mcp_tools.McpToolError: tool #1: id 'ping' is taken by tool #0; give each tool its server (a 'server' key, or a {server: [tools]} mapping) so that ids become 'server.tool'
    """
    spec: dict[str, Any] | None = None
    if _is_catalogue_path(tools):
        p = Path(tools).expanduser().resolve()
        scope = _ToolScope(_CatalogueFile(p), fresh=True)
        spec = {"kind": "mcp_tools", "path": str(p)}
    elif callable(tools) or isinstance(tools, str):
        scope = _ToolScope(resolve_fetcher(tools), fresh=True)
        if isinstance(tools, str):
            spec = {"kind": "mcp_tools", "fetcher": tools}
    else:
        catalogue = _catalogue(tools)  # checked now, not at the build
        scope = _ToolScope(lambda: catalogue, fresh=False)
        scope._load()
    types = {"server": "categorical", "tool": "text"}
    types.update(kwargs.pop("filter_types", None) or {})
    spec = kwargs.pop("spec", spec)
    return CorpusSource(
        name,
        scope,
        Capability() if strategy is None else strategy,
        change_signal=mcp_tool_signal,
        metadata_of=_tool_metadata,
        filter_types=types,
        spec=spec,
        **kwargs,
    )
