/* Synthetic head-selection landscapes (see include/bosch/testbed.h): the
 * table of families, and what every family shares (lifetime, parameters,
 * noise and fidelity, the evaluator adapters, brute force). Each family
 * generates and scores in its own file (testbed_impl.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/bitset.h"
#include "core/combinatorics.h"
#include "core/errors.h"
#include "testbed/testbed_impl.h"

static const struct {
    const char *name;
    double def, max; /* max < 0: unbounded */
} params[P_COUNT] = {
    {"total_cost", 4.0, -1.0},      {"heavy_fraction", 0.1, 1.0},
    {"layer_sensitivity", 0.7, -1.0}, {"entanglement", 0.0, -1.0},
    {"backup_strength", 15.0, -1.0},  {"synergy_fraction", 0.25, 1.0},
    {"cross_layer", 0.5, 1.0},       {"noise", 0.0, -1.0},
    {"fidelity_noise", 0.0, -1.0},   {"fidelity_correlation", 0.0, 1.0},
};

/* The families, by enum bosch_testbed_family. */
static const struct testbed_family *const families[BOSCH_TESTBED_FAMILY_LAST_] = {
    [BOSCH_TESTBED_ENERGY] = &testbed_energy,
    [BOSCH_TESTBED_CIRCUITS] = &testbed_circuits,
    [BOSCH_TESTBED_QUBO] = &testbed_qubo,
    [BOSCH_TESTBED_NK2] = &testbed_nk2,
    [BOSCH_TESTBED_NK4] = &testbed_nk4,
    [BOSCH_TESTBED_COVERAGE] = &testbed_coverage,
    [BOSCH_TESTBED_LAYER_CONCAVE] = &testbed_layer_concave,
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
    free(tb->lin);
    free(tb->circ_start);
    free(tb->circ_units);
    free(tb->circ_w);
    free(tb->q);
    free(tb->nbr);
    free(tb->table);
    free(tb->cov_start);
    free(tb->cov_items);
    free(tb->item_w);
    free(tb->lscale);
    free(tb->lcurve);
    tb->lin = tb->circ_w = tb->table = tb->item_w = tb->lscale = tb->lcurve = NULL;
    tb->circ_start = tb->circ_units = tb->nbr = tb->cov_start = tb->cov_items = NULL;
    tb->q = NULL;
    tb->ncirc = tb->nq = tb->nitems = 0;
    tb->nk = 0;
}

/* The landscape from the seed and the parameters; on failure nothing is
 * left allocated. Each family draws from its own stream. */
static int generate(bosch_testbed *tb)
{
    free_landscape(tb);
    prng rng;
    prng_init(&rng, tb->seed, 0x7465737462656400ull + (uint64_t)tb->family);
    int rc = families[tb->family]->generate(tb, &rng);
    if (rc < 0)
        free_landscape(tb);
    return rc;
}

static bosch_testbed *create(int family, uint32_t layers, uint32_t kv_groups, uint64_t seed)
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
    tb->family = family;
    for (int i = 0; i < P_COUNT; i++)
        tb->p[i] = params[i].def;
    if (generate(tb) < 0) {
        free(tb);
        return create_fail(BOSCH_E_NOMEM, "bosch_testbed_create: out of memory");
    }
    return tb;
}

bosch_testbed *bosch_testbed_create(uint32_t layers, uint32_t kv_groups, uint64_t seed)
{
    return create(BOSCH_TESTBED_ENERGY, layers, kv_groups, seed);
}

bosch_testbed *bosch_testbed_create_family(int family, uint32_t layers, uint32_t kv_groups,
                                           uint64_t seed)
{
    if (family < 0 || family >= BOSCH_TESTBED_FAMILY_LAST_)
        return create_fail(BOSCH_E_INVALID, "bosch_testbed_create_family: unknown family %d",
                           family);
    return create(family, layers, kv_groups, seed);
}

int bosch_testbed_family(const bosch_testbed *tb)
{
    return tb ? tb->family : BOSCH_E_INVALID;
}

const char *bosch_testbed_family_name(int family)
{
    return family >= 0 && family < BOSCH_TESTBED_FAMILY_LAST_ ? families[family]->name : NULL;
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

/* The parameters a landscape family takes (the others shape the energy landscape). */
static int family_param(int i)
{
    return i == P_NOISE || i == P_FIDELITY_NOISE || i == P_FIDELITY_CORRELATION;
}

int bosch_testbed_set(bosch_testbed *tb, const char *param, double value)
{
    if (!tb || !param)
        return BOSCH_E_INVALID;
    int i = find_param(param);
    if (i < 0 || (tb->family != BOSCH_TESTBED_ENERGY && !family_param(i)))
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
    if (tb && i >= 0 && tb->family != BOSCH_TESTBED_ENERGY && !family_param(i))
        return NAN;
    return tb && i >= 0 ? tb->p[i] : NAN;
}

int bosch_testbed_score_clean(const bosch_testbed *tb, const uint8_t *mask, double *score)
{
    if (!tb || !mask || !score)
        return BOSCH_E_INVALID;
    return families[tb->family]->score(tb, mask, score);
}

/* A standard normal that is a function of (seed, mask, stream). */
static int mask_normal(const bosch_testbed *tb, const uint8_t *mask, uint64_t stream, double *z)
{
    size_t words = bitset_words(tb->units);
    uint64_t *packed = malloc(words * sizeof *packed);
    if (!packed)
        return BOSCH_E_NOMEM;
    bitset_pack(mask, tb->units, packed);
    prng rng;
    prng_init(&rng, tb->seed, bitset_hash(packed, words) ^ stream);
    free(packed);
    *z = prng_normal(&rng);
    return BOSCH_OK;
}

int bosch_testbed_score_request(const bosch_testbed *tb, const uint8_t *mask, double fidelity,
                                uint32_t draw, double *score)
{
    if (!(fidelity > 0.0 && fidelity <= 1.0))
        return BOSCH_E_INVALID;
    int rc = bosch_testbed_score_clean(tb, mask, score);
    if (rc < 0)
        return rc;
    /* Noise is a function of (seed, mask, request): a request always scores the same.
     * Draw 0 at full fidelity keeps the stream of bosch_testbed_score. */
    double z;
    if (tb->p[P_NOISE] != 0.0) {
        uint64_t stream = draw ? 0x9e3779b97f4a7c15ull * draw : 0;
        if ((rc = mask_normal(tb, mask, stream, &z)) < 0)
            return rc;
        *score += tb->p[P_NOISE] * z;
    }
    if (fidelity < 1.0 && tb->p[P_FIDELITY_NOISE] != 0.0) {
        uint64_t fbits;
        memcpy(&fbits, &fidelity, sizeof fbits);
        uint64_t stream = 0xd1b54a32d192ed03ull * (draw + 1) ^ (fbits * 0xbf58476d1ce4e5b9ull);
        if ((rc = mask_normal(tb, mask, stream, &z)) < 0)
            return rc;
        /* A share c of the error's variance is a smooth function of the
         * mask, (1/sqrt(units)) sum_u g_u (2 z_u - 1) with g_u ~ N(0, 1)
         * fixed per (seed, fidelity, draw): a sample subset shifts the whole
         * landscape a little, so neighbouring masks share most of it. */
        double c = tb->p[P_FIDELITY_CORRELATION];
        if (c > 0.0) {
            prng rng;
            prng_init(&rng, tb->seed, stream ^ 0x5bd1e9955bd1e995ull);
            double lin = 0.0;
            for (size_t u = 0; u < tb->units; u++)
                lin += prng_normal(&rng) * (mask[u] ? 1.0 : -1.0);
            z = sqrt(1.0 - c) * z + sqrt(c) * lin / sqrt((double)tb->units);
        }
        *score += tb->p[P_FIDELITY_NOISE] * sqrt(1.0 / fidelity - 1.0) * z;
    }
    return BOSCH_OK;
}

int bosch_testbed_score(const bosch_testbed *tb, const uint8_t *mask, double *score)
{
    return bosch_testbed_score_request(tb, mask, 1.0, 0, score);
}

double bosch_testbed_unit_cost(const bosch_testbed *tb, size_t unit)
{
    return tb && tb->cost && unit < tb->units ? tb->cost[unit] : NAN;
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

int bosch_testbed_request_eval(const uint8_t *mask, size_t units, double fidelity, uint32_t draw,
                               double *score, void *tb)
{
    const bosch_testbed *t = tb;
    if (!t || units != t->units)
        return BOSCH_E_INVALID;
    return bosch_testbed_score_request(t, mask, fidelity, draw, score);
}

int bosch_testbed_request_batch_eval(const uint8_t *masks, const double *fidelity,
                                     const uint32_t *draws, size_t n, size_t units, double *scores,
                                     void *tb)
{
    for (size_t i = 0; i < n; i++) {
        int rc = bosch_testbed_request_eval(masks + i * units, units, fidelity[i], draws[i],
                                            &scores[i], tb);
        if (rc < 0)
            return rc;
    }
    return BOSCH_OK;
}

/* ---- brute force ------------------------------------------------------------ */

static int brute_force(const bosch_testbed *tb, const bosch_problem *p, uint8_t *mask,
                       double *score, int clean)
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
        rc = clean ? bosch_testbed_score_clean(tb, x, &s) : bosch_testbed_score(tb, x, &s);
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

int bosch_testbed_optimum(const bosch_testbed *tb, const bosch_problem *p, uint8_t *mask,
                          double *score)
{
    return brute_force(tb, p, mask, score, 0);
}

int bosch_testbed_exact_optimum(const bosch_testbed *tb, const bosch_problem *p, uint8_t *mask,
                                double *score)
{
    if (!tb || !p || p->layers != tb->layers || p->groups != tb->groups)
        return BOSCH_E_INVALID;
    if (bosch_problem_check(p, NULL, 0) != BOSCH_OK)
        return BOSCH_E_INFEASIBLE;
    const struct testbed_family *f = families[tb->family];
    if (f->exact_optimum) {
        int rc = f->exact_optimum(tb, p, mask, score);
        if (rc != TESTBED_NO_SHORTCUT)
            return rc;
    }
    return brute_force(tb, p, mask, score, 1);
}
