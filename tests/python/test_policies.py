"""Policies: choices against brute force, costs, ties, nothing-left, RNG hygiene."""

import itertools
import random

import numpy as np
import pandas as pd
import pytest
from conftest import random_frame
from hypothesis import HealthCheck, given, settings, strategies as st

from rowvoi import (
    CandidateMIPolicy,
    CandidateState,
    DisambiguationSession,
    GreedyCoveragePolicy,
    MIPolicy,
    Policy,
    RandomPolicy,
    RowVoiModel,
    StopRules,
    find_key_probabilistic,
    plan_key_path_probabilistic,
)


def brute_mi(df, state, col):
    p = state.posterior / state.posterior.sum()
    vals = df.loc[state.candidate_rows, col].to_numpy()
    h = lambda q: float(-(q[q > 0] * np.log2(q[q > 0])).sum())  # noqa: E731
    exp = 0.0
    for v in pd.unique(vals):
        m = vals == v
        exp += p[m].sum() * h(p[m] / p[m].sum()) if p[m].sum() > 0 else 0.0
    return h(p) - exp


def brute_best(scores, costs):
    best, val = None, -1.0
    for c, s in scores.items():
        r = s / costs.get(c, 1.0)
        if s > 1e-12 and r > val * (1 + 1e-12) + 1e-15:
            best, val = c, r
    return best


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(2, 30), st.integers(1, 6), st.integers(0, 10_000), st.booleans())
def test_candidate_mi_matches_brute_force(n, m, seed, skew):
    df = random_frame(n, m, seed, unique=False)
    rng = np.random.default_rng(seed)
    rows = list(rng.choice(n, size=max(2, n // 2), replace=False))
    post = rng.random(len(rows)) ** (4 if skew else 1) + 1e-3
    state = CandidateState(rows, post / post.sum())
    costs = {c: float(rng.integers(1, 4)) for c in df.columns}
    policy = CandidateMIPolicy(costs=costs)
    s = policy.suggest(df, state)
    scores = {c: brute_mi(df, state, c) for c in df.columns}
    assert s.col == brute_best(scores, costs)
    for c in df.columns:
        assert policy.compute_mi(df, state, c) == pytest.approx(scores[c], abs=1e-12)
    if s.col is not None:
        assert s.expected_voi == pytest.approx(scores[s.col], abs=1e-12)
        assert s.score == pytest.approx(scores[s.col] / costs[s.col], abs=1e-12)
        assert s.marginal_cost == costs[s.col]


def test_candidate_mi_normalize_and_nothing_left():
    df = pd.DataFrame({"a": [0, 0, 1, 1], "b": [5, 5, 5, 5]})
    state = CandidateState.uniform([0, 1, 2, 3])
    s = CandidateMIPolicy(normalize=True).suggest(df, state)
    assert s.col == "a" and s.score == pytest.approx(0.5) and s.expected_voi == 1.0
    # after observing a, only the constant column is left: col=None, not 'b'
    s2 = CandidateMIPolicy().suggest(df, state.filter_candidates(df, "a", 0))
    assert s2.col is None and s2.score == 0.0
    # one candidate: nothing to learn, the first unobserved column at 0 bits
    one = CandidateMIPolicy().suggest(df, CandidateState.uniform([2], observed_cols={"a"}))
    assert one.col == "b" and one.expected_voi == 0.0
    done = CandidateState.uniform([2], observed_cols={"a", "b"})
    assert CandidateMIPolicy().suggest(df, done).col is None
    # candidate_cols restricts; observed columns are skipped
    assert CandidateMIPolicy().suggest(df, state, ["b"]).col is None
    assert isinstance(CandidateMIPolicy(), Policy)


def test_greedy_coverage_pairs_entropy_and_idf_against_brute_force():
    for seed in range(15):
        df = random_frame(12, 5, seed, unique=False)
        rng = np.random.default_rng(seed)
        rows = list(range(12))
        post = rng.random(12) + 0.01
        state = CandidateState(rows, post / post.sum())
        pairs = list(itertools.combinations(rows, 2))
        sep = {c: {(i, j) for i, j in pairs if df.at[i, c] != df.at[j, c]} for c in df.columns}
        costs = {c: float(rng.integers(1, 3)) for c in df.columns}
        s = GreedyCoveragePolicy(costs=costs).suggest(df, state)
        assert s.col == brute_best({c: float(len(sep[c])) for c in df.columns}, costs)
        if s.col is not None:
            assert s.debug["newly_covered_pairs"] == len(sep[s.col])
        k = {pr: sum(pr in sep[c] for c in df.columns) for pr in pairs}
        idf = {c: sum(1.0 / k[pr] for pr in sep[c]) for c in df.columns}
        s = GreedyCoveragePolicy(costs=costs, weighting="pair_idf").suggest(df, state)
        assert s.col == brute_best(idf, costs)
        assert s.score == pytest.approx(idf[s.col] / costs[s.col])
        ent = {c: brute_mi(df, state, c) for c in df.columns}
        s = GreedyCoveragePolicy(costs=costs, objective="entropy").suggest(df, state)
        assert s.col == brute_best(ent, costs)
        assert s.score == pytest.approx(ent[s.col] / costs[s.col], abs=1e-12)


def test_greedy_coverage_counts_only_pairs_the_observed_columns_left_open():
    # soft evidence keeps candidates that differ on the observed column 'a';
    # pairs that 'a' already tells apart are not "newly" covered again
    df = pd.DataFrame({"a": [0, 0, 1, 1], "b": [0, 1, 0, 1], "c": [0, 0, 1, 1]})
    state = CandidateState.uniform([0, 1, 2, 3]).reweight(
        [1, 1, 1, 1], observed_col="a", observed_value=0
    )
    s = GreedyCoveragePolicy().suggest(df, state)
    assert s.col == "b" and s.debug["newly_covered_pairs"] == 2
    assert s.debug["total_pairs"] == 2
    assert GreedyCoveragePolicy().suggest(df, state, ["c"]).col is None
    s = GreedyCoveragePolicy(weighting="pair_idf").suggest(df, state, ["b", "c"])
    assert s.col == "b" and s.debug["newly_covered_pairs"] == 2


def test_greedy_coverage_skips_zero_mass_candidates():
    df = pd.DataFrame({"a": [0, 1, 1], "b": [0, 0, 1]})
    state = CandidateState([0, 1, 2], [0.0, 0.5, 0.5])
    assert GreedyCoveragePolicy().suggest(df, state).col == "b"


def test_mi_policy_forwards_costs_and_objective():
    df = pd.DataFrame({"a": [0, 0, 1, 1], "b": [0, 1, 2, 3]})
    model = RowVoiModel().fit(df)
    state = CandidateState.uniform(df.index)
    assert MIPolicy(model).suggest(df, state).col == "b"
    s = MIPolicy(model, feature_costs={"b": 4.0}).suggest(df, state)
    assert s.col == "a" and s.score == 1.0 and s.marginal_cost == 1.0
    assert MIPolicy(model, objective="mi", feature_costs={"b": 4.0}).suggest(df, state).col == "b"
    one = MIPolicy(model).suggest(df, CandidateState.uniform([0]))
    assert one.col == "a" and one.expected_voi == 0.0
    none = MIPolicy(model).suggest(df, CandidateState.uniform([0], observed_cols={"a", "b"}))
    assert none.col is None
    with pytest.raises(ValueError, match="objective"):
        MIPolicy(model, objective="bits")


def test_random_policy_seeded_and_leaves_global_rng_alone():
    df = random_frame(40, 8, 5)
    state = CandidateState.uniform(df.index)
    random.seed(123)
    np.random.seed(123)
    before_py, before_np = random.getstate(), np.random.get_state()[1].copy()

    def sequence(seed):
        policy = RandomPolicy(seed=seed)
        out, s = [], state
        for _ in range(5):
            sug = policy.suggest(df, s)
            if sug.col is None:
                break
            out.append(sug.col)
            s = s.filter_candidates(df, sug.col, df.at[0, sug.col])
        return out

    a, b = sequence(11), sequence(11)
    assert a == b and len(a) >= 2
    assert random.getstate() == before_py
    assert np.array_equal(np.random.get_state()[1], before_np)
    seqs = {tuple(sequence(s)) for s in range(12)}
    assert len(seqs) > 1  # the seed matters
    # never a zero-information column
    df2 = pd.DataFrame({"const": [1, 1, 1], "x": [1, 2, 3]})
    for s in range(10):
        assert RandomPolicy(seed=s).suggest(df2, CandidateState.uniform([0, 1, 2])).col == "x"
    assert (
        RandomPolicy(seed=1).suggest(df2, CandidateState.uniform([0, 1, 2]), ["const"]).col is None
    )
    with pytest.raises(ValueError, match="seed"):
        RandomPolicy(seed=-1)


def test_policy_bad_input():
    df = pd.DataFrame({"a": [0, 1, 2], "b": [1, 1, 2]})
    state = CandidateState.uniform([0, 1, 2])
    empty = CandidateState.uniform([])
    model = RowVoiModel().fit(df)
    for policy in (
        CandidateMIPolicy(),
        GreedyCoveragePolicy(),
        MIPolicy(model),
        RandomPolicy(seed=0),
        GreedyCoveragePolicy(objective="entropy"),
    ):
        with pytest.raises(KeyError, match="zz"):
            policy.suggest(df, state, ["a", "zz"])
        with pytest.raises(ValueError, match="no candidate rows"):
            policy.suggest(df, empty)
        with pytest.raises(KeyError):
            policy.suggest(df, CandidateState.uniform([0, 7]))
        with pytest.raises(TypeError):
            policy.suggest(df, [0, 1, 2])
    for bad in (-1.0, -1e-300, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="cost"):
            CandidateMIPolicy(costs={"a": bad}).suggest(df, state)
        with pytest.raises(ValueError, match="cost"):
            GreedyCoveragePolicy(costs={"a": bad}).suggest(df, state)
        with pytest.raises(ValueError, match="cost"):
            MIPolicy(model, feature_costs={"a": bad}).suggest(df, state)
    with pytest.raises(ValueError, match="not in df"):
        CandidateMIPolicy(costs={"zz": 1.0}).suggest(df, state)
    with pytest.raises(ValueError, match="objective"):
        GreedyCoveragePolicy(objective="bits")
    with pytest.raises(ValueError, match="weighting"):
        GreedyCoveragePolicy(weighting="idf")
    with pytest.raises(ValueError, match="no pair weights"):
        GreedyCoveragePolicy(objective="entropy", weighting="pair_idf")
    with pytest.raises(KeyError):
        CandidateMIPolicy().compute_mi(df, state, "zz")
    # NaN likelihoods: a ValueError naming the argument
    with pytest.raises(ValueError, match=r"likelihoods\[1\]"):
        state.reweight([1.0, float("nan"), 1.0])


# ------------------------------------------------------------ free columns
FREE_DF = pd.DataFrame(
    {
        "rich": [0, 1, 2, 3, 4, 5, 6, 7],  # tells all eight apart
        "half": [0, 0, 0, 0, 1, 1, 1, 1],  # one bit
        "quarter": [0, 0, 1, 1, 2, 2, 3, 3],  # two bits
        "odd": [0, 1, 0, 1, 0, 1, 0, 1],  # one bit, the one quarter leaves
        "same": [9] * 8,  # nothing
    }
)


def _free_policies(costs):
    model = RowVoiModel().fit(FREE_DF)
    return [
        CandidateMIPolicy(costs=costs),
        CandidateMIPolicy(costs=costs, normalize=True),
        GreedyCoveragePolicy(costs=costs),
        GreedyCoveragePolicy(costs=costs, objective="entropy"),
        GreedyCoveragePolicy(costs=costs, weighting="pair_idf"),
        MIPolicy(model, feature_costs=costs),
    ]


def test_a_free_informative_column_comes_first():
    state = CandidateState.uniform(FREE_DF.index)
    costs = {"rich": 1.0, "half": 0, "quarter": 2.0, "same": 0}
    for policy in _free_policies(costs):
        s = policy.suggest(FREE_DF, state)
        # half is worth less than rich but costs nothing: infinitely good value;
        # same costs nothing too but tells nothing, so it never wins
        assert s.col == "half", type(policy).__name__
        assert s.score == float("inf") and s.marginal_cost == 0.0
        assert s.cost_adjusted_score == float("inf")


def test_among_free_columns_the_most_informative_wins():
    state = CandidateState.uniform(FREE_DF.index)
    costs = {"rich": 5.0, "half": 0, "quarter": 0.0, "same": 0}
    for policy in _free_policies(costs):
        assert policy.suggest(FREE_DF, state).col == "quarter", type(policy).__name__


def test_only_uninformative_free_columns_change_nothing():
    state = CandidateState.uniform(FREE_DF.index)
    base = [p.suggest(FREE_DF, state).col for p in _free_policies({"quarter": 2.0})]
    free = [p.suggest(FREE_DF, state).col for p in _free_policies({"quarter": 2.0, "same": 0})]
    assert base == free and "same" not in free


def test_free_columns_in_the_probabilistic_key_and_session():
    model = RowVoiModel().fit(FREE_DF)
    costs = {"odd": 0, "quarter": 0, "rich": 9.0}
    key = find_key_probabilistic(FREE_DF, FREE_DF.index, model, costs=costs)
    # free first, the most informative first; together they settle it
    assert key == ["quarter", "odd"]
    path = plan_key_path_probabilistic(FREE_DF, FREE_DF.index, model, costs=costs)
    assert path.columns()[:2] == ["quarter", "odd"] and path.steps[1].cumulative_cost == 0.0
    session = DisambiguationSession(
        FREE_DF,
        list(FREE_DF.index),
        policy=CandidateMIPolicy(costs={"half": 0}),
        feature_costs={"half": 0},
    )
    session.run(StopRules(cost_budget=0.5, target_unique=True), true_row=5)
    # a budget below every price still buys the free column, nothing paid
    assert [s.col for s in session.history] == ["half"] and session.cumulative_cost == 0.0
