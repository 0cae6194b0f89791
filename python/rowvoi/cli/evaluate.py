"""The evaluation verbs of the ``rowvoi`` command: eval, eval-select,
sweep-select.

Each reads a built corpus (by name) and a JSONL file of cases (see
:mod:`rowvoi.corpus.eval.cases`), runs one search per case, and prints a
report (``--json`` for programs). Exit codes follow :mod:`rowvoi.cli.main`: 0
success; 1 a request that fails (unknown or empty corpus, missing cases
file, a setting the library rejects, ``--plot`` without matplotlib); 2 a
malformed request (an unknown flag, a number that does not parse, a cases
file that is not JSONL of cases). Progress goes to stderr as a bar when
stderr is a terminal; warnings (gold ids the corpus does not have) go to
stderr always.

:func:`add_parsers` registers the verbs.

Examples
--------
>>> import os, tempfile, pathlib, contextlib, io, json
>>> os.environ["ROWVOI_HOME"] = tempfile.mkdtemp()
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "wing.md").write_text("Lift and drag of a thin wing")
>>> _ = (d / "pipe.md").write_text("Heat transfer in a pipe")
>>> _ = (d / "cases.jsonl").write_text('{"query": "wing drag", "gold": ["wing.md"]}\\n')
>>> from rowvoi.cli.main import main
>>> with contextlib.redirect_stdout(io.StringIO()):
...     rc = main(["build", "notes", "--files", str(d), "--embedder", "hashing"])
>>> with contextlib.redirect_stdout(io.StringIO()) as out:
...     rc = main(["eval", "notes", str(d / "cases.jsonl"), "--mode", "lexical", "--json"])
>>> rc, json.loads(out.getvalue())["metrics"]["ndcg@10"]
(0, 1.0)
>>> del os.environ["ROWVOI_HOME"]
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rowvoi.cli._common import (
    FINITE,
    REL,
    CliError,
    UsageError,
    check_input_file,
    corpus_name,
    integer,
    metric_names,
    number_list,
    print_json,
    printable,
    search_k,
)
from rowvoi.corpus import FUSIONS, MODES, SELECT_STRATEGIES, open_corpus
from rowvoi.corpus.eval import (
    DFLT_METRICS,
    SWEEP_METRICS,
    evaluate_discovery,
    evaluate_selection,
    load_cases,
    sweep_selector,
    validate_cases,
)
from rowvoi.corpus.eval.plots import PlotUnavailable, plot_frontier, require_matplotlib

__all__ = ["add_parsers"]


class _Bar:
    """``progress(done, total)`` drawing a tqdm bar on stderr when it is a
    terminal; silent otherwise."""

    def __init__(self, desc: str) -> None:
        self.desc = desc
        self.bar: Any = None
        self.enabled = sys.stderr.isatty()

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        if self.bar is None:
            from tqdm import tqdm

            self.bar = tqdm(
                total=total,
                desc=self.desc,
                unit="case",
                file=sys.stderr,
                leave=False,
                dynamic_ncols=True,
            )
        self.bar.update(done - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _load(args: argparse.Namespace) -> tuple[Any, list[Any]]:
    """The open corpus and the cases; warns about gold ids the corpus lacks."""
    check_input_file(args.cases, "CASES")  # never hang on a FIFO or a device
    try:
        cases = load_cases(args.cases)
    except ValueError as exc:
        raise UsageError(f"CASES: {exc}") from None
    if not cases:
        raise CliError(f"{args.cases} holds no cases")
    corpus = open_corpus(args.name)
    missing = validate_cases(corpus, cases)
    if missing:
        n = sum(len(v) for v in missing.values())
        first = next(iter(missing.items()))
        print(
            f"{args.verb_parser.prog}: warning: {n} gold id(s) in {len(missing)} case(s) "
            f"are not in corpus {args.name!r} (case {first[0] + 1}: "
            f"{printable(first[1][:3])}); they count as misses (see validate_cases)",
            file=sys.stderr,
        )
    return corpus, cases


def _search_kw(args: argparse.Namespace) -> dict[str, Any]:
    return {"fusion": args.fusion} if args.mode == "hybrid" else {}


def _run(verb: str, fn: Any, *a: Any, **kw: Any) -> Any:
    bar = _Bar(verb)
    try:
        return fn(*a, progress=bar, **kw)
    finally:
        bar.close()


# ------------------------------------------------------------------- verbs
def _cmd_eval(args: argparse.Namespace) -> int:
    corpus, cases = _load(args)
    ks = args.k if args.k is not None else [1, 5, 10]
    report = _run(
        "eval",
        evaluate_discovery,
        corpus,
        cases,
        k_values=ks,
        primary_k=args.primary_k,
        metrics=args.metrics,
        mode=args.mode,
        abstain_threshold=args.abstain_threshold,
        depth=args.depth,
        **_search_kw(args),
    )
    if args.run:
        report.write_run(args.run)
    if args.json:
        print_json({"corpus": args.name, **report.to_dict(rows=args.rows)})
        return 0
    print(f"corpus {args.name!r}: {report}")
    if args.rows:
        print(f"{'#':>4}  {'class':<19} {'gold rank':>9}  query")
        for r in report.rows:
            rank = "-" if r["gold_rank"] is None else str(r["gold_rank"])
            print(
                f"{r['index'] + 1:4d}  {r['failure_class']:<19} {rank:>9}  "
                f"{printable(' '.join(r['query'].split())[:80])}"
            )
    if args.run:
        print(f"run file: {printable(args.run)}")
    return 0


def _cmd_eval_select(args: argparse.Namespace) -> int:
    corpus, cases = _load(args)
    report = _run(
        "eval-select",
        evaluate_selection,
        corpus,
        cases,
        strategy=args.strategy,
        mode=args.mode,
        k=args.k,
        max_k=args.max_k,
        rel=args.rel,
        gap_ratio=args.gap_ratio,
        min_score=args.min_score,
        **_search_kw(args),
    )
    if args.json:
        print_json({"corpus": args.name, **report.to_dict(rows=args.rows)})
        return 0
    print(f"corpus {args.name!r}: {report}")
    if args.rows:
        for r in report.rows:
            print(
                f"{r['index'] + 1:4d}  {r['reason']:<20} gold {r['gold_selected']}/"
                f"{r['gold_retrieved']}  {', '.join(map(printable, r['selected']))}"
            )
    return 0


def _cmd_sweep_select(args: argparse.Namespace) -> int:
    if args.plot:
        try:
            require_matplotlib()
        except PlotUnavailable as exc:
            raise CliError(str(exc)) from None
    corpus, cases = _load(args)
    if args.held_out is not None and not 2 <= args.held_out <= len(cases):
        raise CliError(
            f"--held-out {args.held_out}: give a number of folds from 2 to the "
            f"number of cases ({len(cases)})"
        )
    kw: dict[str, Any] = {}
    for flag, key in (
        ("max_k_grid", "max_k_grid"),
        ("rel_grid", "rel_grid"),
        ("min_score_grid", "min_score_grid"),
    ):
        if getattr(args, flag) is not None:
            kw[key] = getattr(args, flag)
    sweep = _run(
        "sweep-select",
        sweep_selector,
        corpus,
        cases,
        strategy=args.strategy,
        mode=args.mode,
        k=args.k,
        objective=args.objective,
        **kw,
        **_search_kw(args),
    )
    held = None if args.held_out is None else sweep.held_out(args.held_out)
    if args.plot:
        plot_frontier(sweep, args.plot)
    if args.json:
        out = {"corpus": args.name, **sweep.to_dict()}
        if held is not None:
            out["held_out"] = held.to_dict()
        if args.plot:
            out["plot"] = args.plot
        print_json(out)
        return 0
    print(f"corpus {args.name!r}: {sweep}")
    front = sweep.frontier()
    floors = any(p.min_score is not None for p in sweep.points)
    print(
        "precision/recall frontier (max_k/rel"
        + ("/min_score" if floors else "")
        + "): "
        + ", ".join(f"{p.max_k}/{p.rel:g}" + (f"/{p.min_score}" if floors else "") for p in front)
    )
    if held is not None:
        print(held)
    if args.plot:
        print(f"plot: {printable(args.plot)}")
    return 0


# ----------------------------------------------------------------- parsers
def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", metavar="NAME", type=corpus_name, help="the built corpus")
    p.add_argument(
        "cases",
        metavar="CASES.jsonl",
        help='one case per line: {"query": ..., "gold": [ids], "grades": '
        "{id: gain}}; no gold: an abstention case; an optional "
        '{"__meta__": {...}} first line',
    )
    p.add_argument(
        "--mode",
        choices=MODES,
        default="hybrid",
        metavar="{hybrid,dense,lexical}",
        help="search mode (default hybrid)",
    )
    p.add_argument(
        "--fusion",
        choices=FUSIONS,
        default="rrf",
        metavar="{rrf,blend}",
        help="hybrid fusion: rrf (by rank, default) or blend (by score)",
    )
    p.add_argument("--json", action="store_true", help="print JSON for programs")


def _selection_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--k",
        type=search_k(),
        default=10,
        help="candidates retrieved per case, the selector's window (default 10)",
    )
    p.add_argument(
        "--strategy",
        choices=SELECT_STRATEGIES,
        default="conservative",
        help="selection rule (default conservative)",
    )


def add_parsers(sub: Any) -> None:
    """Register ``eval``, ``eval-select`` and ``sweep-select``.

    >>> import argparse
    >>> sub = argparse.ArgumentParser(prog="rowvoi").add_subparsers()
    >>> add_parsers(sub); sorted(sub.choices)
    ['eval', 'eval-select', 'sweep-select']
    """
    _add_eval(sub)
    _add_eval_select(sub)
    _add_sweep_select(sub)


def _add_eval(sub: Any) -> None:
    """Add ``rowvoi eval`` to the subparsers."""
    p = sub.add_parser(
        "eval",
        help="measure a corpus's ranking against cases (nDCG, MAP, ...)",
        description="Search corpus NAME once per case of CASES.jsonl and report nDCG, "
        "recall, precision, MRR and MAP at each --k (defined as trec_eval "
        "defines them; graded gains from each case's grades), the failure "
        "class of each case (hit_rank_1, surfaced_low_rank, retrieval_miss; "
        "for cases without gold abstention_ok, false_action, "
        "abstention_unscored) and, with --rows, one row per case. --run writes "
        "the rankings as a TREC run file. Exit 1 for an unknown corpus or a "
        "missing cases file, 2 for a malformed one.",
        epilog="example: rowvoi eval papers cases.jsonl --mode lexical --k 1,10,100",
    )
    _common(p)
    p.add_argument(
        "--k",
        type=number_list(search_k()),
        metavar="K1,K2,...",
        help="cutoffs, each >= 1 (default 1,5,10)",
    )
    p.add_argument(
        "--primary-k",
        type=search_k(),
        default=10,
        help="cutoff of the headline nDCG and of the failure classes (default 10)",
    )
    p.add_argument(
        "--metrics",
        type=metric_names,
        default=list(DFLT_METRICS),
        metavar="M1,M2",
        help=f"metrics (default {','.join(DFLT_METRICS)})",
    )
    p.add_argument(
        "--depth",
        type=search_k(),
        metavar="N",
        help="hits retrieved per case (default: the largest cutoff)",
    )
    p.add_argument(
        "--abstain-threshold",
        type=FINITE,
        metavar="SCORE",
        help="score abstention cases: correct when the top score is below SCORE",
    )
    p.add_argument("--run", metavar="FILE", help="also write the rankings as a TREC run file")
    p.add_argument("--rows", action="store_true", help="also print one row per case")
    p.set_defaults(func=_cmd_eval, verb_parser=p)


def _add_eval_select(sub: Any) -> None:
    """Add ``rowvoi eval-select`` to the subparsers."""
    p = sub.add_parser(
        "eval-select",
        help="measure what the selector commits to, apart from the ranking",
        description="Search corpus NAME for each case of CASES.jsonl, select as 'rowvoi "
        "discover' does, and score the commit: the conditional commit rate (of "
        "cases whose gold was retrieved, the share whose selection holds a gold "
        "id), selection precision, recall and F1, the mean selected size, the "
        "commit precision over all results and, for cases without gold, "
        "abstention accuracy.",
        epilog="example: rowvoi eval-select papers cases.jsonl --max-k 2 --rel 0.8",
    )
    _common(p)
    _selection_args(p)
    p.add_argument(
        "--max-k", type=integer(1), default=3, help="commit to at most this many (default 3)"
    )
    p.add_argument(
        "--rel",
        type=REL,
        default=0.9,
        help="keep results scoring at least this fraction of the top (default 0.9)",
    )
    p.add_argument(
        "--gap-ratio",
        type=REL,
        default=0.5,
        help="score_gap: cut below this fraction of the previous score (default 0.5)",
    )
    p.add_argument(
        "--min-score",
        type=FINITE,
        metavar="FLOAT",
        help="abstain below this absolute score (default: never)",
    )
    p.add_argument("--rows", action="store_true", help="also print one row per case")
    p.set_defaults(func=_cmd_eval_select, verb_parser=p)


def _add_sweep_select(sub: Any) -> None:
    """Add ``rowvoi sweep-select`` to the subparsers."""
    p = sub.add_parser(
        "sweep-select",
        help="tune the selector: a grid of settings from one search per case",
        description="Search corpus NAME once per case of CASES.jsonl, then score every "
        "setting of --max-k-grid x --rel-grid x --min-score-grid as "
        "'rowvoi eval-select' would, print the grid best --objective first, the "
        "best setting and the precision/recall frontier. --plot draws the "
        "frontier (needs matplotlib: pip install 'rowvoi[plot]'; exit 1 "
        "without it, checked before searching).",
        epilog="example: rowvoi sweep-select papers cases.jsonl --fusion blend --plot "
        "frontier.png",
    )
    _common(p)
    _selection_args(p)
    p.add_argument(
        "--max-k-grid",
        type=number_list(integer(1)),
        metavar="K1,K2",
        help="caps to try (default 1,2,3,5,8)",
    )
    p.add_argument(
        "--rel-grid",
        type=number_list(REL),
        metavar="R1,R2",
        help="relative bands to try, in (0, 1] (default 0.4,0.5,...,0.9)",
    )
    p.add_argument(
        "--min-score-grid",
        type=number_list(FINITE, none=True),
        metavar="F1,none",
        help="absolute floors to try; none = no floor (default none)",
    )
    p.add_argument(
        "--objective",
        default="selection_f1",
        choices=SWEEP_METRICS,
        help="what the best setting maximises (default selection_f1; the sizes are minimised)",
    )
    p.add_argument(
        "--held-out",
        type=integer(2),
        metavar="FOLDS",
        help="also tune on all folds but one and score the one left out, for each of "
        "FOLDS folds (case i in fold i %% FOLDS): the best setting's figure on cases it "
        "was not tuned on (the grid's best is tuned and scored on the same cases)",
    )
    p.add_argument(
        "--plot",
        metavar="FILE.png",
        help="draw the precision/recall frontier to FILE (.png, .svg or .pdf)",
    )
    p.set_defaults(func=_cmd_sweep_select, verb_parser=p)
