# cython: language_level=3
# Declarations mirroring include/rowvoi.h one to one (nogil throughout).
from libc.stddef cimport ptrdiff_t
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t

cdef extern from "rowvoi.h" nogil:
    ctypedef enum rv_status:
        RV_OK
        RV_E_INVALID_ARG
        RV_E_NOMEM
        RV_E_SHAPE
        RV_E_RANGE
        RV_E_STATE
        RV_E_CORRUPT
        RV_E_VERSION
        RV_E_IO
        RV_E_INTERRUPTED
        RV_E_INFEASIBLE
        RV_E_TIMEOUT
        RV_E_INTERNAL

    const char *rv_status_name(rv_status status)
    const char *rv_errmsg()
    void rv_errmsg_clear()
    const char *rv_version()
    int rv_version_number()

    int RV_VERSION_MAJOR
    int RV_VERSION_MINOR
    int RV_VERSION_PATCH
    int RV_VERSION_NUMBER
    const char *RV_VERSION_STRING

    ctypedef int (*rv_progress_fn)(void *ctx, uint64_t done, uint64_t total)

    # record ids and id sets (core.h)
    int64_t RV_MAX_ID
    ctypedef struct rv_idset:
        pass
    rv_status rv_idset_create(const int64_t *ids, size_t n, rv_idset **out)
    void rv_idset_free(rv_idset *set)
    size_t rv_idset_size(const rv_idset *set)
    int rv_idset_contains(const rv_idset *set, int64_t id)
    rv_status rv_idset_ids(const rv_idset *set, int64_t *out, size_t capacity, size_t *n)

    ctypedef struct rv_rng:
        uint64_t s[4]
    void rv_rng_seed(rv_rng *rng, uint64_t seed)
    void rv_rng_seed_stream(rv_rng *rng, uint64_t seed, uint64_t stream)
    uint64_t rv_rng_next(rv_rng *rng)
    uint64_t rv_rng_below(rv_rng *rng, uint64_t bound)
    double rv_rng_uniform(rv_rng *rng)

    uint64_t rv_bitset_count(const uint64_t *a, size_t nwords)
    uint64_t rv_bitset_count_andnot(const uint64_t *a, const uint64_t *b, size_t nwords)
    uint64_t rv_bitset_count_and(const uint64_t *a, const uint64_t *b, size_t nwords)

    # cover.h
    ctypedef struct rv_cover:
        pass
    uint64_t RV_COVER_MAX_ELEMENTS
    uint64_t RV_COVER_ALL

    rv_status rv_cover_create(size_t n_elements, size_t n_sets,
                              const uint64_t *offsets, const uint32_t *elements,
                              const double *costs, rv_cover **out)
    rv_status rv_cover_create_pairs(const int32_t *codes, size_t n_rows,
                                    size_t n_cols, const double *costs,
                                    uint64_t max_bytes, rv_cover **out)
    void rv_cover_free(rv_cover *p)
    size_t rv_cover_n_sets(const rv_cover *p)
    uint64_t rv_cover_n_elements(const rv_cover *p)
    uint64_t rv_cover_n_coverable(const rv_cover *p)
    rv_status rv_cover_element_counts(const rv_cover *p, uint32_t *counts)
    rv_status rv_cover_covered(const rv_cover *p, const uint32_t *sel, size_t n_sel,
                               uint8_t *mask, uint64_t *n_covered)

    rv_status rv_cover_distinct_elements(const rv_cover *p, uint64_t *signatures,
                                         uint64_t *mult, size_t capacity,
                                         size_t *n_distinct)

    ctypedef enum rv_cover_strategy:
        RV_COVER_GREEDY
        RV_COVER_EXACT
        RV_COVER_SA
        RV_COVER_GA
        RV_COVER_HYBRID
        RV_COVER_LP

    double RV_COVER_LP_EPS

    ctypedef struct rv_cover_options:
        rv_cover_strategy strategy
        uint64_t n_required
        double time_limit
        uint64_t seed
        uint32_t iterations
        uint32_t population
        uint32_t generations
        rv_progress_fn progress
        void *progress_ctx
        double lp_eps
        uint32_t lp_rounds

    void rv_cover_options_init(rv_cover_options *opt)

    ctypedef struct rv_cover_info:
        double cost
        uint64_t covered
        int optimal
        uint64_t work
        double seconds
        double lower_bound
        double lp_bound

    rv_status rv_cover_solve(const rv_cover *p, const rv_cover_options *opt,
                             uint32_t *selected, size_t capacity,
                             size_t *n_selected, rv_cover_info *info)

    ctypedef struct rv_cover_lp_result:
        double value
        double lower_bound
        int converged
        uint64_t work
        double seconds

    rv_status rv_cover_lp(const rv_cover *p, uint64_t n_required, double eps,
                          double time_limit, double *x, size_t capacity,
                          rv_cover_lp_result *res)

    ctypedef enum rv_path_objective:
        RV_PATH_COVERAGE
        RV_PATH_ENTROPY

    rv_status rv_cover_plan_path(const rv_cover *p, rv_path_objective objective,
                                 const double *weights, uint32_t *order,
                                 uint64_t *newly_covered, double *gain,
                                 size_t capacity, size_t *n_steps)
    rv_status rv_keys_plan_path(const int32_t *codes, size_t n_rows, size_t n_cols,
                                const double *costs, rv_path_objective objective,
                                uint64_t stop_unresolved, rv_progress_fn progress,
                                void *progress_ctx, uint32_t *order,
                                uint64_t *newly_resolved, double *gain,
                                size_t capacity, size_t *n_steps,
                                uint64_t *unresolved)
    rv_status rv_keys_unresolved(const int32_t *codes, size_t n_rows, size_t n_cols,
                                 const uint32_t *cols, size_t n_sel,
                                 uint64_t *unresolved)
    rv_status rv_keys_count_values(const uint64_t *keys, const uint64_t *weights,
                                   const double *mass, size_t n, uint32_t n_buckets,
                                   uint64_t *out_keys, uint64_t *out_counts,
                                   double *out_mass, uint64_t *bucket_offsets,
                                   size_t capacity, size_t *n_distinct)
    rv_status rv_keys_group_scores(const int32_t *codes, size_t n_rows, size_t n_cols,
                                   const uint64_t *offsets, size_t n_groups,
                                   uint64_t *resolved, double *entropy)
    rv_status rv_keys_group_refine(const int32_t *code, size_t n_rows,
                                   const uint64_t *offsets, size_t n_groups,
                                   uint32_t *rows_out, uint64_t *offsets_out,
                                   size_t *n_rows_out, size_t *n_groups_out)

    # text.h
    int RV_ANALYZER_VERSION
    int RV_ANALYZER_MAX_TOKEN_LEN

    ctypedef enum rv_utf8_policy:
        RV_UTF8_STRICT
        RV_UTF8_REPLACE

    ctypedef struct rv_analyzer_options:
        int lowercase
        int strip_accents
        int stopwords
        int stem
        uint32_t min_token_len
        uint32_t max_token_len
        rv_utf8_policy utf8

    void rv_analyzer_options_init(rv_analyzer_options *opt)
    rv_status rv_analyzer_options_check(const rv_analyzer_options *opt)
    rv_status rv_analyze(const rv_analyzer_options *opt, const char *text, size_t len,
                         char *buf, size_t buf_cap, size_t *ends, size_t ends_cap,
                         size_t *n_tokens, size_t *buf_len)
    rv_status rv_stem_english(const char *word, size_t len, char *out, size_t out_cap,
                              size_t *out_len)
    int rv_is_stopword(const char *word, size_t len)
    size_t rv_stopword_count()
    const char *rv_stopword(size_t i)
    const char *rv_unicode_version()

    # bm25.h
    ctypedef struct rv_bm25:
        pass

    int RV_BM25_FORMAT_VERSION
    uint64_t RV_BM25_MAX_DOCS
    int64_t RV_BM25_MAX_ID
    int64_t RV_BM25_NO_DOC
    unsigned RV_BM25_EXHAUSTIVE
    int RV_BM25_DOC_LIVE
    int RV_BM25_DOC_TOMBSTONED
    int RV_BM25_DOC_PURGED

    ctypedef enum rv_bm25_variant:
        RV_BM25_LUCENE
        RV_BM25_ROBERTSON
        RV_BM25_ATIRE
        RV_BM25_L
        RV_BM25_PLUS

    ctypedef struct rv_bm25_params:
        rv_bm25_variant variant
        double k1
        double b
        double delta

    void rv_bm25_params_init(rv_bm25_params *params)
    rv_status rv_bm25_params_check(const rv_bm25_params *params)
    rv_status rv_bm25_create(const rv_analyzer_options *analyzer,
                             const rv_bm25_params *params, rv_bm25 **out)
    void rv_bm25_free(rv_bm25 *index)
    rv_status rv_bm25_add(rv_bm25 *index, size_t n_docs, const char *const *texts,
                          const size_t *lens, const int64_t *ids, rv_progress_fn progress,
                          void *progress_ctx, int64_t *assigned)
    rv_status rv_bm25_delete(rv_bm25 *index, const int64_t *ids, size_t n, size_t *n_deleted)
    rv_status rv_bm25_compact(rv_bm25 *index)
    rv_status rv_bm25_set_params(rv_bm25 *index, const rv_bm25_params *params)
    rv_status rv_bm25_get_params(const rv_bm25 *index, rv_bm25_params *out)
    rv_status rv_bm25_get_analyzer(const rv_bm25 *index, rv_analyzer_options *out)

    ctypedef struct rv_bm25_info:
        uint64_t n_docs
        uint64_t n_live
        uint64_t n_tombstoned
        uint64_t n_stats_docs
        uint64_t total_len
        double avgdl
        uint64_t n_terms
        uint64_t n_postings
        uint64_t n_segments
        uint64_t memory_bytes
        int64_t next_id

    rv_status rv_bm25_get_info(const rv_bm25 *index, rv_bm25_info *out)

    ctypedef struct rv_bm25_search_info:
        uint64_t n_query_terms
        uint64_t docs_scored
        uint64_t postings_scored
        uint64_t postings_total
        uint64_t filter_docs
        int filter_direct

    rv_status rv_bm25_search(const rv_bm25 *index, const char *query, size_t len, size_t k,
                             unsigned flags, const rv_idset *filter, int64_t *ids,
                             float *scores, size_t *n_found, rv_bm25_search_info *info)
    rv_status rv_bm25_search_terms(const rv_bm25 *index, const uint32_t *term_ids,
                                   size_t n_terms, size_t k, unsigned flags,
                                   const rv_idset *filter, int64_t *ids, float *scores,
                                   size_t *n_found, rv_bm25_search_info *info)
    rv_status rv_bm25_search_batch(const rv_bm25 *index, size_t n_queries,
                                   const char *const *queries, const size_t *lens, size_t k,
                                   unsigned flags, const rv_idset *filter, unsigned n_threads,
                                   rv_progress_fn progress, void *progress_ctx, int64_t *ids,
                                   float *scores, uint32_t *n_found)

    ctypedef struct rv_bm25_explain_row:
        uint32_t term_id
        uint32_t qtf
        uint32_t tf
        uint64_t df
        double idf
        float weight
        double contribution

    rv_status rv_bm25_explain(const rv_bm25 *index, const char *query, size_t len,
                              int64_t id, rv_bm25_explain_row *rows, size_t capacity,
                              size_t *n_rows, float *score, uint32_t *doc_len)
    rv_status rv_bm25_lookup(const rv_bm25 *index, const char *term, size_t len,
                             uint32_t *term_id, int *found)
    rv_status rv_bm25_term(const rv_bm25 *index, uint32_t term_id, const char **term,
                           size_t *len)
    rv_status rv_bm25_doc_freq(const rv_bm25 *index, uint32_t term_id, uint64_t *df)
    rv_status rv_bm25_set_collection_stats(rv_bm25 *index, uint64_t n_docs,
                                           uint64_t total_len, const uint64_t *dfs,
                                           size_t n_terms)
    rv_status rv_bm25_doc(const rv_bm25 *index, int64_t id, uint32_t *doc_len, int *state)
    int rv_bm25_contains(const rv_bm25 *index, int64_t id)
    rv_status rv_bm25_ids(const rv_bm25 *index, int64_t *ids, size_t capacity, size_t *n_ids)
    rv_status rv_bm25_save(const rv_bm25 *index, const char *path)
    rv_status rv_bm25_save_mode(const rv_bm25 *index, const char *path, long mode)
    rv_status rv_bm25_load(const char *path, rv_bm25 **out)
    rv_status rv_bm25_load_fd(int fd, const char *name, rv_bm25 **out)
    rv_status rv_bm25_save_buffer(const rv_bm25 *index, void *buf, size_t capacity,
                                  size_t *size)
    rv_status rv_bm25_load_buffer(const void *buf, size_t size, rv_bm25 **out)
    # belief.h
    uint32_t RV_BELIEF_NONE
    double RV_BELIEF_MIN_GAIN
    uint64_t RV_BELIEF_MAX_CANDIDATES

    rv_status rv_belief_entropy(const double *weights, size_t n, double *out)
    rv_status rv_belief_filter(const int32_t *codes, const double *posterior, size_t n,
                               int32_t value, uint64_t *kept, double *out_posterior,
                               size_t *n_kept)
    rv_status rv_belief_reweight(const double *posterior, const double *likelihoods,
                                 size_t n, double *out)
    rv_status rv_belief_likelihood(const int32_t *codes, size_t n, int32_t value,
                                   double noise, double *out)

    ctypedef struct rv_belief_options:
        double noise
        const double *costs
        unsigned n_threads
        rv_progress_fn progress
        void *progress_ctx

    void rv_belief_options_init(rv_belief_options *opt)
    rv_status rv_belief_mi(const int32_t *codes, size_t n_rows, size_t n_cols,
                           const uint64_t *rows, size_t n_cand, const double *posterior,
                           const rv_belief_options *opt, double *mi, double *h_col,
                           uint64_t *n_values, uint64_t *pairs, double *h_rows,
                           uint32_t *best)
    # flat.h
    ctypedef struct rv_flat:
        pass
    unsigned int RV_FLAT_MAX_DIM
    int64_t RV_FLAT_MAX_ID
    unsigned int RV_FLAT_FORMAT_VERSION

    ctypedef enum rv_metric:
        RV_METRIC_INNER_PRODUCT
        RV_METRIC_COSINE
        RV_METRIC_L2

    ctypedef enum rv_flat_storage:
        RV_FLAT_F32
        RV_FLAT_F16
        RV_FLAT_I8

    ctypedef struct rv_flat_options:
        uint32_t dim
        rv_metric metric
        rv_flat_storage storage
        uint32_t rescore_factor

    void rv_flat_options_init(rv_flat_options *opt)
    rv_status rv_flat_create(const rv_flat_options *opt, rv_flat **out)
    void rv_flat_free(rv_flat *index)
    uint32_t rv_flat_dim(const rv_flat *index)
    rv_metric rv_flat_metric(const rv_flat *index)
    rv_flat_storage rv_flat_storage_kind(const rv_flat *index)
    uint32_t rv_flat_rescore_factor(const rv_flat *index)
    size_t rv_flat_size(const rv_flat *index)
    size_t rv_flat_n_deleted(const rv_flat *index)
    rv_status rv_flat_add(rv_flat *index, size_t n, const float *vectors,
                          const int64_t *ids, int64_t *assigned)
    rv_status rv_flat_delete(rv_flat *index, size_t n, const int64_t *ids,
                             size_t *n_deleted)
    rv_status rv_flat_compact(rv_flat *index)
    int rv_flat_contains(const rv_flat *index, int64_t id)
    rv_status rv_flat_ids(const rv_flat *index, int64_t *ids, size_t capacity,
                          size_t *n_ids)
    rv_status rv_flat_get(const rv_flat *index, size_t n, const int64_t *ids,
                          float *out)

    ctypedef struct rv_flat_search_params:
        size_t k
        uint32_t n_threads
        uint32_t rescore_factor
        int exact
        const rv_idset *filter
        rv_progress_fn progress
        void *progress_ctx

    void rv_flat_search_params_init(rv_flat_search_params *p)
    rv_status rv_flat_search(const rv_flat *index,
                             const rv_flat_search_params *params,
                             size_t n_queries, const float *queries,
                             int64_t *ids, float *scores, size_t *n_found)
    rv_status rv_flat_rescore(const rv_flat *index, size_t n_queries,
                              const float *queries, size_t n_cand,
                              const int64_t *cand, size_t k, uint32_t n_threads,
                              int64_t *ids, float *scores, size_t *n_found)
    rv_status rv_flat_save(const rv_flat *index, const char *path)
    rv_status rv_flat_save_mode(const rv_flat *index, const char *path, long mode)
    rv_status rv_flat_load(const char *path, rv_flat **out)
    rv_status rv_flat_load_fd(int fd, const char *name, rv_flat **out)
    rv_status rv_flat_save_buffer(const rv_flat *index, void *buf, size_t capacity,
                                  size_t *size)
    rv_status rv_flat_load_buffer(const void *buf, size_t size, rv_flat **out)
    rv_status rv_flat_check_queries(const rv_flat *index, size_t n_queries,
                                    const float *queries)

    # hnsw.h
    enum: RV_HNSW_MAX_M
    enum: RV_HNSW_HEADER_SIZE
    ctypedef struct rv_hnsw_expect:
        size_t dim
        size_t M
        size_t ef_construction
        size_t element_count
        size_t max_elements
    ctypedef struct rv_hnsw_info:
        size_t element_count
        size_t n_deleted
        size_t n_upper
        int32_t max_level
        uint32_t entry_point
        size_t label_offset
        size_t element_size
    void rv_hnsw_expect_init(rv_hnsw_expect *expect)
    rv_status rv_hnsw_check(const void *buf, size_t size, const rv_hnsw_expect *expect,
                            rv_hnsw_info *info)

    # hashing.h
    ctypedef struct rv_hasher:
        pass
    unsigned int RV_HASHER_MAX_DIM
    unsigned int RV_HASHER_MAX_WORD_NGRAMS
    unsigned int RV_HASHER_MAX_CHAR_NGRAM

    ctypedef struct rv_hasher_options:
        uint32_t dim
        uint32_t word_ngrams
        uint32_t char_min
        uint32_t char_max
        float char_weight
        uint64_t seed

    void rv_hasher_options_init(rv_hasher_options *opt)
    rv_status rv_hasher_create(const rv_hasher_options *opt, rv_hasher **out)
    void rv_hasher_free(rv_hasher *h)
    uint32_t rv_hasher_dim(const rv_hasher *h)
    const char *rv_hasher_id(const rv_hasher *h)
    rv_status rv_hasher_embed(const rv_hasher *h, const char *text, size_t len,
                              float *out)
    rv_status rv_hasher_embed_batch(const rv_hasher *h, const char *data,
                                    const uint64_t *offsets, size_t n,
                                    uint32_t n_threads, float *out)

    # graph.h
    ctypedef struct rv_graph:
        pass
    int64_t RV_GRAPH_NO_TIME
    unsigned int RV_GRAPH_MAX_ITEMS
    ctypedef enum rv_graph_dir:
        RV_GRAPH_OUT
        RV_GRAPH_IN
        RV_GRAPH_BOTH
    ctypedef enum rv_graph_kinds:
        RV_GRAPH_NODES
        RV_GRAPH_EDGES
        RV_GRAPH_ENTITIES
    unsigned int RV_GRAPH_IMPLICIT_NODES
    unsigned int RV_GRAPH_BORROW_VECTORS
    unsigned int RV_GRAPH_UNIT_ROWS
    unsigned int RV_GRAPH_FINITE_ROWS
    unsigned int RV_GRAPH_BORROW_ATTRS

    ctypedef struct rv_graph_spec:
        size_t n_nodes
        const int64_t *node_ids
        const int64_t *node_time
        size_t n_edges
        const int64_t *edge_src
        const int64_t *edge_dst
        const uint16_t *edge_type
        const int64_t *edge_time
        size_t n_docs
        const int64_t *doc_entity
        uint32_t dim
        size_t n_vectors
        const float *vectors
        const int64_t *doc_vector_row
        rv_metric metric
        unsigned flags
        unsigned n_threads

    void rv_graph_spec_init(rv_graph_spec *spec)
    rv_status rv_graph_create(const rv_graph_spec *spec, rv_graph **out)
    rv_status rv_graph_check_vectors(const float *vectors, size_t n_rows, uint32_t dim,
                                     unsigned n_threads)
    void rv_graph_free(rv_graph *graph)
    void rv_graph_trim()
    size_t rv_graph_n_nodes(const rv_graph *graph)
    size_t rv_graph_n_edges(const rv_graph *graph)
    size_t rv_graph_n_docs(const rv_graph *graph)
    uint32_t rv_graph_dim(const rv_graph *graph)
    size_t rv_graph_max_entity_docs(const rv_graph *graph)
    rv_status rv_graph_find_nodes(const rv_graph *graph, size_t n, const int64_t *ids,
                                  int64_t *out)
    rv_status rv_graph_node_ids(const rv_graph *graph, int64_t *out, size_t capacity,
                                size_t *n)
    rv_status rv_graph_neighbours(const rv_graph *graph, int64_t node, rv_graph_dir dir,
                                  int32_t type, const int64_t *window, int64_t *edges,
                                  int64_t *nbrs, size_t capacity, size_t *n)
    rv_status rv_graph_degree(const rv_graph *graph, int64_t node, rv_graph_dir dir,
                              int32_t type, size_t *n)
    rv_status rv_graph_edges(const rv_graph *graph, size_t n, const int64_t *edges,
                             int64_t *src, int64_t *dst, int32_t *type, int64_t *time)
    rv_status rv_graph_entity_docs(const rv_graph *graph, size_t n,
                                   const int64_t *entities, int64_t *out,
                                   size_t capacity, size_t *n_out)
    rv_status rv_graph_doc_entities(const rv_graph *graph, size_t n, const int64_t *docs,
                                    int64_t *out)

    ctypedef struct rv_graph_walk:
        uint32_t max_depth
        size_t node_budget
        rv_graph_dir dir
        const uint16_t *types
        size_t n_types
        const int64_t *window
    void rv_graph_walk_init(rv_graph_walk *walk)
    rv_status rv_graph_bfs(const rv_graph *graph, const rv_graph_walk *walk,
                           size_t n_seeds, const int64_t *seeds, int64_t *nodes,
                           uint32_t *depths, size_t capacity, size_t *n)

    ctypedef struct rv_graph_facts_params:
        uint32_t depth
        size_t max_edges
        size_t max_edges_per_subject
        const uint16_t *bridge_types
        size_t n_bridge_types
        size_t node_budget
        const int64_t *window
    void rv_graph_facts_init(rv_graph_facts_params *p)
    rv_status rv_graph_facts(const rv_graph *graph, const rv_graph_facts_params *p,
                             size_t n_seeds, const int64_t *seeds, int64_t *edges,
                             uint32_t *depths, size_t capacity, size_t *n)

    rv_status rv_graph_doc_hops(const rv_graph *graph, size_t n_sel, const int64_t *sel,
                                uint32_t hops, const int64_t *window, int64_t *out,
                                size_t capacity, size_t *n)
    rv_status rv_graph_similar_docs(const rv_graph *graph, size_t n_sel,
                                    const int64_t *sel, const float *query,
                                    size_t max_new, const int64_t *window,
                                    int64_t *out, float *scores, size_t capacity,
                                    size_t *n)
    rv_status rv_graph_similar_entities(const rv_graph *graph, size_t n_sel,
                                        const int64_t *sel, rv_graph_kinds kinds,
                                        const float *query, size_t max_new,
                                        const int64_t *window, int64_t *out,
                                        float *scores, size_t capacity, size_t *n)
    rv_status rv_graph_top_k(const rv_graph *graph, int kinds, const float *query,
                             size_t k, const int64_t *window, int64_t *out,
                             float *scores, size_t capacity, size_t *n)
    rv_status rv_graph_score_docs(const rv_graph *graph, const float *query, size_t n,
                                  const int64_t *docs, float *scores)

    # records.h
    ctypedef enum rv_real:
        RV_REAL_F32
        RV_REAL_F64

    rv_status rv_unit_vector(const void *x, rv_real type, size_t n, ptrdiff_t stride,
                             float *out)
    int rv_any_nonzero(const void *x, rv_real type, size_t n, ptrdiff_t stride)

    ctypedef struct rv_strings:
        const char *bytes
        size_t size
        const int64_t *offsets

    ctypedef struct rv_records:
        size_t n_records
        const int64_t *ids
        const int32_t *artifact
        const int32_t *kind
        size_t n_kinds
        rv_strings texts
        rv_strings metadata
        size_t n_artifacts
        rv_strings filter_fields
        rv_strings artifact_ids

    rv_status rv_records_check(const rv_records *table)

    ctypedef enum rv_records_verdict:
        RV_RECORDS_HITS
        RV_RECORDS_TIE
        RV_RECORDS_UNKNOWN

    rv_status rv_records_hits(const rv_records *table, size_t n, const int64_t *ids,
                              const void *scores, rv_real score_type, const int64_t *pos,
                              size_t k, int collapse, int64_t *at, int64_t *rank,
                              size_t *n_hits, rv_records_verdict *verdict)

    rv_status rv_records_union(size_t n_records, size_t n_a, const int64_t *a, size_t n_b,
                               const int64_t *b, int64_t *u, int64_t *rank_a, int64_t *rank_b,
                               size_t *n_u)
    rv_status rv_records_rrf(size_t n, const int64_t *rank_a, const int64_t *rank_b,
                             int64_t rrf_k, double *out)

    ctypedef struct rv_records_blend_params:
        double alpha
        double sat_k
        const rv_flat *dense
        const float *query_vector
        uint32_t n_threads
        const rv_bm25 *lexical
        const char *query
        size_t query_len
        size_t head
        double max_a
        double max_b

    void rv_records_blend_params_init(rv_records_blend_params *p)
    rv_status rv_records_blend(const rv_records_blend_params *params, size_t n,
                               const int64_t *ids, const int64_t *rank_a, const int64_t *rank_b,
                               size_t n_a, const double *scores_a, size_t n_b,
                               const double *scores_b, double *out) nogil

    ctypedef struct rv_records_search_params:
        size_t k
        size_t fetch_k
        int collapse
        uint32_t n_threads
        rv_progress_fn progress
        void *progress_ctx

    void rv_records_search_params_init(rv_records_search_params *p)
    rv_status rv_records_search(const rv_records *table, const rv_flat *index,
                                const rv_records_search_params *params, const float *query,
                                int64_t *at, int64_t *rank, float *scores, size_t *n_hits,
                                rv_records_verdict *verdict)

    # encoder.h
    ctypedef struct rv_encoder:
        pass
    unsigned int RV_ENCODER_MAX_HIDDEN
    unsigned int RV_ENCODER_MAX_LAYERS
    unsigned int RV_ENCODER_MAX_OUTLIERS

    ctypedef struct rv_encoder_linear:
        const int8_t *weight
        const float *scale
        const float *bias
        uint32_t n_outliers
        const uint32_t *outliers
        const float *outlier_rows

    ctypedef struct rv_encoder_layer:
        rv_encoder_linear qkv
        rv_encoder_linear out
        rv_encoder_linear up
        rv_encoder_linear down
        const float *ln1_gamma
        const float *ln1_beta
        const float *ln2_gamma
        const float *ln2_beta

    ctypedef struct rv_encoder_spec:
        uint32_t hidden
        uint32_t heads
        uint32_t ffn
        uint32_t layers
        uint32_t vocab
        uint32_t max_positions
        uint32_t type_vocab
        float ln_eps
        float attn_scale
        const int8_t *word
        const int8_t *position
        const int8_t *type
        const float *word_scale
        const float *position_scale
        const float *type_scale
        const float *emb_gamma
        const float *emb_beta
        const rv_encoder_layer *layer
        const char *kernel
        uint32_t attention

    rv_status rv_encoder_create(const rv_encoder_spec *spec, rv_encoder **out)
    void rv_encoder_free(rv_encoder *enc)
    const char *rv_encoder_kernel(const rv_encoder *enc)
    uint32_t rv_encoder_dim(const rv_encoder *enc)
    rv_status rv_encoder_encode(const rv_encoder *enc, size_t n, const size_t *offsets,
                                const int32_t *ids, const int32_t *type_ids, float *out)
