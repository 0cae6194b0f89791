/*
** Replay driver for the lexical fuzz targets (tests/fuzz/fuzz_bm25_load.c
** and fuzz_text.c): runs each on every file of its corpus directory and on
** inputs generated from the library's seeded generator -- for the loader,
** mutations (byte changes, truncations, insertions) of the corpus images,
** with and without a recomputed checksum -- so the invariants are checked by
** every ctest run, with the sanitizers in the sanitizer build.
*/
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rowvoi.h"

#define LLVMFuzzerTestOneInput fuzz_bm25_load_one
#include "../fuzz/fuzz_bm25_load.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_text_one
#include "../fuzz/fuzz_text.c"
#undef LLVMFuzzerTestOneInput

typedef struct {
    uint8_t *data[64];
    size_t len[64];
    size_t n;
} seeds;

/* Corpus files sit beside this test: ../fuzz/corpus/<name>/. */
static void read_corpus(const char *name, seeds *s) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", __FILE__);
    char *slash = strrchr(dir, '/');
    if (!slash) return;
    snprintf(slash, sizeof dir - (size_t)(slash - dir), "/../fuzz/corpus/%s", name);
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) && s->n < 64) {
        if (e->d_name[0] == '.') continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        if (!f) continue;
        uint8_t *buf = malloc(1 << 16);
        size_t n = fread(buf, 1, 1 << 16, f);
        fclose(f);
        s->data[s->n] = buf;
        s->len[s->n++] = n;
    }
    closedir(d);
}

int main(void) {
    seeds idx = {{0}, {0}, 0}, txt = {{0}, {0}, 0};
    read_corpus("bm25_load", &idx);
    read_corpus("text", &txt);
    for (size_t i = 0; i < idx.n; i++) fuzz_bm25_load_one(idx.data[i], idx.len[i]);
    for (size_t i = 0; i < txt.n; i++) fuzz_text_one(txt.data[i], txt.len[i]);
    if (idx.n < 3 || txt.n < 3) {
        fprintf(stderr, "fuzz corpus missing (%zu index seeds, %zu text seeds)\n", idx.n, txt.n);
        return 1;
    }
    rv_rng rng;
    rv_rng_seed(&rng, 20261130);
    static uint8_t buf[1 << 17];
    size_t runs = 0;
    for (int t = 0; t < 3000; t++) {
        size_t s = (size_t)rv_rng_below(&rng, idx.n);
        size_t n = idx.len[s];
        memcpy(buf, idx.data[s], n);
        buf[0] = (uint8_t)rv_rng_below(&rng, 4); /* mostly: fix the checksum */
        int edits = 1 + (int)rv_rng_below(&rng, 4);
        for (int e = 0; e < edits; e++) {
            unsigned kind = (unsigned)rv_rng_below(&rng, 10);
            size_t at = 1 + (size_t)rv_rng_below(&rng, n > 1 ? n - 1 : 1);
            if (kind < 7) {
                buf[at] = (uint8_t)rv_rng_next(&rng);
            } else if (kind < 9) {
                n = at;                      /* truncate */
            } else if (n + 8 < sizeof buf) { /* insert bytes */
                memmove(buf + at + 8, buf + at, n - at);
                for (int j = 0; j < 8; j++) buf[at + j] = (uint8_t)rv_rng_next(&rng);
                n += 8;
            }
        }
        fuzz_bm25_load_one(buf, n);
        runs++;
    }
    for (int t = 0; t < 3000; t++) {
        size_t n = (size_t)rv_rng_below(&rng, 300);
        if (t % 2) {
            for (size_t i = 0; i < n; i++) buf[i] = (uint8_t)rv_rng_next(&rng);
        } else { /* mostly valid UTF-8: splice pieces of the text seeds */
            size_t o = 0;
            buf[o++] = (uint8_t)rv_rng_next(&rng);
            while (o < n) {
                size_t s = (size_t)rv_rng_below(&rng, txt.n);
                size_t a = 1 + (size_t)rv_rng_below(&rng, txt.len[s] > 1 ? txt.len[s] - 1 : 1);
                size_t m = (size_t)rv_rng_below(&rng, 16);
                for (size_t j = 0; j < m && a + j < txt.len[s] && o < sizeof buf; j++)
                    buf[o++] = txt.data[s][a + j];
                if (!m) break;
            }
            n = o;
        }
        fuzz_text_one(buf, n);
        runs++;
    }
    printf("replayed %zu index and %zu text corpus files, %zu generated inputs\n", idx.n, txt.n,
           runs);
    for (size_t i = 0; i < idx.n; i++) free(idx.data[i]);
    for (size_t i = 0; i < txt.n; i++) free(txt.data[i]);
    return 0;
}
