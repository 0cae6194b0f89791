/*
** rowvoi BM25: an inverted index over analysed text, searched top-k.
**
** Documents and ids.  rv_bm25_add analyses each text with the index's
** analyzer (text.h) and files it under a caller id: an int64 in
** [0, RV_MAX_ID] chosen by the caller (a corpus owns its record ids), or,
** when no ids are given, the next ids: one past the largest id ever added
** (0, 1, 2, ... for an index fed without ids).  Results, explain, doc and
** delete speak these ids.  Empty texts, and texts with no terms left after
** analysis (only stopwords, say), are documents of length 0: they count in
** the collection statistics, but no query finds them.
**
** Deletion.  rv_bm25_delete takes documents out of the results and out of
** the collection statistics (N, document frequencies, average length) at
** once, so scores always equal those of an index built from the live
** documents alone; a deleted id may be added again (with new text).  The
** postings of deleted documents stay in memory ("tombstoned") until a
** segment merge or rv_bm25_compact drops them ("purged").
**
** Scoring.  For a query with distinct terms t (query term frequency qtf_t):
**
**     score(d) = sum over t in d of  qtf_t * w(t, d)
**
** with tf = frequency of t in d, dl = length of d (terms after analysis),
** avgdl = mean length over the live documents, N = their number,
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
** candidates.  Ties are broken by the lower caller id.
**
** Search.  Top-k uses MaxScore dynamic pruning with block-max bounds
** (Turtle and Flood 1995; Ding and Suel 2011): posting lists are cut into
** blocks of 128, and documents are taken a window of ids at a time, so
** documents (and whole windows) that cannot enter the top k are skipped
** without being scored.  The bounds are "impacts" (as in Lucene): each
** block stores the Pareto frontier of its (tf, dl) pairs, turned into a
** weight bound under the current statistics at query time, so they stay
** valid as documents come and go.  Pruning drops a document only when a
** bound (inflated by a relative 1e-6) is below the k-th score, so pruned
** and exhaustive search (RV_BM25_EXHAUSTIVE) return identical ids and
** scores.
**
** Filters.  Every search takes an optional rv_idset (core.h): only live
** documents whose id is in the set are ranked, inside the kernel, so the
** top-k is exact among them.  A small set is scored document by document
** (probing each query term's list), a large one is a bitmap that the
** pruned kernel consults, so the cost falls as the set shrinks.  The set
** is translated to the index's documents once per call (once per batch):
** O(min(set, index)) hash probes, which for a set of most of a large index
** costs more than the search itself (bench/results/filters.md).
**
** Changes cost work in proportion to the change: an add indexes the new
** documents into a new segment (neighbours of similar size are merged, a
** logarithmic policy); a delete updates the statistics from the document's
** terms; nothing is re-weighted (weights are computed at query time from
** tf and a length-norm table).  The first delete in a segment that has no
** forward lists (one loaded from a file, or rebuilt by a merge of segments
** without them) builds them once, in O(postings of that segment).
**
** Memory.  Per posting: the document slot (4 bytes), tf (1 byte; larger
** values in a side table) and its place in the weight table (2 bytes),
** plus 4 bytes of forward list where one is kept (segments built by add,
** or after a delete); per document: length, state and caller id (13 bytes)
** and an id-map slot; per block of 128 postings a few (tf, dl) pairs.
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

/* On-disk format version written by rv_bm25_save (2: caller ids). */
#define RV_BM25_FORMAT_VERSION 2

/* Largest number of documents an index holds at once, live and deleted
** (rv_bm25_compact drops the deleted ones). */
#define RV_BM25_MAX_DOCS ((uint64_t)0xFFFFFFFEu)

/* Largest caller id. */
#define RV_BM25_MAX_ID RV_MAX_ID

/* An unused result slot (batch search pads rows with it). */
#define RV_BM25_NO_DOC ((int64_t)-1)

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

/* Defaults: Lucene, k1 = 1.2, b = 0.75, delta = 0.  A NULL params does
** nothing.  Since: 0.1 */
RV_API void rv_bm25_params_init(rv_bm25_params *params /* OUT */);

/*
** Check parameters.  Returns RV_E_INVALID_ARG for a NULL params, or naming
** the field for an unknown variant, k1 or delta negative, NaN, infinite or above 1e6, b
** outside [0, 1], or a nonzero delta for a variant that has none.
** Since: 0.1
*/
RV_API rv_status rv_bm25_params_check(const rv_bm25_params *params);

/*
** Create an empty index.                                 CONSTRUCTOR: rv_bm25
** analyzer and params may be NULL for the defaults.  Both are copied and
** recorded in saved files.  Returns RV_E_INVALID_ARG for bad options or a
** NULL out; RV_E_NOMEM.  Free with rv_bm25_free.
** Since: 0.1
*/
RV_API rv_status rv_bm25_create(const rv_analyzer_options *analyzer, const rv_bm25_params *params,
                                rv_bm25 **out /* OUT */);

/* Free an index.  NULL is a no-op.  Since: 0.1 */
RV_API void rv_bm25_free(rv_bm25 *index);

/*
** Add documents.                                        METHOD: rv_bm25
** texts[i] holds lens[i] bytes of UTF-8 (not NUL-terminated; NULL allowed
** when lens[i] is 0).  ids: n_docs caller ids, or NULL to number the
** documents from one past the largest id ever added (0 for an empty index).
** assigned: NULL or n_docs slots that receive the ids used.  All or
** nothing: on any error the index is unchanged.  Cost: analysis and
** posting lists of the new texts (O(their postings + their distinct terms
** log that)), plus, now and then, a merge of recent segments (amortised
** O(log n) per posting); never a pass over the whole index.
** progress (may be NULL) is called with documents analysed so far.
** Returns RV_OK; RV_E_INVALID_ARG for a NULL array, an id that is negative,
** above RV_MAX_ID, already live or repeated within ids (naming it), or,
** under the strict UTF-8 policy, invalid UTF-8 (the message names the
** document and the byte offset); RV_E_RANGE past RV_BM25_MAX_DOCS
** documents, 2^32 - 1 distinct terms, when numbering passes RV_MAX_ID, or
** for an n_docs or lens[i] no array can hold (core.h "Sizes"; texts, lens
** and ids may be NULL when n_docs == 0); RV_E_INTERRUPTED; RV_E_NOMEM.  Ownership: copies what it keeps.
** Needs exclusive access.  Since: 0.1
*/
RV_API rv_status rv_bm25_add(rv_bm25 *index, size_t n_docs, const char *const *texts,
                             const size_t *lens, const int64_t *ids, rv_progress_fn progress,
                             void *progress_ctx, int64_t *assigned /* OUT */);

/*
** Delete documents by caller id: they leave the results and the collection
** statistics at once (their postings stay until a merge or compaction).
** *n_deleted (may be NULL) gets n.  Returns RV_E_RANGE naming the first id
** that is not live (nothing is deleted then) or an n no array can hold
** (core.h "Sizes"); RV_E_INVALID_ARG for a NULL index, NULL ids with n > 0
** or an id repeated within ids; RV_E_NOMEM (nothing deleted)
** when a segment's forward lists must be built.  Cost: the deleted
** documents' terms.  Needs exclusive access.  Since: 0.1
*/
RV_API rv_status rv_bm25_delete(rv_bm25 *index, const int64_t *ids, size_t n,
                                size_t *n_deleted /* OUT */);

/*
** Drop the postings of deleted documents and renumber the live ones
** internally (caller ids, statistics and scores do not change).  O(index).
** Returns RV_OK; RV_E_INVALID_ARG for a NULL index; RV_E_NOMEM (index
** unchanged).  Needs exclusive access.
** Since: 0.1
*/
RV_API rv_status rv_bm25_compact(rv_bm25 *index);

/* Change the scoring parameters (O(1): weights and bounds are computed at
** query time).  Returns RV_E_INVALID_ARG for a NULL index or params, or bad
** parameters.  Needs
** exclusive access.  Since: 0.1 */
RV_API rv_status rv_bm25_set_params(rv_bm25 *index, const rv_bm25_params *params);

/*
** Score with the statistics of a collection this index is one shard of, so
** that its BM25 scores equal those of one index over the whole collection
** (a sharded search merges the shards' hits on one scale).  The weights of
** the searches and of rv_bm25_explain then use N = n_docs (documents),
** avgdl = total_len / n_docs (total_len: the summed lengths of the
** collection's documents, in terms) and, for term id t of THIS index,
** df = dfs[t] (the collection's document frequency of that term); n_terms
** must be this index's term count (rv_bm25_info.n_terms).  The statistics
** are copied (the caller keeps dfs) and hold until the next change of the
** index (add, delete, compact, set_params), which returns it to its own;
** n_docs = 0 (with total_len = 0, dfs = NULL, n_terms = 0) returns to them
** now.  rv_bm25_get_info and rv_bm25_doc_freq keep reporting the index's own.
** Not thread-safe against searches of the same index (the caller locks).
** Errors: RV_E_INVALID_ARG for a NULL index, dfs NULL with n_terms > 0,
** n_docs below this index's live documents, total_len below its summed
** lengths, or a dfs[t] outside [this index's df of t, n_docs];
** RV_E_SHAPE for n_terms other than the index's; RV_E_NOMEM.  On error
** the index keeps the statistics it had.
** Since: 0.1
*/
RV_API rv_status rv_bm25_set_collection_stats(rv_bm25 *index, uint64_t n_docs, uint64_t total_len,
                                              const uint64_t *dfs, size_t n_terms);

/* Copy out the parameters / the analyzer options the index was built with.
** Returns RV_E_INVALID_ARG for NULL pointers.  Since: 0.1 */
RV_API rv_status rv_bm25_get_params(const rv_bm25 *index, rv_bm25_params *out /* OUT */);
RV_API rv_status rv_bm25_get_analyzer(const rv_bm25 *index, rv_analyzer_options *out /* OUT */);

/* Sizes and statistics of an index. */
typedef struct rv_bm25_info {
    uint64_t n_docs;       /* documents held: live + deleted not compacted */
    uint64_t n_live;       /* documents searchable */
    uint64_t n_tombstoned; /* deleted, postings still stored */
    uint64_t n_stats_docs; /* N of the formulas: the live documents */
    uint64_t total_len;    /* sum of dl over those documents */
    double avgdl;          /* total_len / n_stats_docs (0 when empty) */
    uint64_t n_terms;      /* distinct terms in the dictionary */
    uint64_t n_postings;   /* (term, document) pairs stored */
    uint64_t n_segments;   /* posting-list segments (compact makes one) */
    uint64_t memory_bytes; /* heap bytes held by the index */
    int64_t next_id;       /* the id an add without ids would use next */
} rv_bm25_info;

/* Fill *out.  Returns RV_E_INVALID_ARG for a NULL index or out.  Since: 0.1 */
RV_API rv_status rv_bm25_get_info(const rv_bm25 *index, rv_bm25_info *out /* OUT */);

/* Search flags. */
#define RV_BM25_EXHAUSTIVE 1u /* score every posting (no pruning) */

/* Work done by one search (for tests and benchmarks). */
typedef struct rv_bm25_search_info {
    uint64_t n_query_terms;   /* distinct query terms found in the dictionary */
    uint64_t docs_scored;     /* candidates whose full score was computed */
    uint64_t postings_scored; /* w(t, d) evaluations */
    uint64_t postings_total;  /* postings in the query terms' lists */
    uint64_t filter_docs;     /* live documents the filter allows */
    int filter_direct;        /* 1: the allowed documents were scored one by
                                 one (a small filter); 0: the pruned kernel
                                 skipped the others (or no filter) */
} rv_bm25_search_info;

/*
** Search with a text query.                              METHOD: rv_bm25
** The query is analysed with the index's analyzer; terms missing from the
** dictionary are ignored (a query without known terms finds nothing: RV_OK
** with *n_found = 0).  A term repeated in the query counts that many times.
** filter: NULL, or only documents whose id is in the set are ranked (ids
** not in the index are ignored); the top-k is exact among them.  Writes the
** best min(k, matches) documents' caller ids and scores into ids/scores
** (score desc, id asc); each must hold k slots.  info may be NULL.
** Returns RV_OK; RV_E_INVALID_ARG for k == 0, a NULL index, ids, scores or
** n_found, a NULL query with len > 0, unknown flags or invalid UTF-8
** (strict policy); RV_E_RANGE for a k or len no array can hold (core.h
** "Sizes"); RV_E_NOMEM.
** Ownership: borrows everything for the call.
** Thread-safety: concurrent searches OK.  Since: 0.1
*/
RV_API rv_status rv_bm25_search(const rv_bm25 *index, const char *query, size_t len, size_t k,
                                unsigned flags, const rv_idset *filter, int64_t *ids /* OUT */,
                                float *scores /* OUT */, size_t *n_found /* OUT */,
                                rv_bm25_search_info *info /* OUT */);

/*
** Search with term ids (from rv_bm25_lookup); repeats count.  As
** rv_bm25_search otherwise (term_ids may be NULL when n_terms == 0);
** RV_E_RANGE for a term id >= the number of terms or an n_terms no array
** can hold.
** Since: 0.1
*/
RV_API rv_status rv_bm25_search_terms(const rv_bm25 *index, const uint32_t *term_ids,
                                      size_t n_terms, size_t k, unsigned flags,
                                      const rv_idset *filter, int64_t *ids /* OUT */,
                                      float *scores /* OUT */, size_t *n_found /* OUT */,
                                      rv_bm25_search_info *info /* OUT */);

/*
** Search many text queries on n_threads threads (core.h "Threads"; 0: one
** per online CPU; never more than n_queries).  Row q of ids/scores (k slots each, n_queries
** rows) gets query q's results, padded with RV_BM25_NO_DOC and NaN;
** n_found[q] gets their number.  filter (may be NULL) applies to every
** query and is translated once for the batch.  Results do not depend on
** n_threads.  progress (may be NULL) is called on the calling thread with
** queries done; a nonzero return stops the batch with RV_E_INTERRUPTED.
** Returns as rv_bm25_search (nothing is checked past index, k and flags
** when n_queries == 0; RV_E_RANGE for an n_queries * k, or a lens[q], no
** array can hold -- core.h "Sizes" -- and RV_E_INVALID_ARG for a NULL
** queries[q] with lens[q] > 0, both checked before any query runs); the
** first failing query (lowest index) names itself in the message.  Thread-safety: concurrent searches OK.
** Since: 0.1
*/
RV_API rv_status rv_bm25_search_batch(const rv_bm25 *index, size_t n_queries,
                                      const char *const *queries, const size_t *lens, size_t k,
                                      unsigned flags, const rv_idset *filter, unsigned n_threads,
                                      rv_progress_fn progress, void *progress_ctx,
                                      int64_t *ids /* OUT */, float *scores /* OUT */,
                                      uint32_t *n_found /* OUT */);

/* One row of rv_bm25_explain. */
typedef struct rv_bm25_explain_row {
    uint32_t term_id;
    uint32_t qtf;        /* times the term occurs in the query */
    uint32_t tf;         /* times it occurs in the document (0: absent) */
    uint64_t df;         /* documents containing it (statistics) */
    double idf;          /* the variant's idf */
    float weight;        /* w(t, d), single precision as scored; 0 if absent */
    double contribution; /* qtf * weight */
} rv_bm25_explain_row;

/*
** Explain the score of the document with caller id `id` for a text query:
** one row per distinct known query term, in ascending term id -- the order
** the score is summed in -- so the contributions add up (in double
** precision, rounded to float) to exactly the score search reports.
** Writes at most capacity rows; *n_rows gets the number of rows
** (RV_E_SHAPE when capacity is too small).  *score (may be NULL) gets the
** total, *doc_len (may be NULL) gets dl.  Returns RV_E_RANGE for an id not
** in the index, or a len or capacity no array can hold (core.h "Sizes");
** RV_E_STATE for a deleted document; RV_E_INVALID_ARG for a NULL index or
** n_rows, a NULL rows with capacity > 0, a NULL query with len > 0, or as
** rv_bm25_search.
** Since: 0.1
*/
RV_API rv_status rv_bm25_explain(const rv_bm25 *index, const char *query, size_t len, int64_t id,
                                 rv_bm25_explain_row *rows /* OUT */, size_t capacity,
                                 size_t *n_rows /* OUT */, float *score /* OUT */,
                                 uint32_t *doc_len /* OUT */);

/*
** Dictionary lookups.  rv_bm25_lookup finds an analysed term (exact bytes):
** *found = 1 and *term_id, or *found = 0.  rv_bm25_term gives term id's
** bytes (*term points into the index: valid until the next add, compact or
** free) and rv_bm25_doc_freq its document frequency.  RV_E_RANGE for an id
** out of range or a len no array can hold; RV_E_INVALID_ARG for NULL
** pointers (term may be NULL when len == 0).
** Since: 0.1
*/
RV_API rv_status rv_bm25_lookup(const rv_bm25 *index, const char *term, size_t len,
                                uint32_t *term_id /* OUT */, int *found /* OUT */);
RV_API rv_status rv_bm25_term(const rv_bm25 *index, uint32_t term_id, const char **term,
                              size_t *len /* OUT */);
RV_API rv_status rv_bm25_doc_freq(const rv_bm25 *index, uint32_t term_id, uint64_t *df /* OUT */);

/* Document state, from rv_bm25_doc. */
#define RV_BM25_DOC_LIVE       0
#define RV_BM25_DOC_TOMBSTONED 1 /* deleted, postings still stored */
#define RV_BM25_DOC_PURGED     2 /* deleted, postings dropped by a merge */

/* Length (terms after analysis) and state of the latest document filed
** under caller id `id` (a deleted one until compaction forgets it);
** doc_len and state may each be NULL.  RV_E_RANGE for an id not in the
** index; RV_E_INVALID_ARG for a NULL index.  Since: 0.1 */
RV_API rv_status rv_bm25_doc(const rv_bm25 *index, int64_t id, uint32_t *doc_len /* OUT */,
                             int *state /* OUT */);

/* Is a live document filed under id?  0 or 1 (0 for NULL).  O(1).
** Since: 0.1 */
RV_API int rv_bm25_contains(const rv_bm25 *index, int64_t id);

/*
** Live caller ids, in the order their documents were added (after a
** compaction: the same order).  Writes min(capacity, live) ids and sets
** *n_ids to the number of live documents; RV_E_SHAPE when capacity is too
** small; RV_E_INVALID_ARG for NULL pointers (ids may be NULL when
** capacity == 0); RV_E_RANGE for a capacity no array can hold (core.h
** "Sizes").  Since: 0.1
*/
RV_API rv_status rv_bm25_ids(const rv_bm25 *index, int64_t *ids /* OUT */, size_t capacity,
                             size_t *n_ids /* OUT */);

/*
** Save to path: written to a temporary file beside it, flushed to disk and
** renamed over path, so a crash leaves either the old file or the new one
** (mode 0666 & ~umask; see "Files" in rowvoi/core.h).
** The format (little-endian) is a header with the magic "RVBM25IX", the
** format version and the payload size; the payload holds the parameters,
** the analyzer options and RV_ANALYZER_VERSION, document lengths, states
** and caller ids, the dictionary and the posting lists; a CRC-32C of
** everything before it ends the file.  Returns RV_E_IO naming the path and the
** system's reason; RV_E_INVALID_ARG for a NULL index or path; RV_E_NOMEM.
** Thread-safety: may run concurrently with searches.
** Since: 0.1
*/
RV_API rv_status rv_bm25_save(const rv_bm25 *index, const char *path);

/*
** rv_bm25_save with the file's permission bits: mode < 0 gives
** 0666 & ~umask (as rv_bm25_save); 0 <= mode <= 0777 gives exactly mode,
** whatever the umask -- set while the new file is still empty, so its
** bytes are never readable under another mode (e.g. 0600 for a private
** corpus).  RV_E_INVALID_ARG for NULL or a mode above 0777; otherwise as
** rv_bm25_save.
** Thread-safety: may run concurrently with searches.
** Since: 0.1
*/
RV_API rv_status rv_bm25_save_mode(const rv_bm25 *index, const char *path, long mode);

/*
** Load an index saved by rv_bm25_save.                  CONSTRUCTOR: rv_bm25
** Returns RV_OK and *out; RV_E_INVALID_ARG for a NULL path or out; RV_E_IO
** when the file cannot be read; RV_E_CORRUPT when it is not an index, is truncated, fails its checksum or
** any structural check; RV_E_VERSION when it was written with another
** format version (version 1, before caller ids, must be rebuilt from its
** documents; the message says so) or analyzer version; RV_E_NOMEM.  Never
** reads out of bounds, whatever the bytes.
** Since: 0.1
*/
RV_API rv_status rv_bm25_load(const char *path, rv_bm25 **out /* OUT */);

/*
** Load an index saved by rv_bm25_save from an open file.  CONSTRUCTOR: rv_bm25
** For hosts that open the file themselves, with the flags they need
** (O_NOFOLLOW inside a directory they do not trust, openat(2), ...).  fd
** must be open for reading and refer to a regular file: it is read from
** offset 0 to its size with pread(2), so its file offset is neither used nor
** moved; it stays open and owned by the caller.  name is used in messages
** only (NULL: "file descriptor N").  Returns what rv_bm25_load returns for
** the same file; RV_E_INVALID_ARG for out NULL or fd < 0; RV_E_IO when fd
** is not a regular file (a FIFO, socket, device or directory: the message
** names which, and nothing is read) or a read fails.
**
** rv_bm25_load itself opens path with O_RDONLY | O_NONBLOCK | O_NOCTTY |
** O_CLOEXEC (following symbolic links: the caller named the path) and loads
** as rv_bm25_load_fd does, so a FIFO or a device in place of the file is
** refused at once instead of blocking.
** Thread-safety: reentrant.  Since: 0.1
*/
RV_API rv_status rv_bm25_load_fd(int fd, const char *name, rv_bm25 **out /* OUT */);

/* The same, from and to memory.  rv_bm25_save_buffer writes at most
** capacity bytes and sets *size to the bytes needed (RV_E_SHAPE when
** capacity is too small; buf may be NULL with capacity 0 to ask).
** rv_bm25_load_buffer copies the size bytes at buf (NULL with size 0).
** Both: RV_E_INVALID_ARG for NULL pointers; RV_E_RANGE for a capacity or
** size no array can hold (core.h "Sizes").  Since: 0.1 */
RV_API rv_status rv_bm25_save_buffer(const rv_bm25 *index, void *buf, size_t capacity,
                                     size_t *size /* OUT */);
RV_API rv_status rv_bm25_load_buffer(const void *buf, size_t size, rv_bm25 **out /* OUT */);

#ifdef __cplusplus
}
#endif

#endif /* ROWVOI_BM25_H */
