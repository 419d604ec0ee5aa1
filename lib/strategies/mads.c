/* MADS-style poll on {0,1} (after Audet & Dennis' mesh adaptive direct
 * search, the method the BOSCH paper cites): a poll evaluates a batch of
 * directions, each flipping `delta` random variables of the incumbent; the
 * runner repairs each poll point to the block counts. A successful poll
 * (strict improvement) moves the incumbent and doubles the mesh size delta,
 * a failed one halves it. When delta falls below one flip the mesh restarts
 * at its initial size around the incumbent (so the subproblem's budget is
 * spent on wider polls instead of being left unused); the search ends when
 * the budget is spent or the runner sees nothing new (its idle limit). */
#include <stdlib.h>
#include <string.h>

#include "strategies/builtin.h"

struct state {
    size_t n;
    uint8_t *x;
    double value;
    int has_x;
    size_t delta, delta_max, delta0;
    size_t *perm; /* scratch for drawing distinct variables */
};

static void destroy(void *st, void *user)
{
    struct state *s = st;
    if (s) {
        free(s->x);
        free(s->perm);
        free(s);
    }
}

static int init(void **out, const bosch_subproblem *sp, void *user)
{
    struct state *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    s->n = bosch_subproblem_vars(sp);
    s->x = malloc(s->n);
    s->perm = malloc(s->n * sizeof *s->perm);
    if (!s->x || !s->perm) {
        destroy(s, user);
        return -1;
    }
    for (size_t v = 0; v < s->n; v++)
        s->perm[v] = v;
    s->has_x = bosch_subproblem_incumbent(sp, s->x, &s->value) == BOSCH_OK;
    s->delta_max = s->n / 2 > 1 ? s->n / 2 : 1;
    s->delta = s->n / 4 > 1 ? s->n / 4 : 1;
    s->delta0 = s->delta;
    *out = s;
    return 0;
}

static int propose(void *st, const bosch_subproblem *sp, uint8_t *cands, size_t max, size_t *n)
{
    struct state *s = st;
    if (!s->has_x) {
        move_random_batch(sp, cands, max, n);
        return 0;
    }
    if (move_swappable_blocks(sp) == 0) {
        *n = 0; /* nothing can move */
        return 0;
    }
    if (s->delta == 0)
        s->delta = s->delta0; /* mesh collapsed: restart around the incumbent */
    for (size_t i = 0; i < max; i++) {
        uint8_t *x = cands + i * s->n;
        memcpy(x, s->x, s->n);
        /* delta distinct variables, by a partial Fisher-Yates over indices. */
        for (size_t k = 0; k < s->delta && k < s->n; k++) {
            size_t r = k + (size_t)bosch_subproblem_random_below(sp, s->n - k);
            size_t t = s->perm[k];
            s->perm[k] = s->perm[r];
            s->perm[r] = t;
            x[s->perm[k]] = (uint8_t)!x[s->perm[k]];
        }
    }
    *n = max;
    return 0;
}

static int observe(void *st, const bosch_subproblem *sp, const uint8_t *cands, const double *values,
                   size_t n)
{
    struct state *s = st;
    size_t best = move_best_index(values, n);
    if (!s->has_x || values[best] > s->value) {
        memcpy(s->x, cands + best * s->n, s->n);
        if (s->has_x)
            s->delta = s->delta * 2 < s->delta_max ? s->delta * 2 : s->delta_max;
        s->value = values[best];
        s->has_x = 1;
    } else {
        s->delta /= 2;
    }
    return 0;
}

const struct builtin_strategy strategy_mads = {"mads", init, propose, observe, destroy};
