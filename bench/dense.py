#!/usr/bin/env python3
"""Benchmark rowvoi's dense retrieval against its peers, side by side.

Parts (``--part``, each well under 10 minutes on 2 cores):

``exact``
    Exact top-10 search, batches of 64 queries, over random 384-d unit
    vectors (100,000 and 1,000,000, seed 0) and over a clustered set (a
    Gaussian mixture of tight clusters, queries from the same mixture):
    queries per second single-threaded and on all cores for
    ``rowvoi.dense.FlatIndex`` (float32; float16 and int8 storage with exact
    re-scoring of a ``k * 8`` pool, and int8 with ``k * 1``), numpy (BLAS
    ``Q @ X.T`` and argpartition + sort, also timed apart) and faiss
    ``IndexFlatIP``; recall@10 of each against a float64 ground truth
    (numpy float64 matmul).
``hnsw``
    100,000 clustered 384-d unit vectors, 1,000 queries: build time, QPS and
    recall@10 (against float64 truth) of ``rowvoi.dense.HNSWIndex`` and of
    hnswlib called directly with the same parameters (M=16,
    ef_construction=200, seed 100, ef=64), and ``exact_rescore`` pools.
``embed``
    Texts per second on short sentences (Cranfield titles and queries) and
    ~200-token passages (Cranfield abstracts cut to 150 words) for
    ``MiniLMEmbedder`` (per-token int8, and the shipped file), an independent
    onnxruntime peer on the fp32 model (its own session, tokenisation and
    pooling, written here; the fp32 file is the shipped one with its weights
    folded by onnxruntime) and sentence-transformers fp32 on torch CPU
    (weights rebuilt from that fp32 file, see below; in a child process run by
    the interpreter given with ``--st-python``), with cosine agreement to the
    onnxruntime peer.

Timing (``bench/_timing.py``, shared by every benchmark here): one warm-up
call each, then ``--rounds`` interleaved rounds -- every system once per
round, order rotating -- and the median with the min-max over rounds, never
the best round; ratios are medians of per-round ratios.  Load from other jobs
on this shared 2-core machine then hits all systems alike.

How to run (from the repository root, package installed in this
interpreter; numpy's OpenBLAS reads OPENBLAS_CORETYPE, which this
workplace sets for old OpenBLAS builds and which slows a current one, so
unset it for the numpy figures)::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python bench/dense.py --part exact
    python bench/dense.py --part hnsw
    python bench/dense.py --part embed --st-python ST_VENV/bin/python

where ``ST_VENV`` is a venv with ``torch``, ``sentence-transformers`` and
``onnx`` (``python -m venv ST_VENV && ST_VENV/bin/pip install torch
sentence-transformers onnx``).  Each part rewrites its own block of
``bench/results/retrieval.md``.

sentence-transformers: its model weights cannot be downloaded here.  The
comparison builds a ``BertModel`` from the fp32 export of the shipped model
(the int8 weights times their scales; the file's MatMul weights are mapped to
layers through the named bias each one feeds) and wraps it in
``SentenceTransformer`` with mean pooling and normalisation, so torch runs
the same network in fp32.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import Samples, SelfTimed, Spread, interleaved, method_note, ratio, spread

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "retrieval.md"
# ../shared beside the repository (or beside the worktree folder)
CRANFIELD = next(
    (
        p / "shared" / "data" / "cranfield"
        for p in (ROOT.parent, ROOT.parent.parent)
        if (p / "shared" / "data" / "cranfield").is_dir()
    ),
    ROOT.parent / "shared" / "data" / "cranfield",
)
NCPU = os.cpu_count() or 1


# ------------------------------------------------------------------ helpers


def recall(found: Any, truth: Any) -> float:
    """Mean share of each query's true top-k found in ``found`` (row-wise)."""
    f, t = np.asarray(found), np.asarray(truth)
    k = t.shape[1]
    return float(np.mean([len(set(a[:k].tolist()) & set(b.tolist())) / k for a, b in zip(f, t)]))


def unit(x: np.ndarray) -> np.ndarray:
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x


def exact_truth_f64(x: np.ndarray, queries: np.ndarray, k: int, chunk: int = 65536) -> np.ndarray:
    """Top-k inner-product ids in float64 (numpy matmul on float64 copies of
    the float32 data, chunked over rows); ties by lower id.  Independent of
    every system measured, and free of float32 rounding."""
    q = queries.astype(np.float64)
    best_s = np.full((len(q), 0), -np.inf)
    best_i = np.zeros((len(q), 0), dtype=np.int64)
    for start in range(0, len(x), chunk):
        s = q @ x[start : start + chunk].astype(np.float64).T
        ids = np.broadcast_to(np.arange(start, start + s.shape[1]), s.shape)
        best_s = np.concatenate([best_s, s], axis=1)
        best_i = np.concatenate([best_i, ids], axis=1)
        if best_s.shape[1] > k:
            # lexsort: last key first -- score descending, then id ascending
            order = np.lexsort((best_i, -best_s), axis=1)[:, :k]
            best_s = np.take_along_axis(best_s, order, axis=1)
            best_i = np.take_along_axis(best_i, order, axis=1)
    return best_i


def tight_clusters(
    rng: np.random.Generator, n: int, d: int, n_centers: int, spread: float
) -> np.ndarray:
    """Unit vectors from a Gaussian mixture: ``n_centers`` random unit
    centres, each point its centre plus N(0, spread^2 / d) per coordinate
    (so ``spread`` is the typical distance from the centre), renormalised."""
    centers = unit(rng.standard_normal((n_centers, d), dtype=np.float32))
    labels = rng.integers(0, n_centers, n)
    noise = rng.standard_normal((n, d), dtype=np.float32) * np.float32(spread / np.sqrt(d))
    return unit(centers[labels] + noise)


def machine_note():
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        commit = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
        ).stdout.strip()
    except OSError:
        commit = "?"
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (
        f"{cpu}, {NCPU} cores, Python {platform.python_version()}, commit {commit}, "
        f"load average {load:.2f} at start, {time.strftime('%Y-%m-%d %H:%M')}"
    )


def write_block(name: str, text: str) -> None:
    """Replace (or append) the block of one part in retrieval.md."""
    begin, end = f"<!-- dense:{name}:begin -->", f"<!-- dense:{name}:end -->"
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    doc = RESULTS.read_text() if RESULTS.exists() else "# Retrieval benchmarks\n"
    if "## Dense retrieval" not in doc:
        doc = doc.rstrip() + (
            "\n\n## Dense retrieval (exact vector search, HNSW, embedders)\n\n"
            "Produced by `bench/dense.py`; see its docstring for what each "
            "figure measures.\n"
        )
    block = f"{begin}\n{text.rstrip()}\n{end}"
    if begin in doc:
        doc = re.sub(
            re.escape(begin) + r".*?" + re.escape(end), lambda m: block, doc, flags=re.DOTALL
        )
    else:
        doc = doc.rstrip() + "\n\n" + block + "\n"
    RESULTS.write_text(doc.rstrip() + "\n")
    print(text)


def table(headers, rows):
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


# -------------------------------------------------------------------- exact

EXACT_METHODS = [
    "ours float32",
    "ours float16, rescore x8",
    "ours int8, rescore x8",
    "ours int8, rescore x1",
    "numpy: matmul + top-k",
    "numpy: matmul only",
    "numpy: top-k only",
    "faiss IndexFlatIP",
]


def exact_one(
    label: str, x: np.ndarray, queries: np.ndarray, rounds: int
) -> tuple[list[list[str]], list[str]]:
    """Time every exact-search method on one dataset; table rows and notes."""
    import faiss
    from threadpoolctl import threadpool_limits

    from rowvoi.dense import FlatIndex

    d = x.shape[1]
    nq, k = len(queries), 10
    t0 = time.perf_counter()
    truth = exact_truth_f64(x, queries, k)
    truth_s = time.perf_counter() - t0

    def flat(storage: str, rescore: int) -> FlatIndex:
        ix = FlatIndex(d, metric="ip", storage=storage, rescore_factor=rescore)
        ix.add(x)
        return ix

    def faiss_flat() -> Any:
        ix = faiss.IndexFlatIP(d)
        ix.add(x)
        return ix

    # builds in interleaved rounds too (no warm-up: a build is a one-off)
    built = interleaved(
        {
            "ours float32": lambda: flat("float32", 1),
            "ours float16, rescore x8": lambda: flat("float16", 8),
            "ours int8, rescore x8": lambda: flat("int8", 8),
            "faiss IndexFlatIP": faiss_flat,
        },
        rounds,
        warmup=0,
    )
    builds: dict[str, Spread] = {name: spread(s.wall) for name, s in built.items()}
    builds["ours int8, rescore x1"] = builds["ours int8, rescore x8"]
    f32 = built["ours float32"].result
    f16 = built["ours float16, rescore x8"].result
    i8 = built["ours int8, rescore x8"].result
    fi = built["faiss IndexFlatIP"].result
    del built
    scores = queries @ x.T  # input of the "top-k only" case, made once

    def np_matmul() -> np.ndarray:
        return queries @ x.T  # (64, n): rows contiguous for argpartition

    def np_topk(s: np.ndarray) -> np.ndarray:
        top = np.argpartition(-s, k, axis=1)[:, :k]
        order = np.argsort(-np.take_along_axis(s, top, axis=1), axis=1, kind="stable")
        return np.take_along_axis(top, order, axis=1)

    res: dict[tuple[str, int], Samples] = {}
    for threads in (1, NCPU):
        faiss.omp_set_num_threads(threads)
        nt = threads
        cases = {
            "ours float32": lambda nt=nt: f32.search(queries, k, n_threads=nt).ids,
            "ours float16, rescore x8": lambda nt=nt: f16.search(queries, k, n_threads=nt).ids,
            "ours int8, rescore x8": lambda nt=nt: i8.search(queries, k, n_threads=nt).ids,
            "ours int8, rescore x1": lambda nt=nt: (
                i8.search(queries, k, n_threads=nt, rescore_factor=1).ids
            ),
            "numpy: matmul + top-k": lambda: np_topk(np_matmul()),
            "numpy: matmul only": np_matmul,
            "numpy: top-k only": lambda: np_topk(scores),
            "faiss IndexFlatIP": lambda: fi.search(queries, k)[1],
        }
        with threadpool_limits(threads, user_api="blas"):
            got = interleaved(cases, rounds)
        for name, s in got.items():
            res[(name, threads)] = s
    rows = []
    for name in EXACT_METHODS:
        s1, sa = res[(name, 1)], res[(name, NCPU)]
        r = "-" if name == "numpy: matmul only" else f"{recall(s1.result, truth):.4f}"
        vs_faiss = ratio(res[("faiss IndexFlatIP", 1)].wall, s1.wall)
        vs_ours = ratio(res[("ours float32", 1)].wall, s1.wall)
        b = builds.get(name)
        rows.append(
            [
                label,
                name,
                b.fmt(".2f") if b is not None else "-",
                s1.wall_s().rate(nq).fmt(",.0f"),
                sa.wall_s().rate(nq).fmt(",.0f"),
                r,
                vs_faiss.fmt(".2f", "x"),
                vs_ours.fmt(".2f", "x"),
            ]
        )
    o1, oa = res[("ours float32", 1)], res[("ours float32", NCPU)]
    i1, ia = res[("ours int8, rescore x8", 1)], res[("ours int8, rescore x8", NCPU)]
    nm = res[("numpy: matmul + top-k", 1)]
    notes = [
        f"{label}: ours float32 / faiss, 1 thread "
        f"{ratio(res[('faiss IndexFlatIP', 1)].wall, o1.wall).fmt('.2f', 'x')}; "
        f"{NCPU} threads {ratio(res[('faiss IndexFlatIP', NCPU)].wall, oa.wall).fmt('.2f', 'x')}; "
        f"ours float32 / numpy (matmul + top-k), 1 thread {ratio(nm.wall, o1.wall).fmt('.2f', 'x')}; "
        f"int8 x8 / ours float32, 1 thread {ratio(o1.wall, i1.wall).fmt('.2f', 'x')}, "
        f"{NCPU} threads {ratio(oa.wall, ia.wall).fmt('.2f', 'x')}; "
        f"top-k share of numpy's time (1 thread) "
        f"{ratio(res[('numpy: top-k only', 1)].wall, nm.wall).fmt('.2f')}; "
        f"float64 truth took {truth_s:.1f} s"
    ]
    return rows, notes


def part_exact(args: argparse.Namespace) -> None:
    import faiss
    from threadpoolctl import threadpool_info

    d, nq = 384, 64
    blas = [
        f"{i['internal_api']} {i.get('version')} ({i.get('architecture')})"
        for i in threadpool_info()
        if i["user_api"] == "blas"
    ]
    rows: list[list[str]] = []
    notes: list[str] = []
    sizes = [int(s) for s in args.sizes.split(",") if s]
    if sizes:
        rng = np.random.default_rng(0)
        big = unit(rng.standard_normal((max(sizes), d), dtype=np.float32))
        queries = unit(rng.standard_normal((nq, d), dtype=np.float32))
        for n in sizes:
            r, no = exact_one(f"random {n:,}", big[:n], queries, args.rounds)
            rows += r
            notes += no
        del big
        gc.collect()
    for n in [int(s) for s in args.clustered_sizes.split(",") if s]:
        rng = np.random.default_rng(2)
        allx = tight_clusters(rng, n + nq, d, args.exact_centers, args.exact_spread)
        r, no = exact_one(f"clustered {n:,}", allx[:n], allx[n:], args.rounds)
        rows += r
        notes += no
        del allx
        gc.collect()

    text = "\n".join(
        [
            "### Exact search: 384-d unit vectors, batches of 64 queries, top-10",
            "",
            f"Machine: {machine_note()}. BLAS: {'; '.join(blas)}. faiss {faiss.__version__}, "
            f"numpy {np.__version__}.",
            "",
            "Data: `random` = i.i.d. Gaussian vectors normalised (seed 0); `clustered` = a "
            f"Gaussian mixture of {args.exact_centers} tight clusters (random unit centres, "
            f"typical distance {args.exact_spread} from the centre, renormalised; seed 2), the "
            "64 queries drawn from the same mixture. Recall@10 is against a float64 ground "
            "truth (numpy float64 matmul over the same float32 data; ties by lower id), so "
            "float32 rounding counts against every method alike.",
            "",
            f"QPS = queries per second. {method_note(args.rounds)} Each thread setting is its "
            "own block of rounds (faiss via omp_set_num_threads, numpy via threadpoolctl). "
            "`numpy: matmul only` is `Q @ X.T`; `numpy: top-k only` is argpartition + sort of "
            "a precomputed score matrix; the two add up to `numpy: matmul + top-k`. Ratios "
            "are per-round speed ratios (>1x: the row is faster), median (min-max). Build = "
            "add time in seconds, median (min-max) over the same interleaved rounds "
            "(float16/int8 also keep the float32 rows).",
            "",
            table(
                [
                    "data",
                    "method",
                    "build s",
                    "QPS 1 thread",
                    f"QPS {NCPU} threads",
                    "recall@10 vs float64",
                    "speed vs faiss (1 thr)",
                    "speed vs ours f32 (1 thr)",
                ],
                rows,
            ),
            "",
            "Ratios: " + "; ".join(notes) + ".",
            "",
            "Command: `env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python bench/dense.py "
            f"--part exact --sizes {args.sizes} --clustered-sizes {args.clustered_sizes} "
            f"--exact-centers {args.exact_centers} --exact-spread {args.exact_spread} "
            f"--rounds {args.rounds}`",
        ]
    )
    write_block("exact", text)


# --------------------------------------------------------------------- hnsw


def clustered(rng, n, d, n_centers, spread):
    centers = rng.standard_normal((n_centers, d), dtype=np.float32)
    labels = rng.integers(0, n_centers, n)
    x = centers[labels] + spread * rng.standard_normal((n, d), dtype=np.float32)
    return unit(x.astype(np.float32))


def part_hnsw(args):
    import hnswlib

    from rowvoi.dense import FlatIndex, HNSWIndex

    n, d, nq, k = args.hnsw_n, 384, 1000, 10
    M, efc, ef, seed = 16, 200, 64, 100
    rng = np.random.default_rng(1)
    allx = clustered(rng, n + nq, d, n_centers=args.centers, spread=args.spread)
    x, queries = allx[:n], allx[n:]
    exact = FlatIndex(d, metric="cosine")
    exact.add(x)
    truth = exact_truth_f64(x, queries, k)  # unit vectors: cosine = inner product
    rows = []

    def build_direct() -> Any:
        g = hnswlib.Index(space="cosine", dim=d)
        g.init_index(max_elements=n, M=M, ef_construction=efc, random_seed=seed)
        g.add_items(x, np.arange(n), num_threads=NCPU)
        return g

    def build_ours() -> HNSWIndex:
        ix = HNSWIndex(
            d,
            metric="cosine",
            M=M,
            ef_construction=efc,
            ef=ef,
            seed=seed,
            max_elements=n,
            n_threads=NCPU,
        )
        ix.add(x)
        return ix

    built = interleaved(
        {"hnswlib direct": build_direct, "rowvoi HNSWIndex": build_ours},
        args.build_rounds,
        warmup=0,
    )
    g, ours = built["hnswlib direct"].result, built["rowvoi HNSWIndex"].result
    direct_build = spread(built["hnswlib direct"].wall)
    ours_build = spread(built["rowvoi HNSWIndex"].wall)
    build_ratio = ratio(built["rowvoi HNSWIndex"].wall, built["hnswlib direct"].wall)
    del built

    def direct(threads: int, ef_q: int = ef) -> np.ndarray:
        g.set_ef(ef_q)
        return g.knn_query(queries, k=k, num_threads=threads)[0].astype(np.int64)

    names = [
        "hnswlib direct",
        "rowvoi HNSWIndex",
        "rowvoi HNSWIndex, exact_rescore=96",
        "rowvoi HNSWIndex, exact_rescore=128",
        "hnswlib direct, ef=128",
    ]
    res: dict[tuple[str, int], Samples] = {}
    for threads in (1, NCPU):
        t = threads
        cases = {
            names[0]: lambda t=t: direct(t),
            names[1]: lambda t=t: ours.search(queries, k, n_threads=t).ids,
            names[2]: lambda t=t: ours.search(queries, k, n_threads=t, exact_rescore=96).ids,
            names[3]: lambda t=t: ours.search(queries, k, n_threads=t, exact_rescore=128).ids,
            names[4]: lambda t=t: direct(t, 128),
        }
        if threads == NCPU:
            cases["rowvoi FlatIndex (exact)"] = lambda: exact.search(queries, k, n_threads=0).ids
        for name, smp in interleaved(cases, args.rounds).items():
            res[(name, threads)] = smp
    builds = {"hnswlib direct": direct_build, "rowvoi HNSWIndex": ours_build}
    for name in names:
        s1, sa = res[(name, 1)], res[(name, NCPU)]
        b = builds.get(name)
        rows.append(
            [
                name,
                b.fmt(".1f") if b else "",
                s1.wall_s().rate(nq).fmt(",.0f"),
                sa.wall_s().rate(nq).fmt(",.0f"),
                f"{recall(s1.result, truth):.4f}",
            ]
        )
    se = res[("rowvoi FlatIndex (exact)", NCPU)]
    rows.append(
        [
            "rowvoi FlatIndex (exact)",
            "",
            "",
            se.wall_s().rate(nq).fmt(",.0f"),
            f"{recall(se.result, truth):.4f}",
        ]
    )
    dr = recall(res[("hnswlib direct", 1)].result, truth)
    orr = recall(res[("rowvoi HNSWIndex", 1)].result, truth)
    q1 = ratio(res[("hnswlib direct", 1)].wall, res[("rowvoi HNSWIndex", 1)].wall)
    qa = ratio(res[("hnswlib direct", NCPU)].wall, res[("rowvoi HNSWIndex", NCPU)].wall)
    text = "\n".join(
        [
            f"### HNSW: {n:,} clustered 384-d unit vectors ({args.centers} centers, spread "
            f"{args.spread}), {nq} queries, top-10",
            "",
            f"Machine: {machine_note()}. hnswlib {getattr(hnswlib, '__version__', '0.8.0')}, "
            f"built with HNSWLIB_NO_NATIVE={os.environ.get('HNSWLIB_NO_NATIVE', '(unset)')} at install.",
            f"M={M}, ef_construction={efc}, seed {seed}, ef={ef}; both builds on {NCPU} threads "
            f"({args.build_rounds} interleaved build rounds, median (min-max)). Recall@10 against a float64 ground truth. "
            f"QPS: {method_note(args.rounds)}",
            "",
            table(["method", "build s", "QPS 1 thread", f"QPS {NCPU} threads", "recall@10"], rows),
            "",
            f"Ours vs direct: recall {orr - dr:+.4f}; speed (per-round ratio) "
            f"{q1.fmt('.3f', 'x')} (1 thread), {qa.fmt('.3f', 'x')} ({NCPU} threads); build "
            f"{build_ratio.fmt('.3f', 'x')} the time (ours also fills the exact twin).",
            "",
            f"Command: `python bench/dense.py --part hnsw --hnsw-n {n} --centers {args.centers} "
            f"--spread {args.spread} --rounds {args.rounds}`",
        ]
    )
    write_block("hnsw", text)


# -------------------------------------------------------------------- embed


def cranfield_texts():
    raw = (CRANFIELD / "cran.all.1400").read_text(errors="replace")
    docs = re.split(r"^\.I ", raw, flags=re.MULTILINE)[1:]
    titles, abstracts = [], []
    for doc in docs:
        fields = dict(
            re.findall(
                r"^\.([TAWB])\n(.*?)(?=^\.[TAWBI] |^\.[TAWB]\n|\Z)",
                doc,
                flags=re.DOTALL | re.MULTILINE,
            )
        )
        title = " ".join(fields.get("T", "").split())
        body = " ".join(fields.get("W", "").split())
        if title:
            titles.append(title)
        words = body.split()
        if len(words) >= 150:
            abstracts.append(" ".join(words[:150]))
    qraw = (CRANFIELD / "cran.qry").read_text(errors="replace")
    queries = [
        " ".join(q.split())
        for q in re.split(r"^\.I .*\n\.W\n", qraw, flags=re.MULTILINE)
        if q.strip()
    ]
    return titles + queries, abstracts


def sentence_transformers_model(fp32_model: Path, tokenizer_json: Path, work: Path):
    """The sentence-transformers peer on the same fp32 weights (torch, CPU,
    mean pooling, normalised): ``(model, "sentence-transformers X, torch Y")``.
    Raises whatever the import or the conversion raises, for the caller to
    report."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import sentence_transformers
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer import modules as models

    bert_dir = onnx_to_bert_dir(fp32_model, tokenizer_json, work)
    model = SentenceTransformer(
        modules=[
            models.Transformer(str(bert_dir), max_seq_length=256),
            models.Pooling(384, pooling_mode="mean"),
            models.Normalize(),
        ],
        device="cpu",
    )
    return model, (
        f"sentence-transformers {sentence_transformers.__version__}, torch {torch.__version__}"
    )


def onnx_to_bert_dir(fp32_model: Path, tokenizer_json: Path, out: Path) -> Path:
    """Write a transformers BERT directory with the weights of an ONNX export
    of all-MiniLM-L6-v2 (MatMul weights mapped through the bias they feed)."""
    import onnx
    import torch
    from onnx import numpy_helper
    from transformers import BertConfig, BertModel, BertTokenizerFast

    m = onnx.load(str(fp32_model))
    inits = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    consumers = {}
    for node in m.graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    state = {}
    for name, arr in inits.items():
        if name.startswith("inner.") and not name.endswith("position_ids"):
            state[name[len("inner.") :]] = torch.from_numpy(arr.copy())
    for node in m.graph.node:
        if node.op_type != "MatMul" or node.input[1] not in inits:
            continue
        adds = [c for c in consumers.get(node.output[0], []) if c.op_type == "Add"]
        bias = [i for a in adds for i in a.input if i.endswith(".bias") and i in inits]
        if len(bias) != 1:
            raise RuntimeError(f"cannot map MatMul {node.name}")
        key = bias[0][len("inner.") : -len(".bias")] + ".weight"
        state[key] = torch.from_numpy(inits[node.input[1]].T.copy())
    cfg = BertConfig(
        vocab_size=30522,
        hidden_size=384,
        num_hidden_layers=6,
        num_attention_heads=12,
        intermediate_size=1536,
        max_position_embeddings=512,
        hidden_act="gelu",
        layer_norm_eps=1e-12,
    )
    model = BertModel(cfg, add_pooling_layer=False)
    missing, unexpected = model.load_state_dict(state, strict=False)
    missing = [k for k in missing if "position_ids" not in k]
    if missing or unexpected:
        raise RuntimeError(f"weights do not fit: missing {missing}, unexpected {unexpected}")
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tok = BertTokenizerFast(
        tokenizer_file=str(tokenizer_json), do_lower_case=True, model_max_length=256
    )
    tok.save_pretrained(out)
    return out


class OrtMiniLM:
    """The independent onnxruntime peer: an ``InferenceSession`` of its own on
    the fp32 MiniLM model, tokenised with the ``tokenizers`` library
    (truncation at 256 tokens, texts sorted by length and padded per batch of
    32), mean pooling over the attention mask and L2 normalisation -- all
    written here, none of it rowvoi's embedder code."""

    def __init__(self, model: Path, tokenizer_json: Path, threads: int) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.tok = Tokenizer.from_file(str(tokenizer_json))
        self.tok.no_padding()
        self.tok.enable_truncation(max_length=256)
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.sess = ort.InferenceSession(str(model), so, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.sess.get_inputs()}

    def embed(self, texts: list[str]) -> np.ndarray:
        enc = [e.ids for e in self.tok.encode_batch(texts)]
        order = sorted(range(len(enc)), key=lambda i: len(enc[i]))
        out = np.empty((len(texts), 384), dtype=np.float32)
        for start in range(0, len(order), 32):
            rows = order[start : start + 32]
            width = max(len(enc[i]) for i in rows)
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for r, i in enumerate(rows):
                ids[r, : len(enc[i])] = enc[i]
                mask[r, : len(enc[i])] = 1
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self.inputs:
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = self.sess.run(None, feeds)[0]
            m = mask[:, :, None].astype(np.float32)
            v = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
            out[rows] = v / np.linalg.norm(v, axis=1, keepdims=True)
        return out


def ort_fp32_model(source: Path, out: Path) -> Path:
    """The fp32 model, folded by onnxruntime itself: the shipped file stores
    int8 weights with a Cast and a Mul by their scale; onnxruntime's basic
    graph optimisation folds those constants and writes the result."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    so.optimized_model_filepath = str(out)
    ort.InferenceSession(str(source), so, providers=["CPUExecutionProvider"])
    return out


class StPeer:
    """The sentence-transformers child (``bench/_embed_peer_st.py``) in the
    interpreter ``python``; ``time(part, threads)`` returns its own timing."""

    def __init__(self, python: str, fp32: Path, tok: Path, work: Path, texts: Path) -> None:
        script = Path(__file__).resolve().parent / "_embed_peer_st.py"
        self.p = subprocess.Popen(
            [python, str(script), str(fp32), str(tok), str(work), str(texts)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        hello = self._read()
        if "error" in hello:
            raise RuntimeError(hello["error"])
        self.note = str(hello["note"])

    def _read(self) -> dict[str, Any]:
        assert self.p.stdout is not None
        line = self.p.stdout.readline()
        if not line:
            raise RuntimeError(f"sentence-transformers child exited ({self.p.wait()})")
        return dict(json.loads(line))

    def _ask(self, cmd: str) -> dict[str, Any]:
        assert self.p.stdin is not None
        self.p.stdin.write(cmd + "\n")
        self.p.stdin.flush()
        return self._read()

    def time(self, part: str, threads: int) -> SelfTimed:
        return SelfTimed(float(self._ask(f"time {part} {threads}")["seconds"]), float("nan"))

    def vectors(self, part: str, path: Path) -> np.ndarray:
        self._ask(f"vectors {part} {path}")
        return np.load(path)

    def close(self) -> None:
        assert self.p.stdin is not None
        self.p.stdin.close()
        self.p.wait(timeout=60)


def part_embed(args: argparse.Namespace) -> None:
    import onnxruntime

    from rowvoi.embed import MiniLMEmbedder, locate_minilm

    short, passages = cranfield_texts()
    short = short[: args.n_short]
    passages = passages[: args.n_passages]
    model, tok = locate_minilm()
    work = Path(tempfile.mkdtemp(prefix="rowvoi-bench-"))
    fp32 = ort_fp32_model(model, work / "fp32.onnx")
    ntok_short = np.mean([len(e.ids) for e in _tokenizer(tok).encode_batch(short)])
    ntok_pass = np.mean([len(e.ids) for e in _tokenizer(tok).encode_batch(passages)])
    texts = {"short": short, "passages": passages}
    REF = "onnxruntime fp32 (independent session)"
    ST = "sentence-transformers fp32 (torch)"
    encoders: dict[tuple[str, int], Any] = {}
    for threads in (1, NCPU):
        encoders[("rowvoi MiniLM int8 (default)", threads)] = MiniLMEmbedder(threads=threads).embed
        encoders[("rowvoi MiniLM, shipped file", threads)] = MiniLMEmbedder(
            quantize=False, threads=threads
        ).embed
        encoders[(REF, threads)] = OrtMiniLM(fp32, tok, threads).embed
    vecs = {key: (enc(short), enc(passages)) for key, enc in encoders.items()}  # warm-up too
    st: StPeer | None = None
    st_note = ""
    if args.st_python:
        (work / "texts.json").write_text(json.dumps(texts))
        try:
            st = StPeer(args.st_python, fp32, tok, work, work / "texts.json")
            st_note = st.note + ", fp32, batch 32, in its own process"
            v = (st.vectors("short", work / "s.npy"), st.vectors("passages", work / "p.npy"))
            for threads in (1, NCPU):
                vecs[(ST, threads)] = v
        except (RuntimeError, OSError) as exc:
            st_note = f"sentence-transformers unavailable: {exc}"
            st = None
    else:
        st_note = "sentence-transformers not run (no --st-python)"
    ref_s, ref_p = vecs[(REF, 1)]
    cos = {key: ((vs * ref_s).sum(1), (vp * ref_p).sum(1)) for key, (vs, vp) in vecs.items()}
    names = ["rowvoi MiniLM int8 (default)", "rowvoi MiniLM, shipped file", REF]
    if st is not None:
        names.append(ST)
    base = ST if st is not None else REF
    res: dict[tuple[str, str, int], Samples] = {}
    for threads in (1, NCPU):
        for part in ("short", "passages"):
            cases: dict[str, Any] = {}
            for name in names:
                if name == ST:
                    assert st is not None
                    cases[name] = lambda part=part, threads=threads: st.time(part, threads)
                else:
                    enc, data = encoders[(name, threads)], texts[part]
                    cases[name] = lambda enc=enc, data=data: enc(data)
            for name, smp in interleaved(cases, args.rounds, warmup=0).items():
                res[(name, part, threads)] = smp
    if st is not None:
        st.close()
    rows = []
    for name in names:
        for threads in (1, NCPU):
            s, p = res[(name, "short", threads)], res[(name, "passages", threads)]
            bs, bp = res[(base, "short", threads)], res[(base, "passages", threads)]
            cs, cp = cos[(name, threads)]
            rows.append(
                [
                    name,
                    threads,
                    s.wall_s().rate(len(short)).fmt(",.0f"),
                    p.wall_s().rate(len(passages)).fmt(",.1f"),
                    ratio(bs.wall, s.wall).fmt(".2f", "x"),
                    ratio(bp.wall, p.wall).fmt(".2f", "x"),
                    f"{cs.mean():.4f} / {cs.min():.4f}",
                    f"{cp.mean():.4f} / {cp.min():.4f}",
                ]
            )
    text = "\n".join(
        [
            "### Embedder throughput: all-MiniLM-L6-v2, texts per second",
            "",
            f"Machine: {machine_note()}. onnxruntime {onnxruntime.__version__}. {st_note}.",
            f"Short: {len(short)} Cranfield titles and queries (mean {ntok_short:.1f} tokens); "
            f"passages: {len(passages)} Cranfield abstracts cut to 150 words (mean "
            f"{ntok_pass:.1f} tokens). The fp32 model is the shipped file with its int8 "
            "weights folded to float32 by onnxruntime's own constant folding. "
            f"`{REF}` is written in the benchmark: its own InferenceSession on that file, "
            "tokenisation by the `tokenizers` library, mean pooling and normalisation "
            "(none of rowvoi's embedder code). Cosine agreement (mean / min) is against it. "
            "sentence-transformers cannot download its weights here, so its model is rebuilt "
            "in torch from the same fp32 file (see the script's docstring): it runs the same "
            f"network in fp32. Texts per second: {method_note(args.rounds)} Each part and "
            "thread count is its own block of rounds; ratios are per-round speed ratios "
            f"against {base} (>1x: faster).",
            "",
            table(
                [
                    "embedder",
                    "threads",
                    "short /s",
                    "passages /s",
                    f"short vs {base}",
                    f"passages vs {base}",
                    "cos short",
                    "cos passages",
                ],
                rows,
            ),
            "",
            f"Command: `python bench/dense.py --part embed --n-short {args.n_short} "
            f"--n-passages {args.n_passages} --rounds {args.rounds} --st-python "
            "<venv with sentence-transformers>/bin/python`",
        ]
    )
    write_block("embed", text)


def _tokenizer(path):
    from tokenizers import Tokenizer

    t = Tokenizer.from_file(str(path))
    t.no_padding()
    t.enable_truncation(max_length=256)
    return t


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--part", choices=["exact", "hnsw", "embed"], required=True)
    ap.add_argument("--rounds", type=int, default=5, help="interleaved timing rounds")
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--hnsw-n", type=int, default=100000)
    ap.add_argument("--build-rounds", type=int, default=3, help="interleaved HNSW build rounds")
    ap.add_argument("--centers", type=int, default=100)
    ap.add_argument("--spread", type=float, default=1.0)
    ap.add_argument("--clustered-sizes", default="1000000")
    ap.add_argument("--exact-centers", type=int, default=1000)
    ap.add_argument("--exact-spread", type=float, default=0.1)
    ap.add_argument(
        "--st-python",
        default=None,
        help="interpreter of a venv with torch and sentence-transformers (embed part)",
    )
    ap.add_argument("--n-short", type=int, default=800)
    ap.add_argument("--n-passages", type=int, default=80)
    args = ap.parse_args(argv)
    {"exact": part_exact, "hnsw": part_hnsw, "embed": part_embed}[args.part](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
