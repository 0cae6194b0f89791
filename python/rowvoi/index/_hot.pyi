# Stub of the compiled module rowvoi.index._hot (cython/index/_hot.pyx): the per-query
# hot path of a corpus search -- the query vector's float32 unit form, and a
# dense search's hits built from a record table's arrays, and the whole
# unfiltered dense search of a vector in one call (private; the reference
# is rowvoi.corpus.retrieval.rank._dense_hits_reference); a hit's text, metadata
# and one-sided explain are built when first read (Deferred).
from collections.abc import Callable
from typing import Any, final, overload

import numpy as np
from typing_extensions import CapsuleType, disjoint_base

DEFERRED: str
DEFERRED_FIELDS: tuple[str, ...]

def unit_query(x: np.ndarray) -> np.ndarray: ...
def order(
    art: np.ndarray,
    surface: np.ndarray,
    pos: np.ndarray,
    scores: np.ndarray,
    tie: np.ndarray | None = None,
) -> np.ndarray: ...
def union(
    a: np.ndarray, b: np.ndarray, n_records: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...
def rrf(rank_a: np.ndarray, rank_b: np.ndarray, rrf_k: int) -> np.ndarray: ...
def blend(
    ids: np.ndarray,
    rank_a: np.ndarray,
    rank_b: np.ndarray,
    scores_a: np.ndarray,
    scores_b: np.ndarray,
    alpha: float,
    sat_k: float,
    flat: Any = None,
    query_vector: np.ndarray | None = None,
    n_threads: int = 0,
    bm25: Any = None,
    query: str | bytes | None = None,
    head: int = 0,
    max_a: float = ...,
    max_b: float = ...,
) -> np.ndarray: ...
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

@final
class Deferred:
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...
    def text(self) -> str: ...
    def metadata(self) -> dict[str, Any]: ...
    def explain(self) -> dict[str, Any]: ...
    def __copy__(self) -> Deferred: ...
    def __deepcopy__(self, memo: Any) -> Deferred: ...

@final
class DeferredField:
    @property
    def name(self) -> str: ...
    def __init__(self, name: str, default: Any = ...) -> None: ...
    def __get__(self, instance: Any, owner: Any = None, /) -> Any: ...

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
def lexical_search(
    t: HitTable,
    bm25: CapsuleType,
    query: str | bytes,
    k: int,
    fetch_k: int,
    kplus1: bool,
    collapse: bool,
    source: str | None,
    answered: str,
    mode: str,
    filt: CapsuleType | None = None,
) -> tuple[list[Any], int, None] | tuple[None, np.ndarray, np.ndarray]: ...
def fused_hits(
    t: HitTable,
    pos: np.ndarray,
    ids: np.ndarray,
    scores: np.ndarray,
    d_rank: np.ndarray,
    d_score: np.ndarray,
    l_rank: np.ndarray,
    l_score: np.ndarray,
    evidence: np.ndarray | None,
    weights: dict[str, float] | None,
    source: str | None,
    mode: str,
    fusion: str | None,
    answered_dense: str,
) -> list[Any]: ...
