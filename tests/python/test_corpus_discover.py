"""rowvoi.corpus.fusion and rowvoi.corpus.discover: rank fusion across
sources, federated discovery with per-source floors, tools."""

import json

import pytest
from hypothesis import given, settings, strategies as st

from rowvoi.corpus.base import SearchHit
from rowvoi.corpus.fusion import fuse_hits


def hit(aid, score, source=None, **meta):
    return SearchHit(aid, "document", score, f"text of {aid}", meta, source=source)


# ------------------------------------------------------------------ fuse_hits
lists = st.dictionaries(
    st.sampled_from(["s1", "s2", "s3"]),
    st.lists(st.tuples(st.sampled_from("abcdef"), st.floats(0, 10, allow_nan=False)),
             max_size=8),
    min_size=2, max_size=3)


@settings(max_examples=300, deadline=None)
@given(data=lists, rrf_k=st.integers(0, 100),
       weights=st.dictionaries(st.sampled_from(["s1", "s2", "s3", "zz"]),
                               st.floats(0, 5, allow_nan=False), max_size=4))
def test_rrf_by_hand(data, rrf_k, weights):
    by_source = {name: [hit(a, s) for a, s in pairs] for name, pairs in data.items()}
    fused = fuse_hits(by_source, rrf_k=rrf_k, weights=weights)
    # the reference: dedupe each list to its best score, rank, sum w/(k+rank)
    expected = {}
    for name, pairs in data.items():
        best = {}
        for i, (a, s) in enumerate(pairs):
            if a not in best or s > best[a][0]:
                best[a] = (s, i)
        order = sorted(best, key=lambda a: (-best[a][0], best[a][1]))
        for rank, a in enumerate(order, 1):
            key = (name, a)
            expected[key] = expected.get(key, 0.0) + weights.get(name, 1.0) / (rrf_k + rank)
    got = {(h.source, h.artifact_id): h.score for h in fused}
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, rel=1e-12, abs=1e-15)
    # best first; provenance kept
    assert [h.score for h in fused] == sorted((h.score for h in fused), reverse=True)
    for h in fused:
        assert h.metadata["fused_sources"] == [h.source]
        raw = max(s for a, s in data[h.source] if a == h.artifact_id)
        assert h.metadata["source_score"] == raw
        assert h.metadata["source_rank"] >= 1


def test_same_id_in_two_sources_stays_two_results():
    fused = fuse_hits({"a": [hit("x", 0.9)], "b": [hit("x", 12.0)]})
    assert [(h.source, h.artifact_id) for h in fused] == [("a", "x"), ("b", "x")]
    assert fused[0].score == fused[1].score == pytest.approx(1 / 61)


def test_per_list_dedupe_keeps_best_raw_score():
    fused = fuse_hits({"a": [hit("x", 0.2), hit("y", 0.5), hit("x", 0.9)], "b": []})
    assert [(h.artifact_id, h.metadata["source_rank"], h.metadata["source_score"])
            for h in fused] == [("x", 1, 0.9), ("y", 2, 0.5)]
    assert fused[0].score == pytest.approx(1 / 61) and fused[1].score == pytest.approx(1 / 62)


def test_single_source_passes_through_with_raw_scores():
    hits = [hit("y", 0.5), hit("x", 0.9), hit("y", 0.1)]
    out = fuse_hits({"docs": hits}, k=5)
    assert [(h.artifact_id, h.score, h.source) for h in out] == [("x", 0.9, "docs"),
                                                                ("y", 0.5, "docs")]
    assert "source_score" not in out[0].metadata
    # two lists, one empty: fused scale, never raw scores
    out = fuse_hits({"docs": hits, "other": []})
    assert out[0].score == pytest.approx(1 / 61)


def test_existing_source_tags_win_and_none_key_stays_untagged():
    fused = fuse_hits({"k1": [hit("x", 1.0, source="corpus")],
                       "k2": [hit("x", 5.0, source="corpus")],
                       None: [hit("x", 3.0)]})
    assert [(h.source, h.artifact_id) for h in fused] == [("corpus", "x"), (None, "x")]
    assert fused[0].score == pytest.approx(2 / 61)
    assert fused[0].metadata["fused_sources"] == ["corpus"]
    assert fused[1].score == pytest.approx(1 / 61)


def test_identity_pointer_and_callable():
    a = [hit("1", 0.8, path="/d/x.md"), hit("2", 0.7)]
    b = [hit("x.md", 7.0, path="/d/x.md"), hit("2", 6.0)]
    fused = fuse_hits({"a": a, "b": b}, identity="pointer")
    assert [(h.source, h.artifact_id) for h in fused] == [("a", "1"), ("a", "2"), ("b", "2")]
    assert fused[0].metadata["fused_sources"] == ["a", "b"]
    assert fused[0].score == pytest.approx(2 / 61)
    # a callable; a falsy key falls back to (source, artifact_id)
    fused = fuse_hits({"a": a, "b": b}, identity=lambda h: h.artifact_id if h.artifact_id == "2"
                      else None)
    got = [(h.source, h.artifact_id, round(h.score * 61 * 62, 6)) for h in fused]
    assert got == [("a", "2", 2 * 61.0), ("a", "1", 62.0), ("b", "x.md", 62.0)]
    # the representative is the best-ranked hit; "2" ranks 2nd in both lists,
    # so the earlier list's hit represents it
    assert fused[0].metadata["source_score"] == 0.7
    # identity-duplicates inside one list collapse before ranking
    fused = fuse_hits({"a": [hit("p", 0.9, path="/f"), hit("q", 0.8, path="/f")],
                       "b": [hit("r", 1.0)]}, identity="pointer")
    assert [h.artifact_id for h in fused] == ["p", "r"]


def test_weights_and_truncation():
    fused = fuse_hits({"a": [hit("x", 1.0)], "b": [hit("y", 1.0)]}, weights={"b": 2.0}, k=1)
    assert [(h.source, h.score) for h in fused] == [("b", pytest.approx(2 / 61))]
    fused = fuse_hits({"a": [hit("x", 1.0)], "b": [hit("y", 1.0)]}, weights={"b": 0.0})
    assert fused[1].score == 0.0


def test_fuse_does_not_mutate_inputs():
    h = hit("x", 1.0, path="/p")
    fuse_hits({"a": [h], "b": [hit("y", 1.0)]})
    assert h.source is None and dict(h.metadata) == {"path": "/p"}


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"rrf_k": -1}, ValueError, "rrf_k"),
    ({"weights": {"a": -1}}, ValueError, "weights"),
    ({"weights": [1]}, TypeError, "weights"),
    ({"k": 0}, ValueError, "k must be"),
    ({"identity": "path"}, ValueError, "unknown identity"),
    ({"identity": 3}, TypeError, "identity"),
])
def test_fuse_bad_arguments(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        fuse_hits({"a": [hit("x", 1.0)], "b": []}, **kwargs)


def test_fuse_bad_input():
    with pytest.raises(TypeError, match="mapping"):
        fuse_hits([[hit("x", 1.0)]])
    with pytest.raises(TypeError, match="unhashable"):
        fuse_hits({"a": [hit("x", 1.0)], "b": []}, identity=lambda h: [1])
    assert json.dumps([h.to_dict() for h in fuse_hits({"a": [hit("x", 1)], "b": []})])
