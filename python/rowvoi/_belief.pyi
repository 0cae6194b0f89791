"""Type stubs of the compiled module ``rowvoi._belief`` (cython/_belief.pyx).

Arrays in, arrays out; every kernel runs with the GIL released.
"""

from typing import Final, TypedDict

import numpy as np
import numpy.typing as npt

NONE: Final[int]
MIN_GAIN: Final[float]

class _MutualInformation(TypedDict):
    mi: npt.NDArray[np.float64]
    h_col: npt.NDArray[np.float64]
    n_values: npt.NDArray[np.uint64]
    pairs: npt.NDArray[np.uint64]
    h_rows: float
    best: int

def entropy(weights: npt.ArrayLike) -> float: ...
def filter_codes(
    codes: npt.ArrayLike, posterior: npt.ArrayLike, value: int
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.float64]]: ...
def reweight(posterior: npt.ArrayLike, likelihoods: npt.ArrayLike) -> npt.NDArray[np.float64]: ...
def likelihood(codes: npt.ArrayLike, value: int, noise: float) -> npt.NDArray[np.float64]: ...
def mutual_information(
    codes: npt.ArrayLike,
    rows: npt.ArrayLike | None,
    posterior: npt.ArrayLike,
    noise: float = 0.0,
    costs: npt.ArrayLike | None = None,
    n_threads: int = 0,
) -> _MutualInformation: ...
