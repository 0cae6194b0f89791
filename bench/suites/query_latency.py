#!/usr/bin/env python3
"""One short query, end to end: MiniLM embedding latency and hybrid search
over a 100,000-document corpus.

    python -m bench run query_latency                 # 100,000 documents, 200 queries
    python -m bench run query_latency --quick         # 10,000 documents, 50 queries

Writes ``bench/results/query_latency.md``.  Two parts, each over the first
``--queries`` Cranfield queries (mean about 10 words), every call timed on
its own (wall clock and CPU time), calls of the compared variants alternating query by
query so that load from other jobs hits them alike:

1. ``MiniLMEmbedder().embed([query])`` (default settings: ``threads=0``,
   int8): p10, p50, p90 in milliseconds, over all queries and over those of
   at most 12 tokens.  One embedder only: two sessions alternating in one
   process each pay for the other's thread pool (the embedder's pool stops
   spinning when a call returns, but its threads still wake and sleep), and
   both read slower than either alone.
2. ``search(corpus, query, k=10, mode="hybrid")`` on a corpus of
   ``--docs`` documents, each two Cranfield sentences drawn at random
   (``WholeText``; BM25 + an exact flat int8 dense index).  Embedding
   100,000 documents with MiniLM would take most of an hour on this machine,
   so a document's vector is the normalised mean of the MiniLM vectors of
   its two sentences (each sentence embedded once, cached in
   ``bench/.cache``); a query -- any text not in that table -- is embedded
   by ``MiniLMEmbedder()`` itself, inside the timed search.  The search with
   a precomputed query vector (``query_vector=``) shows what the search
   costs without the embedding.  Both parts also give the figures of the
   queries of at most 12 tokens alone (the short queries of issue 31's
   goal: about 10 tokens).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._common.cranfield import corpus_data, sentence_pairs
from .._common.results import CACHE, Run, publish, scratch_dir, versions


def percentiles(ms: list[float]) -> str:
    a = np.asarray(ms)
    return " / ".join(f"{np.percentile(a, p):.2f}" for p in (10, 50, 90))


def alternating(
    cases: dict[str, Callable[[str], Any]], queries: list[str]
) -> dict[str, tuple[list[float], list[float]]]:
    """Per case, milliseconds per call as (wall clock, CPU time of the
    whole process, every thread), query by query, cases in turn (their
    order reversed on every other query)."""
    out: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in cases}
    names = list(cases)
    for i, q in enumerate(queries):
        for name in names if i % 2 == 0 else names[::-1]:
            c, t = time.process_time(), time.perf_counter()
            cases[name](q)
            out[name][0].append(1e3 * (time.perf_counter() - t))
            out[name][1].append(1e3 * (time.process_time() - c))
    return out


def sentence_vectors(sents: list[str]) -> dict[str, np.ndarray]:
    """MiniLM vectors of the distinct sentences, cached by the embedder id."""
    from rowvoi.index.embed import MiniLMEmbedder

    emb = MiniLMEmbedder()
    uniq = sorted(set(sents))
    tag = hashlib.sha256((emb.embedder_id + "\n" + "\n".join(uniq)).encode()).hexdigest()[:16]
    path = os.path.join(CACHE, f"query_latency_sentences_{tag}.npy")
    if os.path.exists(path):
        vecs = np.load(path)
    else:
        os.makedirs(CACHE, exist_ok=True)
        vecs = emb.embed(uniq)
        np.save(path, vecs)
    return dict(zip(uniq, vecs))


def main(argv: Sequence[str], run: Run) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m bench run query_latency", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--docs", type=int, default=100_000, help="corpus size (part 2)")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20, help="untimed calls per case first")
    ap.add_argument(
        "--hnsw", action="store_true", help="build the corpus with an HNSW graph (searched)"
    )
    args = ap.parse_args(argv)

    from rowvoi.corpus import CorpusStore, WholeText, build, from_mapping, open_corpus, search
    from rowvoi.index.embed import MiniLMEmbedder

    docs, _, queries, _ = corpus_data()
    queries = [" ".join(q.split()) for q in queries][: args.queries]
    ntok = np.mean([len(MiniLMEmbedder()._tok.encode(q).ids) for q in queries])

    # part 1: the embedding alone
    emb = MiniLMEmbedder()
    embed_cases: dict[str, Callable[[str], Any]] = {
        "MiniLMEmbedder().embed([q])": lambda q: emb.embed([q]),
    }
    for fn in embed_cases.values():
        for q in queries[: args.warmup]:
            fn(q)
    lat = alternating(embed_cases, queries)
    ntoks = np.array([len(emb._tok.encode(q).ids) for q in queries])
    few = ntoks <= 12

    # part 2: hybrid search over --docs documents
    sents, picks, mapping = sentence_pairs(docs, args.docs)
    svec = sentence_vectors(sents)
    table = {}
    for (a, b), text in zip(picks, mapping.values()):
        v = svec[sents[a]] + svec[sents[b]]
        table[text] = v / max(float(np.linalg.norm(v)), 1e-12)
    eid = "query-latency-table:" + emb.embedder_id

    def embedder(model: MiniLMEmbedder) -> tuple[Callable[[list[str]], np.ndarray], str]:
        def fn(texts: list[str]) -> np.ndarray:
            if len(texts) == 1 and texts[0] not in table:
                return model.embed(texts)
            return np.stack([table[t] for t in texts])

        return fn, eid

    scratch = scratch_dir("rowvoi-bench-qlat-")
    store = CorpusStore(os.path.join(scratch, "c"), name="qlat")
    t0 = time.perf_counter()
    build(
        from_mapping(mapping, name="qlat", strategy=WholeText(), embedder=embedder(emb)),
        store=store,
        progress=False,
        hnsw=args.hnsw or None,
    )
    build_s = time.perf_counter() - t0
    after = open_corpus("qlat", store=store, embedder=embedder(emb))
    qvecs = {q: emb.embed([q])[0] for q in queries}
    search_cases: dict[str, Callable[[str], Any]] = {
        "hybrid search (this tree)": lambda q: search(after, q, k=10, mode="hybrid"),
        "hybrid search, query vector given (no embedding)": lambda q: search(
            after, q, k=10, mode="hybrid", query_vector=qvecs[q]
        ),
    }
    for fn in search_cases.values():
        for q in queries[: args.warmup]:
            fn(q)
    slat = alternating(search_cases, queries)
    lines = [
        "# One short query: MiniLM embedding and hybrid search latency",
        "",
        *run.header(versions("numpy", "onnxruntime", "tokenizers")),
        f"{len(queries)} Cranfield queries (mean {ntok:.1f} tokens), each call timed on its "
        f"own, the variants alternating query by query after {args.warmup} untimed calls "
        "each. Milliseconds, p10 / p50 / p90, of wall clock and of CPU time (the process, "
        "all threads: on a shared host the wall clock also holds the time other jobs "
        "had the cores).",
        "",
        "## 1. The embedding of one query",
        "",
        "| call | wall ms p10 / p50 / p90 | CPU ms p10 / p50 / p90 |",
        "|---|---|---|",
        *(f"| {name} | {percentiles(w)} | {percentiles(c)} |" for name, (w, c) in lat.items()),
        *(
            f"| {name}, the {int(few.sum())} queries of <= 12 tokens | "
            f"{percentiles(list(np.asarray(w)[few]))} | {percentiles(list(np.asarray(c)[few]))} |"
            for name, (w, c) in lat.items()
        ),
        "",
        f"## 2. Hybrid search over {args.docs:,} documents",
        "",
        f"Built in {build_s:.1f} s (BM25 and "
        + ("an HNSW graph" if args.hnsw else "a flat int8 dense index")
        + "; document vectors from the sentence table, see the suite's docstring). "
        "`k=10`, `mode='hybrid'`.",
        "",
        "| search | wall ms p10 / p50 / p90 | CPU ms p10 / p50 / p90 |",
        "|---|---|---|",
        *(f"| {name} | {percentiles(w)} | {percentiles(c)} |" for name, (w, c) in slat.items()),
        *(
            f"| {name}, the {int(few.sum())} queries of <= 12 tokens | "
            f"{percentiles(list(np.asarray(w)[few]))} | {percentiles(list(np.asarray(c)[few]))} |"
            for name, (w, c) in slat.items()
        ),
        "",
    ]
    publish(run.path("query_latency_hnsw.md") if args.hnsw else run.out, lines)
    return 0
