/*
** Internals of the BM25 index (include/rowvoi/bm25.h).
**
** Layout.  One dictionary (term bytes -> dense term id, open addressing)
** and a list of segments.  A segment holds the posting lists of a
** contiguous range of document ids, so walking the segments in order walks
** documents in increasing id, which is what document-at-a-time search with
** id tie-breaking needs.  Within a segment, the terms present are listed in
** ascending term id (binary-searched at query time) and each posting list
** is two parallel arrays: absolute document ids (uint32, ascending) and
** term frequencies (uint8; 255 means "look it up in the overflow table",
** which holds the rare tf >= 255 sorted by posting position).
**
** Derived data, recomputed whenever the statistics or parameters change
** (rv__bm25_refresh): idf per term, the length normalisation per document,
** the single-precision weight w(t, d) of every posting (so search streams
** ids and weights instead of looking up lengths and dividing), and per
** block of RV__BLOCK postings its last document id and largest weight.
**
** Segments are immutable once built.  Adding documents builds a new
** segment; neighbours of similar size are merged (a logarithmic policy), so
** a long run of small additions keeps O(log n) segments.
*/
#ifndef ROWVOI_BM25_INTERNAL_H
#define ROWVOI_BM25_INTERNAL_H

#include "../internal.h"
#include "../text/text_internal.h"

#define RV__BLOCK 128u
#define RV__TF_ESCAPE 255u

/* A dictionary slot: the term's id + 1 (0: empty), its hash with the
** length folded into the low byte, and its first 8 bytes -- so most
** lookups settle in the slot without touching the term arrays. */
typedef struct rv__slot {
    uint64_t head;
    uint32_t id1;
    uint32_t hash_len;
} rv__slot;

typedef struct rv__seg {
    uint32_t doc_base, doc_end; /* documents [doc_base, doc_end) */
    size_t n_terms;             /* terms with postings here */
    uint32_t *term_ids;         /* n_terms, ascending */
    uint64_t *offsets;          /* n_terms + 1: postings of term_ids[i] */
    uint32_t *docs;             /* n_post */
    uint8_t *tfs;               /* n_post */
    uint64_t n_post;
    uint64_t n_over;            /* tf >= 255 */
    uint64_t *over_pos;         /* ascending posting positions */
    uint32_t *over_tf;
    /* derived */
    float *w;                   /* n_post: w(t, d) of each posting */
    uint64_t *block_off;        /* n_terms + 1: first block of each term */
    uint32_t *block_last;       /* last doc of each block */
    float *block_max;           /* largest w(t, d) of each block */
    float *term_max;            /* n_terms: largest w(t, d) of the list */
    /* when docs/tfs point into a loaded file image, it owns them */
    void *blob;
} rv__seg;

struct rv_bm25 {
    rv_analyzer_options an;
    rv_bm25_params par;
    /* dictionary */
    uint32_t n_terms;
    char *pool;                 /* term bytes, back to back */
    uint64_t pool_len, pool_cap;
    uint64_t *str_off;          /* n_terms + 1 (capacity term_cap + 1) */
    uint32_t *hashes;           /* per term (capacity term_cap) */
    uint32_t term_cap;
    rv__slot *slots;            /* open addressing (see dict.c) */
    uint64_t slot_mask;         /* capacity - 1 (power of two) */
    uint64_t *df;               /* per term (capacity term_cap) */
    double *idf;                /* per term (capacity term_cap) */
    float *idf32;               /* per term: idf in single precision */
    /* documents */
    uint32_t n_docs;
    uint32_t doc_cap;
    uint32_t *doc_len;
    uint8_t *doc_state;
    float *norm;                /* K = k1 * B (or B for BM25L) per document */
    uint64_t n_stats_docs, total_len, n_live, n_tombstoned;
    double avgdl;
    /* postings */
    rv__seg **segs;
    size_t n_segs;
};

/* ---- weights: the one definition shared by search, bounds and explain */

/* Per-search constants of the weight function. */
typedef struct rv__wparams {
    rv_bm25_variant v;
    float k1, k1p1, delta;
} rv__wparams;

/* w(t, d) for tf >= 1, given the term's idf (single precision) and the
** document's norm (K = k1 * B, or B for BM25L).  Operations are ordered as
** bm25s orders them, so the Lucene weights agree with its bit for bit. */
static inline float rv__weight(const rv__wparams *wp, float idf, uint32_t tf, float norm) {
    float t = (float)tf;
    switch (wp->v) {
    case RV_BM25_ATIRE:
        return idf * ((t * wp->k1p1) / (t + norm));
    case RV_BM25_L: {
        float c = t / norm;
        return idf * ((wp->k1p1 * (c + wp->delta)) / (wp->k1 + c + wp->delta));
    }
    case RV_BM25_PLUS:
        return idf * ((wp->k1p1 * t) / (norm + t) + wp->delta);
    default:
        return idf * (t / (norm + t));
    }
}

/* tf of posting p of segment s (resolving the overflow escape). */
static inline uint32_t rv__seg_tf(const rv__seg *s, uint64_t p) {
    uint32_t tf = s->tfs[p];
    if (RV__LIKELY(tf != RV__TF_ESCAPE)) return tf;
    uint64_t lo = 0, hi = s->n_over;
    while (lo < hi) {
        uint64_t mid = (lo + hi) / 2;
        if (s->over_pos[mid] < p) lo = mid + 1;
        else hi = mid;
    }
    return (lo < s->n_over && s->over_pos[lo] == p) ? s->over_tf[lo] : RV__TF_ESCAPE;
}

/* Index of term t among the segment's terms, or SIZE_MAX. */
static inline size_t rv__seg_find(const rv__seg *s, uint32_t t) {
    size_t lo = 0, hi = s->n_terms;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->term_ids[mid] < t) lo = mid + 1;
        else hi = mid;
    }
    return (lo < s->n_terms && s->term_ids[lo] == t) ? lo : SIZE_MAX;
}

/* dictionary (dict.c) */
uint32_t rv__hash_bytes(const char *s, size_t n);
int rv__dict_find(const rv_bm25 *ix, const char *s, size_t n, uint32_t h, uint32_t *id);
rv_status rv__dict_insert(rv_bm25 *ix, const char *s, size_t n, uint32_t h, uint32_t *id);
void rv__dict_truncate(rv_bm25 *ix, uint32_t n_terms);

/* segments (build.c) */
void rv__seg_free(rv__seg *s);
rv_status rv__seg_derive_alloc(rv__seg *s);
rv_status rv__bm25_refresh(rv_bm25 *ix);
rv_status rv__bm25_reserve_docs(rv_bm25 *ix, uint64_t n);
uint64_t rv__bm25_memory(const rv_bm25 *ix);
void rv__wparams_of(const rv_bm25 *ix, rv__wparams *wp);

/* CRC-32C (Castagnoli), slicing by 8, for the file format (io.c).  The
** table is built by the caller (on the stack: no global state). */
typedef struct { uint32_t t[8][256]; } rv__crc_table;
void rv__crc32c_init(rv__crc_table *tab);
uint32_t rv__crc32c(const rv__crc_table *tab, uint32_t crc, const void *data, size_t n);

#endif /* ROWVOI_BM25_INTERNAL_H */
