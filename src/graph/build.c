/*
** Building a graph (rv_graph_create) and freeing it: the spec's checks,
** the node ids and their table, the edges' endpoints as node indexes (with
** the bucket counts of the adjacency sort), node times and the document
** vectors.  The adjacency and the document table are csr.c's, the arrays'
** recycling arrays.c's.
*/
#include <math.h>
#include <string.h>

#include "../core/parallel.h"
#include "graph_internal.h"

void rv_graph_spec_init(rv_graph_spec *spec) {
    if (!spec) return;
    memset(spec, 0, sizeof *spec);
    spec->metric = RV_METRIC_COSINE;
}

/* ------------------------------------------------------------ id table */

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
        g->src.u =
            (uint32_t *)rv__graph_alloc(g->blocks, &g->n_blocks, s->n_edges * sizeof(uint32_t));
        g->dst.u =
            (uint32_t *)rv__graph_alloc(g->blocks, &g->n_blocks, s->n_edges * sizeof(uint32_t));
        if (!g->src.u || !g->dst.u) return rv__nomem("the graph's edges");
    }
    g->n_nodes = n;
    g->identity_ids = identity;
    if (!identity) { /* (ids 0 .. n-1 are their own indexes: no copy, no table) */
        g->node_id = (int64_t *)rv__graph_alloc(g->blocks, &g->n_blocks, cap * sizeof *g->node_id);
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
** rv__graph_bucket_shift) and whether its block is in order, while the ends are
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
    j.shift = rv__graph_bucket_shift(g->n_nodes, s->n_edges, &packed);
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
    int64_t *t = (int64_t *)rv__graph_alloc(g->blocks, &g->n_blocks, g->n_nodes * sizeof *t);
    if (!t) return rv__nomem("node times");
    if (s->n_nodes) memcpy(t, s->node_time, s->n_nodes * sizeof *t);
    for (size_t i = s->n_nodes; i < g->n_nodes; i++) t[i] = RV_GRAPH_NO_TIME;
    g->node_time = t;
    return RV_OK;
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
    g->birth = rv__graph_build_begin();
    /* four tasks after the endpoints (rv__graph_build_csr): at most four threads */
    unsigned nt =
        rv__threads_for(s->n_threads, 4, (double)s->n_edges + (double)s->n_docs, RV__GRAPH_PAR_MIN);
    unsigned ordered = 0;
    int grow = 0;
    st = rv__build_nodes(g, s, nt, &grow);
    if (!st && !grow) rv__graph_populate(g->blocks, g->n_blocks, nt);
    uint32_t *count = NULL; /* edges per bucket of the adjacency sort */
    if (!st)
        st = grow ? rv__ends_serial(g, s, &ordered) : rv__ends_parallel(g, s, nt, &ordered, &count);
    if (!st) st = rv__build_node_time(g, s);
    if (!st) st = rv__graph_build_csr(g, s, ordered, nt, count);
    rv__free(count);
    if (!st) st = rv__build_vectors(g, s);
    if (st) {
        rv_graph_free(g);
        return st;
    }
    *out = g;
    return RV_OK;
}

void rv_graph_free(rv_graph *g) {
    if (!g) return;
    rv__free(g->slots);
    rv__free(g->vec_owned);
    rv__free(g->doc_row);
    rv__free(g->inv_norm);
    rv__graph_keep(g->blocks, g->n_blocks, g->birth);
    rv__free(g);
}
