/*
** The LP relaxation of set cover, within a factor 1 + eps, and its rounding
** (strategy RV_COVER_LP).
**
** Full cover.  The relaxation is the covering LP
**     min c.x  subject to  sum_{s ∋ e} x_s >= 1 for every element,  x >= 0,
** whose dual is the packing LP
**     max sum_e y_e  subject to  sum_{e ∈ s} y_e <= c_s for every set,  y >= 0.
** It is solved by multiplicative weights on the packing side, as in Garg and
** Könemann (FOCS 1998) with Fleischer's phases (SIAM J. Discrete Math. 2000):
** every set s carries a length l_s, initially delta / c_s; an element's
** length is alpha(e) = sum_{s ∋ e} l_s.  A phase sweeps the elements in index
** order and, while alpha(e) is below (1 + eps') times the smallest length at
** the start of the phase, routes the bottleneck amount u = min_{s ∋ e} c_s
** to y_e and multiplies the length of every set s ∋ e by 1 + eps' u / c_s.
** Both sides give certified bounds at every phase boundary:
**   - primal: x = l / min_e alpha(e) covers every element at least once;
**     capped at 1 it still does, and its cost is an upper bound on the
**     optimum;
**   - dual: y divided by its largest relative load max_s load_s / c_s is
**     feasible, so sum_e y_e / max load is a lower bound.
** The run stops as soon as the best primal is within 1 + eps of the best
** dual (or at the time limit); Garg and Könemann's analysis bounds the number
** of phases (about ln(m) / eps'^2 for m sets) before D reaches 1, and with
** eps' = eps / 4 the bounds meet within 1 + eps by then.  Elements covered by
** the same sets are merged first (rv__reduce), so a key problem's C(n, 2)
** pairs become its distinct separation patterns.  Lengths are renormalised
** (with the scale kept as a logarithm) so that delta, which can be far below
** the smallest double for small eps, never has to be represented.
**
** Partial cover (n_required below the coverable elements).  The relaxation
**     min c.x  s.t.  z_e <= sum_{s ∋ e} x_s,  z_e <= 1,  sum_e m_e z_e >= R
** (m_e the multiplicity of a merged element) is reached through its
** Lagrangian: for a price t >= 0 per uncovered unit, the prize-collecting
** LP min c.x + t sum_e m_e w_e s.t. A x + w >= 1 is again a covering LP (each
** element gets a singleton column of cost t m_e), and for every t its dual
** bound minus t (M - R) bounds the partial optimum from below (M: all
** coverable multiplicity).  A bisection on t keeps the best such bound; the
** fractional answer is the cheapest of the prize-collecting solutions that
** cover R, and of convex combinations of one below and one above R (the
** covered amount is concave in x, so the mix covers at least R).  The
** bisection starts at the price the full cover's dual suggests and stops
** when the bounds meet within 1 + eps, when the price interval has
** collapsed, when three steps in a row improved neither bound, or after 16
** steps.  Every dual found on the way also bounds the partial LP directly
** (its set constraints are the partial dual's; the best price for it is a
** breakpoint, found by sorting), which is what makes the lower bound tight.  Each prize-collecting LP is itself only within 1 + eps,
** and its error is relative to its own optimum, which includes the penalty
** part; so a partial cover's bounds are both valid but need not meet within
** 1 + eps (res->converged says whether they did).
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cover_internal.h"

/* One covering LP: columns are the sets of r plus, with pen != NULL, one
** singleton column per element (cost pen[e] > 0). */
typedef struct rv__lp {
    const rv__reduced *r;
    const double *pen; /* n_el or NULL */
    uint64_t *e_off;   /* n_el + 1: element -> sets (CSR) */
    uint32_t *e_set;
    double *cap;    /* n_el: bottleneck capacity of each element */
    double *len;    /* n_sets (+ n_el) column lengths */
    double *load;   /* n_sets (+ n_el) dual load per column */
    double *y;      /* n_el dual */
    double *best_x; /* n_sets (+ n_el): the best primal found */
} rv__lp;

static double rv__lp_cost(const rv__lp *lp, size_t j) {
    size_t n = lp->r->n_sets;
    return j < n ? lp->r->costs[j] : lp->pen[j - n];
}

static double rv__lp_alpha(const rv__lp *lp, size_t e) {
    double a = 0;
    for (uint64_t k = lp->e_off[e]; k < lp->e_off[e + 1]; k++) a += lp->len[lp->e_set[k]];
    if (lp->pen) a += lp->len[lp->r->n_sets + e];
    return a;
}

/* Element -> sets lists, and each element's bottleneck capacity. */
static rv_status rv__lp_init(rv__lp *lp, const rv__reduced *r) {
    memset(lp, 0, sizeof *lp);
    lp->r = r;
    size_t ne = r->n_el, n = r->n_sets;
    uint64_t nnz = r->set_off[n];
    lp->e_off = rv__calloc(ne + 1, sizeof(uint64_t));
    lp->e_set = rv__malloc((nnz ? nnz : 1) * sizeof(uint32_t));
    lp->cap = rv__malloc((ne ? ne : 1) * sizeof(double));
    lp->len = rv__malloc((n + ne + 1) * sizeof(double));
    lp->load = rv__malloc((n + ne + 1) * sizeof(double));
    lp->y = rv__malloc((ne ? ne : 1) * sizeof(double));
    lp->best_x = rv__malloc((n + ne + 1) * sizeof(double));
    if (!lp->e_off || !lp->e_set || !lp->cap || !lp->len || !lp->load || !lp->y || !lp->best_x)
        return rv__nomem("the LP relaxation");
    for (uint64_t k = 0; k < nnz; k++) lp->e_off[r->set_el[k] + 1]++;
    for (size_t e = 0; e < ne; e++) lp->e_off[e + 1] += lp->e_off[e];
    uint64_t *at = rv__malloc((ne ? ne : 1) * sizeof(uint64_t));
    if (!at) return rv__nomem("the LP relaxation");
    memcpy(at, lp->e_off, ne * sizeof(uint64_t));
    for (size_t s = 0; s < n; s++)
        for (uint64_t k = r->set_off[s]; k < r->set_off[s + 1]; k++)
            lp->e_set[at[r->set_el[k]]++] = (uint32_t)s;
    rv__free(at);
    return RV_OK;
}

static void rv__lp_free(rv__lp *lp) {
    rv__free(lp->e_off);
    rv__free(lp->e_set);
    rv__free(lp->cap);
    rv__free(lp->len);
    rv__free(lp->load);
    rv__free(lp->y);
    rv__free(lp->best_x);
}

/*
** Multiplicative weights on the current columns (sets, plus singleton
** columns when lp->pen is set).  Writes the best primal into lp->best_x
** (column values) and its cost into *ub, the best dual bound into *lb.
** Returns RV_OK (bounds certified within 1 + eps, or the analysis' end),
** RV_E_TIMEOUT at the deadline (bounds still valid), RV_E_INTERRUPTED.
*/
static rv_status rv__lp_mwu(rv__lp *lp, double eps, double deadline, const rv_cover_options *opt,
                            double *ub, double *lb, uint64_t *work) {
    const rv__reduced *r = lp->r;
    size_t n = r->n_sets, ne = r->n_el, ncol = n + (lp->pen ? ne : 0);
    *ub = INFINITY;
    *lb = 0;
    if (ne == 0) {
        memset(lp->best_x, 0, (ncol ? ncol : 1) * sizeof(double));
        *ub = 0;
        return RV_OK;
    }
    double ep = eps / 4;
    /* delta = (1 + ep) ((1 + ep) m)^(-1/ep), kept as a logarithm */
    double log_scale = log1p(ep) - log((1 + ep) * (double)ncol) / ep;
    double D = 0;
    for (size_t j = 0; j < ncol; j++) {
        double c = rv__lp_cost(lp, j);
        lp->len[j] = 1.0 / c;
        lp->load[j] = 0;
        D += 1.0; /* c * len */
    }
    for (size_t e = 0; e < ne; e++) {
        double c = INFINITY;
        for (uint64_t k = lp->e_off[e]; k < lp->e_off[e + 1]; k++)
            if (r->costs[lp->e_set[k]] < c) c = r->costs[lp->e_set[k]];
        if (lp->pen && lp->pen[e] < c) c = lp->pen[e];
        lp->cap[e] = c;
        lp->y[e] = 0;
    }
    double ysum = 0;
    uint64_t steps = 0;
    rv_status st = RV_OK;
    for (;;) {
        /* phase boundary: certified bounds */
        double amin = INFINITY;
        for (size_t e = 0; e < ne; e++) {
            double a = rv__lp_alpha(lp, e);
            if (a < amin) amin = a;
        }
        /* x = len / amin covers every element; capping it at 1 keeps that
        ** (an element reached by a set at >= 1 stays covered) and saves */
        double cand = 0;
        for (size_t j = 0; j < ncol; j++) {
            double v = lp->len[j] / amin;
            cand += rv__lp_cost(lp, j) * (v < 1 ? v : 1);
        }
        if (cand < *ub) {
            *ub = cand;
            for (size_t j = 0; j < ncol; j++) {
                double v = lp->len[j] / amin;
                lp->best_x[j] = v < 1 ? v : 1;
            }
        }
        double maxload = 0;
        for (size_t j = 0; j < ncol; j++) {
            double q = lp->load[j] / rv__lp_cost(lp, j);
            if (q > maxload) maxload = q;
        }
        if (maxload > 0 && ysum / maxload > *lb) *lb = ysum / maxload;
        if (*ub <= (1 + eps) * *lb) break;  /* certified */
        if (log(D) + log_scale >= 0) break; /* the analysis' end */
        if (deadline > 0 && rv__now() > deadline) {
            st = RV_E_TIMEOUT;
            break;
        }
        if (opt && opt->progress && opt->progress(opt->progress_ctx, steps, 0)) {
            st = rv__error(RV_E_INTERRUPTED, "the LP relaxation was interrupted");
            break;
        }
        double thr = amin * (1 + ep);
        for (size_t e = 0; e < ne; e++) {
            double a = rv__lp_alpha(lp, e);
            while (a < thr) {
                double u = lp->cap[e];
                lp->y[e] += u;
                ysum += u;
                for (uint64_t k = lp->e_off[e]; k <= lp->e_off[e + 1]; k++) {
                    size_t j;
                    if (k < lp->e_off[e + 1])
                        j = lp->e_set[k];
                    else if (lp->pen)
                        j = n + e;
                    else
                        break;
                    double c = rv__lp_cost(lp, j);
                    double grow = lp->len[j] * ep * u / c;
                    lp->len[j] += grow;
                    lp->load[j] += u;
                    D += c * grow;
                }
                steps++;
                a = rv__lp_alpha(lp, e);
            }
            if (D > 1e200) { /* renormalise: lengths, threshold and D alike */
                for (size_t j = 0; j < ncol; j++) lp->len[j] /= D;
                thr /= D;
                log_scale += log(D);
                D = 1;
            }
        }
    }
    *work += steps;
    return st;
}

/* Multiplicity x covers fractionally: sum_e m_e min(1, sum_{s ∋ e} x_s). */
static double rv__lp_covered(const rv__lp *lp, const double *x) {
    const rv__reduced *r = lp->r;
    double total = 0;
    for (size_t e = 0; e < r->n_el; e++) {
        double a = 0;
        for (uint64_t k = lp->e_off[e]; k < lp->e_off[e + 1]; k++) a += x[lp->e_set[k]];
        total += (double)r->mult[e] * (a < 1 ? a : 1);
    }
    return total;
}

/* Shrink x (covering at least R) to theta x with the smallest theta in
** [0, 1] that still covers R (coverage is concave and increasing in theta,
** so a bisection finds it); returns theta.  tmp: n_sets scratch. */
static double rv__lp_shrink(const rv__lp *lp, double *x, double R, double *tmp) {
    size_t n = lp->r->n_sets;
    double lo = 0, hi = 1;
    for (int it = 0; it < 40; it++) {
        double mid = 0.5 * (lo + hi);
        for (size_t s = 0; s < n; s++) tmp[s] = mid * x[s];
        if (rv__lp_covered(lp, tmp) >= R)
            hi = mid;
        else
            lo = mid;
    }
    for (size_t s = 0; s < n; s++) x[s] *= hi;
    return hi;
}

typedef struct {
    double ratio, mult;
} rv__lp_brk;

static int rv__lp_brk_cmp(const void *a, const void *b) {
    double x = ((const rv__lp_brk *)a)->ratio, y = ((const rv__lp_brk *)b)->ratio;
    return (x > y) - (x < y);
}

/*
** A lower bound on the partial-cover LP from the dual y of the last run.
** Scaled by its largest relative load over the sets alone, y satisfies the
** set constraints of the partial LP's dual, max R tau - sum_e u_e subject
** to sum_{e ∈ s} y_e <= c_s and u_e >= m_e tau - y_e, u >= 0.  For that y
** the best tau is a breakpoint y_e / m_e: the one where the multiplicity of
** the elements below it first reaches R (the objective's slope, R minus that
** multiplicity, turns negative there).  brk: n_el scratch.
*/
static double rv__lp_partial_bound(const rv__lp *lp, double R, rv__lp_brk *brk, double *tau_out) {
    const rv__reduced *r = lp->r;
    double scale = 0;
    for (size_t s = 0; s < r->n_sets; s++) {
        double q = lp->load[s] / r->costs[s];
        if (q > scale) scale = q;
    }
    if (!(scale > 0)) return 0;
    for (size_t e = 0; e < r->n_el; e++) {
        brk[e].mult = (double)r->mult[e];
        brk[e].ratio = lp->y[e] / scale / brk[e].mult;
    }
    qsort(brk, r->n_el, sizeof *brk, rv__lp_brk_cmp);
    double below = 0, tau = 0;
    for (size_t k = 0; k < r->n_el; k++) {
        below += brk[k].mult;
        if (below >= R) {
            tau = brk[k].ratio;
            break;
        }
    }
    double g = R * tau;
    for (size_t k = 0; k < r->n_el && brk[k].ratio < tau; k++)
        g -= brk[k].mult * tau - brk[k].ratio * brk[k].mult;
    if (tau_out) *tau_out = tau;
    return g > 0 ? g : 0;
}

/* Solve the relaxation of r for `required` multiplicity.  Writes x (n_sets
** values), the fractional cost *value and a lower bound *lb. */
static rv_status rv__lp_reduced(const rv__reduced *r, uint64_t required, double eps,
                                double deadline, const rv_cover_options *opt, double *x,
                                double *value, double *lb, uint64_t *work) {
    size_t n = r->n_sets, ne = r->n_el;
    *value = 0;
    *lb = 0;
    memset(x, 0, (n ? n : 1) * sizeof(double));
    if (required == 0 || ne == 0) return RV_OK;
    rv__lp lp;
    double *pen = NULL, *xlo = NULL, *cov = NULL;
    rv_status st = rv__lp_init(&lp, r);
    if (st) goto out;
    double ub_full, lb_full;
    st = rv__lp_mwu(&lp, eps, deadline, opt, &ub_full, &lb_full, work);
    if (st != RV_OK && st != RV_E_TIMEOUT) goto out;
    memcpy(x, lp.best_x, n * sizeof(double));
    *value = ub_full;
    *lb = lb_full;
    if (required >= r->total || st == RV_E_TIMEOUT) goto out;

    /* Partial cover: Lagrangian bisection on the price t of an uncovered
    ** unit.  x stays the cheapest fractional answer covering `required`. */
    double M = (double)r->total, R = (double)required;
    pen = rv__malloc(ne * sizeof(double));
    xlo = rv__calloc(n ? n : 1, sizeof(double));
    cov = rv__malloc((n ? n : 1) * sizeof(double)); /* scratch */
    double *cand = rv__malloc((n ? n : 1) * sizeof(double));
    rv__lp_brk *brk = rv__malloc(ne * sizeof(rv__lp_brk));
    if (!pen || !xlo || !cov || !cand || !brk) {
        rv__free(cand);
        rv__free(brk);
        st = rv__nomem("the partial LP relaxation");
        goto out;
    }
    /* the full cover, shrunk until it covers just R; its dual bounds R too */
    *value = ub_full * rv__lp_shrink(&lp, x, R, cov);
    double tau0 = 0;
    *lb = rv__lp_partial_bound(&lp, R, brk, &tau0);
    double c_lo = 0, cov_lo = 0; /* xlo = 0 covers nothing, costs nothing */
    double mmin = INFINITY;
    for (size_t e = 0; e < ne; e++)
        if ((double)r->mult[e] < mmin) mmin = (double)r->mult[e];
    double t_lo = 0, t_hi = 2 * ub_full / mmin + 1e-300;
    lp.pen = pen;
    int stale = 0;
    for (int it = 0; it < 16 && stale < 3; it++) {
        if (*value <= (1 + eps) * *lb) break;
        if (t_hi - t_lo <= 1e-9 * t_hi) break;
        if (deadline > 0 && rv__now() > deadline) {
            st = RV_E_TIMEOUT;
            break;
        }
        double before_value = *value, before_lb = *lb;
        /* first the price the full cover's dual suggests, then bisection */
        double t = it == 0 && tau0 > t_lo && tau0 < t_hi ? tau0 : 0.5 * (t_lo + t_hi);
        for (size_t e = 0; e < ne; e++) pen[e] = t * (double)r->mult[e];
        double ub_t, lb_t;
        st = rv__lp_mwu(&lp, eps, deadline, opt, &ub_t, &lb_t, work);
        if (st != RV_OK && st != RV_E_TIMEOUT) {
            rv__free(cand);
            rv__free(brk);
            goto out;
        }
        if (lb_t - t * (M - R) > *lb) *lb = lb_t - t * (M - R);
        double g = rv__lp_partial_bound(&lp, R, brk, NULL);
        if (g > *lb) *lb = g;
        /* the sets part of the prize-collecting answer, and what it covers */
        double c_t = 0;
        for (size_t s = 0; s < n; s++) c_t += r->costs[s] * lp.best_x[s];
        double cov_t = rv__lp_covered(&lp, lp.best_x);
        if (cov_t >= R) {
            memcpy(cand, lp.best_x, n * sizeof(double));
            double c = c_t * rv__lp_shrink(&lp, cand, R, cov);
            if (c < *value) {
                *value = c;
                memcpy(x, cand, n * sizeof(double));
            }
            /* mix with the best answer below R (covers >= R by concavity) */
            double th = (cov_t - R) / (cov_t - cov_lo);
            for (size_t s = 0; s < n; s++) cand[s] = th * xlo[s] + (1 - th) * lp.best_x[s];
            c = (th * c_lo + (1 - th) * c_t) * rv__lp_shrink(&lp, cand, R, cov);
            if (c < *value) {
                *value = c;
                memcpy(x, cand, n * sizeof(double));
            }
            t_hi = t;
        } else {
            if (cov_t > cov_lo) { /* a better point below R to mix with */
                memcpy(xlo, lp.best_x, n * sizeof(double));
                c_lo = c_t;
                cov_lo = cov_t;
            }
            t_lo = t;
        }
        stale = *value < before_value || *lb > before_lb ? 0 : stale + 1;
        if (st == RV_E_TIMEOUT) break;
    }
    rv__free(cand);
    rv__free(brk);
out:
    rv__free(pen);
    rv__free(xlo);
    rv__free(cov);
    rv__lp_free(&lp);
    if (*lb > *value) *lb = *value; /* rounding in the last digits */
    return st;
}

/* ------------------------------------------------------------ rounding */

/* Keep the cheaper of x (cost *cx) and the candidate y; ties keep x. */
static void rv__keep_cheaper(const rv__reduced *r, uint8_t *x, double *cx, const uint8_t *y) {
    double cy = rv__selection_cost(r->costs, r->n_sets, y);
    if (cy < *cx - 1e-9 * (*cx > 1 ? *cx : 1)) {
        memcpy(x, y, r->n_sets);
        *cx = cy;
    }
}

/* Round the fractional xf to a cover of `required` into best (0/1 per set):
** threshold rounding at 1/f (f: the most sets covering one element), the
** sets by decreasing value, and `rounds` randomised roundings (each set
** with probability min(1, xf * ln(n_el + 1)), seeded); each candidate gets a
** greedy repair and loses its redundant sets, and the cheapest goes through
** the 1-opt local search. */
static rv_status rv__lp_round(const rv__reduced *r, uint64_t required, const double *xf,
                              const rv_cover_options *opt, double deadline, uint8_t *best) {
    size_t n = r->n_sets;
    uint8_t *y = rv__malloc(n ? n : 1);
    uint32_t *cnt = rv__calloc(r->n_el ? r->n_el : 1, sizeof(uint32_t));
    uint32_t *order = rv__malloc((n ? n : 1) * sizeof(uint32_t));
    rv_status st = RV_OK;
    if (!y || !cnt || !order) {
        st = rv__nomem("LP rounding");
        goto out;
    }
    uint64_t cov;
    /* threshold 1/f */
    size_t f = 1;
    for (size_t e = 0; e < r->n_el; e++) {
        size_t c = 0;
        for (size_t w = 0; w < r->sig_words; w++) c += rv__popcount64(r->sig[e * r->sig_words + w]);
        if (c > f) f = c;
    }
    for (size_t s = 0; s < n; s++) best[s] = xf[s] >= (1.0 - 1e-9) / (double)f;
    cov = rv__reduced_counts(r, best, cnt);
    if (rv__reduced_repair(r, required, best, cnt, &cov) != 0) {
        st = rv__error(RV_E_INTERNAL, "LP rounding could not reach the required coverage");
        goto out;
    }
    double cbest = rv__selection_cost(r->costs, n, best);
    /* by decreasing value (ties: lower index) */
    for (size_t s = 0; s < n; s++) order[s] = (uint32_t)s;
    for (size_t i = 1; i < n; i++) {
        uint32_t v = order[i];
        size_t j = i;
        while (j > 0 && (xf[order[j - 1]] < xf[v])) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = v;
    }
    memset(y, 0, n);
    memset(cnt, 0, (r->n_el ? r->n_el : 1) * sizeof(uint32_t));
    cov = 0;
    for (size_t i = 0; i < n && cov < required; i++) {
        y[order[i]] = 1;
        cov += (uint64_t)rv__reduced_flip(r, order[i], 1, cnt);
    }
    if (rv__reduced_repair(r, required, y, cnt, &cov) == 0) rv__keep_cheaper(r, best, &cbest, y);
    /* randomised */
    rv_rng rng;
    rv_rng_seed(&rng, opt->seed ^ 0x3c6ef372fe94f82bULL);
    uint32_t rounds = opt->lp_rounds ? opt->lp_rounds : 16;
    double scale = log((double)r->n_el + 1.0);
    if (scale < 1) scale = 1;
    for (uint32_t k = 0; k < rounds; k++) {
        if (deadline > 0 && rv__now() > deadline) break;
        for (size_t s = 0; s < n; s++) {
            double pr = xf[s] * scale;
            y[s] = (uint8_t)(rv_rng_uniform(&rng) < pr);
        }
        cov = rv__reduced_counts(r, y, cnt);
        if (rv__reduced_repair(r, required, y, cnt, &cov) == 0)
            rv__keep_cheaper(r, best, &cbest, y);
    }
    cov = rv__reduced_counts(r, best, cnt);
    if (rv__reduced_local_search(r, required, best, cnt, &cov, deadline, 1000) != 0)
        st = rv__nomem("local search");
out:
    rv__free(y);
    rv__free(cnt);
    rv__free(order);
    return st;
}

/* Strategy RV_COVER_LP on the reduced problem (no free sets).  Writes the
** rounded cover into best, the LP lower bound into *lb. */
rv_status rv__cover_lp(const rv__reduced *r, uint64_t required, const rv_cover_options *opt,
                       double deadline, uint8_t *best, double *lb, uint64_t *work) {
    size_t n = r->n_sets;
    double eps = opt->lp_eps > 0 ? opt->lp_eps : RV_COVER_LP_EPS;
    double *xf = rv__malloc((n ? n : 1) * sizeof(double));
    if (!xf) return rv__nomem("the fractional cover");
    double value;
    rv_status st = rv__lp_reduced(r, required, eps, deadline, opt, xf, &value, lb, work);
    if (st == RV_OK || st == RV_E_TIMEOUT) {
        rv_status st2 = rv__lp_round(r, required, xf, opt, deadline, best);
        if (st2) st = st2;
    }
    rv__free(xf);
    return st == RV_E_TIMEOUT ? RV_OK : st;
}

/* ------------------------------------------------------------- public */

rv_status rv_cover_lp(const rv_cover *p, uint64_t n_required, double eps, double time_limit,
                      double *x, size_t capacity, rv_cover_lp_result *res) {
    if (res) memset(res, 0, sizeof *res);
    RV__NOT_NULL(p, "p (the problem)");
    RV__NOT_NULL(res, "res");
    if (!x && p->n_sets) return rv__null("x");
    RV__CHECK_SIZE(capacity, sizeof *x, "capacity");
    if (capacity < p->n_sets)
        return rv__error(RV_E_SHAPE, "capacity %zu < n_sets %zu", capacity, p->n_sets);
    if (!(eps > 0 && eps <= 1))
        return rv__error(RV_E_INVALID_ARG, "eps = %g: must be in (0, 1]", eps);
    if (isnan(time_limit)) return rv__error(RV_E_INVALID_ARG, "time_limit is NaN");
    uint64_t required = n_required == RV_COVER_ALL ? p->n_coverable : n_required;
    if (required > p->n_coverable)
        return rv__error(RV_E_INFEASIBLE,
                         "%llu elements must be covered but only %llu of %llu are "
                         "covered by any set",
                         (unsigned long long)required, (unsigned long long)p->n_coverable,
                         (unsigned long long)p->n_elements);
    double t0 = rv__now();
    double deadline = time_limit > 0 ? t0 + time_limit : 0;
    size_t n = p->n_sets;
    if (n) memset(x, 0, n * sizeof(double));
    rv_status st = RV_OK;
    if (required == 0) {
        res->converged = 1;
        return RV_OK;
    }

    /* free sets: fixed at 1, the relaxation solved on the rest */
    int any_free = 0;
    for (size_t s = 0; s < n && !any_free; s++) any_free = p->costs[s] == 0 && p->sizes[s] > 0;
    if (any_free) {
        uint8_t *is_free = rv__calloc(n, 1);
        uint32_t *paid = rv__malloc(n * sizeof(uint32_t));
        double *sub = rv__malloc(n * sizeof(double));
        rv_cover *q = NULL;
        size_t n_paid = 0;
        uint64_t free_cov = 0;
        if (!is_free || !paid || !sub) {
            st = rv__nomem("the free sets");
        } else {
            for (size_t s = 0; s < n; s++) is_free[s] = p->costs[s] == 0 && p->sizes[s] > 0;
            st = rv__cover_free_residual(p, is_free, &q, paid, &n_paid, &free_cov);
            if (!st) {
                uint64_t req = required > free_cov ? required - free_cov : 0;
                st = rv_cover_lp(q, req, eps, time_limit, sub, n_paid, res);
                if (st == RV_OK || st == RV_E_TIMEOUT) {
                    for (size_t s = 0; s < n; s++) x[s] = is_free[s] ? 1.0 : 0.0;
                    for (size_t k = 0; k < n_paid; k++) x[paid[k]] = sub[k];
                }
            }
        }
        rv_cover_free(q);
        rv__free(is_free);
        rv__free(paid);
        rv__free(sub);
        if (st != RV_OK && st != RV_E_TIMEOUT) { /* nothing half-written */
            memset(x, 0, n * sizeof(double));
            memset(res, 0, sizeof *res);
            return st;
        }
        res->seconds = rv__now() - t0;
        return st;
    }

    rv__reduced r;
    if ((st = rv__reduce(p, &r))) return st;
    uint64_t work = 0;
    double value = 0, lb = 0;
    st = rv__lp_reduced(&r, required, eps, deadline, NULL, x, &value, &lb, &work);
    rv__reduced_free(&r);
    if (st != RV_OK && st != RV_E_TIMEOUT) {
        memset(x, 0, n * sizeof(double)); /* n > 0: required > 0 needs a set */
        return st;
    }
    res->value = value;
    res->lower_bound = lb;
    res->work = work;
    res->converged = value <= (1 + eps) * lb || value == 0;
    res->seconds = rv__now() - t0;
    if (st == RV_E_TIMEOUT)
        return rv__error(RV_E_TIMEOUT,
                         "the LP relaxation reached its time limit of %g s with the bounds "
                         "%g <= optimum <= %g not yet within 1 + %g",
                         time_limit, lb, value, eps);
    return RV_OK;
}
