/* Options from one table: name, type, field, default, bounds and a one-line
 * doc per option drive the string setter and getter, the typed setters and
 * getters, and the enumeration for bindings and --help. */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/strategy_impl.h"
#include "session/session.h"

#define STR_(x) #x
#define STR(x) STR_(x) /* a default given as a number (session.h) */

enum kind { K_UINT, K_DOUBLE, K_BOOL, K_CHOICE, K_STRATEGY, K_PATH };

/* XX(id, name, kind, field, default, min, max, what, doc). `field` is the
 * member of struct options (uint64_t for UINT, double for DOUBLE, int for
 * BOOL and CHOICE); `what` names the value in error messages. A strategy
 * option sets `min` as the stage (-1 = both). */
#define OPTION_TABLE(XX)                                                                          \
    XX(SEED, "seed", K_UINT, seed, "0", 0, 18446744073709551615.0, "seed",                          \
       "seed of every random choice; same seed and inputs, same result")                         \
    XX(BUDGET, "budget", K_UINT, budget, "1000", 1, 18446744073709551615.0,                         \
       "budget (must be >= 1)", "total evaluations, anchors included")                           \
    XX(PROBE_BUDGET, "probe_budget", K_UINT, probe_budget, "0", 0, 18446744073709551615.0,          \
       "probe_budget", "evaluations of stage 1 (0 = probe_fraction of what is left)")            \
    XX(GROUP_BUDGET, "group_budget", K_UINT, group_budget, "0", 0, 18446744073709551615.0,          \
       "group_budget", "evaluations of stage 3 (0 = all that is left)")                          \
    XX(PROBE_FRACTION, "probe_fraction", K_DOUBLE, probe_fraction, "0.2", 0, 1,                    \
       "probe_fraction (0..1)", "share of the budget for stage 1 when probe_budget is 0")        \
    XX(TIME_LIMIT, "time_limit", K_DOUBLE, time_limit, "0", 0, INFINITY,                           \
       "time_limit (finite seconds >= 0)", "wall-clock limit in seconds (0 = none)")             \
    XX(ALPHA, "alpha", K_DOUBLE, alpha, "1", 0, INFINITY, "alpha (finite, >= 0)",                  \
       "penalty weight of the ratio deviation in the objective")                                 \
    XX(RATIO_SPREAD, "ratio_spread", K_DOUBLE, spread, "0.5", 0, 1, "ratio_spread (0..1)",         \
       "largest move of layer ratios away from the target in stage 2")                           \
    XX(POLISH_FRACTION, "polish_fraction", K_DOUBLE, polish_fraction, "0.8", 0, 1,                 \
       "polish_fraction (0..1)", "share of stage 3 searching all free units at once")            \
    XX(GROUP_CAP, "group_cap", K_UINT, group_cap, "48", 1, 4294967295.0, "group_cap (>= 1)",       \
       "most free units searched jointly in stage 3")                                            \
    XX(BATCH_SIZE, "batch_size", K_UINT, batch, "4", 1, 4096, "batch_size (1..4096)",              \
       "most candidates proposed at once (part of the algorithm)")                               \
    XX(THREADS, "threads", K_UINT, threads, "1", 1, 256, "threads (1..256)",                       \
       "concurrent evaluations in callback mode (results do not depend on it)")                  \
    XX(JOURNAL, "journal", K_PATH, journal_path, "", 0, 0, "journal path",                         \
       "journal every evaluation to this file and resume from it (empty = none)")                \
    XX(JOURNAL_SYNC, "journal_sync", K_BOOL, journal_sync, "0", 0, 1, "journal_sync",              \
       "fdatasync after every journal write (0|1)")                                              \
    XX(RAW_SCORES, "raw_scores", K_BOOL, raw_scores, "0", 0, 1, "raw_scores",                      \
       "when S_full <= S_allSWA, search raw scores (normalized = NaN) instead of failing (0|1)")  \
    XX(ANCHOR_TOLERANCE, "anchor_tolerance", K_DOUBLE, anchor_tolerance, "0", 0, INFINITY,        \
       "anchor_tolerance (finite, >= 0)",                                                        \
       "anchors ordered only when S_full - S_allSWA exceeds this (the evaluator's noise)")      \
    XX(CONFIRM, "confirm", K_UINT, confirm, "0", 0, 1048576, "confirm (0..1048576)",               \
       "fresh draws of the best masks after the search; the result reports their mean")         \
    XX(CONFIRM_TOP, "confirm_top", K_UINT, confirm_top, "1", 1, 4096, "confirm_top (1..4096)",     \
       "how many of the best masks share the confirmation draws")                                \
    XX(SCREEN_FIDELITY, "screen_fidelity", K_DOUBLE, screen_fidelity, "1", 0.001, 1,               \
       "screen_fidelity (0.001..1)",                                                             \
       "stage 3 scores new candidates at this fidelity first (1 = off; needs a request evaluator)") \
    XX(SWEEP_PAIRS, "sweep_pairs", K_UINT, sweep_pairs, STR(SESSION_SWEEP_PAIRS), 0,             \
       1048576, "sweep_pairs (0..1048576)",                                                      \
       "flip sweep at the end of stage 3: most swaps it scores (0 = no sweep)")                  \
    XX(SWEEP_GAP, "sweep_gap", K_DOUBLE, sweep_gap, STR(SESSION_SWEEP_GAP), 0, 1,                  \
       "sweep_gap (0..1)",                                                                       \
       "the flip sweep runs when the recent candidates' median gap to the best is below this")  \
    XX(VARIANT, "variant", K_CHOICE, variant, "full", 0, BOSCH_VARIANT_LAYER_LEVEL, "variant",     \
       "which parts of the method run: full|probe-only|group-only|layer-level")                  \
    XX(STRATEGY, "strategy", K_STRATEGY, strategy, "auto", -1, 0, "strategy",                      \
       "built-in search strategy of stages 1 and 3")                                             \
    XX(PROBE_STRATEGY, "probe_strategy", K_STRATEGY, strategy, "auto", BOSCH_STAGE_PROBE, 0,       \
       "probe_strategy", "built-in search strategy of stage 1")                                  \
    XX(GROUP_STRATEGY, "group_strategy", K_STRATEGY, strategy, "auto", BOSCH_STAGE_GROUP, 0,       \
       "group_strategy", "built-in search strategy of stage 3")

enum option_id {
#define OPTION_ID(id, ...) OPT_##id,
    OPTION_TABLE(OPTION_ID)
#undef OPTION_ID
    OPT_COUNT
};

struct option_def {
    const char *name;
    enum kind kind;
    size_t offset;
    const char *def;
    double min, max;
    const char *what, *doc;
};

static const struct option_def defs[OPT_COUNT] = {
#define OPTION_DEF(id, name, kind, field, def, min, max, what, doc) \
    {name, kind, offsetof(struct options, field), def, min, max, what, doc},
    OPTION_TABLE(OPTION_DEF)
#undef OPTION_DEF
};

static const char *const variant_choices = "full|probe-only|group-only|layer-level";

static const struct option_def *find_def(const char *name)
{
    for (size_t i = 0; i < OPT_COUNT; i++)
        if (strcmp(defs[i].name, name) == 0)
            return &defs[i];
    return NULL;
}

#define FIELD(o, d, type) ((type *)((char *)(o) + (d)->offset))
#define CFIELD(o, d, type) ((const type *)((const char *)(o) + (d)->offset))

/* ---- checks shared by every setter ------------------------------------------------ */

static int not_started(bosch_optimizer *opt)
{
    if (!opt)
        return BOSCH_E_INVALID;
    if (opt->started || opt->status != 0)
        return session_refuse(opt, BOSCH_E_STATE,
                              "options cannot change once the search has started");
    return BOSCH_OK;
}

static int bad_value(bosch_optimizer *opt, const char *what)
{
    return session_refuse(opt, BOSCH_E_INVALID, "invalid value for %s", what);
}

static int set_uint(bosch_optimizer *opt, enum option_id id, uint64_t v)
{
    int rc = not_started(opt);
    if (rc < 0)
        return rc;
    const struct option_def *d = &defs[id];
    if ((double)v < d->min || (double)v > d->max)
        return bad_value(opt, d->what);
    *FIELD(&opt->o, d, uint64_t) = v;
    return BOSCH_OK;
}

static int set_double(bosch_optimizer *opt, enum option_id id, double v)
{
    int rc = not_started(opt);
    if (rc < 0)
        return rc;
    const struct option_def *d = &defs[id];
    if (!(v >= d->min && v <= d->max) || isinf(v))
        return bad_value(opt, d->what);
    *FIELD(&opt->o, d, double) = v;
    return BOSCH_OK;
}

static int set_bool(bosch_optimizer *opt, enum option_id id, int v)
{
    int rc = not_started(opt);
    if (rc < 0)
        return rc;
    *FIELD(&opt->o, &defs[id], int) = v;
    return BOSCH_OK;
}

/* ---- typed setters ------------------------------------------------------------------- */

int bosch_set_seed(bosch_optimizer *opt, uint64_t seed)
{
    return set_uint(opt, OPT_SEED, seed);
}

int bosch_set_budget(bosch_optimizer *opt, uint64_t evaluations)
{
    return set_uint(opt, OPT_BUDGET, evaluations);
}

int bosch_set_stage_budget(bosch_optimizer *opt, int stage, uint64_t evaluations)
{
    int rc = not_started(opt);
    if (rc < 0)
        return rc;
    if (stage == BOSCH_STAGE_PROBE)
        return set_uint(opt, OPT_PROBE_BUDGET, evaluations);
    if (stage == BOSCH_STAGE_GROUP)
        return set_uint(opt, OPT_GROUP_BUDGET, evaluations);
    return bad_value(opt, "stage (BOSCH_STAGE_PROBE or BOSCH_STAGE_GROUP)");
}

int bosch_set_probe_fraction(bosch_optimizer *opt, double fraction)
{
    return set_double(opt, OPT_PROBE_FRACTION, fraction);
}

int bosch_set_polish_fraction(bosch_optimizer *opt, double fraction)
{
    return set_double(opt, OPT_POLISH_FRACTION, fraction);
}

int bosch_set_time_limit(bosch_optimizer *opt, double seconds)
{
    return set_double(opt, OPT_TIME_LIMIT, seconds);
}

int bosch_set_alpha(bosch_optimizer *opt, double alpha)
{
    return set_double(opt, OPT_ALPHA, alpha);
}

int bosch_set_group_cap(bosch_optimizer *opt, uint32_t units)
{
    return set_uint(opt, OPT_GROUP_CAP, units);
}

int bosch_set_confirm(bosch_optimizer *opt, uint32_t draws)
{
    return set_uint(opt, OPT_CONFIRM, draws);
}

int bosch_set_confirm_top(bosch_optimizer *opt, uint32_t masks)
{
    return set_uint(opt, OPT_CONFIRM_TOP, masks);
}

int bosch_set_screen_fidelity(bosch_optimizer *opt, double fidelity)
{
    return set_double(opt, OPT_SCREEN_FIDELITY, fidelity);
}

int bosch_set_sweep_pairs(bosch_optimizer *opt, uint32_t pairs)
{
    return set_uint(opt, OPT_SWEEP_PAIRS, pairs);
}

int bosch_set_sweep_gap(bosch_optimizer *opt, double gap)
{
    return set_double(opt, OPT_SWEEP_GAP, gap);
}

int bosch_set_batch_size(bosch_optimizer *opt, uint32_t candidates)
{
    return set_uint(opt, OPT_BATCH_SIZE, candidates);
}

int bosch_set_ratio_spread(bosch_optimizer *opt, double spread)
{
    return set_double(opt, OPT_RATIO_SPREAD, spread);
}

int bosch_set_threads(bosch_optimizer *opt, uint32_t threads)
{
    return set_uint(opt, OPT_THREADS, threads);
}

int bosch_set_variant(bosch_optimizer *opt, int variant)
{
    int rc = not_started(opt);
    if (rc < 0)
        return rc;
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
    int rc = not_started(opt);
    if (rc < 0)
        return rc;
    if (stage != -1 && stage != BOSCH_STAGE_PROBE && stage != BOSCH_STAGE_GROUP)
        return bad_value(opt, "stage (BOSCH_STAGE_PROBE, BOSCH_STAGE_GROUP or -1)");
    if (stage == -1 || stage == BOSCH_STAGE_PROBE)
        rc = replace_strategy(opt, BOSCH_STAGE_PROBE, s);
    if (rc == BOSCH_OK && (stage == -1 || stage == BOSCH_STAGE_GROUP))
        rc = replace_strategy(opt, BOSCH_STAGE_GROUP, s);
    return rc;
}

int bosch_set_journal(bosch_optimizer *opt, const char *path, int mode)
{
    int rc = not_started(opt);
    if (rc < 0)
        return rc;
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
    return set_bool(opt, OPT_JOURNAL_SYNC, sync != 0);
}

int bosch_set_raw_scores(bosch_optimizer *opt, int raw)
{
    return set_bool(opt, OPT_RAW_SCORES, raw != 0);
}

int bosch_set_anchor_tolerance(bosch_optimizer *opt, double tolerance)
{
    return set_double(opt, OPT_ANCHOR_TOLERANCE, tolerance);
}

int bosch_set_anchors(bosch_optimizer *opt, double s_full, double s_allswa)
{
    int rc = not_started(opt);
    if (rc < 0)
        return rc;
    if (!isfinite(s_full) || !isfinite(s_allswa))
        return session_refuse(opt, BOSCH_E_BAD_SCORE, "anchor scores must be finite");
    if (!(s_full - s_allswa > opt->o.anchor_tolerance) && !opt->o.raw_scores)
        return session_refuse(opt, BOSCH_E_ANCHORS,
                              "anchor scores cannot normalise: S_full = %g is not above "
                              "S_allSWA = %g by more than anchor_tolerance = %g",
                              s_full, s_allswa, opt->o.anchor_tolerance);
    opt->o.anchors_given = 1;
    opt->o.s_full = s_full;
    opt->o.s_swa = s_allswa;
    return BOSCH_OK;
}

int bosch_set_priors(bosch_optimizer *opt, const double *importance, size_t n_units)
{
    int rc = not_started(opt);
    if (rc < 0)
        return rc;
    if (!importance) {
        free(opt->o.priors);
        opt->o.priors = NULL;
        return BOSCH_OK;
    }
    size_t units = opt->prob->units;
    if (n_units != units)
        return session_refuse(opt, BOSCH_E_INVALID,
                              "priors: %zu values given, the problem has %zu units", n_units,
                              units);
    for (size_t u = 0; u < units; u++)
        if (!isfinite(importance[u]))
            return session_refuse(opt, BOSCH_E_BAD_SCORE, "prior of unit %zu is not finite",
                                  u);
    double *copy = malloc(units * sizeof *copy);
    if (!copy)
        return session_refuse(opt, BOSCH_E_NOMEM, "out of memory");
    memcpy(copy, importance, units * sizeof *copy);
    free(opt->o.priors);
    opt->o.priors = copy;
    return BOSCH_OK;
}

static int identity_key_ok(const char *key)
{
    size_t n = strlen(key);
    if (n == 0 || n > 64)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = key[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-'))
            return 0;
    }
    return 1;
}

int bosch_set_run_identity(bosch_optimizer *opt, const char *key, const char *value)
{
    int rc = not_started(opt);
    if (rc < 0)
        return rc;
    if (!key || !identity_key_ok(key))
        return session_refuse(opt, BOSCH_E_INVALID,
                              "run identity: the key must be 1..64 characters of "
                              "[A-Za-z0-9_.-]");
    if (value && strlen(value) > 4096)
        return session_refuse(opt, BOSCH_E_INVALID,
                              "run identity '%s': the value is longer than 4096 bytes", key);
    struct options *o = &opt->o;
    size_t i = 0;
    while (i < o->n_identity && strcmp(o->identity[2 * i], key) != 0)
        i++;
    if (!value) { /* remove */
        if (i < o->n_identity) {
            free(o->identity[2 * i]);
            free(o->identity[2 * i + 1]);
            memmove(o->identity + 2 * i, o->identity + 2 * i + 2,
                    (o->n_identity - i - 1) * 2 * sizeof *o->identity);
            o->n_identity--;
        }
        return BOSCH_OK;
    }
    char *v = strdup(value);
    if (!v)
        return session_refuse(opt, BOSCH_E_NOMEM, "out of memory");
    if (i < o->n_identity) {
        free(o->identity[2 * i + 1]);
        o->identity[2 * i + 1] = v;
        return BOSCH_OK;
    }
    char *k = strdup(key);
    char **grown = k ? realloc(o->identity, (o->n_identity + 1) * 2 * sizeof *grown) : NULL;
    if (!grown) {
        free(k);
        free(v);
        return session_refuse(opt, BOSCH_E_NOMEM, "out of memory");
    }
    o->identity = grown;
    o->identity[2 * o->n_identity] = k;
    o->identity[2 * o->n_identity + 1] = v;
    o->n_identity++;
    return BOSCH_OK;
}

const char *bosch_get_run_identity(const bosch_optimizer *opt, const char *key)
{
    if (!opt || !key)
        return NULL;
    for (size_t i = 0; i < opt->o.n_identity; i++)
        if (!strcmp(opt->o.identity[2 * i], key))
            return opt->o.identity[2 * i + 1];
    return NULL;
}

size_t bosch_get_priors(const bosch_optimizer *opt, double *out, size_t n)
{
    if (!opt || !opt->o.priors)
        return 0;
    size_t units = opt->prob->units;
    if (out)
        memcpy(out, opt->o.priors, (n < units ? n : units) * sizeof *out);
    return units;
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
    int rc = not_started(opt);
    if (rc < 0)
        return rc;
    enum option_id id = (enum option_id)(d - defs);
    uint64_t u;
    double x;
    switch (d->kind) {
    case K_UINT:
        if (!parse_u64(value, &u) || (parse_limit_is_u32(d) && u > UINT32_MAX))
            return option_error(opt, name, value);
        return set_uint(opt, id, u);
    case K_DOUBLE:
        if (!parse_double(value, &x))
            return option_error(opt, name, value);
        return set_double(opt, id, x);
    case K_BOOL:
        if (strcmp(value, "0") != 0 && strcmp(value, "1") != 0)
            return option_error(opt, name, value);
        return set_bool(opt, id, value[0] == '1');
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
        return value > 1 ? bad_value(opt, d->what)
                         : set_bool(opt, (enum option_id)(d - defs), (int)value);
    if (d->kind != K_UINT)
        return session_refuse(opt, BOSCH_E_OPTION, "option '%s' is not an unsigned integer", name);
    return set_uint(opt, (enum option_id)(d - defs), value);
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
    return set_double(opt, (enum option_id)(d - defs), value);
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
    return i < OPT_COUNT ? defs[i].name : NULL;
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
        const struct option_def *d = &defs[i];
        if (d->kind == K_UINT)
            *FIELD(o, d, uint64_t) = strtoull(d->def, NULL, 10);
        else if (d->kind == K_DOUBLE)
            *FIELD(o, d, double) = strtod(d->def, NULL);
        else if (d->kind == K_BOOL)
            *FIELD(o, d, int) = d->def[0] == '1';
    }
    o->variant = BOSCH_VARIANT_FULL;
    o->strategy[BOSCH_STAGE_PROBE] = bosch_strategy_builtin(defs[OPT_PROBE_STRATEGY].def);
    o->strategy[BOSCH_STAGE_GROUP] = bosch_strategy_builtin(defs[OPT_GROUP_STRATEGY].def);
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
    c.prior = o->priors;
    c.s_full = o->s_full;
    c.s_swa = o->s_swa;
    return c;
}
