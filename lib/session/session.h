/* The session: the bosch_optimizer handle on top of the method (lib/lns).
 * It owns the options, the host's callbacks, errors, log and progress, the
 * ask/tell protocol with its pending batch, the callback driver (worker
 * threads), the journal and its replay, and result snapshots.
 * Files: optimizer.c (lifetime, errors, log, hooks), options.c (the option
 * table), asktell.c (ask/tell and the single tell path), driver.c
 * (bosch_optimize), progress.c, journal_header.c, result.c, history.c. */
#ifndef LIBBOSCH_SESSION_SESSION_H
#define LIBBOSCH_SESSION_SESSION_H

#include <stdatomic.h>
#include <uv.h>

#include "bosch/bosch.h"
#include "core/cache.h"
#include "core/problem_impl.h"
#include "journal/journal.h"
#include "lns/lns.h"
#include "util/pool.h"

/* The options as set (options.c's table validates them). */
/* Defaults of the flip sweep (the option table's, as numbers). */
#define SESSION_SWEEP_PAIRS 40
#define SESSION_SWEEP_GAP 0.005

struct options {
    uint64_t seed, budget;
    uint64_t probe_budget, group_budget; /* 0 = derived */
    double probe_fraction, polish_fraction, time_limit, alpha, spread;
    uint64_t group_cap, batch;
    int variant;
    bosch_strategy *strategy[BOSCH_STAGE_COUNT]; /* PROBE and GROUP used */
    int anchors_given;
    double s_full, s_swa;
    uint64_t threads;    /* concurrent evaluations (callback mode) */
    int eval_thread_safe;
    char *journal_path;  /* NULL = no journal */
    int journal_mode, journal_sync;
    int raw_scores;      /* unordered anchors: search raw scores */
    double anchor_tolerance; /* anchors ordered only when S_full - S_allSWA exceeds it */
    uint64_t confirm, confirm_top; /* confirmation draws of the best masks */
    double screen_fidelity;        /* multi-fidelity screening (1 = off) */
    uint64_t sweep_pairs;          /* flip sweep: most pairs (0 = off) */
    double sweep_gap;              /* ... and its trigger */
    double stop_tolerance;         /* the stopping rule (0 = off) */
    double *priors;                /* the host's per-unit priors (units), NULL = none */
    char **identity;               /* run identity: key, value, key, value... (journal header) */
    size_t n_identity;             /* pairs */
};

struct bosch_optimizer {
    bosch_problem *prob;
    struct options o;
    bosch_eval_fn eval;
    bosch_batch_eval_fn batch_eval;
    bosch_request_eval_fn req_eval;            /* the evaluators that read the request */
    bosch_request_batch_eval_fn req_batch_eval;
    void *eval_user;
    bosch_log_fn log;
    void *log_user;
    int log_level;
    bosch_progress_fn progress;
    void *progress_user;

    int started;
    int status;          /* 0 = running, > 0 stop reason, < 0 error */
    int host_status;
    atomic_int stop_requested;
    double t0;
    lns *method;         /* NULL before the search starts */

    /* Journal and replay. */
    journal *jn;
    eval_store replay;   /* records of a resumed journal */
    int replay_active;
    uint64_t replayed;   /* evaluations answered from the journal */
    uint64_t fresh;      /* evaluations done by this process */
    int journal_failed;  /* an append failed (the run stops after the batch) */
    char journal_reason[128]; /* the system's reason for it */

    /* Callback-mode workers. */
    pool *workers;
    uv_mutex_t mu;       /* guards the told state and journal appends from workers */
    uv_mutex_t eval_mu;  /* serialises a non-thread-safe evaluator */

    /* The pending batch (the method's lns_batch) and what was told of it.
     * The host sees only candidates not answered from the journal: host
     * index i is batch index host_idx[i]. */
    struct lns_batch batch;
    size_t npend;        /* batch.n while pending, else 0 */
    size_t *host_idx;
    size_t nhost;
    double batch_t0;     /* when the batch was handed out */
    double *pend_score, *pend_wall;
    uint8_t *pend_told;
    size_t ntold, pend_cap;

    char err[512];
};

/* optimizer.c */
double session_now(void);
/* Records a refused call's message without ending the run; returns code. */
int session_refuse(bosch_optimizer *opt, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Ends the pending batch, keeping its told candidates (lns_keep). */
void session_end_batch(bosch_optimizer *opt);
/* Once the run has ended (status set), closes the journal, releasing its
 * lock; a no-op before. */
void session_end_journal(bosch_optimizer *opt);
/* Ends the run with an error, keeping the told part of the pending batch. */
int session_fail(bosch_optimizer *opt, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void session_log(bosch_optimizer *opt, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The hooks the method reports through. */
struct lns_hooks session_hooks(bosch_optimizer *opt);

/* options.c: defaults of a new handle; the method's configuration. */
int session_options_init(struct options *o);
void session_options_free(struct options *o);
struct lns_config session_lns_config(const struct options *o);

/* asktell.c: the single tell path (callers serialise: opt->mu when workers
 * run). tell_one checks host index i and the score and records it (and
 * journals it); it sets no message. complete_batch hands a fully told batch
 * to the method. */
int session_tell_one(bosch_optimizer *opt, size_t i, double score, double wall);
int session_complete_batch(bosch_optimizer *opt);

/* progress.c */
void session_emit_progress(bosch_optimizer *opt);

/* journal_header.c: JSON of everything a resume must match (malloc'd). */
char *session_journal_header(const bosch_optimizer *opt);

#endif
