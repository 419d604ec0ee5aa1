#include "core/combinatorics.h"

uint64_t comb_mul_sat(uint64_t a, uint64_t b)
{
    if (a && b > UINT64_MAX / a)
        return UINT64_MAX;
    return a * b;
}

uint64_t comb_binomial(uint64_t n, uint64_t k)
{
    if (k > n)
        return 0;
    if (k > n - k)
        k = n - k;
    __extension__ typedef unsigned __int128 u128;
    uint64_t r = 1;
    for (uint64_t i = 1; i <= k; i++) {
        /* r == C(n-k+i-1, i-1), so r * (n-k+i) / i == C(n-k+i, i) exactly. */
        u128 t = (u128)r * (n - k + i) / i;
        if (t >= UINT64_MAX)
            return UINT64_MAX;
        r = (uint64_t)t;
    }
    return r;
}

int comb_next(uint32_t *idx, uint32_t k, uint32_t n)
{
    if (k == 0)
        return 0;
    int32_t i = (int32_t)k - 1;
    while (i >= 0 && idx[i] == n - k + (uint32_t)i)
        i--;
    if (i < 0)
        return 0;
    idx[i]++;
    for (uint32_t j = (uint32_t)i + 1; j < k; j++)
        idx[j] = idx[j - 1] + 1;
    return 1;
}
