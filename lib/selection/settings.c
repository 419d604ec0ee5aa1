/* Settings of a selection: free key/value pairs (string, integer, double,
 * boolean) in the order they were first set; "group.name" keys form one
 * level of nested objects in the JSON file. */
#include "bosch/bosch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "selection/selection_impl.h"

static void setting_clear(struct setting *e)
{
    if (e->type == BOSCH_SETTING_STRING)
        free(e->v.s);
    e->v.s = NULL;
}

void sel_settings_clear(bosch_selection *s)
{
    for (size_t i = 0; i < s->n_settings; i++) {
        setting_clear(&s->settings[i]);
        free(s->settings[i].key);
    }
    s->n_settings = 0;
}

static struct setting *find(const bosch_selection *s, const char *key)
{
    for (size_t i = 0; s && key && i < s->n_settings; i++)
        if (!strcmp(s->settings[i].key, key))
            return &s->settings[i];
    return NULL;
}

/* Length of the group part of `key` ("niah" of "niah.context"), 0 if none. */
static size_t group_len(const char *key)
{
    const char *dot = strchr(key, '.');
    return dot ? (size_t)(dot - key) : 0;
}

const char *sel_setting_key_problem(const bosch_selection *s, const char *key)
{
    size_t n = key ? strlen(key) : 0;
    if (n == 0 || n > 255)
        return "a key must have 1 to 255 bytes";
    const char *dot = strchr(key, '.');
    if (dot && (dot == key || dot[1] == '\0' || strchr(dot + 1, '.')))
        return "a key has at most one dot, between two non-empty names";
    size_t g = group_len(key);
    for (size_t i = 0; i < s->n_settings; i++) {
        const char *k = s->settings[i].key;
        size_t gk = group_len(k);
        /* "niah" as a plain key and "niah.context" cannot both exist. */
        if ((g && !gk && strlen(k) == g && !strncmp(k, key, g)) ||
            (!g && gk && gk == n && !strncmp(k, key, n)))
            return "the key is both a value and a group";
    }
    return NULL;
}

/* Points *out at the entry for `key`, cleared for a new value (a new entry
 * is appended); a status, after sel_fail on failure. */
static int slot(bosch_selection *s, const char *key, const char *fn, struct setting **out)
{
    struct setting *e = find(s, key);
    if (e) {
        setting_clear(e);
        *out = e;
        return BOSCH_OK;
    }
    const char *why = sel_setting_key_problem(s, key);
    if (why)
        return sel_fail(s, BOSCH_E_INVALID, "%s: key '%s': %s", fn, key ? key : "(null)", why);
    if (s->n_settings == s->cap_settings) {
        size_t cap = s->cap_settings ? 2 * s->cap_settings : 16;
        struct setting *a = realloc(s->settings, cap * sizeof *a);
        if (!a)
            return sel_fail(s, BOSCH_E_NOMEM, "%s: out of memory", fn);
        s->settings = a;
        s->cap_settings = cap;
    }
    e = &s->settings[s->n_settings];
    memset(e, 0, sizeof *e);
    size_t n = strlen(key) + 1;
    if (!(e->key = malloc(n)))
        return sel_fail(s, BOSCH_E_NOMEM, "%s: out of memory", fn);
    memcpy(e->key, key, n);
    e->type = BOSCH_SETTING_INT;
    s->n_settings++;
    *out = e;
    return BOSCH_OK;
}

int bosch_selection_setting_set_string(bosch_selection *s, const char *key, const char *value)
{
    static const char fn[] = "bosch_selection_setting_set_string";
    if (!s)
        return BOSCH_E_INVALID;
    if (!value)
        return sel_fail(s, BOSCH_E_INVALID, "%s: value is NULL", fn);
    size_t n = strlen(value) + 1;
    char *copy = malloc(n);
    if (!copy)
        return sel_fail(s, BOSCH_E_NOMEM, "%s: out of memory", fn);
    memcpy(copy, value, n);
    struct setting *e;
    int rc = slot(s, key, fn, &e);
    if (rc != BOSCH_OK) {
        free(copy);
        return rc;
    }
    e->type = BOSCH_SETTING_STRING;
    e->v.s = copy;
    return BOSCH_OK;
}

int bosch_selection_setting_set_int(bosch_selection *s, const char *key, int64_t value)
{
    if (!s)
        return BOSCH_E_INVALID;
    struct setting *e;
    int rc = slot(s, key, "bosch_selection_setting_set_int", &e);
    if (rc != BOSCH_OK)
        return rc;
    e->type = BOSCH_SETTING_INT;
    e->v.i = value;
    return BOSCH_OK;
}

int bosch_selection_setting_set_double(bosch_selection *s, const char *key, double value)
{
    static const char fn[] = "bosch_selection_setting_set_double";
    if (!s)
        return BOSCH_E_INVALID;
    if (!isfinite(value))
        return sel_fail(s, BOSCH_E_INVALID, "%s: value is not finite", fn);
    struct setting *e;
    int rc = slot(s, key, fn, &e);
    if (rc != BOSCH_OK)
        return rc;
    e->type = BOSCH_SETTING_DOUBLE;
    e->v.d = value;
    return BOSCH_OK;
}

int bosch_selection_setting_set_bool(bosch_selection *s, const char *key, int value)
{
    if (!s)
        return BOSCH_E_INVALID;
    struct setting *e;
    int rc = slot(s, key, "bosch_selection_setting_set_bool", &e);
    if (rc != BOSCH_OK)
        return rc;
    e->type = BOSCH_SETTING_BOOL;
    e->v.b = value != 0;
    return BOSCH_OK;
}

size_t bosch_selection_setting_count(const bosch_selection *s)
{
    return s ? s->n_settings : 0;
}

const char *bosch_selection_setting_key(const bosch_selection *s, size_t i)
{
    return s && i < s->n_settings ? s->settings[i].key : NULL;
}

int bosch_selection_setting_type(const bosch_selection *s, const char *key)
{
    if (!s || !key)
        return BOSCH_E_INVALID;
    const struct setting *e = find(s, key);
    return e ? e->type : BOSCH_E_NOT_FOUND;
}

const char *bosch_selection_setting_string(const bosch_selection *s, const char *key)
{
    const struct setting *e = find(s, key);
    return e && e->type == BOSCH_SETTING_STRING ? e->v.s : NULL;
}

/* The entry of `key` when it has `type` (a double also takes an integer). */
static int lookup(const bosch_selection *s, const char *key, const void *out, int type,
                  const struct setting **e)
{
    if (!s || !key || !out)
        return BOSCH_E_INVALID;
    *e = find(s, key);
    if (!*e)
        return BOSCH_E_NOT_FOUND;
    if ((*e)->type != type && !(type == BOSCH_SETTING_DOUBLE && (*e)->type == BOSCH_SETTING_INT))
        return BOSCH_E_INVALID;
    return BOSCH_OK;
}

int bosch_selection_setting_int(const bosch_selection *s, const char *key, int64_t *out)
{
    const struct setting *e;
    int rc = lookup(s, key, out, BOSCH_SETTING_INT, &e);
    if (rc == BOSCH_OK)
        *out = e->v.i;
    return rc;
}

int bosch_selection_setting_double(const bosch_selection *s, const char *key, double *out)
{
    const struct setting *e;
    int rc = lookup(s, key, out, BOSCH_SETTING_DOUBLE, &e);
    if (rc == BOSCH_OK)
        *out = e->type == BOSCH_SETTING_INT ? (double)e->v.i : e->v.d;
    return rc;
}

int bosch_selection_setting_bool(const bosch_selection *s, const char *key, int *out)
{
    const struct setting *e;
    int rc = lookup(s, key, out, BOSCH_SETTING_BOOL, &e);
    if (rc == BOSCH_OK)
        *out = e->v.b;
    return rc;
}
