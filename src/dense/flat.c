/*
** The flat (exact) vector index: storage, ids, deletes and batched top-k
** search on several threads.
**
** Search plan.  The rows are cut into chunks of panels (flat_internal.h);
** worker threads take chunks from an atomic counter and keep one bounded
** heap per query.  Because a (query, row) score does not depend on which
** thread computes it, and hits are ordered by (score desc, id asc), a total
** order, merging the per-thread heaps gives the same answer for any thread
** count or chunk schedule.  Compact storage (float16, int8) keeps a larger
** candidate pool that is re-scored from the float32 rows.
*/
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../core/parallel.h"
#include "flat_internal.h"

#define RV__DEFAULT_RESCORE 8u
/* Search mode beside the rv_flat_storage values: exact scores from the
** float32 rows of a compact-storage index. */
#define RV__MODE_ROWS 3
/* Exact search of an int8-storage index: the int8 copy screens, the float32
** rows score what the screen cannot rule out (rv__scan_chunk_screen). */
#define RV__MODE_SCREEN 4
#define RV__MAX_RESCORE 1024u

/* ------------------------------------------------------------ utilities */

static size_t rv__round_up(size_t x, size_t m) {
    return (x + m - 1) / m * m;
}

static size_t rv__elem_bytes(rv_flat_storage s) {
    return s == RV_FLAT_F32 ? 4 : s == RV_FLAT_F16 ? 2 : 1;
}

/* Bytes of one panel of 16 rows. */
static size_t rv__panel_bytes(const rv_flat *ix) {
    if (ix->storage == RV_FLAT_I8) return (size_t)ix->dim4 * RV__PANEL;
    return (size_t)ix->dim * RV__PANEL * rv__elem_bytes(ix->storage);
}

static int rv__cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* ------------------------------------------------------------ id -> row */

static size_t rv__map_find(const rv_flat *ix, int64_t id) {
    if (!ix->map_cap) return SIZE_MAX;
    size_t mask = ix->map_cap - 1, i = (size_t)rv__mix64((uint64_t)id) & mask;
    while (ix->map_key[i] != -1) {
        if (ix->map_key[i] == id) return ix->map_row[i];
        i = (i + 1) & mask;
    }
    return SIZE_MAX;
}

static void rv__map_put(rv_flat *ix, int64_t id, size_t row) {
    size_t mask = ix->map_cap - 1, i = (size_t)rv__mix64((uint64_t)id) & mask;
    while (ix->map_key[i] != -1) i = (i + 1) & mask;
    ix->map_key[i] = id;
    ix->map_row[i] = row;
    ix->map_used++;
}

/* Linear-probing delete with backward shift, so no tombstones pile up. */
static void rv__map_erase(rv_flat *ix, int64_t id) {
    size_t mask = ix->map_cap - 1, i = (size_t)rv__mix64((uint64_t)id) & mask;
    while (ix->map_key[i] != id) {
        if (ix->map_key[i] == -1) return;
        i = (i + 1) & mask;
    }
    size_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (ix->map_key[j] == -1) break;
        size_t home = (size_t)rv__mix64((uint64_t)ix->map_key[j]) & mask;
        /* Move j into the hole i unless its home lies cyclically in (i, j]. */
        int stays = (i <= j) ? (home > i && home <= j) : (home > i || home <= j);
        if (!stays) {
            ix->map_key[i] = ix->map_key[j];
            ix->map_row[i] = ix->map_row[j];
            i = j;
        }
    }
    ix->map_key[i] = -1;
    ix->map_used--;
}

/* Make room for `entries` live ids at load factor <= 1/2. */
static rv_status rv__map_reserve(rv_flat *ix, size_t entries) {
    size_t want = 16;
    while (want < 2 * entries) {
        if (want > SIZE_MAX / 4) return rv__nomem("the id map");
        want *= 2;
    }
    if (want <= ix->map_cap) return RV_OK;
    int64_t *keys = (int64_t *)rv__malloc(want * sizeof *keys);
    size_t *rows = (size_t *)rv__malloc(want * sizeof *rows);
    if (!keys || !rows || want > SIZE_MAX / sizeof *rows) {
        rv__free(keys);
        rv__free(rows);
        return rv__nomem("the id map");
    }
    for (size_t i = 0; i < want; i++) keys[i] = -1;
    int64_t *old_k = ix->map_key;
    size_t *old_r = ix->map_row, old_cap = ix->map_cap;
    ix->map_key = keys;
    ix->map_row = rows;
    ix->map_cap = want;
    ix->map_used = 0;
    for (size_t i = 0; i < old_cap; i++)
        if (old_k[i] != -1) rv__map_put(ix, old_k[i], old_r[i]);
    rv__free(old_k);
    rv__free(old_r);
    return RV_OK;
}

/* ------------------------------------------------------- create and free */

void rv_flat_options_init(rv_flat_options *opt) {
    if (!opt) return;
    memset(opt, 0, sizeof *opt);
    opt->metric = RV_METRIC_COSINE;
    opt->storage = RV_FLAT_F32;
    opt->rescore_factor = RV__DEFAULT_RESCORE;
}

rv_status rv_flat_create(const rv_flat_options *opt, rv_flat **out) {
    RV__NOT_NULL(out, "out");
    *out = NULL;
    RV__NOT_NULL(opt, "opt");
    if (opt->dim == 0 || opt->dim > RV_FLAT_MAX_DIM)
        return rv__error(RV_E_RANGE, "dim = %u: must be in 1 .. %u", (unsigned)opt->dim,
                         (unsigned)RV_FLAT_MAX_DIM);
    if ((unsigned)opt->metric > (unsigned)RV_METRIC_L2)
        return rv__error(RV_E_INVALID_ARG, "metric = %d: unknown metric", (int)opt->metric);
    if ((unsigned)opt->storage > (unsigned)RV_FLAT_I8)
        return rv__error(RV_E_INVALID_ARG, "storage = %d: unknown storage", (int)opt->storage);
    if (opt->rescore_factor > RV__MAX_RESCORE)
        return rv__error(RV_E_INVALID_ARG, "rescore_factor = %u: must be in 1 .. %u",
                         (unsigned)opt->rescore_factor, RV__MAX_RESCORE);
    rv_flat *ix = (rv_flat *)rv__calloc(1, sizeof *ix);
    if (!ix) return rv__nomem("the flat index");
    ix->dim = opt->dim;
    ix->dim4 = (uint32_t)rv__round_up(opt->dim, 4);
    ix->metric = opt->metric;
    ix->storage = opt->storage;
    ix->rescore_factor = opt->rescore_factor ? opt->rescore_factor : RV__DEFAULT_RESCORE;
    rv__flat_kernels_select(&ix->kern);
    *out = ix;
    return RV_OK;
}

static void rv__free_contents(rv_flat *ix) {
    rv__free(ix->row_id);
    rv__free(ix->dead);
    rv__free(ix->sqnorm);
    rv__free(ix->panels_raw);
    rv__free(ix->rows);
    rv__free(ix->scale);
    rv__free(ix->csum);
    rv__free(ix->qerr);
    rv__free(ix->qnorm);
    rv__free(ix->map_key);
    rv__free(ix->map_row);
}

void rv_flat_free(rv_flat *ix) {
    if (!ix) return;
    rv__free_contents(ix);
    rv__free(ix);
}

uint32_t rv_flat_dim(const rv_flat *ix) {
    return ix ? ix->dim : 0;
}
rv_metric rv_flat_metric(const rv_flat *ix) {
    return ix ? ix->metric : RV_METRIC_INNER_PRODUCT;
}
rv_flat_storage rv_flat_storage_kind(const rv_flat *ix) {
    return ix ? ix->storage : RV_FLAT_F32;
}
uint32_t rv_flat_rescore_factor(const rv_flat *ix) {
    return ix ? ix->rescore_factor : 0;
}
size_t rv_flat_size(const rv_flat *ix) {
    return ix ? ix->n_live : 0;
}
size_t rv_flat_n_deleted(const rv_flat *ix) {
    return ix ? ix->n_rows - ix->n_live : 0;
}

int rv_flat_contains(const rv_flat *ix, int64_t id) {
    return ix && id >= 0 && rv__map_find(ix, id) != SIZE_MAX;
}

/* ------------------------------------------------------------- storage */

static void *rv__grow(void *p, size_t count, size_t size, int *ok) {
    if (!*ok) return p;
    if (size && count > SIZE_MAX / size) {
        *ok = 0;
        return p;
    }
    void *q = rv__realloc(p, count * size);
    if (!q) {
        *ok = 0;
        return p;
    }
    return q;
}

/* Make room for `rows` rows.  On failure nothing observable changes. */
static rv_status rv__reserve_rows(rv_flat *ix, size_t rows) {
    if (rows <= ix->cap_rows) return RV_OK;
    size_t cap = ix->cap_rows ? ix->cap_rows : 64;
    while (cap < rows) {
        if (cap > SIZE_MAX / 2) return rv__nomem("the vectors");
        cap = cap + cap / 2;
    }
    cap = rv__round_up(cap, RV__PANEL);
    size_t pb = rv__panel_bytes(ix), n_pan = cap / RV__PANEL;
    if (n_pan > (SIZE_MAX - 64) / pb) return rv__nomem("the vectors");
    void *raw = rv__malloc(n_pan * pb + 64);
    if (!raw) return rv__nomem("the vector panels");
    void *pan = (void *)(((uintptr_t)raw + 63u) & ~(uintptr_t)63u);
    int ok = 1;
    ix->row_id = (int64_t *)rv__grow(ix->row_id, cap, sizeof(int64_t), &ok);
    ix->dead = (uint8_t *)rv__grow(ix->dead, cap, 1, &ok);
    ix->sqnorm = (float *)rv__grow(ix->sqnorm, cap, sizeof(float), &ok);
    if (ix->storage != RV_FLAT_F32) {
        if ((size_t)ix->dim > SIZE_MAX / sizeof(float) / cap) ok = 0;
        ix->rows = (float *)rv__grow(ix->rows, cap * ix->dim, sizeof(float), &ok);
    }
    if (ix->storage == RV_FLAT_I8) {
        ix->scale = (float *)rv__grow(ix->scale, cap, sizeof(float), &ok);
        ix->csum = (int32_t *)rv__grow(ix->csum, cap, sizeof(int32_t), &ok);
        ix->qerr = (float *)rv__grow(ix->qerr, cap, sizeof(float), &ok);
        ix->qnorm = (float *)rv__grow(ix->qnorm, cap, sizeof(float), &ok);
    }
    if (!ok) {
        rv__free(raw);
        return rv__nomem("the vectors");
    }
    size_t used = rv__round_up(ix->n_rows, RV__PANEL) / RV__PANEL * pb;
    if (used) memcpy(pan, ix->panels, used);
    memset((char *)pan + used, 0, n_pan * pb - used);
    rv__free(ix->panels_raw);
    ix->panels_raw = raw;
    ix->panels = pan;
    ix->cap_rows = cap;
    return RV_OK;
}

/* The smallest float >= x (x >= 0, finite). */
static float rv__float_up(double x) {
    float f = (float)x;
    if ((double)f < x) f = nextafterf(f, INFINITY);
    return f;
}

/* Write a (validated, already normalised) vector into row r. */
static void rv__store_row(rv_flat *ix, size_t r, const float *x) {
    size_t dim = ix->dim, p = r / RV__PANEL, l = r % RV__PANEL;
    double nn = 0;
    for (size_t j = 0; j < dim; j++) nn += (double)x[j] * x[j];
    ix->sqnorm[r] = (float)nn;
    if (ix->storage == RV_FLAT_F32) {
        float *pan = (float *)ix->panels + p * dim * RV__PANEL;
        for (size_t j = 0; j < dim; j++) pan[j * RV__PANEL + l] = x[j];
        return;
    }
    memcpy(ix->rows + r * dim, x, dim * sizeof(float));
    if (ix->storage == RV_FLAT_F16) {
        uint16_t *pan = (uint16_t *)ix->panels + p * dim * RV__PANEL;
        for (size_t j = 0; j < dim; j++) pan[j * RV__PANEL + l] = rv__f32_to_f16(x[j]);
        return;
    }
    /* int8: symmetric, one scale per vector: x ~= scale * code. */
    float maxabs = 0;
    for (size_t j = 0; j < dim; j++) {
        float a = fabsf(x[j]);
        if (a > maxabs) maxabs = a;
    }
    float scale = maxabs / 127.0f, inv = maxabs > 0 ? 127.0f / maxabs : 0.0f;
    int8_t *pan = (int8_t *)ix->panels + p * (size_t)ix->dim4 * RV__PANEL;
    int32_t sum = 0;
    double e2 = 0, c2 = 0;
    for (size_t j = 0; j < dim; j++) {
        long c = lrintf(x[j] * inv);
        if (c > 127) c = 127;
        if (c < -127) c = -127;
        pan[(j / 4) * 64 + l * 4 + (j % 4)] = (int8_t)c;
        sum += (int32_t)c;
        double xh = (double)scale * (double)c; /* exact: 24 x 8 bits */
        e2 += ((double)x[j] - xh) * ((double)x[j] - xh);
        c2 += xh * xh;
    }
    ix->scale[r] = scale;
    ix->csum[r] = sum;
    /* the screen's bounds, rounded up: the relative and absolute margins
    ** cover every rounding of the double sums above many times over */
    ix->qerr[r] = rv__float_up(sqrt(e2) * (1.0 + 1e-6) + 1e-12 * sqrt(nn));
    ix->qnorm[r] = rv__float_up(sqrt(c2) * (1.0 + 1e-6));
}

const float *rv__flat_row(const rv_flat *ix, size_t r, float *tmp) {
    if (ix->storage != RV_FLAT_F32) return ix->rows + r * ix->dim;
    const float *pan = (const float *)ix->panels + (r / RV__PANEL) * ix->dim * RV__PANEL;
    size_t l = r % RV__PANEL;
    for (size_t j = 0; j < ix->dim; j++) tmp[j] = pan[j * RV__PANEL + l];
    return tmp;
}

/* Check one input vector; *inv receives the factor to store it with. */
static rv_status rv__check_vector(const rv_flat *ix, const float *x, size_t i, const char *what,
                                  int norm_given, float *inv) {
    double nn = 0;
    for (size_t j = 0; j < ix->dim; j++) {
        if (!isfinite(x[j]))
            return rv__error(RV_E_INVALID_ARG, "%s[%zu][%zu] = %g: vectors must be finite", what, i,
                             j, (double)x[j]);
        nn += (double)x[j] * x[j];
    }
    if (nn > (double)FLT_MAX)
        return rv__error(RV_E_RANGE, "%s[%zu]: its squared norm %g overflows float32", what, i, nn);
    *inv = 1.0f;
    if (ix->metric == RV_METRIC_COSINE) {
        if (nn == 0)
            return rv__error(RV_E_INVALID_ARG, "%s[%zu] is a zero vector, which has no cosine",
                             what, i);
        if (!norm_given) *inv = (float)(1.0 / sqrt(nn));
    }
    if (ix->storage == RV_FLAT_F16) {
        for (size_t j = 0; j < ix->dim; j++)
            if (fabsf(x[j] * *inv) > 65504.0f)
                return rv__error(RV_E_RANGE,
                                 "%s[%zu][%zu] = %g does not fit float16 "
                                 "storage (|x| <= 65504)",
                                 what, i, j, (double)x[j]);
    }
    return RV_OK;
}

rv_status rv__flat_add(rv_flat *ix, size_t n, const float *vectors, const int64_t *ids,
                       int64_t *assigned, int norm_given) {
    RV__NOT_NULL(ix, "index");
    RV__CHECK_SIZE2(n, ix->dim, sizeof *vectors, "n", "dim");
    RV__CHECK_SIZE(n, sizeof *ids, "n");
    if (n == 0) return RV_OK;
    RV__NOT_NULL(vectors, "vectors");
    if (n > SIZE_MAX / 2 - ix->n_rows)
        return rv__error(RV_E_RANGE, "n = %zu vectors is too many", n);
    size_t dim = ix->dim;
    float inv;
    for (size_t i = 0; i < n; i++) {
        rv_status st = rv__check_vector(ix, vectors + i * dim, i, "vectors", norm_given, &inv);
        if (st) return st;
    }
    int64_t max_id = -1;
    if (ids) {
        for (size_t i = 0; i < n; i++) {
            int64_t id = ids[i];
            if (id < 0 || id > RV_FLAT_MAX_ID)
                return rv__error(RV_E_INVALID_ARG, "ids[%zu] = %lld: ids must be in 0 .. %lld", i,
                                 (long long)id, (long long)RV_FLAT_MAX_ID);
            if (rv__map_find(ix, id) != SIZE_MAX)
                return rv__error(RV_E_INVALID_ARG,
                                 "ids[%zu] = %lld is already in the index "
                                 "(remove it first to replace it)",
                                 i, (long long)id);
            if (id > max_id) max_id = id;
        }
        rv_status dst = rv__ids_check_distinct(ids, n);
        if (dst) return dst;
    } else {
        if (ix->next_id > RV_FLAT_MAX_ID ||
            (uint64_t)n - 1 > (uint64_t)(RV_FLAT_MAX_ID - ix->next_id))
            return rv__error(RV_E_RANGE,
                             "numbering %zu vectors from %lld passes the "
                             "largest id %lld",
                             n, (long long)ix->next_id, (long long)RV_FLAT_MAX_ID);
        max_id = ix->next_id + (int64_t)n - 1;
    }
    rv_status st = rv__reserve_rows(ix, ix->n_rows + n);
    if (st) return st;
    st = rv__map_reserve(ix, ix->map_used + n);
    if (st) return st;

    float *tmp = NULL;
    if (ix->metric == RV_METRIC_COSINE && !norm_given) {
        tmp = (float *)rv__malloc(dim * sizeof *tmp);
        if (!tmp) return rv__nomem("a scratch vector");
    }
    for (size_t i = 0; i < n; i++) {
        const float *x = vectors + i * dim;
        if (tmp) {
            rv__check_vector(ix, x, i, "vectors", 0, &inv);
            for (size_t j = 0; j < dim; j++) tmp[j] = x[j] * inv;
            x = tmp;
        }
        size_t r = ix->n_rows + i;
        int64_t id = ids ? ids[i] : ix->next_id + (int64_t)i;
        rv__store_row(ix, r, x);
        ix->row_id[r] = id;
        ix->dead[r] = 0;
        rv__map_put(ix, id, r);
        if (assigned) assigned[i] = id;
    }
    rv__free(tmp);
    ix->n_rows += n;
    ix->n_live += n;
    if (max_id + 1 > ix->next_id) ix->next_id = max_id + 1;
    return RV_OK;
}

rv_status rv_flat_add(rv_flat *ix, size_t n, const float *vectors, const int64_t *ids,
                      int64_t *assigned) {
    return rv__flat_add(ix, n, vectors, ids, assigned, 0);
}

rv_status rv_flat_delete(rv_flat *ix, size_t n, const int64_t *ids, size_t *n_removed) {
    if (n_removed) *n_removed = 0;
    RV__NOT_NULL(ix, "index");
    RV__CHECK_SIZE(n, sizeof *ids, "n");
    if (n == 0) return RV_OK;
    RV__NOT_NULL(ids, "ids");
    for (size_t i = 0; i < n; i++)
        if (ids[i] < 0 || rv__map_find(ix, ids[i]) == SIZE_MAX)
            return rv__error(RV_E_RANGE, "ids[%zu] = %lld is not in the index", i,
                             (long long)ids[i]);
    rv_status dst = rv__ids_check_distinct(ids, n);
    if (dst) return dst;
    for (size_t i = 0; i < n; i++) {
        size_t r = rv__map_find(ix, ids[i]);
        ix->dead[r] = 1;
        rv__map_erase(ix, ids[i]);
    }
    ix->n_live -= n;
    if (n_removed) *n_removed = n;
    return RV_OK;
}

rv_status rv_flat_remove(rv_flat *ix, size_t n, const int64_t *ids, size_t *n_removed) {
    return rv_flat_delete(ix, n, ids, n_removed);
}

rv_status rv_flat_compact(rv_flat *ix) {
    RV__NOT_NULL(ix, "index");
    if (ix->n_live == ix->n_rows) return RV_OK;
    rv_flat_options opt;
    rv_flat_options_init(&opt);
    opt.dim = ix->dim;
    opt.metric = ix->metric;
    opt.storage = ix->storage;
    opt.rescore_factor = ix->rescore_factor;
    rv_flat *nx = NULL;
    rv_status st = rv_flat_create(&opt, &nx);
    if (st) return st;
    size_t batch = 256, dim = ix->dim;
    float *buf = (float *)rv__malloc(batch * dim * sizeof *buf);
    int64_t *idb = (int64_t *)rv__malloc(batch * sizeof *idb);
    if (!buf || !idb) st = rv__nomem("the compaction buffers");
    if (!st) st = rv__reserve_rows(nx, ix->n_live);
    if (!st) st = rv__map_reserve(nx, ix->n_live);
    size_t filled = 0;
    for (size_t r = 0; !st && r < ix->n_rows; r++) {
        if (ix->dead[r]) continue;
        const float *x = rv__flat_row(ix, r, buf + filled * dim);
        if (x != buf + filled * dim) memcpy(buf + filled * dim, x, dim * sizeof *buf);
        idb[filled++] = ix->row_id[r];
        if (filled == batch) {
            st = rv__flat_add(nx, filled, buf, idb, NULL, 1);
            filled = 0;
        }
    }
    if (!st && filled) st = rv__flat_add(nx, filled, buf, idb, NULL, 1);
    rv__free(buf);
    rv__free(idb);
    if (st) {
        rv_flat_free(nx);
        return st;
    }
    nx->next_id = ix->next_id;
    rv__free_contents(ix);
    *ix = *nx;
    rv__free(nx);
    return RV_OK;
}

rv_status rv_flat_ids(const rv_flat *ix, int64_t *ids, size_t capacity, size_t *n_ids) {
    if (n_ids) *n_ids = 0;
    RV__NOT_NULL(ix, "index");
    RV__NOT_NULL(n_ids, "n_ids");
    if (!ids && capacity)
        return rv__error(RV_E_INVALID_ARG, "ids is NULL but capacity = %zu", capacity);
    RV__CHECK_SIZE(capacity, sizeof *ids, "capacity");
    *n_ids = ix->n_live;
    size_t w = 0;
    for (size_t r = 0; r < ix->n_rows && w < capacity; r++)
        if (!ix->dead[r]) ids[w++] = ix->row_id[r];
    if (capacity < ix->n_live)
        return rv__error(RV_E_SHAPE, "capacity %zu < %zu live ids", capacity, ix->n_live);
    return RV_OK;
}

rv_status rv_flat_get(const rv_flat *ix, size_t n, const int64_t *ids, float *out) {
    RV__NOT_NULL(ix, "index");
    RV__CHECK_SIZE2(n, ix->dim, sizeof *out, "n", "dim");
    RV__CHECK_SIZE(n, sizeof *ids, "n");
    if (n == 0) return RV_OK;
    RV__NOT_NULL(ids, "ids");
    RV__NOT_NULL(out, "out");
    for (size_t i = 0; i < n; i++) {
        size_t r = ids[i] < 0 ? SIZE_MAX : rv__map_find(ix, ids[i]);
        if (r == SIZE_MAX)
            return rv__error(RV_E_RANGE, "ids[%zu] = %lld is not in the index", i,
                             (long long)ids[i]);
        float *dst = out + i * ix->dim;
        const float *x = rv__flat_row(ix, r, dst);
        if (x != dst) memcpy(dst, x, ix->dim * sizeof *dst);
    }
    return RV_OK;
}

/* --------------------------------------------------------------- search */

typedef struct rv__hit {
    float s; /* internal score: higher is better */
    int64_t id;
    size_t row;
} rv__hit;

/* a ranks before b: higher score, then lower id. */
static inline int rv__hit_better(float sa, int64_t ia, float sb, int64_t ib) {
    return sa > sb || (sa == sb && ia < ib);
}

static int rv__cmp_hit(const void *pa, const void *pb) {
    const rv__hit *a = (const rv__hit *)pa, *b = (const rv__hit *)pb;
    if (rv__hit_better(a->s, a->id, b->s, b->id)) return -1;
    if (rv__hit_better(b->s, b->id, a->s, a->id)) return 1;
    return 0;
}

/* Sort hits best first (rv__cmp_hit, a total order: ids are distinct):
** insertion sort for the few hits of one query's merge, qsort beyond. */
static void rv__sort_hits(rv__hit *h, size_t n) {
    if (n > 32) {
        qsort(h, n, sizeof *h, rv__cmp_hit);
        return;
    }
    for (size_t i = 1; i < n; i++) {
        rv__hit x = h[i];
        size_t j = i;
        while (j > 0 && rv__hit_better(x.s, x.id, h[j - 1].s, h[j - 1].id)) {
            h[j] = h[j - 1];
            j--;
        }
        h[j] = x;
    }
}

/* Bounded heap with the worst hit at the root. */
static void rv__heap_push(rv__hit *h, size_t *n, size_t cap, rv__hit x) {
    size_t i;
    if (*n < cap) {
        i = (*n)++;
        while (i > 0) {
            size_t p = (i - 1) / 2;
            if (!rv__hit_better(h[p].s, h[p].id, x.s, x.id)) break;
            h[i] = h[p];
            i = p;
        }
        h[i] = x;
        return;
    }
    if (!rv__hit_better(x.s, x.id, h[0].s, h[0].id)) return;
    i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= cap) break;
        if (c + 1 < cap && rv__hit_better(h[c].s, h[c].id, h[c + 1].s, h[c + 1].id)) c++;
        if (!rv__hit_better(x.s, x.id, h[c].s, h[c].id)) break;
        h[i] = h[c];
        i = c;
    }
    h[i] = x;
}

static float rv__exact_score(const rv_flat *ix, const float *q, size_t row, float *tmp);

typedef struct rv__search {
    const rv_flat *ix;
    size_t nq;              /* queries in this pass */
    size_t kk;              /* heap size per query */
    unsigned qb;            /* queries per kernel block */
    size_t nqb;             /* query blocks */
    int mode;               /* storage scanned: RV_FLAT_F32 / F16 / I8 */
    const float *qpack_f;   /* float query blocks */
    const uint8_t *qpack_b; /* int8 query blocks */
    const float *qscale;    /* int8: per-query scale */
    const float *qrows;     /* prepared queries, row-major (RV__MODE_ROWS) */
    const int16_t *q16;     /* screen: int16 query codes, dim4 per query */
    const float *qbound;    /* screen: per query (code scale, alpha, beta) */
    const uint32_t *qnz;    /* screen: per query dim4/4 + 1: count, nonzero quads */
    float *sc_u;            /* screen: [n_threads][chunk rows] upper bounds */
    size_t *sc_row;         /* screen: [n_threads][chunk rows] their rows */
    double *sc_lb;          /* screen: [n_threads][4 kk] lower bounds */
    const uint8_t *skip;    /* per row: 1 = never return (dead or filtered) */
    const size_t *panels;   /* panels holding at least one eligible row */
    size_t chunk_panels;    /* panels per work item */
    size_t n_panels;        /* entries of panels */
    size_t n_chunks;
    atomic_size_t next_chunk;
    atomic_size_t done_chunks;
    atomic_int stop;
    rv__hit *heaps; /* [n_threads][nq][kk] */
    size_t *counts; /* [n_threads][nq] */
    float *tiles;   /* [n_threads][qb * 16] floats or int32 */
    rv_progress_fn progress;
    void *progress_ctx;
    uint64_t progress_base, progress_total;
    int interrupted;
} rv__search;

static int rv__cmp_double_desc(const void *pa, const void *pb) {
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a < b) - (a > b);
}

/* The k-th largest (k >= 1) of v[0 .. n), n >= k; reorders v so that
** v[0 .. k) are the k largest.  Quickselect with a median-of-three pivot
** and branch-free partitions (the data decide no jumps); after 64 rounds
** (adversarial input) it sorts what is left, so the cost is O(n) expected
** and O(n log n) at worst. */
static double rv__kth_largest(double *v, size_t n, size_t k) {
    size_t lo = 0, hi = n, want = k - 1; /* position in descending order */
    for (int round = 0; hi - lo > 16 && round < 64; round++) {
        size_t mid = lo + (hi - lo) / 2;
        double a = v[lo], b = v[mid], c = v[hi - 1];
        double piv = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        size_t gt = lo; /* [lo, gt) > piv, then <= piv */
        for (size_t i = lo; i < hi; i++) {
            double x = v[i];
            size_t up = x > piv;
            v[i] = v[gt];
            v[gt] = x;
            gt += up;
        }
        if (want < gt) {
            hi = gt;
            continue;
        }
        size_t eq = gt; /* [gt, eq) == piv, then < piv */
        for (size_t i = gt; i < hi; i++) {
            double x = v[i];
            size_t same = x == piv;
            v[i] = v[eq];
            v[eq] = x;
            eq += same;
        }
        if (want < eq) return piv;
        lo = eq;
    }
    if (hi - lo > 16) {
        qsort(v + lo, hi - lo, sizeof *v, rv__cmp_double_desc);
        return v[want];
    }
    for (size_t i = lo + 1; i < hi; i++) { /* insertion sort, descending */
        double x = v[i];
        size_t j = i;
        while (j > lo && v[j - 1] < x) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
    return v[want];
}

/* The screen's candidates as a max-heap by upper end: u[i] with its row
** r[i] (parallel arrays), the largest at the root. */
static void rv__cand_sift(float *u, size_t *r, size_t n, size_t i) {
    float x = u[i];
    size_t xr = r[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && u[c + 1] > u[c]) c++;
        if (!(u[c] > x)) break;
        u[i] = u[c];
        r[i] = r[c];
        i = c;
    }
    u[i] = x;
    r[i] = xr;
}

static void rv__cand_heapify(float *u, size_t *r, size_t n) {
    for (size_t i = n / 2; i-- > 0;) rv__cand_sift(u, r, n, i);
}

/* Drop the root (*n >= 1). */
static void rv__cand_pop(float *u, size_t *r, size_t *n) {
    size_t last = --*n;
    u[0] = u[last];
    r[0] = r[last];
    if (last) rv__cand_sift(u, r, last, 0);
}

/* The exact search of an int8-storage index (RV__MODE_SCREEN), work item c.
**
** For a stored row x (float32), its int8 copy xh = scale * code and a
** prepared query q with int16 codes qh = qs * qcode, the int8 screen gives
** a = qs * scale * (qcode . code), exact in int32 and then in double.  The
** float32 score s that the rows scan computes (rv__exact_score) satisfies
**   |s - a| <= |q| |x - xh| + |q - qh| |xh|          (the quantisation)
**            + gamma_dim |q| |x|                       (float32 sums)
**            + rounding of a, b, a + b, a - b           (8 u (|q| + |q - qh|) |xh|)
** (Cauchy-Schwarz; |x| <= |xh| + |x - xh|; gamma_n = n u / (1 - n u) with
** u = 2^-24 bounds a float32 dot product of n terms in any order; a is
** three float32 roundings of the exact integer sum, |a| <= (|q| +
** |q - qh|) |xh|).  With the per-row bounds qerr >= |x - xh| and qnorm >=
** |xh| (rv__store_row) this is b = alpha * qerr + beta * qnorm, alpha and
** beta per query rounded up (rv__pack_queries_q16), enlarged by 1 + 1e-6
** (the roundings of b itself) and by 1e-30 (underflow: each float32
** operation near the subnormals errs by at most 2^-149 absolutely).  So s
** lies in [a - b, a + b].
**
** Per query, the work item first computes every eligible row's interval;
** then T = the kk-th largest among the exact scores already in the query's
** heap and the lower ends of the new intervals (kk distinct rows score >= T,
** so the final kk-th best score is >= T); a row whose upper end is below T
** scores below the final kk-th best and cannot be a result (nor tie with
** one).  The other rows are scored exactly (rv__dotsg_fn: the rows scan's
** arithmetic) and offered to the heap, as the rows scan does, highest upper
** end first; once the heap holds kk hits and the next upper end is below
** its worst score, every row left scores below a hit already held (so below
** the final kk-th best) and is dropped unscored.  Hence the results -- ids,
** order and scores -- are those of the rows scan, bit for bit, whatever the
** data (the top kk of a total order do not depend on the order in which
** rows are offered).
**
** The integer sums: a query quad (4 dimensions) whose codes are all zero
** adds nothing to any row's sum, so a query with such quads (sparse
** vectors) may be screened through the list of its other quads
** (rv__tile_q16s_fn), reading only their panel lines; the sums are the
** same integers.  It is, when at most half of its quads are nonzero: the
** list's lines are scattered, so the hardware prefetcher does not stream
** them as it streams whole panels, and a query that skips few lines loses
** more than it saves (the Cranfield hashing queries, 512 dimensions, 107
** of 128 quads nonzero at the median: the kernel's step through Python
** 51 -> 45 us warm and 250 -> 202 us with the caches evicted, medians of 5
** processes each, alternated, on an AVX2 host). */
static void rv__scan_chunk_screen(rv__search *sr, unsigned t, size_t c) {
    const rv_flat *ix = sr->ix;
    size_t p0 = c * sr->chunk_panels, p1 = p0 + sr->chunk_panels;
    if (p1 > sr->n_panels) p1 = sr->n_panels;
    size_t nq = sr->nq, kk = sr->kk, dim = ix->dim, d4 = ix->dim4;
    size_t cr = sr->chunk_panels * RV__PANEL;
    rv__hit *heaps = sr->heaps + (size_t)t * nq * kk;
    size_t *counts = sr->counts + (size_t)t * nq;
    int32_t *itile = (int32_t *)(void *)(sr->tiles + (size_t)t * sr->qb * RV__PANEL);
    float *U = sr->sc_u + (size_t)t * cr;
    size_t *rows = sr->sc_row + (size_t)t * cr;
    double *lb = sr->sc_lb + (size_t)t * 4 * kk;
    size_t pb = rv__panel_bytes(ix);
    const char *pan0 = (const char *)ix->panels;
    for (size_t q = 0; q < nq; q++) {
        rv__hit *h = heaps + q * kk;
        size_t *cnt = counts + q;
        const float *qb3 = sr->qbound + 3 * q;
        const int16_t *qc = sr->q16 + q * d4;
        /* the query's nonzero code quads: count, then the list */
        const uint32_t *nzq = sr->qnz + q * (d4 / 4 + 1);
        int sparse = 2 * (size_t)nzq[0] <= d4 / 4; /* at most half */
        /* lb holds lower bounds of distinct rows' scores: the exact scores
        ** in the heap, then every new lower end above tau.  tau never
        ** exceeds the kk-th largest of all the lower bounds offered (it is
        ** the kk-th largest of a subset), and every value above tau is
        ** kept, so the kk-th largest of lb at the end is that of all of
        ** them: T.  Rows whose upper end is below tau (<= T) are dropped at
        ** once. */
        size_t nb = *cnt, m = 0;
        double tau = -INFINITY; /* always a float value (or -inf) */
        for (size_t i = 0; i < nb; i++) lb[i] = (double)h[i].s;
        if (nb == kk) {
            tau = lb[0];
            for (size_t i = 1; i < nb; i++)
                if (lb[i] < tau) tau = lb[i]; /* the heap's worst */
        }
        for (size_t pi = p0; pi < p1; pi++) {
            size_t r0 = sr->panels[pi] * RV__PANEL;
            const int8_t *pan = (const int8_t *)(const void *)(pan0 + sr->panels[pi] * pb);
            if (sparse)
                ix->kern.q16s(pan, qc, nzq + 1, nzq[0], itile);
            else
                ix->kern.q16(pan, d4, qc, itile);
            size_t lanes = ix->n_rows - r0 < RV__PANEL ? ix->n_rows - r0 : RV__PANEL;
            float up[RV__PANEL], lo[RV__PANEL];
            const float *sc = ix->scale + r0, *qe = ix->qerr + r0, *qn = ix->qnorm + r0;
            uint32_t reach = ix->kern.bounds(itile, sc, qe, qn, lanes, qb3, (float)tau, up, lo);
            /* the lanes whose upper end reached tau (it may rise below) */
            while (reach) {
                size_t l = rv__ctz64(reach);
                reach &= reach - 1;
                if ((double)up[l] < tau || sr->skip[r0 + l]) continue;
                U[m] = up[l];
                rows[m++] = r0 + l;
                if ((double)lo[l] > tau) {
                    lb[nb++] = (double)lo[l];
                    if (nb == 4 * kk) {
                        /* keep the kk largest; tau = the smallest of them */
                        tau = rv__kth_largest(lb, nb, kk);
                        nb = kk;
                    }
                }
            }
        }
        /* T: -inf while fewer than kk rows are known */
        double thr = nb >= kk ? rv__kth_largest(lb, nb, kk) : -INFINITY;
        size_t n_c = 0;
        for (size_t i = 0; i < m; i++)
            if ((double)U[i] >= thr) {
                U[n_c] = U[i];
                rows[n_c++] = rows[i];
            }
        /* exact scores, as the rows scan computes them, highest upper end
        ** first, four rows at a time; once the heap is full and the next
        ** upper end is below its worst score, no row left can enter it */
        rv__cand_heapify(U, rows, n_c);
        const float *qr = sr->qrows + q * dim;
        while (n_c) {
            if (*cnt == kk && U[0] < h[0].s) break;
            size_t grp[4], g = 0;
            float s4[4];
            while (g < 4 && n_c) {
                grp[g++] = rows[0];
                rv__cand_pop(U, rows, &n_c);
            }
            ix->kern.dotsg(qr, ix->rows, grp, g, dim, s4);
            for (size_t i = 0; i < g; i++) {
                size_t row = grp[i];
                float s = s4[i];
                if (*cnt == kk && !rv__hit_better(s, ix->row_id[row], h[0].s, h[0].id)) continue;
                rv__hit x = {s, ix->row_id[row], row};
                rv__heap_push(h, cnt, kk, x);
            }
        }
    }
}

/* Score the panels of work item c (a run of entries of sr->panels) for
** every query of the pass.  Panels without an eligible row never get here,
** so a filter that allows few rows scans few panels. */
static void rv__scan_chunk(rv__search *sr, unsigned t, size_t c) {
    const rv_flat *ix = sr->ix;
    size_t p0 = c * sr->chunk_panels, p1 = p0 + sr->chunk_panels;
    if (p1 > sr->n_panels) p1 = sr->n_panels;
    size_t nq = sr->nq, kk = sr->kk, dim = ix->dim;
    unsigned qb = sr->qb;
    rv__hit *heaps = sr->heaps + (size_t)t * nq * kk;
    size_t *counts = sr->counts + (size_t)t * nq;
    float *tile = sr->tiles + (size_t)t * qb * RV__PANEL;
    int32_t *itile = (int32_t *)(void *)tile;
    int l2 = ix->metric == RV_METRIC_L2;
    size_t pb = rv__panel_bytes(ix);
    const char *pan0 = (const char *)ix->panels;
    if (sr->mode == RV__MODE_SCREEN) {
        rv__scan_chunk_screen(sr, t, c);
        return;
    }
    if (sr->mode == RV__MODE_ROWS) {
        /* exact scores from the float32 rows (row-major): inner products a
        ** panel at a time through the multi-row dot kernel (the scores of
        ** rv__exact_score, bit for bit); L2 row by row */
        float *tmp = tile; /* unused for row-major rows */
        int by_panel = !l2;
        for (size_t q = 0; q < nq; q++) {
            rv__hit *h = heaps + q * kk;
            size_t *cnt = counts + q;
            const float *qr = sr->qrows + q * dim;
            for (size_t pi = p0; pi < p1; pi++) {
                size_t r0 = sr->panels[pi] * RV__PANEL, r1 = r0 + RV__PANEL;
                if (r1 > ix->n_rows) r1 = ix->n_rows;
                if (by_panel) ix->kern.dots(qr, ix->rows + r0 * dim, r1 - r0, dim, tile);
                for (size_t row = r0; row < r1; row++) {
                    if (sr->skip[row]) continue;
                    float s = by_panel ? tile[row - r0] : rv__exact_score(ix, qr, row, tmp);
                    if (*cnt == kk && !rv__hit_better(s, ix->row_id[row], h[0].s, h[0].id))
                        continue; /* the heap is full of better hits */
                    rv__hit x = {s, ix->row_id[row], row};
                    rv__heap_push(h, cnt, kk, x);
                }
            }
        }
        return;
    }
    for (size_t b = 0; b < sr->nqb; b++) {
        size_t q0 = b * qb;
        for (size_t pi = p0; pi < p1; pi++) {
            size_t r = sr->panels[pi] * RV__PANEL;
            const void *pan = pan0 + sr->panels[pi] * pb;
            if (sr->mode == RV_FLAT_F32)
                ix->kern.f32((const float *)pan, dim, sr->qpack_f + q0 * dim, tile);
            else if (sr->mode == RV_FLAT_F16)
                ix->kern.f16((const uint16_t *)pan, dim, sr->qpack_f + q0 * dim, tile);
            else
                ix->kern.i8((const int8_t *)pan, ix->dim4, sr->qpack_b + q0 * ix->dim4, itile);
            size_t lanes = ix->n_rows - r < RV__PANEL ? ix->n_rows - r : RV__PANEL;
            for (unsigned i = 0; i < qb && q0 + i < nq; i++) {
                size_t q = q0 + i;
                rv__hit *h = heaps + q * kk;
                size_t *cnt = counts + q;
                float thr = *cnt < kk ? -INFINITY : h[0].s;
                for (size_t l = 0; l < lanes; l++) {
                    size_t row = r + l;
                    float s;
                    if (sr->mode == RV_FLAT_I8) {
                        int32_t d = itile[i * RV__PANEL + l] - 128 * ix->csum[row];
                        s = (float)d * ix->scale[row] * sr->qscale[q];
                    } else {
                        s = tile[i * RV__PANEL + l];
                    }
                    if (l2) s = 2.0f * s - ix->sqnorm[row];
                    if (s < thr || sr->skip[row]) continue;
                    rv__hit x = {s, ix->row_id[row], row};
                    rv__heap_push(h, cnt, kk, x);
                    thr = *cnt < kk ? -INFINITY : h[0].s;
                }
            }
        }
    }
}

/* Worker t of a pass's scan (rv__worker_fn): chunks are taken from a shared
** counter; each worker keeps its own heaps, merged afterwards. */
static void rv__scan_worker(void *ctx, unsigned t) {
    rv__search *sr = (rv__search *)ctx;
    for (;;) {
        if (atomic_load(&sr->stop)) break;
        size_t c = atomic_fetch_add(&sr->next_chunk, 1);
        if (c >= sr->n_chunks) break;
        rv__scan_chunk(sr, t, c);
        size_t done = atomic_fetch_add(&sr->done_chunks, 1) + 1;
        if (t == 0 && sr->progress &&
            sr->progress(sr->progress_ctx, sr->progress_base + done, sr->progress_total)) {
            sr->interrupted = 1;
            atomic_store(&sr->stop, 1);
        }
    }
}

/* Run the scan of one pass on n_threads threads (the caller is thread 0). */
static void rv__run_scan(rv__search *sr, unsigned n_threads) {
    atomic_init(&sr->next_chunk, 0);
    atomic_init(&sr->done_chunks, 0);
    atomic_init(&sr->stop, 0);
    rv__parallel_run(n_threads, rv__scan_worker, sr);
}

/* Check query i; *nn receives its squared norm. */
static rv_status rv__check_query(const rv_flat *ix, const float *q, size_t i, double *nn_out) {
    double nn = 0;
    for (size_t j = 0; j < ix->dim; j++) {
        if (!isfinite(q[j]))
            return rv__error(RV_E_INVALID_ARG, "queries[%zu][%zu] = %g: queries must be finite", i,
                             j, (double)q[j]);
        nn += (double)q[j] * q[j];
    }
    if (nn > (double)FLT_MAX)
        return rv__error(RV_E_RANGE, "queries[%zu]: its squared norm %g overflows float32", i, nn);
    if (ix->metric == RV_METRIC_COSINE && nn == 0)
        return rv__error(RV_E_INVALID_ARG, "queries[%zu] is a zero vector, which has no cosine", i);
    *nn_out = nn;
    return RV_OK;
}

rv_status rv_flat_check_queries(const rv_flat *ix, size_t n_queries, const float *queries) {
    RV__NOT_NULL(ix, "index");
    RV__CHECK_SIZE2(n_queries, ix->dim, sizeof *queries, "n_queries", "dim");
    if (n_queries == 0) return RV_OK;
    RV__NOT_NULL(queries, "queries");
    double nn;
    for (size_t i = 0; i < n_queries; i++) {
        rv_status st = rv__check_query(ix, queries + i * ix->dim, i, &nn);
        if (st) return st;
    }
    return RV_OK;
}

/* Check the queries and prepare them: normalised copies (cosine) and |q|^2
** (L2). */
static rv_status rv__prepare_queries(const rv_flat *ix, size_t nq, const float *queries,
                                     size_t base, float *qn, float *qsq) {
    size_t dim = ix->dim;
    for (size_t i = 0; i < nq; i++) {
        const float *q = queries + i * dim;
        double nn;
        rv_status st = rv__check_query(ix, q, base + i, &nn);
        if (st) return st;
        float inv = 1.0f;
        if (ix->metric == RV_METRIC_COSINE) inv = (float)(1.0 / sqrt(nn));
        for (size_t j = 0; j < dim; j++) qn[i * dim + j] = q[j] * inv;
        qsq[i] = (float)nn;
    }
    return RV_OK;
}

/* Exact internal score of a row for a prepared query (higher is better;
** L2 gives minus the squared distance). */
static float rv__exact_score(const rv_flat *ix, const float *q, size_t row, float *tmp) {
    const float *x = rv__flat_row(ix, row, tmp);
    if (ix->metric != RV_METRIC_L2) return ix->kern.dot(q, x, ix->dim);
    float acc[8] = {0};
    size_t j = 0, dim = ix->dim;
    for (; j + 8 <= dim; j += 8)
        for (int l = 0; l < 8; l++) {
            float d = q[j + l] - x[j + l];
            acc[l] += d * d;
        }
    for (int l = 0; j < dim; j++, l++) {
        float d = q[j] - x[j];
        acc[l] += d * d;
    }
    return -(((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7])));
}

/* Output score of an internal score. */
static float rv__out_score(const rv_flat *ix, float s, float qsq, int rescored) {
    if (ix->metric != RV_METRIC_L2) return s;
    if (rescored) return -s;
    float d = qsq - s;
    return d > 0 ? d : 0.0f;
}

static int rv__cmp_out_l2(const void *pa, const void *pb) {
    const rv__hit *a = (const rv__hit *)pa, *b = (const rv__hit *)pb;
    if (a->s != b->s) return a->s < b->s ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

void rv_flat_search_params_init(rv_flat_search_params *p) {
    if (!p) return;
    memset(p, 0, sizeof *p);
    p->k = 10;
}

/* Search step: the arguments rv_flat_search checks before it writes. */
static rv_status rv__search_check(const rv_flat *ix, const rv_flat_search_params *prm,
                                  size_t n_queries, size_t k) {
    /* the caller's ids and scores hold n_queries * k slots, the queries
    ** n_queries * dim floats; the engine's own buffers are sized by
    ** min(k * rescore factor, live rows) */
    RV__CHECK_SIZE2(n_queries, k, sizeof(int64_t), "n_queries", "k");
    RV__CHECK_SIZE2(n_queries, ix->dim, sizeof(float), "n_queries", "dim");
    if (prm->rescore_factor > RV__MAX_RESCORE)
        return rv__error(RV_E_INVALID_ARG, "rescore_factor = %u: must be in 0 .. %u",
                         (unsigned)prm->rescore_factor, RV__MAX_RESCORE);
    return RV_OK;
}

/* Search step: mark the rows a search skips (deleted, or outside the
** filter) in skip, list the panels holding an eligible row in plist, and
** count them.  A filter smaller than the index is translated id by id, a
** larger one row by row: O(min(filter, rows)) either way. */
static void rv__search_mask(const rv_flat *ix, const rv_idset *filter, uint8_t *skip, size_t *plist,
                            size_t *n_pan_out, size_t *eligible_out) {
    size_t n_pan_all = (ix->n_rows + RV__PANEL - 1) / RV__PANEL;
    if (!filter && ix->n_live == ix->n_rows) { /* every row, every panel */
        if (ix->n_rows) memset(skip, 0, ix->n_rows);
        for (size_t p = 0; p < n_pan_all; p++) plist[p] = p;
        *n_pan_out = n_pan_all;
        *eligible_out = ix->n_rows;
        return;
    }
    if (!filter) {
        if (ix->n_rows) memcpy(skip, ix->dead, ix->n_rows); /* dead is NULL when empty */
    } else if (filter->n < ix->n_rows) {
        memset(skip, 1, ix->n_rows);
        for (size_t i = 0; i < filter->n; i++) {
            size_t r = rv__map_find(ix, filter->ids[i]);
            if (r != SIZE_MAX) skip[r] = 0;
        }
    } else {
        for (size_t r = 0; r < ix->n_rows; r++)
            skip[r] = ix->dead[r] || !rv__idset_has(filter, ix->row_id[r]);
    }
    size_t eligible = 0, n_pan = 0;
    for (size_t p = 0; p < n_pan_all; p++) {
        size_t r0 = p * RV__PANEL, r1 = r0 + RV__PANEL, here = 0;
        if (r1 > ix->n_rows) r1 = ix->n_rows;
        for (size_t r = r0; r < r1; r++) here += !skip[r];
        if (here) plist[n_pan++] = p;
        eligible += here;
    }
    *n_pan_out = n_pan;
    *eligible_out = eligible;
}

/* Search step: pack nq prepared queries (rows of qn) into blocks of qb for
** the int8 kernel: offset-binary codes, 4 dimensions interleaved per query,
** with one scale per query. */
static void rv__pack_queries_i8(const rv_flat *ix, const float *qn, size_t nq, size_t nqb,
                                unsigned qb, uint8_t *qpack_b, float *qscale) {
    size_t dim = ix->dim;
    size_t d4 = ix->dim4;
    memset(qpack_b, 128, nqb * qb * d4);
    for (size_t i = 0; i < nqb * qb; i++) qscale[i] = 0;
    for (size_t i = 0; i < nq; i++) {
        const float *q = qn + i * dim;
        float maxabs = 0;
        for (size_t j = 0; j < dim; j++)
            if (fabsf(q[j]) > maxabs) maxabs = fabsf(q[j]);
        float inv = maxabs > 0 ? 127.0f / maxabs : 0.0f;
        qscale[i] = maxabs / 127.0f;
        uint8_t *blk = qpack_b + (i / qb) * qb * d4;
        size_t ii = i % qb;
        for (size_t j = 0; j < dim; j++) {
            long c = lrintf(q[j] * inv);
            if (c > 127) c = 127;
            if (c < -127) c = -127;
            blk[((j / 4) * qb + ii) * 4 + (j % 4)] = (uint8_t)(c + 128);
        }
    }
}

/* Search step: the screen's form of nq prepared queries (rows of qn):
** int16 codes qcode = round(q / qs), dim4 per query (zero past dim), with
** |qcode| <= qmax = min(32767, (2^31 - 1) / (127 dim4)) so that the
** int32 sums of rv__tile_q16_fn cannot overflow; and per query (qs, alpha,
** beta) for the bound of rv__scan_chunk_screen: with Q >= |q| and
** Eq >= |q - qs qcode| (both computed in double and enlarged by margins far
** above the double roundings), alpha = Q (1 + gamma_dim) and
** beta = Eq + gamma_dim Q + 8 u (Q + Eq), times 1 + 1e-6, rounded up to
** float.  qs is a float, so the screen's float products use it exactly.
** qnz receives per query (dim4 / 4 + 1 entries) the number of dimension
** quads holding a nonzero code, then those quads in increasing order: the
** screen of a sparse query reads only their panel lines (rv__tile_q16s_fn). */
static void rv__pack_queries_q16(const rv_flat *ix, const float *qn, size_t nq, int16_t *q16,
                                 float *qbound, uint32_t *qnz) {
    size_t dim = ix->dim, d4 = ix->dim4;
    double u = ldexp(1.0, -24), nu = (double)dim * u;
    double gam = nu / (1.0 - nu);
    double qmax = (double)(2147483647u / (127u * (unsigned)d4));
    if (qmax > 32767.0) qmax = 32767.0;
    const float fqmax = (float)qmax, magic = 0x1.8p23f;
    for (size_t i = 0; i < nq; i++) {
        const float *q = qn + i * dim;
        int16_t *c = q16 + i * d4;
        /* |q|^2 and later |q - qh|^2 in four interleaved double sums: any
        ** order errs by far less than the margins below */
        float maxabs = 0;
        double n2[4] = {0, 0, 0, 0}, e2[4] = {0, 0, 0, 0};
        for (size_t j = 0; j < dim; j++) {
            float a = fabsf(q[j]);
            maxabs = a > maxabs ? a : maxabs;
        }
        size_t j4 = dim / 4 * 4;
        for (size_t j = 0; j < j4; j += 4)
            for (size_t t = 0; t < 4; t++) n2[t] += (double)q[j + t] * q[j + t];
        for (size_t j = j4; j < dim; j++) n2[j - j4] += (double)q[j] * q[j];
        /* a float, so that the screen's float products use it exactly */
        float qsf = maxabs > 0 ? (float)((double)maxabs / qmax) : 0.0f;
        float inv = qsf > 0 ? 1.0f / qsf : 0.0f;
        if (qsf > 0 && inv <= FLT_MAX) {
            /* Codes in float: |q inv| <= qmax (1 + 2^-22) < 2^22, where
            ** adding and taking away 1.5 * 2^23 rounds to the nearest
            ** integer.  Any integer code in range keeps the bound valid
            ** (the error below is that of the codes written), so the
            ** rounding need not be the correctly rounded q / qs. */
            for (size_t j = 0; j < dim; j++) {
                float r = (q[j] * inv + magic) - magic;
                r = r > fqmax ? fqmax : r;
                r = r < -fqmax ? -fqmax : r;
                c[j] = (int16_t)r;
            }
        } else { /* qs subnormal or zero: double division */
            for (size_t j = 0; j < dim; j++) {
                double k = 0;
                if (qsf > 0) {
                    k = nearbyint((double)q[j] / (double)qsf);
                    if (k > qmax) k = qmax;
                    if (k < -qmax) k = -qmax;
                }
                c[j] = (int16_t)k;
            }
        }
        for (size_t j = dim; j < d4; j++) c[j] = 0;
        /* the quads holding a nonzero code (the others add nothing) */
        uint32_t *nz = qnz + i * (d4 / 4 + 1), n_nz = 0;
        for (size_t j = 0; j < d4; j += 4)
            if (c[j] | c[j + 1] | c[j + 2] | c[j + 3]) nz[1 + n_nz++] = (uint32_t)(j / 4);
        nz[0] = n_nz;
        double qs = (double)qsf;
        for (size_t j = 0; j < j4; j += 4)
            for (size_t t = 0; t < 4; t++) {
                double d = (double)q[j + t] - qs * (double)c[j + t]; /* qs c: exact */
                e2[t] += d * d;
            }
        for (size_t j = j4; j < dim; j++) {
            double d = (double)q[j] - qs * (double)c[j];
            e2[j - j4] += d * d;
        }
        double Q = sqrt((n2[0] + n2[1]) + (n2[2] + n2[3])) * (1.0 + 1e-6);
        double Eq = sqrt((e2[0] + e2[1]) + (e2[2] + e2[3])) * (1.0 + 1e-6) + 1e-12 * Q;
        qbound[3 * i] = qsf;
        qbound[3 * i + 1] = rv__float_up(Q * (1.0 + gam) * (1.0 + 1e-6));
        qbound[3 * i + 2] = rv__float_up((Eq + gam * Q + 8.0 * u * (Q + Eq)) * (1.0 + 1e-6));
    }
}

/* Search step: pack nq prepared queries into blocks of qb, dimension-major,
** for the float32 and float16 kernels. */
static void rv__pack_queries_f(size_t dim, const float *qn, size_t nq, size_t nqb, unsigned qb,
                               float *qpack_f) {
    memset(qpack_f, 0, nqb * qb * dim * sizeof *qpack_f);
    for (size_t i = 0; i < nq; i++) {
        float *blk = qpack_f + (i / qb) * qb * dim;
        size_t ii = i % qb;
        for (size_t j = 0; j < dim; j++) blk[j * qb + ii] = qn[i * dim + j];
    }
}

/* Search step: merge query i's per-thread heaps into its k results (scores
** re-ranked in float32 for float16/int8 storage, output scores by metric),
** written to oid/osc. */
static void rv__search_merge(const rv__search *sr, unsigned T, size_t i, size_t k,
                             const float *qrow, float qsq, rv__hit *merged, float *tmp,
                             int64_t *oid, float *osc) {
    const rv_flat *ix = sr->ix;
    size_t nq = sr->nq, kk = sr->kk;
    int mode = sr->mode;
    const rv__hit *heaps = sr->heaps;
    const size_t *counts = sr->counts;
    size_t m = 0;
    for (unsigned t = 0; t < T; t++) {
        const rv__hit *h = heaps + ((size_t)t * nq + i) * kk;
        size_t c = counts[(size_t)t * nq + i];
        memcpy(merged + m, h, c * sizeof *h);
        m += c;
    }
    rv__sort_hits(merged, m);
    if (m > kk) m = kk;
    int rescored = mode == RV__MODE_ROWS || mode == RV__MODE_SCREEN;
    if (mode == RV_FLAT_F16 || mode == RV_FLAT_I8) {
        for (size_t c = 0; c < m; c++) merged[c].s = rv__exact_score(ix, qrow, merged[c].row, tmp);
        rv__sort_hits(merged, m);
        rescored = 1;
    }
    size_t out_n = m < k ? m : k;
    for (size_t c = 0; c < out_n; c++) merged[c].s = rv__out_score(ix, merged[c].s, qsq, rescored);
    if (ix->metric == RV_METRIC_L2) qsort(merged, out_n, sizeof *merged, rv__cmp_out_l2);
    for (size_t c = 0; c < out_n; c++) {
        oid[c] = merged[c].id;
        osc[c] = merged[c].s;
    }
}

/* How a search is cut up: queries per pass, query block size, row chunks
** and threads. */
typedef struct rv__search_plan {
    size_t per_pass;     /* queries per pass (heaps stay within ~96 MB per thread) */
    unsigned qb;         /* queries per kernel block */
    size_t max_nqb;      /* query blocks in a full pass */
    size_t chunk_panels; /* panels per work chunk (~384 KiB of rows) */
    size_t n_chunks;
    unsigned T; /* threads (core/parallel.h) */
} rv__search_plan;

/* Search step: plan a search of nq_all queries over n_pan panels keeping kk
** candidates per query in the given mode. */
static void rv__search_plan_make(const rv_flat *ix, int mode, size_t kk, size_t nq_all,
                                 size_t n_pan, uint32_t n_threads, rv__search_plan *pl) {
    size_t dim = ix->dim;
    size_t per_pass = ((size_t)4 << 20) / kk;
    if (per_pass < 1) per_pass = 1;
    if (per_pass > 1024) per_pass = 1024;
    if (per_pass > nq_all) per_pass = nq_all;
    unsigned qb = mode == RV_FLAT_F16       ? ix->kern.qb_f16
                  : mode == RV_FLAT_I8      ? ix->kern.qb_i8
                  : mode == RV__MODE_SCREEN ? 1u
                                            : ix->kern.qb_f32;
    size_t eb = mode == RV_FLAT_F16 ? 2 : (mode == RV_FLAT_I8 || mode == RV__MODE_SCREEN) ? 1 : 4;
    size_t chunk = (size_t)393216 / ((size_t)dim * eb);
    chunk = chunk / RV__PANEL * RV__PANEL;
    if (chunk < RV__PANEL) chunk = RV__PANEL;
    if (chunk > 1024) chunk = 1024;
    pl->per_pass = per_pass;
    pl->qb = qb;
    pl->max_nqb = (per_pass + qb - 1) / qb;
    pl->chunk_panels = chunk / RV__PANEL;
    pl->n_chunks = (n_pan + pl->chunk_panels - 1) / pl->chunk_panels;
    /* work: row-query-dimension products; below 2^21 one thread */
    double work = (double)n_pan * RV__PANEL * (double)nq_all * (double)dim;
    pl->T = rv__threads_for(n_threads, pl->n_chunks, work, (double)(1u << 21));
    /* The exact int8 screen of one query on one thread over at most 4096
    ** rows and 2^24 row-dimension products (a few ms at most): one chunk,
    ** since no block of queries reuses a chunk from the cache; fewer chunk
    ** set-ups and progress callbacks (which take the GIL from Python). */
    if (pl->T == 1 && nq_all == 1 && mode == RV__MODE_SCREEN && n_pan && n_pan <= 256 &&
        work <= (double)(1u << 24)) {
        pl->chunk_panels = n_pan;
        pl->n_chunks = 1;
    }
}

/* The working buffers of one search: one allocation (block), carved into
** pieces 64-byte multiples apart (each as aligned as the block), so a small
** search pays for one malloc and one free.  Every piece is private to the call (concurrent searches share
** nothing). */
typedef struct rv__search_bufs {
    void *block;             /* the allocation behind every piece */
    float *qn, *qsq;         /* prepared queries and |q|^2 (one pass) */
    float *qpack_f, *qscale; /* packed float queries, or int8 scales */
    uint8_t *qpack_b;        /* packed int8 queries */
    int16_t *q16;            /* screen: int16 query codes */
    float *qbound;           /* screen: 3 per query */
    uint32_t *qnz;           /* screen: dim4 / 4 + 1 per query */
    float *sc_u;             /* screen: [T][chunk rows] */
    size_t *sc_row;          /* screen: [T][chunk rows] */
    double *sc_lb;           /* screen: [T][4 kk] */
    rv__hit *heaps;          /* [T][per_pass][kk] */
    size_t *counts;          /* [T][per_pass] */
    float *tiles;            /* [T][qb * panel] */
    rv__hit *merged;         /* T * kk */
    float *tmp;              /* one decoded row */
} rv__search_bufs;

static void rv__search_bufs_free(rv__search_bufs *b) {
    rv__free(b->block);
    memset(b, 0, sizeof *b);
}

/* Search step: allocate the buffers of a plan.  RV_E_NOMEM (nothing held). */
static rv_status rv__search_bufs_alloc(const rv_flat *ix, int mode, size_t kk,
                                       const rv__search_plan *pl, rv__search_bufs *b) {
    size_t dim = ix->dim, per_pass = pl->per_pass, max_nqb = pl->max_nqb;
    size_t qb = pl->qb, T = pl->T, cr = pl->chunk_panels * RV__PANEL;
    memset(b, 0, sizeof *b);
    int i8 = mode == RV_FLAT_I8, scr = mode == RV__MODE_SCREEN, fl = !i8 && !scr;
    /* The pieces (field, count, wanted), 64-byte multiples apart: a first
    ** pass sums their sizes, a second one points each field into the block
    ** (a piece not wanted stays NULL). */
#define RV__PIECES(X)                                                                              \
    X(qn, per_pass *dim, 1)                                                                        \
    X(qsq, per_pass, 1)                                                                            \
    X(qpack_b, max_nqb * qb * ix->dim4, i8)                                                        \
    X(qscale, max_nqb *qb, i8)                                                                     \
    X(q16, per_pass * ix->dim4, scr)                                                               \
    X(qbound, per_pass * 3, scr)                                                                   \
    X(qnz, per_pass *(ix->dim4 / 4 + 1), scr)                                                      \
    X(sc_u, T *cr, scr)                                                                            \
    X(sc_row, T *cr, scr)                                                                          \
    X(sc_lb, T * 4 * kk, scr)                                                                      \
    X(qpack_f, max_nqb * qb * dim, fl)                                                             \
    X(heaps, T * per_pass * kk, 1)                                                                 \
    X(counts, T *per_pass, 1)                                                                      \
    X(tiles, T * qb * RV__PANEL, 1)                                                                \
    X(merged, T *kk, 1)                                                                            \
    X(tmp, dim, 1)
    size_t total = 0;
    int ok = 1;
#define RV__SIZE(field, count, want)                                                               \
    if (want) {                                                                                    \
        size_t c_ = (count), sz_;                                                                  \
        if (c_ > (SIZE_MAX - 64) / sizeof *b->field) ok = 0;                                       \
        sz_ = ok ? rv__round_up(c_ * sizeof *b->field, 64) : 0;                                    \
        if (total > SIZE_MAX - sz_) ok = 0;                                                        \
        total += ok ? sz_ : 0;                                                                     \
    }
    RV__PIECES(RV__SIZE)
#undef RV__SIZE
    char *blk = ok ? (char *)rv__malloc(total) : NULL;
    if (!blk) return rv__nomem("the search buffers");
    b->block = blk;
    size_t off = 0;
#define RV__POINT(field, count, want)                                                              \
    if (want) {                                                                                    \
        b->field = (void *)(blk + off);                                                            \
        off += rv__round_up((count) * sizeof *b->field, 64);                                       \
    }
    RV__PIECES(RV__POINT)
#undef RV__POINT
#undef RV__PIECES
    return RV_OK;
}

rv_status rv_flat_search(const rv_flat *ix, const rv_flat_search_params *prm, size_t n_queries,
                         const float *queries, int64_t *ids, float *scores, size_t *n_found) {
    if (n_found) *n_found = 0;
    RV__NOT_NULL(ix, "index");
    RV__NOT_NULL(prm, "params");
    RV__NOT_NULL(n_found, "n_found");
    size_t k = prm->k;
    if (k == 0) return rv__error(RV_E_INVALID_ARG, "k = 0: k must be >= 1");
    rv_status st = rv__search_check(ix, prm, n_queries, k);
    if (st) return st;
    if (n_queries == 0) return RV_OK;
    RV__NOT_NULL(queries, "queries");
    RV__NOT_NULL(ids, "ids");
    RV__NOT_NULL(scores, "scores");
    size_t dim = ix->dim, nq_all = n_queries;
    for (size_t i = 0; i < nq_all * k; i++) {
        ids[i] = -1;
        scores[i] = NAN;
    }

    /* Which storage to scan and how many candidates to keep. */
    int mode = (int)ix->storage;
    if (prm->exact && mode != RV_FLAT_F32)
        mode = mode == RV_FLAT_I8 && ix->metric != RV_METRIC_L2 ? RV__MODE_SCREEN : RV__MODE_ROWS;
    size_t kk = k;
    if (mode == RV_FLAT_F16 || mode == RV_FLAT_I8) {
        size_t f = prm->rescore_factor ? prm->rescore_factor : ix->rescore_factor;
        kk = k > SIZE_MAX / f ? SIZE_MAX : k * f;
    }
    /* Eligible rows (live and allowed) and the panels holding them. */
    uint8_t *skip = (uint8_t *)rv__malloc(ix->n_rows ? ix->n_rows : 1);
    size_t n_pan_all = (ix->n_rows + RV__PANEL - 1) / RV__PANEL;
    size_t *plist = (size_t *)rv__malloc((n_pan_all ? n_pan_all : 1) * sizeof *plist);
    if (!skip || !plist) {
        rv__free(skip);
        rv__free(plist);
        return rv__nomem("the row mask");
    }
    size_t eligible = 0, n_pan = 0;
    rv__search_mask(ix, prm->filter, skip, plist, &n_pan, &eligible);
    if (kk > eligible) kk = eligible;
    size_t found = k < eligible ? k : eligible;
    if (found == 0) {
        rv__free(skip);
        rv__free(plist);
        return RV_OK;
    }

    rv__search_plan pl;
    rv__search_plan_make(ix, mode, kk, nq_all, n_pan, prm->n_threads, &pl);
    size_t per_pass = pl.per_pass;
    size_t chunk_panels = pl.chunk_panels, n_chunks = pl.n_chunks;
    unsigned qb = pl.qb, T = pl.T;

    rv__search_bufs bf;
    st = rv__search_bufs_alloc(ix, mode, kk, &pl, &bf);
    float *qn = bf.qn, *qsq = bf.qsq;
    size_t *counts = bf.counts;

    size_t n_pass = (nq_all + per_pass - 1) / per_pass;
    rv__search sr;
    memset(&sr, 0, sizeof sr);
    sr.ix = ix;
    sr.kk = kk;
    sr.qb = qb;
    sr.mode = mode;
    sr.skip = skip;
    sr.panels = plist;
    sr.chunk_panels = chunk_panels;
    sr.n_panels = n_pan;
    sr.n_chunks = n_chunks;
    sr.heaps = bf.heaps;
    sr.counts = counts;
    sr.tiles = bf.tiles;
    sr.progress = prm->progress;
    sr.progress_ctx = prm->progress_ctx;
    sr.progress_total = (uint64_t)n_chunks * n_pass;

    for (size_t pass = 0; !st && pass < n_pass; pass++) {
        size_t qa = pass * per_pass, nq = nq_all - qa;
        if (nq > per_pass) nq = per_pass;
        st = rv__prepare_queries(ix, nq, queries + qa * dim, qa, qn, qsq);
        if (st) break;
        size_t nqb = (nq + qb - 1) / qb;
        if (mode == RV_FLAT_I8)
            rv__pack_queries_i8(ix, qn, nq, nqb, qb, bf.qpack_b, bf.qscale);
        else if (mode == RV__MODE_SCREEN)
            rv__pack_queries_q16(ix, qn, nq, bf.q16, bf.qbound, bf.qnz);
        else
            rv__pack_queries_f(dim, qn, nq, nqb, qb, bf.qpack_f);
        sr.nq = nq;
        sr.nqb = nqb;
        sr.qpack_f = bf.qpack_f;
        sr.qpack_b = bf.qpack_b;
        sr.qscale = bf.qscale;
        sr.qrows = qn;
        sr.q16 = bf.q16;
        sr.qbound = bf.qbound;
        sr.qnz = bf.qnz;
        sr.sc_u = bf.sc_u;
        sr.sc_row = bf.sc_row;
        sr.sc_lb = bf.sc_lb;
        sr.progress_base = (uint64_t)pass * n_chunks;
        memset(counts, 0, (size_t)T * nq * sizeof *counts);
        rv__run_scan(&sr, T);
        if (sr.interrupted) {
            st = rv__error(RV_E_INTERRUPTED, "search interrupted by the progress callback");
            break;
        }
        for (size_t i = 0; i < nq; i++)
            rv__search_merge(&sr, T, i, k, qn + i * dim, qsq[i], bf.merged, bf.tmp,
                             ids + (qa + i) * k, scores + (qa + i) * k);
    }
    rv__search_bufs_free(&bf);
    rv__free(skip);
    rv__free(plist);
    if (st) {
        for (size_t i = 0; i < nq_all * k; i++) {
            ids[i] = -1;
            scores[i] = NAN;
        }
        return st;
    }
    *n_found = found;
    return RV_OK;
}

/* ------------------------------------------------------------- rescore */

typedef struct rv__rescore_job {
    const rv_flat *ix;
    size_t nq, n_cand, k;
    const float *qn, *qsq;
    const size_t *rows; /* nq * n_cand rows, SIZE_MAX = skip */
    rv__hit *scratch;   /* per thread n_cand hits */
    float *tmp;         /* per thread dim floats */
    int64_t *ids;
    float *scores;
    size_t *n_found;
    unsigned T;
} rv__rescore_job;

/* Worker t re-scores queries t, t + T, ... (rv__worker_fn). */
static void rv__rescore_worker(void *ctx, unsigned t) {
    rv__rescore_job *jb = (rv__rescore_job *)ctx;
    const rv_flat *ix = jb->ix;
    size_t dim = ix->dim;
    rv__hit *hits = jb->scratch + (size_t)t * jb->n_cand;
    float *tmp = jb->tmp + (size_t)t * dim;
    for (size_t i = t; i < jb->nq; i += jb->T) {
        const size_t *rows = jb->rows + i * jb->n_cand;
        size_t m = 0;
        for (size_t c = 0; c < jb->n_cand; c++) {
            if (rows[c] == SIZE_MAX) continue;
            rv__hit h = {rv__exact_score(ix, jb->qn + i * dim, rows[c], tmp), ix->row_id[rows[c]],
                         rows[c]};
            hits[m++] = h;
        }
        qsort(hits, m, sizeof *hits, rv__cmp_hit);
        size_t out_n = m < jb->k ? m : jb->k;
        for (size_t c = 0; c < out_n; c++) hits[c].s = rv__out_score(ix, hits[c].s, jb->qsq[i], 1);
        if (ix->metric == RV_METRIC_L2) qsort(hits, out_n, sizeof *hits, rv__cmp_out_l2);
        for (size_t c = 0; c < out_n; c++) {
            jb->ids[i * jb->k + c] = hits[c].id;
            jb->scores[i * jb->k + c] = hits[c].s;
        }
        jb->n_found[i] = out_n;
    }
}

rv_status rv_flat_rescore(const rv_flat *ix, size_t n_queries, const float *queries, size_t n_cand,
                          const int64_t *cand, size_t k, uint32_t n_threads, int64_t *ids,
                          float *scores, size_t *n_found) {
    RV__NOT_NULL(ix, "index");
    if (k == 0) return rv__error(RV_E_INVALID_ARG, "k = 0: k must be >= 1");
    RV__CHECK_SIZE2(n_queries, k, sizeof *ids, "n_queries", "k");
    RV__CHECK_SIZE2(n_queries, n_cand, sizeof *cand, "n_queries", "n_cand");
    RV__CHECK_SIZE2(n_queries, ix->dim, sizeof *queries, "n_queries", "dim");
    if (n_queries == 0) return RV_OK;
    RV__NOT_NULL(queries, "queries");
    if (!cand && n_cand)
        return rv__error(RV_E_INVALID_ARG, "cand is NULL but n_cand = %zu", n_cand);
    RV__NOT_NULL(ids, "ids");
    RV__NOT_NULL(scores, "scores");
    RV__NOT_NULL(n_found, "n_found");
    for (size_t i = 0; i < n_queries * k; i++) {
        ids[i] = -1;
        scores[i] = NAN;
    }
    for (size_t i = 0; i < n_queries; i++) n_found[i] = 0;
    size_t dim = ix->dim, total = n_queries * n_cand;
    rv_status st = RV_OK;
    size_t *rows = (size_t *)rv__malloc((total ? total : 1) * sizeof *rows);
    int64_t *sorted = (int64_t *)rv__malloc((n_cand ? n_cand : 1) * sizeof *sorted);
    float *qn = (float *)rv__malloc(n_queries * dim * sizeof *qn);
    float *qsq = (float *)rv__malloc(n_queries * sizeof *qsq);
    if (!rows || !sorted || !qn || !qsq) st = rv__nomem("the rescoring buffers");
    if (!st) st = rv__prepare_queries(ix, n_queries, queries, 0, qn, qsq);
    /* Resolve ids to rows on this thread; repeated ids count once. */
    for (size_t i = 0; !st && n_cand && i < n_queries; i++) { /* (cand may be NULL without) */
        const int64_t *c = cand + i * n_cand;
        memcpy(sorted, c, n_cand * sizeof *sorted);
        qsort(sorted, n_cand, sizeof *sorted, rv__cmp_i64);
        size_t u = 0;
        for (size_t j = 0; j < n_cand; j++)
            if (sorted[j] != -1 && (u == 0 || sorted[u - 1] != sorted[j])) sorted[u++] = sorted[j];
        for (size_t j = 0; j < n_cand; j++) rows[i * n_cand + j] = SIZE_MAX;
        for (size_t j = 0; j < u; j++) {
            size_t r = sorted[j] < 0 ? SIZE_MAX : rv__map_find(ix, sorted[j]);
            if (r == SIZE_MAX) {
                st = rv__error(RV_E_RANGE, "candidate id %lld (query %zu) is not in the index",
                               (long long)sorted[j], i);
                break;
            }
            rows[i * n_cand + j] = r;
        }
    }
    /* work: candidate-dimension products; below 2^20 one thread */
    unsigned T = rv__threads_for(n_threads, n_queries, (double)total * dim, (double)(1u << 20));
    rv__hit *scratch = NULL;
    float *tmp = NULL;
    if (!st && !rv__fits2(T, n_cand, sizeof *scratch)) st = rv__nomem("the rescoring buffers");
    if (!st) {
        scratch = (rv__hit *)rv__malloc((size_t)T * (n_cand ? n_cand : 1) * sizeof *scratch);
        tmp = (float *)rv__malloc((size_t)T * dim * sizeof *tmp);
        if (!scratch || !tmp) st = rv__nomem("the rescoring buffers");
    }
    if (!st) {
        rv__rescore_job jb = {ix,      n_queries, n_cand, k,      qn,      qsq, rows,
                              scratch, tmp,       ids,    scores, n_found, T};
        rv__parallel_run(T, rv__rescore_worker, &jb);
    }
    rv__free(rows);
    rv__free(sorted);
    rv__free(qn);
    rv__free(qsq);
    rv__free(scratch);
    rv__free(tmp);
    return st;
}
