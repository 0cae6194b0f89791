/*
** The hashing embedder (include/rowvoi/hashing.h).
**
** Self-contained on purpose: its tokenizer and lowercasing live here, so
** the vectors of an embedder id never change when the text analyzer of the
** lexical index is tuned.
*/
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../internal.h"
#include "../core/parallel.h"

#define RV__HASH_ID_CAP 128

struct rv_hasher {
    rv_hasher_options opt;
    char id[RV__HASH_ID_CAP];
};

/* Feature kinds, mixed into the seed so equal strings of different kinds
** land apart. */
#define RV__TAG_WORD  0x776f7264u /* "word" */
#define RV__TAG_CHAR  0x63686172u /* "char" */
#define RV__TAG_NGRAM 0x6e67726du /* "ngrm" */

/* Hash n code points (FNV-1a over 32-bit units, then a full avalanche). */
static inline uint64_t rv__hash_cps(const uint32_t *c, size_t n, uint64_t seed) {
    uint64_t h = 0xcbf29ce484222325ULL ^ rv__mix64(seed + n);
    for (size_t i = 0; i < n; i++) {
        h ^= c[i];
        h *= 0x100000001b3ULL;
    }
    return rv__mix64(h);
}

void rv_hasher_options_init(rv_hasher_options *opt) {
    if (!opt) return;
    memset(opt, 0, sizeof *opt);
    opt->dim = 384;
    opt->word_ngrams = 2;
    opt->char_min = 3;
    opt->char_max = 5;
    opt->char_weight = 1.0f;
    opt->seed = 0;
}

rv_status rv_hasher_create(const rv_hasher_options *opt, rv_hasher **out) {
    RV__NOT_NULL(out, "out");
    *out = NULL;
    RV__NOT_NULL(opt, "opt");
    if (opt->dim == 0 || opt->dim > RV_HASHER_MAX_DIM)
        return rv__error(RV_E_RANGE, "dim = %u: must be in 1 .. %u", (unsigned)opt->dim,
                         (unsigned)RV_HASHER_MAX_DIM);
    if (opt->word_ngrams > RV_HASHER_MAX_WORD_NGRAMS)
        return rv__error(RV_E_RANGE, "word_ngrams = %u: must be in 0 .. %u",
                         (unsigned)opt->word_ngrams, RV_HASHER_MAX_WORD_NGRAMS);
    if (opt->char_min > 0 &&
        (opt->char_max < opt->char_min || opt->char_max > RV_HASHER_MAX_CHAR_NGRAM))
        return rv__error(RV_E_RANGE, "char n-grams %u .. %u: need char_min <= char_max <= %u",
                         (unsigned)opt->char_min, (unsigned)opt->char_max,
                         RV_HASHER_MAX_CHAR_NGRAM);
    if (!isfinite(opt->char_weight) || opt->char_weight < 0)
        return rv__error(RV_E_INVALID_ARG, "char_weight = %g: must be finite and >= 0",
                         (double)opt->char_weight);
    int chars = opt->char_min > 0 && opt->char_weight > 0;
    if (opt->word_ngrams == 0 && !chars)
        return rv__error(RV_E_INVALID_ARG,
                         "no features: set word_ngrams >= 1 or character n-grams");
    rv_hasher *h = (rv_hasher *)rv__calloc(1, sizeof *h);
    if (!h) return rv__nomem("the hasher");
    h->opt = *opt;
    if (!chars) {
        h->opt.char_min = h->opt.char_max = 0;
        h->opt.char_weight = 0;
    }
    snprintf(h->id, sizeof h->id, "hash-v1:dim=%u,words=1-%u,chars=%u-%u,cw=%g,seed=%llu",
             (unsigned)h->opt.dim, (unsigned)h->opt.word_ngrams, (unsigned)h->opt.char_min,
             (unsigned)h->opt.char_max, (double)h->opt.char_weight,
             (unsigned long long)h->opt.seed);
    *out = h;
    return RV_OK;
}

void rv_hasher_free(rv_hasher *h) {
    rv__free(h);
}

uint32_t rv_hasher_dim(const rv_hasher *h) {
    return h ? h->opt.dim : 0;
}

const char *rv_hasher_id(const rv_hasher *h) {
    return h ? h->id : "";
}

/* ---------------------------------------------------------- characters */

/* Decode one UTF-8 code point at s[*i] (< len).  Returns it and advances
** *i, or returns UINT32_MAX for an invalid sequence (overlong forms,
** surrogates and values above U+10FFFF are invalid). */
static uint32_t rv__utf8_next(const unsigned char *s, size_t len, size_t *i) {
    unsigned char c = s[*i];
    if (c < 0x80) {
        (*i)++;
        return c;
    }
    size_t n;
    uint32_t cp, min;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 1;
        cp = c & 0x1fu;
        min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 2;
        cp = c & 0x0fu;
        min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 3;
        cp = c & 0x07u;
        min = 0x10000;
    } else
        return UINT32_MAX;
    if (len - *i <= n) return UINT32_MAX;
    for (size_t k = 1; k <= n; k++) {
        unsigned char t = s[*i + k];
        if ((t & 0xc0u) != 0x80u) return UINT32_MAX;
        cp = (cp << 6) | (t & 0x3fu);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return UINT32_MAX;
    *i += n + 1;
    return cp;
}

/* Is cp part of a word?  ASCII letters and digits; above U+007F everything
** except punctuation, symbol and space blocks. */
static int rv__is_word_char(uint32_t cp) {
    if (cp < 0x80)
        return (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z');
    if (cp <= 0xbf) return cp == 0xaa || cp == 0xb5 || cp == 0xba;
    if (cp == 0xd7 || cp == 0xf7) return 0;
    if (cp >= 0x2000 && cp <= 0x2bff) return 0; /* punctuation, symbols, arrows */
    if (cp >= 0x3000 && cp <= 0x303f) return 0; /* CJK punctuation */
    if (cp >= 0xfe30 && cp <= 0xfe4f) return 0; /* CJK compatibility forms */
    if (cp >= 0xff00 && cp <= 0xff0f) return 0; /* fullwidth punctuation */
    if (cp >= 0xff1a && cp <= 0xff20) return 0;
    if (cp >= 0xff3b && cp <= 0xff40) return 0;
    if (cp >= 0xff5b && cp <= 0xff65) return 0;
    if (cp >= 0x1f000 && cp <= 0x1faff) return 0; /* emoji and pictographs */
    if (cp == 0xfeff) return 0;                   /* byte order mark */
    return 1;
}

static uint32_t rv__to_lower(uint32_t cp) {
    if (cp < 0x80) return (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
    if (cp >= 0xc0 && cp <= 0xde && cp != 0xd7) return cp + 32;
    if (cp >= 0x100 && cp <= 0x137) return cp | 1u;
    if (cp >= 0x139 && cp <= 0x148) return (cp & 1u) ? cp + 1 : cp;
    if (cp >= 0x14a && cp <= 0x177) return cp | 1u;
    if (cp == 0x178) return 0xff;
    if (cp >= 0x179 && cp <= 0x17e) return (cp & 1u) ? cp + 1 : cp;
    if (cp >= 0x391 && cp <= 0x3a9 && cp != 0x3a2) return cp + 32;
    if (cp >= 0x410 && cp <= 0x42f) return cp + 32;
    if (cp >= 0x400 && cp <= 0x40f) return cp + 80;
    return cp;
}

/* ------------------------------------------------------------ embedding */

static inline void rv__add_feature(float *out, uint32_t dim, uint64_t h, float w) {
    uint32_t b = (uint32_t)((h & 0x7fffffffffffffffULL) % dim);
    out[b] += (h >> 63) ? -w : w;
}

/* Features of one word held in cps[1 .. m] (cps[0] and cps[m+1] are free
** for the boundary marks).  prev[0..2] hold the hashes of the previous
** words (most recent first), n_prev how many there are. */
static void rv__word_features(const rv_hasher *hs, uint32_t *cps, size_t m, uint64_t *prev,
                              unsigned *n_prev, float *out) {
    const rv_hasher_options *o = &hs->opt;
    uint64_t hw = rv__hash_cps(cps + 1, m, o->seed ^ RV__TAG_WORD);
    if (o->word_ngrams >= 1) rv__add_feature(out, o->dim, hw, 1.0f);
    uint64_t g = hw;
    for (unsigned n = 2; n <= o->word_ngrams && n - 2 < *n_prev; n++) {
        g = rv__mix64(g ^ (prev[n - 2] * 0x9E3779B97F4A7C15ULL) ^ (o->seed + RV__TAG_NGRAM + n));
        rv__add_feature(out, o->dim, g, 1.0f);
    }
    prev[2] = prev[1];
    prev[1] = prev[0];
    prev[0] = hw;
    if (*n_prev < 3) (*n_prev)++;
    if (o->char_min == 0) return;
    size_t padded = m + 2, count = 0;
    cps[0] = '<';
    cps[m + 1] = '>';
    for (size_t n = o->char_min; n <= o->char_max && n <= padded; n++) count += padded - n + 1;
    if (count == 0) return;
    float w = (float)((double)o->char_weight / sqrt((double)count));
    for (size_t n = o->char_min; n <= o->char_max && n <= padded; n++) {
        uint64_t seed = o->seed ^ RV__TAG_CHAR ^ ((uint64_t)n << 40);
        for (size_t s = 0; s + n <= padded; s++)
            rv__add_feature(out, o->dim, rv__hash_cps(cps + s, n, seed), w);
    }
}

/* Embed with a caller-provided scratch buffer of at least len + 2 code
** points.  Returns 0, or 1 + the byte offset of invalid UTF-8. */
static size_t rv__embed_one(const rv_hasher *hs, const unsigned char *s, size_t len, uint32_t *cps,
                            float *out) {
    uint32_t dim = hs->opt.dim;
    memset(out, 0, dim * sizeof *out);
    uint64_t prev[3] = {0, 0, 0};
    unsigned n_prev = 0;
    size_t m = 0, i = 0;
    while (i < len) {
        size_t at = i;
        uint32_t cp = rv__utf8_next(s, len, &i);
        if (cp == UINT32_MAX) {
            memset(out, 0, dim * sizeof *out);
            return at + 1;
        }
        if (rv__is_word_char(cp)) {
            cps[1 + m++] = rv__to_lower(cp);
            continue;
        }
        if (m) rv__word_features(hs, cps, m, prev, &n_prev, out);
        m = 0;
    }
    if (m) rv__word_features(hs, cps, m, prev, &n_prev, out);
    double nn = 0;
    for (uint32_t j = 0; j < dim; j++) nn += (double)out[j] * out[j];
    if (nn > 0) {
        float inv = (float)(1.0 / sqrt(nn));
        for (uint32_t j = 0; j < dim; j++) out[j] *= inv;
    }
    return 0;
}

rv_status rv_hasher_embed(const rv_hasher *h, const char *text, size_t len, float *out) {
    RV__NOT_NULL(h, "h (the hasher)");
    RV__NOT_NULL(out, "out");
    if (!text && len) return rv__error(RV_E_INVALID_ARG, "text is NULL but len = %zu", len);
    RV__CHECK_SIZE(len, 1, "len");
    if (len > SIZE_MAX / sizeof(uint32_t) - 2)
        return rv__error(RV_E_RANGE, "text of %zu bytes is too long", len);
    uint32_t *cps = (uint32_t *)rv__malloc((len + 2) * sizeof *cps);
    if (!cps) {
        memset(out, 0, h->opt.dim * sizeof *out);
        return rv__nomem("the word buffer");
    }
    size_t bad = rv__embed_one(h, (const unsigned char *)text, len, cps, out);
    rv__free(cps);
    if (bad) return rv__error(RV_E_INVALID_ARG, "text is not valid UTF-8 at byte %zu", bad - 1);
    return RV_OK;
}

typedef struct rv__hash_job {
    const rv_hasher *h;
    const unsigned char *data;
    const uint64_t *offsets;
    size_t n;
    float *out;
    uint32_t *scratch; /* per thread: max_len + 2 code points */
    size_t scratch_len;
    unsigned T;
    size_t *bad_text; /* per thread: first failing text index or SIZE_MAX */
    size_t *bad_byte;
} rv__hash_job;

/* Worker t embeds its contiguous block of texts (rv__worker_fn). */
static void rv__hash_block(void *ctx, unsigned t) {
    rv__hash_job *jb = (rv__hash_job *)ctx;
    uint32_t *cps = jb->scratch + (size_t)t * jb->scratch_len;
    uint32_t dim = jb->h->opt.dim;
    size_t a, b;
    rv__parallel_block(jb->n, jb->T, t, &a, &b);
    for (size_t i = a; i < b; i++) {
        size_t bad =
            rv__embed_one(jb->h, jb->data + jb->offsets[i],
                          (size_t)(jb->offsets[i + 1] - jb->offsets[i]), cps, jb->out + i * dim);
        if (bad && jb->bad_text[t] == SIZE_MAX) {
            jb->bad_text[t] = i;
            jb->bad_byte[t] = bad - 1;
        }
    }
}

rv_status rv_hasher_embed_batch(const rv_hasher *h, const char *data, const uint64_t *offsets,
                                size_t n, uint32_t n_threads, float *out) {
    RV__NOT_NULL(h, "h (the hasher)");
    RV__CHECK_SIZE2(n, h->opt.dim, sizeof *out, "n", "dim");
    if (n == 0) return RV_OK;
    RV__NOT_NULL(offsets, "offsets");
    RV__NOT_NULL(out, "out");
    if (!data && (offsets[0] || offsets[n]))
        return rv__error(RV_E_INVALID_ARG, "data is NULL but offsets[%zu] = %llu", n,
                         (unsigned long long)offsets[n]);
    size_t max_len = 0;
    for (size_t i = 0; i < n; i++) {
        if (offsets[i + 1] < offsets[i])
            return rv__error(RV_E_INVALID_ARG,
                             "offsets[%zu] = %llu < offsets[%zu] = %llu: offsets "
                             "must not decrease",
                             i + 1, (unsigned long long)offsets[i + 1], i,
                             (unsigned long long)offsets[i]);
        size_t l = (size_t)(offsets[i + 1] - offsets[i]);
        if (l > max_len) max_len = l;
    }
    /* work: bytes of text; below 64 KiB threads cost more than they save */
    unsigned T = rv__threads_for(n_threads, n, (double)(offsets[n] - offsets[0]), 65536.0);
    size_t slen = max_len + 2;
    if (slen > SIZE_MAX / sizeof(uint32_t) / (size_t)T)
        return rv__error(RV_E_RANGE, "texts are too long");
    uint32_t *scratch = (uint32_t *)rv__malloc((size_t)T * slen * sizeof *scratch);
    size_t *bad_text = (size_t *)rv__malloc((size_t)T * sizeof *bad_text);
    size_t *bad_byte = (size_t *)rv__malloc((size_t)T * sizeof *bad_byte);
    if (!scratch || !bad_text || !bad_byte) {
        rv__free(scratch);
        rv__free(bad_text);
        rv__free(bad_byte);
        return rv__nomem("the embedding buffers");
    }
    for (unsigned t = 0; t < T; t++) bad_text[t] = SIZE_MAX;
    rv__hash_job jb = {
        h, (const unsigned char *)data, offsets, n, out, scratch, slen, T, bad_text, bad_byte};
    rv__parallel_run(T, rv__hash_block, &jb);
    size_t first = SIZE_MAX, byte = 0;
    for (unsigned t = 0; t < T; t++)
        if (bad_text[t] < first) {
            first = bad_text[t];
            byte = bad_byte[t];
        }
    rv__free(scratch);
    rv__free(bad_text);
    rv__free(bad_byte);
    if (first != SIZE_MAX)
        return rv__error(RV_E_INVALID_ARG, "texts[%zu] is not valid UTF-8 at byte %zu", first,
                         byte);
    return RV_OK;
}
