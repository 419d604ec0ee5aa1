/*
 * Testbed: parameters and validation, the landscape model (costs, pairs,
 * clamped energy), noise determinism, ready-made evaluators, and the exact
 * optimum by brute force.
 */
#include <pthread.h>
#include <stdio.h>

#include "support/support.h"

static const char *const params[] = {"total_cost",   "heavy_fraction",   "layer_sensitivity",
                                     "entanglement", "backup_strength",  "synergy_fraction",
                                     "cross_layer",  "noise"};
static const double defaults[] = {4, 0.1, 0.7, 0, 15, 0.25, 0.5, 0};
#define N_PARAMS 8

START_TEST(create_and_defaults)
{
    bosch_testbed *tb = bosch_testbed_create(5, 3, 1);
    ck_assert_ptr_nonnull(tb);
    ck_assert_uint_eq(bosch_testbed_units(tb), 15);
    for (int i = 0; i < N_PARAMS; i++)
        ck_assert_msg(bosch_testbed_get(tb, params[i]) == defaults[i], "%s = %g, default %g",
                      params[i], bosch_testbed_get(tb, params[i]), defaults[i]);
    ck_assert(isnan(bosch_testbed_get(tb, "no_such_param")));
    ck_assert(isnan(bosch_testbed_get(tb, NULL)));
    ck_assert_uint_eq(bosch_testbed_interactions(tb), 0); /* entanglement 0 */
    bosch_testbed_free(tb);
    ck_assert_ptr_null(bosch_testbed_create(0, 3, 1));
    ck_assert_ptr_null(bosch_testbed_create(3, 0, 1));
    ck_assert_ptr_null(bosch_testbed_create(4097, 4096, 1));
}
END_TEST

START_TEST(parameter_validation)
{
    bosch_testbed *tb = bosch_testbed_create(4, 4, 1);
    ck_assert_int_eq(bosch_testbed_set(tb, "no_such_param", 1.0), BOSCH_E_OPTION);
    ck_assert_int_eq(bosch_testbed_set(tb, "", 1.0), BOSCH_E_OPTION);
    for (int i = 0; i < N_PARAMS; i++) {
        ck_assert_msg(bosch_testbed_set(tb, params[i], -0.5) == BOSCH_E_INVALID, "%s < 0",
                      params[i]);
        ck_assert_msg(bosch_testbed_set(tb, params[i], NAN) == BOSCH_E_INVALID, "%s NaN",
                      params[i]);
        ck_assert_msg(bosch_testbed_set(tb, params[i], INFINITY) == BOSCH_E_INVALID, "%s inf",
                      params[i]);
        ck_assert_msg(bosch_testbed_get(tb, params[i]) == defaults[i], "%s changed by a refusal",
                      params[i]);
    }
    /* Fractions are <= 1. */
    ck_assert_int_eq(bosch_testbed_set(tb, "heavy_fraction", 1.5), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_testbed_set(tb, "synergy_fraction", 1.01), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_testbed_set(tb, "cross_layer", 2.0), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_testbed_set(tb, "heavy_fraction", 1.0), BOSCH_OK);
    ck_assert_int_eq(bosch_testbed_set(tb, "cross_layer", 0.0), BOSCH_OK);
    /* Non-fractions may exceed 1. */
    ck_assert_int_eq(bosch_testbed_set(tb, "entanglement", 2.5), BOSCH_OK);
    ck_assert_int_eq(bosch_testbed_set(tb, "backup_strength", 10.0), BOSCH_OK);
    ck_assert_int_eq(bosch_testbed_set(tb, "total_cost", 30.0), BOSCH_OK);
    ck_assert_int_eq(bosch_testbed_set(tb, "layer_sensitivity", 2.0), BOSCH_OK);
    ck_assert_int_eq(bosch_testbed_set(tb, "noise", 0.5), BOSCH_OK);
    ck_assert(bosch_testbed_get(tb, "entanglement") == 2.5);
    ck_assert(bosch_testbed_get(tb, "noise") == 0.5);
    ck_assert(bosch_testbed_get(tb, "heavy_fraction") == 1.0);
    ck_assert_int_eq(bosch_testbed_set(NULL, "noise", 0.1), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_testbed_set(tb, NULL, 0.1), BOSCH_E_INVALID);
    bosch_testbed_free(tb);
}
END_TEST

START_TEST(all_full_scores_one)
{
    bosch_testbed *tb = bosch_testbed_create(6, 4, 3);
    ck_assert_int_eq(bosch_testbed_set(tb, "entanglement", 1.0), BOSCH_OK);
    uint8_t m[24] = {0};
    double s = -1;
    ck_assert_int_eq(bosch_testbed_score(tb, m, &s), BOSCH_OK);
    ck_assert_double_eq(s, 1.0);
    ck_assert_int_eq(bosch_testbed_score_clean(tb, m, &s), BOSCH_OK);
    ck_assert_double_eq(s, 1.0);
    ck_assert_int_eq(bosch_testbed_eval(m, 24, &s, tb), 0);
    ck_assert_double_eq(s, 1.0);
    /* all-SWA: exp(-energy) with energy >= total cost - |synergy|, so < 1. */
    memset(m, 1, 24);
    ck_assert_int_eq(bosch_testbed_score_clean(tb, m, &s), BOSCH_OK);
    ck_assert(s < 1.0 && s > 0.0);
    ck_assert_int_eq(bosch_testbed_score(NULL, m, &s), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_testbed_score(tb, NULL, &s), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_testbed_score(tb, m, NULL), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_testbed_score_clean(tb, NULL, &s), BOSCH_E_INVALID);
    bosch_testbed_free(tb);
}
END_TEST

START_TEST(costs_sum_to_total)
{
    const double totals[] = {12.0, 5.0, 0.5};
    for (int i = 0; i < 3; i++) {
        bosch_testbed *tb = bosch_testbed_create(7, 5, (uint64_t)i);
        ck_assert_int_eq(bosch_testbed_set(tb, "total_cost", totals[i]), BOSCH_OK);
        double sum = 0;
        for (size_t u = 0; u < 35; u++) {
            double c = bosch_testbed_unit_cost(tb, u);
            ck_assert(c >= 0.0 && isfinite(c));
            sum += c;
        }
        ck_assert_double_eq_tol(sum, totals[i], 1e-9 * totals[i]);
        ck_assert(isnan(bosch_testbed_unit_cost(tb, 35)));
        bosch_testbed_free(tb);
    }
    /* All retrieval units, no layer sensitivity: costs within a factor 3. */
    bosch_testbed *tb = bosch_testbed_create(4, 8, 9);
    ck_assert_int_eq(bosch_testbed_set(tb, "heavy_fraction", 1.0), BOSCH_OK);
    ck_assert_int_eq(bosch_testbed_set(tb, "layer_sensitivity", 0.0), BOSCH_OK);
    double mn = INFINITY, mx = 0;
    for (size_t u = 0; u < 32; u++) {
        double c = bosch_testbed_unit_cost(tb, u);
        mn = c < mn ? c : mn;
        mx = c > mx ? c : mx;
    }
    ck_assert(mn > 0);
    ck_assert_msg(mx / mn <= 3.0 + 1e-9, "max/min cost %g > 3 with U(1,3) costs", mx / mn);
    bosch_testbed_free(tb);
}
END_TEST

/* S(z) = exp(-max(0, sum c z + sum J z z)) on random masks. */
static void check_energy_model(bosch_testbed *tb, uint64_t seed)
{
    size_t U = bosch_testbed_units(tb), P = bosch_testbed_interactions(tb);
    trng r = {seed};
    uint8_t m[256];
    ck_assert_uint_le(U, 256);
    for (int t = 0; t < 200; t++) {
        double d = trng_unif(&r);
        for (size_t u = 0; u < U; u++)
            m[u] = trng_unif(&r) < d;
        double e = 0;
        for (size_t u = 0; u < U; u++)
            if (m[u])
                e += bosch_testbed_unit_cost(tb, u);
        for (size_t i = 0; i < P; i++) {
            size_t a, b;
            double j;
            ck_assert_int_eq(bosch_testbed_interaction(tb, i, &a, &b, &j), BOSCH_OK);
            if (m[a] && m[b])
                e += j;
        }
        double want = exp(-(e > 0 ? e : 0)), got;
        ck_assert_int_eq(bosch_testbed_score_clean(tb, m, &got), BOSCH_OK);
        ck_assert_msg(fabs(got - want) <= 1e-12 * (want + 1e-300) + 1e-15,
                      "score_clean %.17g, model %.17g", got, want);
    }
}

START_TEST(energy_model)
{
    bosch_testbed *tb = bosch_testbed_create(6, 5, 4);
    check_energy_model(tb, 1); /* no interactions */
    ck_assert_int_eq(bosch_testbed_set(tb, "entanglement", 1.5), BOSCH_OK);
    ck_assert_uint_eq(bosch_testbed_interactions(tb), 45); /* round(1.5 * 30) */
    check_energy_model(tb, 2);
    ck_assert_int_eq(bosch_testbed_set(tb, "synergy_fraction", 1.0), BOSCH_OK);
    check_energy_model(tb, 3); /* negative energies get clamped */
    bosch_testbed_free(tb);
}
END_TEST

START_TEST(interaction_pairs)
{
    bosch_testbed *tb = bosch_testbed_create(8, 5, 6);
    ck_assert_int_eq(bosch_testbed_set(tb, "entanglement", 0.5), BOSCH_OK);
    ck_assert_uint_eq(bosch_testbed_interactions(tb), 20);
    double mean_c = bosch_testbed_get(tb, "total_cost") / 40.0;
    double bs = bosch_testbed_get(tb, "backup_strength");
    int nb = 0, ns = 0;
    for (size_t i = 0; i < 20; i++) {
        size_t u, v;
        double j;
        ck_assert_int_eq(bosch_testbed_interaction(tb, i, &u, &v, &j), BOSCH_OK);
        ck_assert_uint_lt(u, 40);
        ck_assert_uint_lt(v, 40);
        ck_assert_uint_ne(u, v);
        double cu = bosch_testbed_unit_cost(tb, u), cv = bosch_testbed_unit_cost(tb, v);
        if (j > 0) { /* backup: backup_strength * mean(c) * U(1,2) */
            nb++;
            ck_assert_msg(j >= bs * mean_c * (1 - 1e-9) && j <= 2 * bs * mean_c * (1 + 1e-9),
                          "backup J %g outside [%g, %g]", j, bs * mean_c, 2 * bs * mean_c);
        } else { /* synergy: -min(c_u, c_v) / 2 */
            ns++;
            ck_assert_double_eq_tol(j, -(cu < cv ? cu : cv) / 2.0, 1e-12);
        }
    }
    ck_assert_int_gt(nb, 0);
    size_t u, v;
    double j;
    ck_assert_int_lt(bosch_testbed_interaction(tb, 20, &u, &v, &j), 0);
    /* All synergy / all backup. */
    ck_assert_int_eq(bosch_testbed_set(tb, "synergy_fraction", 1.0), BOSCH_OK);
    for (size_t i = 0; i < bosch_testbed_interactions(tb); i++) {
        ck_assert_int_eq(bosch_testbed_interaction(tb, i, NULL, NULL, &j), BOSCH_OK);
        ck_assert(j <= 0);
    }
    ck_assert_int_eq(bosch_testbed_set(tb, "synergy_fraction", 0.0), BOSCH_OK);
    for (size_t i = 0; i < bosch_testbed_interactions(tb); i++) {
        ck_assert_int_eq(bosch_testbed_interaction(tb, i, NULL, NULL, &j), BOSCH_OK);
        ck_assert(j > 0);
    }
    /* Partner layer. */
    ck_assert_int_eq(bosch_testbed_set(tb, "cross_layer", 0.0), BOSCH_OK);
    for (size_t i = 0; i < bosch_testbed_interactions(tb); i++) {
        ck_assert_int_eq(bosch_testbed_interaction(tb, i, &u, &v, NULL), BOSCH_OK);
        ck_assert_uint_eq(u / 5, v / 5);
    }
    ck_assert_int_eq(bosch_testbed_set(tb, "cross_layer", 1.0), BOSCH_OK);
    for (size_t i = 0; i < bosch_testbed_interactions(tb); i++) {
        ck_assert_int_eq(bosch_testbed_interaction(tb, i, &u, &v, NULL), BOSCH_OK);
        ck_assert_uint_ne(u / 5, v / 5);
    }
    bosch_testbed_free(tb);
}
END_TEST

START_TEST(regeneration_is_deterministic)
{
    bosch_testbed *a = bosch_testbed_create(5, 4, 77), *b = bosch_testbed_create(5, 4, 77);
    bosch_testbed *c = bosch_testbed_create(5, 4, 78);
    int differs = 0;
    for (size_t u = 0; u < 20; u++) {
        ck_assert_double_eq(bosch_testbed_unit_cost(a, u), bosch_testbed_unit_cost(b, u));
        differs |= bosch_testbed_unit_cost(a, u) != bosch_testbed_unit_cost(c, u);
    }
    ck_assert_msg(differs, "seeds 77 and 78 give the same landscape");
    /* Setting a parameter to its current value regenerates the same landscape. */
    double before[20];
    for (size_t u = 0; u < 20; u++)
        before[u] = bosch_testbed_unit_cost(a, u);
    ck_assert_int_eq(bosch_testbed_set(a, "total_cost", bosch_testbed_get(a, "total_cost")),
                     BOSCH_OK);
    for (size_t u = 0; u < 20; u++)
        ck_assert_double_eq(bosch_testbed_unit_cost(a, u), before[u]);
    /* Same parameter sequence, same landscape. */
    ck_assert_int_eq(bosch_testbed_set(a, "entanglement", 1.0), BOSCH_OK);
    ck_assert_int_eq(bosch_testbed_set(b, "entanglement", 1.0), BOSCH_OK);
    ck_assert_uint_eq(bosch_testbed_interactions(a), bosch_testbed_interactions(b));
    for (size_t i = 0; i < bosch_testbed_interactions(a); i++) {
        size_t u1, v1, u2, v2;
        double j1, j2;
        ck_assert_int_eq(bosch_testbed_interaction(a, i, &u1, &v1, &j1), BOSCH_OK);
        ck_assert_int_eq(bosch_testbed_interaction(b, i, &u2, &v2, &j2), BOSCH_OK);
        ck_assert_uint_eq(u1, u2);
        ck_assert_uint_eq(v1, v2);
        ck_assert_double_eq(j1, j2);
    }
    bosch_testbed_free(a);
    bosch_testbed_free(b);
    bosch_testbed_free(c);
}
END_TEST

START_TEST(noise_deterministic_per_mask)
{
    bosch_testbed *a = make_testbed(4, 4, 5, 0.5, 0.05);
    bosch_testbed *b = make_testbed(4, 4, 5, 0.5, 0.05);
    trng r = {3};
    uint8_t m[16], m2[16];
    int noisy = 0, varies = 0;
    double first_noise = NAN;
    for (int t = 0; t < 100; t++) {
        for (int u = 0; u < 16; u++)
            m[u] = (uint8_t)trng_below(&r, 2);
        double s1, s2, s3, c;
        ck_assert_int_eq(bosch_testbed_score(a, m, &s1), BOSCH_OK);
        ck_assert_int_eq(bosch_testbed_score(a, m, &s2), BOSCH_OK);
        ck_assert_int_eq(bosch_testbed_score(b, m, &s3), BOSCH_OK);
        ck_assert_double_eq(s1, s2);
        ck_assert_double_eq(s1, s3);
        /* Non-zero bytes count as 1 here too. */
        for (int u = 0; u < 16; u++)
            m2[u] = m[u] ? 0x7F : 0;
        ck_assert_int_eq(bosch_testbed_score(a, m2, &s2), BOSCH_OK);
        ck_assert_double_eq(s1, s2);
        ck_assert_int_eq(bosch_testbed_score_clean(a, m, &c), BOSCH_OK);
        noisy += s1 != c;
        if (isnan(first_noise))
            first_noise = s1 - c;
        else
            varies |= (s1 - c) != first_noise;
    }
    ck_assert_int_gt(noisy, 90);
    ck_assert_msg(varies, "noise is the same for every mask");
    /* The noise has roughly the requested standard deviation. */
    double sum2 = 0;
    int n = 0;
    for (int t = 0; t < 2000; t++) {
        for (int u = 0; u < 16; u++)
            m[u] = (uint8_t)trng_below(&r, 2);
        double s, c;
        bosch_testbed_score(a, m, &s);
        bosch_testbed_score_clean(a, m, &c);
        sum2 += (s - c) * (s - c);
        n++;
    }
    double sd = sqrt(sum2 / n);
    ck_assert_msg(sd > 0.04 && sd < 0.06, "noise sd %g, expected 0.05", sd);
    /* Another seed, other noise. */
    bosch_testbed *c2 = make_testbed(4, 4, 6, 0.5, 0.05);
    double s1, s2;
    memset(m, 0, 16);
    bosch_testbed_score(a, m, &s1);
    bosch_testbed_score(c2, m, &s2);
    ck_assert(s1 != s2);
    bosch_testbed_free(a);
    bosch_testbed_free(b);
    bosch_testbed_free(c2);
}
END_TEST

START_TEST(ready_made_evaluators)
{
    bosch_testbed *tb = make_testbed(3, 4, 5, 1.0, 0.02);
    trng r = {9};
    uint8_t ms[5 * 12];
    double sc[5], s;
    for (int i = 0; i < 60; i++)
        ms[i] = (uint8_t)trng_below(&r, 2);
    ck_assert_int_eq(bosch_testbed_batch_eval(ms, 5, 12, sc, tb), 0);
    for (int i = 0; i < 5; i++) {
        ck_assert_int_eq(bosch_testbed_eval(ms + i * 12, 12, &s, tb), 0);
        ck_assert_double_eq(s, sc[i]);
        ck_assert_double_eq(s, tb_score(tb, ms + i * 12));
    }
    /* Wrong unit count: failure (non-zero). */
    ck_assert_int_ne(bosch_testbed_eval(ms, 11, &s, tb), 0);
    ck_assert_int_ne(bosch_testbed_batch_eval(ms, 2, 13, sc, tb), 0);
    ck_assert_int_ne(bosch_testbed_eval(ms, 12, &s, NULL), 0);
    bosch_testbed_free(tb);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Exact optimum                                                             */
/* ------------------------------------------------------------------------ */
static void optimum_matches_enumeration(bosch_testbed *tb, bosch_problem *p, const uint32_t *lo,
                                        const uint32_t *hi)
{
    size_t U = bosch_problem_units(p);
    uint8_t x[32] = {0}, best_x[32], got_x[32];
    double best = -INFINITY, got = NAN;
    int any = 0;
    do {
        if (!own_feasible(p, x, lo, hi))
            continue;
        ck_assert(bosch_mask_is_feasible(p, x));
        any = 1;
        double s = tb_score(tb, x);
        if (s > best) {
            best = s;
            memcpy(best_x, x, U);
        }
    } while (bits_next(x, U));
    ck_assert(any);
    ck_assert_int_eq(bosch_testbed_optimum(tb, p, got_x, &got), BOSCH_OK);
    ck_assert_double_eq(got, best);
    ck_assert_mem_eq(got_x, best_x, U);
    ck_assert_int_eq(bosch_testbed_optimum(tb, p, NULL, NULL), BOSCH_OK);
    ck_assert_int_eq(bosch_testbed_optimum(tb, p, NULL, &got), BOSCH_OK);
    ck_assert_double_eq(got, best);
}

START_TEST(optimum_tiny)
{
    for (uint64_t seed = 1; seed <= 3; seed++) {
        bosch_testbed *tb = make_testbed(3, 4, seed, 1.0, seed == 3 ? 0.05 : 0.0);
        bosch_problem *p = bosch_problem_create(3, 4, 1);
        for (size_t T = 0; T <= 12; T += 3) {
            ck_assert_int_eq(bosch_problem_set_target_units(p, T), BOSCH_OK);
            optimum_matches_enumeration(tb, p, NULL, NULL);
        }
        /* With fixed units and layer bounds. */
        ck_assert_int_eq(bosch_problem_set_target_units(p, 5), BOSCH_OK);
        ck_assert_int_eq(bosch_problem_fix_unit(p, 0, 0, BOSCH_FIX_SWA), BOSCH_OK);
        ck_assert_int_eq(bosch_problem_fix_unit(p, 2, 3, BOSCH_FIX_FULL), BOSCH_OK);
        ck_assert_int_eq(bosch_problem_set_layer_bounds(p, 1, 0.5, 0.75), BOSCH_OK);
        const uint32_t lo[3] = {0, 2, 0}, hi[3] = {4, 3, 4};
        optimum_matches_enumeration(tb, p, lo, hi);
        bosch_problem_free(p);
        bosch_testbed_free(tb);
    }
}
END_TEST

START_TEST(optimum_errors)
{
    bosch_testbed *tb = make_testbed(16, 16, 1, 0.0, 0.0);
    bosch_problem *p = bosch_problem_create(16, 16, 1); /* C(256, 128) masks */
    double s;
    ck_assert_int_eq(bosch_testbed_optimum(tb, p, NULL, &s), BOSCH_E_TOO_LARGE);
    /* 2^26 is the limit: C(30, 15) = 155117520 > 2^26, C(28, 14) = 40116600 <= 2^26. */
    bosch_testbed *t2 = make_testbed(3, 10, 1, 0.0, 0.0);
    bosch_problem *p2 = bosch_problem_create(3, 10, 1);
    ck_assert_int_eq(bosch_testbed_optimum(t2, p2, NULL, &s), BOSCH_E_TOO_LARGE);
    /* Fixing units shrinks the feasible set below the limit: C(20, 5) masks. */
    for (uint32_t g = 0; g < 10; g++)
        ck_assert_int_eq(bosch_problem_fix_unit(p2, 0, g, BOSCH_FIX_SWA), BOSCH_OK);
    ck_assert_int_eq(bosch_problem_set_target_units(p2, 15), BOSCH_OK);
    ck_assert_int_eq(bosch_testbed_optimum(t2, p2, NULL, &s), BOSCH_OK);
    /* Shape mismatch, infeasible problem, NULL. */
    bosch_problem *p3 = bosch_problem_create(3, 4, 1);
    ck_assert_int_eq(bosch_testbed_optimum(tb, p3, NULL, &s), BOSCH_E_INVALID);
    bosch_testbed *t3 = make_testbed(3, 4, 1, 0.0, 0.0);
    ck_assert_int_eq(bosch_problem_set_target_units(p3, 1), BOSCH_OK);
    ck_assert_int_eq(bosch_problem_fix_unit(p3, 0, 0, BOSCH_FIX_SWA), BOSCH_OK);
    ck_assert_int_eq(bosch_problem_fix_unit(p3, 0, 1, BOSCH_FIX_SWA), BOSCH_OK);
    ck_assert_int_eq(bosch_testbed_optimum(t3, p3, NULL, &s), BOSCH_E_INFEASIBLE);
    ck_assert_int_eq(bosch_testbed_optimum(NULL, p3, NULL, &s), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_testbed_optimum(t3, NULL, NULL, &s), BOSCH_E_INVALID);
    bosch_problem_free(p);
    bosch_problem_free(p2);
    bosch_problem_free(p3);
    bosch_testbed_free(tb);
    bosch_testbed_free(t2);
    bosch_testbed_free(t3);
}
END_TEST

/* Scoring is read-only and may run on many threads at once. */
typedef struct {
    const bosch_testbed *tb;
    const uint8_t *masks;
    size_t n, units;
    double *out;
} score_job;

static void *score_thread(void *arg)
{
    score_job *j = arg;
    for (int rep = 0; rep < 20; rep++)
        for (size_t i = 0; i < j->n; i++)
            if (bosch_testbed_score(j->tb, j->masks + i * j->units, &j->out[i]) != BOSCH_OK)
                j->out[i] = NAN;
    return NULL;
}

START_TEST(concurrent_scoring)
{
    bosch_testbed *tb = make_testbed(8, 8, 5, 1.0, 0.05);
    enum { NM = 200, NT = 4 };
    uint8_t *masks = malloc(NM * 64);
    double *ref = malloc(NM * sizeof(double)), *outs = malloc(NT * NM * sizeof(double));
    trng r = {11};
    for (size_t i = 0; i < NM * 64; i++)
        masks[i] = (uint8_t)trng_below(&r, 2);
    for (size_t i = 0; i < NM; i++)
        ref[i] = tb_score(tb, masks + i * 64);
    pthread_t th[NT];
    score_job jobs[NT];
    for (int t = 0; t < NT; t++) {
        jobs[t] = (score_job){tb, masks, NM, 64, outs + t * NM};
        ck_assert_int_eq(pthread_create(&th[t], NULL, score_thread, &jobs[t]), 0);
    }
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < NT; t++)
        for (size_t i = 0; i < NM; i++)
            ck_assert_double_eq(outs[t * NM + i], ref[i]);
    free(masks);
    free(ref);
    free(outs);
    bosch_testbed_free(tb);
}
END_TEST

/* ---- landscape families ------------------------------------------------------ */

static double clean(const bosch_testbed *tb, const uint8_t *m)
{
    double s = NAN;
    ck_assert_int_eq(bosch_testbed_score_clean(tb, m, &s), BOSCH_OK);
    return s;
}

static void random_mask(trng *r, uint8_t *m, size_t n)
{
    for (size_t i = 0; i < n; i++)
        m[i] = (uint8_t)trng_below(r, 2);
}

START_TEST(family_create_and_names)
{
    static const char *const names[] = {"energy",   "circuits", "qubo",         "nk2",
                                        "nk4",      "coverage", "layer-concave"};
    for (int f = 0; f < BOSCH_TESTBED_FAMILY_LAST_; f++) {
        ck_assert_str_eq(bosch_testbed_family_name(f), names[f]);
        bosch_testbed *tb = bosch_testbed_create_family(f, 6, 4, 3);
        ck_assert_ptr_nonnull(tb);
        ck_assert_int_eq(bosch_testbed_family(tb), f);
        ck_assert_uint_eq(bosch_testbed_units(tb), 24);
        if (f != BOSCH_TESTBED_ENERGY) {
            ck_assert_int_eq(bosch_testbed_set(tb, "entanglement", 1.0), BOSCH_E_OPTION);
            ck_assert(isnan(bosch_testbed_get(tb, "total_cost")));
            ck_assert(isnan(bosch_testbed_unit_cost(tb, 0)));
            ck_assert_uint_eq(bosch_testbed_interactions(tb), 0);
            ck_assert(bosch_testbed_get(tb, "noise") == 0.0);
        }
        bosch_testbed_free(tb);
        /* tiny shapes do not hang */
        for (uint32_t n = 1; n <= 3; n++) {
            tb = bosch_testbed_create_family(f, n, 1, 5);
            ck_assert_ptr_nonnull(tb);
            uint8_t m[3] = {0, 1, 0};
            ck_assert(isfinite(clean(tb, m)));
            bosch_testbed_free(tb);
        }
    }
    ck_assert_ptr_null(bosch_testbed_family_name(-1));
    ck_assert_ptr_null(bosch_testbed_family_name(BOSCH_TESTBED_FAMILY_LAST_));
    ck_assert_ptr_null(bosch_testbed_create_family(-1, 4, 4, 1));
    ck_assert_ptr_null(bosch_testbed_create_family(BOSCH_TESTBED_FAMILY_LAST_, 4, 4, 1));
    ck_assert_ptr_null(bosch_testbed_create_family(BOSCH_TESTBED_QUBO, 0, 4, 1));
    ck_assert_int_eq(bosch_testbed_family(NULL), BOSCH_E_INVALID);
}
END_TEST

/* Family ENERGY is bosch_testbed_create, bit for bit; every family is a
 * deterministic function of the seed, and the seed matters. */
START_TEST(family_determinism)
{
    enum { N = 224, NM = 50 };
    uint8_t m[N];
    for (int f = 0; f < BOSCH_TESTBED_FAMILY_LAST_; f++) {
        bosch_testbed *a = bosch_testbed_create_family(f, 28, 8, 7);
        bosch_testbed *b = f == 0 ? bosch_testbed_create(28, 8, 7)
                                  : bosch_testbed_create_family(f, 28, 8, 7);
        bosch_testbed *c = bosch_testbed_create_family(f, 28, 8, 8);
        if (f == 0) {
            ck_assert_int_eq(bosch_testbed_set(a, "entanglement", 1.0), BOSCH_OK);
            ck_assert_int_eq(bosch_testbed_set(b, "entanglement", 1.0), BOSCH_OK);
            ck_assert_int_eq(bosch_testbed_set(c, "entanglement", 1.0), BOSCH_OK);
        }
        trng r = {(uint64_t)f + 1};
        int differ = 0;
        for (int i = 0; i < NM; i++) {
            random_mask(&r, m, N);
            ck_assert_double_eq(clean(a, m), clean(b, m));
            differ += clean(a, m) != clean(c, m);
        }
        ck_assert_msg(differ > NM / 2, "family %d: seed 8 is too like seed 7", f);
        bosch_testbed_free(a);
        bosch_testbed_free(b);
        bosch_testbed_free(c);
    }
}
END_TEST

START_TEST(family_ranges_and_noise)
{
    enum { N = 288, NM = 200 };
    uint8_t m[N];
    for (int f = 1; f < BOSCH_TESTBED_FAMILY_LAST_; f++) {
        bosch_testbed *tb = bosch_testbed_create_family(f, 36, 8, 11);
        double lo = f == BOSCH_TESTBED_QUBO ? -1.0 : 0.0;
        trng r = {3};
        for (int i = 0; i < NM; i++) {
            random_mask(&r, m, N);
            double s = clean(tb, m);
            ck_assert_msg(s >= lo && s <= 1.0, "family %d score %g", f, s);
        }
        memset(m, 0, N);
        double full = clean(tb, m);
        memset(m, 1, N);
        double swa = clean(tb, m);
        if (f == BOSCH_TESTBED_CIRCUITS || f == BOSCH_TESTBED_COVERAGE ||
            f == BOSCH_TESTBED_LAYER_CONCAVE) {
            ck_assert_double_eq_tol(full, 1.0, 1e-12);
            ck_assert_double_eq_tol(swa, 0.0, 1e-12);
        }
        if (f == BOSCH_TESTBED_QUBO)
            ck_assert_double_eq_tol(swa, 0.0, 1e-12);
        /* noise: deterministic per mask, around the clean score */
        ck_assert_int_eq(bosch_testbed_set(tb, "noise", 0.05), BOSCH_OK);
        random_mask(&r, m, N);
        double s1, s2;
        ck_assert_int_eq(bosch_testbed_score(tb, m, &s1), BOSCH_OK);
        ck_assert_int_eq(bosch_testbed_score(tb, m, &s2), BOSCH_OK);
        ck_assert_double_eq(s1, s2);
        ck_assert(s1 != clean(tb, m));
        ck_assert(fabs(s1 - clean(tb, m)) < 0.5);
        bosch_testbed_free(tb);
    }
}
END_TEST

/* Redundant circuits: no single unit going SWA loses a circuit, so the
 * single-unit drops from all-full add up to the linear share (10%) only,
 * while all-SWA loses everything; and a unit's drop is larger exactly when
 * it is the last full unit of a circuit. */
START_TEST(family_circuits_redundancy)
{
    enum { N = 224 };
    bosch_testbed *tb = bosch_testbed_create_family(BOSCH_TESTBED_CIRCUITS, 28, 8, 5);
    uint8_t m[N];
    memset(m, 0, N);
    double full = clean(tb, m), drops = 0.0, lin[N];
    for (size_t u = 0; u < N; u++) {
        m[u] = 1;
        lin[u] = full - clean(tb, m);
        drops += lin[u];
        m[u] = 0;
    }
    ck_assert_double_eq_tol(drops, 0.1, 1e-9);
    /* Turning units SWA one by one (all but one of them) loses their linear
     * values only... some unit's drop then exceeds its linear value: it was
     * the last live unit of a circuit. */
    trng r = {9};
    int lost = 0;
    for (int t = 0; t < 2000 && !lost; t++) {
        size_t u = (size_t)trng_below(&r, N);
        if (m[u])
            continue;
        double before = clean(tb, m);
        m[u] = 1;
        double d = before - clean(tb, m);
        ck_assert(d >= lin[u] - 1e-12);
        lost += d > lin[u] + 1e-9;
    }
    ck_assert(lost);
    bosch_testbed_free(tb);
}
END_TEST

/* QUBO is quadratic: every third-order difference vanishes. Coverage is
 * monotone and submodular. Layer-concave depends on per-layer counts only,
 * with non-increasing gains. */
START_TEST(family_structure)
{
    enum { N = 64 };
    uint8_t m[N];
    trng r = {21};
    bosch_testbed *q = bosch_testbed_create_family(BOSCH_TESTBED_QUBO, 8, 8, 2);
    for (int t = 0; t < 200; t++) {
        random_mask(&r, m, N);
        size_t a = (size_t)trng_below(&r, N), b = (size_t)trng_below(&r, N),
               c = (size_t)trng_below(&r, N);
        if (a == b || b == c || a == c)
            continue;
        double d3 = 0.0;
        for (int i = 0; i < 8; i++) {
            m[a] = i & 1, m[b] = (i >> 1) & 1, m[c] = (i >> 2) & 1;
            int sign = ((i & 1) + ((i >> 1) & 1) + ((i >> 2) & 1)) % 2 ? -1 : 1;
            d3 += sign * clean(q, m);
        }
        ck_assert_double_eq_tol(d3, 0.0, 1e-12);
    }
    bosch_testbed_free(q);
    bosch_testbed *cv = bosch_testbed_create_family(BOSCH_TESTBED_COVERAGE, 8, 8, 2);
    for (int t = 0; t < 200; t++) {
        /* B a superset of A in full units; the gain of unit u shrinks */
        uint8_t A[N], B[N];
        random_mask(&r, A, N);
        memcpy(B, A, N);
        for (size_t i = 0; i < N; i++)
            if (B[i] && trng_below(&r, 2))
                B[i] = 0;
        size_t u = (size_t)trng_below(&r, N);
        A[u] = B[u] = 1;
        double a0 = clean(cv, A), b0 = clean(cv, B);
        ck_assert(b0 >= a0 - 1e-12);
        A[u] = B[u] = 0;
        double ga = clean(cv, A) - a0, gb = clean(cv, B) - b0;
        ck_assert(ga >= -1e-12 && gb >= -1e-12);
        ck_assert(gb <= ga + 1e-12);
    }
    bosch_testbed_free(cv);
    bosch_testbed *lc = bosch_testbed_create_family(BOSCH_TESTBED_LAYER_CONCAVE, 8, 8, 2);
    for (uint32_t l = 0; l < 8; l++) {
        memset(m, 1, N);
        double prev = clean(lc, m), prev_gain = INFINITY;
        for (uint32_t g = 0; g < 8; g++) {
            m[l * 8 + g] = 0;
            double s = clean(lc, m);
            /* same count, other units: same score */
            uint8_t m2[N];
            memset(m2, 1, N);
            for (uint32_t k = 0; k <= g; k++)
                m2[l * 8 + 7 - k] = 0;
            ck_assert_double_eq_tol(clean(lc, m2), s, 1e-12);
            ck_assert(s - prev > 0.0);
            ck_assert(s - prev <= prev_gain + 1e-12);
            prev_gain = s - prev;
            prev = s;
        }
    }
    bosch_testbed_free(lc);
}
END_TEST

/* The exact optimum equals brute force on small shapes (structural DP for
 * circuits and layer-concave, brute force for the rest), and honours
 * constraints. */
START_TEST(family_exact_optimum)
{
    static const struct {
        uint32_t L, G;
        double rho;
    } cases[] = {{4, 4, 0.5}, {4, 4, 0.75}, {6, 4, 0.75}, {6, 4, 0.875}, {5, 4, 0.5}};
    for (int f = 1; f < BOSCH_TESTBED_FAMILY_LAST_; f++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
            for (uint64_t seed = 1; seed <= 2; seed++) {
                bosch_testbed *tb = bosch_testbed_create_family(f, cases[c].L, cases[c].G, seed);
                bosch_problem *p = bosch_problem_create(cases[c].L, cases[c].G, 1);
                ck_assert_int_eq(bosch_problem_set_target_ratio(p, cases[c].rho), BOSCH_OK);
                size_t n = bosch_testbed_units(tb);
                uint8_t m1[32], m2[32];
                double s1, s2;
                ck_assert_int_eq(bosch_testbed_exact_optimum(tb, p, m1, &s1), BOSCH_OK);
                ck_assert_int_eq(bosch_testbed_optimum(tb, p, m2, &s2), BOSCH_OK);
                ck_assert_msg(fabs(s1 - s2) < 1e-12, "family %d case %zu: %g vs brute %g", f, c,
                              s1, s2);
                ck_assert(bosch_mask_is_feasible(p, m1));
                ck_assert_double_eq_tol(clean(tb, m1), s1, 1e-12);
                (void)n;
                bosch_problem_free(p);
                bosch_testbed_free(tb);
            }
    /* Layer-concave with bounds and fixed units: DP vs brute force. */
    for (uint64_t seed = 1; seed <= 4; seed++) {
        bosch_testbed *tb = bosch_testbed_create_family(BOSCH_TESTBED_LAYER_CONCAVE, 5, 4, seed);
        bosch_problem *p = bosch_problem_create(5, 4, 1);
        ck_assert_int_eq(bosch_problem_set_target_ratio(p, 0.6), BOSCH_OK);
        ck_assert_int_eq(bosch_problem_set_layer_bounds(p, 0, 0.5, 1.0), BOSCH_OK);
        ck_assert_int_eq(bosch_problem_set_layer_bounds(p, 2, 0.0, 0.25), BOSCH_OK);
        ck_assert_int_eq(bosch_problem_fix_unit(p, 1, 0, BOSCH_FIX_FULL), BOSCH_OK);
        ck_assert_int_eq(bosch_problem_fix_unit(p, 3, 2, BOSCH_FIX_SWA), BOSCH_OK);
        uint8_t m1[20], m2[20];
        double s1, s2;
        ck_assert_int_eq(bosch_testbed_exact_optimum(tb, p, m1, &s1), BOSCH_OK);
        ck_assert_int_eq(bosch_testbed_optimum(tb, p, m2, &s2), BOSCH_OK);
        ck_assert_double_eq_tol(s1, s2, 1e-12);
        ck_assert(bosch_mask_is_feasible(p, m1));
        bosch_problem_free(p);
        bosch_testbed_free(tb);
    }
    /* Full size: structural families are exact, the rest too large. */
    bosch_problem *p = bosch_problem_create(36, 8, 4);
    ck_assert_int_eq(bosch_problem_set_target_ratio(p, 0.75), BOSCH_OK);
    for (int f = 1; f < BOSCH_TESTBED_FAMILY_LAST_; f++) {
        bosch_testbed *tb = bosch_testbed_create_family(f, 36, 8, 1);
        uint8_t m[288];
        double s;
        int rc = bosch_testbed_exact_optimum(tb, p, m, &s);
        if (f == BOSCH_TESTBED_CIRCUITS || f == BOSCH_TESTBED_LAYER_CONCAVE) {
            ck_assert_int_eq(rc, BOSCH_OK);
            ck_assert(bosch_mask_is_feasible(p, m));
            ck_assert_double_eq_tol(clean(tb, m), s, 1e-12);
        } else {
            ck_assert_int_eq(rc, BOSCH_E_TOO_LARGE);
        }
        bosch_testbed_free(tb);
    }
    bosch_problem_free(p);
}
END_TEST

static Suite *testbed_suite(void)
{
    Suite *s = suite_create("testbed");
    TCase *tc = tcase_new(s, "landscape");
    tcase_add_test(tc, create_and_defaults);
    tcase_add_test(tc, parameter_validation);
    tcase_add_test(tc, all_full_scores_one);
    tcase_add_test(tc, costs_sum_to_total);
    tcase_add_test(tc, energy_model);
    tcase_add_test(tc, interaction_pairs);
    tcase_add_test(tc, regeneration_is_deterministic);
    tcase_add_test(tc, noise_deterministic_per_mask);
    tcase_add_test(tc, ready_made_evaluators);
    tcase_add_test(tc, concurrent_scoring);
    tc = tcase_new(s, "optimum");
    tcase_add_test(tc, optimum_tiny);
    tcase_add_test(tc, optimum_errors);
    tc = tcase_new(s, "families");
    tcase_add_test(tc, family_create_and_names);
    tcase_add_test(tc, family_determinism);
    tcase_add_test(tc, family_ranges_and_noise);
    tcase_add_test(tc, family_circuits_redundancy);
    tcase_add_test(tc, family_structure);
    tcase_add_test(tc, family_exact_optimum);
    return s;
}

int main(void)
{
    return run_suite(testbed_suite());
}
