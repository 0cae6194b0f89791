/*
** bench_graph_csr: time rv_graph_create (the CSR build) through the C API,
** without Python, with the page faults of each build.
**
** Built by `python -m bench build-c` (CMake option RV_BUILD_BENCH, target
** bench_graph_csr) and run by `python -m bench run c_graph_csr_ab`; or by hand:
**   cc -O2 -std=c11 bench/c/bench_graph_csr.c $(python -m rowvoi.config --cflags --libs) \
**      -o bench_graph_csr
**   bench_graph_csr [nodes] [edges] [rounds] [order] [n_threads] [borrow]
**
** Builds the graph of `python -m bench run graph --part big` without its vectors: nodes
** 0 .. nodes - 1, `edges` random edges (uniform ends, types 0 .. 3, random
** times), one document per node and one per 5th edge.  order is "random"
** (default) or "sorted" (edges ordered by source, as read from a table
** ordered by id).  n_threads is the spec's n_threads (0: the engine's
** choice).  borrow ("borrow" or "copy", the default) sets
** RV_GRAPH_BORROW_ATTRS where the library has it: the edge types and times
** are borrowed, as rowvoi.graph.MemoryGraph builds.  Prints one JSON line per round (wall ms, CPU ms, minor page
** faults) and a last line with the median and a checksum of both
** adjacency directions (equal across thread counts and orders of runs).
** The c_graph_csr_ab study runs builds of it against two libraries
** alternately (bench/results/graph_csr.md).
*/
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <rowvoi.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cpu_ms(const struct rusage *u) {
    return 1e3 * ((double)u->ru_utime.tv_sec + (double)u->ru_stime.tv_sec) +
           1e-3 * ((double)u->ru_utime.tv_usec + (double)u->ru_stime.tv_usec);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t next_u64(void) { /* splitmix64 */
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* FNV-style hash of every node's out- and in-lists (edge, neighbour). */
static uint64_t adjacency_checksum(const rv_graph *g, size_t n) {
    uint64_t h = 1469598103934665603ull;
    size_t cap = 1 << 16;
    int64_t *e = malloc(cap * sizeof *e), *v = malloc(cap * sizeof *v);
    for (size_t i = 0; i < n; i++) {
        size_t k;
        for (;;) {
            rv_status st =
                rv_graph_neighbours(g, (int64_t)i, RV_GRAPH_BOTH, -1, NULL, e, v, cap, &k);
            if (st == RV_OK) break;
            cap = k;
            e = realloc(e, cap * sizeof *e);
            v = realloc(v, cap * sizeof *v);
        }
        for (size_t j = 0; j < k; j++)
            h = (h ^ (uint64_t)e[j] ^ ((uint64_t)v[j] << 32)) * 1099511628211ull;
    }
    free(e);
    free(v);
    return h;
}

int main(int argc, char **argv) {
    size_t n = argc > 1 ? (size_t)atol(argv[1]) : 1000000;
    size_t m = argc > 2 ? (size_t)atol(argv[2]) : 5000000;
    int rounds = argc > 3 ? atoi(argv[3]) : 9;
    int sorted = argc > 4 && strcmp(argv[4], "sorted") == 0;
    unsigned n_threads = argc > 5 ? (unsigned)atoi(argv[5]) : 0;
    int borrow = argc > 6 && strcmp(argv[6], "borrow") == 0;
    if (rounds < 1) rounds = 1;
    int64_t *ids = malloc(n * sizeof *ids), *src = malloc(m * sizeof *src);
    int64_t *dst = malloc(m * sizeof *dst), *etime = malloc(m * sizeof *etime);
    uint16_t *etype = malloc(m * sizeof *etype);
    size_t nd = n + (m + 4) / 5;
    int64_t *doc_entity = malloc(nd * sizeof *doc_entity);
    for (size_t i = 0; i < n; i++) ids[i] = (int64_t)i;
    for (size_t e = 0; e < m; e++) {
        src[e] = (int64_t)(next_u64() % n);
        dst[e] = (int64_t)(next_u64() % n);
        etype[e] = (uint16_t)(next_u64() % 4);
        etime[e] = (int64_t)(next_u64() % 1000000);
    }
    if (sorted) { /* stable counting sort of the edges by source */
        size_t *cnt = calloc(n + 1, sizeof *cnt);
        int64_t *d2 = malloc(m * sizeof *d2);
        for (size_t e = 0; e < m; e++) cnt[src[e] + 1]++;
        for (size_t i = 0; i < n; i++) cnt[i + 1] += cnt[i];
        for (size_t e = 0; e < m; e++) d2[cnt[src[e]]++] = dst[e];
        size_t e = 0;
        for (size_t i = 0; i < n; i++)
            while (e < cnt[i]) src[e++] = (int64_t)i;
        free(dst);
        dst = d2;
        free(cnt);
    }
    for (size_t i = 0; i < n; i++) doc_entity[i] = (int64_t)i;
    for (size_t j = 0; j < nd - n; j++) doc_entity[n + j] = (int64_t)(n + 5 * j);
    rv_graph_spec s;
    rv_graph_spec_init(&s);
    s.n_nodes = n;
    s.node_ids = ids;
    s.n_edges = m;
    s.edge_src = src;
    s.edge_dst = dst;
    s.edge_type = etype;
    s.edge_time = etime;
    s.n_docs = nd;
    s.doc_entity = doc_entity;
#ifdef BENCH_N_THREADS
    s.n_threads = n_threads;
#else
    (void)n_threads;
#endif
#ifdef RV_GRAPH_BORROW_ATTRS
    if (borrow) s.flags |= RV_GRAPH_BORROW_ATTRS;
#else
    borrow = 0; /* (a library before the flag: always copies) */
#endif
    double *wall = malloc((size_t)rounds * sizeof *wall);
    uint64_t checksum = 0;
    for (int r = 0; r < rounds; r++) {
        struct rusage u0, u1;
        getrusage(RUSAGE_SELF, &u0);
        double t0 = now();
        rv_graph *g = NULL;
        if (rv_graph_create(&s, &g) != RV_OK) {
            fprintf(stderr, "create: %s\n", rv_errmsg());
            return 1;
        }
        double t1 = now();
        getrusage(RUSAGE_SELF, &u1);
        wall[r] = 1e3 * (t1 - t0);
        printf("{\"round\":%d,\"wall_ms\":%.2f,\"cpu_ms\":%.2f,\"minflt\":%ld}\n", r, wall[r],
               cpu_ms(&u1) - cpu_ms(&u0), u1.ru_minflt - u0.ru_minflt);
        if (r == 0) checksum = adjacency_checksum(g, n);
        rv_graph_free(g);
    }
    qsort(wall, (size_t)rounds, sizeof *wall, cmp_double);
    printf("{\"nodes\":%zu,\"edges\":%zu,\"order\":\"%s\",\"n_threads\":%u,\"borrow\":%d,"
           "\"median_ms\":%.2f,"
           "\"min_ms\":%.2f,\"max_ms\":%.2f,\"checksum\":\"%016llx\"}\n",
           n, m, sorted ? "sorted" : "random", n_threads, borrow, wall[rounds / 2], wall[0],
           wall[rounds - 1], (unsigned long long)checksum);
    return 0;
}
