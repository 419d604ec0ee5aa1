/* Result snapshots: a self-contained copy of the best mask and the history. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/bitset.h"
#include "session/result_impl.h"
#include "session/session.h"

int bosch_get_result(const bosch_optimizer *opt, bosch_result **out)
{
    if (!opt || !out)
        return BOSCH_E_INVALID;
    *out = NULL;
    bosch_result *r = calloc(1, sizeof *r);
    if (!r)
        return BOSCH_E_NOMEM;
    const bosch_problem *p = opt->prob;
    const lns *m = opt->method;
    r->layers = p->layers;
    r->groups = p->groups;
    r->heads = p->heads;
    r->units = p->units;
    r->status = opt->status;
    r->alpha = opt->o.alpha;
    r->rho = bosch_problem_target_ratio(p);
    r->s_full = r->s_swa = NAN;
    r->anchors_known = m && lns_anchors(m, &r->s_full, &r->s_swa);
    r->raw = m && lns_raw(m);
    for (int s = 0; s < BOSCH_STAGE_COUNT; s++)
        r->evals[s] = m ? lns_evaluations(m, s) : 0;
    r->replayed = opt->replayed;
    r->mask = calloc(p->units, 1);
    int rc = r->mask ? (m ? store_copy(&r->hist, lns_store(m)) : store_init(&r->hist, p->units))
                     : BOSCH_E_NOMEM;
    if (rc < 0) {
        bosch_result_free(r);
        return BOSCH_E_NOMEM;
    }
    int64_t rec = m ? (lns_best(m) >= 0 ? lns_best(m) : lns_best_any(m)) : -1;
    r->feasible = m && lns_best(m) >= 0;
    r->score = r->norm = r->objective = r->search_score = r->score_se = NAN;
    r->cost = m ? lns_cost(m) : 0.0;
    if (rec >= 0) {
        bitset_unpack(store_mask(&r->hist, (size_t)rec), p->units, r->mask);
        if (r->feasible) {
            r->search_score = r->score = r->hist.scores[rec];
            r->objective = lns_objective(m, (size_t)rec);
            double mean, se;
            r->confirmations = lns_confirmed(m, &mean, &se);
            if (r->confirmations) { /* the mean of fresh draws replaces the search's draw */
                r->objective += lns_normalized(m, mean) - lns_normalized(m, r->score);
                r->score = mean;
                r->score_se = se;
            }
            r->norm = lns_raw(m) ? NAN : lns_normalized(m, r->score);
        }
    }
    *out = r;
    return BOSCH_OK;
}

void bosch_result_free(bosch_result *r)
{
    if (!r)
        return;
    free(r->mask);
    if (r->hist.slots)
        store_free(&r->hist);
    free(r);
}

int bosch_result_status(const bosch_result *r)
{
    return r ? r->status : BOSCH_E_INVALID;
}

int bosch_result_feasible(const bosch_result *r)
{
    return r ? r->feasible : 0;
}

size_t bosch_result_units(const bosch_result *r)
{
    return r ? r->units : 0;
}

uint32_t bosch_result_layers(const bosch_result *r)
{
    return r ? r->layers : 0;
}

int bosch_result_mask(const bosch_result *r, uint8_t *out, size_t units)
{
    if (!r || !out || units != r->units)
        return BOSCH_E_INVALID;
    memcpy(out, r->mask, units);
    return BOSCH_OK;
}

int bosch_result_head_mask(const bosch_result *r, uint8_t *out, size_t query_heads)
{
    if (!r || !out || query_heads != r->units * r->heads)
        return BOSCH_E_INVALID;
    for (size_t u = 0; u < r->units; u++)
        memset(out + u * r->heads, r->mask[u], r->heads);
    return BOSCH_OK;
}

double bosch_result_score(const bosch_result *r)
{
    return r ? r->score : NAN;
}

uint32_t bosch_result_confirmations(const bosch_result *r)
{
    return r ? r->confirmations : 0;
}

double bosch_result_score_stderr(const bosch_result *r)
{
    return r ? r->score_se : NAN;
}

double bosch_result_search_score(const bosch_result *r)
{
    return r ? r->search_score : NAN;
}

double bosch_result_cost(const bosch_result *r)
{
    return r ? r->cost : 0.0;
}

double bosch_result_normalized_score(const bosch_result *r)
{
    return r ? r->norm : NAN;
}

double bosch_result_objective(const bosch_result *r)
{
    return r ? r->objective : NAN;
}

double bosch_result_anchor(const bosch_result *r, int swa)
{
    if (!r)
        return NAN;
    return swa ? r->s_swa : r->s_full;
}

double bosch_result_ratio(const bosch_result *r)
{
    if (!r)
        return NAN;
    size_t c = 0;
    for (size_t u = 0; u < r->units; u++)
        c += r->mask[u];
    return (double)c / (double)r->units;
}

int bosch_result_layer_ratios(const bosch_result *r, double *out, size_t layers)
{
    if (!r || !out || layers != r->layers)
        return BOSCH_E_INVALID;
    for (uint32_t l = 0; l < r->layers; l++) {
        size_t c = 0;
        for (uint32_t g = 0; g < r->groups; g++)
            c += r->mask[(size_t)l * r->groups + g];
        out[l] = (double)c / r->groups;
    }
    return BOSCH_OK;
}

double bosch_result_kv_saving(const bosch_result *r, uint64_t context, uint64_t window, uint64_t sink)
{
    return r ? bosch_kv_saving(bosch_result_ratio(r), context, window, sink) : NAN;
}

uint64_t bosch_result_evaluations(const bosch_result *r, int stage)
{
    if (!r)
        return 0;
    if (stage == -1)
        return r->hist.n;
    return stage >= 0 && stage < BOSCH_STAGE_COUNT ? r->evals[stage] : 0;
}

size_t bosch_result_history_size(const bosch_result *r)
{
    return r ? r->hist.n : 0;
}

int bosch_result_history_entry(const bosch_result *r, size_t i, uint8_t *mask, double *score,
                               int *stage)
{
    if (!r)
        return BOSCH_E_INVALID;
    if (i >= r->hist.n)
        return BOSCH_E_NOT_FOUND;
    if (mask)
        bitset_unpack(store_mask(&r->hist, i), r->units, mask);
    if (score)
        *score = r->hist.scores[i];
    if (stage)
        *stage = r->hist.stages[i];
    return BOSCH_OK;
}

int bosch_result_history_request(const bosch_result *r, size_t i, double *fidelity,
                                 uint32_t *draw)
{
    if (!r)
        return BOSCH_E_INVALID;
    if (i >= r->hist.n)
        return BOSCH_E_NOT_FOUND;
    if (fidelity)
        *fidelity = r->hist.fidelity[i];
    if (draw)
        *draw = r->hist.draws[i];
    return BOSCH_OK;
}

uint64_t bosch_result_replayed(const bosch_result *r)
{
    return r ? r->replayed : 0;
}

double bosch_result_history_wall(const bosch_result *r, size_t i)
{
    return r && i < r->hist.n ? r->hist.walls[i] : NAN;
}
