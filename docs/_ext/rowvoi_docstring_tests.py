"""Run the examples of every rendered docstring in the doctest builder, as
``doctest.testmod`` runs them.

A docstring's examples are written against the namespace of the module
that defines the object (``doctest.testmod`` gives each docstring a fresh
copy of the module's globals), while Sphinx's doctest builder runs every
plain ``>>>`` block of a page in one shared, empty namespace. This
extension closes that gap, so the examples the site shows are the examples
that run:

* when autodoc hands over a docstring (after numpydoc has rewritten it), a
  marker comment naming the docstring and its defining module is put in
  front of it;
* after the page is read, every ``>>>`` block between a marker and the end
  marker behind the docstring joins
  a doctest group of its own (one per docstring, as testmod does), and the
  group's hidden setup copies the defining module's globals into it.

``>>>`` blocks written in the pages themselves (outside docstrings) keep
the builder's usual ``default`` group.
"""

from __future__ import annotations

import inspect
import sys
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx

_MARK = "rowvoi-docstring-test"


def _defining_module(what: str, name: str, obj: Any) -> str | None:
    if what == "module":
        return getattr(obj, "__name__", None)
    target = obj
    if isinstance(target, property):
        target = target.fget
    target = inspect.unwrap(getattr(target, "__func__", target))
    mod = getattr(target, "__module__", None)
    if isinstance(mod, str):
        return mod
    # Attributes, data: the longest importable prefix of the dotted name.
    parts = name.split(".")
    for k in range(len(parts) - 1, 0, -1):
        candidate = ".".join(parts[:k])
        if candidate in sys.modules:
            return candidate
    return None


def _mark_docstring(
    app: Sphinx, what: str, name: str, obj: Any, options: Any, lines: list[str]
) -> None:
    if not any(ln.lstrip().startswith(">>>") for ln in lines):
        return
    module = _defining_module(what, name, obj)
    if module is None:
        return
    lines[0:0] = [f".. {_MARK} {name} {module}", ""]
    lines += ["", f".. {_MARK}-end", ""]


def _assign_groups(app: Sphinx, doctree: nodes.document) -> None:
    group: str | None = None
    for node in list(
        doctree.findall(lambda n: isinstance(n, (nodes.comment, nodes.doctest_block)))
    ):
        if isinstance(node, nodes.comment):
            text = node.astext().split()
            if text == [f"{_MARK}-end"]:
                group = None
                node.parent.remove(node)
            elif len(text) == 3 and text[0] == _MARK:
                _, name, module = text
                group = f"docstring:{name}"
                # A copy of the module's globals, as doctest.testmod gives.
                code = (
                    f"globals().update(vars(__import__('importlib').import_module({module!r})))\n"
                )
                setup = nodes.comment(code, code, testnodetype="testsetup", groups=[group])
                setup.source, setup.line = node.source, node.line
                node.replace_self(setup)
            continue
        if group is not None and isinstance(node, nodes.Element) and "groups" not in node:
            node["groups"] = [group]


def setup(app: Sphinx) -> dict[str, Any]:
    # After numpydoc (priority 500), which rebuilds the docstring's lines.
    app.connect("autodoc-process-docstring", _mark_docstring, priority=900)
    app.connect("doctree-read", _assign_groups)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
