/*
** BM25 index: scores against a reference scorer written independently here
** (double precision, straight from the formulas), pruned == exhaustive,
** batches on several threads, explain, deletes and compaction, save/load
** with corruption at every byte and truncation at every length, and an
** allocation-failure sweep over every entry point that allocates.
*/
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "rv_test.h"

/* ------------------------------------------------------------- corpora */

/* Random documents over a small vocabulary with skewed frequencies, so
** posting lists of very different lengths and repeated terms occur. */
typedef struct {
    size_t n;
    char **text;
    size_t *len;
} corpus;

static const char *const vocab[] = {
    "apple",  "banana", "cherry", "delta", "echo",    "foxtrot",  "golf",    "hotel",
    "india",  "juliet", "kilo",   "lima",  "mike",    "november", "oscar",   "papa",
    "quebec", "romeo",  "sierra", "tango", "uniform", "victor",   "whiskey", "xray",
    "yankee", "zulu",   "alpha",  "bravo", "charlie", "dog",      "cat",     "mouse",
};
#define NV (sizeof vocab / sizeof vocab[0])

static size_t pick_word(rv_rng *r) {
    /* roughly Zipfian: square of a uniform */
    double u = rv_rng_uniform(r);
    return (size_t)(u * u * (double)NV);
}

static void corpus_make(corpus *c, size_t n, uint64_t seed, size_t maxlen) {
    rv_rng r;
    rv_rng_seed(&r, seed);
    c->n = n;
    c->text = malloc(n * sizeof *c->text);
    c->len = malloc(n * sizeof *c->len);
    for (size_t i = 0; i < n; i++) {
        size_t words = (size_t)rv_rng_below(&r, maxlen + 1);
        if (rv_rng_below(&r, 20) == 0) words = 0; /* some empty documents */
        char *t = malloc(words * 10 + 16);
        size_t o = 0;
        for (size_t w = 0; w < words; w++) {
            const char *v = vocab[pick_word(&r)];
            if (rv_rng_below(&r, 25) == 0) v = "the"; /* stopwords */
            size_t l = strlen(v);
            memcpy(t + o, v, l);
            o += l;
            t[o++] = ' ';
        }
        t[o] = 0;
        c->text[i] = t;
        c->len[i] = o;
    }
}

/* A Zipfian corpus over V synthetic words "t<rank>" (p ~ 1/rank), the
** shape of real collections, where pruning has something to skip. */
static uint32_t zipf_word(rv_rng *r, const double *cdf, uint32_t V) {
    double u = rv_rng_uniform(r);
    uint32_t lo = 0, hi = V - 1;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (cdf[mid] < u)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static double *zipf_cdf(uint32_t V) {
    double *cdf = malloc(V * sizeof *cdf), acc = 0;
    for (uint32_t i = 0; i < V; i++) cdf[i] = (acc += 1.0 / (i + 1));
    for (uint32_t i = 0; i < V; i++) cdf[i] /= acc;
    return cdf;
}

static void corpus_make_zipf(corpus *c, size_t n, uint64_t seed, uint32_t V, size_t meanlen) {
    rv_rng r;
    rv_rng_seed(&r, seed);
    double *cdf = zipf_cdf(V);
    c->n = n;
    c->text = malloc(n * sizeof *c->text);
    c->len = malloc(n * sizeof *c->len);
    for (size_t i = 0; i < n; i++) {
        size_t words = meanlen / 2 + (size_t)rv_rng_below(&r, meanlen + 1);
        char *t = malloc(words * 8 + 16);
        size_t o = 0;
        for (size_t w = 0; w < words; w++)
            o += (size_t)sprintf(t + o, "t%u ", zipf_word(&r, cdf, V));
        c->text[i] = t;
        c->len[i] = o;
    }
    free(cdf);
}

static void corpus_free(corpus *c) {
    for (size_t i = 0; i < c->n; i++) free(c->text[i]);
    free(c->text);
    free(c->len);
}

static rv_bm25 *build(const corpus *c, const rv_bm25_params *p, size_t batches) {
    rv_analyzer_options o;
    rv_analyzer_options_init(&o);
    o.stem = 0;
    rv_bm25 *ix = NULL;
    if (rv_bm25_create(&o, p, &ix) != RV_OK) return NULL;
    size_t step = (c->n + batches - 1) / batches;
    for (size_t a = 0; a < c->n; a += step) {
        size_t m = a + step < c->n ? step : c->n - a;
        if (rv_bm25_add(ix, m, (const char *const *)c->text + a, c->len + a, NULL, NULL, NULL,
                        NULL) != RV_OK) {
            rv_bm25_free(ix);
            return NULL;
        }
    }
    return ix;
}

/* ------------------------------------------------------ reference scorer */

/* Term frequencies of vocabulary word v in every document (stopword and
** case handling are trivial for this corpus: words are lowercase and "the"
** is the only stopword). */
typedef struct {
    size_t n;
    uint32_t *tf; /* n * NV */
    uint32_t *dl;
    const uint8_t *counted; /* documents in the statistics (NULL: all) */
} reference;

static void ref_make(reference *R, const corpus *c) {
    R->n = c->n;
    R->tf = calloc(c->n * NV, sizeof *R->tf);
    R->dl = calloc(c->n, sizeof *R->dl);
    R->counted = NULL;
    for (size_t i = 0; i < c->n; i++) {
        const char *s = c->text[i];
        while (*s) {
            const char *e = strchr(s, ' ');
            size_t l = (size_t)(e - s);
            for (size_t v = 0; v < NV; v++)
                if (strlen(vocab[v]) == l && memcmp(vocab[v], s, l) == 0) {
                    R->tf[i * NV + v]++;
                    R->dl[i]++;
                }
            s = e + 1;
        }
    }
}

static double ref_score(const reference *R, const rv_bm25_params *p, const size_t *q, size_t nq,
                        size_t d) {
    double N = 0, tot = 0;
    for (size_t i = 0; i < R->n; i++)
        if (!R->counted || R->counted[i]) {
            N++;
            tot += R->dl[i];
        }
    double avgdl = N ? tot / N : 0;
    double s = 0;
    for (size_t j = 0; j < nq; j++) {
        size_t v = q[j];
        double tf = R->tf[d * NV + v];
        if (tf == 0) continue;
        double df = 0;
        for (size_t i = 0; i < R->n; i++)
            if ((!R->counted || R->counted[i]) && R->tf[i * NV + v]) df++;
        double B = 1 - p->b + p->b * R->dl[d] / avgdl, K = p->k1 * B, idf, w;
        switch (p->variant) {
        case RV_BM25_ROBERTSON:
            idf = fmax(0, log((N - df + 0.5) / (df + 0.5)));
            w = idf * tf / (tf + K);
            break;
        case RV_BM25_ATIRE:
            idf = log(N / df);
            w = idf * (p->k1 + 1) * tf / (tf + K);
            break;
        case RV_BM25_L: {
            idf = log((N + 1) / (df + 0.5));
            double c = tf / B;
            w = idf * (p->k1 + 1) * (c + p->delta) / (p->k1 + c + p->delta);
            break;
        }
        case RV_BM25_PLUS:
            idf = log((N + 1) / df);
            w = idf * ((p->k1 + 1) * tf / (tf + K) + p->delta);
            break;
        default:
            idf = log(1 + (N - df + 0.5) / (df + 0.5));
            w = idf * tf / (tf + K);
        }
        s += w;
    }
    return s;
}

static void ref_free(reference *R) {
    free(R->tf);
    free(R->dl);
}

/* Build the text of a query from vocabulary indices. */
static size_t query_text(const size_t *q, size_t nq, char *out) {
    size_t o = 0;
    for (size_t j = 0; j < nq; j++) {
        size_t l = strlen(vocab[q[j]]);
        memcpy(out + o, vocab[q[j]], l);
        o += l;
        out[o++] = ' ';
    }
    out[o] = 0;
    return o;
}

/* ------------------------------------------------------------------ tests */

static void test_params(void) {
    rv_bm25_params p;
    rv_bm25_params_init(&p);
    EXPECT_EQ(p.variant, RV_BM25_LUCENE);
    EXPECT_NEAR(p.k1, 1.2, 0);
    EXPECT_NEAR(p.b, 0.75, 0);
    ASSERT_OK(rv_bm25_params_check(&p));
    p.k1 = -1;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_bm25_params_check(&p));
    EXPECT_STR_CONTAINS(rv_errmsg(), "k1");
    p.k1 = NAN;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_bm25_params_check(&p));
    p.k1 = INFINITY;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_bm25_params_check(&p));
    rv_bm25_params_init(&p);
    p.b = 1.5;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_bm25_params_check(&p));
    EXPECT_STR_CONTAINS(rv_errmsg(), "b = 1.5");
    rv_bm25_params_init(&p);
    p.delta = 0.5;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_bm25_params_check(&p));
    EXPECT_STR_CONTAINS(rv_errmsg(), "delta");
    p.variant = RV_BM25_PLUS;
    EXPECT_OK(rv_bm25_params_check(&p));
    p.delta = -0.1;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_bm25_params_check(&p));
    p.variant = (rv_bm25_variant)9;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_bm25_params_check(&p));
    rv_bm25 *ix = NULL;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_bm25_create(NULL, &p, &ix));
    EXPECT_TRUE(ix == NULL);
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_bm25_create(NULL, NULL, NULL));
    rv_bm25_free(NULL);
}

static void test_small_known(void) {
    /* three documents, scores worked out by hand from the Lucene formula */
    const char *docs[] = {"The quick brown fox", "A lazy brown dog", "Foxes are quick"};
    size_t lens[3] = {19, 16, 15};
    rv_bm25 *ix = NULL;
    ASSERT_OK(rv_bm25_create(NULL, NULL, &ix));
    int64_t first[3] = {99, 99, 99};
    ASSERT_OK(rv_bm25_add(ix, 3, docs, lens, NULL, NULL, NULL, first));
    EXPECT_EQ(first[0], 0);
    EXPECT_EQ(first[2], 2);
    int64_t ids[10];
    float sc[10];
    size_t nf = 0;
    rv_bm25_search_info info;
    ASSERT_OK(rv_bm25_search(ix, "quick fox", 9, 10, 0, NULL, ids, sc, &nf, &info));
    ASSERT_EQ(nf, 2);
    /* N = 3, df = 2 for both terms, dl = 3, 3, 2, avgdl = 8/3 */
    double idf = log(1 + 1.5 / 2.5);
    double k2 = 1.2 * (0.25 + 0.75 * 2 / (8.0 / 3)), k0 = 1.2 * (0.25 + 0.75 * 3 / (8.0 / 3));
    EXPECT_EQ(ids[0], 2);
    EXPECT_EQ(ids[1], 0);
    EXPECT_NEAR(sc[0], 2 * idf / (1 + k2), 1e-6);
    EXPECT_NEAR(sc[1], 2 * idf / (1 + k0), 1e-6);
    EXPECT_EQ(info.n_query_terms, 2);
    /* unknown terms: empty result, not an error; k == 0 is an error */
    ASSERT_OK(rv_bm25_search(ix, "zebra", 5, 10, 0, NULL, ids, sc, &nf, NULL));
    EXPECT_EQ(nf, 0);
    ASSERT_OK(rv_bm25_search(ix, "", 0, 10, 0, NULL, ids, sc, &nf, NULL));
    EXPECT_EQ(nf, 0);
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_bm25_search(ix, "fox", 3, 0, 0, NULL, ids, sc, &nf, NULL));
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_bm25_search(ix, "fox", 3, 10, 8, NULL, ids, sc, &nf, NULL));
    EXPECT_STATUS(RV_E_INVALID_ARG,
                  rv_bm25_search(ix, "fox\xFF", 4, 10, 0, NULL, ids, sc, &nf, NULL));
    /* k smaller than the matches */
    ASSERT_OK(rv_bm25_search(ix, "brown", 5, 1, 0, NULL, ids, sc, &nf, NULL));
    EXPECT_EQ(nf, 1);
    EXPECT_EQ(ids[0], 0); /* docs 0 and 1 tie (same tf and length): lower id */
    /* dictionary */
    uint32_t t;
    int found;
    ASSERT_OK(rv_bm25_lookup(ix, "fox", 3, &t, &found));
    EXPECT_EQ(found, 1);
    const char *s;
    size_t sl;
    ASSERT_OK(rv_bm25_term(ix, t, &s, &sl));
    EXPECT_TRUE(sl == 3 && memcmp(s, "fox", 3) == 0);
    uint64_t df;
    ASSERT_OK(rv_bm25_doc_freq(ix, t, &df));
    EXPECT_EQ(df, 2);
    ASSERT_OK(rv_bm25_lookup(ix, "foxes", 5, &t, &found));
    EXPECT_EQ(found, 0);
    EXPECT_STATUS(RV_E_RANGE, rv_bm25_term(ix, 1000, &s, &sl));
    uint32_t bad = 1000;
    EXPECT_STATUS(RV_E_RANGE, rv_bm25_search_terms(ix, &bad, 1, 10, 0, NULL, ids, sc, &nf, NULL));
    rv_bm25_free(ix);
}

static void test_tie_order(void) {
    /* identical documents: equal scores, listed by ascending id */
    const char *docs[6];
    size_t lens[6];
    for (int i = 0; i < 6; i++) {
        docs[i] = "same words here";
        lens[i] = 15;
    }
    rv_bm25 *ix = NULL;
    ASSERT_OK(rv_bm25_create(NULL, NULL, &ix));
    ASSERT_OK(rv_bm25_add(ix, 3, docs, lens, NULL, NULL, NULL, NULL));
    ASSERT_OK(rv_bm25_add(ix, 3, docs, lens, NULL, NULL, NULL, NULL));
    int64_t ids[4];
    float sc[4];
    size_t nf;
    for (unsigned fl = 0; fl < 2; fl++) {
        ASSERT_OK(rv_bm25_search(ix, "words", 5, 4, fl, NULL, ids, sc, &nf, NULL));
        ASSERT_EQ(nf, 4);
        for (uint32_t i = 0; i < 4; i++) EXPECT_EQ(ids[i], i);
        EXPECT_TRUE(sc[0] == sc[3]);
    }
    rv_bm25_free(ix);
}

/* Every variant against the reference, pruned and exhaustive identical. */
static void test_variants_vs_reference(void) {
    corpus c;
    corpus_make(&c, 400, 11, 30);
    reference R;
    ref_make(&R, &c);
    rv_bm25_variant vs[5] = {RV_BM25_LUCENE, RV_BM25_ROBERTSON, RV_BM25_ATIRE, RV_BM25_L,
                             RV_BM25_PLUS};
    rv_rng rng;
    rv_rng_seed(&rng, 5);
    for (int vi = 0; vi < 5; vi++) {
        rv_bm25_params p;
        rv_bm25_params_init(&p);
        p.variant = vs[vi];
        p.k1 = 0.5 + vi * 0.3;
        p.b = 0.2 * vi;
        if (vs[vi] == RV_BM25_L || vs[vi] == RV_BM25_PLUS) p.delta = 0.7;
        rv_bm25 *ix = build(&c, &p, 1 + (size_t)vi);
        ASSERT_TRUE(ix != NULL);
        for (int qi = 0; qi < 40; qi++) {
            size_t q[6], nq = 1 + (size_t)rv_rng_below(&rng, 6);
            for (size_t j = 0; j < nq; j++) q[j] = pick_word(&rng);
            char qt[128];
            size_t ql = query_text(q, nq, qt);
            size_t k = 1 + (size_t)rv_rng_below(&rng, 15);
            int64_t ids[32], ide[32];
            float sc[32], sce[32];
            size_t nf, nfe;
            ASSERT_OK(rv_bm25_search(ix, qt, ql, k, 0, NULL, ids, sc, &nf, NULL));
            ASSERT_OK(
                rv_bm25_search(ix, qt, ql, k, RV_BM25_EXHAUSTIVE, NULL, ide, sce, &nfe, NULL));
            ASSERT_EQ(nf, nfe);
            for (size_t i = 0; i < nf; i++) {
                EXPECT_EQ(ids[i], ide[i]);
                EXPECT_TRUE(sc[i] == sce[i]);
                double want = ref_score(&R, &p, q, nq, ids[i]);
                EXPECT_NEAR(sc[i], want, 1e-5 * (1 + want));
                if (i)
                    EXPECT_TRUE(sc[i - 1] > sc[i] || (sc[i - 1] == sc[i] && ids[i - 1] < ids[i]));
            }
            /* nothing left out scores above the last one returned */
            double last = nf ? sc[nf - 1] : 0;
            size_t matching = 0;
            for (size_t d = 0; d < c.n; d++) {
                int in = 0;
                for (size_t i = 0; i < nf; i++) in |= ids[i] == (int64_t)d;
                int matches = 0;
                for (size_t j = 0; j < nq; j++) matches |= R.tf[d * NV + q[j]] != 0;
                matching += matches;
                if (!in && matches)
                    EXPECT_TRUE(ref_score(&R, &p, q, nq, d) <= last + 1e-5 * (1 + last));
            }
            EXPECT_EQ(nf, matching < k ? matching : k);
        }
        rv_bm25_free(ix);
    }
    ref_free(&R);
    corpus_free(&c);
}

/* Large k (the bulk offers and the final radix sort, k >= 32): on 9,000
** short documents over 32 words (three segments, so several windows, and
** scores tied in long runs), with deleted documents and with a filter, the
** pruned, exhaustive and batch searches agree, and each is the true top k:
** sorted by score descending then id ascending, with every other match
** scoring below the last hit, or equal to it with a larger id.  The scores
** of all matches come from one exhaustive search at k = every document. */
static void test_large_k(void) {
    enum { N = 9000 };
    corpus c;
    corpus_make(&c, N, 29, 8);
    rv_bm25 *ix = build(&c, NULL, 3);
    ASSERT_TRUE(ix != NULL);
    int64_t del[60];
    for (int64_t i = 0; i < 60; i++) del[i] = i * 149 % N;
    ASSERT_OK(rv_bm25_delete(ix, del, 60, NULL));
    int64_t *pick = malloc(N * sizeof *pick);
    size_t n_pick = 0;
    for (int64_t i = 0; i < N; i++)
        if (i % 3 != 1) pick[n_pick++] = i;
    rv_idset *set = NULL;
    ASSERT_OK(rv_idset_create(pick, n_pick, &set));
    int64_t *all = malloc(N * sizeof *all), *ids = malloc(N * sizeof *ids);
    int64_t *ide = malloc(N * sizeof *ide), *idb = malloc(N * sizeof *idb);
    float *all_sc = malloc(N * sizeof *all_sc), *sc = malloc(N * sizeof *sc);
    float *sce = malloc(N * sizeof *sce), *scb = malloc(N * sizeof *scb);
    float *score_of = malloc(N * sizeof *score_of);
    ASSERT_TRUE(pick && all && ids && ide && idb && all_sc && sc && sce && scb && score_of);
    static const size_t ks[] = {31, 32, 33, 100, 257, 1000, 4000, N};
    rv_rng rng;
    rv_rng_seed(&rng, 31);
    int tie_at_edge = 0;
    for (int qi = 0; qi < 24; qi++) {
        size_t q[3], nq = 1 + (size_t)rv_rng_below(&rng, 3);
        for (size_t j = 0; j < nq; j++) q[j] = pick_word(&rng);
        char qt[64];
        size_t ql = query_text(q, nq, qt);
        const rv_idset *flt = qi % 2 ? set : NULL;
        size_t n_all;
        ASSERT_OK(
            rv_bm25_search(ix, qt, ql, N, RV_BM25_EXHAUSTIVE, flt, all, all_sc, &n_all, NULL));
        for (size_t d = 0; d < N; d++) score_of[d] = -1.0f; /* no match */
        for (size_t i = 0; i < n_all; i++) score_of[all[i]] = all_sc[i];
        for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
            size_t k = ks[ki], nf, nfe;
            uint32_t nb;
            ASSERT_OK(rv_bm25_search(ix, qt, ql, k, 0, flt, ids, sc, &nf, NULL));
            ASSERT_OK(rv_bm25_search(ix, qt, ql, k, RV_BM25_EXHAUSTIVE, flt, ide, sce, &nfe, NULL));
            const char *qv[1] = {qt};
            ASSERT_OK(
                rv_bm25_search_batch(ix, 1, qv, &ql, k, 0, flt, 2, NULL, NULL, idb, scb, &nb));
            ASSERT_EQ(nf, n_all < k ? n_all : k);
            ASSERT_EQ(nfe, nf);
            ASSERT_EQ((size_t)nb, nf);
            for (size_t i = 0; i < nf; i++) {
                EXPECT_EQ(ids[i], ide[i]);
                EXPECT_TRUE(sc[i] == sce[i]);
                EXPECT_EQ(ids[i], idb[i]);
                EXPECT_TRUE(sc[i] == scb[i]);
                EXPECT_TRUE(score_of[ids[i]] == sc[i]);
                if (i)
                    EXPECT_TRUE(sc[i - 1] > sc[i] || (sc[i - 1] == sc[i] && ids[i - 1] < ids[i]));
            }
            if (!nf || nf == n_all) continue;
            /* every match left out ranks below the last hit */
            uint8_t *in = calloc(N, 1);
            ASSERT_TRUE(in != NULL);
            for (size_t i = 0; i < nf; i++) in[ids[i]] = 1;
            float last = sc[nf - 1];
            for (size_t d = 0; d < N; d++) {
                if (in[d] || score_of[d] < 0) continue;
                EXPECT_TRUE(score_of[d] < last ||
                            (score_of[d] == last && (int64_t)d > ids[nf - 1]));
                tie_at_edge += score_of[d] == last;
            }
            free(in);
        }
    }
    EXPECT_TRUE(tie_at_edge > 0); /* ties across the k-th place were met */
    rv_idset_free(set);
    free(pick);
    free(all);
    free(ids);
    free(ide);
    free(idb);
    free(all_sc);
    free(sc);
    free(sce);
    free(scb);
    free(score_of);
    rv_bm25_free(ix);
    corpus_free(&c);
}

/* Pruning on a larger Zipfian index: identical to exhaustive, and it skips
** most of the work. */
static void test_pruning(void) {
    corpus c;
    corpus_make_zipf(&c, 20000, 21, 5000, 40);
    rv_bm25 *ix = build(&c, NULL, 3);
    ASSERT_TRUE(ix != NULL);
    int64_t del[50];
    for (int64_t i = 0; i < 50; i++) del[i] = i * 397 % 20000;
    double *cdf = zipf_cdf(5000);
    rv_rng rng;
    rv_rng_seed(&rng, 8);
    uint64_t scored = 0, total = 0;
    for (int qi = 0; qi < 300; qi++) {
        if (qi == 150) ASSERT_OK(rv_bm25_delete(ix, del, 50, NULL)); /* pruning with holes */
        size_t nq = 1 + (size_t)rv_rng_below(&rng, 6);
        char qt[160];
        size_t ql = 0;
        for (size_t j = 0; j < nq; j++)
            ql += (size_t)sprintf(qt + ql, "t%u ", zipf_word(&rng, cdf, 5000));
        size_t k = qi % 3 == 0 ? 1 : qi % 3 == 1 ? 10 : 100;
        int64_t ids[100], ide[100];
        float sc[100], sce[100];
        size_t nf, nfe;
        rv_bm25_search_info a, b;
        ASSERT_OK(rv_bm25_search(ix, qt, ql, k, 0, NULL, ids, sc, &nf, &a));
        ASSERT_OK(rv_bm25_search(ix, qt, ql, k, RV_BM25_EXHAUSTIVE, NULL, ide, sce, &nfe, &b));
        ASSERT_EQ(nf, nfe);
        for (size_t i = 0; i < nf; i++) {
            EXPECT_EQ(ids[i], ide[i]);
            EXPECT_TRUE(sc[i] == sce[i]);
        }
        if (qi < 150) EXPECT_EQ(b.postings_scored, b.postings_total);
        if (k == 10) {
            scored += a.postings_scored;
            total += a.postings_total;
        }
    }
    fprintf(stderr, "  top-10 scored %llu of %llu postings\n", (unsigned long long)scored,
            (unsigned long long)total);
    /* top-10 must not have scored every posting: most are skipped */
    EXPECT_TRUE(scored * 2 < total);
    free(cdf);
    rv_bm25_free(ix);
    corpus_free(&c);
}

/* More than 64 distinct terms takes the document-at-a-time kernel. */
/* Pruned == exhaustive where pruning is easiest to get wrong: long lists of
** exactly tied weights (the bound taken before search from a list's best
** postings equals the k-th score), k around the size of those best-posting
** samples (128) and beyond the matches, deleted documents and filters that
** remove the very postings the first bound would be read from, repeated
** query terms, and a term found in every document.  Three segments. */
static void test_pruning_adversarial(void) {
    enum { N = 3000 };
    corpus c;
    c.n = N;
    c.text = malloc(N * sizeof *c.text);
    c.len = malloc(N * sizeof *c.len);
    for (size_t i = 0; i < N; i++) {
        char *t = malloc(96);
        size_t o = (size_t)sprintf(t, "apple");
        for (size_t f = 0; f < 1 + i % 3; f++) o += (size_t)sprintf(t + o, " zz"); /* 3 lengths */
        if (i % 7 == 0) o += (size_t)sprintf(t + o, " banana");
        if (i < 40) o += (size_t)sprintf(t + o, " cherry");
        if (i % 500 == 0) o += (size_t)sprintf(t + o, " apple apple"); /* a few stand out */
        c.text[i] = t;
        c.len[i] = o;
    }
    /* caller ids out of slot order (slot i has id i * 1237 mod N), so a tie
    ** visited late can hold the lower id; three segments */
    rv_analyzer_options o;
    rv_analyzer_options_init(&o);
    rv_bm25 *ix = NULL;
    ASSERT_OK(rv_bm25_create(&o, NULL, &ix));
    int64_t *perm = malloc(N * sizeof *perm);
    for (size_t i = 0; i < N; i++) perm[i] = (int64_t)(i * 1237 % N);
    for (size_t a = 0; a < N; a += N / 3)
        ASSERT_OK(rv_bm25_add(ix, N / 3, (const char *const *)c.text + a, c.len + a, perm + a, NULL,
                              NULL, NULL));
    /* delete most of the best "apple" documents (the shortest, slot % 3 ==
    ** 0, and the standouts) */
    int64_t del[700];
    size_t nd = 0, cherry = 40;
    for (size_t i = 0; i < N && nd < 700; i += 3)
        if (i % 4 != 1) {
            del[nd++] = perm[i];
            cherry -= i < 40;
        }
    ASSERT_OK(rv_bm25_delete(ix, del, nd, NULL));
    /* filters: without the shortest documents (large: the pruned kernel),
    ** and a few ids (small: the direct kernel) */
    int64_t *keep = malloc(N * sizeof *keep), few[30];
    size_t nk = 0;
    for (size_t i = 0; i < N; i++)
        if (i % 3 != 0) keep[nk++] = perm[i];
    for (int i = 0; i < 30; i++) few[i] = i * 97 % N;
    rv_idset *big = NULL, *small = NULL;
    ASSERT_OK(rv_idset_create(keep, nk, &big));
    ASSERT_OK(rv_idset_create(few, 30, &small));
    rv_idset *filters[3] = {NULL, big, small};
    static const char *const queries[] = {
        "apple", "apple banana", "cherry", "apple cherry", "banana banana apple",
        "zz",    "zz apple",     "nothing"};
    static const size_t ks[] = {1, 3, 10, 64, 100, 127, 128, 129, 150, 500, 5000};
    int64_t *ids = malloc(5000 * sizeof *ids), *ide = malloc(5000 * sizeof *ide);
    float *sc = malloc(5000 * sizeof *sc), *sce = malloc(5000 * sizeof *sce);
    size_t live = N - nd;
    for (size_t fi = 0; fi < 3; fi++)
        for (size_t qi = 0; qi < sizeof queries / sizeof *queries; qi++)
            for (size_t ki = 0; ki < sizeof ks / sizeof *ks; ki++) {
                const char *q = queries[qi];
                size_t k = ks[ki], nf, nfe;
                ASSERT_OK(rv_bm25_search(ix, q, strlen(q), k, 0, filters[fi], ids, sc, &nf, NULL));
                ASSERT_OK(rv_bm25_search(ix, q, strlen(q), k, RV_BM25_EXHAUSTIVE, filters[fi], ide,
                                         sce, &nfe, NULL));
                EXPECT_EQ(nf, nfe);
                for (size_t i = 0; i < nf && i < nfe; i++) {
                    EXPECT_EQ(ids[i], ide[i]);
                    EXPECT_TRUE(sc[i] == sce[i]);
                }
                /* k beyond the matches: every match, no more */
                if (fi == 0 && qi == 0) EXPECT_EQ(nf, k < live ? k : live);
                if (fi == 0 && qi == 2) EXPECT_EQ(nf, k < cherry ? k : cherry);
                if (qi == 7) EXPECT_EQ(nf, 0);
            }
    /* ties: among the live length-2 "apple" documents without extras, a
    ** lower id always comes first */
    size_t nf;
    ASSERT_OK(rv_bm25_search(ix, "apple", 5, 100, 0, NULL, ids, sc, &nf, NULL));
    for (size_t i = 1; i < nf; i++)
        if (sc[i] == sc[i - 1]) EXPECT_TRUE(ids[i] > ids[i - 1]);
    rv_idset_free(big);
    rv_idset_free(small);
    free(perm);
    free(keep);
    free(ids);
    free(ide);
    free(sc);
    free(sce);
    rv_bm25_free(ix);
    corpus_free(&c);
}

static void test_long_query(void) {
    corpus c;
    corpus_make(&c, 300, 3, 20);
    rv_analyzer_options o;
    rv_analyzer_options_init(&o);
    o.stem = 0;
    rv_bm25 *ix = NULL;
    ASSERT_OK(rv_bm25_create(&o, NULL, &ix));
    ASSERT_OK(rv_bm25_add(ix, c.n, (const char *const *)c.text, c.len, NULL, NULL, NULL, NULL));
    /* add 60 more terms so a query can name 90 distinct ones */
    char extra[2000];
    size_t o2 = 0;
    for (int i = 0; i < 60; i++) o2 += (size_t)sprintf(extra + o2, "zz%dq ", i);
    const char *ep = extra;
    ASSERT_OK(rv_bm25_add(ix, 1, &ep, &o2, NULL, NULL, NULL, NULL));
    char q[4000];
    size_t ql = 0;
    for (size_t v = 0; v < NV; v++) ql += (size_t)sprintf(q + ql, "%s ", vocab[v]);
    memcpy(q + ql, extra, o2);
    ql += o2;
    int64_t ids[20], ide[20];
    float sc[20], sce[20];
    size_t nf, nfe;
    rv_bm25_search_info info;
    ASSERT_OK(rv_bm25_search(ix, q, ql, 20, 0, NULL, ids, sc, &nf, &info));
    EXPECT_TRUE(info.n_query_terms > 64);
    ASSERT_OK(rv_bm25_search(ix, q, ql, 20, RV_BM25_EXHAUSTIVE, NULL, ide, sce, &nfe, NULL));
    ASSERT_EQ(nf, nfe);
    for (size_t i = 0; i < nf; i++) {
        EXPECT_EQ(ids[i], ide[i]);
        EXPECT_TRUE(sc[i] == sce[i]);
    }
    EXPECT_EQ(ids[0], 300); /* the document of rare terms wins */
    rv_bm25_free(ix);
    corpus_free(&c);
}

static int stop_after_3(void *ctx, uint64_t done, uint64_t total) {
    (void)ctx;
    (void)total;
    return done >= 3;
}

static void test_batch(void) {
    corpus c;
    corpus_make(&c, 2000, 31, 40);
    rv_bm25 *ix = build(&c, NULL, 2);
    ASSERT_TRUE(ix != NULL);
    enum { NQ = 120, K = 7 };
    char *qs[NQ];
    size_t ql[NQ];
    rv_rng rng;
    rv_rng_seed(&rng, 44);
    for (int i = 0; i < NQ; i++) {
        size_t q[5], nq = (size_t)rv_rng_below(&rng, 6);
        for (size_t j = 0; j < nq; j++) q[j] = pick_word(&rng);
        qs[i] = malloc(128);
        ql[i] = query_text(q, nq, qs[i]);
    }
    static int64_t ids1[NQ * K], ids4[NQ * K];
    static uint32_t n1[NQ], n4[NQ];
    static float sc1[NQ * K], sc4[NQ * K];
    ASSERT_OK(rv_bm25_search_batch(ix, NQ, (const char *const *)qs, ql, K, 0, NULL, 1, NULL, NULL,
                                   ids1, sc1, n1));
    ASSERT_OK(rv_bm25_search_batch(ix, NQ, (const char *const *)qs, ql, K, 0, NULL, 4, NULL, NULL,
                                   ids4, sc4, n4));
    for (int i = 0; i < NQ; i++) {
        int64_t ids[K];
        float sc[K];
        size_t nf;
        ASSERT_OK(rv_bm25_search(ix, qs[i], ql[i], K, 0, NULL, ids, sc, &nf, NULL));
        EXPECT_EQ(n1[i], nf);
        EXPECT_EQ(n4[i], nf);
        for (size_t j = 0; j < K; j++) {
            EXPECT_EQ(ids1[i * K + j], ids4[i * K + j]);
            if (j < nf) {
                EXPECT_EQ(ids1[i * K + j], ids[j]);
                EXPECT_TRUE(sc1[i * K + j] == sc[j] && sc4[i * K + j] == sc[j]);
            } else {
                EXPECT_EQ(ids1[i * K + j], RV_BM25_NO_DOC);
                EXPECT_TRUE(isnan(sc1[i * K + j]));
            }
        }
    }
    /* a bad query names itself; progress can stop a batch */
    char *bad = "ok \xFF";
    char *qq[3] = {qs[0], qs[1], bad};
    size_t qql[3] = {ql[0], ql[1], 4};
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_bm25_search_batch(ix, 3, (const char *const *)qq, qql, K, 0,
                                                         NULL, 2, NULL, NULL, ids1, sc1, n1));
    EXPECT_STR_CONTAINS(rv_errmsg(), "queries[2]");
    EXPECT_STATUS(RV_E_INTERRUPTED,
                  rv_bm25_search_batch(ix, NQ, (const char *const *)qs, ql, K, 0, NULL, 1,
                                       stop_after_3, NULL, ids1, sc1, n1));
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_bm25_search_batch(ix, 2, (const char *const *)qs, ql, 0, 0,
                                                         NULL, 1, NULL, NULL, ids1, sc1, n1));
    ASSERT_OK(rv_bm25_search_batch(ix, 0, NULL, NULL, K, 0, NULL, 1, NULL, NULL, NULL, NULL, NULL));
    for (int i = 0; i < NQ; i++) free(qs[i]);
    rv_bm25_free(ix);
    corpus_free(&c);
}

static void test_explain(void) {
    corpus c;
    corpus_make(&c, 500, 41, 25);
    rv_bm25_params p;
    rv_bm25_params_init(&p);
    p.variant = RV_BM25_PLUS;
    p.delta = 1.0;
    rv_bm25 *ix = build(&c, &p, 2);
    ASSERT_TRUE(ix != NULL);
    const char *q = "apple apple banana zebra cherry";
    int64_t ids[10];
    float sc[10];
    size_t nf;
    ASSERT_OK(rv_bm25_search(ix, q, strlen(q), 10, 0, NULL, ids, sc, &nf, NULL));
    ASSERT_TRUE(nf > 0);
    for (size_t i = 0; i < nf; i++) {
        rv_bm25_explain_row rows[8];
        size_t nr;
        float total;
        uint32_t dl;
        ASSERT_OK(rv_bm25_explain(ix, q, strlen(q), ids[i], rows, 8, &nr, &total, &dl));
        EXPECT_EQ(nr, 3); /* zebra is unknown */
        EXPECT_TRUE(total == sc[i]);
        double s = 0;
        for (size_t j = 0; j < nr; j++) {
            if (j) EXPECT_TRUE(rows[j - 1].term_id < rows[j].term_id);
            s += rows[j].contribution;
            EXPECT_NEAR(rows[j].contribution, rows[j].qtf * (double)rows[j].weight, 0);
            if (!rows[j].tf) EXPECT_TRUE(rows[j].weight == 0);
        }
        EXPECT_TRUE((float)s == sc[i]);
        const char *apple;
        size_t al;
        for (size_t j = 0; j < nr; j++) {
            ASSERT_OK(rv_bm25_term(ix, rows[j].term_id, &apple, &al));
            if (al == 5 && memcmp(apple, "apple", 5) == 0) EXPECT_EQ(rows[j].qtf, 2);
        }
    }
    size_t nr;
    EXPECT_STATUS(RV_E_RANGE, rv_bm25_explain(ix, q, strlen(q), 500, NULL, 0, &nr, NULL, NULL));
    EXPECT_STATUS(RV_E_SHAPE, rv_bm25_explain(ix, q, strlen(q), 0, NULL, 0, &nr, NULL, NULL));
    EXPECT_EQ(nr, 3);
    int64_t del = ids[0];
    ASSERT_OK(rv_bm25_delete(ix, &del, 1, NULL));
    EXPECT_STATUS(RV_E_STATE, rv_bm25_explain(ix, q, strlen(q), del, NULL, 0, &nr, NULL, NULL));
    rv_bm25_free(ix);
    corpus_free(&c);
}

/* Deletes take documents out of the results and the statistics at once:
** scores equal those of an index of the live documents only, before and
** after compaction (which only drops postings and renumbers slots). */
static void test_delete_compact(void) {
    corpus c;
    corpus_make(&c, 800, 51, 30);
    rv_bm25 *ix = build(&c, NULL, 4);
    ASSERT_TRUE(ix != NULL);
    rv_bm25_info before, after;
    ASSERT_OK(rv_bm25_get_info(ix, &before));
    int64_t del[300];
    size_t nd = 0;
    for (int64_t d = 0; d < 800; d += 3) del[nd++] = d;
    size_t got;
    ASSERT_OK(rv_bm25_delete(ix, del, nd, &got));
    EXPECT_EQ(got, nd);
    /* ids that are not live, or repeated: nothing deleted */
    EXPECT_STATUS(RV_E_RANGE, rv_bm25_delete(ix, del, 5, &got));
    EXPECT_STR_CONTAINS(rv_errmsg(), "ids[0] = 0 is not in the index");
    int64_t out_of_range[2] = {1, 800};
    EXPECT_STATUS(RV_E_RANGE, rv_bm25_delete(ix, out_of_range, 2, &got));
    EXPECT_STR_CONTAINS(rv_errmsg(), "800");
    int64_t twice[2] = {1, 1};
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_bm25_delete(ix, twice, 2, &got));
    EXPECT_STR_CONTAINS(rv_errmsg(), "more than once");
    EXPECT_TRUE(rv_bm25_contains(ix, 1));
    EXPECT_TRUE(!rv_bm25_contains(ix, 0));
    int st;
    ASSERT_OK(rv_bm25_doc(ix, 1, NULL, &st));
    EXPECT_EQ(st, RV_BM25_DOC_LIVE);
    ASSERT_OK(rv_bm25_doc(ix, 3, NULL, &st));
    EXPECT_EQ(st, RV_BM25_DOC_TOMBSTONED);
    ASSERT_OK(rv_bm25_get_info(ix, &after));
    EXPECT_EQ(after.n_live, 800 - nd);
    EXPECT_EQ(after.n_tombstoned, nd);
    EXPECT_EQ(after.n_stats_docs, 800 - nd);
    EXPECT_EQ(after.n_docs, 800);
    /* the reference of the live documents only */
    reference R;
    ref_make(&R, &c);
    uint8_t *live = malloc(800);
    for (uint32_t d = 0; d < 800; d++) live[d] = d % 3 != 0;
    R.counted = live;
    double tot = 0;
    for (uint32_t d = 0; d < 800; d++) tot += live[d] ? R.dl[d] : 0;
    EXPECT_NEAR(after.avgdl, tot / (800 - nd), 1e-12);
    rv_bm25_params p;
    rv_bm25_params_init(&p);
    const char *q = "apple cherry golf";
    size_t qv[3] = {0, 2, 6};
    int64_t ids[800], ids2[800];
    float sc[800], sc2[800];
    size_t nf, nf2;
    size_t matching = 0;
    for (uint32_t d = 0; d < 800; d++)
        if (live[d] && (R.tf[d * NV + 0] || R.tf[d * NV + 2] || R.tf[d * NV + 6])) matching++;
    ASSERT_OK(rv_bm25_search(ix, q, strlen(q), 800, 0, NULL, ids, sc, &nf, NULL));
    EXPECT_EQ(nf, matching);
    for (size_t i = 0; i < nf; i++) {
        EXPECT_TRUE(ids[i] % 3 != 0);
        EXPECT_NEAR(sc[i], ref_score(&R, &p, qv, 3, (size_t)ids[i]), 1e-5);
    }
    ASSERT_OK(rv_bm25_compact(ix));
    ASSERT_OK(rv_bm25_get_info(ix, &after));
    EXPECT_EQ(after.n_segments, 1);
    EXPECT_EQ(after.n_tombstoned, 0);
    EXPECT_EQ(after.n_stats_docs, 800 - nd);
    EXPECT_EQ(after.n_docs, 800 - nd);
    EXPECT_STATUS(RV_E_RANGE, rv_bm25_doc(ix, 0, NULL, &st)); /* forgotten */
    /* compaction changes no score and no id */
    ASSERT_OK(rv_bm25_search(ix, q, strlen(q), 800, 0, NULL, ids2, sc2, &nf2, NULL));
    ASSERT_EQ(nf2, nf);
    for (size_t i = 0; i < nf; i++) {
        EXPECT_EQ(ids2[i], ids[i]);
        EXPECT_TRUE(sc2[i] == sc[i]);
    }
    size_t n_ids = 0;
    int64_t *all = malloc(800 * sizeof *all);
    ASSERT_OK(rv_bm25_ids(ix, all, 800, &n_ids));
    EXPECT_EQ(n_ids, 800 - nd);
    EXPECT_EQ(all[0], 1);
    EXPECT_EQ(all[1], 2);
    EXPECT_STATUS(RV_E_SHAPE, rv_bm25_ids(ix, all, 3, &n_ids));
    free(all);
    /* adding after compaction continues the ids; a deleted id comes back */
    int64_t first;
    const char *t = "apple";
    size_t tl = 5;
    ASSERT_OK(rv_bm25_add(ix, 1, &t, &tl, NULL, NULL, NULL, &first));
    EXPECT_EQ(first, 800);
    int64_t again = 0;
    ASSERT_OK(rv_bm25_add(ix, 1, &t, &tl, &again, NULL, NULL, NULL));
    EXPECT_TRUE(rv_bm25_contains(ix, 0));
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_bm25_add(ix, 1, &t, &tl, &again, NULL, NULL, NULL));
    EXPECT_STR_CONTAINS(rv_errmsg(), "already in the index");
    ASSERT_OK(rv_bm25_compact(ix));
    EXPECT_TRUE(rv_bm25_contains(ix, 0) && rv_bm25_contains(ix, 800));
    free(live);
    ref_free(&R);
    rv_bm25_free(ix);
    corpus_free(&c);
}

static void test_add_errors(void) {
    rv_bm25 *ix = NULL;
    ASSERT_OK(rv_bm25_create(NULL, NULL, &ix));
    const char *docs[3] = {"good text", "more good words", "bad \xC3"};
    size_t lens[3] = {9, 15, 5};
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_bm25_add(ix, 3, docs, lens, NULL, NULL, NULL, NULL));
    EXPECT_STR_CONTAINS(rv_errmsg(), "document at index 2 of the");
    EXPECT_STR_CONTAINS(rv_errmsg(), "byte offset 4");
    rv_bm25_info info;
    ASSERT_OK(rv_bm25_get_info(ix, &info));
    EXPECT_EQ(info.n_docs, 0);
    EXPECT_EQ(info.n_terms, 0); /* the new terms were rolled back */
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_bm25_add(ix, 1, NULL, lens, NULL, NULL, NULL, NULL));
    const char *nul[1] = {NULL};
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_bm25_add(ix, 1, nul, lens, NULL, NULL, NULL, NULL));
    size_t zero = 0;
    ASSERT_OK(rv_bm25_add(ix, 1, nul, &zero, NULL, NULL, NULL, NULL)); /* NULL with length 0 */
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_bm25_add(NULL, 1, docs, lens, NULL, NULL, NULL, NULL));
    /* stopword-only and empty documents: ids, length 0, never found */
    const char *sw[2] = {"the of and", ""};
    size_t swl[2] = {10, 0};
    int64_t first[2];
    ASSERT_OK(rv_bm25_add(ix, 2, sw, swl, NULL, NULL, NULL, first));
    EXPECT_EQ(first[0], 1);
    uint32_t dl = 9;
    ASSERT_OK(rv_bm25_doc(ix, 1, &dl, NULL));
    EXPECT_EQ(dl, 0);
    int64_t ids[4];
    float sc[4];
    size_t nf;
    ASSERT_OK(rv_bm25_search(ix, "the of", 6, 4, 0, NULL, ids, sc, &nf, NULL));
    EXPECT_EQ(nf, 0);
    rv_bm25_free(ix);
}

static void test_large_tf(void) {
    /* tf above 254 goes through the overflow table, in memory and on disk */
    char *t = malloc(300 * 5 + 10);
    size_t o = 0;
    for (int i = 0; i < 300; i++) {
        memcpy(t + o, "word ", 5);
        o += 5;
    }
    memcpy(t + o, "zebra", 5);
    o += 5;
    const char *docs[2] = {t, "word"};
    size_t lens[2] = {o, 4};
    rv_bm25 *ix = NULL;
    ASSERT_OK(rv_bm25_create(NULL, NULL, &ix));
    ASSERT_OK(rv_bm25_add(ix, 2, docs, lens, NULL, NULL, NULL, NULL));
    for (int round = 0; round < 2; round++) {
        rv_bm25_explain_row row;
        size_t nr;
        uint32_t dl;
        ASSERT_OK(rv_bm25_explain(ix, "word", 4, 0, &row, 1, &nr, NULL, &dl));
        EXPECT_EQ(row.tf, 300);
        EXPECT_EQ(dl, 301);
        size_t need;
        rv_bm25_save_buffer(ix, NULL, 0, &need);
        void *buf = malloc(need);
        ASSERT_OK(rv_bm25_save_buffer(ix, buf, need, &need));
        rv_bm25 *ix2 = NULL;
        ASSERT_OK(rv_bm25_load_buffer(buf, need, &ix2));
        free(buf);
        rv_bm25_free(ix);
        ix = ix2;
    }
    rv_bm25_free(ix);
    free(t);
}

/* ------------------------------------------------------------- save/load */

static int same_results(rv_bm25 *a, rv_bm25 *b) {
    const char *qs[] = {"apple",         "banana cherry", "delta echo foxtrot golf",
                        "cat dog mouse", "zulu yankee",   "nothing"};
    for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
        int64_t ia[20], ib[20];
        float sa[20], sb[20];
        size_t na, nb;
        if (rv_bm25_search(a, qs[i], strlen(qs[i]), 20, 0, NULL, ia, sa, &na, NULL) != RV_OK)
            return 0;
        if (rv_bm25_search(b, qs[i], strlen(qs[i]), 20, 0, NULL, ib, sb, &nb, NULL) != RV_OK)
            return 0;
        if (na != nb) return 0;
        for (size_t j = 0; j < na; j++)
            if (ia[j] != ib[j] || sa[j] != sb[j]) return 0;
    }
    return 1;
}

static void test_save_load(void) {
    corpus c;
    corpus_make(&c, 300, 61, 20);
    rv_bm25_params p;
    rv_bm25_params_init(&p);
    p.variant = RV_BM25_L;
    p.delta = 0.5;
    p.k1 = 0.9;
    p.b = 0.4;
    rv_bm25 *ix = build(&c, &p, 3);
    ASSERT_TRUE(ix != NULL);
    int64_t del[3] = {4, 5, 6};
    ASSERT_OK(rv_bm25_delete(ix, del, 3, NULL));
    char path[] = "/tmp/rowvoi_test_bm25_XXXXXX";
    int fd = mkstemp(path);
    ASSERT_TRUE(fd >= 0);
    close(fd);
    ASSERT_OK(rv_bm25_save(ix, path));
    rv_bm25 *back = NULL;
    ASSERT_OK(rv_bm25_load(path, &back));
    EXPECT_TRUE(same_results(ix, back));
    rv_bm25_params bp;
    rv_analyzer_options ba;
    ASSERT_OK(rv_bm25_get_params(back, &bp));
    ASSERT_OK(rv_bm25_get_analyzer(back, &ba));
    EXPECT_EQ(bp.variant, RV_BM25_L);
    EXPECT_NEAR(bp.k1, 0.9, 0);
    EXPECT_NEAR(bp.delta, 0.5, 0);
    EXPECT_EQ(ba.stem, 0);
    rv_bm25_info i1, i2;
    rv_bm25_get_info(ix, &i1);
    rv_bm25_get_info(back, &i2);
    EXPECT_EQ(i1.n_tombstoned, i2.n_tombstoned);
    EXPECT_EQ(i1.n_postings, i2.n_postings);
    EXPECT_NEAR(i1.avgdl, i2.avgdl, 0);
    /* a loaded index keeps working: add, delete, compact, save again */
    const char *t = "apple banana";
    size_t tl = 12;
    ASSERT_OK(rv_bm25_add(back, 1, &t, &tl, NULL, NULL, NULL, NULL));
    ASSERT_OK(rv_bm25_add(ix, 1, &t, &tl, NULL, NULL, NULL, NULL));
    EXPECT_TRUE(same_results(ix, back));
    ASSERT_OK(rv_bm25_compact(back));
    ASSERT_OK(rv_bm25_compact(ix));
    EXPECT_TRUE(same_results(ix, back));
    ASSERT_OK(rv_bm25_save(back, path));
    rv_bm25_free(back);
    ASSERT_OK(rv_bm25_load(path, &back));
    EXPECT_TRUE(same_results(ix, back));
    rv_bm25_free(back);
    remove(path);
    EXPECT_STATUS(RV_E_IO, rv_bm25_load(path, &back));
    EXPECT_STR_CONTAINS(rv_errmsg(), path);
    EXPECT_STATUS(RV_E_IO, rv_bm25_save(ix, "/nonexistent-dir/x.rvx"));
    EXPECT_STATUS(RV_E_IO, rv_bm25_load("/tmp", &back));
    rv_bm25_free(ix);
    corpus_free(&c);
}

/* A bitwise CRC-32C, independent of the library's table-driven one. */
static uint32_t crc32c_ref(const unsigned char *p, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
    }
    return ~c;
}

static void put32(unsigned char *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static void test_corruption(void) {
    corpus c;
    corpus_make(&c, 25, 71, 8);
    rv_bm25 *ix = build(&c, NULL, 2);
    ASSERT_TRUE(ix != NULL);
    int64_t del = 3;
    ASSERT_OK(rv_bm25_delete(ix, &del, 1, NULL));
    size_t n;
    EXPECT_STATUS(RV_E_SHAPE, rv_bm25_save_buffer(ix, NULL, 0, &n));
    unsigned char *buf = malloc(n), *bad = malloc(n);
    ASSERT_OK(rv_bm25_save_buffer(ix, buf, n, &n));
    ASSERT_TRUE(memcmp(buf, "RVBM25IX", 8) == 0);
    /* the library's checksum matches an independent CRC-32C */
    uint32_t stored = (uint32_t)buf[n - 8] | (uint32_t)buf[n - 7] << 8 |
                      (uint32_t)buf[n - 6] << 16 | (uint32_t)buf[n - 5] << 24;
    EXPECT_EQ(stored, crc32c_ref(buf, n - 8));
    rv_bm25 *out = NULL;
    ASSERT_OK(rv_bm25_load_buffer(buf, n, &out));
    EXPECT_TRUE(same_results(ix, out));
    rv_bm25_free(out);
    /* truncation at every length */
    for (size_t len = 0; len < n; len++) {
        rv_status st = rv_bm25_load_buffer(buf, len, &out);
        EXPECT_EQ(st, RV_E_CORRUPT);
        EXPECT_TRUE(out == NULL);
    }
    /* every byte altered (three ways each) */
    size_t version_hits = 0;
    for (size_t i = 0; i < n; i++) {
        static const unsigned char flips[3] = {0x01, 0x80, 0xFF};
        for (int f = 0; f < 3; f++) {
            memcpy(bad, buf, n);
            bad[i] ^= flips[f];
            rv_status st = rv_bm25_load_buffer(bad, n, &out);
            EXPECT_TRUE(st == RV_E_CORRUPT || st == RV_E_VERSION);
            version_hits += st == RV_E_VERSION;
            EXPECT_TRUE(out == NULL);
        }
    }
    EXPECT_TRUE(version_hits > 0); /* the version fields */
    /* another format version and another analyzer version */
    memcpy(bad, buf, n);
    put32(bad + 8, 3);
    EXPECT_STATUS(RV_E_VERSION, rv_bm25_load_buffer(bad, n, &out));
    EXPECT_STR_CONTAINS(rv_errmsg(), "version 3");
    memcpy(bad, buf, n); /* format 1 predates caller ids: rebuild */
    put32(bad + 8, 1);
    EXPECT_STATUS(RV_E_VERSION, rv_bm25_load_buffer(bad, n, &out));
    EXPECT_STR_CONTAINS(rv_errmsg(), "rebuild");
    memcpy(bad, buf, n);
    put32(bad + 24, 99);
    put32(bad + n - 8, crc32c_ref(bad, n - 8));
    EXPECT_STATUS(RV_E_VERSION, rv_bm25_load_buffer(bad, n, &out));
    EXPECT_STR_CONTAINS(rv_errmsg(), "analyzer version 99");
    /* altered bytes with a recomputed checksum: the structural checks must
    ** catch whatever would be unsafe; a file that passes must search safely
    ** (run under the sanitizers, this is the memory-safety test) */
    rv_rng r;
    rv_rng_seed(&r, 9);
    size_t accepted = 0;
    for (size_t i = 32; i < n - 8; i++) {
        for (int f = 0; f < 4; f++) {
            memcpy(bad, buf, n);
            bad[i] = f == 0   ? 0
                     : f == 1 ? 0xFF
                     : f == 2 ? (unsigned char)(bad[i] + 1)
                              : (unsigned char)rv_rng_below(&r, 256);
            put32(bad + n - 8, crc32c_ref(bad, n - 8));
            rv_status st = rv_bm25_load_buffer(bad, n, &out);
            EXPECT_TRUE(st == RV_OK || st == RV_E_CORRUPT);
            if (st == RV_OK) {
                accepted++;
                int64_t ids[30];
                float sc[30];
                size_t nf;
                EXPECT_OK(rv_bm25_search(out, "apple banana cherry", 19, 30, 0, NULL, ids, sc, &nf,
                                         NULL));
                EXPECT_OK(rv_bm25_search(out, "apple banana cherry", 19, 30, RV_BM25_EXHAUSTIVE,
                                         NULL, ids, sc, &nf, NULL));
                EXPECT_OK(rv_bm25_compact(out));
                rv_bm25_free(out);
            }
        }
    }
    (void)accepted;
    EXPECT_STATUS(RV_E_CORRUPT, rv_bm25_load_buffer("garbage!", 8, &out));
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_bm25_load_buffer(NULL, 8, &out));
    free(buf);
    free(bad);
    rv_bm25_free(ix);
    corpus_free(&c);
}

/* ------------------------------------------------------ ids and filters */

/* Caller ids: any order, ties by the lower id, errors as the flat index's. */
static void test_caller_ids(void) {
    rv_bm25 *ix = NULL;
    ASSERT_OK(rv_bm25_create(NULL, NULL, &ix));
    const char *docs[4] = {"quick foxes", "quick foxes", "quick foxes", "zebra"};
    size_t lens[4] = {11, 11, 11, 5};
    int64_t ids[4] = {50, 7, 30, RV_MAX_ID}, got[4];
    ASSERT_OK(rv_bm25_add(ix, 4, docs, lens, ids, NULL, NULL, got));
    for (int i = 0; i < 4; i++) EXPECT_EQ(got[i], ids[i]);
    int64_t out[4];
    float sc[4];
    size_t nf;
    for (unsigned fl = 0; fl < 2; fl++) {
        ASSERT_OK(rv_bm25_search(ix, "fox", 3, 4, fl, NULL, out, sc, &nf, NULL));
        ASSERT_EQ(nf, 3);
        EXPECT_EQ(out[0], 7); /* equal scores: ascending caller id, not slot */
        EXPECT_EQ(out[1], 30);
        EXPECT_EQ(out[2], 50);
    }
    uint32_t dl;
    int st;
    ASSERT_OK(rv_bm25_doc(ix, RV_MAX_ID, &dl, &st));
    EXPECT_EQ(dl, 1);
    EXPECT_STATUS(RV_E_RANGE, rv_bm25_doc(ix, 8, &dl, &st));
    EXPECT_STATUS(RV_E_RANGE, rv_bm25_doc(ix, -1, &dl, &st));
    rv_bm25_explain_row row;
    size_t nr;
    float score;
    ASSERT_OK(rv_bm25_explain(ix, "fox", 3, 30, &row, 1, &nr, &score, NULL));
    EXPECT_TRUE(score == sc[1]);
    EXPECT_STATUS(RV_E_RANGE, rv_bm25_explain(ix, "fox", 3, 31, &row, 1, &nr, &score, NULL));
    /* bad ids: nothing added */
    int64_t neg = -1, dup[2] = {1, 1}, live = 7, big = RV_MAX_ID;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_bm25_add(ix, 1, docs, lens, &neg, NULL, NULL, NULL));
    EXPECT_STR_CONTAINS(rv_errmsg(), "ids[0] = -1");
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_bm25_add(ix, 2, docs, lens, dup, NULL, NULL, NULL));
    EXPECT_STR_CONTAINS(rv_errmsg(), "more than once");
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_bm25_add(ix, 1, docs, lens, &live, NULL, NULL, NULL));
    EXPECT_STR_CONTAINS(rv_errmsg(), "already in the index");
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_bm25_add(ix, 1, docs, lens, &big, NULL, NULL, NULL));
    /* numbering would pass RV_MAX_ID */
    EXPECT_STATUS(RV_E_RANGE, rv_bm25_add(ix, 1, docs, lens, NULL, NULL, NULL, NULL));
    EXPECT_STR_CONTAINS(rv_errmsg(), "passes the largest id");
    rv_bm25_info info;
    ASSERT_OK(rv_bm25_get_info(ix, &info));
    EXPECT_EQ(info.n_live, 4);
    EXPECT_EQ(info.n_terms, 3);
    rv_bm25_free(ix);
    /* without ids: one past the largest id ever added, even once deleted */
    ASSERT_OK(rv_bm25_create(NULL, NULL, &ix));
    int64_t some[2] = {10, 4};
    ASSERT_OK(rv_bm25_add(ix, 2, docs, lens, some, NULL, NULL, NULL));
    ASSERT_OK(rv_bm25_delete(ix, some, 1, NULL));
    ASSERT_OK(rv_bm25_add(ix, 2, docs, lens, NULL, NULL, NULL, got));
    EXPECT_EQ(got[0], 11);
    EXPECT_EQ(got[1], 12);
    ASSERT_OK(rv_bm25_get_info(ix, &info));
    EXPECT_EQ(info.next_id, 13);
    rv_bm25_free(ix);
}

/* Brute force: the exhaustive unfiltered ranking of every match,
** restricted to the allowed ids, cut at k. */
static size_t brute_filtered(rv_bm25 *ix, const char *q, size_t ql, const rv_idset *set, size_t k,
                             int64_t *ids, float *sc, size_t cap) {
    static int64_t all[20000];
    static float all_sc[20000];
    size_t nall = 0, m = 0;
    if (rv_bm25_search(ix, q, ql, 20000, RV_BM25_EXHAUSTIVE, NULL, all, all_sc, &nall, NULL))
        return SIZE_MAX;
    for (size_t i = 0; i < nall && m < k && m < cap; i++)
        if (rv_idset_contains(set, all[i])) {
            ids[m] = all[i];
            sc[m++] = all_sc[i];
        }
    return m;
}

/* Filtered search equals brute force, through the direct kernel (small
** filters), the pruned kernel (large ones) and the exhaustive one; batches
** equal single searches; a filter costs less as it shrinks. */
static void test_filters(void) {
    corpus c;
    corpus_make_zipf(&c, 20000, 91, 3000, 30);
    rv_bm25 *ix = build(&c, NULL, 3);
    ASSERT_TRUE(ix != NULL);
    int64_t del[40];
    for (int i = 0; i < 40; i++) del[i] = i * 499;
    ASSERT_OK(rv_bm25_delete(ix, del, 40, NULL)); /* filters naming deleted ids */
    double *cdf = zipf_cdf(3000);
    rv_rng rng;
    rv_rng_seed(&rng, 17);
    static const size_t sizes[] = {1, 5, 50, 300, 3000, 12000, 20000};
    uint64_t scored[7] = {0};
    int direct_seen = 0, kernel_seen = 0;
    int64_t *pick = malloc(25000 * sizeof *pick);
    for (size_t si = 0; si < 7; si++) {
        for (int rep = 0; rep < 12; rep++) {
            size_t m = 0;
            for (size_t i = 0; i < sizes[si]; i++)
                pick[m++] = (int64_t)rv_rng_below(&rng, 20000 + 200); /* some not in the index */
            rv_idset *set = NULL;
            ASSERT_OK(rv_idset_create(pick, m, &set));
            char qt[160];
            size_t ql = 0, nq = 1 + (size_t)rv_rng_below(&rng, 4);
            for (size_t j = 0; j < nq; j++)
                ql += (size_t)sprintf(qt + ql, "t%u ", zipf_word(&rng, cdf, 3000));
            size_t k = rep % 3 == 0 ? 1 : rep % 3 == 1 ? 10 : 50;
            int64_t ids[50], ide[50], idb[50];
            float sc[50], sce[50], scb[50];
            size_t nf, nfe;
            rv_bm25_search_info info;
            ASSERT_OK(rv_bm25_search(ix, qt, ql, k, 0, set, ids, sc, &nf, &info));
            ASSERT_OK(rv_bm25_search(ix, qt, ql, k, RV_BM25_EXHAUSTIVE, set, ide, sce, &nfe, NULL));
            size_t nb = brute_filtered(ix, qt, ql, set, k, idb, scb, 50);
            ASSERT_EQ(nf, nb);
            ASSERT_EQ(nfe, nb);
            for (size_t i = 0; i < nf; i++) {
                EXPECT_EQ(ids[i], idb[i]);
                EXPECT_TRUE(sc[i] == scb[i]);
                EXPECT_EQ(ide[i], idb[i]);
                EXPECT_TRUE(sce[i] == scb[i]);
            }
            direct_seen += info.filter_direct;
            kernel_seen += !info.filter_direct;
            if (k == 10) scored[si] += info.postings_scored;
            rv_idset_free(set);
        }
    }
    /* the direct kernel for the smallest filters, the pruned one for the largest */
    EXPECT_TRUE(direct_seen > 0 && kernel_seen > 0);
    fprintf(stderr, "  postings scored (k=10) by filter size:");
    for (size_t si = 0; si < 7; si++)
        fprintf(stderr, " %zu:%llu", sizes[si], (unsigned long long)scored[si]);
    fprintf(stderr, "\n");
    EXPECT_TRUE(scored[0] < scored[4]); /* smaller filter, less work */
    EXPECT_TRUE(scored[1] < scored[4]);
    /* an empty filter finds nothing; batches match single searches */
    rv_idset *empty = NULL, *half = NULL;
    ASSERT_OK(rv_idset_create(NULL, 0, &empty));
    int64_t ids[10];
    float sc[10];
    size_t nf;
    ASSERT_OK(rv_bm25_search(ix, "t1 t2", 5, 10, 0, empty, ids, sc, &nf, NULL));
    EXPECT_EQ(nf, 0);
    for (int i = 0; i < 10000; i++) pick[i] = 2 * i;
    ASSERT_OK(rv_idset_create(pick, 10000, &half));
    enum { NQ = 40, K = 8 };
    char *qs[NQ];
    size_t qls[NQ];
    for (int i = 0; i < NQ; i++) {
        qs[i] = malloc(64);
        qls[i] = (size_t)sprintf(qs[i], "t%u t%u", zipf_word(&rng, cdf, 3000),
                                 zipf_word(&rng, cdf, 3000));
    }
    static int64_t bid[NQ * K];
    static float bsc[NQ * K];
    static uint32_t bn[NQ];
    for (unsigned th = 1; th <= 3; th += 2) {
        ASSERT_OK(rv_bm25_search_batch(ix, NQ, (const char *const *)qs, qls, K, 0, half, th, NULL,
                                       NULL, bid, bsc, bn));
        for (int i = 0; i < NQ; i++) {
            int64_t one[K];
            float osc[K];
            ASSERT_OK(rv_bm25_search(ix, qs[i], qls[i], K, 0, half, one, osc, &nf, NULL));
            ASSERT_EQ(bn[i], nf);
            for (size_t j = 0; j < nf; j++) {
                EXPECT_EQ(bid[i * K + j], one[j]);
                EXPECT_TRUE(bsc[i * K + j] == osc[j]);
                EXPECT_EQ(one[j] % 2, 0);
            }
        }
    }
    for (int i = 0; i < NQ; i++) free(qs[i]);
    rv_idset_free(empty);
    rv_idset_free(half);
    free(pick);
    free(cdf);
    rv_bm25_free(ix);
    corpus_free(&c);
}

/* An index changed incrementally -- adds in batches and one at a time,
** deletes, deleted ids filed again with new text, merges -- ranks exactly
** as a fresh build of its live documents: same ids, bit-identical scores. */
static void test_incremental_equals_fresh(void) {
    corpus c;
    corpus_make_zipf(&c, 6000, 101, 2000, 25);
    rv_analyzer_options o;
    rv_analyzer_options_init(&o);
    o.stem = 0;
    rv_bm25 *inc = NULL, *fresh = NULL;
    ASSERT_OK(rv_bm25_create(&o, NULL, &inc));
    /* ids: doc i is filed under 3 * i + 1 */
    int64_t *ids = malloc(c.n * sizeof *ids);
    const char **text = malloc(c.n * sizeof *text);
    size_t *len = malloc(c.n * sizeof *len);
    for (size_t i = 0; i < c.n; i++) ids[i] = 3 * (int64_t)i + 1;
    ASSERT_OK(rv_bm25_add(inc, 4000, (const char *const *)c.text, c.len, ids, NULL, NULL, NULL));
    for (size_t i = 4000; i < 4500; i++) /* single adds: segments merge */
        ASSERT_OK(rv_bm25_add(inc, 1, (const char *const *)c.text + i, c.len + i, ids + i, NULL,
                              NULL, NULL));
    rv_bm25_info a, b;
    ASSERT_OK(rv_bm25_get_info(inc, &a));
    EXPECT_TRUE(a.n_segments > 1 && a.n_segments < 20);
    /* delete 300 documents, then file 200 of those ids again with the text
    ** of documents 4500 .. 4699; add the rest as new ids */
    int64_t gone[300];
    for (int i = 0; i < 300; i++) gone[i] = ids[i * 13];
    ASSERT_OK(rv_bm25_delete(inc, gone, 300, NULL));
    ASSERT_OK(rv_bm25_add(inc, 200, (const char *const *)c.text + 4500, c.len + 4500, gone, NULL,
                          NULL, NULL));
    ASSERT_OK(rv_bm25_add(inc, c.n - 4700, (const char *const *)c.text + 4700, c.len + 4700,
                          ids + 4700, NULL, NULL, NULL));
    /* the live set: every doc but the 300 deleted, plus the 200 refiled */
    uint8_t *alive = calloc(c.n, 1);
    for (size_t i = 0; i < c.n; i++) alive[i] = i < 4500 || i >= 4700;
    for (int i = 0; i < 300; i++) alive[(size_t)i * 13] = 0;
    size_t m = 0;
    for (size_t i = c.n; i-- > 0;) { /* fresh build in reverse order */
        if (!alive[i]) continue;
        text[m] = c.text[i];
        len[m] = c.len[i];
        ids[m++] = 3 * (int64_t)i + 1;
    }
    for (int i = 0; i < 200; i++) {
        text[m] = c.text[4500 + i];
        len[m] = c.len[4500 + i];
        ids[m++] = gone[i];
    }
    ASSERT_OK(rv_bm25_create(&o, NULL, &fresh));
    ASSERT_OK(rv_bm25_add(fresh, m, text, len, ids, NULL, NULL, NULL));
    ASSERT_OK(rv_bm25_get_info(inc, &a));
    ASSERT_OK(rv_bm25_get_info(fresh, &b));
    EXPECT_EQ(a.n_live, b.n_live);
    EXPECT_EQ(a.total_len, b.total_len);
    double *cdf = zipf_cdf(2000);
    rv_rng rng;
    rv_rng_seed(&rng, 5);
    for (int round = 0; round < 3; round++) {
        for (int qi = 0; qi < 150; qi++) {
            char qt[160];
            size_t ql = 0, nq = 1 + (size_t)rv_rng_below(&rng, 5);
            for (size_t j = 0; j < nq; j++)
                ql += (size_t)sprintf(qt + ql, "t%u ", zipf_word(&rng, cdf, 2000));
            int64_t x[20], y[20];
            float xs[20], ys[20];
            size_t nx, ny;
            unsigned fl = qi % 4 == 0 ? RV_BM25_EXHAUSTIVE : 0;
            ASSERT_OK(rv_bm25_search(inc, qt, ql, 20, fl, NULL, x, xs, &nx, NULL));
            ASSERT_OK(rv_bm25_search(fresh, qt, ql, 20, fl, NULL, y, ys, &ny, NULL));
            ASSERT_EQ(nx, ny);
            for (size_t i = 0; i < nx; i++) {
                EXPECT_EQ(x[i], y[i]);
                EXPECT_TRUE(xs[i] == ys[i]);
            }
        }
        if (round == 0) { /* through a file: forward lists rebuilt on demand */
            size_t need;
            rv_bm25_save_buffer(inc, NULL, 0, &need);
            void *buf = malloc(need);
            ASSERT_OK(rv_bm25_save_buffer(inc, buf, need, &need));
            rv_bm25 *back = NULL;
            ASSERT_OK(rv_bm25_load_buffer(buf, need, &back));
            free(buf);
            rv_bm25_free(inc);
            inc = back;
            int64_t again = gone[0];
            ASSERT_OK(rv_bm25_delete(inc, &again, 1, NULL));
            ASSERT_OK(rv_bm25_delete(fresh, &again, 1, NULL));
        } else if (round == 1) {
            ASSERT_OK(rv_bm25_compact(inc));
        }
    }
    free(cdf);
    free(alive);
    free(ids);
    free(text);
    free(len);
    rv_bm25_free(inc);
    rv_bm25_free(fresh);
    corpus_free(&c);
}

/* ------------------------------------------------------ allocation sweep */

typedef enum {
    OP_CREATE,
    OP_ADD,
    OP_ADD_IDS,
    OP_DELETE,
    OP_SEARCH,
    OP_SEARCH_SMALL,
    OP_SEARCH_LARGE,
    OP_BATCH,
    OP_BATCH_FILTER,
    OP_EXPLAIN,
    OP_SAVE,
    OP_LOAD,
    OP_COMPACT,
    OP_SEARCH_LONG,
    OP_IDSET
} op_kind;

typedef struct {
    corpus c;
    rv_bm25 *base; /* a built index (not touched by failing operations) */
    unsigned char *image;
    size_t image_len;
    rv_idset *small; /* filters: scored directly / through the bitmap */
    rv_idset *large;
} oom_fixture;

/* Run one operation; returns its status.  Mutating operations run on a
** fresh copy loaded from the image (loaded before failure injection). */
static rv_status run_op(oom_fixture *f, op_kind op, rv_bm25 *work, int64_t *out_ids, size_t *nf) {
    int64_t ids[16];
    float sc[16];
    static int64_t bids[4 * 16];
    static uint32_t bn[4];
    static float bsc[4 * 16];
    const char *qs[4] = {"apple banana", "cherry", "cat dog", "zulu apple"};
    size_t ql[4] = {12, 6, 7, 10};
    rv_status st = RV_OK;
    *nf = 0;
    switch (op) {
    case OP_CREATE: {
        rv_bm25 *x = NULL;
        st = rv_bm25_create(NULL, NULL, &x);
        rv_bm25_free(x);
        break;
    }
    case OP_ADD:
        st = rv_bm25_add(work, f->c.n, (const char *const *)f->c.text, f->c.len, NULL, NULL, NULL,
                         NULL);
        break;
    case OP_ADD_IDS: {
        int64_t nid[5] = {1000, 7, 1002, 1003, 1004}; /* 7 was deleted: comes back */
        st = rv_bm25_add(work, 5, (const char *const *)f->c.text, f->c.len, nid, NULL, NULL, NULL);
        break;
    }
    case OP_DELETE: {
        int64_t did[3] = {1, 2, 100};
        st = rv_bm25_delete(work, did, 3, NULL);
        break;
    }
    case OP_SEARCH:
    case OP_SEARCH_SMALL:
    case OP_SEARCH_LARGE: {
        const rv_idset *flt = op == OP_SEARCH ? NULL : op == OP_SEARCH_SMALL ? f->small : f->large;
        rv_bm25_search_info si;
        st = rv_bm25_search(f->base, "apple banana cherry", 19, 16, 0, flt, ids, sc, nf, &si);
        if (st == RV_OK) {
            memcpy(out_ids, ids, *nf * sizeof *ids);
            if (op != OP_SEARCH && si.filter_direct != (op == OP_SEARCH_SMALL)) st = RV_E_INTERNAL;
        }
        break;
    }
    case OP_BATCH_FILTER:
        st =
            rv_bm25_search_batch(f->base, 4, qs, ql, 16, 0, f->large, 1, NULL, NULL, bids, bsc, bn);
        if (st == RV_OK) {
            *nf = bn[0];
            memcpy(out_ids, bids, 16 * sizeof *bids);
        }
        break;
    case OP_IDSET: {
        int64_t many[200];
        for (int i = 0; i < 200; i++) many[i] = (int64_t)(i * 7919) % 1000;
        rv_idset *x = NULL;
        st = rv_idset_create(many, 200, &x);
        *nf = rv_idset_size(x);
        rv_idset_free(x);
        break;
    }
    case OP_SEARCH_LONG: {
        char q[400];
        size_t l = 0;
        for (size_t v = 0; v < NV; v++) l += (size_t)sprintf(q + l, "%s ", vocab[v]);
        st = rv_bm25_search(f->base, q, l, 16, RV_BM25_EXHAUSTIVE, NULL, ids, sc, nf, NULL);
        if (st == RV_OK) memcpy(out_ids, ids, *nf * sizeof *ids);
        break;
    }
    case OP_BATCH:
        st = rv_bm25_search_batch(f->base, 4, qs, ql, 16, 0, NULL, 1, NULL, NULL, bids, bsc, bn);
        if (st == RV_OK) {
            *nf = bn[0];
            memcpy(out_ids, bids, 16 * sizeof *bids);
        }
        break;
    case OP_EXPLAIN: {
        rv_bm25_explain_row rows[4];
        size_t nr;
        st = rv_bm25_explain(f->base, "apple banana", 12, 1, rows, 4, &nr, NULL, NULL);
        *nf = nr;
        break;
    }
    case OP_SAVE: {
        unsigned char *b = malloc(f->image_len);
        size_t n;
        st = rv_bm25_save_buffer(f->base, b, f->image_len, &n);
        if (st == RV_OK && (n != f->image_len || memcmp(b, f->image, n) != 0)) st = RV_E_INTERNAL;
        free(b);
        break;
    }
    case OP_LOAD: {
        rv_bm25 *x = NULL;
        st = rv_bm25_load_buffer(f->image, f->image_len, &x);
        rv_bm25_free(x);
        break;
    }
    case OP_COMPACT:
        st = rv_bm25_compact(work);
        break;
    }
    return st;
}

static void test_alloc_failures(void) {
    oom_fixture f;
    corpus_make(&f.c, 300, 81, 15);
    f.base = build(&f.c, NULL, 3);
    ASSERT_TRUE(f.base != NULL);
    int64_t del[2] = {7, 8};
    ASSERT_OK(rv_bm25_delete(f.base, del, 2, NULL));
    rv_bm25_save_buffer(f.base, NULL, 0, &f.image_len);
    f.image = malloc(f.image_len);
    ASSERT_OK(rv_bm25_save_buffer(f.base, f.image, f.image_len, &f.image_len));
    int64_t one = 5, half[60];
    for (int i = 0; i < 60; i++) half[i] = 2 * i;
    ASSERT_OK(rv_idset_create(&one, 1, &f.small));
    ASSERT_OK(rv_idset_create(half, 60, &f.large));
    const op_kind ops[] = {OP_CREATE, OP_ADD,          OP_ADD_IDS,      OP_DELETE,
                           OP_SEARCH, OP_SEARCH_SMALL, OP_SEARCH_LARGE, OP_SEARCH_LONG,
                           OP_BATCH,  OP_BATCH_FILTER, OP_EXPLAIN,      OP_SAVE,
                           OP_LOAD,   OP_COMPACT,      OP_IDSET};
    const char *names[] = {"create",       "add",          "add_ids",     "delete",  "search",
                           "search_small", "search_large", "search_long", "batch",   "batch_filter",
                           "explain",      "save",         "load",        "compact", "idset"};
    for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++) {
        op_kind op = ops[oi];
        /* the reference outcome without injection */
        rv_bm25 *work = NULL;
        ASSERT_OK(rv_bm25_load_buffer(f.image, f.image_len, &work));
        int64_t want[16], got[16];
        size_t want_n, got_n;
        ASSERT_OK(run_op(&f, op, work, want, &want_n));
        rv_bm25_info want_info;
        rv_bm25_get_info(work, &want_info);
        int64_t want_probe[16];
        float want_probe_sc[16];
        size_t want_probe_n = 0;
        ASSERT_OK(rv_bm25_search(work, "apple banana cherry", 19, 16, 0, NULL, want_probe,
                                 want_probe_sc, &want_probe_n, NULL));
        rv_bm25_free(work);
        int completed = 0;
        for (uint64_t n = 1; n < 10000 && !completed; n++) {
            rv_bm25 *w = NULL;
            ASSERT_OK(rv_bm25_load_buffer(f.image, f.image_len, &w));
            rv_bm25_info before;
            rv_bm25_get_info(w, &before);
            rv_errmsg_clear();
            rv__test_fail_alloc_after(n);
            rv_status st = run_op(&f, op, w, got, &got_n);
            uint64_t used = rv__test_fail_alloc_after(0);
            if (st == RV_OK) {
                completed = used < n;
                EXPECT_EQ(got_n, want_n);
                if (op == OP_SEARCH || op == OP_SEARCH_SMALL || op == OP_SEARCH_LARGE ||
                    op == OP_BATCH || op == OP_BATCH_FILTER || op == OP_SEARCH_LONG)
                    for (size_t i = 0; i < got_n && i < 16; i++) EXPECT_EQ(got[i], want[i]);
                if (op == OP_ADD || op == OP_ADD_IDS || op == OP_DELETE || op == OP_COMPACT) {
                    /* the same index as without injection: sizes, statistics and
                    ** results (an add's segment merge is best effort, so only
                    ** compaction must give the same postings) */
                    rv_bm25_info now;
                    rv_bm25_get_info(w, &now);
                    if (op == OP_COMPACT) EXPECT_EQ(now.n_postings, want_info.n_postings);
                    EXPECT_EQ(now.n_docs, want_info.n_docs);
                    EXPECT_EQ(now.n_live, want_info.n_live);
                    EXPECT_EQ(now.total_len, want_info.total_len);
                    EXPECT_EQ(now.n_terms, want_info.n_terms);
                    int64_t pa[16];
                    float ps[16];
                    size_t pn = 0;
                    EXPECT_OK(rv_bm25_search(w, "apple banana cherry", 19, 16, 0, NULL, pa, ps, &pn,
                                             NULL));
                    EXPECT_EQ(pn, want_probe_n);
                    for (size_t i = 0; i < pn && i < want_probe_n; i++) {
                        EXPECT_EQ(pa[i], want_probe[i]);
                        EXPECT_TRUE(ps[i] == want_probe_sc[i]);
                    }
                }
            } else {
                if (st != RV_E_NOMEM)
                    fprintf(stderr, "  %s: allocation %llu gave %s (%s)\n", names[oi],
                            (unsigned long long)n, rv_status_name(st), rv_errmsg());
                EXPECT_EQ(st, RV_E_NOMEM);
                EXPECT_TRUE(rv_errmsg()[0] != 0);
                /* a failed mutation leaves the index as it was */
                rv_bm25_info now;
                rv_bm25_get_info(w, &now);
                EXPECT_EQ(now.n_docs, before.n_docs);
                EXPECT_EQ(now.n_postings, before.n_postings);
                EXPECT_EQ(now.n_terms, before.n_terms);
                EXPECT_EQ(now.n_tombstoned, before.n_tombstoned);
                EXPECT_EQ(now.n_live, before.n_live);
                EXPECT_EQ(now.total_len, before.total_len);
            }
            rv_bm25_free(w);
        }
        EXPECT_TRUE(completed);
    }
    free(f.image);
    rv_idset_free(f.small);
    rv_idset_free(f.large);
    rv_bm25_free(f.base);
    corpus_free(&f.c);
}

/* The pruned == exhaustive tests again under other limits of the
** term-at-a-time kernel: 0 (the window and document-at-a-time kernels serve
** every search, as on a large index), and a limit between the lengths of
** these queries' lists, so that one search mixes the kernels over its
** segments.  On the default limit the term-at-a-time kernel serves most
** searches of these small indexes. */
static void with_taat_limit(void (*fn)(void), uint64_t n) {
    uint64_t was = rv__test_bm25_taat_postings(n);
    fn();
    rv__test_bm25_taat_postings(was);
}
static void test_variants_vs_reference_pruned(void) {
    with_taat_limit(test_variants_vs_reference, 0);
}
static void test_large_k_pruned(void) {
    with_taat_limit(test_large_k, 0);
}
static void test_large_k_mixed(void) {
    with_taat_limit(test_large_k, 600);
}
static void test_pruning_adversarial_pruned(void) {
    with_taat_limit(test_pruning_adversarial, 0);
}
static void test_pruning_adversarial_mixed(void) {
    with_taat_limit(test_pruning_adversarial, 300);
}

/* The term-at-a-time kernel: on a small index it serves the queries whose
** lists pruning would not thin (scoring every posting) and returns what the
** pruned and exhaustive kernels return; the queries pruning does thin keep
** the pruned kernel.  Queries whose every match scores the same, and
** scores near zero, come out right too. */
static void test_term_at_a_time(void) {
    corpus c;
    corpus_make_zipf(&c, 3000, 41, 400, 30);
    rv_bm25 *ix = build(&c, NULL, 1);
    ASSERT_TRUE(ix != NULL);
    double *cdf = zipf_cdf(400);
    rv_rng rng;
    rv_rng_seed(&rng, 77);
    int taat = 0, pruned = 0;
    for (int qi = 0; qi < 120; qi++) {
        size_t nq = 1 + (size_t)rv_rng_below(&rng, 5);
        char qt[128];
        size_t ql = 0;
        for (size_t j = 0; j < nq; j++)
            ql += (size_t)sprintf(qt + ql, "t%u ", zipf_word(&rng, cdf, 400));
        size_t k = qi % 4 == 0 ? 1 : qi % 4 == 1 ? 10 : qi % 4 == 2 ? 50 : 700;
        int64_t ids[700], idp[700], ide[700];
        float sc[700], scp[700], sce[700];
        size_t nf, nfp, nfe;
        rv_bm25_search_info a, b;
        ASSERT_OK(rv_bm25_search(ix, qt, ql, k, 0, NULL, ids, sc, &nf, &a));
        uint64_t was = rv__test_bm25_taat_postings(0);
        ASSERT_OK(rv_bm25_search(ix, qt, ql, k, 0, NULL, idp, scp, &nfp, &b));
        rv__test_bm25_taat_postings(was);
        ASSERT_OK(rv_bm25_search(ix, qt, ql, k, RV_BM25_EXHAUSTIVE, NULL, ide, sce, &nfe, NULL));
        ASSERT_EQ(nf, nfe);
        ASSERT_EQ(nfp, nfe);
        for (size_t i = 0; i < nf; i++) {
            EXPECT_EQ(ids[i], ide[i]);
            EXPECT_TRUE(sc[i] == sce[i]);
            EXPECT_EQ(idp[i], ide[i]);
            EXPECT_TRUE(scp[i] == sce[i]);
        }
        EXPECT_EQ(a.postings_total, b.postings_total);
        /* every posting scored where MaxScore alone skips some: term at a
        ** time; fewer: MaxScore */
        taat += a.postings_scored == a.postings_total && b.postings_scored < b.postings_total;
        pruned += a.postings_scored < a.postings_total;
    }
    EXPECT_TRUE(taat > 0);
    EXPECT_TRUE(pruned > 0);
    free(cdf);
    rv_bm25_free(ix);
    corpus_free(&c);

    /* every document holds the query term once and has the same length: all
    ** score alike, and the best k are the lowest ids -- also with weights
    ** near 1e-12 (the idf of a term in all but one of 2^40 documents, set
    ** through the shard statistics) */
    enum { M = 500 };
    const char *same[M];
    size_t lens[M];
    for (size_t i = 0; i < M; i++) {
        same[i] = "alpha beta";
        lens[i] = 10;
    }
    rv_analyzer_options o;
    rv_analyzer_options_init(&o);
    ASSERT_OK(rv_bm25_create(&o, NULL, &ix));
    ASSERT_OK(rv_bm25_add(ix, M, same, lens, NULL, NULL, NULL, NULL));
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            rv_bm25_info in;
            ASSERT_OK(rv_bm25_get_info(ix, &in));
            uint64_t *dfs = malloc(in.n_terms * sizeof *dfs);
            ASSERT_TRUE(dfs != NULL);
            uint64_t big = (uint64_t)1 << 40;
            for (size_t t = 0; t < in.n_terms; t++) dfs[t] = big - 1;
            ASSERT_OK(rv_bm25_set_collection_stats(ix, big, big * 2, dfs, in.n_terms));
            free(dfs);
        }
        static const size_t ks[] = {1, 7, 100, 499, 500, 501};
        for (size_t ki = 0; ki < sizeof ks / sizeof *ks; ki++) {
            int64_t ids[501];
            float sc[501];
            size_t nf;
            ASSERT_OK(rv_bm25_search(ix, "beta", 4, ks[ki], 0, NULL, ids, sc, &nf, NULL));
            ASSERT_EQ(nf, ks[ki] < M ? ks[ki] : M);
            for (size_t i = 0; i < nf; i++) {
                EXPECT_EQ(ids[i], (int64_t)i);
                EXPECT_TRUE(sc[i] == sc[0]);
            }
            EXPECT_TRUE(sc[0] > 0);
        }
    }
    rv_bm25_free(ix);
}

int main(void) {
    RUN_TEST(test_params);
    RUN_TEST(test_small_known);
    RUN_TEST(test_tie_order);
    RUN_TEST(test_variants_vs_reference);
    RUN_TEST(test_pruning);
    RUN_TEST(test_large_k);
    RUN_TEST(test_pruning_adversarial);
    RUN_TEST(test_long_query);
    RUN_TEST(test_batch);
    RUN_TEST(test_explain);
    RUN_TEST(test_delete_compact);
    RUN_TEST(test_add_errors);
    RUN_TEST(test_large_tf);
    RUN_TEST(test_save_load);
    RUN_TEST(test_corruption);
    RUN_TEST(test_caller_ids);
    RUN_TEST(test_filters);
    RUN_TEST(test_incremental_equals_fresh);
    RUN_TEST(test_alloc_failures);
    RUN_TEST(test_variants_vs_reference_pruned);
    RUN_TEST(test_large_k_pruned);
    RUN_TEST(test_large_k_mixed);
    RUN_TEST(test_pruning_adversarial_pruned);
    RUN_TEST(test_pruning_adversarial_mixed);
    RUN_TEST(test_term_at_a_time);
    return RV_TEST_SUMMARY();
}
