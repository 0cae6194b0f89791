/*
** Tests of the graph's adjacency build (rv_graph_create): every path --
** the bucket sort, sources (or destinations) already in order, documents
** in entity order or not, one thread or several, recycled arrays -- gives
** exactly the lists of a naive reference (each node's edges in input
** order), and the edge cases: no edges, one node, self-loops, endpoints
** that are not nodes (the lowest edge is named), counts above the limit.
** Every case runs with the arrays copied and borrowed
** (RV_GRAPH_BORROW_ATTRS), and the sort with its slots packed and through
** its scratch array.  Vectors: the finiteness check names the first bad
** component for any thread count, and RV_GRAPH_FINITE_ROWS skips it.
*/
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rv_test.h"
#include "../../src/graph/graph_internal.h"

static unsigned tg_flags; /* spec flags of tg_build */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next_u64(void) { /* xorshift64 */
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* A random graph: ids are 0 .. n-1 plus `base`; a few hubs take a third of
** the edges (one bucket far larger than the others). */
typedef struct tgraph {
    size_t n, m, nd;
    int64_t *ids, *src, *dst, *etime, *doc_entity;
    uint16_t *etype;
} tgraph;

static void tg_free(tgraph *t) {
    free(t->ids);
    free(t->src);
    free(t->dst);
    free(t->etime);
    free(t->doc_entity);
    free(t->etype);
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* order: 0 random, 1 sources ascending, 2 destinations ascending;
** docs_sorted: documents in entity order (else shuffled, some entities
** with several). */
static void tg_make(tgraph *t, size_t n, size_t m, int64_t base, int order, int docs_sorted) {
    memset(t, 0, sizeof *t);
    t->n = n;
    t->m = m;
    t->ids = malloc((n ? n : 1) * sizeof *t->ids);
    t->src = malloc((m ? m : 1) * sizeof *t->src);
    t->dst = malloc((m ? m : 1) * sizeof *t->dst);
    t->etime = malloc((m ? m : 1) * sizeof *t->etime);
    t->etype = malloc((m ? m : 1) * sizeof *t->etype);
    for (size_t i = 0; i < n; i++) t->ids[i] = base + (int64_t)i;
    for (size_t e = 0; e < m; e++) {
        int hub = next_u64() % 3 == 0;
        size_t a = hub ? next_u64() % 3 % n : next_u64() % n, b = next_u64() % n;
        t->src[e] = (int64_t)a;
        t->dst[e] = (int64_t)b;
        t->etype[e] = (uint16_t)(next_u64() % 5);
        t->etime[e] = (int64_t)(next_u64() % 1000);
    }
    if (order) {
        int64_t *k = order == 1 ? t->src : t->dst;
        qsort(k, m, sizeof *k, cmp_i64); /* the other end stays random */
    }
    for (size_t e = 0; e < m; e++) {
        t->src[e] = t->ids[t->src[e]];
        t->dst[e] = t->ids[t->dst[e]];
    }
    size_t ne = n + m;
    t->nd = ne ? ne / 2 + 3 : 0;
    t->doc_entity = malloc((t->nd ? t->nd : 1) * sizeof *t->doc_entity);
    for (size_t d = 0; d < t->nd; d++) t->doc_entity[d] = (int64_t)(next_u64() % ne);
    if (docs_sorted) qsort(t->doc_entity, t->nd, sizeof *t->doc_entity, cmp_i64);
}

/* The spec of t's graph (no vectors, the engine's thread count). */
static void tg_spec(const tgraph *t, rv_graph_spec *s) {
    rv_graph_spec_init(s);
    s->n_nodes = t->n;
    s->node_ids = t->n ? t->ids : NULL;
    s->n_edges = t->m;
    s->edge_src = t->src;
    s->edge_dst = t->dst;
    s->edge_type = t->etype;
    s->edge_time = t->etime;
    s->n_docs = t->nd;
    s->doc_entity = t->doc_entity;
}

static rv_status tg_build(const tgraph *t, unsigned n_threads, rv_graph **g) {
    rv_graph_spec s;
    tg_spec(t, &s);
    s.n_threads = n_threads;
    s.flags = tg_flags;
    return rv_graph_create(&s, g);
}

/* Compare every listing of g with the naive reference; returns the number
** of mismatches (0 when identical). */
static size_t tg_check(const tgraph *t, const rv_graph *g) {
    size_t bad = 0, n = t->n, m = t->m, nd = t->nd;
    if (rv_graph_n_nodes(g) != n || rv_graph_n_edges(g) != m || rv_graph_n_docs(g) != nd) return 1;
    int64_t *idx = malloc((m ? m : 1) * sizeof *idx), *ids = malloc((n ? n : 1) * sizeof *ids);
    int64_t *want_e = malloc((m ? m : 1) * sizeof *want_e), *want_v = malloc((m ? m : 1) * 8);
    int64_t *got_e = malloc((m ? m : 1) * sizeof *got_e), *got_v = malloc((m ? m : 1) * 8);
    /* endpoints as node indexes */
    int64_t *si = malloc((m ? m : 1) * sizeof *si), *di = malloc((m ? m : 1) * sizeof *di);
    if (m && rv_graph_find_nodes(g, m, t->src, si) != RV_OK) bad++;
    if (m && rv_graph_find_nodes(g, m, t->dst, di) != RV_OK) bad++;
    for (size_t e = 0; e < m; e++) bad += (size_t)(si[e] < 0 || di[e] < 0);
    for (size_t e = 0; e < m; e++) idx[e] = (int64_t)e;
    int64_t *es = malloc((m ? m : 1) * sizeof *es), *ed = malloc((m ? m : 1) * sizeof *ed);
    int64_t *et = malloc((m ? m : 1) * sizeof *et);
    int32_t *ety = malloc((m ? m : 1) * sizeof *ety);
    if (m && rv_graph_edges(g, m, idx, es, ed, ety, et) != RV_OK) bad++;
    for (size_t e = 0; e < m; e++)
        bad += (size_t)(es[e] != si[e] || ed[e] != di[e] || ety[e] != t->etype[e] ||
                        et[e] != t->etime[e]);
    size_t nids;
    if (rv_graph_node_ids(g, ids, n, &nids) != RV_OK || nids != n) bad++;
    for (size_t i = 0; i < n; i++) bad += (size_t)(ids[i] != t->ids[i]);
    /* reference lists: per node, a chain of its edges appended in input order */
    size_t *head = malloc((n ? n : 1) * 2 * sizeof *head), *tail = head + n;
    size_t *next = malloc((m ? m : 1) * 2 * sizeof *next);
    for (int side = 0; side < 2; side++) {
        for (size_t v = 0; v < n; v++) head[v] = tail[v] = SIZE_MAX;
        for (size_t e = 0; e < m; e++) {
            size_t v = (size_t)(side ? di[e] : si[e]);
            next[e] = SIZE_MAX;
            if (head[v] == SIZE_MAX)
                head[v] = e;
            else
                next[tail[v]] = e;
            tail[v] = e;
        }
        for (size_t v = 0; v < n; v++) {
            size_t k = 0, got;
            for (size_t e = head[v]; e != SIZE_MAX; e = next[e]) {
                want_e[k] = (int64_t)e;
                want_v[k++] = side ? si[e] : di[e];
            }
            if (rv_graph_neighbours(g, (int64_t)v, side ? RV_GRAPH_IN : RV_GRAPH_OUT, -1, NULL,
                                    got_e, got_v, m, &got) != RV_OK ||
                got != k) {
                bad++;
                continue;
            }
            for (size_t i = 0; i < k; i++)
                bad += (size_t)(got_e[i] != want_e[i] || got_v[i] != want_v[i]);
        }
    }
    /* documents: each entity's in document order, and the most on one */
    size_t ne = n + m, most = 0;
    int64_t *dbuf = malloc((nd ? nd : 1) * sizeof *dbuf), *cnt = calloc(ne + 1, sizeof *cnt);
    int64_t *start = malloc((ne + 1) * sizeof *start), *want_d = malloc((nd ? nd : 1) * 8);
    for (size_t d = 0; d < nd; d++) cnt[t->doc_entity[d]]++;
    for (size_t x = 0, at = 0; x < ne; x++) {
        start[x] = (int64_t)at;
        at += (size_t)cnt[x];
        if ((size_t)cnt[x] > most) most = (size_t)cnt[x];
        cnt[x] = 0;
    }
    for (size_t d = 0; d < nd; d++) {
        int64_t x = t->doc_entity[d];
        want_d[start[x] + cnt[x]++] = (int64_t)d;
    }
    for (size_t x = 0; x < ne; x++) {
        int64_t ent = (int64_t)x;
        size_t got;
        if (rv_graph_entity_docs(g, 1, &ent, dbuf, nd, &got) != RV_OK || got != (size_t)cnt[x]) {
            bad++;
            continue;
        }
        for (size_t i = 0; i < got; i++) bad += (size_t)(dbuf[i] != want_d[start[x] + i]);
    }
    bad += (size_t)(rv_graph_max_entity_docs(g) != most);
    free(idx);
    free(ids);
    free(want_e);
    free(want_v);
    free(got_e);
    free(got_v);
    free(si);
    free(di);
    free(es);
    free(ed);
    free(et);
    free(ety);
    free(dbuf);
    free(cnt);
    free(start);
    free(want_d);
    free(head);
    free(next);
    return bad;
}

static void check_case(size_t n, size_t m, int64_t base, int order, int docs_sorted) {
    tgraph t;
    tg_make(&t, n, m, base, order, docs_sorted);
    for (int v = 0; v < 6; v++) {
        tg_flags = v & 1 ? RV_GRAPH_BORROW_ATTRS : 0u;
        /* packed slots, the uint16 scratch, packed slots over many epochs */
        rv__graph_test_scratch = v >> 1 == 1;
        rv__graph_test_epoch_bits = v >> 1 == 2 ? 5u : 0u;
        for (unsigned nt = 1; nt <= 4; nt++) {
            rv_graph *g = NULL;
            EXPECT_OK(tg_build(&t, nt, &g));
            if (g) EXPECT_EQ(tg_check(&t, g), 0);
            rv_graph_free(g);
        }
    }
    tg_flags = 0;
    rv__graph_test_scratch = 0;
    rv__graph_test_epoch_bits = 0;
    tg_free(&t);
}

/* Many buckets (1024 nodes each), a hub, every order and thread count,
** ids that are indexes and ids that are not. */
static void test_paths_match_reference(void) {
    for (int order = 0; order < 3; order++)
        for (int ds = 0; ds < 2; ds++) {
            check_case(9000, 20000, 0, order, ds);
            check_case(9000, 20000, 1000000007, order, ds);
        }
    check_case(5, 40, 0, 0, 0); /* one bucket, repeated edges */
    check_case(5, 40, 0, 1, 1);
}

/* Sources and destinations both ascending: nothing to sort either way. */
static void test_both_in_order(void) {
    int64_t ids[4] = {0, 1, 2, 3}, src[6] = {0, 0, 1, 1, 2, 3}, dst[6] = {0, 1, 1, 2, 2, 3};
    rv_graph_spec s;
    rv_graph_spec_init(&s);
    s.n_nodes = 4;
    s.node_ids = ids;
    s.n_edges = 6;
    s.edge_src = src;
    s.edge_dst = dst;
    rv_graph *g = NULL;
    ASSERT_OK(rv_graph_create(&s, &g));
    int64_t e[6], v[6];
    size_t k;
    ASSERT_OK(rv_graph_neighbours(g, 1, RV_GRAPH_BOTH, -1, NULL, e, v, 6, &k));
    ASSERT_EQ(k, 4); /* out e2 (1->1), e3 (1->2); in e1 (0->1), e2 (loop) */
    EXPECT_EQ(e[0], 2);
    EXPECT_EQ(v[0], 1);
    EXPECT_EQ(e[1], 3);
    EXPECT_EQ(v[1], 2);
    EXPECT_EQ(e[2], 1);
    EXPECT_EQ(v[2], 0);
    EXPECT_EQ(e[3], 2);
    EXPECT_EQ(v[3], 1);
    rv_graph_free(g);
}

static void test_edge_cases(void) {
    check_case(0, 0, 0, 0, 1);  /* empty graph */
    check_case(1, 0, 0, 0, 1);  /* one node, no edges */
    check_case(1, 7, 0, 0, 0);  /* one node, self-loops only */
    check_case(1, 7, 42, 1, 1); /* the same with an id that is not its index */
    check_case(3000, 0, 0, 0, 0);
    /* counts beyond the limit are refused before anything is read */
    rv_graph_spec s;
    rv_graph_spec_init(&s);
    int64_t one = 0;
    s.n_nodes = 1;
    s.node_ids = &one;
    s.n_edges = (size_t)RV_GRAPH_MAX_ITEMS + 1;
    s.edge_src = &one;
    s.edge_dst = &one;
    rv_graph *g = (rv_graph *)1;
    EXPECT_STATUS(RV_E_RANGE, rv_graph_create(&s, &g));
    EXPECT_TRUE(g == NULL);
    EXPECT_STR_CONTAINS(rv_errmsg(), "more than 4294967294");
    s.n_edges = 0;
    s.n_nodes = (size_t)1 << 32;
    EXPECT_STATUS(RV_E_RANGE, rv_graph_create(&s, &g));
    s.n_nodes = 1;
    s.n_docs = (size_t)RV_GRAPH_MAX_ITEMS + 1;
    s.doc_entity = &one;
    EXPECT_STATUS(RV_E_RANGE, rv_graph_create(&s, &g));
}

/* An endpoint that is not a node: the error names the lowest such edge,
** whichever worker found it. */
static void test_bad_endpoint_named(void) {
    for (int64_t base = 0; base <= 500; base += 500) {
        tgraph t;
        tg_make(&t, 1000, 200000, base, 0, 1);
        t.dst[150000] = base + 5000;
        t.src[190000] = base - 1;
        for (unsigned nt = 1; nt <= 3; nt++) {
            rv_graph *g = (rv_graph *)1;
            EXPECT_STATUS(RV_E_RANGE, tg_build(&t, nt, &g));
            EXPECT_TRUE(g == NULL);
            EXPECT_STR_CONTAINS(rv_errmsg(), "edge_dst[150000]");
        }
        tg_flags = RV_GRAPH_BORROW_ATTRS; /* ends read in place: checked all the same */
        for (unsigned nt = 1; nt <= 3; nt++) {
            rv_graph *g = (rv_graph *)1;
            EXPECT_STATUS(RV_E_RANGE, tg_build(&t, nt, &g));
            EXPECT_TRUE(g == NULL);
            EXPECT_STR_CONTAINS(rv_errmsg(), "edge_dst[150000]");
        }
        tg_flags = 0;
        t.src[150000] = base + 7000;
        rv_graph *g = NULL;
        EXPECT_STATUS(RV_E_RANGE, tg_build(&t, 2, &g));
        EXPECT_STR_CONTAINS(rv_errmsg(), "edge_src[150000]");
        t.nd = 2;
        t.doc_entity[1] = -3;
        t.src[150000] = t.dst[150000] = t.src[190000] = base;
        EXPECT_STATUS(RV_E_INVALID_ARG, tg_build(&t, 2, &g));
        EXPECT_STR_CONTAINS(rv_errmsg(), "doc_entity[1] = -3");
        tg_free(&t);
    }
}

/* Arrays kept by rv_graph_free come back dirty in the next build: it must
** not show.  Sizes above the 1 MiB recycling threshold. */
static void test_recycled_arrays(void) {
    tgraph a, b;
    tg_make(&a, 70000, 400000, 0, 0, 1);
    tg_make(&b, 70000, 400000, 0, 0, 0);
    for (int r = 0; r < 3; r++) {
        rv_graph *g = NULL;
        const tgraph *t = r == 1 ? &b : &a;
        ASSERT_OK(tg_build(t, r == 2 ? 1 : 2, &g));
        EXPECT_EQ(tg_check(t, g), 0);
        rv_graph_free(g);
    }
    rv_graph_trim();
    rv_graph_trim(); /* nothing left: a no-op */
    tg_free(&a);
    tg_free(&b);
}

/* Several threads building and freeing at once share the kept arrays
** (run under ThreadSanitizer in CI's sanitizer tier). */
static tgraph shared_graph;
static void *hammer(void *arg) {
    size_t *bad = (size_t *)arg;
    double end = now_s() + 1.5;
    while (now_s() < end) {
        rv_graph *g = NULL;
        if (tg_build(&shared_graph, 2, &g) != RV_OK) {
            (*bad)++;
            continue;
        }
        int64_t e[1] = {-1};
        size_t k = 0, first = 0;
        /* spot check: node 3's first out-edge is its first in input order */
        rv_status st = rv_graph_neighbours(g, 3, RV_GRAPH_OUT, -1, NULL, e, NULL, 1, &k);
        while (first < shared_graph.m && shared_graph.src[first] != 3) first++;
        if (st != RV_OK && st != RV_E_SHAPE) (*bad)++;
        if ((k > 0) != (first < shared_graph.m) || (k && e[0] != (int64_t)first)) (*bad)++;
        rv_graph_free(g);
    }
    return NULL;
}

static void test_concurrent_builds(void) {
    tg_make(&shared_graph, 50000, 300000, 0, 0, 1);
    pthread_t th[3];
    size_t bad[3] = {0, 0, 0};
    for (int i = 0; i < 3; i++) ASSERT_EQ(pthread_create(&th[i], NULL, hammer, &bad[i]), 0);
    for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < 3; i++) EXPECT_EQ(bad[i], 0);
    rv_graph *g = NULL;
    ASSERT_OK(tg_build(&shared_graph, 0, &g));
    EXPECT_EQ(tg_check(&shared_graph, g), 0);
    rv_graph_free(g);
    rv_graph_trim();
    tg_free(&shared_graph);
}

/* Documents in entity order with long runs (the block index's binary
** search) and entities without documents, against the reference. */
static void test_doc_runs(void) {
    tgraph t;
    tg_make(&t, 500, 3000, 0, 0, 1);
    size_t ne = t.n + t.m, nd = 0;
    for (size_t x = 0; x < ne; x++) nd += x % 37 == 0 ? 40 : x % 3;
    free(t.doc_entity);
    t.doc_entity = malloc(nd * sizeof *t.doc_entity);
    t.nd = 0;
    for (size_t x = 0; x < ne; x++)
        for (size_t k = 0; k < (x % 37 == 0 ? 40 : x % 3); k++) t.doc_entity[t.nd++] = (int64_t)x;
    for (unsigned v = 0; v < 4; v++) {
        tg_flags = v & 1 ? RV_GRAPH_BORROW_ATTRS : 0u;
        rv_graph *g = NULL;
        ASSERT_OK(tg_build(&t, 1 + v / 2, &g));
        EXPECT_EQ(tg_check(&t, g), 0);
        EXPECT_EQ(rv_graph_max_entity_docs(g), 40);
        rv_graph_free(g);
    }
    /* one run across the two halves of the scan; then halves each in
    ** order but not across (the counting sort) */
    for (int shape = 0; shape < 2; shape++) {
        t.nd = 1001;
        for (size_t d = 0; d < t.nd; d++) t.doc_entity[d] = shape ? (int64_t)((d + 500) % t.nd) : 7;
        for (unsigned v = 0; v < 4; v++) {
            tg_flags = v & 1 ? RV_GRAPH_BORROW_ATTRS : 0u;
            rv_graph *g = NULL;
            ASSERT_OK(tg_build(&t, 1 + v / 2, &g));
            EXPECT_EQ(tg_check(&t, g), 0);
            EXPECT_EQ(rv_graph_max_entity_docs(g), shape ? 1 : 1001);
            rv_graph_free(g);
        }
    }
    tg_flags = 0;
    tg_free(&t);
}

/* Vectors: a NaN or an infinity is named (the first in row order, for any
** thread count), by rv_graph_check_vectors and by the build unless
** RV_GRAPH_FINITE_ROWS says the caller checked them. */
/* Whole-graph top-k scans in blocks, one per worker, closed up after: any
** thread count gives the serial answer (documents, nodes, edges, entities,
** with and without a window), and that answer is every document's score
** (rv_graph_score_docs) ranked by score, then lower index.  Vector
** components from {-1, 0, 1, 2} make many equal scores. */
typedef struct tk_ref {
    float s;
    int64_t d;
} tk_ref;

static int tk_cmp(const void *pa, const void *pb) {
    const tk_ref *a = pa, *b = pb;
    if (a->s != b->s) return a->s > b->s ? -1 : 1;
    return (a->d > b->d) - (a->d < b->d);
}

static void test_top_k_threads(void) {
    tgraph t;
    tg_make(&t, 3000, 9000, 0, 0, 1);
    uint32_t dim = 8;
    float *vec = malloc(t.nd * dim * sizeof *vec);
    for (size_t i = 0; i < t.nd * dim; i++) vec[i] = (float)((int)(next_u64() % 4) - 1);
    for (size_t d = 0; d < t.nd; d++) vec[d * dim] = 1; /* no zero rows */
    rv_graph_spec s;
    tg_spec(&t, &s);
    s.dim = dim;
    s.n_vectors = t.nd;
    s.vectors = vec;
    rv_graph *g = NULL;
    ASSERT_OK(rv_graph_create(&s, &g));
    float q[8] = {1, 2, 0, -1, 1, 0, 2, 1};
    size_t cap = t.nd, k = 40, n1, n;
    int64_t *want = malloc(cap * sizeof *want), *got = malloc(cap * sizeof *got);
    float *ws = malloc(cap * sizeof *ws), *gs = malloc(cap * sizeof *gs);
    int64_t window[2] = {200, 700};
    int kinds[4] = {0, RV_GRAPH_NODES, RV_GRAPH_EDGES, RV_GRAPH_ENTITIES};
    /* the top 40, and every item (the whole ranking compared) */
    for (int w = 0; w < 4; w++) {
        size_t kk = w & 2 ? t.n + t.m + 1 : k;
        for (int ki = 0; ki < 4; ki++) {
            const int64_t *win = w & 1 ? window : NULL;
            rv__graph_test_topk_threads = 1;
            ASSERT_OK(rv_graph_top_k(g, kinds[ki], q, kk, win, want, ws, cap, &n1));
            EXPECT_TRUE(n1 >= k);
            for (int ti = 0; ti < 3; ti++) {
                rv__graph_test_topk_threads = (unsigned[]){2, 3, 9}[ti];
                ASSERT_OK(rv_graph_top_k(g, kinds[ki], q, kk, win, got, gs, cap, &n));
                ASSERT_EQ(n, n1);
                size_t diff = 0;
                for (size_t i = 0; i < n; i++) diff += (got[i] != want[i]) + (gs[i] != ws[i]);
                EXPECT_EQ(diff, 0);
            }
        }
    }
    /* the documents' answer, from the scores of every document */
    rv__graph_test_topk_threads = 3;
    ASSERT_OK(rv_graph_top_k(g, 0, q, k, NULL, got, gs, cap, &n));
    ASSERT_EQ(n, k);
    int64_t *all = malloc(t.nd * sizeof *all);
    float *sc = malloc(t.nd * sizeof *sc);
    tk_ref *ref = malloc(t.nd * sizeof *ref);
    for (size_t d = 0; d < t.nd; d++) all[d] = (int64_t)d;
    ASSERT_OK(rv_graph_score_docs(g, q, t.nd, all, sc));
    size_t ties = 0;
    for (size_t d = 0; d < t.nd; d++) ref[d] = (tk_ref){sc[d], (int64_t)d};
    qsort(ref, t.nd, sizeof *ref, tk_cmp);
    for (size_t i = 0; i < k; i++) {
        EXPECT_EQ(got[i], ref[i].d);
        EXPECT_TRUE(gs[i] == ref[i].s);
        ties += i && ref[i].s == ref[i - 1].s;
    }
    EXPECT_TRUE(ties > 0); /* (the order of equal scores was tested) */
    rv__graph_test_topk_threads = 0;
    rv_graph_free(g);
    free(all);
    free(sc);
    free(ref);
    free(want);
    free(got);
    free(ws);
    free(gs);
    free(vec);
    tg_free(&t);
}

static void test_vectors_finite(void) {
    size_t n = 40000, dim = 8;
    float *v = malloc(n * dim * sizeof *v);
    for (size_t i = 0; i < n * dim; i++) v[i] = (float)(i % 7) - 3.0f;
    int64_t node = 0, *de = malloc(n * sizeof *de);
    for (size_t d = 0; d < n; d++) de[d] = 0;
    rv_graph_spec s;
    rv_graph_spec_init(&s);
    s.n_nodes = 1;
    s.node_ids = &node;
    s.n_docs = n;
    s.doc_entity = de;
    s.dim = (uint32_t)dim;
    s.n_vectors = n;
    s.vectors = v;
    s.metric = RV_METRIC_INNER_PRODUCT;
    rv_graph *g = NULL;
    for (unsigned nt = 0; nt <= 3; nt++) EXPECT_OK(rv_graph_check_vectors(v, n, 8, nt));
    ASSERT_OK(rv_graph_create(&s, &g));
    rv_graph_free(g);
    v[39000 * dim + 2] = INFINITY;
    v[30001 * dim + 5] = NAN;
    for (unsigned nt = 0; nt <= 3; nt++) {
        EXPECT_STATUS(RV_E_INVALID_ARG, rv_graph_check_vectors(v, n, 8, nt));
        EXPECT_STR_CONTAINS(rv_errmsg(), "vectors[30001][5] = nan: vectors must be finite");
        s.n_threads = nt;
        g = (rv_graph *)1;
        EXPECT_STATUS(RV_E_INVALID_ARG, rv_graph_create(&s, &g));
        EXPECT_TRUE(g == NULL);
        EXPECT_STR_CONTAINS(rv_errmsg(), "vectors[30001][5] = nan");
    }
    v[30001 * dim + 5] = 1.0f;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_graph_check_vectors(v, n, 8, 2));
    EXPECT_STR_CONTAINS(rv_errmsg(), "vectors[39000][2] = inf");
    /* the caller vouches for them: the build does not look */
    s.flags = RV_GRAPH_FINITE_ROWS | RV_GRAPH_BORROW_VECTORS;
    ASSERT_OK(rv_graph_create(&s, &g));
    rv_graph_free(g);
    EXPECT_OK(rv_graph_check_vectors(NULL, 0, 8, 0));
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_graph_check_vectors(NULL, 1, 8, 0));
    EXPECT_STATUS(RV_E_RANGE, rv_graph_check_vectors(v, n, 0, 0));
    free(v);
    free(de);
}

int main(void) {
    RUN_TEST(test_paths_match_reference);
    RUN_TEST(test_doc_runs);
    RUN_TEST(test_vectors_finite);
    RUN_TEST(test_top_k_threads);
    RUN_TEST(test_both_in_order);
    RUN_TEST(test_edge_cases);
    RUN_TEST(test_bad_endpoint_named);
    RUN_TEST(test_recycled_arrays);
    RUN_TEST(test_concurrent_builds);
    return RV_TEST_SUMMARY();
}
