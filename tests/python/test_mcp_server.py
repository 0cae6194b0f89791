"""``rowvoi mcp``: the verbs as MCP tools, tested with the SDK's own client
over stdio (the console script spawned, as an MCP client spawns it) and
in-process (:class:`rowvoi.cli.mcp.ToolServer`)."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")
import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

from rowvoi.cli._common import search_k
from rowvoi.cli.main import build_parser, main
from rowvoi.cli.mcp import TOOLS, ToolError, ToolServer, verb_parsers
from rowvoi.corpus import DISCLOSURE_LEVELS

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
RECORDS = [
    {"id": "wings", "text": "Lift and drag of a thin wing at low speed. " * 6},
    {"id": "flaps", "text": "Flaps raise the lift of a wing on landing.", "parent": "wings"},
    {"id": "pipes", "text": "Heat transfer to a turbulent fluid in a pipe."},
]
SUPPORT = {
    "chunks": [{"id": "a", "tokens": 50}, {"id": "b", "tokens": 10}, {"id": "c", "tokens": 10}],
    "claims": ["x", "y"],
    "support": {"x": ["a", "b"], "y": ["a", "c"]},
}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A rowvoi home with corpora 'aero' (records with PARENT links) and
    'notes' (files), and a CSV table."""
    tmp = tmp_path_factory.mktemp("mcp")
    saved = os.environ.get("ROWVOI_HOME")
    os.environ["ROWVOI_HOME"] = str(tmp / "home")
    try:
        recs = tmp / "aero.jsonl"
        recs.write_text("\n".join(json.dumps(r) for r in RECORDS))
        notes = tmp / "notes"
        notes.mkdir()
        (notes / "wing.md").write_text("Lift and drag of a thin wing at low speed.")
        (notes / "pipe.md").write_text("Heat transfer to a turbulent fluid in a pipe.")
        assert (
            main(
                [
                    "build",
                    "aero",
                    "--records",
                    str(recs),
                    "--embedder",
                    "hashing",
                    "--edge-fields",
                    "parent",
                    "--chunk-size",
                    "60",
                    "--overlap",
                    "10",
                    "--json",
                ]
            )
            == 0
        )
        assert (
            main(["build", "notes", "--files", str(notes), "--embedder", "hashing", "--json"]) == 0
        )
        (tmp / "plans.csv").write_text("plan,seats\npro,12\nfree,1\nteam,40\n")
    finally:
        if saved is None:
            del os.environ["ROWVOI_HOME"]
        else:
            os.environ["ROWVOI_HOME"] = saved
    return tmp


def _env(home: Path) -> dict[str, str]:
    return dict(
        os.environ,
        ROWVOI_HOME=str(home / "home"),
        PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        SKBUILD_EDITABLE_VERBOSE="0",
    )


def _session(home: Path, command: str, args: list[str], body: Any) -> Any:
    """Spawn the server with the SDK's stdio client, initialize, run
    ``body(session)``."""
    params = StdioServerParameters(command=command, args=args, env=_env(home))

    async def go() -> Any:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            init = await session.initialize()
            assert init.server_info.name == "rowvoi"
            return await body(session)

    return anyio.run(go)


async def _ok(session: ClientSession, name: str, args: dict[str, Any]) -> Any:
    r = await session.call_tool(name, args)
    assert not r.is_error, (name, r.content[0].text)
    doc = json.loads(r.content[0].text)
    assert r.structured_content == (doc if isinstance(doc, dict) else {"result": doc})
    return doc


async def _err(session: ClientSession, name: str, args: dict[str, Any]) -> str:
    r = await session.call_tool(name, args)
    assert r.is_error, (name, args, r.content[0].text)
    return str(r.content[0].text)


def test_stdio_every_tool_and_its_errors(home: Path) -> None:
    """Spawn ``rowvoi mcp`` (the console script), list the tools and their
    schemas, call each tool on real data, and check that bad calls are tool
    errors after which the server still serves."""
    rowvoi = str(BIN / "rowvoi")
    args = [
        "mcp",
        "--corpus",
        "aero",
        "--corpus",
        "notes",
        "--table",
        f"plans={home / 'plans.csv'}",
    ]

    async def body(s: ClientSession) -> None:
        tools = {t.name: t for t in (await s.list_tools()).tools}
        assert sorted(tools) == sorted(
            ["search", "discover", "expand", "graph", "query", "context", "question"]
        )
        assert all(t.annotations.read_only_hint for t in tools.values())
        k = tools["search"].input_schema["properties"]["k"]
        assert (k["type"], k["minimum"], k["maximum"]) == (
            "integer",
            1,
            search_k().json_schema["maximum"],
        )
        assert tools["search"].input_schema["properties"]["name"]["enum"] == ["aero", "notes"]
        disc = tools["discover"].input_schema["properties"]
        assert disc["disclose_level"]["enum"] == list(DISCLOSURE_LEVELS)
        assert "root" not in disc and "disclose" not in disc
        assert tools["graph"].input_schema["properties"]["action"]["enum"] == [
            "neighbours",
            "walk",
            "text",
        ]
        assert tools["query"].input_schema["properties"]["table"]["enum"] == ["plans"]

        doc = await _ok(
            s, "search", {"name": "aero", "query": "lift wing", "k": 3, "mode": "lexical"}
        )
        assert doc["hits"][0]["artifact_id"] in ("wings", "flaps") and len(doc["hits"]) <= 3
        hit = next(h for h in doc["hits"] if h["artifact_id"] == "wings")
        doc = await _ok(
            s,
            "discover",
            {
                "names": ["notes"],
                "query": "thin wing drag",
                "mode": "lexical",
                "disclose_level": "body",
            },
        )
        top = doc["results"][0]
        assert top["artifact_id"] == "wing.md" and top["body"].startswith("Lift and drag")
        doc = await _ok(s, "discover", {"names": ["notes"], "query": "wing", "min_score": "auto"})
        assert doc["signals"]["min_score"] is None  # no floor calibrated: a warning
        assert any("calibrat" in w for w in doc["warnings"])
        doc = await _ok(
            s,
            "expand",
            {
                "name": "aero",
                "artifact_id": "wings",
                "surface_kind": hit["surface_kind"],
                "surface_index": hit["surface_index"],
                "window": 1,
            },
        )
        assert hit["text"] in doc["text"] and 2 <= len(doc["record_ids"]) <= 3
        whole = await _ok(s, "expand", {"name": "aero", "artifact_id": "wings"})
        assert len(whole["text"]) > len(doc["text"]) and "Lift and drag" in whole["text"]
        doc = await _ok(s, "graph", {"action": "neighbours", "name": "aero", "id": "wings"})
        assert doc["in"] == [{"type": "PARENT", "node": "flaps", "dangling": False}]
        doc = await _ok(
            s,
            "graph",
            {
                "action": "walk",
                "name": "aero",
                "query": "lift",
                "policy": "reverse-deps",
                "seed": ["wings"],
                "edge_type": "PARENT",
            },
        )
        depth = {h["artifact_id"]: h["metadata"]["walk_depth"] for h in doc["hits"]}
        assert depth["flaps"] == 1 and set(depth) <= {"flaps", "wings"}
        doc = await _ok(s, "graph", {"action": "text", "name": "aero", "ids": ["flaps"]})
        assert doc["lines"] == ["flaps --PARENT--> wings"]
        doc = await _ok(
            s,
            "query",
            {
                "table": "plans",
                "query": {"operation": "filter", "filters": {"seats": {"$gte": 10}}},
            },
        )
        assert sorted(r["plan"] for r in doc["records"]) == ["pro", "team"]
        doc = await _ok(s, "query", {"table": "plans", "describe": True})
        assert set(doc["columns"]) == {"plan", "seats"}
        doc = await _ok(s, "context", {"document": SUPPORT})
        assert sorted(doc["chunks"]) == ["b", "c"] and doc["cost"] == 20.0
        assert doc["coverage"] == 1.0
        doc = await _ok(
            s, "context", {"document": SUPPORT, "costs": {"b": 100}, "strategy": "exact"}
        )
        assert doc["chunks"] == ["a"] and doc["cost"] == 50.0
        doc = await _ok(
            s, "question", {"answers": {"size": ["s", "m", "l"], "colour": ["red", "red", "blue"]}}
        )
        assert doc["best"] == "size" and doc["questions"][0]["question"] == "size"

        # tool errors, each saying what to do; the server keeps serving
        assert "must be an integer in 1 .. 100000" in await _err(
            s, "search", {"name": "aero", "query": "x", "k": 0}
        )
        assert "must be an integer in 1 .. 100000" in await _err(
            s, "search", {"name": "aero", "query": "x", "k": 10**40}
        )
        assert "not served; the corpora are aero, notes" in await _err(
            s, "search", {"name": "ghost", "query": "x"}
        )
        assert "unknown argument(s) 'zzz'" in await _err(
            s, "search", {"name": "aero", "query": "x", "zzz": 1}
        )
        assert "query is required" in await _err(s, "search", {"name": "aero"})
        assert "not one of" in await _err(
            s, "search", {"name": "aero", "query": "x", "mode": "fuzzy"}
        )
        assert "must be an integer" in await _err(
            s, "search", {"name": "aero", "query": "x", "k": "5"}
        )
        assert "reverse-deps needs --seed" in await _err(
            s, "graph", {"action": "walk", "name": "aero", "query": "x", "policy": "reverse-deps"}
        )
        assert "action 'neighbours' takes no 'k'" in await _err(
            s, "graph", {"action": "neighbours", "name": "aero", "id": "wings", "k": 2}
        )
        assert "neither an artifact" in await _err(
            s, "graph", {"action": "neighbours", "name": "aero", "id": "nope"}
        )
        assert "document: expected an object" in await _err(
            s, "context", {"document": {"chunks": []}}
        )
        assert "no table" in await _err(s, "query", {"table": "../etc", "describe": True})
        assert "no tool 'nope'" in await _err(s, "nope", {})
        doc = await _ok(s, "search", {"name": "notes", "query": "pipe", "mode": "lexical"})
        assert doc["hits"][0]["artifact_id"] == "pipe.md"

    _session(home, rowvoi, args, body)


def test_read_only_unless_allow_writes(home: Path, tmp_path: Path) -> None:
    """build and maintain exist only with --allow-writes."""
    rowvoi = str(BIN / "rowvoi")
    recs = tmp_path / "more.jsonl"
    recs.write_text(json.dumps({"id": "m1", "text": "supersonic shock waves"}))

    async def read_only(s: ClientSession) -> None:
        names = {t.name for t in (await s.list_tools()).tools}
        assert "build" not in names and "maintain" not in names and "query" not in names
        msg = await _err(s, "build", {"name": "more", "records": str(recs)})
        assert "read-only" in msg and "--allow-writes" in msg

    _session(home, rowvoi, ["mcp"], read_only)

    async def writes(s: ClientSession) -> None:
        tools = {t.name: t for t in (await s.list_tools()).tools}
        assert tools["build"].annotations.read_only_hint is False
        assert "fetcher" not in tools["build"].input_schema["properties"]
        doc = await _ok(s, "build", {"name": "more", "records": str(recs), "embedder": "hashing"})
        assert doc["corpus"] == "more" and doc["n_new"] == 1
        doc = await _ok(s, "search", {"name": "more", "query": "shock", "mode": "lexical"})
        assert doc["hits"][0]["artifact_id"] == "m1"
        doc = await _ok(s, "maintain", {"all": True, "dry_run": True})
        assert "results" in doc
        assert "give a corpus NAME or --all" in await _err(s, "maintain", {})

    _session(home, rowvoi, ["mcp", "--allow-writes"], writes)


def test_readme_registration_line(home: Path) -> None:
    """The README's mcpServers entry, launched exactly as written (the
    command found on PATH, as an MCP client finds it)."""
    readme = (ROOT / "README.md").read_text()
    start = readme.index("## Serve rowvoi to an MCP client")
    entry = json.loads(re.search(r"```json\n(.*?)\n```", readme[start:], re.S).group(1))
    server = entry["mcpServers"]["rowvoi"]
    assert server["command"] == "rowvoi" and server["args"][0] == "mcp"

    async def body(s: ClientSession) -> None:
        tools = {t.name: t for t in (await s.list_tools()).tools}
        assert tools["search"].input_schema["properties"]["name"]["enum"] == ["notes"]
        doc = await _ok(
            s, "discover", {"names": ["notes"], "query": "turbulent pipe heat", "mode": "lexical"}
        )
        assert doc["results"][0]["artifact_id"] == "pipe.md"

    _session(home, server["command"], server["args"], body)


# ----------------------------------------------------------------- in-process
def _server(**kw: Any) -> ToolServer:
    return ToolServer(verb_parsers(build_parser()), **kw)


def test_schemas_come_from_the_cli_parsers() -> None:
    """Every property of every tool is an argument of the verb's parser (or
    an inline document), with the bounds and choices of that argument."""
    verbs = verb_parsers(build_parser())
    server = _server(tables={"t": "t.csv"}, allow_writes=True)
    checked = 0
    for spec in TOOLS:
        parsers = [verbs[spec.verb[0]]] if spec.verb[0] in verbs else []
        props = server.schema(spec.name)["properties"]
        for parser in parsers:
            subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
            for p in [parser] + [subs[0].choices[a] for a in spec.actions]:
                for action in p._actions:
                    if action.dest not in props or action.dest in spec.inline:
                        continue
                    prop = props[action.dest]
                    bounds = getattr(action.type, "json_schema", None)
                    if bounds and bounds.get("type") in ("integer", "number"):
                        for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
                            if key in bounds:
                                assert prop[key] == bounds[key], (spec.name, action.dest)
                        checked += 1
                    if action.choices is not None and spec.name != "query":
                        assert prop["enum"] == list(action.choices), (spec.name, action.dest)
                        checked += 1
    assert checked >= 20


def test_bad_values_are_refused_as_the_cli_refuses_them() -> None:
    """Each number option of search/discover/graph refuses, as a tool error,
    a value just outside its type's range -- the type's own message."""
    server = _server()
    base = {
        "search": {"name": "aero", "query": "q"},
        "discover": {"names": ["aero"], "query": "q"},
        "graph": {"action": "walk", "name": "aero", "query": "q"},
    }
    tried = 0
    for tool, args in base.items():
        for prop, schema in server.schema(tool)["properties"].items():
            if schema.get("type") not in ("integer", "number"):
                continue
            low = schema.get("minimum", schema.get("exclusiveMinimum"))
            if low is None:
                continue
            bad = low if "exclusiveMinimum" in schema else low - 1
            if tool == "graph" and prop not in ("k", "budget", "depth"):
                continue
            with pytest.raises(ToolError, match=f"{prop}: must be"):
                server.call(tool, {**args, prop: bad})
            tried += 1
    assert tried >= 6


def test_hostile_arguments_never_escape_as_exceptions() -> None:
    server = _server(corpora=["aero"])
    hostile: list[tuple[str, Any]] = [
        ("search", {"name": ["aero"], "query": "x"}),
        ("search", {"name": "aero", "query": {"$gt": 1}}),
        ("search", {"name": "aero", "query": "x", "k": float("nan")}),
        ("search", {"name": "aero", "query": "x", "filter": "not an object"}),
        ("search", {"name": "aero", "query": "x", "surfaces": ["a,b"]}),
        ("discover", {"names": "aero", "query": "x"}),
        ("discover", {"names": ["aero"], "query": "x", "min_score": [1]}),
        ("graph", {"name": "aero"}),
        ("graph", {"action": None, "name": "aero"}),
        ("context", {"document": "x" * 10}),
        ("question", {"answers": {"q": "not a list"}}),
        ("question", {"answers": {"q": ["a", "b"]}, "prior": [float("inf"), 1]}),
        ("expand", {"name": "aero", "artifact_id": "x", "surface_index": -1}),
        ("expand", {"name": "aero", "artifact_id": "x", "surface_kind": "chunk"}),
        ("search", {"name": "aero", "query": "\ud800", "mode": "lexical"}),
        ("search", None),
        (None, {}),  # type: ignore[list-item]
    ]
    for name, args in hostile:
        with pytest.raises(ToolError) as caught:
            server.call(name, args)
        assert str(caught.value), (name, args)


def test_mcp_verb_refuses_an_unknown_corpus_and_table(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("ROWVOI_HOME", str(tmp_path))
    assert main(["mcp", "--corpus", "ghost"]) == 1
    assert "no corpus 'ghost'" in capsys.readouterr().err
    assert main(["mcp", "--table", f"t={tmp_path / 'missing.csv'}"]) == 1
    assert "no such file" in capsys.readouterr().err
    assert main(["mcp", "--table", "oops"]) == 2
