#include "core/rng.h"

#include <math.h>

uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
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

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t prng_next(prng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
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
    return (double)(prng_next(r) >> 11) * 0x1.0p-53;
}

double prng_normal(prng *r)
{
    double u1 = 1.0 - prng_uniform(r); /* (0, 1] */
    double u2 = prng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
