"""The ``rowvoi mcp`` verb: rowvoi's verbs as the tools of an MCP server.

``rowvoi mcp [--corpus NAME ...] [--table NAME=PATH ...] [--allow-writes]``
serves over standard input and output with the official ``mcp`` SDK
(``pip install 'rowvoi[mcp]'``). Each tool is a verb of the ``rowvoi``
command run with ``--json``:

``search``, ``discover`` (``disclose_level``, ``min_score: "auto"``),
``graph`` (``action``: ``neighbours``, ``walk`` or ``text``), ``query``
(over a table named with ``--table``), ``context``, ``question``
    the verbs of the same names; the result is what the verb prints with
    ``--json`` (the library's ``to_dict()``).
``expand``
    :func:`rowvoi.corpus.expand` on a hit (its artifact id, surface kind and
    index, as ``search`` returns them): the stitched passage around it.
``build``, ``maintain``
    only with ``--allow-writes``: the server is read-only by default.

**One source of truth for the arguments.** A tool's input schema is
generated from the argparse parser of its verb (the parsers
:func:`rowvoi.cli.main.build_parser` composes; ``expand`` has its own,
built here from the same argument types): one property per option or
positional, its type, bounds and choices from the argparse ``type=`` (the
``json_schema`` of the types of :mod:`rowvoi.cli._common`) and
``choices=``, its description from the help text. A call is checked the way
the command line checks it: each value is handed, as text, to the same
argparse type, then the verb runs and checks what it checks. The low-level
MCP server validates nothing itself, so this is the only check, and it is
the CLI's.

What a tool cannot do: read a file the agent names (the JSON documents of
``context``, ``question`` and ``query`` come inline and reach the verb as
its standard input; ``--root``, ``--schema`` and ``--fetcher`` are not
offered), reach a corpus or table the server was not started with (when
``--corpus`` or ``--table`` names some), or write without
``--allow-writes``. Every failure -- a malformed argument, an unknown
corpus, a verb's error, anything unexpected -- is a tool error
(``isError``) whose text says what to do; the server keeps serving.
Nothing but the protocol reaches standard output: the SDK points file
descriptor 1 at standard error while it serves, and each verb's output is
captured.

:class:`ToolServer` is the core, free of the SDK: the tool table
(:meth:`ToolServer.tools`) and dispatch (:meth:`ToolServer.call`), testable
in-process; :func:`serve` puts it behind the SDK's low-level server.

Examples
--------
>>> import argparse
>>> sub = argparse.ArgumentParser(prog="rowvoi").add_subparsers()
>>> add_parsers(sub); list(sub.choices)
['mcp']
>>> _table_spec("sales=data/sales.csv")
('sales', 'data/sales.csv')
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import re
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rowvoi.cli._common import (
    INT_MAX,
    CliError,
    UsageError,
    corpus_name,
    integer,
    open_input,
    print_json,
)
from rowvoi.errors import RvError

__all__ = ["add_parsers", "ToolSpec", "ToolError", "ToolServer", "TOOLS", "WRITE_TOOLS", "serve"]

#: The server's name in the MCP handshake.
SERVER_NAME = "rowvoi"


class ToolError(Exception):
    """A tool call that failed: its message is the tool error's text."""


@dataclass(frozen=True)
class Inline:
    """How a tool takes, as JSON, an argument the verb takes as text.

    ``schema`` is the JSON Schema of the value (its transport shape: the
    rules stay the verb's); ``to_text`` turns the value into the text the
    verb's option parses. ``stdin``: the value is a JSON document the verb
    reads from a file, handed to it as standard input (the positional is
    set to ``-``).
    """

    schema: Mapping[str, Any]
    to_text: Callable[[Any], str] = json.dumps
    stdin: bool = False
    prop: str | None = None  # the property's name, when not the verb's dest
    description: str | None = None


def _floor_text(value: Any) -> str:
    """``min_score``: a number, ``"auto"``, or ``{corpus: number|"auto"}``
    as the text ``--min-score`` parses."""
    if isinstance(value, dict):
        return ",".join(f"{k}={_floor_text(v)}" for k, v in value.items())
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ToolError(f"min_score: a number, 'auto' or an object of them, not {value!r}")
    return str(value)


_FLOOR = {"anyOf": [{"type": "number"}, {"const": "auto"}]}


def _rerank_text(value: Any) -> str:
    """``rerank``: a reranker the server's owner set up, never a folder the
    agent names (``cross-encoder`` reads $ROWVOI_CROSS_ENCODER; a
    ``cross-encoder:FOLDER`` would load a model file from any path)."""
    if not isinstance(value, str):
        raise ToolError(f"rerank: a string, not {value!r}")
    if value.startswith("cross-encoder:"):
        raise ToolError(
            "rerank: this server loads no model from a folder a tool call names; use "
            "'cross-encoder' (the folder $ROWVOI_CROSS_ENCODER names where the server "
            "runs) or 'claude[:MODEL]'"
        )
    return value


#: ``rerank`` as the search tools take it (see :func:`_rerank_text`).
_RERANK = Inline(
    {"type": "string", "pattern": "^(cross-encoder|claude(:.+)?)$"},
    _rerank_text,
    description="rerank the candidates: cross-encoder (the ONNX cross-encoder in the "
    "folder $ROWVOI_CROSS_ENCODER names where the server runs) or claude[:MODEL] (needs "
    "rowvoi[claude] and ANTHROPIC_API_KEY there)",
)


@dataclass(frozen=True)
class ToolSpec:
    """One tool: the verb it runs and how its arguments travel.

    ``verb`` is the path of the verb's parser (``("search",)``; a verb with
    actions, such as ``graph``, lists them in ``actions`` and the tool takes
    an ``action`` property). ``hidden``: dests not offered (options that
    read files the agent names, or run code). ``inline``: dests taken as
    JSON (:class:`Inline`). ``corpus``: the dest naming the corpus, or
    corpora, restricted to the served ones. ``table``: the dest naming a
    table, replaced by the name of a ``--table``.
    """

    name: str
    verb: tuple[str, ...]
    description: str
    actions: tuple[str, ...] = ()
    hidden: frozenset[str] = frozenset()
    inline: Mapping[str, Inline] = field(default_factory=dict)
    corpus: str | None = "name"
    table: str | None = None
    writes: bool = False


_DOC = {"type": "object"}

#: The read-only tools, always served (``query`` only with ``--table``).
TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "search",
        ("search",),
        "Search a corpus (dense, lexical or hybrid) and return the ranked hits, each "
        "with its artifact_id, surface_kind, surface_index, score, text and metadata "
        "(hand a hit to expand for the passage around it).",
        inline={"filter": Inline({"type": "object"}), "rerank": _RERANK},
    ),
    ToolSpec(
        "discover",
        ("discover",),
        "Search one or more corpora and commit to the few results worth reading, or "
        "abstain (min_score: a floor, or 'auto' for the corpus's calibrated floor). "
        "disclose_level body also returns each result's file.",
        hidden=frozenset({"root", "disclose"}),
        inline={
            "min_score": Inline(
                {"anyOf": [*_FLOOR["anyOf"], {"type": "object", "additionalProperties": _FLOOR}]},
                _floor_text,
            ),
            "rerank": _RERANK,
        },
        corpus="names",
    ),
    ToolSpec(
        "expand",
        ("expand",),
        "The passage around a search hit: its neighbouring surfaces stitched in order "
        "(window: neighbours each side), or the whole artifact as indexed (whole).",
    ),
    ToolSpec(
        "graph",
        ("graph",),
        "A corpus's link graph. action neighbours: an artifact's links out and in; "
        "walk: search, then follow the links; text: the neighbourhood as "
        "SUBJECT --RELATION--> OBJECT lines for a prompt.",
        actions=("neighbours", "walk", "text"),
    ),
    ToolSpec(
        "query",
        ("query",),
        "Run a structured query (JSON, no code) over a table the server was started "
        "with (describe: its schema instead).",
        hidden=frozenset({"schema"}),
        inline={
            "query": Inline(
                _DOC,
                stdin=True,
                description="the query: an object such as "
                '{"operation": "select", "filters": {...}, "limit": 10}',
            ),
        },
        corpus=None,
        table="table",
    ),
    ToolSpec(
        "context",
        ("context",),
        "The cheapest set of retrieved chunks that supports every claim of an answer "
        "(weighted set cover; cost = tokens).",
        inline={
            "file": Inline(
                _DOC,
                stdin=True,
                prop="document",
                description='{"chunks": '
                '[{"id": ..., "tokens": ..., "text": ...}], "claims": [...], '
                '"support": {claim: [chunk ids]}}',
            ),
            "costs": Inline({"type": "object", "additionalProperties": {"type": "number"}}),
        },
        corpus=None,
    ),
    ToolSpec(
        "question",
        ("question",),
        "Rank clarifying questions by the bits they are expected to resolve about which "
        "candidate is meant, per unit cost; names the one to ask.",
        inline={
            "file": Inline(
                _DOC,
                stdin=True,
                prop="answers",
                description="each question mapped to the list of answers the candidates imply",
            ),
            "costs": Inline({"type": "object", "additionalProperties": {"type": "number"}}),
            "prior": Inline({"type": "array", "items": {"type": "number"}}),
        },
        corpus=None,
    ),
)

#: The tools served only with ``--allow-writes``.
WRITE_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "build",
        ("build",),
        "Build or update a corpus (incremental): give the source the first time "
        "(files or records).",
        hidden=frozenset({"fetcher"}),
        writes=True,
    ),
    ToolSpec(
        "maintain",
        ("maintain",),
        "Bring registered corpora up to date when their policy says so (or force), "
        "set a corpus's policy, or read its maintenance log.",
        writes=True,
    ),
)


def _table_spec(text: str) -> tuple[str, str]:
    """``--table NAME=PATH`` (a usage error unless NAME is a valid name)."""
    name, eq, path = text.partition("=")
    if not eq or not path:
        raise argparse.ArgumentTypeError(f"must be NAME=PATH, got {text!r}")
    return corpus_name(name), path


_table_spec.__name__ = "NAME=PATH"
_table_spec.rejects = ("plans", "plans=", "bad name=t.csv")  # type: ignore[attr-defined]


def _expand_parser() -> argparse.ArgumentParser:
    """The arguments of the ``expand`` tool, in the CLI's terms (no verb of
    the command line expands: the tool has this parser instead)."""
    p = argparse.ArgumentParser(prog="rowvoi mcp expand", add_help=False)
    p.add_argument("name", type=corpus_name, help="the corpus the hit came from")
    p.add_argument("artifact_id", help="the hit's artifact_id")
    p.add_argument("--surface-kind", help="the hit's surface_kind (with surface_index)")
    p.add_argument(
        "--surface-index",
        type=integer(0, INT_MAX),
        help="the hit's surface_index (with surface_kind); without them, the whole artifact",
    )
    p.add_argument(
        "--window",
        type=integer(0, INT_MAX),
        default=1,
        help="neighbours of the hit's kind taken on each side (default 1)",
    )
    p.add_argument(
        "--whole",
        action="store_true",
        help="every stored surface of the artifact, in order, instead of a window",
    )
    p.add_argument("--json", action="store_true", default=True, help=argparse.SUPPRESS)
    p.set_defaults(func=_cmd_expand, verb_parser=p)
    return p


def _cmd_expand(args: argparse.Namespace) -> int:
    from rowvoi.corpus import (
        SearchHit,
        expand,
        open_corpus,
        parent_policy,
        sentence_window_policy,
    )

    placed = (args.surface_kind is None, args.surface_index is None)
    if placed[0] != placed[1]:
        raise UsageError("give surface_kind and surface_index together (both from a hit)")
    whole = args.whole or args.surface_kind is None
    corpus = open_corpus(args.name)
    hit = SearchHit(
        args.artifact_id,
        args.surface_kind or "",
        0.0,
        "",
        source=args.name,
        surface_index=args.surface_index,
    )
    policy = parent_policy() if whole else sentence_window_policy(args.window)
    passage = expand(hit, corpus, policy=policy)
    if not passage.record_ids:
        raise CliError(
            f"corpus {args.name!r} stores no surface of artifact {args.artifact_id!r} "
            "(search for it first)"
        )
    doc = passage.to_dict()
    del doc["score"]  # an id was expanded, not a scored hit
    print_json({"corpus": args.name, **doc})
    return 0


# ------------------------------------------------------------------ schemas
def _subparsers(parser: argparse.ArgumentParser) -> Mapping[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices
    return {}


def _prop_name(action: argparse.Action) -> str:
    return action.dest


def _arg_schema(action: argparse.Action) -> dict[str, Any]:
    """The JSON Schema of one argparse argument: from its type's
    ``json_schema`` (the same bounds the type checks), its choices, its
    nargs/action, its help and default."""
    if isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction)):
        schema: dict[str, Any] = {"type": "boolean"}
    else:
        one = dict(getattr(action.type, "json_schema", None) or {"type": "string"})
        if action.choices is not None:
            one = {"type": "string", "enum": list(action.choices)}
        if isinstance(action, argparse._AppendAction) or action.nargs in ("+", "*"):
            schema = {"type": "array", "items": one}
            if action.nargs == "+":
                schema["minItems"] = 1
        else:
            schema = one
    if action.help and action.help is not argparse.SUPPRESS:
        schema["description"] = action.help.replace("%(default)s", str(action.default))
    elif isinstance(action.metavar, str):
        schema["description"] = action.metavar
    default = action.default
    if default is not False and isinstance(default, (str, int, float)):
        schema["default"] = default
    return schema


def _needed(action: argparse.Action) -> bool:
    """Whether the verb's parser requires the argument."""
    return bool(action.required) or (not action.option_strings and action.nargs not in ("?", "*"))


def _offered(action: argparse.Action, spec: ToolSpec) -> bool:
    return not (
        isinstance(
            action, (argparse._HelpAction, argparse._VersionAction, argparse._SubParsersAction)
        )
        or action.dest in ("json", argparse.SUPPRESS)
        or action.dest in spec.hidden
        or action.help is argparse.SUPPRESS
    )


@dataclass
class _Tool:
    """A tool as served: its spec, parsers and advertised schema."""

    spec: ToolSpec
    parsers: dict[str | None, list[argparse.ArgumentParser]]  # action -> parser chain
    schema: dict[str, Any]


class ToolServer:
    """The tools of ``rowvoi mcp``, free of the SDK.

    Parameters
    ----------
    verbs : Mapping[str, argparse.ArgumentParser]
        The verb parsers of the ``rowvoi`` command, by verb (the
        subparsers :func:`rowvoi.cli.main.build_parser` composes).
    corpora : Sequence[str]
        The corpora the tools may reach; empty: any corpus.
    tables : Mapping[str, str]
        The tables of the ``query`` tool, name -> path (none: no ``query``).
    allow_writes : bool
        Also serve ``build`` and ``maintain``.

    Examples
    --------
    >>> from rowvoi.cli.main import build_parser
    >>> server = ToolServer(verb_parsers(build_parser()))
    >>> [t["name"] for t in server.tools()]
    ['search', 'discover', 'expand', 'graph', 'context', 'question']
    >>> server.schema("search")["properties"]["k"]["maximum"]
    100000
    >>> server.call("search", {"name": "no such", "query": "x"})
    Traceback (most recent call last):
    ...
    rowvoi.cli.mcp.ToolError: search: name: corpus name 'no such': use 1-128 characters ...
    """

    def __init__(
        self,
        verbs: Mapping[str, argparse.ArgumentParser],
        corpora: Sequence[str] = (),
        tables: Mapping[str, str] | None = None,
        *,
        allow_writes: bool = False,
    ) -> None:
        self.corpora = tuple(dict.fromkeys(corpora))
        self.tables = dict(tables or {})
        self.allow_writes = allow_writes
        self._lock = threading.Lock()
        verbs = {**verbs, "expand": _expand_parser()}
        self._tools: dict[str, _Tool] = {}
        for spec in TOOLS + (WRITE_TOOLS if allow_writes else ()):
            if spec.table is not None and not self.tables:
                continue
            parser = verbs[spec.verb[0]]
            chains: dict[str | None, list[argparse.ArgumentParser]]
            if spec.actions:
                subs = _subparsers(parser)
                chains = {a: [parser, subs[a]] for a in spec.actions}
            else:
                chains = {None: [parser]}
            self._tools[spec.name] = _Tool(spec, chains, self._schema(spec, chains))

    # -- the table
    def tools(self) -> list[dict[str, Any]]:
        """The tools served: ``name``, ``description``, ``inputSchema``,
        ``readOnly``."""
        return [
            {
                "name": t.spec.name,
                "description": t.spec.description,
                "inputSchema": t.schema,
                "readOnly": not t.spec.writes,
            }
            for t in self._tools.values()
        ]

    def schema(self, name: str) -> dict[str, Any]:
        """The input schema of tool ``name``."""
        return self._tools[name].schema

    def _prop(self, spec: ToolSpec, action: argparse.Action) -> tuple[str, dict[str, Any]]:
        inline = spec.inline.get(action.dest)
        if inline is not None:
            schema = dict(inline.schema)
            text = inline.description or action.help
            if text and text is not argparse.SUPPRESS:
                schema["description"] = text
            return inline.prop or action.dest, schema
        schema = _arg_schema(action)
        if action.dest == spec.corpus and self.corpora:
            names = {"type": "string", "enum": list(self.corpora)}
            if schema.get("type") == "array":
                schema["items"] = names
            else:
                schema.update(names)
        if action.dest == spec.table:
            schema = {
                "type": "string",
                "enum": sorted(self.tables),
                "description": "the table (one the server was started with)",
            }
        return _prop_name(action), schema

    def _schema(
        self, spec: ToolSpec, chains: Mapping[str | None, list[argparse.ArgumentParser]]
    ) -> dict[str, Any]:
        props: dict[str, Any] = {}
        required: list[str] = []
        if spec.actions:
            props["action"] = {
                "type": "string",
                "enum": list(spec.actions),
                "description": "what to do",
            }
            required.append("action")
        per_action: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        for act, chain in chains.items():
            for parser in chain:
                for action in parser._actions:
                    if not _offered(action, spec):
                        continue
                    name, schema = self._prop(spec, action)
                    if act is not None and parser is chain[-1]:
                        per_action.setdefault(name, []).append((act, schema))
                        continue
                    if _needed(action) and name not in required:
                        required.append(name)
                    props.setdefault(name, schema)
        for name, entries in per_action.items():
            # an argument of some actions: one property; when the actions
            # differ on it (another default or meaning), each says its own
            schema = dict(entries[0][1])
            acts = [a for a, _ in entries]
            if any(s != entries[0][1] for _, s in entries[1:]):
                schema.pop("default", None)
                schema["description"] = "; ".join(
                    f"{a}: {s.get('description', '')}" for a, s in entries
                )
            elif len(acts) < len(chains):
                schema["description"] = (
                    f"({', '.join(acts)} only) " + schema.get("description", "")
                ).strip()
            props[name] = schema
        out: dict[str, Any] = {
            "type": "object",
            "properties": props,
            "additionalProperties": False,
        }
        if required:
            out["required"] = required
        return out

    # -- dispatch
    def call(self, name: str, arguments: Mapping[str, Any] | None) -> Any:
        """Run tool ``name`` with ``arguments``; returns its JSON result.

        Raises
        ------
        ToolError
            Anything that goes wrong, with a message saying what to do.
        """
        tool = self._tools.get(name) if isinstance(name, str) else None
        if tool is None:
            write = any(s.name == name for s in WRITE_TOOLS)
            raise ToolError(
                f"no tool {name!r}"
                + (
                    "; this server is read-only: restart it with rowvoi mcp --allow-writes "
                    "to build or maintain corpora"
                    if write
                    else f"; the tools are {', '.join(self._tools)}"
                )
            )
        try:
            return self._run(tool, dict(arguments or {}))
        except ToolError as exc:
            raise ToolError(f"{name}: {exc}") from None
        except (UsageError, argparse.ArgumentTypeError, argparse.ArgumentError) as exc:
            raise ToolError(f"{name}: {exc}") from None
        except (
            CliError,
            RvError,
            ValueError,
            TypeError,
            LookupError,
            OSError,
            RuntimeError,
            MemoryError,
            RecursionError,
        ) as exc:
            msg = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
            raise ToolError(f"{name}: {msg}") from None
        except Exception as exc:  # noqa: BLE001 -- never a crashed server
            raise ToolError(f"{name}: unexpected {type(exc).__name__}: {exc}") from None

    def _run(self, tool: _Tool, args: dict[str, Any]) -> Any:
        spec = tool.spec
        action = None
        if spec.actions:
            action = args.pop("action", None)
            if action not in spec.actions:
                raise ToolError(f"action must be one of {', '.join(spec.actions)}, not {action!r}")
        chain = tool.parsers[action]
        props = tool.schema["properties"]
        unknown = [k for k in args if k not in props]
        if unknown:
            raise ToolError(
                f"unknown argument(s) {', '.join(map(repr, unknown))}; this tool takes "
                + ", ".join(props)
            )
        ns = argparse.Namespace()
        stdin: str | None = None
        seen: set[str] = set()
        seen_dests: set[str] = set()
        for parser in chain:  # defaults first, as argparse sets them
            for act in parser._actions:
                if act.dest is not argparse.SUPPRESS:
                    setattr(ns, act.dest, act.default)
            for key, value in parser._defaults.items():
                setattr(ns, key, value)
        for parser in chain:
            for act in parser._actions:
                if not _offered(act, spec):
                    continue
                name, _ = self._prop(spec, act)
                if name in seen:  # a second flag of one dest (--no-hnsw): the first decides
                    continue
                seen.add(name)
                if name not in args or args[name] is None:
                    if _needed(act):
                        raise ToolError(f"{name} is required")
                    continue
                value = args[name]
                inline = spec.inline.get(act.dest)
                if inline is not None and inline.stdin:
                    seen_dests.add(act.dest)
                    stdin = json.dumps(value)
                    setattr(ns, act.dest, "-")
                    continue
                setattr(ns, act.dest, self._value(spec, act, name, value))
        extra = [k for k in args if k not in seen]
        if extra:
            raise ToolError(
                f"action {action!r} takes no {', '.join(map(repr, extra))}; it takes "
                + ", ".join(sorted(seen))
            )
        ns.json = True
        if stdin is None:
            return self._invoke(ns, None)
        try:
            return self._invoke(ns, stdin)
        except (UsageError, CliError) as exc:  # the verb names its file '-'
            where = next(
                (i.prop or d for d, i in spec.inline.items() if i.stdin and d in seen_dests),
                "-",
            )
            msg = str(exc)
            raise ToolError(f"{where}: {msg[3:]}" if msg.startswith("-: ") else msg) from None

    def _value(self, spec: ToolSpec, act: argparse.Action, name: str, value: Any) -> Any:
        """``value`` (JSON) as the verb's parser would have it: each item as
        text through the argument's own type, then its choices."""
        inline = spec.inline.get(act.dest)
        if isinstance(act, (argparse._StoreTrueAction, argparse._StoreFalseAction)):
            if not isinstance(value, bool):
                raise ToolError(f"{name} must be true or false, not {value!r}")
            return value if isinstance(act, argparse._StoreTrueAction) else not value
        many = isinstance(act, argparse._AppendAction) or act.nargs in ("+", "*")
        if many:
            if not isinstance(value, list) or (act.nargs == "+" and not value):
                raise ToolError(
                    f"{name} must be a list"
                    + (" of at least one item" if act.nargs == "+" else "")
                )
            return [self._one(spec, act, name, v, inline) for v in value]
        return self._one(spec, act, name, value, inline)

    def _one(
        self, spec: ToolSpec, act: argparse.Action, name: str, value: Any, inline: Inline | None
    ) -> Any:
        text = inline.to_text(value) if inline is not None else self._text(act, name, value)
        if act.dest == spec.table:
            if text not in self.tables:
                raise ToolError(
                    f"no table {text!r}; the tables are {', '.join(sorted(self.tables))}"
                )
            text = self.tables[text]
        parsed: Any = text
        if act.type is not None and callable(act.type) and act.dest != spec.table:
            try:
                parsed = act.type(text)
            except argparse.ArgumentTypeError as exc:
                raise ToolError(f"{name}: {exc}") from None
        if act.choices is not None and parsed not in act.choices:
            raise ToolError(f"{name}: {value!r} is not one of {', '.join(map(str, act.choices))}")
        if act.dest == spec.corpus and self.corpora:
            for corpus in parsed if isinstance(parsed, list) else [parsed]:
                if corpus not in self.corpora:
                    raise ToolError(
                        f"corpus {corpus!r} is not served; the corpora are "
                        f"{', '.join(self.corpora)}"
                    )
        return parsed

    @staticmethod
    def _text(act: argparse.Action, name: str, value: Any) -> str:
        """A JSON value as the command-line text the argument's type parses."""
        kind = (getattr(act.type, "json_schema", None) or {}).get("type", "string")
        if kind == "array":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ToolError(f"{name} must be a list of strings")
            bad = [v for v in value if "," in v]
            if bad:
                raise ToolError(f"{name}: {bad[0]!r}: an item cannot hold a comma")
            return ",".join(value)
        if kind in ("integer", "number"):
            ok = isinstance(value, int) if kind == "integer" else isinstance(value, (int, float))
            if isinstance(value, bool) or not ok:
                raise ToolError(
                    f"{name} must be {'an integer' if kind == 'integer' else 'a number'}"
                    f", not {value!r}"
                )
            if isinstance(value, float) and not math.isfinite(value):
                raise ToolError(f"{name} must be finite, not {value!r}")
            return str(value)
        if not isinstance(value, str):
            raise ToolError(f"{name} must be a string, not {type(value).__name__}")
        return value

    def _invoke(self, ns: argparse.Namespace, stdin: str | None) -> Any:
        """Run the verb, its output captured; its JSON is the result."""
        out, err = io.StringIO(), io.StringIO()
        with self._lock:
            saved_in = sys.stdin
            try:
                if stdin is not None:
                    sys.stdin = io.StringIO(stdin)
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                    code = int(ns.func(ns))
            finally:
                sys.stdin = saved_in
        text = out.getvalue()
        try:
            doc = json.loads(text) if text.strip() else None
        except json.JSONDecodeError:
            doc = {"output": text}
        notes = err.getvalue().strip()
        if code != 0:
            raise ToolError(
                (json.dumps(doc) if doc is not None else "failed")
                + (f" ({notes})" if notes else "")
            )
        if notes and isinstance(doc, dict):
            doc = {**doc, "warnings": notes.splitlines()}
        return doc


def verb_parsers(parser: argparse.ArgumentParser) -> Mapping[str, argparse.ArgumentParser]:
    """The verb parsers of the ``rowvoi`` command's parser, by verb.

    >>> from rowvoi.cli.main import build_parser
    >>> "search" in verb_parsers(build_parser())
    True
    """
    return _subparsers(parser)


# ------------------------------------------------------------------- server
_SURROGATE = re.compile("[\ud800-\udfff]")


def clean(doc: Any) -> Any:
    """``doc`` with every lone surrogate in its strings written as a
    visible escape (``\\udcff``): the protocol is UTF-8, and a string it
    cannot encode would fail the reply.

    >>> clean({"q": "a\\udcffb", "n": [1, "x"]})
    {'q': 'a\\\\udcffb', 'n': [1, 'x']}
    """
    if isinstance(doc, str):
        return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", doc)
    if isinstance(doc, dict):
        return {clean(k): clean(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [clean(v) for v in doc]
    return doc


async def serve(tools: ToolServer) -> None:  # pragma: no cover - run by the stdio tests
    """Serve ``tools`` over standard input and output with the MCP SDK's
    low-level server until the client closes the connection."""
    import anyio
    import mcp.types as types
    from mcp.server import Server
    from mcp.server.stdio import stdio_server

    from rowvoi import __version__

    listed = [
        types.Tool(
            name=t["name"],
            description=t["description"],
            input_schema=t["inputSchema"],
            annotations=types.ToolAnnotations(
                read_only_hint=t["readOnly"],
                destructive_hint=not t["readOnly"],
                open_world_hint=False,
            ),
        )
        for t in tools.tools()
    ]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    def run(name: str, arguments: Any) -> tuple[Any, str | None]:
        try:
            return tools.call(name, arguments), None
        except ToolError as exc:
            return None, str(exc)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            doc, error = await anyio.to_thread.run_sync(run, params.name, params.arguments)
        except Exception as exc:  # noqa: BLE001 -- never a crashed server
            doc, error = None, f"{params.name}: unexpected {type(exc).__name__}: {exc}"
        if error is not None:
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=clean(error))], is_error=True
            )
        doc = clean(doc)
        structured = doc if isinstance(doc, dict) else {"result": doc}
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(doc))],
            structured_content=structured,
        )

    server: Any = Server(
        SERVER_NAME,
        version=__version__,
        instructions="rowvoi: search and discover over local corpora, their link graphs, "
        "structured queries over tables, and value-of-information decisions "
        "(context, question). Results are JSON.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def _cmd_mcp(args: argparse.Namespace) -> int:
    try:
        import anyio
        import mcp  # noqa: F401
    except ImportError:
        raise CliError("rowvoi mcp needs the MCP SDK: pip install 'rowvoi[mcp]'") from None
    from rowvoi.corpus import CorpusStore, registry

    for name in args.corpus or ():
        missing = registry.get(name) is None and not CorpusStore.local(name).exists()
        if missing and not args.allow_writes:  # with writes, build may make it
            raise CliError(f"no corpus {name!r} (see rowvoi ls)")
    tables: dict[str, str] = {}
    for name, path in args.table or ():
        open_input(path, f"--table {name}").close()
        tables[name] = path
    tools = ToolServer(args.verbs, args.corpus or (), tables, allow_writes=args.allow_writes)
    saved = sys.stdout
    sys.stdout = sys.__stdout__  # the protocol's; the SDK diverts descriptor 1
    try:
        anyio.run(serve, tools)
    finally:
        sys.stdout = saved
    return 0


def add_parsers(sub: Any) -> None:
    """Register ``mcp`` on the ``rowvoi`` subparsers (see the module's
    example). Its tools are the verbs registered on ``sub`` (register it
    last)."""
    p = sub.add_parser(
        "mcp",
        help="serve rowvoi's verbs to an MCP client (stdio)",
        description="Serve search, discover, expand, graph, query, context and question "
        "as the tools of an MCP server over standard input and output (the "
        "official mcp SDK: pip install 'rowvoi[mcp]'). Each tool's input schema is "
        "generated from the verb's own arguments, and results are the verb's "
        "--json output. Read-only unless --allow-writes (which adds build and "
        "maintain). Every failure is a tool error; the server keeps serving. "
        "Exit 1 for a --corpus that does not exist or a --table file that cannot "
        "be read.",
        epilog='MCP client config: {"mcpServers": {"rowvoi": {"command": "rowvoi", '
        '"args": ["mcp", "--corpus", "notes"]}}}',
    )
    p.add_argument(
        "--corpus",
        metavar="NAME",
        type=corpus_name,
        action="append",
        help="a corpus the tools may reach (repeatable; default: every corpus)",
    )
    p.add_argument(
        "--table",
        metavar="NAME=PATH",
        type=_table_spec,
        action="append",
        help="a CSV or Parquet table the query tool may run over, by NAME "
        "(repeatable; none: no query tool)",
    )
    p.add_argument(
        "--allow-writes",
        action="store_true",
        help="also serve the build and maintain tools (default: read-only)",
    )
    p.set_defaults(func=_cmd_mcp, verb_parser=p, verbs=sub.choices)
