"""Index files, loaded: a generation's BM25 and vector indexes, from its
base files, minus its tombstones, plus its delta.

The base files of a generation (:mod:`rowvoi.corpus.storage.layout`) hold
every record live at its last compaction; the rows committed since
(``tombstones``, records added with their ``delta_vectors``) are applied
on load, with the engine's incremental BM25 and flat index, so the scores
equal those of a fresh build. What a snapshot says of them is read first
(:func:`read_delta`), then the files are loaded and the delta applied
(:func:`load_lexical`, :func:`load_dense`), so a search that opens its
generation goes through the snapshot once, then the index kernels. A file is opened only after its name passed
:func:`~rowvoi.corpus.storage.layout.check_index_name`, never through a
symbolic link; one that is gone raises :class:`BaseFileGone` (a newer
commit replaced it: the reader retries), one that will not load, or holds
other records than its generation's, :class:`BaseFileDamaged` with the
repair command.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import numpy as np

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
    "Delta",
    "read_delta",
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


def _check_base_size(store: CorpusStore, delta: Delta, name: str, n: int, what: str) -> None:
    if n != delta.base_count:
        raise damaged_file_error(
            store,
            name,
            f"holds {n} {what} where generation {delta.generation} has {delta.base_count} "
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


class Delta(NamedTuple):
    """What a snapshot says of its generation's index files, read before
    they are loaded (:func:`read_delta`): the base files' names, the
    records they must hold, and what was committed since.

    Attributes
    ----------
    generation : int
    state : dict
        The generation's committed state (``dim``, ``lexical``, ``hnsw``).
    base : dict
        Its base description (``lexical``, ``dense``, ``hnsw``: file
        names; ``next_id``).
    base_count : int
        The records the base files hold (:func:`base_count`), or -1 when
        the generation names no base file.
    tombstones : numpy.ndarray
        Ids in the base files that are no longer live (int64, ascending).
    texts : iterator
        ``(ids, texts)`` batches of the records added since the base, read
        from the snapshot as the BM25 index takes them (empty when not
        asked for).
    vectors : iterator
        ``(ids, vectors)`` batches of the delta's vectors, likewise.
    lexical, dense : bool
        The indexes it was read for.
    """

    generation: int
    state: Mapping[str, Any]
    base: Mapping[str, Any]
    base_count: int
    tombstones: np.ndarray
    texts: Iterator[tuple[np.ndarray, list[str]]]
    vectors: Iterator[tuple[np.ndarray, np.ndarray]]
    lexical: bool
    dense: bool


def read_delta(snap: Snapshot, *, lexical: bool = True, dense: bool = True) -> Delta:
    """The :class:`Delta` of the snapshot's generation, for the indexes
    asked for; its batches stream from the snapshot, which must stay open
    until they are consumed.

    >>> store = CorpusStore.memory(); store.create()
    >>> with store.snapshot() as snap:
    ...     d = read_delta(snap)
    ...     d.generation, d.base_count, len(d.tombstones), list(d.vectors)
    (0, -1, 0, [])
    """
    names = [snap.base.get(k) for k in ("lexical", "dense", "hnsw")]
    dim = int(snap.state.get("dim") or 0)
    return Delta(
        generation=snap.generation,
        state=snap.state,
        base=snap.base,
        base_count=base_count(snap) if any(names) else -1,
        tombstones=snap.tombstones() if lexical or dense else np.zeros(0, dtype=np.int64),
        texts=snap.delta_texts() if lexical else iter(()),
        vectors=snap.delta_vectors(dim) if dense and dim else iter(()),
        lexical=lexical,
        dense=dense,
    )


def load_lexical(store: CorpusStore, delta: Delta) -> BM25Index:
    """The BM25 index of a generation: its base file, minus the
    tombstones, plus the delta's texts (added with their record ids).

    Raises
    ------
    BaseFileGone
        The base file was deleted by a newer commit (retry).
    BaseFileDamaged
        The base file will not load, or holds other records than its
        generation's.

    Examples
    --------
    >>> from rowvoi.corpus import build, from_mapping
    >>> c = build(from_mapping({"a": "lift", "b": "drag"}, embedder="hashing:8"),
    ...           store=CorpusStore.memory())
    >>> with c.store.snapshot() as snap:
    ...     len(load_lexical(c.store, read_delta(snap))), load_dense(c.store, read_delta(snap)).dim
    (2, 8)
    """
    from rowvoi.index.lexical import BM25Index

    name = delta.base.get("lexical")
    if name:
        index = _load_base(store, "lexical", name, BM25Index.load)
        _check_base_size(store, delta, name, len(index), "documents")
    else:
        index = new_lexical(delta.state.get("lexical") or default_lexical())
    if len(delta.tombstones):
        index.delete(delta.tombstones)
    for ids, texts in delta.texts:
        index.add(texts, ids=ids)
    return index


def load_dense(store: CorpusStore, delta: Delta) -> FlatIndex | HNSWIndex | None:
    """The vector index (inner product over unit vectors = cosine) of a
    generation: base file, minus tombstones, plus delta vectors -- a
    :class:`~rowvoi.index.flat.FlatIndex`, or an
    :class:`~rowvoi.index.hnsw.HNSWIndex` for a corpus built with ``hnsw=True``.
    ``None`` when the corpus has no dimension yet (nothing was ever
    embedded).

    Raises
    ------
    BaseFileGone
        The base file was deleted by a newer commit (retry).
    BaseFileDamaged, rowvoi.errors.IndexFormatError
        The base file will not load or holds other records than its
        generation's; the stored HNSW settings are damaged.

    Examples
    --------
    >>> store = CorpusStore.memory(); store.create()
    >>> with store.snapshot() as snap:
    ...     load_dense(store, read_delta(snap)) is None   # nothing embedded yet
    True
    """
    from rowvoi.index.flat import FlatIndex
    from rowvoi.index.hnsw import HNSWIndex

    dim = delta.state.get("dim")
    if not dim:
        return None
    name = delta.base.get("dense")
    hnsw = delta.base.get("hnsw")
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
        _check_base_size(store, delta, file, len(index), "vectors")
    elif delta.state.get("hnsw"):
        params = delta.state["hnsw"]
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
    if len(delta.tombstones):
        index.remove(delta.tombstones)
    for ids, vecs in delta.vectors:
        index.add(vecs, ids=ids)
    return index
