/* Above the shared state: the method's pending batch, and the lifecycle of
 * the subproblem a stage is solving (build, start with the stage's
 * strategy, pull batches, commit the incumbent, free). batch.c; used by the
 * stages and the driver. */
#ifndef LIBBOSCH_LNS_BATCH_H
#define LIBBOSCH_LNS_BATCH_H

#include "lns/state.h"

/* The pending batch. */
int lns_reserve_pending(lns *m, size_t n);
/* Adds a mask unless evaluated or pending already: its store record when
 * known (>= 0), else -(2 + its pending index); INT64_MIN when out of memory. */
int64_t lns_push_fixed(lns *m, const uint8_t *mask, int stage);
/* Adds a request (no store lookup; the caller knows it is new). */
int lns_push_request(lns *m, const uint8_t *mask, int stage, double fidelity, uint32_t draw);
/* The runner's next batch into the pending batch (told: the runner
 * observes it); 0 = subproblem finished. */
int lns_pull_runner(lns *m);

/* Subproblems. */
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

#endif
