"""One exact search of a small int8-storage flat index through the C API,
without Python: ``bench/c/bench_flat_exact1.c`` (the corpus dense query
path: ``rv_flat_search`` with ``params.exact`` on an int8 cosine index, one
query, one thread).

    python -m bench run c_flat_exact1 [--n 1400] [--dim 384] [--k 11]
        [--calls 20000] [--rounds 5]

The runner builds the program (``python -m bench build-c``).  Data: ``n``
unit vectors in ``dim`` dimensions, a quarter uniform on the sphere and the
rest in 20 clusters; 64 queries drawn the same way, cycled.  Each round
times ``calls`` single-query searches; reported: microseconds per call per
round, their median and min-max, and the checksum of the results (equal for
any library that returns exact results).
"""

from __future__ import annotations

import argparse
import json
import subprocess
from collections.abc import Sequence

from .._common.results import Run, versions, write


def main(argv: Sequence[str], run: Run) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m bench run c_flat_exact1", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--n", type=int, default=1400, help="vectors in the index")
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--k", type=int, default=11)
    ap.add_argument("--calls", type=int, default=20000, help="searches per round")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", default=str(run.out))
    args = ap.parse_args(argv)
    if min(args.n, args.dim, args.k, args.calls, args.rounds) < 1:
        ap.error("every size must be at least 1")
    exe = run.c_benches["bench_flat_exact1"]
    cmd = [str(exe), *(str(x) for x in (args.n, args.dim, args.k, args.calls, args.rounds))]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    rows = [json.loads(line) for line in out.splitlines() if line.strip()]
    summary = rows[-1]
    lines = [
        "# One exact search of a small int8 flat index (C API, bench_flat_exact1)",
        "",
        *run.header(versions()),
        f"{args.n:,} x {args.dim} unit vectors (int8 storage, cosine), k = {args.k}, "
        f"{args.calls:,} single-query searches per round, one thread, {args.rounds} rounds.",
        "",
        "| round | us per call |",
        "|---:|---:|",
        *(f"| {r['round']} | {r['us_per_call']:.3f} |" for r in rows[:-1]),
        "",
        f"Median {summary['median_us']:.3f} us per call (min-max "
        f"{summary['min_us']:.3f}-{max(r['us_per_call'] for r in rows[:-1]):.3f}); "
        f"checksum of the results {summary['checksum']}.",
    ]
    write(args.out, "\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0
