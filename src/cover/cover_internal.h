/*
** Layout of rv_cover and helpers shared by the set cover solvers.
*/
#ifndef ROWVOI_COVER_INTERNAL_H
#define ROWVOI_COVER_INTERNAL_H

#include "../internal.h"

struct rv_cover {
    size_t n_sets;
    uint64_t n_elements;
    size_t nwords;        /* words per set bitset */
    uint64_t *bits;       /* n_sets * nwords, set s at bits + s * nwords */
    double *costs;        /* n_sets, each finite and >= 0 */
    uint64_t *sizes;      /* popcount of each set */
    uint64_t n_coverable; /* popcount of the union */
};

#define RV__SET(p, s) ((p)->bits + (size_t)(s) * (p)->nwords)

/* Remap codes to 0 .. k-1 in order of first appearance; k to *n_distinct. */
rv_status rv__dense_codes(const int32_t *codes, size_t n, int32_t *out, uint32_t *n_distinct);

/* C(n_rows, 2). */
uint64_t rv__pair_count(size_t n_rows);

/* Greedy cover of n_required elements (picks in order). */
rv_status rv__cover_greedy(const rv_cover *p, uint64_t n_required, uint32_t *selected,
                           size_t *n_selected);

/*
** The reduced problem the exact and metaheuristic solvers work on: elements
** that are covered by exactly the same sets are merged into one element
** whose weight is their number, and uncoverable elements are dropped.  For
** key problems this shrinks the universe from C(n, 2) pairs to the distinct
** "which columns separate this pair" patterns.
*/
typedef struct rv__reduced {
    size_t n_sets;
    size_t n_el;         /* distinct coverable elements */
    size_t el_words;     /* words of a bitset over reduced elements */
    size_t sig_words;    /* words of a bitset over sets */
    uint64_t *sig;       /* n_el * sig_words: sets covering each element */
    uint64_t *mult;      /* n_el: how many original elements it stands for */
    uint64_t *set_bits;  /* n_sets * el_words */
    uint64_t *set_off;   /* n_sets + 1, CSR over set_el */
    uint32_t *set_el;    /* reduced elements of each set */
    uint64_t *set_mult;  /* total multiplicity of each set */
    const double *costs; /* borrowed from the problem */
    uint64_t total;      /* sum of mult = coverable original elements */
} rv__reduced;

rv_status rv__reduce(const rv_cover *p, rv__reduced *r);
void rv__reduced_free(rv__reduced *r);

/* Make x (0/1 per set) reach `required` multiplicity: add sets greedily,
** then drop redundant sets, most expensive first (ties: highest index).
** cnt: per reduced element, how many chosen sets cover it (kept in sync);
** *covered: covered multiplicity (kept in sync).  Returns 0, or -1 when
** the target is unreachable. */
int rv__reduced_repair(const rv__reduced *r, uint64_t required, uint8_t *x, uint32_t *cnt,
                       uint64_t *covered);

/* 1-opt improvement of a cover x (cnt/covered in sync): remove a chosen set,
** re-cover without it, keep when strictly cheaper; costliest sets first.
** Returns 0, or -2 on allocation failure (x is then still a valid cover). */
int rv__reduced_local_search(const rv__reduced *r, uint64_t required, uint8_t *x, uint32_t *cnt,
                             uint64_t *covered, double deadline, uint64_t max_rounds);

/* Recompute cnt and return the covered multiplicity of x. */
uint64_t rv__reduced_counts(const rv__reduced *r, const uint8_t *x, uint32_t *cnt);

/* Add (+1) or remove (-1) set s: update cnt and return the change in
** covered multiplicity. */
int64_t rv__reduced_flip(const rv__reduced *r, size_t s, int add, uint32_t *cnt);

double rv__selection_cost(const double *costs, size_t n, const uint8_t *x);

/* The residual problem once the sets with is_free[s] are taken: the
** elements they leave uncovered, the other sets (paid[k] is the original
** index of residual set k, *n_paid of them); *free_covered gets the
** elements the free sets cover. */
rv_status rv__cover_free_residual(const rv_cover *p, const uint8_t *is_free, rv_cover **res,
                                  uint32_t *paid, size_t *n_paid, uint64_t *free_covered);

/* Strategy RV_COVER_LP: the rounded cover into best, the LP bound to *lb. */
rv_status rv__cover_lp(const rv__reduced *r, uint64_t required, const rv_cover_options *opt,
                       double deadline, uint8_t *best, double *lb, uint64_t *work);

rv_status rv__cover_exact(const rv__reduced *r, uint64_t required, const rv_cover_options *opt,
                          double deadline, uint8_t *best, uint64_t *work, int *optimal);
rv_status rv__cover_sa(const rv__reduced *r, uint64_t required, const rv_cover_options *opt,
                       double deadline, uint8_t *best, uint64_t *work);
rv_status rv__cover_ga(const rv__reduced *r, uint64_t required, const rv_cover_options *opt,
                       double deadline, const uint8_t *const *seeds, size_t n_seeds, uint8_t *best,
                       uint64_t *work);

#endif /* ROWVOI_COVER_INTERNAL_H */
