/*
 * Optimizer tests: the evaluation cache (no mask is evaluated twice, also in
 * a space smaller than the budget) and the budget (used exactly, never
 * exceeded, in callback and ask/tell mode).
 */
#include "support/support.h"
#include "support/recorder.h"

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
        bosch_optimizer_free(opt);
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
            ck_assert_uint_le(r.max_batch, 4); /* default batch size */
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
            bosch_result *res = run_callback_spread(p, tb, seed, 300, spreads[k], 0, &st, NULL);
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
    /* 4 x 4, 8 SWA units: a feasible mask needs 2 anchors + 4 probes. */
    static const uint64_t budgets[] = {2, 3, 5, 6, 7, 20, 60, 150};
    bosch_testbed *tb = make_testbed(4, 4, 2, 0.5, 0.0);
    bosch_problem *p = make_problem(4, 4, 8);
    for (size_t i = 0; i < sizeof budgets / sizeof budgets[0]; i++) {
        for (int be = 0; be < 2; be++) {
            int st;
            bosch_result *res = run_callback(p, tb, 5, budgets[i], be, &st, NULL);
            if (budgets[i] < 6) { /* refused before any evaluation */
                ck_assert_msg(st == BOSCH_E_INVALID, "budget %lu: %s",
                              (unsigned long)budgets[i], bosch_err_name(st));
                ck_assert_uint_eq(bosch_result_history_size(res), 0);
                bosch_result_free(res);
                continue;
            }
            ck_assert_msg(st > 0, "budget %lu: %s", (unsigned long)budgets[i], bosch_err_name(st));
            ck_assert_msg(bosch_result_evaluations(res, -1) <= budgets[i],
                          "budget %lu: used %lu", (unsigned long)budgets[i],
                          (unsigned long)bosch_result_evaluations(res, -1));
            /* Every accepted budget ends with a feasible, scored mask. */
            ck_assert(bosch_result_feasible(res));
            ck_assert(isfinite(bosch_result_score(res)));
            check_final_mask(res, p);
            if (budgets[i] == 6)
                ck_assert_int_eq(st, BOSCH_BUDGET_REACHED);
            bosch_result_free(res);
        }
    }
    /* Budget 1 cannot cover the two anchors: an error before any evaluation. */
    for (int be = 0; be < 2; be++) {
        rec r;
        rec_init(&r, tb);
        bosch_optimizer *opt = make_opt(p, 5, 1);
        if (be)
            ck_assert_int_eq(bosch_set_batch_evaluator(opt, rec_batch_eval, &r), BOSCH_OK);
        else
            ck_assert_int_eq(bosch_set_evaluator(opt, rec_eval, &r), BOSCH_OK);
        int st = bosch_optimize(opt);
        ck_assert_msg(st == BOSCH_E_INVALID, "budget 1 -> %s", bosch_err_name(st));
        ck_assert_uint_eq(r.calls, 0);
        bosch_optimizer_free(opt);
        rec_free(&r);
    }
    /* With supplied anchors 4 evaluations (one probe per layer) suffice; 3 are
     * refused, naming the minimum. */
    for (uint64_t b = 3; b <= 4; b++) {
        bosch_optimizer *opt = make_opt(p, 5, b);
        rec r;
        rec_init(&r, tb);
        ck_assert_int_eq(bosch_set_anchors(opt, 1.0, 0.01), BOSCH_OK);
        ck_assert_int_eq(bosch_set_evaluator(opt, rec_eval, &r), BOSCH_OK);
        int st = bosch_optimize(opt);
        if (b == 3) {
            ck_assert_int_eq(st, BOSCH_E_INVALID);
            ck_assert_uint_eq(r.calls, 0);
            ck_assert_ptr_nonnull(strstr(bosch_optimizer_last_error(opt), "at least 4"));
        } else {
            ck_assert_int_eq(st, BOSCH_BUDGET_REACHED);
            ck_assert_uint_eq(r.calls, 4);
            bosch_result *res = NULL;
            ck_assert_int_eq(bosch_get_result(opt, &res), BOSCH_OK);
            ck_assert(bosch_result_feasible(res));
            check_final_mask(res, p);
            bosch_result_free(res);
        }
        bosch_optimizer_free(opt);
        rec_free(&r);
    }
    /* Other variants need the anchors and one start mask. */
    static const int variants[] = {BOSCH_VARIANT_GROUP_ONLY, BOSCH_VARIANT_LAYER_LEVEL};
    for (int v = 0; v < 2; v++)
        for (uint64_t b = 2; b <= 3; b++) {
            bosch_optimizer *opt = make_opt(p, 5, b);
            rec r;
            rec_init(&r, tb);
            ck_assert_int_eq(bosch_set_variant(opt, variants[v]), BOSCH_OK);
            ck_assert_int_eq(bosch_set_evaluator(opt, rec_eval, &r), BOSCH_OK);
            int st = bosch_optimize(opt);
            bosch_result *res = NULL;
            ck_assert_int_eq(bosch_get_result(opt, &res), BOSCH_OK);
            if (b == 2) {
                ck_assert_int_eq(st, BOSCH_E_INVALID);
                ck_assert_uint_eq(r.calls, 0);
            } else {
                ck_assert_msg(st > 0, "%s", bosch_err_name(st));
                ck_assert(bosch_result_feasible(res));
                check_final_mask(res, p);
            }
            bosch_result_free(res);
            bosch_optimizer_free(opt);
            rec_free(&r);
        }
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
    bosch_optimizer_free(opt);
    rec_free(&r);
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

static Suite *cache_budget_suite(void)
{
    Suite *s = suite_create("cache_budget");
    TCase *tc = tcase_new(s, "cache_budget");
    tcase_add_test(tc, cache_never_reevaluates);
    tcase_add_test(tc, cache_small_space);
    tcase_add_test(tc, exact_budget_big_problem);
    tcase_add_test(tc, budget_never_exceeded);
    tcase_add_test(tc, budget_asktell);
    return s;
}

int main(void)
{
    return run_suite(cache_budget_suite());
}
