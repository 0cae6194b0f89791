/*
** rowvoi record tables: the steps of a dense search over records.
**
** A collection searched by vectors (a corpus) keeps its searchable pieces
** as records: each record has an int64 id (the id its vector carries in a
** flat index), belongs to one artifact (the document it came from) and
** has a kind code, a text and a metadata string; each artifact has an id
** string and a string of filter fields.  An rv_records describes such a
** table as plain arrays the caller owns.  The functions here are the
** steps from a query vector to the hits of a search:
**
**   rv_unit_vector      the query's float32 unit form, to a bit-exact rule
**   rv_any_nonzero      whether a vector has a nonzero component
**   rv_records_check    a table's structure, checked once
**   rv_records_hits     a vector index's candidates -> the hits: each
**                       candidate's record, one hit per artifact if asked,
**                       the best k
**   rv_records_search   the whole exact search of a flat index in one call:
**                       candidates, then rv_records_hits
**   rv_records_union    a hybrid search's two candidate lists merged, with
**                       each record's rank in either
**   rv_records_rrf      reciprocal rank fusion of those ranks
**   rv_records_blend    the blend evidence of records of a hybrid search,
**                       asking each index for the scores its list lacks
**
** A hit is a record's position in the table (0 .. n_records - 1) with the
** candidate's rank among the candidates: the caller reads the record's id,
** texts and artifact from its own arrays.  What the engine cannot decide
** it hands back rather than guesses (rv_records_verdict): candidates with
** equal scores, whose order is the caller's (a corpus orders them by
** artifact and surface), and a candidate id that is no record.
**
** Thread-safety: nothing here writes to a table or an index; any number of
** threads may call these functions at once on the same ones.
*/
#ifndef ROWVOI_RECORDS_H
#define ROWVOI_RECORDS_H

#include "bm25.h"
#include "core.h"
#include "flat.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The element type of a vector passed as bytes. */
typedef enum rv_real {
    RV_REAL_F32 = 0, /* IEEE binary32, native byte order */
    RV_REAL_F64 = 1  /* IEEE binary64, native byte order */
} rv_real;

/*
** The float32 unit form of a vector.
** x: n components of the given type, component i at the bytes
** x + i * stride (any stride, negative and zero included; no alignment is
** assumed).  out: n floats.
** The rule, bit for bit on every platform: the norm is the square root of
** the double sum of the components' squares (each component converted to
** double, the squares added in index order, one rounding per operation, no
** fused multiply-add); each component is divided by the norm in double and
** rounded once to float.  A zero vector stays zero (no division); squares
** whose sum overflows double give the norm inf, so the components become
** zeros of their sign.
** Returns RV_OK; RV_E_INVALID_ARG for a NaN or infinite component (naming
** the first; out is then unspecified), an unknown type, or NULL x or out
** with n > 0; RV_E_RANGE for an n no array can hold (core.h "Sizes").
** Ownership: reads x, writes out; x is not changed.  Since: 0.1
*/
RV_API rv_status rv_unit_vector(const void *x, rv_real type, size_t n, ptrdiff_t stride,
                                float *out /* OUT */);

/*
** Whether a component of x (n components as rv_unit_vector reads them) is
** not zero: 1 or 0.  NaN counts as nonzero.  0 for a NULL x, an unknown
** type or an n no array can hold.  Since: 0.1
*/
RV_API int rv_any_nonzero(const void *x, rv_real type, size_t n, ptrdiff_t stride);

/* Strings stored back to back: string i is bytes[offsets[i] ..
** offsets[i + 1]), with offsets[0] = 0, the offsets nondecreasing, and the
** last offset = size (count + 1 offsets for count strings). */
typedef struct rv_strings {
    const char *bytes; /* size bytes (NULL allowed when size is 0) */
    size_t size;
    const int64_t *offsets; /* count + 1 */
} rv_strings;

/*
** A record table.  Records are numbered 0 .. n_records - 1 in ascending
** id order (a record's number is its "position"); artifacts 0 ..
** n_artifacts - 1.  Every array is borrowed for the duration of a call.
*/
typedef struct rv_records {
    size_t n_records;
    const int64_t *ids;      /* n_records record ids, strictly ascending */
    const int32_t *artifact; /* n_records: each record's artifact, 0 .. n_artifacts - 1 */
    const int32_t *kind;     /* n_records: each record's kind code, 0 .. n_kinds - 1 */
    size_t n_kinds;
    rv_strings texts;    /* n_records strings: each record's text */
    rv_strings metadata; /* n_records strings: each record's metadata */
    size_t n_artifacts;
    rv_strings filter_fields; /* n_artifacts strings: each artifact's filter fields */
    rv_strings artifact_ids;  /* n_artifacts strings: each artifact's id */
} rv_records;

/*
** Check a table's structure: ids strictly ascending, artifact numbers and
** kind codes in range, each string column's offsets as rv_strings states.
** rv_records_hits and rv_records_search trust a table that passed (they
** index it without checks, and the caller's reads of its strings by the
** positions they return are in bounds), so check a table once after
** building it.
** Returns RV_OK; RV_E_INVALID_ARG naming the first fault ("record ids not
** strictly ascending at ids[3]", "artifact rank 5 out of range ...", "kind
** code 3 out of range ...", "texts offsets do not span the blob ...",
** "metadata offsets not ascending ...") or a NULL table, NULL column with
** a count above 0, or NULL offsets; RV_E_RANGE for an n_records or
** n_artifacts no array can hold (core.h "Sizes").
** Cost: O(n_records + n_artifacts).  Since: 0.1
*/
RV_API rv_status rv_records_check(const rv_records *table);

/* What rv_records_hits and rv_records_search decided. */
typedef enum rv_records_verdict {
    RV_RECORDS_HITS = 0,   /* the hits are written */
    RV_RECORDS_TIE = 1,    /* two candidates have equal scores (or a NaN): the
                              caller orders them and passes their positions */
    RV_RECORDS_UNKNOWN = 2 /* a candidate id is not a record of the table */
} rv_records_verdict;

/*
** The hits among a vector index's candidates.
** ids: n candidate record ids; scores: their n scores (float32 or float64);
** pos: NULL, or the n candidates' positions in the table.
** Without pos the candidates must come best first with strictly falling
** scores, as a vector index returns them when no two tie: when a score is
** not below the one before it (equal, or NaN) *verdict is RV_RECORDS_TIE,
** and when an id is not a record RV_RECORDS_UNKNOWN; nothing is written
** then.  With pos they are taken in the order given (the caller's result
** order) and scores is not read (it may be NULL).
** Keeps the first k candidates, or with collapse nonzero the first of
** each artifact until k are kept.  For hit h (h < *n_hits <= min(k, n))
** at[h] is the record's position and rank[h] the candidate's index in ids
** (its rank - 1).  at and rank hold min(k, n) slots.  The hits' artifact
** ids are prefetched into the caches for the caller's reads (no effect on
** results).
** Returns RV_OK and *verdict; RV_E_INVALID_ARG for a NULL table, verdict,
** n_hits, at or rank, NULL ids (or scores without pos) with n > 0, k = 0,
** or an unknown score_type; RV_E_RANGE for a position outside the table
** ("position 9 out of range"), or an n no array can hold (core.h "Sizes";
** k may be any value >= 1); RV_E_NOMEM.
** The table must have passed rv_records_check.
** Cost: O(n log n_records) lookups (the binary searches of all candidates
** advance together, so their cache misses overlap).  Since: 0.1
*/
RV_API rv_status rv_records_hits(const rv_records *table, size_t n, const int64_t *ids,
                                 const void *scores, rv_real score_type, const int64_t *pos,
                                 size_t k, int collapse, int64_t *at /* OUT */,
                                 int64_t *rank /* OUT */, size_t *n_hits /* OUT */,
                                 rv_records_verdict *verdict /* OUT */);

/*
** The union of two ranked lists of record positions (a hybrid search's
** candidates from two indexes): a[0 .. n_a) and b[0 .. n_b), each best
** first, each position in [0, n_records) and at most once per list.
** Writes the *n_u distinct positions in ascending order to u and, for
** each, its 1-based rank in a (rank_a) and in b (rank_b), 0 where that
** list lacks it; u, rank_a and rank_b hold n_a + n_b slots (none are read
** or written when n_a + n_b = 0).  On an error *n_u is 0 and the outputs
** hold nothing of use.
** Returns RV_OK; RV_E_INVALID_ARG for a NULL n_u, a NULL list with a count
** above 0, NULL outputs with n_a + n_b > 0, or a position twice in one
** list ("list b holds position 7 twice (ranks 2 and 5)"); RV_E_RANGE for a
** position outside the table ("position 9 (list a, rank 3) out of
** range ...") or counts no array can hold (core.h "Sizes"; n_a + n_b at
** most 2^32 - 2); RV_E_NOMEM.
** Cost: O((n_a + n_b) log2(n_records) / 11) (a radix sort), 24 (n_a + n_b)
** bytes and 8 KB of scratch.  Since: 0.1
*/
RV_API rv_status rv_records_union(size_t n_records, size_t n_a, const int64_t *a, size_t n_b,
                                  const int64_t *b, int64_t *u /* OUT */, int64_t *rank_a /* OUT */,
                                  int64_t *rank_b /* OUT */, size_t *n_u /* OUT */);

/*
** Reciprocal rank fusion of the union's two ranks (rv_records_union's
** rank_a and rank_b, n of each): out[i] = 1 / (rrf_k + rank_a[i]) +
** 1 / (rrf_k + rank_b[i]), each term in double precision and 0 where the
** rank is 0 (the list lacks the record), the rank_a term added first (so
** the scores are bit for bit those of the same sum written in NumPy, term
** by term).  out holds n slots.
** Returns RV_OK; RV_E_INVALID_ARG for NULL arrays with n > 0, rrf_k or a
** rank out of its range (rrf_k in 1 .. 2^62, ranks in 0 .. 2^62:
** "rank_b[4] = -1: ranks are in 0 .. 2^62"); RV_E_RANGE for an n no array
** can hold (core.h "Sizes").
** Cost: O(n).  Since: 0.1
*/
RV_API rv_status rv_records_rrf(size_t n, const int64_t *rank_a, const int64_t *rank_b,
                                int64_t rrf_k, double *out /* OUT */);

/*
** Parameters of rv_records_blend.  Initialise with
** rv_records_blend_params_init, then set what the search has.
*/
typedef struct rv_records_blend_params {
    double alpha;              /* the cosine's weight, in [0, 1] */
    double sat_k;              /* BM25 saturation: b / (b + sat_k), > 0 */
    const rv_flat *dense;      /* optional: scores the records list a lacks */
    const float *query_vector; /* rv_flat_dim(dense) floats when dense is set,
                                  as rv_flat_rescore takes them (all zero: no
                                  record is asked, their cosines stay 0) */
    uint32_t n_threads;        /* dense's rescore, core.h "Threads" */
    const rv_bm25 *lexical;    /* optional: scores the records list b lacks */
    const char *query;         /* UTF-8, query_len bytes, when lexical is set */
    size_t query_len;
    /* 0: every record's evidence; h > 0: only those that can be among the
    ** best h (see rv_records_blend), with max_a (max_b) the most a record
    ** list a (b) lacks can score there (+inf: not known) */
    size_t head;
    double max_a;
    double max_b;
} rv_records_blend_params;

/* Fill *p with the defaults (alpha 0.5, sat_k 1, no index, all cores, every
** record, no bounds known).  A NULL p does nothing.  Since: 0.1 */
RV_API void rv_records_blend_params_init(rv_records_blend_params *p /* OUT */);

/*
** The blend evidence of n records of a hybrid search (a corpus orders the
** equal scores of reciprocal rank fusion by it, and floors such hits by it):
**   out[i] = alpha * cos_i + (1 - alpha) * b_i / (b_i + sat_k),
**   b_i = max(bm_i, 0) (a NaN stays NaN),
** where cos_i is record ids[i]'s score in list a (the dense side, scores_a
** in rank order: scores_a[rank_a[i] - 1]) and bm_i its score in list b (the
** lexical side), each a 1-based rank as rv_records_union writes them, 0
** where the list lacks the record.  A record list a lacks is scored by
** params->dense (one rv_flat_rescore of them all, when the query vector is
** not all zero), one list b lacks by params->lexical (one rv_bm25_search of
** params->query restricted to them); a record an index does not score (no
** index given, or BM25 matches none of its terms) counts 0.  Each
** operation is one IEEE double rounding, in the order written (no fused
** multiply-add), so out equals the same expression computed by NumPy, bit
** for bit.  out holds n slots.
** With params->head = h (0 < h < n), only the records that can be among
** the h best are computed: the h-th best value among the records whose
** every score is known without asking (both lists hold them, or no index
** can score a side) is a floor T, and a record whose value, with each
** missing score at its bound (max_a, max_b: the last score of a list cut
** at its length, an exact search's), stays below T (less a relative margin
** of 1e-9, for rounding) is not asked for and gets -INFINITY.  The best h
** values, ties included, and their order are those of h = 0, as long as
** the bounds hold (a bound below a missing record's true score can drop
** it); nothing is pruned when fewer than h records are known or one of
** their values is NaN.
** Returns RV_OK; RV_E_INVALID_ARG for a NULL params, alpha outside [0, 1],
** sat_k not finite and > 0, a NULL array with n > 0 (scores_a or scores_b
** with n_a or n_b > 0; query_vector with dense set; query with query_len >
** 0), a rank outside 0 .. n_a (0 .. n_b), an id asked of an index twice or
** outside 0 .. RV_MAX_ID; the errors of rv_flat_rescore (RV_E_RANGE for an
** id the flat index lacks) and rv_bm25_search; RV_E_RANGE for an n no
** array can hold; RV_E_NOMEM.  On an error out holds nothing of use.
** Thread-safety: reads the indexes; the caller keeps writers away from
** them for the call.
** Cost: the two index calls, then O(n).  Since: 0.1
*/
RV_API rv_status rv_records_blend(const rv_records_blend_params *params, size_t n,
                                  const int64_t *ids, const int64_t *rank_a, const int64_t *rank_b,
                                  size_t n_a, const double *scores_a, size_t n_b,
                                  const double *scores_b, double *out /* OUT */);

/*
** Parameters of rv_records_search.  Initialise with
** rv_records_search_params_init, then set k and fetch_k.
*/
typedef struct rv_records_search_params {
    size_t k;                /* hits wanted, >= 1 (at most the index's
                                 size are found) */
    size_t fetch_k;          /* candidates asked of the index, >= k */
    int collapse;            /* nonzero: one hit per artifact */
    uint32_t n_threads;      /* the index's scan, see core.h "Threads" */
    rv_progress_fn progress; /* optional; called from the calling thread */
    void *progress_ctx;
} rv_records_search_params;

/* Fill *p with the defaults (k 10, fetch_k 10, no collapse, all cores).  A
** NULL p does nothing.  Since: 0.1 */
RV_API void rv_records_search_params_init(rv_records_search_params *p /* OUT */);

/*
** A whole exact search of a flat index, in one call.
** query: dim floats (rv_flat_dim), as rv_flat_search takes them (a corpus
** passes rv_unit_vector's form).  The candidates are the best fetch_k
** records of the index by an exact search (rv_flat_search_params.exact),
** then the hits are rv_records_hits of them (without positions): at[h],
** rank[h] and the candidate's score scores[h] for h < *n_hits <= min(k,
** rv_flat_size(index)): at, rank and scores hold that many slots.  An
** all-zero query has no candidates: no hits (RV_RECORDS_HITS, *n_hits 0),
** whatever the metric; so has an empty index.  A verdict other than
** RV_RECORDS_HITS writes no hits, as rv_records_hits.
** Returns RV_OK and *verdict; RV_E_INVALID_ARG for a NULL pointer, k = 0,
** fetch_k < k, or a NaN or infinite query component; RV_E_INTERRUPTED when
** progress asks to stop; RV_E_NOMEM.  (k and fetch_k may be any values
** with 1 <= k <= fetch_k: the arrays and the engine's own buffers are
** sized by the index, core.h "Sizes".)
** The table must have passed rv_records_check, and the index must not
** change during the call.  Since: 0.1
*/
RV_API rv_status rv_records_search(const rv_records *table, const rv_flat *index,
                                   const rv_records_search_params *params, const float *query,
                                   int64_t *at /* OUT */, int64_t *rank /* OUT */,
                                   float *scores /* OUT */, size_t *n_hits /* OUT */,
                                   rv_records_verdict *verdict /* OUT */);

#ifdef __cplusplus
}
#endif

#endif /* ROWVOI_RECORDS_H */
