/*
 * Journal tests: a journal of other settings or of another library or format
 * version is refused with BOSCH_E_MISMATCH naming the field (and both
 * values), the file untouched; time_limit, threads and journal_sync may
 * differ.
 */
#include <stdio.h>
#include <string.h>

#include "support/support.h"
#include "support/journal_files.h"
#include "support/journal_runs.h"

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
static void v_batch(cfg *c) { c->batch = 8; /* the default is 4 */ }
static void v_strategy(cfg *c) { c->strategy = "random"; }
static void v_variant(cfg *c) { c->variant = BOSCH_VARIANT_GROUP_ONLY; }
static void v_alpha(cfg *c) { c->alpha = 2.0; }
static void v_probe_fraction(cfg *c) { c->probe_fraction = 0.3; }
static void v_polish(cfg *c) { c->polish_fraction = 0.2; }
static void v_spread(cfg *c) { c->ratio_spread = 0.25; }
static void v_group_cap(cfg *c) { c->group_cap = 16; }
static void v_anchors(cfg *c) { c->anchors = 1; }
static void v_stop(cfg *c) { c->stop_tolerance = 0.01; }
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
        {"stop_tolerance", NULL, v_stop},
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
                snprintf(msg, sizeof msg, "%s", bosch_optimizer_last_error(o));
                ck_assert_uint_eq(r.calls, 0);
                bosch_optimizer_free(o);
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

    /* A field given twice, this run's value last: json-c alone would read
     * the last and resume; the header has no single meaning, so it is refused. */
    size_t tn = strlen(json) + 16;
    char *twice = malloc(tn);
    ck_assert_ptr_nonnull(twice);
    snprintf(twice, tn, "{\"seed\":\"4\",%s", json + 1);
    write_with_header(path, full, size, &fr, twice);
    ck_assert_int_eq(first_ask(&c, path, BOSCH_JOURNAL_RESUME, msg, sizeof msg, NULL),
                     BOSCH_E_CORRUPT);
    ck_assert_msg(contains(msg, "journal header: key \"seed\" is given twice"), "message \"%s\"",
                  msg);
    free(twice);

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

/* ------------------------------------------------------------------------ */
/* The host's run identity                                                   */
/* ------------------------------------------------------------------------ */
/* Runs the base settings with identity pairs (key, value, ...; NULL ends)
 * on `path` in ask/tell mode; the first bosch_ask status, message in msg. */
static int ask_with_identity(const cfg *c, const char *path, int mode, const char *const *kv,
                             char *msg, size_t msglen)
{
    bosch_optimizer *o = cfg_opt(c, path, mode);
    for (size_t i = 0; kv && kv[i]; i += 2)
        ck_assert_int_eq(bosch_set_run_identity(o, kv[i], kv[i + 1]), BOSCH_OK);
    size_t n = 0;
    int rc = bosch_ask(o, &n);
    snprintf(msg, msglen, "%s", bosch_optimizer_last_error(o));
    bosch_optimizer_free(o);
    return rc;
}

START_TEST(identity_mismatch_names_key)
{
    char dir[64], path[128], msg[1024];
    j_mkdtemp(dir);
    j_path(path, sizeof path, dir, "j.bin");
    cfg c = base_cfg();
    const char *const run[] = {"model", "ckpt-a", "metric", "exact", NULL};
    ck_assert_int_eq(ask_with_identity(&c, path, BOSCH_JOURNAL_CREATE, run, msg, sizeof msg),
                     BOSCH_OK);
    size_t size = 0;
    uint8_t *before = j_slurp(path, &size);
    /* Same identity: resumes. */
    ck_assert_int_eq(ask_with_identity(&c, path, BOSCH_JOURNAL_RESUME, run, msg, sizeof msg),
                     BOSCH_OK);
    const char *const other_metric[] = {"model", "ckpt-a", "metric", "logprob", NULL};
    ck_assert_int_eq(
        ask_with_identity(&c, path, BOSCH_JOURNAL_RESUME, other_metric, msg, sizeof msg),
        BOSCH_E_MISMATCH);
    ck_assert_msg(strstr(msg, "identity.metric (journal \"exact\", now \"logprob\")"), "%s", msg);
    ck_assert_msg(!strstr(msg, "identity.model"), "%s", msg);
    const char *const fewer[] = {"model", "ckpt-a", NULL};
    ck_assert_int_eq(ask_with_identity(&c, path, BOSCH_JOURNAL_AUTO, fewer, msg, sizeof msg),
                     BOSCH_E_MISMATCH);
    ck_assert_msg(strstr(msg, "identity.metric"), "%s", msg);
    const char *const more[] = {"model", "ckpt-a", "metric", "exact", "task", "t1", NULL};
    ck_assert_int_eq(ask_with_identity(&c, path, BOSCH_JOURNAL_RESUME, more, msg, sizeof msg),
                     BOSCH_E_MISMATCH);
    ck_assert_msg(strstr(msg, "identity.task (journal missing, now \"t1\")"), "%s", msg);
    /* A journal written without an identity refuses a run that has one. */
    char plain[128];
    j_path(plain, sizeof plain, dir, "plain.bin");
    bosch_result_free(make_journal(&c, plain));
    ck_assert_int_eq(ask_with_identity(&c, plain, BOSCH_JOURNAL_RESUME, run, msg, sizeof msg),
                     BOSCH_E_MISMATCH);
    ck_assert_msg(strstr(msg, "identity.model (journal missing"), "%s", msg);
    assert_file_eq(path, before, size, "after refused resumes");
    free(before);
    j_rmtree(dir);
}
END_TEST

START_TEST(identity_api)
{
    cfg c = base_cfg();
    bosch_optimizer *o = cfg_opt(&c, NULL, 0);
    ck_assert_ptr_null(bosch_get_run_identity(o, "model"));
    ck_assert_int_eq(bosch_set_run_identity(o, "model", "a"), BOSCH_OK);
    ck_assert_int_eq(bosch_set_run_identity(o, "model", "b"), BOSCH_OK); /* replaces */
    ck_assert_str_eq(bosch_get_run_identity(o, "model"), "b");
    ck_assert_int_eq(bosch_set_run_identity(o, "torch.dtype-x_1", "f32"), BOSCH_OK);
    ck_assert_int_eq(bosch_set_run_identity(o, "model", NULL), BOSCH_OK); /* removes */
    ck_assert_ptr_null(bosch_get_run_identity(o, "model"));
    ck_assert_str_eq(bosch_get_run_identity(o, "torch.dtype-x_1"), "f32");
    ck_assert_int_eq(bosch_set_run_identity(o, "", "x"), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_run_identity(o, "a b", "x"), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_run_identity(o, NULL, "x"), BOSCH_E_INVALID);
    char key[80];
    memset(key, 'k', 65);
    key[65] = '\0';
    ck_assert_int_eq(bosch_set_run_identity(o, key, "x"), BOSCH_E_INVALID);
    key[64] = '\0';
    ck_assert_int_eq(bosch_set_run_identity(o, key, "x"), BOSCH_OK);
    static char big[4098];
    memset(big, 'v', 4097);
    ck_assert_int_eq(bosch_set_run_identity(o, "big", big), BOSCH_E_INVALID);
    big[4096] = '\0';
    ck_assert_int_eq(bosch_set_run_identity(o, "big", big), BOSCH_OK);
    ck_assert_int_eq(bosch_set_run_identity(NULL, "a", "b"), BOSCH_E_INVALID);
    ck_assert_ptr_null(bosch_get_run_identity(NULL, "a"));
    size_t n = 0;
    ck_assert_int_eq(bosch_ask(o, &n), BOSCH_OK);
    ck_assert_int_eq(bosch_set_run_identity(o, "late", "x"), BOSCH_E_STATE);
    bosch_optimizer_free(o);
}
END_TEST

static Suite *journal_mismatch_suite(void)
{
    Suite *s = suite_create("journal_mismatch");
    TCase *tc = tcase_new(s, "mismatch");
    tcase_add_test(tc, mismatch_names_field);
    tcase_add_test(tc, mismatch_tolerated_fields);
    tcase_add_test(tc, mismatch_versions);
    tcase_add_test(tc, identity_mismatch_names_key);
    tcase_add_test(tc, identity_api);
    return s;
}

int main(void)
{
    return run_journal_suite(journal_mismatch_suite());
}
