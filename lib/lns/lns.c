/* The method's driver, the top of lib/lns: lifetime, the two batches
 * (next / tell) run through the step table, the best record, and what the
 * session may read. The steps are the stages' (stage.h); what they share
 * is below them (batch.h, state.h). */
#include <stdlib.h>

#include "core/bitset.h"
#include "lns/batch.h"
#include "lns/lns.h"
#include "lns/stage.h"

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
    lns_sweep_free(m);
    store_free(&m->store);
    free(m);
}

/* ---- the budget a run needs ---------------------------------------------------- */

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

/* The last step: the confirmation draws if they are due, else the end. */
static int step_finished(lns *m)
{
    if (lns_confirm_pending(m)) {
        m->step = STEP_CONFIRM;
        return 0;
    }
    lns_finish(m);
    lns_milestone(m);
    return 0;
}

/* Each step runs its stage and reports as which bosch_stage progress sees it. */
static const struct {
    int (*run)(lns *m);
    int stage; /* enum bosch_stage */
} steps[STEP_COUNT] = {
    [STEP_ANCHORS] = {lns_step_anchors, BOSCH_STAGE_ANCHORS},
    [STEP_PLAN] = {lns_step_plan, BOSCH_STAGE_ANCHORS},
    [STEP_PROBE] = {lns_step_probe, BOSCH_STAGE_PROBE},
    [STEP_ALLOC] = {lns_step_alloc, BOSCH_STAGE_ALLOC},
    [STEP_GROUP] = {lns_step_group, BOSCH_STAGE_GROUP},
    [STEP_POLISH] = {lns_step_polish, BOSCH_STAGE_GROUP},
    [STEP_SWEEP] = {lns_step_sweep, BOSCH_STAGE_GROUP},
    [STEP_LAYERS] = {lns_step_layers, BOSCH_STAGE_GROUP},
    [STEP_CONFIRM] = {lns_step_confirm, BOSCH_STAGE_GROUP},
    [STEP_FINISHED] = {step_finished, BOSCH_STAGE_GROUP},
};

/* ---- the two batches ----------------------------------------------------------- */

int lns_next(lns *m, struct lns_batch *out)
{
    out->n = 0;
    out->masks = NULL;
    if (m->status == 0 && m->store.n == 0 && m->step == STEP_ANCHORS && check_budget(m) < 0)
        return m->status;
    for (;;) {
        if (m->status != 0)
            return m->status < 0 ? m->status : 0;
        int n = steps[m->step].run(m);
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

int lns_tell(lns *m, const double *scores, const double *walls)
{
    int rc = store_batch(m, NULL, scores, walls);
    if (rc < 0)
        return lns_fail(m, rc, "out of memory storing evaluations");
    size_t n = m->npend;
    int (*told)(lns *) = m->pend_told;
    m->npend = 0;
    m->pend_told = NULL;
    rc = told ? told(m) : BOSCH_OK;
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
    m->pend_told = NULL;
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
    return steps[m->step].stage;
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
