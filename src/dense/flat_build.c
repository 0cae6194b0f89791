/*
** The flat (exact) vector index: create and free, adding vectors (checked,
** normalised under cosine, written into the panels of their storage),
** deletes, compaction, the id -> row map and the accessors.  Searching is
** flat_search.c's; files are flat_io.c's.
*/
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* MADV_POPULATE_WRITE */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flat_internal.h"

#if defined(__linux__)
#  include <sys/mman.h>
#endif

/* ------------------------------------------------------------ id -> row */

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

/* Fault in a fresh allocation's pages with one call (Linux 5.14 and later)
** instead of one fault per page as they are first written: about a tenth of
** a 100,000-vector load.  Advice only: elsewhere the pages fault in as
** before. */
static void rv__populate(void *p, size_t bytes) {
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
    uintptr_t a = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
    uintptr_t b = ((uintptr_t)p + bytes) & ~(uintptr_t)4095;
    if (b > a) (void)madvise((void *)a, (size_t)(b - a), MADV_POPULATE_WRITE);
#else
    (void)p;
    (void)bytes;
#endif
}

/* Make room for `rows` rows: growing by half again (amortised adds), or to
** exactly `rows` rounded up to a panel when `exact` (a load that knows its
** size, so that the vectors are allocated and copied once).  On failure
** nothing observable changes. */
static rv_status rv__reserve_rows(rv_flat *ix, size_t rows, int exact) {
    if (rows <= ix->cap_rows) return RV_OK;
    size_t cap = ix->cap_rows ? ix->cap_rows : 64;
    if (exact) cap = rows;
    while (cap < rows) {
        if (cap > SIZE_MAX / 2) return rv__nomem("the vectors");
        cap = cap + cap / 2;
    }
    if (cap > SIZE_MAX - RV__PANEL) return rv__nomem("the vectors");
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
    if (exact) rv__populate(raw, n_pan * pb + 64);
    size_t used = rv__round_up(ix->n_rows, RV__PANEL) / RV__PANEL * pb;
    if (used) memcpy(pan, ix->panels, used);
    memset((char *)pan + used, 0, n_pan * pb - used);
    rv__free(ix->panels_raw);
    ix->panels_raw = raw;
    ix->panels = pan;
    ix->cap_rows = cap;
    return RV_OK;
}

rv_status rv__flat_reserve(rv_flat *ix, size_t rows) {
    RV__NOT_NULL(ix, "index");
    rv_status st = rv__reserve_rows(ix, rows, 1);
    if (st) return st;
    if (ix->rows) rv__populate(ix->rows, ix->cap_rows * ix->dim * sizeof(float));
    return rv__map_reserve(ix, rows);
}

/* v rounded to the nearest integer, ties to even (lrintf's rounding in the
** default rounding mode), for |v| < 2^22: adding and subtracting 1.5 * 2^23
** leaves no fraction bits.  Unlike lrintf, no library call per element. */
static inline float rv__round_even(float v) {
    const float m = 12582912.0f; /* (no -ffast-math here: never folded away) */
    return (v + m) - m;
}

/* The same in double, for |v| < 2^51 (1.5 * 2^52). */
static inline double rv__round_even_double(double v) {
    const double m = 6755399441055744.0;
    return (v + m) - m;
}

/* Write a (validated, already normalised) vector into row r; nn is its
** squared norm, summed in double in index order (sqnorm's value, bit for
** bit, whoever computed it). */
static void rv__store_row(rv_flat *ix, size_t r, const float *x, double nn) {
    size_t dim = ix->dim, p = r / RV__PANEL, l = r % RV__PANEL;
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
    /* int8: symmetric, one scale per vector: x ~= scale * code.  The
    ** largest |x[j]| in 8 lanes (a maximum is the same in any order). */
    float lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    size_t j8 = dim / 8 * 8;
    for (size_t j = 0; j < j8; j += 8)
        for (size_t t = 0; t < 8; t++) {
            float a = fabsf(x[j + t]);
            lane[t] = a > lane[t] ? a : lane[t];
        }
    float maxabs = 0;
    for (size_t t = 0; t < 8; t++) maxabs = lane[t] > maxabs ? lane[t] : maxabs;
    for (size_t j = j8; j < dim; j++) {
        float a = fabsf(x[j]);
        if (a > maxabs) maxabs = a;
    }
    float scale = maxabs / 127.0f, inv = maxabs > 0 ? 127.0f / maxabs : 0.0f;
    /* a vector whose largest |x| is below 127 / FLT_MAX (about 4e-37):
    ** 127 / max|x| overflows float, so its codes are computed in double
    ** (x * inv would be infinite, or NaN for a zero) */
    int wide = isinf(inv);
    double wide_inv = wide ? 127.0 / (double)maxabs : 0.0;
    int8_t *pan = (int8_t *)ix->panels + p * (size_t)ix->dim4 * RV__PANEL;
    int32_t sum = 0;
    /* the bounds' sums in four double accumulators (they need not be
    ** summed in any one order: see the margins below) */
    double e2[4] = {0, 0, 0, 0}, c2[4] = {0, 0, 0, 0};
    for (size_t j = 0; j < dim; j++) {
        /* |x[j] * inv| <= 127 (and a little) */
        float c = wide ? (float)rv__round_even_double((double)x[j] * wide_inv)
                       : rv__round_even(x[j] * inv);
        if (c > 127.0f) c = 127.0f;
        if (c < -127.0f) c = -127.0f;
        pan[(j / 4) * 64 + l * 4 + (j % 4)] = (int8_t)c;
        sum += (int32_t)c;
        double xh = (double)scale * (double)c; /* exact: 24 x 8 bits */
        double d = (double)x[j] - xh;
        e2[j % 4] += d * d;
        c2[j % 4] += xh * xh;
    }
    ix->scale[r] = scale;
    ix->csum[r] = sum;
    /* the screen's bounds, rounded up: the relative and absolute margins
    ** cover every rounding of the double sums above, in any order, many
    ** times over */
    double e = (e2[0] + e2[1]) + (e2[2] + e2[3]), c = (c2[0] + c2[1]) + (c2[2] + c2[3]);
    ix->qerr[r] = rv__float_up(sqrt(e) * (1.0 + 1e-6) + 1e-12 * sqrt(nn));
    ix->qnorm[r] = rv__float_up(sqrt(c) * (1.0 + 1e-6));
}

const float *rv__flat_row(const rv_flat *ix, size_t r, float *tmp) {
    if (ix->storage != RV_FLAT_F32) return ix->rows + r * ix->dim;
    const float *pan = (const float *)ix->panels + (r / RV__PANEL) * ix->dim * RV__PANEL;
    size_t l = r % RV__PANEL;
    for (size_t j = 0; j < ix->dim; j++) tmp[j] = pan[j * RV__PANEL + l];
    return tmp;
}

/* Check one input vector; *inv receives the factor to store it with, *sq
** its squared norm (summed in double in index order). */
static rv_status rv__check_vector(const rv_flat *ix, const float *x, size_t i, const char *what,
                                  int norm_given, float *inv, double *sq) {
    double nn = 0;
    for (size_t j = 0; j < ix->dim; j++) {
        if (!isfinite(x[j]))
            return rv__error(RV_E_INVALID_ARG, "%s[%zu][%zu] = %g: vectors must be finite", what, i,
                             j, (double)x[j]);
        nn += (double)x[j] * x[j];
    }
    *sq = nn;
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

static rv_status rv__flat_add_checked(rv_flat *ix, size_t n, const float *vectors,
                                      const int64_t *ids, int64_t *assigned, int norm_given,
                                      const double *sq);

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
    /* each vector's squared norm, from the checks for the stores */
    double *sq = (double *)rv__malloc(n * sizeof *sq);
    if (!sq) return rv__nomem("the vectors' norms");
    float inv;
    for (size_t i = 0; i < n; i++) {
        rv_status st =
            rv__check_vector(ix, vectors + i * dim, i, "vectors", norm_given, &inv, sq + i);
        if (st) {
            rv__free(sq);
            return st;
        }
    }
    rv_status st = rv__flat_add_checked(ix, n, vectors, ids, assigned, norm_given, sq);
    rv__free(sq);
    return st;
}

/* rv__flat_add past the vectors' checks (sq: their squared norms). */
static rv_status rv__flat_add_checked(rv_flat *ix, size_t n, const float *vectors,
                                      const int64_t *ids, int64_t *assigned, int norm_given,
                                      const double *sq) {
    size_t dim = ix->dim;
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
    rv_status st = rv__reserve_rows(ix, ix->n_rows + n, 0);
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
        double nn = sq[i];
        if (tmp) {
            /* normalised: the stored vector's own norm */
            float inv = (float)(1.0 / sqrt(nn));
            for (size_t j = 0; j < dim; j++) tmp[j] = x[j] * inv;
            x = tmp;
            nn = 0;
            for (size_t j = 0; j < dim; j++) nn += (double)x[j] * x[j];
        }
        size_t r = ix->n_rows + i;
        int64_t id = ids ? ids[i] : ix->next_id + (int64_t)i;
        rv__store_row(ix, r, x, nn);
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
    if (!st) st = rv__flat_reserve(nx, ix->n_live);
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
