/*
** rowvoi text analysis: UTF-8 normalisation, tokenizing, English stopwords
** and the English (Porter2 / Snowball) stemmer.
**
** An analyzer turns a text into index terms in five steps:
**
**   1. decode UTF-8 (policy RV_UTF8_STRICT: invalid input is an error naming
**      the byte offset; RV_UTF8_REPLACE: each maximal invalid sequence reads
**      as U+FFFD, which separates tokens like any other symbol);
**   2. split into tokens: a token is a maximal run of letters and digits
**      (Unicode general categories L* and N*); combining marks (M*) continue
**      a token; every other code point separates tokens.  Han ideographs and
**      Hiragana have no spaces between words, so each of them is a token of
**      its own (as Lucene's StandardTokenizer does);
**   3. normalise each token: simple Unicode lowercase (lowercase option);
**      strip accents from Latin letters (strip_accents option): precomposed
**      Latin letters fold to ASCII ("e" for U+00E9, "ss" for U+00DF, "o" for
**      U+00F8) and combining marks after a Latin letter are dropped.
**      Letters of other scripts keep their marks (Cyrillic U+0439 stays);
**   4. drop tokens whose length in code points, after normalisation, is
**      outside [min_token_len, max_token_len], then English stopwords
**      (stopwords option; matched on the normalised token);
**   5. stem with the English Snowball stemmer (stem option).
**
** The options are a plain struct, recorded with every index (see bm25.h) so a
** query is always analysed the way its index was.  RV_ANALYZER_VERSION
** changes whenever any step above would give a different term for the same
** input and options; indexes record it too.
**
** Thread-safety: every function here is pure (no shared state); call them
** from any number of threads.
*/
#ifndef ROWVOI_TEXT_H
#define ROWVOI_TEXT_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Version of the analysis pipeline (tokenizer, tables, stopwords, stemmer). */
#define RV_ANALYZER_VERSION 1

/* Largest allowed max_token_len, in code points. */
#define RV_ANALYZER_MAX_TOKEN_LEN 255

/* What to do with bytes that are not valid UTF-8. */
typedef enum rv_utf8_policy {
    RV_UTF8_STRICT = 0, /* RV_E_INVALID_ARG naming the byte offset */
    RV_UTF8_REPLACE = 1 /* read each maximal invalid sequence as U+FFFD */
} rv_utf8_policy;

/*
** Analyzer settings.  Initialise with rv_analyzer_options_init, then change
** what you need.  Flags are 0 or 1.
*/
typedef struct rv_analyzer_options {
    int lowercase;          /* 1: simple Unicode lowercase */
    int strip_accents;      /* 1: fold accented Latin letters to ASCII */
    int stopwords;          /* 1: drop English stopwords */
    int stem;               /* 1: English Snowball stemmer */
    uint32_t min_token_len; /* code points, >= 1 (default 1) */
    uint32_t max_token_len; /* code points, default 64, <= RV_ANALYZER_MAX_TOKEN_LEN (255) */
    rv_utf8_policy utf8;    /* default RV_UTF8_STRICT */
} rv_analyzer_options;

/* Fill *opt with the defaults: everything on, lengths 1..64, strict UTF-8.
** A NULL opt does nothing.  Since: 0.1 */
RV_API void rv_analyzer_options_init(rv_analyzer_options *opt /* OUT */);

/*
** Check options.  Returns RV_OK; RV_E_INVALID_ARG (naming the field) for a
** NULL pointer, a flag other than 0/1, an unknown UTF-8 policy,
** min_token_len == 0, min > max, or max > RV_ANALYZER_MAX_TOKEN_LEN.
** Since: 0.1
*/
RV_API rv_status rv_analyzer_options_check(const rv_analyzer_options *opt);

/*
** Analyse one text of len bytes (not NUL-terminated; NULL allowed when len
** is 0).  Writes the terms one after another into buf (UTF-8, no
** separators) and the end offset of term i into ends[i]; term i occupies
** buf[ends[i-1] .. ends[i]) with ends[-1] = 0.
** Capacity: buf_cap >= 2 * len and ends_cap >= len always suffice.  When a
** buffer is too small, returns RV_E_SHAPE with *n_tokens and *buf_len set to
** the sizes needed (nothing useful is written); call again.
** Returns RV_OK with *n_tokens terms and *buf_len bytes; RV_E_INVALID_ARG for
** bad options, a NULL opt, n_tokens or buf_len, a NULL text, buf or ends
** with a nonzero len, buf_cap or ends_cap, or (strict policy) invalid
** UTF-8 -- the message names the byte offset; RV_E_RANGE for a len,
** buf_cap or ends_cap no array can hold (core.h "Sizes").
** Ownership: borrows everything for the call.
** Since: 0.1
*/
RV_API rv_status rv_analyze(const rv_analyzer_options *opt, const char *text, size_t len,
                            char *buf /* OUT */, size_t buf_cap, size_t *ends /* OUT */,
                            size_t ends_cap, size_t *n_tokens /* OUT */, size_t *buf_len /* OUT */);

/*
** Stem one word with the English Snowball stemmer (Porter2, as in the
** Snowball project's english.sbl, version 3).  The word is taken as is: no
** lowercasing or splitting (the stemmer treats characters other than a-z
** and the apostrophe as consonants).  The stem is never longer than the
** word, so out_cap >= len suffices; RV_E_SHAPE with *out_len = the size
** needed otherwise.  Returns RV_E_INVALID_ARG for invalid UTF-8 (naming the
** byte offset), a NULL out_len, or a NULL word or out with a nonzero len or
** out_cap; RV_E_RANGE when the word is longer than 65535 code points or
** len or out_cap is more than any array holds (core.h "Sizes");
** RV_E_NOMEM.
** Since: 0.1
*/
RV_API rv_status rv_stem_english(const char *word, size_t len, char *out /* OUT */, size_t out_cap,
                                 size_t *out_len /* OUT */);

/*
** Is the word (UTF-8, exact bytes, already lowercase) in the English
** stopword list?  Returns 1 or 0; 0 for NULL or for any len longer than
** the longest stopword (so no byte past those is read).
** Since: 0.1
*/
RV_API int rv_is_stopword(const char *word, size_t len);

/* Number of stopwords, and the i-th (NUL-terminated, static); NULL when
** i >= rv_stopword_count().  Since: 0.1 */
RV_API size_t rv_stopword_count(void);
RV_API const char *rv_stopword(size_t i);

/* Unicode version of the character tables, e.g. "14.0.0" (static).  Since: 0.1 */
RV_API const char *rv_unicode_version(void);

#ifdef __cplusplus
}
#endif

#endif /* ROWVOI_TEXT_H */
