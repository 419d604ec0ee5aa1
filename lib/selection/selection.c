/* bosch_selection: lifetime, shape and mask, and the scalar fields of a
 * result file. Settings are in settings.c, the JSON reader in read_json.c,
 * the writers in write.c. */
#include "bosch/bosch.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "selection/selection_impl.h"

#define MAX_UNITS ((size_t)1 << 24)


bosch_selection *bosch_selection_create(uint32_t layers, uint32_t kv_groups,
                                        uint32_t heads_per_group)
{
    if (!layers || !kv_groups || !heads_per_group)
        return create_fail(BOSCH_E_INVALID, "bosch_selection_create: shape %u x %u x %u has a zero",
                           layers, kv_groups, heads_per_group);
    size_t units = (size_t)layers * kv_groups;
    if (units > MAX_UNITS)
        return create_fail(BOSCH_E_INVALID, "bosch_selection_create: %zu units (more than 2^24)",
                           units);
    bosch_selection *s = calloc(1, sizeof *s);
    if (!s || !(s->mask = calloc(units, 1)) || !(s->error = calloc(SEL_ERROR_LEN, 1))) {
        if (s)
            free(s->mask);
        free(s);
        return create_fail(BOSCH_E_NOMEM, "bosch_selection_create: out of memory");
    }
    s->layers = layers;
    s->kv_groups = kv_groups;
    s->heads_per_group = heads_per_group;
    s->units = units;
    s->target_ratio = NAN;
    for (int k = 0; k < BOSCH_SCORE_COUNT; k++)
        s->score[k] = NAN;
    return s;
}

void bosch_selection_free(bosch_selection *s)
{
    if (!s)
        return;
    sel_settings_clear(s);
    free(s->settings);
    free(s->mask);
    free(s->method);
    free(s->status);
    free(s->model_path);
    free(s->library_version);
    free(s->metric);
    free(s->importance);
    free(s->error);
    free(s);
}

const char *bosch_selection_last_error(const bosch_selection *s)
{
    return s ? s->error : "";
}

/* Copies the result's scores and counts (shapes already checked). */
static int fill_from_result(bosch_selection *s, const bosch_result *r, const bosch_problem *p)
{
    if (bosch_result_mask(r, s->mask, s->units) != BOSCH_OK)
        return BOSCH_E_INVALID;
    s->score[BOSCH_SCORE_RAW] = bosch_result_score(r);
    s->score[BOSCH_SCORE_NORMALIZED] = bosch_result_normalized_score(r);
    s->score[BOSCH_SCORE_OBJECTIVE] = bosch_result_objective(r);
    s->score[BOSCH_SCORE_FULL] = bosch_result_anchor(r, 0);
    s->score[BOSCH_SCORE_ALL_SWA] = bosch_result_anchor(r, 1);
    s->has_score = 1;
    s->target_ratio = bosch_problem_target_ratio(p);
    uint64_t stages[BOSCH_STAGE_COUNT];
    for (int i = 0; i < BOSCH_STAGE_COUNT; i++)
        stages[i] = bosch_result_evaluations(r, i);
    int rc = bosch_selection_set_evaluations(s, stages, bosch_result_evaluations(r, -1),
                                             bosch_result_replayed(r));
    if (rc == BOSCH_OK)
        rc = sel_set_text(&s->method, "bosch");
    if (rc == BOSCH_OK)
        rc = sel_set_text(&s->status, bosch_err_name(bosch_result_status(r)));
    return rc;
}

bosch_selection *bosch_selection_from_result(const bosch_result *r, const bosch_problem *p)
{
    if (!r || !p)
        return create_fail(BOSCH_E_INVALID, "bosch_selection_from_result: %s is NULL",
                           r ? "problem" : "result");
    if (bosch_result_units(r) != bosch_problem_units(p) ||
        bosch_result_layers(r) != bosch_problem_layers(p))
        return create_fail(BOSCH_E_INVALID,
                           "bosch_selection_from_result: the result has %u layers and %zu units, "
                           "the problem %u layers and %zu units",
                           bosch_result_layers(r), bosch_result_units(r), bosch_problem_layers(p),
                           bosch_problem_units(p));
    bosch_selection *s = bosch_selection_create(bosch_problem_layers(p), bosch_problem_kv_groups(p),
                                                bosch_problem_heads_per_group(p));
    if (!s) {
        char why[512];
        snprintf(why, sizeof why, "%s", bosch_create_error());
        return create_fail(bosch_create_status(), "bosch_selection_from_result: %s", why);
    }
    int rc = fill_from_result(s, r, p);
    if (rc != BOSCH_OK) {
        bosch_selection_free(s);
        return create_fail(rc, "bosch_selection_from_result: %s", bosch_strerror(rc));
    }
    return s;
}

/* ------------------------------------------------------------------------ */
/* Shape and mask                                                            */
/* ------------------------------------------------------------------------ */
uint32_t bosch_selection_layers(const bosch_selection *s)
{
    return s ? s->layers : 0;
}

uint32_t bosch_selection_kv_groups(const bosch_selection *s)
{
    return s ? s->kv_groups : 0;
}

uint32_t bosch_selection_heads_per_group(const bosch_selection *s)
{
    return s ? s->heads_per_group : 0;
}

size_t bosch_selection_units(const bosch_selection *s)
{
    return s ? s->units : 0;
}

int bosch_selection_set_mask(bosch_selection *s, const uint8_t *mask, size_t units)
{
    if (!s)
        return BOSCH_E_INVALID;
    if (!mask || units != s->units)
        return sel_fail(s, BOSCH_E_INVALID, "bosch_selection_set_mask: %s",
                        mask ? "units differ from the selection's" : "mask is NULL");
    for (size_t u = 0; u < units; u++)
        s->mask[u] = mask[u] != 0;
    return BOSCH_OK;
}

int bosch_selection_mask(const bosch_selection *s, uint8_t *out, size_t units)
{
    if (!s)
        return BOSCH_E_INVALID;
    if (!out || units != s->units)
        return sel_fail(s, BOSCH_E_INVALID, "bosch_selection_mask: %s",
                        out ? "units differ from the selection's" : "out is NULL");
    memcpy(out, s->mask, units);
    return BOSCH_OK;
}

size_t bosch_selection_swa_units(const bosch_selection *s)
{
    size_t n = 0;
    for (size_t u = 0; s && u < s->units; u++)
        n += s->mask[u];
    return n;
}

double bosch_selection_ratio(const bosch_selection *s)
{
    return s ? (double)bosch_selection_swa_units(s) / (double)s->units : NAN;
}

int bosch_selection_layer_ratios(const bosch_selection *s, double *out, size_t layers)
{
    if (!s)
        return BOSCH_E_INVALID;
    if (!out || layers != s->layers)
        return sel_fail(s, BOSCH_E_INVALID, "bosch_selection_layer_ratios: %s",
                        out ? "layers differ from the selection's" : "out is NULL");
    for (uint32_t l = 0; l < s->layers; l++) {
        unsigned n = 0;
        for (uint32_t g = 0; g < s->kv_groups; g++)
            n += s->mask[(size_t)l * s->kv_groups + g];
        out[l] = (double)n / s->kv_groups;
    }
    return BOSCH_OK;
}

/* ------------------------------------------------------------------------ */
/* Descriptive fields                                                        */
/* ------------------------------------------------------------------------ */
static int set_text(bosch_selection *s, char **field, const char *value, const char *fn)
{
    if (!s)
        return BOSCH_E_INVALID;
    int rc = sel_set_text(field, value);
    return rc ? sel_fail(s, rc, "%s: out of memory", fn) : BOSCH_OK;
}

int bosch_selection_set_method(bosch_selection *s, const char *method)
{
    return set_text(s, s ? &s->method : NULL, method, "bosch_selection_set_method");
}

const char *bosch_selection_method(const bosch_selection *s)
{
    return s ? s->method : NULL;
}

int bosch_selection_set_status(bosch_selection *s, const char *status)
{
    return set_text(s, s ? &s->status : NULL, status, "bosch_selection_set_status");
}

const char *bosch_selection_status(const bosch_selection *s)
{
    return s ? s->status : NULL;
}

int bosch_selection_set_model_path(bosch_selection *s, const char *path)
{
    return set_text(s, s ? &s->model_path : NULL, path, "bosch_selection_set_model_path");
}

const char *bosch_selection_model_path(const bosch_selection *s)
{
    return s ? s->model_path : NULL;
}

const char *bosch_selection_library_version(const bosch_selection *s)
{
    return s ? s->library_version : NULL;
}

int bosch_selection_set_target_ratio(bosch_selection *s, double rho)
{
    if (!s)
        return BOSCH_E_INVALID;
    if (!isnan(rho) && !(rho >= 0.0 && rho <= 1.0))
        return sel_fail(s, BOSCH_E_INVALID, "bosch_selection_set_target_ratio: %g is not in [0, 1]",
                        rho);
    s->target_ratio = rho;
    return BOSCH_OK;
}

double bosch_selection_target_ratio(const bosch_selection *s)
{
    return s ? s->target_ratio : NAN;
}

int bosch_selection_set_importance(bosch_selection *s, const double *scores, size_t units)
{
    if (!s)
        return BOSCH_E_INVALID;
    if (!scores) {
        free(s->importance);
        s->importance = NULL;
        return BOSCH_OK;
    }
    if (units != s->units)
        return sel_fail(s, BOSCH_E_INVALID,
                        "bosch_selection_set_importance: units differ from the selection's");
    if (!s->importance && !(s->importance = malloc(units * sizeof *s->importance)))
        return sel_fail(s, BOSCH_E_NOMEM, "bosch_selection_set_importance: out of memory");
    memcpy(s->importance, scores, units * sizeof *scores);
    return BOSCH_OK;
}

int bosch_selection_importance(const bosch_selection *s, double *out, size_t units)
{
    if (!s)
        return BOSCH_E_INVALID;
    if (!out || units != s->units)
        return sel_fail(s, BOSCH_E_INVALID, "bosch_selection_importance: %s",
                        out ? "units differ from the selection's" : "out is NULL");
    if (!s->importance)
        return sel_fail(s, BOSCH_E_NOT_FOUND, "bosch_selection_importance: none recorded");
    memcpy(out, s->importance, units * sizeof *out);
    return BOSCH_OK;
}

/* ------------------------------------------------------------------------ */
/* Scores, KV saving, evaluations                                            */
/* ------------------------------------------------------------------------ */
int bosch_selection_set_score(bosch_selection *s, int kind, double value)
{
    if (!s)
        return BOSCH_E_INVALID;
    if (kind < 0 || kind >= BOSCH_SCORE_COUNT)
        return sel_fail(s, BOSCH_E_INVALID, "bosch_selection_set_score: no score kind %d", kind);
    s->score[kind] = isfinite(value) ? value : NAN;
    s->has_score = 1;
    return BOSCH_OK;
}

double bosch_selection_score(const bosch_selection *s, int kind)
{
    if (!s || kind < 0 || kind >= BOSCH_SCORE_COUNT)
        return NAN;
    return s->score[kind];
}

int bosch_selection_set_metric(bosch_selection *s, const char *metric)
{
    int rc = set_text(s, s ? &s->metric : NULL, metric, "bosch_selection_set_metric");
    if (rc == BOSCH_OK && metric)
        s->has_score = 1;
    return rc;
}

const char *bosch_selection_metric(const bosch_selection *s)
{
    return s ? s->metric : NULL;
}

int bosch_selection_set_kv_saving(bosch_selection *s, uint64_t context, uint64_t window,
                                  uint64_t sink)
{
    if (!s)
        return BOSCH_E_INVALID;
    if (context > INT64_MAX || window > INT64_MAX || sink > INT64_MAX)
        return sel_fail(s, BOSCH_E_INVALID, "bosch_selection_set_kv_saving: value above INT64_MAX");
    s->kv_context = context;
    s->kv_window = window;
    s->kv_sink = sink;
    s->has_kv = 1;
    return BOSCH_OK;
}

int bosch_selection_kv_saving(const bosch_selection *s, uint64_t *context, uint64_t *window,
                              uint64_t *sink, double *fraction)
{
    if (!s)
        return BOSCH_E_INVALID;
    if (!s->has_kv)
        return sel_fail(s, BOSCH_E_NOT_FOUND, "bosch_selection_kv_saving: none recorded");
    if (context)
        *context = s->kv_context;
    if (window)
        *window = s->kv_window;
    if (sink)
        *sink = s->kv_sink;
    if (fraction)
        *fraction = bosch_kv_saving(bosch_selection_ratio(s), s->kv_context, s->kv_window,
                                    s->kv_sink);
    return BOSCH_OK;
}

int bosch_selection_set_evaluations(bosch_selection *s, const uint64_t *per_stage,
                                    uint64_t total, uint64_t replayed)
{
    if (!s)
        return BOSCH_E_INVALID;
    int big = total > INT64_MAX || replayed > INT64_MAX;
    for (int i = 0; per_stage && i < BOSCH_STAGE_COUNT; i++)
        big |= per_stage[i] > INT64_MAX;
    if (big)
        return sel_fail(s, BOSCH_E_INVALID,
                        "bosch_selection_set_evaluations: count above INT64_MAX");
    for (int i = 0; i < BOSCH_STAGE_COUNT; i++)
        s->evals[i] = per_stage ? per_stage[i] : 0;
    s->has_stage_evals = per_stage != NULL;
    s->total = total;
    s->replayed = replayed;
    s->has_evals = 1;
    return BOSCH_OK;
}

int bosch_selection_evaluations(const bosch_selection *s, int stage, uint64_t *out)
{
    if (!s || !out)
        return sel_fail(s, BOSCH_E_INVALID, "bosch_selection_evaluations: out is NULL");
    if (stage < -1 || stage >= BOSCH_STAGE_COUNT)
        return sel_fail(s, BOSCH_E_INVALID, "bosch_selection_evaluations: no stage %d", stage);
    if (!s->has_evals || (stage >= 0 && !s->has_stage_evals))
        return sel_fail(s, BOSCH_E_NOT_FOUND, "bosch_selection_evaluations: %s",
                        s->has_evals ? "no per-stage counts recorded" : "no counts recorded");
    *out = stage < 0 ? s->total : s->evals[stage];
    return BOSCH_OK;
}

int bosch_selection_replayed(const bosch_selection *s, uint64_t *out)
{
    if (!s || !out)
        return sel_fail(s, BOSCH_E_INVALID, "bosch_selection_replayed: out is NULL");
    if (!s->has_evals)
        return sel_fail(s, BOSCH_E_NOT_FOUND, "bosch_selection_replayed: no counts recorded");
    *out = s->replayed;
    return BOSCH_OK;
}
