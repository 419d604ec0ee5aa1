/* Random search: independent uniform feasible samples until the budget ends. */
#include "strategies/builtin.h"

static int propose(void *st, const bosch_subproblem *sp, uint8_t *cands, size_t max, size_t *n)
{
    size_t nv = bosch_subproblem_vars(sp);
    for (size_t i = 0; i < max; i++)
        move_random_point(sp, cands + i * nv);
    *n = max;
    return 0;
}

const struct builtin_strategy strategy_random = {"random", NULL, propose, NULL, NULL};
