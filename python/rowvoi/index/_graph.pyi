"""Type stubs of the compiled module ``rowvoi.index._graph`` (cython/index/_graph.pyx).

The public API is :mod:`rowvoi.graph`.  Id arrays are C-contiguous int64
(edge types uint16, vectors 2-D float32) or None where a parameter allows.
"""

from typing import Final

import numpy as np
import numpy.typing as npt
from typing_extensions import disjoint_base

_I64 = npt.NDArray[np.int64]

NO_TIME: Final[int]
MAX_ITEMS: Final[int]
DIRS: Final[dict[str, int]]
KINDS: Final[dict[str, int]]
METRICS: Final[dict[str, int]]

def trim() -> None: ...
def check_vectors(vectors: npt.NDArray[np.float32], n_threads: int = 0) -> None: ...

@disjoint_base
class GraphHandle:
    """Owns one rv_graph handle (immutable once built)."""

    @staticmethod
    def create(
        node_ids: _I64 | None,
        node_time: _I64 | None,
        src: _I64 | None,
        dst: _I64 | None,
        etype: npt.NDArray[np.uint16] | None,
        etime: _I64 | None,
        doc_entity: _I64 | None,
        vectors: npt.NDArray[np.float32] | None,
        doc_vector_row: _I64 | None,
        metric: str,
        implicit_nodes: bool,
        borrow: bool,
        unit_rows: bool,
        finite_rows: bool,
    ) -> GraphHandle: ...
    @property
    def n_nodes(self) -> int: ...
    @property
    def n_edges(self) -> int: ...
    @property
    def n_docs(self) -> int: ...
    @property
    def dim(self) -> int: ...
    @property
    def max_entity_docs(self) -> int: ...
    def find_nodes(self, ids: _I64) -> _I64: ...
    def node_ids(self) -> _I64: ...
    def neighbours(
        self, node: int, dir: str, type: int, window: _I64 | None
    ) -> tuple[_I64, _I64]: ...
    def degree(self, node: int, dir: str, type: int) -> int: ...
    def edges(self, edges: _I64) -> tuple[_I64, _I64, npt.NDArray[np.int32], _I64]: ...
    def entity_docs(self, entities: _I64) -> _I64: ...
    def doc_entities(self, docs: _I64) -> _I64: ...
    def bfs(
        self,
        seeds: _I64,
        max_depth: int,
        budget: int,
        dir: str,
        types: npt.NDArray[np.uint16] | None,
        window: _I64 | None,
    ) -> tuple[_I64, npt.NDArray[np.uint32]]: ...
    def facts(
        self,
        seeds: _I64,
        depth: int,
        max_edges: int,
        per_subject: int,
        bridge_types: npt.NDArray[np.uint16] | None,
        budget: int,
        window: _I64 | None,
    ) -> tuple[_I64, npt.NDArray[np.uint32]]: ...
    def doc_hops(self, sel: _I64, hops: int, window: _I64 | None) -> _I64: ...
    def similar(
        self,
        sel: _I64,
        kinds: str,
        query: npt.NDArray[np.float32],
        max_new: int,
        window: _I64 | None,
    ) -> tuple[_I64, npt.NDArray[np.float32]]: ...
    def top_k(
        self, kinds: str, query: npt.NDArray[np.float32], k: int, window: _I64 | None
    ) -> tuple[_I64, npt.NDArray[np.float32]]: ...
    def score_docs(
        self, query: npt.NDArray[np.float32], docs: _I64
    ) -> npt.NDArray[np.float32]: ...
