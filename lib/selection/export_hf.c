/* bosch_selection_export_hf: a Hugging Face config.json with a sliding
 * window on the SWA layers of a layer-level selection (Qwen3Config's
 * use_sliding_window / sliding_window / layer_types / max_window_layers,
 * docs/export.md). Every other member of the source config is kept as it
 * was, in its place. */
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

/* Qwen3MoeForCausalLM: transformers' Qwen3MoeConfig has no per-layer
 * windows (use_sliding_window slides every layer; layer_types is ignored). */
static int is_moe_config(json_object *cfg)
{
    json_object *v;
    if (json_object_object_get_ex(cfg, "model_type", &v) &&
        json_object_is_type(v, json_type_string) &&
        strcmp(json_object_get_string(v), "qwen3_moe") == 0)
        return 1;
    if (json_object_object_get_ex(cfg, "architectures", &v) &&
        json_object_is_type(v, json_type_array))
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            json_object *a = json_object_array_get_idx(v, i);
            if (a && json_object_is_type(a, json_type_string) &&
                strcmp(json_object_get_string(a), "Qwen3MoeForCausalLM") == 0)
                return 1;
        }
    return 0;
}

/* The four members Qwen3Config reads for per-layer windows
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
    const int moe = rc == BOSCH_OK && is_moe_config(cfg);
    const uint32_t sliding = sel_sliding_layers(s);
    if (moe && sliding > 0 && sliding < s->layers)
        rc = sel_fail(s, BOSCH_E_INVALID,
                      "%s: %s is a Qwen3MoeForCausalLM config, whose sliding window is all "
                      "layers or none in transformers (use_sliding_window; layer_types is "
                      "ignored); the selection slides %u of %u layers",
                      fn, source_config, sliding, s->layers);
    if (rc == BOSCH_OK && set_window_members(s, cfg, !moe || sliding > 0) != BOSCH_OK)
        rc = sel_fail(s, BOSCH_E_NOMEM, "%s: out of memory", fn);
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
