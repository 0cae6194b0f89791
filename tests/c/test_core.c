/*
** Core: status names, error messages, version, the RNG and bitset counts.
*/
#include <pthread.h>
#include <stdlib.h>

#include "rv_test.h"

/* ------------------------------------------------------------ status names */

static void test_status_names(void) {
    static const struct {
        rv_status code;
        int number;
        const char *name;
    } table[] = {
        {RV_OK, 0, "RV_OK"},
        {RV_E_INVALID_ARG, 1, "RV_E_INVALID_ARG"},
        {RV_E_NOMEM, 2, "RV_E_NOMEM"},
        {RV_E_SHAPE, 3, "RV_E_SHAPE"},
        {RV_E_RANGE, 4, "RV_E_RANGE"},
        {RV_E_STATE, 5, "RV_E_STATE"},
        {RV_E_CORRUPT, 6, "RV_E_CORRUPT"},
        {RV_E_VERSION, 7, "RV_E_VERSION"},
        {RV_E_IO, 8, "RV_E_IO"},
        {RV_E_INTERRUPTED, 9, "RV_E_INTERRUPTED"},
        {RV_E_INFEASIBLE, 10, "RV_E_INFEASIBLE"},
        {RV_E_TIMEOUT, 11, "RV_E_TIMEOUT"},
        {RV_E_INTERNAL, 99, "RV_E_INTERNAL"},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        /* the numbers are ABI */
        ASSERT_EQ(table[i].code, table[i].number);
        ASSERT_STR_EQ(rv_status_name(table[i].code), table[i].name);
    }
    static const int unknown[] = {12, 13, 50, 98, 100, 1000, 0x7fffffff};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++)
        ASSERT_STR_EQ(rv_status_name((rv_status)unknown[i]), "RV_E_UNKNOWN");
}

/* ---------------------------------------------------------- error messages */

static void test_errmsg_set_and_cleared(void) {
    rv_errmsg_clear();
    ASSERT_TRUE(rv_errmsg() != NULL);
    ASSERT_STR_EQ(rv_errmsg(), "");

    /* a failing call names the argument at fault */
    uint64_t offsets[2] = {0, 0};
    ASSERT_STATUS(RV_E_INVALID_ARG, rv_cover_create(4, 1, offsets, NULL, NULL, NULL));
    ASSERT_STR_CONTAINS(rv_errmsg(), "out");

    rv_cover *p = (rv_cover *)0x1;
    ASSERT_STATUS(RV_E_INVALID_ARG, rv_cover_create(4, 1, NULL, NULL, NULL, &p));
    ASSERT_TRUE(p == NULL); /* *out cleared on failure */
    ASSERT_STR_CONTAINS(rv_errmsg(), "offsets");

    double bad_cost[1] = {-1.0};
    ASSERT_STATUS(RV_E_INVALID_ARG, rv_cover_create(4, 1, offsets, NULL, bad_cost, &p));
    ASSERT_STR_CONTAINS(rv_errmsg(), "costs[0]");

    rv_errmsg_clear();
    ASSERT_STR_EQ(rv_errmsg(), "");
    rv_errmsg_clear(); /* idempotent */
    ASSERT_STR_EQ(rv_errmsg(), "");
}

/* The message is per thread: another thread sees its own (empty) one, and
** its failures do not touch ours. */
typedef struct {
    char seen_before[64];
    char seen_after[256];
    rv_status st;
} errmsg_thread_result;

static void *errmsg_thread(void *arg) {
    errmsg_thread_result *res = arg;
    snprintf(res->seen_before, sizeof res->seen_before, "%s", rv_errmsg());
    uint64_t offsets[2] = {1, 1};
    rv_cover *p = NULL;
    res->st = rv_cover_create(4, 1, offsets, NULL, NULL, &p);
    snprintf(res->seen_after, sizeof res->seen_after, "%s", rv_errmsg());
    return NULL;
}

static void test_errmsg_thread_local(void) {
    rv_cover *p = NULL;
    ASSERT_STATUS(RV_E_INVALID_ARG, rv_cover_create(4, 1, NULL, NULL, NULL, &p));
    char mine[256];
    snprintf(mine, sizeof mine, "%s", rv_errmsg());
    ASSERT_STR_CONTAINS(mine, "offsets");

    errmsg_thread_result res;
    memset(&res, 0, sizeof res);
    pthread_t th;
    ASSERT_EQ(pthread_create(&th, NULL, errmsg_thread, &res), 0);
    ASSERT_EQ(pthread_join(th, NULL), 0);
    ASSERT_STR_EQ(res.seen_before, "");
    ASSERT_EQ(res.st, RV_E_INVALID_ARG);
    ASSERT_STR_CONTAINS(res.seen_after, "offsets[0]");
    ASSERT_STR_EQ(rv_errmsg(), mine);
    rv_errmsg_clear();
}

/* ---------------------------------------------------------------- version */

static void test_version(void) {
    ASSERT_STR_EQ(rv_version(), RV_VERSION_STRING);
    ASSERT_EQ(rv_version_number(), RV_VERSION_NUMBER);
    ASSERT_EQ(rv_version_number(),
              RV_VERSION_MAJOR * 10000 + RV_VERSION_MINOR * 100 + RV_VERSION_PATCH);
    char buf[64];
    snprintf(buf, sizeof buf, "%d.%d.%d", RV_VERSION_MAJOR, RV_VERSION_MINOR, RV_VERSION_PATCH);
    ASSERT_STR_EQ(rv_version(), buf);
    ASSERT_TRUE(RV_VERSION_MINOR < 100 && RV_VERSION_PATCH < 100);
}

/* -------------------------------------------------------------------- RNG */

/* An independent, deliberately plain reimplementation of the published
** algorithms (Vigna's splitmix64 and xoshiro256**), used as the oracle. */
typedef struct {
    uint64_t s0, s1, s2, s3;
} ref_xoshiro;

static uint64_t ref_splitmix64(uint64_t *state) {
    *state = *state + UINT64_C(0x9E3779B97F4A7C15);
    uint64_t z = *state;
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static uint64_t ref_rotl(uint64_t v, unsigned k) {
    return (v << k) | (v >> (64 - k));
}

static void ref_seed(ref_xoshiro *g, uint64_t seed) {
    uint64_t sm = seed;
    g->s0 = ref_splitmix64(&sm);
    g->s1 = ref_splitmix64(&sm);
    g->s2 = ref_splitmix64(&sm);
    g->s3 = ref_splitmix64(&sm);
}

static uint64_t ref_next(ref_xoshiro *g) {
    uint64_t out = ref_rotl(g->s1 * 5, 7) * 9;
    uint64_t t = g->s1 << 17;
    g->s2 ^= g->s0;
    g->s3 ^= g->s1;
    g->s1 ^= g->s2;
    g->s0 ^= g->s3;
    g->s2 ^= t;
    g->s3 = ref_rotl(g->s3, 45);
    return out;
}

static void test_rng_reference_seed0(void) {
    /* splitmix64 from 0: the widely published first four outputs */
    uint64_t sm = 0;
    ASSERT_TRUE(ref_splitmix64(&sm) == UINT64_C(0xe220a8397b1dcdaf));
    ASSERT_TRUE(ref_splitmix64(&sm) == UINT64_C(0x6e789e6aa1b965f4));
    ASSERT_TRUE(ref_splitmix64(&sm) == UINT64_C(0x06c45d188009454f));
    ASSERT_TRUE(ref_splitmix64(&sm) == UINT64_C(0xf88bb8a8724c81ec));

    rv_rng rng;
    rv_rng_seed(&rng, 0);
    ASSERT_TRUE(rng.s[0] == UINT64_C(0xe220a8397b1dcdaf));
    ASSERT_TRUE(rng.s[3] == UINT64_C(0xf88bb8a8724c81ec));

    ref_xoshiro ref;
    ref_seed(&ref, 0);
    uint64_t want = ref_next(&ref);
    uint64_t got = rv_rng_next(&rng);
    if (got != want)
        FAILF("seed 0 first output: got 0x%016llx, reference 0x%016llx", (unsigned long long)got,
              (unsigned long long)want);
    /* the value pinned, so a change to both would still be noticed */
    ASSERT_TRUE(want == UINT64_C(0x99ec5f36cb75f2b4));
    ASSERT_TRUE(rv_rng_next(&rng) == UINT64_C(0xbf6e1f784956452a));
    ASSERT_TRUE(rv_rng_next(&rng) == UINT64_C(0x1a5f849d4933e6e0));
}

static void test_rng_matches_reference_stream(void) {
    static const uint64_t seeds[] = {0, 1, 2, 42, 12345, UINT64_C(0xdeadbeefcafef00d), UINT64_MAX};
    for (size_t k = 0; k < sizeof seeds / sizeof seeds[0]; k++) {
        rv_rng rng;
        ref_xoshiro ref;
        rv_rng_seed(&rng, seeds[k]);
        ref_seed(&ref, seeds[k]);
        for (int i = 0; i < 2000; i++) {
            uint64_t a = rv_rng_next(&rng), b = ref_next(&ref);
            if (a != b)
                FAILF("seed %llu output %d: got 0x%016llx, reference 0x%016llx",
                      (unsigned long long)seeds[k], i, (unsigned long long)a,
                      (unsigned long long)b);
        }
    }
}

static void test_rng_same_seed_same_stream(void) {
    for (uint64_t seed = 0; seed < 100; seed++) {
        rv_rng a, b;
        rv_rng_seed(&a, seed);
        rv_rng_seed(&b, seed);
        for (int i = 0; i < 64; i++) ASSERT_TRUE(rv_rng_next(&a) == rv_rng_next(&b));
        /* and reseeding restarts the stream */
        uint64_t first;
        rv_rng_seed(&a, seed);
        first = rv_rng_next(&a);
        rv_rng_seed(&a, seed);
        ASSERT_TRUE(rv_rng_next(&a) == first);
    }
}

static int cmp_u64(const void *x, const void *y) {
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

static void test_rng_different_seeds_differ(void) {
    enum { N = 200 };
    uint64_t first[N];
    for (uint64_t seed = 0; seed < N; seed++) {
        rv_rng r;
        rv_rng_seed(&r, seed);
        first[seed] = rv_rng_next(&r);
    }
    qsort(first, N, sizeof first[0], cmp_u64);
    for (int i = 1; i < N; i++) ASSERT_TRUE(first[i] != first[i - 1]);

    /* neighbouring seeds: the streams share no early output position */
    rv_rng a, b;
    rv_rng_seed(&a, 7);
    rv_rng_seed(&b, 8);
    int same = 0;
    for (int i = 0; i < 1000; i++) same += rv_rng_next(&a) == rv_rng_next(&b);
    ASSERT_EQ(same, 0);
}

static void test_rng_streams_differ(void) {
    enum { N = 128 };
    uint64_t first[N + 1];
    for (uint64_t s = 0; s < N; s++) {
        rv_rng r, r2;
        rv_rng_seed_stream(&r, 42, s);
        rv_rng_seed_stream(&r2, 42, s);
        first[s] = rv_rng_next(&r);
        /* deterministic */
        ASSERT_TRUE(rv_rng_next(&r2) == first[s]);
    }
    rv_rng plain;
    rv_rng_seed(&plain, 42);
    first[N] = rv_rng_next(&plain);
    qsort(first, N + 1, sizeof first[0], cmp_u64);
    for (int i = 1; i <= N; i++) ASSERT_TRUE(first[i] != first[i - 1]);

    /* the same stream of another seed differs too */
    rv_rng x, y;
    rv_rng_seed_stream(&x, 1, 5);
    rv_rng_seed_stream(&y, 2, 5);
    ASSERT_TRUE(rv_rng_next(&x) != rv_rng_next(&y));
}

static void test_rng_below_range(void) {
    rv_rng r;
    rv_rng_seed(&r, 99);
    ASSERT_TRUE(rv_rng_below(&r, 0) == 0);
    for (int i = 0; i < 100; i++) ASSERT_TRUE(rv_rng_below(&r, 1) == 0);
    static const uint64_t bounds[] = {2,
                                      3,
                                      5,
                                      7,
                                      10,
                                      1000,
                                      1u << 31,
                                      UINT64_C(1) << 32,
                                      (UINT64_C(1) << 63) + 1,
                                      UINT64_MAX - 1,
                                      UINT64_MAX};
    for (size_t k = 0; k < sizeof bounds / sizeof bounds[0]; k++)
        for (int i = 0; i < 5000; i++) {
            uint64_t v = rv_rng_below(&r, bounds[k]);
            if (v >= bounds[k])
                FAILF("rv_rng_below(%llu) gave %llu", (unsigned long long)bounds[k],
                      (unsigned long long)v);
        }
    /* bound 2^63 + 1 rejects about half the raw draws; the accepted values
    ** must still be spread over the whole range */
    uint64_t big = (UINT64_C(1) << 63) + 1, low = 0;
    for (int i = 0; i < 20000; i++) low += rv_rng_below(&r, big) < (UINT64_C(1) << 62);
    ASSERT_TRUE(low > 9000 && low < 11000);
}

/* Loose chi-square: P(chi2 with 9 dof > 40) is about 7e-6, and with a fixed
** seed the outcome is fixed anyway; this catches gross bias only. */
static void test_rng_below_uniform(void) {
    static const uint64_t bounds[] = {10, 7, 16};
    for (size_t k = 0; k < sizeof bounds / sizeof bounds[0]; k++) {
        uint64_t b = bounds[k];
        uint64_t counts[16] = {0};
        const int draws = 160000;
        rv_rng r;
        rv_rng_seed(&r, 2024 + k);
        for (int i = 0; i < draws; i++) counts[rv_rng_below(&r, b)]++;
        double expect = (double)draws / (double)b, chi2 = 0;
        for (uint64_t v = 0; v < b; v++) {
            double d = (double)counts[v] - expect;
            chi2 += d * d / expect;
        }
        /* critical values at ~1e-5: dof 6 -> 33, dof 9 -> 40, dof 15 -> 50 */
        double limit = b == 7 ? 33 : b == 10 ? 40 : 50;
        if (!(chi2 < limit))
            FAILF("bound %llu: chi2 = %g >= %g", (unsigned long long)b, chi2, limit);
    }
}

static void test_rng_uniform(void) {
    rv_rng r;
    rv_rng_seed(&r, 5);
    double sum = 0, lo = 1, hi = 0;
    int buckets[10] = {0};
    const int n = 100000;
    for (int i = 0; i < n; i++) {
        double u = rv_rng_uniform(&r);
        if (!(u >= 0.0 && u < 1.0)) FAILF("rv_rng_uniform gave %.17g", u);
        /* 53 random bits: u * 2^53 is an integer */
        double scaled = u * 9007199254740992.0;
        ASSERT_TRUE(scaled == floor(scaled));
        sum += u;
        if (u < lo) lo = u;
        if (u > hi) hi = u;
        buckets[(int)(u * 10)]++;
    }
    ASSERT_NEAR(sum / n, 0.5, 0.01);
    ASSERT_TRUE(lo < 0.001 && hi > 0.999);
    for (int b = 0; b < 10; b++) ASSERT_TRUE(buckets[b] > 9400 && buckets[b] < 10600);

    /* uniform is built from the top 53 bits of next */
    rv_rng a, b2;
    rv_rng_seed(&a, 77);
    rv_rng_seed(&b2, 77);
    for (int i = 0; i < 100; i++) {
        uint64_t raw = rv_rng_next(&a);
        double u = rv_rng_uniform(&b2);
        ASSERT_TRUE(u == (double)(raw >> 11) / 9007199254740992.0);
    }
}

/* ---------------------------------------------------------------- bitsets */

static uint64_t naive_count(const uint64_t *a, size_t nwords) {
    uint64_t n = 0;
    for (size_t w = 0; w < nwords; w++)
        for (unsigned b = 0; b < 64; b++) n += (a[w] >> b) & 1;
    return n;
}

static uint64_t naive_count_and(const uint64_t *a, const uint64_t *b, size_t nwords) {
    uint64_t n = 0;
    for (size_t w = 0; w < nwords; w++)
        for (unsigned k = 0; k < 64; k++) n += ((a[w] >> k) & 1) && ((b[w] >> k) & 1);
    return n;
}

static uint64_t naive_count_andnot(const uint64_t *a, const uint64_t *b, size_t nwords) {
    uint64_t n = 0;
    for (size_t w = 0; w < nwords; w++)
        for (unsigned k = 0; k < 64; k++) n += ((a[w] >> k) & 1) && !((b[w] >> k) & 1);
    return n;
}

/* A word with roughly `density`/8 of its bits set. */
static uint64_t random_word(rv_rng *r, int density) {
    switch (density) {
    case 0:
        return 0;
    case 1:
        return rv_rng_next(r) & rv_rng_next(r) & rv_rng_next(r);
    case 2:
        return rv_rng_next(r);
    case 3:
        return rv_rng_next(r) | rv_rng_next(r) | rv_rng_next(r);
    default:
        return UINT64_MAX;
    }
}

static void test_bitset_counts(void) {
    enum { MAXW = 80 };
    uint64_t a[MAXW], b[MAXW];
    rv_rng r;
    rv_rng_seed(&r, 31337);
    ASSERT_EQ(rv_bitset_count(a, 0), 0);
    ASSERT_EQ(rv_bitset_count_and(a, b, 0), 0);
    ASSERT_EQ(rv_bitset_count_andnot(a, b, 0), 0);
    for (int trial = 0; trial < 400; trial++) {
        size_t nw = (size_t)rv_rng_below(&r, MAXW + 1);
        for (size_t w = 0; w < nw; w++) {
            a[w] = random_word(&r, (int)rv_rng_below(&r, 5));
            b[w] = random_word(&r, (int)rv_rng_below(&r, 5));
        }
        ASSERT_EQ(rv_bitset_count(a, nw), naive_count(a, nw));
        ASSERT_EQ(rv_bitset_count_and(a, b, nw), naive_count_and(a, b, nw));
        ASSERT_EQ(rv_bitset_count_andnot(a, b, nw), naive_count_andnot(a, b, nw));
        ASSERT_EQ(rv_bitset_count_andnot(b, a, nw), naive_count_andnot(b, a, nw));
    }
    /* all ones, and the identities count(a) = and + andnot */
    for (size_t w = 0; w < MAXW; w++) a[w] = UINT64_MAX;
    ASSERT_EQ(rv_bitset_count(a, MAXW), 64 * MAXW);
    for (size_t w = 0; w < MAXW; w++) b[w] = rv_rng_next(&r);
    ASSERT_EQ(rv_bitset_count_and(a, b, MAXW) + rv_bitset_count_andnot(a, b, MAXW),
              rv_bitset_count(a, MAXW));
    ASSERT_EQ(rv_bitset_count_andnot(a, a, MAXW), 0);
    ASSERT_EQ(RV_BITSET_WORDS(0), 0);
    ASSERT_EQ(RV_BITSET_WORDS(1), 1);
    ASSERT_EQ(RV_BITSET_WORDS(64), 1);
    ASSERT_EQ(RV_BITSET_WORDS(65), 2);
}

/* ------------------------------------------------------------- id sets */

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Id sets against a sorted reference: sizes from empty to large, repeats,
** ids spread over the whole range (so every radix pass runs), errors. */
static void test_idset(void) {
    rv_rng r;
    rv_rng_seed(&r, 314);
    static const size_t sizes[] = {0, 1, 2, 31, 33, 1000, 100000};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t n = sizes[si];
        int64_t *ids = malloc((n ? n : 1) * sizeof *ids);
        int64_t *ref = malloc((n ? n : 1) * sizeof *ref);
        for (size_t i = 0; i < n; i++) {
            uint64_t x = rv_rng_next(&r);
            ids[i] = si % 2 ? (int64_t)(x >> 1) % RV_MAX_ID : (int64_t)(x % 500); /* repeats */
            ref[i] = ids[i];
        }
        qsort(ref, n, sizeof *ref, cmp_i64);
        size_t u = 0;
        for (size_t i = 0; i < n; i++)
            if (!u || ref[u - 1] != ref[i]) ref[u++] = ref[i];
        rv_idset *set = NULL;
        ASSERT_OK(rv_idset_create(ids, n, &set));
        EXPECT_EQ(rv_idset_size(set), u);
        int64_t *out = malloc((u ? u : 1) * sizeof *out);
        size_t got = 0;
        ASSERT_OK(rv_idset_ids(set, out, u, &got));
        EXPECT_EQ(got, u);
        EXPECT_TRUE(u == 0 || memcmp(out, ref, u * sizeof *out) == 0);
        for (size_t i = 0; i < n; i++) EXPECT_TRUE(rv_idset_contains(set, ids[i]));
        size_t absent = 0;
        for (int t = 0; t < 2000; t++) {
            int64_t x = (int64_t)(rv_rng_next(&r) >> 1) % RV_MAX_ID;
            int in = bsearch(&x, ref, u, sizeof *ref, cmp_i64) != NULL;
            EXPECT_EQ(rv_idset_contains(set, x), in);
            absent += !in;
        }
        EXPECT_TRUE(absent > 0);
        if (u > 1) EXPECT_STATUS(RV_E_SHAPE, rv_idset_ids(set, out, 1, &got));
        EXPECT_EQ(got, u);
        rv_idset_free(set);
        free(out);
        free(ids);
        free(ref);
    }
    rv_idset *set = NULL;
    int64_t bad[2] = {3, -4};
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_idset_create(bad, 2, &set));
    EXPECT_STR_CONTAINS(rv_errmsg(), "ids[1] = -4");
    EXPECT_TRUE(set == NULL);
    bad[1] = INT64_MAX;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_idset_create(bad, 2, &set));
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_idset_create(NULL, 2, &set));
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_idset_create(bad, 1, NULL));
    EXPECT_EQ(rv_idset_size(NULL), 0);
    EXPECT_EQ(rv_idset_contains(NULL, 3), 0);
    rv_idset_free(NULL);
    /* allocation failures: NOMEM, nothing leaked, nothing returned */
    int64_t some[100];
    for (int i = 0; i < 100; i++) some[i] = i * 37;
    int done = 0;
    for (uint64_t k = 1; k < 20 && !done; k++) {
        rv__test_fail_alloc_after(k);
        rv_status st = rv_idset_create(some, 100, &set);
        rv__test_fail_alloc_after(0);
        if (st == RV_OK) {
            done = 1;
            EXPECT_EQ(rv_idset_size(set), 100);
            rv_idset_free(set);
        } else {
            EXPECT_EQ(st, RV_E_NOMEM);
            EXPECT_TRUE(set == NULL);
        }
    }
    EXPECT_TRUE(done);
}

int main(void) {
    RUN_TEST(test_status_names);
    RUN_TEST(test_errmsg_set_and_cleared);
    RUN_TEST(test_errmsg_thread_local);
    RUN_TEST(test_version);
    RUN_TEST(test_rng_reference_seed0);
    RUN_TEST(test_rng_matches_reference_stream);
    RUN_TEST(test_rng_same_seed_same_stream);
    RUN_TEST(test_rng_different_seeds_differ);
    RUN_TEST(test_rng_streams_differ);
    RUN_TEST(test_rng_below_range);
    RUN_TEST(test_rng_below_uniform);
    RUN_TEST(test_rng_uniform);
    RUN_TEST(test_bitset_counts);
    RUN_TEST(test_idset);
    return RV_TEST_SUMMARY();
}
