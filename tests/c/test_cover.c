/*
** Set cover: construction, queries, the five solvers against brute force,
** greedy paths against a plain reference greedy, the row-pair universe of
** keys against naive double loops, and partition-refinement key paths
** against the pair-universe path.
*/
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>

#include "rv_test.h"

#define MAX_SETS 64 /* every instance here has at most this many sets */

/* Run `call` (a helper built from ASSERTs); return if it recorded failures. */
#define CHECKED(call)                                                                              \
    do {                                                                                           \
        long rvt_f_ = rvt_n_failures;                                                              \
        call;                                                                                      \
        if (rvt_n_failures != rvt_f_) return;                                                      \
    } while (0)

static const rv_cover_strategy ALL_STRATEGIES[] = {RV_COVER_GREEDY, RV_COVER_EXACT,  RV_COVER_SA,
                                                   RV_COVER_GA,     RV_COVER_HYBRID, RV_COVER_LP};
#define N_STRATEGIES 6

static const char *strategy_name(rv_cover_strategy s) {
    switch (s) {
    case RV_COVER_GREEDY:
        return "greedy";
    case RV_COVER_EXACT:
        return "exact";
    case RV_COVER_SA:
        return "sa";
    case RV_COVER_GA:
        return "ga";
    case RV_COVER_HYBRID:
        return "hybrid";
    case RV_COVER_LP:
        return "lp";
    }
    return "?";
}

/* ------------------------------------------------------------- instances */

/* A set cover instance in CSR form plus a dense membership matrix that the
** naive checks use. */
typedef struct {
    size_t n_el, n_sets;
    uint64_t *off; /* n_sets + 1 */
    uint32_t *el;
    double *cost; /* n_sets values; passed as NULL when unit */
    int unit;
    uint8_t *member; /* n_sets * n_el */
} inst_t;

static void inst_free(inst_t *in) {
    free(in->off);
    free(in->el);
    free(in->cost);
    free(in->member);
    memset(in, 0, sizeof *in);
}

static const double *inst_costs(const inst_t *in) {
    return in->unit ? NULL : in->cost;
}

static double inst_cost(const inst_t *in, size_t s) {
    return in->unit ? 1.0 : in->cost[s];
}

/* Random instance: each element joins each set with probability `density`;
** cost_kind 0 unit, 1 integers 1..5 (many ties), 2 reals in [0.1, 10),
** 3 and 4 as 1 and 2 but about one set in three free (cost 0).
** About one entry in eight is written twice (duplicates are allowed). */
static void inst_random(inst_t *in, rv_rng *r, size_t n_el, size_t n_sets, double density,
                        int cost_kind) {
    memset(in, 0, sizeof *in);
    in->n_el = n_el;
    in->n_sets = n_sets;
    in->off = calloc(n_sets + 1, sizeof(uint64_t));
    in->el = malloc((2 * n_el * n_sets + 1) * sizeof(uint32_t));
    in->cost = malloc((n_sets + 1) * sizeof(double));
    in->member = calloc(n_sets * n_el + 1, 1);
    in->unit = cost_kind == 0;
    size_t k = 0;
    for (size_t s = 0; s < n_sets; s++) {
        for (size_t e = 0; e < n_el; e++) {
            if (rv_rng_uniform(r) < density) {
                in->el[k++] = (uint32_t)e;
                in->member[s * n_el + e] = 1;
                if (rv_rng_below(r, 8) == 0) in->el[k++] = (uint32_t)e;
            }
        }
        in->off[s + 1] = k;
        in->cost[s] =
            cost_kind % 2 == 1 ? (double)(1 + rv_rng_below(r, 5)) : 0.1 + 9.9 * rv_rng_uniform(r);
        if (cost_kind >= 3 && rv_rng_below(r, 3) == 0) in->cost[s] = 0.0;
    }
}

/* Instance from explicit member lists: sets[s] is a -1 terminated list. */
static void inst_from_lists(inst_t *in, size_t n_el, size_t n_sets, const int *const *sets,
                            const double *costs) {
    memset(in, 0, sizeof *in);
    in->n_el = n_el;
    in->n_sets = n_sets;
    in->off = calloc(n_sets + 1, sizeof(uint64_t));
    size_t total = 0;
    for (size_t s = 0; s < n_sets; s++)
        for (const int *q = sets[s]; *q >= 0; q++) total++;
    in->el = malloc((total + 1) * sizeof(uint32_t));
    in->cost = malloc((n_sets + 1) * sizeof(double));
    in->member = calloc(n_sets * n_el + 1, 1);
    in->unit = costs == NULL;
    size_t k = 0;
    for (size_t s = 0; s < n_sets; s++) {
        for (const int *q = sets[s]; *q >= 0; q++) {
            in->el[k++] = (uint32_t)*q;
            in->member[s * n_el + (size_t)*q] = 1;
        }
        in->off[s + 1] = k;
        in->cost[s] = costs ? costs[s] : 1.0;
    }
}

static rv_status inst_build(const inst_t *in, rv_cover **out) {
    return rv_cover_create(in->n_el, in->n_sets, in->off, in->el, inst_costs(in), out);
}

/* Build the problem of instance `in` into `p`, or free it and fail the test. */
#define BUILD_OR_FAIL(in, p)                                                                       \
    do {                                                                                           \
        if (inst_build((in), (p)) != RV_OK) {                                                      \
            inst_free(in);                                                                         \
            FAILF("create failed: %s", rv_errmsg());                                               \
        }                                                                                          \
    } while (0)

static uint64_t naive_coverable(const inst_t *in) {
    uint64_t n = 0;
    for (size_t e = 0; e < in->n_el; e++) {
        int any = 0;
        for (size_t s = 0; s < in->n_sets && !any; s++) any = in->member[s * in->n_el + e];
        n += (uint64_t)any;
    }
    return n;
}

/* Cheapest selection covering >= required elements, by enumerating every
** subset (n_sets <= 16, n_el <= 64).  INFINITY when none does. */
static double brute_force(const inst_t *in, uint64_t required) {
    size_t n = in->n_sets, N = (size_t)1 << n;
    uint64_t mask[16] = {0};
    for (size_t s = 0; s < n; s++)
        for (size_t e = 0; e < in->n_el; e++)
            if (in->member[s * in->n_el + e]) mask[s] |= (uint64_t)1 << e;
    uint64_t *uni = malloc(N * sizeof(uint64_t));
    double *cost = malloc(N * sizeof(double));
    double best = required == 0 ? 0.0 : INFINITY;
    uni[0] = 0;
    cost[0] = 0;
    for (size_t m = 1; m < N; m++) {
        size_t low = (size_t)__builtin_ctzll((unsigned long long)m), rest = m & (m - 1);
        uni[m] = uni[rest] | mask[low];
        cost[m] = cost[rest] + inst_cost(in, low);
        if ((uint64_t)__builtin_popcountll(uni[m]) >= required && cost[m] < best) best = cost[m];
    }
    free(uni);
    free(cost);
    return best;
}

/* H(k) = 1 + 1/2 + ... + 1/k. */
static double harmonic(size_t k) {
    double h = 0;
    for (size_t i = 1; i <= k; i++) h += 1.0 / (double)i;
    return h;
}

static size_t max_set_size(const inst_t *in) {
    size_t best = 0;
    for (size_t s = 0; s < in->n_sets; s++) {
        size_t c = 0;
        for (size_t e = 0; e < in->n_el; e++) c += in->member[s * in->n_el + e];
        if (c > best) best = c;
    }
    return best;
}

/* rv_cover_solve with quick metaheuristic settings when `fast`. */
static rv_status run_solve(const rv_cover *p, rv_cover_strategy s, uint64_t required, uint64_t seed,
                           int fast, uint32_t *sel, size_t *n, rv_cover_info *info) {
    rv_cover_options o;
    rv_cover_options_init(&o);
    o.strategy = s;
    o.n_required = required;
    o.seed = seed;
    if (fast) {
        o.iterations = 4000;
        o.population = 16;
        o.generations = 40;
        o.lp_eps = 0.1;
    }
    return rv_cover_solve(p, &o, sel, rv_cover_n_sets(p), n, info);
}

static uint64_t covered_by(const rv_cover *p, const uint32_t *sel, size_t n) {
    uint64_t c = UINT64_MAX;
    if (rv_cover_covered(p, sel, n, NULL, &c) != RV_OK) return UINT64_MAX;
    return c;
}

/*
** Check a selection: indices valid and distinct, ascending unless greedy,
** coverage >= required, info consistent, and no set that adds nothing
** (greedy: each pick adds to the ones before it; the others: dropping any
** one set loses an element).  `nonredundant` 0 skips that last check.
*/
static void check_cover(const rv_cover *p, const inst_t *in, rv_cover_strategy strat,
                        uint64_t required, const uint32_t *sel, size_t n, const rv_cover_info *info,
                        int nonredundant, const char *ctx) {
    uint8_t seen[MAX_SETS] = {0};
    uint32_t tmp[MAX_SETS];
    if (n > in->n_sets)
        FAILF("%s %s: %zu sets selected of %zu", ctx, strategy_name(strat), n, in->n_sets);
    double cost = 0;
    for (size_t i = 0; i < n; i++) {
        if (sel[i] >= in->n_sets)
            FAILF("%s %s: index %u out of range", ctx, strategy_name(strat), sel[i]);
        if (seen[sel[i]]) FAILF("%s %s: set %u selected twice", ctx, strategy_name(strat), sel[i]);
        seen[sel[i]] = 1;
        if (strat != RV_COVER_GREEDY && i > 0 && sel[i] <= sel[i - 1])
            FAILF("%s %s: selection not ascending at position %zu", ctx, strategy_name(strat), i);
        cost += inst_cost(in, sel[i]);
    }
    uint64_t cov = covered_by(p, sel, n);
    if (cov == UINT64_MAX || cov < required)
        FAILF("%s %s: covers %llu < required %llu", ctx, strategy_name(strat),
              (unsigned long long)cov, (unsigned long long)required);
    if (info) {
        if (info->covered != cov)
            FAILF("%s %s: info.covered %llu, actual %llu", ctx, strategy_name(strat),
                  (unsigned long long)info->covered, (unsigned long long)cov);
        if (!(fabs(info->cost - cost) <= 1e-9 * (1 + cost)))
            FAILF("%s %s: info.cost %.17g, actual %.17g", ctx, strategy_name(strat), info->cost,
                  cost);
    }
    if (!nonredundant) return;
    if (strat == RV_COVER_GREEDY) {
        uint64_t prev = 0;
        for (size_t i = 0; i < n; i++) {
            uint64_t c = covered_by(p, sel, i + 1);
            if (c <= prev) FAILF("%s greedy: pick %zu (set %u) adds nothing", ctx, i, sel[i]);
            prev = c;
        }
    } else {
        for (size_t i = 0; i < n; i++) {
            size_t m = 0;
            for (size_t j = 0; j < n; j++)
                if (j != i) tmp[m++] = sel[j];
            if (covered_by(p, tmp, m) >= cov)
                FAILF("%s %s: set %u adds nothing to the selection", ctx, strategy_name(strat),
                      sel[i]);
        }
    }
}

/* ------------------------------------------------------- construction */

static void test_create_errors(void) {
    uint64_t off[4] = {0, 2, 3, 5};
    uint32_t el[5] = {0, 1, 2, 3, 0};
    double costs[3] = {1, 2, 3};
    rv_cover *p = (rv_cover *)&p; /* non-NULL junk: must be cleared */

    ASSERT_STATUS(RV_E_INVALID_ARG, rv_cover_create(4, 3, off, el, costs, NULL));
    ASSERT_STR_CONTAINS(rv_errmsg(), "out");

    ASSERT_STATUS(RV_E_INVALID_ARG, rv_cover_create(4, 3, NULL, el, costs, &p));
    ASSERT_TRUE(p == NULL);
    ASSERT_STR_CONTAINS(rv_errmsg(), "offsets");

    uint64_t off_bad0[4] = {1, 2, 3, 5};
    p = (rv_cover *)&p;
    ASSERT_STATUS(RV_E_INVALID_ARG, rv_cover_create(4, 3, off_bad0, el, costs, &p));
    ASSERT_TRUE(p == NULL);
    ASSERT_STR_CONTAINS(rv_errmsg(), "offsets[0]");

    uint64_t off_dec[4] = {0, 3, 2, 5};
    ASSERT_STATUS(RV_E_INVALID_ARG, rv_cover_create(4, 3, off_dec, el, costs, &p));
    ASSERT_STR_CONTAINS(rv_errmsg(), "offsets");

    ASSERT_STATUS(RV_E_INVALID_ARG, rv_cover_create(4, 3, off, NULL, costs, &p));
    ASSERT_STR_CONTAINS(rv_errmsg(), "elements");

    /* element >= n_elements: RV_E_RANGE per the header */
    uint32_t el_big[5] = {0, 1, 2, 4, 0};
    ASSERT_STATUS(RV_E_RANGE, rv_cover_create(4, 3, off, el_big, costs, &p));
    ASSERT_STR_CONTAINS(rv_errmsg(), "element 4");

    ASSERT_STATUS(RV_E_RANGE,
                  rv_cover_create((size_t)RV_COVER_MAX_ELEMENTS + 1, 3, off, el, costs, &p));
    ASSERT_STR_CONTAINS(rv_errmsg(), "n_elements");

    const double bad[] = {-1.0, -1e-300, NAN, INFINITY, -INFINITY};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        double c[3] = {1.0, bad[i], 1.0};
        p = (rv_cover *)&p;
        rv_errmsg_clear();
        ASSERT_STATUS(RV_E_INVALID_ARG, rv_cover_create(4, 3, off, el, c, &p));
        ASSERT_TRUE(p == NULL);
        ASSERT_STR_CONTAINS(rv_errmsg(), "costs[1]");
        ASSERT_STR_CONTAINS(rv_errmsg(), ">= 0");
    }
    /* a free set (cost 0, or -0.0, which equals 0) is a valid set */
    const double free_costs[] = {0.0, -0.0};
    for (size_t i = 0; i < 2; i++) {
        double c[3] = {1.0, free_costs[i], 1.0};
        ASSERT_OK(rv_cover_create(4, 3, off, el, c, &p));
        rv_cover_free(p);
    }

    /* valid edge cases: no sets, no elements, unit costs */
    uint64_t off0[1] = {0};
    ASSERT_OK(rv_cover_create(5, 0, off0, NULL, NULL, &p));
    ASSERT_EQ(rv_cover_n_sets(p), 0);
    ASSERT_EQ(rv_cover_n_elements(p), 5);
    ASSERT_EQ(rv_cover_n_coverable(p), 0);
    rv_cover_free(p);
    uint64_t off_empty[3] = {0, 0, 0};
    ASSERT_OK(rv_cover_create(0, 2, off_empty, NULL, NULL, &p));
    ASSERT_EQ(rv_cover_n_sets(p), 2);
    ASSERT_EQ(rv_cover_n_elements(p), 0);
    ASSERT_EQ(rv_cover_n_coverable(p), 0);
    rv_cover_free(p);
}

static void test_free_null_and_sizes_of_null(void) {
    rv_cover_free(NULL);
    ASSERT_EQ(rv_cover_n_sets(NULL), 0);
    ASSERT_EQ(rv_cover_n_elements(NULL), 0);
    ASSERT_EQ(rv_cover_n_coverable(NULL), 0);
}

/* 6 elements; sets {0,1}, {1,2,2}, {4}, {}: element 3 and 5 uncovered. */
static const int S0[] = {0, 1, -1}, S1[] = {1, 2, 2, -1}, S2[] = {4, -1}, S3[] = {-1};
static const int *const SMALL_SETS[] = {S0, S1, S2, S3};

static void test_sizes_and_covered(void) {
    inst_t in;
    inst_from_lists(&in, 6, 4, SMALL_SETS, NULL);
    rv_cover *p = NULL;
    rv_status st = inst_build(&in, &p);
    if (st != RV_OK) {
        inst_free(&in);
        FAILF("create: %s (%s)", rv_status_name(st), rv_errmsg());
    }
    EXPECT_EQ(rv_cover_n_sets(p), 4);
    EXPECT_EQ(rv_cover_n_elements(p), 6);
    EXPECT_EQ(rv_cover_n_coverable(p), 4);

    uint8_t mask[6];
    uint64_t n = 99;
    uint32_t sel[] = {0, 2};
    EXPECT_OK(rv_cover_covered(p, sel, 2, mask, &n));
    EXPECT_EQ(n, 3);
    static const uint8_t want[6] = {1, 1, 0, 0, 1, 0};
    for (int e = 0; e < 6; e++) EXPECT_EQ(mask[e], want[e]);
    n = 99;
    EXPECT_OK(rv_cover_covered(p, sel, 2, NULL, &n));
    EXPECT_EQ(n, 3);
    /* empty selection, duplicate indices, the empty set */
    memset(mask, 7, sizeof mask);
    EXPECT_OK(rv_cover_covered(p, NULL, 0, mask, &n));
    EXPECT_EQ(n, 0);
    for (int e = 0; e < 6; e++) EXPECT_EQ(mask[e], 0);
    uint32_t dup[] = {1, 1, 3};
    EXPECT_OK(rv_cover_covered(p, dup, 3, NULL, &n));
    EXPECT_EQ(n, 2);
    uint32_t all[] = {0, 1, 2, 3};
    EXPECT_OK(rv_cover_covered(p, all, 4, NULL, &n));
    EXPECT_EQ(n, 4);
    /* errors */
    uint32_t bad[] = {0, 4};
    EXPECT_STATUS(RV_E_RANGE, rv_cover_covered(p, bad, 2, NULL, &n));
    EXPECT_STR_CONTAINS(rv_errmsg(), "4");
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_cover_covered(p, sel, 2, NULL, NULL));
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_cover_covered(NULL, sel, 2, NULL, &n));
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_cover_covered(p, NULL, 2, NULL, &n));

    uint32_t counts[6];
    EXPECT_OK(rv_cover_element_counts(p, counts));
    static const uint32_t want_counts[6] = {1, 2, 1, 0, 1, 0};
    for (int e = 0; e < 6; e++) EXPECT_EQ(counts[e], want_counts[e]);
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_cover_element_counts(p, NULL));
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_cover_element_counts(NULL, counts));
    rv_cover_free(p);
    inst_free(&in);
}

static void test_element_counts_random(void) {
    rv_rng r;
    rv_rng_seed(&r, 11);
    for (int trial = 0; trial < 40; trial++) {
        inst_t in;
        size_t n_el = 1 + (size_t)rv_rng_below(&r, 300), n_sets = (size_t)rv_rng_below(&r, 20);
        inst_random(&in, &r, n_el, n_sets, 0.05 + 0.5 * rv_rng_uniform(&r), 2);
        rv_cover *p = NULL;
        rv_status st = inst_build(&in, &p);
        uint32_t *counts = malloc(n_el * sizeof(uint32_t));
        uint8_t *mask = malloc(n_el);
        uint32_t all[MAX_SETS];
        for (size_t s = 0; s < n_sets; s++) all[s] = (uint32_t)s;
        uint64_t ncov = 0;
        int ok = st == RV_OK && rv_cover_element_counts(p, counts) == RV_OK &&
                 rv_cover_covered(p, all, n_sets, mask, &ncov) == RV_OK;
        long before = rvt_n_failures;
        EXPECT_TRUE(ok);
        if (ok) {
            for (size_t e = 0; e < n_el; e++) {
                uint32_t c = 0;
                for (size_t s = 0; s < n_sets; s++) c += in.member[s * n_el + e];
                EXPECT_EQ(counts[e], c);
                EXPECT_EQ(mask[e], c > 0);
                if (rvt_n_failures != before) break;
            }
            EXPECT_EQ(ncov, naive_coverable(&in));
            EXPECT_EQ(rv_cover_n_coverable(p), naive_coverable(&in));
        }
        free(counts);
        free(mask);
        rv_cover_free(p);
        inst_free(&in);
        if (rvt_n_failures != before) FAILF("trial %d (n_el %zu, n_sets %zu)", trial, n_el, n_sets);
    }
}

/* A problem over zero elements: counts has nothing to hold. */
static void test_element_counts_empty_universe(void) {
    uint64_t off[3] = {0, 0, 0};
    rv_cover *p = NULL;
    ASSERT_OK(rv_cover_create(0, 2, off, NULL, NULL, &p));
    uint32_t one;
    EXPECT_OK(rv_cover_element_counts(p, &one));
    rv_status st = rv_cover_element_counts(p, NULL);
    EXPECT_TRUE(st == RV_OK || st == RV_E_INVALID_ARG);
    rv_cover_free(p);
}

/* rv_cover_distinct_elements against a naive grouping of the elements by
** the sets covering them (the order of the patterns is not documented, so
** they are matched as a multiset). */
static void test_distinct_elements(void) {
    rv_rng r;
    rv_rng_seed(&r, 515);
    for (int trial = 0; trial < 25; trial++) {
        inst_t in;
        /* the last trials have > 1024 patterns, so the tables must grow */
        size_t n_sets = trial >= 22 ? 12 : 1 + (size_t)rv_rng_below(&r, MAX_SETS);
        size_t n_el = trial >= 22 ? 3000 : (size_t)rv_rng_below(&r, 200);
        inst_random(&in, &r, n_el, n_sets, trial >= 22 ? 0.5 : 0.1 + 0.3 * rv_rng_uniform(&r), 0);
        rv_cover *p = NULL;
        BUILD_OR_FAIL(&in, &p);
        size_t sw = (n_sets + 63) / 64;
        /* naive: signature of every coverable element */
        uint64_t *nsig = calloc(n_el * sw + 1, sizeof(uint64_t));
        uint8_t *coverable = calloc(n_el + 1, 1);
        for (size_t e = 0; e < n_el; e++)
            for (size_t st = 0; st < n_sets; st++)
                if (in.member[st * n_el + e]) {
                    nsig[e * sw + st / 64] |= (uint64_t)1 << (st % 64);
                    coverable[e] = 1;
                }
        size_t naive_distinct = 0;
        for (size_t e = 0; e < n_el; e++) {
            if (!coverable[e]) continue;
            int first = 1;
            for (size_t f = 0; f < e && first; f++)
                if (coverable[f] && !memcmp(nsig + f * sw, nsig + e * sw, sw * sizeof(uint64_t)))
                    first = 0;
            naive_distinct += (size_t)first;
        }
        size_t nd = 0;
        long before = rvt_n_failures;
        uint64_t *sig = malloc((n_el * sw + 1) * sizeof(uint64_t));
        uint64_t *mult = malloc((n_el + 1) * sizeof(uint64_t));
        if (naive_distinct > 0) {
            EXPECT_STATUS(RV_E_SHAPE,
                          rv_cover_distinct_elements(p, sig, mult, naive_distinct - 1, &nd));
            EXPECT_EQ(nd, naive_distinct);
        }
        EXPECT_OK(rv_cover_distinct_elements(p, sig, mult, n_el, &nd));
        EXPECT_EQ(nd, naive_distinct);
        uint64_t total = 0;
        for (size_t k = 0; k < nd && rvt_n_failures == before; k++) {
            uint64_t m = 0;
            for (size_t e = 0; e < n_el; e++)
                m += coverable[e] && !memcmp(nsig + e * sw, sig + k * sw, sw * sizeof(uint64_t));
            if (m == 0 || m != mult[k])
                rvt_fail(__FILE__, __LINE__, "pattern %zu: mult %llu, naive %llu", k,
                         (unsigned long long)mult[k], (unsigned long long)m);
            for (size_t j = 0; j < k; j++)
                if (!memcmp(sig + j * sw, sig + k * sw, sw * sizeof(uint64_t)))
                    rvt_fail(__FILE__, __LINE__, "patterns %zu and %zu are equal", j, k);
            total += mult[k];
        }
        if (rvt_n_failures == before) EXPECT_EQ(total, rv_cover_n_coverable(p));
        free(sig);
        free(mult);
        free(nsig);
        free(coverable);
        rv_cover_free(p);
        inst_free(&in);
        if (rvt_n_failures != before) FAILF("trial %d: %zu sets x %zu el", trial, n_sets, n_el);
    }
    size_t nd = 5;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_cover_distinct_elements(NULL, NULL, NULL, 0, &nd));
    inst_t in;
    inst_from_lists(&in, 6, 4, SMALL_SETS, NULL);
    rv_cover *p = NULL;
    if (inst_build(&in, &p) == RV_OK) {
        EXPECT_STATUS(RV_E_INVALID_ARG, rv_cover_distinct_elements(p, NULL, NULL, 10, &nd));
        EXPECT_STATUS(RV_E_INVALID_ARG, rv_cover_distinct_elements(p, NULL, NULL, 10, NULL));
        /* {0}:{S0}, {1}:{S0,S1}, {2}:{S1}, {4}:{S2} -> 4 patterns */
        EXPECT_STATUS(RV_E_SHAPE, rv_cover_distinct_elements(p, NULL, NULL, 0, &nd));
        EXPECT_EQ(nd, 4);
    }
    rv_cover_free(p);
    inst_free(&in);
}

/* ------------------------------------------------------------- solving */

static void test_solve_errors(void) {
    inst_t in;
    inst_from_lists(&in, 6, 4, SMALL_SETS, NULL);
    rv_cover *p = NULL;
    BUILD_OR_FAIL(&in, &p);
    rv_cover_options o;
    rv_cover_options_init(&o);
    EXPECT_EQ(o.strategy, RV_COVER_GREEDY);
    EXPECT_TRUE(o.n_required == RV_COVER_ALL);
    EXPECT_EQ(o.seed, 0);
    EXPECT_TRUE(o.time_limit == 0.0);
    rv_cover_options_init(NULL); /* tolerated */
    uint32_t sel[4];
    size_t n = 77;
    rv_cover_info info;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_cover_solve(NULL, &o, sel, 4, &n, &info));
    EXPECT_EQ(n, 0);
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_cover_solve(p, NULL, sel, 4, &n, &info));
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_cover_solve(p, &o, NULL, 4, &n, &info));
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_cover_solve(p, &o, sel, 4, NULL, &info));
    EXPECT_STATUS(RV_E_SHAPE, rv_cover_solve(p, &o, sel, 3, &n, &info));
    EXPECT_STR_CONTAINS(rv_errmsg(), "capacity");
    o.time_limit = NAN;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_cover_solve(p, &o, sel, 4, &n, &info));
    EXPECT_STR_CONTAINS(rv_errmsg(), "time_limit");
    o.time_limit = 0;
    o.strategy = (rv_cover_strategy)6;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_cover_solve(p, &o, sel, 4, &n, &info));
    EXPECT_STR_CONTAINS(rv_errmsg(), "strategy");
    o.strategy = RV_COVER_LP;
    const double bad_eps[] = {-0.1, 1.5, NAN};
    for (int i = 0; i < 3; i++) {
        o.lp_eps = bad_eps[i];
        EXPECT_STATUS(RV_E_INVALID_ARG, rv_cover_solve(p, &o, sel, 4, &n, &info));
        EXPECT_STR_CONTAINS(rv_errmsg(), "lp_eps");
    }
    o.lp_eps = 0;
    /* info may be NULL */
    o.strategy = RV_COVER_EXACT;
    EXPECT_OK(rv_cover_solve(p, &o, sel, 4, &n, NULL));
    EXPECT_EQ(n, 3);
    rv_cover_free(p);
    inst_free(&in);
}

/* Degenerate problems: no sets, no elements, nothing coverable. */
static void test_solve_degenerate(void) {
    uint64_t off0[1] = {0}, off2[3] = {0, 0, 0};
    rv_cover *none = NULL, *empty = NULL;
    ASSERT_OK(rv_cover_create(3, 0, off0, NULL, NULL, &none));
    rv_status st = rv_cover_create(0, 2, off2, NULL, NULL, &empty);
    if (st != RV_OK) {
        rv_cover_free(none);
        FAILF("create: %s", rv_errmsg());
    }
    for (int k = 0; k < N_STRATEGIES; k++) {
        uint32_t sel[2] = {9, 9};
        size_t n = 9;
        rv_cover_info info;
        EXPECT_OK(run_solve(none, ALL_STRATEGIES[k], RV_COVER_ALL, 1, 1, sel, &n, &info));
        EXPECT_EQ(n, 0);
        EXPECT_OK(run_solve(empty, ALL_STRATEGIES[k], RV_COVER_ALL, 1, 1, sel, &n, &info));
        EXPECT_EQ(n, 0);
        EXPECT_TRUE(info.cost == 0.0);
        EXPECT_STATUS(RV_E_INFEASIBLE,
                      run_solve(empty, ALL_STRATEGIES[k], 1, 1, 1, sel, &n, &info));
    }
    rv_cover_free(none);
    rv_cover_free(empty);
}

/* A hand example: greedy order B (ratio .5), D (.9), A (1). */
static void test_greedy_known_order(void) {
    static const int A[] = {0, 1, 2, -1}, B[] = {3, 4, -1}, C[] = {0, 1, 2, 3, 4, 5, -1},
                     D[] = {5, -1};
    static const int *const sets[] = {A, B, C, D};
    static const double costs[] = {3.0, 1.0, 7.0, 0.9};
    inst_t in;
    inst_from_lists(&in, 6, 4, sets, costs);
    rv_cover *p = NULL;
    BUILD_OR_FAIL(&in, &p);
    uint32_t sel[4];
    size_t n = 0;
    rv_cover_info info;
    EXPECT_OK(run_solve(p, RV_COVER_GREEDY, RV_COVER_ALL, 0, 0, sel, &n, &info));
    EXPECT_EQ(n, 3);
    if (n == 3) {
        EXPECT_EQ(sel[0], 1);
        EXPECT_EQ(sel[1], 3);
        EXPECT_EQ(sel[2], 0);
    }
    EXPECT_NEAR(info.cost, 4.9, 1e-12);
    EXPECT_EQ(info.covered, 6);
    EXPECT_EQ(info.optimal, 0);
    EXPECT_OK(run_solve(p, RV_COVER_EXACT, RV_COVER_ALL, 0, 0, sel, &n, &info));
    EXPECT_EQ(n, 3);
    EXPECT_NEAR(info.cost, 4.9, 1e-12);
    EXPECT_EQ(info.optimal, 1);
    /* a partial cover of 5 elements: cheapest is B + A (cost 4), or C? no:
    ** B + D covers 3 (1.9); A + B covers 5 (4.0); C covers 6 (7.0) */
    EXPECT_OK(run_solve(p, RV_COVER_EXACT, 5, 0, 0, sel, &n, &info));
    EXPECT_NEAR(info.cost, 4.0, 1e-12);
    rv_cover_free(p);
    inst_free(&in);
}

/* Every strategy gives a valid, non-redundant cover; exact <= the others. */
static void test_strategies_valid_random(void) {
    rv_rng r;
    rv_rng_seed(&r, 2025);
    for (int trial = 0; trial < 30; trial++) {
        inst_t in;
        size_t n_sets = 3 + (size_t)rv_rng_below(&r, 26), n_el = 5 + (size_t)rv_rng_below(&r, 150);
        inst_random(&in, &r, n_el, n_sets, 0.03 + 0.2 * rv_rng_uniform(&r), trial % 3);
        rv_cover *p = NULL;
        BUILD_OR_FAIL(&in, &p);
        char ctx[96];
        snprintf(ctx, sizeof ctx, "trial %d (%zu sets x %zu elements)", trial, n_sets, n_el);
        double costs[N_STRATEGIES] = {0};
        int lp_optimal = 0;
        long before = rvt_n_failures;
        for (int k = 0; k < N_STRATEGIES; k++) {
            uint32_t sel[MAX_SETS];
            size_t n = 0;
            rv_cover_info info;
            rv_status st =
                run_solve(p, ALL_STRATEGIES[k], RV_COVER_ALL, (uint64_t)trial, 1, sel, &n, &info);
            if (st != RV_OK) {
                rvt_fail(__FILE__, __LINE__, "%s %s: %s (%s)", ctx,
                         strategy_name(ALL_STRATEGIES[k]), rv_status_name(st), rv_errmsg());
                break;
            }
            check_cover(p, &in, ALL_STRATEGIES[k], rv_cover_n_coverable(p), sel, n, &info, 1, ctx);
            EXPECT_EQ(info.covered, rv_cover_n_coverable(p));
            costs[k] = info.cost;
            if (ALL_STRATEGIES[k] == RV_COVER_LP) lp_optimal = info.optimal;
            if (ALL_STRATEGIES[k] == RV_COVER_EXACT)
                EXPECT_EQ(info.optimal, 1);
            else if (ALL_STRATEGIES[k] != RV_COVER_LP) /* lp may prove it by its bound */
                EXPECT_EQ(info.optimal, 0);
        }
        for (int k = 0; k < N_STRATEGIES && rvt_n_failures == before; k++)
            if (costs[1] > costs[k] * (1 + 1e-9))
                rvt_fail(__FILE__, __LINE__, "%s: exact %.17g > %s %.17g", ctx, costs[1],
                         strategy_name(ALL_STRATEGIES[k]), costs[k]);
        if (rvt_n_failures == before && lp_optimal && costs[5] > costs[1] * (1 + 1e-9))
            rvt_fail(__FILE__, __LINE__, "%s: lp claims optimality at %.17g, exact %.17g", ctx,
                     costs[5], costs[1]);
        rv_cover_free(p);
        inst_free(&in);
        if (rvt_n_failures != before) return;
    }
}

/* Full and partial covers on small instances against brute force; with
** `free_sets`, about a third of the sets cost nothing. */
static void exact_vs_brute(int partial, int free_sets) {
    rv_rng r;
    rv_rng_seed(&r, (partial ? 777 : 555) + (free_sets ? 1000 : 0));
    for (int trial = 0; trial < 300; trial++) {
        inst_t in;
        size_t n_sets = 1 + (size_t)rv_rng_below(&r, 12), n_el = 1 + (size_t)rv_rng_below(&r, 40);
        static const double dens[] = {0.08, 0.2, 0.4};
        inst_random(&in, &r, n_el, n_sets, dens[rv_rng_below(&r, 3)],
                    free_sets ? 3 + trial % 2 : trial % 3);
        rv_cover *p = NULL;
        BUILD_OR_FAIL(&in, &p);
        uint64_t coverable = rv_cover_n_coverable(p);
        uint64_t required = partial ? rv_rng_below(&r, coverable + 1) : coverable;
        double opt = brute_force(&in, required);
        char ctx[128];
        snprintf(ctx, sizeof ctx, "%s trial %d (%zu sets x %zu el, required %llu of %llu)",
                 partial ? "partial" : "full", trial, n_sets, n_el, (unsigned long long)required,
                 (unsigned long long)coverable);
        long before = rvt_n_failures;
        EXPECT_EQ(coverable, naive_coverable(&in));
        for (int k = 0; k < N_STRATEGIES && rvt_n_failures == before; k++) {
            rv_cover_strategy s = ALL_STRATEGIES[k];
            uint32_t sel[MAX_SETS];
            size_t n = 0;
            rv_cover_info info;
            rv_status st = run_solve(p, s, partial ? required : RV_COVER_ALL, (uint64_t)trial, 1,
                                     sel, &n, &info);
            if (st != RV_OK) {
                rvt_fail(__FILE__, __LINE__, "%s %s: %s (%s)", ctx, strategy_name(s),
                         rv_status_name(st), rv_errmsg());
                break;
            }
            check_cover(p, &in, s, required, sel, n, &info, 1, ctx);
            /* a lower bound is a lower bound; "optimal" is true */
            if (info.lower_bound > opt * (1 + 1e-9) + 1e-9 ||
                info.lp_bound > opt * (1 + 1e-9) + 1e-9)
                rvt_fail(__FILE__, __LINE__, "%s: %s lower bound %.17g above the optimum %.17g",
                         ctx, strategy_name(s), info.lower_bound, opt);
            if (info.optimal && !(fabs(info.cost - opt) <= 1e-9 * (1 + opt)))
                rvt_fail(__FILE__, __LINE__, "%s: %s claims optimality at %.17g, optimum %.17g",
                         ctx, strategy_name(s), info.cost, opt);
            if (s == RV_COVER_EXACT) {
                if (!(fabs(info.cost - opt) <= 1e-9 * (1 + opt)))
                    rvt_fail(__FILE__, __LINE__, "%s: exact cost %.17g, brute force %.17g", ctx,
                             info.cost, opt);
                EXPECT_EQ(info.optimal, 1);
            } else if (info.cost < opt - 1e-9 * (1 + opt)) {
                rvt_fail(__FILE__, __LINE__, "%s: %s cost %.17g below the optimum %.17g", ctx,
                         strategy_name(s), info.cost, opt);
            }
            if (s == RV_COVER_GREEDY && !partial) {
                double bound = harmonic(max_set_size(&in)) * opt;
                if (info.cost > bound * (1 + 1e-9) + 1e-12)
                    rvt_fail(__FILE__, __LINE__,
                             "%s: greedy cost %.17g > H(%zu) * opt = %.17g (opt %.17g)", ctx,
                             info.cost, max_set_size(&in), bound, opt);
            }
        }
        rv_cover_free(p);
        inst_free(&in);
        if (rvt_n_failures != before) return;
    }
}

static void test_exact_vs_bruteforce_full(void) {
    exact_vs_brute(0, 0);
}

static void test_exact_vs_bruteforce_partial(void) {
    exact_vs_brute(1, 0);
}

/* Free sets (cost 0): every strategy still returns a valid cover with no set
** that adds nothing, exact still finds the brute-force optimum. */
static void test_free_sets_vs_bruteforce(void) {
    exact_vs_brute(0, 1);
    exact_vs_brute(1, 1);
}

/* Known free-set cases: greedy takes the free set that adds the most first,
** never a free set that adds nothing; all-free problems cost 0 everywhere;
** the path planner puts free sets first. */
static void test_free_sets_known(void) {
    /* 0: {0,1} free; 1: {0,1,2,3} free; 2: {0} free (adds nothing once 1 is
    ** in); 3: {4,5} cost 2; 4: {4} cost 1; 5: {5} cost 1 */
    static const int s0[] = {0, 1, -1}, s1[] = {0, 1, 2, 3, -1}, s2[] = {0, -1}, s3[] = {4, 5, -1},
                     s4[] = {4, -1}, s5[] = {5, -1};
    const int *const sets[] = {s0, s1, s2, s3, s4, s5};
    const double costs[] = {0, 0, 0, 2, 1, 1};
    inst_t in;
    inst_from_lists(&in, 6, 6, sets, costs);
    rv_cover *p = NULL;
    BUILD_OR_FAIL(&in, &p);
    uint32_t sel[MAX_SETS];
    size_t n = 0;
    rv_cover_info info;
    ASSERT_OK(run_solve(p, RV_COVER_GREEDY, RV_COVER_ALL, 0, 0, sel, &n, &info));
    /* set 1 first (free, adds 4), then the paid sets: 3 (2 per 2) ties
    ** with 4 and 5 (1 per 1) at one element per unit; the lowest index wins */
    ASSERT_EQ(n, 2);
    EXPECT_EQ(sel[0], 1);
    EXPECT_EQ(sel[1], 3);
    EXPECT_NEAR(info.cost, 2.0, 1e-12);
    for (int k = 0; k < N_STRATEGIES; k++) {
        rv_status st = run_solve(p, ALL_STRATEGIES[k], RV_COVER_ALL, 3, 1, sel, &n, &info);
        EXPECT_OK(st);
        check_cover(p, &in, ALL_STRATEGIES[k], 6, sel, n, &info, 1, "known free");
        EXPECT_NEAR(info.cost, 2.0, 1e-12);
        for (size_t i = 0; i < n; i++) { /* sets 0 and 2 add nothing next to set 1 */
            EXPECT_TRUE(sel[i] != 0);
            EXPECT_TRUE(sel[i] != 2);
        }
    }
    /* partial: the free set alone reaches 4 of 6 elements */
    for (int k = 0; k < N_STRATEGIES; k++) {
        ASSERT_OK(run_solve(p, ALL_STRATEGIES[k], 4, 3, 1, sel, &n, &info));
        EXPECT_EQ(n, 1);
        EXPECT_EQ(sel[0], 1);
        EXPECT_NEAR(info.cost, 0.0, 0);
        if (ALL_STRATEGIES[k] == RV_COVER_EXACT) EXPECT_EQ(info.optimal, 1);
    }
    /* the path planner: free set 1 first, the free sets that add nothing never */
    uint32_t order[MAX_SETS];
    uint64_t newly[MAX_SETS];
    ASSERT_OK(rv_cover_plan_path(p, RV_PATH_COVERAGE, NULL, order, newly, NULL, 6, &n));
    ASSERT_EQ(n, 2);
    EXPECT_EQ(order[0], 1);
    EXPECT_EQ(newly[0], 4);
    rv_cover_free(p);
    inst_free(&in);

    /* every set free: cost 0 for every strategy, still a non-redundant cover */
    inst_t all;
    rv_rng r;
    rv_rng_seed(&r, 99);
    inst_random(&all, &r, 30, 10, 0.2, 2);
    for (size_t s = 0; s < all.n_sets; s++) all.cost[s] = 0.0;
    BUILD_OR_FAIL(&all, &p);
    for (int k = 0; k < N_STRATEGIES; k++) {
        ASSERT_OK(run_solve(p, ALL_STRATEGIES[k], RV_COVER_ALL, 1, 1, sel, &n, &info));
        check_cover(p, &all, ALL_STRATEGIES[k], rv_cover_n_coverable(p), sel, n, &info, 1,
                    "all free");
        EXPECT_NEAR(info.cost, 0.0, 0);
    }
    rv_cover_free(p);
    inst_free(&all);
}

/* ------------------------------------------------------ LP relaxation */

/* Fractional coverage of element e by x. */
static double frac_cover(const inst_t *in, const double *x, size_t e) {
    double a = 0;
    for (size_t s = 0; s < in->n_sets; s++)
        if (in->member[s * in->n_el + e]) a += x[s];
    return a;
}

static void test_lp_errors(void) {
    static const int s0[] = {0, 1, -1}, s1[] = {1, 2, -1};
    const int *const sets[] = {s0, s1};
    inst_t in;
    inst_from_lists(&in, 3, 2, sets, NULL);
    rv_cover *p = NULL;
    BUILD_OR_FAIL(&in, &p);
    double x[2];
    rv_cover_lp_result res;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_cover_lp(NULL, RV_COVER_ALL, 0.1, 0, x, 2, &res));
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_cover_lp(p, RV_COVER_ALL, 0.1, 0, x, 2, NULL));
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_cover_lp(p, RV_COVER_ALL, 0.1, 0, NULL, 2, &res));
    EXPECT_STR_CONTAINS(rv_errmsg(), "NULL");
    const double bad_eps[] = {0.0, -0.5, 1.5, NAN, INFINITY};
    for (int i = 0; i < 5; i++) {
        EXPECT_STATUS(RV_E_INVALID_ARG, rv_cover_lp(p, RV_COVER_ALL, bad_eps[i], 0, x, 2, &res));
        EXPECT_STR_CONTAINS(rv_errmsg(), "eps");
    }
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_cover_lp(p, RV_COVER_ALL, 0.1, NAN, x, 2, &res));
    EXPECT_STATUS(RV_E_SHAPE, rv_cover_lp(p, RV_COVER_ALL, 0.1, 0, x, 1, &res));
    EXPECT_STATUS(RV_E_SHAPE, rv_cover_lp(p, RV_COVER_ALL, 0.1, 0, x, 0, &res));
    EXPECT_STATUS(RV_E_INFEASIBLE, rv_cover_lp(p, 4, 0.1, 0, x, 2, &res));
    EXPECT_STATUS(RV_E_INFEASIBLE, rv_cover_lp(p, RV_COVER_ALL - 1, 0.1, 0, x, 2, &res));
    /* a capacity no array can have is refused like every size (core.h
    ** "Sizes"); eps = 1 is fine */
    EXPECT_STATUS(RV_E_RANGE, rv_cover_lp(p, RV_COVER_ALL, 1.0, 0, x, SIZE_MAX, &res));
    EXPECT_OK(rv_cover_lp(p, RV_COVER_ALL, 1.0, 0, x, 2, &res));
    EXPECT_TRUE(res.converged);
    /* nothing required: x = 0, both bounds 0 */
    x[0] = x[1] = 7;
    EXPECT_OK(rv_cover_lp(p, 0, 0.1, 0, x, 2, &res));
    EXPECT_TRUE(x[0] == 0 && x[1] == 0 && res.value == 0 && res.lower_bound == 0);
    rv_cover_free(p);
    inst_free(&in);
    /* no sets at all */
    uint64_t off0[1] = {0};
    ASSERT_OK(rv_cover_create(4, 0, off0, NULL, NULL, &p));
    EXPECT_OK(rv_cover_lp(p, RV_COVER_ALL, 0.1, 0, NULL, 0, &res));
    EXPECT_TRUE(res.value == 0 && res.converged);
    rv_cover_free(p);
}

/* The triangle: three elements, three unit sets of two.  The LP optimum is
** 1.5 (every set at one half); a cover needs two sets. */
static void test_lp_triangle(void) {
    static const int s0[] = {0, 1, -1}, s1[] = {1, 2, -1}, s2[] = {0, 2, -1};
    const int *const sets[] = {s0, s1, s2};
    inst_t in;
    inst_from_lists(&in, 3, 3, sets, NULL);
    rv_cover *p = NULL;
    BUILD_OR_FAIL(&in, &p);
    const double eps[] = {0.5, 0.1, 0.01};
    for (int i = 0; i < 3; i++) {
        double x[3];
        rv_cover_lp_result res;
        ASSERT_OK(rv_cover_lp(p, RV_COVER_ALL, eps[i], 0, x, 3, &res));
        EXPECT_TRUE(res.converged);
        EXPECT_TRUE(res.lower_bound <= 1.5 + 1e-12);
        EXPECT_TRUE(res.value >= 1.5 - 1e-12);
        EXPECT_TRUE(res.value <= 1.5 * (1 + eps[i]) + 1e-12);
        EXPECT_TRUE(res.value <= res.lower_bound * (1 + eps[i]) * (1 + 1e-12));
        for (size_t e = 0; e < 3; e++) EXPECT_TRUE(frac_cover(&in, x, e) >= 1 - 1e-9);
        EXPECT_NEAR(res.value, x[0] + x[1] + x[2], 1e-9 * res.value);
    }
    /* rounded: two sets.  The LP bound is about 1.5, but with unit costs
    ** every cover costs an integer, so 2 is a bound too: proven optimal */
    uint32_t sel[3];
    size_t n = 0;
    rv_cover_info info;
    ASSERT_OK(run_solve(p, RV_COVER_LP, RV_COVER_ALL, 1, 0, sel, &n, &info));
    EXPECT_EQ(n, 2);
    EXPECT_NEAR(info.cost, 2.0, 0);
    EXPECT_TRUE(info.lp_bound > 1.4 && info.lp_bound <= 1.5 + 1e-12);
    EXPECT_NEAR(info.lower_bound, 2.0, 0);
    EXPECT_EQ(info.optimal, 1);
    rv_cover_free(p);
    inst_free(&in);
    /* costs 1.5 each: the bound stays fractional (about 2.25) and proves
    ** nothing about the cover of cost 3 */
    const double c15[] = {1.5, 1.5, 1.5};
    inst_from_lists(&in, 3, 3, sets, c15);
    BUILD_OR_FAIL(&in, &p);
    ASSERT_OK(run_solve(p, RV_COVER_LP, RV_COVER_ALL, 1, 0, sel, &n, &info));
    EXPECT_NEAR(info.cost, 3.0, 0);
    EXPECT_TRUE(info.lp_bound > 2.1 && info.lp_bound <= 2.25 + 1e-12);
    EXPECT_NEAR(info.lower_bound, info.lp_bound, 0);
    EXPECT_EQ(info.optimal, 0);
    rv_cover_free(p);
    inst_free(&in);
}

/* Random instances: x covers what it must, costs res.value, the lower bound
** is below the integer optimum (brute force), full covers certify within
** 1 + eps, and the same call gives the same bits. */
static void lp_random(int partial, int free_sets) {
    rv_rng r;
    rv_rng_seed(&r, 4242 + 10 * partial + free_sets);
    for (int trial = 0; trial < 120; trial++) {
        inst_t in;
        size_t n_sets = 1 + (size_t)rv_rng_below(&r, 12), n_el = 1 + (size_t)rv_rng_below(&r, 40);
        static const double dens[] = {0.08, 0.2, 0.4};
        inst_random(&in, &r, n_el, n_sets, dens[rv_rng_below(&r, 3)],
                    free_sets ? 3 + trial % 2 : trial % 3);
        rv_cover *p = NULL;
        BUILD_OR_FAIL(&in, &p);
        uint64_t coverable = rv_cover_n_coverable(p);
        uint64_t required = partial ? rv_rng_below(&r, coverable + 1) : coverable;
        double opt = brute_force(&in, required);
        double eps = trial % 2 ? 0.05 : 0.2;
        char ctx[128];
        snprintf(ctx, sizeof ctx, "lp %s%s trial %d (%zu sets x %zu el, required %llu)",
                 partial ? "partial" : "full", free_sets ? " free" : "", trial, n_sets, n_el,
                 (unsigned long long)required);
        double x[MAX_SETS], x2[MAX_SETS];
        rv_cover_lp_result res, res2;
        rv_status st = rv_cover_lp(p, required, eps, 0, x, n_sets, &res);
        long before = rvt_n_failures;
        if (st != RV_OK) {
            rvt_fail(__FILE__, __LINE__, "%s: %s (%s)", ctx, rv_status_name(st), rv_errmsg());
        } else {
            double cost = 0, covered = 0;
            for (size_t s = 0; s < n_sets; s++) {
                if (!(x[s] >= 0 && x[s] <= 1 + 1e-9))
                    rvt_fail(__FILE__, __LINE__, "%s: x[%zu] = %g", ctx, s, x[s]);
                if (required && inst_cost(&in, s) == 0 && x[s] != 1.0 && in.off[s + 1] > in.off[s])
                    rvt_fail(__FILE__, __LINE__, "%s: free set %zu at %g", ctx, s, x[s]);
                cost += inst_cost(&in, s) * x[s];
            }
            for (size_t e = 0; e < n_el; e++) {
                double a = frac_cover(&in, x, e);
                covered += a < 1 ? a : 1;
            }
            if (covered < (double)required - 1e-6)
                rvt_fail(__FILE__, __LINE__, "%s: x covers %g < %llu", ctx, covered,
                         (unsigned long long)required);
            if (!(fabs(cost - res.value) <= 1e-9 * (1 + cost)))
                rvt_fail(__FILE__, __LINE__, "%s: value %.17g, cost of x %.17g", ctx, res.value,
                         cost);
            if (res.lower_bound > opt * (1 + 1e-9) + 1e-12 || res.lower_bound > res.value + 1e-12)
                rvt_fail(__FILE__, __LINE__, "%s: lower bound %.17g above %.17g / %.17g", ctx,
                         res.lower_bound, opt, res.value);
            if (!partial && !res.converged)
                rvt_fail(__FILE__, __LINE__, "%s: full cover not certified (%g .. %g)", ctx,
                         res.lower_bound, res.value);
            if (res.converged && res.value > (1 + eps) * res.lower_bound * (1 + 1e-12) + 1e-12)
                rvt_fail(__FILE__, __LINE__, "%s: converged but %g > (1 + %g) %g", ctx, res.value,
                         eps, res.lower_bound);
            EXPECT_OK(rv_cover_lp(p, required, eps, 0, x2, n_sets, &res2));
            if (memcmp(x, x2, n_sets * sizeof x[0]) != 0 || res.value != res2.value ||
                res.lower_bound != res2.lower_bound)
                rvt_fail(__FILE__, __LINE__, "%s: two calls differ", ctx);
        }
        rv_cover_free(p);
        inst_free(&in);
        if (rvt_n_failures != before) return;
    }
}

static void test_lp_random(void) {
    lp_random(0, 0);
    lp_random(1, 0);
    lp_random(0, 1);
    lp_random(1, 1);
}

/* A time limit stops the relaxation with valid bounds (RV_E_TIMEOUT unless
** it finished first); the LP strategy still returns a cover. */
static void test_lp_time_limit(void) {
    rv_rng r;
    rv_rng_seed(&r, 31);
    inst_t in;
    inst_random(&in, &r, 600, 60, 0.05, 2);
    rv_cover *p = NULL;
    BUILD_OR_FAIL(&in, &p);
    double *x = malloc(60 * sizeof(double));
    rv_cover_lp_result res;
    rv_status st = rv_cover_lp(p, RV_COVER_ALL, 0.001, 1e-4, x, 60, &res);
    EXPECT_TRUE(st == RV_OK || st == RV_E_TIMEOUT);
    if (st == RV_E_TIMEOUT) EXPECT_STR_CONTAINS(rv_errmsg(), "time limit");
    EXPECT_TRUE(res.lower_bound <= res.value);
    EXPECT_TRUE(res.value > 0 && isfinite(res.value));
    rv_cover_options o;
    rv_cover_options_init(&o);
    o.strategy = RV_COVER_LP;
    o.lp_eps = 0.001;
    o.time_limit = 1e-3;
    uint32_t sel[60];
    size_t n = 0;
    rv_cover_info info;
    EXPECT_OK(rv_cover_solve(p, &o, sel, 60, &n, &info));
    check_cover(p, &in, RV_COVER_LP, rv_cover_n_coverable(p), sel, n, &info, 1, "lp time limit");
    EXPECT_TRUE(info.lower_bound <= info.cost);
    free(x);
    rv_cover_free(p);
    inst_free(&in);
}

/* n_required beyond the coverable elements is infeasible for every strategy;
** n_required == coverable is the same as RV_COVER_ALL. */
static void test_infeasible_and_required_edges(void) {
    rv_rng r;
    rv_rng_seed(&r, 4);
    inst_t in;
    inst_random(&in, &r, 50, 10, 0.05, 2);
    rv_cover *p = NULL;
    BUILD_OR_FAIL(&in, &p);
    uint64_t cov = rv_cover_n_coverable(p);
    EXPECT_TRUE(cov < 50); /* the instance leaves some elements uncovered */
    for (int k = 0; k < N_STRATEGIES; k++) {
        uint32_t sel[MAX_SETS];
        size_t n = 5;
        rv_cover_info info, info2;
        rv_errmsg_clear();
        EXPECT_STATUS(RV_E_INFEASIBLE,
                      run_solve(p, ALL_STRATEGIES[k], cov + 1, 0, 1, sel, &n, &info));
        EXPECT_EQ(n, 0);
        EXPECT_TRUE(rv_errmsg()[0] != '\0');
        EXPECT_STATUS(RV_E_INFEASIBLE, run_solve(p, ALL_STRATEGIES[k], 50, 0, 1, sel, &n, &info));
        EXPECT_STATUS(RV_E_INFEASIBLE,
                      run_solve(p, ALL_STRATEGIES[k], RV_COVER_ALL - 1, 0, 1, sel, &n, &info));
        /* required 0: nothing to pick */
        EXPECT_OK(run_solve(p, ALL_STRATEGIES[k], 0, 0, 1, sel, &n, &info));
        EXPECT_EQ(n, 0);
        EXPECT_TRUE(info.cost == 0.0);
        /* explicit coverable == default */
        EXPECT_OK(run_solve(p, ALL_STRATEGIES[k], cov, 3, 1, sel, &n, &info));
        EXPECT_EQ(info.covered, cov);
        EXPECT_OK(run_solve(p, ALL_STRATEGIES[k], RV_COVER_ALL, 3, 1, sel, &n, &info2));
        EXPECT_NEAR(info.cost, info2.cost, 1e-12);
    }
    rv_cover_free(p);
    inst_free(&in);
}

/* SA, GA and hybrid: same seed, same answer (no time limit). */
static void test_seed_determinism(void) {
    rv_rng r;
    rv_rng_seed(&r, 8);
    static const rv_cover_strategy meta[] = {RV_COVER_SA, RV_COVER_GA, RV_COVER_HYBRID};
    for (int trial = 0; trial < 6; trial++) {
        inst_t in;
        inst_random(&in, &r, 40 + (size_t)rv_rng_below(&r, 60), 10 + (size_t)rv_rng_below(&r, 14),
                    0.08, 2);
        rv_cover *p = NULL;
        BUILD_OR_FAIL(&in, &p);
        int fast = trial >= 2; /* the first two use the default effort */
        uint64_t required = trial % 2 ? rv_cover_n_coverable(p) * 3 / 4 : RV_COVER_ALL;
        long before = rvt_n_failures;
        for (int k = 0; k < 3; k++) {
            uint32_t a[MAX_SETS], b[MAX_SETS];
            size_t na = 0, nb = 0;
            rv_cover_info ia, ib;
            EXPECT_OK(run_solve(p, meta[k], required, 1234 + (uint64_t)trial, fast, a, &na, &ia));
            EXPECT_OK(run_solve(p, meta[k], required, 1234 + (uint64_t)trial, fast, b, &nb, &ib));
            EXPECT_EQ(na, nb);
            for (size_t i = 0; i < na && i < nb; i++) EXPECT_EQ(a[i], b[i]);
            EXPECT_TRUE(ia.cost == ib.cost);
            EXPECT_EQ(ia.work, ib.work);
            EXPECT_TRUE(ia.work > 0);
            if (rvt_n_failures != before) {
                rvt_fail(__FILE__, __LINE__, "trial %d strategy %s not deterministic", trial,
                         strategy_name(meta[k]));
                break;
            }
        }
        rv_cover_free(p);
        inst_free(&in);
        if (rvt_n_failures != before) return;
    }
}

/* Mid-size instances (beyond brute force): exact <= every other strategy. */
static void test_exact_leq_others_midsize(void) {
    rv_rng r;
    rv_rng_seed(&r, 99);
    for (int trial = 0; trial < 8; trial++) {
        inst_t in;
        inst_random(&in, &r, 80 + (size_t)rv_rng_below(&r, 100), 18 + (size_t)rv_rng_below(&r, 10),
                    0.06, trial % 3);
        rv_cover *p = NULL;
        BUILD_OR_FAIL(&in, &p);
        uint64_t required = trial >= 6 ? rv_cover_n_coverable(p) * 9 / 10 : RV_COVER_ALL;
        uint64_t need = required == RV_COVER_ALL ? rv_cover_n_coverable(p) : required;
        char ctx[64];
        snprintf(ctx, sizeof ctx, "midsize trial %d", trial);
        uint32_t sel[MAX_SETS];
        size_t n = 0;
        rv_cover_info ex, info;
        long before = rvt_n_failures;
        EXPECT_OK(run_solve(p, RV_COVER_EXACT, required, 0, 0, sel, &n, &ex));
        EXPECT_EQ(ex.optimal, 1);
        check_cover(p, &in, RV_COVER_EXACT, need, sel, n, &ex, 1, ctx);
        for (int k = 0; k < N_STRATEGIES && rvt_n_failures == before; k++) {
            EXPECT_OK(run_solve(p, ALL_STRATEGIES[k], required, 5, 1, sel, &n, &info));
            check_cover(p, &in, ALL_STRATEGIES[k], need, sel, n, &info, 1, ctx);
            if (ex.cost > info.cost * (1 + 1e-9))
                rvt_fail(__FILE__, __LINE__, "%s: exact %.17g > %s %.17g", ctx, ex.cost,
                         strategy_name(ALL_STRATEGIES[k]), info.cost);
        }
        rv_cover_free(p);
        inst_free(&in);
        if (rvt_n_failures != before) return;
    }
}

/* 60 sets over 400 elements, each element in ~12 sets: the branch and bound
** runs for well over 100000 nodes, so a 1 us limit must stop the search
** (the deadline is first looked at after 256 nodes). */
static void make_hard(inst_t *in) {
    rv_rng r;
    rv_rng_seed(&r, 60400);
    inst_random(in, &r, 400, 60, 0.2, 2);
}

static void test_exact_timeout(void) {
    inst_t in;
    make_hard(&in);
    rv_cover *p = NULL;
    BUILD_OR_FAIL(&in, &p);
    rv_cover_options o;
    rv_cover_options_init(&o);
    o.strategy = RV_COVER_EXACT;
    o.time_limit = 1e-6;
    uint32_t sel[MAX_SETS];
    size_t n = 0;
    rv_cover_info info;
    memset(&info, 0xab, sizeof info);
    rv_status st = rv_cover_solve(p, &o, sel, 60, &n, &info);
    EXPECT_STATUS(RV_E_TIMEOUT, st);
    EXPECT_STR_CONTAINS(rv_errmsg(), "time limit");
    EXPECT_TRUE(n > 0);
    EXPECT_EQ(info.optimal, 0);
    EXPECT_EQ(info.covered, rv_cover_n_coverable(p));
    EXPECT_TRUE(info.work >= 256);
    /* the cover written is valid; redundancy is checked as well */
    check_cover(p, &in, RV_COVER_EXACT, rv_cover_n_coverable(p), sel, n, &info, 1, "timeout");

    /* SA and GA stop at the limit with RV_OK and a valid cover */
    static const rv_cover_strategy meta[] = {RV_COVER_SA, RV_COVER_GA, RV_COVER_HYBRID};
    for (int k = 0; k < 3; k++) {
        o.strategy = meta[k];
        o.time_limit = 1e-6;
        EXPECT_OK(rv_cover_solve(p, &o, sel, 60, &n, &info));
        EXPECT_EQ(info.optimal, 0);
        check_cover(p, &in, meta[k], rv_cover_n_coverable(p), sel, n, &info, 1, "timeout");
    }
    rv_cover_free(p);
    inst_free(&in);
}

static int stop_now(void *ctx, uint64_t done, uint64_t total) {
    (void)done;
    (void)total;
    (*(int *)ctx)++;
    return 1;
}

static int count_calls(void *ctx, uint64_t done, uint64_t total) {
    (void)done;
    (void)total;
    (*(int *)ctx)++;
    return 0;
}

static void test_solve_progress_interrupt(void) {
    inst_t in;
    make_hard(&in);
    rv_cover *p = NULL;
    BUILD_OR_FAIL(&in, &p);
    static const rv_cover_strategy s[] = {RV_COVER_EXACT, RV_COVER_SA, RV_COVER_GA,
                                          RV_COVER_HYBRID};
    for (int k = 0; k < 4; k++) {
        rv_cover_options o;
        rv_cover_options_init(&o);
        o.strategy = s[k];
        int calls = 0;
        o.progress = stop_now;
        o.progress_ctx = &calls;
        uint32_t sel[MAX_SETS];
        size_t n = 42;
        rv_cover_info info;
        EXPECT_STATUS(RV_E_INTERRUPTED, rv_cover_solve(p, &o, sel, 60, &n, &info));
        EXPECT_EQ(n, 0);
        EXPECT_EQ(calls, 1);
    }
    /* a callback that never stops changes nothing */
    rv_cover_options o;
    rv_cover_options_init(&o);
    o.strategy = RV_COVER_SA;
    o.iterations = 5000;
    o.seed = 3;
    uint32_t a[MAX_SETS], b[MAX_SETS];
    size_t na = 0, nb = 0;
    rv_cover_info ia, ib;
    EXPECT_OK(rv_cover_solve(p, &o, a, 60, &na, &ia));
    int calls = 0;
    o.progress = count_calls;
    o.progress_ctx = &calls;
    EXPECT_OK(rv_cover_solve(p, &o, b, 60, &nb, &ib));
    EXPECT_TRUE(calls > 0);
    EXPECT_EQ(na, nb);
    EXPECT_TRUE(na == nb && memcmp(a, b, na * sizeof a[0]) == 0);
    rv_cover_free(p);
    inst_free(&in);
}

/* time_limit <= 0 or +inf means no limit: same answer as the default. */
static void test_time_limit_none(void) {
    rv_rng r;
    rv_rng_seed(&r, 1212);
    inst_t in;
    inst_random(&in, &r, 60, 14, 0.12, 2);
    rv_cover *p = NULL;
    BUILD_OR_FAIL(&in, &p);
    static const double limits[] = {-1.0, -INFINITY, INFINITY, 1e9};
    for (int k = 0; k < N_STRATEGIES; k++) {
        rv_cover_options o;
        rv_cover_options_init(&o);
        o.strategy = ALL_STRATEGIES[k];
        o.iterations = 3000;
        o.generations = 30;
        o.seed = 9;
        uint32_t a[MAX_SETS], b[MAX_SETS];
        size_t na = 0, nb = 0;
        rv_cover_info ia, ib;
        EXPECT_OK(rv_cover_solve(p, &o, a, 14, &na, &ia));
        for (int l = 0; l < 4; l++) {
            o.time_limit = limits[l];
            EXPECT_OK(rv_cover_solve(p, &o, b, 14, &nb, &ib));
            EXPECT_EQ(na, nb);
            EXPECT_TRUE(na == nb && memcmp(a, b, na * sizeof a[0]) == 0);
            EXPECT_EQ(ia.optimal, ib.optimal);
        }
    }
    rv_cover_free(p);
    inst_free(&in);
}

/* A built problem is read-only: threads solving and planning on it at once
** get exactly the single-threaded answers. */
typedef struct {
    const rv_cover *p;
    int which; /* strategy index, or N_STRATEGIES for the path */
    uint32_t sel[MAX_SETS];
    uint64_t newly[MAX_SETS];
    size_t n;
    double cost;
    rv_status st;
} solve_job;

static void do_job(solve_job *j) {
    if (j->which == N_STRATEGIES) {
        j->st = rv_cover_plan_path(j->p, RV_PATH_ENTROPY, NULL, j->sel, j->newly, NULL, MAX_SETS,
                                   &j->n);
        j->cost = 0;
        return;
    }
    rv_cover_info info;
    info.cost = -1;
    j->st = run_solve(j->p, ALL_STRATEGIES[j->which], RV_COVER_ALL, 77, 1, j->sel, &j->n, &info);
    j->cost = info.cost;
}

static void *job_thread(void *arg) {
    solve_job *jobs = arg;
    for (int k = 0; k <= N_STRATEGIES; k++) do_job(&jobs[k]);
    return NULL;
}

static void test_concurrent_solves(void) {
    enum { THREADS = 4 };
    rv_rng r;
    rv_rng_seed(&r, 4444);
    inst_t in;
    inst_random(&in, &r, 120, 24, 0.08, 2);
    rv_cover *p = NULL;
    BUILD_OR_FAIL(&in, &p);
    static solve_job serial[N_STRATEGIES + 1], par[THREADS][N_STRATEGIES + 1];
    for (int k = 0; k <= N_STRATEGIES; k++) {
        serial[k].p = p;
        serial[k].which = k;
        do_job(&serial[k]);
        EXPECT_OK(serial[k].st);
        for (int t = 0; t < THREADS; t++) {
            memset(&par[t][k], 0, sizeof par[t][k]);
            par[t][k].p = p;
            par[t][k].which = k;
        }
    }
    pthread_t th[THREADS];
    int started = 0;
    for (int t = 0; t < THREADS; t++)
        if (pthread_create(&th[t], NULL, job_thread, par[t]) == 0) started++;
    for (int t = 0; t < started; t++) pthread_join(th[t], NULL);
    EXPECT_EQ(started, THREADS);
    for (int t = 0; t < started; t++)
        for (int k = 0; k <= N_STRATEGIES; k++) {
            EXPECT_OK(par[t][k].st);
            EXPECT_EQ(par[t][k].n, serial[k].n);
            EXPECT_TRUE(par[t][k].n == serial[k].n &&
                        memcmp(par[t][k].sel, serial[k].sel, serial[k].n * sizeof(uint32_t)) == 0);
            EXPECT_TRUE(par[t][k].cost == serial[k].cost);
        }
    rv_cover_free(p);
    inst_free(&in);
}

/* ----------------------------------------------------------- key problems */

/* Column-major codes, n_rows x n_cols, column c drawn from card[c] values. */
static int32_t *random_codes(rv_rng *r, size_t n_rows, size_t n_cols, const uint32_t *card) {
    int32_t *codes = malloc((n_rows * n_cols + 1) * sizeof(int32_t));
    for (size_t c = 0; c < n_cols; c++)
        for (size_t i = 0; i < n_rows; i++)
            codes[c * n_rows + i] = (int32_t)rv_rng_below(r, card[c] ? card[c] : 1);
    return codes;
}

static uint64_t pair_index(size_t n, size_t i, size_t j) {
    return (uint64_t)i * n - (uint64_t)i * (i + 1) / 2 + (j - i - 1);
}

/* Pairs agreeing on every column in cols (naive). */
static uint64_t brute_unresolved(const int32_t *codes, size_t n_rows, const uint32_t *cols,
                                 size_t n_sel) {
    uint64_t u = 0;
    for (size_t i = 0; i < n_rows; i++)
        for (size_t j = i + 1; j < n_rows; j++) {
            int same = 1;
            for (size_t k = 0; k < n_sel && same; k++)
                same = codes[(size_t)cols[k] * n_rows + i] == codes[(size_t)cols[k] * n_rows + j];
            u += (uint64_t)same;
        }
    return u;
}

static void test_exact_key_problem(void) {
    enum { ROWS = 30, COLS = 15 };
    rv_rng r;
    rv_rng_seed(&r, 3015);
    uint32_t card[COLS];
    for (int c = 0; c < COLS; c++) card[c] = 2 + (uint32_t)rv_rng_below(&r, 4);
    int32_t *codes = random_codes(&r, ROWS, COLS, card);
    double costs[COLS];
    for (int c = 0; c < COLS; c++) costs[c] = 1.0 + (double)rv_rng_below(&r, 4);
    rv_cover *p = NULL;
    rv_status st = rv_cover_create_pairs(codes, ROWS, COLS, costs, 0, &p);
    if (st != RV_OK) {
        free(codes);
        FAILF("create_pairs: %s (%s)", rv_status_name(st), rv_errmsg());
    }
    uint32_t all[COLS];
    for (int c = 0; c < COLS; c++) all[c] = (uint32_t)c;
    EXPECT_EQ(rv_cover_n_elements(p), ROWS * (ROWS - 1) / 2);
    EXPECT_EQ(rv_cover_n_coverable(p),
              ROWS * (ROWS - 1) / 2 - brute_unresolved(codes, ROWS, all, COLS));
    uint32_t sel[COLS];
    size_t n = 0;
    rv_cover_info info, g;
    EXPECT_OK(run_solve(p, RV_COVER_EXACT, RV_COVER_ALL, 0, 0, sel, &n, &info));
    EXPECT_EQ(info.optimal, 1);
    /* the selection is a key: it leaves exactly the unresolvable pairs */
    uint64_t unres = 0;
    EXPECT_OK(rv_keys_unresolved(codes, ROWS, COLS, sel, n, &unres));
    EXPECT_EQ(unres, brute_unresolved(codes, ROWS, all, COLS));
    EXPECT_EQ(unres, brute_unresolved(codes, ROWS, sel, n));
    EXPECT_OK(run_solve(p, RV_COVER_GREEDY, RV_COVER_ALL, 0, 0, sel, &n, &g));
    EXPECT_TRUE(info.cost <= g.cost * (1 + 1e-12));
    rv_cover_free(p);
    free(codes);
}

static void test_pairs_vs_naive(void) {
    rv_rng r;
    rv_rng_seed(&r, 17);
    static const size_t rows_list[] = {0, 1, 2, 3, 5, 11, 63, 64, 65, 66, 90, 129, 130};
    for (size_t t = 0; t < sizeof rows_list / sizeof rows_list[0]; t++) {
        size_t n_rows = rows_list[t], n_cols = 1 + (size_t)rv_rng_below(&r, 5);
        uint32_t card[8];
        for (size_t c = 0; c < n_cols; c++) {
            static const uint32_t cards[] = {1, 2, 3, 7, 1000};
            card[c] = cards[rv_rng_below(&r, 5)];
        }
        int32_t *codes = random_codes(&r, n_rows, n_cols, card);
        rv_cover *p = NULL;
        rv_status st = rv_cover_create_pairs(codes, n_rows, n_cols, NULL, 0, &p);
        if (st != RV_OK) {
            free(codes);
            FAILF("rows %zu: create_pairs %s (%s)", n_rows, rv_status_name(st), rv_errmsg());
        }
        uint64_t m = n_rows < 2 ? 0 : (uint64_t)n_rows * (n_rows - 1) / 2;
        EXPECT_EQ(rv_cover_n_elements(p), m);
        EXPECT_EQ(rv_cover_n_sets(p), n_cols);
        uint8_t *mask = malloc(m + 1);
        long before = rvt_n_failures;
        for (uint32_t c = 0; c < n_cols && rvt_n_failures == before; c++) {
            uint64_t nc = 0;
            EXPECT_OK(rv_cover_covered(p, &c, 1, mask, &nc));
            uint64_t expect_idx = 0, differ = 0;
            for (size_t i = 0; i < n_rows && rvt_n_failures == before; i++)
                for (size_t j = i + 1; j < n_rows; j++) {
                    uint64_t idx = pair_index(n_rows, i, j);
                    EXPECT_EQ(idx, expect_idx); /* pairs enumerate 0 .. m-1 in order */
                    expect_idx++;
                    int d = codes[c * n_rows + i] != codes[c * n_rows + j];
                    differ += (uint64_t)d;
                    if (mask[idx] != d) {
                        rvt_fail(__FILE__, __LINE__,
                                 "rows %zu col %u pair (%zu,%zu): bit %d, codes %d vs %d", n_rows,
                                 c, i, j, mask[idx], codes[c * n_rows + i], codes[c * n_rows + j]);
                        break;
                    }
                }
            EXPECT_EQ(nc, differ);
        }
        free(mask);
        rv_cover_free(p);
        free(codes);
        if (rvt_n_failures != before) return;
    }
}

static void test_pairs_errors(void) {
    enum { ROWS = 100, COLS = 3 };
    int32_t codes[ROWS * COLS];
    for (int k = 0; k < ROWS * COLS; k++) codes[k] = k % 7;
    rv_cover *p = (rv_cover *)&p;
    /* 4950 pairs -> 78 words = 624 bytes per column, 1872 in all */
    EXPECT_STATUS(RV_E_RANGE, rv_cover_create_pairs(codes, ROWS, COLS, NULL, 1000, &p));
    EXPECT_TRUE(p == NULL);
    EXPECT_STR_CONTAINS(rv_errmsg(), "4950");
    EXPECT_STR_CONTAINS(rv_errmsg(), "1000");
    EXPECT_STATUS(RV_E_RANGE, rv_cover_create_pairs(codes, ROWS, COLS, NULL, 1871, &p));
    EXPECT_OK(rv_cover_create_pairs(codes, ROWS, COLS, NULL, 1872, &p));
    rv_cover_free(p);
    EXPECT_OK(rv_cover_create_pairs(codes, ROWS, COLS, NULL, 0, &p));
    rv_cover_free(p);

    EXPECT_STATUS(RV_E_INVALID_ARG, rv_cover_create_pairs(codes, ROWS, COLS, NULL, 0, NULL));
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_cover_create_pairs(NULL, ROWS, COLS, NULL, 0, &p));
    EXPECT_STR_CONTAINS(rv_errmsg(), "codes");

    codes[1 * ROWS + 42] = -3;
    p = (rv_cover *)&p;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_cover_create_pairs(codes, ROWS, COLS, NULL, 0, &p));
    EXPECT_TRUE(p == NULL);
    EXPECT_STR_CONTAINS(rv_errmsg(), "-3");
    codes[1 * ROWS + 42] = 0;

    const double bad[] = {-2.0, NAN, INFINITY};
    for (int i = 0; i < 3; i++) {
        double c[COLS] = {1, 1, bad[i]};
        EXPECT_STATUS(RV_E_INVALID_ARG, rv_cover_create_pairs(codes, ROWS, COLS, c, 0, &p));
        EXPECT_STR_CONTAINS(rv_errmsg(), "costs[2]");
    }
    {
        double c[COLS] = {1, 1, 0.0}; /* a free column */
        EXPECT_OK(rv_cover_create_pairs(codes, ROWS, COLS, c, 0, &p));
        rv_cover_free(p);
    }

    /* 65537 rows give 2147516416 pairs: above the element limit */
    size_t big = 65537;
    int32_t *zeros = calloc(big, sizeof(int32_t));
    EXPECT_STATUS(RV_E_RANGE, rv_cover_create_pairs(zeros, big, 1, NULL, 0, &p));
    EXPECT_STR_CONTAINS(rv_errmsg(), "2147516416");
    free(zeros);
}

/* Large and sparse code values give the same universe as small codes. */
static void test_pairs_sparse_codes(void) {
    enum { ROWS = 70, COLS = 4 };
    rv_rng r;
    rv_rng_seed(&r, 1000000000u);
    int32_t small[ROWS * COLS], big[ROWS * COLS];
    static const int32_t values[] = {1000000000, INT32_MAX, 0, 999999999, 123456789};
    for (int k = 0; k < ROWS * COLS; k++) {
        small[k] = (int32_t)rv_rng_below(&r, 5);
        big[k] = values[small[k]];
    }
    rv_cover *a = NULL, *b = NULL;
    ASSERT_OK(rv_cover_create_pairs(small, ROWS, COLS, NULL, 0, &a));
    rv_status st = rv_cover_create_pairs(big, ROWS, COLS, NULL, 0, &b);
    if (st != RV_OK) {
        rv_cover_free(a);
        FAILF("sparse codes: %s (%s)", rv_status_name(st), rv_errmsg());
    }
    uint64_t m = ROWS * (ROWS - 1) / 2;
    uint8_t *ma = malloc(m), *mb = malloc(m);
    for (uint32_t c = 0; c < COLS; c++) {
        uint64_t na = 0, nb = 0;
        EXPECT_OK(rv_cover_covered(a, &c, 1, ma, &na));
        EXPECT_OK(rv_cover_covered(b, &c, 1, mb, &nb));
        EXPECT_EQ(na, nb);
        EXPECT_TRUE(memcmp(ma, mb, m) == 0);
    }
    EXPECT_EQ(rv_cover_n_coverable(a), rv_cover_n_coverable(b));
    /* and the key path agrees too */
    uint32_t oa[COLS], ob[COLS];
    uint64_t ra[COLS], rb[COLS], ua = 0, ub = 0;
    size_t sa = 0, sb = 0;
    EXPECT_OK(rv_keys_plan_path(small, ROWS, COLS, NULL, RV_PATH_COVERAGE, 0, NULL, NULL, oa, ra,
                                NULL, COLS, &sa, &ua));
    EXPECT_OK(rv_keys_plan_path(big, ROWS, COLS, NULL, RV_PATH_COVERAGE, 0, NULL, NULL, ob, rb,
                                NULL, COLS, &sb, &ub));
    EXPECT_EQ(sa, sb);
    EXPECT_EQ(ua, ub);
    for (size_t i = 0; i < sa && i < sb; i++) {
        EXPECT_EQ(oa[i], ob[i]);
        EXPECT_EQ(ra[i], rb[i]);
    }
    free(ma);
    free(mb);
    rv_cover_free(a);
    rv_cover_free(b);
}

/* ---------------------------------------------------------------- paths */

/* Is a/ca strictly better than b/cb, up to a relative 1e-12 (the engine's
** documented tie rule: equal up to rounding is a tie, lowest index wins). */
static int ref_better(double a, double ca, double b, double cb) {
    double l = a * cb, rr = b * ca, scale = fabs(l) > fabs(rr) ? fabs(l) : fabs(rr);
    return l - rr > 1e-12 * scale;
}

/* The greedy path by full rescans each step, straight from the header. */
static size_t ref_path(const inst_t *in, rv_path_objective obj, const double *w, uint32_t *order,
                       uint64_t *newly, double *gain) {
    uint8_t *cov = calloc(in->n_el + 1, 1), used[MAX_SETS] = {0};
    double unc = 0;
    for (size_t e = 0; e < in->n_el; e++) unc += w ? w[e] : 1.0;
    size_t steps = 0;
    for (;;) {
        long best = -1;
        double bg = 0, bw = 0;
        uint64_t bc = 0;
        for (size_t s = 0; s < in->n_sets; s++) {
            if (used[s]) continue;
            uint64_t c = 0;
            double ws = 0;
            for (size_t e = 0; e < in->n_el; e++)
                if (in->member[s * in->n_el + e] && !cov[e]) {
                    c++;
                    ws += w ? w[e] : 1.0;
                }
            if (c == 0) continue;
            double g = ws;
            if (obj == RV_PATH_ENTROPY) {
                double after = unc - ws > 0 ? unc - ws : 0;
                g = log2(1 + unc) - log2(1 + after);
            }
            if (best < 0 || ref_better(g, inst_cost(in, s), bg, inst_cost(in, (size_t)best))) {
                best = (long)s;
                bg = g;
                bw = ws;
                bc = c;
            }
        }
        if (best < 0) break;
        used[best] = 1;
        for (size_t e = 0; e < in->n_el; e++)
            if (in->member[(size_t)best * in->n_el + e]) cov[e] = 1;
        unc -= bw;
        order[steps] = (uint32_t)best;
        newly[steps] = bc;
        gain[steps] = bg;
        steps++;
    }
    free(cov);
    return steps;
}

static void test_plan_path_known(void) {
    static const int A[] = {0, 1, 2, -1}, B[] = {3, 4, -1}, C[] = {0, 1, 2, 3, 4, 5, -1},
                     D[] = {5, -1};
    static const int *const sets[] = {A, B, C, D};
    static const double costs[] = {3.0, 1.0, 7.0, 0.9};
    inst_t in;
    inst_from_lists(&in, 7, 4, sets, costs); /* element 6 is uncoverable */
    rv_cover *p = NULL;
    BUILD_OR_FAIL(&in, &p);
    uint32_t order[4];
    uint64_t newly[4];
    double gain[4];
    size_t steps = 0;
    EXPECT_OK(rv_cover_plan_path(p, RV_PATH_COVERAGE, NULL, order, newly, gain, 4, &steps));
    EXPECT_EQ(steps, 3);
    static const uint32_t want_order[] = {1, 3, 0};
    static const uint64_t want_newly[] = {2, 1, 3};
    for (size_t i = 0; i < 3 && i < steps; i++) {
        EXPECT_EQ(order[i], want_order[i]);
        EXPECT_EQ(newly[i], want_newly[i]);
        EXPECT_NEAR(gain[i], (double)want_newly[i], 0);
    }
    /* gain may be NULL */
    EXPECT_OK(rv_cover_plan_path(p, RV_PATH_COVERAGE, NULL, order, newly, NULL, 4, &steps));
    EXPECT_EQ(steps, 3);
    /* weights reorder it: element 5 heavy makes D the best first */
    double w[7] = {1, 1, 1, 1, 1, 10, 1};
    EXPECT_OK(rv_cover_plan_path(p, RV_PATH_COVERAGE, w, order, newly, gain, 4, &steps));
    EXPECT_EQ(steps, 3);
    if (steps == 3) {
        EXPECT_EQ(order[0], 3);
        EXPECT_NEAR(gain[0], 10, 0);
    }
    /* the biggest set first when costs are equal: unit-cost instance */
    inst_t u;
    inst_from_lists(&u, 7, 4, sets, NULL);
    rv_cover *pu = NULL;
    EXPECT_OK(inst_build(&u, &pu));
    EXPECT_OK(rv_cover_plan_path(pu, RV_PATH_COVERAGE, NULL, order, newly, gain, 4, &steps));
    EXPECT_EQ(steps, 1);
    EXPECT_EQ(order[0], 2);
    EXPECT_EQ(newly[0], 6);
    rv_cover_free(pu);
    inst_free(&u);
    rv_cover_free(p);
    inst_free(&in);
}

static void test_plan_path_ties_lowest_index(void) {
    static const int A[] = {0, -1}, B[] = {1, 2, 3, -1}, C[] = {1, 2, 3, -1}, D[] = {4, -1};
    static const int *const sets[] = {A, B, C, D};
    inst_t in;
    inst_from_lists(&in, 5, 4, sets, NULL);
    rv_cover *p = NULL;
    BUILD_OR_FAIL(&in, &p);
    uint32_t order[4];
    uint64_t newly[4];
    size_t steps = 0;
    EXPECT_OK(rv_cover_plan_path(p, RV_PATH_COVERAGE, NULL, order, newly, NULL, 4, &steps));
    EXPECT_EQ(steps, 3);
    if (steps == 3) {
        EXPECT_EQ(order[0], 1); /* B and C tie: B, the lower index */
        EXPECT_EQ(order[1], 0); /* A and D tie */
        EXPECT_EQ(order[2], 3);
    }
    EXPECT_OK(rv_cover_plan_path(p, RV_PATH_ENTROPY, NULL, order, newly, NULL, 4, &steps));
    EXPECT_EQ(steps, 3);
    if (steps == 3) EXPECT_EQ(order[0], 1);
    /* solve greedy: the same order */
    uint32_t sel[4];
    size_t n = 0;
    EXPECT_OK(run_solve(p, RV_COVER_GREEDY, RV_COVER_ALL, 0, 0, sel, &n, NULL));
    EXPECT_EQ(n, 3);
    if (n == 3) {
        EXPECT_EQ(sel[0], 1);
        EXPECT_EQ(sel[1], 0);
        EXPECT_EQ(sel[2], 3);
    }
    rv_cover_free(p);
    inst_free(&in);
}

static void test_plan_path_errors(void) {
    inst_t in;
    inst_from_lists(&in, 6, 4, SMALL_SETS, NULL);
    rv_cover *p = NULL;
    BUILD_OR_FAIL(&in, &p);
    uint32_t order[4];
    uint64_t newly[4];
    size_t steps = 0;
    const double bad[] = {-1.0, NAN, INFINITY, -INFINITY};
    for (int i = 0; i < 4; i++) {
        double w[6] = {1, 1, 1, bad[i], 1, 1};
        rv_errmsg_clear();
        EXPECT_STATUS(RV_E_INVALID_ARG,
                      rv_cover_plan_path(p, RV_PATH_COVERAGE, w, order, newly, NULL, 4, &steps));
        EXPECT_STR_CONTAINS(rv_errmsg(), "weights[3]");
    }
    double zeros[6] = {0};
    EXPECT_OK(rv_cover_plan_path(p, RV_PATH_COVERAGE, zeros, order, newly, NULL, 4, &steps));
    EXPECT_EQ(steps, 3); /* zero weight still covers elements */
    EXPECT_STATUS(RV_E_INVALID_ARG,
                  rv_cover_plan_path(p, (rv_path_objective)2, NULL, order, newly, NULL, 4, &steps));
    EXPECT_STATUS(RV_E_SHAPE,
                  rv_cover_plan_path(p, RV_PATH_COVERAGE, NULL, order, newly, NULL, 3, &steps));
    EXPECT_STATUS(RV_E_INVALID_ARG,
                  rv_cover_plan_path(NULL, RV_PATH_COVERAGE, NULL, order, newly, NULL, 4, &steps));
    EXPECT_STATUS(RV_E_INVALID_ARG,
                  rv_cover_plan_path(p, RV_PATH_COVERAGE, NULL, NULL, newly, NULL, 4, &steps));
    EXPECT_STATUS(RV_E_INVALID_ARG,
                  rv_cover_plan_path(p, RV_PATH_COVERAGE, NULL, order, NULL, NULL, 4, &steps));
    EXPECT_STATUS(RV_E_INVALID_ARG,
                  rv_cover_plan_path(p, RV_PATH_COVERAGE, NULL, order, newly, NULL, 4, NULL));
    rv_cover_free(p);
    inst_free(&in);
}

/* Random instances, both objectives, with and without costs and weights:
** the path equals the plain reference greedy; newly covered sums to the
** coverable count; entropy gains telescope. */
static void test_plan_path_vs_reference(void) {
    rv_rng r;
    rv_rng_seed(&r, 4242);
    for (int trial = 0; trial < 120; trial++) {
        inst_t in;
        size_t n_sets = 1 + (size_t)rv_rng_below(&r, 30), n_el = 1 + (size_t)rv_rng_below(&r, 120);
        inst_random(&in, &r, n_el, n_sets, 0.02 + 0.3 * rv_rng_uniform(&r), trial % 3);
        rv_cover *p = NULL;
        BUILD_OR_FAIL(&in, &p);
        rv_path_objective obj = (trial / 3) % 2 ? RV_PATH_ENTROPY : RV_PATH_COVERAGE;
        int weighted = (trial / 6) % 2;
        double *w = NULL, wtotal = (double)n_el;
        if (weighted) {
            w = malloc(n_el * sizeof(double));
            wtotal = 0;
            for (size_t e = 0; e < n_el; e++) {
                w[e] = rv_rng_below(&r, 5) == 0 ? 0.0 : rv_rng_uniform(&r) * 3;
                wtotal += w[e];
            }
        }
        uint32_t order[MAX_SETS], ro[MAX_SETS];
        uint64_t newly[MAX_SETS], rn[MAX_SETS];
        double gain[MAX_SETS], rg[MAX_SETS];
        size_t steps = 0;
        long before = rvt_n_failures;
        EXPECT_OK(rv_cover_plan_path(p, obj, w, order, newly, gain, n_sets, &steps));
        size_t rsteps = ref_path(&in, obj, w, ro, rn, rg);
        EXPECT_EQ(steps, rsteps);
        uint64_t sum = 0;
        double gsum = 0;
        for (size_t i = 0; i < steps && i < rsteps && rvt_n_failures == before; i++) {
            EXPECT_EQ(order[i], ro[i]);
            EXPECT_EQ(newly[i], rn[i]);
            EXPECT_NEAR(gain[i], rg[i], 1e-9 * (1 + fabs(rg[i])));
            sum += newly[i];
            gsum += gain[i];
        }
        if (rvt_n_failures == before) {
            EXPECT_EQ(sum, rv_cover_n_coverable(p));
            double wcov = 0; /* weight of the coverable elements */
            for (size_t e = 0; e < n_el; e++) {
                int any = 0;
                for (size_t s = 0; s < n_sets && !any; s++) any = in.member[s * n_el + e];
                if (any) wcov += w ? w[e] : 1.0;
            }
            double expect =
                obj == RV_PATH_ENTROPY ? log2(1 + wtotal) - log2(1 + (wtotal - wcov)) : wcov;
            EXPECT_NEAR(gsum, expect, 1e-9 * (1 + expect));
        }
        free(w);
        rv_cover_free(p);
        inst_free(&in);
        if (rvt_n_failures != before)
            FAILF("trial %d: %zu sets x %zu el, objective %d, weighted %d, cost kind %d", trial,
                  n_sets, n_el, (int)obj, weighted, trial % 3);
    }
}

/* Greedy solve picks the same sets, in the same order, as the path with unit
** weights and the coverage objective (it only stops earlier for partial
** covers), and reaches the target. */
static void test_greedy_solve_matches_path(void) {
    rv_rng r;
    rv_rng_seed(&r, 31);
    for (int trial = 0; trial < 60; trial++) {
        inst_t in;
        size_t n_sets = 1 + (size_t)rv_rng_below(&r, 30), n_el = 1 + (size_t)rv_rng_below(&r, 100);
        inst_random(&in, &r, n_el, n_sets, 0.1, trial % 3);
        rv_cover *p = NULL;
        BUILD_OR_FAIL(&in, &p);
        uint32_t order[MAX_SETS], sel[MAX_SETS];
        uint64_t newly[MAX_SETS];
        size_t steps = 0, n = 0;
        long before = rvt_n_failures;
        EXPECT_OK(
            rv_cover_plan_path(p, RV_PATH_COVERAGE, NULL, order, newly, NULL, n_sets, &steps));
        uint64_t req = rv_rng_below(&r, rv_cover_n_coverable(p) + 1);
        EXPECT_OK(run_solve(p, RV_COVER_GREEDY, req, 0, 0, sel, &n, NULL));
        /* the shortest prefix of the path reaching req */
        size_t k = 0;
        uint64_t c = 0;
        while (c < req && k < steps) c += newly[k++];
        EXPECT_EQ(n, k);
        for (size_t i = 0; i < n && i < k; i++) EXPECT_EQ(sel[i], order[i]);
        rv_cover_free(p);
        inst_free(&in);
        if (rvt_n_failures != before) FAILF("trial %d", trial);
    }
}

/* --------------------------------------------------------------- key paths */

static void test_keys_path_vs_cover_path(void) {
    rv_rng r;
    rv_rng_seed(&r, 6060);
    for (int trial = 0; trial < 150; trial++) {
        size_t n_rows = (size_t)rv_rng_below(&r, 70), n_cols = 1 + (size_t)rv_rng_below(&r, 10);
        uint32_t card[16];
        for (size_t c = 0; c < n_cols; c++) {
            static const uint32_t cards[] = {1, 2, 2, 3, 4, 6, 50};
            card[c] = cards[rv_rng_below(&r, 7)];
        }
        int32_t *codes = random_codes(&r, n_rows, n_cols, card);
        /* duplicate a column now and then: an exact tie */
        if (n_cols >= 3 && trial % 4 == 0)
            memcpy(codes + 2 * n_rows, codes, n_rows * sizeof(int32_t));
        /* a sparse-coded column */
        if (n_cols >= 2 && trial % 5 == 0)
            for (size_t i = 0; i < n_rows; i++)
                codes[n_rows + i] = codes[n_rows + i] * 40000000 + 7;
        int kind = trial % 3;
        double costs[16];
        for (size_t c = 0; c < n_cols; c++)
            costs[c] = kind == 1 ? (double)(1 + rv_rng_below(&r, 3)) : 0.2 + 4 * rv_rng_uniform(&r);
        const double *cp = kind == 0 ? NULL : costs;

        rv_cover *p = NULL;
        rv_status st = rv_cover_create_pairs(codes, n_rows, n_cols, cp, 0, &p);
        if (st != RV_OK) {
            free(codes);
            FAILF("trial %d: create_pairs %s (%s)", trial, rv_status_name(st), rv_errmsg());
        }
        uint32_t o1[16], o2[16];
        uint64_t n1[16], n2[16], unres = 0;
        double g1[16], g2[16];
        size_t s1 = 0, s2 = 0;
        long before = rvt_n_failures;
        EXPECT_OK(rv_cover_plan_path(p, RV_PATH_COVERAGE, NULL, o1, n1, g1, n_cols, &s1));
        EXPECT_OK(rv_keys_plan_path(codes, n_rows, n_cols, cp, RV_PATH_COVERAGE, 0, NULL, NULL, o2,
                                    n2, g2, n_cols, &s2, &unres));
        EXPECT_EQ(s1, s2);
        uint64_t total = n_rows < 2 ? 0 : (uint64_t)n_rows * (n_rows - 1) / 2, sum = 0;
        for (size_t i = 0; i < s1 && i < s2 && rvt_n_failures == before; i++) {
            EXPECT_EQ(o1[i], o2[i]);
            EXPECT_EQ(n1[i], n2[i]);
            EXPECT_NEAR(g1[i], g2[i], 1e-9 * (1 + g1[i]));
            sum += n2[i];
        }
        uint32_t all[16];
        for (size_t c = 0; c < n_cols; c++) all[c] = (uint32_t)c;
        uint64_t brute = brute_unresolved(codes, n_rows, all, n_cols);
        EXPECT_EQ(unres, brute);
        EXPECT_EQ(unres, total - sum);
        EXPECT_EQ(rv_cover_n_coverable(p), total - brute);
        rv_cover_free(p);
        free(codes);
        if (rvt_n_failures != before)
            FAILF("trial %d: %zu rows x %zu cols, cost kind %d", trial, n_rows, n_cols, kind);
    }
}

/* Partition of the rows by the columns in cols: sum of g log2 g over groups. */
static double ref_nlogn_groups(const int32_t *codes, size_t n_rows, const uint32_t *cols,
                               size_t n_sel) {
    double tot = 0;
    uint8_t *done = calloc(n_rows + 1, 1);
    for (size_t i = 0; i < n_rows; i++) {
        if (done[i]) continue;
        size_t g = 0;
        for (size_t j = i; j < n_rows; j++) {
            int same = 1;
            for (size_t k = 0; k < n_sel && same; k++)
                same = codes[(size_t)cols[k] * n_rows + i] == codes[(size_t)cols[k] * n_rows + j];
            if (same) {
                done[j] = 1;
                g++;
            }
        }
        if (g > 1) tot += (double)g * log2((double)g);
    }
    free(done);
    return tot;
}

/* Entropy objective: every gain is the drop in expected log2 cluster size,
** and each step's column has the best gain per cost. */
static void test_keys_entropy_path(void) {
    rv_rng r;
    rv_rng_seed(&r, 321);
    for (int trial = 0; trial < 40; trial++) {
        size_t n_rows = 2 + (size_t)rv_rng_below(&r, 50), n_cols = 1 + (size_t)rv_rng_below(&r, 8);
        uint32_t card[16];
        for (size_t c = 0; c < n_cols; c++) card[c] = 1 + (uint32_t)rv_rng_below(&r, 6);
        int32_t *codes = random_codes(&r, n_rows, n_cols, card);
        double costs[16];
        for (size_t c = 0; c < n_cols; c++) costs[c] = 0.5 + 2 * rv_rng_uniform(&r);
        const double *cp = trial % 2 ? costs : NULL;
        uint32_t order[16];
        uint64_t newly[16], unres = 0;
        double gain[16];
        size_t steps = 0;
        long before = rvt_n_failures;
        EXPECT_OK(rv_keys_plan_path(codes, n_rows, n_cols, cp, RV_PATH_ENTROPY, 0, NULL, NULL,
                                    order, newly, gain, n_cols, &steps, &unres));
        double n = (double)n_rows;
        for (size_t i = 0; i < steps && rvt_n_failures == before; i++) {
            double h0 = ref_nlogn_groups(codes, n_rows, order, i) / n;
            double h1 = ref_nlogn_groups(codes, n_rows, order, i + 1) / n;
            EXPECT_NEAR(gain[i], h0 - h1, 1e-9);
            EXPECT_EQ(newly[i], brute_unresolved(codes, n_rows, order, i) -
                                    brute_unresolved(codes, n_rows, order, i + 1));
            /* no unused column separating anything does better per cost */
            uint32_t trial_cols[17];
            memcpy(trial_cols, order, i * sizeof(uint32_t));
            for (uint32_t c = 0; c < n_cols; c++) {
                int used = 0;
                for (size_t k = 0; k < i; k++) used |= order[k] == c;
                if (used) continue;
                trial_cols[i] = c;
                if (brute_unresolved(codes, n_rows, trial_cols, i + 1) ==
                    brute_unresolved(codes, n_rows, order, i))
                    continue;
                double gc = h0 - ref_nlogn_groups(codes, n_rows, trial_cols, i + 1) / n;
                double cc = cp ? cp[c] : 1.0, cb = cp ? cp[order[i]] : 1.0;
                if (gc / cc > gain[i] / cb + 1e-9)
                    rvt_fail(__FILE__, __LINE__,
                             "step %zu: column %u gains %.17g/%g, chosen %u %.17g/%g", i, c, gc, cc,
                             order[i], gain[i], cb);
            }
        }
        uint32_t all[16];
        for (size_t c = 0; c < n_cols; c++) all[c] = (uint32_t)c;
        EXPECT_EQ(unres, brute_unresolved(codes, n_rows, all, n_cols));
        free(codes);
        if (rvt_n_failures != before) FAILF("trial %d: %zu rows x %zu cols", trial, n_rows, n_cols);
    }
}

static void test_keys_stop_unresolved(void) {
    rv_rng r;
    rv_rng_seed(&r, 77);
    for (int trial = 0; trial < 60; trial++) {
        size_t n_rows = 2 + (size_t)rv_rng_below(&r, 60), n_cols = 1 + (size_t)rv_rng_below(&r, 8);
        uint32_t card[16];
        for (size_t c = 0; c < n_cols; c++) card[c] = 1 + (uint32_t)rv_rng_below(&r, 5);
        int32_t *codes = random_codes(&r, n_rows, n_cols, card);
        uint32_t fo[16], so[16];
        uint64_t fn[16], sn[16], fu = 0, su = 0;
        size_t fs = 0, ss = 0;
        long before = rvt_n_failures;
        EXPECT_OK(rv_keys_plan_path(codes, n_rows, n_cols, NULL, RV_PATH_COVERAGE, 0, NULL, NULL,
                                    fo, fn, NULL, n_cols, &fs, &fu));
        uint64_t total = (uint64_t)n_rows * (n_rows - 1) / 2;
        uint64_t stop = trial % 7 == 0 ? total : rv_rng_below(&r, total + 1);
        EXPECT_OK(rv_keys_plan_path(codes, n_rows, n_cols, NULL, RV_PATH_COVERAGE, stop, NULL, NULL,
                                    so, sn, NULL, n_cols, &ss, &su));
        /* expected: the shortest prefix of the full path that gets to <= stop */
        size_t k = 0;
        uint64_t u = total;
        while (u > stop && k < fs) u -= fn[k++];
        EXPECT_EQ(ss, k);
        EXPECT_EQ(su, u);
        EXPECT_TRUE(su <= stop || ss == fs);
        for (size_t i = 0; i < ss && i < k; i++) {
            EXPECT_EQ(so[i], fo[i]);
            EXPECT_EQ(sn[i], fn[i]);
        }
        EXPECT_EQ(su, brute_unresolved(codes, n_rows, so, ss));
        free(codes);
        if (rvt_n_failures != before) FAILF("trial %d stop %llu", trial, (unsigned long long)stop);
    }
}

static void test_keys_unresolved_vs_brute(void) {
    rv_rng r;
    rv_rng_seed(&r, 88);
    for (int trial = 0; trial < 80; trial++) {
        size_t n_rows = (size_t)rv_rng_below(&r, 80), n_cols = 1 + (size_t)rv_rng_below(&r, 8);
        uint32_t card[16];
        for (size_t c = 0; c < n_cols; c++) card[c] = 1 + (uint32_t)rv_rng_below(&r, 6);
        int32_t *codes = random_codes(&r, n_rows, n_cols, card);
        if (trial % 6 == 0)
            for (size_t i = 0; i < n_rows; i++) codes[i] = codes[i] * 300000000;
        uint32_t cols[20];
        size_t n_sel = (size_t)rv_rng_below(&r, 12);
        for (size_t k = 0; k < n_sel; k++) cols[k] = (uint32_t)rv_rng_below(&r, n_cols);
        uint64_t u = 12345;
        long before = rvt_n_failures;
        EXPECT_OK(rv_keys_unresolved(codes, n_rows, n_cols, cols, n_sel, &u));
        EXPECT_EQ(u, brute_unresolved(codes, n_rows, cols, n_sel));
        free(codes);
        if (rvt_n_failures != before)
            FAILF("trial %d: %zu rows, %zu selected", trial, n_rows, n_sel);
    }
    int32_t codes[6] = {0, 1, 0, 1, 1, 1};
    uint32_t bad[2] = {0, 2};
    uint64_t u = 0;
    EXPECT_STATUS(RV_E_RANGE, rv_keys_unresolved(codes, 3, 2, bad, 2, &u));
    EXPECT_STR_CONTAINS(rv_errmsg(), "2");
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_keys_unresolved(codes, 3, 2, bad, 1, NULL));
    EXPECT_OK(rv_keys_unresolved(codes, 3, 2, NULL, 0, &u));
    EXPECT_EQ(u, 3);
}

static int stop_at_second(void *ctx, uint64_t done, uint64_t total) {
    int *calls = ctx;
    (void)done;
    (void)total;
    return ++*calls >= 2;
}

static void test_keys_progress_and_errors(void) {
    enum { ROWS = 40, COLS = 6 };
    rv_rng r;
    rv_rng_seed(&r, 5);
    uint32_t card[COLS] = {2, 2, 3, 3, 2, 5};
    int32_t *codes = random_codes(&r, ROWS, COLS, card);
    uint32_t order[COLS];
    uint64_t newly[COLS], unres = 0;
    size_t steps = 9;
    int calls = 0;
    EXPECT_STATUS(RV_E_INTERRUPTED,
                  rv_keys_plan_path(codes, ROWS, COLS, NULL, RV_PATH_COVERAGE, 0, stop_at_second,
                                    &calls, order, newly, NULL, COLS, &steps, &unres));
    EXPECT_EQ(calls, 2);
    EXPECT_EQ(steps, 0);
    calls = 0;
    EXPECT_STATUS(RV_E_INTERRUPTED,
                  rv_keys_plan_path(codes, ROWS, COLS, NULL, RV_PATH_ENTROPY, 0, stop_now, &calls,
                                    order, newly, NULL, COLS, &steps, &unres));
    EXPECT_EQ(calls, 1);
    calls = 0;
    EXPECT_OK(rv_keys_plan_path(codes, ROWS, COLS, NULL, RV_PATH_COVERAGE, 0, count_calls, &calls,
                                order, newly, NULL, COLS, &steps, &unres));
    EXPECT_TRUE((size_t)calls >= steps && steps > 0);

    codes[3 * ROWS + 7] = -1;
    EXPECT_STATUS(RV_E_INVALID_ARG,
                  rv_keys_plan_path(codes, ROWS, COLS, NULL, RV_PATH_COVERAGE, 0, NULL, NULL, order,
                                    newly, NULL, COLS, &steps, &unres));
    EXPECT_STR_CONTAINS(rv_errmsg(), "negative");
    codes[3 * ROWS + 7] = 0;
    double costs[COLS] = {1, 1, 1, 1, NAN, 1};
    EXPECT_STATUS(RV_E_INVALID_ARG,
                  rv_keys_plan_path(codes, ROWS, COLS, costs, RV_PATH_COVERAGE, 0, NULL, NULL,
                                    order, newly, NULL, COLS, &steps, &unres));
    EXPECT_STR_CONTAINS(rv_errmsg(), "costs[4]");
    costs[4] = -1;
    EXPECT_STATUS(RV_E_INVALID_ARG,
                  rv_keys_plan_path(codes, ROWS, COLS, costs, RV_PATH_COVERAGE, 0, NULL, NULL,
                                    order, newly, NULL, COLS, &steps, &unres));
    costs[4] = 0; /* a free column is fine */
    EXPECT_OK(rv_keys_plan_path(codes, ROWS, COLS, costs, RV_PATH_COVERAGE, 0, NULL, NULL, order,
                                newly, NULL, COLS, &steps, &unres));
    EXPECT_STATUS(RV_E_SHAPE,
                  rv_keys_plan_path(codes, ROWS, COLS, NULL, RV_PATH_COVERAGE, 0, NULL, NULL, order,
                                    newly, NULL, COLS - 1, &steps, &unres));
    EXPECT_STATUS(RV_E_INVALID_ARG,
                  rv_keys_plan_path(codes, ROWS, COLS, NULL, (rv_path_objective)7, 0, NULL, NULL,
                                    order, newly, NULL, COLS, &steps, &unres));
    EXPECT_STATUS(RV_E_INVALID_ARG,
                  rv_keys_plan_path(NULL, ROWS, COLS, NULL, RV_PATH_COVERAGE, 0, NULL, NULL, order,
                                    newly, NULL, COLS, &steps, &unres));
    EXPECT_STATUS(RV_E_INVALID_ARG,
                  rv_keys_plan_path(codes, ROWS, COLS, NULL, RV_PATH_COVERAGE, 0, NULL, NULL, order,
                                    newly, NULL, COLS, &steps, NULL));
    /* degenerate frames: no rows, one row, no columns */
    EXPECT_OK(rv_keys_plan_path(codes, 0, COLS, NULL, RV_PATH_COVERAGE, 0, NULL, NULL, order, newly,
                                NULL, COLS, &steps, &unres));
    EXPECT_EQ(steps, 0);
    EXPECT_EQ(unres, 0);
    EXPECT_OK(rv_keys_plan_path(codes, 1, COLS, NULL, RV_PATH_COVERAGE, 0, NULL, NULL, order, newly,
                                NULL, COLS, &steps, &unres));
    EXPECT_EQ(unres, 0);
    EXPECT_OK(rv_keys_plan_path(codes, ROWS, 0, NULL, RV_PATH_COVERAGE, 0, NULL, NULL, order, newly,
                                NULL, 0, &steps, &unres));
    EXPECT_EQ(steps, 0);
    EXPECT_EQ(unres, ROWS * (ROWS - 1) / 2);
    free(codes);
}

/* ------------------------------------------------- keys over table pieces */

static void test_count_values_vs_naive(void) {
    rv_rng r;
    rv_rng_seed(&r, 41);
    static const uint64_t spans[] = {1, 3, 50, 1000, 0}; /* 0: full 64-bit keys */
    static const uint32_t buckets[] = {1, 3, 7};
    for (int t = 0; t < 60; t++) {
        size_t n = (size_t)rv_rng_below(&r, 300);
        uint64_t span = spans[t % 5], base = rv_rng_next(&r) >> (t % 2 ? 0 : 40);
        uint32_t nb = buckets[t % 3];
        int weighted = t % 4 == 1, massed = t % 3 == 2;
        uint64_t *keys = malloc((n + 1) * sizeof(uint64_t)), *w = malloc((n + 1) * 8);
        double *m = malloc((n + 1) * sizeof(double));
        for (size_t i = 0; i < n; i++) {
            keys[i] = span ? base + rv_rng_below(&r, span) : rv_rng_next(&r);
            if (span == 0 && i && rv_rng_below(&r, 3) == 0) keys[i] = keys[rv_rng_below(&r, i)];
            w[i] = 1 + rv_rng_below(&r, 5);
            m[i] = (double)rv_rng_below(&r, 100) / 8.0;
        }
        uint64_t *ok = malloc((n + 1) * 8), *oc = malloc((n + 1) * 8), off[8];
        double *om = malloc((n + 1) * sizeof(double));
        size_t nd = 0;
        ASSERT_OK(rv_keys_count_values(keys, weighted ? w : NULL, massed ? m : NULL, n, nb, ok, oc,
                                       massed ? om : NULL, off, n, &nd));
        EXPECT_EQ(off[0], 0);
        EXPECT_EQ(off[nb], nd);
        size_t distinct = 0;
        for (size_t i = 0; i < n; i++) {
            size_t first = i;
            for (size_t k = 0; k < i; k++)
                if (keys[k] == keys[i]) {
                    first = k;
                    break;
                }
            if (first != i) continue;
            distinct++;
            uint64_t want_c = 0;
            double want_m = 0;
            for (size_t k = 0; k < n; k++)
                if (keys[k] == keys[i]) {
                    want_c += weighted ? w[k] : 1;
                    want_m += m[k];
                }
            size_t at = nd;
            for (size_t e = 0; e < nd; e++)
                if (ok[e] == keys[i]) at = e;
            ASSERT_TRUE(at < nd);
            EXPECT_EQ(oc[at], want_c);
            if (massed) EXPECT_NEAR(om[at], want_m, 1e-12);
            /* A key's bucket does not depend on the other keys. */
            uint64_t one_k, one_c, one_off[8];
            size_t one_n;
            ASSERT_OK(rv_keys_count_values(&keys[i], NULL, NULL, 1, nb, &one_k, &one_c, NULL,
                                           one_off, 1, &one_n));
            for (uint32_t b = 0; b < nb; b++)
                if (one_off[b + 1] == 1 && one_off[b] == 0) {
                    EXPECT_TRUE(at >= off[b] && at < off[b + 1]);
                }
        }
        EXPECT_EQ(nd, distinct);
        /* First appearance order inside each bucket. */
        for (uint32_t b = 0; b < nb; b++)
            for (uint64_t e = off[b]; e + 1 < off[b + 1]; e++) {
                size_t fa = n, fb = n;
                for (size_t k = 0; k < n; k++) {
                    if (fa == n && keys[k] == ok[e]) fa = k;
                    if (fb == n && keys[k] == ok[e + 1]) fb = k;
                }
                EXPECT_TRUE(fa < fb);
            }
        free(keys);
        free(w);
        free(m);
        free(ok);
        free(oc);
        free(om);
    }
    uint64_t k = 1, o[2];
    size_t nd;
    EXPECT_STATUS(RV_E_INVALID_ARG,
                  rv_keys_count_values(&k, NULL, NULL, 1, 0, o, o, NULL, o, 1, &nd));
    EXPECT_STATUS(RV_E_SHAPE, rv_keys_count_values(&k, NULL, NULL, 1, 1, o, o, NULL, o, 0, &nd));
    EXPECT_STATUS(RV_E_INVALID_ARG,
                  rv_keys_count_values(NULL, NULL, NULL, 1, 1, o, o, NULL, o, 1, &nd));
    EXPECT_OK(rv_keys_count_values(NULL, NULL, NULL, 0, 1, NULL, NULL, NULL, o, 0, &nd));
    EXPECT_EQ(nd, 0);
}

static void test_group_scores_and_refine_vs_brute(void) {
    rv_rng r;
    rv_rng_seed(&r, 43);
    for (int t = 0; t < 40; t++) {
        size_t n = (size_t)rv_rng_below(&r, 90), cols = 4;
        uint32_t card[4] = {1 + (uint32_t)rv_rng_below(&r, 6), 1 + (uint32_t)rv_rng_below(&r, 4),
                            1 + (uint32_t)rv_rng_below(&r, 9), t % 2 ? 5000u : 2u};
        int32_t *raw = random_codes(&r, n, cols, card);
        /* Rows sorted by column 0, so its values form contiguous groups. */
        int32_t *codes = malloc((n * cols + 1) * sizeof(int32_t));
        uint64_t *off = malloc((n + 2) * sizeof(uint64_t));
        size_t at = 0, g = 0;
        off[0] = 0;
        for (int32_t v = 0; v < (int32_t)card[0]; v++) {
            size_t before = at;
            for (size_t i = 0; i < n; i++)
                if (raw[i] == v) {
                    for (size_t c = 0; c < cols; c++) codes[c * n + at] = raw[c * n + i];
                    at++;
                }
            if (at > before) off[++g] = at;
        }
        uint64_t res[4];
        double ent[4];
        ASSERT_OK(rv_keys_group_scores(codes, n, cols, off, g, res, ent));
        uint32_t sel0[1] = {0};
        uint64_t base = brute_unresolved(codes, n, sel0, 1);
        for (uint32_t c = 0; c < cols; c++) {
            uint32_t sel[2] = {0, c};
            EXPECT_EQ(res[c], base - brute_unresolved(codes, n, sel, 2));
            /* entropy: sum over groups of len log2 len - sum over (group, value) */
            double want = 0;
            for (size_t k = 0; k < g; k++) {
                size_t len = (size_t)(off[k + 1] - off[k]);
                want += len > 1 ? (double)len * log2((double)len) : 0;
                for (size_t i = (size_t)off[k]; i < (size_t)off[k + 1]; i++) {
                    size_t cnt = 0, seen = 0;
                    for (size_t j = (size_t)off[k]; j < (size_t)off[k + 1]; j++) {
                        if (codes[c * n + j] == codes[c * n + i]) cnt++;
                        if (j < i && codes[c * n + j] == codes[c * n + i]) seen = 1;
                    }
                    if (!seen && cnt > 1) want -= (double)cnt * log2((double)cnt);
                }
            }
            EXPECT_NEAR(ent[c], want, 1e-9 * (1 + fabs(want)));
        }
        /* Refine by column 1: parts share columns 0 and 1, have >= 2 rows,
        ** and their pairs are the pairs unresolved by {0, 1}. */
        uint32_t *rows = malloc((n + 1) * sizeof(uint32_t));
        uint64_t *off2 = malloc((n / 2 + 2) * sizeof(uint64_t));
        size_t kept = 0, parts = 0;
        ASSERT_OK(rv_keys_group_refine(codes + n, n, off, g, rows, off2, &kept, &parts));
        uint32_t sel01[2] = {0, 1};
        uint64_t pairs = 0;
        EXPECT_EQ(off2[0], 0);
        EXPECT_EQ(off2[parts], kept);
        for (size_t k = 0; k < parts; k++) {
            uint64_t len = off2[k + 1] - off2[k];
            EXPECT_TRUE(len >= 2);
            pairs += len * (len - 1) / 2;
            for (uint64_t i = off2[k] + 1; i < off2[k + 1]; i++) {
                EXPECT_EQ(codes[rows[i]], codes[rows[off2[k]]]);
                EXPECT_EQ(codes[n + rows[i]], codes[n + rows[off2[k]]]);
                EXPECT_TRUE(rows[i] > rows[i - 1]); /* input order inside a part */
            }
        }
        EXPECT_EQ(pairs, brute_unresolved(codes, n, sel01, 2));
        free(raw);
        free(codes);
        free(off);
        free(rows);
        free(off2);
    }
    int32_t bad[3] = {0, -1, 0};
    uint64_t off[2] = {0, 3}, desc[2] = {2, 1}, res[1], o2[4];
    uint32_t rows[3];
    size_t a, b;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_keys_group_scores(bad, 3, 1, off, 1, res, NULL));
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_keys_group_refine(bad, 3, off, 1, rows, o2, &a, &b));
    int32_t good[3] = {0, 1, 0};
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_keys_group_scores(good, 3, 1, desc, 1, res, NULL));
    uint64_t past[2] = {0, 4};
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_keys_group_refine(good, 3, past, 1, rows, o2, &a, &b));
    EXPECT_OK(rv_keys_group_refine(good, 3, off, 1, rows, o2, &a, &b));
    EXPECT_EQ(a, 2);
    EXPECT_EQ(b, 1);
    EXPECT_EQ(rows[0], 0);
    EXPECT_EQ(rows[1], 2);
}

int main(void) {
    RUN_TEST(test_create_errors);
    RUN_TEST(test_free_null_and_sizes_of_null);
    RUN_TEST(test_sizes_and_covered);
    RUN_TEST(test_element_counts_random);
    RUN_TEST(test_element_counts_empty_universe);
    RUN_TEST(test_distinct_elements);
    RUN_TEST(test_solve_errors);
    RUN_TEST(test_solve_degenerate);
    RUN_TEST(test_greedy_known_order);
    RUN_TEST(test_strategies_valid_random);
    RUN_TEST(test_exact_vs_bruteforce_full);
    RUN_TEST(test_exact_vs_bruteforce_partial);
    RUN_TEST(test_free_sets_vs_bruteforce);
    RUN_TEST(test_free_sets_known);
    RUN_TEST(test_lp_errors);
    RUN_TEST(test_lp_triangle);
    RUN_TEST(test_lp_random);
    RUN_TEST(test_lp_time_limit);
    RUN_TEST(test_infeasible_and_required_edges);
    RUN_TEST(test_seed_determinism);
    RUN_TEST(test_exact_leq_others_midsize);
    RUN_TEST(test_exact_timeout);
    RUN_TEST(test_solve_progress_interrupt);
    RUN_TEST(test_time_limit_none);
    RUN_TEST(test_concurrent_solves);
    RUN_TEST(test_exact_key_problem);
    RUN_TEST(test_pairs_vs_naive);
    RUN_TEST(test_pairs_errors);
    RUN_TEST(test_pairs_sparse_codes);
    RUN_TEST(test_plan_path_known);
    RUN_TEST(test_plan_path_ties_lowest_index);
    RUN_TEST(test_plan_path_errors);
    RUN_TEST(test_plan_path_vs_reference);
    RUN_TEST(test_greedy_solve_matches_path);
    RUN_TEST(test_keys_path_vs_cover_path);
    RUN_TEST(test_keys_entropy_path);
    RUN_TEST(test_keys_stop_unresolved);
    RUN_TEST(test_keys_unresolved_vs_brute);
    RUN_TEST(test_keys_progress_and_errors);
    RUN_TEST(test_count_values_vs_naive);
    RUN_TEST(test_group_scores_and_refine_vs_brute);
    return RV_TEST_SUMMARY();
}
