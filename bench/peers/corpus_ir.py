"""The ``ir`` side of the ``corpus`` and ``corpus_paired`` suites:
run in ``ir``'s own virtual environment (``ir`` 0.1.61 from PyPI), driven as
a subprocess.

    IR_PY=/path/to/venv/bin/python
    $IR_PY bench/peers/corpus_ir.py CONFIG.json > RESULT.json
    $IR_PY bench/peers/corpus_ir.py CONFIG.json --serve

CONFIG holds the documents, the ten edits, the queries, the embedder
(``"light"``: ir's own hashing embedder, timed through a wrapper; or
``"table"``: vectors looked up by text in an ``.npz`` written by the
parent, so both systems get identical vectors at no cost) and a scratch
directory. The script builds, rebuilds with nothing changed, rebuilds after
the edits, rebuilds back to the documents and opens the corpus afresh.

With ``"folder"`` in CONFIG it only builds that folder with MiniLM
(:func:`folder_build`, the ``corpus`` suite's ``--folder`` part).

One-shot (no ``--serve``): it then runs every query in each mode and prints
timings, rankings and the corpus's files and bytes as one JSON object.

``--serve``: it prints one JSON line ``{"ready": true, ...}`` (with the build
timings), then answers each JSON line read on stdin, ``{"mode": "dense",
"queries": [i0, i1, ...]}`` (positions in CONFIG's queries), with one JSON
line ``{"latency": [seconds...], "ranked": [[artifact ids]...]}``, in the
order asked, until stdin closes. The garbage collector runs before each
block, outside the timings.

A query's latency is its own time: the time of ``ir.search`` minus the time
spent in the embedder. Anything ir prints goes to stderr. It imports nothing
from rowvoi.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import sys
import time

MODES = {
    "lexical": {"mode": "lexical"},
    "dense": {"mode": "dense"},
    "rrf": {"mode": "hybrid", "fusion": "rrf"},
    "blend": {"mode": "hybrid", "fusion": "blend"},
}


def folder_build(cfg: dict, reply) -> None:
    """The ``folder`` mode: one first build of a folder of text files with
    MiniLM through sentence-transformers (torch, float32, mean pooling,
    normalised, 256 tokens -- ir's own MiniLM path), on the float32 weights
    of the ONNX file rowvoi embeds with, built before the clock starts.
    ``WholeText``, the files named in CONFIG's ``keys`` (rowvoi's list of
    the same folder). Replies ``{"build": {"total", "embed", "texts"},
    "n_seen", "maxrss_mb"}``."""
    import importlib.util
    import resource
    from pathlib import Path

    import ir
    from ir import CorpusSource, WholeText

    # the sentence-transformers peer beside this file, loaded by its path
    # (this driver runs by path in ir's venv, which holds
    # sentence-transformers and torch for this mode)
    spec = importlib.util.spec_from_file_location(
        "embed_st", os.path.join(os.path.dirname(os.path.abspath(__file__)), "embed_st.py")
    )
    assert spec is not None and spec.loader is not None
    embed_st = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(embed_st)
    sentence_transformers_model = embed_st.sentence_transformers_model

    model, note = sentence_transformers_model(
        Path(cfg["fp32"]), Path(cfg["tokenizer"]), Path(cfg["scratch"]) / "bert"
    )
    spent = {"embed": 0.0, "texts": 0}

    def embedder(texts, **_):
        texts = list(texts)
        t0 = time.perf_counter()
        out = model.encode(texts, batch_size=32, convert_to_numpy=True)
        spent["embed"] += time.perf_counter() - t0
        spent["texts"] += len(texts)
        return out

    embedder._ir_id = "st__minilm-l6-v2-fp32"
    keys = set(cfg["keys"])
    src = CorpusSource.from_files(
        cfg["folder"],
        name=cfg["name"],
        pattern=cfg["pattern"],
        exclude=lambda k: k not in keys,
        strategy=WholeText(),
    )
    gc.collect()
    t0 = time.perf_counter()
    ir.build(src, embedder=embedder)
    total = time.perf_counter() - t0
    from importlib.metadata import version

    out = {
        "ir_version": version("ir"),
        "embedder": note,
        "build": {"total": total, "embed": spent["embed"], "texts": spent["texts"]},
        "n_seen": sum(1 for _ in src.scope),
        "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
    reply.write(json.dumps(out) + "\n")


def main() -> None:
    serve = "--serve" in sys.argv[2:]
    reply = sys.stdout
    cfg = json.load(open(sys.argv[1]))
    if serve or cfg.get("folder"):
        sys.stdout = sys.stderr  # the reply owns the real stdout
    os.environ["IR_DATA_DIR"] = os.path.join(cfg["scratch"], "data")
    os.environ["IR_CONFIG_DIR"] = os.path.join(cfg["scratch"], "config")
    os.environ["IR_CACHE_DIR"] = os.path.join(cfg["scratch"], "cache")
    if cfg.get("folder"):
        folder_build(cfg, reply)
        return
    import ir
    import numpy as np
    from ir import CorpusSource, WholeText

    docs = {d["id"]: d["text"] for d in map(json.loads, open(cfg["docs"]))}
    edits = {d["id"]: d["text"] for d in map(json.loads, open(cfg["edits"]))}
    queries = cfg["queries"]
    spent = {"embed": 0.0, "texts": 0}

    if cfg["embedder"] == "table":
        data = np.load(cfg["table"])
        table = dict(zip(data["keys"].tolist(), data["vectors"]))

        def base(texts, **_):
            return np.stack([table[hashlib.sha256(t.encode()).hexdigest()] for t in texts])

        ident = cfg["table_id"]
    else:
        from ir.embed import make_embedder

        base, ident = make_embedder("light")

    def embedder(texts, **kw):
        texts = list(texts)
        t0 = time.perf_counter()
        out = base(texts, **kw)
        spent["embed"] += time.perf_counter() - t0
        spent["texts"] += len(texts)
        return out

    embedder._ir_id = ident
    name = cfg["name"]

    def source(mapping):
        return CorpusSource.from_mapping(mapping, name=name, strategy=WholeText())

    def timed_build(mapping):
        spent["embed"], spent["texts"] = 0.0, 0
        t0 = time.perf_counter()
        corpus = ir.build(source(mapping), embedder=embedder)
        total = time.perf_counter() - t0
        return corpus, {"total": total, "embed": spent["embed"], "texts": spent["texts"]}

    def timed_search(corpus, q, kw, k=10):
        spent["embed"] = 0.0
        t0 = time.perf_counter()
        hits = ir.search(corpus, q, k=k, **kw)
        return time.perf_counter() - t0 - spent["embed"], [h.artifact_id for h in hits]

    from importlib.metadata import version

    out: dict = {"ir_version": version("ir")}
    corpus, out["build"] = timed_build(docs)
    corpus, out["noop"] = timed_build(docs)
    edited = dict(docs)
    edited.update(edits)
    corpus, out["edit10"] = timed_build(edited)
    corpus, out["restore"] = timed_build(docs)  # back to the judged documents
    corpus = ir.open_corpus(name, embedder=embedder)
    if serve:
        out["ready"] = True
        reply.write(json.dumps(out) + "\n")
        reply.flush()
        for line in sys.stdin:
            if not line.strip():
                continue
            cmd = json.loads(line)
            kw = MODES[cmd["mode"]]
            gc.collect()
            lat, ranked = [], []
            for i in cmd["queries"]:
                sec, ids = timed_search(corpus, queries[i], kw)
                lat.append(sec)
                ranked.append(ids)
            reply.write(json.dumps({"latency": lat, "ranked": ranked}) + "\n")
            reply.flush()
        return
    runs = {}
    for label, kw in MODES.items():
        lat, ranked = [], []
        for q in queries:
            sec, ids = timed_search(corpus, q, kw)
            lat.append(sec)
            ranked.append(ids)
        runs[label] = {"latency": lat, "ranked": ranked}
    big = cfg.get("big_k")
    for label, kw in MODES.items() if big else ():  # the same queries at k = big_k
        runs[f"{label}@{big}"] = {
            "latency": [timed_search(corpus, q, kw, big)[0] for q in queries]
        }
    out["runs"] = runs
    root = os.path.join(os.environ["IR_DATA_DIR"], "corpora", name)
    files = [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs]
    out["files"] = len(files)
    out["bytes"] = sum(os.path.getsize(f) for f in files)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
