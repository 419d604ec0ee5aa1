/* Repair: the nearest feasible mask in Hamming distance.
 *
 * Why this is minimal: fixed units that disagree must change; a layer
 * outside its [lo, hi] range must change by at least its distance to the
 * range; after that the total is off the target by d and every further change
 * moves the total by exactly one, so at least |d| more changes are needed,
 * taken only from layers that stay inside their range. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/problem_impl.h"
#include "core/repair_impl.h"

struct keyed {
    double key;
    size_t pos;
};

static int cmp_keyed(const void *a, const void *b)
{
    const struct keyed *x = a, *y = b;
    if (x->key < y->key)
        return -1;
    if (x->key > y->key)
        return 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

long repair_to_count(uint8_t *x, const size_t *idx, size_t n, size_t target, const double *prio,
                     const uint32_t *cap_of, uint32_t *cap)
{
    size_t ones = 0;
    for (size_t i = 0; i < n; i++)
        ones += x[idx[i]] != 0;
    if (ones == target)
        return 0;
    int clear = ones > target; /* clear ones, else set zeros */
    size_t need = clear ? ones - target : target - ones;
    struct keyed *c = malloc((n ? n : 1) * sizeof *c);
    if (!c)
        return -2;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        size_t pos = idx[i];
        if ((x[pos] != 0) != clear)
            continue;
        double pr = prio ? prio[pos] : 0.0;
        /* Clearing goes by increasing priority, setting by decreasing. */
        c[m].key = clear ? pr : -pr;
        c[m].pos = pos;
        m++;
    }
    qsort(c, m, sizeof *c, cmp_keyed);
    size_t done = 0;
    for (size_t i = 0; i < m && done < need; i++) {
        size_t pos = c[i].pos;
        if (cap && cap[cap_of[pos]] == 0)
            continue;
        if (cap)
            cap[cap_of[pos]]--;
        x[pos] = (uint8_t)!clear;
        done++;
    }
    free(c);
    return done == need ? (long)done : -1;
}

static int valid_priority(const double *prio, size_t n)
{
    if (!prio)
        return 1;
    for (size_t i = 0; i < n; i++)
        if (isnan(prio[i]))
            return 0;
    return 1;
}

/* Free (non-fixed) units of layer l into idx; returns how many. */
static size_t free_units(const bosch_problem *p, uint32_t l, size_t *idx)
{
    size_t m = 0;
    for (uint32_t g = 0; g < p->groups; g++) {
        size_t u = (size_t)l * p->groups + g;
        if (p->fix[u] == BOSCH_FIX_NONE)
            idx[m++] = u;
    }
    return m;
}

static size_t layer_count(const bosch_problem *p, const uint8_t *x, uint32_t l)
{
    size_t c = 0;
    for (uint32_t g = 0; g < p->groups; g++)
        c += x[(size_t)l * p->groups + g] != 0;
    return c;
}

static int repair_layers(const bosch_problem *p, uint8_t *x, const double *prio,
                         const uint32_t *counts, size_t *idx)
{
    for (uint32_t l = 0; l < p->layers; l++) {
        uint32_t lo, hi;
        problem_layer_range(p, l, &lo, &hi);
        if (counts[l] < lo || counts[l] > hi)
            return BOSCH_E_INFEASIBLE;
        size_t m = free_units(p, l, idx);
        size_t fixed_swa = problem_fixed_count(p, l, BOSCH_FIX_SWA);
        if (repair_to_count(x, idx, m, counts[l] - fixed_swa, prio, NULL, NULL) < 0)
            return BOSCH_E_INFEASIBLE;
    }
    return BOSCH_OK;
}

static int repair_global(const bosch_problem *p, uint8_t *x, const double *prio, size_t *idx)
{
    if (bosch_problem_check(p, NULL, 0) != BOSCH_OK)
        return BOSCH_E_INFEASIBLE;
    uint32_t *cap = malloc(p->layers * sizeof *cap);
    uint32_t *cap_of = malloc(p->units * sizeof *cap_of);
    if (!cap || !cap_of) {
        free(cap);
        free(cap_of);
        return BOSCH_E_NOMEM;
    }
    size_t total = 0;
    uint32_t *lo = malloc(2 * p->layers * sizeof *lo);
    if (!lo) {
        free(cap);
        free(cap_of);
        return BOSCH_E_NOMEM;
    }
    uint32_t *hi = lo + p->layers;
    /* 1. Each layer into its range. */
    for (uint32_t l = 0; l < p->layers; l++) {
        problem_layer_range(p, l, &lo[l], &hi[l]);
        size_t c = layer_count(p, x, l);
        size_t m = free_units(p, l, idx);
        size_t fixed_swa = problem_fixed_count(p, l, BOSCH_FIX_SWA);
        if (c < lo[l])
            repair_to_count(x, idx, m, lo[l] - fixed_swa, prio, NULL, NULL);
        else if (c > hi[l])
            repair_to_count(x, idx, m, hi[l] - fixed_swa, prio, NULL, NULL);
        total += layer_count(p, x, l);
    }
    /* 2. The total onto the target, each layer keeping inside its range. */
    size_t target = bosch_problem_target_units(p);
    int rc = BOSCH_OK;
    if (total != target) {
        size_t m = 0;
        for (uint32_t l = 0; l < p->layers; l++) {
            size_t c = layer_count(p, x, l);
            cap[l] = total > target ? (uint32_t)(c - lo[l]) : (uint32_t)(hi[l] - c);
            m += free_units(p, l, idx + m);
        }
        for (size_t i = 0; i < m; i++)
            cap_of[idx[i]] = (uint32_t)(idx[i] / p->groups);
        size_t ones_free = 0;
        for (size_t i = 0; i < m; i++)
            ones_free += x[idx[i]] != 0;
        size_t want = total > target ? ones_free - (total - target) : ones_free + (target - total);
        if (repair_to_count(x, idx, m, want, prio, cap_of, cap) < 0)
            rc = BOSCH_E_INFEASIBLE;
    }
    free(lo);
    free(cap);
    free(cap_of);
    return rc;
}

int bosch_repair(const bosch_problem *p, const uint8_t *in, const double *priority,
                 const uint32_t *layer_counts, uint8_t *out)
{
    if (!p || !in || !out || !valid_priority(priority, p ? p->units : 0))
        return BOSCH_E_INVALID;
    uint8_t *x = malloc(p->units);
    size_t *idx = malloc(p->units * sizeof *idx);
    if (!x || !idx) {
        free(x);
        free(idx);
        return BOSCH_E_NOMEM;
    }
    for (size_t u = 0; u < p->units; u++) {
        x[u] = in[u] != 0;
        if (p->fix[u] == BOSCH_FIX_FULL)
            x[u] = 0;
        else if (p->fix[u] == BOSCH_FIX_SWA)
            x[u] = 1;
    }
    int rc = layer_counts ? repair_layers(p, x, priority, layer_counts, idx)
                          : repair_global(p, x, priority, idx);
    if (rc == BOSCH_OK) {
        long changed = 0;
        for (size_t u = 0; u < p->units; u++)
            changed += (in[u] != 0) != x[u];
        memcpy(out, x, p->units);
        rc = (int)changed;
    }
    free(x);
    free(idx);
    return rc;
}

int bosch_mask_is_feasible(const bosch_problem *p, const uint8_t *mask)
{
    if (!p || !mask)
        return 0;
    size_t total = 0;
    for (uint32_t l = 0; l < p->layers; l++) {
        uint32_t lo, hi;
        problem_layer_range(p, l, &lo, &hi);
        size_t c = 0;
        for (uint32_t g = 0; g < p->groups; g++) {
            size_t u = (size_t)l * p->groups + g;
            int z = mask[u] != 0;
            if ((p->fix[u] == BOSCH_FIX_FULL && z) || (p->fix[u] == BOSCH_FIX_SWA && !z))
                return 0;
            c += (size_t)z;
        }
        if (c < lo || c > hi)
            return 0;
        total += c;
    }
    return total == bosch_problem_target_units(p);
}

int bosch_mask_expand_heads(const bosch_problem *p, const uint8_t *unit_mask, uint8_t *head_mask)
{
    if (!p || !unit_mask || !head_mask)
        return BOSCH_E_INVALID;
    for (size_t u = 0; u < p->units; u++)
        memset(head_mask + u * p->heads, unit_mask[u] != 0, p->heads);
    return BOSCH_OK;
}

double bosch_kv_saving(double swa_ratio, uint64_t context, uint64_t window, uint64_t sink)
{
    if (!(swa_ratio >= 0.0) || context == 0)
        return 0.0;
    double kept = (double)sink + (double)window;
    double s = swa_ratio * (1.0 - kept / (double)context);
    return s > 0.0 ? s : 0.0;
}
