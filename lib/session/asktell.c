/* Ask/tell: the session's side of the method's two batches. bosch_ask
 * starts the run (problem check, journal, method), hands out the method's
 * next batch less what a resumed journal answers; every score, from
 * bosch_tell or from the callback driver, goes through session_tell_one;
 * a fully told batch goes back to the method in session_complete_batch. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/bitset.h"
#include "session/session.h"

/* Makes room for the told state of n pending candidates. */
static int reserve_told(bosch_optimizer *opt, size_t n)
{
    if (n <= opt->pend_cap)
        return BOSCH_OK;
    size_t cap = n > 2 * opt->pend_cap ? n : 2 * opt->pend_cap;
    double *sc = realloc(opt->pend_score, cap * sizeof *sc);
    if (!sc)
        return BOSCH_E_NOMEM;
    opt->pend_score = sc;
    double *wall = realloc(opt->pend_wall, cap * sizeof *wall);
    if (!wall)
        return BOSCH_E_NOMEM;
    opt->pend_wall = wall;
    uint8_t *told = realloc(opt->pend_told, cap);
    if (!told)
        return BOSCH_E_NOMEM;
    opt->pend_told = told;
    size_t *hidx = realloc(opt->host_idx, cap * sizeof *hidx);
    if (!hidx)
        return BOSCH_E_NOMEM;
    opt->host_idx = hidx;
    opt->pend_cap = cap;
    return BOSCH_OK;
}

static int open_journal(bosch_optimizer *opt)
{
    char *header = session_journal_header(opt);
    if (!header)
        return session_fail(opt, BOSCH_E_NOMEM, "out of memory");
    if (store_init(&opt->replay, opt->prob->units) < 0) {
        free(header);
        return session_fail(opt, BOSCH_E_NOMEM, "out of memory");
    }
    char err[sizeof opt->err];
    int dropped = 0;
    int rc = journal_open(&opt->jn, opt->o.journal_path, opt->o.journal_mode, opt->o.journal_sync,
                          header, &opt->replay, &dropped, err, sizeof err);
    free(header);
    if (rc != BOSCH_OK)
        return session_fail(opt, rc, "%s", err);
    opt->replay_active = opt->replay.n > 0;
    session_log(opt, BOSCH_LOG_INFO, "journal '%s': %zu evaluations to replay%s",
                opt->o.journal_path, opt->replay.n,
                dropped ? " (a cut-short last frame was dropped)" : "");
    return BOSCH_OK;
}

static int start_run(bosch_optimizer *opt)
{
    char why[256];
    if (bosch_problem_check(opt->prob, why, sizeof why) != BOSCH_OK)
        return session_fail(opt, BOSCH_E_INFEASIBLE, "infeasible problem: %s", why);
    opt->started = 1;
    opt->t0 = session_now();
    struct lns_config cfg = session_lns_config(&opt->o);
    struct lns_hooks hooks = session_hooks(opt);
    opt->method = lns_create(opt->prob, &cfg, &hooks);
    if (!opt->method)
        return session_fail(opt, BOSCH_E_NOMEM, "out of memory");
    if (opt->o.journal_path)
        return open_journal(opt);
    return BOSCH_OK;
}

/* Ends the run normally (stop request, time) keeping the told candidates. */
static int stop_run(bosch_optimizer *opt, int reason)
{
    session_end_batch(opt);
    opt->status = reason;
    session_log(opt, BOSCH_LOG_INFO, "%s", bosch_strerror(reason));
    session_emit_progress(opt);
    return reason;
}

/* Marks batch candidate b as scored and journals it unless replayed. */
static void record_told(bosch_optimizer *opt, size_t b, double score, double wall, int replayed)
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
    if (!opt->jn || opt->journal_failed)
        return;
    size_t words = bitset_words(opt->prob->units);
    uint64_t packed[64], *pk = words <= 64 ? packed : malloc(words * 8);
    if (!pk) {
        opt->journal_failed = 1;
        snprintf(opt->journal_reason, sizeof opt->journal_reason, "out of memory");
        return;
    }
    bitset_pack(opt->batch.masks + b * opt->prob->units, opt->prob->units, pk);
    int rc = journal_append(opt->jn, opt->batch.stage, score, wall, opt->batch.fidelity[b],
                            opt->batch.draws[b], pk, words);
    if (rc != BOSCH_OK) {
        opt->journal_failed = 1;
        snprintf(opt->journal_reason, sizeof opt->journal_reason, "%s",
                 rc == BOSCH_E_IO ? journal_strerror(opt->jn) : bosch_strerror(rc));
    }
    if (pk != packed)
        free(pk);
}

/* Answers the candidates a resumed journal already holds, then lists the
 * rest for the host. */
static int answer_from_journal(bosch_optimizer *opt)
{
    size_t units = opt->prob->units, words = bitset_words(units);
    opt->nhost = 0;
    uint64_t packed[64], *pk = packed;
    if (opt->replay_active && words > 64 && !(pk = malloc(words * 8)))
        return BOSCH_E_NOMEM;
    for (size_t b = 0; b < opt->npend; b++) {
        if (opt->replay_active) {
            bitset_pack(opt->batch.masks + b * units, units, pk);
            int64_t r = store_find_request(&opt->replay, pk, opt->batch.fidelity[b],
                                           opt->batch.draws[b]);
            if (r >= 0) {
                record_told(opt, b, opt->replay.scores[r], opt->replay.walls[r], 1);
                continue;
            }
        }
        opt->host_idx[opt->nhost++] = b;
    }
    if (pk != packed)
        free(pk);
    return BOSCH_OK;
}

int session_complete_batch(bosch_optimizer *opt)
{
    opt->npend = 0;
    opt->nhost = 0;
    int rc = lns_tell(opt->method, opt->pend_score, opt->pend_wall);
    if (rc < 0)
        return session_fail(opt, rc, "%s", lns_error(opt->method));
    session_emit_progress(opt);
    if (opt->journal_failed && opt->status == 0) {
        /* The batch's scores are valid and told; only the journal lost
         * them. A run that goes on could not be resumed, so it stops here,
         * cleanly: the result is the best mask found so far. */
        snprintf(opt->err, sizeof opt->err,
                 "cannot append to journal '%s': %s; the search stopped after %llu "
                 "evaluations (the result holds the best mask found)",
                 opt->o.journal_path, opt->journal_reason,
                 (unsigned long long)(opt->fresh + opt->replayed));
        session_log(opt, BOSCH_LOG_ERROR, "%s", opt->err);
        opt->status = BOSCH_JOURNAL_FAILED;
    }
    return BOSCH_OK;
}

/* The method's next batch, with the journal's answers filled in; 0 = the
 * method has ended (opt->status set). */
static int next_batch(bosch_optimizer *opt)
{
    int rc = lns_next(opt->method, &opt->batch);
    if (rc < 0)
        return session_fail(opt, rc, "%s", lns_error(opt->method));
    if (rc == 0) {
        opt->status = lns_status(opt->method);
        return 0;
    }
    if (reserve_told(opt, (size_t)rc) < 0)
        return session_fail(opt, BOSCH_E_NOMEM, "out of memory");
    opt->npend = (size_t)rc;
    opt->ntold = 0;
    memset(opt->pend_told, 0, opt->npend);
    if (answer_from_journal(opt) < 0)
        return session_fail(opt, BOSCH_E_NOMEM, "out of memory");
    return rc;
}

static int ask(bosch_optimizer *opt, size_t *n);

int bosch_ask(bosch_optimizer *opt, size_t *n)
{
    if (!opt || !n)
        return BOSCH_E_INVALID;
    int rc = ask(opt, n);
    session_end_journal(opt);
    return rc;
}

static int ask(bosch_optimizer *opt, size_t *n)
{
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
        if (opt->o.time_limit > 0 && session_now() - opt->t0 >= opt->o.time_limit)
            return stop_run(opt, BOSCH_TIME_REACHED);
        int rc = next_batch(opt);
        if (rc <= 0)
            return opt->status;
        if (opt->nhost == 0) { /* all replayed: on to the next batch */
            if (session_complete_batch(opt) < 0)
                return opt->status;
            continue;
        }
        opt->batch_t0 = session_now();
        *n = opt->nhost;
        return BOSCH_OK;
    }
}

int bosch_candidate(bosch_optimizer *opt, size_t i, uint8_t *mask)
{
    if (!opt || !mask)
        return BOSCH_E_INVALID;
    if (i >= opt->nhost)
        return session_refuse(opt, BOSCH_E_INVALID,
                              "candidate %zu does not exist (pending batch holds %zu)", i,
                              opt->nhost);
    memcpy(mask, opt->batch.masks + opt->host_idx[i] * opt->prob->units, opt->prob->units);
    return BOSCH_OK;
}

int bosch_candidate_request(bosch_optimizer *opt, size_t i, double *fidelity, uint32_t *draw)
{
    if (!opt)
        return BOSCH_E_INVALID;
    if (i >= opt->nhost)
        return session_refuse(opt, BOSCH_E_INVALID,
                              "candidate %zu does not exist (pending batch holds %zu)", i,
                              opt->nhost);
    size_t b = opt->host_idx[i];
    if (fidelity)
        *fidelity = opt->batch.fidelity[b];
    if (draw)
        *draw = opt->batch.draws[b];
    return BOSCH_OK;
}

int bosch_candidate_stage(bosch_optimizer *opt)
{
    if (!opt)
        return BOSCH_E_INVALID;
    if (!opt->npend)
        return session_refuse(opt, BOSCH_E_STATE, "no batch is pending");
    return opt->batch.stage;
}

/* Why host candidate i cannot be told now (BOSCH_OK if it can). */
static int tell_check(const bosch_optimizer *opt, size_t i)
{
    if (opt->status != 0)
        return BOSCH_E_STATE;
    if (i >= opt->nhost)
        return BOSCH_E_INVALID;
    if (opt->pend_told[opt->host_idx[i]])
        return BOSCH_E_STATE;
    return BOSCH_OK;
}

int session_tell_one(bosch_optimizer *opt, size_t i, double score, double wall)
{
    int rc = tell_check(opt, i);
    if (rc < 0)
        return rc;
    if (!isfinite(score))
        return BOSCH_E_BAD_SCORE;
    record_told(opt, opt->host_idx[i], score, wall, 0);
    return BOSCH_OK;
}

/* bosch_tell's and bosch_tell_failure's message for a refused candidate. */
static int refuse_tell(bosch_optimizer *opt, size_t i, int rc, double score)
{
    if (rc == BOSCH_E_BAD_SCORE)
        return session_refuse(opt, rc, "score of candidate %zu is %g: scores must be finite", i,
                              score);
    if (opt->status != 0)
        return session_refuse(opt, rc, "the search has ended (%s)", bosch_err_name(opt->status));
    if (i >= opt->nhost)
        return session_refuse(opt, rc, "candidate %zu is not pending (batch of %zu)", i,
                              opt->nhost);
    return session_refuse(opt, rc, "candidate %zu was already told", i);
}

int bosch_tell(bosch_optimizer *opt, size_t i, double score)
{
    if (!opt)
        return BOSCH_E_INVALID;
    int rc = session_tell_one(opt, i, score, session_now() - opt->batch_t0);
    if (rc < 0)
        return refuse_tell(opt, i, rc, score);
    if (opt->ntold == opt->npend)
        return session_complete_batch(opt);
    return BOSCH_OK;
}

int bosch_tell_failure(bosch_optimizer *opt, size_t i, int host_status)
{
    if (!opt)
        return BOSCH_E_INVALID;
    int rc = tell_check(opt, i);
    if (rc < 0)
        return refuse_tell(opt, i, rc, 0.0);
    opt->host_status = host_status;
    return session_fail(opt, BOSCH_E_EVALUATOR, "evaluator failed on candidate %zu with status %d",
                        i, host_status);
}
