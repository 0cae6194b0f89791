/*
** What a built graph answers per node, edge and document: its sizes, node
** ids, neighbours, degrees, edges and the documents of entities (walks are
** walk.c's, selections select.c's).
*/
#include <string.h>

#include "graph_internal.h"

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
