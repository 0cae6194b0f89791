"""rowvoi.graph: the built-in store, graph-to-text against a plain-Python
model of the walk, traverse's safety (cycles, self-loops, dangling edges,
100,000-edge fan-out, a policy that never stops), the two policies,
from_arrays, and the example program."""

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from rowvoi.graph import (
    GraphStore,
    MemoryGraph,
    Node,
    WalkHit,
    collapsed_tree_policy,
    documents_by_similarity,
    graph_to_text,
    nodes_by_similarity,
    reverse_dependency_policy,
    traverse,
)
from rowvoi.graph.surfaces import MemorySurfaces
from rowvoi.index import _graph
from rowvoi.index.embed import HashingEmbedder

EMB = HashingEmbedder(dim=32)


# ------------------------------------------------------------------ store


def test_store_from_frames_and_protocol():
    edges = pd.DataFrame(
        {
            "src": ["a", "a", "b", "a", "c"],
            "dst": ["b", "c", "c", "b", "a"],
            "type": ["R", "R", "S", "S", "R"],
            "text": ["a to b", None, "b to c", None, None],
            "time": [1, 2, None, 4, 5],
        }
    )
    nodes = pd.DataFrame(
        {
            "id": ["a", "b", "z"],
            "text": ["node a", "node b", None],
            "time": ["2024-01-01", None, None],
        }
    )
    g = MemoryGraph.from_edges(edges, nodes, embedder=EMB)
    assert isinstance(g, GraphStore)
    assert g.node_ids() == ["a", "b", "z", "c"]  # listed nodes, then dangling endpoints
    assert g.neighbors("a") == ["b", "c"]  # de-duplicated, first seen first
    assert g.neighbors("a", "S") == ["b"]
    assert g.reverse_neighbors("c") == ["a", "b"]
    assert g.fan_in("b") == 1 and g.fan_in("b", "S") == 1 and g.fan_in("nowhere") == 0
    assert g.max_fan_in() == 2 and g.max_fan_in("R") == 1 and g.max_fan_in("T") == 0
    assert g.edge_types("a") == ["R", "S"] and g.edge_types() == ["R", "S"]
    assert g.documents("a") == ["node a"] and g.documents("c") == []
    assert g["a"] == Node("a", 1704067200000) and g["c"] == Node("c", None)
    with pytest.raises(KeyError):
        g["nowhere"]
    assert [e.index for e in g.edges_of("b", "both")] == [2, 0, 3]
    assert g.edges_of("a", "out", window=(2, 5)) == []  # a itself (2024) is outside
    assert [e.index for e in g.edges_of("b", "both", window=(0, 10))] == [2]  # far a outside
    assert g.n_documents == 4 and g.dim == 32
    again = MemoryGraph.from_data(g.export(), embedder=EMB)
    assert again.export() == g.export()
    assert np.array_equal(again._vectors, g._vectors)


def test_bfs_safety_and_order():
    g = MemoryGraph.from_edges([(0, 1), (1, 2), (2, 0), (2, 2), (1, 3)])
    assert g.bfs([1], max_depth=5, direction="out") == [(1, 0), (2, 1), (3, 1), (0, 2)]
    assert g.bfs([1, 1, "unknown"], max_depth=0) == [(1, 0)]
    assert len(g.bfs([0], max_depth=10, node_budget=2)) == 2
    with pytest.raises(ValueError, match="direction"):
        g.bfs([0], direction="up")


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="edges\\[1\\]"):
        MemoryGraph.from_edges([("a", "b"), ("a",)])
    with pytest.raises(ValueError, match="listed twice"):
        MemoryGraph.from_edges([], nodes=["a", "a"])
    with pytest.raises(ValueError, match="ISO-8601"):
        MemoryGraph.from_edges([("a", "b", "R", None, "not a date")])
    with pytest.raises(ValueError, match="one row per document"):
        MemoryGraph.from_edges([("a", "b", "R", "t")], vectors=np.ones((2, 3)))
    with pytest.raises(TypeError, match="embed"):
        MemoryGraph.from_edges([("a", "b", "R", "t")], embedder=object())
    with pytest.raises(ValueError, match="vectors must be finite"):
        MemoryGraph.from_edges([("a", "b", "R", "t")], vectors=np.array([[np.nan, 1.0]]))


def test_vectors_checked_once_when_loaded():
    """The vectors are checked as a store takes them (the first bad
    component named, whatever their source), and the builds that follow
    trust that check: a store keeps its arrays, which the engine borrows."""
    src = np.array([0, 1, 2], dtype=np.int64)
    dst = np.array([1, 2, 0], dtype=np.int64)
    vec = np.ones((3, 4), dtype=np.float32)
    vec[2, 1] = np.inf
    vec[1, 3] = -np.inf
    with pytest.raises(ValueError, match=r"vectors\[1\]\[3\] = -inf: vectors must be finite"):
        MemoryGraph.from_arrays(
            src, dst, doc_entity=np.arange(3), doc_text=["x", "y", "z"], vectors=vec
        )
    with pytest.raises(ValueError, match=r"vectors\[1\]\[3\] = -inf"):
        _graph.check_vectors(vec)

    class NaNEmbedder:
        dim = 2

        def embed(self, texts):
            out = np.ones((len(texts), 2), dtype=np.float32)
            out[-1, 0] = np.nan
            return out

    with pytest.raises(ValueError, match=r"vectors\[1\]\[0\] = nan"):
        MemoryGraph.from_edges(
            [("a", "b", "R", "t"), ("b", "a", "R", "u")], embedder=NaNEmbedder()
        )
    vec[1, 3] = vec[2, 1] = 0.5
    g = MemoryGraph.from_arrays(
        src, dst, doc_entity=np.arange(3), doc_text=["x", "y", "z"], vectors=vec, metric="ip"
    )
    sel = documents_by_similarity(g, np.array([0, 0, 0, 1], dtype=np.float32), 3)
    assert [round(s, 6) for _, s in sel.get_documents_with_scores()] == [1.0, 1.0, 0.5]


def test_from_arrays_keeps_its_own_arrays():
    """The engine reads the store's index arrays in place: changing the
    caller's arrays afterwards changes nothing."""
    src = np.array([0, 1, 2], dtype=np.int64)
    dst = np.array([1, 2, 0], dtype=np.int64)
    ent = np.array([0, 3, 4], dtype=np.int64)
    g = MemoryGraph.from_arrays(src, dst, doc_entity=ent, doc_text=["n0", "e0", "e1"])
    src[:] = 99
    dst[:] = -5
    ent[:] = 10**9
    assert g.neighbors(0) == [1] and g.reverse_neighbors(0) == [2]
    assert g.documents(0) == ["n0"]
    assert [(e.src, e.dst) for e in g.edges_of(1, "both")] == [(1, 2), (0, 1)]


# ---------------------------------------------------------- graph to text


def facts_model(g, seeds, depth, max_edges, per, bridges):
    """The walk of graph_to_text, written plainly over edges_of()."""
    queue = []
    for s in seeds:
        if s in g and s not in [q for q, _ in queue]:
            queue.append((s, 0))
    seen = {q for q, _ in queue}
    done, lines, count = set(), [], {}
    i = 0
    while i < len(queue) and len(lines) < max_edges:
        u, d = queue[i]
        i += 1
        if d >= depth:
            break
        for e in g.edges_of(u, "both"):
            if len(lines) >= max_edges:
                break
            if e.index in done:
                continue
            done.add(e.index)
            far = e.dst if e.src == u else e.src
            if e.type not in bridges and (not per or count.get(e.src, 0) < per):
                count[e.src] = count.get(e.src, 0) + 1
                lines.append(f"{e.src} --{e.type}--> {e.dst}")
            if far not in seen:
                seen.add(far)
                queue.append((far, d + 1))
    return lines


@st.composite
def typed_graphs(draw):
    n = draw(st.integers(1, 8))
    edges = draw(
        st.lists(
            st.tuples(
                st.integers(0, n - 1), st.integers(0, n - 1), st.sampled_from(["M", "R", "S"])
            ),
            max_size=20,
        )
    )
    return n, edges


@given(
    typed_graphs(),
    st.lists(st.integers(0, 8), min_size=1, max_size=3),
    st.integers(0, 4),
    st.integers(0, 12),
    st.integers(0, 3),
    st.sets(st.sampled_from(["M", "R", "S"])),
)
@settings(max_examples=500, deadline=None)
def test_graph_to_text_matches_the_model(graph, seeds, depth, max_edges, per, bridges):
    n, edges = graph
    g = MemoryGraph.from_edges(edges, nodes=list(range(n)))
    out = graph_to_text(
        g,
        seeds,
        depth=depth,
        max_edges=max_edges,
        max_edges_per_subject=per or None,
        bridge_edge_types=bridges,
    )
    expected = facts_model(g, seeds, depth, max_edges, per, bridges)
    assert out.lines == expected
    assert len(out.lines) <= max_edges
    assert all(e.type not in bridges for e in out.edges)  # bridges never printed
    if per:
        subjects = [e.src for e in out.edges]
        assert all(subjects.count(s) <= per for s in subjects)
    # every node in the text has an alias that resolves back
    for e in out.edges:
        assert out.resolve(out.alias_of(e.src)) == e.src


def test_graph_to_text_fills_the_budget_through_bridges():
    edges = [("chunk", f"e{i}", "MENTIONED_IN") for i in range(40)]
    edges += [(f"e{i}", f"e{(i + 1) % 40}", "KNOWS") for i in range(40)]
    g = MemoryGraph.from_edges(edges)
    out = graph_to_text(
        g,
        ["chunk"],
        depth=3,
        max_edges=25,
        max_edges_per_subject=1,
        bridge_edge_types={"MENTIONED_IN"},
    )
    assert len(out.lines) == 25  # exactly the budget, all printable
    assert not any("MENTIONED_IN" in line for line in out.lines)
    only_bridges = graph_to_text(g, ["chunk"], depth=1, bridge_edge_types=["MENTIONED_IN"])
    assert only_bridges.lines == []  # depth 1: the chunk's own edges are all bridges
    aliased = graph_to_text(
        g, ["chunk"], depth=2, max_edges=2, aliases=True, bridge_edge_types=["MENTIONED_IN"]
    )
    assert aliased.lines == ["N2 --KNOWS--> N3", "N4 --KNOWS--> N2"]
    assert list(aliased.aliases.values()) == ["chunk", "e0", "e1", "e39"]
    assert aliased.resolve("N2") == "e0" and aliased.aliases["N1"] == "chunk"
    assert "N1 = chunk" in aliased.legend()
    with pytest.raises(KeyError, match="known"):
        aliased.resolve("N99")


# --------------------------------------------------------------- traverse


class EndlessPolicy:
    """Never stops; expand cycles forever and repeats itself."""

    def seed(self, query, store, state):
        return [0]

    def score(self, node, store, state):
        return 1.0 / (1 + node)

    def select(self, scored, state):
        return scored

    def expand(self, node, store, state):
        return itertools.cycle([node, node + 1, 0])  # an endless generator

    def node_id(self, node):
        return node

    def stop(self, state):
        return False

    def to_hit(self, node, score, depth, seed, store, state):
        return WalkHit(node, "n", score, str(node), {"walk_depth": depth, "seed": seed})


def test_walker_owns_the_safety():
    hits = traverse(
        "q", None, policy=EndlessPolicy(), max_depth=1000, node_budget=30, k=100, max_fan_out=50
    )
    assert len(hits) == 30  # the budget
    assert len({h.artifact_id for h in hits}) == 30  # the visited set
    depth_capped = traverse("q", None, policy=EndlessPolicy(), max_depth=3, node_budget=64, k=100)
    assert max(h.metadata["walk_depth"] for h in depth_capped) == 3
    assert [h.artifact_id for h in traverse("q", None, policy=EndlessPolicy(), k=2)] == [0, 1]
    with pytest.raises(ValueError, match="node_budget"):
        traverse("q", None, policy=EndlessPolicy(), node_budget=0)


def test_reverse_walk_on_cycles_self_loops_dangling_and_huge_fan_in():
    fan = 100_000
    edges = [
        ("hub", "hub", "REF"),
        ("a", "b", "REF"),
        ("b", "a", "REF"),
        ("b", "hub", "REF"),
        ("hub", "missing-lib", "REF"),
    ]
    edges += [(f"dep{i}", "hub", "REF") for i in range(fan)]
    nodes = [
        {"id": "hub", "text": "central hub"},
        {"id": "a", "text": "alpha"},
        {"id": "b", "text": "beta hub user"},
        {"id": "dep7", "text": "hub plugin"},
    ]
    g = MemoryGraph.from_edges(edges, nodes, embedder=EMB)
    pol = reverse_dependency_policy(seeds=["missing-lib", "hub"], fan_in_weight=0.5)
    hits = traverse("hub", g, policy=pol, max_depth=6, node_budget=64, k=10)
    ids = [h.artifact_id for h in hits]
    assert "missing-lib" not in ids  # no documents: routes only
    assert ids[0] == "hub" and hits[0].metadata["fan_in"] == fan + 2
    assert len(ids) == len(set(ids)) <= 10
    by_id = {h.artifact_id: h for h in hits}
    # hub is committed first (it scores higher than the routing seed), so
    # its dependents carry it as their seed
    assert by_id["b"].metadata["walk_depth"] == 1 and by_id["b"].metadata["seed"] == "hub"
    assert set(ids) == {"hub", "b", "dep7"}  # the budget ran out in level 1: a is 2 away
    # the fan-out cap: at most max_fan_out neighbours are read from one node
    capped = traverse("hub", g, policy=pol, max_depth=6, node_budget=64, k=10, max_fan_out=3)
    assert {h.artifact_id for h in capped} == {"hub", "b", "a"}
    a = next(h for h in capped if h.artifact_id == "a")
    assert a.metadata["walk_depth"] == 2 and a.metadata["seed"] == "hub"


def test_collapsed_tree_routes_summaries_to_leaves():
    store = MemorySurfaces(
        {
            "pandas": [
                ("description", "dataframes for tabular data"),
                ("chunk", "read csv files into a dataframe"),
                ("chunk", "group by and aggregate columns"),
            ],
            "requests": [
                ("description", "http for humans"),
                ("chunk", "send a get request with headers"),
            ],
            "tiny": [("description", "tabular data helpers")],  # no leaves: emitted itself
        },
        EMB,
    )
    hits = traverse(
        "tabular data aggregate", store, policy=collapsed_tree_policy(seed_k=3), max_depth=1, k=10
    )
    kinds = {(h.artifact_id, h.surface_kind) for h in hits}
    assert ("pandas", "description") not in kinds  # a router
    assert ("pandas", "chunk") in kinds and ("tiny", "description") in kinds
    assert all(h.metadata["walk_depth"] == (h.surface_kind == "chunk") for h in hits)
    assert hits == sorted(hits, key=lambda h: -h.score)
    assert hits[0].to_dict()["score"] == pytest.approx(hits[0].score)


@given(typed_graphs())
@settings(max_examples=40, deadline=None)
def test_from_arrays_equals_from_edges(graph):
    n, edges = graph
    names = ["M", "R", "S"]
    texts = [f"edge {e}" for e in range(len(edges))]
    a = MemoryGraph.from_edges(
        [(s, d, t, x) for (s, d, t), x in zip(edges, texts)],
        nodes=[{"id": i, "text": f"node {i}"} for i in range(n)],
        embedder=EMB,
    )
    b = MemoryGraph.from_arrays(
        [s for s, _, _ in edges],
        [d for _, d, _ in edges],
        n_nodes=n,
        edge_type=[names.index(t) for _, _, t in edges],
        type_names=names,
        doc_entity=list(range(n)) + [n + e for e in range(len(edges))],
        doc_text=[f"node {i}" for i in range(n)] + texts,
        embedder=EMB,
    )
    ea, eb = a.export(), b.export()
    assert (ea.node_ids, ea.node_texts, ea.edge_src, ea.edge_dst, ea.edge_texts) == (
        eb.node_ids,
        eb.node_texts,
        eb.edge_src,
        eb.edge_dst,
        eb.edge_texts,
    )
    assert [e for e in ea.edge_types] == [e for e in eb.edge_types]
    for v in range(n):
        assert a.neighbors(v) == b.neighbors(v) and a.reverse_neighbors(v) == b.reverse_neighbors(
            v
        )


def test_from_arrays_shares_vector_rows():
    mat = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], dtype=np.float32)
    g = MemoryGraph.from_arrays(
        [0],
        [1],
        doc_entity=[0, 1, 2],
        doc_text=["a", "b", "edge"],
        vectors=mat,
        vector_rows=[2, 2, 0],
    )
    sel = nodes_by_similarity(g, [1.0, 0.0], 2)
    assert [d.content for d in sel.get_documents()] == ["a", "b"]  # tie: lower number first
    assert [s for _, s in sel.get_documents_with_scores()] == pytest.approx([0.7071068] * 2)
    assert g._vectors is mat  # used in place
    with pytest.raises(ValueError, match="vector_rows"):
        MemoryGraph.from_arrays(
            [0], [1], doc_entity=[0], doc_text=["a"], vectors=mat, vector_rows=[0, 1]
        )
    with pytest.raises(ValueError, match="doc_vector_row"):
        MemoryGraph.from_arrays(
            [0], [1], doc_entity=[0], doc_text=["a"], vectors=mat, vector_rows=[7]
        )


def test_from_arrays_checks_its_input():
    with pytest.raises(ValueError, match="outside"):
        MemoryGraph.from_arrays([0], [5], n_nodes=2)
    with pytest.raises(ValueError, match="one length"):
        MemoryGraph.from_arrays([0, 1], [1])
    with pytest.raises(ValueError, match="texts"):
        MemoryGraph.from_arrays([0], [1], doc_entity=[0])
    with pytest.raises(ValueError, match="type_names"):
        MemoryGraph.from_arrays([0], [1], edge_type=[3], type_names=["a"])


def test_example_runs():
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "examples" / "graph_demo.py"
    proc = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=True
    )
    out = proc.stdout
    assert "Ada Lovelace wrote the first program for the Analytical Engine" in out
    assert "N2 --WROTE_ABOUT--> N3" in out and "MENTIONED_IN" not in out
    assert "Charles Babbage (depth 1)" in out


def test_release_build_memory_between_builds_from_threads():
    """Graphs freed keep their large arrays for the next build; releasing
    them (from any thread, while others build) changes no graph."""
    import threading

    from rowvoi.graph import release_build_memory

    rng = np.random.default_rng(7)
    n, m = 300_000, 600_000  # arrays of 1 MiB and up: the ones kept
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    probe = [int(x) for x in rng.integers(0, n, 50)]

    def listing() -> list[list[int]]:
        g = MemoryGraph.from_arrays(src, dst, n_nodes=n)
        out = [g.neighbors(p) for p in probe] + [g.reverse_neighbors(p) for p in probe]
        del g  # freed: its arrays are kept for the next build
        return out

    want = listing()
    assert want == listing()  # a rebuild from kept arrays
    release_build_memory()
    assert want == listing()  # a build from fresh pages

    bad: list[str] = []
    stop = threading.Event()

    def builder() -> None:
        while not stop.is_set():
            if listing() != want:
                bad.append("a build differed")

    def releaser() -> None:
        while not stop.is_set():
            release_build_memory()

    threads = [threading.Thread(target=builder) for _ in range(2)]
    threads.append(threading.Thread(target=releaser))
    for t in threads:
        t.start()
    stop.wait(2.0)
    stop.set()
    for t in threads:
        t.join()
    assert not bad
