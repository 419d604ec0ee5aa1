#include "core/rng.h"

#include "base/prng_steps.h"

#include <math.h>

uint64_t mix64(uint64_t x)
{
    return bosch_splitmix64(&x);
}

void prng_init(prng *r, uint64_t seed, uint64_t stream)
{
    uint64_t x = mix64(seed) ^ mix64(stream * 0xd1b54a32d192ed03ULL + 1);
    for (int i = 0; i < 4; i++) {
        x += 0x9e3779b97f4a7c15ULL;
        r->s[i] = mix64(x);
    }
}

__extension__ typedef unsigned __int128 u128;

uint64_t prng_next(prng *r)
{
    return bosch_xoshiro256ss(r->s);
}

uint64_t prng_below(prng *r, uint64_t bound)
{
    if (bound <= 1)
        return 0;
    /* Rejection on the low part of a 128-bit product: no modulo bias. */
    u128 m = (u128)prng_next(r) * bound;
    uint64_t low = (uint64_t)m;
    if (low < bound) {
        uint64_t threshold = -bound % bound;
        while (low < threshold) {
            m = (u128)prng_next(r) * bound;
            low = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

double prng_uniform(prng *r)
{
    return bosch_unit_double(prng_next(r));
}

double prng_normal(prng *r)
{
    double u1 = 1.0 - prng_uniform(r); /* (0, 1] */
    double u2 = prng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
