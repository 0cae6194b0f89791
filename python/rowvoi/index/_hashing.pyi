"""Type stubs of the compiled module ``rowvoi.index._hashing`` (cython/index/_hashing.pyx).

The public API is :class:`rowvoi.index.embed.HashingEmbedder`.
"""

from typing import Final

import numpy as np
import numpy.typing as npt
from typing_extensions import disjoint_base

MAX_DIM: Final[int]
MAX_WORD_NGRAMS: Final[int]
MAX_CHAR_NGRAM: Final[int]

@disjoint_base
class Hasher:
    """Owns one rv_hasher handle."""

    @staticmethod
    def create(
        dim: int, word_ngrams: int, char_min: int, char_max: int, char_weight: float, seed: int
    ) -> Hasher: ...
    @property
    def dim(self) -> int: ...
    @property
    def id(self) -> str: ...
    def embed(self, encoded: list[bytes], n_threads: int = 0) -> npt.NDArray[np.float32]: ...
