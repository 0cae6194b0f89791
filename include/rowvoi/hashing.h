/*
** rowvoi hashing embedder: text -> dense vector by feature hashing, with no
** model.
**
** Text is read as UTF-8 and cut into words: maximal runs of letters and
** digits (ASCII alphanumerics, and every code point from U+0080 up except
** the Latin-1 and general punctuation, symbol and space blocks).  Words are
** lowercased (ASCII, Latin-1, Latin Extended-A, Greek and Cyrillic).  This
** tokenizer is the embedder's own and deliberately simple, so the vectors
** depend on nothing but these settings.
**
** Features of a text:
**   - word n-grams for n = 1 .. word_ngrams (weight 1 each);
**   - character n-grams for n = char_min .. char_max of each word wrapped
**     in '<' and '>' ("<cat>" gives "<ca", "cat", "at>" for n = 3); each
**     of a word's c n-grams weighs char_weight / sqrt(c), so the n-grams of
**     any word together have the L2 weight char_weight of one word.
** Each feature hashes (64-bit, seeded) to a dimension and a sign; the
** signed weights are summed and the vector is L2-normalised.  A text with
** no words gives the zero vector.
**
** Determinism: the same settings and text give bit-identical vectors on
** every platform and for any thread count.  rv_hasher_id names the
** settings ("hash-v1:dim=384,words=1-2,chars=3-5,cw=1,seed=0"), so vectors
** of different settings are never mixed.
**
** Thread-safety: a hasher is immutable; any number of threads may embed
** with it at once.
*/
#ifndef ROWVOI_HASHING_H
#define ROWVOI_HASHING_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rv_hasher rv_hasher;

#define RV_HASHER_MAX_DIM         (1u << 24)
#define RV_HASHER_MAX_WORD_NGRAMS 3u
#define RV_HASHER_MAX_CHAR_NGRAM  16u

typedef struct rv_hasher_options {
    uint32_t dim;         /* 1 .. RV_HASHER_MAX_DIM (default 384) */
    uint32_t word_ngrams; /* 0 .. 3: longest word n-gram (default 2) */
    uint32_t char_min;    /* shortest character n-gram, 0 = none (default 3) */
    uint32_t char_max;    /* longest, char_min .. 16 (default 5) */
    float char_weight;    /* total weight of one word's character n-grams,
                              finite and >= 0 (default 1) */
    uint64_t seed;        /* hash seed (default 0) */
} rv_hasher_options;

/* Fill *opt with the defaults.  A NULL opt does nothing.  Since: 0.1 */
RV_API void rv_hasher_options_init(rv_hasher_options *opt /* OUT */);

/*
** Create a hasher.                                     CONSTRUCTOR: rv_hasher
** Returns RV_OK and *out; RV_E_RANGE for dim outside 1 .. RV_HASHER_MAX_DIM,
** word_ngrams > 3, char_max > 16 or char_min > char_max (with char_min > 0);
** RV_E_INVALID_ARG for a NULL pointer, a negative or non-finite
** char_weight, or settings with no features at all; RV_E_NOMEM.
** Since: 0.1
*/
RV_API rv_status rv_hasher_create(const rv_hasher_options *opt, rv_hasher **out /* OUT */);

/* Free a hasher.  NULL is a no-op.  Since: 0.1 */
RV_API void rv_hasher_free(rv_hasher *h);

/* Output dimension (0 for NULL).  Since: 0.1 */
RV_API uint32_t rv_hasher_dim(const rv_hasher *h);

/* The embedder id naming every setting.  Owned by the hasher; valid until
** rv_hasher_free.  "" for NULL.  Since: 0.1 */
RV_API const char *rv_hasher_id(const rv_hasher *h);

/*
** Embed one text of len bytes into out (dim floats).     METHOD: rv_hasher
** Returns RV_OK; RV_E_INVALID_ARG for NULL pointers (text may be NULL when
** len == 0) or bytes that are not valid UTF-8 (naming the byte offset);
** RV_E_RANGE for a len no array can hold (core.h "Sizes"); RV_E_NOMEM.
** out is zero on failure (untouched for a NULL argument or a bad len).
** Since: 0.1
*/
RV_API rv_status rv_hasher_embed(const rv_hasher *h, const char *text, size_t len,
                                 float *out /* OUT */);

/*
** Embed n texts stored back to back: text i is data[offsets[i] ..
** offsets[i+1]) (offsets has n+1 non-decreasing entries).  Writes n * dim
** floats into out.  n_threads: see core.h "Threads" (0: all cores, one
** below 64 KiB of text); the output does not depend on it.
** Returns RV_OK (nothing is read when n == 0: offsets and out may be NULL
** then); RV_E_INVALID_ARG for NULL pointers (data may be NULL when every
** text is empty and offsets start at 0), decreasing offsets, or invalid
** UTF-8 (naming the first bad text and byte); RV_E_RANGE for an n * dim no
** array can hold (core.h "Sizes"); RV_E_NOMEM.           METHOD: rv_hasher
** Since: 0.1
*/
RV_API rv_status rv_hasher_embed_batch(const rv_hasher *h, const char *data,
                                       const uint64_t *offsets, size_t n, uint32_t n_threads,
                                       float *out /* OUT */);

#ifdef __cplusplus
}
#endif

#endif /* ROWVOI_HASHING_H */
