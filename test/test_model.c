/*
 * The default inner search (issue 12): the subproblem history API that
 * warm-starts a strategy (every point it lists lies in the subproblem and
 * carries the value the cache holds for it; stage 3's polish sees the
 * chunks' evaluations), and the "model" strategy (surrogate-screened
 * annealing) on objectives whose optimum is known.
 */
#include <stdio.h>

#include "support/linear.h"
#include "support/support.h"

/* ---- history: a stage-3 strategy that checks what it is given ------------ */

struct hist_probe {
    size_t subproblems, max_history, checked;
    int bad;
    char why[256];
};

static int h_init(void **state, const bosch_subproblem *sp, void *user)
{
    struct hist_probe *h = user;
    size_t n = bosch_subproblem_vars(sp), count = bosch_subproblem_history_count(sp);
    uint8_t *x = malloc(n);
    if (!x)
        return -1;
    h->subproblems++;
    if (count > h->max_history)
        h->max_history = count;
    for (size_t i = 0; i < count && !h->bad; i++) {
        double v = NAN, cached = NAN;
        if (bosch_subproblem_history(sp, i, x, &v) != BOSCH_OK) {
            h->bad = snprintf(h->why, sizeof h->why, "point %zu of %zu unreadable", i, count);
            break;
        }
        for (size_t b = 0; b < bosch_subproblem_blocks(sp); b++) {
            uint32_t c = 0;
            for (size_t j = 0; j < n; j++)
                c += bosch_subproblem_block_of(sp, j) == b && x[j];
            if (c != bosch_subproblem_block_count(sp, b))
                h->bad = snprintf(h->why, sizeof h->why, "point %zu: block %zu has %u ones, not %u",
                                  i, b, c, bosch_subproblem_block_count(sp, b));
        }
        if (!bosch_subproblem_lookup(sp, x, &cached) || cached != v)
            h->bad = snprintf(h->why, sizeof h->why, "point %zu: cache says %g, history %g", i,
                              cached, v);
        h->checked++;
    }
    if (!h->bad && bosch_subproblem_history(sp, count, x, NULL) != BOSCH_E_NOT_FOUND)
        h->bad = snprintf(h->why, sizeof h->why, "no BOSCH_E_NOT_FOUND past the end");
    free(x);
    *state = NULL;
    return 0;
}

static int h_propose(void *state, const bosch_subproblem *sp, uint8_t *cands, size_t max,
                     size_t *n)
{
    (void)state;
    size_t nv = bosch_subproblem_vars(sp);
    for (size_t i = 0; i < max * nv; i++)
        cands[i] = (uint8_t)bosch_subproblem_random_below(sp, 2); /* repaired by the runner */
    *n = max;
    return 0;
}

START_TEST(history_lists_points_of_the_subproblem)
{
    bosch_testbed *tb = make_testbed(8, 4, 5, 0.3, 0.0);
    bosch_problem *p = bosch_problem_create(8, 4, 1);
    ck_assert_int_eq(bosch_problem_set_target_ratio(p, 0.5), BOSCH_OK);
    struct hist_probe h = {0};
    bosch_strategy *s = bosch_strategy_create("history-probe", h_init, h_propose, NULL, NULL, &h);
    ck_assert_ptr_nonnull(s);
    bosch_optimizer *opt = bosch_optimizer_create(p);
    ck_assert_int_eq(bosch_set_budget(opt, 300), BOSCH_OK);
    ck_assert_int_eq(bosch_set_group_cap(opt, 8), BOSCH_OK); /* several chunks, then the polish */
    ck_assert_int_eq(bosch_set_strategy(opt, BOSCH_STAGE_GROUP, s), BOSCH_OK);
    ck_assert_int_eq(bosch_set_evaluator(opt, bosch_testbed_eval, tb), BOSCH_OK);
    int st = bosch_optimize(opt);
    ck_assert_msg(st == BOSCH_DONE || st == BOSCH_BUDGET_REACHED || st == BOSCH_CONVERGED, "%s",
                  bosch_err_name(st));
    ck_assert_msg(!h.bad, "%s", h.why);
    ck_assert_uint_ge(h.subproblems, 2);
    /* The polish (all free units, one block) comes last and lies around
     * every stage-3 chunk evaluation: it must see more than one point. */
    ck_assert_uint_gt(h.max_history, 10);
    bosch_optimizer_free(opt);
    bosch_strategy_free(s);
    bosch_problem_free(p);
    bosch_testbed_free(tb);
}
END_TEST

START_TEST(history_of_a_standalone_subproblem)
{
    uint32_t block_of[6] = {0, 0, 0, 1, 1, 1}, counts[2] = {1, 2};
    bosch_subproblem *sp = bosch_subproblem_create(6, 2, block_of, counts, 3);
    ck_assert_ptr_nonnull(sp);
    ck_assert_uint_eq(bosch_subproblem_history_count(sp), 0);
    ck_assert_int_eq(bosch_subproblem_history(sp, 0, NULL, NULL), BOSCH_E_NOT_FOUND);
    ck_assert_uint_eq(bosch_subproblem_history_count(NULL), 0);
    ck_assert_int_eq(bosch_subproblem_history(NULL, 0, NULL, NULL), BOSCH_E_INVALID);
    bosch_subproblem_free(sp);
}
END_TEST

/* ---- the model strategy ----------------------------------------------------- */

static double solve_with(const char *name, const double *w, size_t n, const uint32_t *block_of,
                         const uint32_t *counts, size_t nblocks, uint64_t budget, uint64_t seed,
                         uint8_t *best)
{
    bosch_strategy *s = bosch_strategy_builtin(name);
    bosch_subproblem *sp = bosch_subproblem_create(n, nblocks, block_of, counts, seed);
    ck_assert_ptr_nonnull(s);
    ck_assert_ptr_nonnull(sp);
    linear_objective l = {w, 0, NULL};
    double v = NAN;
    uint64_t used = 0;
    int rc = bosch_strategy_solve(s, sp, linear_fn, &l, budget, 8, best, &v, &used);
    ck_assert_msg(rc == BOSCH_DONE || rc == BOSCH_BUDGET_REACHED, "%s: %s", name,
                  bosch_err_name(rc));
    ck_assert_uint_le(used, budget);
    ck_assert_uint_eq(l.calls, used);
    bosch_subproblem_free(sp);
    bosch_strategy_free(s);
    return v;
}

/* On a separable objective the surrogate is exact once it has seen enough
 * swaps, so the model strategy finds the optimum; random search and plain
 * swap local search, with the same budget, do not. */
START_TEST(model_solves_a_linear_objective)
{
    enum { N = 96 };
    double w[N];
    uint32_t block_of[N], counts[2] = {20, 36};
    trng r = {11};
    for (size_t i = 0; i < N; i++) {
        w[i] = trng_unif(&r) - 0.5;
        block_of[i] = i < 40 ? 0 : 1;
    }
    double opt = linear_optimum(w, N, block_of, counts, 2);
    uint8_t x[N], y[N];
    double vm = solve_with("model", w, N, block_of, counts, 2, 600, 7, x);
    ck_assert_msg(fabs(vm - opt) < 1e-9, "model %.9f, optimum %.9f", vm, opt);
    double vr = solve_with("random", w, N, block_of, counts, 2, 600, 7, NULL);
    double vs = solve_with("swap", w, N, block_of, counts, 2, 600, 7, NULL);
    ck_assert_msg(vr < opt - 1e-6 && vs < opt - 1e-6, "random %.9f, swap %.9f, optimum %.9f", vr,
                  vs, opt);
    /* Same seed, same answer. */
    double again = solve_with("model", w, N, block_of, counts, 2, 600, 7, y);
    ck_assert(again == vm && memcmp(x, y, N) == 0);
}
END_TEST

/* Past MODEL_DENSE_MAX variables the model keeps a diagonal covariance:
 * still feasible, within budget, and much better than its start. */
START_TEST(model_large_subproblem)
{
    enum { N = 1500 };
    double *w = malloc(N * sizeof *w);
    uint32_t *block_of = calloc(N, sizeof *block_of), counts[1] = {750};
    ck_assert_ptr_nonnull(w);
    ck_assert_ptr_nonnull(block_of);
    trng r = {5};
    for (size_t i = 0; i < N; i++)
        w[i] = trng_unif(&r);
    uint8_t *x = malloc(N);
    ck_assert_ptr_nonnull(x);
    double vm = solve_with("model", w, N, block_of, counts, 1, 400, 3, x);
    double vr = solve_with("random", w, N, block_of, counts, 1, 400, 3, NULL);
    size_t ones = 0;
    for (size_t i = 0; i < N; i++)
        ones += x[i];
    ck_assert_uint_eq(ones, 750);
    ck_assert_msg(vm > vr + 1.0, "model %.4f, random %.4f", vm, vr);
    free(x);
    free(w);
    free(block_of);
}
END_TEST

static Suite *model_suite(void)
{
    Suite *s = suite_create("model");
    TCase *tc = tcase_create("model");
    tcase_add_test(tc, history_lists_points_of_the_subproblem);
    tcase_add_test(tc, history_of_a_standalone_subproblem);
    tcase_add_test(tc, model_solves_a_linear_objective);
    tcase_add_test(tc, model_large_subproblem);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(model_suite());
}
