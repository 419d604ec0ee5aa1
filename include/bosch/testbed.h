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
 * synergy_fraction (0.25), cross_layer (0.5), noise (0).
 *
 * Thread safety: scoring functions only read the landscape and may be
 * called from many threads at once; setters may not run concurrently with
 * anything else on the same testbed.
 */
#ifndef BOSCH_TESTBED_H
#define BOSCH_TESTBED_H

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

/* Ready-made evaluators: pass the testbed as `user`
 * (bosch_set_evaluator(opt, bosch_testbed_eval, tb)). */
BOSCH_API int bosch_testbed_eval(const uint8_t *mask, size_t units, double *score, void *tb);
BOSCH_API int bosch_testbed_batch_eval(const uint8_t *masks, size_t n, size_t units,
                                       double *scores, void *tb);

/* Exact optimum by brute force over every mask feasible for `p` (same
 * shape): fixed units, per-layer bounds, exact target count. Scores with
 * noise (what a search sees). BOSCH_E_TOO_LARGE beyond 2^26 feasible masks.
 * `mask` and `score` may be NULL. */
BOSCH_API int bosch_testbed_optimum(const bosch_testbed *tb, const bosch_problem *p, uint8_t *mask,
                                    double *score);

#ifdef __cplusplus
}
#endif

#endif /* BOSCH_TESTBED_H */
