"""Render man/rowvoi.1 from the argparse parser (needs argparse-manpage).

python scripts/manpage.py            # rewrite man/rowvoi.1
python scripts/manpage.py --check    # exit 1 if man/rowvoi.1 is stale
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from argparse_manpage.manpage import Manpage

from rowvoi import __version__
from rowvoi.cli import build_parser

OUT = Path(__file__).resolve().parents[1] / "man" / "rowvoi.1"


def render() -> str:
    """The man page text, with a fixed date line so it is reproducible."""
    parser = build_parser()
    parser.man_short_description = "value of information over candidate rows"
    text = str(Manpage(parser, format="single-commands-section"))
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
