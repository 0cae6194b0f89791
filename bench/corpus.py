"""Corpus benchmarks: rowvoi.corpus beside ``ir`` 0.1.61 on Cranfield, and
rowvoi alone at scale.

    python bench/corpus.py --ir-python /work/refvenv-ir/bin/python \\
        [--rounds 3] [--scale-docs 1000000] [--minilm-docs 100000] \\
        [--markdown bench/results/corpus.md] [--json bench/results/corpus.json]

Part 1 -- side by side on Cranfield (1,400 documents, title + abstract as
one surface, 225 queries), in interleaved rounds (the order of the two
systems alternates per round; medians over rounds, with min-max):

* first build, rebuild with nothing changed, rebuild after 10 edited
  documents -- each as total time and *own* time (total minus the time
  spent in the embedder);
* query latency p50/p95 per mode, own time (the query's embedding is
  measured apart and subtracted; it is reported on its own for MiniLM);
* nDCG@10 per mode (gain = 5 - grade, -1 rows dropped, queries by
  position);
* files and bytes on disk.

Two embedders, the same on both sides: each system's hashing ("light")
embedder at 512 dimensions, and MiniLM through a callable that looks each
text's vector up in a table computed once with rowvoi's MiniLM (so both
index identical vectors and the embedder costs ~nothing). ``ir`` runs in
its own virtual environment as a subprocess (``bench/_corpus_peer_ir.py``).

Part 2 -- rowvoi alone at scale: a synthetic Zipfian corpus
(``bench/synth_corpus.py``) with the hashing embedder -- full build, no-op
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
import hashlib
import json
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _timing import median, spread, vector_extensions  # noqa: E402

ROOT = os.path.dirname(HERE)
DATA = os.path.join(ROOT, "tests", "data", "cranfield")
CACHE = os.path.join(HERE, ".cache")
MODES = (
    ("lexical", {"mode": "lexical"}),
    ("dense", {"mode": "dense"}),
    ("rrf", {"mode": "hybrid", "fusion": "rrf"}),
    ("blend", {"mode": "hybrid", "fusion": "blend"}),
)


# ------------------------------------------------------------------ data


def cranfield():
    from cranfield import _records

    docs = {
        r["I"]: (r.get("T", "") + " " + r.get("W", "")).strip()
        for r in _records(os.path.join(DATA, "cran.all.1400"))
    }
    queries = [r.get("W", "").strip() for r in _records(os.path.join(DATA, "cran.qry"))]
    qrels: dict[int, dict[str, int]] = {}
    with open(os.path.join(DATA, "cranqrel")) as f:
        for line in f:
            p = line.split()
            if len(p) >= 3 and int(p[2]) != -1:
                qrels.setdefault(int(p[0]), {})[p[1]] = int(p[2])
    keys = sorted(docs, key=int)
    edits = {
        k: docs[k] + " Revised: the flow was re-measured in a larger tunnel."
        for k in keys[100:1100:100]
    }
    return docs, edits, queries, qrels


def ndcg10(ranked, rel):
    gains = {d: 5 - g for d, g in rel.items()}
    dcg = sum(gains.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:10]))
    ideal = sorted(gains.values(), reverse=True)[:10]
    return dcg / sum(g / math.log2(i + 2) for i, g in enumerate(ideal))


def key(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def minilm_table(texts: list[str]) -> tuple[str, str]:
    """(path of an .npz of MiniLM vectors by text hash, embedder id)."""
    from rowvoi.embed import MiniLMEmbedder

    emb = MiniLMEmbedder()
    eid = emb.embedder_id
    path = os.path.join(CACHE, f"cranfield_minilm_{key(eid)[:12]}.npz")
    uniq = sorted(set(texts))
    if os.path.exists(path):
        data = np.load(path)
        if set(data["keys"].tolist()) >= {key(t) for t in uniq}:
            return path, eid
    os.makedirs(CACHE, exist_ok=True)
    vecs = emb.embed(uniq)
    np.savez(path, keys=np.array([key(t) for t in uniq]), vectors=vecs)
    return path, eid


def table_embedder(path: str, eid: str) -> tuple:
    """An embedder ``(callable, id)`` that looks each text's vector up in
    the .npz at ``path`` (:func:`minilm_table`); its id is ``table:<eid>``."""
    data = np.load(path)
    lut = dict(zip(data["keys"].tolist(), data["vectors"]))

    def fn(texts):
        return np.stack([lut[key(t)] for t in texts])

    return fn, "table:" + eid


def cached_table_embedder() -> tuple:
    """:func:`table_embedder` over the MiniLM vectors a run of this bench
    cached (id ``table:ab``); exits when there are none."""
    import glob

    paths = glob.glob(os.path.join(CACHE, "cranfield_minilm_*.npz"))
    if not paths:
        raise SystemExit("no cached MiniLM vectors: run bench/corpus.py once first")
    return table_embedder(paths[0], "ab")


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


def search_ours(c, embedder, query, kw):
    """One timed rowvoi query: ``(own seconds, artifact ids)``. The query's
    embedding by ``embedder`` (``c.embedder``, fetched once; dense and
    hybrid modes) is timed apart and subtracted."""
    from rowvoi.corpus import search

    t0 = time.perf_counter()
    if kw["mode"] == "lexical":
        hits = search(c, query, k=10, **kw)
    else:
        t1 = time.perf_counter()
        vec = embedder.embed([query])[0]
        t0 += time.perf_counter() - t1  # query embedding apart
        hits = search(c, query, k=10, query_vector=vec, **kw)
    return time.perf_counter() - t0, [h.artifact_id for h in hits]


def run_ours(docs, edits, queries, embedder_kind, table, scratch):
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
    out["runs"] = runs
    files = store.files()
    out["files"] = len(files)
    out["bytes"] = store.disk_bytes()
    return out


def ir_config(docs, edits, queries, embedder_kind, table, scratch):
    """Write the ir driver's inputs (documents, edits, config) under a new
    directory in ``scratch``; returns the config's path."""
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
        [ir_python, os.path.join(HERE, "_corpus_peer_ir.py"), cfg],
        capture_output=True,
        text=True,
        env=ir_env(),
    )
    if p.returncode != 0:
        raise RuntimeError(f"ir driver failed:\n{p.stderr[-3000:]}")
    return json.loads(p.stdout)


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
    return lines


# ----------------------------------------------------------------- scale


def scale_hashing(n_docs, scratch):
    from synth_corpus import load_or_generate

    from rowvoi.corpus import CorpusStore, WholeText, build, from_mapping, search

    corpus = load_or_generate(CACHE, n_docs=n_docs, n_queries=200)
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


def cranfield_sentences(docs: dict) -> list[str]:
    """Every sentence of six words or more of the Cranfield texts, in
    document order (repeats kept)."""
    return [
        s.strip()
        for t in docs.values()
        for s in re.split(r"(?<=[.])\s+", t)
        if len(s.split()) >= 6
    ]


def scale_minilm(n_docs, scratch):
    """Hybrid latency at n_docs short documents embedded with MiniLM."""
    from rowvoi.corpus import CorpusStore, WholeText, build, from_mapping, search

    docs, _, queries, _ = cranfield()
    sentences = cranfield_sentences(docs)
    rng = np.random.default_rng(3)
    picks = rng.integers(0, len(sentences), size=(n_docs, 2))
    mapping = {
        f"m{i}": sentences[a] + " " + sentences[b] for i, (a, b) in enumerate(picks.tolist())
    }
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ir-python", help="python of a venv with ir 0.1.61 (skip ir if absent)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--scale-docs", type=int, default=0, help="synthetic docs (0: skip)")
    ap.add_argument("--minilm-docs", type=int, default=0, help="MiniLM docs (0: skip)")
    ap.add_argument("--skip-cranfield", action="store_true")
    ap.add_argument("--markdown", default=os.path.join(HERE, "results", "corpus.md"))
    ap.add_argument("--json", default=os.path.join(HERE, "results", "corpus.json"))
    args = ap.parse_args()

    import rowvoi
    from rowvoi._atomic import atomic_write_bytes

    scratch = tempfile.mkdtemp(prefix="rowvoi-bench-corpus-")
    run = {
        "command": "python bench/corpus.py "
        + " ".join(
            "IR_VENV/bin/python" if a.startswith("/") and "python" in a else a
            for a in sys.argv[1:]
            if not a.startswith("/") or "python" in a
        ),
        "rowvoi": rowvoi.__version__,
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores (shared; {vector_extensions()})",
        "load_average_start": os.getloadavg()[0],
        "date": time.strftime("%Y-%m-%d %H:%M"),
    }
    provenance = (
        f"Produced by `{run['command']}` on a {run['machine']} machine "
        f"(load average {run['load_average_start']:.2f} at start), Python "
        f"{run['python']}, rowvoi {run['rowvoi']}, {run['date']}."
    )
    results: dict = {}  # section name -> its figures (with "run")
    sections: dict[str, list[str]] = {}  # section name -> its markdown lines

    def section(name: str, figures: dict, lines: list[str]) -> None:
        results[name] = {**figures, "run": run}
        sections[name] = [lines[0], "", provenance, *lines[1:]]

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
                lines = table_md(title, summ, f"Medians over {args.rounds} interleaved rounds.")
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
    text = merge_sections(args.markdown, sections)
    os.makedirs(os.path.dirname(os.path.abspath(args.markdown)), exist_ok=True)
    atomic_write_bytes(args.markdown, text.encode())  # (ends with a newline)
    old = _read_json(args.json)
    atomic_write_bytes(args.json, json.dumps({**old, **results}, indent=1, default=float).encode())
    print(text)


#: The results file's sections, in the order a full run writes them.
SECTIONS = ("cranfield_hashing", "cranfield_table", "scale_hashing", "scale_minilm")
MD_HEAD = [
    "# Corpus benchmarks",
    "",
    "Produced by `bench/corpus.py`; each section below names the run that made it "
    "(a run replaces the sections it measured). The peer: `python -m venv IR_VENV && "
    "IR_VENV/bin/pip install ir==0.1.61`, driven as a subprocess "
    "(`bench/_corpus_peer_ir.py`).",
    "",
]


def merge_sections(path: str, new: dict[str, list[str]]) -> str:
    """The results file ``path`` with the sections in ``new`` replaced (or
    added, in :data:`SECTIONS` order); sections of earlier runs are kept. A
    file without section markers (or none) is written afresh."""
    kept: dict[str, list[str]] = {}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            old = f.read().splitlines()
        name = None
        for line in old:
            m = re.fullmatch(r"<!-- corpus:(\w+):(begin|end) -->", line)
            if m and m.group(2) == "begin":
                name, kept[m.group(1)] = m.group(1), []
            elif m:
                name = None
            elif name is not None:
                kept[name].append(line)
    kept.update(new)
    out = list(MD_HEAD)
    for name in [*SECTIONS, *sorted(set(kept) - set(SECTIONS))]:
        if name in kept:
            body = kept[name]
            while body and not body[-1]:
                body = body[:-1]
            out += [f"<!-- corpus:{name}:begin -->", *body, f"<!-- corpus:{name}:end -->", ""]
    return "\n".join(out)


def _read_json(path: str) -> dict:
    """The JSON results of earlier runs at ``path`` (sections by name), or {}."""
    try:
        with open(path, encoding="utf-8") as f:
            old = json.load(f)
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in old.items() if k in SECTIONS} if isinstance(old, dict) else {}


def query_embed_ms(queries):
    from rowvoi.embed import MiniLMEmbedder

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


if __name__ == "__main__":
    main()
