/*
** Building and changing a BM25 index: create/free, add, delete, compact,
** parameters, caller ids, and the refresh of the length-norm table
** (bm25_internal.h explains the incremental design).
**
** Every mutation allocates all it needs before it changes anything, so a
** failure (RV_E_NOMEM, bad input, an interrupt) leaves the index exactly as
** it was.  The refresh that follows a change allocates nothing and costs
** O(distinct document lengths), never O(documents) or O(postings).
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bm25_internal.h"

/* ----------------------------------------------------------- parameters */

void rv_bm25_params_init(rv_bm25_params *p) {
    if (!p) return;
    memset(p, 0, sizeof *p);
    p->variant = RV_BM25_LUCENE;
    p->k1 = 1.2;
    p->b = 0.75;
    p->delta = 0.0;
}

rv_status rv_bm25_params_check(const rv_bm25_params *p) {
    if (!p) return rv__error(RV_E_INVALID_ARG, "params must not be NULL");
    if ((int)p->variant < (int)RV_BM25_LUCENE || (int)p->variant > (int)RV_BM25_PLUS)
        return rv__error(RV_E_INVALID_ARG, "variant = %d: not a BM25 variant", (int)p->variant);
    if (!(p->k1 >= 0.0 && p->k1 <= 1e6))
        return rv__error(RV_E_INVALID_ARG, "k1 = %g: must be finite, >= 0 and <= 1e6", p->k1);
    if (!(p->b >= 0.0 && p->b <= 1.0))
        return rv__error(RV_E_INVALID_ARG, "b = %g: must be in [0, 1]", p->b);
    if (p->variant == RV_BM25_L || p->variant == RV_BM25_PLUS) {
        if (!(p->delta >= 0.0 && p->delta <= 1e6))
            return rv__error(RV_E_INVALID_ARG, "delta = %g: must be finite, >= 0 and <= 1e6",
                             p->delta);
    } else if (p->delta != 0.0) {
        return rv__error(RV_E_INVALID_ARG,
                         "delta = %g: only BM25L and BM25+ take a delta "
                         "(use 0 for this variant)",
                         p->delta);
    }
    return RV_OK;
}

void rv__wparams_of(const rv_bm25 *ix, rv__wparams *wp) {
    wp->v = ix->par.variant;
    wp->k1 = (float)ix->par.k1;
    wp->k1p1 = (float)(ix->par.k1 + 1.0);
    wp->delta = (float)ix->par.delta;
}

double rv__idf(const rv_bm25 *ix, uint64_t df_) {
    double N = (double)(ix->c_n ? ix->c_n : ix->n_live), df = (double)df_;
    if (df <= 0 || N <= 0) return 0.0;
    switch (ix->par.variant) {
    case RV_BM25_ROBERTSON: {
        double x = log((N - df + 0.5) / (df + 0.5));
        return x > 0 ? x : 0.0;
    }
    case RV_BM25_ATIRE:
        return log(N / df);
    case RV_BM25_L:
        return log((N + 1.0) / (df + 0.5));
    case RV_BM25_PLUS:
        return log((N + 1.0) / df);
    default:
        return log(1.0 + (N - df + 0.5) / (df + 0.5));
    }
}

/* The length-norm table and the g(tf, dl) table under ix->avgdl. */
static void rv__bm25_tables(rv_bm25 *ix);

/* Drop collection statistics (if any); recompute avgdl, the length-norm
** table and the g(tf, dl) table.  No allocation; O(ltab_n * RV__GTF). */
void rv__bm25_refresh(rv_bm25 *ix) {
    rv__free(ix->cdf);
    ix->cdf = NULL;
    ix->c_n = ix->c_total_len = 0;
    ix->avgdl = ix->n_live ? (double)ix->total_len / (double)ix->n_live : 0.0;
    rv__bm25_tables(ix);
}

static void rv__bm25_tables(rv_bm25 *ix) {
    uint32_t n = ix->max_dl < ix->ltab_cap ? ix->max_dl + 1 : ix->ltab_cap;
    rv__wparams wp;
    rv__wparams_of(ix, &wp);
    for (uint32_t dl = 0; dl < n; dl++) {
        float norm = rv__norm_compute(ix, dl);
        ix->ltab[dl] = norm;
        float *g = ix->gtab + (size_t)dl * RV__GTF;
        g[0] = 0.0f; /* tf 0 never occurs */
        for (uint32_t tf = 1; tf < RV__GTF; tf++) g[tf] = rv__g_v(wp.v, &wp, tf, norm);
    }
    ix->ltab_n = n;
    ix->n_codes = n * RV__GTF;
}

rv_status rv__bm25_reserve_ltab(rv_bm25 *ix, uint32_t max_dl) {
    uint64_t want = (uint64_t)max_dl + 1;
    if (want > RV__LTAB_MAX) want = RV__LTAB_MAX;
    if (want <= ix->ltab_cap) return RV_OK;
    uint64_t cap = ix->ltab_cap ? ix->ltab_cap : 256;
    while (cap < want) cap *= 2;
    if (cap > RV__LTAB_MAX) cap = RV__LTAB_MAX;
    float *t = rv__realloc(ix->ltab, cap * sizeof *t);
    if (!t) return rv__nomem("the length-norm table");
    ix->ltab = t;
    float *g = rv__realloc(ix->gtab, cap * RV__GTF * sizeof *g);
    if (!g) return rv__nomem("the weight table");
    ix->gtab = g;
    ix->ltab_cap = (uint32_t)cap;
    return RV_OK;
}

/* Grow a bitmap from `have` to `want` words; the new words are zero. */
static rv_status rv__grow_words(uint64_t **bm, uint64_t have, uint64_t want) {
    uint64_t *p = rv__realloc(*bm, (size_t)want * sizeof *p);
    if (!p) return rv__nomem("the deleted-document bitmap");
    memset(p + have, 0, (size_t)(want - have) * sizeof *p);
    *bm = p;
    return RV_OK;
}

/* Grow the per-slot arrays to hold n slots. */
rv_status rv__bm25_reserve_docs(rv_bm25 *ix, uint64_t n) {
    if (n <= ix->doc_cap) return RV_OK;
    uint64_t cap = ix->doc_cap ? (uint64_t)ix->doc_cap * 2 : 1024;
    while (cap < n) cap *= 2;
    if (cap > RV_BM25_MAX_DOCS) cap = RV_BM25_MAX_DOCS;
    uint32_t *dl = rv__realloc(ix->doc_len, cap * sizeof *dl);
    if (!dl) return rv__nomem("the document lengths");
    ix->doc_len = dl;
    uint8_t *ds = rv__realloc(ix->doc_state, cap * sizeof *ds);
    if (!ds) return rv__nomem("the document states");
    ix->doc_state = ds;
    int64_t *ex = rv__realloc(ix->ext, cap * sizeof *ex);
    if (!ex) return rv__nomem("the document ids");
    ix->ext = ex;
    rv_status st = rv__grow_words(&ix->dead, ix->dead ? ix->doc_cap / 64 + 2 : 0, cap / 64 + 2);
    if (st == RV_OK)
        st = rv__grow_words(&ix->dead_sum, ix->dead_sum ? ix->doc_cap / 4096 + 3 : 0,
                            cap / 4096 + 3);
    if (st != RV_OK) return st;
    ix->doc_cap = (uint32_t)cap;
    return RV_OK;
}

/* ------------------------------------------------------------ caller ids */

/* The latest slot holding id (live or not), or RV__NO_SLOT. */
uint32_t rv__idmap_find(const rv_bm25 *ix, int64_t id) {
    if (!ix->idmap) return RV__NO_SLOT;
    uint64_t i = rv__mix64((uint64_t)id) & ix->idmap_mask;
    for (;;) {
        uint32_t s = ix->idmap[i];
        if (!s) return RV__NO_SLOT;
        if (ix->ext[s - 1] == id) return s - 1;
        i = (i + 1) & ix->idmap_mask;
    }
}

/* Point ext[slot]'s entry at slot (replacing an older slot of the id).
** Room must have been reserved. */
void rv__idmap_put(rv_bm25 *ix, uint32_t slot) {
    int64_t id = ix->ext[slot];
    uint64_t i = rv__mix64((uint64_t)id) & ix->idmap_mask;
    for (;;) {
        uint32_t s = ix->idmap[i];
        if (!s) {
            ix->idmap[i] = slot + 1;
            ix->idmap_used++;
            return;
        }
        if (ix->ext[s - 1] == id) {
            ix->idmap[i] = slot + 1;
            return;
        }
        i = (i + 1) & ix->idmap_mask;
    }
}

/* Make room for `entries` distinct ids at load factor <= 1/2. */
rv_status rv__idmap_reserve(rv_bm25 *ix, uint64_t entries) {
    uint64_t want = 16;
    while (want < 2 * entries) want *= 2;
    if (ix->idmap && want <= ix->idmap_mask + 1) return RV_OK;
    uint32_t *m = rv__calloc((size_t)want, sizeof *m);
    if (!m) return rv__nomem("the id map");
    uint32_t *old = ix->idmap;
    uint64_t old_cap = old ? ix->idmap_mask + 1 : 0;
    ix->idmap = m;
    ix->idmap_mask = want - 1;
    ix->idmap_used = 0;
    for (uint64_t i = 0; i < old_cap; i++)
        if (old[i]) rv__idmap_put(ix, old[i] - 1);
    rv__free(old);
    return RV_OK;
}

/* ------------------------------------------------------------- segments */

void rv__seg_free(rv__seg *s) {
    if (!s) return;
    rv__free(s->term_ids);
    rv__free(s->offsets);
    if (s->blob) {
        rv__free(s->blob);
    } else {
        rv__free(s->docs);
        rv__free(s->tfs);
    }
    rv__free(s->over_pos);
    rv__free(s->over_tf);
    rv__free(s->code);
    rv__free(s->block_off);
    rv__free(s->block_last);
    rv__free(s->imp_off);
    rv__free(s->imp);
    rv__free(s->timp_off);
    rv__free(s->timp);
    rv__free(s->top_off);
    rv__free(s->top);
    rv__free(s->fwd_off);
    rv__free(s->fwd_term);
    rv__free(s);
}

/* Add (tf, dl) to the frontier f[0 .. *n): points sorted by tf ascending
** with dl ascending too (any other order would make one dominate the
** other).  Dominated points never enter; points the new one dominates
** leave.  f must have room for one more point. */
static void rv__front_add(rv__impact *f, uint32_t *n, uint32_t tf, uint32_t dl) {
    uint32_t m = *n, i = 0;
    while (i < m && f[i].tf < tf) i++;
    if (i < m && f[i].dl <= dl) return; /* f[i] has tf' >= tf and dl' <= dl */
    uint32_t k = 0;                     /* f[0 .. k) keep: their dl < dl */
    while (k < i && f[k].dl < dl) k++;
    uint32_t j = i < m && f[i].tf == tf ? i + 1 : i; /* f[i] with equal tf, larger dl */
    memmove(f + k + 1, f + j, (m - j) * sizeof *f);
    f[k].tf = tf;
    f[k].dl = dl;
    *n = k + 1 + (m - j);
}

/* Shrink a frontier to at most cap points by merging neighbours into the
** point (larger tf, smaller dl), which dominates both, so the result still
** bounds every posting.  Merges where tf grows least. */
static void rv__front_cap(rv__impact *f, uint32_t *n, uint32_t cap) {
    while (*n > cap) {
        uint32_t best = 0;
        double ratio = INFINITY;
        for (uint32_t i = 0; i + 1 < *n; i++) {
            double r = (double)f[i + 1].tf / (double)f[i].tf;
            if (r < ratio) {
                ratio = r;
                best = i;
            }
        }
        f[best].tf = f[best + 1].tf; /* (tf_{i+1}, dl_i) */
        memmove(f + best + 1, f + best + 2, (*n - best - 2) * sizeof *f);
        (*n)--;
    }
}

#define RV__FRONT_WORK (2 * RV__IMPACTS)

/* A posting on the way to a list's top (rv__seg_finish). */
typedef struct {
    float w;
    uint32_t pos;
} rv__topent;

/* Min-heap on w (ties: the later position is smaller), of n entries. */
static int rv__top_less(rv__topent a, rv__topent b) {
    return a.w < b.w || (a.w == b.w && a.pos > b.pos);
}

static void rv__top_down(rv__topent *h, uint32_t n, uint32_t i) {
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && rv__top_less(h[l], h[m])) m = l;
        if (r < n && rv__top_less(h[r], h[m])) m = r;
        if (m == i) return;
        rv__topent t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

/*
** Lay out the pruning data of a segment whose postings are in place: block
** boundaries, and the (tf, dl) frontier of every block and every list, with
** doc_len[slot] the lengths of its documents.  O(postings).
*/
rv_status rv__seg_finish(rv__seg *s, const uint32_t *doc_len) {
    s->code = rv__malloc((s->n_post ? s->n_post : 1) * sizeof *s->code);
    if (!s->code) return rv__nomem("the posting codes");
    s->block_off = rv__malloc((s->n_terms + 1) * sizeof *s->block_off);
    s->timp_off = rv__malloc((s->n_terms + 1) * sizeof *s->timp_off);
    if (!s->block_off || !s->timp_off) return rv__nomem("the pruning bounds");
    uint64_t nb = 0, imp_cap = 0, timp_cap = 0;
    for (size_t i = 0; i < s->n_terms; i++) {
        uint64_t len = s->offsets[i + 1] - s->offsets[i];
        s->block_off[i] = nb;
        nb += (len + RV__BLOCK - 1) / RV__BLOCK;
        imp_cap += len / RV__BLOCK * RV__IMPACTS +
                   (len % RV__BLOCK < RV__IMPACTS ? len % RV__BLOCK : RV__IMPACTS);
        timp_cap += len < RV__IMPACTS ? len : RV__IMPACTS;
    }
    s->block_off[s->n_terms] = nb;
    s->block_last = rv__malloc((nb ? nb : 1) * sizeof *s->block_last);
    s->imp_off = rv__malloc((nb + 1) * sizeof *s->imp_off);
    s->imp = rv__malloc((imp_cap ? imp_cap : 1) * sizeof *s->imp);
    s->timp = rv__malloc((timp_cap ? timp_cap : 1) * sizeof *s->timp);
    if (!s->block_last || !s->imp_off || !s->imp || !s->timp)
        return rv__nomem("the pruning bounds");
    /* the lists' tops: a fixed BM25 (k1 1.2, b 0.75) over the segment's
    ** mean length ranks the postings; any ranking gives valid bounds */
    uint64_t n_top = 0, seg_len = 0;
    for (size_t i = 0; i < s->n_terms; i++) {
        uint64_t len = s->offsets[i + 1] - s->offsets[i];
        if (len > RV__TOP) n_top += RV__TOP;
    }
    if (n_top > UINT32_MAX) return rv__error(RV_E_RANGE, "a segment too large for its list tops");
    for (uint32_t d = s->doc_base; d < s->doc_end; d++) seg_len += doc_len[d];
    float inv_avg = seg_len ? (float)((double)(s->doc_end - s->doc_base) / (double)seg_len) : 0.0f;
    s->top_off = rv__malloc((s->n_terms + 1) * sizeof *s->top_off);
    s->top = rv__malloc((n_top ? n_top : 1) * sizeof *s->top);
    if (!s->top_off || !s->top) return rv__nomem("the pruning bounds");
    rv__topent heap[RV__TOP];
    uint32_t nt_top = 0;
    rv__impact bf[RV__FRONT_WORK + 1], lf[RV__FRONT_WORK + 1];
    uint64_t ni = 0, nti = 0;
    for (size_t i = 0; i < s->n_terms; i++) {
        uint64_t a = s->offsets[i], e = s->offsets[i + 1], a0 = a;
        uint32_t nl = 0, nh = 0;
        int ranked = e - a > RV__TOP;
        s->timp_off[i] = nti;
        s->top_off[i] = nt_top;
        for (uint64_t bk = s->block_off[i]; a < e; bk++) {
            uint64_t last = a + RV__BLOCK < e ? a + RV__BLOCK : e;
            uint32_t nf = 0;
            for (uint64_t q = a; q < last; q++) {
                uint32_t tf = rv__seg_tf(s, q), dl = doc_len[s->docs[q]];
                s->code[q] = rv__code_of(tf, dl);
                rv__front_add(bf, &nf, tf, dl);
                if (nf == RV__FRONT_WORK) rv__front_cap(bf, &nf, RV__IMPACTS);
                if (ranked) {
                    float t = (float)tf;
                    rv__topent en = {t / (t + 0.3f + 0.9f * (float)dl * inv_avg),
                                     (uint32_t)(q - a0)};
                    if (nh < RV__TOP) {
                        heap[nh++] = en;
                        if (nh == RV__TOP)
                            for (uint32_t h = RV__TOP / 2; h-- > 0;) rv__top_down(heap, nh, h);
                    } else if (rv__top_less(heap[0], en)) {
                        heap[0] = en;
                        rv__top_down(heap, nh, 0);
                    }
                }
            }
            rv__front_cap(bf, &nf, RV__IMPACTS);
            s->block_last[bk] = s->docs[last - 1];
            s->imp_off[bk] = ni;
            for (uint32_t j = 0; j < nf; j++) {
                s->imp[ni++] = bf[j];
                rv__front_add(lf, &nl, bf[j].tf, bf[j].dl);
                if (nl == RV__FRONT_WORK) rv__front_cap(lf, &nl, RV__IMPACTS);
            }
            a = last;
        }
        rv__front_cap(lf, &nl, RV__IMPACTS);
        for (uint32_t j = 0; j < nl; j++) s->timp[nti++] = lf[j];
        /* the top, best first (the heap taken apart from its minimum) */
        for (uint32_t j = nh; j-- > 0;) {
            s->top[nt_top + j] = heap[0].pos;
            heap[0] = heap[j];
            rv__top_down(heap, j, 0);
        }
        nt_top += nh;
    }
    s->imp_off[nb] = ni;
    s->timp_off[s->n_terms] = nti;
    s->top_off[s->n_terms] = nt_top;
    /* give back what the frontiers did not use (best effort) */
    rv__impact *shr = rv__realloc(s->imp, (ni ? ni : 1) * sizeof *shr);
    if (shr) s->imp = shr;
    shr = rv__realloc(s->timp, (nti ? nti : 1) * sizeof *shr);
    if (shr) s->timp = shr;
    return RV_OK;
}

/* Build the forward lists of a segment from its postings (a transpose:
** O(postings)).  Used the first time a document of a loaded or merged
** segment is deleted. */
static rv_status rv__seg_forward(rv__seg *s) {
    if (s->fwd_term) return RV_OK;
    uint64_t nd = (uint64_t)(s->doc_end - s->doc_base);
    uint64_t *off = rv__calloc((size_t)nd + 1, sizeof *off);
    uint32_t *term = rv__malloc((s->n_post ? s->n_post : 1) * sizeof *term);
    if (!off || !term) {
        rv__free(off);
        rv__free(term);
        return rv__nomem("a segment's forward lists");
    }
    for (uint64_t p = 0; p < s->n_post; p++) off[s->docs[p] - s->doc_base + 1]++;
    for (uint64_t d = 0; d < nd; d++) off[d + 1] += off[d];
    /* off[d] is now the write position of slot d's first term */
    for (size_t i = 0; i < s->n_terms; i++)
        for (uint64_t p = s->offsets[i]; p < s->offsets[i + 1]; p++)
            term[off[s->docs[p] - s->doc_base]++] = s->term_ids[i];
    /* each off[d] advanced to the start of d + 1: shift back */
    for (uint64_t d = nd; d > 0; d--) off[d] = off[d - 1];
    off[0] = 0;
    s->fwd_off = off;
    s->fwd_term = term;
    return RV_OK;
}

uint64_t rv__bm25_memory(const rv_bm25 *ix) {
    uint64_t m = sizeof *ix;
    m += ix->pool_cap + (uint64_t)(ix->term_cap + 1) * 8 +
         (uint64_t)ix->term_cap * (4 + 8 + sizeof(rv__tmark));
    m += ix->slots ? (ix->slot_mask + 1) * sizeof(rv__slot) : 0;
    m += (uint64_t)ix->doc_cap * (4 + 1 + 8) + ((uint64_t)ix->doc_cap / 64 + 2) * 8 +
         ((uint64_t)ix->doc_cap / 4096 + 3) * 8;
    m += ix->idmap ? (ix->idmap_mask + 1) * 4 : 0;
    m += (uint64_t)ix->ltab_cap * 4 * (1 + RV__GTF);
    m += ix->n_segs * sizeof(rv__seg *);
    for (size_t i = 0; i < ix->n_segs; i++) {
        const rv__seg *s = ix->segs[i];
        uint64_t nb = s->block_off[s->n_terms];
        m += sizeof *s + s->n_terms * (4 + 8 + 8 + 8) + 16 + s->n_post * 7 + s->n_over * 12;
        m += nb * (4 + 8) + (s->imp_off[nb] + s->timp_off[s->n_terms]) * sizeof(rv__impact);
        m += (s->n_terms + 1) * 4 + (uint64_t)s->top_off[s->n_terms] * 4;
        if (s->fwd_term) m += ((uint64_t)(s->doc_end - s->doc_base) + 1) * 8 + s->n_post * 4;
    }
    return m;
}

/* The segment holding slot d (segments cover the slots in order). */
static size_t rv__seg_of(const rv_bm25 *ix, uint32_t d) {
    size_t lo = 0, hi = ix->n_segs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ix->segs[mid]->doc_end <= d)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* --------------------------------------------------------------- create */

rv_status rv_bm25_create(const rv_analyzer_options *analyzer, const rv_bm25_params *params,
                         rv_bm25 **out) {
    RV__NOT_NULL(out, "out");
    *out = NULL;
    rv_analyzer_options an;
    rv_bm25_params par;
    if (analyzer)
        an = *analyzer;
    else
        rv_analyzer_options_init(&an);
    if (params)
        par = *params;
    else
        rv_bm25_params_init(&par);
    rv_status st = rv_analyzer_options_check(&an);
    if (st != RV_OK) return st;
    if ((st = rv_bm25_params_check(&par)) != RV_OK) return st;
    rv_bm25 *ix = rv__calloc(1, sizeof *ix);
    if (!ix) return rv__nomem("a BM25 index");
    ix->an = an;
    ix->par = par;
    *out = ix;
    return RV_OK;
}

void rv_bm25_free(rv_bm25 *ix) {
    if (!ix) return;
    rv__bm25_spare_free(ix);
    for (size_t i = 0; i < ix->n_segs; i++) rv__seg_free(ix->segs[i]);
    rv__free(ix->segs);
    rv__free(ix->pool);
    rv__free(ix->str_off);
    rv__free(ix->hashes);
    rv__free(ix->slots);
    rv__free(ix->df);
    rv__free(ix->marks);
    rv__free(ix->doc_len);
    rv__free(ix->doc_state);
    rv__free(ix->ext);
    rv__free(ix->dead);
    rv__free(ix->dead_sum);
    rv__free(ix->idmap);
    rv__free(ix->ltab);
    rv__free(ix->gtab);
    rv__free(ix->cdf);
    rv__free(ix);
}

/* ------------------------------------------------------------------ add */

/* State of one add: the (term, tf) pairs of the new documents in document
** order (which are also the new segment's forward lists), the distinct
** terms of the add, and the current document's tokens. */
typedef struct {
    rv_bm25 *ix;
    uint32_t *pair_term;
    uint32_t *pair_tf;
    uint64_t n_pairs, pair_cap;
    uint32_t *dterm; /* distinct terms of this add, in first-seen order */
    uint64_t n_dterm, dterm_cap;
    uint64_t cur_len; /* the current document's length so far */
    /* the current document's terms, buffered until it is analysed */
    char *tok_bytes;
    size_t tok_len, tok_bytes_cap;
    uint64_t *tok_end;
    uint32_t *tok_hash;
    uint32_t *tok_id;
    size_t tok_n, tok_cap;
} rv__adder;

/* The analyser's callback: buffer the document's terms (bytes and hash);
** rv__adder_flush resolves them once the document is analysed. */
static rv_status rv__adder_term(void *ctx, const char *term, size_t len) {
    rv__adder *a = ctx;
    if (a->tok_n == a->tok_cap) {
        size_t cap = a->tok_cap ? a->tok_cap * 2 : 256;
        uint64_t *te = rv__realloc(a->tok_end, cap * sizeof *te);
        if (!te) return rv__nomem("a document's terms");
        a->tok_end = te;
        uint32_t *th = rv__realloc(a->tok_hash, cap * sizeof *th);
        if (!th) return rv__nomem("a document's terms");
        a->tok_hash = th;
        uint32_t *ti = rv__realloc(a->tok_id, cap * sizeof *ti);
        if (!ti) return rv__nomem("a document's terms");
        a->tok_id = ti;
        a->tok_cap = cap;
    }
    if (a->tok_len + len > a->tok_bytes_cap) {
        size_t cap = a->tok_bytes_cap ? a->tok_bytes_cap * 2 : 4096;
        while (cap < a->tok_len + len) cap *= 2;
        char *tb = rv__realloc(a->tok_bytes, cap);
        if (!tb) return rv__nomem("a document's terms");
        a->tok_bytes = tb;
        a->tok_bytes_cap = cap;
    }
    memcpy(a->tok_bytes + a->tok_len, term, len);
    a->tok_len += len;
    a->tok_end[a->tok_n] = a->tok_len;
    uint32_t h = rv__hash_bytes(term, len);
    a->tok_hash[a->tok_n++] = h;
    /* start fetching the term's dictionary slot now; it is read in flush */
    if (a->ix->slots) RV__PREFETCH(&a->ix->slots[h & a->ix->slot_mask]);
    return RV_OK;
}

static rv_status rv__grow_u32(uint32_t **arr, uint64_t *cap, uint64_t need, const char *what) {
    if (need <= *cap) return RV_OK;
    uint64_t c = *cap ? *cap * 2 : 4096;
    while (c < need) c *= 2;
    uint32_t *p = rv__realloc(*arr, c * sizeof *p);
    if (!p) return rv__nomem(what);
    *arr = p;
    *cap = c;
    return RV_OK;
}

/* Next document / add stamp; on wrap-around every mark is cleared (once
** per 2^32 documents), so a stamp is never mistaken for a stale one. */
static uint32_t rv__next_doc_stamp(rv_bm25 *ix) {
    if (++ix->doc_stamp == 0) {
        for (uint32_t t = 0; t < ix->n_terms; t++) ix->marks[t].doc_stamp = 0;
        ix->doc_stamp = 1;
    }
    return ix->doc_stamp;
}

static uint32_t rv__next_add_stamp(rv_bm25 *ix) {
    if (++ix->add_stamp == 0) {
        for (uint32_t t = 0; t < ix->n_terms; t++) ix->marks[t].add_stamp = 0;
        ix->add_stamp = 1;
    }
    return ix->add_stamp;
}

/*
** Resolve the buffered terms of the current document: dictionary ids, then
** per-term marks into (term, tf) pairs.  Each pass touches one random
** location per term; issuing the loads of a whole document before using
** them (prefetches) overlaps the cache misses instead of paying them one
** after another.
*/
static rv_status rv__adder_flush(rv__adder *a, uint32_t add_stamp) {
    rv_bm25 *ix = a->ix;
    rv_status st;
    size_t n = a->tok_n;
    uint64_t start = 0;
    for (size_t k = 0; k < n; k++) {
        const char *term = a->tok_bytes + start;
        size_t len = (size_t)(a->tok_end[k] - start);
        uint32_t t;
        if (!rv__dict_find(ix, term, len, a->tok_hash[k], &t)) {
            if ((st = rv__dict_insert(ix, term, len, a->tok_hash[k], &t)) != RV_OK) return st;
        }
        a->tok_id[k] = t;
        start = a->tok_end[k];
    }
    for (size_t k = 0; k < n; k++) RV__PREFETCH(&ix->marks[a->tok_id[k]]);
    if (a->n_pairs + n > a->pair_cap) {
        uint64_t cap = a->pair_cap ? a->pair_cap * 2 : 4096;
        while (cap < a->n_pairs + n) cap *= 2;
        uint32_t *pt = rv__realloc(a->pair_term, cap * sizeof *pt);
        if (!pt) return rv__nomem("the postings of new documents");
        a->pair_term = pt;
        uint32_t *pf = rv__realloc(a->pair_tf, cap * sizeof *pf);
        if (!pf) return rv__nomem("the postings of new documents");
        a->pair_tf = pf;
        a->pair_cap = cap;
    }
    if ((st = rv__grow_u32(&a->dterm, &a->dterm_cap, a->n_dterm + n,
                           "the terms of new documents")) != RV_OK)
        return st;
    uint32_t doc = rv__next_doc_stamp(ix);
    for (size_t k = 0; k < n; k++) {
        uint32_t t = a->tok_id[k];
        rv__tmark *m = &ix->marks[t];
        if (m->doc_stamp == doc) {
            a->pair_tf[m->pos]++;
            continue;
        }
        m->doc_stamp = doc;
        m->pos = a->n_pairs;
        a->pair_term[a->n_pairs] = t;
        a->pair_tf[a->n_pairs] = 1;
        a->n_pairs++;
        if (m->add_stamp != add_stamp) {
            m->add_stamp = add_stamp;
            a->dterm[a->n_dterm++] = t;
        }
    }
    a->cur_len += n;
    a->tok_n = 0;
    a->tok_len = 0;
    return RV_OK;
}

static void rv__adder_free(rv__adder *a) {
    rv__free(a->tok_bytes);
    rv__free(a->tok_end);
    rv__free(a->tok_hash);
    rv__free(a->tok_id);
    rv__free(a->pair_term);
    rv__free(a->pair_tf);
    rv__free(a->dterm);
    memset(a, 0, sizeof *a);
}

static int rv__cmp_u64(const void *x, const void *y) {
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

/*
** Build the segment of new slots [base, base + n) from the adder's pairs
** (npairs[i] pairs for document i) and its distinct terms: O(pairs +
** distinct terms log distinct terms).  The pairs become the segment's
** forward lists (taken from the adder).  doc_len must hold the new lengths.
*/
static rv_status rv__seg_from_pairs(rv_bm25 *ix, rv__adder *a, uint32_t base, size_t n,
                                    const uint32_t *npairs, rv__seg **out) {
    *out = NULL;
    rv__seg *s = rv__calloc(1, sizeof *s);
    uint32_t *tmp = rv__malloc((a->n_dterm ? a->n_dterm : 1) * sizeof *tmp);
    if (!s || !tmp) {
        rv__free(s);
        rv__free(tmp);
        return rv__nomem("a segment");
    }
    s->doc_base = base;
    s->doc_end = (uint32_t)(base + n);
    s->n_post = a->n_pairs;
    /* the distinct terms, ascending; marks[t].pos becomes t's rank */
    uint64_t nt = a->n_dterm;
    rv__sort_u32(a->dterm, nt, tmp);
    rv__free(tmp);
    s->n_terms = nt;
    s->term_ids = rv__malloc((nt ? nt : 1) * sizeof *s->term_ids);
    s->offsets = rv__calloc(nt + 1, sizeof *s->offsets);
    s->docs = rv__malloc((s->n_post ? s->n_post : 1) * sizeof *s->docs);
    s->tfs = rv__malloc(s->n_post ? s->n_post : 1);
    s->fwd_off = rv__malloc((n + 1) * sizeof *s->fwd_off);
    uint64_t n_over = 0;
    for (uint64_t p = 0; p < a->n_pairs; p++) n_over += a->pair_tf[p] >= RV__TF_ESCAPE;
    s->n_over = n_over;
    s->over_pos = rv__malloc((n_over ? n_over : 1) * sizeof *s->over_pos);
    s->over_tf = rv__malloc((n_over ? n_over : 1) * sizeof *s->over_tf);
    uint64_t *over_tmp = rv__malloc((n_over ? n_over : 1) * 2 * sizeof(uint64_t));
    if (!s->term_ids || !s->offsets || !s->docs || !s->tfs || !s->fwd_off || !s->over_pos ||
        !s->over_tf || !over_tmp) {
        rv__free(over_tmp);
        rv__seg_free(s);
        return rv__nomem("a segment's posting lists");
    }
    /* marks[t].pos: first a count, then t's next write position (one
    ** random access per pair, as a vocabulary-sized counter array would
    ** have, without the vocabulary-sized array) */
    rv__tmark *mk = ix->marks;
    for (uint64_t r = 0; r < nt; r++) {
        s->term_ids[r] = a->dterm[r];
        mk[a->dterm[r]].pos = 0;
    }
    for (uint64_t p = 0; p < a->n_pairs; p++) mk[a->pair_term[p]].pos++;
    for (uint64_t r = 0; r < nt; r++) {
        uint64_t c = mk[a->dterm[r]].pos;
        mk[a->dterm[r]].pos = s->offsets[r];
        s->offsets[r + 1] = s->offsets[r] + c;
    }
    uint64_t p = 0, o = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t doc = base + (uint32_t)i;
        s->fwd_off[i] = p;
        for (uint32_t j = 0; j < npairs[i]; j++, p++) {
            uint64_t pos = mk[a->pair_term[p]].pos++;
            uint32_t tf = a->pair_tf[p];
            s->docs[pos] = doc;
            s->tfs[pos] = (uint8_t)(tf >= RV__TF_ESCAPE ? RV__TF_ESCAPE : tf);
            if (tf >= RV__TF_ESCAPE) {
                over_tmp[2 * o] = pos;
                over_tmp[2 * o + 1] = tf;
                o++;
            }
        }
    }
    s->fwd_off[n] = p;
    if (n_over > 1) qsort(over_tmp, n_over, 2 * sizeof(uint64_t), rv__cmp_u64);
    for (uint64_t i = 0; i < n_over; i++) {
        s->over_pos[i] = over_tmp[2 * i];
        s->over_tf[i] = (uint32_t)over_tmp[2 * i + 1];
    }
    rv__free(over_tmp);
    rv_status st = rv__seg_finish(s, ix->doc_len);
    if (st != RV_OK) {
        rv__seg_free(s);
        return st;
    }
    /* the pairs, in document order, are the forward lists */
    s->fwd_term = a->pair_term;
    a->pair_term = NULL;
    a->pair_cap = 0;
    *out = s;
    return RV_OK;
}

/*
** Concatenate segments segs[0..n) (consecutive, in slot order) into one,
** dropping the postings of documents that are not live.  With remap, slot
** d becomes remap[d] (RV__NO_SLOT: dropped) and new_len gives the lengths
** by new slot; without, slots stay and new_len is ix->doc_len.  Forward
** lists are carried over when every input has them.  O(postings + terms
** of the inputs), never O(vocabulary).
*/
static rv_status rv__seg_concat(const rv_bm25 *ix, rv__seg *const *segs, size_t n,
                                const uint32_t *remap, const uint32_t *new_len, rv__seg **out) {
    *out = NULL;
    rv__seg *s = rv__calloc(1, sizeof *s);
    size_t *cur = rv__calloc(n ? n : 1, sizeof *cur);
    uint64_t tcap = 0, nt = 0;
    for (size_t si = 0; si < n; si++) tcap += segs[si]->n_terms;
    uint32_t *terms = rv__malloc((tcap ? tcap : 1) * sizeof *terms);
    uint64_t *cnt = rv__malloc((tcap ? tcap : 1) * sizeof *cnt);
    if (!s || !cur || !terms || !cnt) {
        rv__free(s);
        rv__free(cur);
        rv__free(terms);
        rv__free(cnt);
        return rv__nomem("a merged segment");
    }
    const uint8_t *state = ix->doc_state;
    uint32_t base = n ? segs[0]->doc_base : 0, end = n ? segs[n - 1]->doc_end : 0;
    if (remap) {
        uint32_t nb = RV__NO_SLOT, ne = 0;
        for (uint32_t d = base; d < end; d++)
            if (remap[d] != RV__NO_SLOT) {
                if (nb == RV__NO_SLOT) nb = remap[d];
                ne = remap[d] + 1;
            }
        base = nb == RV__NO_SLOT ? 0 : nb;
        end = ne;
    }
    s->doc_base = base;
    s->doc_end = end;
    if (!remap)
        for (uint32_t d = base; d < end; d++) s->n_dead += state[d] != RV_BM25_DOC_LIVE;
    /* pass 1: the union of the terms (a merge of sorted lists) with the
    ** postings each keeps */
    uint64_t n_post = 0, n_over = 0;
    for (;;) {
        uint32_t t = UINT32_MAX;
        for (size_t si = 0; si < n; si++)
            if (cur[si] < segs[si]->n_terms && segs[si]->term_ids[cur[si]] < t)
                t = segs[si]->term_ids[cur[si]];
        if (t == UINT32_MAX) break;
        uint64_t c = 0;
        for (size_t si = 0; si < n; si++) {
            const rv__seg *g = segs[si];
            size_t j = cur[si];
            if (j >= g->n_terms || g->term_ids[j] != t) continue;
            cur[si] = j + 1;
            for (uint64_t q = g->offsets[j]; q < g->offsets[j + 1]; q++) {
                if (state[g->docs[q]] != RV_BM25_DOC_LIVE) continue;
                c++;
                n_over += g->tfs[q] == RV__TF_ESCAPE;
            }
        }
        if (!c) continue;
        terms[nt] = t;
        cnt[nt++] = c;
        n_post += c;
    }
    s->n_terms = nt;
    s->n_post = n_post;
    s->n_over = n_over;
    s->term_ids = terms;
    s->offsets = rv__malloc((nt + 1) * sizeof *s->offsets);
    s->docs = rv__malloc((n_post ? n_post : 1) * sizeof *s->docs);
    s->tfs = rv__malloc(n_post ? n_post : 1);
    s->over_pos = rv__malloc((n_over ? n_over : 1) * sizeof *s->over_pos);
    s->over_tf = rv__malloc((n_over ? n_over : 1) * sizeof *s->over_tf);
    int fwd = n > 0;
    for (size_t si = 0; si < n; si++) fwd &= segs[si]->fwd_term != NULL;
    if (fwd) {
        s->fwd_off = rv__malloc(((uint64_t)(end - base) + 1) * sizeof *s->fwd_off);
        s->fwd_term = rv__malloc((n_post ? n_post : 1) * sizeof *s->fwd_term);
    }
    if (!s->offsets || !s->docs || !s->tfs || !s->over_pos || !s->over_tf ||
        (fwd && (!s->fwd_off || !s->fwd_term))) {
        rv__free(cur);
        rv__free(cnt);
        rv__seg_free(s);
        return rv__nomem("a merged segment's posting lists");
    }
    uint64_t off = 0;
    for (uint64_t i = 0; i < nt; i++) {
        s->offsets[i] = off;
        off += cnt[i];
    }
    s->offsets[nt] = off;
    rv__free(cnt);
    /* pass 2: term by term, segment by segment: lists stay in slot order
    ** and overflow positions come out ascending */
    memset(cur, 0, (n ? n : 1) * sizeof *cur);
    uint64_t w = 0, o = 0;
    for (uint64_t i = 0; i < nt; i++) {
        uint32_t t = s->term_ids[i];
        for (size_t si = 0; si < n; si++) {
            const rv__seg *g = segs[si];
            size_t j = cur[si];
            while (j < g->n_terms && g->term_ids[j] < t) j++; /* all dropped */
            cur[si] = j;
            if (j >= g->n_terms || g->term_ids[j] != t) continue;
            cur[si] = j + 1;
            for (uint64_t q = g->offsets[j]; q < g->offsets[j + 1]; q++) {
                uint32_t d = g->docs[q];
                if (state[d] != RV_BM25_DOC_LIVE) continue;
                s->docs[w] = remap ? remap[d] : d;
                s->tfs[w] = g->tfs[q];
                if (g->tfs[q] == RV__TF_ESCAPE) {
                    s->over_pos[o] = w;
                    s->over_tf[o] = rv__seg_tf(g, q);
                    o++;
                }
                w++;
            }
        }
    }
    rv__free(cur);
    if (fwd) { /* the live documents' forward lists, in slot order */
        uint64_t fw = 0;
        uint32_t nd = 0;
        for (size_t si = 0; si < n; si++) {
            const rv__seg *g = segs[si];
            for (uint32_t d = g->doc_base; d < g->doc_end; d++) {
                if (remap ? remap[d] == RV__NO_SLOT : 0) continue;
                s->fwd_off[nd++] = fw;
                if (state[d] != RV_BM25_DOC_LIVE) continue;
                const uint64_t *fo = g->fwd_off + (d - g->doc_base);
                memcpy(s->fwd_term + fw, g->fwd_term + fo[0], (fo[1] - fo[0]) * sizeof(uint32_t));
                fw += fo[1] - fo[0];
            }
        }
        s->fwd_off[nd] = fw;
    }
    rv_status st = rv__seg_finish(s, new_len);
    if (st != RV_OK) {
        rv__seg_free(s);
        return st;
    }
    *out = s;
    return RV_OK;
}

/* Mark the deleted documents of slots [a, e) purged (their postings were
** just dropped by a merge). */
static void rv__mark_purged(rv_bm25 *ix, uint32_t a, uint32_t e) {
    for (uint32_t d = a; d < e; d++)
        if (ix->doc_state[d] == RV_BM25_DOC_TOMBSTONED) {
            ix->doc_state[d] = RV_BM25_DOC_PURGED;
            ix->n_tombstoned--;
        }
}

/* Merge the last segments while the last is at least a quarter of the size
** of the one before it (a logarithmic policy: O(log n) segments, each
** posting rewritten O(log n) times).  Merging purges deleted documents.
** Best effort: on an allocation failure the segments stay as they are (the
** index is valid either way). */
static void rv__bm25_merge_tail(rv_bm25 *ix) {
    while (ix->n_segs >= 2) {
        rv__seg *a = ix->segs[ix->n_segs - 2], *b = ix->segs[ix->n_segs - 1];
        if (b->n_post * 4 < a->n_post) break;
        rv__seg *m;
        rv__seg *pair[2] = {a, b};
        if (rv__seg_concat(ix, pair, 2, NULL, ix->doc_len, &m) != RV_OK) {
            rv_errmsg_clear();
            return;
        }
        rv__mark_purged(ix, a->doc_base, b->doc_end);
        rv__seg_free(a);
        rv__seg_free(b);
        ix->segs[ix->n_segs - 2] = m;
        ix->n_segs--;
    }
}

/* Check caller ids for an add: range, not live, distinct. */
static rv_status rv__check_new_ids(const rv_bm25 *ix, const int64_t *ids, size_t n) {
    for (size_t i = 0; i < n; i++) {
        int64_t id = ids[i];
        if (id < 0 || id > RV_MAX_ID)
            return rv__error(RV_E_INVALID_ARG, "ids[%zu] = %lld: ids must be in 0 .. %lld", i,
                             (long long)id, (long long)RV_MAX_ID);
        uint32_t s = rv__idmap_find(ix, id);
        if (s != RV__NO_SLOT && ix->doc_state[s] == RV_BM25_DOC_LIVE)
            return rv__error(RV_E_INVALID_ARG,
                             "ids[%zu] = %lld is already in the index (delete it first to "
                             "replace it)",
                             i, (long long)id);
    }
    return rv__ids_check_distinct(ids, n);
}

rv_status rv_bm25_add(rv_bm25 *ix, size_t n_docs, const char *const *texts, const size_t *lens,
                      const int64_t *ids, rv_progress_fn progress, void *progress_ctx,
                      int64_t *assigned) {
    RV__NOT_NULL(ix, "index");
    RV__CHECK_SIZE(n_docs, sizeof *lens, "n_docs");
    if (n_docs == 0) return RV_OK;
    RV__NOT_NULL(texts, "texts");
    RV__NOT_NULL(lens, "lens");
    for (size_t i = 0; i < n_docs; i++) {
        if (!texts[i] && lens[i])
            return rv__error(RV_E_INVALID_ARG, "texts[%zu] is NULL but lens[%zu] = %zu", i, i,
                             lens[i]);
        if (!rv__fits(lens[i], 1))
            return rv__error(RV_E_RANGE,
                             "lens[%zu] = %zu is too large: no text that long can exist", i,
                             lens[i]);
    }
    if ((uint64_t)ix->n_docs + n_docs > RV_BM25_MAX_DOCS)
        return rv__error(RV_E_RANGE,
                         "%zu more documents would exceed the limit of %llu "
                         "(compact the index to reuse deleted slots)",
                         n_docs, (unsigned long long)RV_BM25_MAX_DOCS);
    rv_status st;
    int64_t max_id;
    if (ids) {
        if ((st = rv__check_new_ids(ix, ids, n_docs)) != RV_OK) return st;
        max_id = -1;
        for (size_t i = 0; i < n_docs; i++)
            if (ids[i] > max_id) max_id = ids[i];
    } else {
        if (ix->next_id > RV_MAX_ID || (uint64_t)n_docs - 1 > (uint64_t)(RV_MAX_ID - ix->next_id))
            return rv__error(RV_E_RANGE,
                             "numbering %zu documents from %lld passes the "
                             "largest id %lld",
                             n_docs, (long long)ix->next_id, (long long)RV_MAX_ID);
        max_id = ix->next_id + (int64_t)n_docs - 1;
    }
    if ((st = rv__bm25_reserve_docs(ix, (uint64_t)ix->n_docs + n_docs)) != RV_OK) return st;
    if ((st = rv__idmap_reserve(ix, ix->idmap_used + n_docs)) != RV_OK) return st;
    uint32_t old_terms = ix->n_terms;
    rv__adder a;
    memset(&a, 0, sizeof a);
    a.ix = ix;
    uint32_t *npairs = rv__malloc(n_docs * sizeof *npairs);
    rv__seg *seg = NULL;
    if (!npairs) {
        st = rv__nomem("the new documents' lengths");
        goto fail;
    }
    uint32_t add_stamp = rv__next_add_stamp(ix), max_dl = ix->max_dl;
    uint32_t base = ix->n_docs;
    for (size_t i = 0; i < n_docs; i++) {
        a.cur_len = 0;
        uint64_t before = a.n_pairs;
        size_t bad = 0;
        a.tok_n = 0;
        a.tok_len = 0;
        st = rv__analyze_each(&ix->an, texts[i], lens[i], rv__adder_term, &a, &bad);
        if (st == RV_OK) st = rv__adder_flush(&a, add_stamp);
        if (st == RV_E_INVALID_ARG) {
            st = rv__error(
                RV_E_INVALID_ARG,
                "document at index %zu of the %zu being added: invalid UTF-8 at byte offset %zu", i,
                n_docs, bad);
            goto fail;
        }
        if (st != RV_OK) goto fail;
        if (a.cur_len > UINT32_MAX) {
            st = rv__error(
                RV_E_RANGE,
                "document at index %zu of the %zu being added has %llu terms: at most %u per "
                "document",
                i, n_docs, (unsigned long long)a.cur_len, UINT32_MAX);
            goto fail;
        }
        npairs[i] = (uint32_t)(a.n_pairs - before);
        /* slots past n_docs are not in use yet: writing them is invisible */
        ix->doc_len[base + i] = (uint32_t)a.cur_len;
        if ((uint32_t)a.cur_len > max_dl) max_dl = (uint32_t)a.cur_len;
        if (progress && ((i + 1) % 1024 == 0 || i + 1 == n_docs) &&
            progress(progress_ctx, i + 1, n_docs)) {
            st = rv__error(RV_E_INTERRUPTED, "add interrupted after %zu of %zu documents", i + 1,
                           n_docs);
            goto fail;
        }
    }
    if ((st = rv__bm25_reserve_ltab(ix, max_dl)) != RV_OK) goto fail;
    if ((st = rv__seg_from_pairs(ix, &a, base, n_docs, npairs, &seg)) != RV_OK) goto fail;
    rv__seg **segs = rv__realloc(ix->segs, (ix->n_segs + 1) * sizeof *segs);
    if (!segs) {
        st = rv__nomem("the segment list");
        goto fail;
    }
    ix->segs = segs;
    /* ---- commit: nothing below can fail */
    for (size_t i = 0; i < seg->n_terms; i++)
        ix->df[seg->term_ids[i]] += seg->offsets[i + 1] - seg->offsets[i];
    for (size_t i = 0; i < n_docs; i++) {
        uint32_t d = base + (uint32_t)i;
        int64_t id = ids ? ids[i] : ix->next_id + (int64_t)i;
        ix->doc_state[d] = RV_BM25_DOC_LIVE;
        ix->ext[d] = id;
        ix->total_len += ix->doc_len[d];
        rv__idmap_put(ix, d);
        if (assigned) assigned[i] = id;
    }
    if (max_id + 1 > ix->next_id) ix->next_id = max_id + 1;
    ix->max_dl = max_dl;
    ix->n_docs += (uint32_t)n_docs;
    ix->n_live += n_docs;
    ix->segs[ix->n_segs++] = seg;
    rv__free(npairs);
    rv__adder_free(&a);
    rv__bm25_merge_tail(ix);
    rv__bm25_refresh(ix);
    return RV_OK;
fail:
    rv__free(npairs);
    rv__adder_free(&a);
    rv__seg_free(seg);
    rv__dict_truncate(ix, old_terms);
    return st;
}

/* --------------------------------------------------------------- delete */

rv_status rv_bm25_delete(rv_bm25 *ix, const int64_t *ids, size_t n, size_t *n_deleted) {
    if (n_deleted) *n_deleted = 0;
    RV__NOT_NULL(ix, "index");
    RV__CHECK_SIZE(n, sizeof *ids, "n");
    if (n == 0) return RV_OK;
    if (!ids) return rv__error(RV_E_INVALID_ARG, "ids is NULL but n = %zu", n);
    for (size_t i = 0; i < n; i++) {
        uint32_t s = ids[i] < 0 ? RV__NO_SLOT : rv__idmap_find(ix, ids[i]);
        if (s == RV__NO_SLOT || ix->doc_state[s] != RV_BM25_DOC_LIVE)
            return rv__error(RV_E_RANGE, "ids[%zu] = %lld is not in the index", i,
                             (long long)ids[i]);
    }
    rv_status st = rv__ids_check_distinct(ids, n);
    if (st != RV_OK) return st;
    /* the forward lists of every segment concerned (allocation: may fail,
    ** and a failure changes nothing observable) */
    for (size_t i = 0; i < n; i++) {
        rv__seg *g = ix->segs[rv__seg_of(ix, rv__idmap_find(ix, ids[i]))];
        if ((st = rv__seg_forward(g)) != RV_OK) return st;
    }
    /* ---- commit: out of the statistics now */
    for (size_t i = 0; i < n; i++) {
        uint32_t d = rv__idmap_find(ix, ids[i]);
        const rv__seg *g = ix->segs[rv__seg_of(ix, d)];
        const uint64_t *fo = g->fwd_off + (d - g->doc_base);
        for (uint64_t p = fo[0]; p < fo[1]; p++) ix->df[g->fwd_term[p]]--;
        ix->doc_state[d] = RV_BM25_DOC_TOMBSTONED;
        rv__mark_dead(ix, d);
        ix->segs[rv__seg_of(ix, d)]->n_dead++;
        ix->total_len -= ix->doc_len[d];
        ix->n_live--;
        ix->n_tombstoned++;
    }
    rv__bm25_refresh(ix);
    if (n_deleted) *n_deleted = n;
    return RV_OK;
}

/* Purge deleted documents and renumber the live ones 0, 1, 2, ... in slot
** order (caller ids do not change). */
rv_status rv_bm25_compact(rv_bm25 *ix) {
    RV__NOT_NULL(ix, "index");
    if (ix->n_live == ix->n_docs && ix->n_segs <= 1) return RV_OK;
    uint32_t nl = (uint32_t)ix->n_live;
    uint32_t *remap = rv__malloc((ix->n_docs ? ix->n_docs : 1) * sizeof *remap);
    uint32_t *len = rv__malloc((nl ? nl : 1) * sizeof *len);
    uint8_t *state = rv__malloc(nl ? nl : 1);
    int64_t *ext = rv__malloc((nl ? nl : 1) * sizeof *ext);
    uint64_t *dead = rv__calloc((size_t)nl / 64 + 2, sizeof *dead);
    uint64_t *dead_sum = rv__calloc((size_t)nl / 4096 + 3, sizeof *dead_sum);
    uint32_t *idmap = NULL;
    rv__seg *m = NULL;
    rv__seg **segs = NULL;
    rv_status st = RV_OK;
    if (!remap || !len || !state || !ext || !dead || !dead_sum) {
        st = rv__nomem("the compacted documents");
        goto fail;
    }
    uint32_t k = 0, max_dl = 0;
    for (uint32_t d = 0; d < ix->n_docs; d++) {
        if (ix->doc_state[d] != RV_BM25_DOC_LIVE) {
            remap[d] = RV__NO_SLOT;
            continue;
        }
        remap[d] = k;
        len[k] = ix->doc_len[d];
        state[k] = RV_BM25_DOC_LIVE;
        ext[k] = ix->ext[d];
        if (len[k] > max_dl) max_dl = len[k];
        k++;
    }
    uint64_t cap = 16;
    while (cap < 2 * (uint64_t)nl) cap *= 2;
    idmap = rv__calloc((size_t)cap, sizeof *idmap);
    segs = rv__malloc(sizeof *segs);
    if (!idmap || !segs) {
        st = rv__nomem("the compacted id map");
        goto fail;
    }
    if ((st = rv__seg_concat(ix, ix->segs, ix->n_segs, remap, len, &m)) != RV_OK) goto fail;
    /* ---- commit */
    for (size_t i = 0; i < ix->n_segs; i++) rv__seg_free(ix->segs[i]);
    rv__free(ix->segs);
    ix->segs = segs;
    ix->segs[0] = m;
    ix->n_segs = 1;
    rv__free(ix->doc_len);
    rv__free(ix->doc_state);
    rv__free(ix->ext);
    rv__free(ix->dead);
    rv__free(ix->dead_sum);
    rv__free(ix->idmap);
    rv__free(remap);
    ix->doc_len = len;
    ix->doc_state = state;
    ix->ext = ext;
    ix->dead = dead;
    ix->dead_sum = dead_sum;
    ix->n_docs = ix->doc_cap = nl;
    ix->n_tombstoned = 0;
    ix->max_dl = max_dl;
    ix->idmap = idmap;
    ix->idmap_mask = cap - 1;
    ix->idmap_used = 0;
    for (uint32_t d = 0; d < nl; d++) rv__idmap_put(ix, d);
    rv__bm25_refresh(ix);
    return RV_OK;
fail:
    rv__free(remap);
    rv__free(len);
    rv__free(state);
    rv__free(ext);
    rv__free(dead);
    rv__free(dead_sum);
    rv__free(idmap);
    rv__free(segs);
    return st;
}

/* ------------------------------------------------------ params and info */

rv_status rv_bm25_set_params(rv_bm25 *ix, const rv_bm25_params *params) {
    RV__NOT_NULL(ix, "index");
    rv_status st = rv_bm25_params_check(params);
    if (st != RV_OK) return st;
    ix->par = *params;
    rv__bm25_refresh(ix);
    return RV_OK;
}

rv_status rv_bm25_set_collection_stats(rv_bm25 *ix, uint64_t n_docs, uint64_t total_len,
                                       const uint64_t *dfs, size_t n_terms) {
    RV__NOT_NULL(ix, "index");
    if (n_docs == 0) {
        if (dfs || n_terms || total_len)
            return rv__error(RV_E_INVALID_ARG,
                             "n_docs = 0 drops collection statistics: pass total_len = 0, "
                             "dfs = NULL and n_terms = 0");
        rv__bm25_refresh(ix);
        return RV_OK;
    }
    if (n_terms) RV__NOT_NULL(dfs, "dfs");
    if (n_terms != ix->n_terms)
        return rv__error(RV_E_SHAPE, "dfs has %zu entries; the index has %u terms", n_terms,
                         ix->n_terms);
    if (n_docs < ix->n_live)
        return rv__error(RV_E_INVALID_ARG,
                         "n_docs = %llu is less than this index's %llu live documents: "
                         "collection statistics must cover this index",
                         (unsigned long long)n_docs, (unsigned long long)ix->n_live);
    if (total_len < ix->total_len)
        return rv__error(RV_E_INVALID_ARG,
                         "total_len = %llu is less than this index's %llu: collection "
                         "statistics must cover this index",
                         (unsigned long long)total_len, (unsigned long long)ix->total_len);
    for (size_t t = 0; t < n_terms; t++) {
        if (dfs[t] < ix->df[t] || dfs[t] > n_docs)
            return rv__error(RV_E_INVALID_ARG,
                             "dfs[%zu] = %llu: the collection df of a term must lie between "
                             "this index's df (%llu) and n_docs (%llu)",
                             t, (unsigned long long)dfs[t], (unsigned long long)ix->df[t],
                             (unsigned long long)n_docs);
    }
    uint64_t *cdf = rv__malloc((n_terms ? n_terms : 1) * sizeof *cdf);
    if (!cdf) return rv__nomem("collection document frequencies");
    if (n_terms) memcpy(cdf, dfs, n_terms * sizeof *cdf);
    rv__free(ix->cdf);
    ix->cdf = cdf;
    ix->c_n = n_docs;
    ix->c_total_len = total_len;
    ix->avgdl = (double)total_len / (double)n_docs;
    rv__bm25_tables(ix);
    return RV_OK;
}

rv_status rv_bm25_get_params(const rv_bm25 *ix, rv_bm25_params *out) {
    RV__NOT_NULL(ix, "index");
    RV__NOT_NULL(out, "out");
    *out = ix->par;
    return RV_OK;
}

rv_status rv_bm25_get_analyzer(const rv_bm25 *ix, rv_analyzer_options *out) {
    RV__NOT_NULL(ix, "index");
    RV__NOT_NULL(out, "out");
    *out = ix->an;
    return RV_OK;
}

rv_status rv_bm25_get_info(const rv_bm25 *ix, rv_bm25_info *out) {
    RV__NOT_NULL(ix, "index");
    RV__NOT_NULL(out, "out");
    memset(out, 0, sizeof *out);
    out->n_docs = ix->n_docs;
    out->n_live = ix->n_live;
    out->n_tombstoned = ix->n_tombstoned;
    out->n_stats_docs = ix->n_live;
    out->total_len = ix->total_len;
    out->avgdl = ix->avgdl;
    out->n_terms = ix->n_terms;
    for (size_t i = 0; i < ix->n_segs; i++) out->n_postings += ix->segs[i]->n_post;
    out->n_segments = ix->n_segs;
    out->memory_bytes = rv__bm25_memory(ix);
    out->next_id = ix->next_id;
    return RV_OK;
}

rv_status rv_bm25_lookup(const rv_bm25 *ix, const char *term, size_t len, uint32_t *term_id,
                         int *found) {
    if (found) *found = 0;
    if (term_id) *term_id = 0;
    RV__NOT_NULL(ix, "index");
    RV__NOT_NULL(term_id, "term_id");
    RV__NOT_NULL(found, "found");
    if (!term && len) return rv__error(RV_E_INVALID_ARG, "term is NULL but len = %zu", len);
    RV__CHECK_SIZE(len, 1, "len");
    *found = rv__dict_find(ix, term, len, rv__hash_bytes(term, len), term_id);
    return RV_OK;
}

rv_status rv_bm25_term(const rv_bm25 *ix, uint32_t term_id, const char **term, size_t *len) {
    RV__NOT_NULL(ix, "index");
    RV__NOT_NULL(term, "term");
    RV__NOT_NULL(len, "len");
    *term = NULL;
    *len = 0;
    if (term_id >= ix->n_terms)
        return rv__error(RV_E_RANGE, "term id %u: the dictionary has %u terms", term_id,
                         ix->n_terms);
    *term = ix->pool + ix->str_off[term_id];
    *len = (size_t)(ix->str_off[term_id + 1] - ix->str_off[term_id]);
    return RV_OK;
}

rv_status rv_bm25_doc_freq(const rv_bm25 *ix, uint32_t term_id, uint64_t *df) {
    RV__NOT_NULL(ix, "index");
    RV__NOT_NULL(df, "df");
    *df = 0;
    if (term_id >= ix->n_terms)
        return rv__error(RV_E_RANGE, "term id %u: the dictionary has %u terms", term_id,
                         ix->n_terms);
    *df = ix->df[term_id];
    return RV_OK;
}

rv_status rv_bm25_doc(const rv_bm25 *ix, int64_t id, uint32_t *doc_len, int *state) {
    RV__NOT_NULL(ix, "index");
    uint32_t d = id < 0 ? RV__NO_SLOT : rv__idmap_find(ix, id);
    if (d == RV__NO_SLOT)
        return rv__error(RV_E_RANGE, "document id %lld is not in the index", (long long)id);
    if (doc_len) *doc_len = ix->doc_len[d];
    if (state) *state = ix->doc_state[d];
    return RV_OK;
}

int rv_bm25_contains(const rv_bm25 *ix, int64_t id) {
    if (!ix || id < 0) return 0;
    uint32_t d = rv__idmap_find(ix, id);
    return d != RV__NO_SLOT && ix->doc_state[d] == RV_BM25_DOC_LIVE;
}

rv_status rv_bm25_ids(const rv_bm25 *ix, int64_t *ids, size_t capacity, size_t *n_ids) {
    if (n_ids) *n_ids = 0;
    RV__NOT_NULL(ix, "index");
    RV__NOT_NULL(n_ids, "n_ids");
    if (!ids && capacity)
        return rv__error(RV_E_INVALID_ARG, "ids is NULL but capacity = %zu", capacity);
    RV__CHECK_SIZE(capacity, sizeof *ids, "capacity");
    *n_ids = ix->n_live;
    size_t w = 0;
    for (uint32_t d = 0; d < ix->n_docs && w < capacity; d++)
        if (ix->doc_state[d] == RV_BM25_DOC_LIVE) ids[w++] = ix->ext[d];
    if (capacity < ix->n_live)
        return rv__error(RV_E_SHAPE, "capacity %zu < %llu live ids", capacity,
                         (unsigned long long)ix->n_live);
    return RV_OK;
}
