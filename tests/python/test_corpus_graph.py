"""The link graph inside a corpus: edges at build time (rowvoi.corpus.indexing.edges),
CorpusGraph (CSR per generation), traverse / selections on a corpus, and the
``rowvoi graph`` verb."""

from __future__ import annotations

import contextlib
import io
import json
import threading
import time

import pandas as pd
import pytest

from rowvoi.corpus import CorpusStore, Fields, build, from_mapping, fuse_hits, search
from rowvoi.corpus.indexing.edges import (
    CombinedEdges,
    EdgeList,
    FieldEdges,
    as_extractor,
)
from rowvoi.graph import (
    CorpusGraph,
    collapsed_tree_policy,
    documents_by_similarity,
    graph_to_text,
    reverse_dependency_policy,
    traverse,
)
from rowvoi.graph.walk import WalkHit

EMB = "hashing:64"


def _links(corpus) -> set[tuple]:
    with corpus.store.snapshot() as snap:
        return {(s, t, ts, d) for s, t, ts, d, _, _ in snap.links()}


def _src(docs, **kw):
    return from_mapping(docs, embedder=EMB, **kw)


# ------------------------------------------------------------ extraction


def test_field_edges_values():
    ex = FieldEdges({"parent": "PARENT", "links": "REF"})
    links = ex.extract(
        "a", {"parent": "p", "links": ["b", ["wiki", "Lift"], "", None, "a", "b"]}, {}
    )
    assert [(ln.type, ln.target, ln.target_source) for ln in links] == [
        ("PARENT", "p", None),
        ("REF", "b", None),
        ("REF", "Lift", "wiki"),
    ]
    # filter fields win over the raw item; ints are ids
    assert ex.extract("a", {"parent": "x"}, {"parent": 7})[0].target == "7"
    with pytest.raises(ValueError, match="artifact 'a', field 'links'"):
        ex.extract("a", {"links": [["only-one"]]}, {})
    timed = FieldEdges(["links"], time_field="date")
    assert timed.extract("a", {"links": ["b"], "date": "1970-01-01T00:00:01"}, {})[0].time == 1000
    assert timed.extractor_id != FieldEdges(["links"]).extractor_id
    with pytest.raises(ValueError, match="artifact 'a', field 'date'"):
        timed.extract("a", {"links": ["b"], "date": "yesterday"}, {})
    with pytest.raises(TypeError):
        FieldEdges("parent")
    with pytest.raises(ValueError):
        FieldEdges({"parent": ""})


def test_edge_list_and_combined():
    df = pd.DataFrame(
        {
            "src": ["a", "a", "b", "a"],
            "dst": ["b", "c", "b", "b"],
            "type": ["CITES", None, "CITES", "CITES"],
            "time": [5, None, 1, 9],
        }
    )
    el = EdgeList(df)
    # self-loop dropped, repeated (src, type, dst) keeps the last row
    assert [(ln.type, ln.target, ln.time) for ln in el.extract("a", None, {})] == [
        ("CITES", "b", 9),
        ("REF", "c", None),
    ]
    assert el.extract("b", None, {}) == []
    assert EdgeList([("a", "b")]).extractor_id != EdgeList([("a", "c")]).extractor_id
    c = as_extractor([FieldEdges(["links"]), el])
    assert isinstance(c, CombinedEdges) and c.spec() is None
    assert as_extractor(False) is None and as_extractor([]) is None
    with pytest.raises(TypeError):
        as_extractor(42)


# ------------------------------------------------- build: survive and prune


DOCS = {
    "guide": {"text": "a guide to wings"},
    "lift": {"text": "lift on a wing", "parent": "guide", "links": ["drag", "ghost"]},
    "drag": {"text": "drag of a body", "parent": "guide", "links": ["lift"]},
    "stall": {"text": "stall at high angle", "parent": "guide"},
}


def test_edges_survive_incremental_builds_and_are_pruned():
    store = CorpusStore.memory()
    docs = {k: dict(v) for k, v in DOCS.items()}
    ex = FieldEdges({"parent": "PARENT", "links": "REF"})
    c = build(_src(docs), store=store, edges=ex)
    first = _links(c)
    assert ("lift", "REF", "", "ghost") in first and len(first) == 6
    assert c.last_build.n_links == 6 and c.last_build.links_extracted == 4

    # nothing changed: a no-op, links kept, nothing extracted
    r = build(_src(docs), store=store, edges=ex).last_build
    assert not r.changed and r.links_extracted == 0 and _links(c) == first

    # one artifact's text changes: only its links are re-extracted
    docs["stall"]["text"] = "stall and buffet at high angle"
    r = build(_src(docs), store=store, edges=ex).last_build
    assert r.n_changed == 1 and r.links_extracted == 1 and _links(c) == first

    # a changed artifact's new links replace its old ones (edges=None: the
    # corpus's pinned FieldEdges spec runs again)
    docs["drag"]["links"] = ["stall"]
    r = build(_src(docs), store=store).last_build
    assert r.links_extracted == 1
    now = _links(c)
    assert ("drag", "REF", "", "stall") in now and ("drag", "REF", "", "lift") not in now

    # pruning: an artifact's links go with it; links to it stay (dangling)
    del docs["lift"]
    build(_src(docs), store=store)
    now = _links(c)
    assert not any(s == "lift" for s, *_ in now)
    g = CorpusGraph(c)
    assert "ghost" not in g  # its only link left with 'lift'
    docs["stall"]["links"] = ["lift"]
    build(_src(docs), store=store)
    g = CorpusGraph(c)
    assert g.is_dangling("lift") and g.n_dangling == 1 and g.documents("lift") == []

    # a rebuild (another embedder) keeps the graph
    before = _links(c)
    r = build(from_mapping(docs, embedder="hashing:32"), store=store).last_build
    assert r.rebuild == "embedder changed" and _links(c) == before

    # edges=False removes every link
    r = build(from_mapping(docs, embedder="hashing:32"), store=store, edges=False).last_build
    assert r.changed and _links(c) == set() and r.n_links == 0
    # and a later build without edges= adds none
    docs["guide"]["text"] = "the guide"
    build(from_mapping(docs, embedder="hashing:32"), store=store)
    assert _links(c) == set()


def test_node_and_link_times_on_a_corpus():
    docs = {
        "a": {"text": "old note", "year": 1990, "links": ["b"]},
        "b": {"text": "new note", "year": 2020, "links": ["a"]},
    }
    src = from_mapping(docs, embedder=EMB, metadata_of=lambda aid, raw: {"year": raw["year"]})
    c = build(src, store=CorpusStore.memory(), edges=FieldEdges(["links"], time_field="year"))
    g = CorpusGraph(c, time_field="year")
    assert g["a"].time == 1990 and g["b"].time == 2020
    assert [e.time for e in g.edges_of("a", "both")] == [1990, 2020]
    assert g.edges_of("a", "out", window=(2000, 2030)) == []  # a is outside the window
    assert [v for v, _ in g.bfs(["b"], max_depth=2, window=(2000, 2030))] == ["b"]
    assert CorpusGraph(c)["a"].time is None  # without time_field: untimed


def test_edge_list_kept_and_replaced():
    store = CorpusStore.memory()
    docs = {"a": "alpha", "b": "beta", "c": "gamma"}
    el = EdgeList(
        [
            ("a", "b", "CITES", "a cites b", "2024-01-02"),
            ("b", "c", "CITES"),
            ("zzz", "a", "CITES"),
        ]
    )  # zzz is no artifact: no source to own it
    c = build(_src(docs), store=store, edges=el)
    assert _links(c) == {("a", "CITES", "", "b"), ("b", "CITES", "", "c")}
    g = CorpusGraph(c)
    e = g.edges_of("a")[0]
    assert (e.type, e.dst, e.time) == ("CITES", "b", 1704153600000)
    assert g.edge_text(e.index) == "a cites b"
    # edges=None with a stored list: changed artifacts keep their links
    docs["a"] = "alpha prime"
    r = build(_src(docs), store=store).last_build
    assert r.n_changed == 1 and r.links_extracted == 0
    assert ("a", "CITES", "", "b") in _links(c)
    # another list re-extracts everything (no embedding)
    r = build(_src(docs), store=store, edges=EdgeList([("c", "a")])).last_build
    assert r.texts_embedded == 0 and _links(c) == {("c", "REF", "", "a")}


def test_bad_extractor_fails_the_build_and_commits_nothing():
    store = CorpusStore.memory()
    c = build(
        _src({"a": {"text": "x", "links": ["b"]}, "b": "y"}),
        store=store,
        edges=FieldEdges(["links"]),
    )

    class Broken:
        extractor_id = "broken"
        uses_content = True

        def extract(self, artifact_id, raw, fields):
            return ["not a link"]

    with pytest.raises(TypeError, match=r"not rowvoi\.corpus\.Link"):
        build(_src({"a": {"text": "x2", "links": ["b"]}, "b": "y"}), store=store, edges=Broken())
    assert _links(c) == {("a", "LINKS", "", "b")}
    with c.store.snapshot() as snap:
        assert snap.generation == 1


# ------------------------------------------------------ CSR per generation


def _csr_edges(g: CorpusGraph) -> set[tuple]:
    topo = g.topology()
    return {
        (e.src if isinstance(e.src, str) else tuple(e.src), e.type, e.dst)
        for i in range(topo.n_edges)
        for e in [topo.edge(i)]
    }


def test_csr_matches_committed_generation_while_building():
    """Readers check, while a builder commits generation after generation,
    that the CSR they get is the links of the generation their snapshot
    names (no SIGKILL: a consistency check of the cache)."""
    store = CorpusStore.memory()
    n = 30

    def docs_for(gen: int) -> dict:
        return {
            f"d{i}": {
                "text": f"doc {i} v{gen if i == gen % n else 0}",
                "links": [f"d{(i + gen) % n}", f"d{(i * 7 + 1) % n}"],
            }
            for i in range(n)
        }

    c = build(_src(docs_for(0)), store=store, edges=FieldEdges(["links"]))
    stop = threading.Event()
    errors: list[str] = []
    checks = [0]

    def reader():
        g = CorpusGraph(c)
        while not stop.is_set():
            with c.store.snapshot() as snap:
                want = {(s, t, d) for s, t, _, d, _, _ in snap.links()}
                gen = g._current(snap)
                got = {
                    (gen.topology.edge(i).src, gen.topology.edge(i).type, gen.topology.edge(i).dst)
                    for i in range(gen.topology.n_edges)
                }
                if gen.generation != snap.generation or got != want:
                    errors.append(f"generation {snap.generation}: CSR differs")
            checks[0] += 1

    threads = [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    t0 = time.monotonic()
    gen = 0
    while time.monotonic() - t0 < 2.0:
        gen += 1
        d = docs_for(gen)
        build(_src(d), store=store, edges=FieldEdges(["links"]))
    stop.set()
    for t in threads:
        t.join()
    assert not errors, errors[:3]
    assert checks[0] > 10 and gen > 3
    g = CorpusGraph(c)
    now = g.generation
    with c.store.snapshot() as snap:
        assert now == snap.generation == gen + 1
    assert g.topology() is g.topology()  # cached per generation


def test_cache_follows_the_generation():
    store = CorpusStore.memory()
    docs = {"a": {"text": "x", "links": ["b"]}, "b": "y"}
    c = build(_src(docs), store=store, edges=FieldEdges(["links"]))
    g = CorpusGraph(c)
    t1 = g.topology()
    assert CorpusGraph(c).topology() is t1  # shared by CorpusGraphs of one store
    docs["b"] = {"text": "y2", "links": ["a"]}
    build(_src(docs), store=store, edges=FieldEdges(["links"]))
    t2 = g.topology()
    assert t2 is not t1 and g.neighbors("b") == ["a"] and t1.neighbors("b") == []


def test_graph_reads_retry_a_racing_commit_and_give_up_after_the_retries(monkeypatch):
    """CorpusGraph.surfaces and snapshot read a fresh snapshot while commits
    race them (Stale), like a search, and give up with a clear error."""
    from rowvoi.corpus.storage.generation import RETRIES, Generations, Stale

    store = CorpusStore.memory()
    c = build(
        _src({"a": {"text": "x", "links": ["b"]}, "b": "y"}),
        store=store,
        edges=FieldEdges(["links"]),
    )
    g = CorpusGraph(c)
    real = Generations._load
    tries = []

    def stale_twice(self, snap, *args, **kw):
        tries.append(snap.generation)
        if len(tries) <= 2:
            raise Stale()
        return real(self, snap, *args, **kw)

    monkeypatch.setattr(Generations, "_load", stale_twice)
    assert [(s.index, s.text) for s in g.surfaces("a")] == [(0, "x")] and len(tries) == 3
    monkeypatch.setattr(Generations, "_load", lambda *a, **k: (_ for _ in ()).throw(Stale()))
    with pytest.raises(RuntimeError, match=rf"kept changing \({RETRIES} commits\); retry"):
        g.surfaces("b")


# ------------------------------------------------- walks on a corpus


def _hub_corpus(n_art: int = 400, fan_out: int = 100_000):
    """Cycles (a ring), self-links (dropped), dangling targets and a hub
    with ``fan_out`` out-links (mostly dangling) and ``n_art`` in-links."""
    docs = {f"a{i:04d}": f"artifact {i} about topic {i % 7}" for i in range(n_art)}
    docs["hub"] = "the hub of everything"
    rows = [(f"a{i:04d}", f"a{(i + 1) % n_art:04d}", "REF") for i in range(n_art)]
    rows += [(f"a{i:04d}", f"a{i:04d}", "REF") for i in range(0, n_art, 10)]  # self
    rows += [(f"a{i:04d}", "hub", "REF") for i in range(n_art)]
    rows += [("hub", f"x{j}", "REF") for j in range(fan_out)]
    rows += [("hub", f"a{i:04d}", "REF") for i in range(n_art)]
    return build(_src(docs), store=CorpusStore.memory(), edges=EdgeList(rows))


@pytest.fixture(scope="module")
def hub():
    return _hub_corpus()


def test_graph_of_a_hub(hub):
    g = CorpusGraph(hub)
    assert g.n_dangling == 100_000
    assert len(g.neighbors("hub")) == 100_400
    assert g.fan_in("hub") == 400 and g.max_fan_in("REF") == 400
    assert "a0000" not in g.neighbors("a0000")  # self-links dropped at extraction
    assert g.edge_types() == ["REF"]


def test_walks_terminate_within_budgets_on_a_corpus(hub):
    g = CorpusGraph(hub)
    nodes = g.bfs(["hub"], max_depth=50, node_budget=64)
    assert len(nodes) == 64 and nodes[0] == ("hub", 0)
    hits = traverse(
        "topic 3",
        hub,
        policy=reverse_dependency_policy(seeds=["hub"]),
        max_depth=10,
        node_budget=50,
        k=100,
    )
    assert 0 < len(hits) <= 50
    assert len({h.artifact_id for h in hits}) == len(hits)
    assert all(not g.is_dangling(h.artifact_id) for h in hits)
    assert all(h.source is None and h.record_id is not None for h in hits)

    class Endless:
        """Follows every out-link forever; never stops by itself."""

        def seed(self, query, store, state):
            return ["hub", "x5", "a0001"]

        def score(self, node, store, state):
            return 1.0

        def select(self, scored, state):
            return scored

        def expand(self, node, store, state):
            return store.neighbors(node) + [node]

        def node_id(self, node):
            return node

        def stop(self, state):
            return False

        def to_hit(self, node, score, depth, seed, store, state):
            return WalkHit(node, "document", score, "", {"walk_depth": depth, "seed": seed})

    hits = traverse("q", g, policy=Endless(), max_depth=1000, node_budget=200, k=1000)
    assert len(hits) == 200
    text = graph_to_text(g, ["hub"], depth=5, max_edges=25)
    assert len(text.lines) == 25


# ------------------------------------------------- collapsed tree, fusion


def _tree_corpus():
    docs = {
        "aero": {"description": "aerodynamics handbook: wings, lift and drag", "body": ""},
        "aero/lift": {
            "description": "chapter on lift",
            "parent": "aero",
            "body": "Lift is generated by pressure difference over the wing. "
            "Circulation explains lift. Stall ends lift.",
        },
        "aero/drag": {
            "description": "chapter on drag",
            "parent": "aero",
            "body": "Skin friction drag. Pressure drag behind a body. "
            "Induced drag comes with lift.",
        },
        "heat": {
            "description": "heat transfer notes",
            "body": "Conduction in solids. Convection in pipes.",
        },
    }
    strat = Fields(("description", "body"), chunked=("body",), chunk_size=40, overlap=0)
    src = from_mapping(docs, name="aero", strategy=strat, embedder=EMB)
    return build(src, store=CorpusStore.memory(), edges=FieldEdges({"parent": "PARENT"}))


def test_collapsed_tree_routes_a_summary_hit_to_leaf_chunks():
    c = _tree_corpus()
    pol = collapsed_tree_policy(summary_kinds=("description",), leaf_kinds=("body",), seed_k=1)
    hits = traverse("aerodynamics handbook wings", c, policy=pol, max_depth=1, k=5)
    # the summary matched 'aero' (no chunks of its own): routed to its
    # children's chunks, never returned itself
    assert hits and all(h.surface_kind == "body" for h in hits)
    assert {h.artifact_id for h in hits} <= {"aero/lift", "aero/drag"}
    assert all(h.metadata["seed"] == "aero" and h.metadata["walk_depth"] == 1 for h in hits)
    assert all("chunk_index" in h.metadata or "walk_depth" in h.metadata for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    # the hits are the corpus's records
    for h in hits:
        rec = next(
            r for r in c.records_for_artifact(h.artifact_id) if r.surface_index == h.surface_index
        )
        assert rec.record_id == h.record_id and rec.text == h.text
    # without child edges, a leafless summary is a result itself
    pol = collapsed_tree_policy(
        summary_kinds=("description",), leaf_kinds=("body",), seed_k=1, child_edge_type=None
    )
    hits = traverse("aerodynamics handbook wings", c, policy=pol, max_depth=1, k=5)
    assert [(h.artifact_id, h.surface_kind) for h in hits] == [("aero", "description")]


def test_traverse_hits_fuse_with_search_hits():
    c = _tree_corpus()
    flat = search(c, "lift over the wing", k=5, surfaces=["body"])
    walk = traverse(
        "lift over the wing",
        c,
        k=5,
        policy=collapsed_tree_policy(
            summary_kinds=("description",), leaf_kinds=("body",), seed_k=2
        ),
    )
    assert all(type(h) is type(flat[0]) for h in walk)
    fused = fuse_hits({"search": flat, "walk": walk})
    assert fused
    # the same (source, artifact) found by both merges into one result
    keys = [(h.source, h.artifact_id) for h in fused]
    assert len(keys) == len(set(keys))
    both = {h.artifact_id for h in flat} & {h.artifact_id for h in walk}
    assert both
    assert {h.artifact_id for h in fused} == {h.artifact_id for h in flat} | {
        h.artifact_id for h in walk
    }
    assert all(h.source == "aero" for h in fused)
    assert json.dumps([h.to_dict() for h in walk])


def test_vector_selection_from_a_corpus():
    c = _tree_corpus()
    g = CorpusGraph(c)
    sel = documents_by_similarity(c, "skin friction drag", 1)
    ((doc, score),) = sel.get_documents_with_scores()
    top = search(c, "skin friction drag", k=1, per_artifact=False, index="flat")[0]
    assert doc.content == top.text and g.record_ids([doc]) == [top.record_id]
    assert score == pytest.approx(top.score, abs=1e-5)  # the corpus's own vectors
    # a vector query, the same answer
    q = c.embedder.embed(["skin friction drag"])[0]
    sel2 = documents_by_similarity(g, q, 1)
    assert sel2.get_documents()[0].id == doc.id
    sel.expand(1)  # the other records of the artifact (links carry no documents)
    assert len(sel) == len(c.records_for_artifact("aero/drag"))
    assert {d.entity.id for d in sel.get_documents()} == {"aero/drag"}
    # edge texts are documents too (embedded with the corpus's embedder):
    # hops run node -> edge -> node through them
    docs = {"a": "alpha wing", "b": "beta flap", "c": "gamma slat"}
    c2 = build(
        _src(docs),
        store=CorpusStore.memory(),
        edges=EdgeList(
            [
                ("a", "b", "HAS", "the wing has a flap"),
                ("b", "c", "NEXT_TO", "the flap sits by the slat"),
            ]
        ),
    )
    g2 = CorpusGraph(c2)
    sel = documents_by_similarity(g2, "alpha wing", 1)
    assert [d.entity.id for d in sel.get_documents()] == ["a"]
    sel.expand(1)
    assert [d.content for d in sel.get_documents()][1:] == ["the wing has a flap"]
    sel.expand(1)
    assert sel.get_documents()[-1].content == "beta flap"
    grown = documents_by_similarity(g2, "alpha wing", 1)
    grown.expand_documents_by_similarity("slat", 5)  # limit: the selection's total
    assert len(grown) == 5 and grown.get_documents()[-1].content == "gamma slat"
    assert g2.record_ids(grown.get_documents())[1] is None  # an edge's document


# ------------------------------------------------------------------- CLI


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("ROWVOI_HOME", str(tmp_path / "home"))
    recs = tmp_path / "notes.jsonl"
    rows = [
        {"id": "wings", "text": "lift and drag of wings", "links": ["flaps", "nowhere"]},
        {"id": "flaps", "text": "flaps raise lift at low speed", "parent": "wings"},
        {"id": "slats", "text": "slats delay the stall", "parent": "wings"},
    ]
    recs.write_text("\n".join(json.dumps(r) for r in rows))
    return recs


def _run(argv):
    from rowvoi.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    return rc, out.getvalue(), err.getvalue()


def test_cli_graph_verbs(home):
    rc, out, _ = _run(
        [
            "build",
            "aero",
            "--records",
            str(home),
            "--embedder",
            "hashing",
            "--edge-fields",
            "parent,links",
        ]
    )
    assert rc == 0 and "4 links" in out
    rc, out, _ = _run(["graph", "aero", "neighbours", "wings", "--json"])
    doc = json.loads(out)
    assert rc == 0 and doc["fan_in"] == 2
    assert doc["out"] == [
        {"type": "REF", "node": "flaps", "dangling": False},
        {"type": "REF", "node": "nowhere", "dangling": True},
    ]
    assert [e["node"] for e in doc["in"]] == ["flaps", "slats"]
    rc, out, _ = _run(["graph", "aero", "neighbours", "wings"])
    assert rc == 0 and "--REF--> nowhere  (dangling)" in out and "<--PARENT-- slats" in out
    rc, out, _ = _run(
        ["graph", "aero", "text", "wings", "--depth", "2", "--max-edges", "3", "--json"]
    )
    assert rc == 0 and len(json.loads(out)["lines"]) == 3
    rc, out, _ = _run(["graph", "aero", "text", "flaps", "--aliases"])
    assert rc == 0 and "# N1 = flaps" in out and "N1 --PARENT--> N2" in out
    rc, out, _ = _run(
        [
            "graph",
            "aero",
            "walk",
            "stall",
            "--policy",
            "reverse-deps",
            "--seed",
            "wings",
            "--edge-type",
            "PARENT",
            "--json",
        ]
    )
    hits = json.loads(out)["hits"]
    assert rc == 0 and hits[0]["artifact_id"] == "slats"
    assert hits[0]["metadata"]["seed"] == "wings" and hits[0]["source"] == "aero"
    rc, out, _ = _run(
        ["graph", "aero", "walk", "lift", "--summary-kinds", "chunk", "--leaf-kinds", "chunk"]
    )
    assert rc == 0 and "flaps  [chunk]  depth 1 via wings" in out
    rc, out, _ = _run(["info", "aero"])
    assert rc == 0 and "  links: 4 (extractor fields:" in out
    # the registry remembers --edge-fields: a plain rebuild keeps the links
    rc, out, _ = _run(["build", "aero", "--json"])
    assert rc == 0 and json.loads(out)["n_links"] == 4


def test_cli_graph_exit_codes(home):
    assert (
        _run(
            [
                "build",
                "aero",
                "--records",
                str(home),
                "--embedder",
                "hashing",
                "--edge-fields",
                "parent",
            ]
        )[0]
        == 0
    )
    rc, _, err = _run(["graph", "nosuch", "neighbours", "x"])
    assert rc == 1 and "no corpus 'nosuch'" in err
    rc, _, err = _run(["graph", "aero", "neighbours", "ghost"])
    assert rc == 1 and "'ghost' is neither an artifact" in err
    assert _run(["graph", "aero"])[0] == 2
    assert _run(["graph", "aero", "text", "wings", "--depth", "two"])[0] == 2
    rc, _, err = _run(["graph", "aero", "text", "wings", "--depth", "-1"])
    assert rc == 2 and "argument --depth" in err  # out of range: a usage error
    assert _run(["graph", "aero", "walk", "q", "--k", "0"])[0] == 2
    rc, _, err = _run(["graph", "aero", "text", "wings", "--max-edges", str(10**24)])
    assert rc == 2 and "argument --max-edges" in err  # once an OverflowError from C
    assert _run(["graph", "aero", "walk", "q", "--policy", "reverse-deps"])[0] == 2
    assert _run(["graph", "aero", "walk", "q", "--seed", "wings"])[0] == 2
    assert _run(["build", "aero", "--edge-fields", "parent="])[0] == 2
    rc, out, _ = _run(["graph", "--help"])
    assert rc == 0 and "neighbours" in out


def test_corpus_from_before_links_gets_the_table():
    """A corpus built before links were written has the old, always empty,
    reserved table: readers see no links, the next build replaces it."""
    store = CorpusStore.memory()
    c = build(_src({"a": {"text": "x", "links": ["b"]}, "b": "y"}), store=store)
    con = store.writer_connection()
    con.execute("DROP TABLE links")
    con.execute(
        "CREATE TABLE links (source_aid TEXT NOT NULL, edge_type TEXT NOT NULL, "
        "target TEXT NOT NULL, PRIMARY KEY (source_aid, edge_type, target)) "
        "WITHOUT ROWID"
    )
    store._graph_cache = {}
    assert CorpusGraph(c).n_edges == 0
    r = build(
        _src({"a": {"text": "x", "links": ["b"]}, "b": "y"}),
        store=store,
        edges=FieldEdges(["links"]),
    ).last_build
    assert r.links_extracted == 2 and _links(c) == {("a", "LINKS", "", "b")}
    assert CorpusGraph(c).neighbors("a") == ["b"]


def test_walks_and_selections_from_threads_while_building():
    store = CorpusStore.memory()
    n = 40

    def docs_for(gen: int) -> dict:
        return {
            f"d{i}": {
                "text": f"note {i} on topic {(i + gen) % 5}",
                "links": [f"d{(i + 1) % n}", f"d{(i + gen) % n}"],
            }
            for i in range(n)
        }

    c = build(_src(docs_for(0)), store=store, edges=FieldEdges({"links": "REF"}))
    g = CorpusGraph(c)
    stop = threading.Event()
    errors: list[BaseException] = []
    done = [0]

    def worker():
        try:
            while not stop.is_set():
                hits = traverse(
                    "topic 3",
                    g,
                    policy=reverse_dependency_policy(seeds=["d0"]),
                    max_depth=2,
                    node_budget=20,
                    k=5,
                )
                assert 0 < len(hits) <= 5 and all(h.record_id is not None for h in hits)
                sel = documents_by_similarity(g, "topic 2", 3)
                sel.expand(1)
                assert len(sel) >= 3
                done[0] += 1
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    t0, gen = time.monotonic(), 0
    while time.monotonic() - t0 < 2.0:
        gen += 1
        build(_src(docs_for(gen)), store=store, edges=FieldEdges({"links": "REF"}))
    stop.set()
    for t in threads:
        t.join()
    assert not errors, repr(errors[0])
    assert done[0] > 2
