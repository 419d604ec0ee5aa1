/* NK landscapes (nk2, nk4): each unit scores a random table of itself and K neighbours, mostly
 * nearby. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testbed/testbed_impl.h"

static int generate(bosch_testbed *tb, prng *rng)
{
    size_t N = tb->units;
    uint32_t K = tb->family == BOSCH_TESTBED_NK2 ? 2 : 4;
    if (N - 1 < K)
        K = (uint32_t)(N - 1);
    tb->nk = K;
    size_t T = (size_t)1 << (K + 1);
    tb->nbr = malloc((N * K > 0 ? N * K : 1) * sizeof *tb->nbr);
    tb->table = malloc(N * T * sizeof *tb->table);
    if (!tb->nbr || !tb->table)
        return BOSCH_E_NOMEM;
    for (size_t u = 0; u < N; u++) {
        for (uint32_t k = 0; k < K; k++) {
            size_t v;
            for (int tries = 0;; tries++) {
                v = tries < 64 ? testbed_near_unit(tb, rng, u) : (size_t)prng_below(rng, N);
                int dup = v == u;
                for (uint32_t i = 0; i < k && !dup; i++)
                    dup = tb->nbr[u * K + i] == v;
                if (!dup)
                    break;
            }
            tb->nbr[u * K + k] = v;
        }
        for (size_t t = 0; t < T; t++)
            tb->table[u * T + t] = prng_uniform(rng);
    }
    tb->norm = (double)N;
    return BOSCH_OK;
}

static int score_mask(const bosch_testbed *tb, const uint8_t *mask, double *score_out)
{
    double f = 0.0;
    size_t N = tb->units;
    uint32_t K = tb->nk;
    size_t T = (size_t)1 << (K + 1);
    for (size_t u = 0; u < N; u++) {
        size_t idx = !mask[u];
        for (uint32_t k = 0; k < K; k++)
            idx |= (size_t)!mask[tb->nbr[u * K + k]] << (k + 1);
        f += tb->table[u * T + idx];
    }
    *score_out = f / tb->norm;
    return BOSCH_OK;
}

/* One generator for both: K is 2 or 4 by the family. */
const struct testbed_family testbed_nk2 = {"nk2", generate, score_mask, NULL};
const struct testbed_family testbed_nk4 = {"nk4", generate, score_mask, NULL};
