"""Topic headings in module docstrings, kept through numpydoc.

rowvoi's module docstrings are short manuals with their own headings
("Conventions", "Commit protocol", "The filter language ..."). numpydoc
knows only its fixed sections and drops any other one with a warning, so
before numpydoc reads a docstring, each heading that is not a numpydoc
section becomes a ``.. rubric::`` -- the text under it stays where it was,
as part of the extended summary. A heading after a numpydoc section would
end up inside that section, so it is reported as a warning instead (none
exists today; -W turns one into a failed build).
"""

from __future__ import annotations

import re
from typing import Any

from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

NUMPYDOC_SECTIONS = {
    "parameters",
    "returns",
    "yields",
    "receives",
    "raises",
    "warns",
    "other parameters",
    "attributes",
    "methods",
    "see also",
    "notes",
    "warnings",
    "references",
    "examples",
    "signature",
}
_UNDERLINE = re.compile(r"^\s*-{3,}\s*$")


def _headings_to_rubrics(
    app: Sphinx, what: str, name: str, obj: Any, options: Any, lines: list[str]
) -> None:
    seen_numpydoc = False
    i = 0
    while i + 1 < len(lines):
        title, under = lines[i].strip(), lines[i + 1]
        is_heading = (
            bool(title)
            and _UNDERLINE.match(under) is not None
            and (i == 0 or not lines[i - 1].strip())
        )
        if not is_heading:
            i += 1
            continue
        if title.lower() in NUMPYDOC_SECTIONS:
            seen_numpydoc = True
        elif seen_numpydoc:
            logger.warning(
                "docstring of %s: heading %r after a numpydoc section would be lost",
                name,
                title,
            )
        else:
            indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
            lines[i : i + 2] = [f"{indent}.. rubric:: {title}", ""]
        i += 2


def setup(app: Sphinx) -> dict[str, Any]:
    # Before numpydoc (priority 500) parses the sections.
    app.connect("autodoc-process-docstring", _headings_to_rubrics, priority=400)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
