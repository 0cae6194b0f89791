"""Adaptive retrieval: run the most informative probe until the answer is clear.

Sequential acquisition with retrieval probes instead of columns and latency
instead of patience: a probe (a BM25 query, a metadata lookup, a reranker
call) is predicted to return a given outcome for each candidate; running it
and comparing what came back updates the belief. Stop when the posterior is
sharp enough rather than at a fixed k.

Scoring and updating use one noise model: with probability ``1 - noise`` a
probe returns the outcome predicted for the right candidate, otherwise one of
the other predicted outcomes of that probe, uniformly. So the information a
probe is expected to give (``next_probe``) is exactly what ``observe`` will
realise on average. An outcome that no candidate predicted leaves the belief
unchanged when ``noise > 0`` (and is an error when ``noise == 0``), as in
:func:`rowvoi.rag.questions.observe_answer`.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from rowvoi import _validate as _v
from rowvoi.core import CandidateState, FeatureSuggestion
from rowvoi.rag.questions import (
    Answers,
    _costs,
    answer_frame,
    check_noise,
    information,
    likelihoods_of,
    normalize_prior,
)

__all__ = ["RetrievalSession", "ProbeStep"]


@dataclass
class ProbeStep:
    """Record of a single probe in a retrieval session.

    Attributes
    ----------
    probe : Hashable
        The probe that was run.
    outcome : Any
        What it returned (None when likelihoods were supplied directly).
    cost : float
        Cost of this probe.
    cumulative_cost : float
        Total cost through this step.
    entropy_before : float
        Posterior entropy in bits before the update.
    entropy_after : float
        Posterior entropy in bits after the update.
    expected_voi : float or None
        Information gain predicted for this probe before running it.
    """

    probe: Hashable
    outcome: Any
    cost: float
    cumulative_cost: float
    entropy_before: float
    entropy_after: float
    expected_voi: float | None = None

    @property
    def realized_gain(self) -> float:
        """Bits actually resolved, against expected_voi's prediction.

        Can be negative: a surprising outcome raises the entropy.
        """
        return self.entropy_before - self.entropy_after


class RetrievalSession:
    """Run probes against a candidate set until the answer is clear enough.

    Parameters
    ----------
    outcomes : DataFrame, Mapping or nested sequence
        Predicted outcome matrix: ``outcomes[i][p]`` is what probe p would
        return if candidate i were the right one. Same shapes as
        :func:`rowvoi.rag.questions.answer_frame`.
    runner : ProbeRunner or None
        Executes probes in :meth:`run`. Not needed for manual
        :meth:`next_probe` / :meth:`observe` driving.
    probes : Sequence[Hashable] or None
        Column labels, required when outcomes is a nested sequence.
    prior : Sequence[float] or None
        Per-candidate prior, typically the retrieval scores. Normalized
        internally; defaults to uniform.
    costs : Mapping[Hashable, float] or None
        Per-probe cost in whatever unit the budget is denominated (default
        1.0; finite and >= 0).
    noise : float
        Probability a probe returns something other than predicted, in
        [0, 1). Leave at 0 only if the outcome predictions are exact;
        retrieval rarely is.

    Raises
    ------
    ValueError
        If prior has the wrong length ("expected N prior weights"), or is
        negative or all-zero ("non-negative"); if noise is outside [0, 1);
        if costs name an unknown probe or are not finite and >= 0.

    Examples
    --------
    >>> outcomes = {"title": ["a", "a", "b"], "year": [1, 2, 2]}
    >>> session = RetrievalSession(outcomes, noise=0.0)
    >>> session.next_probe().col
    'title'
    >>> step = session.observe("title", "a")
    >>> session.observe("year", 2).entropy_after, session.best_candidate
    (0.0, 1)
    """

    # set by reset(), which __init__ calls
    _state: CandidateState
    _history: list[ProbeStep]
    _cum_cost: float

    def __init__(
        self,
        outcomes: Answers,
        *,
        runner: Any = None,
        probes: Sequence[Hashable] | None = None,
        prior: Sequence[float] | None = None,
        costs: Mapping[Hashable, float] | None = None,
        noise: float = 0.0,
    ):
        self._frame = answer_frame(outcomes, questions=probes)
        n = self._frame.shape[0]
        if n == 0:
            raise ValueError("the outcome matrix has no candidates")
        self.runner = runner
        self.noise = check_noise(noise)
        self._costs = _costs(self._frame, costs, "probe")
        self._cost_of: dict[Hashable, float] = dict(zip(self._frame.columns, self._costs.tolist()))
        self._initial = normalize_prior(prior, n) if prior is not None else np.full(n, 1.0 / n)
        self.stop_reason = ""
        self.reset()

    # ------------------------------------------------------------ accessors
    @property
    def outcomes(self) -> pd.DataFrame:
        """The predicted outcome matrix (candidates x probes)."""
        return self._frame

    @property
    def state(self) -> CandidateState:
        """Current belief over candidates (candidate_rows are positions)."""
        return self._state

    @property
    def history(self) -> list[ProbeStep]:
        """Probes run so far, in order."""
        return list(self._history)

    @property
    def cumulative_cost(self) -> float:
        """Total cost incurred so far."""
        return self._cum_cost

    @property
    def steps_taken(self) -> int:
        """Number of probes run so far."""
        return len(self._history)

    @property
    def best_candidate(self) -> int:
        """Index of the highest-posterior candidate (ties: the lowest index)."""
        return int(np.argmax(self._state.posterior))

    # ---------------------------------------------------------------- steps
    def next_probe(self) -> FeatureSuggestion:
        """Score the unrun probes and return the best one (MI per cost).

        Does not run it; call :meth:`observe` with the result. Ties go to the
        earlier probe.

        Returns
        -------
        FeatureSuggestion
            ``.col`` is the probe (None when every probe has been run, or
            none of those left can change the belief), ``.expected_voi`` its
            predicted gain in bits under the noise model.
        """
        ran = {step.probe for step in self._history}
        qs, mi, best, h = information(
            self._frame, self._state.posterior, noise=self.noise, costs=self._costs, exclude=ran
        )
        if best < 0:
            reason = (
                "every probe has been run" if not qs else "no probe left can change the belief"
            )
            return FeatureSuggestion(
                None,
                0.0,
                expected_voi=0.0,
                marginal_cost=None,
                debug={"entropy_before": h, "reason": reason},
            )
        col = qs[best]
        cost = self._cost_of[col]
        return FeatureSuggestion(
            col,
            _v.per_cost(float(mi[best]), cost),
            expected_voi=float(mi[best]),
            marginal_cost=cost,
            debug={"entropy_before": h, "values": {q: float(v) for q, v in zip(qs, mi)}},
        )

    def observe(
        self,
        probe: Hashable,
        outcome: Any = None,
        *,
        likelihoods: Sequence[float] | None = None,
        expected_voi: float | None = None,
    ) -> ProbeStep:
        """Fold a probe's result into the belief.

        Parameters
        ----------
        probe : Hashable
            The probe that was run (a column of the outcome matrix).
        outcome : Any
            What it returned, matched against the predicted outcome matrix
            under the noise model. Ignored when likelihoods is given.
        likelihoods : Sequence[float] or None
            P(result | candidate), for callers with their own scoring
            function (a similarity kernel, a reranker's scores). Bypasses
            the matrix.
        expected_voi : float or None
            Predicted gain, recorded for comparison against what was
            realized.

        Returns
        -------
        ProbeStep
            Record of this step.

        Raises
        ------
        KeyError
            If probe is not a column of the outcome matrix.
        ValueError
            If the outcome (or likelihood vector) is impossible under every
            candidate ("zero likelihood"; only possible with ``noise == 0``
            or supplied likelihoods), or likelihoods are malformed; the
            belief is unchanged.
        """
        if probe not in self._cost_of:
            raise KeyError(f"probe {probe!r} is not in the outcome matrix")
        before = self._state.entropy
        lik: Sequence[float] | np.ndarray
        if likelihoods is not None:
            lik = likelihoods
            recorded = None
        else:
            lik = likelihoods_of(self._frame, probe, outcome, self.noise)
            recorded = outcome
        new = self._state.reweight(lik, observed_col=probe, observed_value=recorded)
        cost = self._cost_of[probe]
        self._state = new
        self._cum_cost += cost
        step = ProbeStep(probe, recorded, cost, self._cum_cost, before, new.entropy, expected_voi)
        self._history.append(step)
        return step

    def run(self, stop: Any, *, runner: Any = None) -> list[ProbeStep]:
        """Probe repeatedly until a stop rule fires or probes run out.

        Each round asks :meth:`next_probe`, skips nothing, and never runs a
        probe whose cost would take the total past ``stop.cost_budget``. The
        reason the loop ended is kept in :attr:`stop_reason`.

        Parameters
        ----------
        stop : StopRules
            Stopping criteria. ``epsilon_posterior`` is the natural one here
            ("stop when one candidate holds 95% of the mass").
            ``epsilon_pairs`` also works, measured over the predicted outcome
            matrix.
        runner : ProbeRunner or None
            Overrides the runner given to the constructor.

        Returns
        -------
        list[ProbeStep]
            Every step taken this session, including any from earlier calls.

        Raises
        ------
        ValueError
            If no runner is available ("needs a ProbeRunner"), or a runner's
            outcome is impossible under every candidate (the candidate set is
            wrong; only possible with ``noise == 0``).
        """
        from rowvoi.session import StopRules

        if not isinstance(stop, StopRules):
            raise TypeError(f"stop must be a StopRules, got {type(stop).__name__}")
        runner = runner if runner is not None else self.runner
        if runner is None or not callable(getattr(runner, "run", None)):
            raise ValueError(
                "RetrievalSession.run() needs a ProbeRunner (an object with a "
                "run(probe) method); pass runner= here or to the constructor, "
                "or drive the session with next_probe() / observe()"
            )
        rows = list(range(self._frame.shape[0]))
        while True:
            done, reason = stop.should_stop(
                self._state, self.steps_taken, self._cum_cost, self._frame, rows=rows
            )
            if done:
                self.stop_reason = reason
                break
            suggestion = self.next_probe()
            if suggestion.col is None:
                self.stop_reason = suggestion.debug["reason"] if suggestion.debug else ""
                break
            cost = suggestion.marginal_cost or 0.0
            if stop.cost_budget is not None and self._cum_cost + cost > stop.cost_budget * (
                1 + 1e-12
            ):
                self.stop_reason = (
                    f"the next probe ({suggestion.col!r}, cost {cost:g}) "
                    f"would exceed the cost budget ({stop.cost_budget:g})"
                )
                break
            outcome = runner.run(suggestion.col)
            self.observe(suggestion.col, outcome, expected_voi=suggestion.expected_voi)
        return self.history

    def reset(self, *, prior: Sequence[float] | None = None) -> None:
        """Clear history and return to the initial (or a new) prior."""
        if prior is not None:
            self._initial = normalize_prior(prior, self._frame.shape[0])
        n = self._frame.shape[0]
        self._state = CandidateState(list(range(n)), self._initial.copy())
        self._history = []
        self._cum_cost = 0.0
        self.stop_reason = ""
