/* bosch eval --mask PREFIX.json: scores a saved mask, with the all-full and
 * all-SWA anchors, on the task (by default the model's held-out task). */
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
static int run_eval(struct settings *s, const bosch_selection *sel)
{
    struct backend b;
    int status = EXIT_ERROR;
    uint8_t *masks = NULL;
    if (backend_open(s, &b))
        goto out;
    fprintf(stderr, "model %s: %s\n", b.dir, backend_describe(&b));
    if (backend_check_mask(&b, sel, s->mask))
        goto out;
    size_t units = (size_t)b.L * b.G;
    if (!(masks = calloc(3, units))) {
        errorf("out of memory");
        goto out;
    }
    bosch_selection_mask(sel, masks, units);
    memset(masks + 2 * units, 1, units);
    double sc[3];
    if (score_masks(&b, masks, 3, sc))
        goto out;
    char seed[48] = "";
    if (is_ruler_task(s->task))
        snprintf(seed, sizeof seed, " (seed %llu)", s->seed);
    printf("mask %s (%.63s), SWA ratio %.4f, task %s%s, metric %s, window %u, sink %u\n",
           s->mask, shown_method(sel), bosch_selection_ratio(sel), s->task ? s->task : "niah",
           seed, s->metric, effective_window(s), s->sink);
    printf("score %.6g (full %.6g, all-SWA %.6g)", sc[0], sc[1], sc[2]);
    /* Normalised only when the anchors are apart by more than the
     * evaluator's numerical noise; measured (four more evaluations) only
     * when the gap is small enough for noise to matter (1% of the scores). */
    double gap = sc[1] - sc[2], noise = 0;
    double scale = fmax(1.0, fmax(fabs(sc[1]), fabs(sc[2])));
    if (gap > 0 && gap <= 1e-2 * scale && bosch_torch_evaluator_noise(b.e, &noise)) {
        printf("\n");
        errorf("measuring the evaluator's numerical noise: %s", backend_last_error(&b));
        goto out;
    }
    if (gap > noise)
        printf(", normalised %.4f", (sc[0] - sc[2]) / gap);
    else if (gap > 0)
        printf(", not normalised: the anchors are %.2g apart, within the evaluator's numerical "
               "noise %.2g", gap, noise);
    printf("\n");
    status = EXIT_OK;
out:
    free(masks);
    backend_free(&b);
    return status;
}
#endif

int cmd_eval(int argc, char **argv)
{
    struct settings s;
    settings_default(&s);
    int rc = parse_command(CMD_EVAL, argc, argv, &s, NULL);
    if (rc)
        return rc;
#ifndef BOSCH_CLI_TORCH
    return no_backend(argv[0]);
#else
    if (!s.mask) {
        errorf("eval: --mask PREFIX.json is required");
        return EXIT_USAGE;
    }
    bosch_selection *sel = read_mask(s.mask);
    if (!sel)
        return EXIT_ERROR;
    settings_from_mask(&s, sel);
    rc = model_setup(&s, 1) ? EXIT_ERROR : run_eval(&s, sel);
    bosch_selection_free(sel);
    return rc;
#endif
}
