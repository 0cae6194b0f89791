/*
** The blend evidence of a hybrid search's records (records.h
** rv_records_blend): each record's cosine and BM25 score come from the two
** ranked lists by rank, and those a list lacks are asked of its index in
** one call each (rv_flat_rescore, rv_bm25_search restricted to them); the
** answers, best first, go back to their records through an open-addressing
** table of the asked ids.  Then one formula per record, in the order of
** operations NumPy takes for the same expression (this file is compiled
** without fused multiply-add), so the values are bit for bit those of the
** corpus's reference in Python.
*/
#include <math.h>
#include <string.h>

#include "../internal.h"

/* An open-addressing table of distinct ids -> their slot in the records,
** at most half full. */
typedef struct rv__slots {
    int64_t *key; /* -1: empty */
    uint32_t *at;
    size_t mask;
} rv__slots;

static size_t rv__slot_of(const rv__slots *t, int64_t id) {
    size_t h = (size_t)rv__mix64((uint64_t)id) & t->mask;
    while (t->key[h] != id && t->key[h] != -1) h = (h + 1) & t->mask;
    return h;
}

/* Ask one side's index for the records it lacks (need[0 .. m), at[0 .. m)
** their slots in out) and write the scores it finds into out: the ids
** come back best first, so each goes to its record through the table.
** Records the index does not return keep their 0. */
static rv_status rv__fill(rv__slots *t, size_t m, const int64_t *need, const uint32_t *at,
                          const int64_t *found, const float *sc, size_t n_found, double *out,
                          const char *side) {
    for (size_t j = 0; j < m; j++) {
        size_t h = rv__slot_of(t, need[j]);
        if (t->key[h] == need[j])
            return rv__error(RV_E_INVALID_ARG, "record id %lld is asked twice (%s side)",
                             (long long)need[j], side);
        t->key[h] = need[j];
        t->at[h] = at[j];
    }
    for (size_t j = 0; j < n_found; j++) {
        size_t h = rv__slot_of(t, found[j]);
        if (t->key[h] == found[j]) out[t->at[h]] = (double)sc[j];
    }
    for (size_t h = 0; h <= t->mask; h++) t->key[h] = -1; /* empty again (O(m): cap < 4 m) */
    return RV_OK;
}

void rv_records_blend_params_init(rv_records_blend_params *p) {
    if (!p) return;
    memset(p, 0, sizeof *p);
    p->alpha = 0.5;
    p->sat_k = 1.0;
    p->max_a = INFINITY;
    p->max_b = INFINITY;
}

/* alpha * cos + (1 - alpha) * b / (b + sat_k), b = max(bm, 0) (NaN stays),
** each operation rounded as NumPy rounds the same expression. */
static double rv__blend1(const rv_records_blend_params *p, double cos, double bm) {
    double b = bm < 0.0 ? 0.0 : bm;
    double lhs = p->alpha * cos;
    double rhs = (1.0 - p->alpha) * b / (b + p->sat_k);
    return lhs + rhs;
}

static rv_status rv__check_side(size_t n, const int64_t *rank, size_t n_list, const double *scores,
                                const char *name) {
    if (n_list && !scores)
        return rv__error(RV_E_INVALID_ARG, "scores_%s is NULL but n_%s = %zu", name, name, n_list);
    for (size_t i = 0; i < n; i++)
        if (rank[i] < 0 || (uint64_t)rank[i] > (uint64_t)n_list)
            return rv__error(RV_E_INVALID_ARG, "rank_%s[%zu] = %lld: ranks are in 0 .. n_%s = %zu",
                             name, i, (long long)rank[i], name, n_list);
    return RV_OK;
}

rv_status rv_records_blend(const rv_records_blend_params *p, size_t n, const int64_t *ids,
                           const int64_t *rank_a, const int64_t *rank_b, size_t n_a,
                           const double *scores_a, size_t n_b, const double *scores_b,
                           double *out) {
    RV__NOT_NULL(p, "params");
    if (!(p->alpha >= 0.0 && p->alpha <= 1.0))
        return rv__error(RV_E_INVALID_ARG, "alpha = %g: must be in [0, 1]", p->alpha);
    if (!(p->sat_k > 0.0 && p->sat_k < INFINITY))
        return rv__error(RV_E_INVALID_ARG, "sat_k = %g: must be finite and > 0", p->sat_k);
    if (p->dense && !p->query_vector)
        return rv__error(RV_E_INVALID_ARG, "query_vector is NULL but dense is not");
    if (p->lexical && !p->query && p->query_len)
        return rv__error(RV_E_INVALID_ARG, "query is NULL but query_len = %zu", p->query_len);
    /* (the scratch: 41 bytes a record, and a table of fewer than 4 n slots
    ** of 12 bytes) */
    RV__CHECK_SIZE(n, 96, "n");
    RV__CHECK_SIZE(n_a, sizeof(double), "n_a");
    RV__CHECK_SIZE(n_b, sizeof(double), "n_b");
    if (n == 0) return RV_OK;
    RV__NOT_NULL(ids, "ids");
    RV__NOT_NULL(rank_a, "rank_a");
    RV__NOT_NULL(rank_b, "rank_b");
    RV__NOT_NULL(out, "out");
    rv_status st = rv__check_side(n, rank_a, n_a, scores_a, "a");
    if (st == RV_OK) st = rv__check_side(n, rank_b, n_b, scores_b, "b");
    if (st != RV_OK) return st;
    if (n >= UINT32_MAX) return rv__error(RV_E_RANGE, "n = %zu: at most 2^32 - 2", n);

    /* what each index can be asked: the flat index only with a query
    ** vector not all zero (a zero one scores every record 0, as no ask) */
    int can_a = p->dense &&
                rv_any_nonzero(p->query_vector, RV_REAL_F32, rv_flat_dim(p->dense), sizeof(float));
    int can_b = p->lexical != NULL;
    int prune = p->head > 0 && p->head < n;
    size_t cap = 1; /* the table's slots: a power of two >= 2 n */
    while (cap < 2 * n) cap <<= 1;
    /* one block: the BM25 scores (the cosines are built in out), the exact
    ** values known from the lists (pruning), the records' skip marks, then
    ** for the asked records their ids, the index's answer (ids and
    ** scores), their slots in out and the table */
    char *block = rv__malloc(
        n * (2 * sizeof(double) + 2 * sizeof(int64_t) + sizeof(uint32_t) + sizeof(float) + 1) +
        cap * (sizeof(int64_t) + sizeof(uint32_t)));
    if (!block) return rv__nomem("the blend's scratch");
    double *cos = out, *bm = (double *)(void *)block, *kv = bm + n;
    int64_t *need = (int64_t *)(void *)(kv + n), *found = need + n;
    rv__slots t = {found + n, NULL, cap - 1};
    uint32_t *at = (uint32_t *)(void *)(t.key + cap);
    t.at = at + n;
    float *sc = (float *)(void *)(t.at + cap);
    unsigned char *skip = (unsigned char *)(sc + n);
    for (size_t h = 0; h < cap; h++) t.key[h] = -1; /* empty */
    for (size_t i = 0; i < n; i++) {
        cos[i] = rank_a[i] ? scores_a[rank_a[i] - 1] : 0.0;
        bm[i] = rank_b[i] ? scores_b[rank_b[i] - 1] : 0.0;
        skip[i] = 0;
    }
    if (prune) {
        /* T: the head-th best of lower bounds of the records' values --
        ** the value itself where the lists tell it (both sides listed, or
        ** a side no index can score: 0), alpha * cos where only the BM25
        ** score is missing (b >= 0 adds a term >= 0, and rounding keeps
        ** the sum >= its first term); each is at most its record's value,
        ** so T is at most the head-th best value.  A record whose value
        ** cannot reach T, even with each missing score at its bound, is
        ** not among the best head (ties included), and nobody asks for it.
        ** (The bound's rounding is not monotone to the last bit: the test
        ** keeps a margin of 1e-9 relative.) */
        size_t nk = 0;
        int nan = 0;
        for (size_t i = 0; i < n; i++) {
            int miss_a = !rank_a[i] && can_a, miss_b = !rank_b[i] && can_b;
            if (miss_a) continue;
            double v = miss_b ? p->alpha * cos[i] : rv__blend1(p, cos[i], bm[i]);
            nan |= v != v;
            kv[nk++] = v;
        }
        if (nk >= p->head && !nan) {
            double T = rv__kth_largest_f64(kv, nk, p->head);
            double floor = T - 1e-9 * (fabs(T) + 1.0);
            for (size_t i = 0; i < n; i++) {
                int miss_a = !rank_a[i] && can_a, miss_b = !rank_b[i] && can_b;
                if (!miss_a && !miss_b) continue;
                double ub = rv__blend1(p, miss_a ? p->max_a : cos[i], miss_b ? p->max_b : bm[i]);
                skip[i] = ub < floor; /* (NaN: kept) */
            }
        }
    }
    for (int side = 0; side < 2 && st == RV_OK; side++) {
        const int64_t *rank = side ? rank_b : rank_a;
        if (!(side ? can_b : can_a)) continue;
        size_t m = 0, nf = 0;
        for (size_t i = 0; i < n; i++)
            if (rank[i] == 0 && !skip[i]) {
                need[m] = ids[i];
                at[m++] = (uint32_t)i;
            }
        if (m == 0) continue;
        if (side == 0) {
            st = rv_flat_rescore(p->dense, 1, p->query_vector, m, need, m, p->n_threads, found, sc,
                                 &nf);
            if (st == RV_OK) st = rv__fill(&t, m, need, at, found, sc, nf, cos, "dense");
        } else {
            rv_idset *allowed = NULL;
            st = rv_idset_create(need, m, &allowed);
            if (st == RV_OK) {
                st = rv_bm25_search(p->lexical, p->query, p->query_len, m, 0, allowed, found, sc,
                                    &nf, NULL);
                rv_idset_free(allowed);
            }
            if (st == RV_OK) st = rv__fill(&t, m, need, at, found, sc, nf, bm, "lexical");
        }
    }
    if (st == RV_OK)
        for (size_t i = 0; i < n; i++) out[i] = skip[i] ? -INFINITY : rv__blend1(p, cos[i], bm[i]);
    rv__free(block);
    return st;
}
