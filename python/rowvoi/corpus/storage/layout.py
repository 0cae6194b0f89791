"""The layout of a corpus directory and the schema of its ``docs.sqlite``.

A corpus directory (DESIGN §5)::

    manifest.json       a description (format, embedder, analyzer, strategy,
                        counts); replaced atomically after each commit; never
                        read to decide anything
    docs.sqlite         the truth, in WAL mode (plus -wal and -shm while open)
    build.lock          the builder lock; holds the builder's pid
    lexical.<g>.rvx     the BM25 index of base generation g (engine file)
    dense.<g>.rvf       the flat vector index of base generation g, or
    hnsw.<g>/           its HNSW graph (a directory written by
                        rowvoi.index.hnsw.HNSWIndex.save, whose exact twin also
                        answers exact searches) when the corpus has one
    embeddings.sqlite   the embedding cache (rowvoi.corpus.storage.vectors): every
                        live record's vector by embedder id and text hash;
                        a cache, written outside the commit point

Everything but ``docs.sqlite`` is derived from it: a damaged or missing
index file is reported with the command that rebuilds it
(:func:`rowvoi.corpus.storage.store.repair_command`,
:func:`rowvoi.corpus.repair`).

``docs.sqlite`` holds the ``state`` (committed generation, base files,
embedder id and dimension, analyzer and BM25 settings, strategy id, the
record id counter), the ``artifacts`` (the ledger: version, strategy id,
embedder id and filter fields per artifact), the ``records`` (one per
surface: int64 id, artifact, plan-global surface index, kind, text,
surface metadata, content hash), the typed ``filter_values`` table that
filters run against (one typed column per filter field; ``fields`` lists
their types), the ``delta_vectors`` and ``tombstones`` described below,
the ``links`` of the link graph (one row per edge: source artifact id,
edge type, target corpus -- ``''`` for this one -- and artifact id, its
position among the source's links, optional text and time; see
:mod:`rowvoi.corpus.indexing.edges`), and the ``calibration`` table of
calibrated abstention floors (one JSON record per search key, written by
:meth:`~rowvoi.corpus.storage.store.CorpusStore.set_calibration` under the
builder lock; see :mod:`rowvoi.corpus.retrieval.calibration`).

Base plus delta
---------------
The index files are written only when a build *compacts*: they then hold
every live record, and carry the generation in their names. Between
compactions a build writes nothing but SQLite rows: records added since the
base (ids at or above the base's ``next_id``, their vectors in
``delta_vectors``) and ``tombstones`` (ids in the base files that are no
longer live). A reader loads the base files, deletes the tombstones and
adds the delta (:mod:`rowvoi.corpus.storage.index_files`) -- with the
engine's incremental BM25 and flat index, so the scores equal those of a
fresh build -- which makes an edit cost work in proportion to the change,
at build time and in bytes written. A build compacts when the delta
exceeds :data:`COMPACT_MIN` records and :data:`COMPACT_RATIO` of the live
ones (or when it rebuilds everything).

Trust
-----
Index file names come from ``docs.sqlite``, which a corpus received from
elsewhere could fill with anything: each is checked by
:func:`check_index_name` (a plain name of this directory, of the form the
builder writes) before anything opens it.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Mapping
from typing import Any

from rowvoi.errors import IndexFormatError

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "COMPACT_MIN",
    "COMPACT_RATIO",
    "AID_COLUMN",
    "HNSW_PARAMS",
    "FLAT_STORAGE",
    "MANIFEST",
    "DB",
    "LOCK",
    "INDEX_FILE",
    "SCHEMA",
    "LINK_COLUMNS",
    "ensure_links_table",
    "base_files",
    "check_index_name",
]

#: The ``format`` written in ``manifest.json`` and in the state table.
FORMAT = "rowvoi-corpus"
#: Version of the directory layout and SQLite schema.
FORMAT_VERSION = 1
#: A build compacts (rewrites the index files) when the delta exceeds this
#: many records ...
COMPACT_MIN = 1000
#: ... and this fraction of the live records.
COMPACT_RATIO = 0.05
#: The artifact key column of ``filter_values`` (reserved prefix: it can
#: never clash with a filter field).
AID_COLUMN = "__rowvoi_aid"

#: HNSW settings of corpora built with ``hnsw=True`` (single-threaded
#: insertion: the graph, and so every result, is deterministic).
HNSW_PARAMS = {"M": 16, "ef_construction": 200, "ef": 64, "seed": 100}

#: Storage of the flat vector index: float32 rows plus an int8 copy, so that
#: a large corpus is scanned in int8 and its candidates re-scored exactly in
#: float32 (``search(index="auto")``), while ``index="flat"`` scans float32.
FLAT_STORAGE = "int8"

#: The corpus's description (never read to decide anything).
MANIFEST = "manifest.json"
#: The corpus's database: the truth, and the single commit point.
DB = "docs.sqlite"
#: The builder lock (:mod:`rowvoi.corpus.storage.lock`).
LOCK = "build.lock"
#: Names of index files and directories, and of their temporaries.
INDEX_FILE = re.compile(r"^(?:lexical\.\d+\.rvx|dense\.\d+\.rvf|hnsw\.\d+)(?:\.tmp-.+)?$")
#: The name a base's index file of each kind has (see the layout above).
_BASE_NAME = {
    "lexical": re.compile(r"lexical\.[0-9]{1,19}\.rvx"),
    "dense": re.compile(r"dense\.[0-9]{1,19}\.rvf"),
    "hnsw": re.compile(r"hnsw\.[0-9]{1,19}"),
}

#: The tables of ``docs.sqlite`` (statements separated by ``;``).
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS artifacts (
    aid INTEGER PRIMARY KEY,
    artifact_id TEXT NOT NULL UNIQUE,
    version TEXT NOT NULL,
    strategy_id TEXT NOT NULL,
    embedder_id TEXT NOT NULL,
    filter_fields TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS records (
    id INTEGER PRIMARY KEY,
    aid INTEGER NOT NULL,
    surface_index INTEGER NOT NULL,
    kind TEXT NOT NULL,
    granularity TEXT NOT NULL,
    text TEXT NOT NULL,
    metadata TEXT NOT NULL,
    content_hash BLOB NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS records_by_artifact ON records (aid, surface_index);
CREATE INDEX IF NOT EXISTS records_by_hash ON records (content_hash);
CREATE TABLE IF NOT EXISTS delta_vectors (id INTEGER PRIMARY KEY, vector BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS tombstones (id INTEGER PRIMARY KEY);
CREATE TABLE IF NOT EXISTS fields (
    name TEXT PRIMARY KEY, type TEXT NOT NULL, integer INTEGER NOT NULL,
    declared INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS filter_values ("{AID_COLUMN}" INTEGER PRIMARY KEY);
CREATE TABLE IF NOT EXISTS links (
    source TEXT NOT NULL, edge_type TEXT NOT NULL, target_source TEXT NOT NULL,
    target TEXT NOT NULL, seq INTEGER NOT NULL, text TEXT, time INTEGER,
    PRIMARY KEY (source, seq)
) WITHOUT ROWID;
CREATE UNIQUE INDEX IF NOT EXISTS links_once ON links (source, edge_type, target_source, target);
CREATE TABLE IF NOT EXISTS calibration (mode TEXT PRIMARY KEY, record TEXT NOT NULL)
    WITHOUT ROWID;
"""


#: The columns of the current ``links`` table, in order.
LINK_COLUMNS = ["source", "edge_type", "target_source", "target", "seq", "text", "time"]


def ensure_links_table(con: sqlite3.Connection) -> None:
    """Give a corpus created before links were written (whose reserved
    ``links`` table was always empty) the current ``links`` table. Only a
    builder calls this, inside its transaction."""
    cols = [r[1] for r in con.execute("PRAGMA table_info(links)")]
    if cols == LINK_COLUMNS:
        return
    if cols and con.execute("SELECT 1 FROM links LIMIT 1").fetchone() is not None:
        raise IndexFormatError(
            "RV_E_CORRUPT: docs.sqlite: a links table of an unknown layout "
            "holds rows; rebuild the corpus"
        )
    con.execute("DROP TABLE IF EXISTS links")
    for stmt in SCHEMA.split(";"):
        if "IF NOT EXISTS links" in stmt:
            con.execute(stmt)


def base_files(base: Mapping[str, Any]) -> list[str]:
    """The names of a base's index files and directories, each checked by
    :func:`check_index_name` (``IndexFormatError`` for a bad one).

    >>> base_files({"lexical": "lexical.3.rvx", "dense": None, "hnsw": "hnsw.3"})
    ['lexical.3.rvx', 'hnsw.3']
    """
    return [check_index_name(k, base[k]) for k in ("lexical", "dense", "hnsw") if base.get(k)]


def check_index_name(kind: str, name: Any) -> str:
    """``name`` if it is a name the builder gives an index file of ``kind``
    (``"lexical"``: ``lexical.<g>.rvx``, ``"dense"``: ``dense.<g>.rvf``,
    ``"hnsw"``: ``hnsw.<g>``), else raise -- the one check every index
    file name read from ``docs.sqlite`` passes before anything opens it.

    Such a name is a plain name inside the corpus directory: no separator,
    no ``..``, not absolute, no NUL. A received corpus whose database names
    ``../../etc/passwd`` or ``/dev/zero`` is refused here.

    Raises
    ------
    rowvoi.errors.IndexFormatError
        ``RV_E_CORRUPT``: another name (or not a string); the message
        names it and says to rebuild.

    Examples
    --------
    >>> check_index_name("lexical", "lexical.12.rvx")
    'lexical.12.rvx'
    >>> check_index_name("dense", "../dense.1.rvf")
    Traceback (most recent call last):
    ...
    rowvoi.errors.IndexFormatError: RV_E_CORRUPT: docs.sqlite names the dense index file '../dense.1.rvf', not a file name of the corpus directory (dense.<generation>.rvf); the corpus is damaged or was not written by rowvoi: delete it and build it again
    """
    pattern = _BASE_NAME.get(kind)
    if pattern is None:
        raise ValueError(f"kind {kind!r}: index files are lexical, dense or hnsw")
    if isinstance(name, str) and pattern.fullmatch(name):
        return name
    form = {"lexical": "lexical.<generation>.rvx", "dense": "dense.<generation>.rvf"}.get(
        kind, "hnsw.<generation>"
    )
    raise IndexFormatError(
        f"RV_E_CORRUPT: docs.sqlite names the {kind} index file {name!r}, not a file "
        f"name of the corpus directory ({form}); the corpus is damaged or was not "
        "written by rowvoi: delete it and build it again"
    )
