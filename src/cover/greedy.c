/*
** Greedy set cover, the greedy path planner, and the shared repair step.
**
** Greedy picks the set with the best gain per unit cost until the target is
** reached (Chvatal 1979: an H(max set size) <= 1 + ln m approximation).
** Gains only shrink as elements get covered, so a set's last computed gain
** is an upper bound on its current gain: a set whose bound cannot strictly
** beat the best so far is skipped without recounting ("lazy greedy").  The
** scan runs in index order and only a strictly better ratio replaces the
** incumbent, so ties go to the lowest index exactly as a full rescan would.
*/
#include <math.h>
#include <string.h>

#include "cover_internal.h"

/* Weight of the elements of set s not yet in cov (NULL weights: count). */
RV__HOT_CLONES
static double rv__new_weight(const rv_cover *p, size_t s, const uint64_t *cov,
                             const double *weights, uint64_t *count) {
    const uint64_t *b = RV__SET(p, s);
    uint64_t n = 0;
    if (!weights) {
        for (size_t w = 0; w < p->nwords; w++) n += rv__popcount64(b[w] & ~cov[w]);
        *count = n;
        return (double)n;
    }
    double total = 0;
    for (size_t w = 0; w < p->nwords; w++) {
        uint64_t x = b[w] & ~cov[w];
        while (x) {
            total += weights[(w << 6) + rv__ctz64(x)];
            n++;
            x &= x - 1;
        }
    }
    *count = n;
    return total;
}

static void rv__or_into(uint64_t *dst, const uint64_t *src, size_t nwords) {
    for (size_t w = 0; w < nwords; w++) dst[w] |= src[w];
}

/* Objective gain of adding new weight w when `unc` weight is uncovered. */
static double rv__objective_gain(rv_path_objective obj, double unc, double w) {
    if (obj == RV_PATH_ENTROPY) {
        double after = unc - w;
        if (after < 0) after = 0;
        return log2(1.0 + unc) - log2(1.0 + after);
    }
    return w;
}

/*
** One greedy run shared by solve and plan_path.  Stops when `covered`
** reaches n_required or no set adds a new element.  Writes picks in order.
*/
static rv_status rv__greedy_run(const rv_cover *p, rv_path_objective obj, const double *weights,
                                uint64_t n_required, uint32_t *order, uint64_t *newly, double *gain,
                                size_t *n_steps) {
    size_t n = p->n_sets;
    uint64_t *cov = rv__calloc(p->nwords ? p->nwords : 1, sizeof(uint64_t));
    double *ub = rv__malloc((n ? n : 1) * sizeof(double));
    uint8_t *used = rv__calloc(n ? n : 1, 1);
    if (!cov || !ub || !used) {
        rv__free(cov);
        rv__free(ub);
        rv__free(used);
        return rv__nomem("greedy work arrays");
    }
    double unc = 0; /* uncovered weight of the whole universe */
    if (weights) {
        for (uint64_t e = 0; e < p->n_elements; e++) unc += weights[e];
    } else {
        unc = (double)p->n_elements;
    }
    /* Initial bound: everything a set covers is still new. */
    for (size_t s = 0; s < n; s++) {
        uint64_t cnt;
        ub[s] = rv__new_weight(p, s, cov, weights, &cnt);
    }
    uint64_t covered = 0;
    size_t steps = 0;
    while (covered < n_required) {
        long best = -1;
        double best_gain = 0, best_w = 0;
        uint64_t best_cnt = 0;
        for (size_t s = 0; s < n; s++) {
            if (used[s]) continue;
            if (best >= 0) {
                double bound = rv__objective_gain(obj, unc, ub[s]);
                if (!rv__ratio_better(bound, p->costs[s], best_gain, p->costs[best])) continue;
            }
            uint64_t cnt;
            double w = rv__new_weight(p, s, cov, weights, &cnt);
            ub[s] = w;
            if (cnt == 0) {
                used[s] = 1; /* adds nothing now, never will */
                continue;
            }
            double g = rv__objective_gain(obj, unc, w);
            if (best < 0 || rv__ratio_better(g, p->costs[s], best_gain, p->costs[best])) {
                best = (long)s;
                best_gain = g;
                best_w = w;
                best_cnt = cnt;
            }
        }
        if (best < 0) break;
        used[best] = 1;
        rv__or_into(cov, RV__SET(p, best), p->nwords);
        covered += best_cnt;
        unc -= best_w;
        order[steps] = (uint32_t)best;
        if (newly) newly[steps] = best_cnt;
        if (gain) gain[steps] = best_gain;
        steps++;
    }
    rv__free(cov);
    rv__free(ub);
    rv__free(used);
    *n_steps = steps;
    return RV_OK;
}

rv_status rv__cover_greedy(const rv_cover *p, uint64_t n_required, uint32_t *selected,
                           size_t *n_selected) {
    return rv__greedy_run(p, RV_PATH_COVERAGE, NULL, n_required, selected, NULL, NULL, n_selected);
}

rv_status rv_cover_plan_path(const rv_cover *p, rv_path_objective objective, const double *weights,
                             uint32_t *order, uint64_t *newly_covered, double *gain,
                             size_t capacity, size_t *n_steps) {
    if (n_steps) *n_steps = 0;
    RV__NOT_NULL(p, "p (the problem)");
    RV__NOT_NULL(order, "order");
    RV__NOT_NULL(newly_covered, "newly_covered");
    RV__NOT_NULL(n_steps, "n_steps");
    RV__CHECK_SIZE(capacity, sizeof *newly_covered, "capacity");
    if (objective != RV_PATH_COVERAGE && objective != RV_PATH_ENTROPY)
        return rv__error(RV_E_INVALID_ARG, "unknown path objective %d", (int)objective);
    if (capacity < p->n_sets)
        return rv__error(RV_E_SHAPE, "capacity %zu < n_sets %zu", capacity, p->n_sets);
    if (weights)
        for (uint64_t e = 0; e < p->n_elements; e++)
            if (!(weights[e] >= 0) || !isfinite(weights[e]))
                return rv__error(RV_E_INVALID_ARG,
                                 "weights[%llu] = %g: weights must be finite and >= 0",
                                 (unsigned long long)e, weights[e]);
    return rv__greedy_run(p, objective, weights, UINT64_MAX, order, newly_covered, gain, n_steps);
}
