/* The runner drives one strategy through one subproblem in ask/tell
 * fashion: repair, expansion to full masks, cache lookups, deduplication,
 * budget. The stages and the standalone harness (bosch_strategy_solve) both
 * use it. */
#ifndef LIBBOSCH_SEARCH_RUNNER_H
#define LIBBOSCH_SEARCH_RUNNER_H

#include "bosch/bosch.h"
#include "search/strategy_impl.h"
#include "search/subproblem_impl.h"

/* Screened and full-fidelity scores of the same masks, pooled over a run:
 * the mean square of their difference sets the screening margin. */
struct screen_stats {
    double sum_sq;  /* of screened - full value */
    double gap_sq;  /* of full value - incumbent value at the time */
    uint32_t n;
    int off;        /* screening cannot tell candidates apart: scored at full fidelity */
};

typedef struct runner {
    bosch_subproblem *sp;
    bosch_strategy strat; /* borrowed name; callbacks only */
    void *state;
    int inited;
    size_t batch;
    uint8_t *props;   /* proposals after repair, batch * n */
    double *values;   /* their values */
    int64_t *slot;    /* record index, or -(1 + pending index) */
    size_t nprops;
    uint8_t *pend;    /* full masks awaiting evaluation, batch * units */
    uint64_t *pend_packed;
    double *pend_fid; /* fidelity of each pending mask */
    size_t npend;
    /* Multi-fidelity screening (screen < 1): new masks are scored at
     * `screen` first; those within the margin of the incumbent are scored
     * again at full fidelity (the "promotions") before the strategy
     * observes the batch. */
    double screen;
    struct screen_stats *stats; /* borrowed; NULL = screening off */
    int64_t *prom_lo;           /* the screened record of each promotion */
    size_t nprom;
    int promoting;              /* the pending masks are promotions */
    unsigned idle;    /* consecutive batches without a new evaluation */
    int finished;     /* 1 = strategy finished or idle, 2 = budget spent */
    double *var_sum;  /* per variable: sum and count of values with x = 1 */
    uint32_t *var_cnt;
} runner;

int runner_init(runner *r, bosch_subproblem *sp, const bosch_strategy *s, size_t batch);
/* Turns screening on at `fidelity` (< 1), pooling the margin in `stats`. */
void runner_screen(runner *r, double fidelity, struct screen_stats *stats);
void runner_free(runner *r);
/* Next distinct new masks to evaluate (in r->pend): returns their number,
 * 0 when the subproblem is finished, or a negative error. */
int runner_next(runner *r);
/* The pending masks (at fidelity pend_fid[i]) were evaluated and stored as
 * records[i]. */
int runner_complete(runner *r, const int64_t *records);

#endif
