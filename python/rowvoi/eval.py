"""Simulation and evaluation tools for rowvoi.

This module provides evaluation tools for comparing key-finding algorithms
and policies, including gold standard computation and systematic
benchmarking.

Randomness: every function that samples takes a ``random_state`` (an int
seed, a ``numpy.random.Generator``, or None for fresh OS entropy) and draws
only from its own generator; global random state (``random``,
``numpy.random``) is never read, seeded or written. The same inputs and seed
give the same results.

Examples
--------
>>> import pandas as pd
>>> from rowvoi.eval import compute_gold_key, sample_candidate_sets
>>> df = pd.DataFrame({"a": [0, 0, 1, 1], "b": [0, 1, 0, 1], "id": [1, 2, 3, 4]})
>>> compute_gold_key(df, df.index, costs={"id": 3.0})
['a', 'b']
>>> sample_candidate_sets(df, subset_size=2, n_samples=2, random_state=0)
[[2, 3], [0, 1]]
"""

from __future__ import annotations

import numbers
import time
import warnings
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from rowvoi import _candidates, _validate as _v
from rowvoi._suggest import check_state, columns_to_consider
from rowvoi.core import CandidateState
from rowvoi.errors import NotProvenOptimalWarning, RangeError, SolverUnavailableError
from rowvoi.frame import check_frame, resolve_columns, resolve_costs, resolve_rows
from rowvoi.keys import find_key, pairwise_coverage
from rowvoi.session import DisambiguationSession, StopRules

if TYPE_CHECKING:
    from rowvoi.ml import RowVoiModel
    from rowvoi.policies import Policy

__all__ = [
    "sample_candidate_sets",
    "compute_gold_key",
    "compute_gold_next_column_probabilistic",
    "KeyEvalResult",
    "evaluate_keys",
    "PolicyEvalStats",
    "evaluate_policies",
    "AcquisitionResult",
    "benchmark_policy",
]


def _rng(random_state: Any) -> np.random.Generator:
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None:
        return np.random.default_rng()
    if (
        isinstance(random_state, bool)
        or not isinstance(random_state, numbers.Integral)
        or random_state < 0
    ):
        raise ValueError(
            "random_state must be a non-negative int, a numpy Generator or "
            f"None, got {random_state!r}"
        )
    return np.random.default_rng(int(random_state))


def sample_candidate_sets(
    df: pd.DataFrame,
    *,
    subset_size: int,
    n_samples: int,
    random_state: int | np.random.Generator | None = None,
) -> list[list[Hashable]]:
    """Randomly sample subsets of rows from a DataFrame.

    Each subset is drawn without replacement and listed in index order.

    Parameters
    ----------
    df : DataFrame
        The data frame to sample from.
    subset_size : int
        Number of rows in each subset (>= 1).
    n_samples : int
        Number of subsets to generate (>= 0).
    random_state : int, Generator or None
        Random seed for reproducibility.

    Returns
    -------
    list[list[Hashable]]
        List of row label lists (labels of ``df.index``).

    Raises
    ------
    ValueError
        If subset_size exceeds the number of rows in the frame.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"x": range(5)}, index=list("abcde"))
    >>> sample_candidate_sets(df, subset_size=3, n_samples=2, random_state=1)
    [['b', 'c', 'd'], ['a', 'd', 'e']]
    """
    check_frame(df)
    size = _v.integer("subset_size", subset_size, 1)
    count = _v.integer("n_samples", n_samples, 0)
    if size > len(df):
        raise ValueError(f"subset_size ({size}) cannot exceed number of rows ({len(df)})")
    rng = _rng(random_state)
    labels = df.index
    return [
        labels[np.sort(rng.choice(len(df), size=size, replace=False))].tolist()
        for _ in range(count)
    ]


def compute_gold_key(
    df: pd.DataFrame,
    rows: Sequence[Hashable],
    *,
    columns: Sequence[Hashable] | None = None,
    costs: Mapping[Hashable, float] | None = None,
    epsilon_pairs: float = 0.0,
    time_limit: float = 10.0,
    allow_approximate: bool = False,
) -> list[Hashable]:
    """Compute the provably optimal deterministic key.

    Tries ILP, then exhaustive search. Both are exact, so whichever answers
    first is the optimum.

    This deliberately does not fall back to greedy. Callers use the result
    as the baseline for optimality_gap, and a greedy baseline makes that
    number wrong -- it can even go negative, showing a method beating the
    "optimum". Failing is the honest outcome; evaluate_keys already treats a
    failed gold solve as "no baseline" and reports no gap.

    A strategy that stops at ``time_limit`` without proving optimality, is
    unavailable (no LP solver) or cannot take the instance (too many row
    pairs for an explicit universe) does not count as answering.

    Parameters
    ----------
    df : DataFrame
        The data table.
    rows : Sequence[Hashable]
        Row labels to distinguish.
    columns : Sequence[Hashable] or None
        Columns to consider.
    costs : Mapping[Hashable, float] or None
        Cost of each column.
    epsilon_pairs : float
        Tolerance for unresolved pairs.
    time_limit : float
        Maximum time for each exact strategy (seconds, > 0).
    allow_approximate : bool
        Permit a greedy result when no exact one is obtainable. The return
        value is then not necessarily optimal, so do not use it as an
        optimality baseline.

    Returns
    -------
    list[Hashable]
        Optimal key columns (a :class:`rowvoi.setcover.CoverSolution`,
        ``optimal=True``), or an approximate key when allow_approximate is
        set and no exact strategy succeeded (``optimal=False``).

    Raises
    ------
    SolverUnavailableError
        If no exact strategy could produce a key and allow_approximate is
        False.
    ValueError
        If no key exists (rows identical on every column beyond what
        epsilon_pairs allows), or for bad arguments.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"a": [0, 0, 1, 1], "b": [0, 1, 0, 1], "c": [0, 0, 0, 1]})
    >>> key = compute_gold_key(df, df.index)
    >>> key, key.optimal
    (['a', 'b'], True)
    """
    failures: list[str] = []
    for strategy in ("ilp", "exact"):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", NotProvenOptimalWarning)
                key = find_key(
                    df,
                    rows,
                    columns=columns,
                    costs=costs,
                    strategy=strategy,
                    epsilon_pairs=epsilon_pairs,
                    time_limit=time_limit,
                )
        except SolverUnavailableError as exc:
            failures.append(f"{strategy}: {exc}")
            continue
        except RangeError as exc:
            failures.append(f"{strategy}: {exc}")
            continue
        if key.optimal:
            return key
        failures.append(
            f"{strategy}: stopped at time_limit={time_limit:g}s without proving optimality"
        )
    if allow_approximate:
        return find_key(
            df, rows, columns=columns, costs=costs, strategy="greedy", epsilon_pairs=epsilon_pairs
        )
    raise SolverUnavailableError(
        "no exact strategy produced a provably optimal key ("
        + "; ".join(failures)
        + "); pass allow_approximate=True to accept a greedy key (not a valid "
        "optimality baseline)"
    )


def compute_gold_next_column_probabilistic(
    df: pd.DataFrame,
    state: CandidateState,
    model: RowVoiModel,
    *,
    candidate_cols: Sequence[Hashable] | None = None,
    objective: Literal["mi", "expected_entropy_reduction"] = "mi",
) -> Hashable | None:
    """Compute the 'gold standard' next column under a model.

    Exhaustive and independent of the engine's fast path: every candidate
    column is scored in plain numpy under the model (its binning and noise
    model), and the best is returned (ties to the earlier column).

    - ``"mi"``: I(R; Y) = H(Y) - H(Y | R), from the answer distribution;
    - ``"expected_entropy_reduction"``: H(R|E) - E_y[H(R | E, Y = y)], from
      the posterior of every branch.

    The two are equal in exact arithmetic; they are computed by different
    routes, which is what makes this a useful check of a policy.

    Parameters
    ----------
    df : DataFrame
        The data table.
    state : CandidateState
        Current state (non-empty).
    model : RowVoiModel
        Trained model.
    candidate_cols : Sequence[Hashable] or None
        Columns to consider (default: all not yet observed).
    objective : {"mi", "expected_entropy_reduction"}
        Objective function.

    Returns
    -------
    Hashable or None
        Optimal next column; None when no column is informative.

    Examples
    --------
    >>> import pandas as pd
    >>> from rowvoi import CandidateState
    >>> from rowvoi.ml import RowVoiModel
    >>> df = pd.DataFrame({"a": [0, 0, 1, 1], "b": [0, 1, 2, 3]})
    >>> model = RowVoiModel(noise=0.2).fit(df)
    >>> compute_gold_next_column_probabilistic(df, CandidateState.uniform(df.index), model)
    'b'
    """
    if objective not in ("mi", "expected_entropy_reduction"):
        raise ValueError(
            f"objective must be 'mi' or 'expected_entropy_reduction', got {objective!r}"
        )
    model._check_fitted()
    check_frame(df)
    check_state(state)
    cols = columns_to_consider(df, state, candidate_cols)
    model._check_known(cols, "columns")
    if len(state.candidate_rows) < 2 or not cols:
        return None
    pos = _candidates.positions(df, state)
    codes = _candidates.encode_columns_at(df, cols, pos, transform=model._transform)
    p = state.posterior / state.posterior.sum()
    h_r = _entropy(p)
    best, best_val = None, 1e-12
    for j, col in enumerate(cols):
        vals, inv = np.unique(codes[j], return_inverse=True)
        inv = inv.reshape(-1)
        k = len(vals)
        if k < 2:
            continue
        e = model.noise
        hit, miss = 1.0 - e, e / (k - 1)
        lik = np.where(np.arange(k)[:, None] == inv[None, :], hit, miss)  # (k, n)
        joint = lik * p[None, :]
        p_y = joint.sum(axis=1)
        if objective == "mi":
            h_y_given_r = _entropy(np.array([hit] + [miss] * (k - 1))) if e > 0 else 0.0
            value = _entropy(p_y) - h_y_given_r
        else:
            expected = sum(py * _entropy(joint[y] / py) for y, py in enumerate(p_y) if py > 0)
            value = h_r - expected
        if value > best_val * (1 + 1e-12):
            best, best_val = col, value
    return best


def _entropy(p: np.ndarray) -> float:
    q = p[p > 0]
    return float(-(q * np.log2(q)).sum()) if q.size else 0.0


@dataclass
class KeyEvalResult:
    """Result of evaluating a key-finding method.

    Attributes
    ----------
    method : str
        Name of the method.
    rows : tuple[Hashable, ...]
        The candidate row set.
    key : list[Hashable]
        Columns selected by the method.
    key_cost : float
        Total cost of the key.
    pair_coverage : float
        Fraction of pairs distinguished.
    runtime_sec : float
        Time taken to compute the key.
    gold_key : list[Hashable] or None
        Optimal key if computed.
    gold_cost : float or None
        Cost of optimal key.
    optimality_gap : float or None
        key_cost - gold_cost.
    """

    method: str
    rows: tuple[Hashable, ...]
    key: list[Hashable]
    key_cost: float
    pair_coverage: float
    runtime_sec: float
    gold_key: list[Hashable] | None = None
    gold_cost: float | None = None
    optimality_gap: float | None = None


def evaluate_keys(
    df: pd.DataFrame,
    candidate_sets: Sequence[Sequence[Hashable]],
    methods: Mapping[str, Callable[[pd.DataFrame, Sequence[Hashable]], Sequence[Hashable]]],
    *,
    costs: Mapping[Hashable, float] | None = None,
    epsilon_pairs: float = 0.0,
    gold_solver: Callable[..., Sequence[Hashable]] | None = None,
) -> list[KeyEvalResult]:
    """Evaluate multiple key-finding methods on candidate sets.

    Each method is called as ``method(df, rows)`` and timed with a
    monotonic clock. The gold key, when ``gold_solver`` is given, is
    ``gold_solver(df, rows)``; when it raises (no exact solution within its
    limits, say), that set simply has no baseline and no gap. An exception
    from a method under evaluation propagates: a broken method is not
    scored.

    Parameters
    ----------
    df : DataFrame
        The data table.
    candidate_sets : Sequence[Sequence[Hashable]]
        Test cases (row subsets).
    methods : Mapping[str, Callable]
        Methods to evaluate (name -> function).
    costs : Mapping[Hashable, float] or None
        Column costs (default 1.0), used for key_cost and gold_cost.
    epsilon_pairs : float
        Coverage tolerance, in [0, 1]: a key covering less than
        1 - epsilon_pairs of the pairs still gets a result, with its
        pair_coverage showing the shortfall.
    gold_solver : Callable or None
        Function to compute optimal solution, e.g.
        ``lambda df, rows: compute_gold_key(df, rows, costs=costs)``.

    Returns
    -------
    list[KeyEvalResult]
        Evaluation results for each method and candidate set (set-major).

    Examples
    --------
    >>> import pandas as pd
    >>> from rowvoi import find_key
    >>> df = pd.DataFrame({"a": [0, 0, 1, 1], "b": [0, 1, 0, 1], "id": [1, 2, 3, 4]})
    >>> costs = {"id": 3.0}
    >>> res = evaluate_keys(df, [[0, 1, 2, 3]],
    ...                     {"greedy": lambda d, r: find_key(d, r, costs=costs),
    ...                      "ids": lambda d, r: ["id"]},
    ...                     costs=costs,
    ...                     gold_solver=lambda d, r: compute_gold_key(d, r, costs=costs))
    >>> [(r.method, r.key_cost, r.pair_coverage, r.optimality_gap) for r in res]
    [('greedy', 2.0, 1.0, 0.0), ('ids', 3.0, 1.0, 1.0)]
    """
    check_frame(df)
    if not isinstance(methods, Mapping):
        raise TypeError("methods must be a mapping of name -> function")
    _v.fraction("epsilon_pairs", epsilon_pairs)
    cost_of: dict[Hashable, float] = dict(
        zip(df.columns, resolve_costs(df, costs, list(df.columns)).tolist())
    )
    results: list[KeyEvalResult] = []
    for rows in candidate_sets:
        rows_t = tuple(resolve_rows(df, rows))
        gold_key = gold_cost = None
        if gold_solver is not None:
            try:
                gold_key = list(gold_solver(df, list(rows_t)))
                gold_cost = float(sum(cost_of[c] for c in gold_key))
            except Exception:  # noqa: BLE001 - "no baseline" is the documented outcome
                gold_key = gold_cost = None
        for name, method in methods.items():
            t0 = time.perf_counter()
            key = list(method(df, list(rows_t)))
            runtime = time.perf_counter() - t0
            key = resolve_columns(df, key, f"the key of method {name!r}")
            key_cost = float(sum(cost_of[c] for c in key))
            coverage = pairwise_coverage(df, list(rows_t), key)
            gap = key_cost - gold_cost if gold_cost is not None else None
            results.append(
                KeyEvalResult(
                    name, rows_t, key, key_cost, coverage, runtime, gold_key, gold_cost, gap
                )
            )
    return results


@dataclass
class PolicyEvalStats:
    """Statistics for a policy's performance.

    Attributes
    ----------
    name : str
        Policy name.
    mean_steps : float
        Average number of steps to termination.
    mean_cost : float
        Average total cost.
    mean_final_entropy : float
        Average final entropy.
    mean_final_pair_coverage : float
        Average final pairwise coverage (of the starting candidates' pairs,
        by the columns asked).
    std_steps : float
        Standard deviation of steps.
    std_cost : float
        Standard deviation of cost.
    success_rate : float
        Fraction of runs that achieved uniqueness on the true row.
    """

    name: str
    mean_steps: float
    mean_cost: float
    mean_final_entropy: float
    mean_final_pair_coverage: float
    std_steps: float = 0.0
    std_cost: float = 0.0
    success_rate: float = 0.0


def evaluate_policies(
    df: pd.DataFrame,
    candidate_sets: Sequence[Sequence[Hashable]],
    policies: Mapping[str, Policy],
    *,
    feature_costs: Mapping[Hashable, float] | None = None,
    stop: StopRules | None = None,
    n_repeats: int = 1,
    random_state: int | np.random.Generator | None = None,
) -> list[PolicyEvalStats]:
    """Evaluate disambiguation policies on candidate sets.

    For every candidate set (of at least two rows) and repeat, a true row is
    drawn from ``random_state``'s generator and every policy runs a fresh
    :class:`~rowvoi.session.DisambiguationSession` against that same row.

    Parameters
    ----------
    df : DataFrame
        The data table.
    candidate_sets : Sequence[Sequence[Hashable]]
        Test cases (row subsets).
    policies : Mapping[str, Policy]
        Policies to evaluate (name -> policy).
    feature_costs : Mapping[Hashable, float] or None
        Cost of each feature.
    stop : StopRules or None
        Stopping criteria (default: target_unique=True).
    n_repeats : int
        Number of times to run each policy per candidate set (>= 1).
    random_state : int, Generator or None
        Seed for drawing the true rows.

    Returns
    -------
    list[PolicyEvalStats]
        Performance statistics for each policy (policies with no run are
        left out).

    Examples
    --------
    >>> import pandas as pd
    >>> from rowvoi.policies import CandidateMIPolicy, RandomPolicy
    >>> df = pd.DataFrame({"a": [0, 0, 1, 1], "b": [0, 1, 0, 1], "c": [0, 0, 0, 1]})
    >>> stats = evaluate_policies(df, [[0, 1, 2, 3]], {"mi": CandidateMIPolicy()},
    ...                           n_repeats=4, random_state=0)
    >>> stats[0].name, stats[0].mean_steps, stats[0].success_rate
    ('mi', 2.0, 1.0)
    """
    check_frame(df)
    if not isinstance(policies, Mapping):
        raise TypeError("policies must be a mapping of name -> policy")
    repeats = _v.integer("n_repeats", n_repeats, 1)
    if stop is None:
        stop = StopRules(target_unique=True)
    rng = _rng(random_state)
    runs: dict[str, list[tuple[int, float, float, float, bool]]] = {n: [] for n in policies}
    for rows in candidate_sets:
        rows_l = resolve_rows(df, rows)
        if len(rows_l) < 2:
            continue
        for _ in range(repeats):
            true_row = rows_l[int(rng.integers(len(rows_l)))]
            for name, policy in policies.items():
                session = DisambiguationSession(
                    df, rows_l, policy=policy, feature_costs=feature_costs
                )
                steps = session.run(stop, true_row=true_row)
                final = session.state
                coverage = steps[-1].pair_coverage_after if steps else 0.0
                success = final.is_unique and final.unique_row == true_row
                runs[name].append(
                    (
                        len(steps),
                        session.cumulative_cost,
                        final.entropy,
                        float(coverage or 0.0),
                        bool(success),
                    )
                )
    out = []
    for name, rs in runs.items():
        if not rs:
            continue
        a = np.array([r[:4] for r in rs], dtype=np.float64)
        out.append(
            PolicyEvalStats(
                name,
                float(a[:, 0].mean()),
                float(a[:, 1].mean()),
                float(a[:, 2].mean()),
                float(a[:, 3].mean()),
                float(a[:, 0].std()),
                float(a[:, 1].std()),
                float(np.mean([r[4] for r in rs])),
            )
        )
    return out


@dataclass
class AcquisitionResult:
    """Result of a single feature acquisition simulation.

    Attributes
    ----------
    subset_size : int
        Size of the candidate set.
    steps_used : int
        Number of queries made.
    unique_identified : bool
        Whether unique row was found.
    optimal_steps : int or None
        Size of minimal key if computed.
    cols_used : list[Hashable] or None
        Sequence of columns queried.
    """

    subset_size: int
    steps_used: int
    unique_identified: bool
    optimal_steps: int | None = None
    cols_used: list[Hashable] | None = None


def benchmark_policy(
    df: pd.DataFrame,
    policy: Policy,
    subset_sizes: Sequence[int],
    n_samples: int,
    *,
    compute_optimal: bool = True,
    max_cols_for_exact: int = 10,
    feature_costs: Mapping[Hashable, float] | None = None,
    random_state: int | np.random.Generator | None = None,
) -> dict[int, list[AcquisitionResult]]:
    """Benchmark a policy across different subset sizes.

    For each size, ``n_samples`` candidate sets are sampled and a true row
    drawn from each (all from ``random_state``'s generator); the policy runs
    a session to uniqueness. ``optimal_steps`` is the number of columns in a
    provably minimal key of the set (:func:`compute_gold_key` with unit
    costs), computed when ``compute_optimal`` and df has at most
    ``max_cols_for_exact`` columns; None when it cannot be proven.

    Parameters
    ----------
    df : DataFrame
        The data table.
    policy : Policy
        Policy to benchmark.
    subset_sizes : Sequence[int]
        Different candidate set sizes to test.
    n_samples : int
        Number of samples per size.
    compute_optimal : bool
        Whether to compute optimal key size.
    max_cols_for_exact : int
        Max columns for exact solution.
    feature_costs : Mapping[Hashable, float] or None
        Column costs.
    random_state : int, Generator or None
        Random seed.

    Returns
    -------
    dict[int, list[AcquisitionResult]]
        Results keyed by subset size.

    Examples
    --------
    >>> import pandas as pd
    >>> from rowvoi.policies import CandidateMIPolicy
    >>> df = pd.DataFrame({"a": [0, 0, 1, 1, 2], "b": [0, 1, 0, 1, 0]})
    >>> res = benchmark_policy(df, CandidateMIPolicy(), [2, 4], 3, random_state=0)
    >>> sorted(res), all(r.unique_identified for rs in res.values() for r in rs)
    ([2, 4], True)
    """
    check_frame(df)
    count = _v.integer("n_samples", n_samples, 0)
    _v.integer("max_cols_for_exact", max_cols_for_exact, 0)
    rng = _rng(random_state)
    stop = StopRules(target_unique=True)
    out: dict[int, list[AcquisitionResult]] = {}
    for size in subset_sizes:
        size = _v.integer("subset sizes", size, 1)
        results = []
        for rows in sample_candidate_sets(df, subset_size=size, n_samples=count, random_state=rng):
            true_row = rows[int(rng.integers(len(rows)))]
            session = DisambiguationSession(df, rows, policy=policy, feature_costs=feature_costs)
            steps = session.run(stop, true_row=true_row)
            optimal = None
            if compute_optimal and df.shape[1] <= max_cols_for_exact:
                try:
                    optimal = len(compute_gold_key(df, rows, time_limit=10.0))
                except (SolverUnavailableError, ValueError):
                    optimal = None
            results.append(
                AcquisitionResult(
                    size, len(steps), session.state.is_unique, optimal, [s.col for s in steps]
                )
            )
        out[size] = results
    return out
