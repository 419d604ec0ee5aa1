/* Static ranking: the least important units become SWA. */
#include <math.h>
#include <stdlib.h>

#include "core/problem_impl.h"

int bosch_baseline_static(const bosch_problem *p, const double *unit_scores, uint8_t *mask)
{
    if (!p || !unit_scores || !mask)
        return BOSCH_E_INVALID;
    double *prio = malloc(p->units * sizeof *prio);
    uint8_t *none = calloc(p->units, 1);
    if (!prio || !none) {
        free(prio);
        free(none);
        return BOSCH_E_NOMEM;
    }
    int rc = BOSCH_OK;
    for (size_t u = 0; u < p->units && rc == BOSCH_OK; u++) {
        if (!isfinite(unit_scores[u]))
            rc = BOSCH_E_BAD_SCORE;
        prio[u] = -unit_scores[u]; /* low importance = high SWA priority */
    }
    /* Repairing the all-full mask up to the target sets units in order of
     * decreasing priority (ties: lower index), within fixed units and bounds. */
    if (rc == BOSCH_OK)
        rc = bosch_repair(p, none, prio, NULL, mask);
    free(prio);
    free(none);
    return rc < 0 ? rc : BOSCH_OK;
}

int bosch_baseline_static_heads(const bosch_problem *p, const double *head_scores, int reduce,
                                uint8_t *mask)
{
    if (!p || !head_scores || !mask ||
        (reduce != BOSCH_REDUCE_MEAN && reduce != BOSCH_REDUCE_MAX && reduce != BOSCH_REDUCE_SUM))
        return BOSCH_E_INVALID;
    double *unit = malloc(p->units * sizeof *unit);
    if (!unit)
        return BOSCH_E_NOMEM;
    for (size_t u = 0; u < p->units; u++) {
        const double *h = head_scores + u * p->heads;
        double acc = reduce == BOSCH_REDUCE_MAX ? h[0] : 0.0;
        for (uint32_t i = 0; i < p->heads; i++) {
            if (!isfinite(h[i])) {
                free(unit);
                return BOSCH_E_BAD_SCORE;
            }
            if (reduce == BOSCH_REDUCE_MAX)
                acc = h[i] > acc ? h[i] : acc;
            else
                acc += h[i];
        }
        unit[u] = reduce == BOSCH_REDUCE_MEAN ? acc / p->heads : acc;
    }
    int rc = bosch_baseline_static(p, unit, mask);
    free(unit);
    return rc;
}
