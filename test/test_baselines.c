/*
 * Baselines: layer-level patterns (RAND, INTR, BME) and static rankings
 * (per unit and per query head with MEAN/MAX/SUM reductions).
 */
#include <stdio.h>

#include "support/support.h"

static bosch_problem *make_problem(uint32_t L, uint32_t G, uint32_t hpg, size_t T)
{
    bosch_problem *p = bosch_problem_create(L, G, hpg);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(bosch_problem_set_target_units(p, T), BOSCH_OK);
    return p;
}

/* Bit l set = layer l entirely SWA; asserts every layer is all-or-nothing. */
static uint64_t whole_layers(const uint8_t *m, uint32_t L, uint32_t G)
{
    uint64_t bits = 0;
    for (uint32_t l = 0; l < L; l++) {
        size_t c = layer_ones(m, l, G);
        ck_assert_msg(c == 0 || c == G, "layer %u has %zu of %u units SWA", l, c, G);
        if (c == G)
            bits |= (uint64_t)1 << l;
    }
    return bits;
}

static uint64_t layer_set(const int *ls, size_t n)
{
    uint64_t b = 0;
    for (size_t i = 0; i < n; i++)
        b |= (uint64_t)1 << ls[i];
    return b;
}

static void print_layers(char *buf, size_t len, uint64_t bits, uint32_t L)
{
    size_t o = 0;
    buf[0] = '\0';
    for (uint32_t l = 0; l < L && o + 4 < len; l++)
        if (bits >> l & 1)
            o += (size_t)snprintf(buf + o, len - o, "%u ", l);
}

static void expect_layers(int pattern, uint32_t L, uint32_t G, uint32_t n_swa_layers,
                          const int *want, size_t n_want)
{
    bosch_problem *p = make_problem(L, G, 1, (size_t)n_swa_layers * G);
    uint8_t m[256];
    ck_assert_int_eq(bosch_baseline_layers(p, pattern, 0, m), BOSCH_OK);
    ck_assert(bosch_mask_is_feasible(p, m));
    uint64_t got = whole_layers(m, L, G), exp = layer_set(want, n_want);
    char a[128], b[128];
    print_layers(a, sizeof a, got, L);
    print_layers(b, sizeof b, exp, L);
    ck_assert_msg(got == exp, "pattern %d, L=%u, %u SWA layers: got {%s} want {%s}", pattern, L,
                  n_swa_layers, a, b);
    bosch_problem_free(p);
}

START_TEST(layers_whole_layers_feasible)
{
    const uint32_t shapes[][2] = {{8, 4}, {12, 2}, {5, 8}, {1, 4}};
    for (int pat = 0; pat < 3; pat++)
        for (size_t s = 0; s < 4; s++) {
            uint32_t L = shapes[s][0], G = shapes[s][1];
            for (uint32_t k = 0; k <= L; k++) {
                bosch_problem *p = make_problem(L, G, 1, (size_t)k * G);
                uint8_t m[256];
                memset(m, 0xEE, sizeof m);
                ck_assert_int_eq(bosch_baseline_layers(p, pat, 3, m), BOSCH_OK);
                ck_assert(mask_is_binary(m, (size_t)L * G));
                ck_assert(bosch_mask_is_feasible(p, m));
                uint64_t bits = whole_layers(m, L, G);
                ck_assert_int_eq(__builtin_popcountll(bits), (int)k);
                bosch_problem_free(p);
            }
        }
}
END_TEST

START_TEST(layers_remainder)
{
    for (int pat = 0; pat < 3; pat++) {
        bosch_problem *p = make_problem(8, 4, 1, 10); /* 2 whole layers + 2 units */
        uint8_t m[32];
        ck_assert_int_eq(bosch_baseline_layers(p, pat, 1, m), BOSCH_OK);
        ck_assert(bosch_mask_is_feasible(p, m));
        int full_layers = 0, partial = 0;
        for (uint32_t l = 0; l < 8; l++) {
            size_t c = layer_ones(m, l, 4);
            if (c == 4) {
                full_layers++;
            } else if (c != 0) {
                partial++;
                ck_assert_uint_eq(c, 2);
                /* lowest KV groups first */
                ck_assert_uint_eq(m[l * 4 + 0], 1);
                ck_assert_uint_eq(m[l * 4 + 1], 1);
            }
        }
        ck_assert_int_eq(full_layers, 2);
        ck_assert_int_eq(partial, 1);
        bosch_problem_free(p);
    }
}
END_TEST

/* INTR: with t = L-1-l the position counted from the top, layer l is SWA
 * when floor((t+1)*n/L) > floor(t*n/L). */
static void expect_intr(uint32_t L, uint32_t G, uint32_t n)
{
    int want[64];
    size_t k = 0;
    for (uint32_t l = 0; l < L; l++) {
        uint32_t t = L - 1 - l;
        if ((uint64_t)(t + 1) * n / L > (uint64_t)t * n / L)
            want[k++] = (int)l;
    }
    ck_assert_uint_eq(k, n);
    expect_layers(BOSCH_LAYERS_INTR, L, G, n, want, k);
}

START_TEST(layers_intr_exact)
{
    /* The header's example: n = 4 of 8 -> layers 0, 2, 4, 6. */
    const int a[] = {0, 2, 4, 6};
    expect_layers(BOSCH_LAYERS_INTR, 8, 4, 4, a, 4);
    const int b[] = {0, 2, 5}; /* t in {2, 5, 7} */
    expect_layers(BOSCH_LAYERS_INTR, 8, 4, 3, b, 3);
    const int c[] = {0}; /* t = 7 */
    expect_layers(BOSCH_LAYERS_INTR, 8, 4, 1, c, 1);
    for (uint32_t n = 0; n <= 8; n++)
        expect_intr(8, 4, n);
    for (uint32_t n = 0; n <= 6; n++)
        expect_intr(6, 2, n);
    for (uint32_t n = 0; n <= 13; n++)
        expect_intr(13, 1, n);
}
END_TEST

START_TEST(layers_bme_exact)
{
    /* 8 layers, 6 full in blocks of 2: {0,1} {3,4} {6,7}. */
    const int a[] = {2, 5};
    expect_layers(BOSCH_LAYERS_BME, 8, 4, 2, a, 2);
    /* 9 layers, 3 full: {0} {4} {8}. */
    const int b[] = {1, 2, 3, 5, 6, 7};
    expect_layers(BOSCH_LAYERS_BME, 9, 2, 6, b, 6);
    /* 10 layers, 6 full: {0,1} {4,5} {8,9}. */
    const int c[] = {2, 3, 6, 7};
    expect_layers(BOSCH_LAYERS_BME, 10, 2, 4, c, 4);
    /* 8 layers, 4 SWA: the first and the last layer stay full. */
    bosch_problem *p = make_problem(8, 4, 1, 16);
    uint8_t m[32];
    ck_assert_int_eq(bosch_baseline_layers(p, BOSCH_LAYERS_BME, 0, m), BOSCH_OK);
    uint64_t bits = whole_layers(m, 8, 4);
    ck_assert_int_eq(__builtin_popcountll(bits), 4);
    ck_assert(!(bits & 1));
    ck_assert(!(bits >> 7 & 1));
    bosch_problem_free(p);
}
END_TEST

START_TEST(layers_rand_seeded)
{
    bosch_problem *p = make_problem(12, 4, 1, 24); /* 6 of 12 layers */
    uint8_t m1[48], m2[48];
    ck_assert_int_eq(bosch_baseline_layers(p, BOSCH_LAYERS_RAND, 5, m1), BOSCH_OK);
    ck_assert_int_eq(bosch_baseline_layers(p, BOSCH_LAYERS_RAND, 5, m2), BOSCH_OK);
    ck_assert_mem_eq(m1, m2, 48);
    uint64_t first = whole_layers(m1, 12, 4);
    int distinct = 0;
    int hit[12] = {0};
    for (uint64_t seed = 0; seed < 40; seed++) {
        ck_assert_int_eq(bosch_baseline_layers(p, BOSCH_LAYERS_RAND, seed, m2), BOSCH_OK);
        ck_assert(bosch_mask_is_feasible(p, m2));
        uint64_t b = whole_layers(m2, 12, 4);
        distinct += b != first;
        for (int l = 0; l < 12; l++)
            hit[l] |= (int)(b >> l & 1);
    }
    ck_assert_int_gt(distinct, 10);
    for (int l = 0; l < 12; l++)
        ck_assert_msg(hit[l], "layer %d never chosen in 40 seeds", l);
    bosch_problem_free(p);
}
END_TEST

START_TEST(layers_constraints)
{
    for (int pat = 0; pat < 3; pat++) {
        bosch_problem *p = make_problem(8, 4, 1, 16);
        uint8_t ref[32], m[32];
        ck_assert_int_eq(bosch_baseline_layers(p, pat, 2, ref), BOSCH_OK);
        /* Fix one unit of an SWA layer to full and one unit of a full layer to SWA. */
        int swa_l = -1, full_l = -1;
        for (int l = 0; l < 8; l++) {
            if (layer_ones(ref, (uint32_t)l, 4) == 4 && swa_l < 0)
                swa_l = l;
            if (layer_ones(ref, (uint32_t)l, 4) == 0 && full_l < 0)
                full_l = l;
        }
        ck_assert(swa_l >= 0 && full_l >= 0);
        ck_assert_int_eq(bosch_problem_fix_unit(p, (uint32_t)swa_l, 2, BOSCH_FIX_FULL), BOSCH_OK);
        ck_assert_int_eq(bosch_problem_fix_unit(p, (uint32_t)full_l, 1, BOSCH_FIX_SWA), BOSCH_OK);
        ck_assert_int_eq(bosch_baseline_layers(p, pat, 2, m), BOSCH_OK);
        ck_assert(bosch_mask_is_feasible(p, m));
        ck_assert_uint_eq(m[swa_l * 4 + 2], 0);
        ck_assert_uint_eq(m[full_l * 4 + 1], 1);
        /* Minimal change from the pattern: exactly the two fixed units. */
        ck_assert_uint_eq(mask_hamming(ref, m, 32), 2);
        /* Layer bounds too. */
        ck_assert_int_eq(bosch_problem_set_layer_bounds(p, (uint32_t)swa_l, 0.0, 0.5), BOSCH_OK);
        ck_assert_int_eq(bosch_baseline_layers(p, pat, 2, m), BOSCH_OK);
        ck_assert(bosch_mask_is_feasible(p, m));
        ck_assert_uint_le(layer_ones(m, (uint32_t)swa_l, 4), 2);
        bosch_problem_free(p);
    }
}
END_TEST

START_TEST(layers_errors)
{
    bosch_problem *p = make_problem(4, 4, 1, 8);
    uint8_t m[16];
    ck_assert_int_eq(bosch_baseline_layers(p, 3, 0, m), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_baseline_layers(p, -1, 0, m), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_baseline_layers(NULL, 0, 0, m), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_baseline_layers(p, 0, 0, NULL), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_problem_set_layer_bounds(p, 0, 0.0, 0.0), BOSCH_OK);
    ck_assert_int_eq(bosch_problem_set_layer_bounds(p, 1, 0.0, 0.0), BOSCH_OK);
    ck_assert_int_eq(bosch_problem_set_layer_bounds(p, 2, 0.0, 0.25), BOSCH_OK);
    ck_assert_int_eq(bosch_problem_set_layer_bounds(p, 3, 0.0, 0.25), BOSCH_OK); /* max 2 < 8 */
    for (int pat = 0; pat < 3; pat++)
        ck_assert_int_eq(bosch_baseline_layers(p, pat, 0, m), BOSCH_E_INFEASIBLE);
    bosch_problem_free(p);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Static rankings                                                           */
/* ------------------------------------------------------------------------ */
/* Expected static mask: fixed SWA units, plus the lowest-scored free units
 * (ties: lower index) up to the target. */
static void expect_static(const bosch_problem *p, const double *sc, uint8_t *out)
{
    size_t U = bosch_problem_units(p), T = bosch_problem_target_units(p);
    uint32_t G = bosch_problem_kv_groups(p);
    size_t have = 0;
    memset(out, 0, U);
    for (size_t u = 0; u < U; u++)
        if (bosch_problem_unit_fix(p, (uint32_t)(u / G), (uint32_t)(u % G)) == BOSCH_FIX_SWA) {
            out[u] = 1;
            have++;
        }
    while (have < T) {
        size_t best = SIZE_MAX;
        for (size_t u = 0; u < U; u++) {
            if (out[u] ||
                bosch_problem_unit_fix(p, (uint32_t)(u / G), (uint32_t)(u % G)) != BOSCH_FIX_NONE)
                continue;
            if (best == SIZE_MAX || sc[u] < sc[best])
                best = u;
        }
        ck_assert(best != SIZE_MAX);
        out[best] = 1;
        have++;
    }
}

START_TEST(static_lowest_scores)
{
    trng r = {17};
    for (int t = 0; t < 50; t++) {
        uint32_t L = 1 + (uint32_t)trng_below(&r, 6), G = 1 + (uint32_t)trng_below(&r, 6);
        size_t U = (size_t)L * G;
        bosch_problem *p = make_problem(L, G, 1, (size_t)trng_below(&r, U + 1));
        double sc[64];
        uint8_t m[64], e[64];
        int ties = t % 2;
        for (size_t u = 0; u < U; u++)
            sc[u] = ties ? (double)trng_below(&r, 3) : trng_unif(&r);
        if (t % 3 == 0) /* some fixed units */
            for (size_t u = 0; u < U; u++) {
                uint64_t d = trng_below(&r, 8);
                if (d == 0)
                    bosch_problem_fix_unit(p, (uint32_t)(u / G), (uint32_t)(u % G),
                                           BOSCH_FIX_FULL);
                else if (d == 1)
                    bosch_problem_fix_unit(p, (uint32_t)(u / G), (uint32_t)(u % G),
                                           BOSCH_FIX_SWA);
            }
        int rc = bosch_baseline_static(p, sc, m);
        if (bosch_problem_check(p, NULL, 0) != BOSCH_OK) {
            ck_assert_int_eq(rc, BOSCH_E_INFEASIBLE);
        } else {
            ck_assert_int_eq(rc, BOSCH_OK);
            ck_assert(bosch_mask_is_feasible(p, m));
            expect_static(p, sc, e);
            ck_assert_msg(memcmp(m, e, U) == 0, "trial %d (L=%u G=%u T=%zu): wrong units", t, L,
                          G, bosch_problem_target_units(p));
        }
        bosch_problem_free(p);
    }
}
END_TEST

START_TEST(static_ties_lower_index)
{
    bosch_problem *p = make_problem(2, 3, 1, 2);
    const double sc[6] = {1, 0, 0, 1, 2, 0};
    uint8_t m[6];
    ck_assert_int_eq(bosch_baseline_static(p, sc, m), BOSCH_OK);
    const uint8_t want[6] = {0, 1, 1, 0, 0, 0};
    ck_assert_mem_eq(m, want, 6);
    const double eq[6] = {3, 3, 3, 3, 3, 3};
    ck_assert_int_eq(bosch_problem_set_target_units(p, 4), BOSCH_OK);
    ck_assert_int_eq(bosch_baseline_static(p, eq, m), BOSCH_OK);
    const uint8_t want2[6] = {1, 1, 1, 1, 0, 0};
    ck_assert_mem_eq(m, want2, 6);
    /* A fixed FULL unit among the lowest: the next lowest free unit replaces it. */
    const double sc2[6] = {0.5, 0.1, 0.9, 0.3, 0.7, 0.2};
    ck_assert_int_eq(bosch_problem_set_target_units(p, 2), BOSCH_OK);
    ck_assert_int_eq(bosch_problem_fix_unit(p, 0, 1, BOSCH_FIX_FULL), BOSCH_OK);
    ck_assert_int_eq(bosch_baseline_static(p, sc2, m), BOSCH_OK);
    const uint8_t want3[6] = {0, 0, 0, 1, 0, 1};
    ck_assert_mem_eq(m, want3, 6);
    bosch_problem_free(p);
}
END_TEST

START_TEST(static_bounds)
{
    bosch_problem *p = make_problem(2, 4, 1, 4);
    ck_assert_int_eq(bosch_problem_set_layer_bounds(p, 0, 0.0, 0.25), BOSCH_OK);
    const double sc[8] = {0, 0.1, 0.2, 0.3, 5, 6, 7, 8}; /* layer 0 is the most local */
    uint8_t m[8];
    ck_assert_int_eq(bosch_baseline_static(p, sc, m), BOSCH_OK);
    ck_assert(bosch_mask_is_feasible(p, m));
    ck_assert_uint_eq(layer_ones(m, 0, 4), 1);
    ck_assert_uint_eq(m[0], 1); /* the lowest of layer 0 */
    /* Layer 1 takes its three lowest. */
    const uint8_t want1[4] = {1, 1, 1, 0};
    ck_assert_mem_eq(m + 4, want1, 4);
    bosch_problem_free(p);
}
END_TEST

START_TEST(static_bad_scores)
{
    bosch_problem *p = make_problem(2, 3, 2, 3);
    double sc[6] = {1, 2, 3, 4, 5, 6};
    double hs[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    uint8_t m[6];
    const double bad[] = {NAN, INFINITY, -INFINITY};
    for (int i = 0; i < 3; i++) {
        sc[4] = bad[i];
        ck_assert_int_eq(bosch_baseline_static(p, sc, m), BOSCH_E_BAD_SCORE);
        hs[7] = bad[i];
        for (int red = 0; red < 3; red++)
            ck_assert_int_eq(bosch_baseline_static_heads(p, hs, red, m), BOSCH_E_BAD_SCORE);
    }
    sc[4] = 5;
    hs[7] = 8;
    ck_assert_int_eq(bosch_baseline_static(NULL, sc, m), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_baseline_static(p, NULL, m), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_baseline_static(p, sc, NULL), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_baseline_static_heads(p, hs, 3, m), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_baseline_static_heads(p, hs, -1, m), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_baseline_static_heads(NULL, hs, 0, m), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_baseline_static_heads(p, NULL, 0, m), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_baseline_static_heads(p, hs, 0, NULL), BOSCH_E_INVALID);
    bosch_problem_free(p);
}
END_TEST

START_TEST(static_heads_reductions)
{
    bosch_problem *p = make_problem(2, 3, 2, 3);
    /* Per unit (2 heads): means 5,4,6,5,3,7.5; maxima 10,4,6,9,3,8. */
    const double hs[12] = {0, 10, 4, 4, 6, 6, 1, 9, 3, 3, 7, 8};
    uint8_t m[6];
    ck_assert_int_eq(bosch_baseline_static_heads(p, hs, BOSCH_REDUCE_MEAN, m), BOSCH_OK);
    const uint8_t w_mean[6] = {1, 1, 0, 0, 1, 0};
    ck_assert_mem_eq(m, w_mean, 6);
    ck_assert_int_eq(bosch_baseline_static_heads(p, hs, BOSCH_REDUCE_SUM, m), BOSCH_OK);
    ck_assert_mem_eq(m, w_mean, 6);
    ck_assert_int_eq(bosch_baseline_static_heads(p, hs, BOSCH_REDUCE_MAX, m), BOSCH_OK);
    const uint8_t w_max[6] = {0, 1, 1, 0, 1, 0};
    ck_assert_mem_eq(m, w_max, 6);
    bosch_problem_free(p);

    /* Random: equal to bosch_baseline_static on the reduced scores. */
    trng r = {5};
    for (int t = 0; t < 30; t++) {
        uint32_t L = 1 + (uint32_t)trng_below(&r, 4), G = 1 + (uint32_t)trng_below(&r, 4);
        uint32_t H = 1 + (uint32_t)trng_below(&r, 4);
        size_t U = (size_t)L * G;
        p = make_problem(L, G, H, (size_t)trng_below(&r, U + 1));
        double h[256], red[64];
        uint8_t a[64], b[64];
        for (size_t i = 0; i < U * H; i++)
            h[i] = trng_unif(&r);
        for (int mode = 0; mode < 3; mode++) {
            for (size_t u = 0; u < U; u++) {
                double s = 0, mx = -INFINITY;
                for (uint32_t k = 0; k < H; k++) {
                    s += h[u * H + k];
                    if (h[u * H + k] > mx)
                        mx = h[u * H + k];
                }
                red[u] = mode == BOSCH_REDUCE_MEAN ? s / H : mode == BOSCH_REDUCE_MAX ? mx : s;
            }
            ck_assert_int_eq(bosch_baseline_static_heads(p, h, mode, a), BOSCH_OK);
            ck_assert_int_eq(bosch_baseline_static(p, red, b), BOSCH_OK);
            ck_assert_msg(memcmp(a, b, U) == 0, "reduction %d differs from static on reduced", mode);
        }
        bosch_problem_free(p);
    }
}
END_TEST

static Suite *baselines_suite(void)
{
    Suite *s = suite_create("baselines");
    TCase *tc = tcase_new(s, "layers");
    tcase_add_test(tc, layers_whole_layers_feasible);
    tcase_add_test(tc, layers_remainder);
    tcase_add_test(tc, layers_intr_exact);
    tcase_add_test(tc, layers_bme_exact);
    tcase_add_test(tc, layers_rand_seeded);
    tcase_add_test(tc, layers_constraints);
    tcase_add_test(tc, layers_errors);
    tc = tcase_new(s, "static");
    tcase_add_test(tc, static_lowest_scores);
    tcase_add_test(tc, static_ties_lower_index);
    tcase_add_test(tc, static_bounds);
    tcase_add_test(tc, static_bad_scores);
    tcase_add_test(tc, static_heads_reductions);
    return s;
}

int main(void)
{
    return run_suite(baselines_suite());
}
