/*
** Fuzz target for the graph CSR builder and its walks.  The input is
** decoded into the arrays of an rv_graph_spec -- node ids (possibly
** repeated), edge endpoints (possibly unknown ids), types, times, document
** entities (possibly out of range), vector rows and values (possibly NaN)
** and flags -- exactly as a host passes them.  A spec the header calls bad
** must give its status and no graph; a graph that builds must answer every
** walk (neighbours, degree, BFS, facts, document hops, similarity
** expansion, top-k) within its documented bounds: counts match, indexes
** are in range, and a walk never reports a node twice.  Replayed under
** ctest by tests/fuzz/replay_main.c on tests/fuzz/corpus/graph/.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rowvoi.h"
#include "fuzz_util.h"

typedef struct fzg_in {
    const uint8_t *p;
    size_t n, i;
} fzg_in;

static unsigned fzg_byte(fzg_in *in) {
    return in->i < in->n ? in->p[in->i++] : 0u;
}

enum { FZG_NODES = 24, FZG_EDGES = 48, FZG_DOCS = 32, FZG_DIM = 4 };

static const rv_status fzg_build_ok[] = {RV_OK, RV_E_INVALID_ARG, RV_E_RANGE, RV_E_SHAPE};

static void fzg_walks(const rv_graph *g, fzg_in *in) {
    size_t nn = rv_graph_n_nodes(g), ne = rv_graph_n_edges(g), nd = rv_graph_n_docs(g);
    size_t ent = nn + ne;
    int64_t window[2] = {(int64_t)(fzg_byte(in) % 8) - 2, (int64_t)(fzg_byte(in) % 8) + 1};
    const int64_t *win = fzg_byte(in) % 2 ? window : NULL;
    int64_t edges[2 * FZG_EDGES + 2], nbrs[2 * FZG_EDGES + 2];
    size_t n = 0;
    for (size_t v = 0; v < nn; v++) {
        int32_t type = (int32_t)(fzg_byte(in) % 4) - 1;
        rv_graph_dir dir = (rv_graph_dir)(1 + fzg_byte(in) % 3);
        RVF_CHECK(rv_graph_neighbours(g, (int64_t)v, dir, type, win, edges, nbrs, 2 * FZG_EDGES + 2,
                                      &n) == RV_OK);
        size_t deg = 0;
        RVF_CHECK(rv_graph_degree(g, (int64_t)v, dir, type, &deg) == RV_OK);
        if (!win) RVF_CHECK(deg == n);
        for (size_t i = 0; i < n; i++) {
            RVF_CHECK(edges[i] >= 0 && (size_t)edges[i] < ne);
            RVF_CHECK(nbrs[i] >= 0 && (size_t)nbrs[i] < nn);
            int64_t s, d;
            RVF_CHECK(rv_graph_edges(g, 1, &edges[i], &s, &d, NULL, NULL) == RV_OK);
            RVF_CHECK(s == (int64_t)v || d == (int64_t)v);
        }
    }
    RVF_CHECK(rv_graph_neighbours(g, (int64_t)nn, RV_GRAPH_OUT, -1, NULL, edges, nbrs, 1, &n) ==
              RV_E_RANGE);
    /* BFS from up to three seeds (one maybe out of range) */
    int64_t seeds[3];
    size_t n_seeds = 1 + fzg_byte(in) % 3;
    for (size_t i = 0; i < n_seeds; i++) seeds[i] = (int64_t)(fzg_byte(in) % (nn + 1));
    int bad_seed = 0;
    for (size_t i = 0; i < n_seeds; i++) bad_seed |= (size_t)seeds[i] >= nn;
    rv_graph_walk w;
    rv_graph_walk_init(&w);
    w.max_depth = fzg_byte(in) % 5;
    w.node_budget = fzg_byte(in) % 6;
    w.dir = (rv_graph_dir)(1 + fzg_byte(in) % 3);
    uint16_t types[2] = {(uint16_t)(fzg_byte(in) % 3), 1};
    if (fzg_byte(in) % 2) {
        w.types = types;
        w.n_types = 2;
    }
    w.window = win;
    /* room for every node: implicit nodes may outnumber the given ones */
    int64_t nodes[FZG_NODES + 2 * FZG_EDGES];
    uint32_t depths[FZG_NODES + 2 * FZG_EDGES];
    rv_status st = rv_graph_bfs(g, &w, n_seeds, seeds, nodes, depths, nn, &n);
    if (bad_seed) {
        RVF_CHECK(st == RV_E_RANGE);
    } else {
        RVF_CHECK(st == RV_OK);
        RVF_CHECK(n <= nn && (!w.node_budget || n <= w.node_budget));
        for (size_t i = 0; i < n; i++) {
            RVF_CHECK(nodes[i] >= 0 && (size_t)nodes[i] < nn && depths[i] <= w.max_depth);
            if (i) RVF_CHECK(depths[i] >= depths[i - 1]);
            for (size_t j = 0; j < i; j++) RVF_CHECK(nodes[j] != nodes[i]);
        }
        /* facts from the same seeds */
        rv_graph_facts_params fp;
        rv_graph_facts_init(&fp);
        fp.depth = fzg_byte(in) % 4;
        fp.max_edges = fzg_byte(in) % 12;
        fp.max_edges_per_subject = fzg_byte(in) % 3;
        fp.window = win;
        uint16_t bridge = (uint16_t)(fzg_byte(in) % 3);
        if (fzg_byte(in) % 2) {
            fp.bridge_types = &bridge;
            fp.n_bridge_types = 1;
        }
        int64_t fe[12];
        uint32_t fd[12];
        RVF_CHECK(rv_graph_facts(g, &fp, n_seeds, seeds, fe, fd, 12, &n) == RV_OK);
        RVF_CHECK(n <= fp.max_edges);
        for (size_t i = 0; i < n; i++) {
            RVF_CHECK(fe[i] >= 0 && (size_t)fe[i] < ne);
            int32_t ty;
            RVF_CHECK(rv_graph_edges(g, 1, &fe[i], NULL, NULL, &ty, NULL) == RV_OK);
            if (fp.n_bridge_types) RVF_CHECK(ty != (int32_t)bridge);
            for (size_t j = 0; j < i; j++) RVF_CHECK(fe[j] != fe[i]);
        }
    }
    if (!nd) return;
    /* document hops from a selection (maybe with repeats) */
    int64_t sel[3];
    size_t n_sel = 1 + fzg_byte(in) % 3;
    for (size_t i = 0; i < n_sel; i++) sel[i] = (int64_t)(fzg_byte(in) % nd);
    int64_t out[FZG_DOCS];
    float sc[FZG_DOCS];
    uint32_t hops = fzg_byte(in) % 4;
    RVF_CHECK(rv_graph_doc_hops(g, n_sel, sel, hops, win, out, FZG_DOCS, &n) == RV_OK);
    for (size_t i = 0; i < n; i++) {
        RVF_CHECK(out[i] >= 0 && (size_t)out[i] < nd);
        for (size_t j = 0; j < n_sel; j++) RVF_CHECK(out[i] != sel[j]);
        for (size_t j = 0; j < i; j++) RVF_CHECK(out[j] != out[i]);
    }
    int64_t de[FZG_DOCS];
    RVF_CHECK(rv_graph_doc_entities(g, n_sel, sel, de) == RV_OK);
    for (size_t i = 0; i < n_sel; i++) RVF_CHECK(de[i] >= 0 && (size_t)de[i] < ent);
    size_t ned = 0;
    st = rv_graph_entity_docs(g, n_sel, de, out, FZG_DOCS, &ned);
    RVF_CHECK(st == RV_OK || (st == RV_E_SHAPE && ned > FZG_DOCS)); /* repeats list again */
    RVF_CHECK(ned >= n_sel && ned <= n_sel * nd);
    for (size_t i = 0; i < ned && i < FZG_DOCS; i++) RVF_CHECK(out[i] >= 0 && (size_t)out[i] < nd);
    if (!rv_graph_dim(g)) return;
    /* similarity: a query from the input (nonzero, finite) */
    float q[FZG_DIM];
    uint32_t dim = rv_graph_dim(g);
    for (uint32_t j = 0; j < dim; j++) q[j] = (float)((int)(fzg_byte(in) % 9) - 4);
    q[0] = q[0] == 0.0f ? 1.0f : q[0];
    size_t max_new = fzg_byte(in) % 6;
    size_t cap = max_new < nd ? max_new : nd;
    RVF_CHECK(rv_graph_similar_docs(g, n_sel, sel, q, max_new, win, out, sc, cap, &n) == RV_OK);
    RVF_CHECK(n <= cap);
    for (size_t i = 0; i < n; i++) RVF_CHECK((size_t)out[i] < nd && !isnan(sc[i]));
    rv_graph_kinds kinds = (rv_graph_kinds)(1 + fzg_byte(in) % 3);
    size_t med = rv_graph_max_entity_docs(g);
    cap = max_new * med < nd ? max_new * med : nd;
    RVF_CHECK(rv_graph_similar_entities(g, n_sel, sel, kinds, q, max_new, win, out, sc, cap, &n) ==
              RV_OK);
    RVF_CHECK(n <= cap);
    size_t k = 1 + fzg_byte(in) % 4;
    int tk = (int)(fzg_byte(in) % 4);
    cap = tk ? (k * med < nd ? k * med : nd) : (k < nd ? k : nd);
    RVF_CHECK(rv_graph_top_k(g, tk, q, k, win, out, sc, cap, &n) == RV_OK);
    RVF_CHECK(n <= cap);
    for (size_t i = 1; i < n && !tk; i++) RVF_CHECK(!(sc[i] > sc[i - 1]));
    RVF_CHECK(rv_graph_score_docs(g, q, n_sel, sel, sc) == RV_OK);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fzg_in in = {data, size, 0};
    unsigned flags = fzg_byte(&in);
    size_t nn = fzg_byte(&in) % (FZG_NODES + 1);
    size_t ne = fzg_byte(&in) % (FZG_EDGES + 1);
    size_t nd = fzg_byte(&in) % (FZG_DOCS + 1);
    uint32_t dim = (flags >> 3) % (FZG_DIM + 1);
    int64_t node_ids[FZG_NODES], node_time[FZG_NODES];
    int64_t src[FZG_EDGES], dst[FZG_EDGES], etime[FZG_EDGES];
    uint16_t etype[FZG_EDGES];
    int64_t doc_entity[FZG_DOCS], doc_row[FZG_DOCS];
    float vec[FZG_DOCS * FZG_DIM];
    /* ids: small and spread (so the identity shortcut and the hash table
    ** both run), sometimes repeated */
    int spread = flags & 1;
    for (size_t i = 0; i < nn; i++) {
        unsigned b = fzg_byte(&in);
        node_ids[i] = spread ? (int64_t)b * 1000003 - 77 : (b < 250 ? (int64_t)i : (int64_t)b % 8);
        node_time[i] = b % 5 ? (int64_t)(b % 7) : RV_GRAPH_NO_TIME;
    }
    for (size_t e = 0; e < ne; e++) {
        unsigned a = fzg_byte(&in), b = fzg_byte(&in), c = fzg_byte(&in);
        size_t span = nn + 2;
        src[e] = spread && a % span < nn ? node_ids[a % span] : (int64_t)(a % span);
        dst[e] = spread && b % span < nn ? node_ids[b % span] : (int64_t)(b % span);
        etype[e] = (uint16_t)(c % 3);
        etime[e] = c % 4 ? (int64_t)(c % 9) : RV_GRAPH_NO_TIME;
    }
    size_t n_vec = 0;
    for (size_t d = 0; d < nd; d++) {
        unsigned b = fzg_byte(&in);
        doc_entity[d] = (int64_t)(b % (nn + ne + 2)) - (b == 255);
        doc_row[d] = (int64_t)(fzg_byte(&in) % (nd + 1));
    }
    if (dim) {
        n_vec = nd;
        for (size_t i = 0; i < nd * dim; i++) {
            unsigned b = fzg_byte(&in);
            vec[i] = b == 255 ? NAN : (float)((int)(b % 11) - 5) * 0.5f;
        }
    }
    rv_graph_spec spec;
    rv_graph_spec_init(&spec);
    spec.n_nodes = nn;
    spec.node_ids = nn ? node_ids : NULL;
    spec.node_time = (flags & 2) ? node_time : NULL;
    spec.n_edges = ne;
    spec.edge_src = ne ? src : NULL;
    spec.edge_dst = ne ? dst : NULL;
    spec.edge_type = ne ? etype : NULL;
    spec.edge_time = (flags & 4) && ne ? etime : NULL;
    spec.n_docs = nd;
    spec.doc_entity = nd ? doc_entity : NULL;
    spec.dim = dim;
    spec.n_vectors = n_vec;
    spec.vectors = n_vec ? vec : NULL;
    spec.doc_vector_row = (flags & 0x40) && nd ? doc_row : NULL;
    spec.metric = (flags & 0x80) ? RV_METRIC_INNER_PRODUCT : RV_METRIC_COSINE;
    unsigned fl = fzg_byte(&in);
    spec.flags = (fl & 1 ? RV_GRAPH_IMPLICIT_NODES : 0u) | (fl & 2 ? RV_GRAPH_BORROW_VECTORS : 0u);
    rv_graph *g = NULL;
    rv_status st = rv_graph_create(&spec, &g);
    RVF_CHECK((st == RV_OK) == (g != NULL));
    int known = 0;
    for (size_t i = 0; i < sizeof fzg_build_ok / sizeof fzg_build_ok[0]; i++)
        known |= st == fzg_build_ok[i];
    RVF_CHECK(known);
    if (!g) return 0;
    RVF_CHECK(rv_graph_n_edges(g) == ne && rv_graph_n_docs(g) == nd);
    RVF_CHECK(rv_graph_n_nodes(g) >= nn && rv_graph_n_nodes(g) <= nn + 2 * ne);
    /* every given id maps back to its index */
    int64_t idx[FZG_NODES];
    if (nn) {
        RVF_CHECK(rv_graph_find_nodes(g, nn, node_ids, idx) == RV_OK);
        for (size_t i = 0; i < nn; i++) RVF_CHECK(idx[i] == (int64_t)i);
    }
    fzg_walks(g, &in);
    rv_graph_free(g);
    return 0;
}
