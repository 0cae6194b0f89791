"""BM25 side by side: rowvoi against bm25s, tantivy, PISA and rank_bm25.

    python -m bench run bm25 synth --docs 1000000 --queries 2000
    python -m bench run bm25 synth --docs 1000000 --queries 2000 --query-mode top10k
    python -m bench run bm25 cranfield --queries 225 --rank-queries 225
    python -m bench run bm25 synth --docs 300000 --k 10,100 --engines rowvoi,pisa

``--k`` takes one k or several: every k is timed in its own interleaved
rounds on the same indexes (built once) and written to its own results file
(``_kK`` added to the default name when K != 10).

Every engine indexes the same documents and answers the same queries.  Builds
run one after another: build time is from raw text (each engine tokenizes
with its own tokenizer; on the synthetic corpus the words are plain
lowercase ASCII, so every tokenizer sees the same terms), memory is the
growth of the resident set, with a sampler thread for the peak during the
build.  Every build is single-threaded, and every engine is built
--build-rounds times, in rotating order (median and min-max reported; the
memory figures are those of the first build).  Queries then run in interleaved
rounds (bench/_common/timing.py: every engine's every case once per round, order
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
             once per query is reported too, and on Cranfield the same
             documents as a rowvoi.corpus (in memory, one record each)
             searched with mode="lexical" once per query.  Build is
             single-threaded.
  bm25s      method="lucene", k1=1.2, b=0.75, backend="numba" when numba
             imports; queries are tokenized and retrieved (n_threads=1 / -1);
             on Cranfield also one tokenize + retrieve per query.
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
             (bench/peers/bm25_pisa.py); --pisa-python names that venv's
             interpreter (default bench/.pisavenv/bin/python, made with
             ``python -m venv bench/.pisavenv && bench/.pisavenv/bin/pip
             install pyterrier-pisa``).  Its BM25 idf is Robertson's
             log((N - df + 0.5) / (df + 0.5)) floored at a tiny epsilon, not
             Lucene's log(1 + ...), so terms in more than half of the
             documents score (almost) nothing and its top 10 can differ.
  rank_bm25  BM25Okapi (capped: it scores every document in Python for every
             query: the first --rank-docs documents, --rank-queries queries,
             one round).

Results are printed as JSON lines and written to --json (default
``bench/results/bm25_CORPUS.json``, ``bm25_synth_QUERYMODE.json`` for the
synthetic corpus, ``_k100`` for k=100, and ``_avx512`` before ``.json`` on a
host with AVX-512: see ``Run.path``); then ``bench/results/bm25.md`` is written afresh from
every ``bm25_*.json`` there, one section per file (``--report-only`` just
does that).
"""

from __future__ import annotations

import argparse
import gc
import glob
import json
import os
import platform
import re
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._common.machine import cpu_model, vector_extensions
from .._common.results import CACHE, ROOT, Run, version_of, versions as run_versions, write
from .._common.timing import SelfTimed, interleaved, method_note, spread

PISA_PYTHON = ROOT / "bench" / ".pisavenv" / "bin" / "python"


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def load_corpus(name: str, n_docs: int, n_queries: int, query_mode: str = "zipf"):
    if name == "synth":
        from .._common.synth_corpus import load_or_generate, uniform_queries

        c = load_or_generate(str(CACHE), n_docs=n_docs, n_queries=max(n_queries, 10_000))
        qs = c.queries[:n_queries] if query_mode == "zipf" else uniform_queries(n_queries)
        return c.docs, qs, c.params
    from .._common.cranfield import load_cranfield

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
        from rowvoi.index.lexical import BM25Index
        from rowvoi.index.text import Analyzer

        analyzer = (
            Analyzer(stem=False, stopwords=False) if self.args.corpus == "synth" else Analyzer()
        )
        self.index = BM25Index(analyzer, k1=1.2, b=0.75)
        self.index.add(docs)
        self.docs = docs
        self.out["engine_memory_mb"] = self.index.stats()["memory_bytes"] / 2**20

    def warm(self, queries):
        self.q = queries
        self.index.search_batch(queries[:50], self.args.k, n_threads=1)
        if self.args.corpus == "cranfield" and not hasattr(self, "corpus"):
            # the same documents as a rowvoi.corpus (in memory, one record
            # each), searched in lexical mode: the API a corpus user calls
            from rowvoi.corpus import CorpusStore, build, from_mapping

            docs = {f"{i:04d}": t for i, t in enumerate(self.docs)}
            self.corpus = build(from_mapping(docs, embedder="hashing"), store=CorpusStore.memory())
        if hasattr(self, "corpus"):
            for q in queries[:50]:
                self.corpus.search(q, mode="lexical", k=self.args.k)

    def run1(self):
        return self.index.search_batch(self.q, self.args.k, n_threads=1)

    def run1_per_call(self):
        # one call per query, each result dropped (as a caller's loop would)
        for q in self.q:
            self.index.search(q, self.args.k)

    def run1_corpus(self):
        for q in self.q:
            self.corpus.search(q, mode="lexical", k=self.args.k)

    def runall(self):
        return self.index.search_batch(self.q, self.args.k, n_threads=0)

    def cases(self):
        out = [("qps_1thread", self.run1), ("qps_1thread_per_call", self.run1_per_call)]
        if hasattr(self, "corpus"):
            out.append(("qps_1thread_corpus", self.run1_corpus))
        return out

    def finish(self):
        import numpy as np

        r = self.run1()
        self.out["top10"] = [row[row >= 0].tolist() for row in r.ids]
        self.out["top10_scores"] = [row[~np.isnan(row)].tolist() for row in r.scores]
        stats = [self.index.search(q, self.args.k).stats for q in self.q[:500]]
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
        return self.r.retrieve(qt, k=self.args.k, n_threads=nt, show_progress=False)

    def warm(self, queries):
        self.q = queries
        self._run(queries[:50], 1)
        self._run(queries[:50], -1)  # compile the numba kernels

    def run1(self):
        return self._run(self.q, 1)

    def run1_per_call(self):
        # one tokenize + retrieve per query, each result dropped
        for q in self.q:
            self._run([q], 1)

    def runall(self):
        return self._run(self.q, -1)

    def cases(self):
        out = [("qps_1thread", self.run1)]
        if self.args.corpus == "cranfield":
            out.append(("qps_1thread_per_call", self.run1_per_call))
        return out

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
        return self.searcher.search(
            self.index.parse_query(words, ["body"]), self.args.k, count=False
        ).hits

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
            np.argsort(-s, kind="stable")[: self.args.k]

    def finish(self):
        pass


class Pisa(Engine):
    """PISA through pyterrier-pisa, in its own venv (``--pisa-python``), as a
    child process (bench/peers/bm25_pisa.py) that times its own build and
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
        script = str(ROOT / "bench" / "peers" / "bm25_pisa.py")
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
        r = self._ask(f"run {algo} {threads} {self.args.k}")
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
        r = self._ask(f"top10 block_max_wand {self.args.k}")
        self.out["top10"], self.out["top10_scores"] = r["top10"], r["top10_scores"]

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
    """Interleaved rounds (bench/_common/timing.py): every engine's every case once
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
    """Top-k agreement; with scores on both sides, also whether the score
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
    v["cpu"] = f"{cpu_model()} ({vector_extensions()})"
    return v


def short(d: dict) -> str:
    return json.dumps(
        {
            k: (round(v, 3) if isinstance(v, float) else v)
            for k, v in d.items()
            if k not in ("top10", "top10_scores", "corpus_params")
        }
    )


def main(argv: Sequence[str], run: Run) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m bench run bm25", description=__doc__.split("\n")[0]
    )
    ap.add_argument("corpus", choices=["synth", "cranfield"], nargs="?")
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
    ap.add_argument(
        "--k",
        default="10",
        help="results per query, one value or several separated by commas (each timed in its "
        "own rounds on the same indexes, one results file each; the default file name gains "
        "_kK when K != 10, and --json must hold {k} when there are several)",
    )
    ap.add_argument("--engines", default="rowvoi,bm25s,tantivy,pisa,rank_bm25")
    ap.add_argument(
        "--pisa-python",
        default=str(PISA_PYTHON),
        help="interpreter of a venv with pyterrier-pisa (default bench/.pisavenv)",
    )
    ap.add_argument("--rank-docs", type=int, default=100_000)
    ap.add_argument("--rank-queries", type=int, default=20)
    ap.add_argument("--json", default=None, help="default bench/results/bm25_CORPUS[_MODE].json")
    ap.add_argument(
        "--report-only",
        action="store_true",
        help="only write bm25.md from the bm25_*.json already in the results folder",
    )
    args = ap.parse_args(argv)
    try:
        ks = [int(x) for x in str(args.k).split(",")]
    except ValueError:
        ap.error(f"--k {args.k}: give integers separated by commas, e.g. 10,100")
    if any(k < 1 for k in ks) or len(set(ks)) != len(ks):
        ap.error(f"--k {args.k}: every k must be >= 1, each given once")
    if args.json is not None and len(ks) > 1 and "{k}" not in args.json:
        ap.error("--json must contain {k} when --k gives several values")
    args.k = ks[0]
    if args.report_only:
        print(write_report(run.results_dir))
        return 0
    if args.corpus is None:
        ap.error("the corpus (synth or cranfield) is required")

    def json_path(k: int) -> str:
        if args.json is not None:
            return str(args.json).replace("{k}", str(k))
        label = args.corpus + (f"_{args.query_mode}" if args.corpus == "synth" else "")
        label += f"_k{k}" if k != 10 else ""
        return str(run.path(f"bm25_{label}.json"))

    docs, queries, params = load_corpus(args.corpus, args.docs, args.queries, args.query_mode)
    # import every engine first, so a build's memory is its index, not its code
    for mod in ("rowvoi.index.lexical", "bm25s", "numba", "tantivy", "rank_bm25"):
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
    base = {e.name: dict(e.out) for e in engines}
    for k in ks:
        # every k answers the same queries on the same indexes, timed in its own rounds
        args.k = k
        for e in engines:
            e.out = dict(base[e.name])
        measure(engines, queries, args.rounds)
        results = [e.out for e in engines]
        for r in results:
            print(short(r), flush=True)
        by = {r["engine"]: r for r in results}
        v = versions()
        if "pisa" in by:
            v["pyterrier_pisa"] = by["pisa"]["peer_versions"]["pyterrier_pisa"]
        peers = {"pyterrier-pisa": v.get("pyterrier_pisa")}
        summary = {
            "corpus": args.corpus,
            "query_mode": args.query_mode,
            "k": k,
            "versions": v,
            "command": run.command,
            "provenance": run.provenance(
                run_versions(
                    "numpy",
                    "numba",
                    peers={
                        **peers,
                        **{d: version_of(d) for d in ("bm25s", "tantivy", "rank-bm25")},
                    },
                )
            ),
            "timing": method_note(args.rounds),
            "rounds": args.rounds,
            "build_rounds": args.build_rounds,
            "query_tokenisation": "timed for every engine (each engine's search call takes "
            "the query strings)",
            "results": [
                {key: val for key, val in r.items() if key not in ("top10", "top10_scores")}
                for r in results
            ],
        }
        # on Cranfield each engine tokenizes its own way, so top-k lists are not
        # comparable here (the cranfield suite compares them on shared tokens)
        if args.corpus == "synth" and "rowvoi" in by:
            for other in ("bm25s", "tantivy", "pisa"):
                if other in by:
                    summary[f"top10_agreement_{other}"] = agreement(by["rowvoi"], by[other])
                    print(other, summary[f"top10_agreement_{other}"])
        write(json_path(k), json.dumps(summary, indent=1))
    for e in engines:
        if isinstance(e, Pisa):
            e.release()
    print(write_report(Path(json_path(ks[0])).parent))
    return 0


# ------------------------------------------------------------------ report
def section_title(data: dict, name: str) -> str:
    """The title of a results file's section, from what it holds: corpus,
    size, query mix and k (``{n}`` is filled in with the size)."""
    k = data.get("k", 10)
    on = f", {host}" if (host := host_of(data)) else ""
    if data.get("corpus") == "synth":
        mix = "Zipf" if data.get("query_mode", "zipf") == "zipf" else "mid-frequency"
        return f"Synthetic corpus, {{n}} documents, {mix} queries, top {k}{on}"
    if data.get("corpus") == "cranfield":
        return f"Cranfield speed, top {k}{on}"
    return name[len("bm25_") : -len(".json")].replace("_", " ") + on


def host_of(data: dict) -> str:
    """``"AVX-512 host"`` or ``"AVX2 host"``, from the vector extensions its
    run's provenance line names ("" where it names none)."""
    found = re.search(r"vector extensions: ([^;]*)", data.get("provenance") or "")
    if not found:
        return ""
    return "AVX-512 host" if "avx512f" in found.group(1) else "AVX2 host"


def fmt(x, nd=1):
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:,.{nd}f}"
    return str(x)


def fmt_s(x):
    return "-" if x is None else (f"{x:.3f}" if x < 1 else f"{x:.1f}")


def qps(r: dict, key: str) -> str:
    """Median QPS with its min-max over rounds."""
    if r.get(key) is None:
        return "-"
    rng = r.get(key + "_range")
    if (
        not rng
        or len(r.get(key + "_rounds_s", r.get(key.replace("_cpu", "") + "_rounds_s", []))) < 2
    ):
        return f"{r[key]:,.0f}"
    return f"{r[key]:,.0f} ({rng[0]:,.0f}-{rng[1]:,.0f})"


def round_ratio(a: dict, key_a: str, b: dict, key_b: str) -> str:
    """Speed of a over b: median (min-max) of the per-round ratios."""
    sa, sb = a.get(key_a + "_rounds_s"), b.get(key_b + "_rounds_s")
    if not sa or not sb or len(sa) != len(sb):
        return "-"
    return spread(y / x for x, y in zip(sa, sb)).fmt(".2f", "x")


PEER_ROWS = (
    ("bm25s", "bm25s", "qps_1thread"),
    ("bm25s", "bm25s, one call per query", "qps_1thread_per_call"),
    ("tantivy", "tantivy", "qps_1thread"),
    ("pisa", "PISA, block-max WAND", "qps_1thread"),
    ("pisa", "PISA, MaxScore", "qps_1thread_maxscore"),
)

#: Which rowvoi figure each peer row is compared with: the batch call, but
#: one call per query against bm25s called once per query -- and then also
#: rowvoi.corpus's lexical search (Cranfield).
RV_KEYS = {"qps_1thread_per_call": ("qps_1thread_per_call", "qps_1thread_corpus")}


def speed_section(title: str, data: dict) -> list[str]:
    rows = {r["engine"]: r for r in data["results"]}
    out = [f"### {title}", ""]
    p = next((r.get("corpus_params") for r in data["results"] if r.get("corpus_params")), None)
    if p and data["corpus"] == "synth":
        out.append(
            f"Corpus: {p['n_docs']:,} documents, {p['total_tokens']:,} tokens "
            f"(mean {p['mean_len']} per document, Poisson), Zipf s = {p['zipf_s']} over "
            f"{p['vocab']:,} words, seed {p['seed']}.  Queries: "
            + (
                "5 distinct words drawn from the same Zipf distribution."
                if data.get("query_mode", "zipf") == "zipf"
                else "5 distinct words drawn uniformly from the 10,000 most frequent."
            )
        )
        out.append("")
    out += [
        f"{data.get('timing', 'Interleaved rounds.')}  Query tokenisation: "
        f"{data.get('query_tokenisation', 'timed for every engine')}.  Every build is "
        "single-threaded (tantivy's writer pinned to one thread; PISA threads=1); "
        f"{data.get('build_rounds', 1)} build(s) per engine in rotating order, build time "
        "median (min-max).",
        "",
        "| engine | build (s) | index memory (MB) | peak during build (MB) | "
        "QPS, 1 thread (CPU time) | QPS, 1 thread (wall) | QPS, all cores (wall) | notes |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for eng, label, key in (("rowvoi", "rowvoi", "qps_1thread"), *PEER_ROWS) + (
        ("rank_bm25", "rank_bm25", "qps_1thread"),
    ):
        r = rows.get(eng)
        if not r or (key != "qps_1thread" and key not in r and "error" not in r):
            continue
        if "error" in r:
            if key == "qps_1thread":
                out.append(f"| {label} | - | - | - | - | - | - | {r['error']} |")
            continue
        notes = []
        if eng == "rowvoi":
            notes.append(
                f"search() called per query: {qps(r, 'qps_1thread_per_call_cpu')} "
                f"QPS (CPU); "
                f"postings scored {100 * r.get('postings_scored_fraction', 0):.1f}%; "
                f"engine heap {fmt(r.get('engine_memory_mb'))} MB"
            )
        if eng == "rowvoi" and r.get("qps_1thread_corpus_cpu") is not None:
            notes.append(
                f"rowvoi.corpus search (mode lexical) per query: "
                f"{qps(r, 'qps_1thread_corpus_cpu')} QPS (CPU)"
            )
        if eng == "bm25s":
            notes.append(f"backend {r.get('backend')}")
            if key != "qps_1thread":
                notes = ["same index as the row above; tokenize + retrieve once per query"]
        if eng == "pisa":
            notes.append(
                f"pyterrier-pisa {r.get('peer_versions', {}).get('pyterrier_pisa')}, own "
                f"process; index on disk {fmt(r.get('index_disk_mb'), 0)} MB; memory = "
                f"peak RSS growth of its process; JVM loaded: {r.get('jvm_loaded')}"
            )
            if key != "qps_1thread":
                notes = ["same index as the row above"]
        if eng == "rank_bm25":
            notes.append(
                f"capped: first {r.get('capped_docs'):,} documents, "
                f"{r.get('capped_queries')} queries, one round"
            )
        first = key == "qps_1thread"
        mem = r.get("index_mb") if eng != "pisa" else r.get("index_disk_mb")
        build = fmt_s(r.get("build_s")) if first else "-"
        if first and len(r.get("build_rounds_s", [])) > 1:
            lo, hi = r["build_s_range"]
            build += f" ({fmt_s(lo)}-{fmt_s(hi)})"
        out.append(
            f"| {label} | {build} | "
            f"{fmt(mem, 0) if first else '-'}{' (disk)' if eng == 'pisa' and first else ''} | "
            f"{fmt(r.get('peak_build_mb'), 0) if first else '-'} | {qps(r, key + '_cpu')} | "
            f"{qps(r, key)} | {qps(r, 'qps_all_cores') if first else '-'} | "
            f"{'; '.join(notes)} |"
        )
    rv = rows.get("rowvoi")
    if rv and "qps_1thread" in rv:
        out += [
            "",
            "rowvoi's speed over each peer (median of per-round ratios, min-max; >1x: rowvoi "
            "faster) and build time ratio (peer / rowvoi: per build round when the JSON has "
            "build rounds, else one build each):",
            "",
            "| peer | 1 thread, CPU time | 1 thread, wall | all cores, wall | build time |",
            "| --- | ---: | ---: | ---: | ---: |",
        ]
        for eng, label, key in PEER_ROWS:
            r = rows.get(eng)
            if not r or key not in r:
                continue
            first = key == "qps_1thread"
            build = "-"
            if first and r.get("build_s") and rv.get("build_s"):
                build = (
                    round_ratio(rv, "build", r, "build")
                    if r.get("build_rounds_s") and rv.get("build_rounds_s")
                    else f"{r['build_s'] / rv['build_s']:.2f}x"
                )
            for rv_key in RV_KEYS.get(key, ("qps_1thread",)):
                if rv_key not in rv:
                    continue
                shown = label
                if rv_key == "qps_1thread_per_call":
                    shown += " (rowvoi: BM25Index.search once per query)"
                elif rv_key == "qps_1thread_corpus":
                    shown += " (rowvoi: rowvoi.corpus lexical search once per query)"
                out.append(
                    f"| {shown} | {round_ratio(rv, rv_key + '_cpu', r, key + '_cpu')} | "
                    f"{round_ratio(rv, rv_key, r, key)} | "
                    f"{round_ratio(rv, 'qps_all_cores', r, 'qps_all_cores') if first else '-'} | "
                    f"{build} |"
                )
    if any(data.get(f"top10_agreement_{o}") for o in ("bm25s", "tantivy", "pisa")):
        out.append("")
    for other in ("bm25s", "tantivy", "pisa"):
        a = data.get(f"top10_agreement_{other}")
        if a:
            line = (
                f"Top-{data.get('k', 10)} vs {other}: identical lists for {a['identical_lists']} of "
                f"{a['queries']} queries, same sets for {a['same_sets']}"
            )
            if other == "bm25s" and "same_scores" in a:
                line += (
                    f", the same scores (within float32 rounding) for "
                    f"{a['same_scores']} -- where the scores agree the lists differ only "
                    f"in the order of tied documents, which bm25s leaves unspecified "
                    f"and rowvoi breaks by the lower id."
                )
            elif other == "tantivy":
                line += " (tantivy scores with lossy one-byte length norms, so near-ties differ)."
            elif other == "pisa":
                line += (
                    " (PISA's BM25 idf is Robertson's log((N - df + 0.5) / (df + 0.5)) "
                    "floored at a tiny epsilon, not Lucene's log(1 + ...): words in more than "
                    "half of the documents add almost nothing there, so its ranking differs)."
                )
            else:
                line += "."
            out.append(line)
    out += ["", f"Command: `{data['command']}`", ""]
    return out


def report(folder: str | os.PathLike[str]) -> str:
    """``bm25.md`` from every ``bm25_*.json`` in ``folder``: one section per
    file -- synthetic corpus by size, query mix (Zipf first) and k, then
    Cranfield by k -- then the machine and the reading notes."""
    found = []
    for p in glob.glob(os.path.join(folder, "bm25_*.json")):
        with open(p) as f:
            d = json.load(f)
        if "results" not in d:
            continue
        n = next((r.get("n_docs") for r in d["results"] if r.get("n_docs")), 0)
        key = (
            d.get("corpus") != "synth",
            host_of(d) == "AVX-512 host",
            n,
            d.get("query_mode", "zipf") != "zipf",
            d.get("k", 10),
            os.path.basename(p),
        )
        found.append((key, os.path.basename(p)))
    names = [name for _, name in sorted(found)]
    parts = [
        "# Lexical search (BM25)",
        "",
        "Produced by `python -m bench run bm25 CORPUS ...` (bench/suites/bm25.py): one "
        "section per results file `bm25_*.json`, each naming the run that made it.",
        "",
    ]
    any_speed = None
    for name in names:
        path = os.path.join(folder, name)
        if not os.path.exists(path):
            continue
        with open(path) as f:
            d = json.load(f)
        n_docs = next((r.get("n_docs") for r in d["results"] if r.get("n_docs")), 0)
        title = section_title(d, name)
        any_speed = any_speed or d
        section = speed_section(title.format(n=f"{n_docs:,}"), d)
        if d.get("provenance"):
            section[2:2] = [d["provenance"], ""]
        parts += section
    if any_speed:
        v = any_speed["versions"]
        parts += [
            "Machine: "
            + ", ".join(
                f"{k} {v[k]}"
                for k in (
                    "cpu",
                    "cpus",
                    "python",
                    "numpy",
                    "bm25s",
                    "numba",
                    "tantivy",
                    "rank_bm25",
                    "pyterrier_pisa",
                )
                if v.get(k)
            )
            + ".  "
            "The machine's two cores are shared with other jobs, whose load came and went "
            "during the session, so absolute figures move from run to run; within a table "
            "all engines were built one after another and their queries ran in interleaved "
            "rounds, so the per-round ratios within a table are the comparison.  The query "
            "mix decides which peer is fastest: Zipf queries include words found in most "
            "documents, which pruning (WAND, MaxScore) cannot skip; mid-frequency queries "
            "suit pruning well.",
            "",
        ]
    return "\n".join(parts).rstrip("\n") + "\n"


def write_report(folder: str | os.PathLike[str]) -> str:
    """Write ``bm25.md`` in ``folder`` from its JSON files; returns the text."""
    text = report(folder)
    write(os.path.join(folder, "bm25.md"), text)
    return text
