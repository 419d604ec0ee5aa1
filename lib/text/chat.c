/* Qwen3's chat format: the chat_template of Qwen3's tokenizer_config.json
 * for messages without tools, step by step (the reasoning of assistant turns
 * after the last user query keeps its think block; earlier ones lose it). */
#include "text/common.h"

#include <string.h>

/* A byte range of a message's content. */
struct span {
    const char *s;
    size_t n;
};

static struct span lstrip_nl(struct span x)
{
    while (x.n && x.s[0] == '\n') {
        x.s++;
        x.n--;
    }
    return x;
}

static struct span rstrip_nl(struct span x)
{
    while (x.n && x.s[x.n - 1] == '\n')
        x.n--;
    return x;
}

/* The last occurrence of pat in x, or NULL. */
static const char *find_last(struct span x, const char *pat)
{
    size_t m = strlen(pat);
    for (size_t i = x.n >= m ? x.n - m + 1 : 0; i-- > 0;)
        if (!memcmp(x.s + i, pat, m))
            return x.s + i;
    return NULL;
}

static const char *find_first(struct span x, const char *pat)
{
    size_t m = strlen(pat);
    for (size_t i = 0; i + m <= x.n; i++)
        if (!memcmp(x.s + i, pat, m))
            return x.s + i;
    return NULL;
}

static int starts_ends(const char *c, const char *pre, const char *suf)
{
    size_t n = strlen(c), a = strlen(pre), b = strlen(suf);
    return n >= a && n >= b && !strncmp(c, pre, a) && !strcmp(c + n - b, suf);
}

static int add_span(struct text_buf *b, struct span x) { return text_buf_add(b, x.s, x.n); }

/* One assistant turn: its reasoning split off the content as the template
 * does (content after the last </think>; reasoning between the last <think>
 * and the first </think>). */
static int assistant(struct text_buf *b, const char *c, int after_query, int last)
{
    struct span content = {c, strlen(c)}, reasoning = {"", 0};
    const char *close = find_first(content, "</think>");
    if (close) {
        struct span whole = content;
        const char *lc = find_last(whole, "</think>");
        content = lstrip_nl((struct span){lc + 8, (size_t)(whole.s + whole.n - lc - 8)});
        struct span before = rstrip_nl((struct span){whole.s, (size_t)(close - whole.s)});
        const char *open = find_last(before, "<think>");
        if (open)
            before = (struct span){open + 7, (size_t)(before.s + before.n - open - 7)};
        reasoning = lstrip_nl(before);
    }
    int st = text_buf_adds(b, "<|im_start|>assistant\n");
    if (after_query && (last || reasoning.n)) {
        st = st ? st : text_buf_adds(b, "<think>\n");
        st = st ? st : add_span(b, rstrip_nl(lstrip_nl(reasoning)));
        st = st ? st : text_buf_adds(b, "\n</think>\n\n");
        content = lstrip_nl(content);
    }
    st = st ? st : add_span(b, content);
    return st ? st : text_buf_adds(b, "<|im_end|>\n");
}

static int render(struct text_buf *b, const struct bosch_chat_message *m, size_t n,
                  unsigned flags)
{
    int st = BOSCH_OK;
    if (n && !strcmp(m[0].role, "system")) {
        st = text_buf_adds(b, "<|im_start|>system\n");
        st = st ? st : text_buf_adds(b, m[0].content);
        st = st ? st : text_buf_adds(b, "<|im_end|>\n");
    }
    /* the last user turn that is not a tool response */
    size_t last_query = n ? n - 1 : 0;
    for (size_t i = n; i-- > 0;)
        if (!strcmp(m[i].role, "user") &&
            !starts_ends(m[i].content, "<tool_response>", "</tool_response>")) {
            last_query = i;
            break;
        }
    for (size_t i = 0; i < n && !st; i++) {
        if (!strcmp(m[i].role, "user") || (!strcmp(m[i].role, "system") && i > 0)) {
            st = text_buf_adds(b, "<|im_start|>");
            st = st ? st : text_buf_adds(b, m[i].role);
            st = st ? st : text_buf_adds(b, "\n");
            st = st ? st : text_buf_adds(b, m[i].content);
            st = st ? st : text_buf_adds(b, "<|im_end|>\n");
        } else if (!strcmp(m[i].role, "assistant")) {
            st = assistant(b, m[i].content, i > last_query, i + 1 == n);
        }
    }
    if (!st && (flags & BOSCH_CHAT_GENERATION_PROMPT)) {
        st = text_buf_adds(b, "<|im_start|>assistant\n");
        if (!st && !(flags & BOSCH_CHAT_THINKING))
            st = text_buf_adds(b, "<think>\n\n</think>\n\n");
    }
    return st;
}

int chat_check_args(const struct bosch_chat_message *messages, size_t n, char **text,
                    size_t *len)
{
    if (!text || !len || (!messages && n))
        return BOSCH_E_INVALID;
    *text = NULL;
    *len = 0;
    for (size_t i = 0; i < n; i++) {
        const char *r = messages[i].role;
        if (!r || !messages[i].content ||
            (strcmp(r, "system") && strcmp(r, "user") && strcmp(r, "assistant")))
            return BOSCH_E_INVALID;
    }
    return 0;
}

BOSCH_TEXT_API int bosch_chat_format_qwen3(const struct bosch_chat_message *messages, size_t n,
                                           unsigned flags, char **text, size_t *len)
{
    if (chat_check_args(messages, n, text, len))
        return BOSCH_E_INVALID;
    struct text_buf b = {0};
    int st = text_buf_add(&b, "", 0);
    st = st ? st : render(&b, messages, n, flags);
    if (st) {
        text_buf_free(&b);
        return st;
    }
    *text = b.data;
    *len = b.len;
    return BOSCH_OK;
}
