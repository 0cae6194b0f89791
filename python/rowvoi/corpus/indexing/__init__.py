"""The corpus's indexing wing: documents in, a committed generation out.

It stands on the storage and retrieval wings (a build hands back the
:class:`~rowvoi.corpus.retrieval.corpus.Corpus` it committed) and imports
nothing of the wings above it (evaluation, maintenance). Its public names
are handed on by :mod:`rowvoi.corpus`; the modules, bottom up:

``strategy``
    how an artifact becomes surfaces: :class:`~rowvoi.corpus.WholeText`,
    :class:`~rowvoi.corpus.Chunked`, :class:`~rowvoi.corpus.Fields`,
    :class:`~rowvoi.corpus.Capability`.
``synopsis``
    :func:`~rowvoi.corpus.with_synopsis`: one written synopsis surface per
    artifact (gated, e.g. by :func:`~rowvoi.corpus.make_thin_description_predicate`),
    carried over between builds while its maker and input are unchanged.
``sources``
    what is in a corpus and what changed: :class:`~rowvoi.corpus.CorpusSource`
    and its constructors (files, mappings, records, data frames).
``mcp_tools``
    a catalogue of MCP tools as a source: :func:`~rowvoi.corpus.from_mcp_tools`,
    :func:`~rowvoi.corpus.mcp_tool_record`, :func:`~rowvoi.corpus.mcp_tool_signal`.
``edges``
    the link graph's edges, found at build time.
``build``
    :func:`~rowvoi.corpus.build`, incremental and crash-safe: plan, embed,
    write the index files, commit.
"""
