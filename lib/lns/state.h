/* The bottom of lib/lns: the state every part of the method shares (the
 * plan the stages fill in, the store, the pending batch) and the helpers
 * that read it (state.c: ending with an error, the log and milestone
 * hooks, the budget, the end of the search). Above it: batch.h (the
 * pending batch and the subproblem a stage solves), then the stages
 * (stage.h), then the driver (lns.c). A stage's own state stays in its
 * files: the flip sweep's is struct sweep (sweep_state.h). */
#ifndef LIBBOSCH_LNS_STATE_H
#define LIBBOSCH_LNS_STATE_H

#include "core/problem_impl.h"
#include "lns/method.h"
#include "search/runner.h"

/* Stage 2 tries this many ratio spreads, evenly spaced in [0, ratio_spread]. */
#define ALLOC_CANDIDATES 3

/* Steps of the stage machine (the driver's step table runs them). */
enum step {
    STEP_ANCHORS, /* the two reference models */
    STEP_PLAN,    /* derive budgets and per-layer ranges once the anchors are known */
    STEP_PROBE,   /* stage 1, one layer after the other, top down */
    STEP_ALLOC,   /* stage 2: allocate ratios, evaluate the start mask */
    STEP_GROUP,   /* stage 3, one chunk after the other */
    STEP_POLISH,  /* stage 3's last part: swaps across all layers [ours] */
    STEP_SWEEP,   /* stage 3's end, when the landscape looks additive: exact flips [ours] */
    STEP_LAYERS,  /* layer-level variant */
    STEP_CONFIRM, /* confirmation draws of the best masks [ours] */
    STEP_FINISHED,
    STEP_COUNT
};

struct sweep; /* the flip sweep's state: sweep_state.h, seen by sweep*.c only */

/* What the stages pass on to each other between batches. */
struct plan {
    size_t target;        /* exact number of SWA units */
    uint32_t *lo, *hi;    /* per-layer SWA count range (fixed units included) */
    uint32_t *k_uniform;  /* per-layer counts of the uniform allocation */
    uint32_t *k;          /* per-layer counts in use (stage 2 output) */
    uint32_t *k_cand;     /* stage 2: ALLOC_CANDIDATES allocations, layers each */
    int64_t cand_slot[ALLOC_CANDIDATES]; /* their store records (>= 0) or -(2 + pending index) */
    uint32_t ncand;
    uint8_t *work;        /* working mask (units) */
    int64_t work_record;  /* its store record, -1 if never evaluated */
    double *s_best;       /* stage 1: best normalised score per layer (layers + 1) */
    double *pref;         /* stage 1: per-unit preference (mean score when SWA) */
    double *weight;       /* stage 2: per-layer difficulty in [0, 1] */
    uint64_t probe_budget, group_budget;
    double probe_used, group_used; /* full-evaluation equivalents */
    uint64_t group_total; /* stage 3 including its polish */
    uint32_t layer;       /* stage 1: current layer (counts down) */
    int polished;         /* the polish subproblem has run */
    uint32_t *chunk_start, nchunks, chunk; /* stage 3: chunks of layers */
    uint32_t *chunk_layers;
    size_t group_vars_left;
    size_t polish_first;  /* the polish's first store record (the sweep's test reads from it) */
    size_t polish_free;   /* the polish's variables: the free units */
    struct sweep *sweep;  /* the flip sweep, NULL until the polish first tests it */
    /* Confirmation: the best masks' primary records, requests handed out. */
    int64_t *conf_rec;
    uint32_t nconf, conf_next, confirm_state; /* 0 = not begun, 1 = running, 2 = done */
    int end_status;       /* the stop reason the search reached before confirming */
};

struct lns {
    const bosch_problem *prob;
    struct lns_config cfg;
    struct lns_hooks hooks;
    int status; /* 0 = running, > 0 stop reason, < 0 error */
    char err[512];

    double s_full, s_swa; /* anchors in use */
    int anchors_known;
    int raw;              /* unordered anchors, raw scores searched */
    eval_store store;
    uint64_t evals[BOSCH_STAGE_COUNT];
    int64_t best_record;     /* best eligible record, -1 if none */
    int64_t best_any_record; /* best record of any kind */

    enum step step;
    struct plan plan;
    bosch_subproblem *sp; /* subproblem in progress, with its runner */
    runner run;
    int run_active;

    struct screen_stats screen; /* screened vs full scores seen so far */
    int screen_logged;          /* its switch-off was logged */
    double conf_mean, conf_se;  /* the confirmed best: mean raw score, standard error */
    uint32_t conf_n;            /* its fresh draws (0 = not confirmed) */
    int64_t conf_best;          /* its primary record */

    /* The pending batch (what lns_next handed out). */
    uint8_t *pend;        /* npend * units */
    double *pend_fid;     /* npend */
    uint32_t *pend_draw;  /* npend */
    size_t npend, pend_cap;
    int pend_stage;
    /* Observes the batch once told (its records are in pend_record), before
     * the next step runs; set by whoever filled the batch, NULL = nothing. */
    int (*pend_told)(lns *m);
    int64_t *pend_record; /* store records once told */
};

/* Ends the method with an error (status = code unless it ended already);
 * returns code. The caller's caller logs it (lns_error). */
int lns_fail(lns *m, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void lns_log(lns *m, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A stage or chunk finished (the session reports progress). */
void lns_milestone(lns *m);
/* Evaluations left, in full-evaluation equivalents; the confirmation draws
 * are set aside until their step. */
uint64_t lns_budget_left(const lns *m);
/* The search ends with BOSCH_BUDGET_REACHED (after the confirmation
 * draws, when confirm is set); returns 0 (no batch). */
int lns_budget_reached(lns *m);
/* Every stage ran: the confirmation step if set, then the end. */
void lns_search_ended(lns *m, int status);

/* Confirmation draws are set (confirm > 0) and have not begun. */
static inline int lns_confirm_pending(const lns *m)
{
    return m->cfg.confirm > 0 && m->plan.confirm_state == 0;
}

/* Record of a slot lns_push_fixed returned, once its batch was told. */
static inline int64_t lns_slot_record(const lns *m, int64_t slot)
{
    return slot >= 0 ? slot : m->pend_record[-slot - 2];
}

/* qsort: ascending doubles. */
static inline int lns_by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#endif
