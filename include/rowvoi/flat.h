/*
** rowvoi flat index: exact (brute-force) vector search.
**
** An rv_flat holds vectors of one dimension under integer ids and answers
** top-k queries by scoring every live vector.  Scores are computed in
** float32; optional float16 or int8 storage makes the scan cheaper and is
** always followed by exact float32 re-scoring of a candidate pool, so the
** reported scores are float32 scores whatever the storage.  An exact search
** (rv_flat_search_params.exact) of an int8 index under the inner product or
** cosine metric screens with the int8 copy: per vector it bounds the error
** of the int8 score (norms of the quantisation errors of vector and query,
** plus float32 rounding), scores in float32 only the vectors whose upper
** bound reaches the k-th best lower bound, and so returns exactly what a
** float32 scan of every vector returns (ids, order, scores bit for bit).
**
** Metrics and the score each search reports:
**   RV_METRIC_INNER_PRODUCT  score = q . x                 (higher first)
**   RV_METRIC_COSINE         score = q . x / (|q| |x|)     (higher first);
**                            vectors are normalised when added, so
**                            rv_flat_get returns unit vectors
**   RV_METRIC_L2             score = |q - x|^2, squared    (lower first)
** Ranking: best score first; equal scores are broken by the lower id.  The
** ranking is identical for any thread count.
**
** Ids are int64 values in [0, RV_FLAT_MAX_ID]; each live id is unique.
** Deleted vectors are tombstoned (no longer found, their id may be added
** again) until rv_flat_compact or a save/load round trip drops them.
**
** Memory: float32 storage keeps n * dim floats.  float16 and int8 storage
** keep the float32 rows for exact re-scoring plus the compact copy that is
** scanned (dim * 2 or dim + 16 bytes per vector).
**
** Files: rv_flat_save writes a versioned binary file (magic, format version,
** header and payload checksums) to a temporary name in the same directory,
** fsyncs it and renames it over the target, so a crash leaves the previous
** file intact.  The file is created with mode 0666 & ~umask, like any new
** file; a temporary left by a killed process is removed by the next save to
** the same path (see "Files" in rowvoi/core.h).  rv_flat_load verifies everything before it trusts a size:
** a truncated, altered or foreign file gives RV_E_CORRUPT, another format
** version RV_E_VERSION.
**
** Thread-safety: searches, rescoring, rv_flat_get, rv_flat_ids,
** rv_flat_contains, the properties and the saves may run concurrently on one
** index; rv_flat_add, rv_flat_remove and rv_flat_compact need exclusive
** access (no other call on the same index meanwhile).
*/
#ifndef ROWVOI_FLAT_H
#define ROWVOI_FLAT_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rv_flat rv_flat;

/* Largest dimension and largest id an index accepts. */
#define RV_FLAT_MAX_DIM 65536u
#define RV_FLAT_MAX_ID  RV_MAX_ID

/* The on-disk format version written by rv_flat_save. */
#define RV_FLAT_FORMAT_VERSION 1u

typedef enum rv_metric {
    RV_METRIC_INNER_PRODUCT = 0,
    RV_METRIC_COSINE = 1,
    RV_METRIC_L2 = 2
} rv_metric;

typedef enum rv_flat_storage {
    RV_FLAT_F32 = 0, /* scan float32 rows: exact */
    RV_FLAT_F16 = 1, /* scan IEEE half rows, then re-score in float32 */
    RV_FLAT_I8 = 2   /* scan int8 rows (one scale per vector), then re-score */
} rv_flat_storage;

/*
** Options of rv_flat_create.  Initialise with rv_flat_options_init, then set
** dim (required) and what else you need.
*/
typedef struct rv_flat_options {
    uint32_t dim;            /* 1 .. RV_FLAT_MAX_DIM */
    rv_metric metric;        /* default RV_METRIC_COSINE */
    rv_flat_storage storage; /* default RV_FLAT_F32 */
    uint32_t rescore_factor; /* F16/I8: the scan keeps k * rescore_factor
                                 candidates per query for exact re-scoring
                                 (default 8, 1 .. 1024); ignored for F32 */
} rv_flat_options;

/* Fill *opt with the defaults (dim 0, which must be set).  A NULL opt does
** nothing.  Since: 0.1 */
RV_API void rv_flat_options_init(rv_flat_options *opt /* OUT */);

/*
** Create an empty index.                                 CONSTRUCTOR: rv_flat
** Returns RV_OK and *out; RV_E_INVALID_ARG for a NULL pointer, an unknown
** metric or storage, or rescore_factor outside 1 .. 1024 (0 means the
** default); RV_E_RANGE for dim 0 or above RV_FLAT_MAX_DIM; RV_E_NOMEM.
** Ownership: free the result with rv_flat_free.
** Since: 0.1
*/
RV_API rv_status rv_flat_create(const rv_flat_options *opt, rv_flat **out /* OUT */);

/* Free an index.  NULL is a no-op.  Since: 0.1 */
RV_API void rv_flat_free(rv_flat *index);

/* Properties (0 for NULL).  rv_flat_size counts live vectors only.  Since: 0.1 */
RV_API uint32_t rv_flat_dim(const rv_flat *index);
RV_API rv_metric rv_flat_metric(const rv_flat *index);
RV_API rv_flat_storage rv_flat_storage_kind(const rv_flat *index);
RV_API uint32_t rv_flat_rescore_factor(const rv_flat *index);
RV_API size_t rv_flat_size(const rv_flat *index);
RV_API size_t rv_flat_n_deleted(const rv_flat *index);

/*
** Add n vectors.                                              METHOD: rv_flat
** vectors: n * dim floats, row after row.  ids: n ids, or NULL to number
** them from one past the largest id ever added (0 for an empty index).
** assigned: NULL or n slots that receive the ids used.
** Every vector must be finite and its squared norm must not overflow float;
** under the cosine metric its norm must be > 0; under float16 storage every
** component of the stored (for cosine: normalised) vector must be within
** +-65504.  All checks run before anything is added: on failure the index is
** unchanged.
** Returns RV_OK; RV_E_INVALID_ARG for a NULL index, NULL vectors with
** n > 0, a NaN or infinite component (naming vector and component),
** a zero vector under cosine, an id that is negative, above RV_FLAT_MAX_ID,
** already live or repeated within ids; RV_E_RANGE for a float16 overflow,
** a squared norm that overflows, or an n * dim no array can hold (core.h
** "Sizes"); RV_E_NOMEM.
** Ownership: copies the vectors.  Thread-safety: exclusive access.
** Since: 0.1
*/
RV_API rv_status rv_flat_add(rv_flat *index, size_t n, const float *vectors, const int64_t *ids,
                             int64_t *assigned /* OUT */);

/*
** Delete vectors by id.                                       METHOD: rv_flat
** "Delete" is the one verb for taking records out of any index (as
** rv_bm25_delete).  n ids; *n_deleted (OUT, may be NULL) gets the number
** deleted.  Returns RV_OK; RV_E_RANGE naming the first id that is not live
** (nothing is deleted then) or for an n no array can hold (core.h
** "Sizes"); RV_E_INVALID_ARG for a NULL index, NULL ids with n > 0, or an
** id repeated within ids.  Thread-safety: exclusive access.  Since: 0.1
*/
RV_API rv_status rv_flat_delete(rv_flat *index, size_t n, const int64_t *ids,
                                size_t *n_deleted /* OUT */);

/*
** Deprecated alias of rv_flat_delete (same arguments and statuses), kept so
** C hosts written against the earlier name keep building and linking; new
** code calls rv_flat_delete.  Since: 0.1 (deprecated)
*/
RV_API rv_status rv_flat_remove(rv_flat *index, size_t n, const int64_t *ids,
                                size_t *n_removed /* OUT */);

/*
** Drop the storage of deleted vectors.                        METHOD: rv_flat
** Live vectors keep their ids and order.  Returns RV_OK; RV_E_INVALID_ARG
** for a NULL index; RV_E_NOMEM (the index is unchanged then).  Thread-safety: exclusive access.
** Since: 0.1
*/
RV_API rv_status rv_flat_compact(rv_flat *index);

/* Is id live?  0 or 1 (0 for NULL).  Since: 0.1 */
RV_API int rv_flat_contains(const rv_flat *index, int64_t id);

/*
** Live ids in insertion order.  Writes min(capacity, size) ids and sets
** *n_ids to the number of live ids; returns RV_E_SHAPE when capacity is too
** small (ids then holds the first capacity ids).  RV_E_INVALID_ARG for NULL
** pointers (ids may be NULL when capacity == 0); RV_E_RANGE for a capacity
** no array can hold (core.h "Sizes").
** Since: 0.1
*/
RV_API rv_status rv_flat_ids(const rv_flat *index, int64_t *ids /* OUT */, size_t capacity,
                             size_t *n_ids /* OUT */);

/*
** Stored vectors of the given ids (n * dim floats into out).  Under the
** cosine metric these are the normalised vectors.  Returns RV_E_RANGE
** naming the first id that is not live, or for an n * dim no array can
** hold (core.h "Sizes"); RV_E_INVALID_ARG for a NULL index, or NULL ids or
** out with n > 0.
** Since: 0.1
*/
RV_API rv_status rv_flat_get(const rv_flat *index, size_t n, const int64_t *ids,
                             float *out /* OUT */);

/*
** Parameters of rv_flat_search.  Initialise with
** rv_flat_search_params_init, then set k and what else you need.
*/
typedef struct rv_flat_search_params {
    size_t k;                /* results per query, >= 1 */
    uint32_t n_threads;      /* see core.h "Threads"; 0: all cores, one
                                  below 2^21 row-query-dim products */
    uint32_t rescore_factor; /* 0: the index's; F16/I8 candidate pool is
                                  k * rescore_factor per query */
    int exact;               /* nonzero: exact float32 results under
                                  compact storage too (int8 with inner
                                  product or cosine: the int8 screen with
                                  error bounds, see the top; otherwise a
                                  scan of the float32 rows) */
    const rv_idset *filter;  /* NULL, or only ids in this set may be
                                  returned (ids not in the index are
                                  ignored); borrowed for the call */
    rv_progress_fn progress; /* optional; called from the calling thread */
    void *progress_ctx;
} rv_flat_search_params;

/* Fill *p with the defaults (k 10, all cores, index rescore factor).  A
** NULL p does nothing.  Since: 0.1 */
RV_API void rv_flat_search_params_init(rv_flat_search_params *p /* OUT */);

/*
** Top-k search for a batch of queries.                        METHOD: rv_flat
** queries: n_queries * dim floats.  For query i writes up to k results into
** ids[i*k ..] and scores[i*k ..], best first (see the metric table at the
** top; ties by lower id).  Every query finds the same number of results,
** *n_found = min(k, live vectors allowed); the slots past it get id -1 and
** score NaN.
** Returns RV_OK; RV_E_INVALID_ARG for a NULL index, params or n_found,
** NULL queries, ids or scores with n_queries > 0, k == 0, a NaN or
** infinite query component, or a zero query under cosine (naming the query);
** RV_E_RANGE for an n_queries * k or n_queries * dim no array can hold
** (core.h "Sizes"; the same bound as every function);
** RV_E_INTERRUPTED when progress asks to stop; RV_E_NOMEM.
** Memory: the caller's ids and scores hold n_queries * k slots, so pass a k
** no larger than you need (at most rv_flat_size); the engine's own buffers
** are sized by min(k, live vectors), whatever k is.
** Filter: only the panels of 16 rows that hold an allowed live row are
** scanned, so the cost falls with the allowed set (down to one panel per
** allowed row); the top-k is exact among the allowed rows for float32
** storage and for exact searches (compact storage re-scores its candidate
** pool as usual otherwise).
** Ownership: borrows everything for the call.
** Thread-safety: concurrent searches on one index are fine.
** Since: 0.1
*/
RV_API rv_status rv_flat_search(const rv_flat *index, const rv_flat_search_params *params,
                                size_t n_queries, const float *queries, int64_t *ids /* OUT */,
                                float *scores /* OUT */, size_t *n_found /* OUT */);

/*
** Exact re-scoring of given candidates.                       METHOD: rv_flat
** For query i the candidates are cand[i*n_cand .. (i+1)*n_cand); -1 entries
** are skipped, repeated ids count once.  Scores every candidate in float32
** and writes the best k (ties by lower id) as rv_flat_search does, with the
** count per query in n_found[i] (n_queries slots).  n_threads: core.h
** "Threads" (0: all cores, one below 2^20 candidate-dim products).
** Returns RV_OK; RV_E_RANGE naming a candidate id that is not live, or
** for an n_queries * k, n_queries * n_cand or n_queries * dim no array can
** hold (core.h "Sizes", checked before anything is written);
** RV_E_INVALID_ARG as rv_flat_search (cand may be NULL when n_cand == 0,
** and every array when n_queries == 0); RV_E_NOMEM.
** Thread-safety: concurrent calls on one index are fine.
** Since: 0.1
*/
RV_API rv_status rv_flat_rescore(const rv_flat *index, size_t n_queries, const float *queries,
                                 size_t n_cand, const int64_t *cand, size_t k, uint32_t n_threads,
                                 int64_t *ids /* OUT */, float *scores /* OUT */,
                                 size_t *n_found /* OUT */);

/*
** Save to path (UTF-8 on POSIX).  Writes only live vectors, through a
** temporary file in the same directory that is fsynced and renamed over
** path.  Returns RV_OK; RV_E_INVALID_ARG for a NULL index or path; RV_E_IO
** naming the path and the system error.
** Thread-safety: may run concurrently with searches.
** Since: 0.1
*/
RV_API rv_status rv_flat_save(const rv_flat *index, const char *path);

/*
** rv_flat_save with the file's permission bits: mode < 0 gives
** 0666 & ~umask (as rv_flat_save); 0 <= mode <= 0777 gives exactly mode,
** whatever the umask -- set while the new file is still empty, so its
** bytes are never readable under another mode (e.g. 0600 for a private
** corpus).  RV_E_INVALID_ARG for NULL or a mode above 0777; otherwise as
** rv_flat_save.
** Thread-safety: may run concurrently with searches.
** Since: 0.1
*/
RV_API rv_status rv_flat_save_mode(const rv_flat *index, const char *path, long mode);

/*
** Load an index saved by rv_flat_save.                   CONSTRUCTOR: rv_flat
** Returns RV_OK and *out; RV_E_INVALID_ARG for a NULL path or out; RV_E_IO
** when the file cannot be read; RV_E_CORRUPT when it is not a rowvoi flat
** index or is truncated or altered (naming the check that failed);
** RV_E_VERSION for another format version; RV_E_NOMEM.  Never trusts a
** size before the header checksum passed.
** Since: 0.1
*/
RV_API rv_status rv_flat_load(const char *path, rv_flat **out /* OUT */);

/*
** Load an index saved by rv_flat_save from an open file.  CONSTRUCTOR: rv_flat
** For hosts that open the file themselves, with the flags they need
** (O_NOFOLLOW inside a directory they do not trust, openat(2) relative to a
** directory descriptor, ...).  fd must be open for reading and refer to a
** regular file: it is read from offset 0 to its size with pread(2), so its
** file offset is neither used nor moved; it stays open and owned by the
** caller.  name is used in messages only (NULL: "file descriptor N").
** Returns what rv_flat_load returns for the same file; RV_E_INVALID_ARG for
** out NULL or fd < 0; RV_E_IO when fd is not a regular file (a FIFO, socket,
** device or directory: the message names which, and nothing is read) or a
** read fails.
**
** rv_flat_load itself opens path with O_RDONLY | O_NONBLOCK | O_NOCTTY |
** O_CLOEXEC (it follows symbolic links: the caller named the path) and then
** loads as rv_flat_load_fd does, so a FIFO or a device in place of the file
** is refused at once instead of blocking.
** Thread-safety: reentrant; two loads may read one descriptor at once.
** Since: 0.1
*/
RV_API rv_status rv_flat_load_fd(int fd, const char *name, rv_flat **out /* OUT */);

/*
** The same, to and from memory (the bytes of the file, so a buffer saved
** here loads with rv_flat_load once written to disk, and the other way
** round).                                        METHOD / CONSTRUCTOR: rv_flat
** rv_flat_save_buffer writes at most capacity bytes and sets *size to the
** bytes needed: RV_E_SHAPE when capacity is too small (buf may be NULL with
** capacity 0 to ask); RV_E_INVALID_ARG for NULL pointers; RV_E_RANGE for
** a capacity no array can hold (core.h "Sizes"); RV_E_NOMEM.
** rv_flat_load_buffer copies what it needs (buf is not kept) and returns
** what rv_flat_load returns for the same bytes (buf may be NULL when size
** is 0; RV_E_RANGE for a size no array can hold).
** Thread-safety: saving may run concurrently with searches.  Since: 0.1
*/
RV_API rv_status rv_flat_save_buffer(const rv_flat *index, void *buf, size_t capacity,
                                     size_t *size /* OUT */);
RV_API rv_status rv_flat_load_buffer(const void *buf, size_t size, rv_flat **out /* OUT */);

/*
** Check queries as rv_flat_search and rv_flat_rescore do.     METHOD: rv_flat
** For hosts that search the same vectors elsewhere (an HNSW graph) and want
** the same contract for bad queries.  Returns RV_OK; RV_E_INVALID_ARG for a
** NULL pointer (queries may be NULL when n_queries == 0), a NaN or infinite
** component ("queries[i][j] = nan: queries must be finite") or a zero query
** under cosine; RV_E_RANGE for a squared norm that overflows float32 or an
** n_queries * dim no array can hold (core.h "Sizes").
** Thread-safety: reads only the dimension and metric, which never change;
** may run concurrently with anything.  Since: 0.1
*/
RV_API rv_status rv_flat_check_queries(const rv_flat *index, size_t n_queries,
                                       const float *queries);

#ifdef __cplusplus
}
#endif

#endif /* ROWVOI_FLAT_H */
