/*
** Fuzz target for loading BM25 indexes.  The first input byte chooses the
** mode: even -- the rest is an index image whose trailing CRC-32C is
** recomputed first, so mutations reach the structural checks behind the
** checksum; odd -- the image is loaded as is.  Whatever loads must then
** search (with and without a filter), explain, change, compact and save
** without fault, and save back to an image that loads again.  Aborts when an invariant
** breaks; memory errors are the sanitizers' to catch.  Built as a libFuzzer
** target with -DRV_BUILD_FUZZ=ON (clang); tests/c/test_fuzz_lexical.c
** replays it under ctest.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rowvoi.h"
#include "fuzz_util.h"

static uint32_t fzb_crc32c(const uint8_t *p, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
    }
    return ~c;
}

/* Whatever loaded must search safely; pruned == exhaustive; a filtered
** search equals the unfiltered ranking restricted to the filter. */
static void fzb_exercise(rv_bm25 *ix) {
    static const char *qs[] = {"apple banana", "cherry", "a", "zz", ""};
    rv_bm25_info info;
    RVF_CHECK(rv_bm25_get_info(ix, &info) == RV_OK);
    /* a filter: every other live id, plus an id that is not in the index */
    int64_t live[64], pick[65];
    size_t n_live = 0, n_pick = 0;
    rv_status lst = rv_bm25_ids(ix, live, 64, &n_live);
    RVF_CHECK(lst == RV_OK || lst == RV_E_SHAPE);
    RVF_CHECK(n_live == info.n_live);
    for (size_t i = 0; i < n_live && i < 64; i += 2) pick[n_pick++] = live[i];
    pick[n_pick++] = RV_MAX_ID;
    rv_idset *set = NULL;
    RVF_CHECK(rv_idset_create(pick, n_pick, &set) == RV_OK || set == NULL);
    for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
        int64_t ids[8], ide[8], idf[64], idall[64];
        float sc[8], sce[8], scf[64], scall[64];
        size_t nf = 0, nfe = 0, nff = 0, nall = 0;
        RVF_CHECK(rv_bm25_search(ix, qs[i], strlen(qs[i]), 8, 0, NULL, ids, sc, &nf, NULL) ==
                  RV_OK);
        RVF_CHECK(rv_bm25_search(ix, qs[i], strlen(qs[i]), 8, RV_BM25_EXHAUSTIVE, NULL, ide, sce,
                                 &nfe, NULL) == RV_OK);
        RVF_CHECK(nf == nfe);
        for (size_t j = 0; j < nf; j++) RVF_CHECK(ids[j] == ide[j] && sc[j] == sce[j]);
        for (size_t j = 0; j < nf; j++) RVF_CHECK(rv_bm25_contains(ix, ids[j]));
        if (set && n_live <= 64) {
            RVF_CHECK(rv_bm25_search(ix, qs[i], strlen(qs[i]), 64, 0, NULL, idall, scall, &nall,
                                     NULL) == RV_OK);
            RVF_CHECK(rv_bm25_search(ix, qs[i], strlen(qs[i]), 64, 0, set, idf, scf, &nff, NULL) ==
                      RV_OK);
            size_t m = 0;
            for (size_t j = 0; j < nall; j++) {
                if (!rv_idset_contains(set, idall[j])) continue;
                RVF_CHECK(m < nff && idf[m] == idall[j] && scf[m] == scall[j]);
                m++;
            }
            RVF_CHECK(m == nff);
        }
        if (nf) {
            size_t nr;
            float s;
            rv_bm25_explain_row rows[4];
            rv_status st =
                rv_bm25_explain(ix, qs[i], strlen(qs[i]), ids[0], rows, 4, &nr, &s, NULL);
            RVF_CHECK(st == RV_OK || st == RV_E_SHAPE);
            if (st == RV_OK) RVF_CHECK(s == sc[0]);
        }
    }
    rv_idset_free(set);
    /* terms round-trip through the dictionary */
    for (uint64_t t = 0; t < info.n_terms && t < 16; t++) {
        const char *s;
        size_t l;
        uint32_t id;
        int found;
        RVF_CHECK(rv_bm25_term(ix, (uint32_t)t, &s, &l) == RV_OK);
        RVF_CHECK(rv_bm25_lookup(ix, s, l, &id, &found) == RV_OK && found && id == t);
    }
}

/* Deleting and re-adding a live document keeps the index consistent. */
static void fzb_change(rv_bm25 *ix) {
    int64_t first;
    size_t n = 0;
    rv_status st = rv_bm25_ids(ix, &first, 1, &n);
    RVF_CHECK(st == RV_OK || st == RV_E_SHAPE);
    if (!n) return;
    RVF_CHECK(rv_bm25_delete(ix, &first, 1, NULL) == RV_OK);
    RVF_CHECK(!rv_bm25_contains(ix, first));
    const char *t = "apple cherry";
    size_t tl = strlen(t);
    RVF_CHECK(rv_bm25_add(ix, 1, &t, &tl, &first, NULL, NULL, NULL) == RV_OK);
    RVF_CHECK(rv_bm25_contains(ix, first));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    size_t n = size - 1;
    uint8_t *img = malloc(n ? n : 1);
    if (!img) return 0;
    memcpy(img, data + 1, n);
    if (data[0] % 2 == 0 && n >= 40) {
        uint32_t c = fzb_crc32c(img, n - 8);
        for (int i = 0; i < 4; i++) img[n - 8 + i] = (uint8_t)(c >> (8 * i));
    }
    rv_bm25 *ix = NULL;
    rv_status st = rv_bm25_load_buffer(img, n, &ix);
    RVF_CHECK(st == RV_OK || st == RV_E_CORRUPT || st == RV_E_VERSION || st == RV_E_NOMEM);
    RVF_CHECK((st == RV_OK) == (ix != NULL));
    if (ix) {
        fzb_exercise(ix);
        size_t need = 0;
        RVF_CHECK(rv_bm25_save_buffer(ix, NULL, 0, &need) == RV_E_SHAPE);
        uint8_t *out = malloc(need);
        RVF_CHECK(out && rv_bm25_save_buffer(ix, out, need, &need) == RV_OK);
        rv_bm25 *back = NULL;
        RVF_CHECK(rv_bm25_load_buffer(out, need, &back) == RV_OK);
        fzb_exercise(back);
        rv_bm25_free(back);
        free(out);
        fzb_change(ix);
        fzb_exercise(ix);
        RVF_CHECK(rv_bm25_compact(ix) == RV_OK);
        fzb_exercise(ix);
        rv_bm25_free(ix);
    }
    free(img);
    return 0;
}
