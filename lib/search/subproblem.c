/* Subproblems: construction, the read-only view strategies get, and the
 * per-block repair. */
#include <stdlib.h>
#include <string.h>

#include "core/bitset.h"
#include "core/combinatorics.h"
#include "core/repair_impl.h"
#include "search/subproblem_impl.h"

static double identity_value(const void *ctx, size_t record)
{
    const eval_store *s = ctx;
    return s->scores[record];
}

bosch_subproblem *subproblem_new(size_t n, size_t nblocks, const uint32_t *block_of,
                                 const uint32_t *counts, size_t units, const uint8_t *base,
                                 const size_t *var_start, const size_t *var_units,
                                 uint64_t seed, uint64_t stream)
{
    if (!n || !nblocks || !block_of || !counts)
        return NULL;
    bosch_subproblem *sp = calloc(1, sizeof *sp);
    if (!sp)
        return NULL;
    sp->n = n;
    sp->nblocks = nblocks;
    sp->units = var_units ? units : n;
    size_t nvu = var_units ? var_start[n] : n;
    sp->block_of = malloc(n * sizeof *sp->block_of);
    sp->counts = malloc(nblocks * sizeof *sp->counts);
    sp->block_start = calloc(nblocks + 1, sizeof *sp->block_start);
    sp->block_vars = malloc(n * sizeof *sp->block_vars);
    sp->base = calloc(sp->units, 1);
    sp->var_start = malloc((n + 1) * sizeof *sp->var_start);
    sp->var_units = malloc((nvu ? nvu : 1) * sizeof *sp->var_units);
    sp->inc = calloc(n, 1);
    sp->scratch = calloc(bitset_words(sp->units), sizeof *sp->scratch);
    sp->full = calloc(sp->units, 1);
    sp->rng = malloc(sizeof *sp->rng);
    sp->hist = calloc(1, sizeof *sp->hist);
    if (!sp->hist || !sp->block_of || !sp->counts || !sp->block_start || !sp->block_vars || !sp->base ||
        !sp->var_start || !sp->var_units || !sp->inc || !sp->scratch || !sp->full || !sp->rng) {
        bosch_subproblem_free(sp);
        return NULL;
    }
    memcpy(sp->counts, counts, nblocks * sizeof *counts);
    for (size_t v = 0; v < n; v++) {
        if (block_of[v] >= nblocks) {
            bosch_subproblem_free(sp);
            return NULL;
        }
        sp->block_of[v] = block_of[v];
        sp->block_start[block_of[v] + 1]++;
    }
    for (size_t b = 0; b < nblocks; b++) {
        if (counts[b] > sp->block_start[b + 1]) {
            bosch_subproblem_free(sp);
            return NULL;
        }
        sp->block_start[b + 1] += sp->block_start[b];
    }
    size_t *fill = calloc(nblocks, sizeof *fill);
    if (!fill) {
        bosch_subproblem_free(sp);
        return NULL;
    }
    for (size_t v = 0; v < n; v++) {
        uint32_t b = block_of[v];
        sp->block_vars[sp->block_start[b] + fill[b]++] = v;
    }
    free(fill);
    if (var_units) {
        memcpy(sp->var_start, var_start, (n + 1) * sizeof *var_start);
        memcpy(sp->var_units, var_units, nvu * sizeof *var_units);
    } else {
        for (size_t v = 0; v <= n; v++)
            sp->var_start[v] = v;
        for (size_t v = 0; v < n; v++)
            sp->var_units[v] = v;
    }
    if (base)
        memcpy(sp->base, base, sp->units);
    prng_init(sp->rng, seed, stream);
    sp->inc_record = -1;
    sp->value_of = identity_value;
    return sp;
}

bosch_subproblem *bosch_subproblem_create(size_t n_vars, size_t n_blocks, const uint32_t *block_of,
                                          const uint32_t *counts, uint64_t seed)
{
    bosch_subproblem *sp =
        subproblem_new(n_vars, n_blocks, block_of, counts, n_vars, NULL, NULL, NULL, seed, 0);
    if (!sp)
        return NULL;
    if (store_init(&sp->own_store, n_vars) < 0) {
        bosch_subproblem_free(sp);
        return NULL;
    }
    sp->store = &sp->own_store;
    sp->value_ctx = &sp->own_store;
    return sp;
}

void bosch_subproblem_free(bosch_subproblem *sp)
{
    if (!sp)
        return;
    free(sp->block_of);
    free(sp->counts);
    free(sp->block_start);
    free(sp->block_vars);
    free(sp->base);
    free(sp->var_start);
    free(sp->var_units);
    free(sp->inc);
    free(sp->scratch);
    free(sp->full);
    free(sp->rng);
    free(sp->repair_prio);
    free(sp->prior);
    if (sp->hist) {
        free(sp->hist->rec);
        free(sp->hist->full);
        free(sp->hist->x);
        free(sp->hist->packed);
        free(sp->hist);
    }
    if (sp->own_store.slots)
        store_free(&sp->own_store);
    free(sp);
}

void subproblem_apply(const bosch_subproblem *sp, const uint8_t *x, uint8_t *full)
{
    memcpy(full, sp->base, sp->units);
    for (size_t v = 0; v < sp->n; v++)
        for (size_t i = sp->var_start[v]; i < sp->var_start[v + 1]; i++)
            full[sp->var_units[i]] = x[v] != 0;
}

void subproblem_expand(const bosch_subproblem *sp, const uint8_t *x)
{
    subproblem_apply(sp, x, sp->full);
    if (sp->global_repair) {
        /* Units of chosen variables get priority 1, so the repair trims or
         * extends the choice rather than undoing it. */
        for (size_t u = 0; u < sp->units; u++)
            sp->repair_prio[u] = sp->full[u];
        bosch_repair(sp->global_repair, sp->full, sp->repair_prio, NULL, sp->full);
    }
    bitset_pack(sp->full, sp->units, sp->scratch);
}

void subproblem_restrict(const bosch_subproblem *sp, const uint8_t *full, uint8_t *x)
{
    for (size_t v = 0; v < sp->n; v++)
        x[v] = sp->var_start[v] < sp->var_start[v + 1] ? full[sp->var_units[sp->var_start[v]]] != 0
                                                        : 0;
}

static int repair_with(const bosch_subproblem *sp, uint8_t *x, const double *prio)
{
    long changed = 0;
    for (size_t v = 0; v < sp->n; v++)
        x[v] = x[v] != 0;
    for (size_t b = 0; b < sp->nblocks; b++) {
        size_t s = sp->block_start[b], e = sp->block_start[b + 1];
        long c = repair_to_count(x, sp->block_vars + s, e - s, sp->counts[b], prio, NULL, NULL);
        if (c < 0)
            return c == -2 ? BOSCH_E_NOMEM : BOSCH_E_INFEASIBLE;
        changed += c;
    }
    return (int)changed;
}

int subproblem_repair_random(const bosch_subproblem *sp, uint8_t *x)
{
    double *prio = malloc(sp->n * sizeof *prio);
    if (!prio)
        return BOSCH_E_NOMEM;
    for (size_t v = 0; v < sp->n; v++)
        prio[v] = prng_uniform(sp->rng);
    int rc = repair_with(sp, x, prio);
    free(prio);
    return rc;
}

/* ---- public read-only view ---------------------------------------------- */

size_t bosch_subproblem_vars(const bosch_subproblem *sp)
{
    return sp ? sp->n : 0;
}

size_t bosch_subproblem_blocks(const bosch_subproblem *sp)
{
    return sp ? sp->nblocks : 0;
}

uint32_t bosch_subproblem_block_of(const bosch_subproblem *sp, size_t var)
{
    return sp && var < sp->n ? sp->block_of[var] : UINT32_MAX;
}

uint32_t bosch_subproblem_block_size(const bosch_subproblem *sp, size_t block)
{
    if (!sp || block >= sp->nblocks)
        return 0;
    return (uint32_t)(sp->block_start[block + 1] - sp->block_start[block]);
}

uint32_t bosch_subproblem_block_count(const bosch_subproblem *sp, size_t block)
{
    return sp && block < sp->nblocks ? sp->counts[block] : 0;
}

uint64_t bosch_subproblem_size(const bosch_subproblem *sp)
{
    if (!sp)
        return 0;
    uint64_t size = 1;
    for (size_t b = 0; b < sp->nblocks; b++)
        size = comb_mul_sat(size, comb_binomial(bosch_subproblem_block_size(sp, b), sp->counts[b]));
    return size;
}

uint64_t bosch_subproblem_budget_left(const bosch_subproblem *sp)
{
    return sp ? evals_left((double)sp->budget, sp->used) : 0;
}

int bosch_subproblem_incumbent(const bosch_subproblem *sp, uint8_t *x, double *value)
{
    if (!sp)
        return BOSCH_E_INVALID;
    if (!sp->has_inc)
        return BOSCH_E_NOT_FOUND;
    if (x)
        memcpy(x, sp->inc, sp->n);
    if (value)
        *value = sp->inc_value;
    return BOSCH_OK;
}

int bosch_subproblem_lookup(const bosch_subproblem *sp, const uint8_t *x, double *value)
{
    if (!sp || !x || !sp->store)
        return 0;
    subproblem_expand(sp, x);
    int64_t r = store_find(sp->store, sp->scratch);
    if (r < 0)
        return 0;
    if (value)
        *value = sp->value_of(sp->value_ctx, (size_t)r);
    return 1;
}

uint64_t bosch_subproblem_random(const bosch_subproblem *sp)
{
    return sp ? prng_next(sp->rng) : 0;
}

uint64_t bosch_subproblem_random_below(const bosch_subproblem *sp, uint64_t bound)
{
    return sp ? prng_below(sp->rng, bound) : 0;
}

int bosch_subproblem_repair(const bosch_subproblem *sp, uint8_t *x, const double *priority)
{
    if (!sp || !x)
        return BOSCH_E_INVALID;
    if (!priority)
        return subproblem_repair_random(sp, x);
    return repair_with(sp, x, priority);
}

int bosch_subproblem_set_start(bosch_subproblem *sp, const uint8_t *x, double value)
{
    if (!sp || !x || value != value || value - value != 0.0)
        return BOSCH_E_INVALID;
    for (size_t v = 0; v < sp->n; v++)
        sp->inc[v] = x[v] != 0;
    /* The start point must itself be feasible. */
    uint8_t *tmp = malloc(sp->n);
    if (!tmp)
        return BOSCH_E_NOMEM;
    memcpy(tmp, sp->inc, sp->n);
    int changed = repair_with(sp, tmp, NULL);
    free(tmp);
    if (changed != 0)
        return changed < 0 ? changed : BOSCH_E_INFEASIBLE;
    sp->inc_value = value;
    sp->has_inc = 1;
    return BOSCH_OK;
}
