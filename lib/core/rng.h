/* Deterministic pseudo-random numbers (xoshiro256**, seeded by splitmix64).
 * Every random choice of the library draws from a stream derived from the
 * user's seed, so runs are reproducible. */
#ifndef BOSCH_CORE_RNG_H
#define BOSCH_CORE_RNG_H

#include <stdint.h>

typedef struct prng {
    uint64_t s[4];
} prng;

/* Independent stream `stream` of seed `seed`. */
void prng_init(prng *r, uint64_t seed, uint64_t stream);
uint64_t prng_next(prng *r);
/* Uniform in [0, bound), bound >= 1 (Lemire's unbiased method). */
uint64_t prng_below(prng *r, uint64_t bound);
/* Uniform in [0, 1). */
double prng_uniform(prng *r);
/* Standard normal (Box-Muller; uses two draws). */
double prng_normal(prng *r);
/* Stateless mix of a 64-bit value (splitmix64 finaliser). */
uint64_t mix64(uint64_t x);

#endif
