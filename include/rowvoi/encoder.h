/*
** rowvoi encoder: a BERT-style text encoder (MiniLM-L6) with int8 matrix
** products, computed by the engine itself.
**
** It runs the "rowscale" int8 recipe of rowvoi.index.embed: every linear
** layer multiplies int8 weights (one symmetric scale per output column) by
** int8 activations (one symmetric scale per token, max|x| / 127, zero point
** 128); a few channels of each LayerNorm output ("outliers") stay out of
** the int8 product and are multiplied in float32.  Attention, softmax,
** GELU, LayerNorm and the embeddings' sums are float32; the attention
** float32 or bfloat16 (rv_encoder_spec.attention).  The output of
** rv_encoder_encode is each text's mean-pooled, L2-normalised last hidden
** state (the pooling accumulates in double, in token order).
**
** Why its own code: each token's arithmetic depends on that token's row
** and its own text's rows only, so a batch holds the texts back to back
** with no padding, and every row-wise step (scale, bias, residual,
** LayerNorm, GELU, the next product's quantisation) runs while the rows
** are still in the caches, fused with the products.
**
** Results: the integer products are exact on every kernel, so they give
** the same integers everywhere; the float32 steps round the same way on
** one kernel whatever the batch, so a text's vector is the same bits alone
** or in any batch, on every run.  Different kernels (rv_encoder_kernel) may
** differ in the last bits of the float32 steps (not "avx512-bf16" and
** "avx512-vnni": they give the same bits).
**
** Kernels: "avx512-bf16" ("avx512-vnni" with AVX-512 BF16's dot products
** for a bfloat16 attention), "avx512-vnni" (AVX-512 with VNNI dot
** products), "avx2" (AVX2 + FMA, 16-bit integer products) and "portable"
** (plain C), picked from the CPU's features when the encoder is created,
** or asked for by name.
**
** Thread-safety: an encoder is immutable once created; any number of
** threads may call rv_encoder_encode on it at once.  Each call runs on its
** calling thread only (run batches side by side for more cores).
*/
#ifndef ROWVOI_ENCODER_H
#define ROWVOI_ENCODER_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rv_encoder rv_encoder;

/* The attention's arithmetic (rv_encoder_spec.attention).  FLOAT32: in
** float32.  BFLOAT16: queries, keys, values and the softmax's weights
** rounded to bfloat16 (to nearest even; a subnormal to zero) before
** their products, which are exact in float32 and summed in float32 in
** the order of vdpbf16ps: the second of each pair (of a head's elements;
** of a text's keys, from its first) before the first; the softmax's
** maxima, exp and sums stay float32.  Every kernel computes it; the
** "avx512-bf16" kernel with the bfloat16 instructions, at about half the
** attention's multiply-adds. */
#define RV_ENCODER_ATTN_FLOAT32  0u
#define RV_ENCODER_ATTN_BFLOAT16 1u

/* Limits rv_encoder_create checks (a larger model is refused). */
#define RV_ENCODER_MAX_HIDDEN   4096u
#define RV_ENCODER_MAX_LAYERS   64u
#define RV_ENCODER_MAX_OUTLIERS 64u

/*
** One linear layer y = x W + b of k inputs and n outputs, in the int8
** recipe.  weight: k * n int8, row-major (row i = input channel i), with
** its outlier rows zero; scale: n column scales (> 0, finite); bias: n;
** outliers: n_outliers input channels (ascending, < k) multiplied in
** float32 instead, outlier_rows their n_outliers * n float32 weights
** (NULL when n_outliers is 0).  The channels of a linear's outliers are
** those of the LayerNorm output it reads; a linear that reads the
** attention context or the GELU output has none.
*/
typedef struct rv_encoder_linear {
    const int8_t *weight;
    const float *scale;
    const float *bias;
    uint32_t n_outliers;
    const uint32_t *outliers;
    const float *outlier_rows;
} rv_encoder_linear;

/* One transformer layer: attention (qkv: hidden -> 3 * hidden, query, key
** and value side by side; out: hidden -> hidden), LayerNorm 1, the
** feed-forward (up: hidden -> ffn, GELU, down: ffn -> hidden), LayerNorm 2.
** ln*_gamma / ln*_beta: hidden floats each. */
typedef struct rv_encoder_layer {
    rv_encoder_linear qkv;
    rv_encoder_linear out;
    rv_encoder_linear up;
    rv_encoder_linear down;
    const float *ln1_gamma;
    const float *ln1_beta;
    const float *ln2_gamma;
    const float *ln2_beta;
} rv_encoder_layer;

/*
** The model.  The embeddings are int8 tables with one scale per row
** (word: vocab rows, position: max_positions rows, type: type_vocab rows,
** each of hidden columns); a token's input is word + type + position,
** summed in that order, then LayerNorm (emb_gamma, emb_beta).
** attn_scale multiplies queries and keys alike (1 / head_dim^(1/4) gives
** the usual 1 / sqrt(head_dim) on their product).  hidden must be a
** multiple of 64 and of heads, with hidden / heads a multiple of 16; ffn a
** multiple of 64.
*/
typedef struct rv_encoder_spec {
    uint32_t hidden;        /* 64 .. RV_ENCODER_MAX_HIDDEN */
    uint32_t heads;         /* attention heads */
    uint32_t ffn;           /* the feed-forward's width */
    uint32_t layers;        /* 1 .. RV_ENCODER_MAX_LAYERS */
    uint32_t vocab;         /* rows of word */
    uint32_t max_positions; /* rows of position: the longest text */
    uint32_t type_vocab;    /* rows of type */
    float ln_eps;           /* every LayerNorm's epsilon */
    float attn_scale;       /* multiplies queries and keys */
    const int8_t *word;
    const int8_t *position;
    const int8_t *type;
    const float *word_scale;
    const float *position_scale;
    const float *type_scale;
    const float *emb_gamma;
    const float *emb_beta;
    const rv_encoder_layer *layer; /* layers entries */
    const char *kernel;            /* NULL or "": the best the CPU has; else one name */
    uint32_t attention;            /* RV_ENCODER_ATTN_FLOAT32 (0) or _BFLOAT16 */
} rv_encoder_spec;

/*
** Create an encoder from spec.                         CONSTRUCTOR: rv_encoder
** Copies every array (the caller may free them on return) and packs the
** weights for the kernel.  Returns RV_OK and *out; RV_E_INVALID_ARG for a
** NULL pointer, a non-finite or non-positive scale or a non-finite float
** (naming the array), outlier channels that are not ascending or not
** below k, an unknown kernel name or attention; RV_E_SHAPE for dimensions
** the kernels do not take (above); RV_E_RANGE for a dimension above the
** limits; RV_E_STATE when the named kernel needs instructions this CPU
** lacks; RV_E_NOMEM.  Ownership: free with rv_encoder_free.  Since: 0.1
*/
RV_API rv_status rv_encoder_create(const rv_encoder_spec *spec, rv_encoder **out /* OUT */);

/* Free an encoder.  NULL is a no-op.  Since: 0.1 */
RV_API void rv_encoder_free(rv_encoder *enc);

/* The kernel's name ("avx512-bf16", "avx512-vnni", "avx2" or "portable";
** "" for NULL).
** The string is static.  Since: 0.1 */
RV_API const char *rv_encoder_kernel(const rv_encoder *enc);

/* The output dimension (hidden; 0 for NULL).  Since: 0.1 */
RV_API uint32_t rv_encoder_dim(const rv_encoder *enc);

/*
** Encode n texts.                                          METHOD: rv_encoder
** Text i is tokens [offsets[i], offsets[i + 1]) of ids (token ids, < vocab)
** and of type_ids (< type_vocab; NULL: all 0); positions count from 0 in
** each text.  offsets: n + 1 ascending entries from 0; every text holds 1
** .. max_positions tokens.  out: n * hidden floats, row i text i's unit
** vector (mean of its last hidden states, L2-normalised).
** Memory: 5 * hidden floats per token of the call, plus under 1 MB for a
** hidden of 384 (buffers of 48 rows and of the longest text's attention),
** freed on return; split very large calls.
** Returns RV_OK; RV_E_INVALID_ARG for NULL pointers with n > 0; RV_E_RANGE
** naming the first text and token whose id or type id is out of range, a
** text with no tokens or more than max_positions, offsets that do not
** start at 0 or decrease, or a count no array can hold; RV_E_NOMEM.  On an
** error out is unspecified.  Thread-safety: any number of concurrent calls
** on one encoder.  Since: 0.1
*/
RV_API rv_status rv_encoder_encode(const rv_encoder *enc, size_t n, const size_t *offsets,
                                   const int32_t *ids, const int32_t *type_ids,
                                   float *out /* OUT */);

#ifdef __cplusplus
}
#endif

#endif /* ROWVOI_ENCODER_H */
