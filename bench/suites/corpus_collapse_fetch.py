"""Per-artifact collapse on chunked corpora: how many artifacts a top-10
search returns, and what a query costs, in every mode and index --
optionally against another version of the search, paired query by query.

    python -m bench run corpus_collapse_fetch [--chunk 150] [--join 100] [--passes 3]
        [--k 10] [--against OLD_RETRIEVE_PY]

Cranfield (1,400 documents, 225 queries) is built three times with the
hashing embedder (512 dimensions), an HNSW graph beside the flat index:
with one surface per document (:class:`~rowvoi.corpus.WholeText`: the
collapse never drops a candidate, the first fetch always suffices); in
chunks of ``--chunk`` characters (:class:`~rowvoi.corpus.Chunked`, no
overlap: several surfaces per document); and as long documents of
``--join`` Cranfield documents each (14 at the default 100) in the same
chunks: some 850 surfaces per document, where the best 50 surfaces of a
query often belong to fewer than 10 documents. Each query runs in seven
configurations -- lexical; dense through the compiled call (a query
vector, flat index); dense embedding the text, flat; dense through HNSW;
hybrid RRF and blend (flat); hybrid RRF through HNSW -- ``--passes``
times.

``--against FILE`` names another version of the search's entry module,
``rowvoi/corpus/retrieval/corpus.py`` (e.g. ``git show
REV:python/rowvoi/corpus/retrieval/corpus.py > old.py``; it must import
with the installed rowvoi): it is loaded as a second module and opens the
same corpus directory, and each query runs on
both, back to back, which one first alternating, so the machine's load
falls on both alike. Reported per corpus and configuration: microseconds
per query (p50 over all passes; the query's embedding included where the
search embeds the text, as a caller pays it), the median of the paired
ratios, and how many of the 225 queries returned fewer than ``k``
artifacts.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time
from collections.abc import Sequence

from .._common.cranfield import corpus_data
from .._common.results import Run, scratch_dir, versions, write

CONFIGS = (
    ("lexical", {"mode": "lexical"}, False),
    ("dense, compiled (vector, flat)", {"mode": "dense", "index": "flat"}, True),
    ("dense, flat", {"mode": "dense", "index": "flat"}, False),
    ("dense, hnsw", {"mode": "dense", "index": "hnsw"}, False),
    ("rrf, flat", {"mode": "hybrid", "fusion": "rrf", "index": "flat"}, False),
    ("blend, flat", {"mode": "hybrid", "fusion": "blend", "index": "flat"}, False),
    ("rrf, hnsw", {"mode": "hybrid", "fusion": "rrf", "index": "hnsw"}, False),
)


def _load(path: str):
    """Another version of rowvoi.corpus.retrieval.corpus, as module ``other_retrieve``."""
    spec = importlib.util.spec_from_file_location("other_retrieve", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["other_retrieve"] = mod
    spec.loader.exec_module(mod)
    return mod


def main(argv: Sequence[str], run: Run) -> int:
    from rowvoi.corpus import Chunked, CorpusStore, WholeText, build, from_mapping
    from rowvoi.corpus.retrieval import corpus as retrieve

    ap = argparse.ArgumentParser(
        prog="python -m bench run corpus_collapse_fetch", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("--chunk", type=int, default=150, help="chunk size in characters")
    ap.add_argument("--join", type=int, default=100, help="documents per long document")
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument(
        "--against", metavar="FILE", help="another retrieval/corpus.py to compare with"
    )
    args = ap.parse_args(argv)
    other = None if args.against is None else _load(args.against)

    docs, _, queries, _ = corpus_data()
    keys = sorted(docs, key=int)
    long_docs = {
        f"L{i // args.join}": "\n\n".join(docs[k] for k in keys[i : i + args.join])
        for i in range(0, len(keys), args.join)
    }
    chunks = Chunked(chunk_size=args.chunk, overlap=0)
    corpora = (
        ("whole text", WholeText(), docs),
        (f"chunks of {args.chunk} characters", chunks, docs),
        (f"{args.join} documents joined, chunks of {args.chunk}", chunks, long_docs),
    )
    scratch = scratch_dir("rowvoi-bench-collapse-")
    lines = []
    for n, (label, strategy, mapping) in enumerate(corpora):
        store = CorpusStore(os.path.join(scratch, str(n)), name="cran")
        build(
            from_mapping(mapping, name="cran", strategy=strategy, embedder="hashing:512"),
            store=store,
            hnsw=True,
            progress=False,
        )
        sides = [("this", retrieve, retrieve.open_corpus(store=store))]
        if other is not None:
            sides.insert(0, ("other", other, other.open_corpus(store=store)))
        info = sides[-1][2].info()
        vecs = sides[-1][2].embedder.embed(queries)
        head = f"| configuration | p50 us | fewer than {args.k} |"
        rule = "|---|---|---|"
        if other is not None:
            head = (
                f"| configuration | other p50 us | this p50 us | this/other (median of "
                f"paired ratios) | other: fewer than {args.k} | this: fewer than {args.k} |"
            )
            rule = "|---|---|---|---|---|---|"
        lines += [
            f"### {label} ({info['n_records']:,} surfaces of {info['n_artifacts']:,} documents)",
            "",
            head,
            rule,
        ]
        for name, kw, vector in CONFIGS:
            lat: dict[str, list[float]] = {s: [] for s, _, _ in sides}
            short = {s: 0 for s, _, _ in sides}
            ratios = []
            for _, mod, c in sides:  # warm: load every index once
                mod.search(c, queries[0], k=args.k, query_vector=vecs[0] if vector else None, **kw)
            for p in range(args.passes):
                for i, q in enumerate(queries):
                    qv = vecs[i] if vector else None
                    took = {}
                    for side, mod, c in sides if (i + p) % 2 == 0 else sides[::-1]:
                        t0 = time.perf_counter()
                        hits = mod.search(c, q, k=args.k, query_vector=qv, **kw)
                        took[side] = time.perf_counter() - t0
                        lat[side].append(took[side] * 1e6)
                        if p == 0:
                            short[side] += len({h.artifact_id for h in hits}) < args.k
                    if other is not None:
                        ratios.append(took["this"] / took["other"])
            if other is None:
                lines.append(
                    f"| {name} | {statistics.median(lat['this']):.0f} | {short['this']} |"
                )
            else:
                lines.append(
                    f"| {name} | {statistics.median(lat['other']):.0f} "
                    f"| {statistics.median(lat['this']):.0f} | {statistics.median(ratios):.2f} "
                    f"| {short['other']} | {short['this']} |"
                )
        lines.append("")
    text = "\n".join(
        [
            "# Per-artifact collapse: k artifacts from chunked corpora",
            "",
            *run.header(versions("numpy")),
            f"{args.passes} passes of the {len(queries)} Cranfield queries, k = {args.k}.",
            "",
            *lines,
        ]
    )
    print(text)
    write(run.out, text)
    return 0
