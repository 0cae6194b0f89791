"""Check a corpus's index files, and rebuild them when they are damaged.

A corpus directory (:mod:`rowvoi.corpus.storage.layout`) holds its truth in
``docs.sqlite`` -- the ledger and every record with its text and content
hash -- and derived files: the BM25 index ``lexical.<g>.rvx`` and the vector
index ``dense.<g>.rvf`` or ``hnsw.<g>/`` of its base generation ``g``, plus
the embedding cache ``embeddings.sqlite`` (:mod:`rowvoi.corpus.storage.vectors`).
Everything derived can be rebuilt from the truth:

* :func:`check` finds damaged index files
  (:func:`rowvoi.corpus.storage.damage.check_files`): missing, not a regular file (or,
  for ``hnsw.<g>/``, not a directory with its ``hnsw.json`` and the parts it
  names), empty; with ``deep=True`` also every file loaded as a search
  would load it (checksums and structure, by the engine's loaders) and
  compared with the generation's records (the same ids, the corpus's
  dimension), and ``docs.sqlite`` itself checked (``PRAGMA quick_check``).
* :func:`repair` rewrites the index files of a damaged corpus as a new
  generation, from the records in ``docs.sqlite`` (the BM25 index from
  their texts) and their vectors from the embedding cache -- so nothing is
  re-embedded. A vector the cache lacks (a corpus built before the cache
  existed) is taken from the delta rows or from an intact vector file, and
  only if none has it, embedded again with the corpus's pinned embedder
  (counted in :attr:`RepairReport.texts_embedded`). The new files are
  written and fsynced, then one SQLite transaction publishes them, as a
  build's compaction does (searches keep answering from the old generation
  until then, and then reload); the damaged files are deleted after the
  commit. A corpus with nothing damaged is left untouched.
* ``docs.sqlite`` damaged is the one thing no repair restores: its rows are
  the truth. The corpus is rebuilt from its source then (``rowvoi rm NAME
  --keep-registration``, then ``rowvoi build NAME``); :func:`repair` says so.

On the command line: ``rowvoi build NAME --repair``; ``rowvoi info NAME``
reports missing or misplaced files (``--check`` verifies every file);
``rowvoi maintain`` reports a damaged corpus, and ``maintain --force``
repairs it before it builds.

Examples
--------
>>> import os
>>> from rowvoi.corpus import CorpusStore, build, from_mapping, search
>>> c = build(from_mapping({"a": "lift of a wing", "b": "heat in a pipe"},
...                        embedder="hashing:32"), store=CorpusStore.memory())
>>> check(c)
[]
>>> os.unlink(c.store.path / "dense.1.rvf")
>>> [str(d) for d in check(c)]
['dense.1.rvf: missing']
>>> r = repair(c)
>>> r.repaired, r.generation, r.texts_embedded, r.vectors_from_cache
(True, 2, 0, 2)
>>> [h.artifact_id for h in search(c, "wing", k=1)]
['a']
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rowvoi.corpus.storage.damage import IndexDamage, base_ids, check_files, load_base
from rowvoi.corpus.storage.index_files import default_lexical, new_lexical
from rowvoi.corpus.storage.layout import FLAT_STORAGE, base_files
from rowvoi.corpus.storage.snapshot import Snapshot
from rowvoi.corpus.storage.store import CorpusStore, rebuild_advice, repair_command
from rowvoi.errors import IndexFormatError

if TYPE_CHECKING:
    from rowvoi.index.flat import FlatIndex

__all__ = ["RepairReport", "check", "repair", "repair_hint"]

_MANIFEST_MAX = 1 << 20  # bytes of hnsw.json read for an exact twin
_BATCH = 20_000  # records per step of a repair


@dataclass
class RepairReport:
    """What :func:`repair` did.

    Attributes
    ----------
    generation : int
        The committed generation afterwards (unchanged when nothing was
        damaged).
    damaged : list of IndexDamage
        What the check found before the repair.
    repaired : bool
        New index files were written and committed.
    files : list of str
        The index files written.
    n_records : int
        Live records indexed.
    vectors_from_cache, vectors_from_index, texts_embedded : int
        Where the vectors came from: the embedding cache, the corpus's own
        intact vector file or delta rows, or the embedder (only for vectors
        found nowhere else).
    seconds : float
        Wall time.
    """

    generation: int = 0
    damaged: list[IndexDamage] = field(default_factory=list)
    repaired: bool = False
    files: list[str] = field(default_factory=list)
    n_records: int = 0
    vectors_from_cache: int = 0
    vectors_from_index: int = 0
    texts_embedded: int = 0
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``damaged`` as dicts)."""
        out = dataclasses.asdict(self)
        out["damaged"] = [d.to_dict() for d in self.damaged]
        return out


# -------------------------------------------------------------------- check

# -------------------------------------------------------------------- check


def _store_of(corpus: Any) -> CorpusStore:
    from rowvoi.corpus.retrieval.corpus import Corpus

    if isinstance(corpus, Corpus):
        return corpus.store
    if isinstance(corpus, CorpusStore):
        return corpus
    if isinstance(corpus, str):
        return CorpusStore.local(corpus)
    raise TypeError(
        f"corpus must be a Corpus, a corpus name or a CorpusStore, not {type(corpus).__name__}"
    )


def check(corpus: Any, *, deep: bool = True) -> list[IndexDamage]:
    """The damaged files of a corpus (``[]``: none found).

    Parameters
    ----------
    corpus : Corpus, corpus name or CorpusStore
    deep : bool
        Load every index file (verifying its checksums and structure, as a
        search would) and compare it with the generation's records, and run
        SQLite's ``quick_check`` on ``docs.sqlite`` (default). False: only
        look at the files (a ``stat`` each), as ``rowvoi info`` does.

    Raises
    ------
    CorpusNotFound
        No such corpus.
    rowvoi.errors.IndexFormatError
        ``docs.sqlite`` cannot even be read (the message says how to rebuild).

    Notes
    -----
    Reads one snapshot; safe alongside searches and a build (it checks the
    generation committed when it starts).
    """
    store = _store_of(corpus)
    store.require()
    with store.snapshot() as snap:
        return check_files(store, snap, deep=deep)


# ------------------------------------------------------------------- repair


def _exact_twin(path: Path) -> FlatIndex | None:
    """The exact twin of an HNSW directory whose graph is damaged, when it
    still loads (None otherwise)."""
    from rowvoi.index.flat import FlatIndex

    try:
        with open(path / "hnsw.json", "rb") as fh:
            meta = json.loads(fh.read(_MANIFEST_MAX))
        part = "exact.rvf" if meta.get("format_version") == 1 else meta["exact_file"]
        if not isinstance(part, str) or "/" in part:
            return None
        return FlatIndex.load(path / part)
    except Exception:  # noqa: BLE001 - anything wrong: no vectors from it
        return None


class _Vectors:
    """Where a repair finds each record's vector, best first: the embedding
    cache, the delta rows, an intact base vector file, the embedder."""

    def __init__(
        self,
        store: CorpusStore,
        snap: Snapshot,
        damaged: set[str],
        cache: Any,
        embedder: Any,
        report: RepairReport,
    ) -> None:
        self.store, self.snap, self.cache, self.report = store, snap, cache, report
        self.damaged = damaged
        self.eid = str(snap.state["embedder_id"])
        self.dim = int(snap.state["dim"])
        self.embedder_arg = embedder
        self._old: Any = False  # not looked for yet
        self._emb: Any = None

    def _old_index(self) -> Any:
        """The base vector index, if its file is intact (or an HNSW
        directory's exact twin)."""
        if self._old is False:
            self._old = None
            base = self.snap.base
            name = base.get("hnsw") or base.get("dense")
            if name:
                path = self.store.path / name
                if name not in self.damaged:
                    try:
                        self._old = load_base(
                            self.store, self.snap, "hnsw" if base.get("hnsw") else "dense", name
                        )
                    except Exception:  # noqa: BLE001 - unusable: look elsewhere
                        self._old = None
                elif base.get("hnsw") and path.is_dir() and not path.is_symlink():
                    self._old = _exact_twin(path)
                    # (a twin is trusted only when it holds this base's records)
                    if self._old is not None:
                        held = np.sort(np.asarray(self._old.ids(), dtype=np.int64))
                        if not np.array_equal(held, base_ids(self.snap)):
                            self._old = None
                if self._old is not None and self._old.dim != self.dim:
                    self._old = None
        return self._old

    def _embedder(self) -> Any:
        from rowvoi.corpus.base import EmbedderMismatch, EmbedderUnavailable
        from rowvoi.corpus.embedders import embedder_for_id, make_embedder

        if self._emb is None:
            emb: Any
            if self.embedder_arg is not None:
                emb = make_embedder(self.embedder_arg, persistent=not self.store.temporary)
                if emb.embedder_id != self.eid:
                    raise EmbedderMismatch(
                        f"{self.store._label()} was built with embedder {self.eid!r}, not "
                        f"{emb.embedder_id!r}"
                    )
            else:
                emb = embedder_for_id(self.eid, corpus=self.store.name)
                if emb is None:
                    raise EmbedderUnavailable(
                        f"some vectors of {self.store._label()} are in no intact file and not "
                        f"in its embedding cache, and its embedder {self.eid!r} is a callable "
                        "that cannot be recreated from its id: pass it, "
                        f"repair(..., embedder=(function, {self.eid!r}))"
                    )
            self._emb = emb
        return self._emb

    def get(self, ids: np.ndarray, hashes: list[bytes]) -> np.ndarray:
        """The vectors of records ``ids`` (with their content hashes)."""
        out = np.empty((len(ids), self.dim), dtype=np.float32)
        have = np.zeros(len(ids), dtype=bool)
        cached = self.cache.get(self.eid, self.dim, hashes)
        for i, h in enumerate(hashes):
            v = cached.get(h)
            if v is not None:
                out[i] = v
                have[i] = True
        self.report.vectors_from_cache += int(have.sum())
        fresh: list[int] = []  # rows found elsewhere: into the cache too
        todo = np.flatnonzero(~have)
        if len(todo):
            base_next = int(self.snap.base.get("next_id", 0))
            delta = [int(ids[i]) for i in todo if ids[i] >= base_next]
            if delta:
                pos = {int(ids[i]): int(i) for i in todo}
                for rid, blob in self.snap.con.execute(
                    "SELECT id, vector FROM delta_vectors WHERE id IN (SELECT value FROM "
                    "json_each(?))",
                    (json.dumps(delta),),
                ):
                    v = np.frombuffer(blob, dtype=np.float32)
                    if v.shape == (self.dim,) and np.isfinite(v).all():
                        out[pos[rid]] = v
                        have[pos[rid]] = True
                        fresh.append(pos[rid])
            todo = np.flatnonzero(~have)
        if len(todo):
            old = self._old_index()
            if old is not None:
                held = np.array([ids[i] in old for i in todo], dtype=bool)
                if held.any():
                    rows = todo[held]
                    out[rows] = old.get(ids[rows])
                    have[rows] = True
                    fresh.extend(int(i) for i in rows)
            todo = np.flatnonzero(~have)
        self.report.vectors_from_index += len(fresh)
        if len(todo):
            texts = dict(
                self.snap.con.execute(
                    "SELECT id, text FROM records WHERE id IN (SELECT value FROM json_each(?))",
                    (json.dumps([int(ids[i]) for i in todo]),),
                )
            )
            vecs = self._embedder().embed([texts[int(ids[i])] for i in todo])
            if vecs.shape != (len(todo), self.dim):
                from rowvoi.corpus.base import EmbedderMismatch

                raise EmbedderMismatch(
                    f"the embedder returned vectors of shape {vecs.shape}; "
                    f"{self.store._label()} holds {self.dim}-dimensional ones"
                )
            out[todo] = vecs
            self.report.texts_embedded += len(todo)
            fresh.extend(int(i) for i in todo)
        if fresh:
            self.cache.put(self.eid, [hashes[i] for i in fresh], out[fresh])
        return out


def repair(corpus: Any, *, embedder: Any = None) -> RepairReport:
    """Rebuild a corpus's damaged index files from ``docs.sqlite`` and the
    embedding cache, re-embedding nothing the cache holds (see the module
    notes; the command line: ``rowvoi build NAME --repair``).

    Parameters
    ----------
    corpus : Corpus, corpus name or CorpusStore
    embedder : spec, optional
        Only needed when some vector is found neither in the cache nor in an
        intact file *and* the corpus was built with a callable (which cannot
        be recreated from its id); it must be the corpus's embedder.

    Returns
    -------
    RepairReport
        ``repaired`` False (and nothing written) when no file was damaged.

    Raises
    ------
    CorpusNotFound
        No such corpus.
    CorpusLocked
        A build holds the corpus: repair it when the build has finished.
    rowvoi.errors.IndexFormatError
        ``docs.sqlite`` is damaged: no repair restores its rows; the
        message says how to rebuild the corpus from its source.
    EmbedderUnavailable, EmbedderMismatch
        Vectors must be recomputed and the embedder cannot be.

    Notes
    -----
    Holds the build lock; searches keep answering meanwhile (from the old
    generation until the one commit, then from the repaired one).
    """
    from rowvoi.corpus.indexing.build import remove_files, write_base_files
    from rowvoi.corpus.storage.vectors import CACHE_FILE, EmbeddingCache

    t0 = time.perf_counter()
    store = _store_of(corpus)
    store.require()
    report = RepairReport()
    with store.lock():
        con = store.writer_connection()
        new_files: list[str] = []
        cache = EmbeddingCache(store.path / CACHE_FILE)
        try:
            snap = store.view(con)  # we hold the lock: nothing changes it
            report.generation = snap.generation
            report.damaged = check_files(store, snap, deep=True)
            lost = [d for d in report.damaged if not d.repairable]
            if lost:
                raise IndexFormatError(
                    f"RV_E_CORRUPT: {store.db_path}: damaged ({lost[0].problem}); "
                    f"{rebuild_advice(store)}"
                )
            if not report.damaged:
                report.seconds = time.perf_counter() - t0
                return report
            state = snap.state
            gen = snap.generation + 1
            lexical = new_lexical(state.get("lexical") or default_lexical())
            flat = None
            if state.get("dim"):
                from rowvoi.index.flat import FlatIndex

                flat = FlatIndex(int(state["dim"]), metric="ip", storage=FLAT_STORAGE)
            vectors = _Vectors(
                store, snap, {d.file for d in report.damaged}, cache, embedder, report
            )
            cur = con.execute("SELECT id, text, content_hash FROM records ORDER BY id")
            while True:
                rows = cur.fetchmany(_BATCH)
                if not rows:
                    break
                ids = np.array([r[0] for r in rows], dtype=np.int64)
                lexical.add([r[1] for r in rows], ids=ids)
                if flat is not None:
                    flat.add(vectors.get(ids, [bytes(r[2]) for r in rows]), ids=ids)
                report.n_records += len(rows)
            cache.sync()
            base = write_base_files(
                store,
                gen,
                lexical,
                flat,
                state.get("hnsw"),
                new_files,
                int(state.get("next_id", 0)),
            )
            con.execute("BEGIN IMMEDIATE")
            try:
                con.execute("DELETE FROM tombstones")
                con.execute("DELETE FROM delta_vectors")
                con.executemany(
                    "INSERT OR REPLACE INTO state VALUES (?, ?)",
                    [
                        (k, json.dumps(v))
                        for k, v in (("base", base), ("generation", gen), ("updated", time.time()))
                    ],
                )
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
        except BaseException:
            store.close_writer()
            remove_files(store, new_files)
            raise
        finally:
            cache.close()
        report.repaired = True
        report.generation = gen
        report.files = base_files(base)
        snap = store.view(con)
        store.write_manifest(snap.state)
        store.clean_files(base_files(snap.base))
    report.seconds = time.perf_counter() - t0
    return report


def repair_hint(corpus: Any) -> str:
    """The repair command of a corpus (:func:`rowvoi.corpus.storage.store.repair_command`).

    >>> repair_hint("notes")
    'rowvoi build notes --repair'
    """
    return repair_command(_store_of(corpus))
