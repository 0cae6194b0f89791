"""Probabilistic key and path algorithms.

This module handles the probabilistic case where column values are unknown
and we work with a model to predict expected information gain and coverage.

The true row is unknown (uniform over ``rows``) and so are its values; the
candidates' values are in ``df``. Choosing columns *non-adaptively* -- before
any answer arrives -- the candidates that agree on the chosen columns (after
the model's binning) form groups, and the expected gain of one more column c
is its information gain within each group, weighted by the group's
probability:

    gain(c) = sum_g P(g) I(R; Y_c | R in g)

with I computed under the model's noise model (``RowVoiModel.noise``) by the
C engine. With ``noise = 0`` this is exactly I(R; X_c | X_S), the drop in
H(R | X_S) that column c adds to the chosen set S. With ``noise > 0`` the
earlier columns are conditioned on through the groups they induce, i.e. as
if they had been observed exactly (their own noise is not compounded), which
makes the gains an optimistic estimate.

Examples
--------
>>> import pandas as pd
>>> from rowvoi.ml import RowVoiModel
>>> from rowvoi.prob_keys import find_key_probabilistic
>>> df = pd.DataFrame({"a": [0, 0, 1, 1], "b": [0, 1, 0, 1], "c": [0, 0, 0, 1]})
>>> model = RowVoiModel().fit(df)
>>> find_key_probabilistic(df, df.index, model, epsilon_posterior=0.0)
['a', 'b']
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np
import pandas as pd

import rowvoi._belief as _belief
from rowvoi import _candidates, _validate as _v
from rowvoi._suggest import best_index
from rowvoi.frame import check_frame, resolve_columns, resolve_costs, resolve_rows
from rowvoi.keys import KeyPath, KeyPathStep, pairwise_coverage

if TYPE_CHECKING:
    from rowvoi.ml import RowVoiModel

__all__ = [
    "find_key_probabilistic",
    "plan_key_path_probabilistic",
    "estimate_coverage_probability",
]

#: Monte Carlo draws used by estimate_coverage_probability under a noisy model
#: when exact enumeration would cost more than EXACT_COVERAGE_WORK.
N_COVERAGE_DRAWS = 2000
#: Largest (joint observations x rows x columns) enumerated exactly.
EXACT_COVERAGE_WORK = 4_000_000


class _Plan:
    """Greedy non-adaptive column selection over candidate groups."""

    def __init__(
        self,
        df: pd.DataFrame,
        rows: Sequence[Hashable],
        model: RowVoiModel,
        columns: Sequence[Hashable] | None,
        costs: Mapping[Hashable, float] | None,
    ):
        check_frame(df)
        if not hasattr(model, "_observe") or not hasattr(model, "suggest_next_feature"):
            raise TypeError(f"model must be a RowVoiModel, got {type(model).__name__}")
        model._check_fitted("planning with it")
        self.rows = resolve_rows(df, rows)  # may be empty: nothing to tell apart
        self.columns = resolve_columns(df, columns, "columns")
        model._check_known(self.columns, "columns")
        self.costs = resolve_costs(df, costs, self.columns)
        pos = _candidates.positions(df, self.rows)
        self.codes = _candidates.encode_columns_at(
            df, self.columns, pos, transform=model._transform
        )
        self.noise = model.noise
        n = len(self.rows)
        self.n = n
        self.groups = np.zeros(n, dtype=np.int64)
        self.total_pairs = n * (n - 1) // 2
        self.unresolved = self.total_pairs
        self.chosen: list[int] = []

    def _members(self) -> list[np.ndarray]:
        order = np.argsort(self.groups, kind="stable")
        sizes = np.bincount(self.groups)
        bounds = np.cumsum(sizes)[:-1]
        return [g for g in np.split(order, bounds) if len(g) >= 2]

    def gains(self) -> np.ndarray:
        """Expected information gain (bits) of every column given the groups."""
        out = np.zeros(len(self.columns))
        if self.n < 2 or not self.columns:
            return out
        for idx in self._members():
            w = len(idx) / self.n
            sub = np.ascontiguousarray(self.codes[:, idx])
            res = _belief.mutual_information(
                sub, None, np.full(len(idx), 1.0 / len(idx)), self.noise
            )
            out += w * res["mi"]
        out[self.chosen] = 0.0
        return out

    def entropy_reductions(self) -> np.ndarray:
        """H(R|groups) - E[H(R|groups, Y_c)] from the branch posteriors.

        The definition, evaluated per group and observable value with the
        noise model's likelihoods: an independent route to the same number
        as :meth:`gains`.
        """
        out = np.zeros(len(self.columns))
        e = self.noise
        for idx in self._members():
            m = len(idx)
            wg = m / self.n
            h_before = math.log2(m)
            for j in range(len(self.columns)):
                if j in self.chosen:
                    continue
                vals, inv = np.unique(self.codes[j, idx], return_inverse=True)
                k = len(vals)
                if k < 2:
                    continue
                counts = np.bincount(inv, minlength=k).astype(np.float64)
                hit, miss = 1.0 - e, e / (k - 1)
                expected = 0.0
                for x in range(k):
                    # branch Y = x: rows with value x weigh hit, the others miss
                    n_hit, n_miss = counts[x], m - counts[x]
                    px = (n_hit * hit + n_miss * miss) / m
                    if px <= 0:
                        continue
                    h = 0.0
                    for cnt, lik in ((n_hit, hit), (n_miss, miss)):
                        q = lik / m / px
                        if cnt > 0 and q > 0:
                            h -= cnt * q * math.log2(q)
                    expected += px * h
                out[j] += wg * max(0.0, h_before - expected)
        return out

    def expected_max_posterior(self) -> float:
        """sum_g P(g) max_{r in g} p(r | g), uniform within groups: the chance
        that the most probable row is the true one once the chosen columns
        are known exactly."""
        if self.n == 0:
            return 1.0  # no rows: nothing is uncertain
        sizes = np.bincount(self.groups)
        return float((sizes > 0).sum() / self.n)

    def take(self, j: int) -> int:
        """Add column j; return the pairs it newly separates."""
        self.chosen.append(j)
        c = self.codes[j].astype(np.int64)
        c -= c.min()
        key = self.groups * (int(c.max()) + 1) + c
        self.groups = pd.factorize(key)[0].astype(np.int64)
        sizes = np.bincount(self.groups).astype(np.int64)
        now = int((sizes * (sizes - 1) // 2).sum())
        newly = self.unresolved - now
        self.unresolved = now
        return newly


def find_key_probabilistic(
    df: pd.DataFrame,
    rows: Sequence[Hashable],
    model: RowVoiModel,
    *,
    epsilon_posterior: float = 0.05,
    columns: Sequence[Hashable] | None = None,
    costs: Mapping[Hashable, float] | None = None,
    objective: Literal["mi", "mi_over_cost"] = "mi_over_cost",
    max_steps: int | None = None,
) -> list[Hashable]:
    """Find a probabilistic min-key under a model.

    Runs a greedy MI/VOI policy (non-adaptively) until max_r p(r | E) >=
    1 - epsilon_posterior, then returns the set of columns used.

    "Non-adaptively": the columns are chosen before any value is seen, so
    the criterion is the expected one -- the probability that the most
    probable row is the true one, sum over groups of max_r p(r | group),
    with the true row uniform over ``rows`` and the chosen columns' values
    known (see the module notes for noisy models). Selection stops early
    when no remaining column adds information or ``max_steps`` is reached.

    Parameters
    ----------
    df : DataFrame
        The data table.
    rows : Sequence[Hashable]
        Row labels to distinguish; none (an empty list) gives ``[]``.
    model : RowVoiModel
        Trained model for computing expected information.
    epsilon_posterior : float
        Target residual uncertainty, in [0, 1].
    columns : Sequence[Hashable] or None
        Columns to consider (default: all).
    costs : Mapping[Hashable, float] or None
        Cost of each column (default 1.0; finite and >= 0; a free column
        that tells candidates apart is taken first).
    objective : {"mi", "mi_over_cost"}
        Objective for column selection: expected bits, or bits per cost.
    max_steps : int or None
        Maximum number of columns to select (>= 0).

    Returns
    -------
    list[Hashable]
        Columns selected by the greedy policy, in the order chosen.

    Examples
    --------
    >>> import pandas as pd
    >>> from rowvoi.ml import RowVoiModel
    >>> df = pd.DataFrame({"a": [0, 0, 1, 1], "b": [0, 1, 0, 1], "id": [1, 2, 3, 4]})
    >>> model = RowVoiModel().fit(df)
    >>> find_key_probabilistic(df, df.index, model, costs={"id": 3.0})
    ['a', 'b']
    >>> find_key_probabilistic(df, df.index, model, objective="mi")
    ['id']
    >>> find_key_probabilistic(df, df.index, model, costs={"id": 3.0},
    ...                        epsilon_posterior=0.5)
    ['a']
    """
    _v.choice("objective", objective, ("mi", "mi_over_cost"))
    _v.fraction("epsilon_posterior", epsilon_posterior)
    if max_steps is not None:
        _v.integer("max_steps", max_steps, 0)
    plan = _Plan(df, rows, model, columns, costs)
    target = 1.0 - float(epsilon_posterior)
    while plan.expected_max_posterior() < target - 1e-12:
        if max_steps is not None and len(plan.chosen) >= max_steps:
            break
        gains = plan.gains()
        denom = plan.costs if objective == "mi_over_cost" else np.ones(len(gains))
        j = best_index(gains, denom, _belief.MIN_GAIN)
        if j < 0:
            break
        plan.take(j)
    return [plan.columns[j] for j in plan.chosen]


def plan_key_path_probabilistic(
    df: pd.DataFrame,
    rows: Sequence[Hashable],
    model: RowVoiModel,
    *,
    objective: Literal["mi", "mi_over_cost", "expected_entropy_reduction"] = "mi_over_cost",
    columns: Sequence[Hashable] | None = None,
    costs: Mapping[Hashable, float] | None = None,
) -> KeyPath:
    """Build an expected greedy path under the model.

    For each step, compute MI or expected entropy reduction for each column
    given the current posterior (without actually observing values), pick
    the best, and iterate. Returns a KeyPath with expected coverage/cost.

    Each step's ``newly_covered_weight`` is the column's expected
    information gain in bits (``cumulative_covered_weight`` their running
    sum), and the pair counts are the pairs of ``rows`` its (binned) values
    separate -- exact, since the candidates' values are in ``df``. The path
    ends when no column adds information.

    Parameters
    ----------
    df : DataFrame
        The data table.
    rows : Sequence[Hashable]
        Row labels to distinguish; none (an empty list) gives a path
        without steps.
    model : RowVoiModel
        Trained model for computing expected information.
    objective : {"mi", "mi_over_cost", "expected_entropy_reduction"}
        Objective for ordering columns:

        - "mi": expected information gain in bits (cost ignored)
        - "mi_over_cost": bits per unit cost
        - "expected_entropy_reduction": H(R | path) - E[H(R | path, Y_c)],
          evaluated from the posterior of every branch (group, observed
          value). It equals the MI in exact arithmetic; computing it
          through the branch posteriors rather than through the entropy
          of the answer makes it an independent route to the same ranking.
          Cost is ignored.
    columns : Sequence[Hashable] or None
        Columns to consider (default: all).
    costs : Mapping[Hashable, float] or None
        Cost of each column (default 1.0; finite and >= 0).

    Returns
    -------
    KeyPath
        Expected path with coverage information.

    Examples
    --------
    >>> import pandas as pd
    >>> from rowvoi.ml import RowVoiModel
    >>> df = pd.DataFrame({"a": [0, 0, 1, 1], "b": [0, 1, 0, 1], "id": [1, 2, 3, 4]})
    >>> model = RowVoiModel().fit(df)
    >>> path = plan_key_path_probabilistic(df, df.index, model, costs={"id": 3.0})
    >>> path.columns(), [s.newly_covered_weight for s in path.steps]
    (['a', 'b'], [1.0, 1.0])
    >>> plan_key_path_probabilistic(df, df.index, model, objective="mi").columns()
    ['id']
    """
    _v.choice("objective", objective, ("mi", "mi_over_cost", "expected_entropy_reduction"))
    plan = _Plan(df, rows, model, columns, costs)
    steps: list[KeyPathStep] = []
    cum_cost = 0.0
    cum_pairs = 0
    cum_bits = 0.0
    while len(plan.chosen) < len(plan.columns):
        if objective == "expected_entropy_reduction":
            gains = plan.entropy_reductions()
        else:
            gains = plan.gains()
        denom = plan.costs if objective == "mi_over_cost" else np.ones(len(gains))
        j = best_index(gains, denom, _belief.MIN_GAIN)
        if j < 0:
            break
        bits = float(gains[j])
        newly = plan.take(j)
        c = float(plan.costs[j])
        cum_cost += c
        cum_pairs += newly
        cum_bits += bits
        steps.append(
            KeyPathStep(
                plan.columns[j], newly, cum_pairs, plan.total_pairs, c, cum_cost, bits, cum_bits
            )
        )
    return KeyPath(steps)


def estimate_coverage_probability(
    df: pd.DataFrame,
    rows: Sequence[Hashable],
    cols: Sequence[Hashable],
    model: RowVoiModel | None = None,
) -> float:
    """Estimate the probability that cols will distinguish rows.

    Without a model the values are taken as known and exact: the answer is
    1.0 when ``cols`` tell every pair of ``rows`` apart and 0.0 otherwise.
    With a model it is the probability that observing ``cols`` (binned and
    noisy as the model says) singles out the true row -- the true row drawn
    uniformly from ``rows`` and identified when it alone has the highest
    posterior. With ``noise = 0`` that is exactly the share of rows whose
    values on ``cols`` no other row shares; with ``noise > 0`` it is computed
    exactly by enumerating every joint observation when they are few
    enough, and otherwise estimated by Monte Carlo over
    :data:`N_COVERAGE_DRAWS` simulated observations from a fixed seed (so
    the same inputs always give the same number).

    Parameters
    ----------
    df : DataFrame
        The data table.
    rows : Sequence[Hashable]
        Row labels to consider; none (an empty list) gives 1.0: there is
        nothing to tell apart.
    cols : Sequence[Hashable]
        Columns to evaluate.
    model : RowVoiModel or None
        Model for probabilistic estimation. If None, uses deterministic
        coverage.

    Returns
    -------
    float
        Estimated probability of full disambiguation, in [0, 1].

    Examples
    --------
    >>> import pandas as pd
    >>> from rowvoi.ml import RowVoiModel
    >>> df = pd.DataFrame({"b": [0, 1, 2, 2], "c": [5, 5, 5, 6]})
    >>> model = RowVoiModel().fit(df)
    >>> estimate_coverage_probability(df, df.index, ["b"])
    0.0
    >>> estimate_coverage_probability(df, df.index, ["b"], model)
    0.5
    >>> estimate_coverage_probability(df, df.index, ["b", "c"], model)
    1.0
    >>> round(estimate_coverage_probability(df, df.index, ["b", "c"],
    ...                                     RowVoiModel(noise=0.2).fit(df)), 4)
    0.72
    """
    check_frame(df)
    rows = resolve_rows(df, rows)
    cols = resolve_columns(df, cols, "cols")
    if model is None:
        if len(rows) < 2:
            return 1.0
        return 1.0 if pairwise_coverage(df, rows, cols) >= 1.0 else 0.0
    plan = _Plan(df, rows, model, cols, None)
    n = plan.n
    if n <= 1:
        return 1.0
    if plan.noise == 0.0:
        for j in range(len(cols)):
            plan.take(j)
        sizes = np.bincount(plan.groups)
        return float((sizes[plan.groups] == 1).sum() / n)
    return _coverage_noisy(plan.codes, plan.noise, n)


def _coverage_noisy(codes: np.ndarray, noise: float, n: int) -> float:
    """P(true row alone has the highest posterior), true row uniform.

    Exact by enumerating the joint observations when there are few enough
    (the product of the columns' value counts, times rows and columns, at
    most :data:`EXACT_COVERAGE_WORK`); a seeded Monte Carlo estimate
    otherwise.
    """
    inv_cols = []
    for j in range(len(codes)):
        vals, inv = np.unique(codes[j], return_inverse=True)
        if len(vals) >= 2:  # constant columns are observed exactly: no effect
            inv_cols.append((inv.reshape(-1), len(vals)))
    if not inv_cols:
        return 1.0 if n == 1 else 0.0
    n_out = math.prod(k for _, k in inv_cols)
    if n_out * n * len(inv_cols) > EXACT_COVERAGE_WORK:
        return _coverage_monte_carlo(codes, noise, n)
    ll = np.zeros((1, n))
    for inv, k in inv_cols:
        hit, miss = math.log(1.0 - noise), math.log(noise / (k - 1))
        per_value = np.where(np.arange(k)[:, None] == inv[None, :], hit, miss)  # (k, n)
        ll = (ll[:, None, :] + per_value[None, :, :]).reshape(-1, n)
    top = ll.max(axis=1)
    winners = (ll >= top[:, None] - 1e-12).sum(axis=1)
    return float(np.exp(top)[winners == 1].sum() / n)


def _coverage_monte_carlo(codes: np.ndarray, noise: float, n: int) -> float:
    rng = np.random.default_rng(0)
    draws = N_COVERAGE_DRAWS
    truth = rng.integers(n, size=draws)
    loglik = np.zeros((draws, n))
    for j in range(len(codes)):
        col = codes[j]
        vals, inv = np.unique(col, return_inverse=True)
        inv = inv.reshape(-1)
        k = len(vals)
        if k < 2:
            continue  # observed exactly, the same for every candidate
        true_v = inv[truth]
        flip = rng.random(draws) < noise
        other = rng.integers(k - 1, size=draws)
        other = other + (other >= true_v)  # uniform over the other k - 1 values
        obs = np.where(flip, other, true_v)
        hit, miss = math.log(1.0 - noise), math.log(noise / (k - 1))
        loglik += np.where(inv[None, :] == obs[:, None], hit, miss)
    true_ll = loglik[np.arange(draws), truth]
    loglik[np.arange(draws), truth] = -np.inf
    others = loglik.max(axis=1)
    return float(np.mean(true_ll > others + 1e-12))
