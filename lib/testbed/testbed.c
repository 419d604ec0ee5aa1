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
    P_FIDELITY_NOISE,
    P_FIDELITY_CORRELATION,
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
    {"fidelity_noise", 0.0, -1.0},   {"fidelity_correlation", 0.0, 1.0},
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
    /* Families other than BOSCH_TESTBED_ENERGY (see testbed.h). */
    int family;
    double norm;        /* divisor of the raw score */
    double *lin;        /* circuits: a_u; qubo: h_u */
    size_t ncirc;       /* circuits: CSR of units by circuit, weights */
    size_t *circ_start, *circ_units;
    double *circ_w;
    struct pair *q;     /* qubo pairs, on the full indicators */
    size_t nq;
    uint32_t nk;        /* nk: neighbours per unit, units x nk, units x 2^(nk+1) */
    size_t *nbr;
    double *table;
    size_t nitems;      /* coverage: CSR of items by unit, item weights */
    size_t *cov_start, *cov_items;
    double *item_w;
    double *lscale, *lcurve; /* layer-concave: s_l, a_l */
};

static const char *const family_names[BOSCH_TESTBED_FAMILY_LAST_] = {
    "energy", "circuits", "qubo", "nk2", "nk4", "coverage", "layer-concave"};

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

static int generate_family(bosch_testbed *tb);

static int generate(bosch_testbed *tb)
{
    free_landscape(tb);
    if (tb->family != BOSCH_TESTBED_ENERGY)
        return generate_family(tb);
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
    return family >= 0 && family < BOSCH_TESTBED_FAMILY_LAST_ ? family_names[family] : NULL;
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

static int family_score(const bosch_testbed *tb, const uint8_t *mask, double *score);

int bosch_testbed_score_clean(const bosch_testbed *tb, const uint8_t *mask, double *score)
{
    if (!tb || !mask || !score)
        return BOSCH_E_INVALID;
    if (tb->family != BOSCH_TESTBED_ENERGY)
        return family_score(tb, mask, score);
    *score = exp(-energy(tb, mask));
    return BOSCH_OK;
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

/* ---- landscape families ----------------------------------------------------- */

static void shuffle(prng *rng, size_t *a, size_t n)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)prng_below(rng, i);
        size_t t = a[i - 1];
        a[i - 1] = a[j];
        a[j] = t;
    }
}

/* A unit near u: same layer with probability 1/2, an adjacent layer with
 * 0.35, else any layer; never u itself (N > 1). */
static size_t near_unit(const bosch_testbed *tb, prng *rng, size_t u)
{
    uint32_t G = tb->groups, L = tb->layers, lu = (uint32_t)(u / G);
    for (;;) {
        double r = prng_uniform(rng);
        uint32_t l;
        if (r < 0.5 || L == 1)
            l = lu;
        else if (r < 0.85) {
            int up = prng_below(rng, 2) != 0;
            if (lu == 0)
                up = 1;
            if (lu + 1 == L)
                up = 0;
            l = up ? lu + 1 : lu - 1;
        } else {
            l = (uint32_t)prng_below(rng, L);
        }
        size_t v = (size_t)l * G + (size_t)prng_below(rng, G);
        if (v != u)
            return v;
    }
}

static int generate_family(bosch_testbed *tb)
{
    size_t N = tb->units;
    uint32_t L = tb->layers, G = tb->groups;
    prng rng;
    prng_init(&rng, tb->seed, 0x7465737462656400ull + (uint64_t)tb->family);
    switch (tb->family) {
    case BOSCH_TESTBED_CIRCUITS: {
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
        shuffle(&rng, perm, N);
        size_t at = 0, c = 0;
        double wsum = 0.0, asum = 0.0;
        for (; c < C && at + 2 <= N; c++) {
            size_t sz = 2 + (size_t)prng_below(&rng, 3);
            if (at + sz > N)
                sz = N - at;
            tb->circ_start[c] = at;
            for (size_t i = 0; i < sz; i++)
                tb->circ_units[at + i] = perm[at + i];
            at += sz;
            tb->circ_w[c] = exp(prng_normal(&rng));
            wsum += tb->circ_w[c];
        }
        tb->ncirc = c;
        tb->circ_start[c] = at;
        free(perm);
        for (size_t u = 0; u < N; u++) {
            tb->lin[u] = prng_uniform(&rng);
            asum += tb->lin[u];
        }
        /* linear values: 10% of the total (all of it without circuits) */
        double ascale = wsum > 0.0 && asum > 0.0 ? (wsum / 9.0) / asum : 1.0;
        for (size_t u = 0; u < N; u++)
            tb->lin[u] *= ascale;
        tb->norm = wsum + asum * ascale;
        break;
    }
    case BOSCH_TESTBED_QUBO: {
        size_t nq = N > 1 ? (size_t)floor(1.5 * (double)N + 0.5) : 0;
        tb->lin = malloc(N * sizeof *tb->lin);
        tb->q = malloc((nq ? nq : 1) * sizeof *tb->q);
        if (!tb->lin || !tb->q)
            return BOSCH_E_NOMEM;
        double norm = 0.0;
        for (size_t u = 0; u < N; u++) {
            tb->lin[u] = prng_normal(&rng);
            norm += fabs(tb->lin[u]);
        }
        for (size_t i = 0; i < nq; i++) {
            size_t u = (size_t)prng_below(&rng, N), v;
            if (G > 1 && prng_uniform(&rng) < 0.5) {
                uint32_t g = (uint32_t)prng_below(&rng, G - 1);
                g += g >= u % G;
                v = (u / G) * G + g;
            } else {
                v = (size_t)prng_below(&rng, N - 1);
                v += v >= u;
            }
            tb->q[i].u = u < v ? u : v;
            tb->q[i].v = u < v ? v : u;
            tb->q[i].j = 1.5 * prng_normal(&rng);
            norm += fabs(tb->q[i].j);
        }
        tb->nq = nq;
        tb->norm = norm > 0.0 ? norm : 1.0;
        break;
    }
    case BOSCH_TESTBED_NK2:
    case BOSCH_TESTBED_NK4: {
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
                    v = tries < 64 ? near_unit(tb, &rng, u) : (size_t)prng_below(&rng, N);
                    int dup = v == u;
                    for (uint32_t i = 0; i < k && !dup; i++)
                        dup = tb->nbr[u * K + i] == v;
                    if (!dup)
                        break;
                }
                tb->nbr[u * K + k] = v;
            }
            for (size_t t = 0; t < T; t++)
                tb->table[u * T + t] = prng_uniform(&rng);
        }
        tb->norm = (double)N;
        break;
    }
    case BOSCH_TESTBED_COVERAGE: {
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
            tb->item_w[i] = -log(1.0 - prng_uniform(&rng));
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
            size_t c = 2 + (size_t)prng_below(&rng, 5);
            if (c > M)
                c = M;
            size_t first = n;
            for (size_t k = 0; k < c; k++) {
                size_t it;
                int dup;
                do {
                    it = (size_t)prng_below(&rng, M);
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
                tmp_unit[n++] = (size_t)prng_below(&rng, N);
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
        break;
    }
    case BOSCH_TESTBED_LAYER_CONCAVE: {
        tb->lscale = malloc(L * sizeof *tb->lscale);
        tb->lcurve = malloc(L * sizeof *tb->lcurve);
        if (!tb->lscale || !tb->lcurve)
            return BOSCH_E_NOMEM;
        double sum = 0.0;
        for (uint32_t l = 0; l < L; l++) {
            tb->lscale[l] = exp(prng_normal(&rng));
            tb->lcurve[l] = exp(log(0.3) + (log(8.0) - log(0.3)) * prng_uniform(&rng));
            sum += tb->lscale[l];
        }
        tb->norm = sum;
        break;
    }
    default:
        return BOSCH_E_INVALID;
    }
    return BOSCH_OK;
}

/* Layer l's term of the layer-concave family with n full units (unnormalised). */
static double layer_term(const bosch_testbed *tb, uint32_t l, uint32_t n)
{
    double a = tb->lcurve[l];
    return tb->lscale[l] * (1.0 - exp(-a * (double)n / (double)tb->groups)) / (1.0 - exp(-a));
}

static int family_score(const bosch_testbed *tb, const uint8_t *mask, double *score)
{
    double f = 0.0;
    size_t N = tb->units;
    switch (tb->family) {
    case BOSCH_TESTBED_CIRCUITS:
        for (size_t c = 0; c < tb->ncirc; c++)
            for (size_t i = tb->circ_start[c]; i < tb->circ_start[c + 1]; i++)
                if (!mask[tb->circ_units[i]]) {
                    f += tb->circ_w[c];
                    break;
                }
        for (size_t u = 0; u < N; u++)
            if (!mask[u])
                f += tb->lin[u];
        break;
    case BOSCH_TESTBED_QUBO:
        for (size_t u = 0; u < N; u++)
            if (!mask[u])
                f += tb->lin[u];
        for (size_t i = 0; i < tb->nq; i++)
            if (!mask[tb->q[i].u] && !mask[tb->q[i].v])
                f += tb->q[i].j;
        break;
    case BOSCH_TESTBED_NK2:
    case BOSCH_TESTBED_NK4: {
        uint32_t K = tb->nk;
        size_t T = (size_t)1 << (K + 1);
        for (size_t u = 0; u < N; u++) {
            size_t idx = !mask[u];
            for (uint32_t k = 0; k < K; k++)
                idx |= (size_t)!mask[tb->nbr[u * K + k]] << (k + 1);
            f += tb->table[u * T + idx];
        }
        break;
    }
    case BOSCH_TESTBED_COVERAGE: {
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
        break;
    }
    case BOSCH_TESTBED_LAYER_CONCAVE:
        for (uint32_t l = 0; l < tb->layers; l++) {
            uint32_t n = 0;
            for (uint32_t g = 0; g < tb->groups; g++)
                n += !mask[(size_t)l * tb->groups + g];
            f += layer_term(tb, l, n);
        }
        break;
    default:
        return BOSCH_E_INVALID;
    }
    *score = f / tb->norm;
    return BOSCH_OK;
}

/* ---- exact optima by structure ---------------------------------------------- */

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

int bosch_testbed_exact_optimum(const bosch_testbed *tb, const bosch_problem *p, uint8_t *mask,
                                double *score)
{
    if (!tb || !p || p->layers != tb->layers || p->groups != tb->groups)
        return BOSCH_E_INVALID;
    if (bosch_problem_check(p, NULL, 0) != BOSCH_OK)
        return BOSCH_E_INFEASIBLE;
    if (tb->family == BOSCH_TESTBED_LAYER_CONCAVE)
        return optimum_layer_concave(tb, p, mask, score);
    if (tb->family == BOSCH_TESTBED_CIRCUITS) {
        int plain = 1;
        for (size_t u = 0; u < p->units && plain; u++)
            plain = p->fix[u] == BOSCH_FIX_NONE;
        for (uint32_t l = 0; l < p->layers && plain; l++) {
            uint32_t lo, hi;
            problem_layer_range(p, l, &lo, &hi);
            plain = lo == 0 && hi == p->groups;
        }
        if (plain)
            return optimum_circuits(tb, p, mask, score);
    }
    return brute_force(tb, p, mask, score, 1);
}
