"""The Python package keeps its layers: imports run downhill only.

The test reads the package's source (it imports nothing of rowvoi) and
builds the graph of module-level imports between rowvoi's modules:

* no import cycle among rowvoi's modules at module level;
* the ground floor (``errors``, ``_validate``, ...) imports nothing of
  rowvoi but the ground floor and the compiled modules, not even inside a
  function;
* the pandas base (``frame``) never imports the set cover solver, and
  ``ml`` and ``policies`` do not import each other both ways;
* the command line (``rowvoi.cli``) is the top floor: no library module
  imports it, and each verb module imports only its shared module
  (``rowvoi.cli._common``), never ``main`` or another verb module, not even
  inside a function.

Cycles are checked twice: among the imports that run (module level), and
among those plus the imports under ``if TYPE_CHECKING:`` (a cycle there is
a layering knot for readers and type checkers even though it never runs; it
is how ``ml`` and ``policies`` were tied). An import inside a function body
is left out of the cycle checks (it runs late, on first use), but counts
for the ground floor, for ``frame`` and for the command line.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python" / "rowvoi"

#: Modules that sit at the bottom: they may import each other and the
#: compiled extension modules, nothing else of rowvoi.
GROUND_FLOOR = {
    "rowvoi.errors",
    "rowvoi._validate",
    "rowvoi._atomic",
    "rowvoi.index._rwlock",
}


def _compiled_modules() -> set[str]:
    """cython/[PACKAGE/]NAME.pyx is the module rowvoi.[PACKAGE.]NAME."""
    cython = ROOT / "cython"
    return {
        ".".join(("rowvoi", *p.relative_to(cython).with_suffix("").parts))
        for p in cython.rglob("*.pyx")
    }


def _source_modules(package: Path) -> dict[str, tuple[Path, bool]]:
    """module name -> (file, is a package __init__)."""
    out = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        out[".".join(parts)] = (path, is_pkg)
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(
    name: str, path: Path, is_pkg: bool, known: set[str], typing: bool
) -> tuple[set[str], set[str]]:
    """(module-level imports, imports inside functions) of rowvoi modules.

    ``from rowvoi import x`` counts as an import of ``rowvoi.x`` when that is
    a module, else of the package ``rowvoi`` itself (a re-exported name).
    With ``typing``, imports under ``if TYPE_CHECKING:`` count as well.
    """
    top: set[str] = set()
    late: set[str] = set()

    def target(node: ast.ImportFrom) -> str | None:
        if node.level:
            base = name.split(".") if is_pkg else name.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            return ".".join(base + ([node.module] if node.module else []))
        return node.module

    def visit(body: list[ast.stmt], at_top: bool) -> None:
        for node in body:
            into = top if at_top else late
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name == "rowvoi" or alias.name.startswith("rowvoi."):
                        into.add(alias.name)
            elif isinstance(node, ast.ImportFrom):
                base = target(node)
                if base and (base == "rowvoi" or base.startswith("rowvoi.")):
                    for alias in node.names:
                        full = f"{base}.{alias.name}"
                        into.add(full if full in known else base)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(node.body, False)
            elif isinstance(node, ast.ClassDef):
                visit(node.body, at_top)
            elif isinstance(node, ast.If):
                if typing or not _is_type_checking(node.test):
                    visit(node.body, at_top)
                visit(node.orelse, at_top)
            elif isinstance(node, ast.Try):
                visit(node.body, at_top)
                for handler in node.handlers:
                    visit(handler.body, at_top)
                visit(node.orelse, at_top)
                visit(node.finalbody, at_top)
            elif isinstance(node, (ast.With, ast.For, ast.While)):
                visit(node.body, at_top)
                visit(getattr(node, "orelse", []), at_top)

    visit(ast.parse(path.read_text(encoding="utf-8"), str(path)).body, True)
    top.discard(name)
    late.discard(name)
    return top, late


def import_graph(
    package: Path = PACKAGE, *, typing: bool = False
) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """(module-level edges, function-level edges) between rowvoi modules;
    with ``typing``, the ``TYPE_CHECKING`` imports count as module level."""
    mods = _source_modules(package)
    known = set(mods) | _compiled_modules()
    top: dict[str, set[str]] = {}
    late: dict[str, set[str]] = {}
    for name, (path, is_pkg) in mods.items():
        top[name], late[name] = _imports(name, path, is_pkg, known, typing)
    return top, late


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph as a path ``[a, b, ..., a]``, or None.

    A package's ``__init__`` importing its own submodules is not a cycle by
    itself; it becomes one only when a submodule imports the package's
    re-exported names back (an edge to the package).
    """
    state: dict[str, int] = {}  # 1: on the current path, 2: finished
    stack: list[str] = []

    def dfs(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state:
                found = dfs(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            found = dfs(start)
            if found:
                return found
    return None


@pytest.mark.parametrize("typing", [False, True], ids=["runtime", "with-type-checking"])
def test_no_import_cycle_at_module_level(typing: bool) -> None:
    top, _ = import_graph(typing=typing)
    cycle = find_cycle(top)
    assert cycle is None, "module-level import cycle: " + " -> ".join(cycle or [])


def test_ground_floor_imports_nothing_above_it() -> None:
    top, late = import_graph()
    allowed = GROUND_FLOOR | _compiled_modules()
    for name in sorted(GROUND_FLOOR):
        above = (top[name] | late[name]) - allowed
        assert not above, f"{name} (ground floor) imports {sorted(above)}"


def test_frame_does_not_import_the_solver() -> None:
    top, late = import_graph()
    assert "rowvoi.setcover" not in top["rowvoi.frame"] | late["rowvoi.frame"]
    assert not {"rowvoi.keys", "rowvoi.policies", "rowvoi.ml"} & (
        top["rowvoi.frame"] | late["rowvoi.frame"]
    )


def test_ml_and_policies_are_not_a_cycle() -> None:
    top, late = import_graph(typing=True)
    ml = top["rowvoi.ml"] | late["rowvoi.ml"]
    policies = top["rowvoi.policies"] | late["rowvoi.policies"]
    assert not ("rowvoi.policies" in ml and "rowvoi.ml" in policies)
    assert "rowvoi.policies" not in ml  # ml is below policies (MIPolicy wraps a model)


def test_the_checks_see_a_planted_cycle(tmp_path: Path) -> None:
    """The checks fail on a tree with a deliberate cycle (and pass without)."""
    pkg = tmp_path / "rowvoi"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from rowvoi.a import A\n")
    (pkg / "errors.py").write_text("class E(Exception):\n    pass\n")
    (pkg / "a.py").write_text("from rowvoi.errors import E\nA = 1\n")
    (pkg / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from rowvoi.a import A\n"
        "def f():\n    from rowvoi import a\n"
    )
    top, late = import_graph(pkg)
    assert find_cycle(top) is None
    assert late["rowvoi.b"] == {"rowvoi.a"}
    (pkg / "a.py").write_text("from rowvoi.errors import E\nimport rowvoi.b\nA = 1\n")
    top, _ = import_graph(pkg)
    assert find_cycle(top) is None  # b imports a only for type checking, or late
    top, _ = import_graph(pkg, typing=True)
    assert find_cycle(top) == ["rowvoi.a", "rowvoi.b", "rowvoi.a"]
    (pkg / "a.py").write_text("from rowvoi.errors import E\nfrom rowvoi import b\nA = 1\n")
    (pkg / "b.py").write_text("import rowvoi.a\n")
    top, _ = import_graph(pkg)
    assert find_cycle(top) == ["rowvoi.a", "rowvoi.b", "rowvoi.a"]
    # a submodule reading the package's re-exports back is a cycle too
    (pkg / "b.py").write_text("from rowvoi import A\n")
    top, _ = import_graph(pkg)
    assert find_cycle(top) == ["rowvoi", "rowvoi.a", "rowvoi.b", "rowvoi"]


@pytest.mark.parametrize("name", sorted(GROUND_FLOOR))
def test_ground_floor_modules_exist(name: str) -> None:
    mods = _source_modules(PACKAGE)
    assert name in mods, f"{name} is listed as ground floor but has no source"


# ------------------------------------------------------------ the CLI on top
CLI = "rowvoi.cli"
CLI_FLOOR = "rowvoi.cli._common"  # what every verb shares
CLI_TOP = "rowvoi.cli.main"  # the parser and dispatch
ENTRY = "rowvoi.__main__"  # python -m rowvoi


def _in_cli(name: str) -> bool:
    return name == CLI or name.startswith(CLI + ".")


def test_nothing_below_the_cli_imports_it() -> None:
    """The command line is the top floor: no library module imports any
    part of it, not even inside a function (only ``python -m rowvoi``)."""
    top, late = import_graph()
    for name in sorted(top):
        if _in_cli(name) or name == ENTRY:
            continue
        up = sorted(m for m in top[name] | late[name] if _in_cli(m))
        assert not up, f"{name} imports the command line: {up}"
    assert top[ENTRY] | late[ENTRY] == {CLI_TOP}


def test_cli_verb_modules_import_only_the_shared_module() -> None:
    """Each verb module imports, of the command line, only the shared
    module: never ``main`` nor another verb module (at module level or
    inside a function); the shared module and the package's ``__init__``
    import no part of it."""
    top, late = import_graph()
    cli = sorted(m for m in top if _in_cli(m))
    verb_modules = [m for m in cli if m not in (CLI, CLI_FLOOR, CLI_TOP)]
    assert len(verb_modules) >= 9, cli  # tables, rag, query, corpus, ... calibrate
    for name in verb_modules:
        inside = {m for m in top[name] | late[name] if _in_cli(m)}
        assert inside <= {CLI_FLOOR}, f"{name} imports {sorted(inside - {CLI_FLOOR})}"
    for name in (CLI, CLI_FLOOR):
        inside = {m for m in top[name] | late[name] if _in_cli(m)}
        assert not inside, f"{name} imports {sorted(inside)}"
    # main composes the parser from every verb module
    assert set(verb_modules) <= top[CLI_TOP] | late[CLI_TOP]


# ------------------------------------------- no circle, no arrow back up
#: The retrieval tower, bottom up: a module of one floor imports nothing of
#: a floor above it (at module level or inside a function).
TOWER = ("rowvoi.index", "rowvoi.query", "rowvoi.corpus", "rowvoi.graph", "rowvoi.cli")
#: The corpus's wings, bottom up (the shared ground first); a wing imports
#: only wings below it, and ``eval`` and ``maintenance`` not each other.
WINGS = {
    "base": 0,
    "embedders": 0,
    "_confine": 0,
    "storage": 1,
    "retrieval": 2,
    "indexing": 3,
    "eval": 4,
    "maintenance": 4,
}


def _floor(name: str) -> int | None:
    for i, pkg in enumerate(TOWER):
        if name == pkg or name.startswith(pkg + "."):
            return i
    return None


def _wing(name: str) -> str | None:
    parts = name.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == ["rowvoi", "corpus"] else None


def _is_decision(name: str) -> bool:
    """A module of the decision tower: at the package root (not the face)."""
    return name.count(".") == 1 and name not in ("rowvoi.__main__",)


def back_arrows(top: dict[str, set[str]], late: dict[str, set[str]]) -> list[str]:
    """Every import (module level or in a function) that runs back up: to a
    higher floor of the tower, to a higher (or a sibling top) corpus wing, or
    from a decision module at the root into the retrieval tower."""
    out = []
    for name in sorted(top):
        for dep in sorted(top[name] | late[name]):
            f, g = _floor(name), _floor(dep)
            if g is not None and ((f is None and _is_decision(name)) or (f is not None and g > f)):
                out.append(f"{name} -> {dep}")
                continue
            w, v = _wing(name), _wing(dep)
            if w in WINGS and v in WINGS and w != v and WINGS[v] >= max(WINGS[w], 1):
                out.append(f"{name} -> {dep}")
    return out


def test_no_import_cycle_even_inside_functions() -> None:
    """No circle among rowvoi's modules when the imports inside functions
    and under ``TYPE_CHECKING`` count too."""
    top, late = import_graph(typing=True)
    both = {m: top[m] | late[m] for m in top}
    cycle = find_cycle(both)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def with_faces(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The graph plus the package faces an import runs: importing
    ``a.b.c`` first runs the ``__init__`` of ``a`` and ``a.b``; those that
    are not already running around the importer (its own packages) are
    edges too. A compiled module (``rowvoi.index._flat``) reaches its
    package's face this way."""
    out: dict[str, set[str]] = {}
    for name, deps in graph.items():
        own = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)}
        more = set(deps)
        for dep in deps:
            parts = dep.split(".")
            for i in range(2, len(parts)):
                face = ".".join(parts[:i])
                if face not in own and face != name and face in graph:
                    more.add(face)
        out[name] = more
    return out


def test_no_import_cycle_through_a_package_face() -> None:
    """No circle when the package faces an import runs count as well (a
    module importing ``rowvoi.corpus._x`` runs ``rowvoi.corpus``'s face,
    which imports every wing)."""
    top, late = import_graph(typing=True)
    both = with_faces({m: top[m] | late[m] for m in top})
    cycle = find_cycle(both)
    assert cycle is None, "import cycle through a package face: " + " -> ".join(cycle or [])


def test_the_check_sees_a_circle_through_a_face(tmp_path: Path) -> None:
    """graph.store -> corpus._hot runs corpus's face -> corpus.rank ->
    graph.store: found through the face, not without it."""
    pkg = tmp_path / "rowvoi"
    for d in ("corpus", "graph"):
        (pkg / d).mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "corpus" / "__init__.py").write_text("from rowvoi.corpus.rank import r\n")
    (pkg / "corpus" / "_hot.py").write_text("")
    (pkg / "corpus" / "rank.py").write_text("def r():\n    import rowvoi.graph.store\n")
    (pkg / "graph" / "__init__.py").write_text("")
    (pkg / "graph" / "store.py").write_text("from rowvoi.corpus import _hot\n")
    top, late = import_graph(pkg, typing=True)
    both = {m: top[m] | late[m] for m in top}
    assert find_cycle(both) is None
    assert find_cycle(with_faces(both)) == [
        "rowvoi.corpus",
        "rowvoi.corpus.rank",
        "rowvoi.graph.store",
        "rowvoi.corpus",
    ]
    (pkg / "corpus" / "__init__.py").write_text("")
    top, late = import_graph(pkg, typing=True)
    assert find_cycle(with_faces({m: top[m] | late[m] for m in top})) is None


def test_no_import_runs_back_up() -> None:
    """index < query < corpus < graph < cli; the corpus's wings bottom up;
    the decision modules at the root import nothing of the retrieval tower."""
    top, late = import_graph(typing=True)
    assert back_arrows(top, late) == []
    assert set(WINGS) <= {_wing(m) for m in top if _wing(m)}, "a wing is missing"


def test_the_checks_see_a_planted_circle_and_back_arrow(tmp_path: Path) -> None:
    """A function-local circle and each kind of arrow back up are found."""
    pkg = tmp_path / "rowvoi"
    for d in ("index", "corpus/storage", "corpus/retrieval", "graph"):
        (pkg / d).mkdir(parents=True)
    for f in ("__init__", "keys", "index/__init__", "index/flat", "corpus/__init__"):
        (pkg / f"{f}.py").write_text("")
    for f in ("storage/__init__", "storage/store", "retrieval/__init__", "retrieval/rank"):
        (pkg / "corpus" / f"{f}.py").write_text("")
    (pkg / "graph" / "__init__.py").write_text("")
    (pkg / "graph" / "walk.py").write_text("from rowvoi.corpus.retrieval import rank\n")
    top, late = import_graph(pkg, typing=True)
    assert back_arrows(top, late) == []
    assert find_cycle({m: top[m] | late[m] for m in top}) is None
    # a function-local circle: store -> rank (in a function), rank -> store
    (pkg / "corpus" / "retrieval" / "rank.py").write_text(
        "from rowvoi.corpus.storage import store\n"
    )
    (pkg / "corpus" / "storage" / "store.py").write_text(
        "def f():\n    from rowvoi.corpus.retrieval import rank\n"
    )
    top, late = import_graph(pkg, typing=True)
    assert find_cycle(top) is None
    assert find_cycle({m: top[m] | late[m] for m in top}) is not None
    assert back_arrows(top, late) == [
        "rowvoi.corpus.storage.store -> rowvoi.corpus.retrieval.rank"
    ]
    (pkg / "corpus" / "storage" / "store.py").write_text("")
    (pkg / "index" / "flat.py").write_text("def f():\n    import rowvoi.graph.walk\n")
    (pkg / "keys.py").write_text("from rowvoi.index import flat\n")
    top, late = import_graph(pkg, typing=True)
    assert back_arrows(top, late) == [
        "rowvoi.index.flat -> rowvoi.graph.walk",
        "rowvoi.keys -> rowvoi.index.flat",
    ]
