"""A/B of corpus query latency between two installs of rowvoi (say, main and a branch).

    python bench/corpus_query_ab.py --a MAIN_VENV/bin/python --b BRANCH_VENV/bin/python
        [--modes dense,rrf,blend,lexical] [--rounds 6] [--markdown bench/results/corpus_query_ab.md]

Each side runs in its own interpreter (``--worker``): it builds Cranfield as
a corpus with the MiniLM document vectors cached by ``bench/corpus.py``
(through a callable, as there), then times ``search(corpus, q, k=10,
query_vector=vec, mode=...)`` over the 225 queries three times and reports
the median per query -- wall clock (``perf_counter``) and CPU
(``process_time``, the fairer figure on a busy machine) -- and the hits. The
sides alternate in rotating order for ``--rounds`` rounds, so the machine's
load falls on both alike; a figure is the median over rounds and the ratio
the median of per-round ratios (bench/_timing.py's method). The hits of the
two sides are compared in full (ids, record ids, scores, ``explain``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MODES = {
    "dense": {"mode": "dense"},
    "rrf": {"mode": "hybrid", "fusion": "rrf"},
    "blend": {"mode": "hybrid", "fusion": "blend"},
    "lexical": {"mode": "lexical"},
}


def worker(mode: str, reps: int) -> None:
    sys.path.insert(0, HERE)
    import corpus as cb

    from rowvoi.corpus import CorpusStore, WholeText, build, from_mapping, open_corpus, search

    docs, _, queries, _ = cb.cranfield()
    emb = cb.cached_table_embedder()
    store = CorpusStore(os.path.join(tempfile.mkdtemp(), "cran"), name="cran")
    build(
        from_mapping(docs, name="cran", strategy=WholeText(), embedder=emb),
        store=store,
        progress=False,
    )
    c = open_corpus("cran", store=store, embedder=emb)
    vecs = [emb[0]([q])[0] for q in queries]
    kw = MODES[mode]
    hits = []
    for v, q in zip(vecs, queries):  # warm-up, and the hits compared
        hits.append(
            [
                (h.artifact_id, h.record_id, h.score, h.explain)
                for h in search(c, q, k=10, query_vector=v, **kw)
            ]
        )
    wall, cpu = [], []
    for _ in range(reps):
        for v, q in zip(vecs, queries):
            t0, c0 = time.perf_counter(), time.process_time()
            search(c, q, k=10, query_vector=v, **kw)
            wall.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
    json.dump(
        {
            "wall_us": statistics.median(wall) * 1e6,
            "cpu_us": statistics.median(cpu) * 1e6,
            "hits": hits,
        },
        sys.stdout,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--a", required=True, help="python of side A")
    ap.add_argument("--b", required=True, help="python of side B")
    ap.add_argument("--modes", default="dense,rrf,blend,lexical")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--markdown", default=None)
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker, 3)
        return
    env = dict(os.environ, SKBUILD_EDITABLE_VERBOSE="0", OPENBLAS_NUM_THREADS="1")
    load = os.getloadavg()[0]
    lines = [
        "# Corpus query latency, A/B of two rowvoi installs",
        "",
        f"Produced by `python bench/corpus_query_ab.py --a A/bin/python --b B/bin/python "
        f"--modes {args.modes} --rounds {args.rounds}` on a {platform.machine()}, "
        f"{os.cpu_count()} cores (shared) machine, load average {load:.2f} at start, "
        f"{time.strftime('%Y-%m-%d %H:%M')}. A = `{args.a}`, B = `{args.b}`. Cranfield "
        "(1,400 documents, MiniLM vectors through a callable), k = 10, 225 queries x 3 per "
        "side per round; own time per query (the query vector is given).",
        "",
        "| mode | A p50 us (wall) | B p50 us (wall) | A / B wall | A / B CPU | identical hits |",
        "|---|---|---|---|---|---|",
    ]
    for mode in args.modes.split(","):
        res: dict[str, list[dict]] = {"a": [], "b": []}
        for r in range(args.rounds):
            for side in ("a", "b") if r % 2 == 0 else ("b", "a"):
                py = args.a if side == "a" else args.b
                out = subprocess.run(
                    [py, os.path.abspath(__file__), "--a", "-", "--b", "-", "--worker", mode],
                    capture_output=True,
                    text=True,
                    env=env,
                    check=True,
                )
                res[side].append(json.loads(out.stdout))
        aw = [x["wall_us"] for x in res["a"]]
        bw = [x["wall_us"] for x in res["b"]]
        rw = [x / y for x, y in zip(aw, bw)]
        rc = [x["cpu_us"] / y["cpu_us"] for x, y in zip(res["a"], res["b"])]
        same = all(x["hits"] == res["a"][0]["hits"] for x in res["a"] + res["b"])
        row = (
            f"| {mode} | {statistics.median(aw):.1f} ({min(aw):.1f}-{max(aw):.1f}) | "
            f"{statistics.median(bw):.1f} ({min(bw):.1f}-{max(bw):.1f}) | "
            f"{statistics.median(rw):.2f}x ({min(rw):.2f}-{max(rw):.2f}) | "
            f"{statistics.median(rc):.2f}x ({min(rc):.2f}-{max(rc):.2f}) | {same} |"
        )
        lines.append(row)
        print(row, flush=True)
    lines.append("")
    lines.append(f"Load average at the end: {os.getloadavg()[0]:.2f}.")
    text = "\n".join(lines) + "\n"
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)
    print(text)


if __name__ == "__main__":
    main()
