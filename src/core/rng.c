/*
** Seeded generator: splitmix64 turns a 64-bit seed into the 256-bit state of
** xoshiro256** (Blackman & Vigna, "Scrambled linear pseudorandom number
** generators", 2021).  splitmix64 never yields an all-zero state from four
** consecutive outputs, so every seed is valid.
*/
#include "../internal.h"

static uint64_t rv__splitmix64(uint64_t *x) {
    return rv__mix64(*x += 0x9e3779b97f4a7c15ULL);
}

static inline uint64_t rv__rotl(uint64_t x, int k) {
    return (x << k) | (x >> (64 - k));
}

void rv_rng_seed(rv_rng *rng, uint64_t seed) {
    if (!rng) return;
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) rng->s[i] = rv__splitmix64(&x);
}

void rv_rng_seed_stream(rv_rng *rng, uint64_t seed, uint64_t stream) {
    /* Mix the stream index through splitmix64 before combining, so nearby
    ** (seed, stream) pairs give unrelated states. */
    if (!rng) return;
    uint64_t x = stream;
    uint64_t mixed = seed ^ rv__splitmix64(&x);
    rv_rng_seed(rng, mixed);
}

uint64_t rv_rng_next(rv_rng *rng) {
    if (!rng) return 0;
    uint64_t *s = rng->s;
    const uint64_t result = rv__rotl(s[1] * 5, 7) * 9;
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rv__rotl(s[3], 45);
    return result;
}

uint64_t rv_rng_below(rv_rng *rng, uint64_t bound) {
    if (!rng || bound == 0) return 0;
    /* Rejection sampling on the top of the range removes modulo bias. */
    uint64_t threshold = (0 - bound) % bound;
    for (;;) {
        uint64_t r = rv_rng_next(rng);
        if (r >= threshold) return r % bound;
    }
}

double rv_rng_uniform(rv_rng *rng) {
    if (!rng) return 0.0;
    return (double)(rv_rng_next(rng) >> 11) * 0x1.0p-53;
}
