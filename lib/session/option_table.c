/* The option table's rows and the checked writes every setter shares
 * (option_table.h): the bottom of the session's option code. */
#include <math.h>
#include <stddef.h>

#include "session/option_table.h"

const struct option_def session_option_defs[OPT_COUNT] = {
#define OPTION_DEF(id, name, kind, field, def, min, max, what, doc) \
    {name, kind, offsetof(struct options, field), def, min, max, what, doc},
    OPTION_TABLE(OPTION_DEF)
#undef OPTION_DEF
};

/* ---- checks shared by every setter ------------------------------------------------ */

int session_not_started(bosch_optimizer *opt)
{
    if (!opt)
        return BOSCH_E_INVALID;
    if (opt->started || opt->status != 0)
        return session_refuse(opt, BOSCH_E_STATE,
                              "options cannot change once the search has started");
    return BOSCH_OK;
}

int session_bad_value(bosch_optimizer *opt, const char *what)
{
    return session_refuse(opt, BOSCH_E_INVALID, "invalid value for %s", what);
}

int session_set_uint(bosch_optimizer *opt, enum option_id id, uint64_t v)
{
    int rc = session_not_started(opt);
    if (rc < 0)
        return rc;
    const struct option_def *d = &session_option_defs[id];
    if ((double)v < d->min || (double)v > d->max)
        return session_bad_value(opt, d->what);
    *FIELD(&opt->o, d, uint64_t) = v;
    return BOSCH_OK;
}

int session_set_double(bosch_optimizer *opt, enum option_id id, double v)
{
    int rc = session_not_started(opt);
    if (rc < 0)
        return rc;
    const struct option_def *d = &session_option_defs[id];
    if (!(v >= d->min && v <= d->max) || isinf(v))
        return session_bad_value(opt, d->what);
    *FIELD(&opt->o, d, double) = v;
    return BOSCH_OK;
}

int session_set_bool(bosch_optimizer *opt, enum option_id id, int v)
{
    int rc = session_not_started(opt);
    if (rc < 0)
        return rc;
    *FIELD(&opt->o, &session_option_defs[id], int) = v;
    return BOSCH_OK;
}
