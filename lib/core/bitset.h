/* Packed masks: one bit per unit, 64 units per word. The search keeps every
 * evaluated mask in this form (8x smaller than bytes, fast to hash/compare). */
#ifndef BOSCH_CORE_BITSET_H
#define BOSCH_CORE_BITSET_H

#include <stddef.h>
#include <stdint.h>

static inline size_t bitset_words(size_t bits)
{
    return (bits + 63) / 64;
}

/* bytes (any non-zero = 1) -> packed; padding bits cleared. */
void bitset_pack(const uint8_t *bytes, size_t n, uint64_t *words);
/* packed -> bytes (0/1). */
void bitset_unpack(const uint64_t *words, size_t n, uint8_t *bytes);
uint64_t bitset_hash(const uint64_t *words, size_t nwords);
size_t bitset_popcount(const uint64_t *words, size_t nwords);

static inline int bitset_get(const uint64_t *w, size_t i)
{
    return (int)((w[i / 64] >> (i % 64)) & 1u);
}

#endif
