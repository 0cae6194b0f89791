"""The ``ir`` side of ``bench/corpus.py``: run in ``ir``'s own virtual
environment (``ir`` 0.1.61 from PyPI), driven as a subprocess.

    IR_PY=/path/to/venv/bin/python
    $IR_PY bench/_corpus_peer_ir.py CONFIG.json > RESULT.json

CONFIG holds the documents, the ten edits, the queries, the embedder
(``"light"``: ir's own hashing embedder, timed through a wrapper; or
``"table"``: vectors looked up by text in an ``.npz`` written by the
parent, so both systems get identical vectors at no cost) and a scratch
directory. The script builds, rebuilds with nothing changed, rebuilds after
the edits, runs every query in each mode, and prints timings, rankings and
the corpus's files and bytes as one JSON object. It imports nothing from
rowvoi.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time


def main() -> None:
    cfg = json.load(open(sys.argv[1]))
    os.environ["IR_DATA_DIR"] = os.path.join(cfg["scratch"], "data")
    os.environ["IR_CONFIG_DIR"] = os.path.join(cfg["scratch"], "config")
    os.environ["IR_CACHE_DIR"] = os.path.join(cfg["scratch"], "cache")
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

    out: dict = {"ir_version": getattr(ir, "__version__", None)}
    corpus, out["build"] = timed_build(docs)
    corpus, out["noop"] = timed_build(docs)
    edited = dict(docs)
    edited.update(edits)
    corpus, out["edit10"] = timed_build(edited)
    corpus, out["restore"] = timed_build(docs)  # back to the judged documents
    corpus = ir.open_corpus(name, embedder=embedder)
    runs = {}
    for label, kw in (
        ("lexical", {"mode": "lexical"}),
        ("dense", {"mode": "dense"}),
        ("rrf", {"mode": "hybrid", "fusion": "rrf"}),
        ("blend", {"mode": "hybrid", "fusion": "blend"}),
    ):
        lat, ranked = [], []
        for q in queries:
            spent["embed"] = 0.0
            t0 = time.perf_counter()
            hits = ir.search(corpus, q, k=10, **kw)
            lat.append(time.perf_counter() - t0 - spent["embed"])
            ranked.append([h.artifact_id for h in hits])
        runs[label] = {"latency": lat, "ranked": ranked}
    out["runs"] = runs
    root = os.path.join(os.environ["IR_DATA_DIR"], "corpora", name)
    files = [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs]
    out["files"] = len(files)
    out["bytes"] = sum(os.path.getsize(f) for f in files)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
