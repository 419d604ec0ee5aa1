/*
 * API contract tests: version, status codes and their texts, problem
 * creation / setters / check, optimizer options (typed and string), state
 * errors, lifetime conventions.
 */
#include <limits.h>
#include <stdio.h>

#include "support/support.h"

static const int all_statuses[] = {
    BOSCH_OK,           BOSCH_E_INVALID,  BOSCH_E_NOMEM,    BOSCH_E_INFEASIBLE,
    BOSCH_E_STATE,      BOSCH_E_BAD_SCORE, BOSCH_E_EVALUATOR, BOSCH_E_OPTION,
    BOSCH_E_IO,         BOSCH_E_STRATEGY, BOSCH_E_ANCHORS,  BOSCH_E_TOO_LARGE,
    BOSCH_E_NOT_FOUND,  BOSCH_DONE,       BOSCH_BUDGET_REACHED, BOSCH_TIME_REACHED,
    BOSCH_FORCED_STOP,  BOSCH_CONVERGED};
static const char *const all_names[] = {
    "BOSCH_OK",           "BOSCH_E_INVALID",  "BOSCH_E_NOMEM",    "BOSCH_E_INFEASIBLE",
    "BOSCH_E_STATE",      "BOSCH_E_BAD_SCORE", "BOSCH_E_EVALUATOR", "BOSCH_E_OPTION",
    "BOSCH_E_IO",         "BOSCH_E_STRATEGY", "BOSCH_E_ANCHORS",  "BOSCH_E_TOO_LARGE",
    "BOSCH_E_NOT_FOUND",  "BOSCH_DONE",       "BOSCH_BUDGET_REACHED", "BOSCH_TIME_REACHED",
    "BOSCH_FORCED_STOP",  "BOSCH_CONVERGED"};
#define N_STATUSES (sizeof all_statuses / sizeof all_statuses[0])

/* ------------------------------------------------------------------------ */
/* Version                                                                   */
/* ------------------------------------------------------------------------ */
START_TEST(version_matches_macros)
{
    char buf[64];
    ck_assert_uint_eq(bosch_version_number(), BOSCH_VERSION_NUMBER);
    ck_assert_uint_eq(BOSCH_VERSION_NUMBER,
                      BOSCH_VERSION_MAJOR * 10000 + BOSCH_VERSION_MINOR * 100 + BOSCH_VERSION_PATCH);
    ck_assert_ptr_nonnull(bosch_version_string());
    ck_assert_str_eq(bosch_version_string(), BOSCH_VERSION_STRING);
    snprintf(buf, sizeof buf, "%d.%d.%d", BOSCH_VERSION_MAJOR, BOSCH_VERSION_MINOR,
             BOSCH_VERSION_PATCH);
    ck_assert_str_eq(bosch_version_string(), buf);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Status codes                                                              */
/* ------------------------------------------------------------------------ */
START_TEST(status_texts_distinct)
{
    for (size_t i = 0; i < N_STATUSES; i++) {
        const char *a = bosch_strerror(all_statuses[i]);
        const char *na = bosch_err_name(all_statuses[i]);
        ck_assert_msg(a != NULL && a[0] != '\0', "strerror(%d) empty", all_statuses[i]);
        ck_assert_msg(na != NULL && na[0] != '\0', "err_name(%d) empty", all_statuses[i]);
        ck_assert_str_eq(na, all_names[i]);
        for (size_t j = 0; j < i; j++) {
            ck_assert_msg(strcmp(a, bosch_strerror(all_statuses[j])) != 0,
                          "strerror(%d) == strerror(%d)", all_statuses[i], all_statuses[j]);
            ck_assert_msg(strcmp(na, bosch_err_name(all_statuses[j])) != 0,
                          "err_name(%d) == err_name(%d)", all_statuses[i], all_statuses[j]);
        }
    }
}
END_TEST

START_TEST(status_texts_unknown)
{
    const int unknown[] = {-13, -100, 6, 99, INT_MIN, INT_MAX};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        const char *s = bosch_strerror(unknown[i]);
        const char *n = bosch_err_name(unknown[i]);
        ck_assert_msg(s != NULL && s[0] != '\0', "strerror(%d)", unknown[i]);
        ck_assert_msg(n != NULL && n[0] != '\0', "err_name(%d)", unknown[i]);
        /* An unknown code must not masquerade as a known one. */
        for (size_t j = 0; j < N_STATUSES; j++)
            ck_assert_msg(strcmp(n, all_names[j]) != 0, "err_name(%d) = %s", unknown[i], n);
    }
}
END_TEST

START_TEST(is_error)
{
    for (size_t i = 0; i < N_STATUSES; i++) {
        int st = all_statuses[i];
        if (st < 0)
            ck_assert_msg(bosch_is_error(st) != 0, "is_error(%d)", st);
        else
            ck_assert_msg(bosch_is_error(st) == 0, "is_error(%d)", st);
    }
    ck_assert(bosch_is_error(-1000) != 0);
    ck_assert(bosch_is_error(1000) == 0);
}
END_TEST

START_TEST(stage_and_variant_names)
{
    ck_assert_str_eq(bosch_stage_name(BOSCH_STAGE_ANCHORS), "anchors");
    ck_assert_str_eq(bosch_stage_name(BOSCH_STAGE_PROBE), "probe");
    ck_assert_str_eq(bosch_stage_name(BOSCH_STAGE_ALLOC), "alloc");
    ck_assert_str_eq(bosch_stage_name(BOSCH_STAGE_GROUP), "group");
    ck_assert_str_eq(bosch_stage_name(BOSCH_STAGE_COUNT), "unknown");
    ck_assert_str_eq(bosch_stage_name(-1), "unknown");
    ck_assert_str_eq(bosch_variant_name(BOSCH_VARIANT_FULL), "full");
    ck_assert_str_eq(bosch_variant_name(BOSCH_VARIANT_PROBE_ONLY), "probe-only");
    ck_assert_str_eq(bosch_variant_name(BOSCH_VARIANT_GROUP_ONLY), "group-only");
    ck_assert_str_eq(bosch_variant_name(BOSCH_VARIANT_LAYER_LEVEL), "layer-level");
    ck_assert_ptr_null(bosch_variant_name(4));
    ck_assert_ptr_null(bosch_variant_name(-1));
}
END_TEST

START_TEST(free_null_is_noop)
{
    bosch_problem_free(NULL);
    bosch_optimizer_free(NULL);
    bosch_result_free(NULL);
    bosch_strategy_free(NULL);
    bosch_subproblem_free(NULL);
    bosch_testbed_free(NULL);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Problem                                                                   */
/* ------------------------------------------------------------------------ */
START_TEST(problem_create_shape)
{
    bosch_problem *p = bosch_problem_create(28, 8, 2);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(bosch_problem_layers(p), 28);
    ck_assert_uint_eq(bosch_problem_kv_groups(p), 8);
    ck_assert_uint_eq(bosch_problem_heads_per_group(p), 2);
    ck_assert_uint_eq(bosch_problem_units(p), 224);
    ck_assert_uint_eq(bosch_problem_query_heads(p), 448);
    /* Defaults: ratio 0.5, no fixed units, feasible. */
    ck_assert_double_eq(bosch_problem_target_ratio(p), 0.5);
    ck_assert_uint_eq(bosch_problem_target_units(p), 112);
    for (uint32_t l = 0; l < 28; l++)
        for (uint32_t g = 0; g < 8; g++)
            ck_assert_int_eq(bosch_problem_unit_fix(p, l, g), BOSCH_FIX_NONE);
    ck_assert_int_eq(bosch_problem_check(p, NULL, 0), BOSCH_OK);
    bosch_problem_free(p);
}
END_TEST

START_TEST(problem_create_invalid)
{
    ck_assert_ptr_null(bosch_problem_create(0, 8, 1));
    ck_assert_ptr_null(bosch_problem_create(8, 0, 1));
    ck_assert_ptr_null(bosch_problem_create(8, 8, 0));
    /* More than 2^24 units. */
    ck_assert_ptr_null(bosch_problem_create(4097, 4096, 1));
    ck_assert_ptr_null(bosch_problem_create((1u << 24) + 1, 1, 1));
    /* Overflowing products must not wrap into a small valid size. */
    ck_assert_ptr_null(bosch_problem_create(UINT32_MAX, UINT32_MAX, 1));
    ck_assert_ptr_null(bosch_problem_create(65536, 65537, 1));
    /* Exactly 2^24 units is allowed. */
    bosch_problem *p = bosch_problem_create(1u << 12, 1u << 12, 1);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(bosch_problem_units(p), (size_t)1 << 24);
    bosch_problem_free(p);
}
END_TEST

START_TEST(problem_target)
{
    bosch_problem *p = bosch_problem_create(2, 5, 1); /* 10 units */
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(bosch_problem_target_units(p), 5);
    ck_assert_int_eq(bosch_problem_set_target_ratio(p, 0.25), BOSCH_OK); /* 2.5 -> 3 */
    ck_assert_uint_eq(bosch_problem_target_units(p), 3);
    ck_assert_double_eq(bosch_problem_target_ratio(p), 0.25);
    ck_assert_int_eq(bosch_problem_set_target_ratio(p, 0.24), BOSCH_OK); /* 2.4 -> 2 */
    ck_assert_uint_eq(bosch_problem_target_units(p), 2);
    ck_assert_int_eq(bosch_problem_set_target_ratio(p, 0.0), BOSCH_OK);
    ck_assert_uint_eq(bosch_problem_target_units(p), 0);
    ck_assert_int_eq(bosch_problem_set_target_ratio(p, 1.0), BOSCH_OK);
    ck_assert_uint_eq(bosch_problem_target_units(p), 10);

    ck_assert_int_eq(bosch_problem_set_target_units(p, 7), BOSCH_OK);
    ck_assert_uint_eq(bosch_problem_target_units(p), 7);
    ck_assert_double_eq_tol(bosch_problem_target_ratio(p), 0.7, 1e-15);
    ck_assert_int_eq(bosch_problem_set_target_units(p, 0), BOSCH_OK);
    ck_assert_uint_eq(bosch_problem_target_units(p), 0);
    ck_assert_int_eq(bosch_problem_set_target_units(p, 10), BOSCH_OK);
    ck_assert_uint_eq(bosch_problem_target_units(p), 10);
    ck_assert_int_eq(bosch_problem_set_target_units(p, 11), BOSCH_E_INVALID);
    ck_assert_uint_eq(bosch_problem_target_units(p), 10); /* unchanged */
    ck_assert_int_eq(bosch_problem_set_target_units(p, 4), BOSCH_OK);
    /* Setting a ratio clears the exact count. */
    ck_assert_int_eq(bosch_problem_set_target_ratio(p, 0.5), BOSCH_OK);
    ck_assert_uint_eq(bosch_problem_target_units(p), 5);
    ck_assert_double_eq(bosch_problem_target_ratio(p), 0.5);

    ck_assert_int_eq(bosch_problem_set_target_ratio(p, -0.01), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_problem_set_target_ratio(p, 1.01), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_problem_set_target_ratio(p, NAN), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_problem_set_target_ratio(p, INFINITY), BOSCH_E_INVALID);
    ck_assert_uint_eq(bosch_problem_target_units(p), 5); /* unchanged */

    ck_assert_int_eq(bosch_problem_set_target_ratio(NULL, 0.5), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_problem_set_target_units(NULL, 1), BOSCH_E_INVALID);
    bosch_problem_free(p);
}
END_TEST

START_TEST(problem_fix)
{
    bosch_problem *p = bosch_problem_create(3, 4, 1);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(bosch_problem_fix_unit(p, 1, 2, BOSCH_FIX_SWA), BOSCH_OK);
    ck_assert_int_eq(bosch_problem_fix_unit(p, 2, 3, BOSCH_FIX_FULL), BOSCH_OK);
    ck_assert_int_eq(bosch_problem_unit_fix(p, 1, 2), BOSCH_FIX_SWA);
    ck_assert_int_eq(bosch_problem_unit_fix(p, 2, 3), BOSCH_FIX_FULL);
    ck_assert_int_eq(bosch_problem_unit_fix(p, 0, 0), BOSCH_FIX_NONE);
    ck_assert_int_eq(bosch_problem_fix_unit(p, 1, 2, BOSCH_FIX_NONE), BOSCH_OK);
    ck_assert_int_eq(bosch_problem_unit_fix(p, 1, 2), BOSCH_FIX_NONE);

    ck_assert_int_eq(bosch_problem_fix_unit(p, 3, 0, BOSCH_FIX_SWA), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_problem_fix_unit(p, 0, 4, BOSCH_FIX_SWA), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_problem_fix_unit(p, 0, 0, 3), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_problem_fix_unit(p, 0, 0, -1), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_problem_unit_fix(p, 0, 0), BOSCH_FIX_NONE);
    ck_assert_int_eq(bosch_problem_unit_fix(p, 3, 0), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_problem_unit_fix(p, 0, 4), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_problem_fix_unit(NULL, 0, 0, BOSCH_FIX_SWA), BOSCH_E_INVALID);
    bosch_problem_free(p);
}
END_TEST

START_TEST(problem_bounds_and_check)
{
    char why[256];
    bosch_problem *p = bosch_problem_create(2, 4, 1); /* 8 units, target 4 */
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(bosch_problem_set_layer_bounds(p, 0, 0.25, 0.75), BOSCH_OK);
    ck_assert_int_eq(bosch_problem_check(p, why, sizeof why), BOSCH_OK);

    ck_assert_int_eq(bosch_problem_set_layer_bounds(p, 2, 0.0, 1.0), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_problem_set_layer_bounds(p, 0, -0.1, 1.0), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_problem_set_layer_bounds(p, 0, 0.0, 1.1), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_problem_set_layer_bounds(p, 0, NAN, 1.0), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_problem_set_layer_bounds(p, 0, 0.0, NAN), BOSCH_E_INVALID);
    ck_assert_int_lt(bosch_problem_set_layer_bounds(p, 0, 0.75, 0.25), 0); /* min > max */
    ck_assert_int_eq(bosch_problem_set_layer_bounds(NULL, 0, 0.0, 1.0), BOSCH_E_INVALID);

    /* Bounds too tight for the target: max 1 + 1 < 4. */
    ck_assert_int_eq(bosch_problem_set_layer_bounds(p, 0, 0.0, 0.25), BOSCH_OK);
    ck_assert_int_eq(bosch_problem_set_layer_bounds(p, 1, 0.0, 0.25), BOSCH_OK);
    why[0] = '\0';
    ck_assert_int_eq(bosch_problem_check(p, why, sizeof why), BOSCH_E_INFEASIBLE);
    ck_assert_msg(why[0] != '\0', "check gave no reason");
    ck_assert_int_eq(bosch_problem_check(p, NULL, 0), BOSCH_E_INFEASIBLE);
    /* Small why buffer: must stay NUL-terminated. */
    memset(why, 'x', sizeof why);
    ck_assert_int_eq(bosch_problem_check(p, why, 4), BOSCH_E_INFEASIBLE);
    ck_assert_msg(memchr(why, '\0', 4) != NULL, "why not NUL-terminated within why_len");

    /* Relax: 2 + 2 = 4 ok. */
    ck_assert_int_eq(bosch_problem_set_layer_bounds(p, 0, 0.0, 0.5), BOSCH_OK);
    ck_assert_int_eq(bosch_problem_set_layer_bounds(p, 1, 0.0, 0.5), BOSCH_OK);
    ck_assert_int_eq(bosch_problem_check(p, NULL, 0), BOSCH_OK);
    /* Minimums above the target: 3 + 3 > 4. */
    ck_assert_int_eq(bosch_problem_set_layer_bounds(p, 0, 0.75, 1.0), BOSCH_OK);
    ck_assert_int_eq(bosch_problem_set_layer_bounds(p, 1, 0.75, 1.0), BOSCH_OK);
    ck_assert_int_eq(bosch_problem_check(p, NULL, 0), BOSCH_E_INFEASIBLE);
    /* Bounds with no integer inside: [ceil(0.3*4), floor(0.45*4)] = [2, 1]. */
    ck_assert_int_eq(bosch_problem_set_layer_bounds(p, 0, 0.0, 1.0), BOSCH_OK);
    ck_assert_int_eq(bosch_problem_set_layer_bounds(p, 1, 0.3, 0.45), BOSCH_OK);
    ck_assert_int_eq(bosch_problem_check(p, NULL, 0), BOSCH_E_INFEASIBLE);
    ck_assert_int_eq(bosch_problem_check(NULL, NULL, 0), BOSCH_E_INVALID);
    bosch_problem_free(p);
}
END_TEST

START_TEST(problem_check_fixed)
{
    bosch_problem *p = bosch_problem_create(2, 2, 1); /* 4 units, target 2 */
    ck_assert_ptr_nonnull(p);
    for (uint32_t g = 0; g < 2; g++) {
        ck_assert_int_eq(bosch_problem_fix_unit(p, 0, g, BOSCH_FIX_SWA), BOSCH_OK);
        ck_assert_int_eq(bosch_problem_fix_unit(p, 1, g, BOSCH_FIX_SWA), BOSCH_OK);
    }
    ck_assert_int_eq(bosch_problem_check(p, NULL, 0), BOSCH_E_INFEASIBLE); /* 4 fixed SWA > 2 */
    ck_assert_int_eq(bosch_problem_set_target_units(p, 4), BOSCH_OK);
    ck_assert_int_eq(bosch_problem_check(p, NULL, 0), BOSCH_OK);
    /* Fixed SWA against a layer maximum. */
    ck_assert_int_eq(bosch_problem_set_layer_bounds(p, 0, 0.0, 0.5), BOSCH_OK);
    ck_assert_int_eq(bosch_problem_check(p, NULL, 0), BOSCH_E_INFEASIBLE);
    bosch_problem_free(p);

    p = bosch_problem_create(2, 2, 1);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(bosch_problem_set_target_units(p, 3), BOSCH_OK);
    ck_assert_int_eq(bosch_problem_fix_unit(p, 0, 0, BOSCH_FIX_FULL), BOSCH_OK);
    ck_assert_int_eq(bosch_problem_check(p, NULL, 0), BOSCH_OK);
    ck_assert_int_eq(bosch_problem_fix_unit(p, 1, 1, BOSCH_FIX_FULL), BOSCH_OK);
    ck_assert_int_eq(bosch_problem_check(p, NULL, 0), BOSCH_E_INFEASIBLE); /* 2 free < 3 */
    /* Fixed FULL against a layer minimum. */
    ck_assert_int_eq(bosch_problem_set_target_units(p, 2), BOSCH_OK);
    ck_assert_int_eq(bosch_problem_check(p, NULL, 0), BOSCH_OK);
    ck_assert_int_eq(bosch_problem_set_layer_bounds(p, 0, 1.0, 1.0), BOSCH_OK);
    ck_assert_int_eq(bosch_problem_check(p, NULL, 0), BOSCH_E_INFEASIBLE);
    bosch_problem_free(p);
}
END_TEST

START_TEST(problem_clone)
{
    bosch_problem *p = bosch_problem_create(2, 4, 3);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(bosch_problem_set_target_units(p, 3), BOSCH_OK);
    ck_assert_int_eq(bosch_problem_fix_unit(p, 1, 1, BOSCH_FIX_SWA), BOSCH_OK);
    ck_assert_int_eq(bosch_problem_set_layer_bounds(p, 0, 0.0, 0.0), BOSCH_OK);
    bosch_problem *c = bosch_problem_clone(p);
    ck_assert_ptr_nonnull(c);
    ck_assert_uint_eq(bosch_problem_layers(c), 2);
    ck_assert_uint_eq(bosch_problem_kv_groups(c), 4);
    ck_assert_uint_eq(bosch_problem_heads_per_group(c), 3);
    ck_assert_uint_eq(bosch_problem_target_units(c), 3);
    ck_assert_int_eq(bosch_problem_unit_fix(c, 1, 1), BOSCH_FIX_SWA);
    /* Bounds are copied: layer 0 must stay full. */
    uint8_t m[8] = {1, 0, 0, 0, 0, 1, 1, 0};
    ck_assert(!bosch_mask_is_feasible(c, m));
    uint8_t m2[8] = {0, 0, 0, 0, 1, 1, 1, 0};
    ck_assert(bosch_mask_is_feasible(c, m2));
    /* Independent copies. */
    ck_assert_int_eq(bosch_problem_fix_unit(c, 1, 1, BOSCH_FIX_NONE), BOSCH_OK);
    ck_assert_int_eq(bosch_problem_unit_fix(p, 1, 1), BOSCH_FIX_SWA);
    bosch_problem_free(p);
    ck_assert_uint_eq(bosch_problem_target_units(c), 3);
    bosch_problem_free(c);
    ck_assert_ptr_null(bosch_problem_clone(NULL));
}
END_TEST

START_TEST(mask_feasible_basic)
{
    bosch_problem *p = bosch_problem_create(2, 3, 1); /* 6 units, target 3 */
    ck_assert_ptr_nonnull(p);
    uint8_t a[6] = {1, 1, 1, 0, 0, 0};
    uint8_t b[6] = {1, 1, 0, 0, 0, 0};
    uint8_t c[6] = {7, 0, 255, 0, 1, 0}; /* any non-zero byte is 1 */
    ck_assert(bosch_mask_is_feasible(p, a));
    ck_assert(!bosch_mask_is_feasible(p, b));
    ck_assert(bosch_mask_is_feasible(p, c));
    ck_assert_int_eq(bosch_problem_fix_unit(p, 0, 0, BOSCH_FIX_FULL), BOSCH_OK);
    ck_assert(!bosch_mask_is_feasible(p, a));
    ck_assert(!bosch_mask_is_feasible(p, c));
    uint8_t d[6] = {0, 1, 1, 1, 0, 0};
    ck_assert(bosch_mask_is_feasible(p, d));
    ck_assert_int_eq(bosch_problem_set_layer_bounds(p, 1, 0.5, 1.0), BOSCH_OK); /* >= 2 */
    ck_assert(!bosch_mask_is_feasible(p, d));
    uint8_t e[6] = {0, 1, 0, 1, 0, 1};
    ck_assert(bosch_mask_is_feasible(p, e));
    ck_assert_int_eq(bosch_problem_set_layer_bounds(p, 1, 0.0, 0.34), BOSCH_OK); /* <= 1 */
    ck_assert(!bosch_mask_is_feasible(p, e));
    ck_assert(!bosch_mask_is_feasible(NULL, e));
    ck_assert(!bosch_mask_is_feasible(p, NULL));
    bosch_problem_free(p);
}
END_TEST

START_TEST(mask_expand)
{
    bosch_problem *p = bosch_problem_create(2, 3, 4);
    ck_assert_ptr_nonnull(p);
    uint8_t unit[6] = {1, 0, 1, 0, 0, 1};
    uint8_t head[24];
    memset(head, 0xAA, sizeof head);
    ck_assert_int_eq(bosch_mask_expand_heads(p, unit, head), BOSCH_OK);
    for (size_t l = 0; l < 2; l++)
        for (size_t h = 0; h < 12; h++)
            ck_assert_uint_eq(head[l * 12 + h], unit[l * 3 + h / 4]);
    ck_assert_int_eq(bosch_mask_expand_heads(NULL, unit, head), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_mask_expand_heads(p, NULL, head), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_mask_expand_heads(p, unit, NULL), BOSCH_E_INVALID);
    bosch_problem_free(p);
}
END_TEST

START_TEST(kv_saving)
{
    ck_assert_double_eq_tol(bosch_kv_saving(0.5, 32768, 1024, 0), 0.5 * (1.0 - 1024.0 / 32768.0),
                            1e-15);
    ck_assert_double_eq_tol(bosch_kv_saving(0.75, 32768, 1024, 4),
                            0.75 * (1.0 - 1028.0 / 32768.0), 1e-15);
    ck_assert_double_eq_tol(bosch_kv_saving(0.0, 32768, 1024, 4), 0.0, 1e-15);
    ck_assert_double_eq_tol(bosch_kv_saving(1.0, 1000, 2000, 0), 0.0, 1e-15); /* clamped */
    ck_assert_double_eq_tol(bosch_kv_saving(1.0, 1000, 990, 20), 0.0, 1e-15);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Optimizer options                                                         */
/* ------------------------------------------------------------------------ */
static bosch_optimizer *new_opt(uint32_t L, uint32_t G)
{
    bosch_problem *p = bosch_problem_create(L, G, 1);
    ck_assert_ptr_nonnull(p);
    bosch_optimizer *opt = bosch_optimizer_create(p);
    bosch_problem_free(p); /* the optimizer holds its own copy */
    ck_assert_ptr_nonnull(opt);
    return opt;
}

START_TEST(optimizer_create)
{
    ck_assert_ptr_null(bosch_optimizer_create(NULL));
    bosch_optimizer *opt = new_opt(4, 4);
    ck_assert_ptr_nonnull(bosch_optimizer_last_error(opt));
    ck_assert_str_eq(bosch_optimizer_last_error(opt), "");
    ck_assert_int_eq(bosch_evaluator_status(opt), 0);
    bosch_optimizer_free(opt);
}
END_TEST

START_TEST(typed_setters_valid)
{
    bosch_optimizer *opt = new_opt(4, 4);
    ck_assert_int_eq(bosch_set_seed(opt, 0), BOSCH_OK);
    ck_assert_int_eq(bosch_set_seed(opt, UINT64_MAX), BOSCH_OK);
    ck_assert_int_eq(bosch_set_budget(opt, 1), BOSCH_OK);
    ck_assert_int_eq(bosch_set_budget(opt, 1000000), BOSCH_OK);
    ck_assert_int_eq(bosch_set_stage_budget(opt, BOSCH_STAGE_PROBE, 10), BOSCH_OK);
    ck_assert_int_eq(bosch_set_stage_budget(opt, BOSCH_STAGE_GROUP, 0), BOSCH_OK);
    ck_assert_int_eq(bosch_set_probe_fraction(opt, 0.0), BOSCH_OK);
    ck_assert_int_eq(bosch_set_probe_fraction(opt, 1.0), BOSCH_OK);
    ck_assert_int_eq(bosch_set_polish_fraction(opt, 0.0), BOSCH_OK);
    ck_assert_int_eq(bosch_set_polish_fraction(opt, 1.0), BOSCH_OK);
    ck_assert_int_eq(bosch_set_time_limit(opt, 0.0), BOSCH_OK);
    ck_assert_int_eq(bosch_set_time_limit(opt, 3.5), BOSCH_OK);
    ck_assert_int_eq(bosch_set_alpha(opt, 0.0), BOSCH_OK);
    ck_assert_int_eq(bosch_set_alpha(opt, 10.0), BOSCH_OK);
    ck_assert_int_eq(bosch_set_group_cap(opt, 1), BOSCH_OK);
    ck_assert_int_eq(bosch_set_batch_size(opt, 1), BOSCH_OK);
    ck_assert_int_eq(bosch_set_batch_size(opt, 4096), BOSCH_OK);
    ck_assert_int_eq(bosch_set_ratio_spread(opt, 0.0), BOSCH_OK);
    ck_assert_int_eq(bosch_set_ratio_spread(opt, 1.0), BOSCH_OK);
    for (int v = 0; v < 4; v++)
        ck_assert_int_eq(bosch_set_variant(opt, v), BOSCH_OK);
    bosch_strategy *s = bosch_strategy_builtin("random");
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(bosch_set_strategy(opt, -1, s), BOSCH_OK);
    ck_assert_int_eq(bosch_set_strategy(opt, BOSCH_STAGE_PROBE, s), BOSCH_OK);
    ck_assert_int_eq(bosch_set_strategy(opt, BOSCH_STAGE_GROUP, s), BOSCH_OK);
    bosch_strategy_free(s);
    ck_assert_int_eq(bosch_set_strategy(opt, -1, NULL), BOSCH_OK);
    ck_assert_int_eq(bosch_set_anchors(opt, 1.0, 0.1), BOSCH_OK);
    ck_assert_int_eq(bosch_set_log(opt, NULL, NULL, BOSCH_LOG_DEBUG), BOSCH_OK);
    ck_assert_int_eq(bosch_set_progress(opt, NULL, NULL), BOSCH_OK);
    ck_assert_str_eq(bosch_optimizer_last_error(opt), "");
    bosch_optimizer_free(opt);
}
END_TEST

START_TEST(typed_setters_invalid)
{
    bosch_optimizer *opt = new_opt(4, 4);
    ck_assert_int_eq(bosch_set_budget(opt, 0), BOSCH_E_INVALID);
    ck_assert_msg(bosch_optimizer_last_error(opt)[0] != '\0', "last_error empty after an error");
    ck_assert_int_eq(bosch_set_stage_budget(opt, BOSCH_STAGE_ANCHORS, 10), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_stage_budget(opt, BOSCH_STAGE_ALLOC, 10), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_stage_budget(opt, 7, 10), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_probe_fraction(opt, -0.1), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_probe_fraction(opt, 1.1), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_probe_fraction(opt, NAN), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_polish_fraction(opt, -0.1), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_polish_fraction(opt, 1.1), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_polish_fraction(opt, NAN), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_time_limit(opt, -1.0), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_time_limit(opt, NAN), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_alpha(opt, -0.5), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_alpha(opt, NAN), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_alpha(opt, INFINITY), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_group_cap(opt, 0), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_batch_size(opt, 0), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_batch_size(opt, 4097), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_ratio_spread(opt, -0.1), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_ratio_spread(opt, 1.5), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_ratio_spread(opt, NAN), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_variant(opt, 4), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_variant(opt, -1), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_strategy(opt, BOSCH_STAGE_ALLOC, NULL), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_strategy(opt, 9, NULL), BOSCH_E_INVALID);
    /* Anchors: BOSCH_E_BAD_SCORE unless finite, BOSCH_E_ANCHORS unless s_full > s_allswa. */
    ck_assert_int_eq(bosch_set_anchors(opt, 0.5, 0.5), BOSCH_E_ANCHORS);
    ck_assert_int_eq(bosch_set_anchors(opt, 0.2, 0.5), BOSCH_E_ANCHORS);
    ck_assert_int_eq(bosch_set_anchors(opt, NAN, 0.5), BOSCH_E_BAD_SCORE);
    ck_assert_int_eq(bosch_set_anchors(opt, INFINITY, 0.5), BOSCH_E_BAD_SCORE);
    ck_assert_int_eq(bosch_set_anchors(opt, 1.0, -INFINITY), BOSCH_E_BAD_SCORE);
    ck_assert_int_eq(bosch_set_anchors(opt, 1.0, NAN), BOSCH_E_BAD_SCORE);
    ck_assert_msg(bosch_optimizer_last_error(opt)[0] != '\0', "last_error empty after an error");
    bosch_optimizer_free(opt);
}
END_TEST

START_TEST(typed_setters_null)
{
    ck_assert_int_eq(bosch_set_seed(NULL, 1), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_budget(NULL, 10), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_stage_budget(NULL, BOSCH_STAGE_PROBE, 10), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_probe_fraction(NULL, 0.3), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_polish_fraction(NULL, 0.1), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_time_limit(NULL, 1.0), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_alpha(NULL, 1.0), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_group_cap(NULL, 4), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_batch_size(NULL, 4), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_ratio_spread(NULL, 0.5), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_variant(NULL, 0), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_strategy(NULL, -1, NULL), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_anchors(NULL, 1.0, 0.0), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_option(NULL, "seed", "1"), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_get_option(NULL, "seed", NULL, 0), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_log(NULL, NULL, NULL, 0), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_progress(NULL, NULL, NULL), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_evaluator(NULL, bosch_testbed_eval, NULL), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_batch_evaluator(NULL, bosch_testbed_batch_eval, NULL),
                     BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_optimize(NULL), BOSCH_E_INVALID);
    size_t n = 99;
    ck_assert_int_eq(bosch_ask(NULL, &n), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_tell(NULL, 0, 1.0), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_tell_failure(NULL, 0, 1), BOSCH_E_INVALID);
    uint8_t m[4];
    ck_assert_int_eq(bosch_candidate(NULL, 0, m), BOSCH_E_INVALID);
    ck_assert_int_lt(bosch_candidate_stage(NULL), 0);
    bosch_result *r = NULL;
    ck_assert_int_eq(bosch_get_result(NULL, &r), BOSCH_E_INVALID);
    bosch_force_stop(NULL); /* must not crash */
}
END_TEST

static int get_opt_str(bosch_optimizer *opt, const char *name, char *buf, size_t len)
{
    int rc = bosch_get_option(opt, name, buf, len);
    ck_assert_msg(rc >= 0, "get_option(%s) -> %d", name, rc);
    ck_assert_msg((size_t)rc == strlen(buf), "get_option(%s) returned %d for \"%s\"", name, rc, buf);
    return rc;
}

static double get_opt_double(bosch_optimizer *opt, const char *name)
{
    char buf[128], *end = NULL;
    get_opt_str(opt, name, buf, sizeof buf);
    double v = strtod(buf, &end);
    ck_assert_msg(end != buf && *end == '\0', "get_option(%s) = \"%s\" not a number", name, buf);
    return v;
}

START_TEST(option_defaults)
{
    char buf[128];
    bosch_optimizer *opt = new_opt(4, 4);
    get_opt_str(opt, "seed", buf, sizeof buf);
    ck_assert_str_eq(buf, "0");
    get_opt_str(opt, "budget", buf, sizeof buf);
    ck_assert_str_eq(buf, "1000");
    get_opt_str(opt, "probe_budget", buf, sizeof buf);
    ck_assert_str_eq(buf, "0");
    get_opt_str(opt, "group_budget", buf, sizeof buf);
    ck_assert_str_eq(buf, "0");
    get_opt_str(opt, "group_cap", buf, sizeof buf);
    ck_assert_str_eq(buf, "48");
    get_opt_str(opt, "batch_size", buf, sizeof buf);
    ck_assert_str_eq(buf, "4");
    get_opt_str(opt, "variant", buf, sizeof buf);
    ck_assert_str_eq(buf, "full");
    get_opt_str(opt, "probe_strategy", buf, sizeof buf);
    ck_assert_str_eq(buf, "auto");
    get_opt_str(opt, "group_strategy", buf, sizeof buf);
    ck_assert_str_eq(buf, "auto");
    ck_assert_double_eq_tol(get_opt_double(opt, "probe_fraction"), 0.2, 1e-12);
    ck_assert_double_eq_tol(get_opt_double(opt, "polish_fraction"), 0.8, 1e-12);
    ck_assert_double_eq_tol(get_opt_double(opt, "time_limit"), 0.0, 1e-12);
    ck_assert_double_eq_tol(get_opt_double(opt, "alpha"), 1.0, 1e-12);
    ck_assert_double_eq_tol(get_opt_double(opt, "ratio_spread"), 0.5, 1e-12);
    bosch_optimizer_free(opt);
}
END_TEST

START_TEST(option_roundtrip)
{
    char buf[128];
    bosch_optimizer *opt = new_opt(4, 4);
    static const char *const ints[][2] = {{"seed", "18446744073709551615"},
                                          {"seed", "12345"},
                                          {"budget", "777"},
                                          {"probe_budget", "40"},
                                          {"group_budget", "200"},
                                          {"group_cap", "16"},
                                          {"batch_size", "4096"},
                                          {"variant", "probe-only"},
                                          {"variant", "group-only"},
                                          {"variant", "layer-level"},
                                          {"probe_strategy", "swap"},
                                          {"group_strategy", "ea"}};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        ck_assert_msg(bosch_set_option(opt, ints[i][0], ints[i][1]) == BOSCH_OK,
                      "set_option(%s, %s)", ints[i][0], ints[i][1]);
        get_opt_str(opt, ints[i][0], buf, sizeof buf);
        ck_assert_str_eq(buf, ints[i][1]);
    }
    ck_assert_int_eq(bosch_set_option(opt, "strategy", "mads"), BOSCH_OK);
    get_opt_str(opt, "probe_strategy", buf, sizeof buf);
    ck_assert_str_eq(buf, "mads");
    get_opt_str(opt, "group_strategy", buf, sizeof buf);
    ck_assert_str_eq(buf, "mads");
    get_opt_str(opt, "strategy", buf, sizeof buf); /* readable too */

    ck_assert_int_eq(bosch_set_option(opt, "probe_fraction", "0.25"), BOSCH_OK);
    ck_assert_double_eq_tol(get_opt_double(opt, "probe_fraction"), 0.25, 1e-12);
    ck_assert_int_eq(bosch_set_option(opt, "polish_fraction", "0.375"), BOSCH_OK);
    ck_assert_double_eq_tol(get_opt_double(opt, "polish_fraction"), 0.375, 1e-12);
    ck_assert_int_eq(bosch_set_polish_fraction(opt, 0.75), BOSCH_OK);
    ck_assert_double_eq_tol(get_opt_double(opt, "polish_fraction"), 0.75, 1e-12);
    ck_assert_int_eq(bosch_set_option(opt, "time_limit", "2.5"), BOSCH_OK);
    ck_assert_double_eq_tol(get_opt_double(opt, "time_limit"), 2.5, 1e-12);
    ck_assert_int_eq(bosch_set_option(opt, "alpha", "3.75"), BOSCH_OK);
    ck_assert_double_eq_tol(get_opt_double(opt, "alpha"), 3.75, 1e-12);
    ck_assert_int_eq(bosch_set_option(opt, "ratio_spread", "0.125"), BOSCH_OK);
    ck_assert_double_eq_tol(get_opt_double(opt, "ratio_spread"), 0.125, 1e-12);

    /* Typed setters are visible through get_option. */
    ck_assert_int_eq(bosch_set_budget(opt, 4242), BOSCH_OK);
    get_opt_str(opt, "budget", buf, sizeof buf);
    ck_assert_str_eq(buf, "4242");
    ck_assert_int_eq(bosch_set_variant(opt, BOSCH_VARIANT_FULL), BOSCH_OK);
    get_opt_str(opt, "variant", buf, sizeof buf);
    ck_assert_str_eq(buf, "full");
    ck_assert_int_eq(bosch_set_stage_budget(opt, BOSCH_STAGE_GROUP, 99), BOSCH_OK);
    get_opt_str(opt, "group_budget", buf, sizeof buf);
    ck_assert_str_eq(buf, "99");
    ck_assert_int_eq(bosch_set_alpha(opt, 0.5), BOSCH_OK);
    ck_assert_double_eq_tol(get_opt_double(opt, "alpha"), 0.5, 1e-12);
    bosch_strategy *s = bosch_strategy_builtin("random");
    ck_assert_int_eq(bosch_set_strategy(opt, BOSCH_STAGE_PROBE, s), BOSCH_OK);
    bosch_strategy_free(s);
    get_opt_str(opt, "probe_strategy", buf, sizeof buf);
    ck_assert_str_eq(buf, "random");
    ck_assert_int_eq(bosch_set_strategy(opt, BOSCH_STAGE_PROBE, NULL), BOSCH_OK);
    get_opt_str(opt, "probe_strategy", buf, sizeof buf);
    ck_assert_str_eq(buf, "auto");
    bosch_optimizer_free(opt);
}
END_TEST

START_TEST(option_errors)
{
    char buf[64];
    bosch_optimizer *opt = new_opt(4, 4);
    ck_assert_int_eq(bosch_set_option(opt, "no_such_option", "1"), BOSCH_E_OPTION);
    ck_assert_msg(bosch_optimizer_last_error(opt)[0] != '\0', "last_error empty after E_OPTION");
    ck_assert_int_eq(bosch_set_option(opt, "", "1"), BOSCH_E_OPTION);
    ck_assert_int_eq(bosch_set_option(opt, "budget", "abc"), BOSCH_E_OPTION);
    ck_assert_int_eq(bosch_set_option(opt, "budget", "12abc"), BOSCH_E_OPTION);
    ck_assert_int_eq(bosch_set_option(opt, "budget", ""), BOSCH_E_OPTION);
    ck_assert_int_eq(bosch_set_option(opt, "seed", "-x"), BOSCH_E_OPTION);
    ck_assert_int_eq(bosch_set_option(opt, "alpha", "one"), BOSCH_E_OPTION);
    ck_assert_int_eq(bosch_set_option(opt, "probe_fraction", "0.3.1"), BOSCH_E_OPTION);
    int rc = bosch_set_option(opt, "variant", "medium");
    ck_assert_msg(rc == BOSCH_E_OPTION || rc == BOSCH_E_INVALID, "variant=medium -> %d", rc);
    rc = bosch_set_option(opt, "strategy", "no_such_strategy");
    ck_assert_msg(rc == BOSCH_E_OPTION || rc == BOSCH_E_INVALID, "strategy=bad -> %d", rc);
    rc = bosch_set_option(opt, "budget", "0"); /* parsable but out of range */
    ck_assert_msg(rc == BOSCH_E_OPTION || rc == BOSCH_E_INVALID, "budget=0 -> %d", rc);
    rc = bosch_set_option(opt, "probe_fraction", "1.5");
    ck_assert_msg(rc == BOSCH_E_OPTION || rc == BOSCH_E_INVALID, "probe_fraction=1.5 -> %d", rc);
    rc = bosch_set_option(opt, "polish_fraction", "2");
    ck_assert_msg(rc == BOSCH_E_OPTION || rc == BOSCH_E_INVALID, "polish_fraction=2 -> %d", rc);
    ck_assert_int_eq(bosch_set_option(opt, "polish_fraction", "x"), BOSCH_E_OPTION);
    rc = bosch_set_option(opt, "batch_size", "5000");
    ck_assert_msg(rc == BOSCH_E_OPTION || rc == BOSCH_E_INVALID, "batch_size=5000 -> %d", rc);
    ck_assert_int_eq(bosch_set_option(opt, NULL, "1"), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_option(opt, "seed", NULL), BOSCH_E_INVALID);
    /* Nothing changed. */
    get_opt_str(opt, "budget", buf, sizeof buf);
    ck_assert_str_eq(buf, "1000");
    get_opt_str(opt, "variant", buf, sizeof buf);
    ck_assert_str_eq(buf, "full");
    get_opt_str(opt, "batch_size", buf, sizeof buf);
    ck_assert_str_eq(buf, "4");
    ck_assert_int_lt(bosch_get_option(opt, "no_such_option", buf, sizeof buf), 0);
    ck_assert_int_lt(bosch_get_option(opt, NULL, buf, sizeof buf), 0);
    bosch_optimizer_free(opt);
}
END_TEST

START_TEST(option_truncation)
{
    char buf[16];
    bosch_optimizer *opt = new_opt(4, 4);
    ck_assert_int_eq(bosch_set_option(opt, "seed", "123456789"), BOSCH_OK);
    memset(buf, 'x', sizeof buf);
    ck_assert_int_eq(bosch_get_option(opt, "seed", buf, 4), 9);
    ck_assert_str_eq(buf, "123");
    ck_assert_uint_eq((uint8_t)buf[4], 'x'); /* nothing written past len */
    memset(buf, 'x', sizeof buf);
    ck_assert_int_eq(bosch_get_option(opt, "seed", buf, 0), 9);
    ck_assert_uint_eq((uint8_t)buf[0], 'x');
    ck_assert_int_eq(bosch_get_option(opt, "seed", buf, 10), 9);
    ck_assert_str_eq(buf, "123456789");
    ck_assert_int_eq(bosch_get_option(opt, "variant", buf, 2), 4);
    ck_assert_str_eq(buf, "f");
    bosch_optimizer_free(opt);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* State errors                                                              */
/* ------------------------------------------------------------------------ */
START_TEST(state_before_ask)
{
    bosch_optimizer *opt = new_opt(4, 4);
    uint8_t m[16];
    /* No batch pending: E_STATE is the natural code; E_INVALID (index out of
     * the empty batch) is tolerated, see the report. */
    int rc0 = bosch_tell(opt, 0, 1.0);
    ck_assert_msg(rc0 == BOSCH_E_STATE || rc0 == BOSCH_E_INVALID, "tell before ask -> %d", rc0);
    rc0 = bosch_tell_failure(opt, 0, 3);
    ck_assert_msg(rc0 == BOSCH_E_STATE || rc0 == BOSCH_E_INVALID, "tell_failure before ask -> %d",
                  rc0);
    ck_assert_int_eq(bosch_evaluator_status(opt), 0);
    rc0 = bosch_candidate(opt, 0, m);
    ck_assert_msg(rc0 == BOSCH_E_STATE || rc0 == BOSCH_E_INVALID, "candidate before ask -> %d",
                  rc0);
    ck_assert_int_lt(bosch_candidate_stage(opt), 0);
    /* No evaluator set. */
    int rc = bosch_optimize(opt);
    ck_assert_msg(rc < 0, "optimize without evaluator -> %d", rc);
    ck_assert_msg(bosch_optimizer_last_error(opt)[0] != '\0', "no last_error");
    bosch_optimizer_free(opt);
}
END_TEST

START_TEST(state_after_start)
{
    bosch_optimizer *opt = new_opt(4, 4);
    size_t n = 0;
    ck_assert_int_eq(bosch_ask(opt, &n), BOSCH_OK);
    ck_assert_uint_gt(n, 0);
    ck_assert_int_eq(bosch_set_seed(opt, 1), BOSCH_E_STATE);
    ck_assert_msg(bosch_optimizer_last_error(opt)[0] != '\0', "no last_error after E_STATE");
    ck_assert_int_eq(bosch_set_budget(opt, 10), BOSCH_E_STATE);
    ck_assert_int_eq(bosch_set_stage_budget(opt, BOSCH_STAGE_PROBE, 10), BOSCH_E_STATE);
    ck_assert_int_eq(bosch_set_probe_fraction(opt, 0.5), BOSCH_E_STATE);
    ck_assert_int_eq(bosch_set_polish_fraction(opt, 0.5), BOSCH_E_STATE);
    ck_assert_int_eq(bosch_set_option(opt, "polish_fraction", "0.5"), BOSCH_E_STATE);
    ck_assert_int_eq(bosch_set_time_limit(opt, 1.0), BOSCH_E_STATE);
    ck_assert_int_eq(bosch_set_alpha(opt, 2.0), BOSCH_E_STATE);
    ck_assert_int_eq(bosch_set_group_cap(opt, 4), BOSCH_E_STATE);
    ck_assert_int_eq(bosch_set_batch_size(opt, 4), BOSCH_E_STATE);
    ck_assert_int_eq(bosch_set_ratio_spread(opt, 0.1), BOSCH_E_STATE);
    ck_assert_int_eq(bosch_set_variant(opt, BOSCH_VARIANT_PROBE_ONLY), BOSCH_E_STATE);
    ck_assert_int_eq(bosch_set_strategy(opt, -1, NULL), BOSCH_E_STATE);
    ck_assert_int_eq(bosch_set_anchors(opt, 1.0, 0.0), BOSCH_E_STATE);
    ck_assert_int_eq(bosch_set_option(opt, "seed", "3"), BOSCH_E_STATE);
    ck_assert_int_eq(bosch_set_option(opt, "budget", "3"), BOSCH_E_STATE);
    /* Reading still works and shows the old values. */
    char buf[32];
    ck_assert_int_ge(bosch_get_option(opt, "budget", buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "1000");
    bosch_optimizer_free(opt);
}
END_TEST

START_TEST(infeasible_problem_reported_on_first_ask)
{
    bosch_problem *p = bosch_problem_create(2, 2, 1);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(bosch_problem_set_target_units(p, 1), BOSCH_OK);
    ck_assert_int_eq(bosch_problem_fix_unit(p, 0, 0, BOSCH_FIX_SWA), BOSCH_OK);
    ck_assert_int_eq(bosch_problem_fix_unit(p, 1, 0, BOSCH_FIX_SWA), BOSCH_OK);
    bosch_optimizer *opt = bosch_optimizer_create(p); /* creation succeeds */
    ck_assert_ptr_nonnull(opt);
    size_t n = 77;
    ck_assert_int_eq(bosch_ask(opt, &n), BOSCH_E_INFEASIBLE);
    ck_assert_msg(bosch_optimizer_last_error(opt)[0] != '\0', "no last_error after E_INFEASIBLE");
    bosch_result *r = NULL;
    ck_assert_int_eq(bosch_get_result(opt, &r), BOSCH_OK);
    ck_assert_int_eq(bosch_result_status(r), BOSCH_E_INFEASIBLE);
    ck_assert_int_eq(bosch_result_feasible(r), 0);
    bosch_result_free(r);
    bosch_optimizer_free(opt);

    bosch_testbed *tb = make_testbed(2, 2, 1, 0.0, 0.0);
    opt = bosch_optimizer_create(p);
    ck_assert_ptr_nonnull(opt);
    ck_assert_int_eq(bosch_set_evaluator(opt, bosch_testbed_eval, tb), BOSCH_OK);
    ck_assert_int_eq(bosch_optimize(opt), BOSCH_E_INFEASIBLE);
    bosch_optimizer_free(opt);
    bosch_testbed_free(tb);
    bosch_problem_free(p);
}
END_TEST

START_TEST(result_before_start)
{
    bosch_optimizer *opt = new_opt(3, 4);
    bosch_result *r = NULL;
    ck_assert_int_eq(bosch_get_result(opt, NULL), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_get_result(opt, &r), BOSCH_OK);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(bosch_result_status(r), BOSCH_OK);
    ck_assert_int_eq(bosch_result_feasible(r), 0);
    ck_assert_uint_eq(bosch_result_units(r), 12);
    ck_assert_uint_eq(bosch_result_layers(r), 3);
    ck_assert_uint_eq(bosch_result_history_size(r), 0);
    ck_assert_uint_eq(bosch_result_evaluations(r, -1), 0);
    ck_assert(isnan(bosch_result_score(r)));
    ck_assert(isnan(bosch_result_normalized_score(r)));
    ck_assert(isnan(bosch_result_objective(r)));
    uint8_t m[12];
    memset(m, 9, sizeof m);
    ck_assert_int_eq(bosch_result_mask(r, m, 12), BOSCH_OK);
    for (int i = 0; i < 12; i++)
        ck_assert_uint_eq(m[i], 0); /* all full */
    ck_assert_int_eq(bosch_result_mask(r, m, 11), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_result_mask(r, NULL, 12), BOSCH_E_INVALID);
    int rc = bosch_result_history_entry(r, 0, NULL, NULL, NULL);
    ck_assert_msg(rc == BOSCH_E_NOT_FOUND || rc == BOSCH_E_INVALID, "history_entry(0) -> %d", rc);
    bosch_result_free(r);
    bosch_optimizer_free(opt);
}
END_TEST


/* ---- issue 9: create errors, the option table, the deprecated names ---- */

START_TEST(create_error_says_why)
{
    ck_assert_ptr_null(bosch_problem_create(0, 8, 2));
    ck_assert_int_eq(bosch_create_status(), BOSCH_E_INVALID);
    ck_assert_ptr_nonnull(strstr(bosch_create_error(), "bosch_problem_create"));
    ck_assert_ptr_nonnull(strstr(bosch_create_error(), "zero"));
    ck_assert_ptr_null(bosch_strategy_builtin("no-such-strategy"));
    ck_assert_int_eq(bosch_create_status(), BOSCH_E_NOT_FOUND);
    ck_assert_ptr_nonnull(strstr(bosch_create_error(), "no-such-strategy"));
    ck_assert_ptr_null(bosch_optimizer_create(NULL));
    ck_assert_int_eq(bosch_create_status(), BOSCH_E_INVALID);
    ck_assert_ptr_nonnull(strstr(bosch_create_error(), "bosch_optimizer_create"));
    ck_assert_ptr_null(bosch_strategy_create("x", NULL, NULL, NULL, NULL, NULL));
    ck_assert_ptr_nonnull(strstr(bosch_create_error(), "propose"));
    ck_assert_ptr_null(bosch_testbed_create(0, 1, 1));
    ck_assert_ptr_nonnull(strstr(bosch_create_error(), "bosch_testbed_create"));
}
END_TEST

/* Every option of the table: a name, a doc, a default that
 * bosch_get_option reads back on a new handle, and a working setter. */
START_TEST(option_table_enumerates)
{
    bosch_problem *p = bosch_problem_create(4, 2, 1);
    bosch_optimizer *opt = bosch_optimizer_create(p);
    size_t n = bosch_option_count();
    ck_assert_uint_ge(n, 18);
    ck_assert_ptr_null(bosch_option_name(n));
    for (size_t i = 0; i < n; i++) {
        const char *name = bosch_option_name(i);
        ck_assert_ptr_nonnull(name);
        ck_assert_ptr_nonnull(bosch_option_doc(name));
        ck_assert_int_ge(bosch_option_type(name), BOSCH_OPTION_UINT);
        const char *def = bosch_option_default(name);
        ck_assert_ptr_nonnull(def);
        char buf[256];
        ck_assert_int_ge(bosch_get_option(opt, name, buf, sizeof buf), 0);
        int type = bosch_option_type(name);
        if (type == BOSCH_OPTION_DOUBLE) {
            ck_assert_double_eq(strtod(buf, NULL), strtod(def, NULL));
        } else {
            ck_assert_str_eq(buf, def);
        }
        /* Setting the default by name is accepted. */
        if (type != BOSCH_OPTION_PATH)
            ck_assert_int_eq(bosch_set_option(opt, name, def), BOSCH_OK);
    }
    ck_assert_int_eq(bosch_option_type("nope"), BOSCH_E_OPTION);
    ck_assert_ptr_null(bosch_option_doc("nope"));
    ck_assert_str_eq(bosch_option_choices("variant"), "full|probe-only|group-only|layer-level");
    double lo = 0, hi = 0;
    ck_assert_int_eq(bosch_option_range("batch_size", &lo, &hi), BOSCH_OK);
    ck_assert_double_eq(lo, 1);
    ck_assert_double_eq(hi, 4096);
    ck_assert_int_eq(bosch_option_range("variant", &lo, &hi), BOSCH_E_INVALID);
    bosch_optimizer_free(opt);
    bosch_problem_free(p);
}
END_TEST

START_TEST(option_typed_by_name)
{
    bosch_problem *p = bosch_problem_create(4, 2, 1);
    bosch_optimizer *opt = bosch_optimizer_create(p);
    uint64_t u = 0;
    double d = 0;
    ck_assert_int_eq(bosch_set_option_uint(opt, "budget", 77), BOSCH_OK);
    ck_assert_int_eq(bosch_get_option_uint(opt, "budget", &u), BOSCH_OK);
    ck_assert_uint_eq(u, 77);
    ck_assert_int_eq(bosch_set_option_uint(opt, "batch_size", 5000), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_option_uint(opt, "alpha", 1), BOSCH_E_OPTION);
    ck_assert_int_eq(bosch_set_option_double(opt, "alpha", 0.25), BOSCH_OK);
    ck_assert_int_eq(bosch_get_option_double(opt, "alpha", &d), BOSCH_OK);
    ck_assert_double_eq(d, 0.25);
    ck_assert_int_eq(bosch_set_option_double(opt, "probe_fraction", 1.5), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_option_double(opt, "time_limit", INFINITY), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_get_option_double(opt, "budget", &d), BOSCH_E_OPTION);
    ck_assert_int_eq(bosch_set_option_uint(opt, "journal_sync", 1), BOSCH_OK);
    ck_assert_int_eq(bosch_get_option_uint(opt, "journal_sync", &u), BOSCH_OK);
    ck_assert_uint_eq(u, 1);
    ck_assert_int_eq(bosch_set_option_uint(opt, "journal_sync", 2), BOSCH_E_INVALID);
    /* Getters on an unknown name leave the handle's message alone. */
    ck_assert_int_eq(bosch_set_option(opt, "bogus", "1"), BOSCH_E_OPTION);
    char before[512];
    snprintf(before, sizeof before, "%s", bosch_optimizer_last_error(opt));
    ck_assert_int_eq(bosch_get_option_uint(opt, "other", &u), BOSCH_E_OPTION);
    char buf[8];
    ck_assert_int_eq(bosch_get_option(opt, "other", buf, sizeof buf), BOSCH_E_OPTION);
    ck_assert_str_eq(bosch_optimizer_last_error(opt), before);
    bosch_optimizer_free(opt);
    bosch_problem_free(p);
}
END_TEST

/* The pre-1.0 names still work until 1.0. */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
static int propose_none(void *st, const bosch_subproblem *sp, uint8_t *c, size_t max, size_t *n)
{
    (void)st;
    (void)sp;
    (void)c;
    (void)max;
    *n = 0;
    return 0;
}

START_TEST(deprecated_aliases)
{
    bosch_problem *p = bosch_problem_create(4, 2, 1);
    bosch_optimizer *opt = bosch_create(p);
    ck_assert_ptr_nonnull(opt);
    ck_assert_str_eq(bosch_last_error(opt), "");
    ck_assert_int_eq(bosch_set_option(opt, "bogus", "1"), BOSCH_E_OPTION);
    ck_assert_str_eq(bosch_last_error(opt), bosch_optimizer_last_error(opt));
    bosch_destroy(opt);
    bosch_strategy *s = bosch_strategy_new("none", NULL, propose_none, NULL, NULL, NULL);
    ck_assert_ptr_nonnull(s);
    ck_assert_str_eq(bosch_strategy_name(s), "none");
    bosch_strategy_free(s);
    bosch_problem_free(p);
}
END_TEST
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

static Suite *api_suite(void)
{
    Suite *s = suite_create("api");
    TCase *tc = tcase_new(s, "version_status");
    tcase_add_test(tc, version_matches_macros);
    tcase_add_test(tc, status_texts_distinct);
    tcase_add_test(tc, status_texts_unknown);
    tcase_add_test(tc, is_error);
    tcase_add_test(tc, stage_and_variant_names);
    tcase_add_test(tc, free_null_is_noop);
    tc = tcase_new(s, "problem");
    tcase_add_test(tc, problem_create_shape);
    tcase_add_test(tc, problem_create_invalid);
    tcase_add_test(tc, problem_target);
    tcase_add_test(tc, problem_fix);
    tcase_add_test(tc, problem_bounds_and_check);
    tcase_add_test(tc, problem_check_fixed);
    tcase_add_test(tc, problem_clone);
    tcase_add_test(tc, mask_feasible_basic);
    tcase_add_test(tc, mask_expand);
    tcase_add_test(tc, kv_saving);
    tc = tcase_new(s, "options");
    tcase_add_test(tc, optimizer_create);
    tcase_add_test(tc, typed_setters_valid);
    tcase_add_test(tc, typed_setters_invalid);
    tcase_add_test(tc, typed_setters_null);
    tcase_add_test(tc, option_defaults);
    tcase_add_test(tc, option_roundtrip);
    tcase_add_test(tc, option_errors);
    tcase_add_test(tc, option_truncation);
    tc = tcase_new(s, "state");
    tcase_add_test(tc, state_before_ask);
    tcase_add_test(tc, state_after_start);
    tcase_add_test(tc, infeasible_problem_reported_on_first_ask);
    tcase_add_test(tc, result_before_start);
    tcase_add_test(tc, create_error_says_why);
    tcase_add_test(tc, option_table_enumerates);
    tcase_add_test(tc, option_typed_by_name);
    tcase_add_test(tc, deprecated_aliases);
    return s;
}

int main(void)
{
    return run_suite(api_suite());
}
