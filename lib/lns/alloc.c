/* Stage 2: adaptive per-layer ratios from the probe drops, and the start
 * mask of stage 3 (the best of a few spreads). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/bitset.h"
#include "core/rng.h"
#include "lns/allocation.h"
#include "lns/batch.h"
#include "lns/stage.h"


/* Probe drops -> per-layer difficulty weights in [0, 1]. */
static void probe_weights(struct plan *pl, uint32_t L)
{
    double maxdrop = 0.0;
    for (uint32_t l = 0; l < L; l++) {
        double d = pl->s_best[l + 1] - pl->s_best[l];
        pl->weight[l] = d > 0.0 ? d : 0.0;
        if (pl->weight[l] > maxdrop)
            maxdrop = pl->weight[l];
    }
    for (uint32_t l = 0; l < L; l++)
        pl->weight[l] = maxdrop > 0.0 ? pl->weight[l] / maxdrop : 0.0;
}

/* Adopts the best evaluated stage-2 candidate as allocation and start mask. */
static void choose_allocation(lns *m)
{
    struct plan *pl = &m->plan;
    uint32_t L = m->prob->layers;
    uint32_t best = 0;
    int64_t best_rec = -1;
    for (uint32_t c = 0; c < pl->ncand; c++) {
        int64_t slot = pl->cand_slot[c];
        int64_t rec = slot >= 0 ? slot : m->pend_record[-slot - 2];
        if (rec < 0)
            continue;
        if (best_rec < 0 || lns_objective(m, (size_t)rec) > lns_objective(m, (size_t)best_rec)) {
            best = c;
            best_rec = rec;
        }
    }
    if (best_rec < 0)
        return;
    memcpy(pl->k, pl->k_cand + (size_t)best * L, L * sizeof *pl->k);
    bitset_unpack(store_mask(&m->store, (size_t)best_rec), m->prob->units, pl->work);
    pl->work_record = best_rec;
    for (uint32_t l = 0; l < L; l++)
        lns_log(m, BOSCH_LOG_DEBUG, "stage 2: layer %u weight %.4f -> %u SWA units", l,
                pl->weight[l], pl->k[l]);
}

/* The start masks were told (stage 3 begins with the best). */
static int allocation_told(lns *m)
{
    choose_allocation(m);
    return BOSCH_OK;
}

/* Stage 2. The full method tries ALLOC_CANDIDATES spreads evenly spaced in
 * [0, ratio_spread] (0 = uniform ratios) and keeps the best start mask, since
 * how far ratios should move depends on the model [ours]. Each start mask is
 * the cascade's mask repaired to the allocation, preferring the probe's best
 * units. group-only uses the uniform allocation and a random start. */
int lns_step_alloc(lns *m)
{
    const bosch_problem *p = m->prob;
    struct plan *pl = &m->plan;
    uint32_t L = p->layers;
    uint8_t *start = malloc(p->units);
    uint8_t *cand = malloc(p->units);
    double *prio = malloc(p->units * sizeof *prio);
    pl->k_cand = malloc(ALLOC_CANDIDATES * L * sizeof *pl->k_cand);
    int rc = start && cand && prio && pl->k_cand ? BOSCH_OK : BOSCH_E_NOMEM;
    if (rc == BOSCH_OK && m->cfg.variant == BOSCH_VARIANT_FULL) {
        probe_weights(pl, L);
        memcpy(start, pl->work, p->units);
        memcpy(prio, pl->pref, p->units * sizeof *prio);
        pl->ncand = ALLOC_CANDIDATES;
    } else if (rc == BOSCH_OK) {
        prng rng;
        prng_init(&rng, m->cfg.seed, (uint64_t)BOSCH_STAGE_ALLOC << 32);
        for (size_t u = 0; u < p->units; u++) {
            start[u] = 0;
            prio[u] = prng_uniform(&rng);
        }
        pl->ncand = 1;
    }
    for (uint32_t c = 0; c < pl->ncand && rc == BOSCH_OK; c++) {
        uint32_t *k = pl->k_cand + (size_t)c * L;
        double spread = pl->ncand > 1 ? m->cfg.spread * c / (pl->ncand - 1) : 0.0;
        rc = alloc_counts(L, p->groups, pl->lo, pl->hi, pl->target,
                          (double)pl->target / (double)p->units, pl->weight, spread, k);
        if (rc == BOSCH_OK)
            rc = bosch_repair(p, start, prio, k, cand);
        if (rc >= 0) {
            int64_t slot = lns_push_fixed(m, cand, BOSCH_STAGE_ALLOC);
            rc = slot == INT64_MIN ? BOSCH_E_NOMEM : BOSCH_OK;
            pl->cand_slot[c] = slot;
        }
    }
    free(start);
    free(cand);
    free(prio);
    if (rc < 0) {
        m->npend = 0;
        return lns_fail(m, rc, "stage 2 could not build a start mask meeting the allocation");
    }
    m->step = STEP_GROUP;
    pl->nchunks = 0;
    if (m->npend == 0) {
        choose_allocation(m);
        return 0;
    }
    if (lns_budget_left(m) < m->npend) {
        m->npend = 0;
        return lns_budget_reached(m);
    }
    m->pend_told = allocation_told;
    return (int)m->npend;
}

