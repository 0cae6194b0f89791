/*
** Bitset counting helpers.  Plain word loops, compiled per x86-64 level
** (RV__HOT_CLONES) so POPCNT is used where the CPU has it while the default
** build stays portable.  A NULL bitset or a word count no array can hold
** (core.h "Sizes") counts 0: one test before the loop.
*/
#include "../internal.h"

RV__HOT_CLONES
uint64_t rv_bitset_count(const uint64_t *a, size_t nwords) {
    if (!a || !rv__fits(nwords, sizeof *a)) return 0;
    uint64_t n = 0;
    for (size_t i = 0; i < nwords; i++) n += rv__popcount64(a[i]);
    return n;
}

RV__HOT_CLONES
uint64_t rv_bitset_count_andnot(const uint64_t *a, const uint64_t *b, size_t nwords) {
    if (!a || !b || !rv__fits(nwords, sizeof *a)) return 0;
    uint64_t n = 0;
    for (size_t i = 0; i < nwords; i++) n += rv__popcount64(a[i] & ~b[i]);
    return n;
}

RV__HOT_CLONES
uint64_t rv_bitset_count_and(const uint64_t *a, const uint64_t *b, size_t nwords) {
    if (!a || !b || !rv__fits(nwords, sizeof *a)) return 0;
    uint64_t n = 0;
    for (size_t i = 0; i < nwords; i++) n += rv__popcount64(a[i] & b[i]);
    return n;
}
