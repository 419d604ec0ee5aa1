/* auto: enumerate the subproblem when its feasible set fits the budget it
 * was given (then the answer is exact), otherwise run the default strategy. */
#include <stdlib.h>

#include "strategies/builtin.h"

struct state {
    const struct builtin_strategy *inner;
    void *inner_state;
};

static void destroy(void *st, void *user)
{
    struct state *s = st;
    if (!s)
        return;
    if (s->inner->destroy)
        s->inner->destroy(s->inner_state, user);
    free(s);
}

static int init(void **out, const bosch_subproblem *sp, void *user)
{
    struct state *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    if (bosch_subproblem_size(sp) <= bosch_subproblem_budget_left(sp)) {
        s->inner = &strategy_exhaustive;
    } else {
        s->inner = &DEFAULT_STRATEGY;
    }
    if (!s->inner || (s->inner->init && s->inner->init(&s->inner_state, sp, user) != 0)) {
        free(s);
        return -1;
    }
    *out = s;
    return 0;
}

static int propose(void *st, const bosch_subproblem *sp, uint8_t *cands, size_t max, size_t *n)
{
    struct state *s = st;
    return s->inner->propose(s->inner_state, sp, cands, max, n);
}

static int observe(void *st, const bosch_subproblem *sp, const uint8_t *cands, const double *values,
                   size_t n)
{
    struct state *s = st;
    return s->inner->observe ? s->inner->observe(s->inner_state, sp, cands, values, n) : 0;
}

const struct builtin_strategy strategy_auto = {"auto", init, propose, observe, destroy};
