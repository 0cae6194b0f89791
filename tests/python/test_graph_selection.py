"""VectorSelection against a plain-Python model of seed 002's semantics:
random graphs (typed, directed, cyclic, self-loops, times, several
documents per entity), random operation sequences and windows."""

import threading
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from rowvoi.graph import (
    Edge,
    MemoryGraph,
    Node,
    documents_by_similarity,
    edges_by_similarity,
    empty_selection,
    entities_by_similarity,
    nodes_by_similarity,
)
from rowvoi.index.embed import HashingEmbedder

# --------------------------------------------------------------- the model


class Model:
    """The graph and seed 002's selection rules, written plainly: every
    round rescans the whole selection, as Raphtory does."""

    def __init__(self, n, edges, node_time, node_docs, edge_docs, vectors):
        self.n = n
        self.edges = edges  # (src, dst, type, time)
        self.node_time = node_time
        self.vectors = vectors
        self.ent_docs = {}  # entity -> [doc]
        self.doc_ent = []
        for i in range(n):
            for _ in range(node_docs[i]):
                self.ent_docs.setdefault(i, []).append(len(self.doc_ent))
                self.doc_ent.append(i)
        for e in range(len(edges)):
            for _ in range(edge_docs[e]):
                self.ent_docs.setdefault(n + e, []).append(len(self.doc_ent))
                self.doc_ent.append(n + e)

    def time(self, x):
        return self.node_time[x] if x < self.n else self.edges[x - self.n][3]

    def inside(self, x, w):
        t = self.time(x)
        return w is None or t is None or w[0] <= t < w[1]

    def incident(self, v):
        """Edges on node v: out-edges then in-edges, input order."""
        out = [e for e, (s, _, _, _) in enumerate(self.edges) if s == v]
        inc = [e for e, (_, d, _, _) in enumerate(self.edges) if d == v]
        return out + inc

    def docs(self, x):
        return self.ent_docs.get(x, [])

    def doc_hop(self, d, w):
        x = self.doc_ent[d]
        if not self.inside(x, w):
            return []
        out = list(self.docs(x))
        if x < self.n:
            for e in self.incident(x):
                if self.inside(self.n + e, w):
                    out += self.docs(self.n + e)
        else:
            s, t, _, _ = self.edges[x - self.n]
            for v in (s, t):
                if self.inside(v, w):
                    out += self.docs(v)
        return out

    def entity_hop(self, x, kinds, w):
        out = []
        if x < self.n:
            if "n" in kinds:
                for e in self.incident(x):
                    s, t, _, _ = self.edges[e]
                    far = t if s == x else s
                    if self.inside(self.n + e, w) and self.inside(far, w):
                        out.append(far)
            if "e" in kinds:
                out += [self.n + e for e in self.incident(x) if self.inside(self.n + e, w)]
        else:
            s, t, _, _ = self.edges[x - self.n]
            if "n" in kinds:
                out += [s, t]
            if "e" in kinds:
                for v in (s, t):
                    if self.inside(v, w):
                        out += [self.n + e for e in self.incident(v) if self.inside(self.n + e, w)]
        return out

    def score(self, d, q):
        return float(np.dot(self.vectors[d].astype(np.float64), q))

    # ---- operations on a selection: a list of [doc, score]
    @staticmethod
    def extend(sel, items):
        have = {d for d, _ in sel}
        for d, s in items:
            if d not in have:
                have.add(d)
                sel.append((d, s))

    def expand(self, sel, hops, w):
        for _ in range(hops):
            new = []
            for d, _ in list(sel):
                new += [(c, 0.0) for c in self.doc_hop(d, w)]
            self.extend(sel, new)

    def expand_docs(self, sel, q, limit, w):
        while len(sel) < limit:
            have = {d for d, _ in sel}
            cand = []
            for d, _ in sel:
                for c in self.doc_hop(d, w):
                    if c not in have and c not in cand:
                        cand.append(c)
            if not cand:
                return
            cand.sort(key=lambda c: (-self.score(c, q), c))
            self.extend(sel, [(c, self.score(c, q)) for c in cand[: limit - len(sel)]])

    def expand_entities(self, sel, q, limit, kinds, w):
        added = 0
        while added < limit:
            ents = list(dict.fromkeys(self.doc_ent[d] for d, _ in sel))
            have = set(ents)
            cand = []
            for x in ents:
                if not self.inside(x, w):
                    continue
                for y in self.entity_hop(x, kinds, w):
                    if y in have or y in cand or not self.docs(y) or not self.inside(y, w):
                        continue
                    cand.append(y)
            if not cand:
                return
            best = {y: max(self.score(d, q) for d in self.docs(y)) for y in cand}
            cand.sort(key=lambda y: (-best[y], y))
            for y in cand[: limit - added]:
                self.extend(sel, [(d, best[y]) for d in self.docs(y)])
            added += len(cand[: limit - added])

    def top_k(self, q, k, kinds, w):
        if kinds == "d":
            docs = [d for d in range(len(self.doc_ent)) if self.inside(self.doc_ent[d], w)]
            docs.sort(key=lambda d: (-self.score(d, q), d))
            return [(d, self.score(d, q)) for d in docs[:k]]
        ents = [
            x
            for x in sorted(self.ent_docs)
            if self.inside(x, w) and (("n" in kinds) if x < self.n else ("e" in kinds))
        ]
        best = {x: max(self.score(d, q) for d in self.docs(x)) for x in ents}
        ents.sort(key=lambda x: (-best[x], x))
        return [(d, best[x]) for x in ents[:k] for d in self.docs(x)]


# ------------------------------------------------------------ strategies

times = st.one_of(st.none(), st.integers(0, 9))


@st.composite
def graphs(draw):
    n = draw(st.integers(1, 6))
    m = draw(st.integers(0, 9))
    edges = [
        (
            draw(st.integers(0, n - 1)),
            draw(st.integers(0, n - 1)),
            draw(st.sampled_from(["A", "B", "C"])),
            draw(times),
        )
        for _ in range(m)
    ]
    node_time = [draw(times) for _ in range(n)]
    node_docs = [draw(st.integers(0, 2)) for _ in range(n)]
    edge_docs = [draw(st.integers(0, 1)) for _ in range(m)]
    n_docs = sum(node_docs) + sum(edge_docs)
    # small integer vectors with the inner product: scores are exact in
    # float32, so ties are exact and their order is testable
    vecs = draw(
        st.lists(
            st.lists(st.integers(-3, 3), min_size=3, max_size=3), min_size=n_docs, max_size=n_docs
        )
    )
    vectors = np.array(vecs, dtype=np.float32).reshape(n_docs, 3)
    return Model(n, edges, node_time, node_docs, edge_docs, vectors)


def build(model):
    nodes = [
        {
            "id": f"v{i}",
            "text": [f"n{i}.{k}" for k in range(len(model.docs(i)))],
            "time": model.node_time[i],
        }
        for i in range(model.n)
    ]
    edges = [
        (f"v{s}", f"v{d}", t, f"e{e}" if model.docs(model.n + e) else None, tm)
        for e, (s, d, t, tm) in enumerate(model.edges)
    ]
    return MemoryGraph.from_edges(edges, nodes, vectors=model.vectors, metric="ip")


windows = st.one_of(
    st.none(), st.tuples(st.integers(0, 10), st.integers(0, 10)).map(lambda p: (min(p), max(p)))
)
queries = st.lists(st.integers(-3, 3), min_size=3, max_size=3).map(
    lambda v: np.array(v, dtype=np.float64)
)


def as_pairs(sel):
    return [(d.id, s) for d, s in sel.get_documents_with_scores()]


# --------------------------------------------------------- state machine


class SelectionMachine(RuleBasedStateMachine):
    @initialize(model=graphs())
    def setup(self, model):
        self.model = model
        self.graph = build(model)
        self.sel = empty_selection(self.graph)
        self.expected = []

    @rule(nodes=st.lists(st.integers(0, 7), max_size=3))
    def add_nodes(self, nodes):
        ids = [f"v{i}" for i in nodes]  # v6, v7 may be unknown: ignored
        self.sel.add_nodes(ids)
        self.model.extend(
            self.expected,
            [(d, 0.0) for i in nodes if i < self.model.n for d in self.model.docs(i)],
        )

    @rule(data=st.data())
    def add_edges(self, data):
        if not self.model.edges:
            return
        picks = data.draw(st.lists(st.integers(0, len(self.model.edges) - 1), max_size=2))
        pairs = [(f"v{self.model.edges[e][0]}", f"v{self.model.edges[e][1]}") for e in picks]
        self.sel.add_edges(pairs + [("v0", "nowhere")])
        items = []
        for s, d in pairs:  # a pair names every edge from s to d
            for e, (es, ed, _, _) in enumerate(self.model.edges):
                if (f"v{es}", f"v{ed}") == (s, d):
                    items += [(x, 0.0) for x in self.model.docs(self.model.n + e)]
        self.model.extend(self.expected, items)

    @rule(hops=st.integers(0, 3), window=windows)
    def expand(self, hops, window):
        self.sel.expand(hops, window=window)
        self.model.expand(self.expected, hops, window)

    @rule(q=queries, limit=st.integers(0, 12), window=windows)
    def expand_documents(self, q, limit, window):
        self.sel.expand_documents_by_similarity(q, limit, window=window)
        self.model.expand_docs(self.expected, q, limit, window)

    @rule(
        q=queries, limit=st.integers(0, 5), window=windows, kind=st.sampled_from(["ne", "n", "e"])
    )
    def expand_entities(self, q, limit, window, kind):
        method = {
            "ne": self.sel.expand_entities_by_similarity,
            "n": self.sel.expand_nodes_by_similarity,
            "e": self.sel.expand_edges_by_similarity,
        }[kind]
        method(q, limit, window=window)
        self.model.expand_entities(self.expected, q, limit, kind, window)

    @rule(
        q=queries, k=st.integers(0, 4), window=windows, kind=st.sampled_from(["d", "ne", "n", "e"])
    )
    def restart_from_search(self, q, k, window, kind):
        make = {
            "d": documents_by_similarity,
            "ne": entities_by_similarity,
            "n": nodes_by_similarity,
            "e": edges_by_similarity,
        }[kind]
        self.sel = make(self.graph, q, k, window=window)
        self.expected = self.model.top_k(q, k, kind, window)

    @precondition(lambda self: len(self.expected) > 0)
    @rule(nodes=st.lists(st.integers(0, 5), max_size=2))
    def append(self, nodes):
        other = empty_selection(self.graph)
        other.add_nodes([f"v{i}" for i in nodes])
        other_expected = []
        self.model.extend(
            other_expected,
            [(d, 0.0) for i in nodes if i < self.model.n for d in self.model.docs(i)],
        )
        before, other_before = as_pairs(self.sel), as_pairs(other)
        joined = self.sel.append(other)
        assert as_pairs(self.sel) == before and as_pairs(other) == other_before
        self.sel = joined
        self.model.extend(self.expected, other_expected)

    @invariant()
    def same_documents(self):
        if not hasattr(self, "sel"):
            return
        got = as_pairs(self.sel)
        assert [d for d, _ in got] == [d for d, _ in self.expected]
        assert [s for _, s in got] == pytest.approx([s for _, s in self.expected])
        ents = list(dict.fromkeys(self.model.doc_ent[d] for d, _ in self.expected))
        assert [n.id for n in self.sel.nodes()] == [f"v{x}" for x in ents if x < self.model.n]
        assert [e.index for e in self.sel.edges()] == [
            x - self.model.n for x in ents if x >= self.model.n
        ]


SelectionMachine.TestCase.settings = settings(
    max_examples=150,
    stateful_step_count=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestSelectionMachine = SelectionMachine.TestCase


# ------------------------------------------------------------ unit tests


def _people():
    return MemoryGraph.from_edges(
        [
            ("alice", "acme", "WORKS_AT", "alice works at acme", "2024-01-10"),
            ("bob", "acme", "WORKS_AT", "bob works at acme", "2024-03-01"),
            ("bob", "paris", "LIVES_IN", "bob lives in paris", "2024-06-01"),
        ],
        nodes=[
            {"id": "alice", "text": "alice, engineer"},
            {"id": "bob", "text": "bob, designer"},
            {"id": "acme", "text": "acme corporation"},
            {"id": "paris", "text": "paris"},
        ],
        embedder=HashingEmbedder(dim=64),
    )


def test_objects_scores_and_text_queries():
    g = _people()
    sel = nodes_by_similarity(g, "alice engineer", 1)
    assert [n.id for n in sel.nodes()] == ["alice"]
    ((doc, score),) = sel.get_documents_with_scores()
    assert doc.content == "alice, engineer" and doc.entity == Node("alice")
    assert 0.99 < score <= 1.0001
    sel.add_edges([("alice", "acme")])
    assert sel.get_documents_with_scores()[1][1] == 0.0
    edge = sel.edges()[0]
    assert isinstance(edge, Edge) and (edge.src, edge.dst, edge.type) == (
        "alice",
        "acme",
        "WORKS_AT",
    )
    assert edge.time == 1704844800000  # 2024-01-10 in ms since the epoch, UTC
    # an already selected document keeps its score
    sel.add_nodes(["alice"])
    assert sel.get_documents_with_scores()[0][1] == pytest.approx(score)
    # add_edges accepts Edge objects and triples; unknown ones are ignored
    other = empty_selection(g)
    other.add_edges([edge, ("bob", "paris", "LIVES_IN"), ("bob", "paris", "NOPE")])
    assert [e.dst for e in other.edges()] == ["acme", "paris"]


def test_limits_count_total_documents_and_new_entities():
    g = _people()
    sel = empty_selection(g)
    sel.add_nodes(["alice"])
    sel.expand_documents_by_similarity("acme", 3)
    assert len(sel) == 3  # the total, not three new ones
    sel.expand_documents_by_similarity("acme", 2)
    assert len(sel) == 3  # already past the limit: unchanged
    ent = empty_selection(g)
    ent.add_nodes(["alice"])
    ent.expand_entities_by_similarity("acme", 2)
    assert len(ent.nodes()) + len(ent.edges()) == 3  # alice plus two new entities


def test_windows_accept_iso_strings_and_are_half_open():
    g = _people()
    sel = empty_selection(g)
    sel.add_nodes(["bob"])
    sel.expand(1, window=("2024-03-01", "2024-06-01"))
    assert [e.type for e in sel.edges()] == ["WORKS_AT"]  # start inside, end outside
    sel.expand(1, window=("2024-03-01T00:00:00Z", "2024-06-01T00:00:00.001Z"))
    assert [e.type for e in sel.edges()] == ["WORKS_AT", "LIVES_IN"]


def test_errors_say_what_to_do():
    g = _people()
    sel = empty_selection(g)
    with pytest.raises(ValueError, match="dimension 64"):
        sel.expand_documents_by_similarity([1.0, 2.0], 3)
    with pytest.raises(ValueError, match="limit"):
        sel.expand_documents_by_similarity("x", -1)
    with pytest.raises(ValueError, match="hops"):
        sel.expand(-1)
    with pytest.raises(ValueError, match="ISO-8601"):
        sel.expand(1, window=("yesterday", "today"))
    with pytest.raises(ValueError, match="end is before start"):
        sel.expand(1, window=(5, 1))
    with pytest.raises(TypeError, match="list"):
        sel.add_nodes("alice")
    bare = MemoryGraph.from_edges([("a", "b")])
    with pytest.raises(ValueError, match="no document vectors"):
        empty_selection(bare).expand_documents_by_similarity([1.0], 1)
    vec_only = MemoryGraph.from_edges(
        [("a", "b")], nodes=[{"id": "a", "text": "x"}], vectors=np.ones((1, 2))
    )
    with pytest.raises(TypeError, match="embedder"):
        documents_by_similarity(vec_only, "text query", 1)
    with pytest.raises(ValueError, match="another graph"):
        empty_selection(g).append(empty_selection(_people()))


@pytest.mark.stress
def test_threads_share_a_graph_and_a_selection():
    g = _people()
    shared = empty_selection(g)
    shared.add_nodes(["alice"])
    errors = []
    stop = time.monotonic() + 2.0

    def work(k):
        try:
            while time.monotonic() < stop:
                own = nodes_by_similarity(g, "bob lives in paris", 1)
                own.expand_documents_by_similarity("paris", 4)
                assert len(own) == 4
                shared.expand_documents_by_similarity("acme", 1 + k)
                shared.expand(1)
                assert len(shared.get_documents()) >= 1
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    ids = [d.id for d in shared.get_documents()]
    assert len(ids) == len(set(ids)) == g.n_documents  # everything, each once


@given(graphs(), queries, st.integers(0, 10))
@settings(max_examples=60, deadline=None)
def test_cosine_rounds_match_the_model_up_to_rounding(model, q, limit):
    """Cosine scores: the same documents are chosen unless two scores are
    within float rounding of each other."""
    if not np.any(q):
        return
    g = MemoryGraph.from_edges(
        [
            (f"v{s}", f"v{d}", t, "x" if model.docs(model.n + e) else None, tm)
            for e, (s, d, t, tm) in enumerate(model.edges)
        ],
        [{"id": f"v{i}", "text": ["x"] * len(model.docs(i))} for i in range(model.n)],
        vectors=model.vectors,
    )
    sel = empty_selection(g)
    sel.add_nodes(["v0"])
    sel.expand_documents_by_similarity(q, limit)
    norms = np.linalg.norm(model.vectors.astype(np.float64), axis=1)
    cos = Model(
        model.n,
        model.edges,
        [None] * model.n,
        [len(model.docs(i)) for i in range(model.n)],
        [len(model.docs(model.n + e)) for e in range(len(model.edges))],
        np.where(norms[:, None] > 0, model.vectors / np.maximum(norms, 1e-30)[:, None], 0)
        / np.linalg.norm(q),
    )
    expected = []
    cos.extend(expected, [(d, 0.0) for d in cos.docs(0)])
    cos.expand_docs(expected, q, limit, None)
    got = as_pairs(sel)
    assert [s for _, s in got] == pytest.approx([s for _, s in expected], abs=1e-5)
    assert len(got) == len(expected)
