"""DisambiguationSession and StopRules."""

import numpy as np
import pandas as pd
import pytest
from conftest import random_frame
from hypothesis import HealthCheck, given, settings, strategies as st

from rowvoi import (
    CandidateMIPolicy,
    CandidateState,
    DisambiguationSession,
    FeatureSuggestion,
    GreedyCoveragePolicy,
    MIPolicy,
    RandomPolicy,
    RowVoiModel,
    StopRules,
    pairwise_coverage,
)


def unique_frame(n, m, seed, max_card=4):
    """Random small-cardinality frame with duplicate rows dropped (>= 2 rows)."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {f"c{j}": rng.integers(0, rng.integers(2, max_card + 1), n) for j in range(m)}
    )
    df = df.drop_duplicates().reset_index(drop=True)
    if len(df) < 2:
        df = pd.DataFrame({f"c{j}": [0, 1] for j in range(m)})
    return df


SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def make_policy(kind, df, seed):
    if kind == "mi":
        return CandidateMIPolicy()
    if kind == "pairs":
        return GreedyCoveragePolicy()
    if kind == "entropy":
        return GreedyCoveragePolicy(objective="entropy")
    if kind == "idf":
        return GreedyCoveragePolicy(weighting="pair_idf")
    if kind == "random":
        return RandomPolicy(seed=seed)
    return MIPolicy(RowVoiModel().fit(df))


@SETTINGS
@given(
    st.integers(2, 25),
    st.integers(2, 6),
    st.integers(0, 10_000),
    st.sampled_from(["mi", "pairs", "entropy", "idf", "random", "model"]),
)
def test_duplicate_free_tables_always_reach_the_true_row(n, m, seed, kind):
    df = unique_frame(n, m, seed)
    n = len(df)
    df.index = [f"r{i}" for i in range(n)]
    rng = np.random.default_rng(seed)
    true_row = df.index[int(rng.integers(n))]
    session = DisambiguationSession(df, df.index, policy=make_policy(kind, df, seed))
    steps = session.run(StopRules(), true_row=true_row)
    assert session.state.is_unique and session.state.unique_row == true_row
    assert session.stop_reason == "Found unique row"
    assert len({s.col for s in steps}) == len(steps) <= m
    for s in steps:
        assert s.observed_value == df.at[true_row, s.col]
        assert s.suggestion.col == s.col
        assert s.entropy_after <= s.entropy_before + 1e-12
    if steps:
        cols = [s.col for s in steps]
        assert steps[-1].pair_coverage_after == pytest.approx(
            pairwise_coverage(df, list(df.index), cols)
        )


@SETTINGS
@given(
    st.integers(3, 20),
    st.integers(2, 6),
    st.integers(0, 10_000),
    st.floats(0.0, 8.0),
    st.sampled_from(["mi", "pairs", "random"]),
)
def test_budget_is_never_exceeded(n, m, seed, budget, kind):
    df = random_frame(n, m, seed, max_card=3, unique=False)
    rng = np.random.default_rng(seed)
    costs = {c: float(rng.choice([0.5, 1.0, 2.5, 4.0])) for c in df.columns}
    session = DisambiguationSession(
        df, df.index, policy=make_policy(kind, df, seed), feature_costs=costs
    )
    steps = session.run(StopRules(cost_budget=budget), true_row=int(rng.integers(n)))
    assert session.cumulative_cost <= budget + 1e-9
    assert sum(costs[s.col] for s in steps) == pytest.approx(session.cumulative_cost)
    if not session.state.is_unique:
        remaining = [c for c in df.columns if c not in session.state.observed_cols]
        assert session.stop_reason
        if "budget" in session.stop_reason:
            assert all(
                session.cumulative_cost + costs[c] > budget for c in remaining
            ) or session.cumulative_cost >= budget * (1 - 1e-12)


def test_step_records_the_policys_actual_suggestion():
    df = pd.DataFrame({"a": [0, 0, 1, 1], "b": [0, 1, 0, 1]})
    session = DisambiguationSession(
        df, [0, 1, 2, 3], policy=CandidateMIPolicy(), feature_costs={"b": 2.0}
    )
    q = session.next_question()
    step = session.observe(q.col, 1)
    assert step.suggestion is q and step.cost == 1.0
    other = session.observe("b", 0)  # not suggested: a caller-made record
    assert other.suggestion.col == "b" and other.suggestion.debug == {"source": "caller"}
    assert session.cumulative_cost == 3.0 and session.steps_taken == 2
    assert session.state.candidate_rows == [2]
    assert [s.cumulative_cost for s in session.history] == [1.0, 3.0]


def test_reset_restores_candidates_and_prior():
    df = pd.DataFrame({"a": [0, 0, 1, 1], "b": [0, 1, 0, 1]}, index=list("wxyz"))
    prior = {"w": 4.0, "x": 2.0, "y": 1.0, "z": 1.0}
    session = DisambiguationSession(df, list("wxyz"), prior=prior, policy=CandidateMIPolicy())
    start = session.state.posterior.copy()
    assert start.tolist() == [0.5, 0.25, 0.125, 0.125]
    session.run(StopRules(), true_row="z")
    assert session.state.unique_row == "z" and session.steps_taken > 0
    session.reset()
    assert session.state.candidate_rows == list("wxyz")
    assert session.state.posterior.tolist() == start.tolist()
    assert session.steps_taken == 0 and session.cumulative_cost == 0.0
    assert session.state.observed_cols == set() and session.stop_reason == ""
    session.reset(["x", "y"])
    assert session.state.candidate_rows == ["x", "y"]
    assert session.state.posterior.tolist() == pytest.approx([2 / 3, 1 / 3])
    session.reset()
    assert session.state.candidate_rows == list("wxyz")


def test_run_ends_when_an_observation_matches_no_candidate():
    df = pd.DataFrame({"a": [0, 0, 1, 1, 2], "b": [0, 1, 0, 1, 0]})
    session = DisambiguationSession(df, [0, 1, 2, 3], policy=CandidateMIPolicy())
    steps = session.run(StopRules(), true_row=4)  # not a candidate, its a = 2
    assert session.state.candidate_rows == []
    assert session.stop_reason == "no candidate matches the observed values"
    assert len(steps) == 1
    with pytest.raises(ValueError, match="no candidate rows"):
        session.next_question()


def test_run_ends_when_nothing_informative_is_left():
    df = pd.DataFrame({"a": [0, 0, 1], "b": [7, 7, 7]})  # rows 0 and 1 are duplicates
    session = DisambiguationSession(df, [0, 1, 2], policy=CandidateMIPolicy())
    session.run(StopRules(), true_row=0)
    assert session.state.candidate_rows == [0, 1]
    assert session.stop_reason == "no informative column left to ask"


def test_run_ends_on_a_misbehaving_policy():
    class Stubborn:
        def suggest(self, df, state, candidate_cols=None):
            return FeatureSuggestion("a", 1.0)

    df = pd.DataFrame({"a": [0, 0, 1], "b": [0, 1, 1]})
    session = DisambiguationSession(df, [0, 1, 2], policy=Stubborn())
    session.run(StopRules(), true_row=1)
    assert session.steps_taken == 1
    assert "may not be asked" in session.stop_reason


def test_other_stop_rules():
    df = random_frame(30, 6, 2)
    s = DisambiguationSession(df, df.index, policy=CandidateMIPolicy())
    s.run(StopRules(max_steps=1), true_row=3)
    assert s.steps_taken == 1 and s.stop_reason == "Reached max steps (1)"
    s.run(StopRules(max_steps=2), true_row=3)  # continues the same session
    assert s.steps_taken == 2
    s = DisambiguationSession(df, df.index, policy=CandidateMIPolicy())
    s.run(StopRules(target_unique=False, epsilon_pairs=0.5), true_row=3)
    assert s.stop_reason == "Pair coverage >= 0.5"
    cov = pairwise_coverage(df, list(df.index), [x.col for x in s.history])
    assert cov >= 0.5
    prior = np.r_[0.9, np.full(29, 0.1 / 29)]
    s = DisambiguationSession(df, df.index, prior=prior, policy=CandidateMIPolicy())
    s.run(StopRules(target_unique=False, epsilon_posterior=0.2), true_row=0)
    assert s.steps_taken == 0 and s.stop_reason == "Residual uncertainty <= 0.2"
    s = DisambiguationSession(df, df.index, policy=CandidateMIPolicy())
    s.run(StopRules(cost_budget=0.0), true_row=0)
    assert s.steps_taken == 0 and s.stop_reason == "Reached cost budget (0.0)"
    with pytest.raises(ValueError, match="epsilon_pairs needs df"):
        StopRules(epsilon_pairs=0.1).should_stop(CandidateState.uniform([1, 2]), 0, 0.0)


def test_noisy_model_session_updates_softly_and_survives_unseen_values():
    df = random_frame(40, 10, 8, max_card=4)
    model = RowVoiModel(noise=0.05).fit(df)
    session = DisambiguationSession(df, df.index, policy=MIPolicy(model, objective="mi"))
    session.run(StopRules(), true_row=17)
    assert session.state.candidate_rows == list(df.index)  # soft: nobody dropped
    assert int(np.argmax(session.state.posterior)) == 17
    # under the noise model a value no candidate has is surprising, not disqualifying
    df2 = pd.DataFrame({"a": [0, 0, 1, 5], "b": [0, 1, 0, 1]})
    m2 = RowVoiModel(noise=0.1).fit(df2)
    s2 = DisambiguationSession(df2, [0, 1, 2], policy=MIPolicy(m2, objective="mi"))
    before = s2.state.posterior.copy()
    s2.observe("a", 5)
    assert s2.state.posterior.tolist() == pytest.approx(before.tolist())
    assert s2.state.observed_cols == {"a"}
    s2.reset()
    s2.run(StopRules(), true_row=3)  # the true row is not a candidate: the run still ends
    assert s2.stop_reason and s2.steps_taken <= 2


def test_session_bad_input():
    df = pd.DataFrame({"a": [0, 1, 2]})
    p = CandidateMIPolicy()
    with pytest.raises(ValueError, match="empty"):
        DisambiguationSession(df, [], policy=p)
    with pytest.raises(KeyError):
        DisambiguationSession(df, [0, 9], policy=p)
    with pytest.raises(ValueError, match="3 candidate rows"):
        DisambiguationSession(df, [0, 1, 2], prior=[0.5, 0.5], policy=p)
    with pytest.raises(ValueError, match="finite and >= 0"):
        DisambiguationSession(df, [0, 1, 2], prior=[0.5, -0.5, 1.0], policy=p)
    with pytest.raises(ValueError, match="zero total mass"):
        DisambiguationSession(df, [0, 1, 2], prior={0: 0.0}, policy=p)
    with pytest.raises(ValueError, match="not candidates"):
        DisambiguationSession(df, [0, 1], prior={2: 1.0}, policy=p)
    with pytest.raises(ValueError, match="cost"):
        DisambiguationSession(df, [0, 1, 2], policy=p, feature_costs={"a": -1})
    with pytest.raises(ValueError, match="not in df"):
        DisambiguationSession(df, [0, 1, 2], policy=p, feature_costs={"zz": 1})
    with pytest.raises(TypeError, match="suggest"):
        DisambiguationSession(df, [0, 1, 2], policy=object())
    s = DisambiguationSession(df, [0, 1, 2], policy=p)
    with pytest.raises(KeyError):
        s.observe("zz", 1)
    with pytest.raises(KeyError):
        s.run(StopRules(), true_row=99)
    with pytest.raises(KeyError):
        s.run(StopRules(), candidate_cols=["zz"], true_row=0)
    for bad in (
        dict(max_steps=-1),
        dict(cost_budget=-1.0),
        dict(cost_budget=float("nan")),
        dict(epsilon_posterior=1.5),
        dict(epsilon_pairs=-0.1),
    ):
        with pytest.raises(ValueError):
            StopRules(**bad)
