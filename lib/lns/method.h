/* What the method and its caller exchange: the configuration that changes
 * the result, the hooks it reports through, a batch to score, and how a
 * record scores (state.c). The driver's calls are in lns.h; every file of
 * lib/lns may include this one. */
#ifndef LIBBOSCH_LNS_METHOD_H
#define LIBBOSCH_LNS_METHOD_H

#include <stddef.h>
#include <stdint.h>

#include "bosch/bosch.h"
#include "core/cache.h"

typedef struct lns lns;

/* What changes the method's result (the session's options that matter). */
struct lns_config {
    uint64_t seed, budget;
    uint64_t probe_budget, group_budget; /* 0 = derived */
    double probe_fraction, polish_fraction, alpha, spread;
    uint32_t group_cap, batch;
    int variant;                                      /* enum bosch_variant */
    const bosch_strategy *strategy[BOSCH_STAGE_COUNT]; /* PROBE and GROUP; borrowed */
    int anchors_given;
    double s_full, s_swa;
    int raw_scores; /* anchors not ordered: search raw scores instead of failing */
    double anchor_tolerance; /* ordered means S_full - S_allSWA > anchor_tolerance */
    uint32_t confirm, confirm_top; /* confirmation draws of the best masks at the end */
    double screen_fidelity;        /* stage 3 screens new candidates at it (1 = off) */
    const double *prior;           /* the host's per-unit priors (units; borrowed), or NULL */
    uint32_t sweep_pairs;          /* flip sweep: most pairs scored (0 = no sweep) */
    double sweep_gap;              /* ... runs when the recent median gap is below this */
    double stop_tolerance;         /* stop when the projected gain is below this (0 = off) */
};

struct lns_hooks {
    void (*log)(void *ctx, int level, const char *msg); /* NULL = silent */
    int (*log_wanted)(void *ctx, int level); /* 0 = do not format (NULL = all wanted) */
    void (*milestone)(void *ctx);                        /* NULL = none */
    void *ctx;
};

/* A batch to score: n masks of `units` bytes back to back, all of one stage.
 * Valid until the next lns_tell() or lns_keep(). */
struct lns_batch {
    size_t n;
    const uint8_t *masks;
    const double *fidelity; /* n: share of the samples to score on */
    const uint32_t *draws;  /* n: 0 = first evaluation, >= 1 = confirmation draws */
    int stage; /* enum bosch_stage */
};

/* S^ of a raw score (NaN before the anchors; the raw score itself when the
 * anchors were unordered and raw_scores is on), and the objective of a
 * store record: S^ minus the ratio penalty. */
double lns_normalized(const lns *m, double raw);
double lns_objective(const lns *m, size_t record);

#endif
