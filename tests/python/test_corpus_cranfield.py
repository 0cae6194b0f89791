"""Acceptance on the Cranfield collection: nDCG@10 of every search mode.

The collection is in ``tests/data/cranfield`` (see its README). Title and
abstract (``.T`` + ``.W``) of each document are indexed as one surface;
queries are numbered by their position in ``cran.qry``; judgements graded
-1 are dropped and gain = 5 - grade. nDCG@10 is computed here, over the
225 queries.

The MiniLM corpus is built once per session through Python (MiniLM embeds
the 1,400 abstracts in a minute or more; conftest.py's ``cranfield_minilm``
gives each module its own copy); the CLI builds the same records
with the hashing embedder and is checked on lexical quality and on giving
the same hits as the Python API.
"""

import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rowvoi.corpus import CorpusStore, WholeText, build, from_mapping, open_corpus, search

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "cranfield"


def smart_records(path):
    """The records of a SMART-format file (the benchmarks' parser,
    bench/_common/cranfield.py, loaded by path: it needs only the standard
    library)."""
    spec = importlib.util.spec_from_file_location(
        "_bench_cranfield", ROOT / "bench" / "_common" / "cranfield.py"
    )
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look the module up by name
    spec.loader.exec_module(mod)
    return mod.records(str(path))


DOCS = {
    r["I"]: (r.get("T", "") + " " + r.get("W", "")).strip()
    for r in smart_records(DATA / "cran.all.1400")
}
QUERIES = [r.get("W", "").strip() for r in smart_records(DATA / "cran.qry")]


def qrels():
    out = {}
    for line in (DATA / "cranqrel").read_text().splitlines():
        parts = line.split()
        if len(parts) >= 3 and int(parts[2]) != -1:
            out.setdefault(int(parts[0]), {})[parts[1]] = int(parts[2])
    return out


QRELS = qrels()


def ndcg10(ranked, rel):
    gains = {d: 5 - g for d, g in rel.items()}
    dcg = sum(gains.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:10]))
    ideal = sorted(gains.values(), reverse=True)[:10]
    return dcg / sum(g / math.log2(i + 2) for i, g in enumerate(ideal))


def mean_ndcg(corpus, vectors=None, **kw):
    scores = []
    for q, text in enumerate(QUERIES, 1):
        if vectors is not None and kw.get("mode") != "lexical":
            kw["query_vector"] = vectors[q - 1]
        hits = search(corpus, text, k=10, **kw)
        scores.append(ndcg10([h.artifact_id for h in hits], QRELS[q]))
    return float(np.mean(scores))


def test_collection_shape():
    assert len(DOCS) == 1400 and len(QUERIES) == 225 and len(QRELS) == 225


@pytest.fixture(scope="module")
def minilm_corpus(cranfield_minilm):
    return cranfield_minilm  # conftest.py: built once per session, copied per module


@pytest.mark.xdist_group("cranfield-minilm")  # one worker builds and uses the corpus
def test_minilm_ndcg_per_mode(minilm_corpus):
    # each query embedded once (a text's vector does not depend on its batch)
    vecs = minilm_corpus.embedder.embed(QUERIES)
    got = {
        "lexical": mean_ndcg(minilm_corpus, mode="lexical"),
        "dense": mean_ndcg(minilm_corpus, vecs, mode="dense"),
        "rrf": mean_ndcg(minilm_corpus, vecs, mode="hybrid", fusion="rrf"),
        "blend": mean_ndcg(minilm_corpus, vecs, mode="hybrid", fusion="blend"),
    }
    # and a search without a precomputed vector embeds the query itself alike
    one = search(minilm_corpus, QUERIES[0], mode="dense", k=10)
    same = search(minilm_corpus, QUERIES[0], mode="dense", k=10, query_vector=vecs[0])
    assert [h.artifact_id for h in one][:5] == [h.artifact_id for h in same][:5]
    print("Cranfield nDCG@10 (MiniLM):", {k: round(v, 4) for k, v in got.items()})
    assert got["lexical"] >= 0.37, got
    assert got["dense"] >= 0.37, got
    assert got["rrf"] >= 0.41, got
    assert got["blend"] >= 0.416, got


@pytest.mark.xdist_group("cranfield-minilm")  # one worker builds and uses the corpus
def test_minilm_incremental_rebuild_keeps_quality(minilm_corpus):
    # ten edited abstracts: only those are embedded again, quality holds
    docs = dict(DOCS)
    for key in list(docs)[:10]:
        docs[key] = docs[key] + " (revised)"
    emb = minilm_corpus.embedder
    before = emb.texts_embedded
    c = build(
        from_mapping(docs, name="cranfield", strategy=WholeText(), embedder=emb),
        store=minilm_corpus.store,
    )
    assert c.last_build.n_changed == 10 and emb.texts_embedded - before == 10
    assert mean_ndcg(c, mode="hybrid", fusion="rrf") >= 0.41


def test_cli_build_and_search(tmp_path):
    records = tmp_path / "cran.jsonl"
    with open(records, "w") as fh:
        for key, text in DOCS.items():
            fh.write(json.dumps({"id": key, "text": text, "n": int(key)}) + "\n")
    env = dict(os.environ, ROWVOI_HOME=str(tmp_path / "home"))
    cli = [sys.executable, "-m", "rowvoi"]

    def run(*args):
        return subprocess.run(
            cli + list(args), env=env, capture_output=True, text=True, timeout=300
        )

    p = run(
        "build",
        "cran",
        "--records",
        str(records),
        "--id-key",
        "id",
        "--text-key",
        "text",
        "--metadata-keys",
        "n",
        "--strategy",
        "whole",
        "--embedder",
        "hashing",
        "--json",
    )
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    assert report["n_new"] == 1400 and report["records_added"] == 1398  # 2 empty abstracts
    p = run("build", "cran", "--json")  # registered: no flags needed; nothing to do
    assert p.returncode == 0 and json.loads(p.stdout)["texts_embedded"] == 0
    corpus = open_corpus(
        "cran", store=CorpusStore(tmp_path / "home" / "corpora" / "cran", name="cran")
    )
    assert mean_ndcg(corpus, mode="lexical") >= 0.37
    for mode in ("lexical", "dense", "hybrid"):
        p = run("search", "cran", QUERIES[0], "--mode", mode, "--k", "5", "--json")
        assert p.returncode == 0, p.stderr
        cli_hits = [(h["artifact_id"], round(h["score"], 5)) for h in json.loads(p.stdout)["hits"]]
        py_hits = [
            (h.artifact_id, round(h.score, 5)) for h in search(corpus, QUERIES[0], mode=mode, k=5)
        ]
        assert cli_hits == py_hits and len(cli_hits) == 5
    p = run(
        "search", "cran", "flow", "--mode", "lexical", "--filter", '{"n": {"$lte": 10}}', "--json"
    )
    hits = json.loads(p.stdout)["hits"]
    assert hits and all(int(h["artifact_id"]) <= 10 for h in hits)
