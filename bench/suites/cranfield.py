"""Retrieval quality on the Cranfield collection: nDCG@10, MAP, recall@100.

    python -m bench run cranfield [--data DIR] [--json FILE] [--markdown FILE] [--no-dense]

Writes ``bench/results/cranfield.md`` and ``cranfield.json``.

Indexes title + abstract (.T + .W) of the 1,400 documents and runs the 225
queries.  Relevance convention (the collection's README): read ``cranqrel``,
drop the -1 rows; graded gain = 5 - grade for nDCG (grade 1 is the most
relevant, gain 4); grades 1..4 count as relevant for MAP and recall.
Queries are numbered by their position in ``cran.qry`` (1..225), not by
their ``.I`` field.

Runs are plain data: ``runs[name] = [ranked document numbers of query 1,
of query 2, ...]``.  :func:`lexical_runs` makes the BM25 ones (rowvoi, and
bm25s / rank_bm25 fed the *same* tokens -- rowvoi's analyzer output -- so
only the scoring differs); another module can add dense runs with the same
shape, and :func:`rrf` fuses any two runs.  ``evaluate``
(bench/_common/cranfield.py) scores any run.

The script also checks that rowvoi's Lucene top-10 equals bm25s's Lucene
top-10 for every query, and explains each difference it finds (a tie, or
scores equal within float32 rounding that the two engines break differently).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence

import numpy as np

from .._common.cranfield import Cranfield, evaluate, load_cranfield
from .._common.results import Run, version_of, versions, write

DEPTH = 1000  # ranked documents kept per query (MAP, recall@100)


def rrf(
    a: list[list[int]], b: list[list[int]], k: int = 60, depth: int = DEPTH
) -> list[list[int]]:
    """Reciprocal-rank fusion (Cormack, Clarke and Buettcher 2009) of two
    runs: score(d) = sum over runs of 1 / (k + rank), ranks from 1; ties by
    the lower document number."""
    out = []
    for ra, rb in zip(a, b):
        s: dict[int, float] = {}
        for ranked in (ra, rb):
            for r, d in enumerate(ranked[:depth]):
                s[d] = s.get(d, 0.0) + 1.0 / (k + r + 1)
        out.append(sorted(s, key=lambda d: (-s[d], d))[:depth])
    return out


# ------------------------------------------------------------------ runs

SETTINGS = [(1.2, 0.75), (0.9, 0.4)]


def lexical_runs(cr: Cranfield, details: dict) -> dict[str, list[list[int]]]:
    """BM25 runs: rowvoi, and bm25s / rank_bm25 on rowvoi's tokens."""
    from rowvoi.index.lexical import BM25Index
    from rowvoi.index.text import Analyzer

    analyzer = Analyzer()
    num = np.array(cr.doc_numbers)
    runs: dict[str, list[list[int]]] = {}
    t = time.perf_counter()
    index = BM25Index(analyzer)
    index.add(cr.texts)
    details["rowvoi_build_s"] = time.perf_counter() - t
    for k1, b in SETTINGS:
        index.set_params(k1=k1, b=b)
        r = index.search_batch(cr.queries, DEPTH, n_threads=1)
        runs[f"rowvoi bm25 k1={k1} b={b}"] = [num[row[row >= 0]].tolist() for row in r.ids]
        details[f"rowvoi_scores k1={k1} b={b}"] = [
            row[~np.isnan(row)].tolist() for row in r.scores
        ]
    doc_tokens = analyzer.tokenize_many(cr.texts)
    query_tokens = analyzer.tokenize_many(cr.queries)
    details["tokens"] = query_tokens
    try:
        import bm25s
    except ImportError:
        bm25s = None
    if bm25s is not None:
        for k1, b in SETTINGS:
            ret = bm25s.BM25(method="lucene", k1=k1, b=b)
            ret.index([t or [""] for t in doc_tokens], show_progress=False)
            docs, scores = ret.retrieve(
                [q or [""] for q in query_tokens], k=DEPTH, show_progress=False
            )
            # bm25s returns every document, zero scores included: keep matches
            runs[f"bm25s lucene k1={k1} b={b}"] = [
                num[d[s > 0]].tolist() for d, s in zip(docs, scores)
            ]
            details[f"bm25s_scores k1={k1} b={b}"] = [s[s > 0].tolist() for s in scores]
            details[f"bm25s_full k1={k1} b={b}"] = ret
    try:
        from rank_bm25 import BM25Okapi
    except ImportError:
        BM25Okapi = None
    if BM25Okapi is not None:
        for k1, b in SETTINGS:
            okapi = BM25Okapi([t or [""] for t in doc_tokens], k1=k1, b=b)
            run = []
            for q in query_tokens:
                s = okapi.get_scores(q)
                order = np.lexsort((np.arange(len(s)), -s))
                run.append(num[order[s[order] > 0][:DEPTH]].tolist())
            runs[f"rank_bm25 okapi k1={k1} b={b}"] = run
    return runs


def dense_runs(cr: Cranfield, details: dict, quantize: bool = True) -> dict[str, list[list[int]]]:
    """Dense run: all-MiniLM-L6-v2 (rowvoi.index.embed) into the exact FlatIndex (cosine)."""
    from rowvoi.index.embed import MiniLMEmbedder
    from rowvoi.index.flat import FlatIndex

    num = np.array(cr.doc_numbers)
    emb = MiniLMEmbedder(quantize=quantize)
    t = time.perf_counter()
    docs = emb.embed(cr.texts)
    details["dense_embed_docs_s"] = time.perf_counter() - t
    index = FlatIndex(docs.shape[1], "cosine")
    index.add(docs)
    t = time.perf_counter()
    queries = emb.embed(cr.queries)
    r = index.search(queries, DEPTH, n_threads=1)
    details["dense_query_s"] = time.perf_counter() - t
    name = "dense minilm" + (" int8" if quantize else " (shipped model)")
    return {name: [num[row[row >= 0]].tolist() for row in r.ids]}


def compare_top10(
    ours: list[list[int]],
    our_scores: list[list[float]],
    theirs: list[list[int]],
    their_scores: list[list[float]],
    number_to_row: dict[int, int],
    full_scores,
) -> dict:
    """Compare top-10 lists; classify every difference."""
    same, diffs = 0, []
    for qi, (a, b) in enumerate(zip(ours, theirs)):
        a10, b10 = a[:10], b[:10]
        if a10 == b10:
            same += 1
            continue
        # bm25s's float32 scores of every document, for the explanation
        fs = full_scores(qi)
        notes = []
        for pos in range(max(len(a10), len(b10))):
            x = a10[pos] if pos < len(a10) else None
            y = b10[pos] if pos < len(b10) else None
            if x == y:
                continue
            sx = float(fs[number_to_row[x]]) if x is not None else None
            sy = float(fs[number_to_row[y]]) if y is not None else None
            if sx is not None and sy is not None:
                gap = abs(sx - sy)
                ulp = float(np.spacing(np.float32(max(sx, sy))))
                kind = (
                    "tie in bm25s's float32 scores"
                    if gap == 0
                    else (
                        f"scores differ by {gap / ulp:.0f} ulp (float32 summation order)"
                        if gap <= 4 * ulp
                        else f"scores differ by {gap:.3g}"
                    )
                )
            else:
                kind = "one list is shorter"
            notes.append(
                {
                    "position": pos + 1,
                    "rowvoi": x,
                    "bm25s": y,
                    "bm25s_score_rowvoi_doc": sx,
                    "bm25s_score_bm25s_doc": sy,
                    "why": kind,
                }
            )
        diffs.append({"query": qi + 1, "differences": notes})
    return {"identical": same, "queries": len(ours), "differing": diffs}


# ------------------------------------------------------------------ main


def markdown(q: dict, run: Run | None = None) -> str:
    """``cranfield.md``: the quality table and the top-10 comparison with
    bm25s, with the run's provenance (``run``) or, for results of an
    earlier layout, the command they name."""
    out = ["# Cranfield quality", ""]
    if run is not None:
        out += run.header(q["versions"])
    out += [
        "Title + abstract of 1,400 documents, 225 queries.  Relevance: `cranqrel` without "
        "its -1 rows; nDCG gain = 5 - grade; grades 1-4 relevant for MAP and recall@100.  "
        "bm25s and rank_bm25 are given rowvoi's analyzer output (lowercase, accents stripped, "
        "English stopwords, Snowball English stemmer) as their tokens, so only the scoring "
        "differs.  rank_bm25's BM25Okapi uses Robertson's idf with an epsilon floor and the "
        "(k1 + 1) factor, hence its slightly different figures.",
        "",
        "| run | nDCG@10 | MAP | recall@100 |",
        "| --- | ---: | ---: | ---: |",
    ]
    for name, m in q["metrics"].items():
        label = name
        if name.startswith("rrf(") and "dense" not in name:
            label += (
                " (fusion code check on two lexical runs; dense and hybrid rows come "
                "with the dense index)"
            )
        out.append(f"| {label} | {m['ndcg@10']:.4f} | {m['map']:.4f} | {m['recall@100']:.4f} |")
    out.append("")
    for key, c in q.get("top10_vs_bm25s", {}).items():
        out.append(
            f"Top-10 lists, rowvoi Lucene vs bm25s Lucene ({key}): identical for "
            f"**{c['identical']} of {c['queries']}** queries."
        )
        for d in c["differing"]:
            for n in d["differences"]:
                out.append(
                    f"- query {d['query']}, rank {n['position']}: rowvoi doc {n['rowvoi']}, "
                    f"bm25s doc {n['bm25s']} -- {n['why']}"
                )
    if run is None:
        out += ["", f"Command: `{q['command']}`"]
    return "\n".join(out).rstrip("\n") + "\n"


def main(argv: Sequence[str], run: Run) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m bench run cranfield", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--data", default=None)
    ap.add_argument("--json", default=str(run.path("cranfield.json")))
    ap.add_argument("--markdown", default=str(run.out), help="the results file")
    ap.add_argument(
        "--no-dense",
        action="store_true",
        help="skip the MiniLM dense run and the BM25 + dense fusion",
    )
    args = ap.parse_args(argv)
    cr = load_cranfield(args.data)
    details: dict = {}
    runs = lexical_runs(cr, details)
    key = f"k1={SETTINGS[0][0]} b={SETTINGS[0][1]}"
    runs[f"rrf(rowvoi {key}, rowvoi k1={SETTINGS[1][0]} b={SETTINGS[1][1]})"] = rrf(
        runs[f"rowvoi bm25 {key}"], runs[f"rowvoi bm25 k1={SETTINGS[1][0]} b={SETTINGS[1][1]}"]
    )
    if not args.no_dense:
        dense = dense_runs(cr, details)
        runs.update(dense)
        ((dname, drun),) = dense.items()
        runs[f"rrf(rowvoi bm25 {key}, {dname})"] = rrf(runs[f"rowvoi bm25 {key}"], drun)
    results = {
        "command": run.command,
        "versions": versions(
            "numpy",
            "onnxruntime",
            peers={"bm25s": version_of("bm25s"), "rank_bm25": version_of("rank-bm25")},
        ),
        "metrics": {name: evaluate(run, cr.qrels) for name, run in runs.items()},
        "top10_vs_bm25s": {},
    }
    row_of = {n: i for i, n in enumerate(cr.doc_numbers)}
    for k1, b in SETTINGS:
        k = f"k1={k1} b={b}"
        if f"bm25s lucene {k}" not in runs:
            continue
        ret = details[f"bm25s_full {k}"]
        toks = details["tokens"]
        results["top10_vs_bm25s"][k] = compare_top10(
            runs[f"rowvoi bm25 {k}"],
            details[f"rowvoi_scores {k}"],
            runs[f"bm25s lucene {k}"],
            details[f"bm25s_scores {k}"],
            row_of,
            lambda qi: ret.get_scores(toks[qi]) if toks[qi] else np.zeros(len(cr.texts)),
        )
    for name, m in results["metrics"].items():
        print(
            f"{name:55s} nDCG@10 {m['ndcg@10']:.4f}  MAP {m['map']:.4f}  R@100 {m['recall@100']:.4f}"
        )
    for k, c in results["top10_vs_bm25s"].items():
        print(f"top-10 identical to bm25s ({k}): {c['identical']}/{c['queries']}")
        for d in c["differing"]:
            print("  query", d["query"], d["differences"])
    write(args.json, json.dumps(results, indent=1))
    write(args.markdown, markdown(results, run))
    return 0
