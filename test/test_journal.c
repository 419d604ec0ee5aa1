/*
 * Journal tests (docs/journal.md, bosch_set_journal in optimizer.h): the file
 * format as written, exact resume (callbacks and ask/tell, full and partial
 * replay), torn tails at every byte, bit flips, foreign files, mismatching
 * settings and versions, journal modes and string options.
 */
#include <pthread.h>

#include <json.h>

#include "journal_util.h"

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
    int anchors; /* supply anchors 1.0 / 0.01 */
    int sync;    /* -1 default */
    int thread_safe;
} cfg;

static cfg base_cfg(void)
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
    c.sync = -1;
    return c;
}

static bosch_problem *cfg_problem(const cfg *c)
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

static bosch_optimizer *cfg_opt(const cfg *c, const char *journal, int mode)
{
    bosch_problem *p = cfg_problem(c);
    bosch_optimizer *o = bosch_create(p);
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
static bosch_testbed *g_tb; /* 6 x 8 landscape shared by the tests */

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

static void jrec_init(jrec *r, size_t units, mset *seen)
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

static void jrec_free(jrec *r)
{
    free(r->log);
    r->log = NULL;
}

/* Score of any mask: the testbed's when the shape fits, else a hash. */
static double any_score(const uint8_t *mask, size_t units)
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

static int jrec_eval(const uint8_t *mask, size_t units, double *score, void *user)
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

static int jrec_batch_eval(const uint8_t *masks, size_t n, size_t units, double *scores,
                           void *user)
{
    for (size_t i = 0; i < n; i++)
        jrec_eval(masks + i * units, units, &scores[i], user);
    return 0;
}

static bosch_result *get_result(const bosch_optimizer *opt)
{
    bosch_result *r = NULL;
    ck_assert_int_eq(bosch_get_result(opt, &r), BOSCH_OK);
    ck_assert_ptr_nonnull(r);
    return r;
}

/* Progress observer: replayed counts, and the rate during a pure replay. */
typedef struct {
    size_t events;
    uint64_t max_replayed;
    int bad;
} pobs;

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
static bosch_result *run_cb(const cfg *c, const char *journal, int mode, jrec *r, int batch,
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
    bosch_destroy(o);
    return res;
}

/* Ask/tell run; stops after `tell_limit` tells (< 0: none) by abandoning the
 * optimizer mid-batch. After each tell, the journal (if any) must hold one
 * more record; *jbad reports otherwise. */
static bosch_result *run_at(const cfg *c, const char *journal, int mode, jrec *r, long tell_limit,
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
    bosch_destroy(o);
    return res;
}

/* The reference: an uninterrupted callback run without a journal. */
static bosch_result *reference(const cfg *c, int *status)
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
static void assert_journal_matches(const char *path, const bosch_result *res, int ordered)
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
static void assert_walls_kept(const bosch_result *orig, const bosch_result *resumed, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double a = bosch_result_history_wall(orig, i), b = bosch_result_history_wall(resumed, i);
        ck_assert_msg(a == b, "history_wall(%zu): %.17g before, %.17g after resume", i, a, b);
    }
}

static void assert_file_eq(const char *path, const uint8_t *b, size_t n, const char *what)
{
    size_t m = 0;
    uint8_t *c = j_slurp(path, &m);
    ck_assert_msg(c != NULL, "%s: journal vanished", what);
    ck_assert_msg(m == n && memcmp(b, c, n) == 0, "%s: journal modified (%zu -> %zu bytes)", what,
                  n, m);
    free(c);
}

static int contains(const char *hay, const char *needle)
{
    return hay && strstr(hay, needle) != NULL;
}

/* Builds a complete journal of the base run at `path` (callback, threads 1). */
static bosch_result *make_journal(const cfg *c, const char *path)
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
static int first_ask(const cfg *c, const char *path, int mode, char *msg, size_t msglen, size_t *n)
{
    bosch_optimizer *o = cfg_opt(c, path, mode);
    size_t k = 0;
    int rc = bosch_ask(o, &k);
    if (msg)
        snprintf(msg, msglen, "%s", bosch_last_error(o));
    if (n)
        *n = k;
    bosch_destroy(o);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Format as written, and full replay                                        */
/* ------------------------------------------------------------------------ */
START_TEST(format_as_documented)
{
    char dir[64], path[128];
    j_mkdtemp(dir);
    j_path(path, sizeof path, dir, "j.bin");
    cfg c = base_cfg();
    c.fix = 5;
    c.bounds = 2;
    c.T = 20;
    bosch_result *ref = reference(&c, NULL);
    jrec r;
    jrec_init(&r, 48, NULL);
    r.jpath = path;
    int st;
    bosch_result *res = run_cb(&c, path, BOSCH_JOURNAL_CREATE, &r, 0, &st, NULL);
    ck_assert_msg(st > 0, "%s", bosch_err_name(st));
    assert_same(ref, res, "journal vs no journal");
    /* Written as soon as each evaluation was told: at the start of call k
     * the file holds exactly k records. */
    ck_assert_msg(!r.jbad, "at evaluator call %zu the journal held %zu records", r.jbad_call,
                  r.jbad_records);
    assert_journal_matches(path, res, 1);

    size_t size = 0;
    uint8_t *b = j_slurp(path, &size);
    jframes fr = j_parse(b, size);
    char *json = j_payload(b, &fr.f[0]);
    ck_assert_ptr_nonnull(json);
    json_object *o = json_tokener_parse(json);
    ck_assert_msg(o != NULL, "header is not JSON: %s", json);
    static const char *keys[] = {"format", "library", "layers", "kv_groups", "heads_per_group",
                                 "target_units", "fix", "min_ratio", "max_ratio", "seed",
                                 "budget", "probe_budget", "group_budget", "probe_fraction",
                                 "polish_fraction", "alpha", "ratio_spread", "group_cap",
                                 "batch_size", "variant", "probe_strategy", "group_strategy",
                                 "anchors"};
    json_object *v;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        ck_assert_msg(json_object_object_get_ex(o, keys[i], &v), "header lacks \"%s\": %s",
                      keys[i], json);
    static const char *absent[] = {"time_limit", "threads", "journal_sync"};
    for (size_t i = 0; i < 3; i++)
        ck_assert_msg(!json_object_object_get_ex(o, absent[i], &v), "header records \"%s\"",
                      absent[i]);
    json_object_object_get_ex(o, "format", &v);
    ck_assert_int_eq(json_object_get_int64(v), 1);
    json_object_object_get_ex(o, "library", &v);
    ck_assert_str_eq(json_object_get_string(v), bosch_version_string());
    json_object_object_get_ex(o, "layers", &v);
    ck_assert_int_eq(json_object_get_int64(v), 6);
    json_object_object_get_ex(o, "kv_groups", &v);
    ck_assert_int_eq(json_object_get_int64(v), 8);
    json_object_object_get_ex(o, "heads_per_group", &v);
    ck_assert_int_eq(json_object_get_int64(v), 1);
    json_object_object_get_ex(o, "target_units", &v);
    ck_assert_int_eq(json_object_get_int64(v), 20);
    json_object_object_get_ex(o, "seed", &v);
    ck_assert_int_eq(json_object_get_int64(v), 3);
    json_object_object_get_ex(o, "budget", &v);
    ck_assert_int_eq(json_object_get_int64(v), 120);
    json_object_object_get_ex(o, "batch_size", &v);
    ck_assert_int_eq(json_object_get_int64(v), 8);
    json_object_object_get_ex(o, "anchors", &v);
    ck_assert(json_object_is_type(v, json_type_null));
    json_object_object_get_ex(o, "fix", &v);
    const char *fix = json_object_get_string(v);
    ck_assert_uint_eq(strlen(fix), 48);
    for (size_t u = 0; u < 48; u++)
        ck_assert_int_eq(fix[u], u == 5 ? 'F' : '.');
    json_object_object_get_ex(o, "min_ratio", &v);
    ck_assert(json_object_is_type(v, json_type_array));
    ck_assert_uint_eq(json_object_array_length(v), 6);
    ck_assert_double_eq_tol(json_object_get_double(json_object_array_get_idx(v, 2)), 0.25, 1e-12);
    ck_assert_double_eq_tol(json_object_get_double(json_object_array_get_idx(v, 1)), 0.0, 1e-12);
    json_object_object_get_ex(o, "max_ratio", &v);
    ck_assert_uint_eq(json_object_array_length(v), 6);
    ck_assert_double_eq_tol(json_object_get_double(json_object_array_get_idx(v, 2)), 0.75, 1e-12);
    ck_assert_double_eq_tol(json_object_get_double(json_object_array_get_idx(v, 0)), 1.0, 1e-12);
    json_object_put(o);
    free(json);
    j_frames_free(&fr);
    free(b);
    bosch_result_free(res);
    bosch_result_free(ref);
    jrec_free(&r);
    j_rmtree(dir);
}
END_TEST

/* create -> run -> resume in a fresh optimizer: nothing is evaluated again. */
START_TEST(full_replay_callback)
{
    char dir[64], path[128];
    j_mkdtemp(dir);
    j_path(path, sizeof path, dir, "j.bin");
    cfg c = base_cfg();
    for (int batch = 0; batch < 2; batch++) {
        for (int mode = BOSCH_JOURNAL_RESUME; mode <= BOSCH_JOURNAL_AUTO; mode++) {
            bosch_result *orig = make_journal(&c, path);
            ck_assert_uint_eq(bosch_result_replayed(orig), 0);
            size_t size = 0;
            uint8_t *before = j_slurp(path, &size);
            jrec r;
            jrec_init(&r, 48, NULL);
            pobs po = {0, 0, 0};
            int st;
            bosch_result *res = run_cb(&c, path, mode, &r, batch, &st, &po);
            ck_assert_int_eq(st, bosch_result_status(orig));
            ck_assert_msg(r.calls == 0, "full replay called the evaluator %zu times", r.calls);
            assert_same(orig, res, "full replay");
            uint64_t ev = bosch_result_evaluations(res, -1);
            ck_assert_uint_eq(bosch_result_replayed(res), ev);
            assert_walls_kept(orig, res, ev);
            ck_assert_uint_gt(po.events, 0);
            ck_assert_uint_eq(po.max_replayed, ev);
            ck_assert_msg(po.bad == 0, "progress during replay: flags %d", po.bad);
            /* Nothing new to record: the file is left as it was. */
            assert_file_eq(path, before, size, "after full replay");
            free(before);
            bosch_result_free(res);
            bosch_result_free(orig);
            jrec_free(&r);
        }
    }
    j_rmtree(dir);
}
END_TEST

/* Ask/tell: journal written per tell; on resume, replayed candidates are not
 * handed out; journals are interchangeable between the two ways. */
START_TEST(full_replay_asktell)
{
    char dir[64], path[128];
    j_mkdtemp(dir);
    j_path(path, sizeof path, dir, "j.bin");
    cfg c = base_cfg();
    bosch_result *ref = reference(&c, NULL);

    jrec r;
    jrec_init(&r, 48, NULL);
    int st, jbad;
    bosch_result *a = run_at(&c, path, BOSCH_JOURNAL_CREATE, &r, -1, &st, 0, &jbad);
    ck_assert_msg(st > 0, "%s", bosch_err_name(st));
    ck_assert_msg(!jbad, "the journal did not grow by one record per tell");
    assert_same(ref, a, "ask/tell with journal vs reference");
    assert_journal_matches(path, a, 1);
    for (size_t i = 0; i < bosch_result_history_size(a); i++) {
        double w = bosch_result_history_wall(a, i);
        ck_assert_msg(isfinite(w) && w >= 0, "history_wall(%zu) = %g", i, w);
    }
    ck_assert(isnan(bosch_result_history_wall(a, bosch_result_history_size(a))));
    jrec_free(&r);

    /* Resume by ask/tell: the first ask already ends the search. */
    bosch_optimizer *o = cfg_opt(&c, path, BOSCH_JOURNAL_RESUME);
    size_t n = 99;
    int rc = bosch_ask(o, &n);
    ck_assert_msg(rc == bosch_result_status(ref), "first ask on a complete journal: %s (%s)",
                  bosch_err_name(rc), bosch_last_error(o));
    ck_assert_uint_eq(n, 0);
    bosch_result *b = get_result(o);
    assert_same(ref, b, "ask/tell full replay");
    ck_assert_uint_eq(bosch_result_replayed(b), bosch_result_evaluations(b, -1));
    assert_walls_kept(a, b, bosch_result_history_size(a));
    bosch_result_free(b);
    bosch_destroy(o);

    /* The ask/tell journal resumed by callbacks, and a callback journal by ask/tell. */
    jrec_init(&r, 48, NULL);
    b = run_cb(&c, path, BOSCH_JOURNAL_RESUME, &r, 0, &st, NULL);
    ck_assert_uint_eq(r.calls, 0);
    assert_same(ref, b, "ask/tell journal resumed by callback");
    bosch_result_free(b);
    jrec_free(&r);
    bosch_result_free(make_journal(&c, path));
    jrec_init(&r, 48, NULL);
    b = run_at(&c, path, BOSCH_JOURNAL_RESUME, &r, -1, &st, 0, NULL);
    ck_assert_uint_eq(r.calls, 0);
    assert_same(ref, b, "callback journal resumed by ask/tell");
    bosch_result_free(b);
    jrec_free(&r);

    bosch_result_free(a);
    bosch_result_free(ref);
    j_rmtree(dir);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Partial journals                                                          */
/* ------------------------------------------------------------------------ */
START_TEST(partial_resume_callback)
{
    char dir[64], path[128];
    j_mkdtemp(dir);
    j_path(path, sizeof path, dir, "j.bin");
    cfg c = base_cfg();
    int ref_st;
    bosch_result *ref = reference(&c, &ref_st);
    uint64_t total = bosch_result_evaluations(ref, -1);
    static const long ks[] = {1, 2, 3, 5, 8, 13, 40, 77, 119};
    for (int batch = 0; batch < 2; batch++)
        for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
            long k = ks[ki];
            if ((uint64_t)k >= total)
                continue;
            mset seen;
            mset_init(&seen, 48);
            jrec r;
            jrec_init(&r, 48, &seen);
            r.stop_after = k;
            int st;
            bosch_result *first = run_cb(&c, path, BOSCH_JOURNAL_CREATE, &r, batch, &st, NULL);
            ck_assert_msg(st == BOSCH_FORCED_STOP, "k=%ld: %s", k, bosch_err_name(st));
            uint64_t e1 = bosch_result_evaluations(first, -1);
            ck_assert_uint_ge(e1, (uint64_t)k);
            ck_assert_uint_eq(e1, r.calls);
            ck_assert_uint_eq(j_count_records(path), e1);
            jrec_free(&r);

            jrec_init(&r, 48, &seen);
            r.jpath = batch ? NULL : path;
            r.jbase = e1;
            pobs po = {0, 0, 0};
            bosch_result *second = run_cb(&c, path, BOSCH_JOURNAL_RESUME, &r, batch, &st, &po);
            ck_assert_msg(st == ref_st, "k=%ld: resumed run ended with %s", k, bosch_err_name(st));
            assert_same(ref, second, "partial resume");
            ck_assert_msg(seen.count == total && r.dup == 0,
                          "k=%ld: %zu masks evaluated twice across the two runs", k, r.dup);
            ck_assert_uint_eq(r.calls, total - e1);
            ck_assert_uint_eq(bosch_result_replayed(second), e1);
            ck_assert_uint_eq(po.max_replayed, e1);
            ck_assert_msg(po.bad == 0, "progress flags %d", po.bad);
            ck_assert_msg(!r.jbad, "k=%ld: at call %zu the journal held %zu records (expected %zu)",
                          k, r.jbad_call, r.jbad_records, (size_t)(e1 + r.jbad_call));
            assert_walls_kept(first, second, e1);
            assert_journal_matches(path, second, 1);
            jrec_free(&r);
            bosch_result_free(first);
            bosch_result_free(second);
            mset_free(&seen);
        }
    bosch_result_free(ref);
    j_rmtree(dir);
}
END_TEST

/* Three runs: stop, resume and stop again, resume to the end. */
START_TEST(partial_resume_chain)
{
    char dir[64], path[128];
    j_mkdtemp(dir);
    j_path(path, sizeof path, dir, "j.bin");
    cfg c = base_cfg();
    int ref_st;
    bosch_result *ref = reference(&c, &ref_st);
    mset seen;
    mset_init(&seen, 48);
    jrec r;
    jrec_init(&r, 48, &seen);
    r.stop_after = 20;
    int st;
    bosch_result *a = run_cb(&c, path, BOSCH_JOURNAL_AUTO, &r, 0, &st, NULL);
    ck_assert_int_eq(st, BOSCH_FORCED_STOP);
    size_t dup = r.dup;
    jrec_free(&r);
    jrec_init(&r, 48, &seen);
    r.stop_after = 30;
    bosch_result *b = run_cb(&c, path, BOSCH_JOURNAL_AUTO, &r, 0, &st, NULL);
    ck_assert_int_eq(st, BOSCH_FORCED_STOP);
    ck_assert_uint_eq(bosch_result_replayed(b), bosch_result_evaluations(a, -1));
    ck_assert_uint_eq(bosch_result_evaluations(b, -1), bosch_result_evaluations(a, -1) + 30);
    dup += r.dup;
    jrec_free(&r);
    jrec_init(&r, 48, &seen);
    bosch_result *d = run_cb(&c, path, BOSCH_JOURNAL_AUTO, &r, 0, &st, NULL);
    ck_assert_int_eq(st, ref_st);
    dup += r.dup;
    ck_assert_uint_eq(bosch_result_replayed(d), bosch_result_evaluations(b, -1));
    assert_same(ref, d, "two interruptions");
    ck_assert_uint_eq(dup, 0);
    ck_assert_uint_eq(seen.count, bosch_result_evaluations(ref, -1));
    jrec_free(&r);
    mset_free(&seen);
    bosch_result_free(a);
    bosch_result_free(b);
    bosch_result_free(d);
    bosch_result_free(ref);
    j_rmtree(dir);
}
END_TEST

/* Ask/tell abandoned mid-batch after k tells, resumed by ask/tell: the
 * candidates handed out are exactly the ones not journaled. */
START_TEST(partial_resume_asktell)
{
    char dir[64], path[128];
    j_mkdtemp(dir);
    j_path(path, sizeof path, dir, "j.bin");
    cfg c = base_cfg();
    int ref_st;
    bosch_result *ref = reference(&c, &ref_st);
    uint64_t total = bosch_result_evaluations(ref, -1);
    static const long ks[] = {1, 2, 5, 11, 50, 100};
    for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
        long k = ks[ki];
        mset seen;
        mset_init(&seen, 48);
        jrec r;
        jrec_init(&r, 48, &seen);
        int st;
        bosch_result *a = run_at(&c, path, BOSCH_JOURNAL_CREATE, &r, k, &st, 0, NULL);
        ck_assert_uint_eq(r.calls, (size_t)k);
        ck_assert_uint_eq(j_count_records(path), (size_t)k);
        /* Told but not yet observed (the batch is incomplete): journaled,
         * maybe not yet in the result. */
        ck_assert_uint_le(bosch_result_evaluations(a, -1), (uint64_t)k);
        jrec_free(&r);
        jrec_init(&r, 48, &seen);
        int jbad;
        bosch_result *b = run_at(&c, path, BOSCH_JOURNAL_RESUME, &r, -1, &st, (size_t)k, &jbad);
        ck_assert_int_eq(st, ref_st);
        ck_assert_msg(r.dup == 0, "k=%ld: %zu journaled candidates handed out again", k, r.dup);
        ck_assert_uint_eq(r.calls, total - (uint64_t)k);
        ck_assert(!jbad);
        ck_assert_uint_eq(bosch_result_replayed(b), (uint64_t)k);
        assert_same(ref, b, "ask/tell partial resume");
        assert_walls_kept(a, b, bosch_result_history_size(a));
        jrec_free(&r);
        bosch_result_free(a);
        bosch_result_free(b);
        mset_free(&seen);
    }
    bosch_result_free(ref);
    j_rmtree(dir);
}
END_TEST

/* Partial resume for every variant, supplied anchors and other options. */
START_TEST(partial_resume_variants)
{
    char dir[64], path[128];
    j_mkdtemp(dir);
    j_path(path, sizeof path, dir, "j.bin");
    for (int v = 0; v < 6; v++) {
        cfg c = base_cfg();
        if (v < 4)
            c.variant = v;
        else if (v == 4) {
            c.anchors = 1;
            c.batch = 5;
            c.strategy = "ea";
        } else {
            c.fix = 9;
            c.bounds = 0;
            c.group_cap = 16;
            c.seed = 77;
        }
        int ref_st;
        bosch_result *ref = reference(&c, &ref_st);
        uint64_t total = bosch_result_evaluations(ref, -1);
        mset seen;
        mset_init(&seen, 48);
        jrec r;
        jrec_init(&r, 48, &seen);
        r.stop_after = (long)total / 2;
        int st;
        bosch_result *a = run_cb(&c, path, BOSCH_JOURNAL_CREATE, &r, 0, &st, NULL);
        ck_assert_msg(st == BOSCH_FORCED_STOP, "case %d: %s", v, bosch_err_name(st));
        jrec_free(&r);
        jrec_init(&r, 48, &seen);
        bosch_result *b = run_cb(&c, path, BOSCH_JOURNAL_RESUME, &r, 0, &st, NULL);
        ck_assert_msg(st == ref_st, "case %d: resumed %s", v, bosch_err_name(st));
        ck_assert_msg(r.dup == 0, "case %d: %zu masks evaluated twice", v, r.dup);
        assert_same(ref, b, "variant partial resume");
        jrec_free(&r);
        mset_free(&seen);
        bosch_result_free(a);
        bosch_result_free(b);
        bosch_result_free(ref);
    }
    j_rmtree(dir);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Torn tails                                                                */
/* ------------------------------------------------------------------------ */
/* Resumes `path` (holding a copy of `full` cut at `cut`, inside frame j of
 * `fr`) and checks: the records before j replayed, the evaluator called for
 * record j first and then for the following ones in order, the file
 * truncated to frame j's start before the first evaluation, and the final
 * result equal to `ref`. */
static void check_torn(const cfg *c, const char *path, const uint8_t *full, const jframes *fr,
                       size_t j, const bosch_result *ref, int ref_st, const char *what, size_t cut)
{
    size_t total = fr->n - 1;
    jrec r;
    jrec_init(&r, 48, NULL);
    r.jpath = path;
    r.jbase = j - 1;
    int st;
    bosch_result *res = run_cb(c, path, BOSCH_JOURNAL_RESUME, &r, 0, &st, NULL);
    ck_assert_msg(st == ref_st, "%s at %zu (frame %zu at %zu): %s", what, cut, j, fr->f[j].off,
                  bosch_err_name(st));
    ck_assert_msg(r.calls == total - (j - 1), "%s at %zu: %zu evaluations redone, expected %zu",
                  what, cut, r.calls, total - (j - 1));
    ck_assert_msg(r.size_at_first == (long)fr->f[j].off,
                  "%s at %zu: journal size %ld at the first evaluation, expected %zu", what, cut,
                  r.size_at_first, fr->f[j].off);
    for (size_t i = 0; i < r.calls; i++) {
        jrecord rec;
        ck_assert_int_eq(j_record(full, &fr->f[j + i], 48, &rec), 0);
        ck_assert_msg(memcmp(rec.mask, r.log + i * J_MAXU, 48) == 0,
                      "%s at %zu: evaluation %zu after resume is not the lost record %zu", what,
                      cut, i, j - 1 + i);
    }
    ck_assert_msg(!r.jbad, "%s at %zu: journal record count wrong at call %zu", what, cut,
                  r.jbad_call);
    ck_assert_uint_eq(bosch_result_replayed(res), j - 1);
    assert_same(ref, res, what);
    /* The file: the valid prefix kept byte for byte, then the redone records. */
    size_t n2 = 0;
    uint8_t *b2 = j_slurp(path, &n2);
    ck_assert_msg(n2 >= fr->f[j].off && memcmp(b2, full, fr->f[j].off) == 0,
                  "%s at %zu: the valid prefix changed", what, cut);
    jframes f2 = j_parse(b2, n2);
    ck_assert_msg(!f2.tail && f2.n == fr->n, "%s at %zu: %zu valid frames after resume, tail %d",
                  what, cut, f2.n, f2.tail);
    j_frames_free(&f2);
    free(b2);
    bosch_result_free(res);
    jrec_free(&r);
}

START_TEST(torn_last_frame_every_byte)
{
    char dir[64], src[128], path[128];
    j_mkdtemp(dir);
    j_path(src, sizeof src, dir, "full.bin");
    j_path(path, sizeof path, dir, "cut.bin");
    cfg c = base_cfg();
    int ref_st;
    bosch_result *ref = reference(&c, &ref_st);
    bosch_result_free(make_journal(&c, src));
    size_t size = 0;
    uint8_t *full = j_slurp(src, &size);
    jframes fr = j_parse(full, size);
    ck_assert(!fr.tail);
    ck_assert_uint_eq(fr.n, bosch_result_evaluations(ref, -1) + 1);
    size_t last = fr.n - 1;
    for (size_t cut = fr.f[last].off; cut < size; cut++) {
        ck_assert_int_eq(j_spit(path, full, cut), 0);
        check_torn(&c, path, full, &fr, last, ref, ref_st, "cut in the last frame", cut);
    }
    /* Cuts inside earlier frames (then the last one): the rest is redone. */
    size_t js[] = {1, 2, fr.n / 2, fr.n - 2};
    for (size_t k = 0; k < 4; k++) {
        size_t j = js[k];
        size_t cuts[] = {fr.f[j].off + 1, fr.f[j].off + 12, fr.f[j].off + JHDR,
                         fr.f[j].end - 1};
        for (size_t q = 0; q < 4; q++) {
            ck_assert_int_eq(j_spit(path, full, cuts[q]), 0);
            check_torn(&c, path, full, &fr, j, ref, ref_st, "cut in an earlier frame", cuts[q]);
        }
    }
    /* Ask/tell: the first ask hands out exactly the lost candidate, after
     * truncating the file. */
    for (size_t cut = fr.f[last].off + 1; cut < size; cut += 9) {
        ck_assert_int_eq(j_spit(path, full, cut), 0);
        bosch_optimizer *o = cfg_opt(&c, path, BOSCH_JOURNAL_RESUME);
        size_t n = 0;
        ck_assert_int_eq(bosch_ask(o, &n), BOSCH_OK);
        ck_assert_uint_eq(n, 1);
        ck_assert_int_eq(j_fsize(path), (long)fr.f[last].off);
        n = 0; /* asking again before telling: the same batch */
        ck_assert_int_eq(bosch_ask(o, &n), BOSCH_OK);
        ck_assert_uint_eq(n, 1);
        uint8_t m[J_MAXU];
        jrecord rec;
        ck_assert_int_eq(j_record(full, &fr.f[last], 48, &rec), 0);
        ck_assert_int_eq(bosch_candidate(o, 0, m), BOSCH_OK);
        ck_assert_mem_eq(m, rec.mask, 48);
        ck_assert_int_eq(bosch_candidate_stage(o), rec.stage);
        ck_assert_int_eq(bosch_tell(o, 0, any_score(m, 48)), BOSCH_OK);
        ck_assert_int_eq(bosch_ask(o, &n), ref_st);
        bosch_result *res = get_result(o);
        assert_same(ref, res, "ask/tell after a torn tail");
        bosch_result_free(res);
        bosch_destroy(o);
    }
    j_frames_free(&fr);
    free(full);
    bosch_result_free(ref);
    j_rmtree(dir);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Bit flips                                                                 */
/* ------------------------------------------------------------------------ */
/* Bit flips in the header frame, the first record, a middle one and the last
 * one: BOSCH_E_CORRUPT (a crash cuts writes short, it never flips bits), the
 * file left alone. */
START_TEST(bitflip_inner_frames)
{
    char dir[64], src[128], path[128];
    j_mkdtemp(dir);
    j_path(src, sizeof src, dir, "full.bin");
    j_path(path, sizeof path, dir, "flip.bin");
    cfg c = base_cfg();
    bosch_result_free(make_journal(&c, src));
    size_t size = 0;
    uint8_t *full = j_slurp(src, &size);
    jframes fr = j_parse(full, size);
    uint8_t *buf = malloc(size);
    size_t js[] = {0, 1, fr.n / 2, fr.n - 1};
    size_t failures = 0;
    char first_fail[1024] = "";
    for (size_t k = 0; k < 4; k++) {
        const jframe *f = &fr.f[js[k]];
        for (size_t off = f->off; off < f->end; off++)
            for (int bit = 0; bit < 8; bit++) {
                /* Every bit of the 28-byte frame header (magic, kind, lengths,
                 * checksums); one bit (rotating) of each payload byte. */
                if (off >= f->off + JHDR && bit != (int)(off % 8))
                    continue;
                memcpy(buf, full, size);
                buf[off] ^= (uint8_t)(1u << bit);
                ck_assert_int_eq(j_spit(path, buf, size), 0);
                char msg[512];
                int rc = first_ask(&c, path, BOSCH_JOURNAL_RESUME, msg, sizeof msg, NULL);
                size_t n2 = 0;
                uint8_t *after = j_slurp(path, &n2);
                int unchanged = after && n2 == size && memcmp(after, buf, size) == 0;
                free(after);
                if (rc != BOSCH_E_CORRUPT || !unchanged) {
                    if (!failures++)
                        snprintf(first_fail, sizeof first_fail,
                                 "frame %zu (at %zu), byte %zu (+%zu), bit %d: %s, file %s; %.300s",
                                 js[k], f->off, off, off - f->off, bit, bosch_err_name(rc),
                                 unchanged ? "unchanged" : "MODIFIED", msg);
                }
            }
    }
    ck_assert_msg(failures == 0, "%zu bit flips not reported as BOSCH_E_CORRUPT; first: %s",
                  failures, first_fail);
    free(buf);
    j_frames_free(&fr);
    free(full);
    j_rmtree(dir);
}
END_TEST

/* The message gives the damaged frame's offset. */
START_TEST(corrupt_message_offset)
{
    char dir[64], src[128];
    j_mkdtemp(dir);
    j_path(src, sizeof src, dir, "full.bin");
    cfg c = base_cfg();
    bosch_result_free(make_journal(&c, src));
    size_t size = 0;
    uint8_t *full = j_slurp(src, &size);
    jframes fr = j_parse(full, size);
    const jframe *f = &fr.f[fr.n / 2];
    full[f->off + JHDR + 3] ^= 0x10;
    ck_assert_int_eq(j_spit(src, full, size), 0);
    char msg[512], dec[32], hex[32];
    ck_assert_int_eq(first_ask(&c, src, BOSCH_JOURNAL_AUTO, msg, sizeof msg, NULL),
                     BOSCH_E_CORRUPT);
    snprintf(dec, sizeof dec, "%zu", f->off);
    snprintf(hex, sizeof hex, "%zx", f->off);
    ck_assert_msg(contains(msg, dec) || contains(msg, hex), "message lacks offset %zu: \"%s\"",
                  f->off, msg);
    /* Also through bosch_optimize(). */
    jrec r;
    jrec_init(&r, 48, NULL);
    int st;
    bosch_result *res = run_cb(&c, src, BOSCH_JOURNAL_RESUME, &r, 0, &st, NULL);
    ck_assert_int_eq(st, BOSCH_E_CORRUPT);
    ck_assert_int_eq(bosch_result_status(res), BOSCH_E_CORRUPT);
    ck_assert_uint_eq(r.calls, 0);
    bosch_result_free(res);
    jrec_free(&r);
    j_frames_free(&fr);
    free(full);
    j_rmtree(dir);
}
END_TEST

/* Bytes after a complete journal: fewer than a frame header's worth is a
 * torn tail (dropped, nothing redone); a full frame header's worth of junk is
 * damage (BOSCH_E_CORRUPT). */
START_TEST(junk_after_last_frame)
{
    char dir[64], src[128], path[128];
    j_mkdtemp(dir);
    j_path(src, sizeof src, dir, "full.bin");
    j_path(path, sizeof path, dir, "junk.bin");
    cfg c = base_cfg();
    int ref_st;
    bosch_result *ref = reference(&c, &ref_st);
    bosch_result_free(make_journal(&c, src));
    size_t size = 0;
    uint8_t *full = j_slurp(src, &size);
    static const uint8_t junk1[] = {'B', 'S', 'H', 'J', 2, 0, 0, 0, 0xff, 0xff, 0, 0, 7};
    static const uint8_t junk2[] = "hello";
    static const uint8_t junk3[JHDR - 1] = {'B', 'S', 'H', 'J', 2, 0, 0, 0, 9};
    const uint8_t *torn[] = {junk1, junk2, junk3};
    size_t tn[] = {sizeof junk1, 5, sizeof junk3};
    for (int k = 0; k < 3; k++) {
        uint8_t *ext = j_cat3(full, size, torn[k], tn[k], NULL, 0);
        ck_assert_int_eq(j_spit(path, ext, size + tn[k]), 0);
        jrec r;
        jrec_init(&r, 48, NULL);
        int st;
        bosch_result *res = run_cb(&c, path, BOSCH_JOURNAL_RESUME, &r, 0, &st, NULL);
        ck_assert_msg(st == ref_st, "%zu junk bytes: %s", tn[k], bosch_err_name(st));
        ck_assert_uint_eq(r.calls, 0);
        assert_same(ref, res, "junk tail");
        assert_file_eq(path, full, size, "torn junk tail truncated away");
        bosch_result_free(res);
        jrec_free(&r);
        free(ext);
    }
    /* A whole frame header of junk (bad header checksum), and a complete
     * frame header whose checksum is right but whose magic is not. */
    uint8_t junk4[JHDR + 10];
    trng g = {99};
    for (size_t i = 0; i < sizeof junk4; i++)
        junk4[i] = (uint8_t)trng_next(&g);
    memcpy(junk4, "BSHJ", 4);
    uint8_t *ext = j_cat3(full, size, junk4, sizeof junk4, NULL, 0);
    ck_assert_int_eq(j_spit(path, ext, size + sizeof junk4), 0);
    char msg[512];
    ck_assert_int_eq(first_ask(&c, path, BOSCH_JOURNAL_RESUME, msg, sizeof msg, NULL),
                     BOSCH_E_CORRUPT);
    assert_file_eq(path, ext, size + sizeof junk4, "junk frame");
    free(ext);
    uint8_t *fb;
    uint8_t raw[32] = {0};
    size_t fn = j_frame(JKIND_RECORD, raw, 25, &fb);
    memcpy(fb, "BSHX", 4);
    j_put32(fb + 16, j_hsum(fb));
    ext = j_cat3(full, size, fb, fn, NULL, 0);
    ck_assert_int_eq(j_spit(path, ext, size + fn), 0);
    ck_assert_int_eq(first_ask(&c, path, BOSCH_JOURNAL_RESUME, msg, sizeof msg, NULL),
                     BOSCH_E_CORRUPT);
    free(ext);
    free(fb);
    free(full);
    bosch_result_free(ref);
    j_rmtree(dir);
}
END_TEST

/* Not a journal: BOSCH_E_CORRUPT "not a libbosch journal", file untouched. */
START_TEST(not_a_journal)
{
    char dir[64], src[128], path[128];
    j_mkdtemp(dir);
    j_path(src, sizeof src, dir, "full.bin");
    j_path(path, sizeof path, dir, "x.bin");
    cfg c = base_cfg();
    bosch_result_free(make_journal(&c, src));
    size_t size = 0;
    uint8_t *full = j_slurp(src, &size);
    uint8_t *buf = malloc(size);
    char msg[512];
    for (size_t off = 0; off < 4; off++)
        for (int bit = 0; bit < 8; bit++) {
            memcpy(buf, full, size);
            buf[off] ^= (uint8_t)(1u << bit);
            ck_assert_int_eq(j_spit(path, buf, size), 0);
            for (int mode = BOSCH_JOURNAL_RESUME; mode <= BOSCH_JOURNAL_AUTO; mode++) {
                int rc = first_ask(&c, path, mode, msg, sizeof msg, NULL);
                ck_assert_msg(rc == BOSCH_E_CORRUPT, "magic byte %zu bit %d: %s", off, bit,
                              bosch_err_name(rc));
                ck_assert_msg(contains(msg, "not a libbosch journal"), "message: \"%s\"", msg);
                assert_file_eq(path, buf, size, "bad magic");
            }
        }
    /* A file shorter than a header frame that does not start with the magic
     * is not ours: reported, not overwritten as a new journal. */
    ck_assert_int_eq(j_spit(path, (const uint8_t *)"hello world", 11), 0);
    for (int mode = BOSCH_JOURNAL_RESUME; mode <= BOSCH_JOURNAL_AUTO; mode++) {
        int rc = first_ask(&c, path, mode, msg, sizeof msg, NULL);
        ck_assert_msg(rc == BOSCH_E_CORRUPT, "11-byte text file, mode %d: %s", mode,
                      bosch_err_name(rc));
        assert_file_eq(path, (const uint8_t *)"hello world", 11, "short text file");
    }
    /* A text file, and random bytes. */
    const char *text = "seed=3\nbudget=120\nthis is a config file, not a journal\n";
    ck_assert_int_eq(j_spit(path, (const uint8_t *)text, strlen(text)), 0);
    ck_assert_int_eq(first_ask(&c, path, BOSCH_JOURNAL_AUTO, msg, sizeof msg, NULL),
                     BOSCH_E_CORRUPT);
    assert_file_eq(path, (const uint8_t *)text, strlen(text), "text file");
    trng g = {12345};
    uint8_t *rnd = malloc(65536);
    for (size_t i = 0; i < 65536; i++)
        rnd[i] = (uint8_t)trng_next(&g);
    rnd[0] = 'X';
    ck_assert_int_eq(j_spit(path, rnd, 65536), 0);
    jrec r;
    jrec_init(&r, 48, NULL);
    int st;
    bosch_result *res = run_cb(&c, path, BOSCH_JOURNAL_AUTO, &r, 0, &st, NULL);
    ck_assert_int_eq(st, BOSCH_E_CORRUPT);
    ck_assert_uint_eq(r.calls, 0);
    assert_file_eq(path, rnd, 65536, "random file");
    bosch_result_free(res);
    jrec_free(&r);
    /* The magic followed by random frames. */
    memcpy(rnd, "BSHJ", 4);
    ck_assert_int_eq(j_spit(path, rnd, 65536), 0);
    ck_assert_int_eq(first_ask(&c, path, BOSCH_JOURNAL_AUTO, msg, sizeof msg, NULL),
                     BOSCH_E_CORRUPT);
    free(rnd);
    free(buf);
    free(full);
    j_rmtree(dir);
}
END_TEST

/* An empty file or a header frame cut short: a new journal. */
START_TEST(header_cut_short)
{
    char dir[64], src[128], path[128];
    j_mkdtemp(dir);
    j_path(src, sizeof src, dir, "full.bin");
    j_path(path, sizeof path, dir, "cut.bin");
    cfg c = base_cfg();
    int ref_st;
    bosch_result *ref = reference(&c, &ref_st);
    uint64_t total = bosch_result_evaluations(ref, -1);
    bosch_result_free(make_journal(&c, src));
    size_t size = 0;
    uint8_t *full = j_slurp(src, &size);
    jframes fr = j_parse(full, size);
    size_t hend = fr.f[0].end;
    for (size_t cut = 0; cut <= hend; cut++) {
        if (cut > 40 && cut < hend - 8 && cut % 5 != 0)
            continue; /* every byte of the frame header and the ends; every 5th in between */
        int mode = cut % 2 ? BOSCH_JOURNAL_RESUME : BOSCH_JOURNAL_AUTO;
        ck_assert_int_eq(j_spit(path, full, cut), 0);
        jrec r;
        jrec_init(&r, 48, NULL);
        int st;
        bosch_result *res = run_cb(&c, path, mode, &r, 0, &st, NULL);
        ck_assert_msg(st == ref_st, "header cut at %zu of %zu: %s", cut, hend, bosch_err_name(st));
        ck_assert_msg(r.calls == total, "header cut at %zu: %zu evaluations, expected %lu", cut,
                      r.calls, (unsigned long)total);
        ck_assert_uint_eq(bosch_result_replayed(res), 0);
        assert_same(ref, res, "header cut short");
        assert_journal_matches(path, res, 1);
        bosch_result_free(res);
        jrec_free(&r);
    }
    j_frames_free(&fr);
    free(full);
    bosch_result_free(ref);
    j_rmtree(dir);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Mismatching settings                                                      */
/* ------------------------------------------------------------------------ */
typedef struct {
    const char *name;   /* the field the message must name */
    const char *name2;  /* a second field that must be named, or NULL */
    void (*apply)(cfg *);
} variation;

static void v_layers(cfg *c) { c->L = 7; }
static void v_shape_same_units(cfg *c) { c->L = 8; c->G = 6; }
static void v_heads(cfg *c) { c->H = 2; }
static void v_target(cfg *c) { c->T = 20; }
static void v_fix(cfg *c) { c->fix = 0; }
static void v_bounds(cfg *c) { c->bounds = 1; }
static void v_seed(cfg *c) { c->seed = 4; }
static void v_budget(cfg *c) { c->budget = 121; }
static void v_probe_budget(cfg *c) { c->probe_budget = 30; }
static void v_batch(cfg *c) { c->batch = 4; }
static void v_strategy(cfg *c) { c->strategy = "random"; }
static void v_variant(cfg *c) { c->variant = BOSCH_VARIANT_GROUP_ONLY; }
static void v_alpha(cfg *c) { c->alpha = 2.0; }
static void v_probe_fraction(cfg *c) { c->probe_fraction = 0.3; }
static void v_polish(cfg *c) { c->polish_fraction = 0.2; }
static void v_spread(cfg *c) { c->ratio_spread = 0.25; }
static void v_group_cap(cfg *c) { c->group_cap = 16; }
static void v_anchors(cfg *c) { c->anchors = 1; }
static void v_seed_budget(cfg *c) { c->seed = 9; c->budget = 100; }

START_TEST(mismatch_names_field)
{
    static const variation vs[] = {
        {"layers", NULL, v_layers},
        {"kv_groups", "layers", v_shape_same_units},
        {"heads_per_group", NULL, v_heads},
        {"target_units", NULL, v_target},
        {"fix", NULL, v_fix},
        {"min_ratio", "max_ratio", v_bounds},
        {"seed", NULL, v_seed},
        {"budget", NULL, v_budget},
        {"probe_budget", NULL, v_probe_budget},
        {"batch_size", NULL, v_batch},
        {"strategy", NULL, v_strategy},
        {"variant", NULL, v_variant},
        {"alpha", NULL, v_alpha},
        {"probe_fraction", NULL, v_probe_fraction},
        {"polish_fraction", NULL, v_polish},
        {"ratio_spread", NULL, v_spread},
        {"group_cap", NULL, v_group_cap},
        {"anchors", NULL, v_anchors},
        {"seed", "budget", v_seed_budget},
    };
    char dir[64], path[128];
    j_mkdtemp(dir);
    j_path(path, sizeof path, dir, "j.bin");
    cfg base = base_cfg();
    base.bounds = 2;
    bosch_result_free(make_journal(&base, path));
    size_t size = 0;
    uint8_t *orig = j_slurp(path, &size);
    for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++) {
        cfg c = base;
        vs[i].apply(&c);
        for (int way = 0; way < 3; way++) {
            char msg[1024];
            int rc;
            if (way < 2) {
                rc = first_ask(&c, path, way ? BOSCH_JOURNAL_AUTO : BOSCH_JOURNAL_RESUME, msg,
                               sizeof msg, NULL);
            } else {
                jrec r;
                jrec_init(&r, (size_t)c.L * c.G, NULL);
                bosch_optimizer *o = cfg_opt(&c, path, BOSCH_JOURNAL_RESUME);
                ck_assert_int_eq(bosch_set_evaluator(o, jrec_eval, &r), BOSCH_OK);
                rc = bosch_optimize(o);
                snprintf(msg, sizeof msg, "%s", bosch_last_error(o));
                ck_assert_uint_eq(r.calls, 0);
                bosch_destroy(o);
                jrec_free(&r);
            }
            ck_assert_msg(rc == BOSCH_E_MISMATCH, "%s differs (way %d): %s (%s)", vs[i].name, way,
                          bosch_err_name(rc), msg);
            ck_assert_msg(contains(msg, vs[i].name), "%s differs: message \"%s\"", vs[i].name,
                          msg);
            if (vs[i].name2)
                ck_assert_msg(contains(msg, vs[i].name2), "%s differs: message \"%s\"",
                              vs[i].name2, msg);
            assert_file_eq(path, orig, size, vs[i].name);
        }
    }
    /* Both values appear in the message. */
    cfg c = base;
    c.seed = 987654;
    char msg[1024];
    ck_assert_int_eq(first_ask(&c, path, BOSCH_JOURNAL_RESUME, msg, sizeof msg, NULL),
                     BOSCH_E_MISMATCH);
    ck_assert_msg(contains(msg, "987654") && contains(msg, "3"), "message \"%s\"", msg);
    free(orig);
    j_rmtree(dir);
}
END_TEST

/* time_limit, threads and journal_sync may differ. */
START_TEST(mismatch_tolerated_fields)
{
    char dir[64], path[128];
    j_mkdtemp(dir);
    j_path(path, sizeof path, dir, "j.bin");
    cfg base = base_cfg();
    bosch_result *orig = make_journal(&base, path);
    for (int k = 0; k < 4; k++) {
        cfg c = base;
        if (k == 0)
            c.time_limit = 1000.0;
        else if (k == 1)
            c.threads = 4;
        else if (k == 2)
            c.sync = 1;
        else {
            c.threads = 8;
            c.thread_safe = 1;
            c.time_limit = 3600;
            c.sync = 0;
        }
        jrec r;
        jrec_init(&r, 48, NULL);
        int st;
        bosch_result *res = run_cb(&c, path, BOSCH_JOURNAL_RESUME, &r, 0, &st, NULL);
        ck_assert_msg(st == bosch_result_status(orig), "case %d: %s", k, bosch_err_name(st));
        ck_assert_uint_eq(r.calls, 0);
        assert_same(orig, res, "tolerated field");
        bosch_result_free(res);
        jrec_free(&r);
    }
    bosch_result_free(orig);
    j_rmtree(dir);
}
END_TEST

/* Replaces the value of "key" in a JSON text (a string value when `quoted`). */
static char *json_replace(const char *json, const char *key, const char *value, int quoted)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\"", key);
    const char *k = strstr(json, pat);
    ck_assert_msg(k != NULL, "no %s in %s", pat, json);
    const char *p = k + strlen(pat);
    while (*p == ' ' || *p == ':')
        p++;
    const char *e = p;
    if (quoted) {
        ck_assert_int_eq(*p, '"');
        e = strchr(p + 1, '"') + 1;
    } else {
        while (*e && *e != ',' && *e != '}' && *e != ' ')
            e++;
    }
    size_t n = strlen(json) + strlen(value) + 8;
    char *out = malloc(n);
    snprintf(out, n, "%.*s%s%s%s%s", (int)(p - json), json, quoted ? "\"" : "", value,
             quoted ? "\"" : "", e);
    return out;
}

/* Writes `path` = a new header frame with `json` + the records of `full`. */
static void write_with_header(const char *path, const uint8_t *full, size_t size,
                              const jframes *fr, const char *json)
{
    uint8_t *h;
    size_t hn = j_frame(JKIND_HEADER, json, strlen(json), &h);
    uint8_t *out = j_cat3(h, hn, full + fr->f[0].end, size - fr->f[0].end, NULL, 0);
    ck_assert_int_eq(j_spit(path, out, hn + size - fr->f[0].end), 0);
    free(out);
    free(h);
}

START_TEST(mismatch_versions)
{
    char dir[64], src[128], path[128];
    j_mkdtemp(dir);
    j_path(src, sizeof src, dir, "full.bin");
    j_path(path, sizeof path, dir, "v.bin");
    cfg c = base_cfg();
    bosch_result *orig = make_journal(&c, src);
    size_t size = 0;
    uint8_t *full = j_slurp(src, &size);
    jframes fr = j_parse(full, size);
    char *json = j_payload(full, &fr.f[0]);
    ck_assert_ptr_nonnull(json);

    /* Control: the same header re-encoded here is accepted (so the crafted
     * frames below fail for their content, not their encoding). */
    write_with_header(path, full, size, &fr, json);
    jrec r;
    jrec_init(&r, 48, NULL);
    int st;
    bosch_result *res = run_cb(&c, path, BOSCH_JOURNAL_RESUME, &r, 0, &st, NULL);
    ck_assert_msg(st == bosch_result_status(orig), "re-encoded header: %s", bosch_err_name(st));
    ck_assert_uint_eq(r.calls, 0);
    assert_same(orig, res, "re-encoded header");
    bosch_result_free(res);
    jrec_free(&r);

    char msg[1024];
    char *lib = json_replace(json, "library", "0.0.1", 1);
    write_with_header(path, full, size, &fr, lib);
    ck_assert_int_eq(first_ask(&c, path, BOSCH_JOURNAL_RESUME, msg, sizeof msg, NULL),
                     BOSCH_E_MISMATCH);
    ck_assert_msg(contains(msg, "0.0.1") && contains(msg, bosch_version_string()),
                  "library mismatch message \"%s\"", msg);
    free(lib);

    lib = json_replace(json, "library", "99.0.0", 1);
    write_with_header(path, full, size, &fr, lib);
    ck_assert_int_eq(first_ask(&c, path, BOSCH_JOURNAL_AUTO, msg, sizeof msg, NULL),
                     BOSCH_E_MISMATCH);
    free(lib);

    char *fmt = json_replace(json, "format", "2", 0);
    write_with_header(path, full, size, &fr, fmt);
    ck_assert_int_eq(first_ask(&c, path, BOSCH_JOURNAL_RESUME, msg, sizeof msg, NULL),
                     BOSCH_E_MISMATCH);
    ck_assert_msg(contains(msg, "format"), "format mismatch message \"%s\"", msg);
    free(fmt);

    /* A crafted header with another seed is caught from the file's side too. */
    char *sd = json_replace(json, "seed", "4", 0);
    write_with_header(path, full, size, &fr, sd);
    ck_assert_int_eq(first_ask(&c, path, BOSCH_JOURNAL_RESUME, msg, sizeof msg, NULL),
                     BOSCH_E_MISMATCH);
    ck_assert_msg(contains(msg, "seed"), "message \"%s\"", msg);
    free(sd);

    /* Header payload that is not JSON, or JSON without the fields. */
    write_with_header(path, full, size, &fr, "this is not json");
    int rc = first_ask(&c, path, BOSCH_JOURNAL_RESUME, msg, sizeof msg, NULL);
    ck_assert_msg(rc == BOSCH_E_CORRUPT || rc == BOSCH_E_MISMATCH, "non-JSON header: %s",
                  bosch_err_name(rc));
    write_with_header(path, full, size, &fr, "{}");
    rc = first_ask(&c, path, BOSCH_JOURNAL_RESUME, msg, sizeof msg, NULL);
    ck_assert_msg(rc == BOSCH_E_CORRUPT || rc == BOSCH_E_MISMATCH, "empty header: %s",
                  bosch_err_name(rc));

    free(json);
    j_frames_free(&fr);
    free(full);
    bosch_result_free(orig);
    j_rmtree(dir);
}
END_TEST

/* Frames with good checksums but bad content (kinds, sizes, zstd data):
 * BOSCH_E_CORRUPT, in the middle and at the end. */
START_TEST(crafted_bad_frames)
{
    char dir[64], src[128], path[128];
    j_mkdtemp(dir);
    j_path(src, sizeof src, dir, "full.bin");
    j_path(path, sizeof path, dir, "c.bin");
    cfg c = base_cfg();
    int ref_st;
    bosch_result *ref = reference(&c, &ref_st);
    bosch_result_free(make_journal(&c, src));
    size_t size = 0;
    uint8_t *full = j_slurp(src, &size);
    jframes fr = j_parse(full, size);
    size_t j = fr.n / 2;
    const jframe *f = &fr.f[j];
    jrecord rec;
    ck_assert_int_eq(j_record(full, f, 48, &rec), 0);
    uint8_t raw[64];
    size_t rawlen = j_record_raw(rec.stage, rec.score, rec.wall, rec.mask, 48, raw);
    ck_assert_uint_eq(rawlen, f->rawlen);

    /* Sanity: a re-encoded copy of the record is accepted in place. */
    uint8_t *good;
    size_t gn = j_frame(JKIND_RECORD, raw, rawlen, &good);
    struct badf {
        const char *what;
        uint8_t *frame;
        size_t n;
    } bad[7];
    size_t nb = 0;
    uint8_t *fb;
    size_t fn;
    /* kind 3, kind 1 (a second header), kind 0 */
    for (uint32_t kind = 0; kind < 4; kind++) {
        if (kind == JKIND_RECORD)
            continue;
        fn = j_frame(kind, raw, rawlen, &fb);
        bad[nb++] = (struct badf){kind == 1 ? "second header" : "unknown kind", fb, fn};
    }
    /* rawlen that is not a record's size (payload consistent with it) */
    fn = j_frame(JKIND_RECORD, raw, rawlen - 8, &fb);
    bad[nb++] = (struct badf){"short record", fb, fn};
    uint8_t big[128] = {0};
    memcpy(big, raw, rawlen);
    fn = j_frame(JKIND_RECORD, big, rawlen + 40, &fb);
    bad[nb++] = (struct badf){"long record", fb, fn};
    /* payload that is not zstd, rawlen right */
    static const uint8_t notzstd[] = "definitely not a zstd frame at all";
    fn = j_frame_raw(JKIND_RECORD, notzstd, sizeof notzstd, (uint32_t)rawlen, &fb);
    bad[nb++] = (struct badf){"not zstd", fb, fn};
    /* zstd frame whose content is longer than rawlen says */
    uint8_t *tmp;
    size_t tn = j_frame(JKIND_RECORD, big, rawlen + 40, &tmp);
    fn = j_frame_raw(JKIND_RECORD, tmp + JHDR, tn - JHDR, (uint32_t)rawlen, &fb);
    free(tmp);
    bad[nb++] = (struct badf){"rawlen lies", fb, fn};

    uint8_t *out = j_cat3(full, f->off, good, gn, full + f->end, size - f->end);
    ck_assert_int_eq(j_spit(path, out, f->off + gn + size - f->end), 0);
    free(out);
    jrec r;
    jrec_init(&r, 48, NULL);
    int st;
    bosch_result *res = run_cb(&c, path, BOSCH_JOURNAL_RESUME, &r, 0, &st, NULL);
    ck_assert_msg(st == ref_st && r.calls == 0, "re-encoded record: %s, %zu calls",
                  bosch_err_name(st), r.calls);
    bosch_result_free(res);
    jrec_free(&r);

    for (size_t i = 0; i < nb; i++) {
        /* in the middle */
        size_t on = f->off + bad[i].n + size - f->end;
        out = j_cat3(full, f->off, bad[i].frame, bad[i].n, full + f->end, size - f->end);
        ck_assert_int_eq(j_spit(path, out, on), 0);
        char msg[512];
        int rc = first_ask(&c, path, BOSCH_JOURNAL_RESUME, msg, sizeof msg, NULL);
        ck_assert_msg(rc == BOSCH_E_CORRUPT, "%s in the middle: %s (%s)", bad[i].what,
                      bosch_err_name(rc), msg);
        assert_file_eq(path, out, on, bad[i].what);
        free(out);
        /* as the last frame: still damage, not a cut-short write */
        const jframe *lf = &fr.f[fr.n - 1];
        on = lf->off + bad[i].n;
        out = j_cat3(full, lf->off, bad[i].frame, bad[i].n, NULL, 0);
        ck_assert_int_eq(j_spit(path, out, on), 0);
        rc = first_ask(&c, path, BOSCH_JOURNAL_RESUME, msg, sizeof msg, NULL);
        ck_assert_msg(rc == BOSCH_E_CORRUPT, "%s as the last frame: %s (%s)", bad[i].what,
                      bosch_err_name(rc), msg);
        assert_file_eq(path, out, on, bad[i].what);
        free(out);
        free(bad[i].frame);
    }
    /* The header frame with kind 2. */
    char *json = j_payload(full, &fr.f[0]);
    fn = j_frame(JKIND_RECORD, json, strlen(json), &fb);
    out = j_cat3(fb, fn, full + fr.f[0].end, size - fr.f[0].end, NULL, 0);
    ck_assert_int_eq(j_spit(path, out, fn + size - fr.f[0].end), 0);
    ck_assert_int_eq(first_ask(&c, path, BOSCH_JOURNAL_RESUME, NULL, 0, NULL), BOSCH_E_CORRUPT);
    free(out);
    free(fb);
    free(json);
    free(good);
    j_frames_free(&fr);
    free(full);
    bosch_result_free(ref);
    j_rmtree(dir);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Modes and options                                                         */
/* ------------------------------------------------------------------------ */
START_TEST(modes)
{
    char dir[64], path[128], other[128];
    j_mkdtemp(dir);
    j_path(path, sizeof path, dir, "j.bin");
    j_path(other, sizeof other, dir, "other.bin");
    cfg c = base_cfg();
    int ref_st;
    bosch_result *ref = reference(&c, &ref_st);
    uint64_t total = bosch_result_evaluations(ref, -1);
    jrec r;
    int st;
    char msg[512];

    /* RESUME on a missing file: BOSCH_E_IO, no file created, nothing evaluated. */
    ck_assert_int_eq(first_ask(&c, path, BOSCH_JOURNAL_RESUME, msg, sizeof msg, NULL), BOSCH_E_IO);
    ck_assert_str_ne(msg, "");
    jrec_init(&r, 48, NULL);
    bosch_result *res = run_cb(&c, path, BOSCH_JOURNAL_RESUME, &r, 0, &st, NULL);
    ck_assert_int_eq(st, BOSCH_E_IO);
    ck_assert_int_eq(bosch_result_status(res), BOSCH_E_IO);
    ck_assert_uint_eq(r.calls, 0);
    ck_assert(!j_exists(path));
    bosch_result_free(res);
    jrec_free(&r);
    /* A directory that does not exist: BOSCH_E_IO in every mode. */
    for (int mode = 0; mode < 3; mode++)
        ck_assert_int_eq(first_ask(&c, "/nonexistent-bosch-dir/j.bin", mode, NULL, 0, NULL),
                         BOSCH_E_IO);
    /* A directory as the journal. */
    ck_assert_int_lt(first_ask(&c, dir, BOSCH_JOURNAL_AUTO, NULL, 0, NULL), 0);

    /* AUTO on a missing file creates it. */
    jrec_init(&r, 48, NULL);
    res = run_cb(&c, path, BOSCH_JOURNAL_AUTO, &r, 0, &st, NULL);
    ck_assert_int_eq(st, ref_st);
    ck_assert_uint_eq(r.calls, total);
    assert_journal_matches(path, res, 1);
    bosch_result_free(res);
    jrec_free(&r);

    /* CREATE replaces an existing journal of another run, and garbage. */
    cfg c9 = c;
    c9.seed = 9;
    bosch_result_free(make_journal(&c9, path));
    for (int k = 0; k < 2; k++) {
        if (k == 1)
            ck_assert_int_eq(j_spit(path, (const uint8_t *)"garbage", 7), 0);
        jrec_init(&r, 48, NULL);
        res = run_cb(&c, path, BOSCH_JOURNAL_CREATE, &r, 0, &st, NULL);
        ck_assert_msg(st == ref_st, "CREATE over %s: %s", k ? "garbage" : "another journal",
                      bosch_err_name(st));
        ck_assert_uint_eq(r.calls, total);
        assert_same(ref, res, "CREATE");
        assert_journal_matches(path, res, 1);
        bosch_result_free(res);
        jrec_free(&r);
        jrec_init(&r, 48, NULL);
        res = run_cb(&c, path, BOSCH_JOURNAL_RESUME, &r, 0, &st, NULL);
        ck_assert_uint_eq(r.calls, 0);
        assert_same(ref, res, "resume after CREATE");
        bosch_result_free(res);
        jrec_free(&r);
    }
    /* CREATE over a complete journal of the same run evaluates everything again. */
    jrec_init(&r, 48, NULL);
    res = run_cb(&c, path, BOSCH_JOURNAL_CREATE, &r, 0, &st, NULL);
    ck_assert_uint_eq(r.calls, total);
    ck_assert_uint_eq(bosch_result_replayed(res), 0);
    bosch_result_free(res);
    jrec_free(&r);

    /* NULL disables journaling; the path is copied. */
    bosch_optimizer *o = cfg_opt(&c, NULL, 0);
    char tmp[128];
    snprintf(tmp, sizeof tmp, "%s", other);
    ck_assert_int_eq(bosch_set_journal(o, tmp, BOSCH_JOURNAL_CREATE), BOSCH_OK);
    memset(tmp, 'x', sizeof tmp - 1);
    tmp[sizeof tmp - 1] = 0;
    jrec_init(&r, 48, NULL);
    ck_assert_int_eq(bosch_set_evaluator(o, jrec_eval, &r), BOSCH_OK);
    ck_assert_int_eq(bosch_optimize(o), ref_st);
    ck_assert(j_exists(other));
    ck_assert_uint_eq(j_count_records(other), total);
    /* After the start the journal cannot be changed. */
    ck_assert_int_eq(bosch_set_journal(o, path, BOSCH_JOURNAL_CREATE), BOSCH_E_STATE);
    bosch_destroy(o);
    jrec_free(&r);
    unlink(other);
    o = cfg_opt(&c, other, BOSCH_JOURNAL_CREATE);
    ck_assert_int_eq(bosch_set_journal(o, NULL, BOSCH_JOURNAL_CREATE), BOSCH_OK);
    jrec_init(&r, 48, NULL);
    ck_assert_int_eq(bosch_set_evaluator(o, jrec_eval, &r), BOSCH_OK);
    ck_assert_int_eq(bosch_optimize(o), ref_st);
    ck_assert(!j_exists(other));
    bosch_destroy(o);
    jrec_free(&r);

    /* Bad arguments. */
    o = cfg_opt(&c, NULL, 0);
    ck_assert_int_eq(bosch_set_journal(o, path, 3), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_journal(o, path, -1), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_journal(NULL, path, 0), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_journal_sync(NULL, 1), BOSCH_E_INVALID);
    bosch_destroy(o);

    bosch_result_free(ref);
    j_rmtree(dir);
}
END_TEST

/* String options journal (mode AUTO) and journal_sync; sync runs. */
START_TEST(string_options)
{
    char dir[64], path[128], buf[256];
    j_mkdtemp(dir);
    j_path(path, sizeof path, dir, "j.bin");
    cfg c = base_cfg();
    int ref_st;
    bosch_result *ref = reference(&c, &ref_st);
    uint64_t total = bosch_result_evaluations(ref, -1);

    bosch_optimizer *o = cfg_opt(&c, NULL, 0);
    ck_assert_int_eq(bosch_set_option(o, "journal", path), BOSCH_OK);
    int len = bosch_get_option(o, "journal", buf, sizeof buf);
    ck_assert_int_eq(len, (int)strlen(path));
    ck_assert_str_eq(buf, path);
    ck_assert_int_eq(bosch_get_option(o, "journal_sync", buf, sizeof buf), 1);
    ck_assert_str_eq(buf, "0");
    ck_assert_int_eq(bosch_set_option(o, "journal_sync", "1"), BOSCH_OK);
    ck_assert_int_eq(bosch_get_option(o, "journal_sync", buf, sizeof buf), 1);
    ck_assert_str_eq(buf, "1");
    ck_assert_int_eq(bosch_set_option(o, "journal_sync", "2"), BOSCH_E_OPTION);
    ck_assert_int_eq(bosch_set_option(o, "journal_sync", "yes please"), BOSCH_E_OPTION);
    ck_assert_int_eq(bosch_set_option(o, "journal_sync", ""), BOSCH_E_OPTION);
    ck_assert_int_eq(bosch_get_option(o, "journal_sync", buf, sizeof buf), 1);
    ck_assert_str_eq(buf, "1");
    jrec r;
    jrec_init(&r, 48, NULL);
    r.opt = o;
    ck_assert_int_eq(bosch_set_evaluator(o, jrec_eval, &r), BOSCH_OK);
    ck_assert_int_eq(bosch_optimize(o), ref_st); /* AUTO: creates */
    ck_assert_uint_eq(r.calls, total);
    ck_assert_uint_eq(j_count_records(path), total);
    ck_assert_int_eq(bosch_set_option(o, "journal", path), BOSCH_E_STATE);
    bosch_destroy(o);
    jrec_free(&r);

    o = cfg_opt(&c, NULL, 0);
    ck_assert_int_eq(bosch_set_option(o, "journal", path), BOSCH_OK); /* AUTO: resumes */
    jrec_init(&r, 48, NULL);
    ck_assert_int_eq(bosch_set_evaluator(o, jrec_eval, &r), BOSCH_OK);
    ck_assert_int_eq(bosch_optimize(o), ref_st);
    ck_assert_uint_eq(r.calls, 0);
    bosch_result *res = get_result(o);
    assert_same(ref, res, "string option journal");
    bosch_result_free(res);
    bosch_destroy(o);
    jrec_free(&r);

    o = cfg_opt(&c, NULL, 0);
    ck_assert_int_ge(bosch_get_option(o, "journal", buf, sizeof buf), 0);
    bosch_destroy(o);
    bosch_result_free(ref);
    j_rmtree(dir);
}
END_TEST

/* A journal written with 8 threads (completion order scrambled by sleeps)
 * resumes exactly with 1 or 2 threads; a stopped threaded run too. */
static int slow_eval(const uint8_t *mask, size_t units, double *score, void *user)
{
    const long *base_us = user;
    j_sleep_us(*base_us + (long)(mset_hash(mask, units) % 400));
    *score = any_score(mask, units);
    return 0;
}

typedef struct {
    bosch_optimizer *opt;
    long delay_us;
} stopper;

static void *stop_thread(void *arg)
{
    stopper *s = arg;
    j_sleep_us(s->delay_us);
    bosch_force_stop(s->opt);
    return NULL;
}

START_TEST(threaded_journal_resumes)
{
    char dir[64], path[128];
    j_mkdtemp(dir);
    j_path(path, sizeof path, dir, "j.bin");
    cfg c = base_cfg();
    int ref_st;
    bosch_result *ref = reference(&c, &ref_st);
    for (int k = 0; k < 2; k++) {
        cfg ct = c;
        ct.threads = 8;
        ct.thread_safe = 1;
        bosch_optimizer *o = cfg_opt(&ct, path, BOSCH_JOURNAL_CREATE);
        static const long base_us[2] = {0, 1500};
        ck_assert_int_eq(bosch_set_evaluator(o, slow_eval, (void *)&base_us[k]), BOSCH_OK);
        pthread_t th;
        stopper s = {o, 8000};
        if (k == 1)
            ck_assert_int_eq(pthread_create(&th, NULL, stop_thread, &s), 0);
        int st = bosch_optimize(o);
        if (k == 1)
            pthread_join(th, NULL);
        ck_assert_msg(k == 1 ? (st == BOSCH_FORCED_STOP || st == ref_st) : st == ref_st, "%s",
                      bosch_err_name(st));
        bosch_result *a = get_result(o);
        bosch_destroy(o);
        if (k == 0)
            assert_same(ref, a, "8 threads vs reference");
        assert_journal_matches(path, a, 0);
        uint64_t e1 = bosch_result_evaluations(a, -1);
        mset seen;
        mset_init(&seen, 48);
        for (size_t i = 0; i < bosch_result_history_size(a); i++) {
            uint8_t m[J_MAXU];
            double sc;
            history_entry(a, i, m, &sc, NULL);
            mset_add(&seen, m, sc);
        }
        cfg c2 = c;
        c2.threads = 2;
        jrec r;
        jrec_init(&r, 48, &seen);
        bosch_result *b = run_cb(&c2, path, BOSCH_JOURNAL_RESUME, &r, 0, &st, NULL);
        ck_assert_int_eq(st, ref_st);
        ck_assert_uint_eq(r.dup, 0);
        ck_assert_uint_eq(bosch_result_replayed(b), e1);
        assert_same(ref, b, "threaded journal resumed");
        jrec_free(&r);
        mset_free(&seen);
        bosch_result_free(a);
        bosch_result_free(b);
    }
    bosch_result_free(ref);
    j_rmtree(dir);
}
END_TEST

/* An evaluator failure, a bad score or a time limit ends the first run;
 * the resumed run (working evaluator, no limit) ends as an uninterrupted
 * one, without evaluating a journaled mask again. */
typedef struct {
    jrec r;
    long fail_at, nan_at, sleep_us;
} frec;

static int frec_eval(const uint8_t *mask, size_t units, double *score, void *user)
{
    frec *f = user;
    if ((long)f->r.calls == f->fail_at)
        return 7;
    if ((long)f->r.calls == f->nan_at) {
        f->r.calls++; /* counted, not recorded in `seen` */
        *score = NAN;
        return 0;
    }
    if (f->sleep_us)
        j_sleep_us(f->sleep_us);
    return jrec_eval(mask, units, score, &f->r);
}

START_TEST(resume_after_failure)
{
    char dir[64], path[128];
    j_mkdtemp(dir);
    j_path(path, sizeof path, dir, "j.bin");
    cfg c = base_cfg();
    int ref_st;
    bosch_result *ref = reference(&c, &ref_st);
    for (int k = 0; k < 3; k++) {
        mset seen;
        mset_init(&seen, 48);
        frec f;
        jrec_init(&f.r, 48, &seen);
        f.fail_at = k == 0 ? 30 : -1;
        f.nan_at = k == 1 ? 41 : -1;
        f.sleep_us = k == 2 ? 1000 : 0;
        cfg c1 = c;
        if (k == 2)
            c1.time_limit = 0.03;
        bosch_optimizer *o = cfg_opt(&c1, path, BOSCH_JOURNAL_CREATE);
        ck_assert_int_eq(bosch_set_evaluator(o, frec_eval, &f), BOSCH_OK);
        int st = bosch_optimize(o);
        static const int expect[3] = {BOSCH_E_EVALUATOR, BOSCH_E_BAD_SCORE, BOSCH_TIME_REACHED};
        ck_assert_msg(st == expect[k], "case %d: %s", k, bosch_err_name(st));
        bosch_result *a = get_result(o);
        bosch_destroy(o);
        ck_assert_uint_eq(j_count_records(path), bosch_result_evaluations(a, -1));
        jrec_free(&f.r);
        jrec r;
        jrec_init(&r, 48, &seen);
        bosch_result *b = run_cb(&c, path, BOSCH_JOURNAL_RESUME, &r, 0, &st, NULL);
        ck_assert_msg(st == ref_st, "case %d: resumed %s", k, bosch_err_name(st));
        ck_assert_msg(r.dup == 0, "case %d: %zu journaled masks evaluated again", k, r.dup);
        ck_assert_uint_eq(bosch_result_replayed(b), bosch_result_evaluations(a, -1));
        assert_same(ref, b, "resume after a failed run");
        jrec_free(&r);
        mset_free(&seen);
        bosch_result_free(a);
        bosch_result_free(b);
    }
    bosch_result_free(ref);
    j_rmtree(dir);
}
END_TEST

/* Masks of several 64-bit words (160 units: 3 words, the last one partial):
 * the packing of docs/journal.md, full and partial replay. */
START_TEST(wide_masks)
{
    char dir[64], path[128];
    j_mkdtemp(dir);
    j_path(path, sizeof path, dir, "j.bin");
    cfg c = base_cfg();
    c.L = 10;
    c.G = 16;
    c.T = 70;
    c.fix = 130;
    int ref_st;
    bosch_result *ref = reference(&c, &ref_st);
    uint64_t total = bosch_result_evaluations(ref, -1);
    jrec r;
    jrec_init(&r, 160, NULL);
    int st;
    bosch_result *a = run_cb(&c, path, BOSCH_JOURNAL_CREATE, &r, 0, &st, NULL);
    assert_same(ref, a, "wide masks with journal");
    assert_journal_matches(path, a, 1);
    size_t size = 0;
    uint8_t *b = j_slurp(path, &size);
    jframes fr = j_parse(b, size);
    for (size_t i = 1; i < fr.n; i++)
        ck_assert_uint_eq(fr.f[i].rawlen, 17 + 8 * 3);
    j_frames_free(&fr);
    free(b);
    jrec_free(&r);
    bosch_result_free(a);
    mset seen;
    mset_init(&seen, 160);
    jrec_init(&r, 160, &seen);
    r.stop_after = (long)total / 3;
    a = run_cb(&c, path, BOSCH_JOURNAL_CREATE, &r, 0, &st, NULL);
    ck_assert_int_eq(st, BOSCH_FORCED_STOP);
    jrec_free(&r);
    jrec_init(&r, 160, &seen);
    bosch_result *d = run_cb(&c, path, BOSCH_JOURNAL_RESUME, &r, 0, &st, NULL);
    ck_assert_int_eq(st, ref_st);
    ck_assert_uint_eq(r.dup, 0);
    ck_assert_uint_eq(bosch_result_replayed(d), bosch_result_evaluations(a, -1));
    assert_same(ref, d, "wide masks, partial resume");
    jrec_free(&r);
    mset_free(&seen);
    bosch_result_free(a);
    bosch_result_free(d);
    bosch_result_free(ref);
    j_rmtree(dir);
}
END_TEST

static Suite *journal_suite(void)
{
    Suite *s = suite_create("journal");
    TCase *tc = tcase_new(s, "replay");
    tcase_add_test(tc, format_as_documented);
    tcase_add_test(tc, full_replay_callback);
    tcase_add_test(tc, full_replay_asktell);
    tc = tcase_new(s, "partial");
    tcase_add_test(tc, partial_resume_callback);
    tcase_add_test(tc, partial_resume_chain);
    tcase_add_test(tc, partial_resume_asktell);
    tcase_add_test(tc, partial_resume_variants);
    tcase_add_test(tc, threaded_journal_resumes);
    tcase_add_test(tc, resume_after_failure);
    tcase_add_test(tc, wide_masks);
    tc = tcase_new(s, "damage");
    tcase_add_test(tc, torn_last_frame_every_byte);
    tcase_add_test(tc, bitflip_inner_frames);
    tcase_add_test(tc, corrupt_message_offset);
    tcase_add_test(tc, junk_after_last_frame);
    tcase_add_test(tc, not_a_journal);
    tcase_add_test(tc, header_cut_short);
    tcase_add_test(tc, crafted_bad_frames);
    tc = tcase_new(s, "mismatch");
    tcase_add_test(tc, mismatch_names_field);
    tcase_add_test(tc, mismatch_tolerated_fields);
    tcase_add_test(tc, mismatch_versions);
    tc = tcase_new(s, "modes");
    tcase_add_test(tc, modes);
    tcase_add_test(tc, string_options);
    return s;
}

static void setup_testbed(void)
{
    g_tb = bosch_testbed_create(6, 8, 11);
    if (!g_tb)
        abort();
    bosch_testbed_set(g_tb, "entanglement", 0.3);
    bosch_testbed_set(g_tb, "noise", 0.01);
}

int main(void)
{
    setup_testbed();
    int rc = run_suite(journal_suite());
    bosch_testbed_free(g_tb);
    return rc;
}
