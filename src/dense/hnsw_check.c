/*
** Structural check of hnswlib graph files (rowvoi/hnsw.h).
**
** Two passes over the bytes.  The first reads the header, then every
** level-0 element (link count, neighbour ids, vector) and walks the
** variable-length upper-level section once to learn each element's level
** (kept in one uint32 per element) and that the section ends exactly at the
** end of the file.  With every level known, the second walk checks the
** upper-level links: counts, ids, and that each neighbour has the level it
** is linked at -- hnswlib reads a neighbour's level-l list without asking
** whether it has one.  Every read goes through rv__at, which is given an
** offset already proven inside the buffer, and every product of two file
** fields is bounded before it is formed, so no field is trusted before it
** is checked.
*/
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../internal.h"

#define RV__H RV_HNSW_HEADER_SIZE

/* Native-order reads at an offset the caller has bounded. */
static uint64_t rv__rd64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static uint32_t rv__rd32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static unsigned rv__rd16(const uint8_t *p) {
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}

void rv_hnsw_expect_init(rv_hnsw_expect *expect) {
    if (expect) memset(expect, 0, sizeof *expect);
}

/* The header fields, read and compared with what the caller expects. */
typedef struct {
    uint64_t n, elem, label_off, data_off, m, m0;
    int32_t top;
    uint32_t entry;
} rv__hdr;

static rv_status rv__check_header(const uint8_t *b, size_t size, const rv_hnsw_expect *e,
                                  rv__hdr *h) {
    if (size < RV__H)
        return rv__error(RV_E_CORRUPT,
                         "not a valid hnswlib graph: %zu bytes, shorter than its %u-byte header",
                         size, (unsigned)RV__H);
    uint64_t off0 = rv__rd64(b), cap = rv__rd64(b + 8);
    h->n = rv__rd64(b + 16);
    h->elem = rv__rd64(b + 24);
    h->label_off = rv__rd64(b + 32);
    h->data_off = rv__rd64(b + 40);
    memcpy(&h->top, b + 48, 4);
    h->entry = rv__rd32(b + 52);
    uint64_t max_m = rv__rd64(b + 56);
    h->m0 = rv__rd64(b + 64);
    h->m = rv__rd64(b + 72);
    double mult;
    memcpy(&mult, b + 80, 8);
    uint64_t efc = rv__rd64(b + 88);

    if (off0 != 0)
        return rv__error(RV_E_CORRUPT, "header: level-0 offset %llu, expected 0",
                         (unsigned long long)off0);
    if (h->m != e->M || max_m != e->M || h->m0 != 2 * (uint64_t)e->M)
        return rv__error(RV_E_CORRUPT,
                         "header: M = %llu, maxM = %llu, maxM0 = %llu; the index description "
                         "says M = %zu (maxM = M, maxM0 = 2 M)",
                         (unsigned long long)h->m, (unsigned long long)max_m,
                         (unsigned long long)h->m0, e->M);
    const uint64_t links0 = 4 + 4 * h->m0, data = 4 * (uint64_t)e->dim;
    if (h->data_off != links0 || h->label_off != links0 + data || h->elem != links0 + data + 8)
        return rv__error(RV_E_CORRUPT,
                         "header: element layout (%llu bytes, vector at %llu, label at %llu) "
                         "is not that of dim %zu, M %zu (%llu bytes, vector at %llu, label "
                         "at %llu)",
                         (unsigned long long)h->elem, (unsigned long long)h->data_off,
                         (unsigned long long)h->label_off, e->dim, e->M,
                         (unsigned long long)(links0 + data + 8), (unsigned long long)links0,
                         (unsigned long long)(links0 + data));
    const double want_mult = 1.0 / log((double)e->M);
    if (!(fabs(mult - want_mult) <= 1e-9 * want_mult))
        return rv__error(RV_E_CORRUPT, "header: level multiplier %.17g, expected 1/ln(M) = %.17g",
                         mult, want_mult);
    const uint64_t want_efc = e->ef_construction > e->M ? e->ef_construction : e->M;
    if (efc != want_efc)
        return rv__error(RV_E_CORRUPT,
                         "header: ef_construction %llu, the index description says %llu",
                         (unsigned long long)efc, (unsigned long long)want_efc);
    if (h->n != e->element_count)
        return rv__error(RV_E_CORRUPT, "header: %llu elements, the index description says %zu",
                         (unsigned long long)h->n, e->element_count);
    if (cap != e->max_elements)
        return rv__error(RV_E_CORRUPT, "header: capacity %llu, the index description says %zu",
                         (unsigned long long)cap, e->max_elements);
    if (h->n > cap)
        return rv__error(RV_E_CORRUPT, "header: %llu elements exceed the capacity %llu",
                         (unsigned long long)h->n, (unsigned long long)cap);
    if (h->n >= UINT32_MAX) /* internal ids are uint32, ~0 is "none" */
        return rv__error(RV_E_CORRUPT, "header: %llu elements; hnswlib ids are 32-bit",
                         (unsigned long long)h->n);
    if (h->n > (size - RV__H) / h->elem)
        return rv__error(RV_E_CORRUPT,
                         "truncated: %llu elements of %llu bytes need %llu bytes after the "
                         "header, the file has %zu",
                         (unsigned long long)h->n, (unsigned long long)h->elem,
                         (unsigned long long)(h->n * h->elem), size - RV__H);
    if (h->n == 0 && (h->top != -1 || h->entry != UINT32_MAX))
        return rv__error(RV_E_CORRUPT,
                         "header: an empty graph with top level %d and entry point %lu "
                         "(expected -1 and none)",
                         (int)h->top, (unsigned long)h->entry);
    if (h->n > 0 && (h->top < 0 || h->entry >= h->n))
        return rv__error(RV_E_CORRUPT,
                         "header: entry point %lu, top level %d (the graph has %llu elements; "
                         "expected an element and a level >= 0)",
                         (unsigned long)h->entry, (int)h->top, (unsigned long long)h->n);
    return RV_OK;
}

/* Level 0 of every element: link count, neighbour ids, vector. */
static rv_status rv__check_level0(const uint8_t *b, const rv__hdr *h, size_t dim,
                                  size_t *n_deleted) {
    size_t deleted = 0;
    for (uint64_t i = 0; i < h->n; i++) {
        const uint8_t *el = b + RV__H + i * h->elem;
        unsigned cnt = rv__rd16(el);
        if (cnt > h->m0)
            return rv__error(RV_E_CORRUPT, "element %llu, level 0: %u links, at most %llu",
                             (unsigned long long)i, cnt, (unsigned long long)h->m0);
        deleted += el[2] & 1u;
        for (unsigned j = 0; j < cnt; j++) {
            uint32_t id = rv__rd32(el + 4 + 4 * (size_t)j);
            if (id >= h->n)
                return rv__error(RV_E_CORRUPT,
                                 "element %llu, level 0: neighbour id %lu is not an element "
                                 "(the graph has %llu)",
                                 (unsigned long long)i, (unsigned long)id,
                                 (unsigned long long)h->n);
        }
        const uint8_t *v = el + h->data_off;
        for (size_t d = 0; d < dim; d++) {
            uint32_t bits = rv__rd32(v + 4 * d);
            if ((bits & 0x7f800000u) == 0x7f800000u)
                return rv__error(RV_E_CORRUPT, "element %llu: vector component %zu is not finite",
                                 (unsigned long long)i, d);
        }
    }
    *n_deleted = deleted;
    return RV_OK;
}

rv_status rv_hnsw_check(const void *buf, size_t size, const rv_hnsw_expect *expect,
                        rv_hnsw_info *info) {
    RV__NOT_NULL(expect, "expect");
    if (!buf && size) return rv__error(RV_E_INVALID_ARG, "buf is NULL but size = %zu", size);
    RV__CHECK_SIZE(size, 1, "size");
    if (expect->dim < 1 || expect->dim > RV_FLAT_MAX_DIM)
        return rv__error(RV_E_INVALID_ARG, "expect->dim = %zu, must be in 1 .. %u", expect->dim,
                         (unsigned)RV_FLAT_MAX_DIM);
    if (expect->M < 2 || expect->M > RV_HNSW_MAX_M)
        return rv__error(RV_E_INVALID_ARG, "expect->M = %zu, must be in 2 .. %u", expect->M,
                         (unsigned)RV_HNSW_MAX_M);
    if (expect->ef_construction < 1)
        return rv__error(RV_E_INVALID_ARG, "expect->ef_construction must be >= 1");
    const uint8_t *b = (const uint8_t *)buf;
    rv__hdr h;
    rv_status st = rv__check_header(b, size, expect, &h);
    if (st) return st;
    size_t n_deleted = 0;
    st = rv__check_level0(b, &h, expect->dim, &n_deleted);
    if (st) return st;

    /* pass 1 over the upper levels: each element's level, the section's end */
    const uint64_t block = 4 + 4 * h.m; /* one upper level of one element */
    uint32_t *level = rv__malloc((size_t)(h.n ? h.n : 1) * sizeof *level);
    if (!level) return rv__nomem("the levels of the graph's elements");
    const uint64_t upper = RV__H + h.n * h.elem;
    uint64_t pos = upper;
    size_t n_upper = 0;
    uint32_t top_seen = 0;
    for (uint64_t i = 0; i < h.n; i++) {
        if (size - pos < 4) {
            st = rv__error(RV_E_CORRUPT, "truncated: the file ends before element %llu's links",
                           (unsigned long long)i);
            goto done;
        }
        uint32_t bytes = rv__rd32(b + pos);
        pos += 4;
        if (bytes % block) {
            st = rv__error(RV_E_CORRUPT,
                           "element %llu: upper-level links of %lu bytes, not a multiple of "
                           "one level (%llu bytes)",
                           (unsigned long long)i, (unsigned long)bytes, (unsigned long long)block);
            goto done;
        }
        if (bytes > size - pos) {
            st = rv__error(RV_E_CORRUPT,
                           "truncated: element %llu's upper-level links (%lu bytes) run past "
                           "the end of the file",
                           (unsigned long long)i, (unsigned long)bytes);
            goto done;
        }
        level[i] = (uint32_t)(bytes / block);
        if (level[i]) n_upper++;
        if (level[i] > top_seen) top_seen = level[i];
        pos += bytes;
    }
    if (pos != size) {
        st = rv__error(RV_E_CORRUPT, "%llu bytes after the last element's links",
                       (unsigned long long)(size - pos));
        goto done;
    }
    if (h.n && (top_seen > (uint32_t)h.top || level[h.entry] != (uint32_t)h.top)) {
        st = rv__error(RV_E_CORRUPT,
                       "header: top level %d, but the entry point %lu has level %lu and the "
                       "highest element level %lu",
                       (int)h.top, (unsigned long)h.entry, (unsigned long)level[h.entry],
                       (unsigned long)top_seen);
        goto done;
    }

    /* pass 2: the upper-level links, now that every level is known */
    pos = upper;
    for (uint64_t i = 0; i < h.n; i++) {
        pos += 4;
        for (uint32_t l = 1; l <= level[i]; l++, pos += block) {
            unsigned cnt = rv__rd16(b + pos);
            if (cnt > h.m) {
                st = rv__error(RV_E_CORRUPT, "element %llu, level %lu: %u links, at most %llu",
                               (unsigned long long)i, (unsigned long)l, cnt,
                               (unsigned long long)h.m);
                goto done;
            }
            for (unsigned j = 0; j < cnt; j++) {
                uint32_t id = rv__rd32(b + pos + 4 + 4 * (size_t)j);
                if (id >= h.n) {
                    st = rv__error(RV_E_CORRUPT,
                                   "element %llu, level %lu: neighbour id %lu is not an "
                                   "element (the graph has %llu)",
                                   (unsigned long long)i, (unsigned long)l, (unsigned long)id,
                                   (unsigned long long)h.n);
                    goto done;
                }
                if (level[id] < l) {
                    st = rv__error(RV_E_CORRUPT,
                                   "element %llu, level %lu: neighbour %lu has level %lu only",
                                   (unsigned long long)i, (unsigned long)l, (unsigned long)id,
                                   (unsigned long)level[id]);
                    goto done;
                }
            }
        }
    }
    if (info) {
        info->element_count = (size_t)h.n;
        info->n_deleted = n_deleted;
        info->n_upper = n_upper;
        info->max_level = h.top;
        info->entry_point = h.entry;
        info->label_offset = (size_t)h.label_off;
        info->element_size = (size_t)h.elem;
    }
done:
    rv__free(level);
    return st;
}
