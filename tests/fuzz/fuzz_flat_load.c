/*
** Fuzz target for loading flat (dense) indexes.  The first input byte
** chooses the mode: even -- the rest is an index image whose payload and
** header checksums are recomputed first, so mutations reach the structural
** checks behind them; odd -- the image is loaded as is.  Whatever loads
** must then answer size/ids/get, search (with and without a filter, every
** storage kind's path), change, compact and save to an image that loads
** again into the same vectors.  Aborts when an invariant breaks; memory
** errors are the sanitizers'.  Built as a libFuzzer target with
** -DRV_BUILD_FUZZ=ON (clang); replayed under ctest by
** tests/fuzz/replay_main.c on tests/fuzz/corpus/flat_load/.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rowvoi.h"
#include "fuzz_util.h"
#include "../../src/dense/flat_internal.h"

/* Header layout of src/dense/flat_io.c: payload checksum at 56, header
** checksum over bytes 0 .. 87 at 88, payload from 96. */
static void fzf_put64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static void fzf_fix_sums(uint8_t *img, size_t n) {
    if (n < 96) return;
    rv__sum64 s;
    rv__sum64_init(&s, 0);
    rv__sum64_update(&s, img + 96, n - 96);
    fzf_put64(img + 56, rv__sum64_final(&s));
    rv__sum64_init(&s, 0);
    rv__sum64_update(&s, img, 88);
    fzf_put64(img + 88, rv__sum64_final(&s));
}

/* Search with every query shape the index allows; results are live ids in
** score order, the filtered search is the unfiltered one restricted. */
static void fzf_exercise(const rv_flat *ix) {
    size_t n = rv_flat_size(ix), dim = rv_flat_dim(ix);
    RVF_CHECK(dim >= 1 && dim <= RV_FLAT_MAX_DIM);
    if (dim > 256) return; /* keep executions fast; loading was the point */
    int64_t ids[64];
    size_t n_ids = 0;
    rv_status st = rv_flat_ids(ix, ids, 64, &n_ids);
    RVF_CHECK(st == RV_OK || st == RV_E_SHAPE);
    RVF_CHECK(n_ids == n);
    size_t shown = n < 64 ? n : 64;
    for (size_t i = 0; i < shown; i++) RVF_CHECK(rv_flat_contains(ix, ids[i]));
    float *q = malloc(dim * sizeof *q);
    float *rows = malloc((shown ? shown : 1) * dim * sizeof *rows);
    RVF_CHECK(q && rows);
    for (size_t j = 0; j < dim; j++) q[j] = (float)((j % 7) + 1) * 0.25f;
    if (shown) RVF_CHECK(rv_flat_get(ix, shown, ids, rows) == RV_OK);
    for (size_t i = 0; i < shown * dim; i++) RVF_CHECK(isfinite(rows[i]));
    enum { K = 8 };
    int64_t ri[K], rf[K], re[K];
    float rs[K], fs[K], es[K];
    size_t nf = 0, nff = 0, nfe = 0;
    rv_flat_search_params p;
    rv_flat_search_params_init(&p);
    p.k = K;
    p.n_threads = 1;
    st = rv_flat_search(ix, &p, 1, q, ri, rs, &nf);
    RVF_CHECK(st == RV_OK);
    RVF_CHECK(nf == (n < K ? n : K));
    for (size_t i = 0; i < nf; i++) {
        RVF_CHECK(rv_flat_contains(ix, ri[i]));
        if (i && rv_flat_metric(ix) == RV_METRIC_L2)
            RVF_CHECK(!(rs[i] < rs[i - 1]));
        else if (i)
            RVF_CHECK(!(rs[i] > rs[i - 1]));
    }
    p.exact = 1;
    RVF_CHECK(rv_flat_search(ix, &p, 1, q, re, es, &nfe) == RV_OK && nfe == nf);
    if (rv_flat_storage_kind(ix) == RV_FLAT_F32)
        for (size_t i = 0; i < nf; i++) RVF_CHECK(re[i] == ri[i] && es[i] == rs[i]);
    p.exact = 0;
    /* a filter of every other listed id (and one id not in the index) */
    int64_t pick[33];
    size_t n_pick = 0;
    for (size_t i = 0; i < shown && n_pick < 32; i += 2) pick[n_pick++] = ids[i];
    pick[n_pick++] = RV_MAX_ID;
    rv_idset *set = NULL;
    if (rv_idset_create(pick, n_pick, &set) == RV_OK) {
        p.filter = set;
        RVF_CHECK(rv_flat_search(ix, &p, 1, q, rf, fs, &nff) == RV_OK);
        for (size_t i = 0; i < nff; i++) RVF_CHECK(rv_idset_contains(set, rf[i]));
        rv_idset_free(set);
    }
    if (nf) {
        size_t nr[1];
        RVF_CHECK(rv_flat_rescore(ix, 1, q, nf, ri, K, 1, rf, fs, nr) == RV_OK);
        RVF_CHECK(nr[0] == nf);
    }
    free(q);
    free(rows);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    size_t n = size - 1;
    uint8_t *img = malloc(n ? n : 1);
    if (!img) return 0;
    memcpy(img, data + 1, n);
    if (data[0] % 2 == 0) fzf_fix_sums(img, n);
    rv_flat *ix = NULL;
    rv_status st = rv_flat_load_buffer(img, n, &ix);
    RVF_CHECK(st == RV_OK || st == RV_E_CORRUPT || st == RV_E_VERSION || st == RV_E_NOMEM);
    RVF_CHECK((st == RV_OK) == (ix != NULL));
    if (ix) {
        fzf_exercise(ix);
        /* save, reload: the same ids and vectors */
        size_t need = 0;
        RVF_CHECK(rv_flat_save_buffer(ix, NULL, 0, &need) == RV_E_SHAPE);
        uint8_t *out = malloc(need);
        RVF_CHECK(out && rv_flat_save_buffer(ix, out, need, &need) == RV_OK);
        rv_flat *back = NULL;
        RVF_CHECK(rv_flat_load_buffer(out, need, &back) == RV_OK);
        RVF_CHECK(rv_flat_size(back) == rv_flat_size(ix) && rv_flat_dim(back) == rv_flat_dim(ix));
        fzf_exercise(back);
        rv_flat_free(back);
        free(out);
        /* remove the first id, add it back as a new vector, compact */
        int64_t first;
        size_t got = 0;
        st = rv_flat_ids(ix, &first, 1, &got);
        RVF_CHECK(st == RV_OK || st == RV_E_SHAPE);
        if (got && rv_flat_dim(ix) <= 256) {
            size_t removed = 0;
            RVF_CHECK(rv_flat_delete(ix, 1, &first, &removed) == RV_OK && removed == 1);
            RVF_CHECK(!rv_flat_contains(ix, first));
            float v[256];
            for (uint32_t j = 0; j < rv_flat_dim(ix); j++) v[j] = 1.0f + (float)j;
            RVF_CHECK(rv_flat_add(ix, 1, v, &first, NULL) == RV_OK);
            RVF_CHECK(rv_flat_contains(ix, first));
            RVF_CHECK(rv_flat_compact(ix) == RV_OK);
            fzf_exercise(ix);
        }
        rv_flat_free(ix);
    }
    free(img);
    return 0;
}
