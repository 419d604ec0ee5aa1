/* The libtorch side of the bosch command (libbosch-torch): loading the
 * model, the task and the evaluator of a command, scoring masks, the
 * static head scorers. Built only with the backend (BOSCH_CLI_TORCH). */
#ifndef BOSCH_CLI_BACKEND_H
#define BOSCH_CLI_BACKEND_H

#include <bosch/torch.h>

#include "cli.h"

struct backend {
    bosch_torch_checkpoint *ck; /* the model directory: model, tokenizer, task */
    bosch_torch_model *m;       /* lent by ck */
    const bosch_torch_task *t;  /* lent by ck */
    bosch_torch_evaluator *e;
    bosch_torch_task *screen; /* --screen-length: the task rendered shorter (owned) */
    uint32_t L, G, H, V;
    const char *dir;
    double noise;   /* the evaluator's numerical noise (backend_attach) */
    int follow;         /* keep the prefix cache on the incumbent (cache on) */
    uint8_t *reference; /* the prefix cache's reference now (units), NULL = all full */
};

/* Opens the model directory s->model (bosch_torch_checkpoint_open: the
 * model, its tokenizer, the task: --task, --niah, else bosch.json's calib
 * or heldout, else NIAH), takes what its bosch.json suggests where the
 * command line said nothing (window, sink, metric, budget), and opens the
 * evaluator (window, sink, metric, batch, prefix cache). With a task file,
 * s->context becomes its longest prompt (the context of the KV saving).
 * 0, or EXIT_ERROR after a message; backend_free() in both cases. */
int backend_open(struct settings *s, struct backend *b);
/* The same without the evaluator (b->e stays NULL): the checkpoint, its
 * model, tokenizer and task, and bosch.json's suggestions. */
int backend_open_model(struct settings *s, struct backend *b);
void backend_free(struct backend *b);

/* 0 when the saved mask `sel` (read from `path`) has the model's shape,
 * else EXIT_ERROR after a message naming both shapes. */
int backend_check_mask(const struct backend *b, const bosch_selection *sel, const char *path);

/* Non-zero for a --task of the form ruler:NAME. */
int is_ruler_task(const char *task);

/* The model's dtype, device and parameter memory, for the commands' model line. */
const char *backend_describe(const struct backend *b);

/* Scores n masks of b's units; 0, or EXIT_ERROR after a message. */
int score_masks(struct backend *b, const uint8_t *masks, size_t n, double *scores);

/* A problem of the model's shape (target ratio 0.5), or NULL (out of memory). */
bosch_problem *backend_problem(const struct backend *b);

/* Makes b's evaluator the optimizer's batch evaluator, and its identity
 * the run's (bosch_torch_evaluator_identify). */
int backend_attach(bosch_optimizer *opt, struct backend *b);

/* Keeps the evaluator's prefix cache on the search's incumbent
 * (bosch_progress_best_mask -> bosch_torch_evaluator_set_reference), so that
 * candidates, mostly its neighbours, skip the layers below their first
 * change instead of starting at their first SWA layer. A no-op when the
 * incumbent is unchanged, none exists yet, or the prefix cache is off.
 * Called from the search's progress callback (between batches). 1 when the
 * reference changed (b->reference holds it), else 0. */
int backend_follow_incumbent(struct backend *b, const bosch_progress *p);

/* Message of the evaluator's last failure ("" if none). */
const char *backend_last_error(const struct backend *b);

/* Non-zero when `kind` is a static-score baseline kind (a backend scorer). */
int is_scorer_kind(const char *kind);

/* The static head scores of `kind` per unit (units doubles) on b's task;
 * 0, or EXIT_ERROR after a message. */
int backend_unit_scores(struct backend *b, const char *kind, unsigned window, unsigned sink,
                        double *unit_scores);

/* Prints a libbosch failure ("WHAT: NAME: message", and a hint for
 * BOSCH_E_ANCHORS); returns EXIT_ERROR. opt may be NULL. */
int opt_fail(int rc, const char *what, const bosch_optimizer *opt);

/* A search needs units to choose: a hybrid config that slides every layer
 * fixes them all. 0, or EXIT_ERROR after a message naming the config. */
int backend_check_choice(const struct backend *b);
/* After BOSCH_E_ANCHORS on a hybrid config: what its sliding layers do to
 * the anchors (nothing printed for a config without them). */
void backend_anchors_hint(const struct backend *b);

#endif
