/*
** BM25 search: query preparation, top-k by MaxScore with block-max bounds,
** batches on several threads, and explain.
**
** MaxScore (Turtle and Flood 1995): sort the query's posting lists by
** their largest possible contribution ub (qtf times the largest w in the
** list).  Once the heap holds k documents with threshold theta (the k-th
** score), the lists whose ub prefix sum is <= theta are "non-essential": a
** document found only in them cannot beat theta.  Candidates therefore
** come from the essential lists alone, document at a time in increasing
** id; the non-essential lists are only probed for those candidates, from
** the largest ub down, and probing stops as soon as the score so far plus
** the remaining bounds cannot beat theta.  Each probe first looks at the
** bound of the block the candidate falls in (Ding and Suel 2011's
** block-max idea), which is usually much tighter than the list's ub.
**
** Exactness.  Documents are visited in increasing id, so a new candidate
** enters the heap only with a score strictly above theta (a tie loses to
** the lower ids already there).  A candidate is dropped only when an upper
** bound of its final score, inflated by 1e-9 relative, is <= theta; the
** bounds are maxima of the same single-precision weights that are summed,
** and all weights are >= 0, so the dropped document's final score is <=
** theta too.  Hence pruned and exhaustive search agree exactly.
*/
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bm25_internal.h"

#define RV__MARGIN (1.0 + 1e-9)

typedef struct {
    float score;
    uint32_t doc;
} rv__hit;

typedef struct {
    const uint32_t *docs;
    const rv__seg *seg;
    uint64_t pos, end, start;     /* posting positions of the list */
    uint64_t blk, blk0, blk_end;  /* current, first and end block */
    uint32_t doc;                 /* current document, UINT32_MAX at end */
    float idf;
    double qtf;
    double ub;                    /* qtf * the list's largest w */
    uint32_t q;                   /* index of the term in canonical order */
} rv__cur;

/* Per-thread scratch, reused across the queries of a batch. */
typedef struct {
    uint32_t *raw;       /* analysed query term ids, with repeats */
    size_t n_raw, raw_cap;
    uint32_t *qterm;     /* distinct, ascending */
    uint32_t *qtf;
    size_t nq, q_cap;
    rv__cur *cur;
    double *prefix;
    uint32_t *tq;        /* terms matched by the current candidate */
    float *tw;
    size_t cur_cap;
    rv__hit *heap;
    size_t heap_cap;
    const rv_bm25 *ix;
} rv__scratch;

static void rv__scratch_free(rv__scratch *s) {
    rv__free(s->raw);
    rv__free(s->qterm);
    rv__free(s->qtf);
    rv__free(s->cur);
    rv__free(s->prefix);
    rv__free(s->tq);
    rv__free(s->tw);
    rv__free(s->heap);
    memset(s, 0, sizeof *s);
}

/* ------------------------------------------------------- query terms */

static rv_status rv__raw_push(rv__scratch *s, uint32_t t) {
    if (s->n_raw == s->raw_cap) {
        size_t cap = s->raw_cap ? s->raw_cap * 2 : 64;
        uint32_t *r = rv__realloc(s->raw, cap * sizeof *r);
        if (!r) return rv__nomem("the query terms");
        s->raw = r;
        s->raw_cap = cap;
    }
    s->raw[s->n_raw++] = t;
    return RV_OK;
}

static rv_status rv__query_term(void *ctx, const char *term, size_t len) {
    rv__scratch *s = ctx;
    uint32_t t;
    if (!rv__dict_find(s->ix, term, len, rv__hash_bytes(term, len), &t)) return RV_OK;
    return rv__raw_push(s, t);
}

static int rv__cmp_u32(const void *x, const void *y) {
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

/* s->raw -> distinct ascending terms with their counts; sizes the
** per-term scratch. */
static rv_status rv__query_finish(rv__scratch *s) {
    qsort(s->raw, s->n_raw, sizeof *s->raw, rv__cmp_u32);
    size_t need = s->n_raw ? s->n_raw : 1;
    if (need > s->q_cap) {
        rv__free(s->qterm);
        rv__free(s->qtf);
        rv__free(s->cur);
        rv__free(s->prefix);
        rv__free(s->tq);
        rv__free(s->tw);
        s->qterm = rv__malloc(need * sizeof *s->qterm);
        s->qtf = rv__malloc(need * sizeof *s->qtf);
        s->cur = rv__malloc(need * sizeof *s->cur);
        s->prefix = rv__malloc(need * sizeof *s->prefix);
        s->tq = rv__malloc(need * sizeof *s->tq);
        s->tw = rv__malloc(need * sizeof *s->tw);
        if (!s->qterm || !s->qtf || !s->cur || !s->prefix || !s->tq || !s->tw) {
            s->q_cap = 0;
            return rv__nomem("the query's term cursors");
        }
        s->q_cap = need;
    }
    size_t nq = 0;
    for (size_t i = 0; i < s->n_raw; i++) {
        if (nq && s->qterm[nq - 1] == s->raw[i]) {
            s->qtf[nq - 1]++;
        } else {
            s->qterm[nq] = s->raw[i];
            s->qtf[nq++] = 1;
        }
    }
    s->nq = nq;
    return RV_OK;
}

static rv_status rv__query_text(rv__scratch *s, const char *query, size_t len) {
    s->n_raw = 0;
    size_t bad = 0;
    rv_status st = rv__analyze_each(&s->ix->an, query, len, rv__query_term, s, &bad);
    if (st != RV_OK) return st;
    return rv__query_finish(s);
}

/* -------------------------------------------------------------- heap */

/* a is worse than b: lower score, or equal score and higher id */
static int rv__worse(rv__hit a, rv__hit b) {
    return a.score < b.score || (a.score == b.score && a.doc > b.doc);
}

static void rv__sift_down(rv__hit *h, size_t n, size_t i) {
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && rv__worse(h[l], h[m])) m = l;
        if (r < n && rv__worse(h[r], h[m])) m = r;
        if (m == i) return;
        rv__hit t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

static void rv__sift_up(rv__hit *h, size_t i) {
    while (i) {
        size_t p = (i - 1) / 2;
        if (!rv__worse(h[i], h[p])) return;
        rv__hit t = h[i];
        h[i] = h[p];
        h[p] = t;
        i = p;
    }
}

static int rv__cmp_hit(const void *x, const void *y) {
    const rv__hit *a = x, *b = y;
    if (a->score != b->score) return a->score > b->score ? -1 : 1;
    return a->doc < b->doc ? -1 : a->doc > b->doc;
}

/* ------------------------------------------------------------ cursors */

/* First block at or after c->blk whose last document is >= target. */
static uint64_t rv__find_block(const rv__cur *c, uint32_t target) {
    const uint32_t *last = c->seg->block_last;
    uint64_t b = c->blk;
    if (b >= c->blk_end || last[b] >= target) return b;
    /* gallop, then binary search in (lo, hi] */
    uint64_t step = 1, lo = b;
    uint64_t hi = b + 1;
    while (hi < c->blk_end && last[hi] < target) {
        lo = hi;
        step *= 2;
        hi = lo + step;
    }
    if (hi > c->blk_end) hi = c->blk_end;
    /* last[lo] < target; answer in (lo, hi] (hi == blk_end: maybe none) */
    uint64_t a = lo + 1, e = hi;
    while (a < e) {
        uint64_t mid = a + (e - a) / 2;
        if (last[mid] < target) a = mid + 1;
        else e = mid;
    }
    return a;
}

/* Move to the first posting with document >= target. */
static void rv__next_geq(rv__cur *c, uint32_t target) {
    if (c->doc >= target) return;
    uint64_t b = rv__find_block(c, target);
    c->blk = b;
    if (b >= c->blk_end) {
        c->pos = c->end;
        c->doc = UINT32_MAX;
        return;
    }
    uint64_t a = c->start + (b - c->blk0) * RV__BLOCK;
    if (a < c->pos) a = c->pos;
    uint64_t e = c->start + (b - c->blk0 + 1) * RV__BLOCK;
    if (e > c->end) e = c->end;
    /* the block's last document is >= target, so the answer is in [a, e) */
    while (a < e) {
        uint64_t mid = a + (e - a) / 2;
        if (c->docs[mid] < target) a = mid + 1;
        else e = mid;
    }
    c->pos = a;
    c->doc = c->docs[a];
}

static inline void rv__next(rv__cur *c) {
    c->pos++;
    if (c->pos >= c->end) {
        c->doc = UINT32_MAX;
        return;
    }
    c->doc = c->docs[c->pos];
    uint64_t bend = c->start + (c->blk - c->blk0 + 1) * RV__BLOCK;
    if (c->pos >= bend) c->blk++;
}

/* ------------------------------------------------------------- search */

typedef struct {
    rv__scratch *s;
    size_t k, n_heap;
    double theta;     /* k-th score once the heap is full */
    int full;
    int exhaustive;
    rv__wparams wp;
    rv_bm25_search_info info;
} rv__run;

static void rv__offer(rv__run *r, uint32_t doc, float score) {
    rv__hit h = {score, doc};
    rv__hit *heap = r->s->heap;
    if (r->n_heap < r->k) {
        heap[r->n_heap] = h;
        rv__sift_up(heap, r->n_heap++);
        if (r->n_heap == r->k) {
            r->full = 1;
            r->theta = heap[0].score;
        }
        return;
    }
    if (!rv__worse(heap[0], h)) return;
    heap[0] = h;
    rv__sift_down(heap, r->n_heap, 0);
    r->theta = heap[0].score;
}

/* Insertion sort of cursors by ub ascending (then term order). */
static void rv__sort_cursors(rv__cur *c, size_t n) {
    for (size_t i = 1; i < n; i++) {
        rv__cur x = c[i];
        size_t j = i;
        while (j && (c[j - 1].ub > x.ub || (c[j - 1].ub == x.ub && c[j - 1].q > x.q))) {
            c[j] = c[j - 1];
            j--;
        }
        c[j] = x;
    }
}

static void rv__search_seg(rv__run *r, const rv__seg *seg) {
    rv__scratch *s = r->s;
    const rv_bm25 *ix = s->ix;
    rv__cur *cur = s->cur;
    size_t nc = 0;
    for (size_t q = 0; q < s->nq; q++) {
        size_t i = rv__seg_find(seg, s->qterm[q]);
        if (i == SIZE_MAX) continue;
        rv__cur *c = &cur[nc++];
        c->docs = seg->docs;
        c->seg = seg;
        c->start = c->pos = seg->offsets[i];
        c->end = seg->offsets[i + 1];
        c->blk = c->blk0 = seg->block_off[i];
        c->blk_end = seg->block_off[i + 1];
        c->doc = c->docs[c->pos];
        c->idf = ix->idf32[s->qterm[q]];
        c->qtf = (double)s->qtf[q];
        c->ub = c->qtf * (double)seg->term_max[i];
        c->q = (uint32_t)q;
        r->info.postings_total += c->end - c->start;
    }
    if (!nc) return;
    rv__sort_cursors(cur, nc);
    double *prefix = s->prefix;
    double acc = 0;
    for (size_t j = 0; j < nc; j++) prefix[j] = (acc += cur[j].ub);
    size_t ne = 0; /* cursors [0, ne) are non-essential */
    if (!r->exhaustive)
        while (r->full && ne < nc && prefix[ne] * RV__MARGIN <= r->theta) ne++;
    const float *norm = ix->norm;
    const uint8_t *state = ix->doc_state;
    for (;;) {
        uint32_t d = UINT32_MAX;
        for (size_t j = ne; j < nc; j++)
            if (cur[j].doc < d) d = cur[j].doc;
        if (d == UINT32_MAX) break;
        if (state[d] != RV_BM25_DOC_LIVE) {
            for (size_t j = ne; j < nc; j++)
                if (cur[j].doc == d) rv__next(&cur[j]);
            continue;
        }
        size_t nt = 0;
        double partial = 0;
        float nd = norm[d];
        for (size_t j = ne; j < nc; j++) {
            rv__cur *c = &cur[j];
            if (c->doc != d) continue;
            float w = rv__weight(&r->wp, c->idf, rv__seg_tf(seg, c->pos), nd);
            s->tq[nt] = c->q;
            s->tw[nt++] = w;
            partial += c->qtf * (double)w;
            rv__next(c);
        }
        r->info.postings_scored += nt;
        int keep = 1;
        for (size_t jj = ne; jj-- > 0;) {
            rv__cur *c = &cur[jj];
            if (r->full) {
                double rest = jj ? prefix[jj - 1] : 0.0;
                if ((partial + c->ub + rest) * RV__MARGIN <= r->theta) {
                    keep = 0;
                    break;
                }
                uint64_t b = rv__find_block(c, d);
                c->blk = b;
                double bm = b < c->blk_end ? c->qtf * (double)seg->block_max[b] : 0.0;
                if ((partial + bm + rest) * RV__MARGIN <= r->theta) {
                    keep = 0;
                    break;
                }
            }
            rv__next_geq(c, d);
            if (c->doc == d) {
                float w = rv__weight(&r->wp, c->idf, rv__seg_tf(seg, c->pos), nd);
                s->tq[nt] = c->q;
                s->tw[nt++] = w;
                partial += c->qtf * (double)w;
                r->info.postings_scored++;
            }
        }
        if (!keep) continue;
        /* the score, summed in canonical (ascending term) order */
        for (size_t i = 1; i < nt; i++) {
            uint32_t tq = s->tq[i];
            float tw = s->tw[i];
            size_t j = i;
            while (j && s->tq[j - 1] > tq) {
                s->tq[j] = s->tq[j - 1];
                s->tw[j] = s->tw[j - 1];
                j--;
            }
            s->tq[j] = tq;
            s->tw[j] = tw;
        }
        double sum = 0;
        for (size_t i = 0; i < nt; i++) sum += (double)s->qtf[s->tq[i]] * (double)s->tw[i];
        r->info.docs_scored++;
        rv__offer(r, d, (float)sum);
        if (!r->exhaustive && r->full) {
            while (ne < nc && prefix[ne] * RV__MARGIN <= r->theta) ne++;
        }
    }
}

/* Run the prepared query in s over every segment; write results. */
static rv_status rv__run_query(rv__scratch *s, size_t k, unsigned flags, uint32_t *ids,
                               float *scores, size_t *n_found, rv_bm25_search_info *info) {
    const rv_bm25 *ix = s->ix;
    size_t heap_need = k;
    if (heap_need > ix->n_docs) heap_need = ix->n_docs;
    if (heap_need == 0) heap_need = 1;
    if (heap_need > s->heap_cap) {
        rv__free(s->heap);
        s->heap = rv__malloc(heap_need * sizeof *s->heap);
        if (!s->heap) {
            s->heap_cap = 0;
            return rv__nomem("the result heap");
        }
        s->heap_cap = heap_need;
    }
    rv__run r;
    memset(&r, 0, sizeof r);
    r.s = s;
    r.k = k < heap_need ? k : heap_need;
    r.exhaustive = (flags & RV_BM25_EXHAUSTIVE) != 0;
    rv__wparams_of(ix, &r.wp);
    r.info.n_query_terms = s->nq;
    if (s->nq)
        for (size_t i = 0; i < ix->n_segs; i++) rv__search_seg(&r, ix->segs[i]);
    qsort(s->heap, r.n_heap, sizeof *s->heap, rv__cmp_hit);
    for (size_t i = 0; i < r.n_heap; i++) {
        ids[i] = s->heap[i].doc;
        scores[i] = s->heap[i].score;
    }
    *n_found = r.n_heap;
    if (info) *info = r.info;
    return RV_OK;
}

static rv_status rv__check_search(const rv_bm25 *ix, size_t k, unsigned flags,
                                  const uint32_t *ids, const float *scores,
                                  const size_t *n_found) {
    if (!ix) return rv__error(RV_E_INVALID_ARG, "index must not be NULL");
    if (k == 0) return rv__error(RV_E_INVALID_ARG, "k = 0: must be >= 1");
    if (!ids || !scores || !n_found)
        return rv__error(RV_E_INVALID_ARG, "ids, scores and n_found must not be NULL");
    if (flags & ~RV_BM25_EXHAUSTIVE)
        return rv__error(RV_E_INVALID_ARG, "flags = 0x%x: unknown bits", flags);
    return RV_OK;
}

rv_status rv_bm25_search(const rv_bm25 *ix, const char *query, size_t len, size_t k,
                         unsigned flags, uint32_t *ids, float *scores, size_t *n_found,
                         rv_bm25_search_info *info) {
    if (n_found) *n_found = 0;
    if (info) memset(info, 0, sizeof *info);
    rv_status st = rv__check_search(ix, k, flags, ids, scores, n_found);
    if (st != RV_OK) return st;
    if (!query && len) return rv__error(RV_E_INVALID_ARG, "query is NULL but len = %zu", len);
    rv__scratch s;
    memset(&s, 0, sizeof s);
    s.ix = ix;
    st = rv__query_text(&s, query, len);
    if (st == RV_OK) st = rv__run_query(&s, k, flags, ids, scores, n_found, info);
    rv__scratch_free(&s);
    return st;
}

rv_status rv_bm25_search_terms(const rv_bm25 *ix, const uint32_t *term_ids, size_t n_terms,
                               size_t k, unsigned flags, uint32_t *ids, float *scores,
                               size_t *n_found, rv_bm25_search_info *info) {
    if (n_found) *n_found = 0;
    if (info) memset(info, 0, sizeof *info);
    rv_status st = rv__check_search(ix, k, flags, ids, scores, n_found);
    if (st != RV_OK) return st;
    if (!term_ids && n_terms)
        return rv__error(RV_E_INVALID_ARG, "term_ids is NULL but n_terms = %zu", n_terms);
    for (size_t i = 0; i < n_terms; i++)
        if (term_ids[i] >= ix->n_terms)
            return rv__error(RV_E_RANGE, "term_ids[%zu] = %u: the dictionary has %u terms", i,
                             term_ids[i], ix->n_terms);
    rv__scratch s;
    memset(&s, 0, sizeof s);
    s.ix = ix;
    for (size_t i = 0; i < n_terms && st == RV_OK; i++) st = rv__raw_push(&s, term_ids[i]);
    if (st == RV_OK) st = rv__query_finish(&s);
    if (st == RV_OK) st = rv__run_query(&s, k, flags, ids, scores, n_found, info);
    rv__scratch_free(&s);
    return st;
}

/* --------------------------------------------------------------- batch */

typedef struct {
    const rv_bm25 *ix;
    size_t n;
    const char *const *queries;
    const size_t *lens;
    size_t k;
    unsigned flags;
    uint32_t *ids;
    float *scores;
    uint32_t *n_found;
    atomic_size_t next;
    atomic_size_t done;
    atomic_int stop;
    pthread_mutex_t lock;
    size_t err_q;          /* lowest failing query, or SIZE_MAX */
    rv_status err;
    char msg[256];
} rv__batch;

static void rv__batch_fail(rv__batch *b, size_t q, rv_status st) {
    pthread_mutex_lock(&b->lock);
    if (q < b->err_q) {
        b->err_q = q;
        b->err = st;
        snprintf(b->msg, sizeof b->msg, "%s", rv_errmsg());
    }
    pthread_mutex_unlock(&b->lock);
    atomic_store(&b->stop, 1);
}

/* Work through queries until none are left.  On the calling thread
** (progress != NULL) also report progress. */
static void rv__batch_work(rv__batch *b, rv_progress_fn progress, void *pctx) {
    rv__scratch s;
    memset(&s, 0, sizeof s);
    s.ix = b->ix;
    for (;;) {
        if (atomic_load(&b->stop)) break;
        size_t q = atomic_fetch_add(&b->next, 1);
        if (q >= b->n) break;
        uint32_t *ids = b->ids + q * b->k;
        float *sc = b->scores + q * b->k;
        size_t nf = 0;
        rv_status st;
        if (!b->queries[q] && b->lens[q]) {
            st = rv__error(RV_E_INVALID_ARG, "query is NULL but its length is %zu", b->lens[q]);
        } else {
            st = rv__query_text(&s, b->queries[q], b->lens[q]);
            if (st == RV_OK) st = rv__run_query(&s, b->k, b->flags, ids, sc, &nf, NULL);
        }
        if (st != RV_OK) {
            rv__batch_fail(b, q, st);
            break;
        }
        for (size_t i = nf; i < b->k; i++) {
            ids[i] = RV_BM25_NO_DOC;
            sc[i] = NAN;
        }
        b->n_found[q] = (uint32_t)nf;
        size_t done = atomic_fetch_add(&b->done, 1) + 1;
        if (progress && progress(pctx, done, b->n)) {
            pthread_mutex_lock(&b->lock);
            if (b->err_q == SIZE_MAX) {
                b->err_q = b->n;
                b->err = RV_E_INTERRUPTED;
                snprintf(b->msg, sizeof b->msg, "interrupted after %zu of %zu queries", done, b->n);
            }
            pthread_mutex_unlock(&b->lock);
            atomic_store(&b->stop, 1);
            break;
        }
    }
    rv__scratch_free(&s);
}

static void *rv__batch_thread(void *arg) {
    rv__batch_work(arg, NULL, NULL);
    return NULL;
}

rv_status rv_bm25_search_batch(const rv_bm25 *ix, size_t n_queries,
                               const char *const *queries, const size_t *lens, size_t k,
                               unsigned flags, unsigned n_threads, rv_progress_fn progress,
                               void *progress_ctx, uint32_t *ids, float *scores,
                               uint32_t *n_found) {
    if (!ix) return rv__error(RV_E_INVALID_ARG, "index must not be NULL");
    if (k == 0) return rv__error(RV_E_INVALID_ARG, "k = 0: must be >= 1");
    if (flags & ~RV_BM25_EXHAUSTIVE)
        return rv__error(RV_E_INVALID_ARG, "flags = 0x%x: unknown bits", flags);
    if (n_queries == 0) return RV_OK;
    if (!queries || !lens || !ids || !scores || !n_found)
        return rv__error(RV_E_INVALID_ARG, "queries, lens, ids, scores and n_found must not be NULL");
    if (n_queries > SIZE_MAX / k)
        return rv__error(RV_E_RANGE, "n_queries * k overflows");
    rv__batch b;
    memset(&b, 0, sizeof b);
    b.ix = ix;
    b.n = n_queries;
    b.queries = queries;
    b.lens = lens;
    b.k = k;
    b.flags = flags;
    b.ids = ids;
    b.scores = scores;
    b.n_found = n_found;
    atomic_init(&b.next, 0);
    atomic_init(&b.done, 0);
    atomic_init(&b.stop, 0);
    b.err_q = SIZE_MAX;
    b.err = RV_OK;
    if (pthread_mutex_init(&b.lock, NULL) != 0)
        return rv__error(RV_E_INTERNAL, "pthread_mutex_init failed");
    size_t nt = n_threads;
    if (nt == 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        nt = c > 0 ? (size_t)c : 1;
    }
    if (nt > 256) nt = 256;
    if (nt > n_queries) nt = n_queries;
    pthread_t th[256];
    size_t started = 0;
    for (size_t i = 1; i < nt; i++) {
        if (pthread_create(&th[started], NULL, rv__batch_thread, &b) != 0) break;
        started++;
    }
    rv__batch_work(&b, progress, progress_ctx);
    for (size_t i = 0; i < started; i++) pthread_join(th[i], NULL);
    pthread_mutex_destroy(&b.lock);
    if (b.err_q != SIZE_MAX) {
        if (b.err == RV_E_INTERRUPTED && b.err_q == n_queries)
            return rv__error(RV_E_INTERRUPTED, "%s", b.msg);
        return rv__error(b.err, "queries[%zu]: %s", b.err_q, b.msg);
    }
    return RV_OK;
}

/* ------------------------------------------------------------- explain */

/* tf of term t in document doc (0 when absent). */
static uint32_t rv__tf_of(const rv_bm25 *ix, uint32_t t, uint32_t doc) {
    size_t lo = 0, hi = ix->n_segs;
    while (lo < hi) { /* the segment whose range holds doc */
        size_t mid = (lo + hi) / 2;
        if (ix->segs[mid]->doc_end <= doc) lo = mid + 1;
        else hi = mid;
    }
    if (lo >= ix->n_segs || ix->segs[lo]->doc_base > doc) return 0;
    const rv__seg *s = ix->segs[lo];
    size_t i = rv__seg_find(s, t);
    if (i == SIZE_MAX) return 0;
    uint64_t a = s->offsets[i], e = s->offsets[i + 1];
    while (a < e) {
        uint64_t mid = a + (e - a) / 2;
        if (s->docs[mid] < doc) a = mid + 1;
        else e = mid;
    }
    if (a < s->offsets[i + 1] && s->docs[a] == doc) return rv__seg_tf(s, a);
    return 0;
}

rv_status rv_bm25_explain(const rv_bm25 *ix, const char *query, size_t len, uint32_t doc,
                          rv_bm25_explain_row *rows, size_t capacity, size_t *n_rows,
                          float *score, uint32_t *doc_len) {
    if (n_rows) *n_rows = 0;
    if (score) *score = 0;
    if (doc_len) *doc_len = 0;
    if (!ix || !n_rows) return rv__error(RV_E_INVALID_ARG, "index and n_rows must not be NULL");
    if (!rows && capacity) return rv__error(RV_E_INVALID_ARG, "rows is NULL but capacity = %zu", capacity);
    if (!query && len) return rv__error(RV_E_INVALID_ARG, "query is NULL but len = %zu", len);
    if (doc >= ix->n_docs)
        return rv__error(RV_E_RANGE, "document %u: the index has %u document ids", doc, ix->n_docs);
    if (ix->doc_state[doc] != RV_BM25_DOC_LIVE)
        return rv__error(RV_E_STATE, "document %u is deleted", doc);
    rv__scratch s;
    memset(&s, 0, sizeof s);
    s.ix = ix;
    rv_status st = rv__query_text(&s, query, len);
    if (st != RV_OK) {
        rv__scratch_free(&s);
        return st;
    }
    rv__wparams wp;
    rv__wparams_of(ix, &wp);
    double sum = 0;
    for (size_t q = 0; q < s.nq; q++) {
        uint32_t t = s.qterm[q];
        uint32_t tf = rv__tf_of(ix, t, doc);
        float w = tf ? rv__weight(&wp, ix->idf32[t], tf, ix->norm[doc]) : 0.0f;
        double c = (double)s.qtf[q] * (double)w;
        sum += c;
        if (q < capacity) {
            rows[q].term_id = t;
            rows[q].qtf = s.qtf[q];
            rows[q].tf = tf;
            rows[q].df = ix->df[t];
            rows[q].idf = ix->idf[t];
            rows[q].weight = w;
            rows[q].contribution = c;
        }
    }
    *n_rows = s.nq;
    if (score) *score = (float)sum;
    if (doc_len) *doc_len = ix->doc_len[doc];
    size_t nq = s.nq;
    rv__scratch_free(&s);
    if (nq > capacity)
        return rv__error(RV_E_SHAPE, "explain needs %zu rows; capacity is %zu", nq, capacity);
    return RV_OK;
}
