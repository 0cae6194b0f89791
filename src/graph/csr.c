/*
** The adjacency of a graph: both CSR directions by a stable two-pass
** counting sort of the edges (buckets of nodes, then each bucket in the
** caches), and the documents grouped by entity -- the rest of a build
** after the endpoints (build.c), as tasks on several threads.
**
** Why counting sorts: the edges of a node must come in input order (the
** documented order of every listing), and a stable counting sort by source
** (then by destination) gives exactly that in O(n_nodes + n_edges) with two
** sequential passes, where a comparison sort would cost O(E log E).
*/
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#include "../core/parallel.h"
#include "graph_internal.h"

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

unsigned rv__graph_bucket_shift(size_t n, size_t m, int *packed) {
    unsigned shift = 10;
    while (shift < 16 && (n >> shift) + 1 > RV__BUCKETS_MAX) shift++;
    size_t nb = (n >> shift) + 1, epochs = m ? ((m - 1) >> (32 - shift)) + 1 : 1;
    *packed = !rv__graph_test_scratch && epochs * (nb + 1) <= (m >> 4) + 4096;
    return shift;
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
    uint32_t *off = (uint32_t *)rv__graph_alloc(g->blocks, &g->n_blocks, (ne + 1) * sizeof *off);
    uint32_t *slot = (uint32_t *)rv__graph_alloc(g->blocks, &g->n_blocks, nd * sizeof *slot);
    if (!off || !slot) return rv__nomem("the document table");
    rv__graph_populate(g->blocks + first, g->n_blocks - first, 1);
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
    c->off = (uint32_t *)rv__graph_alloc(g->blocks, &g->n_blocks, (n + 1) * sizeof *c->off);
    if (!c->off) return rv__nomem("the graph's adjacency");
    if (in_order) return RV_OK;
    /* (RV__SLOT_AHEAD slots of slack: pass 1 prefetches that far past a slot) */
    c->edge = (uint32_t *)rv__graph_alloc(g->blocks, &g->n_blocks,
                                          (m + RV__SLOT_AHEAD) * sizeof *c->edge);
    if (!c->edge) return rv__nomem("the graph's adjacency");
    return RV_OK;
}

rv_status rv__graph_build_csr(rv_graph *g, const rv_graph_spec *s, unsigned ordered, unsigned nt,
                              const uint32_t *count) {
    size_t m = g->n_edges, nd = s->n_docs, ne = g->n_nodes + m;
    int borrow = (s->flags & RV_GRAPH_BORROW_ATTRS) != 0, packed;
    unsigned shift = rv__graph_bucket_shift(g->n_nodes, m, &packed);
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
        low[d] = (uint16_t *)rv__graph_alloc(scratch, &n_scratch, m * sizeof *low[d]);
        if (!low[d]) st = rv__nomem("the adjacency sort's scratch");
    }
    if (!st && s->edge_type && m) {
        if (!borrow) {
            j.etype = (uint16_t *)rv__graph_alloc(g->blocks, &g->n_blocks, m * sizeof *j.etype);
            if (!j.etype) st = rv__nomem("edge types");
        }
        g->etype = borrow ? s->edge_type : j.etype;
    }
    if (!st && s->edge_time && m) {
        if (!borrow) {
            j.etime = (int64_t *)rv__graph_alloc(g->blocks, &g->n_blocks, m * sizeof *j.etime);
            if (!j.etime) st = rv__nomem("edge times");
        }
        g->etime = borrow ? s->edge_time : j.etime;
    }
    if (!st) {
        g->n_docs = nd;
        if (borrow)
            g->doc_entity.w = s->doc_entity;
        else
            g->doc_entity.u =
                (uint32_t *)rv__graph_alloc(g->blocks, &g->n_blocks, nd * sizeof(uint32_t));
        g->ent_base = (uint32_t *)rv__graph_alloc(
            g->blocks, &g->n_blocks, ((ne >> RV__ENT_SHIFT) + 2) * sizeof *g->ent_base);
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
        rv__graph_populate(g->blocks + first, g->n_blocks - first, nt);
        rv__graph_populate(scratch, n_scratch, nt);
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
    rv__graph_keep(scratch, n_scratch, 0);
    return st;
}
