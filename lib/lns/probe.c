/* Stage 1: layer-importance probes, a top-down cascade. Each layer in
 * turn (last first) is searched for its best SWA set at the uniform ratio,
 * on top of the layers already probed; the drops give the layer weights. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/bitset.h"
#include "core/rng.h"
#include "lns/batch.h"
#include "lns/stage.h"


static void finish_probe_layer(lns *m)
{
    struct plan *pl = &m->plan;
    bosch_subproblem *sp = m->sp;
    uint32_t l = pl->layer;
    pl->s_best[l] = pl->s_best[l + 1];
    if (sp) {
        pl->probe_used += sp->used;
        if (sp->has_inc && sp->inc_record >= 0)
            pl->s_best[l] = lns_normalized(m, m->store.scores[sp->inc_record]);
        /* Preference of each unit for stage 2's start mask: units of the
         * probe's best set first, then by mean value when SWA. */
        for (size_t v = 0; v < sp->n; v++) {
            size_t u = sp->var_units[v];
            double mean = m->run.var_cnt[v] ? m->run.var_sum[v] / m->run.var_cnt[v] : -1e3;
            pl->pref[u] = (sp->has_inc && sp->inc[v] ? 1e6 : 0.0) + mean;
        }
        lns_commit_incumbent(m);
    }
    lns_drop_subproblem(m);
    lns_log(m, BOSCH_LOG_DEBUG, "stage 1: layer %u best normalised score %.6g", l, pl->s_best[l]);
}

int lns_step_probe(lns *m)
{
    struct plan *pl = &m->plan;
    for (;;) {
        if (m->run_active) {
            int n = lns_pull_runner(m);
            if (n != 0)
                return n;
            finish_probe_layer(m);
            if (pl->layer == 0) {
                m->step = m->cfg.variant == BOSCH_VARIANT_PROBE_ONLY ? STEP_FINISHED : STEP_ALLOC;
                lns_milestone(m);
                return 0;
            }
            continue;
        }
        if (pl->layer == 0)
            return 0;
        if (lns_budget_left(m) == 0)
            return lns_budget_reached(m);
        uint32_t l = --pl->layer;
        uint32_t layers_left = l + 1;
        uint64_t left = evals_left((double)pl->probe_budget, pl->probe_used);
        uint64_t b = left / layers_left;
        /* Keep one evaluation for each layer still to probe, so that a tight
         * budget still ends with the cascade's feasible mask. */
        uint64_t later = 0, global = lns_budget_left(m);
        for (uint32_t j = 0; j < l; j++)
            later += lns_free_count(m->prob, j) > 0;
        if (global > later && b > global - later)
            b = global - later;
        bosch_subproblem *sp = lns_layers_subproblem(m, &l, 1, ((uint64_t)BOSCH_STAGE_PROBE << 32) | l);
        if (!sp) {
            if (lns_free_count(m->prob, l) == 0) { /* nothing to choose in this layer */
                finish_probe_layer(m);
                if (l == 0) {
                    m->step = m->cfg.variant == BOSCH_VARIANT_PROBE_ONLY ? STEP_FINISHED
                                                                           : STEP_ALLOC;
                    return 0;
                }
                continue;
            }
            return lns_fail(m, BOSCH_E_NOMEM, "out of memory");
        }
        int rc = lns_start_subproblem(m, sp, b ? b : 1, BOSCH_STAGE_PROBE);
        if (rc < 0)
            return rc;
    }
}

