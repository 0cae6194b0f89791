/*
** Element reduction shared by the exact and metaheuristic solvers, and the
** count-based repair operator.
**
** Two elements covered by exactly the same sets are interchangeable for
** every solver: a selection covers both or neither.  Merging them (keeping
** the count as a weight) loses nothing and, for key problems, turns
** C(n, 2) pairs into the few distinct separation patterns.
*/
#include <string.h>

#include "cover_internal.h"

static uint64_t rv__hash_words(const uint64_t *w, size_t n) {
    uint64_t h = 0x243f6a8885a308d3ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= w[i] + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
        h *= 0xff51afd7ed558ccdULL;
        h ^= h >> 33;
    }
    return h;
}

void rv__reduced_free(rv__reduced *r) {
    if (!r) return;
    rv__free(r->sig);
    rv__free(r->mult);
    rv__free(r->set_bits);
    rv__free(r->set_off);
    rv__free(r->set_el);
    rv__free(r->set_mult);
    memset(r, 0, sizeof *r);
}

rv_status rv__reduce(const rv_cover *p, rv__reduced *r) {
    memset(r, 0, sizeof *r);
    size_t n = p->n_sets, sw = RV_BITSET_WORDS(n ? n : 1);
    r->n_sets = n;
    r->sig_words = sw;
    r->costs = p->costs;
    uint64_t m = p->n_elements;

    /* Signatures are built a block of elements at a time, so the scratch
    ** stays small even for large pair universes. */
    size_t cap = 1024, table_cap = 2048;
    uint64_t *sig = rv__malloc(cap * sw * sizeof(uint64_t));
    uint64_t *mult = rv__malloc(cap * sizeof(uint64_t));
    int64_t *table = rv__malloc(table_cap * sizeof(int64_t));
    uint64_t *cur = rv__malloc(64 * sw * sizeof(uint64_t));
    if (!sig || !mult || !table || !cur) goto nomem;
    for (size_t i = 0; i < table_cap; i++) table[i] = -1;
    size_t n_el = 0;

    for (size_t w = 0; w < p->nwords; w++) {
        memset(cur, 0, 64 * sw * sizeof(uint64_t));
        uint64_t any = 0;
        for (size_t s = 0; s < n; s++) {
            uint64_t x = RV__SET(p, s)[w];
            any |= x;
            while (x) {
                unsigned b = rv__ctz64(x);
                cur[b * sw + (s >> 6)] |= (uint64_t)1 << (s & 63);
                x &= x - 1;
            }
        }
        while (any) {
            unsigned b = rv__ctz64(any);
            any &= any - 1;
            if ((uint64_t)(w << 6) + b >= m) break;
            const uint64_t *e = cur + (size_t)b * sw;
            uint64_t h = rv__hash_words(e, sw);
            size_t slot = (size_t)(h & (table_cap - 1));
            for (;;) {
                int64_t k = table[slot];
                if (k < 0) break;
                if (!memcmp(sig + (size_t)k * sw, e, sw * sizeof(uint64_t))) break;
                slot = (slot + 1) & (table_cap - 1);
            }
            if (table[slot] >= 0) {
                mult[table[slot]]++;
                continue;
            }
            if (n_el == cap) {
                size_t ncap = cap * 2;
                uint64_t *ns = rv__realloc(sig, ncap * sw * sizeof(uint64_t));
                if (!ns) goto nomem;
                sig = ns;
                uint64_t *nm = rv__realloc(mult, ncap * sizeof(uint64_t));
                if (!nm) goto nomem;
                mult = nm;
                cap = ncap;
            }
            memcpy(sig + n_el * sw, e, sw * sizeof(uint64_t));
            mult[n_el] = 1;
            table[slot] = (int64_t)n_el;
            n_el++;
            if (n_el * 2 > table_cap) { /* grow and rehash */
                size_t ncap = table_cap * 2;
                int64_t *nt = rv__malloc(ncap * sizeof(int64_t));
                if (!nt) goto nomem;
                for (size_t i = 0; i < ncap; i++) nt[i] = -1;
                for (size_t k = 0; k < n_el; k++) {
                    size_t sl = (size_t)(rv__hash_words(sig + k * sw, sw) & (ncap - 1));
                    while (nt[sl] >= 0) sl = (sl + 1) & (ncap - 1);
                    nt[sl] = (int64_t)k;
                }
                rv__free(table);
                table = nt;
                table_cap = ncap;
            }
        }
    }
    rv__free(table);
    table = NULL;
    rv__free(cur);
    cur = NULL;

    r->n_el = n_el;
    r->sig = sig;
    r->mult = mult;
    sig = NULL;
    mult = NULL;
    r->el_words = RV_BITSET_WORDS(n_el ? n_el : 1);
    r->set_bits = rv__calloc((n ? n : 1) * r->el_words, sizeof(uint64_t));
    r->set_off = rv__calloc(n + 1, sizeof(uint64_t));
    r->set_mult = rv__calloc(n ? n : 1, sizeof(uint64_t));
    if (!r->set_bits || !r->set_off || !r->set_mult) goto nomem;
    for (size_t e = 0; e < n_el; e++) {
        r->total += r->mult[e];
        const uint64_t *sg = r->sig + e * sw;
        for (size_t s = 0; s < n; s++)
            if ((sg[s >> 6] >> (s & 63)) & 1) {
                r->set_off[s + 1]++;
                r->set_bits[s * r->el_words + (e >> 6)] |= (uint64_t)1 << (e & 63);
                r->set_mult[s] += r->mult[e];
            }
    }
    for (size_t s = 0; s < n; s++) r->set_off[s + 1] += r->set_off[s];
    r->set_el = rv__malloc((r->set_off[n] ? r->set_off[n] : 1) * sizeof(uint32_t));
    if (!r->set_el) goto nomem;
    for (size_t s = 0; s < n; s++) {
        uint64_t k = r->set_off[s];
        const uint64_t *b = r->set_bits + s * r->el_words;
        for (size_t w = 0; w < r->el_words; w++) {
            uint64_t x = b[w];
            while (x) {
                r->set_el[k++] = (uint32_t)((w << 6) + rv__ctz64(x));
                x &= x - 1;
            }
        }
    }
    return RV_OK;
nomem:
    rv__free(sig);
    rv__free(mult);
    rv__free(table);
    rv__free(cur);
    rv__reduced_free(r);
    return rv__nomem("the reduced set cover problem");
}

double rv__selection_cost(const double *costs, size_t n, const uint8_t *x) {
    double c = 0;
    for (size_t s = 0; s < n; s++)
        if (x[s]) c += costs[s];
    return c;
}

uint64_t rv__reduced_counts(const rv__reduced *r, const uint8_t *x, uint32_t *cnt) {
    memset(cnt, 0, (r->n_el ? r->n_el : 1) * sizeof(uint32_t));
    uint64_t covered = 0;
    for (size_t s = 0; s < r->n_sets; s++) {
        if (!x[s]) continue;
        for (uint64_t k = r->set_off[s]; k < r->set_off[s + 1]; k++)
            if (cnt[r->set_el[k]]++ == 0) covered += r->mult[r->set_el[k]];
    }
    return covered;
}

int64_t rv__reduced_flip(const rv__reduced *r, size_t s, int add, uint32_t *cnt) {
    int64_t delta = 0;
    if (add) {
        for (uint64_t k = r->set_off[s]; k < r->set_off[s + 1]; k++)
            if (cnt[r->set_el[k]]++ == 0) delta += (int64_t)r->mult[r->set_el[k]];
    } else {
        for (uint64_t k = r->set_off[s]; k < r->set_off[s + 1]; k++)
            if (--cnt[r->set_el[k]] == 0) delta -= (int64_t)r->mult[r->set_el[k]];
    }
    return delta;
}

/* Multiplicity covered by s alone among the chosen sets. */
static uint64_t rv__unique_mult(const rv__reduced *r, size_t s, const uint32_t *cnt) {
    uint64_t u = 0;
    for (uint64_t k = r->set_off[s]; k < r->set_off[s + 1]; k++)
        if (cnt[r->set_el[k]] == 1) u += r->mult[r->set_el[k]];
    return u;
}

/* Multiplicity s would newly cover. */
static uint64_t rv__gain_mult(const rv__reduced *r, size_t s, const uint32_t *cnt) {
    uint64_t g = 0;
    for (uint64_t k = r->set_off[s]; k < r->set_off[s + 1]; k++)
        if (cnt[r->set_el[k]] == 0) g += r->mult[r->set_el[k]];
    return g;
}

/* Add sets (never `exclude`; pass SIZE_MAX for none) greedily until the
** target is met, then drop redundant sets, costliest first. */
static int rv__repair_excluding(const rv__reduced *r, uint64_t required, uint8_t *x, uint32_t *cnt,
                                uint64_t *covered, size_t exclude) {
    size_t n = r->n_sets;
    while (*covered < required) {
        long best = -1;
        uint64_t best_g = 0;
        for (size_t s = 0; s < n; s++) {
            if (x[s] || s == exclude) continue;
            uint64_t g = rv__gain_mult(r, s, cnt);
            if (g == 0) continue;
            if (best < 0 ||
                rv__ratio_better((double)g, r->costs[s], (double)best_g, r->costs[best])) {
                best = (long)s;
                best_g = g;
            }
        }
        if (best < 0) return -1;
        x[best] = 1;
        *covered += (uint64_t)rv__reduced_flip(r, (size_t)best, 1, cnt);
    }
    /* Drop redundant sets, most expensive first, until none can go. */
    for (;;) {
        long drop = -1;
        for (size_t s = n; s-- > 0;) {
            if (!x[s]) continue;
            uint64_t u = rv__unique_mult(r, s, cnt);
            if (*covered - u >= required && (drop < 0 || r->costs[s] > r->costs[drop]))
                drop = (long)s;
        }
        if (drop < 0) break;
        x[drop] = 0;
        *covered += (uint64_t)rv__reduced_flip(r, (size_t)drop, 0, cnt);
    }
    return 0;
}

int rv__reduced_repair(const rv__reduced *r, uint64_t required, uint8_t *x, uint32_t *cnt,
                       uint64_t *covered) {
    return rv__repair_excluding(r, required, x, cnt, covered, SIZE_MAX);
}

/*
** 1-opt local search: take a chosen set out, re-cover what it alone covered
** with the other sets (greedy, then redundancy removal) and keep the result
** when it is strictly cheaper.  Sets are tried costliest first (ties: the
** higher index); every improvement restarts the scan.  Deterministic; stops
** at a local optimum, after max_rounds improvements, or at the deadline.
*/
int rv__reduced_local_search(const rv__reduced *r, uint64_t required, uint8_t *x, uint32_t *cnt,
                             uint64_t *covered, double deadline, uint64_t max_rounds) {
    size_t n = r->n_sets, ne = r->n_el ? r->n_el : 1;
    uint8_t *y = rv__malloc(n ? n : 1);
    uint8_t *tried = rv__malloc(n ? n : 1);
    uint32_t *cy = rv__malloc(ne * sizeof(uint32_t));
    int rc = 0;
    if (!y || !tried || !cy) {
        rc = -2;
        goto out;
    }
    for (uint64_t rounds = 0; rounds < max_rounds; rounds++) {
        double cost_x = rv__selection_cost(r->costs, n, x);
        int improved = 0;
        memset(tried, 0, n);
        for (;;) {
            /* next candidate: costliest untried chosen set, ties by higher index */
            long pick = -1;
            for (size_t s = n; s-- > 0;)
                if (x[s] && !tried[s] && (pick < 0 || r->costs[s] > r->costs[pick])) pick = (long)s;
            if (pick < 0) break;
            tried[pick] = 1;
            if (deadline > 0 && rv__now() > deadline) goto out;
            memcpy(y, x, n);
            memcpy(cy, cnt, ne * sizeof(uint32_t));
            uint64_t cov = *covered;
            y[pick] = 0;
            cov += (uint64_t)rv__reduced_flip(r, (size_t)pick, 0, cy);
            if (rv__repair_excluding(r, required, y, cy, &cov, (size_t)pick) != 0) continue;
            double cost_y = rv__selection_cost(r->costs, n, y);
            if (cost_y < cost_x - 1e-9 * (cost_x > 1 ? cost_x : 1)) {
                memcpy(x, y, n);
                memcpy(cnt, cy, ne * sizeof(uint32_t));
                *covered = cov;
                improved = 1;
                break;
            }
        }
        if (!improved) break;
    }
out:
    rv__free(y);
    rv__free(tried);
    rv__free(cy);
    return rc;
}

rv_status rv_cover_distinct_elements(const rv_cover *p, uint64_t *signatures, uint64_t *mult,
                                     size_t capacity, size_t *n_distinct) {
    if (n_distinct) *n_distinct = 0;
    RV__NOT_NULL(p, "p (the problem)");
    RV__NOT_NULL(n_distinct, "n_distinct");
    RV__CHECK_SIZE2(capacity, RV_BITSET_WORDS(p->n_sets), sizeof *signatures, "capacity",
                    "sig_words");
    rv__reduced r;
    rv_status st = rv__reduce(p, &r);
    if (st) return st;
    *n_distinct = r.n_el;
    if (capacity < r.n_el) {
        rv__reduced_free(&r);
        return rv__error(RV_E_SHAPE, "capacity %zu < %zu distinct elements", capacity, *n_distinct);
    }
    if (r.n_el && (!signatures || !mult)) {
        rv__reduced_free(&r);
        return rv__null(signatures ? "mult" : "signatures");
    }
    if (r.n_el) {
        memcpy(signatures, r.sig, r.n_el * r.sig_words * sizeof(uint64_t));
        memcpy(mult, r.mult, r.n_el * sizeof(uint64_t));
    }
    rv__reduced_free(&r);
    return RV_OK;
}
