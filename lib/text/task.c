/* Text tasks: samples of a prompt (plain text or chat messages), an answer
 * prefix and the answers; written as JSON Lines with json-c (read by
 * task_read.c, with strict validation). */
#include "text/task.h"

#include "text/common.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct text_sample {
    char *text; /* plain prompt, or NULL when given as messages */
    struct bosch_chat_message *messages;
    size_t n_messages;
    int style; /* enum bosch_chat_style of the messages */
    char **answers;
    size_t n_answers;
    char *answer_prefix; /* NULL: not given */
    char *target;        /* " a, b" */
    uint32_t max_new_tokens;
};

struct bosch_text_task {
    struct text_sample *s;
    size_t n, cap;
};

int text_known_role(const char *r)
{
    return r && (!strcmp(r, "system") || !strcmp(r, "user") || !strcmp(r, "assistant"));
}

static void sample_free(struct text_sample *s)
{
    free(s->text);
    for (size_t i = 0; i < s->n_messages; i++) {
        free((char *)s->messages[i].role);
        free((char *)s->messages[i].content);
    }
    free(s->messages);
    for (size_t i = 0; i < s->n_answers; i++)
        free(s->answers[i]);
    free(s->answers);
    free(s->answer_prefix);
    free(s->target);
}

bosch_text_task *text_task_new(void) { return calloc(1, sizeof(bosch_text_task)); }

BOSCH_TEXT_API void bosch_text_task_free(bosch_text_task *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++)
        sample_free(&t->s[i]);
    free(t->s);
    free(t);
}

int text_task_add(bosch_text_task *t, const char *text,
                  const struct bosch_chat_message *messages, size_t n_messages, int style,
                  const char *const *answers, size_t n_answers, const char *answer_prefix,
                  uint32_t max_new_tokens)
{
    if (!t || (!text) == (!n_messages) || (n_messages && !messages) || !n_answers || !answers ||
        (n_messages && !bosch_chat_style_name(style)))
        return BOSCH_E_INVALID;
    for (size_t i = 0; i < n_messages; i++)
        if (!text_known_role(messages[i].role) || !messages[i].content)
            return BOSCH_E_INVALID;
    for (size_t j = 0; j < n_answers; j++)
        if (!answers[j])
            return BOSCH_E_INVALID;
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 8;
        struct text_sample *s = realloc(t->s, cap * sizeof *s);
        if (!s)
            return BOSCH_E_NOMEM;
        t->s = s;
        t->cap = cap;
    }
    struct text_sample *s = &t->s[t->n];
    memset(s, 0, sizeof *s);
    s->style = n_messages ? style : BOSCH_CHAT_NONE;
    int ok = 1;
    if (text)
        ok = (s->text = strdup(text)) != NULL;
    if (ok && n_messages) {
        ok = (s->messages = calloc(n_messages, sizeof *s->messages)) != NULL;
        for (size_t i = 0; ok && i < n_messages; i++) {
            s->n_messages = i + 1;
            s->messages[i].role = strdup(messages[i].role);
            s->messages[i].content = strdup(messages[i].content);
            ok = s->messages[i].role && s->messages[i].content;
        }
    }
    if (ok)
        ok = (s->answers = calloc(n_answers, sizeof *s->answers)) != NULL;
    struct text_buf target = {0};
    for (size_t j = 0; ok && j < n_answers; j++) {
        s->n_answers = j + 1;
        ok = (s->answers[j] = strdup(answers[j])) != NULL &&
             text_buf_adds(&target, j ? ", " : " ") == BOSCH_OK &&
             text_buf_adds(&target, answers[j]) == BOSCH_OK;
    }
    s->target = target.data;
    if (ok && answer_prefix)
        ok = (s->answer_prefix = strdup(answer_prefix)) != NULL;
    s->max_new_tokens = max_new_tokens;
    if (!ok) {
        sample_free(s);
        return BOSCH_E_NOMEM;
    }
    t->n++;
    return BOSCH_OK;
}

/* ---------------------------------------------------------------------- */
/* Writing                                                                 */
/* ---------------------------------------------------------------------- */

static int add_str(json_object *o, const char *key, const char *s)
{
    json_object *v = json_object_new_string(s);
    if (!v)
        return BOSCH_E_NOMEM;
    if (json_object_object_add(o, key, v)) {
        json_object_put(v);
        return BOSCH_E_NOMEM;
    }
    return BOSCH_OK;
}

static json_object *sample_json(const struct text_sample *s)
{
    json_object *o = json_object_new_object(), *arr = NULL;
    int ok = o != NULL;
    if (ok && s->text)
        ok = add_str(o, "text", s->text) == BOSCH_OK;
    else if (ok) {
        ok = (arr = json_object_new_array()) && !json_object_object_add(o, "messages", arr);
        if (!ok)
            json_object_put(arr);
        for (size_t i = 0; ok && i < s->n_messages; i++) {
            json_object *m = json_object_new_object();
            ok = m && !json_object_array_add(arr, m);
            if (!ok)
                json_object_put(m);
            ok = ok && add_str(m, "role", s->messages[i].role) == BOSCH_OK &&
                 add_str(m, "content", s->messages[i].content) == BOSCH_OK;
        }
    }
    if (ok) {
        ok = (arr = json_object_new_array()) && !json_object_object_add(o, "answers", arr);
        if (!ok)
            json_object_put(arr);
    }
    for (size_t j = 0; ok && j < s->n_answers; j++) {
        json_object *v = json_object_new_string(s->answers[j]);
        ok = v && !json_object_array_add(arr, v);
        if (!ok)
            json_object_put(v);
    }
    if (ok && s->answer_prefix)
        ok = add_str(o, "answer_prefix", s->answer_prefix) == BOSCH_OK;
    /* Qwen3's, the default, is not written: such files read as before */
    if (ok && s->n_messages && s->style != BOSCH_CHAT_QWEN3)
        ok = add_str(o, "chat_format", bosch_chat_style_name(s->style)) == BOSCH_OK;
    if (ok && s->max_new_tokens) {
        json_object *v = json_object_new_int64(s->max_new_tokens);
        ok = v && !json_object_object_add(o, "max_new_tokens", v);
        if (!ok)
            json_object_put(v);
    }
    if (!ok) {
        json_object_put(o);
        return NULL;
    }
    return o;
}

BOSCH_TEXT_API int bosch_text_task_write_jsonl(const bosch_text_task *t, const char *path)
{
    if (!t || !path)
        return BOSCH_E_INVALID;
    FILE *f = fopen(path, "wb");
    if (!f)
        return BOSCH_E_IO;
    int st = BOSCH_OK;
    for (size_t i = 0; i < t->n && st == BOSCH_OK; i++) {
        json_object *o = sample_json(&t->s[i]);
        if (!o) {
            st = BOSCH_E_NOMEM;
            break;
        }
        const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                              JSON_C_TO_STRING_NOSLASHESCAPE);
        if (!s)
            st = BOSCH_E_NOMEM;
        else if (fputs(s, f) == EOF || fputc('\n', f) == EOF)
            st = BOSCH_E_IO;
        json_object_put(o);
    }
    if (fclose(f) != 0 && st == BOSCH_OK)
        st = BOSCH_E_IO;
    return st;
}

/* ---------------------------------------------------------------------- */
/* Access                                                                  */
/* ---------------------------------------------------------------------- */

BOSCH_TEXT_API size_t bosch_text_task_samples(const bosch_text_task *t) { return t ? t->n : 0; }

BOSCH_TEXT_API int bosch_text_task_prompt(const bosch_text_task *t, size_t i, unsigned chat_flags,
                                          char **text, size_t *len)
{
    if (!t || i >= t->n || !text || !len ||
        (chat_flags & ~(unsigned)(BOSCH_CHAT_GENERATION_PROMPT | BOSCH_CHAT_THINKING)))
        return BOSCH_E_INVALID;
    const struct text_sample *s = &t->s[i];
    struct text_buf b = {0};
    int st;
    if (s->text)
        st = text_buf_adds(&b, s->text);
    else {
        char *chat = NULL;
        size_t n = 0;
        /* The prompt always ends with the assistant's turn opened: the
         * model continues it. */
        st = bosch_chat_format(s->style, s->messages, s->n_messages,
                               BOSCH_CHAT_GENERATION_PROMPT | (chat_flags & BOSCH_CHAT_THINKING),
                               &chat, &n);
        if (st == BOSCH_OK) {
            b.data = chat;
            b.len = b.cap = n;
            st = text_buf_add(&b, "", 0); /* capacity unknown: regrow */
        }
    }
    if (st == BOSCH_OK && s->answer_prefix)
        st = text_buf_adds(&b, s->answer_prefix);
    if (st != BOSCH_OK) {
        text_buf_free(&b);
        return st;
    }
    *text = b.data;
    *len = b.len;
    return BOSCH_OK;
}

BOSCH_TEXT_API enum bosch_chat_style bosch_text_task_chat_style(const bosch_text_task *t,
                                                               size_t i)
{
    return t && i < t->n ? (enum bosch_chat_style)t->s[i].style : BOSCH_CHAT_NONE;
}

BOSCH_TEXT_API int bosch_text_task_set_chat_style(bosch_text_task *t,
                                                  enum bosch_chat_style style)
{
    if (!t || !bosch_chat_style_name(style))
        return BOSCH_E_INVALID;
    for (size_t i = 0; i < t->n; i++)
        if (t->s[i].n_messages)
            t->s[i].style = style;
    return BOSCH_OK;
}

BOSCH_TEXT_API size_t bosch_text_task_answers(const bosch_text_task *t, size_t i)
{
    return t && i < t->n ? t->s[i].n_answers : 0;
}

BOSCH_TEXT_API const char *bosch_text_task_answer(const bosch_text_task *t, size_t i, size_t j)
{
    return t && i < t->n && j < t->s[i].n_answers ? t->s[i].answers[j] : NULL;
}

BOSCH_TEXT_API const char *bosch_text_task_target(const bosch_text_task *t, size_t i)
{
    return t && i < t->n ? t->s[i].target : NULL;
}

BOSCH_TEXT_API uint32_t bosch_text_task_max_new_tokens(const bosch_text_task *t, size_t i)
{
    return t && i < t->n ? t->s[i].max_new_tokens : 0;
}

/* ---------------------------------------------------------------------- */
/* Scoring                                                                 */
/* ---------------------------------------------------------------------- */

static int lower(int c) { return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c; }

static int contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (const char *h = hay; *h; h++) {
        size_t k = 0;
        while (k < n && h[k] && lower((unsigned char)h[k]) == lower((unsigned char)needle[k]))
            k++;
        if (k == n)
            return 1;
    }
    return n == 0;
}

BOSCH_TEXT_API double bosch_text_match_all(const char *output, const char *const *answers, size_t n)
{
    if (!answers || !n)
        return 0.0;
    size_t found = 0;
    for (size_t j = 0; j < n; j++)
        if (answers[j] && contains_nocase(output ? output : "", answers[j]))
            found++;
    return (double)found / (double)n;
}
