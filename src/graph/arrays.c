/*
** The graph's large arrays, recycled from one build to the next (the
** kept arrays, rv__graph_alloc, rv__graph_keep, rv_graph_trim) and faulted
** in ahead of the build's writes (rv__graph_populate).
*/
#ifndef _GNU_SOURCE
#  define _GNU_SOURCE /* MADV_POPULATE_WRITE */
#endif
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#include "../core/parallel.h"
#include "graph_internal.h"

/*
** Why recycle: a build writes a few hundred MB of arrays for a million
** nodes, and a fresh large allocation is fresh pages that the kernel faults
** in and zeroes on first touch: that was about 40% of a build.  A graph is
** typically rebuilt per generation while the previous one is freed, so
** rv_graph_free keeps the large arrays (>= 1 MiB) of the graph, and the
** next build takes a kept array of the size it needs (up to 1.5x), whose
** pages are already there.  Bounded: when a graph is freed, every kept
** array that was waiting before that graph's build began (so the build
** passed it over) is released, so at most about two graphs' arrays wait;
** rv_graph_trim releases them all.  The build's scratch is recycled too.
*/
#define RV__KEEP_MIN   ((size_t)1 << 20)
#define RV__KEEP_SLOTS 64u

typedef struct rv__kept {
    void *p, *base; /* (rv__gblock) */
    size_t size;
    uint64_t stamp; /* rv__builds when kept */
} rv__kept;

static pthread_mutex_t rv__kept_lock = PTHREAD_MUTEX_INITIALIZER;
static rv__kept rv__kept_arr[RV__KEEP_SLOTS];
static unsigned rv__n_kept;
static uint64_t rv__builds; /* builds begun; under rv__kept_lock */

uint64_t rv__graph_build_begin(void) {
    pthread_mutex_lock(&rv__kept_lock);
    uint64_t b = ++rv__builds;
    pthread_mutex_unlock(&rv__kept_lock);
    return b;
}

/* A kept array of size .. 1.5 size bytes (the smallest), or NULL. */
static void *rv__kept_take(size_t size, size_t *got, void **base) {
    void *p = NULL;
    pthread_mutex_lock(&rv__kept_lock);
    unsigned best = RV__KEEP_SLOTS;
    for (unsigned i = 0; i < rv__n_kept; i++) {
        size_t z = rv__kept_arr[i].size;
        if (z >= size && z - size <= size / 2 &&
            (best == RV__KEEP_SLOTS || z < rv__kept_arr[best].size))
            best = i;
    }
    if (best < RV__KEEP_SLOTS) {
        p = rv__kept_arr[best].p;
        *base = rv__kept_arr[best].base;
        *got = rv__kept_arr[best].size;
        rv__kept_arr[best] = rv__kept_arr[--rv__n_kept];
    }
    pthread_mutex_unlock(&rv__kept_lock);
    return p;
}

/* Keep n arrays, first releasing those kept before build `since` (0:
** none); frees what is too small or finds no slot. */
void rv__graph_keep(const rv__gblock *b, unsigned n, uint64_t since) {
    void *drop[RV__KEEP_SLOTS + RV__GRAPH_BLOCKS];
    unsigned nd = 0;
    pthread_mutex_lock(&rv__kept_lock);
    for (unsigned i = 0; i < rv__n_kept;) {
        if (rv__kept_arr[i].stamp < since) {
            drop[nd++] = rv__kept_arr[i].base;
            rv__kept_arr[i] = rv__kept_arr[--rv__n_kept];
        } else {
            i++;
        }
    }
    for (unsigned i = 0; i < n; i++) {
        if (b[i].size < RV__KEEP_MIN || rv__n_kept == RV__KEEP_SLOTS) {
            drop[nd++] = b[i].base;
        } else {
            rv__kept_arr[rv__n_kept].p = b[i].p;
            rv__kept_arr[rv__n_kept].base = b[i].base;
            rv__kept_arr[rv__n_kept].size = b[i].size;
            rv__kept_arr[rv__n_kept++].stamp = rv__builds;
        }
    }
    pthread_mutex_unlock(&rv__kept_lock);
    for (unsigned i = 0; i < nd; i++) rv__free(drop[i]);
}

void rv_graph_trim(void) {
    rv__graph_keep(NULL, 0, UINT64_MAX);
}

#if defined(__linux__) && defined(MADV_HUGEPAGE)
#  define RV__HUGE ((size_t)1 << 21) /* a huge page (x86-64, arm64 with 4 KiB pages) */
#else
#  define RV__HUGE ((size_t)0)
#endif

/* An array of size bytes (at least 1), recorded in list[*n]: a kept one
** when there is one, else a fresh one.  A fresh array of a huge page or
** more is a whole number of huge pages, aligned to one (rv__graph_populate asks
** for huge pages there: a fault per 2 MiB rather than per 4 KiB; the
** slack, under 2 MiB of address space, is never touched). */
void *rv__graph_alloc(rv__gblock *list, unsigned *n, size_t size) {
    size_t got = size ? size : 1;
    void *base = NULL, *p = got >= RV__KEEP_MIN ? rv__kept_take(got, &got, &base) : NULL;
    int fresh = !p;
    if (!p) {
        if (RV__HUGE && got >= RV__HUGE && got <= SIZE_MAX / 2) {
            got = (got + RV__HUGE - 1) & ~(RV__HUGE - 1);
            base = rv__malloc(got + RV__HUGE);
            p = base ? (void *)(((uintptr_t)base + RV__HUGE - 1) & ~(uintptr_t)(RV__HUGE - 1))
                     : NULL;
        } else {
            p = base = rv__malloc(got);
        }
    }
    if (!p) return NULL;
    list[*n].p = p;
    list[*n].base = base;
    list[*n].size = got;
    list[(*n)++].fresh = fresh;
    return p;
}

/* Fault in the pages of the fresh arrays, the bytes split evenly over the
** workers: one madvise(MADV_POPULATE_WRITE) call maps a whole range, much
** cheaper than a fault per page on first touch; where it is not available
** the pages fault in as they are written. */
typedef struct rv__populate_job {
    const rv__gblock *b;
    unsigned n, nt;
} rv__populate_job;

static void rv__populate_worker(void *arg, unsigned t) {
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
    const rv__populate_job *j = (const rv__populate_job *)arg;
    size_t total = 0, at = 0, lo, hi;
    for (unsigned i = 0; i < j->n; i++) total += j->b[i].fresh ? j->b[i].size : 0;
    rv__parallel_block(total, j->nt, t, &lo, &hi);
    for (unsigned i = 0; i < j->n && at < hi; i++) {
        if (!j->b[i].fresh) continue;
        size_t a = lo > at ? lo - at : 0, z = j->b[i].size, e = hi - at < z ? hi - at : z;
        if (a < e) {
            /* whole pages, both ends rounded up (so the workers' ranges meet
            ** with no page faulted twice): huge pages in a block made of
            ** them (rv__graph_alloc), else 4 KiB */
            uintptr_t p = (uintptr_t)j->b[i].p, page = 4096;
            if (RV__HUGE && z >= RV__HUGE && !(p & (RV__HUGE - 1)) && !(z & (RV__HUGE - 1)))
                page = RV__HUGE;
            uintptr_t end = (p + z) & ~(page - 1);
            uintptr_t x = (p + a + page - 1) & ~(page - 1), y = (p + e + page - 1) & ~(page - 1);
            if (x > end) x = end;
            if (y > end) y = end;
            if (y > x) (void)madvise((void *)x, (size_t)(y - x), MADV_POPULATE_WRITE);
        }
        at += z;
    }
#else
    (void)arg;
    (void)t;
#endif
}

void rv__graph_populate(const rv__gblock *b, unsigned n, unsigned nt) {
    size_t total = 0;
    for (unsigned i = 0; i < n; i++) total += b[i].fresh ? b[i].size : 0;
    if (total < RV__KEEP_MIN) return; /* nothing worth a call (or a thread) */
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    /* huge pages for the blocks made of them (rv__graph_alloc): NumPy asks the
    ** same for its large arrays */
    for (unsigned i = 0; i < n; i++)
        if (b[i].fresh && b[i].size >= RV__HUGE && !((uintptr_t)b[i].p & (RV__HUGE - 1)))
            (void)madvise(b[i].p, b[i].size, MADV_HUGEPAGE);
#endif
    rv__populate_job j = {b, n, total < 8 * RV__KEEP_MIN ? 1u : nt};
    rv__parallel_run(j.nt, rv__populate_worker, &j);
}
