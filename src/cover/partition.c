/*
** Key paths by partition refinement.
**
** The rows that agree on every chosen column form groups; a pair is
** unresolved exactly when both rows sit in one group, so the unresolved
** pairs are the sum over groups of C(size, 2) and never need to be listed.
** Rows are kept in `perm`, grouped into contiguous segments; groups of one
** row are dropped as soon as they appear, so later steps only touch rows
** that are still ambiguous.  Scoring a column over a segment counts its
** codes with a scratch array indexed by code and a list of touched codes,
** so one step costs O(active rows) per column with no hashing.
*/
#include <math.h>
#include <string.h>

#include "cover_internal.h"

typedef struct rv__seg {
    size_t start, len;
} rv__seg;

static uint64_t rv__c2(uint64_t n) {
    return n < 2 ? 0 : n * (n - 1) / 2;
}

static double rv__nlog2n(uint64_t n) {
    return n < 2 ? 0.0 : (double)n * log2((double)n);
}

/* Dense copies of the columns whose codes are not already 0 .. n-1-ish. */
typedef struct rv__cols {
    const int32_t **col; /* n_cols pointers to n_rows dense codes */
    uint32_t *card;      /* codes of column c are < card[c] */
    int32_t **owned;     /* copies we made (NULL where borrowed) */
    size_t n_cols;
} rv__cols;

static void rv__cols_free(rv__cols *c) {
    if (c->owned)
        for (size_t i = 0; i < c->n_cols; i++) rv__free(c->owned[i]);
    rv__free(c->owned);
    rv__free((void *)c->col);
    rv__free(c->card);
    memset(c, 0, sizeof *c);
}

/* colptr(j): column j of codes, either a block of a column-major matrix
** (sel == NULL) or the selected column sel[j]. */
static rv_status rv__cols_init(rv__cols *c, const int32_t *codes, const uint32_t *sel,
                               size_t n_rows, size_t n_cols) {
    memset(c, 0, sizeof *c);
    c->n_cols = n_cols;
    c->col = rv__calloc(n_cols ? n_cols : 1, sizeof(int32_t *));
    c->card = rv__calloc(n_cols ? n_cols : 1, sizeof(uint32_t));
    c->owned = rv__calloc(n_cols ? n_cols : 1, sizeof(int32_t *));
    if (!c->col || !c->card || !c->owned) {
        rv__cols_free(c);
        return rv__nomem("column tables");
    }
    for (size_t j = 0; j < n_cols; j++) {
        const int32_t *src = codes + (size_t)(sel ? sel[j] : j) * n_rows;
        int32_t maxc = -1;
        for (size_t r = 0; r < n_rows; r++) {
            if (src[r] < 0) {
                rv__cols_free(c);
                return rv__error(RV_E_INVALID_ARG, "code %d in column %zu, row %zu is negative",
                                 src[r], j, r);
            }
            if (src[r] > maxc) maxc = src[r];
        }
        if ((uint64_t)maxc < 2 * (uint64_t)n_rows + 64) {
            c->col[j] = src;
            c->card[j] = (uint32_t)(maxc + 1);
            continue;
        }
        int32_t *d = rv__malloc(n_rows * sizeof(int32_t));
        if (!d) {
            rv__cols_free(c);
            return rv__nomem("dense codes");
        }
        uint32_t k;
        rv_status st = rv__dense_codes(src, n_rows, d, &k);
        if (st) {
            rv__free(d);
            rv__cols_free(c);
            return st;
        }
        c->owned[j] = d;
        c->col[j] = d;
        c->card[j] = k;
    }
    return RV_OK;
}

/* Count the codes of `rows` into cnt (which must be zero there); list each
** distinct code once in touched, in order of first appearance.  Returns how
** many distinct codes there are.  The caller resets cnt afterwards. */
static inline size_t rv__count_codes(const int32_t *code, const uint32_t *rows, size_t len,
                                     uint32_t *cnt, uint32_t *touched) {
    size_t nt = 0;
    for (size_t i = 0; i < len; i++) {
        int32_t v = code[rows[i]];
        if (cnt[v]++ == 0) touched[nt++] = (uint32_t)v;
    }
    return nt;
}

/* Pairs resolved and entropy drop (times n_rows, in bits) if the current
** segments were split by column `code`. */
static void rv__score(const int32_t *code, const uint32_t *perm, const rv__seg *segs, size_t n_segs,
                      uint32_t *cnt, uint32_t *touched, uint64_t *resolved, double *ent) {
    uint64_t res = 0;
    double e = 0;
    for (size_t g = 0; g < n_segs; g++) {
        const uint32_t *rows = perm + segs[g].start;
        size_t len = segs[g].len, nt = rv__count_codes(code, rows, len, cnt, touched);
        uint64_t same = 0;
        double sub = 0;
        for (size_t t = 0; t < nt; t++) {
            uint32_t c = cnt[touched[t]];
            same += rv__c2(c);
            if (ent) sub += rv__nlog2n(c);
            cnt[touched[t]] = 0;
        }
        res += rv__c2(len) - same;
        if (ent) e += rv__nlog2n(len) - sub;
    }
    *resolved = res;
    if (ent) *ent = e;
}

/*
** Split every segment by `code` with a counting sort; keep only the new
** groups of two or more rows (order of first appearance).  Swaps the
** buffers so *perm / *segs hold the result; returns the new segment count.
*/
static size_t rv__refine(const int32_t *code, uint32_t **perm_p, uint32_t **perm2_p,
                         rv__seg **segs_p, rv__seg **segs2_p, size_t n_segs, uint32_t *cnt,
                         uint32_t *touched, uint32_t *offs) {
    uint32_t *perm = *perm_p, *perm2 = *perm2_p;
    rv__seg *segs = *segs_p, *segs2 = *segs2_p;
    size_t out = 0, n2 = 0;
    for (size_t g = 0; g < n_segs; g++) {
        const uint32_t *rows = perm + segs[g].start;
        size_t len = segs[g].len, nt = rv__count_codes(code, rows, len, cnt, touched);
        size_t pos = out;
        for (size_t t = 0; t < nt; t++) {
            uint32_t v = touched[t], c = cnt[v];
            if (c >= 2) {
                offs[v] = (uint32_t)pos;
                segs2[n2].start = pos;
                segs2[n2].len = c;
                n2++;
                pos += c;
            } else {
                offs[v] = UINT32_MAX;
            }
        }
        for (size_t i = 0; i < len; i++) {
            int32_t v = code[rows[i]];
            if (offs[v] != UINT32_MAX) perm2[offs[v]++] = rows[i];
        }
        for (size_t t = 0; t < nt; t++) cnt[touched[t]] = 0;
        out = pos;
    }
    *perm_p = perm2;
    *perm2_p = perm;
    *segs_p = segs2;
    *segs2_p = segs;
    return n2;
}

/* The partition being refined, and the counting scratch. */
typedef struct rv__part {
    uint32_t *perm, *perm2; /* rows of the active segments, and a spare */
    rv__seg *segs, *segs2;  /* active segments (groups of >= 2 rows) */
    size_t n_segs;
    uint32_t *cnt, *touched, *offs; /* per-code scratch of maxcard entries */
} rv__part;

static void rv__part_free(rv__part *pt) {
    rv__free(pt->perm);
    rv__free(pt->perm2);
    rv__free(pt->segs);
    rv__free(pt->segs2);
    rv__free(pt->cnt);
    rv__free(pt->touched);
    rv__free(pt->offs);
    memset(pt, 0, sizeof *pt);
}

/* All rows in one group; scratch for codes below the largest card. */
static rv_status rv__part_init(rv__part *pt, const rv__cols *cols, size_t n_rows) {
    memset(pt, 0, sizeof *pt);
    uint32_t maxcard = 1;
    for (size_t j = 0; j < cols->n_cols; j++)
        if (cols->card[j] > maxcard) maxcard = cols->card[j];
    pt->perm = rv__malloc((n_rows ? n_rows : 1) * sizeof(uint32_t));
    pt->perm2 = rv__malloc((n_rows ? n_rows : 1) * sizeof(uint32_t));
    pt->segs = rv__malloc((n_rows / 2 + 1) * sizeof(rv__seg));
    pt->segs2 = rv__malloc((n_rows / 2 + 1) * sizeof(rv__seg));
    pt->cnt = rv__calloc(maxcard, sizeof(uint32_t));
    pt->touched = rv__malloc((size_t)maxcard * sizeof(uint32_t));
    pt->offs = rv__malloc((size_t)maxcard * sizeof(uint32_t));
    if (!pt->perm || !pt->perm2 || !pt->segs || !pt->segs2 || !pt->cnt || !pt->touched ||
        !pt->offs) {
        rv__part_free(pt);
        return rv__nomem("partition refinement arrays");
    }
    for (size_t r = 0; r < n_rows; r++) pt->perm[r] = (uint32_t)r;
    if (n_rows >= 2) {
        pt->segs[0].start = 0;
        pt->segs[0].len = n_rows;
        pt->n_segs = 1;
    }
    return RV_OK;
}

static void rv__part_refine(rv__part *pt, const int32_t *code) {
    pt->n_segs = rv__refine(code, &pt->perm, &pt->perm2, &pt->segs, &pt->segs2, pt->n_segs, pt->cnt,
                            pt->touched, pt->offs);
}

rv_status rv_keys_plan_path(const int32_t *codes, size_t n_rows, size_t n_cols, const double *costs,
                            rv_path_objective objective, uint64_t stop_unresolved,
                            rv_progress_fn progress, void *progress_ctx, uint32_t *order,
                            uint64_t *newly_resolved, double *gain, size_t capacity,
                            size_t *n_steps, uint64_t *unresolved) {
    if (n_steps) *n_steps = 0;
    RV__NOT_NULL(n_steps, "n_steps");
    RV__NOT_NULL(unresolved, "unresolved");
    RV__NOT_NULL(order, "order");
    RV__NOT_NULL(newly_resolved, "newly_resolved");
    if (!codes && n_rows && n_cols) return rv__null("codes");
    RV__CHECK_SIZE2(n_rows, n_cols, sizeof *codes, "n_rows", "n_cols");
    RV__CHECK_SIZE(n_cols, sizeof *newly_resolved, "n_cols");
    RV__CHECK_SIZE(capacity, sizeof *newly_resolved, "capacity");
    if (objective != RV_PATH_COVERAGE && objective != RV_PATH_ENTROPY)
        return rv__error(RV_E_INVALID_ARG, "unknown path objective %d", (int)objective);
    if (capacity < n_cols)
        return rv__error(RV_E_SHAPE, "capacity %zu < n_cols %zu", capacity, n_cols);
    if (n_rows > UINT32_MAX)
        return rv__error(RV_E_RANGE, "n_rows = %zu exceeds %u", n_rows, UINT32_MAX);
    if (costs)
        for (size_t j = 0; j < n_cols; j++)
            if (!(costs[j] >= 0) || !isfinite(costs[j]))
                return rv__error(RV_E_INVALID_ARG,
                                 "costs[%zu] = %g: every column cost must be finite and >= 0", j,
                                 costs[j]);
    rv__cols cols;
    rv_status st = rv__cols_init(&cols, codes, NULL, n_rows, n_cols);
    if (st) return st;
    rv__part pt;
    uint8_t *used = NULL;
    if ((st = rv__part_init(&pt, &cols, n_rows))) {
        rv__cols_free(&cols);
        return st;
    }
    used = rv__calloc(n_cols ? n_cols : 1, 1);
    if (!used) {
        st = rv__nomem("column flags");
        goto done;
    }
    uint64_t unres = rv__c2(n_rows);
    size_t steps = 0;
    double scale = n_rows ? 1.0 / (double)n_rows : 0.0;

    while (unres > stop_unresolved && pt.n_segs > 0) {
        if (progress && progress(progress_ctx, steps, n_cols)) {
            st = rv__error(RV_E_INTERRUPTED, "key path interrupted");
            goto done;
        }
        long best = -1;
        double best_gain = 0;
        uint64_t best_res = 0;
        for (size_t j = 0; j < n_cols; j++) {
            if (used[j]) continue;
            uint64_t res;
            double ent = 0;
            rv__score(cols.col[j], pt.perm, pt.segs, pt.n_segs, pt.cnt, pt.touched, &res,
                      objective == RV_PATH_ENTROPY ? &ent : NULL);
            if (res == 0) {
                used[j] = 1; /* separates nothing now, never will */
                continue;
            }
            double g = objective == RV_PATH_ENTROPY ? ent * scale : (double)res;
            double cj = costs ? costs[j] : 1.0;
            if (best < 0 || rv__ratio_better(g, cj, best_gain, costs ? costs[best] : 1.0)) {
                best = (long)j;
                best_gain = g;
                best_res = res;
            }
        }
        if (best < 0) break;
        used[best] = 1;
        order[steps] = (uint32_t)best;
        newly_resolved[steps] = best_res;
        if (gain) gain[steps] = best_gain;
        steps++;
        unres -= best_res;

        rv__part_refine(&pt, cols.col[best]);
    }
    *n_steps = steps;
    *unresolved = unres;
done:
    rv__part_free(&pt);
    rv__free(used);
    rv__cols_free(&cols);
    return st;
}

rv_status rv_keys_unresolved(const int32_t *codes, size_t n_rows, size_t n_cols,
                             const uint32_t *cols, size_t n_sel, uint64_t *unresolved) {
    RV__NOT_NULL(unresolved, "unresolved");
    *unresolved = 0;
    if (n_sel && !cols) return rv__error(RV_E_INVALID_ARG, "cols is NULL but n_sel = %zu", n_sel);
    if (!codes && n_rows && n_cols) return rv__null("codes");
    RV__CHECK_SIZE2(n_rows, n_cols, sizeof *codes, "n_rows", "n_cols");
    RV__CHECK_SIZE(n_sel, sizeof(int32_t *), "n_sel");
    for (size_t k = 0; k < n_sel; k++)
        if (cols[k] >= n_cols)
            return rv__error(RV_E_RANGE, "column index %u >= n_cols = %zu", cols[k], n_cols);
    if (n_rows > UINT32_MAX)
        return rv__error(RV_E_RANGE, "n_rows = %zu exceeds %u", n_rows, UINT32_MAX);
    rv__cols cs;
    rv_status st = rv__cols_init(&cs, codes, cols, n_rows, n_sel);
    if (st) return st;
    rv__part pt;
    if ((st = rv__part_init(&pt, &cs, n_rows))) {
        rv__cols_free(&cs);
        return st;
    }
    for (size_t k = 0; k < n_sel && pt.n_segs; k++) rv__part_refine(&pt, cs.col[k]);
    uint64_t u = 0;
    for (size_t g = 0; g < pt.n_segs; g++) u += rv__c2(pt.segs[g].len);
    *unresolved = u;
    rv__part_free(&pt);
    rv__cols_free(&cs);
    return RV_OK;
}

/* Load caller groups (ranges of rows given by offsets) as the partition's
** segments, keeping only the groups of two or more rows. */
static rv_status rv__part_set_groups(rv__part *pt, const uint64_t *offsets, size_t n_groups,
                                     size_t n_rows) {
    size_t n = 0;
    for (size_t g = 0; g < n_groups; g++) {
        uint64_t a = offsets[g], b = offsets[g + 1];
        if (b < a || b > n_rows)
            return rv__error(RV_E_INVALID_ARG,
                             "offsets[%zu .. %zu] = %llu .. %llu: offsets must ascend and "
                             "stay <= n_rows = %zu",
                             g, g + 1, (unsigned long long)a, (unsigned long long)b, n_rows);
        if (b - a >= 2) {
            pt->segs[n].start = (size_t)a;
            pt->segs[n].len = (size_t)(b - a);
            n++;
        }
    }
    pt->n_segs = n;
    return RV_OK;
}

static rv_status rv__check_groups(const uint64_t *offsets, size_t n_groups, size_t n_rows) {
    if (n_groups && !offsets) return rv__error(RV_E_INVALID_ARG, "offsets must not be NULL");
    RV__CHECK_SIZE(n_groups, sizeof *offsets, "n_groups");
    if (n_rows > UINT32_MAX)
        return rv__error(RV_E_RANGE, "n_rows = %zu exceeds %u", n_rows, UINT32_MAX);
    return RV_OK;
}

rv_status rv_keys_group_scores(const int32_t *codes, size_t n_rows, size_t n_cols,
                               const uint64_t *offsets, size_t n_groups, uint64_t *resolved,
                               double *entropy) {
    if (n_cols && !resolved) return rv__null("resolved");
    if (!codes && n_rows && n_cols) return rv__null("codes");
    RV__CHECK_SIZE2(n_rows, n_cols, sizeof *codes, "n_rows", "n_cols");
    RV__CHECK_SIZE(n_cols, sizeof *resolved, "n_cols");
    rv_status st = rv__check_groups(offsets, n_groups, n_rows);
    if (st) return st;
    rv__cols cols;
    if ((st = rv__cols_init(&cols, codes, NULL, n_rows, n_cols))) return st;
    rv__part pt;
    if ((st = rv__part_init(&pt, &cols, n_rows))) {
        rv__cols_free(&cols);
        return st;
    }
    if (!(st = rv__part_set_groups(&pt, offsets, n_groups, n_rows))) {
        for (size_t j = 0; j < n_cols; j++) {
            double ent = 0;
            rv__score(cols.col[j], pt.perm, pt.segs, pt.n_segs, pt.cnt, pt.touched, &resolved[j],
                      entropy ? &ent : NULL);
            if (entropy) entropy[j] = ent;
        }
    }
    rv__part_free(&pt);
    rv__cols_free(&cols);
    return st;
}

rv_status rv_keys_group_refine(const int32_t *code, size_t n_rows, const uint64_t *offsets,
                               size_t n_groups, uint32_t *rows_out, uint64_t *offsets_out,
                               size_t *n_rows_out, size_t *n_groups_out) {
    if (n_rows_out) *n_rows_out = 0;
    if (n_groups_out) *n_groups_out = 0;
    RV__NOT_NULL(n_rows_out, "n_rows_out");
    RV__NOT_NULL(n_groups_out, "n_groups_out");
    RV__NOT_NULL(offsets_out, "offsets_out");
    if (n_rows) {
        RV__NOT_NULL(code, "code");
        RV__NOT_NULL(rows_out, "rows_out");
    }
    RV__CHECK_SIZE(n_rows, sizeof *rows_out, "n_rows");
    rv_status st = rv__check_groups(offsets, n_groups, n_rows);
    if (st) return st;
    rv__cols cols;
    if ((st = rv__cols_init(&cols, code, NULL, n_rows, 1))) return st;
    rv__part pt;
    if ((st = rv__part_init(&pt, &cols, n_rows))) {
        rv__cols_free(&cols);
        return st;
    }
    if (!(st = rv__part_set_groups(&pt, offsets, n_groups, n_rows))) {
        rv__part_refine(&pt, cols.col[0]);
        /* rv__refine lays the kept parts out from position 0, part after part. */
        size_t kept = 0;
        offsets_out[0] = 0;
        for (size_t g = 0; g < pt.n_segs; g++) {
            kept += pt.segs[g].len;
            offsets_out[g + 1] = kept;
        }
        if (kept) memcpy(rows_out, pt.perm, kept * sizeof(uint32_t));
        *n_rows_out = kept;
        *n_groups_out = pt.n_segs;
    }
    rv__part_free(&pt);
    rv__cols_free(&cols);
    return st;
}
