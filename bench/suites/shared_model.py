#!/usr/bin/env python3
"""Several MiniLM corpora in one process: searching by name, and discovery
over three corpora at once, with the model loaded once per process and each
query embedded once, against a model loaded per opened corpus.

    python -m bench run shared_model            # 60 queries per case (~1 min)
    python -m bench run shared_model --quick    # 20 queries per case (~30 s)

Writes ``bench/results/shared_model.md``.  Three corpora of the first 200
Cranfield documents each (``WholeText``, MiniLM int8), built once under a
scratch ``ROWVOI_HOME``.  Each case answers every query once, the cases of
one row alternating query by query (their order reversed on every other
query), each query new to the process (no case finds a query's vector
remembered from another); milliseconds p50 / p90 of wall clock:

* this tree: ``search("a", q, mode="hybrid")``, ``discover(["a", "b", "c"],
  q)`` and ``discover(opened, q)`` over three corpora opened once;
* the baseline, what every earlier rowvoi did: each opened corpus held a
  MiniLM model of its own (a new ``MiniLMEmbedder``, loaded at the corpus's
  first dense or hybrid query) and embedded the query itself.  It is the
  same search with the corpus opened as ``open_corpus(name,
  embedder=(fresh model's embed, pinned id))``: same vectors, same hits,
  the model's load and the query's embedding paid per corpus.

Then the peak RSS of a fresh process that opens the three corpora and
discovers over them once, each way (``VmHWM``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._common.cranfield import corpus_data
from .._common.results import ROOT, Run, versions, write

NAMES = ("a", "b", "c")


def pcts(ms: list[float]) -> str:
    return " / ".join(f"{np.percentile(ms, p):.1f}" for p in (50, 90))


def alternating(
    cases: dict[str, Callable[[str], Any]], queries: list[str]
) -> dict[str, list[float]]:
    """Per case, the milliseconds of each query, cases in turn (order
    reversed on every other query)."""
    out: dict[str, list[float]] = {name: [] for name in cases}
    names = list(cases)
    for i, q in enumerate(queries):
        for name in names if i % 2 == 0 else names[::-1]:
            t = time.perf_counter()
            cases[name](q)
            out[name].append(1e3 * (time.perf_counter() - t))
    return out


def per_corpus_model(name: str) -> Any:
    """The corpus opened as every earlier rowvoi opened it: a MiniLM model
    of its own, its queries embedded by it."""
    from rowvoi.corpus import open_corpus
    from rowvoi.index.embed import MiniLMEmbedder

    eng = MiniLMEmbedder()
    return open_corpus(name, embedder=(eng.embed, eng.embedder_id))


def rss_child(way: str, query: str) -> float:
    """Peak RSS (MB) of a fresh process that opens the corpora ``way``
    ("shared" or "per corpus") and discovers over them once."""
    code = (
        "import json, sys, warnings\n"
        "warnings.simplefilter('ignore')\n"
        "from rowvoi.corpus import discover, open_corpus\n"
        "from bench._common.machine import peak_rss_mb\n"
        "from bench.suites.shared_model import NAMES, per_corpus_model\n"
        "way, q = sys.argv[1], sys.argv[2]\n"
        "cs = [open_corpus(n) if way == 'shared' else per_corpus_model(n) for n in NAMES]\n"
        "discover(cs, q)\n"
        "print(json.dumps(peak_rss_mb()))\n"
    )
    p = subprocess.run(
        [sys.executable, "-c", code, way, query],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=dict(os.environ),
        check=True,
    )
    return float(json.loads(p.stdout.strip().splitlines()[-1]))


def main(argv: Sequence[str], run: Run) -> int:
    """The suite (``run``: the runner's context)."""
    ap = argparse.ArgumentParser(
        prog="python -m bench run shared_model", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--queries", type=int, default=60, help="queries per case")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")  # (no floors calibrated: discover warns nothing here)

    home = tempfile.mkdtemp(prefix="rowvoi-bench-shared-model-")
    os.environ["ROWVOI_HOME"] = home
    from rowvoi.corpus import build, discover, from_mapping, open_corpus, search

    docs, _, queries, _ = corpus_data()
    queries = [" ".join(q.split()) for q in queries]
    need = 3 * args.queries + 2
    if len(queries) < need:
        raise SystemExit(f"--queries {args.queries}: Cranfield has {len(queries)} queries")
    small = dict(list(docs.items())[:200])
    t0 = time.perf_counter()
    for name in NAMES:
        build(from_mapping(small, name=name, embedder="minilm"), progress=False)
    build_s = time.perf_counter() - t0

    n = args.queries
    q_name, q_names, q_open = queries[:n], queries[n : 2 * n], queries[2 * n : 3 * n]
    rows: list[tuple[str, dict[str, list[float]]]] = []
    rows.append(
        (
            "hybrid search of one corpus by name",
            alternating(
                {
                    "this tree": lambda q: search("a", q, mode="hybrid"),
                    "a model per opened corpus": lambda q: search(
                        per_corpus_model("a"), q, mode="hybrid"
                    ),
                },
                q_name,
            ),
        )
    )
    rows.append(
        (
            "discover over three corpora by name",
            alternating(
                {
                    "this tree": lambda q: discover(list(NAMES), q),
                    "a model per opened corpus": lambda q: discover(
                        [per_corpus_model(x) for x in NAMES], q
                    ),
                },
                q_names,
            ),
        )
    )
    shared = [open_corpus(x) for x in NAMES]
    own = [per_corpus_model(x) for x in NAMES]
    discover(shared, queries[-1])  # each loads its model before the clock
    discover(own, queries[-1])
    rows.append(
        (
            "discover over three corpora opened once",
            alternating(
                {
                    "this tree": lambda q: discover(shared, q),
                    "a model per opened corpus": lambda q: discover(own, q),
                },
                q_open,
            ),
        )
    )
    rss = {way: rss_child(way, queries[-2]) for way in ("shared", "per corpus")}

    lines = [
        "# Several MiniLM corpora in one process: the model loaded once",
        "",
        *run.header(versions("numpy", "onnxruntime")),
        f"Three corpora of 200 Cranfield documents each (MiniLM int8, built in "
        f"{build_s:.0f} s). Milliseconds per call, p50 / p90, the two ways alternating "
        "query by query, every query new to the process; ratio of the p50s.",
        "",
        "| call | this tree | a model per opened corpus | ratio |",
        "|---|---|---|---|",
    ]
    for label, res in rows:
        a, b = res["this tree"], res["a model per opened corpus"]
        lines.append(
            f"| {label} ({len(a)} queries) | {pcts(a)} | {pcts(b)} | "
            f"{np.median(b) / np.median(a):.1f}x |"
        )
    lines += [
        "",
        "Peak RSS of a fresh process that opens the three corpora and discovers over "
        f"them once: {rss['shared']:.0f} MB with the model shared, "
        f"{rss['per corpus']:.0f} MB with a model per corpus.",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    write(run.out, text)
    return 0
