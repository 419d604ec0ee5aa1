#include "core/bitset.h"

#include <string.h>
#include <xxhash.h>

void bitset_pack(const uint8_t *bytes, size_t n, uint64_t *words)
{
    memset(words, 0, bitset_words(n) * sizeof *words);
    for (size_t i = 0; i < n; i++)
        if (bytes[i])
            words[i / 64] |= (uint64_t)1 << (i % 64);
}

void bitset_unpack(const uint64_t *words, size_t n, uint8_t *bytes)
{
    for (size_t i = 0; i < n; i++)
        bytes[i] = (uint8_t)bitset_get(words, i);
}

uint64_t bitset_hash(const uint64_t *words, size_t nwords)
{
    return XXH3_64bits(words, nwords * sizeof *words);
}

size_t bitset_popcount(const uint64_t *words, size_t nwords)
{
    size_t c = 0;
    for (size_t i = 0; i < nwords; i++)
        c += (size_t)__builtin_popcountll(words[i]);
    return c;
}
