"""Write the lexical section of bench/results/retrieval.md from the JSON the
benchmarks left in bench/results/:

    python bench/bm25_bench.py synth --docs 1000000 --queries 2000 --json bench/results/bm25_synth_zipf.json
    python bench/bm25_bench.py synth --docs 1000000 --queries 2000 --query-mode top10k \\
        --engines rowvoi,bm25s,tantivy --json bench/results/bm25_synth_top10k.json
    python bench/bm25_bench.py cranfield --queries 225 --json bench/results/bm25_cranfield.json
    python bench/cranfield.py --json bench/results/cranfield_lexical.json
    python bench/lexical_report.py

Only the text between the lexical markers is replaced, so other sections of
retrieval.md (dense, hybrid) are left as they are.
"""

from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import spread

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
BEGIN, END = "<!-- lexical:begin -->", "<!-- lexical:end -->"


def load(name: str):
    path = os.path.join(RESULTS, name)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def fmt(x, nd=1):
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:,.{nd}f}"
    return str(x)


def fmt_s(x):
    return "-" if x is None else (f"{x:.3f}" if x < 1 else f"{x:.1f}")


def qps(r: dict, key: str) -> str:
    """Median QPS with its min-max over rounds."""
    if r.get(key) is None:
        return "-"
    rng = r.get(key + "_range")
    if (
        not rng
        or len(r.get(key + "_rounds_s", r.get(key.replace("_cpu", "") + "_rounds_s", []))) < 2
    ):
        return f"{r[key]:,.0f}"
    return f"{r[key]:,.0f} ({rng[0]:,.0f}-{rng[1]:,.0f})"


def round_ratio(a: dict, key_a: str, b: dict, key_b: str) -> str:
    """Speed of a over b: median (min-max) of the per-round ratios."""
    sa, sb = a.get(key_a + "_rounds_s"), b.get(key_b + "_rounds_s")
    if not sa or not sb or len(sa) != len(sb):
        return "-"
    return spread(y / x for x, y in zip(sa, sb)).fmt(".2f", "x")


PEER_ROWS = (
    ("bm25s", "bm25s", "qps_1thread"),
    ("tantivy", "tantivy", "qps_1thread"),
    ("pisa", "PISA, block-max WAND", "qps_1thread"),
    ("pisa", "PISA, MaxScore", "qps_1thread_maxscore"),
)


def speed_section(title: str, data: dict) -> list[str]:
    rows = {r["engine"]: r for r in data["results"]}
    out = [f"### {title}", ""]
    p = next((r.get("corpus_params") for r in data["results"] if r.get("corpus_params")), None)
    if p and data["corpus"] == "synth":
        out.append(
            f"Corpus: {p['n_docs']:,} documents, {p['total_tokens']:,} tokens "
            f"(mean {p['mean_len']} per document, Poisson), Zipf s = {p['zipf_s']} over "
            f"{p['vocab']:,} words, seed {p['seed']}.  Queries: "
            + (
                "5 distinct words drawn from the same Zipf distribution."
                if data.get("query_mode", "zipf") == "zipf"
                else "5 distinct words drawn uniformly from the 10,000 most frequent."
            )
        )
        out.append("")
    out += [
        f"{data.get('timing', 'Interleaved rounds.')}  Query tokenisation: "
        f"{data.get('query_tokenisation', 'timed for every engine')}.  Every build is "
        "single-threaded (tantivy's writer pinned to one thread; PISA threads=1); "
        f"{data.get('build_rounds', 1)} build(s) per engine in rotating order, build time "
        "median (min-max).",
        "",
        "| engine | build (s) | index memory (MB) | peak during build (MB) | "
        "QPS, 1 thread (CPU time) | QPS, 1 thread (wall) | QPS, all cores (wall) | notes |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for eng, label, key in (("rowvoi", "rowvoi", "qps_1thread"), *PEER_ROWS) + (
        ("rank_bm25", "rank_bm25", "qps_1thread"),
    ):
        r = rows.get(eng)
        if not r:
            continue
        if "error" in r:
            if key == "qps_1thread":
                out.append(f"| {label} | - | - | - | - | - | - | {r['error']} |")
            continue
        notes = []
        if eng == "rowvoi":
            notes.append(
                f"search() called per query: {qps(r, 'qps_1thread_per_call_cpu')} "
                f"QPS (CPU); "
                f"postings scored {100 * r.get('postings_scored_fraction', 0):.1f}%; "
                f"engine heap {fmt(r.get('engine_memory_mb'))} MB"
            )
        if eng == "bm25s":
            notes.append(f"backend {r.get('backend')}")
        if eng == "pisa":
            notes.append(
                f"pyterrier-pisa {r.get('peer_versions', {}).get('pyterrier_pisa')}, own "
                f"process; index on disk {fmt(r.get('index_disk_mb'), 0)} MB; memory = "
                f"peak RSS growth of its process; JVM loaded: {r.get('jvm_loaded')}"
            )
            if key != "qps_1thread":
                notes = ["same index as the row above"]
        if eng == "rank_bm25":
            notes.append(
                f"capped: first {r.get('capped_docs'):,} documents, "
                f"{r.get('capped_queries')} queries, one round"
            )
        first = key == "qps_1thread"
        mem = r.get("index_mb") if eng != "pisa" else r.get("index_disk_mb")
        build = fmt_s(r.get("build_s")) if first else "-"
        if first and len(r.get("build_rounds_s", [])) > 1:
            lo, hi = r["build_s_range"]
            build += f" ({fmt_s(lo)}-{fmt_s(hi)})"
        out.append(
            f"| {label} | {build} | "
            f"{fmt(mem, 0) if first else '-'}{' (disk)' if eng == 'pisa' and first else ''} | "
            f"{fmt(r.get('peak_build_mb'), 0) if first else '-'} | {qps(r, key + '_cpu')} | "
            f"{qps(r, key)} | {qps(r, 'qps_all_cores') if first else '-'} | "
            f"{'; '.join(notes)} |"
        )
    rv = rows.get("rowvoi")
    if rv and "qps_1thread" in rv:
        out += [
            "",
            "rowvoi's speed over each peer (median of per-round ratios, min-max; >1x: rowvoi "
            "faster) and build time ratio (peer / rowvoi: per build round when the JSON has "
            "build rounds, else one build each):",
            "",
            "| peer | 1 thread, CPU time | 1 thread, wall | all cores, wall | build time |",
            "| --- | ---: | ---: | ---: | ---: |",
        ]
        for eng, label, key in PEER_ROWS:
            r = rows.get(eng)
            if not r or key not in r:
                continue
            first = key == "qps_1thread"
            build = "-"
            if first and r.get("build_s") and rv.get("build_s"):
                build = (
                    round_ratio(rv, "build", r, "build")
                    if r.get("build_rounds_s") and rv.get("build_rounds_s")
                    else f"{r['build_s'] / rv['build_s']:.2f}x"
                )
            out.append(
                f"| {label} | {round_ratio(rv, 'qps_1thread_cpu', r, key + '_cpu')} | "
                f"{round_ratio(rv, 'qps_1thread', r, key)} | "
                f"{round_ratio(rv, 'qps_all_cores', r, 'qps_all_cores') if first else '-'} | "
                f"{build} |"
            )
    if any(data.get(f"top10_agreement_{o}") for o in ("bm25s", "tantivy", "pisa")):
        out.append("")
    for other in ("bm25s", "tantivy", "pisa"):
        a = data.get(f"top10_agreement_{other}")
        if a:
            line = (
                f"Top-10 vs {other}: identical lists for {a['identical_lists']} of "
                f"{a['queries']} queries, same sets for {a['same_sets']}"
            )
            if other == "bm25s" and "same_scores" in a:
                line += (
                    f", the same ten scores (within float32 rounding) for "
                    f"{a['same_scores']} -- where the scores agree the lists differ only "
                    f"in the order of tied documents, which bm25s leaves unspecified "
                    f"and rowvoi breaks by the lower id."
                )
            elif other == "tantivy":
                line += " (tantivy scores with lossy one-byte length norms, so near-ties differ)."
            elif other == "pisa":
                line += (
                    " (PISA's BM25 idf is Robertson's log((N - df + 0.5) / (df + 0.5)) "
                    "floored at a tiny epsilon, not Lucene's log(1 + ...): words in more than "
                    "half of the documents add almost nothing there, so its ranking differs)."
                )
            else:
                line += "."
            out.append(line)
    out += ["", f"Command: `{data['command']}`", ""]
    return out


def quality_section(q: dict) -> list[str]:
    out = [
        "### Cranfield quality",
        "",
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
        if name.startswith("rrf("):
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
    out += ["", f"Command: `{q['command']}`", ""]
    return out


def main() -> None:
    parts = [BEGIN, "## Lexical search (BM25)", ""]
    any_speed = None
    for name, title in (
        ("bm25_synth_zipf.json", "Synthetic corpus, {n} documents, Zipf queries"),
        ("bm25_synth_top10k.json", "Synthetic corpus, {n} documents, mid-frequency queries"),
        ("bm25_cranfield.json", "Cranfield speed"),
    ):
        d = load(name)
        if d:
            n_docs = next((r.get("n_docs") for r in d["results"] if r.get("n_docs")), 0)
            title = title.format(n=f"{n_docs:,}")
            any_speed = any_speed or d
            parts += speed_section(title, d)
    q = load("cranfield_lexical.json")
    if q:
        parts += quality_section(q)
    if any_speed:
        v = any_speed["versions"]
        parts += [
            "Machine: "
            + ", ".join(
                f"{k} {v[k]}"
                for k in (
                    "cpu",
                    "cpus",
                    "python",
                    "numpy",
                    "bm25s",
                    "numba",
                    "tantivy",
                    "rank_bm25",
                    "pyterrier_pisa",
                )
                if v.get(k)
            )
            + ".  "
            "The machine's two cores are shared with other jobs, whose load came and went "
            "during the session, so absolute figures move from run to run; within a table "
            "all engines were built one after another and their queries ran in interleaved "
            "rounds, so the per-round ratios within a table are the comparison.  The query "
            "mix decides which peer is fastest: Zipf queries include words found in most "
            "documents, which pruning (WAND, MaxScore) cannot skip; mid-frequency queries "
            "suit pruning well.",
            "",
        ]
    parts.append(END)
    section = "\n".join(parts) + "\n"
    path = os.path.join(RESULTS, "retrieval.md")
    text = ""
    if os.path.exists(path):
        with open(path) as f:
            text = f.read()
    if BEGIN in text and END in text:
        a, b = text.index(BEGIN), text.index(END) + len(END)
        text = text[:a] + section.rstrip("\n") + text[b:]
    else:
        if not text:
            text = "# Retrieval benchmarks\n\n"
        text = text.rstrip("\n") + "\n\n" + section
    with open(path, "w") as f:
        f.write(text)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
