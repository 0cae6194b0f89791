#!/usr/bin/env python3
"""Batch invariance, accuracy and speed of the MiniLM int8 embedder.

Writes ``bench/results/embed_invariance.md``.  Four embedders of the same
network (all-MiniLM-L6-v2, mean pooling, L2 normalisation, 256 tokens):

``int8 per-token``
    ``MiniLMEmbedder()`` of this tree: int8 MatMuls with a scale per weight
    column and per token, the 4 largest channels of each LayerNorm output
    in float32 (recipe ``rowscale-v5``; ``rowscale-v3`` before it, all int8).
``int8 per-call (old)``
    The previous recipe (``fused-dynq8pc-v2``, main before this change),
    rebuilt here: onnxruntime's BERT fusions, then ``quantize_dynamic``
    (per-channel int8 weights, one activation scale per tensor and call),
    run through the same ``MiniLMEmbedder`` code.
``fp32 export``
    onnxruntime on the float32 export of the shipped model (its int8
    weights times their scales): the reference for cosine agreement.
``sentence-transformers``
    ``SentenceTransformer`` on torch CPU, fp32, batch 32, with the weights of
    that same fp32 export (they cannot be downloaded here; see
    the ``dense`` suite and ``bench/peers/embed_st.py``).

Parts:

1. Batch invariance on Cranfield: embed the 1,400 documents (title +
   abstract), edit one document (a longer text, so the length-sorted batches
   shift), embed again, and count how many of the *other* 1,399 vectors
   changed (any bit; cosine below 0.99999; below 0.999).  Repeated for
   several edited documents.  Also every document and query embedded alone
   against its vector from the full batch.
2. Cosine to the fp32 export on the documents and the 225 queries, and
   nDCG@10 of dense retrieval with each embedder's vectors.
3. Texts per second: short texts (Cranfield titles and queries) and
   passages (abstracts cut to 150 words), 1 and 2 threads, median of
   interleaved rounds (each round runs every embedder once, so load from
   other jobs on a shared machine hits all alike), with the spread.
4. First-use derivation time of the int8 model (fresh cache, new process).

Run with an interpreter that has rowvoi, torch and sentence-transformers
(the test environment has no torch; a bench venv does)::

    python -m venv bench/.refvenv
    bench/.refvenv/bin/pip install torch==2.13.0 sentence-transformers
    bench/.refvenv/bin/pip install -e .   # rowvoi itself
    bench/.refvenv/bin/python -m bench run embed_invariance
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .._common.cranfield import evaluate, load_cranfield
from .._common.results import Run, scratch_dir, versions, write
from .._common.timing import med, spread
from ..peers.embed_st import sentence_transformers_model
from .dense import cranfield_texts, table

NEW, OLD, FP32, ST = (
    "int8 per-token (new)",
    "int8 per-call (old)",
    "fp32 export (onnxruntime)",
    "sentence-transformers fp32 (torch)",
)


def old_int8_model(src: Path, dest: Path) -> Path:
    """The int8 recipe of main before this change (fused-dynq8pc-v2)."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers.optimizer import optimize_model

    from rowvoi.index.embed import MINILM_DIM, _fold_weights

    with tempfile.TemporaryDirectory() as tmp:
        fp32 = Path(tmp) / "fp32.onnx"
        onnx.save(_fold_weights(src), str(fp32))
        fused = Path(tmp) / "fused.onnx"
        optimize_model(
            str(fp32), model_type="bert", num_heads=12, hidden_size=MINILM_DIM, opt_level=0
        ).save_model_to_file(str(fused))
        quantize_dynamic(str(fused), str(dest), per_channel=True, weight_type=QuantType.QInt8)
    return dest


def model_dir(work: Path, name: str, model: Path, tokenizer: Path) -> Path:
    d = work / name
    d.mkdir()
    os.link(model, d / "model.onnx")
    os.link(tokenizer, d / "tokenizer.json")
    return d


def cos_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a.astype(np.float64) * b).sum(axis=1)


def derivation_seconds(runs: int) -> list[float]:
    """Wall seconds of MiniLMEmbedder() with an empty cache, in a new process
    each time (imports included; the cache removed after)."""
    code = (
        "import time, tempfile; t = time.perf_counter(); "
        "from rowvoi.index.embed import MiniLMEmbedder; "
        "cache = tempfile.TemporaryDirectory(); "
        "MiniLMEmbedder(threads=1, cache_dir=cache.name); "
        "print(time.perf_counter() - t); cache.cleanup()"
    )
    out = []
    for _ in range(runs):
        r = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        out.append(float(r.stdout.strip().splitlines()[-1]))
    return out


def invariance(emb, docs, edits):
    """Per edit: (doc, changed bits, cos < 0.99999, cos < 0.999, min cos) over
    the other documents."""
    ref = emb.embed(docs)
    rows = []
    for e in edits:
        edited = list(docs)
        edited[e] = (
            edited[e] + " This revised abstract adds a further sentence on the "
            "experimental conditions and the accuracy of the measurements."
        )
        v = emb.embed(edited)
        keep = np.arange(len(docs)) != e
        c = cos_rows(v[keep], ref[keep])
        rows.append(
            (
                e,
                int((v[keep] != ref[keep]).any(axis=1).sum()),
                int((c < 0.99999).sum()),
                int((c < 0.999).sum()),
                float(c.min()),
            )
        )
    return ref, rows


def alone_vs_batch(emb, texts, batched):
    alone = np.vstack([emb.embed([t]) for t in texts])
    c = cos_rows(alone, batched)
    return int((alone != batched).any(axis=1).sum()), float(c.min())


def main(argv: Sequence[str], run: Run) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m bench run embed_invariance", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--n-short", type=int, default=800)
    ap.add_argument("--n-passages", type=int, default=80)
    ap.add_argument("--derive-runs", type=int, default=3)
    ap.add_argument("--n-docs", type=int, default=1400, help="documents (a quick run: fewer)")
    args = ap.parse_args(argv)

    from rowvoi.index.embed import MiniLMEmbedder, derived_model, locate_minilm

    cr = load_cranfield()
    docs = [" ".join(t.split()) for t in cr.texts][: args.n_docs]
    queries = [" ".join(q.split()) for q in cr.queries]
    short, passages = cranfield_texts()
    short, passages = short[: args.n_short], passages[: args.n_passages]
    edits = sorted({round(i * (len(docs) - 1) / 4) for i in range(5)})

    derive = derivation_seconds(args.derive_runs)

    src, tok = locate_minilm()
    work = Path(scratch_dir("rowvoi-bench-invariance-"))  # (removed at exit)
    fp32_path = derived_model(src, "fp32", cache=work / "cache")
    fdir = model_dir(work, "fp32", fp32_path, tok)
    odir = model_dir(work, "old", old_int8_model(src, work / "old.onnx"), tok)

    def make(name, threads):
        if name == NEW:
            return MiniLMEmbedder(threads=threads, cache_dir=work / "cache")
        return MiniLMEmbedder(odir if name == OLD else fdir, quantize=False, threads=threads)

    # 1. invariance (default settings: batch 32, all cores)
    inv = {}
    vecs = {}
    for name in (NEW, OLD, FP32):
        emb = make(name, 0)
        ref, rows = invariance(emb, docs, edits)
        vecs[name] = (ref, emb.embed(queries))
        inv[name] = rows
    new = make(NEW, 0)
    alone_docs = alone_vs_batch(new, docs, vecs[NEW][0])
    alone_queries = alone_vs_batch(new, queries, vecs[NEW][1])
    old = make(OLD, 0)
    old_alone_docs = alone_vs_batch(old, docs, vecs[OLD][0])

    # 2. cosine to the fp32 export
    agree = {}
    for name in (NEW, OLD):
        cd = cos_rows(vecs[name][0], vecs[FP32][0])
        cq = cos_rows(vecs[name][1], vecs[FP32][1])
        agree[name] = (cd.mean(), cd.min(), cq.mean(), cq.min())

    # 2b. retrieval quality: exact cosine ranking, nDCG@10 (gain 5 - grade)
    ndcg = {}
    if len(docs) == len(cr.texts):
        num = np.array(cr.doc_numbers)
        for name in (NEW, OLD, FP32):
            d, q = vecs[name]
            order = np.argsort(-(q @ d.T), axis=1, kind="stable")[:, :1000]
            ndcg[name] = evaluate([num[row].tolist() for row in order], cr.qrels)["ndcg@10"]

    # 3. speed
    encoders = {}
    for threads in (1, 2):
        for name in (NEW, OLD, FP32):
            encoders[(name, threads)] = make(name, threads).embed
    st_note = ""
    try:
        st_model, st_note = sentence_transformers_model(fp32_path, tok, work / "bert")
        import torch

        def st_encoder(threads):
            def enc(texts):
                torch.set_num_threads(threads)
                return st_model.encode(
                    texts, batch_size=32, convert_to_numpy=True, normalize_embeddings=True
                )

            return enc

        for threads in (1, 2):
            encoders[(ST, threads)] = st_encoder(threads)
    except ImportError as exc:
        st_note = f"sentence-transformers unavailable ({exc})"
    times = {key: ([], []) for key in encoders}
    for enc in encoders.values():  # warm-up
        enc(short[:64])
        enc(passages[:8])
    for _ in range(args.rounds):
        for key, enc in encoders.items():
            for part, texts in enumerate((short, passages)):
                t = time.perf_counter()
                enc(texts)
                times[key][part].append(len(texts) / (time.perf_counter() - t))

    def rate(key, part):
        return med(times[key][part])

    # ------------------------------------------------------------ report
    out = [
        "# MiniLM int8 embedder: batch invariance, accuracy, speed",
        "",
        *run.header(versions("numpy", "onnxruntime", "torch", "sentence-transformers")),
        f"Load average {os.getloadavg()[0]:.2f} at the end; {st_note}.",
        "",
        "Embedders (see the script's docstring): "
        + "; ".join(
            [
                f"**{NEW}**: `MiniLMEmbedder()` of this tree",
                f"**{OLD}**: main's previous recipe (onnxruntime dynamic quantisation)",
                f"**{FP32}**: the float reference",
                f"**{ST}**: the same fp32 weights in torch",
            ]
        )
        + ".",
        "",
        "## 1. Batch invariance on Cranfield",
        "",
        f"The {len(docs):,} documents (title + abstract) embedded with default settings "
        "(batch 32, all cores); then one document gets a sentence longer and all are "
        f"embedded again. Counted over the other {len(docs) - 1:,} vectors:",
        "",
    ]
    rows = []
    for name in (NEW, OLD, FP32):
        for e, bits, c5, c3, cmin in inv[name]:
            rows.append([name, e + 1, bits, c5, c3, f"{cmin:.6f}"])
    out += [
        table(
            [
                "embedder",
                "edited doc",
                "vectors with any changed bit",
                "cos < 0.99999",
                "cos < 0.999",
                "min cos",
            ],
            rows,
        ),
        "",
    ]
    out += [
        f"Alone vs in the batch ({NEW}): {alone_docs[0]} of {len(docs)} documents and "
        f"{alone_queries[0]} of {len(queries)} queries differ in any bit (min cosine "
        f"{min(alone_docs[1], alone_queries[1]):.7f}). {OLD}: {old_alone_docs[0]} of "
        f"{len(docs)} documents differ, min cosine {old_alone_docs[1]:.4f}.",
        "",
    ]
    out += [
        "## 2. Cosine to the fp32 export",
        "",
        table(
            ["embedder", "documents mean", "documents min", "queries mean", "queries min"],
            [
                [name, f"{a:.4f}", f"{b:.4f}", f"{c:.4f}", f"{d:.4f}"]
                for name, (a, b, c, d) in agree.items()
            ],
        ),
        "",
    ]
    if ndcg:
        out += [
            "Dense retrieval with these vectors (exact cosine ranking of the 1,400 "
            "documents for the 225 queries; nDCG@10 with gain 5 - grade, -1 rows "
            "dropped, as in the `cranfield` suite): "
            + "; ".join(f"{name} {v:.4f}" for name, v in ndcg.items())
            + ".",
            "",
        ]
    ntok = [np.mean([len(x) for x in new._tok.encode_batch(t)]) for t in (short, passages)]
    out += [
        "## 3. Texts per second",
        "",
        f"Short: {len(short)} Cranfield titles and queries (mean {ntok[0]:.1f} tokens); "
        f"passages: {len(passages)} abstracts cut to 150 words (mean {ntok[1]:.1f} tokens). "
        f"Median of {args.rounds} interleaved rounds (min - max in brackets).",
        "",
    ]
    rows = []
    for threads in (1, 2):
        for name in (NEW, OLD, FP32, ST):
            if (name, threads) not in encoders:
                continue
            s, p = rate((name, threads), 0), rate((name, threads), 1)
            rows.append(
                [
                    name,
                    threads,
                    f"{s[0]:,.0f} ({s[1]:,.0f} - {s[2]:,.0f})",
                    f"{p[0]:,.1f} ({p[1]:,.1f} - {p[2]:,.1f})",
                ]
            )
    out += [table(["embedder", "threads", "short texts/s", "passages/s"], rows), ""]
    ratios = []
    for threads in (1, 2):
        for other in (ST, OLD, FP32):
            if (other, threads) not in encoders:
                continue
            cells = []
            for part in (0, 1):
                # per round: both ran within seconds of each other, so the
                # ratio cancels most of the load that other jobs add
                paired = [
                    a / b
                    for a, b in zip(times[(NEW, threads)][part], times[(other, threads)][part])
                ]
                cells.append(f"{spread(paired).fmt('.2f', 'x')}")
            ratios.append([f"{NEW} / {other}", threads, *cells])
    out += [
        "Speed ratios: median over rounds of the ratio within each round (min - max):",
        "",
        table(["ratio", "threads", "short", "passages"], ratios),
        "",
    ]
    out += [
        "## 4. First-use derivation",
        "",
        f"`MiniLMEmbedder()` with an empty cache, in a new process (imports included): "
        f"{', '.join(f'{x:.1f}' for x in derive)} s (median "
        f"{med(derive)[0]:.1f} s). Later constructions find the cached file.",
        "",
    ]
    write(run.out, "\n".join(out))
    print("\n".join(out))
    return 0
