/* Layout of a strategy descriptor (include/bosch/strategy.h). */
#ifndef LIBBOSCH_SEARCH_STRATEGY_IMPL_H
#define LIBBOSCH_SEARCH_STRATEGY_IMPL_H

#include "bosch/bosch.h"

struct bosch_strategy {
    char *name;
    bosch_strategy_init_fn init;
    bosch_strategy_propose_fn propose;
    bosch_strategy_observe_fn observe;
    bosch_strategy_destroy_fn destroy;
    void *user;
};

#endif
