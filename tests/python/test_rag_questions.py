"""rowvoi.rag.questions and rowvoi.rag.retrieval."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from rowvoi import CandidateState, StopRules
from rowvoi.rag import (
    ProbeStep,
    RetrievalSession,
    answer_frame,
    answer_likelihoods,
    next_question,
    observe_answer,
    question_values,
)

ANSWERS = {
    "Which deployment?": ["cloud", "cloud", "self", "self"],
    "Which version?": ["v4", "v3", "v4", "v3"],
    "Are you an admin?": ["yes", "yes", "yes", "yes"],
}


def numpy_mi(codes, p):
    """Plain numpy I(R; X) for an exact observation: H(X) (R determines X)."""
    p = np.asarray(p, float) / np.sum(p)
    masses = np.array([p[codes == v].sum() for v in np.unique(codes)])
    masses = masses[masses > 0]
    return float(-(masses * np.log2(masses)).sum())


def test_answer_frame_shapes_agree():
    rows = [[a, b, c] for a, b, c in zip(*ANSWERS.values())]
    by_rows = answer_frame(rows, questions=list(ANSWERS))
    by_map = answer_frame(ANSWERS)
    by_df = answer_frame(pd.DataFrame(ANSWERS, index=list("wxyz")))
    for f in (by_rows, by_df):
        assert f.equals(by_map.astype(object)) or (f.values == by_map.values).all()
    assert list(by_df.index) == [0, 1, 2, 3]
    assert list(answer_frame(ANSWERS, questions=["Which version?"]).columns) == ["Which version?"]


def test_answer_frame_errors():
    with pytest.raises(ValueError, match="`questions` is required"):
        answer_frame([["a"], ["b"]])
    with pytest.raises(ValueError, match="ragged"):
        answer_frame([["a", "b"], ["c"]], questions=["q1", "q2"])
    with pytest.raises(ValueError, match="ragged"):
        answer_frame({"q1": ["a", "b"], "q2": ["c"]})
    with pytest.raises(ValueError, match="no questions"):
        answer_frame({})
    with pytest.raises(KeyError, match="zz"):
        answer_frame(ANSWERS, questions=["zz"])
    with pytest.raises(TypeError):
        answer_frame(42)


def test_question_values_whole_ranking_and_exclusion():
    vals = question_values(ANSWERS)
    assert list(vals) == list(ANSWERS)
    assert vals == {"Which deployment?": 1.0, "Which version?": 1.0, "Are you an admin?": 0.0}
    state = CandidateState.uniform(range(4), observed_cols={"Which deployment?"})
    assert "Which deployment?" not in question_values(ANSWERS, state=state)
    skew = question_values(ANSWERS, prior=[8, 0, 0, 0])
    assert skew["Which deployment?"] == 0.0
    norm = question_values(ANSWERS, prior=[1, 1, 1, 1], normalize=True)
    assert norm["Which version?"] == pytest.approx(0.5)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=2, max_size=12), st.integers(0, 1000))
def test_question_values_match_numpy(col, seed):
    rng = np.random.default_rng(seed)
    prior = rng.random(len(col)) + 0.01
    got = question_values({"q": col}, prior=prior)["q"]
    assert got == pytest.approx(numpy_mi(np.array(col), prior), abs=1e-12)
    h = -(prior / prior.sum() * np.log2(prior / prior.sum())).sum()
    assert -1e-12 <= got <= h + 1e-12


def test_next_question_costs_and_none():
    assert next_question(ANSWERS).col == "Which deployment?"
    s = next_question(ANSWERS, costs={"Which deployment?": 4.0})
    assert s.col == "Which version?" and s.score == pytest.approx(1.0)
    s = next_question(ANSWERS, costs={"Which version?": 5.0})
    assert s.col == "Which deployment?" and s.marginal_cost == 1.0
    done = CandidateState.uniform(range(4), observed_cols=set(ANSWERS))
    assert next_question(ANSWERS, state=done).col is None
    assert next_question({"q": ["x", "x"]}).col is None
    assert next_question(ANSWERS, normalize=True).score == pytest.approx(0.5)


def test_ties_go_to_the_earlier_question_despite_rounding():
    # both questions split mass 0.35 / 0.65, summed in different orders
    outcomes = {"b": ["hit", "hit", "miss", "miss"], "a": ["v4", "v3", "v4", "v3"]}
    prior = [0.20, 0.15, 0.45, 0.20]
    assert next_question(outcomes, prior=prior).col == "b"
    flipped = {"a": outcomes["a"], "b": outcomes["b"]}
    assert next_question(flipped, prior=prior).col == "a"


def test_likelihoods_and_observe():
    lik = answer_likelihoods(ANSWERS, "Which deployment?", "self", noise=0.02)
    assert lik.tolist() == pytest.approx([0.02, 0.02, 0.98, 0.98])
    three = {"q": ["a", "b", "c", "a"]}
    assert answer_likelihoods(three, "q", "a", noise=0.3).tolist() == pytest.approx(
        [0.7, 0.15, 0.15, 0.7]
    )
    # an answer nobody predicted: one more "other" answer for everyone (0.3 / 3)
    assert answer_likelihoods(three, "q", "zzz", noise=0.3).tolist() == pytest.approx([0.1] * 4)
    assert answer_likelihoods(three, "q", "zzz").tolist() == [0, 0, 0, 0]
    # a constant question cannot move the belief, at any noise
    assert answer_likelihoods({"q": ["x"] * 3}, "q", "x", noise=0.4).tolist() == pytest.approx(
        [0.6] * 3
    )
    state = observe_answer(
        CandidateState.uniform(range(4)), ANSWERS, "Which deployment?", "self", noise=0.02
    )
    assert state.posterior.round(2).tolist() == [0.01, 0.01, 0.49, 0.49]
    assert state.observed_cols == {"Which deployment?"}
    assert len(state.candidate_rows) == 4
    with pytest.raises(ValueError, match="zero probability"):
        observe_answer(CandidateState.uniform(range(4)), ANSWERS, "Which version?", "v9")
    with pytest.raises(KeyError):
        answer_likelihoods(ANSWERS, "nope", "x")
    for bad in (-0.1, 1.0, float("nan"), "x"):
        with pytest.raises(ValueError, match="noise"):
            answer_likelihoods(ANSWERS, "Which version?", "v4", noise=bad)


def test_missing_answers_are_one_value():
    answers = {"q": ["a", None, float("nan"), "a"]}
    assert answer_likelihoods(answers, "q", None).tolist() == [0, 1, 1, 0]
    assert question_values(answers)["q"] == pytest.approx(1.0)


def test_prior_and_state_validation():
    with pytest.raises(ValueError, match="4 prior weights"):
        question_values(ANSWERS, prior=[1, 2])
    with pytest.raises(ValueError, match="non-negative"):
        next_question(ANSWERS, prior=[1, -1, 1, 1])
    with pytest.raises(ValueError, match="non-negative"):
        next_question(ANSWERS, prior=[0, 0, 0, 0])
    with pytest.raises(ValueError, match="candidates"):
        question_values(ANSWERS, state=CandidateState.uniform(range(3)))
    with pytest.raises(ValueError, match="not both"):
        question_values(ANSWERS, state=CandidateState.uniform(range(4)), prior=[1, 1, 1, 1])
    with pytest.raises(ValueError, match="not in the answer matrix"):
        next_question(ANSWERS, costs={"zz": 1.0})
    for bad in (-1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="'Which version\\?'"):
            next_question(ANSWERS, costs={"Which version?": bad})


OUTCOMES = {
    "bm25": ["hit", "hit", "miss", "miss"],
    "metadata:version": ["v4", "v3", "v4", "v3"],
    "rerank": ["1st", "2nd", "3rd", "4th"],
}


class Runner:
    def __init__(self, truth):
        self.truth = truth
        self.calls = []

    def run(self, probe):
        self.calls.append(probe)
        return OUTCOMES[probe][self.truth]


def test_retrieval_session_guide_flow_and_expected_vs_realised():
    session = RetrievalSession(
        OUTCOMES,
        runner=Runner(3),
        prior=[0.20, 0.15, 0.45, 0.20],
        costs={"bm25": 1.0, "metadata:version": 1.0, "rerank": 12.0},
        noise=0.05,
    )
    steps = session.run(StopRules(epsilon_posterior=0.15, target_unique=False))
    assert [s.probe for s in steps] == ["bm25", "metadata:version"]
    assert session.best_candidate == 3 and session.cumulative_cost == 2.0
    assert session.stop_reason == "Residual uncertainty <= 0.15"
    for s in steps:
        assert isinstance(s, ProbeStep) and s.expected_voi > 0
        assert s.realized_gain == pytest.approx(s.entropy_before - s.entropy_after)
    # a second run continues from where the first stopped
    more = session.run(StopRules(epsilon_posterior=0.01, target_unique=False))
    assert more[:2] == steps and len(more) == 3 and more[2].probe == "rerank"
    session.reset()
    assert session.steps_taken == 0 and session.state.posterior.tolist() == pytest.approx(
        [0.20, 0.15, 0.45, 0.20]
    )


def test_scoring_and_updating_use_the_same_noise_model():
    # the expected gain equals the average realised gain over outcomes
    prior = np.array([0.1, 0.2, 0.3, 0.4])
    noise = 0.2
    session = RetrievalSession(OUTCOMES, prior=prior, noise=noise)
    for probe in OUTCOMES:
        expected = session.next_probe().debug["values"][probe]
        values = sorted(set(OUTCOMES[probe]))
        avg = 0.0
        h0 = session.state.entropy
        for v in values:
            lik = answer_likelihoods(OUTCOMES, probe, v, noise=noise)
            p_v = float(np.dot(prior, lik))
            post = prior * lik / p_v
            h1 = -(post[post > 0] * np.log2(post[post > 0])).sum()
            avg += p_v * (h0 - h1)
        assert expected == pytest.approx(avg, abs=1e-12)


def test_budget_never_exceeded_and_probes_run_out():
    session = RetrievalSession(
        OUTCOMES, runner=Runner(0), costs={"bm25": 1.0, "metadata:version": 2.0, "rerank": 3.0}
    )
    session.run(StopRules(cost_budget=2.5, target_unique=False))
    assert session.cumulative_cost <= 2.5
    assert "exceed the cost budget" in session.stop_reason
    s2 = RetrievalSession({"bm25": OUTCOMES["bm25"]}, runner=Runner(0))
    s2.run(StopRules(target_unique=False))
    assert [s.probe for s in s2.history] == ["bm25"]
    assert s2.next_probe().col is None and s2.stop_reason == "every probe has been run"


def test_manual_driving_and_bad_input():
    session = RetrievalSession(OUTCOMES)
    with pytest.raises(ValueError, match="runner"):
        session.run(StopRules())
    with pytest.raises(KeyError, match="probe"):
        session.observe("nope", "x")
    step = session.observe("rerank", likelihoods=[0.1, 0.1, 0.7, 0.1], expected_voi=1.5)
    assert step.outcome is None and step.expected_voi == 1.5
    assert session.best_candidate == 2
    with pytest.raises(ValueError, match="zero probability"):
        session.observe("bm25", likelihoods=[0, 0, 0, 0])
    assert session.steps_taken == 1
    with pytest.raises(ValueError, match="4 prior weights"):
        RetrievalSession(OUTCOMES, prior=[1, 2, 3])
    with pytest.raises(ValueError, match="non-negative"):
        RetrievalSession(OUTCOMES, prior=[1, -2, 3, 1])
    with pytest.raises(ValueError, match="non-negative"):
        RetrievalSession(OUTCOMES, prior=[0, 0, 0, 0])
    with pytest.raises(ValueError, match="noise"):
        RetrievalSession(OUTCOMES, noise=1.0)
    with pytest.raises(ValueError, match="`questions` is required"):
        RetrievalSession([["a"], ["b"]])
    assert RetrievalSession([["a"], ["b"]], probes=["p"]).next_probe().col == "p"


def test_no_llm_sdk_is_imported():
    import subprocess
    import sys

    code = (
        "import sys, rowvoi.rag; "
        "bad = [m for m in sys.modules if m.split('.')[0] in "
        "('anthropic', 'openai', 'google', 'cohere', 'langchain')]; "
        "assert not bad, bad"
    )
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
