"""Set cover engine: strategies, bounds, determinism, paths, bad input."""

import itertools
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from rowvoi.errors import NotProvenOptimalWarning, SolverUnavailableError
from rowvoi.setcover import (
    STRATEGIES,
    CoverSolution,
    SetCoverProblem,
    coverage_of,
    solve_set_cover,
)


@st.composite
def instances(draw, max_sets=8, max_elements=10):
    n_el = draw(st.integers(1, max_elements))
    n_sets = draw(st.integers(1, max_sets))
    sets = {f"s{i}": draw(st.sets(st.integers(0, n_el - 1), max_size=n_el)) for i in range(n_sets)}
    costs = {name: draw(st.sampled_from([0.5, 1.0, 1.5, 2.0, 3.0])) for name in sets}
    return sets, costs


def brute_force(sets, costs, universe, required):
    names = list(sets)
    best = None
    for k in range(len(names) + 1):
        for combo in itertools.combinations(names, k):
            cov = set().union(*(sets[n] for n in combo)) & set(universe) if combo else set()
            if len(cov) >= required:
                c = sum(costs.get(n, 1.0) for n in combo)
                if best is None or c < best - 1e-12:
                    best = c
    return best


def target(universe, coverable, eps):
    allowed = math.floor(eps * len(universe) + 1e-9)
    return min(len(universe) - allowed, len(coverable))


@settings(max_examples=60, deadline=None)
@given(instances(), st.sampled_from([0.0, 0.2, 0.5]))
def test_every_strategy_returns_a_cover(inst, eps):
    sets, costs = inst
    problem = SetCoverProblem(sets, costs=costs)
    coverable = set().union(*sets.values())
    need = target(problem.universe, coverable, eps)
    for strategy in STRATEGIES:
        sol = problem.solve(strategy, epsilon=eps)
        assert isinstance(sol, CoverSolution)
        assert len(problem.covered(sol)) >= need, strategy
        assert problem.is_cover(sol, epsilon=eps)
        assert math.isclose(sol.cost, problem.total_cost(sol))
        assert len(set(sol)) == len(sol)


@settings(max_examples=60, deadline=None)
@given(instances(), st.sampled_from([0.0, 0.3]))
def test_exact_equals_ilp_equals_brute_force(inst, eps):
    sets, costs = inst
    problem = SetCoverProblem(sets, costs=costs)
    coverable = set().union(*sets.values())
    need = target(problem.universe, coverable, eps)
    best = brute_force(sets, costs, problem.universe, need)
    exact = problem.solve("exact", epsilon=eps)
    ilp = problem.solve("ilp", epsilon=eps)
    assert exact.optimal and ilp.optimal
    assert math.isclose(exact.cost, best, abs_tol=1e-9)
    assert math.isclose(ilp.cost, best, abs_tol=1e-9)


@settings(max_examples=60, deadline=None)
@given(instances(max_sets=10, max_elements=14))
def test_exact_le_greedy_le_ln_bound(inst):
    sets, costs = inst
    problem = SetCoverProblem(sets, costs=costs)
    exact = problem.solve("exact")
    greedy = problem.solve("greedy")
    assert exact.cost <= greedy.cost + 1e-9
    largest = max((len(s) for s in sets.values()), default=1)
    harmonic = sum(1.0 / k for k in range(1, max(largest, 1) + 1))
    assert greedy.cost <= harmonic * exact.cost + 1e-9
    for strategy in ("sa", "ga", "hybrid", "lp"):
        assert exact.cost <= problem.solve(strategy).cost + 1e-9


def test_greedy_ratio_and_tie_break():
    # b and c tie on ratio; b comes first
    p = SetCoverProblem({"a": {1}, "b": {2, 3}, "c": {4, 5}}, costs={"a": 2.0})
    assert p.solve() == ["b", "c", "a"]
    assert p.plan_path().names() == ["b", "c", "a"]


@pytest.mark.parametrize("strategy", ["sa", "ga", "hybrid"])
def test_same_seed_same_answer(strategy):
    rng = np.random.default_rng(3)
    sets = {
        f"s{i}": set(rng.choice(60, size=rng.integers(3, 15), replace=False).tolist())
        for i in range(40)
    }
    costs = {k: float(rng.integers(1, 5)) for k in sets}
    p = SetCoverProblem(sets, costs=costs)
    a = p.solve(strategy, seed=11)
    b = p.solve(strategy, seed=11)
    assert list(a) == list(b)
    order = [p.names.index(n) for n in a]
    assert order == sorted(order), "non-greedy selections come in input order"


def test_uncoverable_elements_count_against_coverage():
    p = SetCoverProblem({"a": {1}, "b": {2}}, universe=[1, 2, 3])
    sol = p.solve("exact")
    assert sorted(sol) == ["a", "b"]
    assert sol.coverage == pytest.approx(2 / 3)
    assert p.coverage(sol) == pytest.approx(2 / 3)
    assert p.uncoverable() == [3]
    assert not p.is_cover(sol)
    assert p.is_cover(sol, epsilon=0.34)
    # elements outside an explicit universe are ignored
    assert SetCoverProblem({"a": {1, 9}}, universe=[1]).covered(["a"]) == {1}


def test_empty_universe_and_no_sets():
    assert solve_set_cover({"a": set()}) == []
    assert SetCoverProblem({}).solve("exact") == []
    assert SetCoverProblem({}).coverage([]) == 1.0
    assert coverage_of({"a": {1}}, []) == 0.0


def test_rag_guide_numbers_through_set_cover():
    sets = {"doc1#p2": {"price"}, "doc2#p1": {"date"}, "faq#p1": {"price", "date"}}
    costs = {"doc1#p2": 180, "doc2#p1": 150, "faq#p1": 1550}
    p = SetCoverProblem(sets, costs=costs)
    for strategy in STRATEGIES:
        sol = p.solve(strategy)
        assert sorted(sol) == ["doc1#p2", "doc2#p1"], strategy
        assert sol.cost == 330.0
    path = p.plan_path()
    assert path.prefix_for_budget(200) == ["doc2#p1"]
    assert path.coverage_curve() == [(150.0, 0.5), (330.0, 1.0)]


def test_idf_weighting_and_entropy_objective():
    sets = {"wide": {1, 2, 3, 4}, "rare": {5}, "mid": {4, 5, 6}}
    p = SetCoverProblem(sets)
    w = p.element_weights("idf")
    assert w[4] == 0.5 and w[5] == 0.5 and w[1] == 1.0
    path = p.plan_path(weighting="idf")
    assert path.names() == ["wide", "mid"]
    assert path.steps[0].newly_covered_weight == pytest.approx(3.5)
    assert path.steps[-1].cumulative_covered_weight == pytest.approx(sum(w.values()))
    ent = p.plan_path(objective="entropy")
    assert ent.names()[0] == "wide"
    assert ent.steps[-1].coverage == 1.0


def test_entropy_objective_prefers_cheap_sets_more():
    # coverage: big (3 elements / cost 2 = 1.5) beats small (1 / 1);
    # entropy with 4 uncovered: big gains log2(5/2)/2 = 0.66, small log2(5/4) = 0.32
    p = SetCoverProblem({"big": {1, 2, 3}, "small": {4}}, costs={"big": 2.0})
    assert p.plan_path().names() == ["big", "small"]
    assert p.plan_path(objective="entropy").names() == ["big", "small"]


def test_exact_time_limit_flags_unproven():
    rng = np.random.default_rng(0)
    sets = {f"s{i}": set(rng.choice(400, size=40, replace=False).tolist()) for i in range(120)}
    costs = {k: float(rng.uniform(1, 3)) for k in sets}
    p = SetCoverProblem(sets, costs=costs, universe=range(400))
    with pytest.warns(NotProvenOptimalWarning):
        sol = p.solve("exact", time_limit=0.01)
    assert sol.timed_out and not sol.optimal
    assert len(p.covered(sol)) == len(set().union(*sets.values()))


def test_ilp_unavailable_raises_and_lp_does_not_need_a_solver(monkeypatch):
    import pulp

    monkeypatch.setattr(pulp.PULP_CBC_CMD, "available", lambda self: False)
    monkeypatch.setattr(pulp.COIN_CMD, "available", lambda self: False)
    if hasattr(pulp, "HiGHS"):
        monkeypatch.setattr(pulp.HiGHS, "available", lambda self: False)
    p = SetCoverProblem({"a": {1}, "b": {2}, "c": {1, 2}}, costs={"c": 3.0})
    with pytest.raises(SolverUnavailableError, match=r'pip install "pulp\[cbc\]"'):
        p.solve("ilp")
    sol = p.solve("lp")
    assert sorted(sol) == ["a", "b"] and sol.cost == 2.0 and sol.optimal
    assert sol.lp_bound == pytest.approx(2.0, rel=0.06) and sol.lp_bound <= 2.0 + 1e-12


@pytest.mark.parametrize("cost", [-1, -1e-300, float("nan"), float("inf"), "3", True])
def test_bad_costs_name_the_set(cost):
    with pytest.raises(ValueError, match="'b'"):
        SetCoverProblem({"a": {1}, "b": {2}}, costs={"b": cost})


def test_bad_inputs():
    with pytest.raises(ValueError, match="not one of the sets"):
        SetCoverProblem({"a": {1}}, costs={"zz": 1.0})
    with pytest.raises(TypeError, match="unhashable"):
        SetCoverProblem({"a": [[1, 2]]})
    with pytest.raises(TypeError, match="mapping"):
        SetCoverProblem([("a", {1})])
    with pytest.raises(TypeError, match="iterable"):
        SetCoverProblem({"a": "xyz"})
    p = SetCoverProblem({"a": {1}})
    with pytest.raises(ValueError, match="Unknown strategy"):
        p.solve("magic")
    for eps in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="epsilon"):
            p.solve(epsilon=eps)
    with pytest.raises(ValueError, match="time_limit"):
        p.solve("exact", time_limit=-1)
    with pytest.raises(ValueError, match="seed"):
        p.solve("sa", seed=-3)
    with pytest.raises(KeyError, match="not one of the sets"):
        p.cost("nope")
    with pytest.raises(ValueError, match="weighting"):
        p.plan_path(weighting="tfidf")
    with pytest.raises(ValueError, match="objective"):
        p.plan_path(objective="gain")
    with pytest.raises(ValueError, match="budget"):
        p.plan_path().prefix_for_budget(float("nan"))


def test_lp_strategy_integral_is_optimal():
    # the LP optimum (2) is integral; the engine's bound is within 1 + 0.05 of
    # it, and with integer costs rounds up to 2, which proves the cover optimal
    p = SetCoverProblem({"a": {1, 2}, "b": {3}, "c": {1, 2, 3}}, costs={"c": 5})
    sol = p.solve("lp")
    assert sorted(sol) == ["a", "b"] and sol.optimal
    assert sol.lower_bound == 2.0 and 2.0 / 1.05 <= sol.lp_bound <= 2.0 + 1e-12
    # non-integer costs: the bound is not rounded, optimality is not claimed
    # unless the bound itself reaches the cost
    q = SetCoverProblem({"a": {1, 2}, "b": {3}, "c": {1, 2, 3}}, costs={"a": 1.1, "c": 5.5})
    sol = q.solve("lp")
    assert sorted(sol) == ["a", "b"] and sol.lower_bound == sol.lp_bound
    assert 2.1 / 1.05 <= sol.lower_bound <= 2.1 + 1e-12
    assert sol.optimal == (sol.lower_bound >= sol.cost * (1 - 1e-9))


def test_warnings_not_emitted_when_proven():
    p = SetCoverProblem({"a": {1}, "b": {2}})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p.solve("exact", time_limit=5)
        p.solve("ilp", time_limit=5)


# --------------------------------------------------------- free sets (cost 0)
@st.composite
def instances_with_free_sets(draw, max_sets=8, max_elements=10):
    sets, costs = draw(instances(max_sets, max_elements))
    free = draw(st.sets(st.sampled_from(sorted(sets)), min_size=1))
    return sets, {n: (0.0 if n in free else c) for n, c in costs.items()}


@settings(max_examples=60, deadline=None)
@given(instances_with_free_sets(), st.sampled_from([0.0, 0.3]))
def test_free_sets_every_strategy(inst, eps):
    sets, costs = inst
    problem = SetCoverProblem(sets, costs=costs)
    coverable = set().union(*sets.values())
    need = target(problem.universe, coverable, eps)
    best = brute_force(sets, costs, problem.universe, need)
    free = {n for n, c in costs.items() if c == 0}
    for strategy in STRATEGIES:
        sol = problem.solve(strategy, epsilon=eps)
        assert problem.is_cover(sol, epsilon=eps), strategy
        assert sol.cost >= best - 1e-9, strategy
        assert math.isclose(sol.cost, problem.total_cost(sol), abs_tol=1e-12)
        covered = len(problem.covered(sol))
        if strategy == "greedy":
            # free sets that add something come first; each pick adds something
            picks = list(sol)
            for i in range(len(picks)):
                assert len(problem.covered(picks[: i + 1])) > len(problem.covered(picks[:i]))
            firsts = [n in free for n in picks]
            assert firsts == sorted(firsts, reverse=True), picks
        else:
            # no set adds nothing, and no free set is kept that is not needed
            for name in sol:
                rest = [n for n in sol if n != name]
                assert len(problem.covered(rest)) < covered, (strategy, name)
                if name in free:
                    assert len(problem.covered(rest)) < need, (strategy, name)
        if strategy in ("exact", "ilp"):
            assert sol.optimal and math.isclose(sol.cost, best, abs_tol=1e-9)
        if sol.optimal:
            assert math.isclose(sol.cost, best, abs_tol=1e-9), strategy
        assert sol.lower_bound <= best + 1e-9, strategy


def test_all_free_costs_nothing():
    sets = {"a": {1, 2}, "b": {2, 3}, "c": {4}, "d": {1}}
    problem = SetCoverProblem(sets, costs=dict.fromkeys(sets, 0))
    for strategy in STRATEGIES:
        sol = problem.solve(strategy)
        assert problem.is_cover(sol) and sol.cost == 0.0, strategy
        assert "d" not in sol, strategy  # adds nothing next to "a"
    path = problem.plan_path()
    assert path.names() == ["a", "b", "c"] and path.coverage_curve()[-1] == (0.0, 1.0)


def test_free_set_first_in_paths_most_covering_first():
    problem = SetCoverProblem(
        {"cheap": {1, 2, 3}, "free_small": {4}, "free_big": {5, 6}, "dup": {4}},
        costs={"cheap": 1.0, "free_small": 0, "free_big": 0.0, "dup": 0},
    )
    assert problem.plan_path().names() == ["free_big", "free_small", "cheap"]
    assert problem.plan_path(objective="entropy").names()[:2] == ["free_big", "free_small"]
    assert problem.solve() == ["free_big", "free_small", "cheap"]
    assert problem.cost("free_small") == 0.0


# ------------------------------------------------------------ LP relaxation
def _pulp_lp(sets, costs, universe, required):
    """The exact LP optimum of the (partial) cover relaxation, by CBC."""
    import pulp

    names = list(sets)
    coverable = [e for e in universe if any(e in sets[n] for n in names)]
    prob = pulp.LpProblem("lp", pulp.LpMinimize)
    x = {n: pulp.LpVariable(f"x{i}", 0, 1) for i, n in enumerate(names)}
    z = {e: pulp.LpVariable(f"z{i}", 0, 1) for i, e in enumerate(coverable)}
    prob += pulp.lpSum(costs.get(n, 1.0) * x[n] for n in names)
    for e in coverable:
        prob += z[e] <= pulp.lpSum(x[n] for n in names if e in sets[n])
    prob += pulp.lpSum(z.values()) >= required
    prob.solve(pulp.PULP_CBC_CMD(msg=False))
    assert pulp.LpStatus[prob.status] == "Optimal"
    return float(pulp.value(prob.objective) or 0.0)


@settings(max_examples=50, deadline=None)
@given(
    instances(max_sets=10, max_elements=14),
    st.sampled_from([0.05, 0.2]),
    st.sampled_from([0.0, 0.0, 0.3]),
)
def test_lp_relaxation_within_eps_of_cbc(inst, eps, frac):
    sets, costs = inst
    problem = SetCoverProblem(sets, costs=costs)
    coverable = set().union(*sets.values())
    required = target(problem.universe, coverable, frac)
    opt = _pulp_lp(sets, costs, problem.universe, required)
    engine = problem._engine
    x, info = engine.lp(required, eps)
    x2, info2 = engine.lp(required, eps)
    assert np.array_equal(x, x2) and info["value"] == info2["value"]  # deterministic
    assert not info["timed_out"]
    # both bounds are valid, whatever happened (to CBC's precision: it writes
    # its solution with 8 significant digits, 1/3 comes back as 0.33333333)
    assert info["lower_bound"] <= opt * (1 + 1e-7) + 1e-9
    assert info["value"] >= opt * (1 - 1e-7) - 1e-9
    cost = float(np.dot(problem._costs, x))
    assert cost == pytest.approx(info["value"], rel=1e-9, abs=1e-12)
    assert np.all(x >= 0) and np.all(x <= 1 + 1e-12)
    names = problem.names
    fractional = sum(
        min(1.0, sum(x[names.index(n)] for n in names if e in sets[n])) for e in coverable
    )
    assert fractional >= required - 1e-6
    if frac == 0.0:  # a full cover: certified within 1 + eps
        assert info["converged"]
        assert info["value"] <= (1 + eps) * opt * (1 + 1e-9) + 1e-9
        assert info["lower_bound"] >= opt / (1 + eps) * (1 - 1e-9) - 1e-9
    elif info["converged"]:
        assert info["value"] <= (1 + eps) * info["lower_bound"] * (1 + 1e-9) + 1e-9


@settings(max_examples=60, deadline=None)
@given(instances(max_sets=10, max_elements=14), st.sampled_from([0.0, 0.3]))
def test_lp_strategy_feasible_bounded_deterministic(inst, eps):
    sets, costs = inst
    problem = SetCoverProblem(sets, costs=costs)
    coverable = set().union(*sets.values())
    need = target(problem.universe, coverable, eps)
    best = brute_force(sets, costs, problem.universe, need)
    sol = problem.solve("lp", epsilon=eps, seed=5)
    assert problem.is_cover(sol, epsilon=eps)
    assert sol.cost >= best - 1e-9
    assert sol.lp_bound is not None and sol.lp_bound <= best + 1e-9
    assert sol.lower_bound <= best + 1e-9
    if sol.optimal:
        assert math.isclose(sol.cost, best, abs_tol=1e-9)
    again = problem.solve("lp", epsilon=eps, seed=5)
    assert list(again) == list(sol) and again.lp_bound == sol.lp_bound
    order = [problem.names.index(n) for n in sol]
    assert order == sorted(order)


def test_lp_needs_no_pulp(monkeypatch):
    import sys

    import rowvoi.setcover

    monkeypatch.setitem(sys.modules, "pulp", None)  # `import pulp` raises ImportError
    monkeypatch.setattr(rowvoi.setcover, "_find_solver", lambda *a, **k: None)
    rng = np.random.default_rng(8)
    sets = {
        f"s{i}": set(rng.choice(40, size=rng.integers(2, 9), replace=False).tolist())
        for i in range(25)
    }
    costs = {k: float(rng.integers(1, 6)) for k in sets}
    p = SetCoverProblem(sets, costs=costs)
    sol = p.solve("lp", seed=3)
    assert p.is_cover(sol) and sol.strategy == "lp"
    assert 0 < sol.lp_bound <= p.solve("exact").cost + 1e-9
    for strategy in ("greedy", "exact", "sa", "ga", "lp", "hybrid"):
        assert p.is_cover(p.solve(strategy, time_limit=5)), strategy
    with pytest.raises(SolverUnavailableError, match=r"rowvoi\[optimization\]"):
        p.solve("ilp")


def test_lp_same_answer_in_another_process():
    import json
    import subprocess
    import sys

    code = (
        "import json, numpy as np\n"
        "from rowvoi.setcover import SetCoverProblem\n"
        "rng = np.random.default_rng(21)\n"
        "sets = {f's{i}': set(rng.choice(50, size=int(rng.integers(2, 10)),"
        " replace=False).tolist()) for i in range(30)}\n"
        "costs = {k: float(rng.uniform(0.5, 4)) for k in sets}\n"
        "s = SetCoverProblem(sets, costs=costs).solve('lp', epsilon=0.1, seed=9)\n"
        "print(json.dumps([list(s), s.cost, s.lp_bound]))\n"
    )
    runs = [
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        for _ in range(2)
    ]
    a, b = (json.loads(r.stdout) for r in runs)
    assert a == b
