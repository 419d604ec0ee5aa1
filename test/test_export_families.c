/*
 * The exports that read a model's config.json, per model family
 * (docs/export.md, "Families"): the family told by architectures and
 * model_type, the Hugging Face config each family's transformers 5 config
 * can express (Qwen3 and Qwen2 per layer, Mistral all or none, Llama none)
 * and the refusals of the rest (their cause named, nothing written),
 * TensorRT-LLM's windows for every family. The config.json fixtures
 * (test/export/configs, directory in $BOSCH_EXPORT_CONFIGS) were written
 * by transformers 5.25's to_json_file; test/export/families.py reads the
 * exports with transformers itself.
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include <errno.h>
#include <ftw.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/scratch.h"
#include "support/support.h"

static void setup(void)
{
    scratch_setup("bosch-export-families");
}

/* A selection of 4 layers x 2 KV heads x 4 (the fixtures' shape) with mask
 * `bits` ('1' = SWA), window 128, sink 0. */
static bosch_selection *make(const char *bits)
{
    bosch_selection *s = bosch_selection_create(4, 2, 4);
    ck_assert_ptr_nonnull(s);
    uint8_t m[8];
    ck_assert_uint_eq(strlen(bits), 8);
    for (size_t u = 0; u < 8; u++)
        m[u] = bits[u] == '1';
    ck_assert_int_eq(bosch_selection_set_mask(s, m, 8), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_set_kv_saving(s, 1024, 128, 0), BOSCH_OK);
    return s;
}

/* The fixture test/export/configs/NAME.json. */
static const char *fixture(const char *name)
{
    static char path[4096];
    const char *dir = getenv("BOSCH_EXPORT_CONFIGS");
    ck_assert_msg(dir && *dir, "BOSCH_EXPORT_CONFIGS is not set");
    snprintf(path, sizeof path, "%s/%s.json", dir, name);
    ck_assert_int_eq(access(path, R_OK), 0);
    return path;
}

static json_object *read_json(const char *path)
{
    json_object *o = json_object_from_file(path);
    ck_assert_msg(o != NULL, "cannot parse %s", path);
    return o;
}

/* Every member of `src` but the `changed` ones is in `out` with its value. */
static void expect_kept(json_object *src, json_object *out, const char *const *changed)
{
    json_object_object_foreach(src, key, val) {
        int skip = 0;
        for (const char *const *c = changed; *c; c++)
            skip |= !strcmp(*c, key);
        json_object *v;
        ck_assert_msg(json_object_object_get_ex(out, key, &v), "member %s dropped", key);
        if (!skip)
            ck_assert_msg(json_object_equal(val, v), "member %s changed", key);
    }
}

/* Exports fixture `name` with mask `bits`; the parsed output (NULL when the
 * export failed with `code`, the message holding `why`, nothing written). */
static json_object *export_hf(const char *name, const char *bits, int code, const char *why)
{
    bosch_selection *s = make(bits);
    const char *out = scratch_path("out.json");
    unlink(out);
    int rc = bosch_selection_export_hf(s, fixture(name), out);
    ck_assert_msg(rc == code, "%s %s: status %d, expected %d (%s)", name, bits, rc, code,
                  bosch_selection_last_error(s));
    if (why)
        ck_assert_msg(strstr(bosch_selection_last_error(s), why) != NULL,
                      "%s %s: '%s' lacks '%s'", name, bits, bosch_selection_last_error(s), why);
    bosch_selection_free(s);
    if (rc) {
        ck_assert_int_eq(access(out, F_OK), -1);
        return NULL;
    }
    return read_json(out);
}

static void expect_layer_types(json_object *c, const char *l0, const char *l1, const char *l2,
                               const char *l3)
{
    const char *want[4] = {l0, l1, l2, l3};
    json_object *v;
    ck_assert(json_object_object_get_ex(c, "layer_types", &v));
    ck_assert_uint_eq(json_object_array_length(v), 4);
    for (size_t l = 0; l < 4; l++)
        ck_assert_str_eq(json_object_get_string(json_object_array_get_idx(v, l)), want[l]);
}

static int64_t jint(json_object *c, const char *key)
{
    json_object *v;
    ck_assert_msg(json_object_object_get_ex(c, key, &v), "no %s", key);
    ck_assert(json_object_is_type(v, json_type_int));
    return json_object_get_int64(v);
}

#define FULL "full_attention"
#define SWA "sliding_attention"

static const char *const window_members[] = {"use_sliding_window", "sliding_window",
                                             "max_window_layers", "layer_types", NULL};

/* Qwen2 and Qwen3: per layer, the four members set; a config's own sliding
 * layers (qwen2_sliding: layers 2 and 3, window 64) give way to the mask's. */
START_TEST(per_layer_families)
{
    const char *names[] = {"qwen3", "qwen2", "qwen2_sliding"};
    for (size_t i = 0; i < 3; i++) {
        json_object *src = read_json(fixture(names[i]));
        json_object *c = export_hf(names[i], "11000011", BOSCH_OK, NULL);
        expect_kept(src, c, window_members);
        expect_layer_types(c, SWA, FULL, FULL, SWA);
        json_object *v;
        ck_assert(json_object_object_get_ex(c, "use_sliding_window", &v));
        ck_assert(json_object_get_boolean(v));
        ck_assert_int_eq(jint(c, "sliding_window"), 128);
        ck_assert_int_eq(jint(c, "max_window_layers"), 0);
        json_object_put(c);
        c = export_hf(names[i], "00000000", BOSCH_OK, NULL);
        expect_layer_types(c, FULL, FULL, FULL, FULL);
        json_object_put(c);
        json_object_put(src);
    }
}
END_TEST

/* Mistral: one sliding_window for every layer: the window when all slide,
 * null when none does (also over a config's own window); else refused. */
START_TEST(mistral_all_or_none)
{
    const char *changed[] = {"sliding_window", NULL};
    const char *names[] = {"mistral", "mistral_sliding"};
    for (size_t i = 0; i < 2; i++) {
        json_object *src = read_json(fixture(names[i]));
        json_object *c = export_hf(names[i], "11111111", BOSCH_OK, NULL);
        expect_kept(src, c, changed);
        ck_assert_int_eq(jint(c, "sliding_window"), 128);
        ck_assert(!json_object_object_get_ex(c, "layer_types", NULL));
        ck_assert(!json_object_object_get_ex(c, "use_sliding_window", NULL));
        json_object_put(c);
        c = export_hf(names[i], "00000000", BOSCH_OK, NULL);
        expect_kept(src, c, changed);
        json_object *v;
        ck_assert(json_object_object_get_ex(c, "sliding_window", &v) && v == NULL);
        json_object_put(c);
        json_object_put(src);
        const char *why[] = {"is a MistralForCausalLM config",
                             "one sliding_window applies to every layer",
                             "all layers or none", "the selection slides 1 of 4 layers",
                             "--format trtllm|duo", "bosch.hf.apply"};
        for (size_t k = 0; k < sizeof why / sizeof why[0]; k++)
            ck_assert_ptr_null(export_hf(names[i], "00110000", BOSCH_E_INVALID, why[k]));
    }
}
END_TEST

/* Llama: no sliding window in LlamaConfig: a mask with a sliding layer is
 * refused; one without exports the config as it was. */
START_TEST(llama_none)
{
    json_object *src = read_json(fixture("llama"));
    json_object *c = export_hf("llama", "00000000", BOSCH_OK, NULL);
    ck_assert(json_object_equal(src, c));
    json_object_put(c);
    json_object_put(src);
    const char *masks[] = {"00000011", "11111111"};
    for (size_t i = 0; i < 2; i++) {
        const char *why[] = {"is a LlamaForCausalLM config", "LlamaConfig has no sliding window",
                             "transformers' Llama attends to every key", "--format trtllm|duo",
                             "bosch.hf.apply"};
        for (size_t k = 0; k < sizeof why / sizeof why[0]; k++)
            ck_assert_ptr_null(export_hf("llama", masks[i], BOSCH_E_INVALID, why[k]));
    }
}
END_TEST

/* The model directory of fixture `name` (config.json and a weights file). */
static const char *model_dir(const char *name)
{
    static char dir[4096];
    snprintf(dir, sizeof dir, "%s", scratch_path(name));
    mkdir(dir, 0777);
    char path[4200];
    snprintf(path, sizeof path, "%s/config.json", dir);
    char *text = scratch_read_text(fixture(name));
    scratch_write_text(path, text);
    free(text);
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    scratch_write_text(path, "w");
    return dir;
}

/* A refused directory export makes no directory and leaves an earlier one
 * as it was. */
START_TEST(refused_dir_leaves_nothing)
{
    const char *names[] = {"llama", "mistral"};
    for (size_t i = 0; i < 2; i++) {
        char model[4096], out[4096], p[4200];
        snprintf(model, sizeof model, "%s", model_dir(names[i]));
        snprintf(p, sizeof p, "served-%s", names[i]);
        snprintf(out, sizeof out, "%s", scratch_path(p));
        bosch_selection *part = make("00110011"), *none = make("00000000");
        ck_assert_int_eq(bosch_selection_export_hf_dir(part, model, out, 0, NULL, NULL),
                         BOSCH_E_INVALID);
        ck_assert_int_eq(access(out, F_OK), -1);
        ck_assert_int_eq(bosch_selection_export_hf_dir(none, model, out, 0, NULL, NULL),
                         BOSCH_OK);
        snprintf(p, sizeof p, "%s/config.json", out);
        char *before = scratch_read_text(p);
        ck_assert_int_eq(bosch_selection_export_hf_dir(part, model, out, 0, NULL, NULL),
                         BOSCH_E_INVALID);
        char *after = scratch_read_text(p);
        ck_assert_str_eq(before, after);
        free(before);
        free(after);
        bosch_selection *back = bosch_selection_read_json(strcat(strcpy(p, out),
                                                                 "/bosch-mask.json"));
        ck_assert_ptr_nonnull(back);
        ck_assert_uint_eq(bosch_selection_swa_units(back), 0); /* the earlier export's */
        bosch_selection_free(back);
        bosch_selection_free(part);
        bosch_selection_free(none);
    }
}
END_TEST

/* The line of max_attention_window in `path`. */
static void expect_windows(const char *path, const char *want)
{
    char *text = scratch_read_text(path);
    const char *line = strstr(text, "  max_attention_window: ");
    ck_assert_ptr_nonnull(line);
    const char *end = strchr(line, '\n');
    ck_assert_int_eq(strncmp(line, want, (size_t)(end - line)), 0);
    ck_assert_uint_eq(strlen(want), (size_t)(end - line));
    free(text);
}

/* TensorRT-LLM takes a window per layer from the file for every family; a
 * config's own sliding layers or window give way to the mask's. */
START_TEST(trtllm_every_family)
{
    const char *names[] = {"qwen3", "qwen3_moe", "qwen2", "qwen2_sliding", "mistral",
                           "mistral_sliding", "llama"};
    bosch_selection *s = make("00110011");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *out = scratch_path("t.yaml");
        ck_assert_msg(bosch_selection_export_trtllm(s, fixture(names[i]), 0, out) == BOSCH_OK,
                      "%s: %s", names[i], bosch_selection_last_error(s));
        expect_windows(out, "  max_attention_window: [4096, 128, 4096, 128]");
    }
    bosch_selection_free(s);
}
END_TEST

/* The family: architectures (each entry the same known one) and
 * model_type, either alone, agreeing; refused by name otherwise, by both
 * exports, nothing written. */
static const struct {
    const char *members; /* after "num_hidden_layers": 4, */
    int code;
    const char *why; /* NULL: exported */
} families[] = {
    {"\"architectures\": [\"GPT2LMHeadModel\"]", BOSCH_E_INVALID,
     "architecture GPT2LMHeadModel is not one the export knows (supported: Qwen3ForCausalLM, "
     "Qwen3MoeForCausalLM, Qwen2ForCausalLM, MistralForCausalLM, LlamaForCausalLM)"},
    {"\"model_type\": \"gpt2\"", BOSCH_E_INVALID, "model_type gpt2 is not one the export knows"},
    {"\"max_position_embeddings\": 4096", BOSCH_E_INVALID,
     "no \"architectures\" or \"model_type\" to tell the model family by (supported: "},
    {"\"architectures\": \"Qwen2ForCausalLM\"", BOSCH_E_CORRUPT,
     "\"architectures\" is not an array of names"},
    {"\"architectures\": [7]", BOSCH_E_CORRUPT, "\"architectures\" is not an array of names"},
    {"\"model_type\": 7", BOSCH_E_CORRUPT, "\"model_type\" is not a string"},
    {"\"architectures\": [\"Qwen2ForCausalLM\", \"LlamaForCausalLM\"]", BOSCH_E_INVALID,
     "\"architectures\" names both Qwen2ForCausalLM and LlamaForCausalLM"},
    {"\"architectures\": [\"Qwen2ForCausalLM\"], \"model_type\": \"llama\"", BOSCH_E_INVALID,
     "architecture Qwen2ForCausalLM but model_type llama (Qwen2ForCausalLM's is qwen2)"},
    {"\"architectures\": [\"Qwen2ForCausalLM\"], \"model_type\": \"qwen9\"", BOSCH_E_INVALID,
     "but model_type qwen9"},
    {"\"architectures\": [\"Qwen2ForCausalLM\", \"Qwen2ForCausalLM\"]", BOSCH_OK, NULL},
    {"\"architectures\": null, \"model_type\": \"qwen2\"", BOSCH_OK, NULL},
    {"\"architectures\": [], \"model_type\": \"qwen3\"", BOSCH_OK, NULL},
    {"\"architectures\": [\"Qwen3ForCausalLM\"]", BOSCH_OK, NULL},
    {"\"model_type\": \"llama\"", BOSCH_E_INVALID, "is a LlamaForCausalLM config"},
    {"\"model_type\": \"mistral\"", BOSCH_E_INVALID, "is a MistralForCausalLM config"},
};

START_TEST(family_detection)
{
    char text[512];
    snprintf(text, sizeof text, "{\"num_hidden_layers\": 4, %s}", families[_i].members);
    const char *src = scratch_path("family.json");
    scratch_write_text(src, text);
    bosch_selection *s = make("00110011");
    char out[4096];
    snprintf(out, sizeof out, "%s", scratch_path("family-out"));
    int rc = bosch_selection_export_hf(s, src, out);
    ck_assert_msg(rc == families[_i].code, "%s: hf status %d (%s)", text, rc,
                  bosch_selection_last_error(s));
    if (families[_i].why)
        ck_assert_msg(strstr(bosch_selection_last_error(s), families[_i].why) != NULL,
                      "'%s' lacks '%s'", bosch_selection_last_error(s), families[_i].why);
    ck_assert_int_eq(access(out, F_OK), rc ? -1 : 0);
    unlink(out);
    /* trtllm knows the same families and serves every one of them. */
    const int is_known = families[_i].code == BOSCH_OK || strstr(families[_i].why, " config");
    rc = bosch_selection_export_trtllm(s, src, 4096, out);
    ck_assert_msg(rc == (is_known ? BOSCH_OK : families[_i].code), "%s: trtllm status %d (%s)",
                  text, rc, bosch_selection_last_error(s));
    if (!is_known)
        ck_assert_ptr_nonnull(strstr(bosch_selection_last_error(s), families[_i].why));
    ck_assert_int_eq(access(out, F_OK), rc ? -1 : 0);
    unlink(out);
    bosch_selection_free(s);
}
END_TEST

static Suite *families_suite(void)
{
    Suite *s = suite_create("export-families");
    TCase *tc = tcase_new(s, "hf");
    tcase_add_unchecked_fixture(tc, setup, NULL);
    tcase_add_test(tc, per_layer_families);
    tcase_add_test(tc, mistral_all_or_none);
    tcase_add_test(tc, llama_none);
    tcase_add_test(tc, refused_dir_leaves_nothing);
    tc = tcase_new(s, "family");
    tcase_add_unchecked_fixture(tc, setup, NULL);
    tcase_add_loop_test(tc, family_detection, 0, (int)(sizeof families / sizeof families[0]));
    tcase_add_test(tc, trtllm_every_family);
    return s;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path) != 0;
}

int main(void)
{
    int rc = run_suite(families_suite());
    if (*scratch_dir()) /* the scratch directory, links not followed */
        nftw(scratch_dir(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    return rc;
}
