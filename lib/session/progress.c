/* Progress events: a view of the session and its method during the call. */
#include <math.h>
#include <string.h>

#include "core/bitset.h"
#include "session/session.h"

struct bosch_progress {
    const bosch_optimizer *opt;
};

void session_emit_progress(bosch_optimizer *opt)
{
    if (!opt->progress)
        return;
    struct bosch_progress p = {opt};
    opt->progress(&p, opt->progress_user);
}

int bosch_set_progress(bosch_optimizer *opt, bosch_progress_fn fn, void *user)
{
    if (!opt)
        return BOSCH_E_INVALID;
    opt->progress = fn;
    opt->progress_user = user;
    return BOSCH_OK;
}

int bosch_progress_stage(const bosch_progress *p)
{
    if (!p)
        return BOSCH_E_INVALID;
    return lns_stage(p->opt->method);
}

uint64_t bosch_progress_evaluations(const bosch_progress *p)
{
    return p ? lns_store(p->opt->method)->n : 0;
}

uint64_t bosch_progress_budget(const bosch_progress *p)
{
    return p ? p->opt->o.budget : 0;
}

double bosch_progress_best_score(const bosch_progress *p)
{
    if (!p || lns_best(p->opt->method) < 0)
        return NAN;
    const lns *m = p->opt->method;
    if (lns_raw(m))
        return NAN;
    return lns_normalized(m, lns_store(m)->scores[lns_best(m)]);
}

uint32_t bosch_progress_layers(const bosch_progress *p)
{
    return p ? p->opt->prob->layers : 0;
}

int bosch_progress_layer_ratios(const bosch_progress *p, double *out, size_t n)
{
    if (!p || !out || n < p->opt->prob->layers)
        return BOSCH_E_INVALID;
    const bosch_problem *pr = p->opt->prob;
    const uint8_t *w = lns_work(p->opt->method);
    for (uint32_t l = 0; l < pr->layers; l++) {
        size_t c = 0;
        for (uint32_t g = 0; g < pr->groups && w; g++)
            c += w[(size_t)l * pr->groups + g];
        out[l] = (double)c / pr->groups;
    }
    return BOSCH_OK;
}

/* The arguments of the mask accessors: an output of the problem's units. */
static int mask_args(const bosch_progress *p, const uint8_t *out, size_t units)
{
    if (!p || !out || units != (size_t)p->opt->prob->layers * p->opt->prob->groups)
        return BOSCH_E_INVALID;
    return BOSCH_OK;
}

int bosch_progress_working_mask(const bosch_progress *p, uint8_t *out, size_t units)
{
    if (mask_args(p, out, units) != BOSCH_OK)
        return BOSCH_E_INVALID;
    const uint8_t *w = lns_work(p->opt->method);
    if (!w)
        return BOSCH_E_STATE;
    memcpy(out, w, units);
    return BOSCH_OK;
}

int bosch_progress_best_mask(const bosch_progress *p, uint8_t *out, size_t units)
{
    if (mask_args(p, out, units) != BOSCH_OK)
        return BOSCH_E_INVALID;
    const int64_t best = lns_best(p->opt->method);
    if (best < 0)
        return BOSCH_E_STATE;
    const eval_store *st = lns_store(p->opt->method);
    bitset_unpack(st->masks + (size_t)best * st->words, units, out);
    return BOSCH_OK;
}

double bosch_progress_elapsed(const bosch_progress *p)
{
    return p ? session_now() - p->opt->t0 : 0.0;
}

double bosch_progress_rate(const bosch_progress *p)
{
    if (!p || p->opt->fresh == 0)
        return NAN;
    double t = session_now() - p->opt->t0;
    return t > 0.0 ? (double)p->opt->fresh / t : NAN;
}

double bosch_progress_eta(const bosch_progress *p)
{
    double rate = bosch_progress_rate(p);
    if (!(rate > 0.0))
        return NAN;
    uint64_t done = lns_store(p->opt->method)->n, budget = p->opt->o.budget;
    return budget > done ? (double)(budget - done) / rate : 0.0;
}

uint64_t bosch_progress_replayed(const bosch_progress *p)
{
    return p ? p->opt->replayed : 0;
}
