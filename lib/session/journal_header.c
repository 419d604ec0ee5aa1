/* The journal header: every setting a resumed run must share with the run
 * that wrote the journal (docs/journal.md). */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "session/session.h"

/* Doubles as "%.17g" strings: exact round trip, so equal settings compare equal. */
static json_object *dbl(double v)
{
    char buf[40];
    snprintf(buf, sizeof buf, "%.17g", v);
    return json_object_new_string(buf);
}

static json_object *ratios(const double *r, uint32_t n)
{
    json_object *a = json_object_new_array();
    for (uint32_t i = 0; i < n; i++)
        json_object_array_add(a, dbl(r[i]));
    return a;
}

char *session_journal_header(const bosch_optimizer *opt)
{
    const bosch_problem *p = opt->prob;
    const struct options *o = &opt->o;
    json_object *h = json_object_new_object();
    if (!h)
        return NULL;
    char *fix = malloc(p->units + 1);
    if (!fix) {
        json_object_put(h);
        return NULL;
    }
    for (size_t u = 0; u < p->units; u++)
        fix[u] = p->fix[u] == BOSCH_FIX_FULL ? 'F' : p->fix[u] == BOSCH_FIX_SWA ? 'S' : '.';
    fix[p->units] = '\0';
    json_object_object_add(h, "format", json_object_new_int(1));
    json_object_object_add(h, "library", json_object_new_string(bosch_version_string()));
    json_object_object_add(h, "layers", json_object_new_int64(p->layers));
    json_object_object_add(h, "kv_groups", json_object_new_int64(p->groups));
    json_object_object_add(h, "heads_per_group", json_object_new_int64(p->heads));
    json_object_object_add(h, "target_units", json_object_new_int64((int64_t)bosch_problem_target_units(p)));
    json_object_object_add(h, "fix", json_object_new_string(fix));
    json_object_object_add(h, "min_ratio", ratios(p->min_ratio, p->layers));
    json_object_object_add(h, "max_ratio", ratios(p->max_ratio, p->layers));
    /* Seeds and budgets as strings: uint64 does not fit JSON integers. */
    char num[32];
    snprintf(num, sizeof num, "%llu", (unsigned long long)o->seed);
    json_object_object_add(h, "seed", json_object_new_string(num));
    snprintf(num, sizeof num, "%llu", (unsigned long long)o->budget);
    json_object_object_add(h, "budget", json_object_new_string(num));
    snprintf(num, sizeof num, "%llu", (unsigned long long)o->probe_budget);
    json_object_object_add(h, "probe_budget", json_object_new_string(num));
    snprintf(num, sizeof num, "%llu", (unsigned long long)o->group_budget);
    json_object_object_add(h, "group_budget", json_object_new_string(num));
    json_object_object_add(h, "probe_fraction", dbl(o->probe_fraction));
    json_object_object_add(h, "polish_fraction", dbl(o->polish_fraction));
    json_object_object_add(h, "alpha", dbl(o->alpha));
    json_object_object_add(h, "ratio_spread", dbl(o->spread));
    json_object_object_add(h, "group_cap", json_object_new_int64(o->group_cap));
    json_object_object_add(h, "batch_size", json_object_new_int64(o->batch));
    json_object_object_add(h, "variant", json_object_new_string(bosch_variant_name(o->variant)));
    json_object_object_add(h, "probe_strategy",
                           json_object_new_string(bosch_strategy_name(o->strategy[BOSCH_STAGE_PROBE])));
    json_object_object_add(h, "group_strategy",
                           json_object_new_string(bosch_strategy_name(o->strategy[BOSCH_STAGE_GROUP])));
    if (o->raw_scores) /* only when set: older journals stay valid */
        json_object_object_add(h, "raw_scores", json_object_new_int(1));
    if (o->confirm) { /* likewise */
        json_object_object_add(h, "confirm", json_object_new_int64((int64_t)o->confirm));
        json_object_object_add(h, "confirm_top", json_object_new_int64((int64_t)o->confirm_top));
    }
    if (o->screen_fidelity < 1.0)
        json_object_object_add(h, "screen_fidelity", dbl(o->screen_fidelity));
    /* The flip sweep's settings only when changed: journals of runs with
     * the defaults keep the header they had. */
    if (o->sweep_pairs != SESSION_SWEEP_PAIRS || o->sweep_gap != SESSION_SWEEP_GAP) {
        json_object_object_add(h, "sweep_pairs", json_object_new_int64((int64_t)o->sweep_pairs));
        json_object_object_add(h, "sweep_gap", dbl(o->sweep_gap));
    }
    if (o->stop_tolerance > 0.0) /* only when set, as raw_scores */
        json_object_object_add(h, "stop_tolerance", dbl(o->stop_tolerance));
    if (o->priors) { /* only when set: a hash of the values as exact text */
        XXH64_state_t *st = XXH64_createState();
        if (st && XXH64_reset(st, 0) == XXH_OK) {
            for (size_t u = 0; u < p->units; u++) {
                int len = snprintf(num, sizeof num, "%.17g,", o->priors[u]);
                XXH64_update(st, num, (size_t)len);
            }
            snprintf(num, sizeof num, "%016llx", (unsigned long long)XXH64_digest(st));
            json_object_object_add(h, "priors", json_object_new_string(num));
        }
        XXH64_freeState(st);
    }
    /* The host's run identity, one field per key (so that a mismatch names
     * it); none for runs without one, whose headers stay as they were. */
    for (size_t i = 0; i < o->n_identity; i++) {
        char field[80];
        snprintf(field, sizeof field, "identity.%s", o->identity[2 * i]);
        json_object_object_add(h, field, json_object_new_string(o->identity[2 * i + 1]));
    }
    if (o->anchors_given) {
        json_object *a = json_object_new_array();
        json_object_array_add(a, dbl(o->s_full));
        json_object_array_add(a, dbl(o->s_swa));
        json_object_object_add(h, "anchors", a);
    } else {
        json_object_object_add(h, "anchors", NULL);
    }
    const char *text = json_object_to_json_string_ext(h, JSON_C_TO_STRING_PLAIN);
    char *out = text ? strdup(text) : NULL;
    json_object_put(h);
    free(fix);
    return out;
}
