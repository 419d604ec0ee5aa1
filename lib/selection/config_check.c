/* What the exports that read a model's config.json (hf, trtllm) check
 * before writing anything: that the config describes the selection's
 * model (layers, KV heads, query heads), and that the selection's window
 * slides within the positions the engine will run (a window of that many
 * positions or more keeps every key: full attention counted as sliding). */
#include "bosch/bosch.h"

#include <json-c/json.h>
#include <stdio.h>

#include "selection/selection_impl.h"

/* An integer member: 1 with *v set, 0 when absent (an error when
 * required), or a status after sel_fail. */
static int get_int(const bosch_selection *s, json_object *cfg, const char *path, const char *fn,
                   const char *key, int required, int64_t *v)
{
    json_object *o;
    if (!json_object_object_get_ex(cfg, key, &o))
        return required ? sel_fail(s, BOSCH_E_CORRUPT, "%s: %s: no \"%s\"", fn, path, key) : 0;
    if (!json_object_is_type(o, json_type_int))
        return sel_fail(s, BOSCH_E_CORRUPT, "%s: %s: \"%s\" is not an integer", fn, path, key);
    *v = json_object_get_int64(o);
    return 1;
}

static void put_count(char *buf, size_t n, int64_t v)
{
    if (v < 0)
        snprintf(buf, n, "?"); /* not in the config */
    else
        snprintf(buf, n, "%lld", (long long)v);
}

int sel_check_config_shape(const bosch_selection *s, json_object *cfg, const char *path,
                           const char *fn)
{
    int64_t L = -1, G = -1, Q = -1;
    int rc = get_int(s, cfg, path, fn, "num_hidden_layers", 1, &L);
    if (rc >= 0)
        rc = get_int(s, cfg, path, fn, "num_key_value_heads", 0, &G);
    if (rc >= 0)
        rc = get_int(s, cfg, path, fn, "num_attention_heads", 0, &Q);
    if (rc < 0)
        return rc;
    const int64_t q = (int64_t)s->kv_groups * s->heads_per_group;
    const char *differs = L != s->layers                  ? "num_hidden_layers"
                          : G >= 0 && G != s->kv_groups   ? "num_key_value_heads"
                          : Q >= 0 && Q != q              ? "num_attention_heads"
                                                          : NULL;
    if (!differs)
        return BOSCH_OK;
    char g[24], h[24];
    put_count(g, sizeof g, G);
    put_count(h, sizeof h, Q);
    return sel_fail(s, BOSCH_E_MISMATCH,
                    "%s: %s describes a model of %lld layers x %s KV heads (%s query heads), the "
                    "selection one of %u layers x %u KV heads (%lld query heads): %s differs",
                    fn, path, (long long)L, g, h, s->layers, s->kv_groups, (long long)q, differs);
}

uint64_t sel_config_max_positions(json_object *cfg)
{
    json_object *v;
    if (!json_object_object_get_ex(cfg, "max_position_embeddings", &v) ||
        !json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 1)
        return 0;
    return (uint64_t)json_object_get_int64(v);
}

uint32_t sel_sliding_layers(const bosch_selection *s)
{
    uint32_t n = 0;
    for (uint32_t l = 0; l < s->layers; l++)
        n += s->mask[(size_t)l * s->kv_groups] != 0;
    return n;
}

int sel_check_window_slides(const bosch_selection *s, const char *fn, uint64_t limit,
                            const char *name, const char *source)
{
    const uint32_t sliding = sel_sliding_layers(s);
    if (!sliding || s->kv_window < limit)
        return BOSCH_OK;
    return sel_fail(s, BOSCH_E_INVALID,
                    "%s: the window %llu does not slide within %s %llu%s%s%s: a window of %llu "
                    "positions or more sees every key of a %llu-position sequence, so the %u "
                    "sliding layer%s would be full attention counted as sliding; a mask for "
                    "this length needs a window below %llu",
                    fn, (unsigned long long)s->kv_window, name, (unsigned long long)limit,
                    source ? " (" : "", source ? source : "", source ? ")" : "",
                    (unsigned long long)limit, (unsigned long long)limit, sliding,
                    sliding == 1 ? "" : "s", (unsigned long long)limit);
}
