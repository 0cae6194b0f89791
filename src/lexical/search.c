/*
** BM25 search: query preparation, top-k by MaxScore with block-max bounds,
** batches on several threads, and explain.
**
** MaxScore (Turtle and Flood 1995): sort the query's posting lists by
** their largest possible contribution ub (qtf times the largest w in the
** list).  Once the heap holds k documents with k-th score theta, the lists
** whose ub prefix sum cannot beat theta are "non-essential": a document
** found only in them cannot enter.  Candidates come from the essential
** lists alone; the non-essential lists are consulted only for candidates,
** largest ub first, and a candidate is dropped as soon as its score so far
** plus the remaining bounds cannot beat theta.
**
** Two kernels implement it.  The main one works a window of 4096 document
** ids at a time, as Lucene's MaxScore bulk scorer does: it skips the window
** outright when the block maxima (Ding and Suel 2011) of the essential
** lists plus the bounds of the others cannot beat theta; otherwise it adds
** the essential lists term at a time into per-document partial scores, then
** merges each non-essential list either by walking its postings in the
** window or by probing the surviving candidates, whichever touches fewer
** postings.  A document-at-a-time kernel serves exhaustive search (nothing
** dropped, every list essential: an independent traversal to check the
** other against) and queries of more than 64 distinct terms (the window
** kernel keeps a 64-bit matched-term mask per document).
**
** Exactness.  A document's score is always summed the same way: qtf * w in
** double precision, in ascending term order, rounded to float once.  A
** candidate is dropped only when an upper bound of that sum, inflated by
** 1e-9 relative, is <= the float just below theta; the bounds are maxima
** of the same single-precision weights, and all weights are >= 0, so a
** dropped document's score is strictly below theta and could not have
** entered even by winning a tie on its id.  Hence pruned and exhaustive
** search return identical ids and scores, whatever order documents are
** visited in.
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
    /* window kernel: per-document partial score, matched-term mask and
    ** weights (term-major), a bitmap of touched documents, candidates */
    double *wpart;
    uint64_t *wmask;
    float *wbuf;
    size_t wbuf_terms;
    uint64_t *wbits;
    uint32_t *cand;
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
    rv__free(s->wpart);
    rv__free(s->wmask);
    rv__free(s->wbuf);
    rv__free(s->wbits);
    rv__free(s->cand);
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
    if (s->n_raw > 1) qsort(s->raw, s->n_raw, sizeof *s->raw, rv__cmp_u32);
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

/* Move to the first posting with document >= target.  Probes come in
** increasing order and are usually close, so the search gallops forward
** from the current position (within the block found by rv__find_block)
** before it bisects. */
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
    const uint32_t *docs = c->docs;
    uint64_t step = 1;
    while (a + step < e && docs[a + step - 1] < target) {
        a += step;
        step *= 2;
    }
    uint64_t hi = a + step < e ? a + step : e;
    while (a < hi) {
        uint64_t mid = a + (hi - a) / 2;
        if (docs[mid] < target) a = mid + 1;
        else hi = mid;
    }
    c->pos = a;
    c->doc = docs[a];
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
    double cut;       /* prune below: the float just under the k-th score */
    int full;
    int exhaustive;
    rv__wparams wp;
    rv_bm25_search_info info;
} rv__run;

static void rv__set_cut(rv__run *r) {
    if (!r->exhaustive) r->cut = (double)nextafterf(r->s->heap[0].score, -INFINITY);
}

static void rv__offer(rv__run *r, uint32_t doc, float score) {
    rv__hit h = {score, doc};
    rv__hit *heap = r->s->heap;
    if (r->n_heap < r->k) {
        heap[r->n_heap] = h;
        rv__sift_up(heap, r->n_heap++);
        if (r->n_heap == r->k) {
            r->full = 1;
            rv__set_cut(r);
        }
        return;
    }
    if (!rv__worse(heap[0], h)) return;
    heap[0] = h;
    rv__sift_down(heap, r->n_heap, 0);
    rv__set_cut(r);
}

/* Can a document whose score is at most `bound` be dropped?  Only when
** even its rounded score stays strictly below the k-th score, so that no
** tie (which a lower id would win) is lost, whatever the visiting order. */
static inline int rv__hopeless(const rv__run *r, double bound) {
    return bound * RV__MARGIN <= r->cut; /* cut is -inf until the heap is full */
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

/* Cursors of the query terms present in seg, sorted by ub, with prefix
** sums of ub; returns their number. */
static size_t rv__cursors(rv__run *r, const rv__seg *seg) {
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
    rv__sort_cursors(cur, nc);
    double acc = 0;
    for (size_t j = 0; j < nc; j++) s->prefix[j] = (acc += cur[j].ub);
    return nc;
}

/* Number of leading cursors that are non-essential under the current cut. */
static size_t rv__n_nonessential(const rv__run *r, size_t nc) {
    size_t ne = 0;
    while (ne < nc && rv__hopeless(r, r->s->prefix[ne])) ne++;
    return ne;
}

/*
** Document at a time: used for exhaustive search (every list essential,
** nothing dropped) and for queries of more than 64 distinct terms.
*/
static void rv__search_seg_daat(rv__run *r, const rv__seg *seg) {
    rv__scratch *s = r->s;
    const rv_bm25 *ix = s->ix;
    rv__cur *cur = s->cur;
    size_t nc = rv__cursors(r, seg);
    if (!nc) return;
    double *prefix = s->prefix;
    size_t ne = rv__n_nonessential(r, nc); /* cursors [0, ne) are non-essential */
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
        for (size_t j = ne; j < nc; j++) {
            rv__cur *c = &cur[j];
            if (c->doc != d) continue;
            float w = seg->w[c->pos];
            s->tq[nt] = c->q;
            s->tw[nt++] = w;
            partial += c->qtf * (double)w;
            rv__next(c);
        }
        r->info.postings_scored += nt;
        int keep = 1;
        for (size_t jj = ne; jj-- > 0;) {
            rv__cur *c = &cur[jj];
            double rest = jj ? prefix[jj - 1] : 0.0;
            if (rv__hopeless(r, partial + c->ub + rest)) {
                keep = 0;
                break;
            }
            uint64_t b = rv__find_block(c, d);
            c->blk = b;
            double bm = b < c->blk_end ? c->qtf * (double)seg->block_max[b] : 0.0;
            if (rv__hopeless(r, partial + bm + rest)) {
                keep = 0;
                break;
            }
            rv__next_geq(c, d);
            if (c->doc == d) {
                float w = seg->w[c->pos];
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
        ne = rv__n_nonessential(r, nc);
    }
}

/*
** Window at a time (Lucene's MaxScore bulk scorer, with block-max window
** skipping): documents are taken RV__WIN ids at a time.  In a window,
**  1. if the block maxima of the essential lists plus the bounds of the
**     non-essential ones cannot beat the cut, the window is skipped;
**  2. the essential lists are added term at a time into per-document
**     partial scores, a matched-term mask and the weights themselves;
**  3. each non-essential list, largest ub first, first drops the candidates
**     that cannot make it even with it and the lists below it, then adds its
**     weights -- by walking its postings in the window when they are fewer
**     than the candidates, else by probing each candidate;
**  4. survivors are scored in canonical order (ascending term, from the mask
**     and the stored weights) and offered to the heap in id order.
*/
#define RV__WIN 4096u

static void rv__search_seg_window(rv__run *r, const rv__seg *seg) {
    rv__scratch *s = r->s;
    const rv_bm25 *ix = s->ix;
    rv__cur *cur = s->cur;
    size_t nc = rv__cursors(r, seg);
    if (!nc) return;
    double *prefix = s->prefix;
    const uint8_t *state = ix->doc_state;
    double *part = s->wpart;
    uint64_t *mask = s->wmask;
    float *wbuf = s->wbuf;
    uint64_t *bits = s->wbits;
    uint32_t *cand = s->cand;
    uint32_t lo = seg->doc_base;
    for (;;) {
        size_t ne = rv__n_nonessential(r, nc);
        if (ne == nc) break; /* nothing left can beat the cut */
        uint32_t dmin = UINT32_MAX;
        for (size_t j = ne; j < nc; j++) {
            if (cur[j].doc < lo) rv__next_geq(&cur[j], lo);
            if (cur[j].doc < dmin) dmin = cur[j].doc;
        }
        if (dmin == UINT32_MAX) break;
        lo = dmin;
        uint32_t hi = lo + RV__WIN > lo && lo + RV__WIN < seg->doc_end ? lo + RV__WIN : seg->doc_end;
        double ne_ub = ne ? prefix[ne - 1] : 0.0;
        /* 1. block-max bound of the window */
        if (r->full) {
            double wub = ne_ub;
            for (size_t j = ne; j < nc; j++) {
                const rv__cur *c = &cur[j];
                if (c->doc >= hi) continue;
                float m = 0;
                for (uint64_t b = c->blk; b < c->blk_end; b++) {
                    if (seg->block_max[b] > m) m = seg->block_max[b];
                    if (seg->block_last[b] >= hi - 1) break;
                }
                wub += c->qtf * (double)m;
            }
            if (rv__hopeless(r, wub)) {
                for (size_t j = ne; j < nc; j++) rv__next_geq(&cur[j], hi);
                lo = hi;
                continue;
            }
        }
        /* 2. essential lists, term at a time */
        size_t touched = 0;
        for (size_t j = ne; j < nc; j++) {
            rv__cur *c = &cur[j];
            const uint64_t bit = (uint64_t)1 << c->q;
            const float *wts = seg->w;
            const double qtf = c->qtf;
            uint64_t p = c->pos, e = c->end;
            const uint32_t *docs = c->docs;
            while (p < e && docs[p] < hi) {
                uint32_t d = docs[p];
                uint32_t i = d - lo;
                float w = wts[p];
                if (!mask[i]) {
                    bits[i >> 6] |= (uint64_t)1 << (i & 63);
                    part[i] = 0;
                    cand[touched++] = i;
                }
                mask[i] |= bit;
                wbuf[(size_t)c->q * RV__WIN + i] = w;
                part[i] += qtf * (double)w;
                p++;
            }
            r->info.postings_scored += p - c->pos;
            /* resynchronise the cursor */
            if (p >= e) {
                c->pos = e;
                c->doc = UINT32_MAX;
                c->blk = c->blk_end;
            } else {
                c->pos = p;
                c->doc = docs[p];
                c->blk = c->blk0 + (p - c->start) / RV__BLOCK;
            }
        }
        /* candidates in id order: a sparse window sorts the touched list, a
        ** dense one reads the bitmap; either way the bitmap ends clear */
        size_t n = 0;
        if (touched <= 16) {
            for (size_t t = 0; t < touched; t++) {
                uint32_t i = cand[t];
                bits[i >> 6] = 0;
                size_t u = t;
                while (u && cand[u - 1] > i) {
                    cand[u] = cand[u - 1];
                    u--;
                }
                cand[u] = i;
            }
            for (size_t t = 0; t < touched; t++) {
                uint32_t i = cand[t];
                if (state[lo + i] == RV_BM25_DOC_LIVE) cand[n++] = i;
                else mask[i] = 0;
            }
        } else {
            uint32_t nw = (hi - lo + 63) / 64;
            for (uint32_t w = 0; w < nw; w++) {
                uint64_t x = bits[w];
                bits[w] = 0;
                while (x) {
                    uint32_t i = (w << 6) + rv__ctz64(x);
                    x &= x - 1;
                    if (state[lo + i] == RV_BM25_DOC_LIVE) cand[n++] = i;
                    else mask[i] = 0;
                }
            }
        }
        /* 3. non-essential lists, largest bound first */
        for (size_t jj = ne; jj-- > 0 && n;) {
            rv__cur *c = &cur[jj];
            double rest = prefix[jj];
            size_t m = 0;
            for (size_t t = 0; t < n; t++) {
                uint32_t i = cand[t];
                if (rv__hopeless(r, part[i] + rest)) mask[i] = 0;
                else cand[m++] = i;
            }
            n = m;
            if (!n) break;
            const uint64_t bit = (uint64_t)1 << c->q;
            rv__next_geq(c, lo + cand[0]);
            if (c->doc >= hi) continue;
            /* postings of this list in the window, roughly, from its blocks */
            uint64_t bl = rv__find_block(c, hi);
            uint64_t span = (bl - c->blk + 1) * RV__BLOCK;
            if (span < 16 * n) { /* walk the list */
                uint64_t p = c->pos, e = c->end;
                while (p < e && c->docs[p] < hi) {
                    uint32_t d = c->docs[p];
                    uint32_t i = d - lo;
                    if (mask[i]) {
                        float w = seg->w[p];
                        mask[i] |= bit;
                        wbuf[(size_t)c->q * RV__WIN + i] = w;
                        part[i] += c->qtf * (double)w;
                        r->info.postings_scored++;
                    }
                    p++;
                }
                if (p >= e) {
                    c->pos = e;
                    c->doc = UINT32_MAX;
                    c->blk = c->blk_end;
                } else {
                    c->pos = p;
                    c->doc = c->docs[p];
                    c->blk = c->blk0 + (p - c->start) / RV__BLOCK;
                }
            } else { /* probe each candidate */
                for (size_t t = 0; t < n; t++) {
                    uint32_t i = cand[t];
                    rv__next_geq(c, lo + i);
                    if (c->doc >= hi) break;
                    if (c->doc != lo + i) continue;
                    float w = seg->w[c->pos];
                    mask[i] |= bit;
                    wbuf[(size_t)c->q * RV__WIN + i] = w;
                    part[i] += c->qtf * (double)w;
                    r->info.postings_scored++;
                }
            }
        }
        /* 4. score the survivors in canonical order */
        for (size_t t = 0; t < n; t++) {
            uint32_t i = cand[t];
            uint64_t mk = mask[i];
            mask[i] = 0;
            if (rv__hopeless(r, part[i])) continue;
            double sum = 0;
            while (mk) {
                uint32_t q = rv__ctz64(mk);
                mk &= mk - 1;
                sum += (double)s->qtf[q] * (double)wbuf[(size_t)q * RV__WIN + i];
            }
            r->info.docs_scored++;
            rv__offer(r, lo + i, (float)sum);
        }
        if (hi >= seg->doc_end) break;
        lo = hi;
    }
}

/* Allocate the window kernel's buffers (once per scratch); wbuf for
** s->nq terms.  The mask and bitmap start (and are left) all zero. */
static rv_status rv__window_alloc(rv__scratch *s) {
    if (!s->wpart) {
        s->wpart = rv__malloc(RV__WIN * sizeof *s->wpart);
        s->wmask = rv__calloc(RV__WIN, sizeof *s->wmask);
        s->wbits = rv__calloc(RV__WIN / 64, sizeof *s->wbits);
        s->cand = rv__malloc(RV__WIN * sizeof *s->cand);
        if (!s->wpart || !s->wmask || !s->wbits || !s->cand) {
            rv__free(s->wpart);
            rv__free(s->wmask);
            rv__free(s->wbits);
            rv__free(s->cand);
            s->wpart = NULL;
            s->wmask = NULL;
            s->wbits = NULL;
            s->cand = NULL;
            return rv__nomem("the search window");
        }
    }
    if (s->nq > s->wbuf_terms) {
        rv__free(s->wbuf);
        s->wbuf = rv__malloc(s->nq * RV__WIN * sizeof *s->wbuf);
        if (!s->wbuf) {
            s->wbuf_terms = 0;
            return rv__nomem("the search window");
        }
        s->wbuf_terms = s->nq;
    }
    return RV_OK;
}

/* Run the prepared query in s over every segment; write results. */
static rv_status rv__run_query(rv__scratch *s, size_t k, unsigned flags, uint32_t *ids,
                               float *scores, size_t *n_found, rv_bm25_search_info *info) {
    const rv_bm25 *ix = s->ix;
    rv_status st;
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
    int window = !r.exhaustive && s->nq <= 64;
    if (window && s->nq && (st = rv__window_alloc(s)) != RV_OK) return st;
    if (s->nq) {
        r.cut = -INFINITY;
        for (size_t i = 0; i < ix->n_segs; i++) {
            if (window) rv__search_seg_window(&r, ix->segs[i]);
            else rv__search_seg_daat(&r, ix->segs[i]);
        }
    }
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
