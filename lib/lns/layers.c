/* The layer-level variant: which whole layers become SWA. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/bitset.h"
#include "core/rng.h"
#include "lns/batch.h"
#include "lns/stage.h"


int lns_step_layers(lns *m)
{
    const bosch_problem *p = m->prob;
    struct plan *pl = &m->plan;
    if (!m->run_active) {
        if (pl->layer == UINT32_MAX) { /* the one subproblem is done */
            m->step = STEP_FINISHED;
            return 0;
        }
        if (lns_budget_left(m) == 0)
            return lns_budget_reached(m);
        uint32_t *block_of = calloc(p->layers, sizeof *block_of);
        size_t *vstart = malloc((p->layers + 1) * sizeof *vstart);
        size_t *vunits = malloc(p->units * sizeof *vunits);
        bosch_subproblem *sp = NULL;
        size_t n = 0, nu = 0;
        if (block_of && vstart && vunits) {
            for (uint32_t l = 0; l < p->layers; l++) {
                if (lns_free_count(p, l) == 0)
                    continue;
                vstart[n++] = nu;
                for (uint32_t g = 0; g < p->groups; g++)
                    if (p->fix[(size_t)l * p->groups + g] == BOSCH_FIX_NONE)
                        vunits[nu++] = (size_t)l * p->groups + g;
            }
            vstart[n] = nu;
            /* ceil(T / G) whole layers; the expansion's repair then trims the
             * surplus so that every candidate meets the exact target. */
            uint32_t count = (uint32_t)((pl->target + p->groups - 1) / p->groups);
            if (count > n)
                count = (uint32_t)n;
            if (n > 0)
                sp = lns_with_global_repair(subproblem_new(n, 1, block_of, &count, p->units, pl->work,
                                                       vstart, vunits, m->cfg.seed,
                                                       (uint64_t)BOSCH_STAGE_GROUP << 32),
                                        p);
        }
        free(block_of);
        free(vstart);
        free(vunits);
        if (!sp && n == 0) {
            m->step = STEP_FINISHED;
            return 0;
        }
        int rc = lns_start_subproblem(m, sp, lns_budget_left(m), BOSCH_STAGE_GROUP);
        if (rc < 0)
            return rc;
    }
    int n = lns_pull_runner(m);
    if (n != 0)
        return n;
    lns_close_subproblem(m);
    pl->layer = UINT32_MAX;
    m->step = STEP_FINISHED;
    return 0;
}

