/* The steps of the project's pseudo-random generators, header-only so that
 * every library of lib/ shares them without linking another (lib/base has
 * no .c file): splitmix64 (Steele, Lea, Flood; the seeding and mixing
 * generator) and xoshiro256** (Blackman and Vigna). Each user keeps its
 * own seeding and bounded draws, which fix its published outputs:
 * core/rng.h (the method and the testbed), text/rng.h (RULER tasks),
 * torch/tasks.cpp (NIAH tasks), torch/scorers.cpp (echo sequences). */
#ifndef LIBBOSCH_BASE_PRNG_STEPS_H
#define LIBBOSCH_BASE_PRNG_STEPS_H

#include <stdint.h>

/* Advances *state by the golden-ratio increment and returns its mix. */
static inline uint64_t bosch_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline uint64_t bosch_rotl64(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

/* One step of xoshiro256** over s[4] (not all zero). */
static inline uint64_t bosch_xoshiro256ss(uint64_t *s)
{
    uint64_t result = bosch_rotl64(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = bosch_rotl64(s[3], 45);
    return result;
}

/* The top 53 bits of x as a double in [0, 1). */
static inline double bosch_unit_double(uint64_t x)
{
    return (double)(x >> 11) * (1.0 / 9007199254740992.0);
}

#endif
