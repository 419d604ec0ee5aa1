/* The optimizer handle: lifetime, errors and logging, ask/tell, and the
 * callback driver built on ask/tell. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/bitset.h"
#include "core/errors.h"
#include "search/optimizer_impl.h"

double opt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

bosch_optimizer *bosch_optimizer_create(const bosch_problem *problem)
{
    if (!problem)
        return create_fail(BOSCH_E_INVALID, "bosch_optimizer_create: problem is NULL");
    bosch_optimizer *opt = calloc(1, sizeof *opt);
    if (!opt)
        return create_fail(BOSCH_E_NOMEM, "bosch_optimizer_create: out of memory");
    opt->prob = bosch_problem_clone(problem);
    opt->o.budget = 1000;
    opt->o.probe_fraction = 0.5;
    opt->o.polish_fraction = 0.5;
    opt->o.alpha = 1.0;
    opt->o.spread = 0.5;
    opt->o.group_cap = 48;
    opt->o.batch = 8;
    opt->o.variant = BOSCH_VARIANT_FULL;
    opt->o.threads = 1;
    opt->o.strategy[BOSCH_STAGE_PROBE] = bosch_strategy_builtin("auto");
    opt->o.strategy[BOSCH_STAGE_GROUP] = bosch_strategy_builtin("auto");
    opt->best_record = -1;
    opt->best_any_record = -1;
    atomic_init(&opt->stop_requested, 0);
    if (uv_mutex_init(&opt->mu) != 0) {
        bosch_problem_free(opt->prob);
        free(opt);
        return create_fail(BOSCH_E_NOMEM, "bosch_optimizer_create: cannot create a mutex");
    }
    if (uv_mutex_init(&opt->eval_mu) != 0) {
        uv_mutex_destroy(&opt->mu);
        bosch_problem_free(opt->prob);
        free(opt);
        return create_fail(BOSCH_E_NOMEM, "bosch_optimizer_create: cannot create a mutex");
    }
    if (!opt->prob || !opt->o.strategy[BOSCH_STAGE_PROBE] || !opt->o.strategy[BOSCH_STAGE_GROUP] ||
        store_init(&opt->store, problem->units) < 0) {
        bosch_optimizer_free(opt);
        return create_fail(BOSCH_E_NOMEM, "bosch_optimizer_create: out of memory");
    }
    return opt;
}

void bosch_optimizer_free(bosch_optimizer *opt)
{
    if (!opt)
        return;
    stages_free(opt);
    pool_destroy(opt->workers);
    journal_close(opt->jn);
    if (opt->replay.slots)
        store_free(&opt->replay);
    free(opt->o.journal_path);
    free(opt->host_idx);
    free(opt->pend_wall);
    uv_mutex_destroy(&opt->mu);
    uv_mutex_destroy(&opt->eval_mu);
    for (int s = 0; s < BOSCH_STAGE_COUNT; s++)
        bosch_strategy_free(opt->o.strategy[s]);
    store_free(&opt->store);
    bosch_problem_free(opt->prob);
    free(opt->pend);
    free(opt->pend_score);
    free(opt->pend_told);
    free(opt->pend_record);
    free(opt);
}

const char *bosch_optimizer_last_error(const bosch_optimizer *opt)
{
    return opt ? opt->err : "invalid handle";
}

bosch_optimizer *bosch_create(const bosch_problem *problem)
{
    return bosch_optimizer_create(problem);
}

void bosch_destroy(bosch_optimizer *opt)
{
    bosch_optimizer_free(opt);
}

const char *bosch_last_error(const bosch_optimizer *opt)
{
    return bosch_optimizer_last_error(opt);
}

static void set_error_v(bosch_optimizer *opt, const char *fmt, va_list ap)
{
    vsnprintf(opt->err, sizeof opt->err, fmt, ap);
}

/* Records an error message without ending the run (a refused call). */
static int refuse(bosch_optimizer *opt, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int refuse(bosch_optimizer *opt, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_error_v(opt, fmt, ap);
    va_end(ap);
    return code;
}

void opt_log(bosch_optimizer *opt, int level, const char *fmt, ...)
{
    if (!opt->log || level < opt->log_level)
        return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    opt->log(level, buf, opt->log_user);
}

double opt_normalized(const bosch_optimizer *opt, double raw)
{
    if (!opt->anchors_known)
        return NAN;
    return (raw - opt->s_swa) / (opt->s_full - opt->s_swa);
}

double opt_objective_of(const bosch_optimizer *opt, size_t record)
{
    const eval_store *s = &opt->store;
    double ratio = (double)bitset_popcount(store_mask(s, record), s->words) / (double)s->units;
    double d = ratio - bosch_problem_target_ratio(opt->prob);
    return opt_normalized(opt, s->scores[record]) - opt->o.alpha * d * d;
}

int opt_reserve_pending(bosch_optimizer *opt, size_t n)
{
    if (n <= opt->pend_cap)
        return BOSCH_OK;
    size_t cap = n > 2 * opt->pend_cap ? n : 2 * opt->pend_cap;
    uint8_t *pend = realloc(opt->pend, cap * opt->prob->units);
    if (!pend)
        return BOSCH_E_NOMEM;
    opt->pend = pend;
    double *sc = realloc(opt->pend_score, cap * sizeof *sc);
    if (!sc)
        return BOSCH_E_NOMEM;
    opt->pend_score = sc;
    uint8_t *told = realloc(opt->pend_told, cap);
    if (!told)
        return BOSCH_E_NOMEM;
    opt->pend_told = told;
    int64_t *rec = realloc(opt->pend_record, cap * sizeof *rec);
    if (!rec)
        return BOSCH_E_NOMEM;
    opt->pend_record = rec;
    double *wall = realloc(opt->pend_wall, cap * sizeof *wall);
    if (!wall)
        return BOSCH_E_NOMEM;
    opt->pend_wall = wall;
    size_t *hidx = realloc(opt->host_idx, cap * sizeof *hidx);
    if (!hidx)
        return BOSCH_E_NOMEM;
    opt->host_idx = hidx;
    opt->pend_cap = cap;
    return BOSCH_OK;
}

static void update_best(bosch_optimizer *opt, int64_t rec)
{
    if (!opt->anchors_known || rec < 0)
        return;
    double v = opt_objective_of(opt, (size_t)rec);
    if (opt->best_any_record < 0 || v > opt_objective_of(opt, (size_t)opt->best_any_record))
        opt->best_any_record = rec;
    if (opt->store.eligible[rec] &&
        (opt->best_record < 0 || v > opt_objective_of(opt, (size_t)opt->best_record)))
        opt->best_record = rec;
}

/* Stores the told candidates of the pending batch, in batch order. */
static int store_told(bosch_optimizer *opt)
{
    const bosch_problem *p = opt->prob;
    uint64_t *packed = malloc(opt->store.words * sizeof *packed);
    if (!packed)
        return BOSCH_E_NOMEM;
    for (size_t i = 0; i < opt->npend; i++) {
        opt->pend_record[i] = -1;
        if (!opt->pend_told[i])
            continue;
        const uint8_t *m = opt->pend + i * p->units;
        int eligible = bosch_mask_is_feasible(p, m);
        bitset_pack(m, p->units, packed);
        int64_t rec = store_add(&opt->store, packed, opt->pend_score[i], opt->pend_stage, eligible,
                                opt->pend_wall[i]);
        if (rec < 0) {
            free(packed);
            return (int)rec;
        }
        opt->pend_record[i] = rec;
        opt->evals[opt->pend_stage]++;
    }
    free(packed);
    return BOSCH_OK;
}

static void update_best_of_batch(bosch_optimizer *opt, size_t n)
{
    for (size_t i = 0; i < n; i++)
        update_best(opt, opt->pend_record[i]);
}

/* Ends the run with an error; told candidates of the pending batch are kept. */
int opt_fail(bosch_optimizer *opt, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_error_v(opt, fmt, ap);
    va_end(ap);
    if (opt->npend && opt->ntold && store_told(opt) == BOSCH_OK)
        update_best_of_batch(opt, opt->npend);
    opt->npend = 0;
    opt->nhost = 0;
    if (opt->status == 0)
        opt->status = code;
    opt_log(opt, BOSCH_LOG_ERROR, "%s", opt->err);
    return code;
}

/* Ends the run normally (stop request, time) keeping the told candidates. */
static int stop_run(bosch_optimizer *opt, int reason)
{
    if (opt->npend && opt->ntold && store_told(opt) == BOSCH_OK)
        update_best_of_batch(opt, opt->npend);
    opt->npend = 0;
    opt->nhost = 0;
    opt->status = reason;
    opt_log(opt, BOSCH_LOG_INFO, "%s", bosch_strerror(reason));
    opt_emit_progress(opt);
    return reason;
}

int opt_complete_batch(bosch_optimizer *opt)
{
    if (opt->journal_failed)
        return opt_fail(opt, BOSCH_E_IO, "cannot append to journal '%s'", opt->o.journal_path);
    int rc = store_told(opt);
    if (rc < 0)
        return opt_fail(opt, rc, "out of memory storing evaluations");
    size_t n = opt->npend;
    opt->npend = 0;
    opt->nhost = 0;
    rc = stages_batch_done(opt);
    if (rc < 0)
        return rc;
    update_best_of_batch(opt, n);
    opt_emit_progress(opt);
    return BOSCH_OK;
}

static int start_run(bosch_optimizer *opt)
{
    char why[256];
    if (bosch_problem_check(opt->prob, why, sizeof why) != BOSCH_OK)
        return opt_fail(opt, BOSCH_E_INFEASIBLE, "infeasible problem: %s", why);
    opt->started = 1;
    opt->t0 = opt_now();
    opt->step = STEP_ANCHORS;
    if (opt->o.journal_path) {
        char *header = opt_journal_header(opt);
        if (!header)
            return opt_fail(opt, BOSCH_E_NOMEM, "out of memory");
        if (store_init(&opt->replay, opt->prob->units) < 0) {
            free(header);
            return opt_fail(opt, BOSCH_E_NOMEM, "out of memory");
        }
        char err[sizeof opt->err];
        int dropped = 0;
        int rc = journal_open(&opt->jn, opt->o.journal_path, opt->o.journal_mode,
                              opt->o.journal_sync, header, &opt->replay, &dropped, err, sizeof err);
        free(header);
        if (rc != BOSCH_OK)
            return opt_fail(opt, rc, "%s", err);
        opt->replay_active = opt->replay.n > 0;
        opt_log(opt, BOSCH_LOG_INFO, "journal '%s': %zu evaluations to replay%s",
                opt->o.journal_path, opt->replay.n,
                dropped ? " (a cut-short last frame was dropped)" : "");
    }
    if (opt->o.anchors_given) {
        opt->s_full = opt->o.s_full;
        opt->s_swa = opt->o.s_swa;
        opt->anchors_known = 1;
    }
    return BOSCH_OK;
}

void opt_record_told(bosch_optimizer *opt, size_t b, double score, double wall, int replayed)
{
    opt->pend_told[b] = 1;
    opt->pend_score[b] = score;
    opt->pend_wall[b] = wall;
    opt->ntold++;
    if (replayed) {
        opt->replayed++;
        return;
    }
    opt->fresh++;
    if (opt->jn && !opt->journal_failed) {
        uint64_t packed[64], *pk = opt->store.words <= 64 ? packed : malloc(opt->store.words * 8);
        if (!pk) {
            opt->journal_failed = 1;
            return;
        }
        bitset_pack(opt->pend + b * opt->prob->units, opt->prob->units, pk);
        if (journal_append(opt->jn, opt->pend_stage, score, wall, pk, opt->store.words) != BOSCH_OK)
            opt->journal_failed = 1;
        if (pk != packed)
            free(pk);
    }
}

/* Answers the candidates a resumed journal already holds, then lists the
 * rest for the host. */
static int answer_from_journal(bosch_optimizer *opt)
{
    size_t units = opt->prob->units;
    opt->nhost = 0;
    uint64_t packed[64], *pk = packed;
    if (opt->replay_active && opt->store.words > 64 && !(pk = malloc(opt->store.words * 8)))
        return BOSCH_E_NOMEM;
    for (size_t b = 0; b < opt->npend; b++) {
        if (opt->replay_active) {
            bitset_pack(opt->pend + b * units, units, pk);
            int64_t r = store_find(&opt->replay, pk);
            if (r >= 0) {
                opt_record_told(opt, b, opt->replay.scores[r], opt->replay.walls[r], 1);
                continue;
            }
        }
        opt->host_idx[opt->nhost++] = b;
    }
    if (pk != packed)
        free(pk);
    return BOSCH_OK;
}

int bosch_ask(bosch_optimizer *opt, size_t *n)
{
    if (!opt || !n)
        return BOSCH_E_INVALID;
    *n = 0;
    if (!opt->started && opt->status == 0 && start_run(opt) < 0)
        return opt->status;
    for (;;) {
        if (opt->status != 0)
            return opt->status;
        if (atomic_load(&opt->stop_requested))
            return stop_run(opt, BOSCH_FORCED_STOP);
        if (opt->npend) {
            *n = opt->nhost;
            return BOSCH_OK;
        }
        if (opt->o.time_limit > 0 && opt_now() - opt->t0 >= opt->o.time_limit)
            return stop_run(opt, BOSCH_TIME_REACHED);
        int rc = stages_next_batch(opt);
        if (rc < 0)
            return opt->status ? opt->status : rc;
        if (rc == 0)
            return opt->status;
        opt->npend = (size_t)rc;
        opt->ntold = 0;
        memset(opt->pend_told, 0, opt->npend);
        rc = answer_from_journal(opt);
        if (rc < 0)
            return opt_fail(opt, rc, "out of memory");
        if (opt->nhost == 0) { /* all replayed: on to the next batch */
            rc = opt_complete_batch(opt);
            if (rc < 0)
                return rc;
            continue;
        }
        opt->batch_t0 = opt_now();
        *n = opt->nhost;
        return BOSCH_OK;
    }
}

int bosch_candidate(const bosch_optimizer *opt, size_t i, uint8_t *mask)
{
    if (!opt || !mask)
        return BOSCH_E_INVALID;
    if (i >= opt->nhost)
        return refuse((bosch_optimizer *)opt, BOSCH_E_INVALID,
                      "candidate %zu does not exist (pending batch holds %zu)", i, opt->nhost);
    memcpy(mask, opt->pend + opt->host_idx[i] * opt->prob->units, opt->prob->units);
    return BOSCH_OK;
}

int bosch_candidate_stage(const bosch_optimizer *opt)
{
    if (!opt)
        return BOSCH_E_INVALID;
    if (!opt->npend)
        return refuse((bosch_optimizer *)opt, BOSCH_E_STATE, "no batch is pending");
    return opt->pend_stage;
}

static int check_told(bosch_optimizer *opt, size_t i)
{
    if (opt->status != 0)
        return refuse(opt, BOSCH_E_STATE, "the search has ended (%s)", bosch_err_name(opt->status));
    if (i >= opt->nhost)
        return refuse(opt, BOSCH_E_INVALID, "candidate %zu is not pending (batch of %zu)", i,
                      opt->nhost);
    if (opt->pend_told[opt->host_idx[i]])
        return refuse(opt, BOSCH_E_STATE, "candidate %zu was already told", i);
    return BOSCH_OK;
}

int bosch_tell(bosch_optimizer *opt, size_t i, double score)
{
    if (!opt)
        return BOSCH_E_INVALID;
    int rc = check_told(opt, i);
    if (rc < 0)
        return rc;
    if (!isfinite(score))
        return refuse(opt, BOSCH_E_BAD_SCORE,
                      "score of candidate %zu is %g: scores must be finite", i, score);
    opt_record_told(opt, opt->host_idx[i], score, opt_now() - opt->batch_t0, 0);
    if (opt->ntold == opt->npend)
        return opt_complete_batch(opt);
    return BOSCH_OK;
}

int bosch_tell_failure(bosch_optimizer *opt, size_t i, int host_status)
{
    if (!opt)
        return BOSCH_E_INVALID;
    int rc = check_told(opt, i);
    if (rc < 0)
        return rc;
    opt->host_status = host_status;
    return opt_fail(opt, BOSCH_E_EVALUATOR, "evaluator failed on candidate %zu with status %d", i,
                    host_status);
}

void bosch_force_stop(bosch_optimizer *opt)
{
    if (opt)
        atomic_store(&opt->stop_requested, 1);
}

int bosch_evaluator_status(const bosch_optimizer *opt)
{
    return opt ? opt->host_status : 0;
}

/* ---- progress ---------------------------------------------------------------- */

struct bosch_progress {
    const bosch_optimizer *opt;
};

void opt_emit_progress(bosch_optimizer *opt)
{
    if (!opt->progress)
        return;
    struct bosch_progress p = {opt};
    opt->progress(&p, opt->progress_user);
}

int bosch_set_progress(bosch_optimizer *opt, bosch_progress_fn fn, void *user)
{
    if (!opt)
        return BOSCH_E_INVALID;
    opt->progress = fn;
    opt->progress_user = user;
    return BOSCH_OK;
}

int bosch_set_log(bosch_optimizer *opt, bosch_log_fn fn, void *user, int min_level)
{
    if (!opt || min_level < BOSCH_LOG_DEBUG || min_level > BOSCH_LOG_ERROR)
        return BOSCH_E_INVALID;
    opt->log = fn;
    opt->log_user = user;
    opt->log_level = min_level;
    return BOSCH_OK;
}

int bosch_progress_stage(const bosch_progress *p)
{
    if (!p)
        return BOSCH_E_INVALID;
    switch (p->opt->step) {
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

uint64_t bosch_progress_evaluations(const bosch_progress *p)
{
    return p ? p->opt->store.n : 0;
}

uint64_t bosch_progress_budget(const bosch_progress *p)
{
    return p ? p->opt->o.budget : 0;
}

double bosch_progress_best_score(const bosch_progress *p)
{
    if (!p || p->opt->best_record < 0)
        return NAN;
    return opt_normalized(p->opt, p->opt->store.scores[p->opt->best_record]);
}

uint32_t bosch_progress_layers(const bosch_progress *p)
{
    return p ? p->opt->prob->layers : 0;
}

int bosch_progress_layer_ratios(const bosch_progress *p, double *out, size_t n)
{
    if (!p || !out || n < p->opt->prob->layers)
        return BOSCH_E_INVALID;
    const bosch_problem *pr = p->opt->prob;
    const uint8_t *w = p->opt->plan.work;
    for (uint32_t l = 0; l < pr->layers; l++) {
        size_t c = 0;
        for (uint32_t g = 0; g < pr->groups && w; g++)
            c += w[(size_t)l * pr->groups + g];
        out[l] = (double)c / pr->groups;
    }
    return BOSCH_OK;
}

double bosch_progress_elapsed(const bosch_progress *p)
{
    return p ? opt_now() - p->opt->t0 : 0.0;
}

double bosch_progress_rate(const bosch_progress *p)
{
    if (!p || p->opt->fresh == 0)
        return NAN;
    double t = opt_now() - p->opt->t0;
    return t > 0.0 ? (double)p->opt->fresh / t : NAN;
}

double bosch_progress_eta(const bosch_progress *p)
{
    double rate = bosch_progress_rate(p);
    if (!(rate > 0.0))
        return NAN;
    uint64_t done = p->opt->store.n, budget = p->opt->o.budget;
    return budget > done ? (double)(budget - done) / rate : 0.0;
}

uint64_t bosch_progress_replayed(const bosch_progress *p)
{
    return p ? p->opt->replayed : 0;
}

const char *bosch_stage_name(int stage)
{
    static const char *const names[] = {"anchors", "probe", "alloc", "group"};
    return stage >= 0 && stage < BOSCH_STAGE_COUNT ? names[stage] : "unknown";
}

const char *bosch_variant_name(int variant)
{
    static const char *const names[] = {"full", "probe-only", "group-only", "layer-level"};
    return variant >= 0 && variant <= BOSCH_VARIANT_LAYER_LEVEL ? names[variant] : NULL;
}
