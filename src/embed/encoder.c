/*
** The int8 text encoder (include/rowvoi/encoder.h).
**
** Layout of a call: the texts' tokens are rows 0 .. T-1, back to back.
** The buffers of the whole call are x (each row's hidden state), qkv (its
** queries, keys and values, head-major: one block of rows per part and
** head) and ctx (its attention context); everything
** else runs on chunks of RV__ENC_CHUNK rows that stay in the caches: after
** a layer's attention, one chunk goes through the output product, the
** residual and LayerNorm, the feed-forward products with their GELU, the
** second LayerNorm and the next layer's query/key/value product before the
** next chunk starts.  Rows never mix outside the attention, and the
** attention reads one text's rows only, so a text's result does not depend
** on the batch.
**
** Integer products (per kernel, packed at creation):
**   avx512-vnni  vpdpbusd: activations as unsigned bytes (value + 128),
**                weights signed, 6 rows x 64 columns per step of 4 inputs;
**                128 * each column's weight sum is subtracted after;
**   avx2         vpmaddwd: both as 16-bit integers, 4 rows x 16 columns
**                per step of 2 inputs (exact, no saturating sums);
**   portable     int32 sums in plain C.
** Each gives the exact integer sums, then float(sum) * column scale * row
** scale.  avx512-bf16 is avx512-vnni whose bfloat16 attention runs on
** vdpbf16ps (rv__attention_bf16); the other kernels round to bfloat16 and
** sum in that instruction's order (encoder_body.h, attention).
*/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../internal.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(RV_NO_MULTIVERSION)
#  define RV__ENC_X86 1
#  include <immintrin.h>
#  define RV__T_AVX2 __attribute__((target("avx2,fma")))
#  define RV__T_VNNI                                                                               \
      __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma")))
#  define RV__T_BF16                                                                               \
      __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx512bf16,avx2,fma")))
#endif

/* Rows of one chunk (a multiple of the products' 6-row blocks). */
#define RV__ENC_CHUNK 48
/* Most float lanes of a kernel's vector (the attention's block of queries). */
#define RV__ENC_VW_MAX 16

/* RV__K_BF16 is RV__K_VNNI with the bfloat16 instructions for a bfloat16
** attention (rv__attention_bf16). */
enum { RV__K_PORTABLE = 0, RV__K_AVX2 = 1, RV__K_VNNI = 2, RV__K_BF16 = 3 };
static const char *const rv__enc_kernel_names[] = {"portable", "avx2", "avx512-vnni",
                                                   "avx512-bf16"};

typedef struct rv__lin {
    uint32_t k, n, n_out;
    void *packed;     /* the weights in the kernel's layout */
    int32_t *corr;    /* avx512-vnni: 128 * column sums */
    float *scale;     /* n */
    float *bias;      /* n */
    uint32_t *out_ch; /* n_out */
    float *out_rows;  /* n_out x n */
    float *keep;      /* k: 0 at the outlier channels, else 1 (NULL without) */
} rv__lin;

typedef struct rv__layer {
    rv__lin qkv, out, up, down;
    float *ln1_gamma, *ln1_beta, *ln2_gamma, *ln2_beta;
} rv__layer;

/* The buffers of one call (encoder.c's comment). */
typedef struct rv__enc_ws {
    uint32_t *pos;      /* T: each row's position in its text */
    float *x, *ctx;     /* T x hidden each */
    float *qkv;         /* 3 * heads blocks of Tp x head size (finish_qkv) */
    size_t Tp;          /* T and 16 zero rows (a last key tile reads them) */
    float *y, *h1;      /* chunk x ldy, chunk x hidden */
    uint8_t *a;         /* chunk x lda quantised activations */
    float *s, *xo, *am; /* chunk row scales, chunk x outliers, chunk row maxima */
    float *att;         /* the attention's block: queries, scores, context */
    void *gemm;         /* the kernel's own scratch */
    size_t lda, ldy;
} rv__enc_ws;

struct rv_encoder;
typedef void (*rv__enc_gemm_fn)(const rv__lin *L, const uint8_t *A, size_t lda, const float *s,
                                size_t rows, float *Y, size_t ldy, void *scratch);
typedef void (*rv__enc_fwd_fn)(const struct rv_encoder *m, size_t n, const size_t *off,
                               const int32_t *ids, const int32_t *types, float *out, rv__enc_ws *w);
/* The self-attention of one text (encoder_body.h, attention). */
typedef void (*rv__enc_att_fn)(const struct rv_encoder *m, const float *q0, size_t Tp, size_t L,
                               float *ctx, float *scratch);

struct rv_encoder {
    uint32_t hidden, heads, ffn, layers, vocab, max_positions, type_vocab, max_out;
    float ln_eps, attn_scale;
    int8_t *word, *position, *type;
    float *word_scale, *position_scale, *type_scale, *emb_gamma, *emb_beta;
    rv__layer *layer;
    uint32_t attn_bf16; /* 1: spec.attention was RV_ENCODER_ATTN_BFLOAT16 */
    int kernel;
    rv__enc_fwd_fn forward;
    rv__enc_att_fn attend;
};

/* Each text's mean row (double sums in token order), L2-normalised. */
static void rv__enc_pool(const float *x, uint32_t h, size_t n, const size_t *off, float *out) {
    double acc[RV_ENCODER_MAX_HIDDEN];
    for (size_t i = 0; i < n; i++) {
        for (uint32_t c = 0; c < h; c++) acc[c] = 0;
        for (size_t t = off[i]; t < off[i + 1]; t++)
            for (uint32_t c = 0; c < h; c++) acc[c] += x[t * h + c];
        double len = (double)(off[i + 1] - off[i]), ss = 0;
        for (uint32_t c = 0; c < h; c++) {
            acc[c] /= len;
            ss += acc[c] * acc[c];
        }
        double norm = sqrt(ss);
        if (norm < 1e-12) norm = 1e-12;
        for (uint32_t c = 0; c < h; c++) out[i * h + c] = (float)(acc[c] / norm);
    }
}

/* ------------------------------------------------------ integer products */

/* portable: packed = the k x n weights as given; scratch: n int32 */
static void rv__gemm_portable(const rv__lin *L, const uint8_t *A, size_t lda, const float *s,
                              size_t rows, float *Y, size_t ldy, void *scratch) {
    const int8_t *W = (const int8_t *)L->packed;
    int32_t *acc = (int32_t *)scratch;
    for (size_t r = 0; r < rows; r++) {
        memset(acc, 0, (size_t)L->n * sizeof *acc);
        const uint8_t *a = A + r * lda;
        for (uint32_t k = 0; k < L->k; k++) {
            int32_t v = (int32_t)a[k] - 128;
            if (!v) continue;
            const int8_t *w = W + (size_t)k * L->n;
            for (uint32_t c = 0; c < L->n; c++) acc[c] += v * w[c];
        }
        float *y = Y + r * ldy;
        for (uint32_t c = 0; c < L->n; c++) y[c] = (float)acc[c] * L->scale[c] * s[r];
    }
}

static void rv__pack_portable(rv__lin *L, const int8_t *W) {
    memcpy(L->packed, W, (size_t)L->k * L->n);
}

#ifdef RV__ENC_X86
/* Weights in panels of `cols` columns: per step of `grp` inputs, each
** column's grp weights side by side (into d16 as int16, else into d8).
** avx2: 16 columns, pairs (two vectors of 8 columns); avx512-vnni: 64
** columns, quads (four vectors of 16). */
static void rv__pack_panels(const rv__lin *L, const int8_t *W, size_t cols, size_t grp,
                            int16_t *d16, int8_t *d8) {
    size_t G = L->k / grp, n = L->n;
    for (size_t p = 0; p < n / cols; p++)
        for (size_t g = 0; g < G; g++)
            for (size_t c = 0; c < cols; c++)
                for (size_t t = 0; t < grp; t++) {
                    size_t at = ((p * G + g) * cols + c) * grp + t;
                    int8_t w = W[(grp * g + t) * n + cols * p + c];
                    if (d16)
                        d16[at] = w;
                    else
                        d8[at] = w;
                }
}

static void rv__pack_avx2(rv__lin *L, const int8_t *W) {
    rv__pack_panels(L, W, 16, 2, (int16_t *)L->packed, NULL);
}

#  define RV__AVX2_ROW(r)                                                                          \
      if (mrc > r) {                                                                               \
          int32_t a32;                                                                             \
          memcpy(&a32, A + r * lda + 2 * g, 4);                                                    \
          __m256i a = _mm256_set1_epi32(a32);                                                      \
          c##r##0 = _mm256_add_epi32(c##r##0, _mm256_madd_epi16(a, b0));                           \
          c##r##1 = _mm256_add_epi32(c##r##1, _mm256_madd_epi16(a, b1));                           \
      }
#  define RV__AVX2_OUT1(r, v)                                                                      \
      _mm256_storeu_ps(                                                                            \
          Y + r * ldy + 8 * v,                                                                     \
          _mm256_mul_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(c##r##v), w##v), _mm256_set1_ps(s[r])))
#  define RV__AVX2_OUT(r)                                                                          \
      if (mrc > r) {                                                                               \
          RV__AVX2_OUT1(r, 0);                                                                     \
          RV__AVX2_OUT1(r, 1);                                                                     \
      }
#  define RV__AVX2_ZERO(r) __m256i c##r##0 = _mm256_setzero_si256(), c##r##1 = c##r##0
#  define RV__AVX2_KERNEL(MR)                                                                      \
      RV__T_AVX2 static void rv__avx2_k##MR(const int16_t *Bp, size_t G, const int16_t *A,         \
                                            size_t lda, const float *sc, const float *s, float *Y, \
                                            size_t ldy) {                                          \
          const int mrc = MR;                                                                      \
          RV__AVX2_ZERO(0);                                                                        \
          RV__AVX2_ZERO(1);                                                                        \
          RV__AVX2_ZERO(2);                                                                        \
          RV__AVX2_ZERO(3);                                                                        \
          for (size_t g = 0; g < G; g++) {                                                         \
              __m256i b0 = _mm256_loadu_si256((const __m256i *)(Bp + g * 32));                     \
              __m256i b1 = _mm256_loadu_si256((const __m256i *)(Bp + g * 32 + 16));                \
              RV__AVX2_ROW(0) RV__AVX2_ROW(1) RV__AVX2_ROW(2) RV__AVX2_ROW(3)                      \
          }                                                                                        \
          __m256 w0 = _mm256_loadu_ps(sc), w1 = _mm256_loadu_ps(sc + 8);                           \
          RV__AVX2_OUT(0) RV__AVX2_OUT(1) RV__AVX2_OUT(2) RV__AVX2_OUT(3)                          \
      }
RV__AVX2_KERNEL(1)
RV__AVX2_KERNEL(2)
RV__AVX2_KERNEL(3)
RV__AVX2_KERNEL(4)

/* The kernel of a block of 1 .. 4 rows. */
typedef void (*rv__avx2_kernel)(const int16_t *, size_t, const int16_t *, size_t, const float *,
                                const float *, float *, size_t);
static const rv__avx2_kernel rv__avx2_k[5] = {NULL, rv__avx2_k1, rv__avx2_k2, rv__avx2_k3,
                                              rv__avx2_k4};

/* scratch: rows x k int16 (the activations minus 128) */
RV__T_AVX2 static void rv__gemm_avx2(const rv__lin *L, const uint8_t *A, size_t lda, const float *s,
                                     size_t rows, float *Y, size_t ldy, void *scratch) {
    int16_t *A16 = (int16_t *)scratch;
    size_t k = L->k, G = k / 2;
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < k; c++) A16[r * k + c] = (int16_t)((int)A[r * lda + c] - 128);
    const int16_t *B = (const int16_t *)L->packed;
    for (size_t p = 0; p < L->n / 16; p++) {
        const int16_t *Bp = B + p * G * 32;
        for (size_t r0 = 0; r0 < rows; r0 += 4) {
            size_t mr = rows - r0 < 4 ? rows - r0 : 4;
            const int16_t *a = A16 + r0 * k;
            const float *sc = L->scale + 16 * p, *sr = s + r0;
            float *y = Y + r0 * ldy + 16 * p;
            rv__avx2_k[mr](Bp, G, a, k, sc, sr, y, ldy);
        }
    }
}

/* avx512-vnni: rv__pack_panels, and 128 * each column's sum. */
static void rv__pack_vnni(rv__lin *L, const int8_t *W) {
    size_t n = L->n;
    rv__pack_panels(L, W, 64, 4, NULL, (int8_t *)L->packed);
    for (size_t c = 0; c < n; c++) {
        int32_t sum = 0;
        for (size_t k = 0; k < L->k; k++) sum += W[k * n + c];
        L->corr[c] = 128 * sum;
    }
}

/* acc += the dot products of a's unsigned and b's signed byte quads.  GCC
** (12) copies the accumulator of the intrinsic to another register and
** back at every call, and spills all 24 of the kernel's every step; the
** instruction itself, with its accumulator tied, keeps them in place. */
RV__T_VNNI static inline __m512i rv__dpbusd(__m512i acc, __m512i a, __m512i b) {
#  if defined(__GNUC__) && !defined(__clang__)
    __asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b));
    return acc;
#  else
    return _mm512_dpbusd_epi32(acc, a, b);
#  endif
}

/* One row of a step: broadcast its 4 activations, 4 dot products.  The
** accumulators are named variables (c<row><vector>): an array of them
** ends up on the stack, reloaded and stored every step. */
#  define RV__VNNI_ROW(r)                                                                          \
      if (mrc > r) {                                                                               \
          int32_t a32;                                                                             \
          memcpy(&a32, A + r * lda + 4 * g, 4);                                                    \
          __m512i a = _mm512_set1_epi32(a32);                                                      \
          c##r##0 = rv__dpbusd(c##r##0, a, b0);                                                    \
          c##r##1 = rv__dpbusd(c##r##1, a, b1);                                                    \
          c##r##2 = rv__dpbusd(c##r##2, a, b2);                                                    \
          c##r##3 = rv__dpbusd(c##r##3, a, b3);                                                    \
      }
#  define RV__VNNI_OUT1(r, v)                                                                      \
      _mm512_storeu_ps(                                                                            \
          Y + r * ldy + 16 * v,                                                                    \
          _mm512_mul_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(c##r##v, k##v)), w##v),  \
                        _mm512_set1_ps(s[r])))
#  define RV__VNNI_OUT(r)                                                                          \
      if (mrc > r) {                                                                               \
          RV__VNNI_OUT1(r, 0);                                                                     \
          RV__VNNI_OUT1(r, 1);                                                                     \
          RV__VNNI_OUT1(r, 2);                                                                     \
          RV__VNNI_OUT1(r, 3);                                                                     \
      }
#  define RV__VNNI_ZERO(r)                                                                         \
      __m512i c##r##0 = _mm512_setzero_si512(), c##r##1 = c##r##0, c##r##2 = c##r##0,              \
              c##r##3 = c##r##0
#  define RV__VNNI_KERNEL(MR)                                                                      \
      RV__T_VNNI static void rv__vnni_k##MR(const int8_t *Bp, size_t G, const uint8_t *A,          \
                                            size_t lda, const int32_t *corr, const float *sc,      \
                                            const float *s, float *Y, size_t ldy) {                \
          const int mrc = MR;                                                                      \
          RV__VNNI_ZERO(0);                                                                        \
          RV__VNNI_ZERO(1);                                                                        \
          RV__VNNI_ZERO(2);                                                                        \
          RV__VNNI_ZERO(3);                                                                        \
          RV__VNNI_ZERO(4);                                                                        \
          RV__VNNI_ZERO(5);                                                                        \
          for (size_t g = 0; g < G; g++) {                                                         \
              const int8_t *b = Bp + g * 256;                                                      \
              __m512i b0 = _mm512_loadu_si512(b), b1 = _mm512_loadu_si512(b + 64);                 \
              __m512i b2 = _mm512_loadu_si512(b + 128), b3 = _mm512_loadu_si512(b + 192);          \
              RV__VNNI_ROW(0)                                                                      \
              RV__VNNI_ROW(1) RV__VNNI_ROW(2) RV__VNNI_ROW(3) RV__VNNI_ROW(4) RV__VNNI_ROW(5)      \
          }                                                                                        \
          __m512i k0 = _mm512_loadu_si512(corr), k1 = _mm512_loadu_si512(corr + 16);               \
          __m512i k2 = _mm512_loadu_si512(corr + 32), k3 = _mm512_loadu_si512(corr + 48);          \
          __m512 w0 = _mm512_loadu_ps(sc), w1 = _mm512_loadu_ps(sc + 16);                          \
          __m512 w2 = _mm512_loadu_ps(sc + 32), w3 = _mm512_loadu_ps(sc + 48);                     \
          RV__VNNI_OUT(0)                                                                          \
          RV__VNNI_OUT(1) RV__VNNI_OUT(2) RV__VNNI_OUT(3) RV__VNNI_OUT(4) RV__VNNI_OUT(5)          \
      }
RV__VNNI_KERNEL(1)
RV__VNNI_KERNEL(2)
RV__VNNI_KERNEL(3)
RV__VNNI_KERNEL(4)
RV__VNNI_KERNEL(5)
RV__VNNI_KERNEL(6)

/* The kernel of a block of 1 .. 6 rows. */
typedef void (*rv__vnni_kernel)(const int8_t *, size_t, const uint8_t *, size_t, const int32_t *,
                                const float *, const float *, float *, size_t);
static const rv__vnni_kernel rv__vnni_k[7] = {NULL,        rv__vnni_k1, rv__vnni_k2, rv__vnni_k3,
                                              rv__vnni_k4, rv__vnni_k5, rv__vnni_k6};

RV__T_VNNI static void rv__gemm_vnni(const rv__lin *L, const uint8_t *A, size_t lda, const float *s,
                                     size_t rows, float *Y, size_t ldy, void *scratch) {
    (void)scratch;
    size_t G = L->k / 4;
    const int8_t *B = (const int8_t *)L->packed;
    for (size_t p = 0; p < L->n / 64; p++) {
        const int8_t *Bp = B + p * G * 256;
        const int32_t *corr = L->corr + 64 * p;
        const float *sc = L->scale + 64 * p;
        for (size_t r0 = 0; r0 < rows; r0 += 6) {
            size_t mr = rows - r0 < 6 ? rows - r0 : 6;
            const uint8_t *a = A + r0 * lda;
            const float *sr = s + r0;
            float *y = Y + r0 * ldy + 64 * p;
            rv__vnni_k[mr](Bp, G, a, lda, corr, sc, sr, y, ldy);
        }
    }
}
#endif /* RV__ENC_X86 */

/* ------------------------------------------------- the forward passes */

typedef float rv__v4f __attribute__((vector_size(16)));
typedef int32_t rv__v4i __attribute__((vector_size(16)));
/* max_ps's rule without SSE intrinsics: a where a > b, else b. */
static inline rv__v4f rv__max4(rv__v4f a, rv__v4f b) {
    rv__v4i m = a > b;
    return (rv__v4f)(((rv__v4i)a & m) | ((rv__v4i)b & ~m));
}

#define RV__SFX(name) name##_portable
#define RV__TGT
#define RV__VW           4
#define RV__FMA(a, b, c) ((a) * (b) + (c))
#define RV__SPLAT(x)     ((rv__v4f){(x), (x), (x), (x)})
#define RV__GEMM         rv__gemm_portable
#define RV__NK           8
#define RV__ND           8
#define RV__RCP(x)       (RV__SPLAT(1.0f) / (x))
#define RV__MAX(a, b)    rv__max4(a, b)
#include "encoder_body.h"

#ifdef RV__ENC_X86
/* r[0 .. 7] transposed in place: r[c] gets element c of every r[i], i its
** lane (unpacks and shuffles within 128-bit halves, then the halves). */
RV__T_AVX2 static inline __attribute__((always_inline)) void rv__transpose8(__m256 r[8]) {
    __m256 t[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
    /* r[4g + c]: columns c and c + 4 of rows 4g .. 4g + 3 */
    for (int g = 0; g < 8; g += 4) {
        r[g] = _mm256_shuffle_ps(t[g], t[g + 2], 0x44);
        r[g + 1] = _mm256_shuffle_ps(t[g], t[g + 2], 0xee);
        r[g + 2] = _mm256_shuffle_ps(t[g + 1], t[g + 3], 0x44);
        r[g + 3] = _mm256_shuffle_ps(t[g + 1], t[g + 3], 0xee);
    }
    for (int c = 0; c < 4; c++) {
        __m256 lo = r[c], hi = r[4 + c];
        r[c] = _mm256_permute2f128_ps(lo, hi, 0x20);
        r[4 + c] = _mm256_permute2f128_ps(lo, hi, 0x31);
    }
}

#  define RV__SFX(name)    name##_avx2
#  define RV__TGT          RV__T_AVX2
#  define RV__VW           8
#  define RV__FMA(a, b, c) ((__typeof__(a))_mm256_fmadd_ps((__m256)(a), (__m256)(b), (__m256)(c)))
#  define RV__SPLAT(x)     _mm256_set1_ps(x)
#  define RV__GEMM         rv__gemm_avx2
#  define RV__NK           8
#  define RV__ND           8
#  define RV__RCP(x)       (_mm256_set1_ps(1.0f) / (x))
#  define RV__MAX(a, b)    _mm256_max_ps((__m256)(a), (__m256)(b))
#  define RV__TRANSPOSE(t) rv__transpose8((__m256 *)(t))
#  include "encoder_body.h"

/* 1 / x for finite x >= 1: the 14-bit estimate and one Newton step (a
** division costs about 5x more here, and GELU takes one per element). */
RV__T_VNNI static inline __m512 rv__rcp16(__m512 x) {
    __m512 r = _mm512_rcp14_ps(x);
    return _mm512_mul_ps(r, _mm512_fnmadd_ps(x, r, _mm512_set1_ps(2.0f)));
}

/* vexp (encoder_body.h) with AVX-512's rounding and exponent scaling:
** the same reduction and polynomial, three operations fewer. */
RV__T_VNNI static inline __m512 rv__exp16(__m512 x) {
    x = _mm512_max_ps(x, _mm512_set1_ps(-87.0f));
    __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504f)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693145752f), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(1.42860677e-6f), r);
    __m512 p = _mm512_set1_ps(1.0f / 720);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    return _mm512_scalef_ps(p, n);
}

/* acc += a's bfloat16 pairs (one a lane) times the pair at p, broadcast:
** per lane acc += a.hi * p.hi, then acc += a.lo * p.lo (the products
** exact in float32, each sum rounded to nearest).  As for vpdpbusd, the
** instruction itself keeps GCC from copying the accumulators around. */
#  if defined(__GNUC__) && !defined(__clang__)
#    define RV__DPBF16(acc, a, p)                                                                  \
        __asm__("vdpbf16ps %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(a), "m"(*(const uint32_t *)(p)))
#  else
#    define RV__DPBF16(acc, a, p)                                                                  \
        ((acc) = _mm512_dpbf16_ps((acc), (__m512bh)(a), (__m512bh)_mm512_set1_epi32(*(p))))
#  endif

/* a and b in bfloat16, interleaved: lane i the pair (a[i], b[i]). */
RV__T_BF16 static inline __m512i rv__bf16_pairs(__m512 a, __m512 b) {
    const __m512i ilv = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24,
                                         8, 23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    return _mm512_permutexvar_epi16(ilv, (__m512i)_mm512_cvtne2ps_pbh(b, a)); /* a's 16, b's */
}

/* r[0 .. 15] transposed in place: r[c] gets element c of every r[i], i
** its lane (unpacks within 128-bit lanes, then the lanes themselves). */
RV__T_VNNI static inline __attribute__((always_inline)) void rv__transpose16(__m512 r[16]) {
    __m512 t[16];
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    /* r[4g + c]: columns c, c + 4, c + 8, c + 12 of rows 4g .. 4g + 3 */
    for (int g = 0; g < 16; g += 4)
        for (int c = 0; c < 2; c++) {
            __m512d a = (__m512d)t[g + c], b = (__m512d)t[g + c + 2];
            r[g + 2 * c] = (__m512)_mm512_unpacklo_pd(a, b);
            r[g + 2 * c + 1] = (__m512)_mm512_unpackhi_pd(a, b);
        }
    /* t[c] (c < 4): columns c and c + 8 of rows 0 .. 7; t[4 + c]: c + 4
    ** and c + 12; t[8 ..]: the same of rows 8 .. 15 */
    for (int h = 0; h < 2; h++)
        for (int c = 0; c < 4; c++) {
            t[8 * h + c] = _mm512_shuffle_f32x4(r[8 * h + c], r[8 * h + 4 + c], 0x88);
            t[8 * h + 4 + c] = _mm512_shuffle_f32x4(r[8 * h + c], r[8 * h + 4 + c], 0xdd);
        }
    for (int c = 0; c < 8; c++) {
        r[c] = _mm512_shuffle_f32x4(t[c], t[8 + c], 0x88);
        r[8 + c] = _mm512_shuffle_f32x4(t[c], t[8 + c], 0xdd);
    }
}

/* One tile of bfloat16 scores (score_tile of encoder_body.h): sc[u] = the
** queries' pairs qt (hp x 16) times key u's pairs (kj + u * hp); mx
** raised to the first `valid`.  Inlined with hp a constant, each key's
** pair is a constant offset from kj. */
RV__T_BF16 static inline __attribute__((always_inline)) __m512 rv__bf16_scores(
    const uint32_t *qt, const uint32_t *kj, uint32_t hp, size_t valid, float *sc, __m512 mx) {
    __m512 a[16];
    for (int u = 0; u < 16; u++) a[u] = _mm512_setzero_ps();
    for (uint32_t p = 0; p < hp; p++) {
        __m512i qv = _mm512_loadu_si512(qt + p * 16);
        for (int u = 0; u < 16; u++) RV__DPBF16(a[u], qv, kj + u * hp + p);
    }
    for (int u = 0; u < 16; u++) {
        _mm512_storeu_ps(sc + u * 16, a[u]);
        if ((size_t)u < valid) mx = _mm512_max_ps(mx, a[u]);
    }
    return mx;
}

/* The bfloat16 attention of encoder_body.h's attention (its comment) with
** vdpbf16ps: half the multiply-add instructions of float32, and the same
** bits as the template's rounding and order.  Per head the text's keys go
** to bfloat16 rows (kb: pairs of a row's elements), its values to pairs of
** keys (vb: element d of keys 2i and 2i + 1); per block of 16 queries
** their pairs transposed (qt: pair p of the 16 queries), the weights
** (pb, over the scores) to pairs of keys per lane; the context is
** transposed back in registers. */
RV__T_BF16 static void rv__attention_bf16(const struct rv_encoder *m, const float *q0, size_t Tp,
                                          size_t L, float *ctx, float *scratch) {
    const uint32_t h = m->hidden, nh = m->heads, hd = h / nh, hp = hd / 2;
    const size_t Lk = (L + 15) / 16 * 16, Lw = (L + 1) / 2; /* keys scored, pairs weighed */
    uint32_t *qt = (uint32_t *)scratch;                     /* hp x 16 */
    float *sc = scratch + hd * 16;                          /* Lk x 16: scores */
    uint32_t *pb = (uint32_t *)sc;                          /* Lw x 16: weights, over them */
    uint32_t *kb = (uint32_t *)(sc + Lk * 16);              /* Lk x hp */
    uint32_t *vb = kb + Lk * hp;                            /* Lw x hd */
    for (uint32_t head = 0; head < nh; head++) {
        const float *q = q0 + (size_t)head * Tp * hd;
        const float *k = q0 + ((size_t)nh + head) * Tp * hd;
        const float *v = q0 + (2 * (size_t)nh + head) * Tp * hd;
        for (size_t j = 0; j < Lk; j++)
            for (uint32_t d = 0; d < hd; d += 16) {
                __m512 x = j < L ? _mm512_loadu_ps(k + j * hd + d) : _mm512_setzero_ps();
                _mm256_storeu_si256((__m256i *)(kb + j * hp + d / 2),
                                    (__m256i)_mm512_cvtneps_pbh(x));
            }
        for (size_t i = 0; i < Lw; i++)
            for (uint32_t d = 0; d < hd; d += 16) {
                __m512 x0 = _mm512_loadu_ps(v + 2 * i * hd + d);
                __m512 x1 =
                    2 * i + 1 < L ? _mm512_loadu_ps(v + (2 * i + 1) * hd + d) : _mm512_setzero_ps();
                _mm512_storeu_si512(vb + i * hd + d, rv__bf16_pairs(x0, x1));
            }
        for (size_t i0 = 0; i0 < L; i0 += 16) {
            const size_t mr = L - i0 < 16 ? L - i0 : 16;
            /* the block's queries: 32 elements (16 pairs) of 16 rows a
            ** transpose */
            for (uint32_t d = 0; d < hd; d += 32) {
                __m512 r[16];
                for (size_t u = 0; u < 16; u++) {
                    const float *qr = q + (i0 + u) * hd + d;
                    __m512 lo = _mm512_setzero_ps(), hi = lo;
                    if (u < mr) lo = _mm512_loadu_ps(qr);
                    if (u < mr && d + 16 < hd) hi = _mm512_loadu_ps(qr + 16);
                    r[u] = (__m512)_mm512_cvtne2ps_pbh(hi, lo);
                }
                rv__transpose16(r);
                for (uint32_t p = 0; p < 16 && d / 2 + p < hp; p++)
                    _mm512_storeu_ps((float *)qt + (d / 2 + p) * 16, r[p]);
            }
            /* scores, a vector per key, and each lane's largest */
            __m512 mx = _mm512_set1_ps(-INFINITY);
            for (size_t j0 = 0; j0 < L; j0 += 16) {
                if (hp == 16) /* MiniLM's head */
                    mx = rv__bf16_scores(qt, kb + j0 * 16, 16, L - j0, sc + j0 * 16, mx);
                else
                    mx = rv__bf16_scores(qt, kb + j0 * hp, hp, L - j0, sc + j0 * 16, mx);
            }
            /* softmax: the weights of keys 2i and 2i + 1 to a pair per lane
            ** (pair i over score row i, read already) */
            __m512 sum = _mm512_setzero_ps();
            for (size_t i = 0; i < Lw; i++) {
                __m512 e0 = rv__exp16(_mm512_sub_ps(_mm512_loadu_ps(sc + 2 * i * 16), mx));
                __m512 e1 = _mm512_setzero_ps();
                sum = _mm512_add_ps(sum, e0);
                if (2 * i + 1 < L) {
                    e1 = rv__exp16(_mm512_sub_ps(_mm512_loadu_ps(sc + (2 * i + 1) * 16), mx));
                    sum = _mm512_add_ps(sum, e1);
                }
                _mm512_storeu_si512(pb + i * 16, rv__bf16_pairs(e0, e1));
            }
            __m512 inv = _mm512_div_ps(_mm512_set1_ps(1.0f), sum);
            /* the weighted values: a vector per column of the head, then
            ** transposed to the block's rows of ctx */
            for (uint32_t d0 = 0; d0 < hd; d0 += 16) {
                __m512 o[16];
                for (int u = 0; u < 16; u++) o[u] = _mm512_setzero_ps();
                for (size_t i = 0; i < Lw; i++) {
                    __m512i wv = _mm512_loadu_si512(pb + i * 16);
                    const uint32_t *vi = vb + i * hd + d0;
                    for (int u = 0; u < 16; u++) RV__DPBF16(o[u], wv, vi + u);
                }
                __m512 t[16]; /* not o, which then stays in registers */
                for (int u = 0; u < 16; u++) t[u] = _mm512_mul_ps(o[u], inv);
                rv__transpose16(t);
                for (size_t r = 0; r < mr; r++)
                    _mm512_storeu_ps(ctx + (i0 + r) * h + (size_t)head * hd + d0, t[r]);
            }
        }
    }
}

#  define RV__SFX(name)    name##_vnni
#  define RV__TGT          RV__T_VNNI
#  define RV__VW           16
#  define RV__FMA(a, b, c) ((__typeof__(a))_mm512_fmadd_ps((__m512)(a), (__m512)(b), (__m512)(c)))
#  define RV__SPLAT(x)     _mm512_set1_ps(x)
#  define RV__GEMM         rv__gemm_vnni
#  define RV__NK           16
#  define RV__ND           16
#  define RV__RCP(x)       rv__rcp16(x)
#  define RV__MAX(a, b)    _mm512_max_ps((__m512)(a), (__m512)(b))
#  define RV__EXP(x)       rv__exp16((__m512)(x))
#  define RV__TRANSPOSE(t) rv__transpose16((__m512 *)(t))
#  include "encoder_body.h"
#endif

/* ------------------------------------------------------------- creation */

static int rv__enc_cpu(int kernel) {
#ifdef RV__ENC_X86
    __builtin_cpu_init();
    if (kernel == RV__K_AVX2)
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (kernel == RV__K_BF16 && !__builtin_cpu_supports("avx512bf16")) return 0;
    if (kernel >= RV__K_VNNI)
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx2") &&
               __builtin_cpu_supports("fma");
#endif
    return kernel == RV__K_PORTABLE;
}

static rv_status rv__enc_finite(const float *a, size_t n, const char *name, int positive) {
    if (!a) return rv__null(name);
    for (size_t i = 0; i < n; i++)
        if (!isfinite(a[i]) || (positive && !(a[i] > 0)))
            return rv__error(RV_E_INVALID_ARG, "%s[%zu] = %g: must be finite%s", name, i,
                             (double)a[i], positive ? " and > 0" : "");
    return RV_OK;
}

static void *rv__enc_copy(const void *src, size_t bytes) {
    void *p = rv__malloc(bytes ? bytes : 1);
    if (p && bytes) memcpy(p, src, bytes);
    return p;
}

static void rv__lin_free(rv__lin *L) {
    rv__free(L->packed);
    rv__free(L->corr);
    rv__free(L->scale);
    rv__free(L->bias);
    rv__free(L->out_ch);
    rv__free(L->out_rows);
    rv__free(L->keep);
}

/* Check and copy one linear (k x n) of layer l into L. */
static rv_status rv__lin_make(rv__lin *L, const rv_encoder_linear *src, uint32_t k, uint32_t n,
                              int kernel, uint32_t l, const char *what) {
    char name[64];
    rv_status st;
    memset(L, 0, sizeof *L);
    L->k = k;
    L->n = n;
    snprintf(name, sizeof name, "layer[%u].%s.weight", (unsigned)l, what);
    if (!src->weight) return rv__null(name);
    snprintf(name, sizeof name, "layer[%u].%s.scale", (unsigned)l, what);
    if ((st = rv__enc_finite(src->scale, n, name, 1))) return st;
    snprintf(name, sizeof name, "layer[%u].%s.bias", (unsigned)l, what);
    if ((st = rv__enc_finite(src->bias, n, name, 0))) return st;
    if (src->n_outliers > RV_ENCODER_MAX_OUTLIERS || src->n_outliers >= k)
        return rv__error(RV_E_RANGE, "layer[%u].%s.n_outliers = %u: must be below %u and k",
                         (unsigned)l, what, (unsigned)src->n_outliers, RV_ENCODER_MAX_OUTLIERS);
    L->n_out = src->n_outliers;
    if (L->n_out) {
        snprintf(name, sizeof name, "layer[%u].%s.outliers", (unsigned)l, what);
        if (!src->outliers) return rv__null(name);
        for (uint32_t j = 0; j < L->n_out; j++)
            if (src->outliers[j] >= k || (j && src->outliers[j] <= src->outliers[j - 1]))
                return rv__error(RV_E_INVALID_ARG,
                                 "%s[%u] = %u: channels must ascend and be below %u", name,
                                 (unsigned)j, (unsigned)src->outliers[j], (unsigned)k);
        snprintf(name, sizeof name, "layer[%u].%s.outlier_rows", (unsigned)l, what);
        if ((st = rv__enc_finite(src->outlier_rows, (size_t)L->n_out * n, name, 0))) return st;
    }
    size_t wbytes = (size_t)k * n * (kernel == RV__K_AVX2 ? 2 : 1);
    L->packed = rv__malloc(wbytes);
    L->corr = (int32_t *)rv__calloc(n, sizeof(int32_t));
    L->scale = (float *)rv__enc_copy(src->scale, (size_t)n * sizeof(float));
    L->bias = (float *)rv__enc_copy(src->bias, (size_t)n * sizeof(float));
    L->out_ch = (uint32_t *)rv__enc_copy(src->outliers, (size_t)L->n_out * sizeof(uint32_t));
    L->out_rows = (float *)rv__enc_copy(src->outlier_rows, (size_t)L->n_out * n * sizeof(float));
    if (!L->packed || !L->corr || !L->scale || !L->bias || !L->out_ch || !L->out_rows)
        return rv__nomem("the encoder's weights");
    if (L->n_out) {
        L->keep = (float *)rv__malloc((size_t)k * sizeof(float));
        if (!L->keep) return rv__nomem("the encoder's weights");
        for (uint32_t c = 0; c < k; c++) L->keep[c] = 1.0f;
        for (uint32_t j = 0; j < L->n_out; j++) L->keep[L->out_ch[j]] = 0.0f;
    }
#ifdef RV__ENC_X86
    if (kernel >= RV__K_VNNI)
        rv__pack_vnni(L, src->weight);
    else if (kernel == RV__K_AVX2)
        rv__pack_avx2(L, src->weight);
    else
#endif
        rv__pack_portable(L, src->weight);
    return RV_OK;
}

void rv_encoder_free(rv_encoder *m) {
    if (!m) return;
    if (m->layer)
        for (uint32_t l = 0; l < m->layers; l++) {
            rv__layer *ly = &m->layer[l];
            rv__lin_free(&ly->qkv);
            rv__lin_free(&ly->out);
            rv__lin_free(&ly->up);
            rv__lin_free(&ly->down);
            rv__free(ly->ln1_gamma);
            rv__free(ly->ln1_beta);
            rv__free(ly->ln2_gamma);
            rv__free(ly->ln2_beta);
        }
    rv__free(m->layer);
    rv__free(m->word);
    rv__free(m->position);
    rv__free(m->type);
    rv__free(m->word_scale);
    rv__free(m->position_scale);
    rv__free(m->type_scale);
    rv__free(m->emb_gamma);
    rv__free(m->emb_beta);
    rv__free(m);
}

static rv_status rv__enc_table(int8_t **dst, float **dst_scale, const int8_t *q, const float *sc,
                               uint32_t rows, uint32_t h, const char *name, const char *sname) {
    rv_status st;
    if (!q) return rv__null(name);
    if ((st = rv__enc_finite(sc, rows, sname, 1))) return st;
    *dst = (int8_t *)rv__enc_copy(q, (size_t)rows * h);
    *dst_scale = (float *)rv__enc_copy(sc, (size_t)rows * sizeof(float));
    if (!*dst || !*dst_scale) return rv__nomem("the encoder's embeddings");
    return RV_OK;
}

static rv_status rv__enc_vec(float **dst, const float *src, uint32_t n, const char *name) {
    rv_status st = rv__enc_finite(src, n, name, 0);
    if (st) return st;
    *dst = (float *)rv__enc_copy(src, (size_t)n * sizeof(float));
    return *dst ? RV_OK : rv__nomem("the encoder's LayerNorm weights");
}

static rv_status rv__enc_build(rv_encoder *m, const rv_encoder_spec *sp) {
    rv_status st;
    uint32_t h = sp->hidden, f = sp->ffn;
    if ((st = rv__enc_table(&m->word, &m->word_scale, sp->word, sp->word_scale, sp->vocab, h,
                            "word", "word_scale")) ||
        (st = rv__enc_table(&m->position, &m->position_scale, sp->position, sp->position_scale,
                            sp->max_positions, h, "position", "position_scale")) ||
        (st = rv__enc_table(&m->type, &m->type_scale, sp->type, sp->type_scale, sp->type_vocab, h,
                            "type", "type_scale")) ||
        (st = rv__enc_vec(&m->emb_gamma, sp->emb_gamma, h, "emb_gamma")) ||
        (st = rv__enc_vec(&m->emb_beta, sp->emb_beta, h, "emb_beta")))
        return st;
    if (!sp->layer) return rv__null("layer");
    m->layer = (rv__layer *)rv__calloc(sp->layers, sizeof *m->layer);
    if (!m->layer) return rv__nomem("the encoder's layers");
    for (uint32_t l = 0; l < sp->layers; l++) {
        const rv_encoder_layer *src = &sp->layer[l];
        rv__layer *ly = &m->layer[l];
        char name[48];
        if ((st = rv__lin_make(&ly->qkv, &src->qkv, h, 3 * h, m->kernel, l, "qkv")) ||
            (st = rv__lin_make(&ly->out, &src->out, h, h, m->kernel, l, "out")) ||
            (st = rv__lin_make(&ly->up, &src->up, h, f, m->kernel, l, "up")) ||
            (st = rv__lin_make(&ly->down, &src->down, f, h, m->kernel, l, "down")))
            return st;
        if (ly->out.n_out || ly->down.n_out)
            return rv__error(RV_E_INVALID_ARG,
                             "layer[%u]: out and down read no LayerNorm output: no outliers",
                             (unsigned)l);
        m->max_out = ly->qkv.n_out > m->max_out ? ly->qkv.n_out : m->max_out;
        m->max_out = ly->up.n_out > m->max_out ? ly->up.n_out : m->max_out;
        snprintf(name, sizeof name, "layer[%u].ln1_gamma", (unsigned)l);
        if ((st = rv__enc_vec(&ly->ln1_gamma, src->ln1_gamma, h, name))) return st;
        snprintf(name, sizeof name, "layer[%u].ln1_beta", (unsigned)l);
        if ((st = rv__enc_vec(&ly->ln1_beta, src->ln1_beta, h, name))) return st;
        snprintf(name, sizeof name, "layer[%u].ln2_gamma", (unsigned)l);
        if ((st = rv__enc_vec(&ly->ln2_gamma, src->ln2_gamma, h, name))) return st;
        snprintf(name, sizeof name, "layer[%u].ln2_beta", (unsigned)l);
        if ((st = rv__enc_vec(&ly->ln2_beta, src->ln2_beta, h, name))) return st;
    }
    return RV_OK;
}

rv_status rv_encoder_create(const rv_encoder_spec *sp, rv_encoder **out) {
    RV__NOT_NULL(out, "out");
    *out = NULL;
    RV__NOT_NULL(sp, "spec");
    uint32_t h = sp->hidden;
    if (h == 0 || h > RV_ENCODER_MAX_HIDDEN || sp->ffn == 0 ||
        sp->ffn > 4 * RV_ENCODER_MAX_HIDDEN || sp->layers == 0 ||
        sp->layers > RV_ENCODER_MAX_LAYERS || sp->heads == 0 || sp->vocab == 0 ||
        sp->max_positions == 0 || sp->type_vocab == 0)
        return rv__error(RV_E_RANGE,
                         "hidden %u, ffn %u, layers %u, heads %u, vocab %u, max_positions %u, "
                         "type_vocab %u: each must be >= 1 (hidden <= %u, ffn <= %u, layers <= "
                         "%u)",
                         (unsigned)h, (unsigned)sp->ffn, (unsigned)sp->layers, (unsigned)sp->heads,
                         (unsigned)sp->vocab, (unsigned)sp->max_positions, (unsigned)sp->type_vocab,
                         RV_ENCODER_MAX_HIDDEN, 4 * RV_ENCODER_MAX_HIDDEN, RV_ENCODER_MAX_LAYERS);
    if (h % 64 || sp->ffn % 64 || h % sp->heads || (h / sp->heads) % 16)
        return rv__error(RV_E_SHAPE,
                         "hidden %u, ffn %u, heads %u: hidden and ffn must be multiples of 64 "
                         "and hidden / heads a multiple of 16",
                         (unsigned)h, (unsigned)sp->ffn, (unsigned)sp->heads);
    if (!isfinite(sp->ln_eps) || !(sp->ln_eps > 0) || !isfinite(sp->attn_scale) ||
        !(sp->attn_scale > 0))
        return rv__error(RV_E_INVALID_ARG, "ln_eps = %g, attn_scale = %g: must be finite and > 0",
                         (double)sp->ln_eps, (double)sp->attn_scale);
    if (sp->attention != RV_ENCODER_ATTN_FLOAT32 && sp->attention != RV_ENCODER_ATTN_BFLOAT16)
        return rv__error(RV_E_INVALID_ARG,
                         "attention = %u: expected RV_ENCODER_ATTN_FLOAT32 (0) or "
                         "RV_ENCODER_ATTN_BFLOAT16 (1)",
                         (unsigned)sp->attention);
    int kernel = RV__K_PORTABLE;
    if (sp->kernel && sp->kernel[0]) {
        kernel = -1;
        for (int k = 0; k <= RV__K_BF16; k++)
            if (!strcmp(sp->kernel, rv__enc_kernel_names[k])) kernel = k;
        if (kernel < 0)
            return rv__error(
                RV_E_INVALID_ARG,
                "kernel \"%s\": expected \"avx512-bf16\", \"avx512-vnni\", \"avx2\" or "
                "\"portable\"",
                sp->kernel);
        if (!rv__enc_cpu(kernel))
            return rv__error(RV_E_STATE, "kernel \"%s\": this CPU lacks its instructions",
                             sp->kernel);
    } else {
        for (int k = RV__K_BF16; k > RV__K_PORTABLE && kernel == RV__K_PORTABLE; k--)
            if (rv__enc_cpu(k)) kernel = k;
    }
    rv_encoder *m = (rv_encoder *)rv__calloc(1, sizeof *m);
    if (!m) return rv__nomem("the encoder");
    m->hidden = h;
    m->heads = sp->heads;
    m->ffn = sp->ffn;
    m->layers = 0; /* counts built layers until the end, for rv_encoder_free */
    m->vocab = sp->vocab;
    m->max_positions = sp->max_positions;
    m->type_vocab = sp->type_vocab;
    m->ln_eps = sp->ln_eps;
    m->attn_scale = sp->attn_scale;
    m->attn_bf16 = sp->attention == RV_ENCODER_ATTN_BFLOAT16;
    m->kernel = kernel;
    m->layers = sp->layers;
    rv_status st = rv__enc_build(m, sp);
    if (st) {
        rv_encoder_free(m);
        return st;
    }
    m->forward = forward_portable;
    m->attend = attention_portable;
#ifdef RV__ENC_X86
    if (kernel == RV__K_AVX2) {
        m->forward = forward_avx2;
        m->attend = attention_avx2;
    }
    if (kernel >= RV__K_VNNI) {
        m->forward = forward_vnni;
        m->attend = kernel == RV__K_BF16 && m->attn_bf16 ? rv__attention_bf16 : attention_vnni;
    }
#endif
    *out = m;
    return RV_OK;
}

const char *rv_encoder_kernel(const rv_encoder *m) {
    return m ? rv__enc_kernel_names[m->kernel] : "";
}

uint32_t rv_encoder_dim(const rv_encoder *m) {
    return m ? m->hidden : 0;
}

/* ------------------------------------------------------------- encoding */

rv_status rv_encoder_encode(const rv_encoder *m, size_t n, const size_t *off, const int32_t *ids,
                            const int32_t *types, float *out) {
    RV__NOT_NULL(m, "enc");
    if (n == 0) return RV_OK;
    RV__NOT_NULL(off, "offsets");
    RV__NOT_NULL(ids, "ids");
    RV__NOT_NULL(out, "out");
    const uint32_t h = m->hidden, f = m->ffn, hd = h / m->heads;
    RV__CHECK_SIZE2(n, h, sizeof(float), "n", "hidden");
    if (off[0] != 0) return rv__error(RV_E_RANGE, "offsets[0] = %zu: must be 0", off[0]);
    size_t longest = 0;
    for (size_t i = 0; i < n; i++) {
        if (off[i + 1] < off[i])
            return rv__error(RV_E_RANGE, "offsets[%zu] = %zu < offsets[%zu] = %zu", i + 1,
                             off[i + 1], i, off[i]);
        size_t len = off[i + 1] - off[i];
        if (len == 0 || len > m->max_positions)
            return rv__error(RV_E_RANGE, "text %zu holds %zu tokens: must be 1 .. %u", i, len,
                             (unsigned)m->max_positions);
        longest = len > longest ? len : longest;
        for (size_t t = off[i]; t < off[i + 1]; t++) {
            if (ids[t] < 0 || (uint32_t)ids[t] >= m->vocab)
                return rv__error(RV_E_RANGE, "text %zu, token %zu: id %ld not in 0 .. %u", i,
                                 t - off[i], (long)ids[t], (unsigned)m->vocab - 1);
            if (types && (types[t] < 0 || (uint32_t)types[t] >= m->type_vocab))
                return rv__error(RV_E_RANGE, "text %zu, token %zu: type id %ld not in 0 .. %u", i,
                                 t - off[i], (long)types[t], (unsigned)m->type_vocab - 1);
        }
    }
    size_t T = off[n];
    RV__CHECK_SIZE2(T + 16, 5 * (size_t)h, sizeof(float), "tokens", "5 * hidden");
    size_t wide = f > h ? f : h;                          /* a product's inputs */
    size_t ywide = 3 * (size_t)h > f ? 3 * (size_t)h : f; /* and outputs */
    size_t Lp = (longest + 31) / 32 * 32;
    /* encoder_body.h, attention: a block's queries, scores and context,
    ** and the bfloat16 attention's keys and values */
    size_t att = 2 * hd * RV__ENC_VW_MAX + Lp * RV__ENC_VW_MAX + 2 * Lp * hd;
    size_t gemm =
        m->kernel == RV__K_AVX2 ? RV__ENC_CHUNK * wide * sizeof(int16_t) : ywide * sizeof(int32_t);
    size_t floats = (T + 16) * 5 * (size_t)h +
                    RV__ENC_CHUNK * (ywide + h + 2 + (m->max_out ? m->max_out : 1)) + att;
    size_t bytes = T * sizeof(uint32_t) + floats * sizeof(float) + RV__ENC_CHUNK * wide + gemm;
    unsigned char *mem = (unsigned char *)rv__malloc(bytes + 64 * 16);
    if (!mem) return rv__nomem("the encoder's buffers");
    rv__enc_ws w;
    unsigned char *p = mem;
#define RV__TAKE(dst, type, count)                                                                 \
    do {                                                                                           \
        p = (unsigned char *)(((uintptr_t)p + 63) & ~(uintptr_t)63);                               \
        (dst) = (type *)p;                                                                         \
        p += (count) * sizeof(type);                                                               \
    } while (0)
    RV__TAKE(w.pos, uint32_t, T);
    RV__TAKE(w.x, float, T *h);
    w.Tp = T + 16;
    RV__TAKE(w.qkv, float, w.Tp * 3 * (size_t)h);
    RV__TAKE(w.ctx, float, T *h);
    RV__TAKE(w.y, float, RV__ENC_CHUNK *ywide);
    RV__TAKE(w.h1, float, RV__ENC_CHUNK *(size_t)h);
    RV__TAKE(w.s, float, RV__ENC_CHUNK);
    RV__TAKE(w.xo, float, RV__ENC_CHUNK *(size_t)(m->max_out ? m->max_out : 1));
    RV__TAKE(w.am, float, RV__ENC_CHUNK);
    RV__TAKE(w.att, float, att);
    RV__TAKE(w.a, uint8_t, RV__ENC_CHUNK *wide);
    RV__TAKE(w.gemm, unsigned char, gemm);
#undef RV__TAKE
    w.lda = wide;
    w.ldy = ywide;
    for (size_t i = 0; i < n; i++)
        for (size_t t = off[i]; t < off[i + 1]; t++) w.pos[t] = (uint32_t)(t - off[i]);
    for (size_t b = 0; b < 3 * (size_t)m->heads; b++) /* the zero rows past T */
        memset(w.qkv + (b * w.Tp + T) * hd, 0, 16 * hd * sizeof(float));
    m->forward(m, n, off, ids, types, out, &w);
    rv__free(mem);
    return RV_OK;
}
