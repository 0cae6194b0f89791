"""CandidateState and FeatureSuggestion."""

import numpy as np
import pandas as pd
import pytest

from rowvoi import CandidateState, FeatureSuggestion


def test_uniform_and_summaries():
    s = CandidateState.uniform(["a", "b", "c", "d"], observed_cols={"x"}, observed_values={"x": 1})
    assert s.posterior.tolist() == [0.25] * 4
    assert s.entropy == 2.0
    assert s.max_posterior == 0.25 and s.residual_uncertainty == 0.75
    assert not s.is_unique and s.unique_row is None
    assert s.observed_cols == {"x"} and s.observed_values == {"x": 1}
    empty = CandidateState.uniform([])
    assert empty.entropy == 0.0 and empty.max_posterior == 0.0 and not empty.is_unique
    one = CandidateState.uniform(["z"])
    assert one.is_unique and one.unique_row == "z"


def test_is_unique_tolerance():
    s = CandidateState(["a", "b"], np.array([1 - 1e-6, 1e-6]))
    assert s.is_unique and s.unique_row == "a"
    s = CandidateState(["a", "b"], np.array([1 - 1e-4, 1e-4]))
    assert not s.is_unique


def test_validation():
    with pytest.raises(ValueError, match="sum to 1"):
        CandidateState(["a", "b"], np.array([0.5, 0.6]))
    with pytest.raises(ValueError, match="entries"):
        CandidateState(["a"], np.array([0.5, 0.5]))
    with pytest.raises(ValueError, match="non-negative"):
        CandidateState(["a", "b"], np.array([1.5, -0.5]))
    with pytest.raises(ValueError, match="finite"):
        CandidateState(["a", "b"], np.array([np.nan, 1.0]))


def test_filter_by_label_with_missing_values():
    df = pd.DataFrame({"c": ["x", None, "x", np.nan], "n": [1, 2, 3, 4]}, index=[7, 8, 9, 10])
    s = CandidateState.uniform([7, 8, 9, 10])
    f = s.filter_candidates(df, "c", "x")
    assert f.candidate_rows == [7, 9] and f.posterior.tolist() == [0.5, 0.5]
    assert f.observed_cols == {"c"} and f.observed_values == {"c": "x"}
    m = s.filter_candidates(df, "c", float("nan"))
    assert m.candidate_rows == [8, 10]
    m2 = s.filter_candidates(df, "c", pd.NA)
    assert m2.candidate_rows == [8, 10]
    none = s.filter_candidates(df, "n", 99)
    assert none.candidate_rows == [] and none.posterior.size == 0
    with pytest.raises(KeyError):
        s.filter_candidates(df, "zz", 1)


def test_reweight():
    s = CandidateState.uniform(["a", "b", "c"])
    r = s.reweight([2.0, 1.0, 0.0], observed_col="q", observed_value="yes")
    assert r.posterior.tolist() == pytest.approx([2 / 3, 1 / 3, 0.0])
    assert r.candidate_rows == ["a", "b", "c"]
    assert r.observed_values == {"q": "yes"}
    with pytest.raises(ValueError, match="Expected 3 likelihoods"):
        s.reweight([1.0, 1.0])
    with pytest.raises(ValueError, match="non-negative"):
        s.reweight([1.0, -1.0, 1.0])
    with pytest.raises(ValueError, match="finite"):
        s.reweight([1.0, np.nan, 1.0])
    with pytest.raises(ValueError, match="zero probability"):
        s.reweight([0.0, 0.0, 0.0])


def test_filter_then_reweight_commute():
    df = pd.DataFrame({"c": ["x", "y", "x", "x"]})
    s = CandidateState(list(range(4)), np.array([0.1, 0.2, 0.3, 0.4]))
    lik = np.array([1.0, 3.0, 2.0, 0.5])
    a = s.filter_candidates(df, "c", "x").reweight(lik[[0, 2, 3]])
    b = s.reweight(lik).filter_candidates(df, "c", "x")
    assert a.candidate_rows == b.candidate_rows
    assert a.posterior == pytest.approx(b.posterior)


def test_feature_suggestion():
    f = FeatureSuggestion("c", 2.0, expected_voi=2.0, marginal_cost=4.0)
    assert f.cost_adjusted_score == 0.5
    assert FeatureSuggestion(None, 0.0).cost_adjusted_score == 0.0
