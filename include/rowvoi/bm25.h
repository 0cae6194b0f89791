/*
** rowvoi BM25: an inverted index over analysed text, searched top-k.
**
** Documents.  rv_bm25_add analyses each text with the index's analyzer
** (text.h) and gives it the next document id (0, 1, 2, ... in the order
** added; ids are never reused).  Empty texts, and texts with no terms left
** after analysis (only stopwords, say), are documents of length 0: they get
** an id and count in the collection statistics, but no query finds them.
**
** Deletion.  rv_bm25_delete tombstones documents: they are never returned
** again, but -- as in Lucene and Tantivy -- they keep counting in the
** collection statistics (N, document frequencies, average length) until
** rv_bm25_compact purges them.  Compaction keeps every id as it was.
**
** Scoring.  For a query with distinct terms t (query term frequency qtf_t):
**
**     score(d) = sum over t in d of  qtf_t * w(t, d)
**
** with tf = frequency of t in d, dl = length of d (terms after analysis),
** avgdl = mean length over the documents in the statistics, N = their number,
** df = number of them containing t, B = 1 - b + b * dl / avgdl, K = k1 * B:
**
**   RV_BM25_LUCENE     idf = ln(1 + (N - df + 0.5) / (df + 0.5))     w = idf * tf / (tf + K)
**   RV_BM25_ROBERTSON  idf = max(0, ln((N - df + 0.5) / (df + 0.5))) w = idf * tf / (tf + K)
**   RV_BM25_ATIRE      idf = ln(N / df)               w = idf * (k1 + 1) * tf / (tf + K)
**   RV_BM25_L          idf = ln((N + 1) / (df + 0.5)) c = tf / B,
**                                            w = idf * (k1 + 1) * (c + delta) / (k1 + c + delta)
**   RV_BM25_PLUS       idf = ln((N + 1) / df)   w = idf * ((k1 + 1) * tf / (tf + K) + delta)
**
** (Kamphuis, de Vries, Boytsov and Lin, "Which BM25 do you mean?", ECIR
** 2020; BM25L and BM25+ are Lv and Zhai's, CIKM 2011, with the delta
** applied to the terms a document contains.  Lucene drops the constant
** (k1 + 1) factor, which does not change rankings.  Robertson's idf is
** clipped at 0, as bm25s does by default, so every score is >= 0.)
** Each w is computed in single precision (as bm25s does); the sum runs in
** double precision over the terms in ascending term id and is rounded to
** float once, so a document's score does not depend on how the search
** reached it.  Only documents containing at least one query term are
** candidates.  Ties are broken by the lower document id.
**
** Search.  Top-k uses MaxScore dynamic pruning with block-max bounds
** (Turtle and Flood 1995; Ding and Suel 2011): posting lists are cut into
** blocks of 128 with the largest w of each block, and documents are taken
** a window of ids at a time, so documents (and whole windows) that cannot
** enter the top k are skipped without being scored.  Bounds are exact
** maxima of the same single-precision w, and the pruning test keeps a
** relative margin of 1e-9 below the k-th score, so pruned and exhaustive
** search (RV_BM25_EXHAUSTIVE) return identical ids and scores.
**
** Memory.  Per posting: the document id (4 bytes), tf (1 byte; larger
** values in a side table) and w(t, d) (4 bytes, recomputed whenever the
** statistics or parameters change, so that search only streams ids and
** weights); per document: length, state and length norm (9 bytes).
**
** Thread-safety: searches, explain, lookups and save may run concurrently
** on one index; add, delete, compact and set_params need exclusive access.
*/
#ifndef ROWVOI_BM25_H
#define ROWVOI_BM25_H

#include "core.h"
#include "text.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rv_bm25 rv_bm25;

/* On-disk format version written by rv_bm25_save. */
#define RV_BM25_FORMAT_VERSION 1

/* Largest number of document ids an index can hand out. */
#define RV_BM25_MAX_DOCS ((uint64_t)0xFFFFFFFEu)

/* An unused result slot (batch search pads rows with it). */
#define RV_BM25_NO_DOC ((uint32_t)0xFFFFFFFFu)

typedef enum rv_bm25_variant {
    RV_BM25_LUCENE = 0,
    RV_BM25_ROBERTSON = 1,
    RV_BM25_ATIRE = 2,
    RV_BM25_L = 3,
    RV_BM25_PLUS = 4
} rv_bm25_variant;

/* Scoring parameters.  Initialise with rv_bm25_params_init. */
typedef struct rv_bm25_params {
    rv_bm25_variant variant; /* default RV_BM25_LUCENE */
    double k1;               /* >= 0 and finite, <= 1e6 (default 1.2) */
    double b;                /* in [0, 1] (default 0.75) */
    double delta;            /* BM25L / BM25+ only: >= 0 and finite, <= 1e6
                                (0.5 for BM25L, 1.0 for BM25+ are usual);
                                must be 0 for the other variants */
} rv_bm25_params;

/* Defaults: Lucene, k1 = 1.2, b = 0.75, delta = 0. */
RV_API void rv_bm25_params_init(rv_bm25_params *params);

/*
** Check parameters.  Returns RV_E_INVALID_ARG naming the field for an
** unknown variant, k1 or delta negative, NaN, infinite or above 1e6, b
** outside [0, 1], or a nonzero delta for a variant that has none.
*/
RV_API rv_status rv_bm25_params_check(const rv_bm25_params *params);

/*
** Create an empty index.                                 CONSTRUCTOR: rv_bm25
** analyzer and params may be NULL for the defaults.  Both are copied and
** recorded in saved files.  Returns RV_E_INVALID_ARG for bad options or a
** NULL out; RV_E_NOMEM.  Free with rv_bm25_free.
*/
RV_API rv_status rv_bm25_create(const rv_analyzer_options *analyzer,
                                const rv_bm25_params *params, rv_bm25 **out);

/* Free an index.  NULL is a no-op. */
RV_API void rv_bm25_free(rv_bm25 *index);

/*
** Add documents.                                        METHOD: rv_bm25
** texts[i] holds lens[i] bytes of UTF-8 (not NUL-terminated; NULL allowed
** when lens[i] is 0).  The documents get ids *first_id .. *first_id +
** n_docs - 1 (first_id may be NULL).  All or nothing: on any error the
** index is unchanged.  Cost: analysis and posting lists of the new texts,
** plus a pass over the whole index to refresh the pruning bounds (the
** statistics changed), so add in batches rather than one by one.
** progress (may be NULL) is called with documents analysed so far.
** Returns RV_OK; RV_E_INVALID_ARG for a NULL array or, under the strict
** UTF-8 policy, invalid UTF-8 (the message names the document and the byte
** offset); RV_E_RANGE past RV_BM25_MAX_DOCS documents or 2^32 - 1 distinct
** terms; RV_E_INTERRUPTED; RV_E_NOMEM.  Needs exclusive access.
*/
RV_API rv_status rv_bm25_add(rv_bm25 *index, size_t n_docs,
                             const char *const *texts, const size_t *lens,
                             rv_progress_fn progress, void *progress_ctx,
                             uint32_t *first_id);

/*
** Tombstone documents.  Ids already deleted are skipped; *n_deleted (may be
** NULL) gets the number newly deleted.  Returns RV_E_RANGE (nothing
** deleted) when an id >= the number of ids handed out; RV_E_INVALID_ARG for
** NULL ids with n > 0.  Needs exclusive access.
*/
RV_API rv_status rv_bm25_delete(rv_bm25 *index, const uint32_t *ids, size_t n,
                                size_t *n_deleted);

/*
** Purge tombstoned documents from the posting lists and the statistics.
** Ids do not change.  Returns RV_OK; RV_E_NOMEM (index unchanged).  Needs
** exclusive access.
*/
RV_API rv_status rv_bm25_compact(rv_bm25 *index);

/* Change the scoring parameters (recomputes the pruning bounds).  Returns
** RV_E_INVALID_ARG for bad parameters.  Needs exclusive access. */
RV_API rv_status rv_bm25_set_params(rv_bm25 *index, const rv_bm25_params *params);

/* Copy out the parameters / the analyzer options the index was built with.
** Returns RV_E_INVALID_ARG for NULL pointers. */
RV_API rv_status rv_bm25_get_params(const rv_bm25 *index, rv_bm25_params *out);
RV_API rv_status rv_bm25_get_analyzer(const rv_bm25 *index, rv_analyzer_options *out);

/* Sizes and statistics of an index. */
typedef struct rv_bm25_info {
    uint64_t n_ids;         /* document ids handed out */
    uint64_t n_live;        /* documents searchable */
    uint64_t n_tombstoned;  /* deleted, still in the statistics */
    uint64_t n_stats_docs;  /* N of the formulas: live + tombstoned */
    uint64_t total_len;     /* sum of dl over those documents */
    double avgdl;           /* total_len / n_stats_docs (0 when empty) */
    uint64_t n_terms;       /* distinct terms in the dictionary */
    uint64_t n_postings;    /* (term, document) pairs stored */
    uint64_t n_segments;    /* posting-list segments (compact makes one) */
    uint64_t memory_bytes;  /* heap bytes held by the index */
} rv_bm25_info;

RV_API rv_status rv_bm25_get_info(const rv_bm25 *index, rv_bm25_info *out);

/* Search flags. */
#define RV_BM25_EXHAUSTIVE 1u /* score every posting (no pruning) */

/* Work done by one search (for tests and benchmarks). */
typedef struct rv_bm25_search_info {
    uint64_t n_query_terms;   /* distinct query terms found in the dictionary */
    uint64_t docs_scored;     /* candidates whose full score was computed */
    uint64_t postings_scored; /* w(t, d) evaluations */
    uint64_t postings_total;  /* postings in the query terms' lists */
} rv_bm25_search_info;

/*
** Search with a text query.                              METHOD: rv_bm25
** The query is analysed with the index's analyzer; terms missing from the
** dictionary are ignored (a query without known terms finds nothing: RV_OK
** with *n_found = 0).  A term repeated in the query counts that many times.
** Writes the best min(k, matches) documents into ids/scores (score desc, id
** asc); each must hold k slots.  info may be NULL.
** Returns RV_OK; RV_E_INVALID_ARG for k == 0, a NULL pointer, unknown
** flags or invalid UTF-8 (strict policy); RV_E_NOMEM.
** Thread-safety: concurrent searches OK.
*/
RV_API rv_status rv_bm25_search(const rv_bm25 *index, const char *query,
                                size_t len, size_t k, unsigned flags,
                                uint32_t *ids, float *scores, size_t *n_found,
                                rv_bm25_search_info *info);

/*
** Search with term ids (from rv_bm25_lookup); repeats count.  As
** rv_bm25_search otherwise; RV_E_RANGE for a term id >= the number of terms.
*/
RV_API rv_status rv_bm25_search_terms(const rv_bm25 *index,
                                      const uint32_t *term_ids, size_t n_terms,
                                      size_t k, unsigned flags, uint32_t *ids,
                                      float *scores, size_t *n_found,
                                      rv_bm25_search_info *info);

/*
** Search many text queries on n_threads threads (0: one per online CPU;
** small batches use fewer).  Row q of ids/scores (k slots each, n_queries
** rows) gets query q's results, padded with RV_BM25_NO_DOC and NaN;
** n_found[q] gets their number.  Results do not depend on n_threads.
** progress (may be NULL) is called on the calling thread with queries done;
** a nonzero return stops the batch with RV_E_INTERRUPTED.
** Returns as rv_bm25_search; the first failing query (lowest index) names
** itself in the message.  Thread-safety: concurrent searches OK.
*/
RV_API rv_status rv_bm25_search_batch(const rv_bm25 *index, size_t n_queries,
                                      const char *const *queries,
                                      const size_t *lens, size_t k,
                                      unsigned flags, unsigned n_threads,
                                      rv_progress_fn progress, void *progress_ctx,
                                      uint32_t *ids, float *scores,
                                      uint32_t *n_found);

/* One row of rv_bm25_explain. */
typedef struct rv_bm25_explain_row {
    uint32_t term_id;
    uint32_t qtf;       /* times the term occurs in the query */
    uint32_t tf;        /* times it occurs in the document (0: absent) */
    uint64_t df;        /* documents containing it (statistics) */
    double idf;         /* the variant's idf */
    float weight;       /* w(t, d), single precision as scored; 0 if absent */
    double contribution; /* qtf * weight */
} rv_bm25_explain_row;

/*
** Explain the score of document doc for a text query: one row per distinct
** known query term, in ascending term id -- the order the score is summed
** in -- so the contributions add up (in double precision, rounded to float)
** to exactly the score search reports.  Writes at most capacity rows;
** *n_rows gets the number of rows (RV_E_SHAPE when capacity is too small).
** *score (may be NULL) gets the total, *doc_len (may be NULL) gets dl.
** Returns RV_E_RANGE for doc >= ids handed out; RV_E_STATE for a deleted
** document; RV_E_INVALID_ARG as rv_bm25_search.
*/
RV_API rv_status rv_bm25_explain(const rv_bm25 *index, const char *query,
                                 size_t len, uint32_t doc,
                                 rv_bm25_explain_row *rows, size_t capacity,
                                 size_t *n_rows, float *score,
                                 uint32_t *doc_len);

/*
** Dictionary lookups.  rv_bm25_lookup finds an analysed term (exact bytes):
** *found = 1 and *term_id, or *found = 0.  rv_bm25_term gives term id's
** bytes (*term points into the index: valid until the next add, compact or
** free) and rv_bm25_doc_freq its document frequency.  RV_E_RANGE for an id
** out of range; RV_E_INVALID_ARG for NULL pointers.
*/
RV_API rv_status rv_bm25_lookup(const rv_bm25 *index, const char *term,
                                size_t len, uint32_t *term_id, int *found);
RV_API rv_status rv_bm25_term(const rv_bm25 *index, uint32_t term_id,
                              const char **term, size_t *len);
RV_API rv_status rv_bm25_doc_freq(const rv_bm25 *index, uint32_t term_id,
                                  uint64_t *df);

/* Document state, from rv_bm25_doc. */
#define RV_BM25_DOC_LIVE 0
#define RV_BM25_DOC_TOMBSTONED 1 /* deleted, still in the statistics */
#define RV_BM25_DOC_PURGED 2     /* deleted and compacted away */

/* Length (terms after analysis) and state of a document.  RV_E_RANGE for
** an id out of range. */
RV_API rv_status rv_bm25_doc(const rv_bm25 *index, uint32_t doc,
                             uint32_t *doc_len, int *state);

/*
** Save to path: written to a temporary file beside it, flushed to disk and
** renamed over path, so a crash leaves either the old file or the new one
** (mode 0666 & ~umask; see "Files" in rowvoi/core.h).
** The format (little-endian) is a header with the magic "RVBM25IX", the
** format version and the payload size; the payload holds the parameters,
** the analyzer options and RV_ANALYZER_VERSION, document lengths and
** states, the dictionary and the posting lists; a CRC-32C of everything
** before it ends the file.  Returns RV_E_IO naming the path and the
** system's reason; RV_E_INVALID_ARG for NULL; RV_E_NOMEM.
** Thread-safety: may run concurrently with searches.
*/
RV_API rv_status rv_bm25_save(const rv_bm25 *index, const char *path);

/*
** Load an index saved by rv_bm25_save.                  CONSTRUCTOR: rv_bm25
** Returns RV_OK and *out; RV_E_IO when the file cannot be read;
** RV_E_CORRUPT when it is not an index, is truncated, fails its checksum or
** any structural check; RV_E_VERSION when it was written with another
** format version or analyzer version; RV_E_NOMEM.  Never reads out of
** bounds, whatever the bytes.
*/
RV_API rv_status rv_bm25_load(const char *path, rv_bm25 **out);

/* The same, from and to memory.  rv_bm25_save_buffer writes at most
** capacity bytes and sets *size to the bytes needed (RV_E_SHAPE when
** capacity is too small; buf may be NULL with capacity 0 to ask). */
RV_API rv_status rv_bm25_save_buffer(const rv_bm25 *index, void *buf,
                                     size_t capacity, size_t *size);
RV_API rv_status rv_bm25_load_buffer(const void *buf, size_t size, rv_bm25 **out);

#ifdef __cplusplus
}
#endif

#endif /* ROWVOI_BM25_H */
