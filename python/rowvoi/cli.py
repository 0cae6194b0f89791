"""The ``rowvoi`` command line: a thin shell over the Python API.

Exit codes: 0 success, 1 failure (bad data, impossible key, solver error),
2 usage error (bad flags), 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["main", "build_parser"]


class CliError(Exception):
    """A failure to report as ``rowvoi: error: ...`` with exit code 1."""


class UsageError(Exception):
    """A bad flag value; exit code 2."""


# ---------------------------------------------------------------- helpers
def _read_table(path: str, index_col: str | None) -> Any:
    import pandas as pd

    p = Path(path)
    if not p.exists():
        raise CliError(f"{path}: no such file")
    suffix = p.suffix.lower()
    try:
        if suffix in (".parquet", ".pq"):
            try:
                df = pd.read_parquet(p)
            except ImportError as exc:
                raise CliError(
                    f"{path}: reading Parquet needs pyarrow: pip install 'rowvoi[parquet]'"
                ) from exc
        else:
            df = pd.read_csv(p)
    except CliError:
        raise
    except Exception as exc:  # noqa: BLE001 - any parse failure is a data error
        raise CliError(f"{path}: cannot read table: {exc}") from exc
    if index_col is not None:
        if index_col not in df.columns:
            raise UsageError(f"--index-col {index_col!r} is not a column of {path}")
        df = df.set_index(index_col)
    return df


def _split_list(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


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


def _parse_rows(df: Any, text: str | None, positions: bool) -> list[Any] | None:
    if text is None:
        return None
    out: list[Any] = []
    for tok in _split_list(text):
        if positions:
            if ":" in tok or "-" in tok[1:]:
                sep = ":" if ":" in tok else "-"
                a, b = tok.split(sep, 1)
                try:
                    lo, hi = int(a), int(b)
                except ValueError:
                    raise UsageError(f"--rows: {tok!r} is not a position range like 3:10") from None
                if sep == "-":
                    hi += 1  # "3-5" is inclusive
                idx = range(lo, hi)
            else:
                try:
                    idx = [int(tok)]
                except ValueError:
                    raise UsageError(f"--rows: {tok!r} is not a row position") from None
            for i in idx:
                if not 0 <= i < len(df):
                    raise UsageError(f"--rows: position {i} is outside 0..{len(df) - 1}")
                out.append(df.index[i])
        else:
            out.append(_coerce_label(tok, df.index))
    if not out:
        raise UsageError("--rows names no rows")
    return out


def _parse_costs(text: str | None) -> dict[str, float] | None:
    if text is None:
        return None
    p = Path(text)
    if text.endswith(".json") or (p.exists() and p.is_file()):
        try:
            data = json.loads(p.read_text())
        except OSError as exc:
            raise UsageError(f"--costs: cannot read {text}: {exc}") from exc
        except json.JSONDecodeError as exc:
            raise UsageError(f"--costs: {text} is not valid JSON: {exc}") from exc
        if not isinstance(data, dict):
            raise UsageError(f"--costs: {text} must hold a JSON object of column -> cost")
        return {str(k): v for k, v in data.items()}
    out: dict[str, float] = {}
    for item in _split_list(text):
        if "=" not in item:
            raise UsageError(f"--costs: {item!r} is not col=cost")
        col, val = item.rsplit("=", 1)
        try:
            out[col.strip()] = float(val)
        except ValueError:
            raise UsageError(f"--costs: {val!r} in {item!r} is not a number") from None
    return out


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

    df = _read_table(args.file, args.index_col)
    rows = _parse_rows(df, args.rows, args.positions)
    columns = _split_list(args.columns) if args.columns else None
    costs = _parse_costs(args.costs)
    return KeyProblem(df, rows, columns=columns, costs=costs)


# --------------------------------------------------------------- commands
def _cmd_key(args: argparse.Namespace) -> int:
    problem = _problem(args)
    key = problem.minimal_key(args.strategy, epsilon_pairs=args.epsilon,
                              time_limit=args.time_limit, seed=args.seed)
    n_pairs = problem.n_pairs
    covered = n_pairs - problem.unresolved_pairs(list(key))
    coverage = 1.0 if n_pairs == 0 else covered / n_pairs
    if args.json:
        print(json.dumps({
            "key": [_json_value(c) for c in key],
            "cost": key.cost,
            "strategy": key.strategy,
            "optimal": key.optimal,
            "timed_out": key.timed_out,
            "rows": len(problem.rows),
            "pairs": n_pairs,
            "covered_pairs": covered,
            "coverage": coverage,
        }))
        return 0
    note = " (proven optimal)" if key.optimal else (
        " (time limit reached; not proven optimal)" if key.timed_out else "")
    print(f"key: {', '.join(str(c) for c in key) if key else '(no columns needed)'}")
    print(f"cost: {_fmt_cost(key.cost)}{note}")
    print(f"rows: {len(problem.rows)}  pairs told apart: {covered}/{n_pairs} "
          f"({coverage:.1%})  strategy: {key.strategy}")
    return 0


def _cmd_path(args: argparse.Namespace) -> int:
    problem = _problem(args)
    path = problem.plan_path(objective=args.objective, weighting=args.weighting)
    if args.budget is not None:
        keep = len(path.prefix_for_budget(args.budget))
        path.steps = path.steps[:keep]
    if args.json:
        print(json.dumps({
            "rows": len(problem.rows),
            "pairs": problem.n_pairs,
            "objective": args.objective,
            "weighting": args.weighting,
            "steps": [{
                "column": _json_value(s.col),
                "newly_covered_pairs": s.newly_covered_pairs,
                "cumulative_covered_pairs": s.cumulative_covered_pairs,
                "coverage": s.coverage,
                "cost": s.marginal_cost,
                "cumulative_cost": s.cumulative_cost,
                "gain": s.newly_covered_weight,
            } for s in path.steps],
        }))
        return 0
    head = ["step", "column", "new pairs", "covered", "coverage", "cost", "total cost"]
    rows = [[str(i + 1), str(s.col), str(s.newly_covered_pairs),
             str(s.cumulative_covered_pairs), f"{s.coverage:.1%}",
             _fmt_cost(s.marginal_cost), _fmt_cost(s.cumulative_cost)]
            for i, s in enumerate(path.steps)]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(head)]
    right = {0, 2, 3, 4, 5, 6}

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    print(f"{len(problem.rows)} rows, {problem.n_pairs} pairs to tell apart")
    print(line(head))
    for r in rows:
        print(line(r))
    if path.steps and path.steps[-1].coverage < 1.0:
        left = problem.n_pairs - path.steps[-1].cumulative_covered_pairs
        print(f"{left} pair(s) stay unresolved: some rows are identical on every column")
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
    labels = [_value_label(v) for v in values]
    if len(labels) > limit:
        return " / ".join(labels[:limit]) + f" / ... ({len(labels)} values)"
    return " / ".join(labels)


def _ask_policy(args: argparse.Namespace, df: Any, costs: dict[str, float] | None) -> Any:
    from rowvoi.policies import CandidateMIPolicy, GreedyCoveragePolicy, MIPolicy

    if args.noise is not None and args.policy != "model":
        raise UsageError("--noise applies to --policy model only")
    if args.noise is not None and not 0.0 <= args.noise < 1.0:
        raise UsageError(f"--noise must be in [0, 1), got {args.noise:g}")
    if args.policy == "mi":
        return CandidateMIPolicy(costs=costs)
    if args.policy == "coverage":
        return GreedyCoveragePolicy(costs=costs)
    from rowvoi.ml import RowVoiModel

    model = RowVoiModel(noise=0.0 if args.noise is None else args.noise).fit(df)
    return MIPolicy(model, objective="mi_over_cost", feature_costs=costs)


def _cmd_ask(args: argparse.Namespace) -> int:
    from rowvoi.session import DisambiguationSession

    df = _read_table(args.file, args.index_col)
    rows = _parse_rows(df, args.rows, args.positions)
    if rows is None:
        rows = list(df.index)
    if not rows:
        raise CliError(f"{args.file}: the table has no rows")
    columns = _split_list(args.columns) if args.columns else list(df.columns)
    costs = _parse_costs(args.costs)
    if args.max_questions is not None and args.max_questions < 0:
        raise UsageError("--max-questions must be >= 0")
    policy = _ask_policy(args, df, costs)
    session = DisambiguationSession(df, rows, policy=policy, feature_costs=costs)
    from rowvoi.frame import resolve_columns

    columns = resolve_columns(df, columns, "--columns")
    talk = sys.stderr if args.json else sys.stdout
    interactive = sys.stdin.isatty()

    def say(text: str = "", end: str = "\n") -> None:
        print(text, end=end, file=talk, flush=True)

    transcript: list[dict[str, Any]] = []
    skipped: set[Any] = set()
    asked = 0
    reason = ""
    say(f"{len(rows)} candidate rows in {args.file}; answer each question with a value, "
        "or '?' (or nothing) if you don't know.")
    while True:
        state = session.state
        alive = int((state.posterior > 0).sum())
        top = ""
        if alive > 1 and state.max_posterior >= 0.5:
            best = state.candidate_rows[int(np.argmax(state.posterior))]
            top = f"; most probable: {best} (p = {state.max_posterior:.2f})"
        say(f"\n{alive} row{'s' if alive != 1 else ''} possible, "
            f"{state.entropy:.2f} bits of uncertainty{top}")
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
        say(f"{col}? [{_shorten(values)}]  (expected {bits:.2f} bits, cost {cost:g})")
        say("> ", end="")
        line = sys.stdin.readline()
        if line == "":
            if not interactive:
                say("")
            reason = "end of input"
            break
        answer = line.strip()
        if not interactive:
            say(answer)
        asked += 1
        entry: dict[str, Any] = {"column": _json_value(col), "answer": answer,
                                 "expected_bits": bits, "cost": cost,
                                 "rows_before": alive, "entropy_before": state.entropy}
        if answer in ("", "?"):
            skipped.add(col)
            entry.update(skipped=True, accepted=True)
            transcript.append(entry)
            say(f"(skipping {col})")
            continue
        found, value = _match_answer(values, answer)
        if not found:
            entry.update(skipped=False, accepted=False)
            transcript.append(entry)
            say(f"no remaining row has {col} = {answer!r}; "
                f"the possible values are: {_shorten(values, 30)}")
            continue
        step = session.observe(col, value)
        after = session.state
        entry.update(skipped=False, accepted=True, value=_json_value(value),
                     rows_after=int((after.posterior > 0).sum()),
                     entropy_after=step.entropy_after)
        transcript.append(entry)
    state = session.state
    order = np.argsort(-state.posterior, kind="stable")
    live = [int(i) for i in order if state.posterior[i] > 0]
    labels = [state.candidate_rows[i] for i in live]
    if args.json:
        print(json.dumps({
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
        }))
        return 0
    shown = labels[:10]
    if state.is_unique:
        say(f"\nidentified: {state.unique_row}")
    else:
        say(f"\nstopped ({reason}); {len(labels)} row{'s' if len(labels) != 1 else ''} "
            f"still match{'es' if len(labels) == 1 else ''}"
            + (", most probable first:" if labels else ""))
    if shown:
        print(df.loc[shown].to_string(), flush=True)
    if len(labels) > len(shown):
        print(f"... and {len(labels) - len(shown)} more", flush=True)
    return 0



# ------------------------------------------------------------ RAG commands
def _read_json(path: str) -> Any:
    p = Path(path)
    if not p.exists():
        raise CliError(f"{path}: no such file")
    try:
        return json.loads(p.read_text())
    except json.JSONDecodeError as exc:
        raise CliError(f"{path}: not valid JSON: {exc}") from exc
    except OSError as exc:
        raise CliError(f"{path}: cannot read: {exc}") from exc


def _context_inputs(path: str) -> tuple[list[Any], list[Any], dict[str, Any]]:
    """Chunks, claims and support from a SUPPORT.json file."""
    from rowvoi.rag import Chunk

    data = _read_json(path)
    if not isinstance(data, dict) or not {"chunks", "claims", "support"} <= set(data):
        raise CliError(f"{path}: expected an object with \"chunks\", \"claims\" and "
                       "\"support\" (see rowvoi context --help)")
    chunks = []
    for i, c in enumerate(data["chunks"]):
        if isinstance(c, dict):
            if "id" not in c:
                raise CliError(f"{path}: chunks[{i}] has no \"id\"")
            chunks.append(Chunk(c["id"], c.get("text", ""), c.get("tokens")))
        elif isinstance(c, (str, int)):
            chunks.append(c)
        else:
            raise CliError(f"{path}: chunks[{i}] must be an id or an object with an id")
    if not isinstance(data["claims"], list):
        raise CliError(f"{path}: \"claims\" must be a list")
    if not isinstance(data["support"], dict):
        raise CliError(f"{path}: \"support\" must map each claim to a list of chunk ids")
    return chunks, data["claims"], data["support"]


def _cmd_context(args: argparse.Namespace) -> int:
    from rowvoi.rag import plan_context_path, select_context

    chunks, claims, support = _context_inputs(args.file)
    costs = _parse_costs(args.costs)
    if args.budget is not None:
        path = plan_context_path(chunks, claims, support, costs=costs,
                                 weighting=args.weighting)
        keep = path.prefix_for_budget(args.budget)
        steps = path.steps[:len(keep)]
        covered = steps[-1].cumulative_covered if steps else 0
        total = len(claims)
        result = {"chunks": keep, "cost": steps[-1].cumulative_cost if steps else 0.0,
                  "budget": args.budget, "covered_claims": covered, "claims": total,
                  "coverage": 1.0 if total == 0 else covered / total,
                  "steps": [{"chunk": s.name, "newly_covered": s.newly_covered,
                             "coverage": s.coverage, "cost": s.marginal_cost,
                             "cumulative_cost": s.cumulative_cost} for s in steps]}
        if args.json:
            print(json.dumps(result))
            return 0
        print(f"within a budget of {args.budget:g}: {', '.join(map(str, keep)) or '(nothing)'}")
        for s in steps:
            print(f"  + {s.name}  covers {s.newly_covered} new claim(s), "
                  f"{s.coverage:.0%} after {s.cumulative_cost:g}")
        return 0
    sel = select_context(chunks, claims, support, costs=costs, epsilon_claims=args.epsilon,
                         strategy=args.strategy, time_limit=args.time_limit)
    if args.json:
        print(json.dumps({
            "chunks": [_json_value(c) for c in sel.chunks], "cost": sel.total_cost,
            "coverage": sel.coverage, "optimal": sel.optimal,
            "covered_claims": sorted(map(str, sel.covered_claims)),
            "missing_claims": sorted(map(str, sel.missing_claims)),
        }))
        return 0
    print(f"chunks: {', '.join(map(str, sel.chunks)) or '(none)'}")
    print(f"cost: {sel.total_cost:g}{' (proven optimal)' if sel.optimal else ''}")
    print(f"claims supported: {len(sel.covered_claims)}/{len(claims)} ({sel.coverage:.0%})")
    if sel.missing_claims:
        print("unsupported: " + ", ".join(sorted(map(str, sel.missing_claims))))
    return 0


def _parse_prior(text: str | None) -> list[float] | None:
    if text is None:
        return None
    p = Path(text)
    if text.endswith(".json") or (p.exists() and p.is_file()):
        data = _read_json(text)
        if not isinstance(data, list):
            raise UsageError(f"--prior: {text} must hold a JSON list of weights")
        return data
    try:
        return [float(t) for t in _split_list(text)]
    except ValueError:
        raise UsageError(f"--prior: {text!r} is not a comma-separated list of numbers") \
            from None


def _cmd_question(args: argparse.Namespace) -> int:
    from rowvoi.rag import next_question, question_values

    data = _read_json(args.file)
    answers = data["answers"] if isinstance(data, dict) and isinstance(
        data.get("answers"), dict) else data
    if not isinstance(answers, dict):
        raise CliError(f"{args.file}: expected an object mapping each question to the "
                       "answers the candidates imply")
    costs = _parse_costs(args.costs)
    prior = _parse_prior(args.prior)
    values = question_values(answers, prior=prior)
    best = next_question(answers, prior=prior, costs=costs)
    cost_of = {q: float((costs or {}).get(q, 1.0)) for q in values}
    ranked = sorted(values, key=lambda q: -values[q] / cost_of[q])
    if args.json:
        print(json.dumps({
            "best": best.col, "expected_bits": best.expected_voi,
            "questions": [{"question": q, "bits": values[q], "cost": cost_of[q],
                           "bits_per_cost": values[q] / cost_of[q]} for q in ranked],
        }))
        return 0
    print(f"{'bits':>6}  {'per cost':>8}  question")
    for q in ranked:
        mark = "  <- ask this" if q == best.col else ""
        print(f"{values[q]:6.2f}  {values[q] / cost_of[q]:8.2f}  {q}{mark}")
    if best.col is None:
        print("no question can tell the candidates apart")
    return 0


# ------------------------------------------------------------------ query
def _query_json(path: str, what: str) -> Any:
    """A JSON argument file ('-' is stdin); unreadable or malformed is a usage error."""
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text()
    except OSError as exc:
        raise UsageError(f"{what} {path}: cannot read: {exc.strerror or exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{what} {path}: not valid JSON: {exc.msg} at line {exc.lineno} "
                         f"column {exc.colno}") from None
    except RecursionError:
        raise UsageError(f"{what} {path}: JSON nested too deeply") from None


def _query_table(columns: Sequence[str], records: list[dict[str, Any]]) -> list[str]:
    cells = [[("null" if r[c] is None else str(r[c])) for c in columns] for r in records]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    numeric = [all(isinstance(r[c], (int, float)) or r[c] is None for r in records)
               for c in columns]

    def line(row: Sequence[str]) -> str:
        return "  ".join(v.rjust(w) if num else v.ljust(w)
                         for v, w, num in zip(row, widths, numeric)).rstrip()

    return [line(columns)] + [line(row) for row in cells]


def _cmd_query(args: argparse.Namespace) -> int:
    try:
        from rowvoi.query import QueryError, QuerySchema, infer_schema, run_query
        import duckdb  # noqa: F401  (the CLI runs every query through DuckDB)
    except ImportError:
        raise CliError("rowvoi query needs duckdb: pip install 'rowvoi[query]'") from None
    if args.describe == (args.query is not None):
        raise UsageError("give a QUERY.json file, or --describe to print the table's schema")
    if not Path(args.table).is_file():
        raise CliError(f"{args.table}: no such file")
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
        print(f"{args.table}: {len(schema)} queryable columns, at most {schema.max_limit} "
              "rows per answer")
        width = max((len(s.name) for s in schema.columns), default=0)
        for spec in schema.columns:
            detail = "integer" if spec.integer else ""
            if spec.values is not None:
                shown = ", ".join(spec.values[:8])
                detail = f"{len(spec.values)} values: {shown}" + (
                    ", ..." if len(spec.values) > 8 else "")
            print(f"  {spec.name.ljust(width)}  {spec.type.ljust(11)}  {detail}".rstrip())
        return 0
    result = run_query(args.table, _query_json(args.query, "QUERY"), schema)
    if args.json:
        print(json.dumps(result.to_dict()))
        return 0
    if result.scalar:
        for name in result.columns:
            value = result.records[0][name]
            print(f"{name}: {'null' if value is None else value}")
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
        "query", help="run a structured query (JSON, no code) over a CSV or Parquet file",
        description="Run a structured query over a CSV or Parquet table with DuckDB "
                    "(streamed: files larger than memory work). QUERY.json holds an object "
                    "such as {\"operation\": \"filtered_aggregate\", \"filters\": "
                    "{\"sector\": \"non-profit\"}, \"group_by\": \"sector\", "
                    "\"aggregations\": {\"income\": \"mean\"}}; operations select, "
                    "filter, aggregate, filtered_aggregate; filters use $eq $ne $in $nin "
                    "$lt $lte $gt $gte $exists $contains $and $or. It is checked against "
                    "the schema (inferred, or --schema) before it runs; every problem is "
                    "reported. Exit 1 if the query is refused.",
        epilog="example: rowvoi query table.parquet --describe --json > schema.json; "
               "rowvoi query table.parquet query.json --schema schema.json")
    p.add_argument("table", metavar="TABLE", help="the table: .csv, or .parquet/.pq")
    p.add_argument("query", metavar="QUERY.json", nargs="?",
                   help="the query as a JSON file ('-' reads standard input)")
    p.add_argument("--schema", metavar="SCHEMA.json",
                   help="allowed columns, types, operators and max_limit as JSON (the "
                        "format --describe --json prints); default: inferred from TABLE")
    p.add_argument("--describe", action="store_true",
                   help="print the table's schema instead of running a query")
    p.add_argument("--json", action="store_true", help="print JSON for programs")
    p.set_defaults(func=_cmd_query)


# ----------------------------------------------------------------- parser
def _add_table_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="table to read: .csv, or .parquet/.pq (needs pyarrow)")
    p.add_argument("--rows", metavar="LIST",
                   help="candidate rows, comma-separated labels of the index (default: "
                        "every row); with --positions, 0-based positions and ranges "
                        "such as 0:10 or 3-5")
    p.add_argument("--positions", action="store_true",
                   help="read --rows as positions instead of index labels")
    p.add_argument("--index-col", metavar="COL",
                   help="use this column as the row labels (default: row numbers 0..n-1)")
    p.add_argument("--columns", metavar="LIST",
                   help="comma-separated columns to consider (default: all)")
    p.add_argument("--costs", metavar="SPEC",
                   help="column costs as col=cost,col=cost or a JSON file "
                        "{\"col\": cost}; unlisted columns cost 1")
    p.add_argument("--json", action="store_true", help="print JSON for programs")


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of the ``rowvoi`` command."""
    from rowvoi import __version__
    from rowvoi.setcover import STRATEGIES

    parser = argparse.ArgumentParser(
        prog="rowvoi",
        description="Value of information over candidate rows: which columns settle "
                    "which row is meant, and in what order to ask them.")
    parser.add_argument("--version", action="version", version=f"rowvoi {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    pk = sub.add_parser(
        "key", help="cheapest set of columns that tells the rows apart",
        description="Find the cheapest set of columns whose values tell every pair of "
                    "candidate rows apart (a minimal key), and print it with its cost.")
    _add_table_args(pk)
    pk.add_argument("--strategy", choices=STRATEGIES, default="greedy",
                    help="solver: greedy (fast, any size), exact (branch and bound, "
                         "proves optimality), ilp/lp (pulp + CBC), sa, ga, hybrid "
                         "(default: greedy)")
    pk.add_argument("--epsilon", type=float, default=0.0, metavar="FRACTION",
                    help="fraction of row pairs allowed to stay unresolved (default 0)")
    pk.add_argument("--time-limit", type=float, default=None, metavar="SECONDS",
                    help="stop exact/ilp/sa/ga/hybrid after this long; an exact solver "
                         "that stops early says its key is not proven optimal")
    pk.add_argument("--seed", type=int, default=0,
                    help="seed for sa, ga and hybrid (default 0)")
    pk.set_defaults(func=_cmd_key)

    pp = sub.add_parser(
        "path", help="order in which to acquire columns, with coverage per step",
        description="Plan the greedy order in which to acquire columns: each step "
                    "shows the pairs it newly tells apart, the cumulative coverage "
                    "and the cost.")
    _add_table_args(pp)
    pp.add_argument("--objective", choices=("pair_coverage", "entropy"),
                    default="pair_coverage",
                    help="gain per step: newly resolved pairs, or the drop in the "
                         "expected log2 size of a row's cluster (default pair_coverage)")
    pp.add_argument("--weighting", choices=("uniform", "pair_idf"), default="uniform",
                    help="pair weights: uniform, or 1/(columns separating the pair)")
    pp.add_argument("--budget", type=float, default=None, metavar="COST",
                    help="print only the prefix of the path that fits this budget")
    pp.set_defaults(func=_cmd_path)

    pa = sub.add_parser(
        "ask", help="find a row by answering the most informative questions",
        description="Find one row of a table interactively. Each round shows how "
                    "many rows are still possible and the remaining uncertainty, "
                    "then asks for the column that is expected to tell the most "
                    "(per unit cost). Answer with the value, or '?' (or an empty "
                    "line) if you don't know -- that column is then skipped. The "
                    "session ends when one row is left, or nothing left to ask can "
                    "narrow the rows down, and prints the matching row(s). Answers "
                    "are read line by line from stdin, so a session can be "
                    "scripted: printf 'Porto\\n2024\\n' | rowvoi ask table.csv",
        epilog="example: rowvoi ask examples/data/customers.csv --index-col customer_id "
               "--costs examples/data/customers_costs.json")
    _add_table_args(pa)
    pa.add_argument("--policy", choices=("mi", "coverage", "model"), default="mi",
                    help="how to pick questions: mi (expected information gain on the "
                         "remaining rows), coverage (row pairs told apart), model "
                         "(a RowVoiModel fitted to the table; see --noise) "
                         "(default: mi)")
    pa.add_argument("--noise", type=float, default=None, metavar="P",
                    help="with --policy model: probability in [0, 1) that an answer is "
                         "wrong, so answers reweight the rows instead of ruling them out")
    pa.add_argument("--max-questions", type=int, default=None, metavar="N",
                    help="stop after asking N questions")
    pa.set_defaults(func=_cmd_ask)

    pc = sub.add_parser(
        "context", help="cheapest chunks that support every claim (RAG)",
        description="Select the cheapest set of retrieved chunks that supports every "
                    "claim an answer needs (weighted set cover, cost = tokens). FILE is "
                    "JSON: {\"chunks\": [{\"id\": ..., \"tokens\": ..., \"text\": ...}], "
                    "\"claims\": [...], \"support\": {claim: [chunk ids]}}. Claims no "
                    "chunk supports are reported, never dropped.")
    pc.add_argument("file", help="SUPPORT.json")
    pc.add_argument("--strategy", choices=STRATEGIES, default="greedy",
                    help="set cover solver (default: greedy)")
    pc.add_argument("--epsilon", type=float, default=0.0, metavar="FRACTION",
                    help="fraction of claims allowed to go unsupported (default 0)")
    pc.add_argument("--time-limit", type=float, default=None, metavar="SECONDS",
                    help="time limit for exact/ilp/sa/ga/hybrid")
    pc.add_argument("--budget", type=float, default=None, metavar="TOKENS",
                    help="instead of covering everything, print the greedy path's prefix "
                         "that fits this budget")
    pc.add_argument("--weighting", choices=("uniform", "idf"), default="uniform",
                    help="with --budget: weight claims equally, or favour scarce evidence")
    pc.add_argument("--costs", metavar="SPEC",
                    help="chunk costs overriding tokens: id=cost,... or a JSON file")
    pc.add_argument("--json", action="store_true", help="print JSON for programs")
    pc.set_defaults(func=_cmd_context)

    pq = sub.add_parser(
        "question", help="rank clarifying questions by information gain (RAG)",
        description="Rank clarifying questions by how many bits they are expected to "
                    "resolve about which candidate is meant, per unit cost. FILE is "
                    "JSON mapping each question to the answer each candidate implies "
                    "(or {\"answers\": {...}}).")
    pq.add_argument("file", help="ANSWERS.json")
    pq.add_argument("--costs", metavar="SPEC",
                    help="question costs (user patience): question=cost,... or a JSON file")
    pq.add_argument("--prior", metavar="WEIGHTS",
                    help="per-candidate prior weights, comma-separated or a JSON list "
                         "(default: uniform)")
    pq.add_argument("--json", action="store_true", help="print JSON for programs")
    pq.set_defaults(func=_cmd_question)
    _add_query_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``rowvoi`` command; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    for name in ("epsilon", "time_limit", "budget", "noise"):
        value = getattr(args, name, None)
        if value is not None and not math.isfinite(value):
            parser.error(f"--{name.replace('_', '-')} must be a finite number")
    try:
        return int(args.func(args))
    except UsageError as exc:
        parser.error(str(exc))
    except KeyboardInterrupt:
        print("rowvoi: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except (CliError, ValueError, TypeError, KeyError, OSError, RuntimeError,
            MemoryError) as exc:
        msg = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
        print(f"rowvoi: error: {msg}", file=sys.stderr)
        return 1
    return 0  # pragma: no cover - parser.error exits


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
