/* White-box tests of the method (lib/lns) without any session: the test
 * plays the session, filling in scores for the batches lns_next hands out
 * and telling them back with lns_tell. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/problem_impl.h"
#include "lns/lns.h"

#define MAX_BATCHES 4096

/* A separable landscape with a per-layer weight: SWA in layer l costs
 * (l + 1) * (1 + (g % 3)) / 10, so upper layers are the sensitive ones. */
static double score_of(const uint8_t *mask, uint32_t L, uint32_t G)
{
    double s = 100.0;
    for (uint32_t l = 0; l < L; l++)
        for (uint32_t g = 0; g < G; g++)
            if (mask[(size_t)l * G + g])
                s -= (double)(l + 1) * (1.0 + (double)(g % 3)) / 10.0;
    return s;
}

struct trace {
    size_t batches, evaluations, milestones, logs;
    int stages[MAX_BATCHES];
    size_t sizes[MAX_BATCHES];
};

static void on_log(void *ctx, int level, const char *msg)
{
    (void)level;
    ck_assert_ptr_nonnull(msg);
    ((struct trace *)ctx)->logs++;
}

static void on_milestone(void *ctx)
{
    ((struct trace *)ctx)->milestones++;
}

static bosch_strategy *auto_strategy;

static struct lns_config config(uint64_t budget, int variant)
{
    struct lns_config c;
    memset(&c, 0, sizeof c);
    c.seed = 7;
    c.budget = budget;
    c.probe_fraction = 0.5;
    c.polish_fraction = 0.5;
    c.alpha = 1.0;
    c.spread = 0.5;
    c.group_cap = 48;
    c.batch = 8;
    c.variant = variant;
    c.strategy[BOSCH_STAGE_PROBE] = auto_strategy;
    c.strategy[BOSCH_STAGE_GROUP] = auto_strategy;
    return c;
}

/* Drives the method to its end; returns its final lns_next status. */
static int drive(lns *m, const bosch_problem *p, struct trace *t)
{
    uint32_t L = bosch_problem_layers(p), G = bosch_problem_kv_groups(p);
    size_t units = bosch_problem_units(p);
    for (;;) {
        struct lns_batch b;
        int n = lns_next(m, &b);
        if (n <= 0)
            return n;
        ck_assert_uint_eq(b.n, (size_t)n);
        ck_assert_uint_lt(t->batches, MAX_BATCHES);
        t->stages[t->batches] = b.stage;
        t->sizes[t->batches] = b.n;
        t->batches++;
        double *scores = malloc(b.n * sizeof *scores), *walls = malloc(b.n * sizeof *walls);
        for (size_t i = 0; i < b.n; i++) {
            scores[i] = score_of(b.masks + i * units, L, G);
            walls[i] = NAN;
        }
        t->evaluations += b.n;
        ck_assert_int_eq(lns_tell(m, scores, walls), BOSCH_OK);
        free(scores);
        free(walls);
    }
}

static bosch_problem *problem(uint32_t L, uint32_t G, double rho)
{
    bosch_problem *p = bosch_problem_create(L, G, 2);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(bosch_problem_set_target_ratio(p, rho), BOSCH_OK);
    return p;
}

static void setup(void)
{
    auto_strategy = bosch_strategy_builtin("auto");
}

static void teardown(void)
{
    bosch_strategy_free(auto_strategy);
}

/* The stages come in the method's order, the anchors first, alone. */
START_TEST(stages_in_order)
{
    bosch_problem *p = problem(6, 4, 0.5);
    struct trace t = {0};
    struct lns_config c = config(300, BOSCH_VARIANT_FULL);
    struct lns_hooks h = {on_log, NULL, on_milestone, &t};
    lns *m = lns_create(p, &c, &h);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(lns_stage(m), BOSCH_STAGE_ANCHORS);
    ck_assert_int_eq(drive(m, p, &t), 0);
    ck_assert(lns_status(m) == BOSCH_DONE || lns_status(m) == BOSCH_BUDGET_REACHED);
    ck_assert_int_eq(t.stages[0], BOSCH_STAGE_ANCHORS);
    ck_assert_uint_eq(t.sizes[0], 2);
    int last = BOSCH_STAGE_ANCHORS;
    size_t alloc_batches = 0;
    for (size_t i = 1; i < t.batches; i++) {
        ck_assert_int_ge(t.stages[i], last); /* never back to an earlier stage */
        ck_assert_int_ne(t.stages[i], BOSCH_STAGE_ANCHORS);
        last = t.stages[i];
        if (t.stages[i] == BOSCH_STAGE_ALLOC) {
            alloc_batches++;
            ck_assert_uint_le(t.sizes[i], 3); /* at most three start masks */
        }
    }
    ck_assert_uint_eq(alloc_batches, 1);
    ck_assert_int_eq(last, BOSCH_STAGE_GROUP);
    ck_assert_uint_gt(t.milestones, 0);
    ck_assert_uint_gt(t.logs, 0);
    /* Every evaluation is in the store once, and the budget holds. */
    const eval_store *s = lns_store(m);
    ck_assert_uint_eq(s->n, t.evaluations);
    ck_assert_uint_le(s->n, 300);
    uint64_t per_stage = 0;
    for (int st = 0; st < BOSCH_STAGE_COUNT; st++)
        per_stage += lns_evaluations(m, st);
    ck_assert_uint_eq(per_stage, s->n);
    lns_free(m);
    bosch_problem_free(p);
}
END_TEST

/* Stage 1 probes one layer at a time, from the last layer down: each probe
 * batch differs from the all-full mask only in layers at or above the
 * layer being probed, and the lowest layer touched never goes back up. */
START_TEST(probe_is_top_down_cascade)
{
    const uint32_t L = 5, G = 4;
    bosch_problem *p = problem(L, G, 0.5);
    struct lns_config c = config(400, BOSCH_VARIANT_PROBE_ONLY);
    lns *m = lns_create(p, &c, NULL);
    ck_assert_ptr_nonnull(m);
    uint32_t lowest = L;
    size_t units = bosch_problem_units(p);
    for (;;) {
        struct lns_batch b;
        int n = lns_next(m, &b);
        if (n <= 0)
            break;
        double *scores = malloc(b.n * sizeof *scores), *walls = malloc(b.n * sizeof *walls);
        for (size_t i = 0; i < b.n; i++) {
            const uint8_t *mask = b.masks + i * units;
            scores[i] = score_of(mask, L, G);
            walls[i] = NAN;
            if (b.stage != BOSCH_STAGE_PROBE)
                continue;
            uint32_t low = L;
            for (uint32_t l = 0; l < L && low == L; l++)
                for (uint32_t g = 0; g < G; g++)
                    if (mask[(size_t)l * G + g])
                        low = l;
            ck_assert_uint_le(low, lowest); /* the cascade only moves down */
            lowest = low;
            /* The probed layer holds exactly the uniform count (2 of 4). */
            unsigned c2 = 0;
            for (uint32_t g = 0; g < G; g++)
                c2 += mask[(size_t)low * G + g];
            ck_assert_uint_eq(c2, 2);
        }
        ck_assert_int_eq(lns_tell(m, scores, walls), BOSCH_OK);
        free(scores);
        free(walls);
    }
    ck_assert_uint_eq(lowest, 0);
    /* Five layers of C(4,2) = 6 masks cannot use 400 evaluations. */
    ck_assert_int_eq(lns_status(m), BOSCH_CONVERGED);
    ck_assert_uint_lt(lns_store(m)->n, 400);
    ck_assert_uint_eq(lns_evaluations(m, BOSCH_STAGE_GROUP), 0);
    ck_assert_uint_eq(lns_evaluations(m, BOSCH_STAGE_ALLOC), 0);
    lns_free(m);
    bosch_problem_free(p);
}
END_TEST

/* The best is the highest objective among feasible records, and on this
 * separable landscape the method finds the optimum (SWA on the cheapest
 * units: layer 0 and 1, groups of cost factor 1 and 2). */
START_TEST(best_is_best_feasible)
{
    const uint32_t L = 4, G = 3;
    bosch_problem *p = problem(L, G, 0.5);
    struct trace t = {0};
    struct lns_config c = config(500, BOSCH_VARIANT_FULL);
    lns *m = lns_create(p, &c, NULL);
    drive(m, p, &t);
    const eval_store *s = lns_store(m);
    int64_t best = lns_best(m);
    ck_assert_int_ge(best, 0);
    ck_assert(s->eligible[best]);
    for (size_t r = 0; r < s->n; r++)
        if (s->eligible[r])
            ck_assert(lns_objective(m, r) <= lns_objective(m, (size_t)best));
    double full = 0, swa = 0;
    ck_assert(lns_anchors(m, &full, &swa));
    ck_assert_double_eq(full, 100.0);
    ck_assert_double_eq_tol(lns_normalized(m, full), 1.0, 1e-12);
    ck_assert_double_eq_tol(lns_normalized(m, swa), 0.0, 1e-12);
    /* The optimum of 6 SWA units: the 6 cheapest costs. */
    double costs[12];
    for (uint32_t l = 0; l < L; l++)
        for (uint32_t g = 0; g < G; g++)
            costs[l * G + g] = (double)(l + 1) * (1.0 + (double)(g % 3)) / 10.0;
    for (int i = 0; i < 12; i++) /* selection sort, ascending */
        for (int j = i + 1; j < 12; j++)
            if (costs[j] < costs[i]) {
                double x = costs[i];
                costs[i] = costs[j];
                costs[j] = x;
            }
    double opt = 100.0;
    for (int i = 0; i < 6; i++)
        opt -= costs[i];
    ck_assert_double_eq_tol(s->scores[best], opt, 1e-9);
    lns_free(m);
    bosch_problem_free(p);
}
END_TEST

/* Degenerate anchors end the method with BOSCH_E_ANCHORS and a reason. */
START_TEST(degenerate_anchors)
{
    bosch_problem *p = problem(3, 2, 0.5);
    struct lns_config c = config(50, BOSCH_VARIANT_FULL);
    lns *m = lns_create(p, &c, NULL);
    struct lns_batch b;
    ck_assert_int_eq(lns_next(m, &b), 2);
    double scores[2] = {1.0, 1.0}, walls[2] = {NAN, NAN};
    ck_assert_int_eq(lns_tell(m, scores, walls), BOSCH_E_ANCHORS);
    ck_assert_int_eq(lns_status(m), BOSCH_E_ANCHORS);
    ck_assert_ptr_nonnull(strstr(lns_error(m), "S_full"));
    ck_assert_int_eq(lns_next(m, &b), BOSCH_E_ANCHORS); /* over for good */
    ck_assert_int_lt(lns_best(m), 0);
    lns_free(m);
    bosch_problem_free(p);
}
END_TEST

/* lns_keep stores the told part of a batch and nothing else; given
 * anchors skip the anchor batch. */
START_TEST(keep_partial_batch)
{
    bosch_problem *p = problem(4, 4, 0.5);
    struct lns_config c = config(100, BOSCH_VARIANT_FULL);
    c.anchors_given = 1;
    c.s_full = 100.0;
    c.s_swa = 0.0;
    lns *m = lns_create(p, &c, NULL);
    struct lns_batch b;
    int n = lns_next(m, &b);
    ck_assert_int_gt(n, 1);
    ck_assert_int_eq(b.stage, BOSCH_STAGE_PROBE);
    uint8_t told[64] = {0};
    double scores[64], walls[64];
    for (int i = 0; i < n; i++) {
        scores[i] = score_of(b.masks + (size_t)i * 16, 4, 4);
        walls[i] = 0.5;
    }
    told[1] = 1;
    ck_assert_int_eq(lns_keep(m, told, scores, walls), BOSCH_OK);
    const eval_store *s = lns_store(m);
    ck_assert_uint_eq(s->n, 1);
    ck_assert_double_eq(s->scores[0], scores[1]);
    ck_assert_uint_eq(lns_evaluations(m, BOSCH_STAGE_PROBE), 1);
    lns_free(m);
    bosch_problem_free(p);
}
END_TEST

/* A budget below the anchors' two evaluations is refused at once. */
START_TEST(budget_below_anchors)
{
    bosch_problem *p = problem(2, 2, 0.5);
    struct lns_config c = config(1, BOSCH_VARIANT_FULL);
    lns *m = lns_create(p, &c, NULL);
    struct lns_batch b;
    ck_assert_int_eq(lns_next(m, &b), BOSCH_E_INVALID);
    ck_assert_ptr_nonnull(strstr(lns_error(m), "anchor"));
    lns_free(m);
    bosch_problem_free(p);
}
END_TEST

/* The layer-level variant: every candidate meets the exact target. */
START_TEST(layer_level_masks_feasible)
{
    bosch_problem *p = problem(6, 4, 0.625); /* 15 units: not whole layers */
    struct lns_config c = config(200, BOSCH_VARIANT_LAYER_LEVEL);
    lns *m = lns_create(p, &c, NULL);
    size_t units = bosch_problem_units(p);
    for (;;) {
        struct lns_batch b;
        int n = lns_next(m, &b);
        if (n <= 0)
            break;
        double scores[64], walls[64];
        for (size_t i = 0; i < b.n; i++) {
            const uint8_t *mask = b.masks + i * units;
            if (b.stage == BOSCH_STAGE_GROUP)
                ck_assert(bosch_mask_is_feasible(p, mask));
            scores[i] = score_of(mask, 6, 4);
            walls[i] = NAN;
        }
        ck_assert_int_eq(lns_tell(m, scores, walls), BOSCH_OK);
    }
    ck_assert_int_eq(lns_status(m), BOSCH_CONVERGED); /* C(6,3) = 20 masks, budget 200 */
    ck_assert_uint_lt(lns_store(m)->n, 200);
    ck_assert_int_ge(lns_best(m), 0);
    lns_free(m);
    bosch_problem_free(p);
}
END_TEST

/* Same seed, same sequence of batches; another seed, another sequence. */
START_TEST(deterministic)
{
    bosch_problem *p = problem(6, 4, 0.75);
    uint64_t hash[3];
    for (int run = 0; run < 3; run++) {
        struct lns_config c = config(150, BOSCH_VARIANT_FULL);
        c.seed = run < 2 ? 11 : 12;
        lns *m = lns_create(p, &c, NULL);
        struct trace t = {0};
        drive(m, p, &t);
        const eval_store *s = lns_store(m);
        uint64_t h = 1469598103934665603ULL;
        for (size_t w = 0; w < s->n * s->words; w++)
            h = (h ^ s->masks[w]) * 1099511628211ULL;
        hash[run] = h;
        lns_free(m);
    }
    ck_assert_uint_eq(hash[0], hash[1]);
    ck_assert_uint_ne(hash[0], hash[2]);
    bosch_problem_free(p);
}
END_TEST

static Suite *lns_suite(void)
{
    Suite *s = suite_create("lns");
    TCase *tc = tcase_create("stages");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, stages_in_order);
    tcase_add_test(tc, probe_is_top_down_cascade);
    tcase_add_test(tc, best_is_best_feasible);
    tcase_add_test(tc, degenerate_anchors);
    tcase_add_test(tc, keep_partial_batch);
    tcase_add_test(tc, budget_below_anchors);
    tcase_add_test(tc, layer_level_masks_feasible);
    tcase_add_test(tc, deterministic);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(lns_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
