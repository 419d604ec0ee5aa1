#include "journal_runs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "masks.h"
#include "results.h"
#include "suite.h"

/* ------------------------------------------------------------------------ */
/* Settings of one run                                                       */
/* ------------------------------------------------------------------------ */
cfg base_cfg(void)
{
    cfg c;
    memset(&c, 0, sizeof c);
    c.L = 6;
    c.G = 8;
    c.H = 1;
    c.T = 24;
    c.fix = c.bounds = -1;
    c.seed = 3;
    c.budget = 120;
    c.variant = -1;
    c.alpha = c.probe_fraction = c.polish_fraction = c.ratio_spread = c.time_limit = -1.0;
    c.stop_tolerance = -1.0;
    c.sync = -1;
    return c;
}

bosch_problem *cfg_problem(const cfg *c)
{
    bosch_problem *p = bosch_problem_create(c->L, c->G, c->H);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(bosch_problem_set_target_units(p, c->T), BOSCH_OK);
    if (c->fix >= 0)
        ck_assert_int_eq(bosch_problem_fix_unit(p, (uint32_t)c->fix / c->G,
                                                (uint32_t)c->fix % c->G, BOSCH_FIX_FULL),
                         BOSCH_OK);
    if (c->bounds >= 0)
        ck_assert_int_eq(bosch_problem_set_layer_bounds(p, (uint32_t)c->bounds, 0.25, 0.75),
                         BOSCH_OK);
    return p;
}

bosch_optimizer *cfg_opt(const cfg *c, const char *journal, int mode)
{
    bosch_problem *p = cfg_problem(c);
    bosch_optimizer *o = bosch_optimizer_create(p);
    bosch_problem_free(p);
    ck_assert_ptr_nonnull(o);
    ck_assert_int_eq(bosch_set_seed(o, c->seed), BOSCH_OK);
    ck_assert_int_eq(bosch_set_budget(o, c->budget), BOSCH_OK);
    if (c->probe_budget)
        ck_assert_int_eq(bosch_set_stage_budget(o, BOSCH_STAGE_PROBE, c->probe_budget), BOSCH_OK);
    if (c->batch)
        ck_assert_int_eq(bosch_set_batch_size(o, c->batch), BOSCH_OK);
    if (c->group_cap)
        ck_assert_int_eq(bosch_set_group_cap(o, c->group_cap), BOSCH_OK);
    if (c->threads)
        ck_assert_int_eq(bosch_set_threads(o, c->threads), BOSCH_OK);
    if (c->thread_safe)
        ck_assert_int_eq(bosch_set_evaluator_thread_safe(o, 1), BOSCH_OK);
    if (c->strategy) {
        bosch_strategy *s = bosch_strategy_builtin(c->strategy);
        ck_assert_ptr_nonnull(s);
        ck_assert_int_eq(bosch_set_strategy(o, -1, s), BOSCH_OK);
        bosch_strategy_free(s);
    }
    if (c->variant >= 0)
        ck_assert_int_eq(bosch_set_variant(o, c->variant), BOSCH_OK);
    if (c->alpha >= 0)
        ck_assert_int_eq(bosch_set_alpha(o, c->alpha), BOSCH_OK);
    if (c->probe_fraction >= 0)
        ck_assert_int_eq(bosch_set_probe_fraction(o, c->probe_fraction), BOSCH_OK);
    if (c->polish_fraction >= 0)
        ck_assert_int_eq(bosch_set_polish_fraction(o, c->polish_fraction), BOSCH_OK);
    if (c->ratio_spread >= 0)
        ck_assert_int_eq(bosch_set_ratio_spread(o, c->ratio_spread), BOSCH_OK);
    if (c->stop_tolerance >= 0)
        ck_assert_int_eq(bosch_set_stop_tolerance(o, c->stop_tolerance), BOSCH_OK);
    if (c->time_limit >= 0)
        ck_assert_int_eq(bosch_set_time_limit(o, c->time_limit), BOSCH_OK);
    if (c->anchors)
        ck_assert_int_eq(bosch_set_anchors(o, 1.0, 0.01), BOSCH_OK);
    if (c->sync >= 0)
        ck_assert_int_eq(bosch_set_journal_sync(o, c->sync), BOSCH_OK);
    if (journal)
        ck_assert_int_eq(bosch_set_journal(o, journal, mode), BOSCH_OK);
    return o;
}

/* ------------------------------------------------------------------------ */
/* A recording evaluator                                                     */
/* ------------------------------------------------------------------------ */
bosch_testbed *g_tb; /* 6 x 8 landscape shared by the tests */

void jrec_init(jrec *r, size_t units, mset *seen)
{
    memset(r, 0, sizeof *r);
    r->units = units;
    r->seen = seen;
    r->stop_after = -1;
    r->log_cap = 4096;
    r->log = calloc(r->log_cap, J_MAXU);
    r->size_at_first = -2;
    ck_assert_ptr_nonnull(r->log);
}

void jrec_free(jrec *r)
{
    free(r->log);
    r->log = NULL;
}

/* Score of any mask: the testbed's when the shape fits, else a hash. */
double any_score(const uint8_t *mask, size_t units)
{
    if (units == bosch_testbed_units(g_tb)) {
        double s = NAN;
        bosch_testbed_score(g_tb, mask, &s);
        return s;
    }
    /* Falls with the SWA share (so S_full > S_allSWA), plus hash noise. */
    return 1.0 - 0.8 * (double)mask_ones(mask, units) / (double)units +
           0.05 * (double)(mset_hash(mask, units) % 1000) / 1000.0;
}

int jrec_eval(const uint8_t *mask, size_t units, double *score, void *user)
{
    jrec *r = user;
    if (r->jpath) {
        if (r->size_at_first == -2)
            r->size_at_first = j_fsize(r->jpath);
        size_t rec = j_count_records(r->jpath);
        if (rec != r->jbase + r->calls && !r->jbad) {
            r->jbad = 1;
            r->jbad_call = r->calls;
            r->jbad_records = rec;
        }
    }
    if (units == r->units && r->calls < r->log_cap)
        memcpy(r->log + r->calls * J_MAXU, mask, units);
    double s = any_score(mask, units);
    if (r->seen && units == r->units && !mset_add(r->seen, mask, s))
        r->dup++;
    r->calls++;
    if (r->stop_after >= 0 && (long)r->calls == r->stop_after)
        bosch_force_stop(r->opt);
    *score = s;
    return 0;
}

int jrec_batch_eval(const uint8_t *masks, size_t n, size_t units, double *scores,
                           void *user)
{
    for (size_t i = 0; i < n; i++)
        jrec_eval(masks + i * units, units, &scores[i], user);
    return 0;
}

/* Progress observer: replayed counts, and the rate during a pure replay. */
static void pobs_cb(const bosch_progress *p, void *user)
{
    pobs *o = user;
    o->events++;
    uint64_t rep = bosch_progress_replayed(p), ev = bosch_progress_evaluations(p);
    if (rep < o->max_replayed)
        o->bad |= 1; /* never decreases */
    if (rep > ev)
        o->bad |= 2; /* replays are part of the evaluations */
    o->max_replayed = rep;
    double rate = bosch_progress_rate(p);
    if (rep == ev && !isnan(rate))
        o->bad |= 4; /* no evaluation by this process yet: NaN */
    if (!isnan(rate) && !(rate > 0))
        o->bad |= 8;
    double eta = bosch_progress_eta(p);
    if (!isnan(eta) && !(eta >= 0))
        o->bad |= 16;
}

/* Callback run. evaluator: 0 single, 1 batch. */
bosch_result *run_cb(const cfg *c, const char *journal, int mode, jrec *r, int batch,
                            int *status, pobs *po)
{
    bosch_optimizer *o = cfg_opt(c, journal, mode);
    r->opt = o;
    if (batch)
        ck_assert_int_eq(bosch_set_batch_evaluator(o, jrec_batch_eval, r), BOSCH_OK);
    else
        ck_assert_int_eq(bosch_set_evaluator(o, jrec_eval, r), BOSCH_OK);
    if (po)
        ck_assert_int_eq(bosch_set_progress(o, pobs_cb, po), BOSCH_OK);
    int st = bosch_optimize(o);
    if (status)
        *status = st;
    bosch_result *res = get_result(o);
    bosch_optimizer_free(o);
    return res;
}

/* Ask/tell run; stops after `tell_limit` tells (< 0: none) by abandoning the
 * optimizer mid-batch. After each tell, the journal (if any) must hold one
 * more record; *jbad reports otherwise. */
bosch_result *run_at(const cfg *c, const char *journal, int mode, jrec *r, long tell_limit,
                            int *status, size_t jbase, int *jbad)
{
    bosch_optimizer *o = cfg_opt(c, journal, mode);
    r->opt = o;
    uint8_t m[J_MAXU];
    long told = 0;
    int rc;
    if (jbad)
        *jbad = 0;
    for (;;) {
        size_t n = 99;
        rc = bosch_ask(o, &n);
        if (rc != BOSCH_OK) {
            if (rc > 0)
                ck_assert_uint_eq(n, 0);
            break;
        }
        ck_assert_uint_gt(n, 0);
        for (size_t i = 0; i < n && (tell_limit < 0 || told < tell_limit); i++) {
            double s;
            ck_assert_int_eq(bosch_candidate(o, i, m), BOSCH_OK);
            jrec_eval(m, r->units, &s, r);
            ck_assert_int_eq(bosch_tell(o, i, s), BOSCH_OK);
            told++;
            if (journal && jbad && j_count_records(journal) != jbase + (size_t)told)
                *jbad = 1;
        }
        if (tell_limit >= 0 && told >= tell_limit) {
            rc = BOSCH_FORCED_STOP; /* abandoned */
            break;
        }
    }
    if (status)
        *status = rc;
    bosch_result *res = get_result(o);
    bosch_optimizer_free(o);
    return res;
}

/* The reference: an uninterrupted callback run without a journal. */
bosch_result *reference(const cfg *c, int *status)
{
    jrec r;
    jrec_init(&r, (size_t)c->L * c->G, NULL);
    int st;
    bosch_result *res = run_cb(c, NULL, 0, &r, 0, &st, NULL);
    ck_assert_msg(st > 0, "reference run: %s", bosch_err_name(st));
    if (status)
        *status = st;
    ck_assert_uint_eq(r.calls, bosch_result_evaluations(res, -1));
    jrec_free(&r);
    return res;
}

/* The journal's records must be the result's history (same order when
 * `ordered`, else the same multiset) with the history's wall times. */
void assert_journal_matches(const char *path, const bosch_result *res, int ordered)
{
    size_t size = 0;
    uint8_t *b = j_slurp(path, &size);
    ck_assert_msg(b != NULL, "journal %s missing", path);
    jframes fr = j_parse(b, size);
    ck_assert_msg(!fr.tail, "journal has %zu bytes after its last valid frame at %zu",
                  size - fr.valid_end, fr.valid_end);
    ck_assert_uint_ge(fr.n, 1);
    ck_assert_uint_eq(fr.f[0].kind, JKIND_HEADER);
    size_t U = bosch_result_units(res), n = bosch_result_history_size(res);
    ck_assert_msg(fr.n == n + 1, "journal has %zu records, history %zu", fr.n - 1, n);
    mset hist;
    mset_init(&hist, U);
    uint8_t m[J_MAXU];
    for (size_t i = 0; i < n; i++) {
        double s;
        history_entry(res, i, m, &s, NULL);
        mset_add(&hist, m, s);
    }
    for (size_t i = 1; i < fr.n; i++) {
        jrecord rec;
        ck_assert_uint_eq(fr.f[i].kind, JKIND_RECORD);
        ck_assert_msg(j_record(b, &fr.f[i], U, &rec) == 0, "record %zu undecodable", i - 1);
        if (ordered) {
            double s;
            int st;
            history_entry(res, i - 1, m, &s, &st);
            ck_assert_msg(memcmp(m, rec.mask, U) == 0, "record %zu: mask differs from history",
                          i - 1);
            ck_assert_msg(rec.score == s, "record %zu: score %.17g, history %.17g", i - 1,
                          rec.score, s);
            ck_assert_int_eq(rec.stage, st);
            double w = bosch_result_history_wall(res, i - 1);
            ck_assert_msg(rec.wall == w, "record %zu: wall_s %g, history_wall %g", i - 1,
                          rec.wall, w);
        } else {
            double s;
            ck_assert_msg(mset_find(&hist, rec.mask, &s), "record %zu not in the history", i - 1);
            ck_assert_msg(rec.score == s, "record %zu: score differs from history", i - 1);
        }
        ck_assert_msg(isfinite(rec.wall) && rec.wall >= 0, "record %zu: wall_s %g", i - 1,
                      rec.wall);
        ck_assert_int_ge(rec.stage, 0);
        ck_assert_int_lt(rec.stage, BOSCH_STAGE_COUNT);
    }
    mset_free(&hist);
    j_frames_free(&fr);
    free(b);
}

/* Wall times of replayed entries are the journaled ones. */
void assert_walls_kept(const bosch_result *orig, const bosch_result *resumed, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double a = bosch_result_history_wall(orig, i), b = bosch_result_history_wall(resumed, i);
        ck_assert_msg(a == b, "history_wall(%zu): %.17g before, %.17g after resume", i, a, b);
    }
}

void assert_file_eq(const char *path, const uint8_t *b, size_t n, const char *what)
{
    size_t m = 0;
    uint8_t *c = j_slurp(path, &m);
    ck_assert_msg(c != NULL, "%s: journal vanished", what);
    ck_assert_msg(m == n && memcmp(b, c, n) == 0, "%s: journal modified (%zu -> %zu bytes)", what,
                  n, m);
    free(c);
}

int contains(const char *hay, const char *needle)
{
    return hay && strstr(hay, needle) != NULL;
}

/* Builds a complete journal of the base run at `path` (callback, threads 1). */
bosch_result *make_journal(const cfg *c, const char *path)
{
    jrec r;
    jrec_init(&r, (size_t)c->L * c->G, NULL);
    int st;
    bosch_result *res = run_cb(c, path, BOSCH_JOURNAL_CREATE, &r, 0, &st, NULL);
    ck_assert_msg(st > 0, "journaled run: %s (%s)", bosch_err_name(st), bosch_err_name(st));
    jrec_free(&r);
    return res;
}

/* Opens a journal in ask/tell mode and returns the first bosch_ask() status
 * (and the handle's error text in `msg`). */
int first_ask(const cfg *c, const char *path, int mode, char *msg, size_t msglen, size_t *n)
{
    bosch_optimizer *o = cfg_opt(c, path, mode);
    size_t k = 0;
    int rc = bosch_ask(o, &k);
    if (msg)
        snprintf(msg, msglen, "%s", bosch_optimizer_last_error(o));
    if (n)
        *n = k;
    bosch_optimizer_free(o);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* main() of a journal test                                                  */
/* ------------------------------------------------------------------------ */
static void setup_testbed(void)
{
    g_tb = bosch_testbed_create(6, 8, 11);
    if (!g_tb)
        abort();
    bosch_testbed_set(g_tb, "entanglement", 0.3);
    bosch_testbed_set(g_tb, "noise", 0.01);
}

int run_journal_suite(Suite *s)
{
    setup_testbed();
    int rc = run_suite(s);
    bosch_testbed_free(g_tb);
    g_tb = NULL;
    return rc;
}
