"""Weighted set cover: the solver engine shared by keys and RAG context selection.

Nothing here knows what an element means. :class:`rowvoi.keys.KeyProblem`
builds a universe of row pairs on top of it; ``rowvoi.rag.context`` builds a
universe of claims. The seven strategies and the greedy path planner are
common to both; the hot loops run in the C engine (``librowvoi``) on
bitsets, with the GIL released.

Conventions
-----------
* **Costs** must be finite and >= 0; a missing entry is 1.0. A free set
  (cost 0) that covers something is infinitely good value: greedy and the
  path planner take free sets first (the one adding most first), the other
  strategies fix them in and solve the rest with the paid sets (no optimum
  changes), and a free set that the selection does not need is dropped.
  Negative, NaN and infinite costs are a ``ValueError``.
* **Epsilon** is the fraction of the universe that may stay uncovered: a
  selection must cover at least ``ceil((1 - epsilon) * len(universe))``
  elements. Elements that no set covers can never be covered; when they
  exceed what epsilon allows, the solvers cover every coverable element and
  the shortfall shows in :meth:`SetCoverProblem.coverage`.
* **Ties** go to the set that comes first in ``sets``.
* **Order of a solution**: greedy returns sets in the order it picked them;
  the other strategies return them in input order.
* **Determinism**: ``sa``, ``ga``, ``hybrid`` and the randomised rounding of
  ``lp`` take a ``seed`` (default 0); the same inputs and seed give the same
  answer. A ``time_limit`` makes the result depend on machine speed.
* **Solvers**: only ``ilp`` needs pulp and an LP solver (``pip install
  "rowvoi[optimization]"``); ``lp`` solves its relaxation in the engine.

Examples
--------
>>> from rowvoi.setcover import solve_set_cover
>>> sets = {"a": {1, 2}, "b": {3}, "c": {1, 2, 3}}
>>> solve_set_cover(sets, costs={"c": 5.0})
['a', 'b']
>>> solve_set_cover(sets, costs={"c": 5.0}, strategy="exact").optimal
True
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

import rowvoi._setcover as _setcover
from rowvoi import _validate as _v
from rowvoi._validate import STRATEGIES
from rowvoi.errors import (
    SolverUnavailableError,
    warn_not_optimal,
)

__all__ = [
    "SolverUnavailableError",
    "CoverStep",
    "CoverPath",
    "CoverSolution",
    "SetCoverProblem",
    "solve_set_cover",
    "coverage_of",
    "STRATEGIES",
]

Strategy = Literal["greedy", "exact", "ilp", "sa", "ga", "lp", "hybrid"]


@dataclass
class CoverStep:
    """A single step in a cover path showing incremental progress.

    Attributes
    ----------
    name : Hashable
        The set added in this step.
    newly_covered : int
        Number of elements newly covered by this set.
    cumulative_covered : int
        Total elements covered up to and including this step.
    total_elements : int
        Size of the universe.
    marginal_cost : float
        Cost of adding this specific set.
    cumulative_cost : float
        Total cost up to and including this step.
    newly_covered_weight : float or None
        Weighted coverage gain (for weighted objectives).
    cumulative_covered_weight : float or None
        Total weighted coverage so far.
    """

    name: Hashable
    newly_covered: int
    cumulative_covered: int
    total_elements: int
    marginal_cost: float
    cumulative_cost: float
    newly_covered_weight: float | None = None
    cumulative_covered_weight: float | None = None

    @property
    def coverage(self) -> float:
        """Fraction of the universe covered so far (1.0 for an empty universe)."""
        if self.total_elements == 0:
            return 1.0
        return self.cumulative_covered / self.total_elements


def _prefix_for_budget(steps: Sequence[Any], budget: float, key: str) -> list[Hashable]:
    _v.real("budget", budget)
    out = []
    for step in steps:
        if step.cumulative_cost > budget * (1 + 1e-12):
            break
        out.append(getattr(step, key))
    return out


def _prefix_for_epsilon(steps: Sequence[Any], epsilon: float, key: str) -> list[Hashable]:
    _v.fraction("epsilon", epsilon)
    out = []
    for step in steps:
        out.append(getattr(step, key))
        if 1.0 - step.coverage <= epsilon + 1e-12:
            break
    return out


@dataclass
class CoverPath:
    """Ordered sequence of sets and their contribution to coverage/cost.

    Attributes
    ----------
    steps : list[CoverStep]
        Ordered list of steps showing incremental progress.

    Examples
    --------
    >>> path = SetCoverProblem({"a": {1, 2}, "b": {3}, "c": {4}}).plan_path()
    >>> path.names()
    ['a', 'b', 'c']
    >>> path.prefix_for_budget(2)
    ['a', 'b']
    >>> path.prefix_for_epsilon(0.25)
    ['a', 'b']
    >>> path.coverage_curve()
    [(1.0, 0.5), (2.0, 0.75), (3.0, 1.0)]
    """

    steps: list[CoverStep]

    def names(self) -> list[Hashable]:
        """Return the ordered list of set names in the path."""
        return [s.name for s in self.steps]

    def prefix_for_budget(self, budget: float) -> list[Hashable]:
        """Return the longest prefix of sets whose cumulative_cost <= budget."""
        return _prefix_for_budget(self.steps, budget, "name")

    def prefix_for_epsilon(self, epsilon: float) -> list[Hashable]:
        """Return the shortest prefix that leaves <= epsilon fraction uncovered.

        When no prefix gets there (some elements are covered by no set), the
        whole path is returned: it is the best coverage available.
        """
        if self.steps and self.steps[0].total_elements == 0:
            return []
        return _prefix_for_epsilon(self.steps, epsilon, "name")

    def coverage_curve(self) -> list[tuple[float, float]]:
        """Return the coverage curve as (cumulative_cost, coverage_fraction) points."""
        return [(s.cumulative_cost, s.coverage) for s in self.steps]


class CoverSolution(list[Hashable]):
    """A selection of set names (a ``list``) with what the solver knows about it.

    Attributes
    ----------
    strategy : str
        The strategy that produced it.
    cost : float
        Total cost of the selection.
    covered : int
        Elements of the universe it covers.
    total : int
        Size of the universe.
    optimal : bool
        True only when optimality was proven (``exact`` or ``ilp`` finished,
        or the ``lp`` bound meets the cover's cost).
    timed_out : bool
        True when an exact strategy stopped at ``time_limit``; the selection
        is then the best found and is not proven optimal (a
        :class:`rowvoi.errors.NotProvenOptimalWarning` is also emitted).
    lower_bound : float
        A proven lower bound on the cost of every selection reaching the
        same coverage: for ``lp`` the LP bound (rounded up to an integer when
        every cost is an integer, since every selection then costs one), the
        cost itself when ``optimal``, else 0.0 (nothing proven).
        ``cost / lower_bound`` bounds how far from optimal the selection can
        be.
    lp_bound : float or None
        ``lp`` only: the relaxation's own lower bound on the fractional
        optimum (the fractional optimum itself within 1 + 0.05 for a full
        cover); None for the other strategies.
    """

    def __init__(
        self,
        names: Iterable[Hashable] = (),
        *,
        strategy: str = "",
        cost: float = 0.0,
        covered: int = 0,
        total: int = 0,
        optimal: bool = False,
        timed_out: bool = False,
        lower_bound: float | None = None,
        lp_bound: float | None = None,
    ):
        super().__init__(names)
        self.strategy = strategy
        self.cost = float(cost)
        self.covered = int(covered)
        self.total = int(total)
        self.optimal = bool(optimal)
        self.timed_out = bool(timed_out)
        lb = self.cost if (lower_bound is None and self.optimal) else (lower_bound or 0.0)
        self.lower_bound = float(lb)
        self.lp_bound = None if lp_bound is None else float(lp_bound)

    @property
    def coverage(self) -> float:
        """Fraction of the universe covered (1.0 for an empty universe)."""
        return 1.0 if self.total == 0 else self.covered / self.total


def required_count(n_elements: int, epsilon: float) -> int:
    """Elements a selection must cover so that at most epsilon stay uncovered."""
    allowed = math.floor(epsilon * n_elements + 1e-9)
    return max(0, n_elements - allowed)


def solve_engine(
    engine: Any,
    names: Sequence[Hashable],
    costs: np.ndarray,
    n_elements: int,
    strategy: str,
    epsilon: float,
    time_limit: float,
    seed: int,
) -> CoverSolution:
    """Run a strategy on a built engine problem; shared by sets, keys and RAG.

    Returns a :class:`CoverSolution` of names. Targets ``required_count``
    elements, or every coverable one when fewer are coverable.
    """
    coverable = int(engine.n_coverable)
    required = min(required_count(n_elements, epsilon), coverable)
    lower_bound: float | None = None
    lp_bound: float | None = None
    if strategy == "ilp":
        from rowvoi import _lp

        pulp, solver = _ilp_solver(time_limit)
        idx, optimal, timed_out = _lp.solve(
            engine, costs, required, time_limit, pulp=pulp, solver=solver
        )
        # the ILP may take free sets it does not need (they cost nothing):
        # drop them, highest index first, as the engine's solvers do
        for i in sorted((i for i in idx if costs[i] == 0), reverse=True):
            rest = [j for j in idx if j != i]
            if (int(engine.covered(rest)[0]) if rest else 0) >= required:
                idx = rest
    else:
        # the engine takes a uint64 seed: larger seeds use their low 64 bits
        idx, info = engine.solve(
            strategy, n_required=required, time_limit=time_limit, seed=seed & 0xFFFFFFFFFFFFFFFF
        )
        optimal, timed_out = info["optimal"], info["timed_out"]
        lower_bound = float(info["lower_bound"])
        if strategy == "lp":
            lp_bound = float(info["lp_bound"])
        if timed_out:
            warn_not_optimal(
                f"strategy {strategy!r} reached time_limit={time_limit:g}s before "
                "proving optimality; returning the best cover found "
                "(solution.optimal is False)"
            )
    idx = [int(i) for i in idx]
    covered = int(engine.covered(idx)[0]) if idx else 0
    cost = float(sum(costs[i] for i in idx))
    return CoverSolution(
        [names[i] for i in idx],
        strategy=strategy,
        cost=cost,
        covered=covered,
        total=n_elements,
        optimal=optimal,
        timed_out=timed_out,
        lower_bound=lower_bound,
        lp_bound=lp_bound,
    )


def _solver_runs(pulp: Any, solver: Any) -> bool:
    """Whether ``solver`` actually solves a one-variable problem here.

    ``available()`` only finds a binary: a CBC built for another
    architecture (``pulp[cbc]`` on a mismatched host) is found and then
    killed, and would raise ``PulpSolverError`` inside ``solve()``. The
    probe (minimise x subject to x >= 1, x binary) runs once per solver
    class and binary path; the answer is remembered for the process.

    >>> import pulp
    >>> _solver_runs(pulp, pulp.PULP_CBC_CMD(msg=False))
    True
    """
    try:
        where = solver.available()
    except Exception:  # noqa: BLE001 - a solver that cannot even look is unusable
        return False
    key = (type(solver).__name__, str(where))
    known = _SOLVER_RUNS.get(key)
    if known is not None:
        return known
    ok = False
    try:
        probe = pulp.LpProblem("rowvoi_solver_probe", pulp.LpMinimize)
        x = pulp.LpVariable("x", lowBound=0, upBound=1, cat=pulp.LpBinary)
        probe += x
        probe += x >= 1
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            probe.solve(solver)
        ok = pulp.LpStatus.get(probe.status) == "Optimal" and round(x.value() or 0) == 1
    except Exception:  # noqa: BLE001 - killed, missing library, bad output: unusable
        ok = False
    _SOLVER_RUNS[key] = ok
    return ok


#: (solver class, binary path) -> whether its probe solved (see _solver_runs).
_SOLVER_RUNS: dict[tuple[str, str], bool] = {}


def _find_solver(pulp: Any, *, time_limit: float | None = None) -> Any:
    """A configured pulp solver that runs here, or None when this machine has none.

    The one place where ``ilp`` looks for a solver, so a test (ours or a
    user's) can replace it -- ``monkeypatch.setattr(rowvoi.setcover,
    "_find_solver", lambda pulp, **kw: None)`` -- to simulate a machine
    without one. Preference: a CBC on the system (``COIN_CMD``, which PuLP
    4 keeps), pulp's bundled CBC (``PULP_CBC_CMD``, deprecated in PuLP 3),
    then HiGHS (``highspy``); the first whose ``available()`` finds it and
    that passes :func:`_solver_runs` wins. Solvers are built quiet
    (``msg=False``) with ``timeLimit`` set when ``time_limit`` is a positive
    number of seconds. No other strategy needs a solver: ``lp`` solves its
    relaxation in the engine.

    Parameters
    ----------
    pulp : module
        The imported ``pulp`` package.
    time_limit : float or None
        Seconds the solver may run (None or 0: no limit).

    Returns
    -------
    pulp solver or None
        Ready for ``LpProblem.solve``; None when no candidate is usable.

    Examples
    --------
    >>> import pulp
    >>> _find_solver(pulp, time_limit=5).timeLimit
    5
    """
    kwargs: dict[str, Any] = {"msg": False}
    if time_limit:
        kwargs["timeLimit"] = time_limit
    # pulp 3.x marks its bundled CBC deprecated; that is pulp's concern, not
    # our users', so the warning is silenced here.
    for name in ("COIN_CMD", "PULP_CBC_CMD", "HiGHS"):
        cls = getattr(pulp, name, None)
        if cls is None:
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                solver = cls(**kwargs)
                if solver.available() and _solver_runs(pulp, solver):
                    return solver
        except Exception:  # noqa: BLE001 - a broken solver entry is just unusable
            continue
    return None


#: What to install for the ``ilp`` strategy, named in its errors.
INSTALL_ILP = 'pip install "rowvoi[optimization]"'


def _ilp_solver(time_limit: float) -> tuple[Any, Any]:
    """(pulp, solver) for ``ilp``, or SolverUnavailableError naming the install."""
    try:
        import pulp
    except ImportError as exc:
        raise SolverUnavailableError(
            f"strategy 'ilp' needs pulp, which cannot be imported ({exc}). Install "
            f"it with: {INSTALL_ILP} (the optimization extra: pulp with a CBC "
            "solver). rowvoi does not substitute another strategy; strategy='exact' "
            "proves an optimum without pulp, and strategy='lp' gives the LP bound"
        ) from exc
    solver = _find_solver(pulp, time_limit=time_limit or None)
    if solver is None:
        raise SolverUnavailableError(
            "strategy 'ilp' found no LP solver that runs on this machine: pulp's "
            "bundled CBC is missing or cannot run here (PuLP 4 bundles none). Install "
            'one: pip install "pulp[cbc]" (a CBC wheel), a CBC on PATH (e.g. apt '
            "install coinor-cbc) or HiGHS (pip install highspy). rowvoi does not "
            "substitute another strategy; strategy='exact' proves an optimum without "
            "a solver, and strategy='lp' gives the LP bound"
        )
    return pulp, solver


class SetCoverProblem:
    """Weighted set cover over an arbitrary universe.

    Parameters
    ----------
    sets : Mapping[Any, Iterable[Any]]
        Maps each selectable set to the elements it covers. Elements must be
        hashable.
    universe : Iterable[Any] or None
        Elements that must be covered. If None, the union of all sets is used.
        Pass it explicitly when some elements are covered by no set (they then
        count against coverage rather than being silently ignored). Elements
        of a set that are not in an explicit universe are ignored.
    costs : Mapping[Any, float] or None
        Cost of selecting each set. Missing entries default to 1.0. Every
        cost must be finite and >= 0 (0: a free set); a cost for a name that
        is not in ``sets`` is a ``ValueError``.

    Examples
    --------
    >>> problem = SetCoverProblem(
    ...     {"a": ["x", "y"], "b": ["y", "z"], "c": ["z"]},
    ...     universe=["x", "y", "z", "w"])
    >>> problem.solve()
    ['a', 'b']
    >>> problem.coverage(["a", "b"])
    0.75
    >>> problem.is_cover(["a", "b"], epsilon=0.25)
    True
    """

    def __init__(
        self,
        sets: Mapping[Any, Iterable[Any]],
        *,
        universe: Iterable[Any] | None = None,
        costs: Mapping[Any, float] | None = None,
    ):
        if not isinstance(sets, Mapping):
            raise TypeError(
                f"sets must be a mapping of name -> elements, got {type(sets).__name__}"
            )
        self._names: list[Hashable] = list(sets.keys())
        self._pos = {name: i for i, name in enumerate(self._names)}
        explicit = universe is not None
        index: dict[Hashable, int] = {}
        if explicit:
            if isinstance(universe, (str, bytes)):
                raise TypeError("universe must be an iterable of elements, not a string")
            for e in universe:  # type: ignore[union-attr]
                _hashable(e, "universe element")
                index.setdefault(e, len(index))
        offsets = np.zeros(len(self._names) + 1, dtype=np.uint64)
        chunks: list[np.ndarray] = []
        for i, name in enumerate(self._names):
            elems = sets[name]
            if isinstance(elems, (str, bytes)) or not isinstance(elems, Iterable):
                raise TypeError(
                    f"sets[{name!r}] must be an iterable of elements, got {type(elems).__name__}"
                )
            ids = []
            for e in elems:
                _hashable(e, f"element of set {name!r}")
                k = index.get(e)
                if k is None:
                    if explicit:
                        continue
                    k = index[e] = len(index)
                ids.append(k)
            arr = np.unique(np.asarray(ids, dtype=np.uint32)) if ids else np.zeros(0, np.uint32)
            chunks.append(arr)
            offsets[i + 1] = offsets[i] + len(arr)
        self._elements: list[Hashable] = list(index.keys())
        self._index = index
        self._csr = (offsets, np.concatenate(chunks) if chunks else np.zeros(0, np.uint32))
        self._costs = np.ones(len(self._names), dtype=np.float64)
        if costs is not None:
            _v.mapping("costs", costs, "name -> cost")
            for name, value in costs.items():
                if name not in self._pos:
                    raise ValueError(f"costs names {name!r}, which is not one of the sets")
                self._costs[self._pos[name]] = _v.cost(name, value)
        flat = self._csr[1]
        self._engine = _setcover.CoverProblem.from_csr(
            len(self._elements), offsets, flat, self._costs
        )

    @classmethod
    def from_arrays(
        cls,
        names: Sequence[Hashable],
        universe: Sequence[Hashable],
        offsets: np.ndarray,
        elements: np.ndarray,
        costs: np.ndarray | None = None,
    ) -> SetCoverProblem:
        """Build from compressed rows, skipping per-element Python work.

        Set ``i`` covers ``universe[k]`` for ``k`` in
        ``elements[offsets[i]:offsets[i + 1]]``. ``costs`` (one per set) must
        already be validated (finite, >= 0). Used by adapters that hold their
        incidence as arrays (RAG support matrices).

        >>> import numpy as np
        >>> p = SetCoverProblem.from_arrays(["a", "b"], ["x", "y"],
        ...                                 np.array([0, 1, 2]), np.array([0, 1]))
        >>> p.solve(), p.covered(["b"])
        (['a', 'b'], {'y'})
        """
        self = cls.__new__(cls)
        self._names = list(names)
        if len(self._pos_of(self._names)) != len(self._names):
            raise ValueError("set names must be unique")
        self._pos = self._pos_of(self._names)
        self._elements = list(universe)
        self._index = {e: k for k, e in enumerate(self._elements)}
        off = np.ascontiguousarray(offsets, dtype=np.uint64)
        el = np.ascontiguousarray(elements, dtype=np.uint32)
        if len(off) != len(self._names) + 1:
            raise ValueError("offsets must have one entry per set plus one")
        self._csr = (off, el)
        self._costs = (
            np.ones(len(self._names))
            if costs is None
            else np.ascontiguousarray(costs, dtype=np.float64)
        )
        self._engine = _setcover.CoverProblem.from_csr(len(self._elements), off, el, self._costs)
        return self

    @staticmethod
    def _pos_of(names: Sequence[Hashable]) -> dict[Hashable, int]:
        return {name: i for i, name in enumerate(names)}

    # ------------------------------------------------------------ accessors
    @property
    def names(self) -> list[Hashable]:
        """The set names, in input order."""
        return list(self._names)

    @property
    def universe(self) -> frozenset[Hashable]:
        """The elements to cover, as a frozenset (as the reference package gave a set).

        :meth:`uncoverable` and the solutions keep the input order where
        order matters.
        """
        return frozenset(self._elements)

    def _indices(self, names: Iterable[Hashable]) -> list[int]:
        if isinstance(names, (str, bytes)):
            names = [names]
        out = []
        for name in names:
            try:
                out.append(self._pos[name])
            except (KeyError, TypeError):
                raise KeyError(f"{name!r} is not one of the sets") from None
        return out

    def cost(self, name: Hashable) -> float:
        """Cost of selecting one set (1.0 when unspecified)."""
        return float(self._costs[self._indices([name])[0]])

    def total_cost(self, names: Iterable[Hashable]) -> float:
        """Total cost of a selection (each distinct set counted once)."""
        return float(sum(self._costs[i] for i in dict.fromkeys(self._indices(names))))

    def covered(self, names: Iterable[Hashable]) -> set[Hashable]:
        """Elements of the universe covered by a selection."""
        idx = self._indices(names)
        if not idx:
            return set()
        _, mask = self._engine.covered(idx, with_mask=True)
        return {self._elements[k] for k in np.flatnonzero(mask)}

    def _covered_count(self, names: Iterable[Hashable]) -> int:
        idx = self._indices(names)
        return int(self._engine.covered(idx)[0]) if idx else 0

    def coverage(self, names: Iterable[Hashable]) -> float:
        """Fraction of the universe covered by a selection (1.0 if the universe is empty)."""
        m = len(self._elements)
        return 1.0 if m == 0 else self._covered_count(names) / m

    def is_cover(self, names: Iterable[Hashable], *, epsilon: float = 0.0) -> bool:
        """Whether a selection covers all but at most epsilon of the universe."""
        eps = _v.fraction("epsilon", epsilon)
        return self._covered_count(names) >= required_count(len(self._elements), eps)

    def uncoverable(self) -> list[Hashable]:
        """Elements of the universe that no set covers, in universe order."""
        counts = self._engine.element_counts()
        return [self._elements[k] for k in np.flatnonzero(counts == 0)]

    # -------------------------------------------------------------- solving
    def solve(
        self,
        strategy: Strategy = "greedy",
        *,
        epsilon: float = 0.0,
        time_limit: float | None = None,
        seed: int = 0,
    ) -> CoverSolution:
        """Find a minimum-cost selection covering (1-epsilon) of the universe.

        Parameters
        ----------
        strategy : {"greedy", "exact", "ilp", "sa", "ga", "lp", "hybrid"}
            Algorithm to use:

            - "greedy": greedy cost/gain ratio (ln m approximation)
            - "exact": branch and bound in C that proves optimality
            - "ilp": integer linear programming through pulp (CBC); the
              only strategy that needs pulp and a solver
            - "sa": simulated annealing metaheuristic
            - "ga": genetic algorithm metaheuristic
            - "lp": linear programming relaxation with rounding, in the C
              engine (no pulp): the relaxation within a factor 1 + 0.05
              (multiplicative weights, certified by a dual bound), rounded
              by threshold, by value and by seeded randomised rounding,
              each completed greedily and stripped of redundant sets;
              ``lower_bound`` carries the LP bound
            - "hybrid": simulated annealing seeding a genetic algorithm
        epsilon : float
            Allow this fraction of the universe to remain uncovered.
        time_limit : float or None
            Maximum time in seconds (exact, ilp, lp, sa, ga, hybrid). When
            ``exact`` or ``ilp`` run out of time they return the best cover
            found with ``optimal=False`` and ``timed_out=True``, and emit a
            :class:`rowvoi.errors.NotProvenOptimalWarning`.
        seed : int
            Seed of ``sa``, ``ga``, ``hybrid`` and the randomised rounding of
            ``lp``: an integer >= 0 (seeds of 2**64 and above use their low
            64 bits).

        Returns
        -------
        CoverSolution
            The selected set names (a list) with ``cost``, ``covered``,
            ``optimal``, ``timed_out`` and ``lower_bound``.

        Raises
        ------
        ValueError
            If strategy is not one of the supported names (the message
            starts "Unknown strategy"), or epsilon is not in [0, 1].
        rowvoi.SolverUnavailableError
            For ``ilp`` when pulp cannot be imported (the message says
            ``pip install "rowvoi[optimization]"``) or no LP solver runs here
            (:func:`_find_solver` found none; the message names
            ``pulp[cbc]``).
        rowvoi.errors.SolverTimeoutError
            When ``ilp`` hits its time limit before finding any cover.

        Examples
        --------
        >>> p = SetCoverProblem({"a": {1, 2}, "b": {2, 3}, "c": {3, 4}, "d": {1, 4}})
        >>> sorted(p.solve("exact"))
        ['a', 'c']
        >>> sorted(p.solve("sa", seed=7)) == sorted(p.solve("sa", seed=7))
        True
        >>> tri = SetCoverProblem({"ab": {1, 2}, "bc": {2, 3}, "ca": {3, 1}},
        ...                       costs={"ab": 1.5, "bc": 1.5, "ca": 1.5})
        >>> cover = tri.solve("lp")  # every set at 1/2 costs 2.25; a cover, 3
        >>> cover.cost, 2.1 < cover.lower_bound <= 2.25, cover.optimal
        (3.0, True, False)
        >>> unit = SetCoverProblem({"ab": {1, 2}, "bc": {2, 3}, "ca": {3, 1}})
        >>> cover = unit.solve("lp")  # integer costs: the bound rounds up to 2
        >>> cover.cost, cover.lower_bound, cover.optimal, 1.4 < cover.lp_bound <= 1.5
        (2.0, 2.0, True, True)
        """
        name = _v.strategy(strategy)
        eps = _v.fraction("epsilon", epsilon)
        tl = _v.time_limit(time_limit)
        sd = _v.seed("seed", seed)
        return solve_engine(
            self._engine, self._names, self._costs, len(self._elements), name, eps, tl, sd
        )

    def element_weights(
        self, weighting: Literal["uniform", "idf"] = "uniform"
    ) -> dict[Hashable, float]:
        """Per-element weights used by the path planner.

        "idf" gives each element the weight 1 / (number of sets covering it),
        so scarce coverage is prioritized. Elements covered by no set get
        weight 1.0. "uniform" gives every element 1.0.

        >>> SetCoverProblem({"a": {1, 2}, "b": {2}}).element_weights("idf")
        {1: 1.0, 2: 0.5}
        """
        w = self._weights(weighting)
        if w is None:
            return dict.fromkeys(self._elements, 1.0)
        return {e: float(w[k]) for k, e in enumerate(self._elements)}

    def _weights(self, weighting: str) -> np.ndarray | None:
        if weighting == "uniform":
            return None
        if weighting != "idf":
            raise ValueError(f"unknown weighting {weighting!r}; choose 'uniform' or 'idf'")
        counts = self._engine.element_counts().astype(np.float64)
        return np.where(counts > 0, 1.0 / np.maximum(counts, 1.0), 1.0)

    def plan_path(
        self,
        *,
        objective: Literal["coverage", "entropy"] = "coverage",
        weighting: Literal["uniform", "idf"] = "uniform",
    ) -> CoverPath:
        """Build a greedy ordering of sets, tracking coverage and cost per step.

        Unlike :meth:`solve`, which returns an unordered selection, this returns
        the order in which to acquire sets, so callers can cut the sequence
        at a budget or a coverage target. The path continues until no set
        covers anything new.

        Parameters
        ----------
        objective : {"coverage", "entropy"}
            - "coverage": gain = weighted newly covered elements
            - "entropy": gain = reduction in log2(1 + uncovered weight), the
              log size of the cluster of still-uncovered elements; it favours
              cheap sets more strongly than "coverage" does
        weighting : {"uniform", "idf"}
            - "uniform": all elements weighted equally
            - "idf": elements covered by fewer sets weighted higher
              (see :meth:`element_weights`)

        Each step is chosen by gain per unit cost; ties go to the earlier set.

        Examples
        --------
        >>> p = SetCoverProblem({"a": {1, 2, 3}, "b": {3, 4}, "c": {4}},
        ...                     costs={"a": 3.0})
        >>> p.plan_path().names()
        ['b', 'a']
        >>> [round(c, 2) for _, c in p.plan_path().coverage_curve()]
        [0.5, 1.0]
        """
        if objective not in ("coverage", "entropy"):
            raise ValueError(f"unknown objective {objective!r}; choose 'coverage' or 'entropy'")
        w = self._weights(weighting)
        order, newly, _ = self._engine.plan_path(objective, w)
        m = len(self._elements)
        steps = []
        cum_cost = 0.0
        cum_cov = 0
        cum_w = 0.0
        seen = np.zeros(m, dtype=bool)
        for s, n_new in zip(order.tolist(), newly.tolist()):
            c = float(self._costs[s])
            cum_cost += c
            cum_cov += int(n_new)
            new_w = None
            if w is not None:
                off, el = self._csr
                elems = np.unique(el[int(off[s]) : int(off[s + 1])]).astype(np.int64)
                new_w = float(w[elems][~seen[elems]].sum())
                seen[elems] = True
                cum_w += new_w
            steps.append(
                CoverStep(
                    self._names[s],
                    int(n_new),
                    cum_cov,
                    m,
                    c,
                    cum_cost,
                    new_w,
                    cum_w if w is not None else None,
                )
            )
        return CoverPath(steps)


def _hashable(e: Any, what: str) -> None:
    try:
        hash(e)
    except TypeError:
        raise TypeError(
            f"{what} {e!r} is unhashable ({type(e).__name__}); use tuples or strings"
        ) from None


def solve_set_cover(
    sets: Mapping[Any, Iterable[Any]],
    *,
    universe: Iterable[Any] | None = None,
    costs: Mapping[Any, float] | None = None,
    strategy: Strategy = "greedy",
    epsilon: float = 0.0,
    time_limit: float | None = None,
    seed: int = 0,
) -> CoverSolution:
    """Solve a weighted set cover instance.

    Convenience wrapper around :meth:`SetCoverProblem.solve`.

    >>> solve_set_cover({"a": {1}, "b": {2}, "ab": {1, 2}})
    ['ab']
    """
    return SetCoverProblem(sets, universe=universe, costs=costs).solve(
        strategy, epsilon=epsilon, time_limit=time_limit, seed=seed
    )


def coverage_of(
    sets: Mapping[Any, Iterable[Any]],
    selection: Sequence[Hashable],
    *,
    universe: Iterable[Any] | None = None,
) -> float:
    """Fraction of the universe covered by selection.

    >>> coverage_of({"a": {1, 2}, "b": {3}}, ["a"])
    0.6666666666666666
    """
    return SetCoverProblem(sets, universe=universe).coverage(selection)
