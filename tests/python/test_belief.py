"""The belief kernels (rowvoi._belief) against a plain numpy implementation of
the definitions, and CandidateState's filter/reweight on top of them."""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from rowvoi import CandidateState, _belief
from rowvoi.errors import InfeasibleError, InvalidArgumentError

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ------------------------------------------------------------ reference
def np_entropy(w):
    w = np.asarray(w, dtype=float)
    q = w / w.sum()
    q = q[q > 0]
    return float(-(q * np.log2(q)).sum()) if q.size else 0.0


def np_mi(col, post, noise):
    """I(R;Y|E) = H(R|E) - E_y[H(R|E, Y=y)], branch by branch (the definition)."""
    p = np.asarray(post, dtype=float) / np.sum(post)
    vals = np.unique(col)
    k = len(vals)
    h_r = np_entropy(p)
    if k < 2:
        return 0.0
    expected = 0.0
    for v in vals:
        lik = np.where(col == v, 1.0 - noise, noise / (k - 1))
        joint = p * lik
        py = joint.sum()
        if py > 0:
            expected += py * np_entropy(joint)
    return h_r - expected


def np_column_entropy(col, post):
    p = np.asarray(post, dtype=float) / np.sum(post)
    return np_entropy([p[col == v].sum() for v in np.unique(col)])


@st.composite
def frames(draw, max_rows=40, max_cols=6):
    n = draw(st.integers(1, max_rows))
    m = draw(st.integers(1, max_cols))
    cards = draw(st.lists(st.integers(1, 6), min_size=m, max_size=m))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    sparse = draw(st.booleans())
    codes = np.stack([rng.integers(0, c, n) for c in cards]).astype(np.int64)
    if sparse:  # wide code range: the kernel's hash path
        codes = codes * 123456789 - 700000000
    codes = codes.astype(np.int32)
    post = rng.random(n)
    if draw(st.booleans()):
        post[rng.random(n) < 0.3] = 0.0
    if post.sum() == 0:
        post[0] = 1.0
    noise = draw(st.sampled_from([0.0, 1e-9, 0.01, 0.2, 0.5, 0.9, 0.999]))
    return codes, post / post.sum(), noise


# ----------------------------------------------------------------- tests
@SETTINGS
@given(frames())
def test_mi_matches_definition(data):
    codes, post, noise = data
    res = _belief.mutual_information(codes, None, post, noise)
    h_r = np_entropy(post)
    assert res["h_rows"] == pytest.approx(h_r, abs=1e-12)
    for j in range(len(codes)):
        want = np_mi(codes[j], post, noise)
        assert res["mi"][j] == pytest.approx(want, abs=1e-12)
        assert res["h_col"][j] == pytest.approx(np_column_entropy(codes[j], post), abs=1e-12)
        assert res["n_values"][j] == len(np.unique(codes[j]))
        n = len(post)
        same = sum(c * (c - 1) // 2 for c in np.unique(codes[j], return_counts=True)[1])
        assert res["pairs"][j] == n * (n - 1) // 2 - same


@SETTINGS
@given(frames())
def test_mi_bounds(data):
    codes, post, noise = data
    res = _belief.mutual_information(codes, None, post, noise)
    assert np.all(res["mi"] >= 0.0)
    assert np.all(res["mi"] <= res["h_rows"])  # MI <= H(R|E)
    assert np.all(res["mi"] <= res["h_col"])  # MI <= H(X_col)


@SETTINGS
@given(st.integers(1, 30), st.floats(0.0, 0.999), st.integers(-5, 5), st.integers(0, 99))
def test_constant_column_carries_nothing_at_any_noise(n, noise, value, seed):
    rng = np.random.default_rng(seed)
    codes = np.full((1, n), value, dtype=np.int32)
    post = rng.random(n) + 0.01
    assert _belief.mutual_information(codes, None, post, noise)["mi"][0] == 0.0
    assert _belief.mutual_information(codes, None, post, noise)["best"] == -1
    # every candidate gets the same likelihood (1 - noise), so the posterior cannot move
    lik = _belief.likelihood(codes[0], value, noise)
    assert lik.tolist() == pytest.approx([1.0 - noise] * n, abs=1e-15)
    assert _belief.reweight(post, lik) == pytest.approx(post / post.sum(), abs=1e-12)


@SETTINGS
@given(frames(max_rows=25, max_cols=3))
def test_rows_indirection_equals_gathered_codes(data):
    codes, post, noise = data
    n = codes.shape[1]
    rng = np.random.default_rng(n)
    perm = rng.permutation(n)
    full = np.ascontiguousarray(codes[:, np.argsort(perm)])  # full[:, perm] == codes
    a = _belief.mutual_information(codes, None, post, noise)
    b = _belief.mutual_information(full, perm.astype(np.uint64), post, noise)
    assert np.array_equal(a["mi"], b["mi"]) or np.allclose(a["mi"], b["mi"], atol=1e-13)


def test_threads_give_identical_results():
    rng = np.random.default_rng(3)
    codes = np.stack([rng.integers(0, k, 20000) for k in (2, 3, 7, 11, 40, 900)] * 4)
    codes = codes.astype(np.int32)
    post = rng.random(20000)
    one = _belief.mutual_information(codes, None, post, 0.1, n_threads=1)
    for t in (2, 3, 5):
        other = _belief.mutual_information(codes, None, post, 0.1, n_threads=t)
        assert other["mi"].tobytes() == one["mi"].tobytes()
        assert other["h_col"].tobytes() == one["h_col"].tobytes()
        assert other["best"] == one["best"]


def test_best_uses_costs_and_breaks_ties_low():
    codes = np.array([[0, 1, 2, 3], [0, 0, 1, 1], [0, 0, 1, 1]], dtype=np.int32)
    post = np.full(4, 0.25)
    assert _belief.mutual_information(codes, None, post)["best"] == 0
    assert _belief.mutual_information(codes, None, post, costs=[3.0, 1.0, 1.0])["best"] == 1
    assert _belief.mutual_information(codes, None, post, costs=[2.0, 1.0, 1.0])["best"] == 0
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(InvalidArgumentError, match=r"costs\[1\] .* finite and >= 0"):
            _belief.mutual_information(codes, None, post, costs=[1.0, bad, 1.0])
    # a free column: informative ones win outright, the most informative first
    assert _belief.mutual_information(codes, None, post, costs=[1.0, 0.0, 1.0])["best"] == 1
    assert _belief.mutual_information(codes, None, post, costs=[0.0, 0.0, 1.0])["best"] == 0
    const = np.array([[5, 5, 5, 5], [0, 0, 1, 1]], dtype=np.int32)  # column 0 tells nothing
    assert _belief.mutual_information(const, None, post, costs=[0.0, 4.0])["best"] == 1


@SETTINGS
@given(st.lists(st.floats(0, 1e6), min_size=1, max_size=30))
def test_entropy_matches_numpy(w):
    if sum(w) == 0:
        with pytest.raises(ValueError, match="sum to 0"):
            _belief.entropy(w)
    else:
        assert _belief.entropy(w) == pytest.approx(np_entropy(w), abs=1e-12)


@SETTINGS
@given(frames(max_rows=30, max_cols=1), st.integers(0, 6))
def test_likelihood_and_reweight_match_numpy(data, pick):
    codes, post, noise = data
    col = codes[0]
    value = int(col[pick % len(col)])
    lik = _belief.likelihood(col, value, noise)
    k = len(np.unique(col))
    want = (
        np.where(col == value, 1.0 - noise, noise / (k - 1))
        if k > 1
        else np.full(len(col), 1.0 - noise)
    )
    if noise == 0:
        want = (col == value).astype(float)
    assert lik == pytest.approx(want, abs=1e-15)
    mass = float((post * lik).sum())
    if mass > 0:
        out = _belief.reweight(post, lik)
        assert out == pytest.approx(post * lik / mass, abs=1e-12)
    else:
        with pytest.raises(InfeasibleError, match="zero probability"):
            _belief.reweight(post, lik)
    # an answer no candidate has: impossible when exact, uninformative when noisy
    absent = _belief.likelihood(col, int(col.max()) + 1, noise)
    if noise == 0:
        assert not absent.any()
    else:
        assert absent == pytest.approx(np.full(len(col), noise / k), abs=1e-15)


def test_reweight_errors_name_the_argument():
    with pytest.raises(InvalidArgumentError, match=r"likelihoods\[1\] is NaN"):
        _belief.reweight([0.5, 0.5], [1.0, math.nan])
    with pytest.raises(InvalidArgumentError, match=r"likelihoods\[0\].*non-negative"):
        _belief.reweight([0.5, 0.5], [-1.0, 1.0])
    with pytest.raises(InvalidArgumentError, match="noise"):
        _belief.likelihood([1, 2], 1, 1.0)
    with pytest.raises(InvalidArgumentError, match="noise"):
        _belief.mutual_information(np.zeros((1, 2), np.int32), None, [0.5, 0.5], -0.1)


# ------------------------------------------------------- CandidateState
@SETTINGS
@given(frames(max_rows=25, max_cols=2), st.integers(0, 100))
def test_filter_then_reweight_commute(data, seed):
    codes, post, _ = data
    df = pd.DataFrame(
        {"c": codes[0], "d": codes[-1]}, index=[f"r{i}" for i in range(codes.shape[1])]
    )
    state = CandidateState(list(df.index), post)
    rng = np.random.default_rng(seed)
    lik = rng.random(len(post)) + 0.05
    value = int(codes[0][seed % len(post)])
    a = state.filter_candidates(df, "c", value)
    if not a.candidate_rows:  # the matching rows hold no mass
        assert post[codes[0] == value].sum() == 0
        return
    kept = [list(df.index).index(r) for r in a.candidate_rows]
    a = a.reweight(lik[kept])
    b = state.reweight(lik).filter_candidates(df, "c", value)
    assert a.candidate_rows == b.candidate_rows
    assert a.posterior == pytest.approx(b.posterior, abs=1e-12)


def test_filter_matches_pandas_equality_across_dtypes():
    df = pd.DataFrame(
        {
            "i": [1, 2, 1, 3],
            "f": [1.5, np.nan, 1.5, 2.0],
            "b": [True, False, True, True],
            "cat": pd.Categorical(["x", None, "x", "y"]),
            "o": ["a", None, "a", 1],
            "big": [2**40, 5, 2**40, 7],
        },
        index=["p", "q", "r", "s"],
    )
    s = CandidateState.uniform(df.index)
    assert s.filter_candidates(df, "i", 1).candidate_rows == ["p", "r"]
    assert s.filter_candidates(df, "i", 1.0).candidate_rows == ["p", "r"]
    assert s.filter_candidates(df, "i", np.int8(3)).candidate_rows == ["s"]
    assert s.filter_candidates(df, "i", "1").candidate_rows == []
    assert s.filter_candidates(df, "i", 1.5).candidate_rows == []
    assert s.filter_candidates(df, "f", float("nan")).candidate_rows == ["q"]
    assert s.filter_candidates(df, "f", 2).candidate_rows == ["s"]
    assert s.filter_candidates(df, "b", False).candidate_rows == ["q"]
    assert s.filter_candidates(df, "cat", None).candidate_rows == ["q"]
    assert s.filter_candidates(df, "cat", "y").candidate_rows == ["s"]
    assert s.filter_candidates(df, "cat", "zz").candidate_rows == []
    assert s.filter_candidates(df, "o", 1).candidate_rows == ["s"]
    assert s.filter_candidates(df, "o", pd.NA).candidate_rows == ["q"]
    assert s.filter_candidates(df, "big", 2**40).candidate_rows == ["p", "r"]
    # successive filters keep labels and renormalise
    t = s.filter_candidates(df, "i", 1).filter_candidates(df, "o", "a")
    assert t.candidate_rows == ["p", "r"] and t.posterior.tolist() == [0.5, 0.5]


def test_filter_on_a_subset_of_rows_and_unknown_labels():
    df = pd.DataFrame({"c": list("xyxyx")}, index=[10, 20, 30, 40, 50])
    s = CandidateState([50, 20, 10], [0.5, 0.25, 0.25])
    f = s.filter_candidates(df, "c", "x")
    assert f.candidate_rows == [50, 10] and f.posterior.tolist() == [2 / 3, 1 / 3]
    with pytest.raises(KeyError, match="99"):
        CandidateState.uniform([10, 99]).filter_candidates(df, "c", "x")
    with pytest.raises(ValueError, match="more than once"):
        CandidateState.uniform([10, 10]).filter_candidates(df, "c", "x")
