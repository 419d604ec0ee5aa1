/*
 * Masks (one byte per unit, layer-major: unit l*G + g) and a little
 * combinatorics, computed test-side.
 */
#ifndef BOSCH_TEST_MASKS_H
#define BOSCH_TEST_MASKS_H

#include <stddef.h>
#include <stdint.h>

#include <bosch/bosch.h>

/* Non-zero bytes of m[0..n). */
size_t mask_ones(const uint8_t *m, size_t n);

/* Units where a and b differ (any non-zero byte is 1). */
size_t mask_hamming(const uint8_t *a, const uint8_t *b, size_t n);

/* Non-zero bytes of layer `layer` (G units). */
size_t layer_ones(const uint8_t *m, uint32_t layer, uint32_t G);

/* 1 when every byte is 0 or 1. */
int mask_is_binary(const uint8_t *m, size_t n);

/* Own feasibility check against a problem: target count, fixed units, and
 * per-layer bounds given as integer counts lo[l]..hi[l] (NULL = [0, G]). */
int own_feasible(const bosch_problem *p, const uint8_t *m, const uint32_t *lo,
                 const uint32_t *hi);

/* n choose k (0 when k > n). */
uint64_t binom(unsigned n, unsigned k);

/* Next combination-free enumeration helper: increments a binary counter
 * (little-endian over n bytes); returns 0 when it wrapped to all zeros. */
int bits_next(uint8_t *x, size_t n);

#endif /* BOSCH_TEST_MASKS_H */
