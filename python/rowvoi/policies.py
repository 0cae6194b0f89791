"""Policy abstractions for selecting the next best column.

This module defines the :class:`Policy` protocol and concrete
implementations deciding which column to query next during disambiguation.
Every policy scores all candidate columns in one call into the C engine
(``rowvoi._belief``, GIL released), in O(candidates) time per column.

Conventions shared by every policy here:

* Rows are labels (the DataFrame index); ``state.candidate_rows`` must all
  be in ``df.index``.
* Columns already in ``state.observed_cols`` are never suggested again.
* One candidate left (nothing to learn): ``suggest`` returns the first
  unobserved column with ``score`` and ``expected_voi`` 0.0, as the
  reference package did; ``col=None`` only when no column is left.
* Several candidates but no column that tells any of them apart:
  ``suggest`` returns ``col=None`` rather than a zero-information column.
* Ties go to the column that comes first (in ``candidate_cols``, or in
  ``df.columns``); scores equal up to 1e-12 (relative) count as ties.
* An empty candidate set is a ``ValueError``: there is nothing to
  disambiguate, which usually means an earlier observation matched no row.

Examples
--------
>>> import pandas as pd
>>> from rowvoi import CandidateState
>>> from rowvoi.policies import CandidateMIPolicy
>>> df = pd.DataFrame({"city": ["Oslo", "Oslo", "Rome", "Rome"],
...                    "plan": ["a", "b", "c", "d"]})
>>> state = CandidateState.uniform(df.index)
>>> CandidateMIPolicy().suggest(df, state).col
'plan'
>>> CandidateMIPolicy(costs={"plan": 3.0}).suggest(df, state).col
'city'
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

import numpy as np
import pandas as pd

import rowvoi._belief as _belief
import rowvoi._setcover as _setcover
from rowvoi import _candidates, _validate as _v
from rowvoi._suggest import (
    best_index,
    check_state,
    columns_to_consider,
    no_column,
    nothing_to_learn,
)
from rowvoi.core import CandidateState, FeatureSuggestion
from rowvoi.errors import RangeError
from rowvoi.frame import check_frame, resolve_columns, resolve_costs
from rowvoi.keys import MAX_EXPLICIT_PAIRS

if TYPE_CHECKING:
    from rowvoi.ml import RowVoiModel

__all__ = ["Policy", "GreedyCoveragePolicy", "MIPolicy", "CandidateMIPolicy", "RandomPolicy"]


@runtime_checkable
class Policy(Protocol):
    """A strategy for picking the next column given the current state.

    Any object with this ``suggest`` method is a policy; sessions and the
    evaluation tools accept it.

    Examples
    --------
    >>> isinstance(CandidateMIPolicy(), Policy)
    True
    """

    def suggest(
        self,
        df: pd.DataFrame,
        state: CandidateState,
        candidate_cols: Sequence[Hashable] | None = None,
    ) -> FeatureSuggestion:
        """Suggest the next best column to query.

        Parameters
        ----------
        df : DataFrame
            The data table.
        state : CandidateState
            Current disambiguation state.
        candidate_cols : Sequence[Hashable] or None
            Columns to consider. If None, consider all columns.

        Returns
        -------
        FeatureSuggestion
            Recommendation for next column to query (``col=None`` when
            nothing informative is left).
        """
        ...


# ------------------------------------------------------------- helpers
def _nonnegative(codes: np.ndarray) -> np.ndarray:
    """Codes with every row remapped onto 0..k-1 where any code is negative
    (the set cover engine wants non-negative codes)."""
    if codes.size == 0 or codes.min() >= 0:
        return codes
    out: np.ndarray = codes.copy()
    for j in range(len(out)):
        if out[j].min() < 0:
            out[j] = np.unique(out[j], return_inverse=True)[1].reshape(-1)
    return out


def _positive_candidates(df: pd.DataFrame, state: CandidateState) -> tuple[np.ndarray, np.ndarray]:
    """Positions and weights of the candidates that still have mass."""
    pos = _candidates.positions(df, state)
    post = state.posterior
    if (post > 0).all():
        return pos, post
    keep = post > 0
    return pos[keep], post[keep]


# --------------------------------------------------------- coverage policy
@dataclass
class GreedyCoveragePolicy:
    """Stateless policy: choose column that maximizes pairwise separation.

    Can be used for "next best column" in deterministic mode. Only
    candidates with positive posterior count; a pair counts as covered once
    an observed column (one of ``state.observed_cols`` that is a column of
    ``df``) tells its two rows apart.

    Attributes
    ----------
    costs : Mapping[Hashable, float] or None
        Cost of querying each column (default 1.0; finite and >= 0).
        Columns are ranked by gain per unit cost; a free column (cost 0)
        that separates something ranks first (``score`` is then inf).
    objective : {"pairs", "entropy"}
        - "pairs": maximize newly covered pairs
        - "entropy": maximize entropy reduction -- the true expected drop
          in the posterior's entropy, H(R|E) - E_x[H(R|E, X=x)], in bits,
          under the current (possibly non-uniform) posterior
    weighting : {"uniform", "pair_idf"}
        - "uniform": all pairs weighted equally
        - "pair_idf": weight hard-to-separate pairs more: a pair that k of
          the considered columns separate weighs 1/k ("pairs" objective
          only; needs the explicit pair universe, at most
          :data:`rowvoi.keys.MAX_EXPLICIT_PAIRS` pairs)

    Examples
    --------
    >>> import pandas as pd
    >>> from rowvoi import CandidateState
    >>> df = pd.DataFrame({"a": [1, 0, 0, 0], "b": [0, 0, 1, 1]})
    >>> state = CandidateState.uniform(df.index)
    >>> s = GreedyCoveragePolicy().suggest(df, state)
    >>> s.col, s.score, s.debug["newly_covered_pairs"]
    ('b', 4.0, 4)

    The entropy objective weighs the posterior, not group sizes: when row 0
    is already the likely one, checking it first is worth more.

    >>> skewed = CandidateState(list(df.index), [0.7, 0.1, 0.1, 0.1])
    >>> s = GreedyCoveragePolicy(objective="entropy").suggest(df, skewed)
    >>> s.col, round(s.score, 4)
    ('a', 0.8813)
    """

    costs: Mapping[Hashable, float] | None = None
    objective: Literal["pairs", "entropy"] = "pairs"
    weighting: Literal["uniform", "pair_idf"] = "uniform"

    def __post_init__(self) -> None:
        _v.choice("objective", self.objective, ("pairs", "entropy"))
        _v.choice("weighting", self.weighting, ("uniform", "pair_idf"))
        if self.objective == "entropy" and self.weighting != "uniform":
            raise ValueError("objective='entropy' takes no pair weights; use weighting='uniform'")
        _v.mapping("costs", self.costs, "column -> cost")

    def suggest(
        self,
        df: pd.DataFrame,
        state: CandidateState,
        candidate_cols: Sequence[Hashable] | None = None,
    ) -> FeatureSuggestion:
        """Suggest column with best coverage gain (per unit cost).

        Parameters
        ----------
        df : DataFrame
            The data table.
        state : CandidateState
            Current disambiguation state.
        candidate_cols : Sequence[Hashable] or None
            Columns to consider (default: all columns of df); observed
            columns are skipped.

        Returns
        -------
        FeatureSuggestion
            ``score`` is the gain per cost (pairs, weighted pairs or bits),
            ``expected_voi`` the column's information gain in bits;
            ``debug`` has ``newly_covered_pairs`` and ``total_pairs`` (pairs
            still unresolved before this column). ``col`` is None when no
            column separates a remaining pair (see the module notes for a
            single candidate).
        """
        check_frame(df)
        check_state(state)
        cols = columns_to_consider(df, state, candidate_cols)
        costs = resolve_costs(df, self.costs, cols)
        if len(state.candidate_rows) == 1:
            return nothing_to_learn(cols, costs, total_pairs=0, newly_covered_pairs=0)
        pos, post = _positive_candidates(df, state)
        h = state.entropy
        n = len(pos)
        if not cols or n < 2:
            return no_column(h, total_pairs=0)
        codes = _candidates.encode_columns_at(df, cols, pos)
        res = _belief.mutual_information(codes, None, post)
        mi = res["mi"]
        observed = [c for c in state.observed_cols if c in df.columns]
        if observed:
            obs_codes = _candidates.encode_columns_at(df, observed, pos)
            split = bool(
                (_belief.mutual_information(obs_codes, None, np.ones(n))["n_values"] > 1).any()
            )
        else:
            obs_codes, split = None, False
        n_pairs = n * (n - 1) // 2
        if self.objective == "entropy":
            gains = mi
            newly = res["pairs"].astype(np.int64)
            unresolved = n_pairs
            if obs_codes is not None and split:
                newly, unresolved = self._newly_unresolved(codes, obs_codes)
            best = best_index(gains, costs, _belief.MIN_GAIN)
        elif self.weighting == "uniform":
            if obs_codes is not None and split:
                newly, unresolved = self._newly_unresolved(codes, obs_codes)
            else:
                newly, unresolved = res["pairs"].astype(np.int64), n_pairs
            gains = newly.astype(np.float64)
            best = best_index(gains, costs, 0.5)
        else:
            gains, newly, unresolved = self._idf_gains(codes, obs_codes, costs, n_pairs)
            best = best_index(gains, costs, 0.0)
        if best < 0:
            return no_column(h, total_pairs=int(unresolved))
        c = float(costs[best])
        return FeatureSuggestion(
            cols[best],
            _v.per_cost(float(gains[best]), c),
            expected_voi=float(mi[best]),
            marginal_cost=c,
            debug={
                "objective": self.objective,
                "weighting": self.weighting,
                "gain": float(gains[best]),
                "newly_covered_pairs": int(newly[best]),
                "total_pairs": int(unresolved),
                "entropy_before": h,
            },
        )

    @staticmethod
    def _newly_unresolved(codes: np.ndarray, obs_codes: np.ndarray) -> tuple[np.ndarray, int]:
        """Pairs unresolved by the observed columns that each column resolves."""
        k = len(obs_codes)
        obs_codes = _nonnegative(obs_codes)
        both = np.concatenate([obs_codes, _nonnegative(codes)])
        base = int(_setcover.keys_unresolved(obs_codes, np.arange(k, dtype=np.uint32)))
        newly = np.empty(len(codes), dtype=np.int64)
        sel = np.arange(k + 1, dtype=np.uint32)
        for j in range(len(codes)):
            sel[k] = k + j
            newly[j] = base - int(_setcover.keys_unresolved(both, sel))
        return newly, base

    @staticmethod
    def _idf_gains(
        codes: np.ndarray, obs_codes: np.ndarray | None, costs: np.ndarray, n_pairs: int
    ) -> tuple[np.ndarray, np.ndarray, int]:
        if n_pairs > MAX_EXPLICIT_PAIRS:
            raise RangeError(
                f"weighting='pair_idf' needs the explicit universe of row pairs: "
                f"{n_pairs} pairs exceed the limit of {MAX_EXPLICIT_PAIRS} "
                "(rowvoi.keys.MAX_EXPLICIT_PAIRS); use weighting='uniform'"
            )
        engine = _setcover.CoverProblem.from_codes(_nonnegative(codes), costs)
        counts = engine.element_counts().astype(np.float64)
        weights = np.where(counts > 0, 1.0 / np.maximum(counts, 1.0), 0.0)
        open_pairs = np.ones(n_pairs, dtype=bool)
        if obs_codes is not None:
            obs = _setcover.CoverProblem.from_codes(_nonnegative(obs_codes))
            _, done = obs.covered(np.arange(len(obs_codes), dtype=np.uint32), True)
            open_pairs = ~done
            weights = np.where(open_pairs, weights, 0.0)
        gains = np.empty(len(codes))
        newly = np.empty(len(codes), dtype=np.int64)
        for j in range(len(codes)):
            _, mask = engine.covered(np.array([j], dtype=np.uint32), True)
            gains[j] = float(weights[mask].sum())
            newly[j] = int((mask & open_pairs).sum())
        return gains, newly, int(open_pairs.sum())


# ----------------------------------------------------------- model policy
@dataclass
class MIPolicy:
    """Policy that uses mutual information from a RowVoiModel.

    Attributes
    ----------
    model : RowVoiModel
        The trained model for computing MI.
    objective : {"mi", "mi_over_cost"}
        - "mi": raw mutual information
        - "mi_over_cost": MI divided by feature cost
    feature_costs : Mapping[Hashable, float] or None
        Cost of querying each feature (default 1.0; finite and >= 0). A free
        feature (cost 0) that tells candidates apart is infinitely good
        value under "mi_over_cost" and is suggested first (the most
        informative free one first).

    Examples
    --------
    >>> import pandas as pd
    >>> from rowvoi import CandidateState
    >>> from rowvoi.ml import RowVoiModel
    >>> df = pd.DataFrame({"a": [0, 0, 1, 1], "b": [0, 1, 2, 3]})
    >>> model = RowVoiModel().fit(df)
    >>> state = CandidateState.uniform(df.index)
    >>> MIPolicy(model).suggest(df, state).col
    'b'
    >>> MIPolicy(model, feature_costs={"b": 4.0}).suggest(df, state).col
    'a'
    """

    model: RowVoiModel
    objective: Literal["mi", "mi_over_cost"] = "mi_over_cost"
    feature_costs: Mapping[Hashable, float] | None = None

    def __post_init__(self) -> None:
        _v.choice("objective", self.objective, ("mi", "mi_over_cost"))
        if not hasattr(self.model, "suggest_next_feature"):
            raise TypeError(f"model must be a RowVoiModel, got {type(self.model).__name__}")
        _v.mapping("feature_costs", self.feature_costs, "column -> cost")

    def suggest(
        self,
        df: pd.DataFrame,
        state: CandidateState,
        candidate_cols: Sequence[Hashable] | None = None,
    ) -> FeatureSuggestion:
        """Use the model to suggest the next feature.

        The objective and costs are forwarded to the model, so cost affects
        which column is chosen. Rescaling the winner's score afterwards
        would leave the choice itself made on raw mutual information.

        Parameters
        ----------
        df : DataFrame
            The data table.
        state : CandidateState
            Current disambiguation state.
        candidate_cols : Sequence[Hashable] or None
            Columns to consider. If None, consider all columns.

        Returns
        -------
        FeatureSuggestion
            Recommendation for the next column. ``col`` is None when the
            model has nothing left to suggest (see
            :meth:`rowvoi.ml.RowVoiModel.suggest_next_feature`).
        """
        check_state(state)
        # Without costs every column costs 1.0, so MI per cost is MI: the
        # model asks for costs only when "mi_over_cost" has some to use.
        objective = self.objective if self.feature_costs is not None else "mi"
        if hasattr(self.model, "_suggest"):  # a RowVoiModel (free columns allowed)
            return self.model._suggest(
                df, state, candidate_cols, objective, self.feature_costs, free_ok=True
            )
        s = self.model.suggest_next_feature(
            df, state, candidate_cols, objective=objective, feature_costs=self.feature_costs
        )
        return s if s is not None else FeatureSuggestion(None, 0.0, expected_voi=0.0)


# ------------------------------------------------------- model-free MI
@dataclass
class CandidateMIPolicy:
    """Policy using local mutual information on candidate set only.

    This policy doesn't require a trained model -- it computes MI directly
    from the candidate rows, exactly: I(R; X_col | E) = H(R|E) -
    E_x[H(R|E, X_col=x)] in bits, with observations assumed exact.

    Attributes
    ----------
    normalize : bool
        Whether to normalize MI by the maximum it can reach, H(R|E) (the
        posterior's entropy): ``score`` is then the fraction of the
        remaining uncertainty a column is expected to resolve. It does not
        change which column is chosen.
    costs : Mapping[Hashable, float] or None
        Cost of querying each column (default 1.0; finite and >= 0). Columns
        are ranked by MI per unit cost.

    Examples
    --------
    >>> import pandas as pd
    >>> from rowvoi import CandidateState
    >>> df = pd.DataFrame({"a": [0, 0, 1, 1], "b": [0, 1, 2, 2]})
    >>> state = CandidateState.uniform(df.index)
    >>> policy = CandidateMIPolicy(normalize=True)
    >>> s = policy.suggest(df, state)
    >>> s.col, s.expected_voi, s.score
    ('b', 1.5, 0.75)
    >>> policy.compute_mi(df, state, "a")
    1.0
    """

    normalize: bool = False
    costs: Mapping[Hashable, float] | None = None

    def __post_init__(self) -> None:
        _v.flag("normalize", self.normalize)
        _v.mapping("costs", self.costs, "column -> cost")

    def suggest(
        self,
        df: pd.DataFrame,
        state: CandidateState,
        candidate_cols: Sequence[Hashable] | None = None,
    ) -> FeatureSuggestion:
        """Compute MI for each column and suggest the best.

        Parameters
        ----------
        df : DataFrame
            The data table.
        state : CandidateState
            Current disambiguation state.
        candidate_cols : Sequence[Hashable] or None
            Columns to consider (default: all columns of df); observed
            columns are skipped.

        Returns
        -------
        FeatureSuggestion
            ``expected_voi`` is the MI in bits, ``score`` the MI per cost
            (divided by H(R|E) when ``normalize``); ``debug`` has
            ``entropy_before``, ``entropy_after`` (expected, bits),
            ``n_values`` and ``column_entropy``. With one candidate, the
            first unobserved column at 0 bits; ``col`` is None when no
            column is left, or none is informative among several candidates.

        Examples
        --------
        >>> import pandas as pd
        >>> from rowvoi import CandidateState
        >>> df = pd.DataFrame({"a": [0, 1], "b": [2, 3]})
        >>> one = CandidateState.uniform([1], observed_cols={"a"})
        >>> s = CandidateMIPolicy().suggest(df, one)
        >>> s.col, s.expected_voi
        ('b', 0.0)
        """
        check_frame(df)
        check_state(state)
        cols = columns_to_consider(df, state, candidate_cols)
        costs = resolve_costs(df, self.costs, cols)
        h = state.entropy
        if len(state.candidate_rows) == 1:
            return nothing_to_learn(cols, costs)
        if not cols:
            return no_column(h)
        pos = _candidates.positions(df, state)
        codes = _candidates.encode_columns_at(df, cols, pos)
        res = _belief.mutual_information(codes, None, state.posterior, 0.0, costs)
        b = res["best"]
        if b < 0:
            return no_column(h)
        mi = float(res["mi"][b])
        c = float(costs[b])
        score = _v.per_cost(mi, c)
        if self.normalize:
            score = score / res["h_rows"] if res["h_rows"] > 0 else 0.0
        return FeatureSuggestion(
            cols[b],
            score,
            expected_voi=mi,
            marginal_cost=c,
            debug={
                "entropy_before": float(res["h_rows"]),
                "entropy_after": max(0.0, float(res["h_rows"]) - mi),
                "n_values": int(res["n_values"][b]),
                "column_entropy": float(res["h_col"][b]),
            },
        )

    def compute_mi(self, df: pd.DataFrame, state: CandidateState, col: Hashable) -> float:
        """Compute conditional mutual information I(R; X_col | E) in bits.

        Model-free: groups candidates by their value in col and measures how
        much the posterior's entropy drops in expectation. Public because
        callers often want the full ranking, not just the argmax. Not
        normalized, whatever ``normalize`` says.

        Parameters
        ----------
        df : DataFrame
            The data table.
        state : CandidateState
            Current disambiguation state.
        col : Hashable
            The column to score (observed or not).

        Returns
        -------
        float
            The expected information gain in bits, in [0, H(R|E)].
        """
        check_frame(df)
        check_state(state)
        (c,) = resolve_columns(df, [col], "col")
        pos = _candidates.positions(df, state)
        codes = _candidates.encode_columns_at(df, [c], pos)
        return float(_belief.mutual_information(codes, None, state.posterior)["mi"][0])


# ---------------------------------------------------------------- random
@dataclass
class RandomPolicy:
    """Random policy for baseline comparisons.

    Picks uniformly among the unobserved columns that still tell some
    candidates apart (so it never wastes a question on a column that cannot
    help, and returns ``col=None`` when none is left). It draws from its own
    ``numpy.random.Generator`` seeded with ``seed``; global random state is
    never read or written. The same seed gives the same sequence of choices
    for the same sequence of calls.

    Attributes
    ----------
    seed : int or None
        Random seed for reproducibility (None: fresh OS entropy).

    Examples
    --------
    >>> import pandas as pd
    >>> from rowvoi import CandidateState
    >>> df = pd.DataFrame({"a": [0, 1, 0, 1], "b": [0, 0, 1, 1], "c": [5, 5, 5, 5]})
    >>> state = CandidateState.uniform(df.index)
    >>> picks = [RandomPolicy(seed=7).suggest(df, state).col for _ in range(3)]
    >>> len(set(picks)), picks[0] in ("a", "b")
    (1, True)
    """

    seed: int | None = None
    _rng: np.random.Generator = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.seed is not None:
            _v.seed("seed", self.seed)
        self._rng = np.random.default_rng(self.seed)

    def suggest(
        self,
        df: pd.DataFrame,
        state: CandidateState,
        candidate_cols: Sequence[Hashable] | None = None,
    ) -> FeatureSuggestion:
        """Select a random informative column.

        Parameters
        ----------
        df : DataFrame
            The data table.
        state : CandidateState
            Current disambiguation state.
        candidate_cols : Sequence[Hashable] or None
            Columns to consider (default: all columns of df).

        Returns
        -------
        FeatureSuggestion
            The column drawn, with its information gain in bits as both
            ``score`` and ``expected_voi``; ``col`` is None when no column is
            informative (see the module notes for a single candidate).
        """
        check_frame(df)
        check_state(state)
        cols = columns_to_consider(df, state, candidate_cols)
        h = state.entropy
        if len(state.candidate_rows) == 1:
            return nothing_to_learn(cols, np.ones(len(cols)))
        if not cols:
            return no_column(h)
        pos = _candidates.positions(df, state)
        codes = _candidates.encode_columns_at(df, cols, pos)
        mi = _belief.mutual_information(codes, None, state.posterior)["mi"]
        useful = np.flatnonzero(mi > _belief.MIN_GAIN)
        if len(useful) == 0:
            return no_column(h)
        j = int(useful[int(self._rng.integers(len(useful)))])
        return FeatureSuggestion(
            cols[j],
            float(mi[j]),
            expected_voi=float(mi[j]),
            debug={"entropy_before": h, "n_choices": len(useful)},
        )
