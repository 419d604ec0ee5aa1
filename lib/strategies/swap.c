/* Swap local search (iterated): from the current point, evaluate the swap
 * neighbours (one SWA and one full variable of the same block trade places)
 * in random order, a batch at a time; move to the best of a batch when it
 * improves. When no neighbour improves, kick: restart from the incumbent
 * after three random swaps (iterated local search with better-acceptance,
 * since every kick starts from the best point known). */
#include <stdlib.h>
#include <string.h>

#include "strategies/builtin.h"

enum phase { START, KICK, MOVES };

struct state {
    size_t n;
    uint8_t *cur;
    double cur_value;
    enum phase phase;
    uint32_t *moves; /* pairs (one, zero) */
    size_t nmoves, pos;
};

static void destroy(void *st, void *user)
{
    struct state *s = st;
    if (s) {
        free(s->cur);
        free(s->moves);
        free(s);
    }
}

static int init(void **out, const bosch_subproblem *sp, void *user)
{
    struct state *s = calloc(1, sizeof *s);
    size_t n = bosch_subproblem_vars(sp);
    if (!s)
        return -1;
    s->n = n;
    s->cur = malloc(n);
    s->moves = malloc(2 * sizeof *s->moves * (n * n / 4 + 1));
    if (!s->cur || !s->moves) {
        destroy(s, user);
        return -1;
    }
    s->phase = bosch_subproblem_incumbent(sp, s->cur, &s->cur_value) == BOSCH_OK ? MOVES : START;
    *out = s;
    return 0;
}

/* All swap moves of the current point, shuffled with the subproblem stream. */
static void build_moves(struct state *s, const bosch_subproblem *sp)
{
    s->nmoves = 0;
    s->pos = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (!s->cur[i])
            continue;
        for (size_t j = 0; j < s->n; j++)
            if (!s->cur[j] && bosch_subproblem_block_of(sp, i) == bosch_subproblem_block_of(sp, j)) {
                s->moves[2 * s->nmoves] = (uint32_t)i;
                s->moves[2 * s->nmoves + 1] = (uint32_t)j;
                s->nmoves++;
            }
    }
    for (size_t k = s->nmoves; k > 1; k--) {
        size_t r = (size_t)bosch_subproblem_random_below(sp, k);
        uint32_t a = s->moves[2 * (k - 1)], b = s->moves[2 * (k - 1) + 1];
        s->moves[2 * (k - 1)] = s->moves[2 * r];
        s->moves[2 * (k - 1) + 1] = s->moves[2 * r + 1];
        s->moves[2 * r] = a;
        s->moves[2 * r + 1] = b;
    }
}

static int propose(void *st, const bosch_subproblem *sp, uint8_t *cands, size_t max, size_t *n)
{
    struct state *s = st;
    size_t nv = s->n;
    if (s->phase == START) {
        move_random_batch(sp, cands, max, n);
        return 0;
    }
    if (s->phase == MOVES && s->nmoves == 0 && s->pos == 0)
        build_moves(s, sp);
    if (s->phase == MOVES && s->nmoves == 0) {
        *n = 0; /* a single feasible point: nothing to search */
        return 0;
    }
    if (s->phase == MOVES && s->pos >= s->nmoves)
        s->phase = KICK;
    if (s->phase == KICK) {
        if (bosch_subproblem_incumbent(sp, cands, NULL) != BOSCH_OK)
            memcpy(cands, s->cur, nv);
        for (int k = 0; k < 3; k++)
            move_random_swap(sp, cands);
        *n = 1;
        return 0;
    }
    size_t m = 0;
    while (m < max && s->pos < s->nmoves) {
        uint8_t *x = cands + m * nv;
        memcpy(x, s->cur, nv);
        x[s->moves[2 * s->pos]] = 0;
        x[s->moves[2 * s->pos + 1]] = 1;
        s->pos++;
        m++;
    }
    *n = m;
    return 0;
}

static int observe(void *st, const bosch_subproblem *sp, const uint8_t *cands, const double *values,
                   size_t n)
{
    struct state *s = st;
    size_t best = move_best_index(values, n);
    if (s->phase == MOVES && values[best] <= s->cur_value)
        return 0; /* no improvement in this batch: keep scanning */
    memcpy(s->cur, cands + best * s->n, s->n);
    s->cur_value = values[best];
    s->phase = MOVES;
    build_moves(s, sp);
    return 0;
}

const struct builtin_strategy strategy_swap = {"swap", init, propose, observe, destroy};
