/*
** Counting equal 64-bit value keys: rv_keys_count_values.
**
** This is the per-partition (and per-merge) kernel of key finding on tables
** split across machines: each piece counts its own keys, the counts are
** split into buckets by a fixed hash of the key, and the pieces of one bucket
** are merged by calling this again with their counts as weights.  Because a
** key's bucket depends on the key alone, every occurrence of a key meets the
** others in one bucket, so the merged counts are exact.
**
** Open addressing over a power-of-two table at load <= 1/2 (or, for keys in
** a range of at most about 4n, a table indexed by key - min), slots holding
** the index of the key's output entry, so one pass counts and a counting
** sort by bucket keeps first-appearance order inside each bucket.
*/
#include <string.h>

#include "cover_internal.h"

/* Mixing for the table slot and the bucket: the splitmix64 finaliser of the
** key under two different offsets (the bucket hash must not correlate with
** the slot, or a bucket's keys would crowd into a few slots when merged). */
#define RV__SLOT_SALT   0x9e3779b97f4a7c15ULL
#define RV__BUCKET_SALT 0xd1b54a32d192ed03ULL

static uint32_t rv__value_bucket(uint64_t key, uint32_t n_buckets) {
    if (n_buckets <= 1) return 0;
    uint64_t h = rv__mix64(key ^ RV__BUCKET_SALT);
    return (uint32_t)(((h >> 32) * (uint64_t)n_buckets) >> 32);
}

rv_status rv_keys_count_values(const uint64_t *keys, const uint64_t *weights, const double *mass,
                               size_t n, uint32_t n_buckets, uint64_t *out_keys,
                               uint64_t *out_counts, double *out_mass, uint64_t *bucket_offsets,
                               size_t capacity, size_t *n_distinct) {
    if (n_distinct) *n_distinct = 0;
    RV__NOT_NULL(n_distinct, "n_distinct");
    RV__NOT_NULL(bucket_offsets, "bucket_offsets");
    if (n) {
        RV__NOT_NULL(keys, "keys");
        RV__NOT_NULL(out_keys, "out_keys");
        RV__NOT_NULL(out_counts, "out_counts");
        if (mass && !out_mass)
            return rv__error(RV_E_INVALID_ARG, "out_mass is NULL but mass is not");
    }
    RV__CHECK_SIZE(n, sizeof *keys, "n");
    RV__CHECK_SIZE(capacity, sizeof *out_keys, "capacity");
    if (n_buckets == 0) return rv__error(RV_E_INVALID_ARG, "n_buckets must be >= 1");
    if (capacity < n) return rv__error(RV_E_SHAPE, "capacity %zu < n %zu", capacity, n);
    if (n > (size_t)UINT32_MAX - 1)
        return rv__error(RV_E_RANGE, "n = %zu keys: at most %u per call", n, UINT32_MAX - 1);
    memset(bucket_offsets, 0, ((size_t)n_buckets + 1) * sizeof(uint64_t));
    if (n == 0) return RV_OK;

    /* Keys in a narrow range (small integers, codes) index the table
    ** directly: no hashing, no probing, same output. */
    uint64_t lo = keys[0], hi = keys[0];
    for (size_t i = 1; i < n; i++) {
        if (keys[i] < lo) lo = keys[i];
        if (keys[i] > hi) hi = keys[i];
    }
    int direct = hi - lo < 4 * (uint64_t)n + 64;
    size_t cap = 16;
    if (direct)
        cap = (size_t)(hi - lo) + 1;
    else
        while (cap < 2 * n) cap <<= 1;
    uint32_t *slot = rv__malloc(cap * sizeof(uint32_t));
    uint64_t *tk = rv__malloc(n * sizeof(uint64_t));
    uint64_t *tc = rv__malloc(n * sizeof(uint64_t));
    uint32_t *tb = rv__malloc(n * sizeof(uint32_t));
    double *tm = mass ? rv__malloc(n * sizeof(double)) : NULL;
    if (!slot || !tk || !tc || !tb || (mass && !tm)) {
        rv__free(slot);
        rv__free(tk);
        rv__free(tc);
        rv__free(tb);
        rv__free(tm);
        return rv__nomem("the key count table");
    }
    memset(slot, 0xff, cap * sizeof(uint32_t));
    size_t mask = cap - 1, nd = 0;
    for (size_t i = 0; direct && i < n; i++) {
        uint64_t k = keys[i];
        uint32_t *e = &slot[k - lo];
        if (*e == UINT32_MAX) {
            *e = (uint32_t)nd;
            tk[nd] = k;
            tc[nd] = weights ? weights[i] : 1;
            if (tm) tm[nd] = mass[i];
            nd++;
        } else {
            tc[*e] += weights ? weights[i] : 1;
            if (tm) tm[*e] += mass[i];
        }
    }
    for (size_t i = 0; !direct && i < n; i++) {
        uint64_t k = keys[i];
        size_t s = (size_t)rv__mix64(k ^ RV__SLOT_SALT) & mask;
        for (;;) {
            uint32_t e = slot[s];
            if (e == UINT32_MAX) {
                slot[s] = (uint32_t)nd;
                tk[nd] = k;
                tc[nd] = weights ? weights[i] : 1;
                if (tm) tm[nd] = mass[i];
                nd++;
                break;
            }
            if (tk[e] == k) {
                tc[e] += weights ? weights[i] : 1;
                if (tm) tm[e] += mass[i];
                break;
            }
            s = (s + 1) & mask;
        }
    }
    /* Counting sort by bucket (stable: first-appearance order within one). */
    for (size_t e = 0; e < nd; e++) {
        tb[e] = rv__value_bucket(tk[e], n_buckets);
        bucket_offsets[tb[e] + 1]++;
    }
    for (uint32_t b = 0; b < n_buckets; b++) bucket_offsets[b + 1] += bucket_offsets[b];
    uint64_t *cur = rv__malloc((size_t)n_buckets * sizeof(uint64_t));
    if (!cur) {
        rv__free(slot);
        rv__free(tk);
        rv__free(tc);
        rv__free(tb);
        rv__free(tm);
        return rv__nomem("bucket cursors");
    }
    memcpy(cur, bucket_offsets, (size_t)n_buckets * sizeof(uint64_t));
    for (size_t e = 0; e < nd; e++) {
        uint64_t at = cur[tb[e]]++;
        out_keys[at] = tk[e];
        out_counts[at] = tc[e];
        if (tm) out_mass[at] = tm[e];
    }
    *n_distinct = nd;
    rv__free(cur);
    rv__free(slot);
    rv__free(tk);
    rv__free(tc);
    rv__free(tb);
    rv__free(tm);
    return RV_OK;
}
