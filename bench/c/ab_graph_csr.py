"""A/B of CSR builds: bench_graph_csr binaries linked to two (or more) libraries,
run alternately, process by process, so that both see the same load.

    python bench/c/ab_graph_csr.py PROCESSES ORDER MODE NAME=BINARY [NAME=BINARY ...]

ORDER is ``random`` or ``sorted``, MODE ``borrow`` or ``copy`` (bench_graph_csr's
arguments).  Each process builds the graph of ``bench/graph.py --part big``
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


def main() -> int:
    procs, order, mode = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    bins = dict(a.split("=", 1) for a in sys.argv[4:])
    names = list(bins)
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
    print(
        f"{order} {mode}: {procs} processes a binary, load average {min(loads):.1f}-{max(loads):.1f}"
    )
    for name in names:
        r = res[name]
        print(
            f"  {name:8s} first: CPU {st.median(r['first_cpu']):6.1f} (min {min(r['first_cpu']):6.1f})"
            f" wall {st.median(r['first_wall']):6.1f} (min {min(r['first_wall']):6.1f})"
            f" faults {st.median(r['first_flt']):6.0f} | rebuild: CPU {st.median(r['re_cpu']):6.1f}"
            f" (min {min(r['re_cpu']):6.1f}) wall {st.median(r['re_wall']):6.1f}"
            f" (min {min(r['re_wall']):6.1f}) | checksum {','.join(sorted(sums[name]))}"
        )
    base = res[names[0]]
    for name in names[1:]:
        r = res[name]
        print(
            f"  {name}/{names[0]} CPU: first {st.median(r['first_cpu']) / st.median(base['first_cpu']):.2f}"
            f" (min {min(r['first_cpu']) / min(base['first_cpu']):.2f}),"
            f" rebuild {st.median(r['re_cpu']) / st.median(base['re_cpu']):.2f}"
            f" (min {min(r['re_cpu']) / min(base['re_cpu']):.2f})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
