"""A search or a walk that finds nothing says why: ``SearchHits.reason``
in the library, ``(no hits: REASON)`` in the CLI's human output and
``"reason"`` in its JSON (issue 28, item 9)."""

import json
import pickle

import numpy as np
import pytest

from rowvoi.cli.main import main
from rowvoi.corpus import CorpusStore, Fields, SearchHits, build, from_mapping, search
from rowvoi.graph import collapsed_tree_policy, reverse_dependency_policy, traverse
from rowvoi.graph.surfaces import MemorySurfaces
from rowvoi.index.embed import HashingEmbedder

DOCS = {
    "a": {"title": "wing lift", "body": "lift and drag of a thin wing", "year": 1960},
    "b": {"title": "pipe flow", "body": "heat transfer in a pipe", "year": 1970},
}


@pytest.fixture(scope="module")
def corpus():
    src = from_mapping(
        DOCS,
        strategy=Fields(("title", "body")),
        embedder="hashing:64",
        metadata_of=lambda aid, raw: {"year": raw["year"]},
        filter_types={"year": "numeric"},
    )
    return build(src, store=CorpusStore.memory())


@pytest.mark.parametrize(
    "kw,reason",
    [
        (
            dict(surfaces="summary"),
            "the corpus has no surfaces of kind 'summary' (its kinds: body, title)",
        ),
        (
            dict(surfaces=["summary", "abstract"]),
            "the corpus has no surfaces of kinds 'abstract', 'summary' (its kinds: body, title)",
        ),
        (dict(filter={"year": {"$gt": 2000}}), "no record matches the filter"),
        (
            dict(filter={"year": {"$gt": 2000}}, surfaces="title"),
            "no record of kind 'title' matches the filter",
        ),
        (
            dict(mode="lexical", query="the of and"),
            "the query has no searchable terms (the analyzer drops punctuation and stopwords)",
        ),
        (
            dict(mode="lexical", query="zebras"),
            "no record contains a query term (analysed: 'zebra')",
        ),
        (
            dict(mode="lexical", query="wing", filter={"year": 1970}),
            "no record (of those the filter and surface kinds allow) contains a query "
            "term (analysed: 'wing')",
        ),
        (
            dict(mode="dense", query="", index="flat"),
            "the query's embedding is the zero vector (nothing in the query the "
            "embedder represents), so no cosine can rank the records",
        ),
        (
            dict(mode="hybrid", query="..."),
            "the query's embedding is the zero vector (nothing in the query the "
            "embedder represents), so no cosine can rank the records; and the query "
            "has no searchable terms (the analyzer drops punctuation and stopwords)",
        ),
    ],
)
def test_an_empty_search_says_why(corpus, kw, reason):
    kw = {"query": "wing", **kw}
    hits = search(corpus, kw.pop("query"), **kw)
    assert isinstance(hits, SearchHits) and hits == [] and hits.reason == reason


def test_a_zero_query_vector_says_why_on_every_path(corpus):
    """The compiled dense call (vector, flat, no filter) and the general
    path give the same reason."""
    zero = np.zeros(64)
    fast = search(corpus, "", query_vector=zero)
    slow = search(corpus, "", query_vector=zero, surface_weights={"title": 1.0})
    assert fast == slow == [] and fast.reason == slow.reason
    assert "zero vector" in fast.reason


def test_hits_have_no_reason_and_stay_a_list(corpus):
    for mode in ("dense", "lexical", "hybrid"):
        hits = search(corpus, "wing lift", mode=mode)
        assert isinstance(hits, list) and hits and hits.reason is None
        assert hits[0].artifact_id == "a"
    empty = search(corpus, "wing", surfaces="summary")
    full = search(corpus, "wing")
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        back = pickle.loads(pickle.dumps(empty, protocol=protocol))
        assert type(back) is SearchHits and back == [] and back.reason == empty.reason
        back = pickle.loads(pickle.dumps(full, protocol=protocol))
        assert type(back) is SearchHits and back == full and back.reason is None
    assert json.dumps([h.to_dict() for h in full])  # plain JSON still


# ------------------------------------------------------------------ walks


def test_an_empty_walk_says_why(corpus):
    # the default summary kinds: none in this corpus
    hits = traverse("wing", corpus, policy=collapsed_tree_policy())
    assert hits == [] and hits.reason == (
        "no surface of the summary kinds (description, synopsis, capability, document) "
        "matched the query: the corpus has no surfaces of kinds 'description', "
        "'synopsis', 'capability', 'document' (its kinds: body, title)"
    )
    routed = collapsed_tree_policy(summary_kinds=["title"], leaf_kinds=["body"])
    assert len(traverse("wing", corpus, policy=routed)) == 2
    hits = traverse("wing", corpus, policy=routed, max_depth=0)
    assert hits == [] and "max_depth=0 stops before them: use max_depth >= 1" in hits.reason
    hits = traverse("wing", corpus, policy=routed, node_budget=1)
    assert hits == [] and hits.reason == (
        "the walk visited 1 node, none of them a result (the node budget (1) ran out)"
    )
    hits = traverse("", corpus, policy=routed)
    assert hits == [] and hits.reason.startswith(
        "no surface of the summary kinds (title) matched the query: the query's "
        "embedding is the zero vector"
    )
    hits = traverse("wing", corpus, policy=reverse_dependency_policy(seeds=["zz", "yy"]))
    assert hits == [] and hits.reason == "none of the seeds ('zz', 'yy') is a node of the graph"


def test_an_empty_walk_on_memory_surfaces_and_a_policy_of_ones_own():
    store = MemorySurfaces({"a": [("chunk", "wing lift")]}, HashingEmbedder(dim=32))
    hits = traverse("wing", store, policy=collapsed_tree_policy(summary_kinds=["summary"]))
    assert hits.reason.endswith("the corpus has no surfaces of kind 'summary' (its kinds: chunk)")

    class NoSeeds:
        """A policy without empty_reason that finds no start node."""

        def seed(self, query, store, state):
            return []

        def score(self, node, store, state):
            return 0.0

        def select(self, scored, state):
            return scored

        def expand(self, node, store, state):
            return []

        def node_id(self, node):
            return node

        def stop(self, state):
            return False

        def to_hit(self, node, score, depth, seed, store, state):
            return None

    hits = traverse("wing", store, policy=NoSeeds())
    assert hits.reason == "the policy found no node to start the walk from"

    class Routers(NoSeeds):
        def seed(self, query, store, state):
            return ["x", "y"]

        def expand(self, node, store, state):
            return [node + "1"]

    hits = traverse("wing", store, policy=Routers(), max_depth=1)
    assert hits.reason == (
        "the walk visited 4 nodes, none of them a result (max_depth=1 stopped it "
        "before their neighbours)"
    )


# -------------------------------------------------------------------- CLI


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("ROWVOI_HOME", str(tmp_path / "home"))
    recs = tmp_path / "notes.jsonl"
    recs.write_text(
        "\n".join(
            json.dumps(r)
            for r in [
                {"id": "wings", "text": "lift and drag of wings", "year": 1960},
                {"id": "flaps", "text": "flaps raise lift", "parent": "wings", "year": 1970},
            ]
        )
    )
    argv = ["build", "aero", "--records", str(recs), "--embedder", "hashing"]
    argv += ["--edge-fields", "parent", "--metadata-keys", "year"]
    assert main(argv) == 0
    return tmp_path


def run(capsys, *argv):
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_search_and_walk_say_why(home, capsys):
    code, out, _ = run(capsys, "search", "aero", "lift", "--filter", '{"year": 2000}')
    assert code == 0 and out.strip() == "(no hits: no record matches the filter)"
    code, out, _ = run(capsys, "search", "aero", "lift", "--filter", '{"year": 2000}', "--json")
    doc = json.loads(out)
    assert doc["hits"] == [] and doc["reason"] == "no record matches the filter"
    code, out, _ = run(capsys, "search", "aero", "lift", "--json")
    doc = json.loads(out)
    assert doc["hits"] and doc["reason"] is None
    code, out, _ = run(capsys, "graph", "aero", "walk", "lift", "--summary-kinds", "summary")
    assert code == 0 and out.strip() == (
        "(no hits: no surface of the summary kinds (summary) matched the query: the "
        "corpus has no surfaces of kind 'summary' (its kinds: chunk))"
    )
    code, out, _ = run(
        capsys,
        "graph",
        "aero",
        "walk",
        "lift",
        "--policy",
        "reverse-deps",
        "--seed",
        "x",
        "--json",
    )
    doc = json.loads(out)
    assert code == 0 and doc["hits"] == []
    assert doc["reason"] == "none of the seeds ('x') is a node of the graph"


def test_discover_says_why_its_search_found_nothing(corpus, home, capsys):
    from rowvoi.corpus import discover

    res = discover(corpus, "zebras", mode="lexical")
    assert res.abstained and res.reason == "abstain:no_candidates"
    assert res.signals["no_hits"] == "no record contains a query term (analysed: 'zebra')"
    assert "no_hits" not in discover(corpus, "wing", mode="lexical").signals
    code, out, _ = run(capsys, "discover", "aero", "the of", "--mode", "lexical")
    assert code == 0 and out.splitlines()[1] == (
        "  no hits: the query has no searchable terms (the analyzer drops punctuation "
        "and stopwords)"
    )
    argv = ["build", "aero2", "--records", str(home / "notes.jsonl"), "--embedder", "hashing"]
    assert main(argv) == 0
    code, out, _ = run(capsys, "discover", "aero,aero2", "zebras", "--mode", "lexical")
    assert code == 0
    assert "  aero: 0 retrieved (no hits: no record contains a query term (analysed: " in out
    code, out, _ = run(capsys, "discover", "aero,aero2", "zebras", "--mode", "lexical", "--json")
    per = json.loads(out)["signals"]["per_source"]
    assert per["aero2"]["no_hits"] == "no record contains a query term (analysed: 'zebra')"
