"""Per-artifact collapse on a chunked corpus: how many artifacts a top-10
search returns, and what a query costs, in every mode and index.

    python bench/corpus_collapse_fetch.py [--chunk 150] [--passes 5] [--k 10]
        [--json FILE]

Cranfield (1,400 documents, 225 queries) is built twice with the hashing
embedder (512 dimensions), an HNSW graph beside the flat index: once with
one surface per document (:class:`~rowvoi.corpus.WholeText`: the collapse
never drops a candidate, the first fetch always suffices) and once in
chunks of ``--chunk`` characters (:class:`~rowvoi.corpus.Chunked`, no
overlap: several surfaces per document, the collapse keeps the best of
each); then a third corpus of long documents, ``--join`` Cranfield
documents each (14 of them at the default 100), in the same chunks: about
850 surfaces per document, where the best 50 surfaces of a query often
belong to fewer than 10 documents. Each query runs in each of seven configurations -- lexical; dense
through the compiled call (a query vector, flat index); dense embedding
the text, flat; dense through HNSW; hybrid RRF and blend (flat); hybrid
RRF through HNSW -- ``--passes`` times, the configurations in turn.

Reported per corpus and configuration: microseconds per query, p50 and
p95 over all passes (the query's embedding included where the search
embeds the text, as a caller pays it), the mean number of artifacts
returned, and how many of the 225 queries returned fewer than ``k``.
Run it on two checkouts to compare them; ``--json`` keeps the figures.
"""

from __future__ import annotations

import argparse
import json
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

CONFIGS = (
    ("lexical", {"mode": "lexical"}, False),
    ("dense, compiled (vector, flat)", {"mode": "dense", "index": "flat"}, True),
    ("dense, flat", {"mode": "dense", "index": "flat"}, False),
    ("dense, hnsw", {"mode": "dense", "index": "hnsw"}, False),
    ("rrf, flat", {"mode": "hybrid", "fusion": "rrf", "index": "flat"}, False),
    ("blend, flat", {"mode": "hybrid", "fusion": "blend", "index": "flat"}, False),
    ("rrf, hnsw", {"mode": "hybrid", "fusion": "rrf", "index": "hnsw"}, False),
)


def main() -> int:
    from rowvoi.corpus import Chunked, CorpusStore, WholeText, build, from_mapping, search

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--chunk", type=int, default=150, help="chunk size in characters")
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--join", type=int, default=100, help="documents per long document")
    ap.add_argument("--json", help="write the figures here too")
    args = ap.parse_args()

    docs, _, queries, _ = cb.cranfield()
    scratch = tempfile.mkdtemp()
    chunks = Chunked(chunk_size=args.chunk, overlap=0)
    keys = sorted(docs, key=int)
    long_docs = {
        f"L{i // args.join}": "\n\n".join(docs[k] for k in keys[i : i + args.join])
        for i in range(0, len(keys), args.join)
    }
    corpora = (
        ("whole text", WholeText(), docs),
        (f"chunks of {args.chunk} characters", chunks, docs),
        (f"{args.join} documents joined, chunks of {args.chunk}", chunks, long_docs),
    )
    out: dict[str, dict[str, dict[str, float]]] = {}
    lines = []
    for label, strategy, mapping in corpora:
        store = CorpusStore(os.path.join(scratch, str(len(out))), name="cran")
        c = build(
            from_mapping(mapping, name="cran", strategy=strategy, embedder="hashing:512"),
            store=store,
            hnsw=True,
            progress=False,
        )
        info = c.info()
        emb = c.embedder
        vecs = emb.embed(queries)
        lat: dict[str, list[float]] = {name: [] for name, _, _ in CONFIGS}
        found: dict[str, list[int]] = {name: [] for name, _, _ in CONFIGS}
        for _name, kw, vector in CONFIGS:  # warm: load every index once
            search(c, queries[0], k=args.k, query_vector=vecs[0] if vector else None, **kw)
        for p in range(args.passes):
            for name, kw, vector in CONFIGS:
                for i, q in enumerate(queries):
                    qv = vecs[i] if vector else None
                    t0 = time.perf_counter()
                    hits = search(c, q, k=args.k, query_vector=qv, **kw)
                    lat[name].append((time.perf_counter() - t0) * 1e6)
                    if p == 0:
                        found[name].append(len({h.artifact_id for h in hits}))
        out[label] = {}
        lines += [
            f"### {label} ({info['n_records']:,} surfaces of {info['n_artifacts']:,} documents)",
            "",
            f"| configuration | p50 us | p95 us | artifacts per query (mean) "
            f"| queries with fewer than {args.k} |",
            "|---|---|---|---|---|",
        ]
        for name, _, _ in CONFIGS:
            p50, p95 = np.percentile(lat[name], [50, 95])
            got = np.array(found[name])
            short = int((got < args.k).sum())
            out[label][name] = {
                "p50_us": float(p50),
                "p95_us": float(p95),
                "mean_artifacts": float(got.mean()),
                "short": short,
            }
            lines.append(f"| {name} | {p50:.0f} | {p95:.0f} | {got.mean():.2f} | {short} |")
        lines.append("")
    load = os.getloadavg()
    head = [
        f"Produced by `{_timing.command('bench/corpus_collapse_fetch.py', sys.argv[1:])}` on a "
        f"{platform.machine()}, {os.cpu_count()} cores (shared; {_timing.vector_extensions()}) "
        f"machine, Python {platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M')}, "
        f"load average at the end {load[0]:.2f}; {args.passes} passes of the "
        f"{len(queries)} queries, k = {args.k}.",
        "",
    ]
    print("\n".join(head + lines))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
