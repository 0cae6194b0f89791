/*
** Internals of text analysis shared by src/text and src/lexical.
*/
#ifndef ROWVOI_TEXT_INTERNAL_H
#define ROWVOI_TEXT_INTERNAL_H

#include "../internal.h"

/* Decode one code point from s[*pos..len).  Returns 1 and advances *pos on
** success; returns 0 on an invalid sequence and advances *pos past its
** maximal invalid subpart (at least one byte), as the Unicode standard's
** "U+FFFD substitution of maximal subparts" practice does. */
int rv__utf8_next(const unsigned char *s, size_t len, size_t *pos, uint32_t *cp);

/* Encode cp (valid scalar value) into out (>= 4 bytes); returns bytes. */
size_t rv__utf8_put(uint32_t cp, char *out);

/* Stem w[0..*n) in place (code points); *n gets the new length (never
** larger).  Works for any length; no allocation. */
void rv__stem_english(uint32_t *w, size_t *n);

/* Stopword test on code points. */
int rv__is_stopword_cp(const uint32_t *w, size_t n);

/*
** Streaming analysis: calls fn(ctx, term, term_len) for each term in order.
** A non-OK status from fn stops the analysis and is returned.  Errors:
** RV_E_INVALID_ARG for invalid UTF-8 under the strict policy: the message
** names the byte offset, which is also stored in *bad_offset (may be NULL)
** so a caller can name the document too.  Options must have been checked.
*/
typedef rv_status (*rv__term_fn)(void *ctx, const char *term, size_t len);
rv_status rv__analyze_each(const rv_analyzer_options *opt, const char *text, size_t len,
                           rv__term_fn fn, void *ctx, size_t *bad_offset);

#endif /* ROWVOI_TEXT_INTERNAL_H */
