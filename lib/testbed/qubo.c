/* QUBO: linear and pairwise terms on the full indicators, pairs within a layer half of the time. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testbed/testbed_impl.h"

static int generate(bosch_testbed *tb, prng *rng)
{
    size_t N = tb->units;
    uint32_t G = tb->groups;
    size_t nq = N > 1 ? (size_t)floor(1.5 * (double)N + 0.5) : 0;
    tb->lin = malloc(N * sizeof *tb->lin);
    tb->q = malloc((nq ? nq : 1) * sizeof *tb->q);
    if (!tb->lin || !tb->q)
        return BOSCH_E_NOMEM;
    double norm = 0.0;
    for (size_t u = 0; u < N; u++) {
        tb->lin[u] = prng_normal(rng);
        norm += fabs(tb->lin[u]);
    }
    for (size_t i = 0; i < nq; i++) {
        size_t u = (size_t)prng_below(rng, N), v;
        if (G > 1 && prng_uniform(rng) < 0.5) {
            uint32_t g = (uint32_t)prng_below(rng, G - 1);
            g += g >= u % G;
            v = (u / G) * G + g;
        } else {
            v = (size_t)prng_below(rng, N - 1);
            v += v >= u;
        }
        tb->q[i].u = u < v ? u : v;
        tb->q[i].v = u < v ? v : u;
        tb->q[i].j = 1.5 * prng_normal(rng);
        norm += fabs(tb->q[i].j);
    }
    tb->nq = nq;
    tb->norm = norm > 0.0 ? norm : 1.0;
    return BOSCH_OK;
}

static int score_mask(const bosch_testbed *tb, const uint8_t *mask, double *score_out)
{
    double f = 0.0;
    size_t N = tb->units;
    for (size_t u = 0; u < N; u++)
        if (!mask[u])
            f += tb->lin[u];
    for (size_t i = 0; i < tb->nq; i++)
        if (!mask[tb->q[i].u] && !mask[tb->q[i].v])
            f += tb->q[i].j;
    *score_out = f / tb->norm;
    return BOSCH_OK;
}

const struct testbed_family testbed_qubo = {"qubo", generate, score_mask, NULL};
