/* libbosch-torch calls of the bosch command: the only file of cli/ that
 * calls bosch_torch_* functions. */
#include "backend.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Why the last libbosch-torch creator failed, without its "function: "
 * prefix (the command names what it was doing itself). */
static const char *create_reason(int rc)
{
    const char *e = bosch_torch_create_error();
    const char *c = strstr(e, ": ");
    return *e ? (c ? c + 2 : e) : bosch_strerror(rc);
}

void backend_free(struct backend *b)
{
    free(b->reference);
    b->reference = NULL;
    bosch_torch_evaluator_free(b->e);
    bosch_torch_task_free(b->t);
    bosch_tokenizer_free(b->tok); /* after the task, which borrows it */
    bosch_torch_model_free(b->m);
}

/* Why the last libbosch-text creator failed, without its "function: ". */
static const char *text_reason(void)
{
    const char *e = bosch_text_create_error();
    const char *c = strstr(e, ": ");
    return *e ? (c ? c + 2 : e) : bosch_strerror(bosch_text_create_status());
}

/* --tokenizer, else the model's tokenizer.json when there is one. A given
 * file that cannot be read is an error; a missing default is not (the
 * tasks that need a tokenizer say so). */
static int open_tokenizer(const struct settings *s, struct backend *b)
{
    char path[4096];
    const char *p = s->tokenizer;
    if (!p) {
        snprintf(path, sizeof path, "%s/tokenizer.json", b->dir);
        FILE *f = fopen(path, "rb");
        if (!f)
            return 0;
        fclose(f);
        p = path;
    }
    if (!(b->tok = bosch_tokenizer_open(p))) {
        errorf("tokenizer %s: %s", p, text_reason());
        return EXIT_ERROR;
    }
    return 0;
}

int is_ruler_task(const char *task)
{
    return task && !strncmp(task, "ruler:", 6);
}

/* Whether a JSONL task file holds text: its first non-blank line has a
 * "text" or "messages" key (the id format has "prompt"). */
static int is_text_jsonl(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0; /* the id reader reports the file */
    char line[65536];
    int text = 0;
    while (fgets(line, sizeof line, f)) {
        if (strspn(line, " \t\r\n") == strlen(line))
            continue;
        text = (strstr(line, "\"text\"") || strstr(line, "\"messages\"")) && !strstr(line, "\"prompt\"");
        break;
    }
    fclose(f);
    return text;
}

/* A text task (RULER or JSONL) encoded with the tokenizer. */
static bosch_torch_task *text_task(struct settings *s, struct backend *b)
{
    if (!b->tok) {
        errorf("task %s: a text task needs a tokenizer: give --tokenizer FILE (the model "
               "directory %s has no tokenizer.json)", s->task, b->dir);
        return NULL;
    }
    bosch_text_task *tt;
    if (is_ruler_task(s->task)) {
        struct bosch_text_ruler_params p;
        bosch_text_ruler_params_init(&p);
        p.task = s->task + 6;
        p.context = s->context;
        p.samples = s->samples;
        p.seed = s->seed;
        tt = bosch_text_ruler_create(b->tok, &p);
    } else {
        tt = bosch_text_task_read_jsonl(s->task);
    }
    if (!tt) {
        errorf("task %s: %s", s->task, text_reason());
        return NULL;
    }
    bosch_torch_task *t = bosch_torch_task_from_text(tt, b->tok, 0);
    bosch_text_task_free(tt);
    if (!t)
        errorf("task %s: %s", s->task, create_reason(bosch_torch_create_status()));
    return t;
}

/* The lowest of bos_token_id, eos_token_id, pad_token_id (an id or a list
 * of ids) that the model's config.json names, or -1 when it names none (or
 * cannot be read: then the loader has already said why). */
static long lowest_special_id(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/config.json", dir);
    json_object *root = json_object_from_file(path);
    if (!root)
        return -1;
    long low = -1;
    static const char *const keys[] = {"bos_token_id", "eos_token_id", "pad_token_id"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        json_object *v;
        if (!json_object_object_get_ex(root, keys[k], &v) || !v)
            continue;
        size_t n = json_object_is_type(v, json_type_array) ? json_object_array_length(v) : 1;
        for (size_t i = 0; i < n; i++) {
            json_object *e = json_object_is_type(v, json_type_array)
                                 ? json_object_array_get_idx(v, i) : v;
            if (!json_object_is_type(e, json_type_int))
                continue;
            int64_t id = json_object_get_int64(e);
            if (id >= 0 && (low < 0 || id < low))
                low = (long)id;
        }
    }
    json_object_put(root);
    return low;
}

/* The built-in NIAH without a tokenizer: markers 0, 1, 2 and filler, key
 * and value tokens from the rows below the lowest special id of config.json
 * (Qwen3: 151643; the rows above it are special or unused), or from
 * [3, vocab) as before when the config names none or its lowest special id
 * is below 5 (specials at the bottom leave no ordinary range under them).
 * With a tokenizer, the filler is its ordinary tokens (no added or special
 * token, no row past the vocabulary) below the model's vocabulary, and the
 * markers stay 0, 1, 2 (real byte-level tokens: "!", "\"", "#" in Qwen3). */
static bosch_torch_task *builtin_niah(const struct settings *s, const struct backend *b)
{
    if (b->tok) {
        int32_t *filler = malloc((size_t)b->V * sizeof *filler);
        if (!filler)
            return NULL;
        size_t n = 0;
        for (uint32_t id = 3; id < b->V; id++)
            if (bosch_tokenizer_is_ordinary(b->tok, (int32_t)id))
                filler[n++] = (int32_t)id;
        bosch_torch_task *t = bosch_torch_task_create_niah_ids(
            filler, n, 0, 1, 2, s->context, s->samples, s->needles, s->key_len, s->value_len,
            0.0, 1.0, s->seed);
        free(filler);
        return t;
    }
    long low = lowest_special_id(b->dir);
    if (low < 0 || low > (long)b->V || low <= 4)
        return bosch_torch_task_create_niah(b->V, s->context, s->samples, s->needles, s->key_len,
                                            s->value_len, 0.0, 1.0, s->seed);
    size_t n = (size_t)low - 3;
    int32_t *filler = malloc(n * sizeof *filler);
    if (!filler)
        return NULL;
    for (size_t i = 0; i < n; i++)
        filler[i] = (int32_t)(3 + i);
    bosch_torch_task *t = bosch_torch_task_create_niah_ids(
        filler, n, 0, 1, 2, s->context, s->samples, s->needles, s->key_len, s->value_len, 0.0,
        1.0, s->seed);
    free(filler);
    return t;
}

const char *backend_describe(const struct backend *b)
{
    return b->desc;
}

static int open_task(struct settings *s, struct backend *b)
{
    if (is_ruler_task(s->task) || (s->task && is_text_jsonl(s->task))) {
        if (!(b->t = text_task(s, b)))
            return EXIT_ERROR;
        if (!is_ruler_task(s->task))
            s->context = (unsigned)bosch_torch_task_prompt_len(b->t);
        return 0;
    }
    if (s->task)
        b->t = bosch_torch_task_read_jsonl(s->task);
    else
        b->t = builtin_niah(s, b);
    if (!b->t) {
        errorf("task %s: %s", s->task ? s->task : "niah",
               create_reason(bosch_torch_create_status()));
        return EXIT_ERROR;
    }
    /* The KV saving is reported at the task's context (its longest prompt). */
    if (s->task)
        s->context = (unsigned)bosch_torch_task_prompt_len(b->t);
    return 0;
}

/* A hybrid config's sliding layers (fixed SWA in every search), appended
 * to the description: "; config: layers 1,3 slide over 512 tokens". */
static void describe_sliding(struct backend *b)
{
    uint32_t w = bosch_torch_model_sliding_window(b->m);
    if (!w)
        return;
    size_t n = strlen(b->desc);
    n += (size_t)snprintf(b->desc + n, sizeof b->desc - n, "; config: layer");
    const char *sep = " ";
    for (uint32_t l = 0; l < b->L && n < sizeof b->desc; l++)
        if (bosch_torch_model_layer_sliding(b->m, l) == 1) {
            n += (size_t)snprintf(b->desc + n, sizeof b->desc - n, "%s%u", sep, l);
            sep = ",";
        }
    if (n < sizeof b->desc)
        snprintf(b->desc + n, sizeof b->desc - n, " slide over %u tokens (fixed SWA)", w);
}

/* A mixture-of-experts model, appended to the description: "; MoE: 128
 * experts (8 per token) in 48 of 48 layers". */
static void describe_experts(struct backend *b)
{
    uint32_t e = 0, k = 0, n = 0;
    if (bosch_torch_model_experts(b->m, &e, &k, &n) != BOSCH_OK || !e)
        return;
    size_t used = strlen(b->desc);
    snprintf(b->desc + used, sizeof b->desc - used,
             "; MoE: %u experts (%u per token) in %u of %u layers", e, k, n, b->L);
}

int backend_open(struct settings *s, struct backend *b)
{
    memset(b, 0, sizeof *b);
    b->dir = s->model;
    int dtype = BOSCH_TORCH_DTYPE_AUTO;
    for (int d = BOSCH_TORCH_DTYPE_F32; d <= BOSCH_TORCH_DTYPE_F16; d++)
        if (!strcmp(s->dtype, bosch_torch_dtype_name(d)))
            dtype = d;
    b->m = bosch_torch_model_open_device(b->dir, s->device, dtype);
    if (!b->m) {
        errorf("cannot load the model in %s: %s", b->dir,
               create_reason(bosch_torch_create_status()));
        return EXIT_ERROR;
    }
    bosch_torch_model_shape(b->m, &b->L, &b->G, &b->H, &b->V);
    uint64_t bytes = 0;
    int held = 0;
    bosch_torch_model_memory(b->m, &bytes, &held);
    const char *dev = bosch_torch_model_device(b->m);
    unsigned threads = bosch_torch_threads();
    snprintf(b->desc, sizeof b->desc, "%s on %s, %.1f MiB of parameters", bosch_torch_dtype_name(held),
             dev, (double)bytes / (1024.0 * 1024.0));
    if (!strncmp(dev, "cpu", 3)) {
        size_t n = strlen(b->desc);
        snprintf(b->desc + n, sizeof b->desc - n, ", %u CPU thread%s", threads,
                 threads == 1 ? "" : "s");
    }
    describe_experts(b);
    describe_sliding(b);
    if (open_tokenizer(s, b) || open_task(s, b))
        return EXIT_ERROR;
    int metric = !strcmp(s->metric, "logprob") ? BOSCH_TORCH_METRIC_LOGPROB
                 : !strcmp(s->metric, "match") ? BOSCH_TORCH_METRIC_MATCH
                                               : BOSCH_TORCH_METRIC_EXACT;
    b->e = bosch_torch_evaluator_open(b->m, b->t, effective_window(s), s->sink, metric);
    if (!b->e) {
        errorf("evaluator: %s", create_reason(bosch_torch_create_status()));
        return EXIT_ERROR;
    }
    if (s->eval_batch)
        bosch_torch_evaluator_set_batch(b->e, s->eval_batch);
    if (s->no_prefix_cache)
        bosch_torch_evaluator_set_prefix_cache(b->e, 0);
    b->follow = !s->no_prefix_cache && !s->cache_all_full;
    return 0;
}

void backend_follow_incumbent(struct backend *b, const bosch_progress *p)
{
    const size_t units = (size_t)b->L * b->G;
    if (!b->follow || !b->e)
        return;
    uint8_t *best = malloc(units);
    if (best && bosch_progress_best_mask(p, best, units) == BOSCH_OK &&
        (!b->reference || memcmp(best, b->reference, units) != 0) &&
        bosch_torch_evaluator_set_reference(b->e, best, units) == BOSCH_OK) {
        free(b->reference);
        b->reference = best; /* kept: the evaluator copied it */
        best = NULL;
    }
    free(best); /* out of memory or unchanged: the cache stays as it is */
}

int score_masks(struct backend *b, const uint8_t *masks, size_t n, double *scores)
{
    size_t units = (size_t)b->L * b->G;
    int rc = bosch_torch_batch_eval(masks, n, units, scores, b->e);
    if (rc) {
        errorf("evaluation failed: %s", backend_last_error(b));
        return EXIT_ERROR;
    }
    return 0;
}

bosch_problem *backend_problem(const struct backend *b)
{
    return bosch_torch_model_problem(b->m);
}

/* The request form, so that screen_fidelity and confirm reach the model
 * (plain requests score exactly as bosch_torch_batch_eval). */
int backend_attach(bosch_optimizer *opt, struct backend *b)
{
    /* The run identity (model, task, metric, window, sink, dtype): a journal
     * resumed with any of them changed is refused, naming it. */
    int rc = bosch_torch_evaluator_identify(b->e, opt);
    /* Anchors apart by no more than the evaluator's rounding noise are not
     * ordered: a search normalised by that noise would choose by rounding. */
    if (!rc && (rc = bosch_torch_evaluator_noise(b->e, &b->noise)) != 0)
        errorf("measuring the evaluator's numerical noise: %s", backend_last_error(b));
    if (!rc)
        rc = bosch_set_anchor_tolerance(opt, b->noise);
    return rc ? rc : bosch_set_request_batch_evaluator(opt, bosch_torch_request_batch_eval, b->e);
}

const char *backend_last_error(const struct backend *b)
{
    return bosch_torch_evaluator_last_error(b->e);
}

/* The backend scorer behind a static-score baseline kind, or -1. */
static int scorer_of(const char *kind)
{
    for (int k = BOSCH_TORCH_SCORER_LOCALITY; k <= BOSCH_TORCH_SCORER_DUO_ON_THE_FLY; k++)
        if (!strcmp(kind, bosch_torch_scorer_name(k)))
            return k;
    return -1;
}

int is_scorer_kind(const char *kind)
{
    return scorer_of(kind) >= 0;
}

int backend_unit_scores(struct backend *b, const char *kind, unsigned window, unsigned sink,
                        double *unit_scores)
{
    int rc = bosch_torch_model_scores(b->m, b->t, scorer_of(kind), window, sink, NULL,
                                      unit_scores);
    if (rc) {
        const char *why = bosch_torch_model_last_error(b->m);
        errorf("%s scores: %s", kind, *why ? why : bosch_strerror(rc));
        return EXIT_ERROR;
    }
    return 0;
}

int opt_fail(int rc, const char *what, const bosch_optimizer *opt)
{
    const char *msg = opt && *bosch_optimizer_last_error(opt) ? bosch_optimizer_last_error(opt)
                                                              : bosch_strerror(rc);
    errorf("%s: %s: %s", what, bosch_err_name(rc), msg);
    if (rc == BOSCH_E_ANCHORS)
        errorf("hint: the task does not separate full from SWA attention; try --metric logprob, "
               "a smaller --window or a longer --context");
    return EXIT_ERROR;
}
