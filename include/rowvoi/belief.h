/*
** rowvoi belief: posterior updates, entropy and information gain over
** integer-coded candidate rows.
**
** The belief is a posterior p over n candidate rows.  Columns reach the
** engine as int32 codes, one per candidate: equal codes mean equal values,
** and any int32 (negative ones included) is a valid code -- the engine never
** interprets a code beyond comparing it.
**
** Units: entropies and information are in bits (log base 2), with
** 0 * log 0 = 0; no epsilon is ever added inside a logarithm.
**
** Posteriors: finite, non-negative weights with a positive total.  They need
** not sum to exactly 1; every function normalises by the total.
**
** The noise model.  When column c is observed and candidate r is the true
** row, the observer sees r's own value v_r with probability 1 - noise, and
** otherwise one of the OTHER values the column takes among the candidates,
** chosen uniformly.  With K distinct values among the candidates:
**
**     P(X_c = x | r) = 1 - noise            if x == v_r
**                    = noise / (K - 1)      if x != v_r, x among the K values
**                    = 0                    otherwise
**
** A column on which every candidate agrees (K == 1) gives every candidate
** the same distribution, so it carries zero information at any noise level.
** noise = 0 is the exact model, under which observing a value is a hard
** filter.  The information gain (rv_belief_mi) and the update
** (rv_belief_likelihood followed by rv_belief_reweight) use this same model.
** K counts every candidate passed in, including candidates whose posterior
** is 0.
**
** A value that no candidate has (outside the model's K values) is, under
** noise > 0, surprising but not disqualifying: it counts as one more
** observed answer, a miss for every candidate, so every candidate gets the
** same likelihood noise / K and the posterior does not move.  Under
** noise = 0 it is impossible (likelihood 0 everywhere).
**
** Thread-safety: every function is reentrant and keeps no state between
** calls; inputs are only read.
*/
#ifndef ROWVOI_BELIEF_H
#define ROWVOI_BELIEF_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "No column": what rv_belief_mi reports as best when nothing is informative. */
#define RV_BELIEF_NONE UINT32_MAX

/* A column counts as informative when its information gain exceeds this many
** bits (rounding noise in an exact zero is far below it). */
#define RV_BELIEF_MIN_GAIN 1e-12

/* Most candidates one call accepts (counts per value are 32-bit). */
#define RV_BELIEF_MAX_CANDIDATES ((uint64_t)UINT32_MAX)

/*
** Shannon entropy, in bits, of weights[0 .. n) normalised by their total:
** H = -sum (w_i / W) log2 (w_i / W), with W the total.  n == 0 gives 0.
** Returns RV_OK and *out; RV_E_INVALID_ARG for a NULL out, NULL weights
** with n > 0, a weight that is NaN, infinite or negative (the message names
** its index), or a zero total with n > 0; RV_E_RANGE for an n no array can
** hold (core.h "Sizes").
** Ownership: borrows weights.  Since: 0.1
*/
RV_API rv_status rv_belief_entropy(const double *weights, size_t n, double *out /* OUT */);

/*
** Hard filter: keep the candidates whose code equals value.
** Writes the indices (0 .. n-1, ascending) of the kept candidates into kept
** and their posterior, renormalised to sum to 1, into out_posterior (both of
** capacity n; out_posterior may be the posterior array itself, since kept
** entries only move forward), and their number into *n_kept.
** When no candidate has the value, or the ones that have it hold zero
** posterior mass, *n_kept is 0: the empty belief (not an error -- the
** caller's candidate set was wrong, and it is for the caller to say so).
** Returns RV_OK; RV_E_INVALID_ARG for a NULL pointer (arrays may be NULL when
** n == 0; n_kept never) or a posterior weight that is NaN, infinite or
** negative; RV_E_RANGE for an n no array can hold (core.h "Sizes").
** Ownership: borrows everything.  Since: 0.1
*/
RV_API rv_status rv_belief_filter(const int32_t *codes, const double *posterior, size_t n,
                                  int32_t value, uint64_t *kept, /* OUT: n slots */
                                  double *out_posterior,         /* OUT: n slots */
                                  size_t *n_kept /* OUT */);     /* OUT */

/*
** Soft evidence: out[i] = posterior[i] * likelihoods[i] / sum_j (same).
** Every candidate is kept (zero-likelihood ones get 0), so positions stay
** aligned with the input.  Likelihoods need not be normalised; they are
** rescaled by their maximum first, so huge or tiny values neither overflow
** nor underflow.  out may be the same array as posterior.
** Returns RV_OK; RV_E_INVALID_ARG for a NULL pointer (when n > 0), a
** likelihood or posterior weight that is NaN, infinite or negative (the
** message names "likelihoods[i]" or "posterior[i]"); RV_E_INFEASIBLE when
** the evidence leaves zero total mass (zero likelihood under every
** candidate with posterior mass: the candidate set is wrong, not merely
** narrowed), including n == 0 (when every pointer may be NULL);
** RV_E_RANGE for an n no array can hold (core.h "Sizes").  On failure out
** is left untouched.
** Ownership: borrows everything.  Since: 0.1
*/
RV_API rv_status rv_belief_reweight(const double *posterior, const double *likelihoods, size_t n,
                                    double *out /* OUT */); /* OUT: n slots */

/*
** Likelihood of observing value in one column, for each candidate, under the
** noise model above (codes: the column's n candidate codes).  With A the
** number of observed answers (the K values among the candidates, plus value
** itself when no candidate has it):
**     out[i] = 1 - noise             if codes[i] == value
**            = noise / (A - 1)       otherwise
** so a value every candidate has gives 1 - noise everywhere, and a value no
** candidate has gives noise / K everywhere (the posterior does not move).
** With noise == 0 this is the indicator codes[i] == value: a value no
** candidate has gets 0 everywhere, which rv_belief_reweight reports as
** RV_E_INFEASIBLE.
** Returns RV_OK; RV_E_INVALID_ARG for a NULL pointer (when n > 0) or noise
** outside [0, 1) or NaN; RV_E_RANGE for n above RV_BELIEF_MAX_CANDIDATES;
** RV_E_NOMEM (counting the distinct values needs O(n) scratch when
** noise > 0).
** Ownership: borrows codes.  Since: 0.1
*/
RV_API rv_status rv_belief_likelihood(const int32_t *codes, size_t n, int32_t value, double noise,
                                      double *out /* OUT */); /* OUT: n slots */

/*
** Options of rv_belief_mi.  Initialise with rv_belief_options_init (or pass
** NULL for the defaults), then set what you need.
*/
typedef struct rv_belief_options {
    double noise;            /* noise level in [0, 1); default 0 (exact) */
    const double *costs;     /* n_cols costs, finite and >= 0, or NULL (1.0
                               each); only the choice of *best uses them.
                               A zero cost makes an informative column's
                               mi / cost infinite: free columns rank first,
                               the most informative of them on top */
    unsigned n_threads;      /* threads, the calling one included: 0 (the
                               default) means one per online CPU, or just
                               the calling thread for small inputs (under
                               about 4 million candidate-column cells) */
    rv_progress_fn progress; /* optional; called on the calling thread
                                   with (columns done, n_cols), at least
                                   once per call; a nonzero return stops
                                   with RV_E_INTERRUPTED */
    void *progress_ctx;
} rv_belief_options;

/* Fill *opt with the defaults (noise 0, unit costs, all CPUs, no
** progress).  A NULL opt does nothing.  Since: 0.1 */
RV_API void rv_belief_options_init(rv_belief_options *opt /* OUT */);

/*
** Information gain of every column at once.
**
** codes holds n_cols columns of n_rows codes each, column after column
** (codes[c * n_rows + r]).  The candidates are rows[0 .. n_cand) (row
** indices < n_rows; a row listed twice counts as two candidates), or the
** first n_cand rows when rows is NULL.  posterior[i] is the weight of
** candidate i (of rows[i]).
**
** For each column c writes, in bits:
**   mi[c]       I(R; X_c | E) = H(R|E) - E_x[ H(R | E, X_c = x) ] under the
**               noise model, computed exactly as H(X_c) - H(X_c | R) (the
**               same quantity), clamped into [0, min(H(R|E), h_col[c])];
**   h_col[c]    H(V_c | E), the entropy of the column's true value under the
**               posterior (the noiseless column entropy; MI never exceeds it);
**   n_values[c] K, its number of distinct codes among the candidates;
**   pairs[c]    candidate pairs it tells apart: C(n_cand, 2) minus the sum
**               over values of C(count, 2) (posterior weights ignored);
** and *h_rows = H(R|E), the entropy of the posterior.  *best gets the column
** with the largest mi[c] / cost[c] among those with mi[c] >
** RV_BELIEF_MIN_GAIN, ties (equal up to 1e-12 relative) going to the lowest
** index, or RV_BELIEF_NONE when no column is informative.  Every output
** pointer except mi may be NULL.
**
** Cost: O(n_cand) time per column (a histogram indexed by code when the
** column's code range is at most about 2 * n_cand, else a hash table) and
** O(n_cand) scratch per thread.  Columns are spread over threads; each column
** is computed by one thread with the same arithmetic whatever the thread
** count, so the output is bit-identical for any n_threads.
**
** opt may be NULL for the defaults.
** Returns RV_OK; RV_E_INVALID_ARG for a NULL pointer (mi may be NULL when
** n_cols == 0, posterior when n_cand == 0, codes when either is 0), noise
** outside [0, 1), a bad cost, or a posterior weight that is NaN,
** infinite or negative, or whose total is 0 (when n_cand > 0); RV_E_RANGE
** for a row index >= n_rows, n_cand > n_rows without rows, n_cand >
** RV_BELIEF_MAX_CANDIDATES, n_cols >= 2^32 - 1, or an n_rows * n_cols no
** array can hold (core.h "Sizes"); RV_E_INTERRUPTED when progress asked to stop
** (outputs unspecified); RV_E_NOMEM.
** Ownership: borrows everything.  Thread-safety: reentrant.  Since: 0.1
*/
RV_API rv_status rv_belief_mi(const int32_t *codes, size_t n_rows, size_t n_cols,
                              const uint64_t *rows, size_t n_cand, const double *posterior,
                              const rv_belief_options *opt, double *mi, /* OUT: n_cols */
                              double *h_col,                            /* OUT: n_cols, or NULL */
                              uint64_t *n_values,                       /* OUT: n_cols, or NULL */
                              uint64_t *pairs,                          /* OUT: n_cols, or NULL */
                              double *h_rows,                           /* OUT, or NULL */
                              uint32_t *best /* OUT */);                /* OUT, or NULL */

#ifdef __cplusplus
}
#endif

#endif /* ROWVOI_BELIEF_H */
