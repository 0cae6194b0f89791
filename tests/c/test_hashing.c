/*
** Tests of the hashing embedder (include/rowvoi/hashing.h).
*/
#include <stdlib.h>

#include "rv_test.h"

#ifndef EXPECT_STR_EQ
#  define EXPECT_STR_EQ(a, b) RVT__STR_EQ(a, b, (void)0)
#endif

#define RV_FINGERPRINT_BUCKET 419
#define RV_FINGERPRINT_SIGN   -1

static rv_hasher *make(uint32_t dim, uint32_t words, uint32_t cmin, uint32_t cmax) {
    rv_hasher_options o;
    rv_hasher_options_init(&o);
    o.dim = dim;
    o.word_ngrams = words;
    o.char_min = cmin;
    o.char_max = cmax;
    rv_hasher *h = NULL;
    return rv_hasher_create(&o, &h) == RV_OK ? h : NULL;
}

static double dot(const float *a, const float *b, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += (double)a[i] * b[i];
    return s;
}

static void test_options(void) {
    rv_hasher_options o;
    rv_hasher_options_init(&o);
    EXPECT_EQ(o.dim, 384);
    EXPECT_EQ(o.word_ngrams, 2);
    rv_hasher *h = NULL;
    ASSERT_OK(rv_hasher_create(&o, &h));
    EXPECT_STR_EQ(rv_hasher_id(h), "hash-v1:dim=384,words=1-2,chars=3-5,cw=1,seed=0");
    EXPECT_EQ(rv_hasher_dim(h), 384);
    rv_hasher_free(h);
    rv_hasher_free(NULL);
    EXPECT_STR_EQ(rv_hasher_id(NULL), "");
    o.dim = 0;
    EXPECT_STATUS(RV_E_RANGE, rv_hasher_create(&o, &h));
    EXPECT_STR_CONTAINS(rv_errmsg(), "dim");
    o.dim = 64;
    o.word_ngrams = 4;
    EXPECT_STATUS(RV_E_RANGE, rv_hasher_create(&o, &h));
    o.word_ngrams = 1;
    o.char_min = 6;
    o.char_max = 4;
    EXPECT_STATUS(RV_E_RANGE, rv_hasher_create(&o, &h));
    o.char_min = 2;
    o.char_weight = -1;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_hasher_create(&o, &h));
    o.char_weight = 0.5f;
    o.seed = 42;
    ASSERT_OK(rv_hasher_create(&o, &h));
    EXPECT_STR_EQ(rv_hasher_id(h), "hash-v1:dim=64,words=1-1,chars=2-4,cw=0.5,seed=42");
    rv_hasher_free(h);
    o.word_ngrams = 0;
    o.char_min = 0;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_hasher_create(&o, &h));
    EXPECT_STR_CONTAINS(rv_errmsg(), "no features");
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_hasher_create(NULL, &h));
}

static void test_normalised_deterministic_and_case_blind(void) {
    rv_hasher *h = make(256, 2, 3, 5);
    ASSERT_TRUE(h != NULL);
    float a[256], b[256], c[256];
    const char *t1 = "The quick brown fox jumps over the lazy dog.";
    const char *t2 = "THE QUICK, brown   fox -- jumps over the LAZY dog";
    ASSERT_OK(rv_hasher_embed(h, t1, strlen(t1), a));
    ASSERT_OK(rv_hasher_embed(h, t2, strlen(t2), b));
    EXPECT_NEAR(dot(a, a, 256), 1.0, 1e-6);
    EXPECT_TRUE(memcmp(a, b, sizeof a) == 0); /* same words, same vector */
    ASSERT_OK(rv_hasher_embed(h, t1, strlen(t1), c));
    EXPECT_TRUE(memcmp(a, c, sizeof a) == 0);
    int nonzero = 0;
    for (int i = 0; i < 256; i++) nonzero += a[i] != 0;
    EXPECT_TRUE(nonzero > 20);
    rv_hasher_free(h);
    /* fingerprint: one word, no other features, lands on a fixed bucket and
    ** sign on every platform (changing the hash changes the embedder id) */
    rv_hasher *w = make(1000, 1, 0, 0);
    float v[1000];
    ASSERT_OK(rv_hasher_embed(w, "Cat", 3, v));
    int at = -1;
    for (int i = 0; i < 1000; i++)
        if (v[i] != 0) at = i;
    printf("# fingerprint bucket %d sign %g\n", at, at >= 0 ? (double)v[at] : 0.0);
    EXPECT_EQ(at, RV_FINGERPRINT_BUCKET);
    EXPECT_NEAR(v[at], RV_FINGERPRINT_SIGN, 0);
    rv_hasher_free(w);
}

static void test_similarity_is_meaningful(void) {
    rv_hasher *h = make(1024, 2, 3, 5);
    float a[1024], b[1024], c[1024];
    const char *s1 = "neural networks for image classification";
    const char *s2 = "image classification with neural nets";
    const char *s3 = "the recipe calls for butter and sugar";
    ASSERT_OK(rv_hasher_embed(h, s1, strlen(s1), a));
    ASSERT_OK(rv_hasher_embed(h, s2, strlen(s2), b));
    ASSERT_OK(rv_hasher_embed(h, s3, strlen(s3), c));
    double near = dot(a, b, 1024), far = dot(a, c, 1024);
    EXPECT_TRUE(near > 0.4);
    EXPECT_TRUE(far < 0.2);
    /* character n-grams link inflections even without shared words */
    const char *w1 = "classification", *w2 = "classifications";
    ASSERT_OK(rv_hasher_embed(h, w1, strlen(w1), a));
    ASSERT_OK(rv_hasher_embed(h, w2, strlen(w2), b));
    EXPECT_TRUE(dot(a, b, 1024) > 0.35);
    rv_hasher *words_only = make(1024, 2, 0, 0);
    ASSERT_OK(rv_hasher_embed(words_only, w1, strlen(w1), a));
    ASSERT_OK(rv_hasher_embed(words_only, w2, strlen(w2), b));
    EXPECT_TRUE(fabs(dot(a, b, 1024)) < 0.01);
    rv_hasher_free(words_only);
    rv_hasher_free(h);
}

static void test_word_order_and_bigrams(void) {
    rv_hasher *uni = make(512, 1, 0, 0), *bi = make(512, 2, 0, 0);
    float a[512], b[512];
    const char *s1 = "dog bites man", *s2 = "man bites dog";
    ASSERT_OK(rv_hasher_embed(uni, s1, strlen(s1), a));
    ASSERT_OK(rv_hasher_embed(uni, s2, strlen(s2), b));
    EXPECT_NEAR(dot(a, b, 512), 1.0, 1e-6); /* bag of words */
    ASSERT_OK(rv_hasher_embed(bi, s1, strlen(s1), a));
    ASSERT_OK(rv_hasher_embed(bi, s2, strlen(s2), b));
    EXPECT_TRUE(dot(a, b, 512) < 0.9); /* bigrams see the order */
    rv_hasher_free(uni);
    rv_hasher_free(bi);
}

static void test_unicode_and_empty(void) {
    rv_hasher *h = make(128, 1, 2, 3);
    float a[128], b[128];
    /* accented capitals lowercase: "ÉCOLE ŁÓDŹ" == "école łódź" */
    const char *up = "\xc3\x89"
                     "COLE \xc5\x81\xc3\x93"
                     "D\xc5\xb9";
    const char *lo = "\xc3\xa9"
                     "cole \xc5\x82\xc3\xb3"
                     "d\xc5\xba";
    ASSERT_OK(rv_hasher_embed(h, up, strlen(up), a));
    ASSERT_OK(rv_hasher_embed(h, lo, strlen(lo), b));
    EXPECT_TRUE(memcmp(a, b, sizeof a) == 0);
    /* punctuation-only and empty texts give the zero vector */
    ASSERT_OK(rv_hasher_embed(h, "?! -- \xe2\x80\x94 ...", 12, a));
    for (int i = 0; i < 128; i++) EXPECT_EQ(a[i], 0);
    ASSERT_OK(rv_hasher_embed(h, NULL, 0, a));
    EXPECT_EQ(a[0], 0);
    /* invalid UTF-8: a clear error naming the byte */
    const char *bad[] = {"ok \xff", "ab\xc3", "\xed\xa0\x80", "\xc0\xaf", "x\xf4\x90\x80\x80"};
    size_t at[] = {3, 2, 0, 0, 1};
    for (int i = 0; i < 5; i++) {
        EXPECT_STATUS(RV_E_INVALID_ARG, rv_hasher_embed(h, bad[i], strlen(bad[i]), a));
        char want[64];
        snprintf(want, sizeof want, "at byte %zu", at[i]);
        EXPECT_STR_CONTAINS(rv_errmsg(), want);
    }
    rv_hasher_free(h);
}

static void test_batch_matches_single_for_any_threads(void) {
    rv_hasher *h = make(96, 2, 3, 4);
    enum { N = 300 };
    char *data = (char *)malloc(N * 1200);
    uint64_t offsets[N + 1];
    offsets[0] = 0;
    rv_rng rng;
    rv_rng_seed(&rng, 3);
    const char *words[] = {
        "alpha", "beta", "gamma", "delta", "eps", "zeta", "\xce\xb7\xcf\x84\xce\xb1", "theta"};
    for (int i = 0; i < N; i++) {
        size_t pos = offsets[i];
        int nw = (int)rv_rng_below(&rng, 150);
        for (int w = 0; w < nw; w++) {
            const char *s = words[rv_rng_below(&rng, 8)];
            memcpy(data + pos, s, strlen(s));
            pos += strlen(s);
            data[pos++] = ' ';
        }
        offsets[i + 1] = pos;
    }
    float *one = (float *)malloc(N * 96 * sizeof *one);
    float *four = (float *)malloc(N * 96 * sizeof *four);
    ASSERT_OK(rv_hasher_embed_batch(h, data, offsets, N, 1, one));
    ASSERT_OK(rv_hasher_embed_batch(h, data, offsets, N, 4, four));
    EXPECT_TRUE(memcmp(one, four, N * 96 * sizeof *one) == 0);
    float single[96];
    ASSERT_OK(rv_hasher_embed(h, data + offsets[7], offsets[8] - offsets[7], single));
    EXPECT_TRUE(memcmp(single, one + 7 * 96, sizeof single) == 0);
    /* the first bad text is named whatever the thread split */
    data[offsets[250] + 1] = (char)0xfe;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_hasher_embed_batch(h, data, offsets, N, 4, four));
    EXPECT_STR_CONTAINS(rv_errmsg(), "texts[250]");
    uint64_t dec[3] = {0, 5, 2};
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_hasher_embed_batch(h, data, dec, 2, 1, four));
    EXPECT_STR_CONTAINS(rv_errmsg(), "must not decrease");
    free(data);
    free(one);
    free(four);
    rv_hasher_free(h);
}

static void test_allocation_failures(void) {
    int finished = 0;
    for (uint64_t fail = 1; fail < 50 && !finished; fail++) {
        rv__test_fail_alloc_after(fail);
        rv_hasher *h = NULL;
        rv_hasher_options o;
        rv_hasher_options_init(&o);
        o.dim = 16;
        rv_status st = rv_hasher_create(&o, &h);
        float out[2 * 16];
        uint64_t off[3] = {0, 3, 7};
        if (!st) st = rv_hasher_embed(h, "abc", 3, out);
        if (!st) st = rv_hasher_embed_batch(h, "abc defg", off, 2, 1, out);
        rv__test_fail_alloc_after(0);
        rv_hasher_free(h);
        if (st == RV_OK)
            finished = 1;
        else if (st != RV_E_NOMEM)
            FAILF("allocation %llu: %s", (unsigned long long)fail, rv_status_name(st));
    }
    EXPECT_TRUE(finished);
}

int main(void) {
    RUN_TEST(test_options);
    RUN_TEST(test_normalised_deterministic_and_case_blind);
    RUN_TEST(test_similarity_is_meaningful);
    RUN_TEST(test_word_order_and_bigrams);
    RUN_TEST(test_unicode_and_empty);
    RUN_TEST(test_batch_matches_single_for_any_threads);
    RUN_TEST(test_allocation_failures);
    return RV_TEST_SUMMARY();
}
