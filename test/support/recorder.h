/*
 * A recording evaluator around the testbed (`rec`): counts calls, repeated
 * and non-binary masks, batch sizes; fails, returns a bad score or force
 * stops on request. Plus the setup and driving helpers of the optimizer
 * tests: problems, optimizers, a full callback run, an ask/tell loop.
 */
#ifndef BOSCH_TEST_RECORDER_H
#define BOSCH_TEST_RECORDER_H

#include <stddef.h>
#include <stdint.h>

#include <bosch/bosch.h>
#include <bosch/testbed.h>

#include "mset.h"

typedef struct {
    bosch_testbed *tb;
    size_t units;
    mset seen;
    size_t calls;     /* successful evaluations */
    size_t dup;       /* masks evaluated more than once */
    size_t nonbinary; /* masks with bytes other than 0/1 */
    long fail_after;  /* return fail_code when `calls` reaches this (-1: never) */
    int fail_code;
    long nan_after; /* write a NaN (or bad_value) score when `calls` reaches this */
    double bad_value;
    long stop_after; /* bosch_force_stop() once `calls` reaches this */
    bosch_optimizer *opt;
    long sleep_us;
    int mode; /* 0 testbed, 1 constant 0.5, 2 count of SWA units (allSWA best) */
    size_t batch_calls, max_batch;
} rec;

void rec_init(rec *r, bosch_testbed *tb);
void rec_free(rec *r);

/* bosch_evaluator_fn; user is a rec. */
int rec_eval(const uint8_t *mask, size_t units, double *score, void *user);

/* bosch_batch_evaluator_fn; user is a rec. */
int rec_batch_eval(const uint8_t *masks, size_t n, size_t units, double *scores, void *user);

/* An L x G problem (one head per group) with T SWA units. */
bosch_problem *make_problem(uint32_t L, uint32_t G, size_t T);

/* A log callback that keeps the text (bosch_set_log(opt, logtext_cb, &t, level)):
 * one line per message, as much as fits. */
typedef struct {
    char text[16384];
    size_t len;
} logtext;
void logtext_cb(int level, const char *msg, void *user);

/* An optimizer for p with the given seed and budget. */
bosch_optimizer *make_opt(const bosch_problem *p, uint64_t seed, uint64_t budget);

/* Full run in callback mode (the rec evaluator, single or batch) on a
 * testbed; checks no repeated and no non-binary mask and that every call is
 * counted; returns the result. The rec is handed back in *out_rec (to be
 * freed by the caller) when out_rec is set. */
bosch_result *run_callback(const bosch_problem *p, bosch_testbed *tb, uint64_t seed,
                           uint64_t budget, int batch_eval, int *status, rec *out_rec);

/* The same with a ratio_spread (< 0: the default). */
bosch_result *run_callback_spread(const bosch_problem *p, bosch_testbed *tb, uint64_t seed,
                                  uint64_t budget, double spread, int batch_eval, int *status,
                                  rec *out_rec);

/* Drives an optimizer by ask/tell with the rec evaluator; order 0 =
 * forward, 1 = reverse. Returns the final bosch_ask() status. */
int drive_asktell(bosch_optimizer *opt, rec *r, int order, size_t *batches, uint64_t *asked);

#endif /* BOSCH_TEST_RECORDER_H */
