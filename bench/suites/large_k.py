#!/usr/bin/env python3
"""Large k on Cranfield: what a search at k=100 costs against the same search
at k=10, per mode, and rowvoi's lexical search against bm25s at both k.

    python -m bench run large_k                 # 5 rounds, all 225 queries (~1 min)
    python -m bench run large_k --quick         # 2 rounds, 60 queries (~20 s)

Writes ``bench/results/large_k.md``.  One process: the Cranfield collection
built once as a corpus (``WholeText``, the ``hashing:512`` embedder, so no
model is needed), every query's vector computed before the clock starts and
passed as ``query_vector=`` (the embedding is the same at any k).  A case is
one mode at one k, answering every query once through
``rowvoi.corpus.search``.  A search's hits build their text, metadata and
``explain`` when one of them is first read (``SearchHit``'s Notes), so
each mode runs twice: the search alone, and the search with every hit's
fields read (what a caller who reads them all pays).  Each round runs
every case once, order rotating (``bench._common.timing.interleaved``),
and a case's figure for a round is the median time of its queries.  The
ratio of k=100 to k=10 is taken round by round (the two ran in the same
round, under the same load): its median and range over rounds are
reported.

The peer: ``bm25s`` (method "lucene", k1 1.2, b 0.75, its numba backend
when numba is installed, ``bm25s.tokenize`` with no stopwords or stemmer:
the bm25 suite's settings), one ``tokenize`` + ``retrieve`` call per query,
as a caller with one query at a time uses it.  Against it stand rowvoi's
``BM25Index.search`` (an index of the same texts alone) and
``rowvoi.corpus.search(..., mode="lexical")`` (the corpus: hits with ids
and scores, their texts, metadata and ``explain`` built when read -- and
read, in the second row; bm25s returns document numbers and scores).  No
peer stands beside the dense and hybrid modes: the figure is rowvoi's own
ratio.
"""

from __future__ import annotations

import argparse
import itertools
import math
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from .._common.cranfield import corpus_data
from .._common.results import Run, publish, scratch_dir, version_of, versions
from .._common.timing import SelfTimed, interleaved, ratio, spread

#: (label, search() keywords) of the corpus's modes
MODES = (
    ("lexical", {"mode": "lexical"}),
    ("dense", {"mode": "dense"}),
    ("hybrid rrf", {"mode": "hybrid", "fusion": "rrf"}),
    ("hybrid blend", {"mode": "hybrid", "fusion": "blend"}),
)
KS = (10, 100)
#: the suffix of a case whose every hit's fields are read
READ = ", hits read"


def read_all(hits: Any) -> Any:
    """Every hit's text, metadata and explain, read (built, if deferred)."""
    for h in hits:
        _ = h.text, h.metadata, h.explain
    return hits


def per_query_median(
    fn: Callable[[str], Any], queries: list[str], best: list[float] | None = None
) -> SelfTimed:
    """Every query through ``fn`` once: the median wall and CPU seconds of
    one, as the round's figure of the case; ``best``, when given, keeps
    each query's fastest wall time over the rounds."""
    wall, cpu = [], []
    for q in queries:
        c, t = time.process_time(), time.perf_counter()
        fn(q)
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    if best is not None:
        for i, w in enumerate(wall):
            best[i] = min(best[i], w)
    return SelfTimed(statistics.median(wall), statistics.median(cpu))


def main(argv: Sequence[str], run: Run) -> int:
    """The suite (``run``: the runner's context)."""
    ap = argparse.ArgumentParser(
        prog="python -m bench run large_k", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--queries", type=int, default=0, help="first N queries (0: all 225)")
    args = ap.parse_args(argv)

    import numpy as np

    from rowvoi.corpus import CorpusStore, WholeText, build, from_mapping, search
    from rowvoi.index.lexical import BM25Index

    docs, _, queries, _ = corpus_data()
    queries = [" ".join(q.split()) for q in queries]
    if args.queries:
        queries = queries[: args.queries]
    scratch = scratch_dir("rowvoi-bench-large-k-")
    emb = "hashing:512"
    corpus = build(
        from_mapping(docs, name="cran", strategy=WholeText(), embedder=emb),
        store=CorpusStore(f"{scratch}/cran", name="cran"),
        progress=False,
    )
    vec = {q: v for q, v in zip(queries, corpus.embedder.embed(queries))}
    lexical = BM25Index()  # the index alone, over the same texts
    lexical.add(list(docs.values()))

    cases: dict[str, Callable[[], SelfTimed]] = {}
    #: each case's fastest wall seconds of each query over the rounds
    best: dict[str, list[float]] = {}
    for (label, kw), k, read in itertools.product(MODES, KS, (False, True)):
        name = f"{label}{READ if read else ''} k={k}"
        best[name] = [math.inf] * len(queries)

        def case(
            kw: dict[str, Any] = kw, k: int = k, read: bool = read, name: str = name
        ) -> SelfTimed:
            def one(q: str) -> Any:
                if kw["mode"] == "lexical":
                    hits = search(corpus, q, k=k, **kw)
                else:
                    hits = search(corpus, q, k=k, query_vector=vec[q], **kw)
                return read_all(hits) if read else hits

            return per_query_median(one, queries, best[name])

        cases[name] = case
    for k in KS:
        best[f"BM25Index.search k={k}"] = [math.inf] * len(queries)
        cases[f"BM25Index.search k={k}"] = lambda k=k: per_query_median(
            lambda q: lexical.search(q, k), queries, best[f"BM25Index.search k={k}"]
        )

    peer = None
    if version_of("bm25s"):
        import bm25s

        try:
            import numba  # noqa: F401

            backend = "numba"
        except ImportError:
            backend = "numpy"
        texts = list(docs.values())
        toks = bm25s.tokenize(texts, lower=True, stopwords=None, stemmer=None, show_progress=False)
        retriever = bm25s.BM25(method="lucene", k1=1.2, b=0.75, backend=backend)
        retriever.index(toks, show_progress=False)
        peer = f"bm25s {version_of('bm25s')} ({backend})"

        def bm25s_one(q: str, k: int) -> Any:
            qt = bm25s.tokenize(
                [q],
                lower=True,
                stopwords=None,
                stemmer=None,
                return_ids=False,
                show_progress=False,
            )
            return retriever.retrieve(qt, k=k, n_threads=1, show_progress=False)

        for k in KS:
            best[f"bm25s k={k}"] = [math.inf] * len(queries)
            cases[f"bm25s k={k}"] = lambda k=k: per_query_median(
                lambda q: bm25s_one(q, k), queries, best[f"bm25s k={k}"]
            )

    # a first pass of every query in every case (numba compiles, caches
    # warm), not counted in the fastest times
    for case_fn in cases.values():
        case_fn()
    for b in best.values():
        b[:] = [math.inf] * len(b)
    res = interleaved(cases, args.rounds, warmup=0)
    us = {name: s.wall_s().scaled(1e6) for name, s in res.items()}

    lines = [
        "# Large k on Cranfield: k=100 against k=10, per mode",
        "",
        *run.header(versions("numpy", peers={"bm25s": version_of("bm25s")})),
        f"{len(docs):,} documents, {len(queries)} queries; the corpus built with "
        f"`WholeText` and `{emb}`, query vectors given. Each figure: the median "
        f"microseconds of one query, median (min-max) over {args.rounds} interleaved "
        "rounds; ratios taken round by round.",
        "",
        "| search | p50 at k=10, us | p50 at k=100, us | k=100 / k=10 |",
        "|---|---|---|---|",
    ]
    rows = [label + r for label, _ in MODES for r in ("", READ)]
    rows += ["BM25Index.search"] + (["bm25s"] if peer else [])
    for label in rows:
        a, b = f"{label} k=10", f"{label} k=100"
        r = ratio(res[b].wall, res[a].wall)
        lines.append(
            f"| {label} | {us[a].fmt(',.1f')} | {us[b].fmt(',.1f')} | {r.fmt('.2f', 'x')} |"
        )
    if peer:
        lines += [
            "",
            f"Against {peer}, one `tokenize` + `retrieve` call per query (>1x: rowvoi "
            "faster; per-round ratio of the medians):",
            "",
            "| rowvoi | at k=10 | at k=100 |",
            "|---|---|---|",
        ]
        for label, mine in (
            ("BM25Index.search", "BM25Index.search"),
            ("rowvoi.corpus.search, mode lexical", "lexical"),
            ("the same, every hit's fields read", f"lexical{READ}"),
        ):
            cells = [
                ratio(res[f"bm25s k={k}"].wall, res[f"{mine} k={k}"].wall).fmt(".2f", "x")
                for k in KS
            ]
            lines.append(f"| {label} | {cells[0]} | {cells[1]} |")

    def worst(suffix: str) -> float:
        return max(
            spread(
                np.array(res[f"{label}{suffix} k=100"].wall)
                / np.array(res[f"{label}{suffix} k=10"].wall)
            ).median
            for label, _ in MODES
        )

    # the steadier figure on a shared host: each query's fastest time over
    # the rounds (noise only adds time), the median of those over queries
    fast = {name: statistics.median(b) * 1e6 for name, b in best.items()}
    lines += [
        "",
        f"The costliest mode's k=100 is {worst(''):.2f}x its k=10 here, and "
        f"{worst(READ):.2f}x with every hit's fields read (the goal is 2x).",
        "",
        f"The same cases by each query's fastest time over the {args.rounds} rounds "
        "(noise on a shared host only adds time), median over the queries:",
        "",
        "| search | at k=10, us | at k=100, us | k=100 / k=10 |",
        "|---|---|---|---|",
    ]
    for label in rows:
        a, b = fast[f"{label} k=10"], fast[f"{label} k=100"]
        lines.append(f"| {label} | {a:,.1f} | {b:,.1f} | {b / a:.2f}x |")
    if peer:
        cells = [
            f"{fast[f'bm25s k={k}'] / fast[f'{mine} k={k}']:.2f}x"
            for mine in ("BM25Index.search", "lexical")
            for k in KS
        ]
        lines += [
            "",
            f"Against {peer} by the same figure: `BM25Index.search` {cells[0]} at k=10 "
            f"and {cells[1]} at k=100; `rowvoi.corpus.search` (lexical) {cells[2]} and "
            f"{cells[3]}.",
        ]
    costliest = max(fast[f"{label} k=100"] / fast[f"{label} k=10"] for label, _ in MODES)
    lines += ["", f"The costliest mode's k=100 by this figure: {costliest:.2f}x its k=10.", ""]
    publish(run.out, lines)
    return 0
