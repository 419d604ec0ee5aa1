/* (1+lambda) evolutionary algorithm with swap mutation: each batch holds
 * lambda offspring of the parent, each made by 1 + Geometric(1/2) random
 * swaps (so mostly one or two); the best offspring replaces the parent when
 * it is at least as good (accepting equal values lets the search drift
 * across plateaus). Offspring already evaluated are redrawn a few times. */
#include <stdlib.h>
#include <string.h>

#include "strategies/builtin.h"

struct state {
    size_t n;
    uint8_t *parent;
    double value;
    int has_parent;
};

static void destroy(void *st, void *user)
{
    struct state *s = st;
    if (s) {
        free(s->parent);
        free(s);
    }
}

static int init(void **out, const bosch_subproblem *sp, void *user)
{
    struct state *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    s->n = bosch_subproblem_vars(sp);
    s->parent = malloc(s->n);
    if (!s->parent) {
        free(s);
        return -1;
    }
    s->has_parent = bosch_subproblem_incumbent(sp, s->parent, &s->value) == BOSCH_OK;
    *out = s;
    return 0;
}

static int propose(void *st, const bosch_subproblem *sp, uint8_t *cands, size_t max, size_t *n)
{
    struct state *s = st;
    if (!s->has_parent) {
        move_random_batch(sp, cands, max, n);
        return 0;
    }
    if (move_swappable_blocks(sp) == 0) {
        *n = 0;
        return 0;
    }
    for (size_t i = 0; i < max; i++) {
        uint8_t *x = cands + i * s->n;
        for (int tries = 0; tries < 8; tries++) {
            memcpy(x, s->parent, s->n);
            int swaps = 1;
            while (swaps < (int)s->n && (bosch_subproblem_random(sp) & 1))
                swaps++;
            for (int k = 0; k < swaps; k++)
                move_random_swap(sp, x);
            if (!bosch_subproblem_lookup(sp, x, NULL) && !move_in_batch(cands, i, x, s->n))
                break;
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
    if (!s->has_parent || values[best] >= s->value) {
        memcpy(s->parent, cands + best * s->n, s->n);
        s->value = values[best];
        s->has_parent = 1;
    }
    return 0;
}

const struct builtin_strategy strategy_ea = {"ea", init, propose, observe, destroy};
