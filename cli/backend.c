/* libbosch-torch calls of the bosch command: the only file of cli/ that
 * calls bosch_torch_* functions. */
#include "backend.h"

#include <string.h>

void backend_free(struct backend *b)
{
    bosch_torch_evaluator_free(b->e);
    bosch_torch_task_free(b->t);
    bosch_torch_model_free(b->m);
}

static int open_task(struct settings *s, struct backend *b)
{
    char err[1024] = "";
    int rc;
    if (s->task)
        rc = bosch_torch_task_load_jsonl(s->task, &b->t, err, sizeof err);
    else
        rc = bosch_torch_task_niah(b->V, s->context, s->samples, s->needles, s->key_len,
                                   s->value_len, 0.0, 1.0, s->seed, &b->t, err, sizeof err);
    if (rc) {
        errorf("task %s: %s", s->task ? s->task : "niah", *err ? err : bosch_strerror(rc));
        return EXIT_ERROR;
    }
    /* The KV saving is reported at the task's context. */
    if (s->task)
        s->context = (unsigned)bosch_torch_task_prompt_len(b->t);
    return 0;
}

int backend_open(struct settings *s, struct backend *b)
{
    char err[1024] = "";
    memset(b, 0, sizeof *b);
    b->dir = s->model;
    int dev = !strcmp(s->device, "cpu") ? BOSCH_TORCH_DEVICE_CPU
              : !strcmp(s->device, "cuda") ? BOSCH_TORCH_DEVICE_CUDA : BOSCH_TORCH_DEVICE_AUTO;
    int rc = bosch_torch_model_load(b->dir, dev, BOSCH_TORCH_DTYPE_AUTO, &b->m, err, sizeof err);
    if (rc) {
        errorf("cannot load the model in %s: %s", b->dir, *err ? err : bosch_strerror(rc));
        return EXIT_ERROR;
    }
    bosch_torch_model_shape(b->m, &b->L, &b->G, &b->H, &b->V);
    if (open_task(s, b))
        return EXIT_ERROR;
    int metric = !strcmp(s->metric, "logprob") ? BOSCH_TORCH_METRIC_LOGPROB : BOSCH_TORCH_METRIC_EXACT;
    rc = bosch_torch_evaluator_create(b->m, b->t, effective_window(s), s->sink, metric, &b->e, err,
                                      sizeof err);
    if (rc) {
        errorf("evaluator: %s", *err ? err : bosch_strerror(rc));
        return EXIT_ERROR;
    }
    bosch_torch_evaluator_set_batch(b->e, s->eval_batch);
    if (s->no_prefix_cache)
        bosch_torch_evaluator_set_prefix_cache(b->e, 0);
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

int backend_attach(bosch_optimizer *opt, struct backend *b)
{
    return bosch_set_batch_evaluator(opt, bosch_torch_batch_eval, b->e);
}

const char *backend_last_error(const struct backend *b)
{
    return bosch_torch_evaluator_last_error(b->e);
}

/* The backend scorer behind a static-score baseline kind, or -1. */
static int scorer_of(const char *kind)
{
    for (int k = BOSCH_TORCH_SCORER_LOCALITY; k <= BOSCH_TORCH_SCORER_FISHER; k++)
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
    char err[1024] = "";
    int rc = bosch_torch_scores(b->m, b->t, scorer_of(kind), window, sink, NULL, unit_scores, err,
                                sizeof err);
    if (rc) {
        errorf("%s scores: %s", kind, *err ? err : bosch_strerror(rc));
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
