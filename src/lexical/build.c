/*
** Building and changing a BM25 index: create/free, add, delete, compact,
** parameters, and the refresh of derived data (bm25_internal.h).
**
** Every mutation allocates all it needs before it changes anything, so a
** failure (RV_E_NOMEM, bad input, an interrupt) leaves the index exactly as
** it was.  The refresh that follows a change allocates nothing.
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
        return rv__error(RV_E_INVALID_ARG, "delta = %g: only BM25L and BM25+ take a delta "
                         "(use 0 for this variant)", p->delta);
    }
    return RV_OK;
}

void rv__wparams_of(const rv_bm25 *ix, rv__wparams *wp) {
    wp->v = ix->par.variant;
    wp->k1 = (float)ix->par.k1;
    wp->k1p1 = (float)(ix->par.k1 + 1.0);
    wp->delta = (float)ix->par.delta;
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
    rv__free(s->w);
    rv__free(s->block_off);
    rv__free(s->block_last);
    rv__free(s->block_max);
    rv__free(s->term_max);
    rv__free(s);
}

/* Allocate (and lay out) the derived arrays of a segment whose postings
** are in place; their values come from rv__bm25_refresh. */
rv_status rv__seg_derive_alloc(rv__seg *s) {
    s->w = rv__malloc((s->n_post ? s->n_post : 1) * sizeof *s->w);
    s->block_off = rv__malloc((s->n_terms + 1) * sizeof *s->block_off);
    s->term_max = rv__malloc((s->n_terms ? s->n_terms : 1) * sizeof *s->term_max);
    if (!s->w || !s->block_off || !s->term_max) return rv__nomem("the posting weights");
    uint64_t nb = 0;
    for (size_t i = 0; i < s->n_terms; i++) {
        s->block_off[i] = nb;
        nb += (s->offsets[i + 1] - s->offsets[i] + RV__BLOCK - 1) / RV__BLOCK;
    }
    s->block_off[s->n_terms] = nb;
    s->block_last = rv__malloc((nb ? nb : 1) * sizeof *s->block_last);
    s->block_max = rv__malloc((nb ? nb : 1) * sizeof *s->block_max);
    if (!s->block_last || !s->block_max) return rv__nomem("the pruning bounds");
    for (size_t i = 0; i < s->n_terms; i++) {
        uint64_t a = s->offsets[i], e = s->offsets[i + 1];
        for (uint64_t bk = s->block_off[i]; a < e; bk++, a += RV__BLOCK) {
            uint64_t last = a + RV__BLOCK < e ? a + RV__BLOCK : e;
            s->block_last[bk] = s->docs[last - 1];
        }
    }
    return RV_OK;
}

static double rv__idf(rv_bm25_variant v, double N, double df) {
    if (df <= 0 || N <= 0) return 0.0;
    switch (v) {
    case RV_BM25_ROBERTSON: {
        double x = log((N - df + 0.5) / (df + 0.5));
        return x > 0 ? x : 0.0;
    }
    case RV_BM25_ATIRE: return log(N / df);
    case RV_BM25_L: return log((N + 1.0) / (df + 0.5));
    case RV_BM25_PLUS: return log((N + 1.0) / df);
    default: return log(1.0 + (N - df + 0.5) / (df + 0.5));
    }
}

/* Recompute idf, document norms and every block bound.  No allocation. */
rv_status rv__bm25_refresh(rv_bm25 *ix) {
    const rv_bm25_params *p = &ix->par;
    double N = (double)ix->n_stats_docs;
    ix->avgdl = ix->n_stats_docs ? (double)ix->total_len / N : 0.0;
    for (uint32_t t = 0; t < ix->n_terms; t++) {
        ix->idf[t] = rv__idf(p->variant, N, (double)ix->df[t]);
        ix->idf32[t] = (float)ix->idf[t];
    }
    for (uint32_t d = 0; d < ix->n_docs; d++) {
        double ratio = ix->avgdl > 0 ? (double)ix->doc_len[d] / ix->avgdl : 0.0;
        double B = (1.0 - p->b) + p->b * ratio;
        ix->norm[d] = (float)(p->variant == RV_BM25_L ? B : p->k1 * B);
    }
    rv__wparams wp;
    rv__wparams_of(ix, &wp);
    for (size_t si = 0; si < ix->n_segs; si++) {
        rv__seg *s = ix->segs[si];
        for (size_t i = 0; i < s->n_terms; i++) {
            float idf = ix->idf32[s->term_ids[i]];
            uint64_t a = s->offsets[i], e = s->offsets[i + 1];
            float tmax = 0.0f;
            for (uint64_t bk = s->block_off[i]; a < e; bk++) {
                uint64_t last = a + RV__BLOCK < e ? a + RV__BLOCK : e;
                float m = 0.0f;
                for (uint64_t q = a; q < last; q++) {
                    float w = rv__weight(&wp, idf, rv__seg_tf(s, q), ix->norm[s->docs[q]]);
                    s->w[q] = w;
                    if (w > m) m = w;
                }
                s->block_max[bk] = m;
                if (m > tmax) tmax = m;
                a = last;
            }
            s->term_max[i] = tmax;
        }
    }
    return RV_OK;
}

/* Grow the per-document arrays to hold n documents. */
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
    float *nm = rv__realloc(ix->norm, cap * sizeof *nm);
    if (!nm) return rv__nomem("the document norms");
    ix->norm = nm;
    ix->doc_cap = (uint32_t)cap;
    return RV_OK;
}

uint64_t rv__bm25_memory(const rv_bm25 *ix) {
    uint64_t m = sizeof *ix;
    m += ix->pool_cap + (uint64_t)(ix->term_cap + 1) * 8 + (uint64_t)ix->term_cap * (4 + 8 + 8 + 4);
    m += ix->slots ? (ix->slot_mask + 1) * sizeof(rv__slot) : 0;
    m += (uint64_t)ix->doc_cap * (4 + 1 + 4);
    m += ix->n_segs * sizeof(rv__seg *);
    for (size_t i = 0; i < ix->n_segs; i++) {
        const rv__seg *s = ix->segs[i];
        uint64_t nb = s->block_off[s->n_terms];
        m += sizeof *s + s->n_terms * (4 + 8 + 8 + 4) + 16 + s->n_post * 9 + s->n_over * 12 + nb * 8;
    }
    return m;
}

/* --------------------------------------------------------------- create */

rv_status rv_bm25_create(const rv_analyzer_options *analyzer,
                         const rv_bm25_params *params, rv_bm25 **out) {
    if (!out) return rv__error(RV_E_INVALID_ARG, "out must not be NULL");
    *out = NULL;
    rv_analyzer_options an;
    rv_bm25_params par;
    if (analyzer) an = *analyzer;
    else rv_analyzer_options_init(&an);
    if (params) par = *params;
    else rv_bm25_params_init(&par);
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
    for (size_t i = 0; i < ix->n_segs; i++) rv__seg_free(ix->segs[i]);
    rv__free(ix->segs);
    rv__free(ix->pool);
    rv__free(ix->str_off);
    rv__free(ix->hashes);
    rv__free(ix->slots);
    rv__free(ix->df);
    rv__free(ix->idf);
    rv__free(ix->idf32);
    rv__free(ix->doc_len);
    rv__free(ix->doc_state);
    rv__free(ix->norm);
    rv__free(ix);
}

/* ------------------------------------------------------------------ add */

/* Per term while adding: 1 + index of the last document it was seen in,
** and its (term, tf) pair in that document. */
typedef struct {
    uint32_t doc1;
    uint32_t pad;
    uint64_t pair;
} rv__tmark;

/* State of one add: the (term, tf) pairs of the new documents, in document
** order, and per-term marks to count tf without sorting. */
typedef struct {
    rv_bm25 *ix;
    uint32_t *pair_term;
    uint32_t *pair_tf;
    uint64_t n_pairs, pair_cap;
    rv__tmark *mark;    /* per term (one cache line visit per token) */
    uint64_t mark_cap;
    uint32_t cur;       /* 1 + index of the document being analysed */
    uint64_t cur_len;   /* its length so far */
    /* the current document's terms, buffered until it is analysed */
    char *tok_bytes;
    size_t tok_len, tok_bytes_cap;
    uint64_t *tok_end;
    uint32_t *tok_hash;
    uint32_t *tok_id;
    size_t tok_n, tok_cap;
} rv__adder;

#if defined(__GNUC__) || defined(__clang__)
#  define RV__PREFETCH(p) __builtin_prefetch(p)
#else
#  define RV__PREFETCH(p) ((void)0)
#endif

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

/*
** Resolve the buffered terms of the current document: dictionary ids, then
** per-term counters into (term, tf) pairs.  Each pass touches one random
** location per term; issuing the loads of a whole document before using
** them (prefetches) overlaps the cache misses instead of paying them one
** after another.
*/
static rv_status rv__adder_flush(rv__adder *a) {
    rv_bm25 *ix = a->ix;
    rv_status st;
    size_t n = a->tok_n;
    uint64_t start = 0;
    uint32_t maxid = 0;
    for (size_t k = 0; k < n; k++) {
        const char *term = a->tok_bytes + start;
        size_t len = (size_t)(a->tok_end[k] - start);
        uint32_t t;
        if (!rv__dict_find(ix, term, len, a->tok_hash[k], &t)) {
            if ((st = rv__dict_insert(ix, term, len, a->tok_hash[k], &t)) != RV_OK) return st;
        }
        a->tok_id[k] = t;
        if (t > maxid) maxid = t;
        start = a->tok_end[k];
    }
    if (n && maxid >= a->mark_cap) {
        uint64_t cap = a->mark_cap ? a->mark_cap * 2 : 4096;
        while (cap <= maxid) cap *= 2;
        rv__tmark *mk = rv__realloc(a->mark, cap * sizeof *mk);
        if (!mk) return rv__nomem("term counters");
        memset(mk + a->mark_cap, 0, (cap - a->mark_cap) * sizeof *mk);
        a->mark = mk;
        a->mark_cap = cap;
    }
    for (size_t k = 0; k < n; k++) RV__PREFETCH(&a->mark[a->tok_id[k]]);
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
    for (size_t k = 0; k < n; k++) {
        uint32_t t = a->tok_id[k];
        rv__tmark *m = &a->mark[t];
        if (m->doc1 == a->cur) {
            a->pair_tf[m->pair]++;
            continue;
        }
        m->doc1 = a->cur;
        m->pair = a->n_pairs;
        a->pair_term[a->n_pairs] = t;
        a->pair_tf[a->n_pairs] = 1;
        a->n_pairs++;
    }
    a->cur_len += n;
    a->tok_n = 0;
    a->tok_len = 0;
    return RV_OK;
}

static void rv__adder_free_tokens(rv__adder *a) {
    rv__free(a->tok_bytes);
    rv__free(a->tok_end);
    rv__free(a->tok_hash);
    rv__free(a->tok_id);
    a->tok_bytes = NULL;
    a->tok_end = NULL;
    a->tok_hash = NULL;
    a->tok_id = NULL;
    a->tok_cap = a->tok_bytes_cap = 0;
}

static int rv__cmp_u64(const void *x, const void *y) {
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

/* Build a segment from pairs of documents [base, base + n) whose pair
** counts are npairs[]; cnt must hold n_terms zeros on entry (it is used
** as scratch and left dirty). */
static rv_status rv__seg_from_pairs(const rv__adder *a, uint32_t base, size_t n,
                                    const uint32_t *npairs, uint64_t *cnt,
                                    uint32_t n_terms, rv__seg **out) {
    *out = NULL;
    rv__seg *s = rv__calloc(1, sizeof *s);
    if (!s) return rv__nomem("a segment");
    s->doc_base = base;
    s->doc_end = (uint32_t)(base + n);
    s->n_post = a->n_pairs;
    uint64_t n_over = 0;
    for (uint64_t p = 0; p < a->n_pairs; p++) {
        cnt[a->pair_term[p]]++;
        if (a->pair_tf[p] >= RV__TF_ESCAPE) n_over++;
    }
    size_t nt = 0;
    for (uint32_t t = 0; t < n_terms; t++) nt += cnt[t] != 0;
    s->n_terms = nt;
    s->term_ids = rv__malloc((nt ? nt : 1) * sizeof *s->term_ids);
    s->offsets = rv__malloc((nt + 1) * sizeof *s->offsets);
    s->docs = rv__malloc((s->n_post ? s->n_post : 1) * sizeof *s->docs);
    s->tfs = rv__malloc(s->n_post ? s->n_post : 1);
    s->n_over = n_over;
    s->over_pos = rv__malloc((n_over ? n_over : 1) * sizeof *s->over_pos);
    s->over_tf = rv__malloc((n_over ? n_over : 1) * sizeof *s->over_tf);
    uint64_t *over_tmp = rv__malloc((n_over ? n_over : 1) * 2 * sizeof(uint64_t));
    if (!s->term_ids || !s->offsets || !s->docs || !s->tfs || !s->over_pos ||
        !s->over_tf || !over_tmp) {
        rv__free(over_tmp);
        rv__seg_free(s);
        return rv__nomem("a segment's posting lists");
    }
    /* offsets, and cnt turned into write positions */
    uint64_t off = 0;
    size_t k = 0;
    for (uint32_t t = 0; t < n_terms; t++) {
        if (!cnt[t]) continue;
        s->term_ids[k] = t;
        s->offsets[k++] = off;
        uint64_t c = cnt[t];
        cnt[t] = off;
        off += c;
    }
    s->offsets[nt] = off;
    uint64_t p = 0, o = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t doc = base + (uint32_t)i;
        for (uint32_t j = 0; j < npairs[i]; j++, p++) {
            uint64_t pos = cnt[a->pair_term[p]]++;
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
    qsort(over_tmp, n_over, 2 * sizeof(uint64_t), rv__cmp_u64);
    for (uint64_t i = 0; i < n_over; i++) {
        s->over_pos[i] = over_tmp[2 * i];
        s->over_tf[i] = (uint32_t)over_tmp[2 * i + 1];
    }
    rv__free(over_tmp);
    rv_status st = rv__seg_derive_alloc(s);
    if (st != RV_OK) {
        rv__seg_free(s);
        return st;
    }
    *out = s;
    return RV_OK;
}

/*
** Concatenate segments segs[0..n) (consecutive, in document order) into
** one.  With purge set, postings of tombstoned documents are dropped.
*/
static rv_status rv__seg_concat(const rv_bm25 *ix, rv__seg *const *segs, size_t n,
                                int purge, rv__seg **out) {
    *out = NULL;
    rv__seg *s = rv__calloc(1, sizeof *s);
    if (!s) return rv__nomem("a merged segment");
    uint32_t T = ix->n_terms;
    uint64_t *cnt = rv__calloc(T ? T : 1, sizeof *cnt);
    if (!cnt) {
        rv__seg_free(s);
        return rv__nomem("a merged segment");
    }
    s->doc_base = n ? segs[0]->doc_base : 0;
    s->doc_end = n ? segs[n - 1]->doc_end : 0;
    uint64_t n_post = 0, n_over = 0;
    for (size_t si = 0; si < n; si++) {
        const rv__seg *g = segs[si];
        for (size_t i = 0; i < g->n_terms; i++) {
            for (uint64_t q = g->offsets[i]; q < g->offsets[i + 1]; q++) {
                if (purge && ix->doc_state[g->docs[q]] != RV_BM25_DOC_LIVE) continue;
                cnt[g->term_ids[i]]++;
                n_post++;
                if (g->tfs[q] == RV__TF_ESCAPE) n_over++;
            }
        }
    }
    size_t nt = 0;
    for (uint32_t t = 0; t < T; t++) nt += cnt[t] != 0;
    s->n_terms = nt;
    s->n_post = n_post;
    s->n_over = n_over;
    s->term_ids = rv__malloc((nt ? nt : 1) * sizeof *s->term_ids);
    s->offsets = rv__malloc((nt + 1) * sizeof *s->offsets);
    s->docs = rv__malloc((n_post ? n_post : 1) * sizeof *s->docs);
    s->tfs = rv__malloc(n_post ? n_post : 1);
    s->over_pos = rv__malloc((n_over ? n_over : 1) * sizeof *s->over_pos);
    s->over_tf = rv__malloc((n_over ? n_over : 1) * sizeof *s->over_tf);
    if (!s->term_ids || !s->offsets || !s->docs || !s->tfs || !s->over_pos || !s->over_tf) {
        rv__free(cnt);
        rv__seg_free(s);
        return rv__nomem("a merged segment's posting lists");
    }
    uint64_t off = 0;
    size_t k = 0;
    for (uint32_t t = 0; t < T; t++) {
        if (!cnt[t]) continue;
        s->term_ids[k] = t;
        s->offsets[k++] = off;
        off += cnt[t];
    }
    s->offsets[nt] = off;
    rv__free(cnt);
    /* term by term, segment by segment: lists stay in document order and
    ** overflow positions come out ascending */
    size_t *cur = rv__calloc(n ? n : 1, sizeof *cur);
    if (!cur) {
        rv__seg_free(s);
        return rv__nomem("a merged segment");
    }
    uint64_t w = 0, o = 0;
    for (size_t i = 0; i < nt; i++) {
        uint32_t t = s->term_ids[i];
        for (size_t si = 0; si < n; si++) {
            const rv__seg *g = segs[si];
            size_t j = cur[si];
            /* skip terms whose postings here were all purged */
            while (j < g->n_terms && g->term_ids[j] < t) j++;
            cur[si] = j;
            if (j >= g->n_terms || g->term_ids[j] != t) continue;
            cur[si] = j + 1;
            for (uint64_t q = g->offsets[j]; q < g->offsets[j + 1]; q++) {
                if (purge && ix->doc_state[g->docs[q]] != RV_BM25_DOC_LIVE) continue;
                s->docs[w] = g->docs[q];
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
    rv_status st = rv__seg_derive_alloc(s);
    if (st != RV_OK) {
        rv__seg_free(s);
        return st;
    }
    *out = s;
    return RV_OK;
}

/* Merge the last segments while the last is at least a quarter of the size
** of the one before it.  Best effort: on an allocation failure the
** segments stay as they are (the index is valid either way). */
static void rv__bm25_merge_tail(rv_bm25 *ix) {
    while (ix->n_segs >= 2) {
        rv__seg *a = ix->segs[ix->n_segs - 2], *b = ix->segs[ix->n_segs - 1];
        if (b->n_post * 4 < a->n_post) break;
        rv__seg *m;
        rv__seg *pair[2] = {a, b};
        if (rv__seg_concat(ix, pair, 2, 0, &m) != RV_OK) {
            rv_errmsg_clear();
            return;
        }
        rv__seg_free(a);
        rv__seg_free(b);
        ix->segs[ix->n_segs - 2] = m;
        ix->n_segs--;
    }
}

rv_status rv_bm25_add(rv_bm25 *ix, size_t n_docs, const char *const *texts,
                      const size_t *lens, rv_progress_fn progress, void *progress_ctx,
                      uint32_t *first_id) {
    if (first_id) *first_id = 0;
    if (!ix) return rv__error(RV_E_INVALID_ARG, "index must not be NULL");
    if (first_id) *first_id = ix->n_docs;
    if (n_docs == 0) return RV_OK;
    if (!texts || !lens)
        return rv__error(RV_E_INVALID_ARG, "texts and lens must not be NULL");
    for (size_t i = 0; i < n_docs; i++)
        if (!texts[i] && lens[i])
            return rv__error(RV_E_INVALID_ARG, "texts[%zu] is NULL but lens[%zu] = %zu", i,
                             i, lens[i]);
    if ((uint64_t)ix->n_docs + n_docs > RV_BM25_MAX_DOCS)
        return rv__error(RV_E_RANGE, "%zu more documents would exceed the limit of %llu",
                         n_docs, (unsigned long long)RV_BM25_MAX_DOCS);
    rv_status st = rv__bm25_reserve_docs(ix, (uint64_t)ix->n_docs + n_docs);
    if (st != RV_OK) return st;
    uint32_t old_terms = ix->n_terms;
    rv__adder a;
    memset(&a, 0, sizeof a);
    a.ix = ix;
    uint32_t *npairs = rv__malloc(n_docs * sizeof *npairs);
    uint32_t *lengths = rv__malloc(n_docs * sizeof *lengths);
    uint64_t *cnt = NULL;
    rv__seg *seg = NULL;
    rv__seg **segs = NULL;
    if (!npairs || !lengths) {
        st = rv__nomem("the new documents' lengths");
        goto fail;
    }
    for (size_t i = 0; i < n_docs; i++) {
        a.cur = (uint32_t)(i + 1);
        a.cur_len = 0;
        uint64_t before = a.n_pairs;
        size_t bad = 0;
        a.tok_n = 0;
        a.tok_len = 0;
        st = rv__analyze_each(&ix->an, texts[i], lens[i], rv__adder_term, &a, &bad);
        if (st == RV_OK) st = rv__adder_flush(&a);
        if (st == RV_E_INVALID_ARG) {
            st = rv__error(RV_E_INVALID_ARG, "texts[%zu]: invalid UTF-8 at byte offset %zu", i, bad);
            goto fail;
        }
        if (st != RV_OK) goto fail;
        if (a.cur_len > UINT32_MAX) {
            st = rv__error(RV_E_RANGE, "texts[%zu] has %llu terms: at most %u per document", i,
                           (unsigned long long)a.cur_len, UINT32_MAX);
            goto fail;
        }
        npairs[i] = (uint32_t)(a.n_pairs - before);
        lengths[i] = (uint32_t)a.cur_len;
        if (progress && ((i + 1) % 1024 == 0 || i + 1 == n_docs) &&
            progress(progress_ctx, i + 1, n_docs)) {
            st = rv__error(RV_E_INTERRUPTED, "add interrupted after %zu of %zu documents",
                           i + 1, n_docs);
            goto fail;
        }
    }
    rv__free(a.mark);
    a.mark = NULL;
    rv__adder_free_tokens(&a);
    cnt = rv__calloc(ix->n_terms ? ix->n_terms : 1, sizeof *cnt);
    if (!cnt) {
        st = rv__nomem("the new segment");
        goto fail;
    }
    if ((st = rv__seg_from_pairs(&a, ix->n_docs, n_docs, npairs, cnt, ix->n_terms, &seg)) != RV_OK)
        goto fail;
    segs = rv__realloc(ix->segs, (ix->n_segs + 1) * sizeof *segs);
    if (!segs) {
        st = rv__nomem("the segment list");
        goto fail;
    }
    ix->segs = segs;
    /* ---- commit: nothing below can fail */
    for (size_t i = 0; i < seg->n_terms; i++)
        ix->df[seg->term_ids[i]] += seg->offsets[i + 1] - seg->offsets[i];
    for (size_t i = 0; i < n_docs; i++) {
        ix->doc_len[ix->n_docs + i] = lengths[i];
        ix->doc_state[ix->n_docs + i] = RV_BM25_DOC_LIVE;
        ix->total_len += lengths[i];
    }
    ix->n_docs += (uint32_t)n_docs;
    ix->n_stats_docs += n_docs;
    ix->n_live += n_docs;
    ix->segs[ix->n_segs++] = seg;
    rv__free(cnt);
    rv__free(npairs);
    rv__free(lengths);
    rv__free(a.pair_term);
    rv__free(a.pair_tf);
    rv__bm25_merge_tail(ix);
    return rv__bm25_refresh(ix);
fail:
    rv__free(cnt);
    rv__free(npairs);
    rv__free(lengths);
    rv__free(a.pair_term);
    rv__free(a.pair_tf);
    rv__free(a.mark);
    rv__adder_free_tokens(&a);
    rv__seg_free(seg);
    rv__dict_truncate(ix, old_terms);
    return st;
}

/* --------------------------------------------------------------- delete */

rv_status rv_bm25_delete(rv_bm25 *ix, const uint32_t *ids, size_t n, size_t *n_deleted) {
    if (n_deleted) *n_deleted = 0;
    if (!ix) return rv__error(RV_E_INVALID_ARG, "index must not be NULL");
    if (!ids && n) return rv__error(RV_E_INVALID_ARG, "ids is NULL but n = %zu", n);
    for (size_t i = 0; i < n; i++)
        if (ids[i] >= ix->n_docs)
            return rv__error(RV_E_RANGE, "ids[%zu] = %u: the index has %u document ids", i,
                             ids[i], ix->n_docs);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (ix->doc_state[ids[i]] != RV_BM25_DOC_LIVE) continue;
        ix->doc_state[ids[i]] = RV_BM25_DOC_TOMBSTONED;
        ix->n_live--;
        ix->n_tombstoned++;
        k++;
    }
    if (n_deleted) *n_deleted = k;
    return RV_OK;
}

rv_status rv_bm25_compact(rv_bm25 *ix) {
    if (!ix) return rv__error(RV_E_INVALID_ARG, "index must not be NULL");
    if (ix->n_tombstoned == 0 && ix->n_segs <= 1) return RV_OK;
    rv__seg *m;
    rv_status st = rv__seg_concat(ix, ix->segs, ix->n_segs, 1, &m);
    if (st != RV_OK) return st;
    /* commit */
    for (size_t i = 0; i < ix->n_segs; i++) rv__seg_free(ix->segs[i]);
    ix->segs[0] = m;
    ix->n_segs = 1;
    if (ix->n_terms) memset(ix->df, 0, (size_t)ix->n_terms * sizeof *ix->df);
    for (size_t i = 0; i < m->n_terms; i++)
        ix->df[m->term_ids[i]] = m->offsets[i + 1] - m->offsets[i];
    for (uint32_t d = 0; d < ix->n_docs; d++) {
        if (ix->doc_state[d] != RV_BM25_DOC_TOMBSTONED) continue;
        ix->doc_state[d] = RV_BM25_DOC_PURGED;
        ix->total_len -= ix->doc_len[d];
        ix->n_stats_docs--;
    }
    ix->n_tombstoned = 0;
    return rv__bm25_refresh(ix);
}

/* ------------------------------------------------------ params and info */

rv_status rv_bm25_set_params(rv_bm25 *ix, const rv_bm25_params *params) {
    if (!ix) return rv__error(RV_E_INVALID_ARG, "index must not be NULL");
    rv_status st = rv_bm25_params_check(params);
    if (st != RV_OK) return st;
    ix->par = *params;
    return rv__bm25_refresh(ix);
}

rv_status rv_bm25_get_params(const rv_bm25 *ix, rv_bm25_params *out) {
    if (!ix || !out) return rv__error(RV_E_INVALID_ARG, "index and out must not be NULL");
    *out = ix->par;
    return RV_OK;
}

rv_status rv_bm25_get_analyzer(const rv_bm25 *ix, rv_analyzer_options *out) {
    if (!ix || !out) return rv__error(RV_E_INVALID_ARG, "index and out must not be NULL");
    *out = ix->an;
    return RV_OK;
}

rv_status rv_bm25_get_info(const rv_bm25 *ix, rv_bm25_info *out) {
    if (!ix || !out) return rv__error(RV_E_INVALID_ARG, "index and out must not be NULL");
    memset(out, 0, sizeof *out);
    out->n_ids = ix->n_docs;
    out->n_live = ix->n_live;
    out->n_tombstoned = ix->n_tombstoned;
    out->n_stats_docs = ix->n_stats_docs;
    out->total_len = ix->total_len;
    out->avgdl = ix->avgdl;
    out->n_terms = ix->n_terms;
    for (size_t i = 0; i < ix->n_segs; i++) out->n_postings += ix->segs[i]->n_post;
    out->n_segments = ix->n_segs;
    out->memory_bytes = rv__bm25_memory(ix);
    return RV_OK;
}

rv_status rv_bm25_lookup(const rv_bm25 *ix, const char *term, size_t len,
                         uint32_t *term_id, int *found) {
    if (found) *found = 0;
    if (term_id) *term_id = 0;
    if (!ix || !term_id || !found || (!term && len))
        return rv__error(RV_E_INVALID_ARG, "index, term, term_id and found must not be NULL");
    *found = rv__dict_find(ix, term, len, rv__hash_bytes(term, len), term_id);
    return RV_OK;
}

rv_status rv_bm25_term(const rv_bm25 *ix, uint32_t term_id, const char **term, size_t *len) {
    if (!ix || !term || !len)
        return rv__error(RV_E_INVALID_ARG, "index, term and len must not be NULL");
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
    if (!ix || !df) return rv__error(RV_E_INVALID_ARG, "index and df must not be NULL");
    *df = 0;
    if (term_id >= ix->n_terms)
        return rv__error(RV_E_RANGE, "term id %u: the dictionary has %u terms", term_id,
                         ix->n_terms);
    *df = ix->df[term_id];
    return RV_OK;
}

rv_status rv_bm25_doc(const rv_bm25 *ix, uint32_t doc, uint32_t *doc_len, int *state) {
    if (!ix) return rv__error(RV_E_INVALID_ARG, "index must not be NULL");
    if (doc >= ix->n_docs)
        return rv__error(RV_E_RANGE, "document %u: the index has %u document ids", doc,
                         ix->n_docs);
    if (doc_len) *doc_len = ix->doc_len[doc];
    if (state) *state = ix->doc_state[doc];
    return RV_OK;
}
