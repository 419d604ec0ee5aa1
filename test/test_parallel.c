/*
 * Concurrent evaluation (bosch_set_threads, bosch_set_evaluator_thread_safe):
 * results independent of the thread count for thread-safe, serial and batch
 * evaluators; serial evaluators never run concurrently, thread-safe ones do;
 * force stop from another thread; failures and bad scores on workers;
 * progress rate and ETA; option handling.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include "support/support.h"
#include "support/journal_files.h"

#define L_ 6
#define G_ 8
#define U_ (L_ * G_)

static bosch_testbed *g_tb;

/* ------------------------------------------------------------------------ */
/* A thread-aware recording evaluator                                        */
/* ------------------------------------------------------------------------ */
typedef struct {
    atomic_int inflight, max_inflight;
    atomic_long calls; /* calls started */
    long sleep_us;     /* fixed sleep per evaluation */
    long jitter_us;    /* plus hash(mask) % jitter_us */
    long fail_at;      /* 0-based call index that fails with fail_code (-1 none) */
    int fail_code;
    long nan_at; /* call index that returns bad_value (-1 none) */
    double bad_value;
    pthread_mutex_t mu;
    mset ok;         /* masks evaluated successfully, with their scores (across runs) */
    mset *prior;     /* masks that must never be evaluated (journaled), may be NULL */
    size_t dup;      /* masks evaluated twice */
    size_t replayed_seen; /* masks of `prior` sent to the evaluator */
    size_t nbatch;
    size_t batch_n[4096];
    atomic_int bad_units;
} prec;

static void prec_init(prec *r)
{
    memset(r, 0, sizeof *r);
    atomic_init(&r->inflight, 0);
    atomic_init(&r->max_inflight, 0);
    atomic_init(&r->calls, 0);
    atomic_init(&r->bad_units, 0);
    r->fail_at = r->nan_at = -1;
    r->bad_value = NAN;
    pthread_mutex_init(&r->mu, NULL);
    mset_init(&r->ok, U_);
}

static void prec_free(prec *r)
{
    mset_free(&r->ok);
    pthread_mutex_destroy(&r->mu);
}

static void enter(prec *r)
{
    int now = atomic_fetch_add(&r->inflight, 1) + 1;
    int m = atomic_load(&r->max_inflight);
    while (now > m && !atomic_compare_exchange_weak(&r->max_inflight, &m, now)) {
    }
}

static void leave(prec *r)
{
    atomic_fetch_sub(&r->inflight, 1);
}

/* One evaluation; the caller tracks in-flight. */
static int eval_one(prec *r, const uint8_t *mask, size_t units, double *score)
{
    if (units != U_) {
        atomic_fetch_add(&r->bad_units, 1);
        return 99;
    }
    long idx = atomic_fetch_add(&r->calls, 1);
    long us = r->sleep_us;
    if (r->jitter_us)
        us += (long)(mset_hash(mask, units) % (uint64_t)r->jitter_us);
    if (us)
        sleep_us(us);
    if (idx == r->fail_at)
        return r->fail_code;
    if (idx == r->nan_at) {
        *score = r->bad_value;
        return 0;
    }
    double s = NAN;
    bosch_testbed_score(g_tb, mask, &s);
    pthread_mutex_lock(&r->mu);
    if (!mset_add(&r->ok, mask, s))
        r->dup++;
    if (r->prior && mset_find(r->prior, mask, NULL))
        r->replayed_seen++;
    pthread_mutex_unlock(&r->mu);
    *score = s;
    return 0;
}

static int p_eval(const uint8_t *mask, size_t units, double *score, void *user)
{
    prec *r = user;
    enter(r);
    int rc = eval_one(r, mask, units, score);
    leave(r);
    return rc;
}

static int p_batch_eval(const uint8_t *masks, size_t n, size_t units, double *scores, void *user)
{
    prec *r = user;
    enter(r);
    pthread_mutex_lock(&r->mu);
    if (r->nbatch < 4096)
        r->batch_n[r->nbatch] = n;
    r->nbatch++;
    pthread_mutex_unlock(&r->mu);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = eval_one(r, masks + i * units, units, &scores[i]);
    leave(r);
    return rc;
}

enum { EV_SAFE, EV_SERIAL, EV_BATCH };
static const char *ev_name[] = {"thread-safe", "serial", "batch"};

typedef struct {
    uint64_t seed, budget;
    int variant;    /* -1 default */
    uint32_t batch; /* 0 default */
} pcfg;

static bosch_optimizer *p_opt(const pcfg *c, uint32_t threads, int kind, prec *r)
{
    bosch_problem *p = bosch_problem_create(L_, G_, 1);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(bosch_problem_set_target_units(p, U_ / 2), BOSCH_OK);
    bosch_optimizer *o = bosch_optimizer_create(p);
    bosch_problem_free(p);
    ck_assert_ptr_nonnull(o);
    ck_assert_int_eq(bosch_set_seed(o, c->seed), BOSCH_OK);
    ck_assert_int_eq(bosch_set_budget(o, c->budget), BOSCH_OK);
    if (c->variant >= 0)
        ck_assert_int_eq(bosch_set_variant(o, c->variant), BOSCH_OK);
    if (c->batch)
        ck_assert_int_eq(bosch_set_batch_size(o, c->batch), BOSCH_OK);
    if (threads)
        ck_assert_int_eq(bosch_set_threads(o, threads), BOSCH_OK);
    if (kind == EV_BATCH) {
        ck_assert_int_eq(bosch_set_batch_evaluator(o, p_batch_eval, r), BOSCH_OK);
    } else {
        ck_assert_int_eq(bosch_set_evaluator(o, p_eval, r), BOSCH_OK);
        if (kind == EV_SAFE)
            ck_assert_int_eq(bosch_set_evaluator_thread_safe(o, 1), BOSCH_OK);
    }
    return o;
}

static bosch_result *p_run(const pcfg *c, uint32_t threads, int kind, prec *r, int *status)
{
    bosch_optimizer *o = p_opt(c, threads, kind, r);
    int st = bosch_optimize(o);
    if (status)
        *status = st;
    bosch_result *res = get_result(o);
    bosch_optimizer_free(o);
    return res;
}

/* Every history entry was evaluated successfully with that score. */
static void assert_history_from(const bosch_result *res, prec *r)
{
    uint8_t m[J_MAXU];
    for (size_t i = 0; i < bosch_result_history_size(res); i++) {
        double s, s0;
        history_entry(res, i, m, &s, NULL);
        ck_assert_msg(mset_find(&r->ok, m, &s0), "history %zu: mask never evaluated", i);
        ck_assert_msg(s == s0, "history %zu: score %.17g, evaluator gave %.17g", i, s, s0);
    }
    ck_assert_uint_eq(bosch_result_history_size(res), bosch_result_evaluations(res, -1));
}

/* ------------------------------------------------------------------------ */
/* Identical results whatever the thread count                               */
/* ------------------------------------------------------------------------ */
START_TEST(identical_across_threads)
{
    static const pcfg cfgs[] = {
        {5, 200, -1, 0},
        {6, 150, BOSCH_VARIANT_GROUP_ONLY, 16},
        {7, 120, BOSCH_VARIANT_LAYER_LEVEL, 0},
        {8, 120, BOSCH_VARIANT_PROBE_ONLY, 3},
    };
    static const uint32_t threads[] = {1, 2, 8};
    for (size_t ci = 0; ci < sizeof cfgs / sizeof cfgs[0]; ci++) {
        const pcfg *c = &cfgs[ci];
        for (int kind = 0; kind < 3; kind++) {
            prec r0;
            prec_init(&r0);
            int st0;
            bosch_result *ref = p_run(c, 0, kind, &r0, &st0); /* default thread count */
            ck_assert_msg(st0 > 0, "%s: %s", ev_name[kind], bosch_err_name(st0));
            ck_assert_uint_eq((uint64_t)atomic_load(&r0.calls), bosch_result_evaluations(ref, -1));
            for (size_t ti = 0; ti < 3; ti++) {
                prec r;
                prec_init(&r);
                r.jitter_us = 150; /* scramble completion order */
                int st;
                bosch_result *res = p_run(c, threads[ti], kind, &r, &st);
                char what[96];
                snprintf(what, sizeof what, "config %zu, %s evaluator, %u threads", ci,
                         ev_name[kind], threads[ti]);
                ck_assert_msg(st == st0, "%s: %s", what, bosch_err_name(st));
                assert_same(ref, res, what);
                ck_assert_int_eq(atomic_load(&r.bad_units), 0);
                ck_assert_msg(r.dup == 0, "%s: %zu masks evaluated twice", what, r.dup);
                ck_assert_uint_eq((uint64_t)atomic_load(&r.calls),
                                  bosch_result_evaluations(res, -1));
                assert_history_from(res, &r);
                if (kind != EV_SAFE)
                    ck_assert_msg(atomic_load(&r.max_inflight) == 1,
                                  "%s: %d calls in flight at once", what,
                                  atomic_load(&r.max_inflight));
                if (kind == EV_BATCH) {
                    /* One call per batch, the same batches as with one thread. */
                    ck_assert_msg(r.nbatch == r0.nbatch, "%s: %zu batch calls, %zu with 1 thread",
                                  what, r.nbatch, r0.nbatch);
                    uint32_t bs = c->batch ? c->batch : 8;
                    for (size_t b = 0; b < r.nbatch && b < 4096; b++) {
                        ck_assert_uint_eq(r.batch_n[b], r0.batch_n[b]);
                        ck_assert_uint_le(r.batch_n[b], bs);
                    }
                }
                bosch_result_free(res);
                prec_free(&r);
            }
            bosch_result_free(ref);
            prec_free(&r0);
        }
    }
}
END_TEST

/* Serial evaluators never overlap; thread-safe ones do, up to `threads`. */
START_TEST(concurrency_observed)
{
    pcfg c = {5, 160, -1, 0};
    prec r;
    double t[2];
    for (int k = 0; k < 2; k++) {
        prec_init(&r);
        r.sleep_us = 1000;
        double t0 = now_mono();
        bosch_result *res = p_run(&c, k ? 8 : 1, EV_SAFE, &r, NULL);
        t[k] = now_mono() - t0;
        int mx = atomic_load(&r.max_inflight);
        if (k)
            ck_assert_msg(mx > 1 && mx <= 8, "thread-safe, 8 threads: max %d in flight", mx);
        else
            ck_assert_msg(mx == 1, "1 thread: max %d in flight", mx);
        bosch_result_free(res);
        prec_free(&r);
    }
    ck_assert_msg(t[1] < t[0], "8 threads took %.3f s, 1 thread %.3f s", t[1], t[0]);

    prec_init(&r);
    r.sleep_us = 1000;
    bosch_result *res = p_run(&c, 2, EV_SAFE, &r, NULL);
    ck_assert_int_le(atomic_load(&r.max_inflight), 2);
    bosch_result_free(res);
    prec_free(&r);

    for (int kind = EV_SERIAL; kind <= EV_BATCH; kind++) {
        prec_init(&r);
        r.sleep_us = 500;
        res = p_run(&c, 8, kind, &r, NULL);
        ck_assert_msg(atomic_load(&r.max_inflight) == 1, "%s evaluator, 8 threads: %d in flight",
                      ev_name[kind], atomic_load(&r.max_inflight));
        bosch_result_free(res);
        prec_free(&r);
    }
    /* Declared thread-safe, then un-declared: serial again. */
    prec_init(&r);
    r.sleep_us = 500;
    bosch_optimizer *o = p_opt(&c, 8, EV_SAFE, &r);
    ck_assert_int_eq(bosch_set_evaluator_thread_safe(o, 0), BOSCH_OK);
    ck_assert_int_gt(bosch_optimize(o), 0);
    ck_assert_int_eq(atomic_load(&r.max_inflight), 1);
    bosch_optimizer_free(o);
    prec_free(&r);
}
END_TEST

/* More threads than candidates, and the maximum thread count. */
START_TEST(many_threads)
{
    pcfg c = {9, 100, -1, 3};
    prec r0;
    prec_init(&r0);
    bosch_result *ref = p_run(&c, 1, EV_SAFE, &r0, NULL);
    for (int k = 0; k < 2; k++) {
        prec r;
        prec_init(&r);
        r.jitter_us = 100;
        bosch_result *res = p_run(&c, k ? 256 : 64, EV_SAFE, &r, NULL);
        assert_same(ref, res, "64/256 threads");
        ck_assert_int_le(atomic_load(&r.max_inflight), 3);
        bosch_result_free(res);
        prec_free(&r);
    }
    bosch_result_free(ref);
    prec_free(&r0);
}
END_TEST

/* Ask/tell is not affected by the thread setting. */
START_TEST(asktell_ignores_threads)
{
    pcfg c = {5, 150, -1, 0};
    prec r0;
    prec_init(&r0);
    bosch_result *ref = p_run(&c, 1, EV_SERIAL, &r0, NULL);
    prec r;
    prec_init(&r);
    bosch_optimizer *o = p_opt(&c, 8, EV_SAFE, &r);
    uint8_t m[U_];
    int rc;
    for (;;) {
        size_t n = 0;
        rc = bosch_ask(o, &n);
        if (rc != BOSCH_OK)
            break;
        for (size_t i = 0; i < n; i++) {
            double s;
            ck_assert_int_eq(bosch_candidate(o, i, m), BOSCH_OK);
            ck_assert_int_eq(eval_one(&r, m, U_, &s), 0);
            ck_assert_int_eq(bosch_tell(o, i, s), BOSCH_OK);
        }
    }
    ck_assert_int_gt(rc, 0);
    bosch_result *res = get_result(o);
    assert_same(ref, res, "ask/tell with threads 8");
    bosch_result_free(res);
    bosch_optimizer_free(o);
    prec_free(&r);
    bosch_result_free(ref);
    prec_free(&r0);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Force stop, failures, bad scores on worker threads                        */
/* ------------------------------------------------------------------------ */
/* The best feasible score in a history (NaN if none). */
static double best_feasible(const bosch_result *res)
{
    bosch_problem *p = bosch_problem_create(L_, G_, 1);
    bosch_problem_set_target_units(p, U_ / 2);
    uint8_t m[U_];
    double best = NAN;
    for (size_t i = 0; i < bosch_result_history_size(res); i++) {
        double s;
        history_entry(res, i, m, &s, NULL);
        if (bosch_mask_is_feasible(p, m) && (isnan(best) || s > best))
            best = s;
    }
    bosch_problem_free(p);
    return best;
}

/* Journal records (any order) equal the history. */
static void assert_journal_is_history(const char *path, const bosch_result *res)
{
    size_t size = 0;
    uint8_t *b = j_slurp(path, &size);
    ck_assert_ptr_nonnull(b);
    jframes fr = j_parse(b, size);
    ck_assert_msg(!fr.tail, "journal: garbage after %zu", fr.valid_end);
    size_t n = bosch_result_history_size(res);
    ck_assert_msg(fr.n == n + 1, "journal holds %zu records, history %zu", fr.n - 1, n);
    mset h;
    mset_init(&h, U_);
    uint8_t m[U_];
    for (size_t i = 0; i < n; i++) {
        double s;
        history_entry(res, i, m, &s, NULL);
        mset_add(&h, m, s);
    }
    for (size_t i = 1; i < fr.n; i++) {
        jrecord rec;
        double s;
        ck_assert_int_eq(j_record(b, &fr.f[i], U_, &rec), 0);
        ck_assert_msg(mset_find(&h, rec.mask, &s) && s == rec.score,
                      "journal record %zu is not in the history", i - 1);
    }
    mset_free(&h);
    j_frames_free(&fr);
    free(b);
}

START_TEST(force_stop_while_evaluating)
{
    char dir[64], path[128];
    j_mkdtemp(dir);
    j_path(path, sizeof path, dir, "j.bin");
    pcfg c = {5, 600, -1, 0};
    for (int kind = 0; kind < 3; kind++) {
        prec r;
        prec_init(&r);
        r.sleep_us = 2000;
        bosch_optimizer *o = p_opt(&c, 4, kind, &r);
        ck_assert_int_eq(bosch_set_journal(o, path, BOSCH_JOURNAL_CREATE), BOSCH_OK);
        stopper s = {o, 30000, &r.calls, 6}; /* the anchors are done by then */
        pthread_t th;
        ck_assert_int_eq(pthread_create(&th, NULL, stop_thread, &s), 0);
        double t0 = now_mono();
        int st = bosch_optimize(o);
        double dt = now_mono() - t0;
        pthread_join(th, NULL);
        ck_assert_msg(st == BOSCH_FORCED_STOP, "%s: %s", ev_name[kind], bosch_err_name(st));
        ck_assert_msg(dt < 2.0, "%s: stop took effect after %.3f s", ev_name[kind], dt);
        bosch_result *a = get_result(o);
        bosch_optimizer_free(o);
        ck_assert_int_eq(bosch_result_status(a), BOSCH_FORCED_STOP);
        uint64_t e1 = bosch_result_evaluations(a, -1);
        ck_assert_uint_gt(e1, 0);
        ck_assert_uint_lt(e1, 600);
        ck_assert_uint_le(bosch_result_history_size(a), r.ok.count);
        assert_history_from(a, &r);
        double bf = best_feasible(a);
        if (bosch_result_feasible(a))
            ck_assert_double_eq(bosch_result_score(a), bf);
        else
            ck_assert(isnan(bf));
        assert_journal_is_history(path, a);

        /* Resume, 1 thread, no sleeping: same as an uninterrupted run, and
         * no journaled mask evaluated again. */
        mset prior;
        mset_init(&prior, U_);
        uint8_t m[U_];
        for (size_t i = 0; i < bosch_result_history_size(a); i++) {
            double sc;
            history_entry(a, i, m, &sc, NULL);
            mset_add(&prior, m, sc);
        }
        prec r2;
        prec_init(&r2);
        r2.prior = &prior;
        o = p_opt(&c, 1, kind, &r2);
        ck_assert_int_eq(bosch_set_journal(o, path, BOSCH_JOURNAL_RESUME), BOSCH_OK);
        int st2 = bosch_optimize(o);
        bosch_result *b = get_result(o);
        bosch_optimizer_free(o);
        prec r3;
        prec_init(&r3);
        int st3;
        bosch_result *ref = p_run(&c, 1, kind, &r3, &st3);
        ck_assert_int_eq(st2, st3);
        ck_assert_msg(r2.replayed_seen == 0, "%s: %zu journaled masks evaluated again",
                      ev_name[kind], r2.replayed_seen);
        ck_assert_uint_eq(bosch_result_replayed(b), e1);
        assert_same(ref, b, "resume after a stop from another thread");
        bosch_result_free(ref);
        bosch_result_free(b);
        bosch_result_free(a);
        prec_free(&r3);
        prec_free(&r2);
        mset_free(&prior);
        prec_free(&r);
    }
    j_rmtree(dir);
}
END_TEST

START_TEST(failure_on_worker)
{
    char dir[64], path[128];
    j_mkdtemp(dir);
    j_path(path, sizeof path, dir, "j.bin");
    pcfg c = {5, 300, -1, 0};
    static const long at[] = {0, 1, 30, 77};
    for (int kind = 0; kind < 3; kind++)
        for (size_t ai = 0; ai < 4; ai++) {
            prec r;
            prec_init(&r);
            r.jitter_us = 200;
            r.fail_at = at[ai];
            r.fail_code = 42 + (int)ai;
            bosch_optimizer *o = p_opt(&c, 4, kind, &r);
            ck_assert_int_eq(bosch_set_journal(o, path, BOSCH_JOURNAL_CREATE), BOSCH_OK);
            int st = bosch_optimize(o);
            ck_assert_msg(st == BOSCH_E_EVALUATOR, "%s, failure at %ld: %s", ev_name[kind],
                          at[ai], bosch_err_name(st));
            ck_assert_int_eq(bosch_evaluator_status(o), 42 + (int)ai);
            bosch_result *res = get_result(o);
            ck_assert_int_eq(bosch_result_status(res), BOSCH_E_EVALUATOR);
            ck_assert_uint_le(bosch_result_evaluations(res, -1), (uint64_t)atomic_load(&r.calls));
            assert_history_from(res, &r);
            assert_journal_is_history(path, res);
            uint8_t m[U_];
            ck_assert_int_eq(bosch_result_mask(res, m, U_), BOSCH_OK);
            bosch_result_free(res);
            bosch_optimizer_free(o);
            prec_free(&r);
        }
    j_rmtree(dir);
}
END_TEST

START_TEST(bad_score_on_worker)
{
    pcfg c = {5, 300, -1, 0};
    const double bad[] = {NAN, INFINITY, -INFINITY};
    for (int kind = 0; kind < 3; kind++)
        for (int bi = 0; bi < 3; bi++) {
            prec r;
            prec_init(&r);
            r.jitter_us = 200;
            r.nan_at = 25 + bi;
            r.bad_value = bad[bi];
            bosch_optimizer *o = p_opt(&c, 4, kind, &r);
            int st = bosch_optimize(o);
            ck_assert_msg(st == BOSCH_E_BAD_SCORE, "%s, %g: %s", ev_name[kind], bad[bi],
                          bosch_err_name(st));
            bosch_result *res = get_result(o);
            ck_assert_int_eq(bosch_result_status(res), BOSCH_E_BAD_SCORE);
            assert_history_from(res, &r);
            for (size_t i = 0; i < bosch_result_history_size(res); i++) {
                double s;
                history_entry(res, i, NULL, &s, NULL);
                ck_assert(isfinite(s));
            }
            ck_assert_int_eq(bosch_evaluator_status(o), 0);
            bosch_result_free(res);
            bosch_optimizer_free(o);
            prec_free(&r);
        }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Progress rate and ETA                                                     */
/* ------------------------------------------------------------------------ */
typedef struct {
    atomic_int inflight, max_inflight;
    uint64_t budget;
    double last_rate;
    int bad;
    size_t events;
    char why[160];
} rprog;

static void rprog_cb(const bosch_progress *p, void *user)
{
    rprog *g = user;
    int now = atomic_fetch_add(&g->inflight, 1) + 1;
    if (now > atomic_load(&g->max_inflight))
        atomic_store(&g->max_inflight, now);
    g->events++;
    uint64_t ev = bosch_progress_evaluations(p);
    double rate = bosch_progress_rate(p), eta = bosch_progress_eta(p);
    if (ev == 0 && !isnan(rate) && !g->bad) {
        g->bad = 1;
        snprintf(g->why, sizeof g->why, "rate %g before any evaluation", rate);
    }
    if (ev > 0 && !(rate > 0 && isfinite(rate)) && !g->bad) {
        g->bad = 2;
        snprintf(g->why, sizeof g->why, "rate %g after %lu evaluations", rate, (unsigned long)ev);
    }
    if (!isnan(eta) && !(eta >= 0) && !g->bad) {
        g->bad = 3;
        snprintf(g->why, sizeof g->why, "eta %g", eta);
    }
    if (ev >= 16 && isfinite(rate) && rate > 0 && isfinite(eta)) {
        double expect = (double)(g->budget - ev) / rate;
        if (fabs(eta - expect) > 0.5 * expect + 0.05 && !g->bad) {
            g->bad = 4;
            snprintf(g->why, sizeof g->why, "eta %g s, (budget - evaluations) / rate = %g s", eta,
                     expect);
        }
    }
    if (ev > 0)
        g->last_rate = rate;
    if (bosch_progress_replayed(p) != 0 && !g->bad) {
        g->bad = 5;
        snprintf(g->why, sizeof g->why, "replayed %lu without a journal",
                 (unsigned long)bosch_progress_replayed(p));
    }
    atomic_fetch_sub(&g->inflight, 1);
}

START_TEST(progress_rate_eta)
{
    pcfg c = {5, 200, -1, 0};
    double rates[2];
    for (int k = 0; k < 2; k++) {
        prec r;
        prec_init(&r);
        r.sleep_us = 1000;
        rprog g;
        memset(&g, 0, sizeof g);
        atomic_init(&g.inflight, 0);
        atomic_init(&g.max_inflight, 0);
        g.budget = c.budget;
        bosch_optimizer *o = p_opt(&c, k ? 8 : 1, EV_SAFE, &r);
        ck_assert_int_eq(bosch_set_progress(o, rprog_cb, &g), BOSCH_OK);
        ck_assert_int_gt(bosch_optimize(o), 0);
        ck_assert_uint_gt(g.events, 0);
        ck_assert_msg(g.bad == 0, "%d threads: %s", k ? 8 : 1, g.why);
        ck_assert_int_eq(atomic_load(&g.max_inflight), 1);
        rates[k] = g.last_rate;
        /* One sleeping evaluator at a time: at most ~1000 per second. */
        if (!k)
            ck_assert_msg(rates[k] <= 1100, "rate %g/s with 1 ms evaluations", rates[k]);
        bosch_optimizer_free(o);
        prec_free(&r);
    }
    ck_assert_msg(rates[1] > rates[0], "rate with 8 threads %g/s, with 1 thread %g/s", rates[1],
                  rates[0]);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Options                                                                   */
/* ------------------------------------------------------------------------ */
START_TEST(thread_options)
{
    pcfg c = {5, 60, -1, 0};
    prec r;
    prec_init(&r);
    bosch_optimizer *o = p_opt(&c, 0, EV_SERIAL, &r);
    char buf[64];
    ck_assert_int_eq(bosch_get_option(o, "threads", buf, sizeof buf), 1);
    ck_assert_str_eq(buf, "1");
    ck_assert_int_eq(bosch_set_threads(o, 0), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_threads(o, 257), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_threads(o, 256), BOSCH_OK);
    ck_assert_int_eq(bosch_set_threads(o, 1), BOSCH_OK);
    ck_assert_int_eq(bosch_set_threads(NULL, 2), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_evaluator_thread_safe(NULL, 1), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_option(o, "threads", "6"), BOSCH_OK);
    ck_assert_int_eq(bosch_get_option(o, "threads", buf, sizeof buf), 1);
    ck_assert_str_eq(buf, "6");
    /* Unparsable: BOSCH_E_OPTION; parsable but out of range: either code
     * (the convention of test_api.c). */
    static const char *badv[] = {"-1", "abc", "", "2x", "1e9", " "};
    for (size_t i = 0; i < sizeof badv / sizeof badv[0]; i++) {
        int rc = bosch_set_option(o, "threads", badv[i]);
        ck_assert_msg(rc == BOSCH_E_OPTION, "threads=\"%s\" -> %s", badv[i], bosch_err_name(rc));
    }
    static const char *range[] = {"0", "257", "99999999999"};
    for (size_t i = 0; i < sizeof range / sizeof range[0]; i++) {
        int rc = bosch_set_option(o, "threads", range[i]);
        ck_assert_msg(rc == BOSCH_E_OPTION || rc == BOSCH_E_INVALID, "threads=\"%s\" -> %s",
                      range[i], bosch_err_name(rc));
    }
    ck_assert_int_eq(bosch_get_option(o, "threads", buf, sizeof buf), 1);
    ck_assert_str_eq(buf, "6");
    ck_assert_int_eq(bosch_set_option(o, "threads", "256"), BOSCH_OK);
    ck_assert_int_eq(bosch_get_option(o, "threads", buf, sizeof buf), 3);
    ck_assert_str_eq(buf, "256");
    ck_assert_int_gt(bosch_optimize(o), 0);
    /* After the start: BOSCH_E_STATE ("may be set before the search starts").
     * The thread-safety declaration belongs with the evaluator, which the
     * header does not freeze, so it is not checked here. */
    ck_assert_int_eq(bosch_set_threads(o, 2), BOSCH_E_STATE);
    ck_assert_int_eq(bosch_set_option(o, "threads", "2"), BOSCH_E_STATE);
    bosch_optimizer_free(o);
    prec_free(&r);
}
END_TEST

static Suite *parallel_suite(void)
{
    Suite *s = suite_create("parallel");
    TCase *tc = tcase_new(s, "determinism");
    tcase_add_test(tc, identical_across_threads);
    tcase_add_test(tc, many_threads);
    tcase_add_test(tc, asktell_ignores_threads);
    tc = tcase_new(s, "concurrency");
    tcase_add_test(tc, concurrency_observed);
    tcase_add_test(tc, progress_rate_eta);
    tc = tcase_new(s, "failures");
    tcase_add_test(tc, force_stop_while_evaluating);
    tcase_add_test(tc, failure_on_worker);
    tcase_add_test(tc, bad_score_on_worker);
    tc = tcase_new(s, "options");
    tcase_add_test(tc, thread_options);
    return s;
}

int main(void)
{
    g_tb = bosch_testbed_create(L_, G_, 11);
    if (!g_tb)
        abort();
    bosch_testbed_set(g_tb, "entanglement", 0.3);
    bosch_testbed_set(g_tb, "noise", 0.01);
    int rc = run_suite(parallel_suite());
    bosch_testbed_free(g_tb);
    return rc;
}
