/*
 * bosch_torch_checkpoint_open (bosch/torch.h): a model directory in one
 * call, through the shared libraries as a caller links them. The organism
 * (models/organism, BOSCH_ORGANISM) with its bosch.json; copies of it with
 * other bosch.json files and configs; the task it chooses (bosch.json's
 * calib or heldout, NIAH over the ids below the lowest special token, a
 * given file or kind); the errors, each naming what failed.
 */
#define _XOPEN_SOURCE 700 /* realpath (XSI), beside the build's _POSIX_C_SOURCE */
#include <bosch/torch.h>

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/scratch.h"
#include "support/suite.h"

static const char *organism(void)
{
    const char *d = getenv("BOSCH_ORGANISM");
    ck_assert_msg(d && *d, "BOSCH_ORGANISM not set");
    return d;
}

static void setup(void)
{
    scratch_setup("bosch-ckpt");
}

static struct bosch_torch_checkpoint_params cpu_params(void)
{
    struct bosch_torch_checkpoint_params p;
    bosch_torch_checkpoint_params_init(&p);
    p.device = "cpu";
    return p;
}

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), k = strlen(tail);
    return n >= k && !strcmp(s + n - k, tail);
}

/* A copy of the organism named `name`: its weights linked, config.json
 * written from `config` (NULL: the organism's), bosch.json from `bosch`
 * (NULL: none). */
static const char *model_copy(const char *name, const char *config, const char *bosch)
{
    char dir[4096], p[4200], src[4200];
    snprintf(dir, sizeof dir, "%s", scratch_path(name));
    ck_assert_int_eq(mkdir(dir, 0777), 0);
    snprintf(src, sizeof src, "%s/model.safetensors", organism());
    char *abs = realpath(src, NULL);
    ck_assert_ptr_nonnull(abs);
    snprintf(p, sizeof p, "%s/model.safetensors", dir);
    ck_assert_int_eq(symlink(abs, p), 0);
    free(abs);
    snprintf(p, sizeof p, "%s/config.json", dir);
    if (config) {
        scratch_write_text(p, config);
    } else {
        snprintf(src, sizeof src, "%s/config.json", organism());
        char *text = scratch_read_text(src);
        scratch_write_text(p, text);
        free(text);
    }
    if (bosch) {
        snprintf(p, sizeof p, "%s/bosch.json", dir);
        scratch_write_text(p, bosch);
    }
    return scratch_path(name);
}

/* The organism's config with the special token ids `specials` added. */
static char *config_with(const char *specials)
{
    char src[4200];
    snprintf(src, sizeof src, "%s/config.json", organism());
    char *text = scratch_read_text(src);
    char *brace = strrchr(text, '}');
    ck_assert_ptr_nonnull(brace);
    *brace = '\0';
    size_t n = strlen(text) + strlen(specials) + 8;
    char *out = malloc(n);
    snprintf(out, n, "%s, %s}", text, specials);
    free(text);
    return out;
}

START_TEST(organism_defaults)
{
    struct bosch_torch_checkpoint_params p = cpu_params();
    bosch_torch_checkpoint *c = bosch_torch_checkpoint_open(organism(), &p);
    ck_assert_msg(c, "%s", bosch_torch_create_error());
    uint32_t L, G, H, V;
    ck_assert_int_eq(bosch_torch_model_shape(bosch_torch_checkpoint_model(c), &L, &G, &H, &V),
                     BOSCH_OK);
    ck_assert_uint_eq(L, 4);
    ck_assert_uint_eq(G, 4);
    ck_assert_uint_eq(V, 128);
    ck_assert_str_eq(bosch_torch_checkpoint_dir(c), organism());
    /* bosch.json's calibration task, resolved against the directory. */
    ck_assert(ends_with(bosch_torch_checkpoint_task_source(c), "/calib.jsonl"));
    ck_assert_str_eq(bosch_torch_checkpoint_suggested_file(c, "calib"),
                     bosch_torch_checkpoint_task_source(c));
    ck_assert_uint_eq(bosch_torch_task_samples(bosch_torch_checkpoint_task(c)), 32);
    ck_assert(ends_with(bosch_torch_checkpoint_suggested_file(c, "heldout_multi"),
                        "/heldout4.jsonl"));
    ck_assert_ptr_null(bosch_torch_checkpoint_suggested_file(c, "heldout_two_hop"));
    ck_assert_ptr_null(bosch_torch_checkpoint_suggested_file(c, "window"));
    int64_t v = -1;
    ck_assert_int_eq(bosch_torch_checkpoint_suggested(c, "window", &v), 1);
    ck_assert_int_eq(v, 32);
    ck_assert_int_eq(bosch_torch_checkpoint_suggested(c, "sink", &v), 1);
    ck_assert_int_eq(v, 4);
    ck_assert_int_eq(bosch_torch_checkpoint_suggested(c, "budget", &v), 1);
    ck_assert_int_eq(v, 200);
    ck_assert_int_eq(bosch_torch_checkpoint_suggested(c, "metric", &v), 1);
    ck_assert_int_eq(v, BOSCH_TORCH_METRIC_LOGPROB);
    ck_assert_int_eq(bosch_torch_checkpoint_suggested(c, "calib", &v), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_torch_checkpoint_suggested(c, "window", NULL), BOSCH_E_INVALID);
    /* No tokenizer.json in the organism. */
    ck_assert_ptr_null(bosch_torch_checkpoint_tokenizer(c));
    ck_assert_str_eq(bosch_torch_checkpoint_tokenizer_path(c), "");
    ck_assert_msg(!strncmp(bosch_torch_checkpoint_describe(c), "f32 on cpu, ", 12), "%s",
                  bosch_torch_checkpoint_describe(c));
    /* The lent model and task make an evaluator. */
    bosch_torch_evaluator *e = bosch_torch_evaluator_open(
        bosch_torch_checkpoint_model(c), bosch_torch_checkpoint_task(c), 32, 4,
        BOSCH_TORCH_METRIC_LOGPROB);
    ck_assert_ptr_nonnull(e);
    bosch_torch_evaluator_free(e);
    bosch_torch_checkpoint_free(c);
    /* Held-out role: bosch.json's heldout. */
    p.role = BOSCH_TORCH_TASK_HELDOUT;
    c = bosch_torch_checkpoint_open(organism(), &p);
    ck_assert_ptr_nonnull(c);
    ck_assert(ends_with(bosch_torch_checkpoint_task_source(c), "/heldout.jsonl"));
    bosch_torch_checkpoint_free(c);
}
END_TEST

/* NIAH: over the ids below the lowest special id, or [3, vocab). */
START_TEST(niah_tokens)
{
    char *config = config_with("\"bos_token_id\": 120, \"eos_token_id\": [100, 110]");
    const char *dir = model_copy("specials", config, NULL);
    free(config);
    struct bosch_torch_checkpoint_params p = cpu_params();
    p.context = 64;
    p.samples = 3;
    p.seed = 7;
    bosch_torch_checkpoint *c = bosch_torch_checkpoint_open(dir, &p);
    ck_assert_msg(c, "%s", bosch_torch_create_error());
    ck_assert_str_eq(bosch_torch_checkpoint_task_source(c), "niah"); /* no bosch.json */
    int32_t filler[97];
    for (int i = 0; i < 97; i++)
        filler[i] = 3 + i; /* 3..99: below eos 100 */
    bosch_torch_task *want = bosch_torch_task_create_niah_ids(filler, 97, 0, 1, 2, 64, 3, 1, 2, 2,
                                                              0.0, 1.0, 7);
    ck_assert_ptr_nonnull(want);
    ck_assert_int_eq(bosch_torch_task_write_jsonl(want, scratch_path("want.jsonl")), BOSCH_OK);
    ck_assert_int_eq(bosch_torch_task_write_jsonl(bosch_torch_checkpoint_task(c),
                                                  scratch_path("got.jsonl")), BOSCH_OK);
    char *a = scratch_read_text(scratch_path("want.jsonl")),
         *b = scratch_read_text(scratch_path("got.jsonl"));
    ck_assert_str_eq(a, b);
    free(a);
    free(b);
    bosch_torch_task_free(want);
    bosch_torch_checkpoint_free(c);
    /* Without special ids: bosch_torch_task_create_niah over [3, vocab); a
     * given "niah" wins over bosch.json's calib. */
    dir = model_copy("plain", NULL, "{\"calib\": \"none.jsonl\"}");
    p.task = "niah";
    c = bosch_torch_checkpoint_open(dir, &p);
    ck_assert_msg(c, "%s", bosch_torch_create_error());
    want = bosch_torch_task_create_niah(128, 64, 3, 1, 2, 2, 0.0, 1.0, 7);
    ck_assert_int_eq(bosch_torch_task_write_jsonl(want, scratch_path("want2.jsonl")), BOSCH_OK);
    ck_assert_int_eq(bosch_torch_task_write_jsonl(bosch_torch_checkpoint_task(c),
                                                  scratch_path("got2.jsonl")), BOSCH_OK);
    a = scratch_read_text(scratch_path("want2.jsonl"));
    b = scratch_read_text(scratch_path("got2.jsonl"));
    ck_assert_str_eq(a, b);
    free(a);
    free(b);
    bosch_torch_task_free(want);
    bosch_torch_checkpoint_free(c);
}
END_TEST

static void expect_failure(const char *dir, const struct bosch_torch_checkpoint_params *p,
                           int status, const char *words)
{
    bosch_torch_checkpoint *c = bosch_torch_checkpoint_open(dir, p);
    ck_assert_ptr_null(c);
    ck_assert_int_eq(bosch_torch_create_status(), status);
    ck_assert_msg(strstr(bosch_torch_create_error(), words), "'%s' not in '%s'", words,
                  bosch_torch_create_error());
    ck_assert(!strncmp(bosch_torch_create_error(), "bosch_torch_checkpoint_open: ", 29));
}

START_TEST(errors_name_what_failed)
{
    struct bosch_torch_checkpoint_params p = cpu_params();
    expect_failure(scratch_path("missing"), &p, BOSCH_E_IO, "cannot load the model in");
    expect_failure(NULL, &p, BOSCH_E_INVALID, "model directory must be given");
    const char *typo = model_copy("typo", NULL, "{\"windw\": 6}");
    expect_failure(typo, &p, BOSCH_E_INVALID, "bosch.json: unknown key \"windw\"");
    const char *bad = model_copy("bad", NULL, "{\"window\": \"wide\"}");
    expect_failure(bad, &p, BOSCH_E_INVALID, "bosch.json: \"window\" must be an integer >= 1");
    const char *cut = model_copy("cut", NULL, "{\"calib\": ");
    expect_failure(cut, &p, BOSCH_E_INVALID, "bosch.json: not a JSON object");
    const char *metric = model_copy("metric", NULL, "{\"metric\": \"match\"}");
    expect_failure(metric, &p, BOSCH_E_INVALID, "\"metric\" must be \"exact\" or \"logprob\"");
    const char *gone = model_copy("gone", NULL, "{\"calib\": \"gone.jsonl\"}");
    expect_failure(gone, &p, BOSCH_E_IO, "task ");
    ck_assert_ptr_nonnull(strstr(bosch_torch_create_error(), "gone.jsonl"));
    /* A text task without a tokenizer; a tokenizer that is not one. */
    scratch_write_text(scratch_path("text.jsonl"), "{\"text\": \"a b c\", \"answers\": [\"c\"]}\n");
    p.task = scratch_path("text.jsonl");
    expect_failure(organism(), &p, BOSCH_E_INVALID, "needs a tokenizer");
    p.task = NULL;
    scratch_write_text(scratch_path("tok.json"), "{}");
    p.tokenizer = scratch_path("tok.json");
    expect_failure(organism(), &p, BOSCH_E_INVALID, "tokenizer ");
    p.tokenizer = NULL;
    /* A generated task over 2^26 tokens, refused before the model loads. */
    p.task = "niah";
    p.samples = 65536;
    p.context = 2048;
    expect_failure(organism(), &p, BOSCH_E_INVALID, "a generated task is limited to 67108864");
    /* A NIAH the creator refuses (needles that cannot fit the context). */
    p.samples = 2;
    p.context = 16;
    p.needles = 64;
    expect_failure(organism(), &p, BOSCH_E_INVALID, "task niah: ");
    p = cpu_params();
    p.role = 7;
    expect_failure(organism(), &p, BOSCH_E_INVALID, "role 7");
    p = cpu_params();
    p.struct_size = 8;
    expect_failure(organism(), &p, BOSCH_E_INVALID, "struct_size 8");
    p = cpu_params();
    p.device = "gpu";
    expect_failure(organism(), &p, BOSCH_E_INVALID, "cannot load the model in");
    /* NULL handles. */
    ck_assert_ptr_null(bosch_torch_checkpoint_model(NULL));
    ck_assert_ptr_null(bosch_torch_checkpoint_task(NULL));
    ck_assert_str_eq(bosch_torch_checkpoint_describe(NULL), "");
    ck_assert_str_eq(bosch_torch_checkpoint_task_source(NULL), "");
    int64_t v;
    ck_assert_int_eq(bosch_torch_checkpoint_suggested(NULL, "window", &v), BOSCH_E_INVALID);
    bosch_torch_checkpoint_free(NULL);
}
END_TEST

/* Refusals that name their cause, before the model runs: a bosch.json key
 * given twice (json-c alone would keep the last), a bosch.json or
 * tokenizer.json that is a symlink loop (no absent file), a tokenizer with
 * ids past the model's vocabulary (the NIAH filler would be empty). */
START_TEST(causes_named)
{
    struct bosch_torch_checkpoint_params p = cpu_params();
    const char *twice = model_copy("twice", NULL, "{\"window\": 6,\n \"\\u0077indow\": 7}");
    expect_failure(twice, &p, BOSCH_E_INVALID,
                   "bosch.json: line 2: key \"window\" is given twice (give each key once)");
    const char *loops = model_copy("loops", NULL, NULL);
    char link[4200], other[4200];
    snprintf(link, sizeof link, "%s/bosch.json", loops);
    snprintf(other, sizeof other, "%s/loop", loops);
    ck_assert_int_eq(symlink(other, link), 0);
    ck_assert_int_eq(symlink(link, other), 0);
    expect_failure(loops, &p, BOSCH_E_IO,
                   "bosch.json: a symlink loop (too many levels of symbolic links)");
    ck_assert_int_eq(unlink(link), 0);
    snprintf(link, sizeof link, "%s/tokenizer.json", loops);
    ck_assert_int_eq(symlink(other, link), 0);
    ck_assert_int_eq(unlink(other), 0);
    ck_assert_int_eq(symlink(link, other), 0);
    expect_failure(loops, &p, BOSCH_E_IO, "tokenizer.json: a symlink loop");
    /* The organism has 128 ids; this tokenizer's run to 300. */
    scratch_write_text(scratch_path("wide.json"),
                       "{\"added_tokens\": [{\"id\": 300, \"content\": \"<e>\", \"special\": true}],"
                       " \"pre_tokenizer\": {\"type\": \"ByteLevel\", \"use_regex\": false},"
                       " \"decoder\": {\"type\": \"ByteLevel\"}, \"model\": {\"type\": \"BPE\","
                       " \"vocab\": {\"a\": 200, \"b\": 201}, \"merges\": []}}");
    p.tokenizer = scratch_path("wide.json");
    p.task = "niah";
    expect_failure(organism(), &p, BOSCH_E_INVALID,
                   "wide.json: its ids run to 300, past the model's vocabulary of 128 ids "
                   "(vocab_size in");
    ck_assert_ptr_nonnull(strstr(bosch_torch_create_error(), "it is not this model's tokenizer"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("torch-checkpoint-dir");
    TCase *tc = tcase_new(s, "open");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, organism_defaults);
    tcase_add_test(tc, niah_tokens);
    tcase_add_test(tc, errors_name_what_failed);
    tcase_add_test(tc, causes_named);
    return run_suite(s);
}
