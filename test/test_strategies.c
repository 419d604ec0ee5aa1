/*
 * Search strategies: the built-in registry, the subproblem view and harness
 * (bosch_strategy_solve), every built-in strategy against brute force on
 * small testbed-derived subproblems, user strategies built with
 * bosch_strategy_create, and the whole BOSCH optimizer against the exact
 * optimum of small entangled testbeds.
 */
#include <stdio.h>

#include "support/support.h"

static const char *const expected_builtins[] = {"auto", "exhaustive", "random", "swap", "ea", "mads",
                                                "model"};
#define N_EXPECTED (sizeof expected_builtins / sizeof expected_builtins[0])

/* ------------------------------------------------------------------------ */
/* Objective: testbed score of the mask x (one variable per unit)            */
/* ------------------------------------------------------------------------ */
typedef struct {
    const bosch_testbed *tb;
    size_t n;
    size_t nblocks;
    const uint32_t *block_of;
    const uint32_t *counts;
    mset seen;
    size_t calls, dup, infeasible;
    long fail_after;
    int fail_code;
    long nan_after;
    uint8_t *order; /* every evaluated x, in order (n bytes each) */
    size_t order_cap;
    double best;
} objctx;

static void obj_init(objctx *o, const bosch_testbed *tb, size_t n, size_t nblocks,
                     const uint32_t *block_of, const uint32_t *counts)
{
    memset(o, 0, sizeof *o);
    o->tb = tb;
    o->n = n;
    o->nblocks = nblocks;
    o->block_of = block_of;
    o->counts = counts;
    mset_init(&o->seen, n);
    o->fail_after = o->nan_after = -1;
    o->order_cap = 4096;
    o->order = malloc(o->order_cap * n);
    o->best = -INFINITY;
    ck_assert_ptr_nonnull(o->order);
}

static void obj_free(objctx *o)
{
    mset_free(&o->seen);
    free(o->order);
}

static int blocks_ok(const uint8_t *x, size_t n, size_t nblocks, const uint32_t *block_of,
                     const uint32_t *counts)
{
    uint32_t c[64] = {0};
    for (size_t v = 0; v < n; v++) {
        if (x[v] > 1)
            return 0;
        c[block_of[v]] += x[v];
    }
    for (size_t b = 0; b < nblocks; b++)
        if (c[b] != counts[b])
            return 0;
    return 1;
}

static int obj_fn(const uint8_t *x, size_t n_vars, double *value, void *user)
{
    objctx *o = user;
    ck_assert_uint_eq(n_vars, o->n);
    if (o->fail_after >= 0 && (long)o->calls == o->fail_after)
        return o->fail_code;
    if (o->nan_after >= 0 && (long)o->calls == o->nan_after) {
        *value = NAN;
        return 0;
    }
    if (!blocks_ok(x, o->n, o->nblocks, o->block_of, o->counts))
        o->infeasible++;
    double s = tb_score(o->tb, x);
    if (!mset_add(&o->seen, x, s))
        o->dup++;
    if (o->calls < o->order_cap)
        memcpy(o->order + o->calls * o->n, x, o->n);
    o->calls++;
    if (s > o->best)
        o->best = s;
    *value = s;
    return 0;
}

/* Brute force over all feasible x; returns the count, writes the best. */
static uint64_t brute_force(const bosch_testbed *tb, size_t n, size_t nblocks,
                            const uint32_t *block_of, const uint32_t *counts, uint8_t *best_x,
                            double *best)
{
    uint8_t x[32] = {0};
    uint64_t cnt = 0;
    *best = -INFINITY;
    ck_assert_uint_le(n, 20);
    do {
        if (!blocks_ok(x, n, nblocks, block_of, counts))
            continue;
        cnt++;
        double s = tb_score(tb, x);
        if (s > *best) {
            *best = s;
            memcpy(best_x, x, n);
        }
    } while (bits_next(x, n));
    return cnt;
}

/* Subproblem A: 2 layers x 6 groups, counts 3 and 2 (300 feasible points).
 * Subproblem B: 2 layers x 5 groups, counts 2 and 1 (50 feasible points). */
static const uint32_t A_block_of[12] = {0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1};
static const uint32_t A_counts[2] = {3, 2};
static const uint32_t B_block_of[10] = {0, 0, 0, 0, 0, 1, 1, 1, 1, 1};
static const uint32_t B_counts[2] = {2, 1};

static bosch_subproblem *make_sp(int which, uint64_t seed)
{
    bosch_subproblem *sp = which == 0 ? bosch_subproblem_create(12, 2, A_block_of, A_counts, seed)
                                      : bosch_subproblem_create(10, 2, B_block_of, B_counts, seed);
    ck_assert_ptr_nonnull(sp);
    return sp;
}

/* ------------------------------------------------------------------------ */
/* Registry                                                                  */
/* ------------------------------------------------------------------------ */
START_TEST(builtin_registry)
{
    size_t n = bosch_strategy_builtin_count();
    ck_assert_uint_ge(n, N_EXPECTED);
    for (size_t e = 0; e < N_EXPECTED; e++) {
        int found = 0;
        for (size_t i = 0; i < n; i++)
            found |= strcmp(bosch_strategy_builtin_name(i), expected_builtins[e]) == 0;
        ck_assert_msg(found, "built-in strategy %s not listed", expected_builtins[e]);
    }
    for (size_t i = 0; i < n; i++) {
        const char *name = bosch_strategy_builtin_name(i);
        ck_assert_ptr_nonnull(name);
        for (size_t j = 0; j < i; j++)
            ck_assert_str_ne(name, bosch_strategy_builtin_name(j));
        bosch_strategy *s = bosch_strategy_builtin(name);
        ck_assert_ptr_nonnull(s);
        ck_assert_str_eq(bosch_strategy_name(s), name);
        bosch_strategy *c = bosch_strategy_clone(s);
        ck_assert_ptr_nonnull(c);
        bosch_strategy_free(s);
        ck_assert_str_eq(bosch_strategy_name(c), name);
        bosch_strategy_free(c);
    }
    ck_assert_ptr_null(bosch_strategy_builtin_name(n));
    ck_assert_ptr_null(bosch_strategy_builtin_name((size_t)-1));
    ck_assert_ptr_null(bosch_strategy_builtin("no_such_strategy"));
    ck_assert_ptr_null(bosch_strategy_builtin(""));
    ck_assert_ptr_null(bosch_strategy_builtin(NULL));
    ck_assert_ptr_null(bosch_strategy_clone(NULL));
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Subproblem view                                                           */
/* ------------------------------------------------------------------------ */
START_TEST(subproblem_create_and_view)
{
    bosch_subproblem *sp = make_sp(0, 1);
    ck_assert_uint_eq(bosch_subproblem_vars(sp), 12);
    ck_assert_uint_eq(bosch_subproblem_blocks(sp), 2);
    for (size_t v = 0; v < 12; v++)
        ck_assert_uint_eq(bosch_subproblem_block_of(sp, v), A_block_of[v]);
    ck_assert_uint_eq(bosch_subproblem_block_size(sp, 0), 6);
    ck_assert_uint_eq(bosch_subproblem_block_size(sp, 1), 6);
    ck_assert_uint_eq(bosch_subproblem_block_count(sp, 0), 3);
    ck_assert_uint_eq(bosch_subproblem_block_count(sp, 1), 2);
    ck_assert_uint_eq(bosch_subproblem_size(sp), 300);
    ck_assert_int_eq(bosch_subproblem_incumbent(sp, NULL, NULL), BOSCH_E_NOT_FOUND);
    bosch_subproblem_free(sp);

    /* Interleaved blocks, a block with count 0 and one with count = size. */
    const uint32_t bo[7] = {2, 0, 1, 0, 2, 1, 0};
    const uint32_t cn[3] = {1, 0, 2};
    sp = bosch_subproblem_create(7, 3, bo, cn, 5);
    ck_assert_ptr_nonnull(sp);
    ck_assert_uint_eq(bosch_subproblem_block_size(sp, 0), 3);
    ck_assert_uint_eq(bosch_subproblem_block_size(sp, 1), 2);
    ck_assert_uint_eq(bosch_subproblem_block_size(sp, 2), 2);
    ck_assert_uint_eq(bosch_subproblem_size(sp), 3);
    bosch_subproblem_free(sp);

    /* A size that does not fit in 64 bits. */
    uint32_t *big = calloc(200, sizeof(uint32_t));
    const uint32_t half = 100;
    sp = bosch_subproblem_create(200, 1, big, &half, 1);
    ck_assert_ptr_nonnull(sp);
    ck_assert_uint_eq(bosch_subproblem_size(sp), UINT64_MAX);
    bosch_subproblem_free(sp);
    /* C(64, 32) fits. */
    const uint32_t c32 = 32;
    sp = bosch_subproblem_create(64, 1, big, &c32, 1);
    ck_assert_ptr_nonnull(sp);
    ck_assert_uint_eq(bosch_subproblem_size(sp), 1832624140942590534ULL);
    bosch_subproblem_free(sp);
    free(big);
}
END_TEST

START_TEST(subproblem_create_invalid)
{
    const uint32_t bo_bad[4] = {0, 1, 2, 0}; /* block 2 >= n_blocks */
    const uint32_t bo[4] = {0, 0, 1, 1};
    const uint32_t cn[2] = {1, 1};
    const uint32_t cn_bad[2] = {3, 1}; /* 3 > block size 2 */
    ck_assert_ptr_null(bosch_subproblem_create(4, 2, bo_bad, cn, 1));
    ck_assert_ptr_null(bosch_subproblem_create(4, 2, bo, cn_bad, 1));
    ck_assert_ptr_null(bosch_subproblem_create(4, 2, NULL, cn, 1));
    ck_assert_ptr_null(bosch_subproblem_create(4, 2, bo, NULL, 1));
    ck_assert_ptr_null(bosch_subproblem_create(4, 0, bo, cn, 1));
}
END_TEST

START_TEST(subproblem_random_stream)
{
    bosch_subproblem *a = make_sp(0, 42), *b = make_sp(0, 42), *c = make_sp(0, 43);
    int differs = 0;
    for (int i = 0; i < 16; i++) {
        uint64_t x = bosch_subproblem_random(a), y = bosch_subproblem_random(b);
        ck_assert_uint_eq(x, y);
        differs |= bosch_subproblem_random(c) != x;
    }
    ck_assert_msg(differs, "seeds 42 and 43 give the same stream");
    /* random_below: in range, and every value reachable. */
    int hit[7] = {0};
    for (int i = 0; i < 2000; i++) {
        uint64_t v = bosch_subproblem_random_below(a, 7);
        ck_assert_uint_lt(v, 7);
        hit[v] = 1;
        ck_assert_uint_eq(bosch_subproblem_random_below(a, 1), 0);
    }
    for (int v = 0; v < 7; v++)
        ck_assert(hit[v]);
    bosch_subproblem_free(a);
    bosch_subproblem_free(b);
    bosch_subproblem_free(c);
}
END_TEST

START_TEST(subproblem_repair)
{
    bosch_subproblem *sp = make_sp(0, 3);
    uint8_t x[12] = {0};
    ck_assert_int_eq(bosch_subproblem_repair(sp, x, NULL), 5);
    ck_assert(blocks_ok(x, 12, 2, A_block_of, A_counts));
    ck_assert_int_eq(bosch_subproblem_repair(sp, x, NULL), 0); /* idempotent */
    memset(x, 1, 12);
    ck_assert_int_eq(bosch_subproblem_repair(sp, x, NULL), 7);
    ck_assert(blocks_ok(x, 12, 2, A_block_of, A_counts));
    /* With priorities the tie rule of bosch_repair() applies. */
    const double pr[12] = {0, 5, 1, 4, 2, 3, 9, 8, 7, 6, 5, 4};
    memset(x, 0, 12);
    ck_assert_int_eq(bosch_subproblem_repair(sp, x, pr), 5);
    const uint8_t want[12] = {0, 1, 0, 1, 0, 1, 1, 1, 0, 0, 0, 0};
    ck_assert_mem_eq(x, want, 12);
    memset(x, 1, 12);
    ck_assert_int_eq(bosch_subproblem_repair(sp, x, pr), 7);
    ck_assert_mem_eq(x, want, 12);
    /* Random tie-breaking is deterministic given the seed. */
    bosch_subproblem *s1 = make_sp(0, 77), *s2 = make_sp(0, 77);
    for (int t = 0; t < 10; t++) {
        uint8_t y1[12] = {0}, y2[12] = {0};
        bosch_subproblem_repair(s1, y1, NULL);
        bosch_subproblem_repair(s2, y2, NULL);
        ck_assert_mem_eq(y1, y2, 12);
    }
    bosch_subproblem_free(s1);
    bosch_subproblem_free(s2);
    bosch_subproblem_free(sp);
}
END_TEST

START_TEST(subproblem_start)
{
    bosch_testbed *tb = make_testbed(2, 6, 3, 0.0, 0.0);
    bosch_subproblem *sp = make_sp(0, 1);
    uint8_t start[12] = {1, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0}, x[12];
    double v;
    ck_assert_int_eq(bosch_subproblem_set_start(sp, start, 0.123), BOSCH_OK);
    ck_assert_int_eq(bosch_subproblem_incumbent(sp, x, &v), BOSCH_OK);
    ck_assert_mem_eq(x, start, 12);
    ck_assert_double_eq(v, 0.123);
    ck_assert_int_eq(bosch_subproblem_incumbent(sp, NULL, NULL), BOSCH_OK);
    int rc0 = bosch_subproblem_set_start(sp, start, NAN);
    ck_assert_msg(rc0 == BOSCH_E_BAD_SCORE || rc0 == BOSCH_E_INVALID, "set_start(NaN) -> %d", rc0);
    ck_assert_int_eq(bosch_subproblem_set_start(NULL, start, 0.1), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_subproblem_set_start(sp, NULL, 0.1), BOSCH_E_INVALID);
    /* A start value higher than anything reachable stays the best. */
    ck_assert_int_eq(bosch_subproblem_set_start(sp, start, 10.0), BOSCH_OK);
    objctx o;
    obj_init(&o, tb, 12, 2, A_block_of, A_counts);
    bosch_strategy *s = bosch_strategy_builtin("random");
    double best = 0;
    uint64_t ev = 0;
    int rc = bosch_strategy_solve(s, sp, obj_fn, &o, 30, 4, x, &best, &ev);
    ck_assert_int_gt(rc, 0);
    ck_assert_double_eq(best, 10.0);
    ck_assert_mem_eq(x, start, 12);
    bosch_strategy_free(s);
    obj_free(&o);
    bosch_subproblem_free(sp);
    bosch_testbed_free(tb);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Built-in strategies through bosch_strategy_solve                          */
/* ------------------------------------------------------------------------ */
static void solve_checked(const char *name, int which, const bosch_testbed *tb, uint64_t seed,
                          uint64_t budget, uint32_t batch, double *best_out, uint64_t *ev_out,
                          int *rc_out)
{
    size_t n = which == 0 ? 12 : 10;
    const uint32_t *bo = which == 0 ? A_block_of : B_block_of;
    const uint32_t *cn = which == 0 ? A_counts : B_counts;
    bosch_subproblem *sp = make_sp(which, seed);
    bosch_strategy *s = bosch_strategy_builtin(name);
    ck_assert_ptr_nonnull(s);
    objctx o;
    obj_init(&o, tb, n, 2, bo, cn);
    uint8_t best_x[16];
    double best = NAN;
    uint64_t ev = 12345;
    int rc = bosch_strategy_solve(s, sp, obj_fn, &o, budget, batch, best_x, &best, &ev);
    ck_assert_msg(rc == BOSCH_DONE || rc == BOSCH_BUDGET_REACHED, "%s: solve -> %s", name,
                  bosch_err_name(rc));
    ck_assert_msg(o.dup == 0, "%s: %zu candidates evaluated twice", name, o.dup);
    ck_assert_msg(o.infeasible == 0, "%s: %zu infeasible candidates evaluated", name,
                  o.infeasible);
    ck_assert_msg(ev == o.calls, "%s: reports %lu evaluations, objective saw %zu", name,
                  (unsigned long)ev, o.calls);
    ck_assert_msg(ev <= budget, "%s: %lu evaluations > budget %lu", name, (unsigned long)ev,
                  (unsigned long)budget);
    if (rc == BOSCH_BUDGET_REACHED)
        ck_assert_uint_eq(ev, budget);
    ck_assert_uint_gt(ev, 0);
    ck_assert_double_eq(best, o.best);
    ck_assert(blocks_ok(best_x, n, 2, bo, cn));
    ck_assert_double_eq(tb_score(tb, best_x), best);
    /* Incumbent after the run is the best. */
    double inc;
    ck_assert_int_eq(bosch_subproblem_incumbent(sp, NULL, &inc), BOSCH_OK);
    ck_assert_double_eq(inc, best);
    /* Solving a subproblem twice is refused. */
    ck_assert_int_lt(bosch_strategy_solve(s, sp, obj_fn, &o, budget, batch, NULL, NULL, NULL), 0);
    if (best_out)
        *best_out = best;
    if (ev_out)
        *ev_out = ev;
    if (rc_out)
        *rc_out = rc;
    obj_free(&o);
    bosch_strategy_free(s);
    bosch_subproblem_free(sp);
}

START_TEST(builtins_respect_budget)
{
    bosch_testbed *tb = make_testbed(2, 6, 5, 1.0, 0.0);
    for (size_t i = 0; i < bosch_strategy_builtin_count(); i++) {
        const char *name = bosch_strategy_builtin_name(i);
        for (uint64_t seed = 0; seed < 3; seed++) {
            static const uint64_t budgets[] = {1, 7, 40};
            static const uint32_t batches[] = {1, 3, 8};
            for (size_t b = 0; b < 3; b++)
                solve_checked(name, 0, tb, seed, budgets[b], batches[b], NULL, NULL, NULL);
        }
    }
    bosch_testbed_free(tb);
}
END_TEST

/* With a budget covering the whole space, every built-in strategy must find
 * the brute-force optimum (deterministic seeds). */
static void builtins_find_optimum(int which, double entanglement, uint64_t tb_seed)
{
    size_t n = which == 0 ? 12 : 10;
    uint32_t G = which == 0 ? 6 : 5;
    const uint32_t *bo = which == 0 ? A_block_of : B_block_of;
    const uint32_t *cn = which == 0 ? A_counts : B_counts;
    bosch_testbed *tb = make_testbed(2, G, tb_seed, entanglement, 0.0);
    uint8_t opt_x[16];
    double opt;
    uint64_t cnt = brute_force(tb, n, 2, bo, cn, opt_x, &opt);
    ck_assert_uint_eq(cnt, which == 0 ? 300 : 50);
    for (size_t i = 0; i < bosch_strategy_builtin_count(); i++) {
        const char *name = bosch_strategy_builtin_name(i);
        for (uint64_t seed = 0; seed < 3; seed++) {
            double best;
            uint64_t ev;
            int rc;
            solve_checked(name, which, tb, seed, cnt, 8, &best, &ev, &rc);
            if (strcmp(name, "mads") == 0) {
                /* Local by design ("ends when the mesh collapses"): it must
                 * stop on its own, before the budget, at a value it saw. */
                ck_assert_msg(rc == BOSCH_DONE || best == opt, "mads: %s after %lu evaluations",
                              bosch_err_name(rc), (unsigned long)ev);
                continue;
            }
            ck_assert_msg(best == opt,
                          "%s (space %lu, entanglement %.1f, seed %lu): best %.17g after %lu "
                          "evaluations, optimum %.17g",
                          name, (unsigned long)cnt, entanglement, (unsigned long)seed, best,
                          (unsigned long)ev, opt);
        }
    }
    bosch_testbed_free(tb);
}

START_TEST(builtins_find_optimum_small)
{
    builtins_find_optimum(1, 0.0, 7);
    builtins_find_optimum(1, 1.0, 8);
}
END_TEST

START_TEST(builtins_find_optimum_separable)
{
    builtins_find_optimum(0, 0.0, 9);
}
END_TEST

START_TEST(builtins_find_optimum_entangled)
{
    builtins_find_optimum(0, 1.0, 10);
}
END_TEST

static int lexcmp(const uint8_t *a, const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

/* Next k-subset of {0..n-1} in lexicographic order; 0 after the last. */
static int next_comb(unsigned *c, unsigned k, unsigned n)
{
    for (unsigned i = k; i-- > 0;) {
        if (c[i] < n - k + i) {
            c[i]++;
            for (unsigned j = i + 1; j < k; j++)
                c[j] = c[j - 1] + 1;
            return 1;
        }
    }
    return 0;
}

START_TEST(exhaustive_enumerates_everything)
{
    bosch_testbed *tb = make_testbed(2, 6, 5, 1.0, 0.0);
    for (uint32_t batch = 1; batch <= 16; batch *= 4) {
        bosch_subproblem *sp = make_sp(0, 1);
        bosch_strategy *s = bosch_strategy_builtin("exhaustive");
        objctx o;
        obj_init(&o, tb, 12, 2, A_block_of, A_counts);
        uint64_t ev = 0;
        double best;
        int rc = bosch_strategy_solve(s, sp, obj_fn, &o, 1000, batch, NULL, &best, &ev);
        ck_assert_int_eq(rc, BOSCH_DONE);
        ck_assert_uint_eq(ev, bosch_subproblem_size(sp));
        ck_assert_uint_eq(ev, 300);
        ck_assert_uint_eq(o.calls, 300);
        ck_assert_uint_eq(o.dup, 0);
        /* Order: per block the k-subsets in lexicographic order of their
         * sorted positions ({0,1,..} first), the last block varying fastest. */
        size_t i = 0;
        unsigned c0[3] = {0, 1, 2};
        do {
            unsigned c1[2] = {0, 1};
            do {
                uint8_t want[12] = {0};
                for (int k = 0; k < 3; k++)
                    want[c0[k]] = 1;
                for (int k = 0; k < 2; k++)
                    want[6 + c1[k]] = 1;
                ck_assert_msg(lexcmp(o.order + i * 12, want, 12) == 0,
                              "exhaustive: candidate %zu out of order (batch %u)", i, batch);
                i++;
            } while (next_comb(c1, 2, 6));
        } while (next_comb(c0, 3, 6));
        ck_assert_uint_eq(i, 300);
        uint8_t ox[16];
        double opt;
        brute_force(tb, 12, 2, A_block_of, A_counts, ox, &opt);
        ck_assert_double_eq(best, opt);
        obj_free(&o);
        bosch_strategy_free(s);
        bosch_subproblem_free(sp);
    }
    /* A smaller budget is spent exactly. */
    bosch_subproblem *sp = make_sp(0, 1);
    bosch_strategy *s = bosch_strategy_builtin("exhaustive");
    objctx o;
    obj_init(&o, tb, 12, 2, A_block_of, A_counts);
    uint64_t ev = 0;
    ck_assert_int_eq(bosch_strategy_solve(s, sp, obj_fn, &o, 100, 8, NULL, NULL, &ev),
                     BOSCH_BUDGET_REACHED);
    ck_assert_uint_eq(ev, 100);
    ck_assert_uint_eq(o.calls, 100);
    obj_free(&o);
    bosch_strategy_free(s);
    bosch_subproblem_free(sp);
    bosch_testbed_free(tb);
}
END_TEST

START_TEST(auto_is_exhaustive_when_it_fits)
{
    bosch_testbed *tb = make_testbed(2, 6, 5, 1.0, 0.0);
    int rc;
    uint64_t ev;
    double best;
    solve_checked("auto", 0, tb, 4, 301, 8, &best, &ev, &rc);
    ck_assert_int_eq(rc, BOSCH_DONE);
    ck_assert_uint_eq(ev, 300);
    /* Budget exactly the size: everything is enumerated (status DONE or
     * BUDGET_REACHED, both seen as acceptable). */
    solve_checked("auto", 0, tb, 4, 300, 8, &best, &ev, &rc);
    ck_assert_uint_eq(ev, 300);
    uint8_t ox0[16];
    double opt0;
    brute_force(tb, 12, 2, A_block_of, A_counts, ox0, &opt0);
    ck_assert_double_eq(best, opt0);
    uint8_t ox[16];
    double opt;
    brute_force(tb, 12, 2, A_block_of, A_counts, ox, &opt);
    ck_assert_double_eq(best, opt);
    /* When it does not fit, the budget is used up. */
    solve_checked("auto", 0, tb, 4, 60, 8, NULL, &ev, &rc);
    ck_assert_int_eq(rc, BOSCH_BUDGET_REACHED);
    ck_assert_uint_eq(ev, 60);
    bosch_testbed_free(tb);
}
END_TEST

START_TEST(solve_objective_errors)
{
    bosch_testbed *tb = make_testbed(2, 6, 5, 1.0, 0.0);
    for (size_t i = 0; i < bosch_strategy_builtin_count(); i++) {
        const char *name = bosch_strategy_builtin_name(i);
        for (int kind = 0; kind < 2; kind++) {
            bosch_subproblem *sp = make_sp(0, 1);
            bosch_strategy *s = bosch_strategy_builtin(name);
            objctx o;
            obj_init(&o, tb, 12, 2, A_block_of, A_counts);
            if (kind == 0) {
                o.fail_after = 5;
                o.fail_code = 3;
            } else {
                o.nan_after = 5;
            }
            int rc = bosch_strategy_solve(s, sp, obj_fn, &o, 100, 4, NULL, NULL, NULL);
            ck_assert_msg(rc == (kind == 0 ? BOSCH_E_EVALUATOR : BOSCH_E_BAD_SCORE), "%s: %s",
                          name, bosch_err_name(rc));
            obj_free(&o);
            bosch_strategy_free(s);
            bosch_subproblem_free(sp);
        }
    }
    bosch_testbed_free(tb);
}
END_TEST

START_TEST(solve_null_arguments)
{
    bosch_testbed *tb = make_testbed(2, 6, 5, 0.0, 0.0);
    bosch_strategy *s = bosch_strategy_builtin("random");
    objctx o;
    obj_init(&o, tb, 12, 2, A_block_of, A_counts);
    bosch_subproblem *sp = make_sp(0, 1);
    ck_assert_int_eq(bosch_strategy_solve(NULL, sp, obj_fn, &o, 10, 4, NULL, NULL, NULL),
                     BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_strategy_solve(s, NULL, obj_fn, &o, 10, 4, NULL, NULL, NULL),
                     BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_strategy_solve(s, sp, NULL, &o, 10, 4, NULL, NULL, NULL),
                     BOSCH_E_INVALID);
    ck_assert_int_lt(bosch_strategy_solve(s, sp, obj_fn, &o, 10, 0, NULL, NULL, NULL), 0);
    ck_assert_uint_eq(o.calls, 0);
    bosch_subproblem_free(sp);
    obj_free(&o);
    bosch_strategy_free(s);
    bosch_testbed_free(tb);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* User strategies                                                           */
/* ------------------------------------------------------------------------ */
typedef struct {
    /* behaviour */
    int fail_init, fail_propose_at, fail_observe_at, overfill, finish_at, same_always;
    int infeasible_props;
    uint64_t budget;
    /* bookkeeping */
    int inits, destroys, proposes, observes;
    size_t last_n, max_seen;
    uint8_t last[8 * 12];
    size_t evals; /* distinct candidates observed (our own cache) */
    mset seen;
    double best;
    int bad; /* flags for inconsistencies seen inside callbacks */
    void *user_seen;
} ustate;

static int u_init(void **state, const bosch_subproblem *sp, void *user)
{
    ustate *u = user;
    (void)sp;
    u->user_seen = user;
    if (u->fail_init)
        return 11;
    u->inits++;
    *state = u;
    return 0;
}

static int u_propose(void *state, const bosch_subproblem *sp, uint8_t *cands, size_t max,
                     size_t *n)
{
    ustate *u = state;
    size_t nv = bosch_subproblem_vars(sp);
    u->proposes++;
    if (u->fail_propose_at && u->proposes >= u->fail_propose_at)
        return -3;
    if (u->finish_at && u->proposes >= u->finish_at) {
        *n = 0;
        return 0;
    }
    if (max > u->max_seen)
        u->max_seen = max;
    /* Budget accounting visible to the strategy. */
    if (bosch_subproblem_budget_left(sp) != u->budget - u->evals)
        u->bad |= 1;
    /* Incumbent = best observed so far. */
    double inc;
    int ir = bosch_subproblem_incumbent(sp, NULL, &inc);
    if (u->evals == 0 && ir != BOSCH_E_NOT_FOUND)
        u->bad |= 2;
    if (u->evals > 0 && (ir != BOSCH_OK || inc != u->best))
        u->bad |= 4;
    size_t k = u->overfill ? max + 1 : (max < 3 ? max : 3);
    for (size_t c = 0; c < k && c < max; c++) { /* never write past the buffer */
        uint8_t *x = cands + c * nv;
        if (u->same_always) {
            for (size_t v = 0; v < nv; v++)
                x[v] = 0;
            x[0] = x[1] = x[2] = 1;
            x[6] = x[7] = 1;
        } else if (u->infeasible_props) {
            for (size_t v = 0; v < nv; v++)
                x[v] = 0; /* repaired by the library */
        } else {
            for (size_t v = 0; v < nv; v++)
                x[v] = (uint8_t)bosch_subproblem_random_below(sp, 2);
            bosch_subproblem_repair(sp, x, NULL);
        }
    }
    if (!u->overfill && !u->same_always && !u->infeasible_props && k <= 8)
        memcpy(u->last, cands, k * nv);
    *n = k;
    u->last_n = k;
    return 0;
}

static int u_observe(void *state, const bosch_subproblem *sp, const uint8_t *cands,
                     const double *values, size_t n)
{
    ustate *u = state;
    size_t nv = bosch_subproblem_vars(sp);
    u->observes++;
    if (u->fail_observe_at && u->observes >= u->fail_observe_at)
        return 9;
    if (n != u->last_n)
        u->bad |= 8;
    for (size_t c = 0; c < n; c++) {
        const uint8_t *x = cands + c * nv;
        if (!blocks_ok(x, nv, 2, A_block_of, A_counts))
            u->bad |= 16; /* observe sees repaired candidates */
        if (!u->same_always && !u->infeasible_props && memcmp(x, u->last + c * nv, nv) != 0)
            u->bad |= 32; /* proposal order kept; feasible proposals unchanged */
        double lv;
        if (bosch_subproblem_lookup(sp, x, &lv) != 1 || lv != values[c])
            u->bad |= 64;
        if (mset_add(&u->seen, x, values[c]))
            u->evals++;
        if (values[c] > u->best)
            u->best = values[c];
    }
    return 0;
}

static void u_destroy(void *state, void *user)
{
    ustate *u = user;
    if (state != user)
        u->bad |= 128;
    u->destroys++;
}

static void ustate_init(ustate *u, uint64_t budget)
{
    memset(u, 0, sizeof *u);
    u->budget = budget;
    u->best = -INFINITY;
    mset_init(&u->seen, 12);
}

static int run_user(ustate *u, objctx *o, const bosch_testbed *tb, uint64_t budget, uint64_t *ev)
{
    bosch_strategy *s = bosch_strategy_create("user", u_init, u_propose, u_observe, u_destroy, u);
    ck_assert_ptr_nonnull(s);
    ck_assert_str_eq(bosch_strategy_name(s), "user");
    bosch_subproblem *sp = make_sp(0, 9);
    obj_init(o, tb, 12, 2, A_block_of, A_counts);
    int rc = bosch_strategy_solve(s, sp, obj_fn, o, budget, 8, NULL, NULL, ev);
    bosch_subproblem_free(sp);
    bosch_strategy_free(s);
    return rc;
}

START_TEST(user_strategy_protocol)
{
    bosch_testbed *tb = make_testbed(2, 6, 5, 1.0, 0.0);
    ustate u;
    ustate_init(&u, 50);
    objctx o;
    uint64_t ev = 0;
    int rc = run_user(&u, &o, tb, 50, &ev);
    ck_assert_msg(rc == BOSCH_BUDGET_REACHED || rc == BOSCH_DONE, "%s", bosch_err_name(rc));
    ck_assert_msg(u.bad == 0, "inconsistencies inside callbacks: flags %d", u.bad);
    ck_assert_ptr_eq(u.user_seen, &u);
    ck_assert_int_eq(u.inits, 1);
    ck_assert_int_eq(u.destroys, 1);
    ck_assert_uint_le(u.max_seen, 8);
    ck_assert_uint_ge(u.max_seen, 1);
    ck_assert_uint_eq(ev, o.calls);
    ck_assert_uint_eq(u.evals, o.calls);
    ck_assert_uint_le(ev, 50);
    ck_assert_uint_eq(o.dup, 0);
    obj_free(&o);
    mset_free(&u.seen);
    bosch_testbed_free(tb);
}
END_TEST

START_TEST(user_strategy_repaired_proposals)
{
    bosch_testbed *tb = make_testbed(2, 6, 5, 1.0, 0.0);
    ustate u;
    ustate_init(&u, 40);
    u.infeasible_props = 1; /* all-zero proposals, repaired at random */
    objctx o;
    uint64_t ev = 0;
    int rc = run_user(&u, &o, tb, 40, &ev);
    ck_assert_msg(rc > 0, "%s", bosch_err_name(rc));
    ck_assert_msg(u.bad == 0, "flags %d", u.bad);
    ck_assert_uint_eq(o.infeasible, 0);
    ck_assert_uint_eq(o.dup, 0);
    ck_assert_uint_gt(o.calls, 1); /* random repair gives different candidates */
    obj_free(&o);
    mset_free(&u.seen);
    bosch_testbed_free(tb);
}
END_TEST

START_TEST(user_strategy_finishes)
{
    bosch_testbed *tb = make_testbed(2, 6, 5, 1.0, 0.0);
    ustate u;
    ustate_init(&u, 100);
    u.finish_at = 1; /* finished at once */
    objctx o;
    uint64_t ev = 99;
    ck_assert_int_eq(run_user(&u, &o, tb, 100, &ev), BOSCH_DONE);
    ck_assert_uint_eq(ev, 0);
    ck_assert_uint_eq(o.calls, 0);
    ck_assert_int_eq(u.destroys, u.inits);
    obj_free(&o);
    mset_free(&u.seen);

    ustate_init(&u, 100);
    u.finish_at = 4;
    ck_assert_int_eq(run_user(&u, &o, tb, 100, &ev), BOSCH_DONE);
    ck_assert_uint_eq(ev, o.calls);
    ck_assert_uint_le(ev, 9);
    ck_assert_int_eq(u.observes, 3);
    obj_free(&o);
    mset_free(&u.seen);
    bosch_testbed_free(tb);
}
END_TEST

/* The same candidate over and over: served from the cache, closed after 64
 * batches without a new evaluation. */
START_TEST(user_strategy_stalls)
{
    bosch_testbed *tb = make_testbed(2, 6, 5, 1.0, 0.0);
    ustate u;
    ustate_init(&u, 1000);
    u.same_always = 1;
    objctx o;
    uint64_t ev = 0;
    int rc = run_user(&u, &o, tb, 1000, &ev);
    ck_assert_msg(rc > 0, "%s", bosch_err_name(rc));
    ck_assert_uint_eq(ev, 1);
    ck_assert_uint_eq(o.calls, 1);
    ck_assert_msg(u.proposes >= 65 && u.proposes <= 66,
                  "subproblem closed after %d proposals (expected 1 + 64)", u.proposes);
    ck_assert_msg(u.bad == 0, "flags %d", u.bad);
    obj_free(&o);
    mset_free(&u.seen);
    bosch_testbed_free(tb);
}
END_TEST

START_TEST(user_strategy_errors)
{
    bosch_testbed *tb = make_testbed(2, 6, 5, 1.0, 0.0);
    for (int kind = 0; kind < 4; kind++) {
        ustate u;
        ustate_init(&u, 100);
        switch (kind) {
        case 0:
            u.fail_init = 1;
            break;
        case 1:
            u.fail_propose_at = 3;
            break;
        case 2:
            u.fail_observe_at = 2;
            break;
        default:
            u.overfill = 1; /* more than `max` candidates */
            break;
        }
        objctx o;
        uint64_t ev = 0;
        int rc = run_user(&u, &o, tb, 100, &ev);
        ck_assert_msg(rc == BOSCH_E_STRATEGY, "kind %d: %s", kind, bosch_err_name(rc));
        ck_assert_int_eq(u.destroys, u.inits); /* destroy once per successful init */
        if (kind == 0)
            ck_assert_uint_eq(o.calls, 0);
        if (kind == 3)
            ck_assert_uint_eq(o.calls, 0);
        obj_free(&o);
        mset_free(&u.seen);
    }
    bosch_testbed_free(tb);
}
END_TEST

START_TEST(strategy_new_invalid)
{
    ck_assert_ptr_null(bosch_strategy_create(NULL, u_init, u_propose, u_observe, u_destroy, NULL));
    ck_assert_ptr_null(bosch_strategy_create("x", u_init, NULL, u_observe, u_destroy, NULL));
    /* destroy may be NULL. */
    bosch_strategy *s = bosch_strategy_create("x", u_init, u_propose, u_observe, NULL, NULL);
    ck_assert_ptr_nonnull(s);
    bosch_strategy *c = bosch_strategy_clone(s);
    ck_assert_ptr_nonnull(c);
    ck_assert_str_eq(bosch_strategy_name(c), "x");
    bosch_strategy_free(s);
    bosch_strategy_free(c);
    /* The name is copied. */
    char name[8] = "abc";
    s = bosch_strategy_create(name, u_init, u_propose, u_observe, u_destroy, NULL);
    ck_assert_ptr_nonnull(s);
    name[0] = 'z';
    ck_assert_str_eq(bosch_strategy_name(s), "abc");
    bosch_strategy_free(s);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* BOSCH on small entangled testbeds vs the exact optimum                    */
/* ------------------------------------------------------------------------ */
/* BOSCH finds the planted optimum of small entangled testbeds (3 layers x 4
 * groups, target 6, 924 feasible masks) when its stage-3 polish may spend
 * enough to cover the whole feasible set ("auto" then enumerates it). At
 * small budgets the per-layer counts guessed by stage 2 can keep it off the
 * optimum; docs/benchmarks-history.md compares it with random search there. */
START_TEST(bosch_reaches_optimum)
{
    bosch_problem *p = bosch_problem_create(3, 4, 1);
    ck_assert_int_eq(bosch_problem_set_target_units(p, 6), BOSCH_OK);
    for (uint64_t tbs = 1; tbs <= 4; tbs++) {
        bosch_testbed *tb = make_testbed(3, 4, tbs, 1.0, 0.0);
        double opt;
        uint8_t om[12];
        ck_assert_int_eq(bosch_testbed_optimum(tb, p, om, &opt), BOSCH_OK);
        for (uint64_t seed = 0; seed < 3; seed++) {
            bosch_optimizer *o = bosch_optimizer_create(p);
            ck_assert_int_eq(bosch_set_seed(o, seed), BOSCH_OK);
            ck_assert_int_eq(bosch_set_budget(o, 1400), BOSCH_OK);
            ck_assert_int_eq(bosch_set_polish_fraction(o, 1.0), BOSCH_OK);
            ck_assert_int_eq(bosch_set_evaluator(o, bosch_testbed_eval, tb), BOSCH_OK);
            int st = bosch_optimize(o);
            ck_assert_int_gt(st, 0);
            bosch_result *r = NULL;
            ck_assert_int_eq(bosch_get_result(o, &r), BOSCH_OK);
            ck_assert_msg(bosch_result_score(r) == opt,
                          "testbed %lu seed %lu: BOSCH %.6f, optimum %.6f (%lu evaluations)",
                          (unsigned long)tbs, (unsigned long)seed, bosch_result_score(r), opt,
                          (unsigned long)bosch_result_evaluations(r, -1));
            /* Enumerating never needs more than the feasible set plus the other stages. */
            ck_assert_uint_le(bosch_result_evaluations(r, -1), 1400);
            bosch_result_free(r);
            bosch_optimizer_free(o);
        }
        bosch_testbed_free(tb);
    }
    bosch_problem_free(p);
}
END_TEST

static Suite *strategies_suite(void)
{
    Suite *s = suite_create("strategies");
    TCase *tc = tcase_new(s, "registry_subproblem");
    tcase_add_test(tc, builtin_registry);
    tcase_add_test(tc, subproblem_create_and_view);
    tcase_add_test(tc, subproblem_create_invalid);
    tcase_add_test(tc, subproblem_random_stream);
    tcase_add_test(tc, subproblem_repair);
    tcase_add_test(tc, subproblem_start);
    tc = tcase_new(s, "builtins");
    tcase_add_test(tc, builtins_respect_budget);
    tcase_add_test(tc, builtins_find_optimum_small);
    tcase_add_test(tc, builtins_find_optimum_separable);
    tcase_add_test(tc, builtins_find_optimum_entangled);
    tcase_add_test(tc, exhaustive_enumerates_everything);
    tcase_add_test(tc, auto_is_exhaustive_when_it_fits);
    tcase_add_test(tc, solve_objective_errors);
    tcase_add_test(tc, solve_null_arguments);
    tc = tcase_new(s, "user");
    tcase_add_test(tc, user_strategy_protocol);
    tcase_add_test(tc, user_strategy_repaired_proposals);
    tcase_add_test(tc, user_strategy_finishes);
    tcase_add_test(tc, user_strategy_stalls);
    tcase_add_test(tc, user_strategy_errors);
    tcase_add_test(tc, strategy_new_invalid);
    tc = tcase_new(s, "bosch");
    tcase_add_test(tc, bosch_reaches_optimum);
    return s;
}

int main(void)
{
    return run_suite(strategies_suite());
}
