"""Type stubs of the compiled module ``rowvoi._setcover`` (cython/_setcover.pyx).

The public API is :mod:`rowvoi.setcover` and :mod:`rowvoi.keys`.  Code
matrices are (n_cols, n_rows) int32; anything array-like is converted.
"""

from typing import Final, Literal, NoReturn, TypedDict, overload

import numpy as np
import numpy.typing as npt
from typing_extensions import disjoint_base

STRATEGIES: Final[dict[str, int]]
OBJECTIVES: Final[dict[str, int]]
LP_EPS: Final[float]

class _SolveInfo(TypedDict):
    cost: float
    covered: int
    optimal: bool
    work: int
    seconds: float
    timed_out: bool
    lower_bound: float
    lp_bound: float
    message: str

class _LPInfo(TypedDict):
    value: float
    lower_bound: float
    converged: bool
    work: int
    seconds: float
    timed_out: bool

def version() -> tuple[str, int]: ...
def header_version() -> tuple[int, int, int, int, str]: ...

@disjoint_base
class CoverProblem:
    """Owns one rv_cover handle."""

    @staticmethod
    def from_csr(
        n_elements: int,
        offsets: npt.ArrayLike,
        elements: npt.ArrayLike,
        costs: npt.ArrayLike | None = None,
    ) -> CoverProblem: ...
    @staticmethod
    def from_codes(
        codes: npt.ArrayLike, costs: npt.ArrayLike | None = None, max_bytes: int = 0
    ) -> CoverProblem: ...
    @property
    def n_sets(self) -> int: ...
    @property
    def n_elements(self) -> int: ...
    @property
    def n_coverable(self) -> int: ...
    def element_counts(self) -> npt.NDArray[np.uint32]: ...
    @overload
    def covered(
        self, sel: npt.ArrayLike, with_mask: Literal[False] = False
    ) -> tuple[int, None]: ...
    @overload
    def covered(
        self, sel: npt.ArrayLike, with_mask: Literal[True]
    ) -> tuple[int, npt.NDArray[np.bool_]]: ...
    @overload
    def covered(
        self, sel: npt.ArrayLike, with_mask: bool = False
    ) -> tuple[int, npt.NDArray[np.bool_] | None]: ...
    def distinct_elements(self) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.uint64]]: ...
    def solve(
        self,
        strategy: str,
        n_required: int | None = None,
        time_limit: float = 0.0,
        seed: int = 0,
        iterations: int = 0,
        population: int = 0,
        generations: int = 0,
        lp_eps: float = 0.0,
        lp_rounds: int = 0,
    ) -> tuple[npt.NDArray[np.uint32], _SolveInfo]: ...
    def lp(
        self, n_required: int | None = None, eps: float = 0.05, time_limit: float = 0.0
    ) -> tuple[npt.NDArray[np.float64], _LPInfo]: ...
    def plan_path(
        self, objective: str = "coverage", weights: npt.ArrayLike | None = None
    ) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint64], npt.NDArray[np.float64]]: ...

def keys_plan_path(
    codes: npt.ArrayLike,
    costs: npt.ArrayLike | None = None,
    objective: str = "coverage",
    stop_unresolved: int = 0,
) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint64], npt.NDArray[np.float64], int]: ...
def keys_unresolved(codes: npt.ArrayLike, cols: npt.ArrayLike) -> int: ...
@overload
def keys_count_values(
    keys: npt.ArrayLike,
    weights: npt.ArrayLike | None = None,
    mass: None = None,
    n_buckets: int = 1,
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64], None, npt.NDArray[np.uint64]]: ...
@overload
def keys_count_values(
    keys: npt.ArrayLike,
    weights: npt.ArrayLike | None,
    mass: npt.ArrayLike,
    n_buckets: int = 1,
) -> tuple[
    npt.NDArray[np.uint64], npt.NDArray[np.uint64], npt.NDArray[np.float64], npt.NDArray[np.uint64]
]: ...
@overload
def keys_count_values(
    keys: npt.ArrayLike,
    weights: npt.ArrayLike | None = None,
    *,
    mass: npt.ArrayLike,
    n_buckets: int = 1,
) -> tuple[
    npt.NDArray[np.uint64], npt.NDArray[np.uint64], npt.NDArray[np.float64], npt.NDArray[np.uint64]
]: ...
@overload
def keys_group_scores(
    codes: npt.ArrayLike, offsets: npt.ArrayLike, entropy: Literal[False] = False
) -> tuple[npt.NDArray[np.uint64], None]: ...
@overload
def keys_group_scores(
    codes: npt.ArrayLike, offsets: npt.ArrayLike, entropy: Literal[True]
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.float64]]: ...
@overload
def keys_group_scores(
    codes: npt.ArrayLike, offsets: npt.ArrayLike, entropy: bool = False
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.float64] | None]: ...
def keys_group_refine(
    code: npt.ArrayLike, offsets: npt.ArrayLike
) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint64]]: ...
def _raise_status(code: int) -> NoReturn: ...
