/* Random search: independent uniform feasible samples until the budget ends. */
#include "strategies/builtin.h"

static int propose(void *st, const bosch_subproblem *sp, uint8_t *cands, size_t max, size_t *n)
{
    move_random_batch(sp, cands, max, n);
    return 0;
}

const struct builtin_strategy strategy_random = {"random", NULL, propose, NULL, NULL};
