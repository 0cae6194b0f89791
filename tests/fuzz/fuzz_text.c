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
#include "fuzz_util.h"

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
    int valid = rvf_valid_utf8((const uint8_t *)text, len, &dummy);
    if (o.utf8 == RV_UTF8_STRICT)
        RVF_CHECK(valid ? (st == RV_OK || st == RV_E_SHAPE) : st == RV_E_INVALID_ARG);
    else
        RVF_CHECK(st == RV_OK || st == RV_E_SHAPE);
    if (st != RV_OK && st != RV_E_SHAPE) return 0;
    RVF_CHECK(blen <= 2 * len && n_tok <= len);
    char *buf = malloc(blen ? blen : 1);
    size_t *ends = malloc((n_tok ? n_tok : 1) * sizeof *ends);
    size_t n2 = 0, b2 = 0;
    RVF_CHECK(rv_analyze(&o, text, len, buf, blen, ends, n_tok, &n2, &b2) == RV_OK);
    RVF_CHECK(n2 == n_tok && b2 == blen);
    size_t a = 0;
    for (size_t i = 0; i < n2; i++) {
        size_t cps = 0;
        RVF_CHECK(ends[i] > a && ends[i] <= b2);
        RVF_CHECK(rvf_valid_utf8((const uint8_t *)buf + a, ends[i] - a, &cps));
        RVF_CHECK(cps <= o.max_token_len);
        if (!o.stem) RVF_CHECK(cps >= o.min_token_len);
        if (o.stopwords && !o.stem) RVF_CHECK(!rv_is_stopword(buf + a, ends[i] - a));
        a = ends[i];
    }
    if (valid) {
        char *out = malloc(len ? len : 1);
        size_t ol = 0;
        RVF_CHECK(rv_stem_english(text, len, out, len, &ol) == RV_OK);
        RVF_CHECK(ol <= len);
        free(out);
    }
    free(buf);
    free(ends);
    return 0;
}
