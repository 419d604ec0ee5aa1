/* bosch_selection_export_trtllm: TensorRT-LLM's per-layer attention windows
 * of a layer-level selection, as the YAML file that trtllm-serve's
 * --extra_llm_api_options reads (docs/export.md): kv_cache_config's
 * max_attention_window, one entry per layer. TensorRT-LLM's window W keeps
 * the key of the query itself and the W - 1 before it (its context mask is
 * col > row - W), as Hugging Face's sliding_window and libbosch's window
 * do, so a sliding layer's entry is the recorded window itself; a full
 * layer's is max_seq_len (larger values are clamped to it). A window of
 * max_seq_len or more would slide over nothing: refused. Every family the
 * exports know is served (config_family.c); a config's own sliding layers
 * and window (Qwen2/Qwen3 layer_types, Mistral's sliding_window) are not
 * read: the file gives every layer's window, the mask's (docs/export.md,
 * "Families"). */
#include "bosch/bosch.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "selection/selection_impl.h"

#define FN "bosch_selection_export_trtllm"

/* The model's config.json: checked against the selection's shape and for a
 * known family; its max_position_embeddings in *max_seq_len unless one is
 * given. A status after sel_fail. */
static int read_model_config(const bosch_selection *s, const char *path, uint64_t *max_seq_len)
{
    json_object *cfg = NULL;
    int rc = sel_read_config(s, path, FN, &cfg);
    if (rc)
        return rc;
    rc = sel_check_config_shape(s, cfg, path, FN);
    /* Every family serves per-layer windows here: the family is checked so
     * that a model the export does not know is refused by name. */
    const struct sel_family *fam;
    if (!rc)
        rc = sel_config_family(s, cfg, path, FN, &fam);
    const uint64_t positions = sel_config_max_positions(cfg);
    if (!rc && !*max_seq_len && !positions)
        rc = sel_fail(s, BOSCH_E_CORRUPT,
                      FN ": %s: no positive integer \"max_position_embeddings\" (give "
                      "max_seq_len)", path);
    else if (!rc && !*max_seq_len)
        *max_seq_len = positions;
    json_object_put(cfg);
    return rc;
}

int bosch_selection_export_trtllm(const bosch_selection *s, const char *model_config,
                                  uint64_t max_seq_len, const char *path)
{
    if (!s || !path || (!max_seq_len && !model_config))
        return sel_fail(s, BOSCH_E_INVALID, FN ": %s",
                        !s      ? "selection is NULL"
                        : !path ? "path is NULL"
                                : "no max_seq_len and no model config to take it from");
    const int given = max_seq_len != 0;
    int rc = sel_check_layer_export(s, FN, "the sliding layers' max_attention_window");
    if (!rc && model_config)
        rc = read_model_config(s, model_config, &max_seq_len);
    if (!rc && max_seq_len > INT32_MAX)
        rc = sel_fail(s, BOSCH_E_INVALID, FN ": max_seq_len %llu is above 2^31-1",
                      (unsigned long long)max_seq_len);
    if (!rc)
        rc = sel_check_window_slides(s, FN, max_seq_len,
                                     given ? "max_seq_len" : "max_position_embeddings",
                                     given ? NULL : model_config);
    if (rc)
        return rc;
    const uint64_t w = s->kv_window;
    const uint32_t sliding = sel_sliding_layers(s);
    afile t;
    if ((rc = sel_tmp_open(s, &t, path, FN)) != BOSCH_OK)
        return rc;
    fprintf(t.f,
            "# TensorRT-LLM per-layer attention windows (libbosch %s): %u of %u layers slide,\n"
            "# window %llu (the query and the %llu keys before it), the others full (max_seq_len "
            "%llu).\n"
            "# No sink tokens: TensorRT-LLM's PyTorch backend serves none.\n"
            "#   trtllm-serve MODEL --max_seq_len %llu --extra_llm_api_options THIS_FILE\n"
            "#   LLM(MODEL, max_seq_len=%llu, kv_cache_config=KvCacheConfig(max_attention_window="
            "[...]))\n",
            bosch_version_string(), sliding, s->layers, (unsigned long long)w,
            (unsigned long long)(w - 1), (unsigned long long)max_seq_len,
            (unsigned long long)max_seq_len, (unsigned long long)max_seq_len);
    fputs("kv_cache_config:\n  max_attention_window: [", t.f);
    for (uint32_t l = 0; l < s->layers; l++)
        fprintf(t.f, "%s%llu", l ? ", " : "",
                (unsigned long long)(s->mask[(size_t)l * s->kv_groups] ? w : max_seq_len));
    fputs("]\n", t.f);
    rc = sel_tmp_close(s, &t, FN);
    rc = rc ? rc : sel_tmp_commit(s, &t, FN);
    sel_tmp_discard(&t);
    return rc;
}
