#!/usr/bin/env python3
"""Benchmark a sharded corpus on Dask against one corpus of the same documents.

What it measures
----------------
For ``--docs`` synthetic documents (default 1M), hashing embedder:

* **build**: wall time of ``rowvoi.dask.build_sharded`` (``--shards``
  shards, default 4, on a ``distributed.LocalCluster`` of ``--workers``
  worker processes, default 2, 1 thread each; the documents are generated
  on the workers, chunk by chunk, as a Dask bag: no text passes through
  the client) and of ``rowvoi.corpus.build`` of one corpus in this process;
  a no-op second sharded build (nothing changed);
* **equality**: for every query and mode (lexical, dense, hybrid RRF,
  hybrid blend), the hits of the sharded corpus (artifact id, surface,
  score) against the single corpus's: the count equal of the total;
* **latency**: p50 and p95 of one query at a time, per mode, both sides
  (the sharded corpus served by the cluster's workers: one round per
  query);
* **throughput**: queries per second of ``ShardedCorpus.search_batch`` over
  all queries in one round, per mode, against one corpus answering them one
  after another.

The documents
-------------
Document ``i`` has 4 to 40 words drawn (Zipf-like, exponent 1.1) from a
vocabulary of 20,000 synthetic words, from a fixed seed per chunk of 10,000
documents, and a ``year`` field; queries are 2-3 words drawn the same way
(``--queries``, default 200). The sharded corpus is written under
``--data-dir`` (default ``/tmp/rowvoi-bench-dask-corpus``; removed first,
never in the repository) and its disk size is reported.

How to run
----------
From the repository root with the ``dask`` extra installed::

    python -m bench run dask_corpus                    # 1M documents
    python -m bench run dask_corpus --quick            # 20k documents
    python -m bench run dask_corpus --docs 10000000 --sharded-only --memory 6GB

``--sharded-only`` leaves the single corpus out (a scale where one index
in one process does not fit): no equality column, the sharded build,
latency and throughput alone. Every run reports each worker process's
peak resident memory after the build and after the queries
(``getrusage``), and the sharded corpus's size on disk. The documents are
generated on the workers in chunks of 10,000, so the client never holds
them; at 1M documents the sharded corpus takes about 3.9 kB per
document on disk (3.9 GB), so 10M need about 40 GB free under
``--data-dir``.

Results go to ``bench/results/dask_corpus.md`` (and ``.json``). The machine
this runs on may be shared; the report says so.
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

import numpy as np

from .._common.results import Run, versions, write

CHUNK = 10_000
VOCAB = 20_000
MODES = (("lexical", "rrf"), ("dense", "rrf"), ("hybrid", "rrf"), ("hybrid", "blend"))


def _words(rng: np.random.Generator, n: int) -> list[str]:
    ranks = np.minimum(rng.zipf(1.1, n), VOCAB) - 1
    return [f"w{r:05d}" for r in ranks.tolist()]


def gen_chunk(c: int, n_docs: int, seed: int) -> list[dict[str, Any]]:
    """The records of chunk ``c`` (documents c*CHUNK .. min(n_docs, ...))."""
    rng = np.random.default_rng(seed + c)
    lo, hi = c * CHUNK, min(n_docs, (c + 1) * CHUNK)
    out = []
    for i in range(lo, hi):
        n = int(rng.integers(4, 41))
        out.append(
            {
                "id": f"d{i:08d}",
                "text": " ".join(_words(rng, n)),
                "year": int(rng.integers(1950, 2025)),
            }
        )
    return out


def _queries(n: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed + 10**6)
    return [" ".join(_words(rng, int(rng.integers(2, 4)))) for _ in range(n)]


def _key(hits: Any) -> list[tuple[str, int, float]]:
    return [(h.artifact_id, h.surface_index, h.score) for h in hits]


def _pct(xs: list[float], q: float) -> float:
    return float(np.percentile(np.array(xs), q)) * 1e3


def _peak_rss(client: Any) -> dict[str, float]:
    """Peak resident memory (MB) of each worker process so far."""

    def peak() -> float:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # (KB on Linux)

    got = client.run(peak)
    return {f"worker {i}": round(got[w], 1) for i, w in enumerate(sorted(got))}


def _disk(p: Path) -> int:
    return sum(f.stat().st_size for f in p.rglob("*") if f.is_file())


def cluster_args(ap: argparse.ArgumentParser, *, docs: int, queries: int, data_dir: str) -> None:
    """The options the cluster benches share: the generated corpus
    (``--docs``, ``--seed``), its shards and the LocalCluster (``--shards``,
    ``--workers``, ``--memory``), the queries (``--queries``, ``--k``) and
    the scratch directory (``--data-dir``)."""
    ap.add_argument("--docs", type=int, default=docs)
    ap.add_argument("--shards", type=int, default=4)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--memory", default="4GB", help="memory_limit per worker")
    ap.add_argument("--queries", type=int, default=queries)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--seed", type=int, default=20261206)
    ap.add_argument("--data-dir", default=data_dir)


def fresh_data(data_dir: str) -> tuple[Path, Path]:
    """``data_dir`` emptied (made if need be) and the sharded corpus's
    root in it."""
    data = Path(data_dir)
    shutil.rmtree(data, ignore_errors=True)
    data.mkdir(parents=True)
    return data, data / "sharded"


def bench_cluster(args: argparse.Namespace) -> Any:
    """The benches' LocalCluster: ``args.workers`` one-thread worker
    processes of ``args.memory`` each."""
    from distributed import LocalCluster

    return LocalCluster(
        n_workers=args.workers,
        threads_per_worker=1,
        processes=True,
        memory_limit=args.memory,
        dashboard_address=None,
        silence_logs=50,
    )


def records_bag(n_docs: int, seed: int) -> Any:
    """The ``n_docs`` generated records as a Dask bag, made on the workers
    in chunks of :data:`CHUNK` (:func:`gen_chunk`)."""
    import dask.bag as db

    n_chunks = (n_docs + CHUNK - 1) // CHUNK
    return (
        db.from_sequence(range(n_chunks), npartitions=max(1, min(n_chunks, 64)))
        .map(gen_chunk, n_docs, seed)
        .flatten()
    )


def build_records(bag: Any, root: Path, shards: int, client: Any) -> Any:
    """``build_sharded`` of the generated records (hashing embedder, the
    numeric ``year`` filter field) at ``root``; its report."""
    from rowvoi.dask import build_sharded

    return build_sharded(
        bag,
        None,
        shards=shards,
        root=root,
        client=client,
        embedder="hashing",
        metadata_keys=["year"],
        filter_types={"year": "numeric"},
    )


def main(argv: Sequence[str], run: Run | None = None) -> int:
    """The suite (``run``: the runner's context)."""
    ap = argparse.ArgumentParser(
        prog="python -m bench run dask_corpus", description=__doc__.split("\n")[0]
    )
    cluster_args(ap, docs=1_000_000, queries=200, data_dir="/tmp/rowvoi-bench-dask-corpus")
    ap.add_argument(
        "--sharded-only",
        action="store_true",
        help="no single corpus (a scale where one index does not fit): build, latency, "
        "throughput, peak memory per worker and disk of the sharded corpus alone",
    )
    ap.add_argument("--out", default=str(run.path("dask_corpus")) if run else None)
    args = ap.parse_args(argv)
    if run is None:
        ap.error("run the suite as: python -m bench run dask_corpus")

    from distributed import Client

    from rowvoi.corpus import CorpusSource, CorpusStore, WholeText, build, search
    from rowvoi.dask import open_sharded

    emb = "hashing"
    data, root = fresh_data(args.data_dir)
    queries = _queries(args.queries, args.seed)
    res: dict[str, Any] = {"docs": args.docs, "shards": args.shards, "workers": args.workers}
    with bench_cluster(args) as cluster, Client(cluster) as client:
        bag = records_bag(args.docs, args.seed)
        t0 = time.perf_counter()
        rep = build_records(bag, root, args.shards, client)
        res["sharded_build_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        again = build_records(bag, root, args.shards, client)
        res["sharded_noop_build_s"] = time.perf_counter() - t0
        res["noop_changed_shards"] = again.changed_shards
        res["n_records"] = rep.n_records
        res["disk_bytes"] = _disk(root)
        print(f"sharded build {res['sharded_build_s']:.1f} s", file=sys.stderr)

        res["build_peak_rss_mb"] = _peak_rss(client)
        one = None
        if not args.sharded_only:
            records = {}
            t0 = time.perf_counter()
            for c in range((args.docs + CHUNK - 1) // CHUNK):
                for r in gen_chunk(c, args.docs, args.seed):
                    records[r["id"]] = r
            res["generate_s"] = time.perf_counter() - t0
            src = CorpusSource(
                None,
                records,
                WholeText(text_key="text"),
                embedder=emb,
                metadata_of=lambda a, r: {"year": r["year"]},
                filter_types={"year": "numeric"},
            )
            t0 = time.perf_counter()
            one = build(src, store=CorpusStore(data / "one"), progress=False)
            res["one_build_s"] = time.perf_counter() - t0
            print(f"one build {res['one_build_s']:.1f} s", file=sys.stderr)
            del records, src

        sc = open_sharded(root, client=client)
        sc.search_batch(queries[:2], mode="hybrid", k=args.k)  # shards loaded on the workers
        for q in queries[:2]:
            if one is not None:
                search(one, q, mode="hybrid", k=args.k)
        per_mode = {}
        for mode, fusion in MODES:
            label = mode if mode != "hybrid" else f"hybrid-{fusion}"
            kw = dict(mode=mode, fusion=fusion, k=args.k)
            lat_s, lat_1, want = [], [], []
            for q in queries if one is not None else ():
                t = time.perf_counter()
                want.append(_key(search(one, q, **kw)))
                lat_1.append(time.perf_counter() - t)
            got_single = []
            for q in queries:
                t = time.perf_counter()
                got_single.append(_key(search(sc, q, **kw)))
                lat_s.append(time.perf_counter() - t)
            t = time.perf_counter()
            batch = sc.search_batch(queries, **kw)
            batch_s = time.perf_counter() - t
            equal = sum(g == w for g, w in zip(got_single, want))
            equal_b = sum(_key(b) == w for b, w in zip(batch, want))
            per_mode[label] = {
                "queries": len(queries),
                "sharded_p50_ms": _pct(lat_s, 50),
                "sharded_p95_ms": _pct(lat_s, 95),
                "sharded_batch_qps": len(queries) / batch_s,
            }
            if one is not None:
                per_mode[label].update(
                    equal=equal,
                    equal_batch=equal_b,
                    one_p50_ms=_pct(lat_1, 50),
                    one_p95_ms=_pct(lat_1, 95),
                    one_qps=len(queries) / sum(lat_1),
                )
            print(label, per_mode[label], file=sys.stderr)
        res["modes"] = per_mode
        res["peak_rss_mb"] = _peak_rss(client)
    shutil.rmtree(data, ignore_errors=True)

    v = versions("numpy", "dask", "distributed")
    stem = Path(args.out)
    write(
        stem.with_suffix(".json"), json.dumps({"command": run.command, "results": res}, indent=2)
    )
    title = "alone" if args.sharded_only else "vs one corpus"
    lines = [f"# Sharded corpus on Dask {title} ({args.docs:,} documents)", ""]
    lines += run.header(v)
    lines += [
        f"{args.shards} shards on {args.workers} worker processes (1 thread, "
        f"{args.memory} each); hashing embedder; {res['n_records']:,} records; sharded corpus "
        f"{res['disk_bytes'] / 1e6:.0f} MB on disk.",
        "",
        "| build | seconds |",
        "|---|---|",
        f"| sharded (generated on the workers) | {res['sharded_build_s']:.1f} |",
        f"| sharded, second run (no change: shards rebuilt {res['noop_changed_shards']}) "
        f"| {res['sharded_noop_build_s']:.1f} |",
    ]
    if not args.sharded_only:
        lines.append(f"| one corpus (in this process) | {res['one_build_s']:.1f} |")
    lines += [
        "",
        "Peak resident memory per worker process: after the build "
        + ", ".join(f"{w} {mb:.0f} MB" for w, mb in res["build_peak_rss_mb"].items())
        + "; after the queries "
        + ", ".join(f"{w} {mb:.0f} MB" for w, mb in res["peak_rss_mb"].items())
        + ".",
        "",
    ]
    if args.sharded_only:
        lines += ["| mode | sharded p50 / p95 ms | sharded batch q/s |", "|---|---|---|"]
        for label, m in res["modes"].items():
            lines.append(
                f"| {label} | {m['sharded_p50_ms']:.1f} / {m['sharded_p95_ms']:.1f} "
                f"| {m['sharded_batch_qps']:.0f} |"
            )
    else:
        lines += [
            "| mode | equal hits (single / batch) | one p50 / p95 ms | sharded p50 / p95 ms "
            "| one q/s | sharded batch q/s |",
            "|---|---|---|---|---|---|",
        ]
        for label, m in res["modes"].items():
            lines.append(
                f"| {label} | {m['equal']}/{m['queries']} / {m['equal_batch']}/{m['queries']} "
                f"| {m['one_p50_ms']:.2f} / {m['one_p95_ms']:.2f} "
                f"| {m['sharded_p50_ms']:.1f} / {m['sharded_p95_ms']:.1f} "
                f"| {m['one_qps']:.0f} | {m['sharded_batch_qps']:.0f} |"
            )
    write(stem.with_suffix(".md"), "\n".join(lines) + "\n")
    print(stem.with_suffix(".md").read_text())
    return 0
