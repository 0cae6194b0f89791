"""ILP set cover through pulp (CBC bundled, HiGHS if installed).

The LP relaxation (strategy ``lp``) is not here: the C engine solves it
(``rv_cover_lp``), so only ``ilp`` needs pulp.

Private: :func:`rowvoi.setcover.solve_engine` (behind
:meth:`rowvoi.setcover.SetCoverProblem.solve` and
:class:`rowvoi.keys.KeyProblem`) finds pulp and a solver through
:func:`rowvoi.setcover._find_solver` and calls :func:`solve` with them.
Elements that the same sets cover are merged first (the engine lists the
distinct patterns with their multiplicity), which keeps the model small for
pair universes.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from rowvoi.errors import SolverTimeoutError, SolverUnavailableError, warn_not_optimal


def solve(
    engine: Any,
    costs: np.ndarray,
    required: int,
    time_limit: float,
    *,
    pulp: Any,
    solver: Any,
) -> tuple[list[int], bool, bool]:
    """Solve the ILP with pulp. Returns (set indices ascending, optimal, timed_out).

    ``pulp`` is the imported package and ``solver`` a configured solver from
    :func:`rowvoi.setcover._find_solver`; finding them (and failing with
    SolverUnavailableError) is the caller's job.
    """
    n = int(engine.n_sets)
    if required <= 0 or n == 0:
        return [], True, False
    sig, mult = engine.distinct_elements()
    full = required >= int(mult.sum())
    cat = pulp.LpBinary
    prob = pulp.LpProblem("rowvoi_set_cover", pulp.LpMinimize)

    def var(name: str) -> Any:
        if hasattr(prob, "add_variable"):
            return prob.add_variable(name, 0, 1, cat=cat)
        return pulp.LpVariable(name, lowBound=0, upBound=1, cat=cat)

    x = [var(f"x{i}") for i in range(n)]
    prob += pulp.lpSum(float(costs[i]) * x[i] for i in range(n))
    if full:
        sig = _minimal_rows(sig)
    covering = [np.flatnonzero(row).tolist() for row in sig]
    if full:
        for k, sets in enumerate(covering):
            prob += pulp.lpSum(x[i] for i in sets) >= 1, f"e{k}"
    else:
        y = [var(f"y{k}") for k in range(len(covering))]
        for k, sets in enumerate(covering):
            prob += y[k] <= pulp.lpSum(x[i] for i in sets), f"e{k}"
        prob += pulp.lpSum(int(mult[k]) * y[k] for k in range(len(covering))) >= required
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        prob.solve(solver)
    # pulp reports the *model* status "Optimal" even for a time-limited
    # incumbent; only sol_status says whether optimality was proven.
    sol_status = getattr(prob, "sol_status", None)
    values = np.array([v.value() if v.value() is not None else 0.0 for v in x])
    if sol_status == pulp.LpSolutionOptimal:
        chosen = [i for i in range(n) if values[i] > 0.5]
        return chosen, True, False
    if sol_status == pulp.LpSolutionIntegerFeasible:
        chosen = [i for i in range(n) if values[i] > 0.5]
        warn_not_optimal(
            f"strategy 'ilp' reached time_limit={time_limit:g}s before proving "
            "optimality; returning the best cover found (solution.optimal is False)"
        )
        return chosen, False, True
    if pulp.LpStatus.get(prob.status) == "Not Solved" or sol_status in (
        pulp.LpSolutionNoSolutionFound,
        None,
    ):
        raise SolverTimeoutError(
            f"strategy 'ilp' found no cover within time_limit={time_limit:g}s; "
            "raise the limit or use strategy='greedy'"
        )
    raise SolverUnavailableError(
        f"the LP solver failed with status {pulp.LpStatus.get(prob.status)!r}"
    )


def _minimal_rows(sig: np.ndarray, limit: int = 6000) -> np.ndarray:
    """Drop dominated elements of a full cover.

    Covering an element whose covering sets are a subset of another's also
    covers the other, so only elements with minimal covering sets need a
    constraint. Rows are distinct (the engine merged duplicates); a row is
    dropped when some other row's sets are a proper subset of its own.
    Skipped above `limit` rows, where the d x d check would cost too much.
    """
    d = sig.shape[0]
    if d < 2 or d > limit:
        return sig
    a = sig.astype(np.float32)
    # outside[i, j] = number of sets covering i but not j; 0 means sets(i) ⊆ sets(j)
    outside = a @ (1.0 - a).T
    subset = outside == 0
    np.fill_diagonal(subset, False)
    dominated = subset.any(axis=0)
    kept: np.ndarray = sig[~dominated]
    return kept
