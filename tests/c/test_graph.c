/*
** Tests of the graph engine (include/rowvoi/graph.h): CSR build and
** listing order, ids, implicit nodes, windows, BFS safety (cycles,
** self-loops, budgets, large fan-out), facts with bridges and budgets,
** document hops and similarity rounds, errors and allocation failures.
*/
#include <stdlib.h>

#include "rv_test.h"

/*
**  ids 10, 20, 30, 40; edges (input order):
**   e0 10->20 t0    e1 20->30 t1    e2 30->10 t0    e3 20->20 t2 (loop)
**   e4 10->40 t1    e5 40->20 t0
*/
static const int64_t NODE_IDS[4] = {10, 20, 30, 40};
static const int64_t SRC[6] = {10, 20, 30, 20, 10, 40};
static const int64_t DST[6] = {20, 30, 10, 20, 40, 20};
static const uint16_t TYPE[6] = {0, 1, 0, 2, 1, 0};

static rv_graph *small(const int64_t *node_time, const int64_t *edge_time) {
    rv_graph_spec s;
    rv_graph_spec_init(&s);
    s.n_nodes = 4;
    s.node_ids = NODE_IDS;
    s.node_time = node_time;
    s.n_edges = 6;
    s.edge_src = SRC;
    s.edge_dst = DST;
    s.edge_type = TYPE;
    s.edge_time = edge_time;
    rv_graph *g = NULL;
    if (rv_graph_create(&s, &g) != RV_OK) return NULL;
    return g;
}

static void test_build_and_neighbours(void) {
    rv_graph *g = small(NULL, NULL);
    ASSERT_TRUE(g != NULL);
    ASSERT_EQ(rv_graph_n_nodes(g), 4);
    ASSERT_EQ(rv_graph_n_edges(g), 6);
    int64_t ids[3] = {30, 99, 10}, idx[3];
    ASSERT_OK(rv_graph_find_nodes(g, 3, ids, idx));
    EXPECT_EQ(idx[0], 2);
    EXPECT_EQ(idx[1], -1);
    EXPECT_EQ(idx[2], 0);
    int64_t e[8], v[8];
    size_t n;
    /* node 20 (index 1): out e1, e3; in e0, e3, e5 */
    ASSERT_OK(rv_graph_neighbours(g, 1, RV_GRAPH_BOTH, -1, NULL, e, v, 8, &n));
    ASSERT_EQ(n, 5);
    int64_t want_e[5] = {1, 3, 0, 3, 5}, want_v[5] = {2, 1, 0, 1, 3};
    for (int i = 0; i < 5; i++) {
        EXPECT_EQ(e[i], want_e[i]);
        EXPECT_EQ(v[i], want_v[i]);
    }
    ASSERT_OK(rv_graph_neighbours(g, 1, RV_GRAPH_IN, 0, NULL, e, v, 8, &n));
    ASSERT_EQ(n, 2);
    EXPECT_EQ(e[0], 0);
    EXPECT_EQ(e[1], 5);
    /* capacity too small: the count is still reported */
    EXPECT_STATUS(RV_E_SHAPE, rv_graph_neighbours(g, 1, RV_GRAPH_BOTH, -1, NULL, e, v, 2, &n));
    EXPECT_EQ(n, 5);
    ASSERT_OK(rv_graph_degree(g, 1, RV_GRAPH_IN, -1, &n));
    EXPECT_EQ(n, 3); /* fan-in */
    ASSERT_OK(rv_graph_degree(g, 1, RV_GRAPH_IN, 0, &n));
    EXPECT_EQ(n, 2);
    int64_t qe[2] = {3, 4}, s2[2], d2[2], t2[2];
    int32_t ty[2];
    ASSERT_OK(rv_graph_edges(g, 2, qe, s2, d2, ty, t2));
    EXPECT_EQ(s2[0], 1);
    EXPECT_EQ(d2[0], 1);
    EXPECT_EQ(ty[1], 1);
    EXPECT_EQ(t2[1], RV_GRAPH_NO_TIME);
    int64_t all[4];
    ASSERT_OK(rv_graph_node_ids(g, all, 4, &n));
    EXPECT_EQ(all[3], 40);
    EXPECT_STATUS(RV_E_RANGE, rv_graph_neighbours(g, 4, RV_GRAPH_OUT, -1, NULL, e, v, 8, &n));
    EXPECT_STATUS(RV_E_RANGE, rv_graph_degree(g, 0, RV_GRAPH_OUT, 70000, &n));
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_graph_degree(g, 0, (rv_graph_dir)7, -1, &n));
    EXPECT_STATUS(RV_E_RANGE, rv_graph_edges(g, 1, (int64_t[]){6}, NULL, NULL, NULL, NULL));
    rv_graph_free(g);
    rv_graph_free(NULL);
}

static void test_build_errors_and_implicit(void) {
    rv_graph_spec s;
    rv_graph_spec_init(&s);
    rv_graph *g = (rv_graph *)1;
    int64_t rep[3] = {5, 6, 5};
    s.n_nodes = 3;
    s.node_ids = rep;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_graph_create(&s, &g));
    EXPECT_TRUE(g == NULL);
    EXPECT_STR_CONTAINS(rv_errmsg(), "node_ids[2] = 5");
    int64_t ids[2] = {5, 6}, src[2] = {5, 7}, dst[2] = {6, 5};
    s.n_nodes = 2;
    s.node_ids = ids;
    s.n_edges = 2;
    s.edge_src = src;
    s.edge_dst = dst;
    EXPECT_STATUS(RV_E_RANGE, rv_graph_create(&s, &g));
    EXPECT_STR_CONTAINS(rv_errmsg(), "edge_src[1] = 7");
    s.flags = RV_GRAPH_IMPLICIT_NODES;
    ASSERT_OK(rv_graph_create(&s, &g));
    EXPECT_EQ(rv_graph_n_nodes(g), 3);
    int64_t want[1] = {7}, got[1];
    ASSERT_OK(rv_graph_find_nodes(g, 1, want, got));
    EXPECT_EQ(got[0], 2);
    rv_graph_free(g);
    /* nodes from edges alone */
    s.n_nodes = 0;
    s.node_ids = NULL;
    ASSERT_OK(rv_graph_create(&s, &g));
    int64_t all[3];
    size_t n;
    ASSERT_OK(rv_graph_node_ids(g, all, 3, &n));
    EXPECT_EQ(n, 3);
    EXPECT_EQ(all[0], 5);
    EXPECT_EQ(all[1], 6);
    EXPECT_EQ(all[2], 7);
    rv_graph_free(g);
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_graph_create(NULL, &g));
    /* documents and vectors */
    rv_graph_spec_init(&s);
    s.n_nodes = 2;
    s.node_ids = ids;
    int64_t de[2] = {0, 2};
    s.n_docs = 2;
    s.doc_entity = de;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_graph_create(&s, &g));
    de[1] = 1;
    float vec[4] = {1, 0, NAN, 1};
    s.dim = 2;
    s.n_vectors = 1;
    s.vectors = vec;
    EXPECT_STATUS(RV_E_SHAPE, rv_graph_create(&s, &g));
    s.n_vectors = 2;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_graph_create(&s, &g));
    EXPECT_STR_CONTAINS(rv_errmsg(), "vectors[1][0]");
    vec[2] = 0;
    s.metric = RV_METRIC_L2;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_graph_create(&s, &g));
    s.metric = RV_METRIC_COSINE;
    s.dim = 70000;
    EXPECT_STATUS(RV_E_RANGE, rv_graph_create(&s, &g));
}

static void test_windows(void) {
    int64_t nt[4] = {1, 2, RV_GRAPH_NO_TIME, 9};
    int64_t et[6] = {1, 5, 5, 5, 1, 1};
    rv_graph *g = small(nt, et);
    ASSERT_TRUE(g != NULL);
    int64_t w[2] = {0, 5}, e[8], v[8];
    size_t n;
    /* node 20 in [0,5): e1 (t5) out, e3 (t5) out, e0 (t1, from 10 t1) in, e5
    ** from 40 (t9, outside) in */
    ASSERT_OK(rv_graph_neighbours(g, 1, RV_GRAPH_BOTH, -1, w, e, v, 8, &n));
    ASSERT_EQ(n, 1);
    EXPECT_EQ(e[0], 0);
    /* node 40 (t9) is outside: no neighbours at all */
    ASSERT_OK(rv_graph_neighbours(g, 3, RV_GRAPH_BOTH, -1, w, e, v, 8, &n));
    EXPECT_EQ(n, 0);
    /* 30 is timeless: inside every window; e2 (t5) is not in [0,5) */
    ASSERT_OK(rv_graph_neighbours(g, 2, RV_GRAPH_BOTH, -1, w, e, v, 8, &n));
    EXPECT_EQ(n, 0);
    int64_t w2[2] = {5, 6};
    ASSERT_OK(rv_graph_neighbours(g, 2, RV_GRAPH_BOTH, -1, w2, e, v, 8, &n));
    EXPECT_EQ(n, 0); /* e2 and e1 reach 10 (t1) and 20 (t2): outside */
    rv_graph_free(g);
}

static void test_bfs(void) {
    rv_graph *g = small(NULL, NULL);
    rv_graph_walk w;
    rv_graph_walk_init(&w);
    int64_t seeds[3] = {1, 1, 2}, nodes[8];
    uint32_t depth[8];
    size_t n;
    w.max_depth = 0;
    ASSERT_OK(rv_graph_bfs(g, &w, 3, seeds, nodes, depth, 8, &n));
    ASSERT_EQ(n, 2); /* repeats collapse */
    w.max_depth = 5;
    ASSERT_OK(rv_graph_bfs(g, &w, 1, seeds, nodes, depth, 8, &n));
    ASSERT_EQ(n, 4); /* cycles and the self-loop terminate */
    /* from 20: out 30 (e1), [20 loop], in 10 (e0), 40 (e5) */
    EXPECT_EQ(nodes[1], 2);
    EXPECT_EQ(nodes[2], 0);
    EXPECT_EQ(nodes[3], 3);
    EXPECT_EQ(depth[3], 1);
    w.dir = RV_GRAPH_OUT;
    ASSERT_OK(rv_graph_bfs(g, &w, 1, seeds, nodes, depth, 8, &n));
    ASSERT_EQ(n, 4); /* 20 -> 30 -> 10 -> 40 */
    EXPECT_EQ(nodes[3], 3);
    EXPECT_EQ(depth[3], 3);
    w.node_budget = 2;
    ASSERT_OK(rv_graph_bfs(g, &w, 1, seeds, nodes, depth, 8, &n));
    EXPECT_EQ(n, 2);
    w.node_budget = 0;
    uint16_t t1 = 1;
    w.types = &t1;
    w.n_types = 1;
    ASSERT_OK(rv_graph_bfs(g, &w, 1, seeds, nodes, depth, 8, &n));
    EXPECT_EQ(n, 2); /* only e1 (type 1) leaves 20; 30 has no type-1 out-edge */
    EXPECT_STATUS(RV_E_SHAPE, rv_graph_bfs(g, &w, 1, seeds, nodes, depth, 1, &n));
    int64_t bad = 9;
    EXPECT_STATUS(RV_E_RANGE, rv_graph_bfs(g, &w, 1, &bad, nodes, depth, 8, &n));
    rv_graph_free(g);
}

/* A star: node 0 with `fan` out-edges to 1 .. fan, and each leaf linked back. */
static void test_fan_out_budget(void) {
    size_t fan = 100000;
    int64_t *src = (int64_t *)malloc(2 * fan * sizeof *src);
    int64_t *dst = (int64_t *)malloc(2 * fan * sizeof *dst);
    for (size_t i = 0; i < fan; i++) {
        src[i] = 0;
        dst[i] = (int64_t)i + 1;
        src[fan + i] = (int64_t)i + 1;
        dst[fan + i] = 0;
    }
    rv_graph_spec s;
    rv_graph_spec_init(&s);
    s.n_edges = 2 * fan;
    s.edge_src = src;
    s.edge_dst = dst;
    s.flags = RV_GRAPH_IMPLICIT_NODES;
    rv_graph *g = NULL;
    ASSERT_OK(rv_graph_create(&s, &g));
    rv_graph_walk w;
    rv_graph_walk_init(&w);
    w.max_depth = 10;
    w.node_budget = 64;
    int64_t seed = 0, nodes[64];
    size_t n;
    ASSERT_OK(rv_graph_bfs(g, &w, 1, &seed, nodes, NULL, 64, &n));
    EXPECT_EQ(n, 64);
    EXPECT_EQ(nodes[63], 63);
    rv_graph_facts_params p;
    rv_graph_facts_init(&p);
    int64_t edges[25];
    ASSERT_OK(rv_graph_facts(g, &p, 1, &seed, edges, NULL, 25, &n));
    EXPECT_EQ(n, 25);
    rv_graph_free(g);
    free(src);
    free(dst);
}

/*
** Facts: a chunk C whose only edges are MENTIONED_IN (type 9) bridges to
** entities A and B; A --WORKS_AT(1)--> X, B --LIVES_IN(2)--> Y, A --KNOWS(3)--> B.
*/
static void test_facts_bridges(void) {
    int64_t src[6] = {100, 100, 1, 2, 1, 1};
    int64_t dst[6] = {1, 2, 50, 60, 2, 51};
    uint16_t ty[6] = {9, 9, 1, 2, 3, 1};
    rv_graph_spec s;
    rv_graph_spec_init(&s);
    s.n_edges = 6;
    s.edge_src = src;
    s.edge_dst = dst;
    s.edge_type = ty;
    s.flags = RV_GRAPH_IMPLICIT_NODES;
    rv_graph *g = NULL;
    ASSERT_OK(rv_graph_create(&s, &g));
    int64_t chunk = 0, edges[16];
    uint32_t depth[16];
    size_t n;
    rv_graph_facts_params p;
    rv_graph_facts_init(&p);
    uint16_t bridge = 9;
    p.bridge_types = &bridge;
    p.n_bridge_types = 1;
    p.depth = 1;
    ASSERT_OK(rv_graph_facts(g, &p, 1, &chunk, edges, depth, 25, &n));
    EXPECT_EQ(n, 0); /* depth 1: only the chunk's own (bridge) edges */
    p.depth = 2;
    ASSERT_OK(rv_graph_facts(g, &p, 1, &chunk, edges, depth, 25, &n));
    ASSERT_EQ(n, 4); /* through the bridges: e2, e4, e5 from A, e3 from B */
    EXPECT_EQ(edges[0], 2);
    EXPECT_EQ(edges[1], 4);
    EXPECT_EQ(edges[2], 5);
    EXPECT_EQ(edges[3], 3);
    EXPECT_EQ(depth[0], 1);
    for (size_t i = 0; i < n; i++) EXPECT_TRUE(ty[edges[i]] != 9);
    p.max_edges = 2;
    ASSERT_OK(rv_graph_facts(g, &p, 1, &chunk, edges, depth, 2, &n));
    EXPECT_EQ(n, 2); /* the budget, exactly */
    p.max_edges = 25;
    p.max_edges_per_subject = 1;
    ASSERT_OK(rv_graph_facts(g, &p, 1, &chunk, edges, depth, 25, &n));
    ASSERT_EQ(n, 2); /* one from A (e2), one from B (e3) */
    EXPECT_EQ(edges[0], 2);
    EXPECT_EQ(edges[1], 3);
    EXPECT_STATUS(RV_E_SHAPE, rv_graph_facts(g, &p, 1, &chunk, edges, depth, 3, &n));
    rv_graph_free(g);
}

/*
** Documents: nodes a(0) b(1) c(2), edges e0 a->b, e1 b->c.  Documents:
** d0 on a, d1 on b, d2 on c, d3 on e0, d4 on e1, d5 on a.  2-d vectors.
*/
static rv_status doc_graph_status;
static rv_graph *doc_graph(const int64_t *node_time) {
    static const int64_t ids[3] = {0, 1, 2}, src[2] = {0, 1}, dst[2] = {1, 2};
    static const int64_t ent[6] = {0, 1, 2, 3, 4, 0};
    static const float vec[12] = {1, 0, 0, 1, 1, 1, 1, 2, 3, 1, 0, 0};
    rv_graph_spec s;
    rv_graph_spec_init(&s);
    s.n_nodes = 3;
    s.node_ids = ids;
    s.node_time = node_time;
    s.n_edges = 2;
    s.edge_src = src;
    s.edge_dst = dst;
    s.n_docs = 6;
    s.doc_entity = ent;
    s.dim = 2;
    s.n_vectors = 6;
    s.vectors = vec;
    rv_graph *g = NULL;
    doc_graph_status = rv_graph_create(&s, &g);
    return g;
}

static void test_doc_hops(void) {
    rv_graph *g = doc_graph(NULL);
    ASSERT_TRUE(g != NULL);
    EXPECT_EQ(rv_graph_max_entity_docs(g), 2);
    int64_t sel[1] = {0}, out[8];
    size_t n;
    ASSERT_OK(rv_graph_doc_hops(g, 1, sel, 1, NULL, out, 8, &n));
    ASSERT_EQ(n, 2); /* d5 (same node), d3 (edge on a) */
    EXPECT_EQ(out[0], 5);
    EXPECT_EQ(out[1], 3);
    ASSERT_OK(rv_graph_doc_hops(g, 1, sel, 2, NULL, out, 8, &n));
    ASSERT_EQ(n, 3); /* then d1 (b, an endpoint of e0) */
    EXPECT_EQ(out[2], 1);
    ASSERT_OK(rv_graph_doc_hops(g, 1, sel, 9, NULL, out, 8, &n));
    EXPECT_EQ(n, 5);
    EXPECT_STATUS(RV_E_SHAPE, rv_graph_doc_hops(g, 1, sel, 9, NULL, out, 2, &n));
    int64_t bad = 6;
    EXPECT_STATUS(RV_E_RANGE, rv_graph_doc_hops(g, 1, &bad, 1, NULL, out, 8, &n));
    rv_graph_free(g);
    /* windows: b at time 7 is outside [0, 5) */
    int64_t nt[3] = {1, 7, 1}, w[2] = {0, 5};
    g = doc_graph(nt);
    ASSERT_OK(rv_graph_doc_hops(g, 1, sel, 9, w, out, 8, &n));
    ASSERT_EQ(n, 2); /* d5, d3; e1's d4 and c's d2 are reached only through b */
    EXPECT_EQ(out[0], 5);
    EXPECT_EQ(out[1], 3);
    rv_graph_free(g);
}

static void test_similarity_rounds(void) {
    rv_graph *g = doc_graph(NULL);
    float q[2] = {0, 1};
    int64_t sel[1] = {0}, out[8];
    float sc[8];
    size_t n;
    /* round 1 from d0: d5 (0,0) -> 0, d3 (1,2) -> 0.894; so d3 first */
    ASSERT_OK(rv_graph_similar_docs(g, 1, sel, q, 1, NULL, out, sc, 8, &n));
    ASSERT_EQ(n, 1);
    EXPECT_EQ(out[0], 3);
    EXPECT_NEAR(sc[0], 2 / sqrt(5.0), 1e-6);
    ASSERT_OK(rv_graph_similar_docs(g, 1, sel, q, 100, NULL, out, sc, 8, &n));
    ASSERT_EQ(n, 5);
    int64_t want[5] = {3, 5, 1, 4, 2};
    for (int i = 0; i < 5; i++) EXPECT_EQ(out[i], want[i]);
    /* a nearer, less similar document before a farther, more similar one:
    ** d2 (1,1) scores 0.707 > d4 (3,1) 0.316, but d4 is one round nearer */
    EXPECT_TRUE(sc[3] < sc[4]);
    /* entities: from a, nodes: b only (one hop), then c */
    ASSERT_OK(rv_graph_similar_entities(g, 1, sel, RV_GRAPH_NODES, q, 5, NULL, out, sc, 8, &n));
    ASSERT_EQ(n, 2);
    EXPECT_EQ(out[0], 1);
    EXPECT_EQ(out[1], 2);
    ASSERT_OK(rv_graph_similar_entities(g, 1, sel, RV_GRAPH_ENTITIES, q, 2, NULL, out, sc, 8, &n));
    ASSERT_EQ(n, 2); /* round 1: b (1.0) and e0 (0.894) */
    EXPECT_EQ(out[0], 1);
    EXPECT_EQ(out[1], 3);
    ASSERT_OK(rv_graph_similar_entities(g, 1, sel, RV_GRAPH_EDGES, q, 5, NULL, out, sc, 8, &n));
    ASSERT_EQ(n, 2);
    EXPECT_EQ(out[0], 3);
    EXPECT_EQ(out[1], 4);
    /* top-k over everything */
    ASSERT_OK(rv_graph_top_k(g, 0, q, 2, NULL, out, sc, 8, &n));
    ASSERT_EQ(n, 2);
    EXPECT_EQ(out[0], 1);
    EXPECT_EQ(out[1], 3);
    ASSERT_OK(rv_graph_top_k(g, RV_GRAPH_NODES, q, 1, NULL, out, sc, 8, &n));
    ASSERT_EQ(n, 1);
    EXPECT_EQ(out[0], 1);
    ASSERT_OK(rv_graph_top_k(g, RV_GRAPH_NODES, (float[]){1, 0}, 1, NULL, out, sc, 8, &n));
    ASSERT_EQ(n, 2); /* a: both its documents, with a's best score */
    EXPECT_EQ(out[0], 0);
    EXPECT_EQ(out[1], 5);
    EXPECT_NEAR(sc[1], 1.0, 1e-6);
    float zero[2] = {0, 0}, nan2[2] = {NAN, 0};
    EXPECT_STATUS(RV_E_INVALID_ARG,
                  rv_graph_similar_docs(g, 1, sel, zero, 1, NULL, out, sc, 8, &n));
    EXPECT_STATUS(RV_E_INVALID_ARG,
                  rv_graph_similar_docs(g, 1, sel, nan2, 1, NULL, out, sc, 8, &n));
    EXPECT_STATUS(RV_E_SHAPE, rv_graph_similar_docs(g, 1, sel, q, 5, NULL, out, sc, 2, &n));
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_graph_similar_entities(g, 1, sel, (rv_graph_kinds)0, q, 1,
                                                              NULL, out, sc, 8, &n));
    int64_t docs[2] = {2, 0};
    ASSERT_OK(rv_graph_score_docs(g, q, 2, docs, sc));
    EXPECT_NEAR(sc[0], sqrt(0.5), 1e-6);
    EXPECT_NEAR(sc[1], 0, 1e-6);
    rv_graph_free(g);
    /* a graph without vectors */
    rv_graph_spec s;
    rv_graph_spec_init(&s);
    ASSERT_OK(rv_graph_create(&s, &g));
    EXPECT_STATUS(RV_E_STATE, rv_graph_similar_docs(g, 0, NULL, q, 1, NULL, out, sc, 8, &n));
    rv_graph_free(g);
}

/* Every allocation of every entry point fails in turn: RV_E_NOMEM, no
** leak (ASan), never a crash, until the call needs no more allocations and
** succeeds. */
static rv_status call_kernel(rv_graph *g, int i) {
    int64_t sel[1] = {0}, out[16], seed = 0;
    float sc[16], q[2] = {0, 1};
    uint32_t dep[16];
    size_t n;
    uint16_t t = 0;
    rv_graph_walk w;
    rv_graph_walk_init(&w);
    w.types = &t;
    w.n_types = 1;
    rv_graph_facts_params p;
    rv_graph_facts_init(&p);
    p.bridge_types = &t;
    p.n_bridge_types = 1;
    switch (i) {
    case 0:
        return rv_graph_bfs(g, &w, 1, &seed, out, dep, 16, &n);
    case 1:
        return rv_graph_facts(g, &p, 1, &seed, out, dep, 25, &n);
    case 2:
        return rv_graph_doc_hops(g, 1, sel, 3, NULL, out, 16, &n);
    case 3:
        return rv_graph_similar_docs(g, 1, sel, q, 9, NULL, out, sc, 16, &n);
    case 4:
        return rv_graph_similar_entities(g, 1, sel, RV_GRAPH_ENTITIES, q, 9, NULL, out, sc, 16, &n);
    case 5:
        return rv_graph_top_k(g, RV_GRAPH_ENTITIES, q, 3, NULL, out, sc, 16, &n);
    default:
        return rv_graph_score_docs(g, q, 1, sel, sc);
    }
}

static void test_oom(void) {
    rv_graph *g = NULL;
    uint64_t k = 1;
    for (;; k++) {
        rv__test_fail_alloc_after(k);
        g = doc_graph(NULL);
        rv__test_fail_alloc_after(0);
        if (g) break;
        EXPECT_STATUS(RV_E_NOMEM, doc_graph_status);
        ASSERT_LE(k, 100);
    }
    EXPECT_TRUE(k > 5); /* the sweep reached every allocation of the build */
    for (int i = 0; i < 7; i++) {
        rv_status st = RV_E_NOMEM;
        uint64_t j = 1;
        for (; st == RV_E_NOMEM && j < 100; j++) {
            rv__test_fail_alloc_after(j);
            st = call_kernel(g, i);
            rv__test_fail_alloc_after(0);
            if (st != RV_OK) EXPECT_STATUS(RV_E_NOMEM, st);
        }
        EXPECT_OK(st);
        EXPECT_TRUE(j > 2); /* at least one allocation failed first */
    }
    rv_graph_free(g);
}

int main(void) {
    RUN_TEST(test_build_and_neighbours);
    RUN_TEST(test_build_errors_and_implicit);
    RUN_TEST(test_windows);
    RUN_TEST(test_bfs);
    RUN_TEST(test_fan_out_budget);
    RUN_TEST(test_facts_bridges);
    RUN_TEST(test_doc_hops);
    RUN_TEST(test_similarity_rounds);
    RUN_TEST(test_oom);
    return RV_TEST_SUMMARY();
}
