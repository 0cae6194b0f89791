/*
** Hits sorted best first -- score descending, then id ascending -- in
** linear time, for the long result lists of the BM25 and flat searches
** (k in the hundreds, where a comparison sort's branches mispredict at
** nearly every step).  Never installed.
**
** RV__SCORE_SORT(name, type, score, id) defines
**
**     static void name(type *h, size_t n, type *tmp);
**
** which sorts h[0 .. n) by the float member `score` (descending) and then
** the integer member `id` (ascending), using tmp (n slots of type) as a
** second buffer.  A stable radix sort on the four bytes of rv__score_key
** (a pass is skipped when its byte is the same in every hit), then each run
** of equal scores put in id order by insertion: a run is as long as a tie,
** so the sort is linear unless many hits tie.  0.0 and -0.0 are one score,
** as they compare equal; NaN sorts after every number (a NaN score is not
** produced by the searches).  The result is the one any correct sort by
** that order gives when ids are distinct.
*/
#ifndef ROWVOI_CORE_SCORE_SORT_H
#define ROWVOI_CORE_SCORE_SORT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A score's sort key: keys ascend as scores descend (the float's bits made
** to order as unsigned integers, then complemented). */
static inline uint32_t rv__score_key(float x) {
    uint32_t u;
    if (x == 0.0f) x = 0.0f; /* -0.0 -> 0.0 */
    memcpy(&u, &x, sizeof u);
    u = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
    return ~u;
}

#define RV__SCORE_SORT(name, type, score, id)                                                      \
    static void name(type *h, size_t n, type *tmp) {                                               \
        size_t cnt_[4][256];                                                                       \
        if (n < 2) return;                                                                         \
        memset(cnt_, 0, sizeof cnt_);                                                              \
        for (size_t i_ = 0; i_ < n; i_++) {                                                        \
            uint32_t key_ = rv__score_key(h[i_].score);                                            \
            for (int b_ = 0; b_ < 4; b_++) cnt_[b_][(key_ >> (8 * b_)) & 255]++;                   \
        }                                                                                          \
        type *src_ = h, *dst_ = tmp;                                                               \
        uint32_t key0_ = rv__score_key(h[0].score);                                                \
        for (int b_ = 0; b_ < 4; b_++) {                                                           \
            size_t *c_ = cnt_[b_], sum_ = 0;                                                       \
            if (c_[(key0_ >> (8 * b_)) & 255] == n) continue; /* one byte value: no pass */        \
            for (int v_ = 0; v_ < 256; v_++) {                                                     \
                size_t t_ = c_[v_];                                                                \
                c_[v_] = sum_;                                                                     \
                sum_ += t_;                                                                        \
            }                                                                                      \
            for (size_t i_ = 0; i_ < n; i_++)                                                      \
                dst_[c_[(rv__score_key(src_[i_].score) >> (8 * b_)) & 255]++] = src_[i_];          \
            type *t_ = src_;                                                                       \
            src_ = dst_;                                                                           \
            dst_ = t_;                                                                             \
        }                                                                                          \
        if (src_ != h) memcpy(h, src_, n * sizeof *h);                                             \
        for (size_t i_ = 1; i_ < n; i_++) {                                                        \
            if (!(h[i_].score == h[i_ - 1].score)) continue;                                       \
            type x_ = h[i_];                                                                       \
            size_t j_ = i_;                                                                        \
            while (j_ > 0 && h[j_ - 1].score == x_.score && h[j_ - 1].id > x_.id) {                \
                h[j_] = h[j_ - 1];                                                                 \
                j_--;                                                                              \
            }                                                                                      \
            h[j_] = x_;                                                                            \
        }                                                                                          \
    }

#endif
