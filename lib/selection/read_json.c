/* bosch_selection_read_json: the reader of bosch-mask files. Every member
 * it knows is checked for type, length and content; a failure names the
 * member (docs/result-format.md). */
#include "bosch/bosch.h"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/errors.h"
#include "selection/selection_impl.h"
#include "util/json_dup.h"
#include "util/read_file.h"

#define FN "bosch_selection_read_json"
#define WHY_LEN 320

struct reader {
    const char *path;
    json_object *root;
    bosch_selection *sel;
    char why[WHY_LEN]; /* set when malformed */
    int code;          /* BOSCH_E_CORRUPT unless said otherwise */
};

static int malformed(struct reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int malformed(struct reader *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->why, sizeof r->why, fmt, ap);
    va_end(ap);
    return -1;
}

static int is_number(json_object *v)
{
    return json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double);
}

static int get_shape(json_object *o, const char *key, uint32_t *out)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
        return -1;
    int64_t x = json_object_get_int64(v);
    if (x < 1 || x > (1 << 24))
        return -1;
    *out = (uint32_t)x;
    return 0;
}

/* A non-negative integer member; 0 absent, 1 present, -1 of another type. */
static int get_count(json_object *o, const char *key, uint64_t *out)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v))
        return 0;
    if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)
        return -1;
    *out = (uint64_t)json_object_get_int64(v);
    return 1;
}

/* An optional string member copied into *dst. */
static int get_text(struct reader *r, json_object *o, const char *key, const char *name, char **dst)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v))
        return 0;
    if (!json_object_is_type(v, json_type_string))
        return malformed(r, "\"%s\" is not a string", name);
    if (sel_set_text(dst, json_object_get_string(v)) != BOSCH_OK) {
        r->code = BOSCH_E_NOMEM;
        return malformed(r, "out of memory");
    }
    return 0;
}

/* format, format_version, model shape, units, unit_mask: creates r->sel. */
static int read_required(struct reader *r)
{
    json_object *v, *model, *mask;
    uint32_t L, G, H;
    if (!json_object_object_get_ex(r->root, "format", &v) || !json_object_is_type(v, json_type_string) ||
        strcmp(json_object_get_string(v), BOSCH_SELECTION_FORMAT))
        return malformed(r, "\"format\" is not \"bosch-mask\"");
    if (json_object_object_get_ex(r->root, "format_version", &v)) {
        if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 1)
            return malformed(r, "\"format_version\" is not a positive integer");
        if (json_object_get_int64(v) > BOSCH_SELECTION_FORMAT_VERSION) {
            r->code = BOSCH_E_MISMATCH;
            return malformed(r, "unsupported format_version %lld (this libbosch reads up to %d)",
                             (long long)json_object_get_int64(v), BOSCH_SELECTION_FORMAT_VERSION);
        }
    }
    if (!json_object_object_get_ex(r->root, "model", &model) || !json_object_is_type(model, json_type_object))
        return malformed(r, "no \"model\" object");
    if (get_shape(model, "layers", &L) || get_shape(model, "kv_groups", &G) ||
        get_shape(model, "heads_per_group", &H))
        return malformed(r, "\"model\" lacks positive integers layers, kv_groups, heads_per_group");
    if (!json_object_object_get_ex(r->root, "unit_mask", &mask) || !json_object_is_type(mask, json_type_string))
        return malformed(r, "no \"unit_mask\" string");
    size_t units = (size_t)L * G;
    if ((size_t)json_object_get_string_len(mask) != units)
        return malformed(r, "\"unit_mask\" length differs from layers x kv_groups");
    const char *m = json_object_get_string(mask);
    for (size_t u = 0; u < units; u++)
        if (m[u] != '0' && m[u] != '1')
            return malformed(r, "\"unit_mask\" holds characters other than 0 and 1");
    if (json_object_object_get_ex(r->root, "units", &v) &&
        (!json_object_is_type(v, json_type_int) || (uint64_t)json_object_get_int64(v) != units))
        return malformed(r, "\"units\" differs from layers x kv_groups");
    if (!(r->sel = bosch_selection_create(L, G, H))) {
        r->code = bosch_create_status() == BOSCH_E_NOMEM ? BOSCH_E_NOMEM : BOSCH_E_CORRUPT;
        return malformed(r, "%s", bosch_create_error() + strlen("bosch_selection_create: "));
    }
    for (size_t u = 0; u < units; u++)
        r->sel->mask[u] = m[u] == '1';
    return get_text(r, model, "path", "model.path", &r->sel->model_path);
}

static int read_texts(struct reader *r)
{
    bosch_selection *s = r->sel;
    if (get_text(r, r->root, "library_version", "library_version", &s->library_version) ||
        get_text(r, r->root, "method", "method", &s->method) ||
        get_text(r, r->root, "status", "status", &s->status))
        return -1;
    json_object *v;
    if (json_object_object_get_ex(r->root, "target_ratio", &v) && v) {
        double t = is_number(v) ? json_object_get_double(v) : NAN;
        if (!(t >= 0.0 && t <= 1.0))
            return malformed(r, "\"target_ratio\" is not a number in [0, 1]");
        s->target_ratio = t;
    }
    return 0;
}

/* unit_importance and the type checks of the members derived from the mask. */
static int read_arrays(struct reader *r)
{
    bosch_selection *s = r->sel;
    json_object *v;
    if (json_object_object_get_ex(r->root, "unit_importance", &v)) {
        if (!json_object_is_type(v, json_type_array) || json_object_array_length(v) != s->units)
            return malformed(r, "\"unit_importance\" is not an array of layers x kv_groups numbers");
        if (!(s->importance = malloc(s->units * sizeof *s->importance))) {
            r->code = BOSCH_E_NOMEM;
            return malformed(r, "out of memory");
        }
        for (size_t u = 0; u < s->units; u++) {
            json_object *x = json_object_array_get_idx(v, u);
            if (x && !is_number(x))
                return malformed(r, "\"unit_importance\" holds a value that is not a number or null");
            s->importance[u] = x ? json_object_get_double(x) : NAN;
        }
    }
    static const struct { const char *key; json_type type; const char *what; } derived[] = {
        {"head_mask", json_type_array, "an array"},
        {"layer_ratios", json_type_array, "an array"},
        {"swa_units", json_type_int, "an integer"},
    };
    for (size_t i = 0; i < sizeof derived / sizeof derived[0]; i++)
        if (json_object_object_get_ex(r->root, derived[i].key, &v) &&
            !json_object_is_type(v, derived[i].type))
            return malformed(r, "\"%s\" is not %s", derived[i].key, derived[i].what);
    if (json_object_object_get_ex(r->root, "ratio", &v) && !is_number(v))
        return malformed(r, "\"ratio\" is not a number");
    return 0;
}

static int read_score(struct reader *r)
{
    static const char *const names[BOSCH_SCORE_COUNT] = {"raw", "normalized", "objective", "full",
                                                         "all_swa"};
    json_object *sc, *v;
    if (!json_object_object_get_ex(r->root, "score", &sc))
        return 0;
    if (!json_object_is_type(sc, json_type_object))
        return malformed(r, "\"score\" is not an object");
    r->sel->has_score = 1;
    if (get_text(r, sc, "metric", "score.metric", &r->sel->metric))
        return -1;
    for (int k = 0; k < BOSCH_SCORE_COUNT; k++) {
        if (!json_object_object_get_ex(sc, names[k], &v) || !v)
            continue;
        if (!is_number(v))
            return malformed(r, "\"score.%s\" is not a number or null", names[k]);
        double x = json_object_get_double(v);
        r->sel->score[k] = isfinite(x) ? x : NAN;
    }
    return 0;
}

static int read_kv(struct reader *r)
{
    bosch_selection *s = r->sel;
    json_object *kv, *v;
    if (!json_object_object_get_ex(r->root, "kv_saving", &kv))
        return 0;
    if (!json_object_is_type(kv, json_type_object) || get_count(kv, "context", &s->kv_context) != 1 ||
        get_count(kv, "window", &s->kv_window) != 1 || get_count(kv, "sink", &s->kv_sink) != 1)
        return malformed(r, "\"kv_saving\" lacks non-negative integers context, window, sink");
    if (json_object_object_get_ex(kv, "fraction", &v) && !is_number(v))
        return malformed(r, "\"kv_saving.fraction\" is not a number");
    s->has_kv = 1;
    return 0;
}

/* Stores one scalar setting; -1 (malformed) for another JSON type. */
static int put_setting(struct reader *r, const char *key, json_object *v)
{
    bosch_selection *s = r->sel;
    const char *why = NULL;
    if (bosch_selection_setting_type(s, key) == BOSCH_E_NOT_FOUND &&
        (why = sel_setting_key_problem(s, key)))
        return malformed(r, "\"settings.%s\": %s", key, why);
    int rc;
    if (json_object_is_type(v, json_type_string))
        rc = bosch_selection_setting_set_string(s, key, json_object_get_string(v));
    else if (json_object_is_type(v, json_type_int))
        rc = bosch_selection_setting_set_int(s, key, json_object_get_int64(v));
    else if (json_object_is_type(v, json_type_double) && isfinite(json_object_get_double(v)))
        rc = bosch_selection_setting_set_double(s, key, json_object_get_double(v));
    else if (json_object_is_type(v, json_type_boolean))
        rc = bosch_selection_setting_set_bool(s, key, json_object_get_boolean(v));
    else
        return malformed(r, "\"settings.%s\" is not a string, finite number or boolean", key);
    if (rc != BOSCH_OK) {
        r->code = rc;
        return malformed(r, "%s", s->error);
    }
    return 0;
}

static int read_settings(struct reader *r)
{
    json_object *st;
    if (!json_object_object_get_ex(r->root, "settings", &st))
        return 0;
    if (!json_object_is_type(st, json_type_object))
        return malformed(r, "\"settings\" is not an object");
    json_object_object_foreach(st, key, v) {
        if (strchr(key, '.'))
            return malformed(r, "\"settings\" key \"%s\" contains a dot", key);
        if (!json_object_is_type(v, json_type_object)) {
            if (put_setting(r, key, v))
                return -1;
            continue;
        }
        json_object_object_foreach(v, name, x) {
            char full[600];
            if (strchr(name, '.') || snprintf(full, sizeof full, "%s.%s", key, name) >= (int)sizeof full)
                return malformed(r, "\"settings.%s\" key \"%s\" contains a dot or is too long", key, name);
            if (put_setting(r, full, x))
                return -1;
        }
    }
    return 0;
}

static int read_evaluations(struct reader *r)
{
    bosch_selection *s = r->sel;
    json_object *ev;
    if (!json_object_object_get_ex(r->root, "evaluations", &ev))
        return 0;
    if (!json_object_is_type(ev, json_type_object))
        return malformed(r, "\"evaluations\" is not an object");
    for (int i = 0; i <= BOSCH_STAGE_COUNT + 1; i++) {
        const char *name = i < BOSCH_STAGE_COUNT ? bosch_stage_name(i) : i == BOSCH_STAGE_COUNT ? "total" : "replayed";
        uint64_t *dst = i < BOSCH_STAGE_COUNT ? &s->evals[i] : i == BOSCH_STAGE_COUNT ? &s->total : &s->replayed;
        int got = get_count(ev, name, dst);
        if (got < 0)
            return malformed(r, "\"evaluations.%s\" is not a non-negative integer", name);
        if (got && i < BOSCH_STAGE_COUNT)
            s->has_stage_evals = 1;
    }
    s->has_evals = 1;
    return 0;
}

static bosch_selection *read_fail(struct reader *r)
{
    bosch_selection_free(r->sel);
    json_object_put(r->root);
    if (r->code == BOSCH_E_NOMEM)
        return create_fail(BOSCH_E_NOMEM, FN ": %s", "out of memory");
    if (r->code == BOSCH_E_MISMATCH)
        return create_fail(r->code, FN ": %s: %s", r->path, r->why);
    return create_fail(r->code, FN ": %s: malformed mask file: %s", r->path, r->why);
}

bosch_selection *bosch_selection_read_json(const char *path)
{
    if (!path)
        return create_fail(BOSCH_E_INVALID, FN ": path is NULL");
    struct stat st;
    if (stat(path, &st) != 0)
        return create_fail(BOSCH_E_IO, FN ": %s: %s", path, util_file_error(errno));
    struct reader r = {.path = path, .code = BOSCH_E_CORRUPT};
    r.root = json_object_from_file(path);
    if (!r.root || !json_object_is_type(r.root, json_type_object)) {
        json_object_put(r.root);
        return create_fail(BOSCH_E_CORRUPT, FN ": %s: not a JSON object (malformed mask file)", path);
    }
    /* json-c kept the last of a key given twice: which value holds is unclear. */
    struct util_json_dup dup;
    int twice = util_json_dup_find_file(path, &dup);
    if (twice) {
        json_object_put(r.root);
        if (twice < 0)
            return create_fail(BOSCH_E_NOMEM, FN ": %s", "out of memory");
        char what[160];
        util_json_dup_describe(&dup, what, sizeof what);
        return create_fail(BOSCH_E_CORRUPT, FN ": %s: malformed mask file: line %d: %s (give "
                           "each key once)", path, dup.line, what);
    }
    if (read_required(&r) || read_texts(&r) || read_arrays(&r) || read_score(&r) || read_kv(&r) ||
        read_settings(&r) || read_evaluations(&r))
        return read_fail(&r);
    json_object_put(r.root);
    return r.sel;
}
