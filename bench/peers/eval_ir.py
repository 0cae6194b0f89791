"""The ``ir`` side of the ``eval`` suite (bench/suites/eval.py): run in ``ir``'s own virtual
environment (``ir`` 0.1.61 from PyPI), driven as a subprocess.

    IR_PY=/path/to/venv/bin/python
    $IR_PY bench/peers/eval_ir.py CONFIG.json > RESULT.json

CONFIG names the documents (JSONL), the cases (JSONL: query, gold), an
``.npz`` of MiniLM vectors keyed by the SHA-256 of each text (computed by
the parent with rowvoi's MiniLM, so both systems see identical vectors), a
scratch directory and the search configurations to score. For each, the
script runs ``ir``'s own ``evaluate_selection`` (default selector) and
``sweep_selector`` (default grid), ``ir.discover`` per case for the
committed ids, and ``ir.select`` over each case's 10 candidates for every
setting of the default grid, plus each side's own top 50 (dense, lexical)
per case, and prints one JSON object. It imports nothing from rowvoi.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time


def main() -> None:
    cfg = json.load(open(sys.argv[1]))
    for var, sub in (
        ("IR_DATA_DIR", "data"),
        ("IR_CONFIG_DIR", "config"),
        ("IR_CACHE_DIR", "cache"),
    ):
        os.environ[var] = os.path.join(cfg["scratch"], sub)
    import ir
    import numpy as np
    from ir import CorpusSource, WholeText
    from ir.eval import (
        DFLT_SWEEP_MAX_K,
        DFLT_SWEEP_REL,
        DiscoveryCase,
        evaluate_selection,
        sweep_selector,
    )
    from ir.select import select

    docs = {d["id"]: d["text"] for d in map(json.loads, open(cfg["docs"]))}
    cases = [
        DiscoveryCase(query=c["query"], gold=tuple(c["gold"]))
        for c in map(json.loads, open(cfg["cases"]))
    ]
    data = np.load(cfg["table"])
    table = dict(zip(data["keys"].tolist(), data["vectors"]))

    def embedder(texts, **_):
        return np.stack([table[hashlib.sha256(t.encode()).hexdigest()] for t in list(texts)])

    embedder._ir_id = cfg["table_id"]
    source = CorpusSource.from_mapping(docs, name="cran", strategy=WholeText())
    ir.build(source, embedder=embedder)
    corpus = ir.open_corpus("cran", embedder=embedder)
    from importlib.metadata import version

    out: dict = {"configs": {}, "ir_version": version("ir")}
    for label, kw in cfg["configs"].items():
        t0 = time.perf_counter()
        rep = evaluate_selection(corpus, cases, **kw)
        sweep = sweep_selector(corpus, cases, **kw)
        best = sweep.best()
        committed = []
        for c in cases:
            res = ir.discover(corpus, c.query, **kw)
            committed.append([r.artifact_id for r in res.results])
        # ir's own selector over ir's own 10 candidates, for every grid setting:
        # the parent scores these with one formula for both systems
        hits = [ir.search(corpus, c.query, k=10, per_artifact=True, **kw) for c in cases]
        grid = {
            f"{mk}/{rl}": [
                [h.artifact_id for h in select(hs, max_k=mk, rel=rl).selected] for hs in hits
            ]
            for mk in DFLT_SWEEP_MAX_K
            for rl in DFLT_SWEEP_REL
        }
        out["configs"][label] = {
            "default": rep.to_dict(),
            "best": {"max_k": best.max_k, "rel": best.rel, **best.report.to_dict()},
            "committed": committed,
            "grid": grid,
            "retrieved": [[h.artifact_id for h in hs] for hs in hits],
            "retrieved_scores": [[float(h.score) for h in hs] for hs in hits],
            "seconds": time.perf_counter() - t0,
        }
    # each side's own top 50 (ir's fetch depth for k=10), for the parent's
    # attribution of the hybrid figures to the two ranked lists
    out["lists"] = {
        mode: [
            [h.artifact_id for h in ir.search(corpus, c.query, k=50, mode=mode, per_artifact=True)]
            for c in cases
        ]
        for mode in ("dense", "lexical")
    }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
