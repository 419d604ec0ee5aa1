/* Inside the testbed: the landscape every family fills in, and the table
 * of families (testbed.c holds the table and what all families share:
 * lifetime, parameters, noise, evaluator adapters, brute force). One file
 * per family: energy.c, circuits.c, qubo.c, nk.c, coverage.c,
 * layer_concave.c. */
#ifndef LIBBOSCH_TESTBED_TESTBED_IMPL_H
#define LIBBOSCH_TESTBED_TESTBED_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "bosch/testbed.h"
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

/* A landscape family. generate fills tb's fields from rng (the parameters
 * are set; on failure testbed.c frees what it allocated); score writes the
 * noise-free score of a mask; exact_optimum (NULL = brute force) writes a
 * best feasible mask and its score, or returns TESTBED_NO_SHORTCUT where
 * its structure does not apply to the problem. */
#define TESTBED_NO_SHORTCUT 1
struct testbed_family {
    const char *name;
    int (*generate)(bosch_testbed *tb, prng *rng);
    int (*score)(const bosch_testbed *tb, const uint8_t *mask, double *score);
    int (*exact_optimum)(const bosch_testbed *tb, const bosch_problem *p, uint8_t *mask,
                         double *score);
};

extern const struct testbed_family testbed_energy, testbed_circuits, testbed_qubo, testbed_nk2,
    testbed_nk4, testbed_coverage, testbed_layer_concave;

/* draws.c: random draws the families share. */
void testbed_shuffle(prng *rng, size_t *a, size_t n);
/* A unit near u: same layer with probability 1/2, an adjacent layer with
 * 0.35, else any layer; never u itself (N > 1). */
size_t testbed_near_unit(const bosch_testbed *tb, prng *rng, size_t u);

#endif
