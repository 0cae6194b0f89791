"""BM25 side by side: rowvoi against bm25s, tantivy, PISA and rank_bm25.

    python bench/bm25_bench.py synth --docs 1000000 --queries 2000
    python bench/bm25_bench.py synth --docs 1000000 --queries 2000 --query-mode top10k
    python bench/bm25_bench.py cranfield --queries 225 --rank-queries 225

Every engine indexes the same documents and answers the same queries.  Builds
run one after another: build time is from raw text (each engine tokenizes
with its own tokenizer; on the synthetic corpus the words are plain
lowercase ASCII, so every tokenizer sees the same terms), memory is the
growth of the resident set, with a sampler thread for the peak during the
build.  Every build is single-threaded, and every engine is built
--build-rounds times, in rotating order (median and min-max reported; the
memory figures are those of the first build).  Queries then run in interleaved
rounds (bench/_timing.py: every engine's every case once per round, order
rotating, --rounds rounds; the median over rounds with its min-max, never the
best round) so that the load of a shared machine, which changes from minute
to minute, falls on all engines alike.  Single-thread figures are given in
CPU time (the work a query costs, not counting time spent waiting for a core)
and in wall clock; the all-core figure in wall clock.

Query tokenisation is inside the timed region for every engine: each is
handed the query strings and its search call analyses them (rowvoi in C,
bm25s.tokenize, tantivy's word split and query parser, PISA's own
tokenizer, str.split for rank_bm25).

Engines and settings:
  rowvoi     BM25Index, Lucene variant, k1=1.2 b=0.75; on the synthetic corpus
             an analyzer without stemming or stopwords (the words are already
             terms).  "1 thread" = search_batch(n_threads=1); calling search()
             once per query is reported too.  Build is single-threaded.
  bm25s      method="lucene", k1=1.2, b=0.75, backend="numba" when numba
             imports; queries are tokenized and retrieved (n_threads=1 / -1).
  tantivy    in-RAM index, default tokenizer, freq-only postings; writer
             pinned to one indexing thread (num_threads=1); queries parsed
             (OR) and searched top-10 with count=False (counting every match
             disables its pruning).
  pisa       PISA through pyterrier-pisa 0.4 (BM25 k1=1.2 b=0.75, default
             block_simdbp encoding, index built on disk with threads=1; no
             stemming or stopwords on the synthetic corpus, Porter2 and the
             Terrier list on Cranfield).  Block-max WAND ("1 thread", and all
             cores) and MaxScore (1 thread).  It runs in its own venv (no Java
             needed) as a child process that times its own engine calls
             (bench/_bm25_peer_pisa.py); --pisa-python names that venv's
             interpreter (default bench/.pisavenv/bin/python, made with
             ``python -m venv bench/.pisavenv && bench/.pisavenv/bin/pip
             install pyterrier-pisa``).  Its BM25 idf is Robertson's
             log((N - df + 0.5) / (df + 0.5)) floored at a tiny epsilon, not
             Lucene's log(1 + ...), so terms in more than half of the
             documents score (almost) nothing and its top 10 can differ.
  rank_bm25  BM25Okapi (capped: it scores every document in Python for every
             query: the first --rank-docs documents, --rank-queries queries,
             one round).

Results are printed as JSON lines and written to --json; bench/lexical_report.py
turns the JSON files into the lexical section of bench/results/retrieval.md.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _timing import SelfTimed, command, interleaved, method_note, spread  # noqa: E402


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def load_corpus(name: str, n_docs: int, n_queries: int, query_mode: str = "zipf"):
    if name == "synth":
        from synth_corpus import load_or_generate, uniform_queries

        c = load_or_generate(
            os.path.join(HERE, ".cache"), n_docs=n_docs, n_queries=max(n_queries, 10_000)
        )
        qs = c.queries[:n_queries] if query_mode == "zipf" else uniform_queries(n_queries)
        return c.docs, qs, c.params
    from cranfield import load_cranfield

    cr = load_cranfield()
    return (
        cr.texts,
        cr.queries[:n_queries],
        {"n_docs": len(cr.texts), "n_queries": len(cr.queries)},
    )


class PeakRSS:
    """Samples the resident set every 5 ms while a build runs."""

    def __enter__(self):
        self.base = self.peak = rss_mb()
        self._stop = threading.Event()

        def loop():
            while not self._stop.wait(0.005):
                self.peak = max(self.peak, rss_mb())

        self._t = threading.Thread(target=loop, daemon=True)
        self._t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join()
        self.after = rss_mb()
        self.peak = max(self.peak, self.after)


# ---------------------------------------------------------------- engines


class Engine:
    """build(docs); warm(queries); run1 / runall answer every query once."""

    name = ""
    runall = None

    def __init__(self, args, out):
        self.args, self.out = args, out

    def timed_build(self, docs):
        gc.collect()
        with PeakRSS() as m:
            t = time.perf_counter()
            self.build(docs)
            self.out["build_s"] = time.perf_counter() - t
            gc.collect()
        self.out["peak_build_mb"] = m.peak - m.base
        self.out["index_mb"] = m.after - m.base

    def cases(self):
        return [("qps_1thread", self.run1)]

    def release(self):
        """Drop the index (before building it again)."""
        for attr in ("index", "searcher", "r", "bm"):
            if hasattr(self, attr):
                delattr(self, attr)
        gc.collect()


class Rowvoi(Engine):
    name = "rowvoi"

    def build(self, docs):
        from rowvoi.lexical import BM25Index
        from rowvoi.text import Analyzer

        analyzer = (
            Analyzer(stem=False, stopwords=False) if self.args.corpus == "synth" else Analyzer()
        )
        self.index = BM25Index(analyzer, k1=1.2, b=0.75)
        self.index.add(docs)
        self.out["engine_memory_mb"] = self.index.stats()["memory_bytes"] / 2**20

    def warm(self, queries):
        self.q = queries
        self.index.search_batch(queries[:50], 10, n_threads=1)

    def run1(self):
        return self.index.search_batch(self.q, 10, n_threads=1)

    def run1_per_call(self):
        return [self.index.search(q, 10) for q in self.q]

    def runall(self):
        return self.index.search_batch(self.q, 10, n_threads=0)

    def cases(self):
        return [("qps_1thread", self.run1), ("qps_1thread_per_call", self.run1_per_call)]

    def finish(self):
        import numpy as np

        r = self.run1()
        self.out["top10"] = [row[row >= 0].tolist() for row in r.ids]
        self.out["top10_scores"] = [row[~np.isnan(row)].tolist() for row in r.scores]
        stats = [self.index.search(q, 10).stats for q in self.q[:500]]
        self.out["postings_scored_fraction"] = sum(s["postings_scored"] for s in stats) / max(
            1, sum(s["postings_total"] for s in stats)
        )


class Bm25s(Engine):
    name = "bm25s"

    def build(self, docs):
        import bm25s

        try:
            import numba  # noqa: F401

            self.out["backend"] = "numba"
        except ImportError:
            self.out["backend"] = "numpy"
        self.bm25s = bm25s
        toks = bm25s.tokenize(docs, lower=True, stopwords=None, stemmer=None, show_progress=False)
        self.r = bm25s.BM25(method="lucene", k1=1.2, b=0.75, backend=self.out["backend"])
        self.r.index(toks, show_progress=False)
        del toks

    def _run(self, queries, nt):
        qt = self.bm25s.tokenize(
            queries,
            lower=True,
            stopwords=None,
            stemmer=None,
            return_ids=False,
            show_progress=False,
        )
        return self.r.retrieve(qt, k=10, n_threads=nt, show_progress=False)

    def warm(self, queries):
        self.q = queries
        self._run(queries[:50], 1)
        self._run(queries[:50], -1)  # compile the numba kernels

    def run1(self):
        return self._run(self.q, 1)

    def runall(self):
        return self._run(self.q, -1)

    def finish(self):
        res = self._run(self.q, 1)
        # bm25s ranks every document; keep the matches (score > 0) as rowvoi does
        self.out["top10"] = [d[s > 0].tolist() for d, s in zip(res.documents, res.scores)]
        self.out["top10_scores"] = [s[s > 0].tolist() for s in res.scores]


class Tantivy(Engine):
    name = "tantivy"

    def build(self, docs):
        import tantivy

        sb = tantivy.SchemaBuilder()
        sb.add_text_field("body", stored=False, tokenizer_name="default", index_option="freq")
        sb.add_unsigned_field("id", stored=True)
        self.index = tantivy.Index(sb.build())
        # one indexing thread, like rowvoi's single-threaded build
        writer = self.index.writer(heap_size=1_000_000_000, num_threads=1)
        for i, d in enumerate(docs):
            writer.add_document(tantivy.Document(body=d, id=i))
        writer.commit()
        writer.wait_merging_threads()
        self.index.reload()
        self.searcher = self.index.searcher()
        self.out["n_segments"] = self.searcher.num_segments

    def _one(self, q):
        # tantivy's query language reserves punctuation (a '/' starts a
        # regex): hand it the words only -- inside the timed call, since every
        # engine's query processing is timed.  count=False: counting every
        # match would switch off tantivy's pruning.
        words = " ".join(re.findall(r"\w+", q))
        return self.searcher.search(self.index.parse_query(words, ["body"]), 10, count=False).hits

    def warm(self, queries):
        self.q = queries
        for q in self.q[:50]:
            self._one(q)

    def run1(self):
        return [self._one(q) for q in self.q]

    def runall(self):
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(os.cpu_count()) as ex:
            return list(ex.map(self._one, self.q, chunksize=16))

    def finish(self):
        self.out["top10"] = [
            [self.searcher.doc(a)["id"][0] for _, a in self._one(q)] for q in self.q[:300]
        ]


class RankBm25(Engine):
    name = "rank_bm25"

    def build(self, docs):
        from rank_bm25 import BM25Okapi

        docs = docs[: self.args.rank_docs]
        self.out["capped_docs"] = len(docs)
        self.bm = BM25Okapi([d.split() for d in docs], k1=1.2, b=0.75)

    def warm(self, queries):
        self.q = queries[: self.args.rank_queries]
        self.out["capped_queries"] = len(self.q)

    def run1(self):
        import numpy as np

        for q in self.q:
            s = self.bm.get_scores(q.split())
            np.argsort(-s, kind="stable")[:10]

    def finish(self):
        pass


class Pisa(Engine):
    """PISA through pyterrier-pisa, in its own venv (``--pisa-python``), as a
    child process (bench/_bm25_peer_pisa.py) that times its own build and
    engine calls.  "1 thread" is block-max WAND; MaxScore is timed as a
    second single-thread case on the same index."""

    name = "pisa"
    ALGOS = (("qps_1thread", "block_max_wand"), ("qps_1thread_maxscore", "maxscore"))

    def timed_build(self, docs):
        python = self.args.pisa_python
        if not python:
            raise ImportError("no --pisa-python given")
        self.work = tempfile.mkdtemp(prefix="rowvoi-bench-pisa-")
        docs_path = os.path.join(self.work, "docs.jsonl")
        with open(docs_path, "w") as f:
            for d in docs:
                f.write(json.dumps(d) + "\n")
        queries_path = os.path.join(self.work, "queries.json")
        with open(queries_path, "w") as f:
            json.dump(self.all_queries, f)
        analysis = "plain" if self.args.corpus == "synth" else "english"
        self.log = open(os.path.join(self.work, "pisa.log"), "w")  # noqa: SIM115 (closed by release())
        script = os.path.join(HERE, "_bm25_peer_pisa.py")
        try:
            self.p = subprocess.Popen(
                [python, script, docs_path, queries_path, self.work, analysis],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self.log,
                text=True,
            )
        except OSError as err:
            raise ImportError(f"cannot start {python}: {err}") from err
        hello = self._read()
        self.out["build_s"] = hello["build_s"]
        self.out["peak_build_mb"] = hello["peak_build_mb"]
        self.out["index_disk_mb"] = hello["index_disk_mb"]
        self.out["analysis"] = analysis
        self.versions = {k: hello[k] for k in ("pyterrier_pisa", "python", "numpy")}
        self.out["peer_versions"] = self.versions

    def _read(self) -> dict[str, Any]:
        line = self.p.stdout.readline()
        if not line:
            self.log.flush()
            raise ImportError(f"PISA child exited ({self.p.wait()}); see its log")
        return json.loads(line)

    def _ask(self, cmd: str) -> dict[str, Any]:
        self.p.stdin.write(cmd + "\n")
        self.p.stdin.flush()
        return self._read()

    def _run(self, algo: str, threads: int) -> SelfTimed:
        r = self._ask(f"run {algo} {threads}")
        self.out["jvm_loaded"] = bool(r["jvm"])
        return SelfTimed(r["wall"], r["cpu"])

    def warm(self, queries):
        if queries != self.all_queries:
            raise ValueError("PISA was given other queries at build time")
        self.q = queries
        for _, algo in self.ALGOS:
            self._run(algo, 1)

    def cases(self):
        return [(key, lambda algo=algo: self._run(algo, 1)) for key, algo in self.ALGOS]

    def runall(self):
        return self._run("block_max_wand", os.cpu_count() or 1)

    def finish(self):
        r = self._ask("top10 block_max_wand")
        self.out["top10"], self.out["top10_scores"] = r["top10"], r["top10_scores"]
        self.release()

    def release(self):
        """Stop the child (it deletes its index) and remove the work folder."""
        import shutil

        self.p.stdin.close()
        self.p.wait(timeout=120)
        self.log.close()
        shutil.rmtree(self.work, ignore_errors=True)


ENGINES = {
    "rowvoi": Rowvoi,
    "bm25s": Bm25s,
    "tantivy": Tantivy,
    "pisa": Pisa,
    "rank_bm25": RankBm25,
}


def measure(engines: list[Engine], queries: list[str], rounds: int) -> None:
    """Interleaved rounds (bench/_timing.py): every engine's every case once
    per round, order rotating; medians with min-max over rounds.  rank_bm25
    (seconds per query) runs in the first round only."""
    for e in engines:
        e.warm(queries)
    cases = {}
    owner = {}
    slow = []
    for e in engines:
        runs = list(e.cases())
        if e.runall is not None:
            runs.append(("qps_all_cores", e.runall))
        for key, fn in runs:
            cases[f"{e.name}:{key}"] = fn
            owner[f"{e.name}:{key}"] = (e, key)
            if isinstance(e, RankBm25):
                slow.append(f"{e.name}:{key}")
    got = interleaved(cases, rounds, warmup=0, only_first_round=slow)
    for name, smp in got.items():
        e, key = owner[name]
        n = len(e.q)
        w = smp.wall_s().rate(n)
        e.out[key] = w.median
        e.out[key + "_range"] = [w.lo, w.hi]
        e.out[key + "_rounds_s"] = smp.wall
        if key != "qps_all_cores":
            c = smp.cpu_s().rate(n)
            e.out[key + "_cpu"] = c.median
            e.out[key + "_cpu_range"] = [c.lo, c.hi]
            e.out[key + "_cpu_rounds_s"] = smp.cpu
    for e in engines:
        e.finish()


def agreement(a: dict, b: dict) -> dict:
    """Top-10 agreement; with scores on both sides, also whether the score
    sequences agree within float32 rounding -- then any difference in the ids
    is only the order of tied documents."""
    la, lb = a["top10"], b["top10"]
    out = {
        "queries": min(len(la), len(lb)),
        "identical_lists": sum(1 for x, y in zip(la, lb) if list(x) == list(y)),
        "same_sets": sum(1 for x, y in zip(la, lb) if set(x) == set(y)),
    }
    if "top10_scores" in a and "top10_scores" in b:

        def close(x, y):
            return len(x) == len(y) and all(
                abs(p - q) <= 4e-7 * max(abs(p), abs(q), 1e-30) for p, q in zip(x, y)
            )

        out["same_scores"] = sum(
            1 for x, y in zip(a["top10_scores"], b["top10_scores"]) if close(x, y)
        )
    return out


def versions() -> dict:
    v = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
    }
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


def short(d: dict) -> str:
    return json.dumps(
        {
            k: (round(v, 3) if isinstance(v, float) else v)
            for k, v in d.items()
            if k not in ("top10", "top10_scores", "corpus_params")
        }
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("corpus", choices=["synth", "cranfield"])
    ap.add_argument("--docs", type=int, default=1_000_000)
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=5, help="interleaved query rounds")
    ap.add_argument(
        "--build-rounds", type=int, default=3, help="builds per engine, interleaved (median)"
    )
    ap.add_argument(
        "--query-mode",
        choices=["zipf", "top10k"],
        default="zipf",
        help="synth queries: drawn like the documents (zipf) or uniformly "
        "from the 10,000 most frequent words (top10k)",
    )
    ap.add_argument("--engines", default="rowvoi,bm25s,tantivy,pisa,rank_bm25")
    ap.add_argument(
        "--pisa-python",
        default=os.path.join(HERE, ".pisavenv", "bin", "python"),
        help="interpreter of a venv with pyterrier-pisa (default bench/.pisavenv)",
    )
    ap.add_argument("--rank-docs", type=int, default=100_000)
    ap.add_argument("--rank-queries", type=int, default=20)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    docs, queries, params = load_corpus(args.corpus, args.docs, args.queries, args.query_mode)
    # import every engine first, so a build's memory is its index, not its code
    for mod in ("rowvoi.lexical", "bm25s", "numba", "tantivy", "rank_bm25"):
        try:
            __import__(mod)
        except ImportError:
            pass
    engines = []
    for name in args.engines.split(","):
        out = {
            "engine": name,
            "corpus": args.corpus,
            "n_docs": len(docs),
            "n_queries": len(queries),
            "corpus_params": params,
        }
        e = ENGINES[name](args, out)
        e.all_queries = queries
        try:
            e.timed_build(docs)
        except ImportError as err:
            out["error"] = f"not installed: {err}"
        print(short(out), flush=True)
        if "error" not in out:
            engines.append(e)
    # Build rounds: every engine built again, in rotating order, so that the
    # build times are medians over rounds too.  Memory figures stay those of
    # the first build: a rebuild reuses memory the allocator already holds.
    builds = {e.name: [e.out["build_s"]] for e in engines}
    first_mem = {
        e.name: {k: e.out[k] for k in ("peak_build_mb", "index_mb") if k in e.out} for e in engines
    }
    for rnd in range(1, args.build_rounds):
        shift = rnd % max(1, len(engines))
        for e in engines[shift:] + engines[:shift]:
            e.release()
            e.timed_build(docs)
            builds[e.name].append(e.out["build_s"])
            print(f"build round {rnd}: {e.name} {e.out['build_s']:.2f} s", flush=True)
    for e in engines:
        e.out.update(first_mem[e.name])
        b = spread(builds[e.name])
        e.out["build_s"], e.out["build_s_range"] = b.median, [b.lo, b.hi]
        e.out["build_rounds_s"] = builds[e.name]
    measure(engines, queries, args.rounds)
    results = [e.out for e in engines]
    for r in results:
        print(short(r), flush=True)
    by = {r["engine"]: r for r in results}
    v = versions()
    if "pisa" in by:
        v["pyterrier_pisa"] = by["pisa"]["peer_versions"]["pyterrier_pisa"]
    summary = {
        "corpus": args.corpus,
        "query_mode": args.query_mode,
        "versions": v,
        "command": command("bench/bm25_bench.py", sys.argv[1:]),
        "timing": method_note(args.rounds),
        "rounds": args.rounds,
        "build_rounds": args.build_rounds,
        "query_tokenisation": "timed for every engine (each engine's search call takes "
        "the query strings)",
        "results": [
            {k: v for k, v in r.items() if k not in ("top10", "top10_scores")} for r in results
        ],
    }
    # on Cranfield each engine tokenizes its own way, so top-10 lists are not
    # comparable here (bench/cranfield.py compares them on shared tokens)
    if args.corpus == "synth" and "rowvoi" in by:
        for other in ("bm25s", "tantivy", "pisa"):
            if other in by:
                summary[f"top10_agreement_{other}"] = agreement(by["rowvoi"], by[other])
                print(other, summary[f"top10_agreement_{other}"])
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=1)


if __name__ == "__main__":
    main()
