/*
** Tests of the flat vector index (include/rowvoi/flat.h): search against a
** brute-force reference, ties, threads, compact storage, deletes, filters,
** errors, save/load, corrupted files and allocation failures.
*/
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <stdlib.h>
#include <unistd.h>

#include "rv_test.h"
#include "../../src/dense/flat_internal.h"

/* Random vectors with small integer components: every dot product and
** squared distance is exact in float32, so rankings and ties are exact. */
static float *int_vectors(size_t n, size_t dim, uint64_t seed, int range) {
    rv_rng rng;
    rv_rng_seed(&rng, seed);
    float *v = (float *)malloc(n * dim * sizeof *v);
    for (size_t i = 0; i < n * dim; i++)
        v[i] = (float)((int)rv_rng_below(&rng, (uint64_t)(2 * range + 1)) - range);
    return v;
}

/* Kernel set 0: the one this machine selects (AVX2 where it has it); set 1:
** the portable twin.  The kernel tests run both. */
static void kernel_set(int set, rv__flat_kernels *k) {
    if (set == 0)
        rv__flat_kernels_select(k);
    else
        rv__flat_kernels_portable(k);
}

static float *gauss_vectors(size_t n, size_t dim, uint64_t seed) {
    rv_rng rng;
    rv_rng_seed(&rng, seed);
    float *v = (float *)malloc(n * dim * sizeof *v);
    for (size_t i = 0; i < n * dim; i++) {
        double u1 = rv_rng_uniform(&rng), u2 = rv_rng_uniform(&rng);
        v[i] = (float)(sqrt(-2.0 * log(u1 + 1e-300)) * cos(6.283185307179586 * u2));
    }
    return v;
}

static rv_flat *make(uint32_t dim, rv_metric metric, rv_flat_storage storage) {
    rv_flat_options o;
    rv_flat_options_init(&o);
    o.dim = dim;
    o.metric = metric;
    o.storage = storage;
    rv_flat *ix = NULL;
    if (rv_flat_create(&o, &ix) != RV_OK) return NULL;
    return ix;
}

/* Reference: score every row in double, rank (better score, lower id). */
typedef struct ref_hit {
    double s;
    int64_t id;
} ref_hit;
static int ref_metric_l2;
static int cmp_ref(const void *pa, const void *pb) {
    const ref_hit *a = (const ref_hit *)pa, *b = (const ref_hit *)pb;
    if (a->s != b->s) {
        int a_first = ref_metric_l2 ? a->s < b->s : a->s > b->s;
        return a_first ? -1 : 1;
    }
    return (a->id > b->id) - (a->id < b->id);
}

static void reference(const float *data, const int64_t *ids, size_t n, size_t dim, rv_metric metric,
                      const float *q, size_t k, int64_t *out_ids, double *out_s) {
    ref_hit *h = (ref_hit *)malloc(n * sizeof *h);
    double qn = 0;
    for (size_t j = 0; j < dim; j++) qn += (double)q[j] * q[j];
    for (size_t i = 0; i < n; i++) {
        double dot = 0, xn = 0, d2 = 0;
        for (size_t j = 0; j < dim; j++) {
            double x = data[i * dim + j];
            dot += x * q[j];
            xn += x * x;
            d2 += (x - q[j]) * (x - q[j]);
        }
        h[i].id = ids ? ids[i] : (int64_t)i;
        h[i].s = metric == RV_METRIC_L2       ? d2
                 : metric == RV_METRIC_COSINE ? dot / sqrt(xn * qn)
                                              : dot;
    }
    ref_metric_l2 = metric == RV_METRIC_L2;
    qsort(h, n, sizeof *h, cmp_ref);
    for (size_t i = 0; i < k && i < n; i++) {
        out_ids[i] = h[i].id;
        out_s[i] = h[i].s;
    }
    free(h);
}

static void test_options_and_create_errors(void) {
    rv_flat_options o;
    rv_flat_options_init(&o);
    EXPECT_EQ(o.metric, RV_METRIC_COSINE);
    EXPECT_EQ(o.rescore_factor, 8);
    rv_flat *ix = (rv_flat *)1;
    EXPECT_STATUS(RV_E_RANGE, rv_flat_create(&o, &ix));
    EXPECT_TRUE(ix == NULL);
    EXPECT_STR_CONTAINS(rv_errmsg(), "dim");
    o.dim = 8;
    o.metric = (rv_metric)7;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_flat_create(&o, &ix));
    EXPECT_STR_CONTAINS(rv_errmsg(), "metric");
    o.metric = RV_METRIC_L2;
    o.storage = (rv_flat_storage)9;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_flat_create(&o, &ix));
    o.storage = RV_FLAT_I8;
    o.rescore_factor = 5000;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_flat_create(&o, &ix));
    EXPECT_STR_CONTAINS(rv_errmsg(), "rescore_factor");
    o.rescore_factor = 0;
    ASSERT_OK(rv_flat_create(&o, &ix));
    EXPECT_EQ(rv_flat_dim(ix), 8);
    EXPECT_EQ(rv_flat_metric(ix), RV_METRIC_L2);
    EXPECT_EQ(rv_flat_storage_kind(ix), RV_FLAT_I8);
    EXPECT_EQ(rv_flat_rescore_factor(ix), 8);
    EXPECT_EQ(rv_flat_size(ix), 0);
    rv_flat_free(ix);
    rv_flat_free(NULL);
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_flat_create(NULL, &ix));
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_flat_create(&o, NULL));
}

/* Exact search equals the reference, scores and ties included. */
static void check_exact(rv_metric metric, size_t n, size_t dim, size_t nq, size_t k, int range) {
    float *data = int_vectors(n, dim, 11 + dim, range);
    float *qs = int_vectors(nq, dim, 99 + dim, range);
    /* make zero rows impossible under cosine */
    for (size_t i = 0; i < n; i++) data[i * dim] = data[i * dim] == 0 ? 1 : data[i * dim];
    for (size_t i = 0; i < nq; i++) qs[i * dim] = qs[i * dim] == 0 ? 1 : qs[i * dim];
    rv_flat *ix = make((uint32_t)dim, metric, RV_FLAT_F32);
    ASSERT_TRUE(ix != NULL);
    ASSERT_OK(rv_flat_add(ix, n, data, NULL, NULL));
    int64_t *ids = (int64_t *)malloc(nq * k * sizeof *ids);
    float *sc = (float *)malloc(nq * k * sizeof *sc);
    rv_flat_search_params p;
    rv_flat_search_params_init(&p);
    p.k = k;
    size_t found = 0;
    ASSERT_OK(rv_flat_search(ix, &p, nq, qs, ids, sc, &found));
    EXPECT_EQ(found, k < n ? k : n);
    int64_t rid[64];
    double rs[64];
    for (size_t q = 0; q < nq; q++) {
        reference(data, NULL, n, dim, metric, qs + q * dim, k, rid, rs);
        for (size_t i = 0; i < found; i++) {
            if (metric == RV_METRIC_COSINE) {
                /* cosine scores round; compare scores, ids where clear */
                EXPECT_NEAR(sc[q * k + i], rs[i], 1e-5);
            } else {
                EXPECT_EQ(ids[q * k + i], rid[i]);
                EXPECT_NEAR(sc[q * k + i], rs[i], 0);
            }
        }
        for (size_t i = found; i < k; i++) {
            EXPECT_EQ(ids[q * k + i], -1);
            EXPECT_TRUE(isnan(sc[q * k + i]));
        }
    }
    free(ids);
    free(sc);
    free(data);
    free(qs);
    rv_flat_free(ix);
}

static void test_exact_matches_reference(void) {
    check_exact(RV_METRIC_INNER_PRODUCT, 300, 7, 9, 10, 2); /* many ties */
    check_exact(RV_METRIC_L2, 300, 7, 9, 10, 2);
    check_exact(RV_METRIC_INNER_PRODUCT, 1000, 33, 13, 25, 5);
    check_exact(RV_METRIC_L2, 1000, 33, 13, 25, 5);
    check_exact(RV_METRIC_COSINE, 500, 16, 5, 8, 4);
    check_exact(RV_METRIC_INNER_PRODUCT, 5, 4, 3, 10, 3); /* k > n */
}

static void test_ties_go_to_lower_id(void) {
    rv_flat *ix = make(3, RV_METRIC_INNER_PRODUCT, RV_FLAT_F32);
    float v[5 * 3] = {1, 0, 0, 0, 1, 0, 1, 0, 0, 1, 0, 0, 0, 0, 1};
    int64_t id[5] = {40, 7, 30, 10, 2};
    ASSERT_OK(rv_flat_add(ix, 5, v, id, NULL));
    float q[3] = {1, 0, 0};
    int64_t out[4];
    float sc[4];
    size_t found;
    rv_flat_search_params p;
    rv_flat_search_params_init(&p);
    p.k = 4;
    ASSERT_OK(rv_flat_search(ix, &p, 1, q, out, sc, &found));
    EXPECT_EQ(found, 4);
    EXPECT_EQ(out[0], 10);
    EXPECT_EQ(out[1], 30);
    EXPECT_EQ(out[2], 40);
    EXPECT_EQ(out[3], 2); /* ties at 0: ids 2 and 7, lower first */
    EXPECT_NEAR(sc[0], 1.0, 0);
    EXPECT_NEAR(sc[3], 0.0, 0);
    rv_flat_free(ix);
}

static void search_all(const rv_flat *ix, size_t nq, const float *qs, size_t k, uint32_t threads,
                       int64_t *ids, float *sc) {
    rv_flat_search_params p;
    rv_flat_search_params_init(&p);
    p.k = k;
    p.n_threads = threads;
    size_t found;
    rv_status st = rv_flat_search(ix, &p, nq, qs, ids, sc, &found);
    if (st != RV_OK) rvt_fail(__FILE__, __LINE__, "search failed: %s", rv_errmsg());
}

static void test_threads_give_identical_results(void) {
    size_t n = 7000, dim = 48, nq = 37, k = 15;
    float *data = gauss_vectors(n, dim, 5), *qs = gauss_vectors(nq, dim, 6);
    rv_flat_storage kinds[3] = {RV_FLAT_F32, RV_FLAT_F16, RV_FLAT_I8};
    for (int s = 0; s < 3; s++) {
        rv_flat *ix = make((uint32_t)dim, RV_METRIC_COSINE, kinds[s]);
        ASSERT_OK(rv_flat_add(ix, n, data, NULL, NULL));
        int64_t *a = (int64_t *)malloc(nq * k * 8), *b = (int64_t *)malloc(nq * k * 8);
        float *sa = (float *)malloc(nq * k * 4), *sb = (float *)malloc(nq * k * sizeof *sb);
        search_all(ix, nq, qs, k, 1, a, sa);
        search_all(ix, nq, qs, k, 4, b, sb);
        EXPECT_TRUE(memcmp(a, b, nq * k * 8) == 0);
        EXPECT_TRUE(memcmp(sa, sb, nq * k * 4) == 0);
        search_all(ix, nq, qs, k, 3, b, sb);
        EXPECT_TRUE(memcmp(a, b, nq * k * 8) == 0);
        free(a);
        free(b);
        free(sa);
        free(sb);
        rv_flat_free(ix);
    }
    free(data);
    free(qs);
}

/* Compact storage + re-scoring finds the exact top-k on random data. */
static void test_compact_storage_recall(void) {
    size_t n = 3000, dim = 64, nq = 40, k = 10;
    float *data = gauss_vectors(n, dim, 21), *qs = gauss_vectors(nq, dim, 22);
    rv_metric metrics[3] = {RV_METRIC_COSINE, RV_METRIC_INNER_PRODUCT, RV_METRIC_L2};
    for (int m = 0; m < 3; m++) {
        rv_flat *ex = make((uint32_t)dim, metrics[m], RV_FLAT_F32);
        ASSERT_OK(rv_flat_add(ex, n, data, NULL, NULL));
        int64_t *want = (int64_t *)malloc(nq * k * 8), *got = (int64_t *)malloc(nq * k * 8);
        float *sw = (float *)malloc(nq * k * 4), *sg = (float *)malloc(nq * k * 4);
        search_all(ex, nq, qs, k, 1, want, sw);
        for (int s = 1; s <= 2; s++) {
            rv_flat *ix = make((uint32_t)dim, metrics[m], (rv_flat_storage)s);
            ASSERT_OK(rv_flat_add(ix, n, data, NULL, NULL));
            search_all(ix, nq, qs, k, 1, got, sg);
            size_t hit = 0;
            for (size_t q = 0; q < nq; q++)
                for (size_t i = 0; i < k; i++)
                    for (size_t j = 0; j < k; j++) hit += got[q * k + i] == want[q * k + j];
            EXPECT_EQ(hit, nq * k);
            /* re-scored scores are float32 scores of the same vectors */
            for (size_t i = 0; i < nq * k; i++) EXPECT_NEAR(sg[i], sw[i], 1e-4 * (1 + fabs(sw[i])));
            /* exact = 1 scans the float32 rows instead */
            rv_flat_search_params p;
            rv_flat_search_params_init(&p);
            p.k = k;
            p.exact = 1;
            size_t found;
            ASSERT_OK(rv_flat_search(ix, &p, nq, qs, got, sg, &found));
            for (size_t i = 0; i < nq * k; i++) EXPECT_EQ(got[i], want[i]);
            rv_flat_free(ix);
        }
        free(want);
        free(got);
        free(sw);
        free(sg);
        rv_flat_free(ex);
    }
    free(data);
    free(qs);
}

/* The portable kernels and the dispatched ones agree (int8: bit for bit). */
static void test_portable_kernels_agree(void) {
    size_t n = 900, dim = 37, nq = 11, k = 12;
    float *data = gauss_vectors(n, dim, 31), *qs = gauss_vectors(nq, dim, 32);
    for (int s = 0; s < 3; s++) {
        rv_flat *a = make((uint32_t)dim, RV_METRIC_INNER_PRODUCT, (rv_flat_storage)s);
        ASSERT_OK(rv_flat_add(a, n, data, NULL, NULL));
        int64_t ia[11 * 12], ib[11 * 12];
        float sa[11 * 12], sb[11 * 12];
        search_all(a, nq, qs, k, 1, ia, sa);
        rv__flat_kernels saved = a->kern;
        rv__flat_kernels_portable(&a->kern);
        search_all(a, nq, qs, k, 1, ib, sb);
        a->kern = saved;
        for (size_t i = 0; i < nq * k; i++) {
            EXPECT_EQ(ia[i], ib[i]);
            EXPECT_NEAR(sa[i], sb[i], 1e-4 * (1 + fabs(sa[i])));
        }
        rv_flat_free(a);
    }
    free(data);
    free(qs);
}

/* The multi-row dot kernel gives each row exactly the dot kernel's score
** (bit for bit: the exact search of compact storage scores rows with it,
** re-scoring with the other), for both kernel sets, every dimension tail
** and row count. */
static void test_dots_match_dot(void) {
    size_t max_rows = 21, max_dim = 70;
    float *x = gauss_vectors(max_rows, 400, 41), *q = gauss_vectors(1, 400, 42);
    float out[21];
    for (int set = 0; set < 2; set++) {
        rv__flat_kernels k;
        kernel_set(set, &k);
        size_t dims[] = {1, 2, 15, 16, 17, 31, 33, 48, 63, 64, 65, 70, 384};
        for (size_t di = 0; di < sizeof dims / sizeof dims[0]; di++) {
            size_t dim = dims[di];
            if (dim > max_dim && dim != 384) continue;
            for (size_t n = 0; n <= max_rows; n++) {
                for (size_t r = 0; r < max_rows; r++) out[r] = -1.0f;
                k.dots(q, x, n, dim, out);
                for (size_t r = 0; r < n; r++) {
                    float want = k.dot(q, x + r * dim, dim);
                    if (memcmp(&want, &out[r], sizeof want) != 0)
                        FAILF("%s dots: dim %zu, %zu rows, row %zu: %.9g != dot %.9g", k.name, dim,
                              n, r, (double)out[r], (double)want);
                }
                for (size_t r = n; r < max_rows; r++) EXPECT_EQ(out[r], -1.0f);
            }
        }
    }
    free(x);
    free(q);
}

/* Exact search of compact storage scores every row as re-scoring does:
** its scores equal rv_flat_rescore's for the same ids, bit for bit. */
static void test_exact_compact_scores_equal_rescore(void) {
    size_t n = 333, dim = 37, k = 20;
    float *data = gauss_vectors(n, dim, 51), *q = gauss_vectors(1, dim, 52);
    for (int s = 1; s < 3; s++) {
        rv_flat *ix = make((uint32_t)dim, RV_METRIC_INNER_PRODUCT, (rv_flat_storage)s);
        ASSERT_OK(rv_flat_add(ix, n, data, NULL, NULL));
        rv_flat_search_params p;
        rv_flat_search_params_init(&p);
        p.k = k;
        p.exact = 1;
        p.n_threads = 1;
        int64_t ids[20], rid[20];
        float sc[20], rsc[20];
        size_t found = 0, rfound = 0;
        ASSERT_OK(rv_flat_search(ix, &p, 1, q, ids, sc, &found));
        EXPECT_EQ(found, k);
        ASSERT_OK(rv_flat_rescore(ix, 1, q, k, ids, k, 1, rid, rsc, &rfound));
        for (size_t i = 0; i < k; i++) {
            EXPECT_EQ(rid[i], ids[i]);
            if (memcmp(&rsc[i], &sc[i], sizeof sc[i]) != 0)
                FAILF("storage %d, hit %zu: search %.9g != rescore %.9g", s, i, (double)sc[i],
                      (double)rsc[i]);
        }
        rv_flat_free(ix);
    }
    free(data);
    free(q);
}

/* The int8 kernel (unsigned query bytes x signed row bytes, summed in
** int32) gives the exact integer sums for every query of its block,
** dispatched and portable alike, at the extremes of both byte ranges too. */
static void test_i8_kernels_exact(void) {
    rv_rng rng;
    rv_rng_seed(&rng, 67);
    size_t dims[] = {4, 8, 12, 36, 384, 1024, 4096};
    for (size_t di = 0; di < sizeof dims / sizeof dims[0]; di++) {
        size_t d4 = dims[di];
        int8_t *panel = (int8_t *)malloc(d4 * 16);
        for (int trial = 0; trial < 4; trial++) {
            for (size_t i = 0; i < d4 * 16; i++)
                panel[i] = trial == 0   ? -128
                           : trial == 1 ? 127
                                        : (int8_t)((int)rv_rng_below(&rng, 256) - 128);
            for (int set = 0; set < 2; set++) {
                rv__flat_kernels k;
                kernel_set(set, &k);
                unsigned qb = k.qb_i8;
                uint8_t *qpack = (uint8_t *)malloc(d4 * qb);
                for (size_t i = 0; i < d4 * qb; i++)
                    qpack[i] = trial < 2 ? 255 : (uint8_t)rv_rng_below(&rng, 256);
                int32_t *got = (int32_t *)malloc(qb * 16 * sizeof *got);
                k.i8(panel, d4, qpack, got);
                for (unsigned i = 0; i < qb; i++)
                    for (int l = 0; l < 16; l++) {
                        int64_t want = 0;
                        for (size_t j = 0; j < d4; j++)
                            want += (int64_t)qpack[((j / 4) * qb + i) * 4 + j % 4] *
                                    panel[(j / 4) * 64 + (size_t)l * 4 + j % 4];
                        if ((int64_t)got[i * 16 + l] != want)
                            FAILF(
                                "set %d (%s), dim4 %zu, trial %d, query %u, lane %d: %lld != %lld",
                                set, k.name, d4, trial, i, l, (long long)got[i * 16 + l],
                                (long long)want);
                    }
                free(got);
                free(qpack);
            }
        }
        free(panel);
    }
}

/* The screen kernel (int16 query codes x int8 panel codes, summed in
** int32) gives the exact integer sums, dispatched and portable alike, at
** the largest query codes the search uses for each dimension; the sparse
** kernel over the quads holding a nonzero code gives the same sums. */
static void test_q16_kernels_exact(void) {
    rv_rng rng;
    rv_rng_seed(&rng, 61);
    size_t dims[] = {4, 8, 12, 20, 28, 36, 384, 1024, 4096};
    for (size_t di = 0; di < sizeof dims / sizeof dims[0]; di++) {
        size_t d4 = dims[di];
        int32_t qmax = (int32_t)(2147483647u / (127u * (unsigned)d4));
        if (qmax > 32767) qmax = 32767;
        int8_t *panel = (int8_t *)malloc(d4 * 16);
        int16_t *q = (int16_t *)malloc(d4 * sizeof *q);
        for (int trial = 0; trial < 4; trial++) {
            for (size_t i = 0; i < d4 * 16; i++)
                panel[i] = trial == 0 ? 127 : (int8_t)((int)rv_rng_below(&rng, 255) - 127);
            for (size_t j = 0; j < d4; j++)
                q[j] = trial == 0
                           ? (int16_t)qmax
                           : (int16_t)((int32_t)rv_rng_below(&rng, 2u * (unsigned)qmax + 1) - qmax);
            int32_t got[2][16];
            rv__flat_kernels k;
            rv__flat_kernels_select(&k);
            k.q16(panel, d4, q, got[0]);
            rv__flat_kernels_portable(&k);
            k.q16(panel, d4, q, got[1]);
            for (int l = 0; l < 16; l++) {
                int64_t want = 0;
                for (size_t j = 0; j < d4; j++)
                    want += (int64_t)q[j] * panel[(j / 4) * 64 + (size_t)l * 4 + j % 4];
                EXPECT_EQ((int64_t)got[0][l], want);
                EXPECT_EQ((int64_t)got[1][l], want);
            }
            /* the sparse kernel: zero some quads' codes (all, some, none,
            ** every other, at random), list the quads still holding a
            ** nonzero code: the same integers as the dense kernel, bit for
            ** bit, whichever kernel set */
            uint32_t *quads = (uint32_t *)malloc((d4 / 4) * sizeof *quads);
            int16_t *q0 = (int16_t *)malloc(d4 * sizeof *q0);
            memcpy(q0, q, d4 * sizeof *q);
            for (int pattern = 0; pattern < 5; pattern++) {
                memcpy(q, q0, d4 * sizeof *q);
                for (size_t j4 = 0; j4 < d4 / 4; j4++) {
                    int zero = pattern == 0   ? 1
                               : pattern == 1 ? 0
                               : pattern == 2 ? (int)(j4 % 2)
                                              : rv_rng_below(&rng, 4) == 0;
                    if (zero)
                        for (size_t t = 0; t < 4; t++) q[4 * j4 + t] = 0;
                    else if (pattern == 4) /* one nonzero code in the quad */
                        for (size_t t = 0; t < 4; t++)
                            if (t != j4 % 4) q[4 * j4 + t] = 0;
                }
                size_t nz = 0;
                for (size_t j4 = 0; j4 < d4 / 4; j4++)
                    if (q[4 * j4] | q[4 * j4 + 1] | q[4 * j4 + 2] | q[4 * j4 + 3])
                        quads[nz++] = (uint32_t)j4;
                int32_t dense[16], sp[2][16];
                rv__flat_kernels_portable(&k);
                k.q16(panel, d4, q, dense);
                for (int set = 0; set < 2; set++) {
                    kernel_set(set, &k);
                    k.q16s(panel, q, quads, nz, sp[set]);
                }
                for (int l = 0; l < 16; l++) {
                    EXPECT_EQ((int64_t)sp[0][l], (int64_t)dense[l]);
                    EXPECT_EQ((int64_t)sp[1][l], (int64_t)dense[l]);
                }
            }
            free(quads);
            free(q0);
        }
        free(panel);
        free(q);
    }
}

/* The gathered dot kernel scores each listed row as the dot kernel does,
** bit for bit (the screen scores its candidates with it). */
static void test_dotsg_match_dot(void) {
    size_t n = 40;
    float *x = gauss_vectors(n, 400, 43), *q = gauss_vectors(1, 400, 44);
    size_t rows[23];
    float out[23];
    for (size_t i = 0; i < 23; i++) rows[i] = (i * 17 + 5) % n;
    for (int set = 0; set < 2; set++) {
        rv__flat_kernels k;
        kernel_set(set, &k);
        size_t dims[] = {1, 3, 16, 17, 33, 64, 70, 384, 400};
        for (size_t di = 0; di < sizeof dims / sizeof dims[0]; di++) {
            size_t dim = dims[di];
            for (size_t m = 0; m <= 23; m++) {
                k.dotsg(q, x, rows, m, dim, out);
                for (size_t r = 0; r < m; r++) {
                    float want = k.dot(q, x + rows[r] * dim, dim);
                    if (memcmp(&want, &out[r], sizeof want) != 0)
                        FAILF("%s dotsg: dim %zu, %zu rows, row %zu: %.9g != dot %.9g", k.name, dim,
                              m, r, (double)out[r], (double)want);
                }
            }
        }
    }
    free(x);
    free(q);
}

/* Data on which the int8 screen is hard: near-duplicates (cluster centres
** plus noise far below the int8 step), exact duplicates (ties), rows whose
** norms span many decades, spikes (one large component, the rest below the
** int8 step) and tiny values near the float32 subnormals. */
static float *screen_data(int kind, size_t n, size_t dim, uint64_t seed) {
    float *v = gauss_vectors(n, dim, seed);
    rv_rng rng;
    rv_rng_seed(&rng, seed + 1);
    if (kind == 1) { /* 4 centres, noise 1e-5 */
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < dim; j++)
                v[i * dim + j] = v[(i % 4) * dim + j] + 1e-5f * v[i * dim + j];
    } else if (kind == 2) { /* every row repeated 3 times */
        for (size_t i = 0; i < n; i++) memcpy(v + i * dim, v + (i / 3) * dim, dim * sizeof *v);
    } else if (kind == 3) { /* norms 1e-12 .. 1e12 */
        for (size_t i = 0; i < n; i++) {
            float f = (float)pow(10.0, -12.0 + 24.0 * rv_rng_uniform(&rng));
            for (size_t j = 0; j < dim; j++) v[i * dim + j] *= f;
        }
    } else if (kind == 4) { /* spikes */
        for (size_t i = 0; i < n; i++) {
            for (size_t j = 0; j < dim; j++) v[i * dim + j] *= 1e-4f;
            v[i * dim + rv_rng_below(&rng, dim)] = 1.0f;
        }
    } else if (kind == 5) { /* tiny */
        for (size_t i = 0; i < n * dim; i++) v[i] *= 1e-35f;
    }
    return v;
}

/* The exact search of int8 storage (the int8 screen, then float32 scores
** for what it cannot rule out) returns what scoring every live allowed row
** in float32 returns (rv_flat_rescore of them all): ids, order and scores
** bit for bit -- on hard data, for inner product and cosine, with deletes,
** filters, several chunks and threads, and both kernel sets. */
static void test_screen_equals_brute_force(void) {
    struct {
        size_t n, dim, nq, k;
    } shapes[] = {{300, 5, 3, 7}, {600, 37, 4, 50}, {2500, 384, 3, 11}, {1100, 64, 5, 300}};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        size_t n = shapes[si].n, dim = shapes[si].dim, nq = shapes[si].nq, k = shapes[si].k;
        for (int kind = 0; kind < 6; kind++) {
            float *data = screen_data(kind, n, dim, 70 + (uint64_t)kind);
            float *qs = gauss_vectors(nq, dim, 90 + (uint64_t)kind);
            /* a query equal to a stored row: ties at the top */
            memcpy(qs, data + (n / 2) * dim, dim * sizeof *qs);
            /* a sparse query (the screen reads only the panel lines of its
            ** nonzero code quads): two quads in three zero, and in the
            ** others every other component */
            for (size_t j = 0; j < dim; j++)
                if ((j / 4) % 3 != 0 || j % 2) qs[2 * dim + j] = 0;
            if (kind == 5)
                for (size_t i = dim; i < nq * dim; i++) qs[i] *= 1e-30f;
            for (int m = 0; m < 2; m++) {
                rv_metric metric = m ? RV_METRIC_COSINE : RV_METRIC_INNER_PRODUCT;
                rv_flat *ix = make((uint32_t)dim, metric, RV_FLAT_I8);
                ASSERT_OK(rv_flat_add(ix, n, data, NULL, NULL));
                int64_t gone[7] = {0, 3, 17, 100, 101, 299, 5};
                size_t removed = 0;
                ASSERT_OK(rv_flat_delete(ix, 7, gone, &removed));
                /* allowed: every other id (and ids that are not there) */
                size_t na = n / 2 + 2;
                int64_t *allow = (int64_t *)malloc(na * sizeof *allow);
                for (size_t i = 0; i < na; i++) allow[i] = (int64_t)(2 * i);
                rv_idset *flt = NULL;
                ASSERT_OK(rv_idset_create(allow, na, &flt));
                size_t live_n = 0;
                int64_t *live = (int64_t *)malloc(n * sizeof *live);
                ASSERT_OK(rv_flat_ids(ix, live, n, &live_n));
                for (int set = 0; set < 2; set++) {
                    rv__flat_kernels saved = ix->kern;
                    if (set) rv__flat_kernels_portable(&ix->kern);
                    for (int filtered = 0; filtered < 2; filtered++) {
                        /* the candidates: every live (allowed) id */
                        size_t nc = 0;
                        int64_t *cand = (int64_t *)malloc(nq * n * sizeof *cand);
                        for (size_t i = 0; i < live_n; i++)
                            if (!filtered || live[i] % 2 == 0) cand[nc++] = live[i];
                        for (size_t qi = 1; qi < nq; qi++)
                            memcpy(cand + qi * nc, cand, nc * sizeof *cand);
                        size_t kk = k < nc ? k : nc;
                        int64_t *ia = (int64_t *)malloc(nq * k * sizeof *ia);
                        int64_t *ib = (int64_t *)malloc(nq * k * sizeof *ib);
                        float *sa = (float *)malloc(nq * k * sizeof *sa);
                        float *sb = (float *)malloc(nq * k * sizeof *sb);
                        size_t *fb = (size_t *)malloc(nq * sizeof *fb);
                        for (uint32_t threads = 1; threads <= 2; threads++) {
                            rv_flat_search_params p;
                            rv_flat_search_params_init(&p);
                            p.k = k;
                            p.exact = 1;
                            p.n_threads = threads;
                            p.filter = filtered ? flt : NULL;
                            size_t found = 0;
                            ASSERT_OK(rv_flat_search(ix, &p, nq, qs, ia, sa, &found));
                            EXPECT_EQ(found, kk);
                            ASSERT_OK(rv_flat_rescore(ix, nq, qs, nc, cand, k, 1, ib, sb, fb));
                            for (size_t i = 0; i < nq * k; i++) {
                                if (i % k >= kk) continue;
                                if (ia[i] != ib[i] || memcmp(&sa[i], &sb[i], sizeof sa[i]) != 0) {
                                    FAILF("shape %zu data %d metric %d kernels %d filter %d "
                                          "threads %u: hit %zu: %lld %.9g != %lld %.9g",
                                          si, kind, m, set, filtered, (unsigned)threads, i,
                                          (long long)ia[i], (double)sa[i], (long long)ib[i],
                                          (double)sb[i]);
                                    break;
                                }
                            }
                        }
                        free(cand);
                        free(ia);
                        free(ib);
                        free(sa);
                        free(sb);
                        free(fb);
                    }
                    ix->kern = saved;
                }
                rv_idset_free(flt);
                free(allow);
                free(live);
                rv_flat_free(ix);
            }
            free(data);
            free(qs);
        }
    }
}

/* Exact search of int8 storage equals float32 scoring of every row
** (rv_flat_rescore): ids and scores bit for bit, k of them. */
static void expect_screen_exact(rv_flat *ix, size_t nq, const float *qs, size_t k,
                                const char *what) {
    size_t n = rv_flat_size(ix), live_n = 0;
    int64_t *live = (int64_t *)malloc(n * sizeof *live);
    ASSERT_OK(rv_flat_ids(ix, live, n, &live_n));
    int64_t *cand = (int64_t *)malloc(nq * n * sizeof *cand);
    for (size_t qi = 0; qi < nq; qi++) memcpy(cand + qi * n, live, n * sizeof *cand);
    int64_t *ia = (int64_t *)malloc(nq * k * sizeof *ia),
            *ib = (int64_t *)malloc(nq * k * sizeof *ib);
    float *sa = (float *)malloc(nq * k * sizeof *sa), *sb = (float *)malloc(nq * k * sizeof *sb);
    size_t *fb = (size_t *)malloc(nq * sizeof *fb), found = 0;
    rv_flat_search_params p;
    rv_flat_search_params_init(&p);
    p.k = k;
    p.exact = 1;
    p.n_threads = 1;
    ASSERT_OK(rv_flat_search(ix, &p, nq, qs, ia, sa, &found));
    EXPECT_EQ(found, k < n ? k : n);
    ASSERT_OK(rv_flat_rescore(ix, nq, qs, n, cand, k, 1, ib, sb, fb));
    for (size_t i = 0; i < nq * k; i++) {
        if (i % k >= found) continue;
        if (ia[i] != ib[i] || memcmp(&sa[i], &sb[i], sizeof sa[i]) != 0) {
            FAILF("%s: hit %zu: %lld %.9g != %lld %.9g", what, i, (long long)ia[i], (double)sa[i],
                  (long long)ib[i], (double)sb[i]);
            break;
        }
    }
    free(live);
    free(cand);
    free(ia);
    free(ib);
    free(sa);
    free(sb);
    free(fb);
}

/* The screen's query codes: queries so small that the code scale is
** subnormal or zero in float32 (the double-division fallback), and rows
** and queries at the edge of float32 overflow (scores near FLT_MAX, where
** the screen's interval may overflow and must then admit every score). */
static void test_screen_extreme_queries(void) {
    size_t n = 203, dim = 37, nq = 3, k = 9;
    float *data = gauss_vectors(n, dim, 501);
    float *qs = gauss_vectors(nq, dim, 502);
    float *q2 = (float *)malloc(nq * dim * sizeof *q2);
    rv_flat *ix = make((uint32_t)dim, RV_METRIC_INNER_PRODUCT, RV_FLAT_I8);
    ASSERT_OK(rv_flat_add(ix, n, data, NULL, NULL));
    const float scales[] = {1e-30f, 1e-36f, 1e-38f, 1e-40f, 1e-43f, 1e-45f};
    for (size_t si = 0; si < sizeof scales / sizeof scales[0]; si++) {
        for (size_t i = 0; i < nq * dim; i++) q2[i] = qs[i] * scales[si];
        q2[0] = 1e-45f; /* never a zero vector */
        char what[64];
        snprintf(what, sizeof what, "query scale %g", (double)scales[si]);
        expect_screen_exact(ix, nq, q2, k, what);
    }
    rv_flat_free(ix);
    /* near overflow: rows t (1, 1, 0 ...) and gaussian ones scaled to
    ** |x| ~ 1.8e19, queries likewise, so scores reach ~FLT_MAX */
    size_t d2 = 4, n2 = 64;
    float *big = (float *)malloc(n2 * d2 * sizeof *big);
    for (size_t i = 0; i < n2; i++) {
        double t = sqrt((double)FLT_MAX / 2.0) * (1.0 - 1e-6 - 1e-7 * (double)(i % 8)), g = 0;
        for (size_t j = 0; j < d2; j++) g += (double)data[i * dim + j] * data[i * dim + j];
        for (size_t j = 0; j < d2; j++)
            big[i * d2 + j] = i % 2 ? (float)(t * sqrt(2.0 / g) * (double)data[i * dim + j])
                                    : (float)(j < 2 ? t : 0.0);
    }
    ix = make((uint32_t)d2, RV_METRIC_INNER_PRODUCT, RV_FLAT_I8);
    ASSERT_OK(rv_flat_add(ix, n2, big, NULL, NULL));
    expect_screen_exact(ix, 3, big, 7, "near overflow");
    rv_flat_free(ix);
    /* rows t (1, 1, 0, 0) with 2 t^2 just below FLT_MAX (those whose norm
    ** overflows are refused), queried with themselves: the screen's
    ** products may round past FLT_MAX */
    ix = make((uint32_t)d2, RV_METRIC_INNER_PRODUCT, RV_FLAT_I8);
    size_t kept = 0;
    for (int i = 0; i < 64; i++) {
        float t = (float)(sqrt((double)FLT_MAX / 2.0) * (1.0 - ldexp((double)i, -26)));
        float x[4] = {t, t, 0.0f, 0.0f};
        rv_status st = rv_flat_add(ix, 1, x, NULL, NULL);
        if (st == RV_OK) memcpy(big + kept++ * d2, x, sizeof x);
    }
    EXPECT_TRUE(kept > 8);
    expect_screen_exact(ix, kept < 16 ? kept : 16, big, 5, "at overflow");
    rv_flat_free(ix);
    free(big);
    free(data);
    free(qs);
    free(q2);
}

/* One query on one thread (the exact int8 screen takes a small index in
** one chunk) returns what the same query returns in a batch on two threads
** (the usual chunks): every storage, exact and not, small and larger. */
static void test_single_query_matches_batch(void) {
    size_t dim = 24, nq = 4, k = 13;
    size_t sizes[] = {700, 5000};
    rv_flat_storage stor[] = {RV_FLAT_F32, RV_FLAT_F16, RV_FLAT_I8};
    for (size_t zi = 0; zi < 2; zi++) {
        size_t n = sizes[zi];
        float *data = gauss_vectors(n, dim, 801 + zi);
        float *qs = gauss_vectors(nq, dim, 811 + zi);
        for (size_t si = 0; si < 3; si++) {
            rv_flat *ix = make((uint32_t)dim, RV_METRIC_COSINE, stor[si]);
            ASSERT_OK(rv_flat_add(ix, n, data, NULL, NULL));
            for (int exact = 0; exact < 2; exact++) {
                int64_t ia[4 * 13], ib[13];
                float sa[4 * 13], sb[13];
                size_t fa = 0, fb = 0;
                rv_flat_search_params p;
                rv_flat_search_params_init(&p);
                p.k = k;
                p.exact = exact;
                p.n_threads = 2;
                ASSERT_OK(rv_flat_search(ix, &p, nq, qs, ia, sa, &fa));
                p.n_threads = 1;
                for (size_t qi = 0; qi < nq; qi++) {
                    ASSERT_OK(rv_flat_search(ix, &p, 1, qs + qi * dim, ib, sb, &fb));
                    EXPECT_EQ(fb, fa);
                    for (size_t i = 0; i < k; i++)
                        if (ib[i] != ia[qi * k + i] ||
                            memcmp(&sb[i], &sa[qi * k + i], sizeof sb[i]) != 0) {
                            FAILF("n %zu storage %d exact %d query %zu hit %zu differs", n,
                                  (int)stor[si], exact, qi, i);
                            break;
                        }
                }
            }
            rv_flat_free(ix);
        }
        free(data);
        free(qs);
    }
}

static void test_half_conversion(void) {
    EXPECT_EQ(rv__f32_to_f16(1.0f), 0x3c00);
    EXPECT_EQ(rv__f32_to_f16(-2.0f), 0xc000);
    EXPECT_EQ(rv__f32_to_f16(65504.0f), 0x7bff);
    EXPECT_EQ(rv__f32_to_f16(65520.0f), 0x7c00);           /* rounds to inf */
    EXPECT_EQ(rv__f32_to_f16(5.9604645e-8f), 0x0001);      /* smallest subnormal */
    EXPECT_EQ(rv__f32_to_f16(1.0f + 1.0f / 2048), 0x3c00); /* tie to even */
    EXPECT_EQ(rv__f32_to_f16(1.0f + 3.0f / 2048), 0x3c02);
    /* every finite half converts to float and back unchanged */
    for (uint32_t h = 0; h < 0x10000; h++) {
        if ((h & 0x7c00) == 0x7c00) continue;
        uint16_t back = rv__f32_to_f16(rv__f16_to_f32((uint16_t)h));
        if (back != h) FAILF("half 0x%04x round-trips to 0x%04x", h, back);
    }
    EXPECT_NEAR(rv__f16_to_f32(0x3555), 0.333251953125, 0);
}

static void test_deletes_filters_and_ids(void) {
    size_t n = 200, dim = 5;
    float *data = int_vectors(n, dim, 3, 4);
    rv_flat *ix = make((uint32_t)dim, RV_METRIC_L2, RV_FLAT_F32);
    int64_t assigned[200];
    ASSERT_OK(rv_flat_add(ix, n, data, NULL, assigned));
    EXPECT_EQ(assigned[0], 0);
    EXPECT_EQ(assigned[199], 199);
    float *q = data + 17 * dim; /* row 17 is its own nearest neighbour */
    int64_t out[3];
    float sc[3];
    size_t found, removed;
    rv_flat_search_params p;
    rv_flat_search_params_init(&p);
    p.k = 3;
    ASSERT_OK(rv_flat_search(ix, &p, 1, q, out, sc, &found));
    EXPECT_EQ(out[0], 17);
    EXPECT_NEAR(sc[0], 0, 0);
    int64_t del[2] = {17, 3};
    ASSERT_OK(rv_flat_delete(ix, 2, del, &removed));
    EXPECT_EQ(removed, 2);
    EXPECT_EQ(rv_flat_size(ix), 198);
    EXPECT_EQ(rv_flat_n_deleted(ix), 2);
    EXPECT_TRUE(!rv_flat_contains(ix, 17));
    EXPECT_TRUE(rv_flat_contains(ix, 18));
    ASSERT_OK(rv_flat_search(ix, &p, 1, q, out, sc, &found));
    for (int i = 0; i < 3; i++) EXPECT_TRUE(out[i] != 17 && out[i] != 3);
    int64_t before[3];
    memcpy(before, out, sizeof out);
    /* removing an absent id fails and removes nothing */
    int64_t bad[2] = {18, 17};
    EXPECT_STATUS(RV_E_RANGE, rv_flat_delete(ix, 2, bad, &removed));
    EXPECT_STR_CONTAINS(rv_errmsg(), "17");
    EXPECT_TRUE(rv_flat_contains(ix, 18));
    int64_t twice[2] = {18, 18};
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_flat_delete(ix, 2, twice, &removed));
    /* the deprecated name is the same function */
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_flat_remove(ix, 2, twice, &removed));
    EXPECT_STATUS(RV_E_RANGE, rv_flat_remove(ix, 2, bad, &removed));
    EXPECT_TRUE(rv_flat_contains(ix, 18));
    /* compaction keeps ids, order and results */
    ASSERT_OK(rv_flat_compact(ix));
    EXPECT_EQ(rv_flat_n_deleted(ix), 0);
    EXPECT_EQ(rv_flat_size(ix), 198);
    ASSERT_OK(rv_flat_search(ix, &p, 1, q, out, sc, &found));
    for (int i = 0; i < 3; i++) EXPECT_EQ(out[i], before[i]);
    int64_t all[198];
    size_t n_ids;
    ASSERT_OK(rv_flat_ids(ix, all, 198, &n_ids));
    EXPECT_EQ(n_ids, 198);
    EXPECT_EQ(all[0], 0);
    EXPECT_EQ(all[3], 4);
    EXPECT_EQ(all[16], 18);
    EXPECT_STATUS(RV_E_SHAPE, rv_flat_ids(ix, all, 5, &n_ids));
    EXPECT_EQ(n_ids, 198);
    /* a removed id can be added again; auto ids continue after the max */
    ASSERT_OK(rv_flat_add(ix, 1, q, del, NULL));
    ASSERT_OK(rv_flat_search(ix, &p, 1, q, out, sc, &found));
    EXPECT_EQ(out[0], 17);
    ASSERT_OK(rv_flat_add(ix, 1, q, NULL, assigned));
    EXPECT_EQ(assigned[0], 200);
    /* rv_flat_get returns the stored rows */
    float got[5];
    ASSERT_OK(rv_flat_get(ix, 1, &del[0], got));
    for (size_t j = 0; j < dim; j++) EXPECT_NEAR(got[j], q[j], 0);
    int64_t missing = 3;
    EXPECT_STATUS(RV_E_RANGE, rv_flat_get(ix, 1, &missing, got));
    /* allow filter: only these ids, unknown ones ignored */
    int64_t allow[4] = {50, 60, 3, 999};
    rv_idset *set = NULL;
    ASSERT_OK(rv_idset_create(allow, 4, &set));
    p.filter = set;
    p.k = 3;
    ASSERT_OK(rv_flat_search(ix, &p, 1, q, out, sc, &found));
    EXPECT_EQ(found, 2);
    EXPECT_TRUE((out[0] == 50 && out[1] == 60) || (out[0] == 60 && out[1] == 50));
    EXPECT_EQ(out[2], -1);
    rv_idset_free(set);
    rv_flat_free(ix);
    free(data);
}

static void test_bad_input(void) {
    rv_flat *ix = make(3, RV_METRIC_COSINE, RV_FLAT_F32);
    float nanv[3] = {1, NAN, 0}, zero[3] = {0, 0, 0}, ok[6] = {1, 2, 3, 4, 5, 6};
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_flat_add(ix, 1, nanv, NULL, NULL));
    EXPECT_STR_CONTAINS(rv_errmsg(), "vectors[0][1]");
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_flat_add(ix, 1, zero, NULL, NULL));
    EXPECT_STR_CONTAINS(rv_errmsg(), "zero vector");
    float inf[3] = {INFINITY, 0, 0}, big[3] = {3e38f, 3e38f, 0};
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_flat_add(ix, 1, inf, NULL, NULL));
    EXPECT_STATUS(RV_E_RANGE, rv_flat_add(ix, 1, big, NULL, NULL));
    int64_t dup[2] = {4, 4}, neg[1] = {-2};
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_flat_add(ix, 2, ok, dup, NULL));
    EXPECT_STR_CONTAINS(rv_errmsg(), "more than once");
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_flat_add(ix, 1, ok, neg, NULL));
    EXPECT_EQ(rv_flat_size(ix), 0); /* failed adds leave nothing behind */
    ASSERT_OK(rv_flat_add(ix, 2, ok, NULL, NULL));
    int64_t again[1] = {1};
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_flat_add(ix, 1, ok, again, NULL));
    EXPECT_STR_CONTAINS(rv_errmsg(), "already");
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_flat_add(ix, 1, NULL, NULL, NULL));
    rv_flat_search_params p;
    rv_flat_search_params_init(&p);
    int64_t out[2];
    float sc[2];
    size_t found;
    p.k = 0;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_flat_search(ix, &p, 1, ok, out, sc, &found));
    EXPECT_STR_CONTAINS(rv_errmsg(), "k = 0");
    p.k = 2;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_flat_search(ix, &p, 1, nanv, out, sc, &found));
    EXPECT_STR_CONTAINS(rv_errmsg(), "queries[0][1]");
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_flat_search(ix, &p, 1, zero, out, sc, &found));
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_flat_search(ix, NULL, 1, ok, out, sc, &found));
    rv_flat_free(ix);
    /* float16 storage refuses what it cannot hold */
    rv_flat *h = make(2, RV_METRIC_INNER_PRODUCT, RV_FLAT_F16);
    float huge[2] = {70000, 1};
    EXPECT_STATUS(RV_E_RANGE, rv_flat_add(h, 1, huge, NULL, NULL));
    EXPECT_STR_CONTAINS(rv_errmsg(), "float16");
    rv_flat_free(h);
}

static void test_rescore(void) {
    size_t n = 100, dim = 6;
    float *data = int_vectors(n, dim, 8, 3);
    rv_flat *ix = make((uint32_t)dim, RV_METRIC_INNER_PRODUCT, RV_FLAT_F32);
    ASSERT_OK(rv_flat_add(ix, n, data, NULL, NULL));
    float *q = int_vectors(2, dim, 9, 3);
    int64_t cand[2 * 5] = {5, 9, 5, -1, 44, 1, 2, 3, 4, 5};
    int64_t out[2 * 3];
    float sc[2 * 3];
    size_t found[2];
    ASSERT_OK(rv_flat_rescore(ix, 2, q, 5, cand, 3, 1, out, sc, found));
    EXPECT_EQ(found[0], 3);
    EXPECT_EQ(found[1], 3);
    for (int qi = 0; qi < 2; qi++) {
        /* reference over the unique candidates */
        int64_t uniq[2][5] = {{5, 9, 44, -1, -1}, {1, 2, 3, 4, 5}};
        int nu = qi == 0 ? 3 : 5;
        float best[5];
        for (int c = 0; c < nu; c++) {
            double s = 0;
            for (size_t j = 0; j < dim; j++)
                s += (double)data[uniq[qi][c] * dim + j] * q[qi * dim + j];
            best[c] = (float)s;
        }
        for (int i = 0; i < 3; i++) {
            int pos = -1;
            for (int c = 0; c < nu; c++)
                if (uniq[qi][c] == out[qi * 3 + i]) pos = c;
            ASSERT_TRUE(pos >= 0);
            EXPECT_NEAR(sc[qi * 3 + i], best[pos], 0);
            if (i > 0)
                EXPECT_TRUE(sc[qi * 3 + i] < sc[qi * 3 + i - 1] ||
                            (sc[qi * 3 + i] == sc[qi * 3 + i - 1] &&
                             out[qi * 3 + i] > out[qi * 3 + i - 1]));
        }
    }
    int64_t bad[1] = {777};
    EXPECT_STATUS(RV_E_RANGE, rv_flat_rescore(ix, 1, q, 1, bad, 3, 1, out, sc, found));
    EXPECT_STR_CONTAINS(rv_errmsg(), "777");
    rv_flat_free(ix);
    free(data);
    free(q);
}

static int stop_at_second(void *ctx, uint64_t done, uint64_t total) {
    (void)total;
    int *calls = (int *)ctx;
    (*calls)++;
    return done >= 2;
}

static void test_progress_interrupts(void) {
    size_t n = 4096, dim = 64;
    float *data = gauss_vectors(n, dim, 4);
    rv_flat *ix = make((uint32_t)dim, RV_METRIC_INNER_PRODUCT, RV_FLAT_F32);
    ASSERT_OK(rv_flat_add(ix, n, data, NULL, NULL));
    rv_flat_search_params p;
    rv_flat_search_params_init(&p);
    int calls = 0;
    p.k = 5;
    p.n_threads = 1;
    p.progress = stop_at_second;
    p.progress_ctx = &calls;
    int64_t out[5];
    float sc[5];
    size_t found = 99;
    EXPECT_STATUS(RV_E_INTERRUPTED, rv_flat_search(ix, &p, 1, data, out, sc, &found));
    EXPECT_EQ(found, 0);
    EXPECT_EQ(calls, 2);
    EXPECT_EQ(out[0], -1);
    rv_flat_free(ix);
    free(data);
}

/* ------------------------------------------------------------ files */

static char tmpdir[256];

static void path_in_tmp(char *buf, size_t cap, const char *name) {
    snprintf(buf, cap, "%s/%s", tmpdir, name);
}

static unsigned char *read_all(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = (unsigned char *)malloc((size_t)sz + 1);
    *len = fread(b, 1, (size_t)sz, f);
    fclose(f);
    return b;
}

static void write_all(const char *path, const unsigned char *b, size_t len) {
    FILE *f = fopen(path, "wb");
    fwrite(b, 1, len, f);
    fclose(f);
}

static void test_save_load_round_trip(void) {
    size_t n = 300, dim = 19, nq = 7, k = 9;
    float *data = gauss_vectors(n, dim, 41), *qs = gauss_vectors(nq, dim, 42);
    char path[512];
    path_in_tmp(path, sizeof path, "round.rvf");
    for (int m = 0; m < 3; m++)
        for (int s = 0; s < 3; s++) {
            rv_flat *ix = make((uint32_t)dim, (rv_metric)m, (rv_flat_storage)s);
            ASSERT_OK(rv_flat_add(ix, n, data, NULL, NULL));
            int64_t del[3] = {0, 150, 299};
            ASSERT_OK(rv_flat_delete(ix, 3, del, NULL));
            ASSERT_OK(rv_flat_save(ix, path));
            rv_flat *back = NULL;
            ASSERT_OK(rv_flat_load(path, &back));
            EXPECT_EQ(rv_flat_size(back), n - 3);
            EXPECT_EQ(rv_flat_n_deleted(back), 0);
            EXPECT_EQ(rv_flat_metric(back), (rv_metric)m);
            EXPECT_EQ(rv_flat_storage_kind(back), (rv_flat_storage)s);
            EXPECT_TRUE(!rv_flat_contains(back, 150));
            int64_t a[7 * 9], b[7 * 9];
            float sa[7 * 9], sb[7 * 9];
            search_all(ix, nq, qs, k, 1, a, sa);
            search_all(back, nq, qs, k, 1, b, sb);
            EXPECT_TRUE(memcmp(a, b, sizeof a) == 0);
            EXPECT_TRUE(memcmp(sa, sb, sizeof sa) == 0);
            int64_t next;
            ASSERT_OK(rv_flat_add(back, 1, data, NULL, &next));
            EXPECT_EQ(next, 300);
            rv_flat_free(ix);
            rv_flat_free(back);
        }
    /* an empty index round-trips too */
    rv_flat *e = make(4, RV_METRIC_L2, RV_FLAT_F32), *eb = NULL;
    ASSERT_OK(rv_flat_save(e, path));
    ASSERT_OK(rv_flat_load(path, &eb));
    EXPECT_EQ(rv_flat_size(eb), 0);
    EXPECT_EQ(rv_flat_dim(eb), 4);
    rv_flat_free(e);
    rv_flat_free(eb);
    unlink(path);
    free(data);
    free(qs);
}

/* What an int8 row stores, against a plain reference: each code is
** lrintf(x * 127 / max|x|) (ties to even), the scale and code sum follow,
** sqnorm is the double sum in index order, and the screen's bounds hold
** (qerr >= |x - scale * code|, qnorm >= |scale * code|, both within a
** hair of the truth).  A load stores the same rows bit for bit, allocated
** once for the rows it holds. */
static void check_i8_rows(const rv_flat *ix, size_t n, const float *data, const int64_t *ids) {
    size_t dim = ix->dim;
    for (size_t i = 0; i < n; i++) {
        size_t r = rv__map_find(ix, ids[i]);
        ASSERT_TRUE(r != SIZE_MAX);
        const float *x = data + i * dim;
        float maxabs = 0;
        double nn = 0;
        for (size_t j = 0; j < dim; j++) {
            if (fabsf(x[j]) > maxabs) maxabs = fabsf(x[j]);
            nn += (double)x[j] * x[j];
        }
        float scale = maxabs / 127.0f, inv = maxabs > 0 ? 127.0f / maxabs : 0.0f;
        EXPECT_TRUE(ix->scale[r] == scale);
        EXPECT_TRUE(ix->sqnorm[r] == (float)nn);
        const int8_t *pan = (const int8_t *)ix->panels + (r / RV__PANEL) * ix->dim4 * RV__PANEL;
        size_t l = r % RV__PANEL;
        int32_t sum = 0;
        double e2 = 0, c2 = 0;
        int codes_ok = 1;
        for (size_t j = 0; j < dim; j++) {
            long c = lrintf(x[j] * inv);
            if (c > 127) c = 127;
            if (c < -127) c = -127;
            if (pan[(j / 4) * 64 + l * 4 + (j % 4)] != (int8_t)c) codes_ok = 0;
            sum += (int32_t)c;
            double xh = (double)scale * (double)c;
            e2 += ((double)x[j] - xh) * ((double)x[j] - xh);
            c2 += xh * xh;
        }
        EXPECT_TRUE(codes_ok);
        EXPECT_EQ(ix->csum[r], sum);
        EXPECT_TRUE((double)ix->qerr[r] >= sqrt(e2));
        EXPECT_TRUE((double)ix->qnorm[r] >= sqrt(c2));
        EXPECT_TRUE((double)ix->qerr[r] <= sqrt(e2) * (1 + 1e-5) + 1e-9);
        EXPECT_TRUE((double)ix->qnorm[r] <= sqrt(c2) * (1 + 1e-5) + 1e-9);
    }
}

static void test_i8_rows_match_reference(void) {
    size_t n = 1000, dim = 37;
    float *data = gauss_vectors(n, dim, 77);
    /* rows whose scaled components fall exactly halfway between codes
    ** (max |x| = 127, so x * 127 / max|x| = x): ties go to the even code */
    for (size_t j = 0; j < dim; j++) {
        data[j] = (j == 0) ? 127.0f : (float)((int)(j % 9) - 4) + 0.5f;
        data[dim + j] = (j == 5) ? -127.0f : -((float)(j % 7) + 0.5f);
    }
    int64_t *ids = (int64_t *)malloc(n * sizeof *ids);
    for (size_t i = 0; i < n; i++) ids[i] = (int64_t)(3 * i + 1);
    char path[512];
    path_in_tmp(path, sizeof path, "i8rows.rvf");
    for (int m = 0; m < 3; m++) {
        rv_flat *ix = make((uint32_t)dim, (rv_metric)m, RV_FLAT_I8);
        /* added in uneven batches, so the rows grow several times */
        size_t at = 0, step = 1;
        while (at < n) {
            size_t b = n - at < step ? n - at : step;
            ASSERT_OK(rv_flat_add(ix, b, data + at * dim, ids + at, NULL));
            at += b;
            step = step * 3 + 1;
        }
        if (m != RV_METRIC_COSINE) check_i8_rows(ix, n, data, ids);
        ASSERT_OK(rv_flat_save(ix, path));
        rv_flat *back = NULL;
        ASSERT_OK(rv_flat_load(path, &back));
        EXPECT_EQ(back->cap_rows, rv__round_up(n, RV__PANEL));
        EXPECT_EQ(back->n_rows, n);
        for (size_t i = 0; i < n; i++) {
            size_t a = rv__map_find(ix, ids[i]), b = rv__map_find(back, ids[i]);
            ASSERT_TRUE(a != SIZE_MAX && b != SIZE_MAX);
            EXPECT_TRUE(ix->scale[a] == back->scale[b] && ix->csum[a] == back->csum[b]);
            EXPECT_TRUE(ix->sqnorm[a] == back->sqnorm[b]);
            EXPECT_TRUE(ix->qerr[a] == back->qerr[b] && ix->qnorm[a] == back->qnorm[b]);
            EXPECT_TRUE(memcmp(ix->rows + a * dim, back->rows + b * dim, dim * 4) == 0);
        }
        EXPECT_TRUE(memcmp(ix->panels, back->panels, rv__round_up(n, RV__PANEL) * ix->dim4) == 0);
        if (m == RV_METRIC_COSINE) {
            /* the stored rows are the unit vectors: the reference of those */
            float *unit = (float *)malloc(n * dim * sizeof *unit);
            for (size_t i = 0; i < n; i++) {
                size_t r = rv__map_find(back, ids[i]);
                memcpy(unit + i * dim, back->rows + r * dim, dim * 4);
            }
            check_i8_rows(back, n, unit, ids);
            free(unit);
        }
        rv_flat_free(ix);
        rv_flat_free(back);
    }
    unlink(path);
    free(ids);
    free(data);
}

/* Vectors so small that 127 / max|x| overflows float (subnormal
** components, and zeros): their int8 codes are the nearest to x * 127 /
** max|x| (computed in double), never a NaN's conversion, and an exact
** search ranks them as a float32 scan does. */
static void test_i8_tiny_vectors(void) {
    float v[3][4] = {
        {1e-40f, 0.0f, -1e-40f, 0.0f},
        {0.0f, 2e-41f, 0.0f, -3e-41f},
        {1e-38f, 1e-39f, 0.0f, 0.0f},
    };
    for (int mi = 0; mi < 2; mi++) { /* inner product and L2: kept as given */
        rv_metric m = mi ? RV_METRIC_L2 : RV_METRIC_INNER_PRODUCT;
        rv_flat *ix = make(4, m, RV_FLAT_I8);
        ASSERT_OK(rv_flat_add(ix, 3, &v[0][0], NULL, NULL));
        const int8_t *pan = (const int8_t *)ix->panels;
        /* row 0, components 0..3 (panel layout: 4 codes of a row together) */
        EXPECT_EQ(pan[0], 127);
        EXPECT_EQ(pan[1], 0);
        EXPECT_EQ(pan[2], -127);
        EXPECT_EQ(pan[3], 0);
        EXPECT_EQ(ix->csum[0], 0);
        EXPECT_EQ(pan[4 + 3], -127); /* row 1's largest |x|, negative */
        float q[4] = {1.0f, 1.0f, 0.0f, 0.0f};
        for (int exact = 0; exact < 2; exact++) {
            int64_t ids[3];
            float sc[3];
            size_t got = 0;
            rv_flat_search_params prm;
            rv_flat_search_params_init(&prm);
            prm.k = 3;
            prm.exact = exact;
            ASSERT_OK(rv_flat_search(ix, &prm, 1, q, ids, sc, &got));
            EXPECT_EQ(got, 3);
            if (m == RV_METRIC_INNER_PRODUCT) { /* 1.1e-38 > 1e-40 > 2e-41 */
                EXPECT_EQ(ids[0], 2);
                EXPECT_EQ(ids[1], 0);
                EXPECT_EQ(ids[2], 1);
            } else { /* every distance rounds to 2 in float32: ties by id */
                EXPECT_EQ(ids[0], 0);
                EXPECT_EQ(ids[1], 1);
                EXPECT_EQ(ids[2], 2);
            }
        }
        rv_flat_free(ix);
    }
}

static void test_corrupt_files(void) {
    size_t n = 12, dim = 3;
    float *data = gauss_vectors(n, dim, 51);
    char path[512], bad[512];
    path_in_tmp(path, sizeof path, "good.rvf");
    path_in_tmp(bad, sizeof bad, "bad.rvf");
    rv_flat *ix = make((uint32_t)dim, RV_METRIC_COSINE, RV_FLAT_I8);
    ASSERT_OK(rv_flat_add(ix, n, data, NULL, NULL));
    ASSERT_OK(rv_flat_save(ix, path));
    rv_flat_free(ix);
    size_t len = 0;
    unsigned char *good = read_all(path, &len);
    ASSERT_EQ(len, 96 + n * 8 + n * dim * 4);
    rv_flat *out = NULL;
    /* every single-bit flip in every byte is caught */
    for (size_t i = 0; i < len; i++)
        for (int bit = 0; bit < 8; bit += 3) {
            good[i] ^= (unsigned char)(1u << bit);
            write_all(bad, good, len);
            rv_status st = rv_flat_load(bad, &out);
            good[i] ^= (unsigned char)(1u << bit);
            if (st != RV_E_CORRUPT && st != RV_E_VERSION)
                FAILF("flip of byte %zu bit %d gave %s", i, bit, rv_status_name(st));
            if (out) FAILF("flip of byte %zu left an index", i);
        }
    /* every truncation is caught */
    for (size_t cut = 0; cut < len; cut++) {
        write_all(bad, good, cut);
        rv_status st = rv_flat_load(bad, &out);
        if (st != RV_E_CORRUPT) FAILF("truncation at %zu gave %s", cut, rv_status_name(st));
    }
    /* trailing garbage is caught */
    unsigned char *longer = (unsigned char *)malloc(len + 5);
    memcpy(longer, good, len);
    memset(longer + len, 0, 5);
    write_all(bad, longer, len + 5);
    EXPECT_STATUS(RV_E_CORRUPT, rv_flat_load(bad, &out));
    EXPECT_STR_CONTAINS(rv_errmsg(), "truncated or extended");
    free(longer);
    /* a foreign file */
    write_all(bad, (const unsigned char *)"hello, this is not an index at all\n", 35);
    EXPECT_STATUS(RV_E_CORRUPT, rv_flat_load(bad, &out));
    EXPECT_STR_CONTAINS(rv_errmsg(), "magic");
    /* a well-formed header of another version */
    good[8] = 2;
    write_all(bad, good, len);
    EXPECT_STATUS(RV_E_VERSION, rv_flat_load(bad, &out));
    EXPECT_STR_CONTAINS(rv_errmsg(), "version 2");
    good[8] = 1;
    /* a payload flip behind a valid header checksum: the payload checksum */
    good[len - 1] ^= 0x40;
    write_all(bad, good, len);
    EXPECT_STATUS(RV_E_CORRUPT, rv_flat_load(bad, &out));
    EXPECT_STR_CONTAINS(rv_errmsg(), "checksum");
    /* missing file and directory */
    EXPECT_STATUS(RV_E_IO, rv_flat_load("/nonexistent/dir/x.rvf", &out));
    EXPECT_STR_CONTAINS(rv_errmsg(), "/nonexistent/dir/x.rvf");
    EXPECT_STATUS(RV_E_IO, rv_flat_load(tmpdir, &out));
    rv_flat *e = make(2, RV_METRIC_L2, RV_FLAT_F32);
    EXPECT_STATUS(RV_E_IO, rv_flat_save(e, "/nonexistent/dir/x.rvf"));
    rv_flat_free(e);
    unlink(path);
    unlink(bad);
    free(good);
    free(data);
}

/* Filtered search equals the unfiltered exact ranking restricted to the
** allowed ids, for every storage, metric and filter size; ids past the
** largest one given cannot be numbered. */
static void test_filters_match_brute_force(void) {
    size_t n = 1000, dim = 12;
    float *data = gauss_vectors(n, dim, 71);
    rv_rng r;
    rv_rng_seed(&r, 72);
    static const size_t sizes[] = {0, 1, 3, 20, 200, 900, 2000};
    for (int mi = 0; mi < 3; mi++) {
        rv_flat *ix = make((uint32_t)dim, (rv_metric)mi, RV_FLAT_F32);
        int64_t *ids = malloc(n * sizeof *ids);
        for (size_t i = 0; i < n; i++) ids[i] = (int64_t)(n - i) * 7; /* not in row order */
        ASSERT_OK(rv_flat_add(ix, n, data, ids, NULL));
        int64_t gone[50];
        for (int i = 0; i < 50; i++) gone[i] = ids[i * 19];
        ASSERT_OK(rv_flat_delete(ix, 50, gone, NULL));
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            int64_t *pick = malloc((sizes[si] ? sizes[si] : 1) * sizeof *pick);
            for (size_t i = 0; i < sizes[si]; i++) pick[i] = (int64_t)rv_rng_below(&r, 7 * n + 50);
            rv_idset *set = NULL;
            ASSERT_OK(rv_idset_create(pick, sizes[si], &set));
            float q[2 * 12];
            for (size_t j = 0; j < 2 * dim; j++) q[j] = (float)rv_rng_uniform(&r) - 0.5f;
            rv_flat_search_params p;
            rv_flat_search_params_init(&p);
            p.k = n;
            p.n_threads = 1;
            int64_t *all = malloc(2 * n * sizeof *all), out[2 * 10];
            float *all_sc = malloc(2 * n * sizeof *all_sc), sc[2 * 10];
            size_t n_all, found;
            ASSERT_OK(rv_flat_search(ix, &p, 2, q, all, all_sc, &n_all));
            p.k = 10;
            p.filter = set;
            ASSERT_OK(rv_flat_search(ix, &p, 2, q, out, sc, &found));
            for (size_t qi = 0; qi < 2; qi++) {
                size_t m = 0;
                for (size_t i = 0; i < n_all && m < 10; i++) {
                    if (!rv_idset_contains(set, all[qi * n + i])) continue;
                    EXPECT_EQ(out[qi * 10 + m], all[qi * n + i]);
                    EXPECT_TRUE(sc[qi * 10 + m] == all_sc[qi * n + i]);
                    m++;
                }
                EXPECT_EQ(found, m);
            }
            free(all);
            free(all_sc);
            free(pick);
            rv_idset_free(set);
        }
        free(ids);
        rv_flat_free(ix);
    }
    /* numbering past the largest id is refused, not wrapped */
    rv_flat *ix = make((uint32_t)dim, RV_METRIC_COSINE, RV_FLAT_F32);
    int64_t top = RV_FLAT_MAX_ID;
    ASSERT_OK(rv_flat_add(ix, 1, data, &top, NULL));
    EXPECT_STATUS(RV_E_RANGE, rv_flat_add(ix, 1, data, NULL, NULL));
    EXPECT_EQ(rv_flat_size(ix), 1);
    rv_flat_free(ix);
    free(data);
}

/* Fail allocation 1, 2, 3, ... through a full life cycle: every failure is
** RV_E_NOMEM with nothing leaked (ASan checks the leaks). */
static rv_status life_cycle(const char *path, const float *data, size_t n, size_t dim,
                            rv_flat_storage s) {
    rv_flat_options o;
    rv_flat_options_init(&o);
    o.dim = (uint32_t)dim;
    o.storage = s;
    rv_flat *ix = NULL, *back = NULL;
    rv_status st = rv_flat_create(&o, &ix);
    if (!st) st = rv_flat_add(ix, n / 2, data, NULL, NULL);
    if (!st) st = rv_flat_add(ix, n - n / 2, data + (n / 2) * dim, NULL, NULL);
    int64_t del[2] = {1, 5};
    if (!st) st = rv_flat_delete(ix, 2, del, NULL);
    rv_flat_search_params p;
    rv_flat_search_params_init(&p);
    p.k = 4;
    p.n_threads = 1;
    int64_t out[8];
    float sc[8];
    size_t found, fnd[2];
    if (!st) st = rv_flat_search(ix, &p, 2, data, out, sc, &found);
    rv_idset *set = NULL; /* a filtered search: the id set and the panel list */
    if (!st) st = rv_idset_create((const int64_t[]){3, 9, 40, 120}, 4, &set);
    p.filter = set;
    if (!st) st = rv_flat_search(ix, &p, 2, data, out, sc, &found);
    p.filter = NULL;
    rv_idset_free(set);
    if (!st)
        st = rv_flat_rescore(ix, 2, data, 3, (const int64_t[]){0, 2, 3, 4, 6, 7}, 4, 1, out, sc,
                             fnd);
    if (!st) st = rv_flat_compact(ix);
    if (!st) st = rv_flat_save(ix, path);
    if (!st) st = rv_flat_load(path, &back);
    rv_flat_free(ix);
    rv_flat_free(back);
    return st;
}

static void test_allocation_failures(void) {
    size_t n = 150, dim = 10;
    float *data = gauss_vectors(n, dim, 61);
    char path[512];
    path_in_tmp(path, sizeof path, "oom.rvf");
    for (int s = 0; s < 3; s++) {
        int finished = 0;
        for (uint64_t fail = 1; fail < 400 && !finished; fail++) {
            rv__test_fail_alloc_after(fail);
            rv_status st = life_cycle(path, data, n, dim, (rv_flat_storage)s);
            rv__test_fail_alloc_after(0);
            if (st == RV_OK)
                finished = 1;
            else if (st != RV_E_NOMEM)
                FAILF("failing allocation %llu gave %s (%s)", (unsigned long long)fail,
                      rv_status_name(st), rv_errmsg());
        }
        EXPECT_TRUE(finished);
    }
    unlink(path);
    free(data);
}

static int cmp_hit_ref(const void *pa, const void *pb) {
    const rv__hit *a = (const rv__hit *)pa, *b = (const rv__hit *)pb;
    if (a->s != b->s) return a->s > b->s ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

static int cmp_i64_ref(const void *pa, const void *pb) {
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return (a > b) - (a < b);
}

/* The hits' sort (quicksort, heapsort past its depth, insertion sort)
** gives qsort's order (score descending, then id) on random, sorted,
** reversed, organ-pipe and all-equal scores, +-0, and sizes around its
** thresholds; with NaN scores it stays in bounds and keeps every hit. */
static void test_sort_hits(void) {
    size_t sizes[] = {0, 1, 2, 3, 23, 24, 25, 26, 100, 501, 4099};
    rv_rng rng;
    rv_rng_seed(&rng, 4242);
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t n = sizes[si];
        rv__hit *a = (rv__hit *)malloc((n + 1) * sizeof *a);
        rv__hit *b = (rv__hit *)malloc((n + 1) * sizeof *b);
        for (int pat = 0; pat < 8; pat++) {
            for (size_t i = 0; i < n; i++) {
                float s;
                switch (pat) {
                case 0:
                    s = (float)rv_rng_uniform(&rng);
                    break;
                case 1:
                    s = (float)rv_rng_below(&rng, 3);
                    break; /* many ties */
                case 2:
                    s = (float)i;
                    break;
                case 3:
                    s = -(float)i;
                    break;
                case 4:
                    s = (float)(i < n / 2 ? i : n - i);
                    break; /* organ pipe */
                case 5:
                    s = 1.0f;
                    break;
                case 6:
                    s = (i % 2) ? 0.0f : -0.0f;
                    break;
                default:
                    s = (float)(i % 7) * 0.25f;
                    break;
                }
                /* distinct ids in a shuffled order */
                a[i].s = s;
                a[i].id = (int64_t)(i * 7919 % n) - 3; /* (7919: a prime, no size's factor) */
                a[i].row = i;
            }
            memcpy(b, a, n * sizeof *a);
            rv__sort_hits(a, n);
            if (n) qsort(b, n, sizeof *b, cmp_hit_ref);
            for (size_t i = 0; i < n; i++)
                if (a[i].id != b[i].id || memcmp(&a[i].s, &b[i].s, sizeof a[i].s) != 0 ||
                    a[i].row != b[i].row) {
                    FAILF("n %zu pattern %d: position %zu holds id %lld, qsort's %lld", n, pat, i,
                          (long long)a[i].id, (long long)b[i].id);
                    break;
                }
        }
        /* NaN scores: no order is defined, but no hit is lost or made up */
        int64_t *ids = (int64_t *)malloc((n + 1) * sizeof *ids);
        for (size_t i = 0; i < n; i++) {
            a[i].s = (i % 3 == 0) ? NAN : (float)rv_rng_uniform(&rng);
            a[i].id = (int64_t)i;
            a[i].row = i;
        }
        rv__sort_hits(a, n);
        for (size_t i = 0; i < n; i++) ids[i] = a[i].id;
        if (n) qsort(ids, n, sizeof *ids, cmp_i64_ref);
        for (size_t i = 0; i < n; i++)
            if (ids[i] != (int64_t)i) {
                FAILF("n %zu with NaN scores: a hit was lost or duplicated", n);
                break;
            }
        free(ids);
        free(a);
        free(b);
    }
}

int main(void) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/rv_test_flat_XXXXXX");
    if (!mkdtemp(tmpdir)) return 1;
    RUN_TEST(test_options_and_create_errors);
    RUN_TEST(test_exact_matches_reference);
    RUN_TEST(test_ties_go_to_lower_id);
    RUN_TEST(test_threads_give_identical_results);
    RUN_TEST(test_compact_storage_recall);
    RUN_TEST(test_portable_kernels_agree);
    RUN_TEST(test_half_conversion);
    RUN_TEST(test_dots_match_dot);
    RUN_TEST(test_exact_compact_scores_equal_rescore);
    RUN_TEST(test_i8_kernels_exact);
    RUN_TEST(test_q16_kernels_exact);
    RUN_TEST(test_dotsg_match_dot);
    RUN_TEST(test_sort_hits);
    RUN_TEST(test_screen_equals_brute_force);
    RUN_TEST(test_screen_extreme_queries);
    RUN_TEST(test_single_query_matches_batch);
    RUN_TEST(test_deletes_filters_and_ids);
    RUN_TEST(test_filters_match_brute_force);
    RUN_TEST(test_bad_input);
    RUN_TEST(test_rescore);
    RUN_TEST(test_progress_interrupts);
    RUN_TEST(test_save_load_round_trip);
    RUN_TEST(test_i8_rows_match_reference);
    RUN_TEST(test_i8_tiny_vectors);
    RUN_TEST(test_corrupt_files);
    RUN_TEST(test_allocation_failures);
    rmdir(tmpdir);
    return RV_TEST_SUMMARY();
}
