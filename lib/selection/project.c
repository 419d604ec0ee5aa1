/* Layer-level masks: the predicate and the nearest layer-level projection
 * of a head-level mask (what a per-layer sliding window can serve,
 * docs/export.md). */
#include "bosch/bosch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "selection/selection_impl.h"

#define FN "bosch_selection_project_layers"

int bosch_selection_is_layer_level(const bosch_selection *s)
{
    if (!s)
        return 0;
    for (uint32_t l = 0; l < s->layers; l++) {
        const uint8_t *row = s->mask + (size_t)l * s->kv_groups;
        for (uint32_t g = 1; g < s->kv_groups; g++)
            if (row[g] != row[0])
                return 0;
    }
    return 1;
}

struct layer_rank {
    size_t swa;  /* SWA KV heads of the layer */
    double imp;  /* summed importance (0 when not used) */
    uint32_t layer;
};

/* Most SWA heads first; then the lower importance (less to lose); then the
 * higher layer index: a total order, so the choice is deterministic. */
static int rank_cmp(const void *pa, const void *pb)
{
    const struct layer_rank *a = pa, *b = pb;
    if (a->swa != b->swa)
        return a->swa > b->swa ? -1 : 1;
    if (a->imp != b->imp)
        return a->imp < b->imp ? -1 : 1;
    return a->layer > b->layer ? -1 : a->layer < b->layer;
}

/* Importance counts only when every value is finite (a NaN sum orders nothing). */
static int importance_usable(const bosch_selection *s)
{
    if (!s->importance)
        return 0;
    for (size_t u = 0; u < s->units; u++)
        if (!isfinite(s->importance[u]))
            return 0;
    return 1;
}

static int copy_settings(bosch_selection *p, const bosch_selection *s)
{
    int rc = BOSCH_OK;
    for (size_t i = 0; i < s->n_settings && rc == BOSCH_OK; i++) {
        const struct setting *e = &s->settings[i];
        switch (e->type) {
        case BOSCH_SETTING_STRING: rc = bosch_selection_setting_set_string(p, e->key, e->v.s); break;
        case BOSCH_SETTING_INT: rc = bosch_selection_setting_set_int(p, e->key, e->v.i); break;
        case BOSCH_SETTING_DOUBLE: rc = bosch_selection_setting_set_double(p, e->key, e->v.d); break;
        default: rc = bosch_selection_setting_set_bool(p, e->key, e->v.b);
        }
    }
    /* The projection is served without sink tokens; say so where eval looks. */
    if (rc == BOSCH_OK && bosch_selection_setting_type(s, "sink") > 0)
        rc = bosch_selection_setting_set_int(p, "sink", 0);
    return rc;
}

/* Everything but the mask: provenance, KV record (sink 0), settings. */
static int copy_fields(bosch_selection *p, const bosch_selection *s)
{
    static const char prefix[] = "layer-projection";
    size_t n = sizeof prefix + (s->method ? strlen(s->method) + 1 : 0);
    char *method = malloc(n);
    if (!method)
        return BOSCH_E_NOMEM;
    if (s->method)
        snprintf(method, n, "%s:%s", prefix, s->method);
    else
        snprintf(method, n, "%s", prefix);
    int rc = sel_set_text(&p->method, method);
    free(method);
    if (rc == BOSCH_OK)
        rc = sel_set_text(&p->model_path, s->model_path);
    if (rc == BOSCH_OK && s->importance)
        rc = bosch_selection_set_importance(p, s->importance, s->units);
    if (rc != BOSCH_OK)
        return rc;
    p->target_ratio = s->target_ratio;
    if (s->has_kv) {
        p->has_kv = 1;
        p->kv_context = s->kv_context;
        p->kv_window = s->kv_window;
        p->kv_sink = 0;
    }
    return copy_settings(p, s);
}

bosch_selection *bosch_selection_project_layers(const bosch_selection *s)
{
    if (!s)
        return create_fail(BOSCH_E_INVALID, FN ": selection is NULL");
    bosch_selection *p = bosch_selection_create(s->layers, s->kv_groups, s->heads_per_group);
    struct layer_rank *r = malloc(s->layers * sizeof *r);
    if (!p || !r) {
        bosch_selection_free(p);
        free(r);
        return create_fail(BOSCH_E_NOMEM, FN ": out of memory");
    }
    int use_imp = importance_usable(s);
    size_t swa = 0;
    for (uint32_t l = 0; l < s->layers; l++) {
        r[l] = (struct layer_rank){0, 0.0, l};
        for (uint32_t g = 0; g < s->kv_groups; g++) {
            size_t u = (size_t)l * s->kv_groups + g;
            r[l].swa += s->mask[u];
            if (use_imp)
                r[l].imp += s->importance[u];
        }
        swa += r[l].swa;
    }
    /* k = round(ratio * layers) = round(swa / kv_groups), halves up. */
    size_t k = (2 * swa + s->kv_groups) / (2 * (size_t)s->kv_groups);
    qsort(r, s->layers, sizeof *r, rank_cmp);
    for (size_t i = 0; i < k; i++)
        memset(p->mask + (size_t)r[i].layer * s->kv_groups, 1, s->kv_groups);
    free(r);
    int rc = copy_fields(p, s);
    if (rc != BOSCH_OK) {
        bosch_selection_free(p);
        return create_fail(rc, FN ": %s", rc == BOSCH_E_NOMEM ? "out of memory" : bosch_strerror(rc));
    }
    return p;
}
