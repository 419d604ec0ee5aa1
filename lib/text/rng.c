/* xoshiro256** (Blackman and Vigna, public domain reference), seeded with
 * splitmix64 so that any 64-bit seed, 0 included, gives a good state. */
#include "text/rng.h"

#include "base/prng_steps.h"

void text_rng_seed(struct text_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = bosch_splitmix64(&seed);
}

uint64_t text_rng_next(struct text_rng *r)
{
    return bosch_xoshiro256ss(r->s);
}

uint64_t text_rng_below(struct text_rng *r, uint64_t n)
{
    /* Reject the top partial block so every residue is equally likely. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do
        x = text_rng_next(r);
    while (x >= limit);
    return x % n;
}

double text_rng_unit(struct text_rng *r) { return bosch_unit_double(text_rng_next(r)); }
