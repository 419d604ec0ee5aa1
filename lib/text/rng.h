/* A small seeded PRNG for the RULER tasks (xoshiro256** seeded through
 * splitmix64): the same seed gives the same task on every platform. */
#ifndef TEXT_RNG_H
#define TEXT_RNG_H

#include <stdint.h>

struct text_rng {
    uint64_t s[4];
};

void text_rng_seed(struct text_rng *r, uint64_t seed);
uint64_t text_rng_next(struct text_rng *r);
/* Uniform in [0, n), n > 0, without modulo bias. */
uint64_t text_rng_below(struct text_rng *r, uint64_t n);
/* Uniform in [0, 1), 53 bits. */
double text_rng_unit(struct text_rng *r);

#endif
