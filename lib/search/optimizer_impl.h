/* Internal layout of the optimizer handle, shared by the files of lib/search. */
#ifndef BOSCH_SEARCH_OPTIMIZER_IMPL_H
#define BOSCH_SEARCH_OPTIMIZER_IMPL_H

#include <stdatomic.h>
#include <uv.h>

#include "bosch/bosch.h"
#include "core/cache.h"
#include "core/problem_impl.h"
#include "engine/pool.h"
#include "journal/journal.h"
#include "search/strategy_impl.h"

/* Stage 2 tries this many ratio spreads, evenly spaced in [0, ratio_spread]. */
#define ALLOC_CANDIDATES 3

/* Steps of the stage machine (stages.c). */
enum step {
    STEP_ANCHORS,
    STEP_PLAN,    /* derive budgets and per-layer ranges once the anchors are known */
    STEP_PROBE,   /* stage 1, one layer after the other, top down */
    STEP_ALLOC,   /* stage 2: allocate ratios, evaluate the start mask */
    STEP_GROUP,   /* stage 3, one chunk after the other */
    STEP_POLISH,  /* stage 3's last part: swaps across all layers [ours] */
    STEP_LAYERS,  /* layer-level variant */
    STEP_FINISHED
};

struct options {
    uint64_t seed, budget;
    uint64_t probe_budget, group_budget; /* 0 = derived */
    double probe_fraction, polish_fraction, time_limit, alpha, spread;
    uint32_t group_cap, batch;
    int variant;
    bosch_strategy *strategy[BOSCH_STAGE_COUNT]; /* PROBE and GROUP used; NULL = auto */
    int anchors_given;
    double s_full, s_swa;
    uint32_t threads;    /* concurrent evaluations (callback mode) */
    int eval_thread_safe;
    char *journal_path;  /* NULL = no journal */
    int journal_mode, journal_sync;
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
    uint64_t probe_budget, group_budget, probe_used, group_used;
    uint64_t group_total; /* stage 3 including its polish */
    uint32_t layer;       /* stage 1: current layer (counts down) */
    int polished;         /* the polish subproblem has run */
    uint32_t *chunk_start, nchunks, chunk; /* stage 3: chunks of layers */
    uint32_t *chunk_layers;
    size_t group_vars_left;
};

struct bosch_optimizer {
    bosch_problem *prob;
    struct options o;
    bosch_eval_fn eval;
    bosch_batch_eval_fn batch_eval;
    void *eval_user;
    bosch_log_fn log;
    void *log_user;
    int log_level;
    bosch_progress_fn progress;
    void *progress_user;

    int started;
    int status;         /* 0 = running, > 0 stop reason, < 0 error */
    int host_status;
    atomic_int stop_requested;
    double t0;
    double s_full, s_swa; /* anchors in use */
    int anchors_known;
    eval_store store;
    uint64_t evals[BOSCH_STAGE_COUNT];
    int64_t best_record;     /* best eligible record, -1 if none */
    int64_t best_any_record; /* best record of any kind */

    enum step step;
    struct plan plan;
    bosch_subproblem *sp; /* subproblem in progress, with its runner */
    runner run;
    int run_active;

    /* Journal and replay. */
    journal *jn;
    eval_store replay;   /* records of a resumed journal */
    int replay_active;
    uint64_t replayed;    /* evaluations answered from the journal */
    uint64_t fresh;       /* evaluations done by this process */
    int journal_failed;   /* an append failed (reported after the batch) */

    /* Callback-mode engine. */
    pool *workers;
    uv_mutex_t mu;        /* guards told-state and journal appends from workers */
    uv_mutex_t eval_mu;   /* serialises a non-thread-safe evaluator */

    /* The pending batch. The host sees only candidates not answered from the
     * journal: host index i is batch index host_idx[i]. */
    size_t npend;
    size_t *host_idx;
    size_t nhost;
    double batch_t0;      /* when the batch was handed out */
    double *pend_wall;
    int pend_stage;
    int pend_from_runner;
    uint8_t *pend;        /* npend * units */
    double *pend_score;
    uint8_t *pend_told;
    size_t ntold;
    size_t pend_cap;
    int64_t *pend_record;

    char err[512];
};

/* optimizer.c */
int opt_fail(bosch_optimizer *opt, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void opt_log(bosch_optimizer *opt, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
double opt_now(void);
double opt_normalized(const bosch_optimizer *opt, double raw);
double opt_objective_of(const bosch_optimizer *opt, size_t record);
void opt_emit_progress(bosch_optimizer *opt);
/* Makes room for n pending masks. */
int opt_reserve_pending(bosch_optimizer *opt, size_t n);
/* Marks batch candidate b as scored and journals it unless replayed.
 * Callers serialise (opt->mu when workers run). */
void opt_record_told(bosch_optimizer *opt, size_t b, double score, double wall, int replayed);
/* All candidates told: store them, let the stage machine observe. */
int opt_complete_batch(bosch_optimizer *opt);
/* journal_header.c: JSON of everything a resume must match (malloc'd). */
char *opt_journal_header(const bosch_optimizer *opt);

/* stages.c: fills the pending batch; > 0 candidates, 0 finished (status
 * set), < 0 error. Called with no batch pending. */
int stages_next_batch(bosch_optimizer *opt);
/* A complete batch was stored (records in opt->pend_record). */
int stages_batch_done(bosch_optimizer *opt);
void stages_free(bosch_optimizer *opt);
uint64_t opt_budget_left(const bosch_optimizer *opt);

/* allocation.c */
/* Exact per-layer counts: k[l] in [lo[l], hi[l]], sum == target; layers
 * with small weight (easy) get more SWA. weight NULL = uniform. */
int alloc_counts(uint32_t layers, uint32_t groups, const uint32_t *lo, const uint32_t *hi,
                 size_t target, double rho, const double *weight, double spread, uint32_t *k);

#endif
