/* Strategy descriptors (the built-in ones come from lib/strategies). */
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "search/strategy_impl.h"

bosch_strategy *bosch_strategy_create(const char *name, bosch_strategy_init_fn init,
                                      bosch_strategy_propose_fn propose,
                                      bosch_strategy_observe_fn observe,
                                      bosch_strategy_destroy_fn destroy, void *user)
{
    if (!name || !*name)
        return create_fail(BOSCH_E_INVALID, "bosch_strategy_create: the name is NULL or empty");
    if (!propose)
        return create_fail(BOSCH_E_INVALID, "bosch_strategy_create: strategy '%s' has no propose "
                                            "callback", name);
    bosch_strategy *s = calloc(1, sizeof *s);
    if (!s)
        return create_fail(BOSCH_E_NOMEM, "bosch_strategy_create: out of memory");
    s->name = malloc(strlen(name) + 1);
    if (!s->name) {
        free(s);
        return create_fail(BOSCH_E_NOMEM, "bosch_strategy_create: out of memory");
    }
    strcpy(s->name, name);
    s->init = init;
    s->propose = propose;
    s->observe = observe;
    s->destroy = destroy;
    s->user = user;
    return s;
}

bosch_strategy *bosch_strategy_clone(const bosch_strategy *s)
{
    if (!s)
        return create_fail(BOSCH_E_INVALID, "bosch_strategy_clone: strategy is NULL");
    return bosch_strategy_create(s->name, s->init, s->propose, s->observe, s->destroy, s->user);
}

const char *bosch_strategy_name(const bosch_strategy *s)
{
    return s ? s->name : NULL;
}

void bosch_strategy_free(bosch_strategy *s)
{
    if (!s)
        return;
    free(s->name);
    free(s);
}

bosch_strategy *bosch_strategy_new(const char *name, bosch_strategy_init_fn init,
                                   bosch_strategy_propose_fn propose,
                                   bosch_strategy_observe_fn observe,
                                   bosch_strategy_destroy_fn destroy, void *user)
{
    return bosch_strategy_create(name, init, propose, observe, destroy, user);
}
