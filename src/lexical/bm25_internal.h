/*
** Internals of the BM25 index (include/rowvoi/bm25.h).
**
** Layout.  One dictionary (term bytes -> dense term id, open addressing),
** per-document arrays indexed by an internal document number (a "slot":
** 0, 1, 2, ... in the order documents were added, never reused until
** rv_bm25_compact renumbers the live ones), and a list of segments.  A
** segment holds the posting lists of a contiguous range of slots, so walking
** the segments in order walks documents in increasing slot, which is what
** document-at-a-time search needs.  Within a segment, the terms present are
** listed in ascending term id (binary-searched at query time) and each
** posting list is two parallel arrays: slots (uint32, ascending) and term
** frequencies (uint8; 255 means "look it up in the overflow table", which
** holds the rare tf >= 255 sorted by posting position).
**
** Caller ids.  Each slot carries the caller's int64 id (ext[]); an
** open-addressing table (idmap) maps an id to its latest slot, live or not.
** Results, explain, doc and delete speak caller ids; ties between equal
** scores are broken by the lower caller id, so the ranking does not depend
** on the slot order (an incrementally updated index ranks exactly as a
** fresh build of the same documents).
**
** Incremental design (why adds and deletes cost work in proportion to the
** change, while search stays exact and pruned):
**
**  - Nothing stored depends on the collection statistics.  Postings keep
**    raw tf; documents keep their length dl.  The weight w(t, d) is computed
**    at query time as idf * g(tf, dl): idf from N and df (a few logs per
**    query), g from a table over (tf, dl) -- tf < 8 and lengths up to the
**    longest document (at most 8190) -- rebuilt after every change in
**    O(distinct lengths), not O(documents); other pairs are computed from
**    the formula.  Each posting stores its 16-bit place in the table beside
**    its slot, so a weight is one sequential read and a lookup in a small
**    table: about what reading a stored weight cost.
**
**  - Statistics follow every change at once: a delete takes the document
**    out of N, the total length and the document frequency of each of its
**    terms (read from the segment's forward lists: per slot, its term ids;
**    kept from the add, rebuilt once per segment on the first delete after
**    a load or merge), so scores always equal those of an index built from
**    the live documents alone.
**
**  - Pruning bounds that stay valid as statistics drift ("impacts", after
**    Lucene): BM25 is increasing in tf and decreasing in dl (for every
**    variant here and any k1, b >= 0), so the largest weight in a set of
**    postings is reached on its Pareto frontier of (tf, dl) pairs -- the
**    pairs no other posting beats on both.  Each block of RV__BLOCK
**    postings, and each whole list, stores its frontier (capped at
**    RV__IMPACTS pairs by merging neighbours into a pair that dominates
**    both, which keeps it an upper bound).  A bound is the largest weight
**    over the frontier under the current statistics, times 1 + RV__SLACK
**    to cover rounding (float BM25 is monotone up to a few ulps).  The
**    frontier depends only on tf and dl, which never change, so segments
**    are immutable.
**
**  - Adds build a new segment from the new documents alone (O(their
**    postings + distinct terms log distinct terms)); neighbours of similar
**    size are merged (a logarithmic policy), which also purges the postings
**    of deleted documents.  Per-term scratch for counting term frequencies
**    lives in the dictionary with generation stamps, so an add never clears
**    or scans anything sized by the vocabulary.
*/
#ifndef ROWVOI_BM25_INTERNAL_H
#define ROWVOI_BM25_INTERNAL_H

#include <stdatomic.h>

#include "../internal.h"
#include "../text/text_internal.h"

#define RV__BLOCK       128u
#define RV__TF_ESCAPE   255u
#define RV__IMPACTS     8u      /* frontier pairs kept per block / list */
#define RV__SLACK       1e-6    /* relative inflation of every bound */
#define RV__GTF         8u      /* tf < RV__GTF have a cached g(tf, dl) */
#define RV__LTAB_MAX    8191u   /* lengths with a cached norm and g */
#define RV__CODE_ESCAPE 0xFFFFu /* code: not in the g table */
#define RV__NO_SLOT     UINT32_MAX
#define RV__TOP         128u /* postings kept per long list for the first cut */

/* A dictionary slot: the term's id + 1 (0: empty), its hash with the
** length folded into the low byte, and its first 8 bytes -- so most
** lookups settle in the slot without touching the term arrays. */
typedef struct rv__slot {
    uint64_t head;
    uint32_t id1;
    uint32_t hash_len;
} rv__slot;

/* Per-term scratch of rv_bm25_add (see build.c): the stamp of the last
** document the term was seen in and of the last add, and the position of
** its (term, tf) pair in that document (then its rank among the add's
** distinct terms). */
typedef struct rv__tmark {
    uint32_t doc_stamp;
    uint32_t add_stamp;
    uint64_t pos;
} rv__tmark;

/* One point of a (tf, dl) frontier. */
typedef struct rv__impact {
    uint32_t tf;
    uint32_t dl;
} rv__impact;

typedef struct rv__seg {
    uint32_t doc_base, doc_end; /* slots [doc_base, doc_end) */
    uint32_t n_dead;            /* of them, not live (deleted or purged) */
    size_t n_terms;             /* terms with postings here */
    uint32_t *term_ids;         /* n_terms, ascending */
    uint64_t *offsets;          /* n_terms + 1: postings of term_ids[i] */
    uint32_t *docs;             /* n_post */
    uint8_t *tfs;               /* n_post */
    uint64_t n_post;
    uint64_t n_over;    /* tf >= 255 */
    uint64_t *over_pos; /* ascending posting positions */
    uint32_t *over_tf;
    /* per posting, its place in the g table: dl * RV__GTF + tf when
    ** tf < RV__GTF and dl < RV__LTAB_MAX, else RV__CODE_ESCAPE -- so the
    ** weight of a posting is idf * gtab[code], read next to its slot (the
    ** document's length would be a random access away) */
    uint16_t *code;
    /* pruning: blocks of RV__BLOCK postings and their frontiers */
    uint64_t *block_off;  /* n_terms + 1: first block of each term */
    uint32_t *block_last; /* last slot of each block */
    uint64_t *imp_off;    /* n_blocks + 1: block b's impacts */
    rv__impact *imp;
    uint64_t *timp_off; /* n_terms + 1: each whole list's impacts */
    rv__impact *timp;
    /* per list longer than RV__TOP postings: the positions (from the
    ** list's start) of RV__TOP of its postings with the largest weights
    ** under a fixed BM25 (k1 1.2, b 0.75, the segment's mean length), best
    ** first -- documents whose weights under the current statistics give
    ** a lower bound of a query's k-th score before search starts */
    uint32_t *top_off; /* n_terms + 1 */
    uint32_t *top;
    /* forward lists, or NULL until needed: the term ids of slot
    ** doc_base + i are fwd_term[fwd_off[i] .. fwd_off[i + 1]) */
    uint64_t *fwd_off;
    uint32_t *fwd_term;
    /* when docs/tfs point into a loaded file image, it owns them */
    void *blob;
} rv__seg;

struct rv_bm25 {
    rv_analyzer_options an;
    rv_bm25_params par;
    /* dictionary */
    uint32_t n_terms;
    char *pool; /* term bytes, back to back */
    uint64_t pool_len, pool_cap;
    uint64_t *str_off; /* n_terms + 1 (capacity term_cap + 1) */
    uint32_t *hashes;  /* per term (capacity term_cap) */
    uint32_t term_cap;
    rv__slot *slots;    /* open addressing (see dict.c) */
    uint64_t slot_mask; /* capacity - 1 (power of two) */
    uint64_t *df;       /* per term: live documents containing it */
    rv__tmark *marks;   /* per term: scratch of rv_bm25_add */
    uint32_t doc_stamp, add_stamp;
    /* documents, by slot */
    uint32_t n_docs; /* slots in use */
    uint32_t doc_cap;
    uint32_t *doc_len;
    uint8_t *doc_state;
    uint64_t *dead;                           /* bit per slot: 1 = not live; one spare word
                                ** at the end (capacity doc_cap / 64 + 2) */
    uint64_t *dead_sum;                       /* bit per word of dead: 1 = it has a set bit
                                ** (capacity doc_cap / 4096 + 3) */
    int64_t *ext;                             /* caller id of each slot */
    uint64_t n_live, n_tombstoned, total_len; /* statistics: live documents */
    double avgdl;
    /* collection statistics (rv_bm25_set_collection_stats), or c_n == 0 and
    ** cdf NULL: N, the summed lengths and each term's df (by term id) of
    ** the collection this index is one shard of; idf and avgdl read them.
    ** Any change to the index drops them (rv__bm25_refresh). */
    uint64_t c_n, c_total_len;
    uint64_t *cdf;
    int64_t next_id; /* one past the largest id ever added */
    /* caller id -> latest slot with that id (slot + 1; 0: empty) */
    uint32_t *idmap;
    uint64_t idmap_mask; /* capacity - 1, or 0 with idmap NULL */
    uint64_t idmap_used;
    /* length norms: ltab[dl] for dl < ltab_n (capacity ltab_cap), and the
    ** weights without idf: gtab[dl * RV__GTF + tf] (tf < RV__GTF) */
    float *ltab;
    float *gtab;
    uint32_t ltab_n, ltab_cap;
    uint32_t n_codes; /* ltab_n * RV__GTF: codes below are valid */
    uint32_t max_dl;  /* longest document stored */
    /* postings */
    rv__seg **segs;
    size_t n_segs;
    /* a single search's scratch (search.c), kept between calls so that a
    ** search does not allocate and clear its buffers every time: taken by
    ** an atomic exchange (a concurrent search finds NULL and makes its own),
    ** put back when the slot is empty, freed by rv_bm25_free */
    _Atomic(void *) spare;
};

/* ---- weights: the one definition shared by search, bounds and explain */

/* Per-search constants of the weight function. */
typedef struct rv__wparams {
    rv_bm25_variant v;
    float k1, k1p1, delta;
} rv__wparams;

/* w(t, d) = idf * g(tf, norm) for tf >= 1: g under variant v, given the
** document's norm (K = k1 * B, or B for BM25L), and the term's idf (single
** precision).  Operations are ordered as bm25s orders them, so the Lucene
** weights agree with its bit for bit; every variant multiplies its idf in
** last, which is what lets the (tf, dl) -> g table below stand in for the
** formula exactly.  Inlined with a constant v, the switch folds away. */
static inline float rv__g_v(rv_bm25_variant v, const rv__wparams *wp, uint32_t tf, float norm) {
    float t = (float)tf;
    switch (v) {
    case RV_BM25_ATIRE:
        return (t * wp->k1p1) / (t + norm);
    case RV_BM25_L: {
        float c = t / norm;
        return (wp->k1p1 * (c + wp->delta)) / (wp->k1 + c + wp->delta);
    }
    case RV_BM25_PLUS:
        return (wp->k1p1 * t) / (norm + t) + wp->delta;
    default:
        return t / (norm + t);
    }
}

static inline float rv__weight(const rv__wparams *wp, float idf, uint32_t tf, float norm) {
    return idf * rv__g_v(wp->v, wp, tf, norm);
}

/* Bits [pos, pos + 64) of a bitmap over slots (which must have a word to
** spare past its last slot). */
static inline uint64_t rv__bits_at(const uint64_t *bm, uint32_t pos) {
    size_t w = pos >> 6;
    unsigned sh = pos & 63;
    return sh ? (bm[w] >> sh) | (bm[w + 1] << (64 - sh)) : bm[w];
}

/* Mark slot d not live (both levels of the bitmap). */
static inline void rv__mark_dead(rv_bm25 *ix, uint32_t d) {
    ix->dead[d >> 6] |= (uint64_t)1 << (d & 63);
    ix->dead_sum[d >> 12] |= (uint64_t)1 << ((d >> 6) & 63);
}

/* The length norm of a document of dl terms under the current statistics
** (rv__norm_compute is the formula; ltab caches it). */
static inline float rv__norm_compute(const rv_bm25 *ix, uint32_t dl) {
    const rv_bm25_params *p = &ix->par;
    double ratio = ix->avgdl > 0 ? (double)dl / ix->avgdl : 0.0;
    double B = (1.0 - p->b) + p->b * ratio;
    return (float)(p->variant == RV_BM25_L ? B : p->k1 * B);
}

static inline float rv__norm(const rv_bm25 *ix, uint32_t dl) {
    return dl < ix->ltab_n ? ix->ltab[dl] : rv__norm_compute(ix, dl);
}

/* w(t, d) of posting p of segment s for a term with the given idf. */
static inline float rv__seg_weight(const rv_bm25 *ix, const rv__wparams *wp, const rv__seg *s,
                                   uint64_t p, float idf);

/* g(tf, dl) under the current statistics and parameters: from the table
** gtab[dl * RV__GTF + tf] for tf < RV__GTF and cached lengths (the common
** case: one load instead of a division), else from the formula.  tf must
** be resolved (not the 255 escape). */
static inline float rv__g(const rv_bm25 *ix, const rv__wparams *wp, uint32_t tf, uint32_t dl) {
    if (RV__LIKELY(tf < RV__GTF && dl < ix->ltab_n)) return ix->gtab[(size_t)dl * RV__GTF + tf];
    return rv__g_v(wp->v, wp, tf, rv__norm(ix, dl));
}

/* idf of a term with document frequency df under the current N. */
double rv__idf(const rv_bm25 *ix, uint64_t df);

/* The df of term t the weights use: the collection's when collection
** statistics are set, else this index's. */
static inline uint64_t rv__stat_df(const rv_bm25 *ix, uint32_t t) {
    return ix->cdf ? ix->cdf[t] : ix->df[t];
}

/* The largest weight over n frontier points, inflated by RV__SLACK: an
** upper bound of w(t, d) over every posting the frontier summarises. */
static inline double rv__impact_bound(const rv_bm25 *ix, const rv__wparams *wp, float idf,
                                      const rv__impact *imp, uint64_t n) {
    float m = 0.0f;
    for (uint64_t i = 0; i < n; i++) {
        float w = idf * rv__g(ix, wp, imp[i].tf, imp[i].dl);
        if (w > m) m = w;
    }
    return (double)m * (1.0 + RV__SLACK);
}

/* tf of posting p of segment s (resolving the overflow escape). */
static inline uint32_t rv__seg_tf(const rv__seg *s, uint64_t p) {
    uint32_t tf = s->tfs[p];
    if (RV__LIKELY(tf != RV__TF_ESCAPE)) return tf;
    uint64_t lo = 0, hi = s->n_over;
    while (lo < hi) {
        uint64_t mid = (lo + hi) / 2;
        if (s->over_pos[mid] < p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (lo < s->n_over && s->over_pos[lo] == p) ? s->over_tf[lo] : RV__TF_ESCAPE;
}

static inline float rv__seg_weight(const rv_bm25 *ix, const rv__wparams *wp, const rv__seg *s,
                                   uint64_t p, float idf) {
    uint32_t code = s->code[p];
    if (RV__LIKELY(code < ix->n_codes)) return idf * ix->gtab[code];
    return idf * rv__g(ix, wp, rv__seg_tf(s, p), ix->doc_len[s->docs[p]]);
}

/* The code of a posting (see rv__seg). */
static inline uint16_t rv__code_of(uint32_t tf, uint32_t dl) {
    return (uint16_t)(tf < RV__GTF && dl < RV__LTAB_MAX ? dl * RV__GTF + tf : RV__CODE_ESCAPE);
}

/* Index of term t among the segment's terms, or SIZE_MAX. */
static inline size_t rv__seg_find(const rv__seg *s, uint32_t t) {
    size_t lo = 0, hi = s->n_terms;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->term_ids[mid] < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (lo < s->n_terms && s->term_ids[lo] == t) ? lo : SIZE_MAX;
}

/* dictionary (dict.c) */
uint32_t rv__hash_bytes(const char *s, size_t n);
int rv__dict_find(const rv_bm25 *ix, const char *s, size_t n, uint32_t h, uint32_t *id);
rv_status rv__dict_insert(rv_bm25 *ix, const char *s, size_t n, uint32_t h, uint32_t *id);
void rv__dict_truncate(rv_bm25 *ix, uint32_t n_terms);

/* caller ids (build.c) */
uint32_t rv__idmap_find(const rv_bm25 *ix, int64_t id);
rv_status rv__idmap_reserve(rv_bm25 *ix, uint64_t entries);
void rv__idmap_put(rv_bm25 *ix, uint32_t slot);

/* segments (build.c) */
void rv__seg_free(rv__seg *s);
rv_status rv__seg_finish(rv__seg *s, const uint32_t *doc_len);
void rv__bm25_refresh(rv_bm25 *ix);
rv_status rv__bm25_reserve_docs(rv_bm25 *ix, uint64_t n);
rv_status rv__bm25_reserve_ltab(rv_bm25 *ix, uint32_t max_dl);
uint64_t rv__bm25_memory(const rv_bm25 *ix);
void rv__wparams_of(const rv_bm25 *ix, rv__wparams *wp);

/* Free the spare search scratch of an index (scratch.c). */
void rv__bm25_spare_free(rv_bm25 *ix);

/* CRC-32C for the file format (io.c) lives in the file toolkit. */
#include "../core/binfile.h"

#endif /* ROWVOI_BM25_INTERNAL_H */
