#!/usr/bin/env python3
"""Incremental BM25: changed documents applied to a large index, against a
fresh build of the same documents and against the previous engine.

    python -m bench run bm25_incremental --baseline-python MAIN_VENV/bin/python

On the synthetic Zipf corpus (``bench/_common/synth_corpus.py``, ``--docs``
documents filed under ids 0 .. n-1):

1. **Build** the index from scratch (CPU seconds), ours and -- when
   ``--baseline-python`` names an interpreter with an earlier rowvoi (today's
   main) -- the previous engine's, in a worker process fed the same corpus
   (``python -m bench.suites.bm25_incremental --worker`` run by that
   interpreter from the repository root: it needs numpy and its rowvoi).
2. **Change** ``--changes`` documents: delete their ids and add new texts
   (drawn from the same distribution, another seed) under the same ids.
   Applied three ways: in one batch (one ``delete`` + one ``add``), one
   document at a time (``delete([id])`` + ``add([text], ids=[id])`` per
   document), and one at a time on an index just loaded from its file (the
   first delete builds the forward lists of the big segment once).  Wall and
   CPU seconds.  Target: under 2 s.
3. **Fresh build** of the final documents (same ids, new texts in place).
4. **Identical top-10**: every query's ids and scores, incremental against
   fresh (bit for bit).
5. **Query speed**: single-thread ``search_batch(n_threads=1)`` over the
   query set (Zipf queries, and mid-frequency "top 10k" queries), CPU time
   per round, rounds interleaved -- incremental, fresh, previous engine --
   so the load of this shared machine falls on all alike; medians with the
   spread.  Target: incremental within 10 % of fresh.

Writes ``bench/results/bm25_incremental.md`` and prints the same.
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

import numpy as np

from .._common.results import CACHE, ROOT, Run, shown_arg, versions, write
from .._common.synth_corpus import generate, load_or_generate, uniform_queries
from .._common.timing import med, timed


def corpus(n_docs: int, n_queries: int):
    c = load_or_generate(str(CACHE), n_docs=n_docs, n_queries=max(n_queries, 2000))
    return c.docs, {"zipf": c.queries[:n_queries], "top10k": uniform_queries(n_queries)}


def analyzer():
    from rowvoi.index.text import Analyzer

    return Analyzer(stem=False, stopwords=False)


def run_round(ix, qs) -> float:
    t = time.process_time()
    ix.search_batch(qs, 10, n_threads=1)
    return time.process_time() - t


# ------------------------------------------------- worker (any rowvoi version)


def worker(args) -> None:
    """Serve the previous engine: build, then timed query rounds, on
    commands from stdin (JSON lines)."""
    from rowvoi.index.lexical import BM25Index

    docs, mixes = corpus(args.docs, args.queries)
    ix = None
    for line in sys.stdin:
        cmd = json.loads(line)
        if cmd["cmd"] == "build":
            t = time.process_time()
            ix = BM25Index(analyzer())
            ix.add(docs)
            out = {
                "build_cpu": time.process_time() - t,
                "memory_mb": ix.stats()["memory_bytes"] / 2**20,
            }
            ix.search_batch(mixes["zipf"][:50], 10, n_threads=1)
        elif cmd["cmd"] == "round":
            out = {"cpu": run_round(ix, mixes[cmd["mix"]])}
        else:
            return
        print(json.dumps(out), flush=True)


class Baseline:
    def __init__(self, python: str, args):
        self.p = subprocess.Popen(
            [
                python,
                "-m",
                "bench.suites.bm25_incremental",
                "--worker",
                "--docs",
                str(args.docs),
                "--queries",
                str(args.queries),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,  # for bench; ROOT holds no rowvoi package (it is python/rowvoi)
        )
        self.version = subprocess.run(
            [python, "-c", "import rowvoi; print(rowvoi.__version__)"],
            capture_output=True,
            text=True,
            cwd=tempfile.gettempdir(),
        ).stdout.strip()

    def ask(self, **cmd) -> dict:
        self.p.stdin.write(json.dumps(cmd) + "\n")
        self.p.stdin.flush()
        return json.loads(self.p.stdout.readline())

    def close(self) -> None:
        self.ask_quit()

    def ask_quit(self) -> None:
        self.p.stdin.write(json.dumps({"cmd": "quit"}) + "\n")
        self.p.stdin.flush()
        self.p.wait()


# -------------------------------------------------------------------- main


def main(argv: Sequence[str], run: Run | None = None) -> int:
    """The suite (``run``: the runner's context), or the ``--worker``."""
    ap = argparse.ArgumentParser(
        prog="python -m bench run bm25_incremental", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--docs", type=int, default=1_000_000)
    ap.add_argument("--changes", type=int, default=1000)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument(
        "--baseline-python",
        default=None,
        help="an interpreter with the previous rowvoi installed (today's main)",
    )
    ap.add_argument("--out", default=str(run.out) if run else None)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args)
        return 0
    if run is None:
        ap.error("run the suite as: python -m bench run bm25_incremental")

    from rowvoi.index.lexical import BM25Index

    docs, mixes = corpus(args.docs, args.queries)
    n = len(docs)
    rng = np.random.default_rng(11)
    changed = np.sort(rng.choice(n, args.changes, replace=False)).astype(np.int64)
    new_texts = generate(n_docs=args.changes, n_queries=1, seed=99).docs
    final = list(docs)
    for i, t in zip(changed.tolist(), new_texts):
        final[i] = t
    lines = []

    def say(s=""):
        print(s, flush=True)
        lines.append(s)

    base = Baseline(args.baseline_python, args) if args.baseline_python else None

    # 1. builds
    _bw, bc, inc = timed(lambda: (lambda ix: (ix.add(docs), ix)[1])(BM25Index(analyzer())))
    base_build = base.ask(cmd="build") if base else None

    # 2. changes: one batch
    def apply_batch(ix):
        ix.delete(changed)
        ix.add(new_texts, ids=changed)

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "lexical.rvx")
        inc.save(path)
        cw, cc, _ = timed(lambda: apply_batch(inc))
        # one at a time, on a copy loaded from the file
        loaded = BM25Index.load(path)

    def apply_one_by_one(ix):
        for i, t in zip(changed.tolist(), new_texts):
            ix.delete([i])
            ix.add([t], ids=[i])

    ow, oc, _ = timed(lambda: apply_one_by_one(loaded))
    # 3. fresh build of the final documents
    _fw, fc, fresh = timed(lambda: (lambda ix: (ix.add(final), ix)[1])(BM25Index(analyzer())))

    # 4. identical top-10
    same = {}
    for mix, qs in mixes.items():
        a = inc.search_batch(qs, 10, n_threads=1)
        b = fresh.search_batch(qs, 10, n_threads=1)
        c = loaded.search_batch(qs, 10, n_threads=1)
        same[mix] = (
            int(
                sum(
                    np.array_equal(a.ids[q], b.ids[q])
                    and np.array_equal(a.scores[q], b.scores[q], equal_nan=True)
                    for q in range(len(qs))
                )
            ),
            int(
                sum(
                    np.array_equal(c.ids[q], b.ids[q])
                    and np.array_equal(c.scores[q], b.scores[q], equal_nan=True)
                    for q in range(len(qs))
                )
            ),
        )

    # 5. query speed, interleaved rounds
    engines = {
        "incremental (batch)": inc,
        "incremental (one by one, after load)": loaded,
        "fresh build": fresh,
    }
    times = {
        mix: {name: [] for name in list(engines) + (["previous engine"] if base else [])}
        for mix in mixes
    }
    for mix, qs in mixes.items():
        for ix in engines.values():
            ix.search_batch(qs[:50], 10, n_threads=1)
        for _ in range(args.rounds):
            for name, ix in engines.items():
                times[mix][name].append(run_round(ix, qs))
            if base:
                times[mix]["previous engine"].append(base.ask(cmd="round", mix=mix)["cpu"])
    if base:
        base.ask_quit()

    say("# Incremental BM25")
    say()
    for line in run.header(
        versions("numpy", peers={"rowvoi (previous engine)": base.version if base else None})
    ):
        say(line)
    if base:
        say("The previous engine runs in a worker process (today's main).")
        say()
    say(
        f"Corpus: {n:,} synthetic Zipf documents (bench/_common/synth_corpus.py, ids 0 .. {n - 1:,}); "
        f"{args.changes:,} of them changed: deleted and added again under the same ids with "
        f"new texts from the same distribution.  Queries: {args.queries:,} Zipf queries and "
        f"{args.queries:,} mid-frequency (top 10k) queries, top-10."
    )
    say()
    say("## Applying the changes")
    say()
    say("| how | wall s | CPU s | target |")
    say("| --- | ---: | ---: | --- |")
    say(f"| one batch: delete(ids) + add(texts, ids) | {cw:.3f} | {cc:.3f} | < 2 s |")
    say(
        f"| one document at a time, on the index loaded from its file (the first delete "
        f"builds the big segment's forward lists) | {ow:.3f} | {oc:.3f} | < 2 s |"
    )
    say()
    say("## Builds")
    say()
    say("| index | CPU s | memory MB |")
    say("| --- | ---: | ---: |")

    def mem(ix: Any) -> float:
        return float(ix.stats()["memory_bytes"]) / 2**20

    say(f"| ours, {n:,} documents | {bc:.2f} | {mem(inc):,.0f} (after the changes) |")
    say(f"| ours, fresh build of the final documents | {fc:.2f} | {mem(fresh):,.0f} |")
    say(f"| ours, loaded from its file | - | {mem(loaded):,.0f} (after the changes) |")
    if base:
        say(
            f"| previous engine, {n:,} documents | {base_build['build_cpu']:.2f} | "
            f"{base_build['memory_mb']:,.0f} |"
        )
        say()
        say(
            f"Build time, ours / previous engine: **{bc / base_build['build_cpu']:.2f}x**.  "
            "Ours keeps each segment's forward lists (4 bytes a posting) from the add, "
            "for deletes; an index loaded from a file builds them on its first delete."
        )
    say()
    say("## Results and query speed")
    say()
    for mix in mixes:
        a, b = same[mix]
        say(
            f"{mix}: top-10 ids and scores identical to the fresh build for **{a} of "
            f"{len(mixes[mix])}** queries (batch), **{b} of {len(mixes[mix])}** (one by one, "
            "after load)."
        )
    say()
    say(
        "Single-thread queries per second (CPU time), median (min-max) over "
        f"{args.rounds} interleaved rounds:"
    )
    say()
    say("| queries | index | QPS | vs fresh build | vs previous engine |")
    say("| --- | --- | ---: | ---: | ---: |")
    for mix, qs in mixes.items():
        qps = {name: [len(qs) / t for t in ts] for name, ts in times[mix].items()}
        fresh_m = med(qps["fresh build"])[0]
        base_m = med(qps["previous engine"])[0] if base else None
        for name, xs in qps.items():
            m = med(xs)
            vs_base = f"{m[0] / base_m:.3f}x" if base_m else "-"
            say(
                f"| {mix} | {name} | {m[0]:,.0f} ({m[1]:,.0f}-{m[2]:,.0f}) | "
                f"{m[0] / fresh_m:.3f}x | {vs_base} |"
            )
    write(args.out, "\n".join(lines).rstrip("\n") + "\n")
    print(f"wrote {shown_arg(str(args.out))}", file=sys.stderr)
    return 0


if __name__ == "__main__":  # the --worker: python -m bench.suites.bm25_incremental --worker
    sys.exit(main(sys.argv[1:]))
