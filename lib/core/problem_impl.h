/* Internal layout of bosch_problem and the derived per-layer limits. */
#ifndef BOSCH_CORE_PROBLEM_IMPL_H
#define BOSCH_CORE_PROBLEM_IMPL_H

#include "bosch/bosch.h"

struct bosch_problem {
    uint32_t layers, groups, heads;
    size_t units;
    double rho;        /* target ratio as set */
    int exact;         /* 1 when an exact unit count was set */
    size_t exact_units;
    uint8_t *fix;      /* enum bosch_fix per unit */
    double *min_ratio; /* per layer */
    double *max_ratio;
};

/* Allowed SWA count of layer l (fixed units included): [*lo, *hi]. lo > hi
 * means the layer alone is infeasible. */
void problem_layer_range(const bosch_problem *p, uint32_t l, uint32_t *lo, uint32_t *hi);
uint32_t problem_fixed_count(const bosch_problem *p, uint32_t l, int fix);

#endif
