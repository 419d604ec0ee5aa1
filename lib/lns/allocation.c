/* Stage 2: adaptive per-layer ratios meeting the global budget exactly.
 *
 * Layer l aims at rho_l = rho + spread * (mean(w) - w_l): layers whose probe
 * drop was small (w_l small, "easy") carry more SWA. The aim is clamped to
 * the layer's allowed range and rounded to a level (a multiple of 1/G); then
 * single layers move to the adjacent level, the one furthest from its aim
 * first, until the total equals the target exactly. */
#include <math.h>
#include <stdlib.h>

#include "bosch/bosch.h"
#include "lns/allocation.h"

int alloc_counts(uint32_t layers, uint32_t groups, const uint32_t *lo, const uint32_t *hi,
                 size_t target, double rho, const double *weight, double spread, uint32_t *k)
{
    double *aim = malloc(layers * sizeof *aim);
    if (!aim)
        return BOSCH_E_NOMEM;
    double wbar = 0.0;
    if (weight) {
        for (uint32_t l = 0; l < layers; l++)
            wbar += weight[l];
        wbar /= layers;
    }
    size_t sum = 0;
    for (uint32_t l = 0; l < layers; l++) {
        double r = rho + (weight ? spread * (wbar - weight[l]) : 0.0);
        double a = r * groups;
        if (a < lo[l])
            a = lo[l];
        if (a > hi[l])
            a = hi[l];
        aim[l] = a;
        k[l] = (uint32_t)floor(a + 0.5);
        sum += k[l];
    }
    while (sum != target) {
        int down = sum > target;
        uint32_t pick = layers;
        double best = 0.0;
        for (uint32_t l = 0; l < layers; l++) {
            if (down ? k[l] <= lo[l] : k[l] >= hi[l])
                continue;
            /* Distance from the aim in the direction of the move; ties go to
             * the harder layer when removing SWA, the easier when adding. */
            double d = down ? k[l] - aim[l] : aim[l] - k[l];
            double w = weight ? weight[l] : 0.0;
            double key = d + 1e-6 * (down ? w : -w);
            if (pick == layers || key > best) {
                pick = l;
                best = key;
            }
        }
        if (pick == layers) {
            free(aim);
            return BOSCH_E_INFEASIBLE;
        }
        k[pick] = down ? k[pick] - 1 : k[pick] + 1;
        sum = down ? sum - 1 : sum + 1;
    }
    free(aim);
    return BOSCH_OK;
}
