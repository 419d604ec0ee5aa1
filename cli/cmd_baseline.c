/* bosch baseline --kind K: a baseline selection at --ratio (layer patterns,
 * single-unit ablation, the one-layer-at-a-time probe, static head scores),
 * scored on the task; the same outputs as search. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "model_dir.h"
#include "options.h"
#include "output.h"
#ifdef BOSCH_CLI_TORCH
#include "backend.h"
#endif

#ifdef BOSCH_CLI_TORCH
struct baseline {
    struct backend b;
    bosch_problem *prob;
    size_t units;
    uint8_t *masks;      /* scratch: up to units + 2 masks scored at once */
    double *scores, *importance, *unit_scores;
    const double *imp;   /* the importances the mask was ranked by, or NULL (layer patterns) */
    uint8_t *mask;       /* the baseline's mask */
    double s_full, s_swa;
    /* the history: every evaluation, written by bosch_history_write */
    uint8_t *h_masks;
    double *h_scores;
    const char **h_stages;
    size_t n;
    char *hp;            /* PREFIX.history.jsonl */
    int h_pending;       /* created, records not written yet */
};

static void record(struct baseline *t, const char *stage, const uint8_t *mask, double score)
{
    memcpy(t->h_masks + t->n * t->units, mask, t->units);
    t->h_scores[t->n] = score;
    t->h_stages[t->n++] = stage;
}

static int write_history(struct baseline *t)
{
    t->h_pending = 0;
    return bosch_history_write(t->hp, t->units, t->n, t->h_masks, t->h_scores, t->h_stages,
                               t->s_full, t->s_swa);
}

/* Allocations, the target, and PREFIX.history.jsonl created empty (so that
 * an unwritable prefix fails before any evaluation). */
static int baseline_start(struct baseline *t, const struct settings *s)
{
    size_t u = t->units = (size_t)t->b.L * t->b.G;
    t->prob = backend_problem(&t->b);
    t->masks = calloc(u + 2, u);
    t->scores = calloc(u + 2, sizeof *t->scores);
    t->importance = calloc(u, sizeof *t->importance);
    t->mask = calloc(u, 1);
    t->h_masks = calloc(u + 3, u);
    t->h_scores = calloc(u + 3, sizeof *t->h_scores);
    t->h_stages = calloc(u + 3, sizeof *t->h_stages);
    t->hp = path_with(s->out, ".history.jsonl");
    if (!t->prob || !t->masks || !t->scores || !t->importance || !t->mask || !t->h_masks ||
        !t->h_scores || !t->h_stages || !t->hp) {
        errorf("out of memory");
        return EXIT_ERROR;
    }
    int rc = bosch_problem_set_target_ratio(t->prob, s->ratio);
    if (rc)
        return opt_fail(rc, "ratio", NULL);
    FILE *f = fopen(t->hp, "w");
    if (!f) {
        errorf("cannot write %s: %s", t->hp, strerror(errno));
        return EXIT_ERROR;
    }
    fclose(f);
    t->h_pending = 1;
    return 0;
}

/* The anchors: all full (mask 0), all SWA (mask 1). */
static int score_anchors(struct baseline *t)
{
    memset(t->masks, 0, t->units);
    memset(t->masks + t->units, 1, t->units);
    if (score_masks(&t->b, t->masks, 2, t->scores))
        return EXIT_ERROR;
    t->s_full = t->scores[0];
    t->s_swa = t->scores[1];
    record(t, "anchors", t->masks, t->scores[0]);
    record(t, "anchors", t->masks + t->units, t->scores[1]);
    return 0;
}

/* Probes of `span` consecutive units alone SWA (the others full), one per
 * span: span 1 is single-unit ablation; span G, the one-layer-at-a-time
 * probe (with the logprob metric, the NLL probe). Each unit's importance is
 * its probe's drop S_full - S(probe), so the lowest drops go SWA first. */
static int drop_probe(struct baseline *t, size_t span, const char *stage)
{
    size_t u = t->units, n = u / span;
    memset(t->masks, 0, n * u);
    for (size_t i = 0; i < n; i++)
        memset(t->masks + i * u + i * span, 1, span);
    if (score_masks(&t->b, t->masks, n, t->scores))
        return EXIT_ERROR;
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < span; k++)
            t->importance[i * span + k] = t->s_full - t->scores[i];
        record(t, stage, t->masks + i * u, t->scores[i]);
    }
    t->imp = t->importance;
    int rc = bosch_baseline_static(t->prob, t->importance, t->mask);
    return rc ? opt_fail(rc, "baseline", NULL) : 0;
}

/* Chooses t->mask by the kind; 0, or EXIT_ERROR after a message. */
static int choose_mask(struct baseline *t, const struct settings *s)
{
    int rc;
    if (!strcmp(s->kind, "ablation"))
        return drop_probe(t, 1, "ablation");
    if (!strcmp(s->kind, "layer-probe"))
        return drop_probe(t, t->b.G, "layer-probe");
    if (is_scorer_kind(s->kind)) {
        if (!(t->unit_scores = calloc(t->units, sizeof *t->unit_scores))) {
            errorf("out of memory");
            return EXIT_ERROR;
        }
        if (backend_unit_scores(&t->b, s->kind, effective_window(s), s->sink, t->unit_scores))
            return EXIT_ERROR;
        t->imp = t->unit_scores;
        rc = bosch_baseline_static(t->prob, t->unit_scores, t->mask);
    } else {
        int pat = !strcmp(s->kind, "rand") ? BOSCH_LAYERS_RAND
                  : !strcmp(s->kind, "intr") ? BOSCH_LAYERS_INTR : BOSCH_LAYERS_BME;
        rc = bosch_baseline_layers(t->prob, pat, s->seed, t->mask);
    }
    return rc ? opt_fail(rc, "baseline", NULL) : 0;
}

/* The result file of the baseline (score already in t->scores[0]). */
static bosch_selection *selection_of(const struct baseline *t, const struct settings *s)
{
    bosch_selection *sel = bosch_selection_create(t->b.L, t->b.G, t->b.H);
    if (!sel) {
        errorf("out of memory");
        return NULL;
    }
    double score = t->scores[0];
    char method[64];
    snprintf(method, sizeof method, "baseline:%s", s->kind);
    bosch_selection_set_mask(sel, t->mask, t->units);
    bosch_selection_set_status(sel, "BOSCH_DONE");
    bosch_selection_set_score(sel, BOSCH_SCORE_RAW, score);
    bosch_selection_set_score(sel, BOSCH_SCORE_NORMALIZED,
                              t->s_full > t->s_swa ? (score - t->s_swa) / (t->s_full - t->s_swa) : NAN);
    bosch_selection_set_score(sel, BOSCH_SCORE_OBJECTIVE, NAN);
    bosch_selection_set_score(sel, BOSCH_SCORE_FULL, t->s_full);
    bosch_selection_set_score(sel, BOSCH_SCORE_ALL_SWA, t->s_swa);
    bosch_selection_set_target_ratio(sel, bosch_problem_target_ratio(t->prob));
    bosch_selection_set_evaluations(sel, NULL, t->n, 0);
    if (bosch_selection_set_importance(sel, t->imp, t->units) || record_run(sel, s, method)) {
        bosch_selection_free(sel);
        errorf("out of memory");
        return NULL;
    }
    return sel;
}

/* Scores the mask, writes the history and the outputs, prints the summary. */
static int finish(struct baseline *t, const struct settings *s)
{
    if (score_masks(&t->b, t->mask, 1, t->scores))
        return EXIT_ERROR;
    record(t, "baseline", t->mask, t->scores[0]);
    if (write_history(t)) {
        errorf("cannot write %s", t->hp);
        return EXIT_ERROR;
    }
    bosch_selection *sel = selection_of(t, s);
    if (!sel || write_outputs(sel, s->out)) {
        bosch_selection_free(sel);
        return EXIT_ERROR;
    }
    print_picture(sel);
    print_scores(sel);
    printf("evaluations %zu\nwrote %s.json, %s.tsv, %s.svg, %s.history.jsonl\n", t->n, s->out,
           s->out, s->out, s->out);
    bosch_selection_free(sel);
    return EXIT_OK;
}

static int run_baseline(struct settings *s)
{
    struct baseline t;
    memset(&t, 0, sizeof t);
    int status = EXIT_ERROR;
    const int opened = !backend_open(s, &t.b);
    if (opened)
        fprintf(stderr, "model %s: %s\n", t.b.dir, backend_describe(&t.b));
    if (opened && !baseline_start(&t, s) && !score_anchors(&t) && !choose_mask(&t, s))
        status = finish(&t, s);
    if (t.h_pending)
        write_history(&t); /* what was evaluated before the failure */
    free(t.hp);
    free(t.h_stages);
    free(t.h_scores);
    free(t.h_masks);
    free(t.mask);
    free(t.masks);
    free(t.scores);
    free(t.importance);
    free(t.unit_scores);
    bosch_problem_free(t.prob);
    backend_free(&t.b);
    return status;
}
#endif

int cmd_baseline(int argc, char **argv)
{
    struct settings s;
    settings_default(&s);
    int rc = parse_command(CMD_BASELINE, argc, argv, &s, NULL);
    if (rc)
        return rc;
#ifndef BOSCH_CLI_TORCH
    return no_backend(argv[0]);
#else
    if (!s.kind) {
        errorf("baseline: --kind " BASELINE_KINDS " is required");
        return EXIT_USAGE;
    }
    if (model_setup(&s, 0) || check_output_prefix(s.out))
        return EXIT_ERROR;
    return run_baseline(&s);
#endif
}
