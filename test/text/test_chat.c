/* Unit tests of Qwen3's chat format (no node needed; the byte-exact check
 * against the real template is chat-parity). */
#include <bosch/text.h>

#include <check.h>
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

int main(void)
{
    Suite *s = suite_create("chat");
    TCase *tc = tcase_create("chat");
    tcase_add_test(tc, user_turn_and_prompts);
    tcase_add_test(tc, system_and_history);
    tcase_add_test(tc, invalid_arguments);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
