"""The corpus's retrieval wing: read a corpus, search it, act on the hits.

It stands on the storage wing and imports nothing of the wings above it
(indexing, which hands back a :class:`~rowvoi.corpus.retrieval.corpus.Corpus`
it opened; evaluation; maintenance). Its public names are handed on by
:mod:`rowvoi.corpus`; the modules, bottom up:

``rank``
    rank one opened generation: modes, fusions, filters, the per-artifact
    collapse, the hits.
``corpus``
    :class:`~rowvoi.corpus.retrieval.corpus.Corpus`, ``open_corpus``, and
    ``search``: open the committed generation once, then rank it;
    ``records_for_artifact``.
``selection``
    commit to a few hits, or abstain.
``fusion``
    rank fusion across corpora.
``expansion``
    a hit's neighbouring surfaces stitched into a passage.
``disclosure``
    each selected hit's payload.
``calibration``
    calibrated abstention floors.
``discovery``
    search, select, disclose in one call, over one corpus or several.
``tools``
    all of it as plain JSON tools.
"""
