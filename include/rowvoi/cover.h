/*
** rowvoi set cover: weighted set cover over bitsets, and the row-pair
** universe of deterministic keys.
**
** A problem holds n_sets sets over a universe of n_elements elements
** (elements are 0 .. n_elements-1).  Each set has a finite cost >= 0.  Sets
** are stored as bitsets, so coverage tests are word-wide AND/ANDNOT/popcount.
**
** Free sets (cost 0).  A set that costs nothing is worth taking whenever it
** covers something: gain per cost is +infinity for it, so the greedy
** solver and the path planners take free sets first (the one that adds the
** most first), and a free set that adds nothing is never taken.  The other
** solvers fix every free set into the selection, solve the rest of the
** universe with the paid sets (which changes no optimum: a free set never
** raises the cost), and finally drop the free sets that the selection no
** longer needs, highest index first.
**
** Thread-safety: a built rv_cover is read-only; any number of threads may
** solve or plan on the same problem at once.
*/
#ifndef ROWVOI_COVER_H
#define ROWVOI_COVER_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rv_cover rv_cover;

/*
** Largest universe a problem may hold (elements are indexed by uint32_t).
*/
#define RV_COVER_MAX_ELEMENTS ((uint64_t)0x7fffffffu)

/*
** Create a problem from sets in compressed-row form.    CONSTRUCTOR: rv_cover
** Set s covers elements[offsets[s] .. offsets[s+1]); offsets has n_sets+1
** entries, offsets[0] == 0.  Repeated elements within a set are allowed.
** costs holds n_sets values >= 0 and finite, or is NULL for unit costs.
** Returns RV_OK and *out; RV_E_INVALID_ARG for a NULL out or offsets, NULL
** elements when offsets[n_sets] > 0, a cost that is negative, NaN or
** infinite, or decreasing offsets; RV_E_RANGE for an element >= n_elements,
** n_elements > RV_COVER_MAX_ELEMENTS or an n_sets no array can hold (core.h
** "Sizes"); RV_E_NOMEM.
** Ownership: copies everything; free the result with rv_cover_free.
** Since: 0.1
*/
RV_API rv_status rv_cover_create(size_t n_elements, size_t n_sets, const uint64_t *offsets,
                                 const uint32_t *elements, const double *costs,
                                 rv_cover **out /* OUT */);

/*
** Create the row-pair universe of a key problem.        CONSTRUCTOR: rv_cover
** codes holds n_cols columns of n_rows integer codes each, column after
** column (codes[c * n_rows + r]); equal codes mean equal values.  Element
** (i, j), i < j, is pair index i*n_rows - i*(i+1)/2 + (j - i - 1); column c
** covers the pairs whose codes differ in column c.  costs: n_cols values or
** NULL.  max_bytes caps the memory of the bitsets (0 means 2 GiB).
** Returns RV_E_RANGE, naming the pair count and the limit, when the
** universe exceeds RV_COVER_MAX_ELEMENTS or the bitsets exceed max_bytes,
** and for an n_rows * n_cols no array can hold (core.h "Sizes");
** RV_E_INVALID_ARG for a NULL out, NULL codes with n_rows and n_cols > 0,
** a negative code or a bad cost; RV_E_NOMEM.
** Ownership: copies what it needs; free with rv_cover_free.
** Since: 0.1
*/
RV_API rv_status rv_cover_create_pairs(const int32_t *codes, size_t n_rows, size_t n_cols,
                                       const double *costs, uint64_t max_bytes,
                                       rv_cover **out /* OUT */);

/* Free a problem.  NULL is a no-op.  Since: 0.1 */
RV_API void rv_cover_free(rv_cover *p);

/* Sizes of a problem (0 for NULL).  Since: 0.1 */
RV_API size_t rv_cover_n_sets(const rv_cover *p);
RV_API uint64_t rv_cover_n_elements(const rv_cover *p);

/* Number of elements covered by at least one set (0 for NULL).  Since: 0.1 */
RV_API uint64_t rv_cover_n_coverable(const rv_cover *p);

/*
** How many sets cover each element: writes n_elements counts into counts
** (which may be NULL only when there are no elements).
** Returns RV_E_INVALID_ARG for a NULL p, or NULL counts with elements.
** Since: 0.1
*/
RV_API rv_status rv_cover_element_counts(const rv_cover *p, uint32_t *counts /* OUT */);

/*
** Elements covered by a selection of set indices.  Writes the count to
** *n_covered and, when mask is not NULL, one byte per element (1 covered,
** 0 not) into mask (n_elements bytes).  Returns RV_E_RANGE for a set index
** >= n_sets or an n_sel no array can hold (core.h "Sizes");
** RV_E_INVALID_ARG for a NULL p or n_covered, or NULL sel with n_sel > 0.
** Since: 0.1
*/
RV_API rv_status rv_cover_covered(const rv_cover *p, const uint32_t *sel, size_t n_sel,
                                  uint8_t *mask /* OUT */, uint64_t *n_covered /* OUT */);

/*
** Distinct elements.  Elements covered by exactly the same sets are
** interchangeable for every solver; this lists each distinct pattern once.
** For pattern k writes the sets covering it as a bitset of sig_words =
** ceil(n_sets / 64) words at signatures + k * sig_words, and in mult[k] how
** many elements share it.  Uncoverable elements are left out.  When
** capacity (patterns) is too small, returns RV_E_SHAPE with *n_distinct set
** to the capacity needed; call again with a larger buffer.
** Returns RV_OK and *n_distinct; RV_E_INVALID_ARG for a NULL p or
** n_distinct, or NULL signatures or mult when there are patterns to write;
** RV_E_RANGE for a capacity * sig_words no array can hold (core.h
** "Sizes"); RV_E_NOMEM.
** Since: 0.1
*/
RV_API rv_status rv_cover_distinct_elements(const rv_cover *p, uint64_t *signatures /* OUT */,
                                            uint64_t *mult /* OUT */, size_t capacity,
                                            size_t *n_distinct /* OUT */);

typedef enum rv_cover_strategy {
    RV_COVER_GREEDY = 0, /* best cost per newly covered element; ln(m)-approx */
    RV_COVER_EXACT = 1,  /* branch and bound; proves optimality */
    RV_COVER_SA = 2,     /* simulated annealing */
    RV_COVER_GA = 3,     /* genetic algorithm */
    RV_COVER_HYBRID = 4, /* simulated annealing seeding a genetic algorithm */
    RV_COVER_LP = 5      /* LP relaxation (rv_cover_lp), rounded; reports the
                            LP lower bound */
} rv_cover_strategy;

/* Default accuracy of the LP relaxation: bounds within 1 + 0.05. */
#define RV_COVER_LP_EPS 0.05

/*
** Options of rv_cover_solve.  Initialise with rv_cover_options_init, then set
** what you need; unknown future fields keep their defaults.
*/
typedef struct rv_cover_options {
    rv_cover_strategy strategy;
    uint64_t n_required;     /* elements the cover must reach; the default,
                              RV_COVER_ALL, means every coverable element */
    double time_limit;       /* seconds; <= 0 means none */
    uint64_t seed;           /* SA/GA/hybrid: same seed, same answer */
    uint32_t iterations;     /* SA moves (0: 2000 * n_sets, at least 20000) */
    uint32_t population;     /* GA population (0: 40) */
    uint32_t generations;    /* GA generations (0: 300) */
    rv_progress_fn progress; /* optional; nonzero return interrupts */
    void *progress_ctx;
    double lp_eps;      /* RV_COVER_LP: accuracy eps of the relaxation,
                                in (0, 1] (0: RV_COVER_LP_EPS) */
    uint32_t lp_rounds; /* RV_COVER_LP: randomised roundings on top of
                                the deterministic ones (0: 16) */
} rv_cover_options;

#define RV_COVER_ALL UINT64_MAX

/* Fill *opt with the defaults (greedy, all coverable elements, seed 0).  A
** NULL opt does nothing.  Since: 0.1 */
RV_API void rv_cover_options_init(rv_cover_options *opt /* OUT */);

/* What rv_cover_solve found out. */
typedef struct rv_cover_info {
    double cost;        /* total cost of the selection */
    uint64_t covered;   /* elements it covers */
    int optimal;        /* 1 only when optimality is proven: the exact solver
                           finished, or the LP bound meets the cost */
    uint64_t work;      /* B&B nodes, SA moves, GA evaluations or LP steps */
    double seconds;     /* wall time spent */
    double lower_bound; /* a proven lower bound on the optimum cost: the LP
                           bound (RV_COVER_LP; rounded up to an integer when
                           every cost is an integer, since every cover then
                           costs one), the cost itself when optimal, else 0 */
    double lp_bound;    /* RV_COVER_LP: the relaxation's own lower bound on
                           the fractional optimum; 0 for the others */
} rv_cover_info;

/*
** Solve the problem.                                        METHOD: rv_cover
** Writes the chosen set indices into selected (capacity >= n_sets slots) and
** their number into *n_selected.  Greedy returns sets in the order it picked
** them (ties go to the lowest index); the other strategies return ascending
** set indices.  A selection never contains a set that adds nothing.
** RV_COVER_LP solves the relaxation with rv_cover_lp (accuracy
** opt->lp_eps), then rounds it: threshold rounding at 1/f (f: the most sets
** covering one element), the sets by decreasing value, and opt->lp_rounds
** randomised roundings drawn from opt->seed, each completed by the greedy
** rule and stripped of redundant sets (costliest first); the cheapest goes
** through a 1-opt local search.  info->lower_bound is the LP bound, and
** info->optimal is 1 when the cover's cost meets it.
** Returns RV_OK; RV_E_INFEASIBLE when n_required exceeds the coverable
** elements; RV_E_TIMEOUT from the exact solver when the time limit ran out
** before optimality was proven -- the best cover found is still written and
** info->optimal is 0; SA/GA/LP stop at the time limit with RV_OK (the LP
** strategy rounds the relaxation it has, whose bound stays valid);
** RV_E_INTERRUPTED when the progress callback asked to stop (nothing
** written); RV_E_SHAPE when capacity < n_sets; RV_E_RANGE for a capacity no
** array can hold (core.h "Sizes"); RV_E_INVALID_ARG for a NULL p, opt or
** n_selected, NULL selected with n_sets > 0, or bad options (an unknown
** strategy, a NaN time limit, lp_eps outside [0, 1]); RV_E_NOMEM.
** Determinism: identical inputs and options give identical output (with no
** time limit; a time limit makes the result depend on machine speed).
** Ownership: borrows everything.  Thread-safety: concurrent calls on one
** problem are fine.
** Since: 0.1
*/
RV_API rv_status rv_cover_solve(const rv_cover *p, const rv_cover_options *opt,
                                uint32_t *selected /* OUT */, size_t capacity,
                                size_t *n_selected /* OUT */, rv_cover_info *info /* OUT */);

/* What rv_cover_lp found out. */
typedef struct rv_cover_lp_result {
    double value;       /* cost of the fractional cover written to x: an
                           upper bound on the LP optimum */
    double lower_bound; /* a dual-feasible value: a lower bound on the LP
                           optimum, hence on the cost of every cover */
    int converged;      /* 1 when value <= (1 + eps) * lower_bound */
    uint64_t work;      /* multiplicative-weights steps */
    double seconds;     /* wall time spent */
} rv_cover_lp_result;

/*
** The LP relaxation of set cover, within 1 + eps.           METHOD: rv_cover
** Fractional cover of n_required elements (RV_COVER_ALL: every coverable
** one): x_s in [0, 1] per set minimising sum_s cost_s x_s, for a full cover
** subject to sum_{s covering e} x_s >= 1 for every coverable element e.
** Solved by multiplicative weights on the dual packing LP (Garg-Könemann
** with Fleischer's phases), which certify both bounds as they go: the
** written x is feasible and costs res->value, res->lower_bound is a dual
** bound, and the run stops once value <= (1 + eps) * lower_bound.  A
** partial cover (n_required below the coverable elements) goes through the
** Lagrangian of its one coverage constraint, a bisection on the price of an
** uncovered element, each step a covering LP; its lower bound is valid
** whatever the bisection reaches, and res->converged says whether the gap
** closed to 1 + eps.  Free sets (cost 0) are fixed at x = 1 and the rest
** solved on what they leave uncovered; n_required 0 gives x = 0.  Elements covered by the same sets
** are merged first, so the work grows with the distinct coverage patterns,
** not the raw universe.
** Units: x holds fractions in [0, 1] (capacity >= n_sets entries); value
** and lower_bound are in cost units; time_limit in seconds (<= 0: none).
** Returns RV_OK; RV_E_TIMEOUT at the time limit, with x and both bounds
** still written and valid but not yet within 1 + eps; RV_E_INFEASIBLE when
** n_required exceeds the coverable elements; RV_E_SHAPE when capacity <
** n_sets; RV_E_RANGE for a capacity no array can hold (core.h "Sizes");
** RV_E_INVALID_ARG for a NULL p or res, a NULL x with sets, eps
** outside (0, 1] or NaN, or a NaN time_limit; RV_E_NOMEM.  After any error
** but RV_E_TIMEOUT, x (when given) and *res (when given) hold zeros.
** Determinism: the same problem, n_required and eps give the same x and
** bounds (without a time limit).
** Ownership: borrows everything.  Thread-safety: concurrent calls on one
** problem are fine.
** Since: 0.1
*/
RV_API rv_status rv_cover_lp(const rv_cover *p, uint64_t n_required, double eps, double time_limit,
                             double *x /* OUT */, size_t capacity,
                             rv_cover_lp_result *res /* OUT */);

typedef enum rv_path_objective {
    RV_PATH_COVERAGE = 0, /* gain = weight of newly covered elements */
    RV_PATH_ENTROPY = 1   /* gain = drop in log2(1 + uncovered weight) for
                             set covers; for keys, the drop in the expected
                             log2 size of a row's cluster (bits) */
} rv_path_objective;

/*
** Greedy acquisition order.                                 METHOD: rv_cover
** Repeatedly picks the set with the best gain per cost (ties: lowest index)
** until no set adds a newly covered element.  weights: n_elements values
** >= 0 and finite, or NULL for 1.0 each.  Writes, per step, the set index
** into order, the number of newly covered elements into newly_covered and
** the objective gain into gain (each capacity >= n_sets; gain may be NULL).
** Returns RV_OK and *n_steps; RV_E_INVALID_ARG for a bad weight or
** objective, or a NULL p, order, newly_covered or n_steps; RV_E_SHAPE when
** capacity < n_sets; RV_E_RANGE for a capacity no array can hold (core.h
** "Sizes").
** Since: 0.1
*/
RV_API rv_status rv_cover_plan_path(const rv_cover *p, rv_path_objective objective,
                                    const double *weights, uint32_t *order /* OUT */,
                                    uint64_t *newly_covered /* OUT */, double *gain /* OUT */,
                                    size_t capacity, size_t *n_steps /* OUT */);

/*
** Greedy key path by partition refinement, in O(n_rows * n_cols) memory.
** codes as in rv_cover_create_pairs.  Keeps the partition of the rows into
** groups that agree on the chosen columns; unresolved pairs are the sum over
** groups of C(size, 2).  Each step picks the column with the best gain per
** cost (ties: lowest index): RV_PATH_COVERAGE gains newly resolved pairs,
** RV_PATH_ENTROPY the drop in expected log2 cluster size (bits).  Stops when
** unresolved pairs <= stop_unresolved or no column resolves another pair.
** Writes per step the column, the newly resolved pairs and the gain (gain
** may be NULL) into arrays of capacity >= n_cols; *unresolved gets the pairs
** left unresolved at the end.  Gives the same path as rv_cover_plan_path on
** rv_cover_create_pairs with unit weights and the coverage objective.
** Returns RV_OK; RV_E_INVALID_ARG for negative codes, bad costs, NULL
** order, newly_resolved, n_steps or unresolved, or NULL codes with n_rows
** and n_cols > 0; RV_E_SHAPE when capacity < n_cols; RV_E_RANGE for
** n_rows > 2^32 - 1, or an n_rows * n_cols or capacity no array can hold
** (core.h "Sizes"); RV_E_INTERRUPTED via progress; RV_E_NOMEM.
** stop_unresolved is a limit: any value.
** Since: 0.1
*/
RV_API rv_status rv_keys_plan_path(const int32_t *codes, size_t n_rows, size_t n_cols,
                                   const double *costs, rv_path_objective objective,
                                   uint64_t stop_unresolved, rv_progress_fn progress,
                                   void *progress_ctx, uint32_t *order /* OUT */,
                                   uint64_t *newly_resolved /* OUT */, double *gain /* OUT */,
                                   size_t capacity, size_t *n_steps /* OUT */,
                                   uint64_t *unresolved /* OUT */);

/*
** Pairs of rows that agree on every column in cols (unresolved pairs).
** codes as in rv_cover_create_pairs; cols: n_sel column indices < n_cols.
** Returns RV_OK and *unresolved; RV_E_RANGE for a bad column index,
** n_rows > 2^32 - 1, or an n_rows * n_cols or n_sel no array can hold (core.h
** "Sizes"); RV_E_INVALID_ARG for a NULL unresolved, NULL cols with
** n_sel > 0, NULL codes with n_rows and n_cols > 0, or a negative code.
** Since: 0.1
*/
RV_API rv_status rv_keys_unresolved(const int32_t *codes, size_t n_rows, size_t n_cols,
                                    const uint32_t *cols, size_t n_sel,
                                    uint64_t *unresolved /* OUT */);

/*
** Keys over tables split into pieces (rowvoi.dask).  A greedy key step on a
** table too large for one machine scores every column in two kinds of pass:
** while all rows still form one group, each piece counts its values
** (rv_keys_count_values) and the counts are merged bucket by bucket; once
** the rows of every group sit in one piece, each piece scores its groups
** (rv_keys_group_scores) and splits them by the chosen column
** (rv_keys_group_refine), and the per-column sums over the pieces are the
** scores of the whole table.
*/

/*
** Count equal 64-bit keys, split into buckets.                   Since: 0.1
** keys[0 .. n) with weights (NULL: 1 each; otherwise counts being merged)
** and optional masses (NULL: none; summed per key in input order).  Writes
** each distinct key once into out_keys, its summed weight into out_counts
** and (when mass is given) its summed mass into out_mass, grouped by bucket:
** the keys of bucket b sit at bucket_offsets[b] .. bucket_offsets[b+1]
** (n_buckets + 1 offsets), in order of first appearance.  A key's bucket is
** a fixed hash of the key alone (the same on every machine), so the counts
** of one key from many pieces always meet in the same bucket.
** Capacities: out_* hold >= n entries (capacity), bucket_offsets
** n_buckets + 1.  *n_distinct gets the number of distinct keys.
** Returns RV_OK; RV_E_INVALID_ARG for a NULL pointer (keys, out_keys,
** out_counts and out_mass may be NULL when n == 0; weights, mass and
** out_mass without mass always) or n_buckets == 0; RV_E_SHAPE when
** capacity < n; RV_E_RANGE for n >= 2^32 - 1, or an n or capacity no array
** can hold (core.h "Sizes"); RV_E_NOMEM.
** Cost: O(n) time and about 24 n bytes of scratch.
** Ownership: borrows everything.  Thread-safety: reentrant.
*/
RV_API rv_status rv_keys_count_values(const uint64_t *keys, const uint64_t *weights,
                                      const double *mass, size_t n, uint32_t n_buckets,
                                      uint64_t *out_keys,       /* OUT: capacity */
                                      uint64_t *out_counts,     /* OUT: capacity */
                                      double *out_mass,         /* OUT: capacity or NULL */
                                      uint64_t *bucket_offsets, /* OUT: n_buckets + 1 */
                                      size_t capacity, size_t *n_distinct /* OUT */);

/*
** Score every column against groups of rows.                     Since: 0.1
** codes as in rv_cover_create_pairs (n_cols columns of n_rows codes >= 0).
** Group g is the rows offsets[g] .. offsets[g+1] (n_groups + 1 ascending
** offsets, the last <= n_rows; rows outside every group are ignored).  For
** each column c writes resolved[c], the row pairs inside one group that
** column c tells apart (sum over groups of C(size, 2) minus, per value, the
** C(count, 2) of rows sharing it), and, when entropy is not NULL,
** entropy[c] = sum over groups of size log2 size - sum of count log2 count
** (bits times rows: the drop in the groups' total log2 size).  These are
** exactly rv_keys_plan_path's step scores for the partition given by the
** groups.
** Returns RV_OK; RV_E_INVALID_ARG for a NULL pointer (offsets may be NULL
** when n_groups == 0, codes when n_rows or n_cols is 0, resolved when
** n_cols is 0), a negative code or offsets that do not ascend; RV_E_RANGE
** for n_rows > 2^32 - 1, or an n_rows * n_cols or n_groups no array can
** hold (core.h "Sizes"); RV_E_NOMEM.
** Ownership: borrows everything.  Thread-safety: reentrant.
*/
RV_API rv_status rv_keys_group_scores(const int32_t *codes, size_t n_rows, size_t n_cols,
                                      const uint64_t *offsets, size_t n_groups,
                                      uint64_t *resolved,         /* OUT: n_cols */
                                      double *entropy /* OUT */); /* OUT: n_cols, or NULL */

/*
** Split groups of rows by one column; keep the parts of two or more rows.
**                                                                Since: 0.1
** code: n_rows codes >= 0; groups as in rv_keys_group_scores.  Writes into
** rows_out the indices of the rows that stay, part after part (the parts of
** a group in order of first appearance, rows within a part in input order),
** and the parts' boundaries into offsets_out (n_parts + 1 entries starting
** at 0).  Capacities: rows_out n_rows, offsets_out n_rows / 2 + 2.
** *n_rows_out and *n_groups_out get the rows kept and the number of parts.
** Returns RV_OK; RV_E_INVALID_ARG for a NULL pointer (code and rows_out
** may be NULL when n_rows == 0, offsets when n_groups == 0), a negative
** code or offsets that do not ascend; RV_E_RANGE for n_rows > 2^32 - 1,
** or an n_rows or n_groups no array can hold (core.h "Sizes"); RV_E_NOMEM.
** Ownership: borrows everything.  Thread-safety: reentrant.
*/
RV_API rv_status rv_keys_group_refine(const int32_t *code, size_t n_rows, const uint64_t *offsets,
                                      size_t n_groups, uint32_t *rows_out, /* OUT: n_rows */
                                      uint64_t *offsets_out,               /* OUT: n_rows / 2 + 2 */
                                      size_t *n_rows_out /* OUT */, size_t *n_groups_out /* OUT */);

#ifdef __cplusplus
}
#endif

#endif /* ROWVOI_COVER_H */
