"""BM25 top-k through the C API, without Python: ``bench/c/bench_bm25.c`` on
an index built and saved by rowvoi over the synthetic Zipf corpus.

    python -m bench run c_bm25 [--docs 1000000] [--queries 2000] [--query-mode zipf|top10k]
        [--k 10] [--repeats 5] [--threads 0]

The runner builds the program (``python -m bench build-c``).  The corpus is
the ``bm25`` suite's synthetic one (``bench/_common/synth_corpus.py``: Zipf
words, no stemming or stopwords), indexed with ``BM25Index`` and saved to a
scratch file; the program loads it, answers every query ``--repeats`` times
on one thread (``rv_bm25_search``; queries per second, median and min-max
over the repeats) and once as a batch on ``--threads`` threads (0: all
cores), and reports the mean work per query (documents and postings scored)
and a checksum of the results.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
from collections.abc import Sequence

from .._common.results import CACHE, Run, versions, write
from .._common.synth_corpus import load_or_generate, uniform_queries


def main(argv: Sequence[str], run: Run) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m bench run c_bm25", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--docs", type=int, default=1_000_000)
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument("--query-mode", choices=["zipf", "top10k"], default="zipf")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=5, help="single-thread passes (median)")
    ap.add_argument("--threads", type=int, default=0, help="batch threads (0: all cores)")
    ap.add_argument("--out", default=str(run.out))
    args = ap.parse_args(argv)
    if min(args.docs, args.queries, args.k, args.repeats) < 1 or args.threads < 0:
        ap.error("--docs, --queries, --k and --repeats must be at least 1, --threads >= 0")

    from rowvoi.index.lexical import BM25Index
    from rowvoi.index.text import Analyzer

    c = load_or_generate(str(CACHE), n_docs=args.docs, n_queries=max(args.queries, 10_000))
    qs = c.queries[: args.queries] if args.query_mode == "zipf" else uniform_queries(args.queries)
    exe = run.c_benches["bench_bm25"]
    with tempfile.TemporaryDirectory(prefix="rowvoi-bench-c-bm25-") as tmp:
        index, queries = os.path.join(tmp, "index.rvx"), os.path.join(tmp, "queries.txt")
        ix = BM25Index(Analyzer(stem=False, stopwords=False))
        ix.add(c.docs)
        ix.save(index)
        del ix
        with open(queries, "w", encoding="utf-8") as f:
            f.write("\n".join(qs) + "\n")
        cmd = [str(exe), index, queries, str(args.k), str(args.repeats), str(args.threads)]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    one, batch = (json.loads(line) for line in out.splitlines() if line.strip())
    lines = [
        "# BM25 search through the C API (bench_bm25)",
        "",
        *run.header(versions()),
        f"Synthetic Zipf corpus: {one['n_docs']:,} documents, {one['n_postings']:,} postings; "
        f"{one['n_queries']:,} {args.query_mode} queries, top-{one['k']}; index loaded from "
        f"its file in {one['load_s']:.3f} s.",
        "",
        "| case | threads | QPS | notes |",
        "|---|---:|---:|---|",
        f"| rv_bm25_search, query by query | 1 | {one['qps']:,.0f} ({one['qps_min']:,.0f}-"
        f"{one['qps_max']:,.0f}) | median (min-max) of {one['repeats']} passes; per query "
        f"{one['docs_scored']:,.1f} documents and {one['postings_scored']:,.1f} of "
        f"{one['postings_total']:,.1f} postings scored |",
        f"| rv_bm25_search_batch | {batch['threads'] or 'all'} | {batch['qps']:,.0f} | one pass |",
        "",
        f"Checksum of the results: {one['checksum']}.",
    ]
    write(args.out, "\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0
