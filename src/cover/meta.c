/*
** Metaheuristics on the reduced problem: simulated annealing and a steady-
** state genetic algorithm.  Both draw every random number from one
** xoshiro256** stream seeded by the caller, and never look at the clock
** unless a time limit was given, so a seed fixes the answer.
*/
#include <math.h>
#include <string.h>

#include "cover_internal.h"

/*
** Simulated annealing over 0/1 selections.  Energy = cost + lambda *
** uncovered multiplicity, lambda = the largest set cost, so leaving an
** element uncovered is never cheaper than buying a set for it.  A move flips
** one random set; worse moves pass with probability exp(-delta / T), T
** cooling geometrically from the mean set cost to 1/1000 of it.  The best
** feasible state seen is repaired (redundant sets dropped) at the end.
*/
rv_status rv__cover_sa(const rv__reduced *r, uint64_t required, const rv_cover_options *opt,
                       double deadline, uint8_t *best, uint64_t *work) {
    size_t n = r->n_sets;
    if (n == 0) return RV_OK;
    uint8_t *x = rv__malloc(n);
    uint32_t *cnt = rv__calloc(r->n_el ? r->n_el : 1, sizeof(uint32_t));
    if (!x || !cnt) {
        rv__free(x);
        rv__free(cnt);
        return rv__nomem("annealing work arrays");
    }
    memcpy(x, best, n); /* start from the caller's cover */
    uint64_t covered = rv__reduced_counts(r, x, cnt);
    double cost = rv__selection_cost(r->costs, n, x);
    double best_cost = cost;
    double lambda = 0, mean = 0;
    for (size_t s = 0; s < n; s++) {
        if (r->costs[s] > lambda) lambda = r->costs[s];
        mean += r->costs[s];
    }
    mean /= (double)n;
    uint64_t iters = opt->iterations ? opt->iterations : 2000 * (uint64_t)n;
    if (!opt->iterations && iters < 20000) iters = 20000;
    double t0 = mean, t1 = mean * 1e-3;
    double alpha = pow(t1 / t0, 1.0 / (double)iters);
    double temp = t0;
    rv_rng rng;
    rv_rng_seed(&rng, opt->seed);
    rv_status st = RV_OK;
    uint64_t it;
    for (it = 0; it < iters; it++, temp *= alpha) {
        if ((it & 1023) == 0) {
            if (deadline > 0 && rv__now() > deadline) break;
            if (opt->progress && opt->progress(opt->progress_ctx, it, iters)) {
                st = rv__error(RV_E_INTERRUPTED, "simulated annealing interrupted");
                break;
            }
        }
        size_t s = (size_t)rv_rng_below(&rng, n);
        int add = !x[s];
        int64_t dcov = rv__reduced_flip(r, s, add, cnt);
        double dcost = add ? r->costs[s] : -r->costs[s];
        uint64_t ncov = (uint64_t)((int64_t)covered + dcov);
        double short_old = covered < required ? (double)(required - covered) : 0;
        double short_new = ncov < required ? (double)(required - ncov) : 0;
        double delta = dcost + lambda * (short_new - short_old);
        /* The uniform draw happens on every move, accepted or not, so the
        ** stream position never depends on floating-point comparisons. */
        double u = rv_rng_uniform(&rng);
        if (delta <= 0 || u < exp(-delta / temp)) {
            x[s] = (uint8_t)add;
            covered = ncov;
            cost += dcost;
            if (covered >= required && cost < best_cost - 1e-12 * best_cost) {
                best_cost = cost;
                memcpy(best, x, n);
            }
        } else {
            rv__reduced_flip(r, s, !add, cnt); /* undo */
        }
    }
    *work = it;
    if (st == RV_OK) {
        uint64_t cov = rv__reduced_counts(r, best, cnt);
        if (rv__reduced_repair(r, required, best, cnt, &cov) != 0)
            st = rv__error(RV_E_INTERNAL, "annealing lost feasibility");
    }
    rv__free(x);
    rv__free(cnt);
    return st;
}

/* Is selection a identical to b? */
static int rv__same(const uint8_t *a, const uint8_t *b, size_t n) {
    return memcmp(a, b, n) == 0;
}

/*
** Steady-state genetic algorithm (Beasley & Chu 1996, simplified): every
** individual is kept a repaired, non-redundant cover.  Each generation makes
** one child per population slot by binary-tournament parents, uniform
** crossover, and a mutation of about one set; the child replaces the worst
** individual when it is cheaper and not a duplicate.
*/
rv_status rv__cover_ga(const rv__reduced *r, uint64_t required, const rv_cover_options *opt,
                       double deadline, const uint8_t *const *seeds, size_t n_seeds, uint8_t *best,
                       uint64_t *work) {
    size_t n = r->n_sets;
    if (n == 0) return RV_OK;
    size_t pop = opt->population ? opt->population : 40;
    if (pop < 2) pop = 2;
    uint32_t gens = opt->generations ? opt->generations : 300;
    uint8_t *P = rv__malloc(pop * n);
    double *fit = rv__malloc(pop * sizeof(double));
    uint8_t *child = rv__malloc(n);
    uint32_t *cnt = rv__calloc(r->n_el ? r->n_el : 1, sizeof(uint32_t));
    if (!P || !fit || !child || !cnt) {
        rv__free(P);
        rv__free(fit);
        rv__free(child);
        rv__free(cnt);
        return rv__nomem("genetic algorithm population");
    }
    rv_rng rng;
    rv_rng_seed(&rng, opt->seed ^ 0x6a09e667f3bcc909ULL);
    rv_status st = RV_OK;
    uint64_t evals = 0;
    /* initial population: the seeds, then random selections repaired */
    for (size_t i = 0; i < pop; i++) {
        uint8_t *ind = P + i * n;
        if (i < n_seeds) {
            memcpy(ind, seeds[i], n);
        } else {
            for (size_t s = 0; s < n; s++) ind[s] = (uint8_t)(rv_rng_uniform(&rng) < 0.3);
        }
        uint64_t cov = rv__reduced_counts(r, ind, cnt);
        if (rv__reduced_repair(r, required, ind, cnt, &cov) != 0) {
            st = rv__error(RV_E_INTERNAL, "genetic algorithm lost feasibility");
            goto done;
        }
        fit[i] = rv__selection_cost(r->costs, n, ind);
        evals++;
    }
    for (uint32_t g = 0; g < gens && st == RV_OK; g++) {
        if (deadline > 0 && rv__now() > deadline) break;
        if (opt->progress && opt->progress(opt->progress_ctx, g, gens)) {
            st = rv__error(RV_E_INTERRUPTED, "genetic algorithm interrupted");
            break;
        }
        for (size_t c = 0; c < pop; c++) {
            size_t a1 = (size_t)rv_rng_below(&rng, pop), a2 = (size_t)rv_rng_below(&rng, pop);
            size_t b1 = (size_t)rv_rng_below(&rng, pop), b2 = (size_t)rv_rng_below(&rng, pop);
            size_t pa = fit[a1] <= fit[a2] ? a1 : a2;
            size_t pb = fit[b1] <= fit[b2] ? b1 : b2;
            for (size_t s = 0; s < n; s++) {
                uint64_t bit = rv_rng_next(&rng) & 1;
                child[s] = bit ? P[pa * n + s] : P[pb * n + s];
            }
            size_t flips = 1 + (size_t)rv_rng_below(&rng, 2);
            for (size_t k = 0; k < flips; k++) {
                size_t s = (size_t)rv_rng_below(&rng, n);
                child[s] ^= 1;
            }
            uint64_t cov = rv__reduced_counts(r, child, cnt);
            if (rv__reduced_repair(r, required, child, cnt, &cov) != 0) {
                st = rv__error(RV_E_INTERNAL, "genetic algorithm lost feasibility");
                break;
            }
            evals++;
            double f = rv__selection_cost(r->costs, n, child);
            size_t worst = 0;
            int dup = 0;
            for (size_t i = 0; i < pop; i++) {
                if (fit[i] > fit[worst]) worst = i;
                if (!dup && rv__same(P + i * n, child, n)) dup = 1;
            }
            if (!dup && f < fit[worst]) {
                memcpy(P + worst * n, child, n);
                fit[worst] = f;
            }
        }
    }
    if (st == RV_OK) {
        size_t bi = 0;
        for (size_t i = 1; i < pop; i++)
            if (fit[i] < fit[bi]) bi = i;
        memcpy(best, P + bi * n, n);
    }
done:
    *work = evals;
    rv__free(P);
    rv__free(fit);
    rv__free(child);
    rv__free(cnt);
    return st;
}
