"""``.. rowvoi-cli::`` -- the ``rowvoi`` command's help, verb by verb.

The text is argparse's own ``--help`` of the parser that ``rowvoi`` runs
(``rowvoi.cli.main.build_parser``, the same source that ``scripts/manpage.py``
renders into ``man/rowvoi.1``), formatted at a fixed width so that the page
does not depend on the terminal that built it. One section per verb, in
the parser's order, so a new verb appears without editing the page.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

WIDTH = 88


def _help(parser: argparse.ArgumentParser) -> str:
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(WIDTH)
    try:
        return parser.format_help().rstrip("\n")
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old


def _verbs(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    for action in parser._actions:  # argparse keeps subparsers only here
        if isinstance(action, argparse._SubParsersAction):
            return list(action.choices.items())
    return []


def _section(words: list[str], parser: argparse.ArgumentParser) -> nodes.section:
    """One verb's help, with a subsection per sub-verb (``rowvoi graph walk``)."""
    title = " ".join(words)
    section = nodes.section(ids=[nodes.make_id("-".join(words))])
    section += nodes.title(title, "", nodes.literal(title, title))
    text = _help(parser)
    section += nodes.literal_block(text, text, language="text")
    for name, sub in _verbs(parser):
        section += _section([*words, name], sub)
    return section


class CliDirective(SphinxDirective):
    has_content = False

    def run(self) -> list[nodes.Node]:
        from rowvoi.cli.main import build_parser

        parser = build_parser()
        text = _help(parser)
        out: list[nodes.Node] = [nodes.literal_block(text, text, language="text")]
        out += [_section(["rowvoi", name], sub) for name, sub in _verbs(parser)]
        return out


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("rowvoi-cli", CliDirective)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
