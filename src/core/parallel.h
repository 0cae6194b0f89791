/*
** The engine's one parallel-for.  Never installed.
**
** Thread-count rule (every threaded kernel: belief MI, flat search and
** re-scoring, BM25 batch search, the hashing embedder):
**
**   - n_threads > 0 is honoured as given, capped at RV__MAX_THREADS and at
**     the number of independent work items (columns, chunks, queries, texts);
**   - n_threads == 0 means one thread per online CPU, except that a job
**     whose work is below the kernel's threshold runs on the calling thread
**     alone (starting and joining threads would cost more than it saves);
**     each kernel names its unit of work and threshold where it calls
**     rv__threads_for;
**   - the calling thread is always worker 0.
**
** Determinism: kernels write each work item's result to its own slot (or
** merge per-thread partial results in worker order with ties broken by
** input order), so the output is bit-identical for any thread count.
**
** Failure to start a thread is not an error: rv__parallel_run then runs that
** worker's share on the calling thread after the others, so every worker
** index runs exactly once.
*/
#ifndef ROWVOI_CORE_PARALLEL_H
#define ROWVOI_CORE_PARALLEL_H

#include <stddef.h>
#include <stdint.h>

#include "../internal.h"

/* The most threads any kernel uses (per call). */
#define RV__MAX_THREADS 64u

/* Online CPUs (1 .. RV__MAX_THREADS). */
unsigned rv__online_cpus(void);

/* The thread count for a job by the rule above: requested as given (0:
** online CPUs, or 1 when work < min_work), capped at RV__MAX_THREADS and at
** n_items; at least 1. */
unsigned rv__threads_for(uint64_t requested, size_t n_items, double work, double min_work);

/* fn(ctx, t) for every t in [0, n_threads) (n_threads <= RV__MAX_THREADS):
** t = 0 on the calling thread, the others on new threads; returns when all
** have finished. */
typedef void (*rv__worker_fn)(void *ctx, unsigned t);
void rv__parallel_run(unsigned n_threads, rv__worker_fn fn, void *ctx);

/* Worker t's contiguous block [*lo, *hi) of n items split over n_threads
** (static schedule: block sizes differ by at most one). */
static inline void rv__parallel_block(size_t n, unsigned n_threads, unsigned t, size_t *lo,
                                      size_t *hi) {
    size_t base = n / n_threads, extra = n % n_threads;
    *lo = (size_t)t * base + (t < extra ? t : extra);
    *hi = *lo + base + (t < extra ? 1 : 0);
}

#endif /* ROWVOI_CORE_PARALLEL_H */
