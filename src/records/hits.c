/*
** Record tables (records.h): the structural check, the hits among a vector
** index's candidates, and the whole exact search of a flat index.
**
** The hits, for n candidates and k hits: the positions of all candidates
** (n binary searches advanced together), then the first k, or the first of
** each artifact until k (an open-addressing set of artifact numbers), then
** a prefetch of the artifact ids the caller reads next.  Nothing is allocated
** for up to RV__STACK candidates.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../internal.h"

/* Up to this many candidates (and a collapse to up to this many hits)
** keep their scratch on the stack. */
#define RV__STACK 256u

/* ------------------------------------------------------------ the check */

static rv_status rv__check_strings(const rv_strings *s, size_t count, const char *what) {
    if (!s->offsets) return rv__error(RV_E_INVALID_ARG, "table->%s.offsets is NULL", what);
    if (!s->bytes && s->size)
        return rv__error(RV_E_INVALID_ARG, "table->%s.bytes is NULL but size = %zu", what, s->size);
    RV__CHECK_SIZE(s->size, 1, "size");
    const int64_t *off = s->offsets;
    if (off[0] != 0 || off[count] < 0 || (uint64_t)off[count] != (uint64_t)s->size)
        return rv__error(RV_E_INVALID_ARG,
                         "%s offsets do not span the blob: offsets[0] = %lld and offsets[%zu] = "
                         "%lld, the blob holds %zu bytes",
                         what, (long long)off[0], count, (long long)off[count], s->size);
    for (size_t i = 1; i <= count; i++)
        if (off[i] < off[i - 1])
            return rv__error(RV_E_INVALID_ARG,
                             "%s offsets not ascending: offsets[%zu] = %lld < offsets[%zu] = %lld",
                             what, i, (long long)off[i], i - 1, (long long)off[i - 1]);
    return RV_OK;
}

rv_status rv_records_check(const rv_records *t) {
    RV__NOT_NULL(t, "table");
    size_t n = t->n_records, na = t->n_artifacts;
    RV__CHECK_SIZE(n, sizeof(int64_t), "n_records");
    RV__CHECK_SIZE(na, sizeof(int64_t), "n_artifacts");
    if (n) {
        RV__NOT_NULL(t->ids, "table->ids");
        RV__NOT_NULL(t->artifact, "table->artifact");
        RV__NOT_NULL(t->kind, "table->kind");
    }
    rv_status st;
    if ((st = rv__check_strings(&t->texts, n, "texts"))) return st;
    if ((st = rv__check_strings(&t->metadata, n, "metadata"))) return st;
    if ((st = rv__check_strings(&t->filter_fields, na, "filter_fields"))) return st;
    if ((st = rv__check_strings(&t->artifact_ids, na, "artifact_ids"))) return st;
    for (size_t i = 0; i < n; i++) {
        int32_t a = t->artifact[i], c = t->kind[i];
        if (a < 0 || (size_t)a >= na)
            return rv__error(RV_E_INVALID_ARG,
                             "artifact rank %d out of range: artifact[%zu], the table has %zu "
                             "artifacts",
                             (int)a, i, na);
        if (c < 0 || (size_t)c >= t->n_kinds)
            return rv__error(RV_E_INVALID_ARG,
                             "kind code %d out of range: kind[%zu], the table has %zu kinds",
                             (int)c, i, t->n_kinds);
        if (i && t->ids[i] <= t->ids[i - 1])
            return rv__error(RV_E_INVALID_ARG,
                             "record ids not strictly ascending: ids[%zu] = %lld after %lld", i,
                             (long long)t->ids[i], (long long)t->ids[i - 1]);
    }
    return RV_OK;
}

/* ------------------------------------------------------------- the hits */

/* Position of each xs[i] (i < m) in the ascending ids[0 .. n) into out[i];
** returns the index of the first one missing, or SIZE_MAX when all are
** there.  The m binary searches advance together, one halving of every
** search per step, so that the cache misses of different searches overlap
** instead of queueing one behind another (a search's probes depend on each
** other; different searches' do not). */
static size_t rv__find_all(const int64_t *ids, size_t n, const int64_t *xs, size_t m,
                           int64_t *out) {
    if (n == 0) return m > 0 ? 0 : SIZE_MAX;
    for (size_t i = 0; i < m; i++) out[i] = 0;
    /* lower bound: out[i] is the first position whose id is >= xs[i], or
    ** the last position when every id is smaller */
    for (size_t length = n; length > 1;) {
        int64_t half = (int64_t)(length >> 1);
        /* without a branch: whether a probe goes left or right is a coin
        ** toss, and a branch mispredicted at every other probe cost a
        ** k = 100 dense search on Cranfield about 6 % of its time */
        for (size_t i = 0; i < m; i++) out[i] += half & -(int64_t)(ids[out[i] + half] <= xs[i]);
        length -= (size_t)half;
    }
    for (size_t i = 0; i < m; i++)
        if (ids[out[i]] != xs[i]) return i;
    return SIZE_MAX;
}

/* The first candidate of each artifact until m are kept, in candidate
** order (every[i]: candidate i's position): their positions into at and
** their indexes into rank; returns how many were kept, or SIZE_MAX when
** the set of artifacts could not be allocated. */
static size_t rv__collapse(const rv_records *t, const int64_t *every, size_t n, size_t m,
                           int64_t *at, int64_t *rank) {
    size_t cap = 1, kept = 0;
    while (cap < 2 * m) cap <<= 1;
    int32_t stack[2 * RV__STACK], *seen = stack;
    if (cap > 2 * RV__STACK) {
        seen = (int32_t *)rv__malloc(cap * sizeof *seen);
        if (!seen) return SIZE_MAX;
    }
    size_t mask = cap - 1;
    for (size_t i = 0; i < cap; i++) seen[i] = -1;
    for (size_t i = 0; i < n && kept < m; i++) {
        int64_t j = every[i];
        int32_t a = t->artifact[j];
        size_t h = (size_t)((uint32_t)a * 2654435761u) & mask;
        while (seen[h] != -1 && seen[h] != a) h = (h + 1) & mask;
        if (seen[h] == a) continue;
        seen[h] = a;
        at[kept] = j;
        rank[kept++] = (int64_t)i;
    }
    if (seen != stack) rv__free(seen);
    return kept;
}

/* Ask for every hit's artifact id at once, the one string a caller
** building hit objects reads for each of them: their lines then arrive
** together, not one hit's after another's.  Texts and metadata are not
** asked for: the Python hits read them only when a caller first reads a
** hit's fields, mostly for a few of k hits, and prefetching every text's
** first 4 KiB cost a k = 100 dense search on Cranfield about 5 % of its
** time. */
static void rv__prefetch_hits(const rv_records *t, const int64_t *at, size_t kept) {
    if (!t->artifact_ids.bytes) return;
    for (size_t h = 0; h < kept; h++) {
        int32_t a = t->artifact[at[h]];
        RV__PREFETCH(t->artifact_ids.bytes + t->artifact_ids.offsets[a]);
    }
}

static inline double rv__score(const void *scores, int f64, size_t i) {
    return f64 ? ((const double *)scores)[i] : (double)((const float *)scores)[i];
}

/* rv_records_hits after its argument checks (n >= 1, k >= 1). */
static rv_status rv__hits(const rv_records *t, size_t n, const int64_t *ids, const void *scores,
                          int f64, const int64_t *pos, size_t k, int collapse, int64_t *at,
                          int64_t *rank, size_t *n_hits, rv_records_verdict *verdict) {
    if (!pos)
        for (size_t i = 1; i < n; i++)
            if (!(rv__score(scores, f64, i - 1) > rv__score(scores, f64, i))) {
                *verdict = RV_RECORDS_TIE;
                return RV_OK;
            }
    /* every candidate's position: the caller's, or looked up into found */
    int64_t stack[RV__STACK], *found = stack;
    const int64_t *every = pos;
    if (pos) {
        for (size_t i = 0; i < n; i++)
            if (pos[i] < 0 || (uint64_t)pos[i] >= t->n_records)
                return rv__error(RV_E_RANGE,
                                 "position %lld out of range: pos[%zu], the table has %zu records",
                                 (long long)pos[i], i, t->n_records);
    } else {
        if (n > RV__STACK) {
            found = (int64_t *)rv__malloc(n * sizeof *found);
            if (!found) return rv__nomem("the candidates' positions");
        }
        every = found;
    }
    rv_status st = RV_OK;
    size_t m = k < n ? k : n, kept = m;
    if (!pos && rv__find_all(t->ids, t->n_records, ids, n, found) != SIZE_MAX) {
        *verdict = RV_RECORDS_UNKNOWN;
        goto out;
    }
    if (collapse) {
        kept = rv__collapse(t, every, n, m, at, rank);
        if (kept == SIZE_MAX) {
            st = rv__nomem("the set of artifacts");
            goto out;
        }
    } else {
        for (size_t i = 0; i < m; i++) {
            at[i] = every[i];
            rank[i] = (int64_t)i;
        }
    }
    rv__prefetch_hits(t, at, kept);
    *n_hits = kept;
out:
    if (found != stack) rv__free(found);
    return st;
}

rv_status rv_records_hits(const rv_records *t, size_t n, const int64_t *ids, const void *scores,
                          rv_real score_type, const int64_t *pos, size_t k, int collapse,
                          int64_t *at, int64_t *rank, size_t *n_hits, rv_records_verdict *verdict) {
    if (n_hits) *n_hits = 0;
    if (verdict) *verdict = RV_RECORDS_HITS;
    RV__NOT_NULL(t, "table");
    RV__NOT_NULL(n_hits, "n_hits");
    RV__NOT_NULL(verdict, "verdict");
    RV__NOT_NULL(at, "at");
    RV__NOT_NULL(rank, "rank");
    if (k == 0) return rv__error(RV_E_INVALID_ARG, "k = 0: k must be >= 1");
    if (score_type != RV_REAL_F32 && score_type != RV_REAL_F64)
        return rv__error(RV_E_INVALID_ARG, "score_type = %d: use RV_REAL_F32 or RV_REAL_F64",
                         (int)score_type);
    RV__CHECK_SIZE(n, sizeof(int64_t), "n");
    if (n == 0) return RV_OK;
    RV__NOT_NULL(ids, "ids");
    if (!pos) RV__NOT_NULL(scores, "scores");
    return rv__hits(t, n, ids, scores, score_type == RV_REAL_F64, pos, k, collapse, at, rank,
                    n_hits, verdict);
}

/* ----------------------------------------------------------- the search */

void rv_records_search_params_init(rv_records_search_params *p) {
    if (!p) return;
    memset(p, 0, sizeof *p);
    p->k = 10;
    p->fetch_k = 10;
}

rv_status rv_records_search(const rv_records *t, const rv_flat *index,
                            const rv_records_search_params *p, const float *query, int64_t *at,
                            int64_t *rank, float *scores, size_t *n_hits,
                            rv_records_verdict *verdict) {
    if (n_hits) *n_hits = 0;
    if (verdict) *verdict = RV_RECORDS_HITS;
    RV__NOT_NULL(t, "table");
    RV__NOT_NULL(index, "index");
    RV__NOT_NULL(p, "params");
    RV__NOT_NULL(query, "query");
    RV__NOT_NULL(at, "at");
    RV__NOT_NULL(rank, "rank");
    RV__NOT_NULL(scores, "scores");
    RV__NOT_NULL(n_hits, "n_hits");
    RV__NOT_NULL(verdict, "verdict");
    size_t k = p->k;
    if (k == 0) return rv__error(RV_E_INVALID_ARG, "k = 0: k must be >= 1");
    if (p->fetch_k < k)
        return rv__error(RV_E_INVALID_ARG, "fetch_k = %zu < k = %zu: fetch_k must be >= k",
                         p->fetch_k, k);
    size_t dim = rv_flat_dim(index), size = rv_flat_size(index);
    for (size_t j = 0; j < dim; j++)
        if (!isfinite(query[j]))
            return rv__error(RV_E_INVALID_ARG, "query[%zu] = %g: queries must be finite", j,
                             (double)query[j]);
    size_t j = 0;
    while (j < dim && query[j] == 0) j++;
    if (j == dim || size == 0) return RV_OK; /* an all-zero query, an empty index: no candidates */
    /* candidates: at most fetch_k, and never more than the index holds */
    size_t cap = p->fetch_k < size ? p->fetch_k : size;
    int64_t stack_ids[RV__STACK];
    float stack_sc[RV__STACK];
    int64_t *cid = stack_ids;
    float *csc = stack_sc;
    if (cap > RV__STACK) {
        cid = (int64_t *)rv__malloc(cap * sizeof *cid);
        csc = (float *)rv__malloc(cap * sizeof *csc);
        if (!cid || !csc) {
            rv__free(cid);
            rv__free(csc);
            return rv__nomem("the candidates");
        }
    }
    rv_flat_search_params prm;
    rv_flat_search_params_init(&prm);
    prm.k = cap;
    prm.n_threads = p->n_threads;
    prm.exact = 1;
    prm.progress = p->progress;
    prm.progress_ctx = p->progress_ctx;
    size_t found = 0;
    rv_status st = rv_flat_search(index, &prm, 1, query, cid, csc, &found);
    if (!st && found)
        st = rv__hits(t, found, cid, csc, 0, NULL, k, p->collapse, at, rank, n_hits, verdict);
    if (!st)
        for (size_t h = 0; h < *n_hits; h++) scores[h] = csc[rank[h]];
    if (cid != stack_ids) {
        rv__free(cid);
        rv__free(csc);
    }
    return st;
}
