/* Internal layout of a result snapshot. */
#ifndef LIBBOSCH_SESSION_RESULT_IMPL_H
#define LIBBOSCH_SESSION_RESULT_IMPL_H

#include "bosch/bosch.h"
#include "core/cache.h"

struct bosch_result {
    int status, feasible, anchors_known, raw;
    uint32_t layers, groups, heads;
    size_t units;
    uint8_t *mask;
    double score, norm, objective, s_full, s_swa, alpha, rho;
    double search_score, score_se, cost;
    uint32_t confirmations;
    uint64_t evals[BOSCH_STAGE_COUNT];
    uint64_t replayed;
    eval_store hist;
};

#endif
