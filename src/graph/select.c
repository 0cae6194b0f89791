/*
** Selections of documents over the graph (Raphtory's VectorSelection):
** document hops, similarity-ordered expansion by documents and by
** entities, and whole-graph top-k.
**
** Why the frontier is only the last round's additions: a round that does
** not reach the limit adds every candidate it gathered, so the next round's
** candidates (unselected documents one hop from the selection) can only
** come from what it just added -- everything else around the older
** selection is already selected.  A round that reaches the limit is the
** last.  So each document's neighbourhood is gathered once per call, and a
** round costs what its frontier touches, not what the selection holds.
** (Raphtory rescans the whole selection every round; the additions are the
** same.)  For the same reason an entity's neighbourhood is gathered once,
** however many of its documents are selected: an entity-expanded bitmap.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/parallel.h"
#include "graph_internal.h"

/* ------------------------------------------------------------- arguments */

/* Check a selection of documents and mark it in a fresh bitmap of n_docs
** bits (*selected, the caller frees it with rv__free). */
static rv_status rv__graph_mark_docs(const rv_graph *g, size_t n_sel, const int64_t *sel,
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

/* Unit query (cosine) or a copy (inner product) into q (dim floats);
** RV_E_INVALID_ARG naming a bad component. */
static rv_status rv__graph_query(const rv_graph *g, const float *query, float *q) {
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

/* --------------------------------------------------------------- ranking */

typedef struct scored {
    float s;
    uint32_t i;
} scored;

/* a before b: higher score, then lower index (NaN compares as a tie). */
static inline int rv__better(scored a, scored b) {
    if (a.s > b.s) return 1;
    if (a.s < b.s) return 0;
    return a.i < b.i;
}

static int rv__cmp_scored(const void *pa, const void *pb) {
    scored a = *(const scored *)pa, b = *(const scored *)pb;
    return rv__better(a, b) ? -1 : rv__better(b, a) ? 1 : 0;
}

/* Min-heap on "better" (the root is the worst kept). */
static void rv__graph_sift_down(scored *h, size_t n, size_t i) {
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, w = i;
        if (l < n && rv__better(h[w], h[l])) w = l;
        if (r < n && rv__better(h[w], h[r])) w = r;
        if (w == i) return;
        scored t = h[i];
        h[i] = h[w];
        h[w] = t;
        i = w;
    }
}

/* Put the best `take` of a[0 .. n) first, best first.  A bounded heap when
** take is small next to n (O(n log take)), else one sort. */
static void rv__rank_top(scored *a, size_t n, size_t take) {
    if (take > n) take = n;
    if (take == 0) return;
    if (take * 4 < n) {
        for (size_t i = take / 2; i-- > 0;) rv__graph_sift_down(a, take, i);
        for (size_t i = take; i < n; i++)
            if (rv__better(a[i], a[0])) {
                a[0] = a[i];
                rv__graph_sift_down(a, take, 0);
            }
    }
    qsort(a, take * 4 < n ? take : n, sizeof *a, rv__cmp_scored);
}

/* ------------------------------------------------------- growing arrays */

typedef struct ubuf {
    uint32_t *a;
    size_t n, cap;
} ubuf;

static rv_status rv__ubuf_push(ubuf *b, uint32_t x) {
    if (b->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 256;
        uint32_t *a = (uint32_t *)rv__realloc(b->a, cap * sizeof *a);
        if (!a) return rv__nomem("a walk frontier");
        b->a = a;
        b->cap = cap;
    }
    b->a[b->n++] = x;
    return RV_OK;
}

/* ------------------------------------------------------- document hops */

/* Push the unmarked documents of entity x (marking them). */
static rv_status rv__push_docs(const rv_graph *g, uint32_t x, uint64_t *mark, ubuf *out) {
    uint32_t lo, hi;
    rv__ent_slots(g, x, &lo, &hi);
    for (uint32_t p = lo; p < hi; p++) {
        uint32_t d = rv__ent_doc(g, p);
        if (rv__bit(mark, d)) continue;
        rv__set(mark, d);
        rv_status st = rv__ubuf_push(out, d);
        if (st) return st;
    }
    return RV_OK;
}

/* Gather the documents one hop from entity x (x inside the window):
** x's own, then a node's edges' (out, then in) or an edge's endpoints'
** (source, then destination). */
static rv_status rv__gather_doc_hop(const rv_graph *g, uint32_t x, const int64_t *w, uint64_t *mark,
                                    ubuf *out) {
    rv_status st = rv__push_docs(g, x, mark, out);
    if (st) return st;
    size_t nn = g->n_nodes;
    if (x < nn) {
        for (int side = 0; side < 2; side++) {
            const rv__csr *c = side ? &g->in : &g->out;
            for (uint32_t p = c->off[x]; p < c->off[x + 1]; p++) {
                uint32_t e = rv__csr_edge(c, p);
                if (!rv__edge_in(g, e, w)) continue;
                st = rv__push_docs(g, (uint32_t)(nn + e), mark, out);
                if (st) return st;
            }
        }
    } else {
        uint32_t e = (uint32_t)(x - nn), ends[2] = {rv__at(g->src, e), rv__at(g->dst, e)};
        for (int k = 0; k < 2; k++) {
            if (!rv__node_in(g, ends[k], w)) continue;
            st = rv__push_docs(g, ends[k], mark, out);
            if (st) return st;
        }
    }
    return RV_OK;
}

/* One round of document hops from frontier docs: the new documents go to
** out (marked).  `expanded` marks entities already gathered. */
static rv_status rv__doc_round(const rv_graph *g, const uint32_t *frontier, size_t nf,
                               const int64_t *w, uint64_t *selected, uint64_t *expanded,
                               ubuf *out) {
    for (size_t i = 0; i < nf; i++) {
        uint32_t x = rv__at(g->doc_entity, frontier[i]);
        if (rv__bit(expanded, x)) continue;
        rv__set(expanded, x);
        if (!rv__entity_in(g, x, w)) continue;
        rv_status st = rv__gather_doc_hop(g, x, w, selected, out);
        if (st) return st;
    }
    return RV_OK;
}

typedef struct sel_state {
    uint64_t *selected; /* documents selected or gathered */
    uint64_t *expanded; /* entities whose neighbourhood was gathered */
    uint32_t *frontier;
    size_t nf;
} sel_state;

static void rv__sel_free(sel_state *s) {
    rv__free(s->selected);
    rv__free(s->expanded);
    rv__free(s->frontier);
}

/* Selection bitmap, entity bitmap and round-0 frontier (the selection). */
static rv_status rv__sel_init(const rv_graph *g, size_t n_sel, const int64_t *sel, sel_state *s) {
    memset(s, 0, sizeof *s);
    rv_status st = rv__graph_mark_docs(g, n_sel, sel, &s->selected);
    if (st) return st;
    s->expanded =
        (uint64_t *)rv__calloc(RV_BITSET_WORDS(g->n_nodes + g->n_edges) + 1, sizeof *s->expanded);
    s->frontier = (uint32_t *)rv__malloc((n_sel ? n_sel : 1) * sizeof *s->frontier);
    if (!s->expanded || !s->frontier) {
        rv__sel_free(s);
        return rv__nomem("the selection state");
    }
    for (size_t i = 0; i < n_sel; i++) s->frontier[i] = (uint32_t)sel[i];
    s->nf = n_sel;
    return RV_OK;
}

/* Make the last additions the next frontier. */
static rv_status rv__sel_advance(sel_state *s, const uint32_t *added, size_t n) {
    uint32_t *f = (uint32_t *)rv__realloc(s->frontier, (n ? n : 1) * sizeof *f);
    if (!f) return rv__nomem("the selection frontier");
    if (n) memcpy(f, added, n * sizeof *f);
    s->frontier = f;
    s->nf = n;
    return RV_OK;
}

rv_status rv_graph_doc_hops(const rv_graph *g, size_t n_sel, const int64_t *sel, uint32_t hops,
                            const int64_t *window, int64_t *out, size_t capacity, size_t *n) {
    if (n) *n = 0;
    RV__NOT_NULL(g, "graph");
    RV__NOT_NULL(n, "n");
    if (capacity && !out)
        return rv__error(RV_E_INVALID_ARG, "out is NULL but capacity = %zu", capacity);
    RV__CHECK_SIZE(capacity, sizeof *out, "capacity");
    sel_state s;
    rv_status st = rv__sel_init(g, n_sel, sel, &s);
    if (st) return st;
    ubuf added = {0};
    size_t k = 0;
    for (uint32_t h = 0; h < hops && s.nf; h++) {
        added.n = 0;
        st = rv__doc_round(g, s.frontier, s.nf, window, s.selected, s.expanded, &added);
        if (!st) st = rv__sel_advance(&s, added.a, added.n);
        if (st) break;
        for (size_t i = 0; i < added.n; i++, k++)
            if (k < capacity) out[k] = added.a[i];
    }
    if (!st) {
        *n = k < capacity ? k : capacity;
        if (k > capacity)
            st = rv__error(RV_E_SHAPE, "capacity %zu < %zu documents added", capacity, k);
    }
    rv__free(added.a);
    rv__sel_free(&s);
    return st;
}

/* --------------------------------------------------- similarity rounds */

/* The checks every similarity function starts with: the pointers, and the
** result counts (k or max_new, and capacity) as counts of int64 slots. */
static rv_status rv__check_out(const rv_graph *g, int64_t *out, float *scores, size_t *n,
                               const char *limit_name, size_t limit, size_t capacity) {
    if (n) *n = 0;
    RV__NOT_NULL(g, "graph");
    RV__NOT_NULL(out, "out");
    RV__NOT_NULL(scores, "scores");
    RV__NOT_NULL(n, "n");
    RV__CHECK_SIZE(limit, sizeof *out, limit_name);
    RV__CHECK_SIZE(capacity, sizeof *out, "capacity");
    return RV_OK;
}

/* Best score of an entity's documents; 0 documents gives 0 (never asked). */
static float rv__entity_score(const rv_graph *g, const float *q, uint32_t x) {
    float best = 0;
    uint32_t lo, hi;
    rv__ent_slots(g, x, &lo, &hi);
    for (uint32_t p = lo; p < hi; p++) {
        float s = rv__graph_score(g, q, rv__ent_doc(g, p));
        if (p == lo || s > best) best = s;
    }
    return best;
}

/* Score every candidate of a round in one batch into *sc (grown as
** needed): documents, or entities by their best document. */
static rv_status rv__score_round(const rv_graph *g, const float *q, const ubuf *cand, int entities,
                                 scored **sc, size_t *cap) {
    if (cand->n > *cap) {
        scored *t = (scored *)rv__realloc(*sc, cand->n * sizeof *t);
        if (!t) return rv__nomem("the candidates' scores");
        *sc = t;
        *cap = cand->n;
    }
    for (size_t i = 0; i < cand->n; i++) {
        (*sc)[i].i = cand->a[i];
        (*sc)[i].s =
            entities ? rv__entity_score(g, q, cand->a[i]) : rv__graph_score(g, q, cand->a[i]);
    }
    return RV_OK;
}

rv_status rv_graph_similar_docs(const rv_graph *g, size_t n_sel, const int64_t *sel,
                                const float *query, size_t max_new, const int64_t *window,
                                int64_t *out, float *scores, size_t capacity, size_t *n) {
    rv_status st = rv__check_out(g, out, scores, n, "max_new", max_new, capacity);
    if (st) return st;
    size_t need = max_new < g->n_docs ? max_new : g->n_docs;
    if (capacity < need)
        return rv__error(RV_E_SHAPE, "capacity %zu < min(max_new, n_docs) = %zu", capacity, need);
    float *q = (float *)rv__malloc((g->dim ? g->dim : 1) * sizeof *q);
    if (!q) return rv__nomem("the query");
    st = rv__graph_query(g, query, q);
    if (st) {
        rv__free(q);
        return st;
    }
    sel_state s;
    st = rv__sel_init(g, n_sel, sel, &s);
    if (st) {
        rv__free(q);
        return st;
    }
    ubuf cand = {0};
    scored *sc = NULL;
    size_t sc_cap = 0, k = 0;
    while (k < max_new && s.nf) {
        cand.n = 0;
        st = rv__doc_round(g, s.frontier, s.nf, window, s.selected, s.expanded, &cand);
        if (st || !cand.n) break;
        st = rv__score_round(g, q, &cand, 0, &sc, &sc_cap);
        if (st) break;
        size_t take = max_new - k < cand.n ? max_new - k : cand.n;
        rv__rank_top(sc, cand.n, take);
        /* the round's additions, in order, become the next frontier (the
        ** candidate buffer is free again and holds at least take slots) */
        for (size_t i = 0; i < take; i++, k++) {
            out[k] = sc[i].i;
            scores[k] = sc[i].s;
            cand.a[i] = sc[i].i;
        }
        st = rv__sel_advance(&s, cand.a, take);
        if (st) break;
    }
    if (!st) *n = k;
    rv__free(q);
    rv__free(cand.a);
    rv__free(sc);
    rv__sel_free(&s);
    return st;
}

/* Push entity y as a candidate when it is of the wanted kinds, unmarked,
** inside the window and has documents. */
static rv_status rv__entity_candidate(const rv_graph *g, uint32_t y, rv_graph_kinds kinds,
                                      const int64_t *w, uint64_t *mark, ubuf *cand) {
    int is_node = y < g->n_nodes;
    if (!(kinds & (is_node ? RV_GRAPH_NODES : RV_GRAPH_EDGES))) return RV_OK;
    if (rv__bit(mark, y)) return RV_OK;
    if (!rv__ent_has_docs(g, y) || !rv__entity_in(g, y, w)) return RV_OK;
    rv__set(mark, y);
    return rv__ubuf_push(cand, y);
}

/* The edges on node v (inside the window) and, with nodes, the far nodes. */
static rv_status rv__entity_around_node(const rv_graph *g, uint32_t v, rv_graph_kinds kinds,
                                        const int64_t *w, uint64_t *mark, ubuf *cand) {
    size_t nn = g->n_nodes;
    rv_status st = RV_OK;
    /* nodes first, then edges, as Raphtory lists a document's context */
    for (int pass = 0; pass < 2 && !st; pass++) {
        if (!(kinds & (pass ? RV_GRAPH_EDGES : RV_GRAPH_NODES))) continue;
        for (int side = 0; side < 2 && !st; side++) {
            const rv__csr *c = side ? &g->in : &g->out;
            for (uint32_t p = c->off[v]; p < c->off[v + 1] && !st; p++) {
                uint32_t e = rv__csr_edge(c, p);
                if (!rv__edge_in(g, e, w)) continue;
                st = pass
                         ? rv__entity_candidate(g, (uint32_t)(nn + e), kinds, w, mark, cand)
                         : (rv__node_in(g, rv__at(c->other, e), w)
                                ? rv__entity_candidate(g, rv__at(c->other, e), kinds, w, mark, cand)
                                : RV_OK);
            }
        }
    }
    return st;
}

static rv_status rv__entity_round(const rv_graph *g, const uint32_t *frontier, size_t nf,
                                  rv_graph_kinds kinds, const int64_t *w, uint64_t *mark,
                                  uint64_t *expanded, ubuf *cand) {
    size_t nn = g->n_nodes;
    rv_status st = RV_OK;
    for (size_t i = 0; i < nf && !st; i++) {
        uint32_t x = frontier[i];
        if (rv__bit(expanded, x)) continue;
        rv__set(expanded, x);
        if (!rv__entity_in(g, x, w)) continue;
        if (x < nn) {
            st = rv__entity_around_node(g, x, kinds, w, mark, cand);
            continue;
        }
        uint32_t e = (uint32_t)(x - nn), ends[2] = {rv__at(g->src, e), rv__at(g->dst, e)};
        /* an edge: its endpoints, then the edges on either endpoint */
        for (int k = 0; k < 2 && !st; k++)
            if (kinds & RV_GRAPH_NODES) st = rv__entity_candidate(g, ends[k], kinds, w, mark, cand);
        if (!(kinds & RV_GRAPH_EDGES)) continue;
        for (int k = 0; k < 2 && !st; k++)
            if (rv__node_in(g, ends[k], w))
                st = rv__entity_around_node(g, ends[k], RV_GRAPH_EDGES, w, mark, cand);
    }
    return st;
}

rv_status rv_graph_similar_entities(const rv_graph *g, size_t n_sel, const int64_t *sel,
                                    rv_graph_kinds kinds, const float *query, size_t max_new,
                                    const int64_t *window, int64_t *out, float *scores,
                                    size_t capacity, size_t *n) {
    rv_status st = rv__check_out(g, out, scores, n, "max_new", max_new, capacity);
    if (st) return st;
    if (kinds != RV_GRAPH_NODES && kinds != RV_GRAPH_EDGES && kinds != RV_GRAPH_ENTITIES)
        return rv__error(RV_E_INVALID_ARG,
                         "kinds %d: use RV_GRAPH_NODES, _EDGES or "
                         "_ENTITIES",
                         (int)kinds);
    size_t per = g->max_entity_docs, need = g->n_docs;
    if (per && max_new < g->n_docs / per + 1)
        need = max_new * per < g->n_docs ? max_new * per : g->n_docs;
    if (capacity < need)
        return rv__error(RV_E_SHAPE,
                         "capacity %zu < min(max_new * max_entity_docs, "
                         "n_docs) = %zu",
                         capacity, need);
    size_t ne = g->n_nodes + g->n_edges;
    float *q = (float *)rv__malloc((g->dim ? g->dim : 1) * sizeof *q);
    if (!q) return rv__nomem("the query");
    st = rv__graph_query(g, query, q);
    uint64_t *seldocs = NULL, *mark = NULL, *expanded = NULL;
    ubuf frontier = {0}, cand = {0};
    scored *sc = NULL;
    size_t sc_cap = 0, k = 0, added = 0;
    if (!st) st = rv__graph_mark_docs(g, n_sel, sel, &seldocs);
    if (!st) {
        mark = (uint64_t *)rv__calloc(RV_BITSET_WORDS(ne) + 1, sizeof *mark);
        expanded = (uint64_t *)rv__calloc(RV_BITSET_WORDS(ne) + 1, sizeof *expanded);
        if (!mark || !expanded) st = rv__nomem("the entity bitmaps");
    }
    /* round 0's frontier: the selected entities, in selection order */
    for (size_t i = 0; !st && i < n_sel; i++) {
        uint32_t x = rv__at(g->doc_entity, (size_t)sel[i]);
        if (rv__bit(mark, x)) continue;
        rv__set(mark, x);
        st = rv__ubuf_push(&frontier, x);
    }
    while (!st && added < max_new && frontier.n) {
        cand.n = 0;
        st = rv__entity_round(g, frontier.a, frontier.n, kinds, window, mark, expanded, &cand);
        if (st || !cand.n) break;
        st = rv__score_round(g, q, &cand, 1, &sc, &sc_cap);
        if (st) break;
        size_t take = max_new - added < cand.n ? max_new - added : cand.n;
        rv__rank_top(sc, cand.n, take);
        frontier.n = 0;
        for (size_t i = 0; i < take && !st; i++) {
            uint32_t x = sc[i].i;
            uint32_t lo, hi;
            rv__ent_slots(g, x, &lo, &hi);
            for (uint32_t p = lo; p < hi; p++) {
                uint32_t d = rv__ent_doc(g, p);
                if (rv__bit(seldocs, d)) continue; /* cannot happen: x was unselected */
                out[k] = d;
                scores[k++] = sc[i].s;
            }
            st = rv__ubuf_push(&frontier, x);
        }
        added += take;
    }
    if (!st) *n = k;
    rv__free(q);
    rv__free(seldocs);
    rv__free(mark);
    rv__free(expanded);
    rv__free(frontier.a);
    rv__free(cand.a);
    rv__free(sc);
    return st;
}

/* ----------------------------------------------------- whole-graph top-k */

/* The scan of a top-k: every document (or entity with documents) of
** [lo, hi) inside the window, scored, in order.  One block per worker,
** each written compacted at its block's start (a worker's entries never
** pass its block), then closed up in worker order on the calling thread:
** the same array as a serial scan, for any thread count.  The scan reads
** every row of vectors (600k 384-d rows: 0.9 GB), so a second thread
** nearly doubles the memory bandwidth it gets. */
typedef struct rv__topk_job {
    const rv_graph *g;
    const float *q;
    const int64_t *window;
    int kinds;
    size_t lo, hi;
    unsigned nt;
    scored *sc;
    size_t got[RV__MAX_THREADS];
} rv__topk_job;

/* Below this many vector components scored, a top-k scans on the calling
** thread alone (a thread costs tens of microseconds; 4M floats take about
** a millisecond). */
#define RV__TOPK_PAR_MIN 4e6

unsigned rv__graph_test_topk_threads;

static void rv__topk_worker(void *arg, unsigned t) {
    rv__topk_job *j = (rv__topk_job *)arg;
    const rv_graph *g = j->g;
    size_t a, b, m = 0;
    rv__parallel_block(j->hi - j->lo, j->nt, t, &a, &b);
    scored *sc = j->sc + a;
    for (size_t x = j->lo + a; x < j->lo + b; x++) {
        if (j->kinds) {
            if (!rv__ent_has_docs(g, (uint32_t)x) || !rv__entity_in(g, (uint32_t)x, j->window))
                continue;
            sc[m].i = (uint32_t)x;
            sc[m++].s = rv__entity_score(g, j->q, (uint32_t)x);
        } else {
            if (!rv__entity_in(g, rv__at(g->doc_entity, x), j->window)) continue;
            sc[m].i = (uint32_t)x;
            sc[m++].s = rv__graph_score(g, j->q, (uint32_t)x);
        }
    }
    j->got[t] = m;
}

rv_status rv_graph_top_k(const rv_graph *g, int kinds, const float *query, size_t k,
                         const int64_t *window, int64_t *out, float *scores, size_t capacity,
                         size_t *n) {
    rv_status st = rv__check_out(g, out, scores, n, "k", k, capacity);
    if (st) return st;
    if (kinds != 0 && kinds != RV_GRAPH_NODES && kinds != RV_GRAPH_EDGES &&
        kinds != RV_GRAPH_ENTITIES)
        return rv__error(RV_E_INVALID_ARG,
                         "kinds %d: use 0 (documents), RV_GRAPH_NODES, "
                         "_EDGES or _ENTITIES",
                         kinds);
    size_t per = kinds ? g->max_entity_docs : 1, need = g->n_docs;
    if (per && k < g->n_docs / per + 1) need = k * per < g->n_docs ? k * per : g->n_docs;
    if (capacity < need) return rv__error(RV_E_SHAPE, "capacity %zu < %zu", capacity, need);
    float *q = (float *)rv__malloc((g->dim ? g->dim : 1) * sizeof *q);
    if (!q) return rv__nomem("the query");
    st = rv__graph_query(g, query, q);
    size_t ne = g->n_nodes + g->n_edges;
    size_t lo = 0, hi = kinds ? ne : g->n_docs;
    if (kinds == RV_GRAPH_NODES) hi = g->n_nodes;
    if (kinds == RV_GRAPH_EDGES) lo = g->n_nodes;
    scored *sc = NULL;
    if (!st) {
        sc = (scored *)rv__malloc((hi > lo ? hi - lo : 1) * sizeof *sc);
        if (!sc) st = rv__nomem("the scores");
    }
    size_t m = 0, w = 0;
    if (!st && hi > lo) {
        /* (an entity's score reads its documents: about as many rows) */
        double work = (double)(hi - lo) * (double)(g->dim ? g->dim : 1);
        rv__topk_job j = {g, q, window, kinds, lo, hi, 1, sc, {0}};
        j.nt = rv__graph_test_topk_threads
                   ? (rv__graph_test_topk_threads < RV__MAX_THREADS ? rv__graph_test_topk_threads
                                                                    : RV__MAX_THREADS)
                   : rv__threads_for(0, hi - lo, work, RV__TOPK_PAR_MIN);
        rv__parallel_run(j.nt, rv__topk_worker, &j);
        m = j.got[0];
        for (unsigned t = 1; t < j.nt; t++) {
            size_t a, b;
            rv__parallel_block(hi - lo, j.nt, t, &a, &b);
            if (j.got[t]) memmove(sc + m, sc + a, j.got[t] * sizeof *sc);
            m += j.got[t];
        }
    }
    if (!st) {
        size_t take = k < m ? k : m;
        rv__rank_top(sc, m, take);
        for (size_t i = 0; i < take; i++) {
            if (!kinds) {
                out[w] = sc[i].i;
                scores[w++] = sc[i].s;
                continue;
            }
            uint32_t a, z;
            rv__ent_slots(g, sc[i].i, &a, &z);
            for (uint32_t p = a; p < z; p++) {
                out[w] = rv__ent_doc(g, p);
                scores[w++] = sc[i].s;
            }
        }
        *n = w;
    }
    rv__free(q);
    rv__free(sc);
    return st;
}

rv_status rv_graph_score_docs(const rv_graph *g, const float *query, size_t n, const int64_t *docs,
                              float *scores) {
    RV__NOT_NULL(g, "graph");
    RV__CHECK_SIZE(n, sizeof *docs, "n");
    if (n) {
        RV__NOT_NULL(docs, "docs");
        RV__NOT_NULL(scores, "scores");
    }
    float *q = (float *)rv__malloc((g->dim ? g->dim : 1) * sizeof *q);
    if (!q) return rv__nomem("the query");
    rv_status st = rv__graph_query(g, query, q);
    for (size_t i = 0; !st && i < n; i++) {
        if (docs[i] < 0 || (uint64_t)docs[i] >= g->n_docs) {
            st = rv__error(RV_E_RANGE, "docs[%zu] = %lld: the graph has %zu documents", i,
                           (long long)docs[i], g->n_docs);
            break;
        }
        scores[i] = rv__graph_score(g, q, (uint32_t)docs[i]);
    }
    rv__free(q);
    return st;
}
