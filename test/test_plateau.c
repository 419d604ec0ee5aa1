/*
 * The stopping rule (option stop_tolerance, issue 53): a search whose best
 * no longer climbs ends with BOSCH_PLATEAU, says so and by how much, and its
 * run is the unstopped run cut short (same seed, same evaluations up to the
 * stop, the best of them returned); a search whose evaluations still
 * improve by more than the tolerance is never stopped; the setting is
 * checked, and off by default.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "support/recorder.h"
#include "support/support.h"
#include "support/testbeds.h"

static bosch_result *run(bosch_problem *p, bosch_eval_fn eval, void *user,
                         uint64_t budget, double tol, int *status, logtext *lb)
{
    bosch_optimizer *opt = bosch_optimizer_create(p);
    ck_assert_ptr_nonnull(opt);
    ck_assert_int_eq(bosch_set_budget(opt, budget), BOSCH_OK);
    ck_assert_int_eq(bosch_set_seed(opt, 7), BOSCH_OK);
    if (tol > 0)
        ck_assert_int_eq(bosch_set_stop_tolerance(opt, tol), BOSCH_OK);
    if (lb)
        ck_assert_int_eq(bosch_set_log(opt, logtext_cb, lb, BOSCH_LOG_INFO), BOSCH_OK);
    ck_assert_int_eq(bosch_set_evaluator(opt, eval, user), BOSCH_OK);
    *status = bosch_optimize(opt);
    bosch_result *r = NULL;
    ck_assert_int_eq(bosch_get_result(opt, &r), BOSCH_OK);
    bosch_optimizer_free(opt);
    return r;
}

/* On a testbed the search reaches its best long before a budget of 3000:
 * with the rule it stops there. Its history is the unstopped run's first
 * evaluations, and it returns the best of them. */
START_TEST(flat_search_stops_as_a_prefix_of_the_full_run)
{
    bosch_testbed *tb = make_testbed(8, 4, 11, 0.3, 0.0);
    bosch_problem *p = make_problem(8, 4, 16);
    int st_full, st_stop;
    bosch_result *full = run(p, bosch_testbed_eval, tb, 3000, 0, &st_full, NULL);
    logtext lb = {{0}, 0};
    bosch_result *stop = run(p, bosch_testbed_eval, tb, 3000, 0.01, &st_stop, &lb);
    ck_assert_int_eq(st_stop, BOSCH_PLATEAU);
    ck_assert_int_ne(st_full, BOSCH_PLATEAU);
    ck_assert_str_eq(bosch_err_name(st_stop), "BOSCH_PLATEAU");
    ck_assert_int_eq(bosch_result_status(stop), BOSCH_PLATEAU);
    size_t n = bosch_result_history_size(stop), nfull = bosch_result_history_size(full);
    ck_assert_msg(n < 1500 && n < nfull, "stopped after %zu of %zu", n, nfull);
    ck_assert_ptr_nonnull(strstr(lb.text, "plateau: the best S^ rose"));
    char want[96];
    snprintf(want, sizeof want, "stopping after %zu of 3000 evaluations", n);
    ck_assert_msg(strstr(lb.text, want) != NULL, "log lacks '%s':\n%s", want, lb.text);
    uint8_t a[32], b[32];
    double best = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        double sa, sb;
        int ga, gb;
        ck_assert_int_eq(bosch_result_history_entry(stop, i, a, &sa, &ga), BOSCH_OK);
        ck_assert_int_eq(bosch_result_history_entry(full, i, b, &sb, &gb), BOSCH_OK);
        ck_assert_msg(!memcmp(a, b, 32) && sa == sb && ga == gb, "evaluation %zu differs", i);
        size_t swa = 0;
        for (size_t u = 0; u < 32; u++)
            swa += a[u];
        if (swa == 16 && sa > best)
            best = sa;
    }
    ck_assert(bosch_result_feasible(stop));
    ck_assert_double_eq(bosch_result_score(stop), best);
    ck_assert(bosch_result_score(full) >= best);
    bosch_result_free(full);
    bosch_result_free(stop);
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

/* A planted landscape that keeps climbing: every new mask scores above
 * every earlier one by more than the tolerance (the anchors 1 and 0, then
 * 0.1 + 2 * tol * k for the k-th evaluation), so each evaluation improves
 * the best by more than the tolerance. The rule never stops it. */
struct climb {
    uint64_t calls;
    double step;
};

static int climbing_eval(const uint8_t *mask, size_t units, double *score, void *user)
{
    struct climb *c = user;
    size_t swa = 0;
    for (size_t u = 0; u < units; u++)
        swa += mask[u] != 0;
    c->calls++;
    *score = swa == 0 ? 1.0 : swa == units ? 0.0 : 0.1 + c->step * (double)c->calls;
    return 0;
}

START_TEST(climbing_search_is_never_stopped)
{
    bosch_problem *p = make_problem(8, 4, 16);
    const double tol = 0.01;
    struct climb c = {0, 2 * tol};
    int st;
    bosch_result *r = run(p, climbing_eval, &c, 400, tol, &st, NULL);
    ck_assert_msg(st == BOSCH_DONE || st == BOSCH_BUDGET_REACHED, "%s", bosch_err_name(st));
    ck_assert_uint_eq(bosch_result_evaluations(r, -1), 400);
    bosch_result_free(r);
    /* The same landscape made flat (no climb) is stopped: the rule is live. */
    c.calls = 0;
    c.step = 0.0;
    r = run(p, climbing_eval, &c, 400, tol, &st, NULL);
    ck_assert_int_eq(st, BOSCH_PLATEAU);
    ck_assert_uint_lt(bosch_result_evaluations(r, -1), 400);
    bosch_result_free(r);
    bosch_problem_free(p);
}
END_TEST

START_TEST(setting_is_checked_and_off_by_default)
{
    bosch_problem *p = make_problem(4, 4, 8);
    bosch_optimizer *opt = bosch_optimizer_create(p);
    char buf[64];
    ck_assert(bosch_get_option(opt, "stop_tolerance", buf, sizeof buf) > 0);
    ck_assert_double_eq(strtod(buf, NULL), 0.0);
    ck_assert_int_eq(bosch_set_stop_tolerance(opt, -0.1), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_stop_tolerance(opt, 1.5), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_stop_tolerance(opt, NAN), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_option(opt, "stop_tolerance", "x"), BOSCH_E_OPTION);
    ck_assert_int_eq(bosch_set_option(opt, "stop_tolerance", "0.002"), BOSCH_OK);
    ck_assert(bosch_get_option(opt, "stop_tolerance", buf, sizeof buf) > 0);
    ck_assert_double_eq(strtod(buf, NULL), 0.002);
    ck_assert_str_eq(bosch_strerror(BOSCH_PLATEAU),
                     "search stopped early: the best stopped improving, budget unused");
    ck_assert(!bosch_is_error(BOSCH_PLATEAU));
    bosch_optimizer_free(opt);
    bosch_problem_free(p);
}
END_TEST

static Suite *plateau_suite(void)
{
    Suite *s = suite_create("plateau");
    TCase *tc = tcase_create("plateau");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, flat_search_stops_as_a_prefix_of_the_full_run);
    tcase_add_test(tc, climbing_search_is_never_stopped);
    tcase_add_test(tc, setting_is_checked_and_off_by_default);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(plateau_suite());
}
