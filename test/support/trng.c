#include "trng.h"

uint64_t trng_next(trng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint64_t trng_below(trng *r, uint64_t bound)
{
    return trng_next(r) % bound;
}

double trng_unif(trng *r)
{
    return (double)(trng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}
