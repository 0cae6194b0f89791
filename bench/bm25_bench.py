"""BM25 side by side: rowvoi against bm25s, rank_bm25 and tantivy.

Each engine runs in its own subprocess (so its memory is measured alone and
one engine's caches or threads do not slow the next), on the same documents
and the same queries, in one invocation:

    python bench/bm25_bench.py synth --docs 1000000 --queries 2000
    python bench/bm25_bench.py cranfield

For every engine it reports the index build time (from raw text: each
engine tokenizes with its own tokenizer -- on the synthetic corpus the words
are plain lowercase ASCII, so every tokenizer sees the same terms), the
index's memory (resident set growth while building and after), and queries
per second with one thread and with every core, top-10 (wall clock, best of
--repeats runs after a warm-up).  rank_bm25 scores every document in Python
for every query, so it is capped: it indexes the first --rank-docs documents
and runs --rank-queries queries; its row says so.

Engines and settings:
  rowvoi     BM25Index, Lucene variant, k1=1.2 b=0.75; analyzer without
             stemming or stopwords (the synthetic words are already terms).
             "1 thread" = search_batch(n_threads=1); the per-call loop through
             search() is reported too.  Build is single-threaded.
  bm25s      method="lucene", k1=1.2, b=0.75, backend="numba" when numba
             imports; queries are tokenized and retrieved (n_threads=1 / -1).
  tantivy    in-RAM index, default tokenizer, freq-only postings; writer with
             its default thread count; queries parsed (OR) and searched top-10
             with count=False (counting every match disables its pruning).
  rank_bm25  BM25Okapi (capped, see above).

Results are printed as JSON lines and written to --json; --markdown updates
the lexical section of bench/results/retrieval.md.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def load_corpus(name: str, n_docs: int, n_queries: int):
    if name == "synth":
        from synth_corpus import load_or_generate

        c = load_or_generate(os.path.join(HERE, ".cache"), n_docs=n_docs,
                             n_queries=max(n_queries, 10_000))
        return c.docs, c.queries[:n_queries], c.params
    from cranfield import load_cranfield

    cr = load_cranfield()
    return cr.texts, cr.queries, {"n_docs": len(cr.texts), "n_queries": len(cr.queries)}


def best_time(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        gc.collect()
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


# ---------------------------------------------------------------- engines

def run_rowvoi(docs, queries, args, out):
    from rowvoi.lexical import BM25Index
    from rowvoi.text import Analyzer

    analyzer = Analyzer(stem=False, stopwords=False) if args.corpus == "synth" else Analyzer()
    base = rss_mb()
    t = time.perf_counter()
    index = BM25Index(analyzer, k1=1.2, b=0.75)
    index.add(docs)
    out["build_s"] = time.perf_counter() - t
    out["peak_build_mb"] = peak_mb() - base
    out["index_mb"] = rss_mb() - base
    out["engine_memory_mb"] = index.stats()["memory_bytes"] / 2**20
    index.search_batch(queries[:50], 10, n_threads=1)
    n = len(queries)
    out["qps_1thread"] = n / best_time(lambda: index.search_batch(queries, 10, n_threads=1), args.repeats)
    out["qps_1thread_per_call"] = n / best_time(lambda: [index.search(q, 10) for q in queries], args.repeats)
    out["qps_all_cores"] = n / best_time(lambda: index.search_batch(queries, 10, n_threads=0), args.repeats)
    r = index.search_batch(queries, 10, n_threads=1)
    out["top10"] = r.ids.tolist()
    stats = [index.search(q, 10).stats for q in queries[:500]]
    out["postings_scored_fraction"] = sum(s["postings_scored"] for s in stats) / max(
        1, sum(s["postings_total"] for s in stats))


def run_bm25s(docs, queries, args, out):
    import bm25s

    try:
        import numba  # noqa: F401
        backend = "numba"
    except ImportError:
        backend = "numpy"
    out["backend"] = backend
    base = rss_mb()
    t = time.perf_counter()
    toks = bm25s.tokenize(docs, lower=True, stopwords=None, stemmer=None, show_progress=False)
    r = bm25s.BM25(method="lucene", k1=1.2, b=0.75, backend=backend)
    r.index(toks, show_progress=False)
    out["build_s"] = time.perf_counter() - t
    del toks
    gc.collect()
    out["peak_build_mb"] = peak_mb() - base
    out["index_mb"] = rss_mb() - base

    def run(nt):
        qt = bm25s.tokenize(queries, lower=True, stopwords=None, stemmer=None,
                            return_ids=False, show_progress=False)
        return r.retrieve(qt, k=10, n_threads=nt, show_progress=False)

    run(1), run(-1)  # compile the numba kernels
    n = len(queries)
    out["qps_1thread"] = n / best_time(lambda: run(1), args.repeats)
    out["qps_all_cores"] = n / best_time(lambda: run(-1), args.repeats)
    res = run(1)
    out["top10"] = res.documents.tolist()
    out["top10_scores"] = res.scores.tolist()


def run_tantivy(docs, queries, args, out):
    import tantivy
    from concurrent.futures import ThreadPoolExecutor

    base = rss_mb()
    t = time.perf_counter()
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("body", stored=False, tokenizer_name="default", index_option="freq")
    sb.add_unsigned_field("id", stored=True)
    schema = sb.build()
    index = tantivy.Index(schema)
    writer = index.writer(heap_size=1_000_000_000)
    for i, d in enumerate(docs):
        writer.add_document(tantivy.Document(body=d, id=i))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    out["build_s"] = time.perf_counter() - t
    out["peak_build_mb"] = peak_mb() - base
    searcher = index.searcher()
    out["index_mb"] = rss_mb() - base

    def one(q):
        # count=False: counting every match would switch off tantivy's pruning
        return searcher.search(index.parse_query(q, ["body"]), 10, count=False).hits

    for q in queries[:50]:
        one(q)
    n = len(queries)
    out["qps_1thread"] = n / best_time(lambda: [one(q) for q in queries], args.repeats)
    with ThreadPoolExecutor(os.cpu_count()) as ex:
        out["qps_all_cores"] = n / best_time(lambda: list(ex.map(one, queries, chunksize=16)),
                                             args.repeats)
    out["n_segments"] = len(searcher.segment_ids()) if hasattr(searcher, "segment_ids") else None
    out["top10"] = [[searcher.doc(addr)["id"][0] for _, addr in one(q)] for q in queries[:300]]


def run_rank_bm25(docs, queries, args, out):
    from rank_bm25 import BM25Okapi

    docs = docs[: args.rank_docs]
    queries = queries[: args.rank_queries]
    out["capped_docs"] = len(docs)
    out["capped_queries"] = len(queries)
    base = rss_mb()
    t = time.perf_counter()
    bm = BM25Okapi([d.split() for d in docs], k1=1.2, b=0.75)
    out["build_s"] = time.perf_counter() - t
    out["peak_build_mb"] = peak_mb() - base
    out["index_mb"] = rss_mb() - base
    import numpy as np

    def run():
        for q in queries:
            s = bm.get_scores(q.split())
            np.argsort(-s, kind="stable")[:10]

    out["qps_1thread"] = len(queries) / best_time(run, 1)


ENGINES = {"rowvoi": run_rowvoi, "bm25s": run_bm25s, "tantivy": run_tantivy,
           "rank_bm25": run_rank_bm25}


def child(args) -> None:
    docs, queries, params = load_corpus(args.corpus, args.docs, args.queries)
    gc.collect()
    out = {"engine": args.engine, "corpus": args.corpus, "n_docs": len(docs),
           "n_queries": len(queries)}
    try:
        ENGINES[args.engine](docs, queries, args, out)
    except ImportError as e:
        out["error"] = f"not installed: {e}"
    sys.stdout.write(json.dumps(out) + "\n")


def agreement(a: list, b: list) -> dict:
    same = sum(1 for x, y in zip(a, b) if list(x) == list(y))
    sets = sum(1 for x, y in zip(a, b) if set(x) == set(y))
    return {"identical_lists": same, "same_sets": sets, "queries": min(len(a), len(b))}


def versions() -> dict:
    v = {"python": platform.python_version(), "machine": platform.machine(),
         "cpus": os.cpu_count()}
    for mod in ("rowvoi", "bm25s", "tantivy", "rank_bm25", "numba", "numpy"):
        try:
            m = __import__(mod)
            v[mod] = getattr(m, "__version__", "installed")
        except ImportError:
            v[mod] = None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    v["cpu"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return v


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("corpus", choices=["synth", "cranfield"])
    ap.add_argument("--docs", type=int, default=1_000_000)
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--engines", default="rowvoi,bm25s,tantivy,rank_bm25")
    ap.add_argument("--rank-docs", type=int, default=100_000)
    ap.add_argument("--rank-queries", type=int, default=20)
    ap.add_argument("--json", default=None)
    ap.add_argument("--engine", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.engine:
        child(args)
        return
    results = []
    for eng in args.engines.split(","):
        cmd = [sys.executable, __file__, args.corpus, "--engine", eng, "--docs", str(args.docs),
               "--queries", str(args.queries), "--repeats", str(args.repeats),
               "--rank-docs", str(args.rank_docs), "--rank-queries", str(args.rank_queries)]
        t = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            print(p.stderr, file=sys.stderr)
            results.append({"engine": eng, "error": p.stderr.strip().splitlines()[-1:]})
            continue
        r = json.loads(p.stdout.strip().splitlines()[-1])
        r["wall_s"] = time.perf_counter() - t
        results.append(r)
        show = {k: (round(v, 3) if isinstance(v, float) else v) for k, v in r.items()
                if k not in ("top10", "top10_scores")}
        print(json.dumps(show), flush=True)
    by = {r["engine"]: r for r in results}
    summary = {"corpus": args.corpus, "versions": versions(), "command": " ".join(sys.argv),
               "results": [{k: v for k, v in r.items() if k not in ("top10", "top10_scores")}
                           for r in results]}
    if "rowvoi" in by and "top10" in by["rowvoi"]:
        for other in ("bm25s", "tantivy"):
            if other in by and "top10" in by[other]:
                summary[f"top10_agreement_{other}"] = agreement(by["rowvoi"]["top10"],
                                                                by[other]["top10"])
                print(other, summary[f"top10_agreement_{other}"])
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=1)


if __name__ == "__main__":
    main()
