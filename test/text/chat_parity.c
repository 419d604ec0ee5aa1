/* C side of chat-parity: renders each conversation of conversations.json
 * with bosch_chat_format in STYLE (default qwen3: bosch_chat_format_qwen3)
 * and requires the bytes that reference/chat.mjs rendered with the real
 * template.
 *   chat_parity CONVERSATIONS.json RENDERED.json [STYLE] */
#include <bosch/text.h>

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

static unsigned flags_of(json_object *c)
{
    json_object *f = json_object_object_get(c, "flags");
    unsigned fl = 0;
    for (size_t i = 0; i < json_object_array_length(f); i++) {
        const char *s = json_object_get_string(json_object_array_get_idx(f, i));
        fl |= !strcmp(s, "generation_prompt") ? BOSCH_CHAT_GENERATION_PROMPT : 0;
        fl |= !strcmp(s, "thinking") ? BOSCH_CHAT_THINKING : 0;
    }
    return fl;
}

int main(int argc, char **argv)
{
    enum bosch_chat_style style = argc == 4 ? bosch_chat_style_parse(argv[3]) : BOSCH_CHAT_QWEN3;
    if ((argc != 3 && argc != 4) || !style) {
        fprintf(stderr, "usage: %s CONVERSATIONS.json RENDERED.json [qwen3|chatml|llama3]\n",
                argv[0]);
        return 2;
    }
    json_object *convs = json_object_from_file(argv[1]), *want = json_object_from_file(argv[2]);
    if (!convs || !want || json_object_array_length(convs) != json_object_array_length(want)) {
        fprintf(stderr, "cannot read %s and %s (or they differ in length)\n", argv[1], argv[2]);
        return 1;
    }
    size_t n = json_object_array_length(convs), bad = 0;
    for (size_t i = 0; i < n; i++) {
        json_object *c = json_object_array_get_idx(convs, i);
        json_object *msgs = json_object_object_get(c, "messages");
        size_t m = json_object_array_length(msgs);
        struct bosch_chat_message mv[32];
        if (m > 32)
            return 1;
        for (size_t k = 0; k < m; k++) {
            json_object *o = json_object_array_get_idx(msgs, k);
            mv[k].role = json_object_get_string(json_object_object_get(o, "role"));
            mv[k].content = json_object_get_string(json_object_object_get(o, "content"));
        }
        char *s;
        size_t len;
        json_object *w = json_object_array_get_idx(want, i);
        const char *ws = json_object_get_string(w);
        size_t wl = (size_t)json_object_get_string_len(w);
        int st = style == BOSCH_CHAT_QWEN3 ? bosch_chat_format_qwen3(mv, m, flags_of(c), &s, &len)
                                           : bosch_chat_format(style, mv, m, flags_of(c), &s, &len);
        if (st != BOSCH_OK) {
            fprintf(stderr, "conversation %zu: bosch_chat_format (%s) failed\n", i,
                    bosch_chat_style_name(style));
            bad++;
            continue;
        }
        if (len != wl || memcmp(s, ws, wl)) {
            size_t d = 0;
            while (d < len && d < wl && s[d] == ws[d])
                d++;
            fprintf(stderr, "MISMATCH conversation %zu at byte %zu:\n--- libbosch-text:\n%s\n"
                    "--- template:\n%s\n---\n", i, d, s, ws);
            bad++;
        }
        bosch_text_free(s);
    }
    printf("chat parity (%s): %zu conversations, %zu identical to the template's rendering\n",
           bosch_chat_style_name(style), n, n - bad);
    json_object_put(convs);
    json_object_put(want);
    return bad || !n ? 1 : 0;
}
