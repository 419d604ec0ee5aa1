/* RULER's NIAH generator (lib/text/ruler.c), white-box: the generator runs
 * with a whitespace-word counter in place of the tokenizer. Every task
 * generates; the needles are in the prompt where the generator says, with
 * the answers in them; depths spread; the same seed gives the same task and
 * another seed another; the prompt fits the target and comes close to it;
 * bad parameters fail with a reason. */
#include "text/ruler.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct words {
    size_t calls, bytes;
};

/* Maximal runs of non-whitespace bytes. */
static int count_words(void *ctx, const char *s, size_t n, size_t *tokens)
{
    struct words *w = ctx;
    size_t k = 0;
    int in = 0;
    for (size_t i = 0; i < n; i++) {
        int sp = s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r';
        k += !sp && !in;
        in = !sp;
    }
    if (w) {
        w->calls++;
        w->bytes += n;
    }
    *tokens = k;
    return BOSCH_OK;
}

static size_t words_of(const char *s)
{
    size_t k;
    count_words(NULL, s, strlen(s), &k);
    return k;
}

static bosch_text_task *gen(const char *task, uint32_t context, uint32_t samples, uint64_t seed,
                            int chat, struct ruler_info **info, struct words *w)
{
    struct bosch_text_ruler_params p;
    bosch_text_ruler_params_init(&p);
    p.task = task;
    p.context = context;
    p.samples = samples;
    p.seed = seed;
    p.chat = chat;
    struct ruler_counter c = {count_words, w, BOSCH_CHAT_QWEN3};
    bosch_text_task *t = NULL;
    char err[256];
    int st = ruler_generate(&c, &p, &t, info, err, sizeof err);
    ck_assert_msg(st == BOSCH_OK, "%s: %s", task, err);
    return t;
}

static char *prompt(const bosch_text_task *t, size_t i)
{
    char *p = NULL;
    size_t n = 0;
    ck_assert_int_eq(bosch_text_task_prompt(t, i, 0, &p, &n), BOSCH_OK);
    return p;
}

START_TEST(names)
{
    size_t n = 0;
    while (bosch_text_ruler_task_name(n))
        n++;
    ck_assert_uint_eq(n, 8);
    ck_assert_str_eq(bosch_text_ruler_task_name(0), "niah_single_1");
    ck_assert_str_eq(bosch_text_ruler_task_name(7), "niah_multiquery");
    struct bosch_text_ruler_params p;
    bosch_text_ruler_params_init(&p);
    ck_assert_uint_eq(p.struct_size, sizeof p);
    ck_assert_str_eq(p.task, "niah_single_1");
    ck_assert_uint_eq(p.context, 4096);
    ck_assert_uint_eq(p.samples, 10);
    ck_assert_int_ne(p.chat, 0);
    ck_assert_double_eq(p.depth_max, 1.0);
}
END_TEST

/* Every task: needles at the offsets reported, answers inside them, the
 * query keys in the question, length within the target and close to it. */
START_TEST(every_task)
{
    const char *name = bosch_text_ruler_task_name((size_t)_i);
    const uint32_t context = 3000, samples = 5;
    struct ruler_info *info = NULL;
    struct words w = {0};
    bosch_text_task *t = gen(name, context, samples, 7, 0, &info, &w);
    ck_assert_uint_eq(bosch_text_task_samples(t), samples);
    size_t bytes = 0;
    for (size_t i = 0; i < samples; i++) {
        char *p = prompt(t, i);
        bytes += strlen(p);
        size_t words = words_of(p);
        ck_assert_uint_eq(words, info[i].tokens);
        ck_assert_uint_le(words, context);
        /* Within one haystack unit: KJV sentences run to ~120 words. */
        ck_assert_msg(words + 150 >= context, "%s: %zu words for %u", name, words, context);
        ck_assert_uint_eq(bosch_text_task_max_new_tokens(t, i), 128);
        size_t na = bosch_text_task_answers(t, i);
        ck_assert_uint_eq(na, strstr(name, "multivalue") || strstr(name, "multiquery") ? 4 : 1);
        ck_assert_uint_eq(info[i].n_needles, strstr(name, "multi") && !strstr(name, "multikey_2") &&
                                                     !strstr(name, "multikey_3") ? 4 : 1);
        /* Each answer is the value of a needle at a reported offset. */
        for (size_t j = 0; j < na; j++) {
            const char *a = bosch_text_task_answer(t, i, j);
            int found = 0;
            for (size_t k = 0; k < info[i].n_needles; k++) {
                const char *nd = p + info[i].offset[k];
                ck_assert_msg(!strncmp(nd, "One of the special magic ", 25), "%s: no needle at %zu",
                              name, info[i].offset[k]);
                const char *is = strstr(nd, " is: ");
                ck_assert_ptr_nonnull(is);
                size_t al = strlen(a);
                if (!strncmp(is + 5, a, al) && is[5 + al] == '.')
                    found = 1;
            }
            ck_assert_msg(found, "%s: answer %s not in a needle", name, a);
            ck_assert_double_eq(bosch_text_match_all(p, &a, 1), 1.0);
        }
        ck_assert_int_eq(strncmp(bosch_text_task_target(t, i) + 1, bosch_text_task_answer(t, i, 0),
                                 strlen(bosch_text_task_answer(t, i, 0))), 0);
        for (size_t k = 1; k < info[i].n_needles; k++) {
            ck_assert_uint_lt(info[i].offset[k - 1], info[i].offset[k]);
            ck_assert_double_le(info[i].depth[k - 1], info[i].depth[k]);
        }
        bosch_text_free(p);
    }
    printf("%s: context %u words, %zu units in sample 0, counted %zu bytes in %zu calls "
           "(%.2f x the prompts)\n", name, context, info[0].units, w.bytes, w.calls,
           (double)w.bytes / (double)bytes);
    free(info);
    bosch_text_task_free(t);
}
END_TEST

START_TEST(templates)
{
    bosch_text_task *t = gen("niah_single_1", 500, 1, 3, 0, NULL, NULL);
    char *p = prompt(t, 0);
    ck_assert_msg(strstr(p, "A special magic number is hidden within the following text. Make "
                            "sure to memorize it. I will quiz you about the number afterwards.\n") == p,
                  "%s", p);
    ck_assert_ptr_nonnull(strstr(p, "The grass is green. The sky is blue. The sun is yellow. "
                                    "Here we go. There and back again.\n"));
    const char *a = bosch_text_task_answer(t, 0, 0);
    ck_assert_uint_eq(strlen(a), 7);
    ck_assert_int_ge(a[0], '1');
    /* The question and the answer prefix end the prompt, for the key. */
    const char *q = strstr(p, "\nWhat is the special magic number for ");
    ck_assert_ptr_nonnull(q);
    const char *key = q + strlen("\nWhat is the special magic number for ");
    const char *e = strstr(key, " mentioned in the provided text? The special magic number for ");
    ck_assert_ptr_nonnull(e);
    char needle[256];
    snprintf(needle, sizeof needle, "One of the special magic numbers for %.*s is: %s.",
             (int)(e - key), key, a);
    ck_assert_ptr_nonnull(strstr(p, needle));
    size_t pl = strlen(p);
    ck_assert_str_eq(p + pl - strlen(" mentioned in the provided text is"),
                     " mentioned in the provided text is");
    bosch_text_free(p);
    bosch_text_task_free(t);

    /* Plural forms, the query list and UUIDs. */
    t = gen("niah_multiquery", 800, 1, 3, 0, NULL, NULL);
    p = prompt(t, 0);
    ck_assert_ptr_nonnull(strstr(p, "Some special magic numbers are hidden"));
    ck_assert_ptr_nonnull(strstr(p, "What are all the special magic numbers for "));
    ck_assert_int_eq(p[strlen(p) - 1], 'e'); /* "... text are" */
    q = strstr(p, "What are all the special magic numbers for ");
    ck_assert_ptr_nonnull(strstr(q, ", and "));
    bosch_text_free(p);
    bosch_text_task_free(t);

    t = gen("niah_multikey_3", 800, 1, 3, 0, NULL, NULL);
    p = prompt(t, 0);
    a = bosch_text_task_answer(t, 0, 0);
    ck_assert_uint_eq(strlen(a), 36);
    ck_assert_int_eq(a[14], '4');
    ck_assert_ptr_nonnull(strchr("89ab", a[19]));
    /* Distractors fill the haystack; the real needle is there once. */
    size_t lines = 0;
    for (const char *s = p; (s = strstr(s, "One of the special magic uuids for ")); s++)
        lines++;
    ck_assert_uint_gt(lines, 5);
    char *first = strstr(p, a);
    ck_assert_ptr_nonnull(first);
    ck_assert_ptr_null(strstr(first + 1, a));
    bosch_text_free(p);
    bosch_text_task_free(t);
}
END_TEST

START_TEST(chat)
{
    struct ruler_info *info = NULL;
    bosch_text_task *t = gen("niah_single_2", 1500, 2, 5, 1, &info, NULL);
    char *p = prompt(t, 0);
    ck_assert_msg(strstr(p, "<|im_start|>user\nA special magic number") == p, "%s", p);
    ck_assert_ptr_nonnull(strstr(p, "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n The "
                                    "special magic number for "));
    ck_assert_uint_eq(words_of(p), info[0].tokens);
    ck_assert_uint_le(info[0].tokens, 1500);
    bosch_text_free(p);
    free(info);
    bosch_text_task_free(t);
}
END_TEST

/* One needle per sample: the samples' depths spread over [min, max]. */
START_TEST(depths)
{
    struct bosch_text_ruler_params p;
    bosch_text_ruler_params_init(&p);
    p.task = "niah_single_1";
    p.context = 2000;
    p.samples = 5;
    p.chat = 0;
    p.depth_min = 0.2;
    p.depth_max = 0.8;
    struct ruler_counter c = {count_words, NULL, BOSCH_CHAT_QWEN3};
    bosch_text_task *t = NULL;
    struct ruler_info *info = NULL;
    char err[256];
    ck_assert_int_eq(ruler_generate(&c, &p, &t, &info, err, sizeof err), BOSCH_OK);
    for (size_t i = 0; i < p.samples; i++) {
        double want = 0.2 + 0.6 * (double)i / 4;
        ck_assert_double_eq_tol(info[i].depth[0], want, 1.5 / (double)info[i].units);
        /* The needle sits at that share of the haystack's text too. */
        char *s = prompt(t, i);
        const char *h0 = strchr(s, '\n') + 1, *h1 = strrchr(s, '\n');
        double at = (double)(s + info[i].offset[0] - h0) / (double)(h1 - h0);
        ck_assert_double_eq_tol(at, want, 0.05);
        bosch_text_free(s);
    }
    free(info);
    bosch_text_task_free(t);
    /* Several needles: spread over the haystack (not bunched). */
    t = gen("niah_multikey_1", 3000, 4, 11, 0, &info, NULL);
    double lo = 1, hi = 0;
    for (size_t i = 0; i < 4; i++)
        for (size_t k = 0; k < info[i].n_needles; k++) {
            lo = info[i].depth[k] < lo ? info[i].depth[k] : lo;
            hi = info[i].depth[k] > hi ? info[i].depth[k] : hi;
        }
    ck_assert_double_lt(lo, 0.35);
    ck_assert_double_gt(hi, 0.65);
    free(info);
    bosch_text_task_free(t);
}
END_TEST

START_TEST(seeds)
{
    const char *name = bosch_text_ruler_task_name((size_t)_i);
    bosch_text_task *a = gen(name, 1200, 3, 42, 1, NULL, NULL);
    bosch_text_task *b = gen(name, 1200, 3, 42, 1, NULL, NULL);
    bosch_text_task *c = gen(name, 1200, 3, 43, 1, NULL, NULL);
    int differ = 0;
    for (size_t i = 0; i < 3; i++) {
        char *pa = prompt(a, i), *pb = prompt(b, i), *pc = prompt(c, i);
        ck_assert_str_eq(pa, pb);
        ck_assert_str_eq(bosch_text_task_target(a, i), bosch_text_task_target(b, i));
        differ += strcmp(pa, pc) != 0;
        differ += strcmp(bosch_text_task_target(a, i), bosch_text_task_target(c, i)) != 0;
        bosch_text_free(pa);
        bosch_text_free(pb);
        bosch_text_free(pc);
    }
    ck_assert_int_eq(differ, 6);
    /* Samples of one task differ from each other. */
    ck_assert_str_ne(bosch_text_task_target(a, 0), bosch_text_task_target(a, 1));
    bosch_text_task_free(a);
    bosch_text_task_free(b);
    bosch_text_task_free(c);
}
END_TEST

static void expect_fail(struct bosch_text_ruler_params *p, const char *why)
{
    struct ruler_counter c = {count_words, NULL, BOSCH_CHAT_QWEN3};
    bosch_text_task *t = NULL;
    char err[256];
    ck_assert_int_eq(ruler_generate(&c, p, &t, NULL, err, sizeof err), BOSCH_E_INVALID);
    ck_assert_msg(strstr(err, why), "\"%s\" does not say \"%s\"", err, why);
    ck_assert_ptr_null(t);
}

START_TEST(errors)
{
    struct bosch_text_ruler_params p;
    bosch_text_ruler_params_init(&p);
    p.context = 40;
    expect_fail(&p, "context 40 is too short for niah_single_1");
    p.task = "niah_multivalue";
    p.context = 90;
    expect_fail(&p, "too short for niah_multivalue");
    bosch_text_ruler_params_init(&p);
    p.task = "niah_single_9";
    expect_fail(&p, "unknown task \"niah_single_9\"");
    p.task = NULL;
    expect_fail(&p, "unknown task");
    bosch_text_ruler_params_init(&p);
    p.samples = 0;
    expect_fail(&p, "samples is 0");
    bosch_text_ruler_params_init(&p);
    p.depth_min = 0.7;
    p.depth_max = 0.2;
    expect_fail(&p, "depths");
    bosch_text_ruler_params_init(&p);
    p.struct_size = 8;
    expect_fail(&p, "struct_size");
    /* The public creator says who failed and why. */
    bosch_text_ruler_params_init(&p);
    ck_assert_ptr_null(bosch_text_ruler_create(NULL, &p));
    ck_assert_int_eq(bosch_text_create_status(), BOSCH_E_INVALID);
    ck_assert_ptr_nonnull(strstr(bosch_text_create_error(), "bosch_text_ruler_create: "));
}
END_TEST

/* A long context: the search counts a few prompts per sample, not dozens. */
START_TEST(long_context)
{
    struct ruler_info *info = NULL;
    struct words w = {0};
    const uint32_t context = 100000;
    bosch_text_task *t = gen("niah_multivalue", context, 2, 1, 1, &info, &w);
    size_t bytes = 0;
    for (size_t i = 0; i < 2; i++) {
        char *p = prompt(t, i);
        bytes += strlen(p);
        ck_assert_uint_le(info[i].tokens, context);
        ck_assert_uint_ge(info[i].tokens + 150, context);
        bosch_text_free(p);
    }
    double ratio = (double)w.bytes / (double)bytes;
    printf("niah_multivalue at %u words: %zu units, counted %.2f x the prompts' bytes in %zu calls\n",
           context, info[0].units, ratio, w.calls);
    ck_assert_double_lt(ratio, 8.0);
    free(info);
    bosch_text_task_free(t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("text-ruler");
    TCase *tc = tcase_create("ruler");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, names);
    tcase_add_loop_test(tc, every_task, 0, 8);
    tcase_add_test(tc, templates);
    tcase_add_test(tc, chat);
    tcase_add_test(tc, depths);
    tcase_add_loop_test(tc, seeds, 0, 8);
    tcase_add_test(tc, errors);
    tcase_add_test(tc, long_context);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
