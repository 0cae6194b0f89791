/*
** BM25 search: query preparation, filters, top-k by MaxScore with
** block-max bounds, the direct scorer of small filters, batches on several
** threads, and explain.
**
** MaxScore (Turtle and Flood 1995): sort the query's posting lists by
** their largest possible contribution ub (qtf times a bound of w over the
** list).  Once the heap holds k documents with k-th score theta, the lists
** whose ub prefix sum cannot beat theta are "non-essential": a document
** found only in them cannot enter.  Candidates come from the essential
** lists alone; the non-essential lists are consulted only for candidates,
** largest ub first, and a candidate is dropped as soon as its score so far
** plus the remaining bounds cannot beat theta.
**
** Bounds are impacts (bm25_internal.h): the (tf, dl) frontier of a list or
** block, turned into a weight under the current statistics and inflated
** by RV__SLACK.  Weights themselves are computed here, as idf times the
** g(tf, dl) table of the index, because nothing stored depends on the
** statistics.
**
** Four kernels.  The main one works a window of slots at a time (4096 to
** 32768, about 1024 essential postings a window), as Lucene's MaxScore
** bulk scorer does: it skips the window outright when the block bounds
** (Ding and Suel 2011) of the essential lists plus the bounds of the others
** cannot beat theta; otherwise it adds the essential lists term at a time
** into per-document partial scores (no branch per posting), then merges
** each non-essential list either by walking its postings in the window or
** by probing the surviving candidates, whichever touches fewer postings.
** It adds a document's terms in whatever order the lists come, so it runs
** only for queries whose sums are exact in any order (rv__order_free: in
** practice all of them).  A document-at-a-time kernel serves exhaustive
** search (nothing dropped, every list essential: an independent traversal
** to check the other against) and the other queries.  The direct kernel
** serves small filters: it visits the allowed documents in slot order and
** probes each query term's list for them (galloping), so its cost follows
** the filter, not the lists.  The term-at-a-time kernel serves a segment of
** at most 32768 slots whose query lists are short and would not be thinned
** much by MaxScore (rv__use_taat: Cranfield's long queries): it adds every
** list whole into per-document scores and keeps the best k by a bucket
** count of the scores, with no bounds or cursors to keep.
**
** Filters.  A filter (rv_idset) is translated once per call (once per
** batch) into the live allowed slots: a sorted list when it is small, a
** bitmap for the kernels.  The window and document-at-a-time kernels offer
** only allowed documents to the heap and jump over windows and runs of
** slots that hold none; theta is then the k-th score among allowed
** documents, so pruning stays exact.  The switch (rv__use_direct): the
** direct kernel when the filter allows at most one document in 128 slots
** and (allowed documents) * (query terms) <= 4 * (postings of the query
** terms).
**
** First cut.  Before search starts, theta gets a lower bound: each long
** list keeps (per segment, computed when the segment is laid out, never
** stored on disk) the positions of its 128 best postings under a fixed
** BM25; k live allowed documents of one list with contributions >= x make
** the final k-th score >= x (weights are >= 0), so pruning starts at once
** instead of after the first k documents (rv__first_cut).
**
** Large k.  From k = 32 the window kernel offers a window's survivors in
** bulk (rv__flush: one selection of the best k instead of a sift per
** survivor, the cut then as a sift per survivor leaves it at the end of the
** window), and results are sorted by radix (core/score_sort.h).  At k = 500
** on Cranfield the sifts had been a third of a search.
**
** Exactness.  A document's score is the exact sum of its qtf * w in
** double precision (the same in every order, rv__order_free; the other
** kernels add in ascending term order), rounded to float once.  A
** candidate is dropped only when an upper bound of that sum, inflated by
** 1e-9 relative, is <= the float just below theta; the bounds dominate the
** same single-precision weights, and all weights are >= 0, so a dropped
** document's score is strictly below theta and could not have entered even
** by winning a tie on its id.  Hence pruned, direct and exhaustive search
** return identical ids and scores, whatever order documents are visited
** in; ties are broken by the caller id, so the slot order never shows.
*/
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/parallel.h"
#include "../core/score_sort.h"
#include "bm25_internal.h"
#include "search_internal.h"

#define RV__MARGIN        (1.0 + 1e-9)
#define RV__WIN           4096u  /* narrowest window (slots) */
#define RV__WIN_MAX       32768u /* widest window (slots) */
#define RV__WIN_POSTINGS  1024u  /* essential postings aimed at per window */
#define RV__DIRECT_SHARE  128u   /* direct: at most one allowed document in this many slots */
#define RV__PIPE          16     /* ids translated per group of prefetches */
#define RV__BULK_K        32u    /* k from which the window kernel offers in bulk */
#define RV__TAAT_POSTINGS 8192u  /* most query postings of a segment searched term at a time */
#define RV__SEL_BUCKETS   256u   /* buckets of the selection of a term-at-a-time search */

/* A filter translated for one index: the live allowed slots. */
typedef struct {
    int on;         /* a filter was given */
    size_t n;       /* live documents it allows */
    uint32_t *list; /* those slots ascending, or NULL (too many) */
    uint64_t *bits; /* the same as a bitmap over the slots, or NULL */
} rv__filter;


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

/* s->raw -> distinct ascending terms with their counts and idf; sizes the
** per-term scratch. */
static rv_status rv__query_finish(rv__scratch *s) {
    if (s->n_raw > 1) qsort(s->raw, s->n_raw, sizeof *s->raw, rv__cmp_u32);
    size_t need = s->n_raw ? s->n_raw : 1;
    if (need > s->q_cap) {
        rv__scratch_free_terms(s);
        s->qterm = rv__malloc(need * sizeof *s->qterm);
        s->qtf = rv__malloc(need * sizeof *s->qtf);
        s->qidf = rv__malloc(need * sizeof *s->qidf);
        s->cur = rv__malloc(need * sizeof *s->cur);
        s->prefix = rv__malloc(need * sizeof *s->prefix);
        s->tq = rv__malloc(need * sizeof *s->tq);
        s->tw = rv__malloc(need * sizeof *s->tw);
        if (!s->qterm || !s->qtf || !s->qidf || !s->cur || !s->prefix || !s->tq || !s->tw) {
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
    for (size_t q = 0; q < nq; q++)
        s->qidf[q] = (float)rv__idf(s->ix, rv__stat_df(s->ix, s->qterm[q]));
    return RV_OK;
}

static rv_status rv__query_text(rv__scratch *s, const char *query, size_t len) {
    s->n_raw = 0;
    size_t bad = 0;
    rv_status st = rv__analyze_each(&s->ix->an, query, len, rv__query_term, s, &bad);
    if (st != RV_OK) return st;
    return rv__query_finish(s);
}

/* ------------------------------------------------------------ filters */

static void rv__filter_free(rv__filter *f) {
    rv__free(f->list);
    rv__free(f->bits);
    memset(f, 0, sizeof *f);
}

/* The slots as a bitmap (from the list when there is one). */
static rv_status rv__filter_bits(const rv_bm25 *ix, rv__filter *f) {
    if (f->bits) return RV_OK;
    size_t words = RV_BITSET_WORDS(ix->n_docs) + 1; /* a spare: rv__bits_at */
    f->bits = rv__calloc(words, sizeof *f->bits);
    if (!f->bits) return rv__nomem("the filter's bitmap");
    if (f->list) {
        for (size_t i = 0; i < f->n; i++)
            f->bits[f->list[i] >> 6] |= (uint64_t)1 << (f->list[i] & 63);
        return RV_OK;
    }
    /* rv__filter_make gives large sets their bitmap at once */
    return rv__error(RV_E_INTERNAL, "a filter without its documents");
}

/*
** Translate a filter into the live slots it allows: id by id through the
** id map when the set is smaller than the index, else slot by slot through
** the set's hash table -- O(min(set, slots)).  A set of at most
** n_docs / RV__DIRECT_SHARE ids is kept as a sorted list of slots (all the
** direct kernel needs); a larger one as a bitmap.
*/
static rv_status rv__filter_make(const rv_bm25 *ix, const rv_idset *set, rv__filter *f) {
    memset(f, 0, sizeof *f);
    if (!set) return RV_OK;
    f->on = 1;
    size_t small = ix->n_docs / RV__DIRECT_SHARE;
    if (set->n <= small) {
        f->list = rv__malloc((set->n ? set->n : 1) * sizeof *f->list);
        uint32_t *tmp = rv__malloc((set->n ? set->n : 1) * sizeof *tmp);
        if (!f->list || !tmp) {
            rv__free(tmp);
            rv__filter_free(f);
            return rv__nomem("the filter's documents");
        }
        for (size_t i = 0; i < set->n; i++) {
            uint32_t d = rv__idmap_find(ix, set->ids[i]);
            if (d != RV__NO_SLOT && ix->doc_state[d] == RV_BM25_DOC_LIVE) f->list[f->n++] = d;
        }
        rv__sort_u32(f->list, f->n, tmp);
        rv__free(tmp);
        return RV_OK;
    }
    size_t words = RV_BITSET_WORDS(ix->n_docs) + 1; /* a spare: rv__bits_at */
    f->bits = rv__calloc(words, sizeof *f->bits);
    if (!f->bits) return rv__nomem("the filter's bitmap");
    if (set->n < ix->n_docs) {
        /* id by id, RV__PIPE at a time: the id map's slots are fetched for
        ** the whole group before any is read, so the cache misses overlap */
        const uint32_t *map = ix->idmap;
        const uint64_t mask = ix->idmap_mask;
        uint64_t home[RV__PIPE];
        for (size_t a = 0; a < set->n; a += RV__PIPE) {
            size_t m = set->n - a < RV__PIPE ? set->n - a : RV__PIPE;
            for (size_t j = 0; j < m; j++) {
                home[j] = rv__mix64((uint64_t)set->ids[a + j]) & mask;
                RV__PREFETCH(&map[home[j]]);
            }
            for (size_t j = 0; j < m; j++)
                if (map[home[j]]) RV__PREFETCH(&ix->ext[map[home[j]] - 1]);
            for (size_t j = 0; j < m; j++) {
                uint32_t d = RV__NO_SLOT;
                for (uint64_t h = home[j]; map[h]; h = (h + 1) & mask)
                    if (ix->ext[map[h] - 1] == set->ids[a + j]) {
                        d = map[h] - 1;
                        break;
                    }
                if (d != RV__NO_SLOT && ix->doc_state[d] == RV_BM25_DOC_LIVE) {
                    f->bits[d >> 6] |= (uint64_t)1 << (d & 63);
                    f->n++;
                }
            }
        }
    } else {
        for (uint32_t d = 0; d < ix->n_docs; d++)
            if (ix->doc_state[d] == RV_BM25_DOC_LIVE && rv__idset_has(set, ix->ext[d])) {
                f->bits[d >> 6] |= (uint64_t)1 << (d & 63);
                f->n++;
            }
    }
    return RV_OK;
}

/* First allowed slot >= d, or UINT32_MAX. */
static uint32_t rv__next_allowed(const uint64_t *bits, uint32_t n_docs, uint32_t d) {
    if (d >= n_docs) return UINT32_MAX;
    size_t w = d >> 6, nw = RV_BITSET_WORDS(n_docs);
    uint64_t x = bits[w] & (~(uint64_t)0 << (d & 63));
    while (!x) {
        if (++w >= nw) return UINT32_MAX;
        x = bits[w];
    }
    uint32_t a = (uint32_t)(w << 6) + rv__ctz64(x);
    return a < n_docs ? a : UINT32_MAX;
}

/* -------------------------------------------------------------- heap */

/* The top k so far are a 4-ary heap, the worst at the root (h[0]: the
** cut), the children of h[i] at h[4i + 1 .. 4i + 4].  Four children a
** node halve the levels of a binary heap, and lie in one or two cache
** lines; at k = 500 on Cranfield the binary heap's sift-down took a third
** of a search.  The arity changes nothing a caller sees: the heap holds
** the best k by the order below, whatever its shape. */

/* Whether a ranks below b: a lower score, or an equal one and a larger
** caller id (written with & and |, so that it compiles without a branch). */
static inline int rv__worse(rv__hit a, rv__hit b) {
    return (a.score < b.score) | ((a.score == b.score) & (a.id > b.id));
}

/* Sift h[i] down the heap of n.  The worst child is picked without a
** branch (which one it is is a coin toss), and the hole moves down to
** where h[i] belongs, written once. */
static void rv__sift_down(rv__hit *h, size_t n, size_t i) {
    rv__hit x = h[i];
    for (size_t c; (c = 4 * i + 1) < n;) {
        size_t m = c;
        if (c + 3 < n) {
            size_t a = c + (size_t)rv__worse(h[c + 1], h[c]);
            size_t b = c + 2 + (size_t)rv__worse(h[c + 3], h[c + 2]);
            m = rv__worse(h[b], h[a]) ? b : a;
        } else {
            for (size_t j = c + 1; j < n; j++) m = rv__worse(h[j], h[m]) ? j : m;
        }
        if (!rv__worse(h[m], x)) break;
        h[i] = h[m];
        i = m;
    }
    h[i] = x;
}

static void rv__sift_up(rv__hit *h, size_t i) {
    rv__hit x = h[i];
    while (i) {
        size_t p = (i - 1) / 4;
        if (!rv__worse(x, h[p])) break;
        h[i] = h[p];
        i = p;
    }
    h[i] = x;
}

/* The heap (worst at the root) sorted best first in place -- score
** descending, then id ascending: the worst goes to the end, and so on
** (heapsort; no comparison through a function pointer). */
static void rv__heap_sort(rv__hit *h, size_t n) {
    while (n > 1) {
        rv__hit t = h[0];
        h[0] = h[--n];
        h[n] = t;
        rv__sift_down(h, n, 0);
    }
}

/* h[0 .. n) made a heap (worst at the root). */
static void rv__heapify(rv__hit *h, size_t n) {
    if (n < 2) return;
    for (size_t i = (n - 2) / 4 + 1; i-- > 0;) rv__sift_down(h, n, i);
}

/* h[0 .. n) sorted best first (score descending, then id ascending),
** through tmp (n slots), in linear time (core/score_sort.h): for the large
** results (k >= RV__BULK_K), where heapsort's sift per hit was a fifth of a
** k = 500 search on Cranfield. */
RV__SCORE_SORT(rv__sort_best, rv__hit, score, id)

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
        if (last[mid] < target)
            a = mid + 1;
        else
            e = mid;
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
        if (docs[mid] < target)
            a = mid + 1;
        else
            hi = mid;
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
    const rv_bm25 *ix;
    size_t k, n_heap;
    size_t n_over; /* bulk: survivors waiting past the heap, heap[k .. k + n_over) */
    int bulk;      /* the heap has room for k more (k >= RV__BULK_K) */
    double cut;    /* prune below: the float just under the k-th score */
    double cut0;   /* the same under a lower bound of the final k-th score */
    int full;
    int exhaustive;
    rv__wparams wp;
    const uint64_t *allow; /* live allowed slots (a filter), or NULL */
    rv_bm25_search_info info;
} rv__run;

static inline int rv__eligible(const rv__run *r, uint32_t d) {
    if (r->allow) return (int)((r->allow[d >> 6] >> (d & 63)) & 1);
    return !((r->ix->dead[d >> 6] >> (d & 63)) & 1);
}

/* w(t, d) of posting p of segment g, for a term with the given idf. */
static inline float rv__post_weight(const rv__run *r, const rv__seg *g, uint64_t p, float idf) {
    return rv__seg_weight(r->ix, &r->wp, g, p, idf);
}

/* w(t, d) of the cursor's current posting. */
static inline float rv__cur_weight(const rv__run *r, const rv__cur *c) {
    return rv__post_weight(r, c->seg, c->pos, c->idf);
}

/* Bound of w over block b of the cursor's list (qtf not included). */
static inline double rv__block_bound(const rv__run *r, const rv__cur *c, uint64_t b) {
    const rv__seg *g = c->seg;
    return rv__impact_bound(r->ix, &r->wp, c->idf, g->imp + g->imp_off[b],
                            g->imp_off[b + 1] - g->imp_off[b]);
}

/* The same, remembered for the last block asked about (consecutive windows
** usually fall in one block of a sparse list). */
static inline double rv__block_bound_cached(const rv__run *r, rv__cur *c, uint64_t b) {
    if (c->bb_blk != b) {
        c->bb = rv__block_bound(r, c, b);
        c->bb_blk = b;
    }
    return c->bb;
}

/* The float just below x (x not NaN). */
static inline float rv__below(float x) {
    if (x == 0.0f) return -FLT_TRUE_MIN;
    if (isinf(x)) return x < 0 ? x : FLT_MAX;
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    u = x > 0 ? u - 1 : u + 1;
    memcpy(&x, &u, sizeof x);
    return x;
}

static void rv__set_cut(rv__run *r) {
    if (r->exhaustive) return;
    double c = (double)rv__below(r->s->heap[0].score);
    r->cut = c > r->cut0 ? c : r->cut0;
}

static void rv__offer(rv__run *r, uint32_t doc, float score) {
    rv__hit *heap = r->s->heap;
    /* most candidates lose on the score alone: read the caller id (a
    ** random access) only for those that may enter */
    if (r->n_heap == r->k && score < heap[0].score) return;
    rv__hit h = {score, doc, r->ix->ext[doc]};
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

static float rv__kth_largest(float *v, size_t n, size_t k);

/* Bulk offers (k >= RV__BULK_K, window kernel, heap full): the window's
** survivors that may enter wait past the heap, in heap[k .. 2k), and enter
** together at the end of the window (or when k wait), so that a window of
** many survivors costs one selection instead of a sift each.  The cut is
** then that of the heap at the end of the window, as with single offers:
** within the window it only decided which survivors reach the heap. */
static void rv__flush(rv__run *r) {
    size_t m = r->n_over, k = r->k;
    if (!m) return;
    rv__hit *h = r->s->heap;
    r->n_over = 0;
    if (m > k / 8) {
        /* many (a dense window): the k-th best score t among the n; when
        ** exactly k score >= t, they are the best k, kept in one pass */
        size_t n = k + m, above = 0, j = 0;
        float *v = r->s->sel;
        for (size_t i = 0; i < n; i++) v[i] = h[i].score;
        float t = rv__kth_largest(v, n, k);
        for (size_t i = 0; i < n; i++) above += v[i] >= t;
        if (above == k) {
            for (size_t i = 0; i < n; i++) {
                rv__hit x = h[i];
                h[j] = x;
                j += x.score >= t;
            }
            rv__heapify(h, k);
            rv__set_cut(r);
            return;
        }
        /* a tie at t reaches past the k-th place (rare): ids decide, as
        ** in a sift each (h[0 .. k) is still the heap) */
    }
    for (size_t i = 0; i < m; i++) { /* few: a sift each */
        rv__hit x = h[k + i];
        if (!rv__worse(h[0], x)) continue;
        h[0] = x;
        rv__sift_down(h, k, 0);
    }
    rv__set_cut(r);
}

static inline void rv__offer_bulk(rv__run *r, uint32_t doc, float score) {
    rv__hit *heap = r->s->heap;
    if (r->n_heap < r->k) {
        rv__offer(r, doc, score);
        return;
    }
    if (score < heap[0].score) return;
    rv__hit h = {score, doc, r->ix->ext[doc]};
    heap[r->k + r->n_over++] = h;
    if (r->n_over == r->k) rv__flush(r);
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

/* Cursors of the query terms present in seg, in canonical (ascending term)
** order, with their bounds; returns their number. */
static size_t rv__cursors_canonical(rv__run *r, const rv__seg *seg) {
    rv__scratch *s = r->s;
    const rv_bm25 *ix = r->ix;
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
        c->idf = s->qidf[q];
        c->qtf = (double)s->qtf[q];
        c->ub = c->qtf * rv__impact_bound(ix, &r->wp, c->idf, seg->timp + seg->timp_off[i],
                                          seg->timp_off[i + 1] - seg->timp_off[i]);
        c->q = (uint32_t)q;
        c->bb_blk = UINT64_MAX;
        r->info.postings_total += c->end - c->start;
    }
    return nc;
}

/* The same, sorted by ub, with prefix sums of ub (for MaxScore). */
static size_t rv__cursors(rv__run *r, const rv__seg *seg) {
    size_t nc = rv__cursors_canonical(r, seg);
    rv__cur *cur = r->s->cur;
    rv__sort_cursors(cur, nc);
    double acc = 0;
    for (size_t j = 0; j < nc; j++) r->s->prefix[j] = (acc += cur[j].ub);
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
static void rv__search_seg_daat(rv__run *r, const rv__seg *seg, size_t nc) {
    rv__scratch *s = r->s;
    rv__cur *cur = s->cur;
    if (nc == SIZE_MAX) nc = rv__cursors(r, seg);
    if (!nc) return;
    double *prefix = s->prefix;
    size_t ne = rv__n_nonessential(r, nc); /* cursors [0, ne) are non-essential */
    for (;;) {
        uint32_t d = UINT32_MAX;
        for (size_t j = ne; j < nc; j++)
            if (cur[j].doc < d) d = cur[j].doc;
        if (d == UINT32_MAX) break;
        if (!rv__eligible(r, d)) {
            /* jump to the next allowed slot (a filter) or the next posting */
            uint32_t to = d + 1;
            if (r->allow) {
                to = rv__next_allowed(r->allow, r->ix->n_docs, d + 1);
                if (to == UINT32_MAX || to >= seg->doc_end) break;
            }
            for (size_t j = ne; j < nc; j++)
                if (cur[j].doc < to) rv__next_geq(&cur[j], to);
            continue;
        }
        size_t nt = 0;
        double partial = 0;
        for (size_t j = ne; j < nc; j++) {
            rv__cur *c = &cur[j];
            if (c->doc != d) continue;
            float w = rv__cur_weight(r, c);
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
            double bm = b < c->blk_end ? c->qtf * rv__block_bound(r, c, b) : 0.0;
            if (rv__hopeless(r, partial + bm + rest)) {
                keep = 0;
                break;
            }
            rv__next_geq(c, d);
            if (c->doc == d) {
                float w = rv__cur_weight(r, c);
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
** Direct: score the allowed documents of seg (list[0 .. n), ascending) one
** by one, probing each query term's list for them.  Cursors are in
** canonical order, so the sum needs no sorting.  Once the heap is full,
** the rest of the segment goes when even every list's bound together
** cannot beat the cut.
*/
static void rv__search_seg_direct(rv__run *r, const rv__seg *seg, const uint32_t *list, size_t n) {
    rv__scratch *s = r->s;
    rv__cur *cur = s->cur;
    size_t nc = rv__cursors_canonical(r, seg);
    if (!nc || !n) return;
    double total_ub = 0;
    for (size_t j = 0; j < nc; j++) total_ub += cur[j].ub;
    for (size_t i = 0; i < n; i++) {
        if (rv__hopeless(r, total_ub)) break;
        uint32_t d = list[i];
        double sum = 0;
        int matched = 0;
        for (size_t j = 0; j < nc; j++) {
            rv__cur *c = &cur[j];
            if (c->doc < d) rv__next_geq(c, d);
            if (c->doc != d) continue;
            float w = rv__cur_weight(r, c);
            sum += c->qtf * (double)w;
            matched = 1;
            r->info.postings_scored++;
        }
        if (!matched) continue;
        r->info.docs_scored++;
        rv__offer(r, d, (float)sum);
    }
}

/* Window width for a segment's essential lists: about RV__WIN_POSTINGS of
** their postings per window (the per-window work -- bounds, cursor moves --
** then stays small beside the postings), a power of two between RV__WIN
** and RV__WIN_MAX slots. */
static uint32_t rv__window_width(const rv__cur *cur, size_t ne, size_t nc, const rv__seg *seg) {
    uint64_t post = 0;
    for (size_t j = ne; j < nc; j++) post += cur[j].end - cur[j].start;
    uint64_t slots = seg->doc_end - seg->doc_base;
    uint32_t w = RV__WIN;
    while (w < RV__WIN_MAX && post * w < (uint64_t)RV__WIN_POSTINGS * slots) w *= 2;
    return w;
}

/* Sort the candidates cand[0 .. n) ascending: by insertion when few, from
** the window's bitmap (where exactly they are set; nw words) when that is
** cheaper than a radix sort (tmp: n slots of scratch). */
static void rv__sort_cand(uint32_t *cand, size_t n, const uint64_t *bits, uint32_t nw,
                          uint32_t *tmp) {
    if (n <= 32) {
        for (size_t t = 1; t < n; t++) {
            uint32_t i = cand[t];
            size_t u = t;
            while (u && cand[u - 1] > i) {
                cand[u] = cand[u - 1];
                u--;
            }
            cand[u] = i;
        }
    } else if (nw <= 8 * n) {
        size_t m = 0;
        for (uint32_t w = 0; w < nw; w++)
            for (uint64_t x = bits[w]; x; x &= x - 1) cand[m++] = (w << 6) + rv__ctz64(x);
    } else {
        rv__sort_u32(cand, n, tmp);
    }
}

/* Drop the candidates cand[0 .. n) that cannot beat the cut even with
** `rest` more (their partial score and bit go back to zero); returns how
** many are left, in the same order.  No branch per candidate. */
static size_t rv__prune_cand(const rv__run *r, double *part, uint64_t *bits, uint32_t *cand,
                             size_t n, double rest) {
    const double cut = r->cut;
    size_t m = 0;
    for (size_t t = 0; t < n; t++) {
        uint32_t i = cand[t];
        double v = part[i];
        int keep = !((v + rest) * RV__MARGIN <= cut);
        cand[m] = i;
        m += (size_t)keep;
        part[i] = keep ? v : 0.0;
        bits[i >> 6] &= ~((uint64_t)!keep << (i & 63));
    }
    return m;
}

/*
** Window at a time (Lucene's MaxScore bulk scorer, with block-max window
** skipping): documents are taken a window of slots at a time (its width
** set by the density of the essential lists, rv__window_width).  In a
** window,
**  1. if the block bounds of the essential lists plus the bounds of the
**     non-essential ones cannot beat the cut, the window is skipped;
**  2. the essential lists are added term at a time into per-document
**     partial scores (double, kept all zero between windows); a bitmap
**     marks the documents touched, and each document's first touch appends
**     it to the candidates -- no branch per posting;
**  3. candidates that cannot make it even with every non-essential list
**     are dropped;
**  4. each non-essential list, largest ub first, first drops the candidates
**     that cannot make it even with it and the lists below it, then adds its
**     weights -- by walking its postings in the window when they are fewer
**     than the candidates, else by probing each candidate in slot order;
**  5. survivors are offered to the heap.
** A partial score is the final one once every list has been added: the
** kernel runs only for queries whose sums do not depend on the order of
** their terms (rv__order_free).  With a filter, a window starts at an
** allowed slot, and only allowed documents become candidates.
*/
static void rv__search_seg_window(rv__run *r, const rv__seg *seg, size_t nc) {
    rv__scratch *s = r->s;
    rv__cur *cur = s->cur;
    if (nc == SIZE_MAX) nc = rv__cursors(r, seg);
    if (!nc) return;
    double *prefix = s->prefix;
    double *part = s->wpart;
    uint64_t *bits = s->wbits;
    uint32_t *cand = s->cand;
    const uint64_t *allow = r->allow;
    const uint64_t *dead = seg->n_dead ? r->ix->dead : NULL;
    const float *gtab = r->ix->gtab;
    const uint32_t n_codes = r->ix->n_codes;
    const uint16_t *code = seg->code;
    uint32_t lo = seg->doc_base;
    size_t ne_width = SIZE_MAX;
    uint32_t width = RV__WIN;
    for (;;) {
        size_t ne = rv__n_nonessential(r, nc);
        if (ne == nc) break; /* nothing left can beat the cut */
        if (ne != ne_width) {
            width = rv__window_width(cur, ne, nc, seg);
            ne_width = ne;
        }
        uint32_t dmin = UINT32_MAX;
        for (size_t j = ne; j < nc; j++) {
            if (cur[j].doc < lo) rv__next_geq(&cur[j], lo);
            if (cur[j].doc < dmin) dmin = cur[j].doc;
        }
        if (dmin == UINT32_MAX) break;
        lo = dmin;
        if (allow) { /* start the window at an allowed slot */
            uint32_t a = rv__next_allowed(allow, r->ix->n_docs, lo);
            if (a == UINT32_MAX || a >= seg->doc_end) break;
            if (a > lo) {
                lo = a;
                continue;
            }
        }
        /* windows start on a multiple of 64 slots, so a window's words of
        ** candidates line up with the words of the slot bitmaps; the slots
        ** before dmin hold no essential posting and cost nothing */
        lo &= ~(uint32_t)63;
        uint32_t hi = seg->doc_end - lo > width ? lo + width : seg->doc_end;
        double ne_ub = ne ? prefix[ne - 1] : 0.0;
        /* 1. block bound of the window */
        if (r->cut > -INFINITY) {
            double wub = ne_ub;
            for (size_t j = ne; j < nc; j++) {
                rv__cur *c = &cur[j];
                if (c->doc >= hi) continue;
                double m = 0;
                for (uint64_t b = c->blk; b < c->blk_end; b++) {
                    double bb = rv__block_bound_cached(r, c, b);
                    if (bb > m) m = bb;
                    if (seg->block_last[b] >= hi - 1) break;
                }
                wub += c->qtf * m;
            }
            if (rv__hopeless(r, wub)) {
                for (size_t j = ne; j < nc; j++) rv__next_geq(&cur[j], hi);
                lo = hi;
                continue;
            }
        }
        /* 2. essential lists, term at a time -- or, when a filter allows
        ** fewer documents in the window than the lists hold postings there,
        ** allowed document at a time, probing each list for it */
        size_t n = 0;
        int probe = 0;
        if (allow) {
            uint64_t n_allowed = 0, n_post = 0;
            for (uint32_t w = lo >> 6; w <= (hi - 1) >> 6; w++) {
                uint64_t x = allow[w];
                if (w == lo >> 6) x &= ~(uint64_t)0 << (lo & 63);
                if (w == (hi - 1) >> 6 && (hi & 63)) x &= ((uint64_t)1 << (hi & 63)) - 1;
                n_allowed += rv__popcount64(x);
            }
            for (size_t j = ne; j < nc; j++)
                n_post += (rv__find_block(&cur[j], hi) - cur[j].blk + 1) * RV__BLOCK;
            probe = n_allowed * (nc - ne) < n_post;
        }
        if (probe) {
            for (uint32_t d = rv__next_allowed(allow, r->ix->n_docs, lo); d < hi;
                 d = rv__next_allowed(allow, r->ix->n_docs, d + 1)) {
                uint32_t i = d - lo;
                for (size_t j = ne; j < nc; j++) {
                    rv__cur *c = &cur[j];
                    if (c->doc < d) rv__next_geq(c, d);
                    if (c->doc != d) continue;
                    part[i] += c->qtf * (double)rv__cur_weight(r, c);
                    uint64_t x = bits[i >> 6], b = (uint64_t)1 << (i & 63);
                    cand[n] = i;
                    n += !(x & b);
                    bits[i >> 6] = x | b;
                    r->info.postings_scored++;
                }
            }
            for (size_t j = ne; j < nc; j++) rv__next_geq(&cur[j], hi);
        }
        for (size_t j = ne; j < nc && !probe; j++) {
            rv__cur *c = &cur[j];
            const double qtf = c->qtf;
            const float idf = c->idf;
            const uint64_t e = c->end, p0 = c->pos;
            const uint32_t *docs = c->docs;
            uint64_t p = p0;
            if (seg->block_last[c->blk_end - 1] < hi) {
                /* the list ends in the window */
                for (; p < e; p++) {
                    uint32_t i = docs[p] - lo, cd = code[p];
                    float w =
                        RV__LIKELY(cd < n_codes) ? idf * gtab[cd] : rv__post_weight(r, seg, p, idf);
                    part[i] += qtf * (double)w;
                    uint64_t x = bits[i >> 6], b = (uint64_t)1 << (i & 63);
                    cand[n] = i;
                    n += !(x & b);
                    bits[i >> 6] = x | b;
                }
            } else {
                /* a posting at or past hi stops the walk before e */
                for (; docs[p] < hi; p++) {
                    uint32_t i = docs[p] - lo, cd = code[p];
                    float w =
                        RV__LIKELY(cd < n_codes) ? idf * gtab[cd] : rv__post_weight(r, seg, p, idf);
                    part[i] += qtf * (double)w;
                    uint64_t x = bits[i >> 6], b = (uint64_t)1 << (i & 63);
                    cand[n] = i;
                    n += !(x & b);
                    bits[i >> 6] = x | b;
                }
            }
            r->info.postings_scored += p - p0;
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
        /* 3. the candidates that could make it with every non-essential
        ** list; only a filter or deleted documents in the segment need
        ** checking */
        if (allow || dead) {
            size_t m = 0;
            for (size_t t = 0; t < n; t++) {
                uint32_t i = cand[t];
                if (rv__eligible(r, lo + i)) {
                    cand[m++] = i;
                } else {
                    part[i] = 0;
                    bits[i >> 6] &= ~((uint64_t)1 << (i & 63));
                }
            }
            n = m;
        }
        n = rv__prune_cand(r, part, bits, cand, n, ne_ub);
        /* 4. non-essential lists, largest bound first; probing wants the
        ** candidates in slot order */
        int sorted = 0;
        for (size_t jj = ne; jj-- > 0 && n;) {
            rv__cur *c = &cur[jj];
            if (jj + 1 < ne) { /* the drop for jj + 1 .. ne - 1 was done */
                n = rv__prune_cand(r, part, bits, cand, n, prefix[jj]);
                if (!n) break;
            }
            if (c->doc < lo) rv__next_geq(c, lo);
            if (c->doc >= hi) continue;
            const double qtf = c->qtf;
            const float idf = c->idf;
            /* postings of this list in the window, roughly, from its blocks */
            uint64_t bl = rv__find_block(c, hi);
            uint64_t span = (bl - c->blk + 1) * RV__BLOCK;
            if (span < 16 * n) { /* walk the list over the bitmap of candidates */
                uint64_t p = c->pos, e = c->end;
                const uint32_t *docs = c->docs;
                uint64_t hit = 0;
                for (; p < e && docs[p] < hi; p++) {
                    uint32_t i = docs[p] - lo;
                    if ((bits[i >> 6] >> (i & 63)) & 1) {
                        part[i] += qtf * (double)rv__post_weight(r, seg, p, idf);
                        hit++;
                    }
                }
                r->info.postings_scored += hit;
                if (p >= e) {
                    c->pos = e;
                    c->doc = UINT32_MAX;
                    c->blk = c->blk_end;
                } else {
                    c->pos = p;
                    c->doc = docs[p];
                    c->blk = c->blk0 + (p - c->start) / RV__BLOCK;
                }
            } else { /* probe each candidate, in slot order */
                if (!sorted) {
                    rv__sort_cand(cand, n, bits, (hi - lo + 63) / 64, s->cand_tmp);
                    sorted = 1;
                }
                for (size_t t = 0; t < n; t++) {
                    uint32_t i = cand[t];
                    rv__next_geq(c, lo + i);
                    if (c->doc >= hi) break;
                    if (c->doc != lo + i) continue;
                    part[i] += qtf * (double)rv__cur_weight(r, c);
                    r->info.postings_scored++;
                }
            }
        }
        /* 5. the survivors, whose partial scores are now their scores */
        for (size_t t = 0; t < n; t++) {
            uint32_t i = cand[t];
            double v = part[i];
            part[i] = 0;
            bits[i >> 6] = 0;
            if (rv__hopeless(r, v)) continue;
            r->info.docs_scored++;
            if (r->bulk)
                rv__offer_bulk(r, lo + i, (float)v);
            else
                rv__offer(r, lo + i, (float)v);
        }
        rv__flush(r);
        if (hi >= seg->doc_end) break;
        lo = hi;
    }
}

/* The bucket, of RV__SEL_BUCKETS over [0, top], of a score >= 0 (scale:
** RV__SEL_BUCKETS / top): a function of the score that never decreases as
** it grows (scores above top share the last bucket). */
static inline uint32_t rv__sel_bucket(float score, float scale) {
    float x = score * scale;
    return x < (float)RV__SEL_BUCKETS ? (uint32_t)x : RV__SEL_BUCKETS - 1;
}

/* Offer to the heap the best k of m candidates (slots lo + cand[t], scores
** sc[t] >= 0, none above top but by rounding), and a few more: those whose
** bucket (rv__sel_bucket) is at least that of the k-th best score.  A
** document scoring below that bucket scores strictly below the k-th best,
** so it could not enter; the heap settles the rest, ties by caller id.
** One counting pass without a data-dependent branch (a quickselect's
** mispredicted branches cost more than the postings on Cranfield), then a
** pass that offers about k. */
static void rv__offer_best(rv__run *r, uint32_t lo, const uint32_t *cand, const float *sc, size_t m,
                           double top) {
    const float scale = (float)((double)RV__SEL_BUCKETS / top); /* inf for top 0 */
    uint32_t from = 0;
    if (m > r->k && isfinite(scale)) {
        /* four counts a bucket, so that runs of one bucket (low scores are
        ** many) do not wait on each other's increments */
        uint32_t hist[4][RV__SEL_BUCKETS];
        memset(hist, 0, sizeof hist);
        for (size_t t = 0; t < m; t++) hist[t & 3][rv__sel_bucket(sc[t], scale)]++;
        size_t above = 0;
        from = RV__SEL_BUCKETS;
        while (above < r->k) {
            from--;
            above += (size_t)hist[0][from] + hist[1][from] + hist[2][from] + hist[3][from];
        }
    }
    /* while the heap has room, the offers go in as they come and the heap
    ** is made once (a sift each cost a fifth of a k = 500 search) */
    size_t t = 0;
    rv__hit *heap = r->s->heap;
    if (r->n_heap < r->k) {
        for (; t < m && r->n_heap < r->k; t++) {
            if (from && rv__sel_bucket(sc[t], scale) < from) continue;
            uint32_t d = lo + cand[t];
            heap[r->n_heap++] = (rv__hit){sc[t], d, r->ix->ext[d]};
        }
        rv__heapify(heap, r->n_heap);
        if (r->n_heap == r->k) {
            r->full = 1;
            rv__set_cut(r);
        }
    }
    for (; t < m; t++) {
        if (from && rv__sel_bucket(sc[t], scale) < from) continue;
        if (r->bulk)
            rv__offer_bulk(r, lo + cand[t], sc[t]);
        else
            rv__offer(r, lo + cand[t], sc[t]);
    }
    rv__flush(r);
}

/* Does every posting of the query weigh more than zero?  Then a document
** matched a query term exactly when its summed score is above zero.  The
** smallest weight of a term is about idf * g(1, longest document) (see
** rv__order_free; the half covers rounding). */
static int rv__weights_positive(const rv__run *r) {
    const rv__scratch *s = r->s;
    float glow = 0.5f * rv__g(r->ix, &r->wp, 1, r->ix->max_dl);
    for (size_t q = 0; q < s->nq; q++)
        if (!(s->qidf[q] * glow >= FLT_MIN)) return 0;
    return 1;
}

/*
** Term at a time, for a segment of short lists that pruning would not
** thin much (rv__use_taat): every list is added whole, in canonical
** (ascending term) order, into per-document partial scores over the
** segment's slots -- the order the document-at-a-time kernel sums in, so
** the scores are the same bits whatever rv__order_free says -- with no
** bounds, cursors or cut to keep.  The documents touched are then read off
** the partial scores, either by a sweep of the slots (when the slots are
** few beside the postings and every weight is above zero) or from the
** postings' own list, and the best k of the live allowed ones go to the
** heap (rv__offer_best).  On Cranfield (1,400 documents, 10 query terms
** and 1,800 postings a query, of which MaxScore skips only a tenth to a
** quarter) the pruned kernels' bookkeeping cost more than the postings.
** nc: the segment's cursors, by bound (rv__use_taat built them).  Kept out
** of rv__run_query, where the window kernel is inlined: inlining both cost
** the window kernel 6 % at 300,000 documents.
*/
static RV__NOINLINE void rv__search_seg_taat(rv__run *r, const rv__seg *seg, size_t nc) {
    rv__scratch *s = r->s;
    rv__cur *cur = s->cur;
    /* the cursors (rv__use_taat's, by bound) back in canonical order */
    for (size_t i = 1; i < nc; i++) {
        rv__cur x = cur[i];
        size_t j = i;
        while (j && cur[j - 1].q > x.q) {
            cur[j] = cur[j - 1];
            j--;
        }
        cur[j] = x;
    }
    double *part = s->wpart;
    uint32_t *cand = s->cand;
    float *sc = s->wscore;
    const float *gtab = r->ix->gtab;
    const uint32_t n_codes = r->ix->n_codes;
    const uint16_t *code = seg->code;
    const uint32_t lo = seg->doc_base, span = seg->doc_end - seg->doc_base;
    uint64_t n_post = 0;
    double top = 0;
    for (size_t j = 0; j < nc; j++) {
        n_post += cur[j].end - cur[j].start;
        top += cur[j].ub;
    }
    const int sweep = span <= 2 * n_post && rv__weights_positive(r);
    size_t n = 0;
    for (size_t j = 0; j < nc; j++) {
        const rv__cur *c = &cur[j];
        const double qtf = c->qtf;
        const float idf = c->idf;
        const uint32_t *docs = c->docs;
        const uint64_t e = c->end;
        if (sweep) {
            for (uint64_t p = c->start; p < e; p++) {
                uint32_t i = docs[p] - lo, cd = code[p];
                float w =
                    RV__LIKELY(cd < n_codes) ? idf * gtab[cd] : rv__post_weight(r, seg, p, idf);
                part[i] += qtf * (double)w;
            }
        } else {
            /* each posting's document joins the candidates, repeats and
            ** all: no check, so no chain through memory from one posting
            ** to the next */
            for (uint64_t p = c->start; p < e; p++) {
                uint32_t i = docs[p] - lo, cd = code[p];
                float w =
                    RV__LIKELY(cd < n_codes) ? idf * gtab[cd] : rv__post_weight(r, seg, p, idf);
                part[i] += qtf * (double)w;
                cand[n++] = i;
            }
        }
        r->info.postings_scored += e - c->start;
    }
    /* the candidates: documents touched whose score beats the cut (a
    ** lower bound of the final k-th score, when there is one: rv__first_cut
    ** or earlier segments) */
    const double cut = r->cut;
    size_t m = 0, touched = 0;
    if (sweep) {
        /* the slots in order: a touched one holds a score above zero */
        for (uint32_t i = 0; i < span; i++) {
            double v = part[i];
            cand[m] = i;
            sc[m] = (float)v;
            touched += v > 0;
            m += (v > 0) & (v * RV__MARGIN > cut);
            part[i] = 0;
        }
    } else {
        /* each document once: scores are >= 0, so -1 marks one taken (the
        ** kept ones go to cand_tmp, cand stays whole for the reset) */
        uint32_t *kept = s->cand_tmp;
        for (size_t t = 0; t < n; t++) {
            uint32_t i = cand[t];
            double v = part[i];
            kept[m] = i;
            sc[m] = (float)v;
            touched += v >= 0;
            m += (v >= 0) & (v * RV__MARGIN > cut);
            part[i] = -1.0;
        }
        for (size_t t = 0; t < n; t++) part[cand[t]] = 0;
        cand = kept;
    }
    if (r->allow || seg->n_dead) { /* the live allowed ones */
        size_t u = 0;
        for (size_t t = 0; t < m; t++) {
            if (!rv__eligible(r, lo + cand[t])) continue;
            cand[u] = cand[t];
            sc[u++] = sc[t];
        }
        m = u;
    }
    r->info.docs_scored += touched;
    rv__offer_best(r, lo, cand, sc, m, top);
}

#ifdef RV_TEST_HOOKS
static _Atomic uint64_t rv__taat_postings = RV__TAAT_POSTINGS;
uint64_t rv__test_bm25_taat_postings(uint64_t n) {
    return atomic_exchange(&rv__taat_postings, n);
}
#  define RV__TAAT_LIMIT() atomic_load_explicit(&rv__taat_postings, memory_order_relaxed)
#else
#  define RV__TAAT_LIMIT() ((uint64_t)RV__TAAT_POSTINGS)
#endif

/* Should seg be searched term at a time?  When it spans at most
** RV__WIN_MAX slots (the window buffers), the query's lists hold at most
** RV__TAAT_POSTINGS postings there (a test build can change the limit),
** and pruning would not thin them much: under the current cut, the lists
** MaxScore walks whole (the essential ones) hold at least a third of the
** postings.  Where MaxScore can skip most of the postings by probing the
** long lists for a few candidates, it stays ahead.  Measured side by side
** in one process (the libraries with and without this kernel loaded at
** once, each query's best of 31 runs): on Cranfield's 225 queries a
** search takes 0.6x (k = 10) and 0.5x (k = 100) the time of MaxScore
** alone; on synthetic Zipf collections of 1,400 to 32,768 documents (80
** queries of 2 to 12 terms, k 10 and 100: 800 searches) the total time is
** 2 % lower, the median search unchanged, the best 0.52x and the worst
** 1.6x (k = 10, a 10 us search that MaxScore thins to a third); 300,000
** documents (one segment, too wide for this kernel) are unchanged.
** *nc: the segment's cursors, which this builds (rv__cursors, sorted by
** bound) for whichever kernel runs; SIZE_MAX when it did not (a segment
** too wide: the kernel builds them). */
static int rv__use_taat(rv__run *r, const rv__seg *seg, size_t *nc) {
    *nc = SIZE_MAX;
    if (seg->doc_end - seg->doc_base > RV__WIN_MAX) return 0;
    uint64_t total = r->info.postings_total;
    *nc = rv__cursors(r, seg);
    uint64_t post = r->info.postings_total - total;
    if (!*nc || post > RV__TAAT_LIMIT() || post > RV__WIN_MAX) return 0;
    const rv__cur *cur = r->s->cur;
    uint64_t essential = 0;
    for (size_t j = rv__n_nonessential(r, *nc); j < *nc; j++)
        essential += cur[j].end - cur[j].start;
    return 3 * essential >= post;
}

/* Allocate the window and term-at-a-time kernels' buffers (once per
** scratch).  The partial scores and the bitmap start (and are left) all
** zero. */
static rv_status rv__window_alloc(rv__scratch *s) {
    if (s->wpart) return RV_OK;
    s->wpart = rv__calloc(RV__WIN_MAX, sizeof *s->wpart);
    s->wbits = rv__calloc(RV__WIN_MAX / 64, sizeof *s->wbits);
    s->cand = rv__malloc(RV__WIN_MAX * sizeof *s->cand);
    s->cand_tmp = rv__malloc(RV__WIN_MAX * sizeof *s->cand_tmp);
    s->wscore = rv__malloc(RV__WIN_MAX * sizeof *s->wscore);
    if (!s->wpart || !s->wbits || !s->cand || !s->cand_tmp || !s->wscore) {
        rv__free(s->wpart);
        rv__free(s->wbits);
        rv__free(s->cand);
        rv__free(s->cand_tmp);
        rv__free(s->wscore);
        s->wpart = NULL;
        s->wbits = NULL;
        s->cand = NULL;
        s->cand_tmp = NULL;
        s->wscore = NULL;
        return rv__nomem("the search window");
    }
    return RV_OK;
}

/*
** Do the query's document scores come out the same whatever order their
** terms are added in?  A score is the sum of qtf * w over the matched
** terms, each w a float and the sum in double precision.  Every w of a
** term with idf > 0 is at least wlow = idf * (g(1, longest document) / 2)
** (g grows with tf and falls with the length, up to a few ulps of float
** rounding, which the half covers), so it is a whole multiple of the ulp
** of wlow; terms with idf 0 add exactly 0.  If 2^E is the smallest such
** ulp over the query's terms and every sum stays below 2^(53 + E), every
** partial sum is a whole multiple of 2^E that double precision holds
** exactly: each order gives the exact sum.  The bound on a sum is the sum
** of qtf * idf * (the largest g of the variant); it holds for all but
** extreme weight ratios (about 2^27 between a query's largest and smallest
** weight).  Queries that fail take the document-at-a-time kernel, which
** adds in canonical order.
*/
static int rv__order_free(const rv__run *r) {
    const rv__scratch *s = r->s;
    const rv_bm25 *ix = r->ix;
    const rv__wparams *wp = &r->wp;
    float glow = 0.5f * rv__g(ix, wp, 1, ix->max_dl);
    double gup;
    switch (wp->v) {
    case RV_BM25_ATIRE:
    case RV_BM25_L:
        gup = (double)wp->k1p1;
        break;
    case RV_BM25_PLUS:
        gup = (double)wp->k1p1 + (double)wp->delta;
        break;
    default:
        gup = 1.0;
    }
    if (!(glow > 0.0f) || !isfinite(gup)) return 0;
    int emin = INT_MAX;
    double total = 0;
    for (size_t q = 0; q < s->nq; q++) {
        float idf = s->qidf[q];
        if (idf == 0.0f) continue;
        float wlow = idf * glow;
        if (!(wlow >= FLT_MIN) || !isfinite(idf)) return 0;
        int ex;
        (void)frexpf(wlow, &ex); /* wlow in [2^(ex-1), 2^ex): ulp 2^(ex - 24) */
        if (ex - 24 < emin) emin = ex - 24;
        total += (double)s->qtf[q] * (double)idf * gup;
    }
    if (emin == INT_MAX) return 1; /* every weight is 0 */
    return total * 1.01 < ldexp(1.0, 53 + emin);
}

/* The k-th largest of v[0 .. n) (1 <= k <= n; v is reordered):
** quickselect with Hoare's partition. */
static float rv__kth_largest(float *v, size_t n, size_t k) {
    ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1, want = (ptrdiff_t)k - 1;
    while (lo < hi) {
        float pivot = v[lo + (hi - lo) / 2];
        ptrdiff_t i = lo - 1, j = hi + 1;
        for (;;) { /* [lo, j] >= pivot >= [j + 1, hi] */
            do i++;
            while (v[i] > pivot);
            do j--;
            while (v[j] < pivot);
            if (i >= j) break;
            float t = v[i];
            v[i] = v[j];
            v[j] = t;
        }
        if (want <= j)
            hi = j;
        else
            lo = j + 1;
    }
    return v[want];
}

/*
** A lower bound of the query's final k-th score, before search starts:
** every weight is >= 0, so a document scores at least qtf * w(t, d) for
** each of its terms, and k documents of one list with weights >= x make the
** k-th score >= x.  The documents are those the segment ranked first in
** each list (rv__seg: top), or the whole list when it is short; only live
** documents the filter allows count.  Terms whose list bound cannot raise
** the bound are skipped.  Returns the bound, or -INFINITY.
*/
static double rv__first_cut(rv__run *r) {
    rv__scratch *s = r->s;
    const rv_bm25 *ix = r->ix;
    size_t k = r->k;
    if (k > RV__TOP) return -INFINITY;
    float vals[RV__TOP];
    double best = -INFINITY;
    size_t want = 2 * k + 16; /* of a long list's top: room for deletes */
    for (size_t si = 0; si < ix->n_segs; si++) {
        const rv__seg *g = ix->segs[si];
        for (size_t q = 0; q < s->nq; q++) {
            size_t i = rv__seg_find(g, s->qterm[q]);
            if (i == SIZE_MAX) continue;
            uint64_t a = g->offsets[i], len = g->offsets[i + 1] - a;
            if (len < k) continue;
            double qtf = (double)s->qtf[q];
            float idf = s->qidf[q];
            double ub = qtf * rv__impact_bound(ix, &r->wp, idf, g->timp + g->timp_off[i],
                                               g->timp_off[i + 1] - g->timp_off[i]);
            if (ub <= best) continue;
            const uint32_t *top = len > RV__TOP ? g->top + g->top_off[i] : NULL;
            size_t m = len > RV__TOP ? (want < RV__TOP ? want : RV__TOP) : (size_t)len, n = 0;
            for (size_t j = 0; j < m; j++) {
                uint64_t p = a + (top ? top[j] : j);
                if (!rv__eligible(r, g->docs[p])) continue;
                vals[n++] = (float)(qtf * (double)rv__post_weight(r, g, p, idf));
            }
            if (n < k) continue;
            double x = (double)rv__kth_largest(vals, n, k);
            if (x > best) best = x;
        }
    }
    return best;
}

/* Should a filtered query score the allowed documents directly?  When
** they are few (a list exists only for at most one in RV__DIRECT_SHARE
** slots) and there are at most 4 probes (documents times terms) per
** posting in the query's lists.  Measured on 1M synthetic documents
** (bench/filters.py): probing costs ~25 ns a term per allowed document, the
** pruned kernel ~0.1-1 ms a query whatever the filter; they cross at
** 5,000-9,000 allowed documents for both query mixes, while a query of
** rare terms is cheaper through its few postings whatever the filter. */
static int rv__use_direct(const rv__scratch *s, const rv__filter *f) {
    if (!f->list) return 0;
    uint64_t postings = 0;
    for (size_t q = 0; q < s->nq; q++) postings += s->ix->df[s->qterm[q]];
    return (uint64_t)f->n * s->nq <= 4 * postings;
}

/* Run the prepared query in s over every segment; write results.  f may
** gain its bitmap here (single searches build it on demand); a batch
** builds it up front, as threads share f. */
static rv_status rv__run_query(rv__scratch *s, size_t k, unsigned flags, rv__filter *f,
                               int64_t *ids, float *scores, size_t *n_found,
                               rv_bm25_search_info *info) {
    const rv_bm25 *ix = s->ix;
    rv_status st;
    size_t heap_need = k;
    if (heap_need > ix->n_live) heap_need = ix->n_live;
    if (f->on && heap_need > f->n) heap_need = f->n;
    if (heap_need == 0) heap_need = 1;
    /* large k: room for k bulk offers past the heap (also the final sort's
    ** second buffer), and their scores */
    int bulk = heap_need >= RV__BULK_K;
    size_t cap = bulk ? 2 * heap_need : heap_need;
    if (cap > s->heap_cap) {
        rv__free(s->heap);
        s->heap = rv__malloc(cap * sizeof *s->heap);
        if (!s->heap) {
            s->heap_cap = 0;
            return rv__nomem("the result heap");
        }
        s->heap_cap = cap;
    }
    if (bulk && 2 * heap_need > s->sel_cap) {
        rv__free(s->sel);
        s->sel = rv__malloc(2 * heap_need * sizeof *s->sel);
        if (!s->sel) {
            s->sel_cap = 0;
            return rv__nomem("the result heap");
        }
        s->sel_cap = 2 * heap_need;
    }
    rv__run r;
    memset(&r, 0, sizeof r);
    r.s = s;
    r.ix = ix;
    r.k = k < heap_need ? k : heap_need;
    r.bulk = bulk; /* (then r.k = heap_need >= RV__BULK_K) */
    r.exhaustive = (flags & RV_BM25_EXHAUSTIVE) != 0;
    rv__wparams_of(ix, &r.wp);
    r.info.n_query_terms = s->nq;
    r.info.filter_docs = f->on ? f->n : ix->n_live;
    int direct = f->on && !r.exhaustive && rv__use_direct(s, f);
    r.info.filter_direct = direct;
    if (f->on && !direct && (st = rv__filter_bits(ix, f)) != RV_OK) return st;
    r.allow = f->on ? f->bits : NULL;
    int pruned = !direct && !r.exhaustive;
    int window = pruned && rv__order_free(&r);
    if (pruned && s->nq && (st = rv__window_alloc(s)) != RV_OK) return st;
    if (s->nq && !(f->on && f->n == 0)) {
        r.cut = r.cut0 = -INFINITY;
        if (pruned) {
            double x = rv__first_cut(&r);
            if (x > -INFINITY) r.cut = r.cut0 = (double)rv__below((float)x);
        }
        size_t at = 0; /* direct: the next allowed document */
        for (size_t i = 0; i < ix->n_segs; i++) {
            const rv__seg *g = ix->segs[i];
            if (direct) {
                size_t from = at;
                while (at < f->n && f->list[at] < g->doc_end) at++;
                rv__search_seg_direct(&r, g, f->list + from, at - from);
            } else {
                size_t nc = SIZE_MAX; /* the segment's cursors: not built yet */
                if (pruned && rv__use_taat(&r, g, &nc))
                    rv__search_seg_taat(&r, g, nc);
                else if (window)
                    rv__search_seg_window(&r, g, nc);
                else
                    rv__search_seg_daat(&r, g, nc);
            }
        }
    }
    if (r.bulk)
        rv__sort_best(s->heap, r.n_heap, s->heap + r.k);
    else
        rv__heap_sort(s->heap, r.n_heap);
    for (size_t i = 0; i < r.n_heap; i++) {
        ids[i] = s->heap[i].id;
        scores[i] = s->heap[i].score;
    }
    *n_found = r.n_heap;
    if (info) *info = r.info;
    return RV_OK;
}

static rv_status rv__check_search(const rv_bm25 *ix, size_t k, unsigned flags, const int64_t *ids,
                                  const float *scores, const size_t *n_found) {
    RV__NOT_NULL(ix, "index");
    if (k == 0) return rv__error(RV_E_INVALID_ARG, "k = 0: must be >= 1");
    RV__CHECK_SIZE(k, sizeof *ids, "k");
    RV__NOT_NULL(ids, "ids");
    RV__NOT_NULL(scores, "scores");
    RV__NOT_NULL(n_found, "n_found");
    if (flags & ~RV_BM25_EXHAUSTIVE)
        return rv__error(RV_E_INVALID_ARG, "flags = 0x%x: unknown bits", flags);
    return RV_OK;
}

rv_status rv_bm25_search(const rv_bm25 *ix, const char *query, size_t len, size_t k, unsigned flags,
                         const rv_idset *filter, int64_t *ids, float *scores, size_t *n_found,
                         rv_bm25_search_info *info) {
    if (n_found) *n_found = 0;
    if (info) memset(info, 0, sizeof *info);
    rv_status st = rv__check_search(ix, k, flags, ids, scores, n_found);
    if (st != RV_OK) return st;
    if (!query && len) return rv__error(RV_E_INVALID_ARG, "query is NULL but len = %zu", len);
    RV__CHECK_SIZE(len, 1, "len");
    rv__scratch *s = rv__scratch_take(ix);
    if (!s) return rv__nomem("the search scratch");
    rv__filter f;
    st = rv__query_text(s, query, len);
    if (st == RV_OK)
        st = rv__filter_make(ix, filter, &f);
    else
        memset(&f, 0, sizeof f);
    if (st == RV_OK) st = rv__run_query(s, k, flags, &f, ids, scores, n_found, info);
    rv__filter_free(&f);
    rv__scratch_give(ix, s);
    return st;
}

rv_status rv_bm25_search_terms(const rv_bm25 *ix, const uint32_t *term_ids, size_t n_terms,
                               size_t k, unsigned flags, const rv_idset *filter, int64_t *ids,
                               float *scores, size_t *n_found, rv_bm25_search_info *info) {
    if (n_found) *n_found = 0;
    if (info) memset(info, 0, sizeof *info);
    rv_status st = rv__check_search(ix, k, flags, ids, scores, n_found);
    if (st != RV_OK) return st;
    if (!term_ids && n_terms)
        return rv__error(RV_E_INVALID_ARG, "term_ids is NULL but n_terms = %zu", n_terms);
    RV__CHECK_SIZE(n_terms, sizeof *term_ids, "n_terms");
    for (size_t i = 0; i < n_terms; i++)
        if (term_ids[i] >= ix->n_terms)
            return rv__error(RV_E_RANGE, "term_ids[%zu] = %u: the dictionary has %u terms", i,
                             term_ids[i], ix->n_terms);
    rv__scratch *s = rv__scratch_take(ix);
    if (!s) return rv__nomem("the search scratch");
    rv__filter f;
    memset(&f, 0, sizeof f);
    s->n_raw = 0;
    for (size_t i = 0; i < n_terms && st == RV_OK; i++) st = rv__raw_push(s, term_ids[i]);
    if (st == RV_OK) st = rv__query_finish(s);
    if (st == RV_OK) st = rv__filter_make(ix, filter, &f);
    if (st == RV_OK) st = rv__run_query(s, k, flags, &f, ids, scores, n_found, info);
    rv__filter_free(&f);
    rv__scratch_give(ix, s);
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
    const rv__filter *filter; /* read-only here: its bitmap is built up front */
    int64_t *ids;
    float *scores;
    uint32_t *n_found;
    atomic_size_t next;
    atomic_size_t done;
    atomic_int stop;
    pthread_mutex_t lock;
    size_t err_q; /* lowest failing query, or SIZE_MAX */
    rv_status err;
    char msg[256];
    rv_progress_fn progress; /* worker 0 only */
    void *progress_ctx;
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
    rv__filter f = *b->filter; /* a shallow copy: never freed here */
    for (;;) {
        if (atomic_load(&b->stop)) break;
        size_t q = atomic_fetch_add(&b->next, 1);
        if (q >= b->n) break;
        int64_t *ids = b->ids + q * b->k;
        float *sc = b->scores + q * b->k;
        size_t nf = 0;
        rv_status st;
        if (!b->queries[q] && b->lens[q]) {
            st = rv__error(RV_E_INVALID_ARG, "query is NULL but its length is %zu", b->lens[q]);
        } else {
            st = rv__query_text(&s, b->queries[q], b->lens[q]);
            if (st == RV_OK) st = rv__run_query(&s, b->k, b->flags, &f, ids, sc, &nf, NULL);
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

/* Worker t of a batch (rv__worker_fn): queries come from a shared counter
** and each writes its own rows; worker 0 (the calling thread) alone reports
** progress. */
static void rv__batch_worker(void *ctx, unsigned t) {
    rv__batch *b = (rv__batch *)ctx;
    if (t == 0)
        rv__batch_work(b, b->progress, b->progress_ctx);
    else
        rv__batch_work(b, NULL, NULL);
}

rv_status rv_bm25_search_batch(const rv_bm25 *ix, size_t n_queries, const char *const *queries,
                               const size_t *lens, size_t k, unsigned flags, const rv_idset *filter,
                               unsigned n_threads, rv_progress_fn progress, void *progress_ctx,
                               int64_t *ids, float *scores, uint32_t *n_found) {
    RV__NOT_NULL(ix, "index");
    if (k == 0) return rv__error(RV_E_INVALID_ARG, "k = 0: must be >= 1");
    if (flags & ~RV_BM25_EXHAUSTIVE)
        return rv__error(RV_E_INVALID_ARG, "flags = 0x%x: unknown bits", flags);
    RV__CHECK_SIZE2(n_queries, k, sizeof *ids, "n_queries", "k");
    if (n_queries == 0) return RV_OK;
    RV__NOT_NULL(queries, "queries");
    RV__NOT_NULL(lens, "lens");
    RV__NOT_NULL(ids, "ids");
    RV__NOT_NULL(scores, "scores");
    RV__NOT_NULL(n_found, "n_found");
    for (size_t q = 0; q < n_queries; q++) {
        if (!queries[q] && lens[q])
            return rv__error(RV_E_INVALID_ARG, "queries[%zu]: query is NULL but its length is %zu",
                             q, lens[q]);
        if (!rv__fits(lens[q], 1))
            return rv__error(RV_E_RANGE,
                             "lens[%zu] = %zu is too large: no text that long can exist", q,
                             lens[q]);
    }
    rv__filter f;
    rv_status st = rv__filter_make(ix, filter, &f);
    if (st == RV_OK && f.on) st = rv__filter_bits(ix, &f); /* shared by the threads */
    if (st != RV_OK) {
        rv__filter_free(&f);
        return st;
    }
    rv__batch b;
    memset(&b, 0, sizeof b);
    b.ix = ix;
    b.n = n_queries;
    b.queries = queries;
    b.lens = lens;
    b.k = k;
    b.flags = flags;
    b.filter = &f;
    b.ids = ids;
    b.scores = scores;
    b.n_found = n_found;
    atomic_init(&b.next, 0);
    atomic_init(&b.done, 0);
    atomic_init(&b.stop, 0);
    b.err_q = SIZE_MAX;
    b.err = RV_OK;
    if (pthread_mutex_init(&b.lock, NULL) != 0) {
        rv__filter_free(&f);
        return rv__error(RV_E_INTERNAL, "pthread_mutex_init failed");
    }
    b.progress = progress;
    b.progress_ctx = progress_ctx;
    /* work: queries; one per thread at most, no size threshold (a query's
    ** cost is unknown before it runs) */
    unsigned nt = rv__threads_for(n_threads, n_queries, (double)n_queries, 0.0);
    rv__parallel_run(nt, rv__batch_worker, &b);
    pthread_mutex_destroy(&b.lock);
    rv__filter_free(&f);
    if (b.err_q != SIZE_MAX) {
        if (b.err == RV_E_INTERRUPTED && b.err_q == n_queries)
            return rv__error(RV_E_INTERRUPTED, "%s", b.msg);
        return rv__error(b.err, "queries[%zu]: %s", b.err_q, b.msg);
    }
    return RV_OK;
}

/* ------------------------------------------------------------- explain */

/* tf of term t in the document in slot doc (0 when absent). */
static uint32_t rv__tf_of(const rv_bm25 *ix, uint32_t t, uint32_t doc) {
    size_t lo = 0, hi = ix->n_segs;
    while (lo < hi) { /* the segment whose range holds doc */
        size_t mid = (lo + hi) / 2;
        if (ix->segs[mid]->doc_end <= doc)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo >= ix->n_segs || ix->segs[lo]->doc_base > doc) return 0;
    const rv__seg *s = ix->segs[lo];
    size_t i = rv__seg_find(s, t);
    if (i == SIZE_MAX) return 0;
    uint64_t a = s->offsets[i], e = s->offsets[i + 1];
    while (a < e) {
        uint64_t mid = a + (e - a) / 2;
        if (s->docs[mid] < doc)
            a = mid + 1;
        else
            e = mid;
    }
    if (a < s->offsets[i + 1] && s->docs[a] == doc) return rv__seg_tf(s, a);
    return 0;
}

rv_status rv_bm25_explain(const rv_bm25 *ix, const char *query, size_t len, int64_t id,
                          rv_bm25_explain_row *rows, size_t capacity, size_t *n_rows, float *score,
                          uint32_t *doc_len) {
    if (n_rows) *n_rows = 0;
    if (score) *score = 0;
    if (doc_len) *doc_len = 0;
    RV__NOT_NULL(ix, "index");
    RV__NOT_NULL(n_rows, "n_rows");
    if (!rows && capacity)
        return rv__error(RV_E_INVALID_ARG, "rows is NULL but capacity = %zu", capacity);
    if (!query && len) return rv__error(RV_E_INVALID_ARG, "query is NULL but len = %zu", len);
    RV__CHECK_SIZE(len, 1, "len");
    RV__CHECK_SIZE(capacity, sizeof *rows, "capacity");
    uint32_t doc = id < 0 ? RV__NO_SLOT : rv__idmap_find(ix, id);
    if (doc == RV__NO_SLOT)
        return rv__error(RV_E_RANGE, "document id %lld is not in the index", (long long)id);
    if (ix->doc_state[doc] != RV_BM25_DOC_LIVE)
        return rv__error(RV_E_STATE, "document id %lld is deleted", (long long)id);
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
    float norm = rv__norm(ix, ix->doc_len[doc]);
    double sum = 0;
    for (size_t q = 0; q < s.nq; q++) {
        uint32_t t = s.qterm[q];
        uint32_t tf = rv__tf_of(ix, t, doc);
        float w = tf ? rv__weight(&wp, s.qidf[q], tf, norm) : 0.0f;
        double c = (double)s.qtf[q] * (double)w;
        sum += c;
        if (q < capacity) {
            rows[q].term_id = t;
            rows[q].qtf = s.qtf[q];
            rows[q].tf = tf;
            rows[q].df = rv__stat_df(ix, t);
            rows[q].idf = rv__idf(ix, rv__stat_df(ix, t));
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
