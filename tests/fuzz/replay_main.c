/*
** Replay driver for the fuzz targets when libFuzzer is absent (gcc
** builds): feeds every file of each directory given on the command line
** (the seed corpus and any crash reproducers) to LLVMFuzzerTestOneInput
** once.  ctest runs one such driver per target (CMakeLists.txt, "fuzz
** replay"), with the sanitizers in the sanitizer tiers.  Fails when a
** directory holds no input, so a lost corpus does not pass silently.
*/
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    size_t cap = 1 << 12, n = 0;
    uint8_t *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            fclose(f);
            return -1;
        }
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        uint8_t *grown = realloc(buf, cap * 2);
        if (!grown) free(buf);
        buf = grown;
        cap *= 2;
    }
    fclose(f);
    /* an exact-size copy, so reading past the input is caught */
    uint8_t *exact = malloc(n ? n : 1);
    if (!exact) {
        free(buf);
        return -1;
    }
    memcpy(exact, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    return 1;
}

int main(int argc, char **argv) {
    for (int a = 1; a < argc; a++) {
        DIR *d = opendir(argv[a]);
        if (!d) {
            fprintf(stderr, "%s: cannot open the corpus directory\n", argv[a]);
            return 1;
        }
        size_t files = 0;
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.') continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[a], e->d_name);
            int r = replay_file(path);
            if (r < 0) {
                fprintf(stderr, "%s: out of memory\n", path);
                closedir(d);
                return 1;
            }
            files += (size_t)r;
        }
        closedir(d);
        if (!files) {
            fprintf(stderr, "%s: no inputs\n", argv[a]);
            return 1;
        }
        printf("%s: replayed %zu inputs\n", argv[a], files);
    }
    return 0;
}
