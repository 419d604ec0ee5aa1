/* bosch_selection_export_trtllm: TensorRT-LLM's per-layer attention windows
 * of a layer-level selection, as the YAML file that trtllm-serve's
 * --extra_llm_api_options reads (docs/export.md): kv_cache_config's
 * max_attention_window, one entry per layer. TensorRT-LLM's window W keeps
 * the key of the query itself and the W - 1 before it (its context mask is
 * col > row - W), as Hugging Face's sliding_window and libbosch's window
 * do, so a sliding layer's entry is the recorded window itself; a full
 * layer's is max_seq_len (larger values are clamped to it). */
#include "bosch/bosch.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "selection/selection_impl.h"

#define FN "bosch_selection_export_trtllm"

/* max_position_embeddings of the model's config.json; a status after
 * sel_fail. */
static int config_max_len(const bosch_selection *s, const char *path, uint64_t *out)
{
    json_object *cfg = NULL, *v = NULL;
    int rc = sel_read_config(s, path, FN, &cfg);
    if (rc)
        return rc;
    if (!json_object_object_get_ex(cfg, "max_position_embeddings", &v) ||
        !json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 1)
        rc = sel_fail(s, BOSCH_E_CORRUPT,
                      FN ": %s: no positive integer \"max_position_embeddings\" (give "
                      "max_seq_len)", path);
    else
        *out = (uint64_t)json_object_get_int64(v);
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
    int rc = sel_check_layer_export(s, FN, "the sliding layers' max_attention_window");
    if (!rc && !max_seq_len)
        rc = config_max_len(s, model_config, &max_seq_len);
    if (!rc && max_seq_len > INT32_MAX)
        rc = sel_fail(s, BOSCH_E_INVALID, FN ": max_seq_len %llu is above 2^31-1",
                      (unsigned long long)max_seq_len);
    if (rc)
        return rc;
    /* A window of max_seq_len or more is full attention there. */
    const uint64_t w = s->kv_window < max_seq_len ? s->kv_window : max_seq_len;
    uint32_t sliding = 0;
    for (uint32_t l = 0; l < s->layers; l++)
        sliding += s->mask[(size_t)l * s->kv_groups] != 0;
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
