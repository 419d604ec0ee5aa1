/*
 * Optimizer tests: callbacks and ask/tell, anchors, exact budget, determinism,
 * the evaluation cache, failure paths, force stop, time limit, variants,
 * progress/log callbacks, result accessors and the JSONL history.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include <json.h>

#include "common.h"

/* ------------------------------------------------------------------------ */
/* A recording evaluator around the testbed                                  */
/* ------------------------------------------------------------------------ */
typedef struct {
    bosch_testbed *tb;
    size_t units;
    mset seen;
    size_t calls;     /* successful evaluations */
    size_t dup;       /* masks evaluated more than once */
    size_t nonbinary; /* masks with bytes other than 0/1 */
    long fail_after;  /* return fail_code when `calls` reaches this (-1: never) */
    int fail_code;
    long nan_after; /* write a NaN (or bad_value) score when `calls` reaches this */
    double bad_value;
    long stop_after; /* bosch_force_stop() once `calls` reaches this */
    bosch_optimizer *opt;
    long sleep_us;
    int mode; /* 0 testbed, 1 constant 0.5, 2 count of SWA units (allSWA best) */
    size_t batch_calls, max_batch;
} rec;

static void rec_init(rec *r, bosch_testbed *tb)
{
    memset(r, 0, sizeof *r);
    r->tb = tb;
    r->units = bosch_testbed_units(tb);
    mset_init(&r->seen, r->units);
    r->fail_after = r->nan_after = r->stop_after = -1;
    r->bad_value = NAN;
}

static void rec_free(rec *r)
{
    mset_free(&r->seen);
}

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static int rec_eval(const uint8_t *mask, size_t units, double *score, void *user)
{
    rec *r = user;
    ck_assert_uint_eq(units, r->units);
    if (r->fail_after >= 0 && (long)r->calls == r->fail_after)
        return r->fail_code;
    if (r->nan_after >= 0 && (long)r->calls == r->nan_after) {
        *score = r->bad_value;
        return 0;
    }
    if (!mask_is_binary(mask, units))
        r->nonbinary++;
    double s;
    if (r->mode == 1)
        s = 0.5;
    else if (r->mode == 2)
        s = (double)mask_ones(mask, units);
    else
        s = tb_score(r->tb, mask);
    if (!mset_add(&r->seen, mask, s))
        r->dup++;
    r->calls++;
    if (r->stop_after >= 0 && (long)r->calls == r->stop_after)
        bosch_force_stop(r->opt);
    if (r->sleep_us > 0)
        sleep_us(r->sleep_us);
    *score = s;
    return 0;
}

static int rec_batch_eval(const uint8_t *masks, size_t n, size_t units, double *scores, void *user)
{
    rec *r = user;
    ck_assert_uint_gt(n, 0);
    r->batch_calls++;
    if (n > r->max_batch)
        r->max_batch = n;
    for (size_t i = 0; i < n; i++) {
        int rc = rec_eval(masks + i * units, units, &scores[i], user);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Setup helpers                                                             */
/* ------------------------------------------------------------------------ */
static bosch_problem *make_problem(uint32_t L, uint32_t G, size_t T)
{
    bosch_problem *p = bosch_problem_create(L, G, 1);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(bosch_problem_set_target_units(p, T), BOSCH_OK);
    return p;
}

static bosch_optimizer *make_opt(const bosch_problem *p, uint64_t seed, uint64_t budget)
{
    bosch_optimizer *opt = bosch_create(p);
    ck_assert_ptr_nonnull(opt);
    ck_assert_int_eq(bosch_set_seed(opt, seed), BOSCH_OK);
    ck_assert_int_eq(bosch_set_budget(opt, budget), BOSCH_OK);
    return opt;
}

static bosch_result *get_result(const bosch_optimizer *opt)
{
    bosch_result *r = NULL;
    ck_assert_int_eq(bosch_get_result(opt, &r), BOSCH_OK);
    ck_assert_ptr_nonnull(r);
    return r;
}

/* Full run in callback mode (single evaluator) on a testbed; returns the result. */
static double g_spread = -1.0; /* ratio_spread for run_callback (< 0: default) */

static bosch_result *run_callback(const bosch_problem *p, bosch_testbed *tb, uint64_t seed,
                                  uint64_t budget, int batch_eval, int *status, rec *out_rec)
{
    rec r;
    rec_init(&r, tb);
    bosch_optimizer *opt = make_opt(p, seed, budget);
    if (g_spread >= 0)
        ck_assert_int_eq(bosch_set_ratio_spread(opt, g_spread), BOSCH_OK);
    r.opt = opt;
    if (batch_eval)
        ck_assert_int_eq(bosch_set_batch_evaluator(opt, rec_batch_eval, &r), BOSCH_OK);
    else
        ck_assert_int_eq(bosch_set_evaluator(opt, rec_eval, &r), BOSCH_OK);
    int st = bosch_optimize(opt);
    if (status)
        *status = st;
    bosch_result *res = get_result(opt);
    ck_assert_uint_eq(r.dup, 0);
    ck_assert_uint_eq(r.nonbinary, 0);
    ck_assert_uint_eq(r.calls, bosch_result_evaluations(res, -1));
    if (out_rec) {
        *out_rec = r;
    } else {
        rec_free(&r);
    }
    bosch_destroy(opt);
    return res;
}

/* Drives an optimizer by ask/tell; order 0 = forward, 1 = reverse. */
static int drive_asktell(bosch_optimizer *opt, rec *r, int order, size_t *batches,
                         uint64_t *asked)
{
    uint8_t *m = malloc(r->units);
    ck_assert_ptr_nonnull(m);
    size_t nb = 0;
    uint64_t total = 0;
    int rc;
    for (;;) {
        size_t n = 0;
        rc = bosch_ask(opt, &n);
        if (rc != BOSCH_OK) {
            if (rc > 0)
                ck_assert_uint_eq(n, 0);
            break;
        }
        ck_assert_uint_gt(n, 0);
        int st = bosch_candidate_stage(opt);
        ck_assert_int_ge(st, 0);
        ck_assert_int_lt(st, BOSCH_STAGE_COUNT);
        nb++;
        total += n;
        for (size_t k = 0; k < n; k++) {
            size_t i = order ? n - 1 - k : k;
            double s;
            ck_assert_int_eq(bosch_candidate(opt, i, m), BOSCH_OK);
            ck_assert_int_eq(rec_eval(m, r->units, &s, r), 0);
            ck_assert_int_eq(bosch_tell(opt, i, s), BOSCH_OK);
        }
    }
    free(m);
    if (batches)
        *batches = nb;
    if (asked)
        *asked = total;
    return rc;
}

static void history_entry(const bosch_result *r, size_t i, uint8_t *mask, double *score,
                          int *stage)
{
    ck_assert_int_eq(bosch_result_history_entry(r, i, mask, score, stage), BOSCH_OK);
}

/* Same best mask, scores, counts; histories equal in order (strict) or as sets. */
static void assert_same_result(const bosch_result *a, const bosch_result *b, int strict_order)
{
    size_t U = bosch_result_units(a);
    ck_assert_uint_eq(U, bosch_result_units(b));
    uint8_t *ma = malloc(U), *mb = malloc(U);
    ck_assert(ma && mb);
    ck_assert_int_eq(bosch_result_status(a), bosch_result_status(b));
    ck_assert_int_eq(bosch_result_feasible(a), bosch_result_feasible(b));
    ck_assert_int_eq(bosch_result_mask(a, ma, U), BOSCH_OK);
    ck_assert_int_eq(bosch_result_mask(b, mb, U), BOSCH_OK);
    ck_assert_mem_eq(ma, mb, U);
    ck_assert_double_eq(bosch_result_score(a), bosch_result_score(b));
    ck_assert_double_eq(bosch_result_objective(a), bosch_result_objective(b));
    for (int st = -1; st < BOSCH_STAGE_COUNT; st++)
        ck_assert_uint_eq(bosch_result_evaluations(a, st), bosch_result_evaluations(b, st));
    size_t n = bosch_result_history_size(a);
    ck_assert_uint_eq(n, bosch_result_history_size(b));
    if (strict_order) {
        for (size_t i = 0; i < n; i++) {
            double sa, sb;
            int ta, tbs;
            history_entry(a, i, ma, &sa, &ta);
            history_entry(b, i, mb, &sb, &tbs);
            ck_assert_msg(memcmp(ma, mb, U) == 0, "history %zu: masks differ", i);
            ck_assert_double_eq(sa, sb);
            ck_assert_int_eq(ta, tbs);
        }
    } else {
        mset sa;
        mset_init(&sa, U);
        for (size_t i = 0; i < n; i++) {
            double s;
            history_entry(a, i, ma, &s, NULL);
            mset_add(&sa, ma, s);
        }
        for (size_t i = 0; i < n; i++) {
            double s, s0;
            history_entry(b, i, mb, &s, NULL);
            ck_assert_msg(mset_find(&sa, mb, &s0), "history %zu of b missing in a", i);
            ck_assert_double_eq(s, s0);
        }
        mset_free(&sa);
    }
    free(ma);
    free(mb);
}

static int histories_equal(const bosch_result *a, const bosch_result *b)
{
    size_t U = bosch_result_units(a), n = bosch_result_history_size(a);
    if (n != bosch_result_history_size(b))
        return 0;
    uint8_t *ma = malloc(U), *mb = malloc(U);
    int eq = 1;
    for (size_t i = 0; i < n && eq; i++) {
        history_entry(a, i, ma, NULL, NULL);
        history_entry(b, i, mb, NULL, NULL);
        eq = memcmp(ma, mb, U) == 0;
    }
    free(ma);
    free(mb);
    return eq;
}

/* The best feasible score in the history (NaN if none). */
static double best_feasible_in_history(const bosch_result *r, const bosch_problem *p)
{
    size_t U = bosch_result_units(r);
    uint8_t *m = malloc(U);
    double best = NAN;
    for (size_t i = 0; i < bosch_result_history_size(r); i++) {
        double s;
        history_entry(r, i, m, &s, NULL);
        if (bosch_mask_is_feasible(p, m) && (isnan(best) || s > best))
            best = s;
    }
    free(m);
    return best;
}

static void check_final_mask(const bosch_result *r, const bosch_problem *p)
{
    size_t U = bosch_problem_units(p);
    uint8_t *m = malloc(U);
    ck_assert(bosch_result_feasible(r));
    ck_assert_int_eq(bosch_result_mask(r, m, U), BOSCH_OK);
    ck_assert(mask_is_binary(m, U));
    ck_assert_uint_eq(mask_ones(m, U), bosch_problem_target_units(p));
    ck_assert(own_feasible(p, m, NULL, NULL));
    ck_assert(bosch_mask_is_feasible(p, m));
    free(m);
}

/* ------------------------------------------------------------------------ */
/* Cache, budget                                                             */
/* ------------------------------------------------------------------------ */
START_TEST(cache_never_reevaluates)
{
    bosch_testbed *tb = make_testbed(8, 8, 11, 0.5, 0.01);
    bosch_problem *p = make_problem(8, 8, 32);
    for (int variant = 0; variant < 4; variant++) {
        rec r;
        rec_init(&r, tb);
        bosch_optimizer *opt = make_opt(p, 3, 300);
        ck_assert_int_eq(bosch_set_variant(opt, variant), BOSCH_OK);
        ck_assert_int_eq(bosch_set_evaluator(opt, rec_eval, &r), BOSCH_OK);
        int st = bosch_optimize(opt);
        ck_assert_msg(st > 0, "variant %d: optimize -> %s", variant, bosch_err_name(st));
        bosch_result *res = get_result(opt);
        ck_assert_msg(r.dup == 0, "variant %d: %zu masks evaluated twice", variant, r.dup);
        ck_assert_uint_eq(r.nonbinary, 0);
        ck_assert_uint_eq(r.calls, bosch_result_evaluations(res, -1));
        ck_assert_uint_eq(r.calls, bosch_result_history_size(res));
        uint64_t sum = 0;
        for (int s = 0; s < BOSCH_STAGE_COUNT; s++)
            sum += bosch_result_evaluations(res, s);
        ck_assert_uint_eq(sum, r.calls);
        bosch_result_free(res);
        bosch_destroy(opt);
        rec_free(&r);
    }
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

/* A small space (C(12,6) = 924 masks) and a large budget: the search must
 * revisit candidates and the cache must absorb all of them. */
START_TEST(cache_small_space)
{
    bosch_testbed *tb = make_testbed(3, 4, 5, 1.0, 0.0);
    bosch_problem *p = make_problem(3, 4, 6);
    for (int be = 0; be < 2; be++) {
        int st;
        rec r;
        bosch_result *res = run_callback(p, tb, 1, 2000, be, &st, &r);
        ck_assert_msg(st > 0, "optimize -> %s", bosch_err_name(st));
        ck_assert_uint_eq(r.dup, 0);
        /* At most: the feasible masks, the two anchors and the 3 x C(4,2)
         * stage-1 cascade masks. */
        ck_assert_uint_le(r.calls, 924 + 2 + 18);
        check_final_mask(res, p);
        if (be) {
            ck_assert_uint_gt(r.batch_calls, 0);
            ck_assert_uint_le(r.max_batch, 8); /* default batch size */
        }
        rec_free(&r);
        bosch_result_free(res);
    }
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

START_TEST(exact_budget_big_problem)
{
    bosch_testbed *tb = make_testbed(8, 8, 21, 0.3, 0.0);
    bosch_problem *p = make_problem(8, 8, 32);
    ck_assert_int_eq(bosch_problem_fix_unit(p, 0, 0, BOSCH_FIX_FULL), BOSCH_OK);
    ck_assert_int_eq(bosch_problem_fix_unit(p, 3, 5, BOSCH_FIX_SWA), BOSCH_OK);
    ck_assert_int_eq(bosch_problem_fix_unit(p, 7, 7, BOSCH_FIX_SWA), BOSCH_OK);
    /* Default ratio spread, and uniform ratios (spread 0), several seeds. */
    const double spreads[2] = {-1.0, 0.0};
    for (int k = 0; k < 2; k++)
        for (uint64_t seed = 0; seed < 3; seed++) {
            int st;
            g_spread = spreads[k];
            bosch_result *res = run_callback(p, tb, seed, 300, 0, &st, NULL);
            g_spread = -1.0;
            ck_assert_msg(st == BOSCH_BUDGET_REACHED || st == BOSCH_DONE, "status %s",
                          bosch_err_name(st));
            ck_assert_int_eq(bosch_result_status(res), st);
            ck_assert_msg(bosch_result_evaluations(res, -1) == 300,
                          "spread %g seed %lu: %lu of 300 evaluations used (%s)", spreads[k],
                          (unsigned long)seed, (unsigned long)bosch_result_evaluations(res, -1),
                          bosch_err_name(st));
            check_final_mask(res, p);
            uint8_t m[64];
            ck_assert_int_eq(bosch_result_mask(res, m, 64), BOSCH_OK);
            ck_assert_uint_eq(m[0], 0);
            ck_assert_uint_eq(m[3 * 8 + 5], 1);
            ck_assert_uint_eq(m[63], 1);
            bosch_result_free(res);
        }
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

START_TEST(budget_never_exceeded)
{
    static const uint64_t budgets[] = {2, 3, 7, 20, 60, 150};
    bosch_testbed *tb = make_testbed(4, 4, 2, 0.5, 0.0);
    bosch_problem *p = make_problem(4, 4, 8);
    for (size_t i = 0; i < sizeof budgets / sizeof budgets[0]; i++) {
        for (int be = 0; be < 2; be++) {
            int st;
            bosch_result *res = run_callback(p, tb, 5, budgets[i], be, &st, NULL);
            ck_assert_msg(st > 0, "budget %lu: %s", (unsigned long)budgets[i], bosch_err_name(st));
            ck_assert_msg(bosch_result_evaluations(res, -1) <= budgets[i],
                          "budget %lu: used %lu", (unsigned long)budgets[i],
                          (unsigned long)bosch_result_evaluations(res, -1));
            if (budgets[i] <= 3)
                ck_assert_int_eq(st, BOSCH_BUDGET_REACHED);
            if (budgets[i] == 2) {
                uint8_t m[16];
                int stage;
                ck_assert_uint_eq(bosch_result_history_size(res), 2);
                history_entry(res, 0, m, NULL, &stage);
                ck_assert_int_eq(stage, BOSCH_STAGE_ANCHORS);
                ck_assert_uint_eq(mask_ones(m, 16), 0);
                history_entry(res, 1, m, NULL, &stage);
                ck_assert_int_eq(stage, BOSCH_STAGE_ANCHORS);
                ck_assert_uint_eq(mask_ones(m, 16), 16);
            }
            bosch_result_free(res);
        }
    }
    /* Budget 1 cannot cover the two anchors: an error, or a stop after at
     * most one evaluation; never more. */
    for (int be = 0; be < 2; be++) {
        rec r;
        rec_init(&r, tb);
        bosch_optimizer *opt = make_opt(p, 5, 1);
        if (be)
            ck_assert_int_eq(bosch_set_batch_evaluator(opt, rec_batch_eval, &r), BOSCH_OK);
        else
            ck_assert_int_eq(bosch_set_evaluator(opt, rec_eval, &r), BOSCH_OK);
        int st = bosch_optimize(opt);
        ck_assert_msg(st != BOSCH_DONE, "budget 1 -> %s", bosch_err_name(st));
        ck_assert_uint_le(r.calls, 1);
        bosch_destroy(opt);
        rec_free(&r);
    }
    /* With supplied anchors a budget of 1 is a valid run. */
    bosch_optimizer *opt = make_opt(p, 5, 1);
    rec r;
    rec_init(&r, tb);
    ck_assert_int_eq(bosch_set_anchors(opt, 1.0, 0.01), BOSCH_OK);
    ck_assert_int_eq(bosch_set_evaluator(opt, rec_eval, &r), BOSCH_OK);
    ck_assert_int_eq(bosch_optimize(opt), BOSCH_BUDGET_REACHED);
    ck_assert_uint_eq(r.calls, 1);
    bosch_destroy(opt);
    rec_free(&r);
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

/* ask/tell never hands out more candidates than the budget allows. */
START_TEST(budget_asktell)
{
    bosch_testbed *tb = make_testbed(8, 8, 21, 0.3, 0.0);
    bosch_problem *p = make_problem(8, 8, 32);
    rec r;
    rec_init(&r, tb);
    bosch_optimizer *opt = make_opt(p, 0, 123);
    ck_assert_int_eq(bosch_set_batch_size(opt, 16), BOSCH_OK);
    uint64_t asked = 0;
    int st = drive_asktell(opt, &r, 0, NULL, &asked);
    ck_assert_msg(st > 0, "%s", bosch_err_name(st));
    ck_assert_uint_eq(asked, 123);
    ck_assert_uint_eq(r.calls, 123);
    ck_assert_uint_eq(r.dup, 0);
    bosch_destroy(opt);
    rec_free(&r);
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Determinism and equivalence of the driving modes                          */
/* ------------------------------------------------------------------------ */
START_TEST(same_seed_same_result)
{
    bosch_testbed *tb = make_testbed(6, 4, 9, 0.5, 0.02);
    bosch_problem *p = make_problem(6, 4, 12);
    bosch_result *a = run_callback(p, tb, 7, 200, 0, NULL, NULL);
    bosch_result *b = run_callback(p, tb, 7, 200, 0, NULL, NULL);
    assert_same_result(a, b, 1);
    int differs = 0;
    for (uint64_t seed = 8; seed < 12 && !differs; seed++) {
        bosch_result *c = run_callback(p, tb, seed, 200, 0, NULL, NULL);
        differs = !histories_equal(a, c);
        bosch_result_free(c);
    }
    ck_assert_msg(differs, "the seed has no effect on the search");
    bosch_result_free(a);
    bosch_result_free(b);
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

START_TEST(callback_equals_asktell)
{
    bosch_testbed *tb = make_testbed(6, 4, 9, 0.5, 0.02);
    bosch_problem *p = make_problem(6, 4, 12);
    for (int order = 0; order < 2; order++) {
        bosch_result *a = run_callback(p, tb, 4, 250, 0, NULL, NULL);
        rec r;
        rec_init(&r, tb);
        bosch_optimizer *opt = make_opt(p, 4, 250);
        int st = drive_asktell(opt, &r, order, NULL, NULL);
        ck_assert_int_eq(st, bosch_result_status(a));
        ck_assert_uint_eq(r.dup, 0);
        bosch_result *b = get_result(opt);
        /* In forward order the evaluation order is the same too. */
        assert_same_result(a, b, 1);
        bosch_result_free(a);
        bosch_result_free(b);
        bosch_destroy(opt);
        rec_free(&r);
    }
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

START_TEST(single_equals_batch_evaluator)
{
    bosch_testbed *tb = make_testbed(6, 4, 9, 0.5, 0.02);
    bosch_problem *p = make_problem(6, 4, 12);
    bosch_result *a = run_callback(p, tb, 4, 250, 0, NULL, NULL);
    bosch_result *b = run_callback(p, tb, 4, 250, 1, NULL, NULL);
    assert_same_result(a, b, 1);
    bosch_result_free(a);
    bosch_result_free(b);
    /* The library's own testbed evaluators give the same result as well. */
    bosch_optimizer *o1 = make_opt(p, 4, 250), *o2 = make_opt(p, 4, 250);
    ck_assert_int_eq(bosch_set_evaluator(o1, bosch_testbed_eval, tb), BOSCH_OK);
    ck_assert_int_eq(bosch_set_batch_evaluator(o2, bosch_testbed_batch_eval, tb), BOSCH_OK);
    ck_assert_int_gt(bosch_optimize(o1), 0);
    ck_assert_int_gt(bosch_optimize(o2), 0);
    a = get_result(o1);
    b = get_result(o2);
    assert_same_result(a, b, 1);
    bosch_result_free(a);
    bosch_result_free(b);
    bosch_destroy(o1);
    bosch_destroy(o2);
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

/* Setting one kind of evaluator replaces the other. */
static int never_eval(const uint8_t *mask, size_t units, double *score, void *user)
{
    (void)mask;
    (void)units;
    (void)score;
    (void)user;
    ck_abort_msg("replaced evaluator was called");
    return 1;
}

static int never_batch_eval(const uint8_t *masks, size_t n, size_t units, double *scores,
                            void *user)
{
    (void)masks;
    (void)n;
    (void)units;
    (void)scores;
    (void)user;
    ck_abort_msg("replaced batch evaluator was called");
    return 1;
}

START_TEST(evaluator_replacement)
{
    bosch_testbed *tb = make_testbed(3, 4, 1, 0.0, 0.0);
    bosch_problem *p = make_problem(3, 4, 6);
    bosch_optimizer *opt = make_opt(p, 0, 40);
    ck_assert_int_eq(bosch_set_batch_evaluator(opt, never_batch_eval, NULL), BOSCH_OK);
    ck_assert_int_eq(bosch_set_evaluator(opt, bosch_testbed_eval, tb), BOSCH_OK);
    ck_assert_int_gt(bosch_optimize(opt), 0);
    bosch_destroy(opt);
    opt = make_opt(p, 0, 40);
    ck_assert_int_eq(bosch_set_evaluator(opt, never_eval, NULL), BOSCH_OK);
    ck_assert_int_eq(bosch_set_batch_evaluator(opt, bosch_testbed_batch_eval, tb), BOSCH_OK);
    ck_assert_int_gt(bosch_optimize(opt), 0);
    bosch_destroy(opt);
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Anchors                                                                   */
/* ------------------------------------------------------------------------ */
START_TEST(anchors_first)
{
    bosch_testbed *tb = make_testbed(4, 4, 3, 0.0, 0.0);
    bosch_problem *p = make_problem(4, 4, 8);
    bosch_result *res = run_callback(p, tb, 0, 100, 0, NULL, NULL);
    uint8_t m[16];
    double s;
    int stage;
    ck_assert_uint_ge(bosch_result_history_size(res), 3);
    history_entry(res, 0, m, &s, &stage);
    ck_assert_int_eq(stage, BOSCH_STAGE_ANCHORS);
    ck_assert_uint_eq(mask_ones(m, 16), 0);
    ck_assert_double_eq(s, 1.0);
    history_entry(res, 1, m, &s, &stage);
    ck_assert_int_eq(stage, BOSCH_STAGE_ANCHORS);
    ck_assert_uint_eq(mask_ones(m, 16), 16);
    ck_assert_double_eq(s, tb_score(tb, m));
    history_entry(res, 2, m, &s, &stage);
    ck_assert_int_ne(stage, BOSCH_STAGE_ANCHORS);
    ck_assert_uint_eq(bosch_result_evaluations(res, BOSCH_STAGE_ANCHORS), 2);
    ck_assert_double_eq(bosch_result_anchor(res, 0), 1.0);
    memset(m, 1, 16);
    ck_assert_double_eq(bosch_result_anchor(res, 1), tb_score(tb, m));
    bosch_result_free(res);
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

START_TEST(anchors_supplied)
{
    bosch_testbed *tb = make_testbed(8, 8, 21, 0.3, 0.0);
    bosch_problem *p = make_problem(8, 8, 32);
    rec r;
    rec_init(&r, tb);
    bosch_optimizer *opt = make_opt(p, 0, 300);
    ck_assert_int_eq(bosch_set_anchors(opt, 1.0, 0.001), BOSCH_OK);
    ck_assert_int_eq(bosch_set_evaluator(opt, rec_eval, &r), BOSCH_OK);
    int st = bosch_optimize(opt);
    ck_assert_msg(st > 0, "%s", bosch_err_name(st));
    bosch_result *res = get_result(opt);
    ck_assert_uint_eq(bosch_result_evaluations(res, BOSCH_STAGE_ANCHORS), 0);
    ck_assert_uint_eq(bosch_result_evaluations(res, -1), 300);
    for (size_t i = 0; i < bosch_result_history_size(res); i++) {
        int stage;
        history_entry(res, i, NULL, NULL, &stage);
        ck_assert_int_ne(stage, BOSCH_STAGE_ANCHORS);
    }
    ck_assert_double_eq(bosch_result_anchor(res, 0), 1.0);
    ck_assert_double_eq(bosch_result_anchor(res, 1), 0.001);
    ck_assert_double_eq_tol(bosch_result_normalized_score(res),
                            (bosch_result_score(res) - 0.001) / (1.0 - 0.001), 1e-12);
    check_final_mask(res, p);
    bosch_result_free(res);
    bosch_destroy(opt);
    rec_free(&r);
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

START_TEST(anchors_degenerate)
{
    bosch_testbed *tb = make_testbed(3, 4, 3, 0.0, 0.0);
    bosch_problem *p = make_problem(3, 4, 6);
    for (int mode = 1; mode <= 2; mode++) {
        rec r;
        rec_init(&r, tb);
        r.mode = mode; /* constant score, or allSWA better than full */
        bosch_optimizer *opt = make_opt(p, 0, 100);
        ck_assert_int_eq(bosch_set_evaluator(opt, rec_eval, &r), BOSCH_OK);
        ck_assert_int_eq(bosch_optimize(opt), BOSCH_E_ANCHORS);
        ck_assert_msg(bosch_last_error(opt)[0] != '\0', "no last_error");
        ck_assert_uint_eq(r.calls, 2);
        bosch_result *res = get_result(opt);
        ck_assert_int_eq(bosch_result_status(res), BOSCH_E_ANCHORS);
        ck_assert_uint_eq(bosch_result_history_size(res), 2);
        bosch_result_free(res);
        bosch_destroy(opt);
        rec_free(&r);
    }
    /* Same through ask/tell. */
    bosch_optimizer *opt = make_opt(p, 0, 100);
    size_t n, told = 0;
    int rc;
    while ((rc = bosch_ask(opt, &n)) == BOSCH_OK) {
        for (size_t i = 0; i < n; i++) {
            /* The tell completing the anchors may already report it. */
            int trc = bosch_tell(opt, i, 0.25);
            ck_assert_msg(trc == BOSCH_OK || trc == BOSCH_E_ANCHORS, "tell -> %d", trc);
        }
        told += n;
        ck_assert_uint_le(told, 2);
    }
    ck_assert_int_eq(rc, BOSCH_E_ANCHORS);
    ck_assert_uint_eq(told, 2);
    bosch_destroy(opt);
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

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
            ck_assert_msg(bosch_last_error(opt)[0] != '\0', "no last_error");
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
            bosch_destroy(opt);
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
            bosch_destroy(opt);
            rec_free(&r);
        }
    }
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

START_TEST(asktell_protocol)
{
    bosch_testbed *tb = make_testbed(4, 4, 6, 0.5, 0.0);
    bosch_problem *p = make_problem(4, 4, 8);
    bosch_optimizer *opt = make_opt(p, 0, 80);
    uint8_t m[16], m2[16];
    size_t n = 0, n2 = 0;
    /* Run until a batch with at least 2 candidates. */
    for (;;) {
        ck_assert_int_eq(bosch_ask(opt, &n), BOSCH_OK);
        if (n >= 2)
            break;
        ck_assert_int_eq(bosch_candidate(opt, 0, m), BOSCH_OK);
        ck_assert_int_eq(bosch_tell(opt, 0, tb_score(tb, m)), BOSCH_OK);
    }
    ck_assert_int_eq(bosch_candidate(opt, n, m), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_candidate(opt, 0, NULL), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_tell(opt, n, 0.5), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_candidate(opt, 0, m), BOSCH_OK);
    /* Non-finite scores are refused and the candidate stays pending. */
    ck_assert_int_eq(bosch_tell(opt, 0, NAN), BOSCH_E_BAD_SCORE);
    ck_assert_int_eq(bosch_tell(opt, 0, INFINITY), BOSCH_E_BAD_SCORE);
    ck_assert_int_eq(bosch_tell(opt, 0, -INFINITY), BOSCH_E_BAD_SCORE);
    /* Asking again before the batch is complete returns the same batch. */
    ck_assert_int_eq(bosch_ask(opt, &n2), BOSCH_OK);
    ck_assert_uint_eq(n2, n);
    ck_assert_int_eq(bosch_candidate(opt, 0, m2), BOSCH_OK);
    ck_assert_mem_eq(m, m2, 16);
    ck_assert_int_eq(bosch_tell(opt, 0, tb_score(tb, m)), BOSCH_OK);
    ck_assert_int_eq(bosch_tell(opt, 0, tb_score(tb, m)), BOSCH_E_STATE); /* told twice */
    /* Partially told batch: ask returns it again, same candidates. */
    uint8_t *cands = malloc(n * 16);
    for (size_t i = 0; i < n; i++)
        ck_assert_int_eq(bosch_candidate(opt, i, cands + i * 16), BOSCH_OK);
    ck_assert_int_eq(bosch_ask(opt, &n2), BOSCH_OK);
    ck_assert_uint_eq(n2, n);
    for (size_t i = 0; i < n; i++) {
        ck_assert_int_eq(bosch_candidate(opt, i, m2), BOSCH_OK);
        ck_assert_mem_eq(cands + i * 16, m2, 16);
    }
    for (size_t i = n; i-- > 1;)
        ck_assert_int_eq(bosch_tell(opt, i, tb_score(tb, cands + i * 16)), BOSCH_OK);
    free(cands);
    /* Finish the run. */
    int rc;
    while ((rc = bosch_ask(opt, &n)) == BOSCH_OK)
        for (size_t i = 0; i < n; i++) {
            ck_assert_int_eq(bosch_candidate(opt, i, m), BOSCH_OK);
            ck_assert_int_eq(bosch_tell(opt, i, tb_score(tb, m)), BOSCH_OK);
        }
    ck_assert_msg(rc > 0, "%s", bosch_err_name(rc));
    /* The end is sticky. */
    n = 9;
    ck_assert_int_eq(bosch_ask(opt, &n), rc);
    ck_assert_uint_eq(n, 0);
    ck_assert_int_eq(bosch_tell(opt, 0, 0.5), BOSCH_E_STATE);
    bosch_result *res = get_result(opt);
    ck_assert_int_eq(bosch_result_status(res), rc);
    check_final_mask(res, p);
    ck_assert_uint_le(bosch_result_evaluations(res, -1), 80);
    bosch_result_free(res);
    bosch_destroy(opt);
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

START_TEST(asktell_failure)
{
    bosch_testbed *tb = make_testbed(4, 4, 6, 0.5, 0.0);
    bosch_problem *p = make_problem(4, 4, 8);
    bosch_optimizer *opt = make_opt(p, 0, 80);
    uint8_t m[16];
    size_t n, told = 0;
    /* Tell 20 evaluations, then report a failure. */
    while (told < 20) {
        ck_assert_int_eq(bosch_ask(opt, &n), BOSCH_OK);
        for (size_t i = 0; i < n; i++) {
            ck_assert_int_eq(bosch_candidate(opt, i, m), BOSCH_OK);
            ck_assert_int_eq(bosch_tell(opt, i, tb_score(tb, m)), BOSCH_OK);
        }
        told += n;
    }
    ck_assert_int_eq(bosch_ask(opt, &n), BOSCH_OK);
    ck_assert_int_eq(bosch_tell_failure(opt, n - 1, 7), BOSCH_E_EVALUATOR);
    ck_assert_int_eq(bosch_evaluator_status(opt), 7);
    ck_assert_int_eq(bosch_ask(opt, &n), BOSCH_E_EVALUATOR);
    ck_assert_int_eq(bosch_ask(opt, &n), BOSCH_E_EVALUATOR); /* every later ask */
    ck_assert_int_eq(bosch_tell(opt, 0, 0.5), BOSCH_E_STATE);
    bosch_result *res = get_result(opt);
    ck_assert_int_eq(bosch_result_status(res), BOSCH_E_EVALUATOR);
    ck_assert_uint_eq(bosch_result_history_size(res), told);
    bosch_result_free(res);
    bosch_destroy(opt);
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
        bosch_destroy(opt);
        rec_free(&r);
    }
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

typedef struct {
    bosch_optimizer *opt;
    long delay_us;
} stopper;

static void *stop_thread(void *arg)
{
    stopper *s = arg;
    sleep_us(s->delay_us);
    bosch_force_stop(s->opt);
    return NULL;
}

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
    stopper s = {opt, 30000};
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
    bosch_destroy(opt);
    rec_free(&r);
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

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
        prog g = {opt, 0, 0, 0, 200, 6, stop, 0.0, 0};
        ck_assert_int_eq(bosch_set_progress(opt, progress_cb, &g), BOSCH_OK);
        ck_assert_int_eq(bosch_set_evaluator(opt, bosch_testbed_eval, tb), BOSCH_OK);
        int st = bosch_optimize(opt);
        bosch_result *res = get_result(opt);
        ck_assert_msg(g.bad == 0, "progress inconsistencies: flags %d", g.bad);
        ck_assert_uint_gt(g.calls, 0);
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
        bosch_destroy(opt);
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
    bosch_destroy(opt);
    /* At DEBUG level too, only valid levels and messages. */
    opt = make_opt(p, 2, 100);
    logrec l2 = {0, 100, 0};
    ck_assert_int_eq(bosch_set_log(opt, log_cb, &l2, BOSCH_LOG_DEBUG), BOSCH_OK);
    ck_assert_int_eq(bosch_set_evaluator(opt, bosch_testbed_eval, tb), BOSCH_OK);
    ck_assert_int_gt(bosch_optimize(opt), 0);
    ck_assert_int_eq(l2.bad_msg, 0);
    if (l2.n)
        ck_assert_int_ge(l2.min_seen, BOSCH_LOG_DEBUG);
    bosch_destroy(opt);
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

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
    bosch_destroy(opt);
    rec_free(&r);
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Variants, stage budgets, strategies in the optimizer                      */
/* ------------------------------------------------------------------------ */
START_TEST(variants)
{
    bosch_testbed *tb = make_testbed(6, 4, 8, 0.5, 0.0);
    bosch_problem *p = make_problem(6, 4, 12); /* 3 whole layers */
    for (int v = 0; v < 4; v++) {
        rec r;
        rec_init(&r, tb);
        bosch_optimizer *opt = make_opt(p, 1, 150);
        ck_assert_int_eq(bosch_set_variant(opt, v), BOSCH_OK);
        ck_assert_int_eq(bosch_set_evaluator(opt, rec_eval, &r), BOSCH_OK);
        int st = bosch_optimize(opt);
        ck_assert_msg(st > 0, "variant %s: %s", bosch_variant_name(v), bosch_err_name(st));
        bosch_result *res = get_result(opt);
        ck_assert_msg(bosch_result_feasible(res), "variant %s: no feasible mask",
                      bosch_variant_name(v));
        check_final_mask(res, p);
        ck_assert_uint_eq(r.dup, 0);
        uint8_t m[24];
        ck_assert_int_eq(bosch_result_mask(res, m, 24), BOSCH_OK);
        uint64_t ep = bosch_result_evaluations(res, BOSCH_STAGE_PROBE);
        uint64_t ea = bosch_result_evaluations(res, BOSCH_STAGE_ALLOC);
        uint64_t eg = bosch_result_evaluations(res, BOSCH_STAGE_GROUP);
        switch (v) {
        case BOSCH_VARIANT_FULL:
            ck_assert_uint_gt(ep, 0);
            ck_assert_uint_ge(ea, 1);
            ck_assert_uint_gt(eg, 0);
            break;
        case BOSCH_VARIANT_PROBE_ONLY:
            ck_assert_uint_gt(ep, 0);
            ck_assert_uint_eq(eg, 0);
            for (uint32_t l = 0; l < 6; l++) /* uniform per-layer ratio */
                ck_assert_uint_eq(layer_ones(m, l, 4), 2);
            break;
        case BOSCH_VARIANT_GROUP_ONLY:
            ck_assert_uint_eq(ep, 0);
            ck_assert_uint_eq(ea, 1); /* the random start mask, counted as stage ALLOC */
            ck_assert_uint_gt(eg, 0);
            break;
        case BOSCH_VARIANT_LAYER_LEVEL:
            for (uint32_t l = 0; l < 6; l++) {
                size_t c = layer_ones(m, l, 4);
                ck_assert_msg(c == 0 || c == 4, "layer-level: layer %u has %zu SWA units", l, c);
            }
            break;
        default:
            break;
        }
        bosch_result_free(res);
        bosch_destroy(opt);
        rec_free(&r);
    }
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

/* Layer-level with T not a multiple of G: ceil(T/G) whole layers, the surplus
 * leaving the lowest-indexed units first. */
START_TEST(layer_level_partial_target)
{
    bosch_testbed *tb = make_testbed(6, 4, 8, 0.5, 0.0);
    bosch_problem *p = make_problem(6, 4, 10); /* 3 layers chosen, 2 units surplus */
    bosch_optimizer *opt = make_opt(p, 1, 100);
    ck_assert_int_eq(bosch_set_variant(opt, BOSCH_VARIANT_LAYER_LEVEL), BOSCH_OK);
    ck_assert_int_eq(bosch_set_evaluator(opt, bosch_testbed_eval, tb), BOSCH_OK);
    int st = bosch_optimize(opt);
    ck_assert_msg(st > 0, "%s", bosch_err_name(st));
    bosch_result *res = get_result(opt);
    check_final_mask(res, p);
    uint8_t m[24];
    size_t n = bosch_result_history_size(res), checked = 0;
    for (size_t i = 0; i <= n; i++) {
        int stage = BOSCH_STAGE_GROUP;
        if (i < n)
            history_entry(res, i, m, NULL, &stage);
        else
            ck_assert_int_eq(bosch_result_mask(res, m, 24), BOSCH_OK);
        if (stage != BOSCH_STAGE_GROUP)
            continue;
        checked++;
        int whole = 0, partial = -1;
        uint32_t lowest_whole = 99;
        for (uint32_t l = 0; l < 6; l++) {
            size_t c = layer_ones(m, l, 4);
            if (c == 4) {
                whole++;
                if (l < lowest_whole)
                    lowest_whole = l;
            } else if (c != 0) {
                ck_assert_int_eq(partial, -1);
                partial = (int)l;
                ck_assert_uint_eq(c, 2);
                ck_assert_msg(m[l * 4] == 0 && m[l * 4 + 1] == 0 && m[l * 4 + 2] && m[l * 4 + 3],
                              "the surplus must leave groups 0 and 1 of layer %u", l);
            }
        }
        ck_assert_int_eq(whole, 2);
        ck_assert_int_ge(partial, 0);
        ck_assert_msg((uint32_t)partial < lowest_whole,
                      "the partial layer %d is not the lowest of the chosen layers", partial);
    }
    ck_assert_uint_gt(checked, 1);
    bosch_result_free(res);
    bosch_destroy(opt);
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

/* Per-layer SWA counts of a mask, packed for comparison. */
static uint64_t layer_counts_key(const uint8_t *m, uint32_t L, uint32_t G)
{
    uint64_t k = 0;
    for (uint32_t l = 0; l < L; l++)
        k = k * (G + 1) + layer_ones(m, l, G);
    return k;
}

/* Without the polish, stage 3 keeps the per-layer counts of stage 2; with
 * the polish (all of stage 3 here) swaps across layers change them. */
START_TEST(polish_fraction_effect)
{
    bosch_testbed *tb = make_testbed(4, 4, 3, 1.0, 0.0);
    bosch_problem *p = make_problem(4, 4, 8);
    for (int polish = 0; polish < 2; polish++) {
        rec r;
        rec_init(&r, tb);
        bosch_optimizer *opt = make_opt(p, 2, 300);
        ck_assert_int_eq(bosch_set_polish_fraction(opt, polish ? 1.0 : 0.0), BOSCH_OK);
        ck_assert_int_eq(bosch_set_evaluator(opt, rec_eval, &r), BOSCH_OK);
        int st = bosch_optimize(opt);
        ck_assert_msg(st > 0, "%s", bosch_err_name(st));
        ck_assert_uint_eq(r.dup, 0);
        bosch_result *res = get_result(opt);
        check_final_mask(res, p);
        uint8_t m[16];
        uint64_t first = UINT64_MAX;
        int differ = 0;
        size_t ngroup = 0;
        for (size_t i = 0; i < bosch_result_history_size(res); i++) {
            int stage;
            history_entry(res, i, m, NULL, &stage);
            if (stage != BOSCH_STAGE_GROUP)
                continue;
            ngroup++;
            ck_assert(bosch_mask_is_feasible(p, m));
            uint64_t k = layer_counts_key(m, 4, 4);
            if (first == UINT64_MAX)
                first = k;
            differ |= k != first;
        }
        ck_assert_uint_gt(ngroup, 10);
        if (polish)
            ck_assert_msg(differ, "polish 1.0: no stage-3 mask changed the per-layer counts");
        else
            ck_assert_msg(!differ, "polish 0: stage 3 changed the per-layer counts");
        bosch_result_free(res);
        bosch_destroy(opt);
        rec_free(&r);
    }
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

START_TEST(stage_budgets)
{
    bosch_testbed *tb = make_testbed(8, 8, 21, 0.3, 0.0);
    bosch_problem *p = make_problem(8, 8, 32);
    bosch_optimizer *opt = make_opt(p, 0, 300);
    ck_assert_int_eq(bosch_set_stage_budget(opt, BOSCH_STAGE_PROBE, 24), BOSCH_OK);
    ck_assert_int_eq(bosch_set_stage_budget(opt, BOSCH_STAGE_GROUP, 50), BOSCH_OK);
    ck_assert_int_eq(bosch_set_evaluator(opt, bosch_testbed_eval, tb), BOSCH_OK);
    ck_assert_int_gt(bosch_optimize(opt), 0);
    bosch_result *res = get_result(opt);
    ck_assert_uint_le(bosch_result_evaluations(res, BOSCH_STAGE_PROBE), 24);
    ck_assert_uint_gt(bosch_result_evaluations(res, BOSCH_STAGE_PROBE), 0);
    ck_assert_uint_le(bosch_result_evaluations(res, BOSCH_STAGE_GROUP), 50);
    ck_assert_uint_gt(bosch_result_evaluations(res, BOSCH_STAGE_GROUP), 0);
    ck_assert_uint_le(bosch_result_evaluations(res, -1), 300);
    check_final_mask(res, p);
    bosch_result_free(res);
    bosch_destroy(opt);

    /* probe_fraction moves evaluations between stages 1 and 3. */
    uint64_t probe_evals[2];
    const double fr[2] = {0.1, 0.6};
    for (int i = 0; i < 2; i++) {
        opt = make_opt(p, 0, 300);
        ck_assert_int_eq(bosch_set_probe_fraction(opt, fr[i]), BOSCH_OK);
        ck_assert_int_eq(bosch_set_evaluator(opt, bosch_testbed_eval, tb), BOSCH_OK);
        ck_assert_int_gt(bosch_optimize(opt), 0);
        res = get_result(opt);
        probe_evals[i] = bosch_result_evaluations(res, BOSCH_STAGE_PROBE);
        bosch_result_free(res);
        bosch_destroy(opt);
    }
    ck_assert_uint_lt(probe_evals[0], probe_evals[1]);
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

START_TEST(builtin_strategies_in_optimizer)
{
    bosch_testbed *tb = make_testbed(4, 4, 8, 0.5, 0.0);
    bosch_problem *p = make_problem(4, 4, 8);
    for (size_t i = 0; i < bosch_strategy_builtin_count(); i++) {
        const char *name = bosch_strategy_builtin_name(i);
        ck_assert_ptr_nonnull(name);
        for (int stage = -1; stage <= BOSCH_STAGE_GROUP; stage += 2) { /* -1, 1, 3 */
            rec r;
            rec_init(&r, tb);
            bosch_optimizer *opt = make_opt(p, 3, 120);
            bosch_strategy *s = bosch_strategy_builtin(name);
            ck_assert_ptr_nonnull(s);
            ck_assert_int_eq(bosch_set_strategy(opt, stage, s), BOSCH_OK);
            bosch_strategy_free(s); /* the optimizer keeps its own copy */
            ck_assert_int_eq(bosch_set_evaluator(opt, rec_eval, &r), BOSCH_OK);
            int st = bosch_optimize(opt);
            ck_assert_msg(st > 0, "strategy %s (stage %d): %s", name, stage, bosch_err_name(st));
            ck_assert_uint_eq(r.dup, 0);
            bosch_result *res = get_result(opt);
            ck_assert_uint_le(bosch_result_evaluations(res, -1), 120);
            check_final_mask(res, p);
            bosch_result_free(res);
            bosch_destroy(opt);
            rec_free(&r);
        }
    }
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

/* A user strategy: random feasible-ish proposals through the subproblem stream. */
typedef struct {
    int fail_propose_after; /* -1: never */
    int proposals;
    int inits, destroys;
} ustrat;

static int us_init(void **state, const bosch_subproblem *sp, void *user)
{
    (void)sp;
    ustrat *u = user;
    u->inits++;
    *state = user;
    return 0;
}

static int us_propose(void *state, const bosch_subproblem *sp, uint8_t *cands, size_t max,
                      size_t *n)
{
    ustrat *u = state;
    if (u->fail_propose_after >= 0 && u->proposals >= u->fail_propose_after)
        return -5;
    u->proposals++;
    size_t nv = bosch_subproblem_vars(sp);
    size_t k = max < 4 ? max : 4;
    for (size_t c = 0; c < k; c++)
        for (size_t v = 0; v < nv; v++)
            cands[c * nv + v] = (uint8_t)bosch_subproblem_random_below(sp, 2);
    *n = k;
    return 0;
}

static int us_observe(void *state, const bosch_subproblem *sp, const uint8_t *cands,
                      const double *values, size_t n)
{
    (void)state;
    (void)sp;
    (void)cands;
    (void)values;
    (void)n;
    return 0;
}

static void us_destroy(void *state, void *user)
{
    (void)state;
    ustrat *u = user;
    u->destroys++;
}

START_TEST(user_strategy_in_optimizer)
{
    bosch_testbed *tb = make_testbed(4, 4, 8, 0.5, 0.0);
    bosch_problem *p = make_problem(4, 4, 8);
    for (int fail = 0; fail < 2; fail++) {
        ustrat u = {fail ? 3 : -1, 0, 0, 0};
        bosch_strategy *s = bosch_strategy_new("mine", us_init, us_propose, us_observe, us_destroy,
                                               &u);
        ck_assert_ptr_nonnull(s);
        rec r;
        rec_init(&r, tb);
        bosch_optimizer *opt = make_opt(p, 3, 100);
        ck_assert_int_eq(bosch_set_strategy(opt, -1, s), BOSCH_OK);
        bosch_strategy_free(s);
        ck_assert_int_eq(bosch_set_evaluator(opt, rec_eval, &r), BOSCH_OK);
        int st = bosch_optimize(opt);
        bosch_result *res = get_result(opt);
        if (fail) {
            ck_assert_int_eq(st, BOSCH_E_STRATEGY);
            ck_assert_int_eq(bosch_result_status(res), BOSCH_E_STRATEGY);
            ck_assert_msg(bosch_last_error(opt)[0] != '\0', "no last_error");
            ck_assert_uint_eq(bosch_result_history_size(res), r.calls);
            ck_assert_uint_ge(r.calls, 2); /* anchors at least */
        } else {
            ck_assert_msg(st > 0, "%s", bosch_err_name(st));
            check_final_mask(res, p);
            ck_assert_uint_eq(r.dup, 0);
        }
        bosch_result_free(res);
        bosch_destroy(opt);
        /* destroy once per successful init, at the latest with the optimizer */
        ck_assert_int_gt(u.inits, 0);
        ck_assert_int_eq(u.inits, u.destroys);
        rec_free(&r);
    }
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

START_TEST(fixed_units_and_bounds_respected)
{
    bosch_testbed *tb = make_testbed(6, 4, 8, 0.5, 0.0);
    bosch_problem *p = make_problem(6, 4, 10);
    ck_assert_int_eq(bosch_problem_set_layer_bounds(p, 0, 0.0, 0.25), BOSCH_OK);
    ck_assert_int_eq(bosch_problem_set_layer_bounds(p, 5, 0.5, 1.0), BOSCH_OK);
    ck_assert_int_eq(bosch_problem_fix_unit(p, 2, 1, BOSCH_FIX_SWA), BOSCH_OK);
    ck_assert_int_eq(bosch_problem_fix_unit(p, 3, 0, BOSCH_FIX_FULL), BOSCH_OK);
    for (int v = 0; v < 3; v++) { /* layer-level cannot make whole layers here */
        bosch_optimizer *opt = make_opt(p, 1, 150);
        ck_assert_int_eq(bosch_set_variant(opt, v), BOSCH_OK);
        ck_assert_int_eq(bosch_set_evaluator(opt, bosch_testbed_eval, tb), BOSCH_OK);
        int st = bosch_optimize(opt);
        ck_assert_msg(st > 0, "variant %d: %s", v, bosch_err_name(st));
        bosch_result *res = get_result(opt);
        check_final_mask(res, p);
        uint8_t m[24];
        ck_assert_int_eq(bosch_result_mask(res, m, 24), BOSCH_OK);
        ck_assert_uint_le(layer_ones(m, 0, 4), 1);
        ck_assert_uint_ge(layer_ones(m, 5, 4), 2);
        ck_assert_uint_eq(m[2 * 4 + 1], 1);
        ck_assert_uint_eq(m[3 * 4 + 0], 0);
        /* Every history mask of the probe/group stages honours fixed units. */
        for (size_t i = 0; i < bosch_result_history_size(res); i++) {
            int stage;
            history_entry(res, i, m, NULL, &stage);
            if (stage == BOSCH_STAGE_GROUP || stage == BOSCH_STAGE_ALLOC) {
                ck_assert_uint_eq(m[2 * 4 + 1], 1);
                ck_assert_uint_eq(m[3 * 4 + 0], 0);
            }
        }
        bosch_result_free(res);
        bosch_destroy(opt);
    }
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Result accessors                                                          */
/* ------------------------------------------------------------------------ */
START_TEST(result_consistency)
{
    bosch_testbed *tb = make_testbed(3, 3, 8, 0.5, 0.01);
    bosch_problem *p = bosch_problem_create(3, 3, 2);
    ck_assert_int_eq(bosch_problem_set_target_ratio(p, 0.5), BOSCH_OK); /* 9 units -> 5 */
    ck_assert_uint_eq(bosch_problem_target_units(p), 5);
    bosch_optimizer *opt = make_opt(p, 1, 150);
    ck_assert_int_eq(bosch_set_alpha(opt, 2.0), BOSCH_OK);
    ck_assert_int_eq(bosch_set_evaluator(opt, bosch_testbed_eval, tb), BOSCH_OK);
    int st = bosch_optimize(opt);
    ck_assert_int_gt(st, 0);
    bosch_result *res = get_result(opt);
    ck_assert_int_eq(bosch_result_status(res), st);
    ck_assert_uint_eq(bosch_result_units(res), 9);
    ck_assert_uint_eq(bosch_result_layers(res), 3);
    check_final_mask(res, p);

    double s = bosch_result_score(res);
    double a0 = bosch_result_anchor(res, 0), a1 = bosch_result_anchor(res, 1);
    uint8_t m[9], hm[18];
    ck_assert_int_eq(bosch_result_mask(res, m, 9), BOSCH_OK);
    ck_assert_double_eq(s, tb_score(tb, m));
    ck_assert_double_eq(s, best_feasible_in_history(res, p));
    double norm = (s - a1) / (a0 - a1);
    ck_assert_double_eq_tol(bosch_result_normalized_score(res), norm, 1e-12);
    double ratio = 5.0 / 9.0;
    ck_assert_double_eq_tol(bosch_result_ratio(res), ratio, 1e-12);
    ck_assert_double_eq_tol(bosch_result_objective(res),
                            norm - 2.0 * (ratio - 0.5) * (ratio - 0.5), 1e-12);
    double lr[3];
    ck_assert_int_eq(bosch_result_layer_ratios(res, lr, 3), BOSCH_OK);
    for (uint32_t l = 0; l < 3; l++)
        ck_assert_double_eq_tol(lr[l], (double)layer_ones(m, l, 3) / 3.0, 1e-12);
    ck_assert_int_eq(bosch_result_layer_ratios(res, lr, 2), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_result_head_mask(res, hm, 18), BOSCH_OK);
    for (size_t h = 0; h < 18; h++)
        ck_assert_uint_eq(hm[h], m[h / 2]);
    ck_assert_int_eq(bosch_result_head_mask(res, hm, 17), BOSCH_E_INVALID);
    ck_assert_double_eq_tol(bosch_result_kv_saving(res, 32768, 1024, 4),
                            bosch_kv_saving(ratio, 32768, 1024, 4), 1e-12);
    ck_assert_int_eq(bosch_result_mask(res, m, 8), BOSCH_E_INVALID);

    /* History: masks and scores are what the evaluator saw. */
    size_t n = bosch_result_history_size(res);
    ck_assert_uint_eq(n, bosch_result_evaluations(res, -1));
    uint64_t per_stage[BOSCH_STAGE_COUNT] = {0};
    for (size_t i = 0; i < n; i++) {
        double hs;
        int stage;
        history_entry(res, i, m, &hs, &stage);
        ck_assert_double_eq(hs, tb_score(tb, m));
        ck_assert_int_ge(stage, 0);
        ck_assert_int_lt(stage, BOSCH_STAGE_COUNT);
        per_stage[stage]++;
        ck_assert_int_eq(bosch_result_history_entry(res, i, NULL, NULL, NULL), BOSCH_OK);
    }
    for (int stg = 0; stg < BOSCH_STAGE_COUNT; stg++)
        ck_assert_uint_eq(per_stage[stg], bosch_result_evaluations(res, stg));
    int rc = bosch_result_history_entry(res, n, m, NULL, NULL);
    ck_assert_msg(rc == BOSCH_E_NOT_FOUND || rc == BOSCH_E_INVALID, "entry(n) -> %d", rc);

    /* A snapshot is independent of the optimizer. */
    bosch_destroy(opt);
    ck_assert_double_eq(bosch_result_score(res), s);
    bosch_result_free(res);
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

/* Mid-run snapshots: status BOSCH_OK while running. */
START_TEST(result_mid_run)
{
    bosch_testbed *tb = make_testbed(4, 4, 8, 0.5, 0.0);
    bosch_problem *p = make_problem(4, 4, 8);
    bosch_optimizer *opt = make_opt(p, 0, 60);
    uint8_t m[16];
    size_t n, told = 0;
    while (told < 30) {
        ck_assert_int_eq(bosch_ask(opt, &n), BOSCH_OK);
        for (size_t i = 0; i < n; i++) {
            ck_assert_int_eq(bosch_candidate(opt, i, m), BOSCH_OK);
            ck_assert_int_eq(bosch_tell(opt, i, tb_score(tb, m)), BOSCH_OK);
        }
        told += n;
    }
    bosch_result *res = get_result(opt);
    ck_assert_int_eq(bosch_result_status(res), BOSCH_OK);
    ck_assert_uint_eq(bosch_result_history_size(res), told);
    bosch_result_free(res);
    bosch_destroy(opt);
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* JSONL history                                                             */
/* ------------------------------------------------------------------------ */
START_TEST(history_jsonl)
{
    bosch_testbed *tb = make_testbed(4, 4, 8, 0.5, 0.0);
    bosch_problem *p = make_problem(4, 4, 8);
    bosch_result *res = run_callback(p, tb, 0, 60, 0, NULL, NULL);
    char dir[] = "/tmp/bosch-test-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/history.jsonl", dir);
    ck_assert_int_eq(bosch_result_write_history(res, path), BOSCH_OK);

    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char line[4096];
    size_t i = 0, n = bosch_result_history_size(res);
    double a0 = bosch_result_anchor(res, 0), a1 = bosch_result_anchor(res, 1);
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '\n')
            continue;
        ck_assert_uint_lt(i, n);
        json_object *o = json_tokener_parse(line);
        ck_assert_msg(o != NULL, "line %zu is not JSON: %s", i, line);
        json_object *v;
        uint8_t m[16];
        double s;
        int stage;
        history_entry(res, i, m, &s, &stage);
        ck_assert(json_object_object_get_ex(o, "eval", &v));
        ck_assert_int_eq(json_object_get_int64(v), (int64_t)i);
        ck_assert(json_object_object_get_ex(o, "stage", &v));
        ck_assert_str_eq(json_object_get_string(v), bosch_stage_name(stage));
        ck_assert(json_object_object_get_ex(o, "score", &v));
        ck_assert_double_eq_tol(json_object_get_double(v), s, 1e-9 * (fabs(s) + 1e-300) + 1e-15);
        ck_assert(json_object_object_get_ex(o, "normalized", &v));
        ck_assert_double_eq_tol(json_object_get_double(v), (s - a1) / (a0 - a1), 1e-9);
        ck_assert(json_object_object_get_ex(o, "swa_units", &v));
        ck_assert_int_eq(json_object_get_int64(v), (int64_t)mask_ones(m, 16));
        ck_assert(json_object_object_get_ex(o, "mask", &v));
        const char *ms = json_object_get_string(v);
        ck_assert_uint_eq(strlen(ms), 16);
        for (size_t u = 0; u < 16; u++)
            ck_assert_int_eq(ms[u], m[u] ? '1' : '0');
        json_object_put(o);
        i++;
    }
    fclose(f);
    ck_assert_uint_eq(i, n);
    unlink(path);
    rmdir(dir);

    ck_assert_int_eq(bosch_result_write_history(res, "/nonexistent-dir-bosch/x/h.jsonl"),
                     BOSCH_E_IO);
    ck_assert_int_eq(bosch_result_write_history(res, NULL), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_result_write_history(NULL, "/tmp/x.jsonl"), BOSCH_E_INVALID);
    bosch_result_free(res);
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

static Suite *optimizer_suite(void)
{
    Suite *s = suite_create("optimizer");
    TCase *tc = tcase_new(s, "cache_budget");
    tcase_add_test(tc, cache_never_reevaluates);
    tcase_add_test(tc, cache_small_space);
    tcase_add_test(tc, exact_budget_big_problem);
    tcase_add_test(tc, budget_never_exceeded);
    tcase_add_test(tc, budget_asktell);
    tc = tcase_new(s, "determinism");
    tcase_add_test(tc, same_seed_same_result);
    tcase_add_test(tc, callback_equals_asktell);
    tcase_add_test(tc, single_equals_batch_evaluator);
    tcase_add_test(tc, evaluator_replacement);
    tc = tcase_new(s, "anchors");
    tcase_add_test(tc, anchors_first);
    tcase_add_test(tc, anchors_supplied);
    tcase_add_test(tc, anchors_degenerate);
    tc = tcase_new(s, "failures");
    tcase_add_test(tc, evaluator_failure);
    tcase_add_test(tc, bad_score);
    tcase_add_test(tc, asktell_protocol);
    tcase_add_test(tc, asktell_failure);
    tcase_add_test(tc, force_stop_in_evaluator);
    tcase_add_test(tc, force_stop_from_thread);
    tcase_add_test(tc, progress_callback);
    tcase_add_test(tc, log_callback_levels);
    tcase_add_test(tc, time_limit);
    tc = tcase_new(s, "variants");
    tcase_add_test(tc, variants);
    tcase_add_test(tc, layer_level_partial_target);
    tcase_add_test(tc, stage_budgets);
    tcase_add_test(tc, polish_fraction_effect);
    tcase_add_test(tc, builtin_strategies_in_optimizer);
    tcase_add_test(tc, user_strategy_in_optimizer);
    tcase_add_test(tc, fixed_units_and_bounds_respected);
    tc = tcase_new(s, "result");
    tcase_add_test(tc, result_consistency);
    tcase_add_test(tc, result_mid_run);
    tcase_add_test(tc, history_jsonl);
    return s;
}

int main(void)
{
    return run_suite(optimizer_suite());
}
