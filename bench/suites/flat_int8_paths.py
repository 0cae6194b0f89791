"""One query at a time against an int8 flat index: the exact screen beside
the approximate int8 scan, as the corpus's dense search would call them.

    python -m bench run flat_int8_paths [--sizes 20000,100000,1000000] [--queries 40]
        [--data minilm,clustered,mixture,random] [--markdown PATH]
    python -m bench run flat_int8_paths --threads [--sizes 50000,100000,200000] [--markdown PATH]

A run writes ``bench/results/flat_int8_paths.md`` with a block for the
paths table and one for the threads table (each replaced by its own kind of
run); ``rowvoi/corpus/storage/generation.py`` cites the figures.

A corpus's flat index stores int8 codes beside the float32 rows
(``storage="int8"``), and a dense query reaches it as one vector
(``FlatIndex._search_vector``, the corpus's hot path). Two searches can
answer it:

``exact``
    the int8 copy screens every row with proven error bounds and the float32
    rows score whatever the bounds cannot rule out: the results of a float32
    scan, bit for bit (``exact=True``);
``int8 x8``
    the int8 scan keeps the best ``8 * k`` rows by their int8 scores, which
    are then re-scored in float32 (``exact=False``, the default rescore
    factor): approximate, since a true top-k row can miss the pool.

Per data set and size, the two are timed query by query in alternation
(which goes first alternates too), ``k = 50`` (the corpus's ``fetch_k`` for
``k = 10``), with the corpus's thread rule (one thread below
``PARALLEL_SCAN_MIN`` vectors, all cores from there). Reported: p50 and p95
per path, the ratio of the approximate path's p50 to the exact one's, and
the approximate path's recall@10 and recall@50 against the exact results.
The CPU's vector extensions are printed, since the int8 scan's kernel
depends on them (AVX-512 VNNI, AVX2, or portable code).

Data (384-d, unit rows; queries drawn like the rows): ``clustered`` --
1,000 tight clusters (typical distance 0.1 from a random unit centre);
``mixture`` -- 50 broad clusters (noise 0.7 per component around the centre),
which is closer to sentence embeddings' spread of cosines; ``random`` --
i.i.d. Gaussian, where every cosine is near 0 and no bound can rule much out;
``minilm`` -- sentence embeddings: every sentence of six words or more of
the Cranfield abstracts embedded once with rowvoi's MiniLM (cached in
``bench/.cache``), a row is the normalised sum of two sentences drawn at
random (documents of two sentences, as the ``corpus`` suite's scale corpus
has them; the sum stands in for embedding the pair, which would take an hour
at a million rows), the queries are the 225 Cranfield queries.

``--threads`` times the exact screen instead on one thread against all
cores (``n_threads`` 1 and 0), ``minilm`` data, 3 x 60 queries in
alternation, first on an idle machine and then with a busy process (a
Python loop) holding a core: what the corpus's ``PARALLEL_SCAN_MIN`` rule
weighs (a second thread helps when the core is free and must cost little
when it is not).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence

import numpy as np

from .._common.cranfield import corpus_data, sentences as cranfield_sentences
from .._common.results import CACHE, Run, update_blocks, versions

DIM = 384
K = 50


def minilm_parts() -> tuple[np.ndarray, np.ndarray]:
    """(sentence vectors, query vectors), MiniLM, cached."""
    docs, _, queries, _ = corpus_data()
    sentences = sorted(set(cranfield_sentences(docs)))
    path = os.path.join(CACHE, f"cranfield_sentences_minilm_{len(sentences)}.npz")
    if os.path.exists(path):
        data = np.load(path)
        return data["sentences"], data["queries"]
    from rowvoi.index.embed import MiniLMEmbedder

    emb = MiniLMEmbedder()
    sv = np.asarray(emb.embed(sentences), dtype=np.float32)
    qv = np.asarray(emb.embed(queries), dtype=np.float32)
    os.makedirs(CACHE, exist_ok=True)
    np.savez(path, sentences=sv, queries=qv)
    return sv, qv


def make(kind: str, n: int, nq: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    if kind == "minilm":
        sv, qv = minilm_parts()
        x = np.zeros((n, DIM), dtype=np.float32)
        for lo in range(0, n, 100_000):  # (in slices: no n x 2 x 384 temporary)
            pick = rng.integers(0, len(sv), size=(min(n, lo + 100_000) - lo, 2))
            x[lo : lo + len(pick)] = sv[pick[:, 0]] + sv[pick[:, 1]]
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        q = qv[rng.permutation(len(qv))[:nq]]
        return x, np.ascontiguousarray(q / np.linalg.norm(q, axis=1, keepdims=True))
    if kind == "random":
        x = rng.standard_normal((n + nq, DIM), dtype=np.float32)
    elif kind == "clustered":
        c = rng.standard_normal((1000, DIM), dtype=np.float32)
        c /= np.linalg.norm(c, axis=1, keepdims=True)
        x = c[rng.integers(0, 1000, n + nq)]
        x += rng.standard_normal(x.shape, dtype=np.float32) * np.float32(0.1 / np.sqrt(DIM))
    elif kind == "mixture":
        c = rng.standard_normal((50, DIM), dtype=np.float32)
        x = c[rng.integers(0, 50, n + nq)]
        x += rng.standard_normal(x.shape, dtype=np.float32) * np.float32(0.7)
    else:
        raise SystemExit(f"unknown data {kind!r}")
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return np.ascontiguousarray(x[:n]), np.ascontiguousarray(x[n:])


def run_one(kind: str, n: int, nq: int) -> dict:
    from rowvoi.corpus.storage.generation import PARALLEL_SCAN_MIN
    from rowvoi.index.flat import FlatIndex

    x, qs = make(kind, n, nq, seed=n)
    ix = FlatIndex(DIM, metric="ip", storage="int8")
    ix.add(x)
    del x
    threads = 1 if n < PARALLEL_SCAN_MIN else 0
    for q in qs[:3]:  # warm-up
        ix._search_vector(q, K, True, threads)
        ix._search_vector(q, K, False, threads)
    lat = {True: [], False: []}
    rec10, rec50 = [], []
    for i, q in enumerate(qs):
        got = {}
        for exact in (True, False) if i % 2 == 0 else (False, True):
            t = time.perf_counter()
            ids, _ = ix._search_vector(q, K, exact, threads)
            lat[exact].append(time.perf_counter() - t)
            got[exact] = ids
        rec10.append(len(set(got[True][:10].tolist()) & set(got[False][:10].tolist())) / 10)
        rec50.append(len(set(got[True].tolist()) & set(got[False].tolist())) / K)
    ms = {e: np.array(v) * 1e3 for e, v in lat.items()}
    return {
        "data": kind,
        "n": n,
        "threads": threads or "all",
        "exact_p50": float(np.median(ms[True])),
        "exact_p95": float(np.percentile(ms[True], 95)),
        "int8_p50": float(np.median(ms[False])),
        "int8_p95": float(np.percentile(ms[False], 95)),
        "ratio": float(np.median(ms[False]) / np.median(ms[True])),
        "recall10": float(np.mean(rec10)),
        "recall50": float(np.mean(rec50)),
    }


def threads_rows(sizes: list[int]) -> list[str]:
    """The ``--threads`` table's rows."""
    import subprocess

    from rowvoi.index.flat import FlatIndex

    rows = []
    for n in sizes:
        x, qs = make("minilm", n, 60, seed=n)
        ix = FlatIndex(DIM, metric="ip", storage="int8")
        ix.add(x)
        del x
        for busy in (False, True):
            hog = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if busy else None
            try:
                time.sleep(0.3)
                lat: dict[int, list[float]] = {1: [], 0: []}
                for r in range(3):
                    for i, q in enumerate(qs):
                        for th in (1, 0) if (i + r) % 2 else (0, 1):
                            t = time.perf_counter()
                            ix._search_vector(q, K, True, th)
                            lat[th].append(time.perf_counter() - t)
            finally:
                if hog is not None:
                    hog.kill()
                    hog.wait()
            one, alls = np.array(lat[1]) * 1e3, np.array(lat[0]) * 1e3
            rows.append(
                f"| {n:,} | {'a busy process on one core' if busy else 'idle'} "
                f"| {np.median(one):.2f} | {np.percentile(one, 95):.2f} "
                f"| {np.median(alls):.2f} | {np.percentile(alls, 95):.2f} "
                f"| {np.median(one) / np.median(alls):.2f}x |"
            )
            print(rows[-1], file=sys.stderr)
    return rows


HEAD = (
    "# The int8 flat index, one query at a time: exact screen vs int8 x8 scan\n\n"
    "Produced by `python -m bench run flat_int8_paths` (bench/suites/flat_int8_paths.py).\n"
)


def main(argv: Sequence[str], run: Run) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m bench run flat_int8_paths", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("--sizes", default="20000,100000,1000000")
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--data", default="minilm,clustered,mixture,random")
    ap.add_argument("--threads", action="store_true", help="one thread against all cores")
    ap.add_argument("--markdown", default=str(run.out), help="the results file (its block)")
    args = ap.parse_args(argv)
    if args.threads and args.sizes == ap.get_default("sizes"):
        args.sizes = "50000,100000,200000"
    sizes = [int(s) for s in args.sizes.split(",")]
    head = [run.provenance(versions("numpy")), ""]
    if args.threads:
        body = threads_rows(sizes)
        md = [
            "#### The exact screen on one thread and on all cores (MiniLM-like rows, k = 50)",
            "",
            *head,
            "3 x 60 queries per row, the two settings alternating query by query.",
            "",
            "| vectors | other load | 1 thread p50 ms | p95 ms | all cores p50 ms | p95 ms "
            "| 1 thread / all (p50) |",
            "|---:|---|---:|---:|---:|---:|---:|",
            *body,
        ]
        text = "\n".join(md) + "\n"
        print(text)
        update_blocks(args.markdown, "flat_int8_paths", {"threads": text}, head=HEAD)
        return 0
    rows = []
    for kind in args.data.split(","):
        for n in sizes:
            r = run_one(kind, n, args.queries)
            rows.append(r)
            print(
                f"{kind} {n}: exact {r['exact_p50']:.2f} ms, int8 x8 {r['int8_p50']:.2f} ms",
                file=sys.stderr,
            )
    md = [
        "### One query at a time on an int8 flat index: exact screen vs int8 x8 scan",
        "",
        *head,
        f"{args.queries} queries per row, k = {K}, the two paths alternating query by query.",
        "",
        "| data | vectors | threads | exact p50 ms | exact p95 ms | int8 x8 p50 ms "
        "| int8 x8 p95 ms | int8 x8 / exact (p50) | int8 x8 recall@10 | recall@50 |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        md.append(
            f"| {r['data']} | {r['n']:,} | {r['threads']} | {r['exact_p50']:.2f} "
            f"| {r['exact_p95']:.2f} | {r['int8_p50']:.2f} | {r['int8_p95']:.2f} "
            f"| {r['ratio']:.2f}x | {r['recall10']:.3f} | {r['recall50']:.3f} |"
        )
    text = "\n".join(md) + "\n"
    print(text)
    update_blocks(
        args.markdown, "flat_int8_paths", {"paths": text}, head=HEAD, order=("paths", "threads")
    )
    return 0
