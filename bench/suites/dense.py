#!/usr/bin/env python3
"""Benchmark rowvoi's dense retrieval against its peers, side by side.

Parts (``--part``, each well under 10 minutes on 2 cores):

``exact``
    Exact top-10 search, batches of 64 queries, over random 384-d unit
    vectors (100,000 and 1,000,000, seed 0) and over a clustered set (a
    Gaussian mixture of tight clusters, queries from the same mixture):
    queries per second single-threaded and on all cores for
    ``rowvoi.index.flat.FlatIndex`` (float32; float16 and int8 storage with exact
    re-scoring of a ``k * 8`` pool, and int8 with ``k * 1``), numpy (BLAS
    ``Q @ X.T`` and argpartition + sort, also timed apart) and faiss
    ``IndexFlatIP``; recall@10 of each against a float64 ground truth
    (numpy float64 matmul).
``hnsw``
    100,000 clustered 384-d unit vectors, 1,000 queries: build time, QPS and
    recall@10 (against float64 truth) of ``rowvoi.index.hnsw.HNSWIndex`` and of
    hnswlib called directly with the same parameters (M=16,
    ef_construction=200, seed 100, ef=64), and ``exact_rescore`` pools.
``embed``
    Texts per second on short sentences (Cranfield titles and queries) and
    ~200-token passages (Cranfield abstracts cut to 150 words) for
    ``MiniLMEmbedder`` (per-token int8: the default, rowvoi's own encoder with
    its attention in bfloat16, the previous default with it in float32, and
    the same recipe on onnxruntime; and the shipped file), an independent
    onnxruntime peer on the fp32 model (its own session, tokenisation and
    pooling, written here; the fp32 file is the shipped one with its weights
    folded by onnxruntime) and sentence-transformers fp32 on torch CPU
    (weights rebuilt from that fp32 file, see below; in a child process run by
    the interpreter given with ``--st-python``), with cosine agreement to the
    onnxruntime peer.

Timing (``bench/_common/timing.py``, shared by every benchmark here): one warm-up
call each, then ``--rounds`` interleaved rounds -- every system once per
round, order rotating -- and the median with the min-max over rounds, never
the best round; ratios are medians of per-round ratios.  Load from other jobs
on this shared 2-core machine then hits all systems alike.

How to run (from the repository root, package installed in this
interpreter; numpy's OpenBLAS reads OPENBLAS_CORETYPE, which this
workplace sets for old OpenBLAS builds and which slows a current one, so
unset it for the numpy figures)::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python -m bench run dense --part exact
    python -m bench run dense --part hnsw
    python -m bench run dense --part embed --st-python ST_VENV/bin/python

where ``ST_VENV`` is a venv with ``torch``, ``sentence-transformers`` and
``onnx`` (``python -m venv ST_VENV && ST_VENV/bin/pip install torch
sentence-transformers onnx``).  Each part rewrites its own block of
``bench/results/dense.md``; the sentence-transformers child is
``bench/peers/embed_st.py``.

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
import json
import os
import re
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._common.cranfield import find_data
from .._common.results import ROOT, Run, scratch_dir, update_blocks, version_of, versions
from .._common.timing import Samples, SelfTimed, Spread, interleaved, method_note, ratio, spread

ST_PEER = ROOT / "bench" / "peers" / "embed_st.py"
#: The results file's blocks, in the order a new file shows them.
PARTS = ("exact", "hnsw", "embed")
HEAD = (
    "# Dense retrieval (exact vector search, HNSW, embedders)\n\n"
    "Produced by `python -m bench run dense --part PART` (bench/suites/dense.py); see its "
    "docstring for what each figure measures. Each part rewrites its own block, which names "
    "the run that made it.\n"
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


def write_block(run: Run, name: str, text: str) -> None:
    """Replace (or add) the block of one part in the results file."""
    update_blocks(run.out, "dense", {name: text}, head=HEAD, order=PARTS)
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

    from rowvoi.index.flat import FlatIndex

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


def part_exact(args: argparse.Namespace, run: Run) -> None:
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
            run.provenance(
                versions(
                    "threadpoolctl",
                    peers={"numpy": np.__version__, "faiss": version_of("faiss-cpu")},
                )
            ),
            "",
            f"BLAS: {'; '.join(blas)}. OPENBLAS_CORETYPE: "
            f"{os.environ.get('OPENBLAS_CORETYPE', 'unset')} (unset it for the numpy figures).",
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
        ]
    )
    write_block(run, "exact", text)


# --------------------------------------------------------------------- hnsw


def clustered(rng, n, d, n_centers, spread):
    centers = rng.standard_normal((n_centers, d), dtype=np.float32)
    labels = rng.integers(0, n_centers, n)
    x = centers[labels] + spread * rng.standard_normal((n, d), dtype=np.float32)
    return unit(x.astype(np.float32))


def part_hnsw(args: argparse.Namespace, run: Run) -> None:
    import hnswlib

    from rowvoi.index.flat import FlatIndex
    from rowvoi.index.hnsw import HNSWIndex

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
            run.provenance(versions("numpy", peers={"hnswlib": version_of("hnswlib")})),
            "",
            f"hnswlib built with HNSWLIB_NO_NATIVE={os.environ.get('HNSWLIB_NO_NATIVE', '(unset)')} at install.",
            f"M={M}, ef_construction={efc}, seed {seed}, ef={ef}; both builds on {NCPU} threads "
            f"({args.build_rounds} interleaved build rounds, median (min-max)). Recall@10 against a float64 ground truth. "
            f"QPS: {method_note(args.rounds)}",
            "",
            table(["method", "build s", "QPS 1 thread", f"QPS {NCPU} threads", "recall@10"], rows),
            "",
            f"Ours vs direct: recall {orr - dr:+.4f}; speed (per-round ratio) "
            f"{q1.fmt('.3f', 'x')} (1 thread), {qa.fmt('.3f', 'x')} ({NCPU} threads); build "
            f"{build_ratio.fmt('.3f', 'x')} the time (ours also fills the exact twin).",
        ]
    )
    write_block(run, "hnsw", text)


# -------------------------------------------------------------------- embed


def cranfield_texts():
    data = Path(find_data())
    raw = (data / "cran.all.1400").read_text(errors="replace")
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
    qraw = (data / "cran.qry").read_text(errors="replace")
    queries = [
        " ".join(q.split())
        for q in re.split(r"^\.I .*\n\.W\n", qraw, flags=re.MULTILINE)
        if q.strip()
    ]
    return titles + queries, abstracts


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
    """The sentence-transformers child (``bench/peers/embed_st.py``) in the
    interpreter ``python``; ``time(part, threads)`` returns its own timing."""

    def __init__(self, python: str, fp32: Path, tok: Path, work: Path, texts: Path) -> None:
        self.p = subprocess.Popen(
            [python, str(ST_PEER), str(fp32), str(tok), str(work), str(texts)],
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


def part_embed(args: argparse.Namespace, run: Run) -> None:

    from rowvoi.index.embed import MiniLMEmbedder, locate_minilm

    short, passages = cranfield_texts()
    short = short[: args.n_short]
    passages = passages[: args.n_passages]
    model, tok = locate_minilm()
    work = Path(scratch_dir("rowvoi-bench-embed-"))  # removed at exit
    fp32 = ort_fp32_model(model, work / "fp32.onnx")
    ntok_short = np.mean([len(e.ids) for e in _tokenizer(tok).encode_batch(short)])
    ntok_pass = np.mean([len(e.ids) for e in _tokenizer(tok).encode_batch(passages)])
    texts = {"short": short, "passages": passages}
    REF = "onnxruntime fp32 (independent session)"
    ST = "sentence-transformers fp32 (torch)"
    encoders: dict[tuple[str, int], Any] = {}
    V5 = "rowvoi MiniLM int8, rowscale-v5 on onnxruntime"
    V1 = "rowvoi MiniLM int8, native-v1 (float32 attention)"
    for threads in (1, NCPU):
        default = MiniLMEmbedder(threads=threads)
        encoders[("rowvoi MiniLM int8 (default)", threads)] = default.embed
        encoders[(V1, threads)] = MiniLMEmbedder(threads=threads, recipe="native-v1").embed
        encoders[(V5, threads)] = MiniLMEmbedder(threads=threads, recipe="rowscale-v5").embed
        encoders[("rowvoi MiniLM, shipped file", threads)] = MiniLMEmbedder(
            quantize=False, threads=threads
        ).embed
        encoders[(REF, threads)] = OrtMiniLM(fp32, tok, threads).embed
    vecs = {key: (enc(short), enc(passages)) for key, enc in encoders.items()}  # warm-up too
    st: StPeer | None = None
    st_note = ""
    st_versions = None
    if args.st_python:
        (work / "texts.json").write_text(json.dumps(texts))
        try:
            st = StPeer(args.st_python, fp32, tok, work, work / "texts.json")
            st_versions = st.note
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
    names = ["rowvoi MiniLM int8 (default)", V1, V5, "rowvoi MiniLM, shipped file", REF]
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
            run.provenance(
                versions(
                    "numpy",
                    "tokenizers",
                    peers={
                        "onnxruntime": version_of("onnxruntime"),
                        "sentence-transformers": st_versions,
                    },
                )
            ),
            "",
            f"{st_note}.",
            f"Short: {len(short)} Cranfield titles and queries (mean {ntok_short:.1f} tokens); "
            f"passages: {len(passages)} Cranfield abstracts cut to 150 words (mean "
            f"{ntok_pass:.1f} tokens). The fp32 model is the shipped file with its int8 "
            "weights folded to float32 by onnxruntime's own constant folding. "
            f"`{REF}` is written in the benchmark: its own InferenceSession on that file, "
            "tokenisation by the `tokenizers` library, mean pooling and normalisation "
            "(none of rowvoi's embedder code). Cosine agreement (mean / min) is against it. "
            f"The default int8 embedder runs recipe `{default.recipe}` on rowvoi's own "
            f"encoder (`include/rowvoi/encoder.h`, kernel `{default._native.kernel}`): "
            f"`native-v1` with the attention in bfloat16; `{V1}` is the previous default; "
            f"`{V5}` is native-v1's recipe on onnxruntime. "
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
        ]
    )
    write_block(run, "embed", text)


def _tokenizer(path):
    from tokenizers import Tokenizer

    t = Tokenizer.from_file(str(path))
    t.no_padding()
    t.enable_truncation(max_length=256)
    return t


def main(argv: Sequence[str], run: Run) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m bench run dense", description=__doc__.split("\n")[0]
    )
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
    {"exact": part_exact, "hnsw": part_hnsw, "embed": part_embed}[args.part](args, run)
    return 0
