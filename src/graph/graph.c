/*
** The graph: building the CSR from edge arrays, the id table, documents
** and vectors, and the per-node queries (neighbours, degree, edges).
**
** Why counting sorts: the edges of a node must come in input order (the
** documented order of every listing), and a stable counting sort by source
** (then by destination) gives exactly that in O(n_nodes + n_edges) with two
** sequential passes, where a comparison sort would cost O(E log E).
*/
#include <math.h>
#include <string.h>

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

void rv_graph_free(rv_graph *g) {
    if (!g) return;
    rv__free(g->node_id);
    rv__free(g->node_time);
    rv__free(g->slots);
    rv__free(g->src);
    rv__free(g->dst);
    rv__free(g->etype);
    rv__free(g->etime);
    rv__free(g->out.off);
    rv__free(g->out.edge);
    rv__free(g->out.nbr);
    rv__free(g->in.off);
    rv__free(g->in.edge);
    rv__free(g->in.nbr);
    rv__free(g->doc_entity);
    rv__free(g->ent_off);
    rv__free(g->ent_doc);
    rv__free(g->vec_owned);
    rv__free(g->doc_row);
    rv__free(g->inv_norm);
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

/* Node ids, with implicit endpoints appended; fills src/dst indexes. */
static rv_status rv__build_nodes(rv_graph *g, const rv_graph_spec *s) {
    size_t n = s->n_nodes, cap = n;
    int implicit = (s->flags & RV_GRAPH_IMPLICIT_NODES) != 0;
    int identity = 1;
    for (size_t i = 0; i < n && identity; i++) identity = s->node_ids[i] == (int64_t)i;
    if (implicit) {
        /* endpoints outside 0 .. n-1 may appear: the fast path holds only
        ** when every endpoint is already a node */
        for (size_t e = 0; e < s->n_edges && identity; e++)
            identity = s->edge_src[e] >= 0 && (uint64_t)s->edge_src[e] < n && s->edge_dst[e] >= 0 &&
                       (uint64_t)s->edge_dst[e] < n;
        if (!identity) cap = n + 2 * s->n_edges;
    }
    if (cap > RV_GRAPH_MAX_ITEMS) cap = RV_GRAPH_MAX_ITEMS;
    g->node_id = (int64_t *)rv__malloc((cap ? cap : 1) * sizeof *g->node_id);
    g->src = (uint32_t *)rv__malloc((s->n_edges ? s->n_edges : 1) * sizeof *g->src);
    g->dst = (uint32_t *)rv__malloc((s->n_edges ? s->n_edges : 1) * sizeof *g->dst);
    if (!g->node_id || !g->src || !g->dst) return rv__nomem("the graph's nodes and edges");
    if (n) memcpy(g->node_id, s->node_ids, n * sizeof *g->node_id);
    g->n_nodes = n;
    g->identity_ids = identity;
    if (!identity) {
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
    for (size_t e = 0; e < s->n_edges; e++) {
        for (int side = 0; side < 2; side++) {
            int64_t id = side ? s->edge_dst[e] : s->edge_src[e];
            int64_t v = rv__graph_find(g, id);
            if (v < 0) {
                if (!implicit)
                    return rv__error(RV_E_RANGE,
                                     "edge_%s[%zu] = %lld is not a node id (list it in "
                                     "node_ids, or set RV_GRAPH_IMPLICIT_NODES)",
                                     side ? "dst" : "src", e, (long long)id);
                if (g->n_nodes >= cap)
                    return rv__error(RV_E_RANGE, "more than %u nodes",
                                     (unsigned)RV_GRAPH_MAX_ITEMS);
                v = (int64_t)g->n_nodes++;
                g->node_id[v] = id;
                rv__table_insert(g, (uint32_t)v);
            }
            (side ? g->dst : g->src)[e] = (uint32_t)v;
        }
    }
    if (s->node_time || g->n_nodes > n) {
        if (s->node_time) {
            g->node_time = (int64_t *)rv__malloc(g->n_nodes * sizeof *g->node_time);
            if (!g->node_time) return rv__nomem("node times");
            memcpy(g->node_time, s->node_time, n * sizeof *g->node_time);
            for (size_t i = n; i < g->n_nodes; i++) g->node_time[i] = RV_GRAPH_NO_TIME;
        }
    }
    return RV_OK;
}

/*
** One CSR direction by a stable sort of the edges on key[] (src or dst).
** Why two passes: a plain counting sort scatters every edge to a random
** slot of arrays far larger than the caches (three cache misses an edge).
** So the edges are first partitioned, stably, into buckets of 4096
** consecutive nodes (a few hundred sequential write streams), then each
** bucket is counting-sorted into its own slice of the output, whose
** counters and slots stay in cache.  Both passes keep input order, so each
** node's edges come in input order, as documented.
*/
static rv_status rv__build_csr(rv_graph *g, rv__csr *c, const uint32_t *key, const uint32_t *other,
                               uint32_t *tkey, uint64_t *tval) {
    size_t n = g->n_nodes, m = g->n_edges;
    unsigned shift = 12;
    while ((n >> shift) + 1 > 4096) shift++;
    size_t nb = (n >> shift) + 1;
    c->off = (uint32_t *)rv__calloc(n + 1, sizeof *c->off);
    c->edge = (uint32_t *)rv__malloc((m ? m : 1) * sizeof *c->edge);
    c->nbr = (uint32_t *)rv__malloc((m ? m : 1) * sizeof *c->nbr);
    size_t *bstart = (size_t *)rv__calloc(nb + 1, sizeof *bstart);
    rv_status st = RV_OK;
    if (!c->off || !c->edge || !c->nbr || !bstart) {
        st = rv__nomem("the graph's adjacency");
        goto done;
    }
    /* pass 1: partition by bucket (stable), carrying the edge and the
    ** other end so pass 2 reads nothing at random */
    for (size_t e = 0; e < m; e++) bstart[(key[e] >> shift) + 1]++;
    for (size_t b = 0; b < nb; b++) bstart[b + 1] += bstart[b];
    for (size_t e = 0; e < m; e++) {
        size_t p = bstart[key[e] >> shift]++;
        tkey[p] = key[e];
        tval[p] = ((uint64_t)e << 32) | other[e];
    }
    /* bstart[b] is now the end of bucket b; degrees, then offsets */
    for (size_t i = 0; i < m; i++) c->off[tkey[i] + 1]++;
    for (size_t v = 0; v < n; v++) c->off[v + 1] += c->off[v];
    /* pass 2: place each bucket's edges; off[v] serves as node v's cursor
    ** and is shifted back afterwards */
    for (size_t i = 0; i < m; i++) {
        uint32_t p = c->off[tkey[i]]++;
        c->edge[p] = (uint32_t)(tval[i] >> 32);
        c->nbr[p] = (uint32_t)tval[i];
    }
    for (size_t v = n; v > 0; v--) c->off[v] = c->off[v - 1];
    c->off[0] = 0;
done:
    rv__free(bstart);
    return st;
}

static rv_status rv__build_docs(rv_graph *g, const rv_graph_spec *s) {
    size_t nd = s->n_docs, ne = g->n_nodes + g->n_edges;
    g->n_docs = nd;
    g->doc_entity = (uint32_t *)rv__malloc((nd ? nd : 1) * sizeof *g->doc_entity);
    g->ent_off = (uint32_t *)rv__calloc(ne + 1, sizeof *g->ent_off);
    g->ent_doc = (uint32_t *)rv__malloc((nd ? nd : 1) * sizeof *g->ent_doc);
    if (!g->doc_entity || !g->ent_off || !g->ent_doc) return rv__nomem("the document table");
    for (size_t d = 0; d < nd; d++) {
        int64_t x = s->doc_entity[d];
        if (x < 0 || (uint64_t)x >= ne)
            return rv__error(RV_E_INVALID_ARG,
                             "doc_entity[%zu] = %lld: entities are 0 .. %zu (nodes, "
                             "then edges)",
                             d, (long long)x, ne ? ne - 1 : 0);
        g->doc_entity[d] = (uint32_t)x;
        g->ent_off[x + 1]++;
    }
    size_t most = 0;
    for (size_t x = 0; x < ne; x++) {
        if (g->ent_off[x + 1] > most) most = g->ent_off[x + 1];
        g->ent_off[x + 1] += g->ent_off[x];
    }
    g->max_entity_docs = most;
    for (size_t d = 0; d < nd; d++) g->ent_doc[g->ent_off[g->doc_entity[d]]++] = (uint32_t)d;
    for (size_t x = ne; x > 0; x--) g->ent_off[x] = g->ent_off[x - 1];
    g->ent_off[0] = 0;
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
    /* one pass over the exponent bits (vectorises; isfinite per element
    ** does not), then a second look only at a row that failed */
    for (size_t r = 0; r < nv; r++) {
        const float *row = s->vectors + r * dim;
        uint32_t bad = 0;
        for (size_t j = 0; j < dim; j++) {
            uint32_t bits;
            memcpy(&bits, row + j, sizeof bits);
            bad |= (uint32_t)((bits & 0x7f800000u) == 0x7f800000u);
        }
        if (RV__UNLIKELY(bad))
            for (size_t j = 0; j < dim; j++)
                if (!isfinite(row[j]))
                    return rv__error(RV_E_INVALID_ARG,
                                     "vectors[%zu][%zu] = %g: vectors must be finite", r, j,
                                     (double)row[j]);
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
    if (s->n_nodes > RV_GRAPH_MAX_ITEMS || s->n_edges > RV_GRAPH_MAX_ITEMS ||
        s->n_docs > RV_GRAPH_MAX_ITEMS || s->n_vectors > RV_GRAPH_MAX_ITEMS)
        return rv__error(RV_E_RANGE, "more than %u nodes, edges, documents or vectors",
                         (unsigned)RV_GRAPH_MAX_ITEMS);
    return RV_OK;
}

rv_status rv_graph_create(const rv_graph_spec *s, rv_graph **out) {
    if (out) *out = NULL;
    if (!s || !out) return rv__error(RV_E_INVALID_ARG, "spec or out is NULL");
    rv_status st = rv__check_spec(s);
    if (st) return st;
    rv_graph *g = (rv_graph *)rv__calloc(1, sizeof *g);
    if (!g) return rv__nomem("a graph");
    g->n_edges = s->n_edges;
    st = rv__build_nodes(g, s);
    if (!st && s->n_edges) {
        g->etype = (uint16_t *)rv__malloc(s->n_edges * sizeof *g->etype);
        if (!g->etype)
            st = rv__nomem("edge types");
        else if (s->edge_type)
            memcpy(g->etype, s->edge_type, s->n_edges * sizeof *g->etype);
        else
            memset(g->etype, 0, s->n_edges * sizeof *g->etype);
    }
    if (!st && s->edge_time && s->n_edges) {
        g->etime = (int64_t *)rv__malloc(s->n_edges * sizeof *g->etime);
        if (!g->etime)
            st = rv__nomem("edge times");
        else
            memcpy(g->etime, s->edge_time, s->n_edges * sizeof *g->etime);
    }
    /* scratch of the two-pass sort, shared by both directions */
    uint32_t *tkey = NULL;
    uint64_t *tval = NULL;
    if (!st) {
        tkey = (uint32_t *)rv__malloc((s->n_edges ? s->n_edges : 1) * sizeof *tkey);
        tval = (uint64_t *)rv__malloc((s->n_edges ? s->n_edges : 1) * sizeof *tval);
        if (!tkey || !tval) st = rv__nomem("the adjacency sort's scratch");
    }
    if (!st) st = rv__build_csr(g, &g->out, g->src, g->dst, tkey, tval);
    if (!st) st = rv__build_csr(g, &g->in, g->dst, g->src, tkey, tval);
    rv__free(tkey);
    rv__free(tval);
    if (!st) st = rv__build_docs(g, s);
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
    if (!g || (n && (!ids || !out)))
        return rv__error(RV_E_INVALID_ARG, "graph, ids or out is NULL");
    for (size_t i = 0; i < n; i++) out[i] = rv__graph_find(g, ids[i]);
    return RV_OK;
}

rv_status rv_graph_node_ids(const rv_graph *g, int64_t *out, size_t capacity, size_t *n) {
    if (!g || !n || (capacity && !out))
        return rv__error(RV_E_INVALID_ARG, "graph, out or n is NULL");
    *n = g->n_nodes;
    size_t k = capacity < g->n_nodes ? capacity : g->n_nodes;
    if (k) memcpy(out, g->node_id, k * sizeof *out);
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
    if (!g || !n) return rv__error(RV_E_INVALID_ARG, "graph or n is NULL");
    *n = 0;
    rv_status st = rv__check_node(g, node, dir, type);
    if (st) return st;
    if (!rv__node_in(g, (uint32_t)node, window)) return RV_OK;
    size_t k = 0;
    for (int side = 0; side < 2; side++) {
        if (!(dir & (side ? RV_GRAPH_IN : RV_GRAPH_OUT))) continue;
        const rv__csr *c = side ? &g->in : &g->out;
        for (uint32_t p = c->off[node]; p < c->off[node + 1]; p++) {
            uint32_t e = c->edge[p], v = c->nbr[p];
            if (type >= 0 && g->etype[e] != (uint16_t)type) continue;
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
    if (!g || !n) return rv__error(RV_E_INVALID_ARG, "graph or n is NULL");
    *n = 0;
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
            k += g->etype[c->edge[p]] == (uint16_t)type;
    }
    *n = k;
    return RV_OK;
}

rv_status rv_graph_edges(const rv_graph *g, size_t n, const int64_t *edges, int64_t *src,
                         int64_t *dst, int32_t *type, int64_t *time) {
    if (!g || (n && !edges)) return rv__error(RV_E_INVALID_ARG, "graph or edges is NULL");
    for (size_t i = 0; i < n; i++) {
        int64_t e = edges[i];
        if (e < 0 || (uint64_t)e >= g->n_edges)
            return rv__error(RV_E_RANGE, "edges[%zu] = %lld: the graph has %zu edges", i,
                             (long long)e, g->n_edges);
        if (src) src[i] = g->src[e];
        if (dst) dst[i] = g->dst[e];
        if (type) type[i] = g->etype[e];
        if (time) time[i] = g->etime ? g->etime[e] : RV_GRAPH_NO_TIME;
    }
    return RV_OK;
}

rv_status rv_graph_entity_docs(const rv_graph *g, size_t n, const int64_t *entities, int64_t *out,
                               size_t capacity, size_t *n_out) {
    if (!g || !n_out || (n && !entities) || (capacity && !out))
        return rv__error(RV_E_INVALID_ARG, "graph, entities, out or n_out is NULL");
    *n_out = 0;
    size_t ne = g->n_nodes + g->n_edges, k = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t x = entities[i];
        if (x < 0 || (uint64_t)x >= ne)
            return rv__error(RV_E_RANGE, "entities[%zu] = %lld: entities are 0 .. %zu", i,
                             (long long)x, ne ? ne - 1 : 0);
        for (uint32_t p = g->ent_off[x]; p < g->ent_off[x + 1]; p++, k++)
            if (k < capacity) out[k] = g->ent_doc[p];
    }
    *n_out = k;
    if (k > capacity) return rv__error(RV_E_SHAPE, "capacity %zu < %zu documents", capacity, k);
    return RV_OK;
}

rv_status rv_graph_doc_entities(const rv_graph *g, size_t n, const int64_t *docs, int64_t *out) {
    if (!g || (n && (!docs || !out)))
        return rv__error(RV_E_INVALID_ARG, "graph, docs or out is NULL");
    for (size_t i = 0; i < n; i++) {
        if (docs[i] < 0 || (uint64_t)docs[i] >= g->n_docs)
            return rv__error(RV_E_RANGE, "docs[%zu] = %lld: the graph has %zu documents", i,
                             (long long)docs[i], g->n_docs);
        out[i] = g->doc_entity[docs[i]];
    }
    return RV_OK;
}

/* -------------------------------------------- shared by walks and rounds */

rv_status rv__graph_mark_docs(const rv_graph *g, size_t n_sel, const int64_t *sel,
                              uint64_t **selected) {
    *selected = NULL;
    if (n_sel && !sel) return rv__error(RV_E_INVALID_ARG, "sel is NULL");
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
