/*
** Shared pieces of the fuzz targets (tests/fuzz/fuzz_*.c): the invariant
** check -- a broken invariant is a real bug, so it aborts and libFuzzer
** keeps the input; expected errors are statuses and never reach it -- and
** an independent strict UTF-8 validator to hold the engine's against.
*/
#ifndef RV_FUZZ_UTIL_H
#define RV_FUZZ_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define RVF_CHECK(cond)                                                                            \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz invariant failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__);     \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* Strict UTF-8 (no overlongs, surrogates or code points past U+10FFFF):
** 1 when valid, with the number of code points in *n (n may be NULL). */
static inline int rvf_valid_utf8(const uint8_t *s, size_t len, size_t *n) {
    size_t i = 0, count = 0;
    while (i < len) {
        uint8_t c = s[i];
        size_t k;
        uint32_t v;
        if (c < 0x80) {
            i++;
            count++;
            continue;
        }
        if (c >= 0xC2 && c <= 0xDF) {
            k = 1;
            v = c & 0x1F;
        } else if (c >= 0xE0 && c <= 0xEF) {
            k = 2;
            v = c & 0x0F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            k = 3;
            v = c & 0x07;
        } else
            return 0;
        for (size_t j = 1; j <= k; j++) {
            if (i + j >= len || (s[i + j] & 0xC0) != 0x80) return 0;
            v = (v << 6) | (s[i + j] & 0x3F);
        }
        if ((k == 2 && v < 0x800) || (k == 3 && (v < 0x10000 || v > 0x10FFFF)) ||
            (v >= 0xD800 && v <= 0xDFFF))
            return 0;
        i += k + 1;
        count++;
    }
    if (n) *n = count;
    return 1;
}

#endif /* RV_FUZZ_UTIL_H */
