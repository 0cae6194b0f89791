"""The corpus's storage wing: where a corpus lives and how it is read.

The lowest wing of :mod:`rowvoi.corpus`: it imports nothing of the other
wings. Its public names are handed on by :mod:`rowvoi.corpus`
(``CorpusStore``); the modules, bottom up:

``paths``
    where named corpora and the registry live; corpus names.
``lock``
    the process lock (builder, registry, maintenance): one ``flock`` that
    names its holder.
``wal``
    connections to ``docs.sqlite``, and the commit check without a
    transaction (SQLite's WAL-index header).
``layout``
    the directory's files and the database's schema; index file names.
``snapshot``
    one read transaction: the committed state and its rows.
``store``
    :class:`~rowvoi.corpus.storage.store.CorpusStore`: the directory, its
    connections, snapshots, builder lock, calibration records, manifest;
    what a damaged corpus is told.
``index_files``
    a generation's indexes, loaded: base files, minus tombstones, plus delta.
``damage``
    how index files are found damaged.
``vectors``
    the embedding cache.
``records``
    the record table of one generation, in memory.
``generation``
    a committed generation, opened once for searches.
``registry_file``
    ``corpora.json``, read and rewritten under its lock.
"""
