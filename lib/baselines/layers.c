/* Layer-level baselines: RAND, INTR and BME patterns of whole SWA layers. */
#include <stdlib.h>
#include <string.h>

#include "core/problem_impl.h"
#include "core/rng.h"

/* order[0..L-1]: the layers in the order the pattern makes them SWA. */
static void pattern_order(uint32_t L, uint32_t nswa, int pattern, uint64_t seed, uint32_t *order)
{
    uint32_t m = 0;
    uint8_t *is_swa = calloc(L, 1);
    if (!is_swa) { /* fall back to top-down; callers only rank */
        for (uint32_t i = 0; i < L; i++)
            order[i] = L - 1 - i;
        return;
    }
    if (pattern == BOSCH_LAYERS_RAND) {
        for (uint32_t i = 0; i < L; i++)
            order[i] = i;
        prng rng;
        prng_init(&rng, seed, 0x52414e44u);
        for (uint32_t i = L; i > 1; i--) {
            uint32_t j = (uint32_t)prng_below(&rng, i);
            uint32_t t = order[i - 1];
            order[i - 1] = order[j];
            order[j] = t;
        }
        free(is_swa);
        return;
    }
    if (pattern == BOSCH_LAYERS_INTR) {
        /* Counted from the top, layer t (t = L-1-l) is SWA when
         * floor((t+1)*n/L) > floor(t*n/L): n layers spread evenly. */
        for (uint32_t t = 0; t < L; t++)
            if ((uint64_t)(t + 1) * nswa / L > (uint64_t)t * nswa / L)
                is_swa[L - 1 - t] = 1;
    } else { /* BME: full layers in three blocks at the begin, middle and end */
        uint32_t nfull = L - nswa;
        uint32_t b = nfull / 3 + (nfull % 3 > 0), e = nfull / 3 + (nfull % 3 > 1);
        uint32_t mid = nfull - b - e;
        for (uint32_t l = 0; l < L; l++)
            is_swa[l] = 1;
        for (uint32_t l = 0; l < b; l++)
            is_swa[l] = 0;
        for (uint32_t l = 0; l < e; l++)
            is_swa[L - 1 - l] = 0;
        uint32_t ms = (L - mid) / 2;
        for (uint32_t l = ms; l < ms + mid; l++)
            is_swa[l] = 0;
    }
    /* SWA layers first (top down), then the rest (top down). */
    for (uint32_t pass = 0; pass < 2; pass++)
        for (uint32_t l = L; l-- > 0;)
            if (is_swa[l] == (pass == 0))
                order[m++] = l;
    free(is_swa);
}

int bosch_baseline_layers(const bosch_problem *p, int pattern, uint64_t seed, uint8_t *mask)
{
    if (!p || !mask || pattern < BOSCH_LAYERS_RAND || pattern > BOSCH_LAYERS_BME)
        return BOSCH_E_INVALID;
    uint32_t L = p->layers, G = p->groups;
    size_t T = bosch_problem_target_units(p);
    uint32_t full_layers = (uint32_t)(T / G), rest = (uint32_t)(T % G);
    uint32_t *order = malloc(L * sizeof *order);
    double *prio = malloc(p->units * sizeof *prio);
    uint8_t *pat = calloc(p->units, 1);
    if (!order || !prio || !pat) {
        free(order);
        free(prio);
        free(pat);
        return BOSCH_E_NOMEM;
    }
    pattern_order(L, full_layers + (rest > 0), pattern, seed, order);
    /* Priority falls along the pattern's order, so repair keeps the pattern
     * and gives up its last units first. */
    for (uint32_t i = 0; i < L; i++) {
        uint32_t l = order[i];
        for (uint32_t g = 0; g < G; g++) {
            size_t u = (size_t)l * G + g;
            prio[u] = (double)(L - i) * G - g;
            if (i < full_layers || (i == full_layers && g < rest))
                pat[u] = 1;
        }
    }
    int rc = bosch_repair(p, pat, prio, NULL, mask);
    free(order);
    free(prio);
    free(pat);
    return rc < 0 ? rc : BOSCH_OK;
}
