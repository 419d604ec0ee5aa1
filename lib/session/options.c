/* Options from one table (option_table.h): name, type, field, default,
 * bounds and a one-line doc per option drive the string setter and getter,
 * the enumeration for bindings and --help, and a handle's defaults. Above
 * the typed setters (setters.c), which it calls for the options that are
 * more than a field; both write through option_table.c's checks. */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/strategy_impl.h"
#include "session/option_table.h"


static const char *const variant_choices = "full|probe-only|group-only|layer-level";

static const struct option_def *find_def(const char *name)
{
    for (size_t i = 0; i < OPT_COUNT; i++)
        if (strcmp(session_option_defs[i].name, name) == 0)
            return &session_option_defs[i];
    return NULL;
}


/* ---- by name ---------------------------------------------------------------------- */

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

static int option_error(bosch_optimizer *opt, const char *name, const char *value)
{
    return session_refuse(opt, BOSCH_E_OPTION, "cannot parse value '%s' for option '%s'", value,
                          name);
}

static int unknown_option(bosch_optimizer *opt, const char *name)
{
    return session_refuse(opt, BOSCH_E_OPTION, "unknown option '%s'", name);
}

/* 32-bit options refuse wider numbers as unparsable (their C type). */
static int parse_limit_is_u32(const struct option_def *d)
{
    return d->max <= 4294967295.0;
}

static int set_strategy_by_name(bosch_optimizer *opt, const struct option_def *d, const char *v)
{
    bosch_strategy *s = bosch_strategy_builtin(v);
    if (!s)
        return option_error(opt, d->name, v);
    int rc = bosch_set_strategy(opt, (int)d->min, s);
    bosch_strategy_free(s);
    return rc;
}

int bosch_set_option(bosch_optimizer *opt, const char *name, const char *value)
{
    if (!opt || !name || !value)
        return BOSCH_E_INVALID;
    const struct option_def *d = find_def(name);
    if (!d)
        return unknown_option(opt, name);
    int rc = session_not_started(opt);
    if (rc < 0)
        return rc;
    enum option_id id = (enum option_id)(d - session_option_defs);
    uint64_t u;
    double x;
    switch (d->kind) {
    case K_UINT:
        if (!parse_u64(value, &u) || (parse_limit_is_u32(d) && u > UINT32_MAX))
            return option_error(opt, name, value);
        return session_set_uint(opt, id, u);
    case K_DOUBLE:
        if (!parse_double(value, &x))
            return option_error(opt, name, value);
        return session_set_double(opt, id, x);
    case K_BOOL:
        if (strcmp(value, "0") != 0 && strcmp(value, "1") != 0)
            return option_error(opt, name, value);
        return session_set_bool(opt, id, value[0] == '1');
    case K_CHOICE:
        for (int v = 0; v <= BOSCH_VARIANT_LAYER_LEVEL; v++)
            if (strcmp(value, bosch_variant_name(v)) == 0)
                return bosch_set_variant(opt, v);
        return option_error(opt, name, value);
    case K_PATH:
        return bosch_set_journal(opt, *value ? value : NULL, BOSCH_JOURNAL_AUTO);
    case K_STRATEGY:
        return set_strategy_by_name(opt, d, value);
    }
    return BOSCH_E_OPTION;
}

int bosch_set_option_uint(bosch_optimizer *opt, const char *name, uint64_t value)
{
    if (!opt || !name)
        return BOSCH_E_INVALID;
    const struct option_def *d = find_def(name);
    if (!d)
        return unknown_option(opt, name);
    if (d->kind == K_BOOL)
        return value > 1 ? session_bad_value(opt, d->what)
                         : session_set_bool(opt, (enum option_id)(d - session_option_defs),
                                            (int)value);
    if (d->kind != K_UINT)
        return session_refuse(opt, BOSCH_E_OPTION, "option '%s' is not an unsigned integer", name);
    return session_set_uint(opt, (enum option_id)(d - session_option_defs), value);
}

int bosch_set_option_double(bosch_optimizer *opt, const char *name, double value)
{
    if (!opt || !name)
        return BOSCH_E_INVALID;
    const struct option_def *d = find_def(name);
    if (!d)
        return unknown_option(opt, name);
    if (d->kind != K_DOUBLE)
        return session_refuse(opt, BOSCH_E_OPTION, "option '%s' is not a number", name);
    return session_set_double(opt, (enum option_id)(d - session_option_defs), value);
}

/* ---- getters ------------------------------------------------------------------------- */

static int copy_text(const char *text, char *buf, size_t len)
{
    size_t need = strlen(text);
    if (len) {
        size_t c = need < len - 1 ? need : len - 1;
        memcpy(buf, text, c);
        buf[c] = '\0';
    }
    return (int)need;
}

int bosch_get_option(const bosch_optimizer *opt, const char *name, char *buf, size_t len)
{
    if (!opt || !name || (!buf && len))
        return BOSCH_E_INVALID;
    const struct option_def *d = find_def(name);
    if (!d)
        return BOSCH_E_OPTION; /* const handle: no message */
    const struct options *o = &opt->o;
    char tmp[128];
    switch (d->kind) {
    case K_UINT:
        snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)*CFIELD(o, d, uint64_t));
        break;
    case K_DOUBLE:
        snprintf(tmp, sizeof tmp, "%.17g", *CFIELD(o, d, double));
        break;
    case K_BOOL:
        snprintf(tmp, sizeof tmp, "%d", *CFIELD(o, d, int));
        break;
    case K_CHOICE:
        snprintf(tmp, sizeof tmp, "%s", bosch_variant_name(o->variant));
        break;
    case K_PATH: /* paths can exceed tmp */
        return copy_text(o->journal_path ? o->journal_path : "", buf, len);
    case K_STRATEGY: {
        int st = d->min < 0 ? BOSCH_STAGE_PROBE : (int)d->min;
        snprintf(tmp, sizeof tmp, "%s", bosch_strategy_name(o->strategy[st]));
        break;
    }
    }
    return copy_text(tmp, buf, len);
}

int bosch_get_option_uint(const bosch_optimizer *opt, const char *name, uint64_t *value)
{
    if (!opt || !name || !value)
        return BOSCH_E_INVALID;
    const struct option_def *d = find_def(name);
    if (!d || (d->kind != K_UINT && d->kind != K_BOOL))
        return BOSCH_E_OPTION;
    *value = d->kind == K_UINT ? *CFIELD(&opt->o, d, uint64_t) : (uint64_t)*CFIELD(&opt->o, d, int);
    return BOSCH_OK;
}

int bosch_get_option_double(const bosch_optimizer *opt, const char *name, double *value)
{
    if (!opt || !name || !value)
        return BOSCH_E_INVALID;
    const struct option_def *d = find_def(name);
    if (!d || d->kind != K_DOUBLE)
        return BOSCH_E_OPTION;
    *value = *CFIELD(&opt->o, d, double);
    return BOSCH_OK;
}

/* ---- enumeration ----------------------------------------------------------------------- */

size_t bosch_option_count(void)
{
    return OPT_COUNT;
}

const char *bosch_option_name(size_t i)
{
    return i < OPT_COUNT ? session_option_defs[i].name : NULL;
}

int bosch_option_type(const char *name)
{
    static const int types[] = {BOSCH_OPTION_UINT,   BOSCH_OPTION_DOUBLE,   BOSCH_OPTION_BOOL,
                                BOSCH_OPTION_CHOICE, BOSCH_OPTION_STRATEGY, BOSCH_OPTION_PATH};
    const struct option_def *d = name ? find_def(name) : NULL;
    return d ? types[d->kind] : BOSCH_E_OPTION;
}

const char *bosch_option_doc(const char *name)
{
    const struct option_def *d = name ? find_def(name) : NULL;
    return d ? d->doc : NULL;
}

const char *bosch_option_default(const char *name)
{
    const struct option_def *d = name ? find_def(name) : NULL;
    return d ? d->def : NULL;
}

int bosch_option_range(const char *name, double *min, double *max)
{
    const struct option_def *d = name ? find_def(name) : NULL;
    if (!d)
        return BOSCH_E_OPTION;
    if (d->kind != K_UINT && d->kind != K_DOUBLE && d->kind != K_BOOL)
        return BOSCH_E_INVALID;
    if (min)
        *min = d->min;
    if (max)
        *max = d->max;
    return BOSCH_OK;
}

const char *bosch_option_choices(const char *name)
{
    const struct option_def *d = name ? find_def(name) : NULL;
    if (!d)
        return NULL;
    if (d->kind == K_CHOICE)
        return variant_choices;
    if (d->kind == K_BOOL)
        return "0|1";
    return NULL;
}

/* ---- the handle's defaults and the method's configuration ------------------------------ */

/* Every option at its table default. */
int session_options_init(struct options *o)
{
    memset(o, 0, sizeof *o);
    for (size_t i = 0; i < OPT_COUNT; i++) {
        const struct option_def *d = &session_option_defs[i];
        if (d->kind == K_UINT)
            *FIELD(o, d, uint64_t) = strtoull(d->def, NULL, 10);
        else if (d->kind == K_DOUBLE)
            *FIELD(o, d, double) = strtod(d->def, NULL);
        else if (d->kind == K_BOOL)
            *FIELD(o, d, int) = d->def[0] == '1';
    }
    o->variant = BOSCH_VARIANT_FULL;
    const struct option_def *d = session_option_defs;
    o->strategy[BOSCH_STAGE_PROBE] = bosch_strategy_builtin(d[OPT_PROBE_STRATEGY].def);
    o->strategy[BOSCH_STAGE_GROUP] = bosch_strategy_builtin(d[OPT_GROUP_STRATEGY].def);
    if (!o->strategy[BOSCH_STAGE_PROBE] || !o->strategy[BOSCH_STAGE_GROUP])
        return BOSCH_E_NOMEM;
    return BOSCH_OK;
}

void session_options_free(struct options *o)
{
    for (int s = 0; s < BOSCH_STAGE_COUNT; s++)
        bosch_strategy_free(o->strategy[s]);
    free(o->journal_path);
    free(o->priors);
    for (size_t i = 0; i < 2 * o->n_identity; i++)
        free(o->identity[i]);
    free(o->identity);
}

struct lns_config session_lns_config(const struct options *o)
{
    struct lns_config c;
    memset(&c, 0, sizeof c);
    c.seed = o->seed;
    c.budget = o->budget;
    c.probe_budget = o->probe_budget;
    c.group_budget = o->group_budget;
    c.probe_fraction = o->probe_fraction;
    c.polish_fraction = o->polish_fraction;
    c.alpha = o->alpha;
    c.spread = o->spread;
    c.group_cap = (uint32_t)o->group_cap;
    c.batch = (uint32_t)o->batch;
    c.variant = o->variant;
    for (int s = 0; s < BOSCH_STAGE_COUNT; s++)
        c.strategy[s] = o->strategy[s];
    c.anchors_given = o->anchors_given;
    c.raw_scores = o->raw_scores;
    c.anchor_tolerance = o->anchor_tolerance;
    c.confirm = (uint32_t)o->confirm;
    c.confirm_top = (uint32_t)o->confirm_top;
    c.screen_fidelity = o->screen_fidelity;
    c.sweep_pairs = (uint32_t)o->sweep_pairs;
    c.sweep_gap = o->sweep_gap;
    c.stop_tolerance = o->stop_tolerance;
    c.prior = o->priors;
    c.s_full = o->s_full;
    c.s_swa = o->s_swa;
    return c;
}
