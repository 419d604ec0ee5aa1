/*
 * bosch_repair() / bosch_mask_is_feasible(): properties on random masks
 * (feasibility, idempotence, minimal change equal to the exact lower bound,
 * the documented tie rule), explicit cases and error paths.
 */
#include <stdio.h>

#include "support/support.h"

/* A random instance and our own model of its constraints. */
typedef struct {
    uint32_t L, G;
    size_t U;
    bosch_problem *p;
    int *fix;     /* per unit: enum bosch_fix */
    uint32_t *lo; /* per layer, integer SWA-count bounds */
    uint32_t *hi;
    int has_bounds;
    int has_fix;
} inst;

static void inst_free(inst *in)
{
    bosch_problem_free(in->p);
    free(in->fix);
    free(in->lo);
    free(in->hi);
}

static int is_pow2(uint32_t x)
{
    return x && !(x & (x - 1));
}

static void inst_random(inst *in, uint32_t L, uint32_t G, trng *r, int want_fix, int want_bounds)
{
    memset(in, 0, sizeof *in);
    in->L = L;
    in->G = G;
    in->U = (size_t)L * G;
    in->p = bosch_problem_create(L, G, 1);
    ck_assert_ptr_nonnull(in->p);
    in->fix = calloc(in->U, sizeof(int));
    in->lo = calloc(L, sizeof(uint32_t));
    in->hi = calloc(L, sizeof(uint32_t));
    ck_assert(in->fix && in->lo && in->hi);
    ck_assert_int_eq(bosch_problem_set_target_units(in->p, (size_t)trng_below(r, in->U + 1)),
                     BOSCH_OK);
    for (size_t u = 0; u < in->U; u++) {
        int f = BOSCH_FIX_NONE;
        if (want_fix) {
            uint64_t d = trng_below(r, 10);
            f = d == 0 ? BOSCH_FIX_FULL : d == 1 ? BOSCH_FIX_SWA : BOSCH_FIX_NONE;
        }
        in->fix[u] = f;
        if (f != BOSCH_FIX_NONE) {
            in->has_fix = 1;
            ck_assert_int_eq(
                bosch_problem_fix_unit(in->p, (uint32_t)(u / G), (uint32_t)(u % G), f), BOSCH_OK);
        }
    }
    for (uint32_t l = 0; l < L; l++) {
        in->lo[l] = 0;
        in->hi[l] = G;
        /* Powers of two only, so that k/G * G is exact in floating point. */
        if (want_bounds && is_pow2(G) && trng_below(r, 3) == 0) {
            uint32_t a = (uint32_t)trng_below(r, G + 1), b = (uint32_t)trng_below(r, G + 1);
            in->lo[l] = a < b ? a : b;
            in->hi[l] = a < b ? b : a;
            in->has_bounds = 1;
            ck_assert_int_eq(bosch_problem_set_layer_bounds(in->p, l, (double)in->lo[l] / G,
                                                            (double)in->hi[l] / G),
                             BOSCH_OK);
        }
    }
}

/* Effective per-layer range of the SWA count given fixed units. */
static void eff_range(const inst *in, uint32_t l, uint32_t *elo, uint32_t *ehi)
{
    uint32_t fs = 0, ff = 0;
    for (uint32_t g = 0; g < in->G; g++) {
        int f = in->fix[(size_t)l * in->G + g];
        fs += f == BOSCH_FIX_SWA;
        ff += f == BOSCH_FIX_FULL;
    }
    *elo = in->lo[l] > fs ? in->lo[l] : fs;
    *ehi = in->hi[l] < in->G - ff ? in->hi[l] : in->G - ff;
}

static int inst_feasible_global(const inst *in)
{
    size_t slo = 0, shi = 0, T = bosch_problem_target_units(in->p);
    for (uint32_t l = 0; l < in->L; l++) {
        uint32_t a, b;
        eff_range(in, l, &a, &b);
        if (a > b)
            return 0;
        slo += a;
        shi += b;
    }
    return slo <= T && T <= shi;
}

static int inst_feasible_counts(const inst *in, const uint32_t *k)
{
    for (uint32_t l = 0; l < in->L; l++) {
        uint32_t a, b;
        eff_range(in, l, &a, &b);
        if (k[l] < a || k[l] > b)
            return 0;
    }
    return 1;
}

/* Exact minimum number of changes (see the header contract). */
static size_t lower_bound(const inst *in, const uint8_t *m, const uint32_t *k)
{
    size_t wrong = 0, cost = 0;
    long total = 0;
    for (uint32_t l = 0; l < in->L; l++) {
        long c = 0;
        for (uint32_t g = 0; g < in->G; g++) {
            size_t u = (size_t)l * in->G + g;
            int v = m[u] != 0;
            if (in->fix[u] == BOSCH_FIX_FULL) {
                wrong += v;
                v = 0;
            } else if (in->fix[u] == BOSCH_FIX_SWA) {
                wrong += !v;
                v = 1;
            }
            c += v;
        }
        if (k) {
            cost += (size_t)labs(c - (long)k[l]);
        } else {
            uint32_t a, b;
            eff_range(in, l, &a, &b);
            long d = c < (long)a ? (long)a : c > (long)b ? (long)b : c;
            cost += (size_t)labs(c - d);
            total += d;
        }
    }
    if (!k)
        cost += (size_t)labs((long)bosch_problem_target_units(in->p) - total);
    return wrong + cost;
}

/* The tie rule applied to the candidates (free units) of one pool: the
 * expected output when only one direction of change is possible and no
 * bounds interfere. `pool` selects units (layer index or -1 = all). */
static void tie_rule_expect(const inst *in, uint8_t *x, const double *prio, long layer, long want)
{
    size_t begin = layer < 0 ? 0 : (size_t)layer * in->G;
    size_t end = layer < 0 ? in->U : begin + in->G;
    long have = 0;
    for (size_t u = begin; u < end; u++)
        have += x[u] != 0;
    while (have > want) { /* switch SWA -> full: lowest priority, then lowest index */
        size_t best = SIZE_MAX;
        for (size_t u = begin; u < end; u++) {
            if (!x[u] || in->fix[u] != BOSCH_FIX_NONE)
                continue;
            double pu = prio ? prio[u] : 0.0;
            if (best == SIZE_MAX || pu < (prio ? prio[best] : 0.0))
                best = u;
        }
        ck_assert(best != SIZE_MAX);
        x[best] = 0;
        have--;
    }
    while (have < want) { /* switch full -> SWA: highest priority, then lowest index */
        size_t best = SIZE_MAX;
        for (size_t u = begin; u < end; u++) {
            if (x[u] || in->fix[u] != BOSCH_FIX_NONE)
                continue;
            double pu = prio ? prio[u] : 0.0;
            if (best == SIZE_MAX || pu > (prio ? prio[best] : 0.0))
                best = u;
        }
        ck_assert(best != SIZE_MAX);
        x[best] = 1;
        have++;
    }
}

static void apply_fixed(const inst *in, uint8_t *x)
{
    for (size_t u = 0; u < in->U; u++) {
        x[u] = x[u] != 0;
        if (in->fix[u] == BOSCH_FIX_FULL)
            x[u] = 0;
        else if (in->fix[u] == BOSCH_FIX_SWA)
            x[u] = 1;
    }
}

static void random_input(trng *r, uint8_t *m, size_t U)
{
    static const double dens[] = {0.0, 0.1, 0.5, 0.9, 1.0};
    static const uint8_t ones[] = {1, 1, 0x80, 0xFF};
    double d = dens[trng_below(r, 5)];
    for (size_t u = 0; u < U; u++)
        m[u] = trng_unif(r) < d ? ones[trng_below(r, 4)] : 0;
}

static double *random_priority(trng *r, size_t U)
{
    if (trng_below(r, 2) == 0)
        return NULL;
    double *pr = malloc(U * sizeof(double));
    ck_assert_ptr_nonnull(pr);
    int ties = trng_below(r, 2) == 0;
    for (size_t u = 0; u < U; u++)
        pr[u] = ties ? (double)trng_below(r, 3) : trng_unif(r) * 10.0 - 5.0;
    return pr;
}

static void check_counts(const inst *in, const uint8_t *out, const uint32_t *k)
{
    for (uint32_t l = 0; l < in->L; l++)
        ck_assert_uint_eq(layer_ones(out, l, in->G), k[l]);
    for (size_t u = 0; u < in->U; u++) {
        if (in->fix[u] == BOSCH_FIX_FULL)
            ck_assert_uint_eq(out[u], 0);
        if (in->fix[u] == BOSCH_FIX_SWA)
            ck_assert_uint_eq(out[u], 1);
    }
}

static const uint32_t shapes[][2] = {{1, 1}, {1, 8}, {4, 4}, {6, 3}, {3, 8}, {8, 2}, {5, 1}, {2, 16}};
#define N_SHAPES (sizeof shapes / sizeof shapes[0])

/* One random trial in global mode. Returns 1 if the instance was feasible. */
static int trial_global(trng *r, uint32_t L, uint32_t G, int want_fix, int want_bounds)
{
    inst in;
    inst_random(&in, L, G, r, want_fix, want_bounds);
    uint8_t *m = malloc(in.U), *out = malloc(in.U), *out2 = malloc(in.U), *exp = malloc(in.U);
    ck_assert(m && out && out2 && exp);
    random_input(r, m, in.U);
    double *prio = random_priority(r, in.U);
    int feasible = inst_feasible_global(&in);
    int chk = bosch_problem_check(in.p, NULL, 0);
    int rc = bosch_repair(in.p, m, prio, NULL, out);
    if (!feasible) {
        ck_assert_int_eq(chk, BOSCH_E_INFEASIBLE);
        ck_assert_int_eq(rc, BOSCH_E_INFEASIBLE);
    } else {
        ck_assert_int_eq(chk, BOSCH_OK);
        ck_assert_msg(rc >= 0, "repair -> %d (%s)", rc, bosch_err_name(rc));
        ck_assert(mask_is_binary(out, in.U));
        ck_assert_uint_eq((size_t)rc, mask_hamming(m, out, in.U));
        ck_assert_msg((size_t)rc == lower_bound(&in, m, NULL),
                      "L=%u G=%u T=%zu: repair changed %d units, minimum is %zu", L, G,
                      bosch_problem_target_units(in.p), rc, lower_bound(&in, m, NULL));
        ck_assert(own_feasible(in.p, out, in.lo, in.hi));
        ck_assert(bosch_mask_is_feasible(in.p, out));
        /* Idempotent. */
        ck_assert_int_eq(bosch_repair(in.p, out, prio, NULL, out2), 0);
        ck_assert_mem_eq(out, out2, in.U);
        /* In place. */
        memcpy(out2, m, in.U);
        ck_assert_int_eq(bosch_repair(in.p, out2, prio, NULL, out2), rc);
        ck_assert_mem_eq(out, out2, in.U);
        /* Tie rule (exact when no bounds can interfere). */
        if (!in.has_bounds) {
            memcpy(exp, m, in.U);
            apply_fixed(&in, exp);
            tie_rule_expect(&in, exp, prio, -1, (long)bosch_problem_target_units(in.p));
            ck_assert_msg(memcmp(exp, out, in.U) == 0, "tie rule violated (L=%u G=%u, prio %s)",
                          L, G, prio ? "given" : "NULL");
        }
    }
    /* bosch_mask_is_feasible agrees with our model on the random input. */
    ck_assert_int_eq(bosch_mask_is_feasible(in.p, m) != 0, own_feasible(in.p, m, in.lo, in.hi));
    free(prio);
    free(m);
    free(out);
    free(out2);
    free(exp);
    inst_free(&in);
    return feasible;
}

START_TEST(random_global_plain)
{
    trng r = {1};
    for (size_t s = 0; s < N_SHAPES; s++)
        for (int t = 0; t < 150; t++)
            ck_assert(trial_global(&r, shapes[s][0], shapes[s][1], 0, 0)); /* always feasible */
}
END_TEST

START_TEST(random_global_fixed)
{
    trng r = {2};
    int nf = 0, ni = 0;
    for (size_t s = 0; s < N_SHAPES; s++)
        for (int t = 0; t < 150; t++) {
            if (trial_global(&r, shapes[s][0], shapes[s][1], 1, 0))
                nf++;
            else
                ni++;
        }
    ck_assert_int_gt(nf, 200);
    ck_assert_int_gt(ni, 5);
}
END_TEST

START_TEST(random_global_bounds)
{
    trng r = {3};
    int nf = 0, ni = 0;
    for (size_t s = 0; s < N_SHAPES; s++)
        for (int t = 0; t < 200; t++) {
            if (trial_global(&r, shapes[s][0], shapes[s][1], t % 2, 1))
                nf++;
            else
                ni++;
        }
    ck_assert_int_gt(nf, 200);
    ck_assert_int_gt(ni, 5);
}
END_TEST

/* One random trial in layer_counts mode. */
static int trial_counts(trng *r, uint32_t L, uint32_t G, int want_fix, int want_bounds)
{
    inst in;
    inst_random(&in, L, G, r, want_fix, want_bounds);
    uint8_t *m = malloc(in.U), *out = malloc(in.U), *out2 = malloc(in.U), *exp = malloc(in.U);
    uint32_t *k = malloc(L * sizeof(uint32_t));
    ck_assert(m && out && out2 && exp && k);
    random_input(r, m, in.U);
    double *prio = random_priority(r, in.U);
    for (uint32_t l = 0; l < L; l++) {
        uint32_t a, b;
        eff_range(&in, l, &a, &b);
        /* Mostly admissible counts, sometimes anything in [0, G]. */
        if (a <= b && trng_below(r, 4) != 0)
            k[l] = a + (uint32_t)trng_below(r, b - a + 1);
        else
            k[l] = (uint32_t)trng_below(r, G + 1);
    }
    int feasible = inst_feasible_counts(&in, k);
    int rc = bosch_repair(in.p, m, prio, k, out);
    if (!feasible) {
        ck_assert_int_eq(rc, BOSCH_E_INFEASIBLE);
    } else {
        ck_assert_msg(rc >= 0, "repair(counts) -> %d (%s)", rc, bosch_err_name(rc));
        ck_assert(mask_is_binary(out, in.U));
        ck_assert_uint_eq((size_t)rc, mask_hamming(m, out, in.U));
        ck_assert_msg((size_t)rc == lower_bound(&in, m, k),
                      "L=%u G=%u: repair(counts) changed %d units, minimum is %zu", L, G, rc,
                      lower_bound(&in, m, k));
        check_counts(&in, out, k);
        ck_assert_int_eq(bosch_repair(in.p, out, prio, k, out2), 0);
        ck_assert_mem_eq(out, out2, in.U);
        memcpy(out2, m, in.U);
        ck_assert_int_eq(bosch_repair(in.p, out2, prio, k, out2), rc);
        ck_assert_mem_eq(out, out2, in.U);
        /* Tie rule, per layer (bounds cannot interfere with exact counts). */
        memcpy(exp, m, in.U);
        apply_fixed(&in, exp);
        for (uint32_t l = 0; l < L; l++)
            tie_rule_expect(&in, exp, prio, (long)l, (long)k[l]);
        ck_assert_msg(memcmp(exp, out, in.U) == 0, "tie rule violated in counts mode (L=%u G=%u)",
                      L, G);
    }
    free(prio);
    free(k);
    free(m);
    free(out);
    free(out2);
    free(exp);
    inst_free(&in);
    return feasible;
}

START_TEST(random_counts)
{
    trng r = {4};
    int nf = 0, ni = 0;
    for (size_t s = 0; s < N_SHAPES; s++)
        for (int t = 0; t < 200; t++) {
            if (trial_counts(&r, shapes[s][0], shapes[s][1], t % 3 != 0, t % 2))
                nf++;
            else
                ni++;
        }
    ck_assert_int_gt(nf, 300);
    ck_assert_int_gt(ni, 5);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Explicit cases                                                            */
/* ------------------------------------------------------------------------ */
static void expect_swa(const uint8_t *out, size_t U, const int *swa, size_t n)
{
    uint8_t want[64] = {0};
    for (size_t i = 0; i < n; i++)
        want[swa[i]] = 1;
    for (size_t u = 0; u < U; u++)
        ck_assert_msg(out[u] == want[u], "unit %zu: got %u want %u", u, out[u], want[u]);
}

START_TEST(tie_rule_null_priority)
{
    bosch_problem *p = bosch_problem_create(1, 8, 1);
    uint8_t in[8], out[8];
    ck_assert_int_eq(bosch_problem_set_target_units(p, 2), BOSCH_OK);
    memset(in, 1, 8);
    ck_assert_int_eq(bosch_repair(p, in, NULL, NULL, out), 6);
    /* SWA -> full in increasing priority, equal -> lower index first. */
    const int e1[] = {6, 7};
    expect_swa(out, 8, e1, 2);
    ck_assert_int_eq(bosch_problem_set_target_units(p, 3), BOSCH_OK);
    memset(in, 0, 8);
    ck_assert_int_eq(bosch_repair(p, in, NULL, NULL, out), 3);
    const int e2[] = {0, 1, 2};
    expect_swa(out, 8, e2, 3);
    bosch_problem_free(p);
}
END_TEST

START_TEST(tie_rule_priority)
{
    bosch_problem *p = bosch_problem_create(1, 8, 1);
    const double pr[8] = {5, 1, 3, 7, 2, 8, 0, 4};
    uint8_t in[8], out[8];
    ck_assert_int_eq(bosch_problem_set_target_units(p, 2), BOSCH_OK);
    memset(in, 1, 8);
    ck_assert_int_eq(bosch_repair(p, in, pr, NULL, out), 6);
    const int e1[] = {3, 5};
    expect_swa(out, 8, e1, 2);
    memset(in, 0, 8);
    ck_assert_int_eq(bosch_repair(p, in, pr, NULL, out), 2);
    expect_swa(out, 8, e1, 2);
    /* Ties among priorities go to the lower index in both directions. */
    const double pt[8] = {1, 2, 2, 1, 2, 1, 0, 2};
    memset(in, 0, 8);
    ck_assert_int_eq(bosch_repair(p, in, pt, NULL, out), 2);
    const int e3[] = {1, 2};
    expect_swa(out, 8, e3, 2);
    memset(in, 1, 8);
    ck_assert_int_eq(bosch_repair(p, in, pt, NULL, out), 6);
    /* Removal order: 6(0), 0(1), 3(1), 5(1), 1(2), 2(2) -> keep 4, 7. */
    const int e4[] = {4, 7};
    expect_swa(out, 8, e4, 2);
    bosch_problem_free(p);
}
END_TEST

START_TEST(tie_rule_across_layers)
{
    bosch_problem *p = bosch_problem_create(2, 4, 1);
    uint8_t in[8] = {0}, out[8];
    ck_assert_int_eq(bosch_problem_set_target_units(p, 3), BOSCH_OK);
    ck_assert_int_eq(bosch_repair(p, in, NULL, NULL, out), 3);
    const int e1[] = {0, 1, 2};
    expect_swa(out, 8, e1, 3);
    const double pr[8] = {0, 0, 0, 0, 1, 1, 1, 1};
    ck_assert_int_eq(bosch_repair(p, in, pr, NULL, out), 3);
    const int e2[] = {4, 5, 6};
    expect_swa(out, 8, e2, 3);
    bosch_problem_free(p);
}
END_TEST

START_TEST(feasible_input_unchanged)
{
    bosch_problem *p = bosch_problem_create(3, 4, 1); /* target 6 */
    ck_assert_int_eq(bosch_problem_fix_unit(p, 0, 0, BOSCH_FIX_SWA), BOSCH_OK);
    ck_assert_int_eq(bosch_problem_set_layer_bounds(p, 2, 0.5, 1.0), BOSCH_OK);
    uint8_t in[12] = {1, 0, 1, 0, 0, 0, 0, 1, 1, 1, 0, 1}, out[12];
    ck_assert(bosch_mask_is_feasible(p, in));
    const double pr[12] = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0, -1, -2};
    ck_assert_int_eq(bosch_repair(p, in, pr, NULL, out), 0);
    ck_assert_mem_eq(in, out, 12);
    ck_assert_int_eq(bosch_repair(p, in, NULL, NULL, out), 0);
    ck_assert_mem_eq(in, out, 12);
    bosch_problem_free(p);
}
END_TEST

START_TEST(fixed_units_repaired)
{
    bosch_problem *p = bosch_problem_create(1, 4, 1); /* target 2 */
    ck_assert_int_eq(bosch_problem_fix_unit(p, 0, 0, BOSCH_FIX_FULL), BOSCH_OK);
    uint8_t in[4] = {1, 1, 0, 0}, out[4];
    ck_assert_int_eq(bosch_repair(p, in, NULL, NULL, out), 2);
    const int e[] = {1, 2};
    expect_swa(out, 4, e, 2);
    ck_assert_int_eq(bosch_problem_fix_unit(p, 0, 3, BOSCH_FIX_SWA), BOSCH_OK);
    ck_assert_int_eq(bosch_repair(p, in, NULL, NULL, out), 2);
    const int e2[] = {1, 3};
    expect_swa(out, 4, e2, 2);
    bosch_problem_free(p);
}
END_TEST

START_TEST(bounds_clamped)
{
    bosch_problem *p = bosch_problem_create(2, 4, 1); /* target 4 */
    ck_assert_int_eq(bosch_problem_set_layer_bounds(p, 0, 0.0, 0.25), BOSCH_OK);
    uint8_t in[8] = {1, 1, 1, 1, 0, 0, 0, 0}, out[8];
    /* Layer 0 must drop to 1, layer 1 must take 3: 6 changes. */
    ck_assert_int_eq(bosch_repair(p, in, NULL, NULL, out), 6);
    ck_assert_uint_eq(layer_ones(out, 0, 4), 1);
    ck_assert_uint_eq(layer_ones(out, 1, 4), 3);
    ck_assert(bosch_mask_is_feasible(p, out));
    bosch_problem_free(p);
}
END_TEST

START_TEST(layer_counts_mode)
{
    bosch_problem *p = bosch_problem_create(2, 4, 1); /* target 4 */
    const uint32_t k[2] = {1, 3};
    uint8_t in[8] = {0}, out[8];
    ck_assert_int_eq(bosch_repair(p, in, NULL, k, out), 4);
    const int e[] = {0, 4, 5, 6};
    expect_swa(out, 8, e, 4);
    ck_assert(bosch_mask_is_feasible(p, out));
    /* A layer_counts total different from the target is allowed. */
    const uint32_t k2[2] = {4, 4};
    ck_assert_int_eq(bosch_repair(p, in, NULL, k2, out), 8);
    for (int u = 0; u < 8; u++)
        ck_assert_uint_eq(out[u], 1);
    ck_assert(!bosch_mask_is_feasible(p, out));
    bosch_problem_free(p);
}
END_TEST

START_TEST(infeasible_cases)
{
    uint8_t in[8] = {0}, out[8];
    bosch_problem *p = bosch_problem_create(2, 4, 1);
    /* Fixed SWA units above the target. */
    ck_assert_int_eq(bosch_problem_set_target_units(p, 1), BOSCH_OK);
    ck_assert_int_eq(bosch_problem_fix_unit(p, 0, 0, BOSCH_FIX_SWA), BOSCH_OK);
    ck_assert_int_eq(bosch_problem_fix_unit(p, 1, 0, BOSCH_FIX_SWA), BOSCH_OK);
    ck_assert_int_eq(bosch_repair(p, in, NULL, NULL, out), BOSCH_E_INFEASIBLE);
    /* Counts against fixed units. */
    const uint32_t k0[2] = {0, 1};
    ck_assert_int_eq(bosch_repair(p, in, NULL, k0, out), BOSCH_E_INFEASIBLE);
    ck_assert_int_eq(bosch_problem_fix_unit(p, 1, 1, BOSCH_FIX_FULL), BOSCH_OK);
    ck_assert_int_eq(bosch_problem_fix_unit(p, 1, 2, BOSCH_FIX_FULL), BOSCH_OK);
    const uint32_t k1[2] = {1, 3};
    ck_assert_int_eq(bosch_repair(p, in, NULL, k1, out), BOSCH_E_INFEASIBLE);
    const uint32_t k2[2] = {1, 2};
    ck_assert_int_ge(bosch_repair(p, in, NULL, k2, out), 0);
    /* Counts against bounds. */
    ck_assert_int_eq(bosch_problem_set_layer_bounds(p, 0, 0.5, 1.0), BOSCH_OK);
    ck_assert_int_eq(bosch_repair(p, in, NULL, k2, out), BOSCH_E_INFEASIBLE);
    /* A count above the layer size. */
    const uint32_t k3[2] = {5, 2};
    ck_assert_int_lt(bosch_repair(p, in, NULL, k3, out), 0);
    bosch_problem_free(p);

    /* Bounds against the target. */
    p = bosch_problem_create(2, 4, 1);
    ck_assert_int_eq(bosch_problem_set_target_units(p, 7), BOSCH_OK);
    ck_assert_int_eq(bosch_problem_set_layer_bounds(p, 1, 0.0, 0.5), BOSCH_OK);
    ck_assert_int_eq(bosch_repair(p, in, NULL, NULL, out), BOSCH_E_INFEASIBLE);
    bosch_problem_free(p);
}
END_TEST

START_TEST(null_arguments)
{
    bosch_problem *p = bosch_problem_create(2, 4, 1);
    uint8_t in[8] = {0}, out[8];
    ck_assert_int_eq(bosch_repair(NULL, in, NULL, NULL, out), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_repair(p, NULL, NULL, NULL, out), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_repair(p, in, NULL, NULL, NULL), BOSCH_E_INVALID);
    bosch_problem_free(p);
}
END_TEST

START_TEST(nonbinary_input_bytes)
{
    bosch_problem *p = bosch_problem_create(1, 6, 1); /* target 3 */
    uint8_t in[6] = {0xFF, 2, 0x80, 0, 0, 0}, out[6];
    ck_assert_int_eq(bosch_repair(p, in, NULL, NULL, out), 0);
    const int e[] = {0, 1, 2};
    expect_swa(out, 6, e, 3);
    bosch_problem_free(p);
}
END_TEST

static Suite *repair_suite(void)
{
    Suite *s = suite_create("repair");
    TCase *tc = tcase_new(s, "random");
    tcase_add_test(tc, random_global_plain);
    tcase_add_test(tc, random_global_fixed);
    tcase_add_test(tc, random_global_bounds);
    tcase_add_test(tc, random_counts);
    tc = tcase_new(s, "explicit");
    tcase_add_test(tc, tie_rule_null_priority);
    tcase_add_test(tc, tie_rule_priority);
    tcase_add_test(tc, tie_rule_across_layers);
    tcase_add_test(tc, feasible_input_unchanged);
    tcase_add_test(tc, fixed_units_repaired);
    tcase_add_test(tc, bounds_clamped);
    tcase_add_test(tc, layer_counts_mode);
    tcase_add_test(tc, infeasible_cases);
    tcase_add_test(tc, null_arguments);
    tcase_add_test(tc, nonbinary_input_bytes);
    return s;
}

int main(void)
{
    return run_suite(repair_suite());
}
