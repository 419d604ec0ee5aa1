/*
 * libbosch testbed: synthetic head-selection landscapes, to develop and test
 * search strategies without a model.
 *
 * A landscape over unit masks z (1 = SWA) has an "energy"
 *   E(z) = sum_u c_u z_u + sum_{(u,v)} J_uv z_u z_v          (clamped at >= 0)
 * and the score S(z) = exp(-E(z)) (+ noise), so S(all full) = 1 and S falls
 * towards 0 as damaging units go SWA, like a retrieval accuracy.
 *  - c_u = m_l * k_u: the cost of unit u in layer l going SWA, the product of
 *    a layer sensitivity m_l = exp(layer_sensitivity * g_l) (g_l standard
 *    normal) and a heavy-tailed unit cost: a fraction `heavy_fraction` of the
 *    units are "retrieval" units with k ~ U(1,3), the rest "local" units with
 *    k ~ 0.05 * Exp(1); the costs are then scaled so that sum_u c_u equals
 *    `total_cost`.
 *  - Interactions (entanglement): round(entanglement * units) pairs. A pair
 *    is a redundant "backup" pair with probability 1 - `synergy_fraction`:
 *    J = +backup_strength * mean(c) * U(1,2), so each unit alone looks cheap
 *    but both SWA is expensive; otherwise a synergy pair with
 *    J = -min(c_u, c_v) / 2. The partner is in the same layer with
 *    probability 1 - `cross_layer`, else in a random other layer.
 *  - Noise: `noise` is the standard deviation of a Gaussian added to the
 *    score; it is a deterministic function of (seed, mask), so a mask always
 *    gets the same score.
 * Parameters (bosch_testbed_set, by name; setting one regenerates the
 * landscape from the seed): total_cost (default 4), heavy_fraction (0.1),
 * layer_sensitivity (0.7), entanglement (0), backup_strength (15),
 * synergy_fraction (0.25), cross_layer (0.5), noise (0), fidelity_noise (0)
 * and fidelity_correlation (0; see bosch_testbed_score_request).
 *
 * Thread safety: scoring functions only read the landscape and may be
 * called from many threads at once; setters may not run concurrently with
 * anything else on the same testbed.
 *
 * EXPERIMENTAL TIER (docs/abi.md): not covered by the ABI promise; it may
 * change or go in any release. Define BOSCH_EXPERIMENTAL_API before
 * including it; its symbols are in the version node LIBBOSCH_EXPERIMENTAL_0.
 */
#ifndef BOSCH_TESTBED_H
#define BOSCH_TESTBED_H

#ifndef BOSCH_EXPERIMENTAL_API
#error "<bosch/testbed.h> is the experimental tier: define BOSCH_EXPERIMENTAL_API (docs/abi.md)"
#endif

#include "bosch/bosch.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bosch_testbed bosch_testbed;

/* NULL on zero sizes, more than 2^24 units, or out of memory. */
BOSCH_API bosch_testbed *bosch_testbed_create(uint32_t layers, uint32_t kv_groups, uint64_t seed);
BOSCH_API void bosch_testbed_free(bosch_testbed *tb);
BOSCH_API size_t bosch_testbed_units(const bosch_testbed *tb);

/* BOSCH_E_OPTION for an unknown name, BOSCH_E_INVALID for a value out of
 * range (all must be finite and >= 0; fractions <= 1). */
BOSCH_API int bosch_testbed_set(bosch_testbed *tb, const char *param, double value);
/* NaN for an unknown name. */
BOSCH_API double bosch_testbed_get(const bosch_testbed *tb, const char *param);

/* S(z) with noise / without noise. `mask` has bosch_testbed_units() bytes. */
BOSCH_API int bosch_testbed_score(const bosch_testbed *tb, const uint8_t *mask, double *score);
BOSCH_API int bosch_testbed_score_clean(const bosch_testbed *tb, const uint8_t *mask,
                                        double *score);
/* Cost c_u of unit u alone (NaN when out of range). */
BOSCH_API double bosch_testbed_unit_cost(const bosch_testbed *tb, size_t unit);
BOSCH_API size_t bosch_testbed_interactions(const bosch_testbed *tb);
BOSCH_API int bosch_testbed_interaction(const bosch_testbed *tb, size_t i, size_t *u, size_t *v,
                                        double *j);

/* The score of a request (bosch_request_eval_fn): draw d >= 1 adds noise
 * drawn independently of draw 0 (a function of seed, mask and d), and
 * fidelity f < 1 adds a further Gaussian of standard deviation
 *   fidelity_noise * sqrt(1/f - 1)
 * (the sampling error of a subset of a share f of the samples), a function
 * of (seed, mask, draw, f). A share `fidelity_correlation` (0..1, default
 * 0) of that error's variance is a smooth function of the mask,
 * (1/sqrt(units)) sum_u g_u (2 z_u - 1) with g_u ~ N(0, 1) fixed per (seed,
 * f, draw): a subset of the samples shifts the whole landscape a little, so
 * masks one swap apart share most of their error, as on a real model. Fidelity 1, draw 0 is bosch_testbed_score.
 * BOSCH_E_INVALID for a fidelity outside (0, 1]. */
BOSCH_API int bosch_testbed_score_request(const bosch_testbed *tb, const uint8_t *mask,
                                          double fidelity, uint32_t draw, double *score);
/* Ready-made evaluators: pass the testbed as `user`
 * (bosch_set_evaluator(opt, bosch_testbed_eval, tb)). */
BOSCH_API int bosch_testbed_eval(const uint8_t *mask, size_t units, double *score, void *tb);
BOSCH_API int bosch_testbed_batch_eval(const uint8_t *masks, size_t n, size_t units,
                                       double *scores, void *tb);
BOSCH_API int bosch_testbed_request_eval(const uint8_t *mask, size_t units, double fidelity,
                                         uint32_t draw, double *score, void *tb);
BOSCH_API int bosch_testbed_request_batch_eval(const uint8_t *masks, const double *fidelity,
                                               const uint32_t *draws, size_t n, size_t units,
                                               double *scores, void *tb);

/* Exact optimum by brute force over every mask feasible for `p` (same
 * shape): fixed units, per-layer bounds, exact target count. Scores with
 * noise (what a search sees). BOSCH_E_TOO_LARGE beyond 2^26 feasible masks.
 * `mask` and `score` may be NULL. */
BOSCH_API int bosch_testbed_optimum(const bosch_testbed *tb, const bosch_problem *p, uint8_t *mask,
                                    double *score);

/* ------------------------------------------------------------------------ */
/* Landscape families (independent of the energy model above)               */
/* ------------------------------------------------------------------------ */
/*
 * Other landscape shapes, to measure a search on objectives it was not
 * tuned on. Every family is a maximisation over unit masks z (1 = SWA),
 * written with y_u = 1 - z_u (1 = full attention), deterministic from the
 * seed (bosch_testbed_create_family), and scores in a bounded range:
 *  - BOSCH_TESTBED_CIRCUITS, redundant circuits: floor(units / 4) disjoint
 *    circuits of 2-4 units each (units drawn from a random permutation, so
 *    mostly across layers), weight w_c = exp(N(0,1)); a circuit is lost only
 *    when ALL its units are SWA. Each unit also has a small linear value a_u
 *    (together 10% of the total). S = (sum of live w_c + sum_u a_u y_u) /
 *    (sum w + sum a), in [0, 1], S(all full) = 1.
 *  - BOSCH_TESTBED_QUBO, cardinality-constrained QUBO: S = (sum_u h_u y_u +
 *    sum_(u,v) Q_uv y_u y_v) / (sum |h| + sum |Q|), in [-1, 1]; h_u ~ N(0,1),
 *    round(1.5 * units) pairs with Q ~ 1.5 N(0,1), the partner in the same
 *    layer with probability 1/2, else anywhere.
 *  - BOSCH_TESTBED_NK2, BOSCH_TESTBED_NK4, NK landscapes with K = 2 / 4
 *    layer-biased neighbours (each neighbour in the same layer with
 *    probability 1/2, in an adjacent layer with 0.35, else anywhere):
 *    S = mean_u T_u(y_u, y_neighbours), T_u a table of U(0,1) values; in [0, 1].
 *  - BOSCH_TESTBED_COVERAGE, weighted max-coverage: 2 * units items with
 *    weights Exp(1); each unit covers 2-6 random items (every item is covered
 *    by some unit); S = covered weight of the full units / total weight, in
 *    [0, 1], S(all full) = 1.
 *  - BOSCH_TESTBED_LAYER_CONCAVE, per-layer sensitivity with diminishing
 *    returns: S = sum_l s_l g_l(n_l / G) / sum_l s_l, n_l the full units of
 *    layer l, g_l(x) = (1 - exp(-a_l x)) / (1 - exp(-a_l)) concave, scale
 *    s_l = exp(N(0,1)), curvature a_l log-uniform in [0.3, 8]; in [0, 1].
 * Only "noise", "fidelity_noise" and "fidelity_correlation" apply to a
 * family (bosch_testbed_set of an energy parameter returns BOSCH_E_OPTION,
 * bosch_testbed_get gives NaN);
 * bosch_testbed_unit_cost is NaN and bosch_testbed_interactions 0. Scoring,
 * the evaluators and bosch_testbed_optimum work for every family.
 */
enum bosch_testbed_family {
    BOSCH_TESTBED_ENERGY = 0, /* the model above; bosch_testbed_create */
    BOSCH_TESTBED_CIRCUITS = 1,
    BOSCH_TESTBED_QUBO = 2,
    BOSCH_TESTBED_NK2 = 3,
    BOSCH_TESTBED_NK4 = 4,
    BOSCH_TESTBED_COVERAGE = 5,
    BOSCH_TESTBED_LAYER_CONCAVE = 6,
    BOSCH_TESTBED_FAMILY_LAST_ = 7 /* one past the last family; not a family */
};

/* A landscape of `family` (enum bosch_testbed_family); family
 * BOSCH_TESTBED_ENERGY is bosch_testbed_create (same landscape, bit for bit).
 * NULL on an unknown family or as bosch_testbed_create. */
BOSCH_API bosch_testbed *bosch_testbed_create_family(int family, uint32_t layers,
                                                     uint32_t kv_groups, uint64_t seed);
/* The testbed's family, or BOSCH_E_INVALID for NULL. */
BOSCH_API int bosch_testbed_family(const bosch_testbed *tb);
/* "energy", "circuits", "qubo", "nk2", "nk4", "coverage", "layer-concave";
 * NULL for an unknown family. */
BOSCH_API const char *bosch_testbed_family_name(int family);

/* Proven optimum of the noise-free score over the masks feasible for `p`:
 *  - BOSCH_TESTBED_LAYER_CONCAVE: exact at any size and any constraints
 *    (the score depends on the per-layer counts only; dynamic programme over
 *    layers);
 *  - BOSCH_TESTBED_CIRCUITS: exact at any size when `p` has no fixed units
 *    and default layer bounds (disjoint circuits: a group knapsack over the
 *    circuits, exact count of full units);
 *  - otherwise brute force over the feasible masks, BOSCH_E_TOO_LARGE beyond
 *    2^26 of them (e.g. 6 x 4 units at rho 0.5 is 2.7 million masks).
 * `mask` and `score` (clean score) may be NULL. */
BOSCH_API int bosch_testbed_exact_optimum(const bosch_testbed *tb, const bosch_problem *p,
                                          uint8_t *mask, double *score);

#ifdef __cplusplus
}
#endif

#endif /* BOSCH_TESTBED_H */
