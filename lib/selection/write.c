/* Writers of a selection: PREFIX.json (json-c, pretty) and PREFIX.tsv (per
 * KV head, 1 = full); PREFIX.svg is write_svg.c's. The JSON members and
 * their order are those of docs/result-format.md. */
#include "bosch/bosch.h"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "selection/selection_impl.h"

static json_object *jdouble(double v)
{
    return isfinite(v) ? json_object_new_double(v) : NULL;
}

static void add_mask_members(json_object *root, const bosch_selection *s, char *str)
{
    for (size_t u = 0; u < s->units; u++)
        str[u] = s->mask[u] ? '1' : '0';
    str[s->units] = '\0';
    json_object_object_add(root, "unit_mask", json_object_new_string(str));
    json_object *hm = json_object_new_array();
    uint32_t heads = s->kv_groups * s->heads_per_group;
    for (uint32_t l = 0; l < s->layers; l++) {
        json_object *row = json_object_new_array();
        for (uint32_t h = 0; h < heads; h++)
            json_object_array_add(
                row, json_object_new_int(s->mask[(size_t)l * s->kv_groups + h / s->heads_per_group]));
        json_object_array_add(hm, row);
    }
    json_object_object_add(root, "head_mask", hm);
    json_object *lr = json_object_new_array();
    for (uint32_t l = 0; l < s->layers; l++) {
        unsigned n = 0;
        for (uint32_t g = 0; g < s->kv_groups; g++)
            n += s->mask[(size_t)l * s->kv_groups + g];
        json_object_array_add(lr, json_object_new_double((double)n / s->kv_groups));
    }
    json_object_object_add(root, "layer_ratios", lr);
    if (s->importance) {
        json_object *us = json_object_new_array();
        for (size_t u = 0; u < s->units; u++)
            json_object_array_add(us, jdouble(s->importance[u]));
        json_object_object_add(root, "unit_importance", us);
    }
}

static json_object *score_json(const bosch_selection *s)
{
    static const char *const names[BOSCH_SCORE_COUNT] = {"raw", "normalized", "objective", "full",
                                                         "all_swa"};
    json_object *sc = json_object_new_object();
    if (s->metric)
        json_object_object_add(sc, "metric", json_object_new_string(s->metric));
    for (int k = 0; k < BOSCH_SCORE_COUNT; k++)
        json_object_object_add(sc, names[k], jdouble(s->score[k]));
    return sc;
}

static json_object *kv_json(const bosch_selection *s)
{
    json_object *kv = json_object_new_object();
    json_object_object_add(kv, "context", json_object_new_int64((int64_t)s->kv_context));
    json_object_object_add(kv, "window", json_object_new_int64((int64_t)s->kv_window));
    json_object_object_add(kv, "sink", json_object_new_int64((int64_t)s->kv_sink));
    json_object_object_add(kv, "fraction",
                           json_object_new_double(bosch_kv_saving(bosch_selection_ratio(s),
                                                                  s->kv_context, s->kv_window,
                                                                  s->kv_sink)));
    return kv;
}

static json_object *setting_value(const struct setting *e)
{
    switch (e->type) {
    case BOSCH_SETTING_STRING: return json_object_new_string(e->v.s);
    case BOSCH_SETTING_INT: return json_object_new_int64(e->v.i);
    case BOSCH_SETTING_DOUBLE: return json_object_new_double(e->v.d);
    default: return json_object_new_boolean(e->v.b);
    }
}

/* A group object takes the place of its first member. */
static json_object *settings_json(const bosch_selection *s)
{
    json_object *st = json_object_new_object();
    for (size_t i = 0; i < s->n_settings; i++) {
        const struct setting *e = &s->settings[i];
        const char *dot = strchr(e->key, '.');
        if (!dot) {
            json_object_object_add(st, e->key, setting_value(e));
            continue;
        }
        char group[256];
        snprintf(group, sizeof group, "%.*s", (int)(dot - e->key), e->key);
        json_object *g;
        if (!json_object_object_get_ex(st, group, &g)) {
            g = json_object_new_object();
            json_object_object_add(st, group, g);
        }
        json_object_object_add(g, dot + 1, setting_value(e));
    }
    return st;
}

static json_object *evaluations_json(const bosch_selection *s)
{
    json_object *ev = json_object_new_object();
    if (s->has_stage_evals)
        for (int i = 0; i < BOSCH_STAGE_COUNT; i++)
            json_object_object_add(ev, bosch_stage_name(i), json_object_new_int64((int64_t)s->evals[i]));
    json_object_object_add(ev, "total", json_object_new_int64((int64_t)s->total));
    json_object_object_add(ev, "replayed", json_object_new_int64((int64_t)s->replayed));
    return ev;
}

static json_object *model_json(const bosch_selection *s)
{
    json_object *m = json_object_new_object();
    if (s->model_path)
        json_object_object_add(m, "path", json_object_new_string(s->model_path));
    json_object_object_add(m, "layers", json_object_new_int64(s->layers));
    json_object_object_add(m, "kv_groups", json_object_new_int64(s->kv_groups));
    json_object_object_add(m, "heads_per_group", json_object_new_int64(s->heads_per_group));
    return m;
}

static void add_tail_members(json_object *root, const bosch_selection *s)
{
    size_t swa = bosch_selection_swa_units(s);
    json_object_object_add(root, "swa_units", json_object_new_int64((int64_t)swa));
    json_object_object_add(root, "ratio", json_object_new_double((double)swa / s->units));
    if (!isnan(s->target_ratio))
        json_object_object_add(root, "target_ratio", json_object_new_double(s->target_ratio));
    if (s->has_score)
        json_object_object_add(root, "score", score_json(s));
    if (s->has_kv)
        json_object_object_add(root, "kv_saving", kv_json(s));
    if (s->n_settings)
        json_object_object_add(root, "settings", settings_json(s));
    if (s->has_evals)
        json_object_object_add(root, "evaluations", evaluations_json(s));
}

int sel_put_json(FILE *f, const bosch_selection *s, const char *fn)
{
    char *str = malloc(s->units + 1);
    json_object *root = json_object_new_object();
    if (!str || !root) {
        free(str);
        json_object_put(root);
        return sel_fail(s, BOSCH_E_NOMEM, "%s: out of memory", fn);
    }
    json_object_object_add(root, "format", json_object_new_string(BOSCH_SELECTION_FORMAT));
    json_object_object_add(root, "format_version", json_object_new_int(BOSCH_SELECTION_FORMAT_VERSION));
    json_object_object_add(root, "library_version", json_object_new_string(bosch_version_string()));
    if (s->method)
        json_object_object_add(root, "method", json_object_new_string(s->method));
    if (s->status)
        json_object_object_add(root, "status", json_object_new_string(s->status));
    json_object_object_add(root, "model", model_json(s));
    json_object_object_add(root, "units", json_object_new_int64((int64_t)s->units));
    add_mask_members(root, s, str);
    free(str);
    add_tail_members(root, s);
    const char *text =
        json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
    if (text)
        fputs(text, f);
    json_object_put(root);
    return text ? BOSCH_OK : sel_fail(s, BOSCH_E_NOMEM, "%s: out of memory", fn);
}

int bosch_selection_write_json(const bosch_selection *s, const char *path)
{
    static const char fn[] = "bosch_selection_write_json";
    if (!s || !path)
        return sel_fail(s, BOSCH_E_INVALID, "%s: path is NULL", fn);
    afile t;
    FILE *f = sel_open_out(s, &t, path, fn);
    if (!f)
        return BOSCH_E_IO;
    int rc = sel_put_json(f, s, fn);
    if (rc) {
        sel_tmp_discard(&t); /* the earlier file stays */
        return rc;
    }
    return sel_close_out(s, &t, fn);
}

void sel_put_tsv(FILE *f, const bosch_selection *s)
{
    for (uint32_t l = 0; l < s->layers; l++)
        for (uint32_t g = 0; g < s->kv_groups; g++)
            fprintf(f, "%d%c", s->mask[(size_t)l * s->kv_groups + g] ? 0 : 1,
                    g + 1 == s->kv_groups ? '\n' : '\t');
}

int bosch_selection_write_tsv(const bosch_selection *s, const char *path)
{
    static const char fn[] = "bosch_selection_write_tsv";
    afile t;
    FILE *f = sel_open_out(s, &t, path, fn);
    if (!f)
        return s && path ? BOSCH_E_IO : BOSCH_E_INVALID;
    sel_put_tsv(f, s);
    return sel_close_out(s, &t, fn);
}
