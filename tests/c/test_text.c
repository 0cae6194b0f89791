/*
** Text analysis: options, UTF-8 handling, tokenizing, normalisation,
** stopwords, and the English stemmer against PyStemmer's output
** (tests/data/stem_english.tsv, written by tools/gen_stem_golden.py).
*/
#include <stdlib.h>

#include "rv_test.h"

#ifndef EXPECT_STR_EQ
#  define EXPECT_STR_EQ(a, b) RVT__STR_EQ(a, b, (void)0)
#endif

/* Analyse `text` with opt and join the terms with '|' into out. */
static rv_status analyze_join(const rv_analyzer_options *opt, const char *text, size_t len,
                              char *out, size_t cap) {
    char buf[4096];
    size_t ends[1024], n = 0, bl = 0;
    rv_status st = rv_analyze(opt, text, len, buf, sizeof buf, ends, 1024, &n, &bl);
    out[0] = 0;
    if (st != RV_OK) return st;
    size_t a = 0, o = 0;
    for (size_t i = 0; i < n; i++) {
        if (i && o + 1 < cap) out[o++] = '|';
        for (size_t j = a; j < ends[i] && o + 1 < cap; j++) out[o++] = buf[j];
        a = ends[i];
    }
    out[o] = 0;
    return RV_OK;
}

static const char *terms(const rv_analyzer_options *opt, const char *text) {
    static char out[4096];
    rv_status st = analyze_join(opt, text, strlen(text), out, sizeof out);
    if (st != RV_OK) snprintf(out, sizeof out, "<%s>", rv_status_name(st));
    return out;
}

static void test_options(void) {
    rv_analyzer_options o;
    rv_analyzer_options_init(&o);
    EXPECT_EQ(o.lowercase, 1);
    EXPECT_EQ(o.stem, 1);
    EXPECT_EQ(o.min_token_len, 1);
    EXPECT_EQ(o.max_token_len, 64);
    ASSERT_OK(rv_analyzer_options_check(&o));
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_analyzer_options_check(NULL));
    o.stem = 2;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_analyzer_options_check(&o));
    EXPECT_STR_CONTAINS(rv_errmsg(), "stem");
    rv_analyzer_options_init(&o);
    o.min_token_len = 0;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_analyzer_options_check(&o));
    EXPECT_STR_CONTAINS(rv_errmsg(), "min_token_len");
    rv_analyzer_options_init(&o);
    o.max_token_len = RV_ANALYZER_MAX_TOKEN_LEN + 1;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_analyzer_options_check(&o));
    rv_analyzer_options_init(&o);
    o.min_token_len = 10;
    o.max_token_len = 5;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_analyzer_options_check(&o));
    rv_analyzer_options_init(&o);
    o.utf8 = (rv_utf8_policy)7;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_analyzer_options_check(&o));
    char out[8];
    EXPECT_STATUS(RV_E_INVALID_ARG, analyze_join(&o, "x", 1, out, sizeof out));
}

static void test_tokenize_basic(void) {
    rv_analyzer_options o;
    rv_analyzer_options_init(&o);
    EXPECT_STR_EQ(terms(&o, "The Running dogs were HAPPILY jumping!"), "run|dog|happili|jump");
    EXPECT_STR_EQ(terms(&o, ""), "");
    EXPECT_STR_EQ(terms(&o, "the and of"), "");
    EXPECT_STR_EQ(terms(&o, "don't won't"), "");
    EXPECT_STR_EQ(terms(&o, "  x--w__z 42abc 3.14 "), "x|w|z|42abc|3|14");
    o.stem = 0;
    o.stopwords = 0;
    EXPECT_STR_EQ(terms(&o, "The Running, dogs"), "the|running|dogs");
    o.lowercase = 0;
    EXPECT_STR_EQ(terms(&o, "The Running"), "The|Running");
    /* NULL text is fine when empty, an error otherwise */
    size_t n = 1, bl = 1;
    EXPECT_OK(rv_analyze(&o, NULL, 0, NULL, 0, NULL, 0, &n, &bl));
    EXPECT_EQ(n, 0);
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_analyze(&o, NULL, 3, NULL, 0, NULL, 0, &n, &bl));
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_analyze(&o, "abc", 3, NULL, 0, NULL, 0, NULL, &bl));
}

static void test_unicode(void) {
    rv_analyzer_options o;
    rv_analyzer_options_init(&o);
    o.stem = 0;
    o.stopwords = 0;
    /* accents folded, sharp s expanded, Latin ligature split */
    EXPECT_STR_EQ(terms(&o, "Caf\xC3\xA9 na\xC3\xAFve \xC3\x89"
                            "COLE Stra\xC3\x9F"
                            "e \xEF\xAC\x81n"),
                  "cafe|naive|ecole|strasse|fin");
    /* decomposed accent: e + U+0301 */
    EXPECT_STR_EQ(terms(&o, "cafe\xCC\x81 ok"), "cafe|ok");
    /* Cyrillic: lowercased, the breve of U+0439 kept (a different letter) */
    EXPECT_STR_EQ(terms(&o, "\xD0\x99\xD0\x9E\xD0\x93\xD0\xA3\xD0\xA0\xD0\xA2"),
                  "\xD0\xB9\xD0\xBE\xD0\xB3\xD1\x83\xD1\x80\xD1\x82");
    /* Greek capital with tonos lowercases to the small letter with tonos */
    EXPECT_STR_EQ(terms(&o, "\xCE\x86\xCE\xBB\xCF\x86\xCE\xB1"),
                  "\xCE\xAC\xCE\xBB\xCF\x86\xCE\xB1");
    /* a mark after a Greek letter stays: alpha + U+0301 */
    EXPECT_STR_EQ(terms(&o, "\xCE\xB1\xCC\x81"), "\xCE\xB1\xCC\x81");
    /* Han and Hiragana: one token per character; Katakana runs stay whole */
    EXPECT_STR_EQ(terms(&o, "\xE6\x9D\xB1\xE4\xBA\xAC\xE3\x81\xAF \xE3\x82\xAB\xE3\x82\xBF"),
                  "\xE6\x9D\xB1|\xE4\xBA\xAC|\xE3\x81\xAF|\xE3\x82\xAB\xE3\x82\xBF");
    /* U+0130 lowercases to plain i */
    EXPECT_STR_EQ(terms(&o, "\xC4\xB0stanbul"), "istanbul");
    /* symbols, punctuation and emoji separate */
    EXPECT_STR_EQ(terms(&o, "a\xE2\x80\x94"
                            "b\xF0\x9F\x98\x80"
                            "c"),
                  "a|b|c");
    /* without stripping, precomposed letters stay */
    o.strip_accents = 0;
    EXPECT_STR_EQ(terms(&o, "Caf\xC3\xA9"), "caf\xC3\xA9");
    EXPECT_STR_EQ(terms(&o, "cafe\xCC\x81"), "cafe\xCC\x81");
}

static void test_lengths(void) {
    rv_analyzer_options o;
    rv_analyzer_options_init(&o);
    o.stem = 0;
    o.stopwords = 0;
    o.min_token_len = 3;
    o.max_token_len = 5;
    EXPECT_STR_EQ(terms(&o, "a ab abc abcde abcdef"), "abc|abcde");
    /* lengths count code points after normalisation: U+00DF becomes "ss" */
    EXPECT_STR_EQ(terms(&o, "\xC3\x9F"
                            "a \xC3\xA9\xC3\xA9\xC3\xA9"),
                  "ssa|eee");
    o.min_token_len = 1;
    o.max_token_len = RV_ANALYZER_MAX_TOKEN_LEN;
    char long_word[600];
    memset(long_word, 'x', 300);
    strcpy(long_word + 300, " ok");
    EXPECT_STR_EQ(terms(&o, long_word), "ok");
}

static void test_utf8(void) {
    rv_analyzer_options o;
    rv_analyzer_options_init(&o);
    o.stem = 0;
    char out[256];
    static const struct {
        const char *s;
        size_t len;
        size_t offset;
    } bad[] = {
        {"ok \xFF", 4, 3},             /* never valid */
        {"ok \xC0\xAF", 5, 3},         /* overlong '/' */
        {"ok \xE0\x80\xAF", 6, 3},     /* overlong, 3 bytes */
        {"ok \xED\xA0\x80", 6, 3},     /* surrogate D800 */
        {"ok \xF4\x90\x80\x80", 7, 3}, /* above U+10FFFF */
        {"ok \xE2\x82", 5, 3},         /* truncated */
        {"ok \x80", 4, 3},             /* stray continuation */
        {"abc\xC3", 4, 3},             /* truncated at the end */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rv_status st = analyze_join(&o, bad[i].s, bad[i].len, out, sizeof out);
        EXPECT_EQ(st, RV_E_INVALID_ARG);
        char want[64];
        snprintf(want, sizeof want, "byte offset %zu", bad[i].offset);
        EXPECT_STR_CONTAINS(rv_errmsg(), want);
    }
    o.utf8 = RV_UTF8_REPLACE;
    ASSERT_OK(analyze_join(&o,
                           "ab\xFF"
                           "cd \xE2\x82"
                           "ef",
                           10, out, sizeof out));
    EXPECT_STR_EQ(out, "ab|cd|ef");
    /* valid 4-byte letters are fine (U+20000 is a CJK ideograph) */
    o.utf8 = RV_UTF8_STRICT;
    ASSERT_OK(analyze_join(&o, "\xF0\xA0\x80\x80", 4, out, sizeof out));
    EXPECT_STR_EQ(out, "\xF0\xA0\x80\x80");
}

static void test_capacity(void) {
    rv_analyzer_options o;
    rv_analyzer_options_init(&o);
    const char *t = "alpha beta gamma";
    size_t n = 0, bl = 0;
    EXPECT_STATUS(RV_E_SHAPE, rv_analyze(&o, t, strlen(t), NULL, 0, NULL, 0, &n, &bl));
    EXPECT_EQ(n, 3);
    EXPECT_EQ(bl, 14); /* alpha + beta + gamma */
    char buf[14];
    size_t ends[3];
    ASSERT_OK(rv_analyze(&o, t, strlen(t), buf, sizeof buf, ends, 3, &n, &bl));
    EXPECT_EQ(ends[0], 5);
    EXPECT_EQ(ends[2], 14);
    EXPECT_TRUE(memcmp(buf, "alphabetagamma", 14) == 0);
    EXPECT_STATUS(RV_E_SHAPE, rv_analyze(&o, t, strlen(t), buf, 13, ends, 3, &n, &bl));
    EXPECT_STATUS(RV_E_SHAPE, rv_analyze(&o, t, strlen(t), buf, 14, ends, 2, &n, &bl));
}

static void test_stopwords(void) {
    size_t n = rv_stopword_count();
    ASSERT_TRUE(n > 100);
    for (size_t i = 1; i < n; i++) EXPECT_TRUE(strcmp(rv_stopword(i - 1), rv_stopword(i)) < 0);
    EXPECT_TRUE(rv_stopword(n) == NULL);
    EXPECT_EQ(rv_is_stopword("the", 3), 1);
    EXPECT_EQ(rv_is_stopword("The", 3), 0);
    EXPECT_EQ(rv_is_stopword("theory", 6), 0);
    EXPECT_EQ(rv_is_stopword("", 0), 0);
    EXPECT_EQ(rv_is_stopword(NULL, 3), 0);
    for (size_t i = 0; i < n; i++)
        EXPECT_EQ(rv_is_stopword(rv_stopword(i), strlen(rv_stopword(i))), 1);
}

static const char *stem_of(const char *w) {
    static char out[512];
    size_t ol = 0;
    if (rv_stem_english(w, strlen(w), out, sizeof out - 1, &ol) != RV_OK) return "<error>";
    out[ol] = 0;
    return out;
}

static void test_stem_examples(void) {
    EXPECT_STR_EQ(stem_of("caresses"), "caress");
    EXPECT_STR_EQ(stem_of("ponies"), "poni");
    EXPECT_STR_EQ(stem_of("ties"), "tie");
    EXPECT_STR_EQ(stem_of("hopping"), "hop");
    EXPECT_STR_EQ(stem_of("hoping"), "hope");
    EXPECT_STR_EQ(stem_of("generously"), "generous");
    EXPECT_STR_EQ(stem_of("international"), "internat");
    EXPECT_STR_EQ(stem_of("dying"), "die");
    EXPECT_STR_EQ(stem_of("skies"), "sky");
    EXPECT_STR_EQ(stem_of("at"), "at");
    EXPECT_STR_EQ(stem_of(""), "");
    EXPECT_STR_EQ(stem_of("sayyid"), "sayyid");
    /* long words take the allocating path */
    char w[2000];
    for (int i = 0; i < 600; i++) memcpy(w + 3 * i, "abc", 3);
    strcpy(w + 1800, "ing");
    size_t ol;
    char big[2000];
    EXPECT_OK(rv_stem_english(w, strlen(w), big, sizeof big, &ol));
    EXPECT_EQ(ol, 1800);
    char small[2];
    EXPECT_STATUS(RV_E_SHAPE, rv_stem_english("running", 7, small, sizeof small, &ol));
    EXPECT_EQ(ol, 3);
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_stem_english("ab\xFF", 3, small, sizeof small, &ol));
    EXPECT_STR_CONTAINS(rv_errmsg(), "byte offset 2");
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_stem_english("ab", 2, small, 2, NULL));
}

/* The golden file sits beside this test: ../data/stem_english.tsv. */
static FILE *open_golden(void) {
    char path[4096];
    snprintf(path, sizeof path, "%s", __FILE__);
    char *slash = strrchr(path, '/');
    if (!slash) return NULL;
    snprintf(slash, sizeof path - (size_t)(slash - path), "/../data/stem_english.tsv");
    return fopen(path, "rb");
}

static void test_stem_golden(void) {
    FILE *f = open_golden();
    ASSERT_TRUE(f != NULL);
    char line[1024];
    long n = 0, bad = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#') continue;
        size_t l = strlen(line);
        while (l && (line[l - 1] == '\n' || line[l - 1] == '\r')) line[--l] = 0;
        char *tab = strchr(line, '\t');
        if (!tab) continue;
        *tab = 0;
        const char *got = stem_of(line);
        if (strcmp(got, tab + 1) != 0) {
            if (bad < 10)
                fprintf(stderr, "  stem(%s) = %s, PyStemmer says %s\n", line, got, tab + 1);
            bad++;
        }
        n++;
    }
    fclose(f);
    EXPECT_TRUE(n > 3000);
    EXPECT_EQ(bad, 0);
}

static void test_stem_oom(void) {
    char w[1000];
    memset(w, 'a', sizeof w);
    char out[1000];
    size_t ol;
    rv__test_fail_alloc_after(1);
    EXPECT_STATUS(RV_E_NOMEM, rv_stem_english(w, sizeof w, out, sizeof out, &ol));
    rv__test_fail_alloc_after(0);
    EXPECT_OK(rv_stem_english(w, sizeof w, out, sizeof out, &ol));
}

int main(void) {
    RUN_TEST(test_options);
    RUN_TEST(test_tokenize_basic);
    RUN_TEST(test_unicode);
    RUN_TEST(test_lengths);
    RUN_TEST(test_utf8);
    RUN_TEST(test_capacity);
    RUN_TEST(test_stopwords);
    RUN_TEST(test_stem_examples);
    RUN_TEST(test_stem_golden);
    RUN_TEST(test_stem_oom);
    printf("unicode %s\n", rv_unicode_version());
    return RV_TEST_SUMMARY();
}
