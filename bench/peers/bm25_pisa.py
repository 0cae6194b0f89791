"""PISA peer of the ``bm25`` suite, run in its own venv (pyterrier-pisa).

    python -m venv bench/.pisavenv && bench/.pisavenv/bin/pip install pyterrier-pisa

The suite starts this script, by path, with ``--pisa-python`` as a child process:

    bench/peers/bm25_pisa.py DOCS_JSONL QUERIES_JSON WORKDIR ANALYSIS

``DOCS_JSONL`` holds one JSON string per line (document i = line i),
``QUERIES_JSON`` a JSON list of query strings, ``ANALYSIS`` is ``plain`` (no
stemming, no stopwords: the synthetic corpus) or ``english`` (Porter2 and the
Terrier stopword list).  It builds the index single-threaded on disk under
WORKDIR (timed, with the peak resident set of this process), prints one JSON
line with the build figures, then answers one command per line on stdin:

``run ALGO THREADS [K]``
    answer every query once (top K, default 10; BM25 k1=1.2 b=0.75) with query
    algorithm ALGO (``block_max_wand``, ``maxscore``, ...); replies with the
    wall and CPU seconds of the engine call, which includes PISA's own
    tokenisation of the query strings.
``top10 ALGO [K]``
    the ids (document numbers) and scores of every query's top K (default 10).

PISA itself needs no Java: pyterrier imports without starting a JVM, and the
reply to ``run`` says whether a JVM was loaded into this process.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def jvm_loaded() -> bool:
    with open("/proc/self/maps") as f:
        return "libjvm" in f.read()


def dir_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20


def main() -> int:
    docs_path, queries_path, work, analysis = sys.argv[1:5]
    # PISA's C++ code prints to standard output: keep the protocol on a copy
    # of it and send file descriptor 1 to standard error
    proto = os.fdopen(os.dup(1), "w")
    sys.stdout.flush()
    os.dup2(2, 1)

    def reply(obj: dict[str, Any]) -> None:
        proto.write(json.dumps(obj) + "\n")
        proto.flush()

    import pyterrier_pisa
    from pyterrier_pisa import PisaIndex, _pisathon

    queries: list[str] = json.loads(Path(queries_path).read_text())
    english = analysis == "english"
    path = Path(tempfile.mkdtemp(prefix="pisa-", dir=work))
    shutil.rmtree(path)

    def docs() -> Any:
        with open(docs_path) as f:
            for i, line in enumerate(f):
                yield {"docno": str(i), "text": json.loads(line)}

    index = PisaIndex(
        str(path),
        stemmer="porter2" if english else "none",
        stops="terrier" if english else "none",
        threads=1,
    )
    base = peak = rss_mb()
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not stop.wait(0.005):
            peak = max(peak, rss_mb())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    t = time.perf_counter()
    index.index(docs())
    build_s = time.perf_counter() - t
    stop.set()
    sampler.join()
    retrievers = {}
    inp = list(enumerate(queries))  # the engine's input: (number, text) pairs
    out: dict[int, tuple[Any, Any, Any, Any]] = {}

    def buffers(k: int) -> tuple[Any, Any, Any, Any]:
        # the result arrays for top k, made once per k (outside the timed call)
        if k not in out:
            n = len(queries) * k
            out[k] = (
                np.empty(n, dtype=np.int32),
                np.empty(n, dtype=object),
                np.empty(n, dtype=np.int32),
                np.empty(n, dtype=np.float32),
            )
        return out[k]

    def retriever(algo: str, k: int) -> Any:
        if (algo, k) not in retrievers:
            retrievers[algo, k] = index.bm25(k1=1.2, b=0.75, num_results=k, query_algorithm=algo)
        return retrievers[algo, k]

    def run(algo: str, threads: int, k: int) -> int:
        r = retriever(algo, k)
        qidx, docnos, ranks, scores = buffers(k)
        return int(
            _pisathon.retrieve(
                r._ctxt,
                r.query_algorithm.value,
                inp,
                k=k,
                threads=threads,
                query_weighted=0,
                pretokenised=False,
                result_qidxs=qidx,
                result_docnos=docnos,
                result_ranks=ranks,
                result_scores=scores,
            )
        )

    reply(
        {
            "build_s": build_s,
            "peak_build_mb": peak - base,
            "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "index_disk_mb": dir_mb(path),
            "pyterrier_pisa": getattr(pyterrier_pisa, "__version__", "installed"),
            "numpy": np.__version__,
            "python": sys.version.split()[0],
        }
    )
    for line in sys.stdin:
        cmd = line.split()
        if not cmd:
            continue
        if cmd[0] == "run":
            k = int(cmd[3]) if len(cmd) > 3 else 10
            retriever(cmd[1], k)
            buffers(k)
            w, c = time.perf_counter(), time.process_time()
            n = run(cmd[1], int(cmd[2]), k)
            w, c = time.perf_counter() - w, time.process_time() - c
            reply({"wall": w, "cpu": c, "hits": n, "jvm": jvm_loaded()})
        elif cmd[0] == "top10":
            k = int(cmd[2]) if len(cmd) > 2 else 10
            n = run(cmd[1], 1, k)
            qidx, docnos, ranks, scores = buffers(k)
            ids: list[list[int]] = [[] for _ in queries]
            sc: list[list[float]] = [[] for _ in queries]
            order = np.lexsort((ranks[:n], qidx[:n]))
            for j in order:
                ids[qidx[j]].append(int(docnos[j]))
                sc[qidx[j]].append(float(scores[j]))
            reply({"top10": ids, "top10_scores": sc})
        else:
            reply({"error": f"unknown command {cmd[0]!r}"})
    shutil.rmtree(path, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
