/*
** The engine's one parallel-for: the thread-count rule and the fan-out.
** See parallel.h.
*/
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <unistd.h>

#include "parallel.h"

unsigned rv__online_cpus(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) return 1u;
    return n > (long)RV__MAX_THREADS ? RV__MAX_THREADS : (unsigned)n;
}

unsigned rv__threads_for(uint64_t requested, size_t n_items, double work, double min_work) {
    uint64_t t = requested;
    if (t == 0) t = work < min_work ? 1u : rv__online_cpus();
    if (t > RV__MAX_THREADS) t = RV__MAX_THREADS;
    if (t > n_items) t = n_items;
    return t < 1 ? 1u : (unsigned)t;
}

typedef struct rv__par_arg {
    rv__worker_fn fn;
    void *ctx;
    unsigned t;
} rv__par_arg;

static void *rv__par_start(void *arg) {
    rv__par_arg *a = (rv__par_arg *)arg;
    a->fn(a->ctx, a->t);
    return NULL;
}

void rv__parallel_run(unsigned n_threads, rv__worker_fn fn, void *ctx) {
    if (n_threads > RV__MAX_THREADS) n_threads = RV__MAX_THREADS;
    rv__par_arg args[RV__MAX_THREADS];
    pthread_t th[RV__MAX_THREADS];
    int started[RV__MAX_THREADS] = {0};
    for (unsigned t = 1; t < n_threads; t++) {
        args[t].fn = fn;
        args[t].ctx = ctx;
        args[t].t = t;
        started[t] = pthread_create(&th[t], NULL, rv__par_start, &args[t]) == 0;
    }
    fn(ctx, 0);
    for (unsigned t = 1; t < n_threads; t++) {
        if (started[t])
            pthread_join(th[t], NULL);
        else
            fn(ctx, t); /* could not start: run its share here */
    }
}
