/* Callback mode: bosch_optimize drives ask/tell and calls the host's
 * evaluator, with up to `threads` evaluations in flight. Every score goes
 * through the same tell path as bosch_tell (session_tell_one, under opt->mu
 * when workers run); the batch goes back to the method only when complete,
 * in proposal order, so the thread count never changes the result. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "session/session.h"

struct job {
    bosch_optimizer *opt;
    int *status;      /* per host index: the host's non-zero code, else 0 */
    double *bad;      /* per host index: a non-finite score, else 0 */
    atomic_int abort; /* a failure or stop request: start nothing more */
};

static void evaluate_one(void *ctx, size_t i)
{
    struct job *job = ctx;
    bosch_optimizer *opt = job->opt;
    if (atomic_load(&opt->stop_requested)) {
        atomic_store(&job->abort, 1);
        return;
    }
    size_t units = opt->prob->units;
    size_t b = opt->host_idx[i];
    int serial = !opt->o.eval_thread_safe && opt->o.threads > 1;
    double s = NAN;
    if (serial)
        uv_mutex_lock(&opt->eval_mu);
    double t = session_now();
    int st = opt->req_eval ? opt->req_eval(opt->batch.masks + b * units, units,
                                           opt->batch.fidelity[b], opt->batch.draws[b], &s,
                                           opt->eval_user)
                           : opt->eval(opt->batch.masks + b * units, units, &s, opt->eval_user);
    double wall = session_now() - t;
    if (serial)
        uv_mutex_unlock(&opt->eval_mu);
    uv_mutex_lock(&opt->mu);
    if (st != 0) {
        job->status[i] = st;
        atomic_store(&job->abort, 1);
    } else if (session_tell_one(opt, i, s, wall) == BOSCH_E_BAD_SCORE) {
        job->bad[i] = s;
        atomic_store(&job->abort, 1);
    }
    uv_mutex_unlock(&opt->mu);
}

/* After a cut-short batch: report the failure of the lowest host index. */
static int report_failure(bosch_optimizer *opt, const struct job *job, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (job->bad[i] != 0.0) /* NaN compares unequal too */
            return session_fail(opt, BOSCH_E_BAD_SCORE,
                            "evaluator returned score %g for candidate %zu: scores must be finite",
                            job->bad[i], i);
        if (job->status[i] != 0) {
            opt->host_status = job->status[i];
            return session_fail(opt, BOSCH_E_EVALUATOR,
                            "evaluator failed on candidate %zu with status %d", i,
                            job->status[i]);
        }
    }
    return BOSCH_OK;
}

static int evaluate_singles(bosch_optimizer *opt, size_t n)
{
    struct job job = {opt, calloc(n, sizeof(int)), calloc(n, sizeof(double)), 0};
    if (!job.status || !job.bad) {
        free(job.status);
        free(job.bad);
        return session_fail(opt, BOSCH_E_NOMEM, "out of memory");
    }
    atomic_init(&job.abort, 0);
    uint32_t threads = opt->o.threads;
    if (threads > 1 && n > 1 && !opt->workers) {
        opt->workers = pool_create(threads);
        if (!opt->workers)
            session_log(opt, BOSCH_LOG_WARN, "cannot start %u worker threads: evaluating serially",
                    threads);
    }
    if (threads > 1 && n > 1 && opt->workers) {
        pool_run(opt->workers, evaluate_one, &job, n, &job.abort);
    } else {
        for (size_t i = 0; i < n && !atomic_load(&job.abort); i++)
            evaluate_one(&job, i);
    }
    int rc = report_failure(opt, &job, n);
    free(job.status);
    free(job.bad);
    if (rc < 0)
        return rc;
    if (opt->ntold == opt->npend)
        return session_complete_batch(opt);
    return BOSCH_OK; /* stopped: the next ask keeps the told part */
}

static int evaluate_whole_batch(bosch_optimizer *opt, size_t n)
{
    size_t units = opt->prob->units;
    uint8_t *masks = malloc(n * units);
    double *scores = malloc(n * sizeof *scores);
    double *fid = malloc(n * sizeof *fid);
    uint32_t *draws = malloc(n * sizeof *draws);
    if (!masks || !scores || !fid || !draws) {
        free(masks);
        free(scores);
        free(fid);
        free(draws);
        return session_fail(opt, BOSCH_E_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        size_t b = opt->host_idx[i];
        memcpy(masks + i * units, opt->batch.masks + b * units, units);
        fid[i] = opt->batch.fidelity[b];
        draws[i] = opt->batch.draws[b];
    }
    double t = session_now();
    int st = opt->req_batch_eval
                 ? opt->req_batch_eval(masks, fid, draws, n, units, scores, opt->eval_user)
                 : opt->batch_eval(masks, n, units, scores, opt->eval_user);
    double wall = (session_now() - t) / (double)n; /* the batch's time, shared */
    free(masks);
    free(fid);
    free(draws);
    int rc = BOSCH_OK;
    if (st != 0) {
        opt->host_status = st;
        rc = session_fail(opt, BOSCH_E_EVALUATOR, "batch evaluator failed with status %d", st);
    }
    for (size_t i = 0; i < n && rc == BOSCH_OK; i++)
        if (!isfinite(scores[i]))
            rc = session_fail(opt, BOSCH_E_BAD_SCORE,
                          "evaluator returned score %g for candidate %zu: scores must be finite",
                          scores[i], i);
    for (size_t i = 0; i < n && rc == BOSCH_OK; i++)
        rc = session_tell_one(opt, i, scores[i], wall);
    free(scores);
    if (rc < 0)
        return rc;
    return session_complete_batch(opt);
}

int bosch_optimize(bosch_optimizer *opt)
{
    if (!opt)
        return BOSCH_E_INVALID;
    if (!opt->eval && !opt->batch_eval && !opt->req_eval && !opt->req_batch_eval) {
        return session_refuse(opt, BOSCH_E_STATE,
                              "no evaluator set: call bosch_set_evaluator first");
    }
    if (opt->o.screen_fidelity < 1.0 && !opt->req_eval && !opt->req_batch_eval && !opt->started)
        return session_refuse(opt, BOSCH_E_INVALID,
                              "screen_fidelity %g needs an evaluator that reads the fidelity "
                              "(bosch_set_request_evaluator or bosch_set_request_batch_evaluator)",
                              opt->o.screen_fidelity);
    for (;;) {
        size_t n = 0;
        int rc = bosch_ask(opt, &n);
        if (rc != BOSCH_OK)
            return rc;
        rc = opt->batch_eval || opt->req_batch_eval ? evaluate_whole_batch(opt, n)
                                                    : evaluate_singles(opt, n);
        if (rc < 0)
            return rc;
    }
}
