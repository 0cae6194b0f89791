"""The steps every column suggester shares: the state check, the columns to
consider, the choice among scored columns, and the answers for "nothing to
learn" and "nothing informative".

The policies (:mod:`rowvoi.policies`), the model (:mod:`rowvoi.ml`), the
evaluation tools and the Dask door all build on these, so the rules stated
in :mod:`rowvoi.policies` (observed columns are skipped, ties go to the
first column, one candidate gives the first column at 0 bits) hold alike
everywhere. This module sits below all of them: it imports only
:mod:`rowvoi.core`, :mod:`rowvoi.frame` and the ground floor
(:mod:`rowvoi._validate`).

Thread safety: every function is pure.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from rowvoi import _validate as _v
from rowvoi.core import CandidateState, FeatureSuggestion
from rowvoi.frame import resolve_columns

__all__ = ["check_state", "columns_to_consider", "best_index", "nothing_to_learn", "no_column"]


def check_state(state: Any, *, allow_empty: bool = False) -> CandidateState:
    """Validate a state argument: a CandidateState, with candidates unless
    ``allow_empty``.

    Raises
    ------
    TypeError
        If state is not a :class:`~rowvoi.core.CandidateState`.
    ValueError
        If it has no candidate rows (and ``allow_empty`` is False).

    >>> check_state(CandidateState.uniform([]))
    Traceback (most recent call last):
    ...
    ValueError: state has no candidate rows: nothing to disambiguate (an earlier observation matched no candidate, or the candidate set was empty)
    """
    if not isinstance(state, CandidateState):
        raise TypeError(f"state must be a CandidateState, got {type(state).__name__}")
    if not allow_empty and len(state.candidate_rows) == 0:
        raise ValueError(
            "state has no candidate rows: nothing to disambiguate (an earlier "
            "observation matched no candidate, or the candidate set was empty)"
        )
    return state


def columns_to_consider(
    df: pd.DataFrame, state: CandidateState, candidate_cols: Sequence[Hashable] | None
) -> list[Hashable]:
    """candidate_cols (default: every column of df) minus the observed ones,
    in the order given (UnknownLabelError for a label not in df.columns).

    >>> df = pd.DataFrame({"a": [1], "b": [2], "c": [3]})
    >>> columns_to_consider(df, CandidateState.uniform([0], observed_cols={"b"}), None)
    ['a', 'c']
    """
    cols = resolve_columns(df, candidate_cols, "candidate_cols")
    return [c for c in cols if c not in state.observed_cols]


def best_index(gains: np.ndarray, costs: np.ndarray, min_gain: float) -> int:
    """Index of the best gain per cost among gains > min_gain, or -1.

    Ties (equal up to 1e-12 relative) go to the lower index, exactly as the
    engine breaks them; a free column (cost 0) beats every priced one, and
    among free columns the larger gain wins (:func:`rowvoi._validate.ratio_better`).

    >>> best_index(np.array([1.0, 2.0, 2.0]), np.array([1.0, 2.0, 1.0]), 0.0)
    2
    >>> best_index(np.array([0.0]), np.array([1.0]), 0.0)
    -1
    >>> best_index(np.array([5.0, 0.5, 1.0]), np.array([1.0, 0.0, 0.0]), 0.0)
    2
    """
    best = -1
    for j in range(len(gains)):
        g = float(gains[j])
        if not g > min_gain:
            continue
        if best < 0 or _v.ratio_better(g, float(costs[j]), float(gains[best]), float(costs[best])):
            best = j
    return best


def nothing_to_learn(
    cols: Sequence[Hashable], costs: np.ndarray, **debug: Any
) -> FeatureSuggestion:
    """The suggestion for a single candidate: the first column, worth 0 bits.

    ``col`` is None when ``cols`` is empty; ``debug`` entries are added to
    the suggestion's ``debug``.

    >>> s = nothing_to_learn(["a", "b"], np.array([2.0, 1.0]))
    >>> s.col, s.expected_voi, s.marginal_cost
    ('a', 0.0, 2.0)
    """
    info = {
        "entropy_before": 0.0,
        "entropy_after": 0.0,
        "reason": "one candidate left: nothing to learn",
        **debug,
    }
    if not len(cols):
        return FeatureSuggestion(None, 0.0, expected_voi=0.0, marginal_cost=None, debug=info)
    return FeatureSuggestion(
        cols[0], 0.0, expected_voi=0.0, marginal_cost=float(costs[0]), debug=info
    )


def no_column(entropy: float, **debug: Any) -> FeatureSuggestion:
    """The suggestion when no column tells the candidates apart: ``col=None``
    at 0 bits, with ``entropy_before`` and the given ``debug`` entries.

    >>> no_column(1.0, total_pairs=0).col is None
    True
    """
    return FeatureSuggestion(
        None, 0.0, expected_voi=0.0, marginal_cost=None, debug={"entropy_before": entropy, **debug}
    )
