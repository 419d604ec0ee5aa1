/*
 * Journal tests (docs/journal.md, bosch_set_journal in optimizer.h): the file
 * format as written, full replay (callbacks and ask/tell, journals
 * interchangeable between the two), journal modes and the string options.
 * Partial journals, damage, torn tails and mismatching settings have their
 * own tests (test_journal_*.c).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json.h>

#include "support/support.h"
#include "support/journal_files.h"
#include "support/journal_runs.h"

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
    ck_assert_int_eq(json_object_get_int64(v), 4);
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
                  bosch_err_name(rc), bosch_optimizer_last_error(o));
    ck_assert_uint_eq(n, 0);
    bosch_result *b = get_result(o);
    assert_same(ref, b, "ask/tell full replay");
    ck_assert_uint_eq(bosch_result_replayed(b), bosch_result_evaluations(b, -1));
    assert_walls_kept(a, b, bosch_result_history_size(a));
    bosch_result_free(b);
    bosch_optimizer_free(o);

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
    bosch_optimizer_free(o);
    jrec_free(&r);
    unlink(other);
    o = cfg_opt(&c, other, BOSCH_JOURNAL_CREATE);
    ck_assert_int_eq(bosch_set_journal(o, NULL, BOSCH_JOURNAL_CREATE), BOSCH_OK);
    jrec_init(&r, 48, NULL);
    ck_assert_int_eq(bosch_set_evaluator(o, jrec_eval, &r), BOSCH_OK);
    ck_assert_int_eq(bosch_optimize(o), ref_st);
    ck_assert(!j_exists(other));
    bosch_optimizer_free(o);
    jrec_free(&r);

    /* Bad arguments. */
    o = cfg_opt(&c, NULL, 0);
    ck_assert_int_eq(bosch_set_journal(o, path, 3), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_journal(o, path, -1), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_journal(NULL, path, 0), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_journal_sync(NULL, 1), BOSCH_E_INVALID);
    bosch_optimizer_free(o);

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
    bosch_optimizer_free(o);
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
    bosch_optimizer_free(o);
    jrec_free(&r);

    o = cfg_opt(&c, NULL, 0);
    ck_assert_int_ge(bosch_get_option(o, "journal", buf, sizeof buf), 0);
    bosch_optimizer_free(o);
    bosch_result_free(ref);
    j_rmtree(dir);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* One run per journal, and a journal that cannot be written                 */
/* ------------------------------------------------------------------------ */
/* A second optimizer on a journal that a running one holds gets BOSCH_E_BUSY
 * at once (in this process and in another one), the file untouched; when
 * the first run ends (here: it stops) the journal is released, though its
 * handle lives on, and the second resumes from it. */
typedef struct {
    jrec r;
    const char *path;
    const cfg *c;
    int busy_in_process, busy_in_child, untouched;
} busy_probe;

static int probe_eval(const uint8_t *mask, size_t units, double *score, void *user)
{
    busy_probe *bp = user;
    int rc = jrec_eval(mask, units, score, &bp->r);
    if (bp->r.calls != 10)
        return rc;
    /* Mid-run, the journal open and locked by this run. */
    size_t size = 0;
    uint8_t *before = j_slurp(bp->path, &size);
    bosch_optimizer *b = cfg_opt(bp->c, bp->path, BOSCH_JOURNAL_AUTO);
    jrec r2;
    jrec_init(&r2, 48, NULL);
    bosch_set_evaluator(b, jrec_eval, &r2);
    bp->busy_in_process = bosch_optimize(b) == BOSCH_E_BUSY && r2.calls == 0 &&
                          strstr(bosch_optimizer_last_error(b), "in use by another run");
    bosch_optimizer_free(b);
    jrec_free(&r2);
    pid_t pid = fork();
    if (pid == 0) {
        bosch_optimizer *cb = cfg_opt(bp->c, bp->path, BOSCH_JOURNAL_AUTO);
        jrec r3;
        jrec_init(&r3, 48, NULL);
        bosch_set_evaluator(cb, jrec_eval, &r3);
        _exit(bosch_optimize(cb) == BOSCH_E_BUSY && r3.calls == 0 ? 0 : 1);
    }
    int wst = 0;
    bp->busy_in_child = pid > 0 && waitpid(pid, &wst, 0) == pid && WIFEXITED(wst) &&
                        WEXITSTATUS(wst) == 0;
    size_t after_size = 0;
    uint8_t *after = j_slurp(bp->path, &after_size);
    bp->untouched = after_size == size && !memcmp(before, after, size);
    free(before);
    free(after);
    bosch_force_stop(bp->r.opt);
    return rc;
}

START_TEST(second_run_refused)
{
    char dir[64], path[128];
    j_mkdtemp(dir);
    j_path(path, sizeof path, dir, "j.bin");
    cfg c = base_cfg();
    busy_probe bp = {.path = path, .c = &c};
    jrec_init(&bp.r, 48, NULL);
    bosch_optimizer *a = cfg_opt(&c, path, BOSCH_JOURNAL_AUTO);
    bp.r.opt = a;
    ck_assert_int_eq(bosch_set_evaluator(a, probe_eval, &bp), BOSCH_OK);
    ck_assert_int_eq(bosch_optimize(a), BOSCH_FORCED_STOP);
    ck_assert_msg(bp.busy_in_process, "a second optimizer in this process was not refused");
    ck_assert_msg(bp.busy_in_child, "another process was not refused");
    ck_assert_msg(bp.untouched, "a refused run changed the journal");
    /* `a` has stopped but is not freed: its journal is free again. */
    bosch_optimizer *b = cfg_opt(&c, path, BOSCH_JOURNAL_AUTO);
    jrec r2;
    jrec_init(&r2, 48, NULL);
    ck_assert_int_eq(bosch_set_evaluator(b, jrec_eval, &r2), BOSCH_OK);
    int st = bosch_optimize(b);
    ck_assert_msg(!bosch_is_error(st), "resume after the first run ended: %s",
                  bosch_optimizer_last_error(b));
    bosch_result *res = NULL;
    ck_assert_int_eq(bosch_get_result(b, &res), BOSCH_OK);
    ck_assert_uint_eq(bosch_result_replayed(res), 10);
    bosch_result_free(res);
    bosch_optimizer_free(b);
    bosch_optimizer_free(a);
    jrec_free(&bp.r);
    jrec_free(&r2);
    j_rmtree(dir);
}
END_TEST

/* A journal that fills its disk mid-run (RLIMIT_FSIZE: writes past the
 * limit fail with EFBIG, as ENOSPC on a full disk): the run stops cleanly
 * with BOSCH_JOURNAL_FAILED and the system's reason, the result keeps the
 * best mask of every evaluation done (feasible), and the journal holds a
 * valid prefix that a later run resumes from. Runs in a child process (the
 * limit is per process). */
START_TEST(full_disk_stops_cleanly)
{
    char dir[64], path[128];
    j_mkdtemp(dir);
    j_path(path, sizeof path, dir, "j.bin");
    cfg c = base_cfg();
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl;
        getrlimit(RLIMIT_FSIZE, &rl);
        rl.rlim_cur = 2048; /* the header and some dozens of records */
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
            _exit(2);
        bosch_optimizer *o = cfg_opt(&c, path, BOSCH_JOURNAL_AUTO);
        jrec r;
        jrec_init(&r, 48, NULL);
        bosch_set_evaluator(o, jrec_eval, &r);
        int st = bosch_optimize(o);
        bosch_result *res = NULL;
        int ok = st == BOSCH_JOURNAL_FAILED &&
                 strstr(bosch_optimizer_last_error(o), "File too large") &&
                 strstr(bosch_optimizer_last_error(o), "best mask found") &&
                 bosch_get_result(o, &res) == BOSCH_OK && bosch_result_feasible(res) &&
                 bosch_result_status(res) == BOSCH_JOURNAL_FAILED &&
                 bosch_result_evaluations(res, -1) == r.calls && r.calls > 10 &&
                 r.calls < c.budget;
        if (!ok)
            fprintf(stderr, "status %s (%s), %zu calls\n", bosch_err_name(st),
                    bosch_optimizer_last_error(o), r.calls);
        bosch_result_free(res);
        bosch_optimizer_free(o);
        _exit(ok ? 0 : 1);
    }
    int wst = 0;
    ck_assert_int_eq(waitpid(pid, &wst, 0), pid);
    ck_assert_msg(WIFEXITED(wst) && WEXITSTATUS(wst) == 0, "child: exit %d", WEXITSTATUS(wst));
    /* What the journal kept resumes: the run then ends as one never cut. */
    int st;
    bosch_result *ref = reference(&c, &st);
    jrec r;
    jrec_init(&r, 48, NULL);
    pobs po = {0, 0, 0};
    bosch_result *res = run_cb(&c, path, BOSCH_JOURNAL_RESUME, &r, 0, &st, &po);
    ck_assert_uint_gt(bosch_result_replayed(res), 10);
    assert_same(ref, res, "resumed after the full disk");
    bosch_result_free(res);
    bosch_result_free(ref);
    jrec_free(&r);
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
    tc = tcase_new(s, "modes");
    tcase_add_test(tc, modes);
    tcase_add_test(tc, string_options);
    tc = tcase_new(s, "failures");
    tcase_add_test(tc, second_run_refused);
    tcase_add_test(tc, full_disk_stops_cleanly);
    return s;
}

int main(void)
{
    return run_journal_suite(journal_suite());
}
