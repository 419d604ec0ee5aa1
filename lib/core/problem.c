#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "core/problem_impl.h"

#define MAX_UNITS ((size_t)1 << 24)

bosch_problem *bosch_problem_create(uint32_t layers, uint32_t kv_groups, uint32_t heads_per_group)
{
    if (!layers || !kv_groups || !heads_per_group)
        return create_fail(BOSCH_E_INVALID,
                           "bosch_problem_create: shape %u x %u x %u has a zero dimension",
                           layers, kv_groups, heads_per_group);
    size_t units = (size_t)layers * kv_groups;
    if (units > MAX_UNITS || (size_t)heads_per_group > MAX_UNITS / units)
        return create_fail(BOSCH_E_INVALID,
                           "bosch_problem_create: shape %u x %u x %u exceeds 2^24 units or "
                           "query heads", layers, kv_groups, heads_per_group);
    bosch_problem *p = calloc(1, sizeof *p);
    if (!p)
        return create_fail(BOSCH_E_NOMEM, "bosch_problem_create: out of memory");
    p->layers = layers;
    p->groups = kv_groups;
    p->heads = heads_per_group;
    p->units = units;
    p->rho = 0.5;
    p->fix = calloc(units, 1);
    p->min_ratio = calloc(layers, sizeof *p->min_ratio);
    p->max_ratio = malloc(layers * sizeof *p->max_ratio);
    if (!p->fix || !p->min_ratio || !p->max_ratio) {
        bosch_problem_free(p);
        return create_fail(BOSCH_E_NOMEM, "bosch_problem_create: out of memory");
    }
    for (uint32_t l = 0; l < layers; l++)
        p->max_ratio[l] = 1.0;
    return p;
}

bosch_problem *bosch_problem_clone(const bosch_problem *p)
{
    if (!p)
        return create_fail(BOSCH_E_INVALID, "bosch_problem_clone: problem is NULL");
    bosch_problem *q = bosch_problem_create(p->layers, p->groups, p->heads);
    if (!q)
        return NULL;
    q->rho = p->rho;
    q->exact = p->exact;
    q->exact_units = p->exact_units;
    memcpy(q->fix, p->fix, p->units);
    memcpy(q->min_ratio, p->min_ratio, p->layers * sizeof *p->min_ratio);
    memcpy(q->max_ratio, p->max_ratio, p->layers * sizeof *p->max_ratio);
    return q;
}

void bosch_problem_free(bosch_problem *p)
{
    if (!p)
        return;
    free(p->fix);
    free(p->min_ratio);
    free(p->max_ratio);
    free(p);
}

uint32_t bosch_problem_layers(const bosch_problem *p)
{
    return p ? p->layers : 0;
}

uint32_t bosch_problem_kv_groups(const bosch_problem *p)
{
    return p ? p->groups : 0;
}

uint32_t bosch_problem_heads_per_group(const bosch_problem *p)
{
    return p ? p->heads : 0;
}

size_t bosch_problem_units(const bosch_problem *p)
{
    return p ? p->units : 0;
}

size_t bosch_problem_query_heads(const bosch_problem *p)
{
    return p ? p->units * p->heads : 0;
}

int bosch_problem_set_target_ratio(bosch_problem *p, double rho)
{
    if (!p || !(rho >= 0.0 && rho <= 1.0))
        return BOSCH_E_INVALID;
    p->rho = rho;
    p->exact = 0;
    return BOSCH_OK;
}

int bosch_problem_set_target_units(bosch_problem *p, size_t n_swa)
{
    if (!p || n_swa > p->units)
        return BOSCH_E_INVALID;
    p->exact = 1;
    p->exact_units = n_swa;
    return BOSCH_OK;
}

size_t bosch_problem_target_units(const bosch_problem *p)
{
    if (!p)
        return 0;
    if (p->exact)
        return p->exact_units;
    return (size_t)floor(p->rho * (double)p->units + 0.5);
}

double bosch_problem_target_ratio(const bosch_problem *p)
{
    if (!p)
        return NAN;
    return p->exact ? (double)p->exact_units / (double)p->units : p->rho;
}

int bosch_problem_fix_unit(bosch_problem *p, uint32_t layer, uint32_t group, int fix)
{
    if (!p || layer >= p->layers || group >= p->groups)
        return BOSCH_E_INVALID;
    if (fix != BOSCH_FIX_NONE && fix != BOSCH_FIX_FULL && fix != BOSCH_FIX_SWA)
        return BOSCH_E_INVALID;
    p->fix[(size_t)layer * p->groups + group] = (uint8_t)fix;
    return BOSCH_OK;
}

int bosch_problem_unit_fix(const bosch_problem *p, uint32_t layer, uint32_t group)
{
    if (!p || layer >= p->layers || group >= p->groups)
        return BOSCH_E_INVALID;
    return p->fix[(size_t)layer * p->groups + group];
}

int bosch_problem_set_layer_bounds(bosch_problem *p, uint32_t layer, double min_ratio,
                                   double max_ratio)
{
    if (!p || layer >= p->layers)
        return BOSCH_E_INVALID;
    if (!(min_ratio >= 0.0 && max_ratio <= 1.0 && min_ratio <= max_ratio))
        return BOSCH_E_INVALID;
    p->min_ratio[layer] = min_ratio;
    p->max_ratio[layer] = max_ratio;
    return BOSCH_OK;
}

uint32_t problem_fixed_count(const bosch_problem *p, uint32_t l, int fix)
{
    uint32_t c = 0;
    const uint8_t *f = p->fix + (size_t)l * p->groups;
    for (uint32_t g = 0; g < p->groups; g++)
        c += f[g] == fix;
    return c;
}

void problem_layer_range(const bosch_problem *p, uint32_t l, uint32_t *lo, uint32_t *hi)
{
    double G = (double)p->groups;
    /* The epsilon keeps ratios such as 0.25 * 8 from rounding the wrong way. */
    uint32_t blo = (uint32_t)ceil(p->min_ratio[l] * G - 1e-9);
    uint32_t bhi = (uint32_t)floor(p->max_ratio[l] * G + 1e-9);
    uint32_t fswa = problem_fixed_count(p, l, BOSCH_FIX_SWA);
    uint32_t ffull = problem_fixed_count(p, l, BOSCH_FIX_FULL);
    *lo = blo > fswa ? blo : fswa;
    *hi = bhi < p->groups - ffull ? bhi : p->groups - ffull;
}

int bosch_problem_check(const bosch_problem *p, char *why, size_t why_len)
{
    if (why && why_len)
        why[0] = '\0';
    if (!p)
        return BOSCH_E_INVALID;
    size_t sum_lo = 0, sum_hi = 0;
    for (uint32_t l = 0; l < p->layers; l++) {
        uint32_t lo, hi;
        problem_layer_range(p, l, &lo, &hi);
        if (lo > hi) {
            if (why && why_len)
                snprintf(why, why_len,
                         "layer %u: needs at least %u SWA units (bounds and fixed-SWA units) "
                         "but allows at most %u (bounds and fixed-full units)",
                         l, lo, hi);
            return BOSCH_E_INFEASIBLE;
        }
        sum_lo += lo;
        sum_hi += hi;
    }
    size_t t = bosch_problem_target_units(p);
    if (t < sum_lo || t > sum_hi) {
        if (why && why_len)
            snprintf(why, why_len,
                     "target of %zu SWA units is outside the %zu..%zu that fixed units and "
                     "layer bounds allow",
                     t, sum_lo, sum_hi);
        return BOSCH_E_INFEASIBLE;
    }
    return BOSCH_OK;
}
