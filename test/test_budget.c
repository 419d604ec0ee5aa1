/*
 * Budget and anchors (issue 12, deliverable 5) and honest scores under
 * noise (deliverable 4): a run that ends before its budget says so
 * (BOSCH_CONVERGED and a log line); raw scores with unordered anchors.
 */
#include <stdio.h>

#include "support/recorder.h"
#include "support/support.h"

/* mads and probe-only on 1500 evaluations: the whole budget is used, or the
 * run returns BOSCH_CONVERGED and logs "N of 1500". */
START_TEST(strategies_use_budget_or_say_why)
{
    bosch_testbed *tb = make_testbed(12, 8, 3, 0.3, 0.0);
    bosch_problem *p = make_problem(12, 8, 48);
    for (int c = 0; c < 2; c++) {
        bosch_optimizer *opt = bosch_optimizer_create(p);
        logtext lb = {{0}, 0};
        ck_assert_int_eq(bosch_set_budget(opt, 1500), BOSCH_OK);
        ck_assert_int_eq(bosch_set_log(opt, logtext_cb, &lb, BOSCH_LOG_INFO), BOSCH_OK);
        if (c == 0)
            ck_assert_int_eq(bosch_set_option(opt, "strategy", "mads"), BOSCH_OK);
        else
            ck_assert_int_eq(bosch_set_option(opt, "variant", "probe-only"), BOSCH_OK);
        ck_assert_int_eq(bosch_set_evaluator(opt, bosch_testbed_eval, tb), BOSCH_OK);
        int st = bosch_optimize(opt);
        bosch_result *r = NULL;
        ck_assert_int_eq(bosch_get_result(opt, &r), BOSCH_OK);
        uint64_t used = bosch_result_evaluations(r, -1);
        ck_assert(bosch_result_feasible(r));
        if (used < 1500) {
            ck_assert_msg(st == BOSCH_CONVERGED, "%s after %lu", bosch_err_name(st),
                          (unsigned long)used);
            char want[64];
            snprintf(want, sizeof want, "%lu of 1500 evaluations", (unsigned long)used);
            ck_assert_msg(strstr(lb.text, want) != NULL, "log lacks '%s':\n%s", want, lb.text);
        } else {
            ck_assert(st == BOSCH_DONE || st == BOSCH_BUDGET_REACHED);
        }
        if (c == 0) /* mads restarts instead of stopping at a collapsed mesh */
            ck_assert_uint_eq(used, 1500);
        bosch_result_free(r);
        bosch_optimizer_free(opt);
    }
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

/* An evaluator whose all-SWA model scores above the full one. */
static int unordered_eval(const uint8_t *mask, size_t units, double *score, void *user)
{
    const bosch_testbed *tb = user;
    double s;
    if (bosch_testbed_score(tb, mask, &s) != BOSCH_OK)
        return 1;
    size_t swa = 0;
    for (size_t u = 0; u < units; u++)
        swa += mask[u] != 0;
    *score = s + (swa == units ? 2.0 : 0.0);
    return 0;
}

START_TEST(raw_scores_with_unordered_anchors)
{
    bosch_testbed *tb = make_testbed(6, 4, 5, 0.3, 0.0);
    bosch_problem *p = make_problem(6, 4, 12);
    /* Default: the run stops at the anchors. */
    bosch_optimizer *opt = bosch_optimizer_create(p);
    ck_assert_int_eq(bosch_set_budget(opt, 200), BOSCH_OK);
    ck_assert_int_eq(bosch_set_evaluator(opt, unordered_eval, tb), BOSCH_OK);
    ck_assert_int_eq(bosch_optimize(opt), BOSCH_E_ANCHORS);
    bosch_optimizer_free(opt);
    /* raw_scores: the search runs, scores are raw, normalized NaN, a warning. */
    opt = bosch_optimizer_create(p);
    logtext lb = {{0}, 0};
    ck_assert_int_eq(bosch_set_budget(opt, 200), BOSCH_OK);
    ck_assert_int_eq(bosch_set_option(opt, "raw_scores", "1"), BOSCH_OK);
    ck_assert_int_eq(bosch_set_log(opt, logtext_cb, &lb, BOSCH_LOG_WARN), BOSCH_OK);
    ck_assert_int_eq(bosch_set_evaluator(opt, unordered_eval, tb), BOSCH_OK);
    int st = bosch_optimize(opt);
    ck_assert_msg(st > 0, "%s: %s", bosch_err_name(st), bosch_optimizer_last_error(opt));
    ck_assert_ptr_nonnull(strstr(lb.text, "raw scores"));
    bosch_result *r = NULL;
    ck_assert_int_eq(bosch_get_result(opt, &r), BOSCH_OK);
    ck_assert(bosch_result_feasible(r));
    ck_assert(isnan(bosch_result_normalized_score(r)));
    uint8_t m[24];
    ck_assert_int_eq(bosch_result_mask(r, m, 24), BOSCH_OK);
    ck_assert(bosch_mask_is_feasible(p, m));
    ck_assert(fabs(bosch_result_score(r) - tb_score(tb, m)) < 1e-12);
    /* The best raw score among evaluated feasible masks is the result. */
    for (size_t i = 0; i < bosch_result_history_size(r); i++) {
        uint8_t h[24];
        double s;
        ck_assert_int_eq(bosch_result_history_entry(r, i, h, &s, NULL), BOSCH_OK);
        if (bosch_mask_is_feasible(p, h))
            ck_assert(s <= bosch_result_score(r) + 1e-12);
    }
    ck_assert(bosch_result_evaluations(r, BOSCH_STAGE_GROUP) > 0);
    bosch_result_free(r);
    bosch_optimizer_free(opt);
    /* Given unordered anchors are accepted once raw_scores is on. */
    opt = bosch_optimizer_create(p);
    ck_assert_int_eq(bosch_set_anchors(opt, 0.1, 0.2), BOSCH_E_ANCHORS);
    ck_assert_int_eq(bosch_set_raw_scores(opt, 1), BOSCH_OK);
    ck_assert_int_eq(bosch_set_anchors(opt, 0.1, 0.2), BOSCH_OK);
    ck_assert_int_eq(bosch_set_budget(opt, 100), BOSCH_OK);
    ck_assert_int_eq(bosch_set_evaluator(opt, bosch_testbed_eval, tb), BOSCH_OK);
    ck_assert(bosch_optimize(opt) > 0);
    bosch_optimizer_free(opt);
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

/* An evaluator whose anchors differ by 1e-9 alone, as two attention paths
 * of a model can by rounding: all full 0.5, all SWA 0.5 - 1e-9, any other
 * mask in between (by its full share, well within the gap). */
static int rounding_anchors_eval(const uint8_t *mask, size_t units, double *score, void *user)
{
    (void)user;
    size_t full = 0;
    for (size_t u = 0; u < units; u++)
        full += mask[u] == 0;
    *score = 0.5 - 1e-9 + 1e-9 * (double)full / (double)units;
    return 0;
}

START_TEST(anchor_tolerance_refuses_rounding_noise)
{
    bosch_problem *p = make_problem(6, 4, 12);
    /* Without a tolerance the 1e-9 gap normalises (the old behaviour). */
    bosch_optimizer *opt = bosch_optimizer_create(p);
    ck_assert_int_eq(bosch_set_budget(opt, 40), BOSCH_OK);
    ck_assert_int_eq(bosch_set_evaluator(opt, rounding_anchors_eval, NULL), BOSCH_OK);
    ck_assert(bosch_optimize(opt) > 0);
    bosch_optimizer_free(opt);
    /* With the evaluator's noise as tolerance: refused, saying why. */
    opt = bosch_optimizer_create(p);
    ck_assert_int_eq(bosch_set_budget(opt, 40), BOSCH_OK);
    ck_assert_int_eq(bosch_set_anchor_tolerance(opt, 1e-7), BOSCH_OK);
    ck_assert_int_eq(bosch_set_evaluator(opt, rounding_anchors_eval, NULL), BOSCH_OK);
    ck_assert_int_eq(bosch_optimize(opt), BOSCH_E_ANCHORS);
    ck_assert_ptr_nonnull(strstr(bosch_optimizer_last_error(opt), "anchor_tolerance = 1e-07"));
    bosch_result *r = NULL;
    ck_assert_int_eq(bosch_get_result(opt, &r), BOSCH_OK);
    ck_assert_int_eq(bosch_result_status(r), BOSCH_E_ANCHORS);
    ck_assert(!bosch_result_feasible(r));
    bosch_result_free(r);
    bosch_optimizer_free(opt);
    /* ... or searched raw with raw_scores (normalised scores NaN). */
    opt = bosch_optimizer_create(p);
    ck_assert_int_eq(bosch_set_budget(opt, 40), BOSCH_OK);
    ck_assert_int_eq(bosch_set_option(opt, "anchor_tolerance", "1e-7"), BOSCH_OK);
    ck_assert_int_eq(bosch_set_raw_scores(opt, 1), BOSCH_OK);
    ck_assert_int_eq(bosch_set_evaluator(opt, rounding_anchors_eval, NULL), BOSCH_OK);
    ck_assert(bosch_optimize(opt) > 0);
    ck_assert_int_eq(bosch_get_result(opt, &r), BOSCH_OK);
    ck_assert(isnan(bosch_result_normalized_score(r)));
    bosch_result_free(r);
    bosch_optimizer_free(opt);
    /* Given anchors: the same rule; bad tolerances refused, nothing changed. */
    opt = bosch_optimizer_create(p);
    ck_assert_int_eq(bosch_set_anchor_tolerance(opt, 0.01), BOSCH_OK);
    ck_assert_int_eq(bosch_set_anchors(opt, 0.5, 0.495), BOSCH_E_ANCHORS);
    ck_assert_int_eq(bosch_set_anchors(opt, 0.5, 0.4), BOSCH_OK);
    ck_assert_int_eq(bosch_set_anchor_tolerance(opt, -1), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_anchor_tolerance(opt, NAN), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_anchor_tolerance(opt, INFINITY), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_option(opt, "anchor_tolerance", "-0.5"), BOSCH_E_INVALID);
    char buf[64];
    ck_assert(bosch_get_option(opt, "anchor_tolerance", buf, sizeof buf) > 0);
    ck_assert_double_eq(strtod(buf, NULL), 0.01);
    bosch_optimizer_free(opt);
    bosch_problem_free(p);
}
END_TEST

static Suite *budget_suite(void)
{
    Suite *s = suite_create("budget");
    TCase *tc = tcase_create("budget");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, strategies_use_budget_or_say_why);
    tcase_add_test(tc, raw_scores_with_unordered_anchors);
    tcase_add_test(tc, anchor_tolerance_refuses_rounding_noise);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(budget_suite());
}
