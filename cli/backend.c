/* libbosch-torch calls of the bosch command: the only file of cli/ that
 * calls bosch_torch_* functions. */
#include "backend.h"

#include "lib_options.h"

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
    bosch_torch_task_free(b->screen); /* after its evaluator, before the tokenizer it borrows */
    bosch_torch_checkpoint_free(b->ck); /* the model and task the evaluator held */
}

int backend_check_mask(const struct backend *b, const bosch_selection *sel, const char *path)
{
    uint32_t L = bosch_selection_layers(sel), G = bosch_selection_kv_groups(sel),
             H = bosch_selection_heads_per_group(sel);
    if (b->L == L && b->G == G && b->H == H)
        return 0;
    errorf("%s: mask shape %u x %u x %u differs from the model's %u x %u x %u "
           "(layers x KV groups x heads/group)",
           path, L, G, H, b->L, b->G, b->H);
    return EXIT_ERROR;
}

int is_ruler_task(const char *task)
{
    return task && !strncmp(task, "ruler:", 6);
}

const char *backend_describe(const struct backend *b)
{
    return bosch_torch_checkpoint_describe(b->ck);
}

/* What the model directory's bosch.json suggests, where the command line
 * said nothing, and the task the checkpoint chose (recorded with the
 * result; a task file's longest prompt is the context of the KV saving). */
static void take_checkpoint_choices(struct settings *s, const struct backend *b)
{
    int64_t v;
    if (!s->window_given && bosch_torch_checkpoint_suggested(b->ck, "window", &v) == 1) {
        s->window = (unsigned)v;
        s->window_given = 1;
    }
    if (!s->sink_given && bosch_torch_checkpoint_suggested(b->ck, "sink", &v) == 1) {
        s->sink = (unsigned)v;
        s->sink_given = 1;
    }
    if (!s->metric_given && bosch_torch_checkpoint_suggested(b->ck, "metric", &v) == 1)
        s->metric = v == BOSCH_TORCH_METRIC_EXACT ? "exact" : "logprob";
    if (bosch_torch_checkpoint_suggested(b->ck, "budget", &v) == 1) {
        char text[32];
        snprintf(text, sizeof text, "%lld", (long long)v);
        lib_option_suggest(s, "budget", text);
    }
    const char *src = bosch_torch_checkpoint_task_source(b->ck);
    s->niah = !strcmp(src, "niah");
    if (s->niah) {
        s->task = NULL;
        return;
    }
    if (s->task != src && strcmp(s->task ? s->task : "", src)) {
        snprintf(s->task_buf, sizeof s->task_buf, "%s", src);
        s->task = s->task_buf;
    }
    if (!is_ruler_task(s->task))
        s->context = (unsigned)bosch_torch_task_prompt_len(b->t);
}

int backend_open_model(struct settings *s, struct backend *b)
{
    memset(b, 0, sizeof *b);
    b->dir = s->model;
    struct bosch_torch_checkpoint_params p;
    bosch_torch_checkpoint_params_init(&p);
    p.device = s->device;
    for (int d = BOSCH_TORCH_DTYPE_F32; d <= BOSCH_TORCH_DTYPE_F16; d++)
        if (!strcmp(s->dtype, bosch_torch_dtype_name(d)))
            p.dtype = d;
    p.tokenizer = s->tokenizer;
    p.task = s->task ? s->task : s->niah_given ? "niah" : NULL;
    p.role = s->heldout ? BOSCH_TORCH_TASK_HELDOUT : BOSCH_TORCH_TASK_CALIB;
    p.context = s->context;
    p.samples = s->samples;
    p.needles = s->needles;
    p.key_len = s->key_len;
    p.value_len = s->value_len;
    p.seed = s->seed;
    if (!(b->ck = bosch_torch_checkpoint_open(s->model, &p))) {
        errorf("%s", create_reason(bosch_torch_create_status()));
        return EXIT_ERROR;
    }
    b->m = bosch_torch_checkpoint_model(b->ck);
    b->t = bosch_torch_checkpoint_task(b->ck);
    bosch_torch_model_shape(b->m, &b->L, &b->G, &b->H, &b->V);
    take_checkpoint_choices(s, b);
    return 0;
}

/* Prompt tokens of a task, all samples. */
static double task_tokens(const bosch_torch_task *t)
{
    double n = 0;
    for (size_t i = 0; i < bosch_torch_task_samples(t); i++)
        n += (double)bosch_torch_task_prompt_len_of(t, i);
    return n;
}

/* --screen-length / --screen-task: the task rendered shorter scores the
 * screened requests (bosch_torch_evaluator_set_screen_task), and
 * screen_fidelity is its share of the prompt tokens unless given. */
static int open_screen(struct settings *s, struct backend *b)
{
    char what[4200];
    if (s->screen_task)
        snprintf(what, sizeof what, "--screen-task %s", s->screen_task);
    else
        snprintf(what, sizeof what, "--screen-length %u", s->screen_length);
    if (s->screen_task && s->screen_length) {
        errorf("--screen-length and --screen-task: give one");
        return EXIT_ERROR;
    }
    const char *given = lib_option_given(s, "screen_fidelity");
    if (given && !(strtod(given, NULL) < 1.0)) {
        errorf("%s needs screened candidates: --screen-fidelity %s is off (give a value "
               "below 1, or leave it to the screen task's share of the tokens)", what, given);
        return EXIT_ERROR;
    }
    b->screen = s->screen_task ? bosch_torch_checkpoint_read_task(b->ck, s->screen_task)
                               : bosch_torch_checkpoint_task_at(b->ck, s->screen_length);
    if (!b->screen) {
        errorf("%s: %s", what, create_reason(bosch_torch_create_status()));
        return EXIT_ERROR;
    }
    if (bosch_torch_evaluator_set_screen_task(b->e, b->screen)) {
        errorf("%s: %s", what, backend_last_error(b));
        return EXIT_ERROR;
    }
    if (!given) {
        char text[32];
        snprintf(text, sizeof text, "%.6g", task_tokens(b->screen) / task_tokens(b->t));
        lib_option_suggest(s, "screen_fidelity", text);
    }
    return 0;
}

int backend_open(struct settings *s, struct backend *b)
{
    if (backend_open_model(s, b))
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
    if (s->forward_samples)
        bosch_torch_evaluator_set_forward_samples(b->e, s->forward_samples);
    if (s->no_prefix_cache)
        bosch_torch_evaluator_set_prefix_cache(b->e, 0);
    b->follow = !s->no_prefix_cache && !s->cache_all_full;
    return s->screen_length || s->screen_task ? open_screen(s, b) : 0;
}

int backend_follow_incumbent(struct backend *b, const bosch_progress *p)
{
    const size_t units = (size_t)b->L * b->G;
    if (!b->follow || !b->e)
        return 0;
    uint8_t *best = malloc(units);
    if (best && bosch_progress_best_mask(p, best, units) == BOSCH_OK &&
        (!b->reference || memcmp(best, b->reference, units) != 0) &&
        bosch_torch_evaluator_set_reference(b->e, best, units) == BOSCH_OK) {
        free(b->reference);
        b->reference = best; /* kept: the evaluator copied it */
        return 1;
    }
    free(best); /* out of memory or unchanged: the cache stays as it is */
    return 0;
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

/* The layers the model's config makes sliding (fixed SWA in every mask). */
static uint32_t config_sliding_layers(const struct backend *b)
{
    uint32_t n = 0;
    for (uint32_t l = 0; l < b->L; l++)
        n += bosch_torch_model_layer_sliding(b->m, l) == 1;
    return n;
}

int backend_check_choice(const struct backend *b)
{
    if (!b->L || config_sliding_layers(b) < b->L)
        return 0;
    errorf("%s/config.json slides all %u layers (window %u; use_sliding_window, layer_types): "
           "every unit is fixed SWA, so nothing is left to choose and the all-full and all-SWA "
           "anchors are the same model; search the full-attention checkpoint this one was made "
           "from, or score this one with bosch eval",
           b->dir, b->L, bosch_torch_model_sliding_window(b->m));
    return EXIT_ERROR;
}

void backend_anchors_hint(const struct backend *b)
{
    uint32_t n = config_sliding_layers(b);
    if (n)
        errorf("hint: %s/config.json slides %u of %u layers, SWA in both anchors: they differ "
               "only in the other %u layers, which this task does not tell apart; search the "
               "full-attention checkpoint this one was made from",
               b->dir, n, b->L, b->L - n);
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
