/*
** Belief kernels: entropy, hard filter, reweighting, the noisy likelihood and
** the all-columns information gain, checked against a brute-force
** implementation of the definition I(R;Y|E) = H(R|E) - E_y[H(R|E,Y=y)];
** thread-count determinism; every documented error; an allocation-failure
** sweep.
*/
#include <stdlib.h>

#include "rv_test.h"

/* ------------------------------------------------------------ reference */

static double xlog2x_neg(double x) {
    return x > 0 ? -x * log2(x) : 0.0;
}

/* The definition, O(n * K): branch on every observable value x, compute the
** posterior given Y = x and its entropy. */
static double ref_mi(const int32_t *col, const uint64_t *rows, size_t n, const double *post,
                     double noise, double *h_col_out, uint64_t *k_out) {
    int32_t *vals = malloc((n ? n : 1) * sizeof(int32_t));
    size_t k = 0;
    double total = 0;
    for (size_t i = 0; i < n; i++) total += post[i];
    for (size_t i = 0; i < n; i++) {
        int32_t c = rows ? col[rows[i]] : col[i];
        size_t j = 0;
        while (j < k && vals[j] != c) j++;
        if (j == k) vals[k++] = c;
    }
    double hr = 0, hv = 0;
    for (size_t i = 0; i < n; i++) hr += xlog2x_neg(post[i] / total);
    for (size_t j = 0; j < k; j++) {
        double w = 0;
        for (size_t i = 0; i < n; i++)
            if ((rows ? col[rows[i]] : col[i]) == vals[j]) w += post[i] / total;
        hv += xlog2x_neg(w);
    }
    double expected = 0;
    if (k >= 2) {
        for (size_t j = 0; j < k; j++) {
            double px = 0;
            double *branch = malloc(n * sizeof(double));
            for (size_t i = 0; i < n; i++) {
                int32_t c = rows ? col[rows[i]] : col[i];
                double lik = c == vals[j] ? 1 - noise : noise / (double)(k - 1);
                branch[i] = post[i] / total * lik;
                px += branch[i];
            }
            double h = 0;
            if (px > 0)
                for (size_t i = 0; i < n; i++) h += xlog2x_neg(branch[i] / px);
            expected += px * h;
            free(branch);
        }
    } else {
        expected = hr;
    }
    free(vals);
    if (h_col_out) *h_col_out = hv;
    if (k_out) *k_out = k;
    double mi = hr - expected;
    return mi < 0 ? 0 : mi;
}

/* A random frame: n_rows x n_cols codes; column c has 1 + c % 5 values,
** scattered over a wide range when `sparse`. */
static void fill_frame(int32_t *codes, size_t n_rows, size_t n_cols, uint64_t seed, int sparse) {
    rv_rng r;
    rv_rng_seed(&r, seed);
    for (size_t c = 0; c < n_cols; c++)
        for (size_t i = 0; i < n_rows; i++) {
            int32_t v = (int32_t)rv_rng_below(&r, 1 + c % 5);
            codes[c * n_rows + i] = sparse ? v * 400000007 - 900000000 : v;
        }
}

static void fill_posterior(double *p, size_t n, uint64_t seed, int with_zeros) {
    rv_rng r;
    rv_rng_seed(&r, seed);
    for (size_t i = 0; i < n; i++) {
        p[i] = rv_rng_uniform(&r);
        if (with_zeros && i % 7 == 3) p[i] = 0.0;
    }
}

/* -------------------------------------------------------------- entropy */

static void test_entropy(void) {
    double h = -1;
    double u4[4] = {1, 1, 1, 1};
    ASSERT_OK(rv_belief_entropy(u4, 4, &h));
    ASSERT_NEAR(h, 2.0, 1e-15);
    double w[3] = {3, 0, 1}; /* (0.75, 0, 0.25) */
    ASSERT_OK(rv_belief_entropy(w, 3, &h));
    ASSERT_NEAR(h, -(0.75 * log2(0.75) + 0.25 * log2(0.25)), 1e-15);
    ASSERT_OK(rv_belief_entropy(NULL, 0, &h));
    ASSERT_EQ(h == 0.0, 1);
    double one[1] = {5};
    ASSERT_OK(rv_belief_entropy(one, 1, &h));
    ASSERT_EQ(h == 0.0, 1);
    double bad[3] = {1, -1, 1};
    ASSERT_STATUS(RV_E_INVALID_ARG, rv_belief_entropy(bad, 3, &h));
    ASSERT_STR_CONTAINS(rv_errmsg(), "weights[1]");
    bad[1] = NAN;
    ASSERT_STATUS(RV_E_INVALID_ARG, rv_belief_entropy(bad, 3, &h));
    bad[1] = INFINITY;
    ASSERT_STATUS(RV_E_INVALID_ARG, rv_belief_entropy(bad, 3, &h));
    double zero[2] = {0, 0};
    ASSERT_STATUS(RV_E_INVALID_ARG, rv_belief_entropy(zero, 2, &h));
    ASSERT_STR_CONTAINS(rv_errmsg(), "sum to 0");
    ASSERT_STATUS(RV_E_INVALID_ARG, rv_belief_entropy(u4, 4, NULL));
    ASSERT_STATUS(RV_E_INVALID_ARG, rv_belief_entropy(NULL, 2, &h));
}

/* --------------------------------------------------------------- filter */

static void test_filter(void) {
    int32_t codes[5] = {7, 3, 7, -2, 7};
    double post[5] = {0.1, 0.2, 0.3, 0.15, 0.25};
    uint64_t kept[5];
    double out[5];
    size_t n = 99;
    ASSERT_OK(rv_belief_filter(codes, post, 5, 7, kept, out, &n));
    ASSERT_EQ(n, 3);
    ASSERT_EQ(kept[0], 0);
    ASSERT_EQ(kept[1], 2);
    ASSERT_EQ(kept[2], 4);
    ASSERT_NEAR(out[0], 0.1 / 0.65, 1e-15);
    ASSERT_NEAR(out[1], 0.3 / 0.65, 1e-15);
    ASSERT_NEAR(out[2], 0.25 / 0.65, 1e-15);
    ASSERT_OK(rv_belief_filter(codes, post, 5, -2, kept, out, &n));
    ASSERT_EQ(n, 1);
    ASSERT_EQ(kept[0], 3);
    ASSERT_NEAR(out[0], 1.0, 0);
    /* no candidate has the value: the empty belief */
    ASSERT_OK(rv_belief_filter(codes, post, 5, 42, kept, out, &n));
    ASSERT_EQ(n, 0);
    /* the matching candidates hold no mass: also empty */
    double zmass[5] = {0.5, 0.5, 0, 0, 0};
    ASSERT_OK(rv_belief_filter(codes, zmass, 5, -2, kept, out, &n));
    ASSERT_EQ(n, 0);
    /* in place */
    double inplace[5] = {0.1, 0.2, 0.3, 0.15, 0.25};
    ASSERT_OK(rv_belief_filter(codes, inplace, 5, 7, kept, inplace, &n));
    ASSERT_EQ(n, 3);
    ASSERT_NEAR(inplace[2], 0.25 / 0.65, 1e-15);
    ASSERT_OK(rv_belief_filter(NULL, NULL, 0, 1, NULL, NULL, &n));
    ASSERT_EQ(n, 0);
    double neg[5] = {0.1, -0.2, 0.3, 0.15, 0.25};
    ASSERT_STATUS(RV_E_INVALID_ARG, rv_belief_filter(codes, neg, 5, 7, kept, out, &n));
    ASSERT_STR_CONTAINS(rv_errmsg(), "posterior[1]");
    ASSERT_STATUS(RV_E_INVALID_ARG, rv_belief_filter(codes, post, 5, 7, NULL, out, &n));
    ASSERT_STATUS(RV_E_INVALID_ARG, rv_belief_filter(codes, post, 5, 7, kept, out, NULL));
}

/* ------------------------------------------------------------- reweight */

static void test_reweight(void) {
    double post[3] = {0.5, 0.25, 0.25};
    double lik[3] = {1, 2, 0};
    double out[3];
    ASSERT_OK(rv_belief_reweight(post, lik, 3, out));
    ASSERT_NEAR(out[0], 0.5, 1e-15);
    ASSERT_NEAR(out[1], 0.5, 1e-15);
    ASSERT_EQ(out[2] == 0.0, 1);
    /* huge and tiny likelihoods neither overflow nor underflow */
    double big[3] = {1e308, 1e308, 0};
    ASSERT_OK(rv_belief_reweight(post, big, 3, out));
    ASSERT_NEAR(out[0], 2.0 / 3.0, 1e-15);
    double tiny[3] = {4e-320, 4e-320, 4e-320};
    ASSERT_OK(rv_belief_reweight(post, tiny, 3, out));
    ASSERT_NEAR(out[0], 0.5, 1e-12);
    /* in place */
    double p2[2] = {0.5, 0.5};
    double l2[2] = {3, 1};
    ASSERT_OK(rv_belief_reweight(p2, l2, 2, p2));
    ASSERT_NEAR(p2[0], 0.75, 1e-15);
    /* errors leave out untouched */
    double sentinel[3] = {-7, -7, -7};
    double nan_l[3] = {1, NAN, 1};
    ASSERT_STATUS(RV_E_INVALID_ARG, rv_belief_reweight(post, nan_l, 3, sentinel));
    ASSERT_STR_CONTAINS(rv_errmsg(), "likelihoods[1] is NaN");
    ASSERT_EQ(sentinel[0] == -7.0, 1);
    double inf_l[3] = {1, 1, INFINITY};
    ASSERT_STATUS(RV_E_INVALID_ARG, rv_belief_reweight(post, inf_l, 3, sentinel));
    ASSERT_STR_CONTAINS(rv_errmsg(), "likelihoods[2]");
    double neg_l[3] = {1, -0.5, 1};
    ASSERT_STATUS(RV_E_INVALID_ARG, rv_belief_reweight(post, neg_l, 3, sentinel));
    ASSERT_STR_CONTAINS(rv_errmsg(), "non-negative");
    double zero_l[3] = {0, 0, 0};
    ASSERT_STATUS(RV_E_INFEASIBLE, rv_belief_reweight(post, zero_l, 3, sentinel));
    ASSERT_STR_CONTAINS(rv_errmsg(), "zero probability");
    ASSERT_STR_CONTAINS(rv_errmsg(), "zero likelihood");
    double only_zero_mass[3] = {0, 0, 1};
    double p0[3] = {0.5, 0.5, 0};
    ASSERT_STATUS(RV_E_INFEASIBLE, rv_belief_reweight(p0, only_zero_mass, 3, sentinel));
    ASSERT_EQ(sentinel[2] == -7.0, 1);
    ASSERT_STATUS(RV_E_INFEASIBLE, rv_belief_reweight(NULL, NULL, 0, NULL));
    double bad_p[3] = {0.5, NAN, 0.5};
    ASSERT_STATUS(RV_E_INVALID_ARG, rv_belief_reweight(bad_p, lik, 3, out));
    ASSERT_STR_CONTAINS(rv_errmsg(), "posterior[1]");
    ASSERT_STATUS(RV_E_INVALID_ARG, rv_belief_reweight(post, NULL, 3, out));
}

/* ----------------------------------------------------------- likelihood */

static void test_likelihood(void) {
    int32_t codes[5] = {1, 2, 3, 1, 2};
    double out[5];
    ASSERT_OK(rv_belief_likelihood(codes, 5, 2, 0.0, out));
    ASSERT_EQ(out[1] == 1.0 && out[4] == 1.0 && out[0] == 0.0, 1);
    ASSERT_OK(rv_belief_likelihood(codes, 5, 2, 0.3, out));
    ASSERT_NEAR(out[1], 0.7, 1e-15);
    ASSERT_NEAR(out[0], 0.15, 1e-15); /* 0.3 spread over the 2 other values */
    ASSERT_NEAR(out[2], 0.15, 1e-15);
    /* a value no candidate has: impossible when exact ... */
    ASSERT_OK(rv_belief_likelihood(codes, 5, 9, 0.0, out));
    for (int i = 0; i < 5; i++) ASSERT_EQ(out[i] == 0.0, 1);
    /* ... and under noise one more answer, a miss for every candidate: 0.3 / 3 */
    ASSERT_OK(rv_belief_likelihood(codes, 5, 9, 0.3, out));
    for (int i = 0; i < 5; i++) ASSERT_NEAR(out[i], 0.1, 1e-15);
    /* a constant column: every candidate hits (1 - noise), or misses alike */
    int32_t same[3] = {4, 4, 4};
    ASSERT_OK(rv_belief_likelihood(same, 3, 4, 0.5, out));
    for (int i = 0; i < 3; i++) ASSERT_NEAR(out[i], 0.5, 1e-15);
    ASSERT_OK(rv_belief_likelihood(same, 3, 4, 0.0, out));
    for (int i = 0; i < 3; i++) ASSERT_EQ(out[i] == 1.0, 1);
    ASSERT_OK(rv_belief_likelihood(same, 3, 5, 0.2, out));
    for (int i = 0; i < 3; i++) ASSERT_NEAR(out[i], 0.2, 1e-15);
    /* sparse codes use the hash path for the distinct count */
    int32_t sparse[4] = {INT32_MIN, INT32_MAX, 0, INT32_MAX};
    ASSERT_OK(rv_belief_likelihood(sparse, 4, INT32_MAX, 0.2, out));
    ASSERT_NEAR(out[0], 0.1, 1e-15);
    ASSERT_NEAR(out[1], 0.8, 1e-15);
    ASSERT_STATUS(RV_E_INVALID_ARG, rv_belief_likelihood(codes, 5, 2, 1.0, out));
    ASSERT_STR_CONTAINS(rv_errmsg(), "noise");
    ASSERT_STATUS(RV_E_INVALID_ARG, rv_belief_likelihood(codes, 5, 2, -0.1, out));
    ASSERT_STATUS(RV_E_INVALID_ARG, rv_belief_likelihood(codes, 5, 2, NAN, out));
    ASSERT_STATUS(RV_E_INVALID_ARG, rv_belief_likelihood(NULL, 5, 2, 0.1, out));
    ASSERT_OK(rv_belief_likelihood(NULL, 0, 2, 0.1, NULL));
}

/* ------------------------------------------------------------------- MI */

static void check_against_reference(size_t n_rows, size_t n_cols, int sparse, int use_rows,
                                    double noise, uint64_t seed) {
    int32_t *codes = malloc(n_rows * n_cols * sizeof(int32_t));
    fill_frame(codes, n_rows, n_cols, seed, sparse);
    size_t n_cand = use_rows ? n_rows / 2 + 1 : n_rows;
    uint64_t *rows = NULL;
    if (use_rows) {
        rows = malloc(n_cand * sizeof(uint64_t));
        for (size_t i = 0; i < n_cand; i++) rows[i] = (i * 7 + 3) % n_rows;
        /* distinct because 7 is coprime with the odd n_rows used below */
    }
    double *post = malloc(n_cand * sizeof(double));
    fill_posterior(post, n_cand, seed + 1, 1);
    double *mi = malloc(n_cols * sizeof(double));
    double *hc = malloc(n_cols * sizeof(double));
    uint64_t *kv = malloc(n_cols * sizeof(uint64_t));
    uint64_t *pairs = malloc(n_cols * sizeof(uint64_t));
    double hr;
    uint32_t best;
    rv_belief_options opt;
    rv_belief_options_init(&opt);
    opt.noise = noise;
    opt.n_threads = 1;
    rv_status st = rv_belief_mi(codes, n_rows, n_cols, rows, n_cand, post, &opt, mi, hc, kv, pairs,
                                &hr, &best);
    EXPECT_OK(st);
    double total = 0;
    for (size_t i = 0; i < n_cand; i++) total += post[i];
    double hr_ref = 0;
    for (size_t i = 0; i < n_cand; i++) hr_ref += xlog2x_neg(post[i] / total);
    EXPECT_NEAR(hr, hr_ref, 1e-12);
    for (size_t c = 0; c < n_cols && st == RV_OK; c++) {
        double hv;
        uint64_t k;
        double want = ref_mi(codes + c * n_rows, rows, n_cand, post, noise, &hv, &k);
        EXPECT_NEAR(mi[c], want, 1e-12);
        EXPECT_NEAR(hc[c], hv, 1e-12);
        EXPECT_EQ(kv[c], k);
        EXPECT_TRUE(mi[c] >= 0 && mi[c] <= hr + 1e-15 && mi[c] <= hc[c] + 1e-15);
        /* pairs split, counted directly */
        uint64_t split = 0;
        for (size_t i = 0; i < n_cand; i++)
            for (size_t j = i + 1; j < n_cand; j++) {
                int32_t a = codes[c * n_rows + (rows ? rows[i] : i)];
                int32_t b = codes[c * n_rows + (rows ? rows[j] : j)];
                split += a != b;
            }
        EXPECT_EQ(pairs[c], split);
        if (c % 5 == 0) EXPECT_TRUE(mi[c] == 0.0); /* constant column */
    }
    free(codes);
    free(rows);
    free(post);
    free(mi);
    free(hc);
    free(kv);
    free(pairs);
}

static void test_mi_matches_definition(void) {
    const double noises[4] = {0.0, 0.05, 0.3, 0.9};
    for (int sparse = 0; sparse < 2; sparse++)
        for (int use_rows = 0; use_rows < 2; use_rows++)
            for (int k = 0; k < 4; k++)
                check_against_reference(61, 12, sparse, use_rows, noises[k],
                                        100 + (uint64_t)(sparse * 8 + use_rows * 4 + k));
}

static void test_mi_small_cases(void) {
    /* two candidates, one column that splits them: 1 bit */
    int32_t codes[4] = {0, 1, 5, 5};
    double post[2] = {0.5, 0.5};
    double mi[2], hc[2];
    uint64_t kv[2], pairs[2];
    double hr;
    uint32_t best;
    ASSERT_OK(rv_belief_mi(codes, 2, 2, NULL, 2, post, NULL, mi, hc, kv, pairs, &hr, &best));
    ASSERT_NEAR(mi[0], 1.0, 1e-15);
    ASSERT_EQ(mi[1] == 0.0, 1);
    ASSERT_EQ(best, 0);
    ASSERT_EQ(pairs[0], 1);
    ASSERT_EQ(pairs[1], 0);
    /* noise: binary symmetric channel, I = 1 - h(e) */
    rv_belief_options opt;
    rv_belief_options_init(&opt);
    opt.noise = 0.1;
    ASSERT_OK(rv_belief_mi(codes, 2, 2, NULL, 2, post, &opt, mi, NULL, NULL, NULL, NULL, NULL));
    ASSERT_NEAR(mi[0], 1.0 + 0.1 * log2(0.1) + 0.9 * log2(0.9), 1e-15);
    ASSERT_EQ(mi[1] == 0.0, 1);
    /* unnormalised posterior is normalised */
    double post2[2] = {3, 3};
    ASSERT_OK(rv_belief_mi(codes, 2, 2, NULL, 2, post2, NULL, mi, NULL, NULL, NULL, &hr, NULL));
    ASSERT_NEAR(hr, 1.0, 1e-15);
    ASSERT_NEAR(mi[0], 1.0, 1e-15);
    /* a candidate with zero posterior: the column still has K = 2 values but
    ** the gain is 0, and nothing is informative */
    double post3[2] = {1, 0};
    ASSERT_OK(rv_belief_mi(codes, 2, 2, NULL, 2, post3, &opt, mi, NULL, kv, NULL, &hr, &best));
    ASSERT_EQ(kv[0], 2);
    ASSERT_EQ(mi[0] == 0.0, 1);
    ASSERT_EQ(best, RV_BELIEF_NONE);
    /* no candidates, no columns */
    ASSERT_OK(rv_belief_mi(NULL, 0, 0, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, &hr, &best));
    ASSERT_EQ(best, RV_BELIEF_NONE);
    ASSERT_OK(rv_belief_mi(codes, 2, 2, NULL, 0, NULL, NULL, mi, NULL, NULL, NULL, &hr, &best));
    ASSERT_EQ(mi[0] == 0.0 && mi[1] == 0.0, 1);
    ASSERT_EQ(best, RV_BELIEF_NONE);
}

static void test_mi_best_costs_and_ties(void) {
    /* 4 candidates; col 0: 2 bits, col 1: 1 bit, col 2 identical to col 1 */
    int32_t codes[12] = {0, 1, 2, 3, 0, 0, 1, 1, 0, 0, 1, 1};
    double post[4] = {1, 1, 1, 1};
    double mi[3];
    uint32_t best;
    ASSERT_OK(rv_belief_mi(codes, 4, 3, NULL, 4, post, NULL, mi, NULL, NULL, NULL, NULL, &best));
    ASSERT_EQ(best, 0);
    rv_belief_options opt;
    rv_belief_options_init(&opt);
    double costs[3] = {3.0, 1.0, 1.0};
    opt.costs = costs;
    ASSERT_OK(rv_belief_mi(codes, 4, 3, NULL, 4, post, &opt, mi, NULL, NULL, NULL, NULL, &best));
    ASSERT_EQ(best, 1); /* 2/3 < 1/1; the tie between 1 and 2 goes to 1 */
    costs[0] = 2.0;     /* 2/2 == 1/1: a tie, the lower index wins */
    ASSERT_OK(rv_belief_mi(codes, 4, 3, NULL, 4, post, &opt, mi, NULL, NULL, NULL, NULL, &best));
    ASSERT_EQ(best, 0);
    /* a free column that tells something apart wins outright: 1 bit at
    ** cost 0 beats 2 bits at cost 2; among free ones the larger gain wins */
    costs[1] = 0.0;
    ASSERT_OK(rv_belief_mi(codes, 4, 3, NULL, 4, post, &opt, mi, NULL, NULL, NULL, NULL, &best));
    ASSERT_EQ(best, 1);
    costs[0] = 0.0;
    ASSERT_OK(rv_belief_mi(codes, 4, 3, NULL, 4, post, &opt, mi, NULL, NULL, NULL, NULL, &best));
    ASSERT_EQ(best, 0);
    const double bad[] = {-1.0, -0.5e-300, NAN, INFINITY};
    for (int i = 0; i < 4; i++) {
        costs[1] = bad[i];
        ASSERT_STATUS(RV_E_INVALID_ARG, rv_belief_mi(codes, 4, 3, NULL, 4, post, &opt, mi, NULL,
                                                     NULL, NULL, NULL, &best));
        ASSERT_STR_CONTAINS(rv_errmsg(), "costs[1]");
    }
}

static void test_mi_errors(void) {
    int32_t codes[4] = {0, 1, 0, 1};
    double post[2] = {0.5, 0.5};
    double mi[2];
    rv_belief_options opt;
    rv_belief_options_init(&opt);
    opt.noise = 1.0;
    ASSERT_STATUS(RV_E_INVALID_ARG,
                  rv_belief_mi(codes, 2, 2, NULL, 2, post, &opt, mi, NULL, NULL, NULL, NULL, NULL));
    ASSERT_STR_CONTAINS(rv_errmsg(), "noise");
    opt.noise = NAN;
    ASSERT_STATUS(RV_E_INVALID_ARG,
                  rv_belief_mi(codes, 2, 2, NULL, 2, post, &opt, mi, NULL, NULL, NULL, NULL, NULL));
    uint64_t rows[2] = {0, 2};
    ASSERT_STATUS(RV_E_RANGE,
                  rv_belief_mi(codes, 2, 2, rows, 2, post, NULL, mi, NULL, NULL, NULL, NULL, NULL));
    ASSERT_STR_CONTAINS(rv_errmsg(), "rows[1]");
    ASSERT_STATUS(RV_E_RANGE,
                  rv_belief_mi(codes, 2, 2, NULL, 3, post, NULL, mi, NULL, NULL, NULL, NULL, NULL));
    double zero[2] = {0, 0};
    ASSERT_STATUS(RV_E_INVALID_ARG,
                  rv_belief_mi(codes, 2, 2, NULL, 2, zero, NULL, mi, NULL, NULL, NULL, NULL, NULL));
    double nanp[2] = {NAN, 1};
    ASSERT_STATUS(RV_E_INVALID_ARG,
                  rv_belief_mi(codes, 2, 2, NULL, 2, nanp, NULL, mi, NULL, NULL, NULL, NULL, NULL));
    ASSERT_STR_CONTAINS(rv_errmsg(), "posterior[0]");
    ASSERT_STATUS(RV_E_INVALID_ARG, rv_belief_mi(codes, 2, 2, NULL, 2, post, NULL, NULL, NULL, NULL,
                                                 NULL, NULL, NULL));
    ASSERT_STATUS(RV_E_INVALID_ARG,
                  rv_belief_mi(NULL, 2, 2, NULL, 2, post, NULL, mi, NULL, NULL, NULL, NULL, NULL));
}

/* Large enough to run threaded (>= 2^18 cells): bit-identical outputs for
** 1, 2, 3 and 8 threads, on dense and sparse codes, with and without rows. */
static void test_mi_threads_deterministic(void) {
    enum { R = 20011, C = 37 };
    int32_t *codes = malloc((size_t)R * C * sizeof(int32_t));
    double *post = malloc(R * sizeof(double));
    uint64_t *rows = malloc(R * sizeof(uint64_t));
    for (size_t i = 0; i < R; i++) rows[i] = (i * 7919) % R;
    fill_posterior(post, R, 9, 1);
    double mi1[C], mi2[C], hc1[C], hc2[C];
    uint64_t p1[C], p2[C];
    uint32_t b1, b2;
    for (int sparse = 0; sparse < 2; sparse++) {
        fill_frame(codes, R, C, 77 + (uint64_t)sparse, sparse);
        for (int use_rows = 0; use_rows < 2; use_rows++) {
            rv_belief_options opt;
            rv_belief_options_init(&opt);
            opt.noise = 0.15;
            opt.n_threads = 1;
            ASSERT_OK(rv_belief_mi(codes, R, C, use_rows ? rows : NULL, R, post, &opt, mi1, hc1,
                                   NULL, p1, NULL, &b1));
            const unsigned threads[3] = {2, 3, 8};
            for (int t = 0; t < 3; t++) {
                opt.n_threads = threads[t];
                ASSERT_OK(rv_belief_mi(codes, R, C, use_rows ? rows : NULL, R, post, &opt, mi2, hc2,
                                       NULL, p2, NULL, &b2));
                ASSERT_EQ(memcmp(mi1, mi2, sizeof mi1), 0);
                ASSERT_EQ(memcmp(hc1, hc2, sizeof hc1), 0);
                ASSERT_EQ(memcmp(p1, p2, sizeof p1), 0);
                ASSERT_EQ(b1, b2);
            }
            /* spot-check one column against the definition */
            double want =
                ref_mi(codes + 4 * (size_t)R, use_rows ? rows : NULL, R, post, 0.15, NULL, NULL);
            ASSERT_NEAR(mi1[4], want, 1e-11);
        }
    }
    free(codes);
    free(post);
    free(rows);
}

static int stop_after_3(void *ctx, uint64_t done, uint64_t total) {
    int *calls = ctx;
    (*calls)++;
    return done >= 3 && total > 0;
}

static void test_mi_progress_interrupts(void) {
    enum { R = 9000, C = 40 };
    int32_t *codes = malloc((size_t)R * C * sizeof(int32_t));
    double *post = malloc(R * sizeof(double));
    double mi[C];
    fill_frame(codes, R, C, 5, 0);
    fill_posterior(post, R, 6, 0);
    for (unsigned t = 1; t <= 2; t++) {
        int calls = 0;
        rv_belief_options opt;
        rv_belief_options_init(&opt);
        opt.n_threads = t;
        opt.progress = stop_after_3;
        opt.progress_ctx = &calls;
        uint32_t best = 0;
        EXPECT_STATUS(RV_E_INTERRUPTED, rv_belief_mi(codes, R, C, NULL, R, post, &opt, mi, NULL,
                                                     NULL, NULL, NULL, &best));
        EXPECT_TRUE(calls >= 1);
        EXPECT_EQ(best, RV_BELIEF_NONE);
    }
    free(codes);
    free(post);
}

/* ------------------------------------------------------ allocation sweep */

typedef rv_status (*op_fn)(void *ctx);

typedef struct {
    const int32_t *codes;
    size_t n_rows, n_cols, n_cand;
    const uint64_t *rows;
    const double *post;
    unsigned threads;
    double noise;
    double mi[64];
    uint32_t best;
    double lik[4096];
} mi_ctx;

static rv_status op_mi(void *p) {
    mi_ctx *c = p;
    rv_belief_options opt;
    rv_belief_options_init(&opt);
    opt.n_threads = c->threads;
    opt.noise = c->noise;
    return rv_belief_mi(c->codes, c->n_rows, c->n_cols, c->rows, c->n_cand, c->post, &opt, c->mi,
                        NULL, NULL, NULL, NULL, &c->best);
}

static rv_status op_lik(void *p) {
    mi_ctx *c = p;
    return rv_belief_likelihood(c->codes, c->n_cand, c->codes[1], c->noise, c->lik);
}

/* Fail allocation n = 1, 2, ... until a run finishes without reaching n.
** Each run returns RV_OK or RV_E_NOMEM; an OK run matches the clean one. */
static void sweep(op_fn op, mi_ctx *ctx, size_t out_bytes, void *out) {
    unsigned char *clean = malloc(out_bytes);
    rv__test_fail_alloc_after(0);
    ASSERT_OK(op(ctx));
    memcpy(clean, out, out_bytes);
    for (uint64_t n = 1; n < 200; n++) {
        memset(out, 0, out_bytes);
        rv__test_fail_alloc_after(n);
        rv_status st = op(ctx);
        uint64_t used = rv__test_fail_alloc_after(0);
        if (st == RV_E_NOMEM) {
            EXPECT_STR_CONTAINS(rv_errmsg(), "out of memory");
            continue;
        }
        EXPECT_OK(st);
        EXPECT_EQ(memcmp(clean, out, out_bytes), 0);
        if (used < n) break; /* finished without reaching the failing call */
    }
    free(clean);
}

static void test_oom_sweep(void) {
    enum { R = 9001, C = 30 };
    int32_t *codes = malloc((size_t)R * C * sizeof(int32_t));
    double *post = malloc(R * sizeof(double));
    uint64_t *rows = malloc(R * sizeof(uint64_t));
    for (size_t i = 0; i < R; i++) rows[i] = (i * 11) % R;
    fill_frame(codes, R, C, 31, 1);
    fill_posterior(post, R, 32, 0);
    mi_ctx ctx = {codes, R, C, R, rows, post, 1, 0.2, {0}, 0, {0}};
    sweep(op_mi, &ctx, sizeof ctx.mi, ctx.mi);
    ctx.threads = 2; /* threaded: all scratch comes from the calling thread */
    sweep(op_mi, &ctx, sizeof ctx.mi, ctx.mi);
    ctx.n_cand = 4096;
    ctx.codes = codes + 3 * (size_t)R;
    sweep(op_lik, &ctx, sizeof ctx.lik, ctx.lik);
    free(codes);
    free(post);
    free(rows);
}

int main(void) {
    RUN_TEST(test_entropy);
    RUN_TEST(test_filter);
    RUN_TEST(test_reweight);
    RUN_TEST(test_likelihood);
    RUN_TEST(test_mi_matches_definition);
    RUN_TEST(test_mi_small_cases);
    RUN_TEST(test_mi_best_costs_and_ties);
    RUN_TEST(test_mi_errors);
    RUN_TEST(test_mi_threads_deterministic);
    RUN_TEST(test_mi_progress_interrupts);
    RUN_TEST(test_oom_sweep);
    return RV_TEST_SUMMARY();
}
