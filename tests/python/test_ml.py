"""RowVoiModel: fit, noise model, suggestions, acquisition."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from conftest import random_frame
from hypothesis import HealthCheck, given, settings, strategies as st

from rowvoi import CandidateState, RowVoiModel, compute_gold_next_column_probabilistic


def noisy_mi(vals, post, noise):
    """The definition, with the noise spread over the other candidate values."""
    p = post / post.sum()
    u = pd.unique(vals)
    k = len(u)
    h = lambda q: float(-(q[q > 0] * np.log2(q[q > 0])).sum())  # noqa: E731
    if k < 2:
        return 0.0
    exp = 0.0
    for v in u:
        lik = np.where(vals == v, 1 - noise, noise / (k - 1))
        j = p * lik
        exp += j.sum() * h(j / j.sum())
    return h(p) - exp


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(2, 25),
    st.integers(1, 5),
    st.integers(0, 10_000),
    st.sampled_from([0.0, 0.05, 0.3, 0.8]),
)
def test_expected_voi_is_the_noisy_information_gain(n, m, seed, noise):
    df = random_frame(n, m, seed, unique=False)
    rng = np.random.default_rng(seed)
    post = rng.random(n) + 0.01
    state = CandidateState(list(df.index), post / post.sum())
    model = RowVoiModel(noise=noise).fit(df)
    s = model.suggest_next_feature(df, state)
    gains = {c: noisy_mi(df[c].to_numpy(), state.posterior, noise) for c in df.columns}
    if s.col is None:
        assert max(gains.values()) <= 1e-12
        return
    assert s.expected_voi == pytest.approx(gains[s.col], abs=1e-12)
    assert s.expected_voi == pytest.approx(max(gains.values()), abs=1e-12)
    assert s.debug["entropy_after"] == pytest.approx(state.entropy - gains[s.col], abs=1e-12)
    gold = compute_gold_next_column_probabilistic(df, state, model)
    assert gains[gold] == pytest.approx(gains[s.col], abs=1e-12)
    gold2 = compute_gold_next_column_probabilistic(
        df, state, model, objective="expected_entropy_reduction"
    )
    assert gains[gold2] == pytest.approx(gains[s.col], abs=1e-12)


def test_constant_column_is_never_suggested_at_any_noise():
    df = pd.DataFrame({"k": [1, 1, 1, 1], "x": [0, 1, 0, 1]})
    for noise in (0.0, 0.3, 0.99):
        model = RowVoiModel(noise=noise).fit(df)
        s = model.suggest_next_feature(df, CandidateState.uniform(df.index))
        assert s.col == "x"
        assert model.suggest_next_feature(df, CandidateState.uniform(df.index), ["k"]).col is None


def test_noise_lowers_the_gain_monotonically():
    df = pd.DataFrame({"x": [0, 1, 2, 3]})
    state = CandidateState.uniform(df.index)
    gains = [
        RowVoiModel(noise=e).fit(df).suggest_next_feature(df, state).expected_voi
        for e in (0.0, 0.1, 0.3, 0.6)
    ]
    assert gains[0] == 2.0 and all(a > b for a, b in itertools.pairwise(gains))
    # the K = 4 symmetric channel: 2 - h(e) - e log2(3)
    e = 0.1
    want = 2 + (1 - e) * math.log2(1 - e) + e * math.log2(e / 3)
    assert gains[1] == pytest.approx(want, abs=1e-12)


def test_fit_frequencies_entropies_and_bins():
    df = pd.DataFrame(
        {
            "age": [20, 30, 40, 50, 60, 70],
            "g": list("aabbbc"),
            "f": [1.0, np.nan, 1.0, 2.0, 2.0, np.nan],
        }
    )
    m = RowVoiModel(smoothing=0.5).fit(df, discrete_cols=["g", "f"], bins=2)
    assert list(m.bin_edges_) == ["age"] and m.bin_edges_["age"].tolist() == [20, 45, 70]
    fg = m.frequencies_["g"]
    assert fg.to_dict() == pytest.approx({"a": 2.5 / 7.5, "b": 3.5 / 7.5, "c": 1.5 / 7.5})
    assert m.entropies_["g"] == pytest.approx(-sum(p * math.log2(p) for p in fg))
    ff = m.frequencies_["f"]
    assert len(ff) == 3 and ff.sum() == pytest.approx(1.0)  # NaN is one value
    assert m.frequencies_["age"].sum() == pytest.approx(1.0)
    assert RowVoiModel().fit(df).bin_edges_ == {}  # discrete_cols=None: all discrete
    with pytest.raises(ValueError, match="bins"):
        RowVoiModel().fit(df, discrete_cols=[], bins=0)
    with pytest.raises(KeyError):
        RowVoiModel().fit(df, discrete_cols=["zz"])
    empty = RowVoiModel().fit(df.iloc[:0])  # no rows: empty tables, still usable
    assert empty.columns_ == list(df.columns) and empty.entropies_["age"] == 0.0


def test_scores_the_df_it_is_given_with_the_fitted_bins():
    train = pd.DataFrame({"age": [20, 30, 40, 50], "c": [0, 0, 1, 1]})
    model = RowVoiModel().fit(train, discrete_cols=["c"], bins=2)  # age cut at 35
    state = CandidateState.uniform([0, 1, 2, 3])
    new = pd.DataFrame({"age": [21, 22, 80, 90], "c": [5, 5, 5, 5]})
    s = model.suggest_next_feature(new, state)
    assert s.col == "age" and s.expected_voi == 1.0  # c is constant in the new frame
    same = pd.DataFrame({"age": [21, 22, 23, 24], "c": [0, 1, 2, 3]})
    assert model.suggest_next_feature(same, state).col == "c"  # ages share one bin
    # observing a raw age narrows to its bin
    steps = model.run_acquisition(new, 2, state)
    assert [x.col for x in steps] == ["age"]
    with pytest.raises(KeyError, match="not seen by fit"):
        model.suggest_next_feature(new.assign(extra=1), state)


def test_costs_change_the_choice_and_normalized_mi_is_a_diagnostic():
    df = pd.DataFrame({"a": [0, 0, 1, 1, 0, 1], "b": [0, 1, 2, 3, 4, 5]})
    model = RowVoiModel().fit(df)
    state = CandidateState.uniform(df.index)
    s = model.suggest_next_feature(df, state)
    assert s.col == "b" and s.score == s.expected_voi
    assert s.debug["normalized_mi"] == pytest.approx(s.expected_voi / model.entropies_["b"])
    c = model.suggest_next_feature(df, state, objective="mi_over_cost", feature_costs={"b": 10.0})
    assert c.col == "a" and c.score == pytest.approx(1.0)
    plain = RowVoiModel(normalize_cols=False).fit(df).suggest_next_feature(df, state)
    assert plain.col == "b" and "normalized_mi" not in plain.debug


@pytest.mark.parametrize("noise", [0.0, 0.05, 0.2])
def test_run_acquisition_finds_the_true_row(noise):
    df = random_frame(60, 12, 4, max_card=5)
    model = RowVoiModel(noise=noise).fit(df)
    state = CandidateState.uniform(df.index)
    for true_row in (0, 17, 59):
        steps = model.run_acquisition(df, true_row, state)
        assert len({s.col for s in steps}) == len(steps) <= 12
        # replay the updates: the true row ends up the most probable
        s = state
        for step in steps:
            s = model._observe(df, s, step.col, df.at[true_row, step.col])
        assert s.candidate_rows[int(np.argmax(s.posterior))] == true_row
        if noise == 0.0:
            assert s.is_unique
    assert model.run_acquisition(df, 5, state, max_steps=2).__len__() == 2
    assert state.observed_cols == set()  # initial_state untouched
    with pytest.raises(ValueError, match="not one of the candidate"):
        model.run_acquisition(df, 5, CandidateState.uniform([1, 2]))
    with pytest.raises(KeyError):
        model.run_acquisition(df, 999, state)
    with pytest.raises(ValueError, match="max_steps"):
        model.run_acquisition(df, 5, state, max_steps=-1)


def test_model_bad_input():
    with pytest.raises(ValueError, match=r"noise must be in \[0, 1\)"):
        RowVoiModel(noise=1.0)
    with pytest.raises(ValueError, match="noise"):
        RowVoiModel(noise=-0.01)
    with pytest.raises(ValueError, match="noise"):
        RowVoiModel(noise=float("nan"))
    with pytest.raises(ValueError, match="smoothing"):
        RowVoiModel(smoothing=-1)
    df = pd.DataFrame({"a": [0, 1]})
    with pytest.raises(RuntimeError, match="fit"):
        RowVoiModel().suggest_next_feature(df, CandidateState.uniform([0, 1]))
    model = RowVoiModel().fit(df)
    with pytest.raises(ValueError, match="objective"):
        model.suggest_next_feature(df, CandidateState.uniform([0, 1]), objective="x")
    with pytest.raises(ValueError, match="feature costs must be finite and >= 0"):
        model.suggest_next_feature(df, CandidateState.uniform([0, 1]), feature_costs={"a": -2})
    # the reference's rule for mi_over_cost: every cost > 0 (0 and negatives alike)
    for bad in (0, -2):
        with pytest.raises(ValueError, match="feature costs must be positive"):
            model.suggest_next_feature(
                df,
                CandidateState.uniform([0, 1]),
                objective="mi_over_cost",
                feature_costs={"a": bad},
            )
    with pytest.raises(ValueError, match="no candidate rows"):
        model.suggest_next_feature(df, CandidateState.uniform([]))
    with pytest.raises(KeyError):
        model.suggest_next_feature(df, CandidateState.uniform([0, 1]), ["nope"])
