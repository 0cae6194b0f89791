"""The ``rowvoi`` command line: a thin shell over the Python API.

One exit-code rule for every verb, applied in one place (:func:`main`) and
stated once, in :data:`rowvoi._cli_common.EXIT_RULE` (the end of ``rowvoi
--help``, the man page and the README):

* **0** -- success.
* **1** -- a well-formed request that fails: a file that does not exist,
  cannot be read or is not a regular file, data that do not fit the request
  (a column, row or chunk the data do not have), an unknown or empty corpus,
  an impossible key, an infeasible cover, input that ends before ``rowvoi
  ask`` has found a row.
* **2** -- a malformed request, wrong whatever the data say: an unknown
  verb, flag or choice (``--mode fuzzy``); a number that does not parse, is
  not finite or is out of range (``--k -1``, a negative budget, an epsilon
  outside [0, 1]); a corpus name, ``--costs``/``--prior``/``--rows`` spec,
  pattern or JSON that does not parse, does not have the documented shape
  or nests too deeply, given inline or in a file named on the command line.
* **130** -- interrupted (Ctrl-C), wherever the interrupt lands.

Each error is one line on stderr, ``rowvoi VERB: error: ...``; a usage
error (2) prints the verb's usage line before it, as argparse does. Human
output is escaped (:func:`rowvoi._cli_common.printable`); ``--json`` output
is exact.
"""

from __future__ import annotations

import argparse
import json
import math
import numbers
import sys
import warnings
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from rowvoi._cli_common import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_RULE,
    EXIT_USAGE,
    MAX_ANSWER_CHARS,
    CliError as CliError,  # re-exported: verbs raise them
    EscapingWriter,
    UsageError as UsageError,
    corpus_names,
    integer,
    number as _number,
    open_input,
    printable,
    read_input_text,
)
from rowvoi.errors import RvError

__all__ = ["main", "build_parser"]


class _Parser(argparse.ArgumentParser):
    """argparse whose errors raise :class:`UsageError` instead of exiting, so
    that :func:`main` reports every error, and picks every exit code, in one
    place. Subparsers inherit the class."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message, self)


_FRACTION = _number("a fraction in [0, 1]", low=0.0, high=1.0)
_SECONDS = _number("a number of seconds > 0", low=0.0, low_open=True)
_BUDGET = _number("a finite number >= 0", low=0.0)
_PROBABILITY = _number("a probability in [0, 1)", low=0.0, high=1.0, high_open=True)
_COUNT = _number("an integer >= 0", low=0, integer=True)


# ---------------------------------------------------------------- helpers
_q = printable  # a value shown in human output (one line: line breaks escaped)


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


def _split_list(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def _parse_columns(text: str | None) -> list[str] | None:
    if text is None:
        return None
    columns = _split_list(text)
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
    for tok in _split_list(text):
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


def _read_json(path: str, option: str = "") -> Any:
    """A JSON document in a file named on the command line.

    A file that is missing, unreadable, not a regular file or larger than
    :data:`~rowvoi._cli_common.MAX_JSON_BYTES` fails the request (exit 1);
    text that is not JSON, or nests too deeply, is a malformed argument
    (exit 2).
    """
    where = f"{option}: {path}" if option else path
    text = read_input_text(path, option)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{where} is not valid JSON: {exc}") from None
    except RecursionError:
        raise UsageError(f"{where}: JSON nested too deeply") from None


_PLAIN = object()  # _json_argument: the value is in the option's plain syntax


def _json_argument(option: str, text: str) -> Any:
    """The JSON an option value holds: inline (it starts with ``{`` or
    ``[``) or in a file (a name ending in .json, or an existing path);
    ``_PLAIN`` when it is neither and the caller parses its plain syntax."""
    if text.lstrip()[:1] in ("{", "["):
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{option}: {text!r} is not valid JSON: {exc}") from None
        except RecursionError:
            raise UsageError(f"{option}: JSON nested too deeply") from None
    if text.endswith(".json") or Path(text).exists():
        return _read_json(text, option)  # a FIFO, device or folder is refused there
    return _PLAIN


def _parse_number(option: str, what: str, value: Any, *, text: bool) -> float:
    """A number from a spec: text that parses as one (``text=True``, the
    plain syntax) or a JSON number."""
    if text and isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            raise UsageError(f"{option}: {what} is {value!r}, which is not a number") from None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise UsageError(f"{option}: {what} is {value!r}, which is not a number")
    return float(value)


def _parse_costs(
    text: str | None, item: str = "column", option: str = "--costs"
) -> dict[Hashable, float] | None:
    """``name=cost,...``, a JSON object inline or in a file; every cost a
    finite number >= 0 (0: free; anything else is a usage error)."""
    if text is None:
        return None
    data = _json_argument(option, text)
    if data is not _PLAIN:
        if not isinstance(data, dict):
            raise UsageError(f"{option}: {text} must hold a JSON object of {item} -> cost")
        pairs: list[tuple[str, Any]] = [(str(k), v) for k, v in data.items()]
    else:
        pairs = []
        for entry in _split_list(text):
            name, eq, val = entry.rpartition("=")
            if not eq or not name.strip():
                raise UsageError(f"{option}: {entry!r} is not {item}=cost")
            pairs.append((name.strip(), val.strip()))
        if not pairs:
            raise UsageError(f"{option} {text!r} names no costs")
    out: dict[Hashable, float] = {}
    for name, val in pairs:
        cost = _parse_number(option, f"the cost of {name!r}", val, text=data is _PLAIN)
        if not (math.isfinite(cost) and cost >= 0):
            raise UsageError(
                f"{option}: the cost of {name!r} is {cost:g}; costs must be finite numbers "
                ">= 0 (0 for a free column)"
            )
        cost += 0.0  # -0 -> 0
        out[name] = cost
    return out


def _parse_prior(text: str | None) -> list[float] | None:
    """Comma-separated weights or a JSON list (inline or in a file): finite,
    >= 0 and not all zero."""
    if text is None:
        return None
    data = _json_argument("--prior", text)
    plain = data is _PLAIN
    if plain:
        data = _split_list(text)
    elif not isinstance(data, list):
        raise UsageError(f"--prior: {text} must hold a JSON list of weights")
    weights = [
        _parse_number("--prior", f"weight {i + 1}", w, text=plain) for i, w in enumerate(data)
    ]
    if not weights:
        raise UsageError(f"--prior {text!r} names no weights")
    if not all(math.isfinite(w) and w >= 0 for w in weights) or sum(weights) <= 0:
        raise UsageError(f"--prior: weights must be finite and >= 0, not all zero; got {text!r}")
    return weights


def _proof(strategy: str, optimal: bool, timed_out: bool = False) -> str:
    """Name the solver and say whether its answer is proven optimal, e.g.
    "exact (proven optimal)" or "greedy (not proven optimal)"."""
    if optimal:
        return f"{strategy} (proven optimal)"
    if timed_out:
        return f"{strategy} (time limit reached; not proven optimal)"
    return f"{strategy} (not proven optimal)"


def _json_value(v: Any) -> Any:
    """Make numpy scalars and other labels JSON-friendly."""
    if hasattr(v, "item") and callable(v.item):
        try:
            return v.item()
        except (ValueError, TypeError):
            pass
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    return str(v)


def _fmt_cost(x: float) -> str:
    return f"{x:g}"


def _problem(args: argparse.Namespace) -> Any:
    from rowvoi.keys import KeyProblem

    spec = _row_spec(args.rows, args.positions)
    columns = _parse_columns(args.columns)
    costs = _parse_costs(args.costs)
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
        print(
            json.dumps(
                {
                    "key": [_json_value(c) for c in key],
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
        )
        return 0
    print(f"key: {', '.join(printable(c) for c in key) if key else '(no columns needed)'}")
    print(f"cost: {_fmt_cost(key.cost)}")
    print(f"strategy: {_proof(key.strategy, key.optimal, key.timed_out)}")
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
        print(
            json.dumps(
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
                            "column": _json_value(s.col),
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
    costs = _parse_costs(args.costs)
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
        say(f"{_q(col)}? [{_shorten(values)}]  (expected {bits:.2f} bits, cost {cost:g})")
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
            "column": _json_value(col),
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
            say(f"(skipping {_q(col)})")
            continue
        found, value = _match_answer(values, answer)
        if not found:
            entry.update(skipped=False, accepted=False)
            transcript.append(entry)
            say(
                f"no remaining row has {_q(col)} = {answer!r}; "
                f"the possible values are: {_shorten(values, 30)}"
            )
            continue
        asked += 1
        step = session.observe(col, value)
        after = session.state
        entry.update(
            skipped=False,
            accepted=True,
            value=_json_value(value),
            rows_after=int((after.posterior > 0).sum()),
            entropy_after=step.entropy_after,
        )
        transcript.append(entry)
    state = session.state
    order = np.argsort(-state.posterior, kind="stable")
    live = [int(i) for i in order if state.posterior[i] > 0]
    labels = [state.candidate_rows[i] for i in live]
    if args.json:
        print(
            json.dumps(
                {
                    "file": args.file,
                    "policy": args.policy,
                    "candidates": len(rows),
                    "steps": transcript,
                    "stop_reason": reason,
                    "unique": bool(state.is_unique),
                    "rows": [_json_value(r) for r in labels],
                    "probabilities": [float(state.posterior[i]) for i in live],
                    "questions": asked,
                    "total_cost": session.cumulative_cost,
                }
            )
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
        say(f"\nidentified: {_q(state.unique_row)}")
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


# ------------------------------------------------------------ RAG commands


def _is_id(x: Any) -> bool:
    """A chunk id as JSON gives it: a string or an integer."""
    return isinstance(x, str) or (isinstance(x, int) and not isinstance(x, bool))


def _context_inputs(path: str) -> tuple[list[Any], list[str], dict[str, list[Any]]]:
    """Chunks, claims and support from a SUPPORT.json file.

    A document that does not follow the format in ``rowvoi context --help``
    is a usage error; ids that do not match up (support citing a chunk that
    is not listed) are left to :mod:`rowvoi.rag`, a failure of the request.
    """
    from rowvoi.rag import Chunk

    data = _read_json(path)

    def bad(what: str) -> UsageError:
        return UsageError(f"{path}: {what} (see rowvoi context --help)")

    if not isinstance(data, dict) or not {"chunks", "claims", "support"} <= set(data):
        raise bad('expected an object with "chunks", "claims" and "support"')
    if not isinstance(data["chunks"], list):
        raise bad('"chunks" must be a list')
    chunks: list[Any] = []
    for i, c in enumerate(data["chunks"]):
        if _is_id(c):
            chunks.append(c)
            continue
        if not isinstance(c, dict) or not _is_id(c.get("id")):
            raise bad(f'chunks[{i}] must be an id or an object with a string or integer "id"')
        tokens, text = c.get("tokens"), c.get("text", "")
        if tokens is not None and not (
            isinstance(tokens, int) and not isinstance(tokens, bool) and tokens >= 0
        ):
            raise bad(f"chunks[{i}].tokens must be an integer >= 0, got {tokens!r}")
        if not isinstance(text, str):
            raise bad(f"chunks[{i}].text must be a string")
        chunks.append(Chunk(c["id"], text, tokens))
    claims = data["claims"]
    if not isinstance(claims, list) or not all(isinstance(c, str) for c in claims):
        raise bad('"claims" must be a list of strings (the keys of "support")')
    support = data["support"]
    if not isinstance(support, dict) or not all(
        isinstance(v, list) and all(_is_id(x) for x in v) for v in support.values()
    ):
        raise bad('"support" must map each claim to a list of chunk ids')
    return chunks, claims, support


def _cmd_context(args: argparse.Namespace) -> int:
    from rowvoi.rag import plan_context_path, select_context

    costs = _parse_costs(args.costs, "chunk")
    chunks, claims, support = _context_inputs(args.file)
    steps: list[Any] = []
    if args.budget is not None:
        path = plan_context_path(chunks, claims, support, costs=costs, weighting=args.weighting)
        chosen = path.prefix_for_budget(args.budget)
        steps = path.steps[: len(chosen)]
        kept = set(chosen)
        covered: set[Hashable] = {c for c in claims if any(x in kept for x in support.get(c, ()))}
        cost = steps[-1].cumulative_cost if steps else 0.0
        optimal = False
    else:
        sel = select_context(
            chunks,
            claims,
            support,
            costs=costs,
            epsilon_claims=args.epsilon,
            strategy=args.strategy,
            time_limit=args.time_limit,
        )
        chosen, covered, cost, optimal = (
            sel.chunks,
            sel.covered_claims,
            sel.total_cost,
            sel.optimal,
        )
    # One shape with and without --budget: claim ids in the order of "claims".
    result: dict[str, Any] = {
        "chunks": [_json_value(c) for c in chosen],
        "cost": cost,
        "coverage": 1.0 if not claims else len(covered) / len(claims),
        "optimal": optimal,
        "claims": len(claims),
        "covered_claims": [c for c in claims if c in covered],
        "missing_claims": [c for c in claims if c not in covered],
    }
    if args.budget is not None:
        result["budget"] = args.budget
        result["steps"] = [
            {
                "chunk": _json_value(s.name),
                "newly_covered": s.newly_covered,
                "coverage": s.coverage,
                "cost": s.marginal_cost,
                "cumulative_cost": s.cumulative_cost,
            }
            for s in steps
        ]
    if args.json:
        print(json.dumps(result))
        return 0
    if args.budget is not None:
        print(f"within a budget of {args.budget:g}: {', '.join(map(_q, chosen)) or '(nothing)'}")
        for s in steps:
            print(
                f"  + {_q(s.name)}  covers {s.newly_covered} new claim(s), "
                f"{s.coverage:.0%} after {s.cumulative_cost:g}"
            )
    else:
        print(f"chunks: {', '.join(map(_q, chosen)) or '(none)'}")
        print(f"cost: {cost:g}")
        print(f"strategy: {_proof(args.strategy, optimal)}")
    print(f"claims supported: {len(covered)}/{len(claims)} ({result['coverage']:.0%})")
    if result["missing_claims"]:
        print("unsupported: " + ", ".join(map(_q, result["missing_claims"])))
    return 0


def _cmd_question(args: argparse.Namespace) -> int:
    from rowvoi import _validate as _v
    from rowvoi.rag import next_question, question_values

    costs = _parse_costs(args.costs, "question")
    prior = _parse_prior(args.prior)
    data = _read_json(args.file)
    answers = (
        data["answers"]
        if isinstance(data, dict) and isinstance(data.get("answers"), dict)
        else data
    )
    if not isinstance(answers, dict) or not all(isinstance(v, list) for v in answers.values()):
        raise UsageError(
            f"{args.file}: expected an object mapping each question to the "
            "list of answers the candidates imply (see rowvoi question --help)"
        )
    values = question_values(answers, prior=prior)
    best = next_question(answers, prior=prior, costs=costs)
    cost_of = {q: float((costs or {}).get(q, 1.0)) for q in values}

    def per_cost(q: Hashable) -> float:
        return _v.per_cost(values[q], cost_of[q])

    # by bits per cost; free questions (infinitely good value) first, the
    # most informative of them on top, as next_question chooses
    ranked = sorted(
        values, key=lambda q: (-per_cost(q), -values[q] if math.isinf(per_cost(q)) else 0.0)
    )
    if args.json:
        print(
            json.dumps(
                {
                    "best": best.col,
                    "expected_bits": best.expected_voi,
                    "questions": [
                        {
                            "question": q,
                            "bits": values[q],
                            "cost": cost_of[q],
                            # null for a free question (infinitely good value)
                            "bits_per_cost": (None if math.isinf(per_cost(q)) else per_cost(q)),
                        }
                        for q in ranked
                    ],
                }
            )
        )
        return 0
    print(f"{'bits':>6}  {'per cost':>8}  question")
    for q in ranked:
        mark = "  <- ask this" if q == best.col else ""
        print(f"{values[q]:6.2f}  {per_cost(q):8.2f}  {_q(q)}{mark}")
    if best.col is None:
        print("no question can tell the candidates apart")
    return 0


# ------------------------------------------------------------------ query
def _query_json(path: str, what: str) -> Any:
    """A JSON argument file ('-' is standard input): one that cannot be
    read fails the request (exit 1), text that is not JSON is malformed
    (exit 2)."""
    text = read_input_text(path, what)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"{what} {path}: not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except RecursionError:
        raise UsageError(f"{what} {path}: JSON nested too deeply") from None


def _query_table(columns: Sequence[str], records: list[dict[str, Any]]) -> list[str]:
    cells = [[("null" if r[c] is None else _q(r[c])) for c in columns] for r in records]
    heads = [_q(c) for c in columns]
    widths = [max([len(h)] + [len(row[i]) for row in cells]) for i, h in enumerate(heads)]
    numeric = [
        all(isinstance(r[c], (int, float)) or r[c] is None for r in records) for c in columns
    ]

    def line(row: Sequence[str]) -> str:
        return "  ".join(
            v.rjust(w) if num else v.ljust(w) for v, w, num in zip(row, widths, numeric)
        ).rstrip()

    return [line(heads)] + [line(row) for row in cells]


def _cmd_query(args: argparse.Namespace) -> int:
    try:
        import duckdb  # noqa: F401  (the CLI runs every query through DuckDB)

        from rowvoi.query import QueryError, QuerySchema, infer_schema, run_query
    except ImportError:
        raise CliError("rowvoi query needs duckdb: pip install 'rowvoi[query]'") from None
    if args.describe == (args.query is not None):
        raise UsageError("give a QUERY.json file, or --describe to print the table's schema")
    open_input(args.table).close()  # a regular file (DuckDB reads it by name)
    schema = None
    if args.schema is not None:
        try:
            schema = QuerySchema.from_dict(_query_json(args.schema, "--schema"))
        except QueryError as exc:
            raise UsageError(f"--schema {args.schema}: {exc}") from None
    if args.describe:
        schema = schema or infer_schema(args.table)
        if args.json:
            print(json.dumps(schema.to_dict(), indent=2))
            return 0
        print(
            f"{_q(args.table)}: {len(schema)} queryable columns, at most {schema.max_limit} "
            "rows per answer"
        )
        width = max((len(_q(s.name)) for s in schema.columns), default=0)
        for spec in schema.columns:
            detail = "integer" if spec.integer else ""
            if spec.values is not None:
                shown = ", ".join(map(_q, spec.values[:8]))
                detail = f"{len(spec.values)} values: {shown}" + (
                    ", ..." if len(spec.values) > 8 else ""
                )
            print(f"  {_q(spec.name).ljust(width)}  {spec.type.ljust(11)}  {detail}".rstrip())
        return 0
    result = run_query(args.table, _query_json(args.query, "QUERY"), schema)
    if args.json:
        print(json.dumps(result.to_dict()))
        return 0
    if result.scalar:
        for name in result.columns:
            value = result.records[0][name]
            print(f"{_q(name)}: {'null' if value is None else _q(value)}")
        return 0
    for line in _query_table(result.columns, result.records):
        print(line)
    n = len(result.records)
    note = f"{n} row{'s' if n != 1 else ''}"
    if result.truncated:
        note += f"; more match (limit {result.limit})"
    if result.clamped:
        note += f"; limit {result.requested_limit} clamped to {result.limit}"
    print(f"({note})")
    return 0


def _add_query_parser(sub: Any) -> None:
    p = sub.add_parser(
        "query",
        help="run a structured query (JSON, no code) over a CSV or Parquet file",
        description="Run a structured query over a CSV or Parquet table with DuckDB "
        "(streamed: files larger than memory work). QUERY.json holds an object "
        'such as {"operation": "filtered_aggregate", "filters": '
        '{"sector": "non-profit"}, "group_by": "sector", '
        '"aggregations": {"income": "mean"}}; operations select, '
        "filter, aggregate, filtered_aggregate; filters use $eq $ne $in $nin "
        "$lt $lte $gt $gte $exists $contains $and $or. It is checked against "
        "the schema (inferred, or --schema) before it runs; every problem is "
        "reported. Exit 1 if the query is refused.",
        epilog="example: rowvoi query table.parquet --describe --json > schema.json; "
        "rowvoi query table.parquet query.json --schema schema.json",
    )
    p.add_argument("table", metavar="TABLE", help="the table: .csv, or .parquet/.pq")
    p.add_argument(
        "query",
        metavar="QUERY.json",
        nargs="?",
        help="the query as a JSON file ('-' reads standard input)",
    )
    p.add_argument(
        "--schema",
        metavar="SCHEMA.json",
        help="allowed columns, types, operators and max_limit as JSON (the "
        "format --describe --json prints); default: inferred from TABLE",
    )
    p.add_argument(
        "--describe",
        action="store_true",
        help="print the table's schema instead of running a query",
    )
    p.add_argument("--json", action="store_true", help="print JSON for programs")
    p.set_defaults(func=_cmd_query, verb_parser=p)


# --------------------------------------------------------------- discover
def _discover_floor(text: str | None, names: list[str]) -> Any:
    """``--min-score``: FLOAT or auto for one corpus; auto or
    NAME=FLOAT|auto,... for several (usage errors only)."""
    if text is None:
        return None

    def one(token: str, option: str) -> Any:
        if token == "auto":
            return "auto"
        try:
            value = float(token)
        except ValueError:
            raise UsageError(f"{option}: {token!r} is not a number or 'auto'") from None
        if not math.isfinite(value):
            raise UsageError(f"{option}: {token!r} must be finite")
        return value

    if "=" not in text:
        value = one(text.strip(), "--min-score")
        if len(names) > 1 and value != "auto":
            raise UsageError(
                "--min-score: one number cannot be the floor of several "
                "corpora (their scores live on different scales); give "
                "'auto' or NAME=FLOAT,NAME=FLOAT"
            )
        return value
    floors: dict[str, Any] = {}
    for item in _split_list(text):
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise UsageError(f"--min-score: {item!r} is not NAME=FLOAT or NAME=auto")
        if name.strip() not in names:
            raise UsageError(
                f"--min-score names {name.strip()!r}, which is not one of the "
                f"corpora searched ({', '.join(names)})"
            )
        floors[name.strip()] = one(value.strip(), f"--min-score {name.strip()}")
    return floors if len(names) > 1 else floors[names[0]]


def _indent(text: str, prefix: str = "     ", max_lines: int = 40) -> list[str]:
    lines = text.splitlines() or [""]
    out = [prefix + line for line in lines[:max_lines]]
    if len(lines) > max_lines:
        out.append(f"{prefix}... ({len(lines) - max_lines} more lines)")
    return out


def _cmd_discover(args: argparse.Namespace) -> int:
    from rowvoi.corpus import NoFloorWarning, discover
    from rowvoi.corpus.retrieval.selection import _has_evidence as _evidence, floor_score

    names = args.names
    floor = _discover_floor(args.min_score, names)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", NoFloorWarning)
        result = discover(
            names if len(names) > 1 else names[0],
            args.query,
            k=args.k,
            mode=args.mode,
            strategy=args.strategy,
            max_k=args.max_k,
            rel=args.rel,
            min_score=floor,
            fusion=args.fusion,
            disclose_level="body" if args.disclose else "metadata",
            roots=args.root,
        )
    for w in caught:
        if issubclass(w.category, NoFloorWarning):
            print(f"{args.verb_parser.prog}: warning: {_q(w.message)}", file=sys.stderr)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if args.json:
        print(json.dumps(result.to_dict()))
        return 0
    sig = result.signals
    print(
        f"{len(result.results)} of {result.n_retrieved} retrieved "
        f"({result.mode}, {result.strategy}): {result.reason}"
    )
    # a floor compares each hit's floor_score: a hybrid RRF hit's evidence
    # (its blend score), not its rank-only RRF score; every line that shows
    # a floor shows the number compared with it, labelled
    per_source = sig.get("per_source") or {}
    for name, ps in per_source.items():
        top = "-" if ps["top_score"] is None else f"{ps['top_score']:.4g}"
        floor_text = ""
        if ps["floor"] is not None:
            ev = ps.get("top_evidence")
            floor_text = f", floor {ps['floor']:.4g}" + (
                "" if ev is None else f" on the evidence (top evidence {ev:.4g})"
            )
        gated = "; gated" if ps["abstained"] and ps["n_retrieved"] else ""
        none = f" (no hits: {_q(ps['no_hits'])})" if ps.get("no_hits") else ""
        print(f"  {_q(name)}: {ps['n_retrieved']} retrieved{none}, top {top}{floor_text}{gated}")
    if sig.get("no_hits"):
        print(f"  no hits: {_q(sig['no_hits'])}")
    floor = sig.get("min_score")
    on_evidence = sig.get("floor_compares") == "evidence"
    what = "evidence" if on_evidence else "score"
    if floor is not None and sig.get("top_floor_score") is not None:
        top = sig["top_floor_score"]
        if result.abstained:
            print(f"  top {what} {top:.4g} is below the floor {floor:.4g}")
        else:
            how = "its blend score; an RRF score depends on ranks only" if on_evidence else ""
            print(
                f"  floor {floor:.4g} ({sig.get('floor_from')}), compared with each hit's "
                f"{what}{f' ({how})' if how else ''}: top {what} {top:.4g}"
            )
    selected = result.selection.selected if result.selection is not None else []
    for i, d in enumerate(result.results, 1):
        who = _q(f"{d.source}/{d.artifact_id}" if len(names) > 1 else d.artifact_id)
        name = f"  {_q(d.name)}" if d.name != str(d.artifact_id) else ""
        hit_floor = per_source.get(d.source, {}).get("floor") if per_source else floor
        compared = ""
        if hit_floor is not None and i <= len(selected) and _evidence(selected[i - 1]):
            compared = f"  (evidence {floor_score(selected[i - 1]):.4g}, floor {hit_floor:.4g})"
        print(f"{i:2d}. {d.score:.4g}  {who}{name}{compared}")
        if d.pointer:
            print(f"     {_q(d.pointer)}")
        summary = " ".join(d.summary.split())
        if summary or not d.metadata.get("disclosure"):
            print(f"     {_q(summary[:160])}{'...' if len(summary) > 160 else ''}")
        elif not args.disclose:
            print(f"     (not disclosed: {_q(d.metadata['disclosure'])})")
        if args.disclose:
            if d.body is not None:
                print("     ---")
                for line in _indent(d.body):
                    print(_q(line.expandtabs(8)))
            elif d.metadata.get("disclosure"):
                print(f"     (body not read: {_q(d.metadata['disclosure'])})")
    return 0


def _add_discover_parser(sub: Any) -> None:
    from rowvoi.corpus import FUSIONS, MODES
    from rowvoi.corpus.retrieval.rank import MAX_FETCH_K
    from rowvoi.corpus import SELECT_STRATEGIES

    p = sub.add_parser(
        "discover",
        help="search corpora and commit to the few results worth reading",
        description="Search one or more built corpora, then commit to the few results an "
        "agent or a person should act on -- or abstain. The conservative "
        "strategy keeps the top result and those scoring at least --rel times "
        "its score, at most --max-k. Several corpora (NAME,NAME) are searched "
        "separately, each gated on its own floor, then fused by rank "
        "(reciprocal rank fusion): scores of different corpora are never "
        "compared. --min-score turns on abstention: a floor on the search's "
        "own score scale, 'auto' for the floor calibrated for the corpus "
        "(none stored: a warning, and no floor), or NAME=FLOAT,... per corpus. "
        "--disclose reads each result's file (only inside the corpus's root, or "
        "the --root folders). "
        "Exit 1 for an unknown or empty corpus.",
        epilog="example: rowvoi discover notes 'how do I rotate the TLS certificate' "
        "--disclose; rowvoi discover notes,wiki 'vpn setup' --min-score auto --json",
    )
    p.add_argument(
        "names",
        metavar="NAME[,NAME...]",
        type=corpus_names,
        help="the corpus, or several, comma-separated",
    )
    p.add_argument("query", metavar="QUERY", help="what to look for (searched verbatim)")
    p.add_argument(
        "--k",
        type=integer(1, MAX_FETCH_K),
        default=10,
        help=f"candidates retrieved per corpus, 1 .. {MAX_FETCH_K} (default 10)",
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
        help="hybrid fusion: rrf (rank-based, default) or blend (keeps score "
        "magnitudes; pairs with --min-score)",
    )
    p.add_argument(
        "--strategy",
        choices=SELECT_STRATEGIES,
        default="conservative",
        help="selection rule (default conservative)",
    )
    p.add_argument(
        "--max-k",
        type=_number("an integer >= 1", low=1, integer=True),
        default=3,
        help="commit to at most this many results (default 3)",
    )
    p.add_argument(
        "--rel",
        type=_number("a number in (0, 1]", low=0.0, low_open=True, high=1.0),
        default=0.9,
        help="keep results scoring at least this fraction of the top (default 0.9)",
    )
    p.add_argument(
        "--min-score",
        metavar="FLOAT|auto|NAME=FLOAT,...",
        help="abstain below this floor (default: never abstain)",
    )
    p.add_argument(
        "--disclose",
        action="store_true",
        help="also print each result's body (the file it points to)",
    )
    p.add_argument(
        "--root",
        metavar="DIR",
        action="append",
        help="with --disclose: read bodies only from inside DIR (repeatable; "
        "default: the folder each corpus was built from)",
    )
    p.add_argument("--json", action="store_true", help="print JSON for programs")
    p.set_defaults(func=_cmd_discover, verb_parser=p)


def _add_corpus_parsers(sub: Any) -> None:
    """The corpus verbs (build, register, search, ls, info, rm) live in
    :mod:`rowvoi.corpus.cli`; maintain and coverage in
    :mod:`rowvoi.corpus.maintain_cli`."""
    from rowvoi.corpus.cli import add_parsers
    from rowvoi.corpus.maintain_cli import add_parsers as add_maintain_parsers

    add_parsers(sub)
    add_maintain_parsers(sub)  # maintain, coverage


def _add_graph_parser(sub: Any) -> None:
    """``rowvoi graph`` lives in :mod:`rowvoi.graph.cli`."""
    from rowvoi.graph.cli import add_parser

    add_parser(sub)


# ----------------------------------------------------------------- parser
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


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of the ``rowvoi`` command."""
    from rowvoi import __version__
    from rowvoi.setcover import STRATEGIES

    parser = _Parser(
        prog="rowvoi",
        description="Value of information over candidate rows: which columns settle "
        "which row is meant, and in what order to ask them.",
        epilog=EXIT_RULE,
    )
    parser.add_argument("--version", action="version", version=f"rowvoi {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

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
        type=_FRACTION,
        default=0.0,
        metavar="FRACTION",
        help="fraction of row pairs allowed to stay unresolved (default 0)",
    )
    pk.add_argument(
        "--time-limit",
        type=_SECONDS,
        default=None,
        metavar="SECONDS",
        help="stop exact/ilp/sa/ga/hybrid after this long; an exact solver "
        "that stops early says its key is not proven optimal",
    )
    pk.add_argument(
        "--seed", type=_COUNT, default=0, help="seed for sa, ga and hybrid (default 0)"
    )
    pk.set_defaults(func=_cmd_key, verb_parser=pk)

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
        type=_BUDGET,
        default=None,
        metavar="COST",
        help="print only the prefix of the path that fits this budget (>= 0), "
        "and say how many pairs it leaves unresolved",
    )
    pp.set_defaults(func=_cmd_path, verb_parser=pp)

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
        type=_PROBABILITY,
        default=None,
        metavar="P",
        help="with --policy model: probability in [0, 1) that an answer is "
        "wrong, so answers reweight the rows instead of ruling them out",
    )
    pa.add_argument(
        "--max-questions",
        type=_COUNT,
        default=None,
        metavar="N",
        help='stop after N answered questions (a "don\'t know" counts, a '
        "rejected answer does not)",
    )
    pa.set_defaults(func=_cmd_ask, verb_parser=pa)

    pc = sub.add_parser(
        "context",
        help="cheapest chunks that support every claim (RAG)",
        description="Select the cheapest set of retrieved chunks that supports every "
        "claim an answer needs (weighted set cover, cost = tokens). FILE is "
        'JSON: {"chunks": [{"id": ..., "tokens": ..., "text": ...}], '
        '"claims": [...], "support": {claim: [chunk ids]}}. Claims no '
        "chunk supports are reported, never dropped. With --json the output "
        "has the same fields with or without --budget: chunks, cost, "
        "coverage, optimal, claims (how many), covered_claims and "
        'missing_claims (lists of claim ids, in the order of "claims"); '
        "--budget adds budget and steps.",
    )
    pc.add_argument("file", help="SUPPORT.json")
    pc.add_argument(
        "--strategy",
        choices=STRATEGIES,
        default="greedy",
        help="set cover solver (default: greedy)",
    )
    pc.add_argument(
        "--epsilon",
        type=_FRACTION,
        default=0.0,
        metavar="FRACTION",
        help="fraction of claims allowed to go unsupported (default 0)",
    )
    pc.add_argument(
        "--time-limit",
        type=_SECONDS,
        default=None,
        metavar="SECONDS",
        help="time limit for exact/ilp/sa/ga/hybrid",
    )
    pc.add_argument(
        "--budget",
        type=_BUDGET,
        default=None,
        metavar="TOKENS",
        help="instead of covering everything, print the greedy path's prefix "
        "that fits this budget (>= 0)",
    )
    pc.add_argument(
        "--weighting",
        choices=("uniform", "idf"),
        default="uniform",
        help="with --budget: weight claims equally, or favour scarce evidence",
    )
    pc.add_argument(
        "--costs",
        metavar="SPEC",
        help="chunk costs overriding tokens: id=cost,..., or a JSON object "
        "inline or in a .json file",
    )
    pc.add_argument("--json", action="store_true", help="print JSON for programs")
    pc.set_defaults(func=_cmd_context, verb_parser=pc)

    pq = sub.add_parser(
        "question",
        help="rank clarifying questions by information gain (RAG)",
        description="Rank clarifying questions by how many bits they are expected to "
        "resolve about which candidate is meant, per unit cost. FILE is "
        "JSON mapping each question to the answer each candidate implies "
        '(or {"answers": {...}}).',
    )
    pq.add_argument("file", help="ANSWERS.json")
    pq.add_argument(
        "--costs",
        metavar="SPEC",
        help="question costs (user patience): question=cost,..., or a JSON "
        "object inline or in a .json file (use JSON when a question "
        "holds a comma)",
    )
    pq.add_argument(
        "--prior",
        metavar="WEIGHTS",
        help="per-candidate prior weights (finite, >= 0, not all zero), "
        "comma-separated, or a JSON list inline or in a .json file "
        "(default: uniform)",
    )
    pq.add_argument("--json", action="store_true", help="print JSON for programs")
    pq.set_defaults(func=_cmd_question, verb_parser=pq)
    _add_query_parser(sub)
    _add_corpus_parsers(sub)
    from rowvoi.corpus.eval_cli import add_parsers as add_eval_parsers

    add_eval_parsers(sub)  # eval, eval-select, sweep-select
    _add_graph_parser(sub)
    _add_discover_parser(sub)
    from rowvoi.corpus.calibrate_cli import add_parser as add_calibrate_parser

    add_calibrate_parser(sub)
    return parser


def _report(parser: argparse.ArgumentParser, code: int, message: str) -> int:
    """Print one error line (after the usage line for a usage error) and
    return the exit code: the one place that writes errors. The message is
    escaped (it may quote a file name or a value)."""
    if code == EXIT_USAGE:
        parser.print_usage(sys.stderr)
    print(f"{parser.prog}: error: {printable(message)}", file=sys.stderr, flush=True)
    return code


_format_warning = warnings.formatwarning


def _escaped_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    line: str | None = None,
) -> str:
    """``warnings.formatwarning`` while a verb runs: the usual text, escaped."""
    text = _format_warning(message, category, filename, lineno, line)
    return printable(text.rstrip("\n"), keep="\n") + "\n"


@contextmanager
def _human_output(human: bool) -> Iterator[None]:
    """While a verb runs: its stdout escaped unless it prints JSON, and
    warnings shown escaped (see :func:`rowvoi._cli_common.printable`)."""
    saved, formatter = sys.stdout, warnings.formatwarning
    warnings.formatwarning = _escaped_warning
    if human:
        sys.stdout = EscapingWriter(saved)
    try:
        yield
    finally:
        sys.stdout, warnings.formatwarning = saved, formatter


def _run(argv: Sequence[str] | None, where: list[argparse.ArgumentParser]) -> int:
    """:func:`main` without its last resort: parse, run, map errors to codes.
    ``where[0]`` follows the parser of the verb, for the messages."""
    parser = build_parser()
    where[:] = [parser]
    try:
        args, extra = parser.parse_known_args(argv)
        where[:] = [args.verb_parser]
        if extra:
            raise UsageError(f"unrecognized arguments: {' '.join(extra)}")
        with _human_output(not getattr(args, "json", False)):
            return int(args.func(args))
    except SystemExit as exc:  # --help and --version
        return exc.code if isinstance(exc.code, int) else EXIT_OK
    except UsageError as exc:
        return _report(exc.parser or where[0], EXIT_USAGE, str(exc))
    except BrokenPipeError:
        return EXIT_OK
    except (
        CliError,
        RvError,
        ValueError,
        TypeError,
        KeyError,
        OSError,
        RuntimeError,
        MemoryError,
    ) as exc:
        msg = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
        return _report(where[0], EXIT_FAILURE, msg)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``rowvoi`` command; returns the exit code.

    The rule (:data:`rowvoi._cli_common.EXIT_RULE`): 0 ok; 1 a well-formed
    request that fails; 2 a malformed request (usage); 130 interrupted --
    a ``KeyboardInterrupt`` wherever it lands, building the parser,
    parsing, running the verb or reporting an error.
    """
    where: list[argparse.ArgumentParser] = []
    try:
        return _run(argv, where)
    except KeyboardInterrupt:
        prog = where[0].prog if where else "rowvoi"
        try:
            print(f"{prog}: interrupted", file=sys.stderr, flush=True)
        except (KeyboardInterrupt, OSError):
            pass  # a second Ctrl-C, or no stderr: the exit code says it
        return EXIT_INTERRUPTED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
