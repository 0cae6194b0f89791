"""Evaluation benchmark: rowvoi.corpus.eval beside ``ir`` 0.1.61 on Cranfield.

    python -m bench run eval --ir-python IR_VENV/bin/python \\
        [--markdown bench/results/eval.md] [--json bench/results/eval.json] \\
        [--plots bench/results] [--curve-probes 40] [--curve-trials 5]

Cranfield: 1,400 documents (title + abstract as one surface), 225 queries
numbered by position; a case's gold ids are the judged documents of grades
1..4 (-1 rows dropped), graded gain 5 - grade. Both systems index the SAME
MiniLM vectors: a table computed once with rowvoi's MiniLM, looked up by
the SHA-256 of each text (``bench/_common/minilm.py``); ``ir``
runs in its own virtual environment as a subprocess
(``bench/peers/eval_ir.py``).

For each search configuration (hybrid RRF -- both systems' default --,
hybrid blend, dense; lexical for rowvoi):

* ranking quality with ``evaluate_discovery`` (nDCG@10, MAP over a
  1000-deep run);
* the default selector (conservative, max_k 3, rel 0.9), scored by each
  system's own ``evaluate_selection`` (selection precision, F1,
  conditional commit rate, mean selected size);
* ``discover()`` as a user sees it: precision of everything committed
  (pooled over the 225 queries) and results per query, computed by this
  script with one formula from each system's committed ids;
* the default sweep (max_k 1,2,3,5,8 x rel 0.4..0.9), best selection F1,
  scored by each system's own ``sweep_selector``;
* the fair comparison (``fair_comparison``): both systems' selections
  (each system's own ``select`` over its own 10 candidates, for every grid
  setting) scored by one formula on the cases whose gold BOTH retrieved,
  held-out tuning (tune on one half of the queries, score the other, both
  ways), the ceiling of a perfect prefix cut of each ranking, and a paired
  bootstrap interval of the difference. ``evaluate_selection``'s F1 is
  conditioned on each system's own retrieved gold, i.e. on different case
  sets per system, so it alone cannot rank two systems.

* the attribution (``attribution``): pairs of per-side ranked lists (ir's,
  rowvoi's, rowvoi's BM25 under other analyzers) fused by one plain RRF and
  selected by rowvoi's ``select``: which list the hybrid figures depend on.

rowvoi alone: the distractor curve (gold = a query's top-graded document,
ties by smallest id) in each mode with MiniLM, and the sweep's
precision/recall frontier; ``--plots DIR`` draws both.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence

import numpy as np

from .._common.cranfield import load_cranfield
from .._common.minilm import key, minilm_table
from .._common.results import ROOT, Run, shown_arg, versions, write

IR_PEER = ROOT / "bench" / "peers" / "eval_ir.py"

CONFIGS = {
    "hybrid rrf (default)": {"mode": "hybrid", "fusion": "rrf"},
    "hybrid blend": {"mode": "hybrid", "fusion": "blend"},
    "dense": {"mode": "dense"},
    "lexical": {"mode": "lexical"},
}
PEER_CONFIGS = ("hybrid rrf (default)", "hybrid blend", "dense")


def cases_of(cran):
    from rowvoi.corpus.eval import DiscoveryCase

    out = []
    for i, q in enumerate(cran.queries, 1):
        rel = cran.qrels[i]
        out.append(
            DiscoveryCase(
                q, [str(d) for d in rel], {str(d): 5 - g for d, g in rel.items()}, source_id=str(i)
            )
        )
    return out


def discover_figures(cases, committed):
    """Pooled precision of everything committed, mean per-query precision
    (queries that committed), results per query."""
    hit = sel = 0
    per_query = []
    for case, ids in zip(cases, committed):
        gold = set(case.gold)
        h = sum(1 for i in ids if i in gold)
        hit += h
        sel += len(ids)
        if ids:
            per_query.append(h / len(ids))
    return {
        "precision": hit / sel if sel else None,
        "mean_query_precision": float(np.mean(per_query)) if per_query else None,
        "results_per_query": sel / len(cases),
    }


def overall_f1(cases, selections):
    """Mean per-case F1 of the selected ids against all gold, every gold
    case (a retrieval miss or an empty commit scores 0) -- the formula of
    rowvoi's ``SelectionReport.overall_f1``, applied here to both systems'
    selections."""
    f1 = []
    for case, ids in zip(cases, selections):
        if case.gold_is_none:
            continue
        hit = len(set(ids) & set(case.gold))
        f1.append(2 * hit / (len(set(ids)) + len(case.gold)) if hit else 0.0)
    return float(np.mean(f1))


def case_f1(cases, retrieved, selections, keep):
    """``{case index: F1}`` against the gold among the candidates, for the
    case indexes in ``keep`` (an empty commit or a miss scores 0)."""
    out = {}
    for i in keep:
        gold = set(cases[i].gold) & set(retrieved[i])
        hit = len(set(selections[i]) & gold)
        out[i] = 2 * hit / (len(set(selections[i])) + len(gold)) if hit else 0.0
    return out


def conditioned_f1(cases, retrieved, selections, keep):
    """Mean per-case F1 against the gold among the candidates, over the case
    indexes in ``keep`` -- ``evaluate_selection``'s selection F1 when
    ``keep`` is the cases whose gold was retrieved."""
    return float(np.mean(list(case_f1(cases, retrieved, selections, keep).values())))


def gold_retrieved(cases, retrieved):
    return {i for i, c in enumerate(cases) if set(c.gold) & set(retrieved[i])}


def grid_of(corpus, cases, kw):
    """rowvoi's candidates and selections for every default grid setting,
    in the shape the ir driver returns."""
    from rowvoi.corpus import search, select
    from rowvoi.corpus.eval import DFLT_SWEEP_MAX_K, DFLT_SWEEP_REL

    hits = [search(corpus, c.query, k=10, per_artifact=True, **kw) for c in cases]
    grid = {
        f"{mk}/{rl}": [select(hs, max_k=mk, rel=rl).selected_ids for hs in hits]
        for mk in DFLT_SWEEP_MAX_K
        for rl in DFLT_SWEEP_REL
    }
    return [[h.artifact_id for h in hs] for hs in hits], grid


FOLDS = 2  # held-out tuning: query positions i % FOLDS


def oracle_f1(cases, retrieved, keep, cap):
    """Mean F1 of the best prefix cut (at most ``cap`` results) of each
    case's ranking, over ``keep``: the ceiling of any selector that commits
    to a prefix of that ranking (both systems' selectors do)."""
    f1 = []
    for i in keep:
        gold = set(cases[i].gold) & set(retrieved[i])
        best, hit = 0.0, 0
        for m, doc in enumerate(retrieved[i][:cap], 1):
            hit += doc in gold
            if hit:
                best = max(best, 2 * hit / (m + len(gold)))
        f1.append(best)
    return float(np.mean(f1))


def fair_comparison(cases, o, p, *, rounds=2000, seed=0):
    """Both systems' selection F1 on identical case sets, tuned out of
    sample, with ceilings and a paired bootstrap of the difference.

    ``o`` and ``p`` carry ``retrieved`` (10 candidate ids per case) and
    ``grid`` (``"max_k/rel"`` -> selected ids per case, each system's own
    ``select`` over its own candidates). Selection F1 conditioned on each
    system's own retrieved gold (``evaluate_selection``'s figure) scores
    the two on different case sets: a case whose gold only one system
    retrieves counts against that system alone. So every comparison here
    is on the cases whose gold BOTH retrieved ("common"), besides each
    system's own set. Held-out: for each fold (query positions ``i %
    FOLDS``), the setting with the best own-set F1 on the other folds,
    scored on this fold.
    """
    systems = {"rowvoi": o, "ir": p}
    own = {n: gold_retrieved(cases, r["retrieved"]) for n, r in systems.items()}
    common = own["rowvoi"] & own["ir"]
    folds = [set(range(f, len(cases), FOLDS)) for f in range(FOLDS)]
    out = {"n_common": len(common), "folds": FOLDS, "systems": {}}
    per_case = {}
    for name, r in systems.items():
        f1 = {
            key: case_f1(cases, r["retrieved"], sel, own[name]) for key, sel in r["grid"].items()
        }

        def mean(key, idx, f1=f1):
            return float(np.mean([f1[key][i] for i in idx]))

        keys = list(r["grid"])  # grid order: max_k outermost, then rel
        best_common = max(keys, key=lambda k: mean(k, common))
        held = []
        for b, fold in enumerate(folds):
            train = own[name] - fold
            pick = max(keys, key=lambda k: mean(k, train))
            held.append(
                {
                    "fold": b,
                    "setting": pick,
                    "own": mean(pick, own[name] & fold),
                    "common": mean(pick, common & fold),
                    "default_own": mean("3/0.9", own[name] & fold),
                    "default_common": mean("3/0.9", common & fold),
                }
            )
        only = own[name] - common
        out["systems"][name] = {
            "n_own": len(own[name]),
            "n_only": len(only),
            "only_default_f1": mean("3/0.9", only) if only else None,
            "only_first_gold_rank": (
                float(
                    np.mean(
                        [
                            min(
                                k
                                for k, d in enumerate(r["retrieved"][i], 1)
                                if d in set(cases[i].gold)
                            )
                            for i in only
                        ]
                    )
                )
                if only
                else None
            ),
            "default_f1_common": mean("3/0.9", common),
            "best_f1_common": mean(best_common, common),
            "best_common": best_common,
            "held_out": held,
            "held_out_own": float(np.mean([h["own"] for h in held])),
            "held_out_common": float(np.mean([h["common"] for h in held])),
            "ceiling_cap3_own": oracle_f1(cases, r["retrieved"], own[name], 3),
            "ceiling_cap3": oracle_f1(cases, r["retrieved"], common, 3),
            "ceiling_cap10": oracle_f1(cases, r["retrieved"], common, 10),
        }
        per_case[name] = f1
    idx = sorted(common)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(idx), size=(rounds, len(idx)))
    for what, ko, kp in (
        ("default", "3/0.9", "3/0.9"),
        (
            "best",
            out["systems"]["rowvoi"]["best_common"],
            out["systems"]["ir"]["best_common"],
        ),
    ):
        d = np.array([per_case["rowvoi"][ko][i] - per_case["ir"][kp][i] for i in idx])
        lo, hi = np.percentile(d[draws].mean(axis=1), [2.5, 97.5])
        out[f"diff_{what}"] = {
            "mean": float(d.mean()),
            "ci95": [float(lo), float(hi)],
            "wins": int((d > 0).sum()),
            "losses": int((d < 0).sum()),
        }
    return out


def run_ours(docs, cases, table):
    from rowvoi.corpus import CorpusStore, WholeText, build, discover, from_mapping
    from rowvoi.corpus.eval import evaluate_discovery, evaluate_selection, sweep_selector

    data = np.load(table[0])
    lut = dict(zip(data["keys"].tolist(), data["vectors"]))

    def fn(texts):
        return np.stack([lut[key(t)] for t in texts])

    emb = (fn, "table:" + table[1])
    corpus = build(
        from_mapping(docs, name="cran", strategy=WholeText(), embedder=emb),
        store=CorpusStore.memory(),
        progress=False,
    )
    out = {}
    for label, kw in CONFIGS.items():
        t0 = time.perf_counter()
        disc = evaluate_discovery(
            corpus, cases, k_values=(10, 1000), metrics=("ndcg", "map"), **kw
        )
        default = evaluate_selection(corpus, cases, **kw)
        # the bench's formula is the library's: checked on every run
        assert (
            abs(overall_f1(cases, [r["selected"] for r in default.rows]) - default.overall_f1)
            < 1e-12
        )
        sweep = sweep_selector(corpus, cases, **kw)
        best = sweep.best()
        best_overall = sweep.best("overall_f1")
        committed = [discover(corpus, c.query, **kw).ids for c in cases]
        retrieved, grid = grid_of(corpus, cases, kw)
        assert (
            abs(
                conditioned_f1(cases, retrieved, grid["3/0.9"], gold_retrieved(cases, retrieved))
                - default.selection_f1
            )
            < 1e-12
        )
        out[label] = {
            "ndcg@10": disc.metrics["ndcg@10"],
            "map": disc.metrics["map@1000"],
            "default": default.to_dict(rows=False),
            "best": {"max_k": best.max_k, "rel": best.rel, **best.report.to_dict(rows=False)},
            "discover": discover_figures(cases, committed),
            "best_overall": {
                "max_k": best_overall.max_k,
                "rel": best_overall.rel,
                "overall_f1": best_overall.report.overall_f1,
            },
            "seconds": time.perf_counter() - t0,
            "_sweep": sweep,
            "retrieved": retrieved,
            "grid": grid,
        }
    return corpus, emb, out


def run_peer(ir_python, docs, cases, table, scratch):
    d = tempfile.mkdtemp(dir=scratch)
    with open(os.path.join(d, "docs.jsonl"), "w") as f:
        for k, t in docs.items():
            f.write(json.dumps({"id": k, "text": t}) + "\n")
    with open(os.path.join(d, "cases.jsonl"), "w") as f:
        for c in cases:
            f.write(json.dumps({"query": c.query, "gold": list(c.gold)}) + "\n")
    cfg = {
        "docs": os.path.join(d, "docs.jsonl"),
        "cases": os.path.join(d, "cases.jsonl"),
        "table": table[0],
        "table_id": table[1],
        "scratch": d,
        "configs": {label: CONFIGS[label] for label in PEER_CONFIGS},
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
    res = json.loads(p.stdout)
    out = res["configs"]
    out["_lists"] = res["lists"]
    out["_ir_version"] = res.get("ir_version")
    for label, r in out.items():
        if label in ("_lists", "_ir_version"):
            continue
        # one formula for both systems: the bench's F1 of ir's own selections
        # equals ir's evaluate_selection figure
        f1 = conditioned_f1(
            cases, r["retrieved"], r["grid"]["3/0.9"], gold_retrieved(cases, r["retrieved"])
        )
        assert abs(f1 - r["default"]["selection_f1"]) < 1e-9, (label, f1)
        r["discover"] = discover_figures(cases, r.pop("committed"))
        grid = {key: overall_f1(cases, sel) for key, sel in r["grid"].items()}
        r["default"]["overall_f1"] = grid["3/0.9"]
        top = max(grid.values())
        mk, rl = next(key for key, v in grid.items() if v == top).split("/")
        r["best_overall"] = {"max_k": int(mk), "rel": float(rl), "overall_f1": top}
    return out


def rrf_lists(dense, lexical, k=60):
    """Plain RRF of two ranked id lists: ``sum 1 / (k + rank)``, equal
    scores by artifact id (the string) -- one fusion for every pair of lists
    in :func:`attribution`."""
    s = {}
    for ranked in (dense, lexical):
        for r, a in enumerate(ranked, 1):
            s[a] = s.get(a, 0.0) + 1.0 / (k + r)
    return sorted(s.items(), key=lambda x: (-x[1], x[0]))


def ndcg10(cases, ranked):
    """Mean nDCG@10 of ranked id lists with each case's graded gains
    (``evaluate_discovery``'s formula: gain / log2(rank + 1))."""
    out = []
    for c, ids in zip(cases, ranked):
        dcg = sum(c.gains.get(a, 0) / np.log2(r + 1) for r, a in enumerate(ids[:10], 1))
        ideal = sorted(c.gains.values(), reverse=True)[:10]
        idcg = sum(g / np.log2(r + 1) for r, g in enumerate(ideal, 1))
        out.append(dcg / idcg if idcg else 0.0)
    return float(np.mean(out))


def lexical_lists(docs, cases, analyzer, depth=50):
    """rowvoi BM25 (Lucene, k1 1.2, b 0.75) top ``depth`` per case with
    ``analyzer``, over the same texts the corpus indexes."""
    from rowvoi.index.lexical import BM25Index

    ids = list(docs)
    index = BM25Index(analyzer)
    index.add([docs[a] for a in ids])
    return [[ids[j] for j in index.search(c.query, k=depth).ids.tolist()] for c in cases]


def attribution(docs, cases, corpus, peer_lists):
    """The hybrid RRF figures of pairs of ranked lists (top 50 per side),
    each pair fused by :func:`rrf_lists` and selected by rowvoi's
    ``select`` over the fused top 10: which list makes the difference.

    Rows: ir's own dense and lexical lists (reproduces ir's figures: the
    fusion and the selector are the same); rowvoi's dense with ir's
    lexical; rowvoi's two lists; rowvoi's dense with rowvoi BM25 under
    other analyzers (no stemming; no stopword list) -- what a different
    lexical list alone does to the selection figures.
    """
    from rowvoi.corpus import search, select
    from rowvoi.corpus.base import SearchHit
    from rowvoi.corpus.eval import DFLT_SWEEP_MAX_K, DFLT_SWEEP_REL
    from rowvoi.index.text import Analyzer

    ours = {
        mode: [[h.artifact_id for h in search(corpus, c.query, mode=mode, k=50)] for c in cases]
        for mode in ("dense", "lexical")
    }
    pairs = {}
    if peer_lists:
        pairs["ir dense + ir lexical"] = (peer_lists["dense"], peer_lists["lexical"])
        pairs["rowvoi dense + ir lexical"] = (ours["dense"], peer_lists["lexical"])
    pairs["rowvoi dense + rowvoi lexical"] = (ours["dense"], ours["lexical"])
    pairs["rowvoi dense + rowvoi BM25, no stemming"] = (
        ours["dense"],
        lexical_lists(docs, cases, Analyzer(stem=False)),
    )
    pairs["rowvoi dense + rowvoi BM25, no stopwords"] = (
        ours["dense"],
        lexical_lists(docs, cases, Analyzer(stopwords=False)),
    )
    out = {}
    if peer_lists:
        out["dense_lists_equal"] = peer_lists["dense"] == ours["dense"]
    for name, (dl, ll) in pairs.items():
        retrieved, grid = [], {}
        for d, lx in zip(dl, ll):
            fused = rrf_lists(d, lx)[:10]
            hits = [SearchHit(a, "document", sc, "") for a, sc in fused]
            retrieved.append([a for a, _ in fused])
            for mk in DFLT_SWEEP_MAX_K:
                for rl in DFLT_SWEEP_REL:
                    grid.setdefault(f"{mk}/{rl}", []).append(
                        select(hits, max_k=mk, rel=rl).selected_ids
                    )
        own = gold_retrieved(cases, retrieved)
        best = max(grid, key=lambda key: conditioned_f1(cases, retrieved, grid[key], own))
        out[name] = {
            "discover": discover_figures(cases, grid["3/0.9"]),
            "selection_f1": conditioned_f1(cases, retrieved, grid["3/0.9"], own),
            "best_f1": conditioned_f1(cases, retrieved, grid[best], own),
            "best": best,
            "n_own": len(own),
            "ndcg@10_lexical": ndcg10(cases, ll),
            "ndcg@10_fused": ndcg10(cases, retrieved),
        }
    return out


def curves(docs, cases, emb, probes, trials):
    from rowvoi.corpus.eval import distractor_robustness_curve

    pairs = []
    for c in cases[:probes]:
        top = max(c.gains.values())
        pairs.append((c.query, min((d for d, g in c.gains.items() if g == top), key=int)))
    out = {}
    for label, kw in (
        ("lexical", {"mode": "lexical"}),
        ("dense", {"mode": "dense"}),
        ("hybrid rrf", {"mode": "hybrid", "fusion": "rrf"}),
        ("hybrid blend", {"mode": "hybrid", "fusion": "blend"}),
    ):
        t0 = time.perf_counter()
        out[label] = distractor_robustness_curve(
            docs, pairs, embedder=emb, trials=trials, sizes=(1, 4, 16, 64, 256, 1400), **kw
        )
        print(f"  curve {label}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return out


def fmt(v, nd=3):
    return "-" if v is None else f"{v:.{nd}f}"


def markdown(res, header):
    ours, peer = res["ours"], res["ir"]
    lines = [
        "# Retrieval evaluation on Cranfield: rowvoi beside ir 0.1.61",
        "",
        *header,
        "Figures are quality, not time.",
        "",
        "Cranfield, 225 queries; gold = judged documents of grades 1..4 (-1 rows "
        "dropped), gain 5 - grade; both systems index identical MiniLM vectors (rowvoi's "
        "MiniLM, looked up by text). Selection figures: each system's own "
        "`evaluate_selection` / `sweep_selector` (selection precision and F1 are over "
        "the cases whose gold was among the 10 candidates); discover precision: every "
        "id `discover()` committed, pooled over the queries, by this script for both. "
        "Selection F1 is conditioned on the cases whose gold reached the candidates, so "
        "a ranking that surfaces gold for more (harder) cases is charged for them; the "
        "rows 'on the cases both retrieved' score both systems' selections (each "
        "system's own `select` over its own candidates) on one set of cases, and "
        "overall F1 counts every gold case against all its gold (misses score 0).",
        "",
        "## Headline (hybrid RRF, both systems' default)",
        "",
        "| figure | rowvoi | ir 0.1.61 |",
        "|---|---|---|",
    ]
    none = {"discover": {}, "default": {}, "best": {}, "best_overall": {}}
    o, p = ours["hybrid rrf (default)"], peer.get("hybrid rrf (default)", none)
    fair = res.get("fair", {}).get("hybrid rrf (default)")
    fo = fair["systems"]["rowvoi"] if fair else {}
    fp = fair["systems"]["ir"] if fair else {}
    rows = [
        ("discover precision (pooled)", "discover", "precision"),
        ("results per query", "discover", "results_per_query"),
        (
            "selection F1, default, each on its own cases (`evaluate_selection`)",
            "default",
            "selection_f1",
        ),
        ("selection precision, default, own cases", "default", "selection_precision"),
        ("conditional commit rate, default, own cases", "default", "conditional_commit_rate"),
        ("best sweep selection F1, own cases (in-sample)", "best", "selection_f1"),
        ("overall F1, default selector (every gold case)", "default", "overall_f1"),
        ("best sweep overall F1 (in-sample)", "best_overall", "overall_f1"),
    ]
    rows = [(name, o.get(part, {}).get(m), p.get(part, {}).get(m)) for name, part, m in rows]
    rows += [
        (
            f"selection F1, default, on the {fair['n_common'] if fair else '-'} cases both "
            "retrieved",
            fo.get("default_f1_common"),
            fp.get("default_f1_common"),
        ),
        (
            "held-out selection F1 (tuned on the other half), own cases",
            fo.get("held_out_own"),
            fp.get("held_out_own"),
        ),
        (
            "held-out selection F1 (tuned on the other half), cases both retrieved",
            fo.get("held_out_common"),
            fp.get("held_out_common"),
        ),
        (
            "best sweep selection F1, cases both retrieved (in-sample)",
            fo.get("best_f1_common"),
            fp.get("best_f1_common"),
        ),
    ]
    for name, a, b in rows:
        lines.append(f"| {name} | {fmt(a)} | {fmt(b)} |")
    lines.append(
        f"| best sweep setting (max_k/rel) | {o['best']['max_k']}/{o['best']['rel']} "
        f"| {p['best'].get('max_k', '-')}/{p['best'].get('rel', '-')} |"
    )
    if res.get("fair"):
        lines += [
            "",
            "## Same cases, held-out tuning, ceilings",
            "",
            "Selection F1 as `evaluate_selection` defines it (ir's definition) is conditioned "
            "on the cases whose gold is among the system's OWN 10 candidates, so two "
            "systems are scored on different case sets: a case whose gold only one system "
            "surfaces (typically at rank 4-10, where a selector of 3 does not reach) counts "
            "against that system alone ('only' columns). The fair comparisons are on the "
            "cases whose gold both retrieved, and overall F1 above. Held-out: query "
            f"positions split by `i % {FOLDS}`; for each half, the sweep setting with the "
            "best own-case F1 on the other half, scored on this half (setting in brackets); "
            "in-sample 'best' figures are optimistic for both systems alike. Ceiling: the "
            "best prefix cut of each case's own ranking (at most 3 / 10 results), mean "
            "over the system's own cases or the common cases -- what any selector that "
            "commits to a prefix (both systems' do) could reach. Difference: rowvoi - ir per common case, paired "
            "bootstrap 95% interval (2000 draws, seed 0).",
            "",
            "| config | system | own cases | only this system: n (default F1; first gold "
            "rank) | default F1, common | held-out fold 0 / 1, common | held-out own "
            "| held-out common | best F1 common, in-sample | ceiling <=3, own / common "
            "| ceiling <=10, common |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for label, fr in res["fair"].items():
            for name, f in fr["systems"].items():
                folds = " / ".join(f"{fmt(h['common'])} ({h['setting']})" for h in f["held_out"])
                lines.append(
                    f"| {label} | {name} | {f['n_own']} | {f['n_only']} "
                    f"({fmt(f['only_default_f1'])}; {fmt(f['only_first_gold_rank'], 1)}) "
                    f"| {fmt(f['default_f1_common'])} "
                    f"| {folds} | {fmt(f['held_out_own'])} | {fmt(f['held_out_common'])} "
                    f"| {fmt(f['best_f1_common'])} ({f['best_common']}) "
                    f"| {fmt(f['ceiling_cap3_own'])} / {fmt(f['ceiling_cap3'])} "
                    f"| {fmt(f['ceiling_cap10'])} |"
                )
        lines += [
            "",
            "| config | rowvoi - ir, default (3/0.9), common cases | rowvoi - ir, each "
            "system's in-sample best, common cases |",
            "|---|---|---|",
        ]
        for label, fr in res["fair"].items():
            cells = []
            for what in ("default", "best"):
                d = fr[f"diff_{what}"]
                cells.append(
                    f"{d['mean']:+.3f} [{d['ci95'][0]:+.3f}, {d['ci95'][1]:+.3f}], "
                    f"{d['wins']} wins / {d['losses']} losses"
                )
            lines.append(f"| {label} | {cells[0]} | {cells[1]} |")
    if res.get("attribution"):
        at = res["attribution"]
        lines += [
            "",
            "## Which list makes the difference (hybrid RRF)",
            "",
            "Each pair of ranked lists (each side's own top 50) fused by one plain RRF "
            "(k 60, equal scores by artifact id) and selected by rowvoi's `select` over "
            "the fused top 10, scored as above (selection F1 on each row's own cases). "
            "ir's two lists reproduce ir's figures (up to the order of equal RRF "
            "scores, which ir breaks its own way), so the fusion and the selector are "
            "the same; the dense lists are identical"
            + (
                f" ({'checked' if at.get('dense_lists_equal') else 'NOT equal'})"
                if "dense_lists_equal" in at
                else ""
            )
            + ". What differs is the lexical list: ir's (vd's BM25: `\\w+` tokens, "
            "no stemming, no stopword list, k1 1.5), rowvoi's (Snowball stemming, "
            "English stopwords, Lucene BM25 k1 1.2, b 0.75), and rowvoi's BM25 under "
            "other analyzers. Compare the nDCG@10 columns with the selection columns: "
            "a lexical list that ranks worse (alone and fused) can give higher "
            "selection figures, and the figures move between analyzers by as much "
            "as between the two systems.",
            "",
            "| lists | nDCG@10 lexical / fused | own cases | discover P | results/q "
            "| selection F1 (3/0.9) | best F1 (setting) |",
            "|---|---|---|---|---|---|---|",
        ]
        for name, r in at.items():
            if not isinstance(r, dict):
                continue
            lines.append(
                f"| {name} | {fmt(r['ndcg@10_lexical'], 4)} / {fmt(r['ndcg@10_fused'], 4)} "
                f"| {r['n_own']} | {fmt(r['discover']['precision'])} "
                f"| {fmt(r['discover']['results_per_query'], 2)} | {fmt(r['selection_f1'])} "
                f"| {fmt(r['best_f1'])} ({r['best']}) |"
            )
    lines += [
        "",
        "## Every configuration",
        "",
        "| config | system | nDCG@10 | MAP | discover P | results/q | sel. P | sel. F1 "
        "| commit rate | best F1 (max_k/rel) | overall F1 | best overall F1 |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for label in CONFIGS:
        for sysname, r in (("rowvoi", ours.get(label)), ("ir", peer.get(label))):
            if r is None:
                continue
            lines.append(
                f"| {label} | {sysname} | {fmt(r.get('ndcg@10'), 4)} | {fmt(r.get('map'), 4)} "
                f"| {fmt(r['discover']['precision'])} | {fmt(r['discover']['results_per_query'], 2)} "
                f"| {fmt(r['default']['selection_precision'])} "
                f"| {fmt(r['default']['selection_f1'])} "
                f"| {fmt(r['default']['conditional_commit_rate'])} "
                f"| {fmt(r['best']['selection_f1'])} ({r['best']['max_k']}/{r['best']['rel']}) "
                f"| {fmt(r['default'].get('overall_f1'))} "
                f"| {fmt(r['best_overall']['overall_f1'])} "
                f"({r['best_overall']['max_k']}/{r['best_overall']['rel']}) |"
            )
    if res.get("curves"):
        sizes = sorted({int(n) for c in res["curves"].values() for n in c})
        lines += [
            "",
            "## Distractor curve (rowvoi, MiniLM): gold in top 1",
            "",
            f"{res['curve_probes']} probes (query, top-graded document), "
            f"{res['curve_trials']} draws per size.",
            "",
            "| mode | " + " | ".join(f"N={n}" for n in sizes) + " |",
            "|---|" + "---|" * len(sizes),
        ]
        for label, c in res["curves"].items():
            lines.append(
                f"| {label} | " + " | ".join(fmt(c.get(str(n), c.get(n))) for n in sizes) + " |"
            )
    if res.get("plots"):
        lines += ["", "Pictures: " + ", ".join(f"`{p}`" for p in res["plots"])]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str], run: Run) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m bench run eval", description=__doc__.split("\n")[0]
    )
    ap.add_argument(
        "--ir-python",
        default=os.environ.get("IR_PY"),
        help="python of a virtual environment with ir 0.1.61",
    )
    ap.add_argument("--data", default=None)
    ap.add_argument("--markdown", default=str(run.out))
    ap.add_argument("--json", default=str(run.path("eval.json")))
    ap.add_argument("--plots", default=str(run.results_dir), metavar="DIR")
    ap.add_argument("--curve-probes", type=int, default=40)
    ap.add_argument("--curve-trials", type=int, default=5)
    args = ap.parse_args(argv)

    cran = load_cranfield(args.data)
    docs = {str(n): t for n, t in zip(cran.doc_numbers, cran.texts)}
    cases = cases_of(cran)
    table = minilm_table(list(docs.values()) + [c.query for c in cases])
    print("rowvoi ...", file=sys.stderr)
    _corpus, emb, ours = run_ours(docs, cases, table)
    peer = {}
    if args.ir_python:
        print("ir ...", file=sys.stderr)
        with tempfile.TemporaryDirectory() as scratch:
            peer = run_peer(args.ir_python, docs, cases, table, scratch)
    print("attribution ...", file=sys.stderr)
    attrib = attribution(docs, cases, _corpus, peer.pop("_lists", None))
    v = versions("numpy", peers={"ir": peer.get("_ir_version")})
    peer.pop("_ir_version", None)
    res = {
        "command": run.command,
        "machine": run.machine,
        "versions": v,
        "date": run.date,
        "ours": ours,
        "ir": peer,
        "curve_probes": args.curve_probes,
        "curve_trials": args.curve_trials,
        "attribution": attrib,
    }
    if args.curve_probes:
        print("distractor curves ...", file=sys.stderr)
        res["curves"] = curves(docs, cases, emb, args.curve_probes, args.curve_trials)
    if args.plots:
        from rowvoi.corpus.eval import plot_distractor_curve, plot_frontier

        os.makedirs(args.plots, exist_ok=True)
        f1 = os.path.join(args.plots, "eval_frontier.png")
        plot_frontier(
            ours["hybrid rrf (default)"]["_sweep"],
            f1,
            title="Cranfield, MiniLM: selector sweep, hybrid rrf",
        )
        f2 = os.path.join(args.plots, "eval_distractor_curve.png")
        if res.get("curves"):
            plot_distractor_curve(
                res["curves"], f2, title="Cranfield, MiniLM: distractor robustness"
            )
        res["plots"] = [shown_arg(os.path.abspath(f)) for f in (f1, f2) if os.path.exists(f)]
    for label, o in ours.items():
        p = peer.get(label)
        if p is not None:
            res.setdefault("fair", {})[label] = fair_comparison(cases, o, p)
        for r in (o, p):
            if r is not None:
                r.pop("retrieved", None)
                r.pop("retrieved_scores", None)
                r.pop("grid", None)
        o.pop("_sweep")
    text = markdown(res, run.header(v))
    write(args.markdown, text)
    write(args.json, json.dumps(res, indent=1, default=str))
    print(text)
    return 0
