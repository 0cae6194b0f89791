"""Evaluation: sampling, gold keys, key and policy evaluation, benchmarks."""

import itertools
import random

import numpy as np
import pandas as pd
import pytest
from conftest import random_frame

import rowvoi.eval as ev
from rowvoi import (
    CandidateMIPolicy,
    RandomPolicy,
    SolverUnavailableError,
    benchmark_policy,
    compute_gold_key,
    evaluate_keys,
    evaluate_policies,
    find_key,
    sample_candidate_sets,
)
from rowvoi.setcover import CoverSolution


def brute_min_cost_key(df, rows, costs):
    cols = list(df.columns)
    best = None
    for r in range(1, len(cols) + 1):
        for combo in itertools.combinations(cols, r):
            if not df.loc[rows, list(combo)].duplicated().any():
                c = sum(costs.get(x, 1.0) for x in combo)
                if best is None or c < best - 1e-12:
                    best = c
    return best


def snapshot_global_rngs():
    return random.getstate(), np.random.get_state()[1].copy()


def test_sampling_is_seeded_and_labelled():
    df = pd.DataFrame({"x": range(10)}, index=[f"r{i}" for i in range(10)])
    before = snapshot_global_rngs()
    a = sample_candidate_sets(df, subset_size=4, n_samples=5, random_state=3)
    b = sample_candidate_sets(df, subset_size=4, n_samples=5, random_state=3)
    after = snapshot_global_rngs()
    assert a == b and len(a) == 5
    assert all(len(s) == 4 and len(set(s)) == 4 and set(s) <= set(df.index) for s in a)
    assert all(s == sorted(s, key=lambda r: int(r[1:])) for s in a)
    assert before[0] == after[0] and np.array_equal(before[1], after[1])
    with pytest.raises(ValueError, match="cannot exceed"):
        sample_candidate_sets(df, subset_size=11, n_samples=1)
    with pytest.raises(ValueError, match="subset_size"):
        sample_candidate_sets(df, subset_size=0, n_samples=1)


def test_gold_key_is_optimal():
    for seed in range(6):
        df = random_frame(15, 6, seed)
        rng = np.random.default_rng(seed)
        costs = {c: float(rng.integers(1, 6)) for c in df.columns}
        rows = list(df.index)
        key = compute_gold_key(df, rows, costs=costs)
        assert key.optimal
        assert not df.loc[rows, list(key)].duplicated().any()
        assert key.cost == pytest.approx(brute_min_cost_key(df, rows, costs))


def test_gold_key_never_returns_a_greedy_key(monkeypatch):
    df = random_frame(12, 5, 1)

    def fake_find_key(df, rows, *, strategy, **kw):
        if strategy == "ilp":
            raise SolverUnavailableError("no LP solver")
        if strategy == "exact":
            return CoverSolution(["c0"], strategy="exact", optimal=False, timed_out=True)
        return find_key(df, rows, strategy=strategy, **kw)

    monkeypatch.setattr(ev, "find_key", fake_find_key)
    with pytest.raises(SolverUnavailableError, match="allow_approximate"):
        compute_gold_key(df, df.index)
    approx = compute_gold_key(df, df.index, allow_approximate=True)
    assert approx.strategy == "greedy" and not approx.optimal


def test_evaluate_keys_gaps_and_failed_gold():
    df = random_frame(20, 6, 4)
    sets = sample_candidate_sets(df, subset_size=8, n_samples=3, random_state=1)
    costs = {"c0": 2.0}
    res = evaluate_keys(
        df,
        sets,
        {"greedy": lambda d, r: find_key(d, r, costs=costs)},
        costs=costs,
        gold_solver=lambda d, r: compute_gold_key(d, r, costs=costs),
    )
    assert len(res) == 3
    for r in res:
        assert r.pair_coverage == 1.0 and r.optimality_gap >= -1e-12
        assert r.key_cost == pytest.approx(sum(costs.get(c, 1.0) for c in r.key))
        assert r.runtime_sec >= 0

    def failing_gold(d, r):
        raise SolverUnavailableError("no solver")

    res = evaluate_keys(df, sets[:1], {"one": lambda d, r: ["c0"]}, gold_solver=failing_gold)
    assert res[0].gold_key is None and res[0].optimality_gap is None
    assert res[0].pair_coverage < 1.0
    with pytest.raises(KeyError):
        evaluate_keys(df, sets[:1], {"bad": lambda d, r: ["nope"]})


def test_evaluate_policies_is_seeded_and_successful():
    df = random_frame(30, 8, 6)
    sets = sample_candidate_sets(df, subset_size=10, n_samples=4, random_state=2)
    before = snapshot_global_rngs()
    a = evaluate_policies(
        df,
        sets,
        {"mi": CandidateMIPolicy(), "rnd": RandomPolicy(seed=1)},
        n_repeats=2,
        random_state=9,
    )
    b = evaluate_policies(
        df,
        sets,
        {"mi": CandidateMIPolicy(), "rnd": RandomPolicy(seed=1)},
        n_repeats=2,
        random_state=9,
    )
    after = snapshot_global_rngs()
    assert a == b
    assert before[0] == after[0] and np.array_equal(before[1], after[1])
    by = {s.name: s for s in a}
    assert by["mi"].success_rate == 1.0 and by["rnd"].success_rate == 1.0
    assert by["mi"].mean_final_pair_coverage > 0 and by["mi"].mean_final_entropy == 0.0
    assert by["mi"].mean_steps <= by["rnd"].mean_steps + 1e-9


def test_benchmark_policy_reports_minimal_keys():
    df = random_frame(25, 6, 7)
    res = benchmark_policy(df, CandidateMIPolicy(), [3, 6], 3, random_state=0)
    assert sorted(res) == [3, 6]
    for size, results in res.items():
        assert len(results) == 3
        for r in results:
            assert r.subset_size == size and r.unique_identified
            assert r.steps_used == len(r.cols_used)
            assert isinstance(r.optimal_steps, int) and r.optimal_steps >= 1
    again = benchmark_policy(df, CandidateMIPolicy(), [3, 6], 3, random_state=0)
    assert again == res
    no_opt = benchmark_policy(
        df, CandidateMIPolicy(), [3], 1, random_state=0, max_cols_for_exact=2
    )
    assert no_opt[3][0].optimal_steps is None
