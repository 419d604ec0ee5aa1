/*
 * Exports of a selection (selection.h, docs/export.md): the layer-level
 * predicate and projection (choice, ties, importance, fields), the
 * DuoAttention pattern directory, the Hugging Face config (shapes,
 * content, kept members, errors, atomic replacement: no temporary left)
 * and TensorRT-LLM's per-layer windows.
 * test/export/ reads the same files with code written from the consumers'.
 */
#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/scratch.h"
#include "support/support.h"

static void setup(void)
{
    scratch_setup("bosch-export");
}


/* Entries of `dir` other than . and ..; any name starting with '.' (a
 * leftover temporary) fails the test. */
static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        ck_assert_msg(e->d_name[0] != '.', "temporary %s left in %s", e->d_name, dir);
        n++;
    }
    closedir(d);
    return n;
}

/* A selection of the shape with mask `bits` ('1' = SWA), window 128, sink 4. */
static bosch_selection *make(uint32_t layers, uint32_t groups, uint32_t hpg, const char *bits)
{
    bosch_selection *s = bosch_selection_create(layers, groups, hpg);
    ck_assert_ptr_nonnull(s);
    size_t n = (size_t)layers * groups;
    ck_assert_uint_eq(strlen(bits), n);
    uint8_t *m = malloc(n);
    for (size_t u = 0; u < n; u++)
        m[u] = bits[u] == '1';
    ck_assert_int_eq(bosch_selection_set_mask(s, m, n), BOSCH_OK);
    free(m);
    ck_assert_int_eq(bosch_selection_set_kv_saving(s, 1024, 128, 4), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_set_method(s, "bosch"), BOSCH_OK);
    return s;
}

static void expect_mask(const bosch_selection *s, const char *bits)
{
    size_t n = bosch_selection_units(s);
    uint8_t *m = malloc(n);
    ck_assert_int_eq(bosch_selection_mask(s, m, n), BOSCH_OK);
    char *got = malloc(n + 1);
    for (size_t u = 0; u < n; u++)
        got[u] = m[u] ? '1' : '0';
    got[n] = '\0';
    ck_assert_str_eq(got, bits);
    free(got);
    free(m);
}

/* ------------------------------------------------------------------------ */
/* Layer level                                                               */
/* ------------------------------------------------------------------------ */
START_TEST(layer_level_predicate)
{
    bosch_selection *a = make(3, 2, 2, "110011");
    bosch_selection *b = make(3, 2, 2, "111011");
    bosch_selection *c = make(2, 1, 4, "10"); /* one KV head: always layer level */
    ck_assert_int_ne(bosch_selection_is_layer_level(a), 0);
    ck_assert_int_eq(bosch_selection_is_layer_level(b), 0);
    ck_assert_int_ne(bosch_selection_is_layer_level(c), 0);
    ck_assert_int_eq(bosch_selection_is_layer_level(NULL), 0);
    bosch_selection_free(a);
    bosch_selection_free(b);
    bosch_selection_free(c);
}
END_TEST

START_TEST(projection_choice)
{
    /* Layer SWA heads 1, 2, 0, 1 (4 of 8): 2 layers; layer 1 first, then the
     * tie of layers 0 and 3 goes to the higher index. */
    bosch_selection *s = make(4, 2, 4, "10110001");
    bosch_selection *p = bosch_selection_project_layers(s);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_ne(bosch_selection_is_layer_level(p), 0);
    expect_mask(p, "00110011");
    ck_assert_double_eq(bosch_selection_ratio(p), 0.5);
    bosch_selection_free(p);

    /* With importance, the tie goes to the lower summed importance
     * (layer 0: 0.1 + 0.2, layer 3: 0.5 + 0.5). */
    const double imp[8] = {0.1, 0.2, 9, 9, 7, 7, 0.5, 0.5};
    ck_assert_int_eq(bosch_selection_set_importance(s, imp, 8), BOSCH_OK);
    p = bosch_selection_project_layers(s);
    expect_mask(p, "11110000");
    double got[8];
    ck_assert_int_eq(bosch_selection_importance(p, got, 8), BOSCH_OK);
    ck_assert_double_eq(got[6], 0.5);
    bosch_selection_free(p);

    /* A non-finite importance value: importance ignored, index decides. */
    const double nan_imp[8] = {0.1, 0.2, 9, 9, 7, 7, NAN, 0.5};
    ck_assert_int_eq(bosch_selection_set_importance(s, nan_imp, 8), BOSCH_OK);
    p = bosch_selection_project_layers(s);
    expect_mask(p, "00110011");
    bosch_selection_free(p);

    /* The SWA share decides before importance (layer 1 has the most). */
    const double big[8] = {1, 1, 100, 100, 0, 0, 5, 5};
    ck_assert_int_eq(bosch_selection_set_importance(s, big, 8), BOSCH_OK);
    p = bosch_selection_project_layers(s);
    expect_mask(p, "11110000");
    bosch_selection_free(p);
    bosch_selection_free(s);
}
END_TEST

START_TEST(projection_rounding)
{
    struct {
        uint32_t layers, groups;
        const char *in, *out;
    } cases[] = {
        {4, 2, "10100000", "00110000"}, /* 2/2 = 1 layer: the higher of two ties */
        {4, 2, "10101000", "00111100"}, /* 3/2 = 1.5 -> 2 layers: 2, then 1 of 0, 1 */
        {2, 4, "10000000", "00000000"},     /* 1/4 -> 0 layers */
        {2, 4, "11000000", "11110000"},     /* 2/4 = 0.5 -> 1 layer */
        {3, 5, "111110000011111", "111110000011111"}, /* layer level: itself */
        {1, 3, "011", "111"},
        {1, 3, "001", "000"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bosch_selection *s = make(cases[i].layers, cases[i].groups, 2, cases[i].in);
        bosch_selection *p = bosch_selection_project_layers(s);
        ck_assert_ptr_nonnull(p);
        expect_mask(p, cases[i].out);
        bosch_selection_free(p);
        bosch_selection_free(s);
    }
}
END_TEST

START_TEST(projection_fields)
{
    bosch_selection *s = make(2, 2, 2, "1000");
    ck_assert_int_eq(bosch_selection_set_model_path(s, "/models/q"), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_set_target_ratio(s, 0.25), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_set_score(s, BOSCH_SCORE_RAW, 0.9), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_set_metric(s, "exact"), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_set_status(s, "BOSCH_DONE"), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_setting_set_int(s, "window", 128), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_setting_set_int(s, "sink", 4), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_setting_set_string(s, "niah.task", "x"), BOSCH_OK);
    const uint64_t st[BOSCH_STAGE_COUNT] = {1, 2, 3, 4};
    ck_assert_int_eq(bosch_selection_set_evaluations(s, st, 10, 0), BOSCH_OK);

    bosch_selection *p = bosch_selection_project_layers(s);
    ck_assert_ptr_nonnull(p);
    ck_assert_str_eq(bosch_selection_method(p), "layer-projection:bosch");
    ck_assert_str_eq(bosch_selection_model_path(p), "/models/q");
    ck_assert_double_eq(bosch_selection_target_ratio(p), 0.25);
    ck_assert(isnan(bosch_selection_score(p, BOSCH_SCORE_RAW)));
    ck_assert_ptr_null(bosch_selection_metric(p));
    ck_assert_ptr_null(bosch_selection_status(p));
    uint64_t n, ctx, win, sink;
    double frac;
    ck_assert_int_eq(bosch_selection_evaluations(p, -1, &n), BOSCH_E_NOT_FOUND);
    ck_assert_int_eq(bosch_selection_kv_saving(p, &ctx, &win, &sink, &frac), BOSCH_OK);
    ck_assert_uint_eq(ctx, 1024);
    ck_assert_uint_eq(win, 128);
    ck_assert_uint_eq(sink, 0);
    /* 1 of 2 layers: 0.5 * (1 - 128/1024) */
    ck_assert_double_eq_tol(frac, 0.5 * (1 - 128.0 / 1024), 1e-12);
    int64_t v;
    ck_assert_int_eq(bosch_selection_setting_int(p, "sink", &v), BOSCH_OK);
    ck_assert_int_eq(v, 0);
    ck_assert_int_eq(bosch_selection_setting_int(p, "window", &v), BOSCH_OK);
    ck_assert_int_eq(v, 128);
    ck_assert_str_eq(bosch_selection_setting_string(p, "niah.task"), "x");
    /* It is written and read back as any mask. */
    ck_assert_int_eq(bosch_selection_write_json(p, scratch_path("proj.json")), BOSCH_OK);
    bosch_selection *r = bosch_selection_read_json(scratch_path("proj.json"));
    ck_assert_ptr_nonnull(r);
    expect_mask(r, "1100");
    bosch_selection_free(r);
    bosch_selection_free(p);

    /* No method, no KV record: "layer-projection", none recorded. */
    bosch_selection *bare = bosch_selection_create(2, 2, 2);
    p = bosch_selection_project_layers(bare);
    ck_assert_str_eq(bosch_selection_method(p), "layer-projection");
    ck_assert_int_eq(bosch_selection_kv_saving(p, NULL, NULL, NULL, NULL), BOSCH_E_NOT_FOUND);
    bosch_selection_free(p);
    bosch_selection_free(bare);
    bosch_selection_free(s);

    ck_assert_ptr_null(bosch_selection_project_layers(NULL));
    ck_assert_int_eq(bosch_create_status(), BOSCH_E_INVALID);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* DuoAttention                                                              */
/* ------------------------------------------------------------------------ */
static json_object *read_json(const char *path)
{
    json_object *o = json_object_from_file(path);
    ck_assert_msg(o != NULL, "cannot parse %s", path);
    return o;
}

static int64_t jint(json_object *o, const char *key)
{
    json_object *v;
    ck_assert_msg(json_object_object_get_ex(o, key, &v), "no %s", key);
    ck_assert_msg(json_object_is_type(v, json_type_int), "%s is not an integer", key);
    return json_object_get_int64(v);
}

static double jdouble(json_object *o, const char *key)
{
    json_object *v;
    ck_assert_msg(json_object_object_get_ex(o, key, &v), "no %s", key);
    return json_object_get_double(v);
}

START_TEST(duo_shapes)
{
    struct {
        uint32_t layers, groups;
        const char *bits, *tsv;
    } cases[] = {
        {4, 2, "10110001", "0\t1\n0\t0\n1\t1\n1\t0\n"},
        {3, 5, "100000111101010", "0\t1\t1\t1\t1\n1\t0\t0\t0\t0\n1\t0\t1\t0\t1\n"},
        {1, 3, "010", "1\t0\t1\n"},
        {3, 1, "101", "0\n1\n0\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "duo%zu", i);
        const char *dir = scratch_path(name);
        bosch_selection *s = make(cases[i].layers, cases[i].groups, 3, cases[i].bits);
        ck_assert_int_eq(bosch_selection_export_duo(s, dir), BOSCH_OK);
        char path[400];
        snprintf(path, sizeof path, "%s/full_attention_heads.tsv", dir);
        char *tsv = scratch_read_text(path);
        ck_assert_str_eq(tsv, cases[i].tsv);
        free(tsv);
        snprintf(path, sizeof path, "%s/config.json", dir);
        json_object *c = read_json(path);
        ck_assert_int_eq(jint(c, "sink_size"), 4);
        ck_assert_int_eq(jint(c, "recent_size"), 128);
        ck_assert_int_eq(jint(c, "num_layers"), cases[i].layers);
        ck_assert_int_eq(jint(c, "num_key_value_heads"), cases[i].groups);
        ck_assert_int_eq(jint(c, "num_attention_heads"), cases[i].groups * 3);
        ck_assert_int_eq(jint(c, "streaming_heads"), (int64_t)bosch_selection_swa_units(s));
        double ratio = bosch_selection_ratio(s);
        ck_assert_double_eq(jdouble(c, "head_compression_ratio"), ratio);
        ck_assert_double_eq(jdouble(c, "sparsity"), ratio);
        ck_assert_double_eq(jdouble(c, "threshold"), 0.5);
        ck_assert_double_eq_tol(jdouble(c, "kv_saving"), ratio * (1 - 132.0 / 1024), 1e-12);
        json_object *v;
        ck_assert(json_object_object_get_ex(c, "producer", &v));
        ck_assert_ptr_nonnull(strstr(json_object_get_string(v), bosch_version_string()));
        ck_assert(json_object_object_get_ex(c, "method", &v));
        ck_assert_str_eq(json_object_get_string(v), "bosch");
        json_object_put(c);
        ck_assert_int_eq(count_entries(dir), 2);
        bosch_selection_free(s);
    }
}
END_TEST

START_TEST(duo_replaces)
{
    const char *dir = scratch_path("duo-again");
    bosch_selection *s = make(2, 2, 2, "1100");
    ck_assert_int_eq(bosch_selection_export_duo(s, dir), BOSCH_OK);
    const uint8_t m[4] = {0, 0, 0, 1};
    ck_assert_int_eq(bosch_selection_set_mask(s, m, 4), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_set_kv_saving(s, 4096, 256, 0), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_export_duo(s, dir), BOSCH_OK);
    char path[400];
    snprintf(path, sizeof path, "%s/full_attention_heads.tsv", dir);
    char *tsv = scratch_read_text(path);
    ck_assert_str_eq(tsv, "1\t1\n1\t0\n");
    free(tsv);
    snprintf(path, sizeof path, "%s/config.json", dir);
    json_object *c = read_json(path);
    ck_assert_int_eq(jint(c, "sink_size"), 0);
    ck_assert_int_eq(jint(c, "recent_size"), 256);
    ck_assert_int_eq(jint(c, "context"), 4096);
    json_object_put(c);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_uint_eq(st.st_mode & 0777, 0644);
    ck_assert_int_eq(count_entries(dir), 2);
    bosch_selection_free(s);
}
END_TEST

START_TEST(duo_errors)
{
    bosch_selection *s = make(2, 2, 2, "1100");
    ck_assert_int_eq(bosch_selection_export_duo(NULL, scratch_path("x")), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_export_duo(s, NULL), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_export_duo(s, ""), BOSCH_E_INVALID);

    /* DIR is a file. */
    scratch_write_text(scratch_path("a-file"), "x");
    errno = 0;
    ck_assert_int_eq(bosch_selection_export_duo(s, scratch_path("a-file")), BOSCH_E_IO);
    ck_assert_int_eq(errno, ENOTDIR);
    ck_assert_ptr_nonnull(strstr(bosch_selection_last_error(s), "a-file"));
    /* Two levels missing: only one is made. */
    ck_assert_int_eq(bosch_selection_export_duo(s, scratch_path("no/such")), BOSCH_E_IO);
    ck_assert_int_eq(errno, ENOENT);

    /* A target that cannot be replaced (a directory named config.json):
     * no temporary is left behind. */
    const char *dir = scratch_path("duo-blocked");
    ck_assert_int_eq(mkdir(dir, 0777), 0);
    char sub[400];
    snprintf(sub, sizeof sub, "%s/config.json", dir);
    ck_assert_int_eq(mkdir(sub, 0777), 0);
    ck_assert_int_eq(bosch_selection_export_duo(s, dir), BOSCH_E_IO);
    ck_assert_ptr_nonnull(strstr(bosch_selection_last_error(s), "config.json"));
    ck_assert_int_le(count_entries(dir), 2); /* config.json/ and at most the new tsv */
    ck_assert_int_eq(rmdir(sub), 0);

    /* No KV record, or window 0. */
    bosch_selection *bare = bosch_selection_create(2, 2, 2);
    ck_assert_int_eq(bosch_selection_export_duo(bare, scratch_path("duo-bare")), BOSCH_E_INVALID);
    ck_assert_ptr_nonnull(strstr(bosch_selection_last_error(bare), "kv_saving"));
    ck_assert_int_eq(access(scratch_path("duo-bare"), F_OK), -1); /* nothing made */
    ck_assert_int_eq(bosch_selection_set_kv_saving(bare, 1024, 0, 4), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_export_duo(bare, scratch_path("duo-bare")), BOSCH_E_INVALID);
    bosch_selection_free(bare);
    bosch_selection_free(s);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Hugging Face                                                              */
/* ------------------------------------------------------------------------ */
static const char source_config[] =
    "{\n"
    "  \"architectures\": [\"Qwen3ForCausalLM\"],\n"
    "  \"model_type\": \"qwen3\",\n"
    "  \"num_hidden_layers\": 4,\n"
    "  \"num_attention_heads\": 8,\n"
    "  \"num_key_value_heads\": 2,\n"
    "  \"rms_norm_eps\": 1e-06,\n"
    "  \"rope_theta\": 1000000.0,\n"
    "  \"rope_scaling\": null,\n"
    "  \"use_sliding_window\": false,\n"
    "  \"sliding_window\": 4096,\n"
    "  \"max_window_layers\": 28,\n"
    "  \"eos_token_id\": 151645,\n"
    "  \"name\": \"caf\xc3\xa9 / x\",\n"
    "  \"quantization\": {\"bits\": 4, \"groups\": [1, 2]}\n"
    "}\n";

static const char *const source_keys[] = {
    "architectures", "model_type", "num_hidden_layers", "num_attention_heads",
    "num_key_value_heads", "rms_norm_eps", "rope_theta", "rope_scaling", "use_sliding_window",
    "sliding_window", "max_window_layers", "eos_token_id", "name", "quantization", "layer_types",
};

START_TEST(hf_config)
{
    scratch_write_text(scratch_path("src.json"), source_config);
    bosch_selection *s = make(4, 2, 4, "00110011"); /* layers 1 and 3 slide */
    ck_assert_int_eq(bosch_selection_export_hf(s, scratch_path("src.json"), scratch_path("hf.json")),
                     BOSCH_OK);
    json_object *c = read_json(scratch_path("hf.json"));
    /* Every member kept, in its place; layer_types added at the end. */
    size_t i = 0;
    json_object_object_foreach(c, key, val) {
        (void)val;
        ck_assert_uint_lt(i, sizeof source_keys / sizeof source_keys[0]);
        ck_assert_str_eq(key, source_keys[i]);
        i++;
    }
    ck_assert_uint_eq(i, sizeof source_keys / sizeof source_keys[0]);
    json_object *v;
    ck_assert(json_object_object_get_ex(c, "use_sliding_window", &v));
    ck_assert(json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v));
    ck_assert_int_eq(jint(c, "sliding_window"), 128);
    ck_assert_int_eq(jint(c, "max_window_layers"), 1);
    ck_assert(json_object_object_get_ex(c, "layer_types", &v));
    ck_assert_uint_eq(json_object_array_length(v), 4);
    const char *want[4] = {"full_attention", "sliding_attention", "full_attention",
                           "sliding_attention"};
    for (size_t l = 0; l < 4; l++)
        ck_assert_str_eq(json_object_get_string(json_object_array_get_idx(v, l)), want[l]);
    /* Other values as they were. */
    ck_assert_int_eq(jint(c, "eos_token_id"), 151645);
    ck_assert_double_eq(jdouble(c, "rms_norm_eps"), 1e-6);
    ck_assert(json_object_object_get_ex(c, "name", &v));
    ck_assert_str_eq(json_object_get_string(v), "caf\xc3\xa9 / x");
    ck_assert(json_object_object_get_ex(c, "rope_scaling", &v) && v == NULL);
    ck_assert(json_object_object_get_ex(c, "quantization", &v));
    ck_assert_int_eq(jint(v, "bits"), 4);
    json_object_put(c);
    char *text = scratch_read_text(scratch_path("hf.json"));
    ck_assert_ptr_nonnull(strstr(text, "1e-06")); /* numbers keep their text */
    ck_assert_ptr_nonnull(strstr(text, "\"caf\xc3\xa9 / x\""));
    free(text);

    /* All full: max_window_layers = layers; all SWA: 0. In place. */
    scratch_write_text(scratch_path("inplace.json"), source_config);
    bosch_selection *full = make(4, 2, 4, "00000000");
    ck_assert_int_eq(bosch_selection_export_hf(full, scratch_path("inplace.json"),
                                               scratch_path("inplace.json")),
                     BOSCH_OK);
    c = read_json(scratch_path("inplace.json"));
    ck_assert_int_eq(jint(c, "max_window_layers"), 4);
    json_object_put(c);
    bosch_selection *all = make(4, 2, 4, "11111111");
    ck_assert_int_eq(bosch_selection_export_hf(all, scratch_path("inplace.json"),
                                               scratch_path("inplace.json")),
                     BOSCH_OK);
    c = read_json(scratch_path("inplace.json"));
    ck_assert_int_eq(jint(c, "max_window_layers"), 0);
    ck_assert(json_object_object_get_ex(c, "layer_types", &v));
    ck_assert_str_eq(json_object_get_string(json_object_array_get_idx(v, 0)), "sliding_attention");
    json_object_put(c);
    bosch_selection_free(full);
    bosch_selection_free(all);
    bosch_selection_free(s);
}
END_TEST

START_TEST(hf_projection_exported)
{
    scratch_write_text(scratch_path("src2.json"), source_config);
    bosch_selection *s = make(4, 2, 4, "10110001");
    ck_assert_int_eq(bosch_selection_export_hf(s, scratch_path("src2.json"), scratch_path("hf2.json")),
                     BOSCH_E_INVALID);
    ck_assert_ptr_nonnull(strstr(bosch_selection_last_error(s), "head-level"));
    ck_assert_int_eq(access(scratch_path("hf2.json"), F_OK), -1);
    bosch_selection *p = bosch_selection_project_layers(s);
    ck_assert_int_eq(bosch_selection_export_hf(p, scratch_path("src2.json"), scratch_path("hf2.json")),
                     BOSCH_OK);
    json_object *c = read_json(scratch_path("hf2.json")), *v;
    ck_assert(json_object_object_get_ex(c, "layer_types", &v));
    const char *want[4] = {"full_attention", "sliding_attention", "full_attention",
                           "sliding_attention"};
    for (size_t l = 0; l < 4; l++)
        ck_assert_str_eq(json_object_get_string(json_object_array_get_idx(v, l)), want[l]);
    json_object_put(c);
    bosch_selection_free(p);
    bosch_selection_free(s);
}
END_TEST

static const struct {
    const char *text;
    int code;
    const char *why;
} bad_sources[] = {
    {"{ \"num_hidden_layers\": 4, ", BOSCH_E_CORRUPT, "not a JSON object"},
    {"[1, 2]", BOSCH_E_CORRUPT, "not a JSON object"},
    {"{ \"num_hidden_layers\": 4 } x", BOSCH_E_CORRUPT, "not a JSON object"},
    {"", BOSCH_E_CORRUPT, "not a JSON object"},
    {"{ \"model_type\": \"qwen3\" }", BOSCH_E_CORRUPT, "num_hidden_layers"},
    {"{ \"num_hidden_layers\": \"4\" }", BOSCH_E_CORRUPT, "not an integer"},
    {"{ \"num_hidden_layers\": 5 }", BOSCH_E_MISMATCH,
     "describes a model of 5 layers x ? KV heads (? query heads), the selection one of 4 layers "
     "x 2 KV heads (8 query heads): num_hidden_layers differs"},
    {"{ \"num_hidden_layers\": 4, \"num_key_value_heads\": 4 }", BOSCH_E_MISMATCH,
     "num_key_value_heads"},
    {"{ \"num_hidden_layers\": 4, \"num_attention_heads\": 16 }", BOSCH_E_MISMATCH,
     "num_attention_heads"},
    /* A key given twice: the export would keep one and drop the other. */
    {"{ \"num_hidden_layers\": 4,\n  \"sliding_window\": 64,\n  \"sliding_window\": 128 }",
     BOSCH_E_CORRUPT, "line 3: key \"sliding_window\" is given twice (give each key once)"},
};

/* A Qwen3-MoE config: transformers slides all its layers or none
 * (use_sliding_window; layer_types ignored), so a partial selection is
 * refused, nothing written; all or none export with the flag set so. */
START_TEST(hf_moe_all_or_none)
{
    const char *moe = "{\n  \"architectures\": [\"Qwen3MoeForCausalLM\"],\n"
                      "  \"model_type\": \"qwen3_moe\",\n  \"num_hidden_layers\": 4,\n"
                      "  \"num_key_value_heads\": 2,\n  \"use_sliding_window\": false,\n"
                      "  \"sliding_window\": null\n}\n";
    scratch_write_text(scratch_path("moe.json"), moe);
    bosch_selection *part = make(4, 2, 4, "00110011");
    ck_assert_int_eq(bosch_selection_export_hf(part, scratch_path("moe.json"),
                                               scratch_path("moe-out.json")),
                     BOSCH_E_INVALID);
    ck_assert_ptr_nonnull(strstr(bosch_selection_last_error(part), "Qwen3MoeForCausalLM"));
    ck_assert_ptr_nonnull(strstr(bosch_selection_last_error(part), "slides 2 of 4 layers"));
    ck_assert_int_eq(access(scratch_path("moe-out.json"), F_OK), -1);
    const char *masks[2] = {"00000000", "11111111"};
    for (int i = 0; i < 2; i++) {
        bosch_selection *s = make(4, 2, 4, masks[i]);
        ck_assert_int_eq(bosch_selection_export_hf(s, scratch_path("moe.json"),
                                                   scratch_path("moe-out.json")),
                         BOSCH_OK);
        json_object *c = read_json(scratch_path("moe-out.json")), *v;
        ck_assert(json_object_object_get_ex(c, "use_sliding_window", &v));
        ck_assert_int_eq(json_object_get_boolean(v), i);
        ck_assert_int_eq(jint(c, "sliding_window"), 128);
        json_object_put(c);
        bosch_selection_free(s);
    }
    bosch_selection_free(part);
}
END_TEST

START_TEST(hf_bad_source)
{
    bosch_selection *s = make(4, 2, 4, "00110011");
    const char *src = scratch_path("bad-src.json");
    scratch_write_text(src, bad_sources[_i].text);
    ck_assert_int_eq(bosch_selection_export_hf(s, src, scratch_path("bad-out.json")),
                     bad_sources[_i].code);
    ck_assert_msg(strstr(bosch_selection_last_error(s), bad_sources[_i].why) != NULL,
                  "error '%s' lacks '%s'", bosch_selection_last_error(s), bad_sources[_i].why);
    ck_assert_int_eq(access(scratch_path("bad-out.json"), F_OK), -1);
    bosch_selection_free(s);
}
END_TEST

START_TEST(hf_errors)
{
    scratch_write_text(scratch_path("src3.json"), source_config);
    const char *src = scratch_path("src3.json");
    bosch_selection *s = make(4, 2, 4, "00110011");
    ck_assert_int_eq(bosch_selection_export_hf(NULL, src, scratch_path("o.json")), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_export_hf(s, NULL, scratch_path("o.json")), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_export_hf(s, src, NULL), BOSCH_E_INVALID);
    /* Unreadable source. */
    ck_assert_int_eq(bosch_selection_export_hf(s, scratch_path("missing.json"), scratch_path("o.json")),
                     BOSCH_E_IO);
    ck_assert_int_eq(errno, ENOENT);
    ck_assert_ptr_nonnull(strstr(bosch_selection_last_error(s), "missing.json"));
    ck_assert_int_eq(bosch_selection_export_hf(s, scratch_dir(), scratch_path("o.json")),
                     BOSCH_E_IO);
    /* A source over 64 MiB is no config.json (util_read_file's cap): refused
     * by its size, nothing written. A sparse file: no disk is used. */
    const char *huge = scratch_path("huge.json");
    FILE *hf = fopen(huge, "wb");
    ck_assert_ptr_nonnull(hf);
    ck_assert_int_eq(ftruncate(fileno(hf), ((off_t)64 << 20) + 1), 0);
    fclose(hf);
    ck_assert_int_eq(bosch_selection_export_hf(s, huge, scratch_path("o.json")), BOSCH_E_CORRUPT);
    ck_assert_ptr_nonnull(strstr(bosch_selection_last_error(s), "larger than"));
    ck_assert_int_eq(access(scratch_path("o.json"), F_OK), -1);
    ck_assert_int_eq(unlink(huge), 0);
    /* Output that cannot be written, or replaced: no temporary left. */
    ck_assert_int_eq(bosch_selection_export_hf(s, src, scratch_path("no/dir/o.json")), BOSCH_E_IO);
    const char *dir = scratch_path("hf-blocked");
    ck_assert_int_eq(mkdir(dir, 0777), 0);
    char target[400];
    snprintf(target, sizeof target, "%s/config.json", dir);
    ck_assert_int_eq(mkdir(target, 0777), 0);
    ck_assert_int_eq(bosch_selection_export_hf(s, src, target), BOSCH_E_IO);
    ck_assert_int_eq(count_entries(dir), 1);
    ck_assert_int_eq(rmdir(target), 0);
    /* No KV record; window 0. */
    bosch_selection *bare = bosch_selection_create(4, 2, 4);
    ck_assert_int_eq(bosch_selection_export_hf(bare, src, scratch_path("o.json")), BOSCH_E_INVALID);
    ck_assert_ptr_nonnull(strstr(bosch_selection_last_error(bare), "kv_saving"));
    ck_assert_int_eq(bosch_selection_set_kv_saving(bare, 1024, 0, 0), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_export_hf(bare, src, scratch_path("o.json")), BOSCH_E_INVALID);
    ck_assert_int_eq(access(scratch_path("o.json"), F_OK), -1);
    bosch_selection_free(bare);
    bosch_selection_free(s);
}
END_TEST

/* A model directory: config.json, weights, a tokenizer, a hidden file, a
 * subdirectory and a mask copy of its own (none of the last three linked). */
static const char *make_model_dir(const char *name)
{
    const char *dir = scratch_path(name);
    ck_assert_int_eq(mkdir(dir, 0777), 0);
    char path[4096];
    const char *files[] = {"config.json", "model.safetensors", "tokenizer.json", ".hidden",
                           "bosch-mask.json"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        scratch_write_text(path, i == 0 ? source_config : "x");
    }
    snprintf(path, sizeof path, "%s/sub", dir);
    ck_assert_int_eq(mkdir(path, 0777), 0);
    return dir;
}

static int is_link_to(const char *path, const char *target_suffix)
{
    char buf[4096];
    ssize_t n = readlink(path, buf, sizeof buf - 1);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    size_t k = strlen(target_suffix);
    return buf[0] == '/' && (size_t)n >= k && !strcmp(buf + n - k, target_suffix);
}

START_TEST(hf_dir_links_the_model)
{
    char model[4096], out[4096], p[4200];
    snprintf(model, sizeof model, "%s", make_model_dir("model-a"));
    snprintf(out, sizeof out, "%s", scratch_path("served-a"));
    bosch_selection *s = make(4, 2, 4, "00110011");
    size_t linked = 99, kept = 99;
    ck_assert_int_eq(bosch_selection_export_hf_dir(s, model, out, 0, &linked, &kept), BOSCH_OK);
    ck_assert_uint_eq(linked, 2); /* model.safetensors, tokenizer.json */
    ck_assert_uint_eq(kept, 0);
    snprintf(p, sizeof p, "%s/model.safetensors", out);
    ck_assert(is_link_to(p, "/model-a/model.safetensors"));
    snprintf(p, sizeof p, "%s/tokenizer.json", out);
    ck_assert(is_link_to(p, "/model-a/tokenizer.json"));
    /* config.json is the export's, bosch-mask.json the selection (no links). */
    struct stat st;
    snprintf(p, sizeof p, "%s/config.json", out);
    ck_assert_int_eq(lstat(p, &st), 0);
    ck_assert(S_ISREG(st.st_mode));
    json_object *c = read_json(p);
    json_object *lt;
    ck_assert(json_object_object_get_ex(c, "layer_types", &lt));
    ck_assert_str_eq(json_object_get_string(json_object_array_get_idx(lt, 1)),
                     "sliding_attention");
    json_object_put(c);
    snprintf(p, sizeof p, "%s/bosch-mask.json", out);
    ck_assert_int_eq(lstat(p, &st), 0);
    ck_assert(S_ISREG(st.st_mode));
    bosch_selection *back = bosch_selection_read_json(p);
    ck_assert_ptr_nonnull(back);
    expect_mask(back, "00110011");
    bosch_selection_free(back);
    ck_assert_int_eq(count_entries(out), 4); /* nothing hidden, no subdirectory */
    /* Again: the links are replaced, a file that is not a link is kept. */
    snprintf(p, sizeof p, "%s/tokenizer.json", out);
    ck_assert_int_eq(unlink(p), 0);
    scratch_write_text(p, "mine");
    ck_assert_int_eq(bosch_selection_export_hf_dir(s, model, out, 0, &linked, &kept), BOSCH_OK);
    ck_assert_uint_eq(linked, 1);
    ck_assert_uint_eq(kept, 1);
    char *mine = scratch_read_text(p);
    ck_assert_str_eq(mine, "mine");
    free(mine);
    /* Config only: nothing linked. */
    snprintf(out, sizeof out, "%s", scratch_path("served-b"));
    ck_assert_int_eq(bosch_selection_export_hf_dir(s, model, out, BOSCH_EXPORT_CONFIG_ONLY,
                                                   &linked, NULL), BOSCH_OK);
    ck_assert_uint_eq(linked, 0);
    ck_assert_int_eq(count_entries(out), 2);
    bosch_selection_free(s);
}
END_TEST

START_TEST(hf_dir_errors)
{
    char model[4096];
    snprintf(model, sizeof model, "%s", make_model_dir("model-c"));
    bosch_selection *s = make(4, 2, 4, "00110011");
    const char *out = scratch_path("served-c");
    ck_assert_int_eq(bosch_selection_export_hf_dir(NULL, model, out, 0, NULL, NULL),
                     BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_export_hf_dir(s, NULL, out, 0, NULL, NULL), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_export_hf_dir(s, model, "", 0, NULL, NULL), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_export_hf_dir(s, model, out, 4, NULL, NULL), BOSCH_E_INVALID);
    ck_assert_ptr_nonnull(strstr(bosch_selection_last_error(s), "unknown flags"));
    /* The model's own directory: refused before its config is touched. */
    char *before = scratch_read_text(scratch_path("model-c/config.json"));
    ck_assert_int_eq(bosch_selection_export_hf_dir(s, model, model, 0, NULL, NULL),
                     BOSCH_E_INVALID);
    ck_assert_ptr_nonnull(strstr(bosch_selection_last_error(s), "model directory itself"));
    char *after = scratch_read_text(scratch_path("model-c/config.json"));
    ck_assert_str_eq(before, after);
    free(before);
    free(after);
    /* No model there; a head-level selection (project it first). */
    ck_assert_int_eq(bosch_selection_export_hf_dir(s, scratch_path("no-model"), out, 0, NULL,
                                                   NULL), BOSCH_E_IO);
    bosch_selection *head = make(4, 2, 4, "00110010");
    ck_assert_int_eq(bosch_selection_export_hf_dir(head, model, out, 0, NULL, NULL),
                     BOSCH_E_INVALID);
    bosch_selection_free(head);
    bosch_selection_free(s);
}
END_TEST

/* A window not below the config's max_position_embeddings slides over
 * nothing: refused, naming both; a mask with no sliding layer exports. */
START_TEST(hf_window_within_positions)
{
    const char *src = scratch_path("short-src.json");
    scratch_write_text(src, "{\"model_type\": \"qwen3\", \"num_hidden_layers\": 4, "
                            "\"num_key_value_heads\": 2, \"max_position_embeddings\": 128}");
    bosch_selection *s = make(4, 2, 4, "00110011");
    ck_assert_int_eq(bosch_selection_export_hf(s, src, scratch_path("short.json")),
                     BOSCH_E_INVALID);
    ck_assert_ptr_nonnull(strstr(bosch_selection_last_error(s),
                                 "the window 128 does not slide within max_position_embeddings "
                                 "128 ("));
    ck_assert_int_eq(access(scratch_path("short.json"), F_OK), -1);
    bosch_selection *full = make(4, 2, 4, "00000000");
    ck_assert_int_eq(bosch_selection_export_hf(full, src, scratch_path("short.json")), BOSCH_OK);
    scratch_write_text(src, "{\"model_type\": \"qwen3\", \"num_hidden_layers\": 4, "
                            "\"max_position_embeddings\": 129}");
    ck_assert_int_eq(bosch_selection_export_hf(s, src, scratch_path("short.json")), BOSCH_OK);
    bosch_selection_free(full);
    bosch_selection_free(s);
}
END_TEST

/* The entries of `dir` (hidden ones too; not . and .., whose times change
 * with any temporary), sorted, with their inode, size and modification
 * time: equal listings mean nothing was added, removed or replaced. */
static int not_dots(const struct dirent *e)
{
    return strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
}

static char *listing(const char *dir)
{
    struct dirent **names;
    int n = scandir(dir, &names, not_dots, alphasort);
    ck_assert_int_ge(n, 0);
    size_t cap = 64 + (size_t)n * 360, used = 0;
    char *out = malloc(cap);
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        char p[4096];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", dir, names[i]->d_name);
        ck_assert_int_eq(lstat(p, &st), 0);
        used += (size_t)snprintf(out + used, cap - used, "%.255s %llu %lld %lld.%09ld\n",
                                 names[i]->d_name, (unsigned long long)st.st_ino,
                                 (long long)st.st_size, (long long)st.st_mtim.tv_sec,
                                 st.st_mtim.tv_nsec);
        free(names[i]);
    }
    free(names);
    return out;
}

/* Writes fail as on a full disk while the file size limit is 0. */
static struct rlimit saved_fsize;
static void limit_writes(void)
{
    signal(SIGXFSZ, SIG_IGN);
    ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &saved_fsize), 0);
    struct rlimit r = saved_fsize;
    r.rlim_cur = 0;
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &r), 0);
}

static void unlimit_writes(void)
{
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &saved_fsize), 0);
}

/* A failed export, in any format and at any step, leaves no directory it
 * made and an earlier export as it was: refusals before writing, writes
 * that fail (a full disk), a link that cannot be made after the two files
 * were written. */
START_TEST(failed_exports_leave_nothing)
{
    char model[4096], p[4400];
    snprintf(model, sizeof model, "%s", make_model_dir("model-f"));
    bosch_selection *s = make(4, 2, 4, "00110011");
    char hf[4096], duo[4096]; /* scratch_path's buffers rotate */
    snprintf(hf, sizeof hf, "%s", scratch_path("kept-hf"));
    snprintf(duo, sizeof duo, "%s", scratch_path("kept-duo"));
    ck_assert_int_eq(bosch_selection_export_hf_dir(s, model, hf, 0, NULL, NULL), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_export_duo(s, duo), BOSCH_OK);
    char *hf_before = listing(hf), *duo_before = listing(duo);
    size_t linked = 9, kept = 9;
    limit_writes();
    ck_assert_int_eq(bosch_selection_export_duo(s, scratch_path("new-duo")), BOSCH_E_IO);
    ck_assert_int_eq(errno, EFBIG);
    ck_assert_int_eq(bosch_selection_export_duo(s, duo), BOSCH_E_IO);
    ck_assert_int_eq(bosch_selection_export_hf_dir(s, model, scratch_path("new-hf"), 0, &linked,
                                                   &kept),
                     BOSCH_E_IO);
    ck_assert_int_eq(errno, EFBIG);
    ck_assert_uint_eq(linked + kept, 0);
    ck_assert_int_eq(bosch_selection_export_hf_dir(s, model, hf, 0, NULL, NULL), BOSCH_E_IO);
    ck_assert_int_eq(bosch_selection_export_trtllm(s, NULL, 4096, scratch_path("new.yaml")),
                     BOSCH_E_IO);
    unlimit_writes();
    /* A model file whose link's temporary name (".NAME.link") is too long. */
    char name[251];
    memset(name, 'w', 250);
    name[250] = '\0';
    snprintf(p, sizeof p, "%s/%s", model, name);
    scratch_write_text(p, "w");
    ck_assert_int_eq(bosch_selection_export_hf_dir(s, model, scratch_path("new-hf"), 0, NULL,
                                                   NULL),
                     BOSCH_E_IO);
    ck_assert_int_eq(errno, ENAMETOOLONG);
    ck_assert_int_eq(bosch_selection_export_hf_dir(s, model, hf, 0, NULL, NULL), BOSCH_E_IO);
    ck_assert_int_eq(unlink(p), 0);
    /* Refused before anything is made: another shape, a head-level mask. */
    bosch_selection *other = make(2, 2, 4, "0011"), *head = make(4, 2, 4, "00110010");
    ck_assert_int_eq(bosch_selection_export_hf_dir(other, model, scratch_path("new-hf"), 0, NULL,
                                                   NULL),
                     BOSCH_E_MISMATCH);
    ck_assert_int_eq(bosch_selection_export_hf_dir(head, model, scratch_path("new-hf"), 0, NULL,
                                                   NULL),
                     BOSCH_E_INVALID);
    bosch_selection_free(other);
    bosch_selection_free(head);
    const char *gone[] = {"new-duo", "new-hf", "new.yaml"};
    for (size_t i = 0; i < sizeof gone / sizeof gone[0]; i++)
        ck_assert_msg(access(scratch_path(gone[i]), F_OK) == -1, "%s left", gone[i]);
    char *hf_after = listing(hf), *duo_after = listing(duo);
    ck_assert_str_eq(hf_after, hf_before);
    ck_assert_str_eq(duo_after, duo_before);
    free(hf_before);
    free(hf_after);
    free(duo_before);
    free(duo_after);
    bosch_selection_free(s);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* TensorRT-LLM                                                              */
/* ------------------------------------------------------------------------ */
/* The line "  max_attention_window: [...]" of a written file. */
static char *window_line(const char *path)
{
    char *text = scratch_read_text(path);
    const char *at = strstr(text, "kv_cache_config:\n  max_attention_window: [");
    ck_assert_msg(at != NULL, "no max_attention_window in:\n%s", text);
    const char *end = strchr(at, ']');
    ck_assert_ptr_nonnull(end);
    ck_assert_str_eq(end, "]\n"); /* the last line */
    char *line = strndup(at + strlen("kv_cache_config:\n"), (size_t)(end + 1 - at) -
                                                                strlen("kv_cache_config:\n"));
    free(text);
    return line;
}

START_TEST(trtllm_windows)
{
    /* Layers 1 and 3 slide, window 128: 128 there, max_seq_len elsewhere. */
    bosch_selection *s = make(4, 2, 4, "00110011");
    ck_assert_int_eq(bosch_selection_export_trtllm(s, NULL, 4096, scratch_path("t.yaml")),
                     BOSCH_OK);
    char *line = window_line(scratch_path("t.yaml"));
    ck_assert_str_eq(line, "  max_attention_window: [4096, 128, 4096, 128]");
    free(line);
    char *text = scratch_read_text(scratch_path("t.yaml"));
    ck_assert_ptr_nonnull(strstr(text, "# TensorRT-LLM per-layer attention windows"));
    ck_assert_ptr_nonnull(strstr(text, "2 of 4 layers slide"));
    free(text);
    /* max_seq_len from the model's config.json. */
    scratch_write_text(scratch_path("cfg.json"),
                       "{\"model_type\": \"qwen3\", \"num_hidden_layers\": 4, "
                       "\"max_position_embeddings\": 40960}");
    ck_assert_int_eq(bosch_selection_export_trtllm(s, scratch_path("cfg.json"), 0,
                                                   scratch_path("t.yaml")),
                     BOSCH_OK);
    line = window_line(scratch_path("t.yaml"));
    ck_assert_str_eq(line, "  max_attention_window: [40960, 128, 40960, 128]");
    free(line);
    /* A window of max_seq_len or more would slide over nothing: refused,
     * naming both, the file left as it was; one position more slides. */
    char *before = scratch_read_text(scratch_path("t.yaml"));
    for (uint64_t len = 100; len <= 128; len += 28) {
        ck_assert_int_eq(bosch_selection_export_trtllm(s, NULL, len, scratch_path("t.yaml")),
                         BOSCH_E_INVALID);
        char want[96];
        snprintf(want, sizeof want, "the window 128 does not slide within max_seq_len %llu:",
                 (unsigned long long)len);
        ck_assert_ptr_nonnull(strstr(bosch_selection_last_error(s), want));
    }
    ck_assert_ptr_nonnull(strstr(bosch_selection_last_error(s), "the 2 sliding layers"));
    text = scratch_read_text(scratch_path("t.yaml"));
    ck_assert_str_eq(text, before);
    free(text);
    free(before);
    ck_assert_int_eq(bosch_selection_export_trtllm(s, NULL, 129, scratch_path("t.yaml")),
                     BOSCH_OK);
    line = window_line(scratch_path("t.yaml"));
    ck_assert_str_eq(line, "  max_attention_window: [129, 128, 129, 128]");
    free(line);
    /* From the config: its max_position_embeddings, named with the file. */
    scratch_write_text(scratch_path("cfg-short.json"),
                       "{\"model_type\": \"qwen3\", \"num_hidden_layers\": 4, "
                       "\"max_position_embeddings\": 64}");
    ck_assert_int_eq(bosch_selection_export_trtllm(s, scratch_path("cfg-short.json"), 0,
                                                   scratch_path("t.yaml")),
                     BOSCH_E_INVALID);
    ck_assert_ptr_nonnull(strstr(bosch_selection_last_error(s),
                                 "does not slide within max_position_embeddings 64 ("));
    ck_assert_ptr_nonnull(strstr(bosch_selection_last_error(s), "cfg-short.json)"));
    /* All full and all sliding. */
    bosch_selection *full = make(2, 1, 2, "00"), *all = make(2, 1, 2, "11");
    ck_assert_int_eq(bosch_selection_export_trtllm(full, NULL, 8192, scratch_path("f.yaml")),
                     BOSCH_OK);
    line = window_line(scratch_path("f.yaml"));
    ck_assert_str_eq(line, "  max_attention_window: [8192, 8192]");
    free(line);
    /* Nothing slides: no window to fit. */
    ck_assert_int_eq(bosch_selection_export_trtllm(full, NULL, 64, scratch_path("f.yaml")),
                     BOSCH_OK);
    ck_assert_int_eq(bosch_selection_export_trtllm(all, NULL, 8192, scratch_path("f.yaml")),
                     BOSCH_OK);
    line = window_line(scratch_path("f.yaml"));
    ck_assert_str_eq(line, "  max_attention_window: [128, 128]");
    free(line);
    bosch_selection_free(full);
    bosch_selection_free(all);
    bosch_selection_free(s);
}
END_TEST

START_TEST(trtllm_errors)
{
    bosch_selection *s = make(4, 2, 4, "00110011");
    char out[4096]; /* scratch_path's buffers rotate */
    snprintf(out, sizeof out, "%s", scratch_path("e.yaml"));
    ck_assert_int_eq(bosch_selection_export_trtllm(NULL, NULL, 10, out), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_export_trtllm(s, NULL, 10, NULL), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_export_trtllm(s, NULL, 0, out), BOSCH_E_INVALID);
    ck_assert_ptr_nonnull(strstr(bosch_selection_last_error(s), "max_seq_len"));
    ck_assert_int_eq(bosch_selection_export_trtllm(s, NULL, (uint64_t)1 << 31, out),
                     BOSCH_E_INVALID);
    /* Head-level: export the projection. */
    bosch_selection *head = make(4, 2, 4, "01110011");
    ck_assert_int_eq(bosch_selection_export_trtllm(head, NULL, 4096, out), BOSCH_E_INVALID);
    ck_assert_ptr_nonnull(strstr(bosch_selection_last_error(head), "head-level"));
    bosch_selection_free(head);
    /* No KV record. */
    bosch_selection *bare = bosch_selection_create(4, 2, 4);
    ck_assert_int_eq(bosch_selection_export_trtllm(bare, NULL, 4096, out), BOSCH_E_INVALID);
    ck_assert_ptr_nonnull(strstr(bosch_selection_last_error(bare), "kv_saving"));
    bosch_selection_free(bare);
    /* A config without a usable max_position_embeddings; a missing one. */
    scratch_write_text(scratch_path("nomax.json"),
                       "{\"model_type\": \"qwen3\", \"num_hidden_layers\": 4, "
                       "\"max_position_embeddings\": \"long\"}");
    ck_assert_int_eq(bosch_selection_export_trtllm(s, scratch_path("nomax.json"), 0, out),
                     BOSCH_E_CORRUPT);
    ck_assert_ptr_nonnull(strstr(bosch_selection_last_error(s), "max_position_embeddings"));
    scratch_write_text(scratch_path("notjson.json"), "[1, 2]");
    ck_assert_int_eq(bosch_selection_export_trtllm(s, scratch_path("notjson.json"), 0, out),
                     BOSCH_E_CORRUPT);
    ck_assert_int_eq(bosch_selection_export_trtllm(s, scratch_path("missing.json"), 0, out),
                     BOSCH_E_IO);
    /* A config of another model, also when max_seq_len is given: refused
     * naming both shapes. */
    scratch_write_text(scratch_path("other.json"),
                       "{\"num_hidden_layers\": 8, \"num_key_value_heads\": 2, "
                       "\"max_position_embeddings\": 4096}");
    for (uint64_t len = 0; len <= 4096; len += 4096) {
        ck_assert_int_eq(bosch_selection_export_trtllm(s, scratch_path("other.json"), len, out),
                         BOSCH_E_MISMATCH);
        ck_assert_ptr_nonnull(strstr(bosch_selection_last_error(s),
                                     "other.json describes a model of 8 layers x 2 KV heads (? "
                                     "query heads), the selection one of 4 layers x 2 KV heads "
                                     "(8 query heads): num_hidden_layers differs"));
    }
    scratch_write_text(scratch_path("nolayers.json"), "{\"max_position_embeddings\": 4096}");
    ck_assert_int_eq(bosch_selection_export_trtllm(s, scratch_path("nolayers.json"), 0, out),
                     BOSCH_E_CORRUPT);
    ck_assert_ptr_nonnull(strstr(bosch_selection_last_error(s), "no \"num_hidden_layers\""));
    ck_assert_int_eq(access(out, F_OK), -1); /* nothing written by any of them */
    ck_assert_int_eq(bosch_selection_export_trtllm(s, NULL, 4096, scratch_path("no/dir/e.yaml")),
                     BOSCH_E_IO);
    bosch_selection_free(s);
}
END_TEST

static Suite *export_suite(void)
{
    Suite *s = suite_create("export");
    TCase *tc = tcase_new(s, "layers");
    tcase_add_unchecked_fixture(tc, setup, NULL);
    tcase_add_test(tc, layer_level_predicate);
    tcase_add_test(tc, projection_choice);
    tcase_add_test(tc, projection_rounding);
    tcase_add_test(tc, projection_fields);
    tc = tcase_new(s, "duo");
    tcase_add_unchecked_fixture(tc, setup, NULL);
    tcase_add_test(tc, duo_shapes);
    tcase_add_test(tc, duo_replaces);
    tcase_add_test(tc, duo_errors);
    tc = tcase_new(s, "hf");
    tcase_add_unchecked_fixture(tc, setup, NULL);
    tcase_add_test(tc, hf_config);
    tcase_add_test(tc, hf_projection_exported);
    tcase_add_test(tc, hf_moe_all_or_none);
    tcase_add_loop_test(tc, hf_bad_source, 0, (int)(sizeof bad_sources / sizeof bad_sources[0]));
    tcase_add_test(tc, hf_errors);
    tcase_add_test(tc, hf_dir_links_the_model);
    tcase_add_test(tc, hf_dir_errors);
    tcase_add_test(tc, hf_window_within_positions);
    tcase_add_test(tc, failed_exports_leave_nothing);
    tc = tcase_new(s, "trtllm");
    tcase_add_unchecked_fixture(tc, setup, NULL);
    tcase_add_test(tc, trtllm_windows);
    tcase_add_test(tc, trtllm_errors);
    return s;
}

/* Removes the test directory and everything under it (two levels). */
static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char p[640];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            remove_tree(p);
        else
            unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

int main(void)
{
    int rc = run_suite(export_suite());
    remove_tree(scratch_dir());
    return rc;
}
