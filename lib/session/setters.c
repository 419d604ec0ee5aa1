/* The typed setters of the optimizer's options (bosch_set_budget, ...),
 * through the option table's checks (option_table.h), and what a host
 * attaches to a run beyond the table: strategies, the journal, anchors,
 * priors and the run identity. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search/strategy_impl.h"
#include "session/option_table.h"

/* ---- typed setters ------------------------------------------------------------------- */

int bosch_set_seed(bosch_optimizer *opt, uint64_t seed)
{
    return session_set_uint(opt, OPT_SEED, seed);
}

int bosch_set_budget(bosch_optimizer *opt, uint64_t evaluations)
{
    return session_set_uint(opt, OPT_BUDGET, evaluations);
}

int bosch_set_stage_budget(bosch_optimizer *opt, int stage, uint64_t evaluations)
{
    int rc = session_not_started(opt);
    if (rc < 0)
        return rc;
    if (stage == BOSCH_STAGE_PROBE)
        return session_set_uint(opt, OPT_PROBE_BUDGET, evaluations);
    if (stage == BOSCH_STAGE_GROUP)
        return session_set_uint(opt, OPT_GROUP_BUDGET, evaluations);
    return session_bad_value(opt, "stage (BOSCH_STAGE_PROBE or BOSCH_STAGE_GROUP)");
}

int bosch_set_probe_fraction(bosch_optimizer *opt, double fraction)
{
    return session_set_double(opt, OPT_PROBE_FRACTION, fraction);
}

int bosch_set_polish_fraction(bosch_optimizer *opt, double fraction)
{
    return session_set_double(opt, OPT_POLISH_FRACTION, fraction);
}

int bosch_set_time_limit(bosch_optimizer *opt, double seconds)
{
    return session_set_double(opt, OPT_TIME_LIMIT, seconds);
}

int bosch_set_alpha(bosch_optimizer *opt, double alpha)
{
    return session_set_double(opt, OPT_ALPHA, alpha);
}

int bosch_set_group_cap(bosch_optimizer *opt, uint32_t units)
{
    return session_set_uint(opt, OPT_GROUP_CAP, units);
}

int bosch_set_confirm(bosch_optimizer *opt, uint32_t draws)
{
    return session_set_uint(opt, OPT_CONFIRM, draws);
}

int bosch_set_confirm_top(bosch_optimizer *opt, uint32_t masks)
{
    return session_set_uint(opt, OPT_CONFIRM_TOP, masks);
}

int bosch_set_screen_fidelity(bosch_optimizer *opt, double fidelity)
{
    return session_set_double(opt, OPT_SCREEN_FIDELITY, fidelity);
}

int bosch_set_sweep_pairs(bosch_optimizer *opt, uint32_t pairs)
{
    return session_set_uint(opt, OPT_SWEEP_PAIRS, pairs);
}

int bosch_set_sweep_gap(bosch_optimizer *opt, double gap)
{
    return session_set_double(opt, OPT_SWEEP_GAP, gap);
}

int bosch_set_stop_tolerance(bosch_optimizer *opt, double tolerance)
{
    return session_set_double(opt, OPT_STOP_TOLERANCE, tolerance);
}

int bosch_set_batch_size(bosch_optimizer *opt, uint32_t candidates)
{
    return session_set_uint(opt, OPT_BATCH_SIZE, candidates);
}

int bosch_set_ratio_spread(bosch_optimizer *opt, double spread)
{
    return session_set_double(opt, OPT_RATIO_SPREAD, spread);
}

int bosch_set_threads(bosch_optimizer *opt, uint32_t threads)
{
    return session_set_uint(opt, OPT_THREADS, threads);
}

int bosch_set_variant(bosch_optimizer *opt, int variant)
{
    int rc = session_not_started(opt);
    if (rc < 0)
        return rc;
    if (!bosch_variant_name(variant))
        return session_bad_value(opt, "variant");
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
    int rc = session_not_started(opt);
    if (rc < 0)
        return rc;
    if (stage != -1 && stage != BOSCH_STAGE_PROBE && stage != BOSCH_STAGE_GROUP)
        return session_bad_value(opt, "stage (BOSCH_STAGE_PROBE, BOSCH_STAGE_GROUP or -1)");
    if (stage == -1 || stage == BOSCH_STAGE_PROBE)
        rc = replace_strategy(opt, BOSCH_STAGE_PROBE, s);
    if (rc == BOSCH_OK && (stage == -1 || stage == BOSCH_STAGE_GROUP))
        rc = replace_strategy(opt, BOSCH_STAGE_GROUP, s);
    return rc;
}

int bosch_set_journal(bosch_optimizer *opt, const char *path, int mode)
{
    int rc = session_not_started(opt);
    if (rc < 0)
        return rc;
    if (mode != BOSCH_JOURNAL_CREATE && mode != BOSCH_JOURNAL_RESUME && mode != BOSCH_JOURNAL_AUTO)
        return session_bad_value(opt, "journal mode");
    char *copy = NULL;
    if (path) {
        if (!*path)
            return session_bad_value(opt, "journal path (empty)");
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
    return session_set_bool(opt, OPT_JOURNAL_SYNC, sync != 0);
}

int bosch_set_raw_scores(bosch_optimizer *opt, int raw)
{
    return session_set_bool(opt, OPT_RAW_SCORES, raw != 0);
}

int bosch_set_anchor_tolerance(bosch_optimizer *opt, double tolerance)
{
    return session_set_double(opt, OPT_ANCHOR_TOLERANCE, tolerance);
}

int bosch_set_anchors(bosch_optimizer *opt, double s_full, double s_allswa)
{
    int rc = session_not_started(opt);
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
    int rc = session_not_started(opt);
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
    int rc = session_not_started(opt);
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
