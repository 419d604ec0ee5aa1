/* Inside the method: the state shared by the files of lib/lns (lns.c: the
 * driver and anchors; batch.c: the pending batch and subproblem lifecycle;
 * probe.c, alloc.c, group.c, layers.c: the stages). */
#ifndef LIBBOSCH_LNS_LNS_IMPL_H
#define LIBBOSCH_LNS_LNS_IMPL_H

#include "core/problem_impl.h"
#include "lns/lns.h"
#include "search/runner.h"

/* Stage 2 tries this many ratio spreads, evenly spaced in [0, ratio_spread]. */
#define ALLOC_CANDIDATES 3

/* Steps of the stage machine. */
enum step {
    STEP_ANCHORS,
    STEP_PLAN,    /* derive budgets and per-layer ranges once the anchors are known */
    STEP_PROBE,   /* stage 1, one layer after the other, top down */
    STEP_ALLOC,   /* stage 2: allocate ratios, evaluate the start mask */
    STEP_GROUP,   /* stage 3, one chunk after the other */
    STEP_POLISH,  /* stage 3's last part: swaps across all layers [ours] */
    STEP_SWEEP,   /* stage 3's end, when the landscape looks additive: exact flips [ours] */
    STEP_LAYERS,  /* layer-level variant */
    STEP_CONFIRM, /* confirmation draws of the best masks [ours] */
    STEP_FINISHED
};

/* States of the flip sweep. */
enum sweep_state {
    SWEEP_NONE,
    SWEEP_FLIPS,
    SWEEP_PAIRS,
    SWEEP_PROBES,
    SWEEP_EXCHANGES,
    SWEEP_DONE
};

/* Everything the stage machine keeps between batches. */
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
    /* Confirmation: the best masks' primary records, requests handed out. */
    int64_t *conf_rec;
    uint32_t nconf, conf_next, confirm_state; /* 0 = not begun, 1 = running, 2 = done */
    int end_status;       /* the stop reason the search reached before confirming */
    /* Flip sweep (sweep.c). */
    int sweep_checked;    /* its tests that ran: at N + 2K, then at N + K */
    size_t polish_first;  /* the polish's first store record */
    size_t polish_free;   /* the polish's variables: the free units */
    int sweep_state;      /* enum sweep_state */
    size_t *sw_unit, sw_n; /* the free units */
    size_t sw_next, sw_chunk; /* flips handed out, first flip of the pending chunk */
    int64_t *sw_slot;     /* per flip: lns_push_fixed's answer */
    int64_t sw_pair_slot; /* ... for the pending pair */
    double *sw_gain;      /* per unit: change of S^ when flipped alone (no ratio penalty) */
    size_t *sw_swa, *sw_full, sw_nswa, sw_nfull; /* pair candidates, by gain */
    uint8_t *sw_used;     /* per unit: moved by a kept pair or exchange */
    size_t sw_i, sw_j;    /* pair cursors (indices into sw_swa, sw_full) */
    /* Substitute probe: the critical full units off together (base), then
     * single SWA units on at that mask; exchanges built from them. */
    size_t *sw_crit, sw_ncrit; /* the critical full units */
    double sw_crit_min;   /* their smallest loss */
    double sw_base;       /* ... its S^ */
    size_t sw_nprobe;     /* probes: units in sw_unit[1..], slots in sw_slot */
    size_t sw_probe_from; /* next SWA unit (in sw_swa) a probe round takes */
    size_t sw_probed;     /* probes in all rounds */
    uint8_t *sw_off;      /* per probe: a unit a kept pair made full, made SWA at the base */
    size_t *sw_kept, sw_nkept, sw_kept_next; /* units kept pairs made full; next to probe */
    double *sw_excess;    /* per probe: its gain at the base minus its gain alone */
    size_t *sw_xa, *sw_xb, sw_nx, sw_xk; /* exchanges (SWA unit, partner), next */
    uint32_t sw_pairs;    /* pairs scored */
    uint32_t sw_exchanges; /* exchanges kept */
    double sw_f;          /* objective of the working mask */
    uint8_t *sw_mask;     /* scratch mask (units) */
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
    int pend_from_runner;
    int64_t *pend_record; /* store records once told */
};

/* Confirmation draws are set (confirm > 0) and have not begun. */
static inline int lns_confirm_pending(const lns *m)
{
    return m->cfg.confirm > 0 && m->plan.confirm_state == 0;
}

/* lns.c */
int lns_fail(lns *m, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void lns_log(lns *m, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void lns_milestone(lns *m);
uint64_t lns_budget_left(const lns *m);
/* The search ends with BOSCH_BUDGET_REACHED (after the confirmation
 * draws, when confirm is set); returns 0 (no batch). */
int lns_budget_reached(lns *m);
/* Every stage ran: the confirmation step if set, then the end. */
void lns_search_ended(lns *m, int status);

/* batch.c: the pending batch */
int lns_reserve_pending(lns *m, size_t n);
/* Adds a mask unless evaluated or pending already: its store record when
 * known (>= 0), else -(2 + its pending index); INT64_MIN when out of memory. */
int64_t lns_push_fixed(lns *m, const uint8_t *mask, int stage);
/* Adds a request (no store lookup; the caller knows it is new). */
int lns_push_request(lns *m, const uint8_t *mask, int stage, double fidelity, uint32_t draw);
/* The runner's next batch into the pending batch; 0 = subproblem finished. */
int lns_pull_runner(lns *m);

/* batch.c: subproblems */
uint32_t lns_free_count(const bosch_problem *p, uint32_t l);
/* Subproblem over the free units of `nl` layers, one block per layer. */
bosch_subproblem *lns_layers_subproblem(lns *m, const uint32_t *layers, uint32_t nl,
                                        uint64_t stream);
/* Makes expanded masks repair to the global target (frees sp on failure). */
bosch_subproblem *lns_with_global_repair(bosch_subproblem *sp, const bosch_problem *p);
void lns_start_from_work(const lns *m, bosch_subproblem *sp);
int lns_start_subproblem(lns *m, bosch_subproblem *sp, uint64_t budget, int stage);
void lns_commit_incumbent(lns *m);
void lns_drop_subproblem(lns *m);
/* Commits the finished subproblem's best, frees it, returns its evaluations. */
double lns_close_subproblem(lns *m);

/* The stages: each returns > 0 (a batch is pending), 0 (moved on or ended),
 * or a negative error. */
int lns_plan_init(lns *m);          /* lns.c */
int lns_step_probe(lns *m);         /* probe.c */
int lns_step_alloc(lns *m);         /* alloc.c */
void lns_choose_allocation(lns *m); /* alloc.c: after stage 2's batch */
int lns_step_group(lns *m);         /* group.c */
int lns_step_polish(lns *m);        /* group.c */
/* sweep.c: non-zero when the polish should end here for the flip sweep
 * (tested once, when the budget left first reaches free units + sweep_pairs). */
int lns_sweep_due(lns *m);
int lns_step_sweep(lns *m);
void lns_sweep_free(struct plan *pl);
/* sweep_moves.c: the moves both parts of the sweep make. */
#define LNS_SWAP_INFEASIBLE INT64_MAX
int lns_sweep_push_chunk(lns *m, size_t total);
int64_t lns_sweep_push_swap(lns *m, size_t a, size_t b);
int lns_sweep_keep(lns *m, int64_t rec, size_t a, size_t b);
/* sweep_probe.c: a round of substitute probes (> 0: candidates pushed; 0:
 * nothing to probe), and its steps once told (0: the round is over). */
int lns_probe_round(lns *m);
int lns_probe_step(lns *m);

/* qsort: ascending doubles. */
static inline int lns_by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Record of a slot lns_push_fixed returned, once its batch was told. */
static inline int64_t lns_slot_record(const lns *m, int64_t slot)
{
    return slot >= 0 ? slot : m->pend_record[-slot - 2];
}
int lns_step_layers(lns *m);        /* layers.c */
int lns_step_confirm(lns *m);       /* confirm.c */

#endif
