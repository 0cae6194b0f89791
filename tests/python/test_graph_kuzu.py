"""The Kùzu store (rowvoi.graph.kuzu_store) answers neighbours, walks,
graph-to-text and selections exactly as the built-in store does."""

import itertools
import os
import tempfile

import pytest
from hypothesis import given, settings, strategies as st

from rowvoi.graph import (
    GraphData,
    GraphStore,
    MemoryGraph,
    empty_selection,
    graph_to_text,
    nodes_by_similarity,
    reverse_dependency_policy,
    snapshot,
    traverse,
)
from rowvoi.index.embed import HashingEmbedder

EMB = HashingEmbedder(dim=32)

kuzu = pytest.importorskip("kuzu")
from rowvoi.graph.kuzu_store import KuzuGraph  # noqa: E402


@st.composite
def rich_graphs(draw):
    n = draw(st.integers(1, 7))
    ids = draw(
        st.lists(
            st.one_of(st.integers(0, 50), st.text("abc", min_size=1, max_size=3)),
            min_size=n,
            max_size=n,
            unique_by=lambda v: (type(v), v),
        )
    )
    nodes = [
        {
            "id": v,
            "text": draw(st.lists(st.sampled_from(["red", "blue", "red fox"]), max_size=2)),
            "time": draw(st.one_of(st.none(), st.integers(0, 9))),
        }
        for v in ids
    ]
    edges = draw(
        st.lists(
            st.tuples(
                st.sampled_from(ids),
                st.sampled_from(ids + ["ext"]),
                st.sampled_from(["REF", "PARENT"]),
                st.one_of(st.none(), st.sampled_from(["fox", "blue sky"])),
                st.one_of(st.none(), st.integers(0, 9)),
            ),
            max_size=12,
        )
    )
    return nodes, edges


_counter = itertools.count()
SMALL = {"buffer_pool_size": 64 << 20, "max_db_size": 1 << 30}


@given(rich_graphs(), st.lists(st.integers(0, 6), min_size=1, max_size=2))
@settings(max_examples=25, deadline=None)
def test_kuzu_store_answers_like_the_memory_store(graph, picks):
    nodes, edges = graph
    mem = MemoryGraph.from_edges(edges, nodes, embedder=EMB)
    path = os.path.join(tempfile.mkdtemp(), f"db{next(_counter)}")
    kg = KuzuGraph.from_edges(path, edges, nodes, embedder=EMB, **SMALL)
    try:
        assert isinstance(kg, GraphStore)
        assert kg.export() == mem.export()
        all_ids = mem.node_ids() + ["absent"]
        for v in all_ids:
            for t in (None, "REF", "PARENT"):
                assert kg.neighbors(v, t) == mem.neighbors(v, t)
                assert kg.reverse_neighbors(v, t) == mem.reverse_neighbors(v, t)
                assert kg.fan_in(v, t) == mem.fan_in(v, t)
            assert kg.edge_types(v) == mem.edge_types(v)
            assert kg.documents(v) == mem.documents(v)
            for direction in ("out", "in", "both"):
                assert kg.edges_of(v, direction) == mem.edges_of(v, direction)
                assert kg.edges_of(v, direction, "REF", window=(2, 7)) == mem.edges_of(
                    v, direction, "REF", window=(2, 7)
                )
            assert (v in kg) == (v in mem)
        assert kg.edge_types() == mem.edge_types()
        assert kg.max_fan_in("REF") == mem.max_fan_in("REF")
        seeds = [mem.node_ids()[p % mem.n_nodes] for p in picks]
        # walks
        pol = reverse_dependency_policy(seeds=seeds, edge_type=None, fan_in_weight=0.3)
        walk_k = traverse("red fox", kg, policy=pol, max_depth=3, node_budget=8)
        walk_m = traverse("red fox", mem, policy=pol, max_depth=3, node_budget=8)
        assert [h.to_dict() for h in walk_k] == [h.to_dict() for h in walk_m]
        assert (
            graph_to_text(kg, seeds, depth=2, max_edges=5).lines
            == graph_to_text(mem, seeds, depth=2, max_edges=5).lines
        )
        # selections
        snap = snapshot(kg)
        assert snap is snapshot(kg)  # cached
        if mem.n_documents:
            a = nodes_by_similarity(kg, "blue fox", 2)
            b = nodes_by_similarity(mem, "blue fox", 2)
            for s in (a, b):
                s.add_nodes(seeds)
                s.expand_documents_by_similarity("red sky", 6, window=(0, 7))
                s.expand_entities_by_similarity("fox", 2)
                s.expand(1)
            assert [(d.id, d.content, d.entity) for d in a.get_documents()] == [
                (d.id, d.content, d.entity) for d in b.get_documents()
            ]
            assert [s for _, s in a.get_documents_with_scores()] == [
                s for _, s in b.get_documents_with_scores()
            ]
    finally:
        kg.close()


def test_kuzu_store_snapshot_follows_writes_and_checks_input():
    path = os.path.join(tempfile.mkdtemp(), "db")
    kg = KuzuGraph.from_edges(path, [("a", "b", "R")], embedder=EMB, **SMALL)
    first = kg.snapshot()
    kg.add(
        GraphData(
            node_ids=["c"],
            node_texts=[["c text"]],
            edge_src=["c"],
            edge_dst=["a"],
            edge_types=["R"],
        )
    )
    assert kg.snapshot() is not first and kg.snapshot().n_edges == 2
    assert kg.reverse_neighbors("a") == ["c"]
    sel = empty_selection(kg)
    sel.add_nodes(["c"])
    assert [d.content for d in sel.get_documents()] == ["c text"]
    with pytest.raises(ValueError, match="already in the store"):
        kg.add(GraphData(node_ids=["a"]))
    with pytest.raises(TypeError, match="str or int"):
        kg.neighbors(("tuple", "id"))
    reopened = KuzuGraph(kg._db)
    assert reopened.neighbors("c") == ["a"]
    kg.close()
