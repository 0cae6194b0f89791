"""The corpus's compiled dense search against the general path it replaces,
in one process, on Cranfield.

    python bench/corpus_dense_path.py [--kind minilm|hashing] [--passes 8]
        [--markdown bench/results/corpus_dense_path_KIND.md]

An unfiltered dense search of a query vector on a flat index answers in one
compiled call (``rowvoi._hot.dense_search``: the query's unit form, the
exact scan, the hits). Setting the loaded generation's ``fast`` entry to
``None`` sends the same searches down the general path (argument checks,
``_query_vector``, ``_search_loaded``, the index's ``search1``,
``_dense_hits``) -- the code before the compiled call existed. Both run on
the same corpus in the same process, in alternation (which goes first
alternates from pass to pass), and must return the same hits.

Three regimes, since what a query costs depends on what the caches hold:

- **steady**: the 225 queries back to back;
- **gc per block**: ``gc.collect()`` before each block of 25 queries, as
  ``bench/corpus_query_paired.py`` does on both sides (the collector walks
  every object, evicting the caches);
- **evicted**: 64 MiB touched before each query (every query cold).

Each figure is a query's own time (``bench/corpus.py``'s ``search_ours``:
the query's embedding is timed apart and excluded), p50 and p95 over all
passes.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import _timing  # noqa: E402
import corpus as cb  # noqa: E402

REGIMES = ("steady", "gc per block", "evicted")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kind", choices=("minilm", "hashing"), default="minilm")
    ap.add_argument("--passes", type=int, default=8)
    ap.add_argument("--markdown", help="default: bench/results/corpus_dense_path_KIND.md")
    args = ap.parse_args()
    if args.markdown is None:
        args.markdown = os.path.join(HERE, "results", f"corpus_dense_path_{args.kind}.md")

    docs, edits, queries, _ = cb.cranfield()
    table = None
    if args.kind == "minilm":
        table = cb.minilm_table(list(docs.values()) + list(edits.values()) + queries)
    kind = "table" if args.kind == "minilm" else "hashing"
    c, _, _ = cb.build_ours(docs, edits, kind, table, tempfile.mkdtemp())
    emb = c.embedder
    kw = dict(cb.MODES)["dense"]
    n = len(queries)
    for q in queries:  # loads the generation (and warms both paths once)
        cb.search_ours(c, emb, q, kw)
    cur = c._current()
    fast = cur.fast
    if fast is None:
        raise SystemExit("the corpus has no compiled dense path (an HNSW graph, no texts?)")
    junk = np.ones(64 << 20, dtype=np.uint8)
    lat = {(on, r): [] for on in (True, False) for r in REGIMES}
    hits = {True: None, False: None}
    for p in range(args.passes):
        for on in (True, False) if p % 2 == 0 else (False, True):
            cur.fast = fast if on else None
            ranked = []
            for regime in REGIMES:
                for i in range(n):
                    if regime == "gc per block" and i % 25 == 0:
                        gc.collect()
                    elif regime == "evicted":
                        junk[::64] += 1  # every line of 64 MiB written
                    sec, ids = cb.search_ours(c, emb, queries[i], kw)
                    lat[on, regime].append(sec * 1e6)
                    ranked.append(ids)
            if hits[on] is None:
                hits[on] = ranked
            elif hits[on] != ranked:
                raise SystemExit("a pass returned other hits than the first")
    cur.fast = fast
    if hits[True] != hits[False]:
        raise SystemExit("the compiled call and the general path returned different hits")

    rows = []
    for regime in REGIMES:
        new, old = np.array(lat[True, regime]), np.array(lat[False, regime])
        p50n, p95n = np.percentile(new, [50, 95])
        p50o, p95o = np.percentile(old, [50, 95])
        rows.append(
            f"| {regime} | {p50o:.0f} | {p50n:.0f} | {p50o / p50n:.2f}x "
            f"| {p95o:.0f} | {p95n:.0f} | {p95o / p95n:.2f}x |"
        )
    load = os.getloadavg()
    argv = sys.argv[1:]
    label = "MiniLM vectors (a callable)" if args.kind == "minilm" else "hashing:512"
    text = "\n".join(
        [
            f"# The compiled dense search against the general path: Cranfield, {label}",
            "",
            f"Produced by `{_timing.command('bench/corpus_dense_path.py', argv)}` on a "
            f"{platform.machine()}, {os.cpu_count()} cores (shared; "
            f"{_timing.vector_extensions()}) machine, Python {platform.python_version()}, "
            f"{time.strftime('%Y-%m-%d %H:%M')}, load average at the end "
            f"{load[0]:.2f}. {args.passes} passes of the 225 queries per path and regime, "
            "the paths alternated; the same hits both ways (see the script's docstring for "
            "the regimes). Microseconds per query, own time (query embedding excluded).",
            "",
            "| regime | general path p50 | compiled p50 | ratio | general path p95 "
            "| compiled p95 | ratio |",
            "|---|---|---|---|---|---|---|",
            *rows,
            "",
        ]
    )
    with open(args.markdown, "w") as f:
        f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
