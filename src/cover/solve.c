/*
** rv_cover_solve: validation and dispatch to the solvers.
*/
#include <math.h>
#include <string.h>

#include "cover_internal.h"

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
    if ((unsigned)opt->strategy > RV_COVER_HYBRID)
        return rv__error(RV_E_INVALID_ARG, "unknown strategy %d", (int)opt->strategy);
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
