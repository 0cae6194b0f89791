"""The ``rowvoi query`` verb: a structured query (JSON, no code) over a CSV
or Parquet file.

The query is checked against the table's schema (inferred, or
``--schema``) and run by DuckDB (:func:`rowvoi.query.run_query`); DuckDB is
an optional dependency (``pip install 'rowvoi[query]'``), imported when the
verb runs: without it the verb fails (exit 1) and says what to install.
``--describe`` prints the schema instead.

Examples
--------
>>> import argparse
>>> sub = argparse.ArgumentParser(prog="rowvoi").add_subparsers()
>>> add_parsers(sub); list(sub.choices)
['query']
>>> rows = [{"plan": "pro", "n": 12}, {"plan": "free", "n": None}]
>>> print("\\n".join(_query_table(["plan", "n"], rows)))
plan     n
pro     12
free  null
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

from rowvoi.cli._common import (
    CliError,
    UsageError,
    open_input,
    print_json,
    printable,
    read_input_text,
)

__all__ = ["add_parsers"]


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
    cells = [[("null" if r[c] is None else printable(r[c])) for c in columns] for r in records]
    heads = [printable(c) for c in columns]
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
            print_json(schema.to_dict(), indent=2)
            return 0
        print(
            f"{printable(args.table)}: {len(schema)} queryable columns, at most {schema.max_limit} "
            "rows per answer"
        )
        width = max((len(printable(s.name)) for s in schema.columns), default=0)
        for spec in schema.columns:
            detail = "integer" if spec.integer else ""
            if spec.values is not None:
                shown = ", ".join(map(printable, spec.values[:8]))
                detail = f"{len(spec.values)} values: {shown}" + (
                    ", ..." if len(spec.values) > 8 else ""
                )
            print(
                f"  {printable(spec.name).ljust(width)}  {spec.type.ljust(11)}  {detail}".rstrip()
            )
        return 0
    result = run_query(args.table, _query_json(args.query, "QUERY"), schema)
    if args.json:
        print_json(result.to_dict())
        return 0
    if result.scalar:
        for name in result.columns:
            value = result.records[0][name]
            print(f"{printable(name)}: {'null' if value is None else printable(value)}")
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


# ----------------------------------------------------------------- parsers
def add_parsers(sub: Any) -> None:
    """Register ``query`` on the ``rowvoi`` subparsers (see the module's
    example)."""
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
