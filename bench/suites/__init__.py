"""The benchmark suites: one module each, listed in :data:`SUITES`.

Every module here is a suite the runner (``python -m bench``) can start;
each exposes ``main(argv, run) -> int``: ``argv`` is the suite's own
command line (its options are the ones it always had), ``run`` a
:class:`bench._common.results.Run` naming the results file and carrying
the provenance.  The table below is what ``python -m bench list`` prints;
it imports no suite (a suite imports numpy, rowvoi and its peers only when
it runs).

Groups: ``suite`` -- rowvoi beside a peer or a baseline, results cited by
the README and the docs; ``study`` -- a measurement kept because a cited
result or a code comment rests on it; ``c`` -- the C benches of
``bench/c/``, built by the runner (CMake option ``RV_BUILD_BENCH``).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType


@dataclass(frozen=True)
class Suite:
    """One suite: its module's name, what it measures, against whom, how
    long it takes (full and ``--quick``, on this 2-core machine), and the
    arguments ``--quick`` puts before the user's."""

    name: str
    measures: str
    peers: str
    full: str
    quick: str
    quick_args: tuple[str, ...] = ()
    group: str = "suite"
    #: bench/c programs the suite runs (the runner builds them first)
    c_benches: tuple[str, ...] = ()


SUITES: tuple[Suite, ...] = (
    Suite(
        "keys",
        "find_key (greedy, exact, ilp) and plan_key_path: time and key cost",
        "reference rowvoi 0.2.0 (bench/.refvenv)",
        "~30 min",
        "~2 min",
        ("--quick",),
    ),
    Suite(
        "belief",
        "CandidateMIPolicy, MIPolicy and a DisambiguationSession: time",
        "reference rowvoi 0.2.0 (bench/.refvenv)",
        "~15 min",
        "~2 min",
        ("--quick",),
    ),
    Suite(
        "dask_keys",
        "rowvoi.dask find_key / plan_key_path on 10M-100M-row Parquet: time, memory",
        "in-memory rowvoi.keys",
        "~2 h",
        "~3 min",
        ("--rows", "1000000,2000000", "--what", "key"),
    ),
    Suite(
        "dask_corpus",
        "rowvoi.dask sharded corpus (4 shards, 2 workers) vs one corpus: build, equality, "
        "query p50/p95 per mode, batch throughput",
        "one rowvoi corpus of the same documents",
        "~11 min (1M documents)",
        "~3 min",
        ("--docs", "20000", "--queries", "50"),
    ),
    Suite(
        "dask_corpus_serving",
        "a sharded corpus's queries through per-worker actor calls vs one pinned task per "
        "shard, interleaved: p50/p95 per mode, batch throughput, hits equal",
        "the task-per-shard serving it replaced",
        "~6 min (200k documents)",
        "~1 min",
        ("--docs", "20000", "--queries", "40"),
        group="study",
    ),
    Suite(
        "query",
        "rowvoi.query on a 10M-row Parquet file: time and peak memory",
        "pandas (whole file, needed columns)",
        "~15 min",
        "~1 min",
        ("--rows", "1000000", "--rounds", "1"),
    ),
    Suite(
        "rag",
        "select_context and next_question: time and answers",
        "plain Python/numpy baselines, pulp/CBC",
        "~5 min",
        "~15 s",
        ("--rounds", "1", "--exact-time-limit", "2"),
    ),
    Suite(
        "filters",
        "filtered BM25, flat and HNSW search against the allowed share",
        "hnswlib's filtered walk",
        "~20 min",
        "~1 min",
        ("--docs", "100000", "--vectors", "20000", "--hnsw-n", "10000", "--rounds", "1"),
    ),
    Suite(
        "bm25",
        "BM25 build, memory and QPS (synthetic Zipf corpus, Cranfield)",
        "bm25s, tantivy, PISA (bench/.pisavenv), rank_bm25",
        "~1 h per corpus",
        "~15 s",
        ("cranfield", "--rounds", "1", "--build-rounds", "1", "--rank-queries", "20"),
    ),
    Suite(
        "bm25_incremental",
        "changed documents applied to a 1M-document BM25 index vs a fresh build",
        "a fresh build; the previous engine (--baseline-python)",
        "~15 min",
        "~30 s",
        ("--docs", "100000", "--changes", "200", "--queries", "200", "--rounds", "2"),
    ),
    Suite(
        "cranfield",
        "ranking quality on Cranfield (nDCG@10, MAP, recall@100), BM25 and MiniLM",
        "bm25s and rank_bm25 on the same tokens",
        "~2 min",
        "~30 s",
        ("--no-dense",),
    ),
    Suite(
        "dense",
        "exact and HNSW vector search (QPS, recall), MiniLM embedder throughput",
        "numpy BLAS, faiss, hnswlib, onnxruntime, sentence-transformers",
        "~10 min per part",
        "~30 s",
        ("--part", "exact", "--sizes", "20000", "--clustered-sizes", "20000", "--rounds", "2"),
    ),
    Suite(
        "corpus",
        "rowvoi.corpus builds, rebuilds, query latency, nDCG, disk; at scale alone",
        "ir 0.1.61 (--ir-python)",
        "~15 min; scale: hours",
        "~5 min",
        ("--rounds", "1"),
    ),
    Suite(
        "corpus_paired",
        "corpus query latency in short alternating blocks, both systems warm",
        "ir 0.1.61 (--ir-python, required)",
        "~15 min per kind",
        "~3 min",
        ("--kind", "hashing", "--passes", "1", "--block", "75"),
    ),
    Suite(
        "calibration",
        "held-out abstention rates per search mode, score distributions",
        "ir 0.1.61 (--ir-python)",
        "~5 min",
        "~5 min",
    ),
    Suite(
        "eval",
        "discovery and selection quality on Cranfield, fair comparison, attribution",
        "ir 0.1.61 (--ir-python)",
        "~15 min",
        "~5 min",
        ("--curve-probes", "5", "--curve-trials", "1"),
    ),
    Suite(
        "maintain",
        "maintain --all after no change, touches and edits of a folder",
        "ir 0.1.61 (--ir-python, required)",
        "~15 min",
        "~15 s",
        ("--docs", "300", "--rounds", "1"),
    ),
    Suite(
        "graph",
        "CSR build and walks at 1M nodes, corpus graphs, fresh pages",
        "Raphtory 0.15.1 (--raphtory-python; parts peer, windows)",
        "~10 min per part",
        "~15 s",
        ("--part", "big", "--nodes", "100000", "--edges", "500000", "--rounds", "2"),
    ),
    Suite(
        "mcp_tools",
        "tool search over a 320-tool MCP catalogue: top-1 per mode, held-out abstention",
        "none (each search mode beside the others)",
        "~1 min",
        "~30 s",
        ("--requests", "40"),
    ),
    Suite(
        "large_k",
        "each search mode's p50 at k=100 over its p50 at k=10 on Cranfield; lexical vs bm25s",
        "bm25s (one call per query); the same search at k=10",
        "~30 s",
        "~10 s",
        ("--rounds", "2", "--queries", "60"),
    ),
    Suite(
        "query_latency",
        "one short query: MiniLM embedding p10/p50/p90, hybrid search over 100k documents",
        "none (the search with and without the embedding)",
        "~5 min",
        "~1 min",
        ("--docs", "10000", "--queries", "50", "--warmup", "5"),
    ),
    Suite(
        "named_corpora",
        "corpora named in calls: search by name and discover over three MiniLM corpora, "
        "peak RSS; a 100k-document corpus searched by name (p50/p90)",
        "the model and the corpus loaded for each call (every earlier rowvoi)",
        "~3 min",
        "~1 min",
        ("--queries", "20", "--docs", "20000"),
    ),
    Suite(
        "corpus_open",
        "a corpus opened in a fresh process: `rowvoi search` by name (wall, peak RSS) and "
        "the first search's parts (record table, index files, FlatIndex.add), 100k documents",
        "another rowvoi install (--against PYTHON, e.g. the previous commit)",
        "~4 min",
        "~1 min",
        ("--docs", "20000", "--rounds", "3", "--add", "20000"),
    ),
    Suite(
        "hnsw_load",
        "HNSWIndex.load step by step: what the structural check of a graph costs",
        "hnswlib's own load_index, before the checks",
        "~1 min",
        "~10 s",
        ("--n", "20000", "--reps", "3"),
    ),
    Suite(
        "corpus_collapse_fetch",
        "per-artifact collapse on chunked Cranfield corpora: artifacts returned, query cost",
        "another version of retrieval/corpus.py (--against), e.g. one before a change",
        "~10 min",
        "~3 min",
        ("--passes", "1"),
        group="study",
    ),
    Suite(
        "embed_invariance",
        "MiniLM int8: batch invariance, cosine and nDCG vs fp32, speed, derivation",
        "onnxruntime fp32, sentence-transformers (torch in this interpreter)",
        "~20 min",
        "~12 min",
        ("--rounds", "1", "--n-short", "100", "--n-passages", "10", "--derive-runs", "1")
        + ("--n-docs", "200"),
        group="study",
    ),
    Suite(
        "flat_int8_paths",
        "one query on an int8 flat index: exact screen vs int8 x8 scan; threads",
        "the approximate int8 scan",
        "~20 min",
        "~15 s",
        ("--sizes", "20000", "--data", "clustered,random", "--queries", "10"),
        group="study",
    ),
    Suite(
        "graph_csr_ab",
        "CSR build through Python, this engine vs another librowvoi, alternated",
        "another librowvoi (OTHER_LIB_DIR)",
        "~10 min",
        "~1 min",
        ("2", "1"),
        group="study",
    ),
    Suite(
        "c_graph_csr_ab",
        "CSR build through the C API (bench_graph_csr), binaries alternated",
        "bench_graph_csr linked to other libraries (NAME=BINARY)",
        "~10 min",
        "~15 s",
        ("1", "random", "copy"),
        group="c",
        c_benches=("bench_graph_csr",),
    ),
    Suite(
        "c_bm25",
        "BM25 top-k through the C API on a saved index (bench_bm25)",
        "none (the C engine without Python)",
        "~3 min",
        "~30 s",
        ("--docs", "50000", "--queries", "200"),
        group="c",
        c_benches=("bench_bm25",),
    ),
    Suite(
        "c_flat_exact1",
        "one exact search of a small int8 flat index through the C API",
        "none (the C engine without Python)",
        "~1 min",
        "~10 s",
        ("--calls", "200", "--rounds", "3"),
        group="c",
        c_benches=("bench_flat_exact1",),
    ),
)

BY_NAME = {s.name: s for s in SUITES}


def get(name: str) -> Suite:
    """The suite called ``name``; SystemExit naming the known ones otherwise."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise SystemExit(
            f"no suite {name!r}; known suites: {', '.join(BY_NAME)} (python -m bench list)"
        ) from None


def load(name: str) -> ModuleType:
    """Import the module of suite ``name`` (its heavy imports happen here)."""
    return importlib.import_module(f"{__name__}.{get(name).name}")
