"""Index files, loaded: a generation's BM25 and vector indexes, from its
base files, minus its tombstones, plus its delta.

The base files of a generation (:mod:`rowvoi.corpus.storage.layout`) hold
every record live at its last compaction; the rows committed since
(``tombstones``, records added with their ``delta_vectors``) are applied
on load, with the engine's incremental BM25 and flat index, so the scores
equal those of a fresh build. A file is opened only after its name passed
:func:`~rowvoi.corpus.storage.layout.check_index_name`, never through a
symbolic link; one that is gone raises :class:`BaseFileGone` (a newer
commit replaced it: the reader retries), one that will not load, or holds
other records than its generation's, :class:`BaseFileDamaged` with the
repair command.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from rowvoi.corpus.storage.layout import FLAT_STORAGE, HNSW_PARAMS, check_index_name
from rowvoi.corpus.storage.snapshot import Snapshot
from rowvoi.corpus.storage.store import BaseFileGone, CorpusStore, damaged_file_error
from rowvoi.errors import IndexFormatError

if TYPE_CHECKING:
    from rowvoi.index.flat import FlatIndex
    from rowvoi.index.hnsw import HNSWIndex
    from rowvoi.index.lexical import BM25Index

_T = TypeVar("_T")

__all__ = [
    "index_path",
    "load_problem",
    "base_count",
    "default_lexical",
    "new_lexical",
    "load_lexical",
    "load_dense",
]


def index_path(store: CorpusStore, kind: str, name: Any) -> Path:
    """The path of a base's index file ``name`` of ``kind`` in ``store``,
    after :func:`~rowvoi.corpus.storage.layout.check_index_name`.

    >>> index_path(CorpusStore("/c"), "hnsw", "hnsw.2").as_posix()
    '/c/hnsw.2'
    """
    return store.path / check_index_name(kind, name)


def load_problem(store: CorpusStore, name: str, exc: BaseException) -> str:
    """The loader's message without its status prefix and the file's path."""
    msg = str(exc)
    for prefix in ("RV_E_CORRUPT: ", "RV_E_VERSION: "):
        if msg.startswith(prefix):
            msg = msg[len(prefix) :]
    for path in (str(store.path / name) + "/", str(store.path / name)):
        if msg.startswith(path):
            msg = msg[len(path) :].lstrip(": ") or msg
            break
    return msg or type(exc).__name__


def base_count(snap: Snapshot) -> int:
    """The records the base index files of the snapshot's generation hold:
    the live base records plus the tombstoned ones.

    >>> store = CorpusStore.memory(); store.create()
    >>> with store.snapshot() as snap:
    ...     base_count(snap)
    0
    """
    c = snap.counts()
    return c["n_records"] - c["n_delta"] + c["n_tombstones"]


def _load_base(store: CorpusStore, kind: str, name: str, load: Callable[..., _T]) -> _T:
    """``load(path)`` of the base file ``name`` of index ``kind`` (never
    through a link). A file that is no longer there was replaced by a newer
    commit: :class:`BaseFileGone` (retry); one that is there but will not
    load is damage, named with what :func:`load_problem` found."""
    path = index_path(store, kind, name)
    try:
        return load(path, follow_symlinks=False)
    except OSError:
        if not os.path.lexists(path):
            raise BaseFileGone(path) from None
        raise
    except IndexFormatError as exc:
        if not os.path.lexists(path):
            raise BaseFileGone(path) from None
        raise damaged_file_error(store, name, load_problem(store, name, exc), exc.code) from None


def _check_base_size(store: CorpusStore, snap: Snapshot, name: str, n: int, what: str) -> None:
    want = base_count(snap)
    if n != want:
        raise damaged_file_error(
            store,
            name,
            f"holds {n} {what} where generation {snap.generation} has {want} "
            "(a file of another corpus or generation?)",
        )


#: The lexical settings a build uses unless told otherwise: the default
#: analyzer and Lucene BM25 (k1 = 1.2, b = 0.75).
def default_lexical() -> dict[str, Any]:
    """``{"analyzer": ..., "bm25": {...}}`` of a new corpus.

    >>> default_lexical()["bm25"]
    {'variant': 'lucene', 'k1': 1.2, 'b': 0.75}
    """
    from rowvoi.index.text import Analyzer

    return {"analyzer": Analyzer().to_dict(), "bm25": {"variant": "lucene", "k1": 1.2, "b": 0.75}}


def new_lexical(conf: Mapping[str, Any]) -> BM25Index:
    """An empty BM25 index with a corpus's lexical settings.

    >>> new_lexical(default_lexical()).params["variant"]
    'lucene'
    """
    from rowvoi.index.lexical import BM25Index
    from rowvoi.index.text import Analyzer

    return BM25Index(Analyzer.from_dict(conf["analyzer"]), **conf["bm25"])


def load_lexical(store: CorpusStore, snap: Snapshot) -> BM25Index:
    """The BM25 index of the snapshot's generation: the base file, minus
    the tombstones, plus the delta's texts (added with their record ids).

    Raises
    ------
    BaseFileGone
        The base file was deleted by a newer commit (retry).

    Examples
    --------
    >>> from rowvoi.corpus import build, from_mapping
    >>> c = build(from_mapping({"a": "lift", "b": "drag"}, embedder="hashing:8"),
    ...           store=CorpusStore.memory())
    >>> with c.store.snapshot() as snap:
    ...     len(load_lexical(c.store, snap)), load_dense(c.store, snap).dim
    (2, 8)
    """
    from rowvoi.index.lexical import BM25Index

    name = snap.base.get("lexical")
    if name:
        index = _load_base(store, "lexical", name, BM25Index.load)
        _check_base_size(store, snap, name, len(index), "documents")
    else:
        index = new_lexical(snap.state.get("lexical") or default_lexical())
    tomb = snap.tombstones()
    if len(tomb):
        index.delete(tomb)
    for ids, texts in snap.delta_texts():
        index.add(texts, ids=ids)
    return index


def load_dense(store: CorpusStore, snap: Snapshot) -> FlatIndex | HNSWIndex | None:
    """The vector index (inner product over unit vectors = cosine) of the
    snapshot's generation: base file, minus tombstones, plus delta vectors
    -- a :class:`~rowvoi.index.flat.FlatIndex`, or an
    :class:`~rowvoi.index.hnsw.HNSWIndex` for a corpus built with ``hnsw=True``.
    ``None`` when the corpus has no dimension yet (nothing was ever
    embedded).

    Raises
    ------
    BaseFileGone
        The base file was deleted by a newer commit (retry).

    Examples
    --------
    >>> store = CorpusStore.memory(); store.create()
    >>> with store.snapshot() as snap:
    ...     load_dense(store, snap) is None   # nothing embedded yet
    True
    """
    from rowvoi.index.flat import FlatIndex
    from rowvoi.index.hnsw import HNSWIndex

    dim = snap.state.get("dim")
    if not dim:
        return None
    name = snap.base.get("dense")
    hnsw = snap.base.get("hnsw")
    index: FlatIndex | HNSWIndex
    if hnsw or name:
        file = str(hnsw or name)
        if hnsw:
            index = _load_base(store, "hnsw", file, HNSWIndex.load)
        else:
            index = _load_base(store, "dense", file, FlatIndex.load)
        if index.dim != int(dim):
            raise damaged_file_error(
                store, file, f"holds {index.dim}-dimensional vectors; the corpus's are {dim}"
            )
        _check_base_size(store, snap, file, len(index), "vectors")
    elif snap.state.get("hnsw"):
        params = snap.state["hnsw"]
        if not isinstance(params, dict) or set(params) - set(HNSW_PARAMS):
            raise IndexFormatError(
                f"RV_E_CORRUPT: {store.path / 'docs.sqlite'}: HNSW settings {params!r} are "
                f"not a subset of {sorted(HNSW_PARAMS)}; the corpus was altered: rebuild it"
            )
        try:
            index = HNSWIndex(int(dim), metric="ip", **params)
        except ValueError as exc:  # the constructor's own checks
            raise IndexFormatError(
                f"RV_E_CORRUPT: {store.path / 'docs.sqlite'}: bad HNSW settings ({exc}); "
                "the corpus was altered: rebuild it"
            ) from None
    else:
        index = FlatIndex(int(dim), metric="ip", storage=FLAT_STORAGE)
    tomb = snap.tombstones()
    if len(tomb):
        index.remove(tomb)
    for ids, vecs in snap.delta_vectors(int(dim)):
        index.add(vecs, ids=ids)
    return index
