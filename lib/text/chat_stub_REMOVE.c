/* TEMPORARY STUB -- DELETE AT MERGE. Stands in for the chat format
 * (lib/text/chat.c, branch `tok`) and bosch_tokenizer_encode (lib/text/
 * tokenizer*.c) until they land, so that the ruler branch links and its
 * tests run. The chat format is Qwen3's for messages without tools; the
 * encoder refuses every call. Remove this file and its line in
 * lib/text/meson.build when merging `tok`. */
#include "text/common.h"

#include <stdlib.h>
#include <string.h>

BOSCH_TEXT_API int bosch_chat_format_qwen3(const struct bosch_chat_message *messages, size_t n,
                                           unsigned flags, char **text, size_t *len)
{
    if ((!messages && n) || !text || !len)
        return BOSCH_E_INVALID;
    struct text_buf b = {0};
    int st = text_buf_add(&b, "", 0);
    for (size_t i = 0; i < n && st == BOSCH_OK; i++) {
        const char *role = messages[i].role;
        if (!role || !messages[i].content ||
            (strcmp(role, "system") && strcmp(role, "user") && strcmp(role, "assistant"))) {
            text_buf_free(&b);
            return BOSCH_E_INVALID;
        }
        st = text_buf_adds(&b, "<|im_start|>");
        if (st == BOSCH_OK) st = text_buf_adds(&b, role);
        if (st == BOSCH_OK) st = text_buf_adds(&b, "\n");
        if (st == BOSCH_OK) st = text_buf_adds(&b, messages[i].content);
        if (st == BOSCH_OK) st = text_buf_adds(&b, "<|im_end|>\n");
    }
    if (st == BOSCH_OK && (flags & BOSCH_CHAT_GENERATION_PROMPT)) {
        st = text_buf_adds(&b, "<|im_start|>assistant\n");
        if (st == BOSCH_OK && !(flags & BOSCH_CHAT_THINKING))
            st = text_buf_adds(&b, "<think>\n\n</think>\n\n");
    }
    if (st != BOSCH_OK) {
        text_buf_free(&b);
        return st;
    }
    *text = b.data;
    *len = b.len;
    return BOSCH_OK;
}

BOSCH_TEXT_API int bosch_tokenizer_encode(const bosch_tokenizer *tok, const char *text,
                                          size_t len, unsigned flags, int32_t **ids,
                                          size_t *n)
{
    (void)tok, (void)text, (void)len, (void)flags, (void)ids, (void)n;
    return BOSCH_E_INVALID;
}
