/* Layer-concave: a concave gain per layer in its number of full units (separable by layer). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testbed/testbed_impl.h"

/* Layer l's term of the layer-concave family with n full units (unnormalised). */
static double layer_term(const bosch_testbed *tb, uint32_t l, uint32_t n)
{
    double a = tb->lcurve[l];
    return tb->lscale[l] * (1.0 - exp(-a * (double)n / (double)tb->groups)) / (1.0 - exp(-a));
}

static int generate(bosch_testbed *tb, prng *rng)
{
    uint32_t L = tb->layers;
    tb->lscale = malloc(L * sizeof *tb->lscale);
    tb->lcurve = malloc(L * sizeof *tb->lcurve);
    if (!tb->lscale || !tb->lcurve)
        return BOSCH_E_NOMEM;
    double sum = 0.0;
    for (uint32_t l = 0; l < L; l++) {
        tb->lscale[l] = exp(prng_normal(rng));
        tb->lcurve[l] = exp(log(0.3) + (log(8.0) - log(0.3)) * prng_uniform(rng));
        sum += tb->lscale[l];
    }
    tb->norm = sum;
    return BOSCH_OK;
}

static int score_mask(const bosch_testbed *tb, const uint8_t *mask, double *score_out)
{
    double f = 0.0;
    for (uint32_t l = 0; l < tb->layers; l++) {
        uint32_t n = 0;
        for (uint32_t g = 0; g < tb->groups; g++)
            n += !mask[(size_t)l * tb->groups + g];
        f += layer_term(tb, l, n);
    }
    *score_out = f / tb->norm;
    return BOSCH_OK;
}

/* Layer-concave: the score depends on the per-layer counts only. best[l][s] =
 * the best sum of layers 0..l-1 terms with s SWA units in them. */
static int optimum_layer_concave(const bosch_testbed *tb, const bosch_problem *p, uint8_t *mask,
                                 double *score)
{
    uint32_t L = tb->layers, G = tb->groups;
    size_t K = bosch_problem_target_units(p);
    size_t W = K + 1;
    double *best = malloc((size_t)(L + 1) * W * sizeof *best);
    uint32_t *choice = malloc((size_t)L * W * sizeof *choice);
    if (!best || !choice) {
        free(best);
        free(choice);
        return BOSCH_E_NOMEM;
    }
    for (size_t s = 0; s < W; s++)
        best[s] = s == 0 ? 0.0 : -INFINITY;
    for (uint32_t l = 0; l < L; l++) {
        uint32_t lo, hi;
        problem_layer_range(p, l, &lo, &hi);
        double *prev = best + (size_t)l * W, *cur = best + (size_t)(l + 1) * W;
        for (size_t s = 0; s < W; s++) {
            cur[s] = -INFINITY;
            choice[(size_t)l * W + s] = 0;
            for (uint32_t c = lo; c <= hi && c <= s; c++) {
                if (prev[s - c] == -INFINITY)
                    continue;
                double v = prev[s - c] + layer_term(tb, l, G - c);
                if (v > cur[s]) {
                    cur[s] = v;
                    choice[(size_t)l * W + s] = c;
                }
            }
        }
    }
    double f = best[(size_t)L * W + K];
    if (f == -INFINITY) {
        free(best);
        free(choice);
        return BOSCH_E_INFEASIBLE;
    }
    if (mask) {
        size_t s = K;
        for (uint32_t l = L; l-- > 0;) {
            uint32_t c = choice[(size_t)l * W + s];
            s -= c;
            /* c SWA units in layer l: the fixed SWA ones, then free ones */
            uint32_t left = c;
            for (uint32_t g = 0; g < G; g++) {
                size_t u = (size_t)l * G + g;
                mask[u] = p->fix[u] == BOSCH_FIX_SWA;
                left -= mask[u];
            }
            for (uint32_t g = 0; g < G && left; g++) {
                size_t u = (size_t)l * G + g;
                if (p->fix[u] == BOSCH_FIX_NONE) {
                    mask[u] = 1;
                    left--;
                }
            }
        }
    }
    if (score)
        *score = f / tb->norm;
    free(best);
    free(choice);
    return BOSCH_OK;
}

const struct testbed_family testbed_layer_concave = {"layer-concave", generate, score_mask,
                                                     optimum_layer_concave};
