/*
 * Deterministic test-side randomness (splitmix64), independent of libbosch.
 */
#ifndef BOSCH_TEST_TRNG_H
#define BOSCH_TEST_TRNG_H

#include <stdint.h>

typedef struct {
    uint64_t s;
} trng;

uint64_t trng_next(trng *r);

/* Uniform in [0, bound), bound >= 1 (tiny modulo bias is irrelevant here). */
uint64_t trng_below(trng *r, uint64_t bound);

/* Uniform in [0, 1). */
double trng_unif(trng *r);

#endif /* BOSCH_TEST_TRNG_H */
