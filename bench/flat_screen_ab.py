"""A/B of the dense query's steps, measured inside the query loop, between two installs.

    python bench/flat_screen_ab.py --a MAIN_VENV/bin/python --b BRANCH_VENV/bin/python
        [--kind hash|minilm] [--procs 10] [--rounds 3]

Each side runs in its own interpreter (``--worker``): it builds Cranfield
(1,398 documents) as a corpus with the hashing embedder at 512 dimensions
(``--kind hash``) or with the MiniLM vectors cached by ``bench/corpus.py``
through a callable (``--kind minilm``), then, for each of the 225 queries,
embeds the query and times -- in the loop, so with the caches as a real
query finds them -- the C exact search of the flat index
(``flat._search_vector(qv, 11, True, 1)``), building the hits after it,
the two together, and a whole ``search(corpus, q, k=10, mode="dense")``.
Per process: p50 and p95 over ``rounds`` x 225 queries, and a checksum of
every query's ids and scores. The sides alternate (A B, B A, ...) over
``procs`` processes each; a figure is the median over processes, and the
ratio A / B is reported both as the ratio of those medians and as the median
of the per-pair ratios (neighbouring processes). The 1-minute load average
is printed (the machine is shared).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
STEPS = ("C", "hits", "C+hits", "search")


def worker(kind: str, rounds: int) -> None:
    sys.path.insert(0, HERE)
    import corpus as cb

    import rowvoi.corpus.retrieve as R
    from rowvoi.corpus import CorpusStore, WholeText, build, from_mapping, open_corpus, search

    docs, _, queries, _ = cb.cranfield()
    if kind == "hash":
        emb: object = "hashing:512"
    else:
        emb = cb.cached_table_embedder()
    store = CorpusStore(os.path.join(tempfile.mkdtemp(), "cran"), name="cran")
    mapping = from_mapping(docs, name="cran", strategy=WholeText(), embedder=emb)
    build(mapping, store=store, progress=False)
    c = open_corpus("cran", store=store, embedder=emb)
    embedder = c.embedder
    search(c, queries[0], k=10, mode="dense", query_vector=embedder.embed([queries[0]])[0])
    p = R._Params(10, "dense", "rrf", 60, 0.5, 1.0, None, True, None, 50, "auto", False)
    pc = time.perf_counter
    times: dict[str, list[float]] = {s: [] for s in STEPS}
    digest = hashlib.sha256()
    for _ in range(rounds):
        for q in queries:
            v = embedder.embed([q])[0]
            t0 = pc()
            qv = R._query_vector(v)
            cur = c._current()
            t1 = pc()
            ids, sc = cur.flat._search_vector(qv, 11, True, 1)
            t2 = pc()
            R._dense_hits(c, cur.records, ids[:10], sc[:10], "flat", p)
            t3 = pc()
            times["C"].append(t2 - t1)
            times["hits"].append(t3 - t2)
            times["C+hits"].append(t3 - t0)
            digest.update(ids.tobytes() + sc.tobytes())
            v = embedder.embed([q])[0]
            t0 = pc()
            search(c, q, k=10, mode="dense", query_vector=v)
            times["search"].append(pc() - t0)
    out: dict[str, object] = {"checksum": digest.hexdigest()[:16]}
    for s, ts in times.items():
        ts.sort()
        out[s] = (ts[len(ts) // 2] * 1e6, ts[int(0.95 * len(ts))] * 1e6)
    print(json.dumps(out))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--a", help="python of side A (say, main)")
    ap.add_argument("--b", help="python of side B (say, the branch)")
    ap.add_argument("--kind", choices=("hash", "minilm"), default="hash")
    ap.add_argument("--procs", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.kind, args.rounds)
        return
    if not args.a or not args.b:
        ap.error("--a and --b are required")
    env = dict(os.environ, SKBUILD_EDITABLE_VERBOSE="0")
    env.pop("PYTHONPATH", None)
    res: dict[str, list[dict]] = {"A": [], "B": []}
    loads = []
    for i in range(args.procs):
        for side in ("A", "B") if i % 2 == 0 else ("B", "A"):
            py = args.a if side == "A" else args.b
            cmd = [py, os.path.abspath(__file__), "--worker", "--kind", args.kind]
            cmd += ["--rounds", str(args.rounds)]
            r = subprocess.run(cmd, capture_output=True, text=True, env=env)
            lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
            if r.returncode or not lines:
                raise SystemExit(f"side {side} failed:\n{r.stderr[-3000:]}")
            res[side].append(json.loads(lines[-1]))
        loads.append(os.getloadavg()[0])
    sums = {s: sorted({r["checksum"] for r in res[s]}) for s in res}
    same = sums["A"] == sums["B"] and len(sums["A"]) == 1
    print(
        f"{args.kind}: {args.procs} processes per side x {args.rounds} rounds x 225 queries; "
        f"1-min load average {min(loads):.2f} .. {max(loads):.2f} "
        f"(median {statistics.median(loads):.2f})"
    )
    print(f"ids and scores of every query: {'identical' if same else 'DIFFER'} ({sums})")
    print("step     A p50   B p50  A/B  pair-A/B |  A p95   B p95  A/B  pair-A/B   (us)")
    for s in STEPS:
        row = []
        for k in (0, 1):
            a = statistics.median(r[s][k] for r in res["A"])
            b = statistics.median(r[s][k] for r in res["B"])
            pair = statistics.median(x[s][k] / y[s][k] for x, y in zip(res["A"], res["B"]))
            row.append(f"{a:7.1f} {b:7.1f} {a / b:4.2f} {pair:8.2f}")
        print(f"{s:7s} " + " | ".join(row))


if __name__ == "__main__":
    main()
