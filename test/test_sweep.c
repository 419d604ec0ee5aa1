/*
 * Optimizer tests: the flip sweep at the end of stage 3 (options
 * sweep_pairs and sweep_gap). Where it runs, its single flips are exactly
 * the free units of one mask, fixed units untouched, and the budget is
 * spent; where its test says no, the search is the one without a sweep;
 * its options are checked, journaled and independent of threads.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, rmdir */
#include <stdio.h>
#include <unistd.h>

#include "support/support.h"

enum { L = 12, G = 4, UNITS = L * G };

/* What the log said of the sweep. */
typedef struct {
    int begins, skipped, done;
} sweep_log;

static void on_log(int level, const char *msg, void *user)
{
    (void)level;
    sweep_log *s = user;
    s->begins += strstr(msg, "flip sweep begins") != NULL;
    s->skipped += strstr(msg, "flip sweep skipped") != NULL;
    s->done += strstr(msg, "flip sweep done") != NULL;
}

static bosch_problem *problem(int fixed)
{
    bosch_problem *p = bosch_problem_create(L, G, 2);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(bosch_problem_set_target_ratio(p, 0.5), BOSCH_OK);
    if (fixed) {
        ck_assert_int_eq(bosch_problem_fix_unit(p, 0, 0, BOSCH_FIX_FULL), BOSCH_OK);
        ck_assert_int_eq(bosch_problem_fix_unit(p, 3, 1, BOSCH_FIX_FULL), BOSCH_OK);
        ck_assert_int_eq(bosch_problem_fix_unit(p, 7, 2, BOSCH_FIX_SWA), BOSCH_OK);
    }
    return p;
}

/* One run of the default on a testbed family; opts: NAME=VALUE pairs. */
static bosch_result *run(const bosch_problem *p, bosch_testbed *tb, uint64_t budget,
                         sweep_log *log, const char *const *opts, size_t nopts, uint32_t threads)
{
    bosch_optimizer *opt = bosch_optimizer_create(p);
    ck_assert_ptr_nonnull(opt);
    ck_assert_int_eq(bosch_set_budget(opt, budget), BOSCH_OK);
    ck_assert_int_eq(bosch_set_seed(opt, 3), BOSCH_OK);
    ck_assert_int_eq(bosch_set_raw_scores(opt, 1), BOSCH_OK);
    for (size_t i = 0; i < nopts; i += 2)
        ck_assert_int_eq(bosch_set_option(opt, opts[i], opts[i + 1]), BOSCH_OK);
    if (log) {
        memset(log, 0, sizeof *log);
        ck_assert_int_eq(bosch_set_log(opt, on_log, log, BOSCH_LOG_INFO), BOSCH_OK);
    }
    ck_assert_int_eq(bosch_set_evaluator(opt, bosch_testbed_eval, tb), BOSCH_OK);
    ck_assert_int_eq(bosch_set_evaluator_thread_safe(opt, 1), BOSCH_OK);
    ck_assert_int_eq(bosch_set_threads(opt, threads), BOSCH_OK);
    int st = bosch_optimize(opt);
    ck_assert_msg(st > 0, "%s: %s", bosch_err_name(st), bosch_optimizer_last_error(opt));
    bosch_result *res = get_result(opt);
    bosch_optimizer_free(opt);
    return res;
}

static const char *const no_sweep[] = {"sweep_pairs", "0"};

static size_t free_units(const bosch_problem *p)
{
    size_t n = 0;
    for (uint32_t u = 0; u < UNITS; u++)
        n += bosch_problem_unit_fix(p, u / G, u % G) == BOSCH_FIX_NONE;
    return n;
}

/* Fixed units keep their state. */
static void assert_fixed_kept(const bosch_problem *p, const uint8_t *m)
{
    for (uint32_t u = 0; u < UNITS; u++) {
        int fix = bosch_problem_unit_fix(p, u / G, u % G);
        if (fix != BOSCH_FIX_NONE)
            ck_assert_int_eq(m[u], fix == BOSCH_FIX_SWA);
    }
}

/* The sweep's records: infeasible stage-3 records other than the anchors.
 * The first ones are its single flips: the free units of one base mask,
 * each once; returns how many there are. The rest (*probes, when not NULL)
 * are substitute probes: rounds of one base with more SWA units than the
 * target (the critical units made SWA), then masks one free unit off that
 * base, no unit twice in a round. */
static size_t check_sweep(const bosch_result *res, const bosch_problem *p, size_t *probes)
{
    size_t target = bosch_problem_target_units(p), n = bosch_result_history_size(res);
    size_t nfree = free_units(p);
    uint8_t m[UNITS], base[UNITS], seen[UNITS] = {0};
    size_t flips = 0, probed = 0;
    int have_base = 0;
    for (size_t i = 0; i < n; i++) {
        int stage;
        history_entry(res, i, m, NULL, &stage);
        if (stage != BOSCH_STAGE_GROUP || bosch_mask_is_feasible(p, m))
            continue;
        size_t ones = mask_ones(m, UNITS);
        assert_fixed_kept(p, m);
        if (flips == nfree) { /* a probe round: its base, or one unit off it */
            if (mask_hamming(m, base, UNITS) != 1) {
                ck_assert_msg(ones > target,
                              "record %zu: a probe base with %zu SWA units, target %zu", i, ones,
                              target);
                memcpy(base, m, UNITS);
                memset(seen, 0, sizeof seen);
                continue;
            }
            for (size_t u = 0; u < UNITS; u++)
                if (m[u] != base[u]) {
                    ck_assert_msg(!seen[u], "record %zu: unit %zu probed twice in a round", i, u);
                    seen[u] = 1;
                }
            probed++;
            continue;
        }
        ck_assert_msg(ones + 1 == target || ones == target + 1,
                      "record %zu: %zu SWA units, target %zu", i, ones, target);
        if (!have_base) { /* the base: the flip undone */
            for (size_t u = 0; u < UNITS && !have_base; u++) {
                memcpy(base, m, UNITS);
                base[u] ^= 1;
                have_base = bosch_mask_is_feasible(p, base);
            }
            ck_assert(have_base);
        }
        ck_assert_uint_eq(mask_hamming(m, base, UNITS), 1);
        for (size_t u = 0; u < UNITS; u++)
            if (m[u] != base[u]) {
                ck_assert_msg(!seen[u], "unit %zu flipped twice", u);
                seen[u] = 1;
            }
        if (++flips == nfree)
            memset(base, 0, sizeof base); /* no probe round yet */
    }
    if (probes)
        *probes = probed;
    return flips;
}

/* Circuits (additive effects near the end): the sweep runs, flips every
 * free unit once around one mask, spends the budget, and its result is no
 * worse than the best mask it started from. */
START_TEST(sweep_runs_where_effects_add_up)
{
    bosch_problem *p = problem(1);
    bosch_testbed *tb = bosch_testbed_create_family(BOSCH_TESTBED_CIRCUITS, L, G, 5);
    ck_assert_ptr_nonnull(tb);
    sweep_log log;
    bosch_result *res = run(p, tb, 400, &log, NULL, 0, 1);
    ck_assert_int_eq(log.begins, 1);
    ck_assert_int_eq(log.done, 1);
    ck_assert_int_eq(bosch_result_status(res), BOSCH_DONE);
    ck_assert_double_eq_tol(bosch_result_cost(res), 400.0, 1e-9);
    check_final_mask(res, p);
    size_t probes = 0;
    ck_assert_uint_eq(check_sweep(res, p, &probes), free_units(p));
    ck_assert_uint_gt(probes, 0); /* circuits have critical units */
    /* The result is the best feasible record, the sweep's pairs included. */
    ck_assert_double_eq_tol(bosch_result_score(res), best_feasible_in_history(res, p), 1e-12);
    bosch_result *off = run(p, tb, 400, NULL, no_sweep, 2, 1);
    ck_assert_uint_eq(check_sweep(off, p, NULL), 0);
    bosch_result_free(off);
    bosch_result_free(res);
    bosch_testbed_free(tb);
    bosch_problem_free(p);
}
END_TEST

/* Runs `a` (its log into *log) and `b` on one circuits instance and
 * asserts that they are the same search, record by record. */
typedef struct {
    const char *const *opts;
    size_t nopts;
    uint32_t threads;
} setting;

static void assert_same_search(int fixed, uint64_t budget, setting a, setting b, sweep_log *log,
                               const char *what)
{
    bosch_problem *p = problem(fixed);
    bosch_testbed *tb = bosch_testbed_create_family(BOSCH_TESTBED_CIRCUITS, L, G, 5);
    bosch_result *ra = run(p, tb, budget, log, a.opts, a.nopts, a.threads);
    bosch_result *rb = run(p, tb, budget, NULL, b.opts, b.nopts, b.threads);
    ck_assert_msg(histories_equal(ra, rb), "%s: histories differ", what);
    assert_same(ra, rb, what);
    bosch_result_free(ra);
    bosch_result_free(rb);
    bosch_testbed_free(tb);
    bosch_problem_free(p);
}

/* Where the test says no (sweep_gap 0 always does), the search is exactly
 * the one without a sweep. */
START_TEST(skipped_sweep_changes_nothing)
{
    static const char *const gap0[] = {"sweep_gap", "0"};
    sweep_log log;
    assert_same_search(0, 400, (setting){gap0, 2, 1}, (setting){no_sweep, 2, 1}, &log,
                       "sweep_gap 0 vs sweep_pairs 0");
    ck_assert_int_eq(log.skipped, 1);
    ck_assert_int_eq(log.begins, 0);
}
END_TEST

/* On every family: a skipped sweep leaves the search as it was, a sweep
 * that runs has the flips' structure; both happen among the families. */
START_TEST(families_either_sweep_or_not)
{
    bosch_problem *p = problem(0);
    int ran = 0, skipped = 0;
    for (int f = BOSCH_TESTBED_CIRCUITS; f < BOSCH_TESTBED_FAMILY_LAST_; f++) {
        bosch_testbed *tb = bosch_testbed_create_family(f, L, G, 2);
        sweep_log log;
        bosch_result *a = run(p, tb, 400, &log, NULL, 0, 1);
        bosch_result *b = run(p, tb, 400, NULL, no_sweep, 2, 1);
        ck_assert_int_le(log.begins + log.skipped, 1);
        check_final_mask(a, p);
        if (log.begins) {
            ran++;
            ck_assert_uint_eq(check_sweep(a, p, NULL), UNITS);
            ck_assert_double_eq_tol(bosch_result_cost(a), 400.0, 1e-9);
        } else {
            skipped++;
            ck_assert_msg(histories_equal(a, b), "family %s: no sweep, yet another search",
                          bosch_testbed_family_name(f));
        }
        bosch_result_free(a);
        bosch_result_free(b);
        bosch_testbed_free(tb);
    }
    ck_assert_int_gt(ran, 0);
    ck_assert_int_gt(skipped, 0);
    bosch_problem_free(p);
}
END_TEST

/* Too small a budget for the flips: no sweep, nothing changes. */
START_TEST(no_room_no_sweep)
{
    sweep_log log;
    assert_same_search(0, 90, (setting){NULL, 0, 1}, (setting){no_sweep, 2, 1}, &log,
                       "budget 90, sweep on vs off");
    ck_assert_int_eq(log.begins, 0);
}
END_TEST

/* Same seed, same result with 1 and 4 threads, the sweep included. */
START_TEST(sweep_independent_of_threads)
{
    sweep_log log;
    assert_same_search(1, 400, (setting){NULL, 0, 1}, (setting){NULL, 0, 4}, &log,
                       "threads 1 vs 4");
    ck_assert_int_eq(log.begins, 1);
}
END_TEST

static double get_double(const bosch_optimizer *opt, const char *name)
{
    double v = NAN;
    ck_assert_int_eq(bosch_get_option_double(opt, name, &v), BOSCH_OK);
    return v;
}

START_TEST(sweep_options)
{
    bosch_problem *p = problem(0);
    bosch_optimizer *opt = bosch_optimizer_create(p);
    uint64_t k = 0;
    ck_assert_int_eq(bosch_get_option_uint(opt, "sweep_pairs", &k), BOSCH_OK);
    ck_assert_uint_eq(k, 40);
    ck_assert_double_eq_tol(get_double(opt, "sweep_gap"), 0.005, 1e-15);
    ck_assert_int_eq(bosch_set_sweep_pairs(opt, 0), BOSCH_OK);
    ck_assert_int_eq(bosch_set_sweep_pairs(opt, 1048576), BOSCH_OK);
    ck_assert_int_eq(bosch_set_sweep_pairs(opt, 1048577), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_option(opt, "sweep_pairs", "12"), BOSCH_OK);
    ck_assert_int_eq(bosch_get_option_uint(opt, "sweep_pairs", &k), BOSCH_OK);
    ck_assert_uint_eq(k, 12);
    ck_assert_int_eq(bosch_set_option(opt, "sweep_pairs", "x"), BOSCH_E_OPTION);
    ck_assert_int_eq(bosch_set_sweep_gap(opt, 0.0), BOSCH_OK);
    ck_assert_int_eq(bosch_set_sweep_gap(opt, 1.0), BOSCH_OK);
    ck_assert_int_eq(bosch_set_sweep_gap(opt, 0.02), BOSCH_OK);
    ck_assert_double_eq_tol(get_double(opt, "sweep_gap"), 0.02, 1e-15);
    ck_assert_int_eq(bosch_set_sweep_gap(opt, -0.1), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_sweep_gap(opt, 1.5), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_sweep_gap(opt, NAN), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_sweep_gap(opt, INFINITY), BOSCH_E_INVALID);
    ck_assert_double_eq_tol(get_double(opt, "sweep_gap"), 0.02, 1e-15); /* unchanged */
    ck_assert_int_eq(bosch_set_sweep_pairs(NULL, 1), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_set_sweep_gap(NULL, 0.1), BOSCH_E_INVALID);
    /* Not once the search has started. */
    ck_assert_int_eq(bosch_set_budget(opt, 100), BOSCH_OK);
    size_t n = 0;
    ck_assert_int_eq(bosch_ask(opt, &n), BOSCH_OK);
    ck_assert_int_eq(bosch_set_sweep_pairs(opt, 3), BOSCH_E_STATE);
    ck_assert_int_eq(bosch_set_option(opt, "sweep_gap", "0.5"), BOSCH_E_STATE);
    bosch_optimizer_free(opt);
    bosch_problem_free(p);
}
END_TEST

/* A journal written with other sweep settings is not resumed (the header
 * names the field); one with the same settings is. */
START_TEST(sweep_settings_journaled)
{
    char dir[] = "/tmp/bosch-sweep-XXXXXX", path[64];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/j.bin", dir);
    bosch_problem *p = problem(0);
    bosch_testbed *tb = bosch_testbed_create_family(BOSCH_TESTBED_CIRCUITS, L, G, 5);
    for (int way = 0; way < 2; way++) {
        bosch_optimizer *opt = bosch_optimizer_create(p);
        ck_assert_int_eq(bosch_set_budget(opt, 60), BOSCH_OK);
        ck_assert_int_eq(bosch_set_sweep_pairs(opt, 7), BOSCH_OK);
        ck_assert_int_eq(bosch_set_journal(opt, path, BOSCH_JOURNAL_AUTO), BOSCH_OK);
        ck_assert_int_eq(bosch_set_evaluator(opt, bosch_testbed_eval, tb), BOSCH_OK);
        ck_assert_int_gt(bosch_optimize(opt), 0); /* written, then resumed as is */
        bosch_optimizer_free(opt);
        (void)way;
    }
    for (int field = 0; field < 2; field++) {
        bosch_optimizer *opt = bosch_optimizer_create(p);
        ck_assert_int_eq(bosch_set_budget(opt, 60), BOSCH_OK);
        if (field)
            ck_assert_int_eq(bosch_set_sweep_gap(opt, 0.01), BOSCH_OK);
        ck_assert_int_eq(bosch_set_sweep_pairs(opt, field ? 7 : 40), BOSCH_OK);
        ck_assert_int_eq(bosch_set_journal(opt, path, BOSCH_JOURNAL_RESUME), BOSCH_OK);
        ck_assert_int_eq(bosch_set_evaluator(opt, bosch_testbed_eval, tb), BOSCH_OK);
        ck_assert_int_eq(bosch_optimize(opt), BOSCH_E_MISMATCH);
        const char *why = bosch_optimizer_last_error(opt);
        ck_assert_msg(strstr(why, field ? "sweep_gap" : "sweep_pairs") != NULL, "%s", why);
        bosch_optimizer_free(opt);
    }
    remove(path);
    rmdir(dir);
    bosch_testbed_free(tb);
    bosch_problem_free(p);
}
END_TEST

static Suite *sweep_suite(void)
{
    Suite *s = suite_create("sweep");
    TCase *tc = tcase_new(s, "sweep");
    tcase_add_test(tc, sweep_runs_where_effects_add_up);
    tcase_add_test(tc, skipped_sweep_changes_nothing);
    tcase_add_test(tc, families_either_sweep_or_not);
    tcase_add_test(tc, no_room_no_sweep);
    tcase_add_test(tc, sweep_independent_of_threads);
    tc = tcase_new(s, "options");
    tcase_add_test(tc, sweep_options);
    tcase_add_test(tc, sweep_settings_journaled);
    return s;
}

int main(void)
{
    return run_suite(sweep_suite());
}
