/* Synthetic head-selection landscapes (see include/bosch/testbed.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bosch/testbed.h"
#include "core/bitset.h"
#include "core/combinatorics.h"
#include "core/errors.h"
#include "core/problem_impl.h"
#include "core/rng.h"

enum param {
    P_TOTAL_COST,
    P_HEAVY_FRACTION,
    P_LAYER_SENSITIVITY,
    P_ENTANGLEMENT,
    P_BACKUP_STRENGTH,
    P_SYNERGY_FRACTION,
    P_CROSS_LAYER,
    P_NOISE,
    P_COUNT
};

static const struct {
    const char *name;
    double def, max; /* max < 0: unbounded */
} params[P_COUNT] = {
    {"total_cost", 4.0, -1.0},      {"heavy_fraction", 0.1, 1.0},
    {"layer_sensitivity", 0.7, -1.0}, {"entanglement", 0.0, -1.0},
    {"backup_strength", 15.0, -1.0},  {"synergy_fraction", 0.25, 1.0},
    {"cross_layer", 0.5, 1.0},       {"noise", 0.0, -1.0},
};

struct pair {
    size_t u, v;
    double j;
};

struct bosch_testbed {
    uint32_t layers, groups;
    size_t units;
    uint64_t seed;
    double p[P_COUNT];
    double *cost;
    struct pair *pairs;
    size_t npairs;
    size_t *adj_start; /* CSR of pairs by their first unit */
    size_t *adj;
};

static void free_landscape(bosch_testbed *tb)
{
    free(tb->cost);
    free(tb->pairs);
    free(tb->adj_start);
    free(tb->adj);
    tb->cost = NULL;
    tb->pairs = NULL;
    tb->adj_start = NULL;
    tb->adj = NULL;
    tb->npairs = 0;
}

static int generate(bosch_testbed *tb)
{
    free_landscape(tb);
    size_t N = tb->units;
    prng rng;
    prng_init(&rng, tb->seed, 0x7465737462656400ull);
    tb->cost = malloc(N * sizeof *tb->cost);
    size_t np = (size_t)floor(tb->p[P_ENTANGLEMENT] * (double)N + 0.5);
    tb->pairs = malloc((np ? np : 1) * sizeof *tb->pairs);
    tb->adj_start = calloc(N + 1, sizeof *tb->adj_start);
    tb->adj = malloc((np ? np : 1) * sizeof *tb->adj);
    if (!tb->cost || !tb->pairs || !tb->adj_start || !tb->adj) {
        free_landscape(tb);
        return BOSCH_E_NOMEM;
    }
    double total = 0.0;
    for (uint32_t l = 0; l < tb->layers; l++) {
        double m = exp(tb->p[P_LAYER_SENSITIVITY] * prng_normal(&rng));
        for (uint32_t g = 0; g < tb->groups; g++) {
            double k;
            if (prng_uniform(&rng) < tb->p[P_HEAVY_FRACTION])
                k = 1.0 + 2.0 * prng_uniform(&rng);
            else
                k = -0.05 * log(1.0 - prng_uniform(&rng));
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
        size_t u = (size_t)prng_below(&rng, N);
        uint32_t lu = (uint32_t)(u / tb->groups);
        size_t v;
        int cross = tb->layers > 1 && (prng_uniform(&rng) < tb->p[P_CROSS_LAYER] || tb->groups == 1);
        if (cross) {
            uint32_t lv = (uint32_t)prng_below(&rng, tb->layers - 1);
            lv += lv >= lu;
            v = (size_t)lv * tb->groups + (size_t)prng_below(&rng, tb->groups);
        } else if (tb->groups > 1) {
            uint32_t g = (uint32_t)prng_below(&rng, tb->groups - 1);
            g += g >= u % tb->groups;
            v = (size_t)lu * tb->groups + g;
        } else {
            continue;
        }
        double j;
        if (prng_uniform(&rng) < tb->p[P_SYNERGY_FRACTION]) {
            double c = tb->cost[u] < tb->cost[v] ? tb->cost[u] : tb->cost[v];
            j = -0.5 * c;
        } else {
            j = tb->p[P_BACKUP_STRENGTH] * mean_cost * (1.0 + prng_uniform(&rng));
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
    if (!fill) {
        free_landscape(tb);
        return BOSCH_E_NOMEM;
    }
    for (size_t i = 0; i < made; i++) {
        size_t u = tb->pairs[i].u;
        tb->adj[tb->adj_start[u] + fill[u]++] = i;
    }
    free(fill);
    return BOSCH_OK;
}

bosch_testbed *bosch_testbed_create(uint32_t layers, uint32_t kv_groups, uint64_t seed)
{
    if (!layers || !kv_groups || (size_t)layers * kv_groups > ((size_t)1 << 24))
        return create_fail(BOSCH_E_INVALID,
                           "bosch_testbed_create: shape %u x %u is zero or exceeds 2^24 units",
                           layers, kv_groups);
    bosch_testbed *tb = calloc(1, sizeof *tb);
    if (!tb)
        return create_fail(BOSCH_E_NOMEM, "bosch_testbed_create: out of memory");
    tb->layers = layers;
    tb->groups = kv_groups;
    tb->units = (size_t)layers * kv_groups;
    tb->seed = seed;
    for (int i = 0; i < P_COUNT; i++)
        tb->p[i] = params[i].def;
    if (generate(tb) < 0) {
        free(tb);
        return create_fail(BOSCH_E_NOMEM, "bosch_testbed_create: out of memory");
    }
    return tb;
}

void bosch_testbed_free(bosch_testbed *tb)
{
    if (!tb)
        return;
    free_landscape(tb);
    free(tb);
}

size_t bosch_testbed_units(const bosch_testbed *tb)
{
    return tb ? tb->units : 0;
}

static int find_param(const char *name)
{
    for (int i = 0; name && i < P_COUNT; i++)
        if (strcmp(params[i].name, name) == 0)
            return i;
    return -1;
}

int bosch_testbed_set(bosch_testbed *tb, const char *param, double value)
{
    if (!tb || !param)
        return BOSCH_E_INVALID;
    int i = find_param(param);
    if (i < 0)
        return BOSCH_E_OPTION;
    if (!isfinite(value) || value < 0.0 || (params[i].max >= 0.0 && value > params[i].max))
        return BOSCH_E_INVALID;
    double old = tb->p[i];
    tb->p[i] = value;
    int rc = generate(tb);
    if (rc < 0) {
        tb->p[i] = old;
        generate(tb);
    }
    return rc;
}

double bosch_testbed_get(const bosch_testbed *tb, const char *param)
{
    int i = find_param(param);
    return tb && i >= 0 ? tb->p[i] : NAN;
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

int bosch_testbed_score_clean(const bosch_testbed *tb, const uint8_t *mask, double *score)
{
    if (!tb || !mask || !score)
        return BOSCH_E_INVALID;
    *score = exp(-energy(tb, mask));
    return BOSCH_OK;
}

int bosch_testbed_score(const bosch_testbed *tb, const uint8_t *mask, double *score)
{
    int rc = bosch_testbed_score_clean(tb, mask, score);
    if (rc < 0 || tb->p[P_NOISE] == 0.0)
        return rc;
    /* Noise is a function of (seed, mask): the same mask always scores the same. */
    size_t words = bitset_words(tb->units);
    uint64_t *packed = malloc(words * sizeof *packed);
    if (!packed)
        return BOSCH_E_NOMEM;
    bitset_pack(mask, tb->units, packed);
    prng rng;
    prng_init(&rng, tb->seed, bitset_hash(packed, words));
    free(packed);
    *score += tb->p[P_NOISE] * prng_normal(&rng);
    return BOSCH_OK;
}

double bosch_testbed_unit_cost(const bosch_testbed *tb, size_t unit)
{
    return tb && unit < tb->units ? tb->cost[unit] : NAN;
}

size_t bosch_testbed_interactions(const bosch_testbed *tb)
{
    return tb ? tb->npairs : 0;
}

int bosch_testbed_interaction(const bosch_testbed *tb, size_t i, size_t *u, size_t *v, double *j)
{
    if (!tb)
        return BOSCH_E_INVALID;
    if (i >= tb->npairs)
        return BOSCH_E_NOT_FOUND;
    if (u)
        *u = tb->pairs[i].u;
    if (v)
        *v = tb->pairs[i].v;
    if (j)
        *j = tb->pairs[i].j;
    return BOSCH_OK;
}

int bosch_testbed_eval(const uint8_t *mask, size_t units, double *score, void *tb)
{
    const bosch_testbed *t = tb;
    if (!t || units != t->units)
        return BOSCH_E_INVALID;
    return bosch_testbed_score(t, mask, score);
}

int bosch_testbed_batch_eval(const uint8_t *masks, size_t n, size_t units, double *scores, void *tb)
{
    for (size_t i = 0; i < n; i++) {
        int rc = bosch_testbed_eval(masks + i * units, units, &scores[i], tb);
        if (rc < 0)
            return rc;
    }
    return BOSCH_OK;
}

/* ---- brute force ------------------------------------------------------------ */

int bosch_testbed_optimum(const bosch_testbed *tb, const bosch_problem *p, uint8_t *mask,
                          double *score)
{
    if (!tb || !p || p->layers != tb->layers || p->groups != tb->groups)
        return BOSCH_E_INVALID;
    if (bosch_problem_check(p, NULL, 0) != BOSCH_OK)
        return BOSCH_E_INFEASIBLE;
    size_t nfree = 0, fixed_swa = 0;
    for (size_t u = 0; u < p->units; u++) {
        nfree += p->fix[u] == BOSCH_FIX_NONE;
        fixed_swa += p->fix[u] == BOSCH_FIX_SWA;
    }
    size_t k = bosch_problem_target_units(p) - fixed_swa;
    if (comb_binomial(nfree, k) > ((uint64_t)1 << 26))
        return BOSCH_E_TOO_LARGE;
    size_t *freeu = malloc((nfree ? nfree : 1) * sizeof *freeu);
    uint32_t *idx = malloc((k ? k : 1) * sizeof *idx);
    uint8_t *x = malloc(p->units), *best = malloc(p->units);
    if (!freeu || !idx || !x || !best) {
        free(freeu);
        free(idx);
        free(x);
        free(best);
        return BOSCH_E_NOMEM;
    }
    size_t m = 0;
    for (size_t u = 0; u < p->units; u++)
        if (p->fix[u] == BOSCH_FIX_NONE)
            freeu[m++] = u;
    for (uint32_t i = 0; i < k; i++)
        idx[i] = i;
    double best_s = -INFINITY;
    int found = 0, rc = BOSCH_OK;
    do {
        for (size_t u = 0; u < p->units; u++)
            x[u] = p->fix[u] == BOSCH_FIX_SWA;
        for (uint32_t i = 0; i < k; i++)
            x[freeu[idx[i]]] = 1;
        if (!bosch_mask_is_feasible(p, x)) /* layer bounds */
            continue;
        double s;
        rc = bosch_testbed_score(tb, x, &s);
        if (rc < 0)
            break;
        if (!found || s > best_s) {
            best_s = s;
            memcpy(best, x, p->units);
            found = 1;
        }
    } while (comb_next(idx, (uint32_t)k, (uint32_t)nfree));
    if (rc == BOSCH_OK && !found)
        rc = BOSCH_E_INFEASIBLE;
    if (rc == BOSCH_OK) {
        if (mask)
            memcpy(mask, best, p->units);
        if (score)
            *score = best_s;
    }
    free(freeu);
    free(idx);
    free(x);
    free(best);
    return rc;
}
