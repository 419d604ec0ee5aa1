/* The method's driver: lifetime, the two batches (next / tell), the anchors
 * and the plan, and what the session may read. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/bitset.h"
#include "lns/lns_impl.h"

lns *lns_create(const bosch_problem *p, const struct lns_config *cfg,
                const struct lns_hooks *hooks)
{
    lns *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->prob = p;
    m->cfg = *cfg;
    if (hooks)
        m->hooks = *hooks;
    m->best_record = -1;
    m->best_any_record = -1;
    m->step = STEP_ANCHORS;
    if (store_init(&m->store, p->units) < 0) {
        free(m);
        return NULL;
    }
    if (cfg->anchors_given) {
        m->s_full = cfg->s_full;
        m->s_swa = cfg->s_swa;
        m->anchors_known = 1;
        /* given unordered: raw_scores is on */
        m->raw = !(cfg->s_full - cfg->s_swa > cfg->anchor_tolerance);
    }
    return m;
}

void lns_free(lns *m)
{
    if (!m)
        return;
    struct plan *pl = &m->plan;
    lns_drop_subproblem(m);
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
    free(m->pend);
    free(m->pend_record);
    free(m->pend_fid);
    free(m->pend_draw);
    free(pl->conf_rec);
    lns_sweep_free(pl);
    store_free(&m->store);
    free(m);
}

/* ---- anchors and plan -------------------------------------------------------- */

/* Layers stage 1 probes (those with a free unit). */
static uint32_t probe_layers(const bosch_problem *p)
{
    uint32_t n = 0;
    for (uint32_t l = 0; l < p->layers; l++)
        n += lns_free_count(p, l) > 0;
    return n;
}

/* Fewest evaluations that end with a feasible mask: the anchors (unless
 * given), then one per probed layer (full, probe-only: the cascade's last
 * probe meets the target) or one start mask (group-only, layer-level). */
uint64_t lns_min_budget(const bosch_problem *p, const struct lns_config *cfg)
{
    uint64_t need = (cfg->anchors_given ? 0 : 2) + cfg->confirm;
    if (cfg->variant == BOSCH_VARIANT_FULL || cfg->variant == BOSCH_VARIANT_PROBE_ONLY)
        need += probe_layers(p);
    else
        need += 1;
    return need;
}

/* A budget below lns_min_budget is refused before any evaluation. */
static int check_budget(lns *m)
{
    uint64_t need = lns_min_budget(m->prob, &m->cfg);
    if (m->cfg.budget >= need)
        return BOSCH_OK;
    if (!m->cfg.anchors_given && m->cfg.budget < 2)
        return lns_fail(m, BOSCH_E_INVALID, "budget %llu cannot cover the two anchor evaluations",
                        (unsigned long long)m->cfg.budget);
    return lns_fail(m, BOSCH_E_INVALID,
                    "budget %llu is too small for variant %s: a feasible mask needs at least "
                    "%llu evaluations (%s%s%s)",
                    (unsigned long long)m->cfg.budget, bosch_variant_name(m->cfg.variant),
                    (unsigned long long)need, m->cfg.anchors_given ? "" : "2 anchors + ",
                    m->cfg.variant == BOSCH_VARIANT_FULL ||
                            m->cfg.variant == BOSCH_VARIANT_PROBE_ONLY
                        ? "one probe per layer with a free unit"
                        : "one start mask",
                    m->cfg.confirm ? " + the confirmation draws" : "");
}

/* The two reference models: all full and all SWA. */
static int step_anchors(lns *m)
{
    uint8_t *mask = calloc(m->prob->units, 1);
    if (!mask)
        return lns_fail(m, BOSCH_E_NOMEM, "out of memory");
    lns_push_fixed(m, mask, BOSCH_STAGE_ANCHORS);
    memset(mask, 1, m->prob->units);
    lns_push_fixed(m, mask, BOSCH_STAGE_ANCHORS);
    free(mask);
    return (int)m->npend;
}

static int anchors_told(lns *m)
{
    m->s_full = m->store.scores[m->pend_record[0]];
    m->s_swa = m->store.scores[m->pend_record[1]];
    /* Ordered by more than the tolerance: a gap within an evaluator's
     * numerical noise would normalise every score by rounding error. */
    const int ordered = m->s_full - m->s_swa > m->cfg.anchor_tolerance;
    if (!ordered && m->cfg.raw_scores) {
        m->raw = 1;
        m->anchors_known = 1;
        lns_log(m, BOSCH_LOG_WARN,
                "anchors not ordered (S_full = %g, S_allSWA = %g, anchor_tolerance %g): "
                "searching raw scores without normalisation (raw_scores); normalized scores "
                "are NaN",
                m->s_full, m->s_swa, m->cfg.anchor_tolerance);
        return BOSCH_OK;
    }
    if (!ordered && m->cfg.anchor_tolerance > 0 && m->s_full > m->s_swa)
        return lns_fail(m, BOSCH_E_ANCHORS,
                        "anchor scores cannot normalise: S_full = %g is above S_allSWA = %g "
                        "by %g, not more than anchor_tolerance = %g (the evaluator's numerical "
                        "noise: the gap could be rounding error)",
                        m->s_full, m->s_swa, m->s_full - m->s_swa, m->cfg.anchor_tolerance);
    if (!ordered)
        return lns_fail(m, BOSCH_E_ANCHORS,
                        "anchor scores cannot normalise: S_full = %g is not above "
                        "S_allSWA = %g (the task does not tell full from SWA attention)",
                        m->s_full, m->s_swa);
    m->anchors_known = 1;
    lns_log(m, BOSCH_LOG_INFO, "anchors: S_full = %g, S_allSWA = %g", m->s_full, m->s_swa);
    return BOSCH_OK;
}

int lns_plan_init(lns *m)
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


/* Every stage ran to completion: BOSCH_DONE when the budget is spent,
 * else BOSCH_CONVERGED with a log line saying how much was used. */
static void lns_finish(lns *m)
{
    if (m->plan.end_status) {
        m->status = m->plan.end_status;
        return;
    }
    double used = m->store.cost, left = (double)m->cfg.budget - used;
    if (evals_left((double)m->cfg.budget, used) == 0) {
        m->status = BOSCH_DONE;
        return;
    }
    m->status = BOSCH_CONVERGED;
    lns_log(m, BOSCH_LOG_INFO,
            "search converged after %.6g of %llu evaluations (%.6g unused): variant %s, "
            "every subproblem was searched completely or its strategy stopped",
            used, (unsigned long long)m->cfg.budget, left, bosch_variant_name(m->cfg.variant));
}

/* ---- the two batches ----------------------------------------------------------- */

int lns_next(lns *m, struct lns_batch *out)
{
    out->n = 0;
    out->masks = NULL;
    for (;;) {
        if (m->status != 0)
            return m->status < 0 ? m->status : 0;
        int n = 0;
        switch (m->step) {
        case STEP_ANCHORS:
            if (m->store.n == 0 && check_budget(m) < 0)
                return m->status;
            if (m->anchors_known) {
                m->step = STEP_PLAN;
                continue;
            }
            n = step_anchors(m);
            break;
        case STEP_PLAN:
            if (lns_plan_init(m) < 0)
                return m->status;
            continue;
        case STEP_PROBE:
            n = lns_step_probe(m);
            break;
        case STEP_ALLOC:
            n = lns_step_alloc(m);
            break;
        case STEP_GROUP:
            n = lns_step_group(m);
            break;
        case STEP_POLISH:
            n = lns_step_polish(m);
            break;
        case STEP_SWEEP:
            n = lns_step_sweep(m);
            break;
        case STEP_LAYERS:
            n = lns_step_layers(m);
            break;
        case STEP_CONFIRM:
            n = lns_step_confirm(m);
            break;
        case STEP_FINISHED:
            if (lns_confirm_pending(m)) {
                m->step = STEP_CONFIRM;
                continue;
            }
            lns_finish(m);
            lns_milestone(m);
            return 0;
        }
        if (n > 0) {
            out->n = (size_t)n;
            out->masks = m->pend;
            out->fidelity = m->pend_fid;
            out->draws = m->pend_draw;
            out->stage = m->pend_stage;
            return n;
        }
        if (n < 0 || m->status != 0)
            return n < 0 ? n : (m->status < 0 ? m->status : 0);
    }
}

/* Stores the told candidates of the pending batch, in batch order. */
static int store_batch(lns *m, const uint8_t *told, const double *scores, const double *walls)
{
    const bosch_problem *p = m->prob;
    uint64_t *packed = malloc(m->store.words * sizeof *packed);
    if (!packed)
        return BOSCH_E_NOMEM;
    for (size_t i = 0; i < m->npend; i++) {
        m->pend_record[i] = -1;
        if (told && !told[i])
            continue;
        const uint8_t *mask = m->pend + i * p->units;
        /* Only a first full-fidelity score may become the result. */
        int eligible = m->pend_fid[i] >= 1.0 && m->pend_draw[i] == 0 &&
                       bosch_mask_is_feasible(p, mask);
        bitset_pack(mask, p->units, packed);
        int64_t rec = store_add_request(&m->store, packed, scores[i], m->pend_stage, eligible,
                                        walls[i], m->pend_fid[i], m->pend_draw[i]);
        if (rec < 0) {
            free(packed);
            return (int)rec;
        }
        m->pend_record[i] = rec;
        m->evals[m->pend_stage]++;
    }
    free(packed);
    return BOSCH_OK;
}

static void update_best(lns *m, int64_t rec)
{
    if (!m->anchors_known || rec < 0 || !store_is_plain(&m->store, (size_t)rec))
        return;
    double v = lns_objective(m, (size_t)rec);
    if (m->best_any_record < 0 || v > lns_objective(m, (size_t)m->best_any_record))
        m->best_any_record = rec;
    if (m->store.eligible[rec] &&
        (m->best_record < 0 || v > lns_objective(m, (size_t)m->best_record)))
        m->best_record = rec;
}

static void update_best_of_batch(lns *m, size_t n)
{
    for (size_t i = 0; i < n; i++)
        update_best(m, m->pend_record[i]);
}

/* The stage machine observes a complete batch. */
static int batch_done(lns *m)
{
    if (m->pend_from_runner) {
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
    if (m->step == STEP_ANCHORS)
        return anchors_told(m);
    if (m->step == STEP_CONFIRM)
        return BOSCH_OK; /* lns_step_confirm reads the draws */
    if (m->step == STEP_GROUP) /* the stage-2 start masks */
        lns_choose_allocation(m);
    return BOSCH_OK;
}

int lns_tell(lns *m, const double *scores, const double *walls)
{
    int rc = store_batch(m, NULL, scores, walls);
    if (rc < 0)
        return lns_fail(m, rc, "out of memory storing evaluations");
    size_t n = m->npend;
    m->npend = 0;
    rc = batch_done(m);
    if (rc < 0)
        return rc;
    update_best_of_batch(m, n);
    return BOSCH_OK;
}

int lns_keep(lns *m, const uint8_t *told, const double *scores, const double *walls)
{
    size_t n = m->npend, ntold = 0;
    for (size_t i = 0; i < n; i++)
        ntold += told[i] != 0;
    int rc = BOSCH_OK;
    if (ntold) {
        rc = store_batch(m, told, scores, walls);
        if (rc == BOSCH_OK)
            update_best_of_batch(m, n);
    }
    m->npend = 0;
    return rc;
}

/* ---- what the session reads ------------------------------------------------------ */

int lns_status(const lns *m)
{
    return m->status;
}

const char *lns_error(const lns *m)
{
    return m->err;
}

const eval_store *lns_store(const lns *m)
{
    return &m->store;
}

uint64_t lns_evaluations(const lns *m, int stage)
{
    return stage >= 0 && stage < BOSCH_STAGE_COUNT ? m->evals[stage] : 0;
}

int lns_stage(const lns *m)
{
    switch (m->step) {
    case STEP_ANCHORS:
    case STEP_PLAN:
        return BOSCH_STAGE_ANCHORS;
    case STEP_PROBE:
        return BOSCH_STAGE_PROBE;
    case STEP_ALLOC:
        return BOSCH_STAGE_ALLOC;
    default:
        return BOSCH_STAGE_GROUP;
    }
}

const uint8_t *lns_work(const lns *m)
{
    return m->plan.work;
}

int lns_anchors(const lns *m, double *s_full, double *s_swa)
{
    if (m->anchors_known) {
        *s_full = m->s_full;
        *s_swa = m->s_swa;
    }
    return m->anchors_known;
}

int lns_raw(const lns *m)
{
    return m->raw;
}

int64_t lns_best(const lns *m)
{
    return m->conf_n ? m->conf_best : m->best_record;
}

double lns_cost(const lns *m)
{
    return m->store.cost;
}

uint32_t lns_confirmed(const lns *m, double *mean, double *stderr_)
{
    if (m->conf_n) {
        *mean = m->conf_mean;
        *stderr_ = m->conf_se;
    }
    return m->conf_n;
}

int64_t lns_best_any(const lns *m)
{
    return m->best_any_record;
}
