"""Corpora: point rowvoi at your documents, keep the index fresh, search it.

A *corpus* is a named, built, queryable collection of documents, stored in
one directory (``manifest.json``, ``docs.sqlite`` and the engine's index
files). It is defined by a :class:`CorpusSource` (what is in it, how to
tell what changed, how each item becomes text), built incrementally by
:func:`build`, and searched by :func:`search` in dense, lexical or hybrid
mode with hard metadata filters.

One module per stage:

``base``
    the data model: :class:`Artifact`, :class:`Surface`, :class:`IndexPlan`,
    :class:`Record`, :class:`SearchHit`, :func:`best_per_artifact`,
    :func:`tag_source`, and the errors.

Examples
--------
>>> from rowvoi.corpus import SearchHit
>>> SearchHit("doc-1", "document", 0.5, "text").to_dict()["artifact_id"]
'doc-1'
"""

# -- data model and errors (base) --------------------------------------------
from rowvoi.corpus.base import (
    GRANULARITIES,
    POINTER_KEYS,
    Artifact,
    CorpusEmpty,
    CorpusError,
    CorpusExists,
    CorpusLocked,
    CorpusNotFound,
    EmbedderError,
    EmbedderMismatch,
    EmbedderUnavailable,
    FilterFields,
    IndexPlan,
    NoLedgerEntry,
    Record,
    SearchHit,
    Surface,
    best_per_artifact,
    ledger_key,
    plain,
    storage_key,
    tag_source,
)

__all__ = [
    # base
    "Artifact", "Surface", "IndexPlan", "Record", "SearchHit", "FilterFields",
    "POINTER_KEYS", "GRANULARITIES", "best_per_artifact", "tag_source", "storage_key",
    "ledger_key", "plain",
    "CorpusError", "CorpusNotFound", "CorpusExists", "CorpusEmpty", "CorpusLocked",
    "NoLedgerEntry", "EmbedderError", "EmbedderMismatch", "EmbedderUnavailable",
]
