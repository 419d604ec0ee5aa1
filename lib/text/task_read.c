/* Text tasks read from JSON Lines with json-c, with strict validation:
 * every error names the file, the line and the field (task.h builds the
 * samples). */
#include "text/task.h"

#include "text/common.h"
#include "util/json_dup.h"
#include "util/read_file.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define READ_FN "bosch_text_task_read_jsonl"

/* A key given twice in the line's objects (json-c kept the last value):
 * refused, 0 when there is none. */
static int refuse_duplicate(const char *path, size_t line, const char *s, size_t n)
{
    struct util_json_dup dup;
    int twice = util_json_dup_find(s, n, &dup);
    if (twice < 0)
        text_create_fail(BOSCH_E_NOMEM, READ_FN ": out of memory");
    if (twice > 0) {
        char what[160];
        util_json_dup_describe(&dup, what, sizeof what);
        text_create_fail(BOSCH_E_INVALID, READ_FN ": %s:%zu: %s (give each key once)", path, line,
                         what);
    }
    return twice;
}

/* The string of a JSON value that must be one, or NULL (message in err).
 * Strings with an embedded NUL are refused: the API's strings are C
 * strings. */
static const char *get_string(json_object *v, const char *what, char *err, size_t errlen)
{
    if (!json_object_is_type(v, json_type_string)) {
        snprintf(err, errlen, "%s must be a string", what);
        return NULL;
    }
    const char *s = json_object_get_string(v);
    if (strlen(s) != (size_t)json_object_get_string_len(v)) {
        snprintf(err, errlen, "%s holds a NUL character", what);
        return NULL;
    }
    return s;
}

/* Validates one parsed line and appends its sample; BOSCH_E_INVALID with
 * the reason in err, or BOSCH_E_NOMEM. */
/* One element of "messages": {"role": ..., "content": ...} (strings borrowed
 * from the JSON). */
static int read_message(json_object *m, size_t i, struct bosch_chat_message *msg, char *err,
                        size_t errlen)
{
    json_object *role = NULL, *content = NULL;
    char what[64];
    if (!json_object_is_type(m, json_type_object)) {
        snprintf(err, errlen, "\"messages\"[%zu] must be an object", i);
        return BOSCH_E_INVALID;
    }
    json_object_object_foreach(m, mkey, mval)
    {
        if (!strcmp(mkey, "role"))
            role = mval;
        else if (!strcmp(mkey, "content"))
            content = mval;
        else {
            snprintf(err, errlen, "\"messages\"[%zu]: unknown field \"%.64s\"", i, mkey);
            return BOSCH_E_INVALID;
        }
    }
    snprintf(what, sizeof what, "\"messages\"[%zu].role", i);
    if (!json_object_object_get_ex(m, "role", NULL)) {
        snprintf(err, errlen, "%s is missing", what);
        return BOSCH_E_INVALID;
    }
    if (!(msg->role = get_string(role, what, err, errlen)))
        return BOSCH_E_INVALID;
    if (!text_known_role(msg->role)) {
        snprintf(err, errlen, "%s: unknown role \"%.32s\" (system, user or assistant)", what,
                 msg->role);
        return BOSCH_E_INVALID;
    }
    snprintf(what, sizeof what, "\"messages\"[%zu].content", i);
    if (!json_object_object_get_ex(m, "content", NULL)) {
        snprintf(err, errlen, "%s is missing", what);
        return BOSCH_E_INVALID;
    }
    if (!(msg->content = get_string(content, what, err, errlen)))
        return BOSCH_E_INVALID;
    return BOSCH_OK;
}

/* "messages": a non-empty array of messages, into *out (calloc'd). */
static int read_messages(json_object *messages, struct bosch_chat_message **out, size_t *n,
                         char *err, size_t errlen)
{
    if (!json_object_is_type(messages, json_type_array) || !json_object_array_length(messages)) {
        snprintf(err, errlen, "\"messages\" must be a non-empty array");
        return BOSCH_E_INVALID;
    }
    size_t count = json_object_array_length(messages);
    struct bosch_chat_message *msgs = calloc(count, sizeof *msgs);
    if (!msgs)
        return BOSCH_E_NOMEM;
    for (size_t i = 0; i < count; i++) {
        int st = read_message(json_object_array_get_idx(messages, i), i, &msgs[i], err, errlen);
        if (st != BOSCH_OK) {
            free(msgs);
            return st;
        }
    }
    *out = msgs;
    *n = count;
    return BOSCH_OK;
}

/* "answers": a non-empty array of non-empty strings, into *out (calloc'd). */
static int read_answers(json_object *o, json_object *answers, const char ***out, size_t *n,
                        char *err, size_t errlen)
{
    if (!json_object_object_get_ex(o, "answers", NULL)) {
        snprintf(err, errlen, "\"answers\" is missing");
        return BOSCH_E_INVALID;
    }
    if (!json_object_is_type(answers, json_type_array) || !json_object_array_length(answers)) {
        snprintf(err, errlen, "\"answers\" must be a non-empty array of strings");
        return BOSCH_E_INVALID;
    }
    size_t count = json_object_array_length(answers);
    const char **ans = calloc(count, sizeof *ans);
    if (!ans)
        return BOSCH_E_NOMEM;
    for (size_t j = 0; j < count; j++) {
        char what[48];
        snprintf(what, sizeof what, "\"answers\"[%zu]", j);
        if (!(ans[j] = get_string(json_object_array_get_idx(answers, j), what, err, errlen))) {
            free(ans);
            return BOSCH_E_INVALID;
        }
        if (!ans[j][0]) {
            /* "" occurs in every output: it would score as found. */
            snprintf(err, errlen, "%s is empty", what);
            free(ans);
            return BOSCH_E_INVALID;
        }
    }
    *out = ans;
    *n = count;
    return BOSCH_OK;
}

/* "max_new_tokens" when present (else *out stays 0). */
static int read_max_new(json_object *o, json_object *mnt, uint32_t *out, char *err,
                        size_t errlen)
{
    if (!json_object_object_get_ex(o, "max_new_tokens", NULL))
        return BOSCH_OK;
    errno = 0;
    int64_t v = json_object_get_int64(mnt);
    if (!json_object_is_type(mnt, json_type_int) || errno || v < 1 || v > UINT32_MAX) {
        snprintf(err, errlen, "\"max_new_tokens\" must be an integer in 1..%u",
                 (unsigned)UINT32_MAX);
        return BOSCH_E_INVALID;
    }
    *out = (uint32_t)v;
    return BOSCH_OK;
}

static int add_object(bosch_text_task *t, json_object *o, char *err, size_t errlen)
{
    if (!json_object_is_type(o, json_type_object)) {
        snprintf(err, errlen, "not a JSON object");
        return BOSCH_E_INVALID;
    }
    json_object *text = NULL, *messages = NULL, *answers = NULL, *prefix = NULL, *mnt = NULL;
    json_object *format = NULL;
    json_object_object_foreach(o, key, val)
    {
        if (!strcmp(key, "text"))
            text = val;
        else if (!strcmp(key, "messages"))
            messages = val;
        else if (!strcmp(key, "answers"))
            answers = val;
        else if (!strcmp(key, "answer_prefix"))
            prefix = val;
        else if (!strcmp(key, "max_new_tokens"))
            mnt = val;
        else if (!strcmp(key, "chat_format"))
            format = val;
        else {
            snprintf(err, errlen, "unknown field \"%.64s\"", key);
            return BOSCH_E_INVALID;
        }
    }
    /* json-c gives NULL for a JSON null: a present null is a wrong type. */
    int has_text = json_object_object_get_ex(o, "text", NULL);
    int has_messages = json_object_object_get_ex(o, "messages", NULL);
    if (has_text && has_messages) {
        snprintf(err, errlen, "both \"text\" and \"messages\" (give one)");
        return BOSCH_E_INVALID;
    }
    if (!has_text && !has_messages) {
        snprintf(err, errlen, "neither \"text\" nor \"messages\"");
        return BOSCH_E_INVALID;
    }
    const char *text_s = NULL;
    if (has_text && !(text_s = get_string(text, "\"text\"", err, errlen)))
        return BOSCH_E_INVALID;
    int style = BOSCH_CHAT_QWEN3;
    if (json_object_object_get_ex(o, "chat_format", NULL)) {
        const char *f = get_string(format, "\"chat_format\"", err, errlen);
        if (!f)
            return BOSCH_E_INVALID;
        if (has_text) {
            snprintf(err, errlen, "\"chat_format\" with \"text\" (it formats \"messages\")");
            return BOSCH_E_INVALID;
        }
        if (!(style = bosch_chat_style_parse(f))) {
            snprintf(err, errlen, "\"chat_format\": \"%.40s\" is not one of qwen3, chatml, llama3",
                     f);
            return BOSCH_E_INVALID;
        }
    }

    struct bosch_chat_message *msgs = NULL;
    size_t n_msgs = 0, n_ans = 0;
    const char **ans = NULL;
    const char *prefix_s = NULL;
    uint32_t max_new = 0;
    int st = text_s ? BOSCH_OK : read_messages(messages, &msgs, &n_msgs, err, errlen);
    if (st == BOSCH_OK)
        st = read_answers(o, answers, &ans, &n_ans, err, errlen);
    if (st == BOSCH_OK && json_object_object_get_ex(o, "answer_prefix", NULL) &&
        !(prefix_s = get_string(prefix, "\"answer_prefix\"", err, errlen)))
        st = BOSCH_E_INVALID;
    if (st == BOSCH_OK)
        st = read_max_new(o, mnt, &max_new, err, errlen);
    if (st == BOSCH_OK)
        st = text_task_add(t, text_s, msgs, n_msgs, style, ans, n_ans, prefix_s, max_new);
    free(msgs);
    free(ans);
    return st;
}

static int blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
            return 0;
    return 1;
}

BOSCH_TEXT_API bosch_text_task *bosch_text_task_read_jsonl(const char *path)
{
    if (!path) {
        text_create_fail(BOSCH_E_INVALID, READ_FN ": path is NULL");
        return NULL;
    }
    size_t len = 0;
    char *data = NULL;
    int err_no = util_read_file(path, 0, &data, &len);
    if (err_no) {
        text_create_fail(err_no == ENOMEM ? BOSCH_E_NOMEM : BOSCH_E_IO, READ_FN ": %s: %s",
                         path, util_file_error(err_no));
        return NULL;
    }
    bosch_text_task *t = text_task_new();
    json_tokener *tok = json_tokener_new();
    if (!t || !tok) {
        text_create_fail(BOSCH_E_NOMEM, READ_FN ": out of memory");
        goto fail;
    }
    /* Strict JSON, and strings must be valid UTF-8. */
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    size_t line = 0;
    for (size_t pos = 0; pos < len;) {
        const char *s = data + pos;
        const char *nl = memchr(s, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - s) : len - pos;
        pos += n + (nl != NULL);
        line++;
        if (blank(s, n)) /* blank lines, a trailing one included, are skipped */
            continue;
        if (memchr(s, '\0', n)) {
            text_create_fail(BOSCH_E_INVALID, READ_FN ": %s:%zu: NUL byte in the line", path, line);
            goto fail;
        }
        if (n > (size_t)INT32_MAX) {
            text_create_fail(BOSCH_E_INVALID, READ_FN ": %s:%zu: line longer than 2 GiB", path, line);
            goto fail;
        }
        json_tokener_reset(tok);
        json_object *o = json_tokener_parse_ex(tok, s, (int)n);
        enum json_tokener_error je = json_tokener_get_error(tok);
        if (!o && je == json_tokener_continue) {
            text_create_fail(BOSCH_E_INVALID, READ_FN ": %s:%zu: truncated JSON (the line ends "
                             "inside a value)", path, line);
            goto fail;
        }
        if (je != json_tokener_success) {
            text_create_fail(BOSCH_E_INVALID, READ_FN ": %s:%zu: invalid JSON at byte %zu: %s",
                             path, line, json_tokener_get_parse_end(tok) + 1,
                             json_tokener_error_desc(je));
            json_object_put(o);
            goto fail;
        }
        if (!blank(s + json_tokener_get_parse_end(tok), n - json_tokener_get_parse_end(tok))) {
            text_create_fail(BOSCH_E_INVALID, READ_FN ": %s:%zu: text after the JSON object at "
                             "byte %zu", path, line, json_tokener_get_parse_end(tok) + 1);
            json_object_put(o);
            goto fail;
        }
        if (refuse_duplicate(path, line, s, n)) {
            json_object_put(o);
            goto fail;
        }
        char why[256];
        int st = add_object(t, o, why, sizeof why);
        json_object_put(o);
        if (st == BOSCH_E_NOMEM) {
            text_create_fail(st, READ_FN ": %s:%zu: out of memory", path, line);
            goto fail;
        }
        if (st != BOSCH_OK) {
            text_create_fail(st, READ_FN ": %s:%zu: %s", path, line, why);
            goto fail;
        }
    }
    if (!bosch_text_task_samples(t)) {
        text_create_fail(BOSCH_E_INVALID, READ_FN ": %s: no samples", path);
        goto fail;
    }
    json_tokener_free(tok);
    free(data);
    return t;
fail:
    if (tok)
        json_tokener_free(tok);
    bosch_text_task_free(t);
    free(data);
    return NULL;
}

