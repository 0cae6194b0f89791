/*
** bench_bm25: time BM25 top-k search through the C API, without Python.
**
** Built by `python -m bench build-c` (CMake option RV_BUILD_BENCH, target
** bench_bm25) and run by `python -m bench run c_bm25`; or by hand:
**   cc -O2 -std=c11 bench/c/bench_bm25.c $(python -m rowvoi.config --cflags --libs) \
**      -o bench_bm25
**   bench_bm25 INDEX.rvx QUERIES.txt [k] [repeats] [n_threads]
**
** (An index file comes from rowvoi.index.lexical.BM25Index.save; queries are one
** per line.)
** Loads a saved index, reads one query per line, and runs every query
** `repeats` times single-threaded (rv_bm25_search) and once as a batch on
** n_threads threads (0: all cores).  Prints one JSON line per case with
** queries per second (the median over the repeats, with their minimum and
** maximum; wall clock), the mean work per query and a checksum of the
** results, e.g.
**   {"kernel":"bm25_search","n_docs":1000000,"k":10,"qps":...}
*/
#define _POSIX_C_SOURCE 200809L
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

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s INDEX QUERIES [k] [repeats] [n_threads]\n", argv[0]);
        return 2;
    }
    size_t k = argc > 3 ? (size_t)atol(argv[3]) : 10;
    int repeats = argc > 4 ? atoi(argv[4]) : 3;
    unsigned n_threads = argc > 5 ? (unsigned)atoi(argv[5]) : 0;
    if (k < 1 || repeats < 1) {
        fprintf(stderr, "k and repeats must be at least 1\n");
        return 2;
    }
    rv_bm25 *ix = NULL;
    double t0 = now();
    if (rv_bm25_load(argv[1], &ix) != RV_OK) {
        fprintf(stderr, "load: %s\n", rv_errmsg());
        return 1;
    }
    double t_load = now() - t0;
    FILE *f = fopen(argv[2], "rb");
    if (!f) {
        perror(argv[2]);
        return 1;
    }
    size_t cap = 1024, n = 0;
    char **q = malloc(cap * sizeof *q);
    size_t *ql = malloc(cap * sizeof *ql);
    char line[65536];
    while (fgets(line, sizeof line, f)) {
        size_t l = strlen(line);
        while (l && (line[l - 1] == '\n' || line[l - 1] == '\r')) l--;
        if (n == cap) {
            cap *= 2;
            q = realloc(q, cap * sizeof *q);
            ql = realloc(ql, cap * sizeof *ql);
        }
        q[n] = malloc(l + 1);
        memcpy(q[n], line, l);
        q[n][l] = 0;
        ql[n++] = l;
    }
    fclose(f);
    rv_bm25_info info;
    rv_bm25_get_info(ix, &info);
    int64_t *ids = malloc(n * k * sizeof *ids);
    float *sc = malloc(n * k * sizeof *sc);
    uint32_t *cnt = malloc(n * sizeof *cnt);
    double *secs = malloc((size_t)repeats * sizeof *secs);
    if (!q || !ql || !ids || !sc || !cnt || !secs) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    uint64_t docs_scored = 0, post_scored = 0, post_total = 0, checksum = 0;
    for (int r = 0; r < repeats; r++) {
        double t = now();
        docs_scored = post_scored = post_total = checksum = 0;
        for (size_t i = 0; i < n; i++) {
            size_t nf;
            rv_bm25_search_info si;
            if (rv_bm25_search(ix, q[i], ql[i], k, 0, NULL, ids, sc, &nf, &si) != RV_OK) {
                fprintf(stderr, "search: %s\n", rv_errmsg());
                return 1;
            }
            docs_scored += si.docs_scored;
            post_scored += si.postings_scored;
            post_total += si.postings_total;
            for (size_t j = 0; j < nf; j++) checksum = checksum * 31 + (uint64_t)ids[j];
        }
        secs[r] = now() - t;
    }
    /* median (and range) of the repeats: insertion sort of a few values */
    for (int a = 1; a < repeats; a++)
        for (int b = a; b > 0 && secs[b - 1] > secs[b]; b--) {
            double tmp = secs[b];
            secs[b] = secs[b - 1];
            secs[b - 1] = tmp;
        }
    double mid =
        repeats % 2 ? secs[repeats / 2] : 0.5 * (secs[repeats / 2 - 1] + secs[repeats / 2]);
    printf("{\"kernel\":\"bm25_search\",\"n_docs\":%llu,\"n_postings\":%llu,\"k\":%zu,"
           "\"n_queries\":%zu,\"threads\":1,\"qps\":%.1f,\"qps_min\":%.1f,\"qps_max\":%.1f,"
           "\"repeats\":%d,\"docs_scored\":%.1f,"
           "\"postings_scored\":%.1f,\"postings_total\":%.1f,\"load_s\":%.3f,"
           "\"checksum\":%llu}\n",
           (unsigned long long)info.n_live, (unsigned long long)info.n_postings, k, n,
           (double)n / mid, (double)n / secs[repeats - 1], (double)n / secs[0], repeats,
           (double)docs_scored / (double)n, (double)post_scored / (double)n,
           (double)post_total / (double)n, t_load, (unsigned long long)checksum);
    double t = now();
    if (rv_bm25_search_batch(ix, n, (const char *const *)q, ql, k, 0, NULL, n_threads, NULL, NULL,
                             ids, sc, cnt) != RV_OK) {
        fprintf(stderr, "batch: %s\n", rv_errmsg());
        return 1;
    }
    double dt = now() - t;
    printf("{\"kernel\":\"bm25_search_batch\",\"n_docs\":%llu,\"k\":%zu,\"n_queries\":%zu,"
           "\"threads\":%u,\"qps\":%.1f}\n",
           (unsigned long long)info.n_live, k, n, n_threads, (double)n / dt);
    for (size_t i = 0; i < n; i++) free(q[i]);
    free(q);
    free(ql);
    free(ids);
    free(sc);
    free(cnt);
    free(secs);
    rv_bm25_free(ix);
    return 0;
}
