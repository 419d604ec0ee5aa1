/* What a host embedding libbosch does with a model directory, in one page:
 * open it (bosch_torch_checkpoint_open: model, tokenizer, bosch.json, the
 * task), score masks with libbosch-torch's evaluator, let the library run
 * the search, print the selected sliding-window heads.
 *
 *   bosch-checkpoint-search MODEL_DIR [RATIO] [BUDGET]
 *
 * The window, sink, metric and budget are the directory's bosch.json
 * suggestions (else 128, 4, exact, 200). Exit 0 on success, 1 on error. */
#include <bosch/bosch.h>
#include <bosch/torch.h>

#include <stdio.h>
#include <stdlib.h>

static int64_t suggested(const bosch_torch_checkpoint *c, const char *key, int64_t dflt)
{
    int64_t v;
    return bosch_torch_checkpoint_suggested(c, key, &v) == 1 ? v : dflt;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: %s MODEL_DIR [RATIO] [BUDGET]\n", argv[0]);
        return 1;
    }
    struct bosch_torch_checkpoint_params p;
    bosch_torch_checkpoint_params_init(&p);
    p.device = "cpu";
    bosch_torch_checkpoint *ck = bosch_torch_checkpoint_open(argv[1], &p);
    if (!ck) {
        fprintf(stderr, "%s\n", bosch_torch_create_error());
        return 1;
    }
    const uint32_t window = (uint32_t)suggested(ck, "window", 128);
    const uint32_t sink = (uint32_t)suggested(ck, "sink", 4);
    const int metric = (int)suggested(ck, "metric", BOSCH_TORCH_METRIC_EXACT);
    const uint64_t budget = argc > 3 ? strtoull(argv[3], NULL, 10)
                                     : (uint64_t)suggested(ck, "budget", 200);
    printf("model %s: %s\ntask %s (%zu samples); window %u, sink %u, budget %llu\n",
           bosch_torch_checkpoint_dir(ck), bosch_torch_checkpoint_describe(ck),
           bosch_torch_checkpoint_task_source(ck),
           bosch_torch_task_samples(bosch_torch_checkpoint_task(ck)), window, sink,
           (unsigned long long)budget);

    int rc = 1;
    bosch_torch_evaluator *ev = bosch_torch_evaluator_open(
        bosch_torch_checkpoint_model(ck), bosch_torch_checkpoint_task(ck), window, sink, metric);
    bosch_problem *prob = bosch_torch_model_problem(bosch_torch_checkpoint_model(ck));
    bosch_optimizer *opt = prob ? bosch_optimizer_create(prob) : NULL;
    bosch_result *res = NULL;
    if (!ev || !opt) {
        fprintf(stderr, "%s\n", bosch_torch_create_error());
        goto out;
    }
    int st = bosch_problem_set_target_ratio(prob, argc > 2 ? atof(argv[2]) : 0.5);
    if (!st)
        st = bosch_set_budget(opt, budget);
    if (!st)
        st = bosch_set_request_batch_evaluator(opt, bosch_torch_request_batch_eval, ev);
    if (!st)
        st = bosch_optimize(opt);
    if (st < 0 || bosch_get_result(opt, &res) != BOSCH_OK) {
        fprintf(stderr, "search: %s: %s\n", bosch_err_name(st), bosch_optimizer_last_error(opt));
        goto out;
    }
    size_t units = bosch_problem_units(prob);
    uint8_t *mask = malloc(units);
    if (mask && bosch_result_mask(res, mask, units) == BOSCH_OK) {
        printf("score %.4f (normalized %.3f); sliding units:", bosch_result_score(res),
               bosch_result_normalized_score(res));
        for (size_t u = 0; u < units; u++)
            if (mask[u])
                printf(" %zu", u);
        printf("\n");
        rc = 0;
    }
    free(mask);
out:
    bosch_result_free(res);
    bosch_optimizer_free(opt);
    bosch_problem_free(prob);
    bosch_torch_evaluator_free(ev);
    bosch_torch_checkpoint_free(ck);
    return rc;
}
