"""Clarifying questions: ask the one question that best splits the candidates.

The RAG analogue of "which column should I observe next". When the retriever
returns k chunks with near-tied scores, the posterior over "which one
actually answers the query" is flat. Stuffing all k into the context or
guessing the top one both discard that ambiguity; asking one good question
resolves it.

A predicted answer matrix is structurally the same object as a table of
candidate rows, so the mutual information here is the same exact kernel that
:class:`rowvoi.policies.CandidateMIPolicy` uses (C, all questions at once).
Answers are compared for equality; every missing answer (None, NaN) is one
answer, "missing".

The noise model (``answer_likelihoods``, ``observe_answer``): with
probability ``1 - noise`` a candidate produces its predicted answer, and
otherwise one of the *other* answers observed for that question, uniformly
(the answers the candidates predict, plus the received one when no candidate
predicted it). A question every candidate answers alike carries no
information at any noise, and under ``noise > 0`` an answer nobody predicted
is surprising, not disqualifying: it leaves the belief where it was.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

import rowvoi._belief as _belief
from rowvoi import _validate as _v
from rowvoi._candidates import encode_columns_at, encode_values
from rowvoi._validate import cost as check_cost, per_cost
from rowvoi.core import CandidateState, FeatureSuggestion

__all__ = [
    "answer_frame",
    "question_values",
    "next_question",
    "answer_likelihoods",
    "observe_answer",
]

Answers = pd.DataFrame | Mapping[Hashable, Sequence[Any]] | Sequence[Sequence[Any]]


def answer_frame(answers: Answers, *, questions: Sequence[Hashable] | None = None) -> pd.DataFrame:
    """Coerce a predicted answer matrix into a candidates x questions frame.

    Parameters
    ----------
    answers : DataFrame, Mapping or nested sequence
        Three accepted shapes:

        - DataFrame: one row per candidate, one column per question
        - Mapping: question -> per-candidate answers (column-oriented)
        - Nested sequence: ``answers[i][q]`` (row-oriented); needs questions
    questions : Sequence[Hashable] or None
        Column labels. Required for the nested-sequence form; with a
        DataFrame or a Mapping it selects and orders the questions.

    Returns
    -------
    DataFrame
        Candidates as positional rows (0 .. n-1), questions as columns.

    Raises
    ------
    ValueError
        If the nested-sequence form is given without questions, if rows are
        ragged, or if the matrix has no questions.

    Examples
    --------
    >>> answer_frame({"q1": ["a", "b"], "q2": ["x", "x"]})
      q1 q2
    0  a  x
    1  b  x
    >>> answer_frame([["a", "x"], ["b", "x"]], questions=["q1", "q2"]).shape
    (2, 2)
    """
    if isinstance(answers, pd.DataFrame):
        frame = answers
        if not (
            isinstance(frame.index, pd.RangeIndex)
            and frame.index.start == 0
            and frame.index.step == 1
        ):
            frame = frame.reset_index(drop=True)
        if not frame.columns.is_unique:
            raise ValueError("the answer matrix names a question more than once")
    elif isinstance(answers, Mapping):
        lengths = {}
        cols = {}
        for q, col in answers.items():
            if isinstance(col, (str, bytes)) or not isinstance(col, Iterable):
                raise ValueError(f"answers[{q!r}] must be a sequence of per-candidate answers")
            vals = list(col)
            lengths[q] = len(vals)
            cols[q] = vals
        if len(set(lengths.values())) > 1:
            raise ValueError(
                f"ragged answer matrix: each question needs one answer per "
                f"candidate, got {lengths}"
            )
        frame = pd.DataFrame({q: pd.Series(v, dtype=object) for q, v in cols.items()})
    elif isinstance(answers, Iterable) and not isinstance(answers, (str, bytes)):
        if questions is None:
            raise ValueError(
                "`questions` is required for a nested-sequence answer matrix "
                "(answers[i][q]): pass questions=[...] to label its columns"
            )
        questions = list(questions)
        rows = []
        for i, row in enumerate(answers):
            if isinstance(row, (str, bytes)) or not isinstance(row, Iterable):
                raise ValueError(f"answers[{i}] must be a sequence of answers, one per question")
            vals = list(row)
            if len(vals) != len(questions):
                raise ValueError(
                    f"ragged answer matrix: row {i} has {len(vals)} answers for "
                    f"{len(questions)} questions; each row needs one per question"
                )
            rows.append(vals)
        qs = list(questions)
        if len(set(qs)) != len(qs):
            raise ValueError("questions names a question more than once")
        frame = (
            pd.DataFrame(rows, columns=qs, dtype=object)
            if rows
            else pd.DataFrame({q: pd.Series([], dtype=object) for q in qs})
        )
        questions = None
    else:
        raise TypeError(
            "answers must be a DataFrame, a mapping question -> answers, or a "
            f"nested sequence, got {type(answers).__name__}"
        )
    if questions is not None:
        qs = list(questions)
        missing = [q for q in qs if q not in frame.columns]
        if missing:
            raise KeyError(f"questions not in the answer matrix: {missing[:5]!r}")
        frame = frame[qs]
    if frame.shape[1] == 0:
        raise ValueError("the answer matrix has no questions")
    return frame


def _posterior(
    n: int, state: CandidateState | None, prior: Sequence[float] | None
) -> tuple[np.ndarray, set[Hashable]]:
    if state is not None:
        if prior is not None:
            raise ValueError("pass either state or prior, not both")
        if not isinstance(state, CandidateState):
            raise TypeError(f"state must be a CandidateState, got {type(state).__name__}")
        if len(state.candidate_rows) != n:
            raise ValueError(
                f"state has {len(state.candidate_rows)} candidates but the answer matrix has {n}"
            )
        return state.posterior, set(state.observed_cols)
    if prior is None:
        return (np.full(n, 1.0 / n) if n else np.zeros(0)), set()
    return normalize_prior(prior, n), set()


def normalize_prior(prior: Sequence[float], n: int) -> np.ndarray:
    """Validate per-candidate prior weights and normalise them to sum to 1.

    Raises ValueError for the wrong length, a NaN/infinite/negative weight,
    or an all-zero prior.
    """
    if isinstance(prior, (str, bytes)):
        raise TypeError("prior must be a sequence of per-candidate weights, not a string")
    try:
        p = np.asarray(prior, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"prior must be a sequence of {n} numbers, got {prior!r}") from None
    if p.ndim != 1 or len(p) != n:
        raise ValueError(f"expected {n} prior weights (one per candidate), got {p.size}")
    if not np.all(np.isfinite(p)):
        raise ValueError("prior weights must be finite")
    if np.any(p < 0) or not float(p.sum()) > 0:
        raise ValueError(
            "prior weights must be non-negative with a positive total (at "
            "least one candidate must be possible)"
        )
    return p / float(p.sum())


def _codes(frame: pd.DataFrame) -> np.ndarray:
    """(n_questions, n_candidates) int32 codes for the kernels."""
    return encode_columns_at(frame, list(frame.columns), np.arange(frame.shape[0]))


def _costs(
    frame: pd.DataFrame, costs: Mapping[Hashable, float] | None, what: str = "question"
) -> np.ndarray:
    out = np.ones(frame.shape[1], dtype=np.float64)
    if costs is None:
        return out
    if not isinstance(costs, Mapping):
        raise TypeError(f"costs must be a mapping {what} -> cost, got {type(costs).__name__}")
    pos = {q: j for j, q in enumerate(frame.columns)}
    for q, v in costs.items():
        if q not in pos:
            raise ValueError(f"costs names {what} {q!r}, which is not in the answer matrix")
        out[pos[q]] = check_cost(q, v, what)
    return out


def information(
    frame: pd.DataFrame,
    posterior: np.ndarray,
    *,
    noise: float = 0.0,
    costs: np.ndarray | None = None,
    exclude: Iterable[Hashable] = (),
) -> tuple[list[Hashable], np.ndarray, int, float]:
    """MI (bits) of every non-excluded question, the best by MI per cost, H(R).

    Returns (questions, mi, best index into questions or -1, prior entropy).
    Ties in MI per cost (equal up to 1e-12 relative) go to the earlier
    question; a question with no information is never "best".
    """
    excluded = set(exclude)
    keep = [j for j, q in enumerate(frame.columns) if q not in excluded]
    qs: list[Hashable] = [frame.columns[j] for j in keep]
    if not qs or len(posterior) == 0:
        h = float(_belief.entropy(posterior)) if len(posterior) else 0.0
        return qs, np.zeros(len(qs)), -1, h
    codes = _codes(frame.iloc[:, keep])
    res = _belief.mutual_information(
        codes, None, posterior, noise, None if costs is None else costs[keep]
    )
    return qs, np.asarray(res["mi"], dtype=np.float64), int(res["best"]), float(res["h_rows"])


def question_values(
    answers: Answers,
    *,
    questions: Sequence[Hashable] | None = None,
    state: CandidateState | None = None,
    prior: Sequence[float] | None = None,
    normalize: bool = False,
) -> dict[Hashable, float]:
    """Score every question by expected information gain, in bits.

    Returns the whole ranking rather than just the winner: useful for showing
    a user their options, or for logging why a question was chosen.

    Parameters
    ----------
    answers : DataFrame, Mapping or nested sequence
        Predicted answer matrix; see :func:`answer_frame`.
    questions : Sequence[Hashable] or None
        Column labels for the nested-sequence form.
    state : CandidateState or None
        Current belief. Defaults to uniform over candidates. Questions
        already in ``state.observed_cols`` are left out, as in
        :func:`next_question`.
    prior : Sequence[float] or None
        Per-candidate prior weights (e.g. retrieval scores), used when state
        is not given. Normalized internally.
    normalize : bool
        Divide by prior entropy, giving a 0-1 fraction of the uncertainty
        resolved (0 when the prior entropy is 0).

    Returns
    -------
    dict[Hashable, float]
        Mutual information per question, in bits (or fractions if
        normalized), in the matrix's question order.

    Raises
    ------
    ValueError
        For a malformed answer matrix (see :func:`answer_frame`), a prior of
        the wrong length ("expected N prior weights") or one that is
        negative or all zero ("non-negative"), or both state and prior.

    Examples
    --------
    >>> answers = {"q1": ["a", "a", "b", "b"], "q2": ["a", "b", "c", "d"], "q3": ["x"] * 4}
    >>> question_values(answers)
    {'q1': 1.0, 'q2': 2.0, 'q3': 0.0}
    >>> question_values(answers, prior=[1, 1, 1, 1], normalize=True)
    {'q1': 0.5, 'q2': 1.0, 'q3': 0.0}
    """
    frame = answer_frame(answers, questions=questions)
    posterior, observed = _posterior(frame.shape[0], state, prior)
    qs, mi, _, h = information(frame, posterior, exclude=observed)
    if normalize:
        return {q: (float(v) / h if h > 0 else 0.0) for q, v in zip(qs, mi)}
    return {q: float(v) for q, v in zip(qs, mi)}


def next_question(
    answers: Answers,
    *,
    questions: Sequence[Hashable] | None = None,
    state: CandidateState | None = None,
    prior: Sequence[float] | None = None,
    costs: Mapping[Hashable, float] | None = None,
    normalize: bool = False,
) -> FeatureSuggestion:
    """Pick the question with the best information gain per unit cost.

    Parameters
    ----------
    answers : DataFrame, Mapping or nested sequence
        Predicted answer matrix; see :func:`answer_frame`.
    questions : Sequence[Hashable] or None
        Column labels for the nested-sequence form.
    state : CandidateState or None
        Current belief. Defaults to uniform over candidates. Questions
        already in ``state.observed_cols`` are excluded.
    prior : Sequence[float] or None
        Per-candidate prior weights, used when state is not given.
    costs : Mapping[Hashable, float] or None
        Per-question cost (default 1.0; finite and >= 0). With users, cost is
        patience: a yes/no question is cheap, "paste your config" is not.
        Ranking is by MI/cost; ties go to the earlier question.
    normalize : bool
        Score against normalized MI (MI / prior entropy) instead of raw bits;
        the choice is the same.

    Returns
    -------
    FeatureSuggestion
        ``.col`` is the chosen question, ``.expected_voi`` its information
        gain in bits, ``.score`` the cost-adjusted ranking value. ``.col`` is
        None when no question is left to ask (all asked, or none can tell
        the candidates apart).

    Raises
    ------
    ValueError
        As :func:`question_values`, and for a cost that is not finite and
        > 0 or names an unknown question.

    Examples
    --------
    >>> from rowvoi.rag import next_question
    >>> # q1 splits the four candidates evenly; q2 tells them apart not at all
    >>> answers = {"q1": ["a", "a", "b", "b"], "q2": ["x", "x", "x", "x"]}
    >>> suggestion = next_question(answers)
    >>> suggestion.col
    'q1'
    >>> f"{suggestion.expected_voi:.2f}"
    '1.00'
    """
    frame = answer_frame(answers, questions=questions)
    posterior, observed = _posterior(frame.shape[0], state, prior)
    cost_arr = _costs(frame, costs)
    qs, mi, best, h = information(frame, posterior, costs=cost_arr, exclude=observed)
    if best < 0:
        return FeatureSuggestion(
            None,
            0.0,
            expected_voi=0.0,
            marginal_cost=None,
            debug={
                "entropy_before": h,
                "reason": "no question left that tells the candidates apart",
            },
        )
    col = qs[best]
    columns: list[Hashable] = list(frame.columns)
    cost = float(cost_arr[columns.index(col)])
    bits = float(mi[best])
    value = bits
    if normalize:
        value = bits / h if h > 0 else 0.0
    score = per_cost(value, cost)
    return FeatureSuggestion(
        col,
        score,
        expected_voi=bits,
        marginal_cost=cost,
        debug={"entropy_before": h, "values": {q: float(v) for q, v in zip(qs, mi)}},
    )


def likelihoods_of(
    frame: pd.DataFrame, question: Hashable, value: Any, noise: float
) -> np.ndarray:
    """Likelihood of receiving ``value`` for ``question``, per candidate.

    The engine's noise model (``rv_belief_likelihood``): an answer no
    candidate predicts gets likelihood 0 everywhere with ``noise == 0`` and
    ``noise / K`` everywhere otherwise (K distinct predicted answers).
    """
    enc = encode_values(frame[question], question)
    code = enc.observed_code(value)
    return np.asarray(_belief.likelihood(enc.codes, code, noise), dtype=np.float64)


def answer_likelihoods(
    answers: Answers,
    question: Hashable,
    value: Any,
    *,
    questions: Sequence[Hashable] | None = None,
    noise: float = 0.0,
) -> np.ndarray:
    """P(observed answer | candidate) for one question.

    With noise=0 this is a hard indicator. With noise>0 a candidate whose
    predicted answer disagrees keeps a share of the mass, so one surprising
    answer (a user typo, a shaky prediction) cannot eliminate the right
    candidate outright. The formula, with A the number of observed answers
    (the distinct predicted ones, plus ``value`` when no candidate
    predicted it): ``1 - noise`` for a candidate that predicted ``value``,
    ``noise / (A - 1)`` for the others. So when every candidate predicts
    ``value`` each gets ``1 - noise``, and an answer no candidate predicted
    gives every candidate the same likelihood (0 when ``noise == 0``).

    Parameters
    ----------
    answers : DataFrame, Mapping or nested sequence
        Predicted answer matrix; see :func:`answer_frame`.
    question : Hashable
        Which question was asked.
    value : Any
        The answer actually received.
    questions : Sequence[Hashable] or None
        Column labels for the nested-sequence form.
    noise : float
        Probability that a candidate produces an answer other than its
        predicted one, spread evenly over the other observed answers. Must
        be in [0, 1).

    Returns
    -------
    ndarray
        Likelihood per candidate, in candidate order.

    Raises
    ------
    ValueError
        If noise is outside [0, 1).
    KeyError
        If question is not a column of the answer matrix.

    Examples
    --------
    >>> answer_likelihoods({"q": ["a", "a", "b"]}, "q", "b", noise=0.1).tolist()
    [0.1, 0.1, 0.9]
    >>> answer_likelihoods({"q": ["a", "a"]}, "q", "a", noise=0.2).tolist()
    [0.8, 0.8]
    >>> answer_likelihoods({"q": ["a", "a", "b"]}, "q", "zzz", noise=0.1).tolist()
    [0.05, 0.05, 0.05]
    """
    noise = check_noise(noise)
    frame = answer_frame(answers, questions=questions)
    if question not in frame.columns:
        raise KeyError(f"question {question!r} is not in the answer matrix")
    return likelihoods_of(frame, question, value, noise)


def check_noise(noise: Any) -> float:
    """Validate a noise level: a real number in [0, 1)."""
    return _v.probability("noise", noise)


def observe_answer(
    state: CandidateState,
    answers: Answers,
    question: Hashable,
    value: Any,
    *,
    questions: Sequence[Hashable] | None = None,
    noise: float = 0.0,
) -> CandidateState:
    """Fold a received answer into the belief over candidates.

    Soft by construction: this reweights via
    :meth:`rowvoi.CandidateState.reweight` rather than filtering, so
    candidates are never dropped and the posterior stays aligned with the
    answer matrix across successive questions.

    Parameters
    ----------
    state : CandidateState
        Belief before the answer.
    answers : DataFrame, Mapping or nested sequence
        Predicted answer matrix; see :func:`answer_frame`.
    question : Hashable
        Which question was asked.
    value : Any
        The answer actually received.
    questions : Sequence[Hashable] or None
        Column labels for the nested-sequence form.
    noise : float
        Per-candidate probability of an off-prediction answer.

    Returns
    -------
    CandidateState
        Updated belief, with question recorded in observed_cols.

    Notes
    -----
    With ``noise > 0`` an answer no candidate predicted is surprising, not
    disqualifying: every candidate keeps its share and the posterior is
    unchanged (the question is still recorded as asked). With ``noise == 0``
    it propagates the ``ValueError`` of
    :meth:`rowvoi.CandidateState.reweight` ("zero likelihood"): no candidate
    could have produced ``value``, so the candidate set is wrong, not merely
    narrowed; re-retrieve rather than continuing to ask.

    Examples
    --------
    >>> state = CandidateState.uniform(range(3))
    >>> observe_answer(state, {"q": ["a", "a", "b"]}, "q", "a").posterior.tolist()
    [0.5, 0.5, 0.0]
    >>> observe_answer(state, {"q": ["a", "a", "b"]}, "q", "c", noise=0.1).posterior.round(3)
    array([0.333, 0.333, 0.333])
    """
    if not isinstance(state, CandidateState):
        raise TypeError(f"state must be a CandidateState, got {type(state).__name__}")
    lik = answer_likelihoods(answers, question, value, questions=questions, noise=noise)
    if len(lik) != len(state.candidate_rows):
        raise ValueError(
            f"state has {len(state.candidate_rows)} candidates but the answer "
            f"matrix has {len(lik)}"
        )
    return state.reweight(lik, observed_col=question, observed_value=value)
