/* The optimizer handle: lifetime, the log setter, the method's hooks,
 * evaluator setters and force stop. */
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "session/session.h"

bosch_optimizer *bosch_optimizer_create(const bosch_problem *problem)
{
    if (!problem)
        return create_fail(BOSCH_E_INVALID, "bosch_optimizer_create: problem is NULL");
    bosch_optimizer *opt = calloc(1, sizeof *opt);
    if (!opt)
        return create_fail(BOSCH_E_NOMEM, "bosch_optimizer_create: out of memory");
    atomic_init(&opt->stop_requested, 0);
    if (uv_mutex_init(&opt->mu) != 0) {
        free(opt);
        return create_fail(BOSCH_E_NOMEM, "bosch_optimizer_create: cannot create a mutex");
    }
    if (uv_mutex_init(&opt->eval_mu) != 0) {
        uv_mutex_destroy(&opt->mu);
        free(opt);
        return create_fail(BOSCH_E_NOMEM, "bosch_optimizer_create: cannot create a mutex");
    }
    opt->prob = bosch_problem_clone(problem);
    if (!opt->prob || session_options_init(&opt->o) < 0) {
        bosch_optimizer_free(opt);
        return create_fail(BOSCH_E_NOMEM, "bosch_optimizer_create: out of memory");
    }
    return opt;
}

void bosch_optimizer_free(bosch_optimizer *opt)
{
    if (!opt)
        return;
    lns_free(opt->method);
    pool_destroy(opt->workers);
    journal_close(opt->jn);
    if (opt->replay.slots)
        store_free(&opt->replay);
    uv_mutex_destroy(&opt->mu);
    uv_mutex_destroy(&opt->eval_mu);
    session_options_free(&opt->o);
    bosch_problem_free(opt->prob);
    free(opt->host_idx);
    free(opt->pend_score);
    free(opt->pend_wall);
    free(opt->pend_told);
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

int bosch_set_log(bosch_optimizer *opt, bosch_log_fn fn, void *user, int min_level)
{
    if (!opt || min_level < BOSCH_LOG_DEBUG || min_level > BOSCH_LOG_ERROR)
        return BOSCH_E_INVALID;
    opt->log = fn;
    opt->log_user = user;
    opt->log_level = min_level;
    return BOSCH_OK;
}

/* ---- the method's hooks ------------------------------------------------------------ */

static void hook_log(void *ctx, int level, const char *msg)
{
    bosch_optimizer *opt = ctx;
    if (opt->log)
        opt->log(level, msg, opt->log_user);
}

static int hook_log_wanted(void *ctx, int level)
{
    const bosch_optimizer *opt = ctx;
    return opt->log && level >= opt->log_level;
}

static void hook_milestone(void *ctx)
{
    session_emit_progress(ctx);
}

struct lns_hooks session_hooks(bosch_optimizer *opt)
{
    struct lns_hooks h = {hook_log, hook_log_wanted, hook_milestone, opt};
    return h;
}

/* ---- evaluators and stopping -------------------------------------------------------- */

/* Installs one kind of evaluator (exactly one of the four is non-NULL),
 * replacing the others. */
static int install_evaluator(bosch_optimizer *opt, bosch_eval_fn eval,
                             bosch_batch_eval_fn batch_eval, bosch_request_eval_fn req_eval,
                             bosch_request_batch_eval_fn req_batch_eval, void *user)
{
    opt->eval = eval;
    opt->batch_eval = batch_eval;
    opt->req_eval = req_eval;
    opt->req_batch_eval = req_batch_eval;
    opt->eval_user = user;
    return BOSCH_OK;
}

int bosch_set_evaluator(bosch_optimizer *opt, bosch_eval_fn fn, void *user)
{
    return opt && fn ? install_evaluator(opt, fn, NULL, NULL, NULL, user) : BOSCH_E_INVALID;
}

int bosch_set_batch_evaluator(bosch_optimizer *opt, bosch_batch_eval_fn fn, void *user)
{
    return opt && fn ? install_evaluator(opt, NULL, fn, NULL, NULL, user) : BOSCH_E_INVALID;
}

int bosch_set_request_evaluator(bosch_optimizer *opt, bosch_request_eval_fn fn, void *user)
{
    return opt && fn ? install_evaluator(opt, NULL, NULL, fn, NULL, user) : BOSCH_E_INVALID;
}

int bosch_set_request_batch_evaluator(bosch_optimizer *opt, bosch_request_batch_eval_fn fn,
                                      void *user)
{
    return opt && fn ? install_evaluator(opt, NULL, NULL, NULL, fn, user) : BOSCH_E_INVALID;
}

int bosch_set_evaluator_thread_safe(bosch_optimizer *opt, int thread_safe)
{
    if (!opt)
        return BOSCH_E_INVALID;
    opt->o.eval_thread_safe = thread_safe != 0;
    return BOSCH_OK;
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
