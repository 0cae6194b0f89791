"""Type stubs of the compiled module ``rowvoi.index._encoder`` (cython/index/_encoder.pyx).

The public API is :class:`rowvoi.index.embed.MiniLMEmbedder` (its
``native-v2`` and ``native-v1`` recipes); the spec comes from
:func:`rowvoi.index._native.encoder_spec`, with ``"attention"``
(``"float32"``, the default, or ``"bfloat16"``) added by the recipe.
"""

from typing import Any

import numpy as np
import numpy.typing as npt
from typing_extensions import disjoint_base

@disjoint_base
class Encoder:
    """Owns one rv_encoder handle (immutable: encode from any thread)."""

    @staticmethod
    def create(spec: dict[str, Any], kernel: str | None = None) -> Encoder: ...
    @property
    def kernel(self) -> str: ...
    @property
    def dim(self) -> int: ...
    def encode(
        self, ids: npt.ArrayLike, offsets: npt.ArrayLike, types: npt.ArrayLike | None = None
    ) -> npt.NDArray[np.float32]: ...
