"""Build a corpus: incremental, idempotent, crash-safe.

:func:`build` turns a :class:`~rowvoi.corpus.indexing.sources.CorpusSource` into a
queryable :class:`~rowvoi.corpus.retrieval.corpus.Corpus`, stored in a
:class:`~rowvoi.corpus.storage.store.CorpusStore`.

What a build does
-----------------
1. **Scan**: every artifact's change signal is compared with the corpus's
   ledger. Unchanged artifacts cost one signal each: no decomposition, no
   embedding, no index work. A build with nothing changed writes nothing
   at all.
2. **Re-index** new and changed artifacts: decompose (strategy), embed the
   surfaces in batches of ``batch_size`` texts -- each text's vector is
   looked up first by (embedder id, content hash) among the corpus's own
   vectors and the build's, so an unchanged text is never embedded twice --
   and replace the artifact's records. With ``full=True`` (the default),
   artifacts the source no longer has are pruned from every index.
3. **Identity changes** rebuild, never mix: a corpus built with another
   embedder is re-embedded entirely; a change of strategy re-decomposes
   every artifact (vectors of texts that did not change are kept); a
   change of analyzer or BM25 settings re-indexes the text. Each is
   reported in :attr:`BuildReport.rebuild`. A strategy that derives
   costly surfaces (a synopsis, :mod:`rowvoi.corpus.indexing.synopsis`)
   names their kinds in ``derived_kinds`` and has a
   ``decompose_with_prior(artifact_id, raw, prior)`` method: the build
   hands it the artifact's stored surfaces of those kinds, read before
   they are replaced, so it can carry them over instead of making them
   again.
4. **Commit** (see :mod:`rowvoi.corpus.storage.store`): the change is written as
   delta rows, or -- when the delta has grown past the compaction
   threshold, or everything was rebuilt -- as new index files of the new
   generation, fsynced before the one SQLite transaction that publishes
   the generation with its rows.

Progress goes to stderr as a bar (tqdm) when stderr is a terminal (or
``progress=True``); nothing is printed otherwise.

Where the embedding cache lives
-------------------------------
In the corpus itself. Records carry the hash of their text; the corpus has
one pinned embedder id; so ``(embedder id, content hash)`` is answered by
the corpus's own vectors (``delta_vectors`` rows, or the base index file
when a rebuild loads it) and by ``embeddings.sqlite``
(:mod:`rowvoi.corpus.storage.vectors`), which the build commits after every
embedder batch, outside its own single commit. So a build that is
interrupted (Ctrl-C) or killed leaves the previous generation *and* the
vectors it computed: the next build takes them from the cache
(:attr:`BuildReport.cache_hits`). Texts repeated within one build are
embedded once.

Memory
------
Bounded by the batch, not by the largest file: artifacts are fetched and
decomposed as the build reaches them (``_Builder._plans``), and a batch
holds the surfaces of about ``batch_size`` texts -- each text a few times
over (the string, its UTF-8 for the content hash and ``docs.sqlite``, the
analyser's pass for BM25) -- until its rows are written. The embedder's
working memory is bounded by the batch too: MiniLM tokenises only the head
of each text that its 256 tokens can hold
(``MiniLMEmbedder._encode``) and runs at most
``batch_tokens`` padded tokens per call. What grows with the corpus is the
indexes being built (postings, vectors) and the embedding cache's rows.

When a build fails
------------------
Nothing is committed: the previous generation stays, whole. A first build
that fails (an exception before its commit: a missing folder, a source or
fetcher that raised, a missing reader) removes what it created -- the
corpus directory when it made it -- so no empty corpus is left behind; an
interrupted one keeps its folder and embedding cache, to resume. An
incremental build refuses a corpus whose base index files are damaged
(looked at, and loaded when they changed since their commit wrote them)
with the repair command (:func:`rowvoi.corpus.repair`).

Examples
--------
>>> from rowvoi.corpus import CorpusStore, from_mapping
>>> src = from_mapping({"a": "Lift on a wing", "b": "Heat transfer in a pipe"},
...                    embedder="hashing:64")
>>> corpus = build(src, store=CorpusStore.memory())
>>> corpus.last_build.n_new, corpus.last_build.texts_embedded
(2, 2)
>>> build(src, store=corpus.store).last_build.texts_embedded   # nothing changed
0
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import json
import math
import numbers
import os
import shutil
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from rowvoi._atomic import PRIVATE_FILE, fsync_dir
from rowvoi.corpus.base import CorpusError, EmbedderMismatch, Surface, ledger_key
from rowvoi.corpus.embedders import CorpusEmbedder, make_embedder
from rowvoi.corpus.indexing.sources import CorpusSource
from rowvoi.corpus.indexing.strategy import strategy_id, strategy_to_spec
from rowvoi.corpus.storage.damage import check_files, fingerprint
from rowvoi.corpus.storage.index_files import (
    default_lexical,
    load_dense,
    load_lexical,
    new_lexical,
    read_delta,
)
from rowvoi.corpus.storage.layout import (
    AID_COLUMN,
    COMPACT_MIN,
    COMPACT_RATIO,
    FLAT_STORAGE,
    HNSW_PARAMS,
    base_files,
    ensure_links_table,
)
from rowvoi.corpus.storage.snapshot import Snapshot
from rowvoi.corpus.storage.store import CorpusStore, damaged_file_error
from rowvoi.corpus.storage.vectors import CACHE_FILE, EmbeddingCache
from rowvoi.errors import IndexFormatError

if TYPE_CHECKING:
    from rowvoi.corpus.indexing.edges import Link
    from rowvoi.index.flat import FlatIndex
    from rowvoi.index.hnsw import HNSWIndex
    from rowvoi.index.lexical import BM25Index

    # (artifact_id, version, filter fields, surfaces, links or None)
    _Plan = tuple[str, str, Mapping[str, Any], list[Surface], list[Link] | None]

__all__ = ["build", "BuildReport", "DFLT_BATCH_SIZE"]

#: Texts per embedder call.
DFLT_BATCH_SIZE = 256

#: Test hook: called with a stage name at each step of a build
#: (``"scanned"``, ``"embedded"`` after each batch, ``"lexical-written"``,
#: ``"dense-written"``, ``"commit"``, ``"committed"``, ``"cleaned"``). None,
#: and never set by rowvoi itself; the crash tests set it in a child process.
_stage_hook: Callable[[str], None] | None = None


def _stage(name: str) -> None:
    if _stage_hook is not None:
        _stage_hook(name)


@dataclass
class BuildReport:
    """What a build did.

    Attributes
    ----------
    generation : int
        The committed generation after the build (unchanged by a no-op).
    n_seen : int
        Artifacts in the source.
    n_new, n_changed, n_unchanged, n_deleted : int
        Artifacts added, re-indexed, skipped, pruned.
    records_added, records_removed : int
        Records (surfaces) written and removed.
    texts_embedded : int
        Texts sent to the embedder.
    embed_calls : int
        Embedder calls.
    cache_hits : int
        Surfaces whose vector came from the embedding cache.
    compacted : bool
        New index files were written.
    rebuild : str or None
        Why everything was re-indexed (``"first build"``, ``"embedder
        changed"``, ``"strategy changed"``, ``"analyzer changed"``),
        or ``None``.
    seconds : float
        Wall time, and ``embed_seconds`` of it in the embedder.
    took_over_lock_of : int or None
        The pid of a dead builder whose lock this build took over.
    links_extracted : int
        Artifacts whose links the edge extractor produced in this build.
    links_dropped : int
        Links deleted wholesale because the extractor changed (or
        ``edges=False``), before re-extraction.
    n_links : int
        Links stored after the build (dangling ones included).
    skipped : dict of str to int
        Entries of a folder source left out for a reason its owner did not
        choose, by reason (:data:`~rowvoi.corpus.indexing.sources.TRUST_SKIPS`:
        ``symlink`` -- leading outside the root --, ``special`` -- a FIFO,
        socket or device --, ``undecodable_name``, ``unreadable``); ``rowvoi
        coverage NAME`` lists them. Empty for other sources.

    Examples
    --------
    >>> r = BuildReport(n_seen=3, n_new=1, n_unchanged=2)
    >>> r.changed, r.to_dict()["n_new"]
    (True, 1)
    """

    generation: int = 0
    n_seen: int = 0
    n_new: int = 0
    n_changed: int = 0
    n_unchanged: int = 0
    n_deleted: int = 0
    records_added: int = 0
    records_removed: int = 0
    texts_embedded: int = 0
    embed_calls: int = 0
    cache_hits: int = 0
    compacted: bool = False
    rebuild: str | None = None
    seconds: float = 0.0
    embed_seconds: float = 0.0
    took_over_lock_of: int | None = None
    links_extracted: int = 0
    links_dropped: int = 0
    n_links: int = 0
    skipped: dict[str, int] = dataclasses.field(default_factory=dict)

    @property
    def changed(self) -> bool:
        """Did the build commit anything?"""
        return bool(
            self.n_new
            or self.n_changed
            or self.n_deleted
            or self.rebuild
            or self.compacted
            or self.links_extracted
            or self.links_dropped
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return dataclasses.asdict(self)


# ------------------------------------------------------------ filter types


def _value_class(v: Any) -> str | None:
    """numeric / date / text / json, or None for a missing value."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    if isinstance(v, (bool, numbers.Real)) and not isinstance(v, complex):
        return "numeric"
    if isinstance(v, (_dt.date, _dt.datetime)):
        return "date"
    if isinstance(v, str):
        return "text"
    if hasattr(v, "item"):
        return _value_class(v.item())
    return "json"


def _widen(a: str | None, b: str | None) -> str | None:
    if a is None or a == b:
        return b if a is None else a
    if b is None:
        return a
    if "json" in (a, b):
        return "json"
    return "text"


def _jsonable(v: Any) -> Any:
    if isinstance(v, (_dt.date, _dt.datetime)):
        return v.isoformat()
    if hasattr(v, "item") and not isinstance(v, (str, bytes)):
        return v.item()
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


class _Fields:
    """The typed filter columns, kept in step with ``filter_values``."""

    def __init__(self, con: sqlite3.Connection, declared: Mapping[str, str]) -> None:
        self.con = con
        self.declared = dict(declared)
        self.types: dict[str, tuple[str, bool, bool]] = {
            n: (t, bool(i), bool(d))
            for n, t, i, d in con.execute("SELECT name, type, integer, declared FROM fields")
        }
        self.columns = {r[1] for r in con.execute("PRAGMA table_info(filter_values)")}
        self.folded = {c.casefold(): c for c in self.columns}
        self._rewrite: set[str] = set()
        self._valued: set[str] = set()  # fields given a value in this build
        self._pending: dict[tuple[str, ...], list[list[Any]]] = {}

    def _column(self, name: str) -> None:
        from rowvoi.query.sql import quote_ident

        if name in self.columns:
            return
        if name.startswith("__rowvoi"):
            raise ValueError(f"filter field {name!r}: names starting with '__rowvoi' are reserved")
        other = self.folded.get(name.casefold())
        if other is not None:
            raise ValueError(
                f"filter fields {other!r} and {name!r} differ only in case; "
                "SQLite column names ignore case: rename one"
            )
        self.con.execute(f"ALTER TABLE filter_values ADD COLUMN {quote_ident(name)}")
        self.columns.add(name)
        self.folded[name.casefold()] = name

    def observe(self, artifact_id: str, fields: Mapping[str, Any]) -> None:
        """Type the fields of one artifact (widening inferred types)."""
        for name, value in fields.items():
            if not isinstance(name, str) or not name:
                raise ValueError(
                    f"artifact {artifact_id!r}: filter field names must be "
                    f"non-empty str, not {name!r}"
                )
            cls = _value_class(value)
            if name in self.declared:
                t = self.declared[name]
                integer = False
                if cls is not None and t == "numeric":
                    integer = isinstance(value, (bool, numbers.Integral))
                cur = self.types.get(name)
                if cur is None or cur[0] != t or not cur[2]:
                    self.types[name] = (t, integer, True)
                    if cur is not None:
                        self._rewrite.add(name)  # stored under another type so far
                elif cur[1] and not integer and cls is not None:
                    self.types[name] = (t, False, True)
                continue
            cur = self.types.get(name)
            if cls is None:
                if cur is None:  # only missing so far: a placeholder type
                    self.types[name] = ("text", False, False)
                continue
            first_value = name not in self._valued
            self._valued.add(name)
            integer = cls == "numeric" and isinstance(value, (bool, numbers.Integral))
            if cur is None:
                self.types[name] = (cls, integer, False)
                continue
            t, was_int, _ = cur
            nt = _widen(t, cls)
            if t == "text" and cls != "text" and first_value and self._all_missing(name):
                # a field seen only empty so far takes the first real type
                self.types[name] = (cls, integer, False)
                continue
            if nt != t:
                self.types[name] = (nt or "text", integer if nt == "numeric" else False, False)
                self._rewrite.add(name)  # values stored as `t` must become `nt`
            elif nt == "numeric" and was_int and not integer:
                self.types[name] = ("numeric", False, False)

    def _all_missing(self, name: str) -> bool:
        from rowvoi.query.sql import quote_ident

        if name not in self.columns:
            return True
        q = quote_ident(name)
        return (
            self.con.execute(
                f"SELECT 1 FROM filter_values WHERE {q} IS NOT NULL LIMIT 1"
            ).fetchone()
            is None
        )

    def stored(self, artifact_id: str, name: str, value: Any) -> Any:
        """The value as the filter table stores it (``None`` for json)."""
        from rowvoi.query.values import sqlite_value

        t = self.types[name][0]
        if t == "json":
            return None
        if isinstance(value, bool):
            value = int(value)
        if t == "text" and value is not None and not isinstance(value, str):
            value = (
                json.dumps(_jsonable(value))
                if isinstance(value, (list, dict))
                else str(_jsonable(value))
            )
        try:
            return sqlite_value(value, t)
        except ValueError as exc:
            raise ValueError(
                f"artifact {artifact_id!r}: filter field {name!r} is declared {t}: {exc}"
            ) from None

    def write(self, aid: int, artifact_id: str, fields: Mapping[str, Any]) -> None:
        """Queue one artifact's row of ``filter_values`` (see :meth:`flush`)."""
        names = tuple(n for n in fields if self.types.get(n, ("json",))[0] != "json")
        for n in names:
            self._column(n)
        vals = [aid] + [self.stored(artifact_id, n, fields[n]) for n in names]
        self._pending.setdefault(names, []).append(vals)

    def flush(self) -> None:
        """Insert the queued rows, one statement per set of columns."""
        from rowvoi.query.sql import quote_ident

        for names, rows in self._pending.items():
            cols = [quote_ident(AID_COLUMN)] + [quote_ident(n) for n in names]
            self.con.executemany(
                f"INSERT OR REPLACE INTO filter_values ({', '.join(cols)}) "
                f"VALUES ({', '.join('?' * len(cols))})",
                rows,
            )
        self._pending.clear()

    def finish(self) -> None:
        """Rewrite columns whose type changed, from the ledger's JSON, and
        store the field types."""
        from rowvoi.query.sql import quote_ident

        self.flush()
        for name in sorted(self._rewrite):
            t = self.types[name][0]
            if t == "json":
                if name in self.columns:
                    self.con.execute(f"UPDATE filter_values SET {quote_ident(name)} = NULL")
                continue
            self._column(name)
            rows = self.con.execute(
                "SELECT aid, artifact_id, filter_fields FROM artifacts"
            ).fetchall()
            updates = []
            for aid, artifact_id, ff in rows:
                value = json.loads(ff).get(name)
                updates.append((self.stored(artifact_id, name, value), aid))
            self.con.executemany(
                f"UPDATE filter_values SET {quote_ident(name)} = ? "
                f"WHERE {quote_ident(AID_COLUMN)} = ?",
                updates,
            )
        self.con.execute("DELETE FROM fields")
        self.con.executemany(
            "INSERT INTO fields VALUES (?, ?, ?, ?)",
            [(n, t, int(i), int(d)) for n, (t, i, d) in self.types.items()],
        )


# ----------------------------------------------------------------- progress


class _Progress:
    """A tqdm bar on stderr when it is a terminal (or forced); else silent."""

    def __init__(self, enabled: bool | None, total: int, desc: str) -> None:
        if enabled is None:
            enabled = sys.stderr.isatty()
        self.bar = None
        if enabled and total:
            from tqdm import tqdm

            self.bar = tqdm(
                total=total,
                desc=desc,
                unit="doc",
                file=sys.stderr,
                leave=False,
                dynamic_ncols=True,
            )

    def update(self, n: int, **postfix: Any) -> None:
        if self.bar is not None:
            self.bar.update(n)
            if postfix:
                self.bar.set_postfix(postfix, refresh=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


# -------------------------------------------------------------------- build


def _hash_text(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:16]


def _resolve_store(source: CorpusSource, store: Any) -> CorpusStore:
    if isinstance(store, CorpusStore):
        return store
    if store is None:
        if source.name is None:
            return CorpusStore.memory()
        return CorpusStore.local(source.name)
    if isinstance(store, (str, os.PathLike)):
        return CorpusStore(store, name=source.name)
    raise TypeError(f"store must be a CorpusStore, a path or None, not {type(store).__name__}")


def build(
    source: CorpusSource,
    *,
    store: CorpusStore | str | os.PathLike[str] | None = None,
    embedder: Any = None,
    full: bool = True,
    batch_size: int = DFLT_BATCH_SIZE,
    progress: bool | None = None,
    compact: bool | None = None,
    hnsw: bool | None = None,
    edges: Any = None,
) -> Any:
    """Build or incrementally update a corpus from ``source``.

    Parameters
    ----------
    source : CorpusSource
    store : CorpusStore, path, or None
        Where the corpus lives: default the named corpus's directory
        (:meth:`CorpusStore.local`), or an in-memory store for an unnamed
        source.
    embedder : spec, optional
        Overrides ``source.embedder`` (see :mod:`rowvoi.corpus.embedders`).
        A different embedder than the corpus's re-embeds everything.
    full : bool
        Prune artifacts the source no longer has (default True).
    batch_size : int
        Texts per embedder call (default 256).
    progress : bool, optional
        Force the progress bar on or off (default: when stderr is a
        terminal).
    compact : bool, optional
        True: write new index files even for a small change; False: never
        compact in this build (the delta grows); None (default): by the
        rule of :mod:`rowvoi.corpus.storage.store`.
    hnsw : bool, optional
        True: keep an HNSW graph (:class:`rowvoi.index.hnsw.HNSWIndex`,
        :data:`~rowvoi.corpus.storage.layout.HNSW_PARAMS`) as the corpus's vector
        index, for approximate search on large corpora (its exact twin
        still answers ``index="flat"``); False: exact flat index only;
        None (default): keep the corpus's current choice (flat for a new
        corpus). A change rewrites the index files.
    edges : EdgeExtractor, list, DataFrame, edge rows or False, optional
        The link graph's edges (:mod:`rowvoi.corpus.indexing.edges`): an extractor
        such as :class:`~rowvoi.corpus.indexing.edges.FieldEdges`, several in a
        list, or explicit edges (rows or a DataFrame with ``src``,
        ``dst``, ``type``, ``text``, ``time``). Written into
        ``docs.sqlite`` in the generation's own commit: new and changed
        artifacts' links are (re-)extracted, unchanged ones keep theirs,
        pruned ones lose theirs; another extractor than the corpus's
        re-extracts every artifact's links (no embedding). None (default):
        the corpus's extractor again when it has a spec, else keep the
        stored links; False: remove every link.

    Returns
    -------
    Corpus
        Open on the built corpus; ``.last_build`` is the
        :class:`BuildReport`.

    Raises
    ------
    CorpusLocked
        Another process is building this corpus.
    EmbedderError
        A bad embedder spec, a callable without an id for a stored corpus,
        or an embedder returning vectors of the wrong shape.
    ValueError, TypeError
        A strategy, change signal, metadata function or edge extractor
        failing on an artifact (named), a filter field value that does not
        fit its declared type, a malformed ``edges``. Nothing is committed
        then (and a first build leaves no corpus behind).
    rowvoi.errors.IndexFormatError
        An incremental build of a corpus whose index files are damaged or
        missing: the message names the file and the repair
        (``rowvoi build NAME --repair``, :func:`rowvoi.corpus.repair`).
    KeyboardInterrupt
        Passed on; the previous generation stays, and the vectors embedded
        so far stay in the embedding cache for the next build.

    Notes
    -----
    Thread-safety: one build per corpus at a time (the lock refuses a
    second, in any process); searches of the corpus, in any thread or
    process, keep answering from the committed generation meanwhile.

    Examples
    --------
    >>> from rowvoi.corpus import CorpusStore, from_mapping
    >>> store = CorpusStore.memory()
    >>> docs = {"a": "lift of a wing", "b": "drag of a body"}
    >>> build(from_mapping(docs, embedder="hashing:32"), store=store).last_build.n_new
    2
    >>> docs["b"] = "drag of a slender body"; del docs["a"]
    >>> r = build(from_mapping(docs, embedder="hashing:32"), store=store).last_build
    >>> r.n_changed, r.n_deleted, r.texts_embedded
    (1, 1, 1)
    """
    if not isinstance(source, CorpusSource):
        raise TypeError(f"source must be a CorpusSource, not {type(source).__name__}")
    if (
        isinstance(batch_size, bool)
        or not isinstance(batch_size, numbers.Integral)
        or batch_size < 1
    ):
        raise ValueError(f"batch_size={batch_size!r}: must be an integer >= 1")
    from rowvoi.corpus.indexing.edges import as_extractor

    extractor = False if edges is False else as_extractor(edges)
    st = _resolve_store(source, store)
    emb = make_embedder(
        source.embedder if embedder is None else embedder, persistent=not st.temporary
    )
    t0 = time.perf_counter()
    new_dir = not st.path.exists()
    discarded = False
    try:
        with st.lock() as previous:
            new_corpus = not st.exists()
            if new_corpus:
                st.create()  # (refuses a folder that holds anything else)
            try:
                report = _Builder(
                    source,
                    st,
                    emb,
                    full=bool(full),
                    batch_size=int(batch_size),
                    progress=progress,
                    compact=compact,
                    hnsw=hnsw,
                    edges=extractor,
                ).run()
            except Exception:
                # a first build that failed (a wrong folder, a fetcher that
                # raised, a missing reader): no corpus was ever committed, so
                # none is left behind. (An interrupted one keeps its embedding
                # cache: the next build resumes from it.)
                if new_corpus:
                    discarded = _discard_uncommitted(st)
                raise
    finally:
        if discarded and new_dir:
            _remove_dir(st)
    dead = previous.get("pid")
    if dead and dead != os.getpid() and previous.get("host") == os.uname().nodename:
        report.took_over_lock_of = int(dead)
    report.seconds = time.perf_counter() - t0
    from rowvoi.corpus.retrieval.corpus import Corpus

    corpus = Corpus(source.name, st, embedder=emb)
    corpus.last_build = report
    spec = source.spec or {}
    root = spec.get("root") if spec.get("kind") == "files" else None
    corpus.source_roots = (str(root),) if isinstance(root, str) else ()
    return corpus


def _discard_uncommitted(store: CorpusStore) -> bool:
    """Delete what a failed first build created in ``store`` (under its
    lock), unless a generation got committed after all; returns whether
    it did."""
    store.close_writer()
    store.close()
    try:
        with store.snapshot() as snap:
            if snap.generation:
                return False
    except Exception:  # noqa: BLE001 - a damaged new file: it goes too
        pass
    finally:
        store.close()
    ours = [
        db + suffix
        for db in ("docs.sqlite", CACHE_FILE)
        for suffix in ("", "-wal", "-shm", "-journal")
    ] + ["manifest.json"]
    for name in ours:
        try:
            (store.path / name).unlink()
        except OSError:
            pass
    store.clean_files([])  # index files (none are committed)
    return True


def _remove_dir(store: CorpusStore) -> None:
    """Remove the (emptied) directory a failed first build created."""
    try:
        (store.path / "build.lock").unlink()
        store.path.rmdir()
    except OSError:
        pass


class _Builder:
    """One build, as named steps (see the module notes)."""

    def __init__(
        self,
        source: CorpusSource,
        store: CorpusStore,
        emb: CorpusEmbedder,
        *,
        full: bool,
        batch_size: int,
        progress: bool | None,
        compact: bool | None,
        hnsw: bool | None,
        edges: Any = None,
    ) -> None:
        self.source = source
        self.store = store
        self.emb = emb
        self.full = full
        self.batch_size = batch_size
        self.progress = progress
        self.compact = compact
        self.hnsw_arg = hnsw
        self.edges_arg = edges  # an extractor, False (none) or None (the corpus's)
        self.report = BuildReport()
        self.strategy = source.indexing_strategy
        self.strategy_id = strategy_id(self.strategy)
        # kinds of surfaces the strategy can carry over from the stored records
        self.derived: tuple[str, ...] = (
            tuple(getattr(self.strategy, "derived_kinds", ()) or ())
            if callable(getattr(self.strategy, "decompose_with_prior", None))
            else ()
        )
        self.prior_all: dict[str, list[Surface]] | None = None  # read before a rebuild
        self.lexical_conf = default_lexical()
        self.new_files: list[str] = []
        self.cache = EmbeddingCache(store.path / CACHE_FILE)
        self.cache_had: bool | None = None  # vectors of this embedder before the build
        self.base_flat: FlatIndex | None = None

    # ------------------------------------------------------------ steps
    def run(self) -> BuildReport:
        try:
            return self._run()
        finally:
            self.cache.close()

    def _run(self) -> BuildReport:
        con = self.store.writer_connection()
        try:
            try:
                snap = self.store.view(con)  # we hold the lock: nothing changes it
            except IndexFormatError:
                if con.execute("SELECT 1 FROM sqlite_master WHERE name = 'state'").fetchone():
                    raise
                self.store.create()  # a creation killed before its commit: redo it
                snap = self.store.view(con)
            self.state = snap.state
            self.base = snap.base
            self.store.clean_files(base_files(self.base))
            self.con = con
            self.rebuild = self._rebuild_reason(snap)
            if self.rebuild is None:
                # an incremental build keeps the base files: they must be
                # sound (a full rebuild replaces them, damaged or not). Each
                # is looked at; one that changed since its commit wrote it is
                # loaded and verified (a corpus of an older rowvoi records no
                # fingerprints: looked at only)
                written = self.base.get("fingerprints")
                damage = check_files(
                    self.store,
                    snap,
                    deep=isinstance(written, dict),
                    database=False,
                    verified=dict(written) if isinstance(written, dict) else None,
                )
                if damage:
                    raise damaged_file_error(
                        self.store,
                        damage[0].file,
                        "; ".join(d.problem if i == 0 else str(d) for i, d in enumerate(damage)),
                    )
            cur_hnsw = self.state.get("hnsw")
            self.hnsw = (
                cur_hnsw
                if self.hnsw_arg is None
                else (dict(HNSW_PARAMS) if self.hnsw_arg else None)
            )
            if self.hnsw != cur_hnsw and self.compact is not False:
                self.compact = True  # the vector index changes kind: rewrite it
            self._resolve_edges()
            stale, deleted, ledger = self._scan()
            self.report.skipped = self.source.skipped()
            _stage("scanned")
            self.report.generation = int(self.state.get("generation", 0))
            pending = snap.counts() if self.compact is True else {}
            has_delta = bool(
                pending.get("n_delta") or pending.get("n_tombstones") or self.hnsw != cur_hnsw
            )
            if (
                not stale
                and not deleted
                and self.rebuild is None
                and not has_delta
                and not self.edges_all
            ):
                self.report.n_links = snap.n_links()
                return self.report
            self.report.rebuild = self.rebuild
            self._write(stale, deleted, ledger)
            return self.report
        except BaseException:
            self.store.close_writer()  # a clean connection for the next build
            raise

    def _resolve_edges(self) -> None:
        """Which extractor runs, and whether every artifact's links are
        re-extracted (``edges_all``): see :mod:`rowvoi.corpus.indexing.edges`."""
        from rowvoi.corpus.indexing.edges import extractor_from_spec

        stored = self.state.get("edges")
        self.edges_keep = False  # keep the stored links of changed artifacts
        if self.edges_arg is False:
            self.extractor = None
            self.edges_all = stored is not None
        elif self.edges_arg is None:
            self.edges_all = False
            spec = (stored or {}).get("spec")
            self.extractor = extractor_from_spec(spec) if spec else None
            if stored is not None and self.extractor is None:
                self.edges_keep = True
            elif (
                self.extractor is not None
                and stored is not None
                and self.extractor.extractor_id != stored.get("id")
            ):
                self.edges_all = True  # a spec whose extractor changed meaning
        else:
            self.extractor = self.edges_arg
            self.edges_all = stored is None or stored.get("id") != self.extractor.extractor_id
        if self.extractor is None:
            self.edges_state = None if not self.edges_keep else stored
        else:
            spec = getattr(self.extractor, "spec", None)
            self.edges_state = {
                "id": self.extractor.extractor_id,
                "spec": spec() if callable(spec) else None,
            }
        self.pending_links: dict[str, list[Link]] = {}

    def _extract(self, artifact_id: str, raw: Any, fields: Mapping[str, Any]) -> list[Link]:
        from rowvoi.corpus.indexing.edges import check_links

        if self.extractor is None:
            return []
        try:
            links = self.extractor.extract(artifact_id, raw, fields)
            return check_links(artifact_id, links)
        except (TypeError, ValueError) as exc:
            if str(exc).startswith("artifact "):
                raise
            raise type(exc)(f"edge extraction of artifact {artifact_id!r} failed: {exc}") from exc

    def _rebuild_reason(self, snap: Snapshot) -> str | None:
        s = self.state
        if snap.generation == 0 or (snap.n_records() == 0 and not s.get("embedder_id")):
            return "first build"
        if s.get("embedder_id") != self.emb.embedder_id:
            return "embedder changed"
        if s.get("lexical") != self.lexical_conf:
            return "analyzer changed"
        if s.get("strategy_id") != self.strategy_id:
            return "strategy changed"
        return None

    def _scan(self) -> tuple[list[tuple[str, str]], list[str], dict[str, tuple[int, str]]]:
        """(stale (id, version) pairs, ledger ids to prune, ledger)."""
        versions = dict(self.con.execute("SELECT artifact_id, version FROM artifacts"))
        stale: list[tuple[str, str]] = []
        seen: set[str] = set()
        signal = self.source.change_signal
        rebuild = self.rebuild is not None
        for n_before, (artifact_id, raw) in enumerate(self.source.items(), start=1):
            seen.add(artifact_id)
            if len(seen) != n_before:
                raise ValueError(
                    f"the source yields artifact {artifact_id!r} twice; ids must be unique"
                )
            try:
                version = signal(artifact_id, raw)
            except Exception as exc:
                raise type(exc)(
                    f"change_signal failed on artifact {artifact_id!r}: {exc}"
                ) from exc
            if rebuild or versions.get(artifact_id) != version:
                if type(version) is not str:
                    raise TypeError(
                        f"change_signal({artifact_id!r}) returned "
                        f"{type(version).__name__}, not a str"
                    )
                stale.append((artifact_id, version))
            elif self.edges_all and self.extractor is not None:
                # unchanged, but the extractor is new: its links from the
                # raw item and the stored filter fields (no decomposition)
                key = ledger_key(artifact_id)
                uses = getattr(self.extractor, "uses_content", True)
                fields = self._stored_fields(key) if uses else {}
                self.pending_links[key] = self._extract(key, raw if uses else None, fields)
        self.report.n_seen = len(seen)
        self.report.n_unchanged = len(seen) - len(stale)
        deleted = [a for a in versions if a not in seen] if (self.full or self.rebuild) else []
        # internal ids only for the artifacts this build touches
        touched = [a for a, _ in stale if a in versions] + deleted
        ledger: dict[str, tuple[int, str]] = {}
        for i in range(0, len(touched), 500):
            part = touched[i : i + 500]
            ledger.update(
                (a, (aid, v))
                for aid, a, v in self.con.execute(
                    "SELECT aid, artifact_id, version FROM artifacts WHERE artifact_id IN "
                    f"({', '.join('?' * len(part))})",
                    part,
                )
            )
        for artifact_id, _ in stale:
            if self.rebuild is None and artifact_id in versions:
                self.report.n_changed += 1
            else:
                self.report.n_new += 1
        return stale, deleted, ledger

    def _stored_fields(self, key: str) -> dict[str, Any]:
        row = self.con.execute(
            "SELECT filter_fields FROM artifacts WHERE artifact_id = ?", (key,)
        ).fetchone()
        return {} if row is None else json.loads(row[0])

    def _put_links(self, key: str, links: list[Link]) -> None:
        """Replace one artifact's links."""
        self.con.execute("DELETE FROM links WHERE source = ?", (key,))
        if links:
            self.con.executemany(
                "INSERT OR REPLACE INTO links (source, edge_type, target_source, target, seq, "
                "text, time) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (key, ln.type, ln.target_source or "", ln.target, i, ln.text, ln.time)
                    for i, ln in enumerate(links)
                ],
            )
        self.report.links_extracted += 1

    def _write(
        self, stale: list[tuple[str, str]], deleted: list[str], ledger: dict[str, tuple[int, str]]
    ) -> None:
        con = self.con
        gen = int(self.state.get("generation", 0)) + 1
        self.next_id = int(self.state.get("next_id", 0))
        self.dim = self.state.get("dim") if self.rebuild != "embedder changed" else None
        if self.dim is None and self.emb.dim:
            self.dim = int(self.emb.dim)
        con.execute("BEGIN IMMEDIATE")
        try:
            ensure_links_table(con)
            if self.edges_all:
                self.report.links_dropped = con.execute("DELETE FROM links").rowcount
            for key, links in self.pending_links.items():
                self._put_links(key, links)
            old_vectors = (
                self._old_vectors()
                if self.rebuild not in (None, "first build", "embedder changed")
                else None
            )
            self.direct: tuple[BM25Index, FlatIndex | None] | None
            if self.rebuild is not None:
                if self.derived:
                    self.prior_all = self._prior_surfaces(None)
                self._reset()
                ledger = {}
                self.direct = (new_lexical(self.lexical_conf), None)
            else:
                self.direct = None
            self.fields = _Fields(con, self.source.filter_types)
            self.next_aid = con.execute(
                "SELECT coalesce(max(aid), 0) + 1 FROM artifacts"
            ).fetchone()[0]
            for artifact_id in deleted:
                if artifact_id in ledger:
                    self._remove_artifact(ledger[artifact_id][0])
                con.execute("DELETE FROM links WHERE source = ?", (artifact_id,))
                self.report.n_deleted += 1
            self._reindex(stale, ledger, old_vectors)
            self.fields.finish()
            if deleted or self.rebuild is not None:
                # links belong to their source artifact: none may outlive it
                con.execute(
                    "DELETE FROM links WHERE source NOT IN (SELECT artifact_id FROM artifacts)"
                )
            compacting = self.direct is not None or self.compact is True or self._should_compact()
            state = dict(self.state)
            if compacting:
                state["base"] = self._compact(gen)
            state.update(
                {
                    "generation": gen,
                    "next_id": self.next_id,
                    "dim": self.dim,
                    "embedder_id": self.emb.embedder_id,
                    "embedder_spec": self.emb.spec,
                    "strategy_id": self.strategy_id,
                    "strategy_spec": _spec_or_none(self.strategy),
                    "lexical": self.lexical_conf,
                    "name": self.source.name,
                    "hnsw": self.hnsw,
                    "source": self.source.spec,
                    "updated": time.time(),
                    "edges": self.edges_state,
                    "n_records": con.execute("SELECT count(*) FROM records").fetchone()[0],
                    "n_artifacts": con.execute("SELECT count(*) FROM artifacts").fetchone()[0],
                }
            )
            con.executemany(
                "INSERT OR REPLACE INTO state VALUES (?, ?)",
                [(k, json.dumps(v)) for k, v in state.items()],
            )
            self.report.n_links = con.execute("SELECT count(*) FROM links").fetchone()[0]
            self.cache.sync()  # the vectors of the records committed now are durable first
            _stage("commit")
            con.execute("COMMIT")
        except BaseException:
            try:
                con.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            remove_files(self.store, self.new_files)
            raise
        _stage("committed")
        self.report.generation = gen
        self.report.compacted = compacting
        self.report.texts_embedded = self.emb.texts_embedded - self._emb_start
        self.report.embed_calls = self.emb.calls - self._calls_start
        snap = self.store.view(con)
        self.store.write_manifest(snap.state)
        self.store.clean_files(base_files(snap.base))
        if compacting:
            self._cache_upkeep()
        _stage("cleaned")

    def _cache_upkeep(self) -> None:
        """After a compaction: the embedding cache gets the vector of every
        live record it lacks (a corpus built before the cache existed), and
        loses those of other embedders and of texts no longer held. A cache
        failure costs re-embedding later, never this committed build.
        (Measured on 50,000 texts of a first build: 0.3 s, of 18 s.)"""
        flat = self.base_flat
        eid = self.emb.embedder_id
        try:
            # (a rebuild put every live vector through the cache already)
            if flat is not None and len(flat) and self.direct is None:
                missing = self.cache.missing(eid, self.store.db_path)
                for i in range(0, len(missing), 10_000):
                    part = missing[i : i + 10_000]
                    ids = np.array([r for r, _ in part], dtype=np.int64)
                    self.cache.put(eid, [h for _, h in part], flat.get(ids))
            self.cache.prune(eid, self.store.db_path)
        except (sqlite3.Error, OSError, ValueError):
            pass

    # ----------------------------------------------------------- pieces
    def _reset(self) -> None:
        con = self.con
        for table in ("records", "artifacts", "delta_vectors", "tombstones", "fields"):
            con.execute(f"DELETE FROM {table}")
        con.execute("DROP TABLE filter_values")
        con.execute(f'CREATE TABLE filter_values ("{AID_COLUMN}" INTEGER PRIMARY KEY)')

    def _old_vectors(self) -> tuple[dict[bytes, int], Any] | None:
        """For a rebuild under the same embedder: ``({content hash: id},
        old dense index)`` -- the embedding cache of the old generation."""
        if not self.state.get("dim"):
            return None
        snap = self.store.view(self.con)
        dense = load_dense(self.store, read_delta(snap, lexical=False))
        if dense is None:
            return None
        by_hash = {h: i for i, h in self.con.execute("SELECT id, content_hash FROM records")}
        return by_hash, dense

    def _remove_artifact(self, aid: int) -> None:
        """Delete an artifact's records (tombstones for base records), its
        ledger entry and filter row."""
        con = self.con
        base_next = int(self.base.get("next_id", 0))
        ids = [r[0] for r in con.execute("SELECT id FROM records WHERE aid = ?", (aid,))]
        in_base = [(i,) for i in ids if i < base_next]
        if in_base:
            con.executemany("INSERT INTO tombstones VALUES (?)", in_base)
        delta = [(i,) for i in ids if i >= base_next]
        if delta:
            con.executemany("DELETE FROM delta_vectors WHERE id = ?", delta)
        con.execute("DELETE FROM records WHERE aid = ?", (aid,))
        con.execute("DELETE FROM artifacts WHERE aid = ?", (aid,))
        con.execute(f'DELETE FROM filter_values WHERE "{AID_COLUMN}" = ?', (aid,))
        self.report.records_removed += len(ids)

    def _plans(self, stale: list[tuple[str, str]]) -> Iterator[list[_Plan]]:
        """Batches of (artifact_id, version, filter fields, surfaces, links
        or None), about ``batch_size`` surfaces each."""
        batch: list[_Plan] = []
        n = 0
        for artifact_id, version in stale:
            try:
                raw = self.source.get(artifact_id)
            except KeyError:
                raise CorpusError(
                    f"artifact {artifact_id!r} left the source during the build "
                    "(a file deleted meanwhile?); nothing was committed: run "
                    "the build again"
                ) from None
            try:
                if self.derived:
                    prior = self._prior(artifact_id)
                    carry: Any = self.strategy  # a strategy with derived_kinds
                    plan = carry.decompose_with_prior(artifact_id, raw, prior)
                else:
                    plan = self.strategy.decompose(artifact_id, raw)
                fields = self.source.filter_fields(artifact_id, raw, plan.filter_fields)
            except Exception as exc:
                raise type(exc)(f"indexing artifact {artifact_id!r} failed: {exc}") from exc
            surfaces = [s for s in plan.surfaces if isinstance(s, Surface) and s.text.strip()]
            if len(surfaces) != len([s for s in plan.surfaces if getattr(s, "text", "").strip()]):
                raise TypeError(
                    f"artifact {artifact_id!r}: the strategy returned surfaces "
                    "that are not rowvoi.corpus.Surface objects"
                )
            links = None
            if self.extractor is not None:
                links = self._extract(ledger_key(artifact_id), raw, fields)
            batch.append((artifact_id, version, fields, surfaces, links))
            n += len(surfaces)
            if n >= self.batch_size:
                yield batch
                batch, n = [], 0
        if batch:
            yield batch

    def _prior_surfaces(self, key: str | None) -> dict[str, list[Surface]]:
        """The stored surfaces of the strategy's ``derived_kinds``, by
        ledger key: of one artifact, or of all (``key`` None)."""
        kinds = list(self.derived)
        sql = (
            "SELECT a.artifact_id, r.kind, r.granularity, r.text, r.metadata FROM records r "
            f"JOIN artifacts a ON a.aid = r.aid WHERE r.kind IN ({', '.join('?' * len(kinds))})"
        )
        args: list[Any] = kinds
        if key is not None:
            sql += " AND a.artifact_id = ?"
            args = [*kinds, key]
        out: dict[str, list[Surface]] = {}
        for aid, kind, granularity, text, meta in self.con.execute(
            sql + " ORDER BY r.aid, r.surface_index", args
        ):
            out.setdefault(aid, []).append(
                Surface(aid, kind, text, granularity, json.loads(meta) if meta else {})
            )
        return out

    def _prior(self, artifact_id: str) -> list[Surface]:
        """An artifact's stored surfaces of the ``derived_kinds``."""
        key = ledger_key(artifact_id)
        if self.prior_all is not None:
            return self.prior_all.get(key, [])
        return self._prior_surfaces(key).get(key, [])

    def _reindex(
        self,
        stale: list[tuple[str, str]],
        ledger: dict[str, tuple[int, str]],
        old_vectors: tuple[dict[bytes, int], Any] | None,
    ) -> None:
        self._emb_start, self._calls_start = self.emb.texts_embedded, self.emb.calls
        self._seen: dict[bytes, int] = {}  # direct mode: text hash -> a record id
        bar = _Progress(self.progress, len(stale), f"building {self.source.name or 'corpus'}")
        try:
            for batch in self._plans(stale):
                texts = [s.text for _, _, _, surfs, _ in batch for s in surfs]
                hashes = [_hash_text(t) for t in texts]
                vectors = self._vectors(texts, hashes, old_vectors)
                _stage("embedded")
                rows: list[tuple[int, int, Surface]] = []
                artifacts: list[tuple[int, str, str, str, str, str]] = []
                for artifact_id, version, fields, surfs, links in batch:
                    if links is not None:
                        self._put_links(ledger_key(artifact_id), links)
                    entry = ledger.get(artifact_id)
                    if entry is not None:
                        self._remove_artifact(entry[0])
                    aid = self._put_artifact(
                        artifacts,
                        artifact_id,
                        version,
                        fields,
                        None if entry is None else entry[0],
                    )
                    rows += [(aid, j, s) for j, s in enumerate(surfs)]
                self.con.executemany(
                    "INSERT INTO artifacts (aid, artifact_id, version, strategy_id, embedder_id, "
                    "filter_fields) VALUES (?, ?, ?, ?, ?, ?)",
                    artifacts,
                )
                self.fields.flush()
                self._put_records(rows, hashes, vectors)
                bar.update(len(batch), embedded=self.emb.texts_embedded - self._emb_start)
        finally:
            bar.close()

    def _vectors(
        self,
        texts: list[str],
        hashes: list[bytes],
        old_vectors: tuple[dict[bytes, int], Any] | None,
    ) -> np.ndarray:
        """The batch's vectors: the cache first (the old generation's
        vectors in a rebuild under the same embedder; this build's; the
        delta's), then the embedder for the rest, each distinct text once."""
        found: dict[bytes, np.ndarray] = {}
        distinct = list(dict.fromkeys(hashes))
        if old_vectors is not None:
            by_hash, dense = old_vectors
            pairs = [(h, by_hash[h]) for h in distinct if h in by_hash]
            if pairs:
                for (h, _), v in zip(pairs, dense.get([i for _, i in pairs])):
                    found[h] = v
        if self.direct is not None and self.direct[1] is not None:
            pairs = [(h, self._seen[h]) for h in distinct if h not in found and h in self._seen]
            if pairs:
                for (h, _), v in zip(pairs, self.direct[1].get([i for _, i in pairs])):
                    found[h] = v
        elif self.rebuild is None:
            found.update(self._delta_cache([h for h in distinct if h not in found]))
        # the embedding cache: vectors a build computed before (an interrupted
        # one's among them), committed batch by batch. (Looked up only if it
        # held vectors of this embedder when the build began: those this
        # build adds are found above.)
        if self.cache_had is None:
            self.cache_had = self.cache.has(self.emb.embedder_id)
        cached = (
            self.cache.get(self.emb.embedder_id, self.dim, [h for h in distinct if h not in found])
            if self.cache_had
            else {}
        )
        if cached:
            if self.dim is None:
                self.dim = int(next(iter(cached.values())).shape[0])
            found.update(cached)
        todo = [h for h in distinct if h not in found]
        if todo:
            first: dict[bytes, str] = {}
            for t, h in zip(texts, hashes):
                first.setdefault(h, t)
            t0 = time.perf_counter()
            vecs = self.emb.embed([first[h] for h in todo])
            self.report.embed_seconds += time.perf_counter() - t0
            if self.dim is None:
                self.dim = int(vecs.shape[1])
            elif vecs.shape[1] != self.dim:
                raise EmbedderMismatch(
                    f"embedder {self.emb.embedder_id!r} returned {vecs.shape[1]}-dimensional "
                    f"vectors; this corpus holds {self.dim}-dimensional ones"
                )
            for h, v in zip(todo, vecs):
                found[h] = v
        keep = [h for h in distinct if h not in cached]
        if keep:
            self.cache.put(self.emb.embedder_id, keep, np.stack([found[h] for h in keep]))
        embedded = set(todo)
        self.report.cache_hits += sum(1 for h in hashes if h not in embedded)
        if not hashes:
            return np.zeros((0, self.dim or 1), dtype=np.float32)
        return np.stack([found[h] for h in hashes]).astype(np.float32, copy=False)

    def _delta_cache(self, missing: list[bytes]) -> dict[bytes, np.ndarray]:
        """Vectors of texts already in the delta (same embedder: the corpus's)."""
        if not self.dim:
            return {}
        base_next = int(self.base.get("next_id", 0))
        rows = (
            self.con.execute(
                "SELECT r.content_hash, v.vector FROM records r JOIN delta_vectors v ON v.id = r.id "
                "WHERE r.content_hash IN (SELECT unhex(value) FROM json_each(?)) AND r.id >= ?",
                (json.dumps([h.hex() for h in missing]), base_next),
            ).fetchall()
            if _HAS_UNHEX
            else self._delta_cache_rows(missing, base_next)
        )
        return {h: np.frombuffer(v, dtype=np.float32) for h, v in rows}

    def _delta_cache_rows(self, missing: list[bytes], base_next: int) -> list[tuple[bytes, bytes]]:
        out: list[tuple[bytes, bytes]] = []
        for i in range(0, len(missing), 500):
            chunk = missing[i : i + 500]
            out += self.con.execute(
                "SELECT r.content_hash, v.vector FROM records r JOIN delta_vectors v ON "
                f"v.id = r.id WHERE r.content_hash IN ({', '.join('?' * len(chunk))}) "
                "AND r.id >= ?",
                (*chunk, base_next),
            ).fetchall()
        return out

    def _put_artifact(
        self,
        out: list[tuple[int, str, str, str, str, str]],
        artifact_id: str,
        version: str,
        fields: Mapping[str, Any],
        aid: int | None,
    ) -> int:
        """Queue an artifact's ledger row (into ``out``) and filter row;
        returns its internal id (a changed artifact keeps its own)."""
        self.fields.observe(artifact_id, fields)
        doc = (
            json.dumps({k: _jsonable(v) for k, v in fields.items()}, default=str)
            if fields
            else "{}"
        )
        if aid is None:
            aid = self.next_aid
            self.next_aid += 1
        out.append(
            (aid, ledger_key(artifact_id), version, self.strategy_id, self.emb.embedder_id, doc)
        )
        self.fields.write(aid, artifact_id, fields)
        return aid

    def _put_records(
        self, rows: list[tuple[int, int, Surface]], hashes: Sequence[bytes], vectors: np.ndarray
    ) -> None:
        """Write a batch of records ``(aid, surface_index, surface)`` with
        their hashes and vectors: rows, then the in-memory indexes (a full
        rebuild) or the delta's vectors."""
        n = len(rows)
        if n == 0:
            return
        ids = np.arange(self.next_id, self.next_id + n, dtype=np.int64)
        self.next_id += n
        id_list = ids.tolist()
        self.con.executemany(
            "INSERT INTO records (id, aid, surface_index, kind, granularity, text, metadata, "
            "content_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    i,
                    aid,
                    j,
                    s.kind,
                    s.granularity,
                    s.text,
                    json.dumps({k: _jsonable(v) for k, v in s.metadata.items()}, default=str)
                    if s.metadata
                    else "{}",
                    h,
                )
                for i, (aid, j, s), h in zip(id_list, rows, hashes)
            ],
        )
        if self.direct is not None:
            lexical, dense = self.direct
            lexical.add([s.text for _, _, s in rows], ids=ids)
            if dense is None:
                from rowvoi.index.flat import FlatIndex

                dense = FlatIndex(int(vectors.shape[1]), metric="ip", storage=FLAT_STORAGE)
                self.direct = (lexical, dense)
            dense.add(vectors, ids=ids)
            for i, h in zip(id_list, hashes):
                self._seen.setdefault(h, i)
        else:
            self.con.executemany(
                "INSERT INTO delta_vectors VALUES (?, ?)",
                [(i, v.tobytes()) for i, v in zip(id_list, vectors)],
            )
        self.report.records_added += n

    def _should_compact(self) -> bool:
        if self.compact is False:
            return False
        base_next = int(self.base.get("next_id", 0))
        c = self.con
        n_delta = c.execute("SELECT count(*) FROM records WHERE id >= ?", (base_next,)).fetchone()[
            0
        ]
        n_tomb = c.execute("SELECT count(*) FROM tombstones").fetchone()[0]
        n_live = c.execute("SELECT count(*) FROM records").fetchone()[0]
        return bool(n_delta + n_tomb > max(COMPACT_MIN, COMPACT_RATIO * n_live))

    def _compact(self, gen: int) -> dict[str, Any]:
        """Write the index files of generation ``gen`` (all live records)
        and clear the delta; returns the new base description."""
        dense: FlatIndex | HNSWIndex | None
        if self.direct is not None:
            lexical, dense = self.direct
        else:
            snap = self.store.view(self.con)  # sees this transaction's rows
            lexical = load_lexical(self.store, read_delta(snap, dense=False))
            dense = load_dense(self.store, read_delta(snap, lexical=False))
        flat: Any = getattr(dense, "exact", dense)  # an HNSWIndex's exact twin
        self.base_flat = flat
        base = write_base_files(
            self.store, gen, lexical, flat, self.hnsw, self.new_files, self.next_id
        )
        self.con.execute("DELETE FROM tombstones")
        self.con.execute("DELETE FROM delta_vectors")
        return base


def write_base_files(
    store: CorpusStore,
    gen: int,
    lexical: BM25Index,
    flat: FlatIndex | None,
    hnsw: Mapping[str, Any] | None,
    new_files: list[str],
    next_id: int,
) -> dict[str, Any]:
    """Write the index files of generation ``gen`` -- ``lexical.<gen>.rvx``,
    and ``dense.<gen>.rvf`` or (with ``hnsw`` parameters) a fresh graph in
    ``hnsw.<gen>/`` -- from indexes holding every live record, each fsynced
    (the directory too); the name of each is appended to ``new_files``
    before it is written, so that a failing caller deletes it. Returns the
    base description the caller's commit publishes. (The builder's
    compaction and :func:`rowvoi.corpus.repair` share it.)"""
    lex_name, dense_name, hnsw_name = f"lexical.{gen}.rvx", None, None
    new_files.append(lex_name)
    lexical.compact()
    lexical.save(store.path / lex_name, mode=PRIVATE_FILE)
    _stage("lexical-written")
    if flat is not None and len(flat):
        if hnsw:
            # a fresh graph of the live vectors (no deleted nodes), built
            # in ascending id order on one thread: deterministic
            from rowvoi.index.hnsw import HNSWIndex

            ids = np.sort(flat.ids())
            graph = HNSWIndex(flat.dim, metric="ip", max_elements=max(1, len(ids)), **hnsw)
            for i in range(0, len(ids), 50_000):
                part = ids[i : i + 50_000]
                graph.add(flat.get(part), ids=part)
            hnsw_name = f"hnsw.{gen}"
            new_files.append(hnsw_name)
            graph.save(store.path / hnsw_name, mode=PRIVATE_FILE)
            fsync_dir(store.path)
        else:
            dense_name = f"dense.{gen}.rvf"
            new_files.append(dense_name)
            flat.save(store.path / dense_name, mode=PRIVATE_FILE)
    _stage("dense-written")
    names = [n for n in (lex_name, dense_name, hnsw_name) if n]
    return {
        "generation": gen,
        "lexical": lex_name,
        "dense": dense_name,
        "hnsw": hnsw_name,
        "next_id": next_id,
        # as written: a later build loads (verifies) only a file that changed
        "fingerprints": {n: fingerprint(store.path / n) for n in names},
    }


def remove_files(store: CorpusStore, names: Sequence[str]) -> None:
    """Delete index files (or directories) of an uncommitted generation."""
    for name in names:
        path = store.path / name
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
        except OSError:
            pass


def _spec_or_none(strategy: Any) -> dict[str, Any] | None:
    try:
        return strategy_to_spec(strategy)
    except ValueError:
        return None


_HAS_UNHEX = sqlite3.sqlite_version_info >= (3, 41, 0)
