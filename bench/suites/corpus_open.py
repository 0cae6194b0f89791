#!/usr/bin/env python3
"""Opening a corpus in a fresh process: the first search by name from the
shell, and the parts of that first search, against another rowvoi install.

    python -m bench run corpus_open --against PYTHON --against-label LABEL   # ~4 min
    python -m bench run corpus_open --quick                                  # ~1 min

Writes ``bench/results/corpus_open.md``.  One corpus of ``--docs``
documents (two Cranfield sentences each, drawn at random: ``WholeText``,
the ``hashing`` embedder, so no model time in any figure), built once by
this tree into a temporary ``ROWVOI_HOME``.  Every case runs in a fresh
process per interpreter and round, the interpreters alternating (their
order reversed every other round), so both see the same load:

1. **The shell.** ``python -m rowvoi.cli.main search big QUERY --mode
   hybrid`` (and ``lexical``): the wall clock of the whole process and its
   peak RSS (``wait4``), as a person at a terminal, or a tool that starts
   ``rowvoi`` per call, meets them.
2. **The parts**, in one fresh process: the first hybrid search of
   ``open_corpus("big")`` as a whole (it loads everything), then, with the
   files in the page cache, each part alone: the record table
   (``RecordTable.load``), the flat index's base file (``FlatIndex.load``)
   and the BM25 index's (``BM25Index.load``); and ``FlatIndex.add`` of
   ``--add`` normal random 384-d vectors (int8 storage, as a corpus keeps
   them).

``--against PYTHON`` names an interpreter with another rowvoi installed
(e.g. a virtual environment of the previous commit); ``--against-label``
is what the results call it.  Without it, only this tree's figures.
Figures: median (min-max) over ``--rounds`` rounds; ratios taken round by
round, the other install's time over this tree's (> 1: this tree faster).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from typing import Any

from .._common.cranfield import corpus_data, sentence_pairs
from .._common.results import Run, publish, scratch_dir, versions
from .._common.timing import ratio, spread

#: What a fresh process of the parts case runs (argv: home, corpus name,
#: query, vectors to add); prints one JSON object of seconds.
PARTS = r"""
import json, os, sys, time
home, name, query, n_add = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
os.environ["ROWVOI_HOME"] = home
import numpy as np
from rowvoi.corpus import open_corpus, search
from rowvoi.corpus.storage.records import RecordTable
from rowvoi.index.flat import FlatIndex
from rowvoi.index.lexical import BM25Index

out = {}
c = open_corpus(name)
t = time.perf_counter()
search(c, query, mode="hybrid")
out["first hybrid search (everything loaded)"] = time.perf_counter() - t
with c.store.snapshot() as snap:
    t = time.perf_counter()
    RecordTable.load(snap)
    out["record table"] = time.perf_counter() - t
folder = c.store.path
dense = sorted(folder.glob("dense.*.rvf"))[-1]
lexical = sorted(folder.glob("lexical.*.rvx"))[-1]
t = time.perf_counter()
FlatIndex.load(dense)
out["flat index file"] = time.perf_counter() - t
t = time.perf_counter()
BM25Index.load(lexical)
out["BM25 index file"] = time.perf_counter() - t
vectors = np.random.default_rng(0).standard_normal((n_add, 384)).astype(np.float32)
index = FlatIndex(384, metric="ip", storage="int8")
t = time.perf_counter()
index.add(vectors)
out["FlatIndex.add"] = time.perf_counter() - t
print(json.dumps(out))
"""


#: A small process that runs the measured one (argv) and prints its wall
#: seconds, peak RSS and exit status as JSON. A process forked straight
#: from the suite would count the suite's own resident memory, inherited
#: across fork and exec, in its ``ru_maxrss``; this one's is a few MB.
WRAP = r"""
import json, os, subprocess, sys, time
t = time.perf_counter()
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
out, err = p.stdout.read(), p.stderr.read()
_, status, usage = os.wait4(p.pid, 0)
wall = time.perf_counter() - t
print(json.dumps({"wall": wall, "rss_kb": usage.ru_maxrss, "code": os.waitstatus_to_exitcode(status),
                  "out": out.decode(errors="replace"), "err": err.decode(errors="replace")[-2000:]}))
"""


def child(argv: list[str], env: dict[str, str], cwd: str) -> tuple[float, float, str]:
    """Run ``argv`` to its end (through :data:`WRAP`): (wall seconds, peak
    RSS in MiB, stdout); SystemExit when it fails."""
    done = subprocess.run(
        [sys.executable, "-c", WRAP, *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        check=True,
    )
    got = json.loads(done.stdout)
    if got["code"] != 0:
        raise SystemExit(f"{argv[:4]} failed ({got['code']}): {got['err']}")
    return float(got["wall"]), got["rss_kb"] / 1024.0, str(got["out"])


def version_in(python: str) -> str:
    """The rowvoi version an interpreter imports."""
    return subprocess.run(
        [python, "-c", "import rowvoi; print(rowvoi.__version__)"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tempfile.gettempdir(),
    ).stdout.strip()


def main(argv: Sequence[str], run: Run) -> int:
    """The suite (``run``: the runner's context)."""
    ap = argparse.ArgumentParser(
        prog="python -m bench run corpus_open", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--docs", type=int, default=100_000, help="documents of the corpus")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--add", type=int, default=100_000, help="vectors FlatIndex.add takes")
    ap.add_argument("--against", help="an interpreter with another rowvoi installed")
    ap.add_argument("--against-label", default="the other install")
    args = ap.parse_args(argv)

    home = scratch_dir("rowvoi-bench-corpus-open-")  # both removed at exit
    os.environ["ROWVOI_HOME"] = home
    from rowvoi.corpus import build, from_mapping

    docs, _, queries, _ = corpus_data()
    queries = [" ".join(q.split()) for q in queries]
    _, _, mapping = sentence_pairs(docs, args.docs)
    t0 = time.perf_counter()
    build(from_mapping(mapping, name="big", embedder="hashing"), progress=False)
    build_s = time.perf_counter() - t0

    ways = {"this tree": sys.executable}
    if args.against:
        ways[args.against_label] = args.against
    env = {**os.environ, "ROWVOI_HOME": home}
    cwd = scratch_dir("rowvoi-bench-corpus-open-cwd-")
    # {case: {way: [seconds per round]}}, {case: {way: [MiB per round]}}
    times: dict[str, dict[str, list[float]]] = {}
    rss: dict[str, dict[str, list[float]]] = {}
    for r in range(args.rounds):
        order = list(ways.items())
        if r % 2:
            order.reverse()
        q = queries[r % len(queries)]
        for label, python in order:
            for mode in ("hybrid", "lexical"):
                case = f"`rowvoi search big QUERY --mode {mode}` (whole process)"
                cli = [python, "-m", "rowvoi.cli.main", "search", "big", q, "--mode", mode]
                wall, mb, _ = child(cli, env, cwd)
                times.setdefault(case, {}).setdefault(label, []).append(wall)
                rss.setdefault(case, {}).setdefault(label, []).append(mb)
            _, _, text = child([python, "-c", PARTS, home, "big", q, str(args.add)], env, cwd)
            for part, seconds in json.loads(text).items():
                times.setdefault(part, {}).setdefault(label, []).append(seconds)

    labels = list(ways)
    head = ["| case | " + " | ".join(f"{w}, s" for w in labels)]
    rule = "|---|" + "---|" * len(labels)
    if len(labels) == 2:
        head[0] += f" | {labels[1]} / this tree"
        rule += "---|"
    lines_t = [head[0] + " |", rule]
    for case, by in times.items():
        cells = [spread(by[w]).fmt(".3f") for w in labels]
        if len(labels) == 2:
            cells.append(ratio(by[labels[1]], by[labels[0]]).fmt(".2f", "x"))
        lines_t.append(f"| {case} | " + " | ".join(cells) + " |")
    lines_m = ["| process | " + " | ".join(f"{w}, MiB" for w in labels) + " |"]
    lines_m.append("|---|" + "---|" * len(labels))
    for case, by in rss.items():
        lines_m.append(
            f"| {case} | " + " | ".join(spread(by[w]).fmt(",.0f") for w in labels) + " |"
        )

    peers: dict[str, Any] = {}
    if args.against:
        peers[f"rowvoi ({args.against_label})"] = version_in(args.against)
    lines = [
        "# Opening a corpus in a fresh process: the first search by name",
        "",
        *run.header(versions("numpy", peers=peers)),
        f"One corpus of {args.docs:,} documents (two Cranfield sentences each, `WholeText`, "
        f"the `hashing` embedder: no model time), built in {build_s:.0f} s. Each case in a "
        f"fresh process per interpreter and round, the interpreters alternating; median "
        f"(min-max) over {args.rounds} rounds"
        + (
            f"; the ratio is {args.against_label}'s time over this tree's, round by round "
            "(> 1: this tree faster)."
            if args.against
            else "."
        ),
        "",
        "## Seconds",
        "",
        *lines_t,
        "",
        "The parts after the first search ran in its process, with the files in the page "
        f"cache: each alone. `FlatIndex.add`: {args.add:,} normal random 384-d vectors, "
        "int8 storage.",
        "",
        "## Peak RSS of the shell's process",
        "",
        *lines_m,
        "",
    ]
    publish(run.out, lines)
    return 0
