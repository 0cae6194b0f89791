"""Probabilistic keys, paths and coverage estimates."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from conftest import random_frame

from rowvoi import (
    RowVoiModel,
    estimate_coverage_probability,
    find_key_probabilistic,
    pairwise_coverage,
    plan_key_path_probabilistic,
    prob_keys,
)


def test_find_key_probabilistic_reaches_the_target():
    for seed in range(8):
        df = random_frame(40, 8, seed)
        model = RowVoiModel().fit(df)
        key = find_key_probabilistic(df, df.index, model, epsilon_posterior=0.0)
        assert pairwise_coverage(df, list(df.index), key) == 1.0  # exact: a real key
        loose = find_key_probabilistic(df, df.index, model, epsilon_posterior=0.3)
        groups = df.groupby(loose).ngroups if loose else 1
        assert groups / len(df) >= 0.7  # P(MAP is the true row) >= 1 - eps
        assert len(loose) <= len(key)
        assert (
            find_key_probabilistic(
                df, df.index, model, max_steps=1, epsilon_posterior=0.0
            ).__len__()
            == 1
        )


def test_find_key_probabilistic_respects_costs_and_objective():
    df = pd.DataFrame({"a": [0, 0, 1, 1], "b": [0, 1, 0, 1], "id": [1, 2, 3, 4]})
    model = RowVoiModel().fit(df)
    assert find_key_probabilistic(df, df.index, model) == ["id"]
    assert find_key_probabilistic(df, df.index, model, costs={"id": 3.0}) == ["a", "b"]
    assert find_key_probabilistic(df, df.index, model, costs={"id": 3.0}, objective="mi") == ["id"]
    assert find_key_probabilistic(df, [0, 1], model, columns=["a", "b"]) == ["b"]
    with pytest.raises(ValueError, match="objective"):
        find_key_probabilistic(df, df.index, model, objective="expected_entropy_reduction")
    with pytest.raises(ValueError, match="epsilon_posterior"):
        find_key_probabilistic(df, df.index, model, epsilon_posterior=1.5)
    assert find_key_probabilistic(df, [], model) == []


def test_path_objectives_are_all_computed():
    for seed in range(6):
        for noise in (0.0, 0.1, 0.4):
            df = random_frame(25, 6, seed, unique=False)
            model = RowVoiModel(noise=noise).fit(df)
            rng = np.random.default_rng(seed)
            costs = {c: float(rng.integers(1, 5)) for c in df.columns}
            mi = plan_key_path_probabilistic(df, df.index, model, objective="mi", costs=costs)
            eer = plan_key_path_probabilistic(
                df, df.index, model, objective="expected_entropy_reduction", costs=costs
            )
            moc = plan_key_path_probabilistic(df, df.index, model, costs=costs)
            # the entropy-reduction route equals the MI route in exact arithmetic
            assert eer.columns() == mi.columns()
            assert [s.newly_covered_weight for s in eer.steps] == pytest.approx(
                [s.newly_covered_weight for s in mi.steps], abs=1e-9
            )
            # MI per cost: each step's ratio is the best available at that step
            first = moc.steps[0]
            ratios = {}
            for c in df.columns:
                p = plan_key_path_probabilistic(df, df.index, model, objective="mi", columns=[c])
                ratios[c] = (p.steps[0].newly_covered_weight if p.steps else 0.0) / costs[c]
            assert first.newly_covered_weight / costs[first.col] == pytest.approx(
                max(ratios.values())
            )
            for path in (mi, moc):
                cols = path.columns()
                for k, step in enumerate(path.steps):
                    assert step.cumulative_covered_pairs == round(
                        pairwise_coverage(df, list(df.index), cols[: k + 1]) * step.total_pairs
                    )
                    assert step.cumulative_cost == pytest.approx(
                        sum(costs[c] for c in cols[: k + 1])
                    )


def test_path_gains_sum_to_the_entropy_without_noise():
    df = random_frame(32, 7, 3)
    model = RowVoiModel().fit(df)
    path = plan_key_path_probabilistic(df, df.index, model, objective="mi")
    assert path.steps[-1].cumulative_covered_weight == pytest.approx(math.log2(32))
    assert path.steps[-1].coverage == 1.0


def exact_identification(codes_list, noise):
    n = len(codes_list[0])
    ks = [len(set(c)) for c in codes_list]
    total = 0.0
    for t in range(n):
        for ys in itertools.product(*[sorted(set(c)) for c in codes_list]):
            p, ll = 1.0, np.zeros(n)
            for col, y, k in zip(codes_list, ys, ks):
                if k < 2:
                    continue
                p *= (1 - noise) if col[t] == y else noise / (k - 1)
                ll += np.where(np.array(col) == y, math.log(1 - noise), math.log(noise / (k - 1)))
            if all(ll[t] > ll[r] + 1e-12 for r in range(n) if r != t):
                total += p / n
    return total


def test_coverage_probability(monkeypatch):
    df = pd.DataFrame({"b": [0, 1, 2, 2, 3], "c": [5, 5, 5, 6, 6], "k": [1, 1, 1, 1, 1]})
    assert estimate_coverage_probability(df, df.index, ["b"]) == 0.0
    assert estimate_coverage_probability(df, df.index, ["b", "c"]) == 1.0
    exact = RowVoiModel().fit(df)
    assert estimate_coverage_probability(df, df.index, ["b"], exact) == 0.6
    assert estimate_coverage_probability(df, df.index, ["c"], exact) == 0.0
    assert estimate_coverage_probability(df, [0], ["c"], exact) == 1.0
    for noise in (0.05, 0.3):
        model = RowVoiModel(noise=noise).fit(df)
        got = estimate_coverage_probability(df, df.index, ["b", "c", "k"], model)
        want = exact_identification([df.b.tolist(), df.c.tolist(), df.k.tolist()], noise)
        assert got == pytest.approx(want, abs=1e-12)
        monkeypatch.setattr(prob_keys, "EXACT_COVERAGE_WORK", 0)  # force Monte Carlo
        mc1 = estimate_coverage_probability(df, df.index, ["b", "c"], model)
        mc2 = estimate_coverage_probability(df, df.index, ["b", "c"], model)
        monkeypatch.undo()
        assert mc1 == mc2 and mc1 == pytest.approx(want, abs=0.05)
    assert estimate_coverage_probability(df, [], ["b"]) == 1.0
    assert estimate_coverage_probability(df, [], ["b"], model) == 1.0
    with pytest.raises(KeyError):
        estimate_coverage_probability(df, df.index, ["zz"], exact)
