/*
** rowvoi core: status codes, error messages, version, RNG, record ids,
** id sets (the filter type of every search), bitsets.
**
** Conventions used by every part of the C API (see include/rowvoi.h):
**   - Every fallible function returns rv_status; RV_OK (0) means success.
**     Results come back through trailing OUT parameters.
**   - On failure rv_errmsg() returns a message for the calling thread that
**     names the argument or file at fault.  Nothing aborts, nothing prints.
**   - Opaque handles come in create/free pairs; free accepts NULL.
**   - NULL: no function crashes on a NULL pointer.  A function returning
**     rv_status gives RV_E_INVALID_ARG with a message naming the argument
**     ("index must not be NULL"), unless its comment says NULL is allowed
**     there (an optional output, or an array whose count is 0).  A function
**     returning a value returns 0 (NULL, "") for a NULL handle, and a void
**     one does nothing; each comment says which.
**   - Sizes: every count that sizes an array the caller passes (n, k,
**     len, capacity, n_rows, ...) and every product of counts (n * dim,
**     n_queries * k, n_rows * n_cols) must describe an array that can
**     exist: count * element size <= RV_MAX_BYTES.  A larger count
**     (SIZE_MAX, say, or a product that overflows) is RV_E_RANGE naming
**     the argument, reported before anything is read or written; a
**     function returning a value returns 0 for it.  Functions may bound a
**     count further (stated with them).  Limits that size no array
**     (max_new, node_budget, stop_unresolved, ...) take any value.
**   - Inputs are borrowed for the duration of a call unless a comment says
**     the engine copies them.
**   - Files: every save writes a temporary sibling "PATH.tmp-HOST-PID-RAND"
**     (created with mode 0666 & ~umask, like any new file, or with an
**     exact mode through the *_save_mode calls), fsyncs it,
**     renames it over PATH and fsyncs the directory, so a crash leaves the
**     previous file or the new one, never a mix.  A temporary left by a
**     killed process is removed by the next save to the same PATH once its
**     process is gone (same host: no process PID; another host: older
**     than a day).
*/
#ifndef ROWVOI_CORE_H
#define ROWVOI_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "version.h"

#if defined(_WIN32) && defined(RV_SHARED)
#  if defined(RV_BUILDING)
#    define RV_API __declspec(dllexport)
#  else
#    define RV_API __declspec(dllimport)
#  endif
#elif defined(__GNUC__) || defined(__clang__)
#  define RV_API __attribute__((visibility("default")))
#else
#  define RV_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The largest array, in bytes, any argument may describe (see "Sizes"
** above): PTRDIFF_MAX, since no object larger can exist in C. */
#define RV_MAX_BYTES ((size_t)PTRDIFF_MAX)

/*
** Threads.  Every function taking n_threads follows one rule: a positive
** count is used as given, capped at 64 and at the number of independent work
** items (columns, chunks, queries, texts); 0 means one thread per online CPU,
** except that a job below the function's size threshold (stated with it)
** runs on the calling thread alone.  The calling thread always takes part.
** Results never depend on the thread count.
*/

/*
** Status codes.  The numbers are part of the ABI and never change; new codes
** are only ever appended.
*/
typedef enum rv_status {
    RV_OK = 0,
    RV_E_INVALID_ARG = 1, /* an argument is NULL, NaN, negative, ... */
    RV_E_NOMEM = 2,       /* an allocation failed */
    RV_E_SHAPE = 3,       /* array sizes disagree */
    RV_E_RANGE = 4,       /* an index or size is out of its range */
    RV_E_STATE = 5,       /* the handle is not in a state that allows this */
    RV_E_CORRUPT = 6,     /* a file or buffer failed its integrity checks */
    RV_E_VERSION = 7,     /* a file was written by another format version */
    RV_E_IO = 8,          /* reading or writing a file failed */
    RV_E_INTERRUPTED = 9, /* a progress callback asked to stop */
    RV_E_INFEASIBLE = 10, /* the problem has no solution (e.g. uncoverable) */
    RV_E_TIMEOUT = 11,    /* a time limit ran out; see the function's note */
    RV_E_INTERNAL = 99    /* an invariant broke: a bug, please report */
} rv_status;

/*
** Name of a status code, e.g. "RV_E_SHAPE".  Static storage, never NULL;
** unknown values give "RV_E_UNKNOWN".
** Since: 0.1
*/
RV_API const char *rv_status_name(rv_status status);

/*
** Detail message of the last failure on the calling thread ("" when none).
** Thread-local storage owned by the library; valid until the next rowvoi call
** on this thread.
** Since: 0.1
*/
RV_API const char *rv_errmsg(void);

/* Clear the calling thread's error message.  Since: 0.1 */
RV_API void rv_errmsg_clear(void);

/* Library version as a string ("0.1.0") and as RV_VERSION_NUMBER.  Since: 0.1 */
RV_API const char *rv_version(void);
RV_API int rv_version_number(void);

/*
** Progress and cancellation.  Long kernels call this from the calling thread
** with the work done so far and the total (units are the kernel's own).  A
** nonzero return stops the kernel with RV_E_INTERRUPTED.
*/
typedef int (*rv_progress_fn)(void *ctx, uint64_t done, uint64_t total);


/*
** Seeded pseudo-random generator: splitmix64 expands the seed into the state
** of xoshiro256**.  The same seed gives the same stream on every platform.
** A plain struct so callers can keep one on the stack; no global state.
*/
typedef struct rv_rng {
    uint64_t s[4];
} rv_rng;

/* Seed a generator.  Any seed, including 0, is valid.  A NULL rng does
** nothing.  Since: 0.1 */
RV_API void rv_rng_seed(rv_rng *rng, uint64_t seed);

/* Seed a generator for work item `stream` of a job seeded with `seed`, so a
** multi-threaded job draws the same numbers whatever the thread count.  A
** NULL rng does nothing.  Since: 0.1 */
RV_API void rv_rng_seed_stream(rv_rng *rng, uint64_t seed, uint64_t stream);

/* Next 64 random bits (0 for a NULL rng).  Since: 0.1 */
RV_API uint64_t rv_rng_next(rv_rng *rng);

/* Uniform integer in [0, bound) without modulo bias; bound 0, or a NULL
** rng, gives 0.  Since: 0.1 */
RV_API uint64_t rv_rng_below(rv_rng *rng, uint64_t bound);

/* Uniform double in [0, 1) with 53 random bits (0.0 for a NULL rng).
** Since: 0.1 */
RV_API double rv_rng_uniform(rv_rng *rng);

/*
** Record ids.  Every index (BM25, flat, HNSW through Python) keys its
** entries by caller-chosen int64 ids in [0, RV_MAX_ID]; a corpus owns them.
*/
#define RV_MAX_ID ((int64_t)0x7ffffffffffffffeLL)

/*
** Id sets: the one filter type every search kernel takes.
**
** An rv_idset is an immutable set of record ids built once from an array
** (repeats collapse) and then shared, read-only, by any number of searches
** on any number of threads and indexes.  Membership is O(1) whatever the
** size: the ids are kept sorted (for ordered walks and rv_idset_ids) with an
** open-addressing hash table over them.  Memory: about 16 bytes per id.
** Kernels translate a set into their own internal numbering once per call
** (or once per batch), so a filtered top-k is exact -- only allowed entries
** ever enter the result heap -- and costs less as the set shrinks.
*/
typedef struct rv_idset rv_idset;

/*
** Build a set from n ids (any order, repeats allowed).   CONSTRUCTOR: rv_idset
** ids may be NULL when n == 0 (the empty set: a filter that allows nothing).
** Returns RV_OK and *out; RV_E_INVALID_ARG for a NULL out, NULL ids with
** n > 0, or an id outside 0 .. RV_MAX_ID (naming it); RV_E_RANGE for more
** than 2^32 - 2 distinct ids or an n no array can hold (core.h "Sizes");
** RV_E_NOMEM.
** Ownership: copies the ids; free the set with rv_idset_free.
** Cost: O(n) (radix sort, then the hash table).  Since: 0.1
*/
RV_API rv_status rv_idset_create(const int64_t *ids, size_t n, rv_idset **out /* OUT */);

/* Free a set.  NULL is a no-op.  Since: 0.1 */
RV_API void rv_idset_free(rv_idset *set);

/* Number of distinct ids (0 for NULL).  Since: 0.1 */
RV_API size_t rv_idset_size(const rv_idset *set);

/* 1 when id is in the set, else 0 (0 for NULL).  O(1).  Thread-safety:
** concurrent calls are fine.  Since: 0.1 */
RV_API int rv_idset_contains(const rv_idset *set, int64_t id);

/*
** The ids in ascending order.  Writes min(capacity, size) ids and sets *n
** to the size; returns RV_E_SHAPE when capacity is too small (out then holds
** the smallest capacity ids); RV_E_INVALID_ARG for NULL set or n, or NULL
** out with capacity > 0; RV_E_RANGE for a capacity no array can hold
** (core.h "Sizes").  Since: 0.1
*/
RV_API rv_status rv_idset_ids(const rv_idset *set, int64_t *out /* OUT */, size_t capacity,
                              size_t *n /* OUT */);

/*
** Bitsets are arrays of uint64_t words; bit i lives in word i / 64 at
** position i % 64.  Helpers below take the number of words, and assume the
** unused high bits of the last word are zero.  They return 0 for a NULL
** bitset or an nwords no array can hold (core.h "Sizes"); NULL is fine
** with nwords == 0.
*/
#define RV_BITSET_WORDS(nbits) (((size_t)(nbits) + 63u) / 64u)

/* Number of set bits in a[0..nwords).  Since: 0.1 */
RV_API uint64_t rv_bitset_count(const uint64_t *a, size_t nwords);

/* Number of bits set in a and not set in b.  Since: 0.1 */
RV_API uint64_t rv_bitset_count_andnot(const uint64_t *a, const uint64_t *b, size_t nwords);

/* Number of bits set in both a and b.  Since: 0.1 */
RV_API uint64_t rv_bitset_count_and(const uint64_t *a, const uint64_t *b, size_t nwords);

#ifdef __cplusplus
}
#endif

#endif /* ROWVOI_CORE_H */
