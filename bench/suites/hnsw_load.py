#!/usr/bin/env python3
"""What checking an HNSW directory costs when it is loaded.

    python bench/hnsw_load.py                 # 100,000 x 128, the figures in bench/results/hnsw_load.md
    python bench/hnsw_load.py --n 20000       # a quick look

Builds (once, into ``--dir``, default a temporary directory) an
:class:`rowvoi.index.hnsw.HNSWIndex` of ``--n`` normal random vectors of
dimension ``--dim`` (cosine, M=16, ef_construction=100, two build threads)
and times, as medians of ``--reps`` runs:

* ``HNSWIndex.load`` as a whole;
* its parts: the structural check of the graph (:c:func:`rv_hnsw_check`
  through ``rowvoi.index._flat.hnsw_check``), the labels-against-twin check, the
  SHA-256 of the graph, the private sealed copy hnswlib reads, hnswlib's
  own ``load_index`` of that copy, and the exact twin's load;
* what loading did before the checks: the digest, the twin and hnswlib
  reading the graph file directly.

Prints a table and writes it to ``bench/results/hnsw_load.md``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import hnswlib
import numpy as np

from rowvoi._atomic import sha256_file
from rowvoi.index import _file as _indexfile, _flat
from rowvoi.index.flat import FlatIndex
from rowvoi.index.hnsw import HNSWIndex, _check_labels

from .._common.results import Run, publish, scratch_dir, versions


def median_ms(fn: Callable[[], object], reps: int) -> float:
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return 1e3 * statistics.median(times)


def main(argv: Sequence[str], run: Run) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m bench run hnsw_load", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--dir", type=Path, default=None, help="reuse or keep the index here")
    args = ap.parse_args(argv)
    d = args.dir or Path(scratch_dir("rowvoi-hnsw-load-"))  # (a temporary one: removed at exit)
    if not (d / "hnsw.json").exists():
        x = np.random.default_rng(0).normal(size=(args.n, args.dim)).astype(np.float32)
        h = HNSWIndex(
            args.dim, M=16, ef_construction=100, seed=1, n_threads=2, max_elements=args.n
        )
        h.add(x)
        h.save(d)
    meta = json.loads((d / "hnsw.json").read_text())
    graph, exact_path = d / meta["hnsw_file"], d / meta["exact_file"]
    n, dim, m, efc, cap = (
        meta[k] for k in ("element_count", "dim", "M", "ef_construction", "max_elements")
    )
    reps = args.reps
    rows: dict[str, float] = {
        "HNSWIndex.load (all of it)": median_ms(lambda: HNSWIndex.load(d), reps)
    }
    fd, size = _indexfile.open_file(graph)
    exact = FlatIndex.load(exact_path)
    try:
        with _indexfile.private_copy(fd, size, str(graph)) as (mem, private):
            info = _flat.hnsw_check(mem, dim, m, efc, n, cap)
            rows["structural check (rv_hnsw_check)"] = median_ms(
                lambda: _flat.hnsw_check(mem, dim, m, efc, n, cap), 3 * reps
            )
            rows["labels against the twin's ids"] = median_ms(
                lambda: _check_labels(mem, info, exact, graph), reps
            )
            rows["SHA-256 of the graph"] = median_ms(lambda: hashlib.sha256(mem).hexdigest(), reps)

            def from_copy() -> None:
                hnswlib.Index(space="cosine", dim=dim).load_index(private, max_elements=n)

            rows["hnswlib load_index (of the copy)"] = median_ms(from_copy, reps)

        def copy() -> None:
            with _indexfile.private_copy(fd, size, str(graph)):
                pass

        rows["private sealed copy"] = median_ms(copy, reps)
    finally:
        os.close(fd)
    rows["exact twin (FlatIndex.load)"] = median_ms(lambda: FlatIndex.load(exact_path), reps)

    def before() -> None:
        assert sha256_file(graph) == meta["hnsw_sha256"]
        FlatIndex.load(exact_path)
        hnswlib.Index(space="cosine", dim=dim).load_index(str(graph), max_elements=cap)

    rows["before the checks: digest + twin + hnswlib from the file"] = median_ms(before, reps)
    total = rows["HNSWIndex.load (all of it)"]
    lines = [
        "# Loading an HNSW directory: what the checks cost",
        "",
        *run.header(versions("numpy", "hnswlib")),
        f"{n:,} vectors of dimension {dim}, M {m}, a {size / 1e6:.0f} MB graph; "
        f"medians of {reps} runs (the check: {3 * reps}).",
        "",
        "| step | ms | share of HNSWIndex.load |",
        "|---|---|---|",
    ]
    for name, ms in rows.items():
        lines.append(f"| {name} | {ms:.1f} | {100 * ms / total:.1f}% |")
    publish(run.out, lines)
    return 0
