/*
** Internals shared by the engine's .c files.  Never installed.
*/
#ifndef ROWVOI_INTERNAL_H
#define ROWVOI_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "rowvoi.h"

/* RV__PREFETCH(p) / RV__PREFETCH_W(p): a hint to bring the line at p into
** the caches for a read / a write (no effect on results; nothing where the
** compiler has no such builtin).  RV__NOINLINE keeps a function out of its
** callers (where inlining it would cost a hotter caller its own). */
#if defined(__GNUC__) || defined(__clang__)
#  define RV__PRINTF(f, a)  __attribute__((format(printf, f, a)))
#  define RV__LIKELY(x)     __builtin_expect(!!(x), 1)
#  define RV__UNLIKELY(x)   __builtin_expect(!!(x), 0)
#  define RV__PREFETCH(p)   __builtin_prefetch((p), 0, 3)
#  define RV__PREFETCH_W(p) __builtin_prefetch((p), 1, 3)
#  define RV__NOINLINE      __attribute__((noinline))
#else
#  define RV__PRINTF(f, a)
#  define RV__LIKELY(x)     (x)
#  define RV__UNLIKELY(x)   (x)
#  define RV__PREFETCH(p)   ((void)0)
#  define RV__PREFETCH_W(p) ((void)0)
#  define RV__NOINLINE
#endif

/* Hot bitset kernels are compiled for several x86-64 levels and picked at
** load time (GNU ifunc), so the default build runs on any x86-64 while
** using POPCNT/AVX2 where present.  -DRV_NO_MULTIVERSION switches it off.
** ThreadSanitizer builds switch it off too: the ifunc resolvers run during
** relocation, before the TSan runtime is up, and crash every program.
** GCC only: clang 14 emits the clones of these external functions without
** the dispatcher symbol, so the library fails to link (clang builds, the
** fuzz tier, take the portable loop). */
#if defined(__SANITIZE_THREAD__)
#  define RV__TSAN 1
#elif defined(__has_feature)
#  if __has_feature(thread_sanitizer)
#    define RV__TSAN 1
#  endif
#endif
#if defined(__x86_64__) && defined(__linux__) && !defined(RV_NO_MULTIVERSION) &&                   \
    !defined(RV__TSAN) && defined(__GNUC__) && !defined(__clang__)
#  define RV__HOT_CLONES                                                                           \
      __attribute__((target_clones("arch=x86-64-v3", "arch=x86-64-v2", "default")))
#else
#  define RV__HOT_CLONES
#endif

/* All engine allocations go through these, so tests can inject failures.
** rv__malloc(0) returns a valid unique pointer.  Sizes that overflow when
** multiplied give NULL. */
void *rv__malloc(size_t size);
void *rv__calloc(size_t count, size_t size);
void *rv__realloc(void *ptr, size_t size);
void rv__free(void *ptr);

#ifdef RV_TEST_HOOKS
/* Test hook, compiled only into test builds (CMake RV_BUILD_TESTS=ON defines
** RV_TEST_HOOKS; never in a wheel): make the n-th allocation from now on
** fail (n >= 1) on the calling thread; 0 switches failure injection off.
** Returns the number of allocations performed since the last call.  It is
** exported from librowvoi in test builds only, so C tests can link either
** library. */
RV_API uint64_t rv__test_fail_alloc_after(uint64_t n);
/* Test hook: BM25 searches take the term-at-a-time kernel for a segment
** only when the query's lists hold at most n postings there (0: only for
** segments without any, so the pruned kernels serve every search); returns
** the limit it replaces.  Process-wide: set it while no search runs. */
RV_API uint64_t rv__test_bm25_taat_postings(uint64_t n);
#endif

/* Record a failure for rv_errmsg() and return the status, so call sites can
** write `return rv__error(RV_E_RANGE, "...", ...);`. */
rv_status rv__error(rv_status status, const char *fmt, ...) RV__PRINTF(2, 3);

/* Shorthand for an allocation failure naming what was being allocated. */
rv_status rv__nomem(const char *what);

/* ---- argument checks shared by every public function (core.h "NULL" and
** "Sizes").  Names are the header's argument names, so the message a
** caller reads names the argument it passed. */

/* RV_E_INVALID_ARG: "NAME must not be NULL". */
rv_status rv__null(const char *name);

/* 1 when an array of count elements of elem_size (> 0) bytes can exist:
** count * elem_size <= RV_MAX_BYTES, computed without overflow. */
static inline int rv__fits(size_t count, size_t elem_size) {
    return count <= RV_MAX_BYTES / elem_size;
}

/* The same for an array of a * b elements (n * dim, n_queries * k). */
static inline int rv__fits2(size_t a, size_t b, size_t elem_size) {
    return b == 0 || a <= RV_MAX_BYTES / elem_size / b;
}

/* RV_E_RANGE naming a count (or a product "a * b") that no array of
** elem_size-byte elements can hold. */
rv_status rv__too_large(const char *name, size_t count, size_t elem_size);
rv_status rv__too_large2(const char *a_name, size_t a, const char *b_name, size_t b,
                         size_t elem_size);

/* return RV_E_INVALID_ARG from the calling function when p is NULL. */
#define RV__NOT_NULL(p, name)                                                                      \
    do {                                                                                           \
        if (!(p)) return rv__null(name);                                                           \
    } while (0)

/* return RV_E_RANGE from the calling function unless count elements of
** elem_size bytes (a * b of them for RV__SIZE2) can exist. */
#define RV__CHECK_SIZE(count, elem_size, name)                                                     \
    do {                                                                                           \
        if (!rv__fits((count), (elem_size))) return rv__too_large((name), (count), (elem_size));   \
    } while (0)
#define RV__CHECK_SIZE2(a, b, elem_size, a_name, b_name)                                           \
    do {                                                                                           \
        if (!rv__fits((a), (elem_size))) return rv__too_large((a_name), (a), (elem_size));         \
        if (!rv__fits((b), (elem_size))) return rv__too_large((b_name), (b), (elem_size));         \
        if (!rv__fits2((a), (b), (elem_size)))                                                     \
            return rv__too_large2((a_name), (a), (b_name), (b), (elem_size));                      \
    } while (0)

/* Monotonic clock in seconds. */
double rv__now(void);

/* The splitmix64 finalizer (Steele, Lea & Flood 2014): a bijective 64-bit
** mix with full avalanche.  Shared by the RNG's seeding, id hashing in the
** flat index and the hashing embedder. */
static inline uint64_t rv__mix64(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

/* ---- selection (src/core/select.c) */

/* The k-th largest (1 <= k <= n) of v[0 .. n), none of them NaN; reorders
** v so that v[0 .. k) are the k largest.  O(n) expected, O(n log n) at
** worst. */
double rv__kth_largest_f64(double *v, size_t n, size_t k);

/* ---- record ids and id sets (src/core/idset.c) */

/* The id set behind rv_idset (core.h): n distinct ids in ascending order,
** and a linear-probing table of mask + 1 slots (a power of two, at least
** twice n) holding 1 + the position of an id in ids, 0 for an empty slot. */
struct rv_idset {
    size_t n;
    int64_t *ids;
    uint32_t *slots;
    uint64_t mask;
};

static inline int rv__idset_has(const rv_idset *set, int64_t id) {
    uint64_t i = rv__mix64((uint64_t)id) & set->mask;
    for (;;) {
        uint32_t s = set->slots[i];
        if (!s) return 0;
        if (set->ids[s - 1] == id) return 1;
        i = (i + 1) & set->mask;
    }
}

/* Sort n int64 values ascending (LSD radix on the bytes that differ; tmp
** holds n values of scratch).  O(n) per differing byte. */
void rv__sort_i64(int64_t *a, size_t n, int64_t *tmp);
void rv__sort_u32(uint32_t *a, size_t n, uint32_t *tmp);

/* RV_E_INVALID_ARG naming the first id listed twice in ids[0 .. n);
** RV_E_NOMEM; else RV_OK.  Shared by every index that takes caller ids. */
rv_status rv__ids_check_distinct(const int64_t *ids, size_t n);

/* Popcount of one word. */
static inline unsigned rv__popcount64(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return (unsigned)__builtin_popcountll(x);
#else
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
    return (unsigned)((x * 0x0101010101010101ULL) >> 56);
#endif
}

static inline unsigned rv__ctz64(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return (unsigned)__builtin_ctzll(x);
#else
    unsigned n = 0;
    while (!(x & 1u)) {
        x >>= 1;
        n++;
    }
    return n;
#endif
}

/* Is `a` better than `b` as a ratio, comparing a_num/a_den with b_num/b_den
** (dens >= 0) with a relative tolerance, so that values equal up to rounding
** count as ties and the earlier candidate keeps its place.  Returns 1 when a
** is strictly better.  A zero denominator is a free item: with a positive
** numerator its ratio is +infinity (better than any finite ratio; between
** two free items the larger numerator wins), with a numerator <= 0 it is
** worth 0 -- so a free column that buys something comes first and one that
** buys nothing never wins a comparison it would lose at any price. */
static inline int rv__ratio_better(double a_num, double a_den, double b_num, double b_den) {
    int a_inf = !(a_den > 0) && a_num > 0, b_inf = !(b_den > 0) && b_num > 0;
    if (a_inf || b_inf) {
        if (a_inf != b_inf) return a_inf;
        double sc = (a_num > b_num ? a_num : b_num);
        return a_num - b_num > 1e-12 * sc;
    }
    if (!(a_den > 0)) {
        a_num = 0;
        a_den = 1;
    }
    if (!(b_den > 0)) {
        b_num = 0;
        b_den = 1;
    }
    double lhs = a_num * b_den, rhs = b_num * a_den;
    double scale = (lhs > rhs ? lhs : rhs);
    if (scale < 0) scale = -scale;
    return lhs - rhs > 1e-12 * scale;
}

#endif /* ROWVOI_INTERNAL_H */
