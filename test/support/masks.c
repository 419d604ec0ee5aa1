#include "masks.h"

size_t mask_ones(const uint8_t *m, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += m[i] != 0;
    return c;
}

size_t mask_hamming(const uint8_t *a, const uint8_t *b, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += (a[i] != 0) != (b[i] != 0);
    return c;
}

size_t layer_ones(const uint8_t *m, uint32_t layer, uint32_t G)
{
    return mask_ones(m + (size_t)layer * G, G);
}

int mask_is_binary(const uint8_t *m, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (m[i] > 1)
            return 0;
    return 1;
}

int own_feasible(const bosch_problem *p, const uint8_t *m, const uint32_t *lo,
                 const uint32_t *hi)
{
    uint32_t L = bosch_problem_layers(p), G = bosch_problem_kv_groups(p);
    if (mask_ones(m, (size_t)L * G) != bosch_problem_target_units(p))
        return 0;
    for (uint32_t l = 0; l < L; l++) {
        size_t c = layer_ones(m, l, G);
        if (lo && c < lo[l])
            return 0;
        if (hi && c > hi[l])
            return 0;
        for (uint32_t g = 0; g < G; g++) {
            int f = bosch_problem_unit_fix(p, l, g);
            uint8_t v = m[(size_t)l * G + g] != 0;
            if (f == BOSCH_FIX_FULL && v)
                return 0;
            if (f == BOSCH_FIX_SWA && !v)
                return 0;
        }
    }
    return 1;
}

uint64_t binom(unsigned n, unsigned k)
{
    if (k > n)
        return 0;
    uint64_t r = 1;
    for (unsigned i = 1; i <= k; i++)
        r = r * (n - k + i) / i;
    return r;
}

int bits_next(uint8_t *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!x[i]) {
            x[i] = 1;
            return 1;
        }
        x[i] = 0;
    }
    return 0;
}
