/*
** rv_test.h -- a tiny header-only harness for the rowvoi C unit tests.
**
** Each test is a `static void test_xxx(void)`.  The ASSERT_* macros record a
** failure with file and line and `return` from the current function, so use
** them in void functions only.  The EXPECT_* twins record and carry on.
**
**   int main(void) {
**       RUN_TEST(test_one);
**       RUN_TEST(test_two);
**       return RV_TEST_SUMMARY();
**   }
**
** RV_TEST_SUMMARY() prints a count and evaluates to 0 only when every test
** passed, so it can be returned from main for ctest.
*/
#ifndef RV_TEST_H
#define RV_TEST_H

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <rowvoi.h>

/* The allocation-failure hook of test builds (src/core/status.c; CMake
** defines RV_TEST_HOOKS for the engine when RV_BUILD_TESTS=ON). */
RV_API uint64_t rv__test_fail_alloc_after(uint64_t n);
/* The postings limit of BM25's term-at-a-time kernel (src/lexical/search.c;
** 0: the pruned kernels serve every search); returns the previous limit. */
RV_API uint64_t rv__test_bm25_taat_postings(uint64_t n);

#if defined(__GNUC__) || defined(__clang__)
#  define RVT__UNUSED       __attribute__((unused))
#  define RVT__PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#  define RVT__UNUSED
#  define RVT__PRINTF(f, a)
#endif

static int rvt_n_tests RVT__UNUSED;        /* tests run */
static int rvt_n_failed_tests RVT__UNUSED; /* tests with >= 1 failure */
static long rvt_n_checks RVT__UNUSED;      /* assertions evaluated */
static long rvt_n_failures RVT__UNUSED;    /* assertions that failed */
static const char *rvt_current RVT__UNUSED = "(no test)";

/* Record one failed check and print where and why. */
static RVT__UNUSED RVT__PRINTF(3, 4) void rvt_fail(const char *file, int line, const char *fmt,
                                                   ...) {
    va_list ap;
    rvt_n_failures++;
    fprintf(stderr, "  FAIL %s:%d in %s: ", file, line, rvt_current);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
}

/* The checks.  Each expands to a statement; `act` is what to do on failure
** (`return` for ASSERT, nothing for EXPECT). */
#define RVT__TRUE(cond, act)                                                                       \
    do {                                                                                           \
        rvt_n_checks++;                                                                            \
        if (!(cond)) {                                                                             \
            rvt_fail(__FILE__, __LINE__, "expected true: %s", #cond);                              \
            act;                                                                                   \
        }                                                                                          \
    } while (0)

/* Integers of any width: both sides are evaluated once and compared as
** long long (unsigned values above LLONG_MAX print wrapped). */
#define RVT__EQ(a, b, act)                                                                         \
    do {                                                                                           \
        long long rvt_a_ = (long long)(a), rvt_b_ = (long long)(b);                                \
        rvt_n_checks++;                                                                            \
        if (rvt_a_ != rvt_b_) {                                                                    \
            rvt_fail(__FILE__, __LINE__, "%s == %s: got %lld vs %lld", #a, #b, rvt_a_, rvt_b_);    \
            act;                                                                                   \
        }                                                                                          \
    } while (0)

#define RVT__NE(a, b, act)                                                                         \
    do {                                                                                           \
        long long rvt_a_ = (long long)(a), rvt_b_ = (long long)(b);                                \
        rvt_n_checks++;                                                                            \
        if (rvt_a_ == rvt_b_) {                                                                    \
            rvt_fail(__FILE__, __LINE__, "%s != %s: both are %lld", #a, #b, rvt_a_);               \
            act;                                                                                   \
        }                                                                                          \
    } while (0)

#define RVT__LE(a, b, act)                                                                         \
    do {                                                                                           \
        long long rvt_a_ = (long long)(a), rvt_b_ = (long long)(b);                                \
        rvt_n_checks++;                                                                            \
        if (!(rvt_a_ <= rvt_b_)) {                                                                 \
            rvt_fail(__FILE__, __LINE__, "%s <= %s: got %lld vs %lld", #a, #b, rvt_a_, rvt_b_);    \
            act;                                                                                   \
        }                                                                                          \
    } while (0)

/* Doubles: |a - b| <= tol; NaN on either side fails. */
#define RVT__NEAR(a, b, tol, act)                                                                  \
    do {                                                                                           \
        double rvt_a_ = (double)(a), rvt_b_ = (double)(b);                                         \
        rvt_n_checks++;                                                                            \
        if (!(fabs(rvt_a_ - rvt_b_) <= (double)(tol))) {                                           \
            rvt_fail(__FILE__, __LINE__, "%s ~= %s: got %.17g vs %.17g (tol %g)", #a, #b, rvt_a_,  \
                     rvt_b_, (double)(tol));                                                       \
            act;                                                                                   \
        }                                                                                          \
    } while (0)

/* rv_status checks: name the status and the library's message. */
#define RVT__STATUS(expected, expr, act)                                                           \
    do {                                                                                           \
        rv_status rvt_want_ = (expected), rvt_got_ = (expr);                                       \
        rvt_n_checks++;                                                                            \
        if (rvt_got_ != rvt_want_) {                                                               \
            rvt_fail(__FILE__, __LINE__, "%s: expected %s, got %s (%s)", #expr,                    \
                     rv_status_name(rvt_want_), rv_status_name(rvt_got_), rv_errmsg());            \
            act;                                                                                   \
        }                                                                                          \
    } while (0)

#define RVT__STR_CONTAINS(hay, needle, act)                                                        \
    do {                                                                                           \
        const char *rvt_h_ = (hay), *rvt_n_ = (needle);                                            \
        rvt_n_checks++;                                                                            \
        if (!rvt_h_ || !strstr(rvt_h_, rvt_n_)) {                                                  \
            rvt_fail(__FILE__, __LINE__, "\"%s\" does not contain \"%s\"",                         \
                     rvt_h_ ? rvt_h_ : "(null)", rvt_n_);                                          \
            act;                                                                                   \
        }                                                                                          \
    } while (0)

#define RVT__STR_EQ(a, b, act)                                                                     \
    do {                                                                                           \
        const char *rvt_a_ = (a), *rvt_b_ = (b);                                                   \
        rvt_n_checks++;                                                                            \
        if (!rvt_a_ || !rvt_b_ || strcmp(rvt_a_, rvt_b_) != 0) {                                   \
            rvt_fail(__FILE__, __LINE__, "%s == %s: \"%s\" vs \"%s\"", #a, #b,                     \
                     rvt_a_ ? rvt_a_ : "(null)", rvt_b_ ? rvt_b_ : "(null)");                      \
            act;                                                                                   \
        }                                                                                          \
    } while (0)

#define ASSERT_TRUE(c)                   RVT__TRUE(c, return)
#define ASSERT_EQ(a, b)                  RVT__EQ(a, b, return)
#define ASSERT_NE(a, b)                  RVT__NE(a, b, return)
#define ASSERT_LE(a, b)                  RVT__LE(a, b, return)
#define ASSERT_NEAR(a, b, tol)           RVT__NEAR(a, b, tol, return)
#define ASSERT_STATUS(expected, expr)    RVT__STATUS(expected, expr, return)
#define ASSERT_OK(expr)                  RVT__STATUS(RV_OK, expr, return)
#define ASSERT_STR_EQ(a, b)              RVT__STR_EQ(a, b, return)
#define ASSERT_STR_CONTAINS(hay, needle) RVT__STR_CONTAINS(hay, needle, return)

#define EXPECT_TRUE(c)                   RVT__TRUE(c, (void)0)
#define EXPECT_EQ(a, b)                  RVT__EQ(a, b, (void)0)
#define EXPECT_NE(a, b)                  RVT__NE(a, b, (void)0)
#define EXPECT_LE(a, b)                  RVT__LE(a, b, (void)0)
#define EXPECT_NEAR(a, b, tol)           RVT__NEAR(a, b, tol, (void)0)
#define EXPECT_STATUS(expected, expr)    RVT__STATUS(expected, expr, (void)0)
#define EXPECT_OK(expr)                  RVT__STATUS(RV_OK, expr, (void)0)
#define EXPECT_STR_CONTAINS(hay, needle) RVT__STR_CONTAINS(hay, needle, (void)0)

/* Fail unconditionally with a formatted note (then return). */
#define FAILF(...)                                                                                 \
    do {                                                                                           \
        rvt_n_checks++;                                                                            \
        rvt_fail(__FILE__, __LINE__, __VA_ARGS__);                                                 \
        return;                                                                                    \
    } while (0)

/* Run one test function and print a TAP-like line for it. */
#define RUN_TEST(fn)                                                                               \
    do {                                                                                           \
        long rvt_before_ = rvt_n_failures;                                                         \
        rvt_current = #fn;                                                                         \
        rvt_n_tests++;                                                                             \
        fn();                                                                                      \
        if (rvt_n_failures != rvt_before_) {                                                       \
            rvt_n_failed_tests++;                                                                  \
            printf("not ok %d - %s\n", rvt_n_tests, #fn);                                          \
        } else {                                                                                   \
            printf("ok %d - %s\n", rvt_n_tests, #fn);                                              \
        }                                                                                          \
        fflush(stdout);                                                                            \
    } while (0)

/* Print the totals; 0 when every test passed, 1 otherwise. */
static RVT__UNUSED int rvt_summary(const char *file) {
    printf("%s: %d tests, %d failed; %ld checks, %ld failed\n", file, rvt_n_tests,
           rvt_n_failed_tests, rvt_n_checks, rvt_n_failures);
    return rvt_n_failures != 0 || rvt_n_tests == 0;
}

#define RV_TEST_SUMMARY() rvt_summary(__FILE__)

#endif /* RV_TEST_H */
