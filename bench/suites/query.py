#!/usr/bin/env python3
"""Benchmark rowvoi.query on a 10M-row Parquet file: DuckDB vs pandas.

What it measures
----------------
Three structured queries over a synthetic 8-column Parquet file (10,000,000
rows by default), each answered three ways, every run in a fresh Python
subprocess so that its peak memory is its own:

* ``duckdb``  -- ``rowvoi.query.run_query(path, query, schema)``: the DuckDB
  executor streams the file;
* ``pandas``  -- ``pd.read_parquet(path)`` (the whole file) then
  ``rowvoi.query.execute_pandas``: what "load it into pandas" costs;
* ``pandas-cols`` -- ``pd.read_parquet(path, columns=<the columns the query
  reads>)`` then ``execute_pandas``: the fairer pandas baseline.

Reported per query and path: wall time to the answer (import excluded;
file open, load and query included), the query time alone for pandas, and
peak resident memory (``ru_maxrss`` of the subprocess, which includes the
interpreter and imports -- the import-only baseline is reported too; read
from ``VmHWM`` in ``/proc/self/status``).
Rounds are interleaved (query by query, path by path, round after round);
the table gives medians with the min-max spread. Every path must return the
same records (floats within 1e-9); the table says so.

Queries:

* ``grouped`` -- filtered_aggregate: year >= 2020 and state in 5 states,
  group by sector, mean income, max tax_owed, row count;
* ``top``     -- filter: sector = "non profit" (folded to Non-Profit),
  income > 250,000, 4 columns, order by income desc, limit 100;
* ``scan``    -- filter: name contains "77777", 3 columns, file order,
  limit 100 (a full text scan).

Goal (issue 9): the DuckDB path answers in bounded memory (under 1 GB)
where pandas needs the whole file.

How to run
----------
From the repository root, with rowvoi[query] and pyarrow installed::

    python -m bench run query             # 10M rows, 3 rounds -> bench/results/query.md
    python -m bench run query --quick     # 1M rows, 1 round -> bench/results/quick/query.md

The Parquet file is generated once (in chunks, seeded) under
``bench/.cache/`` and reused.  Each run is ``python -m bench.suites.query
--worker`` in a fresh process (from the repository root).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from .._common.machine import peak_rss_mb
from .._common.results import CACHE, ROOT, Run, version_of, versions, write
from .._common.timing import median

SECTORS = [
    "Corporation",
    "Non-Profit",
    "Individual",
    "Partnership",
    "Trust",
    "Estate",
    "Cooperative",
    "Government",
]
STATES = [f"S{i:02d}" for i in range(50)]
SCHEMA = {
    "max_limit": 1000,
    "columns": {
        "id": {"type": "numeric", "integer": True},
        "sector": {"type": "categorical", "values": SECTORS},
        "state": {"type": "categorical", "values": STATES},
        "year": {"type": "numeric", "integer": True},
        "income": "numeric",
        "tax_owed": "numeric",
        "filed_on": "date",
        "name": "text",
    },
}
QUERIES = {
    "grouped": {
        "operation": "filtered_aggregate",
        "filters": {"year": {"$gte": 2020}, "state": {"$in": ["S01", "S07", "S13", "S21", "S42"]}},
        "group_by": "sector",
        "aggregations": {"income": "mean", "tax_owed": "max", "*": "count"},
    },
    "top": {
        "operation": "filter",
        "filters": {"sector": "non profit", "income": {"$gt": 250000}},
        "columns": ["id", "state", "income", "tax_owed"],
        "order_by": {"column": "income", "direction": "desc"},
        "limit": 100,
    },
    "scan": {
        "operation": "filter",
        "filters": {"name": {"$contains": "77777"}},
        "columns": ["id", "name", "filed_on"],
        "limit": 100,
    },
}
PATHS = ("duckdb", "pandas", "pandas-cols")


# ------------------------------------------------------------------ data
def make_file(path: Path, rows: int, seed: int = 0, chunk: int = 1_000_000) -> None:
    """Write the synthetic table in row groups of ``chunk`` rows (bounded memory)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    writer = None
    base = np.datetime64("2015-01-01")
    try:
        for start in range(0, rows, chunk):
            n = min(chunk, rows - start)
            income = rng.lognormal(11.5, 1.0, n).round(2)
            income_mask = rng.random(n) < 0.02  # 2% missing
            table = pa.table(
                {
                    "id": pa.array(np.arange(start, start + n, dtype=np.int64)),
                    "sector": pa.array(np.array(SECTORS)[rng.integers(0, len(SECTORS), n)]),
                    "state": pa.array(np.array(STATES)[rng.integers(0, len(STATES), n)]),
                    "year": pa.array(rng.integers(2015, 2025, n).astype(np.int64)),
                    "income": pa.array(income, mask=income_mask),
                    "tax_owed": pa.array((income * rng.uniform(0, 0.35, n)).round(2)),
                    "filed_on": pa.array(base + rng.integers(0, 3650, n).astype("timedelta64[D]")),
                    "name": pa.array(
                        np.char.add("taxpayer-", rng.integers(0, 10**7, n).astype(str))
                    ),
                }
            )
            if writer is None:
                writer = pq.ParquetWriter(tmp, table.schema, compression="zstd")
            writer.write_table(table, row_group_size=chunk)
        writer.close()
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


# ------------------------------------------------------------------ worker
def worker(path: str, query_name: str, how: str) -> dict:
    import pandas as pd

    from rowvoi.query import QuerySchema, execute_pandas, run_query, validate_query

    schema = QuerySchema.from_dict(SCHEMA)
    query = QUERIES[query_name]
    base = peak_rss_mb()
    t0 = time.perf_counter()
    load = 0.0
    if how == "duckdb":
        result = run_query(path, query, schema)
    else:
        cols = None
        if how == "pandas-cols":
            cols = list(validate_query(query, schema).referenced(schema))
        df = pd.read_parquet(path, columns=cols)
        load = time.perf_counter() - t0
        result = execute_pandas(df, query, schema)
    total = time.perf_counter() - t0
    return {
        "total_s": total,
        "load_s": load,
        "query_s": total - load,
        "peak_mb": peak_rss_mb(),
        "base_mb": base,
        "records": result.records,
    }


def run_worker(path: Path, query_name: str, how: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-m", "bench.suites.query", "--worker", str(path), query_name, how],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{query_name}/{how} failed:\n{proc.stderr}")
    return json.loads(proc.stdout)


# ------------------------------------------------------------------ report
def same(a: list[dict], b: list[dict]) -> bool:
    if len(a) != len(b):
        return False
    for ra, rb in zip(a, b):
        if ra.keys() != rb.keys():
            return False
        for k in ra:
            x, y = ra[k], rb[k]
            if isinstance(x, float) and isinstance(y, float):
                if not math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-9):
                    return False
            elif x != y:
                return False
    return True


def fmt_s(values: list[float]) -> str:
    med = median(values)
    if len(values) == 1:
        return f"{med:.2f} s"
    return f"{med:.2f} s ({min(values):.2f}–{max(values):.2f})"


def fmt_mb(values: list[float]) -> str:
    return f"{median(values):,.0f} MB"


def main(argv: Sequence[str], run: Run | None = None) -> int:
    """The suite (``run``: the runner's context), or one ``--worker`` run."""
    parser = argparse.ArgumentParser(
        prog="python -m bench run query", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--queries", default=",".join(QUERIES))
    parser.add_argument("--out", type=Path, default=run.out if run else None)
    parser.add_argument(
        "--worker", nargs=3, metavar=("PATH", "QUERY", "HOW"), help=argparse.SUPPRESS
    )
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(*args.worker)))
        return 0
    if run is None:
        parser.error("run the suite as: python -m bench run query")

    path = CACHE / f"query_{args.rows}.parquet"
    if not path.exists():
        t = time.perf_counter()
        make_file(path, args.rows)
        print(f"wrote {path.name} in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    size_mb = path.stat().st_size / 2**20
    names = [q for q in args.queries.split(",") if q]
    runs: dict[tuple[str, str], list[dict]] = {(q, h): [] for q in names for h in PATHS}
    for r in range(args.rounds):
        for q in names:
            for how in PATHS:
                got = run_worker(path, q, how)
                runs[q, how].append(got)
                print(
                    f"round {r + 1} {q:8s} {how:12s} {got['total_s']:7.2f} s "
                    f"{got['peak_mb']:8.0f} MB",
                    file=sys.stderr,
                )

    lines = [
        "# rowvoi.query benchmark: DuckDB vs pandas on a large Parquet file",
        "",
        *run.header(
            versions("duckdb", "pyarrow", "numpy", peers={"pandas": version_of("pandas")})
        )[:-1],
        f"- data: {args.rows:,} rows × 8 columns (id, sector, state, year, income, tax_owed, "
        f"filed_on, name), zstd Parquet, {size_mb:,.0f} MB, row groups of 1M rows, seed 0",
        f"- rounds: {args.rounds}, interleaved; each run a fresh subprocess; medians (min–max)",
        "",
        "Time = from before opening the file to the JSON-ready answer (imports excluded). "
        "Peak memory = the subprocess's peak resident set size (VmHWM), interpreter and "
        "imports included; the import-only baseline is in the last column.",
        "",
        "| query | path | time | of which query | peak memory | time vs duckdb | "
        "memory vs duckdb | same answer | baseline |",
        "|---|---|---:|---:|---:|---:|---:|---|---:|",
    ]
    for q in names:
        duck = runs[q, "duckdb"]
        d_time = median(x["total_s"] for x in duck)
        d_mem = median(x["peak_mb"] for x in duck)
        for how in PATHS:
            got = runs[q, how]
            t = median(x["total_s"] for x in got)
            m = median(x["peak_mb"] for x in got)
            agree = all(same(x["records"], duck[0]["records"]) for x in got)
            query_col = "–" if how == "duckdb" else fmt_s([x["query_s"] for x in got])
            lines.append(
                f"| {q} | {how} | {fmt_s([x['total_s'] for x in got])} | {query_col} "
                f"| {fmt_mb([x['peak_mb'] for x in got])} | {t / d_time:.1f}× | "
                f"{m / d_mem:.1f}× | {'yes' if agree else 'NO'} | "
                f"{fmt_mb([x['base_mb'] for x in got])} |"
            )
    worst = max(median(x["peak_mb"] for x in runs[q, "duckdb"]) for q in names)
    lines += [
        "",
        f"Goal: the DuckDB path under 1 GB peak memory: "
        f"{'met' if worst < 1024 else 'NOT met'} (worst median {worst:,.0f} MB).",
        "",
    ]
    lines += ["Queries:", ""]
    lines += [f"- `{q}`: `{json.dumps(QUERIES[q])}`" for q in names]
    write(args.out, "\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":  # a --worker run: python -m bench.suites.query --worker ...
    sys.exit(main(sys.argv[1:]))
