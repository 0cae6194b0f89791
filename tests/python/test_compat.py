"""Drop-in compatibility with the reference rowvoi package (0.2-0.3).

One test (or more) per behaviour of issue 8, numbered as there. Where we keep
a difference from the reference on purpose, README's "Coming from the
reference rowvoi" says so and the test pins our side of it.
"""

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import rowvoi.setcover
from rowvoi import CandidateState, StopRules
from rowvoi.errors import SolverUnavailableError
from rowvoi.keys import KeyProblem
from rowvoi.ml import RowVoiModel
from rowvoi.policies import CandidateMIPolicy, MIPolicy
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
    assert RowVoiModel().fit(TABLE).suggest_next_feature(TABLE, done).col is None


# 10 --------------------------------------------------------------------
def test_10_model_fit_costs_and_debug():
    empty = RowVoiModel().fit(pd.DataFrame())
    assert isinstance(empty, RowVoiModel)
    s = empty.suggest_next_feature(pd.DataFrame(), CandidateState.uniform([]))
    assert s.col is None
    model = RowVoiModel().fit(TABLE)
    state = CandidateState.uniform(TABLE.index)
    with pytest.raises(ValueError, match="feature_costs must be provided"):
        model.suggest_next_feature(TABLE, state, objective="mi_over_cost")
    for bad in (0, -1.0):
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


@pytest.mark.parametrize("strategy", ["ilp", "lp"])
def test_13_no_solver_is_solver_unavailable(monkeypatch, strategy):
    problem = SetCoverProblem({"a": {1, 2}, "b": {2, 3}})
    monkeypatch.setattr(rowvoi.setcover, "_find_solver", lambda pulp, *, time_limit=None: None)
    with pytest.raises(SolverUnavailableError, match="no usable LP solver"):
        problem.solve(strategy)
    with pytest.raises(SolverUnavailableError):
        KeyProblem(TABLE, TABLE.index).minimal_key(strategy=strategy)


@pytest.mark.parametrize("strategy", ["ilp", "lp"])
def test_13_missing_pulp_is_solver_unavailable_not_import_error(monkeypatch, strategy):
    monkeypatch.setitem(sys.modules, "pulp", None)  # `import pulp` now raises ImportError
    with pytest.raises(SolverUnavailableError, match="needs the pulp package"):
        SetCoverProblem({"a": {1, 2}, "b": {2, 3}}).solve(strategy)


# 14 --------------------------------------------------------------------
def test_14_rag_guide_example_lives_where_the_guide_says():
    # test_cli.py::test_rag_pipeline_example_runs runs it and checks its output
    guide = (ROOT / "tests" / "acceptance" / "rag_guide.rst").read_text()
    assert "``examples/rag/rag_pipeline_demo.py``" in guide
    assert (ROOT / "examples" / "rag" / "rag_pipeline_demo.py").is_file()
    assert not (ROOT / "examples" / "rag_pipeline.py").exists()
    assert "examples/rag/rag_pipeline_demo.py" in (ROOT / "README.md").read_text()
