"""Interactive disambiguation sessions.

This module provides tools for running interactive disambiguation sessions
where columns are queried sequentially based on a policy until stopping
criteria are met.

A :class:`DisambiguationSession` holds the belief over the candidate rows,
asks its policy for the next column (:meth:`~DisambiguationSession.next_question`),
folds answers in (:meth:`~DisambiguationSession.observe`) and can run a whole
simulated session against a known row (:meth:`~DisambiguationSession.run`).

Guarantees:

* A cost budget is never exceeded: a column whose cost would take the total
  past ``StopRules.cost_budget`` is not asked (the policy only sees the
  columns that still fit).
* A run always ends. Every step asks a column not asked before; an
  observation that matches no candidate, a policy with nothing informative
  left, or a policy that suggests a column it may not ask each end the run,
  and :attr:`DisambiguationSession.stop_reason` says which.
* Updates: with an :class:`~rowvoi.policies.MIPolicy` the session updates
  the belief through the policy's model (binned columns, and its noise model:
  soft reweighting when ``noise > 0``), so the gains it is offered and the
  updates it makes use the same model. With any other policy, observing a
  value is a hard filter (:meth:`~rowvoi.core.CandidateState.filter_candidates`).

Examples
--------
>>> import pandas as pd
>>> from rowvoi.policies import CandidateMIPolicy
>>> from rowvoi.session import DisambiguationSession, StopRules
>>> df = pd.DataFrame({"city": ["Oslo", "Oslo", "Rome", "Rome"],
...                    "plan": ["a", "b", "a", "b"]}, index=["w", "x", "y", "z"])
>>> session = DisambiguationSession(df, df.index, policy=CandidateMIPolicy())
>>> steps = session.run(StopRules(), true_row="y")
>>> [(s.col, s.observed_value) for s in steps], session.state.unique_row
([('city', 'Rome'), ('plan', 'a')], 'y')
>>> session.stop_reason
'Found unique row'
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from rowvoi import _candidates, _validate as _v
from rowvoi.core import CandidateState, FeatureSuggestion
from rowvoi.frame import (
    UnknownLabelError,
    check_frame,
    resolve_columns,
    resolve_costs,
    resolve_rows,
)
from rowvoi.keys import pairwise_coverage
from rowvoi.policies import MIPolicy

__all__ = ["StopRules", "SessionStep", "DisambiguationSession"]

#: Relative slack when comparing a cumulative cost with a budget, so that
#: costs summing to the budget up to rounding still fit.
_BUDGET_RTOL = 1e-9


def _opt_fraction(name: str, value: Any) -> float | None:
    return None if value is None else _v.fraction(name, value)


def _fits(total: float, budget: float) -> bool:
    return total <= budget * (1.0 + _BUDGET_RTOL) + 1e-12


@dataclass
class StopRules:
    """Conditions for stopping a disambiguation session.

    Attributes
    ----------
    max_steps : int or None
        Maximum number of columns to query (>= 0).
    cost_budget : float or None
        Maximum total cost to spend (finite, >= 0). Sessions never ask a
        column that would take the total past it.
    epsilon_posterior : float or None
        Stop when residual_uncertainty <= epsilon (in [0, 1]).
    epsilon_pairs : float or None
        Stop when the unresolved pair fraction <= epsilon (in [0, 1]): the
        share of pairs of the session's starting candidates that no observed
        column tells apart.
    target_unique : bool
        Stop when state.is_unique is True.

    Examples
    --------
    >>> from rowvoi import CandidateState
    >>> rules = StopRules(max_steps=3, cost_budget=10.0)
    >>> rules.should_stop(CandidateState.uniform(["a", "b"]), 1, 4.0)
    (False, '')
    >>> rules.should_stop(CandidateState.uniform(["a", "b"]), 3, 4.0)
    (True, 'Reached max steps (3)')
    >>> rules.should_stop(CandidateState.uniform(["a", "b"]), 1, 10.0)
    (True, 'Reached cost budget (10.0)')
    >>> rules.should_stop(CandidateState.uniform(["a"]), 0, 0.0)
    (True, 'Found unique row')
    >>> StopRules(epsilon_posterior=2)
    Traceback (most recent call last):
    ...
    ValueError: epsilon_posterior must be in [0, 1], got 2
    """

    max_steps: int | None = None
    cost_budget: float | None = None
    epsilon_posterior: float | None = None
    epsilon_pairs: float | None = None
    target_unique: bool = True

    def __post_init__(self) -> None:
        if self.max_steps is not None:
            _v.integer("max_steps", self.max_steps, 0)
        if self.cost_budget is not None:
            self.cost_budget = _v.real("cost_budget", self.cost_budget, low=0.0, finite=True)
        _opt_fraction("epsilon_posterior", self.epsilon_posterior)
        _opt_fraction("epsilon_pairs", self.epsilon_pairs)
        _v.flag("target_unique", self.target_unique)

    def should_stop(
        self,
        state: CandidateState,
        steps: int,
        total_cost: float,
        df: pd.DataFrame | None = None,
        *,
        rows: Sequence[Hashable] | None = None,
    ) -> tuple[bool, str]:
        """Check if any stopping condition is met.

        Parameters
        ----------
        state : CandidateState
            Current state. An empty state (no candidate left) always stops.
        steps : int
            Number of steps taken so far.
        total_cost : float
            Total cost incurred so far.
        df : DataFrame or None
            Data frame (needed for the epsilon_pairs check).
        rows : Sequence[Hashable] or None
            Rows whose pairs epsilon_pairs measures (a session passes its
            starting candidates); default ``state.candidate_rows``.

        Returns
        -------
        tuple[bool, str]
            (should_stop, reason) where reason explains why stopping ("" when
            not), in the reference package's words: "Reached max steps (5)",
            "Reached cost budget (10.0)", "Found unique row", "Residual
            uncertainty <= 0.1", "Pair coverage >= 0.95" (and "no candidate
            matches the observed values" for an empty state). Rules are
            checked in that order; the first that holds gives the reason.

        Raises
        ------
        ValueError
            If epsilon_pairs is set and df is None.
        """
        if len(state.candidate_rows) == 0:
            return True, "no candidate matches the observed values"
        if self.max_steps is not None and steps >= self.max_steps:
            return True, f"Reached max steps ({self.max_steps})"
        if self.cost_budget is not None and total_cost >= self.cost_budget * (1 - 1e-12):
            return True, f"Reached cost budget ({self.cost_budget})"
        if self.target_unique and state.is_unique:
            return True, "Found unique row"
        if (
            self.epsilon_posterior is not None
            and state.residual_uncertainty <= self.epsilon_posterior
        ):
            return True, f"Residual uncertainty <= {self.epsilon_posterior}"
        if self.epsilon_pairs is not None:
            if df is None:
                raise ValueError("epsilon_pairs needs df to measure pair coverage")
            base = list(state.candidate_rows) if rows is None else list(rows)
            cols = [c for c in state.observed_cols if c in df.columns]
            cov = pairwise_coverage(df, base, cols)
            if 1.0 - cov <= self.epsilon_pairs + 1e-12:
                # rounded so that epsilon 0.3 reads "0.7", not 0.7000000000000001
                return True, f"Pair coverage >= {round(1.0 - self.epsilon_pairs, 12)}"
        return False, ""


@dataclass
class SessionStep:
    """Record of a single step in a disambiguation session.

    Attributes
    ----------
    col : Hashable
        Column that was queried.
    observed_value : Any
        Value observed for the true row.
    suggestion : FeatureSuggestion
        The policy's suggestion that led to this query (for a column
        observed without asking the policy first, a suggestion with
        ``score`` 0 and ``debug={"source": "caller"}``).
    cost : float
        Cost of this query.
    cumulative_cost : float
        Total cost up to this point.
    entropy_before : float
        Entropy (bits) before observing this column.
    entropy_after : float
        Entropy (bits) after observing this column.
    pair_coverage_after : float or None
        Fraction of the pairs of the session's starting candidates told
        apart by the columns observed so far.
    """

    col: Hashable
    observed_value: Any
    suggestion: FeatureSuggestion
    cost: float
    cumulative_cost: float
    entropy_before: float
    entropy_after: float
    pair_coverage_after: float | None = None


def _make_prior(rows: list[Hashable], prior: Any) -> np.ndarray:
    n = len(rows)
    if prior is None:
        return np.full(n, 1.0 / n)
    if isinstance(prior, Mapping):
        pos = {r: i for i, r in enumerate(rows)}
        unknown = [k for k in prior if k not in pos]
        if unknown:
            raise ValueError(
                f"prior has entries for rows that are not candidates: {unknown[:5]!r}"
            )
        w = np.zeros(n)
        for k, v in prior.items():
            w[pos[k]] = _prior_weight(k, v)
    else:
        if isinstance(prior, (str, bytes)):
            raise TypeError("prior must be a mapping row -> weight or a sequence of weights")
        vals = list(prior)
        if len(vals) != n:
            raise ValueError(f"prior has {len(vals)} entries for {n} candidate rows")
        w = np.array([_prior_weight(i, v) for i, v in enumerate(vals)], dtype=np.float64)
    total = float(w.sum())
    if not total > 0 or not math.isfinite(total):
        raise ValueError("prior puts zero total mass on the candidate rows")
    return w / total


def _prior_weight(key: Any, v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise ValueError(f"prior weight of {key!r} must be a number, got {v!r}")
    f = float(v)
    if not math.isfinite(f) or f < 0:
        raise ValueError(f"prior weight of {key!r} is {f!r}: weights must be finite and >= 0")
    return f


class DisambiguationSession:
    """Interactive disambiguation session manager.

    Maintains CandidateState, queries a Policy for the next column, and
    updates with observations.

    Parameters
    ----------
    df : DataFrame
        The data table.
    candidate_rows : Sequence[Hashable]
        Initial candidate row labels (non-empty, each in ``df.index``).
    prior : Mapping[Hashable, float] or Sequence[float] or None
        Prior probabilities over candidates: a mapping row -> weight (rows
        not listed get 0) or one weight per candidate in order. Finite,
        non-negative, positive total; normalized. Default uniform.
    policy : Policy
        Policy for selecting next column.
    feature_costs : Mapping[Hashable, float] or None
        Cost of querying each column (default 1.0; finite and >= 0: a free
        column costs nothing and adds nothing to ``cumulative_cost``).

    Raises
    ------
    ValueError
        For an empty candidate set, unknown rows (also a KeyError), a bad
        prior or bad costs.

    Examples
    --------
    >>> import pandas as pd
    >>> from rowvoi.policies import CandidateMIPolicy
    >>> df = pd.DataFrame({"a": [0, 0, 1], "b": [0, 1, 1]})
    >>> session = DisambiguationSession(df, [0, 1, 2], policy=CandidateMIPolicy(),
    ...                                 prior={0: 2, 1: 1, 2: 1})
    >>> session.state.posterior.tolist()
    [0.5, 0.25, 0.25]
    >>> q = session.next_question()
    >>> q.col
    'b'
    >>> step = session.observe(q.col, 1)
    >>> session.state.candidate_rows, step.suggestion is q, session.steps_taken
    ([1, 2], True, 1)
    >>> session.reset()
    >>> session.state.candidate_rows, session.steps_taken
    ([0, 1, 2], 0)
    """

    def __init__(
        self,
        df: pd.DataFrame,
        candidate_rows: Sequence[Hashable],
        *,
        prior: Mapping[Hashable, float] | Sequence[float] | None = None,
        policy: Any,
        feature_costs: Mapping[Hashable, float] | None = None,
    ) -> None:
        check_frame(df)
        if not hasattr(policy, "suggest"):
            raise TypeError(f"policy must have a suggest() method, got {type(policy).__name__}")
        rows = resolve_rows(df, candidate_rows)
        if not rows:
            raise ValueError("candidate_rows is empty: nothing to disambiguate")
        _v.mapping("feature_costs", feature_costs, "column -> cost")
        all_cols = list(df.columns)
        costs = resolve_costs(df, feature_costs, all_cols)
        self.df = df
        self.policy = policy
        self.feature_costs: dict[Hashable, float] = {c: float(v) for c, v in zip(all_cols, costs)}
        self._prior_arg = prior
        self._initial = CandidateState(rows, _make_prior(rows, prior))
        self._start(self._initial)

    # ---------------------------------------------------------- internals
    def _start(self, state: CandidateState) -> None:
        self._state = state
        self._start_rows = list(state.candidate_rows)
        self._history: list[SessionStep] = []
        self._cumulative_cost = 0.0
        self._pending: FeatureSuggestion | None = None
        self._stop_reason = ""
        n = len(self._start_rows)
        self._start_pos: np.ndarray | None = None
        self._groups = np.zeros(n, dtype=np.int64)
        self._total_pairs = n * (n - 1) // 2
        self._unresolved = self._total_pairs

    def _model(self) -> Any:
        return self.policy.model if isinstance(self.policy, MIPolicy) else None

    def _cost(self, col: Hashable) -> float:
        return self.feature_costs.get(col, 1.0)

    def _refine_pairs(self, col: Hashable) -> float:
        """Split the starting candidates' groups by col; return pair coverage."""
        if self._total_pairs == 0:
            return 1.0
        if self._start_pos is None:
            self._start_pos = _candidates.positions(self.df, self._start_rows)
        codes = _candidates.encode_values(
            _candidates.column_at(self.df, col, self._start_pos), col
        ).codes.astype(np.int64)
        codes -= codes.min()
        key = self._groups * (int(codes.max()) + 1) + codes
        self._groups = pd.factorize(key)[0].astype(np.int64)
        counts = np.bincount(self._groups).astype(np.int64)
        self._unresolved = int((counts * (counts - 1) // 2).sum())
        return 1.0 - self._unresolved / self._total_pairs

    # ----------------------------------------------------------- public
    @property
    def state(self) -> CandidateState:
        """Current disambiguation state."""
        return self._state

    @property
    def history(self) -> list[SessionStep]:
        """History of all steps taken."""
        return self._history

    @property
    def cumulative_cost(self) -> float:
        """Total cost incurred so far."""
        return self._cumulative_cost

    @property
    def steps_taken(self) -> int:
        """Number of steps taken so far."""
        return len(self._history)

    @property
    def stop_reason(self) -> str:
        """Why the last :meth:`run` stopped ("" before any run)."""
        return self._stop_reason

    def next_question(self, candidate_cols: Sequence[Hashable] | None = None) -> FeatureSuggestion:
        """Ask the policy for the next best column.

        Does NOT update state yet - just returns the suggestion (remembered,
        so the step that observes its column records it).

        Parameters
        ----------
        candidate_cols : Sequence[Hashable] or None
            Columns to consider.

        Returns
        -------
        FeatureSuggestion
            Recommendation for next column (``col=None`` when nothing
            informative is left).

        Raises
        ------
        ValueError
            When no candidate is left (an observation matched none).
        """
        s = self.policy.suggest(self.df, self._state, candidate_cols)
        if not isinstance(s, FeatureSuggestion):
            raise TypeError(f"policy.suggest returned {type(s).__name__}, not a FeatureSuggestion")
        self._pending = s
        return s

    def observe(self, col: Hashable, value: Any) -> SessionStep:
        """Incorporate an observation into the state.

        Parameters
        ----------
        col : Hashable
            Column that was queried.
        value : Any
            Observed value. With a hard filter, a value no candidate has
            leaves the state empty (and :meth:`run` stops, saying so).

        Returns
        -------
        SessionStep
            Record of this step.

        Raises
        ------
        ValueError
            If col is not a column of df (also a KeyError).
        """
        (col,) = resolve_columns(self.df, [col], "col")
        pending = self._pending
        if pending is not None and pending.col is not None and pending.col == col:
            suggestion = pending
        else:
            suggestion = FeatureSuggestion(col, 0.0, debug={"source": "caller"})
        before = self._state.entropy
        model = self._model()
        if model is not None:
            new = model._observe(self.df, self._state, col, value)
        else:
            new = self._state.filter_candidates(self.df, col, value)
        cost = self._cost(col)
        self._cumulative_cost += cost
        coverage = self._refine_pairs(col)
        step = SessionStep(
            col, value, suggestion, cost, self._cumulative_cost, before, new.entropy, coverage
        )
        self._state = new
        self._history.append(step)
        self._pending = None
        return step

    def run(
        self,
        stop: StopRules,
        *,
        candidate_cols: Sequence[Hashable] | None = None,
        true_row: Hashable | None = None,
    ) -> list[SessionStep]:
        """Run an entire session until a stop rule triggers.

        Parameters
        ----------
        stop : StopRules
            Stopping criteria.
        candidate_cols : Sequence[Hashable] or None
            Columns to consider.
        true_row : Hashable or None
            The true row index (for simulation). If None, picks the highest
            posterior candidate.

        Returns
        -------
        list[SessionStep]
            Full sequence of steps taken (including any from earlier calls).
            :attr:`stop_reason` says why the run ended.

        Raises
        ------
        ValueError
            If true_row is not in df.index (also a KeyError).
        """
        if not isinstance(stop, StopRules):
            raise TypeError(f"stop must be a StopRules, got {type(stop).__name__}")
        cols_allowed = resolve_columns(self.df, candidate_cols, "candidate_cols")
        if true_row is None:
            if len(self._state.candidate_rows) == 0:
                self._stop_reason = "no candidate matches the observed values"
                return self._history
            true_row = self._state.candidate_rows[int(np.argmax(self._state.posterior))]
        elif true_row not in self.df.index:
            raise UnknownLabelError(f"true_row {true_row!r} is not in df.index")
        while True:
            done, reason = stop.should_stop(
                self._state,
                self.steps_taken,
                self._cumulative_cost,
                self.df,
                rows=self._start_rows,
            )
            if done:
                break
            if len(self._state.candidate_rows) == 1:
                # policies offer a zero-information column here; asking it buys nothing
                reason = "one candidate left: nothing to learn"
                break
            cols = [c for c in cols_allowed if c not in self._state.observed_cols]
            if stop.cost_budget is not None:
                fits = [
                    c
                    for c in cols
                    if _fits(self._cumulative_cost + self._cost(c), stop.cost_budget)
                ]
                if cols and not fits:
                    reason = (
                        f"no remaining column fits the cost budget "
                        f"({stop.cost_budget:g}; spent {self._cumulative_cost:g})"
                    )
                    break
                cols = fits
            if not cols:
                reason = "every allowed column has been asked"
                break
            s = self.next_question(cols)
            if s.col is None:
                reason = "no informative column left to ask"
                break
            if s.col not in cols:
                reason = f"the policy suggested {s.col!r}, which may not be asked now"
                break
            self.observe(s.col, self.df.at[true_row, s.col])
        self._stop_reason = reason
        return self._history

    def reset(self, candidate_rows: Sequence[Hashable] | None = None) -> None:
        """Reset the session to initial state.

        History, cost and stop reason are cleared.

        Parameters
        ----------
        candidate_rows : Sequence[Hashable] or None
            New candidate rows. If None, reset to the original candidates and
            prior. Otherwise start over with these rows, under the original
            prior restricted to them (uniform when there was none, or when
            it gives them no mass).
        """
        if candidate_rows is None:
            self._start(self._initial)
            return
        rows = resolve_rows(self.df, candidate_rows)
        if not rows:
            raise ValueError("candidate_rows is empty: nothing to disambiguate")
        post = np.full(len(rows), 1.0 / len(rows))
        if self._prior_arg is not None:
            base = dict(zip(self._initial.candidate_rows, self._initial.posterior))
            w = np.array([base.get(r, 0.0) for r in rows])
            if w.sum() > 0:
                post = w / w.sum()
        self._start(CandidateState(rows, post))
