/*
** Exact weighted set cover by depth-first branch and bound on the reduced
** problem.
**
** Full cover (every coverable element): branch on the uncovered element
** with the fewest available sets; child k takes the k-th of those sets and
** excludes the ones tried before it, so no selection is enumerated twice.
** Partial cover (epsilon > 0): branch on the best-ratio undecided set,
** include first, then exclude.
**
** Lower bounds (both valid for any completion):
**  - share bound: charge each uncovered element the cheapest share
**    c_s / |s ∩ U| over the sets still available; any cover pays at least
**    the sum of those shares (each chosen set pays c_s, which it splits over
**    its uncovered elements).
**  - knapsack bound: to cover R more weight, a fractional selection of the
**    available sets in order of cost per weight costs at most as much as any
**    real one.
** The incumbent starts as the greedy cover, so a timeout always has an
** answer; a node is pruned when it cannot be strictly cheaper.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cover_internal.h"

typedef struct rv__bb {
    const rv__reduced *r;
    uint64_t required;
    double deadline;
    const rv_cover_options *opt;
    int full; /* full cover: element branching */
    double best_cost;
    uint8_t *best;     /* n_sets */
    uint8_t *x;        /* current selection */
    uint8_t *excluded; /* sets ruled out on this path */
    uint32_t *cnt;     /* cover counts over reduced elements */
    uint64_t covered;
    double cost;
    uint64_t nodes;
    rv_status stop; /* RV_E_TIMEOUT / RV_E_INTERRUPTED once stopping */
    /* scratch for the bounds */
    double *ratio;
    uint64_t *gain;
    double *key;
    uint32_t *order;
    uint64_t *assigned;
} rv__bb;

/* Sort idx[0..n) by keys ascending, ties by index.  Insertion sort: n is the
** number of sets, small, and this keeps the code reentrant. */
static void rv__sort_by(uint32_t *idx, size_t n, const double *keys) {
    for (size_t i = 1; i < n; i++) {
        uint32_t v = idx[i];
        size_t j = i;
        while (j > 0) {
            uint32_t u = idx[j - 1];
            if (keys[u] < keys[v] || (keys[u] == keys[v] && u < v)) break;
            idx[j] = u;
            j--;
        }
        idx[j] = v;
    }
}

/* Multiplicity s would newly cover. */
static uint64_t rv__bb_gain(const rv__bb *b, size_t s) {
    const rv__reduced *r = b->r;
    uint64_t g = 0;
    for (uint64_t k = r->set_off[s]; k < r->set_off[s + 1]; k++)
        if (b->cnt[r->set_el[k]] == 0) g += r->mult[r->set_el[k]];
    return g;
}

/* Lower bound on the cost still needed; INFINITY if infeasible. */
static double rv__bb_bound(rv__bb *b) {
    const rv__reduced *r = b->r;
    uint64_t need = b->required > b->covered ? b->required - b->covered : 0;
    if (need == 0) return 0;
    size_t m = 0;
    uint64_t avail = 0;
    for (size_t s = 0; s < r->n_sets; s++) {
        if (b->x[s] || b->excluded[s]) continue;
        uint64_t g = rv__bb_gain(b, s);
        if (!g) continue;
        b->ratio[s] = r->costs[s] / (double)g;
        b->gain[s] = g;
        b->order[m++] = (uint32_t)s;
        avail += g;
    }
    if (avail < need) return INFINITY;
    rv__sort_by(b->order, m, b->ratio);
    /* knapsack bound */
    double knap = 0;
    uint64_t left = need;
    for (size_t i = 0; i < m && left; i++) {
        size_t s = b->order[i];
        uint64_t g = b->gain[s];
        uint64_t take = g < left ? g : left;
        knap += b->ratio[s] * (double)take;
        left -= take;
    }
    if (!b->full) return knap;
    /* share bound: walk sets by ratio, charging each uncovered element the
    ** first (cheapest) ratio that reaches it. */
    memset(b->assigned, 0, r->el_words * sizeof(uint64_t));
    double share = 0;
    for (size_t i = 0; i < m; i++) {
        size_t s = b->order[i];
        for (uint64_t k = r->set_off[s]; k < r->set_off[s + 1]; k++) {
            uint32_t e = r->set_el[k];
            if (b->cnt[e]) continue;
            uint64_t bit = (uint64_t)1 << (e & 63);
            if (b->assigned[e >> 6] & bit) continue;
            b->assigned[e >> 6] |= bit;
            share += b->ratio[s] * (double)r->mult[e];
        }
    }
    return share > knap ? share : knap;
}

static int rv__bb_should_stop(rv__bb *b) {
    if (b->stop) return 1;
    if ((b->nodes & 255) == 0) {
        if (b->deadline > 0 && rv__now() > b->deadline) {
            b->stop = RV_E_TIMEOUT;
            return 1;
        }
        if (b->opt->progress && b->opt->progress(b->opt->progress_ctx, b->nodes, 0)) {
            b->stop = RV_E_INTERRUPTED;
            return 1;
        }
    }
    return 0;
}

static int rv__improves(double cost, double best) {
    return cost < best - 1e-9 * (best > 1 ? best : 1);
}

static void rv__bb_take(rv__bb *b, size_t s, int add) {
    b->x[s] = (uint8_t)add;
    b->covered += (uint64_t)rv__reduced_flip(b->r, s, add, b->cnt);
    b->cost += add ? b->r->costs[s] : -b->r->costs[s];
}

static void rv__bb_search(rv__bb *b) {
    const rv__reduced *r = b->r;
    b->nodes++;
    if (rv__bb_should_stop(b)) return;
    if (b->covered >= b->required) {
        if (rv__improves(b->cost, b->best_cost)) {
            b->best_cost = b->cost;
            memcpy(b->best, b->x, r->n_sets);
        }
        return;
    }
    double lb = rv__bb_bound(b);
    if (!isfinite(lb) || !rv__improves(b->cost + lb, b->best_cost)) return;

    if (b->full) {
        /* the uncovered element with the fewest available sets */
        long pick = -1;
        size_t fewest = SIZE_MAX;
        for (size_t e = 0; e < r->n_el && fewest > 1; e++) {
            if (b->cnt[e]) continue;
            const uint64_t *sg = r->sig + e * r->sig_words;
            size_t c = 0;
            for (size_t s = 0; s < r->n_sets; s++)
                if (((sg[s >> 6] >> (s & 63)) & 1) && !b->excluded[s]) c++;
            if (c < fewest) {
                fewest = c;
                pick = (long)e;
            }
        }
        if (pick < 0 || fewest == 0) return;
        const uint64_t *sg = r->sig + (size_t)pick * r->sig_words;
        /* candidate sets, cheapest per new weight first */
        uint32_t *cand = rv__malloc(fewest * sizeof(uint32_t));
        double *key = b->key;
        size_t nc = 0;
        if (!cand) {
            b->stop = rv__nomem("branch and bound candidates");
            return;
        }
        for (size_t s = 0; s < r->n_sets; s++)
            if (((sg[s >> 6] >> (s & 63)) & 1) && !b->excluded[s]) {
                key[s] = r->costs[s] / (double)rv__bb_gain(b, s);
                cand[nc++] = (uint32_t)s;
            }
        rv__sort_by(cand, nc, key);
        size_t k;
        for (k = 0; k < nc; k++) {
            size_t s = cand[k];
            rv__bb_take(b, s, 1);
            rv__bb_search(b);
            rv__bb_take(b, s, 0);
            b->excluded[s] = 1;
            if (b->stop) {
                k++;
                break;
            }
        }
        for (size_t j = 0; j < k && j < nc; j++) b->excluded[cand[j]] = 0;
        rv__free(cand);
        return;
    }
    /* partial cover: branch on the best-ratio undecided set */
    long pick = -1;
    double best_ratio = 0;
    for (size_t s = 0; s < r->n_sets; s++) {
        if (b->x[s] || b->excluded[s]) continue;
        uint64_t g = rv__bb_gain(b, s);
        if (!g) continue;
        double q = r->costs[s] / (double)g;
        if (pick < 0 || q < best_ratio) {
            pick = (long)s;
            best_ratio = q;
        }
    }
    if (pick < 0) return;
    rv__bb_take(b, (size_t)pick, 1);
    rv__bb_search(b);
    rv__bb_take(b, (size_t)pick, 0);
    if (b->stop) return;
    b->excluded[pick] = 1;
    rv__bb_search(b);
    b->excluded[pick] = 0;
}

rv_status rv__cover_exact(const rv__reduced *r, uint64_t required, const rv_cover_options *opt,
                          double deadline, uint8_t *best, uint64_t *work, int *optimal) {
    size_t n = r->n_sets;
    rv__bb b;
    memset(&b, 0, sizeof b);
    b.r = r;
    b.required = required;
    b.deadline = deadline;
    b.opt = opt;
    b.full = required >= r->total;
    b.best = best;
    b.x = rv__calloc(n ? n : 1, 1);
    b.excluded = rv__calloc(n ? n : 1, 1);
    b.cnt = rv__calloc(r->n_el ? r->n_el : 1, sizeof(uint32_t));
    b.ratio = rv__malloc((n ? n : 1) * sizeof(double));
    b.gain = rv__malloc((n ? n : 1) * sizeof(uint64_t));
    b.key = rv__malloc((n ? n : 1) * sizeof(double));
    b.order = rv__malloc((n ? n : 1) * sizeof(uint32_t));
    b.assigned = rv__malloc(r->el_words * sizeof(uint64_t));
    rv_status st = RV_OK;
    if (!b.x || !b.excluded || !b.cnt || !b.ratio || !b.gain || !b.key || !b.order || !b.assigned) {
        st = rv__nomem("branch and bound work arrays");
        goto done;
    }
    /* incumbent: the caller's start (greedy), already a cover */
    b.best_cost = rv__selection_cost(r->costs, n, best);
    rv__bb_search(&b);
    *work = b.nodes;
    *optimal = b.stop == RV_OK;
    st = b.stop;
    if (st == RV_E_TIMEOUT)
        rv__error(RV_E_TIMEOUT,
                  "exact search stopped at the time limit after %llu nodes; "
                  "the best cover found is not proven optimal",
                  (unsigned long long)b.nodes);
done:
    rv__free(b.x);
    rv__free(b.excluded);
    rv__free(b.cnt);
    rv__free(b.ratio);
    rv__free(b.gain);
    rv__free(b.key);
    rv__free(b.order);
    rv__free(b.assigned);
    return st;
}
