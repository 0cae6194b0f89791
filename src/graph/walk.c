/*
** Walks over the node graph: breadth-first hop expansion with a visited
** bitmap, depth cap and node budget, and the neighbourhood facts behind
** graph-to-text (bridge edges followed but never written).
**
** Both keep the frontier in one array: a BFS queue is the output itself
** (nodes in order of discovery), so a level is a contiguous range of it and
** no separate queue is allocated.
*/
#include <string.h>

#include "graph_internal.h"

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

/* A bitmap of the 65536 edge types (8 KiB on the stack is too much for
** some hosts' threads; it is allocated). */
static rv_status rv__type_mask(const uint16_t *types, size_t n, const char *types_name,
                               const char *n_name, uint64_t **mask) {
    *mask = NULL;
    if (!n) return RV_OK;
    if (!types)
        return rv__error(RV_E_INVALID_ARG, "%s is NULL but %s = %zu", types_name, n_name, n);
    RV__CHECK_SIZE(n, sizeof *types, n_name);
    uint64_t *m = (uint64_t *)rv__calloc(65536 / 64, sizeof *m);
    if (!m) return rv__nomem("the edge type mask");
    for (size_t i = 0; i < n; i++) rv__set(m, types[i]);
    *mask = m;
    return RV_OK;
}

static rv_status rv__check_seeds(const rv_graph *g, size_t n_seeds, const int64_t *seeds) {
    if (n_seeds && !seeds) return rv__error(RV_E_INVALID_ARG, "seeds is NULL");
    RV__CHECK_SIZE(n_seeds, sizeof *seeds, "n_seeds");
    for (size_t i = 0; i < n_seeds; i++)
        if (seeds[i] < 0 || (uint64_t)seeds[i] >= g->n_nodes)
            return rv__error(RV_E_RANGE, "seeds[%zu] = %lld: the graph has %zu nodes", i,
                             (long long)seeds[i], g->n_nodes);
    return RV_OK;
}

rv_status rv_graph_bfs(const rv_graph *g, const rv_graph_walk *w, size_t n_seeds,
                       const int64_t *seeds, int64_t *nodes, uint32_t *depths, size_t capacity,
                       size_t *n) {
    if (n) *n = 0;
    RV__NOT_NULL(g, "graph");
    RV__NOT_NULL(w, "walk");
    RV__NOT_NULL(n, "n");
    RV__CHECK_SIZE(capacity, sizeof *nodes, "capacity");
    if (w->dir != RV_GRAPH_OUT && w->dir != RV_GRAPH_IN && w->dir != RV_GRAPH_BOTH)
        return rv__error(RV_E_INVALID_ARG, "dir %d: use RV_GRAPH_OUT, _IN or _BOTH", (int)w->dir);
    rv_status st = rv__check_seeds(g, n_seeds, seeds);
    if (st) return st;
    size_t budget = w->node_budget ? w->node_budget : (size_t)-1;
    uint64_t *mask = NULL, *seen = NULL;
    uint32_t *queue = NULL;
    st = rv__type_mask(w->types, w->n_types, "walk->types", "walk->n_types", &mask);
    if (st) return st;
    size_t limit = g->n_nodes < budget ? g->n_nodes : budget;
    seen = (uint64_t *)rv__calloc(RV_BITSET_WORDS(g->n_nodes) + 1, sizeof *seen);
    queue = (uint32_t *)rv__malloc((limit ? limit : 1) * sizeof *queue);
    uint32_t *qdepth = (uint32_t *)rv__malloc((limit ? limit : 1) * sizeof *qdepth);
    if (!seen || !queue || !qdepth) {
        st = rv__nomem("the walk's visited set");
        goto done;
    }
    size_t k = 0;
    for (size_t i = 0; i < n_seeds && k < limit; i++) {
        uint32_t v = (uint32_t)seeds[i];
        if (rv__bit(seen, v) || !rv__node_in(g, v, w->window)) continue;
        rv__set(seen, v);
        qdepth[k] = 0;
        queue[k++] = v;
    }
    /* level by level: [lo, hi) is the level being expanded */
    for (size_t lo = 0, hi = k, d = 0; lo < hi && d < w->max_depth && k < limit;
         lo = hi, hi = k, d++) {
        for (size_t i = lo; i < hi && k < limit; i++) {
            uint32_t u = queue[i];
            for (int side = 0; side < 2 && k < limit; side++) {
                if (!(w->dir & (side ? RV_GRAPH_IN : RV_GRAPH_OUT))) continue;
                const rv__csr *c = side ? &g->in : &g->out;
                for (uint32_t p = c->off[u]; p < c->off[u + 1] && k < limit; p++) {
                    uint32_t e = rv__csr_edge(c, p), v = rv__at(c->other, e);
                    if (rv__bit(seen, v)) continue;
                    if (mask && !rv__bit(mask, rv__etype(g, e))) continue;
                    if (!rv__edge_in(g, e, w->window) || !rv__node_in(g, v, w->window)) continue;
                    rv__set(seen, v);
                    qdepth[k] = (uint32_t)d + 1;
                    queue[k++] = v;
                }
            }
        }
    }
    *n = k < capacity ? k : capacity;
    for (size_t i = 0; i < *n; i++) {
        if (nodes) nodes[i] = queue[i];
        if (depths) depths[i] = qdepth[i];
    }
    if (k > capacity)
        st = rv__error(RV_E_SHAPE,
                       "capacity %zu < %zu nodes reached: raise capacity or set "
                       "a node budget",
                       capacity, k);
done:
    rv__free(mask);
    rv__free(seen);
    rv__free(queue);
    rv__free(qdepth);
    return st;
}

/* The walk of rv_graph_facts: a growing queue of nodes with their depth,
** visited nodes and written edges as bitmaps, written counts per subject
** in a small open-addressing table (only subjects of written edges). */
typedef struct facts_walk {
    uint32_t *queue, *qdepth;
    size_t n, cap;
    uint64_t *seen, *done_edge;
    uint32_t *subj_key, *subj_count; /* key 1 + node, 0 empty */
    size_t subj_mask;
} facts_walk;

static rv_status rv__facts_push(facts_walk *fw, uint32_t v, uint32_t d) {
    if (fw->n == fw->cap) {
        size_t cap = fw->cap ? 2 * fw->cap : 64;
        uint32_t *q = (uint32_t *)rv__realloc(fw->queue, cap * sizeof *q);
        if (!q) return rv__nomem("the facts queue");
        fw->queue = q;
        uint32_t *qd = (uint32_t *)rv__realloc(fw->qdepth, cap * sizeof *qd);
        if (!qd) return rv__nomem("the facts queue");
        fw->qdepth = qd;
        fw->cap = cap;
    }
    rv__set(fw->seen, v);
    fw->queue[fw->n] = v;
    fw->qdepth[fw->n++] = d;
    return RV_OK;
}

/* Slot of subject v in the per-subject table (max_edges subjects at most,
** so a table of twice that never fills). */
static uint32_t *rv__subject_count(facts_walk *fw, uint32_t v) {
    size_t i = rv__mix64(v) & fw->subj_mask;
    while (fw->subj_key[i] && fw->subj_key[i] != v + 1) i = (i + 1) & fw->subj_mask;
    if (!fw->subj_key[i]) fw->subj_key[i] = v + 1;
    return &fw->subj_count[i];
}

rv_status rv_graph_facts(const rv_graph *g, const rv_graph_facts_params *p, size_t n_seeds,
                         const int64_t *seeds, int64_t *edges, uint32_t *depths, size_t capacity,
                         size_t *n) {
    if (n) *n = 0;
    RV__NOT_NULL(g, "graph");
    RV__NOT_NULL(p, "p (the parameters)");
    RV__NOT_NULL(n, "n");
    RV__CHECK_SIZE(capacity, sizeof *edges, "capacity");
    RV__CHECK_SIZE(p->max_edges, sizeof *edges, "max_edges");
    if (p->max_edges && !edges) return rv__error(RV_E_INVALID_ARG, "edges is NULL");
    if (capacity < p->max_edges)
        return rv__error(RV_E_SHAPE, "capacity %zu < max_edges %zu", capacity, p->max_edges);
    rv_status st = rv__check_seeds(g, n_seeds, seeds);
    if (st) return st;
    if (!p->max_edges || !p->depth) return RV_OK;
    facts_walk fw;
    memset(&fw, 0, sizeof fw);
    uint64_t *bridge = NULL;
    st = rv__type_mask(p->bridge_types, p->n_bridge_types, "p->bridge_types", "p->n_bridge_types",
                       &bridge);
    if (st) return st;
    /* at most min(max_edges, n_edges) edges are written (each once), so
    ** there are no more subjects than that */
    size_t max_subjects = p->max_edges < g->n_edges ? p->max_edges : g->n_edges, ts = 16;
    while (ts < 2 * max_subjects) ts <<= 1;
    fw.subj_mask = ts - 1;
    fw.seen = (uint64_t *)rv__calloc(RV_BITSET_WORDS(g->n_nodes) + 1, sizeof *fw.seen);
    fw.done_edge = (uint64_t *)rv__calloc(RV_BITSET_WORDS(g->n_edges) + 1, sizeof *fw.done_edge);
    fw.subj_key = (uint32_t *)rv__calloc(ts, sizeof *fw.subj_key);
    fw.subj_count = (uint32_t *)rv__calloc(ts, sizeof *fw.subj_count);
    if (!fw.seen || !fw.done_edge || !fw.subj_key || !fw.subj_count) {
        st = rv__nomem("the facts walk");
        goto done;
    }
    for (size_t i = 0; i < n_seeds && !st; i++) {
        uint32_t v = (uint32_t)seeds[i];
        if (!rv__bit(fw.seen, v) && rv__node_in(g, v, p->window)) st = rv__facts_push(&fw, v, 0);
    }
    size_t written = 0, cap_subject = p->max_edges_per_subject;
    size_t budget = p->node_budget ? p->node_budget : (size_t)-1;
    for (size_t i = 0; !st && i < fw.n && i < budget && written < p->max_edges; i++) {
        uint32_t u = fw.queue[i], d = fw.qdepth[i];
        if (d >= p->depth) break; /* the queue is in depth order */
        for (int side = 0; side < 2 && !st && written < p->max_edges; side++) {
            const rv__csr *c = side ? &g->in : &g->out;
            for (uint32_t q = c->off[u]; q < c->off[u + 1] && written < p->max_edges; q++) {
                uint32_t e = rv__csr_edge(c, q), v = rv__at(c->other, e);
                if (rv__bit(fw.done_edge, e)) continue;
                if (!rv__edge_in(g, e, p->window) || !rv__node_in(g, v, p->window)) continue;
                rv__set(fw.done_edge, e);
                if (!(bridge && rv__bit(bridge, rv__etype(g, e)))) {
                    uint32_t *cnt = rv__subject_count(&fw, rv__at(g->src, e));
                    if (!cap_subject || *cnt < cap_subject) {
                        (*cnt)++;
                        if (depths) depths[written] = d;
                        edges[written++] = e;
                    }
                }
                if (!rv__bit(fw.seen, v)) {
                    st = rv__facts_push(&fw, v, d + 1);
                    if (st) break;
                }
            }
        }
    }
    *n = written;
done:
    rv__free(bridge);
    rv__free(fw.queue);
    rv__free(fw.qdepth);
    rv__free(fw.seen);
    rv__free(fw.done_edge);
    rv__free(fw.subj_key);
    rv__free(fw.subj_count);
    return st;
}
