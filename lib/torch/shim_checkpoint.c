/* The checkpoint handle of libbosch-torch's C API (bosch/torch.h): a model
 * directory opened the way the bosch command opens it. Plain C over the
 * public calls of libbosch-torch and libbosch-text, and model_dir.c for
 * what the directory's JSON files say. */
#include "bosch/torch.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "torch/model_dir.h"
#include "torch/shim_c.h"
#include "util/read_file.h"

#define FN "bosch_torch_checkpoint_open"
#define MAX_GENERATED_TOKENS (1ull << 26) /* samples x context of a NIAH or RULER task */

struct bosch_torch_checkpoint {
    bosch_torch_model *model;
    bosch_tokenizer *tok;
    bosch_torch_task *task;
    struct bt_suggestions sug;
    char *dir, *tokenizer_path, *task_source;
    uint32_t context, samples; /* a generated task's */
    uint64_t seed;
    char desc[640];
};

void bosch_torch_checkpoint_params_init(struct bosch_torch_checkpoint_params *p)
{
    if (!p)
        return;
    memset(p, 0, sizeof *p);
    p->struct_size = sizeof *p;
    p->device = "auto";
    p->dtype = BOSCH_TORCH_DTYPE_AUTO;
    p->role = BOSCH_TORCH_TASK_CALIB;
    p->context = 1024;
    p->samples = 8;
    p->needles = 1;
    p->key_len = 2;
    p->value_len = 2;
}

/* Records "FN: <formatted>" for bosch_torch_create_error; returns -1. */
static int fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(int status, const char *fmt, ...)
{
    char msg[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    bt_create_fail(FN, status, msg);
    return -1;
}

/* A creator's message without its "function: " prefix (this one names the
 * step itself). */
static const char *reason(const char *e, int status)
{
    const char *c = strstr(e, ": ");
    return *e ? (c ? c + 2 : e) : bosch_strerror(status);
}

static int is_ruler(const char *task)
{
    return !strncmp(task, "ruler:", 6);
}

/* "f32 on cpu, 3.4 MiB of parameters, 2 CPU threads; MoE: ...; config: ...". */
static void describe(bosch_torch_checkpoint *c)
{
    uint32_t L = 0, e = 0, k = 0, n = 0;
    uint64_t bytes = 0;
    int held = 0;
    bosch_torch_model *m = c->model;
    bosch_torch_model_shape(m, &L, NULL, NULL, NULL);
    bosch_torch_model_memory(m, &bytes, &held);
    const char *dev = bosch_torch_model_device(m);
    size_t used = (size_t)snprintf(c->desc, sizeof c->desc, "%s on %s, %.1f MiB of parameters",
                                   bosch_torch_dtype_name(held), dev,
                                   (double)bytes / (1024.0 * 1024.0));
    const size_t cap = sizeof c->desc;
    if (!strncmp(dev, "cpu", 3) && used < cap) {
        unsigned threads = bosch_torch_threads();
        used += (size_t)snprintf(c->desc + used, cap - used, ", %u CPU thread%s", threads,
                                 threads == 1 ? "" : "s");
    }
    if (bosch_torch_model_experts(m, &e, &k, &n) == BOSCH_OK && e && used < cap)
        used += (size_t)snprintf(c->desc + used, cap - used,
                                 "; MoE: %u experts (%u per token) in %u of %u layers", e, k, n, L);
    uint32_t w = bosch_torch_model_sliding_window(m);
    if (!w || used >= cap)
        return;
    used += (size_t)snprintf(c->desc + used, cap - used, "; config: layer");
    const char *sep = " ";
    for (uint32_t l = 0; l < L && used < cap; l++)
        if (bosch_torch_model_layer_sliding(m, l) == 1) {
            used += (size_t)snprintf(c->desc + used, cap - used, "%s%u", sep, l);
            sep = ",";
        }
    if (used < cap)
        snprintf(c->desc + used, cap - used, " slide over %u tokens (fixed SWA)", w);
}

/* The given tokenizer, else DIR/tokenizer.json when there is one. A given
 * file that cannot be read is an error; a missing default is not (the
 * tasks that need a tokenizer say so), but one that cannot be opened for
 * another reason (a symlink loop) is. */
static int open_tokenizer(bosch_torch_checkpoint *c, const char *given)
{
    char path[4096];
    const char *p = given;
    if (!p) {
        if (snprintf(path, sizeof path, "%s/tokenizer.json", c->dir) >= (int)sizeof path)
            return 0;
        FILE *f = fopen(path, "rb");
        if (!f && errno != ENOENT)
            return fail(BOSCH_E_IO, "tokenizer %s: %s", path, util_file_error(errno));
        if (!f)
            return 0;
        fclose(f);
        p = path;
    }
    if (!(c->tok = bosch_tokenizer_open(p)))
        return fail(bosch_text_create_status(), "tokenizer %s: %s", p,
                    reason(bosch_text_create_error(), bosch_text_create_status()));
    if (!(c->tokenizer_path = strdup(p)))
        return fail(BOSCH_E_NOMEM, "out of memory");
    return 0;
}

/* A tokenizer with ids past the model's vocabulary is another model's: its
 * text would hold ids the model has no row for (the NIAH filler, drawn
 * from its ids below the vocabulary, would be empty). */
static int check_tokenizer_fits(const bosch_torch_checkpoint *c)
{
    uint32_t V = 0;
    bosch_torch_model_shape(c->model, NULL, NULL, NULL, &V);
    uint32_t n = c->tok ? bosch_tokenizer_vocab_size(c->tok) : 0;
    if (n <= V)
        return 0;
    return fail(BOSCH_E_INVALID,
                "tokenizer %s: its ids run to %u, past the model's vocabulary of %u ids "
                "(vocab_size in %s/config.json): it is not this model's tokenizer",
                c->tokenizer_path, n - 1, V, c->dir);
}

/* Records the failure of libbosch-torch's task creator as "task SRC: why". */
static void task_fail(const char *src)
{
    fail(bosch_torch_create_status(), "task %s: %s", src,
         reason(bosch_torch_create_error(), bosch_torch_create_status()));
}

/* A text task (RULER or JSON Lines of text) encoded with the tokenizer. */
static bosch_torch_task *text_task(const bosch_torch_checkpoint *c, const char *src,
                                   const struct bosch_torch_checkpoint_params *p)
{
    if (!c->tok) {
        fail(BOSCH_E_INVALID, "task %s: a text task needs a tokenizer: give one (the model "
                              "directory %s has no tokenizer.json)", src, c->dir);
        return NULL;
    }
    bosch_text_task *tt;
    if (is_ruler(src)) {
        struct bosch_text_ruler_params rp;
        bosch_text_ruler_params_init(&rp);
        rp.task = src + 6;
        rp.context = p->context;
        rp.samples = p->samples;
        rp.seed = p->seed;
        tt = bosch_text_ruler_create(c->tok, &rp);
    } else {
        tt = bosch_text_task_read_jsonl(src);
    }
    if (!tt) {
        fail(bosch_text_create_status(), "task %s: %s", src,
             reason(bosch_text_create_error(), bosch_text_create_status()));
        return NULL;
    }
    bosch_torch_task *t = bosch_torch_task_from_text(tt, c->tok, 0);
    bosch_text_task_free(tt);
    if (!t)
        task_fail(src);
    return t;
}

/* The built-in NIAH (see bosch_torch_checkpoint_open for its tokens). */
static bosch_torch_task *builtin_niah(const bosch_torch_checkpoint *c,
                                      const struct bosch_torch_checkpoint_params *p)
{
    uint32_t V = 0;
    bosch_torch_model_shape(c->model, NULL, NULL, NULL, &V);
    long low = c->tok ? -1 : bt_lowest_special_id(c->dir);
    if (!c->tok && (low < 0 || low > (long)V || low <= 4)) {
        bosch_torch_task *t = bosch_torch_task_create_niah(V, p->context, p->samples, p->needles,
                                                           p->key_len, p->value_len, 0.0, 1.0,
                                                           p->seed);
        if (!t)
            task_fail("niah");
        return t;
    }
    size_t n = 0, cap = c->tok ? V : (size_t)low - 3;
    int32_t *filler = malloc((cap ? cap : 1) * sizeof *filler);
    if (!filler) {
        fail(BOSCH_E_NOMEM, "task niah: out of memory");
        return NULL;
    }
    if (c->tok) {
        for (uint32_t id = 3; id < V; id++)
            if (bosch_tokenizer_is_ordinary(c->tok, (int32_t)id))
                filler[n++] = (int32_t)id;
    } else {
        for (; n < cap; n++)
            filler[n] = (int32_t)(3 + n);
    }
    bosch_torch_task *t = bosch_torch_task_create_niah_ids(
        filler, n, 0, 1, 2, p->context, p->samples, p->needles, p->key_len, p->value_len, 0.0,
        1.0, p->seed);
    free(filler);
    if (!t)
        task_fail("niah");
    return t;
}

/* The task; each way records its own failure. */
static int open_task(bosch_torch_checkpoint *c, const struct bosch_torch_checkpoint_params *p)
{
    const char *src = c->task_source;
    if (is_ruler(src) || (strcmp(src, "niah") && bt_is_text_jsonl(src)))
        c->task = text_task(c, src, p);
    else if (!strcmp(src, "niah"))
        c->task = builtin_niah(c, p);
    else if (!(c->task = bosch_torch_task_read_jsonl(src)))
        task_fail(src);
    return c->task ? 0 : -1;
}

/* The task's source: the given one, bosch.json's for the role, the NIAH. */
static int choose_task(bosch_torch_checkpoint *c, const struct bosch_torch_checkpoint_params *p)
{
    const char *src = p->task;
    if (!src)
        src = c->sug.file[p->role == BOSCH_TORCH_TASK_HELDOUT ? BT_HELDOUT : BT_CALIB];
    if (!src)
        src = "niah";
    if (!*src)
        return fail(BOSCH_E_INVALID, "task \"\": give a file, \"niah\" or \"ruler:NAME\"");
    if (!(c->task_source = strdup(src)))
        return fail(BOSCH_E_NOMEM, "out of memory");
    const unsigned long long tokens = (unsigned long long)p->samples * p->context;
    if ((!strcmp(src, "niah") || is_ruler(src)) && tokens > MAX_GENERATED_TOKENS)
        return fail(BOSCH_E_INVALID,
                    "task %s: samples %u x context %u = %llu tokens: a generated task is "
                    "limited to %llu tokens (fewer samples or a shorter context)",
                    src, p->samples, p->context, tokens, MAX_GENERATED_TOKENS);
    return 0;
}

static int check_params(const char *dir, const struct bosch_torch_checkpoint_params *p)
{
    if (!dir || !*dir)
        return fail(BOSCH_E_INVALID, "the model directory must be given");
    if (p->struct_size != sizeof *p)
        return fail(BOSCH_E_INVALID,
                    "struct_size %zu is not sizeof(struct bosch_torch_checkpoint_params) (%zu): "
                    "call bosch_torch_checkpoint_params_init",
                    p->struct_size, sizeof *p);
    if (p->role != BOSCH_TORCH_TASK_CALIB && p->role != BOSCH_TORCH_TASK_HELDOUT)
        return fail(BOSCH_E_INVALID, "role %d is not a bosch_torch_task_role", p->role);
    return 0;
}

bosch_torch_checkpoint *bosch_torch_checkpoint_open(const char *dir,
                                                    const struct bosch_torch_checkpoint_params *p)
{
    struct bosch_torch_checkpoint_params defaults;
    bosch_torch_checkpoint_params_init(&defaults);
    if (!p)
        p = &defaults;
    if (check_params(dir, p))
        return NULL;
    bosch_torch_checkpoint *c = calloc(1, sizeof *c);
    if (!c || !(c->dir = strdup(dir))) {
        free(c);
        fail(BOSCH_E_NOMEM, "out of memory");
        return NULL;
    }
    char msg[8192];
    int rc = bt_suggestions_read(dir, &c->sug, msg, sizeof msg);
    if (rc) {
        fail(rc, "%s", msg);
        goto fail;
    }
    if (choose_task(c, p))
        goto fail;
    c->model = bosch_torch_model_open_device(dir, p->device ? p->device : "auto", p->dtype);
    if (!c->model) {
        fail(bosch_torch_create_status(), "cannot load the model in %s: %s", dir,
             reason(bosch_torch_create_error(), bosch_torch_create_status()));
        goto fail;
    }
    describe(c);
    c->context = p->context;
    c->samples = p->samples;
    c->seed = p->seed;
    if (open_tokenizer(c, p->tokenizer) || check_tokenizer_fits(c) || open_task(c, p))
        goto fail;
    return c;
fail:
    bosch_torch_checkpoint_free(c);
    return NULL;
}

void bosch_torch_checkpoint_free(bosch_torch_checkpoint *c)
{
    if (!c)
        return;
    bosch_torch_task_free(c->task);
    bosch_tokenizer_free(c->tok); /* after the task, which borrows it */
    bosch_torch_model_free(c->model);
    bt_suggestions_free(&c->sug);
    free(c->dir);
    free(c->tokenizer_path);
    free(c->task_source);
    free(c);
}

bosch_torch_model *bosch_torch_checkpoint_model(const bosch_torch_checkpoint *c)
{
    return c ? c->model : NULL;
}

const bosch_tokenizer *bosch_torch_checkpoint_tokenizer(const bosch_torch_checkpoint *c)
{
    return c ? c->tok : NULL;
}

const bosch_torch_task *bosch_torch_checkpoint_task(const bosch_torch_checkpoint *c)
{
    return c ? c->task : NULL;
}

const char *bosch_torch_checkpoint_dir(const bosch_torch_checkpoint *c)
{
    return c ? c->dir : "";
}

const char *bosch_torch_checkpoint_task_source(const bosch_torch_checkpoint *c)
{
    return c ? c->task_source : "";
}

const char *bosch_torch_checkpoint_tokenizer_path(const bosch_torch_checkpoint *c)
{
    return c && c->tokenizer_path ? c->tokenizer_path : "";
}

const char *bosch_torch_checkpoint_describe(const bosch_torch_checkpoint *c)
{
    return c ? c->desc : "";
}

int bosch_torch_checkpoint_suggested(const bosch_torch_checkpoint *c, const char *key,
                                     int64_t *value)
{
    if (!c || !key || !value)
        return BOSCH_E_INVALID;
    for (int i = 0; i < BT_NUMBERS; i++)
        if (!strcmp(key, bt_number_key(i))) {
            if (!c->sug.has[i])
                return 0;
            *value = c->sug.number[i];
            return 1;
        }
    return BOSCH_E_INVALID;
}

/* The last failure, recorded under this file's open (FN), recorded again
 * under `fn`, the function that reports it. */
static void renamed_failure(const char *fn)
{
    char msg[8192];
    int st = bosch_torch_create_status();
    snprintf(msg, sizeof msg, "%s", reason(bosch_torch_create_error(), st));
    bt_create_fail(fn, st, msg);
}

bosch_torch_task *bosch_torch_checkpoint_task_at(const bosch_torch_checkpoint *c,
                                                 uint32_t context)
{
    static const char *const fn = "bosch_torch_checkpoint_task_at";
    char msg[1024];
    if (!c) {
        bt_create_fail(fn, BOSCH_E_INVALID, "the checkpoint must not be NULL");
        return NULL;
    }
    if (!is_ruler(c->task_source)) {
        snprintf(msg, sizeof msg,
                 "task %s: only a RULER task (ruler:NAME) can be rendered at another length, "
                 "its samples being drawn from the seed before the haystack; %s", c->task_source,
                 strcmp(c->task_source, "niah") ? "a task file's prompts are fixed"
                                                : "the built-in NIAH draws its needles with "
                                                  "its haystack");
        bt_create_fail(fn, BOSCH_E_INVALID, msg);
        return NULL;
    }
    if (context == 0 || context >= c->context) {
        snprintf(msg, sizeof msg, "task %s: context %u is not below the task's %u",
                 c->task_source, context, c->context);
        bt_create_fail(fn, BOSCH_E_INVALID, msg);
        return NULL;
    }
    struct bosch_torch_checkpoint_params p;
    bosch_torch_checkpoint_params_init(&p);
    p.context = context;
    p.samples = c->samples;
    p.seed = c->seed;
    bosch_torch_task *t = text_task(c, c->task_source, &p);
    if (!t) /* text_task recorded the reason under bosch_torch_checkpoint_open's name */
        renamed_failure(fn);
    return t;
}

bosch_torch_task *bosch_torch_checkpoint_read_task(const bosch_torch_checkpoint *c,
                                                   const char *path)
{
    static const char *const fn = "bosch_torch_checkpoint_read_task";
    if (!c || !path || !*path) {
        bt_create_fail(fn, BOSCH_E_INVALID, "the checkpoint and the path must be given");
        return NULL;
    }
    bosch_torch_task *t;
    if (bt_is_text_jsonl(path)) {
        struct bosch_torch_checkpoint_params p;
        bosch_torch_checkpoint_params_init(&p);
        t = text_task(c, path, &p);
    } else if (!(t = bosch_torch_task_read_jsonl(path))) {
        task_fail(path);
    }
    if (!t)
        renamed_failure(fn);
    return t;
}

const char *bosch_torch_checkpoint_suggested_file(const bosch_torch_checkpoint *c,
                                                  const char *key)
{
    if (!c || !key)
        return NULL;
    for (int i = 0; i < BT_FILES; i++)
        if (!strcmp(key, bt_file_key(i)))
            return c->sug.file[i];
    return NULL;
}
