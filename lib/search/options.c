/* Option setters, typed and by name. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/optimizer_impl.h"

static int not_started(bosch_optimizer *opt)
{
    if (!opt)
        return BOSCH_E_INVALID;
    if (opt->started || opt->status != 0) {
        snprintf(opt->err, sizeof opt->err, "options cannot change once the search has started");
        return BOSCH_E_STATE;
    }
    return BOSCH_OK;
}

static int bad_value(bosch_optimizer *opt, const char *what)
{
    snprintf(opt->err, sizeof opt->err, "invalid value for %s", what);
    return BOSCH_E_INVALID;
}

#define GUARD(opt)                    \
    do {                              \
        int guard_rc = not_started(opt); \
        if (guard_rc < 0)             \
            return guard_rc;          \
    } while (0)

int bosch_set_seed(bosch_optimizer *opt, uint64_t seed)
{
    GUARD(opt);
    opt->o.seed = seed;
    return BOSCH_OK;
}

int bosch_set_budget(bosch_optimizer *opt, uint64_t evaluations)
{
    GUARD(opt);
    if (evaluations == 0)
        return bad_value(opt, "budget (must be >= 1)");
    opt->o.budget = evaluations;
    return BOSCH_OK;
}

int bosch_set_stage_budget(bosch_optimizer *opt, int stage, uint64_t evaluations)
{
    GUARD(opt);
    if (stage == BOSCH_STAGE_PROBE)
        opt->o.probe_budget = evaluations;
    else if (stage == BOSCH_STAGE_GROUP)
        opt->o.group_budget = evaluations;
    else
        return bad_value(opt, "stage (BOSCH_STAGE_PROBE or BOSCH_STAGE_GROUP)");
    return BOSCH_OK;
}

int bosch_set_probe_fraction(bosch_optimizer *opt, double fraction)
{
    GUARD(opt);
    if (!(fraction >= 0.0 && fraction <= 1.0))
        return bad_value(opt, "probe_fraction (0..1)");
    opt->o.probe_fraction = fraction;
    return BOSCH_OK;
}

int bosch_set_polish_fraction(bosch_optimizer *opt, double fraction)
{
    GUARD(opt);
    if (!(fraction >= 0.0 && fraction <= 1.0))
        return bad_value(opt, "polish_fraction (0..1)");
    opt->o.polish_fraction = fraction;
    return BOSCH_OK;
}

int bosch_set_time_limit(bosch_optimizer *opt, double seconds)
{
    GUARD(opt);
    if (!(seconds >= 0.0) || isinf(seconds))
        return bad_value(opt, "time_limit (finite seconds >= 0)");
    opt->o.time_limit = seconds;
    return BOSCH_OK;
}

int bosch_set_alpha(bosch_optimizer *opt, double alpha)
{
    GUARD(opt);
    if (!(alpha >= 0.0) || isinf(alpha))
        return bad_value(opt, "alpha (finite, >= 0)");
    opt->o.alpha = alpha;
    return BOSCH_OK;
}

int bosch_set_group_cap(bosch_optimizer *opt, uint32_t units)
{
    GUARD(opt);
    if (units == 0)
        return bad_value(opt, "group_cap (>= 1)");
    opt->o.group_cap = units;
    return BOSCH_OK;
}

int bosch_set_batch_size(bosch_optimizer *opt, uint32_t candidates)
{
    GUARD(opt);
    if (candidates == 0 || candidates > 4096)
        return bad_value(opt, "batch_size (1..4096)");
    opt->o.batch = candidates;
    return BOSCH_OK;
}

int bosch_set_ratio_spread(bosch_optimizer *opt, double spread)
{
    GUARD(opt);
    if (!(spread >= 0.0 && spread <= 1.0))
        return bad_value(opt, "ratio_spread (0..1)");
    opt->o.spread = spread;
    return BOSCH_OK;
}

int bosch_set_variant(bosch_optimizer *opt, int variant)
{
    GUARD(opt);
    if (!bosch_variant_name(variant))
        return bad_value(opt, "variant");
    opt->o.variant = variant;
    return BOSCH_OK;
}

static int replace_strategy(bosch_optimizer *opt, int stage, const bosch_strategy *s)
{
    bosch_strategy *copy = s ? bosch_strategy_clone(s) : bosch_strategy_builtin("auto");
    if (!copy)
        return BOSCH_E_NOMEM;
    bosch_strategy_free(opt->o.strategy[stage]);
    opt->o.strategy[stage] = copy;
    return BOSCH_OK;
}

int bosch_set_strategy(bosch_optimizer *opt, int stage, const bosch_strategy *s)
{
    GUARD(opt);
    if (stage != -1 && stage != BOSCH_STAGE_PROBE && stage != BOSCH_STAGE_GROUP)
        return bad_value(opt, "stage (BOSCH_STAGE_PROBE, BOSCH_STAGE_GROUP or -1)");
    int rc = BOSCH_OK;
    if (stage == -1 || stage == BOSCH_STAGE_PROBE)
        rc = replace_strategy(opt, BOSCH_STAGE_PROBE, s);
    if (rc == BOSCH_OK && (stage == -1 || stage == BOSCH_STAGE_GROUP))
        rc = replace_strategy(opt, BOSCH_STAGE_GROUP, s);
    return rc;
}

int bosch_set_threads(bosch_optimizer *opt, uint32_t threads)
{
    GUARD(opt);
    if (threads == 0 || threads > 256)
        return bad_value(opt, "threads (1..256)");
    opt->o.threads = threads;
    return BOSCH_OK;
}

int bosch_set_journal(bosch_optimizer *opt, const char *path, int mode)
{
    GUARD(opt);
    if (mode != BOSCH_JOURNAL_CREATE && mode != BOSCH_JOURNAL_RESUME && mode != BOSCH_JOURNAL_AUTO)
        return bad_value(opt, "journal mode");
    char *copy = NULL;
    if (path) {
        if (!*path)
            return bad_value(opt, "journal path (empty)");
        copy = strdup(path);
        if (!copy)
            return BOSCH_E_NOMEM;
    }
    free(opt->o.journal_path);
    opt->o.journal_path = copy;
    opt->o.journal_mode = mode;
    return BOSCH_OK;
}

int bosch_set_journal_sync(bosch_optimizer *opt, int sync)
{
    GUARD(opt);
    opt->o.journal_sync = sync != 0;
    return BOSCH_OK;
}

int bosch_set_anchors(bosch_optimizer *opt, double s_full, double s_allswa)
{
    GUARD(opt);
    if (!isfinite(s_full) || !isfinite(s_allswa)) {
        snprintf(opt->err, sizeof opt->err, "anchor scores must be finite");
        return BOSCH_E_BAD_SCORE;
    }
    if (!(s_full > s_allswa)) {
        snprintf(opt->err, sizeof opt->err,
                 "anchor scores cannot normalise: S_full = %g is not above S_allSWA = %g", s_full,
                 s_allswa);
        return BOSCH_E_ANCHORS;
    }
    opt->o.anchors_given = 1;
    opt->o.s_full = s_full;
    opt->o.s_swa = s_allswa;
    return BOSCH_OK;
}

/* ---- by name ------------------------------------------------------------------ */

static int parse_u64(const char *v, uint64_t *out)
{
    if (!*v || *v == '-')
        return 0;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (errno || *end)
        return 0;
    *out = x;
    return 1;
}

static int parse_double(const char *v, double *out)
{
    if (!*v)
        return 0;
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || *end || !isfinite(x))
        return 0;
    *out = x;
    return 1;
}

enum kind { K_U64, K_U32, K_DOUBLE, K_VARIANT, K_STRATEGY, K_PATH, K_BOOL };

struct option_def {
    const char *name;
    enum kind kind;
    int arg; /* stage for budgets and strategies */
};

static const struct option_def defs[] = {
    {"seed", K_U64, 0},
    {"budget", K_U64, 1},
    {"probe_budget", K_U64, BOSCH_STAGE_PROBE},
    {"group_budget", K_U64, BOSCH_STAGE_GROUP},
    {"probe_fraction", K_DOUBLE, 0},
    {"time_limit", K_DOUBLE, 1},
    {"alpha", K_DOUBLE, 2},
    {"ratio_spread", K_DOUBLE, 3},
    {"polish_fraction", K_DOUBLE, 4},
    {"group_cap", K_U32, 0},
    {"batch_size", K_U32, 1},
    {"threads", K_U32, 2},
    {"journal", K_PATH, 0},
    {"journal_sync", K_BOOL, 0},
    {"variant", K_VARIANT, 0},
    {"strategy", K_STRATEGY, -1},
    {"probe_strategy", K_STRATEGY, BOSCH_STAGE_PROBE},
    {"group_strategy", K_STRATEGY, BOSCH_STAGE_GROUP},
};

static const struct option_def *find_def(const char *name)
{
    for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++)
        if (strcmp(defs[i].name, name) == 0)
            return &defs[i];
    return NULL;
}

static int option_error(bosch_optimizer *opt, const char *name, const char *value)
{
    snprintf(opt->err, sizeof opt->err, "cannot parse value '%s' for option '%s'", value, name);
    return BOSCH_E_OPTION;
}

int bosch_set_option(bosch_optimizer *opt, const char *name, const char *value)
{
    if (!opt || !name || !value)
        return BOSCH_E_INVALID;
    const struct option_def *d = find_def(name);
    if (!d) {
        snprintf(opt->err, sizeof opt->err, "unknown option '%s'", name);
        return BOSCH_E_OPTION;
    }
    GUARD(opt);
    uint64_t u;
    double x;
    switch (d->kind) {
    case K_U64:
        if (!parse_u64(value, &u))
            return option_error(opt, name, value);
        if (strcmp(name, "seed") == 0)
            return bosch_set_seed(opt, u);
        if (strcmp(name, "budget") == 0)
            return bosch_set_budget(opt, u);
        return bosch_set_stage_budget(opt, d->arg, u);
    case K_U32:
        if (!parse_u64(value, &u) || u > UINT32_MAX)
            return option_error(opt, name, value);
        return d->arg == 0   ? bosch_set_group_cap(opt, (uint32_t)u)
               : d->arg == 1 ? bosch_set_batch_size(opt, (uint32_t)u)
                             : bosch_set_threads(opt, (uint32_t)u);
    case K_DOUBLE:
        if (!parse_double(value, &x))
            return option_error(opt, name, value);
        switch (d->arg) {
        case 0:
            return bosch_set_probe_fraction(opt, x);
        case 1:
            return bosch_set_time_limit(opt, x);
        case 2:
            return bosch_set_alpha(opt, x);
        case 3:
            return bosch_set_ratio_spread(opt, x);
        default:
            return bosch_set_polish_fraction(opt, x);
        }
    case K_VARIANT:
        for (int v = 0; v <= BOSCH_VARIANT_LAYER_LEVEL; v++)
            if (strcmp(value, bosch_variant_name(v)) == 0)
                return bosch_set_variant(opt, v);
        return option_error(opt, name, value);
    case K_PATH:
        return bosch_set_journal(opt, *value ? value : NULL, BOSCH_JOURNAL_AUTO);
    case K_BOOL:
        if (strcmp(value, "0") != 0 && strcmp(value, "1") != 0)
            return option_error(opt, name, value);
        return bosch_set_journal_sync(opt, value[0] == '1');
    case K_STRATEGY: {
        bosch_strategy *s = bosch_strategy_builtin(value);
        if (!s)
            return option_error(opt, name, value);
        int rc = bosch_set_strategy(opt, d->arg, s);
        bosch_strategy_free(s);
        return rc;
    }
    }
    return BOSCH_E_OPTION;
}

int bosch_get_option(const bosch_optimizer *opt, const char *name, char *buf, size_t len)
{
    if (!opt || !name || (!buf && len))
        return BOSCH_E_INVALID;
    const struct option_def *d = find_def(name);
    if (!d) {
        /* The error text is the handle's mutable state, even on a const handle. */
        snprintf(((bosch_optimizer *)opt)->err, sizeof opt->err, "unknown option '%s'", name);
        return BOSCH_E_OPTION;
    }
    const struct options *o = &opt->o;
    char tmp[128];
    switch (d->kind) {
    case K_U64:
        snprintf(tmp, sizeof tmp, "%llu",
                 (unsigned long long)(strcmp(name, "seed") == 0     ? o->seed
                                      : strcmp(name, "budget") == 0 ? o->budget
                                      : d->arg == BOSCH_STAGE_PROBE ? o->probe_budget
                                                                    : o->group_budget));
        break;
    case K_U32:
        snprintf(tmp, sizeof tmp, "%u",
                 d->arg == 0 ? o->group_cap : d->arg == 1 ? o->batch : o->threads);
        break;
    case K_DOUBLE: {
        double v = d->arg == 0 ? o->probe_fraction
                   : d->arg == 1 ? o->time_limit
                   : d->arg == 2 ? o->alpha
                   : d->arg == 3 ? o->spread
                                 : o->polish_fraction;
        snprintf(tmp, sizeof tmp, "%.17g", v);
        break;
    }
    case K_VARIANT:
        snprintf(tmp, sizeof tmp, "%s", bosch_variant_name(o->variant));
        break;
    case K_PATH:
        /* Paths can exceed tmp: copy straight from the option. */
        {
            const char *path = o->journal_path ? o->journal_path : "";
            size_t need = strlen(path);
            if (len) {
                size_t c = need < len - 1 ? need : len - 1;
                memcpy(buf, path, c);
                buf[c] = '\0';
            }
            return (int)need;
        }
    case K_BOOL:
        snprintf(tmp, sizeof tmp, "%d", o->journal_sync);
        break;
    case K_STRATEGY: {
        int st = d->arg == -1 ? BOSCH_STAGE_PROBE : d->arg;
        snprintf(tmp, sizeof tmp, "%s", bosch_strategy_name(o->strategy[st]));
        break;
    }
    }
    size_t need = strlen(tmp);
    if (len) {
        size_t c = need < len - 1 ? need : len - 1;
        memcpy(buf, tmp, c);
        buf[c] = '\0';
    }
    return (int)need;
}
