#!/usr/bin/env python3
"""Benchmark rowvoi.dask key finding on a synthetic Parquet table.

What it measures
----------------
Wall time and peak memory of

* ``rowvoi.dask.find_key(ddf)`` (greedy key over every row) and
* ``rowvoi.dask.plan_key_path(ddf)`` (pair-coverage objective),

on a ``distributed.LocalCluster`` of 2 worker processes, 1 thread each,
``memory_limit="2GB"`` per worker, reading the table from Parquet (nothing is
loaded up front), at several row counts (default 10M, 30M and 100M) to check
that time grows linearly with rows; and, at the smallest size, the in-memory
``rowvoi.keys.find_key`` / ``plan_key_path`` on the same table loaded with
pandas, for the ratio. Each run happens in a fresh subprocess (a fresh
cluster for the Dask runs), so peak memory is that run's own:

* Dask: the largest peak RSS over the two workers (``ru_maxrss``) and the
  driver's own peak RSS;
* in memory: the process's peak RSS, and its RSS after loading the table.

The answers of the two sides at the shared size are compared (same key, same
path steps).

The table
---------
20 columns, generated in chunks of 2M rows from a fixed seed (chunk ``i``
uses seed ``seed + i``), one Parquet file per chunk (snappy). Columns are
independent and uniform over their values, with cardinalities 2, 3, 4, 5, 7,
10, 12, 16, 24, 31, 50, 100, 365, 1000, 3000, 10k, 30k, 100k, 300k and 1M;
two of them are strings (50 and 365 city/day names), one is float64 with 2%
NaN, the others the smallest unsigned integer type that holds them. With
100M rows it takes about 2.4 GB of disk (`--data-dir`, default
``/tmp/rowvoi-bench-dask``; the script prints the size and never writes in
the repository). Generation is skipped when the files are already there.

How to run
----------
From the repository root with the ``dask`` extra installed::

    python -m bench run dask_keys                             # 10M, 30M, 100M
    python -m bench run dask_keys --rows 2000000,4000000      # a quick check
    python -m bench run dask_keys --rounds 3                  # interleaved rounds

Results go to ``bench/results/dask_keys.md`` (and ``.json``); ``--out``
changes the stem.  Each run is ``python -m bench.suites.dask_keys --child``
in a fresh process (from the repository root). The machine this runs on may be shared; the report says so
and records the load average at the start.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .._common.results import ROOT, Run, versions, write
from .._common.timing import median

CARDS = [
    2,
    3,
    4,
    5,
    7,
    10,
    12,
    16,
    24,
    31,
    50,
    100,
    365,
    1000,
    3000,
    10_000,
    30_000,
    100_000,
    300_000,
    1_000_000,
]
STRING_COLS = {10: "city", 12: "day"}  # column index -> prefix of its values
FLOAT_COL = 13  # float64 with 2% NaN
CHUNK = 2_000_000


def _col_name(j: int) -> str:
    return f"c{j:02d}_{CARDS[j]}"


def _chunk_table(i: int, n: int, seed: int):
    import pyarrow as pa

    rng = np.random.default_rng(seed + i)
    arrays, names = [], []
    for j, card in enumerate(CARDS):
        v = rng.integers(0, card, n)
        if j in STRING_COLS:
            vocab = np.array([f"{STRING_COLS[j]}-{k:04d}" for k in range(card)], dtype=object)
            arr = pa.array(vocab[v], type=pa.string())
        elif j == FLOAT_COL:
            f = v.astype(np.float64) / 8.0
            f[rng.random(n) < 0.02] = np.nan
            arr = pa.array(f, from_pandas=True)
        else:
            dt = np.uint8 if card <= 256 else np.uint16 if card <= 65536 else np.uint32
            arr = pa.array(v.astype(dt))
        arrays.append(arr)
        names.append(_col_name(j))
    return pa.Table.from_arrays(arrays, names=names)


def generate(data_dir: Path, n_rows: int, seed: int) -> Path:
    """Write (or reuse) the table of n_rows rows; returns its directory."""
    import pyarrow.parquet as pq

    path = data_dir / f"rows-{n_rows}-seed-{seed}"
    marker = path / "_complete.json"
    if marker.exists():
        return path
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    t0 = time.perf_counter()
    for i, start in enumerate(range(0, n_rows, CHUNK)):
        n = min(CHUNK, n_rows - start)
        pq.write_table(
            _chunk_table(i, n, seed),
            path / f"part-{i:05d}.parquet",
            compression="snappy",
            row_group_size=500_000,
        )
    size = sum(f.stat().st_size for f in path.glob("*.parquet"))
    marker.write_text(
        json.dumps(
            {"rows": n_rows, "seed": seed, "bytes": size, "seconds": time.perf_counter() - t0}
        )
    )
    return path


def _maxrss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _steps(path) -> list:
    return [[str(s.col), int(s.newly_covered_pairs), float(s.cumulative_cost)] for s in path.steps]


# --------------------------------------------------------- child processes
def child_dask(path: str, what: str, workers: int, memory: str, partition_rows: int) -> dict:
    import dask
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    from rowvoi.dask import find_key, plan_key_path

    dask.config.set({"dataframe.shuffle.method": "p2p"})
    with (
        LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            memory_limit=memory,
            dashboard_address=None,
        ) as cluster,
        Client(cluster) as client,
    ):
        ddf = dd.read_parquet(path, split_row_groups=True)
        t0 = time.perf_counter()
        if what == "key":
            res = find_key(ddf, scheduler=client)
            answer = {
                "key": [str(c) for c in res],
                "cost": res.cost,
                "covered": res.covered,
                "total": res.total,
            }
        else:
            res = plan_key_path(ddf, scheduler=client)
            answer = {"steps": _steps(res)}
        seconds = time.perf_counter() - t0
        peaks = client.run(_maxrss_mb)
    return {
        "seconds": seconds,
        "worker_peak_mb": max(peaks.values()),
        "driver_peak_mb": _maxrss_mb(),
        "partitions": ddf.npartitions,
        **answer,
    }


def child_memory(path: str, what: str) -> dict:
    import pandas as pd

    from rowvoi.keys import find_key, plan_key_path

    df = pd.read_parquet(path)
    loaded = _maxrss_mb()
    t0 = time.perf_counter()
    if what == "key":
        res = find_key(df, None)
        answer = {
            "key": [str(c) for c in res],
            "cost": res.cost,
            "covered": res.covered,
            "total": res.total,
        }
    else:
        answer = {"steps": _steps(plan_key_path(df, None))}
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "peak_mb": _maxrss_mb(), "loaded_mb": loaded, **answer}


def run_child(args: list[str]) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "bench.suites.dask_keys", "--child", *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    if out.returncode != 0:
        raise RuntimeError(f"child {args} failed:\n{out.stderr[-4000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------ report
def _fmt_s(x: float) -> str:
    return f"{x:.1f} s" if x >= 10 else f"{x:.2f} s"


def write_report(stem: Path, meta: dict, results: list[dict], header: list[str]) -> None:
    write(stem.with_suffix(".json"), json.dumps({"meta": meta, "results": results}, indent=2))
    lines = ["# rowvoi.dask key-finding benchmark", "", *header[:-1]]
    lines += [
        f"- cluster: LocalCluster, {meta['workers']} worker processes x 1 thread, "
        f"memory_limit {meta['memory']} each; p2p shuffle; Parquet read with "
        "split_row_groups (500k-row partitions)",
        f"- table: 20 columns (cardinalities {', '.join(str(c) for c in CARDS)}; 2 string, "
        "1 float with NaN), uniform independent values, seed "
        f"{meta['seed']}; {meta['disk']}",
        f"- rounds: {meta['rounds']} (interleaved; median, range in brackets)",
        "",
        "| run | rows | wall time | time / 10M rows | peak RSS | answer |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for r in results:
        ts = r["seconds"]
        med = median(ts)
        rng = f" [{_fmt_s(min(ts))} - {_fmt_s(max(ts))}]" if len(ts) > 1 else ""
        per = med / (r["rows"] / 10_000_000)
        if r["side"] == "dask":
            mem = f"worker {r['worker_peak_mb']:,.0f} MB, driver {r['driver_peak_mb']:,.0f} MB"
        else:
            mem = f"{r['peak_mb']:,.0f} MB (after load {r['loaded_mb']:,.0f} MB)"
        if r["what"] == "key":
            ans = f"{len(r['key'])} columns: {', '.join(r['key'])}"
        else:
            ans = f"{len(r['steps'])} steps: {', '.join(s[0] for s in r['steps'])}"
        lines.append(
            f"| {r['side']} {r['what']} | {r['rows']:,} | {_fmt_s(med)}{rng} | "
            f"{_fmt_s(per)} | {mem} | {ans} |"
        )
    lines.append("")
    for note in meta["notes"]:
        lines.append(f"- {note}")
    write(stem.with_suffix(".md"), "\n".join(lines) + "\n")


def main(argv: Sequence[str], run: Run | None = None) -> int:
    """The suite (``run``: the runner's context), or one ``--child`` run."""
    ap = argparse.ArgumentParser(
        prog="python -m bench run dask_keys", description=__doc__.split("\n")[0]
    )
    ap.add_argument(
        "--rows",
        default="10000000,30000000,100000000",
        help="comma-separated row counts (default 10M,30M,100M)",
    )
    ap.add_argument(
        "--memory-rows",
        type=int,
        default=None,
        help="row count of the in-memory comparison (default: the smallest)",
    )
    ap.add_argument("--data-dir", default="/tmp/rowvoi-bench-dask")
    ap.add_argument("--seed", type=int, default=20240601)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--memory", default="2GB", help="memory_limit per worker")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--what", default="key,path")
    ap.add_argument("--out", default=str(run.path("dask_keys")) if run else None)
    ap.add_argument("--child", nargs="*", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child is not None:
        kind, path, what = args.child[:3]
        if kind == "dask":
            res = child_dask(path, what, int(args.child[3]), args.child[4], 0)
        else:
            res = child_memory(path, what)
        print(json.dumps(res))
        return 0
    if run is None:
        ap.error("run the suite as: python -m bench run dask_keys")

    sizes = sorted(int(x) for x in args.rows.split(","))
    mem_rows = args.memory_rows or sizes[0]
    whats = args.what.split(",")
    data_dir = Path(args.data_dir)
    free = shutil.disk_usage(data_dir.parent if not data_dir.exists() else data_dir).free
    print(
        f"data dir {data_dir}: {free / 1e9:.0f} GB free; the 100M-row table needs about 2.4 GB",
        file=sys.stderr,
    )
    paths = {}
    for n in sorted(set(sizes) | {mem_rows}):
        t0 = time.perf_counter()
        paths[n] = generate(data_dir, n, args.seed)
        print(f"table {n:,} rows ready in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    runs = [("memory", w, mem_rows) for w in whats] + [
        ("dask", w, n) for n in sizes for w in whats
    ]
    results = {r: [] for r in runs}
    for rnd in range(args.rounds):
        for side, what, n in runs:
            child = [side, str(paths[n]), what] + (
                [str(args.workers), args.memory] if side == "dask" else []
            )
            print(f"round {rnd + 1}: {side} {what} {n:,} rows ...", file=sys.stderr, flush=True)
            res = run_child(child)
            print(f"  {res['seconds']:.1f} s", file=sys.stderr, flush=True)
            results[(side, what, n)].append(res)
    rows_out, notes = [], []
    for (side, what, n), rs in results.items():
        last = rs[-1]
        rows_out.append(
            {
                "side": side,
                "what": what,
                "rows": n,
                "seconds": [r["seconds"] for r in rs],
                **{k: v for k, v in last.items() if k != "seconds"},
            }
        )
    by = {(r["side"], r["what"], r["rows"]): r for r in rows_out}
    for what in whats:
        mem, dsk = by.get(("memory", what, mem_rows)), by.get(("dask", what, mem_rows))
        if mem and dsk:
            same = (
                mem.get("key") == dsk.get("key") and mem.get("cost") == dsk.get("cost")
                if what == "key"
                else mem["steps"] == dsk["steps"]
            )
            ratio = median(dsk["seconds"]) / median(mem["seconds"])
            notes.append(
                f"{what} at {mem_rows:,} rows: dask / in-memory time = {ratio:.1f}x; "
                f"answers {'identical' if same else 'DIFFER'}"
            )
        ds = [by[("dask", what, n)] for n in sizes if ("dask", what, n) in by]
        if len(ds) >= 2:
            per = [median(d["seconds"]) / d["rows"] * 1e7 for d in ds]
            notes.append(
                f"{what} scaling: seconds per 10M rows "
                + ", ".join(f"{d['rows'] // 1_000_000}M: {p:.1f}" for d, p in zip(ds, per))
            )
    disk = ", ".join(
        f"{n // 1_000_000}M rows: "
        f"{json.loads((paths[n] / '_complete.json').read_text())['bytes'] / 1e9:.2f} GB"
        for n in sorted(paths)
    )
    v = versions("numpy", "pandas", "pyarrow", "dask", "distributed")
    meta = {
        "date": run.date,
        "machine": run.machine,
        "versions": v,
        "workers": args.workers,
        "memory": args.memory,
        "seed": args.seed,
        "rounds": args.rounds,
        "disk": f"Parquet size {disk}",
        "command": run.command,
        "notes": notes,
    }
    write_report(Path(args.out), meta, rows_out, run.header(v))
    print((Path(args.out).with_suffix(".md")).read_text())
    return 0


if __name__ == "__main__":  # a --child run: python -m bench.suites.dask_keys --child ...
    sys.exit(main(sys.argv[1:]))
