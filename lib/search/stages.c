/* The BOSCH stage machine: anchors, stage 1 (layer probes, a top-down
 * cascade), stage 2 (adaptive ratios and the start mask), stage 3 (grouped
 * head search over chunks of layers that share a ratio), or the layer-level
 * variant. Each step either yields a batch of masks to evaluate or moves on;
 * subproblems are solved by a runner with the stage's strategy. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/bitset.h"
#include "core/rng.h"
#include "search/optimizer_impl.h"

uint64_t opt_budget_left(const bosch_optimizer *opt)
{
    return opt->o.budget > opt->store.n ? opt->o.budget - opt->store.n : 0;
}

static int budget_reached(bosch_optimizer *opt)
{
    opt->status = BOSCH_BUDGET_REACHED;
    opt_log(opt, BOSCH_LOG_INFO, "evaluation budget of %llu reached",
            (unsigned long long)opt->o.budget);
    return 0;
}

/* Adds a mask to the pending batch unless it was evaluated already or is
 * pending. Returns its store record when known (>= 0), else -(2 + its
 * pending index); INT64_MIN when memory runs out. */
static int64_t push_fixed(bosch_optimizer *opt, const uint8_t *mask, int stage)
{
    size_t units = opt->prob->units;
    uint64_t *packed = malloc(opt->store.words * sizeof *packed);
    if (!packed)
        return INT64_MIN;
    bitset_pack(mask, units, packed);
    int64_t rec = store_find(&opt->store, packed);
    free(packed);
    if (rec >= 0)
        return rec;
    for (size_t i = 0; i < opt->npend; i++)
        if (memcmp(opt->pend + i * units, mask, units) == 0)
            return -(int64_t)(2 + i);
    if (opt_reserve_pending(opt, opt->npend + 1) < 0)
        return INT64_MIN;
    memcpy(opt->pend + opt->npend * units, mask, units);
    opt->npend++;
    opt->pend_stage = stage;
    opt->pend_from_runner = 0;
    return -(int64_t)(1 + opt->npend);
}

static double record_value(const void *ctx, size_t record)
{
    return opt_objective_of(ctx, record);
}

static void drop_subproblem(bosch_optimizer *opt)
{
    if (opt->run_active)
        runner_free(&opt->run);
    opt->run_active = 0;
    bosch_subproblem_free(opt->sp);
    opt->sp = NULL;
}

static int start_subproblem(bosch_optimizer *opt, bosch_subproblem *sp, uint64_t budget, int stage)
{
    if (!sp)
        return opt_fail(opt, BOSCH_E_NOMEM, "out of memory building a subproblem");
    uint64_t left = opt_budget_left(opt);
    sp->budget = budget < left ? budget : left;
    if (sp->budget == 0)
        sp->budget = 1;
    sp->store = &opt->store;
    sp->value_of = record_value;
    sp->value_ctx = opt;
    opt->sp = sp;
    const bosch_strategy *s = opt->o.strategy[stage];
    int rc = runner_init(&opt->run, sp, s, opt->o.batch);
    if (rc < 0) {
        drop_subproblem(opt);
        return opt_fail(opt, rc, "strategy '%s' failed to initialise", s->name);
    }
    opt->run_active = 1;
    opt->pend_stage = stage;
    return BOSCH_OK;
}

/* Pulls the runner's next batch into the pending batch; 0 = finished. */
static int pull_runner(bosch_optimizer *opt)
{
    int n = runner_next(&opt->run);
    if (n < 0)
        return opt_fail(opt, n, "strategy '%s' failed or proposed too many candidates",
                        opt->run.strat.name);
    if (n == 0)
        return 0;
    if (opt_reserve_pending(opt, (size_t)n) < 0)
        return opt_fail(opt, BOSCH_E_NOMEM, "out of memory");
    memcpy(opt->pend, opt->run.pend, (size_t)n * opt->prob->units);
    opt->npend = (size_t)n;
    opt->pend_from_runner = 1;
    return n;
}

/* Subproblem over the free units of `nl` layers, one block per layer,
 * needing counts[l] - fixed SWA ones in each. */
static bosch_subproblem *layers_subproblem(bosch_optimizer *opt, const uint32_t *layers, uint32_t nl,
                                           uint64_t stream)
{
    const bosch_problem *p = opt->prob;
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
            counts[b] = opt->plan.k[l] - problem_fixed_count(p, l, BOSCH_FIX_SWA);
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
            sp = subproblem_new(n, nl, block_of, counts, p->units, opt->plan.work, vstart, vunits,
                                opt->o.seed, stream);
    }
    free(block_of);
    free(counts);
    free(vstart);
    free(vunits);
    return sp;
}

static uint32_t free_count(const bosch_problem *p, uint32_t l)
{
    return p->groups - problem_fixed_count(p, l, BOSCH_FIX_SWA) -
           problem_fixed_count(p, l, BOSCH_FIX_FULL);
}

/* Writes the subproblem's incumbent into the working mask. */
static void commit_incumbent(bosch_optimizer *opt)
{
    bosch_subproblem *sp = opt->sp;
    if (!sp || !sp->has_inc)
        return;
    subproblem_expand(sp, sp->inc);
    memcpy(opt->plan.work, sp->full, opt->prob->units);
    opt->plan.work_record = sp->inc_record;
}

/* Makes the subproblem repair every expanded mask to the problem's global
 * target and bounds (layer-level variant, polish). Frees sp and returns NULL
 * when memory runs out. */
static bosch_subproblem *with_global_repair(bosch_subproblem *sp, const bosch_problem *p)
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
static void start_from_work(const bosch_optimizer *opt, bosch_subproblem *sp)
{
    const struct plan *pl = &opt->plan;
    if (!sp || pl->work_record < 0)
        return;
    subproblem_restrict(sp, pl->work, sp->inc);
    sp->inc_value = opt_objective_of(opt, (size_t)pl->work_record);
    sp->inc_record = pl->work_record;
    sp->has_inc = 1;
}

/* Commits the finished subproblem's best and frees it; returns the
 * evaluations it spent. */
static uint64_t close_subproblem(bosch_optimizer *opt)
{
    uint64_t used = opt->sp ? opt->sp->used : 0;
    commit_incumbent(opt);
    drop_subproblem(opt);
    return used;
}

/* ---- plan: budgets, ranges, uniform allocation ---------------------------- */

static int plan_init(bosch_optimizer *opt)
{
    const bosch_problem *p = opt->prob;
    struct plan *pl = &opt->plan;
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
        return opt_fail(opt, BOSCH_E_NOMEM, "out of memory");
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
        return opt_fail(opt, rc, "no uniform allocation meets the target of %zu units",
                        pl->target);
    memcpy(pl->k, pl->k_uniform, L * sizeof *pl->k);
    pl->s_best[L] = 1.0;
    pl->layer = L;

    uint64_t left = opt_budget_left(opt);
    /* stage 2 evaluates up to ALLOC_CANDIDATES start masks */
    uint64_t after_start = left > ALLOC_CANDIDATES ? left - ALLOC_CANDIDATES : 0;
    switch (opt->o.variant) {
    case BOSCH_VARIANT_FULL:
        pl->probe_budget = opt->o.probe_budget
                               ? opt->o.probe_budget
                               : (uint64_t)floor(opt->o.probe_fraction * (double)after_start + 0.5);
        opt->step = STEP_PROBE;
        break;
    case BOSCH_VARIANT_PROBE_ONLY:
        pl->probe_budget = opt->o.probe_budget ? opt->o.probe_budget : left;
        opt->step = STEP_PROBE;
        break;
    case BOSCH_VARIANT_GROUP_ONLY:
        opt->step = STEP_ALLOC;
        break;
    default:
        opt->step = STEP_LAYERS;
        break;
    }
    opt_log(opt, BOSCH_LOG_INFO, "plan: variant %s, target %zu of %zu units, budget %llu",
            bosch_variant_name(opt->o.variant), pl->target, p->units,
            (unsigned long long)opt->o.budget);
    return BOSCH_OK;
}

/* ---- stage 1 ---------------------------------------------------------------- */

static void finish_probe_layer(bosch_optimizer *opt)
{
    struct plan *pl = &opt->plan;
    bosch_subproblem *sp = opt->sp;
    uint32_t l = pl->layer;
    pl->s_best[l] = pl->s_best[l + 1];
    if (sp) {
        pl->probe_used += sp->used;
        if (sp->has_inc && sp->inc_record >= 0)
            pl->s_best[l] = opt_normalized(opt, opt->store.scores[sp->inc_record]);
        /* Preference of each unit for stage 2's start mask: units of the
         * probe's best set first, then by mean value when SWA. */
        for (size_t v = 0; v < sp->n; v++) {
            size_t u = sp->var_units[v];
            double mean = opt->run.var_cnt[v] ? opt->run.var_sum[v] / opt->run.var_cnt[v] : -1e3;
            pl->pref[u] = (sp->has_inc && sp->inc[v] ? 1e6 : 0.0) + mean;
        }
        commit_incumbent(opt);
    }
    drop_subproblem(opt);
    opt_log(opt, BOSCH_LOG_DEBUG, "stage 1: layer %u best normalised score %.6g", l, pl->s_best[l]);
}

static int step_probe(bosch_optimizer *opt)
{
    struct plan *pl = &opt->plan;
    for (;;) {
        if (opt->run_active) {
            int n = pull_runner(opt);
            if (n != 0)
                return n;
            finish_probe_layer(opt);
            if (pl->layer == 0) {
                opt->step = opt->o.variant == BOSCH_VARIANT_PROBE_ONLY ? STEP_FINISHED : STEP_ALLOC;
                opt_emit_progress(opt);
                return 0;
            }
            continue;
        }
        if (pl->layer == 0)
            return 0;
        if (opt_budget_left(opt) == 0)
            return budget_reached(opt);
        uint32_t l = --pl->layer;
        uint32_t layers_left = l + 1;
        uint64_t left = pl->probe_budget > pl->probe_used ? pl->probe_budget - pl->probe_used : 0;
        uint64_t b = left / layers_left;
        bosch_subproblem *sp = layers_subproblem(opt, &l, 1, ((uint64_t)BOSCH_STAGE_PROBE << 32) | l);
        if (!sp) {
            if (free_count(opt->prob, l) == 0) { /* nothing to choose in this layer */
                finish_probe_layer(opt);
                if (l == 0) {
                    opt->step = opt->o.variant == BOSCH_VARIANT_PROBE_ONLY ? STEP_FINISHED
                                                                           : STEP_ALLOC;
                    return 0;
                }
                continue;
            }
            return opt_fail(opt, BOSCH_E_NOMEM, "out of memory");
        }
        int rc = start_subproblem(opt, sp, b ? b : 1, BOSCH_STAGE_PROBE);
        if (rc < 0)
            return rc;
    }
}

/* ---- stage 2 ---------------------------------------------------------------- */

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
static void choose_allocation(bosch_optimizer *opt)
{
    struct plan *pl = &opt->plan;
    uint32_t L = opt->prob->layers;
    uint32_t best = 0;
    int64_t best_rec = -1;
    for (uint32_t c = 0; c < pl->ncand; c++) {
        int64_t slot = pl->cand_slot[c];
        int64_t rec = slot >= 0 ? slot : opt->pend_record[-slot - 2];
        if (rec < 0)
            continue;
        if (best_rec < 0 || opt_objective_of(opt, (size_t)rec) > opt_objective_of(opt, (size_t)best_rec)) {
            best = c;
            best_rec = rec;
        }
    }
    if (best_rec < 0)
        return;
    memcpy(pl->k, pl->k_cand + (size_t)best * L, L * sizeof *pl->k);
    bitset_unpack(store_mask(&opt->store, (size_t)best_rec), opt->prob->units, pl->work);
    pl->work_record = best_rec;
    for (uint32_t l = 0; l < L; l++)
        opt_log(opt, BOSCH_LOG_DEBUG, "stage 2: layer %u weight %.4f -> %u SWA units", l,
                pl->weight[l], pl->k[l]);
}

/* Stage 2. The full method tries ALLOC_CANDIDATES spreads evenly spaced in
 * [0, ratio_spread] (0 = uniform ratios) and keeps the best start mask, since
 * how far ratios should move depends on the model [ours]. Each start mask is
 * the cascade's mask repaired to the allocation, preferring the probe's best
 * units. group-only uses the uniform allocation and a random start. */
static int step_alloc(bosch_optimizer *opt)
{
    const bosch_problem *p = opt->prob;
    struct plan *pl = &opt->plan;
    uint32_t L = p->layers;
    uint8_t *start = malloc(p->units);
    uint8_t *cand = malloc(p->units);
    double *prio = malloc(p->units * sizeof *prio);
    pl->k_cand = malloc(ALLOC_CANDIDATES * L * sizeof *pl->k_cand);
    int rc = start && cand && prio && pl->k_cand ? BOSCH_OK : BOSCH_E_NOMEM;
    if (rc == BOSCH_OK && opt->o.variant == BOSCH_VARIANT_FULL) {
        probe_weights(pl, L);
        memcpy(start, pl->work, p->units);
        memcpy(prio, pl->pref, p->units * sizeof *prio);
        pl->ncand = ALLOC_CANDIDATES;
    } else if (rc == BOSCH_OK) {
        prng rng;
        prng_init(&rng, opt->o.seed, (uint64_t)BOSCH_STAGE_ALLOC << 32);
        for (size_t u = 0; u < p->units; u++) {
            start[u] = 0;
            prio[u] = prng_uniform(&rng);
        }
        pl->ncand = 1;
    }
    for (uint32_t c = 0; c < pl->ncand && rc == BOSCH_OK; c++) {
        uint32_t *k = pl->k_cand + (size_t)c * L;
        double spread = pl->ncand > 1 ? opt->o.spread * c / (pl->ncand - 1) : 0.0;
        rc = alloc_counts(L, p->groups, pl->lo, pl->hi, pl->target,
                          (double)pl->target / (double)p->units, pl->weight, spread, k);
        if (rc == BOSCH_OK)
            rc = bosch_repair(p, start, prio, k, cand);
        if (rc >= 0) {
            int64_t slot = push_fixed(opt, cand, BOSCH_STAGE_ALLOC);
            rc = slot == INT64_MIN ? BOSCH_E_NOMEM : BOSCH_OK;
            pl->cand_slot[c] = slot;
        }
    }
    free(start);
    free(cand);
    free(prio);
    if (rc < 0) {
        opt->npend = 0;
        return opt_fail(opt, rc, "stage 2 could not build a start mask meeting the allocation");
    }
    opt->step = STEP_GROUP;
    pl->nchunks = 0;
    if (opt->npend == 0) {
        choose_allocation(opt);
        return 0;
    }
    if (opt_budget_left(opt) < opt->npend) {
        opt->npend = 0;
        return budget_reached(opt);
    }
    return (int)opt->npend;
}

/* ---- stage 3 ---------------------------------------------------------------- */

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
static int plan_chunks(bosch_optimizer *opt)
{
    const bosch_problem *p = opt->prob;
    struct plan *pl = &opt->plan;
    struct layer_key *keys = malloc(p->layers * sizeof *keys);
    double *gw = malloc((p->groups + 1) * sizeof *gw);
    uint32_t *gn = calloc(p->groups + 1, sizeof *gn);
    if (!keys || !gw || !gn) {
        free(keys);
        free(gw);
        free(gn);
        return opt_fail(opt, BOSCH_E_NOMEM, "out of memory");
    }
    for (uint32_t g = 0; g <= p->groups; g++)
        gw[g] = 0.0;
    uint32_t n = 0;
    for (uint32_t l = 0; l < p->layers; l++) {
        uint32_t f = free_count(p, l);
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
        uint32_t f = free_count(p, keys[i].layer);
        int new_chunk = i == 0 || keys[i].level != keys[i - 1].level || vars + f > opt->o.group_cap;
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
    uint64_t left = opt_budget_left(opt);
    uint64_t total = opt->o.group_budget && opt->o.group_budget < left ? opt->o.group_budget : left;
    pl->group_total = total;
    pl->group_budget = total - (uint64_t)floor(opt->o.polish_fraction * (double)total);
    pl->group_used = 0;
    free(keys);
    free(gw);
    free(gn);
    opt_log(opt, BOSCH_LOG_INFO, "stage 3: %u chunks over %zu free units, budget %llu",
            pl->nchunks, pl->group_vars_left, (unsigned long long)pl->group_budget);
    return BOSCH_OK;
}

static int step_group(bosch_optimizer *opt)
{
    struct plan *pl = &opt->plan;
    const bosch_problem *p = opt->prob;
    if (pl->nchunks == 0 && pl->chunk == 0 && !opt->run_active) {
        int rc = plan_chunks(opt);
        if (rc < 0)
            return rc;
        if (pl->nchunks == 0) {
            opt->step = STEP_POLISH;
            return 0;
        }
    }
    for (;;) {
        if (opt->run_active) {
            int n = pull_runner(opt);
            if (n != 0)
                return n;
            pl->group_used += close_subproblem(opt);
            pl->chunk++;
            opt_emit_progress(opt);
        }
        if (pl->chunk >= pl->nchunks) {
            opt->step = STEP_POLISH;
            return 0;
        }
        if (opt_budget_left(opt) == 0)
            return budget_reached(opt);
        uint32_t s = pl->chunk_start[pl->chunk], e = pl->chunk_start[pl->chunk + 1];
        size_t vars = 0;
        for (uint32_t i = s; i < e; i++)
            vars += free_count(p, pl->chunk_layers[i]);
        uint64_t left = pl->group_budget > pl->group_used ? pl->group_budget - pl->group_used : 0;
        uint64_t b = pl->chunk + 1 == pl->nchunks
                         ? left
                         : (uint64_t)((double)left * (double)vars / (double)pl->group_vars_left);
        pl->group_vars_left -= vars;
        bosch_subproblem *sp = layers_subproblem(opt, pl->chunk_layers + s, e - s,
                                                 ((uint64_t)BOSCH_STAGE_GROUP << 32) | pl->chunk);
        start_from_work(opt, sp);
        int rc = start_subproblem(opt, sp, b ? b : 1, BOSCH_STAGE_GROUP);
        if (rc < 0)
            return rc;
    }
}

/* Stage 3's polish [ours]: the per-layer counts fixed by stage 2 are a
 * guess; the last `polish_fraction` of stage 3's budget searches all free
 * units in one block (so swaps may cross layers), each candidate repaired to
 * the layer bounds, starting from the committed mask. */
static int step_polish(bosch_optimizer *opt)
{
    const bosch_problem *p = opt->prob;
    struct plan *pl = &opt->plan;
    if (!opt->run_active) {
        /* What stage 3's chunks left of its budget, polish share included. */
        uint64_t budget = pl->group_total > pl->group_used ? pl->group_total - pl->group_used : 0;
        if (pl->polished || opt->o.polish_fraction <= 0.0 || budget == 0 ||
            opt_budget_left(opt) == 0) {
            opt->step = STEP_FINISHED;
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
                sp = with_global_repair(
                    subproblem_new(n, 1, block_of, &count, p->units, pl->work, vstart, vunits,
                                   opt->o.seed, ((uint64_t)BOSCH_STAGE_GROUP << 32) | 0xffffffffu),
                    p);
        }
        free(vunits);
        free(vstart);
        free(block_of);
        if (!sp) {
            if (n == 0 || pl->target - fixed_swa == 0 || pl->target - fixed_swa >= n) {
                opt->step = STEP_FINISHED; /* a single possible mask */
                return 0;
            }
            return opt_fail(opt, BOSCH_E_NOMEM, "out of memory");
        }
        start_from_work(opt, sp);
        opt_log(opt, BOSCH_LOG_INFO, "stage 3 polish over %zu free units, budget %llu", n,
                (unsigned long long)budget);
        int rc = start_subproblem(opt, sp, budget, BOSCH_STAGE_GROUP);
        if (rc < 0)
            return rc;
    }
    int n = pull_runner(opt);
    if (n != 0)
        return n;
    pl->group_used += close_subproblem(opt);
    opt->step = STEP_FINISHED;
    opt_emit_progress(opt);
    return 0;
}

/* ---- layer-level variant ------------------------------------------------------ */

static int step_layers(bosch_optimizer *opt)
{
    const bosch_problem *p = opt->prob;
    struct plan *pl = &opt->plan;
    if (!opt->run_active) {
        if (pl->layer == UINT32_MAX) { /* the one subproblem is done */
            opt->step = STEP_FINISHED;
            return 0;
        }
        if (opt_budget_left(opt) == 0)
            return budget_reached(opt);
        uint32_t *block_of = calloc(p->layers, sizeof *block_of);
        size_t *vstart = malloc((p->layers + 1) * sizeof *vstart);
        size_t *vunits = malloc(p->units * sizeof *vunits);
        bosch_subproblem *sp = NULL;
        size_t n = 0, m = 0;
        if (block_of && vstart && vunits) {
            for (uint32_t l = 0; l < p->layers; l++) {
                if (free_count(p, l) == 0)
                    continue;
                vstart[n++] = m;
                for (uint32_t g = 0; g < p->groups; g++)
                    if (p->fix[(size_t)l * p->groups + g] == BOSCH_FIX_NONE)
                        vunits[m++] = (size_t)l * p->groups + g;
            }
            vstart[n] = m;
            /* ceil(T / G) whole layers; the expansion's repair then trims the
             * surplus so that every candidate meets the exact target. */
            uint32_t count = (uint32_t)((pl->target + p->groups - 1) / p->groups);
            if (count > n)
                count = (uint32_t)n;
            if (n > 0)
                sp = with_global_repair(subproblem_new(n, 1, block_of, &count, p->units, pl->work,
                                                       vstart, vunits, opt->o.seed,
                                                       (uint64_t)BOSCH_STAGE_GROUP << 32),
                                        p);
        }
        free(block_of);
        free(vstart);
        free(vunits);
        if (!sp && n == 0) {
            opt->step = STEP_FINISHED;
            return 0;
        }
        int rc = start_subproblem(opt, sp, opt_budget_left(opt), BOSCH_STAGE_GROUP);
        if (rc < 0)
            return rc;
    }
    int n = pull_runner(opt);
    if (n != 0)
        return n;
    close_subproblem(opt);
    pl->layer = UINT32_MAX;
    opt->step = STEP_FINISHED;
    return 0;
}

/* ---- driver ------------------------------------------------------------------- */

int stages_next_batch(bosch_optimizer *opt)
{
    for (;;) {
        if (opt->status != 0)
            return opt->status < 0 ? opt->status : 0;
        int n = 0;
        switch (opt->step) {
        case STEP_ANCHORS:
            if (opt->anchors_known) {
                opt->step = STEP_PLAN;
                continue;
            }
            if (opt_budget_left(opt) < 2)
                return opt_fail(opt, BOSCH_E_INVALID,
                                "budget %llu cannot cover the two anchor evaluations",
                                (unsigned long long)opt->o.budget);
            {
                uint8_t *m = calloc(opt->prob->units, 1);
                if (!m)
                    return opt_fail(opt, BOSCH_E_NOMEM, "out of memory");
                push_fixed(opt, m, BOSCH_STAGE_ANCHORS);
                memset(m, 1, opt->prob->units);
                push_fixed(opt, m, BOSCH_STAGE_ANCHORS);
                free(m);
            }
            return (int)opt->npend;
        case STEP_PLAN:
            if (plan_init(opt) < 0)
                return opt->status;
            continue;
        case STEP_PROBE:
            n = step_probe(opt);
            break;
        case STEP_ALLOC:
            n = step_alloc(opt);
            break;
        case STEP_GROUP:
            n = step_group(opt);
            break;
        case STEP_POLISH:
            n = step_polish(opt);
            break;
        case STEP_LAYERS:
            n = step_layers(opt);
            break;
        case STEP_FINISHED:
            opt->status = BOSCH_DONE;
            opt_emit_progress(opt);
            return 0;
        }
        if (n != 0 || opt->status != 0)
            return n < 0 ? n : (n > 0 ? n : (opt->status < 0 ? opt->status : 0));
    }
}

int stages_batch_done(bosch_optimizer *opt)
{
    if (opt->pend_from_runner) {
        int rc = runner_complete(&opt->run, opt->pend_record);
        if (rc < 0)
            return opt_fail(opt, rc, "strategy '%s' failed in observe", opt->run.strat.name);
        return BOSCH_OK;
    }
    if (opt->step == STEP_ANCHORS) {
        opt->s_full = opt->store.scores[opt->pend_record[0]];
        opt->s_swa = opt->store.scores[opt->pend_record[1]];
        if (!(opt->s_full > opt->s_swa))
            return opt_fail(opt, BOSCH_E_ANCHORS,
                            "anchor scores cannot normalise: S_full = %g is not above "
                            "S_allSWA = %g (the task does not tell full from SWA attention)",
                            opt->s_full, opt->s_swa);
        opt->anchors_known = 1;
        opt_log(opt, BOSCH_LOG_INFO, "anchors: S_full = %g, S_allSWA = %g", opt->s_full, opt->s_swa);
    } else if (opt->step == STEP_GROUP) { /* the stage-2 start masks */
        choose_allocation(opt);
    }
    return BOSCH_OK;
}

void stages_free(bosch_optimizer *opt)
{
    struct plan *pl = &opt->plan;
    drop_subproblem(opt);
    free(pl->lo);
    free(pl->hi);
    free(pl->k_uniform);
    free(pl->k);
    free(pl->k_cand);
    free(pl->work);
    free(pl->s_best);
    free(pl->pref);
    free(pl->weight);
    free(pl->chunk_start);
    free(pl->chunk_layers);
    memset(pl, 0, sizeof *pl);
}
