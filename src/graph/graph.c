/*
** The graph: building the CSR from edge arrays, the id table, documents
** and vectors, and the per-node queries (neighbours, degree, edges).
**
** Why counting sorts: the edges of a node must come in input order (the
** documented order of every listing), and a stable counting sort by source
** (then by destination) gives exactly that in O(n_nodes + n_edges) with two
** sequential passes, where a comparison sort would cost O(E log E).
*/
#ifndef _GNU_SOURCE
#  define _GNU_SOURCE /* MADV_POPULATE_WRITE */
#endif
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>

#include "../core/parallel.h"
#include "graph_internal.h"

void rv_graph_spec_init(rv_graph_spec *spec) {
    if (!spec) return;
    memset(spec, 0, sizeof *spec);
    spec->metric = RV_METRIC_COSINE;
}

void rv_graph_walk_init(rv_graph_walk *walk) {
    if (!walk) return;
    memset(walk, 0, sizeof *walk);
    walk->max_depth = 1;
    walk->dir = RV_GRAPH_BOTH;
}

void rv_graph_facts_init(rv_graph_facts_params *p) {
    if (!p) return;
    memset(p, 0, sizeof *p);
    p->depth = 3;
    p->max_edges = 25;
}

/* ------------------------------------------------------ recycled arrays */

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

static uint64_t rv__build_begin(void) {
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
static void rv__kept_give(const rv__gblock *b, unsigned n, uint64_t since) {
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
    rv__kept_give(NULL, 0, UINT64_MAX);
}

#if defined(__linux__) && defined(MADV_HUGEPAGE)
#  define RV__HUGE ((size_t)1 << 21) /* a huge page (x86-64, arm64 with 4 KiB pages) */
#else
#  define RV__HUGE ((size_t)0)
#endif

/* An array of size bytes (at least 1), recorded in list[*n]: a kept one
** when there is one, else a fresh one.  A fresh array of a huge page or
** more is a whole number of huge pages, aligned to one (rv__populate asks
** for huge pages there: a fault per 2 MiB rather than per 4 KiB; the
** slack, under 2 MiB of address space, is never touched). */
static void *rv__gbuf(rv__gblock *list, unsigned *n, size_t size) {
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
            ** them (rv__gbuf), else 4 KiB */
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

static void rv__populate(const rv__gblock *b, unsigned n, unsigned nt) {
    size_t total = 0;
    for (unsigned i = 0; i < n; i++) total += b[i].fresh ? b[i].size : 0;
    if (total < RV__KEEP_MIN) return; /* nothing worth a call (or a thread) */
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    /* huge pages for the blocks made of them (rv__gbuf): NumPy asks the
    ** same for its large arrays */
    for (unsigned i = 0; i < n; i++)
        if (b[i].fresh && b[i].size >= RV__HUGE && !((uintptr_t)b[i].p & (RV__HUGE - 1)))
            (void)madvise(b[i].p, b[i].size, MADV_HUGEPAGE);
#endif
    rv__populate_job j = {b, n, total < 8 * RV__KEEP_MIN ? 1u : nt};
    rv__parallel_run(j.nt, rv__populate_worker, &j);
}

void rv_graph_free(rv_graph *g) {
    if (!g) return;
    rv__free(g->slots);
    rv__free(g->vec_owned);
    rv__free(g->doc_row);
    rv__free(g->inv_norm);
    rv__kept_give(g->blocks, g->n_blocks, g->birth);
    rv__free(g);
}

/* ------------------------------------------------------------ id table */

int64_t rv__graph_find(const rv_graph *g, int64_t id) {
    if (g->identity_ids) return (id >= 0 && (uint64_t)id < g->n_nodes) ? id : -1;
    if (!g->slots) return -1;
    uint64_t i = rv__mix64((uint64_t)id) & g->mask;
    for (;;) {
        uint32_t s = g->slots[i];
        if (!s) return -1;
        if (g->node_id[s - 1] == id) return (int64_t)(s - 1);
        i = (i + 1) & g->mask;
    }
}

/* Insert node index v (its id already in node_id); returns the index that
** already holds the id, or -1 when v was inserted. */
static int64_t rv__table_insert(rv_graph *g, uint32_t v) {
    int64_t id = g->node_id[v];
    uint64_t i = rv__mix64((uint64_t)id) & g->mask;
    for (;;) {
        uint32_t s = g->slots[i];
        if (!s) {
            g->slots[i] = v + 1;
            return -1;
        }
        if (g->node_id[s - 1] == id) return (int64_t)(s - 1);
        i = (i + 1) & g->mask;
    }
}

static rv_status rv__alloc_table(rv_graph *g, size_t cap_nodes) {
    uint64_t size = 16;
    while (size < 2 * (uint64_t)cap_nodes) size <<= 1;
    g->slots = (uint32_t *)rv__calloc(size, sizeof *g->slots);
    if (!g->slots) return rv__nomem("the graph's node id table");
    g->mask = size - 1;
    return RV_OK;
}


/* Below this much work (edges plus documents) a build runs on the calling
** thread alone: starting threads would cost more than they save. */
#define RV__GRAPH_PAR_MIN 100000.0

/* Whether node_ids[i] == i for every i, one block per worker. */
typedef struct rv__identity_job {
    const int64_t *ids;
    size_t n;
    unsigned nt;
    unsigned char no[RV__MAX_THREADS];
} rv__identity_job;

static void rv__identity_worker(void *arg, unsigned t) {
    rv__identity_job *j = (rv__identity_job *)arg;
    size_t lo, hi;
    rv__parallel_block(j->n, j->nt, t, &lo, &hi);
    unsigned char no = 0;
    for (size_t i = lo; i < hi && !no; i += 4096) { /* (stops soon on a table of ids) */
        size_t z = hi - i < 4096 ? hi : i + 4096;
        uint64_t diff = 0;
        for (size_t k = i; k < z; k++) diff |= (uint64_t)j->ids[k] ^ (uint64_t)k;
        no = diff != 0;
    }
    j->no[t] = no;
}

static int rv__identity(const int64_t *ids, size_t n, unsigned nt) {
    rv__identity_job j;
    j.ids = ids;
    j.n = n;
    j.nt = n < ((size_t)1 << 18) ? 1u : nt; /* (a thread costs more than 2 MiB read) */
    rv__parallel_run(j.nt, rv__identity_worker, &j);
    for (unsigned t = 0; t < j.nt; t++)
        if (j.no[t]) return 0;
    return 1;
}

/* Node ids and their table.  Sets *grow when edge endpoints may add nodes
** (implicit nodes and ids that are not 0 .. n-1), which rv__ends_serial
** then appends; otherwise rv__ends_parallel maps the endpoints. */
static rv_status rv__build_nodes(rv_graph *g, const rv_graph_spec *s, unsigned nt, int *grow) {
    size_t n = s->n_nodes, cap = n;
    int implicit = (s->flags & RV_GRAPH_IMPLICIT_NODES) != 0;
    int identity = rv__identity(s->node_ids, n, nt);
    if (implicit) {
        /* endpoints outside 0 .. n-1 may appear: the fast path holds only
        ** when every endpoint is already a node */
        for (size_t e = 0; e < s->n_edges && identity; e++)
            identity = s->edge_src[e] >= 0 && (uint64_t)s->edge_src[e] < n && s->edge_dst[e] >= 0 &&
                       (uint64_t)s->edge_dst[e] < n;
        if (!identity) cap = n + 2 * s->n_edges;
    }
    *grow = implicit && !identity;
    if (cap > RV_GRAPH_MAX_ITEMS) cap = RV_GRAPH_MAX_ITEMS;
    if (identity && !*grow && (s->flags & RV_GRAPH_BORROW_ATTRS)) {
        /* the caller's ids are the indexes: read them in place */
        g->src.w = s->edge_src;
        g->dst.w = s->edge_dst;
    } else {
        g->src.u = (uint32_t *)rv__gbuf(g->blocks, &g->n_blocks, s->n_edges * sizeof(uint32_t));
        g->dst.u = (uint32_t *)rv__gbuf(g->blocks, &g->n_blocks, s->n_edges * sizeof(uint32_t));
        if (!g->src.u || !g->dst.u) return rv__nomem("the graph's edges");
    }
    g->n_nodes = n;
    g->identity_ids = identity;
    if (!identity) { /* (ids 0 .. n-1 are their own indexes: no copy, no table) */
        g->node_id = (int64_t *)rv__gbuf(g->blocks, &g->n_blocks, cap * sizeof *g->node_id);
        if (!g->node_id) return rv__nomem("the graph's node ids");
        if (n) memcpy(g->node_id, s->node_ids, n * sizeof *g->node_id);
        rv_status st = rv__alloc_table(g, cap);
        if (st) return st;
        for (size_t i = 0; i < n; i++) {
            int64_t had = rv__table_insert(g, (uint32_t)i);
            if (had >= 0)
                return rv__error(RV_E_INVALID_ARG,
                                 "node_ids[%zu] = %lld repeats node_ids[%lld]: node ids "
                                 "must be distinct",
                                 i, (long long)s->node_ids[i], (long long)had);
        }
    }
    return RV_OK;
}

static rv_status rv__not_a_node(const rv_graph_spec *s, size_t e, int side) {
    return rv__error(RV_E_RANGE,
                     "edge_%s[%zu] = %lld is not a node id (list it in node_ids, or set "
                     "RV_GRAPH_IMPLICIT_NODES)",
                     side ? "dst" : "src", e, (long long)(side ? s->edge_dst : s->edge_src)[e]);
}

/* Buckets of 2^shift nodes, at least 2^10 and at most 2^16 (offsets inside
** a bucket fit uint16): at most 1024 buckets where that allows.  Why so
** few: the partition writes one stream per bucket, and it runs at the
** speed of a sequential copy only when every stream's current cache line
** and the one prefetched ahead of it stay in the near caches (1024 * 2
** lines of 64 bytes: 128 KiB, in L2); with 2048 streams and more each
** slot write waited for its line (measured 2-3x slower).  A bucket's own
** sort then works on about 2^10 nodes' edges, in L1/L2.
**
** A slot packs the low 32 - shift bits of the edge index above the key's
** offset in its bucket; the high bits are the edge's epoch (a run of
** 2^(32 - shift) edges), recovered from where each epoch began in each
** bucket (rv__csr_fill records it).  *packed is 0 when that table of epoch
** starts would pass 1/16 of the slots (2^30 edges and more): then a uint16
** scratch holds the offsets beside full edge indexes. */
int rv__graph_test_scratch;
unsigned rv__graph_test_epoch_bits;

#define RV__BUCKETS_MAX 1024u

static unsigned rv__bucket_shift(size_t n, size_t m, int *packed) {
    unsigned shift = 10;
    while (shift < 16 && (n >> shift) + 1 > RV__BUCKETS_MAX) shift++;
    size_t nb = (n >> shift) + 1, epochs = m ? ((m - 1) >> (32 - shift)) + 1 : 1;
    *packed = !rv__graph_test_scratch && epochs * (nb + 1) <= (m >> 4) + 4096;
    return shift;
}

/* Bits of *ordered: sources nondecreasing (bit 0), destinations (bit 1). */
static unsigned rv__ends_order(const uint32_t *src, const uint32_t *dst, size_t lo, size_t hi) {
    unsigned ord = 3;
    for (size_t e = lo + 1; e < hi && ord; e++) {
        if (src[e] < src[e - 1]) ord &= ~1u;
        if (dst[e] < dst[e - 1]) ord &= ~2u;
    }
    return ord;
}

/* Endpoints that may add nodes (implicit nodes), in edge order. */
static rv_status rv__ends_serial(rv_graph *g, const rv_graph_spec *s, unsigned *ordered) {
    size_t cap = s->n_nodes + 2 * s->n_edges;
    if (cap > RV_GRAPH_MAX_ITEMS) cap = RV_GRAPH_MAX_ITEMS;
    for (size_t e = 0; e < s->n_edges; e++) {
        for (int side = 0; side < 2; side++) {
            int64_t id = side ? s->edge_dst[e] : s->edge_src[e];
            int64_t v = rv__graph_find(g, id);
            if (v < 0) {
                if (g->n_nodes >= cap)
                    return rv__error(RV_E_RANGE, "more than %u nodes",
                                     (unsigned)RV_GRAPH_MAX_ITEMS);
                v = (int64_t)g->n_nodes++;
                g->node_id[v] = id;
                rv__table_insert(g, (uint32_t)v);
            }
            ((uint32_t *)(side ? g->dst.u : g->src.u))[e] = (uint32_t)v;
        }
    }
    *ordered = rv__ends_order(g->src.u, g->dst.u, 0, s->n_edges);
    return RV_OK;
}

/* Endpoints of fixed nodes, one block of edges per worker, which also
** counts the edges of each bucket of the adjacency sort (both directions,
** rv__bucket_shift) and whether its block is in order, while the ends are
** in registers (no second pass over them). */
typedef struct rv__ends_job {
    rv_graph *g;
    const rv_graph_spec *s;
    unsigned nt, shift;
    size_t nb;                          /* buckets */
    uint32_t *hist;                     /* nt * 2 * nb: per worker, out then in */
    size_t bad[RV__MAX_THREADS];        /* 2 * edge + side of the block's first
                                            endpoint that is not a node; SIZE_MAX */
    unsigned char ord[RV__MAX_THREADS]; /* rv__ends_order of the block */
} rv__ends_job;

static void rv__ends_worker(void *arg, unsigned t) {
    rv__ends_job *j = (rv__ends_job *)arg;
    rv_graph *g = j->g;
    const int64_t *es = j->s->edge_src, *ed = j->s->edge_dst;
    /* (NULL when the ends are borrowed: only checked and counted) */
    uint32_t *src = (uint32_t *)g->src.u, *dst = (uint32_t *)g->dst.u;
    uint32_t *hs = j->hist + (size_t)t * 2 * j->nb, *hd = hs + j->nb;
    unsigned shift = j->shift, unordered = 0;
    uint32_t pa = 0, pb = 0;
    size_t lo, hi;
    rv__parallel_block(j->s->n_edges, j->nt, t, &lo, &hi);
    j->bad[t] = SIZE_MAX;
    j->ord[t] = 3;
    if (g->identity_ids) {
        uint64_t n = g->n_nodes;
        for (size_t e = lo; e < hi; e++) {
            uint64_t a = (uint64_t)es[e], b = (uint64_t)ed[e];
            if (RV__UNLIKELY(a >= n || b >= n)) {
                j->bad[t] = 2 * e + (a < n);
                return;
            }
            if (src) {
                src[e] = (uint32_t)a;
                dst[e] = (uint32_t)b;
            }
            hs[a >> shift]++;
            hd[b >> shift]++;
            unordered |= (unsigned)((uint32_t)a < pa) | ((unsigned)((uint32_t)b < pb) << 1);
            pa = (uint32_t)a;
            pb = (uint32_t)b;
        }
    } else {
        for (size_t e = lo; e < hi; e++) {
            int64_t a = rv__graph_find(g, es[e]), b = a < 0 ? -1 : rv__graph_find(g, ed[e]);
            if (RV__UNLIKELY(b < 0)) {
                j->bad[t] = 2 * e + (a >= 0);
                return;
            }
            src[e] = (uint32_t)a;
            dst[e] = (uint32_t)b;
            hs[(uint32_t)a >> shift]++;
            hd[(uint32_t)b >> shift]++;
            unordered |= (unsigned)((uint32_t)a < pa) | ((unsigned)((uint32_t)b < pb) << 1);
            pa = (uint32_t)a;
            pb = (uint32_t)b;
        }
    }
    j->ord[t] = (unsigned char)(3u & ~unordered);
}

/* The ends, their order, and in *count (2 * nb, out then in; the caller
** frees it) the edges of each bucket of the adjacency sort. */
static rv_status rv__ends_parallel(rv_graph *g, const rv_graph_spec *s, unsigned nt,
                                   unsigned *ordered, uint32_t **count) {
    rv__ends_job j;
    int packed;
    j.g = g;
    j.s = s;
    j.nt = nt;
    j.shift = rv__bucket_shift(g->n_nodes, s->n_edges, &packed);
    j.nb = (g->n_nodes >> j.shift) + 1;
    j.hist = (uint32_t *)rv__calloc((size_t)nt * 2 * j.nb, sizeof *j.hist);
    if (!j.hist) return rv__nomem("the adjacency sort's buckets");
    rv__parallel_run(nt, rv__ends_worker, &j);
    unsigned ord = 3;
    for (unsigned t = 0; t < nt; t++) {
        if (j.bad[t] != SIZE_MAX) { /* blocks are in edge order: the first is the lowest */
            rv__free(j.hist);
            return rv__not_a_node(s, j.bad[t] / 2, (int)(j.bad[t] % 2));
        }
        ord &= j.ord[t];
        size_t lo, hi;
        rv__parallel_block(s->n_edges, nt, t, &lo, &hi);
        if (lo > 0 && lo < hi) {
            if (rv__at(g->src, lo) < rv__at(g->src, lo - 1)) ord &= ~1u;
            if (rv__at(g->dst, lo) < rv__at(g->dst, lo - 1)) ord &= ~2u;
        }
    }
    /* worker 0's counts become the totals */
    for (unsigned t = 1; t < nt; t++)
        for (size_t b = 0; b < 2 * j.nb; b++) j.hist[b] += j.hist[(size_t)t * 2 * j.nb + b];
    *ordered = ord;
    *count = j.hist;
    return RV_OK;
}

static rv_status rv__build_node_time(rv_graph *g, const rv_graph_spec *s) {
    if (!s->node_time) return RV_OK;
    if ((s->flags & RV_GRAPH_BORROW_ATTRS) && g->n_nodes == s->n_nodes) {
        g->node_time = s->node_time;
        return RV_OK;
    }
    int64_t *t = (int64_t *)rv__gbuf(g->blocks, &g->n_blocks, g->n_nodes * sizeof *t);
    if (!t) return rv__nomem("node times");
    if (s->n_nodes) memcpy(t, s->node_time, s->n_nodes * sizeof *t);
    for (size_t i = s->n_nodes; i < g->n_nodes; i++) t[i] = RV_GRAPH_NO_TIME;
    g->node_time = t;
    return RV_OK;
}

/*
** One CSR direction by a stable sort of the edges on key[] (src or dst).
** Why two passes: a plain counting sort scatters every edge to a random
** slot of arrays far larger than the caches (a cache miss an edge).  So
** the edges are first partitioned, stably, into buckets of 2^shift
** consecutive nodes (a few thousand sequential write streams) straight
** into the bucket's slice of the output, each slot keeping the key's
** offset in the bucket beside the edge index -- packed into the slot's
** low bits when both fit 32 bits, else in a uint16 scratch array; then
** each bucket, small enough for the caches, is copied aside and
** counting-sorted back into its slice (unpacked).  Both passes keep input
** order, so each node's edges come in input order, as documented.  Keys
** already in order (c->edge NULL) need only the offsets.  Pass 1 of a
** direction is one task; its pass 2 is split in ranges of buckets that any
** thread takes once pass 1 is done (so one direction alone, as with edges
** in order of source, still uses both threads).  Everything is allocated
** beforehand on the calling thread.
*/
#define RV__SLOT_AHEAD 32u /* two cache lines of slots */


typedef struct rv__csr_job {
    rv__csr *c;
    rv__idx key;
    uint16_t *low; /* n_edges scratch, or NULL: offsets packed in the slots */
    unsigned shift, ebits;
    size_t n, m, nb, epochs;
    uint32_t *bend;   /* nb + 1: bucket b's slots start at bend[b] (pass 1
                         advances it to the bucket's end: pass 2 reads
                         bend[b - 1] .. bend[b]); NULL: keys in order */
    uint32_t *estart; /* epochs * nb: bucket b's first slot of epoch q at
                         [q * nb + b]; NULL with one epoch */
    atomic_int done;  /* pass 1 finished (release; pass 2 acquires) */
} rv__csr_job;

/* Bucket starts and the largest bucket (on the calling thread), from the
** counts of the ends pass or, without them, a count of the keys. */
static rv_status rv__csr_prepare(rv__csr_job *j, const uint32_t *count, size_t *most) {
    size_t nb = j->nb, m = j->m;
    unsigned shift = j->shift;
    j->bend = (uint32_t *)rv__calloc(nb + 1, sizeof *j->bend);
    if (!j->bend) return rv__nomem("the adjacency sort's buckets");
    uint32_t *bend = j->bend;
    if (count)
        memcpy(bend + 1, count, nb * sizeof *bend);
    else
        for (size_t e = 0; e < m; e++) bend[(rv__at(j->key, e) >> shift) + 1]++;
    for (size_t b = 0; b < nb; b++) {
        if (bend[b + 1] > *most) *most = bend[b + 1];
        bend[b + 1] += bend[b];
    }
    /* epochs of 2^ebits edges (packed slots hold the low ebits bits of the
    ** edge index) */
    j->ebits = j->low ? 32 : rv__graph_test_epoch_bits ? rv__graph_test_epoch_bits : 32 - shift;
    j->epochs = j->low || !m ? 1 : ((m - 1) >> j->ebits) + 1;
    if (j->epochs > 1) {
        j->estart = (uint32_t *)rv__malloc(j->epochs * nb * sizeof *j->estart);
        if (!j->estart) return rv__nomem("the adjacency sort's buckets");
    }
    return RV_OK;
}

/* Pass 1: every edge into its bucket's slice, in input order; bend[b]
** runs from bucket b's start to its end.  Each slot written prefetches the
** line RV__SLOT_AHEAD slots on in its bucket, so the stream's next line is
** there when it is reached.  Keys in order (no bend): the offsets only. */
static void rv__csr_pass1(rv__csr_job *j) {
    rv__csr *c = j->c;
    size_t n = j->n, m = j->m, nb = j->nb;
    rv__idx key = j->key;
    if (!j->bend) { /* keys in order: node v's edges start at the first key >= v */
        size_t e = 0;
        for (size_t v = 0; v <= n; v++) {
            while (e < m && rv__at(key, e) < v) e++;
            c->off[v] = (uint32_t)e;
        }
        return;
    }
    unsigned shift = j->shift, ebits = j->ebits;
    uint32_t mask = ((uint32_t)1 << shift) - 1, *edge = c->edge, *bend = j->bend;
    uint16_t *low = j->low;
    for (size_t q = 0; q < j->epochs; q++) {
        size_t e0 = q << (ebits & 31), e1 = q + 1 < j->epochs ? (q + 1) << (ebits & 31) : m;
        if (j->estart) memcpy(j->estart + q * nb, bend, nb * sizeof *bend);
        if (low) {
            for (size_t e = e0; e < e1; e++) {
                uint32_t k = rv__at(key, e), p = bend[k >> shift]++;
                edge[p] = (uint32_t)e;
                low[p] = (uint16_t)(k & mask);
            }
        } else if (key.u) { /* (the key's width tested once, not per slot) */
            for (size_t e = e0; e < e1; e++) {
                uint32_t k = key.u[e], p = bend[k >> shift]++;
                RV__PREFETCH_W(edge + p + RV__SLOT_AHEAD); /* (edge has the slack) */
                edge[p] = ((uint32_t)e << shift) | (k & mask);
            }
        } else {
            for (size_t e = e0; e < e1; e++) {
                uint32_t k = (uint32_t)key.w[e], p = bend[k >> shift]++;
                RV__PREFETCH_W(edge + p + RV__SLOT_AHEAD); /* (edge has the slack) */
                edge[p] = ((uint32_t)e << shift) | (k & mask);
            }
        }
    }
    c->off[n] = (uint32_t)m;
}

/* Pass 2 over buckets [b0, b1): each bucket, small enough for the caches,
** copied aside (te) while its keys are counted (cnt: 2^shift counters),
** then counting-sorted back into its slice, unpacked; node offsets
** written.  Buckets are disjoint slices: any split over threads gives the
** same arrays. */
static void rv__csr_pass2(const rv__csr_job *j, size_t b0, size_t b1, uint32_t *cnt, uint32_t *te) {
    rv__csr *c = j->c;
    size_t n = j->n, nb = j->nb, width = (size_t)1 << j->shift, epochs = j->epochs;
    unsigned shift = j->shift, ebits = j->ebits;
    uint32_t mask = (uint32_t)width - 1, *off = c->off, *edge = c->edge;
    uint32_t emask = ebits >= 32 ? UINT32_MAX : ((uint32_t)1 << ebits) - 1;
    const uint32_t *bend = j->bend;
    const uint16_t *low = j->low;
    for (size_t b = b0; b < b1; b++) {
        size_t first = b << shift, last = first + width < n ? first + width : n, w = last - first;
        uint32_t lo = b ? bend[b - 1] : 0, size = bend[b] - lo;
        memset(cnt, 0, w * sizeof *cnt);
        if (low) {
            for (uint32_t i = 0; i < size; i++) cnt[low[lo + i]]++;
        } else { /* copied aside while counted (one pass over the bucket) */
            for (uint32_t i = 0; i < size; i++) {
                uint32_t x = edge[lo + i];
                te[i] = x;
                cnt[x & mask]++;
            }
        }
        /* counts to first slots (the running sum in a register, not carried
        ** through cnt from one node to the next) */
        uint32_t at = lo;
        for (size_t v = 0; v < w; v++) {
            uint32_t k = cnt[v];
            cnt[v] = at;
            off[first + v] = at;
            at += k;
        }
        if (low) {
            if (size < 2) continue;
            memcpy(te, edge + lo, size * sizeof *te);
            for (uint32_t i = 0; i < size; i++) edge[cnt[low[lo + i]]++] = te[i];
            continue;
        }
        /* the slots of epoch q: from its start in the bucket to the next's */
        uint32_t i = 0;
        for (size_t q = 0; q < epochs; q++) {
            uint32_t z = q + 1 < epochs ? j->estart[(q + 1) * nb + b] - lo : size;
            uint32_t high = (uint32_t)(q << (ebits & 31));
            for (; i < z; i++) {
                uint32_t x = te[i];
                edge[cnt[x & mask]++] = high | ((x >> shift) & emask);
            }
        }
    }
}

/*
** The document table, in two halves of the documents (two tasks, so the
** threads stay balanced).  Each half checks its entities, copies them
** (unless borrowed) and, while they are in entity order -- as they usually
** are, from the half's first document and the one before it -- fills its
** part of ent_base and measures its runs; documents in entity order are
** their own slots.  Otherwise rv__docs_sort groups them afterwards.
*/
typedef struct rv__docs_part {
    size_t lo, hi;
    int last;         /* the half that ends the table (fills ent_base's end) */
    size_t bad;       /* the first document outside the entities, or SIZE_MAX */
    int in_order;     /* lo - 1 .. hi - 1 nondecreasing */
    size_t first_run; /* documents of the entity of lo from lo on */
    size_t last_run;  /* documents of the entity of hi - 1 up to hi */
    size_t most;      /* the longest run inside the half */
} rv__docs_part;

static void rv__docs_scan(rv_graph *g, const rv_graph_spec *s, rv__docs_part *part) {
    size_t ne = g->n_nodes + g->n_edges, nb = (ne >> RV__ENT_SHIFT) + 1;
    const int64_t *in = s->doc_entity;
    /* (de NULL: the caller's array is read in place, checked here) */
    uint32_t *de = (uint32_t *)g->doc_entity.u, *base = g->ent_base;
    size_t lo = part->lo, hi = part->hi, d = lo, b = 0, run = 0, most = 0;
    uint64_t prev = 0, key = UINT64_MAX; /* (key: the entity of the current run) */
    int in_order = 1;
    part->bad = SIZE_MAX;
    part->in_order = 0; /* (set below; a bad document ends the scan first) */
    part->first_run = part->last_run = part->most = 0;
    if (lo > 0) { /* continue from the document before the half */
        int64_t x = in[lo - 1];
        if (x < 0 || (uint64_t)x >= ne)
            in_order = 0; /* (the half before names it) */
        else
            prev = (uint64_t)x, b = (size_t)(prev >> RV__ENT_SHIFT) + 1;
    }
    /* ent_base entries up to the block of the half's last entity only: the
    ** next half fills those after it, even when this one is out of order.
    ** (Counts in locals, not in *part, which the stores to base and de
    ** could alias: one loop while in order, a plain check after.) */
    uint64_t cap = part->last || hi == lo ? UINT64_MAX : (uint64_t)in[hi - 1];
    for (; in_order && d < hi; d++) {
        int64_t x = in[d];
        if (RV__UNLIKELY(x < 0 || (uint64_t)x >= ne)) {
            part->bad = d;
            return;
        }
        if (RV__UNLIKELY((uint64_t)x < prev)) {
            in_order = 0;
            break; /* (d is copied below) */
        }
        if (de) de[d] = (uint32_t)x;
        run = (uint64_t)x == key ? run + 1 : 1;
        most = run > most ? run : most;
        key = prev = (uint64_t)x;
        uint64_t lim = (uint64_t)x < cap ? (uint64_t)x : cap;
        while (((uint64_t)b << RV__ENT_SHIFT) <= lim) base[b++] = (uint32_t)d;
    }
    for (; d < hi; d++) {
        int64_t x = in[d];
        if (RV__UNLIKELY(x < 0 || (uint64_t)x >= ne)) {
            part->bad = d;
            return;
        }
        if (de) de[d] = (uint32_t)x;
    }
    part->in_order = in_order;
    part->last_run = run;
    part->most = most;
    if (!in_order) return;
    size_t first = lo; /* the run of the half's first entity */
    while (first < hi && in[first] == in[lo]) first++;
    part->first_run = first - lo;
    if (part->last)
        while (b <= nb) base[b++] = (uint32_t)hi;
}

/* Documents not in entity order: a counting sort into ent_off and ent_doc
** (on the calling thread, after the workers). */
static rv_status rv__docs_sort(rv_graph *g, size_t nd) {
    size_t ne = g->n_nodes + g->n_edges, most = 0;
    unsigned first = g->n_blocks;
    uint32_t *off = (uint32_t *)rv__gbuf(g->blocks, &g->n_blocks, (ne + 1) * sizeof *off);
    uint32_t *slot = (uint32_t *)rv__gbuf(g->blocks, &g->n_blocks, nd * sizeof *slot);
    if (!off || !slot) return rv__nomem("the document table");
    rv__populate(g->blocks + first, g->n_blocks - first, 1);
    g->ent_off = off;
    g->ent_doc = slot;
    g->ent_base = NULL;
    memset(off, 0, (ne + 1) * sizeof *off);
    for (size_t d = 0; d < nd; d++) off[rv__at(g->doc_entity, d) + 1]++;
    for (size_t x = 0; x < ne; x++) {
        if (off[x + 1] > most) most = off[x + 1];
        off[x + 1] += off[x];
    }
    for (size_t d = 0; d < nd; d++) slot[off[rv__at(g->doc_entity, d)]++] = (uint32_t)d;
    for (size_t x = ne; x > 0; x--) off[x] = off[x - 1];
    off[0] = 0;
    g->max_entity_docs = most;
    return RV_OK;
}

/* After both halves: the first bad document (SIZE_MAX: none); else the
** runs joined (documents in order), or the counting sort. */
static rv_status rv__docs_finish(rv_graph *g, const rv_graph_spec *s, const rv__docs_part *p,
                                 size_t *bad) {
    *bad = p[0].bad != SIZE_MAX ? p[0].bad : p[1].bad;
    if (*bad != SIZE_MAX) return RV_OK;
    if (!p[0].in_order || !p[1].in_order) return rv__docs_sort(g, s->n_docs);
    size_t most = p[0].most > p[1].most ? p[0].most : p[1].most;
    /* a run across the halves: the first's last run and the second's first */
    if (p[0].hi > p[0].lo && p[1].hi > p[1].lo &&
        s->doc_entity[p[0].hi - 1] == s->doc_entity[p[1].lo] &&
        p[0].last_run + p[1].first_run > most)
        most = p[0].last_run + p[1].first_run;
    g->max_entity_docs = most;
    return RV_OK;
}

/* The rest of a build after the endpoints, as tasks that write disjoint
** arrays (so any thread count gives the same graph): pass 1 of each CSR
** direction, the two halves of the document table, the copies of edge
** types and times, then pass 2 of each direction in ranges of buckets (a
** range waits for its direction's pass 1).  Every array is allocated
** beforehand on the calling thread. */
enum { RV__T_PASS1, RV__T_PASS2, RV__T_DOCS, RV__T_COPY };
#define RV__PASS2_RANGES 8u /* per direction, with more than one thread */
#define RV__MAX_TASKS    (2 * (1 + RV__PASS2_RANGES) + 3)

typedef struct rv__task {
    unsigned char kind, which; /* direction (0 out, 1 in) or half */
    size_t b0, b1;             /* pass 2: buckets */
} rv__task;

typedef struct rv__build_job {
    rv_graph *g;
    const rv_graph_spec *s;
    rv__csr_job csr[2];
    uint16_t *etype; /* copies to make (NULL: borrowed or absent) */
    int64_t *etime;
    rv__docs_part docs[2];
    rv__task task[RV__MAX_TASKS];
    unsigned n_tasks;
    uint32_t *work;     /* per thread: cnt (work_cnt) then te */
    size_t work_stride; /* uint32 per thread */
    size_t work_cnt;
    atomic_uint next;
} rv__build_job;

static void rv__build_worker(void *arg, unsigned t) {
    rv__build_job *j = (rv__build_job *)arg;
    for (;;) { /* in list order; whoever is free takes the next */
        unsigned i = atomic_fetch_add(&j->next, 1u);
        if (i >= j->n_tasks) return;
        const rv__task *k = &j->task[i];
        rv__csr_job *c = &j->csr[k->which & 1u];
        if (k->kind == RV__T_PASS1) {
            rv__csr_pass1(c);
            atomic_store_explicit(&c->done, 1, memory_order_release);
        } else if (k->kind == RV__T_PASS2) {
            /* (its pass 1 was taken before: another thread is on it) */
            while (!atomic_load_explicit(&c->done, memory_order_acquire)) sched_yield();
            uint32_t *w = j->work + (size_t)t * j->work_stride;
            rv__csr_pass2(c, k->b0, k->b1, w, w + j->work_cnt);
        } else if (k->kind == RV__T_DOCS) {
            rv__docs_scan(j->g, j->s, &j->docs[k->which]);
        } else {
            size_t m = j->s->n_edges;
            if (j->etype) memcpy(j->etype, j->s->edge_type, m * sizeof *j->etype);
            if (j->etime) memcpy(j->etime, j->s->edge_time, m * sizeof *j->etime);
        }
    }
}

/* Append a task. */
static void rv__task_add(rv__build_job *j, unsigned kind, unsigned which, size_t b0, size_t b1) {
    rv__task *k = &j->task[j->n_tasks++];
    k->kind = (unsigned char)kind;
    k->which = (unsigned char)which;
    k->b0 = b0;
    k->b1 = b1;
}

/* Pass 2 of direction d in ranges of about equal slots. */
static void rv__tasks_pass2(rv__build_job *j, unsigned d, unsigned ranges) {
    const rv__csr_job *c = &j->csr[d];
    if (!c->bend) return;
    size_t b0 = 0, nb = c->nb, m = c->m;
    for (unsigned r = 1; r <= ranges && b0 < nb; r++) {
        size_t b1 = b0, goal = m / ranges * r;
        if (r == ranges)
            b1 = nb;
        else
            while (b1 < nb && c->bend[b1] < goal) b1++; /* (bend: starts, before pass 1) */
        if (b1 > b0) rv__task_add(j, RV__T_PASS2, d, b0, b1);
        b0 = b1;
    }
}

/* Allocate a direction: nothing to sort when its keys are in order. */
static rv_status rv__csr_alloc(rv_graph *g, rv__csr *c, int in_order, rv__idx other) {
    size_t n = g->n_nodes, m = g->n_edges;
    c->other = other;
    c->off = (uint32_t *)rv__gbuf(g->blocks, &g->n_blocks, (n + 1) * sizeof *c->off);
    if (!c->off) return rv__nomem("the graph's adjacency");
    if (in_order) return RV_OK;
    /* (RV__SLOT_AHEAD slots of slack: pass 1 prefetches that far past a slot) */
    c->edge = (uint32_t *)rv__gbuf(g->blocks, &g->n_blocks, (m + RV__SLOT_AHEAD) * sizeof *c->edge);
    if (!c->edge) return rv__nomem("the graph's adjacency");
    return RV_OK;
}

static rv_status rv__build_rest(rv_graph *g, const rv_graph_spec *s, unsigned ordered, unsigned nt,
                                const uint32_t *count) {
    size_t m = g->n_edges, nd = s->n_docs, ne = g->n_nodes + m;
    int borrow = (s->flags & RV_GRAPH_BORROW_ATTRS) != 0, packed;
    unsigned shift = rv__bucket_shift(g->n_nodes, m, &packed);
    rv__build_job j;
    memset(&j, 0, sizeof j);
    j.g = g;
    j.s = s;
    atomic_init(&j.next, 0u);
    uint16_t *low[2] = {NULL, NULL};
    rv__gblock scratch[2];
    unsigned n_scratch = 0, first = g->n_blocks;
    rv_status st = rv__csr_alloc(g, &g->out, ordered & 1u, g->dst);
    if (!st) st = rv__csr_alloc(g, &g->in, (ordered & 2u) != 0, g->src);
    for (int d = 0; d < 2 && !st && !packed; d++) {
        if (!(d ? g->in : g->out).edge) continue;
        /* one scratch serves both directions when they run one after the other */
        if (d && nt == 1 && low[0]) continue;
        low[d] = (uint16_t *)rv__gbuf(scratch, &n_scratch, m * sizeof *low[d]);
        if (!low[d]) st = rv__nomem("the adjacency sort's scratch");
    }
    if (!st && s->edge_type && m) {
        if (!borrow) {
            j.etype = (uint16_t *)rv__gbuf(g->blocks, &g->n_blocks, m * sizeof *j.etype);
            if (!j.etype) st = rv__nomem("edge types");
        }
        g->etype = borrow ? s->edge_type : j.etype;
    }
    if (!st && s->edge_time && m) {
        if (!borrow) {
            j.etime = (int64_t *)rv__gbuf(g->blocks, &g->n_blocks, m * sizeof *j.etime);
            if (!j.etime) st = rv__nomem("edge times");
        }
        g->etime = borrow ? s->edge_time : j.etime;
    }
    if (!st) {
        g->n_docs = nd;
        if (borrow)
            g->doc_entity.w = s->doc_entity;
        else
            g->doc_entity.u = (uint32_t *)rv__gbuf(g->blocks, &g->n_blocks, nd * sizeof(uint32_t));
        g->ent_base = (uint32_t *)rv__gbuf(g->blocks, &g->n_blocks,
                                           ((ne >> RV__ENT_SHIFT) + 2) * sizeof *g->ent_base);
        if ((!borrow && !g->doc_entity.u) || !g->ent_base) st = rv__nomem("the document table");
    }
    size_t nb = (g->n_nodes >> shift) + 1, most = 0;
    for (int d = 0; d < 2; d++) {
        rv__csr_job *c = &j.csr[d];
        c->c = d ? &g->in : &g->out;
        c->key = d ? g->dst : g->src;
        c->low = low[d] ? low[d] : low[0];
        c->shift = shift;
        c->n = g->n_nodes;
        c->m = m;
        c->nb = nb;
        atomic_init(&c->done, 0);
        if (!st && c->c->edge)
            st = rv__csr_prepare(c, count ? count + (size_t)d * nb : NULL, &most);
    }
    if (!st) { /* per thread: the counters of a bucket's nodes, its slots copied aside */
        j.work_cnt = (size_t)1 << shift;
        j.work_stride = j.work_cnt + most + 1;
        j.work = (uint32_t *)rv__malloc(nt * j.work_stride * sizeof *j.work);
        if (!j.work) st = rv__nomem("the adjacency sort's buckets");
    }
    if (!st) {
        /* one thread: a direction's passes back to back (they may share the
        ** uint16 scratch); more: both passes 1 first, the documents and
        ** copies while they run, then passes 2 split over the threads */
        unsigned ranges = nt > 1 ? RV__PASS2_RANGES : 1u;
        for (unsigned i = 0; i < 2; i++) { /* the in-direction first (as before) */
            rv__task_add(&j, RV__T_PASS1, 1 - i, 0, 0);
            if (nt == 1) rv__tasks_pass2(&j, 1 - i, ranges);
        }
        rv__task_add(&j, RV__T_DOCS, 0, 0, 0);
        rv__task_add(&j, RV__T_DOCS, 1, 0, 0);
        if (j.etype || j.etime) rv__task_add(&j, RV__T_COPY, 0, 0, 0);
        if (nt > 1)
            for (unsigned i = 0; i < 2; i++) rv__tasks_pass2(&j, 1 - i, ranges);
        rv__populate(g->blocks + first, g->n_blocks - first, nt);
        rv__populate(scratch, n_scratch, nt);
        j.docs[0].lo = 0;
        j.docs[0].hi = j.docs[1].lo = nd / 2;
        j.docs[1].hi = nd;
        j.docs[1].last = 1;
        rv__parallel_run(nt, rv__build_worker, &j);
        size_t bad = SIZE_MAX;
        st = rv__docs_finish(g, s, j.docs, &bad);
        if (!st && bad != SIZE_MAX)
            st = rv__error(RV_E_INVALID_ARG,
                           "doc_entity[%zu] = %lld: entities are 0 .. %zu (nodes, then edges)", bad,
                           (long long)s->doc_entity[bad], ne ? ne - 1 : 0);
    }
    for (int d = 0; d < 2; d++) {
        rv__free(j.csr[d].bend);
        rv__free(j.csr[d].estart);
    }
    rv__free(j.work);
    rv__kept_give(scratch, n_scratch, 0);
    return st;
}

/* Rows of vectors checked by one worker: the first row with a NaN or
** infinite component, or SIZE_MAX. */
typedef struct rv__finite_job {
    const float *v;
    size_t n, dim;
    unsigned nt;
    size_t bad[RV__MAX_THREADS];
} rv__finite_job;

static void rv__finite_worker(void *arg, unsigned t) {
    rv__finite_job *j = (rv__finite_job *)arg;
    size_t lo, hi;
    rv__parallel_block(j->n, j->nt, t, &lo, &hi);
    j->bad[t] = SIZE_MAX;
    /* one pass over the exponent bits (vectorises; isfinite per element
    ** does not), a row at a time so a bad row stops the scan */
    for (size_t r = lo; r < hi; r++) {
        const float *row = j->v + r * j->dim;
        uint32_t bad = 0;
        for (size_t k = 0; k < j->dim; k++) {
            uint32_t bits;
            memcpy(&bits, row + k, sizeof bits);
            bad |= (uint32_t)((bits & 0x7f800000u) == 0x7f800000u);
        }
        if (RV__UNLIKELY(bad)) {
            j->bad[t] = r;
            return;
        }
    }
}

rv_status rv_graph_check_vectors(const float *vectors, size_t n_rows, uint32_t dim,
                                 unsigned n_threads) {
    if (dim == 0 || dim > RV_FLAT_MAX_DIM)
        return rv__error(RV_E_RANGE, "dim = %u: 1 .. %u", dim, RV_FLAT_MAX_DIM);
    if (n_rows && !vectors) return rv__error(RV_E_INVALID_ARG, "vectors is NULL");
    RV__CHECK_SIZE2(n_rows, dim, sizeof *vectors, "n_rows", "dim");
    rv__finite_job j;
    j.v = vectors;
    j.n = n_rows;
    j.dim = dim;
    /* a thread per 4 MiB of rows at least: a memory-bound pass */
    j.nt = rv__threads_for(n_threads, n_rows, (double)n_rows * dim, (double)(1u << 20));
    rv__parallel_run(j.nt, rv__finite_worker, &j);
    for (unsigned t = 0; t < j.nt; t++) { /* blocks in row order: the first is the lowest */
        if (j.bad[t] == SIZE_MAX) continue;
        const float *row = vectors + j.bad[t] * dim;
        for (size_t k = 0; k < dim; k++)
            if (!isfinite(row[k]))
                return rv__error(RV_E_INVALID_ARG, "vectors[%zu][%zu] = %g: vectors must be finite",
                                 j.bad[t], k, (double)row[k]);
    }
    return RV_OK;
}

static rv_status rv__build_vectors(rv_graph *g, const rv_graph_spec *s) {
    if (s->dim == 0) return RV_OK;
    if (s->dim > RV_FLAT_MAX_DIM)
        return rv__error(RV_E_RANGE, "dim = %u: at most %u", s->dim, RV_FLAT_MAX_DIM);
    if (s->metric != RV_METRIC_COSINE && s->metric != RV_METRIC_INNER_PRODUCT)
        return rv__error(RV_E_INVALID_ARG, "metric %d: graphs score by cosine or inner product",
                         (int)s->metric);
    if (s->n_vectors && !s->vectors) return rv__error(RV_E_INVALID_ARG, "vectors is NULL");
    size_t dim = s->dim, nv = s->n_vectors;
    if (!s->doc_vector_row && nv < g->n_docs)
        return rv__error(RV_E_SHAPE,
                         "%zu vector rows for %zu documents: give a row per document "
                         "or doc_vector_row",
                         nv, g->n_docs);
    if (s->doc_vector_row) {
        g->doc_row = (uint32_t *)rv__malloc((g->n_docs ? g->n_docs : 1) * sizeof *g->doc_row);
        if (!g->doc_row) return rv__nomem("document vector rows");
        for (size_t d = 0; d < g->n_docs; d++) {
            int64_t r = s->doc_vector_row[d];
            if (r < 0 || (uint64_t)r >= nv)
                return rv__error(RV_E_INVALID_ARG, "doc_vector_row[%zu] = %lld: rows are 0 .. %lld",
                                 d, (long long)r, (long long)nv - 1);
            g->doc_row[d] = (uint32_t)r;
        }
    }
    if (!(s->flags & RV_GRAPH_FINITE_ROWS)) {
        rv_status st = rv_graph_check_vectors(s->vectors, nv, s->dim, s->n_threads);
        if (st) return st;
    }
    g->dim = s->dim;
    g->metric = s->metric;
    g->n_vec = nv;
    rv__flat_kernels k;
    rv__flat_kernels_select(&k);
    g->dot = k.dot;
    if (s->flags & RV_GRAPH_BORROW_VECTORS) {
        g->vec = s->vectors;
    } else {
        g->vec_owned = (float *)rv__malloc((nv ? nv * dim : 1) * sizeof(float));
        if (!g->vec_owned) return rv__nomem("the document vectors");
        if (nv) memcpy(g->vec_owned, s->vectors, nv * dim * sizeof(float));
        g->vec = g->vec_owned;
    }
    if (g->metric == RV_METRIC_COSINE && !(s->flags & RV_GRAPH_UNIT_ROWS)) {
        g->inv_norm = (float *)rv__malloc((nv ? nv : 1) * sizeof *g->inv_norm);
        if (!g->inv_norm) return rv__nomem("vector norms");
        for (size_t r = 0; r < nv; r++) {
            const float *x = g->vec + r * dim;
            double ss = 0;
            for (size_t j = 0; j < dim; j++) ss += (double)x[j] * x[j];
            /* a zero row scores 0 against every query */
            g->inv_norm[r] = ss > 0 ? (float)(1.0 / sqrt(ss)) : 0.0f;
        }
    }
    return RV_OK;
}

static rv_status rv__check_spec(const rv_graph_spec *s) {
    if (s->n_nodes && !s->node_ids) return rv__error(RV_E_INVALID_ARG, "node_ids is NULL");
    if (s->n_edges && (!s->edge_src || !s->edge_dst))
        return rv__error(RV_E_INVALID_ARG, "edge_src or edge_dst is NULL");
    if (s->n_docs && !s->doc_entity) return rv__error(RV_E_INVALID_ARG, "doc_entity is NULL");
    const struct {
        const char *name;
        size_t n;
    } counts[] = {{"n_nodes", s->n_nodes},
                  {"n_edges", s->n_edges},
                  {"n_docs", s->n_docs},
                  {"n_vectors", s->n_vectors}};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        if (counts[i].n > RV_GRAPH_MAX_ITEMS)
            return rv__error(RV_E_RANGE, "spec->%s = %zu: more than %u (a graph's limit)",
                             counts[i].name, counts[i].n, (unsigned)RV_GRAPH_MAX_ITEMS);
    if (s->dim) RV__CHECK_SIZE2(s->n_vectors, s->dim, sizeof(float), "n_vectors", "dim");
    return RV_OK;
}

rv_status rv_graph_create(const rv_graph_spec *s, rv_graph **out) {
    if (out) *out = NULL;
    RV__NOT_NULL(out, "out");
    RV__NOT_NULL(s, "spec");
    rv_status st = rv__check_spec(s);
    if (st) return st;
    rv_graph *g = (rv_graph *)rv__calloc(1, sizeof *g);
    if (!g) return rv__nomem("a graph");
    g->n_edges = s->n_edges;
    g->birth = rv__build_begin();
    /* four tasks after the endpoints (rv__build_rest): at most four threads */
    unsigned nt =
        rv__threads_for(s->n_threads, 4, (double)s->n_edges + (double)s->n_docs, RV__GRAPH_PAR_MIN);
    unsigned ordered = 0;
    int grow = 0;
    st = rv__build_nodes(g, s, nt, &grow);
    if (!st && !grow) rv__populate(g->blocks, g->n_blocks, nt);
    uint32_t *count = NULL; /* edges per bucket of the adjacency sort */
    if (!st)
        st = grow ? rv__ends_serial(g, s, &ordered) : rv__ends_parallel(g, s, nt, &ordered, &count);
    if (!st) st = rv__build_node_time(g, s);
    if (!st) st = rv__build_rest(g, s, ordered, nt, count);
    rv__free(count);
    if (!st) st = rv__build_vectors(g, s);
    if (st) {
        rv_graph_free(g);
        return st;
    }
    *out = g;
    return RV_OK;
}

/* ---------------------------------------------------------- properties */

size_t rv_graph_n_nodes(const rv_graph *g) {
    return g ? g->n_nodes : 0;
}
size_t rv_graph_n_edges(const rv_graph *g) {
    return g ? g->n_edges : 0;
}
size_t rv_graph_n_docs(const rv_graph *g) {
    return g ? g->n_docs : 0;
}
uint32_t rv_graph_dim(const rv_graph *g) {
    return g ? g->dim : 0;
}
size_t rv_graph_max_entity_docs(const rv_graph *g) {
    return g ? g->max_entity_docs : 0;
}

rv_status rv_graph_find_nodes(const rv_graph *g, size_t n, const int64_t *ids, int64_t *out) {
    RV__NOT_NULL(g, "graph");
    RV__CHECK_SIZE(n, sizeof *ids, "n");
    if (n) {
        RV__NOT_NULL(ids, "ids");
        RV__NOT_NULL(out, "out");
    }
    for (size_t i = 0; i < n; i++) out[i] = rv__graph_find(g, ids[i]);
    return RV_OK;
}

rv_status rv_graph_node_ids(const rv_graph *g, int64_t *out, size_t capacity, size_t *n) {
    if (n) *n = 0;
    RV__NOT_NULL(g, "graph");
    RV__NOT_NULL(n, "n");
    if (capacity && !out)
        return rv__error(RV_E_INVALID_ARG, "out is NULL but capacity = %zu", capacity);
    RV__CHECK_SIZE(capacity, sizeof *out, "capacity");
    *n = g->n_nodes;
    size_t k = capacity < g->n_nodes ? capacity : g->n_nodes;
    if (g->node_id && k) memcpy(out, g->node_id, k * sizeof *out);
    if (!g->node_id)
        for (size_t i = 0; i < k; i++) out[i] = (int64_t)i;
    if (capacity < g->n_nodes)
        return rv__error(RV_E_SHAPE, "capacity %zu < %zu nodes", capacity, g->n_nodes);
    return RV_OK;
}

static rv_status rv__check_node(const rv_graph *g, int64_t node, rv_graph_dir dir, int32_t type) {
    if (node < 0 || (uint64_t)node >= g->n_nodes)
        return rv__error(RV_E_RANGE, "node index %lld: the graph has %zu nodes", (long long)node,
                         g->n_nodes);
    if (dir != RV_GRAPH_OUT && dir != RV_GRAPH_IN && dir != RV_GRAPH_BOTH)
        return rv__error(RV_E_INVALID_ARG, "dir %d: use RV_GRAPH_OUT, _IN or _BOTH", (int)dir);
    if (type < -1 || type > 65535)
        return rv__error(RV_E_RANGE, "type %d: types are 0 .. 65535 (or -1 for any)", (int)type);
    return RV_OK;
}

rv_status rv_graph_neighbours(const rv_graph *g, int64_t node, rv_graph_dir dir, int32_t type,
                              const int64_t *window, int64_t *edges, int64_t *nbrs, size_t capacity,
                              size_t *n) {
    if (n) *n = 0;
    RV__NOT_NULL(g, "graph");
    RV__NOT_NULL(n, "n");
    RV__CHECK_SIZE(capacity, sizeof *edges, "capacity");
    rv_status st = rv__check_node(g, node, dir, type);
    if (st) return st;
    if (!rv__node_in(g, (uint32_t)node, window)) return RV_OK;
    size_t k = 0;
    for (int side = 0; side < 2; side++) {
        if (!(dir & (side ? RV_GRAPH_IN : RV_GRAPH_OUT))) continue;
        const rv__csr *c = side ? &g->in : &g->out;
        for (uint32_t p = c->off[node]; p < c->off[node + 1]; p++) {
            uint32_t e = rv__csr_edge(c, p), v = rv__at(c->other, e);
            if (type >= 0 && rv__etype(g, e) != (uint16_t)type) continue;
            if (window && (!rv__edge_in(g, e, window) || !rv__node_in(g, v, window))) continue;
            if (k < capacity) {
                if (edges) edges[k] = e;
                if (nbrs) nbrs[k] = v;
            }
            k++;
        }
    }
    *n = k;
    if (k > capacity) return rv__error(RV_E_SHAPE, "capacity %zu < %zu edges", capacity, k);
    return RV_OK;
}

rv_status rv_graph_degree(const rv_graph *g, int64_t node, rv_graph_dir dir, int32_t type,
                          size_t *n) {
    if (n) *n = 0;
    RV__NOT_NULL(g, "graph");
    RV__NOT_NULL(n, "n");
    rv_status st = rv__check_node(g, node, dir, type);
    if (st) return st;
    size_t k = 0;
    for (int side = 0; side < 2; side++) {
        if (!(dir & (side ? RV_GRAPH_IN : RV_GRAPH_OUT))) continue;
        const rv__csr *c = side ? &g->in : &g->out;
        if (type < 0) {
            k += c->off[node + 1] - c->off[node];
            continue;
        }
        for (uint32_t p = c->off[node]; p < c->off[node + 1]; p++)
            k += rv__etype(g, rv__csr_edge(c, p)) == (uint16_t)type;
    }
    *n = k;
    return RV_OK;
}

rv_status rv_graph_edges(const rv_graph *g, size_t n, const int64_t *edges, int64_t *src,
                         int64_t *dst, int32_t *type, int64_t *time) {
    RV__NOT_NULL(g, "graph");
    RV__CHECK_SIZE(n, sizeof *edges, "n");
    if (n && !edges) return rv__error(RV_E_INVALID_ARG, "edges is NULL but n = %zu", n);
    for (size_t i = 0; i < n; i++) {
        int64_t e = edges[i];
        if (e < 0 || (uint64_t)e >= g->n_edges)
            return rv__error(RV_E_RANGE, "edges[%zu] = %lld: the graph has %zu edges", i,
                             (long long)e, g->n_edges);
        if (src) src[i] = rv__at(g->src, (size_t)e);
        if (dst) dst[i] = rv__at(g->dst, (size_t)e);
        if (type) type[i] = rv__etype(g, (uint32_t)e);
        if (time) time[i] = g->etime ? g->etime[e] : RV_GRAPH_NO_TIME;
    }
    return RV_OK;
}

rv_status rv_graph_entity_docs(const rv_graph *g, size_t n, const int64_t *entities, int64_t *out,
                               size_t capacity, size_t *n_out) {
    if (n_out) *n_out = 0;
    RV__NOT_NULL(g, "graph");
    RV__NOT_NULL(n_out, "n_out");
    if (n && !entities) return rv__error(RV_E_INVALID_ARG, "entities is NULL but n = %zu", n);
    if (capacity && !out)
        return rv__error(RV_E_INVALID_ARG, "out is NULL but capacity = %zu", capacity);
    RV__CHECK_SIZE(n, sizeof *entities, "n");
    RV__CHECK_SIZE(capacity, sizeof *out, "capacity");
    size_t ne = g->n_nodes + g->n_edges, k = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t x = entities[i];
        if (x < 0 || (uint64_t)x >= ne)
            return rv__error(RV_E_RANGE, "entities[%zu] = %lld: entities are 0 .. %zu", i,
                             (long long)x, ne ? ne - 1 : 0);
        uint32_t lo, hi;
        rv__ent_slots(g, (uint32_t)x, &lo, &hi);
        for (uint32_t p = lo; p < hi; p++, k++)
            if (k < capacity) out[k] = rv__ent_doc(g, p);
    }
    *n_out = k;
    if (k > capacity) return rv__error(RV_E_SHAPE, "capacity %zu < %zu documents", capacity, k);
    return RV_OK;
}

rv_status rv_graph_doc_entities(const rv_graph *g, size_t n, const int64_t *docs, int64_t *out) {
    RV__NOT_NULL(g, "graph");
    RV__CHECK_SIZE(n, sizeof *docs, "n");
    if (n) {
        RV__NOT_NULL(docs, "docs");
        RV__NOT_NULL(out, "out");
    }
    for (size_t i = 0; i < n; i++) {
        if (docs[i] < 0 || (uint64_t)docs[i] >= g->n_docs)
            return rv__error(RV_E_RANGE, "docs[%zu] = %lld: the graph has %zu documents", i,
                             (long long)docs[i], g->n_docs);
        out[i] = rv__at(g->doc_entity, (size_t)docs[i]);
    }
    return RV_OK;
}

/* -------------------------------------------- shared by walks and rounds */

rv_status rv__graph_mark_docs(const rv_graph *g, size_t n_sel, const int64_t *sel,
                              uint64_t **selected) {
    *selected = NULL;
    if (n_sel && !sel) return rv__error(RV_E_INVALID_ARG, "sel is NULL");
    RV__CHECK_SIZE(n_sel, sizeof *sel, "n_sel");
    for (size_t i = 0; i < n_sel; i++)
        if (sel[i] < 0 || (uint64_t)sel[i] >= g->n_docs)
            return rv__error(RV_E_RANGE, "sel[%zu] = %lld: the graph has %zu documents", i,
                             (long long)sel[i], g->n_docs);
    uint64_t *b = (uint64_t *)rv__calloc(RV_BITSET_WORDS(g->n_docs) + 1, sizeof *b);
    if (!b) return rv__nomem("the selection bitmap");
    for (size_t i = 0; i < n_sel; i++) rv__set(b, (size_t)sel[i]);
    *selected = b;
    return RV_OK;
}

rv_status rv__graph_query(const rv_graph *g, const float *query, float *q) {
    if (!g->dim || !g->dot)
        return rv__error(RV_E_STATE, "the graph holds no vectors: build it with dim > 0");
    if (!query) return rv__error(RV_E_INVALID_ARG, "query is NULL");
    double ss = 0;
    for (uint32_t j = 0; j < g->dim; j++) {
        if (!isfinite(query[j]))
            return rv__error(RV_E_INVALID_ARG, "query[%u] = %g: queries must be finite", j,
                             (double)query[j]);
        ss += (double)query[j] * query[j];
    }
    if (g->metric == RV_METRIC_COSINE) {
        if (!(ss > 0))
            return rv__error(RV_E_INVALID_ARG, "the query is a zero vector: cosine needs "
                                               "a nonzero query");
        float inv = (float)(1.0 / sqrt(ss));
        for (uint32_t j = 0; j < g->dim; j++) q[j] = query[j] * inv;
    } else {
        memcpy(q, query, g->dim * sizeof *q);
    }
    return RV_OK;
}
