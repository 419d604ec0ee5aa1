/*
 * libbosch-mpi: a search's evaluations spread over the ranks of an MPI job.
 *
 * An optional library (libbosch-mpi.so.0, built when MPI is found) beside
 * libbosch, which never depends on it. Rank 0 (the root) runs the search
 * as usual and gives the optimizer bosch_mpi_request_batch_eval; every
 * other rank runs bosch_mpi_worker_run with its own evaluator. The root
 * hands the requests of each batch out one at a time to whichever rank is
 * free (candidates cost differently), and, unless told otherwise,
 * evaluates requests itself on a second thread meanwhile. Scores land in
 * the order asked, whoever computed them, so a search with a deterministic
 * evaluator takes the same path and returns the same result on any number
 * of ranks as in one process.
 *
 * Both sides start with one collective handshake (MPI_Gather on `comm`):
 * each rank says whether its evaluator opened (a rank that could not open
 * its model says why) and what it evaluates (its `identity`: the model
 * with a digest of its weights, the task, the metric, the window, ...),
 * and the root refuses the job before any evaluation when a rank is not
 * ready, or evaluates anything else than the root does, naming the rank
 * and the first field that differs. The root's own evaluations run on
 * a second thread that never calls MPI, which needs MPI_THREAD_FUNNELED or
 * above (else the root only hands out).
 *
 * Requests in parts: when every rank's evaluator can score a request's
 * samples separately (struct bosch_mpi_evaluator's `samples` and
 * `sample_eval`, e.g. libbosch-torch's bosch_torch_request_samples and
 * bosch_torch_sample_eval), a request's score is the mean of its samples'
 * values, which the root adds in sample order; a batch with fewer
 * requests than ranks (stage 1's probes ask for one to four) is then cut
 * into parts of a request's samples so that every rank has work. Where the
 * parts go never changes a score: a deterministic evaluator gives the same
 * scores, bit for bit, on any number of ranks as in one process.
 *
 * Errors follow libbosch's conventions (bosch/bosch.h): statuses are enum
 * bosch_error; a failing creator returns NULL with
 * bosch_mpi_create_error(); a coordinator keeps the message of its last
 * failure. A rank that dies takes the job down (MPI's default error
 * handler); the root's journal (bosch_set_journal) keeps every evaluation
 * told, and the same command resumes from it.
 *
 * Threads: a coordinator makes its MPI calls on the thread that calls
 * bosch_mpi_request_batch_eval (the thread running the search) and on the
 * thread that frees it; initialise MPI with MPI_THREAD_SERIALIZED when that
 * is not the thread that called MPI_Init_thread. One batch at a time.
 */
#ifndef BOSCH_MPI_H
#define BOSCH_MPI_H

#include <mpi.h>

#include "bosch/bosch.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef BOSCH_MPI_API
#if defined(BOSCH_MPI_BUILDING) && defined(__GNUC__)
#define BOSCH_MPI_API __attribute__((visibility("default")))
#else
#define BOSCH_MPI_API
#endif
#endif

typedef struct bosch_mpi_coordinator bosch_mpi_coordinator;

/* The message of an evaluator's last failure, or "" (may be NULL: then a
 * failed evaluation is reported by its status alone). */
typedef const char *(*bosch_mpi_error_fn)(void *user);

/* Samples of a request at `fidelity` (the k it is scored on); 0 for an
 * invalid fidelity. */
typedef size_t (*bosch_mpi_sample_count_fn)(double fidelity, void *user);
/* The values of samples [first, first + count) of one request (mask,
 * fidelity, draw) into values[0 .. count). The request's score must be
 * the sum of its k values, added one by one in sample order, divided by k.
 * BOSCH_OK, or a failure status (the message through `error`). */
typedef int (*bosch_mpi_sample_eval_fn)(const uint8_t *mask, double fidelity, uint32_t draw,
                                        size_t first, size_t count, size_t units,
                                        double *values, void *user);
/* What the evaluator evaluates, for the job's identity: lines of
 * "key=value" ('\n' between them, at most BOSCH_MPI_IDENTITY_MAX - 1
 * bytes in all), every setting that changes a score (e.g.
 * bosch_torch_evaluator_identity: the model with a digest of its weights,
 * the task's digest, metric, window, sink, dtype, samples per forward).
 * Called once, in the handshake, on the thread that opens the coordinator
 * or serves; the text is copied. NULL or "": the evaluator cannot say. */
typedef const char *(*bosch_mpi_identity_fn)(void *user);
#define BOSCH_MPI_IDENTITY_MAX 4096

/* A new reference mask for the evaluator's caches (e.g. the search's
 * incumbent for libbosch-torch's prefix cache): a hint that never changes
 * scores. BOSCH_OK or a failure status (then the rank goes on without). */
typedef int (*bosch_mpi_reference_fn)(const uint8_t *mask, size_t units, void *user);

/* One rank's evaluator. Zero it, set struct_size, and fill what the
 * evaluator can do: `eval` scores whole requests; `samples` with
 * `sample_eval` score requests in parts (then `eval` may be NULL);
 * `identity` says what it evaluates. Every rank that gives an identity
 * must give the root's (or, with a root that gives none, the first
 * rank's): a rank whose identity has another key or value refuses the job
 * with "rank R evaluates another job than rank 0: KEY is ... on rank R,
 * ... on rank 0". A rank that evaluates and gives none refuses the job
 * too, unless the root waives the check (BOSCH_MPI_NO_IDENTITY). Fields
 * after `reference` are read only when struct_size covers them (a caller
 * built against an older header gives no identity). */
struct bosch_mpi_evaluator {
    size_t struct_size;               /* sizeof(struct bosch_mpi_evaluator) */
    bosch_request_batch_eval_fn eval; /* whole requests (NULL: parts only) */
    bosch_mpi_error_fn error;         /* message of the last failure (may be NULL) */
    void *user;                       /* passed to every callback */
    bosch_mpi_sample_count_fn samples;
    bosch_mpi_sample_eval_fn sample_eval;
    bosch_mpi_reference_fn reference; /* may be NULL */
    bosch_mpi_identity_fn identity;   /* NULL: cannot say (see above) */
};

/* Flags of bosch_mpi_coordinator_create. */
enum bosch_mpi_flags {
    BOSCH_MPI_ROOT_IDLE = 1,  /* the root only hands out: it evaluates nothing itself */
    BOSCH_MPI_NO_IDENTITY = 2 /* waives the identity check for ranks that give none (ranks
                                 that give one are still compared): only for evaluators
                                 that are the same by construction */
};

/* Rank 0 of `comm`, collective with bosch_mpi_worker_run on every other
 * rank. `units` is the problem's (layers x kv_groups); `eval` / `user` the
 * root's own evaluator (NULL with BOSCH_MPI_ROOT_IDLE, or when the root
 * could not open one: then `ready` is its status and `why` the reason),
 * `error` its message getter (may be NULL). Every worker must report ready
 * with the same `units`. These evaluators give no identity: pass
 * BOSCH_MPI_NO_IDENTITY in `flags`, or use bosch_mpi_coordinator_open.
 * Returns the coordinator, or NULL (bosch_mpi_create_error():
 * BOSCH_E_INVALID for bad arguments, a rank that is not ready, named with
 * its reason, a units mismatch, or a rank that evaluates another job or
 * cannot say what it evaluates, named with the field; BOSCH_E_NOMEM),
 * after which the workers have returned too. */
BOSCH_MPI_API bosch_mpi_coordinator *bosch_mpi_coordinator_create(
    MPI_Comm comm, size_t units, bosch_request_batch_eval_fn eval, void *user,
    bosch_mpi_error_fn error, int ready, const char *why, unsigned flags);

/* The same with an evaluator of any ability (struct bosch_mpi_evaluator;
 * copied; NULL when the root evaluates nothing: BOSCH_MPI_ROOT_IDLE, or
 * `ready` not BOSCH_OK). Requests go in parts when every rank that
 * evaluates, and the root, give `samples` and `sample_eval` and agree on
 * the samples of a whole request; else whole, and then every worker needs
 * `eval` (a job that cannot go either way is refused, naming a rank). A
 * root that only hands out needs `samples` (no `sample_eval`) for parts. */
BOSCH_MPI_API bosch_mpi_coordinator *bosch_mpi_coordinator_open(
    MPI_Comm comm, size_t units, const struct bosch_mpi_evaluator *ev, int ready,
    const char *why, unsigned flags);

/* Passes `mask` (units bytes, copied) to the `reference` callback of every
 * rank's evaluator: the root's now, each worker's before its next request.
 * Between batches (not during bosch_mpi_request_batch_eval). BOSCH_OK;
 * BOSCH_E_INVALID for NULL or units not the job's; BOSCH_E_NOMEM; or the
 * root's callback's status. */
BOSCH_MPI_API int bosch_mpi_coordinator_set_reference(bosch_mpi_coordinator *c,
                                                      const uint8_t *mask, size_t units);

/* Scores n requests over the ranks (a bosch_request_batch_eval_fn: pass the
 * coordinator as `user` to bosch_set_request_batch_evaluator). Request i
 * goes to the next free rank; scores[i] is its score. A failing rank stops
 * the hand-out: the requests in flight are collected, and its status is
 * returned with "rank R: <its message>" in
 * bosch_mpi_coordinator_last_error(). BOSCH_E_INVALID when `units` is not
 * the coordinator's. */
BOSCH_MPI_API int bosch_mpi_request_batch_eval(const uint8_t *masks, const double *fidelity,
                                               const uint32_t *draws, size_t n, size_t units,
                                               double *scores, void *coordinator);

/* Ranks in the job, and evaluations each has made so far (counts: `ranks`
 * entries, rank 0 first; may be NULL): requests, or parts of requests,
 * scored. BOSCH_E_INVALID for NULL. */
BOSCH_MPI_API int bosch_mpi_coordinator_stats(const bosch_mpi_coordinator *c, int *ranks,
                                              uint64_t *counts, size_t n_counts);

/* Message of the last failure ("" if none, or for NULL). */
BOSCH_MPI_API const char *bosch_mpi_coordinator_last_error(const bosch_mpi_coordinator *c);

/* Tells every worker to return, and frees. NULL is a no-op. */
BOSCH_MPI_API void bosch_mpi_coordinator_free(bosch_mpi_coordinator *c);

/* Every rank but 0: the handshake (`ready`: BOSCH_OK with the evaluator
 * open, else the status of its failure and `why`), then the evaluation of
 * what the root hands out with `eval` / `user` (message getter `error`,
 * may be NULL) until the root frees its coordinator. BOSCH_OK then;
 * BOSCH_E_INVALID (and nothing evaluated) when the handshake failed on any
 * rank or the arguments are bad. A failing evaluation is reported to the
 * root and the loop goes on. */
BOSCH_MPI_API int bosch_mpi_worker_run(MPI_Comm comm, size_t units,
                                       bosch_request_batch_eval_fn eval, void *user,
                                       bosch_mpi_error_fn error, int ready, const char *why);

/* The same with an evaluator of any ability (see
 * bosch_mpi_coordinator_open; copied; NULL for a rank that is not ready). */
BOSCH_MPI_API int bosch_mpi_worker_serve(MPI_Comm comm, size_t units,
                                         const struct bosch_mpi_evaluator *ev, int ready,
                                         const char *why);

/* Why the last bosch_mpi_coordinator_create on this thread failed: status
 * and message, as bosch_create_status()/bosch_create_error(). */
BOSCH_MPI_API int bosch_mpi_create_status(void);
BOSCH_MPI_API const char *bosch_mpi_create_error(void);

#ifdef __cplusplus
}
#endif

#endif /* BOSCH_MPI_H */
