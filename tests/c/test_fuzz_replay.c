/*
** Replay driver for the fuzz targets (zstd style): runs
** LLVMFuzzerTestOneInput on every file of tests/fuzz/corpus/setcover/ and on
** 3,000 inputs drawn from the library's seeded generator, so the fuzz
** invariants are checked by every ctest run even without libFuzzer.
*/
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rowvoi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#include "../fuzz/fuzz_setcover.c"

#ifndef RV_FUZZ_CORPUS
#  define RV_FUZZ_CORPUS "tests/fuzz/corpus/setcover"
#endif

int main(void) {
    size_t files = 0;
    DIR *d = opendir(RV_FUZZ_CORPUS);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.') continue;
            char path[1024];
            snprintf(path, sizeof path, "%s/%s", RV_FUZZ_CORPUS, e->d_name);
            FILE *f = fopen(path, "rb");
            if (!f) continue;
            uint8_t buf[4096];
            size_t n = fread(buf, 1, sizeof buf, f);
            fclose(f);
            LLVMFuzzerTestOneInput(buf, n);
            files++;
        }
        closedir(d);
    }
    rv_rng rng;
    rv_rng_seed(&rng, 20261129);
    for (int t = 0; t < 3000; t++) {
        uint8_t buf[600];
        size_t n = (size_t)rv_rng_below(&rng, sizeof buf);
        for (size_t i = 0; i < n; i++) buf[i] = (uint8_t)rv_rng_next(&rng);
        LLVMFuzzerTestOneInput(buf, n);
    }
    printf("replayed %zu corpus files and 3000 generated inputs\n", files);
    return 0;
}
