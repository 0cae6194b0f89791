/*
** The union of two ranked candidate lists (records.h rv_records_union),
** and the reciprocal rank fusion of their ranks (rv_records_rrf):
** every (position, entry) pair goes through a least-significant-digit
** radix sort on the position, 11 bits a pass (one pass for a table of up
** to 2,048 records, two up to 4 million), which keeps each position's
** entries in input order (list a's before list b's); one walk then writes
** each distinct position with its rank in either list.  O(n) with no
** branch that depends on the data in the sort: a binary search of each
** candidate in the other list mispredicts at nearly every step, and that
** was the largest cost of a hybrid search's fusion in NumPy.
*/
#include <stdlib.h>
#include <string.h>

#include "../internal.h"

#define RV__RADIX_BITS 11u
/* ranks and rrf_k up to this keep rrf_k + rank exact in int64 */
#define RV__RRF_MAX ((int64_t)1 << 62)
#define RV__RADIX   (1u << RV__RADIX_BITS)

rv_status rv_records_union(size_t n_records, size_t n_a, const int64_t *a, size_t n_b,
                           const int64_t *b, int64_t *u, int64_t *rank_a, int64_t *rank_b,
                           size_t *n_u) {
    if (n_u) *n_u = 0;
    RV__NOT_NULL(n_u, "n_u");
    if (n_a && !a) return rv__error(RV_E_INVALID_ARG, "a is NULL but n_a = %zu", n_a);
    if (n_b && !b) return rv__error(RV_E_INVALID_ARG, "b is NULL but n_b = %zu", n_b);
    RV__CHECK_SIZE2(n_a, n_b, 2 * sizeof(int64_t), "n_a", "n_b");
    size_t n = n_a + n_b;
    if (n == 0) return RV_OK;
    RV__NOT_NULL(u, "u");
    RV__NOT_NULL(rank_a, "rank_a");
    RV__NOT_NULL(rank_b, "rank_b");
    if (n >= UINT32_MAX) return rv__error(RV_E_RANGE, "n_a + n_b = %zu: at most 2^32 - 2", n);
    for (size_t i = 0; i < n; i++) {
        int64_t p = i < n_a ? a[i] : b[i - n_a];
        if (p < 0 || (uint64_t)p >= (uint64_t)n_records)
            return rv__error(
                RV_E_RANGE,
                "position %lld (list %s, rank %zu) out of range: the table holds %zu records",
                (long long)p, i < n_a ? "a" : "b", (i < n_a ? i : i - n_a) + 1, n_records);
    }
    /* keys and entries (entry e < n_a: a's rank e + 1, else b's rank
    ** e - n_a + 1), twice: the passes go back and forth */
    uint64_t *key = (uint64_t *)rv__malloc(2 * n * sizeof *key);
    uint32_t *ent = (uint32_t *)rv__malloc(2 * n * sizeof *ent);
    uint32_t *count = (uint32_t *)rv__malloc(RV__RADIX * sizeof *count);
    if (!key || !ent || !count) {
        rv__free(key);
        rv__free(ent);
        rv__free(count);
        return rv__nomem("the union's buffers");
    }
    uint64_t *k0 = key, *k1 = key + n;
    uint32_t *e0 = ent, *e1 = ent + n;
    for (size_t i = 0; i < n; i++) {
        k0[i] = (uint64_t)(i < n_a ? a[i] : b[i - n_a]);
        e0[i] = (uint32_t)i;
    }
    uint64_t top = (uint64_t)(n_records - 1);
    for (unsigned shift = 0; shift == 0 || (top >> shift) != 0; shift += RV__RADIX_BITS) {
        memset(count, 0, RV__RADIX * sizeof *count);
        for (size_t i = 0; i < n; i++) count[(k0[i] >> shift) & (RV__RADIX - 1)]++;
        uint32_t sum = 0;
        for (size_t d = 0; d < RV__RADIX; d++) {
            uint32_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) {
            uint32_t at = count[(k0[i] >> shift) & (RV__RADIX - 1)]++;
            k1[at] = k0[i];
            e1[at] = e0[i];
        }
        uint64_t *kt = k0;
        k0 = k1;
        k1 = kt;
        uint32_t *et = e0;
        e0 = e1;
        e1 = et;
        if (shift + RV__RADIX_BITS >= 64) break;
    }
    rv_status st = RV_OK;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t p = k0[i];
        uint32_t e = e0[i];
        if (m == 0 || (uint64_t)u[m - 1] != p) {
            u[m] = (int64_t)p;
            rank_a[m] = 0;
            rank_b[m] = 0;
            m++;
        }
        int64_t *r = e < n_a ? &rank_a[m - 1] : &rank_b[m - 1];
        if (*r) {
            st = rv__error(RV_E_INVALID_ARG,
                           "list %s holds position %llu twice (ranks %lld and %zu)",
                           e < n_a ? "a" : "b", (unsigned long long)p, (long long)*r,
                           (size_t)(e < n_a ? e : e - n_a) + 1);
            m = 0;
            break;
        }
        *r = (int64_t)(e < n_a ? e : e - n_a) + 1;
    }
    rv__free(key);
    rv__free(ent);
    rv__free(count);
    *n_u = m;
    return st;
}

rv_status rv_records_rrf(size_t n, const int64_t *rank_a, const int64_t *rank_b, int64_t rrf_k,
                         double *out) {
    RV__CHECK_SIZE(n, 2 * sizeof(int64_t) + sizeof(double), "n");
    if (n == 0) return RV_OK;
    RV__NOT_NULL(rank_a, "rank_a");
    RV__NOT_NULL(rank_b, "rank_b");
    RV__NOT_NULL(out, "out");
    if (rrf_k < 1 || rrf_k > RV__RRF_MAX)
        return rv__error(RV_E_INVALID_ARG, "rrf_k = %lld: must be in 1 .. 2^62", (long long)rrf_k);
    for (size_t i = 0; i < n; i++) {
        int64_t ra = rank_a[i], rb = rank_b[i];
        int bad_a = ra < 0 || ra > RV__RRF_MAX;
        if (bad_a || rb < 0 || rb > RV__RRF_MAX)
            return rv__error(RV_E_INVALID_ARG, "rank_%s[%zu] = %lld: ranks are in 0 .. 2^62",
                             bad_a ? "a" : "b", i, (long long)(bad_a ? ra : rb));
        double s = ra ? 1.0 / (double)(rrf_k + ra) : 0.0;
        if (rb) s += 1.0 / (double)(rrf_k + rb);
        out[i] = s;
    }
    return RV_OK;
}
