/*
** rv_cover_solve: validation and dispatch to the solvers.
*/
#include <math.h>
#include <string.h>

#include "cover_internal.h"

/*
** Free sets.  Taking every set that costs nothing never raises the cost of a
** cover and never lowers its coverage, so some optimum contains them all:
** the non-greedy solvers fix them, solve the residual problem (the elements
** they leave uncovered, the paid sets: rv__cover_free_residual, cover.c)
** and map the answer back.  That keeps the solvers' assumption of positive
** costs (the annealing penalty is the largest cost; the LP scales by costs)
** without changing any optimum.
*/

/* Drop the free sets of sel[0..*k) that the selection does not need to keep
** `required` elements covered, highest index first.  sel is ascending. */
static rv_status rv__drop_unneeded_free(const rv_cover *p, uint64_t required, uint32_t *sel,
                                        size_t *k) {
    size_t nw = p->nwords;
    uint64_t *once = rv__malloc((nw ? nw : 1) * sizeof(uint64_t));
    uint64_t *twice = rv__malloc((nw ? nw : 1) * sizeof(uint64_t));
    if (!once || !twice) {
        rv__free(once);
        rv__free(twice);
        return rv__nomem("coverage counters");
    }
    for (size_t i = *k; i-- > 0;) {
        if (p->costs[sel[i]] > 0) continue;
        memset(once, 0, (nw ? nw : 1) * sizeof(uint64_t));
        memset(twice, 0, (nw ? nw : 1) * sizeof(uint64_t));
        for (size_t j = 0; j < *k; j++) {
            const uint64_t *b = RV__SET(p, sel[j]);
            for (size_t w = 0; w < nw; w++) {
                twice[w] |= once[w] & b[w];
                once[w] |= b[w];
            }
        }
        const uint64_t *b = RV__SET(p, sel[i]);
        uint64_t covered = rv_bitset_count(once, nw), unique = 0;
        for (size_t w = 0; w < nw; w++) unique += rv__popcount64(b[w] & ~twice[w]);
        if (covered - unique >= required) {
            memmove(sel + i, sel + i + 1, (*k - i - 1) * sizeof(uint32_t));
            (*k)--;
        }
    }
    rv__free(once);
    rv__free(twice);
    return RV_OK;
}

/* Solve with the free sets fixed (the caller checked there is one). */
static rv_status rv__solve_with_free(const rv_cover *p, const rv_cover_options *opt,
                                     uint64_t required, uint32_t *selected, size_t *n_selected,
                                     rv_cover_info *info) {
    size_t n = p->n_sets, n_paid = 0, k = 0, k2 = 0;
    uint8_t *is_free = rv__calloc(n ? n : 1, 1);
    uint32_t *paid = rv__malloc((n ? n : 1) * sizeof(uint32_t));
    uint32_t *sub = rv__malloc((n ? n : 1) * sizeof(uint32_t));
    rv_cover *res = NULL;
    rv_status st = RV_OK, st2;
    uint64_t free_cov = 0;
    if (!is_free || !paid || !sub) {
        st = rv__nomem("the free-set selection");
        goto out;
    }
    for (size_t s = 0; s < n; s++) is_free[s] = p->costs[s] == 0 && p->sizes[s] > 0;
    if ((st = rv__cover_free_residual(p, is_free, &res, paid, &n_paid, &free_cov))) goto out;
    rv_cover_options o2 = *opt;
    o2.n_required = required > free_cov ? required - free_cov : 0;
    st = rv_cover_solve(res, &o2, sub, n_paid, &k2, info);
    if (st != RV_OK && st != RV_E_TIMEOUT) goto out;
    /* merge: free sets and the mapped residual answer, ascending */
    for (size_t s = 0, j = 0; s < n; s++) {
        int take = is_free[s];
        while (j < k2 && paid[sub[j]] < s) j++;
        if (j < k2 && paid[sub[j]] == s) take = 1;
        if (take) selected[k++] = (uint32_t)s;
    }
    if ((st2 = rv__drop_unneeded_free(p, required, selected, &k))) {
        st = st2;
        goto out;
    }
    *n_selected = k;
out:
    rv_cover_free(res);
    rv__free(is_free);
    rv__free(paid);
    rv__free(sub);
    return st;
}

void rv_cover_options_init(rv_cover_options *opt) {
    if (!opt) return;
    memset(opt, 0, sizeof *opt);
    opt->strategy = RV_COVER_GREEDY;
    opt->n_required = RV_COVER_ALL;
}

rv_status rv_cover_solve(const rv_cover *p, const rv_cover_options *opt, uint32_t *selected,
                         size_t capacity, size_t *n_selected, rv_cover_info *info) {
    if (n_selected) *n_selected = 0;
    RV__NOT_NULL(p, "p (the problem)");
    RV__NOT_NULL(opt, "opt");
    RV__NOT_NULL(n_selected, "n_selected");
    if (!selected && p->n_sets) return rv__null("selected");
    RV__CHECK_SIZE(capacity, sizeof *selected, "capacity");
    if (capacity < p->n_sets)
        return rv__error(RV_E_SHAPE, "capacity %zu < n_sets %zu", capacity, p->n_sets);
    if (isnan(opt->time_limit)) return rv__error(RV_E_INVALID_ARG, "time_limit is NaN");
    if ((unsigned)opt->strategy > RV_COVER_LP)
        return rv__error(RV_E_INVALID_ARG, "unknown strategy %d", (int)opt->strategy);
    if (!(opt->lp_eps >= 0 && opt->lp_eps <= 1))
        return rv__error(RV_E_INVALID_ARG, "lp_eps = %g: must be in [0, 1] (0: the default)",
                         opt->lp_eps);
    uint64_t required = opt->n_required == RV_COVER_ALL ? p->n_coverable : opt->n_required;
    if (required > p->n_coverable)
        return rv__error(RV_E_INFEASIBLE,
                         "%llu elements must be covered but only %llu of %llu are "
                         "covered by any set",
                         (unsigned long long)required, (unsigned long long)p->n_coverable,
                         (unsigned long long)p->n_elements);
    double t_start = rv__now();
    double deadline = opt->time_limit > 0 ? t_start + opt->time_limit : 0;
    rv_cover_info inf;
    memset(&inf, 0, sizeof inf);
    size_t n = p->n_sets, k = 0;
    rv_status st = RV_OK;

    if (required == 0) {
        inf.optimal = 1;
        goto finish;
    }
    if (opt->strategy != RV_COVER_GREEDY) {
        int any_free = 0;
        for (size_t s = 0; s < n && !any_free; s++) any_free = p->costs[s] == 0 && p->sizes[s] > 0;
        if (any_free) {
            rv_cover_info sub;
            memset(&sub, 0, sizeof sub);
            st = rv__solve_with_free(p, opt, required, selected, &k, &sub);
            if (st != RV_OK && st != RV_E_TIMEOUT) return st;
            inf = sub;
            goto finish;
        }
    }
    if ((st = rv__cover_greedy(p, required, selected, &k))) return st;
    if (opt->strategy == RV_COVER_GREEDY) goto finish;

    rv__reduced r;
    if ((st = rv__reduce(p, &r))) return st;
    uint8_t *x = rv__calloc(n, 1), *y = rv__calloc(n, 1);
    uint32_t *cnt = rv__calloc(r.n_el ? r.n_el : 1, sizeof(uint32_t));
    if (!x || !y || !cnt) {
        st = rv__nomem("solver selections");
        goto out;
    }
    for (size_t i = 0; i < k; i++) x[selected[i]] = 1;
    uint64_t cov = rv__reduced_counts(&r, x, cnt);
    if (rv__reduced_repair(&r, required, x, cnt, &cov) != 0) {
        st = rv__error(RV_E_INTERNAL, "greedy start is not a cover");
        goto out;
    }
    /* Every strategy starts from the greedy cover polished by the
    ** deterministic 1-opt local search (within a quarter of any time
    ** limit): a better incumbent prunes more in branch and bound, seeds the
    ** metaheuristics, and is what a timeout returns. */
    double ls_deadline = deadline > 0 ? t_start + 0.25 * opt->time_limit : 0;
    if (rv__reduced_local_search(&r, required, x, cnt, &cov, ls_deadline, 1000) != 0) {
        st = rv__nomem("local search");
        goto out;
    }
    uint64_t work = 0;
    switch (opt->strategy) {
    case RV_COVER_EXACT:
        st = rv__cover_exact(&r, required, opt, deadline, x, &work, &inf.optimal);
        break;
    case RV_COVER_SA:
        st = rv__cover_sa(&r, required, opt, deadline, x, &work);
        break;
    case RV_COVER_GA: {
        const uint8_t *seeds[1] = {x};
        memcpy(y, x, n);
        st = rv__cover_ga(&r, required, opt, deadline, seeds, 1, y, &work);
        memcpy(x, y, n);
        break;
    }
    case RV_COVER_LP: {
        double lb = 0;
        st = rv__cover_lp(&r, required, opt, deadline, x, &lb, &work);
        inf.lp_bound = lb;
        inf.lower_bound = lb;
        /* integer costs: every cover costs an integer, so round the bound
        ** up (after a margin for the bound's own rounding error) */
        int integral = 1;
        for (size_t s = 0; s < n && integral; s++)
            integral = p->costs[s] == floor(p->costs[s]) && p->costs[s] < 9007199254740992.0;
        if (integral && lb > 0) inf.lower_bound = ceil(lb - 1e-9 * (lb > 1 ? lb : 1));
        break;
    }
    case RV_COVER_HYBRID: {
        memcpy(y, x, n); /* y: greedy */
        uint8_t *z = rv__malloc(n);
        if (!z) {
            st = rv__nomem("hybrid selection");
            break;
        }
        memcpy(z, x, n);
        st = rv__cover_sa(&r, required, opt, deadline, z, &work);
        if (st == RV_OK) {
            const uint8_t *seeds[2] = {y, z};
            uint64_t w2 = 0;
            st = rv__cover_ga(&r, required, opt, deadline, seeds, 2, x, &w2);
            work += w2;
        }
        rv__free(z);
        break;
    }
    default:
        break;
    }
    inf.work = work;
    if (st == RV_OK || st == RV_E_TIMEOUT) {
        k = 0;
        for (size_t s = 0; s < n; s++)
            if (x[s]) selected[k++] = (uint32_t)s;
    }
out:
    rv__free(x);
    rv__free(y);
    rv__free(cnt);
    rv__reduced_free(&r);
    if (st != RV_OK && st != RV_E_TIMEOUT) return st;
finish:
    inf.cost = 0;
    for (size_t i = 0; i < k; i++) inf.cost += p->costs[selected[i]];
    if (inf.optimal)
        inf.lower_bound = inf.cost;
    else if (inf.lower_bound > 0 && inf.cost <= inf.lower_bound * (1 + 1e-9) + 1e-12)
        inf.optimal = 1; /* the LP bound proves the cover optimal */
    {
        rv_status st2 = rv_cover_covered(p, selected, k, NULL, &inf.covered);
        if (st2) return st2;
    }
    inf.seconds = rv__now() - t_start;
    *n_selected = k;
    if (info) *info = inf;
    if (st == RV_E_TIMEOUT)
        return rv__error(RV_E_TIMEOUT,
                         "the exact solver reached its time limit of %g s before "
                         "proving optimality; the best cover found (cost %g) is "
                         "returned unproven",
                         opt->time_limit, inf.cost);
    return st;
}
