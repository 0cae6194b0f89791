"""Corpus query latency beside ``ir`` 0.1.61 on Cranfield, the two systems'
query phases interleaved in short blocks.

    python -m bench run corpus_paired --ir-python IR_VENV/bin/python \\
        --kind hashing|minilm [--passes 8] [--block 25] [--modes dense,lexical,rrf,blend] \\
        [--ir-blas-threads N] [--markdown bench/results/corpus_paired.md] \\
        [--json bench/results/corpus_paired.json]

The results file has one section per setting (``KIND``, then ``_blasN``
with ``--ir-blas-threads N``, ``_blockN`` with a ``--block`` other than 25);
a run replaces its own section and keeps the others.

The ``corpus`` suite times each system's queries in whole rounds (build,
then 225 queries per mode, in a fresh process per system), one system after
the other, tens of seconds apart; on a shared machine the load changes between the two, and so does
the ratio. Here both corpora are built first (as there: build, no-op
rebuild, 10 edits, rebuild back, open afresh), rowvoi in this process and
``ir`` inside a server process (``bench/peers/corpus_ir.py --serve``): both
warm, in long-lived processes. Then, ``--passes`` times,
for each mode, the 225 queries are walked in blocks of ``--block``: rowvoi
times a block, then ``ir`` times the same block (or the other way round:
the order alternates per block, and per pass), so each block's two
measurements see the same state of the machine. The timing rules are
the ``corpus`` suite's: own time per query (rowvoi: the query's embedding
timed apart and subtracted; ``ir``: the time in its embedder subtracted);
each side times itself, so the pipe between them is outside both. The
garbage collector runs before every block, outside the timings.

Reported per mode and side: p50 and p95 over all passes x 225 latencies and
their ratio ir / rowvoi; the paired statistic: per pass, ir's p50 (p95) over
rowvoi's, median and min-max over the passes; p50 by position in the block
(first or second); nDCG@10 of each side's rankings (the ``corpus`` suite's
``ndcg10``), beside the figures of a ``corpus`` results file, and
whether every pass returned the same rankings as the untimed warm-up pass.

Embedders (``--kind``): ``hashing`` -- each system's own 512-dimensional
hashing embedder (rowvoi ``"hashing:512"``, ``ir``'s ``"light"``);
``minilm`` -- identical MiniLM vectors looked up in a table (the vectors
the ``corpus`` suite caches in ``bench/.cache``). ``--ir-blas-threads``
sets the threads of numpy's BLAS in ``ir``'s process (its dense scoring is
a BLAS matrix-vector product); by default they are left alone, as in
the ``corpus`` suite.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence

import numpy as np

from .._common.minilm import minilm_table
from .._common.results import Run, shown_arg, update_blocks, versions, write
from .._common.timing import spread
from . import corpus as cb

SIDES = ("ours", "ir")
NAMES = {"ours": "rowvoi", "ir": "ir 0.1.61"}
KINDS = {"hashing": "hashing", "minilm": "table"}  # --kind: the corpus suite's name


class IrServer:
    """``bench/peers/corpus_ir.py --serve`` in ``ir``'s interpreter: builds
    the corpus on start, then times blocks of queries on request."""

    def __init__(self, ir_python: str, cfg: str, blas_threads: int | None = None) -> None:
        env = cb.ir_env()
        if blas_threads:  # numpy's BLAS in ir's interpreter, whichever it is
            for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
                env[var] = str(blas_threads)
        self.proc = subprocess.Popen(
            [ir_python, str(cb.IR_PEER), cfg, "--serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.ready = self._read()

    def _read(self) -> dict:
        line = self.proc.stdout.readline()
        if not line:
            code = self.proc.wait()
            raise RuntimeError(f"the ir server exited ({code}); its stderr is above")
        return json.loads(line)

    def block(self, mode: str, idx: list[int]) -> tuple[list[float], list[list[str]]]:
        """Time ``idx`` (positions in the queries) in ``mode``: per query
        own seconds and artifact ids."""
        self.proc.stdin.write(json.dumps({"mode": mode, "queries": idx}) + "\n")
        self.proc.stdin.flush()
        r = self._read()
        return r["latency"], r["ranked"]

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def ours_block(c, embedder, queries, kw, idx):
    gc.collect()
    lat, ranked = [], []
    for i in idx:
        sec, ids = cb.search_ours(c, embedder, queries[i], kw)
        lat.append(sec)
        ranked.append(ids)
    return lat, ranked


def run_pairs(args, kind: str, scratch: str) -> tuple[dict, str | None]:
    docs, edits, queries, qrels = cb.cranfield()
    table = None
    if kind == "table":
        table = minilm_table(list(docs.values()) + list(edits.values()) + queries)
    modes = dict(cb.MODES)
    labels = args.modes
    c, _, _ = cb.build_ours(docs, edits, kind, table, os.path.join(scratch, "ours"))
    embedder = c.embedder
    os.makedirs(os.path.join(scratch, "ir"))
    server = IrServer(
        args.ir_python,
        cb.ir_config(docs, edits, queries, kind, table, os.path.join(scratch, "ir")),
        args.ir_blas_threads,
    )
    n = len(queries)
    blocks = [list(range(s, min(s + args.block, n))) for s in range(0, n, args.block)]
    try:

        def side(who, label, idx):
            if who == "ours":
                return ours_block(c, embedder, queries, modes[label], idx)
            return server.block(label, idx)

        # warm-up pass (untimed): loads the indexes; its rankings are judged
        warm = {
            label: {who: side(who, label, list(range(n)))[1] for who in SIDES} for label in labels
        }
        res = {
            label: {who: {"latency": [], "first": [], "same_ranking": True} for who in SIDES}
            for label in labels
        }
        for p in range(args.passes):
            for m, label in enumerate(labels):
                for who in SIDES:
                    res[label][who]["latency"].append([0.0] * n)
                    res[label][who]["first"].append([False] * n)
                for b, idx in enumerate(blocks):
                    order = SIDES if (p + m + b) % 2 == 0 else SIDES[::-1]
                    for pos, who in enumerate(order):
                        lat, ranked = side(who, label, idx)
                        r = res[label][who]
                        for i, sec, ids in zip(idx, lat, ranked):
                            r["latency"][p][i] = sec
                            r["first"][p][i] = pos == 0
                            if ids != warm[label][who][i]:
                                r["same_ranking"] = False
            print(f"{args.kind}: pass {p + 1}/{args.passes} done", file=sys.stderr)
    finally:
        server.close()
    ir_version = server.ready.get("ir_version")
    for label in labels:
        for who in SIDES:
            ranked = warm[label][who]
            res[label][who]["ndcg10"] = float(
                np.mean([cb.ndcg10(ranked[q - 1], qrels[q]) for q in range(1, n + 1)])
            )
    return res, ir_version


def summarize(res: dict) -> dict:
    """Per mode: per side p50/p95 (ms) over all latencies, per pass, and by
    position in the block; ratios ir / rowvoi over all latencies and per pass."""
    out = {}
    for label, sides in res.items():
        s: dict = {}
        for who in SIDES:
            lat = np.array(sides[who]["latency"]) * 1000  # passes x queries, ms
            first = np.array(sides[who]["first"])
            s[who] = {
                "p50_ms": float(np.percentile(lat, 50)),
                "p95_ms": float(np.percentile(lat, 95)),
                "pass_p50_ms": [float(np.percentile(x, 50)) for x in lat],
                "pass_p95_ms": [float(np.percentile(x, 95)) for x in lat],
                "p50_first_ms": float(np.percentile(lat[first], 50)),
                "p50_second_ms": float(np.percentile(lat[~first], 50)),
                "ndcg10": sides[who]["ndcg10"],
                "same_ranking_every_pass": sides[who]["same_ranking"],
            }
        o, r = s["ours"], s["ir"]
        for q in ("p50", "p95"):
            s[f"{q}_ratio"] = r[f"{q}_ms"] / o[f"{q}_ms"]
            per = spread(a / b for a, b in zip(r[f"pass_{q}_ms"], o[f"pass_{q}_ms"]))
            s[f"pass_{q}_ratio"] = {"median": per.median, "min": per.lo, "max": per.hi}
        out[label] = s
    return out


def reference_ndcg(path: str, kind: str) -> dict | None:
    """nDCG@10 per side and mode from a ``corpus`` results file (JSON)."""
    try:
        with open(path) as f:
            data = json.load(f)[f"cranfield_{kind}"]
    except (OSError, KeyError, ValueError):
        return None
    return {who: {m: data[who][m]["ndcg10"] for m, _ in cb.MODES} for who in SIDES}


def markdown(args, meta: dict, summ: dict, ref: dict | None) -> list[str]:
    title = (
        "hashing embedders (512 dimensions; each system's own)"
        if args.kind == "hashing"
        else "MiniLM vectors through a callable (identical on both sides)"
    )
    md = [
        f"## Cranfield, {title}",
        "",
        f"{meta['provenance']} Load average (1, 5, 15 min) at start "
        f"{fmt_load(meta['load_average_start'])}, at end "
        f"{fmt_load(meta['load_average_end'])}. The peer: `python -m venv IR_VENV && "
        "IR_VENV/bin/pip install ir==0.1.61`, served by `bench/peers/corpus_ir.py --serve`.",
        "",
        f"Design. Both corpora are built as in the `corpus` suite (1,400 documents, "
        f"title + abstract, k = 10, 225 queries), then, {args.passes} times, for each mode, "
        f"the queries are walked in blocks of {args.block}: one system times a block, the "
        "other times the same block right after, and which goes first alternates from "
        "block to block and from pass to pass. Why blocks: the `corpus` suite times one "
        "system's whole round and then the other's, tens of seconds apart, and this shared "
        "machine's load (other tenants evicting the L3) changes in between, so its ratio "
        "of medians swings from run to run; a block takes milliseconds to a few seconds, "
        "so both systems' halves of a block see nearly the same machine. Why alternation: "
        "going second in a block is not neutral (the other process has just evicted "
        "caches, or has just left the core warm), so each system goes first in half of "
        "the blocks. Each side times itself with the `corpus` suite's own-time rule (query "
        "embedding excluded), so the pipe between the processes is outside both timings; "
        "an untimed warm-up pass precedes the timed ones. The paired statistic is the "
        "per-pass ratio (ir's p50 over all 225 queries of a pass / rowvoi's), "
        "median and min-max over the passes.",
        "",
        *notes(args),
        f"| mode | rowvoi p50 ms | ir p50 ms | ir / rowvoi, all {args.passes} x 225 "
        "| ir / rowvoi per pass, median (min-max) | rowvoi p95 ms | ir p95 ms "
        "| ir / rowvoi p95, all | p95 per pass, median (min-max) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for label, s in summ.items():
        o, r = s["ours"], s["ir"]
        a, b = s["pass_p50_ratio"], s["pass_p95_ratio"]
        md.append(
            f"| {label} | {o['p50_ms']:.3f} | {r['p50_ms']:.3f} | {s['p50_ratio']:.1f}x "
            f"| {a['median']:.1f}x ({a['min']:.1f}-{a['max']:.1f}) "
            f"| {o['p95_ms']:.3f} | {r['p95_ms']:.3f} | {s['p95_ratio']:.1f}x "
            f"| {b['median']:.1f}x ({b['min']:.1f}-{b['max']:.1f}) |"
        )
    md += [
        "",
        "Per-pass p50 ms, rowvoi / ir (pass order): "
        + "; ".join(
            f"{label} "
            + ", ".join(f"{x:.3g}" for x in s["ours"]["pass_p50_ms"])
            + " / "
            + ", ".join(f"{x:.3g}" for x in s["ir"]["pass_p50_ms"])
            for label, s in summ.items()
        )
        + ".",
        "",
        "p50 ms by position in the block (first / second), rowvoi; ir: "
        + "; ".join(
            f"{label} {s['ours']['p50_first_ms']:.3f} / {s['ours']['p50_second_ms']:.3f}; "
            f"{s['ir']['p50_first_ms']:.3f} / {s['ir']['p50_second_ms']:.3f}"
            for label, s in summ.items()
        )
        + ".",
        "",
        "Rankings: nDCG@10 of each side (gain = 5 - grade, the `corpus` suite's `ndcg10`), "
        f"beside `{args.reference_rel}` (a `corpus` run); the last column says "
        "whether every timed pass returned the untimed warm-up pass's rankings.",
        "",
        "| mode | rowvoi nDCG@10 | ir nDCG@10 | corpus suite rowvoi / ir | same rankings every pass |",
        "|---|---|---|---|---|",
    ]
    for label, s in summ.items():
        o, r = s["ours"], s["ir"]
        refs = f"{ref['ours'][label]:.4f} / {ref['ir'][label]:.4f}" if ref else "-"
        same = o["same_ranking_every_pass"] and r["same_ranking_every_pass"]
        md.append(
            f"| {label} | {o['ndcg10']:.4f} | {r['ndcg10']:.4f} | {refs} | "
            f"{'yes' if same else 'NO'} |"
        )
    md.append("")
    return md


def notes(args) -> list[str]:
    """What the reader must know about ir's figures under these options."""
    out = []
    if "dense" in args.modes or "rrf" in args.modes or "blend" in args.modes:
        threads = (
            f"pinned to {args.ir_blas_threads} thread(s) here (`--ir-blas-threads`)"
            if args.ir_blas_threads
            else "left at its default (one thread per core) here, as in the `corpus` suite"
        )
        out += [
            "ir's dense scoring is a numpy matrix-vector product, whose BLAS is "
            f"{threads}. With several BLAS threads on this 2-core machine, ir's dense "
            "latency jumps by several times whenever another process holds the other "
            "core, which the pairing cannot cancel (it is ir's own response to the load, "
            "not drift that both sides see alike); rowvoi scans single-threaded at this "
            "size.",
            "",
        ]
    if "lexical" in args.modes and len(args.modes) > 1:
        out += [
            "ir's lexical figures here are with its embedding matrix and metadata cached "
            "in the process: the warm-up pass of the other modes loaded them. In a process "
            "that has run only lexical queries on a freshly built corpus (as "
            "the `corpus` suite does, lexical first), ir reads every record's metadata "
            "file again on each lexical query and is many times slower; `--modes "
            "lexical` alone measures that path.",
            "",
        ]
    return out


def fmt_load(avg) -> str:
    return ", ".join(f"{x:.2f}" for x in avg)


#: The results file's sections, in the order a new file shows them.
SECTIONS = ("hashing", "hashing_blas1", "minilm", "minilm_blas1", "minilm_block225")
MD_HEAD = """# Corpus query latency beside ir, paired blocks

Produced by `python -m bench run corpus_paired` (bench/suites/corpus_paired.py): both
systems warm in long-lived processes, their query phases interleaved in short blocks.
One section per setting (embedder, ir's BLAS threads, block size), each naming the run
that made it; a run replaces its own section.
"""


def section_name(args) -> str:
    """The section of a setting: ``KIND[_blasN][_blockN]``."""
    name = args.kind
    if args.ir_blas_threads:
        name += f"_blas{args.ir_blas_threads}"
    if args.block != 25:
        name += f"_block{args.block}"
    return name


def main(argv: Sequence[str], run: Run) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m bench run corpus_paired", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--ir-python", required=True, help="python of a venv with ir 0.1.61")
    ap.add_argument("--kind", choices=sorted(KINDS), required=True)
    ap.add_argument("--passes", type=int, default=8)
    ap.add_argument("--block", type=int, default=25, help="queries per block")
    ap.add_argument("--modes", default="dense,lexical,rrf,blend")
    ap.add_argument(
        "--ir-blas-threads",
        type=int,
        help="threads of numpy's BLAS in ir's process (default: its own default)",
    )
    ap.add_argument(
        "--reference",
        default=str(run.path("corpus.json")),
        help="a corpus suite results JSON whose nDCG@10 to show beside ours",
    )
    ap.add_argument("--markdown", default=str(run.out))
    ap.add_argument("--json", default=str(run.path("corpus_paired.json")))
    args = ap.parse_args(argv)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    known = [m for m, _ in cb.MODES]
    bad = [m for m in modes if m not in known]
    if bad or not modes:
        ap.error(f"--modes: {bad or 'none'} not among {', '.join(known)}")
    if args.passes < 1 or args.block < 1:
        ap.error("--passes and --block must be at least 1")
    args.modes = modes
    args.reference_rel = shown_arg(os.path.abspath(args.reference))
    meta = {
        "command": run.command,
        "machine": run.machine,
        "date": run.date,
        "load_average_start": os.getloadavg(),
        "passes": args.passes,
        "block": args.block,
        "ir_blas_threads": args.ir_blas_threads,
    }
    scratch = tempfile.mkdtemp(prefix="rowvoi-bench-paired-")
    try:
        res, ir_version = run_pairs(args, KINDS[args.kind], scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    meta["load_average_end"] = os.getloadavg()
    meta["versions"] = versions("numpy", peers={"ir": ir_version})
    meta["provenance"] = run.provenance(meta["versions"])
    summ = summarize(res)
    ref = reference_ndcg(args.reference, KINDS[args.kind])
    md = markdown(args, meta, summ, ref)
    name = section_name(args)
    text = update_blocks(
        args.markdown, "corpus_paired", {name: "\n".join(md)}, head=MD_HEAD, order=SECTIONS
    )
    try:
        with open(args.json) as f:
            old = json.load(f)
    except (OSError, ValueError):
        old = {}
    old[name] = {**meta, "modes": summ}
    write(args.json, json.dumps(old, indent=1))
    print(text)
    return 0
