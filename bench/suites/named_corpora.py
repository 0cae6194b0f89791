#!/usr/bin/env python3
"""Corpora named in calls: the MiniLM model and a named corpus opened once
per process, against loading them for each call, as every earlier rowvoi did.

    python -m bench run named_corpora            # 60 queries per case (~3 min)
    python -m bench run named_corpora --quick    # 20 queries, 20,000 documents (~1 min)

Writes ``bench/results/named_corpora.md``.  Every case answers every query
once, the two ways of a row alternating query by query (their order
reversed on every other query), each query new to the process (no case
finds its vector remembered from another); milliseconds p50 / p90 of wall
clock, and the ratio of the p50s.

1. **The model.** Three corpora of the first 200 Cranfield documents each
   (``WholeText``, MiniLM int8): ``search("a", q, mode="hybrid")``,
   ``discover(["a", "b", "c"], q)``, and ``discover(opened, q)`` over the
   three opened once.  The baseline: each opened corpus holds a MiniLM model
   of its own (a new ``MiniLMEmbedder``, loaded at its first dense or hybrid
   query) and embeds the query itself -- the same search with the corpus
   opened as ``open_corpus(name, embedder=(fresh model's embed, pinned
   id))``: same vectors, same hits.  Then the peak RSS (``VmHWM``) of a
   fresh process that opens the three and discovers over them once, each
   way.
2. **The corpus.** One corpus of ``--docs`` documents, each two Cranfield
   sentences drawn at random (``WholeText``, the ``hashing`` embedder: no
   model time in the figures), searched by name, hybrid and lexical:
   ``search("big", q)`` against ``search(open_corpus("big"), q)`` (the
   corpus opened, and its indexes loaded, for each call).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._common.cranfield import corpus_data, sentence_pairs
from .._common.results import ROOT, Run, publish, scratch_dir, versions

NAMES = ("a", "b", "c")


def pcts(ms: list[float]) -> str:
    return " / ".join(f"{np.percentile(ms, p):.1f}" for p in (50, 90))


def table(rows: list[tuple[str, dict[str, list[float]]]], other: str, fmt: str) -> list[str]:
    """A results table: per row, this tree's and ``other``'s p50 / p90 and
    the ratio of the p50s (formatted with ``fmt``)."""
    out = [f"| call | this tree | {other} | ratio |", "|---|---|---|---|"]
    for label, res in rows:
        a, b = res["this tree"], res[other]
        ratio = float(np.median(b) / np.median(a))
        out.append(f"| {label} ({len(a)} queries) | {pcts(a)} | {pcts(b)} | {ratio:{fmt}}x |")
    return out


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
        "from bench.suites.named_corpora import NAMES, per_corpus_model\n"
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
        prog="python -m bench run named_corpora", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--queries", type=int, default=60, help="queries per case")
    ap.add_argument("--docs", type=int, default=100_000, help="documents of part 2's corpus")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")  # (no floors calibrated: discover warns nothing here)

    home = scratch_dir("rowvoi-bench-named-corpora-")  # (removed at exit)
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

    # part 2: one big corpus searched by name
    _, _, mapping = sentence_pairs(docs, args.docs)
    t0 = time.perf_counter()
    build(from_mapping(mapping, name="big", embedder="hashing"), progress=False)
    big_s = time.perf_counter() - t0
    big: list[tuple[str, dict[str, list[float]]]] = []
    for mode, qs in (("hybrid", queries[:n]), ("lexical", queries[n : 2 * n])):
        big.append(
            (
                f"{mode} search by name",
                alternating(
                    {
                        "this tree": lambda q, m=mode: search("big", q, mode=m),
                        "opened for each call": lambda q, m=mode: search(
                            open_corpus("big"), q, mode=m
                        ),
                    },
                    qs,
                ),
            )
        )

    lines = [
        "# Corpora named in calls: the model and the corpus opened once per process",
        "",
        *run.header(versions("numpy", "onnxruntime")),
        "## 1. The model: three MiniLM corpora",
        "",
        f"Three corpora of 200 Cranfield documents each (MiniLM int8, built in "
        f"{build_s:.0f} s). Milliseconds per call, p50 / p90, the two ways alternating "
        "query by query, every query new to the process; ratio of the p50s.",
        "",
        *table(rows, "a model per opened corpus", ".1f"),
        "",
        "Peak RSS of a fresh process that opens the three corpora and discovers over "
        f"them once: {rss['shared']:.0f} MB with the model shared, "
        f"{rss['per corpus']:.0f} MB with a model per corpus.",
        "",
        f"## 2. The corpus: {args.docs:,} documents searched by name",
        "",
        f"Built in {big_s:.0f} s (two Cranfield sentences per document, the hashing "
        "embedder). `k=10`.",
        "",
        *table(big, "opened for each call", ".0f"),
        "",
    ]
    publish(run.out, lines)
    return 0
