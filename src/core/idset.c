/*
** Id sets (core.h) and the id helpers every index shares: a radix sort of
** int64 values and the check that caller ids are distinct.
**
** Why sorted array + hash table: kernels need both O(1) membership (to test
** a candidate) and a cheap walk over the members (to translate a small set
** into an index's internal numbering and score only those entries).  The
** table holds 32-bit positions into the sorted array, so it costs 4 bytes
** per slot; with at most half the slots used that is <= 16 bytes per id all
** told.
*/
#include <string.h>

#include "../internal.h"

/* ---------------------------------------------------------------- sort */

/*
** LSD radix sort, one byte a pass, skipping the bytes every key shares (ids
** below 2^24 take 3 passes); insertion sort for short arrays.  KEY maps a
** value to an unsigned key of the same order (int64: flip the sign bit).
*/
#define RV__RADIX_SORT(NAME, T, U, BITS, KEY)                                                      \
    void NAME(T *a, size_t n, T *tmp) {                                                            \
        if (n < 2) return;                                                                         \
        if (n <= 32) {                                                                             \
            for (size_t i = 1; i < n; i++) {                                                       \
                T x = a[i];                                                                        \
                size_t j = i;                                                                      \
                while (j && a[j - 1] > x) {                                                        \
                    a[j] = a[j - 1];                                                               \
                    j--;                                                                           \
                }                                                                                  \
                a[j] = x;                                                                          \
            }                                                                                      \
            return;                                                                                \
        }                                                                                          \
        U all_or = 0, all_and = (U) ~(U)0;                                                         \
        for (size_t i = 0; i < n; i++) {                                                           \
            all_or |= KEY(a[i]);                                                                   \
            all_and &= KEY(a[i]);                                                                  \
        }                                                                                          \
        U differ = all_or ^ all_and;                                                               \
        T *src = a, *dst = tmp;                                                                    \
        for (unsigned shift = 0; shift < BITS; shift += 8) {                                       \
            if (!((differ >> shift) & 0xFF)) continue;                                             \
            size_t count[256];                                                                     \
            memset(count, 0, sizeof count);                                                        \
            for (size_t i = 0; i < n; i++) count[(KEY(src[i]) >> shift) & 0xFF]++;                 \
            size_t pos = 0;                                                                        \
            for (unsigned b = 0; b < 256; b++) {                                                   \
                size_t c = count[b];                                                               \
                count[b] = pos;                                                                    \
                pos += c;                                                                          \
            }                                                                                      \
            for (size_t i = 0; i < n; i++) dst[count[(KEY(src[i]) >> shift) & 0xFF]++] = src[i];   \
            T *t = src;                                                                            \
            src = dst;                                                                             \
            dst = t;                                                                               \
        }                                                                                          \
        if (src != a) memcpy(a, src, n * sizeof *a);                                               \
    }

#define RV__KEY_I64(x) ((uint64_t)(x) ^ ((uint64_t)1 << 63))
#define RV__KEY_U32(x) (x)

RV__RADIX_SORT(rv__sort_i64, int64_t, uint64_t, 64, RV__KEY_I64)
RV__RADIX_SORT(rv__sort_u32, uint32_t, uint32_t, 32, RV__KEY_U32)

rv_status rv__ids_check_distinct(const int64_t *ids, size_t n) {
    if (n < 2) return RV_OK;
    int64_t *sorted = rv__malloc(n * sizeof *sorted);
    int64_t *tmp = rv__malloc(n * sizeof *tmp);
    if (!sorted || !tmp) {
        rv__free(sorted);
        rv__free(tmp);
        return rv__nomem("a copy of the ids");
    }
    memcpy(sorted, ids, n * sizeof *sorted);
    rv__sort_i64(sorted, n, tmp);
    rv__free(tmp);
    for (size_t i = 1; i < n; i++)
        if (sorted[i] == sorted[i - 1]) {
            long long dup = (long long)sorted[i];
            rv__free(sorted);
            return rv__error(RV_E_INVALID_ARG, "id %lld appears more than once in ids", dup);
        }
    rv__free(sorted);
    return RV_OK;
}

/* -------------------------------------------------------------- id sets */

rv_status rv_idset_create(const int64_t *ids, size_t n, rv_idset **out) {
    RV__NOT_NULL(out, "out");
    *out = NULL;
    if (!ids && n) return rv__error(RV_E_INVALID_ARG, "ids is NULL but n = %zu", n);
    RV__CHECK_SIZE(n, sizeof *ids, "n");
    for (size_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] > RV_MAX_ID)
            return rv__error(RV_E_INVALID_ARG, "ids[%zu] = %lld: ids must be in 0 .. %lld", i,
                             (long long)ids[i], (long long)RV_MAX_ID);
    rv_idset *s = rv__calloc(1, sizeof *s);
    int64_t *sorted = rv__malloc((n ? n : 1) * sizeof *sorted);
    int64_t *tmp = rv__malloc((n ? n : 1) * sizeof *tmp);
    if (!s || !sorted || !tmp) {
        rv__free(s);
        rv__free(sorted);
        rv__free(tmp);
        return rv__nomem("an id set");
    }
    if (n) memcpy(sorted, ids, n * sizeof *sorted);
    rv__sort_i64(sorted, n, tmp);
    rv__free(tmp);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (u == 0 || sorted[u - 1] != sorted[i]) sorted[u++] = sorted[i];
    if (u > (size_t)UINT32_MAX - 1) {
        rv__free(s);
        rv__free(sorted);
        return rv__error(RV_E_RANGE, "%zu distinct ids: an id set holds at most %u", u,
                         UINT32_MAX - 1);
    }
    uint64_t cap = 16;
    while (cap < 2 * (uint64_t)u) cap *= 2;
    s->slots = rv__calloc((size_t)cap, sizeof *s->slots);
    if (!s->slots) {
        rv__free(s);
        rv__free(sorted);
        return rv__nomem("an id set's hash table");
    }
    s->n = u;
    s->ids = sorted;
    s->mask = cap - 1;
    for (size_t i = 0; i < u; i++) {
        uint64_t h = rv__mix64((uint64_t)sorted[i]) & s->mask;
        while (s->slots[h]) h = (h + 1) & s->mask;
        s->slots[h] = (uint32_t)(i + 1);
    }
    *out = s;
    return RV_OK;
}

void rv_idset_free(rv_idset *s) {
    if (!s) return;
    rv__free(s->ids);
    rv__free(s->slots);
    rv__free(s);
}

size_t rv_idset_size(const rv_idset *s) {
    return s ? s->n : 0;
}

int rv_idset_contains(const rv_idset *s, int64_t id) {
    return s && rv__idset_has(s, id);
}

rv_status rv_idset_ids(const rv_idset *s, int64_t *out, size_t capacity, size_t *n) {
    if (n) *n = 0;
    RV__NOT_NULL(s, "set");
    RV__NOT_NULL(n, "n");
    if (!out && capacity) return rv__null("out");
    RV__CHECK_SIZE(capacity, sizeof *out, "capacity");
    *n = s->n;
    size_t m = capacity < s->n ? capacity : s->n;
    if (m) memcpy(out, s->ids, m * sizeof *out);
    if (capacity < s->n)
        return rv__error(RV_E_SHAPE, "capacity %zu < %zu ids in the set", capacity, s->n);
    return RV_OK;
}
