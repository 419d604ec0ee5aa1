/*
 * Shared helpers of the libbosch unit tests (Check framework).
 * Everything here is static inline so that each test executable can include
 * it without unused-function warnings.
 */
#ifndef BOSCH_TEST_COMMON_H
#define BOSCH_TEST_COMMON_H

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <bosch/bosch.h>
#include <bosch/testbed.h>

/* Per-test-case timeout (seconds); generous because of sanitizer builds. */
#define TEST_TIMEOUT 120

/* ------------------------------------------------------------------------ */
/* Deterministic test-side randomness (splitmix64), independent of libbosch  */
/* ------------------------------------------------------------------------ */
typedef struct {
    uint64_t s;
} trng;

static inline uint64_t trng_next(trng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform in [0, bound), bound >= 1 (tiny modulo bias is irrelevant here). */
static inline uint64_t trng_below(trng *r, uint64_t bound)
{
    return trng_next(r) % bound;
}

static inline double trng_unif(trng *r)
{
    return (double)(trng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* ------------------------------------------------------------------------ */
/* Masks                                                                     */
/* ------------------------------------------------------------------------ */
static inline size_t mask_ones(const uint8_t *m, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += m[i] != 0;
    return c;
}

static inline size_t mask_hamming(const uint8_t *a, const uint8_t *b, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += (a[i] != 0) != (b[i] != 0);
    return c;
}

static inline size_t layer_ones(const uint8_t *m, uint32_t layer, uint32_t G)
{
    return mask_ones(m + (size_t)layer * G, G);
}

static inline int mask_is_binary(const uint8_t *m, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (m[i] > 1)
            return 0;
    return 1;
}

/* Own feasibility check against a problem: target count, fixed units, and
 * per-layer bounds given as integer counts lo[l]..hi[l] (NULL = [0, G]). */
static inline int own_feasible(const bosch_problem *p, const uint8_t *m, const uint32_t *lo,
                               const uint32_t *hi)
{
    uint32_t L = bosch_problem_layers(p), G = bosch_problem_kv_groups(p);
    if (mask_ones(m, (size_t)L * G) != bosch_problem_target_units(p))
        return 0;
    for (uint32_t l = 0; l < L; l++) {
        size_t c = layer_ones(m, l, G);
        if (lo && c < lo[l])
            return 0;
        if (hi && c > hi[l])
            return 0;
        for (uint32_t g = 0; g < G; g++) {
            int f = bosch_problem_unit_fix(p, l, g);
            uint8_t v = m[(size_t)l * G + g] != 0;
            if (f == BOSCH_FIX_FULL && v)
                return 0;
            if (f == BOSCH_FIX_SWA && !v)
                return 0;
        }
    }
    return 1;
}

/* ------------------------------------------------------------------------ */
/* Testbeds                                                                  */
/* ------------------------------------------------------------------------ */
static inline bosch_testbed *make_testbed(uint32_t L, uint32_t G, uint64_t seed, double entanglement,
                                          double noise)
{
    bosch_testbed *tb = bosch_testbed_create(L, G, seed);
    ck_assert_ptr_nonnull(tb);
    ck_assert_int_eq(bosch_testbed_set(tb, "entanglement", entanglement), BOSCH_OK);
    ck_assert_int_eq(bosch_testbed_set(tb, "noise", noise), BOSCH_OK);
    return tb;
}

static inline double tb_score(const bosch_testbed *tb, const uint8_t *m)
{
    double s = NAN;
    ck_assert_int_eq(bosch_testbed_score(tb, m, &s), BOSCH_OK);
    return s;
}

/* ------------------------------------------------------------------------ */
/* A set of byte strings (open addressing), to detect repeated evaluations   */
/* ------------------------------------------------------------------------ */
typedef struct {
    size_t len;   /* bytes per key */
    size_t cap;   /* slots (power of two) */
    size_t count; /* keys stored */
    uint8_t *keys;
    uint8_t *used;
    double *vals;
} mset;

static inline uint64_t mset_hash(const uint8_t *k, size_t len)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < len; i++) {
        h ^= (uint64_t)(k[i] != 0) + 1;
        h *= 1099511628211ULL;
    }
    return h;
}

static inline void mset_init(mset *s, size_t len)
{
    s->len = len;
    s->cap = 1024;
    s->count = 0;
    s->keys = calloc(s->cap, len ? len : 1);
    s->used = calloc(s->cap, 1);
    s->vals = calloc(s->cap, sizeof(double));
    ck_assert(s->keys && s->used && s->vals);
}

static inline void mset_free(mset *s)
{
    free(s->keys);
    free(s->used);
    free(s->vals);
    memset(s, 0, sizeof *s);
}

/* Normalised comparison (any non-zero byte is 1). */
static inline int mset_keyeq(const uint8_t *a, const uint8_t *b, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if ((a[i] != 0) != (b[i] != 0))
            return 0;
    return 1;
}

/* Returns the slot of key, or the empty slot where it would go. */
static inline size_t mset_slot(const mset *s, const uint8_t *k)
{
    size_t i = (size_t)mset_hash(k, s->len) & (s->cap - 1);
    while (s->used[i] && !mset_keyeq(s->keys + i * s->len, k, s->len))
        i = (i + 1) & (s->cap - 1);
    return i;
}

static inline int mset_find(const mset *s, const uint8_t *k, double *val)
{
    size_t i = mset_slot(s, k);
    if (!s->used[i])
        return 0;
    if (val)
        *val = s->vals[i];
    return 1;
}

/* Inserts; returns 1 when new, 0 when already present. */
static inline int mset_add(mset *s, const uint8_t *k, double val)
{
    if ((s->count + 1) * 2 > s->cap) {
        mset old = *s;
        s->cap *= 2;
        s->count = 0;
        s->keys = calloc(s->cap, s->len ? s->len : 1);
        s->used = calloc(s->cap, 1);
        s->vals = calloc(s->cap, sizeof(double));
        ck_assert(s->keys && s->used && s->vals);
        for (size_t i = 0; i < old.cap; i++)
            if (old.used[i])
                mset_add(s, old.keys + i * old.len, old.vals[i]);
        mset_free(&old);
    }
    size_t i = mset_slot(s, k);
    if (s->used[i])
        return 0;
    s->used[i] = 1;
    for (size_t b = 0; b < s->len; b++)
        s->keys[i * s->len + b] = k[b] != 0;
    s->vals[i] = val;
    s->count++;
    return 1;
}

/* ------------------------------------------------------------------------ */
/* Combinatorics                                                             */
/* ------------------------------------------------------------------------ */
static inline uint64_t binom(unsigned n, unsigned k)
{
    if (k > n)
        return 0;
    uint64_t r = 1;
    for (unsigned i = 1; i <= k; i++)
        r = r * (n - k + i) / i;
    return r;
}

/* Next combination-free enumeration helper: increments a binary counter
 * (little-endian over n bytes); returns 0 when it wrapped to all zeros. */
static inline int bits_next(uint8_t *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!x[i]) {
            x[i] = 1;
            return 1;
        }
        x[i] = 0;
    }
    return 0;
}

/* Adds a test case with the common timeout. */
static inline TCase *tcase_new(Suite *s, const char *name)
{
    TCase *tc = tcase_create(name);
    tcase_set_timeout(tc, TEST_TIMEOUT);
    suite_add_tcase(s, tc);
    return tc;
}

static inline int run_suite(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif /* BOSCH_TEST_COMMON_H */
