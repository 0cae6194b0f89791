/*
** Shared objects under concurrent callers.  Each threaded kernel -- the
** belief MI scan, flat search, a record table's search, BM25 batch search
** and the hashing embedder's batch -- is called from four threads at once on one shared
** object, every call itself fanning out on several worker threads, and
** every answer must equal the single-threaded reference bit for bit.  The
** ThreadSanitizer tier of .ci/run (RV_SANITIZE=thread) runs this file and
** the rest of the suite, so a data race inside a kernel or between callers
** fails CI.  Workers only record their results; the main thread asserts.
*/
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rv_test.h"

enum { CALLERS = 4, ROUNDS = 3 };

typedef struct caller {
    void *(*fn)(struct caller *);
    const void *shared; /* the object every caller uses */
    unsigned fan;       /* worker threads per call */
    void *out;          /* this caller's answer */
    size_t out_bytes;
    rv_status st;
} caller;

static void *caller_main(void *arg) {
    caller *c = arg;
    return c->fn(c);
}

/* Run `proto` on CALLERS threads at once (fan-outs 2, 3, 4, 2, ...) and
** compare every answer with `want`. */
static void run_callers(caller proto, const void *want) {
    caller cs[CALLERS];
    pthread_t th[CALLERS];
    for (int i = 0; i < CALLERS; i++) {
        cs[i] = proto;
        cs[i].fan = 2 + (unsigned)i % 3;
        cs[i].out = malloc(proto.out_bytes);
        ASSERT_TRUE(cs[i].out != NULL);
    }
    for (int r = 0; r < ROUNDS; r++) {
        int started[CALLERS];
        for (int i = 0; i < CALLERS; i++) {
            memset(cs[i].out, 0xA5, proto.out_bytes);
            started[i] = pthread_create(&th[i], NULL, caller_main, &cs[i]) == 0;
        }
        for (int i = 0; i < CALLERS; i++) {
            if (started[i])
                pthread_join(th[i], NULL);
            else
                caller_main(&cs[i]);
        }
        for (int i = 0; i < CALLERS; i++) {
            EXPECT_OK(cs[i].st);
            EXPECT_EQ(memcmp(cs[i].out, want, proto.out_bytes), 0);
        }
    }
    for (int i = 0; i < CALLERS; i++) free(cs[i].out);
}

/* --------------------------------------------------------------- belief MI */

enum { MI_R = 6007, MI_C = 48 };
typedef struct {
    const int32_t *codes;
    const double *post;
} mi_data;

static rv_status mi_call(const mi_data *d, unsigned fan, double *mi) {
    rv_belief_options opt;
    rv_belief_options_init(&opt);
    opt.noise = 0.1;
    opt.n_threads = fan;
    uint32_t best;
    return rv_belief_mi(d->codes, MI_R, MI_C, NULL, MI_R, d->post, &opt, mi, NULL, NULL, NULL, NULL,
                        &best);
}

static void *mi_caller(caller *c) {
    c->st = mi_call(c->shared, c->fan, c->out);
    return NULL;
}

static void test_mi_shared_inputs(void) {
    int32_t *codes = malloc((size_t)MI_R * MI_C * sizeof *codes);
    double *post = malloc(MI_R * sizeof *post);
    ASSERT_TRUE(codes && post);
    for (size_t i = 0; i < (size_t)MI_R * MI_C; i++) codes[i] = (int32_t)((i * 2654435761u) % 7);
    double sum = 0;
    for (size_t i = 0; i < MI_R; i++) sum += post[i] = 1.0 + (double)(i % 13);
    for (size_t i = 0; i < MI_R; i++) post[i] /= sum;
    mi_data d = {codes, post};
    double want[MI_C];
    ASSERT_OK(mi_call(&d, 1, want));
    caller proto = {mi_caller, &d, 0, NULL, sizeof want, RV_OK};
    run_callers(proto, want);
    free(codes);
    free(post);
}

/* ------------------------------------------------------------- flat search */

/* n_rows * n_queries * dim >= 2^21: the size at which a search fans out */
enum { FL_N = 8192, FL_D = 32, FL_Q = 10, FL_K = 10 };
typedef struct {
    const rv_flat *ix;
    const float *q;
} flat_data;

static rv_status flat_call(const flat_data *d, unsigned fan, int64_t *ids) {
    rv_flat_search_params p;
    rv_flat_search_params_init(&p);
    p.k = FL_K;
    p.n_threads = fan;
    float sc[FL_Q * FL_K];
    size_t nf;
    rv_status st = rv_flat_search(d->ix, &p, FL_Q, d->q, ids, sc, &nf);
    memset(ids + FL_Q * FL_K, 0, FL_Q * FL_K * sizeof *ids);
    memcpy(ids + FL_Q * FL_K, sc, sizeof sc); /* ids, then scores' bits */
    return st;
}

static void *flat_caller(caller *c) {
    c->st = flat_call(c->shared, c->fan, c->out);
    return NULL;
}

static void test_flat_search_shared_index(void) {
    for (int storage = RV_FLAT_F32; storage <= RV_FLAT_I8; storage++) {
        rv_flat_options o;
        rv_flat_options_init(&o);
        o.dim = FL_D;
        o.storage = (rv_flat_storage)storage;
        rv_flat *ix = NULL;
        ASSERT_OK(rv_flat_create(&o, &ix));
        float *v = malloc((size_t)FL_N * FL_D * sizeof *v);
        ASSERT_TRUE(v != NULL);
        rv_rng rng;
        rv_rng_seed(&rng, 41 + (uint64_t)storage);
        for (size_t i = 0; i < (size_t)FL_N * FL_D; i++)
            v[i] = (float)rv_rng_below(&rng, 2001) / 1000.0f - 1.0f;
        ASSERT_OK(rv_flat_add(ix, FL_N, v, NULL, NULL));
        flat_data d = {ix, v + 17 * FL_D}; /* queries: rows 17 .. 26 */
        int64_t want[FL_Q * FL_K * 2];
        ASSERT_OK(flat_call(&d, 1, want));
        caller proto = {flat_caller, &d, 0, NULL, sizeof want, RV_OK};
        run_callers(proto, want);
        free(v);
        rv_flat_free(ix);
    }
}

/* ------------------------------------------------- a record table's search */

/* one query over REC_N rows of REC_D: 2^21 row-dimension products, the
** size at which the index's scan fans out */
enum { REC_N = 32768, REC_D = 64, REC_Q = 6, REC_K = 8, REC_ART = 5000 };
typedef struct {
    const rv_records *t;
    const rv_flat *ix;
    const float *q;
} rec_data;

/* Per query: REC_K positions, ranks and score bits, then the count and
** the verdict. */
static rv_status rec_call(const rec_data *d, unsigned fan, int64_t *out) {
    rv_records_search_params p;
    rv_records_search_params_init(&p);
    p.k = REC_K;
    p.fetch_k = 5 * REC_K;
    p.collapse = 1;
    p.n_threads = fan;
    memset(out, 0, REC_Q * (3 * REC_K + 2) * sizeof *out);
    for (size_t i = 0; i < REC_Q; i++) {
        int64_t *o = out + i * (3 * REC_K + 2);
        float sc[REC_K];
        size_t n = 0;
        rv_records_verdict v;
        rv_status st =
            rv_records_search(d->t, d->ix, &p, d->q + i * REC_D, o, o + REC_K, sc, &n, &v);
        if (st) return st;
        for (size_t h = 0; h < n; h++) memcpy(o + 2 * REC_K + h, sc + h, sizeof sc[h]);
        o[3 * REC_K] = (int64_t)n;
        o[3 * REC_K + 1] = v;
    }
    return RV_OK;
}

static void *rec_caller(caller *c) {
    c->st = rec_call(c->shared, c->fan, c->out);
    return NULL;
}

static void test_records_search_shared_table(void) {
    rv_flat_options o;
    rv_flat_options_init(&o);
    o.dim = REC_D;
    rv_flat *ix = NULL;
    ASSERT_OK(rv_flat_create(&o, &ix));
    float *v = malloc((size_t)REC_N * REC_D * sizeof *v);
    int64_t *ids = malloc(REC_N * sizeof *ids), *off = calloc(REC_N + 1, sizeof *off);
    int32_t *art = malloc(REC_N * sizeof *art), *kind = calloc(REC_N, sizeof *kind);
    ASSERT_TRUE(v && ids && off && art && kind);
    rv_rng rng;
    rv_rng_seed(&rng, 17);
    for (size_t i = 0; i < (size_t)REC_N * REC_D; i++) v[i] = (float)(rv_rng_uniform(&rng) * 2 - 1);
    for (size_t i = 0; i < REC_N; i++) {
        ids[i] = 3 * (int64_t)i + 1;
        art[i] = (int32_t)(i % REC_ART);
    }
    ASSERT_OK(rv_flat_add(ix, REC_N, v, ids, NULL));
    /* (every string empty: the offsets are zeros) */
    rv_records t = {
        REC_N,          ids,           art, kind, 1, {NULL, 0, off}, {NULL, 0, off}, REC_ART,
        {NULL, 0, off}, {NULL, 0, off}};
    ASSERT_OK(rv_records_check(&t));
    rec_data d = {&t, ix, v + 100 * REC_D}; /* queries: rows 100 .. 105 */
    static int64_t want[REC_Q * (3 * REC_K + 2)];
    ASSERT_OK(rec_call(&d, 1, want));
    for (size_t i = 0; i < REC_Q; i++) { /* each query's own row first */
        EXPECT_EQ(want[i * (3 * REC_K + 2)], 100 + (int64_t)i);
        EXPECT_EQ(want[i * (3 * REC_K + 2) + 3 * REC_K], REC_K);
    }
    caller proto = {rec_caller, &d, 0, NULL, sizeof want, RV_OK};
    run_callers(proto, want);
    free(v);
    free(ids);
    free(off);
    free(art);
    free(kind);
    rv_flat_free(ix);
}

/* ------------------------------------------------------- BM25 batch search */

enum { BM_DOCS = 1500, BM_Q = 40, BM_K = 8 };
static const char *bm_words[] = {"river",  "stone",  "bridge", "lamp",   "north",  "copper",
                                 "glass",  "harbor", "violet", "ember",  "quartz", "meadow",
                                 "falcon", "cedar",  "signal", "lantern"};
typedef struct {
    const rv_bm25 *ix;
    const char *const *q;
    const size_t *ql;
} bm_data;

static rv_status bm_call(const bm_data *d, unsigned fan, int64_t *ids) {
    float sc[BM_Q * BM_K];
    uint32_t nf[BM_Q];
    rv_status st =
        rv_bm25_search_batch(d->ix, BM_Q, d->q, d->ql, BM_K, 0, NULL, fan, NULL, NULL, ids, sc, nf);
    memset(ids + BM_Q * BM_K, 0, BM_Q * BM_K * sizeof *ids);
    memcpy(ids + BM_Q * BM_K, sc, sizeof sc); /* ids, then scores' bits */
    return st;
}

static void *bm_caller(caller *c) {
    c->st = bm_call(c->shared, c->fan, c->out);
    return NULL;
}

/* The same queries one rv_bm25_search at a time (each call takes the
** index's spare scratch, or makes its own while another thread holds it;
** unfound rows as a batch leaves them). */
static rv_status bm_single(const bm_data *d, int64_t *ids) {
    float sc[BM_Q * BM_K];
    rv_status st = RV_OK;
    for (size_t q = 0; q < BM_Q && st == RV_OK; q++) {
        size_t nf = 0;
        st = rv_bm25_search(d->ix, d->q[q], d->ql[q], BM_K, 0, NULL, ids + q * BM_K, sc + q * BM_K,
                            &nf, NULL);
        for (size_t i = nf; i < BM_K; i++) {
            ids[q * BM_K + i] = RV_BM25_NO_DOC;
            sc[q * BM_K + i] = NAN;
        }
    }
    memset(ids + BM_Q * BM_K, 0, BM_Q * BM_K * sizeof *ids);
    memcpy(ids + BM_Q * BM_K, sc, sizeof sc);
    return st;
}

static void *bm_single_caller(caller *c) {
    c->st = bm_single(c->shared, c->out);
    return NULL;
}

static char *bm_text(rv_rng *rng, size_t words, size_t *len) {
    char *t = malloc(words * 8 + 1);
    size_t o = 0;
    for (size_t w = 0; w < words; w++) {
        const char *s = bm_words[rv_rng_below(rng, 16)];
        size_t l = strlen(s);
        memcpy(t + o, s, l);
        o += l;
        t[o++] = ' ';
    }
    *len = o;
    return t;
}

static void test_bm25_batch_shared_index(void) {
    rv_analyzer_options ao;
    rv_analyzer_options_init(&ao);
    rv_bm25 *ix = NULL;
    ASSERT_OK(rv_bm25_create(&ao, NULL, &ix));
    rv_rng rng;
    rv_rng_seed(&rng, 7);
    char *docs[BM_DOCS], *qs[BM_Q];
    size_t dl[BM_DOCS], ql[BM_Q];
    for (size_t i = 0; i < BM_DOCS; i++)
        docs[i] = bm_text(&rng, 5 + rv_rng_below(&rng, 30), &dl[i]);
    for (size_t i = 0; i < BM_Q; i++) qs[i] = bm_text(&rng, 1 + rv_rng_below(&rng, 4), &ql[i]);
    ASSERT_OK(rv_bm25_add(ix, BM_DOCS, (const char *const *)docs, dl, NULL, NULL, NULL, NULL));
    bm_data d = {ix, (const char *const *)qs, ql};
    int64_t want[BM_Q * BM_K * 2];
    ASSERT_OK(bm_call(&d, 1, want));
    caller proto = {bm_caller, &d, 0, NULL, sizeof want, RV_OK};
    run_callers(proto, want);
    /* single searches from many threads at once give the batch's rows */
    caller single = {bm_single_caller, &d, 0, NULL, sizeof want, RV_OK};
    run_callers(single, want);
    for (size_t i = 0; i < BM_DOCS; i++) free(docs[i]);
    for (size_t i = 0; i < BM_Q; i++) free(qs[i]);
    rv_bm25_free(ix);
}

/* --------------------------------------------------------- hashing batch */

enum { HS_N = 400, HS_DIM = 64 };
typedef struct {
    const rv_hasher *h;
    const char *data;
    const uint64_t *off;
} hs_data;

static rv_status hs_call(const hs_data *d, unsigned fan, float *out) {
    return rv_hasher_embed_batch(d->h, d->data, d->off, HS_N, fan, out);
}

static void *hs_caller(caller *c) {
    c->st = hs_call(c->shared, c->fan, c->out);
    return NULL;
}

static void test_hashing_batch_shared_hasher(void) {
    rv_hasher_options o;
    rv_hasher_options_init(&o);
    o.dim = HS_DIM;
    rv_hasher *h = NULL;
    ASSERT_OK(rv_hasher_create(&o, &h));
    /* > 64 KiB of text in all, so the batch really fans out */
    rv_rng rng;
    rv_rng_seed(&rng, 99);
    size_t cap = 1 << 18, used = 0;
    char *data = malloc(cap);
    uint64_t off[HS_N + 1];
    ASSERT_TRUE(data != NULL);
    for (size_t i = 0; i < HS_N; i++) {
        off[i] = used;
        size_t l;
        char *t = bm_text(&rng, 20 + rv_rng_below(&rng, 20), &l);
        ASSERT_TRUE(used + l <= cap);
        memcpy(data + used, t, l);
        used += l;
        free(t);
    }
    off[HS_N] = used;
    ASSERT_TRUE(used >= 65536);
    hs_data d = {h, data, off};
    static float want[HS_N * HS_DIM];
    ASSERT_OK(hs_call(&d, 1, want));
    caller proto = {hs_caller, &d, 0, NULL, sizeof want, RV_OK};
    run_callers(proto, want);
    free(data);
    rv_hasher_free(h);
}

int main(void) {
    RUN_TEST(test_mi_shared_inputs);
    RUN_TEST(test_flat_search_shared_index);
    RUN_TEST(test_records_search_shared_table);
    RUN_TEST(test_bm25_batch_shared_index);
    RUN_TEST(test_hashing_batch_shared_hasher);
    return RV_TEST_SUMMARY();
}
