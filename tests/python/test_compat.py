"""Drop-in compatibility with the reference rowvoi package (0.2-0.3).

One test (or more) per behaviour of issue 8, numbered as there. Where we keep
a difference from the reference on purpose, README's "Coming from the
reference rowvoi" says so and the test pins our side of it.
"""

import json
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import rowvoi.setcover
from rowvoi import CandidateState, StopRules
from rowvoi.errors import SolverUnavailableError
from rowvoi.keys import KeyProblem, find_key, plan_key_path
from rowvoi.ml import RowVoiModel
from rowvoi.policies import CandidateMIPolicy, GreedyCoveragePolicy, MIPolicy
from rowvoi.prob_keys import (
    estimate_coverage_probability,
    find_key_probabilistic,
    plan_key_path_probabilistic,
)
from rowvoi.rag import (
    Chunk,
    RetrievalSession,
    answer_frame,
    answer_likelihoods,
    next_question,
    observe_answer,
    plan_context_path,
    question_values,
    select_context,
)
from rowvoi.session import DisambiguationSession
from rowvoi.setcover import SetCoverProblem, solve_set_cover

ROOT = Path(__file__).resolve().parents[2]
ANSWERS = {"deploy": ["cloud", "cloud", "self", "self"], "version": ["v4", "v3", "v4", "v3"]}
TABLE = pd.DataFrame(
    {"city": ["Oslo", "Oslo", "Rome", "Rome"], "plan": ["a", "b", "a", "b"], "tier": [1, 1, 1, 2]}
)


# 1 ---------------------------------------------------------------------
def test_01_candidate_state_validates_on_construction():
    with pytest.raises(ValueError, match="Length mismatch"):
        CandidateState(
            candidate_rows=[0, 1, 2],
            posterior=np.array([0.5, 0.5]),
            observed_cols=set(),
            observed_values={},
        )
    with pytest.raises(ValueError, match="Posterior must sum to 1"):
        CandidateState(
            candidate_rows=[0, 1],
            posterior=np.array([0.5, 0.4]),
            observed_cols=set(),
            observed_values={},
        )
    # within the 1e-6 tolerance: accepted (and the drift divided out)
    near = CandidateState(
        candidate_rows=[0, 1],
        posterior=np.array([0.5, 0.5 + 5e-7]),
        observed_cols=set(),
        observed_values={},
    )
    assert near.posterior.sum() == pytest.approx(1.0, abs=1e-15)
    empty = CandidateState(
        candidate_rows=[], posterior=np.array([]), observed_cols=set(), observed_values={}
    )
    assert empty.entropy == 0.0 and not empty.is_unique


# 2 ---------------------------------------------------------------------
def test_02_reweight_errors():
    s = CandidateState.uniform(["a", "b", "c"])
    with pytest.raises(ValueError, match="Expected 3 likelihoods"):
        s.reweight([1.0, 1.0])
    with pytest.raises(ValueError, match="zero likelihood"):
        s.reweight([0.0, 0.0, 0.0])
    # zero mass also when the only positive likelihood sits on a zero-posterior candidate
    skewed = CandidateState(["a", "b"], np.array([1.0, 0.0]))
    with pytest.raises(ValueError, match="zero likelihood"):
        skewed.reweight([0.0, 1.0])


# 3 ---------------------------------------------------------------------
def test_03_noisy_likelihood_follows_the_formula_when_everyone_agrees():
    assert answer_likelihoods({"q": ["a"] * 4}, "q", "a", noise=0.2).tolist() == pytest.approx(
        [0.8] * 4
    )
    # the general case: 1 - p for a match, p spread over the other observed answers
    lik = answer_likelihoods({"q": ["a", "b", "c", "c"]}, "q", "c", noise=0.2)
    assert lik.tolist() == pytest.approx([0.1, 0.1, 0.8, 0.8])


# 4 ---------------------------------------------------------------------
def test_04_unpredicted_answer_is_surprising_not_disqualifying():
    state = CandidateState(list(range(4)), np.array([0.1, 0.2, 0.3, 0.4]))
    after = observe_answer(state, ANSWERS, "deploy", "on-prem", noise=0.1)
    assert after.posterior.tolist() == pytest.approx([0.1, 0.2, 0.3, 0.4], abs=1e-15)
    assert after.candidate_rows == [0, 1, 2, 3] and after.observed_cols == {"deploy"}
    with pytest.raises(ValueError, match="zero likelihood"):
        observe_answer(state, ANSWERS, "deploy", "on-prem", noise=0.0)
    # the retrieval session and the model use the same noise model
    session = RetrievalSession(ANSWERS, prior=[0.1, 0.2, 0.3, 0.4], noise=0.1)
    session.observe("version", "v9")
    assert session.state.posterior.tolist() == pytest.approx([0.1, 0.2, 0.3, 0.4])
    model = RowVoiModel(noise=0.1).fit(TABLE)
    soft = model._observe(TABLE, CandidateState.uniform(TABLE.index), "city", "Paris")
    assert soft.posterior.tolist() == pytest.approx([0.25] * 4)


# 5 ---------------------------------------------------------------------
CHUNKS = [
    Chunk("a", "price", tokens=100),
    Chunk("b", "date", tokens=100),
    Chunk("c", "both", tokens=400),
]


def test_05_select_context_validates_support():
    with pytest.raises(ValueError, match="not in `claims`"):
        select_context(CHUNKS, ["price"], {"price": {"a"}, "refunds": {"c"}})
    with pytest.raises(ValueError, match="not in `claims`"):
        plan_context_path(CHUNKS, ["price"], {"price": {"a"}, "refunds": {"c"}})
    # a hallucinated chunk id is ignored, not fatal
    sel = select_context(CHUNKS, ["price", "date"], {"price": {"a", "zz#9"}, "date": {"b", "c"}})
    assert sorted(sel.chunks) == ["a", "b"] and sel.coverage == 1.0
    with pytest.raises(ValueError, match="unique"):
        select_context([Chunk("a"), Chunk("a")], ["price"], {"price": {"a"}})
    with pytest.raises(ValueError, match="unique"):
        select_context(["a", "b", "a"], ["price"], {"price": {"a"}})


def test_chunk_text_must_be_a_string():
    with pytest.raises(TypeError, match="text must be a str"):
        Chunk("a", 5)
    with pytest.raises(TypeError, match="text must be a str"):
        Chunk("a", None)
    assert Chunk("a", tokens=5).text == ""


# 6 ---------------------------------------------------------------------
def test_06_answer_frame_messages():
    with pytest.raises(ValueError, match="`questions` is required"):
        answer_frame([["a", "x"], ["b", "x"]])
    with pytest.raises(ValueError, match="one per question"):
        answer_frame([["a", "x"], ["b"]], questions=["q1", "q2"])


# 7 ---------------------------------------------------------------------
def test_07_prior_validation_and_missing_runner():
    with pytest.raises(ValueError, match="4 prior weights"):
        question_values(ANSWERS, prior=[1, 2, 3])
    with pytest.raises(ValueError, match="4 prior weights"):
        next_question(ANSWERS, prior=[1, 2, 3, 4, 5])
    with pytest.raises(ValueError, match="4 prior weights"):
        RetrievalSession(ANSWERS, prior=[1, 2])
    for bad in ([0, 0, 0, 0], [1, -1, 1, 1]):
        with pytest.raises(ValueError, match="non-negative"):
            question_values(ANSWERS, prior=bad)
        with pytest.raises(ValueError, match="non-negative"):
            next_question(ANSWERS, prior=bad)
        with pytest.raises(ValueError, match="non-negative"):
            RetrievalSession(ANSWERS, prior=bad)
    with pytest.raises(ValueError, match="needs a ProbeRunner"):
        RetrievalSession(ANSWERS).run(StopRules())


# 8 ---------------------------------------------------------------------
def test_08_stop_reasons_are_the_reference_sentences():
    two = CandidateState.uniform(["x", "y"])
    assert StopRules(max_steps=5).should_stop(two, 5, 0.0) == (True, "Reached max steps (5)")
    assert StopRules(cost_budget=10).should_stop(two, 1, 10.0) == (
        True,
        "Reached cost budget (10.0)",
    )
    assert StopRules().should_stop(CandidateState.uniform(["x"]), 0, 0.0) == (
        True,
        "Found unique row",
    )
    sharp = CandidateState(["x", "y"], np.array([0.95, 0.05]))
    assert StopRules(epsilon_posterior=0.1, target_unique=False).should_stop(sharp, 1, 1.0) == (
        True,
        "Residual uncertainty <= 0.1",
    )
    told = CandidateState.uniform([0, 1, 2, 3], observed_cols={"plan", "city"})
    assert StopRules(epsilon_pairs=0.05, target_unique=False).should_stop(told, 2, 2.0, TABLE) == (
        True,
        "Pair coverage >= 0.95",
    )
    assert StopRules(max_steps=5).should_stop(two, 4, 0.0) == (False, "")


def test_08_kept_difference_sessions_never_overspend_the_budget():
    costs = {"city": 3.0, "plan": 3.0, "tier": 3.0}
    session = DisambiguationSession(
        TABLE, TABLE.index, policy=CandidateMIPolicy(), feature_costs=costs
    )
    session.run(StopRules(cost_budget=5.0), true_row=1)
    assert session.cumulative_cost == 3.0  # a second column would reach 6 > 5
    assert "budget" in session.stop_reason


# 9 ---------------------------------------------------------------------
def test_09_one_candidate_suggests_the_first_unobserved_column():
    one = CandidateState.uniform([2], observed_cols={"city"})
    for s in (
        CandidateMIPolicy().suggest(TABLE, one),
        RowVoiModel().fit(TABLE).suggest_next_feature(TABLE, one),
        MIPolicy(RowVoiModel().fit(TABLE)).suggest(TABLE, one),
    ):
        assert s.col == "plan" and s.expected_voi == 0.0
    done = CandidateState.uniform([2], observed_cols={"city", "plan", "tier"})
    assert CandidateMIPolicy().suggest(TABLE, done).col is None
    # every column observed: the model answers None, as the reference's did
    assert RowVoiModel().fit(TABLE).suggest_next_feature(TABLE, done) is None


# 10 --------------------------------------------------------------------
def test_10_model_fit_costs_and_debug():
    empty = RowVoiModel().fit(pd.DataFrame())
    assert isinstance(empty, RowVoiModel)
    assert empty.suggest_next_feature(pd.DataFrame(), CandidateState.uniform([])) is None
    model = RowVoiModel().fit(TABLE)
    state = CandidateState.uniform(TABLE.index)
    with pytest.raises(ValueError, match="feature_costs must be provided"):
        model.suggest_next_feature(TABLE, state, objective="mi_over_cost")
    for bad in (0, -1.0):  # the reference's rule for mi_over_cost
        with pytest.raises(ValueError, match="feature costs must be positive"):
            model.suggest_next_feature(
                TABLE,
                state,
                objective="mi_over_cost",
                feature_costs={"city": bad, "plan": 1.0, "tier": 1.0},
            )
    with pytest.raises(RuntimeError, match=r"RowVoiModel\.fit\(\) must be called"):
        RowVoiModel().suggest_next_feature(TABLE, state)
    s = model.suggest_next_feature(TABLE, state)
    assert isinstance(s.debug["entropy_before"], float)
    assert isinstance(s.debug["entropy_after"], float)
    assert s.debug["entropy_before"] == pytest.approx(2.0)
    assert s.debug["entropy_after"] == pytest.approx(2.0 - s.expected_voi)


# 11 --------------------------------------------------------------------
def test_11_no_rows():
    model = RowVoiModel().fit(TABLE)
    assert find_key_probabilistic(TABLE, [], model) == []
    path = plan_key_path_probabilistic(TABLE, [], model)
    assert path.steps == [] and path.columns() == []
    assert estimate_coverage_probability(TABLE, [], ["city"], model) == 1.0
    assert estimate_coverage_probability(TABLE, [], ["city"]) == 1.0


# 12 --------------------------------------------------------------------
def test_12_universe_is_a_set_and_unknown_strategies_say_so():
    problem = SetCoverProblem({"a": {1, 2}, "b": {3}}, universe=[1, 2, 3, 4])
    assert isinstance(problem.universe, (set, frozenset))
    assert problem.universe == {1, 2, 3, 4}
    with pytest.raises(ValueError, match=r"^Unknown strategy"):
        problem.solve(strategy="nonsense")
    with pytest.raises(ValueError, match=r"^Unknown strategy"):
        solve_set_cover({"a": {1}}, strategy="nonsense")
    with pytest.raises(ValueError, match=r"^Unknown strategy"):
        KeyProblem(TABLE, TABLE.index).minimal_key(strategy="nonsense")


# 13 --------------------------------------------------------------------
def test_13_find_solver_returns_a_configured_solver():
    import pulp

    solver = rowvoi.setcover._find_solver(pulp, time_limit=7)
    assert solver is not None and solver.available() and solver.timeLimit == 7
    assert rowvoi.setcover._find_solver(pulp).timeLimit is None


def test_13_no_solver_names_the_install_and_only_ilp_needs_one(monkeypatch):
    problem = SetCoverProblem({"a": {1, 2}, "b": {2, 3}})
    monkeypatch.setattr(rowvoi.setcover, "_find_solver", lambda pulp, *, time_limit=None: None)
    for solve in (problem.solve, KeyProblem(TABLE, TABLE.index).minimal_key):
        with pytest.raises(SolverUnavailableError) as err:
            solve("ilp")
        assert 'pip install "pulp[cbc]"' in str(err.value)
        assert "strategy='lp'" in str(err.value)  # what works without a solver
    for strategy in ("greedy", "exact", "sa", "ga", "lp", "hybrid"):
        assert problem.is_cover(problem.solve(strategy, time_limit=1)), strategy
        key = KeyProblem(TABLE, TABLE.index).minimal_key(strategy)
        assert KeyProblem(TABLE, TABLE.index).is_key(key), strategy


def test_13_missing_pulp_names_the_extra_not_import_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "pulp", None)  # `import pulp` now raises ImportError
    problem = SetCoverProblem({"a": {1, 2}, "b": {2, 3}})
    with pytest.raises(SolverUnavailableError, match=r'pip install "rowvoi\[optimization\]"'):
        problem.solve("ilp")
    assert problem.is_cover(problem.solve("lp"))


def test_13_the_optimization_extra_exists_and_brings_cbc():
    # the install the ilp messages name must be installable
    text = (ROOT / "pyproject.toml").read_text()
    line = re.search(r"^optimization = \[(.*)\]$", text, re.M)
    assert line is not None, "pyproject.toml has no optimization extra"
    assert re.search(r'"pulp\[cbc\]>=[0-9.]+"', line.group(1))


def test_13_a_solver_that_is_found_but_cannot_run_is_skipped(monkeypatch, tmp_path):
    import pulp

    # a "CBC" that exists and is executable but fails: available() finds it,
    # the probe solve does not succeed
    fake = tmp_path / "cbc"
    fake.write_text("#!/bin/sh\nexit 137\n")
    fake.chmod(0o755)
    broken = pulp.COIN_CMD(path=str(fake), msg=False)
    assert broken.available()
    assert rowvoi.setcover._solver_runs(pulp, broken) is False
    assert rowvoi.setcover._solver_runs(pulp, pulp.PULP_CBC_CMD(msg=False)) is True
    # _find_solver tries COIN_CMD first: found but not runnable -> the next one
    monkeypatch.setattr(pulp.COIN_CMD, "available", lambda self: str(fake))
    found = rowvoi.setcover._find_solver(pulp)
    assert found is not None and type(found).__name__ != "COIN_CMD"
    # and when it runs, COIN_CMD (not deprecated) is preferred
    monkeypatch.setattr(rowvoi.setcover, "_solver_runs", lambda pulp, solver: True)
    assert type(rowvoi.setcover._find_solver(pulp)).__name__ == "COIN_CMD"


# 15: zero costs ---------------------------------------------------------
CUSTOMERS = pd.DataFrame(
    {
        "first_name": ["John", "John", "Jane", "Jane"],
        "last_name": ["Smith", "Smith", "Doe", "Smith"],
        "email": ["j1@ex.com", "j2@ex.com", "jane@ex.com", "j3@ex.com"],
        "phone": ["555-0101", "555-0102", "555-0201", "555-0301"],
        "zip_code": ["10001", "10002", "10001", "10001"],
    }
)
FREE_NAMES = {"email": 1, "phone": 2, "zip_code": 1, "first_name": 0, "last_name": 0}


def test_15_free_columns_in_a_session_as_the_reference_readme():
    policy = GreedyCoveragePolicy(costs=FREE_NAMES, objective="entropy")
    session = DisambiguationSession(CUSTOMERS, [0, 1], policy=policy, feature_costs=FREE_NAMES)
    s = session.next_question()
    # the free names do not tell the two John Smiths apart, so they are not
    # asked; email and zip_code tie at cost 1 and email comes first
    assert s.col == "email" and s.marginal_cost == 1.0
    session.observe(s.col, CUSTOMERS.iloc[0][s.col])
    assert session.state.is_unique and session.cumulative_cost == 1.0


def test_15_a_free_column_that_helps_is_asked_first_at_no_cost():
    rows = [0, 2, 3]  # first_name separates Jane from John for free
    for policy in (
        GreedyCoveragePolicy(costs=FREE_NAMES),
        GreedyCoveragePolicy(costs=FREE_NAMES, objective="entropy"),
        CandidateMIPolicy(costs=FREE_NAMES),
        MIPolicy(RowVoiModel().fit(CUSTOMERS), feature_costs=FREE_NAMES),
    ):
        session = DisambiguationSession(CUSTOMERS, rows, policy=policy, feature_costs=FREE_NAMES)
        s = session.next_question()
        assert s.col in ("first_name", "last_name"), type(policy).__name__
        assert s.marginal_cost == 0.0 and s.score == float("inf")
        session.observe(s.col, CUSTOMERS.loc[2, s.col])
        assert session.cumulative_cost == 0.0
    # the two names together tell all three apart: a key that costs nothing
    for strategy in ("greedy", "exact", "sa", "ga", "hybrid", "lp", "ilp"):
        key = find_key(CUSTOMERS, rows, costs=FREE_NAMES, strategy=strategy)
        assert sorted(key) == ["first_name", "last_name"] and key.cost == 0.0, strategy
    path = plan_key_path(CUSTOMERS, rows, costs=FREE_NAMES)
    assert path.columns()[0] in ("first_name", "last_name")
    assert path.steps[0].cumulative_cost == 0.0


def test_15_negative_nan_and_infinite_costs_still_refused():
    for bad in (-1, -1e-300, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="finite and >= 0"):
            find_key(CUSTOMERS, [0, 1], costs={"email": bad})
        with pytest.raises(ValueError, match="finite and >= 0"):
            DisambiguationSession(
                CUSTOMERS, [0, 1], policy=CandidateMIPolicy(), feature_costs={"email": bad}
            )
        with pytest.raises(ValueError, match="finite and >= 0"):
            SetCoverProblem({"a": {1}}, costs={"a": bad})


def test_15_the_model_keeps_the_reference_rule_for_mi_over_cost():
    model = RowVoiModel().fit(CUSTOMERS)
    state = CandidateState.uniform([0, 2, 3])
    with pytest.raises(ValueError, match="feature costs must be positive"):
        model.suggest_next_feature(
            CUSTOMERS, state, objective="mi_over_cost", feature_costs=FREE_NAMES
        )
    # with objective "mi" the costs only label the answer
    s = model.suggest_next_feature(CUSTOMERS, state, feature_costs=FREE_NAMES)
    assert s.marginal_cost == FREE_NAMES[s.col]


# 16: every column observed ----------------------------------------------
def test_16_the_model_answers_none_when_no_column_is_left():
    model = RowVoiModel().fit(TABLE)
    done = CandidateState.uniform([0, 1], observed_cols={"city", "plan", "tier"})
    assert model.suggest_next_feature(TABLE, done) is None
    left = CandidateState.uniform([0, 1], observed_cols={"city"})
    assert model.suggest_next_feature(TABLE, left, candidate_cols=["city"]) is None
    # the policy keeps its FeatureSuggestion contract (the seed: col is None)
    s = MIPolicy(model).suggest(TABLE, done)
    assert s.col is None and s.score == 0.0
    # nothing left to acquire: run_acquisition stops without a step
    assert model.run_acquisition(TABLE, 0, done) == []


# 14 --------------------------------------------------------------------
def test_14_rag_guide_example_lives_where_the_guide_says():
    # test_cli.py::test_rag_pipeline_example_runs runs it and checks its output
    guide = (ROOT / "tests" / "acceptance" / "rag_guide.rst").read_text()
    assert "``examples/rag/rag_pipeline_demo.py``" in guide
    assert (ROOT / "examples" / "rag" / "rag_pipeline_demo.py").is_file()
    assert not (ROOT / "examples" / "rag_pipeline.py").exists()
    assert "examples/rag/rag_pipeline_demo.py" in (ROOT / "README.md").read_text()


# 15 (command line) ----------------------------------------------------
def test_15_cli_costs_accept_free_columns_and_refuse_negatives(capsys, tmp_path):
    from rowvoi.cli.main import main

    table = tmp_path / "customers.csv"
    CUSTOMERS.to_csv(table, index=False)
    code = main(["key", str(table), "--rows", "0,2,3", "--costs", "first_name=0,last_name=0"])
    out = capsys.readouterr().out
    assert code == 0 and out.splitlines()[0] == "key: first_name, last_name"
    assert "cost: 0" in out
    for bad in ("email=-1", "email=nan", '{"email": -0.5}'):
        code = main(["key", str(table), "--costs", bad])
        err = capsys.readouterr().err
        assert code == 2 and "finite numbers >= 0" in err, bad
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps(ANSWERS))
    code = main(["question", str(answers), "--costs", "version=0", "--json"])
    data = json.loads(capsys.readouterr().out)  # strict JSON: no Infinity
    assert code == 0 and data["best"] == "version"
    assert data["questions"][0] == {
        "question": "version",
        "bits": 1.0,
        "cost": 0.0,
        "bits_per_cost": None,
    }
    code = main(["question", str(answers), "--costs", "version=0"])
    out = capsys.readouterr().out
    assert code == 0 and "inf  version  <- ask this" in out


def test_15_free_chunks_questions_and_probes():
    chunks = [Chunk("pinned", tokens=0), Chunk("a", tokens=100), Chunk("b", tokens=120)]
    support = {"price": {"pinned", "a"}, "date": {"b"}, "sso": {"a"}}
    # greedy takes the free chunk first (it covers price at no cost), then a
    # and b; it keeps its pick order, and the free chunk costs nothing
    sel = select_context(chunks, ["price", "date", "sso"], support)
    assert sel.chunks == ["pinned", "a", "b"] and sel.total_cost == 220.0
    # the other strategies drop a free chunk the selection does not need
    sel = select_context(chunks, ["price", "date", "sso"], support, strategy="exact")
    assert sorted(sel.chunks) == ["a", "b"] and sel.total_cost == 220.0
    two = {"price": {"pinned", "a"}, "date": {"b"}}
    sel = select_context(chunks, ["price", "date"], two, strategy="exact")
    assert sorted(sel.chunks) == ["b", "pinned"] and sel.total_cost == 120.0
    path = plan_context_path(chunks, ["price", "date"], two)
    assert path.names()[0] == "pinned" and path.steps[0].cumulative_cost == 0.0
    # a free question that tells candidates apart is asked first
    s = next_question(ANSWERS, costs={"version": 0})
    assert s.col == "version" and s.score == float("inf") and s.expected_voi == 1.0
    runner_calls = []

    class Runner:
        def run(self, probe):
            runner_calls.append(probe)
            return ANSWERS[probe][3]

    session = RetrievalSession(ANSWERS, runner=Runner(), costs={"version": 0.0})
    session.run(StopRules(epsilon_posterior=0.05))
    assert runner_calls == ["version", "deploy"] and session.cumulative_cost == 1.0


# 17: the reference model's private helpers -----------------------------
def test_17_reference_model_internals_follow_our_noise_model():
    df = pd.DataFrame({"a": [1, 1, 2, 3], "b": ["x", "y", "x", "y"]})
    exact, noisy = RowVoiModel().fit(df), RowVoiModel(noise=0.3).fit(df)
    assert RowVoiModel()._freqs == {}
    assert noisy._freqs["a"] == pytest.approx({1: 0.5, 2: 0.25, 3: 0.25}, abs=1e-6)
    assert exact._conditional_value_distribution("a", [1, 2, 3], 2) == {1: 0.0, 2: 1.0, 3: 0.0}
    # noise spread evenly over the other candidate values (answer_likelihoods' rule)
    dist = noisy._conditional_value_distribution("a", [1, 2, 3], 2)
    assert dist == pytest.approx({1: 0.15, 2: 0.7, 3: 0.15})
    with pytest.raises(ValueError, match="not found in frequency table"):
        noisy._conditional_value_distribution("zz", [1, 2], 1)
    state = CandidateState([0, 2, 3], np.array([0.5, 0.3, 0.2]))
    assert exact._get_posterior_prob(state, 2) == 0.3
    assert exact._get_posterior_prob(state, 1) == 0.0
    for model in (exact, noisy):
        s = model.suggest_next_feature(df, state, candidate_cols=["a"])
        h = model._expected_cond_entropy(state, "a")
        assert h == pytest.approx(s.debug["entropy_after"]) and h == pytest.approx(
            state.entropy - s.expected_voi
        )
    assert exact._expected_cond_entropy(state, "a") == pytest.approx(0.0)  # a tells all apart
    with pytest.raises(RuntimeError, match="fit"):
        RowVoiModel()._expected_cond_entropy(state, "a")
