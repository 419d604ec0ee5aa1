/* The table of built-in strategies, in the order bosch_strategy_builtin_name lists them. */
#include <string.h>

#include "core/errors.h"
#include "strategies/builtin.h"

const struct builtin_strategy *const builtin_strategies[] = {
    &strategy_auto, &strategy_exhaustive, &strategy_random,
    &strategy_swap, &strategy_ea,         &strategy_mads, &strategy_model,
};
const size_t builtin_strategy_count = sizeof builtin_strategies / sizeof builtin_strategies[0];

bosch_strategy *bosch_strategy_builtin(const char *name)
{
    if (!name)
        return create_fail(BOSCH_E_INVALID, "bosch_strategy_builtin: the name is NULL");
    for (size_t i = 0; i < builtin_strategy_count; i++) {
        const struct builtin_strategy *b = builtin_strategies[i];
        if (strcmp(b->name, name) == 0)
            return bosch_strategy_create(b->name, b->init, b->propose, b->observe, b->destroy, NULL);
    }
    return create_fail(BOSCH_E_NOT_FOUND, "bosch_strategy_builtin: no built-in strategy '%s'",
                       name);
}

size_t bosch_strategy_builtin_count(void)
{
    return builtin_strategy_count;
}

const char *bosch_strategy_builtin_name(size_t i)
{
    return i < builtin_strategy_count ? builtin_strategies[i]->name : NULL;
}
