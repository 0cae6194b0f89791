"""Deterministic keys: pair universe, partition refinement, semantics, bad input."""

import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import random_frame
from hypothesis import given, settings, strategies as st

import rowvoi
from rowvoi import _setcover
from rowvoi.errors import RangeError
from rowvoi.frame import UnknownLabelError, encode_columns
from rowvoi.keys import MAX_EXPLICIT_PAIRS, KeyProblem, find_key, pairwise_coverage, plan_key_path
from rowvoi.setcover import STRATEGIES, SetCoverProblem


def pair_sets(df, rows, cols):
    """Plain-Python model: which pairs each column separates."""
    sub = df.loc[rows, cols]
    pairs = list(itertools.combinations(range(len(rows)), 2))
    sets = {}
    for c in cols:
        v = sub[c].tolist()
        sets[c] = {
            p for p in pairs if not (v[p[0]] == v[p[1]] or (pd.isna(v[p[0]]) and pd.isna(v[p[1]])))
        }
    return sets, pairs


def brute_key_cost(df, rows, cols, costs):
    sets, pairs = pair_sets(df, rows, cols)
    best = None
    for k in range(len(cols) + 1):
        for combo in itertools.combinations(cols, k):
            cov = set().union(*(sets[c] for c in combo)) if combo else set()
            if len(cov) == len(pairs):
                c = sum(costs.get(x, 1.0) for x in combo)
                best = c if best is None else min(best, c)
    return best


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 9), st.integers(1, 6), st.integers(0, 10_000))
def test_exact_ilp_brute_force_agree(n_rows, n_cols, seed):
    df = random_frame(n_rows, n_cols, seed, unique=False)
    rng = np.random.default_rng(seed)
    costs = {c: float(rng.integers(1, 4)) for c in df.columns}
    problem = KeyProblem(df, list(df.index), costs=costs)
    if problem.duplicate_groups():
        with pytest.raises(ValueError, match="no key exists"):
            problem.minimal_key("exact")
        return
    best = brute_key_cost(df, list(df.index), list(df.columns), costs)
    exact = problem.minimal_key("exact")
    ilp = problem.minimal_key("ilp")
    greedy = problem.minimal_key("greedy")
    assert math.isclose(exact.cost, best) and exact.optimal
    assert math.isclose(ilp.cost, best) and ilp.optimal
    assert exact.cost <= greedy.cost + 1e-9
    for strategy in STRATEGIES:
        key = problem.minimal_key(strategy)
        assert problem.is_key(key), strategy


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 40), st.integers(1, 8), st.integers(0, 10_000), st.booleans())
def test_partition_refinement_matches_pair_bitsets(n_rows, n_cols, seed, with_costs):
    df = random_frame(n_rows, n_cols, seed, unique=False)
    rng = np.random.default_rng(seed)
    costs = {c: float(rng.integers(1, 5)) for c in df.columns} if with_costs else None
    problem = KeyProblem(df, list(df.index), costs=costs)
    # path through partition refinement (the keys path) ...
    path = problem.plan_path()
    # ... against the generic set cover greedy on explicit pair bitsets
    sets, pairs = pair_sets(df, list(df.index), list(df.columns))
    generic = SetCoverProblem(sets, universe=pairs, costs=costs).plan_path()
    assert path.columns() == generic.names()
    assert [s.newly_covered_pairs for s in path.steps] == [s.newly_covered for s in generic.steps]
    # and the engine's own pair universe agrees with the model
    codes = encode_columns(df)
    engine = _setcover.CoverProblem.from_codes(codes, problem._costs)
    order, _newly, _ = engine.plan_path("coverage")
    assert [problem.columns[i] for i in order] == path.columns()


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 9), st.integers(1, 6), st.integers(0, 10_000), st.sampled_from([0.0, 0.2]))
def test_free_columns_every_strategy(n_rows, n_cols, seed, eps):
    df = random_frame(n_rows, n_cols, seed, unique=False)
    rng = np.random.default_rng(seed)
    costs = {c: float(rng.integers(0, 4)) for c in df.columns}  # about 1 in 4 free
    rows = list(df.index)
    problem = KeyProblem(df, rows, costs=costs)
    if problem.duplicate_groups():
        with pytest.raises(ValueError, match="no key exists"):
            problem.minimal_key("exact")
        return
    free = {c for c, v in costs.items() if v == 0}
    best = brute_key_cost(df, rows, list(df.columns), costs) if eps == 0 else None
    n = problem.n_pairs
    for strategy in STRATEGIES:
        key = problem.minimal_key(strategy, epsilon_pairs=eps)
        assert problem.is_key(key, epsilon_pairs=eps), strategy
        assert math.isclose(key.cost, sum(costs[c] for c in key), abs_tol=1e-12)
        left = problem.unresolved_pairs(key)
        if strategy == "greedy":  # free columns that separate come first
            firsts = [c in free for c in key]
            assert firsts == sorted(firsts, reverse=True), (key, costs)
            for i in range(len(key)):
                assert problem.unresolved_pairs(key[: i + 1]) < problem.unresolved_pairs(key[:i])
        else:  # no column adds nothing; no free column kept without need
            for c in key:
                rest = [k for k in key if k != c]
                assert problem.unresolved_pairs(rest) > left, (strategy, c)
                if c in free:
                    assert not problem.is_key(rest, epsilon_pairs=eps), (strategy, c)
        if best is not None:
            assert key.cost >= best - 1e-9, strategy
            if strategy in ("exact", "ilp") or key.optimal:
                assert math.isclose(key.cost, best, abs_tol=1e-9), strategy
        assert key.lower_bound <= key.cost + 1e-9 and key.covered == n - left


@settings(max_examples=30, deadline=None)
@given(st.integers(3, 30), st.integers(2, 7), st.integers(0, 10_000))
def test_free_columns_lead_every_path(n_rows, n_cols, seed):
    df = random_frame(n_rows, n_cols, seed, unique=False)
    rng = np.random.default_rng(seed)
    costs = {c: float(rng.integers(0, 3)) for c in df.columns}
    free = {c for c, v in costs.items() if v == 0}
    rows = list(df.index)
    for kwargs in ({}, {"objective": "entropy"}, {"weighting": "pair_idf"}):
        path = plan_key_path(df, rows, costs=costs, **kwargs)
        cols = path.columns()
        firsts = [c in free for c in cols]
        assert firsts == sorted(firsts, reverse=True), (kwargs, cols, costs)
        # free steps cost nothing; each step separates something new
        n_free = sum(firsts)
        assert all(s.cumulative_cost == 0.0 for s in path.steps[:n_free])
        assert all(s.newly_covered_pairs > 0 for s in path.steps)
    # the partition path and the pair-universe path agree with free columns too
    sets, pairs = pair_sets(df, rows, list(df.columns))
    generic = SetCoverProblem(sets, universe=pairs, costs=costs).plan_path()
    assert plan_key_path(df, rows, costs=costs).columns() == generic.names()


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 30), st.integers(1, 6), st.integers(0, 10_000))
def test_entropy_path_reduces_conditional_entropy(n_rows, n_cols, seed):
    df = random_frame(n_rows, n_cols, seed, unique=False)
    problem = KeyProblem(df, list(df.index))
    path = problem.plan_path(objective="entropy")

    def cond_entropy(cols):
        if not cols:
            return math.log2(n_rows)
        sizes = df.groupby(list(cols)).size().to_numpy()
        return float(np.sum(sizes / n_rows * np.log2(sizes)))

    chosen = []
    for step in path.steps:
        before = cond_entropy(chosen)
        # the chosen column has the largest drop (unit costs)
        drops = {c: before - cond_entropy(chosen + [c]) for c in df.columns if c not in chosen}
        assert step.newly_covered_weight == pytest.approx(drops[step.col], abs=1e-9)
        assert drops[step.col] >= max(drops.values()) - 1e-9
        chosen.append(step.col)


def test_greedy_scales_to_many_rows_without_pair_universe():
    df = random_frame(200_000, 12, 1, max_card=20, unique=False)
    key = find_key(df, None, epsilon_pairs=0.001)
    assert KeyProblem(df, None).is_key(key, epsilon_pairs=0.001)
    path = plan_key_path(df, None)
    assert path.steps[-1].cumulative_covered_pairs <= path.steps[-1].total_pairs
    with pytest.raises(RangeError, match="MAX_EXPLICIT_PAIRS"):
        find_key(df, None, strategy="exact")
    with pytest.raises(ValueError, match="50000000"):
        plan_key_path(df, None, weighting="pair_idf")
    assert MAX_EXPLICIT_PAIRS < 200_000 * 199_999 // 2


def test_rows_are_labels_everywhere():
    df = pd.DataFrame({"a": [1, 1, 2, 2], "b": [5, 6, 5, 6]}, index=[10, 20, 30, 40])
    assert find_key(df, [10, 30]) == ["a"]
    assert find_key(df, [10, 20]) == ["b"]
    assert pairwise_coverage(df, [10, 20, 30], ["a"]) == pytest.approx(2 / 3)
    with pytest.raises(UnknownLabelError, match=r"rows not in df\.index: 0"):
        find_key(df, [0, 1])
    with pytest.raises(KeyError):
        find_key(df, [10, 99])
    with pytest.raises(ValueError, match="more than once"):
        find_key(df, [10, 10])


def test_missing_values_are_one_value():
    df = pd.DataFrame(
        {
            "a": [np.nan, None, pd.NA, "x"],
            "t": [pd.NaT, pd.NaT, pd.Timestamp("2024-01-01"), pd.NaT],
            "k": [1, 2, 3, 4],
        },
        dtype=object,
    )
    codes = encode_columns(df)
    assert codes[0].tolist() == [1, 1, 1, 0]
    assert codes[1].tolist() == [1, 1, 0, 1]
    p = KeyProblem(df, df.index, columns=["a", "t"])
    assert p.unresolved_pairs(["a"]) == 3  # the three missing rows agree
    assert p.unresolved_pairs(["a", "t"]) == 1  # rows 0 and 1
    with pytest.raises(ValueError, match="duplicate rows: 0, 1"):
        p.minimal_key()


def test_unhashable_cells_name_the_column():
    df = pd.DataFrame({"ok": [1, 2], "tags": [["a"], ["b"]]})
    with pytest.raises(TypeError, match=r"'tags'.*unhashable"):
        find_key(df, [0, 1])


@pytest.mark.parametrize("cost", [-2, -1e-300, float("nan"), float("inf")])
def test_bad_costs_name_the_column(cost):
    df = pd.DataFrame({"a": [1, 2], "b": [1, 2]})
    with pytest.raises(ValueError, match="'b'"):
        find_key(df, [0, 1], costs={"b": cost})


def test_costs_for_unknown_columns_and_unknown_columns():
    df = pd.DataFrame({"a": [1, 2], "b": [1, 2]})
    with pytest.raises(ValueError, match="not in df"):
        find_key(df, [0, 1], costs={"zz": 1.0})
    with pytest.raises(UnknownLabelError, match="'zz'"):
        find_key(df, [0, 1], columns=["a", "zz"])
    # a cost for a column of df outside `columns` is ignored
    assert find_key(df, [0, 1], columns=["a"], costs={"b": 9.0}) == ["a"]


def test_duplicate_rows_raise_with_labels_or_pass_with_epsilon():
    df = pd.DataFrame({"a": [1, 1, 2, 3], "b": [1, 1, 2, 3]}, index=list("wxyz"))
    with pytest.raises(ValueError, match="'w', 'x'"):
        find_key(df, list("wxyz"))
    for strategy in STRATEGIES:
        key = find_key(df, list("wxyz"), strategy=strategy, epsilon_pairs=1 / 6)
        assert KeyProblem(df, list("wxyz")).is_key(key, epsilon_pairs=1 / 6)
    path = plan_key_path(df, list("wxyz"))
    assert path.steps[-1].coverage == pytest.approx(5 / 6)
    assert path.prefix_for_epsilon_pairs(0.0) == path.columns()


def test_small_and_degenerate_row_sets():
    df = pd.DataFrame({"a": [1, 2, 3]})
    assert find_key(df, [1]) == []
    assert find_key(df, []) == []
    assert plan_key_path(df, [0]).steps == []
    assert pairwise_coverage(df, [0], ["a"]) == 1.0
    assert find_key(df, [0, 1], strategy="exact").optimal


def test_same_seed_same_key_and_time_limit_flag():
    df = random_frame(40, 30, 5, max_card=4)
    a = find_key(df, df.index, strategy="hybrid", seed=3)
    assert list(a) == list(find_key(df, df.index, strategy="hybrid", seed=3))
    assert list(a) == [c for c in df.columns if c in a]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        key = find_key(df, df.index, strategy="exact", time_limit=1e-6)
    assert KeyProblem(df, df.index).is_key(key)


def test_exact_proves_optimality_on_30x15():
    df = random_frame(30, 15, 7)
    key = find_key(df, df.index, strategy="exact")
    assert key.optimal and not key.timed_out
    assert key.cost == find_key(df, df.index, strategy="ilp").cost


def test_bad_arguments():
    df = pd.DataFrame({"a": [1, 2]})
    with pytest.raises(TypeError, match="DataFrame"):
        find_key({"a": [1, 2]}, [0, 1])
    with pytest.raises(TypeError, match="sequence"):
        find_key(df, "01")
    with pytest.raises(ValueError, match="Unknown strategy"):
        find_key(df, [0, 1], strategy="fast")
    with pytest.raises(ValueError, match="epsilon_pairs"):
        find_key(df, [0, 1], epsilon_pairs=2)
    with pytest.raises(ValueError, match="objective"):
        plan_key_path(df, [0, 1], objective="coverage")
    with pytest.raises(ValueError, match="entropy"):
        plan_key_path(df, [0, 1], objective="entropy", weighting="pair_idf")
    dup = pd.DataFrame({"a": [1, 2]}, index=[0, 0])
    with pytest.raises(ValueError, match="duplicate labels"):
        find_key(dup, [0])


def test_top_level_exports():
    for name in [
        "CandidateState",
        "FeatureSuggestion",
        "SetCoverProblem",
        "CoverPath",
        "CoverStep",
        "solve_set_cover",
        "coverage_of",
        "SolverUnavailableError",
        "KeyProblem",
        "KeyPath",
        "KeyPathStep",
        "find_key",
        "plan_key_path",
        "pairwise_coverage",
    ]:
        assert hasattr(rowvoi, name), name
    assert rowvoi.SolverUnavailableError.__mro__[1] is RuntimeError
