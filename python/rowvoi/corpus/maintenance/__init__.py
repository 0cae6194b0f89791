"""The corpus's maintenance wing: named corpora kept fresh and whole.

The top wing of :mod:`rowvoi.corpus`: it builds (indexing), reads
(retrieval, storage) and is imported by none of them. The modules,
bottom up:

``policy``
    maintenance policies as data: when a registered corpus is rebuilt.
``registry``
    named corpora (``corpora.json``): how each is rebuilt.
``repair``
    damaged index files found (:func:`~rowvoi.corpus.check`) and rebuilt
    from the stored rows and the embedding cache
    (:func:`~rowvoi.corpus.repair`).
``runs``
    :func:`~rowvoi.corpus.maintenance.runs.maintain` (idempotent, logged,
    one run at a time under the process lock) and
    :func:`~rowvoi.corpus.maintenance.runs.coverage`.
"""
