/* The BOSCH method as a Large Neighbourhood Search, apart from any session.
 *
 * The method owns its state (stage plan, probes, allocation, chunks,
 * subproblem and runner) and the evaluation store, and talks to its caller
 * through two batches only: lns_next() fills a batch of masks to score,
 * lns_tell() is told their scores. It knows nothing of handles, options
 * parsing, journals, threads, clocks or libuv: the session
 * (lib/session/, the bosch_optimizer handle) sits on top and does those.
 *
 * Two hooks let the method report without calling up into the session: a
 * log sink and a milestone (a stage or chunk finished; the session turns it
 * into a progress event).
 *
 * Thread safety: none; one caller at a time. */
#ifndef LIBBOSCH_LNS_LNS_H
#define LIBBOSCH_LNS_LNS_H

#include "lns/method.h"

/* Borrows `p`, the strategies of `cfg` and the hooks for its lifetime.
 * NULL when memory runs out. */
lns *lns_create(const bosch_problem *p, const struct lns_config *cfg,
                const struct lns_hooks *hooks);
void lns_free(lns *m);

/* Fewest evaluations a run needs to end with a feasible mask; lns_next
 * refuses a smaller budget (BOSCH_E_INVALID) before any evaluation. */
uint64_t lns_min_budget(const bosch_problem *p, const struct lns_config *cfg);

/* Fills the next batch (none may be pending). Returns n > 0, or 0 when the
 * method has ended (lns_status: BOSCH_DONE, BOSCH_CONVERGED or BOSCH_BUDGET_REACHED), or a
 * negative error (lns_error says why; the method is then over). */
int lns_next(lns *m, struct lns_batch *out);
/* Every candidate of the pending batch was scored: scores[i] and walls[i]
 * (seconds, NaN = unknown) in batch order. The method stores them, moves on
 * and updates its best. BOSCH_OK or a negative error (method over). */
int lns_tell(lns *m, const double *scores, const double *walls);
/* The run ends with the pending batch partly scored: stores the candidates
 * with told[i] != 0 and updates the best, without observing the batch. */
int lns_keep(lns *m, const uint8_t *told, const double *scores, const double *walls);

/* 0 while running, else the positive stop reason or negative error. */
int lns_status(const lns *m);
const char *lns_error(const lns *m);

/* Every evaluation so far, in evaluation order. */
const eval_store *lns_store(const lns *m);
uint64_t lns_evaluations(const lns *m, int stage);
/* Stage the method is in (enum bosch_stage), as progress reports it. */
int lns_stage(const lns *m);
/* The working mask (units bytes), NULL before the plan exists. */
const uint8_t *lns_work(const lns *m);
/* Non-zero once S_full and S_allSWA are known (written to *s_full, *s_swa). */
int lns_anchors(const lns *m, double *s_full, double *s_swa);
/* Non-zero when the anchors were not ordered and raw_scores is on: the
 * search maximises raw scores (lns_normalized returns its argument). */
int lns_raw(const lns *m);
/* lns_normalized and lns_objective (method.h) score records. */
/* Best feasible record (-1 if none) and best record of any kind. */
int64_t lns_best(const lns *m);
int64_t lns_best_any(const lns *m);
/* Budget spent in full-evaluation equivalents. */
double lns_cost(const lns *m);
/* The confirmation of the best mask (confirm > 0, once done): the number of
 * fresh draws (0 = none), their mean raw score and its standard error. */
uint32_t lns_confirmed(const lns *m, double *mean, double *stderr_);

#endif
