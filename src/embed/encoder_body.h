/*
** The encoder's forward pass, compiled once per kernel: encoder.c includes
** this file with
**   RV__SFX(name)  the kernel's suffix on every name (name##_avx512, ...)
**   RV__TGT        the kernel's target attribute (empty for portable)
**   RV__VW         float lanes of one vector (16, 8 or 4)
**   RV__FMA(a,b,c) a * b + c on vectors (fused where the kernel has FMA)
**   RV__SPLAT(x)   a vector of RV__VW copies of the float x
**   RV__RCP(x)     1 / x on vectors of finite x >= 1, to about 1 ulp
**   RV__MAX(a, b)  the larger of a and b per lane (b where either is NaN)
**   RV__GEMM       the kernel's integer product (see rv__enc_gemm_fn)
**   RV__TRANSPOSE(t) (optional) t[0 .. RV__VW - 1] transposed in place,
**                  for the attention's context (RV__ND must be RV__VW)
**   RV__NK, RV__ND the attention's tiles: keys per score step (<= 32)
**                  and value columns per pass (dividing 16, so the head
**                  size)
** Everything but the integer products is written once, with GCC vector
** extensions, so each kernel gets full-width vectors from the same code.
** The end of the file undefines every parameter.
*/

#define VF RV__SFX(vf)
#define VI RV__SFX(vi)
#define VB RV__SFX(vb)
#define VU RV__SFX(vu)
typedef float VF __attribute__((vector_size(RV__VW * 4)));
typedef int32_t VI __attribute__((vector_size(RV__VW * 4)));
typedef uint32_t VU __attribute__((vector_size(RV__VW * 4)));
typedef uint8_t VB __attribute__((vector_size(RV__VW)));

RV__TGT static inline VF RV__SFX(ld)(const float *p) {
    VF v;
    memcpy(&v, p, sizeof v);
    return v;
}
RV__TGT static inline void RV__SFX(st)(float *p, VF v) {
    memcpy(p, &v, sizeof v);
}
RV__TGT static inline VF RV__SFX(splat)(float x) {
    return (VF)RV__SPLAT(x);
}
RV__TGT static inline VF RV__SFX(sel)(VI m, VF a, VF b) {
    return (VF)(((VI)a & m) | ((VI)b & ~m));
}
RV__TGT static inline VF RV__SFX(vmax)(VF a, VF b) {
    return (VF)RV__MAX(a, b);
}
RV__TGT static inline VF RV__SFX(vabs)(VF a) {
    return (VF)((VI)a & 0x7fffffff);
}
/* x rounded to bfloat16 (to nearest, ties to even; a subnormal to a zero
** of its sign), as a float: what AVX-512's conversion to bfloat16 gives
** (finite x). */
RV__TGT static inline VF RV__SFX(bf16)(VF x) {
    VU b = (VU)x;
    VU r = (b + 0x7fffu + ((b >> 16) & 1u)) & 0xffff0000u;
    return RV__SFX(sel)((VI)((b & 0x7f800000u) == 0), (VF)(b & 0x80000000u), (VF)r);
}
RV__TGT static inline float RV__SFX(hsum)(VF v) {
    float s = 0;
    for (int i = 0; i < RV__VW; i++) s += v[i];
    return s;
}
RV__TGT static inline float RV__SFX(hmax)(VF v) {
    float m = v[0];
    for (int i = 1; i < RV__VW; i++) m = v[i] > m ? v[i] : m;
    return m;
}

/* exp(x) for x <= 0 (softmax arguments): 2^n * p(r), r = x - n ln 2,
** |r| <= ln 2 / 2, p the degree-6 Taylor polynomial (relative error below
** 2e-7); arguments below -87 give exp(-87), which a softmax sum of at
** least one 1 never notices. */
RV__TGT static inline VF RV__SFX(vexp)(VF x) {
#ifdef RV__EXP
    return (VF)RV__EXP(x);
#else
    const VF magic = RV__SFX(splat)(12582912.0f); /* 1.5 * 2^23 */
    x = RV__SFX(vmax)(x, RV__SFX(splat)(-87.0f));
    VF t = x * RV__SFX(splat)(1.44269504f) + magic;
    VF n = t - magic;
    VI e = (VI)t - (VI)magic; /* n as an integer */
    VF r = RV__FMA(n, RV__SFX(splat)(-0.693145752f), x);
    r = RV__FMA(n, RV__SFX(splat)(-1.42860677e-6f), r);
    VF p = RV__SFX(splat)(1.0f / 720);
    p = RV__FMA(p, r, RV__SFX(splat)(1.0f / 120));
    p = RV__FMA(p, r, RV__SFX(splat)(1.0f / 24));
    p = RV__FMA(p, r, RV__SFX(splat)(1.0f / 6));
    p = RV__FMA(p, r, RV__SFX(splat)(0.5f));
    p = RV__FMA(p, r, RV__SFX(splat)(1.0f));
    p = RV__FMA(p, r, RV__SFX(splat)(1.0f));
    return p * (VF)((e + 127) << 23);
#endif
}

/* GELU(x) = x/2 (1 + erf(x / sqrt 2)), erf from Abramowitz & Stegun 7.1.28
** (absolute error below 3e-7): 1 - erf(u) = 1 / t^16 with t a degree-6
** polynomial in u >= 0.  For x < 0 the result is x/2 / t^16, with no
** cancellation. */
RV__TGT static inline VF RV__SFX(vgelu)(VF x) {
    VF u = RV__SFX(vabs)(x) * RV__SFX(splat)(0.707106781f);
    VF t = RV__SFX(splat)(4.30638e-5f);
    t = RV__FMA(t, u, RV__SFX(splat)(2.765672e-4f));
    t = RV__FMA(t, u, RV__SFX(splat)(1.520143e-4f));
    t = RV__FMA(t, u, RV__SFX(splat)(9.2705272e-3f));
    t = RV__FMA(t, u, RV__SFX(splat)(4.22820123e-2f));
    t = RV__FMA(t, u, RV__SFX(splat)(7.05230784e-2f));
    t = RV__FMA(t, u, RV__SFX(splat)(1.0f));
    t = t * t;
    t = t * t;
    t = t * t;
    t = t * t; /* t^16 */
    /* 1 / t^16 (t >= 1): 0 for large u (t^16 capped below +inf first) */
    VF r = RV__RCP(RV__SFX(sel)(t < RV__SFX(splat)(1e30f), t, RV__SFX(splat)(1e30f)));
    VF half = x * RV__SFX(splat)(0.5f);
    return RV__SFX(sel)(x < RV__SFX(splat)(0.0f), half * r, half * (RV__SFX(splat)(2.0f) - r));
}

/* Quantise rows of x (k floats each) for the product L (NULL: one whose
** input has no outlier channels): L's outlier channels go to xo (n_out
** per row) and count as 0 (x times L->keep); s[r] = max(amax_r, 1e-30) /
** 127 (times the float 1/127, as the recipe's graph), amax_r = max|x_r|
** over the rest, given in amax (NULL: found here); A[r][c] = round(x /
** s[r]) + 128, rounding to nearest even. */
RV__TGT static void RV__SFX(quant)(const float *x, size_t ldx, size_t rows, uint32_t k,
                                   const rv__lin *L, const float *amax, uint8_t *A, size_t lda,
                                   float *s, float *xo) {
    const VF magic = RV__SFX(splat)(12582912.0f);
    const uint32_t nout = L ? L->n_out : 0;
    const float *keep = nout ? L->keep : NULL;
    for (size_t r = 0; r < rows; r++) {
        const float *row = x + r * ldx;
        for (uint32_t j = 0; j < nout; j++) xo[r * nout + j] = row[L->out_ch[j]];
        float am;
        if (amax) {
            am = amax[r];
        } else {
            VF m = RV__SFX(splat)(0.0f);
            for (uint32_t c = 0; c < k; c += RV__VW) {
                VF v = RV__SFX(ld)(row + c);
                if (keep) v = v * RV__SFX(ld)(keep + c);
                m = RV__SFX(vmax)(m, RV__SFX(vabs)(v));
            }
            am = RV__SFX(hmax)(m);
        }
        float sc = (am > 1e-30f ? am : 1e-30f) * 0.007874016f;
        s[r] = sc;
        VF inv = RV__SFX(splat)(1.0f / sc);
        uint8_t *q = A + r * lda;
        for (uint32_t c = 0; c < k; c += RV__VW) {
            VF v = RV__SFX(ld)(row + c);
            if (keep) v = v * RV__SFX(ld)(keep + c);
            VF y = v * inv;
            y = (y + magic) - magic;
            y = RV__SFX(vmax)(y, RV__SFX(splat)(-128.0f));
            y = RV__SFX(sel)(y > RV__SFX(splat)(127.0f), RV__SFX(splat)(127.0f), y);
            VI qi = __builtin_convertvector(y, VI) + 128;
            VB qb = __builtin_convertvector(qi, VB);
            memcpy(q + c, &qb, sizeof qb);
        }
    }
}

/* Columns c .. c + RV__VW - 1 of one row's float32 product of its outlier
** channels xr (L->n_out values) and L->outlier_rows. */
RV__TGT static inline VF RV__SFX(outlier_sum)(const rv__lin *L, const float *xr, uint32_t c) {
    VF o = RV__SFX(splat)(xr[0]) * RV__SFX(ld)(L->out_rows + c);
    for (uint32_t j = 1; j < L->n_out; j++)
        o = RV__FMA(RV__SFX(splat)(xr[j]), RV__SFX(ld)(L->out_rows + (size_t)j * L->n + c), o);
    return o;
}

/* The steps after a product, in one pass over each row of y (L->n
** floats): y + xo @ L->outlier_rows (when L has outliers), + res (when not
** NULL), + L->bias, then GELU (gelu != 0); amax (when not NULL) gets each
** row's largest |result|.  The additions are in that order, each rounded:
** the recipe graph's Add nodes. */
RV__TGT static void RV__SFX(finish)(float *y, size_t ldy, size_t rows, const rv__lin *L,
                                    const float *xo, const float *res, size_t ldr, int gelu,
                                    float *amax) {
    const uint32_t n = L->n, nout = L->n_out;
    for (size_t r = 0; r < rows; r++) {
        float *yr = y + r * ldy;
        const float *xr = xo + r * nout;
        VF m = RV__SFX(splat)(0.0f);
        for (uint32_t c = 0; c < n; c += RV__VW) {
            VF v = RV__SFX(ld)(yr + c);
            if (nout) v = v + RV__SFX(outlier_sum)(L, xr, c);
            if (res) v = v + RV__SFX(ld)(res + r * ldr + c);
            v = v + RV__SFX(ld)(L->bias + c);
            if (gelu) v = RV__SFX(vgelu)(v);
            m = RV__SFX(vmax)(m, RV__SFX(vabs)(v));
            RV__SFX(st)(yr + c, v);
        }
        if (amax) amax[r] = RV__SFX(hmax)(m);
    }
}

/* finish (outliers, bias) for the query/key/value product's rows t0 ..
** t0 + rows - 1 of the call, written head-major into qkv: block (part *
** heads + head) holds Tp rows of hd floats (part 0 the queries, 1 the
** keys, 2 the values), queries and keys times the attention's scale. */
RV__TGT static void RV__SFX(finish_qkv)(const rv_encoder *m, const float *y, size_t ldy,
                                        size_t rows, const rv__lin *L, const float *xo, size_t t0,
                                        float *qkv, size_t Tp) {
    const uint32_t h = m->hidden, nh = m->heads, hd = h / nh, nout = L->n_out;
    const VF c = RV__SFX(splat)(m->attn_scale);
    /* block by block, so that each block's rows are written in order */
    for (uint32_t b = 0; b < 3 * nh; b++) {
        float *dst = qkv + ((size_t)b * Tp + t0) * hd;
        for (size_t r = 0; r < rows; r++)
            for (uint32_t d = 0, col = b * hd; d < hd; d += RV__VW, col += RV__VW) {
                VF v = RV__SFX(ld)(y + r * ldy + col);
                if (nout) v = v + RV__SFX(outlier_sum)(L, xo + r * nout, col);
                v = v + RV__SFX(ld)(L->bias + col);
                if (b < 2 * nh) v = v * c;
                RV__SFX(st)(dst + r * hd + d, v);
            }
    }
}

/* dst = LayerNorm(y) per row: mean and variance in two passes (lane sums
** in float, their total in double), then (y - mean) / sqrt(var + eps) *
** gamma + beta; amax (when not NULL) gets each row's largest |dst| over
** the channels the product `next` quantises (its outliers left out). */
RV__TGT static void RV__SFX(layernorm)(const float *y, size_t ldy, size_t rows, uint32_t n,
                                       const float *gamma, const float *beta, float eps, float *dst,
                                       size_t ldd, const rv__lin *next, float *amax) {
    const float *keep = next && next->n_out ? next->keep : NULL;
    for (size_t r = 0; r < rows; r++) {
        const float *yr = y + r * ldy;
        VF a = RV__SFX(splat)(0.0f);
        for (uint32_t c = 0; c < n; c += RV__VW) a = a + RV__SFX(ld)(yr + c);
        double sum = 0;
        for (int i = 0; i < RV__VW; i++) sum += a[i];
        float mean = (float)(sum / n);
        VF mv = RV__SFX(splat)(mean);
        VF b = RV__SFX(splat)(0.0f);
        for (uint32_t c = 0; c < n; c += RV__VW) {
            VF d = RV__SFX(ld)(yr + c) - mv;
            b = RV__FMA(d, d, b);
        }
        double ss = 0;
        for (int i = 0; i < RV__VW; i++) ss += b[i];
        float rstd = (float)(1.0 / sqrt(ss / n + (double)eps));
        VF rv = RV__SFX(splat)(rstd);
        float *dr = dst + r * ldd;
        VF m = RV__SFX(splat)(0.0f);
        for (uint32_t c = 0; c < n; c += RV__VW) {
            VF d = (RV__SFX(ld)(yr + c) - mv) * rv;
            VF o = RV__FMA(d, RV__SFX(ld)(gamma + c), RV__SFX(ld)(beta + c));
            RV__SFX(st)(dr + c, o);
            if (keep) o = o * RV__SFX(ld)(keep + c);
            m = RV__SFX(vmax)(m, RV__SFX(vabs)(o));
        }
        if (amax) amax[r] = RV__SFX(hmax)(m);
    }
}

/* The embeddings of rows [t0, t0 + rows) (positions pos[]) into y. */
RV__TGT static void RV__SFX(embed)(const rv_encoder *m, const int32_t *ids, const int32_t *types,
                                   const uint32_t *pos, size_t rows, float *y, size_t ldy) {
    uint32_t h = m->hidden;
    for (size_t r = 0; r < rows; r++) {
        const int8_t *w = m->word + (size_t)ids[r] * h;
        int32_t ty = types ? types[r] : 0;
        const int8_t *t = m->type + (size_t)ty * h;
        const int8_t *p = m->position + (size_t)pos[r] * h;
        VF ws = RV__SFX(splat)(m->word_scale[ids[r]]);
        VF ts = RV__SFX(splat)(m->type_scale[ty]);
        VF ps = RV__SFX(splat)(m->position_scale[pos[r]]);
        float *yr = y + r * ldy;
        for (uint32_t c = 0; c < h; c += RV__VW) {
            VF wv, tv, pv;
            for (int i = 0; i < RV__VW; i++) {
                wv[i] = (float)w[c + i];
                tv[i] = (float)t[c + i];
                pv[i] = (float)p[c + i];
            }
            RV__SFX(st)(yr + c, (wv * ws + tv * ts) + pv * ps);
        }
    }
}

/* One tile of scores: sc[u] (a vector of the block's queries) = the
** queries qt (hd x RV__VW) times key u of kj (RV__NK rows of hd); returns
** mx raised to the scores of the first `valid` keys (the text's; the
** rest of the tile reads past its last key, and is never used).  Inlined
** with a constant hd, every key element's address is a constant offset
** from one pointer, so each rides in its multiply-add.  pairs (a
** constant): the head's elements in bfloat16 pairs, each pair's second
** first (elements 1, 0, 3, 2, ...), the order of vdpbf16ps. */
RV__TGT static inline __attribute__((always_inline)) VF RV__SFX(score_tile)(
    const float *qt, const float *kj, uint32_t hd, size_t valid, float *sc, VF mx, uint32_t pairs) {
    VF a[RV__NK];
    for (int u = 0; u < RV__NK; u++) a[u] = RV__SFX(splat)(0.0f);
    for (uint32_t d2 = 0; d2 < hd; d2++) {
        const uint32_t d = d2 ^ pairs;
        VF qv = RV__SFX(ld)(qt + d * RV__VW);
        for (int u = 0; u < RV__NK; u++) a[u] = RV__FMA(RV__SFX(splat)(kj[u * hd + d]), qv, a[u]);
    }
    for (int u = 0; u < RV__NK; u++) {
        RV__SFX(st)(sc + u * RV__VW, a[u]);
        if ((size_t)u < valid) mx = RV__SFX(vmax)(mx, a[u]);
    }
    return mx;
}

/* Self-attention of one text of L tokens -> ctx (L rows of hidden, heads
** side by side).  q0: the text's first query of head 0 in the head-major
** buffer of finish_qkv (Tp rows a block; queries and keys scaled).
**
** A block of RV__VW queries is computed with one query per vector lane:
** a vector holds one key's scores for the block's queries, so the softmax
** (largest, exp, sum) is elementwise over keys, and each score and weight
** step is a vector times a broadcast key or value element, which AVX-512
** folds into its multiply-add.  Per block: the queries transposed (hd x
** RV__VW, zero past L), the scores in tiles of RV__NK keys read straight
** from the keys' block, the softmax over the L real keys, the weighted
** values in passes of RV__ND columns, divided by the sum, and transposed
** back into ctx.  A lane's arithmetic never looks at another lane, so a
** token's result does not depend on its block's other rows; the keys a
** last tile reads past the text (the next text's, or the buffer's zero
** rows) only make scores that no step reads.
**
** With bfloat16 attention (m->attn_bf16) the queries, keys, values and
** weights are rounded to bfloat16 first (the keys and values into
** scratch, zero past the text's end, so that the weights' pass runs over
** whole pairs of keys) and every sum runs in the order of vdpbf16ps: the
** second of each pair of elements (of a head's row; of keys, counted from
** the text's first) before the first.  The products of bfloat16 values
** are exact in float32, so this computes what rv__attention_bf16 does
** with the instructions; the sums of the softmax stay in float32. */
RV__TGT static void RV__SFX(attention)(const rv_encoder *m, const float *q0, size_t Tp, size_t L,
                                       float *ctx, float *scratch) {
    const uint32_t h = m->hidden, nh = m->heads, hd = h / nh, bf = m->attn_bf16;
    /* key rows the scores read: bfloat16's copies, even and zero past L */
    const size_t Lp = bf ? (L + 31) / 32 * 32 : (L + RV__NK - 1) / RV__NK * RV__NK;
    float *qt = scratch;                        /* hd x RV__VW */
    float *sc = qt + hd * RV__VW;               /* Lp x RV__VW: scores, then weights */
    float *ot = sc + Lp * RV__VW;               /* hd x RV__VW: the block's context */
    float *kb = ot + hd * RV__VW;               /* bfloat16: Lp x hd rounded keys */
    float *vb = kb + Lp * hd;                   /* and values */
    const size_t Lw = bf ? (L + 1) / 2 * 2 : L; /* keys the weights' pass reads */
    for (uint32_t head = 0; head < nh; head++) {
        const float *q = q0 + (size_t)head * Tp * hd;
        const float *k = q0 + ((size_t)nh + head) * Tp * hd;
        const float *v = q0 + (2 * (size_t)nh + head) * Tp * hd;
        if (bf) {
            for (size_t j = 0; j < Lp; j++)
                for (uint32_t d = 0; d < hd; d += RV__VW) {
                    VF z = RV__SFX(splat)(0.0f);
                    RV__SFX(st)(kb + j * hd + d,
                                j < L ? RV__SFX(bf16)(RV__SFX(ld)(k + j * hd + d)) : z);
                    RV__SFX(st)(vb + j * hd + d,
                                j < L ? RV__SFX(bf16)(RV__SFX(ld)(v + j * hd + d)) : z);
                }
            k = kb;
            v = vb;
        }
        for (size_t i0 = 0; i0 < L; i0 += RV__VW) {
            size_t mr = L - i0 < RV__VW ? L - i0 : RV__VW;
            for (uint32_t d = 0; d < hd; d++)
                for (size_t r = 0; r < RV__VW; r++)
                    qt[d * RV__VW + r] = r < mr ? q[(i0 + r) * hd + d] : 0.0f;
            /* scores, a vector per key, and each lane's largest */
            VF mx = RV__SFX(splat)(-INFINITY);
            if (bf)
                for (uint32_t d = 0; d < hd; d++)
                    RV__SFX(st)(qt + d * RV__VW, RV__SFX(bf16)(RV__SFX(ld)(qt + d * RV__VW)));
            /* with MiniLM's head of 32 a constant, in either order */
            for (size_t j0 = 0; j0 < L; j0 += RV__NK) {
                const float *kj = k + j0 * hd;
                float *sj = sc + j0 * RV__VW;
                if (hd == 32 && bf)
                    mx = RV__SFX(score_tile)(qt, kj, 32, L - j0, sj, mx, 1);
                else if (hd == 32)
                    mx = RV__SFX(score_tile)(qt, kj, 32, L - j0, sj, mx, 0);
                else
                    mx = RV__SFX(score_tile)(qt, kj, hd, L - j0, sj, mx, bf);
            }
            /* softmax over the L keys, per lane (bfloat16: the weights
            ** rounded, zero for the key after an odd L) */
            VF sum = RV__SFX(splat)(0.0f);
            for (size_t j = 0; j < L; j++) {
                VF e = RV__SFX(vexp)(RV__SFX(ld)(sc + j * RV__VW) - mx);
                RV__SFX(st)(sc + j * RV__VW, bf ? RV__SFX(bf16)(e) : e);
                sum = sum + e;
            }
            if (Lw > L) RV__SFX(st)(sc + L * RV__VW, RV__SFX(splat)(0.0f));
            VF inv = RV__SFX(splat)(1.0f) / sum;
            /* the weighted values: a vector per column of the head */
            for (uint32_t d0 = 0; d0 < hd; d0 += RV__ND) {
                VF o[RV__ND];
                for (int u = 0; u < RV__ND; u++) o[u] = RV__SFX(splat)(0.0f);
                for (size_t j2 = 0; j2 < Lw; j2++) {
                    const size_t j = bf ? j2 ^ 1 : j2;
                    VF w = RV__SFX(ld)(sc + j * RV__VW);
                    const float *vj = v + j * hd + d0;
                    for (int u = 0; u < RV__ND; u++) o[u] = RV__FMA(RV__SFX(splat)(vj[u]), w, o[u]);
                }
#ifdef RV__TRANSPOSE          /* RV__ND == RV__VW: to the block's rows in registers */
                VF t[RV__VW]; /* not o, which then stays in registers */
                for (int u = 0; u < RV__VW; u++) t[u] = o[u] * inv;
                RV__TRANSPOSE(t);
                for (size_t r = 0; r < mr; r++)
                    RV__SFX(st)(ctx + (i0 + r) * h + (size_t)head * hd + d0, t[r]);
#else
                for (int u = 0; u < RV__ND; u++) RV__SFX(st)(ot + (d0 + u) * RV__VW, o[u] * inv);
#endif
            }
#ifndef RV__TRANSPOSE
            for (size_t r = 0; r < mr; r++) {
                float *out = ctx + (i0 + r) * h + (size_t)head * hd;
                for (uint32_t d = 0; d < hd; d++) out[d] = ot[d * RV__VW + r];
            }
#endif
        }
    }
}

/* The forward pass of rv_encoder_encode (arguments checked): see
** encoder.c for the buffers (w). */
RV__TGT static void RV__SFX(forward)(const rv_encoder *m, size_t n, const size_t *off,
                                     const int32_t *ids, const int32_t *types, float *out,
                                     rv__enc_ws *w) {
    const uint32_t h = m->hidden, f = m->ffn, nl = m->layers;
    const size_t T = off[n];
    const size_t Tp = w->Tp;
    const size_t lda = w->lda, ldy = w->ldy;
    /* embeddings, LayerNorm and layer 0's query/key/value product, by chunk */
    for (size_t t0 = 0; t0 < T; t0 += RV__ENC_CHUNK) {
        size_t rows = T - t0 < RV__ENC_CHUNK ? T - t0 : RV__ENC_CHUNK;
        const rv__lin *L = &m->layer[0].qkv;
        RV__SFX(embed)(m, ids + t0, types ? types + t0 : NULL, w->pos + t0, rows, w->y, ldy);
        RV__SFX(layernorm)(w->y, ldy, rows, h, m->emb_gamma, m->emb_beta, m->ln_eps, w->x + t0 * h,
                           h, L, w->am);
        RV__SFX(quant)(w->x + t0 * h, h, rows, h, L, w->am, w->a, lda, w->s, w->xo);
        RV__GEMM(L, w->a, lda, w->s, rows, w->y, ldy, w->gemm);
        RV__SFX(finish_qkv)(m, w->y, ldy, rows, L, w->xo, t0, w->qkv, Tp);
    }
    for (uint32_t l = 0; l < nl; l++) {
        const rv__layer *ly = &m->layer[l];
        for (size_t i = 0; i < n; i++)
            m->attend(m, w->qkv + off[i] * (h / m->heads), Tp, off[i + 1] - off[i],
                      w->ctx + off[i] * h, w->att);
        /* the rest of the layer and the next one's first product, row-wise */
        for (size_t t0 = 0; t0 < T; t0 += RV__ENC_CHUNK) {
            size_t rows = T - t0 < RV__ENC_CHUNK ? T - t0 : RV__ENC_CHUNK;
            float *x = w->x + t0 * h;
            const rv__lin *next = l + 1 < nl ? &m->layer[l + 1].qkv : NULL;
            RV__SFX(quant)(w->ctx + t0 * h, h, rows, h, NULL, NULL, w->a, lda, w->s, NULL);
            RV__GEMM(&ly->out, w->a, lda, w->s, rows, w->y, ldy, w->gemm);
            RV__SFX(finish)(w->y, ldy, rows, &ly->out, NULL, x, h, 0, NULL);
            RV__SFX(layernorm)(w->y, ldy, rows, h, ly->ln1_gamma, ly->ln1_beta, m->ln_eps, w->h1, h,
                               &ly->up, w->am);
            RV__SFX(quant)(w->h1, h, rows, h, &ly->up, w->am, w->a, lda, w->s, w->xo);
            RV__GEMM(&ly->up, w->a, lda, w->s, rows, w->y, ldy, w->gemm);
            RV__SFX(finish)(w->y, ldy, rows, &ly->up, w->xo, NULL, 0, 1, w->am);
            RV__SFX(quant)(w->y, ldy, rows, f, NULL, w->am, w->a, lda, w->s, NULL);
            RV__GEMM(&ly->down, w->a, lda, w->s, rows, w->y, ldy, w->gemm);
            RV__SFX(finish)(w->y, ldy, rows, &ly->down, NULL, w->h1, h, 0, NULL);
            RV__SFX(layernorm)(w->y, ldy, rows, h, ly->ln2_gamma, ly->ln2_beta, m->ln_eps, x, h,
                               next, next ? w->am : NULL);
            if (!next) continue;
            RV__SFX(quant)(x, h, rows, h, next, w->am, w->a, lda, w->s, w->xo);
            RV__GEMM(next, w->a, lda, w->s, rows, w->y, ldy, w->gemm);
            RV__SFX(finish_qkv)(m, w->y, ldy, rows, next, w->xo, t0, w->qkv, Tp);
        }
    }
    rv__enc_pool(w->x, h, n, off, out);
}

#undef VF
#undef VI
#undef VB
#undef VU
/* the parameters too: each inclusion defines its own */
#undef RV__SFX
#undef RV__TGT
#undef RV__VW
#undef RV__FMA
#undef RV__GEMM
#undef RV__SPLAT
#undef RV__NK
#undef RV__ND
#undef RV__RCP
#undef RV__MAX
#undef RV__EXP
#undef RV__TRANSPOSE
