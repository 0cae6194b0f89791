#!/usr/bin/env python3
"""Filtered search: cost against the share of documents a filter allows.

    python -m bench run filters              # the figures in bench/results/filters.md
    python -m bench run filters --quick      # a quick look: --docs 100000 --vectors 20000 --hnsw-n 10000

Three parts, each printing a table and writing it to
``bench/results/filters.md``:

``bm25``
    ``BM25Index`` over the synthetic Zipf corpus (``bench/_common/synth_corpus.py``,
    ``--docs`` documents), 300 Zipf queries and 300 mid-frequency ("top
    10k") queries, top-10, against random filters allowing a share of the
    documents.  Per query: single-thread CPU time of ``search()`` (which
    translates the filter on every call), of ``search_batch(n_threads=1)``
    (one translation for all the queries), the share of queries the engine
    answered with its direct kernel, and the postings it scored.
``flat``
    ``FlatIndex`` (float32, cosine) over ``--vectors`` random 384-d unit
    vectors, batches of 16 queries, top-10: CPU time per query against the
    allowed share.
``hnsw``
    ``HNSWIndex`` over ``--hnsw-n`` clustered 384-d unit vectors (M=16,
    ef_construction=100, ef=64): per query, hnswlib's filtered walk
    (its filter callback) against the exact twin scanning only the allowed
    vectors, and the walk's recall@10 against the exact answer.  The
    smallest share from which the walk stays faster is the switch point;
    ``rowvoi.index.hnsw.FILTER_EXACT_RATIO`` models it (walk ~ 1/share, scan ~
    allowed vectors).

Timings are CPU time of this process (the machine's 2 cores are shared
with other jobs; CPU time counts the work, not the waiting), medians over
``--rounds`` interleaved rounds -- every share once per round -- with the
spread (min-max) beside them.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence

import numpy as np

from .._common.results import CACHE, Run, version_of, versions, write
from .._common.timing import med

SHARES = [1e-5, 1e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1.0]


def cpu() -> float:
    return time.process_time()


def fmt(m: tuple[float, float, float], scale: float = 1e6) -> str:
    return f"{m[0] * scale:,.1f} ({m[1] * scale:,.1f}-{m[2] * scale:,.1f})"


def random_ids(rng: np.random.Generator, n: int, share: float) -> np.ndarray:
    m = max(1, round(share * n))
    return np.sort(rng.choice(n, size=m, replace=False)).astype(np.int64)


# --------------------------------------------------------------------- bm25


def bench_bm25(args) -> list[str]:
    from rowvoi.index.idset import IdSet
    from rowvoi.index.lexical import BM25Index
    from rowvoi.index.text import Analyzer

    from .._common.synth_corpus import load_or_generate, uniform_queries

    c = load_or_generate(str(CACHE), n_docs=args.docs, n_queries=2000)
    mixes = {"zipf": c.queries[:300], "top10k": uniform_queries(300)}
    ix = BM25Index(Analyzer(stem=False, stopwords=False))
    ix.add(c.docs)
    rng = np.random.default_rng(7)
    filters = {s: IdSet(random_ids(rng, args.docs, s)) for s in SHARES}
    filters[None] = None
    rows = []
    for mix, qs in mixes.items():
        single = {s: [] for s in filters}
        batch = {s: [] for s in filters}
        info = {}
        for _ in range(args.rounds):
            for s, f in filters.items():
                t = cpu()
                direct = scored = 0
                for q in qs:
                    r = ix.search(q, 10, filter=f)
                    direct += bool(r.stats.get("filter_direct"))
                    scored += r.stats["postings_scored"]
                single[s].append((cpu() - t) / len(qs))
                info[s] = (direct / len(qs), scored / len(qs))
                t = cpu()
                ix.search_batch(qs, 10, filter=f, n_threads=1)
                batch[s].append((cpu() - t) / len(qs))
        for s in filters:
            label = "no filter" if s is None else f"{s:g}"
            allowed = args.docs if s is None else len(filters[s])
            rows.append(
                f"| {mix} | {label} | {allowed:,} | {fmt(med(single[s]))} | "
                f"{fmt(med(batch[s]))} | {info[s][0]:.0%} | {info[s][1]:,.0f} |"
            )
            print(rows[-1], flush=True)
    head = [
        f"### BM25: {args.docs:,} synthetic documents, top-10, one thread",
        "",
        "Random filters allowing a share of the documents.  `search()` translates the "
        "filter (caller ids to the index's documents) on every call; `search_batch` "
        "once for its 300 queries, so its column shows the kernels alone (the "
        "translation costs O(allowed ids) hash probes: with most of the index allowed it "
        "outweighs the search, so share one filter across a batch).  Direct: "
        "share of queries scored document by document (the small-filter kernel).  "
        "CPU microseconds per query, median (min-max) of "
        f"{args.rounds} interleaved rounds.",
        "",
        "| queries | allowed share | allowed docs | search() us/query | search_batch us/query "
        "| direct | postings scored |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    return head + rows


# --------------------------------------------------------------------- flat


def unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def bench_flat(args) -> list[str]:
    from rowvoi.index.flat import FlatIndex
    from rowvoi.index.idset import IdSet

    rng = np.random.default_rng(3)
    n, d = args.vectors, 384
    ix = FlatIndex(d, "cosine")
    ix.add(unit(rng.standard_normal((n, d), dtype=np.float32)))
    q = unit(rng.standard_normal((16, d), dtype=np.float32))
    filters = {s: IdSet(random_ids(rng, n, s)) for s in SHARES if s * n >= 1}
    filters[None] = None
    times = {s: [] for s in filters}
    for _ in range(args.rounds):
        for s, f in filters.items():
            t = cpu()
            ix.search(q, 10, filter=f, n_threads=1)
            times[s].append((cpu() - t) / len(q))
    rows = []
    for s in filters:
        label = "no filter" if s is None else f"{s:g}"
        allowed = n if s is None else len(filters[s])
        rows.append(f"| {label} | {allowed:,} | {fmt(med(times[s]))} |")
        print(rows[-1], flush=True)
    return [
        f"### Flat: {n:,} random 384-d unit vectors, float32, batches of 16 queries, "
        "top-10, one thread",
        "",
        "Only the panels of 16 vectors holding an allowed vector are scanned.  CPU "
        f"microseconds per query, median (min-max) of {args.rounds} rounds.",
        "",
        "| allowed share | allowed vectors | us/query |",
        "| ---: | ---: | ---: |",
    ] + rows


# --------------------------------------------------------------------- hnsw


def clustered(rng, n, d, n_centers=100, spread=1.0):
    centers = rng.standard_normal((n_centers, d), dtype=np.float32)
    x = centers[rng.integers(0, n_centers, n)] + spread * rng.standard_normal(
        (n, d), dtype=np.float32
    )
    return unit(x)


def bench_hnsw(args) -> tuple[list[str], float | None]:
    from rowvoi.index.flat import recall_at_k
    from rowvoi.index.hnsw import HNSWIndex
    from rowvoi.index.idset import IdSet

    rng = np.random.default_rng(5)
    n, d, nq = args.hnsw_n, 384, 100
    x = clustered(rng, n + nq, d)
    h = HNSWIndex(d, "cosine", M=16, ef_construction=100, ef=64, seed=100, n_threads=2)
    t = time.time()
    h.add(x[:n])
    build = time.time() - t
    queries = x[n:]
    shares = [1e-3, 3e-3, 1e-2, 2e-2, 5e-2, 0.08, 0.1, 0.12, 0.15, 0.2, 0.3, 0.5, 1.0]
    filters = {s: IdSet(random_ids(rng, n, s)) for s in shares}
    h._g.set_ef(h.ef)  # what HNSWIndex.search sets for k = 10
    walk = {s: [] for s in shares}
    exact = {s: [] for s in shares}
    recall = {}
    for r in range(args.rounds):
        for s, f in filters.items():
            t = cpu()
            got = []
            for qv in queries:
                ids, _ = h._g.knn_query(
                    qv, k=10, num_threads=1, filter=f.as_frozenset().__contains__
                )
                got.append(ids[0].astype(np.int64))
            walk[s].append((cpu() - t) / nq)
            t = cpu()
            truth = [
                h.exact.search(qv, 10, filter=f, n_threads=1, exact=True).ids for qv in queries
            ]
            exact[s].append((cpu() - t) / nq)
            if r == 0:
                recall[s] = recall_at_k(np.array(got), np.array(truth))
    rows, switch = [], None
    for s in shares:
        w, e = med(walk[s]), med(exact[s])
        faster = "hnsw walk" if w[0] < e[0] else "exact scan"
        if w[0] < e[0] and switch is None:
            switch = s
        if w[0] >= e[0]:
            switch = None  # the walk must stay faster for every larger share
        rows.append(
            f"| {s:g} | {len(filters[s]):,} | {fmt(w)} | {fmt(e)} | {recall[s]:.3f} | {faster} |"
        )
        print(rows[-1], flush=True)
    head = [
        f"### HNSW with a filter: {n:,} clustered 384-d unit vectors, top-10, one thread",
        "",
        f"M=16, ef_construction=100, ef=64 (build {build:.1f} s on 2 threads).  Per "
        "query: hnswlib's walk with its filter callback against the exact twin "
        "scanning only the allowed vectors (exact=True), and the walk's recall@10 "
        f"against the exact answer.  CPU microseconds per query, median (min-max) of "
        f"{args.rounds} rounds.",
        "",
        "| allowed share | allowed | hnsw walk us/query | exact scan us/query "
        "| walk recall@10 | faster |",
        "| ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    return head + rows, switch


# --------------------------------------------------------------------- main


def main(argv: Sequence[str], run: Run) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m bench run filters", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--docs", type=int, default=1_000_000)
    ap.add_argument("--vectors", type=int, default=200_000)
    ap.add_argument("--hnsw-n", type=int, default=50_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--parts", default="bm25,flat,hnsw")
    ap.add_argument("--out", default=str(run.out))
    args = ap.parse_args(argv)
    out = [
        "# Filtered search",
        "",
        *run.header(versions("numpy", peers={"hnswlib": version_of("hnswlib")})),
    ]
    parts = args.parts.split(",")
    if "bm25" in parts:
        out += bench_bm25(args) + [""]
    if "flat" in parts:
        out += bench_flat(args) + [""]
    if "hnsw" in parts:
        rows, switch = bench_hnsw(args)
        out += rows + [""]
        out.append(
            "Smallest allowed share from which the walk stays faster: "
            + (f"**{switch:g}**" if switch is not None else "none measured")
            + "."
        )
        from rowvoi.index.hnsw import FILTER_EXACT_RATIO

        m = (FILTER_EXACT_RATIO * args.hnsw_n) ** 0.5
        out.append(
            f"`HNSWIndex.filter_route` sends a filter allowing m ids to the exact twin "
            f"when m^2 <= {FILTER_EXACT_RATIO:g} x size: here up to {m:,.0f} allowed "
            f"({m / args.hnsw_n:.1%})."
        )
        out.append("")
    write(args.out, "\n".join(out).rstrip("\n") + "\n")
    print("\n".join(out))
    return 0
