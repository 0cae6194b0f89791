"""Type stubs of the compiled module ``rowvoi.index._bm25`` (cython/index/_bm25.pyx).

The public API is :mod:`rowvoi.index.lexical`.  Texts are ``str`` or UTF-8
``bytes``; filters are id-set capsules from :meth:`rowvoi.index._idset.IdSetCore.capsule`.
"""

import os
from collections.abc import Iterable
from typing import Final, TypedDict

import numpy as np
import numpy.typing as npt
from typing_extensions import CapsuleType, disjoint_base

from rowvoi.index._text import _AnalyzerOptions

VARIANTS: Final[dict[str, int]]
VARIANT_NAMES: Final[dict[int, str]]
FORMAT_VERSION: Final[int]
NO_DOC: Final[int]
MAX_ID: Final[int]
STATES: Final[dict[int, str]]

class _Params(TypedDict):
    variant: str
    k1: float
    b: float
    delta: float

class _Info(TypedDict):
    n_docs: int
    n_live: int
    n_tombstoned: int
    n_stats_docs: int
    total_len: int
    avgdl: float
    n_terms: int
    n_postings: int
    n_segments: int
    memory_bytes: int
    next_id: int

class _SearchInfo(TypedDict):
    n_query_terms: int
    docs_scored: int
    postings_scored: int
    postings_total: int
    filter_docs: int
    filter_direct: bool

# (term_id, qtf, tf, df, idf, weight, contribution)
_ExplainRow = tuple[int, int, int, int, float, float, float]

@disjoint_base
class BM25Core:
    """Owns one rv_bm25 handle."""

    @staticmethod
    def create(
        analyzer: _AnalyzerOptions, variant: str, k1: float, b: float, delta: float
    ) -> BM25Core: ...
    @staticmethod
    def load(path: str | bytes | os.PathLike[str] | os.PathLike[bytes]) -> BM25Core: ...
    @staticmethod
    def load_fd(
        fd: int, name: str | bytes | os.PathLike[str] | os.PathLike[bytes]
    ) -> BM25Core: ...
    @staticmethod
    def from_bytes(data: bytes) -> BM25Core: ...
    def save(
        self, path: str | bytes | os.PathLike[str] | os.PathLike[bytes], mode: int | None = None
    ) -> None: ...
    def to_bytes(self) -> bytes: ...
    def add(
        self, texts: Iterable[str | bytes], ids: npt.NDArray[np.int64] | None = None
    ) -> npt.NDArray[np.int64]: ...
    def delete(self, ids: npt.NDArray[np.int64]) -> int: ...
    def contains(self, id: int) -> bool: ...
    def ids(self) -> npt.NDArray[np.int64]: ...
    def compact(self) -> None: ...
    def set_params(self, variant: str, k1: float, b: float, delta: float) -> None: ...
    def params(self) -> _Params: ...
    def analyzer(self) -> _AnalyzerOptions: ...
    def info(self) -> _Info: ...
    def capsule(self) -> CapsuleType: ...
    def n_live(self) -> int: ...
    def search(
        self,
        query: str | bytes,
        k: int,
        exhaustive: bool = False,
        filt: CapsuleType | None = None,
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32], _SearchInfo]: ...
    def search_terms(
        self,
        term_ids: npt.ArrayLike,
        k: int,
        exhaustive: bool = False,
        filt: CapsuleType | None = None,
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]: ...
    def search_batch(
        self,
        queries: Iterable[str | bytes],
        k: int,
        exhaustive: bool = False,
        n_threads: int = 0,
        filt: CapsuleType | None = None,
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32], npt.NDArray[np.uint32]]: ...
    def explain(self, query: str | bytes, doc: int) -> tuple[list[_ExplainRow], float, int]: ...
    def lookup(self, term: str | bytes) -> int: ...
    def term(self, term_id: int) -> str: ...
    def vocabulary(self) -> list[str]: ...
    def doc_freq(self, term_id: int) -> int: ...
    def doc_freqs(self) -> np.ndarray: ...
    def set_collection_stats(
        self, n_docs: int, total_len: int, dfs: np.ndarray | None
    ) -> None: ...
    def doc(self, doc: int) -> tuple[int, str]: ...
