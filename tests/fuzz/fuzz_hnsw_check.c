/*
** Fuzz target for rv_hnsw_check, the structural check that stands between
** an hnswlib graph file and hnswlib (rowvoi.index.hnsw.HNSWIndex.load).
**
** Input: one mode byte, an 11-byte description, then the graph file's
** bytes (the seeds are files hnswlib 0.8 wrote; tests/fuzz/corpus/
** hnsw_check/).  Mode bit 0 set: the description rv_hnsw_check gets is read
** from the file's own header (dim from its element layout, M, ef_construction,
** element count and capacity), so mutations get past the header and reach
** the level-0 and upper-level checks; clear: it comes from the 11 bytes
** (dim u16, M u8, ef_construction u16, element count u24, capacity u24,
** little-endian), so the header checks are fuzzed too.
**
** When the check accepts a file, an independent oracle walks it the way
** hnswlib does -- the greedy descent from the entry point through the upper
** levels, then a breadth-first walk of level 0 from there and a pass over
** every element's lists at every level -- reading each neighbour's vector,
** label and link lists exactly where hnswlib would, and asserting each
** assumption hnswlib makes without checking (a neighbour has the level it
** is linked at, counts within M or 2 M, ids below the element count).  The
** image sits at the end of libFuzzer's exact-size buffer, so AddressSanitizer
** reports any read past the file; an assumption that fails aborts.
** Replayed under ctest by tests/fuzz/replay_main.c.
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rowvoi.h"
#include "fuzz_util.h"

#define FZH_PREFIX 12u

static uint64_t fzh_u64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static uint32_t fzh_u32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static unsigned fzh_u16(const uint8_t *p) {
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}

static size_t fzh_le(const uint8_t *p, int bytes) {
    size_t v = 0;
    for (int i = 0; i < bytes; i++) v |= (size_t)p[i] << (8 * i);
    return v;
}

/* The description a header claims (mode bit 0). */
static void fzh_from_header(const uint8_t *img, size_t size, rv_hnsw_expect *e) {
    if (size < RV_HNSW_HEADER_SIZE) {
        e->dim = 1, e->M = 2, e->ef_construction = 1;
        return;
    }
    uint64_t label = fzh_u64(img + 32), data = fzh_u64(img + 40), m = fzh_u64(img + 72);
    uint64_t dim = label > data ? (label - data) / 4 : 1;
    e->dim = dim >= 1 && dim <= 65536 ? (size_t)dim : 1;
    e->M = m >= 2 && m <= RV_HNSW_MAX_M ? (size_t)m : 2;
    uint64_t efc = fzh_u64(img + 88);
    e->ef_construction = efc >= 1 && efc <= SIZE_MAX ? (size_t)efc : 1;
    e->element_count = (size_t)fzh_u64(img + 16);
    e->max_elements = (size_t)fzh_u64(img + 8);
}

/* Read a vector and a label the way hnswlib's distance and label reads do. */
static float fzh_touch(const uint8_t *img, size_t id, size_t elem, size_t dim) {
    const uint8_t *el = img + RV_HNSW_HEADER_SIZE + id * elem;
    size_t links0 = elem - 4 * dim - 8;
    float acc = 0.0f, x;
    for (size_t d = 0; d < dim; d++) {
        memcpy(&x, el + links0 + 4 * d, 4);
        acc += (x - 0.5f) * (x - 0.5f);
    }
    volatile uint64_t label = fzh_u64(el + links0 + 4 * dim);
    (void)label;
    return acc;
}

static void fzh_oracle(const uint8_t *img, size_t size, const rv_hnsw_expect *e,
                       const rv_hnsw_info *info) {
    const size_t n = e->element_count, m = e->M, dim = e->dim;
    const size_t elem = 4 + 8 * m + 4 * dim + 8, block = 4 + 4 * m;
    RVF_CHECK(info->element_count == n && info->element_size == elem);
    RVF_CHECK(info->label_offset == 4 + 8 * m + 4 * dim);
    RVF_CHECK(size >= RV_HNSW_HEADER_SIZE + n * elem);
    int32_t top;
    memcpy(&top, img + 48, 4);
    uint32_t ep = fzh_u32(img + 52);
    RVF_CHECK(info->max_level == top && info->entry_point == ep);
    if (n == 0) {
        RVF_CHECK(top == -1 && ep == UINT32_MAX);
        RVF_CHECK(size == RV_HNSW_HEADER_SIZE);
        return;
    }
    /* hnswlib's loadIndex: each element's upper-level block, in order */
    size_t *upper = malloc(n * sizeof *upper), *levels = malloc(n * sizeof *levels);
    uint32_t *queue = malloc(n * sizeof *queue);
    uint8_t *seen = calloc(n, 1);
    RVF_CHECK(upper && levels && queue && seen);
    size_t pos = RV_HNSW_HEADER_SIZE + n * elem, deleted = 0, n_upper = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t bytes = fzh_u32(img + pos);
        RVF_CHECK(bytes % block == 0);
        upper[i] = pos + 4;
        levels[i] = bytes / block;
        n_upper += levels[i] > 0;
        RVF_CHECK(levels[i] <= (size_t)top);
        pos += 4 + bytes;
        deleted += img[RV_HNSW_HEADER_SIZE + i * elem + 2] & 1u;
    }
    RVF_CHECK(pos == size);
    RVF_CHECK(info->n_deleted == deleted && info->n_upper == n_upper);
    RVF_CHECK(ep < n && levels[ep] == (size_t)top);
    /* every list of every element, as addPoint's repairs read them */
    for (size_t i = 0; i < n; i++) {
        const uint8_t *l0 = img + RV_HNSW_HEADER_SIZE + i * elem;
        unsigned cnt = fzh_u16(l0);
        RVF_CHECK(cnt <= 2 * m);
        for (unsigned j = 0; j < cnt; j++) RVF_CHECK(fzh_u32(l0 + 4 + 4 * j) < n);
        for (size_t l = 1; l <= levels[i]; l++) {
            const uint8_t *ll = img + upper[i] + (l - 1) * block;
            unsigned c = fzh_u16(ll);
            RVF_CHECK(c <= m);
            for (unsigned j = 0; j < c; j++) {
                uint32_t id = fzh_u32(ll + 4 + 4 * j);
                RVF_CHECK(id < n && levels[id] >= l);
            }
        }
    }
    /* searchKnn: greedy descent from the entry point ... */
    size_t cur = ep;
    float best = fzh_touch(img, cur, elem, dim);
    for (size_t l = (size_t)top; l >= 1; l--) {
        int moved = 1;
        for (size_t steps = 0; moved && steps < n; steps++) {
            moved = 0;
            RVF_CHECK(levels[cur] >= l);
            const uint8_t *ll = img + upper[cur] + (l - 1) * block;
            unsigned c = fzh_u16(ll);
            for (unsigned j = 0; j < c; j++) {
                uint32_t id = fzh_u32(ll + 4 + 4 * j);
                float d = fzh_touch(img, id, elem, dim);
                if (d < best) best = d, cur = id, moved = 1;
            }
        }
    }
    /* ... then level 0, breadth first from where the descent ended */
    size_t head = 0, tail = 0;
    queue[tail++] = (uint32_t)cur;
    seen[cur] = 1;
    while (head < tail) {
        const uint8_t *l0 = img + RV_HNSW_HEADER_SIZE + (size_t)queue[head++] * elem;
        unsigned cnt = fzh_u16(l0);
        for (unsigned j = 0; j < cnt; j++) {
            uint32_t id = fzh_u32(l0 + 4 + 4 * j);
            if (seen[id]) continue;
            seen[id] = 1;
            (void)fzh_touch(img, id, elem, dim);
            queue[tail++] = id;
        }
    }
    free(upper);
    free(levels);
    free(queue);
    free(seen);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < FZH_PREFIX) return 0;
    const uint8_t *img = data + FZH_PREFIX;
    const size_t n_img = size - FZH_PREFIX;
    rv_hnsw_expect e;
    rv_hnsw_expect_init(&e);
    if (data[0] & 1) {
        fzh_from_header(img, n_img, &e);
    } else {
        e.dim = 1 + fzh_le(data + 1, 2) % 64;
        e.M = 2 + data[3] % 31;
        e.ef_construction = 1 + fzh_le(data + 4, 2);
        e.element_count = fzh_le(data + 6, 3);
        e.max_elements = fzh_le(data + 9, 3);
    }
    rv_hnsw_info info;
    memset(&info, 0xAB, sizeof info);
    rv_status st = rv_hnsw_check(n_img ? img : NULL, n_img, &e, &info);
    RVF_CHECK(st == RV_OK || st == RV_E_CORRUPT || st == RV_E_NOMEM);
    if (st == RV_E_CORRUPT) RVF_CHECK(strlen(rv_errmsg()) > 0);
    if (st == RV_OK) fzh_oracle(img, n_img, &e, &info);
    /* the same bytes without the info output; an accepted file with a wrong count */
    rv_status again = rv_hnsw_check(n_img ? img : NULL, n_img, &e, NULL);
    RVF_CHECK(again == st);
    if (st == RV_OK && e.element_count < SIZE_MAX) { /* one element off: refused */
        e.element_count += 1;
        RVF_CHECK(rv_hnsw_check(n_img ? img : NULL, n_img, &e, NULL) != RV_OK);
    }
    return 0;
}
