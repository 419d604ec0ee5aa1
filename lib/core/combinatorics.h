/* Counting and enumerating k-subsets, saturating at UINT64_MAX. */
#ifndef BOSCH_CORE_COMBINATORICS_H
#define BOSCH_CORE_COMBINATORICS_H

#include <stddef.h>
#include <stdint.h>

uint64_t comb_binomial(uint64_t n, uint64_t k);
uint64_t comb_mul_sat(uint64_t a, uint64_t b);
/* Next k-subset of {0..n-1} in lexicographic order, as sorted indices
 * idx[0..k-1]; returns 0 when idx was the last one. */
int comb_next(uint32_t *idx, uint32_t k, uint32_t n);

#endif
