"""A/B of CSR builds: bench_graph_csr binaries linked to two (or more) libraries,
run alternately, process by process, so that both see the same load.

    python -m bench run c_graph_csr_ab PROCESSES ORDER MODE [NAME=BINARY ...]

The runner builds ``bench_graph_csr`` against this checkout's librowvoi
(``python -m bench build-c``) and runs it as ``this`` (first, the base of the
ratios) unless a ``this=BINARY`` is given; each ``NAME=BINARY`` adds
bench_graph_csr linked to another library (built as its header says).
ORDER is ``random`` or ``sorted``, MODE ``borrow`` or ``copy`` (bench_graph_csr's
arguments).  Each process builds the graph of the ``graph`` suite's ``--part big``
(without vectors) 4 times: the first build on fresh pages, then 3 rebuilds on
the kept arrays.  Prints, per binary, the median and the minimum over all
processes of the CPU time (user + system, every thread) and the wall time of
the first builds and of the rebuilds, the page faults of a first build, the
adjacency checksums seen (they must agree), and the ratios of CPU medians and
minimums to the first binary's.  On a machine shared with other jobs the CPU
times are the figures to compare; walls are given with the load average.
"""

from __future__ import annotations

import json
import os
import statistics as st
import subprocess
import sys
from collections.abc import Sequence

from .._common.results import Run, versions, write


def main(argv: Sequence[str], run: Run) -> int:
    if len(argv) < 3 or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    procs, order, mode = int(argv[0]), argv[1], argv[2]
    pairs = [a.split("=", 1) for a in argv[3:]]
    if any(len(p) != 2 for p in pairs):
        raise SystemExit(f"expected NAME=BINARY, got {argv[3:]}")
    bins = dict(pairs)
    if "this" not in bins:
        bins = {"this": str(run.c_benches["bench_graph_csr"]), **bins}
    names = list(bins)
    report: list[str] = []

    def say(line: str) -> None:
        print(line)
        report.append(line)

    keys = ("first_cpu", "first_wall", "first_flt", "re_cpu", "re_wall")
    res: dict[str, dict[str, list[float]]] = {n: {k: [] for k in keys} for n in names}
    sums: dict[str, set[str]] = {n: set() for n in names}
    loads = []
    for i in range(procs):
        for name in names if i % 2 == 0 else names[::-1]:
            cmd = [bins[name], "1000000", "5000000", "4", order, "0", mode]
            out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
            rows = [json.loads(x) for x in out.splitlines()]
            r = res[name]
            r["first_cpu"].append(rows[0]["cpu_ms"])
            r["first_wall"].append(rows[0]["wall_ms"])
            r["first_flt"].append(rows[0]["minflt"])
            r["re_cpu"] += [x["cpu_ms"] for x in rows[1:4]]
            r["re_wall"] += [x["wall_ms"] for x in rows[1:4]]
            sums[name].add(rows[-1]["checksum"])
        loads.append(os.getloadavg()[0])
    say(
        f"{order} {mode}: {procs} processes a binary, load average {min(loads):.1f}-{max(loads):.1f}"
    )
    for name in names:
        r = res[name]
        say(
            f"  {name:8s} first: CPU {st.median(r['first_cpu']):6.1f} (min {min(r['first_cpu']):6.1f})"
            f" wall {st.median(r['first_wall']):6.1f} (min {min(r['first_wall']):6.1f})"
            f" faults {st.median(r['first_flt']):6.0f} | rebuild: CPU {st.median(r['re_cpu']):6.1f}"
            f" (min {min(r['re_cpu']):6.1f}) wall {st.median(r['re_wall']):6.1f}"
            f" (min {min(r['re_wall']):6.1f}) | checksum {','.join(sorted(sums[name]))}"
        )
    base = res[names[0]]
    for name in names[1:]:
        r = res[name]
        say(
            f"  {name}/{names[0]} CPU: first {st.median(r['first_cpu']) / st.median(base['first_cpu']):.2f}"
            f" (min {min(r['first_cpu']) / min(base['first_cpu']):.2f}),"
            f" rebuild {st.median(r['re_cpu']) / st.median(base['re_cpu']):.2f}"
            f" (min {min(r['re_cpu']) / min(base['re_cpu']):.2f})"
        )
    text = "\n".join(
        ["# CSR build A/B through the C API (bench_graph_csr)", "", *run.header(versions())]
        + ["```", *report, "```"]
    )
    write(run.out, text + "\n")
    print(f"wrote {run.out.name}", file=sys.stderr)
    return 0
