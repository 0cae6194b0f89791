/*
** bench_flat_exact1: the fixed cost of ONE exact search of a small
** int8-storage flat index (the corpus dense query path: rv_flat_search with
** params.exact on an int8 cosine index, one query, one thread).
**
** Built by `python -m bench build-c` (CMake option RV_BUILD_BENCH, target
** bench_flat_exact1) and run by `python -m bench run c_flat_exact1`; or by hand:
**   cc -O2 -std=c11 bench/c/bench_flat_exact1.c -Iinclude -Lbuild/rel -lrowvoi \
**      -Wl,-rpath,$PWD/build/rel -lm -o bench_flat_exact1
**   bench_flat_exact1 [n] [dim] [k] [calls] [rounds]
**
** Data: n unit vectors in dim dimensions (default 1400 x 384, k = 11,
** like Cranfield with a MiniLM model): a quarter spread uniformly on the
** sphere, the rest in 20 clusters (centre + noise of norm ~0.6), so that
** scores are skewed like real text embeddings.  The queries are 64
** vectors drawn the same way (not in the index).  Each round times `calls`
** single-query searches cycling over the queries and prints us per call;
** the last line has the median and a checksum of the results (equal for
** any library that returns exact results).
*/
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rowvoi.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t rng_state = 0x243f6a8885a308d3ull;
static uint64_t next_u64(void) { /* splitmix64 */
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static double gauss(void) { /* Box-Muller */
    double u = ((double)(next_u64() >> 11) + 0.5) * 0x1p-53;
    double v = ((double)(next_u64() >> 11) + 0.5) * 0x1p-53;
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

static void unit(float *x, size_t dim) {
    double n = 0;
    for (size_t j = 0; j < dim; j++) n += (double)x[j] * x[j];
    double inv = 1.0 / sqrt(n);
    for (size_t j = 0; j < dim; j++) x[j] = (float)(x[j] * inv);
}

/* One vector: uniform (1 in 4) or a cluster centre plus noise. */
static void draw(float *x, const float *centres, size_t n_cent, size_t dim) {
    if (next_u64() % 4 == 0) {
        for (size_t j = 0; j < dim; j++) x[j] = (float)gauss();
    } else {
        const float *c = centres + (next_u64() % n_cent) * dim;
        double s = 0.6 / sqrt((double)dim);
        for (size_t j = 0; j < dim; j++) x[j] = c[j] + (float)(s * gauss());
    }
    unit(x, dim);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1400;
    size_t dim = argc > 2 ? strtoull(argv[2], NULL, 10) : 384;
    size_t k = argc > 3 ? strtoull(argv[3], NULL, 10) : 11;
    size_t calls = argc > 4 ? strtoull(argv[4], NULL, 10) : 20000;
    int rounds = argc > 5 ? atoi(argv[5]) : 5;
    size_t n_cent = 20, n_q = 64;
    float *cent = malloc(n_cent * dim * sizeof *cent);
    float *x = malloc(n * dim * sizeof *x), *qs = malloc(n_q * dim * sizeof *qs);
    for (size_t c = 0; c < n_cent; c++) {
        for (size_t j = 0; j < dim; j++) cent[c * dim + j] = (float)gauss();
        unit(cent + c * dim, dim);
    }
    for (size_t i = 0; i < n; i++) draw(x + i * dim, cent, n_cent, dim);
    for (size_t i = 0; i < n_q; i++) draw(qs + i * dim, cent, n_cent, dim);

    rv_flat_options opt;
    rv_flat_options_init(&opt);
    opt.dim = (uint32_t)dim;
    opt.metric = RV_METRIC_COSINE;
    opt.storage = RV_FLAT_I8;
    rv_flat *ix = NULL;
    if (rv_flat_create(&opt, &ix) || rv_flat_add(ix, n, x, NULL, NULL)) {
        fprintf(stderr, "build failed: %s\n", rv_errmsg());
        return 1;
    }
    rv_flat_search_params prm;
    rv_flat_search_params_init(&prm);
    prm.k = k;
    prm.n_threads = 1;
    prm.exact = 1;
    int64_t *ids = malloc(k * sizeof *ids);
    float *sc = malloc(k * sizeof *sc);
    uint64_t check = 1469598103934665603ull;
    for (size_t q = 0; q < n_q; q++) { /* checksum: every query once */
        size_t found = 0;
        if (rv_flat_search(ix, &prm, 1, qs + q * dim, ids, sc, &found)) return 1;
        for (size_t i = 0; i < found; i++) {
            uint32_t b;
            memcpy(&b, &sc[i], 4);
            check = (check ^ (uint64_t)ids[i]) * 1099511628211ull;
            check = (check ^ b) * 1099511628211ull;
        }
    }
    double *us = malloc((size_t)rounds * sizeof *us);
    for (int r = 0; r < rounds; r++) {
        double t0 = now();
        for (size_t c = 0; c < calls; c++) {
            size_t found = 0;
            rv_flat_search(ix, &prm, 1, qs + (c % n_q) * dim, ids, sc, &found);
        }
        us[r] = (now() - t0) * 1e6 / (double)calls;
        printf("{\"round\": %d, \"us_per_call\": %.3f}\n", r, us[r]);
    }
    qsort(us, (size_t)rounds, sizeof *us, cmp_double);
    printf("{\"n\": %zu, \"dim\": %zu, \"k\": %zu, \"median_us\": %.3f, \"min_us\": %.3f, "
           "\"checksum\": \"%016llx\"}\n",
           n, dim, k, us[rounds / 2], us[0], (unsigned long long)check);
    rv_flat_free(ix);
    free(cent);
    free(x);
    free(qs);
    free(ids);
    free(sc);
    free(us);
    return 0;
}
