/* The energy landscape (bosch_testbed_create): per-unit costs, heavy in a
 * few units and scaled per layer, and pairwise terms (backups that cost
 * when both units are SWA, synergies that refund); score exp(-energy) of
 * the SWA units. */
#include <math.h>
#include <stdlib.h>

#include "testbed/testbed_impl.h"

static int generate(bosch_testbed *tb, prng *rng)
{
    size_t N = tb->units;
    tb->cost = malloc(N * sizeof *tb->cost);
    size_t np = (size_t)floor(tb->p[P_ENTANGLEMENT] * (double)N + 0.5);
    tb->pairs = malloc((np ? np : 1) * sizeof *tb->pairs);
    tb->adj_start = calloc(N + 1, sizeof *tb->adj_start);
    tb->adj = malloc((np ? np : 1) * sizeof *tb->adj);
    if (!tb->cost || !tb->pairs || !tb->adj_start || !tb->adj)
        return BOSCH_E_NOMEM;
    double total = 0.0;
    for (uint32_t l = 0; l < tb->layers; l++) {
        double m = exp(tb->p[P_LAYER_SENSITIVITY] * prng_normal(rng));
        for (uint32_t g = 0; g < tb->groups; g++) {
            double k;
            if (prng_uniform(rng) < tb->p[P_HEAVY_FRACTION])
                k = 1.0 + 2.0 * prng_uniform(rng);
            else
                k = -0.05 * log(1.0 - prng_uniform(rng));
            tb->cost[(size_t)l * tb->groups + g] = m * k;
            total += m * k;
        }
    }
    double scale = total > 0.0 ? tb->p[P_TOTAL_COST] / total : 0.0;
    for (size_t u = 0; u < N; u++)
        tb->cost[u] *= scale;
    double mean_cost = tb->p[P_TOTAL_COST] / (double)N;
    size_t made = 0;
    for (size_t i = 0; i < np && N > 1; i++) {
        size_t u = (size_t)prng_below(rng, N);
        uint32_t lu = (uint32_t)(u / tb->groups);
        size_t v;
        int cross = tb->layers > 1 && (prng_uniform(rng) < tb->p[P_CROSS_LAYER] || tb->groups == 1);
        if (cross) {
            uint32_t lv = (uint32_t)prng_below(rng, tb->layers - 1);
            lv += lv >= lu;
            v = (size_t)lv * tb->groups + (size_t)prng_below(rng, tb->groups);
        } else if (tb->groups > 1) {
            uint32_t g = (uint32_t)prng_below(rng, tb->groups - 1);
            g += g >= u % tb->groups;
            v = (size_t)lu * tb->groups + g;
        } else {
            continue;
        }
        double j;
        if (prng_uniform(rng) < tb->p[P_SYNERGY_FRACTION]) {
            double c = tb->cost[u] < tb->cost[v] ? tb->cost[u] : tb->cost[v];
            j = -0.5 * c;
        } else {
            j = tb->p[P_BACKUP_STRENGTH] * mean_cost * (1.0 + prng_uniform(rng));
        }
        tb->pairs[made].u = u < v ? u : v;
        tb->pairs[made].v = u < v ? v : u;
        tb->pairs[made].j = j;
        made++;
    }
    tb->npairs = made;
    for (size_t i = 0; i < made; i++)
        tb->adj_start[tb->pairs[i].u + 1]++;
    for (size_t u = 0; u < N; u++)
        tb->adj_start[u + 1] += tb->adj_start[u];
    size_t *fill = calloc(N, sizeof *fill);
    if (!fill)
        return BOSCH_E_NOMEM;
    for (size_t i = 0; i < made; i++) {
        size_t u = tb->pairs[i].u;
        tb->adj[tb->adj_start[u] + fill[u]++] = i;
    }
    free(fill);
    return BOSCH_OK;
}

static double energy(const bosch_testbed *tb, const uint8_t *mask)
{
    double e = 0.0;
    for (size_t u = 0; u < tb->units; u++) {
        if (!mask[u])
            continue;
        e += tb->cost[u];
        for (size_t k = tb->adj_start[u]; k < tb->adj_start[u + 1]; k++) {
            const struct pair *pr = &tb->pairs[tb->adj[k]];
            if (mask[pr->v])
                e += pr->j;
        }
    }
    return e > 0.0 ? e : 0.0;
}

static int score_mask(const bosch_testbed *tb, const uint8_t *mask, double *score_out)
{
    *score_out = exp(-energy(tb, mask));
    return BOSCH_OK;
}

const struct testbed_family testbed_energy = {"energy", generate, score_mask, NULL};
