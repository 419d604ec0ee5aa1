/*
 * Optimizer tests: the anchors (evaluated first, supplied, degenerate), the
 * result accessors (consistency with the evaluator, mid-run snapshots) and
 * the JSONL history.
 */
#include <stdio.h>
#include <unistd.h>

#include <json.h>

#include "support/support.h"
#include "support/recorder.h"

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
    bosch_optimizer_free(opt);
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
        ck_assert_msg(bosch_optimizer_last_error(opt)[0] != '\0', "no last_error");
        ck_assert_uint_eq(r.calls, 2);
        bosch_result *res = get_result(opt);
        ck_assert_int_eq(bosch_result_status(res), BOSCH_E_ANCHORS);
        ck_assert_uint_eq(bosch_result_history_size(res), 2);
        bosch_result_free(res);
        bosch_optimizer_free(opt);
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
    bosch_optimizer_free(opt);
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
    bosch_optimizer_free(opt);
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
    bosch_optimizer_free(opt);
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

static Suite *result_suite(void)
{
    Suite *s = suite_create("result");
    TCase *tc = tcase_new(s, "anchors");
    tcase_add_test(tc, anchors_first);
    tcase_add_test(tc, anchors_supplied);
    tcase_add_test(tc, anchors_degenerate);
    tc = tcase_new(s, "result");
    tcase_add_test(tc, result_consistency);
    tcase_add_test(tc, result_mid_run);
    tcase_add_test(tc, history_jsonl);
    return s;
}

int main(void)
{
    return run_suite(result_suite());
}
