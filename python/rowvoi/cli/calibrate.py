"""The ``rowvoi calibrate`` verb: measure and store a corpus's abstention floor.

``rowvoi calibrate NAME --in-scope FILE --out-of-scope FILE`` searches both
query sets in corpus NAME, picks the floor that best separates them
(:func:`rowvoi.corpus.retrieval.calibration.calibrate_min_score`), stores it for
``rowvoi discover NAME QUERY --min-score auto`` and prints the rates and
both score distributions; ``--plot FILE.png`` draws them (needs
matplotlib: ``pip install 'rowvoi[plot]'``). Query files hold one query a
line (``#`` comments), or JSON / JSONL (strings or objects with a
``"query"``; evaluation case files work). Exit status: 0 done, 1 a
failure (unknown corpus, a build holds the corpus, unreadable file,
matplotlib missing), 2 a malformed argument.

Examples
--------
>>> import os, tempfile, pathlib, contextlib, io, json
>>> os.environ["ROWVOI_HOME"] = tempfile.mkdtemp()
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "wing.md").write_text("Lift and drag of a thin wing")
>>> _ = (d / "shock.md").write_text("Shock waves on a wedge")
>>> _ = (d / "in.txt").write_text("wing drag\\nwedge shock\\n")
>>> _ = (d / "out.txt").write_text("apple pie\\nfootball scores\\n")
>>> from rowvoi.cli.main import main
>>> with contextlib.redirect_stdout(io.StringIO()):
...     rc = main(["build", "aero", "--files", str(d), "--pattern", r"\\.md$",
...                "--embedder", "hashing"])
>>> with contextlib.redirect_stdout(io.StringIO()) as out:
...     rc = main(["calibrate", "aero", "--in-scope", str(d / "in.txt"),
...                "--out-of-scope", str(d / "out.txt"), "--mode", "lexical", "--json"])
>>> rc, json.loads(out.getvalue())["sensitivity"], json.loads(out.getvalue())["saved"]
(0, 1.0, True)
>>> del os.environ["ROWVOI_HOME"]
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rowvoi.cli._common import (
    WEIGHT,
    CliError,
    check_input_file,
    corpus_name,
    print_json,
    printable,
    search_k,
)
from rowvoi.corpus import FUSIONS, MODES, calibrate_min_score, open_corpus
from rowvoi.corpus.retrieval.calibration import read_queries
from rowvoi.corpus.retrieval.rank import MAX_FETCH_K

__all__ = ["add_parsers"]


def _cmd_calibrate(args: argparse.Namespace) -> int:
    if args.plot is not None:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise CliError("--plot needs matplotlib: pip install 'rowvoi[plot]'") from None
    check_input_file(args.in_scope, "--in-scope")  # never hang on a FIFO or a device
    check_input_file(args.out_of_scope, "--out-of-scope")
    in_scope = read_queries(args.in_scope)
    out_of_scope = read_queries(args.out_of_scope)
    corpus = open_corpus(args.name)
    if sys.stderr.isatty() and not args.json:
        print(
            f"searching {len(in_scope)} in-scope and {len(out_of_scope)} out-of-scope "
            f"queries ({args.mode}{'/' + args.fusion if args.mode == 'hybrid' else ''}) ...",
            file=sys.stderr,
            flush=True,
        )
    cal = calibrate_min_score(
        corpus,
        in_scope,
        out_of_scope,
        mode=args.mode,
        fusion=args.fusion,
        weight=args.weight,
        k=args.k,
        save=not args.no_save,
    )
    if args.plot is not None:
        cal.plot(args.plot)
    if args.json:
        out: dict[str, Any] = cal.to_dict()
        out["saved"] = cal.saved
        out["plot"] = None if args.plot is None else str(args.plot)
        print_json(out)
        return 0
    print(cal)
    if args.plot is not None:
        print(f"  plot: {printable(args.plot)}")
    return 0


def add_parsers(sub: Any) -> None:
    """Register ``calibrate`` on the ``rowvoi`` subparsers.

    >>> import argparse
    >>> sub = argparse.ArgumentParser(prog="rowvoi").add_subparsers()
    >>> add_parsers(sub); sorted(sub.choices)
    ['calibrate']
    """
    p = sub.add_parser(
        "calibrate",
        help="measure and store a corpus's abstention floor",
        description="Search corpus NAME for the queries it should answer (--in-scope) and "
        "those it should refuse (--out-of-scope), choose the score floor that "
        "best separates them (weight x answered + (1 - weight) x refused) and "
        "store it for 'rowvoi discover NAME QUERY --min-score auto'. A hybrid "
        "RRF search floors each hit's evidence (its blend score), since RRF "
        "scores depend on ranks only. Query files: one query a line ('#' "
        'comments), or .json/.jsonl of strings or {"query": ...} objects. '
        "The floor is ignored (with a warning) once the corpus is rebuilt with "
        "another embedder, analyzer or strategy. Exit 1 for an unknown corpus, "
        "a corpus being built, an unreadable file or missing matplotlib.",
        epilog="example: rowvoi calibrate papers --in-scope asked.txt --out-of-scope "
        "off-topic.txt --mode hybrid --fusion blend --plot floor.png",
    )
    p.add_argument("name", metavar="NAME", type=corpus_name, help="corpus name")
    p.add_argument(
        "--in-scope", required=True, metavar="FILE", help="queries the corpus should answer"
    )
    p.add_argument(
        "--out-of-scope", required=True, metavar="FILE", help="queries the corpus should refuse"
    )
    p.add_argument(
        "--mode",
        choices=MODES,
        default="hybrid",
        help="search mode to calibrate (default hybrid, as discover)",
    )
    p.add_argument("--fusion", choices=FUSIONS, default="rrf", help="hybrid fusion (default rrf)")
    p.add_argument(
        "--k",
        type=search_k(),
        default=10,
        help=f"hits per query searched, as discover's --k, 1 .. {MAX_FETCH_K} (default 10)",
    )
    p.add_argument(
        "--weight",
        type=WEIGHT,
        default=0.5,
        help="weight on answering in-scope queries against refusing the others, "
        "in [0, 1] (default 0.5: balanced)",
    )
    p.add_argument("--no-save", action="store_true", help="measure only; do not store the floor")
    p.add_argument(
        "--plot",
        metavar="FILE.png",
        help="draw both score distributions and the floor (needs rowvoi[plot])",
    )
    p.add_argument("--json", action="store_true", help="print JSON for programs")
    p.set_defaults(func=_cmd_calibrate, verb_parser=p)
