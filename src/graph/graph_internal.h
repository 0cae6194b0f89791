/*
** Internals of the graph engine, shared by its files:
**   build.c   rv_graph_create and rv_graph_free: spec, node ids, endpoints,
**             vectors
**   csr.c     the adjacency (both CSR directions) and the document table
**   arrays.c  the build's large arrays, recycled from build to build
**   query.c   sizes, node ids, neighbours, degrees, edges, entity documents
**   walk.c    breadth-first walks and neighbourhood facts
**   select.c  document selections and top-k by vector similarity
*/
#ifndef ROWVOI_GRAPH_INTERNAL_H
#define ROWVOI_GRAPH_INTERNAL_H

#include "../dense/flat_internal.h"
#include "../internal.h"

/* An array of indexes (the node at one end of each edge, the entity of
** each document): the graph's own (u), or the caller's int64 array read in
** place (w; RV_GRAPH_BORROW_ATTRS, for the ends only when node ids are the
** indexes 0 .. n-1), so the build writes no copy. */
typedef struct rv__idx {
    const uint32_t *u;
    const int64_t *w;
} rv__idx;

static inline uint32_t rv__at(rv__idx a, size_t i) {
    return a.u ? a.u[i] : (uint32_t)a.w[i];
}

/* One CSR direction: the edges of node v are slots off[v] .. off[v+1]; each
** slot holds an edge index, and the node at the other end is other[edge]
** (the graph's dst for out-edges, src for in-edges: no permuted copy of the
** ends per direction, which a build would have to write and fault in).
** When the edges came in order of this direction's key (sources ordered,
** as a table read by id gives them), slot p is edge p: edge is NULL, so
** nothing is sorted or stored. */
typedef struct rv__csr {
    uint32_t *off;  /* n_nodes + 1 */
    uint32_t *edge; /* n_edges, or NULL: slot p holds edge p */
    rv__idx other;  /* the far end of each edge (the graph's dst or src) */
} rv__csr;

/* The edge in slot p of a CSR direction. */
static inline uint32_t rv__csr_edge(const rv__csr *c, uint32_t p) {
    return c->edge ? c->edge[p] : p;
}

/* One large array of a graph (arrays.c recycles them). */
typedef struct rv__gblock {
    void *p;    /* the array (size bytes) */
    void *base; /* what rv__free takes: p, or the allocation p was aligned in */
    size_t size;
    int fresh; /* newly allocated (not recycled): pages not yet touched */
} rv__gblock;
#define RV__GRAPH_BLOCKS 16

struct rv_graph {
    size_t n_nodes, n_edges, n_docs;
    int64_t *node_id;                    /* n_nodes; NULL when identity_ids */
    const int64_t *node_time;            /* NULL: no node has a time */
    int identity_ids;                    /* node_id[i] == i for every i: no table */
    uint32_t *slots;                     /* id table: 1 + node index, 0 empty */
    rv__gblock blocks[RV__GRAPH_BLOCKS]; /* the arrays of the adjacency build:
                                            node_id .. ent_doc */
    unsigned n_blocks;
    uint64_t birth; /* build number (arrays.c's recycling) */
    uint64_t mask;  /* slots - 1 (a power of two minus one) */

    rv__idx src, dst;      /* n_edges each */
    const uint16_t *etype; /* n_edges, or NULL: every edge has type 0 */
    const int64_t *etime;  /* NULL: no edge has a time */
    rv__csr out, in;

    /* Documents.  ent_off/ent_doc group them by entity (ent_doc[p] is the
    ** document in slot p); documents given in entity order need neither:
    ** slot p is document p (ent_doc NULL) and, with ent_off NULL, an
    ** entity's slots are found from ent_base, the first document of every
    ** block of 2^RV__ENT_SHIFT entities, by a search of doc_entity inside
    ** the block (a few documents) -- 1/16 of the offsets' memory. */
    rv__idx doc_entity; /* n_docs */
    uint32_t *ent_off;  /* n_nodes + n_edges + 1, or NULL (ent_base) */
    uint32_t *ent_doc;  /* n_docs, or NULL: slot p is document p */
    uint32_t *ent_base; /* ((n_nodes + n_edges) >> RV__ENT_SHIFT) + 2, or NULL */
    size_t max_entity_docs;

    uint32_t dim;
    rv_metric metric;
    const float *vec; /* n_vec * dim (owned or borrowed) */
    float *vec_owned;
    size_t n_vec;
    uint32_t *doc_row; /* NULL: document i is row i */
    float *inv_norm;   /* NULL: rows are unit (or inner product) */
    rv__dot_fn dot;
};

#define RV__ENT_SHIFT 4

/* Tests only: nonzero makes the adjacency sort use its uint16 scratch even
** where the slots could hold the offsets (set it between builds). */
extern int rv__graph_test_scratch;

/* Tests only: nonzero gives packed slots epochs of 2^bits edges (1 ..
** 32 - the bucket shift) instead of the widest that fits, so a small graph
** crosses many epochs (set it between builds). */
extern unsigned rv__graph_test_epoch_bits;

/* Tests only: nonzero sets the thread count of rv_graph_top_k's scan (at
** most RV__MAX_THREADS), whatever the graph's size. */
extern unsigned rv__graph_test_topk_threads;

/* Type of edge e. */
static inline uint16_t rv__etype(const rv_graph *g, uint32_t e) {
    return g->etype ? g->etype[e] : 0;
}

/* First slot d in [a, z) with de[d] >= key (de sorted there). */
static inline uint32_t rv__first_at_least(rv__idx de, uint32_t a, uint32_t z, uint64_t key) {
    while (z - a > 8) {
        uint32_t mid = a + (z - a) / 2;
        if (rv__at(de, mid) < key)
            a = mid + 1;
        else
            z = mid;
    }
    while (a < z && rv__at(de, a) < key) a++;
    return a;
}

/* The slots [*lo, *hi) of entity x's documents (see rv__ent_doc). */
static inline void rv__ent_slots(const rv_graph *g, uint32_t x, uint32_t *lo, uint32_t *hi) {
    if (g->ent_off) {
        *lo = g->ent_off[x];
        *hi = g->ent_off[x + 1];
        return;
    }
    /* documents in entity order: x's run lies inside its block's range */
    const uint32_t *base = g->ent_base + (x >> RV__ENT_SHIFT);
    uint32_t z = base[1];
    *lo = rv__first_at_least(g->doc_entity, base[0], z, x);
    *hi = rv__first_at_least(g->doc_entity, *lo, z, (uint64_t)x + 1);
}

/* The document in slot p (rv__ent_slots). */
static inline uint32_t rv__ent_doc(const rv_graph *g, uint32_t p) {
    return g->ent_doc ? g->ent_doc[p] : p;
}

/* Whether entity x has a document. */
static inline int rv__ent_has_docs(const rv_graph *g, uint32_t x) {
    uint32_t lo, hi;
    rv__ent_slots(g, x, &lo, &hi);
    return lo < hi;
}

/* Node index of an id, or -1: the id table (node ids not 0 .. n-1) is
** open addressing with linear probing, slots holding 1 + the node index
** (build.c fills it). */
static inline int64_t rv__graph_find(const rv_graph *g, int64_t id) {
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

/* ---- the build's arrays (arrays.c) */

/* Number a build that begins (the recycling's clock). */
uint64_t rv__graph_build_begin(void);

/* An array of size bytes (at least 1), recorded in list[*n]: a kept one
** when there is one, else a fresh one (NULL when none can be had). */
void *rv__graph_alloc(rv__gblock *list, unsigned *n, size_t size);

/* Keep n arrays for later builds, first releasing those kept before build
** `since` (0: none; UINT64_MAX: all); frees what is too small to keep or
** finds no slot. */
void rv__graph_keep(const rv__gblock *b, unsigned n, uint64_t since);

/* Fault in the pages of the fresh arrays among b[0 .. n) on nt threads. */
void rv__graph_populate(const rv__gblock *b, unsigned n, unsigned nt);

/* ---- the adjacency (csr.c) */

/* Bucket shift of the adjacency sort of n nodes and m edges; *packed: the
** bucket offsets fit the slots beside the edge indexes. */
unsigned rv__graph_bucket_shift(size_t n, size_t m, int *packed);

/* The rest of a build after the endpoints: both CSR directions, edge types
** and times, the document table.  ordered: bit 0 sources in order, bit 1
** destinations; count: the edges per bucket (2 * buckets, out then in), or
** NULL to count them here. */
rv_status rv__graph_build_csr(rv_graph *g, const rv_graph_spec *s, unsigned ordered, unsigned nt,
                              const uint32_t *count);

/* Window tests (w NULL: everything is inside). */
static inline int rv__in_window(int64_t t, const int64_t *w) {
    return !w || t == RV_GRAPH_NO_TIME || (t >= w[0] && t < w[1]);
}
static inline int rv__node_in(const rv_graph *g, uint32_t v, const int64_t *w) {
    return !w || !g->node_time || rv__in_window(g->node_time[v], w);
}
static inline int rv__edge_in(const rv_graph *g, uint32_t e, const int64_t *w) {
    return !w || !g->etime || rv__in_window(g->etime[e], w);
}
static inline int rv__entity_in(const rv_graph *g, uint32_t x, const int64_t *w) {
    return x < g->n_nodes ? rv__node_in(g, x, w) : rv__edge_in(g, (uint32_t)(x - g->n_nodes), w);
}

/* Bitmaps of n bits (calloc'd words). */
static inline int rv__bit(const uint64_t *b, size_t i) {
    return (int)((b[i >> 6] >> (i & 63)) & 1u);
}
static inline void rv__set(uint64_t *b, size_t i) {
    b[i >> 6] |= 1ull << (i & 63);
}

/* Score of document d against a prepared query. */
static inline float rv__graph_score(const rv_graph *g, const float *q, uint32_t d) {
    size_t row = g->doc_row ? g->doc_row[d] : d;
    float s = g->dot(q, g->vec + row * (size_t)g->dim, g->dim);
    return g->inv_norm ? s * g->inv_norm[row] : s;
}

#endif /* ROWVOI_GRAPH_INTERNAL_H */
