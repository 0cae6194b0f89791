"""``import rowvoi`` loads the table-and-decision API (pandas, the solvers)
on first use of one of its names, so corpus work never imports pandas."""

import ast
import inspect
import subprocess
import sys

import pytest

import rowvoi


def _child(code: str) -> str:
    """Run ``code`` in a fresh interpreter (nothing of rowvoi imported yet)."""
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_corpus_and_its_cli_do_not_import_pandas():
    out = _child(
        "import sys, rowvoi, rowvoi.corpus, rowvoi.corpus.cli, rowvoi.cli\n"
        "print('pandas' in sys.modules, 'rowvoi.keys' in sys.modules)\n"
        "rowvoi.find_key\n"
        "print('pandas' in sys.modules, 'rowvoi.keys' in sys.modules)\n"
    )
    assert out.split() == ["False", "False", "True", "True"]


def test_every_public_name_resolves_to_its_module_object():
    for name in rowvoi.__all__:
        value = getattr(rowvoi, name)
        module = rowvoi._LAZY.get(name)
        if module is not None:
            assert value is getattr(sys.modules[module], name), name
    assert rowvoi.keys.find_key is rowvoi.find_key  # a defining submodule, on access
    assert set(rowvoi._LAZY) <= set(dir(rowvoi))
    ns: dict = {}
    exec("from rowvoi import *", ns)
    assert set(rowvoi.__all__) <= set(ns)


def test_unknown_names_are_attribute_errors():
    with pytest.raises(AttributeError, match="module 'rowvoi' has no attribute 'nope'"):
        rowvoi.nope  # noqa: B018
    # other subpackages still need their own import (rowvoi.dask needs dask)
    assert not hasattr(rowvoi, "no_such_module")
    assert "_LAZY" in vars(rowvoi) and "corpus" not in rowvoi._LAZY


def test_type_checking_imports_match_the_lazy_table():
    """The ``if TYPE_CHECKING:`` imports (what mypy and readers see) name
    exactly the lazy table's names, each from the same module."""
    tree = ast.parse(inspect.getsource(rowvoi))
    seen = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom)
                seen.update({a.name: imp.module for a in imp.names})
    assert seen == rowvoi._LAZY


def test_first_use_from_many_threads_gives_one_object():
    out = _child(
        "import threading, rowvoi\n"
        "names = sorted(rowvoi._LAZY)\n"
        "got = [[] for _ in range(8)]\n"
        "start = threading.Barrier(8)\n"
        "def run(i):\n"
        "    start.wait()\n"
        "    got[i] = [id(getattr(rowvoi, n)) for n in (names[i:] + names[:i])]\n"
        "ts = [threading.Thread(target=run, args=(i,)) for i in range(8)]\n"
        "[t.start() for t in ts]; [t.join() for t in ts]\n"
        "want = {n: id(getattr(rowvoi, n)) for n in names}\n"
        "ok = all(dict(zip(names[i:] + names[:i], g)) == want for i, g in enumerate(got))\n"
        "print(ok, len(names))\n"
    )
    assert out.split() == ["True", str(len(rowvoi._LAZY))]
