/*
** rv_hnsw_check (rowvoi/hnsw.h) on graphs laid out here as hnswlib writes
** them, each defect hnswlib would follow out of bounds refused by name; and
** the load-from-descriptor functions (rv_flat_load_fd, rv_bm25_load_fd)
** with the path loaders' refusal of FIFOs and devices (a FIFO blocked them
** forever: an alarm turns a regression into a failure, not a hang).
*/
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rv_test.h"

enum { DIM = 3, M = 2, N = 6, ELEM = 4 + 8 * M + 4 * DIM + 8, BLOCK = 4 + 4 * M };

/* Element levels of the test graph: 0 is the entry point at level 2. */
static const unsigned levels[N] = {2, 1, 0, 1, 0, 0};

typedef struct {
    unsigned char *b;
    size_t size;
    size_t upper[N]; /* offset of each element's upper-level size field */
} graph;

static void put64(unsigned char *p, uint64_t v) {
    memcpy(p, &v, 8);
}
static void put32(unsigned char *p, uint32_t v) {
    memcpy(p, &v, 4);
}
static void put16(unsigned char *p, uint16_t v) {
    memcpy(p, &v, 2);
}

/* A valid graph: a ring at level 0, elements 0, 1, 3 linked at level 1,
** element 0 alone at level 2; element 4 marked deleted. */
static graph make_graph(void) {
    graph g;
    size_t upper_bytes = 0;
    for (int i = 0; i < N; i++) upper_bytes += 4 + levels[i] * BLOCK;
    g.size = RV_HNSW_HEADER_SIZE + (size_t)N * ELEM + upper_bytes;
    g.b = calloc(1, g.size);
    unsigned char *h = g.b;
    put64(h + 0, 0);
    put64(h + 8, 10); /* capacity */
    put64(h + 16, N);
    put64(h + 24, ELEM);
    put64(h + 32, 4 + 8 * M + 4 * DIM);
    put64(h + 40, 4 + 8 * M);
    int32_t top = 2;
    memcpy(h + 48, &top, 4);
    put32(h + 52, 0);
    put64(h + 56, M);
    put64(h + 64, 2 * M);
    put64(h + 72, M);
    double mult = 1.0 / log((double)M);
    memcpy(h + 80, &mult, 8);
    put64(h + 88, 20);
    for (int i = 0; i < N; i++) {
        unsigned char *el = g.b + RV_HNSW_HEADER_SIZE + (size_t)i * ELEM;
        put16(el, 2);
        if (i == 4) el[2] = 1;
        put32(el + 4, (uint32_t)((i + 1) % N));
        put32(el + 8, (uint32_t)((i + N - 1) % N));
        for (int d = 0; d < DIM; d++) {
            float x = (float)(i * DIM + d);
            memcpy(el + 4 + 8 * M + 4 * d, &x, 4);
        }
        put64(el + 4 + 8 * M + 4 * DIM, (uint64_t)(100 + i));
    }
    static const uint32_t at1[] = {0, 1, 3};
    size_t pos = RV_HNSW_HEADER_SIZE + (size_t)N * ELEM;
    for (int i = 0; i < N; i++) {
        g.upper[i] = pos;
        put32(g.b + pos, levels[i] * BLOCK);
        for (unsigned l = 1; l <= levels[i]; l++) {
            unsigned char *blk = g.b + pos + 4 + (l - 1) * BLOCK;
            if (l == 1) { /* the other two elements of level 1 */
                int k = 0;
                for (int j = 0; j < 3; j++)
                    if (at1[j] != (uint32_t)i) put32(blk + 4 + 4 * k++, at1[j]);
                put16(blk, (uint16_t)k);
            }
        }
        pos += 4 + levels[i] * BLOCK;
    }
    return g;
}

static rv_hnsw_expect expect(void) {
    rv_hnsw_expect e;
    rv_hnsw_expect_init(&e);
    e.dim = DIM, e.M = M, e.ef_construction = 20, e.element_count = N, e.max_elements = 10;
    return e;
}

static void test_a_valid_graph_is_accepted(void) {
    graph g = make_graph();
    rv_hnsw_expect e = expect();
    rv_hnsw_info info;
    ASSERT_OK(rv_hnsw_check(g.b, g.size, &e, &info));
    EXPECT_EQ(info.element_count, (size_t)N);
    EXPECT_EQ(info.n_deleted, (size_t)1);
    EXPECT_EQ(info.n_upper, (size_t)3);
    EXPECT_EQ(info.max_level, 2);
    EXPECT_EQ(info.entry_point, 0u);
    EXPECT_EQ(info.element_size, (size_t)ELEM);
    EXPECT_EQ(info.label_offset, (size_t)(4 + 8 * M + 4 * DIM));
    EXPECT_OK(rv_hnsw_check(g.b, g.size, &e, NULL)); /* info may be NULL */
    e.ef_construction = 1; /* the description now says max(1, M) = 2; the file holds 20 */
    EXPECT_STATUS(RV_E_CORRUPT, rv_hnsw_check(g.b, g.size, &e, NULL));
    EXPECT_STR_CONTAINS(rv_errmsg(), "ef_construction 20, the index description says 2");
    free(g.b);
}

static void test_an_empty_graph(void) {
    unsigned char h[RV_HNSW_HEADER_SIZE];
    graph g = make_graph();
    memcpy(h, g.b, sizeof h);
    free(g.b);
    put64(h + 16, 0);
    int32_t top = -1;
    memcpy(h + 48, &top, 4);
    put32(h + 52, UINT32_MAX);
    rv_hnsw_expect e = expect();
    e.element_count = 0;
    rv_hnsw_info info;
    ASSERT_OK(rv_hnsw_check(h, sizeof h, &e, &info));
    EXPECT_EQ(info.max_level, -1);
    EXPECT_EQ(info.entry_point, UINT32_MAX);
    put32(h + 52, 0); /* an entry point in an empty graph: addPoint would walk it */
    EXPECT_STATUS(RV_E_CORRUPT, rv_hnsw_check(h, sizeof h, &e, NULL));
    EXPECT_STR_CONTAINS(rv_errmsg(), "an empty graph with top level -1 and entry point 0");
}

/* One defect: change() applied to a fresh valid graph must be refused with
** a message containing want. */
static void refused(void (*change)(graph *), const char *want) {
    graph g = make_graph();
    change(&g);
    rv_hnsw_expect e = expect();
    EXPECT_STATUS(RV_E_CORRUPT, rv_hnsw_check(g.b, g.size, &e, NULL));
    EXPECT_STR_CONTAINS(rv_errmsg(), want);
    free(g.b);
}

static void d_entry(graph *g) {
    put32(g->b + 52, 1000000);
}
static void d_entry_low(graph *g) {
    put32(g->b + 52, 2);
}
static void d_top(graph *g) {
    int32_t top = 7;
    memcpy(g->b + 48, &top, 4);
}
static void d_top_negative(graph *g) {
    int32_t top = -3;
    memcpy(g->b + 48, &top, 4);
}
static void d_count0(graph *g) {
    put16(g->b + RV_HNSW_HEADER_SIZE + 3 * ELEM, 60000);
}
static void d_id0(graph *g) {
    put32(g->b + RV_HNSW_HEADER_SIZE + 3 * ELEM + 4, 10000000);
}
static void d_id0_capacity(graph *g) {
    put32(g->b + RV_HNSW_HEADER_SIZE + 3 * ELEM + 4, 7);
}
static void d_nan(graph *g) {
    float x = NAN;
    memcpy(g->b + RV_HNSW_HEADER_SIZE + 2 * ELEM + 4 + 8 * M + 4, &x, 4);
}
static void d_count1(graph *g) {
    put16(g->b + g->upper[1] + 4, 3);
}
static void d_id1(graph *g) {
    put32(g->b + g->upper[1] + 8, 99);
}
static void d_below(graph *g) { /* element 2 has level 0 */
    put32(g->b + g->upper[1] + 8, 2);
}
static void d_level2(graph *g) { /* level 2 list of 0 links to 1 (level 1 only) */
    put16(g->b + g->upper[0] + 4 + BLOCK, 1);
    put32(g->b + g->upper[0] + 8 + BLOCK, 1);
}
static void d_block(graph *g) {
    put32(g->b + g->upper[3], BLOCK + 4);
}
static void d_block_long(graph *g) {
    put32(g->b + g->upper[5], 50 * BLOCK);
}
static void d_trailing(graph *g) {
    g->b = realloc(g->b, g->size + 8);
    memset(g->b + g->size, 0, 8);
    g->size += 8;
}
static void d_offset0(graph *g) {
    put64(g->b, 8);
}
static void d_layout(graph *g) {
    put64(g->b + 24, ELEM + 4);
}
static void d_m(graph *g) {
    put64(g->b + 72, 3);
}
static void d_maxm0(graph *g) {
    put64(g->b + 64, 2 * M + 2);
}
static void d_mult(graph *g) {
    double mult = 1e300;
    memcpy(g->b + 80, &mult, 8);
}
static void d_count(graph *g) {
    put64(g->b + 16, N + 1);
}
static void d_capacity(graph *g) {
    put64(g->b + 8, 4);
}

static void test_each_defect_is_refused_by_name(void) {
    refused(d_entry, "entry point 1000000");
    refused(d_entry_low, "the entry point 2 has level 0");
    refused(d_top, "top level 7");
    refused(d_top_negative, "top level -3");
    refused(d_count0, "element 3, level 0: 60000 links, at most 4");
    refused(d_id0, "element 3, level 0: neighbour id 10000000 is not an element (the graph has 6)");
    refused(d_id0_capacity, "neighbour id 7 is not an element"); /* < capacity, > count */
    refused(d_nan, "element 2: vector component 1 is not finite");
    refused(d_count1, "element 1, level 1: 3 links, at most 2");
    refused(d_id1, "element 1, level 1: neighbour id 99 is not an element");
    refused(d_below, "element 1, level 1: neighbour 2 has level 0 only");
    refused(d_level2, "element 0, level 2: neighbour 1 has level 1 only");
    refused(d_block, "element 3: upper-level links of 16 bytes, not a multiple of one level");
    refused(d_block_long, "element 5's upper-level links (600 bytes) run past the end");
    refused(d_trailing, "8 bytes after the last element's links");
    refused(d_offset0, "level-0 offset 8, expected 0");
    refused(d_layout, "element layout");
    refused(d_m, "M = 3, maxM = 2, maxM0 = 4; the index description says M = 2");
    refused(d_maxm0, "maxM0 = 6");
    refused(d_mult, "level multiplier");
    refused(d_count, "header: 7 elements, the index description says 6");
    refused(d_capacity, "header: capacity 4, the index description says 10");
}

static void test_every_truncation_is_refused(void) {
    graph g = make_graph();
    rv_hnsw_expect e = expect();
    for (size_t n = 0; n < g.size; n++) {
        unsigned char *cut = malloc(n ? n : 1); /* exact size: ASan sees overreads */
        memcpy(cut, g.b, n);
        EXPECT_STATUS(RV_E_CORRUPT, rv_hnsw_check(n ? cut : NULL, n, &e, NULL));
        free(cut);
    }
    free(g.b);
}

static void test_bad_arguments(void) {
    graph g = make_graph();
    rv_hnsw_expect e = expect();
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_hnsw_check(g.b, g.size, NULL, NULL));
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_hnsw_check(NULL, 5, &e, NULL));
    e.dim = 0;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_hnsw_check(g.b, g.size, &e, NULL));
    e = expect(), e.M = 1;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_hnsw_check(g.b, g.size, &e, NULL));
    e.M = RV_HNSW_MAX_M + 1;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_hnsw_check(g.b, g.size, &e, NULL));
    e = expect(), e.ef_construction = 0;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_hnsw_check(g.b, g.size, &e, NULL));
    rv_hnsw_expect_init(NULL); /* a no-op */
    free(g.b);
}

/* ------------------------------------------------- loading from a descriptor */

static char tmpdir[256];

static void on_alarm(int sig) {
    (void)sig;
    static const char msg[] = "a loader blocked on a FIFO for 20 s\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(2);
}

static void test_fifos_and_devices_are_refused_at_once(void) {
    char fifo[300];
    snprintf(fifo, sizeof fifo, "%s/index.fifo", tmpdir);
    ASSERT_EQ(mkfifo(fifo, 0600), 0);
    signal(SIGALRM, on_alarm);
    alarm(20);
    rv_flat *f = NULL;
    rv_bm25 *b = NULL;
    EXPECT_STATUS(RV_E_IO, rv_flat_load(fifo, &f));
    EXPECT_STR_CONTAINS(rv_errmsg(), "index.fifo is a FIFO (named pipe), not a regular file");
    EXPECT_STATUS(RV_E_IO, rv_bm25_load(fifo, &b));
    EXPECT_STR_CONTAINS(rv_errmsg(), "is a FIFO (named pipe)");
    EXPECT_STATUS(RV_E_IO, rv_flat_load("/dev/null", &f));
    EXPECT_STR_CONTAINS(rv_errmsg(), "/dev/null is a character device");
    EXPECT_STATUS(RV_E_IO, rv_bm25_load(tmpdir, &b));
    EXPECT_STR_CONTAINS(rv_errmsg(), "is a directory");
    alarm(0);
    EXPECT_TRUE(f == NULL && b == NULL);
    unlink(fifo);
}

static void test_load_fd_reads_the_whole_file_from_its_start(void) {
    rv_flat_options o;
    rv_flat_options_init(&o);
    o.dim = 2;
    rv_flat *f = NULL, *back = NULL;
    ASSERT_OK(rv_flat_create(&o, &f));
    const float v[4] = {1, 0, 0, 1};
    const int64_t ids[2] = {5, 9};
    ASSERT_OK(rv_flat_add(f, 2, v, ids, NULL));
    char path[300];
    snprintf(path, sizeof path, "%s/a.rvf", tmpdir);
    ASSERT_OK(rv_flat_save(f, path));
    int fd = open(path, O_RDONLY);
    ASSERT_TRUE(fd >= 0);
    lseek(fd, 0, SEEK_END); /* the offset is neither used nor moved */
    ASSERT_OK(rv_flat_load_fd(fd, "a copy", &back));
    EXPECT_EQ(rv_flat_size(back), (size_t)2);
    EXPECT_EQ((long)lseek(fd, 0, SEEK_CUR), (long)lseek(fd, 0, SEEK_END));
    rv_bm25 *bm = NULL;
    EXPECT_STATUS(RV_E_CORRUPT, rv_bm25_load_fd(fd, "a copy", &bm)); /* not a BM25 file */
    EXPECT_STR_CONTAINS(rv_errmsg(), "a copy: ");
    rv_flat *unset = NULL;
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_flat_load_fd(-1, NULL, &unset));
    EXPECT_TRUE(unset == NULL);
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_flat_load_fd(fd, NULL, NULL));
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_bm25_load_fd(-3, NULL, &bm));
    EXPECT_STATUS(RV_E_INVALID_ARG, rv_bm25_load_fd(fd, NULL, NULL));
    close(fd);
    int dfd = open(tmpdir, O_RDONLY);
    rv_flat *none = NULL;
    EXPECT_STATUS(RV_E_IO, rv_flat_load_fd(dfd, NULL, &none));
    char want[64];
    snprintf(want, sizeof want, "file descriptor %d is a directory", dfd);
    EXPECT_STR_CONTAINS(rv_errmsg(), want);
    close(dfd);
    unlink(path);
    rv_flat_free(back);
    rv_flat_free(f);
}

int main(void) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/rv_test_hnsw_XXXXXX");
    if (!mkdtemp(tmpdir)) return 1;
    RUN_TEST(test_a_valid_graph_is_accepted);
    RUN_TEST(test_an_empty_graph);
    RUN_TEST(test_each_defect_is_refused_by_name);
    RUN_TEST(test_every_truncation_is_refused);
    RUN_TEST(test_bad_arguments);
    RUN_TEST(test_fifos_and_devices_are_refused_at_once);
    RUN_TEST(test_load_fd_reads_the_whole_file_from_its_start);
    rmdir(tmpdir);
    return RV_TEST_SUMMARY();
}
