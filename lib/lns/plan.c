/* The second step, once the anchors are known: the target, the per-layer
 * ranges and uniform counts, the stage budgets, and the variant's first
 * stage. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lns/allocation.h"
#include "lns/stage.h"

int lns_step_plan(lns *m)
{
    const bosch_problem *p = m->prob;
    struct plan *pl = &m->plan;
    uint32_t L = p->layers;
    pl->lo = malloc(L * sizeof *pl->lo);
    pl->hi = malloc(L * sizeof *pl->hi);
    pl->k_uniform = malloc(L * sizeof *pl->k_uniform);
    pl->k = malloc(L * sizeof *pl->k);
    pl->work = calloc(p->units, 1);
    pl->s_best = malloc((L + 1) * sizeof *pl->s_best);
    pl->pref = malloc(p->units * sizeof *pl->pref);
    pl->weight = calloc(L, sizeof *pl->weight);
    pl->chunk_start = calloc(L + 1, sizeof *pl->chunk_start);
    pl->chunk_layers = malloc(L * sizeof *pl->chunk_layers);
    if (!pl->lo || !pl->hi || !pl->k_uniform || !pl->k || !pl->work || !pl->s_best || !pl->pref ||
        !pl->weight || !pl->chunk_start || !pl->chunk_layers)
        return lns_fail(m, BOSCH_E_NOMEM, "out of memory");
    for (uint32_t l = 0; l < L; l++)
        problem_layer_range(p, l, &pl->lo[l], &pl->hi[l]);
    for (size_t u = 0; u < p->units; u++) {
        pl->work[u] = p->fix[u] == BOSCH_FIX_SWA;
        pl->pref[u] = 0.0;
    }
    pl->work_record = -1;
    pl->target = bosch_problem_target_units(p);
    double rho_eff = (double)pl->target / (double)p->units;
    int rc = alloc_counts(L, p->groups, pl->lo, pl->hi, pl->target, rho_eff, NULL, 0.0,
                          pl->k_uniform);
    if (rc < 0)
        return lns_fail(m, rc, "no uniform allocation meets the target of %zu units",
                        pl->target);
    memcpy(pl->k, pl->k_uniform, L * sizeof *pl->k);
    pl->s_best[L] = lns_normalized(m, m->s_full); /* 1.0, or S_full when raw */
    pl->layer = L;

    uint64_t left = lns_budget_left(m);
    /* stage 2 evaluates up to ALLOC_CANDIDATES start masks */
    uint64_t after_start = left > ALLOC_CANDIDATES ? left - ALLOC_CANDIDATES : 0;
    switch (m->cfg.variant) {
    case BOSCH_VARIANT_FULL:
        pl->probe_budget = m->cfg.probe_budget
                               ? m->cfg.probe_budget
                               : (uint64_t)floor(m->cfg.probe_fraction * (double)after_start + 0.5);
        m->step = STEP_PROBE;
        break;
    case BOSCH_VARIANT_PROBE_ONLY:
        pl->probe_budget = m->cfg.probe_budget ? m->cfg.probe_budget : left;
        m->step = STEP_PROBE;
        break;
    case BOSCH_VARIANT_GROUP_ONLY:
        m->step = STEP_ALLOC;
        break;
    default:
        m->step = STEP_LAYERS;
        break;
    }
    lns_log(m, BOSCH_LOG_INFO, "plan: variant %s, target %zu of %zu units, budget %llu",
            bosch_variant_name(m->cfg.variant), pl->target, p->units,
            (unsigned long long)m->cfg.budget);
    return BOSCH_OK;
}
