/* The separable test objective (linear.h). */
#include "linear.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

int linear_fn(const uint8_t *x, size_t n, double *value, void *user)
{
    linear_objective *l = user;
    if (l->calls == 0 && l->first)
        memcpy(l->first, x, n);
    double v = 0.0;
    for (size_t i = 0; i < n; i++)
        v += x[i] ? l->w[i] : 0.0;
    *value = v;
    l->calls++;
    return 0;
}

double linear_optimum(const double *w, size_t n, const uint32_t *block_of,
                      const uint32_t *counts, size_t nblocks)
{
    double total = 0.0;
    uint8_t *taken = calloc(n, 1);
    ck_assert_ptr_nonnull(taken);
    for (size_t b = 0; b < nblocks; b++)
        for (uint32_t k = 0; k < counts[b]; k++) {
            size_t best = n;
            for (size_t i = 0; i < n; i++)
                if (block_of[i] == b && !taken[i] && (best == n || w[i] > w[best]))
                    best = i;
            taken[best] = 1;
            total += w[best];
        }
    free(taken);
    return total;
}
