/*
** The flat (exact) vector index's searches: batched top-k search on several
** threads (rv_flat_search) and exact re-scoring of given candidates
** (rv_flat_rescore).  The exact search of an int8 index screens with its
** int8 copy (flat_screen.c); storage and ids are flat_build.c's.
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
#include "../core/score_sort.h"
#include "flat_internal.h"

static int rv__cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* --------------------------------------------------------------- search */

#define RV__RADIX_HITS 64 /* hits from which rv__sort_hits sorts by radix */

/* h[0 .. n) in result order (rv__hit_better) by insertion. */
static void rv__insert_hits(rv__hit *h, size_t n) {
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

static void rv__swap_hits(rv__hit *a, rv__hit *b) {
    rv__hit t = *a;
    *a = *b;
    *b = t;
}

/* Sort hits best first: higher score, then lower id (rv__hit_better; a
** total order when ids are distinct, as they are among one query's hits,
** so every correct sort gives the same array).  Introsort: quicksort on a
** median-of-three pivot, recursing into the smaller part; heapsort past
** 2 log2(n) levels; insertion sort below 24 hits.  The comparison is
** inlined: qsort's call per comparison was 19 % of a k = 500 search on
** Cranfield.  Every index stays in bounds whatever the comparisons say (a
** NaN score cannot make it read or write outside h). */
static void rv__sort_hits_cmp(rv__hit *h, size_t n) {
    size_t depth = 0;
    for (size_t m = n; m > 1; m >>= 1) depth += 2;
    while (n > 24) {
        if (depth-- == 0) {
            for (size_t i = n / 2; i-- > 0;) rv__sift_hits(h, n, i);
            for (size_t m = n; m-- > 1;) {
                rv__swap_hits(&h[0], &h[m]);
                rv__sift_hits(h, m, 0);
            }
            return;
        }
        /* the median of the first, middle and last hits, moved to the end */
        rv__hit *a = &h[0], *b = &h[n / 2], *c = &h[n - 1];
        rv__hit *med = rv__hit_better(a->s, a->id, b->s, b->id)
                           ? (rv__hit_better(b->s, b->id, c->s, c->id)
                                  ? b
                                  : (rv__hit_better(a->s, a->id, c->s, c->id) ? c : a))
                           : (rv__hit_better(a->s, a->id, c->s, c->id)
                                  ? a
                                  : (rv__hit_better(b->s, b->id, c->s, c->id) ? c : b));
        rv__swap_hits(med, &h[n - 1]);
        rv__hit p = h[n - 1];
        size_t lt = 0; /* [0, lt) before the pivot */
        for (size_t i = 0; i + 1 < n; i++)
            if (rv__hit_better(h[i].s, h[i].id, p.s, p.id)) rv__swap_hits(&h[i], &h[lt++]);
        rv__swap_hits(&h[lt], &h[n - 1]);
        /* [0, lt) pivot (lt, n) */
        if (lt < n - 1 - lt) {
            rv__sort_hits_cmp(h, lt);
            h += lt + 1;
            n -= lt + 1;
        } else {
            rv__sort_hits_cmp(h + lt + 1, n - lt - 1);
            n = lt;
        }
    }
    rv__insert_hits(h, n);
}

/* The same order in linear time (core/score_sort.h), for long lists: at
** k = 500 on Cranfield the comparison sort was a sixth of a search. */
RV__SCORE_SORT(rv__sort_hits_radix, rv__hit, s, id)

/* Sort hits best first: the radix sort from RV__RADIX_HITS hits, when its
** second buffer can be had; else (and below) the comparison sort.  Both
** give the one order of distinct ids. */
void rv__sort_hits(rv__hit *h, size_t n) {
    if (n >= RV__RADIX_HITS) {
        rv__hit *tmp = rv__malloc(n * sizeof *tmp);
        if (tmp) {
            rv__sort_hits_radix(h, n, tmp);
            rv__free(tmp);
            return;
        }
    }
    rv__sort_hits_cmp(h, n);
}

static float rv__exact_score(const rv_flat *ix, const float *q, size_t row, float *tmp);

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
        rv__sort_hits(hits, m);
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
