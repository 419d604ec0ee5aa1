/* Checked access to the json-c values of a tokenizer.json, and the first
 * failure of a load. */
#include "text/tokenizer_json.h"

#include <stdarg.h>
#include <stdio.h>

int tok_fail(struct tok_load *L, int status, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (L->status == BOSCH_OK) {
        text_create_fail(status, "%s: %s", L->fn, msg);
        L->status = status;
    }
    return status;
}

const char *tok_type_name(json_object *o)
{
    return o ? json_type_to_name(json_object_get_type(o)) : "null";
}

/* A member of an object; NULL when absent or null. */
json_object *tok_member(json_object *o, const char *key)
{
    json_object *v = NULL;
    return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

int tok_want_type(struct tok_load *L, json_object *o, json_type t, const char *path)
{
    if (json_object_is_type(o, t))
        return BOSCH_OK;
    return FAIL(L, "%s: expected %s, got %s", path, json_type_to_name(t), tok_type_name(o));
}

/* An optional boolean member (absent or null: dflt). */
int tok_opt_bool(struct tok_load *L, json_object *o, const char *key, const char *path, int dflt,
                 int *out)
{
    json_object *v = tok_member(o, key);
    *out = dflt;
    if (!v)
        return BOSCH_OK;
    if (!json_object_is_type(v, json_type_boolean))
        return FAIL(L, "%s.%s: expected boolean, got %s", path, key, tok_type_name(v));
    *out = json_object_get_boolean(v);
    return BOSCH_OK;
}

const char *tok_type_of(struct tok_load *L, json_object *o, const char *path)
{
    char p[96];
    if (tok_want_type(L, o, json_type_object, path))
        return NULL;
    json_object *ty = tok_member(o, "type");
    snprintf(p, sizeof p, "%s.type", path);
    if (!ty || !json_object_is_type(ty, json_type_string)) {
        FAIL(L, "%s: expected string, got %s", p, tok_type_name(ty));
        return NULL;
    }
    return json_object_get_string(ty);
}

/* An optional string member (absent or null: *out NULL). */
int tok_opt_string(struct tok_load *L, json_object *o, const char *key, const char *path,
                   const char **out, size_t *len)
{
    json_object *v = tok_member(o, key);
    *out = NULL;
    *len = 0;
    if (!v)
        return BOSCH_OK;
    if (!json_object_is_type(v, json_type_string))
        return FAIL(L, "%s.%s: expected string, got %s", path, key, tok_type_name(v));
    *out = json_object_get_string(v);
    *len = (size_t)json_object_get_string_len(v);
    return BOSCH_OK;
}
