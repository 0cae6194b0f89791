/*
** Status names, thread-local error messages, version, allocation wrapper
** with failure injection, and the monotonic clock.
*/
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../internal.h"

#if defined(_MSC_VER)
#  define RV__THREAD_LOCAL __declspec(thread)
#else
#  define RV__THREAD_LOCAL _Thread_local
#endif

#define RV__ERRMSG_CAP 512

static RV__THREAD_LOCAL char rv__errbuf[RV__ERRMSG_CAP];

#ifdef RV_TEST_HOOKS
/* Allocation failure injection (tests): fail when the countdown hits 0. */
static RV__THREAD_LOCAL uint64_t rv__alloc_fail_countdown;
static RV__THREAD_LOCAL uint64_t rv__alloc_count;
#endif

const char *rv_status_name(rv_status status) {
    switch (status) {
    case RV_OK:
        return "RV_OK";
    case RV_E_INVALID_ARG:
        return "RV_E_INVALID_ARG";
    case RV_E_NOMEM:
        return "RV_E_NOMEM";
    case RV_E_SHAPE:
        return "RV_E_SHAPE";
    case RV_E_RANGE:
        return "RV_E_RANGE";
    case RV_E_STATE:
        return "RV_E_STATE";
    case RV_E_CORRUPT:
        return "RV_E_CORRUPT";
    case RV_E_VERSION:
        return "RV_E_VERSION";
    case RV_E_IO:
        return "RV_E_IO";
    case RV_E_INTERRUPTED:
        return "RV_E_INTERRUPTED";
    case RV_E_INFEASIBLE:
        return "RV_E_INFEASIBLE";
    case RV_E_TIMEOUT:
        return "RV_E_TIMEOUT";
    case RV_E_INTERNAL:
        return "RV_E_INTERNAL";
    }
    return "RV_E_UNKNOWN";
}

const char *rv_errmsg(void) {
    return rv__errbuf;
}

void rv_errmsg_clear(void) {
    rv__errbuf[0] = '\0';
}

const char *rv_version(void) {
    return RV_VERSION_STRING;
}

int rv_version_number(void) {
    return RV_VERSION_NUMBER;
}

rv_status rv__error(rv_status status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rv__errbuf, sizeof rv__errbuf, fmt, ap);
    va_end(ap);
    return status;
}

rv_status rv__nomem(const char *what) {
    return rv__error(RV_E_NOMEM, "out of memory allocating %s", what);
}

rv_status rv__null(const char *name) {
    return rv__error(RV_E_INVALID_ARG, "%s must not be NULL", name);
}

rv_status rv__too_large(const char *name, size_t count, size_t elem_size) {
    return rv__error(RV_E_RANGE,
                     "%s = %zu is too large: no array of that many %zu-byte items can exist "
                     "(at most %zu)",
                     name, count, elem_size, RV_MAX_BYTES / elem_size);
}

rv_status rv__too_large2(const char *a_name, size_t a, const char *b_name, size_t b,
                         size_t elem_size) {
    return rv__error(RV_E_RANGE,
                     "%s * %s = %zu * %zu is too large: no array of that many %zu-byte items "
                     "can exist (at most %zu)",
                     a_name, b_name, a, b, elem_size, RV_MAX_BYTES / elem_size);
}

#ifdef RV_TEST_HOOKS
uint64_t rv__test_fail_alloc_after(uint64_t n) {
    uint64_t done = rv__alloc_count;
    rv__alloc_count = 0;
    rv__alloc_fail_countdown = n;
    return done;
}

/* Returns 1 when this allocation must fail. */
static int rv__alloc_should_fail(void) {
    rv__alloc_count++;
    if (rv__alloc_fail_countdown == 0) return 0;
    if (--rv__alloc_fail_countdown == 0) return 1;
    return 0;
}
#else
/* Product builds carry no failure injection. */
#  define rv__alloc_should_fail() 0
#endif

void *rv__malloc(size_t size) {
    if (rv__alloc_should_fail()) return NULL;
    return malloc(size ? size : 1);
}

void *rv__calloc(size_t count, size_t size) {
    if (size && count > SIZE_MAX / size) return NULL;
    if (rv__alloc_should_fail()) return NULL;
    if (count == 0 || size == 0) return calloc(1, 1);
    return calloc(count, size);
}

void *rv__realloc(void *ptr, size_t size) {
    if (rv__alloc_should_fail()) return NULL;
    return realloc(ptr, size ? size : 1);
}

void rv__free(void *ptr) {
    free(ptr);
}

double rv__now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
