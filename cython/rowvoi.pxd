# cython: language_level=3
# Declarations mirroring include/rowvoi.h one to one (nogil throughout).
from libc.stdint cimport int32_t, uint8_t, uint32_t, uint64_t

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
    uint64_t rv_test_fail_alloc_after(uint64_t n)

    int RV_VERSION_MAJOR
    int RV_VERSION_MINOR
    int RV_VERSION_PATCH
    int RV_VERSION_NUMBER
    const char *RV_VERSION_STRING

    ctypedef int (*rv_progress_fn)(void *ctx, uint64_t done, uint64_t total)

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

    void rv_cover_options_init(rv_cover_options *opt)

    ctypedef struct rv_cover_info:
        double cost
        uint64_t covered
        int optimal
        uint64_t work
        double seconds

    rv_status rv_cover_solve(const rv_cover *p, const rv_cover_options *opt,
                             uint32_t *selected, size_t capacity,
                             size_t *n_selected, rv_cover_info *info)

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
