"""The ``ir`` side of the ``calibration`` suite: run in ``ir``'s own virtual
environment (``ir`` 0.1.61 from PyPI), driven as a subprocess.

    IR_PY=/path/to/venv/bin/python
    $IR_PY bench/peers/calibration_ir.py CONFIG.json > RESULT.json

CONFIG names a JSONL file of documents, the queries, an ``.npz`` table of
vectors by text hash (computed by the parent with rowvoi's MiniLM, so both
systems search identical vectors) and a scratch directory. The script
builds the corpus and prints, for each search configuration, the score of
each query's top hit -- the number ``ir``'s ``min_score`` floor compares.
It imports nothing from rowvoi.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys


def main() -> None:
    cfg = json.load(open(sys.argv[1]))
    os.environ["IR_DATA_DIR"] = os.path.join(cfg["scratch"], "data")
    os.environ["IR_CONFIG_DIR"] = os.path.join(cfg["scratch"], "config")
    os.environ["IR_CACHE_DIR"] = os.path.join(cfg["scratch"], "cache")
    import ir
    import numpy as np
    from ir import CorpusSource, WholeText

    docs = {d["id"]: d["text"] for d in map(json.loads, open(cfg["docs"]))}
    data = np.load(cfg["table"])
    table = dict(zip(data["keys"].tolist(), data["vectors"]))

    def embedder(texts, **_):
        return np.stack([table[hashlib.sha256(t.encode()).hexdigest()] for t in texts])

    embedder._ir_id = cfg["table_id"]
    src = CorpusSource.from_mapping(docs, name="cran", strategy=WholeText())
    ir.build(src, embedder=embedder)
    corpus = ir.open_corpus("cran", embedder=embedder)
    from importlib.metadata import version

    out = {"ir_version": version("ir"), "tops": {}}
    for label, kw in (
        ("dense", {"mode": "dense"}),
        ("lexical", {"mode": "lexical"}),
        ("rrf", {"mode": "hybrid", "fusion": "rrf"}),
        ("blend", {"mode": "hybrid", "fusion": "blend"}),
    ):
        tops = []
        for q in cfg["queries"]:
            hits = ir.search(corpus, q, k=10, **kw)
            tops.append(float(hits[0].score) if hits else None)
        out["tops"][label] = tops
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
