/*
** Set cover problems: construction from CSR sets or from the row pairs of a
** key problem, the queries every solver shares, and the residual problem
** left once the free sets are taken (solve.c and lp.c solve it).
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cover_internal.h"

static rv_status rv__check_costs(const double *costs, size_t n, const char *what) {
    if (!costs) return RV_OK;
    for (size_t i = 0; i < n; i++) {
        double c = costs[i];
        if (!(c >= 0) || !isfinite(c))
            return rv__error(RV_E_INVALID_ARG,
                             "costs[%zu] = %g: every %s cost must be finite and >= 0", i, c, what);
    }
    return RV_OK;
}

static rv_status rv__cover_alloc(uint64_t n_elements, size_t n_sets, const double *costs,
                                 rv_cover **out) {
    rv_cover *p = rv__calloc(1, sizeof *p);
    if (!p) return rv__nomem("a set cover problem");
    p->n_sets = n_sets;
    p->n_elements = n_elements;
    p->nwords = RV_BITSET_WORDS(n_elements);
    p->bits = rv__calloc(n_sets ? n_sets * p->nwords : 1, sizeof(uint64_t));
    p->costs = rv__malloc((n_sets ? n_sets : 1) * sizeof(double));
    p->sizes = rv__calloc(n_sets ? n_sets : 1, sizeof(uint64_t));
    if (!p->bits || !p->costs || !p->sizes) {
        rv_cover_free(p);
        return rv__nomem("set cover bitsets");
    }
    for (size_t s = 0; s < n_sets; s++) p->costs[s] = costs ? costs[s] : 1.0;
    *out = p;
    return RV_OK;
}

/* Finish construction: set sizes and the coverable count. */
static rv_status rv__cover_finish(rv_cover *p) {
    uint64_t *uni = rv__calloc(p->nwords ? p->nwords : 1, sizeof(uint64_t));
    if (!uni) return rv__nomem("the union of all sets");
    for (size_t s = 0; s < p->n_sets; s++) {
        const uint64_t *b = RV__SET(p, s);
        p->sizes[s] = rv_bitset_count(b, p->nwords);
        for (size_t w = 0; w < p->nwords; w++) uni[w] |= b[w];
    }
    p->n_coverable = rv_bitset_count(uni, p->nwords);
    rv__free(uni);
    return RV_OK;
}

rv_status rv_cover_create(size_t n_elements, size_t n_sets, const uint64_t *offsets,
                          const uint32_t *elements, const double *costs, rv_cover **out) {
    RV__NOT_NULL(out, "out");
    *out = NULL;
    RV__NOT_NULL(offsets, "offsets");
    RV__CHECK_SIZE(n_sets, sizeof *offsets, "n_sets");
    if ((uint64_t)n_elements > RV_COVER_MAX_ELEMENTS)
        return rv__error(RV_E_RANGE, "n_elements = %zu exceeds the limit of %llu", n_elements,
                         (unsigned long long)RV_COVER_MAX_ELEMENTS);
    if (offsets[0] != 0)
        return rv__error(RV_E_INVALID_ARG, "offsets[0] must be 0, got %llu",
                         (unsigned long long)offsets[0]);
    for (size_t s = 0; s < n_sets; s++)
        if (offsets[s + 1] < offsets[s])
            return rv__error(RV_E_INVALID_ARG, "offsets decrease at set %zu", s);
    if (offsets[n_sets] > 0 && !elements)
        return rv__error(RV_E_INVALID_ARG, "elements must not be NULL");
    for (uint64_t k = 0; k < offsets[n_sets]; k++)
        if (elements[k] >= n_elements)
            return rv__error(RV_E_RANGE, "element %u is out of range (n_elements = %zu)",
                             elements[k], n_elements);
    rv_status st = rv__check_costs(costs, n_sets, "set");
    if (st) return st;

    rv_cover *p;
    if ((st = rv__cover_alloc(n_elements, n_sets, costs, &p))) return st;
    for (size_t s = 0; s < n_sets; s++) {
        uint64_t *b = RV__SET(p, s);
        for (uint64_t k = offsets[s]; k < offsets[s + 1]; k++)
            b[elements[k] >> 6] |= (uint64_t)1 << (elements[k] & 63);
    }
    if ((st = rv__cover_finish(p))) {
        rv_cover_free(p);
        return st;
    }
    *out = p;
    return RV_OK;
}

/*
** Dense codes.  Column codes may come with gaps or large values; the
** kernels want 0 .. k-1 so they can count with plain arrays.  When the
** largest code is small relative to n, a lookup table remaps in O(n);
** otherwise rows are sorted by code.  Order of first appearance is kept,
** so the remap is deterministic.
*/
static int rv__cmp_code_row(const void *a, const void *b) {
    const int64_t *x = a, *y = b;
    if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
    return (x[1] > y[1]) - (x[1] < y[1]);
}

rv_status rv__dense_codes(const int32_t *codes, size_t n, int32_t *out, uint32_t *n_distinct) {
    int32_t maxc = -1;
    for (size_t i = 0; i < n; i++) {
        if (codes[i] < 0)
            return rv__error(RV_E_INVALID_ARG, "code %d at row %zu is negative; codes must be >= 0",
                             codes[i], i);
        if (codes[i] > maxc) maxc = codes[i];
    }
    if (n == 0) {
        *n_distinct = 0;
        return RV_OK;
    }
    if ((uint64_t)maxc < 4 * (uint64_t)n + 64) {
        int32_t *map = rv__malloc(((size_t)maxc + 1) * sizeof(int32_t));
        if (!map) return rv__nomem("a code map");
        for (int32_t c = 0; c <= maxc; c++) map[c] = -1;
        int32_t next = 0;
        for (size_t i = 0; i < n; i++) {
            int32_t c = codes[i];
            if (map[c] < 0) map[c] = next++;
            out[i] = map[c];
        }
        rv__free(map);
        *n_distinct = (uint32_t)next;
        return RV_OK;
    }
    /* Sparse codes: sort (code, row) pairs; number codes by first row. */
    int64_t *pairs = rv__malloc(n * 2 * sizeof(int64_t));
    if (!pairs) return rv__nomem("a code sort buffer");
    for (size_t i = 0; i < n; i++) {
        pairs[2 * i] = codes[i];
        pairs[2 * i + 1] = (int64_t)i;
    }
    qsort(pairs, n, 2 * sizeof(int64_t), rv__cmp_code_row);
    int32_t next = 0;
    for (size_t k = 0; k < n; k++) {
        if (k > 0 && pairs[2 * k] == pairs[2 * (k - 1)])
            out[pairs[2 * k + 1]] = out[pairs[2 * (k - 1) + 1]];
        else
            out[pairs[2 * k + 1]] = next++;
    }
    rv__free(pairs);
    *n_distinct = (uint32_t)next;
    /* Renumber by first appearance so the result matches the table path. */
    int32_t *map = rv__malloc((size_t)next * sizeof(int32_t));
    if (!map) return rv__nomem("a code map");
    for (int32_t c = 0; c < next; c++) map[c] = -1;
    int32_t k2 = 0;
    for (size_t i = 0; i < n; i++) {
        if (map[out[i]] < 0) map[out[i]] = k2++;
        out[i] = map[out[i]];
    }
    rv__free(map);
    return RV_OK;
}

/* Take `take` (<= 64) bits of src starting at bit `pos`, low-aligned. */
static inline uint64_t rv__bits_get(const uint64_t *src, size_t pos, unsigned take) {
    size_t w = pos >> 6;
    unsigned b = (unsigned)(pos & 63);
    uint64_t v = src[w] >> b;
    if (b && b + take > 64) v |= src[w + 1] << (64 - b);
    if (take < 64) v &= ((uint64_t)1 << take) - 1;
    return v;
}

uint64_t rv__pair_count(size_t n_rows) {
    return n_rows < 2 ? 0 : (uint64_t)n_rows * (n_rows - 1) / 2;
}

rv_status rv_cover_create_pairs(const int32_t *codes, size_t n_rows, size_t n_cols,
                                const double *costs, uint64_t max_bytes, rv_cover **out) {
    RV__NOT_NULL(out, "out");
    *out = NULL;
    if (!codes && n_rows && n_cols) return rv__null("codes");
    RV__CHECK_SIZE2(n_rows, n_cols, sizeof *codes, "n_rows", "n_cols");
    RV__CHECK_SIZE(n_cols, sizeof *costs, "n_cols");
    uint64_t m = rv__pair_count(n_rows);
    if (max_bytes == 0) max_bytes = (uint64_t)2 << 30;
    if (m > RV_COVER_MAX_ELEMENTS)
        return rv__error(RV_E_RANGE,
                         "%zu rows give %llu row pairs, above the limit of %llu "
                         "pairs for an explicit pair universe",
                         n_rows, (unsigned long long)m, (unsigned long long)RV_COVER_MAX_ELEMENTS);
    uint64_t bytes = (uint64_t)RV_BITSET_WORDS(m) * 8 * (n_cols ? n_cols : 1);
    if (bytes > max_bytes)
        return rv__error(RV_E_RANGE,
                         "%zu rows x %zu columns need %llu bytes of pair bitsets "
                         "(%llu pairs), above the limit of %llu bytes",
                         n_rows, n_cols, (unsigned long long)bytes, (unsigned long long)m,
                         (unsigned long long)max_bytes);
    rv_status st = rv__check_costs(costs, n_cols, "column");
    if (st) return st;
    for (size_t k = 0; k < n_rows * n_cols; k++)
        if (codes[k] < 0)
            return rv__error(RV_E_INVALID_ARG, "code %d in column %zu, row %zu is negative",
                             codes[k], k / n_rows, k % n_rows);

    rv_cover *p;
    if ((st = rv__cover_alloc(m, n_cols, costs, &p))) return st;
    size_t rwords = RV_BITSET_WORDS(n_rows) + 1; /* +1: rv__bits_get reads ahead */
    int32_t *dense = rv__malloc((n_rows ? n_rows : 1) * sizeof(int32_t));
    uint64_t *rows_of = NULL;
    if (!dense) {
        rv_cover_free(p);
        return rv__nomem("dense codes");
    }
    for (size_t c = 0; c < n_cols; c++) {
        uint32_t k;
        if ((st = rv__dense_codes(codes + c * n_rows, n_rows, dense, &k))) goto fail;
        /* rows_of[v]: bitset of the rows whose code is v. */
        rv__free(rows_of);
        rows_of = rv__calloc((size_t)(k ? k : 1) * rwords, sizeof(uint64_t));
        if (!rows_of) {
            st = rv__nomem("per-value row bitsets");
            goto fail;
        }
        for (size_t r = 0; r < n_rows; r++)
            rows_of[(size_t)dense[r] * rwords + (r >> 6)] |= (uint64_t)1 << (r & 63);
        /* Row i's segment: pairs (i, j > i); bit set where codes differ,
        ** i.e. the complement of rows_of[code[i]] over j = i+1 .. n-1. */
        uint64_t *dst = RV__SET(p, c);
        uint64_t base = 0;
        for (size_t i = 0; i + 1 < n_rows; i++) {
            const uint64_t *same = rows_of + (size_t)dense[i] * rwords;
            size_t len = n_rows - i - 1, src = i + 1;
            uint64_t pos = base;
            while (len) {
                unsigned db = (unsigned)(pos & 63);
                unsigned take = 64 - db;
                if (take > len) take = (unsigned)len;
                uint64_t chunk = ~rv__bits_get(same, src, take);
                if (take < 64) chunk &= ((uint64_t)1 << take) - 1;
                dst[pos >> 6] |= chunk << db;
                pos += take;
                src += take;
                len -= take;
            }
            base += n_rows - i - 1;
        }
    }
    rv__free(rows_of);
    rv__free(dense);
    if ((st = rv__cover_finish(p))) {
        rv_cover_free(p);
        return st;
    }
    *out = p;
    return RV_OK;
fail:
    rv__free(rows_of);
    rv__free(dense);
    rv_cover_free(p);
    return st;
}

void rv_cover_free(rv_cover *p) {
    if (!p) return;
    rv__free(p->bits);
    rv__free(p->costs);
    rv__free(p->sizes);
    rv__free(p);
}

size_t rv_cover_n_sets(const rv_cover *p) {
    return p ? p->n_sets : 0;
}

uint64_t rv_cover_n_elements(const rv_cover *p) {
    return p ? p->n_elements : 0;
}

uint64_t rv_cover_n_coverable(const rv_cover *p) {
    return p ? p->n_coverable : 0;
}

rv_status rv_cover_element_counts(const rv_cover *p, uint32_t *counts) {
    RV__NOT_NULL(p, "p (the problem)");
    if (!counts && p->n_elements) return rv__null("counts");
    if (p->n_elements == 0) return RV_OK; /* counts may be NULL: memset(NULL) is UB */
    memset(counts, 0, p->n_elements * sizeof(uint32_t));
    for (size_t s = 0; s < p->n_sets; s++) {
        const uint64_t *b = RV__SET(p, s);
        for (size_t w = 0; w < p->nwords; w++) {
            uint64_t x = b[w];
            while (x) {
                counts[(w << 6) + rv__ctz64(x)]++;
                x &= x - 1;
            }
        }
    }
    return RV_OK;
}

rv_status rv_cover_covered(const rv_cover *p, const uint32_t *sel, size_t n_sel, uint8_t *mask,
                           uint64_t *n_covered) {
    RV__NOT_NULL(p, "p (the problem)");
    RV__NOT_NULL(n_covered, "n_covered");
    if (n_sel && !sel) return rv__error(RV_E_INVALID_ARG, "sel is NULL but n_sel = %zu", n_sel);
    RV__CHECK_SIZE(n_sel, sizeof *sel, "n_sel");
    for (size_t k = 0; k < n_sel; k++)
        if (sel[k] >= p->n_sets)
            return rv__error(RV_E_RANGE, "set index %u >= n_sets = %zu", sel[k], p->n_sets);
    uint64_t *acc = rv__calloc(p->nwords ? p->nwords : 1, sizeof(uint64_t));
    if (!acc) return rv__nomem("a coverage bitset");
    for (size_t k = 0; k < n_sel; k++) {
        const uint64_t *b = RV__SET(p, sel[k]);
        for (size_t w = 0; w < p->nwords; w++) acc[w] |= b[w];
    }
    *n_covered = rv_bitset_count(acc, p->nwords);
    if (mask)
        for (uint64_t e = 0; e < p->n_elements; e++)
            mask[e] = (uint8_t)((acc[e >> 6] >> (e & 63)) & 1);
    rv__free(acc);
    return RV_OK;
}

/* ------------------------------------------------------ residual problems */

/* Build the residual problem of p once the sets with is_free[s] are taken.
** paid[k] gets the original index of residual set k (*n_paid of them) and
** *free_covered the elements the free sets cover. */
rv_status rv__cover_free_residual(const rv_cover *p, const uint8_t *is_free, rv_cover **res,
                                  uint32_t *paid, size_t *n_paid, uint64_t *free_covered) {
    size_t nw = p->nwords;
    uint64_t *cov = rv__calloc(nw ? nw : 1, sizeof(uint64_t));
    uint32_t *newid = NULL;
    uint64_t *off = NULL;
    uint32_t *el = NULL;
    double *costs = NULL;
    rv_status st = RV_OK;
    if (!cov) return rv__nomem("the free sets' coverage");
    for (size_t s = 0; s < p->n_sets; s++)
        if (is_free[s])
            for (size_t w = 0; w < nw; w++) cov[w] |= RV__SET(p, s)[w];
    *free_covered = rv_bitset_count(cov, nw);
    /* elements left: renumber in order */
    uint64_t left = p->n_elements - *free_covered;
    newid = rv__malloc((p->n_elements ? p->n_elements : 1) * sizeof(uint32_t));
    if (!newid) {
        st = rv__nomem("the residual element map");
        goto out;
    }
    uint32_t next = 0;
    for (uint64_t e = 0; e < p->n_elements; e++)
        newid[e] = ((cov[e >> 6] >> (e & 63)) & 1) ? UINT32_MAX : next++;
    size_t k = 0;
    uint64_t nnz = 0;
    for (size_t s = 0; s < p->n_sets; s++) {
        if (is_free[s]) continue;
        paid[k++] = (uint32_t)s;
        const uint64_t *b = RV__SET(p, s);
        for (size_t w = 0; w < nw; w++) nnz += rv__popcount64(b[w] & ~cov[w]);
    }
    *n_paid = k;
    off = rv__malloc((k + 1) * sizeof(uint64_t));
    el = rv__malloc((nnz ? nnz : 1) * sizeof(uint32_t));
    costs = rv__malloc((k ? k : 1) * sizeof(double));
    if (!off || !el || !costs) {
        st = rv__nomem("the residual set cover problem");
        goto out;
    }
    off[0] = 0;
    uint64_t at = 0;
    for (size_t i = 0; i < k; i++) {
        const uint64_t *b = RV__SET(p, paid[i]);
        for (size_t w = 0; w < nw; w++) {
            uint64_t x = b[w] & ~cov[w];
            while (x) {
                el[at++] = newid[(w << 6) + rv__ctz64(x)];
                x &= x - 1;
            }
        }
        off[i + 1] = at;
        costs[i] = p->costs[paid[i]];
    }
    st = rv_cover_create((size_t)left, k, off, el, costs, res);
out:
    rv__free(cov);
    rv__free(newid);
    rv__free(off);
    rv__free(el);
    rv__free(costs);
    return st;
}
