/*
** Value histograms of one column over the candidates, in O(n) time.
**
** Codes are arbitrary int32s.  A first pass finds the column's code range;
** when it fits in the scratch tables (cap >= 2n slots) the codes index the
** table directly, otherwise they are hashed (multiplicative hashing, linear
** probing, load <= 1/2).  The pass that compacts the touched slots also
** resets them, so the tables are clean for the next column and no O(cap)
** clearing is ever needed beyond the slots scanned.
**
** The order in which values are compacted depends only on the column's codes
** (slot order), so the floating-point sums downstream are the same whichever
** thread runs the column.
*/
#include <string.h>

#include "belief_internal.h"

rv_status rv__bscratch_init(rv__bscratch *s, size_t n) {
    memset(s, 0, sizeof *s);
    size_t cap = 64;
    unsigned lg = 6;
    while (cap < 2 * n) {
        cap <<= 1;
        lg++;
    }
    s->cap = cap;
    s->log2cap = lg;
    s->w = rv__calloc(cap, sizeof(double));
    s->cnt = rv__calloc(cap, sizeof(uint32_t));
    s->key = rv__malloc(cap * sizeof(int32_t));
    s->vals = rv__malloc((n ? n : 1) * sizeof(double));
    if (!s->w || !s->cnt || !s->key || !s->vals) {
        rv__bscratch_free(s);
        return rv__nomem("belief scratch tables");
    }
    return RV_OK;
}

void rv__bscratch_free(rv__bscratch *s) {
    rv__free(s->w);
    rv__free(s->cnt);
    rv__free(s->key);
    rv__free(s->vals);
    memset(s, 0, sizeof *s);
}

rv_status rv__check_weights(const double *w, size_t n, const char *what, double *total) {
    double t = 0.0;
    for (size_t i = 0; i < n; i++) {
        double x = w[i];
        if (!(x >= 0.0) || !isfinite(x))
            return rv__error(RV_E_INVALID_ARG,
                             "%s[%zu] = %g: weights must be finite and non-negative", what, i, x);
        t += x;
    }
    if (!isfinite(t)) return rv__error(RV_E_INVALID_ARG, "%s sums to infinity", what);
    *total = t;
    return RV_OK;
}

static inline uint32_t rv__hash32(int32_t code, unsigned log2cap) {
    return (uint32_t)(((uint32_t)code * 2654435761u) >> (32 - log2cap));
}

static inline int32_t rv__code_at(const int32_t *col, const uint64_t *rows, size_t i) {
    return rows ? col[rows[i]] : col[i];
}

static void rv__range(const int32_t *col, const uint64_t *rows, size_t n, int32_t *lo_out,
                      int32_t *hi_out) {
    int32_t lo = INT32_MAX, hi = INT32_MIN;
    if (rows) {
        for (size_t i = 0; i < n; i++) {
            int32_t c = col[rows[i]];
            lo = c < lo ? c : lo;
            hi = c > hi ? c : hi;
        }
    } else {
        for (size_t i = 0; i < n; i++) {
            int32_t c = col[i];
            lo = c < lo ? c : lo;
            hi = c > hi ? c : hi;
        }
    }
    *lo_out = lo;
    *hi_out = hi;
}

/* Dense counting: slot = code - lo.  Split by the presence of rows and of
** weights so the common loops stay branch-free. */
static void rv__dense_count(const int32_t *col, const uint64_t *rows, size_t n, const double *p,
                            int32_t lo, double *w, uint32_t *cnt) {
    if (rows && p) {
        for (size_t i = 0; i < n; i++) {
            uint32_t k = (uint32_t)((int64_t)col[rows[i]] - lo);
            w[k] += p[i];
            cnt[k]++;
        }
    } else if (rows) {
        for (size_t i = 0; i < n; i++) cnt[(uint32_t)((int64_t)col[rows[i]] - lo)]++;
    } else if (p) {
        for (size_t i = 0; i < n; i++) {
            uint32_t k = (uint32_t)((int64_t)col[i] - lo);
            w[k] += p[i];
            cnt[k]++;
        }
    } else {
        for (size_t i = 0; i < n; i++) cnt[(uint32_t)((int64_t)col[i] - lo)]++;
    }
}

/* Few distinct codes (the common case) make `w[k] += p` a chain of
** dependent read-modify-writes on a handful of slots.  Four interleaved
** partial histograms break the chain; they are merged in a fixed order, so
** the result still depends on nothing but the input. */
static void rv__dense_count4(const int32_t *col, const uint64_t *rows, size_t n, const double *p,
                             int32_t lo, size_t range, double *w, uint32_t *cnt) {
    double *w0 = w, *w1 = w + range, *w2 = w + 2 * range, *w3 = w + 3 * range;
    uint32_t *c0 = cnt, *c1 = cnt + range, *c2 = cnt + 2 * range, *c3 = cnt + 3 * range;
    size_t i = 0;
    if (rows) {
        for (; i + 4 <= n; i += 4) {
            uint32_t k0 = (uint32_t)((int64_t)col[rows[i]] - lo);
            uint32_t k1 = (uint32_t)((int64_t)col[rows[i + 1]] - lo);
            uint32_t k2 = (uint32_t)((int64_t)col[rows[i + 2]] - lo);
            uint32_t k3 = (uint32_t)((int64_t)col[rows[i + 3]] - lo);
            w0[k0] += p[i];
            w1[k1] += p[i + 1];
            w2[k2] += p[i + 2];
            w3[k3] += p[i + 3];
            c0[k0]++;
            c1[k1]++;
            c2[k2]++;
            c3[k3]++;
        }
        for (; i < n; i++) {
            uint32_t k = (uint32_t)((int64_t)col[rows[i]] - lo);
            w0[k] += p[i];
            c0[k]++;
        }
    } else {
        for (; i + 4 <= n; i += 4) {
            uint32_t k0 = (uint32_t)((int64_t)col[i] - lo);
            uint32_t k1 = (uint32_t)((int64_t)col[i + 1] - lo);
            uint32_t k2 = (uint32_t)((int64_t)col[i + 2] - lo);
            uint32_t k3 = (uint32_t)((int64_t)col[i + 3] - lo);
            w0[k0] += p[i];
            w1[k1] += p[i + 1];
            w2[k2] += p[i + 2];
            w3[k3] += p[i + 3];
            c0[k0]++;
            c1[k1]++;
            c2[k2]++;
            c3[k3]++;
        }
        for (; i < n; i++) {
            uint32_t k = (uint32_t)((int64_t)col[i] - lo);
            w0[k] += p[i];
            c0[k]++;
        }
    }
    for (size_t k = 0; k < range; k++) {
        w0[k] = (w0[k] + w1[k]) + (w2[k] + w3[k]);
        c0[k] = c0[k] + c1[k] + c2[k] + c3[k];
        w1[k] = w2[k] = w3[k] = 0.0;
        c1[k] = c2[k] = c3[k] = 0;
    }
}

/* The kernel itself is static: GCC gives the ifunc resolver of a non-static
** target_clones function default visibility, which would export it from
** librowvoi. */
RV__HOT_CLONES
static void rv__column_hist_kernel(const int32_t *col, const uint64_t *rows, size_t n,
                                   const double *p, rv__bscratch *s, rv__colstats *out) {
    out->k = 0;
    out->same_pairs = 0;
    if (n == 0) return;
    int32_t lo, hi;
    rv__range(col, rows, n, &lo, &hi);
    uint64_t range = (uint64_t)((int64_t)hi - (int64_t)lo) + 1u;
    double *w = s->w;
    uint32_t *cnt = s->cnt;
    uint64_t k = 0, same = 0;
    size_t scan;
    if (p && range <= 64 && 4 * range <= s->cap && n >= 64) {
        rv__dense_count4(col, rows, n, p, lo, (size_t)range, w, cnt);
        scan = (size_t)range;
    } else if (range <= s->cap) {
        rv__dense_count(col, rows, n, p, lo, w, cnt);
        scan = (size_t)range;
    } else {
        const uint32_t mask = (uint32_t)(s->cap - 1);
        int32_t *key = s->key;
        for (size_t i = 0; i < n; i++) {
            int32_t c = rv__code_at(col, rows, i);
            uint32_t h = rv__hash32(c, s->log2cap);
            while (cnt[h] && key[h] != c) h = (h + 1) & mask;
            key[h] = c;
            cnt[h]++;
            if (p) w[h] += p[i];
        }
        scan = s->cap;
    }
    for (size_t j = 0; j < scan; j++) {
        uint32_t c = cnt[j];
        if (!c) continue;
        if (p) s->vals[k] = w[j];
        k++;
        same += (uint64_t)c * (c - 1) / 2;
        w[j] = 0.0;
        cnt[j] = 0;
    }
    out->k = k;
    out->same_pairs = same;
}

void rv__column_hist(const int32_t *col, const uint64_t *rows, size_t n, const double *p,
                     rv__bscratch *s, rv__colstats *out) {
    rv__column_hist_kernel(col, rows, n, p, s, out);
}
