"""Type stubs of the compiled module ``rowvoi.index._idset`` (cython/index/_idset.pyx).

The public type is :class:`rowvoi.index.idset.IdSet`; search kernels of the other
compiled modules take the set as the capsule :meth:`IdSetCore.capsule` returns.
"""

from typing import Final

import numpy as np
import numpy.typing as npt
from typing_extensions import CapsuleType, disjoint_base

MAX_ID: Final[int]

@disjoint_base
class IdSetCore:
    """Owns one rv_idset handle (immutable once built)."""

    @staticmethod
    def create(ids: npt.NDArray[np.int64]) -> IdSetCore: ...
    def __len__(self) -> int: ...
    def contains(self, id: int) -> bool: ...
    def ids(self) -> npt.NDArray[np.int64]: ...
    def capsule(self) -> CapsuleType: ...

def _last_error() -> str: ...
