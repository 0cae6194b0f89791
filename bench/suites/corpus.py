"""Corpus benchmarks: rowvoi.corpus beside ``ir`` 0.1.61 on Cranfield, and
rowvoi alone at scale.

    python -m bench run corpus --ir-python IR_VENV/bin/python \\
        [--rounds 3] [--scale-docs 1000000] [--minilm-docs 100000] \\
        [--folder DIR [--folder-whole]] \\
        [--skip-cranfield] \\
        [--markdown bench/results/corpus.md] [--json bench/results/corpus.json]

Part 1 -- side by side on Cranfield (1,400 documents, title + abstract as
one surface, 225 queries), in interleaved rounds (the order of the two
systems alternates per round; medians over rounds, with min-max).  Both
systems run the same way: **each round starts a fresh process per system**
-- rowvoi's ``python -m bench.suites.corpus --worker CONFIG`` in this
interpreter, ``ir``'s ``bench/peers/corpus_ir.py CONFIG`` in its own venv --
which builds, rebuilds, opens the corpus afresh and answers every query in
every mode, then exits; neither system is warm from an earlier round, and
each times itself, so process start and imports are outside both timings.
(``corpus_paired`` measures the other way: both warm in long-lived
processes.)  Measured per round:

* first build, rebuild with nothing changed, rebuild after 10 edited
  documents -- each as total time and *own* time (total minus the time
  spent in the embedder);
* query latency p50/p95 per mode, own time (the query's embedding is
  measured apart and subtracted; it is reported on its own for MiniLM);
  then the same queries at k = 100 (:data:`BIG_K`), every mode, in the same
  process, and per round the ratio of the k = 100 p50 to the k = 10 one;
* nDCG@10 per mode (gain = 5 - grade, -1 rows dropped, queries by
  position);
* files and bytes on disk.

Two embedders, the same on both sides: each system's hashing ("light")
embedder at 512 dimensions, and MiniLM through a callable that looks each
text's vector up in a table computed once with rowvoi's MiniLM (so both
index identical vectors and the embedder costs ~nothing). ``ir`` runs in
its own virtual environment as a subprocess (``bench/peers/corpus_ir.py``).

Folder part (``--folder DIR``) -- a first build of a folder of real text
files with MiniLM on both sides: the files rowvoi's ``from_files`` takes
(``.md .markdown .txt .rst``), one surface per file (``WholeText``), the
same weights (rowvoi: its int8 model of the shipped ONNX file, its default
recipe; ir: sentence-transformers on that file's float32 weights -- ir's
own MiniLM path -- in ir's own venv, which needs ``sentence-transformers``, ``torch``
and ``onnx`` (to read those weights) installed beside ir for this part),
each round each system
in a fresh process (order rotating), the embedder made before the clock
starts. Reported: end-to-end build seconds, of which embedding, texts
embedded and the process's peak RSS; ``--folder-whole`` adds rowvoi with
every text tokenised whole (the build before the head cut) as a third
system.

Part 2 -- rowvoi alone at scale: a synthetic Zipfian corpus
(``bench/_common/synth_corpus.py``) with the hashing embedder -- full build, no-op
rebuild, 1,000 edits -- and hybrid query latency on 100,000 short
Cranfield-derived documents embedded with MiniLM (query embedding
included).

The results file is a set of sections, one per part run (Cranfield with
the hashing embedders, Cranfield with MiniLM, each scale figure), each
between ``<!-- corpus:NAME:begin -->`` and ``<!-- corpus:NAME:end -->`` and
opening with the command, date and load of the run that produced it. A run
replaces the sections it measured and keeps the others (their own
provenance lines say when and how they were made), so a Cranfield-only run
(``--scale-docs 0 --minilm-docs 0``, minutes) does not discard the scale
figures (hours). The JSON file is merged the same way, by section key.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence

import numpy as np

from rowvoi.index.embed import _QUANT_RECIPE

from .._common.cranfield import corpus_data as cranfield, ndcg_at, sentence_pairs
from .._common.minilm import minilm_table, table_embedder
from .._common.results import ROOT, Run, update_blocks, versions, write
from .._common.timing import median, spread

IR_PEER = ROOT / "bench" / "peers" / "corpus_ir.py"
#: The large k whose query latency is measured beside k = 10 (same queries,
#: same process, right after the k = 10 pass of every mode).
BIG_K = 100
MODES = (
    ("lexical", {"mode": "lexical"}),
    ("dense", {"mode": "dense"}),
    ("rrf", {"mode": "hybrid", "fusion": "rrf"}),
    ("blend", {"mode": "hybrid", "fusion": "blend"}),
)


def ndcg10(ranked, rel):
    """nDCG@10 of one ranking (gain 5 - grade)."""
    return ndcg_at(ranked, rel, 10)


# ------------------------------------------------------------------ ours


def build_ours(docs, edits, embedder_kind, table, scratch):
    """rowvoi's side of a round up to its queries: build, no-op rebuild,
    rebuild after the edits, rebuild back to ``docs``, then open the corpus
    afresh. Returns ``(corpus, {step: timings}, store)``."""
    from rowvoi.corpus import CorpusStore, WholeText, build, from_mapping, open_corpus

    emb = table_embedder(*table) if embedder_kind == "table" else "hashing:512"
    store = CorpusStore(os.path.join(scratch, "cran"), name="cran")

    def timed(mapping):
        c = build(
            from_mapping(mapping, name="cran", strategy=WholeText(), embedder=emb),
            store=store,
            progress=False,
        )
        r = c.last_build
        return c, {"total": r.seconds, "embed": r.embed_seconds, "texts": r.texts_embedded}

    steps = {}
    _, steps["build"] = timed(docs)
    _, steps["noop"] = timed(docs)
    _, steps["edit10"] = timed({**docs, **edits})
    _, steps["restore"] = timed(docs)
    return open_corpus("cran", store=store, embedder=emb), steps, store


def search_ours(c, embedder, query, kw, k=10):
    """One timed rowvoi query: ``(own seconds, artifact ids)``. The query's
    embedding by ``embedder`` (``c.embedder``, fetched once; dense and
    hybrid modes) is timed apart and subtracted."""
    from rowvoi.corpus import search

    t0 = time.perf_counter()
    if kw["mode"] == "lexical":
        hits = search(c, query, k=k, **kw)
    else:
        t1 = time.perf_counter()
        vec = embedder.embed([query])[0]
        t0 += time.perf_counter() - t1  # query embedding apart
        hits = search(c, query, k=k, query_vector=vec, **kw)
    return time.perf_counter() - t0, [h.artifact_id for h in hits]


def worker(cfg_path: str) -> dict:
    """rowvoi's side of one round, in the fresh process the round started
    (``python -m bench.suites.corpus --worker CONFIG``): the ir driver's
    config, the same steps, the same JSON."""
    with open(cfg_path) as f:
        cfg = json.load(f)
    if cfg.get("folder"):
        return folder_ours(cfg)
    with open(cfg["docs"]) as f:
        docs = {d["id"]: d["text"] for d in map(json.loads, f)}
    with open(cfg["edits"]) as f:
        edits = {d["id"]: d["text"] for d in map(json.loads, f)}
    table = (cfg["table"], cfg["table_id"]) if cfg["table"] else None
    return run_ours_here(docs, edits, cfg["queries"], cfg["embedder"], table, cfg["scratch"])


def run_ours(docs, edits, queries, embedder_kind, table, scratch):
    """rowvoi's side of one round in a fresh process of this interpreter."""
    cfg = ir_config(docs, edits, queries, embedder_kind, table, scratch)
    p = subprocess.run(
        [sys.executable, "-m", "bench.suites.corpus", "--worker", cfg],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    if p.returncode != 0:
        raise RuntimeError(f"rowvoi worker failed:\n{p.stderr[-3000:]}")
    return json.loads(p.stdout)


def run_ours_here(docs, edits, queries, embedder_kind, table, scratch):
    """rowvoi's side of one round in this process: build, rebuilds, every
    query in every mode, files and bytes."""
    c, out, store = build_ours(docs, edits, embedder_kind, table, scratch)
    embedder = c.embedder
    runs = {}
    for label, kw in MODES:
        lat, ranked = [], []
        for q in queries:
            sec, ids = search_ours(c, embedder, q, kw)
            lat.append(sec)
            ranked.append(ids)
        runs[label] = {"latency": lat, "ranked": ranked}
    for label, kw in MODES:  # the same queries at k = BIG_K, after every mode at 10
        lat = [search_ours(c, embedder, q, kw, BIG_K)[0] for q in queries]
        runs[f"{label}@{BIG_K}"] = {"latency": lat}
    out["runs"] = runs
    files = store.files()
    out["files"] = len(files)
    out["bytes"] = store.disk_bytes()
    return out


def ir_config(docs, edits, queries, embedder_kind, table, scratch):
    """Write a round's inputs (documents, edits, config) under a new
    directory in ``scratch``; returns the config's path (read by the ir
    driver and by rowvoi's worker alike)."""
    d = tempfile.mkdtemp(dir=scratch)
    with open(os.path.join(d, "docs.jsonl"), "w") as f:
        for k, t in docs.items():
            f.write(json.dumps({"id": k, "text": t}) + "\n")
    with open(os.path.join(d, "edits.jsonl"), "w") as f:
        for k, t in edits.items():
            f.write(json.dumps({"id": k, "text": t}) + "\n")
    cfg = {
        "docs": os.path.join(d, "docs.jsonl"),
        "edits": os.path.join(d, "edits.jsonl"),
        "queries": queries,
        "embedder": embedder_kind,
        "scratch": d,
        "name": "cran",
        "table": table[0] if table else None,
        "table_id": table[1] if table else None,
        "big_k": BIG_K,
    }
    with open(os.path.join(d, "cfg.json"), "w") as f:
        json.dump(cfg, f)
    return os.path.join(d, "cfg.json")


def ir_env():
    """The environment of the ir driver: ours without PYTHONPATH."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def run_ir(ir_python, docs, edits, queries, embedder_kind, table, scratch):
    cfg = ir_config(docs, edits, queries, embedder_kind, table, scratch)
    p = subprocess.run(
        [ir_python, str(IR_PEER), cfg],
        capture_output=True,
        text=True,
        env=ir_env(),
    )
    if p.returncode != 0:
        raise RuntimeError(f"ir driver failed:\n{p.stderr[-3000:]}")
    return json.loads(p.stdout)


# ---------------------------------------------------------------- folder


def folder_ours(cfg: dict) -> dict:
    """rowvoi's first build of a folder with MiniLM (int8, the default), in
    the round's fresh process: the embedder is made before the clock
    starts; ``"whole"`` in the config tokenises every text whole (as before
    the head cut, for the before/after figure). Returns the build's total
    and embedding seconds, texts embedded, files seen and the process's
    peak resident memory."""
    import gc
    import resource

    from rowvoi.corpus import CorpusStore, WholeText, build, from_files
    from rowvoi.index.embed import MiniLMEmbedder

    emb = MiniLMEmbedder()
    if cfg.get("whole"):
        emb._head_chars = 0
    src = from_files(
        cfg["folder"], name=cfg["name"], pattern=cfg["pattern"], strategy=WholeText(), embedder=emb
    )
    store = CorpusStore(os.path.join(cfg["scratch"], "c"), name=cfg["name"])
    gc.collect()
    t0 = time.perf_counter()
    c = build(src, store=store, progress=False)
    total = time.perf_counter() - t0
    r = c.last_build
    return {
        "build": {"total": total, "embed": r.embed_seconds, "texts": r.texts_embedded},
        "n_seen": r.n_seen,
        "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def folder_part(args, scratch) -> dict:
    """Both systems' first build of ``args.folder`` with MiniLM, each round
    in a fresh process per system, order alternating."""
    from rowvoi.corpus import from_files
    from rowvoi.corpus.indexing.sources import DFLT_FILE_PATTERN
    from rowvoi.index.embed import derived_model, locate_minilm

    if not args.ir_python:
        raise SystemExit(
            "--folder needs --ir-python, a venv with ir 0.1.61, sentence-transformers, "
            "torch (ir's MiniLM path) and onnx (to read the model's weights)"
        )
    root = os.path.abspath(args.folder)
    keys = sorted(from_files(root).scope.keys_list())
    sizes = [os.path.getsize(os.path.join(root, k)) for k in keys]
    source, tok = locate_minilm()
    base = {
        "folder": root,
        "keys": keys,
        "pattern": DFLT_FILE_PATTERN,
        "name": "folder",
        "fp32": str(derived_model(source, "fp32")),
        "tokenizer": str(tok),
    }
    who_all = ["ours", "ir"] + (["whole"] if args.folder_whole else [])
    rounds: dict[str, list] = {w: [] for w in who_all}
    for i in range(args.rounds):
        order = who_all[i % len(who_all) :] + who_all[: i % len(who_all)]
        for who in order:
            d = tempfile.mkdtemp(dir=scratch)
            cfg = {**base, "scratch": d, "whole": who == "whole"}
            path = os.path.join(d, "cfg.json")
            with open(path, "w") as f:
                json.dump(cfg, f)
            if who == "ir":
                cmd, env, cwd = [args.ir_python, str(IR_PEER), path], ir_env(), None
            else:
                cmd = [sys.executable, "-m", "bench.suites.corpus", "--worker", path]
                env, cwd = None, ROOT
            p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd)
            shutil.rmtree(d, ignore_errors=True)
            if p.returncode != 0:
                raise RuntimeError(f"{who} folder build failed:\n{p.stderr[-3000:]}")
            r = json.loads(p.stdout.strip().splitlines()[-1])
            if r["n_seen"] != len(keys):
                raise RuntimeError(f"{who} saw {r['n_seen']} files, not {len(keys)}")
            rounds[who].append(r)
            print(f"folder: round {i + 1} {who} {r['build']['total']:.1f} s", file=sys.stderr)
    out = {
        "folder": root,
        "files": len(keys),
        "bytes": sum(sizes),
        "largest": max(sizes),
        "over_100k": sum(s > 100_000 for s in sizes),
        "ir_embedder": rounds["ir"][0].get("embedder"),
        "ir_version": rounds["ir"][0].get("ir_version"),
        "rounds": args.rounds,
    }
    for who, rs in rounds.items():
        tot = [r["build"]["total"] for r in rs]
        out[who] = {
            "total_s": median(tot),
            "total_spread": span(tot),
            "embed_s": median([r["build"]["embed"] for r in rs]),
            "texts": rs[0]["build"]["texts"],
            "maxrss_mb": median([r["maxrss_mb"] for r in rs]),
            "all_total_s": tot,
        }
    ratios = [
        b["build"]["total"] / a["build"]["total"] for a, b in zip(rounds["ours"], rounds["ir"])
    ]
    out["ir_over_ours"] = median(ratios)
    out["ir_over_ours_spread"] = span(ratios)
    return out


def folder_md(f: dict) -> list[str]:
    """The folder section's lines."""
    names = {
        "ours": "rowvoi (MiniLM int8, its own encoder)",
        "whole": "rowvoi, every text tokenised whole (the build before the head cut)",
        "ir": f"ir 0.1.61 ({f['ir_embedder']}, float32)",
    }
    lines = [
        "### A folder of real files with MiniLM: first build, rowvoi beside ir",
        "",
        f"`{f['folder']}`: {f['files']:,} files (rowvoi's default pattern, "
        f"`.md .markdown .txt .rst`), {f['bytes']:,} bytes, the largest {f['largest']:,} "
        f"bytes, {f['over_100k']} over 100 kB. One surface per file (`WholeText` on both "
        "sides), MiniLM at 256 tokens on the same weights (rowvoi: its int8 model of the "
        f"shipped ONNX file, recipe `{_QUANT_RECIPE}`; ir: sentence-transformers on that "
        "file's float32 weights, "
        "batch 32, through an embedder callable -- ir's own MiniLM path), default threads "
        "on both. Each round runs each system in a fresh process of its own, order "
        f"rotating; the embedder is made before the clock starts; medians over "
        f"{f['rounds']} rounds.",
        "",
        "| system | build s (end to end) | of which embedding s | texts embedded | "
        "peak RSS MB | rounds, s |",
        "|---|---|---|---|---|---|",
    ]
    for who in ("ours", "whole", "ir"):
        if who not in f:
            continue
        r = f[who]
        lines.append(
            f"| {names[who]} | {r['total_s']:.1f} | {r['embed_s']:.1f} | {r['texts']} | "
            f"{r['maxrss_mb']:.0f} | {r['total_spread']} |"
        )
    lines += [
        "",
        f"ir / rowvoi, build time per round: median {f['ir_over_ours']:.2f}x "
        f"(rounds {f['ir_over_ours_spread']}).",
        "",
    ]
    return lines


# ------------------------------------------------------------- reporting


def span(xs):
    s = spread(xs)
    return f"{s.lo:.3g}-{s.hi:.3g}" if s.n > 1 else "-"


def summarize(rounds, qrels):
    """Per system: medians over rounds of build/rebuild times, latencies,
    plus nDCG (identical across rounds) and files/bytes."""
    out = {}
    for sysname in ("ours", "ir"):
        rs = [r[sysname] for r in rounds]
        s = {}
        for step in ("build", "noop", "edit10"):
            own = [r[step]["total"] - r[step]["embed"] for r in rs]
            s[step] = {
                "own": median(own),
                "own_spread": span(own),
                "total": median([r[step]["total"] for r in rs]),
                "texts": rs[0][step]["texts"],
            }
        for label, _ in MODES:
            p50 = [np.percentile(r["runs"][label]["latency"], 50) * 1000 for r in rs]
            p95 = [np.percentile(r["runs"][label]["latency"], 95) * 1000 for r in rs]
            ranked = rs[0]["runs"][label]["ranked"]
            nd = float(np.mean([ndcg10(ranked[q - 1], qrels[q]) for q in range(1, 226)]))
            s[label] = {
                "p50_ms": median(p50),
                "p50_spread": span(p50),
                "p95_ms": median(p95),
                "ndcg10": nd,
            }
            big = [r["runs"].get(f"{label}@{BIG_K}") for r in rs]
            if all(big):
                b50 = [np.percentile(b["latency"], 50) * 1000 for b in big]
                s[label][f"p50_ms_k{BIG_K}"] = median(b50)
                # per round: p50 at BIG_K over p50 at 10, in the same process
                s[label][f"k{BIG_K}_over_k10"] = median([b / a for a, b in zip(p50, b50)])
                s[label][f"k{BIG_K}_over_k10_spread"] = span([b / a for a, b in zip(p50, b50)])
        s["files"], s["bytes"] = rs[0]["files"], rs[0]["bytes"]
        out[sysname] = s
    return out


def table_md(title, summ, note=""):
    o, r = summ["ours"], summ["ir"]
    lines = [
        f"### {title}",
        "",
        note,
        "" if note else None,
        "| measure | rowvoi | ir 0.1.61 | ir / rowvoi |",
        "|---|---|---|---|",
    ]
    lines = [x for x in lines if x is not None]

    def row(name, a, b, fmt="{:.4f}", ratio=True):
        rat = f"{b / a:.1f}x" if ratio and a > 0 else "-"
        lines.append(f"| {name} | {fmt.format(a)} | {fmt.format(b)} | {rat} |")

    for step, name in (
        ("build", "first build, own s"),
        ("noop", "no-op rebuild, own s"),
        ("edit10", "rebuild after 10 edits, own s"),
    ):
        row(name, o[step]["own"], r[step]["own"], "{:.4f}")
    for step, name in (("build", "first build, total s"), ("edit10", "10 edits, total s")):
        row(name, o[step]["total"], r[step]["total"], "{:.3f}")
    for label, _ in MODES:
        row(f"{label} query p50 ms (own)", o[label]["p50_ms"], r[label]["p50_ms"], "{:.2f}")
        row(f"{label} query p95 ms (own)", o[label]["p95_ms"], r[label]["p95_ms"], "{:.2f}")
    kb = f"p50_ms_k{BIG_K}"
    for label, _ in MODES:
        if kb in o[label] and kb in r[label]:
            row(f"{label} query p50 ms at k={BIG_K} (own)", o[label][kb], r[label][kb], "{:.2f}")
    for label, _ in MODES:
        row(f"{label} nDCG@10", o[label]["ndcg10"], r[label]["ndcg10"], "{:.4f}", ratio=False)
    row("files on disk", o["files"], r["files"], "{:d}")
    row("bytes on disk", o["bytes"], r["bytes"], "{:,}")
    lines.append("")
    lines.append(
        "Spread (min-max over rounds) of own time, rowvoi / ir: "
        + "; ".join(
            f"{s} {o[s]['own_spread']} / {r[s]['own_spread']}" for s in ("build", "noop", "edit10")
        )
        + "; query p50 ms: "
        + "; ".join(f"{m} {o[m]['p50_spread']} / {r[m]['p50_spread']}" for m, _ in MODES)
        + "."
    )
    lines.append("")
    kr = f"k{BIG_K}_over_k10"
    if all(kr in o[m] for m, _ in MODES):
        lines.append(
            f"Query p50 at k={BIG_K} over p50 at k=10 (per round, same process; median, "
            "min-max), rowvoi / ir: "
            + "; ".join(
                f"{m} {o[m][kr]:.2f}x ({o[m][kr + '_spread']})"
                + (f" / {r[m][kr]:.2f}x" if kr in r[m] else "")
                for m, _ in MODES
            )
            + "."
        )
        lines.append("")
    return lines


# ----------------------------------------------------------------- scale


def scale_hashing(n_docs, scratch):
    from rowvoi.corpus import CorpusStore, WholeText, build, from_mapping, search

    from .._common.results import CACHE
    from .._common.synth_corpus import load_or_generate

    corpus = load_or_generate(str(CACHE), n_docs=n_docs, n_queries=200)
    docs = {f"s{i}": t for i, t in enumerate(corpus.docs)}
    store = CorpusStore(os.path.join(scratch, "scale"), name="scale")
    out = {"n_docs": n_docs, "embedder": "hashing (384 dimensions)"}

    def timed(mapping, label):
        src = from_mapping(mapping, name="scale", strategy=WholeText(), embedder="hashing")
        c = build(src, store=store, progress=False)
        r = c.last_build
        out[label] = {
            "seconds": r.seconds,
            "embed_seconds": r.embed_seconds,
            "texts_embedded": r.texts_embedded,
            "compacted": r.compacted,
        }
        return c

    timed(docs, "build")
    c = timed(docs, "noop")
    rng = np.random.default_rng(1)
    for i in rng.choice(n_docs, 1000, replace=False).tolist():
        docs[f"s{i}"] = docs[f"s{i}"] + " qedited"
    c = timed(docs, "edit1000")
    lat = []
    for q in corpus.queries[:200]:
        t0 = time.perf_counter()
        search(c, q, k=10, mode="hybrid")
        lat.append(time.perf_counter() - t0)
    out["hybrid_p50_ms"] = float(np.percentile(lat, 50) * 1000)
    out["hybrid_p95_ms"] = float(np.percentile(lat, 95) * 1000)
    t0 = time.perf_counter()
    from rowvoi.corpus import open_corpus

    c2 = open_corpus("scale", store=store)
    search(c2, corpus.queries[0], k=10, mode="hybrid")
    out["cold_open_first_hybrid_s"] = time.perf_counter() - t0
    out["files"] = len(store.files())
    out["bytes"] = store.disk_bytes()
    return out


def scale_minilm(n_docs, scratch):
    """Hybrid latency at n_docs short documents embedded with MiniLM."""
    from rowvoi.corpus import CorpusStore, WholeText, build, from_mapping, search

    docs, _, queries, _ = cranfield()
    _, _, mapping = sentence_pairs(docs, n_docs)
    store = CorpusStore(os.path.join(scratch, "minilm"), name="minilm")
    t0 = time.perf_counter()
    c = build(
        from_mapping(mapping, name="minilm", strategy=WholeText(), embedder="minilm"),
        store=store,
        progress=False,
    )
    build_s = time.perf_counter() - t0
    embed_s = c.last_build.embed_seconds

    def latencies():
        lat, emb_lat = [], []
        search(c, queries[0], k=10, mode="hybrid")  # load the indexes
        for q in queries[:200]:
            t0 = time.perf_counter()
            search(c, q, k=10, mode="hybrid")
            lat.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            c.embedder.embed([q])
            emb_lat.append(time.perf_counter() - t0)
        return (
            float(np.percentile(lat, 50) * 1000),
            float(np.percentile(lat, 95) * 1000),
            float(np.percentile(emb_lat, 50) * 1000),
        )

    flat = latencies()
    out = {
        "n_docs": n_docs,
        "build_s": build_s,
        "embed_s": embed_s,
        "hybrid_p50_ms": flat[0],
        "hybrid_p95_ms": flat[1],
        "query_embed_p50_ms": flat[2],
        "files": len(store.files()),
        "bytes": store.disk_bytes(),
    }
    # the same corpus with an HNSW graph: no text is embedded again
    t0 = time.perf_counter()
    c = build(
        from_mapping(mapping, name="minilm", strategy=WholeText(), embedder="minilm"),
        store=store,
        progress=False,
        hnsw=True,
    )
    out["hnsw_build_s"] = time.perf_counter() - t0
    out["hnsw_texts_embedded"] = c.last_build.texts_embedded
    g = latencies()
    out.update(
        {"hnsw_hybrid_p50_ms": g[0], "hnsw_hybrid_p95_ms": g[1], "hnsw_query_embed_p50_ms": g[2]}
    )
    return out


# ------------------------------------------------------------------ main


def main(argv: Sequence[str], run: Run | None = None) -> int:
    """The suite (``run``: the runner's context), or one ``--worker`` round."""
    ap = argparse.ArgumentParser(
        prog="python -m bench run corpus", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--ir-python", help="python of a venv with ir 0.1.61 (skip ir if absent)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--scale-docs", type=int, default=0, help="synthetic docs (0: skip)")
    ap.add_argument("--minilm-docs", type=int, default=0, help="MiniLM docs (0: skip)")
    ap.add_argument("--skip-cranfield", action="store_true")
    ap.add_argument(
        "--folder", help="a folder of text files: first build with MiniLM, rowvoi beside ir"
    )
    ap.add_argument(
        "--folder-whole",
        action="store_true",
        help="--folder also runs rowvoi with every text tokenised whole (the before figure)",
    )
    ap.add_argument("--markdown", default=str(run.out) if run else None)
    ap.add_argument("--json", default=str(run.path("corpus.json")) if run else None)
    ap.add_argument("--worker", metavar="CONFIG", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        json.dump(worker(args.worker), sys.stdout)
        return 0
    if run is None:
        ap.error("run the suite as: python -m bench run corpus")

    scratch = tempfile.mkdtemp(prefix="rowvoi-bench-corpus-")
    peer = {"ir": None}
    results: dict = {}  # section name -> its figures (with "run")
    sections: dict[str, str] = {}  # section name -> its markdown

    def section(name: str, figures: dict, lines: list[str]) -> None:
        v = versions("numpy", peers=peer)
        meta = {"command": run.command, "machine": run.machine, "date": run.date, "versions": v}
        results[name] = {**figures, "run": meta}
        sections[name] = "\n".join([lines[0], "", run.provenance(v), *lines[1:]])

    try:
        if not args.skip_cranfield:
            docs, edits, queries, qrels = cranfield()
            embedders = [("hashing", None)]
            table = minilm_table(list(docs.values()) + list(edits.values()) + queries)
            embedders.append(("table", table))
            for kind, tab in embedders:
                rounds = []
                for i in range(args.rounds):
                    rnd = {}
                    order = ("ours", "ir") if i % 2 == 0 else ("ir", "ours")
                    for who in order:
                        d = tempfile.mkdtemp(dir=scratch)
                        if who == "ours":
                            rnd["ours"] = run_ours(docs, edits, queries, kind, tab, d)
                        elif args.ir_python:
                            rnd["ir"] = run_ir(args.ir_python, docs, edits, queries, kind, tab, d)
                            peer["ir"] = rnd["ir"].get("ir_version")
                        shutil.rmtree(d, ignore_errors=True)
                    if "ir" not in rnd:
                        rnd["ir"] = rnd["ours"]
                    rounds.append(rnd)
                    print(f"{kind}: round {i + 1} done", file=sys.stderr)
                summ = summarize(rounds, qrels)
                title = (
                    "Cranfield, hashing embedders (512 dimensions; each system's own)"
                    if kind == "hashing"
                    else "Cranfield, MiniLM vectors through a callable (identical on both sides)"
                )
                lines = table_md(
                    title,
                    summ,
                    f"Medians over {args.rounds} interleaved rounds; in each round each system "
                    "ran in a fresh process of its own (built, rebuilt and answered every "
                    "query there)."
                    + (
                        ""
                        if args.ir_python
                        else " ir not run (no --ir-python): its column repeats rowvoi's."
                    ),
                )
                if kind == "table":
                    emb_ms = query_embed_ms(queries)
                    summ["minilm_query_embed_ms"] = emb_ms
                    lines += [
                        f"MiniLM query embedding (rowvoi, one query per call, 225 queries): "
                        f"p50 {emb_ms['p50']:.2f} ms, p95 {emb_ms['p95']:.2f} ms -- add it to "
                        "the dense and hybrid latencies above for a query embedded on the fly "
                        "(the same model serves both systems).",
                        "",
                    ]
                section(f"cranfield_{kind}", summ, lines)
        if args.folder:
            f = folder_part(args, scratch)
            peer["ir"] = f["ir_version"]
            section("folder_minilm", f, folder_md(f))
        if args.scale_docs:
            s = scale_hashing(args.scale_docs, scratch)
            lines = [
                "### At scale: synthetic Zipfian corpus, hashing embedder (rowvoi alone)",
                "",
                f"{s['n_docs']:,} documents (mean 45 words), {s['embedder']}.",
                "",
                "| step | seconds | of which embedding | texts embedded | index files rewritten |",
                "|---|---|---|---|---|",
            ]
            for step, name in (
                ("build", "full build"),
                ("noop", "no-op rebuild"),
                ("edit1000", "1,000 edited documents"),
            ):
                r = s[step]
                lines.append(
                    f"| {name} | {r['seconds']:.2f} | {r['embed_seconds']:.2f} | "
                    f"{r['texts_embedded']:,} | {'yes' if r['compacted'] else 'no'} |"
                )
            lines += [
                "",
                f"No-op rebuild / full build: {s['noop']['seconds'] / s['build']['seconds']:.1%}"
                f" (goal under 5 %). Hybrid query (hashing) p50 {s['hybrid_p50_ms']:.2f} ms, "
                f"p95 {s['hybrid_p95_ms']:.2f} ms; cold open + first hybrid query "
                f"{s['cold_open_first_hybrid_s']:.2f} s. {s['files']} files, "
                f"{s['bytes']:,} bytes.",
                "",
            ]
            section("scale_hashing", s, lines)
        if args.minilm_docs:
            m = scale_minilm(args.minilm_docs, scratch)
            lines = [
                f"### Hybrid latency at {m['n_docs']:,} documents with MiniLM (rowvoi alone)",
                "",
                "Documents: two random sentences of Cranfield abstracts each; "
                "queries: the first 200 Cranfield queries, each embedded by MiniLM inside "
                "the search.",
                "",
                f"Hybrid (RRF) query latency, query embedding included: p50 "
                f"{m['hybrid_p50_ms']:.2f} ms, p95 {m['hybrid_p95_ms']:.2f} ms with the flat "
                f"index (exact: int8 screen, float32 scores); {m['hnsw_hybrid_p50_ms']:.2f} ms, p95 "
                f"{m['hnsw_hybrid_p95_ms']:.2f} ms with the HNSW graph (goal p50 under "
                f"15 ms); MiniLM query embedding alone p50 {m['query_embed_p50_ms']:.2f} / "
                f"{m['hnsw_query_embed_p50_ms']:.2f} ms in the same runs. Build "
                f"{m['build_s']:.0f} s ({m['embed_s']:.0f} s embedding); adding the HNSW "
                f"graph: {m['hnsw_build_s']:.0f} s, {m['hnsw_texts_embedded']} texts "
                f"embedded. {m['files']} files, {m['bytes']:,} bytes (flat).",
                "",
            ]
            section("scale_minilm", m, lines)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    text = update_blocks(args.markdown, "corpus", sections, head=MD_HEAD, order=SECTIONS)
    old = _read_json(args.json)
    write(args.json, json.dumps({**old, **results}, indent=1, default=float))
    print(text)
    return 0


#: The results file's sections, in the order a full run writes them.
SECTIONS = (
    "cranfield_hashing",
    "cranfield_table",
    "folder_minilm",
    "scale_hashing",
    "scale_minilm",
)
MD_HEAD = """# Corpus benchmarks

Produced by `python -m bench run corpus` (bench/suites/corpus.py); each section below
names the run that made it (a run replaces the sections it measured). The peer:
`python -m venv IR_VENV && IR_VENV/bin/pip install ir==0.1.61`, driven as a
subprocess (`bench/peers/corpus_ir.py`). Cranfield rounds: each round runs each
system in a fresh process of its own (rowvoi: `python -m bench.suites.corpus
--worker`), which builds, rebuilds and answers every query, so neither is warm
from an earlier round.
"""


def _read_json(path: str) -> dict:
    """The JSON results of earlier runs at ``path`` (sections by name), or {}."""
    try:
        with open(path, encoding="utf-8") as f:
            old = json.load(f)
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in old.items() if k in SECTIONS} if isinstance(old, dict) else {}


def query_embed_ms(queries):
    from rowvoi.index.embed import MiniLMEmbedder

    emb = MiniLMEmbedder()
    lat = []
    for q in queries:
        t0 = time.perf_counter()
        emb.embed([q])
        lat.append(time.perf_counter() - t0)
    return {
        "p50": float(np.percentile(lat, 50) * 1000),
        "p95": float(np.percentile(lat, 95) * 1000),
    }


if __name__ == "__main__":  # one round's rowvoi side: python -m bench.suites.corpus --worker
    sys.exit(main(sys.argv[1:]))
