/*
 * Optimizer tests: the variants (full, probe-only, group-only, layer-level),
 * stage budgets, the probe and polish fractions, built-in and user strategies
 * in the optimizer, fixed units and layer bounds.
 */
#include "support/support.h"
#include "support/recorder.h"

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
        bosch_optimizer_free(opt);
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
    bosch_optimizer_free(opt);
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
        bosch_optimizer_free(opt);
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
    bosch_optimizer_free(opt);

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
        bosch_optimizer_free(opt);
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
            bosch_optimizer_free(opt);
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
        bosch_strategy *s = bosch_strategy_create("mine", us_init, us_propose, us_observe, us_destroy,
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
            ck_assert_msg(bosch_optimizer_last_error(opt)[0] != '\0', "no last_error");
            ck_assert_uint_eq(bosch_result_history_size(res), r.calls);
            ck_assert_uint_ge(r.calls, 2); /* anchors at least */
        } else {
            ck_assert_msg(st > 0, "%s", bosch_err_name(st));
            check_final_mask(res, p);
            ck_assert_uint_eq(r.dup, 0);
        }
        bosch_result_free(res);
        bosch_optimizer_free(opt);
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
        bosch_optimizer_free(opt);
    }
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

static Suite *variants_suite(void)
{
    Suite *s = suite_create("variants");
    TCase *tc = tcase_new(s, "variants");
    tcase_add_test(tc, variants);
    tcase_add_test(tc, layer_level_partial_target);
    tcase_add_test(tc, stage_budgets);
    tcase_add_test(tc, polish_fraction_effect);
    tcase_add_test(tc, fixed_units_and_bounds_respected);
    tc = tcase_new(s, "strategies");
    tcase_add_test(tc, builtin_strategies_in_optimizer);
    tcase_add_test(tc, user_strategy_in_optimizer);
    return s;
}

int main(void)
{
    return run_suite(variants_suite());
}
