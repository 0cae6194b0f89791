/*
** Fuzz target for the hashing embedder.  The first five input bytes pick
** the options (dimension, word n-grams, character n-gram range, weight,
** seed) -- some of them out of range on purpose; the rest is text, cut
** into up to three texts at positions given by the sixth byte.  Checks:
** bad options give a status, never a hasher; strict UTF-8 decides success
** exactly as an independent validator says; every component is finite;
** a failed embedding leaves zeros; the batch call (one and two threads)
** gives the bit-identical vectors of one-by-one calls.  Replayed under
** ctest by tests/fuzz/replay_main.c on tests/fuzz/corpus/hashing/.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rowvoi.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 6) return 0;
    rv_hasher_options o;
    rv_hasher_options_init(&o);
    o.dim = data[0] % 2 ? (uint32_t)(data[0] >> 1) : 1u + (data[0] >> 1) % 48u;
    o.word_ngrams = data[1] % 5u;         /* 4 is out of range */
    o.char_min = (data[2] & 0x0Fu) % 18u; /* 17 is out of range */
    o.char_max = (data[2] >> 4) + (data[3] & 3u);
    static const float weights[] = {1.0f, 0.0f, 0.5f, 3.0f, -1.0f, NAN, INFINITY, 1e30f};
    o.char_weight = weights[(data[3] >> 2) % 8u];
    o.seed = (uint64_t)data[4] * 0x9E3779B97F4A7C15ull;
    uint8_t cut = data[5];
    const uint8_t *text = data + 6;
    size_t len = size - 6;

    rv_hasher *h = NULL;
    rv_status st = rv_hasher_create(&o, &h);
    RVF_CHECK((st == RV_OK) == (h != NULL));
    if (st != RV_OK) {
        RVF_CHECK(st == RV_E_RANGE || st == RV_E_INVALID_ARG);
        return 0;
    }
    uint32_t dim = rv_hasher_dim(h);
    RVF_CHECK(dim == o.dim && strlen(rv_hasher_id(h)) > 0);

    /* up to three texts, cut at len * cut/256 and half way after that */
    uint64_t off[4] = {0, 0, 0, len};
    off[1] = (uint64_t)len * (cut & 0x7Fu) / 128u;
    off[2] = off[1] + (len - off[1]) / 2;
    size_t n = (cut & 0x80u) ? 3 : 1;
    if (n == 1) off[1] = len;
    float *one = calloc((size_t)dim * n, sizeof *one);
    float *batch = calloc((size_t)dim * n, sizeof *batch);
    RVF_CHECK(one && batch);
    int all_valid = 1;
    for (size_t i = 0; i < n; i++) {
        const char *t = (const char *)text + off[i];
        size_t tl = (size_t)(off[i + 1] - off[i]);
        int valid = rvf_valid_utf8((const uint8_t *)t, tl, NULL);
        all_valid &= valid;
        st = rv_hasher_embed(h, tl ? t : NULL, tl, one + i * dim);
        RVF_CHECK(valid ? st == RV_OK : st == RV_E_INVALID_ARG);
        for (uint32_t j = 0; j < dim; j++) {
            RVF_CHECK(isfinite(one[i * dim + j]));
            if (!valid) RVF_CHECK(one[i * dim + j] == 0.0f);
        }
    }
    for (uint32_t threads = 1; threads <= 2; threads++) {
        st = rv_hasher_embed_batch(h, (const char *)text, off, n, threads, batch);
        RVF_CHECK(all_valid ? st == RV_OK : st == RV_E_INVALID_ARG);
        if (all_valid) RVF_CHECK(memcmp(one, batch, (size_t)dim * n * sizeof *one) == 0);
        if (n == 1 || len < 64) break; /* threads only pay off on longer inputs */
    }
    free(one);
    free(batch);
    rv_hasher_free(h);
    return 0;
}
