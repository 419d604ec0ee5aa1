/* Coverage: each unit covers a few weighted items; the score is the weight the full units cover. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testbed/testbed_impl.h"

static int generate(bosch_testbed *tb, prng *rng)
{
    size_t N = tb->units;
    size_t M = 2 * N;
    tb->nitems = M;
    tb->item_w = malloc(M * sizeof *tb->item_w);
    tb->cov_start = calloc(N + 1, sizeof *tb->cov_start);
    tb->cov_items = malloc((6 * N + M) * sizeof *tb->cov_items);
    uint8_t *covered = calloc(M, 1);
    size_t *sizes = calloc(N, sizeof *sizes);
    if (!tb->item_w || !tb->cov_start || !tb->cov_items || !covered || !sizes) {
        free(covered);
        free(sizes);
        return BOSCH_E_NOMEM;
    }
    double wsum = 0.0;
    for (size_t i = 0; i < M; i++) {
        tb->item_w[i] = -log(1.0 - prng_uniform(rng));
        wsum += tb->item_w[i];
    }
    /* Draw each unit's items (distinct within a unit), then give every
     * uncovered item to a random unit; store as CSR. */
    size_t *tmp = malloc((6 * N + M) * sizeof *tmp);
    size_t *tmp_unit = malloc((6 * N + M) * sizeof *tmp_unit);
    if (!tmp || !tmp_unit) {
        free(tmp);
        free(tmp_unit);
        free(covered);
        free(sizes);
        return BOSCH_E_NOMEM;
    }
    size_t n = 0;
    for (size_t u = 0; u < N; u++) {
        size_t c = 2 + (size_t)prng_below(rng, 5);
        if (c > M)
            c = M;
        size_t first = n;
        for (size_t k = 0; k < c; k++) {
            size_t it;
            int dup;
            do {
                it = (size_t)prng_below(rng, M);
                dup = 0;
                for (size_t i = first; i < n && !dup; i++)
                    dup = tmp[i] == it;
            } while (dup);
            tmp[n] = it;
            tmp_unit[n++] = u;
            covered[it] = 1;
        }
    }
    for (size_t it = 0; it < M; it++)
        if (!covered[it]) {
            tmp[n] = it;
            tmp_unit[n++] = (size_t)prng_below(rng, N);
        }
    for (size_t i = 0; i < n; i++)
        sizes[tmp_unit[i]]++;
    for (size_t u = 0; u < N; u++)
        tb->cov_start[u + 1] = tb->cov_start[u] + sizes[u];
    memset(sizes, 0, N * sizeof *sizes);
    for (size_t i = 0; i < n; i++) {
        size_t u = tmp_unit[i];
        tb->cov_items[tb->cov_start[u] + sizes[u]++] = tmp[i];
    }
    free(tmp);
    free(tmp_unit);
    free(covered);
    free(sizes);
    tb->norm = wsum > 0.0 ? wsum : 1.0;
    return BOSCH_OK;
}

static int score_mask(const bosch_testbed *tb, const uint8_t *mask, double *score_out)
{
    double f = 0.0;
    size_t N = tb->units;
    uint8_t *cov = calloc(tb->nitems ? tb->nitems : 1, 1);
    if (!cov)
        return BOSCH_E_NOMEM;
    for (size_t u = 0; u < N; u++)
        if (!mask[u])
            for (size_t i = tb->cov_start[u]; i < tb->cov_start[u + 1]; i++) {
                size_t it = tb->cov_items[i];
                if (!cov[it]) {
                    cov[it] = 1;
                    f += tb->item_w[it];
                }
            }
    free(cov);
    *score_out = f / tb->norm;
    return BOSCH_OK;
}

const struct testbed_family testbed_coverage = {"coverage", generate, score_mask, NULL};
