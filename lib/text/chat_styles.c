/* The chat formats besides Qwen3's (chat.c): ChatML (Qwen2's and SmolLM2's
 * template without its default system message) and Llama 3's, as their
 * chat_template renders messages without tools; the choice of a format from
 * a tokenizer's special tokens. */
#include "text/tokenizer.h"

#include <string.h>

static const char *const style_names[] = {NULL, "qwen3", "chatml", "llama3"};

BOSCH_TEXT_API const char *bosch_chat_style_name(enum bosch_chat_style style)
{
    return style > BOSCH_CHAT_NONE && style <= BOSCH_CHAT_LLAMA3 ? style_names[style] : NULL;
}

BOSCH_TEXT_API enum bosch_chat_style bosch_chat_style_parse(const char *name)
{
    for (int i = BOSCH_CHAT_QWEN3; name && i <= BOSCH_CHAT_LLAMA3; i++)
        if (!strcmp(name, style_names[i]))
            return (enum bosch_chat_style)i;
    return BOSCH_CHAT_NONE;
}

static int has(const bosch_tokenizer *tok, const char *token)
{
    return bosch_tokenizer_token_id(tok, token) >= 0;
}

BOSCH_TEXT_API enum bosch_chat_style bosch_chat_style_for(const bosch_tokenizer *tok)
{
    if (!tok)
        return BOSCH_CHAT_NONE;
    if (has(tok, "<|start_header_id|>") && has(tok, "<|end_header_id|>") &&
        has(tok, "<|eot_id|>") && has(tok, "<|begin_of_text|>"))
        return BOSCH_CHAT_LLAMA3;
    if (has(tok, "<|im_start|>") && has(tok, "<|im_end|>"))
        return has(tok, "<think>") && has(tok, "</think>") ? BOSCH_CHAT_QWEN3 : BOSCH_CHAT_CHATML;
    return BOSCH_CHAT_NONE;
}

static int chatml(struct text_buf *b, const struct bosch_chat_message *m, size_t n,
                  unsigned flags)
{
    int st = BOSCH_OK;
    for (size_t i = 0; i < n && !st; i++) {
        st = text_buf_adds(b, "<|im_start|>");
        st = st ? st : text_buf_adds(b, m[i].role);
        st = st ? st : text_buf_adds(b, "\n");
        st = st ? st : text_buf_adds(b, m[i].content);
        st = st ? st : text_buf_adds(b, "<|im_end|>\n");
    }
    if (!st && (flags & BOSCH_CHAT_GENERATION_PROMPT))
        st = text_buf_adds(b, "<|im_start|>assistant\n");
    return st;
}

/* Meta's template: the content `| trim`med (the reference's jinja trims as
 * JavaScript's String.trim does), the BOS with the first message only. */
static int llama3(struct text_buf *b, const struct bosch_chat_message *m, size_t n,
                  unsigned flags)
{
    int st = BOSCH_OK;
    for (size_t i = 0; i < n && !st; i++) {
        const char *c = m[i].content;
        size_t len = strlen(c), from = tok_trim_start(c, len);
        size_t to = from + tok_trim_end(c + from, len - from);
        st = i ? BOSCH_OK : text_buf_adds(b, "<|begin_of_text|>");
        st = st ? st : text_buf_adds(b, "<|start_header_id|>");
        st = st ? st : text_buf_adds(b, m[i].role);
        st = st ? st : text_buf_adds(b, "<|end_header_id|>\n\n");
        st = st ? st : text_buf_add(b, c + from, to - from);
        st = st ? st : text_buf_adds(b, "<|eot_id|>");
    }
    if (!st && (flags & BOSCH_CHAT_GENERATION_PROMPT))
        st = text_buf_adds(b, "<|start_header_id|>assistant<|end_header_id|>\n\n");
    return st;
}

BOSCH_TEXT_API int bosch_chat_format(enum bosch_chat_style style,
                                     const struct bosch_chat_message *messages, size_t n,
                                     unsigned flags, char **text, size_t *len)
{
    if (style == BOSCH_CHAT_QWEN3)
        return bosch_chat_format_qwen3(messages, n, flags, text, len);
    if ((style != BOSCH_CHAT_CHATML && style != BOSCH_CHAT_LLAMA3) ||
        chat_check_args(messages, n, text, len))
        return BOSCH_E_INVALID;
    struct text_buf b = {0};
    int st = text_buf_add(&b, "", 0);
    if (!st)
        st = style == BOSCH_CHAT_CHATML ? chatml(&b, messages, n, flags)
                                        : llama3(&b, messages, n, flags);
    if (st) {
        text_buf_free(&b);
        return st;
    }
    *text = b.data;
    *len = b.len;
    return BOSCH_OK;
}
