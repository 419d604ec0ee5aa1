/*
 * libbosch baselines: the selections BOSCH is compared with. All of them
 * return masks that meet the problem's constraints exactly (fixed units,
 * per-layer bounds, exact target count), through bosch_repair().
 * Include <bosch/bosch.h> rather than this file.
 */
#ifndef BOSCH_BASELINES_H
#define BOSCH_BASELINES_H

#include "bosch/bosch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Layer-level patterns: whole layers become SWA. With T target units and G
 * units per layer, floor(T/G) layers go SWA entirely and the next layer in
 * the pattern's order takes the remaining T mod G units (lowest KV groups
 * first); fixed units and bounds are then enforced by bosch_repair() with
 * the pattern as priority.
 *   RAND  layers chosen uniformly at random (seeded)
 *   INTR  n SWA layers spread evenly through the stack (interleaved):
 *         with t = L-1-l the position counted from the top, layer l is SWA
 *         when floor((t+1)*n/L) > floor(t*n/L) (n = 4 of 8: layers 0,2,4,6)
 *   BME   full-attention layers kept in three equal blocks at the
 *         beginning, middle and end of the stack; the rest is SWA */
enum bosch_layer_pattern {
    BOSCH_LAYERS_RAND = 0,
    BOSCH_LAYERS_INTR = 1,
    BOSCH_LAYERS_BME = 2
};
BOSCH_API int bosch_baseline_layers(const bosch_problem *p, int pattern, uint64_t seed,
                                    uint8_t *mask);

/* Static ranking: the units with the lowest importance scores become SWA
 * (one score per unit; higher = more important = kept full). Ties go to the
 * lower unit index. NaN/inf scores give BOSCH_E_BAD_SCORE. */
BOSCH_API int bosch_baseline_static(const bosch_problem *p, const double *unit_scores,
                                    uint8_t *mask);

/* Reduction of per-query-head scores to one score per unit (GQA tying). */
enum bosch_reduce {
    BOSCH_REDUCE_MEAN = 0,
    BOSCH_REDUCE_MAX = 1,
    BOSCH_REDUCE_SUM = 2
};
/* Static ranking from one score per query head (bosch_problem_query_heads
 * entries), reduced per unit first. */
BOSCH_API int bosch_baseline_static_heads(const bosch_problem *p, const double *head_scores,
                                          int reduce, uint8_t *mask);

#ifdef __cplusplus
}
#endif

#endif /* BOSCH_BASELINES_H */
