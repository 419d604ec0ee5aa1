/*
 * Runs of the journal tests: the settings of one run (`cfg`), a recording
 * evaluator (`jrec`) on a shared 6 x 8 testbed that also watches the
 * journal grow, a progress observer, callback and ask/tell runs with a
 * journal, the uninterrupted reference, and checks of a journal against a
 * result.
 */
#ifndef BOSCH_TEST_JOURNAL_RUNS_H
#define BOSCH_TEST_JOURNAL_RUNS_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>

#include <bosch/bosch.h>
#include <bosch/testbed.h>

#include "journal_files.h"
#include "mset.h"

/* ------------------------------------------------------------------------ */
/* Settings of one run                                                       */
/* ------------------------------------------------------------------------ */
typedef struct {
    uint32_t L, G, H;
    size_t T;
    int fix;    /* unit fixed to full, -1 none */
    int bounds; /* layer with ratio bounds [0.25, 0.75], -1 none */
    uint64_t seed, budget, probe_budget;
    uint32_t batch, group_cap, threads;
    const char *strategy; /* both stages, NULL default */
    int variant;          /* -1 default */
    double alpha, probe_fraction, polish_fraction, ratio_spread, time_limit; /* < 0 default */
    double stop_tolerance;                                                  /* < 0 default */
    int anchors; /* supply anchors 1.0 / 0.01 */
    int sync;    /* -1 default */
    int thread_safe;
} cfg;

/* 6 x 8 units, 1 head per group, T = 24, seed 3, budget 120, defaults. */
cfg base_cfg(void);

bosch_problem *cfg_problem(const cfg *c);

/* An optimizer with the settings of c, journaling to `journal` (NULL: none). */
bosch_optimizer *cfg_opt(const cfg *c, const char *journal, int mode);

/* ------------------------------------------------------------------------ */
/* A recording evaluator                                                     */
/* ------------------------------------------------------------------------ */
/* The 6 x 8 landscape shared by the tests (journal_testbed_setup()). */
extern bosch_testbed *g_tb;

typedef struct {
    size_t units;
    mset *seen; /* masks evaluated, across runs (may be shared); dup counts repeats */
    size_t dup;
    size_t calls;
    long stop_after; /* bosch_force_stop() when calls reaches this */
    bosch_optimizer *opt;
    uint8_t *log; /* masks in call order (J_MAXU bytes each) */
    size_t log_cap;
    /* Journal checks at the start of each call: records == jbase + calls. */
    const char *jpath;
    size_t jbase;
    int jbad;
    size_t jbad_call, jbad_records;
    long size_at_first; /* journal size at the first call (-2 = not called) */
} jrec;

void jrec_init(jrec *r, size_t units, mset *seen);
void jrec_free(jrec *r);

/* Score of any mask: the testbed's when the shape fits, else a hash. */
double any_score(const uint8_t *mask, size_t units);

/* bosch_evaluator_fn; user is a jrec. */
int jrec_eval(const uint8_t *mask, size_t units, double *score, void *user);

/* bosch_batch_evaluator_fn; user is a jrec. */
int jrec_batch_eval(const uint8_t *masks, size_t n, size_t units, double *scores, void *user);

/* Progress observer: replayed counts, and the rate during a pure replay. */
typedef struct {
    size_t events;
    uint64_t max_replayed;
    int bad;
} pobs;

/* ------------------------------------------------------------------------ */
/* Runs                                                                      */
/* ------------------------------------------------------------------------ */
/* Callback run. evaluator: 0 single, 1 batch. */
bosch_result *run_cb(const cfg *c, const char *journal, int mode, jrec *r, int batch,
                     int *status, pobs *po);

/* Ask/tell run; stops after `tell_limit` tells (< 0: none) by abandoning the
 * optimizer mid-batch. After each tell, the journal (if any) must hold one
 * more record; *jbad reports otherwise. */
bosch_result *run_at(const cfg *c, const char *journal, int mode, jrec *r, long tell_limit,
                     int *status, size_t jbase, int *jbad);

/* The reference: an uninterrupted callback run without a journal. */
bosch_result *reference(const cfg *c, int *status);

/* Builds a complete journal of the base run at `path` (callback, threads 1). */
bosch_result *make_journal(const cfg *c, const char *path);

/* Opens a journal in ask/tell mode and returns the first bosch_ask() status
 * (and the handle's error text in `msg`). */
int first_ask(const cfg *c, const char *path, int mode, char *msg, size_t msglen, size_t *n);

/* ------------------------------------------------------------------------ */
/* Checks                                                                    */
/* ------------------------------------------------------------------------ */
/* The journal's records must be the result's history (same order when
 * `ordered`, else the same multiset) with the history's wall times. */
void assert_journal_matches(const char *path, const bosch_result *res, int ordered);

/* Wall times of replayed entries are the journaled ones. */
void assert_walls_kept(const bosch_result *orig, const bosch_result *resumed, size_t n);

/* The file at `path` holds exactly b[0..n). */
void assert_file_eq(const char *path, const uint8_t *b, size_t n, const char *what);

/* hay (may be NULL) contains needle. */
int contains(const char *hay, const char *needle);

/* ------------------------------------------------------------------------ */
/* main() of a journal test                                                  */
/* ------------------------------------------------------------------------ */
/* Creates g_tb, runs the suite, frees g_tb. */
int run_journal_suite(Suite *s);

#endif /* BOSCH_TEST_JOURNAL_RUNS_H */
