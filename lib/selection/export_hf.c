/* bosch_selection_export_hf: a Hugging Face config.json with a sliding
 * window on the SWA layers of a layer-level selection, in the members the
 * model's family reads (docs/export.md, "Families"): Qwen3 and Qwen2
 * per layer (use_sliding_window / sliding_window / layer_types /
 * max_window_layers), Qwen3-MoE and Mistral all layers or none, Llama none.
 * Every other member of the source config is kept as it was, in its
 * place; a selection the family's config cannot express is refused. */
#include "bosch/bosch.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "selection/selection_impl.h"
#include "util/json_dup.h"
#include "util/read_file.h"

/* "key": value, one member a line, as Hugging Face writes its configs. */
#define JSON_FLAGS \
    (JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE)

#define FN "bosch_selection_export_hf"
#define MAX_CONFIG_BYTES ((size_t)64 << 20) /* a config.json is a few KiB */

/* The whole file, NUL-terminated, in *out; a status after sel_fail. */
static int read_file(const bosch_selection *s, const char *path, const char *fn, char **out,
                     size_t *len)
{
    int err = util_read_file(path, MAX_CONFIG_BYTES, out, len);
    if (err == ENOMEM)
        return sel_fail(s, BOSCH_E_NOMEM, "%s: out of memory", fn);
    if (err == EFBIG)
        return sel_fail(s, BOSCH_E_CORRUPT, "%s: %s: larger than %zu bytes (not a config.json)",
                        fn, path, MAX_CONFIG_BYTES);
    if (err)
        return sel_io_fail(s, err, fn, "read", path);
    return BOSCH_OK;
}

int sel_read_config(const bosch_selection *s, const char *path, const char *fn,
                    json_object **out)
{
    size_t len = 0;
    char *text = NULL;
    int rc = read_file(s, path, fn, &text, &len);
    if (rc)
        return rc;
    json_tokener *tok = json_tokener_new();
    json_object *root = tok && len < INT32_MAX ? json_tokener_parse_ex(tok, text, (int)len) : NULL;
    int ok = tok && root && json_tokener_get_error(tok) == json_tokener_success;
    if (ok) /* nothing but white space after the object */
        for (size_t i = json_tokener_get_parse_end(tok); i < len; i++)
            ok &= text[i] == ' ' || text[i] == '\n' || text[i] == '\r' || text[i] == '\t';
    json_tokener_free(tok);
    /* json-c kept the last of a key given twice; the export would drop the other. */
    struct util_json_dup dup;
    int twice = ok ? util_json_dup_find(text, len, &dup) : 0;
    free(text);
    if (!tok || twice < 0) {
        json_object_put(root);
        return sel_fail(s, BOSCH_E_NOMEM, "%s: out of memory", fn);
    }
    if (twice) {
        json_object_put(root);
        char what[160];
        util_json_dup_describe(&dup, what, sizeof what);
        return sel_fail(s, BOSCH_E_CORRUPT, "%s: %s: line %d: %s (give each key once)", fn, path,
                        dup.line, what);
    }
    if (!ok || !json_object_is_type(root, json_type_object)) {
        json_object_put(root);
        return sel_fail(s, BOSCH_E_CORRUPT, "%s: %s: not a JSON object (malformed config.json)",
                        fn, path);
    }
    *out = root;
    return BOSCH_OK;
}

/* The four members Qwen3Config and Qwen2Config read for per-layer windows
 * (use_sliding_window false only for a Qwen3-MoE config of no sliding
 * layer: there it says whether every layer slides). */
static int set_window_members(const bosch_selection *s, json_object *cfg, int use_sliding_window)
{
    json_object *types = json_object_new_array_ext((int)s->layers);
    if (!types)
        return BOSCH_E_NOMEM;
    uint32_t leading_full = s->layers;
    for (uint32_t l = 0; l < s->layers; l++) {
        int swa = s->mask[(size_t)l * s->kv_groups] != 0;
        if (swa && leading_full == s->layers)
            leading_full = l;
        json_object_array_add(types, json_object_new_string(swa ? "sliding_attention"
                                                                : "full_attention"));
    }
    /* json_object_object_add replaces an existing member in place. */
    json_object_object_add(cfg, "use_sliding_window",
                           json_object_new_boolean(use_sliding_window));
    json_object_object_add(cfg, "sliding_window", json_object_new_int64((int64_t)s->kv_window));
    /* Ignored when layer_types is given; a reader that still uses it alone
     * (slide every layer from max_window_layers on) gets the right layers
     * when the sliding layers are a suffix (docs/export.md). */
    json_object_object_add(cfg, "max_window_layers", json_object_new_int64(leading_full));
    json_object_object_add(cfg, "layer_types", types);
    return BOSCH_OK;
}

int sel_check_layer_export(const bosch_selection *s, const char *fn, const char *what)
{
    if (!s->has_kv)
        return sel_fail(s, BOSCH_E_INVALID,
                        "%s: the selection records no KV-saving window (kv_saving), which gives "
                        "%s", fn, what);
    if (s->kv_window == 0 || s->kv_window > INT32_MAX)
        return sel_fail(s, BOSCH_E_INVALID, "%s: the recorded window %llu is not in 1..2^31-1",
                        fn, (unsigned long long)s->kv_window);
    for (uint32_t l = 0; l < s->layers; l++) {
        const uint8_t *row = s->mask + (size_t)l * s->kv_groups;
        if (memchr(row, 0, s->kv_groups) && memchr(row, 1, s->kv_groups))
            return sel_fail(s, BOSCH_E_INVALID,
                            "%s: the selection is head-level (layer %u mixes SWA and full KV "
                            "heads); an engine slides whole layers: export "
                            "bosch_selection_project_layers() of it",
                            fn, l);
    }
    return BOSCH_OK;
}

/* Where a family's config cannot say what the selection slides: the
 * reason, or NULL when it can (docs/export.md, "Families"). */
static const char *inexpressible(const struct sel_family *fam, uint32_t sliding, uint32_t layers)
{
    const int some = sliding > 0 && sliding < layers;
    switch (fam->hf) {
    case SEL_HF_USE_SLIDING_ALL:
        return some ? "whose sliding window is all layers or none in transformers "
                      "(use_sliding_window; layer_types is ignored)"
                    : NULL;
    case SEL_HF_WINDOW_ALL:
        return some ? "whose one sliding_window applies to every layer in transformers "
                      "(MistralConfig has no per-layer windows; layer_types is ignored): a "
                      "config can serve a selection that slides all layers or none"
                    : NULL;
    case SEL_HF_NO_WINDOW:
        return sliding ? "and LlamaConfig has no sliding window: transformers' Llama attends "
                         "to every key whatever a config says, so no config can serve a "
                         "sliding layer"
                       : NULL;
    default:
        return NULL;
    }
}

/* The members the family reads for its windows, set in cfg. */
static int set_family_members(const bosch_selection *s, const struct sel_family *fam,
                              json_object *cfg, uint32_t sliding)
{
    if (fam->hf == SEL_HF_NO_WINDOW) /* no sliding layer: the config as it was */
        return BOSCH_OK;
    if (fam->hf == SEL_HF_WINDOW_ALL) { /* Mistral: a window, or null for none */
        json_object *w = sliding ? json_object_new_int64((int64_t)s->kv_window) : NULL;
        if (sliding && !w)
            return BOSCH_E_NOMEM;
        return json_object_object_add(cfg, "sliding_window", w) ? BOSCH_E_NOMEM : BOSCH_OK;
    }
    return set_window_members(s, cfg, fam->hf == SEL_HF_PER_LAYER || sliding > 0);
}

/* The family's checks and members, after the shape's. */
static int apply_family(const bosch_selection *s, json_object *cfg, const char *source_config,
                        const char *fn)
{
    const struct sel_family *fam;
    int rc = sel_config_family(s, cfg, source_config, fn, &fam);
    if (rc)
        return rc;
    const uint32_t sliding = sel_sliding_layers(s);
    const char *why = inexpressible(fam, sliding, s->layers);
    if (why)
        return sel_fail(s, BOSCH_E_INVALID,
                        "%s: %s is a %s config, %s; the selection slides %u of %u layers: "
                        "serve it with the trtllm or duo export (bosch export --format "
                        "trtllm|duo) or with bosch.hf.apply (Python)",
                        fn, source_config, fam->arch, why, sliding, s->layers);
    if (set_family_members(s, fam, cfg, sliding) != BOSCH_OK)
        return sel_fail(s, BOSCH_E_NOMEM, "%s: out of memory", fn);
    return BOSCH_OK;
}

int sel_hf_config_text(const bosch_selection *s, const char *source_config, const char *fn,
                       char **text)
{
    int rc = sel_check_layer_export(s, fn, "sliding_window");
    if (rc)
        return rc;
    json_object *cfg = NULL;
    if ((rc = sel_read_config(s, source_config, fn, &cfg)))
        return rc;
    rc = sel_check_config_shape(s, cfg, source_config, fn);
    const uint64_t positions = sel_config_max_positions(cfg);
    if (!rc && positions)
        rc = sel_check_window_slides(s, fn, positions, "max_position_embeddings", source_config);
    if (!rc)
        rc = apply_family(s, cfg, source_config, fn);
    const char *json = rc ? NULL : json_object_to_json_string_ext(cfg, JSON_FLAGS);
    size_t n = json ? strlen(json) : 0;
    if (rc == BOSCH_OK && (!json || !(*text = malloc(n + 2))))
        rc = sel_fail(s, BOSCH_E_NOMEM, "%s: out of memory", fn);
    if (rc == BOSCH_OK) {
        memcpy(*text, json, n);
        memcpy(*text + n, "\n", 2);
    }
    json_object_put(cfg);
    return rc;
}

int bosch_selection_export_hf(const bosch_selection *s, const char *source_config,
                              const char *out_config)
{
    if (!s || !source_config || !out_config)
        return sel_fail(s, BOSCH_E_INVALID, FN ": %s is NULL",
                        !s ? "selection" : source_config ? "out_config" : "source_config");
    char *text = NULL;
    int rc = sel_hf_config_text(s, source_config, FN, &text);
    afile t;
    if (rc == BOSCH_OK && (rc = sel_tmp_open(s, &t, out_config, FN)) == BOSCH_OK) {
        fputs(text, t.f);
        rc = sel_tmp_close(s, &t, FN);
        rc = rc ? rc : sel_tmp_commit(s, &t, FN);
        sel_tmp_discard(&t);
    }
    free(text);
    return rc;
}
