/*
** Scoring kernels of the flat index: one panel of 16 rows against a block
** of queries, and a plain dot product for re-scoring.
**
** Portability: no -march flags.  On x86-64 with GCC or Clang the kernels
** are compiled a second and third time for AVX2+FMA and for AVX-512 with
** target attributes, and rv__flat_kernels_select picks one at run time
** from the CPU's feature bits; everywhere else the portable versions run.
** The float kernels use GCC vector extensions (plain C loops without them),
** so the compiler emits full-width FMAs without intrinsics.  The int8 kernel
** uses the AVX-512 VNNI dot-product instruction where the CPU has it; its
** portable twin does the same integer arithmetic, so both give identical
** results.
**
** Why panels: a dot product along the dimension ends in a horizontal sum
** per (query, row) pair.  Interleaving 16 rows per dimension instead keeps
** 16 independent sums in one vector register, one broadcast query value
** multiplies all of them, and a block of queries reuses every panel load.
*/
#include <float.h>
#include <math.h>
#include <string.h>

#include "flat_internal.h"

/* The float kernels rely on a*b+c becoming one fused multiply-add; GCC does
** not contract in ISO C mode unless asked.  Scores stay deterministic: the
** same binary always takes the same path. */
#if defined(__clang__)
#  pragma STDC FP_CONTRACT ON
#elif defined(__GNUC__)
#  pragma GCC optimize("fp-contract=fast")
#endif

#if defined(__GNUC__) || defined(__clang__)
#  define RV__VEC_EXT 1
#endif

#if defined(__x86_64__) && defined(RV__VEC_EXT) && !defined(RV_NO_MULTIVERSION)
#  define RV__X86_DISPATCH 1
#  include <cpuid.h>
#  include <immintrin.h>
#  define RV__T_AVX2   __attribute__((target("avx2,fma,f16c")))
#  define RV__T_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")))
#  define RV__T_VNNI   __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma")))
#endif

/* ------------------------------------------------------------ half floats */

uint16_t rv__f32_to_f16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) /* inf or NaN */
        return (uint16_t)(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0));
    if (absx >= 0x477ff000u) /* rounds to >= 65520: overflow */
        return (uint16_t)(sign | 0x7c00u);
    if (absx < 0x38800000u) { /* below the smallest normal half: subnormal */
        if (absx < 0x33000000u) return (uint16_t)sign; /* < half of 2^-24 */
        uint32_t mant = (absx & 0x7fffffu) | 0x800000u;
        unsigned shift = 126u - (absx >> 23); /* 14 .. 24 */
        uint32_t h = mant >> shift;
        uint32_t rem = mant & ((1u << shift) - 1u);
        uint32_t half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (h & 1u))) h++;
        return (uint16_t)(sign | h);
    }
    /* normal: rebias exponent 127 -> 15, keep 10 mantissa bits, round */
    uint32_t h = ((absx - 0x38000000u) >> 13);
    uint32_t rem = absx & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++;
    return (uint16_t)(sign | h);
}

float rv__f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu, x;
    if (e == 0) {
        if (m == 0) {
            x = sign;
        } else { /* subnormal: normalise */
            e = 113;
            while (!(m & 0x400u)) {
                m <<= 1;
                e--;
            }
            x = sign | (e << 23) | ((m & 0x3ffu) << 13);
        }
    } else if (e == 31) {
        x = sign | 0x7f800000u | (m << 13);
    } else {
        x = sign | ((e + 112u) << 23) | (m << 13);
    }
    float f;
    memcpy(&f, &x, 4);
    return f;
}

/* --------------------------------------------------------- float kernels */

#ifdef RV__VEC_EXT
typedef float rv__v4f __attribute__((vector_size(16)));
typedef float rv__v8f __attribute__((vector_size(32)));
typedef float rv__v16f __attribute__((vector_size(64)));
#  define RV__LOAD(VT, p)                                                                          \
      ({                                                                                           \
        VT ld__;                                                                                   \
        memcpy(&ld__, (p), sizeof ld__);                                                           \
        ld__;                                                                                      \
      })
#endif

/* One template for every float kernel: QB queries, vectors of VL lanes
** (16 / VL of them per panel row).  LOADROW(j, x) fills x[0 .. 16/VL) with
** dimension j of the 16 rows as floats. */
#define RV__FLOAT_TILE_BODY(QB, VT, VL, LOADROW)                                                   \
    enum { NV_ = 16 / (VL) };                                                                      \
    VT acc[QB][NV_];                                                                               \
    for (int i = 0; i < (QB); i++)                                                                 \
        for (int v = 0; v < NV_; v++) acc[i][v] = (VT){0};                                         \
    for (size_t j = 0; j < dim; j++) {                                                             \
        VT x[NV_];                                                                                 \
        LOADROW(j, x);                                                                             \
        const float *qj = qpack + j * (QB);                                                        \
        for (int i = 0; i < (QB); i++) {                                                           \
            float s = qj[i];                                                                       \
            for (int v = 0; v < NV_; v++) acc[i][v] += x[v] * s;                                   \
        }                                                                                          \
    }                                                                                              \
    for (int i = 0; i < (QB); i++)                                                                 \
        for (int v = 0; v < NV_; v++) memcpy(out + i * 16 + v * (VL), &acc[i][v], sizeof acc[i][v]);

#ifdef RV__VEC_EXT
#  define RV__LOADROW_F32(VT, VL, J, X)                                                            \
      for (int v_ = 0; v_ < 16 / (VL); v_++) X[v_] = RV__LOAD(VT, panel + (J) * 16 + v_ * (VL))
#endif

/* Portable float32: 4-lane vectors (SSE2 on x86-64, NEON on arm64). */
#define RV__QB_PORTABLE 3
static void rv__tile_f32_portable(const float *panel, size_t dim, const float *qpack, float *out) {
#ifdef RV__VEC_EXT
#  define LOADROW(j_, x_) RV__LOADROW_F32(rv__v4f, 4, j_, x_)
    RV__FLOAT_TILE_BODY(RV__QB_PORTABLE, rv__v4f, 4, LOADROW)
#  undef LOADROW
#else
    float acc[RV__QB_PORTABLE][16] = {{0}};
    for (size_t j = 0; j < dim; j++)
        for (int i = 0; i < RV__QB_PORTABLE; i++)
            for (int l = 0; l < 16; l++)
                acc[i][l] += panel[j * 16 + l] * qpack[j * RV__QB_PORTABLE + i];
    memcpy(out, acc, sizeof acc);
#endif
}

/* Portable float16: convert 16 halves per dimension, then as float32. */
static void rv__tile_f16_portable(const uint16_t *panel, size_t dim, const float *qpack,
                                  float *out) {
#ifdef RV__VEC_EXT
#  define LOADROW(j_, x_)                                                                          \
      do {                                                                                         \
          float t_[16];                                                                            \
          for (int l_ = 0; l_ < 16; l_++) t_[l_] = rv__f16_to_f32(panel[j_ * 16 + l_]);            \
          for (int v_ = 0; v_ < 4; v_++) x_[v_] = RV__LOAD(rv__v4f, t_ + 4 * v_);                  \
      } while (0)
    RV__FLOAT_TILE_BODY(RV__QB_PORTABLE, rv__v4f, 4, LOADROW)
#  undef LOADROW
#else
    float acc[RV__QB_PORTABLE][16] = {{0}};
    for (size_t j = 0; j < dim; j++)
        for (int l = 0; l < 16; l++) {
            float x = rv__f16_to_f32(panel[j * 16 + l]);
            for (int i = 0; i < RV__QB_PORTABLE; i++)
                acc[i][l] += x * qpack[j * RV__QB_PORTABLE + i];
        }
    memcpy(out, acc, sizeof acc);
#endif
}

/* Portable int8: unsigned query bytes times signed row bytes, four per
** 32-bit lane (the arithmetic of VPDPBUSD, exact in int32). */
#define RV__QB_I8_PORTABLE 4
static void rv__tile_i8_portable(const int8_t *panel, size_t dim4, const uint8_t *qpack,
                                 int32_t *out) {
    int32_t acc[RV__QB_I8_PORTABLE][16];
    memset(acc, 0, sizeof acc);
    for (size_t j = 0; j < dim4 / 4; j++) {
        const int8_t *p = panel + j * 64;
        const uint8_t *q = qpack + j * RV__QB_I8_PORTABLE * 4;
        for (int i = 0; i < RV__QB_I8_PORTABLE; i++) {
            int32_t q0 = q[i * 4], q1 = q[i * 4 + 1], q2 = q[i * 4 + 2], q3 = q[i * 4 + 3];
            for (int l = 0; l < 16; l++)
                acc[i][l] +=
                    q0 * p[l * 4] + q1 * p[l * 4 + 1] + q2 * p[l * 4 + 2] + q3 * p[l * 4 + 3];
        }
    }
    memcpy(out, acc, sizeof acc);
}

/* Quad j of a panel (16 rows x 4 codes) times the query's codes of that
** quad, added into the 16 row sums acc. */
static inline void rv__q16_quad_portable(int32_t *acc, const int8_t *panel, const int16_t *q,
                                         size_t j) {
    const int8_t *p = panel + j * 64;
    int32_t q0 = q[4 * j], q1 = q[4 * j + 1], q2 = q[4 * j + 2], q3 = q[4 * j + 3];
    for (int l = 0; l < 16; l++)
        acc[l] += q0 * p[l * 4] + q1 * p[l * 4 + 1] + q2 * p[l * 4 + 2] + q3 * p[l * 4 + 3];
}

/* Portable screen kernel: int16 query codes times int8 row codes, summed
** in int32 (exact; the AVX2 twin gives the same integers). */
static void rv__tile_q16_portable(const int8_t *panel, size_t dim4, const int16_t *q,
                                  int32_t *out) {
    int32_t acc[16];
    memset(acc, 0, sizeof acc);
    for (size_t j = 0; j < dim4 / 4; j++) rv__q16_quad_portable(acc, panel, q, j);
    memcpy(out, acc, sizeof acc);
}

/* Portable sparse screen kernel: the quads listed, in list order (integer
** sums: the same integers as rv__tile_q16_portable when every quad with a
** nonzero query code is listed). */
static void rv__tile_q16s_portable(const int8_t *panel, const int16_t *q, const uint32_t *quads,
                                   size_t n_quads, int32_t *out) {
    int32_t acc[16];
    memset(acc, 0, sizeof acc);
    for (size_t i = 0; i < n_quads; i++) rv__q16_quad_portable(acc, panel, q, quads[i]);
    memcpy(out, acc, sizeof acc);
}

/* Portable screen intervals (rv__screen_bounds_fn).  The lanes are
** independent and branch-free, so the compiler can vectorise them; the
** rare overflow is repaired afterwards. */
static uint32_t rv__screen_bounds_portable(const int32_t *itile, const float *sc, const float *qe,
                                           const float *qn, size_t lanes, const float *qb,
                                           float tau, float *up, float *lo) {
    const float qs = qb[0], al = qb[1], be = qb[2];
    int bad = 0;
    for (size_t l = 0; l < lanes; l++) {
        float a = (float)itile[l] * sc[l] * qs;
        float b = al * qe[l] + be * qn[l] + 1e-30f;
        bad |= !(fabsf(a) <= FLT_MAX) | !(b <= FLT_MAX);
        up[l] = a + b;
        lo[l] = a - b;
    }
    if (bad) {
        for (size_t l = 0; l < lanes; l++) {
            float a = (float)itile[l] * sc[l] * qs;
            float b = al * qe[l] + be * qn[l] + 1e-30f;
            if (!isfinite(a) || !isfinite(b)) { /* overflow: no bound */
                up[l] = INFINITY;
                lo[l] = -INFINITY;
            }
        }
    }
    uint32_t mask = 0;
    for (size_t l = 0; l < lanes; l++) mask |= (uint32_t)(up[l] >= tau) << l;
    return mask;
}

/* Dot product with 16 independent partial sums (vectorises without
** -ffast-math, since the order of additions is fixed by the source). */
static float rv__dot_portable(const float *a, const float *b, size_t n) {
    float acc[16] = {0};
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int l = 0; l < 16; l++) acc[l] += a[i + l] * b[i + l];
    for (int l = 0; i < n; i++, l++) acc[l] += a[i] * b[i];
    for (int w = 8; w >= 1; w /= 2)
        for (int l = 0; l < w; l++) acc[l] += acc[l + w];
    return acc[0];
}

static void rv__dots_portable(const float *q, const float *x, size_t n_rows, size_t dim,
                              float *out) {
    for (size_t r = 0; r < n_rows; r++) out[r] = rv__dot_portable(q, x + r * dim, dim);
}

static void rv__dotsg_portable(const float *q, const float *x, const size_t *rows, size_t n_rows,
                               size_t dim, float *out) {
    for (size_t r = 0; r < n_rows; r++) out[r] = rv__dot_portable(q, x + rows[r] * dim, dim);
}

/* Dot products of one query with R consecutive rows at a time (vectors of
** VL lanes, 16 / VL per row and step of 16 dimensions): lane l of row g
** sums q[i + l] * x_g[i + l] over i = 0, 16, 32, ... exactly as acc[l] of
** the dot kernel DOT does, then takes the same tail and the same pairwise
** reduction, so out[r] equals DOT(q, row r) bit for bit; the R rows'
** independent sums keep the FMA units busy.  Rows left over go to DOT. */
#define RV__DOTS_BODY(R, VT, VL, DOT) RV__DOTS_BODY_AT(R, VT, VL, DOT, x + (r) * dim)
/* The same with row r at ROWAT (an expression of r). */
#define RV__DOTS_BODY_AT(R, VT, VL, DOT, ROWAT)                                                    \
    enum { NV_ = 16 / (VL) };                                                                      \
    size_t main_ = dim / 16 * 16, r_ = 0;                                                          \
    for (; r_ + (R) <= n_rows; r_ += (R)) {                                                        \
        const float *xg_row_[R];                                                                   \
        for (int g = 0; g < (R); g++) {                                                            \
            size_t r = r_ + (size_t)g;                                                             \
            xg_row_[g] = (ROWAT);                                                                  \
        }                                                                                          \
        VT acc_[R][NV_];                                                                           \
        for (int g = 0; g < (R); g++)                                                              \
            for (int v = 0; v < NV_; v++) acc_[g][v] = (VT){0};                                    \
        for (size_t i = 0; i < main_; i += 16) {                                                   \
            VT qv_[NV_];                                                                           \
            for (int v = 0; v < NV_; v++) qv_[v] = RV__LOAD(VT, q + i + v * (VL));                 \
            for (int g = 0; g < (R); g++)                                                          \
                for (int v = 0; v < NV_; v++)                                                      \
                    acc_[g][v] += qv_[v] * RV__LOAD(VT, xg_row_[g] + i + v * (VL));                \
        }                                                                                          \
        for (int g = 0; g < (R); g++) {                                                            \
            float a_[16];                                                                          \
            for (int v = 0; v < NV_; v++) memcpy(a_ + v * (VL), &acc_[g][v], sizeof acc_[g][v]);   \
            const float *xg_ = xg_row_[g];                                                         \
            size_t i = main_;                                                                      \
            for (int l = 0; i < dim; i++, l++) a_[l] += q[i] * xg_[i];                             \
            for (int w = 8; w >= 1; w /= 2)                                                        \
                for (int l = 0; l < w; l++) a_[l] += a_[l + w];                                    \
            out[r_ + g] = a_[0];                                                                   \
        }                                                                                          \
    }                                                                                              \
    for (; r_ < n_rows; r_++) {                                                                    \
        size_t r = r_;                                                                             \
        out[r_] = DOT(q, (ROWAT), dim);                                                            \
    }

#ifdef RV__X86_DISPATCH
/* AVX2 + FMA: 4 queries x 2 ymm per panel row = 8 accumulators. */
#  define RV__QB_AVX2 4
RV__T_AVX2 static void tile_f32_avx2(const float *panel, size_t dim, const float *qpack,
                                     float *out){
#  define LOADROW(j_, x_) RV__LOADROW_F32(rv__v8f, 8, j_, x_)
    RV__FLOAT_TILE_BODY(RV__QB_AVX2, rv__v8f, 8, LOADROW)
#  undef LOADROW
}

RV__T_AVX2
    static void tile_f16_avx2(const uint16_t *panel, size_t dim, const float *qpack, float *out) {
#  define LOADROW(j_, x_)                                                                          \
      do {                                                                                         \
          for (int v_ = 0; v_ < 2; v_++) {                                                         \
              __m128i h_ =                                                                         \
                  _mm_loadu_si128((const __m128i *)(const void *)(panel + j_ * 16 + v_ * 8));      \
              __m256 f_ = _mm256_cvtph_ps(h_);                                                     \
              memcpy(&x_[v_], &f_, 32);                                                            \
          }                                                                                        \
      } while (0)
    RV__FLOAT_TILE_BODY(RV__QB_AVX2, rv__v8f, 8, LOADROW)
#  undef LOADROW
}

RV__T_AVX2 static float dot_avx2(const float *a, const float *b, size_t n) {
    float acc[16] = {0};
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int l = 0; l < 16; l++) acc[l] += a[i + l] * b[i + l];
    for (int l = 0; i < n; i++, l++) acc[l] += a[i] * b[i];
    for (int w = 8; w >= 1; w /= 2)
        for (int l = 0; l < w; l++) acc[l] += acc[l + w];
    return acc[0];
}

/* Four rows x 2 ymm = 8 independent sums. */
RV__T_AVX2 static void dots_avx2(const float *q, const float *x, size_t n_rows, size_t dim,
                                 float *out){RV__DOTS_BODY(4, rv__v8f, 8, dot_avx2)}
/* The same for rows x + rows[r] * dim. */
RV__T_AVX2
    static void dotsg_avx2(const float *q, const float *x, const size_t *rows, size_t n_rows,
                           size_t dim,
                           float *out){RV__DOTS_BODY_AT(4, rv__v8f, 8, dot_avx2, x + rows[r] * dim)}

/* dot_avx2's arithmetic with 512-bit vectors: eight rows x 1 zmm. */
RV__T_AVX512 static void dots_avx512(const float *q, const float *x, size_t n_rows, size_t dim,
                                     float *out){RV__DOTS_BODY(8, rv__v16f, 16, dot_avx2)}

/* The same for rows x + rows[r] * dim, four at a time (the screen's
** groups): four rows x 1 zmm. */
RV__T_AVX512 static void dotsg_avx512(const float *q, const float *x, const size_t *rows,
                                      size_t n_rows, size_t dim, float *out){
    RV__DOTS_BODY_AT(4, rv__v16f, 16, dot_avx2, x + rows[r] * dim)}

/* AVX-512: 8 queries x 1 zmm per panel row. */
#  define RV__QB_AVX512 8
RV__T_AVX512
    static void tile_f32_avx512(const float *panel, size_t dim, const float *qpack, float *out){
#  define LOADROW(j_, x_) RV__LOADROW_F32(rv__v16f, 16, j_, x_)
        RV__FLOAT_TILE_BODY(RV__QB_AVX512, rv__v16f, 16, LOADROW)
#  undef LOADROW
    }

RV__T_AVX512
    static void tile_f16_avx512(const uint16_t *panel, size_t dim, const float *qpack, float *out) {
#  define LOADROW(j_, x_)                                                                          \
      do {                                                                                         \
          __m256i h_ = _mm256_loadu_si256((const __m256i *)(const void *)(panel + j_ * 16));       \
          __m512 f_ = _mm512_cvtph_ps(h_);                                                         \
          memcpy(&x_[0], &f_, 64);                                                                 \
      } while (0)
    RV__FLOAT_TILE_BODY(RV__QB_AVX512, rv__v16f, 16, LOADROW)
#  undef LOADROW
}

/* AVX2 screen kernel: the 16 bytes of 4 rows x 4 dimensions widened to
** int16, VPMADDWD against the query's 4 int16 codes (pairs summed into
** int32), one accumulator per 4 rows; the pairs are added at the end.  Four
** quads per step: their products are summed before the accumulator, so
** the loop carries 4 additions per 4 quads (integer sums: exact in any
** order, and every partial sum is bounded as the whole). */
#  define RV__Q16_LOAD(p) _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(p)))
/* One panel line (16 rows x 4 codes at p) times one query quad (its 4
** int16 codes broadcast in qw), added into the accumulators a0 .. a3. */
#  define RV__Q16_QUAD(p, qw)                                                                      \
      do {                                                                                         \
          const int8_t *p_ = (p);                                                                  \
          __m256i qw_ = (qw);                                                                      \
          a0 = _mm256_add_epi32(_mm256_madd_epi16(RV__Q16_LOAD(p_), qw_), a0);                     \
          a1 = _mm256_add_epi32(_mm256_madd_epi16(RV__Q16_LOAD(p_ + 16), qw_), a1);                \
          a2 = _mm256_add_epi32(_mm256_madd_epi16(RV__Q16_LOAD(p_ + 32), qw_), a2);                \
          a3 = _mm256_add_epi32(_mm256_madd_epi16(RV__Q16_LOAD(p_ + 48), qw_), a3);                \
      } while (0)
/* Four panel lines (at p0 .. p3) times their query quads (broadcast in
** q0 .. q3), added into a0 .. a3: each accumulator takes its 16-byte
** quarter of the four lines, summed in pairs first. */
#  define RV__Q16_SUM4(p0, p1, p2, p3, q0, q1, q2, q3, o)                                          \
      _mm256_add_epi32(_mm256_add_epi32(_mm256_madd_epi16(RV__Q16_LOAD((p0) + (o)), q0),           \
                                        _mm256_madd_epi16(RV__Q16_LOAD((p1) + (o)), q1)),          \
                       _mm256_add_epi32(_mm256_madd_epi16(RV__Q16_LOAD((p2) + (o)), q2),           \
                                        _mm256_madd_epi16(RV__Q16_LOAD((p3) + (o)), q3)))
#  define RV__Q16_STEP4(p0, p1, p2, p3, q0, q1, q2, q3)                                            \
      do {                                                                                         \
          a0 = _mm256_add_epi32(a0, RV__Q16_SUM4(p0, p1, p2, p3, q0, q1, q2, q3, 0));              \
          a1 = _mm256_add_epi32(a1, RV__Q16_SUM4(p0, p1, p2, p3, q0, q1, q2, q3, 16));             \
          a2 = _mm256_add_epi32(a2, RV__Q16_SUM4(p0, p1, p2, p3, q0, q1, q2, q3, 32));             \
          a3 = _mm256_add_epi32(a3, RV__Q16_SUM4(p0, p1, p2, p3, q0, q1, q2, q3, 48));             \
      } while (0)
/* The 16 row sums from a0 .. a3 into out: a0 = [r0 r0 r1 r1 | r2 r2 r3 r3]
** halves; hadd gives [r0 r1 r4 r5 | r2 r3 r6 r7], the permute the order. */
#  define RV__Q16_STORE(out)                                                                       \
      do {                                                                                         \
          __m256i lo_ = _mm256_permute4x64_epi64(_mm256_hadd_epi32(a0, a1), 0xD8);                 \
          __m256i hi_ = _mm256_permute4x64_epi64(_mm256_hadd_epi32(a2, a3), 0xD8);                 \
          _mm256_storeu_si256((__m256i *)(void *)(out), lo_);                                      \
          _mm256_storeu_si256((__m256i *)(void *)((out) + 8), hi_);                                \
      } while (0)
RV__T_AVX2 static void tile_q16_avx2(const int8_t *panel, size_t dim4, const int16_t *q,
                                     int32_t *out) {
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    size_t nj = dim4 / 4, j = 0;
    for (; j + 4 <= nj; j += 4) {
        const int8_t *p = panel + j * 64;
        long long w[4];
        memcpy(w, q + 4 * j, 32);
        __m256i q0 = _mm256_set1_epi64x(w[0]), q1 = _mm256_set1_epi64x(w[1]);
        __m256i q2 = _mm256_set1_epi64x(w[2]), q3 = _mm256_set1_epi64x(w[3]);
        RV__Q16_STEP4(p, p + 64, p + 128, p + 192, q0, q1, q2, q3);
    }
    for (; j < nj; j++) {
        long long w;
        memcpy(&w, q + 4 * j, 8);
        RV__Q16_QUAD(panel + j * 64, _mm256_set1_epi64x(w));
    }
    RV__Q16_STORE(out);
}

/* AVX2 sparse screen kernel: tile_q16_avx2's steps over the listed quads
** (four per step, each line loaded once). */
RV__T_AVX2 static void tile_q16s_avx2(const int8_t *panel, const int16_t *q, const uint32_t *quads,
                                      size_t n_quads, int32_t *out) {
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    size_t i = 0;
    for (; i + 4 <= n_quads; i += 4) {
        size_t j0 = quads[i], j1 = quads[i + 1], j2 = quads[i + 2], j3 = quads[i + 3];
        const int8_t *p0 = panel + j0 * 64, *p1 = panel + j1 * 64;
        const int8_t *p2 = panel + j2 * 64, *p3 = panel + j3 * 64;
        long long w0, w1, w2, w3;
        memcpy(&w0, q + 4 * j0, 8);
        memcpy(&w1, q + 4 * j1, 8);
        memcpy(&w2, q + 4 * j2, 8);
        memcpy(&w3, q + 4 * j3, 8);
        __m256i q0 = _mm256_set1_epi64x(w0), q1 = _mm256_set1_epi64x(w1);
        __m256i q2 = _mm256_set1_epi64x(w2), q3 = _mm256_set1_epi64x(w3);
        RV__Q16_STEP4(p0, p1, p2, p3, q0, q1, q2, q3);
    }
    for (; i < n_quads; i++) {
        size_t j = quads[i];
        long long w;
        memcpy(&w, q + 4 * j, 8);
        RV__Q16_QUAD(panel + j * 64, _mm256_set1_epi64x(w));
    }
    RV__Q16_STORE(out);
}

/* AVX2 int8 (rv__tile_i8_fn): the integers of rv__tile_i8_portable and
** tile_i8_vnni -- unsigned query bytes times signed row bytes, summed in
** int32 -- without VNNI.  Row bytes are sign-extended and query bytes
** zero-extended to int16, and VPMADDWD adds each pair of products into an
** int32 lane: a pair is at most 2 * 255 * 128 in magnitude, so nothing
** saturates (VPMADDUBSW, the byte form, would), and the sums are exact.
** Two queries per block: each panel line is widened once for both, and
** their 8 accumulators, the line and the two broadcast quads fit the 16
** registers. */
#  define RV__QB_I8_AVX2 2
/* The 4 query bytes at q, zero-extended to int16, in every 64-bit lane. */
#  define RV__I8_QUAD(q)                                                                           \
      _mm256_broadcastq_epi64(_mm_cvtepu8_epi16(_mm_cvtsi32_si128(rv__quad_bytes(q))))
/* The 4 bytes at q as one int (for MOVD). */
static inline int rv__quad_bytes(const uint8_t *q) {
    int32_t w;
    memcpy(&w, q, 4);
    return w;
}
RV__T_AVX2 static void rv__i8_store(__m256i a0, __m256i a1, __m256i a2, __m256i a3, int32_t *out) {
    RV__Q16_STORE(out);
}
RV__T_AVX2 static void tile_i8_avx2(const int8_t *panel, size_t dim4, const uint8_t *qpack,
                                    int32_t *out) {
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    __m256i b0 = a0, b1 = a0, b2 = a0, b3 = a0;
    for (size_t j = 0; j < dim4 / 4; j++) {
        const int8_t *p = panel + j * 64;
        const uint8_t *q = qpack + j * RV__QB_I8_AVX2 * 4;
        __m256i qa = RV__I8_QUAD(q), qb = RV__I8_QUAD(q + 4), x;
        x = RV__Q16_LOAD(p);
        a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(x, qa));
        b0 = _mm256_add_epi32(b0, _mm256_madd_epi16(x, qb));
        x = RV__Q16_LOAD(p + 16);
        a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(x, qa));
        b1 = _mm256_add_epi32(b1, _mm256_madd_epi16(x, qb));
        x = RV__Q16_LOAD(p + 32);
        a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(x, qa));
        b2 = _mm256_add_epi32(b2, _mm256_madd_epi16(x, qb));
        x = RV__Q16_LOAD(p + 48);
        a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(x, qa));
        b3 = _mm256_add_epi32(b3, _mm256_madd_epi16(x, qb));
    }
    rv__i8_store(a0, a1, a2, a3, out);
    rv__i8_store(b0, b1, b2, b3, out + RV__PANEL);
}
#  undef RV__I8_QUAD

#  undef RV__Q16_STEP4
#  undef RV__Q16_SUM4
#  undef RV__Q16_STORE
#  undef RV__Q16_QUAD
#  undef RV__Q16_LOAD

/* AVX2 screen intervals of a full panel: rv__screen_bounds_portable's
** operations, 8 lanes at a time, in the same order; a panel with an
** overflow (or fewer lanes) goes to the portable code. */
RV__T_AVX2 static uint32_t screen_bounds_avx2(const int32_t *itile, const float *sc,
                                              const float *qe, const float *qn, size_t lanes,
                                              const float *qb, float tau, float *up, float *lo) {
    if (lanes != 16) return rv__screen_bounds_portable(itile, sc, qe, qn, lanes, qb, tau, up, lo);
    const __m256 qs = _mm256_set1_ps(qb[0]), al = _mm256_set1_ps(qb[1]);
    const __m256 be = _mm256_set1_ps(qb[2]), tiny = _mm256_set1_ps(1e-30f);
    const __m256 big = _mm256_set1_ps(FLT_MAX), tv = _mm256_set1_ps(tau);
    const __m256 absm = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    __m256 ok = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
    uint32_t mask = 0;
    for (int h = 0; h < 2; h++) {
        __m256 ti =
            _mm256_cvtepi32_ps(_mm256_loadu_si256((const __m256i *)(const void *)(itile + 8 * h)));
        __m256 a = _mm256_mul_ps(_mm256_mul_ps(ti, _mm256_loadu_ps(sc + 8 * h)), qs);
        __m256 b = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(al, _mm256_loadu_ps(qe + 8 * h)),
                                               _mm256_mul_ps(be, _mm256_loadu_ps(qn + 8 * h))),
                                 tiny);
        /* ordered comparisons: NaN counts as overflow */
        ok = _mm256_and_ps(ok, _mm256_cmp_ps(_mm256_and_ps(a, absm), big, _CMP_LE_OQ));
        ok = _mm256_and_ps(ok, _mm256_cmp_ps(b, big, _CMP_LE_OQ));
        __m256 u = _mm256_add_ps(a, b);
        _mm256_storeu_ps(up + 8 * h, u);
        _mm256_storeu_ps(lo + 8 * h, _mm256_sub_ps(a, b));
        mask |= (uint32_t)_mm256_movemask_ps(_mm256_cmp_ps(u, tv, _CMP_GE_OQ)) << (8 * h);
    }
    if (_mm256_movemask_ps(ok) != 0xff)
        return rv__screen_bounds_portable(itile, sc, qe, qn, lanes, qb, tau, up, lo);
    return mask;
}

/* AVX-512 VNNI: VPDPBUSD multiplies 4 unsigned query bytes by 4 signed row
** bytes and adds the sum to a 32-bit lane: 64 products per instruction. */
#  define RV__QB_VNNI 8
RV__T_VNNI static void tile_i8_vnni(const int8_t *panel, size_t dim4, const uint8_t *qpack,
                                    int32_t *out) {
    __m512i acc[RV__QB_VNNI];
    for (int i = 0; i < RV__QB_VNNI; i++) acc[i] = _mm512_setzero_si512();
    for (size_t j = 0; j < dim4 / 4; j++) {
        __m512i x = _mm512_loadu_si512((const void *)(panel + j * 64));
        const uint8_t *q = qpack + j * RV__QB_VNNI * 4;
        for (int i = 0; i < RV__QB_VNNI; i++) {
            int32_t w;
            memcpy(&w, q + i * 4, 4);
            acc[i] = _mm512_dpbusd_epi32(acc[i], _mm512_set1_epi32(w), x);
        }
    }
    for (int i = 0; i < RV__QB_VNNI; i++) _mm512_storeu_si512((void *)(out + i * 16), acc[i]);
}
#endif /* RV__X86_DISPATCH */

void rv__flat_kernels_portable(rv__flat_kernels *k) {
    k->f32 = rv__tile_f32_portable;
    k->qb_f32 = RV__QB_PORTABLE;
    k->f16 = rv__tile_f16_portable;
    k->qb_f16 = RV__QB_PORTABLE;
    k->i8 = rv__tile_i8_portable;
    k->qb_i8 = RV__QB_I8_PORTABLE;
    k->q16 = rv__tile_q16_portable;
    k->q16s = rv__tile_q16s_portable;
    k->bounds = rv__screen_bounds_portable;
    k->dot = rv__dot_portable;
    k->dots = rv__dots_portable;
    k->dotsg = rv__dotsg_portable;
    k->name = "portable";
}

#ifdef RV__X86_DISPATCH
/* F16C from CPUID leaf 1 (ECX bit 29): clang before 15 does not accept
** "f16c" in __builtin_cpu_supports, so ask the processor directly. */
static int rv__cpu_has_f16c(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    return (c >> 29) & 1u;
}
#endif

void rv__flat_kernels_select(rv__flat_kernels *k) {
    rv__flat_kernels_portable(k);
#ifdef RV__X86_DISPATCH
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && rv__cpu_has_f16c()) {
        k->f32 = tile_f32_avx2;
        k->qb_f32 = RV__QB_AVX2;
        k->f16 = tile_f16_avx2;
        k->qb_f16 = RV__QB_AVX2;
        k->dot = dot_avx2;
        k->dots = dots_avx2;
        k->dotsg = dotsg_avx2;
        k->q16 = tile_q16_avx2;
        k->q16s = tile_q16s_avx2;
        k->bounds = screen_bounds_avx2;
        k->i8 = tile_i8_avx2;
        k->qb_i8 = RV__QB_I8_AVX2;
        k->name = "avx2";
        if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
            __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")) {
            k->f32 = tile_f32_avx512;
            k->qb_f32 = RV__QB_AVX512;
            k->f16 = tile_f16_avx512;
            k->qb_f16 = RV__QB_AVX512;
            k->dots = dots_avx512;
            k->dotsg = dotsg_avx512;
            k->name = "avx512";
            if (__builtin_cpu_supports("avx512vnni")) {
                k->i8 = tile_i8_vnni;
                k->qb_i8 = RV__QB_VNNI;
                k->name = "avx512-vnni";
            }
        }
    }
#endif
}
