/*
** Tests of the record tables (include/rowvoi/records.h): the unit form of
** a query vector bit for bit against its rule (every stride, both element
** types, overflow, zeros), the nonzero test, the table check (each fault
** named), the hits against a plain reference (ties, unknown ids, the
** collapse, positions given, more candidates than the stack holds,
** allocation failures), the whole search against rv_flat_search plus
** rv_records_hits, the union and its reciprocal rank fusion, and the
** blend evidence against each index asked one record at a time.
*/
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rv_test.h"

#if defined(__clang__)
#  pragma STDC FP_CONTRACT OFF
#endif

/* ------------------------------------------------------- the unit form */

/* The rule of rv_unit_vector, written plainly: every product and sum is
** stored through a volatile double, so each is one IEEE rounding whatever
** the compiler would contract. */
static int unit_reference(const double *v, size_t n, float *out) {
    volatile double s = 0.0, sq;
    for (size_t i = 0; i < n; i++) {
        sq = v[i] * v[i];
        s = s + sq;
    }
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i])) return 0;
    double norm = sqrt(s);
    for (size_t i = 0; i < n; i++) out[i] = norm > 0 ? (float)(v[i] / norm) : (float)v[i];
    return 1;
}

static int same_bits(const float *a, const float *b, size_t n) {
    return memcmp(a, b, n * sizeof *a) == 0;
}

static void test_unit_vector_rule(void) {
    rv_rng rng;
    rv_rng_seed(&rng, 7);
    enum { N = 300 };
    /* a buffer with room for a stride of 3 elements and a one-byte offset
    ** (no alignment assumed) */
    static unsigned char buf[3 * N * sizeof(double) + 16];
    double v[N];
    float want[N], got[N];
    for (int round = 0; round < 200; round++) {
        size_t n = 1 + (size_t)rv_rng_below(&rng, N);
        int f64 = round & 1, step = 1 + (int)rv_rng_below(&rng, 3), rev = (round >> 1) & 1;
        size_t es = f64 ? sizeof(double) : sizeof(float);
        /* magnitudes from subnormal to huge, so the sum rounds often */
        for (size_t i = 0; i < n; i++) {
            double m = rv_rng_uniform(&rng) * 2 - 1;
            int e = (int)rv_rng_below(&rng, 60) - 30;
            v[i] = f64 ? ldexp(m, e) : (double)(float)ldexp(m, e);
            if (rv_rng_below(&rng, 10) == 0) v[i] = 0.0;
        }
        unsigned char *base = buf + 1;
        ptrdiff_t stride = (ptrdiff_t)(step * es);
        for (size_t i = 0; i < n; i++) {
            unsigned char *p = base + (rev ? n - 1 - i : i) * (size_t)stride;
            if (f64) {
                memcpy(p, &v[i], sizeof(double));
            } else {
                float f = (float)v[i];
                memcpy(p, &f, sizeof f);
            }
        }
        const void *x = rev ? (const void *)(base + (n - 1) * (size_t)stride) : base;
        ASSERT_TRUE(unit_reference(v, n, want));
        ASSERT_OK(
            rv_unit_vector(x, f64 ? RV_REAL_F64 : RV_REAL_F32, n, rev ? -stride : stride, got));
        ASSERT_TRUE(same_bits(want, got, n));
    }
}

static void test_unit_vector_edges(void) {
    double d[2] = {3.0, 4.0};
    float f[2] = {3.0f, 4.0f}, out[2];
    ASSERT_OK(rv_unit_vector(d, RV_REAL_F64, 2, sizeof(double), out));
    EXPECT_TRUE(out[0] == 0.6f && out[1] == 0.8f);
    ASSERT_OK(rv_unit_vector(f, RV_REAL_F32, 2, sizeof(float), out));
    EXPECT_TRUE(out[0] == 0.6f && out[1] == 0.8f);
    /* a vector whose first component comes out one float apart when a fused
    ** multiply-add adds the third square (the sum then rounds once less):
    ** the rule's result, not the fused one (-0x1.b7885ep-1) */
    double fused[3] = {-0x1.b582164065512p-1, 0x1.da375b2fa0b84p-2, -0x1.b8048c6b71b38p-3};
    float fused_out[3], fused_want[3];
    ASSERT_TRUE(unit_reference(fused, 3, fused_want));
    EXPECT_TRUE(fused_want[0] == -0x1.b7886p-1f);
    ASSERT_OK(rv_unit_vector(fused, RV_REAL_F64, 3, sizeof(double), fused_out));
    EXPECT_TRUE(same_bits(fused_out, fused_want, 3));
    /* squares overflowing double: the norm is inf, components zeros */
    double big[2] = {1e200, -1e200};
    ASSERT_OK(rv_unit_vector(big, RV_REAL_F64, 2, sizeof(double), out));
    EXPECT_TRUE(out[0] == 0.0f && !signbit(out[0]) && out[1] == 0.0f && signbit(out[1]));
    /* zero stays zero */
    double z[3] = {0.0, -0.0, 0.0};
    float z_out[3] = {1, 1, 1};
    ASSERT_OK(rv_unit_vector(z, RV_REAL_F64, 3, sizeof(double), z_out));
    EXPECT_TRUE(z_out[0] == 0.0f && signbit(z_out[1]) && z_out[2] == 0.0f);
    /* a stride of 0 reads one component n times */
    double one = 2.0;
    float o4[4];
    ASSERT_OK(rv_unit_vector(&one, RV_REAL_F64, 4, 0, o4));
    EXPECT_TRUE(o4[0] == 0.5f && o4[3] == 0.5f);
    /* refusals */
    double bad[3] = {1.0, NAN, 2.0};
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_unit_vector(bad, RV_REAL_F64, 3, sizeof(double), out));
    EXPECT_STR_CONTAINS(rv_errmsg(), "x[1] = nan");
    EXPECT_STR_CONTAINS(rv_errmsg(), "NaN or infinite");
    float inf[2] = {INFINITY, 0.0f};
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_unit_vector(inf, RV_REAL_F32, 2, sizeof(float), out));
    EXPECT_STR_CONTAINS(rv_errmsg(), "x[0] = inf");
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_unit_vector(d, (rv_real)2, 2, 8, out));
    EXPECT_STR_CONTAINS(rv_errmsg(), "type = 2");
    EXPECT_OK(rv_unit_vector(NULL, RV_REAL_F32, 0, 4, NULL));
    EXPECT_STATUS(RV_E_RANGE, rv_unit_vector(d, RV_REAL_F64, SIZE_MAX / 4, 8, out));
}

static void test_any_nonzero(void) {
    double d[4] = {0.0, -0.0, 0.0, 5e-324};
    EXPECT_EQ(rv_any_nonzero(d, RV_REAL_F64, 4, sizeof(double)), 1);
    EXPECT_EQ(rv_any_nonzero(d, RV_REAL_F64, 3, sizeof(double)), 0);
    /* every other component: the subnormal is skipped */
    EXPECT_EQ(rv_any_nonzero(d, RV_REAL_F64, 2, 2 * sizeof(double)), 0);
    float f[3] = {-0.0f, NAN, 0.0f};
    EXPECT_EQ(rv_any_nonzero(f, RV_REAL_F32, 3, sizeof(float)), 1); /* NaN counts */
    EXPECT_EQ(rv_any_nonzero(f + 2, RV_REAL_F32, 2, -2 * (ptrdiff_t)sizeof(float)), 0);
    EXPECT_EQ(rv_any_nonzero(NULL, RV_REAL_F32, 3, 4), 0);
    EXPECT_EQ(rv_any_nonzero(f, (rv_real)9, 3, 4), 0);
    EXPECT_EQ(rv_any_nonzero(f, RV_REAL_F32, SIZE_MAX, 4), 0);
}

/* ------------------------------------------------------------- a table */

enum { MAX_REC = 2000 };

typedef struct table {
    rv_records t;
    int64_t ids[MAX_REC];
    int32_t art[MAX_REC], kind[MAX_REC];
    int64_t t_off[MAX_REC + 1], m_off[MAX_REC + 1], f_off[MAX_REC + 1], a_off[MAX_REC + 1];
    char text[MAX_REC * 4], meta[MAX_REC * 2], fields[MAX_REC * 2], names[MAX_REC * 4];
} table;

/* n records with ids 10, 13, 16, ... over n_art artifacts (record i
** belongs to artifact (i * 7) % n_art), texts "ti", metadata "{}" for
** every other record, fields "f" per artifact, names "aN". */
static void make_table(table *tb, size_t n, size_t n_art) {
    memset(&tb->t, 0, sizeof tb->t);
    size_t to = 0, mo = 0;
    tb->t_off[0] = tb->m_off[0] = 0;
    for (size_t i = 0; i < n; i++) {
        tb->ids[i] = 10 + 3 * (int64_t)i;
        tb->art[i] = (int32_t)((i * 7) % n_art);
        tb->kind[i] = (int32_t)(i % 3);
        tb->text[to++] = 't';
        tb->text[to++] = (char)('0' + i % 10);
        tb->t_off[i + 1] = (int64_t)to;
        if (i % 2) {
            tb->meta[mo++] = '{';
            tb->meta[mo++] = '}';
        }
        tb->m_off[i + 1] = (int64_t)mo;
    }
    size_t fo = 0, ao = 0;
    tb->f_off[0] = tb->a_off[0] = 0;
    for (size_t a = 0; a < n_art; a++) {
        tb->fields[fo++] = 'f';
        tb->f_off[a + 1] = (int64_t)fo;
        tb->names[ao++] = 'a';
        tb->names[ao++] = (char)('0' + a % 10);
        tb->a_off[a + 1] = (int64_t)ao;
    }
    rv_records *t = &tb->t;
    t->n_records = n;
    t->ids = tb->ids;
    t->artifact = tb->art;
    t->kind = tb->kind;
    t->n_kinds = 3;
    t->texts = (rv_strings){tb->text, to, tb->t_off};
    t->metadata = (rv_strings){mo ? tb->meta : NULL, mo, tb->m_off};
    t->n_artifacts = n_art;
    t->filter_fields = (rv_strings){tb->fields, fo, tb->f_off};
    t->artifact_ids = (rv_strings){tb->names, ao, tb->a_off};
}

static void test_check_names_each_fault(void) {
    static table tb;
    make_table(&tb, 12, 4);
    ASSERT_OK(rv_records_check(&tb.t));
    /* an empty table, its strings' bytes NULL */
    rv_records e;
    memset(&e, 0, sizeof e);
    int64_t zero = 0;
    e.texts.offsets = e.metadata.offsets = e.filter_fields.offsets = e.artifact_ids.offsets = &zero;
    EXPECT_OK(rv_records_check(&e));
    tb.ids[5] = tb.ids[4];
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_records_check(&tb.t));
    EXPECT_STR_CONTAINS(rv_errmsg(), "record ids not strictly ascending: ids[5]");
    make_table(&tb, 12, 4);
    tb.art[3] = 4;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_records_check(&tb.t));
    EXPECT_STR_CONTAINS(rv_errmsg(), "artifact rank 4 out of range: artifact[3]");
    make_table(&tb, 12, 4);
    tb.art[2] = -1;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_records_check(&tb.t));
    EXPECT_STR_CONTAINS(rv_errmsg(), "artifact rank -1 out of range");
    make_table(&tb, 12, 4);
    tb.kind[7] = 3;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_records_check(&tb.t));
    EXPECT_STR_CONTAINS(rv_errmsg(), "kind code 3 out of range: kind[7]");
    make_table(&tb, 12, 4);
    tb.t.texts.size++;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_records_check(&tb.t));
    EXPECT_STR_CONTAINS(rv_errmsg(), "texts offsets do not span the blob");
    make_table(&tb, 12, 4);
    tb.m_off[3] = tb.m_off[4] + 1;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_records_check(&tb.t));
    EXPECT_STR_CONTAINS(rv_errmsg(), "metadata offsets not ascending: offsets[4]");
    make_table(&tb, 12, 4);
    tb.f_off[0] = 1;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_records_check(&tb.t));
    EXPECT_STR_CONTAINS(rv_errmsg(), "filter_fields offsets do not span");
    make_table(&tb, 12, 4);
    tb.a_off[4] = -1;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_records_check(&tb.t));
    EXPECT_STR_CONTAINS(rv_errmsg(), "artifact_ids offsets do not span");
    make_table(&tb, 12, 4);
    tb.t.artifact_ids.bytes = NULL;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_records_check(&tb.t));
    EXPECT_STR_CONTAINS(rv_errmsg(), "table->artifact_ids.bytes is NULL");
    make_table(&tb, 12, 4);
    tb.t.metadata.offsets = NULL;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_records_check(&tb.t));
    EXPECT_STR_CONTAINS(rv_errmsg(), "table->metadata.offsets is NULL");
}

/* ------------------------------------------------------------- the hits */

/* The hits by their definition: candidate i's position by a linear scan,
** then the first k (or the first of each artifact until k).  Returns the
** verdict; *kept hits into at/rank. */
static rv_records_verdict hits_reference(const rv_records *t, size_t n, const int64_t *ids,
                                         const float *sc, size_t k, int collapse, int64_t *at,
                                         int64_t *rank, size_t *kept) {
    *kept = 0;
    for (size_t i = 1; i < n; i++)
        if (!(sc[i - 1] > sc[i])) return RV_RECORDS_TIE;
    int64_t *pos = malloc((n ? n : 1) * sizeof *pos);
    for (size_t i = 0; i < n; i++) {
        pos[i] = -1;
        for (size_t j = 0; j < t->n_records; j++)
            if (t->ids[j] == ids[i]) pos[i] = (int64_t)j;
        if (pos[i] < 0) {
            free(pos);
            return RV_RECORDS_UNKNOWN;
        }
    }
    for (size_t i = 0; i < n && *kept < k; i++) {
        int dup = 0;
        for (size_t h = 0; collapse && h < *kept; h++)
            dup |= t->artifact[at[h]] == t->artifact[pos[i]];
        if (dup) continue;
        at[*kept] = pos[i];
        rank[(*kept)++] = (int64_t)i;
    }
    free(pos);
    return RV_RECORDS_HITS;
}

static void test_hits_against_reference(void) {
    static table tb;
    static int64_t ids[MAX_REC], at[MAX_REC], rank[MAX_REC], at2[MAX_REC], rank2[MAX_REC];
    static float sc[MAX_REC];
    rv_rng rng;
    rv_rng_seed(&rng, 11);
    for (int round = 0; round < 300; round++) {
        size_t n_rec = 1 + (size_t)rv_rng_below(&rng, round < 250 ? 60 : MAX_REC);
        size_t n_art = 1 + (size_t)rv_rng_below(&rng, n_rec);
        make_table(&tb, n_rec, n_art);
        ASSERT_OK(rv_records_check(&tb.t));
        /* candidates: distinct records in random order, sometimes one
        ** unknown id, scores falling (sometimes a tie) */
        size_t n = 1 + (size_t)rv_rng_below(&rng, n_rec);
        for (size_t i = 0; i < n; i++) ids[i] = tb.ids[i];
        for (size_t i = n; i < n_rec; i++) {
            size_t j = (size_t)rv_rng_below(&rng, i + 1);
            if (j < n) ids[j] = tb.ids[i];
        }
        for (size_t i = n; i-- > 1;) {
            size_t j = (size_t)rv_rng_below(&rng, i + 1);
            int64_t x = ids[i];
            ids[i] = ids[j];
            ids[j] = x;
        }
        for (size_t i = 0; i < n; i++) sc[i] = 1000.0f - (float)i;
        int what = (int)rv_rng_below(&rng, 8);
        if (what == 0 && n > 1) sc[n - 1] = sc[n - 2];                       /* a tie at the end */
        if (what == 1) ids[rv_rng_below(&rng, n)] = 11;                      /* between two ids */
        if (what == 2) ids[rv_rng_below(&rng, n)] = 10 + 3 * (int64_t)n_rec; /* past the last */
        size_t k = 1 + (size_t)rv_rng_below(&rng, n + 3);
        int collapse = (int)rv_rng_below(&rng, 2);
        size_t kept = 99, want_kept;
        rv_records_verdict v = (rv_records_verdict)9;
        rv_records_verdict want =
            hits_reference(&tb.t, n, ids, sc, k, collapse, at2, rank2, &want_kept);
        ASSERT_OK(rv_records_hits(&tb.t, n, ids, sc, RV_REAL_F32, NULL, k, collapse, at, rank,
                                  &kept, &v));
        ASSERT_EQ(v, want);
        if (want != RV_RECORDS_HITS) {
            EXPECT_EQ(kept, 0);
            continue;
        }
        ASSERT_EQ(kept, want_kept);
        ASSERT_TRUE(memcmp(at, at2, kept * sizeof *at) == 0);
        ASSERT_TRUE(memcmp(rank, rank2, kept * sizeof *rank) == 0);
        /* the same as float64 scores, and with the positions given */
        double sd[MAX_REC];
        for (size_t i = 0; i < n; i++) sd[i] = sc[i];
        ASSERT_OK(rv_records_hits(&tb.t, n, ids, sd, RV_REAL_F64, NULL, k, collapse, at2, rank2,
                                  &kept, &v));
        ASSERT_TRUE(v == RV_RECORDS_HITS && kept == want_kept);
        ASSERT_TRUE(memcmp(at, at2, kept * sizeof *at) == 0);
        int64_t pos[MAX_REC];
        for (size_t i = 0; i < n; i++) pos[i] = (ids[i] - 10) / 3;
        ASSERT_OK(rv_records_hits(&tb.t, n, ids, NULL, RV_REAL_F32, pos, k, collapse, at2, rank2,
                                  &kept, &v));
        ASSERT_TRUE(v == RV_RECORDS_HITS && kept == want_kept);
        ASSERT_TRUE(memcmp(at, at2, kept * sizeof *at) == 0);
        ASSERT_TRUE(memcmp(rank, rank2, kept * sizeof *rank) == 0);
    }
}

static void test_hits_positions_given(void) {
    static table tb;
    make_table(&tb, 10, 3); /* artifacts of records 0..9: 0 1 2 0 1 2 0 1 2 0 */
    int64_t ids[4] = {40, 13, 16, 10}, pos[4] = {10, 1, 2, 0}, at[4], rank[4];
    float sc[4] = {0.5f, 0.5f, 0.5f, 0.5f}; /* ties: taken in the order given */
    size_t kept;
    rv_records_verdict v;
    EXPECT_STATUS(RV_E_RANGE,
                  rv_records_hits(&tb.t, 4, ids, sc, RV_REAL_F32, pos, 4, 0, at, rank, &kept, &v));
    EXPECT_STR_CONTAINS(rv_errmsg(), "position 10 out of range: pos[0]");
    pos[0] = 3;
    ASSERT_OK(rv_records_hits(&tb.t, 4, ids, sc, RV_REAL_F32, pos, 4, 1, at, rank, &kept, &v));
    /* record 3 (artifact 0), 1 (1), 2 (2); record 0 repeats artifact 0 */
    EXPECT_EQ(kept, 3);
    EXPECT_TRUE(at[0] == 3 && at[1] == 1 && at[2] == 2 && rank[2] == 2);
    /* without positions the ties are handed back */
    ASSERT_OK(rv_records_hits(&tb.t, 4, ids, sc, RV_REAL_F32, NULL, 4, 1, at, rank, &kept, &v));
    EXPECT_TRUE(v == RV_RECORDS_TIE && kept == 0);
    /* a NaN score is no strict fall either */
    float nan_sc[2] = {NAN, 0.5f};
    ASSERT_OK(
        rv_records_hits(&tb.t, 2, ids + 1, nan_sc, RV_REAL_F32, NULL, 1, 0, at, rank, &kept, &v));
    EXPECT_EQ(v, RV_RECORDS_TIE);
    EXPECT_STATUS(RV_E_INVALID_ARG,
                  rv_records_hits(&tb.t, 2, ids, sc, RV_REAL_F32, NULL, 0, 0, at, rank, &kept, &v));
    EXPECT_STR_CONTAINS(rv_errmsg(), "k = 0");
    EXPECT_STATUS(RV_E_INVALID_ARG,
                  rv_records_hits(&tb.t, 2, ids, sc, (rv_real)5, NULL, 1, 0, at, rank, &kept, &v));
    /* k beyond n keeps n; SIZE_MAX is a k like any other */
    float fall[2] = {2.0f, 1.0f};
    ASSERT_OK(rv_records_hits(&tb.t, 2, ids + 1, fall, RV_REAL_F32, NULL, SIZE_MAX, 0, at, rank,
                              &kept, &v));
    EXPECT_TRUE(v == RV_RECORDS_HITS && kept == 2 && at[0] == 1 && at[1] == 2);
}

static void test_hits_allocation_failures(void) {
    /* more candidates than the stack holds (their positions), and a
    ** collapse to more hits than the stack holds (the set of artifacts) */
    static table tb;
    make_table(&tb, 1500, 1500);
    static int64_t ids[1500], at[1500], rank[1500];
    static float sc[1500];
    for (size_t i = 0; i < 1500; i++) {
        ids[i] = tb.ids[1499 - i];
        sc[i] = -(float)i;
    }
    size_t kept;
    rv_records_verdict v;
    for (int collapse = 0; collapse < 2; collapse++) {
        for (uint64_t fail = 1;; fail++) {
            rv__test_fail_alloc_after(fail);
            rv_status st = rv_records_hits(&tb.t, 1500, ids, sc, RV_REAL_F32, NULL, 1000, collapse,
                                           at, rank, &kept, &v);
            uint64_t made = rv__test_fail_alloc_after(0);
            if (st == RV_OK) {
                ASSERT_TRUE(made < fail);
                EXPECT_TRUE(v == RV_RECORDS_HITS && kept == 1000);
                EXPECT_TRUE(at[0] == 1499 && at[999] == 500 && rank[999] == 999);
                EXPECT_EQ(fail, collapse ? 3u : 2u); /* 1 or 2 allocations */
                break;
            }
            ASSERT_EQ(st, RV_E_NOMEM);
            EXPECT_EQ(kept, 0);
        }
    }
}

/* ------------------------------------------------------------ the search */

enum { S_N = 600, S_D = 8, S_ART = 150 };

static rv_flat *search_index(const float *v, size_t n, const int64_t *ids) {
    rv_flat_options o;
    rv_flat_options_init(&o);
    o.dim = S_D;
    rv_flat *ix = NULL;
    if (rv_flat_create(&o, &ix) || rv_flat_add(ix, n, v, ids, NULL)) return NULL;
    return ix;
}

static int stop_at_once(void *ctx, uint64_t done, uint64_t total) {
    (void)ctx;
    (void)done;
    (void)total;
    return 1;
}

static void test_search_is_flat_search_then_hits(void) {
    static table tb;
    make_table(&tb, S_N, S_ART);
    static float v[S_N * S_D];
    rv_rng rng;
    rv_rng_seed(&rng, 5);
    for (size_t i = 0; i < S_N * S_D; i++) v[i] = (float)(rv_rng_uniform(&rng) * 2 - 1);
    rv_flat *ix = search_index(v, S_N, tb.ids);
    ASSERT_TRUE(ix != NULL);
    static int64_t at[S_N], rank[S_N], at2[S_N], rank2[S_N], cid[S_N];
    static float sc[S_N], csc[S_N];
    for (int round = 0; round < 60; round++) {
        float q[S_D];
        for (int j = 0; j < S_D; j++) q[j] = (float)(rv_rng_uniform(&rng) * 2 - 1);
        rv_records_search_params p;
        rv_records_search_params_init(&p);
        EXPECT_TRUE(p.k == 10 && p.fetch_k == 10 && !p.collapse);
        p.k = 1 + (size_t)rv_rng_below(&rng, 20);
        p.fetch_k = p.k + (size_t)rv_rng_below(&rng, round < 50 ? 60 : 2 * S_N);
        p.collapse = round & 1;
        p.n_threads = 1 + (uint32_t)(round % 3);
        size_t kept, kept2, found;
        rv_records_verdict v1, v2;
        ASSERT_OK(rv_records_search(&tb.t, ix, &p, q, at, rank, sc, &kept, &v1));
        rv_flat_search_params fp;
        rv_flat_search_params_init(&fp);
        fp.k = p.fetch_k < S_N ? p.fetch_k : S_N;
        fp.exact = 1;
        fp.n_threads = 1;
        ASSERT_OK(rv_flat_search(ix, &fp, 1, q, cid, csc, &found));
        ASSERT_OK(rv_records_hits(&tb.t, found, cid, csc, RV_REAL_F32, NULL, p.k, p.collapse, at2,
                                  rank2, &kept2, &v2));
        ASSERT_EQ(v1, v2);
        ASSERT_EQ(kept, kept2);
        ASSERT_TRUE(kept > 0 && kept <= p.k);
        ASSERT_TRUE(memcmp(at, at2, kept * sizeof *at) == 0);
        ASSERT_TRUE(memcmp(rank, rank2, kept * sizeof *rank) == 0);
        for (size_t h = 0; h < kept; h++) ASSERT_TRUE(sc[h] == csc[rank[h]]);
    }
    /* no candidates: an all-zero query (even under cosine), an empty index */
    float zero[S_D] = {0}, q[S_D] = {1, 0, 0, 0, 0, 0, 0, 0};
    rv_records_search_params p;
    rv_records_search_params_init(&p);
    size_t kept = 99;
    rv_records_verdict vd = (rv_records_verdict)9;
    ASSERT_OK(rv_records_search(&tb.t, ix, &p, zero, at, rank, sc, &kept, &vd));
    EXPECT_TRUE(kept == 0 && vd == RV_RECORDS_HITS);
    rv_flat *empty = search_index(v, 0, NULL);
    ASSERT_TRUE(empty != NULL);
    kept = 99;
    ASSERT_OK(rv_records_search(&tb.t, empty, &p, q, at, rank, sc, &kept, &vd));
    EXPECT_TRUE(kept == 0 && vd == RV_RECORDS_HITS);
    /* refusals */
    float bad[S_D] = {1, NAN};
    EXPECT_STATUS(RV_E_INVALID_ARG,
                  rv_records_search(&tb.t, empty, &p, bad, at, rank, sc, &kept, &vd));
    EXPECT_STR_CONTAINS(rv_errmsg(), "query[1] = nan");
    p.fetch_k = 5;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_records_search(&tb.t, ix, &p, q, at, rank, sc, &kept, &vd));
    EXPECT_STR_CONTAINS(rv_errmsg(), "fetch_k = 5 < k = 10");
    p.fetch_k = 50;
    p.progress = stop_at_once;
    EXPECT_STATUS(RV_E_INTERRUPTED, rv_records_search(&tb.t, ix, &p, q, at, rank, sc, &kept, &vd));
    EXPECT_EQ(kept, 0);
    rv_flat_free(empty);
    rv_flat_free(ix);
}

static void test_search_hands_back_ties_and_unknown_ids(void) {
    static table tb;
    make_table(&tb, 20, 5);
    float v[20 * S_D];
    for (size_t i = 0; i < 20 * S_D; i++) v[i] = (float)((i * 37) % 11) - 5.0f;
    memcpy(v + 3 * S_D, v + 4 * S_D, S_D * sizeof *v); /* records 3 and 4: one vector */
    rv_flat *ix = search_index(v, 20, tb.ids);
    ASSERT_TRUE(ix != NULL);
    int64_t at[20], rank[20];
    float sc[20];
    size_t kept;
    rv_records_verdict vd;
    rv_records_search_params p;
    rv_records_search_params_init(&p);
    p.k = 2;
    p.fetch_k = 20;
    ASSERT_OK(rv_records_search(&tb.t, ix, &p, v + 3 * S_D, at, rank, sc, &kept, &vd));
    EXPECT_TRUE(vd == RV_RECORDS_TIE && kept == 0);
    /* an index id that is no record, the best candidate of its own vector */
    int64_t extra = 1000;
    float q[S_D] = {9, -9, 9, -9, 9, -9, 9, -9};
    ASSERT_OK(rv_flat_add(ix, 1, q, &extra, NULL));
    p.k = p.fetch_k = 1;
    ASSERT_OK(rv_records_search(&tb.t, ix, &p, q, at, rank, sc, &kept, &vd));
    EXPECT_TRUE(vd == RV_RECORDS_UNKNOWN && kept == 0);
    rv_flat_free(ix);
}

/* rv_records_union against a brute-force merge: random lists (empty,
** disjoint, overlapping, equal) over tables of 1 record to 2^40 (one to
** four radix passes), then each refusal, then every allocation failing. */
static void test_union_against_brute_force(void) {
    enum { MAXN = 700 };
    static int64_t a[MAXN], b[MAXN], u[2 * MAXN], ra[2 * MAXN], rb[2 * MAXN];
    static int64_t pool[2 * MAXN];
    rv_rng rng;
    rv_rng_seed(&rng, 77);
    size_t tables[] = {1, 2, 5, 300, 2048, 2049, 70000, (size_t)1 << 23, (size_t)1 << 40};
    for (int round = 0; round < 400; round++) {
        size_t n_rec = tables[round % (sizeof tables / sizeof tables[0])];
        /* distinct positions to draw from: some shared by both lists */
        size_t n_pool = 1 + (size_t)rv_rng_below(&rng, n_rec < 2 * MAXN ? n_rec : 2 * MAXN);
        for (size_t i = 0; i < n_pool; i++) {
            int64_t p;
            int fresh;
            do { /* (distinct: rejection, the pool is small beside the table) */
                p = (int64_t)rv_rng_below(&rng, n_rec);
                if (n_pool == n_rec) p = (int64_t)i;
                fresh = 1;
                for (size_t j = 0; j < i; j++) fresh &= pool[j] != p;
            } while (!fresh);
            pool[i] = p;
        }
        size_t n_a = (size_t)rv_rng_below(&rng, (n_pool < MAXN ? n_pool : MAXN) + 1);
        size_t n_b = (size_t)rv_rng_below(&rng, (n_pool < MAXN ? n_pool : MAXN) + 1);
        /* a: a random n_a of the pool in random order; b likewise */
        for (int side = 0; side < 2; side++) {
            int64_t *l = side ? b : a;
            size_t n = side ? n_b : n_a;
            for (size_t i = 0; i < n_pool; i++) { /* a partial shuffle */
                size_t j = i + (size_t)rv_rng_below(&rng, n_pool - i);
                int64_t t = pool[i];
                pool[i] = pool[j];
                pool[j] = t;
                if (i < n) l[i] = pool[i];
            }
        }
        size_t m = 99;
        ASSERT_OK(rv_records_union(n_rec, n_a, a, n_b, b, u, ra, rb, &m));
        /* the reference: each position of either list, ascending, once */
        size_t want = 0;
        for (size_t i = 0; i < n_pool; i++) {
            int64_t p = pool[i], want_a = 0, want_b = 0;
            for (size_t j = 0; j < n_a; j++)
                if (a[j] == p) want_a = (int64_t)j + 1;
            for (size_t j = 0; j < n_b; j++)
                if (b[j] == p) want_b = (int64_t)j + 1;
            if (!want_a && !want_b) continue;
            want++;
            /* its place in u: the count of union positions below it */
            size_t at = 0;
            while (at < m && u[at] < p) at++;
            if (at == m || u[at] != p || ra[at] != want_a || rb[at] != want_b) {
                FAILF("round %d: position %lld: want ranks %lld/%lld", round, (long long)p,
                      (long long)want_a, (long long)want_b);
                break;
            }
        }
        EXPECT_EQ(m, want);
        for (size_t i = 1; i < m; i++)
            if (u[i] <= u[i - 1]) {
                FAILF("round %d: u not strictly ascending at %zu", round, i);
                break;
            }
    }
    /* refusals: a repeat within a list, a position out of range */
    int64_t x[3] = {4, 2, 4}, y[2] = {1, 9};
    size_t m = 7;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_records_union(10, 3, x, 2, y, u, ra, rb, &m));
    EXPECT_STR_CONTAINS(rv_errmsg(), "list a holds position 4 twice (ranks 1 and 3)");
    EXPECT_EQ(m, 0);
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_records_union(10, 2, y, 3, x, u, ra, rb, &m));
    EXPECT_STR_CONTAINS(rv_errmsg(), "list b holds position 4 twice");
    EXPECT_STATUS(RV_E_RANGE, rv_records_union(9, 3, x, 2, y, u, ra, rb, &m));
    EXPECT_STR_CONTAINS(rv_errmsg(), "position 9 (list b, rank 2) out of range");
    int64_t neg = -1;
    EXPECT_STATUS(RV_E_RANGE, rv_records_union(9, 1, &neg, 0, NULL, u, ra, rb, &m));
    ASSERT_OK(rv_records_union(0, 0, NULL, 0, NULL, NULL, NULL, NULL, &m));
    EXPECT_EQ(m, 0);
    /* allocation failures: three buffers */
    for (uint64_t fail = 1;; fail++) {
        rv__test_fail_alloc_after(fail);
        rv_status st = rv_records_union(10, 2, x + 1, 2, y, u, ra, rb, &m);
        uint64_t made = rv__test_fail_alloc_after(0);
        if (st == RV_OK) {
            ASSERT_TRUE(made < fail);
            EXPECT_TRUE(m == 4 && u[0] == 1 && u[3] == 9 && ra[1] == 1 && rb[0] == 1);
            EXPECT_EQ(fail, 4u);
            break;
        }
        ASSERT_EQ(st, RV_E_NOMEM);
        EXPECT_EQ(m, 0);
    }
}

/* rv_records_rrf: each record's two terms, in order, against the sum
** written out; ranks of one list only, of neither, large ranks and rrf_k;
** the refusals. */
static void test_rrf(void) {
    int64_t ra[6] = {1, 0, 3, 0, 1000000007, 2}, rb[6] = {2, 5, 0, 0, 1, 2};
    double out[6];
    for (int64_t k = 1; k <= 100; k += 33) {
        ASSERT_OK(rv_records_rrf(6, ra, rb, k, out));
        for (size_t i = 0; i < 6; i++) {
            double want = 0.0;
            if (ra[i]) want = 1.0 / (double)(k + ra[i]);
            if (rb[i]) want += 1.0 / (double)(k + rb[i]);
            EXPECT_TRUE(memcmp(&out[i], &want, sizeof want) == 0);
        }
        EXPECT_TRUE(out[3] == 0.0);
        EXPECT_TRUE(out[5] == 2.0 / (double)(k + 2));
    }
    /* (1 / 3 + 1 / 4 rounds differently from 1 / 4 + 1 / 3 for some sums:
    ** the order is fixed, a's term first) */
    ASSERT_OK(rv_records_rrf(0, NULL, NULL, 60, NULL));
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_records_rrf(6, ra, rb, 0, out));
    EXPECT_STR_CONTAINS(rv_errmsg(), "rrf_k = 0");
    int64_t bad[2] = {1, -1};
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_records_rrf(2, ra, bad, 60, out));
    EXPECT_STR_CONTAINS(rv_errmsg(), "rank_b[1] = -1");
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_records_rrf(2, NULL, rb, 60, out));
}

/* rv_records_blend: 300 records (ids 3 i + 1) in a flat index and a BM25
** index; random ranks in two lists (scores from the indexes' own answers
** for the listed records, made-up ones for others), and each record's
** evidence against the formula with its cosine and BM25 score asked one at
** a time (rv_flat_rescore of it alone; rv_bm25_search restricted to it),
** every operation through a volatile double; asked for the best h only,
** the same values or -inf below the h-th best.  Then: no index, an all-zero
** query vector, the refusals, and allocation failures. */
enum { B_N = 300, B_D = 8 };

static double blend_reference(double alpha, double sat_k, double cos, double bm) {
    volatile double b = bm < 0.0 ? 0.0 : bm, lhs, w, num, den, rhs, sum;
    lhs = alpha * cos;
    w = 1.0 - alpha;
    num = w * b;
    den = b + sat_k;
    rhs = num / den;
    sum = lhs + rhs;
    return sum;
}

static double one_cosine(const rv_flat *ix, const float *q, int64_t id) {
    int64_t got;
    float s;
    size_t nf = 0;
    if (rv_flat_rescore(ix, 1, q, 1, &id, 1, 1, &got, &s, &nf) || nf != 1) return NAN;
    return (double)s;
}

static double one_bm25(const rv_bm25 *ix, const char *q, int64_t id) {
    rv_idset *set = NULL;
    int64_t got;
    float s;
    size_t nf = 0;
    if (rv_idset_create(&id, 1, &set)) return NAN;
    rv_status st = rv_bm25_search(ix, q, strlen(q), 1, 0, set, &got, &s, &nf, NULL);
    rv_idset_free(set);
    if (st) return NAN;
    return nf ? (double)s : 0.0;
}

static void test_blend(void) {
    static const char *const words[] = {"wing", "lift",     "drag",  "flow", "shock",
                                        "wave", "boundary", "layer", "heat", "jet"};
    static char text[B_N][64];
    static const char *texts[B_N];
    static size_t lens[B_N];
    static int64_t ids[B_N];
    static float v[B_N * B_D];
    rv_rng rng;
    rv_rng_seed(&rng, 11);
    for (size_t i = 0; i < B_N; i++) {
        ids[i] = (int64_t)(3 * i + 1);
        size_t len = 0;
        for (int w = 0; w < 4; w++) {
            const char *t =
                words[rv_rng_uniform(&rng) < 0.5 ? i % 10 : (size_t)(rv_rng_uniform(&rng) * 10)];
            len += (size_t)snprintf(text[i] + len, sizeof text[i] - len, "%s ", t);
        }
        texts[i] = text[i];
        lens[i] = len;
        for (size_t d = 0; d < B_D; d++) v[i * B_D + d] = (float)(rv_rng_uniform(&rng) * 2 - 1);
    }
    rv_flat_options fo;
    rv_flat_options_init(&fo);
    fo.dim = B_D;
    rv_flat *fl = NULL;
    rv_bm25 *bm = NULL;
    ASSERT_OK(rv_flat_create(&fo, &fl));
    ASSERT_OK(rv_flat_add(fl, B_N, v, ids, NULL));
    ASSERT_OK(rv_bm25_create(NULL, NULL, &bm));
    ASSERT_OK(rv_bm25_add(bm, B_N, texts, lens, ids, NULL, NULL, NULL));
    const char *query = "shock wave heat";
    float q[B_D];
    for (size_t d = 0; d < B_D; d++) q[d] = (float)(rv_rng_uniform(&rng) * 2 - 1);
    static int64_t cid[B_N], ra[B_N], rb[B_N];
    static double sa[B_N], sb[B_N], out[B_N];
    static double want_cos[B_N], want_bm[B_N];
    for (size_t i = 0; i < B_N; i++) {
        want_cos[i] = one_cosine(fl, q, ids[i]);
        want_bm[i] = one_bm25(bm, query, ids[i]);
    }
    size_t n_pruned = 0;
    for (int round = 0; round < 40; round++) {
        /* n records (a random subset, in random order), each in list a and
        ** list b with probability ~1/2 at a distinct rank */
        size_t n = 1 + (size_t)(rv_rng_uniform(&rng) * (round % 2 ? B_N : 70));
        size_t perm[B_N];
        for (size_t i = 0; i < B_N; i++) perm[i] = i;
        for (size_t i = B_N - 1; i > 0; i--) {
            size_t j = (size_t)(rv_rng_uniform(&rng) * (double)(i + 1));
            size_t t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        size_t na = 0, nb = 0;
        double expect[B_N];
        double alpha = round % 5 == 0 ? 0.0 : round % 5 == 1 ? 1.0 : rv_rng_uniform(&rng);
        double sat_k = 0.5 + 4 * rv_rng_uniform(&rng);
        for (size_t i = 0; i < n; i++) {
            size_t r = perm[i];
            cid[i] = ids[r];
            double c = want_cos[r], b = want_bm[r];
            ra[i] = rb[i] = 0;
            if (rv_rng_uniform(&rng) < 0.5) { /* listed: its score comes from the list */
                c = rv_rng_uniform(&rng) < 0.2 ? -0.75 : c;
                sa[na] = c;
                ra[i] = (int64_t)++na;
            }
            if (rv_rng_uniform(&rng) < 0.5) {
                b = rv_rng_uniform(&rng) < 0.2 ? -1.5 : b; /* (clamped to 0) */
                sb[nb] = b;
                rb[i] = (int64_t)++nb;
            }
            expect[i] = blend_reference(alpha, sat_k, c, b);
        }
        rv_records_blend_params p;
        rv_records_blend_params_init(&p);
        p.alpha = alpha;
        p.sat_k = sat_k;
        p.dense = fl;
        p.query_vector = q;
        p.n_threads = 1 + (uint32_t)(round % 3);
        p.lexical = bm;
        p.query = query;
        p.query_len = strlen(query);
        ASSERT_OK(rv_records_blend(&p, n, cid, ra, rb, na, sa, nb, sb, out));
        for (size_t i = 0; i < n; i++)
            EXPECT_TRUE(memcmp(&out[i], &expect[i], sizeof(double)) == 0);
        /* only the best h: every other record either its value or -inf,
        ** and -inf only below the h-th best (with the true bounds) */
        if (n > 1) {
            static double pruned[B_N], sorted[B_N];
            p.head = 1 + (size_t)(rv_rng_uniform(&rng) * (double)(n - 1));
            p.max_a = p.max_b = -INFINITY;
            for (size_t i = 0; i < n; i++) {
                size_t r = (size_t)((cid[i] - 1) / 3);
                if (!ra[i] && want_cos[r] > p.max_a) p.max_a = want_cos[r];
                if (!rb[i] && want_bm[r] > p.max_b) p.max_b = want_bm[r];
            }
            ASSERT_OK(rv_records_blend(&p, n, cid, ra, rb, na, sa, nb, sb, pruned));
            memcpy(sorted, expect, n * sizeof(double));
            for (size_t i = 1; i < n; i++) /* (descending) */
                for (size_t j = i; j > 0 && sorted[j - 1] < sorted[j]; j--) {
                    double x = sorted[j];
                    sorted[j] = sorted[j - 1];
                    sorted[j - 1] = x;
                }
            double edge = sorted[p.head - 1];
            for (size_t i = 0; i < n; i++) {
                if (pruned[i] == -INFINITY) {
                    n_pruned++;
                    EXPECT_TRUE(expect[i] < edge);
                } else {
                    EXPECT_TRUE(memcmp(&pruned[i], &expect[i], sizeof(double)) == 0);
                }
            }
            p.head = 0;
            p.max_a = p.max_b = INFINITY;
        }
        /* no indexes: the records a list lacks count 0 on that side */
        p.dense = NULL;
        p.lexical = NULL;
        ASSERT_OK(rv_records_blend(&p, n, cid, ra, rb, na, sa, nb, sb, out));
        for (size_t i = 0; i < n; i++) {
            double c = ra[i] ? sa[ra[i] - 1] : 0.0, b = rb[i] ? sb[rb[i] - 1] : 0.0;
            double e = blend_reference(alpha, sat_k, c, b);
            EXPECT_TRUE(memcmp(&out[i], &e, sizeof e) == 0);
        }
    }
    EXPECT_TRUE(n_pruned > 0);
    /* an all-zero query vector asks the flat index nothing */
    rv_records_blend_params p;
    rv_records_blend_params_init(&p);
    EXPECT_TRUE(p.alpha == 0.5 && p.sat_k == 1.0 && !p.dense && !p.lexical);
    float zero[B_D] = {0};
    p.dense = fl;
    p.query_vector = zero;
    int64_t one[1] = {ids[5]}, r0[1] = {0};
    ASSERT_OK(rv_records_blend(&p, 1, one, r0, r0, 0, NULL, 0, NULL, out));
    EXPECT_TRUE(out[0] == 0.0);
    /* the refusals */
    p.query_vector = q;
    p.alpha = 1.5;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_records_blend(&p, 1, one, r0, r0, 0, NULL, 0, NULL, out));
    EXPECT_STR_CONTAINS(rv_errmsg(), "alpha = 1.5");
    p.alpha = 0.5;
    p.sat_k = 0.0;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_records_blend(&p, 1, one, r0, r0, 0, NULL, 0, NULL, out));
    EXPECT_STR_CONTAINS(rv_errmsg(), "sat_k");
    p.sat_k = NAN;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_records_blend(&p, 1, one, r0, r0, 0, NULL, 0, NULL, out));
    p.sat_k = 1.0;
    int64_t r3[1] = {3};
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_records_blend(&p, 1, one, r3, r0, 2, sa, 0, NULL, out));
    EXPECT_STR_CONTAINS(rv_errmsg(), "rank_a[0] = 3");
    int64_t twice[2] = {ids[1], ids[1]}, r00[2] = {0, 0};
    EXPECT_STATUS(RV_E_INVALID_ARG,
                  rv_records_blend(&p, 2, twice, r00, r00, 0, NULL, 0, NULL, out));
    EXPECT_STR_CONTAINS(rv_errmsg(), "asked twice");
    int64_t absent[1] = {2}; /* (ids are 3 i + 1) */
    EXPECT_STATUS(RV_E_RANGE, rv_records_blend(&p, 1, absent, r0, r0, 0, NULL, 0, NULL, out));
    p.dense = NULL;
    p.lexical = bm;
    p.query = "wing";
    p.query_len = 4;
    int64_t negative[1] = {-4};
    EXPECT_STATUS(RV_E_INVALID_ARG,
                  rv_records_blend(&p, 1, negative, r0, r0, 0, NULL, 0, NULL, out));
    /* allocation failures, each allocation in turn: RV_E_NOMEM, or (where
    ** an index's search carries on without what it failed to allocate) the
    ** same answer; never anything else, nothing leaked (the sanitizer
    ** builds), until an injection point past the last allocation */
    p.dense = fl;
    for (size_t i = 0; i < 100; i++) {
        cid[i] = ids[i];
        ra[i] = rb[i] = 0;
    }
    double first[100];
    ASSERT_OK(rv_records_blend(&p, 100, cid, ra, rb, 0, NULL, 0, NULL, first));
    size_t n_nomem = 0;
    for (uint64_t fail = 1;; fail++) {
        rv__test_fail_alloc_after(fail);
        rv_status st = rv_records_blend(&p, 100, cid, ra, rb, 0, NULL, 0, NULL, out);
        uint64_t made = rv__test_fail_alloc_after(0);
        if (st == RV_OK) {
            EXPECT_TRUE(memcmp(out, first, sizeof first) == 0);
            if (made < fail) break; /* no allocation failed */
            continue;
        }
        ASSERT_EQ(st, RV_E_NOMEM);
        n_nomem++;
        ASSERT_TRUE(fail < 1000);
    }
    EXPECT_TRUE(n_nomem >= 3); /* ours, the rescore's, the id set's at least */
    rv_flat_free(fl);
    rv_bm25_free(bm);
}

int main(void) {
    RUN_TEST(test_unit_vector_rule);
    RUN_TEST(test_unit_vector_edges);
    RUN_TEST(test_any_nonzero);
    RUN_TEST(test_check_names_each_fault);
    RUN_TEST(test_hits_against_reference);
    RUN_TEST(test_hits_positions_given);
    RUN_TEST(test_hits_allocation_failures);
    RUN_TEST(test_search_is_flat_search_then_hits);
    RUN_TEST(test_search_hands_back_ties_and_unknown_ids);
    RUN_TEST(test_union_against_brute_force);
    RUN_TEST(test_rrf);
    RUN_TEST(test_blend);
    return RV_TEST_SUMMARY();
}
