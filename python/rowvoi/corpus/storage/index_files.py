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
import threading
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
    "Bases",
    "BACKGROUND_BYTES",
    "load_bases",
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


def load_lexical(store: CorpusStore, delta: Delta, base: BM25Index | None = None) -> BM25Index:
    """The BM25 index of a generation: its base file (``base``: loaded
    already, by :func:`load_bases`), minus the tombstones, plus the delta's
    texts (added with their record ids).

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
    index = _lexical_base(store, delta) if base is None else base
    if len(delta.tombstones):
        index.delete(delta.tombstones)
    for ids, texts in delta.texts:
        index.add(texts, ids=ids)
    return index


def _lexical_base(store: CorpusStore, delta: Delta) -> BM25Index:
    """The BM25 index of the generation's base file, or an empty one."""
    from rowvoi.index.lexical import BM25Index

    name = delta.base.get("lexical")
    if not name:
        return new_lexical(delta.state.get("lexical") or default_lexical())
    index = _load_base(store, "lexical", name, BM25Index.load)
    _check_base_size(store, delta, name, len(index), "documents")
    return index


def load_dense(
    store: CorpusStore, delta: Delta, base: FlatIndex | HNSWIndex | None = None
) -> FlatIndex | HNSWIndex | None:
    """The vector index (inner product over unit vectors = cosine) of a
    generation: base file (``base``: loaded already, by
    :func:`load_bases`), minus tombstones, plus delta vectors -- a
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
    index = _dense_base(store, delta) if base is None else base
    if index is None:
        return None
    if len(delta.tombstones):
        index.remove(delta.tombstones)
    for ids, vecs in delta.vectors:
        index.add(vecs, ids=ids)
    return index


def _dense_base(store: CorpusStore, delta: Delta) -> FlatIndex | HNSWIndex | None:
    """The vector index of the generation's base file, or an empty one
    (None: the corpus has no dimension yet)."""
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
    return index


#: Base files of at least this many bytes in all load in a thread of their
#: own (:func:`load_bases`) while the record table is read.
BACKGROUND_BYTES = 4 << 20


class Bases:
    """A generation's base files, loading in a thread of their own
    (:func:`load_bases`): :meth:`lexical` and :meth:`dense` wait for them
    and hand the indexes over, or raise what loading raised.

    For the thread that started it (the loader of a generation, under
    :class:`~rowvoi.corpus.storage.generation.Generations`' lock); not to
    be shared."""

    def __init__(self, store: CorpusStore, delta: Delta) -> None:
        self._store, self._delta = store, delta
        self._lexical: BM25Index | None = None
        self._dense: FlatIndex | HNSWIndex | None = None
        # what loading each raised (the dense base is not loaded after the
        # lexical one failed, as a load in place would not reach it)
        self._errors: dict[str, BaseException] = {}
        self._thread = threading.Thread(target=self._run, name="rowvoi-base-files", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        kind = "lexical"
        try:
            # (in the order a load in place takes them)
            if self._delta.lexical:
                self._lexical = _lexical_base(self._store, self._delta)
            kind = "dense"
            if self._delta.dense:
                self._dense = _dense_base(self._store, self._delta)
        except BaseException as exc:  # raised to the caller by lexical() or dense()
            self._errors[kind] = exc

    def wait(self) -> None:
        """Until loading ends (whatever it raised: :meth:`lexical` and
        :meth:`dense` tell that)."""
        self._thread.join()

    def lexical(self) -> BM25Index | None:
        """The BM25 base (None when the delta was not read for it); raises
        what loading it raised."""
        self.wait()
        if "lexical" in self._errors:
            raise self._errors["lexical"]
        return self._lexical

    def dense(self) -> FlatIndex | HNSWIndex | None:
        """The vector base (None when not read for it, or no dimension
        yet); raises what loading it raised."""
        self.wait()
        if "dense" in self._errors:
            raise self._errors["dense"]
        return self._dense


def load_bases(store: CorpusStore, delta: Delta) -> Bases | None:
    """The base files ``delta`` was read for, loading in a thread of their
    own when they are large (:data:`BACKGROUND_BYTES` in all), so that the
    caller reads the record table meanwhile: the compiled loaders release
    the GIL, and the Python that reads the table from SQLite is the other
    half of opening a large corpus. ``None`` when they are small (load them
    in place: :func:`load_lexical`, :func:`load_dense`).

    The caller must :meth:`Bases.wait` before it lets the snapshot go (the
    thread reads no SQL, but a newer commit may delete the files once no
    snapshot holds the generation)."""
    size = 0
    for kind, wanted in (
        ("lexical", delta.lexical),
        ("dense", delta.dense),
        ("hnsw", delta.dense),
    ):
        name = delta.base.get(kind)
        if not (wanted and name):
            continue
        try:
            size += os.stat(index_path(store, kind, name), follow_symlinks=False).st_size
        except (OSError, ValueError):
            pass  # (the loader says what is wrong)
    return Bases(store, delta) if size >= BACKGROUND_BYTES else None
