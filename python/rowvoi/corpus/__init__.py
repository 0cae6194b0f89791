"""Corpora: point rowvoi at your documents, keep the index fresh, search it.

A *corpus* is a named, built, queryable collection of documents, stored in
one directory (``manifest.json``, ``docs.sqlite`` and the engine's index
files). It is defined by a :class:`CorpusSource` (what is in it, how to
tell what changed, how each item becomes text), built incrementally by
:func:`build`, and searched by :func:`search` in dense, lexical or hybrid
mode with hard metadata filters.

The package stands in wings, each with one job, bottom up (a wing imports
only the wings below it):

``base``, ``embedders``
    the ground every wing stands on: the data model (:class:`Artifact`,
    :class:`Surface`, :class:`IndexPlan`, :class:`Record`,
    :class:`SearchHit`, :class:`SearchHits`, :func:`best_per_artifact`,
    :func:`tag_source`, the errors) and the embedder specs that build and
    search share (:func:`make_embedder`, :func:`embedder_for_id`).
``storage/``
    where a corpus lives and how it is read: :class:`CorpusStore` (the
    directory, its SQLite file and commit protocol), snapshots, the one
    process lock, the index files of a generation, the embedding cache.
``retrieval/``
    read a corpus and act on the hits: :class:`Corpus`, :func:`open_corpus`
    and :func:`search` (a search opens its generation once, then ranks it);
    :func:`select` commits to a few hits or abstains, :func:`expand`
    stitches a hit's neighbouring surfaces into a :class:`Passage`,
    :func:`disclose` hands back each selected hit's payload,
    :func:`discover` does all three over one corpus or several
    (:func:`fuse_hits`: rank fusion across corpora), calibrated abstention
    floors, and :mod:`~rowvoi.corpus.retrieval.tools` returns it all as
    plain JSON.
``indexing/``
    documents in, a generation out: :class:`CorpusSource` and
    :func:`from_mapping`, :func:`from_files`, :func:`from_records`,
    :func:`from_records_file`, :func:`from_dataframe`, :func:`from_mcp_tools`
    (a catalogue of MCP tools: one search tool over many); :class:`WholeText`,
    :class:`Chunked`, :class:`Fields`, :class:`Capability`, and
    :func:`with_synopsis` (a written synopsis surface per artifact); the link graph's edges
    (:class:`FieldEdges`, :class:`EdgeList`; :class:`rowvoi.graph.CorpusGraph`
    serves them); :func:`build`, incremental and crash-safe.
``eval/``
    retrieval and selection measured against cases.
``maintenance/``
    named corpora kept fresh and whole: :mod:`~rowvoi.corpus.maintenance.registry`,
    :func:`check` and :func:`repair` (damaged index files rebuilt from the
    stored rows and the embedding cache, re-embedding nothing), policies as
    data and :func:`~rowvoi.corpus.maintenance.runs.maintain` (idempotent,
    logged, one run at a time).

Examples
--------
>>> from rowvoi.corpus import CorpusStore, build, from_mapping, search
>>> docs = {"wing.md": "Lift and drag of a thin wing at low speed",
...         "pipe.md": "Heat transfer to a fluid in a pipe"}
>>> corpus = build(from_mapping(docs, embedder="hashing"), store=CorpusStore.memory())
>>> [(h.artifact_id, round(h.score, 3)) for h in search(corpus, "wing drag", mode="lexical")]
[('wing.md', 0.582)]
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
    SearchHits,
    Surface,
    best_per_artifact,
    ledger_key,
    plain,
    storage_key,
    tag_source,
)

# -- stages -------------------------------------------------------------------
from rowvoi.corpus.indexing.build import DFLT_BATCH_SIZE, BuildReport, build
from rowvoi.corpus.maintenance.repair import RepairReport, check, repair
from rowvoi.corpus.storage.damage import IndexDamage
from rowvoi.corpus.embedders import CorpusEmbedder, embedder_for_id, make_embedder
from rowvoi.corpus.maintenance import registry
from rowvoi.corpus.storage.paths import corpora_dir, corpus_dir, registry_path
from rowvoi.corpus.retrieval.corpus import Corpus, open_corpus, records_for_artifact, search
from rowvoi.corpus.retrieval.rank import (
    DFLT_BLEND_ALPHA,
    DFLT_BM25_SAT_K,
    DFLT_RRF_K,
    FUSIONS,
    MODES,
)
from rowvoi.corpus.indexing.sources import (
    DFLT_EXCLUDE_DIRS,
    CorpusSource,
    SkippedFileWarning,
    content_hash_signal,
    from_dataframe,
    from_files,
    from_mapping,
    from_records,
    from_records_file,
    resolve_fetcher,
)
from rowvoi.corpus.indexing.mcp_tools import (
    MCP_TOOL_PARAM_KEYS,
    McpToolError,
    from_mcp_tools,
    mcp_tool_record,
    mcp_tool_signal,
)
from rowvoi.corpus.indexing.synopsis import (
    SYNOPSIS_KIND,
    SynopsisStrategy,
    SynopsisWarning,
    make_thin_description_predicate,
    thin_description_predicate,
    with_synopsis,
)
from rowvoi.corpus.storage.store import CorpusStore
from rowvoi.corpus.indexing.strategy import (
    DFLT_CHUNK_MAX_TOKENS,
    STRATEGY_REGISTRY,
    Capability,
    Chunked,
    Fields,
    IndexingStrategy,
    WholeText,
    minilm_tokenizer,
    strategy_from_spec,
    strategy_to_spec,
    text_of,
)

# -- after the search: select, expand, disclose, discover, fuse, tools -------
from rowvoi.corpus.retrieval import tools
from rowvoi.corpus.retrieval.disclosure import (
    DISCLOSURE_LEVELS,
    Disclosure,
    PointerRefused,
    disclose,
)
from rowvoi.corpus.retrieval.discovery import (
    DiscoveryResult,
    NoFloorWarning,
    calibration_key,
    discover,
)
from rowvoi.corpus.retrieval.expansion import (
    Passage,
    SeedNotFound,
    expand,
    parent_policy,
    sentence_window_policy,
)
from rowvoi.corpus.retrieval.fusion import Identity, fuse_hits
from rowvoi.corpus.retrieval.formulate import (
    FormulationWarning,
    Formulator,
    identity_formulator,
    make_llm_formulator,
)
from rowvoi.corpus.retrieval.rerank import (
    CrossEncoderReranker,
    Reranker,
    RerankError,
    ScoreBoost,
    field_contains_any,
    passage_texts,
    rerank_tag,
    resolve_reranker,
)
from rowvoi.corpus.indexing.edges import EdgeExtractor, EdgeList, FieldEdges, Link
from rowvoi.corpus.retrieval.selection import (
    SELECT_STRATEGIES,
    LLMSelector,
    Selection,
    SelectorFallbackWarning,
    make_llm_selector,
    select,
)
from rowvoi.corpus.retrieval.tools import as_retriever, make_search

# -- calibrated abstention ------------------------------------------------------
from rowvoi.corpus.retrieval.calibration import Calibration, calibrate_min_score, load_calibration

__all__ = [
    # base
    "Artifact",
    "Surface",
    "IndexPlan",
    "Record",
    "SearchHit",
    "SearchHits",
    "FilterFields",
    "POINTER_KEYS",
    "GRANULARITIES",
    "best_per_artifact",
    "tag_source",
    "storage_key",
    "ledger_key",
    "plain",
    "CorpusError",
    "CorpusNotFound",
    "CorpusExists",
    "CorpusEmpty",
    "CorpusLocked",
    "NoLedgerEntry",
    "EmbedderError",
    "EmbedderMismatch",
    "EmbedderUnavailable",
    # sources
    "CorpusSource",
    "from_mapping",
    "from_files",
    "SkippedFileWarning",
    "from_records",
    "from_records_file",
    "from_dataframe",
    "resolve_fetcher",
    "content_hash_signal",
    "DFLT_EXCLUDE_DIRS",
    "from_mcp_tools",
    "mcp_tool_record",
    "mcp_tool_signal",
    "MCP_TOOL_PARAM_KEYS",
    "McpToolError",
    # strategy
    "IndexingStrategy",
    "WholeText",
    "Chunked",
    "Fields",
    "Capability",
    "text_of",
    "STRATEGY_REGISTRY",
    "minilm_tokenizer",
    "strategy_to_spec",
    "strategy_from_spec",
    "DFLT_CHUNK_MAX_TOKENS",
    # synopses
    "with_synopsis",
    "SynopsisStrategy",
    "SynopsisWarning",
    "make_thin_description_predicate",
    "thin_description_predicate",
    "SYNOPSIS_KIND",
    # embedders
    "CorpusEmbedder",
    "make_embedder",
    "embedder_for_id",
    # store, build, search
    "CorpusStore",
    "build",
    "BuildReport",
    "DFLT_BATCH_SIZE",
    "check",
    "repair",
    "IndexDamage",
    "RepairReport",
    "Corpus",
    "open_corpus",
    "search",
    "records_for_artifact",
    "MODES",
    "FUSIONS",
    "DFLT_RRF_K",
    "DFLT_BLEND_ALPHA",
    "DFLT_BM25_SAT_K",
    # paths
    "corpora_dir",
    "corpus_dir",
    "registry_path",
    "registry",
    # after the search
    "select",
    "Selection",
    "SELECT_STRATEGIES",
    "make_llm_selector",
    "LLMSelector",
    "SelectorFallbackWarning",
    "expand",
    "Passage",
    "SeedNotFound",
    "sentence_window_policy",
    "parent_policy",
    "disclose",
    "Disclosure",
    "PointerRefused",
    "DISCLOSURE_LEVELS",
    "discover",
    "DiscoveryResult",
    "NoFloorWarning",
    "calibration_key",
    # second stage: rerank, formulation, boosts
    "Reranker",
    "RerankError",
    "CrossEncoderReranker",
    "resolve_reranker",
    "rerank_tag",
    "passage_texts",
    "ScoreBoost",
    "field_contains_any",
    "Formulator",
    "FormulationWarning",
    "identity_formulator",
    "make_llm_formulator",
    "fuse_hits",
    "Identity",
    "as_retriever",
    "make_search",
    "tools",
    "EdgeExtractor",
    "FieldEdges",
    "EdgeList",
    "Link",
    # calibrated abstention
    "Calibration",
    "calibrate_min_score",
    "load_calibration",
]
