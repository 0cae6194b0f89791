"""Type stubs of the compiled module ``rowvoi.index._flat`` (cython/index/_flat.pyx).

The public API is :mod:`rowvoi.dense`.  Vectors are C-contiguous float32,
ids int64; filters are id-set capsules from :meth:`rowvoi.index._idset.IdSetCore.capsule`.
"""

import os
from typing import Final, NoReturn, TypedDict

import numpy as np
import numpy.typing as npt
from typing_extensions import Buffer, CapsuleType, disjoint_base

METRICS: Final[dict[str, int]]
METRIC_NAMES: Final[dict[int, str]]
STORAGES: Final[dict[str, int]]
STORAGE_NAMES: Final[dict[int, str]]
MAX_DIM: Final[int]
MAX_ID: Final[int]
FORMAT_VERSION: Final[int]
HNSW_MAX_M: Final[int]
HNSW_HEADER_SIZE: Final[int]

class _HnswInfo(TypedDict):
    element_count: int
    n_deleted: int
    n_upper: int
    max_level: int
    entry_point: int
    label_offset: int
    element_size: int

def hnsw_check(
    data: Buffer,
    dim: int,
    M: int,
    ef_construction: int,
    element_count: int,
    max_elements: int,
) -> _HnswInfo:
    """rv_hnsw_check over a buffer (bytes, mmap, ...): the info as a dict."""

@disjoint_base
class FlatHandle:
    """Owns one rv_flat handle."""

    @staticmethod
    def create(dim: int, metric: str, storage: str, rescore_factor: int) -> FlatHandle: ...
    @staticmethod
    def load(path: str | bytes | os.PathLike[str] | os.PathLike[bytes]) -> FlatHandle: ...
    @staticmethod
    def load_fd(
        fd: int, name: str | bytes | os.PathLike[str] | os.PathLike[bytes]
    ) -> FlatHandle: ...
    @staticmethod
    def from_bytes(data: bytes) -> FlatHandle: ...
    def to_bytes(self) -> bytes: ...
    def check_queries(self, queries: npt.NDArray[np.float32]) -> None: ...
    def save(
        self, path: str | bytes | os.PathLike[str] | os.PathLike[bytes], mode: int | None = None
    ) -> None: ...
    @property
    def dim(self) -> int: ...
    @property
    def metric(self) -> str: ...
    @property
    def storage(self) -> str: ...
    @property
    def rescore_factor(self) -> int: ...
    @property
    def size(self) -> int: ...
    @property
    def n_deleted(self) -> int: ...
    def add(
        self, vectors: npt.NDArray[np.float32], ids: npt.NDArray[np.int64] | None
    ) -> npt.NDArray[np.int64]: ...
    def remove(self, ids: npt.NDArray[np.int64]) -> int: ...
    def compact(self) -> None: ...
    def contains(self, id: int) -> bool: ...
    def ids(self) -> npt.NDArray[np.int64]: ...
    def get(self, ids: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]: ...
    def search(
        self,
        queries: npt.NDArray[np.float32],
        k: int,
        n_threads: int = 0,
        rescore_factor: int = 0,
        exact: bool = False,
        filt: CapsuleType | None = None,
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32], int]: ...
    def capsule(self) -> CapsuleType: ...
    def search1(
        self, query: npt.NDArray[np.float32], k: int, n_threads: int, exact: bool
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]: ...
    def rescore(
        self,
        queries: npt.NDArray[np.float32],
        cand: npt.NDArray[np.int64],
        k: int,
        n_threads: int = 0,
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32], npt.NDArray[np.int64]]: ...

def _raise_status(code: int) -> NoReturn: ...
