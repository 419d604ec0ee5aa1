/*
 * Optimizer tests: evaluator failures and bad scores, force stop (from the
 * evaluator and from another thread), the time limit, the progress and log
 * callbacks.
 */
#include <pthread.h>
#include <time.h>

#include "support/support.h"
#include "support/recorder.h"

/* ------------------------------------------------------------------------ */
/* Failure paths                                                             */
/* ------------------------------------------------------------------------ */
START_TEST(evaluator_failure)
{
    static const long after[] = {0, 1, 10, 150};
    bosch_testbed *tb = make_testbed(6, 4, 4, 0.5, 0.0);
    bosch_problem *p = make_problem(6, 4, 12);
    for (size_t k = 0; k < sizeof after / sizeof after[0]; k++) {
        for (int be = 0; be < 2; be++) {
            rec r;
            rec_init(&r, tb);
            r.fail_after = after[k];
            r.fail_code = 42;
            bosch_optimizer *opt = make_opt(p, 1, 300);
            if (be)
                ck_assert_int_eq(bosch_set_batch_evaluator(opt, rec_batch_eval, &r), BOSCH_OK);
            else
                ck_assert_int_eq(bosch_set_evaluator(opt, rec_eval, &r), BOSCH_OK);
            ck_assert_int_eq(bosch_optimize(opt), BOSCH_E_EVALUATOR);
            ck_assert_int_eq(bosch_evaluator_status(opt), 42);
            ck_assert_msg(bosch_optimizer_last_error(opt)[0] != '\0', "no last_error");
            bosch_result *res = get_result(opt);
            ck_assert_int_eq(bosch_result_status(res), BOSCH_E_EVALUATOR);
            if (!be) {
                /* Single evaluator: every successful call is in the history. */
                ck_assert_msg(bosch_result_history_size(res) == (size_t)after[k],
                              "fail after %ld: history %zu", after[k],
                              bosch_result_history_size(res));
                ck_assert_uint_eq(bosch_result_evaluations(res, -1), (uint64_t)after[k]);
            } else {
                ck_assert_uint_le(bosch_result_history_size(res), (size_t)after[k]);
            }
            if (after[k] == 150) {
                /* Best so far kept. */
                ck_assert(bosch_result_feasible(res));
                ck_assert_double_eq(bosch_result_score(res), best_feasible_in_history(res, p));
                check_final_mask(res, p);
            }
            if (after[k] == 0) {
                ck_assert_int_eq(bosch_result_feasible(res), 0);
                ck_assert(isnan(bosch_result_score(res)));
            }
            /* The run is over: asking again keeps reporting the error. */
            size_t n = 5;
            ck_assert_int_lt(bosch_ask(opt, &n), 0);
            bosch_result_free(res);
            bosch_optimizer_free(opt);
            rec_free(&r);
        }
    }
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

START_TEST(bad_score)
{
    const double bad[] = {NAN, INFINITY, -INFINITY};
    bosch_testbed *tb = make_testbed(6, 4, 4, 0.5, 0.0);
    bosch_problem *p = make_problem(6, 4, 12);
    for (size_t k = 0; k < 3; k++) {
        for (long at = 0; at <= 100; at += 100) {
            rec r;
            rec_init(&r, tb);
            r.nan_after = at;
            r.bad_value = bad[k];
            bosch_optimizer *opt = make_opt(p, 1, 300);
            ck_assert_int_eq(bosch_set_evaluator(opt, rec_eval, &r), BOSCH_OK);
            ck_assert_int_eq(bosch_optimize(opt), BOSCH_E_BAD_SCORE);
            bosch_result *res = get_result(opt);
            ck_assert_int_eq(bosch_result_status(res), BOSCH_E_BAD_SCORE);
            ck_assert_uint_eq(bosch_result_history_size(res), (size_t)at);
            if (at == 100) {
                ck_assert(bosch_result_feasible(res));
                ck_assert_double_eq(bosch_result_score(res), best_feasible_in_history(res, p));
            }
            bosch_result_free(res);
            bosch_optimizer_free(opt);
            rec_free(&r);
        }
    }
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Force stop, time limit                                                    */
/* ------------------------------------------------------------------------ */
START_TEST(force_stop_in_evaluator)
{
    bosch_testbed *tb = make_testbed(8, 8, 21, 0.3, 0.0);
    bosch_problem *p = make_problem(8, 8, 32);
    for (int be = 0; be < 2; be++) {
        rec r;
        rec_init(&r, tb);
        bosch_optimizer *opt = make_opt(p, 0, 300);
        r.opt = opt;
        r.stop_after = 60;
        if (be)
            ck_assert_int_eq(bosch_set_batch_evaluator(opt, rec_batch_eval, &r), BOSCH_OK);
        else
            ck_assert_int_eq(bosch_set_evaluator(opt, rec_eval, &r), BOSCH_OK);
        ck_assert_int_eq(bosch_optimize(opt), BOSCH_FORCED_STOP);
        bosch_result *res = get_result(opt);
        ck_assert_int_eq(bosch_result_status(res), BOSCH_FORCED_STOP);
        uint64_t ev = bosch_result_evaluations(res, -1);
        ck_assert_uint_ge(ev, 60);
        ck_assert_uint_le(ev, 60 + 8); /* at most the rest of the batch in progress */
        ck_assert_uint_eq(ev, r.calls);
        ck_assert_uint_eq(bosch_result_history_size(res), ev);
        if (bosch_result_feasible(res))
            ck_assert_double_eq(bosch_result_score(res), best_feasible_in_history(res, p));
        bosch_result_free(res);
        bosch_optimizer_free(opt);
        rec_free(&r);
    }
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

/* bosch_force_stop() from another thread while bosch_optimize() runs. */
START_TEST(force_stop_from_thread)
{
    bosch_testbed *tb = make_testbed(8, 8, 21, 0.3, 0.0);
    bosch_problem *p = make_problem(8, 8, 32);
    rec r;
    rec_init(&r, tb);
    r.sleep_us = 1000;
    bosch_optimizer *opt = make_opt(p, 0, 100000);
    ck_assert_int_eq(bosch_set_evaluator(opt, rec_eval, &r), BOSCH_OK);
    stopper s = {opt, 30000, NULL, 0};
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, stop_thread, &s), 0);
    int st = bosch_optimize(opt);
    pthread_join(th, NULL);
    ck_assert_int_eq(st, BOSCH_FORCED_STOP);
    bosch_result *res = get_result(opt);
    ck_assert_int_eq(bosch_result_status(res), BOSCH_FORCED_STOP);
    ck_assert_uint_gt(bosch_result_evaluations(res, -1), 0);
    ck_assert_uint_lt(bosch_result_evaluations(res, -1), 5000);
    ck_assert_uint_eq(bosch_result_history_size(res), r.calls);
    bosch_result_free(res);
    bosch_optimizer_free(opt);
    rec_free(&r);
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Progress and log callbacks                                               */
/* ------------------------------------------------------------------------ */

typedef struct {
    bosch_optimizer *opt;
    size_t calls;
    uint64_t last_evals;
    int last_stage;
    uint64_t budget;
    uint32_t layers;
    int stop_at_group;
    double last_elapsed;
    int bad;
    uint32_t groups;
    size_t masks_seen; /* events with a working mask */
    size_t best_seen;  /* events with a best mask */
} prog;

static void progress_cb(const bosch_progress *pr, void *user)
{
    prog *g = user;
    g->calls++;
    int st = bosch_progress_stage(pr);
    uint64_t ev = bosch_progress_evaluations(pr);
    if (st < 0 || st >= BOSCH_STAGE_COUNT)
        g->bad |= 1;
    if (st < g->last_stage)
        g->bad |= 2; /* stages of the full variant run in order */
    if (ev < g->last_evals || ev > g->budget)
        g->bad |= 4;
    if (bosch_progress_budget(pr) != g->budget)
        g->bad |= 8;
    if (bosch_progress_layers(pr) != g->layers)
        g->bad |= 16;
    double ratios[16];
    if (bosch_progress_layer_ratios(pr, ratios, g->layers) != BOSCH_OK)
        g->bad |= 32;
    else
        for (uint32_t l = 0; l < g->layers; l++)
            if (!(ratios[l] >= 0.0 && ratios[l] <= 1.0))
                g->bad |= 64;
    double e = bosch_progress_elapsed(pr);
    if (!(e >= 0.0) || e < g->last_elapsed)
        g->bad |= 128;
    double b = bosch_progress_best_score(pr);
    if (!isnan(b) && !isfinite(b))
        g->bad |= 256;
    /* The working mask: its per-layer shares are the layer ratios; other
     * unit counts and NULL are refused. */
    uint8_t w[64];
    const size_t units = (size_t)g->layers * g->groups;
    int ws = bosch_progress_working_mask(pr, w, units);
    if (ws == BOSCH_OK) {
        g->masks_seen++;
        for (uint32_t l = 0; l < g->layers; l++) {
            uint32_t c = 0;
            for (uint32_t k = 0; k < g->groups; k++)
                c += w[l * g->groups + k] == 1;
            if (ratios[l] != (double)c / g->groups)
                g->bad |= 512;
        }
    } else if (ws != BOSCH_E_STATE) {
        g->bad |= 1024;
    }
    /* The best mask: feasible (the problem's 12 SWA units) once the best
     * score exists, E_STATE before. */
    int bs = bosch_progress_best_mask(pr, w, units);
    if (bs == BOSCH_OK) {
        size_t swa = 0;
        for (size_t u = 0; u < units; u++)
            swa += w[u];
        if (swa != 12 || isnan(b))
            g->bad |= 4096;
        g->best_seen++;
    } else if (bs != BOSCH_E_STATE || !isnan(b)) {
        g->bad |= 8192;
    }
    if (bosch_progress_best_mask(pr, w, units - 1) != BOSCH_E_INVALID ||
        bosch_progress_working_mask(pr, w, units + 1) != BOSCH_E_INVALID ||
        bosch_progress_working_mask(pr, NULL, units) != BOSCH_E_INVALID)
        g->bad |= 2048;
    g->last_elapsed = e;
    g->last_stage = st;
    g->last_evals = ev;
    if (g->stop_at_group && st == BOSCH_STAGE_GROUP)
        bosch_force_stop(g->opt);
}

START_TEST(progress_callback)
{
    bosch_testbed *tb = make_testbed(6, 4, 4, 0.5, 0.0);
    bosch_problem *p = make_problem(6, 4, 12);
    for (int stop = 0; stop < 2; stop++) {
        bosch_optimizer *opt = make_opt(p, 2, 200);
        prog g = {opt, 0, 0, 0, 200, 6, stop, 0.0, 0, 4, 0, 0};
        ck_assert_int_eq(bosch_set_progress(opt, progress_cb, &g), BOSCH_OK);
        ck_assert_int_eq(bosch_set_evaluator(opt, bosch_testbed_eval, tb), BOSCH_OK);
        int st = bosch_optimize(opt);
        bosch_result *res = get_result(opt);
        ck_assert_msg(g.bad == 0, "progress inconsistencies: flags %d", g.bad);
        ck_assert_uint_gt(g.calls, 0);
        ck_assert_uint_gt(g.masks_seen, 0);
        ck_assert_uint_gt(g.best_seen, 0);
        if (stop) {
            ck_assert_int_eq(st, BOSCH_FORCED_STOP);
            ck_assert_uint_lt(bosch_result_evaluations(res, -1), 200);
        } else {
            ck_assert_int_gt(st, 0);
            ck_assert_int_eq(g.last_stage, BOSCH_STAGE_GROUP);
            /* The last progress event follows the last batch. */
            ck_assert_uint_eq(g.last_evals, bosch_result_evaluations(res, -1));
        }
        bosch_result_free(res);
        bosch_optimizer_free(opt);
    }
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

typedef struct {
    size_t n;
    int min_seen;
    int bad_msg;
} logrec;

static void log_cb(int level, const char *msg, void *user)
{
    logrec *l = user;
    l->n++;
    if (level < l->min_seen)
        l->min_seen = level;
    if (msg == NULL || level < BOSCH_LOG_DEBUG || level > BOSCH_LOG_ERROR)
        l->bad_msg = 1;
}

START_TEST(log_callback_levels)
{
    bosch_testbed *tb = make_testbed(4, 4, 4, 0.5, 0.0);
    bosch_problem *p = make_problem(4, 4, 8);
    bosch_optimizer *opt = make_opt(p, 2, 100);
    logrec l = {0, 100, 0};
    ck_assert_int_eq(bosch_set_log(opt, log_cb, &l, BOSCH_LOG_WARN), BOSCH_OK);
    ck_assert_int_eq(bosch_set_evaluator(opt, bosch_testbed_eval, tb), BOSCH_OK);
    ck_assert_int_gt(bosch_optimize(opt), 0);
    ck_assert_int_eq(l.bad_msg, 0);
    if (l.n)
        ck_assert_int_ge(l.min_seen, BOSCH_LOG_WARN);
    bosch_optimizer_free(opt);
    /* At DEBUG level too, only valid levels and messages. */
    opt = make_opt(p, 2, 100);
    logrec l2 = {0, 100, 0};
    ck_assert_int_eq(bosch_set_log(opt, log_cb, &l2, BOSCH_LOG_DEBUG), BOSCH_OK);
    ck_assert_int_eq(bosch_set_evaluator(opt, bosch_testbed_eval, tb), BOSCH_OK);
    ck_assert_int_gt(bosch_optimize(opt), 0);
    ck_assert_int_eq(l2.bad_msg, 0);
    if (l2.n)
        ck_assert_int_ge(l2.min_seen, BOSCH_LOG_DEBUG);
    bosch_optimizer_free(opt);
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Time limit                                                               */
/* ------------------------------------------------------------------------ */

START_TEST(time_limit)
{
    bosch_testbed *tb = make_testbed(8, 8, 21, 0.3, 0.0);
    bosch_problem *p = make_problem(8, 8, 32);
    rec r;
    rec_init(&r, tb);
    r.sleep_us = 2000;
    bosch_optimizer *opt = make_opt(p, 0, 100000);
    ck_assert_int_eq(bosch_set_time_limit(opt, 0.05), BOSCH_OK);
    ck_assert_int_eq(bosch_set_evaluator(opt, rec_eval, &r), BOSCH_OK);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ck_assert_int_eq(bosch_optimize(opt), BOSCH_TIME_REACHED);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double dt = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    ck_assert_msg(dt < 3.0, "time limit 0.05 s but the run took %.2f s", dt);
    bosch_result *res = get_result(opt);
    ck_assert_int_eq(bosch_result_status(res), BOSCH_TIME_REACHED);
    ck_assert_uint_lt(bosch_result_evaluations(res, -1), 1000);
    ck_assert_uint_ge(bosch_result_evaluations(res, -1), 1);
    bosch_result_free(res);
    bosch_optimizer_free(opt);
    rec_free(&r);
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

static Suite *callbacks_suite(void)
{
    Suite *s = suite_create("callbacks");
    TCase *tc = tcase_new(s, "failures");
    tcase_add_test(tc, evaluator_failure);
    tcase_add_test(tc, bad_score);
    tc = tcase_new(s, "stop");
    tcase_add_test(tc, force_stop_in_evaluator);
    tcase_add_test(tc, force_stop_from_thread);
    tcase_add_test(tc, time_limit);
    tc = tcase_new(s, "callbacks");
    tcase_add_test(tc, progress_callback);
    tcase_add_test(tc, log_callback_levels);
    return s;
}

int main(void)
{
    return run_suite(callbacks_suite());
}
