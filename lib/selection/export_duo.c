/* bosch_selection_export_duo: a DuoAttention attention-pattern directory
 * (full_attention_heads.tsv + config.json), the input of DuoAttention's
 * load_attn_pattern and of kvpress's DuoAttentionPress (docs/export.md). */
#include "bosch/bosch.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "selection/selection_impl.h"

/* "key": value, one member a line, as Hugging Face writes its configs. */
#define JSON_FLAGS \
    (JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE)

#define FN "bosch_selection_export_duo"

/* Both loaders read only sink_size and recent_size; the rest says what the
 * pattern is and which value each consumer's own knob needs. */
static json_object *duo_config(const bosch_selection *s)
{
    json_object *c = json_object_new_object();
    if (!c)
        return NULL;
    double ratio = bosch_selection_ratio(s);
    char producer[64];
    snprintf(producer, sizeof producer, "libbosch %s", bosch_version_string());
    json_object_object_add(c, "sink_size", json_object_new_int64((int64_t)s->kv_sink));
    json_object_object_add(c, "recent_size", json_object_new_int64((int64_t)s->kv_window));
    json_object_object_add(c, "producer", json_object_new_string(producer));
    if (s->method)
        json_object_object_add(c, "method", json_object_new_string(s->method));
    if (s->model_path)
        json_object_object_add(c, "model_name", json_object_new_string(s->model_path));
    json_object_object_add(c, "num_layers", json_object_new_int64(s->layers));
    json_object_object_add(c, "num_key_value_heads", json_object_new_int64(s->kv_groups));
    json_object_object_add(c, "num_attention_heads",
                           json_object_new_int64((int64_t)s->kv_groups * s->heads_per_group));
    json_object_object_add(c, "streaming_heads",
                           json_object_new_int64((int64_t)bosch_selection_swa_units(s)));
    json_object_object_add(c, "ratio", json_object_new_double(ratio));
    /* DuoAttention's --sparsity and kvpress's head_compression_ratio: both
     * give back exactly this mask from a 0/1 file (docs/export.md). */
    json_object_object_add(c, "sparsity", json_object_new_double(ratio));
    json_object_object_add(c, "head_compression_ratio", json_object_new_double(ratio));
    json_object_object_add(c, "threshold", json_object_new_double(0.5));
    json_object_object_add(c, "context", json_object_new_int64((int64_t)s->kv_context));
    json_object_object_add(c, "kv_saving",
                           json_object_new_double(bosch_kv_saving(ratio, s->kv_context,
                                                                  s->kv_window, s->kv_sink)));
    return c;
}

static int write_both(const bosch_selection *s, const char *tsv_path, const char *cfg_path,
                      const char *cfg_text)
{
    afile tsv, cfg;
    int rc = sel_tmp_open(s, &tsv, tsv_path, FN);
    if (rc)
        return rc;
    sel_put_tsv(tsv.f, s);
    rc = sel_tmp_open(s, &cfg, cfg_path, FN);
    if (rc) {
        sel_tmp_discard(&tsv);
        return rc;
    }
    fputs(cfg_text, cfg.f);
    fputc('\n', cfg.f);
    /* Both complete before either replaces anything. */
    rc = sel_tmp_close(s, &tsv, FN);
    rc = rc ? rc : sel_tmp_close(s, &cfg, FN);
    rc = rc ? rc : sel_tmp_commit(s, &tsv, FN);
    rc = rc ? rc : sel_tmp_commit(s, &cfg, FN);
    sel_tmp_discard(&tsv);
    sel_tmp_discard(&cfg);
    return rc;
}

int bosch_selection_export_duo(const bosch_selection *s, const char *dir)
{
    if (!s || !dir || !*dir)
        return sel_fail(s, BOSCH_E_INVALID, FN ": %s", !s ? "selection is NULL"
                                                        : dir ? "dir is empty" : "dir is NULL");
    if (!s->has_kv)
        return sel_fail(s, BOSCH_E_INVALID,
                        FN ": the selection records no KV-saving window and sink (kv_saving), "
                           "which give config.json's recent_size and sink_size");
    if (s->kv_window == 0)
        return sel_fail(s, BOSCH_E_INVALID, FN ": the recorded window is 0 (recent_size must be >= 1)");
    int made = 0;
    int rc = sel_ensure_dir(s, dir, FN, &made);
    char *tsv_path = sel_join(dir, "full_attention_heads.tsv");
    char *cfg_path = sel_join(dir, "config.json");
    json_object *cfg = duo_config(s);
    const char *text = cfg ? json_object_to_json_string_ext(cfg, JSON_FLAGS) : NULL;
    if (!rc && (!tsv_path || !cfg_path || !text))
        rc = sel_fail(s, BOSCH_E_NOMEM, FN ": out of memory");
    else if (!rc)
        rc = write_both(s, tsv_path, cfg_path, text);
    if (rc && made) {
        /* A failed export leaves nothing: not even the directory it made
         * (a file committed before the failure included). */
        int err = errno;
        if (tsv_path)
            unlink(tsv_path);
        if (cfg_path)
            unlink(cfg_path);
        rmdir(dir);
        errno = err;
    }
    json_object_put(cfg);
    free(tsv_path);
    free(cfg_path);
    return rc;
}
