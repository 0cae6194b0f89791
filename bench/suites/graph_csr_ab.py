"""A/B of the CSR build through the Python binding, as the ``graph`` suite's
``--part big`` calls it, with this checkout's engine and another librowvoi (say
main's), alternately, process by process, so that both see the same load.

    python -m bench run graph_csr_ab PROCESSES ROUNDS OTHER_LIB_DIR

OTHER_LIB_DIR holds the other ``librowvoi.so`` (a plain CMake build of that
tree: ``cmake -S TREE -B TREE/build -DRV_BUILD_TESTS=OFF && cmake --build
TREE/build``); the child processes load it through ``LD_LIBRARY_PATH`` (the
extensions find ``librowvoi`` by RUNPATH, which it overrides), so one
installed venv measures both engines.  Each child builds the graph of
``--part big`` without its vectors (1M nodes, 5M edges, 2M documents) ROUNDS
times each: after ``trim`` (the first build of a process: fresh pages), again
(reusing the arrays: a rebuild), and with the edges in order of source.
Printed: per kind of build, medians and minimums of the wall time and of the
process CPU time (every thread), and this engine's ratios to the other.  The
children are ``python -m bench.suites.graph_csr_ab --child ROUNDS`` (from the
repository root).  The notes of the passes that used it: ``graph_csr.md``.
"""

from __future__ import annotations

import json
import os
import statistics as st
import subprocess
import sys
import time
from collections.abc import Sequence

from .._common.results import ROOT, Run, versions, write


def child(rounds: int) -> None:
    import numpy as np

    from rowvoi.index import _graph

    from .graph import in_source_order  # the same edges as the graph suite's --part big

    n, m = 1_000_000, 5_000_000
    rng = np.random.default_rng(0)
    src = rng.integers(0, n, m, dtype=np.int64)
    dst = rng.integers(0, n, m, dtype=np.int64)
    etype = rng.integers(0, 4, m).astype(np.uint16)
    etime = rng.integers(0, 1_000_000, m, dtype=np.int64)
    with_doc = np.arange(0, m, 5)
    doc_entity = np.concatenate([np.arange(n, dtype=np.int64), n + with_doc])
    nodes = np.arange(n, dtype=np.int64)
    in_order = in_source_order(n, src, dst, etype, etime, doc_entity, with_doc)
    plain = (src, dst, etype, etime, doc_entity)

    def build(a: tuple) -> tuple[float, float]:
        w0, c0 = time.perf_counter(), time.process_time()
        h = _graph.GraphHandle.create(
            nodes, None, a[0], a[1], a[2], a[3], a[4], None, None, "ip", False, True, True, False
        )
        w1, c1 = time.perf_counter(), time.process_time()
        del h
        return (w1 - w0) * 1e3, (c1 - c0) * 1e3

    out: dict[str, list[tuple[float, float]]] = {"first": [], "rebuild": [], "in order": []}
    for _ in range(rounds):
        _graph.trim()
        out["first"].append(build(plain))
        out["rebuild"].append(build(plain))
        out["in order"].append(build(in_order))
    print(json.dumps(out))


def main(argv: Sequence[str], run: Run | None = None) -> int:
    """The study (``run``: the runner's context), or one ``--child``."""
    if argv and argv[0] == "--child":
        child(int(argv[1]))
        return 0
    if run is None or len(argv) != 3:
        print(__doc__)
        return 0 if list(argv) in (["-h"], ["--help"]) else 2
    procs, rounds, other = int(argv[0]), argv[1], argv[2]
    out_lines: list[str] = []

    def say(line: str) -> None:
        print(line)
        out_lines.append(line)

    res: dict[str, dict[str, list]] = {"other": {}, "this": {}}
    loads = []
    for i in range(procs):
        for side in ("other", "this") if i % 2 == 0 else ("this", "other"):
            env = dict(os.environ, SKBUILD_EDITABLE_VERBOSE="0")
            env.pop("LD_LIBRARY_PATH", None)
            if side == "other":
                env["LD_LIBRARY_PATH"] = other
            cmd = [sys.executable, "-m", "bench.suites.graph_csr_ab", "--child", rounds]
            out = subprocess.run(
                cmd, env=env, capture_output=True, text=True, check=True, cwd=ROOT
            ).stdout
            for k, v in json.loads(out).items():
                res[side].setdefault(k, []).extend(v)
        loads.append(os.getloadavg()[0])
    say(f"{procs} processes a side, {rounds} rounds each; load {min(loads):.2f}-{max(loads):.2f}")
    for k in res["this"]:
        line = f"{k:9s}"
        for side in ("other", "this"):
            w = [x[0] for x in res[side][k]]
            c = [x[1] for x in res[side][k]]
            line += (
                f" | {side}: wall {st.median(w):6.1f} (min {min(w):6.1f})"
                f" CPU {st.median(c):6.1f} (min {min(c):6.1f})"
            )
        ratio = [
            st.median([x[j] for x in res["this"][k]]) / st.median([x[j] for x in res["other"][k]])
            for j in (0, 1)
        ]
        say(line + f" | this/other: wall {ratio[0]:.2f}, CPU {ratio[1]:.2f}")
    text = "\n".join(
        ["# CSR build A/B through Python", "", *run.header(versions("numpy"))]
        + ["```", *out_lines, "```"]
    )
    write(run.out, text + "\n")
    return 0


if __name__ == "__main__":  # a --child: python -m bench.suites.graph_csr_ab --child ROUNDS
    sys.exit(main(sys.argv[1:]))
