/* Stage 3: grouped head-level search over chunks of layers that share a
 * ratio, then the polish over all free units [ours]. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/bitset.h"
#include "core/rng.h"
#include "lns/batch.h"
#include "lns/stage.h"


struct layer_key {
    double weight;
    uint32_t level, layer;
};

static int cmp_layer_key(const void *a, const void *b)
{
    const struct layer_key *x = a, *y = b;
    if (x->level != y->level)
        return x->level > y->level ? -1 : 1; /* more SWA (easier level) first */
    return (x->layer > y->layer) - (x->layer < y->layer);
}

/* Groups of layers sharing a level, easiest group first (lowest mean
 * weight, then highest level), split into chunks of whole layers holding at
 * most group_cap free units. */
static int plan_chunks(lns *m)
{
    const bosch_problem *p = m->prob;
    struct plan *pl = &m->plan;
    struct layer_key *keys = malloc(p->layers * sizeof *keys);
    double *gw = malloc((p->groups + 1) * sizeof *gw);
    uint32_t *gn = calloc(p->groups + 1, sizeof *gn);
    if (!keys || !gw || !gn) {
        free(keys);
        free(gw);
        free(gn);
        return lns_fail(m, BOSCH_E_NOMEM, "out of memory");
    }
    for (uint32_t g = 0; g <= p->groups; g++)
        gw[g] = 0.0;
    uint32_t n = 0;
    for (uint32_t l = 0; l < p->layers; l++) {
        uint32_t f = lns_free_count(p, l);
        uint32_t c = pl->k[l] - problem_fixed_count(p, l, BOSCH_FIX_SWA);
        if (c == 0 || c >= f)
            continue; /* a single possibility: nothing to search */
        keys[n].weight = pl->weight[l];
        keys[n].level = pl->k[l];
        keys[n].layer = l;
        gw[pl->k[l]] += pl->weight[l];
        gn[pl->k[l]]++;
        n++;
    }
    for (uint32_t i = 0; i < n; i++)
        keys[i].weight = gw[keys[i].level] / gn[keys[i].level];
    qsort(keys, n, sizeof *keys, cmp_layer_key);
    /* Stable re-order by group mean weight (insertion sort keeps level order on ties). */
    for (uint32_t i = 1; i < n; i++) {
        struct layer_key k = keys[i];
        uint32_t j = i;
        while (j > 0 && keys[j - 1].weight > k.weight) {
            keys[j] = keys[j - 1];
            j--;
        }
        keys[j] = k;
    }
    pl->nchunks = 0;
    pl->group_vars_left = 0;
    size_t vars = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t f = lns_free_count(p, keys[i].layer);
        int new_chunk = i == 0 || keys[i].level != keys[i - 1].level || vars + f > m->cfg.group_cap;
        if (new_chunk) {
            pl->chunk_start[pl->nchunks++] = i;
            vars = 0;
        }
        vars += f;
        pl->group_vars_left += f;
        pl->chunk_layers[i] = keys[i].layer;
    }
    pl->chunk_start[pl->nchunks] = n;
    pl->chunk = 0;
    uint64_t left = lns_budget_left(m);
    uint64_t total = m->cfg.group_budget && m->cfg.group_budget < left ? m->cfg.group_budget : left;
    pl->group_total = total;
    pl->group_budget = total - (uint64_t)floor(m->cfg.polish_fraction * (double)total);
    pl->group_used = 0;
    free(keys);
    free(gw);
    free(gn);
    lns_log(m, BOSCH_LOG_INFO, "stage 3: %u chunks over %zu free units, budget %llu",
            pl->nchunks, pl->group_vars_left, (unsigned long long)pl->group_budget);
    return BOSCH_OK;
}

int lns_step_group(lns *m)
{
    struct plan *pl = &m->plan;
    const bosch_problem *p = m->prob;
    if (pl->nchunks == 0 && pl->chunk == 0 && !m->run_active) {
        int rc = plan_chunks(m);
        if (rc < 0)
            return rc;
        if (pl->nchunks == 0) {
            m->step = STEP_POLISH;
            return 0;
        }
    }
    for (;;) {
        if (m->run_active) {
            int n = lns_pull_runner(m);
            if (n != 0)
                return n;
            pl->group_used += lns_close_subproblem(m);
            pl->chunk++;
            lns_milestone(m);
        }
        if (pl->chunk >= pl->nchunks) {
            m->step = STEP_POLISH;
            return 0;
        }
        if (lns_budget_left(m) == 0)
            return lns_budget_reached(m);
        uint32_t s = pl->chunk_start[pl->chunk], e = pl->chunk_start[pl->chunk + 1];
        size_t vars = 0;
        for (uint32_t i = s; i < e; i++)
            vars += lns_free_count(p, pl->chunk_layers[i]);
        uint64_t left = evals_left((double)pl->group_budget, pl->group_used);
        uint64_t b = pl->chunk + 1 == pl->nchunks
                         ? left
                         : (uint64_t)((double)left * (double)vars / (double)pl->group_vars_left);
        pl->group_vars_left -= vars;
        bosch_subproblem *sp = lns_layers_subproblem(m, pl->chunk_layers + s, e - s,
                                                 ((uint64_t)BOSCH_STAGE_GROUP << 32) | pl->chunk);
        lns_start_from_work(m, sp);
        int rc = lns_start_subproblem(m, sp, b ? b : 1, BOSCH_STAGE_GROUP);
        if (rc < 0)
            return rc;
    }
}

/* Stage 3's polish [ours]: the per-layer counts fixed by stage 2 are a
 * guess; the last `polish_fraction` of stage 3's budget searches all free
 * units in one block (so swaps may cross layers), each candidate repaired to
 * the layer bounds, starting from the committed mask. */
int lns_step_polish(lns *m)
{
    const bosch_problem *p = m->prob;
    struct plan *pl = &m->plan;
    if (!m->run_active) {
        /* What stage 3's chunks left of its budget, polish share included. */
        uint64_t budget = evals_left((double)pl->group_total, pl->group_used);
        if (pl->polished || m->cfg.polish_fraction <= 0.0 || budget == 0 ||
            lns_budget_left(m) == 0) {
            m->step = STEP_FINISHED;
            return 0;
        }
        pl->polished = 1;
        size_t n = 0, fixed_swa = 0;
        size_t *vunits = malloc(p->units * sizeof *vunits);
        size_t *vstart = malloc((p->units + 1) * sizeof *vstart);
        uint32_t *block_of = calloc(p->units, sizeof *block_of);
        bosch_subproblem *sp = NULL;
        if (vunits && vstart && block_of) {
            for (size_t u = 0; u < p->units; u++) {
                fixed_swa += p->fix[u] == BOSCH_FIX_SWA;
                if (p->fix[u] == BOSCH_FIX_NONE) {
                    vstart[n] = n;
                    vunits[n++] = u;
                }
            }
            vstart[n] = n;
            uint32_t count = (uint32_t)(pl->target - fixed_swa);
            if (n > 0 && count > 0 && count < n)
                sp = lns_with_global_repair(
                    subproblem_new(n, 1, block_of, &count, p->units, pl->work, vstart, vunits,
                                   m->cfg.seed, ((uint64_t)BOSCH_STAGE_GROUP << 32) | 0xffffffffu),
                    p);
        }
        free(vunits);
        free(vstart);
        free(block_of);
        if (!sp) {
            if (n == 0 || pl->target - fixed_swa == 0 || pl->target - fixed_swa >= n) {
                m->step = STEP_FINISHED; /* a single possible mask */
                return 0;
            }
            return lns_fail(m, BOSCH_E_NOMEM, "out of memory");
        }
        lns_start_from_work(m, sp);
        lns_log(m, BOSCH_LOG_INFO, "stage 3 polish over %zu free units, budget %llu", n,
                (unsigned long long)budget);
        pl->polish_first = m->store.n;
        pl->polish_free = n;
        int rc = lns_start_subproblem(m, sp, budget, BOSCH_STAGE_GROUP);
        if (rc < 0)
            return rc;
    }
    int due = lns_sweep_due(m);
    if (due < 0)
        return due;
    if (due) {
        pl->group_used += lns_close_subproblem(m);
        m->step = STEP_SWEEP;
        return 0;
    }
    if (lns_plateau_due(m)) {
        pl->group_used += lns_close_subproblem(m);
        lns_search_ended(m, BOSCH_PLATEAU);
        lns_milestone(m);
        return 0;
    }
    int n = lns_pull_runner(m);
    if (n != 0)
        return n;
    pl->group_used += lns_close_subproblem(m);
    m->step = STEP_FINISHED;
    lns_milestone(m);
    return 0;
}

