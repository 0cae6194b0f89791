"""Deterministic key and path algorithms for row disambiguation.

This module handles the deterministic case where all column values are
known. It solves the minimal set cover problem: find the cheapest set of
columns that distinguishes all pairs of rows in a candidate set.

The universe of row pairs is built here; the solvers themselves live in
:mod:`rowvoi.setcover`, which knows nothing about rows.

Conventions
-----------
* Rows are addressed by **label** (the DataFrame index), everywhere.
* Every missing value (NaN, None, pd.NA, NaT) is one value, "missing", that
  equals itself; unhashable cells raise ``TypeError`` naming the column.
* Costs must be finite and >= 0 (``ValueError`` naming the column). A free
  column (cost 0) is taken whenever it separates a pair: every strategy and
  path puts free columns first and never keeps one that adds nothing.
* Rows identical on every considered column make a full key impossible:
  ``ValueError`` names them (unless ``epsilon_pairs`` tolerates them).
* ``find_key(strategy="greedy")`` and ``plan_key_path(weighting="uniform")``
  work by **partition refinement** in O(rows x columns) memory, so they scale
  to millions of rows. The other strategies, and ``weighting="pair_idf"``,
  need the explicit universe of C(rows, 2) pairs; above
  :data:`MAX_EXPLICIT_PAIRS` pairs they raise :class:`rowvoi.errors.RangeError`
  (a ``ValueError``) naming the limit.

Examples
--------
>>> import pandas as pd
>>> from rowvoi.keys import find_key, plan_key_path
>>> df = pd.DataFrame({
...     "name": ["Ann", "Ann", "Bob", "Bob"],
...     "city": ["Oslo", "Rome", "Oslo", "Rome"],
...     "age": [30, 30, 30, 41],
... })
>>> find_key(df, df.index)
['name', 'city']
>>> plan_key_path(df, [0, 1, 2], costs={"age": 0.5}).columns()
['name', 'city']
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

import rowvoi._setcover as _setcover
from rowvoi import _validate as _v
from rowvoi.errors import RangeError
from rowvoi.frame import (
    UnknownLabelError,
    check_frame,
    encode_columns,
    resolve_columns,
    resolve_costs,
    resolve_rows,
)
from rowvoi.setcover import (
    CoverSolution,
    _prefix_for_budget,
    _prefix_for_epsilon,
    required_count,
    solve_engine,
)

__all__ = [
    "KeyPathStep",
    "KeyPath",
    "KeyProblem",
    "find_key",
    "plan_key_path",
    "pairwise_coverage",
    "MAX_EXPLICIT_PAIRS",
]

#: Largest pair universe (C(rows, 2)) the explicit strategies build: 50 million
#: pairs, about 10,000 rows, at most ~6 MB of bitset per column.
MAX_EXPLICIT_PAIRS = 50_000_000


@dataclass
class KeyPathStep:
    """A single step in a key path showing incremental progress.

    Attributes
    ----------
    col : Hashable
        The column added in this step.
    newly_covered_pairs : int
        Number of pairs newly covered by this column.
    cumulative_covered_pairs : int
        Total pairs covered up to and including this step.
    total_pairs : int
        Total number of pairs that need to be covered.
    marginal_cost : float
        Cost of adding this specific column.
    cumulative_cost : float
        Total cost up to and including this step.
    newly_covered_weight : float or None
        Weighted coverage gain (for weighted objectives; bits for "entropy").
    cumulative_covered_weight : float or None
        Total weighted coverage so far.
    """

    col: Hashable
    newly_covered_pairs: int
    cumulative_covered_pairs: int
    total_pairs: int
    marginal_cost: float
    cumulative_cost: float
    newly_covered_weight: float | None = None
    cumulative_covered_weight: float | None = None

    @property
    def coverage(self) -> float:
        """Fraction of pairs covered so far (1.0 when there are no pairs)."""
        if self.total_pairs == 0:
            return 1.0
        return self.cumulative_covered_pairs / self.total_pairs


@dataclass
class KeyPath:
    """Ordered sequence of columns and their contribution to coverage/cost.

    Attributes
    ----------
    steps : list[KeyPathStep]
        Ordered list of steps showing incremental progress.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"a": [0, 0, 1, 1], "b": [0, 1, 0, 1]})
    >>> path = KeyProblem(df, df.index).plan_path()
    >>> path.columns(), path.coverage_curve()
    (['a', 'b'], [(1.0, 0.6666666666666666), (2.0, 1.0)])
    >>> path.prefix_for_budget(1.5), path.prefix_for_epsilon_pairs(0.5)
    (['a'], ['a'])
    """

    steps: list[KeyPathStep]

    def columns(self) -> list[Hashable]:
        """Return the ordered list of columns in the path."""
        return [s.col for s in self.steps]

    def prefix_for_budget(self, budget: float) -> list[Hashable]:
        """Return the longest prefix of columns whose cumulative_cost <= budget."""
        return _prefix_for_budget(self.steps, budget, "col")

    def prefix_for_epsilon_pairs(self, epsilon: float) -> list[Hashable]:
        """Return the shortest prefix that leaves <= epsilon fraction unresolved.

        When no prefix gets there (duplicate rows), the whole path is returned.
        """
        if self.steps and self.steps[0].total_pairs == 0:
            return []
        return _prefix_for_epsilon(self.steps, epsilon, "col")

    def coverage_curve(self) -> list[tuple[float, float]]:
        """Return the coverage curve as (cumulative_cost, coverage_fraction) points."""
        return [(s.cumulative_cost, s.coverage) for s in self.steps]


def _pairs(n: int) -> int:
    return n * (n - 1) // 2


def duplicates_message(unresolved: int, groups: Sequence[Sequence[Hashable]]) -> str:
    """The error text for rows no key can tell apart (first 5 groups, 6 rows each)."""
    shown = "; ".join(", ".join(repr(r) for r in g[:6]) for g in groups[:5])
    return (
        f"no key exists: {unresolved} row pair(s) are identical on every "
        f"considered column (duplicate rows: {shown}); drop the duplicates, "
        "add a distinguishing column, or allow them with epsilon_pairs"
    )


def check_path_options(objective: Any, weighting: Any) -> None:
    """Validate plan_path's objective and weighting (ValueError naming the choices)."""
    if objective not in ("pair_coverage", "entropy"):
        raise ValueError(f"unknown objective {objective!r}; choose 'pair_coverage' or 'entropy'")
    if weighting not in ("uniform", "pair_idf"):
        raise ValueError(f"unknown weighting {weighting!r}; choose 'uniform' or 'pair_idf'")
    if objective == "entropy" and weighting != "uniform":
        raise ValueError(
            "objective='entropy' measures row clusters and takes no pair "
            "weights; use weighting='uniform'"
        )


def build_path(
    columns: Sequence[Hashable],
    costs: np.ndarray,
    order: Sequence[int],
    newly: Sequence[int],
    gains: Sequence[float] | None,
    n_pairs: int,
) -> KeyPath:
    """A :class:`KeyPath` from a greedy run's column indices, newly resolved
    pairs and (weighted objectives only) gains."""
    steps = []
    cum_cost = 0.0
    cum = 0
    cum_w = 0.0
    for k, (j, new) in enumerate(zip(order, newly)):
        c = float(costs[j])
        cum_cost += c
        cum += int(new)
        w = None
        if gains is not None:
            w = float(gains[k])
            cum_w += w
        steps.append(
            KeyPathStep(
                columns[j],
                int(new),
                cum,
                n_pairs,
                c,
                cum_cost,
                w,
                cum_w if gains is not None else None,
            )
        )
    return KeyPath(steps)


class KeyProblem:
    """Deterministic key-finding problem for a fixed subset of rows.

    Under the hood: universe = row pairs; columns cover pairs they separate.
    Solving is delegated to the set cover engine.

    Parameters
    ----------
    df : DataFrame
        The data table.
    rows : Sequence[Hashable] or None
        Row labels (index values) to distinguish; None means every row.
    columns : Sequence[Hashable] or None
        Columns to consider. If None, use all columns.
    costs : Mapping[Hashable, float] or None
        Cost of each column. If None, unit cost. Costs for columns of df
        that are not considered are ignored; costs for labels that are not
        columns of df raise ``ValueError``.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"x": [1, 1, 2], "y": [1, 2, 2], "z": [1, 2, 3]},
    ...                   index=["p", "q", "r"])
    >>> problem = KeyProblem(df, ["p", "q", "r"], costs={"z": 3.0})
    >>> problem.minimal_key("exact")
    ['x', 'y']
    >>> problem.is_key(["z"]), problem.pairwise_coverage(["x"])
    (True, 0.6666666666666666)
    """

    def __init__(
        self,
        df: pd.DataFrame,
        rows: Sequence[Hashable] | None,
        *,
        columns: Sequence[Hashable] | None = None,
        costs: Mapping[Hashable, float] | None = None,
    ):
        check_frame(df)
        self.df = df
        self.rows = resolve_rows(df, rows)
        self.columns = resolve_columns(df, columns)
        self._costs = resolve_costs(df, costs, self.columns)
        self.costs = {c: float(v) for c, v in zip(self.columns, self._costs)}
        if rows is None:
            sub = df[self.columns]
        elif self.rows:
            sub = df.loc[self.rows, self.columns]
        else:
            sub = df[self.columns].iloc[:0]
        self._codes = encode_columns(sub)
        self._col_pos = {c: i for i, c in enumerate(self.columns)}
        self._engine: _setcover.CoverProblem | None = None

    # ------------------------------------------------------------- basics
    @property
    def n_pairs(self) -> int:
        """Number of unordered row pairs, C(len(rows), 2)."""
        return _pairs(len(self.rows))

    def _col_indices(self, cols: Sequence[Hashable]) -> list[int]:
        if isinstance(cols, (str, bytes)):
            raise TypeError("cols must be a sequence of column labels, not a string")
        out = []
        for c in cols:
            if c not in self._col_pos:
                raise UnknownLabelError(f"column {c!r} is not one of the problem's columns")
            out.append(self._col_pos[c])
        return out

    def unresolved_pairs(self, cols: Sequence[Hashable]) -> int:
        """Number of row pairs that agree on every column in cols."""
        idx = self._col_indices(cols)
        if len(self.rows) < 2:
            return 0
        return int(_setcover.keys_unresolved(self._codes, np.asarray(idx, dtype=np.uint32)))

    def pairwise_coverage(self, cols: Sequence[Hashable]) -> float:
        """Fraction of row pairs distinguished by cols (1.0 with fewer than 2 rows)."""
        n = self.n_pairs
        return 1.0 if n == 0 else (n - self.unresolved_pairs(cols)) / n

    def is_key(self, cols: Sequence[Hashable], *, epsilon_pairs: float = 0.0) -> bool:
        """Check if cols distinguish all but at most epsilon_pairs fraction of pairs."""
        eps = _v.fraction("epsilon_pairs", epsilon_pairs)
        return self.n_pairs - self.unresolved_pairs(cols) >= required_count(self.n_pairs, eps)

    def duplicate_groups(self) -> list[list[Hashable]]:
        """Groups of rows identical on every considered column (no key separates them)."""
        if len(self.rows) < 2 or not self.columns:
            return [list(self.rows)] if len(self.rows) >= 2 else []
        frame = pd.DataFrame(self._codes.T)
        dup = frame.duplicated(keep=False).to_numpy()
        if not dup.any():
            return []
        groups: dict[tuple[int, ...], list[Hashable]] = {}
        for i in np.flatnonzero(dup):
            groups.setdefault(tuple(self._codes[:, i].tolist()), []).append(self.rows[i])
        return list(groups.values())

    def _check_duplicates(self, allowed: int, unresolved: int) -> None:
        """Raise when `unresolved` pairs (identical rows) exceed what is allowed."""
        if unresolved > allowed:
            raise ValueError(duplicates_message(unresolved, self.duplicate_groups()))

    def _explicit_engine(self, why: str) -> Any:
        if self._engine is None:
            n = self.n_pairs
            if n > MAX_EXPLICIT_PAIRS:
                raise RangeError(
                    f"{why} needs the explicit universe of row pairs: {len(self.rows)} rows "
                    f"give {n} pairs, above the limit of {MAX_EXPLICIT_PAIRS} "
                    "(rowvoi.keys.MAX_EXPLICIT_PAIRS, about 10,000 rows). Use "
                    "strategy='greedy' / weighting='uniform' (partition refinement, any "
                    "size) or fewer rows"
                )
            self._engine = _setcover.CoverProblem.from_codes(self._codes, self._costs)
        return self._engine

    # ------------------------------------------------------------ solving
    def minimal_key(
        self,
        strategy: Literal["greedy", "exact", "ilp", "sa", "ga", "lp", "hybrid"] = "greedy",
        *,
        epsilon_pairs: float = 0.0,
        time_limit: float | None = None,
        seed: int = 0,
    ) -> CoverSolution:
        """Solve deterministic min-key / set-cover for this row set.

        Parameters
        ----------
        strategy : {"greedy", "exact", "ilp", "sa", "ga", "lp", "hybrid"}
            Algorithm to use:

            - "greedy": greedy set cover on row pairs, by partition
              refinement (any number of rows)
            - "exact": branch and bound that proves optimality
            - "ilp": Integer Linear Programming (pulp with CBC)
            - "sa": Simulated Annealing metaheuristic
            - "ga": Genetic Algorithm metaheuristic
            - "lp": Linear Programming relaxation with rounding
            - "hybrid": Combined SA+GA approach
        epsilon_pairs : float
            Allow this fraction of pairs to remain unresolved.
        time_limit : float or None
            Maximum time in seconds. An exact strategy that runs out returns
            its best key with ``optimal=False`` and warns
            (:class:`rowvoi.errors.NotProvenOptimalWarning`).
        seed : int
            Seed for "sa", "ga" and "hybrid".

        Returns
        -------
        CoverSolution
            The key's columns (a list; greedy in pick order, others in column
            order) with ``cost``, ``optimal`` and ``timed_out``.

        Raises
        ------
        ValueError
            Unknown strategy, epsilon outside [0, 1], or duplicate rows that
            make the requested key impossible (the message names them).
        rowvoi.errors.RangeError
            A strategy that needs the explicit pair universe on too many rows.
        """
        _v.strategy(strategy)  # raises for an unknown name; returns it unchanged
        eps = _v.fraction("epsilon_pairs", epsilon_pairs)
        tl = _v.time_limit(time_limit)
        sd = _v.seed("seed", seed)
        n = self.n_pairs
        allowed = n - required_count(n, eps)
        if n == 0:
            return CoverSolution([], strategy=strategy, optimal=True)
        if strategy == "greedy":
            # The path runs until `allowed` pairs are left or no column
            # separates anything more, so what is left over is duplicates.
            order, _newly, _, left = _setcover.keys_plan_path(
                self._codes, self._costs, "coverage", allowed
            )
            self._check_duplicates(allowed, int(left))
            cols = [self.columns[i] for i in order.tolist()]
            return CoverSolution(
                cols,
                strategy="greedy",
                cost=float(self._costs[order].sum()) if len(order) else 0.0,
                covered=n - int(left),
                total=n,
            )
        engine = self._explicit_engine(f"strategy {strategy!r}")
        self._check_duplicates(allowed, n - int(engine.n_coverable))
        return solve_engine(engine, self.columns, self._costs, n, strategy, eps, tl, sd)

    def plan_path(
        self,
        *,
        objective: Literal["pair_coverage", "entropy"] = "pair_coverage",
        weighting: Literal["uniform", "pair_idf"] = "uniform",
    ) -> KeyPath:
        """Build a greedy ordering of columns for this row set.

        Each step takes the column with the best gain per unit cost (ties: the
        earlier column), until no column separates another pair.

        Parameters
        ----------
        objective : {"pair_coverage", "entropy"}
            - "pair_coverage": gain = newly covered pairs
            - "entropy": gain = reduction in the expected log2 size of a
              row's cluster (rows that agree on the chosen columns), i.e. the
              conditional entropy H(row | columns) under a uniform prior, in
              bits; ``newly_covered_weight`` carries it per step
        weighting : {"uniform", "pair_idf"}
            - "uniform": all pairs weighted equally (partition refinement,
              any size)
            - "pair_idf": a pair separated by k columns weighs 1/k, so
              hard-to-separate pairs count more (explicit pair universe;
              "pair_coverage" objective only)

        Returns
        -------
        KeyPath
            Ordered sequence with coverage information.
        """
        check_path_options(objective, weighting)
        n = self.n_pairs
        if n == 0:
            return KeyPath([])
        if weighting == "uniform":
            order, newly, gain, _ = _setcover.keys_plan_path(
                self._codes, self._costs, "entropy" if objective == "entropy" else "coverage", 0
            )
            gains = gain.tolist() if objective == "entropy" else None
        else:
            engine = self._explicit_engine("weighting='pair_idf'")
            counts = engine.element_counts().astype(np.float64)
            weights = np.where(counts > 0, 1.0 / np.maximum(counts, 1.0), 1.0)
            order, newly, gain = engine.plan_path("coverage", weights)
            gains = gain.tolist()
        return build_path(self.columns, self._costs, order.tolist(), newly.tolist(), gains, n)


def pairwise_coverage(
    df: pd.DataFrame, rows: Sequence[Hashable], cols: Sequence[Hashable]
) -> float:
    """Fraction of unordered row pairs in rows that are distinguished by cols.

    Parameters
    ----------
    df : DataFrame
        The data frame.
    rows : Sequence[Hashable]
        Row labels to consider.
    cols : Sequence[Hashable]
        Columns to use for distinguishing.

    Returns
    -------
    float
        Fraction of pairs that differ on at least one column in cols
        (1.0 with fewer than two rows).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"a": [1, 1, 2, 2], "b": [1, 2, 1, 2]})
    >>> pairwise_coverage(df, [0, 1, 2, 3], ["a"])
    0.6666666666666666
    """
    cols = resolve_columns(check_frame(df), cols, "cols")
    return KeyProblem(df, rows, columns=cols).pairwise_coverage(cols)


def find_key(
    df: pd.DataFrame,
    rows: Sequence[Hashable] | None,
    *,
    columns: Sequence[Hashable] | None = None,
    costs: Mapping[Hashable, float] | None = None,
    strategy: Literal["greedy", "exact", "ilp", "sa", "ga", "lp", "hybrid"] = "greedy",
    epsilon_pairs: float = 0.0,
    time_limit: float | None = None,
    seed: int = 0,
) -> CoverSolution:
    """Find a minimal key for distinguishing a set of rows.

    Convenience wrapper around :meth:`KeyProblem.minimal_key`.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"a": [1, 1, 2], "b": [1, 2, 2], "id": [7, 8, 9]})
    >>> find_key(df, [0, 1, 2], costs={"id": 5})
    ['a', 'b']
    >>> find_key(df, [0, 1, 2], costs={"id": 1.5}, strategy="ilp")
    ['id']
    """
    return KeyProblem(df, rows, columns=columns, costs=costs).minimal_key(
        strategy, epsilon_pairs=epsilon_pairs, time_limit=time_limit, seed=seed
    )


def plan_key_path(
    df: pd.DataFrame,
    rows: Sequence[Hashable] | None,
    *,
    columns: Sequence[Hashable] | None = None,
    costs: Mapping[Hashable, float] | None = None,
    objective: Literal["pair_coverage", "entropy"] = "pair_coverage",
    weighting: Literal["uniform", "pair_idf"] = "uniform",
) -> KeyPath:
    """Plan an ordered path of columns for disambiguation.

    Convenience wrapper around :meth:`KeyProblem.plan_path`.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"a": [1, 1, 2, 2], "b": [1, 2, 3, 4]})
    >>> [(s.col, s.newly_covered_pairs) for s in plan_key_path(df, df.index).steps]
    [('b', 6)]
    """
    return KeyProblem(df, rows, columns=columns, costs=costs).plan_path(
        objective=objective, weighting=weighting
    )
