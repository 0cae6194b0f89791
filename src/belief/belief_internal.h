/*
** Shared by the belief kernels: per-column value histograms.
*/
#ifndef ROWVOI_BELIEF_INTERNAL_H
#define ROWVOI_BELIEF_INTERNAL_H

#include <math.h>

#include "../internal.h"

/* Scratch for one thread.  The tables have `cap` slots (a power of two, at
** least twice the number of candidates), so a column whose code range fits
** in `cap` is counted by direct indexing and any other column by open
** addressing at load <= 1/2.  `w` and `cnt` are all-zero between uses: the
** histogram pass resets every slot it touched while it compacts them. */
typedef struct rv__bscratch {
    size_t cap;
    unsigned log2cap;
    double *w;     /* cap: posterior mass per slot */
    uint32_t *cnt; /* cap: candidates per slot; 0 marks an empty slot */
    int32_t *key;  /* cap: the code held by a slot (hash mode) */
    double *vals;  /* n: mass of each distinct value, compacted */
} rv__bscratch;

/* What one pass over a column found. */
typedef struct rv__colstats {
    uint64_t k;          /* distinct codes; vals[0 .. k) hold their masses */
    uint64_t same_pairs; /* sum over values of C(count, 2) */
} rv__colstats;

/* Allocate scratch for up to n candidates (all through rv__malloc). */
rv_status rv__bscratch_init(rv__bscratch *s, size_t n);
void rv__bscratch_free(rv__bscratch *s);

/* Histogram of one column over candidates: col[rows[i]] (or col[i] when rows
** is NULL) for i < n, weighted by p[i] (or unweighted when p is NULL, which
** leaves vals untouched).  n must not exceed the scratch's candidates. */
void rv__column_hist(const int32_t *col, const uint64_t *rows, size_t n, const double *p,
                     rv__bscratch *s, rv__colstats *out);

/* -x log2 x for x > 0, and 0 for x == 0 (the limit; no epsilon). */
static inline double rv__xlog2x_neg(double x) {
    return x > 0 ? -x * log2(x) : 0.0;
}

/* Check a weight vector: finite, >= 0.  `what` names it in the message.
** Writes the total into *total. */
rv_status rv__check_weights(const double *w, size_t n, const char *what, double *total);

#endif /* ROWVOI_BELIEF_INTERNAL_H */
