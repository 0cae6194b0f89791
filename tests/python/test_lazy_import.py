"""``import rowvoi`` loads the table-and-decision API (pandas, the solvers),
and ``rowvoi.query`` its executors, on first use of one of their names, so
corpus work -- building, searching, filtering -- never imports pandas."""

import ast
import importlib
import inspect
import subprocess
import sys

import pytest

import rowvoi
import rowvoi.query

PACKAGES = ["rowvoi", "rowvoi.query"]


def _child(code: str) -> str:
    """Run ``code`` in a fresh interpreter (nothing of rowvoi imported yet)."""
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_corpus_work_does_not_import_pandas():
    out = _child(
        "import sys, rowvoi, rowvoi.cli.main\n"
        "rowvoi.cli.main.build_parser()  # imports every verb module\n"
        "from rowvoi.corpus import CorpusStore, build, from_records, search\n"
        "rows = [{'id': 'a', 'text': 'lift of a wing', 'year': 1962},\n"
        "        {'id': 'b', 'text': 'shock on a wedge', 'year': 1970}]\n"
        "src = from_records(name=None, fetcher=lambda: rows, metadata_keys=['year'],\n"
        "                   embedder='hashing')\n"
        "c = build(src, store=CorpusStore.memory(), progress=False)\n"
        "for mode in ('dense', 'lexical', 'hybrid'):\n"
        "    hits = search(c, 'wing', mode=mode, filter={'year': {'$lt': 1965}})\n"
        "    assert [h.artifact_id for h in hits] == ['a'], hits\n"
        "print('pandas' in sys.modules)\n"
        "rowvoi.find_key\n"
        "print('pandas' in sys.modules, 'rowvoi.keys' in sys.modules)\n"
    )
    assert out.split() == ["False", "True", "True"]


@pytest.mark.parametrize("name", PACKAGES)
def test_every_public_name_resolves_to_its_module_object(name):
    pkg = importlib.import_module(name)
    for attr in pkg.__all__:
        value = getattr(pkg, attr)
        module = pkg._LAZY.get(attr)
        if module is not None:
            assert value is getattr(sys.modules[module], attr), attr
    assert set(pkg._LAZY) <= set(dir(pkg))
    ns: dict = {}
    exec(f"from {name} import *", ns)
    assert set(pkg.__all__) <= set(ns)


def test_defining_submodules_are_attributes_and_other_names_are_errors():
    assert rowvoi.keys.find_key is rowvoi.find_key
    assert rowvoi.query.planner.QueryPlanner is rowvoi.query.QueryPlanner
    with pytest.raises(AttributeError, match="module 'rowvoi' has no attribute 'nope'"):
        rowvoi.nope  # noqa: B018
    with pytest.raises(AttributeError, match=r"module 'rowvoi\.query' has no attribute 'x'"):
        rowvoi.query.x  # noqa: B018
    # other subpackages still need their own import (rowvoi.dask needs dask)
    assert not hasattr(rowvoi, "no_such_module")
    assert "corpus" not in rowvoi._LAZY


@pytest.mark.parametrize("name", PACKAGES)
def test_type_checking_imports_match_the_lazy_table(name):
    """The ``if TYPE_CHECKING:`` imports (what mypy and readers see) name
    exactly the lazy table's names, each from the same module."""
    pkg = importlib.import_module(name)
    seen = {}
    for node in ast.walk(ast.parse(inspect.getsource(pkg))):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom)
                seen.update({a.name: imp.module for a in imp.names})
    assert seen == pkg._LAZY


def test_first_use_from_many_threads_gives_one_object():
    out = _child(
        "import threading, rowvoi, rowvoi.query as q\n"
        "names = [(rowvoi, n) for n in sorted(rowvoi._LAZY)] + [(q, n) for n in sorted(q._LAZY)]\n"
        "got = [[] for _ in range(8)]\n"
        "start = threading.Barrier(8)\n"
        "def run(i):\n"
        "    start.wait()\n"
        "    got[i] = [id(getattr(m, n)) for m, n in (names[i:] + names[:i])]\n"
        "ts = [threading.Thread(target=run, args=(i,)) for i in range(8)]\n"
        "[t.start() for t in ts]; [t.join() for t in ts]\n"
        "want = {n: id(getattr(m, n)) for m, n in names}\n"
        "ok = all(dict(zip([n for _, n in names[i:] + names[:i]], g)) == want\n"
        "         for i, g in enumerate(got))\n"
        "print(ok, len(names))\n"
    )
    assert out.split() == ["True", str(len(rowvoi._LAZY) + len(rowvoi.query._LAZY))]
