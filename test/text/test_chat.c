/* Unit tests of the chat formats: Qwen3's, ChatML, Llama 3's, and the
 * choice of one from a tokenizer (no node needed; the byte-exact check
 * against the real templates is chat-parity). */
#include <bosch/text.h>

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void expect(const struct bosch_chat_message *m, size_t n, unsigned flags, const char *want)
{
    char *s = NULL;
    size_t len = 0;
    ck_assert_int_eq(bosch_chat_format_qwen3(m, n, flags, &s, &len), BOSCH_OK);
    ck_assert_str_eq(s, want);
    ck_assert_uint_eq(len, strlen(want));
    bosch_text_free(s);
}

START_TEST(user_turn_and_prompts)
{
    const struct bosch_chat_message m[] = {{"user", "Hi"}};
    expect(m, 1, 0, "<|im_start|>user\nHi<|im_end|>\n");
    expect(m, 1, BOSCH_CHAT_GENERATION_PROMPT,
           "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
    expect(m, 1, BOSCH_CHAT_GENERATION_PROMPT | BOSCH_CHAT_THINKING,
           "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
    expect(NULL, 0, BOSCH_CHAT_GENERATION_PROMPT | BOSCH_CHAT_THINKING, "<|im_start|>assistant\n");
}
END_TEST

START_TEST(system_and_history)
{
    const struct bosch_chat_message m[] = {
        {"system", "Be brief."},
        {"user", "Q1"},
        {"assistant", "<think>\nold reasoning\n</think>\n\nA1"},
        {"user", "Q2"},
        {"assistant", "<think>\nnew\n</think>\n\nA2"},
    };
    /* the think block of a turn before the last query is dropped; the last
     * turn after it keeps its own */
    expect(m, 5, 0,
           "<|im_start|>system\nBe brief.<|im_end|>\n"
           "<|im_start|>user\nQ1<|im_end|>\n"
           "<|im_start|>assistant\nA1<|im_end|>\n"
           "<|im_start|>user\nQ2<|im_end|>\n"
           "<|im_start|>assistant\n<think>\nnew\n</think>\n\nA2<|im_end|>\n");
    /* a system message later in the conversation is a turn of its own */
    const struct bosch_chat_message late[] = {{"user", "x"}, {"system", "y"}};
    expect(late, 2, 0, "<|im_start|>user\nx<|im_end|>\n<|im_start|>system\ny<|im_end|>\n");
    /* the last assistant turn after the query gets an (empty) think block */
    const struct bosch_chat_message last[] = {{"user", "x"}, {"assistant", "plain"}};
    expect(last, 2, 0,
           "<|im_start|>user\nx<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nplain"
           "<|im_end|>\n");
}
END_TEST

START_TEST(invalid_arguments)
{
    char *s = (char *)1;
    size_t len;
    const struct bosch_chat_message bad[] = {{"user", "x"}, {"tool", "y"}};
    ck_assert_int_eq(bosch_chat_format_qwen3(bad, 2, 0, &s, &len), BOSCH_E_INVALID);
    ck_assert_ptr_null(s);
    const struct bosch_chat_message nul[] = {{NULL, "x"}};
    ck_assert_int_eq(bosch_chat_format_qwen3(nul, 1, 0, &s, &len), BOSCH_E_INVALID);
    const struct bosch_chat_message noc[] = {{"user", NULL}};
    ck_assert_int_eq(bosch_chat_format_qwen3(noc, 1, 0, &s, &len), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_chat_format_qwen3(NULL, 1, 0, &s, &len), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_chat_format_qwen3(bad, 1, 0, NULL, &len), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_chat_format_qwen3(bad, 1, 0, &s, NULL), BOSCH_E_INVALID);
}
END_TEST

static void expect_style(enum bosch_chat_style style, const struct bosch_chat_message *m,
                         size_t n, unsigned flags, const char *want)
{
    char *s = NULL;
    size_t len = 0;
    ck_assert_int_eq(bosch_chat_format(style, m, n, flags, &s, &len), BOSCH_OK);
    ck_assert_str_eq(s, want);
    ck_assert_uint_eq(len, strlen(want));
    bosch_text_free(s);
}

START_TEST(chatml_and_llama3)
{
    const struct bosch_chat_message m[] = {{"system", " Be brief.\n"}, {"user", "Hi"}};
    expect_style(BOSCH_CHAT_CHATML, m, 2, BOSCH_CHAT_GENERATION_PROMPT,
                 "<|im_start|>system\n Be brief.\n<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
                 "<|im_start|>assistant\n");
    /* no think block in ChatML, whatever the flags */
    expect_style(BOSCH_CHAT_CHATML, m + 1, 1, BOSCH_CHAT_THINKING,
                 "<|im_start|>user\nHi<|im_end|>\n");
    expect_style(BOSCH_CHAT_LLAMA3, m, 2, BOSCH_CHAT_GENERATION_PROMPT,
                 "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief."
                 "<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
                 "<|start_header_id|>assistant<|end_header_id|>\n\n");
    expect_style(BOSCH_CHAT_LLAMA3, m + 1, 1, 0,
                 "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>");
    /* no message: no BOS either (the template adds it with the first one) */
    expect_style(BOSCH_CHAT_LLAMA3, NULL, 0, BOSCH_CHAT_GENERATION_PROMPT,
                 "<|start_header_id|>assistant<|end_header_id|>\n\n");
    expect_style(BOSCH_CHAT_QWEN3, m + 1, 1, 0, "<|im_start|>user\nHi<|im_end|>\n");
    char *s = (char *)1;
    size_t len;
    ck_assert_int_eq(bosch_chat_format(BOSCH_CHAT_NONE, m, 1, 0, &s, &len), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_chat_format((enum bosch_chat_style)9, m, 1, 0, &s, &len),
                     BOSCH_E_INVALID);
    const struct bosch_chat_message bad[] = {{"tool", "y"}};
    ck_assert_int_eq(bosch_chat_format(BOSCH_CHAT_LLAMA3, bad, 1, 0, &s, &len), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_chat_format(BOSCH_CHAT_CHATML, NULL, 1, 0, &s, &len), BOSCH_E_INVALID);
}
END_TEST

START_TEST(style_names)
{
    ck_assert_str_eq(bosch_chat_style_name(BOSCH_CHAT_QWEN3), "qwen3");
    ck_assert_str_eq(bosch_chat_style_name(BOSCH_CHAT_CHATML), "chatml");
    ck_assert_str_eq(bosch_chat_style_name(BOSCH_CHAT_LLAMA3), "llama3");
    ck_assert_ptr_null(bosch_chat_style_name(BOSCH_CHAT_NONE));
    ck_assert_ptr_null(bosch_chat_style_name((enum bosch_chat_style)9));
    ck_assert_int_eq(bosch_chat_style_parse("llama3"), BOSCH_CHAT_LLAMA3);
    ck_assert_int_eq(bosch_chat_style_parse("chatml"), BOSCH_CHAT_CHATML);
    ck_assert_int_eq(bosch_chat_style_parse("qwen3"), BOSCH_CHAT_QWEN3);
    ck_assert_int_eq(bosch_chat_style_parse("llama2"), BOSCH_CHAT_NONE);
    ck_assert_int_eq(bosch_chat_style_parse(NULL), BOSCH_CHAT_NONE);
}
END_TEST

/* A byte-level tokenizer with the given added tokens. */
static bosch_tokenizer *with_added(const char *const *tokens, size_t n)
{
    char added[2048] = "[", j[4096];
    for (size_t i = 0; i < n; i++)
        snprintf(added + strlen(added), sizeof added - strlen(added),
                 "%s{\"id\":%zu,\"content\":\"%s\",\"special\":true}", i ? "," : "", 1 + i,
                 tokens[i]);
    strcat(added, "]");
    snprintf(j, sizeof j, "{\"added_tokens\":%s,\"pre_tokenizer\":{\"type\":\"ByteLevel\"},"
             "\"decoder\":{\"type\":\"ByteLevel\"},\"model\":{\"type\":\"BPE\",\"vocab\":"
             "{\"a\":0},\"merges\":[]}}", added);
    bosch_tokenizer *t = bosch_tokenizer_from_json(j, strlen(j));
    ck_assert_msg(t, "%s", bosch_text_create_error());
    return t;
}

START_TEST(style_for_tokenizer)
{
    const char *llama3[] = {"<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>",
                            "<|eot_id|>"};
    const char *qwen3[] = {"<|im_start|>", "<|im_end|>", "<think>", "</think>"};
    const char *llama2[] = {"<s>", "</s>"};
    bosch_tokenizer *t = with_added(llama3, 4);
    ck_assert_int_eq(bosch_chat_style_for(t), BOSCH_CHAT_LLAMA3);
    bosch_tokenizer_free(t);
    t = with_added(llama3, 3); /* no <|eot_id|>: not Llama 3's format */
    ck_assert_int_eq(bosch_chat_style_for(t), BOSCH_CHAT_NONE);
    bosch_tokenizer_free(t);
    t = with_added(qwen3, 4);
    ck_assert_int_eq(bosch_chat_style_for(t), BOSCH_CHAT_QWEN3);
    bosch_tokenizer_free(t);
    t = with_added(qwen3, 2);
    ck_assert_int_eq(bosch_chat_style_for(t), BOSCH_CHAT_CHATML);
    bosch_tokenizer_free(t);
    t = with_added(llama2, 2);
    ck_assert_int_eq(bosch_chat_style_for(t), BOSCH_CHAT_NONE);
    /* RULER's chat prompt needs a known format: refused by name */
    struct bosch_text_ruler_params p;
    bosch_text_ruler_params_init(&p);
    ck_assert_ptr_null(bosch_text_ruler_create(t, &p));
    ck_assert_int_eq(bosch_text_create_status(), BOSCH_E_INVALID);
    ck_assert_ptr_nonnull(strstr(bosch_text_create_error(), "has no chat format"));
    bosch_tokenizer_free(t);
    ck_assert_int_eq(bosch_chat_style_for(NULL), BOSCH_CHAT_NONE);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("chat");
    TCase *tc = tcase_create("chat");
    tcase_add_test(tc, user_turn_and_prompts);
    tcase_add_test(tc, system_and_history);
    tcase_add_test(tc, invalid_arguments);
    tcase_add_test(tc, chatml_and_llama3);
    tcase_add_test(tc, style_names);
    tcase_add_test(tc, style_for_tokenizer);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
