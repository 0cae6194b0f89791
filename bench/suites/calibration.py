"""Calibrated abstention on Cranfield: held-out refusal and answer rates per
search mode, with the score distributions plotted, beside ``ir`` 0.1.61.

    python -m bench run calibration [--ir-python IR_VENV/bin/python] [--out DIR]

In scope: the 225 Cranfield queries. Out of scope: the 50 far queries
(cooking, sport, pets, travel, ...) and the 50 near ones (circuits,
metallurgy, software, civil, chemical, power engineering, ...) in
``tests/data/abstention``. Each query's best floor score over its top 10
hits is computed once per configuration; the floor is chosen on the
even-numbered queries of both sets and measured on the odd-numbered ones,
then the other way round (two folds), so every rate is held out. Figures
are means over the two folds; ``answered`` is the fraction of held-out
in-scope queries at or above the floor, ``refused`` the fraction of
held-out out-of-scope queries below it.

Configurations: dense (cosine), blend (hybrid, ``0.5 cos + 0.5 bm25 /
(bm25 + 8)``), rrf (hybrid RRF, floored on each hit's evidence -- its blend
score), rrf-raw (the raw RRF score of the top hit, shown to say why it
cannot be floored) and lexical (BM25); with MiniLM (vectors computed once
and shared with ``ir`` through a lookup table, so both systems search
identical vectors) and with rowvoi's hashing embedder (which matches words
and character n-grams, not meaning).

``ir``: each query's top-hit score from ``ir.search`` in the same modes
(what its ``min_score`` floor compares), over the same vectors, with the
same floor choice and folds -- so the columns differ only in the score
being floored. Requires ``--ir-python`` (``ir`` 0.1.61 in its own
environment); without it the ``ir`` columns are left out.

Writes ``calibration.md`` and ``calibration_<config>_<set>.png`` (score
distributions with the floor calibrated on all queries) to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from collections.abc import Sequence

from .._common.cranfield import corpus_data as cranfield
from .._common.minilm import key, minilm_table
from .._common.results import ROOT, Run, scratch_dir, versions, write

ABST = os.path.join(ROOT, "tests", "data", "abstention")
IR_PEER = ROOT / "bench" / "peers" / "calibration_ir.py"
CONFIGS = (
    ("dense", "dense", "rrf"),
    ("blend", "hybrid", "blend"),
    ("rrf", "hybrid", "rrf"),
    ("lexical", "lexical", "rrf"),
)
PLOTTED = ("dense", "blend", "rrf")


def held_out(ins, outs):
    """Mean held-out (answered, refused) over the two folds, and the floors."""
    from rowvoi.corpus.retrieval.calibration import abstention_rates, best_floor

    answered, refused, floors = [], [], []
    for a, b in ((0, 1), (1, 0)):
        floor = best_floor(ins[a::2], outs[a::2])[0]
        r = abstention_rates(ins[b::2], outs[b::2], floor)
        answered.append(r["sensitivity"])
        refused.append(r["specificity"])
        floors.append(floor)
    return sum(answered) / 2, sum(refused) / 2, floors, answered, refused


def run_ir(ir_python, docs, queries, table, scratch):
    d = tempfile.mkdtemp(dir=scratch)
    with open(os.path.join(d, "docs.jsonl"), "w") as f:
        for k, t in docs.items():
            f.write(json.dumps({"id": k, "text": t}) + "\n")
    cfg = {
        "docs": os.path.join(d, "docs.jsonl"),
        "queries": queries,
        "scratch": d,
        "table": table[0],
        "table_id": table[1],
    }
    with open(os.path.join(d, "cfg.json"), "w") as f:
        json.dump(cfg, f)
    p = subprocess.run(
        [ir_python, str(IR_PEER), os.path.join(d, "cfg.json")],
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    if p.returncode != 0:
        raise RuntimeError(f"ir driver failed:\n{p.stderr[-3000:]}")
    return json.loads(p.stdout)


def main(argv: Sequence[str], run: Run) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m bench run calibration", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--ir-python", help="python of a venv with ir 0.1.61 (optional)")
    ap.add_argument("--out", default=str(run.results_dir), help="folder of the results")
    args = ap.parse_args(argv)

    import numpy as np

    from rowvoi.corpus import CorpusStore, WholeText, build, from_mapping, search
    from rowvoi.corpus.retrieval.calibration import (
        best_floor,
        plot_distributions,
        read_queries,
        top_scores,
    )

    t0 = time.time()
    docs, _, queries, _ = cranfield()
    far = read_queries(os.path.join(ABST, "far_out_of_scope.txt"))
    near = read_queries(os.path.join(ABST, "near_out_of_scope.txt"))
    allq = queries + far + near
    n, f = len(queries), len(far)
    table = minilm_table(list(docs.values()) + allq)
    data = np.load(table[0])
    lut = dict(zip(data["keys"].tolist(), data["vectors"]))

    def fn(texts):
        return np.stack([lut[key(t)] for t in texts])

    scratch = scratch_dir("rv-calib-bench-")
    results: dict = {}
    for emb_label, emb in (("MiniLM", (fn, "table:" + table[1])), ("hashing", "hashing")):
        c = build(
            from_mapping(docs, name="cran", strategy=WholeText(), embedder=emb),
            store=CorpusStore(os.path.join(scratch, emb_label), name="cran"),
            progress=False,
        )
        for label, mode, fusion in CONFIGS:
            if emb_label == "hashing" and mode == "lexical":
                continue  # BM25 does not depend on the embedder
            s = top_scores(c, allq, mode=mode, fusion=fusion)
            results[emb_label, label] = (s[:n], s[n : n + f], s[n + f :])
        # the raw RRF score of the top hit (what cannot be floored)
        vecs = c.embedder.embed(allq)
        raw = []
        for q, v in zip(allq, vecs):
            hits = search(c, q, k=10, mode="hybrid", fusion="rrf", query_vector=v)
            raw.append(hits[0].score if hits else float("-inf"))
        results[emb_label, "rrf-raw"] = (raw[:n], raw[n : n + f], raw[n + f :])

    peer = None
    if args.ir_python:
        peer = run_ir(args.ir_python, docs, allq, table, scratch)
        for label in ("dense", "blend", "rrf", "lexical"):
            s = [float("-inf") if x is None else x for x in peer["tops"][label]]
            results["ir", label] = (s[:n], s[n : n + f], s[n + f :])

    os.makedirs(args.out, exist_ok=True)
    for label in PLOTTED:
        ins, fars, nears = results["MiniLM", label]
        for set_label, outs in (("far", fars), ("near", nears)):
            floor = best_floor(ins, outs)[0]
            xl = (
                "evidence (blend score) of the best RRF hit"
                if label == "rrf"
                else f"best {label} score in the top 10"
            )
            plot_distributions(
                ins,
                outs,
                floor,
                os.path.join(args.out, f"calibration_{label}_{set_label}.png"),
                title=f"Cranfield, MiniLM, {label}: in scope vs {set_label} "
                f"out of scope (floor {floor:.3f})",
                xlabel=xl,
                labels=("in scope (Cranfield)", f"{set_label} out of scope"),
            )

    lines = [
        "# Calibrated abstention on Cranfield",
        "",
        *run.header(versions("numpy", peers={"ir": peer["ir_version"] if peer else None})),
        f"Took {time.time() - t0:.0f} s.",
        "",
        f"In scope: {n} Cranfield queries. Out of scope: {f} far queries (cooking, sport, "
        f"pets, travel, ...) and {len(near)} near ones (circuits, metallurgy, software, "
        "civil, chemical and power engineering, ...), `tests/data/abstention/`. "
        "Every rate is **held out**: the floor is chosen on the even-numbered queries of "
        "both sets (maximising answered + refused) and measured on the odd-numbered ones, "
        "then the other way round; the figures are the means of the two folds (per-fold "
        "values in brackets). Best score over the top 10 hits per query.",
        "",
        "`rrf` floors each RRF hit's evidence (its blend score); `rrf-raw` floors the raw "
        "RRF score, which depends on ranks only (about 2/61 for the top hit of *every* "
        "query that both sides rank first) -- shown to say why it cannot be floored. "
        "`ir` is ir 0.1.61 over the same MiniLM vectors, with the same floor choice and "
        "folds: the columns differ only in the score being floored.",
        "",
    ]
    for set_label, idx in (("far", 1), ("near", 2)):
        lines += [
            f"## {set_label.capitalize()} out-of-scope set",
            "",
            "| embedder | config | answered (in scope) | refused (out of scope) | "
            "balanced | floors (fold 1, 2) |",
            "|---|---|---|---|---|---|",
        ]
        for (emb_label, label), trio in results.items():
            ins, outs = trio[0], trio[idx]
            ans, ref, floors, a2, r2 = held_out(ins, outs)
            lines.append(
                f"| {emb_label} | {label} | {ans:.3f} ({a2[0]:.3f}, {a2[1]:.3f}) | "
                f"{ref:.3f} ({r2[0]:.3f}, {r2[1]:.3f}) | {(ans + ref) / 2:.3f} | "
                f"{floors[0]:.4g}, {floors[1]:.4g} |"
            )
        lines.append("")
    lines += ["## Score distributions (MiniLM, floor calibrated on all queries)", ""]
    for label in PLOTTED:
        for set_label in ("far", "near"):
            lines.append(f"![{label} {set_label}](calibration_{label}_{set_label}.png)")
    lines.append("")
    write(os.path.join(args.out, "calibration.md"), "\n".join(lines))
    print("\n".join(lines))
    return 0
