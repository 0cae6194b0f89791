/*
** Fuzz target for text analysis.  The first input byte picks the analyzer
** options (each flag, the UTF-8 policy, token lengths); the rest is the
** text.  Checks: strict mode accepts exactly the valid UTF-8 inputs; every
** term is non-empty valid UTF-8 within the length limits (stemming only
** shortens); the capacity protocol reports the sizes it then fills; the
** stemmer never lengthens a word.  tests/c/test_fuzz_lexical.c replays it.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rowvoi.h"

#define FZT_CHECK(cond)                                                       \
    do {                                                                      \
        if (!(cond)) {                                                        \
            fprintf(stderr, "fuzz invariant failed: %s (%s:%d)\n", #cond,     \
                    __FILE__, __LINE__);                                      \
            abort();                                                          \
        }                                                                     \
    } while (0)

/* Independent UTF-8 validity check; counts code points into *n. */
static int fzt_valid_utf8(const uint8_t *s, size_t len, size_t *n) {
    size_t i = 0, count = 0;
    while (i < len) {
        uint8_t c = s[i];
        size_t k;
        uint32_t v;
        if (c < 0x80) { i++; count++; continue; }
        if (c >= 0xC2 && c <= 0xDF) { k = 1; v = c & 0x1F; }
        else if (c >= 0xE0 && c <= 0xEF) { k = 2; v = c & 0x0F; }
        else if (c >= 0xF0 && c <= 0xF4) { k = 3; v = c & 0x07; }
        else return 0;
        for (size_t j = 1; j <= k; j++) {
            if (i + j >= len || (s[i + j] & 0xC0) != 0x80) return 0;
            v = (v << 6) | (s[i + j] & 0x3F);
        }
        if ((k == 2 && v < 0x800) || (k == 3 && (v < 0x10000 || v > 0x10FFFF)) ||
            (v >= 0xD800 && v <= 0xDFFF))
            return 0;
        i += k + 1;
        count++;
    }
    *n = count;
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    uint8_t m = data[0];
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    rv_analyzer_options o;
    rv_analyzer_options_init(&o);
    o.lowercase = m & 1;
    o.strip_accents = (m >> 1) & 1;
    o.stopwords = (m >> 2) & 1;
    o.stem = (m >> 3) & 1;
    o.utf8 = (m >> 4) & 1 ? RV_UTF8_REPLACE : RV_UTF8_STRICT;
    o.min_token_len = 1 + ((m >> 5) & 1);
    o.max_token_len = (m >> 6) & 1 ? 4 : 64;
    size_t n_tok = 0, blen = 0, dummy;
    rv_status st = rv_analyze(&o, text, len, NULL, 0, NULL, 0, &n_tok, &blen);
    int valid = fzt_valid_utf8((const uint8_t *)text, len, &dummy);
    if (o.utf8 == RV_UTF8_STRICT) FZT_CHECK(valid ? (st == RV_OK || st == RV_E_SHAPE)
                                                  : st == RV_E_INVALID_ARG);
    else FZT_CHECK(st == RV_OK || st == RV_E_SHAPE);
    if (st != RV_OK && st != RV_E_SHAPE) return 0;
    FZT_CHECK(blen <= 2 * len && n_tok <= len);
    char *buf = malloc(blen ? blen : 1);
    size_t *ends = malloc((n_tok ? n_tok : 1) * sizeof *ends);
    size_t n2 = 0, b2 = 0;
    FZT_CHECK(rv_analyze(&o, text, len, buf, blen, ends, n_tok, &n2, &b2) == RV_OK);
    FZT_CHECK(n2 == n_tok && b2 == blen);
    size_t a = 0;
    for (size_t i = 0; i < n2; i++) {
        size_t cps = 0;
        FZT_CHECK(ends[i] > a && ends[i] <= b2);
        FZT_CHECK(fzt_valid_utf8((const uint8_t *)buf + a, ends[i] - a, &cps));
        FZT_CHECK(cps <= o.max_token_len);
        if (!o.stem) FZT_CHECK(cps >= o.min_token_len);
        if (o.stopwords && !o.stem) FZT_CHECK(!rv_is_stopword(buf + a, ends[i] - a));
        a = ends[i];
    }
    if (valid) {
        char *out = malloc(len ? len : 1);
        size_t ol = 0;
        FZT_CHECK(rv_stem_english(text, len, out, len, &ol) == RV_OK);
        FZT_CHECK(ol <= len);
        free(out);
    }
    free(buf);
    free(ends);
    return 0;
}
