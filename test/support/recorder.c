#include "recorder.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "masks.h"
#include "results.h"
#include "testbeds.h"
#include "timing.h"

void rec_init(rec *r, bosch_testbed *tb)
{
    memset(r, 0, sizeof *r);
    r->tb = tb;
    r->units = bosch_testbed_units(tb);
    mset_init(&r->seen, r->units);
    r->fail_after = r->nan_after = r->stop_after = -1;
    r->bad_value = NAN;
}

void rec_free(rec *r)
{
    mset_free(&r->seen);
}

int rec_eval(const uint8_t *mask, size_t units, double *score, void *user)
{
    rec *r = user;
    ck_assert_uint_eq(units, r->units);
    if (r->fail_after >= 0 && (long)r->calls == r->fail_after)
        return r->fail_code;
    if (r->nan_after >= 0 && (long)r->calls == r->nan_after) {
        *score = r->bad_value;
        return 0;
    }
    if (!mask_is_binary(mask, units))
        r->nonbinary++;
    double s;
    if (r->mode == 1)
        s = 0.5;
    else if (r->mode == 2)
        s = (double)mask_ones(mask, units);
    else
        s = tb_score(r->tb, mask);
    if (!mset_add(&r->seen, mask, s))
        r->dup++;
    r->calls++;
    if (r->stop_after >= 0 && (long)r->calls == r->stop_after)
        bosch_force_stop(r->opt);
    if (r->sleep_us > 0)
        sleep_us(r->sleep_us);
    *score = s;
    return 0;
}

int rec_batch_eval(const uint8_t *masks, size_t n, size_t units, double *scores, void *user)
{
    rec *r = user;
    ck_assert_uint_gt(n, 0);
    r->batch_calls++;
    if (n > r->max_batch)
        r->max_batch = n;
    for (size_t i = 0; i < n; i++) {
        int rc = rec_eval(masks + i * units, units, &scores[i], user);
        if (rc != 0)
            return rc;
    }
    return 0;
}

bosch_problem *make_problem(uint32_t L, uint32_t G, size_t T)
{
    bosch_problem *p = bosch_problem_create(L, G, 1);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(bosch_problem_set_target_units(p, T), BOSCH_OK);
    return p;
}

void logtext_cb(int level, const char *msg, void *user)
{
    logtext *t = user;
    (void)level;
    int n = snprintf(t->text + t->len, sizeof t->text - t->len, "%s\n", msg);
    if (n > 0 && t->len + (size_t)n < sizeof t->text)
        t->len += (size_t)n;
}

bosch_optimizer *make_opt(const bosch_problem *p, uint64_t seed, uint64_t budget)
{
    bosch_optimizer *opt = bosch_optimizer_create(p);
    ck_assert_ptr_nonnull(opt);
    ck_assert_int_eq(bosch_set_seed(opt, seed), BOSCH_OK);
    ck_assert_int_eq(bosch_set_budget(opt, budget), BOSCH_OK);
    return opt;
}

bosch_result *run_callback_spread(const bosch_problem *p, bosch_testbed *tb, uint64_t seed,
                                  uint64_t budget, double spread, int batch_eval, int *status,
                                  rec *out_rec)
{
    rec r;
    rec_init(&r, tb);
    bosch_optimizer *opt = make_opt(p, seed, budget);
    if (spread >= 0)
        ck_assert_int_eq(bosch_set_ratio_spread(opt, spread), BOSCH_OK);
    r.opt = opt;
    if (batch_eval)
        ck_assert_int_eq(bosch_set_batch_evaluator(opt, rec_batch_eval, &r), BOSCH_OK);
    else
        ck_assert_int_eq(bosch_set_evaluator(opt, rec_eval, &r), BOSCH_OK);
    int st = bosch_optimize(opt);
    if (status)
        *status = st;
    bosch_result *res = get_result(opt);
    ck_assert_uint_eq(r.dup, 0);
    ck_assert_uint_eq(r.nonbinary, 0);
    ck_assert_uint_eq(r.calls, bosch_result_evaluations(res, -1));
    if (out_rec) {
        *out_rec = r;
    } else {
        rec_free(&r);
    }
    bosch_optimizer_free(opt);
    return res;
}

bosch_result *run_callback(const bosch_problem *p, bosch_testbed *tb, uint64_t seed,
                           uint64_t budget, int batch_eval, int *status, rec *out_rec)
{
    return run_callback_spread(p, tb, seed, budget, -1.0, batch_eval, status, out_rec);
}

int drive_asktell(bosch_optimizer *opt, rec *r, int order, size_t *batches, uint64_t *asked)
{
    uint8_t *m = malloc(r->units);
    ck_assert_ptr_nonnull(m);
    size_t nb = 0;
    uint64_t total = 0;
    int rc;
    for (;;) {
        size_t n = 0;
        rc = bosch_ask(opt, &n);
        if (rc != BOSCH_OK) {
            if (rc > 0)
                ck_assert_uint_eq(n, 0);
            break;
        }
        ck_assert_uint_gt(n, 0);
        int st = bosch_candidate_stage(opt);
        ck_assert_int_ge(st, 0);
        ck_assert_int_lt(st, BOSCH_STAGE_COUNT);
        nb++;
        total += n;
        for (size_t k = 0; k < n; k++) {
            size_t i = order ? n - 1 - k : k;
            double s;
            ck_assert_int_eq(bosch_candidate(opt, i, m), BOSCH_OK);
            ck_assert_int_eq(rec_eval(m, r->units, &s, r), 0);
            ck_assert_int_eq(bosch_tell(opt, i, s), BOSCH_OK);
        }
    }
    free(m);
    if (batches)
        *batches = nb;
    if (asked)
        *asked = total;
    return rc;
}
