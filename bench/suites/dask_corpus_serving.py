#!/usr/bin/env python3
"""How a sharded corpus's queries reach the workers: actor calls vs tasks.

What it measures
----------------
One sharded corpus (``--docs`` synthetic documents of the ``dask_corpus``
suite, ``--shards`` shards, a ``distributed.LocalCluster`` of ``--workers``
worker processes, 1 thread each), searched two ways on the same cluster,
the two interleaved query by query (alternating which goes first) so that
the machine's load falls on both alike:

* **actor** -- what :class:`rowvoi.dask.ShardedCorpus` does: one direct
  call per worker to its ``ShardServer`` actor, answering for every shard
  the worker holds, argument and answer as one pickle each;
* **tasks** -- the serving it replaced, kept here as the baseline: one
  Dask task per shard pinned to its worker (``client.submit`` of
  ``rowvoi.dask._shard.run_pass``, ``wait``, ``gather``), through the
  scheduler, results serialised by Dask.

Per mode (lexical, dense, hybrid RRF, hybrid blend): p50/p95 latency of
one query at a time, batch throughput (all queries in one round), and how
many hit lists the two give equal (they run the same shard passes and the
same merge: every one must be).

How to run
----------
From the repository root with the ``dask`` extra installed::

    python -m bench run dask_corpus_serving                 # 200k documents
    python -m bench run dask_corpus_serving --quick         # 20k documents

Results go to ``bench/results/dask_corpus_serving.md`` (and ``.json``).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._common.results import Run, versions, write
from .dask_corpus import (
    MODES,
    _key,
    _pct,
    _queries,
    bench_cluster,
    build_records,
    cluster_args,
    fresh_data,
    records_bag,
)


def _tasks_run_cluster(
    self: Any,
    m: dict[str, Any],
    live: list[int],
    qs: list[str],
    qvecs: list[Any],
    p: Any,
    flt: Any,
    fetch: list[int],
) -> list[list[dict[str, Any]]]:
    """The baseline serving: one pinned task per shard (no failover: the
    benchmark loses no worker)."""
    from distributed import wait

    from rowvoi.dask import _shard

    client = self.client
    workers = sorted(client.scheduler_info(n_workers=-1).get("workers", {}))
    futs = [
        client.submit(
            _shard.run_pass,
            self.root,
            i,
            m,
            qs,
            qvecs,
            p,
            flt,
            fetch,
            workers=[workers[i % len(workers)]],
            allow_other_workers=False,
            pure=False,
        )
        for i in live
    ]
    wait(futs)
    return list(client.gather(futs))


def main(argv: Sequence[str], run: Run | None = None) -> int:
    """The suite (``run``: the runner's context)."""
    ap = argparse.ArgumentParser(
        prog="python -m bench run dask_corpus_serving", description=__doc__.split("\n")[0]
    )
    cluster_args(ap, docs=200_000, queries=100, data_dir="/tmp/rowvoi-bench-dask-corpus-serving")
    ap.add_argument("--out", default=str(run.path("dask_corpus_serving")) if run else None)
    args = ap.parse_args(argv)
    if run is None:
        ap.error("run the suite as: python -m bench run dask_corpus_serving")

    from distributed import Client

    from rowvoi.corpus import search
    from rowvoi.dask import open_sharded

    data, root = fresh_data(args.data_dir)
    queries = _queries(args.queries, args.seed)
    res: dict[str, Any] = {"docs": args.docs, "shards": args.shards, "workers": args.workers}
    with bench_cluster(args) as cluster, Client(cluster) as client:
        bag = records_bag(args.docs, args.seed)
        t0 = time.perf_counter()
        build_records(bag, root, args.shards, client)
        res["build_s"] = time.perf_counter() - t0
        actor = open_sharded(root, client=client)
        tasks = open_sharded(root, client=client)
        tasks._run_cluster = _tasks_run_cluster.__get__(tasks)  # type: ignore[method-assign]
        sides = {"actor": actor, "tasks": tasks}
        for sc in sides.values():
            sc.search_batch(queries[:2], mode="hybrid", k=args.k)  # shards loaded
        per_mode = {}
        for mode, fusion in MODES:
            label = mode if mode != "hybrid" else f"hybrid-{fusion}"
            kw = dict(mode=mode, fusion=fusion, k=args.k)
            lat: dict[str, list[float]] = {s: [] for s in sides}
            equal = 0
            for j, q in enumerate(queries):
                order = ("tasks", "actor") if j % 2 == 0 else ("actor", "tasks")
                got = {}
                for s in order:
                    t = time.perf_counter()
                    got[s] = _key(search(sides[s], q, **kw))
                    lat[s].append(time.perf_counter() - t)
                equal += got["actor"] == got["tasks"]
            row: dict[str, Any] = {"equal": equal, "queries": len(queries)}
            for s in ("tasks", "actor"):
                t = time.perf_counter()
                sides[s].search_batch(queries, **kw)
                row[f"{s}_batch_qps"] = len(queries) / (time.perf_counter() - t)
                row[f"{s}_p50_ms"] = _pct(lat[s], 50)
                row[f"{s}_p95_ms"] = _pct(lat[s], 95)
            per_mode[label] = row
            print(label, row, file=sys.stderr)
        res["modes"] = per_mode
    shutil.rmtree(data, ignore_errors=True)

    v = versions("numpy", "dask", "distributed")
    stem = Path(args.out)
    write(
        stem.with_suffix(".json"), json.dumps({"command": run.command, "results": res}, indent=2)
    )
    lines = [f"# Sharded search: actor calls vs one task per shard ({args.docs:,} documents)"]
    lines += [""] + run.header(v)
    lines += [
        f"{args.shards} shards on {args.workers} worker processes (1 thread, {args.memory} "
        f"each); hashing embedder; the two servings interleaved query by query on one "
        f"cluster (sharded build {res['build_s']:.1f} s).",
        "",
        "| mode | equal hits | tasks p50 / p95 ms | actor p50 / p95 ms | tasks batch q/s "
        "| actor batch q/s |",
        "|---|---|---|---|---|---|",
    ]
    for label, m in res["modes"].items():
        lines.append(
            f"| {label} | {m['equal']}/{m['queries']} "
            f"| {m['tasks_p50_ms']:.1f} / {m['tasks_p95_ms']:.1f} "
            f"| {m['actor_p50_ms']:.1f} / {m['actor_p95_ms']:.1f} "
            f"| {m['tasks_batch_qps']:.0f} | {m['actor_batch_qps']:.0f} |"
        )
    write(stem.with_suffix(".md"), "\n".join(lines) + "\n")
    print(stem.with_suffix(".md").read_text())
    return 0
