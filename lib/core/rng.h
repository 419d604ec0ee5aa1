/* Deterministic pseudo-random numbers (xoshiro256**, seeded by splitmix64).
 * Every random choice of the library draws from a stream derived from the
 * user's seed, so runs are reproducible. */
#ifndef BOSCH_CORE_RNG_H
#define BOSCH_CORE_RNG_H

#include <stdint.h>

typedef struct bosch_rng {
    uint64_t s[4];
} bosch_rng;

/* Independent stream `stream` of seed `seed`. */
void bosch_rng_init(bosch_rng *r, uint64_t seed, uint64_t stream);
uint64_t bosch_rng_next(bosch_rng *r);
/* Uniform in [0, bound), bound >= 1 (Lemire's unbiased method). */
uint64_t bosch_rng_below(bosch_rng *r, uint64_t bound);
/* Uniform in [0, 1). */
double bosch_rng_uniform(bosch_rng *r);
/* Standard normal (Box-Muller; uses two draws). */
double bosch_rng_normal(bosch_rng *r);
/* Stateless mix of a 64-bit value (splitmix64 finaliser). */
uint64_t bosch_mix64(uint64_t x);

#endif
