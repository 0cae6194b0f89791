"""Render man/rowvoi.1 from the argparse parser (needs argparse-manpage).

python scripts/manpage.py            # rewrite man/rowvoi.1
python scripts/manpage.py --check    # exit 1 if man/rowvoi.1 is stale

roff reads a line that starts with ``.`` or ``'`` as a request, so a line of
help text wrapped to start with ``.json`` or ``'ask'`` would vanish from the
rendered page; :func:`escape_text_lines` puts the zero-width ``\\&`` in front
of every such line that is not one of the generator's macros.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from argparse_manpage.manpage import Manpage

from rowvoi import __version__
from rowvoi.cli.main import build_parser

OUT = Path(__file__).resolve().parents[1] / "man" / "rowvoi.1"

#: The man(7) macros and roff requests argparse-manpage writes; any other
#: line starting with a control character is text.
MACROS = frozenset("TH SH SS TP RS RE B UR UE nf fi".split())
_REQUEST = re.compile(r"^[.'](\S*)")


def escape_text_lines(text: str) -> str:
    """Prefix ``\\&`` to every line that roff would take for a request but
    is text (it does not name one of :data:`MACROS`)."""
    out = []
    for line in text.split("\n"):
        m = _REQUEST.match(line)
        if m and not (line.startswith(".") and m.group(1) in MACROS):
            line = "\\&" + line
        out.append(line)
    return "\n".join(out)


def render() -> str:
    """The man page text, with a fixed date line so it is reproducible."""
    parser = build_parser()
    parser.man_short_description = "value of information over candidate rows"
    text = escape_text_lines(str(Manpage(parser, format="single-commands-section")))
    # argparse-manpage stamps today's date; pin the header to the version.
    return re.sub(
        r'^\.TH ROWVOI "1" "[^"]*" "[^"]*" "[^"]*"',
        f'.TH ROWVOI "1" "" "rowvoi {__version__}" "User Commands"',
        text,
        count=1,
        flags=re.M,
    )


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if not OUT.exists() or OUT.read_text() != text:
            print(f"{OUT} is stale: run python scripts/manpage.py", file=sys.stderr)
            return 1
        return 0
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
