/*
 * Journal tests: resuming partial journals (callbacks and ask/tell, chains of
 * interruptions, every variant), threaded journals, resuming after a failed
 * run, masks of several 64-bit words. Nothing journaled is evaluated again.
 */
#include <pthread.h>

#include "support/support.h"
#include "support/journal_files.h"
#include "support/journal_runs.h"

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

/* A journal written with 8 threads (completion order scrambled by sleeps)
 * resumes exactly with 1 or 2 threads; a stopped threaded run too. */
static int slow_eval(const uint8_t *mask, size_t units, double *score, void *user)
{
    const long *base_us = user;
    sleep_us(*base_us + (long)(mset_hash(mask, units) % 400));
    *score = any_score(mask, units);
    return 0;
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
        stopper s = {o, 8000, NULL, 0};
        if (k == 1)
            ck_assert_int_eq(pthread_create(&th, NULL, stop_thread, &s), 0);
        int st = bosch_optimize(o);
        if (k == 1)
            pthread_join(th, NULL);
        ck_assert_msg(k == 1 ? (st == BOSCH_FORCED_STOP || st == ref_st) : st == ref_st, "%s",
                      bosch_err_name(st));
        bosch_result *a = get_result(o);
        bosch_optimizer_free(o);
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
        sleep_us(f->sleep_us);
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
        bosch_optimizer_free(o);
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

static Suite *journal_partial_suite(void)
{
    Suite *s = suite_create("journal_partial");
    TCase *tc = tcase_new(s, "partial");
    tcase_add_test(tc, partial_resume_callback);
    tcase_add_test(tc, partial_resume_chain);
    tcase_add_test(tc, partial_resume_asktell);
    tcase_add_test(tc, partial_resume_variants);
    tcase_add_test(tc, threaded_journal_resumes);
    tcase_add_test(tc, resume_after_failure);
    tcase_add_test(tc, wide_masks);
    return s;
}

int main(void)
{
    return run_journal_suite(journal_partial_suite());
}
