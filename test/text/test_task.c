/* Text tasks: JSON Lines round trip, strict validation (every malformed
 * line names its line and problem), prompt rendering, target, match_all. */
#include "bosch/text.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64];

static void make_dir(void)
{
    strcpy(dir, "/tmp/bosch-text-task-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void remove_dir(void)
{
    char p[128];
    snprintf(p, sizeof p, "%s/a.jsonl", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/b.jsonl", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/c.jsonl", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/c2.jsonl", dir);
    unlink(p);
    rmdir(dir);
}

static const char *write_file(const char *name, const char *content, size_t n)
{
    static char p[128];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(content, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
    return p;
}

static const char GOOD[] =
    "{\"text\": \"Where is the key?\", \"answers\": [\"1234\"], \"answer_prefix\": \" It is\"}\n"
    "\n"
    "{\"messages\": [{\"role\": \"system\", \"content\": \"Be brief.\"}, {\"role\": \"user\", "
    "\"content\": \"Numbers: caf\\u00e9 \\\"q\\\"\\n\"}], \"answers\": [\"12\", \"Ab\"], "
    "\"max_new_tokens\": 64}\n"
    "{\"text\": \"\", \"answers\": [\"x\"]}";

static void check_good(const bosch_text_task *t)
{
    ck_assert_uint_eq(bosch_text_task_samples(t), 3);
    ck_assert_uint_eq(bosch_text_task_answers(t, 0), 1);
    ck_assert_str_eq(bosch_text_task_answer(t, 0, 0), "1234");
    ck_assert_str_eq(bosch_text_task_target(t, 0), " 1234");
    ck_assert_uint_eq(bosch_text_task_max_new_tokens(t, 0), 0);
    ck_assert_uint_eq(bosch_text_task_answers(t, 1), 2);
    ck_assert_str_eq(bosch_text_task_answer(t, 1, 1), "Ab");
    ck_assert_str_eq(bosch_text_task_target(t, 1), " 12, Ab");
    ck_assert_uint_eq(bosch_text_task_max_new_tokens(t, 1), 64);
    ck_assert_ptr_null(bosch_text_task_answer(t, 1, 2));
    ck_assert_ptr_null(bosch_text_task_target(t, 3));

    char *p = NULL;
    size_t n = 0;
    ck_assert_int_eq(bosch_text_task_prompt(t, 0, 0, &p, &n), BOSCH_OK);
    ck_assert_str_eq(p, "Where is the key? It is");
    ck_assert_uint_eq(n, strlen(p));
    bosch_text_free(p);
    ck_assert_int_eq(bosch_text_task_prompt(t, 1, 0, &p, &n), BOSCH_OK);
    ck_assert_str_eq(p, "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nNumbers: "
                        "caf\xc3\xa9 \"q\"\n<|im_end|>\n<|im_start|>assistant\n<think>\n\n"
                        "</think>\n\n");
    bosch_text_free(p);
    ck_assert_int_eq(bosch_text_task_prompt(t, 1, BOSCH_CHAT_THINKING, &p, &n), BOSCH_OK);
    ck_assert_ptr_nonnull(strstr(p, "<|im_start|>assistant\n"));
    ck_assert_ptr_null(strstr(p, "<think>"));
    bosch_text_free(p);
    ck_assert_int_eq(bosch_text_task_prompt(t, 2, 0, &p, &n), BOSCH_OK);
    ck_assert_str_eq(p, "");
    ck_assert_uint_eq(n, 0);
    bosch_text_free(p);
    ck_assert_int_eq(bosch_text_task_prompt(t, 3, 0, &p, &n), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_text_task_prompt(t, 0, 1u << 7, &p, &n), BOSCH_E_INVALID);
}

START_TEST(round_trip)
{
    make_dir();
    bosch_text_task *t = bosch_text_task_read_jsonl(write_file("a.jsonl", GOOD, strlen(GOOD)));
    ck_assert_msg(t, "%s", bosch_text_create_error());
    check_good(t);
    char b[128];
    snprintf(b, sizeof b, "%s/b.jsonl", dir);
    ck_assert_int_eq(bosch_text_task_write_jsonl(t, b), BOSCH_OK);
    bosch_text_task *u = bosch_text_task_read_jsonl(b);
    ck_assert_msg(u, "%s", bosch_text_create_error());
    check_good(u);
    /* Written again, the file is the same bytes: nothing is lost or added. */
    char a[128];
    snprintf(a, sizeof a, "%s/a.jsonl", dir);
    ck_assert_int_eq(bosch_text_task_write_jsonl(u, a), BOSCH_OK);
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int ca, cb;
    do {
        ca = fgetc(fa);
        cb = fgetc(fb);
        ck_assert_int_eq(ca, cb);
    } while (ca != EOF);
    fclose(fa);
    fclose(fb);
    ck_assert_int_eq(bosch_text_task_write_jsonl(u, "/nonexistent-dir/x.jsonl"), BOSCH_E_IO);
    ck_assert_int_eq(bosch_text_task_write_jsonl(NULL, a), BOSCH_E_INVALID);
    bosch_text_task_free(t);
    bosch_text_task_free(u);
    remove_dir();
}
END_TEST

/* Each malformed file, the line it fails on and words of its message. */
static const struct bad {
    const char *content;
    size_t len; /* 0: strlen */
    int line;
    const char *why;
} bads[] = {
    {"{\"answers\": [\"1\"]}\n", 0, 1, "neither \"text\" nor \"messages\""},
    {"{\"text\": \"a\", \"answers\": [\"1\"]}\n{\"text\": \"a\", \"messages\": [], \"answers\": [\"1\"]}\n",
     0, 2, "both \"text\" and \"messages\""},
    {"{\"text\": 3, \"answers\": [\"1\"]}\n", 0, 1, "\"text\" must be a string"},
    {"{\"text\": null, \"answers\": [\"1\"]}\n", 0, 1, "\"text\" must be a string"},
    {"{\"text\": \"a\"}\n", 0, 1, "\"answers\" is missing"},
    {"{\"text\": \"a\", \"answers\": []}\n", 0, 1, "\"answers\" must be a non-empty array"},
    {"{\"text\": \"a\", \"answers\": \"1\"}\n", 0, 1, "\"answers\" must be a non-empty array"},
    {"{\"text\": \"a\", \"answers\": [1]}\n", 0, 1, "\"answers\"[0] must be a string"},
    {"{\"text\": \"a\", \"answers\": [\"1\", \"\"]}\n", 0, 1, "\"answers\"[1] is empty"},
    {"{\"messages\": [{\"role\": \"bot\", \"content\": \"a\"}], \"answers\": [\"1\"]}\n", 0, 1,
     "unknown role \"bot\""},
    {"{\"messages\": [{\"content\": \"a\"}], \"answers\": [\"1\"]}\n", 0, 1,
     "\"messages\"[0].role is missing"},
    {"{\"messages\": [{\"role\": \"user\"}], \"answers\": [\"1\"]}\n", 0, 1,
     "\"messages\"[0].content is missing"},
    {"{\"messages\": [{\"role\": \"user\", \"content\": 5}], \"answers\": [\"1\"]}\n", 0, 1,
     "\"messages\"[0].content must be a string"},
    {"{\"messages\": [\"hi\"], \"answers\": [\"1\"]}\n", 0, 1, "\"messages\"[0] must be an object"},
    {"{\"messages\": [], \"answers\": [\"1\"]}\n", 0, 1, "\"messages\" must be a non-empty array"},
    {"{\"messages\": [{\"role\": \"user\", \"content\": \"a\", \"name\": \"x\"}], \"answers\": [\"1\"]}\n",
     0, 1, "unknown field \"name\""},
    {"{\"text\": \"a\", \"answers\": [\"1\"], \"max_new_tokens\": 0}\n", 0, 1, "\"max_new_tokens\" must be"},
    {"{\"text\": \"a\", \"answers\": [\"1\"], \"max_new_tokens\": -3}\n", 0, 1, "\"max_new_tokens\" must be"},
    {"{\"text\": \"a\", \"answers\": [\"1\"], \"max_new_tokens\": 2.5}\n", 0, 1, "\"max_new_tokens\" must be"},
    {"{\"text\": \"a\", \"answers\": [\"1\"], \"max_new_tokens\": \"8\"}\n", 0, 1, "\"max_new_tokens\" must be"},
    {"{\"text\": \"a\", \"answers\": [\"1\"], \"max_new_tokens\": 99999999999}\n", 0, 1, "\"max_new_tokens\" must be"},
    {"{\"text\": \"a\", \"answers\": [\"1\"], \"answer_prefix\": 1}\n", 0, 1, "\"answer_prefix\" must be a string"},
    {"{\"text\": \"a\", \"answers\": [\"1\"], \"answer\": \"1\"}\n", 0, 1, "unknown field \"answer\""},
    {"{\"text\": \"a\", \"answers\": [\"1\"]}\n{\"text\": \"a\", \"answ", 0, 2, "truncated"},
    {"{\"text\": \"a\", \"answers\": [\"1\"]}\n\n{\"text\": \"a\", \"answers\": [\"1\"]} x\n", 0, 3,
     "invalid JSON at byte 33"},
    {"{\"text\": \"a\", \"answers\": [\"1\"]}{\"text\": \"b\", \"answers\": [\"2\"]}\n", 0, 1,
     "at byte 32"},
    {"{\"text\": \"a\" \"answers\": [\"1\"]}\n", 0, 1, "invalid JSON"},
    {"[1, 2]\n", 0, 1, "not a JSON object"},
    {"{\"text\": \"a\xff\", \"answers\": [\"1\"]}\n", 0, 1, "invalid JSON"},
    {"{\"text\": \"a\\u0000b\", \"answers\": [\"1\"]}\n", 0, 1, "\"text\" holds a NUL"},
    {"{\"text\": \"a\", \"answers\": [\"1\"]}\0\n", 32, 1, "NUL byte"},
    /* A key given twice: json-c would keep the last "text" or role. */
    {"{\"text\": \"a\", \"answers\": [\"1\"]}\n{\"text\": \"a\", \"answers\": [\"1\"], \"text\": \"b\"}\n",
     0, 2, "key \"text\" is given twice (give each key once)"},
    {"{\"text\": \"a\", \"answers\": [\"1\"], \"\\u0074ext\": \"b\"}\n", 0, 1,
     "key \"text\" is given twice"},
    {"{\"messages\": [{\"role\": \"user\", \"content\": \"a\", \"role\": \"system\"}], "
     "\"answers\": [\"1\"]}\n", 0, 1, "key \"role\" is given twice"},
    {"{\"messages\": [{\"role\": \"user\", \"content\": \"a\"}], \"answers\": [\"1\"], "
     "\"chat_format\": \"llama2\"}\n", 0, 1,
     "\"chat_format\": \"llama2\" is not one of qwen3, chatml, llama3"},
    {"{\"messages\": [{\"role\": \"user\", \"content\": \"a\"}], \"answers\": [\"1\"], "
     "\"chat_format\": 3}\n", 0, 1, "\"chat_format\" must be a string"},
    {"{\"text\": \"a\", \"answers\": [\"1\"], \"chat_format\": \"chatml\"}\n", 0, 1,
     "\"chat_format\" with \"text\""},
};

/* "chat_format": the sample's messages in ChatML or Llama 3's format; kept
 * by a round trip; set for a whole task. */
START_TEST(chat_formats)
{
    make_dir();
    static const char src[] =
        "{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}], \"answers\": [\"1\"], "
        "\"chat_format\": \"llama3\"}\n"
        "{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}], \"answers\": [\"1\"]}\n"
        "{\"text\": \"plain\", \"answers\": [\"1\"]}\n";
    bosch_text_task *t = bosch_text_task_read_jsonl(write_file("c.jsonl", src, strlen(src)));
    ck_assert_msg(t, "%s", bosch_text_create_error());
    ck_assert_int_eq(bosch_text_task_chat_style(t, 0), BOSCH_CHAT_LLAMA3);
    ck_assert_int_eq(bosch_text_task_chat_style(t, 1), BOSCH_CHAT_QWEN3);
    ck_assert_int_eq(bosch_text_task_chat_style(t, 2), BOSCH_CHAT_NONE);
    ck_assert_int_eq(bosch_text_task_chat_style(t, 3), BOSCH_CHAT_NONE);
    char *p;
    size_t n;
    ck_assert_int_eq(bosch_text_task_prompt(t, 0, 0, &p, &n), BOSCH_OK);
    ck_assert_str_eq(p, "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
                        "<|start_header_id|>assistant<|end_header_id|>\n\n");
    bosch_text_free(p);
    char b[128];
    snprintf(b, sizeof b, "%s/c2.jsonl", dir);
    ck_assert_int_eq(bosch_text_task_write_jsonl(t, b), BOSCH_OK);
    bosch_text_task *u = bosch_text_task_read_jsonl(b);
    ck_assert_msg(u, "%s", bosch_text_create_error());
    ck_assert_int_eq(bosch_text_task_chat_style(u, 0), BOSCH_CHAT_LLAMA3);
    ck_assert_int_eq(bosch_text_task_chat_style(u, 1), BOSCH_CHAT_QWEN3);
    ck_assert_int_eq(bosch_text_task_set_chat_style(u, BOSCH_CHAT_CHATML), BOSCH_OK);
    ck_assert_int_eq(bosch_text_task_chat_style(u, 0), BOSCH_CHAT_CHATML);
    ck_assert_int_eq(bosch_text_task_chat_style(u, 2), BOSCH_CHAT_NONE);
    ck_assert_int_eq(bosch_text_task_prompt(u, 1, 0, &p, &n), BOSCH_OK);
    ck_assert_str_eq(p, "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
    bosch_text_free(p);
    ck_assert_int_eq(bosch_text_task_set_chat_style(u, BOSCH_CHAT_NONE), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_text_task_set_chat_style(NULL, BOSCH_CHAT_QWEN3), BOSCH_E_INVALID);
    bosch_text_task_free(u);
    bosch_text_task_free(t);
    remove_dir();
}
END_TEST

START_TEST(malformed)
{
    make_dir();
    const struct bad *b = &bads[_i];
    size_t n = b->len ? b->len : strlen(b->content);
    const char *path = write_file("a.jsonl", b->content, n);
    bosch_text_task *t = bosch_text_task_read_jsonl(path);
    ck_assert_msg(!t, "case %d was accepted", _i);
    ck_assert_int_eq(bosch_text_create_status(), BOSCH_E_INVALID);
    const char *e = bosch_text_create_error();
    char where[160];
    snprintf(where, sizeof where, "bosch_text_task_read_jsonl: %s:%d: ", path, b->line);
    ck_assert_msg(strstr(e, where) == e, "case %d: \"%s\" does not start with \"%s\"", _i, e, where);
    ck_assert_msg(strstr(e, b->why), "case %d: \"%s\" does not say \"%s\"", _i, e, b->why);
    remove_dir();
}
END_TEST

START_TEST(files)
{
    ck_assert_ptr_null(bosch_text_task_read_jsonl("/nonexistent-dir/x.jsonl"));
    ck_assert_int_eq(bosch_text_create_status(), BOSCH_E_IO);
    ck_assert_ptr_nonnull(strstr(bosch_text_create_error(), "/nonexistent-dir/x.jsonl"));
    make_dir();
    ck_assert_ptr_null(bosch_text_task_read_jsonl(write_file("a.jsonl", "\n \n", 3)));
    ck_assert_int_eq(bosch_text_create_status(), BOSCH_E_INVALID);
    ck_assert_ptr_nonnull(strstr(bosch_text_create_error(), "no samples"));
    ck_assert_ptr_null(bosch_text_task_read_jsonl(NULL));
    ck_assert_int_eq(bosch_text_create_status(), BOSCH_E_INVALID);
    /* CRLF line ends are read as LF. */
    const char crlf[] = "{\"text\": \"a\", \"answers\": [\"1\"]}\r\n{\"text\": \"b\", \"answers\": [\"2\"]}\r\n";
    bosch_text_task *t = bosch_text_task_read_jsonl(write_file("a.jsonl", crlf, strlen(crlf)));
    ck_assert_msg(t, "%s", bosch_text_create_error());
    ck_assert_uint_eq(bosch_text_task_samples(t), 2);
    ck_assert_str_eq(bosch_text_task_answer(t, 1, 0), "2");
    bosch_text_task_free(t);
    remove_dir();
}
END_TEST

START_TEST(match_all)
{
    const char *a[] = {"1234567", "Bright-Apple", "9"};
    ck_assert_double_eq(bosch_text_match_all("the numbers are 1234567 and bright-apple 9", a, 3), 1.0);
    ck_assert_double_eq_tol(bosch_text_match_all("BRIGHT-APPLE, 123456", a, 3), 1.0 / 3, 1e-12);
    ck_assert_double_eq_tol(bosch_text_match_all("12345679", a, 3), 2.0 / 3, 1e-12);
    ck_assert_double_eq(bosch_text_match_all("nothing here", a, 3), 0.0);
    ck_assert_double_eq(bosch_text_match_all("1234567", a, 0), 0.0);
    ck_assert_double_eq(bosch_text_match_all(NULL, a, 1), 0.0);
    ck_assert_double_eq(bosch_text_match_all("", a, 1), 0.0);
    /* An answer longer than the output, and one at its very end. */
    const char *b[] = {"abcdef", "ef"};
    ck_assert_double_eq_tol(bosch_text_match_all("cdEF", b, 2), 0.5, 1e-12);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("text-task");
    TCase *tc = tcase_create("task");
    tcase_add_test(tc, round_trip);
    tcase_add_test(tc, chat_formats);
    tcase_add_loop_test(tc, malformed, 0, (int)(sizeof bads / sizeof bads[0]));
    tcase_add_test(tc, files);
    tcase_add_test(tc, match_all);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
