/*
** Tests of the engine's parallel-for (src/core/parallel.h): the one
** thread-count rule, the fan-out (every worker index runs exactly once, the
** caller is worker 0) and the static block split.
*/
#include <pthread.h>
#include <stdatomic.h>

#include "rv_test.h"
#include "../../src/core/parallel.h"

static void test_thread_count_rule(void) {
    unsigned cpus = rv__online_cpus();
    EXPECT_TRUE(cpus >= 1 && cpus <= RV__MAX_THREADS);
    /* explicit counts are honoured, whatever the size of the job */
    EXPECT_EQ(rv__threads_for(3, 100, 1.0, 1e9), 3u);
    /* ... capped at RV__MAX_THREADS and at the work items */
    EXPECT_EQ(rv__threads_for(1000, 1000000, 1e12, 0.0), RV__MAX_THREADS);
    EXPECT_EQ(rv__threads_for(8, 5, 1e12, 0.0), 5u);
    /* 0: the online CPUs, or one below the threshold */
    EXPECT_EQ(rv__threads_for(0, 1000000, 1e12, 1e6), cpus);
    EXPECT_EQ(rv__threads_for(0, 1000000, 10.0, 1e6), 1u);
    /* never zero, even for no work items */
    EXPECT_EQ(rv__threads_for(4, 0, 0.0, 0.0), 1u);
    EXPECT_EQ(rv__threads_for(0, 0, 0.0, 0.0), 1u);
}

typedef struct {
    atomic_int runs[RV__MAX_THREADS];
    pthread_t caller;
    atomic_int caller_was_zero;
} fanout_ctx;

static void fanout_worker(void *ctx, unsigned t) {
    fanout_ctx *c = (fanout_ctx *)ctx;
    atomic_fetch_add(&c->runs[t], 1);
    if (t == 0 && pthread_equal(pthread_self(), c->caller)) atomic_store(&c->caller_was_zero, 1);
}

static void test_every_worker_runs_once(void) {
    unsigned counts[] = {1, 2, 3, 7, RV__MAX_THREADS};
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++) {
        fanout_ctx c;
        for (unsigned t = 0; t < RV__MAX_THREADS; t++) atomic_init(&c.runs[t], 0);
        c.caller = pthread_self();
        atomic_init(&c.caller_was_zero, 0);
        rv__parallel_run(counts[i], fanout_worker, &c);
        for (unsigned t = 0; t < RV__MAX_THREADS; t++)
            EXPECT_EQ(atomic_load(&c.runs[t]), t < counts[i] ? 1 : 0);
        EXPECT_EQ(atomic_load(&c.caller_was_zero), 1);
    }
}

typedef struct {
    size_t n;
    unsigned T;
    unsigned char *hit; /* n flags */
    double *out;
} block_ctx;

static void block_worker(void *ctx, unsigned t) {
    block_ctx *c = (block_ctx *)ctx;
    size_t lo, hi;
    rv__parallel_block(c->n, c->T, t, &lo, &hi);
    for (size_t i = lo; i < hi; i++) {
        c->hit[i]++;
        c->out[i] = (double)i * 0.5 + 1.0 / (double)(i + 1);
    }
}

static void test_blocks_cover_once_and_results_match(void) {
    size_t ns[] = {0, 1, 5, 64, 1001};
    for (size_t a = 0; a < sizeof ns / sizeof *ns; a++) {
        size_t n = ns[a];
        double ref[1001];
        for (size_t i = 0; i < n; i++) ref[i] = (double)i * 0.5 + 1.0 / (double)(i + 1);
        for (unsigned T = 1; T <= 9; T++) {
            unsigned char hit[1001] = {0};
            double out[1001];
            block_ctx c = {n, T, hit, out};
            rv__parallel_run(T, block_worker, &c);
            size_t prev_hi = 0;
            for (unsigned t = 0; t < T; t++) {
                size_t lo, hi;
                rv__parallel_block(n, T, t, &lo, &hi);
                EXPECT_EQ(lo, prev_hi); /* contiguous, in worker order */
                EXPECT_TRUE(hi - lo <= n / T + 1);
                prev_hi = hi;
            }
            EXPECT_EQ(prev_hi, n);
            for (size_t i = 0; i < n; i++) {
                EXPECT_EQ(hit[i], 1);
                EXPECT_TRUE(out[i] == ref[i]); /* bit-identical for any T */
            }
        }
    }
}

int main(void) {
    RUN_TEST(test_thread_count_rule);
    RUN_TEST(test_every_worker_runs_once);
    RUN_TEST(test_blocks_cover_once_and_results_match);
    return RV_TEST_SUMMARY();
}
