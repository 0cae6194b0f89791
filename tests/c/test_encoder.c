/*
** Tests of the int8 text encoder (include/rowvoi/encoder.h) on a small
** random model: every kernel this CPU has with either attention, batch
** invariance bit for bit, agreement between kernels (the two AVX-512 ones
** bit for bit), argument errors and allocation failures.
*/
#include <stdlib.h>

#include "rv_test.h"

#ifndef EXPECT_STR_EQ
#  define EXPECT_STR_EQ(a, b) RVT__STR_EQ(a, b, (void)0)
#endif

#define H  64
#define NH 4
#define F  128
#define NL 2
#define V  50
#define P  40
#define NT 2
#define NO 2

typedef struct model {
    int8_t word[V * H], pos[P * H], type[NT * H];
    float word_s[V], pos_s[P], type_s[NT], eg[H], eb[H];
    int8_t w[NL][4][F * 3 * H];
    float sc[NL][4][3 * H > F ? 3 * H : F], bias[NL][4][3 * H > F ? 3 * H : F];
    float orows[NL][2][NO * (3 * H > F ? 3 * H : F)];
    uint32_t och[NL][2][NO];
    float ln[NL][4][H];
    rv_encoder_layer layer[NL];
    rv_encoder_spec spec;
} model;

static rv_rng RNG;        /* seeded in main */
static double rnd(void) { /* uniform in [0, 1) */
    return rv_rng_uniform(&RNG);
}
static int8_t rq(void) {
    return (int8_t)((int)(rnd() * 255) - 127);
}

static void fill(model *m) {
    for (size_t i = 0; i < sizeof m->word; i++) m->word[i] = rq();
    for (size_t i = 0; i < sizeof m->pos; i++) m->pos[i] = rq();
    for (size_t i = 0; i < sizeof m->type; i++) m->type[i] = rq();
    for (int i = 0; i < V; i++) m->word_s[i] = (float)(0.002 + 0.01 * rnd());
    for (int i = 0; i < P; i++) m->pos_s[i] = (float)(0.002 + 0.01 * rnd());
    for (int i = 0; i < NT; i++) m->type_s[i] = (float)(0.002 + 0.01 * rnd());
    for (int i = 0; i < H; i++) {
        m->eg[i] = (float)(0.5 + rnd());
        m->eb[i] = (float)(rnd() - 0.5);
    }
    uint32_t dims[4][2] = {{H, 3 * H}, {H, H}, {H, F}, {F, H}};
    for (int l = 0; l < NL; l++) {
        rv_encoder_linear *lin[4] = {&m->layer[l].qkv, &m->layer[l].out, &m->layer[l].up,
                                     &m->layer[l].down};
        for (int j = 0; j < 4; j++) {
            uint32_t k = dims[j][0], n = dims[j][1];
            for (size_t i = 0; i < (size_t)k * n; i++) m->w[l][j][i] = rq();
            for (uint32_t i = 0; i < n; i++) {
                m->sc[l][j][i] = (float)(0.5 / (127 * 8) * (0.5 + rnd()));
                m->bias[l][j][i] = (float)(0.2 * (rnd() - 0.5));
            }
            lin[j]->weight = m->w[l][j];
            lin[j]->scale = m->sc[l][j];
            lin[j]->bias = m->bias[l][j];
            lin[j]->n_outliers = 0;
            if (j == 0 || j == 2) { /* qkv and up read a LayerNorm output */
                int o = j / 2;
                m->och[l][o][0] = 3;
                m->och[l][o][1] = 17;
                for (int c = 0; c < NO; c++)
                    for (uint32_t i = 0; i < n; i++) {
                        m->w[l][j][(size_t)m->och[l][o][c] * n + i] = 0;
                        m->orows[l][o][c * n + i] = (float)(0.05 * (rnd() - 0.5));
                    }
                lin[j]->n_outliers = NO;
                lin[j]->outliers = m->och[l][o];
                lin[j]->outlier_rows = m->orows[l][o];
            }
        }
        for (int j = 0; j < 4; j++)
            for (int i = 0; i < H; i++) m->ln[l][j][i] = (float)(j % 2 ? rnd() - 0.5 : 0.5 + rnd());
        m->layer[l].ln1_gamma = m->ln[l][0];
        m->layer[l].ln1_beta = m->ln[l][1];
        m->layer[l].ln2_gamma = m->ln[l][2];
        m->layer[l].ln2_beta = m->ln[l][3];
    }
    rv_encoder_spec *s = &m->spec;
    memset(s, 0, sizeof *s);
    s->hidden = H;
    s->heads = NH;
    s->ffn = F;
    s->layers = NL;
    s->vocab = V;
    s->max_positions = P;
    s->type_vocab = NT;
    s->ln_eps = 1e-12f;
    s->attn_scale = 0.5f; /* 16 ** -0.25 */
    s->word = m->word;
    s->position = m->pos;
    s->type = m->type;
    s->word_scale = m->word_s;
    s->position_scale = m->pos_s;
    s->type_scale = m->type_s;
    s->emb_gamma = m->eg;
    s->emb_beta = m->eb;
    s->layer = m->layer;
}

static model M;

/* Three texts of 1, 7 and 40 tokens. */
static size_t OFF[4] = {0, 1, 8, 48};
static int32_t IDS[48], TYPES[48];

static void make_input(void) {
    for (int i = 0; i < 48; i++) {
        IDS[i] = (int32_t)(rnd() * V);
        TYPES[i] = i % 5 == 0;
    }
}

static const char *KERNELS[] = {"portable", "avx2", "avx512-vnni", "avx512-bf16"};

/* Each kernel with one attention (RV_ENCODER_ATTN_*); the two AVX-512
** kernels give the same bits (with bfloat16 attention one rounds, the
** other has the instructions). */
static void kernels_batch_invariant_and_agreeing(uint32_t attention) {
    float ref[3 * H], vnni[3 * H];
    int have_ref = 0, have_vnni = 0;
    M.spec.attention = attention;
    for (int k = 0; k < 4; k++) {
        M.spec.kernel = KERNELS[k];
        rv_encoder *e = NULL;
        rv_status st = rv_encoder_create(&M.spec, &e);
        if (st == RV_E_STATE) continue; /* this CPU lacks the kernel */
        ASSERT_OK(st);
        EXPECT_STR_EQ(rv_encoder_kernel(e), KERNELS[k]);
        EXPECT_EQ(rv_encoder_dim(e), H);
        float all[3 * H], one[H];
        ASSERT_OK(rv_encoder_encode(e, 3, OFF, IDS, TYPES, all));
        for (int i = 0; i < 3; i++) {
            size_t off1[2] = {0, OFF[i + 1] - OFF[i]};
            ASSERT_OK(rv_encoder_encode(e, 1, off1, IDS + OFF[i], TYPES + OFF[i], one));
            /* alone and in a batch: the same bits */
            EXPECT_TRUE(memcmp(one, all + i * H, sizeof one) == 0);
            double n2 = 0;
            for (int c = 0; c < H; c++) n2 += (double)one[c] * one[c];
            EXPECT_NEAR(n2, 1.0, 1e-5);
        }
        /* every run the same */
        float again[3 * H];
        ASSERT_OK(rv_encoder_encode(e, 3, OFF, IDS, TYPES, again));
        EXPECT_TRUE(memcmp(again, all, sizeof all) == 0);
        /* type ids matter; NULL means all 0 */
        float zero_types[3 * H];
        int32_t zeros[48] = {0};
        ASSERT_OK(rv_encoder_encode(e, 3, OFF, IDS, NULL, again));
        ASSERT_OK(rv_encoder_encode(e, 3, OFF, IDS, zeros, zero_types));
        EXPECT_TRUE(memcmp(again, zero_types, sizeof again) == 0);
        EXPECT_TRUE(memcmp(again, all, sizeof all) != 0);
        if (k == 2) {
            memcpy(vnni, all, sizeof vnni);
            have_vnni = 1;
        }
        if (k == 3 && have_vnni) EXPECT_TRUE(memcmp(vnni, all, sizeof all) == 0);
        if (!have_ref) {
            memcpy(ref, all, sizeof ref);
            have_ref = 1;
        } else {
            /* kernels differ only in the float32 steps' last bits */
            for (int i = 0; i < 3; i++) {
                double d = 0;
                for (int c = 0; c < H; c++) d += (double)ref[i * H + c] * all[i * H + c];
                EXPECT_LE(0.9999, d);
            }
        }
        rv_encoder_free(e);
    }
    M.spec.kernel = NULL;
    M.spec.attention = RV_ENCODER_ATTN_FLOAT32;
    EXPECT_TRUE(have_ref);
}

static void test_kernels_batch_invariant_and_agreeing(void) {
    kernels_batch_invariant_and_agreeing(RV_ENCODER_ATTN_FLOAT32);
    kernels_batch_invariant_and_agreeing(RV_ENCODER_ATTN_BFLOAT16);
}

/* The three texts' vectors (out: 3 * H) on an encoder of M with the given
** attention and the best kernel. */
static void encode_all(uint32_t attention, float *out) {
    rv_encoder *e = NULL;
    M.spec.attention = attention;
    ASSERT_OK(rv_encoder_create(&M.spec, &e));
    M.spec.attention = RV_ENCODER_ATTN_FLOAT32;
    ASSERT_OK(rv_encoder_encode(e, 3, OFF, IDS, TYPES, out));
    rv_encoder_free(e);
}

/* bfloat16 attention changes the vectors, a little. */
static void test_bfloat16_attention_is_near_float32(void) {
    float a[3 * H], b[3 * H];
    encode_all(RV_ENCODER_ATTN_FLOAT32, a);
    encode_all(RV_ENCODER_ATTN_BFLOAT16, b);
    for (int i = 1; i < 3; i++) { /* (text 0, one token: only its values round) */
        double d = 0;
        for (int c = 0; c < H; c++) d += (double)a[i * H + c] * b[i * H + c];
        EXPECT_LE(0.999, d);
        EXPECT_TRUE(memcmp(a + i * H, b + i * H, H * sizeof(float)) != 0);
    }
}

static void test_create_errors(void) {
    rv_encoder *e = NULL;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_encoder_create(NULL, &e));
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_encoder_create(&M.spec, NULL));
    rv_encoder_spec s = M.spec;
    s.hidden = 48;
    EXPECT_STATUS(RV_E_SHAPE, rv_encoder_create(&s, &e));
    s = M.spec;
    s.heads = 8; /* head size 8: not a multiple of 16 */
    EXPECT_STATUS(RV_E_SHAPE, rv_encoder_create(&s, &e));
    s = M.spec;
    s.layers = 0;
    EXPECT_STATUS(RV_E_RANGE, rv_encoder_create(&s, &e));
    s = M.spec;
    s.ln_eps = NAN;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_encoder_create(&s, &e));
    s = M.spec;
    s.kernel = "sse9";
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_encoder_create(&s, &e));
    EXPECT_STR_CONTAINS(rv_errmsg(), "sse9");
    s = M.spec;
    s.attention = 2;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_encoder_create(&s, &e));
    EXPECT_STR_CONTAINS(rv_errmsg(), "attention = 2");
    s = M.spec;
    s.word_scale = NULL;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_encoder_create(&s, &e));
    EXPECT_STR_CONTAINS(rv_errmsg(), "word_scale");
    /* a bad array inside a layer is named, and nothing leaks */
    float keep = M.sc[1][2][5];
    M.sc[1][2][5] = -1.0f;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_encoder_create(&M.spec, &e));
    EXPECT_STR_CONTAINS(rv_errmsg(), "layer[1].up.scale[5]");
    M.sc[1][2][5] = keep;
    uint32_t och = M.och[0][0][1];
    M.och[0][0][1] = 2; /* not ascending */
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_encoder_create(&M.spec, &e));
    EXPECT_STR_CONTAINS(rv_errmsg(), "layer[0].qkv.outliers");
    M.och[0][0][1] = och;
    M.layer[0].down.n_outliers = 1;
    M.layer[0].down.outliers = M.och[0][0];
    M.layer[0].down.outlier_rows = M.orows[0][0];
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_encoder_create(&M.spec, &e));
    M.layer[0].down.n_outliers = 0;
    EXPECT_TRUE(e == NULL);
    rv_encoder_free(NULL);
    EXPECT_STR_EQ(rv_encoder_kernel(NULL), "");
    EXPECT_EQ(rv_encoder_dim(NULL), 0);
}

static void test_encode_errors(void) {
    rv_encoder *e = NULL;
    ASSERT_OK(rv_encoder_create(&M.spec, &e));
    float out[3 * H];
    EXPECT_OK(rv_encoder_encode(e, 0, NULL, NULL, NULL, NULL));
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_encoder_encode(NULL, 1, OFF, IDS, NULL, out));
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_encoder_encode(e, 1, NULL, IDS, NULL, out));
    int32_t ids[48];
    memcpy(ids, IDS, sizeof ids);
    ids[10] = V;
    EXPECT_STATUS(RV_E_RANGE, rv_encoder_encode(e, 3, OFF, ids, NULL, out));
    EXPECT_STR_CONTAINS(rv_errmsg(), "text 2, token 2");
    ids[10] = -1;
    EXPECT_STATUS(RV_E_RANGE, rv_encoder_encode(e, 3, OFF, ids, NULL, out));
    int32_t types[48] = {0};
    types[47] = NT;
    EXPECT_STATUS(RV_E_RANGE, rv_encoder_encode(e, 3, OFF, IDS, types, out));
    EXPECT_STR_CONTAINS(rv_errmsg(), "type id");
    size_t empty[3] = {0, 1, 1};
    EXPECT_STATUS(RV_E_RANGE, rv_encoder_encode(e, 2, empty, IDS, NULL, out));
    EXPECT_STR_CONTAINS(rv_errmsg(), "text 1 holds 0 tokens");
    size_t start[2] = {1, 3};
    EXPECT_STATUS(RV_E_RANGE, rv_encoder_encode(e, 1, start, IDS, NULL, out));
    size_t down[3] = {0, 5, 3};
    EXPECT_STATUS(RV_E_RANGE, rv_encoder_encode(e, 2, down, IDS, NULL, out));
    int32_t many[P + 1] = {0};
    size_t toolong[2] = {0, P + 1};
    EXPECT_STATUS(RV_E_RANGE, rv_encoder_encode(e, 1, toolong, many, NULL, out));
    size_t full[2] = {0, P};
    EXPECT_OK(rv_encoder_encode(e, 1, full, many, NULL, out));
    rv_encoder_free(e);
}

static void test_allocation_failures(void) {
    float want[3 * H], got[3 * H];
    rv_encoder *e = NULL;
    encode_all(RV_ENCODER_ATTN_FLOAT32, want);
    for (uint64_t n = 1; n < 200; n++) {
        e = NULL;
        rv__test_fail_alloc_after(n);
        rv_status st = rv_encoder_create(&M.spec, &e);
        if (st == RV_OK) st = rv_encoder_encode(e, 3, OFF, IDS, TYPES, got);
        uint64_t done = rv__test_fail_alloc_after(0);
        if (done < n) { /* no failure reached */
            EXPECT_OK(st);
            EXPECT_TRUE(memcmp(got, want, sizeof got) == 0);
            rv_encoder_free(e);
            break;
        }
        EXPECT_STATUS(RV_E_NOMEM, st);
        rv_encoder_free(e);
    }
}

int main(void) {
    rv_rng_seed(&RNG, 12345);
    fill(&M);
    make_input();
    RUN_TEST(test_kernels_batch_invariant_and_agreeing);
    RUN_TEST(test_bfloat16_attention_is_near_float32);
    RUN_TEST(test_create_errors);
    RUN_TEST(test_encode_errors);
    RUN_TEST(test_allocation_failures);
    return RV_TEST_SUMMARY();
}
