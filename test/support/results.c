#include "results.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "journal_files.h" /* J_MAXU */
#include "masks.h"
#include "mset.h"

bosch_result *get_result(const bosch_optimizer *opt)
{
    bosch_result *r = NULL;
    ck_assert_int_eq(bosch_get_result(opt, &r), BOSCH_OK);
    ck_assert_ptr_nonnull(r);
    return r;
}

void history_entry(const bosch_result *r, size_t i, uint8_t *mask, double *score, int *stage)
{
    ck_assert_int_eq(bosch_result_history_entry(r, i, mask, score, stage), BOSCH_OK);
}

void assert_same(const bosch_result *a, const bosch_result *b, const char *what)
{
    size_t U = bosch_result_units(a);
    ck_assert_uint_eq(U, bosch_result_units(b));
    uint8_t ma[J_MAXU], mb[J_MAXU];
    ck_assert_msg(bosch_result_status(a) == bosch_result_status(b), "%s: status %s vs %s", what,
                  bosch_err_name(bosch_result_status(a)), bosch_err_name(bosch_result_status(b)));
    ck_assert_int_eq(bosch_result_feasible(a), bosch_result_feasible(b));
    ck_assert_int_eq(bosch_result_mask(a, ma, U), BOSCH_OK);
    ck_assert_int_eq(bosch_result_mask(b, mb, U), BOSCH_OK);
    ck_assert_msg(memcmp(ma, mb, U) == 0, "%s: best masks differ", what);
    ck_assert_msg(bosch_result_score(a) == bosch_result_score(b) ||
                      (isnan(bosch_result_score(a)) && isnan(bosch_result_score(b))),
                  "%s: score %.17g vs %.17g", what, bosch_result_score(a), bosch_result_score(b));
    for (int st = -1; st < BOSCH_STAGE_COUNT; st++)
        ck_assert_msg(bosch_result_evaluations(a, st) == bosch_result_evaluations(b, st),
                      "%s: evaluations(stage %d) %lu vs %lu", what, st,
                      (unsigned long)bosch_result_evaluations(a, st),
                      (unsigned long)bosch_result_evaluations(b, st));
    size_t n = bosch_result_history_size(a);
    ck_assert_msg(n == bosch_result_history_size(b), "%s: history %zu vs %zu", what, n,
                  bosch_result_history_size(b));
    for (size_t i = 0; i < n; i++) {
        double sa, sb;
        int ta, tb;
        history_entry(a, i, ma, &sa, &ta);
        history_entry(b, i, mb, &sb, &tb);
        ck_assert_msg(memcmp(ma, mb, U) == 0, "%s: history %zu: masks differ", what, i);
        ck_assert_msg(sa == sb, "%s: history %zu: score %.17g vs %.17g", what, i, sa, sb);
        ck_assert_msg(ta == tb, "%s: history %zu: stage %d vs %d", what, i, ta, tb);
    }
}

void assert_same_result(const bosch_result *a, const bosch_result *b, int strict_order)
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

int histories_equal(const bosch_result *a, const bosch_result *b)
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

double best_feasible_in_history(const bosch_result *r, const bosch_problem *p)
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

void check_final_mask(const bosch_result *r, const bosch_problem *p)
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
