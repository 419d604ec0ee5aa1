/*
 * Optimizer tests: determinism and the equivalence of the driving modes
 * (callbacks, batch callbacks, ask/tell in either order), evaluator
 * replacement, and the ask/tell protocol (bad indices and scores, repeated
 * asks, partially told batches, failures, the sticky end).
 */
#include "support/support.h"
#include "support/recorder.h"

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
        bosch_optimizer_free(opt);
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
    bosch_optimizer_free(o1);
    bosch_optimizer_free(o2);
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
    bosch_optimizer_free(opt);
    opt = make_opt(p, 0, 40);
    ck_assert_int_eq(bosch_set_evaluator(opt, never_eval, NULL), BOSCH_OK);
    ck_assert_int_eq(bosch_set_batch_evaluator(opt, bosch_testbed_batch_eval, tb), BOSCH_OK);
    ck_assert_int_gt(bosch_optimize(opt), 0);
    bosch_optimizer_free(opt);
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* The ask/tell protocol                                                    */
/* ------------------------------------------------------------------------ */

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
    bosch_optimizer_free(opt);
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
    bosch_optimizer_free(opt);
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

static Suite *asktell_suite(void)
{
    Suite *s = suite_create("asktell");
    TCase *tc = tcase_new(s, "determinism");
    tcase_add_test(tc, same_seed_same_result);
    tcase_add_test(tc, callback_equals_asktell);
    tcase_add_test(tc, single_equals_batch_evaluator);
    tcase_add_test(tc, evaluator_replacement);
    tc = tcase_new(s, "protocol");
    tcase_add_test(tc, asktell_protocol);
    tcase_add_test(tc, asktell_failure);
    return s;
}

int main(void)
{
    return run_suite(asktell_suite());
}
