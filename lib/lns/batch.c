/* The method's pending batch, and the lifecycle of the subproblem a stage
 * is solving (build, start with the stage's strategy, pull batches, commit
 * the incumbent, free). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/bitset.h"
#include "lns/batch.h"

int lns_reserve_pending(lns *m, size_t n)
{
    if (n <= m->pend_cap)
        return BOSCH_OK;
    size_t cap = n > 2 * m->pend_cap ? n : 2 * m->pend_cap;
    uint8_t *pend = realloc(m->pend, cap * m->prob->units);
    if (!pend)
        return BOSCH_E_NOMEM;
    m->pend = pend;
    int64_t *rec = realloc(m->pend_record, cap * sizeof *rec);
    if (!rec)
        return BOSCH_E_NOMEM;
    m->pend_record = rec;
    double *fid = realloc(m->pend_fid, cap * sizeof *fid);
    if (!fid)
        return BOSCH_E_NOMEM;
    m->pend_fid = fid;
    uint32_t *draw = realloc(m->pend_draw, cap * sizeof *draw);
    if (!draw)
        return BOSCH_E_NOMEM;
    m->pend_draw = draw;
    m->pend_cap = cap;
    return BOSCH_OK;
}


/* Adds a mask to the pending batch unless it was evaluated already or is
 * pending. Returns its store record when known (>= 0), else -(2 + its
 * pending index); INT64_MIN when memory runs out. */
int64_t lns_push_fixed(lns *m, const uint8_t *mask, int stage)
{
    size_t units = m->prob->units;
    uint64_t *packed = malloc(m->store.words * sizeof *packed);
    if (!packed)
        return INT64_MIN;
    bitset_pack(mask, units, packed);
    int64_t rec = store_find_request(&m->store, packed, 1.0, 0);
    free(packed);
    if (rec >= 0)
        return rec;
    for (size_t i = 0; i < m->npend; i++)
        if (m->pend_fid[i] == 1.0 && m->pend_draw[i] == 0 &&
            memcmp(m->pend + i * units, mask, units) == 0)
            return -(int64_t)(2 + i);
    if (lns_push_request(m, mask, stage, 1.0, 0) < 0)
        return INT64_MIN;
    return -(int64_t)(1 + m->npend);
}

int lns_push_request(lns *m, const uint8_t *mask, int stage, double fidelity, uint32_t draw)
{
    size_t units = m->prob->units;
    if (lns_reserve_pending(m, m->npend + 1) < 0)
        return BOSCH_E_NOMEM;
    memcpy(m->pend + m->npend * units, mask, units);
    m->pend_fid[m->npend] = fidelity;
    m->pend_draw[m->npend] = draw;
    m->npend++;
    m->pend_stage = stage;
    m->pend_told = NULL;
    return BOSCH_OK;
}

static double record_value(const void *ctx, size_t record)
{
    return lns_objective(ctx, record);
}

void lns_drop_subproblem(lns *m)
{
    if (m->run_active)
        runner_free(&m->run);
    m->run_active = 0;
    bosch_subproblem_free(m->sp);
    m->sp = NULL;
}

int lns_start_subproblem(lns *m, bosch_subproblem *sp, uint64_t budget, int stage)
{
    if (!sp)
        return lns_fail(m, BOSCH_E_NOMEM, "out of memory building a subproblem");
    uint64_t left = lns_budget_left(m);
    sp->budget = budget < left ? budget : left;
    if (sp->budget == 0)
        sp->budget = 1;
    sp->store = &m->store;
    if (m->cfg.prior && subproblem_prior_from_units(sp, m->cfg.prior) < 0) {
        bosch_subproblem_free(sp);
        return lns_fail(m, BOSCH_E_NOMEM, "out of memory building a subproblem");
    }
    sp->value_of = record_value;
    sp->value_ctx = m;
    m->sp = sp;
    const bosch_strategy *s = m->cfg.strategy[stage];
    int rc = runner_init(&m->run, sp, s, m->cfg.batch);
    if (rc < 0) {
        lns_drop_subproblem(m);
        return lns_fail(m, rc, "strategy '%s' failed to initialise", s->name);
    }
    if (stage == BOSCH_STAGE_GROUP)
        runner_screen(&m->run, m->cfg.screen_fidelity, &m->screen);
    m->run_active = 1;
    m->pend_stage = stage;
    return BOSCH_OK;
}

/* The runner's batch was told: its strategy observes it. */
static int runner_told(lns *m)
{
    int rc = runner_complete(&m->run, m->pend_record);
    if (rc < 0)
        return lns_fail(m, rc, "strategy '%s' failed in observe", m->run.strat.name);
    if (m->screen.off && !m->screen_logged) {
        m->screen_logged = 1;
        lns_log(m, BOSCH_LOG_INFO,
                "screening off for the rest of the run: after %u pairs the screened "
                "scores' rms error %.3g exceeds half the candidates' rms gap %.3g to the "
                "best",
                m->screen.n, sqrt(m->screen.sum_sq / m->screen.n),
                sqrt(m->screen.gap_sq / m->screen.n));
    }
    return BOSCH_OK;
}

/* Pulls the runner's next batch into the pending batch; 0 = finished. */
int lns_pull_runner(lns *m)
{
    int n = runner_next(&m->run);
    if (n < 0)
        return lns_fail(m, n, "strategy '%s' failed or proposed too many candidates",
                        m->run.strat.name);
    if (n == 0)
        return 0;
    if (lns_reserve_pending(m, (size_t)n) < 0)
        return lns_fail(m, BOSCH_E_NOMEM, "out of memory");
    memcpy(m->pend, m->run.pend, (size_t)n * m->prob->units);
    memcpy(m->pend_fid, m->run.pend_fid, (size_t)n * sizeof *m->pend_fid);
    memset(m->pend_draw, 0, (size_t)n * sizeof *m->pend_draw);
    m->npend = (size_t)n;
    m->pend_told = runner_told;
    return n;
}

/* Subproblem over the free units of `nl` layers, one block per layer,
 * needing counts[l] - fixed SWA ones in each. */
bosch_subproblem *lns_layers_subproblem(lns *m, const uint32_t *layers, uint32_t nl,
                                           uint64_t stream)
{
    const bosch_problem *p = m->prob;
    size_t cap = (size_t)nl * p->groups;
    uint32_t *block_of = malloc(cap * sizeof *block_of);
    uint32_t *counts = malloc(nl * sizeof *counts);
    size_t *vstart = malloc((cap + 1) * sizeof *vstart);
    size_t *vunits = malloc(cap * sizeof *vunits);
    bosch_subproblem *sp = NULL;
    if (block_of && counts && vstart && vunits) {
        size_t n = 0;
        for (uint32_t b = 0; b < nl; b++) {
            uint32_t l = layers[b];
            counts[b] = m->plan.k[l] - problem_fixed_count(p, l, BOSCH_FIX_SWA);
            for (uint32_t g = 0; g < p->groups; g++) {
                size_t u = (size_t)l * p->groups + g;
                if (p->fix[u] != BOSCH_FIX_NONE)
                    continue;
                block_of[n] = b;
                vstart[n] = n;
                vunits[n] = u;
                n++;
            }
        }
        vstart[n] = n;
        if (n > 0)
            sp = subproblem_new(n, nl, block_of, counts, p->units, m->plan.work, vstart, vunits,
                                m->cfg.seed, stream);
    }
    free(block_of);
    free(counts);
    free(vstart);
    free(vunits);
    return sp;
}

uint32_t lns_free_count(const bosch_problem *p, uint32_t l)
{
    return p->groups - problem_fixed_count(p, l, BOSCH_FIX_SWA) -
           problem_fixed_count(p, l, BOSCH_FIX_FULL);
}

/* Writes the subproblem's incumbent into the working mask. */
void lns_commit_incumbent(lns *m)
{
    bosch_subproblem *sp = m->sp;
    if (!sp || !sp->has_inc)
        return;
    subproblem_expand(sp, sp->inc);
    memcpy(m->plan.work, sp->full, m->prob->units);
    m->plan.work_record = sp->inc_record;
}

/* Makes the subproblem repair every expanded mask to the problem's global
 * target and bounds (layer-level variant, polish). Frees sp and returns NULL
 * when memory runs out. */
bosch_subproblem *lns_with_global_repair(bosch_subproblem *sp, const bosch_problem *p)
{
    if (!sp)
        return NULL;
    sp->repair_prio = malloc(p->units * sizeof *sp->repair_prio);
    if (!sp->repair_prio) {
        bosch_subproblem_free(sp);
        return NULL;
    }
    sp->global_repair = p;
    return sp;
}

/* Starts the subproblem from the working mask, whose value is known. */
void lns_start_from_work(const lns *m, bosch_subproblem *sp)
{
    const struct plan *pl = &m->plan;
    if (!sp || pl->work_record < 0)
        return;
    subproblem_restrict(sp, pl->work, sp->inc);
    sp->inc_value = lns_objective(m, (size_t)pl->work_record);
    sp->inc_record = pl->work_record;
    sp->has_inc = 1;
}

/* Commits the finished subproblem's best and frees it; returns the
 * evaluations it spent. */
double lns_close_subproblem(lns *m)
{
    double used = m->sp ? m->sp->used : 0.0;
    lns_commit_incumbent(m);
    lns_drop_subproblem(m);
    return used;
}
