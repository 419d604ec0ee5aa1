/* Circuits: units in circuits of 2-4 that score their weight while any unit is full, plus a small
 * linear part. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testbed/testbed_impl.h"

static int generate(bosch_testbed *tb, prng *rng)
{
    size_t N = tb->units;
    size_t C = N / 4;
    size_t *perm = malloc(N * sizeof *perm);
    tb->lin = malloc(N * sizeof *tb->lin);
    tb->circ_start = calloc(C + 1, sizeof *tb->circ_start);
    tb->circ_units = malloc(N * sizeof *tb->circ_units);
    tb->circ_w = malloc((C ? C : 1) * sizeof *tb->circ_w);
    if (!perm || !tb->lin || !tb->circ_start || !tb->circ_units || !tb->circ_w) {
        free(perm);
        return BOSCH_E_NOMEM;
    }
    for (size_t u = 0; u < N; u++)
        perm[u] = u;
    testbed_shuffle(rng, perm, N);
    size_t at = 0, c = 0;
    double wsum = 0.0, asum = 0.0;
    for (; c < C && at + 2 <= N; c++) {
        size_t sz = 2 + (size_t)prng_below(rng, 3);
        if (at + sz > N)
            sz = N - at;
        tb->circ_start[c] = at;
        for (size_t i = 0; i < sz; i++)
            tb->circ_units[at + i] = perm[at + i];
        at += sz;
        tb->circ_w[c] = exp(prng_normal(rng));
        wsum += tb->circ_w[c];
    }
    tb->ncirc = c;
    tb->circ_start[c] = at;
    free(perm);
    for (size_t u = 0; u < N; u++) {
        tb->lin[u] = prng_uniform(rng);
        asum += tb->lin[u];
    }
    /* linear values: 10% of the total (all of it without circuits) */
    double ascale = wsum > 0.0 && asum > 0.0 ? (wsum / 9.0) / asum : 1.0;
    for (size_t u = 0; u < N; u++)
        tb->lin[u] *= ascale;
    tb->norm = wsum + asum * ascale;
    return BOSCH_OK;
}

static int score_mask(const bosch_testbed *tb, const uint8_t *mask, double *score_out)
{
    double f = 0.0;
    size_t N = tb->units;
    for (size_t c = 0; c < tb->ncirc; c++)
        for (size_t i = tb->circ_start[c]; i < tb->circ_start[c + 1]; i++)
            if (!mask[tb->circ_units[i]]) {
                f += tb->circ_w[c];
                break;
            }
    for (size_t u = 0; u < N; u++)
        if (!mask[u])
            f += tb->lin[u];
    *score_out = f / tb->norm;
    return BOSCH_OK;
}

/* Circuits without fixed units or layer bounds: a group knapsack. Group =
 * one circuit (m full units: w_c [m >= 1] + its m largest a_u) or the units
 * in no circuit (their m largest a_u); exactly F = units - target full. */
static int optimum_circuits(const bosch_testbed *tb, const bosch_problem *p, uint8_t *mask,
                            double *score)
{
    size_t N = tb->units, F = N - bosch_problem_target_units(p), W = F + 1;
    size_t ng = tb->ncirc + 1;
    size_t *in_circ = calloc(N, sizeof *in_circ);
    double *best = malloc((ng + 1) * W * sizeof *best);
    size_t *choice = malloc(ng * W * sizeof *choice);
    size_t *units = malloc(N * sizeof *units), *gstart = malloc((ng + 1) * sizeof *gstart);
    int rc = BOSCH_OK;
    if (!in_circ || !best || !choice || !units || !gstart) {
        rc = BOSCH_E_NOMEM;
        goto out;
    }
    /* groups as lists of units sorted by decreasing a_u */
    size_t n = 0;
    for (size_t c = 0; c < tb->ncirc; c++) {
        gstart[c] = n;
        for (size_t i = tb->circ_start[c]; i < tb->circ_start[c + 1]; i++) {
            units[n++] = tb->circ_units[i];
            in_circ[tb->circ_units[i]] = 1;
        }
    }
    gstart[tb->ncirc] = n;
    for (size_t u = 0; u < N; u++)
        if (!in_circ[u])
            units[n++] = u;
    gstart[ng] = n;
    for (size_t g = 0; g < ng; g++) {
        size_t a = gstart[g], b = gstart[g + 1];
        /* insertion sort by decreasing a_u, ties by unit index */
        for (size_t i = a + 1; i < b; i++)
            for (size_t j = i; j > a; j--) {
                size_t x = units[j - 1], y = units[j];
                if (tb->lin[y] > tb->lin[x] || (tb->lin[y] == tb->lin[x] && y < x)) {
                    units[j - 1] = y;
                    units[j] = x;
                } else {
                    break;
                }
            }
    }
    for (size_t s = 0; s < W; s++)
        best[s] = s == 0 ? 0.0 : -INFINITY;
    for (size_t g = 0; g < ng; g++) {
        size_t a = gstart[g], sz = gstart[g + 1] - a;
        double *prev = best + g * W, *cur = best + (g + 1) * W;
        for (size_t s = 0; s < W; s++) {
            cur[s] = -INFINITY;
            choice[g * W + s] = 0;
            double acc = 0.0;
            for (size_t m = 0; m <= sz && m <= s; m++) {
                if (m > 0)
                    acc += tb->lin[units[a + m - 1]];
                if (prev[s - m] == -INFINITY)
                    continue;
                double v = prev[s - m] + acc + (g < tb->ncirc && m > 0 ? tb->circ_w[g] : 0.0);
                if (v > cur[s]) {
                    cur[s] = v;
                    choice[g * W + s] = m;
                }
            }
        }
    }
    double f = best[ng * W + F];
    if (f == -INFINITY) {
        rc = BOSCH_E_INFEASIBLE;
        goto out;
    }
    if (mask) {
        memset(mask, 1, N);
        size_t s = F;
        for (size_t g = ng; g-- > 0;) {
            size_t m = choice[g * W + s];
            for (size_t i = 0; i < m; i++)
                mask[units[gstart[g] + i]] = 0;
            s -= m;
        }
    }
    if (score)
        *score = f / tb->norm;
out:
    free(in_circ);
    free(best);
    free(choice);
    free(units);
    free(gstart);
    return rc;
}

/* The group knapsack holds without fixed units or layer bounds. */
static int exact_optimum(const bosch_testbed *tb, const bosch_problem *p, uint8_t *mask,
                         double *score_out)
{
    for (size_t u = 0; u < p->units; u++)
        if (p->fix[u] != BOSCH_FIX_NONE)
            return TESTBED_NO_SHORTCUT;
    for (uint32_t l = 0; l < p->layers; l++) {
        uint32_t lo, hi;
        problem_layer_range(p, l, &lo, &hi);
        if (lo != 0 || hi != p->groups)
            return TESTBED_NO_SHORTCUT;
    }
    return optimum_circuits(tb, p, mask, score_out);
}

const struct testbed_family testbed_circuits = {"circuits", generate, score_mask, exact_optimum};
