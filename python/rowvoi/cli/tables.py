"""The table verbs of the ``rowvoi`` command: key, path, ask.

Each reads a table (CSV, or Parquet with pyarrow) named on the command
line, through :func:`~rowvoi.cli._common.open_input` (a regular file
only), and works on its candidate rows (``--rows``, ``--positions``,
``--index-col``), columns (``--columns``) and column costs (``--costs``):
``key`` finds the cheapest set of columns that tells the rows apart
(:class:`rowvoi.keys.KeyProblem`), ``path`` plans the order in which to
acquire columns, ``ask`` finds one row interactively
(:class:`rowvoi.session.DisambiguationSession`). The decision modules load
pandas, so they are imported when a verb runs, never when the parser is
built.

Examples
--------
>>> import argparse
>>> sub = argparse.ArgumentParser(prog="rowvoi").add_subparsers()
>>> add_parsers(sub); list(sub.choices)
['key', 'path', 'ask']
>>> args = sub.choices["key"].parse_args(["t.csv", "--rows", "0:3,7", "--positions"])
>>> _row_spec(args.rows, args.positions)
[0, 1, 2, 7]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np

from rowvoi.cli._common import (
    BUDGET,
    COUNT,
    FRACTION,
    MAX_ANSWER_CHARS,
    PROBABILITY,
    SECONDS,
    CliError,
    UsageError,
    json_value,
    open_input,
    parse_costs,
    print_json,
    printable,
    proof,
    split_list,
)
from rowvoi.setcover import STRATEGIES

__all__ = ["add_parsers"]


#: pandas' compression of a CSV file, by the end of its name (a file read
#: through an open handle, as every table is, gets no inference of its own).
_COMPRESSION = (
    (".tar.gz", "tar"),
    (".tar.bz2", "tar"),
    (".tar.xz", "tar"),
    (".tar", "tar"),
    (".gz", "gzip"),
    (".bz2", "bz2"),
    (".zip", "zip"),
    (".xz", "xz"),
    (".zst", "zstd"),
)


def _read_table(path: str, index_col: str | None) -> Any:
    """The table a verb works on: a regular file only (a FIFO, a device
    such as /dev/zero or a directory is refused at once, exit 1), read
    from the descriptor that was checked."""
    import pandas as pd

    name = path.lower()
    with open_input(path) as f:
        try:
            if name.endswith((".parquet", ".pq")):
                try:
                    df = pd.read_parquet(f)
                except ImportError as exc:
                    raise CliError(
                        f"{path}: reading Parquet needs pyarrow: pip install 'rowvoi[parquet]'"
                    ) from exc
            else:
                method: Any = next((m for end, m in _COMPRESSION if name.endswith(end)), None)
                df = pd.read_csv(f, compression=method)
        except CliError:
            raise
        except Exception as exc:  # noqa: BLE001 - any parse failure is a data error
            raise CliError(f"{path}: cannot read table: {exc}") from exc
    if index_col is not None:
        if index_col not in df.columns:
            raise CliError(f"--index-col {index_col!r} is not a column of {path}")
        df = df.set_index(index_col)
    return df


def _parse_columns(text: str | None) -> list[str] | None:
    if text is None:
        return None
    columns = split_list(text)
    if not columns:
        raise UsageError(f"--columns {text!r} names no columns")
    return columns


def _coerce_label(token: str, index: Any) -> Any:
    """Match a command-line token to the index's label type."""
    import pandas as pd

    if pd.api.types.is_integer_dtype(index.dtype):
        try:
            return int(token)
        except ValueError:
            return token
    if pd.api.types.is_float_dtype(index.dtype):
        try:
            return float(token)
        except ValueError:
            return token
    return token


def _row_spec(text: str | None, positions: bool) -> list[Any] | None:
    """Parse ``--rows`` (usage errors only): labels as text, or positions
    as ints with ranges ``3:10`` (half-open) and ``3-5`` (inclusive)."""
    if text is None:
        return None
    out: list[Any] = []
    for tok in split_list(text):
        if not positions:
            out.append(tok)
        elif ":" in tok or "-" in tok[1:]:
            sep = ":" if ":" in tok else "-"
            a, b = tok.split(sep, 1)
            try:
                lo, hi = int(a), int(b)
            except ValueError:
                raise UsageError(f"--rows: {tok!r} is not a position range like 3:10") from None
            out.extend(range(lo, hi + 1 if sep == "-" else hi))
        else:
            try:
                out.append(int(tok))
            except ValueError:
                raise UsageError(f"--rows: {tok!r} is not a row position") from None
    if not out:
        raise UsageError(f"--rows {text!r} names no rows")
    return out


def _resolve_rows(df: Any, spec: list[Any] | None, positions: bool) -> list[Any] | None:
    """Row labels of a parsed ``--rows`` in the table (positions checked
    against its length; labels matched to the index's type)."""
    if spec is None:
        return None
    if not positions:
        return [_coerce_label(tok, df.index) for tok in spec]
    for i in spec:
        if not 0 <= i < len(df):
            raise CliError(f"--rows: position {i} is outside 0..{len(df) - 1}")
    return [df.index[i] for i in spec]


def _fmt_cost(x: float) -> str:
    return f"{x:g}"


def _problem(args: argparse.Namespace) -> Any:
    from rowvoi.keys import KeyProblem

    spec = _row_spec(args.rows, args.positions)
    columns = _parse_columns(args.columns)
    costs = parse_costs(args.costs)
    df = _read_table(args.file, args.index_col)
    rows = _resolve_rows(df, spec, args.positions)
    return KeyProblem(df, rows, columns=columns, costs=costs)


# --------------------------------------------------------------- commands
def _cmd_key(args: argparse.Namespace) -> int:
    problem = _problem(args)
    key = problem.minimal_key(
        args.strategy, epsilon_pairs=args.epsilon, time_limit=args.time_limit, seed=args.seed
    )
    n_pairs = problem.n_pairs
    covered = n_pairs - problem.unresolved_pairs(list(key))
    coverage = 1.0 if n_pairs == 0 else covered / n_pairs
    if args.json:
        print_json(
            {
                "key": [json_value(c) for c in key],
                "cost": key.cost,
                "strategy": key.strategy,
                "optimal": key.optimal,
                "timed_out": key.timed_out,
                "rows": len(problem.rows),
                "pairs": n_pairs,
                "covered_pairs": covered,
                "coverage": coverage,
            }
        )
        return 0
    print(f"key: {', '.join(printable(c) for c in key) if key else '(no columns needed)'}")
    print(f"cost: {_fmt_cost(key.cost)}")
    print(f"strategy: {proof(key.strategy, key.optimal, key.timed_out)}")
    print(f"rows: {len(problem.rows)}  pairs told apart: {covered}/{n_pairs} ({coverage:.1%})")
    return 0


def _cmd_path(args: argparse.Namespace) -> int:
    problem = _problem(args)
    path = problem.plan_path(objective=args.objective, weighting=args.weighting)
    n_pairs = problem.n_pairs
    # The whole greedy path stops only when no column tells another pair
    # apart: what it leaves unresolved is rows identical on every column.
    indistinct = n_pairs - (path.steps[-1].cumulative_covered_pairs if path.steps else 0)
    steps = path.steps
    if args.budget is not None:
        steps = steps[: len(path.prefix_for_budget(args.budget))]
    cut = path.steps[len(steps)] if len(steps) < len(path.steps) else None
    unresolved = n_pairs - (steps[-1].cumulative_covered_pairs if steps else 0)
    if args.json:
        print_json(
            {
                "rows": len(problem.rows),
                "pairs": n_pairs,
                "objective": args.objective,
                "weighting": args.weighting,
                "budget": args.budget,
                "stopped_by_budget": cut is not None,
                "unresolved_pairs": unresolved,
                "indistinguishable_pairs": indistinct,
                "steps": [
                    {
                        "column": json_value(s.col),
                        "newly_covered_pairs": s.newly_covered_pairs,
                        "cumulative_covered_pairs": s.cumulative_covered_pairs,
                        "coverage": s.coverage,
                        "cost": s.marginal_cost,
                        "cumulative_cost": s.cumulative_cost,
                        "gain": s.newly_covered_weight,
                    }
                    for s in steps
                ],
            }
        )
        return 0
    head = ["step", "column", "new pairs", "covered", "coverage", "cost", "total cost"]
    rows = [
        [
            str(i + 1),
            printable(s.col),
            str(s.newly_covered_pairs),
            str(s.cumulative_covered_pairs),
            f"{s.coverage:.1%}",
            _fmt_cost(s.marginal_cost),
            _fmt_cost(s.cumulative_cost),
        ]
        for i, s in enumerate(steps)
    ]
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(head)
    ]
    right = {0, 2, 3, 4, 5, 6}

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))
        ).rstrip()

    print(f"{len(problem.rows)} rows, {n_pairs} pairs to tell apart")
    print(line(head))
    for r in rows:
        print(line(r))
    identical = "some rows are identical on every column considered"
    if cut is not None:
        print(
            f"budget {_fmt_cost(args.budget)} reached: the next column, {printable(cut.col)} "
            f"(cost {_fmt_cost(cut.marginal_cost)}), would bring the total to "
            f"{_fmt_cost(cut.cumulative_cost)}; {unresolved} pair(s) stay unresolved"
            + (f", {indistinct} of them for good: {identical}" if indistinct else "")
        )
    elif unresolved:
        print(f"{unresolved} pair(s) stay unresolved: {identical}")
    return 0


# -------------------------------------------------------------------- ask
_MISSING_LABEL = "(missing)"


def _value_label(v: Any) -> str:
    from rowvoi._candidates import is_missing

    return _MISSING_LABEL if is_missing(v) else str(v)


def _possible_values(df: Any, state: Any, col: Any) -> list[Any]:
    """Distinct values of col among the candidates that still have mass."""
    rows = [r for r, p in zip(state.candidate_rows, state.posterior) if p > 0]
    seen: dict[str, Any] = {}
    for v in df.loc[rows, col].tolist():
        seen.setdefault(_value_label(v), v)
    return [seen[k] for k in sorted(seen)]


def _match_answer(values: list[Any], answer: str) -> tuple[bool, Any]:
    """Find the value an answer names: exact text, then case-insensitive
    text, then numeric equality. Returns (found, value)."""
    labels = [_value_label(v) for v in values]
    for i, lab in enumerate(labels):
        if lab == answer:
            return True, values[i]
    folded = [i for i, lab in enumerate(labels) if lab.casefold() == answer.casefold()]
    if len(folded) == 1:
        return True, values[folded[0]]
    try:
        x = float(answer)
    except ValueError:
        return False, None
    hits = []
    for i, v in enumerate(values):
        try:
            if not isinstance(v, (bool, str)) and float(v) == x:
                hits.append(i)
        except (TypeError, ValueError):
            continue
    if len(hits) == 1:
        return True, values[hits[0]]
    return False, None


def _shorten(values: list[Any], limit: int = 12) -> str:
    labels = [printable(_value_label(v)) for v in values]
    if len(labels) > limit:
        return " / ".join(labels[:limit]) + f" / ... ({len(labels)} values)"
    return " / ".join(labels)


def _ask_policy(args: argparse.Namespace, df: Any, costs: dict[Hashable, float] | None) -> Any:
    from rowvoi.policies import CandidateMIPolicy, GreedyCoveragePolicy, MIPolicy

    if args.policy == "mi":
        return CandidateMIPolicy(costs=costs)
    if args.policy == "coverage":
        return GreedyCoveragePolicy(costs=costs)
    from rowvoi.ml import RowVoiModel

    model = RowVoiModel(noise=0.0 if args.noise is None else args.noise).fit(df)
    return MIPolicy(model, objective="mi_over_cost", feature_costs=costs)


def _ask_setup(args: argparse.Namespace) -> tuple[Any, list[Any], list[Any], Any]:
    """The table, candidate rows, columns to ask and the session of
    ``rowvoi ask`` (arguments checked before the table is read)."""
    from rowvoi.frame import resolve_columns
    from rowvoi.session import DisambiguationSession

    if args.noise is not None and args.policy != "model":
        raise UsageError("--noise applies to --policy model only")
    spec = _row_spec(args.rows, args.positions)
    columns = _parse_columns(args.columns)
    costs = parse_costs(args.costs)
    df = _read_table(args.file, args.index_col)
    rows = _resolve_rows(df, spec, args.positions)
    if rows is None:
        rows = list(df.index)
    if not rows:
        raise CliError(f"{args.file}: the table has no rows")
    cols = resolve_columns(df, list(df.columns) if columns is None else columns, "--columns")
    policy = _ask_policy(args, df, costs)
    return df, rows, cols, DisambiguationSession(df, rows, policy=policy, feature_costs=costs)


def _cmd_ask(args: argparse.Namespace) -> int:
    df, rows, columns, session = _ask_setup(args)
    talk = sys.stderr if args.json else sys.stdout
    interactive = sys.stdin.isatty()

    def say(text: str = "", end: str = "\n") -> None:
        print(printable(text, keep="\n"), end=end, file=talk, flush=True)

    transcript: list[dict[str, Any]] = []
    skipped: set[Any] = set()
    asked = 0
    reason = ""
    say(
        f"{len(rows)} candidate rows in {args.file}; answer each question with a value, "
        "or '?' (or nothing) if you don't know."
    )
    while True:
        state = session.state
        alive = int((state.posterior > 0).sum())
        top = ""
        if alive > 1 and state.max_posterior >= 0.5:
            best = state.candidate_rows[int(np.argmax(state.posterior))]
            top = f"; most probable: {best} (p = {state.max_posterior:.2f})"
        say(
            f"\n{alive} row{'s' if alive != 1 else ''} possible, "
            f"{state.entropy:.2f} bits of uncertainty{top}"
        )
        if state.is_unique:
            reason = "identified"
            break
        if args.max_questions is not None and asked >= args.max_questions:
            reason = f"asked --max-questions ({args.max_questions})"
            break
        allowed = [c for c in columns if c not in state.observed_cols and c not in skipped]
        if not allowed:
            reason = "no columns left to ask"
            break
        suggestion = session.next_question(allowed)
        col = suggestion.col
        if col is None:
            reason = "no remaining column tells the rows apart"
            break
        values = _possible_values(df, state, col)
        bits = suggestion.expected_voi or 0.0
        cost = session.feature_costs.get(col, 1.0)
        say(f"{printable(col)}? [{_shorten(values)}]  (expected {bits:.2f} bits, cost {cost:g})")
        say("> ", end="")
        line = sys.stdin.readline(MAX_ANSWER_CHARS + 1)
        if len(line) > MAX_ANSWER_CHARS:  # e.g. stdin from /dev/zero: never a newline
            raise CliError(
                f"an answer longer than {MAX_ANSWER_CHARS:,} characters on standard "
                "input; answers are values of the table, one a line"
            )
        if line == "":
            if not interactive:
                say("")
            reason = "end of input"
            break
        answer = line.strip()
        if not interactive:
            say(answer)
        entry: dict[str, Any] = {
            "column": json_value(col),
            "answer": answer,
            "expected_bits": bits,
            "cost": cost,
            "rows_before": alive,
            "entropy_before": state.entropy,
        }
        if answer in ("", "?"):
            asked += 1  # a "don't know" is an answer; a rejected one is not
            skipped.add(col)
            entry.update(skipped=True, accepted=True)
            transcript.append(entry)
            say(f"(skipping {printable(col)})")
            continue
        found, value = _match_answer(values, answer)
        if not found:
            entry.update(skipped=False, accepted=False)
            transcript.append(entry)
            say(
                f"no remaining row has {printable(col)} = {answer!r}; "
                f"the possible values are: {_shorten(values, 30)}"
            )
            continue
        asked += 1
        step = session.observe(col, value)
        after = session.state
        entry.update(
            skipped=False,
            accepted=True,
            value=json_value(value),
            rows_after=int((after.posterior > 0).sum()),
            entropy_after=step.entropy_after,
        )
        transcript.append(entry)
    state = session.state
    order = np.argsort(-state.posterior, kind="stable")
    live = [int(i) for i in order if state.posterior[i] > 0]
    labels = [state.candidate_rows[i] for i in live]
    if args.json:
        print_json(
            {
                "file": args.file,
                "policy": args.policy,
                "candidates": len(rows),
                "steps": transcript,
                "stop_reason": reason,
                "unique": bool(state.is_unique),
                "rows": [json_value(r) for r in labels],
                "probabilities": [float(state.posterior[i]) for i in live],
                "questions": asked,
                "total_cost": session.cumulative_cost,
            }
        )
    else:
        _print_ask_outcome(df, state, labels, reason, say)
    if reason == "end of input":
        raise CliError(
            f"input ended before one row was identified; {len(labels)} rows still match"
        )
    return 0


def _print_ask_outcome(
    df: Any, state: Any, labels: list[Any], reason: str, say: Callable[..., None]
) -> None:
    """The human ending of ``rowvoi ask``: the row found, or why it stopped
    and the rows (at most 10) that still match, most probable first."""
    shown = labels[:10]
    if state.is_unique:
        say(f"\nidentified: {printable(state.unique_row)}")
    else:
        say(
            f"\nstopped ({reason}); {len(labels)} row{'s' if len(labels) != 1 else ''} "
            f"still match{'es' if len(labels) == 1 else ''}"
            + (", most probable first:" if labels else "")
        )
    if shown:
        print(printable(df.loc[shown].to_string(), keep="\n"), flush=True)
    if len(labels) > len(shown):
        print(f"... and {len(labels) - len(shown)} more", flush=True)


# ----------------------------------------------------------------- parsers
def _add_table_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="table to read: .csv, or .parquet/.pq (needs pyarrow)")
    p.add_argument(
        "--rows",
        metavar="LIST",
        help="candidate rows, comma-separated labels of the index (default: "
        "every row); with --positions, 0-based positions and ranges "
        "such as 0:10 or 3-5",
    )
    p.add_argument(
        "--positions", action="store_true", help="read --rows as positions instead of index labels"
    )
    p.add_argument(
        "--index-col",
        metavar="COL",
        help="use this column as the row labels (default: row numbers 0..n-1)",
    )
    p.add_argument(
        "--columns", metavar="LIST", help="comma-separated columns to consider (default: all)"
    )
    p.add_argument(
        "--costs",
        metavar="SPEC",
        help="column costs as col=cost,col=cost, or a JSON object "
        '{"col": cost} inline or in a .json file; costs are finite '
        "numbers >= 0 (0: free, taken first); unlisted columns cost 1",
    )
    p.add_argument("--json", action="store_true", help="print JSON for programs")


def add_parsers(sub: Any) -> None:
    """Register ``key``, ``path`` and ``ask`` on the ``rowvoi`` subparsers
    (see the module's example)."""
    _add_key(sub)
    _add_path(sub)
    _add_ask(sub)


def _add_key(sub: Any) -> None:
    """Add ``rowvoi key`` to the subparsers."""
    pk = sub.add_parser(
        "key",
        help="cheapest set of columns that tells the rows apart",
        description="Find the cheapest set of columns whose values tell every pair of "
        "candidate rows apart (a minimal key), and print it with its cost "
        "and whether the strategy proved it optimal: the default, greedy, "
        "is fast but proves nothing; exact (or ilp) proves the optimum.",
    )
    _add_table_args(pk)
    pk.add_argument(
        "--strategy",
        choices=STRATEGIES,
        default="greedy",
        help="solver: greedy (fast, any size), exact (branch and bound, "
        "proves optimality), ilp/lp (pulp + CBC), sa, ga, hybrid "
        "(default: greedy)",
    )
    pk.add_argument(
        "--epsilon",
        type=FRACTION,
        default=0.0,
        metavar="FRACTION",
        help="fraction of row pairs allowed to stay unresolved (default 0)",
    )
    pk.add_argument(
        "--time-limit",
        type=SECONDS,
        default=None,
        metavar="SECONDS",
        help="stop exact/ilp/sa/ga/hybrid after this long; an exact solver "
        "that stops early says its key is not proven optimal",
    )
    pk.add_argument("--seed", type=COUNT, default=0, help="seed for sa, ga and hybrid (default 0)")
    pk.set_defaults(func=_cmd_key, verb_parser=pk)


def _add_path(sub: Any) -> None:
    """Add ``rowvoi path`` to the subparsers."""
    pp = sub.add_parser(
        "path",
        help="order in which to acquire columns, with coverage per step",
        description="Plan the greedy order in which to acquire columns: each step "
        "shows the pairs it newly tells apart, the cumulative coverage "
        "and the cost.",
    )
    _add_table_args(pp)
    pp.add_argument(
        "--objective",
        choices=("pair_coverage", "entropy"),
        default="pair_coverage",
        help="gain per step: newly resolved pairs, or the drop in the "
        "expected log2 size of a row's cluster (default pair_coverage)",
    )
    pp.add_argument(
        "--weighting",
        choices=("uniform", "pair_idf"),
        default="uniform",
        help="pair weights: uniform, or 1/(columns separating the pair)",
    )
    pp.add_argument(
        "--budget",
        type=BUDGET,
        default=None,
        metavar="COST",
        help="print only the prefix of the path that fits this budget (>= 0), "
        "and say how many pairs it leaves unresolved",
    )
    pp.set_defaults(func=_cmd_path, verb_parser=pp)


def _add_ask(sub: Any) -> None:
    """Add ``rowvoi ask`` to the subparsers."""
    pa = sub.add_parser(
        "ask",
        help="find a row by answering the most informative questions",
        description="Find one row of a table interactively. Each round shows how "
        "many rows are still possible and the remaining uncertainty, "
        "then asks for the column that is expected to tell the most "
        "(per unit cost). Answer with the value, or '?' (or an empty "
        "line) if you don't know -- that column is then skipped. The "
        "session ends when one row is left, or nothing left to ask can "
        "narrow the rows down, and prints the matching row(s). Answers "
        "are read line by line from stdin, so a session can be scripted "
        "(example at the end). An answer no remaining row has is rejected, "
        "asked again and not counted as a question. Input that ends before "
        "a row is found exits with status 1. Example, run in the source "
        "tree (it identifies customer C007): "
        "printf 'Carla Reis\\npro\\n' | rowvoi ask examples/data/customers.csv "
        "--index-col customer_id --costs examples/data/customers_costs.json",
    )
    _add_table_args(pa)
    pa.add_argument(
        "--policy",
        choices=("mi", "coverage", "model"),
        default="mi",
        help="how to pick questions: mi (expected information gain on the "
        "remaining rows), coverage (row pairs told apart), model "
        "(a RowVoiModel fitted to the table; see --noise) "
        "(default: mi)",
    )
    pa.add_argument(
        "--noise",
        type=PROBABILITY,
        default=None,
        metavar="P",
        help="with --policy model: probability in [0, 1) that an answer is "
        "wrong, so answers reweight the rows instead of ruling them out",
    )
    pa.add_argument(
        "--max-questions",
        type=COUNT,
        default=None,
        metavar="N",
        help='stop after N answered questions (a "don\'t know" counts, a '
        "rejected answer does not)",
    )
    pa.set_defaults(func=_cmd_ask, verb_parser=pa)
