"""The ``rowvoi graph`` verb: a corpus's link graph from the shell.

``rowvoi graph NAME neighbours ID`` lists an artifact's links (out and
in, with types, fan-in and dangling targets); ``rowvoi graph NAME walk
QUERY`` runs :func:`~rowvoi.graph.traverse` on the corpus (collapsed-tree
or reverse-dependency policy) and prints hits like ``rowvoi search``;
``rowvoi graph NAME text ID...`` prints the neighbourhood as
``SUBJECT --RELATION--> OBJECT`` lines (:func:`~rowvoi.graph.graph_to_text`).
Every action takes ``--json``. Exit codes follow :mod:`rowvoi.cli.main`: 0 ok,
1 a well-formed request that fails (no such corpus, an id the graph does
not have), 2 a malformed argument.

Edges get into a corpus at build time: ``rowvoi build NAME ...
--edge-fields parent,links`` (see :mod:`rowvoi.corpus.indexing.edges`).

Examples
--------
>>> import os, tempfile, pathlib, json, contextlib, io
>>> os.environ["ROWVOI_HOME"] = tempfile.mkdtemp()
>>> recs = pathlib.Path(tempfile.mkdtemp()) / "notes.jsonl"
>>> _ = recs.write_text("\\n".join(json.dumps(r) for r in [
...     {"id": "wings", "text": "lift and drag of wings"},
...     {"id": "flaps", "text": "flaps raise lift", "parent": "wings"}]))
>>> from rowvoi.cli.main import main
>>> with contextlib.redirect_stdout(io.StringIO()):
...     rc = main(["build", "aero", "--records", str(recs), "--embedder", "hashing",
...                "--edge-fields", "parent"])
>>> rc
0
>>> with contextlib.redirect_stdout(io.StringIO()) as out:
...     rc = main(["graph", "aero", "neighbours", "wings", "--json"])
>>> rc, json.loads(out.getvalue())["in"]
(0, [{'type': 'PARENT', 'node': 'flaps', 'dangling': False}])
>>> del os.environ["ROWVOI_HOME"]
"""

from __future__ import annotations

import argparse
from typing import Any

from rowvoi.cli._common import (
    INT_MAX,
    CliError,
    UsageError,
    corpus_name,
    integer,
    name_list,
    print_hits,
    print_json,
    printable,
)
from rowvoi.corpus import open_corpus
from rowvoi.graph import (
    CorpusGraph,
    collapsed_tree_policy,
    graph_to_text,
    reverse_dependency_policy,
    traverse,
)

__all__ = ["add_parsers"]


def _graph(name: str) -> Any:
    return CorpusGraph(open_corpus(name))


def _node(g: Any, text: str) -> Any:
    if text in g:
        return text
    raise CliError(
        f"{text!r} is neither an artifact of corpus {g.source!r} nor a link "
        "target (see rowvoi search, or rowvoi graph NAME neighbours on an id)"
    )


def _label(v: Any) -> Any:
    return list(v) if isinstance(v, tuple) else v


def _cmd_neighbours(args: argparse.Namespace) -> int:
    g = _graph(args.name)
    node = _node(g, args.id)
    out = [
        {"type": e.type, "node": _label(e.dst), "dangling": g.is_dangling(e.dst)}
        for e in g.edges_of(node, "out", args.edge_type)
    ]
    inc = [
        {"type": e.type, "node": _label(e.src), "dangling": False}
        for e in g.edges_of(node, "in", args.edge_type)
    ]
    doc = {
        "corpus": args.name,
        "id": node,
        "dangling": g.is_dangling(node),
        "fan_in": g.fan_in(node, args.edge_type),
        "out": out,
        "in": inc,
    }
    if args.json:
        print_json(doc)
        return 0
    what = " (dangling: not an artifact of the corpus)" if doc["dangling"] else ""
    print(f"{printable(node)}{what}: {len(out)} out, {len(inc)} in (fan-in {doc['fan_in']})")
    for e in out:
        print(
            f"  --{printable(e['type'])}--> {printable(e['node'])}"
            + ("  (dangling)" if e["dangling"] else "")
        )
    for e in inc:
        print(f"  <--{printable(e['type'])}-- {printable(e['node'])}")
    return 0


def _cmd_walk(args: argparse.Namespace) -> int:
    g = _graph(args.name)
    if args.policy == "reverse-deps":
        if not args.seed:
            raise UsageError(
                "--policy reverse-deps needs --seed ID (repeatable): the "
                "artifacts whose dependents to walk"
            )
        policy = reverse_dependency_policy(seeds=args.seed, edge_type=args.edge_type or "REF")
    else:
        if args.seed:
            raise UsageError(
                "--seed goes with --policy reverse-deps (collapsed-tree seeds on the search)"
            )
        kw: dict[str, Any] = {}
        if args.summary_kinds:
            kw["summary_kinds"] = args.summary_kinds
        if args.leaf_kinds:
            kw["leaf_kinds"] = args.leaf_kinds
        policy = collapsed_tree_policy(child_edge_type=args.edge_type or "PARENT", **kw)
    hits = traverse(
        args.query, g, policy=policy, max_depth=args.depth, node_budget=args.budget, k=args.k
    )
    if args.json:
        print_json(
            {
                "corpus": args.name,
                "query": args.query,
                "policy": args.policy,
                "hits": [h.to_dict() for h in hits],
                "reason": hits.reason,
            }
        )
        return 0
    print_hits(
        hits,
        lambda h: (
            f"depth {h.metadata.get('walk_depth')}"
            + (f" via {h.metadata['seed']}" if "seed" in h.metadata else "")
        ),
    )
    return 0


def _cmd_text(args: argparse.Namespace) -> int:
    g = _graph(args.name)
    ids = [_node(g, i) for i in args.ids]
    res = graph_to_text(
        g,
        ids,
        depth=args.depth,
        max_edges=args.max_edges,
        max_edges_per_subject=args.max_edges_per_subject,
        bridge_edge_types=args.bridge or (),
        aliases=args.aliases,
    )
    if args.json:
        print_json(
            {
                "corpus": args.name,
                "ids": ids,
                "lines": res.lines,
                "depths": res.depths,
                "aliases": {k: _label(v) for k, v in res.aliases.items()}
                if args.aliases
                else None,
            }
        )
        return 0
    if args.aliases:
        for k, v in res.aliases.items():
            print(f"# {printable(k)} = {printable(v)}")
    for line in res.lines or ["(no edges)"]:
        print(printable(line))
    return 0


def _no_action(args: argparse.Namespace) -> int:
    raise UsageError("give an action: neighbours ID, walk QUERY or text ID...")


def add_parsers(sub: Any) -> None:
    """Register ``rowvoi graph`` on the main parser's subparsers.

    >>> sub = argparse.ArgumentParser(prog="rowvoi").add_subparsers()
    >>> add_parsers(sub); print(sub.choices["graph"].format_usage().strip())
    usage: rowvoi graph [-h] NAME ACTION ...
    """
    p = sub.add_parser(
        "graph",
        help="a corpus's link graph: neighbours, walks, text for prompts",
        description="The links of corpus NAME (written at build time: rowvoi build NAME "
        "... --edge-fields parent,links). Dangling links (targets that are not "
        "items of the corpus) are kept and shown, never returned by a walk. "
        "Exit 1 for an unknown corpus or id, 2 for a malformed argument.",
        epilog="examples: rowvoi graph notes neighbours wing.md; rowvoi graph notes walk "
        "'lift' --depth 2; rowvoi graph notes text wing.md --depth 2 --max-edges 10",
    )
    p.add_argument("name", metavar="NAME", type=corpus_name, help="corpus name")
    p.set_defaults(func=_no_action, verb_parser=p)
    acts = p.add_subparsers(dest="action", metavar="ACTION")
    _add_neighbours(acts)
    _add_walk(acts)
    _add_text(acts)


def _add_neighbours(acts: Any) -> None:
    """Add ``rowvoi graph NAME neighbours`` to the actions of ``rowvoi graph``."""
    a = acts.add_parser(
        "neighbours",
        help="an item's links, out and in",
        description="The links of item ID: out-links (with dangling "
        "targets marked), in-links and fan-in.",
    )
    a.add_argument("id", metavar="ID", help="an artifact id of the corpus")
    a.add_argument("--edge-type", metavar="TYPE", help="only links of this type")
    a.add_argument("--json", action="store_true", help="print JSON for programs")
    a.set_defaults(func=_cmd_neighbours, verb_parser=a)


def _add_walk(acts: Any) -> None:
    """Add ``rowvoi graph NAME walk`` to the actions of ``rowvoi graph``."""
    a = acts.add_parser(
        "walk",
        help="search, then walk the links (traverse)",
        description="Walk from QUERY. collapsed-tree (default): the best "
        "summary surfaces route to the best leaf chunks of their "
        "item and of its children (items whose PARENT link "
        "points at it). reverse-deps: from --seed items, walk "
        "to the items linking to them (REF links), scored by "
        "similarity to QUERY. Hits carry their walk depth and "
        "seed.",
    )
    a.add_argument("query", metavar="QUERY")
    a.add_argument(
        "--policy",
        choices=("collapsed-tree", "reverse-deps"),
        default="collapsed-tree",
        help="the walk (default collapsed-tree)",
    )
    a.add_argument(
        "--seed",
        metavar="ID",
        action="append",
        help="with reverse-deps: a start item (repeatable)",
    )
    a.add_argument(
        "--edge-type",
        metavar="TYPE",
        help="links to follow: default PARENT (collapsed-tree, child -> parent) "
        "or REF (reverse-deps)",
    )
    a.add_argument(
        "--summary-kinds",
        type=name_list,
        metavar="K1,K2",
        help="collapsed-tree: surface kinds that route (default description, "
        "synopsis, capability, document)",
    )
    a.add_argument(
        "--leaf-kinds",
        type=name_list,
        metavar="K1,K2",
        help="collapsed-tree: surface kinds returned (default chunk, readme_chunk)",
    )
    a.add_argument(
        "--depth", type=integer(0, INT_MAX), default=2, help="hops from a seed, >= 0 (default 2)"
    )
    a.add_argument(
        "--budget",
        type=integer(1, INT_MAX),
        default=64,
        help="nodes visited, at most, >= 1 (default 64)",
    )
    a.add_argument(
        "--k", type=integer(1, INT_MAX), default=10, help="hits to show, >= 1 (default 10)"
    )
    a.add_argument("--json", action="store_true", help="print JSON for programs")
    a.set_defaults(func=_cmd_walk, verb_parser=a, edge_type=None)


def _add_text(acts: Any) -> None:
    """Add ``rowvoi graph NAME text`` to the actions of ``rowvoi graph``."""
    a = acts.add_parser(
        "text",
        help="the neighbourhood as SUBJECT --RELATION--> OBJECT lines",
        description="Facts for a prompt: the links around ID... breadth "
        "first, one line each, within the edge budgets.",
    )
    a.add_argument("ids", metavar="ID", nargs="+", help="start items")
    a.add_argument(
        "--depth",
        type=integer(0, INT_MAX),
        default=3,
        help="items within DEPTH-1 hops are expanded (default 3)",
    )
    a.add_argument(
        "--max-edges", type=integer(0, INT_MAX), default=25, help="lines, at most (default 25)"
    )
    a.add_argument(
        "--max-edges-per-subject",
        type=integer(1, INT_MAX),
        metavar="N",
        help="lines with one subject, at most",
    )
    a.add_argument(
        "--bridge", type=name_list, metavar="T1,T2", help="link types followed but never printed"
    )
    a.add_argument(
        "--aliases", action="store_true", help="print N1, N2, ... for items (with the map)"
    )
    a.add_argument("--json", action="store_true", help="print JSON for programs")
    a.set_defaults(func=_cmd_text, verb_parser=a)
