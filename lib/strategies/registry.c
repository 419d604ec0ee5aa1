/* The table of built-in strategies, in the order bosch_strategy_builtin_name lists them. */
#include "strategies/builtin.h"

const struct builtin_strategy *const builtin_strategies[] = {
    &strategy_auto, &strategy_exhaustive, &strategy_random,
    &strategy_swap, &strategy_ea,         &strategy_mads,
};
const size_t builtin_strategy_count = sizeof builtin_strategies / sizeof builtin_strategies[0];
