"""rowvoi.corpus.retrieval.selection: properties of every strategy, abstention, errors."""

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from rowvoi.corpus.base import SearchHit
from rowvoi.corpus.retrieval.selection import SELECT_STRATEGIES, Selection, ranked, select

scores = st.lists(st.floats(min_value=0.0, max_value=100.0, allow_nan=False), max_size=12)


def make_hits(values):
    return [SearchHit(f"a{i}", "document", v, f"text {i}") for i, v in enumerate(values)]


def positions(sel: Selection, hits):
    where = {id(h): i for i, h in enumerate(sel.candidates)}
    return [where[id(h)] for h in sel.selected]


@settings(max_examples=300, deadline=None)
@given(
    values=scores,
    strategy=st.sampled_from(SELECT_STRATEGIES),
    max_k=st.integers(1, 6),
    rel=st.floats(0.05, 1.0),
    gap=st.floats(0.05, 1.0),
    floor=st.one_of(st.none(), st.floats(0.0, 100.0)),
)
def test_selection_invariants(values, strategy, max_k, rel, gap, floor):
    if strategy == "abs_threshold" and floor is None:
        floor = 10.0
    hits = make_hits(values)
    before = list(hits)
    sel = select(hits, strategy=strategy, max_k=max_k, rel=rel, gap_ratio=gap, min_score=floor)
    assert hits == before  # the input is never touched
    # candidates: every input hit, score descending, ties in input order
    assert sorted(map(id, sel.candidates)) == sorted(map(id, hits))
    keys = [(-h.score, int(h.artifact_id[1:])) for h in sel.candidates]
    assert keys == sorted(keys)
    # selected: a subset of the candidates, in rank order, capped, floored
    pos = positions(sel, hits)
    assert pos == sorted(set(pos))
    assert len(sel.selected) <= max_k
    assert sel.abstained == (not sel.selected)
    assert sel.sufficient == (not sel.abstained)
    assert sel.signals["n_selected"] == len(sel.selected)
    assert sel.signals["n_candidates"] == len(hits)
    if floor is not None:
        assert all(h.score >= floor for h in sel.selected)
    if not hits:
        assert sel.reason == "abstain:no_candidates"
        return
    top = sel.candidates[0].score
    if floor is not None and top < floor:
        assert sel.abstained and sel.reason == "abstain:below_floor"
        return
    # a floor never empties the selection while the top clears it
    assert not sel.abstained
    assert sel.candidates[0] is sel.selected[0]
    eligible = [h for h in sel.candidates if floor is None or h.score >= floor]
    # every named strategy keeps a prefix of the eligible ranking
    assert sel.selected == eligible[: len(sel.selected)]
    nxt = eligible[len(sel.selected)] if len(sel.selected) < len(eligible) else None
    if strategy in ("conservative", "rel_threshold"):
        assert all(h.score >= rel * top for h in sel.selected)
        if nxt is not None and nxt.score >= rel * top:
            assert len(sel.selected) == max_k and sel.reason == "max_k"
    elif strategy == "score_gap":
        for a, b in zip(sel.selected, sel.selected[1:]):
            assert b.score >= gap * a.score
        if nxt is not None and nxt.score >= gap * sel.selected[-1].score:
            assert len(sel.selected) == max_k
    else:  # top_k, abs_threshold: only the floor and the cap
        assert len(sel.selected) == min(max_k, len(eligible))
    if nxt is None:
        assert sel.reason in ("exhausted", "abs_threshold")
    if sel.signals["min_ratio"] is not None:
        assert math.isclose(sel.signals["min_ratio"], sel.selected[-1].score / top)


@settings(max_examples=150, deadline=None)
@given(values=scores, picks=st.lists(st.integers(0, 11)), max_k=st.integers(1, 5))
def test_callable_selector_is_put_back_in_rank_order_and_capped(values, picks, max_k):
    hits = make_hits(values)

    def chooser(hs):
        return [hs[i] for i in picks if i < len(hs)] + [hs[i] for i in picks if i < len(hs)]

    sel = select(hits, strategy=chooser, max_k=max_k)
    ranking = ranked(hits)
    wanted = sorted({i for i in picks if i < len(hits)})
    expected = [ranking[i] for i in wanted][:max_k]
    assert sel.selected == expected
    if hits and not wanted:
        assert sel.abstained and sel.reason == "abstain:selector"
    elif len(wanted) > max_k:
        assert sel.reason == "max_k"


def test_conservative_example_and_reasons():
    hits = make_hits([0.91, 0.88, 0.40])
    sel = select(hits)
    assert sel.selected_ids == ["a0", "a1"]
    assert sel.reason == "rel_threshold"
    assert sel.signals == {
        "top_score": 0.91,
        "n_candidates": 3,
        "n_selected": 2,
        "min_ratio": pytest.approx(0.88 / 0.91),
        "min_score": None,
        "floor_compares": "score",
        "top_floor_score": 0.91,
    }
    assert select(make_hits([5.0, 5.0])).reason == "exhausted"
    assert select(make_hits([5.0] * 5)).reason == "max_k"
    assert select(make_hits([5.0, 4.0, 1.0]), min_score=3.0, rel=0.1).reason == "abs_threshold"
    assert select(make_hits([5.0, 1.0]), strategy="score_gap").reason == "score_gap"
    assert select([]).reason == "abstain:no_candidates"
    sel = select(make_hits([0.3, 0.2]), min_score=0.35)
    assert (sel.abstained, sel.reason, sel.selected) == (True, "abstain:below_floor", [])
    assert sel.signals["min_score"] == 0.35 and sel.signals["top_score"] == 0.3


def test_all_zero_scores_are_a_tie_not_an_error():
    sel = select(make_hits([0.0, 0.0, 0.0, 0.0]))
    assert sel.selected_ids == ["a0", "a1", "a2"] and sel.signals["min_ratio"] is None


def test_relative_rules_need_a_non_negative_top():
    hits = make_hits([-0.1, -0.3])
    for strategy in ("conservative", "rel_threshold", "score_gap"):
        with pytest.raises(ValueError, match="negative"):
            select(hits, strategy=strategy)
    assert select(hits, strategy="top_k").selected_ids == ["a0", "a1"]
    # a negative tail is fine: it is simply below the band
    assert select(make_hits([0.5, -0.2])).selected_ids == ["a0"]
    # the floor may lift the top above zero for the rule
    assert select(make_hits([-0.1, 0.4]), min_score=0.0).selected_ids == ["a1"]


def test_ties_keep_input_order():
    hits = [SearchHit(x, "document", 1.0, "") for x in "dcba"]
    assert select(hits, strategy="top_k", max_k=4).selected_ids == ["d", "c", "b", "a"]


def test_numpy_scores_and_json():
    hits = [
        SearchHit("a", "document", np.float32(0.75), "t", {"n": np.int64(2)}),
        SearchHit("b", "document", np.float64(0.7), "u"),
    ]
    d = select(hits).to_dict()
    text = json.dumps(d)
    assert json.loads(text)["selected"][0]["metadata"] == {"n": 2}
    assert type(d["signals"]["top_score"]) is float
    assert set(d) == {"selected", "candidates", "abstained", "reason", "signals"}


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"strategy": "best"}, ValueError, "unknown selection strategy"),
        ({"max_k": 0}, ValueError, "max_k"),
        ({"max_k": 2.5}, TypeError, "max_k"),
        ({"max_k": True}, TypeError, "max_k"),
        ({"rel": 0.0}, ValueError, "rel"),
        ({"rel": 1.5}, ValueError, "rel"),
        ({"rel": "high"}, TypeError, "rel"),
        ({"strategy": "score_gap", "gap_ratio": 0}, ValueError, "gap_ratio"),
        ({"min_score": float("nan")}, ValueError, "finite"),
        ({"min_score": "auto"}, TypeError, "min_score"),
        ({"strategy": "abs_threshold"}, ValueError, "needs min_score"),
    ],
)
def test_bad_arguments(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        select(make_hits([1.0, 0.5]), **kwargs)


def test_bad_hits():
    with pytest.raises(TypeError, match="not a SearchHit"):
        select([("a", 1.0)])
    with pytest.raises(TypeError, match="sequence of SearchHit"):
        select(SearchHit("a", "d", 1.0, ""))
    with pytest.raises(ValueError, match="finite"):
        select(make_hits([1.0, float("nan")]))
    with pytest.raises(ValueError, match="not one of the candidate hits"):
        select(make_hits([1.0]), strategy=lambda hs: [SearchHit("zz", "d", 1.0, "")])
    with pytest.raises(TypeError, match="must return a sequence"):
        select(make_hits([1.0]), strategy=lambda hs: None)


def test_generator_input_is_accepted():
    sel = select(h for h in make_hits([2.0, 1.95]))
    assert sel.selected_ids == ["a0", "a1"]
