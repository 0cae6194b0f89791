"""Model-based value-of-information routines for rowvoi.

Sequential conditional selection: which column to acquire next, given what
has already been observed in the current case plus patterns learned from
historical data. This is prediction conditioned on evidence, not guessing.

:class:`RowVoiModel` learns per-column value frequencies and entropies from
a DataFrame (binning numeric columns into quantile bins when asked), then
uses a :class:`~rowvoi.core.CandidateState` -- which columns have been
observed and with what values -- to rank the remaining columns by expected
information gain about the true row. Unlike the model-free policies, it
carries a noise model, so an observation that disagrees with a candidate
reduces that candidate's probability rather than eliminating it.

The noise model: when a column is observed, the true row's own value is seen
with probability ``1 - noise``; otherwise one of the *other* values the
column takes among the candidates, uniformly. The information gain and the
posterior update use this same model, so a column on which every candidate
agrees carries zero information at any noise level, and a value that no
candidate has leaves a noisy model's posterior unchanged (surprising, not
disqualifying; an exact model filters every candidate out). See
``include/rowvoi/belief.h`` for the formulas; the gain of every column is
computed in one O(candidates) pass per column by the C engine.

Typical uses: interactive interviews (given the answers so far, which
question tells you most?), sequential experiments, adaptive diagnosis.

The design follows the active feature acquisition literature but is kept
deliberately small.

Examples
--------
>>> import pandas as pd
>>> from rowvoi import CandidateState
>>> from rowvoi.ml import RowVoiModel
>>> df = pd.DataFrame({"species": ["cat", "cat", "dog", "dog"],
...                    "weight": [3.1, 4.5, 20.0, 31.0],
...                    "colour": ["black", "white", "black", "white"]})
>>> model = RowVoiModel(noise=0.1).fit(df, discrete_cols=["species", "colour"], bins=2)
>>> s = model.suggest_next_feature(df, CandidateState.uniform(df.index))
>>> s.col, round(s.expected_voi, 3)
('species', 0.531)
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

import rowvoi._belief as _belief
from rowvoi import _candidates, _validate as _v
from rowvoi._suggest import check_state, columns_to_consider, nothing_to_learn
from rowvoi.core import CandidateState, FeatureSuggestion
from rowvoi.frame import UnknownLabelError, check_frame, resolve_columns, resolve_costs

__all__ = ["RowVoiModel"]

_NO_COLUMN_LEFT = "no column left to consider"


class RowVoiModel:
    """Model for computing expected value of information across features.

    Parameters
    ----------
    smoothing : float
        Pseudo-count added to every observed value of a column when its
        frequencies are estimated in :meth:`fit` (``frequencies_``,
        ``entropies_``), so rare values never get probability 0. Finite and
        >= 0. Default 1e-6.
    noise : float
        Probability that an observed value is not the true row's value but
        one of the column's other values among the candidates (uniformly).
        Must be in [0, 1); 0 means observations are exact (hard filtering).
    normalize_cols : bool
        When True, :meth:`suggest_next_feature` also reports the normalised
        MI -- the expected gain divided by the column's entropy
        H(column) from ``entropies_`` -- in ``debug["normalized_mi"]``. It is
        a diagnostic only: columns are always *ranked* by expected MI in
        bits (``objective="mi"``) or MI per unit cost
        (``objective="mi_over_cost"``), never by the normalised value.

    Attributes
    ----------
    columns_ : list
        Columns seen by :meth:`fit`.
    bin_edges_ : dict
        For each binned numeric column, its quantile bin edges (an array of
        ``n_bins + 1`` increasing floats). Bins are right-closed, (lo, hi];
        values at or below the lowest edge fall into the first bin and values
        above the highest into the last, so any number can be binned.
    frequencies_ : dict
        For each column, a Series mapping each value (or bin, as a
        ``pandas.Interval``) to its smoothed frequency. Missing values count
        as one value (the index holds NaN).
    entropies_ : dict
        For each column, the entropy in bits of ``frequencies_``.

    Raises
    ------
    ValueError
        If ``noise`` is outside [0, 1) or ``smoothing`` is negative or not
        finite.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"age": [23, 35, 47, 59, 71, 83], "sex": list("FMFMFM")})
    >>> model = RowVoiModel().fit(df, discrete_cols=["sex"], bins=3)
    >>> model.bin_edges_["age"].tolist()
    [23.0, 43.0, 63.0, 83.0]
    >>> round(model.entropies_["sex"], 6)
    1.0
    >>> RowVoiModel(noise=1.0)
    Traceback (most recent call last):
    ...
    ValueError: noise must be in [0, 1), got 1.0
    """

    def __init__(
        self, smoothing: float = 1e-6, noise: float = 0.0, normalize_cols: bool = True
    ) -> None:
        self.smoothing = _v.real("smoothing", smoothing, low=0.0, finite=True)
        self.noise = _v.probability("noise", noise)
        self.normalize_cols = _v.flag("normalize_cols", normalize_cols)
        self.columns_: list[Hashable] | None = None
        self.bin_edges_: dict[Hashable, np.ndarray] = {}
        self.frequencies_: dict[Hashable, pd.Series] = {}
        self.entropies_: dict[Hashable, float] = {}
        self._fit_frame: pd.DataFrame | None = None

    def __repr__(self) -> str:
        return (
            f"RowVoiModel(smoothing={self.smoothing!r}, noise={self.noise!r}, "
            f"normalize_cols={self.normalize_cols!r})"
        )

    # -------------------------------------------------------------- fit
    def fit(
        self, df: pd.DataFrame, discrete_cols: Sequence[Hashable] | None = None, bins: int = 3
    ) -> RowVoiModel:
        """Learn column frequencies and entropies (and bins) from a DataFrame.

        Parameters
        ----------
        df : DataFrame
            Historical data. Missing values are one value of their own.
        discrete_cols : Sequence[Hashable] or None
            Columns to treat as discrete. None (the default) treats every
            column as discrete. Otherwise numeric columns not listed are
            binned into ``bins`` quantile bins (fewer when quantiles
            coincide); non-numeric columns are always discrete.
        bins : int
            Number of quantile bins for the binned columns (>= 1).

        Returns
        -------
        RowVoiModel
            ``self``, fitted. A frame without rows or columns is accepted:
            its columns get empty frequency tables, and a model fitted on a
            frame without columns has nothing to suggest (``col=None``).

        Raises
        ------
        ValueError
            For duplicate column names, an unknown column in
            ``discrete_cols`` (also a KeyError), or ``bins`` < 1.

        Examples
        --------
        >>> import pandas as pd
        >>> df = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "y": ["a", "a", "a", "b"]})
        >>> m = RowVoiModel(smoothing=0).fit(df, discrete_cols=["y"], bins=2)
        >>> m.frequencies_["y"].to_dict()
        {'a': 0.75, 'b': 0.25}
        >>> [str(i) for i in m.frequencies_["x"].index]
        ['(1.0, 2.5]', '(2.5, 4.0]']
        """
        check_frame(df)
        if not df.columns.is_unique:
            raise ValueError("df has duplicate column names")
        bins = _v.integer("bins", bins, 1)
        columns: list[Hashable] = list(df.columns)
        discrete = set(
            columns
            if discrete_cols is None
            else resolve_columns(df, discrete_cols, "discrete_cols")
        )
        edges: dict[Hashable, np.ndarray] = {}
        freqs: dict[Hashable, pd.Series] = {}
        ents: dict[Hashable, float] = {}
        for col in columns:
            s = df[col]
            numeric = pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)
            if col not in discrete and numeric:
                e = self._quantile_edges(s, int(bins))
                edges[col] = e
                enc = _candidates.encode_bins(s, e[1:-1])
                labels = (
                    pd.IntervalIndex.from_breaks(e, closed="right")
                    if len(e) >= 2
                    else pd.Index([], dtype=object)
                )
                counts = np.bincount(enc.codes[enc.codes >= 0], minlength=len(labels))
                index = list(labels)
                vals = counts.astype(np.float64).tolist()
                n_missing = int((enc.codes < 0).sum())
                if n_missing:
                    index.append(np.nan)
                    vals.append(float(n_missing))
                counts_s = pd.Series(vals, index=pd.Index(index, dtype=object), dtype=float)
                counts_s = counts_s[counts_s > 0]
            else:
                counts_s = s.value_counts(dropna=False, sort=False).astype(float)
            total = counts_s.sum() + self.smoothing * len(counts_s)
            f = (counts_s + self.smoothing) / total
            freqs[col] = f
            ents[col] = float(sum(-p * math.log2(p) for p in f.to_numpy() if p > 0))
        self.columns_ = columns
        self.bin_edges_ = edges
        self.frequencies_ = freqs
        self.entropies_ = ents
        self._fit_frame = df  # a reference, for _expected_cond_entropy
        return self

    @staticmethod
    def _quantile_edges(s: pd.Series, bins: int) -> np.ndarray:
        vals = pd.to_numeric(s, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        vals = vals[np.isfinite(vals)]
        if vals.size == 0:
            return np.zeros(0)
        q = np.quantile(vals, np.linspace(0.0, 1.0, bins + 1))
        e = np.unique(q)
        if len(e) == 1:
            e = np.array([e[0], e[0]])
        return e

    # ------------------------------------- the reference model's internals
    # The reference package's test suite reaches into four private helpers of
    # its model.  They are kept here under the same names and meanings, each
    # computed with this model's noise model.

    @property
    def _freqs(self) -> dict[Hashable, dict[Any, float]]:
        """``frequencies_`` as plain dicts (column -> value -> frequency);
        empty before :meth:`fit`."""
        return {c: dict(s.items()) for c, s in self.frequencies_.items()}

    def _conditional_value_distribution(
        self, col: Hashable, candidate_values: Any, true_value: Any
    ) -> dict[Any, float]:
        """P(observed value | the true row's value is ``true_value``) over
        ``candidate_values``: ``1 - noise`` on the true value and the noise
        spread evenly over the other values (all on it when noise is 0).

        Raises
        ------
        ValueError
            When noise > 0 and ``col`` was not seen by :meth:`fit` ("not
            found in frequency table").
        """
        values = list(dict.fromkeys(candidate_values))
        if self.noise <= 0:
            return {v: 1.0 if v == true_value else 0.0 for v in values}
        if col not in self.frequencies_:
            raise ValueError(
                f"Column {col!r} not found in frequency table; fit() the model on a "
                "frame with this column"
            )
        others = len(values) - 1 if true_value in values else len(values)
        spread = self.noise / others if others else 0.0
        return {v: 1.0 - self.noise if v == true_value else spread for v in values}

    @staticmethod
    def _get_posterior_prob(state: CandidateState, row: Hashable) -> float:
        """The posterior of ``row`` in ``state`` (0.0 when it is not a candidate)."""
        for r, p in zip(state.candidate_rows, state.posterior.tolist()):
            if r == row:
                return float(p)
        return 0.0

    def _expected_cond_entropy(self, state: CandidateState, col: Hashable) -> float:
        """E[H(R | E, X_col)] in bits over the fitted frame: the posterior's
        entropy minus the expected gain of observing ``col`` under the noise
        model (what :meth:`suggest_next_feature` reports as
        ``debug["entropy_after"]``)."""
        self._check_fitted("_expected_cond_entropy()")
        self._check_known([col], "column")
        df = getattr(self, "_fit_frame", None)
        if df is None:  # unpickled from a version that kept no frame
            raise RuntimeError("RowVoiModel.fit() must be called again: no fitted frame is kept")
        pos = _candidates.positions(df, state)
        codes = _candidates.encode_columns_at(df, [col], pos, transform=self._transform)
        res = _belief.mutual_information(codes, None, state.posterior, self.noise)
        return max(0.0, float(res["h_rows"]) - float(res["mi"][0]))

    # --------------------------------------------------------- encoding
    def _check_fitted(self, what: str = "using the model") -> None:
        if self.columns_ is None:
            raise RuntimeError(
                f"RowVoiModel.fit() must be called before {what}: this model is not fitted yet"
            )

    def _check_known(self, cols: Sequence[Hashable], what: str) -> None:
        known = set(self.columns_ or ())
        unknown = [c for c in cols if c not in known]
        if unknown:
            raise UnknownLabelError(
                f"{what} {unknown[:5]!r} were not seen by fit(); refit the model on a "
                "frame with these columns"
            )

    def _transform(self, col: Hashable, s: pd.Series) -> _candidates.Encoded | None:
        e = self.bin_edges_.get(col)
        if e is None:
            return None
        return _candidates.encode_bins(s, e[1:-1])

    def _encode(self, df: pd.DataFrame, col: Hashable, pos: np.ndarray) -> _candidates.Encoded:
        s = _candidates.column_at(df, col, pos)
        enc = self._transform(col, s)
        return enc if enc is not None else _candidates.encode_values(s, col)

    def _observe(
        self, df: pd.DataFrame, state: CandidateState, col: Hashable, value: Any
    ) -> CandidateState:
        """The state after observing ``col == value`` under the model.

        noise == 0: a hard filter on the (binned) value (a value no
        candidate has leaves the empty state). noise > 0: the posterior is
        reweighted by the noise model's likelihood; a value that no candidate
        has is surprising, not disqualifying, and leaves the posterior as it
        was (the engine's ``rv_belief_likelihood``).
        """
        self._check_fitted()
        self._check_known([col], "column")
        pos = _candidates.positions(df, state)
        enc = self._encode(df, col, pos)
        code = enc.code_of(value)
        cols = state.observed_cols | {col}
        vals = {**state.observed_values, col: value}
        if self.noise == 0.0:
            if code is None:
                return CandidateState([], np.zeros(0), cols, vals)
            kept, post = _belief.filter_codes(enc.codes, state.posterior, code)
            if len(kept) == 0:
                return CandidateState([], np.zeros(0), cols, vals)
            rows = state.candidate_rows
            new = CandidateState([rows[i] for i in kept.tolist()], post, cols, vals)
            _candidates.cache_positions(new, df, pos[kept.astype(np.int64)])
            return new
        lik = _belief.likelihood(enc.codes, enc.observed_code(value), self.noise)
        return state.reweight(lik, observed_col=col, observed_value=value)

    # ---------------------------------------------------------- suggest
    def suggest_next_feature(
        self,
        df: pd.DataFrame,
        state: CandidateState,
        candidate_cols: Sequence[Hashable] | None = None,
        objective: Literal["mi", "mi_over_cost"] = "mi",
        feature_costs: Mapping[Hashable, float] | None = None,
    ) -> FeatureSuggestion | None:
        """Rank candidate columns by expected information gain; return the best.

        Each candidate column's expected gain I(R; Y_col | E) (bits) under the
        noise model is computed from the ``df`` given here, discretised with
        the bins learned by :meth:`fit` -- not from a copy kept at fit time.
        The expected-entropy computation is one pass over the candidates per
        column (linear, not quadratic).

        Ranking: by expected MI in bits (``objective="mi"``), or by MI per
        unit cost (``objective="mi_over_cost"``). ``normalize_cols`` does not
        change the ranking; it only adds ``debug["normalized_mi"]``.

        Parameters
        ----------
        df : DataFrame
            The data table (columns as seen by :meth:`fit`).
        state : CandidateState
            The current belief; its candidates are labels of ``df.index``.
        candidate_cols : Sequence[Hashable] or None
            Columns to consider. None means every column of ``df`` not yet in
            ``state.observed_cols`` (observed columns are always skipped).
        objective : {"mi", "mi_over_cost"}
            Ranking criterion, see above.
        feature_costs : Mapping[Hashable, float] or None
            Cost per column (finite and >= 0; a column left out costs 1.0).
            Required with "mi_over_cost", where every cost must be > 0 (the
            reference package's rule for this method: "feature costs must be
            positive"; :class:`rowvoi.policies.MIPolicy` accepts free
            columns and ranks them first). Reported as ``marginal_cost``
            either way.

        Returns
        -------
        FeatureSuggestion or None
            ``col``, ``score`` (MI or MI/cost), ``expected_voi`` (expected
            information gain in bits), ``marginal_cost`` and ``debug``
            (``entropy_before`` and ``entropy_after``, the expected entropy
            of the posterior after observing ``col``, both floats in bits;
            ``column_entropy`` among the candidates, ``noise``, and
            ``normalized_mi`` when ``normalize_cols``). With one candidate
            (nothing to learn) the first column to consider, at 0 bits.
            None when no column is left to consider (every column observed,
            or ``candidate_cols`` all observed), as in the reference
            package; ``col`` is None when several candidates remain and no
            column tells any of them apart.

        Raises
        ------
        RuntimeError
            If the model is not fitted ("RowVoiModel.fit() must be called").
        ValueError
            For an empty candidate set (when there are columns to consider),
            an unknown objective, "mi_over_cost" without ``feature_costs``,
            a cost that is negative or not finite, a zero cost with
            "mi_over_cost" ("feature costs must be positive"), or columns
            unknown to df or to the model (a KeyError as well).

        Examples
        --------
        >>> import pandas as pd
        >>> from rowvoi import CandidateState
        >>> df = pd.DataFrame({"a": [0, 0, 1, 1], "b": [0, 1, 2, 3]})
        >>> model = RowVoiModel().fit(df)
        >>> state = CandidateState.uniform(df.index)
        >>> s = model.suggest_next_feature(df, state)
        >>> s.col, s.expected_voi, s.debug["normalized_mi"]
        ('b', 2.0, 1.0)
        >>> model.suggest_next_feature(df, state, objective="mi_over_cost",
        ...                            feature_costs={"b": 4.0}).col
        'a'
        >>> s = model.suggest_next_feature(df, CandidateState.uniform([0]))
        >>> s.col, s.expected_voi
        ('a', 0.0)
        >>> done = CandidateState.uniform(df.index, observed_cols={"a", "b"})
        >>> model.suggest_next_feature(df, done) is None
        True
        """
        s = self._suggest(df, state, candidate_cols, objective, feature_costs, free_ok=False)
        left = s.col is not None or (s.debug or {}).get("reason") != _NO_COLUMN_LEFT
        return s if left else None

    def _suggest(
        self,
        df: pd.DataFrame,
        state: CandidateState,
        candidate_cols: Sequence[Hashable] | None,
        objective: str,
        feature_costs: Mapping[Hashable, float] | None,
        *,
        free_ok: bool,
    ) -> FeatureSuggestion:
        """:meth:`suggest_next_feature` always answering a FeatureSuggestion
        (``col=None`` when nothing is left), with free columns allowed under
        "mi_over_cost" when ``free_ok`` (for :class:`~rowvoi.policies.MIPolicy`)."""
        self._check_fitted("suggest_next_feature()")
        check_frame(df)
        check_state(state, allow_empty=True)
        _v.choice("objective", objective, ("mi", "mi_over_cost"))
        _v.mapping("feature_costs", feature_costs, "column -> cost")
        if objective == "mi_over_cost" and feature_costs is None:
            raise ValueError(
                "feature_costs must be provided for objective 'mi_over_cost' "
                "(or use objective='mi' to rank by bits alone)"
            )
        cols = columns_to_consider(df, state, candidate_cols)
        self._check_known(cols, "columns")
        if objective == "mi_over_cost" and not free_ok and feature_costs is not None:
            for col, v in feature_costs.items():
                if isinstance(v, numbers.Real) and not isinstance(v, bool) and not v > 0:
                    raise ValueError(
                        f"feature costs must be positive for objective 'mi_over_cost': "
                        f"{col!r} costs {v!r} (RowVoiModel.suggest_next_feature keeps the "
                        "reference rule; MIPolicy accepts free columns and takes them first)"
                    )
        costs = resolve_costs(df, feature_costs, cols, "feature")
        if not cols:
            return FeatureSuggestion(
                None,
                0.0,
                expected_voi=0.0,
                marginal_cost=None,
                debug={
                    "entropy_before": state.entropy,
                    "entropy_after": state.entropy,
                    "reason": _NO_COLUMN_LEFT,
                },
            )
        check_state(state)
        if len(state.candidate_rows) == 1:
            return nothing_to_learn(cols, costs, noise=self.noise, objective=objective)
        pos = _candidates.positions(df, state)
        codes = _candidates.encode_columns_at(df, cols, pos, transform=self._transform)
        res = _belief.mutual_information(
            codes,
            None,
            state.posterior,
            self.noise,
            costs if objective == "mi_over_cost" else None,
        )
        h = float(res["h_rows"])
        b = res["best"]
        if b < 0:
            return FeatureSuggestion(
                None,
                0.0,
                expected_voi=0.0,
                marginal_cost=None,
                debug={
                    "entropy_before": h,
                    "entropy_after": h,
                    "reason": "no column tells the candidates apart",
                },
            )
        col = cols[b]
        mi = float(res["mi"][b])
        cost = float(costs[b])
        debug: dict[str, Any] = {
            "entropy_before": h,
            "entropy_after": max(0.0, h - mi),
            "column_entropy": float(res["h_col"][b]),
            "noise": self.noise,
            "objective": objective,
        }
        if self.normalize_cols:
            hc = self.entropies_.get(col, 0.0)
            debug["normalized_mi"] = mi / hc if hc > 0 else 0.0
        score = _v.per_cost(mi, cost) if objective == "mi_over_cost" else mi
        return FeatureSuggestion(col, score, expected_voi=mi, marginal_cost=cost, debug=debug)

    # ------------------------------------------------------ simulation
    def run_acquisition(
        self,
        df: pd.DataFrame,
        true_row: Hashable,
        initial_state: CandidateState,
        candidate_cols: Sequence[Hashable] | None = None,
        stop_when_unique: bool = True,
        max_steps: int | None = None,
        objective: Literal["mi", "mi_over_cost"] = "mi",
        feature_costs: Mapping[Hashable, float] | None = None,
    ) -> list[FeatureSuggestion]:
        """Simulate a sequential acquisition session against a known true row.

        Repeatedly asks :meth:`suggest_next_feature`, reads the suggested
        column's value from ``true_row`` in ``df`` and updates the belief
        under the model (a hard filter when ``noise == 0``, a noise-model
        reweighting otherwise), until the belief is unique (when
        ``stop_when_unique``), ``max_steps`` columns were acquired, or
        nothing informative is left. Every column is acquired at most once,
        so the loop always ends.

        Parameters
        ----------
        df : DataFrame
            The data table.
        true_row : Hashable
            Label of the row to identify; must be one of the candidates.
        initial_state : CandidateState
            The starting belief (not modified).
        candidate_cols : Sequence[Hashable] or None
            Columns that may be acquired (default: all of df's).
        stop_when_unique : bool
            Stop as soon as ``state.is_unique``.
        max_steps : int or None
            At most this many acquisitions (>= 0).
        objective : {"mi", "mi_over_cost"}
            Passed to :meth:`suggest_next_feature`.
        feature_costs : Mapping[Hashable, float] or None
            Passed to :meth:`suggest_next_feature`.

        Returns
        -------
        list[FeatureSuggestion]
            The suggestion taken at each step, in order.

        Raises
        ------
        ValueError
            If ``true_row`` is not a candidate (KeyError too when it is not
            in ``df.index``), or ``max_steps`` is negative.

        Examples
        --------
        >>> import pandas as pd
        >>> from rowvoi import CandidateState
        >>> df = pd.DataFrame({"a": [0, 0, 1, 1], "b": [0, 1, 0, 1], "c": [0, 0, 0, 1]},
        ...                   index=["p", "q", "r", "s"])
        >>> model = RowVoiModel().fit(df)
        >>> steps = model.run_acquisition(df, "q", CandidateState.uniform(df.index))
        >>> [s.col for s in steps]
        ['a', 'b']
        """
        self._check_fitted("run_acquisition()")
        check_frame(df)
        if not isinstance(initial_state, CandidateState):
            raise TypeError(
                f"initial_state must be a CandidateState, got {type(initial_state).__name__}"
            )
        if true_row not in df.index:
            raise UnknownLabelError(f"true_row {true_row!r} is not in df.index")
        if true_row not in set(initial_state.candidate_rows):
            raise ValueError(f"true_row {true_row!r} is not one of the candidate rows")
        if max_steps is not None:
            max_steps = _v.integer("max_steps", max_steps, 0)
        state = CandidateState(
            list(initial_state.candidate_rows),
            initial_state.posterior.copy(),
            set(initial_state.observed_cols),
            dict(initial_state.observed_values),
        )
        history: list[FeatureSuggestion] = []
        while True:
            if stop_when_unique and state.is_unique:
                break
            if max_steps is not None and len(history) >= max_steps:
                break
            s = self.suggest_next_feature(
                df, state, candidate_cols, objective=objective, feature_costs=feature_costs
            )
            if s is None or s.col is None or not s.expected_voi:
                break
            state = self._observe(df, state, s.col, df.at[true_row, s.col])
            history.append(s)
        return history
