"""Core types: the belief over candidate rows, and a suggestion of what to ask.

:class:`CandidateState` is the current uncertainty over which of the
candidate rows is "the one": the rows, a posterior over them, and the
evidence seen so far. It is immutable in spirit: every update returns a new
state.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

import rowvoi._belief as _belief
from rowvoi import _candidates
from rowvoi.frame import check_frame, resolve_columns

__all__ = ["CandidateState", "FeatureSuggestion"]

#: A state counts as unique once one candidate holds more than 1 - this.
UNIQUE_TOLERANCE = 1e-5
#: How far from 1 a posterior's total may be (rounding drift) before it is refused.
POSTERIOR_SUM_TOLERANCE = 1e-6


@dataclass
class CandidateState:
    """Current uncertainty over which candidate row is "the one".

    Parameters
    ----------
    candidate_rows : Sequence[Hashable]
        Labels (DataFrame index values) of the rows still under consideration.
    posterior : numpy.ndarray
        Probability of each candidate, in ``candidate_rows`` order; finite,
        non-negative and summing to 1 within 1e-6 (the drift is divided
        out). Empty for an empty state.
    observed_cols : set
        Columns (or questions) observed so far.
    observed_values : Mapping
        What was observed for each of them.

    Examples
    --------
    >>> state = CandidateState.uniform(["r1", "r2", "r3", "r4"])
    >>> state.entropy
    2.0
    >>> state.is_unique, state.unique_row
    (False, None)
    >>> one = state.reweight([0.0, 1.0, 0.0, 0.0])
    >>> one.is_unique, one.unique_row
    (True, 'r2')

    Construction validates, so a state is never inconsistent:

    >>> CandidateState(["a", "b"], [0.5, 0.4])
    Traceback (most recent call last):
    ...
    ValueError: Posterior must sum to 1, got 0.9; normalise it (posterior / posterior.sum()) first

    Raises
    ------
    ValueError
        If the lengths differ ("Length mismatch"), or a non-empty posterior
        is not finite, has a negative entry or does not sum to 1.
    TypeError
        If candidate_rows is a string.
    """

    candidate_rows: Sequence[Hashable]
    posterior: np.ndarray
    observed_cols: set[Hashable] = field(default_factory=set)
    observed_values: Mapping[Hashable, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if isinstance(self.candidate_rows, (str, bytes)):
            raise TypeError("candidate_rows must be a sequence of labels, not a string")
        self.candidate_rows = list(self.candidate_rows)
        post = np.asarray(self.posterior, dtype=np.float64)
        if post.ndim != 1:
            raise ValueError(f"posterior must be one-dimensional, got shape {post.shape}")
        if len(post) != len(self.candidate_rows):
            raise ValueError(
                f"Length mismatch: {len(self.candidate_rows)} candidates but the posterior "
                f"has {len(post)} entries"
            )
        if len(post):
            if not np.all(np.isfinite(post)) or np.any(post < 0):
                raise ValueError("posterior must be finite and non-negative")
            total = float(post.sum())
            if abs(total - 1.0) > POSTERIOR_SUM_TOLERANCE:
                raise ValueError(
                    f"Posterior must sum to 1, got {total!r}; normalise it "
                    "(posterior / posterior.sum()) first"
                )
            if total != 1.0:  # rounding drift within the tolerance: make it exact
                post = post / total
        self.posterior = post
        self.observed_cols = set(self.observed_cols or ())
        self.observed_values = dict(self.observed_values or {})

    # ----------------------------------------------------------- summaries
    @property
    def entropy(self) -> float:
        """Shannon entropy of the posterior, in bits (0 for an empty state)."""
        p = self.posterior[self.posterior > 0]
        if p.size == 0:
            return 0.0
        return float(max(0.0, -np.sum(p * np.log2(p))))

    @property
    def max_posterior(self) -> float:
        """Largest posterior probability, max_r p(r | E) (0 for an empty state)."""
        return float(self.posterior.max()) if self.posterior.size else 0.0

    @property
    def residual_uncertainty(self) -> float:
        """1 - max_posterior."""
        return 1.0 - self.max_posterior

    @property
    def is_unique(self) -> bool:
        """One candidate left, or one holding more than 1 - 1e-5 of the mass."""
        n = len(self.candidate_rows)
        return n == 1 or (n > 1 and self.max_posterior > 1.0 - UNIQUE_TOLERANCE)

    @property
    def unique_row(self) -> Hashable | None:
        """The identified row when :attr:`is_unique`, else None."""
        if not self.is_unique:
            return None
        return self.candidate_rows[int(np.argmax(self.posterior))]

    # ------------------------------------------------------------ creation
    @classmethod
    def uniform(
        cls,
        candidate_rows: Sequence[Hashable],
        observed_cols: set[Hashable] | None = None,
        observed_values: Mapping[Hashable, Any] | None = None,
    ) -> CandidateState:
        """A state with a uniform posterior over the candidates.

        >>> CandidateState.uniform(range(4)).posterior.tolist()
        [0.25, 0.25, 0.25, 0.25]
        """
        rows = list(candidate_rows)
        n = len(rows)
        post = np.full(n, 1.0 / n) if n else np.zeros(0)
        return cls(rows, post, set(observed_cols or ()), dict(observed_values or {}))

    # ------------------------------------------------------------- updates
    def filter_candidates(self, df: pd.DataFrame, col: Hashable, value: Any) -> CandidateState:
        """Filter candidates to those matching the observed value.

        Rows are looked up by label in ``df``. A missing ``value`` (NaN,
        None, pd.NA, NaT) matches missing cells. The posterior of the
        survivors is renormalised; when no candidate matches (or the ones
        that match hold no posterior mass) the result is the empty state.

        Parameters
        ----------
        df : DataFrame
            The data frame containing candidate rows.
        col : Hashable
            The column that was observed.
        value : Any
            The observed value.

        Returns
        -------
        CandidateState
            New state with filtered candidates and renormalized posterior.

        Examples
        --------
        >>> import pandas as pd
        >>> df = pd.DataFrame({"city": ["Oslo", "Rome", "Oslo"]}, index=["a", "b", "c"])
        >>> s = CandidateState.uniform(["a", "b", "c"]).filter_candidates(df, "city", "Oslo")
        >>> s.candidate_rows, s.posterior.tolist()
        (['a', 'c'], [0.5, 0.5])
        """
        check_frame(df)
        resolve_columns(df, [col], "col")
        cols = self.observed_cols | {col}
        vals = {**self.observed_values, col: value}
        pos = _candidates.positions(df, self)
        enc = _candidates.encode_values(_candidates.column_at(df, col, pos), col)
        code = enc.code_of(value)
        if code is None:  # no cell of this column can equal value
            return CandidateState([], np.zeros(0), cols, vals)
        kept, post = _belief.filter_codes(enc.codes, self.posterior, code)
        if len(kept) == 0:
            return CandidateState([], np.zeros(0), cols, vals)
        rows = self.candidate_rows
        new = CandidateState([rows[i] for i in kept.tolist()], post, cols, vals)
        _candidates.cache_positions(new, df, pos[kept.astype(np.int64)])
        return new

    def reweight(
        self,
        likelihoods: Sequence[float] | np.ndarray,
        *,
        observed_col: Hashable | None = None,
        observed_value: Any = None,
    ) -> CandidateState:
        """Apply soft evidence: multiply the posterior by a likelihood vector.

        The soft counterpart to :meth:`filter_candidates`. Where that method
        drops every candidate whose value differs, this one only reweights, so
        a candidate is never eliminated on evidence that is merely
        improbable. Candidates are all retained (zero-likelihood ones get
        posterior 0), so positional alignment with ``likelihoods`` holds
        across successive updates.

        Parameters
        ----------
        likelihoods : Sequence[float] or ndarray
            P(evidence | candidate) for each candidate, in candidate_rows
            order. Need not be normalized, but must be finite and
            non-negative.
        observed_col : Hashable or None
            Column or question this evidence came from, recorded in
            observed_cols.
        observed_value : Any
            The observed value, recorded in observed_values.

        Returns
        -------
        CandidateState
            New state with the renormalized posterior.

        Raises
        ------
        ValueError
            If likelihoods has the wrong length ("Expected N likelihoods"),
            contains a negative or non-finite value, or drives the total
            posterior mass to zero (a :class:`rowvoi.errors.InfeasibleError`
            whose message says "zero likelihood": the evidence is
            impossible under every candidate, so the candidate set is wrong,
            not merely narrowed).

        Examples
        --------
        >>> s = CandidateState.uniform(["a", "b"]).reweight([3.0, 1.0], observed_col="q")
        >>> s.posterior.tolist(), s.observed_cols
        ([0.75, 0.25], {'q'})
        """
        try:
            lik = np.asarray(likelihoods, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"likelihoods must be a sequence of numbers: {exc}") from None
        if lik.ndim != 1 or len(lik) != len(self.candidate_rows):
            raise ValueError(
                f"Expected {len(self.candidate_rows)} likelihoods (one per candidate), "
                f"got {lik.size}"
            )
        # The engine checks every entry (finite, >= 0) and the total mass;
        # its errors are ValueErrors naming "likelihoods[i]".
        post = _belief.reweight(self.posterior, lik)
        cols = set(self.observed_cols)
        vals = dict(self.observed_values)
        if observed_col is not None:
            cols.add(observed_col)
            vals[observed_col] = observed_value
        new = CandidateState(list(self.candidate_rows), post, cols, vals)
        pos = self.__dict__.get("_rv_positions")
        if pos is not None:  # same candidates, same positions
            new.__dict__["_rv_positions"] = (pos[0], new.candidate_rows, pos[2], pos[3])
        return new


@dataclass
class FeatureSuggestion:
    """A recommendation of which column to query next.

    Attributes
    ----------
    col : Hashable or None
        The column name suggested to query next (None: nothing left to ask).
    score : float
        Raw score used to rank columns (e.g., MI, coverage gain).
    expected_voi : float or None
        Expected value of information in bits.
    marginal_cost : float or None
        Cost of querying this column.
    debug : dict or None
        Additional debugging information.

    Examples
    --------
    >>> FeatureSuggestion("age", score=1.5, marginal_cost=3.0).cost_adjusted_score
    0.5
    """

    col: Hashable | None
    score: float
    expected_voi: float | None = None
    marginal_cost: float | None = None
    debug: dict[str, Any] | None = None

    @property
    def cost_adjusted_score(self) -> float:
        """Score divided by cost (if cost is available and positive)."""
        if self.marginal_cost is not None and self.marginal_cost > 0:
            return self.score / self.marginal_cost
        return self.score
