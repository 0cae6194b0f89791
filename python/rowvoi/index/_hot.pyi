# Stub of the compiled module rowvoi.index._hot (cython/index/_hot.pyx): the per-query
# hot path of a corpus search -- the query vector's float32 unit form, and a
# dense search's hits built from a record table's arrays, and the whole
# unfiltered dense search of a vector in one call (private; the reference
# is rowvoi.corpus.retrieval.rank._dense_hits_reference).
from collections.abc import Callable
from typing import Any, overload

import numpy as np
from typing_extensions import CapsuleType, disjoint_base

def unit_query(x: np.ndarray) -> np.ndarray: ...
def any_nonzero(x: np.ndarray) -> bool: ...

@disjoint_base
class HitTable:
    def __init__(
        self,
        ids: Any,
        art: Any,
        kind: Any,
        surface: Any,
        kinds: list[str],
        texts: bytes,
        t_off: Any,
        metadata: bytes,
        m_off: Any,
        filter_fields: bytes,
        f_off: Any,
        artifact_ids: bytes,
        a_off: Any,
        hit_type: type,
        loads: Callable[[bytes], Any],
    ) -> None: ...
    def __len__(self) -> int: ...

@overload
def dense_hits(
    t: HitTable,
    ids: np.ndarray,
    scores: np.ndarray,
    pos: None,
    k: int,
    collapse: bool,
    source: str | None,
    answered: str,
    mode: str,
) -> list[Any] | None: ...
@overload
def dense_hits(
    t: HitTable,
    ids: np.ndarray,
    scores: np.ndarray,
    pos: np.ndarray,
    k: int,
    collapse: bool,
    source: str | None,
    answered: str,
    mode: str,
) -> list[Any]: ...
def dense_search(
    t: HitTable,
    flat: CapsuleType,
    x: np.ndarray,
    k: int,
    fetch_k: int,
    collapse: bool,
    kplus1: bool,
    n_threads: int,
    source: str | None,
    answered: str,
    mode: str,
) -> list[Any] | None: ...
def fused_hits(
    t: HitTable,
    pos: np.ndarray,
    ids: np.ndarray,
    scores: np.ndarray,
    d_rank: np.ndarray,
    d_score: np.ndarray,
    l_rank: np.ndarray,
    l_score: np.ndarray,
    evidence: dict[int, float],
    weights: dict[str, float] | None,
    source: str | None,
    mode: str,
    fusion: str | None,
    answered_dense: str,
) -> list[Any]: ...
