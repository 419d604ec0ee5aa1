/*
 * Host priors (issue 12): per-unit scores a host already has (FISHER,
 * single-unit ablation) given with bosch_set_priors. The setter and getter
 * check their input; a subproblem shows the priors per variable; the
 * "model" strategy evaluates their static point first and learns how far to
 * trust them; a journal names them, so a resume with other priors is a
 * mismatch.
 */
#include <stdio.h>
#include <unistd.h>

#include "support/linear.h"
#include "support/recorder.h"
#include "support/support.h"

START_TEST(priors_setter_and_getter)
{
    bosch_problem *p = make_problem(4, 4, 8);
    bosch_optimizer *opt = make_opt(p, 1, 60);
    double pr[16], back[16];
    for (size_t u = 0; u < 16; u++)
        pr[u] = (double)u * 0.5;
    ck_assert_uint_eq(bosch_get_priors(opt, NULL, 0), 0);
    ck_assert_int_eq(bosch_set_priors(opt, pr, 15), BOSCH_E_INVALID);
    ck_assert_msg(strstr(bosch_optimizer_last_error(opt), "16 units") != NULL, "%s",
                  bosch_optimizer_last_error(opt));
    pr[3] = NAN;
    ck_assert_int_eq(bosch_set_priors(opt, pr, 16), BOSCH_E_BAD_SCORE);
    ck_assert_msg(strstr(bosch_optimizer_last_error(opt), "unit 3") != NULL, "%s",
                  bosch_optimizer_last_error(opt));
    pr[3] = INFINITY;
    ck_assert_int_eq(bosch_set_priors(opt, pr, 16), BOSCH_E_BAD_SCORE);
    ck_assert_uint_eq(bosch_get_priors(opt, NULL, 0), 0); /* nothing kept from a refusal */
    pr[3] = 1.5;
    ck_assert_int_eq(bosch_set_priors(opt, pr, 16), BOSCH_OK);
    pr[0] = 99.0; /* copied: the caller's array may change */
    ck_assert_uint_eq(bosch_get_priors(opt, back, 16), 16);
    ck_assert(back[0] == 0.0 && back[3] == 1.5 && back[15] == 7.5);
    ck_assert_uint_eq(bosch_get_priors(opt, back, 2), 16); /* writes at most n */
    ck_assert_int_eq(bosch_set_priors(NULL, pr, 16), BOSCH_E_INVALID);
    ck_assert_uint_eq(bosch_get_priors(NULL, back, 16), 0);
    ck_assert_int_eq(bosch_set_priors(opt, NULL, 0), BOSCH_OK);
    ck_assert_uint_eq(bosch_get_priors(opt, NULL, 0), 0);
    /* Not once the search has started. */
    size_t n = 0;
    ck_assert_int_eq(bosch_ask(opt, &n), BOSCH_OK);
    ck_assert_int_eq(bosch_set_priors(opt, pr, 16), BOSCH_E_STATE);
    bosch_optimizer_free(opt);
    bosch_problem_free(p);
}
END_TEST

START_TEST(priors_of_a_standalone_subproblem)
{
    uint32_t block_of[4] = {0, 0, 1, 1}, counts[2] = {1, 1};
    bosch_subproblem *sp = bosch_subproblem_create(4, 2, block_of, counts, 1);
    ck_assert_ptr_nonnull(sp);
    double pr[4] = {0.1, 0.2, 0.3, 0.4}, back[4] = {0};
    ck_assert_int_eq(bosch_subproblem_prior(sp, back), BOSCH_E_NOT_FOUND);
    ck_assert_int_eq(bosch_subproblem_prior(NULL, back), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_subproblem_prior(sp, NULL), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_subproblem_set_prior(sp, pr), BOSCH_OK);
    ck_assert_int_eq(bosch_subproblem_prior(sp, back), BOSCH_OK);
    ck_assert(memcmp(pr, back, sizeof pr) == 0);
    pr[1] = NAN;
    ck_assert_int_eq(bosch_subproblem_set_prior(sp, pr), BOSCH_E_BAD_SCORE);
    ck_assert_int_eq(bosch_subproblem_prior(sp, back), BOSCH_OK);
    ck_assert(back[1] == 0.2); /* the refused values left the old ones */
    ck_assert_int_eq(bosch_subproblem_set_prior(sp, NULL), BOSCH_OK);
    ck_assert_int_eq(bosch_subproblem_prior(sp, back), BOSCH_E_NOT_FOUND);
    ck_assert_int_eq(bosch_subproblem_set_prior(NULL, pr), BOSCH_E_INVALID);
    bosch_subproblem_free(sp);
}
END_TEST

/* ---- the model strategy with priors -------------------------------------- */

/* The 96-variable linear problem: two blocks of 40 and 56 variables, 20 and
 * 36 ones. */
static const uint32_t lin_counts[2] = {20, 36};
static void blocks(uint32_t *block_of)
{
    for (size_t i = 0; i < 96; i++)
        block_of[i] = i < 40 ? 0 : 1;
}

/* Solves it with "model", priors `pr` (NULL = none), the given budget. */
static double solve(const double *w, const double *pr, uint64_t budget, linear_objective *l)
{
    uint32_t block_of[96];
    blocks(block_of);
    bosch_strategy *s = bosch_strategy_builtin("model");
    bosch_subproblem *sp = bosch_subproblem_create(96, 2, block_of, lin_counts, 7);
    ck_assert_ptr_nonnull(s);
    ck_assert_ptr_nonnull(sp);
    if (pr)
        ck_assert_int_eq(bosch_subproblem_set_prior(sp, pr), BOSCH_OK);
    l->w = w;
    l->calls = 0;
    double v = NAN;
    uint64_t used = 0;
    int rc = bosch_strategy_solve(s, sp, linear_fn, l, budget, 8, NULL, &v, &used);
    ck_assert_msg(rc == BOSCH_DONE || rc == BOSCH_BUDGET_REACHED, "%s", bosch_err_name(rc));
    ck_assert_uint_le(used, budget);
    bosch_subproblem_free(sp);
    bosch_strategy_free(s);
    return v;
}

static double optimum(const double *w)
{
    uint32_t block_of[96];
    blocks(block_of);
    return linear_optimum(w, 96, block_of, lin_counts, 2);
}

/* Priors that rank the variables exactly (a low prior = set to 1) make the
 * first proposal the optimum; without them one batch is far from it. */
START_TEST(model_starts_from_the_priors)
{
    double w[96], pr[96];
    trng r = {11};
    for (size_t i = 0; i < 96; i++) {
        w[i] = trng_unif(&r) - 0.5;
        pr[i] = -w[i];
    }
    double best = optimum(w);
    uint8_t first_point[96];
    linear_objective l = {NULL, 0, first_point};
    double with = solve(w, pr, 8, &l);
    ck_assert_msg(fabs(with - best) < 1e-12, "with priors %.9f, optimum %.9f", with, best);
    double first = 0.0;
    for (size_t i = 0; i < 96; i++)
        first += l.first[i] ? w[i] : 0.0;
    ck_assert_msg(fabs(first - best) < 1e-12, "first point %.9f, optimum %.9f", first, best);
    double without = solve(w, NULL, 8, &l);
    ck_assert_msg(without < best - 0.5, "without priors %.9f, optimum %.9f", without, best);
}
END_TEST

/* Priors that rank the variables backwards cost the warm start and nothing
 * more: the model learns a weight for them, and the search still reaches the
 * optimum with the budget the plain model needs. Noisy priors help. */
START_TEST(model_survives_misleading_priors)
{
    double w[96], wrong[96], noisy[96];
    trng r = {11};
    for (size_t i = 0; i < 96; i++) {
        w[i] = trng_unif(&r) - 0.5;
        wrong[i] = w[i];
        noisy[i] = -w[i] + 0.3 * (trng_unif(&r) - 0.5);
    }
    double best = optimum(w);
    linear_objective l = {NULL, 0, NULL};
    double v = solve(w, wrong, 600, &l);
    ck_assert_msg(fabs(v - best) < 1e-9, "misleading priors %.9f, optimum %.9f", v, best);
    /* At a small budget, noisy but useful priors beat none. */
    double with = solve(w, noisy, 48, &l), without = solve(w, NULL, 48, &l);
    ck_assert_msg(with > without + 0.5, "noisy priors %.6f, none %.6f (optimum %.6f)", with,
                  without, best);
}
END_TEST

/* ---- through the optimizer ------------------------------------------------ */

/* One run on a QUBO landscape (raw scores: its anchors are not ordered);
 * returns the clean score of the result. */
static double qubo_run(uint64_t seed, int with_priors, uint64_t budget)
{
    bosch_testbed *tb = bosch_testbed_create_family(BOSCH_TESTBED_QUBO, 12, 8, seed);
    bosch_problem *p = bosch_problem_create(12, 8, 2);
    ck_assert_ptr_nonnull(tb);
    ck_assert_int_eq(bosch_problem_set_target_ratio(p, 0.75), BOSCH_OK);
    size_t n = bosch_problem_units(p);
    uint8_t *m = calloc(n, 1);
    double *pr = malloc(n * sizeof *pr), full = 0.0, s = 0.0;
    ck_assert_ptr_nonnull(m);
    ck_assert_ptr_nonnull(pr);
    ck_assert_int_eq(bosch_testbed_score_clean(tb, m, &full), BOSCH_OK);
    for (size_t u = 0; u < n; u++) { /* single-unit ablation loss */
        m[u] = 1;
        ck_assert_int_eq(bosch_testbed_score_clean(tb, m, &s), BOSCH_OK);
        pr[u] = full - s;
        m[u] = 0;
    }
    bosch_optimizer *opt = make_opt(p, seed, budget);
    ck_assert_int_eq(bosch_set_raw_scores(opt, 1), BOSCH_OK);
    if (with_priors)
        ck_assert_int_eq(bosch_set_priors(opt, pr, n), BOSCH_OK);
    ck_assert_int_eq(bosch_set_batch_evaluator(opt, bosch_testbed_batch_eval, tb), BOSCH_OK);
    int st = bosch_optimize(opt);
    ck_assert_msg(!bosch_is_error(st), "%s: %s", bosch_err_name(st),
                  bosch_optimizer_last_error(opt));
    bosch_result *res = NULL;
    ck_assert_int_eq(bosch_get_result(opt, &res), BOSCH_OK);
    ck_assert(bosch_result_feasible(res));
    ck_assert_int_eq(bosch_result_mask(res, m, n), BOSCH_OK);
    double v = NAN;
    ck_assert_int_eq(bosch_testbed_score_clean(tb, m, &v), BOSCH_OK);
    bosch_result_free(res);
    bosch_optimizer_free(opt);
    free(pr);
    free(m);
    bosch_problem_free(p);
    bosch_testbed_free(tb);
    return v;
}

/* Ablation priors lift the default at a small budget (the bench_peers
 * figure in docs/benchmarks-history.md), on every one of a few seeds' mean. */
START_TEST(priors_lift_the_default)
{
    double with = 0.0, without = 0.0;
    for (uint64_t seed = 1; seed <= 4; seed++) {
        with += qubo_run(seed, 1, 150);
        without += qubo_run(seed, 0, 150);
    }
    ck_assert_msg(with > without, "mean clean score with priors %.6f, without %.6f", with / 4,
                  without / 4);
    /* Same seed and priors, same result. */
    ck_assert(qubo_run(2, 1, 150) == qubo_run(2, 1, 150));
}
END_TEST

/* The journal names the priors: a resume with other priors (or none) is
 * BOSCH_E_MISMATCH, with the same ones it replays without evaluating. */
static int journal_run(const char *path, const double *pr, size_t *calls)
{
    bosch_testbed *tb = make_testbed(4, 4, 3, 0.2, 0.0);
    bosch_problem *p = make_problem(4, 4, 8);
    bosch_optimizer *opt = make_opt(p, 5, 60);
    rec r;
    rec_init(&r, tb);
    if (pr)
        ck_assert_int_eq(bosch_set_priors(opt, pr, 16), BOSCH_OK);
    ck_assert_int_eq(bosch_set_journal(opt, path, BOSCH_JOURNAL_AUTO), BOSCH_OK);
    ck_assert_int_eq(bosch_set_evaluator(opt, rec_eval, &r), BOSCH_OK);
    int st = bosch_optimize(opt);
    if (st == BOSCH_E_MISMATCH)
        ck_assert_msg(strstr(bosch_optimizer_last_error(opt), "priors") != NULL, "message: %s",
                      bosch_optimizer_last_error(opt));
    *calls = r.calls;
    rec_free(&r);
    bosch_optimizer_free(opt);
    bosch_problem_free(p);
    bosch_testbed_free(tb);
    return st;
}

START_TEST(priors_in_the_journal)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/bosch-priors-%ld.journal", (long)getpid());
    unlink(path);
    double pr[16], other[16];
    for (size_t u = 0; u < 16; u++) {
        pr[u] = (double)(u % 5);
        other[u] = pr[u];
    }
    other[7] += 1e-12; /* any difference counts */
    size_t calls = 0;
    int st = journal_run(path, pr, &calls);
    ck_assert_msg(!bosch_is_error(st), "%s", bosch_err_name(st));
    ck_assert_uint_gt(calls, 0);
    ck_assert_int_eq(journal_run(path, other, &calls), BOSCH_E_MISMATCH);
    ck_assert_uint_eq(calls, 0);
    ck_assert_int_eq(journal_run(path, NULL, &calls), BOSCH_E_MISMATCH);
    ck_assert_uint_eq(calls, 0);
    st = journal_run(path, pr, &calls);
    ck_assert_msg(!bosch_is_error(st), "%s", bosch_err_name(st));
    ck_assert_uint_eq(calls, 0); /* everything replayed */
    unlink(path);
}
END_TEST

static Suite *priors_suite(void)
{
    Suite *s = suite_create("priors");
    TCase *tc = tcase_create("priors");
    tcase_add_test(tc, priors_setter_and_getter);
    tcase_add_test(tc, priors_of_a_standalone_subproblem);
    tcase_add_test(tc, model_starts_from_the_priors);
    tcase_add_test(tc, model_survives_misleading_priors);
    tcase_add_test(tc, priors_lift_the_default);
    tcase_add_test(tc, priors_in_the_journal);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(priors_suite());
}
