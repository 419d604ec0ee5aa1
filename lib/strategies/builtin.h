/* The built-in strategies and the move helpers they share. */
#ifndef LIBBOSCH_STRATEGIES_BUILTIN_H
#define LIBBOSCH_STRATEGIES_BUILTIN_H

#include "bosch/bosch.h"

struct builtin_strategy {
    const char *name;
    bosch_strategy_init_fn init;
    bosch_strategy_propose_fn propose;
    bosch_strategy_observe_fn observe;
    bosch_strategy_destroy_fn destroy;
};

extern const struct builtin_strategy *const builtin_strategies[];
extern const size_t builtin_strategy_count;

/* What "auto" uses when a subproblem is too large to enumerate (chosen from
 * bench/ results; see docs/strategies.md): named here so that auto.c needs
 * the strategy itself, not the registry (no call cycle). */
#define DEFAULT_STRATEGY strategy_model

/* Defined in each strategy's file. */
extern const struct builtin_strategy strategy_exhaustive, strategy_random, strategy_swap,
    strategy_ea, strategy_mads, strategy_model, strategy_auto;

/* ---- move helpers (moves.c) ---------------------------------------------- */
/* A uniform random feasible point. */
void move_random_point(const bosch_subproblem *sp, uint8_t *x);
/* The incumbent, or a random feasible point when there is none; returns 1
 * when it is the incumbent (its value in *value). */
int move_start_point(const bosch_subproblem *sp, uint8_t *x, double *value);
/* One swap inside a random block that has both a 1 and a 0: a 1 and a 0 of
 * that block trade places. Returns 0 when no block allows a swap. */
int move_random_swap(const bosch_subproblem *sp, uint8_t *x);
/* The same swap, writing the variable turned 0 and the one turned 1 into
 * changed[0] and changed[1] (changed may be NULL). */
int move_random_swap_at(const bosch_subproblem *sp, uint8_t *x, uint32_t *changed);
/* 1 when x (n bytes) is one of the first m candidates. */
int move_in_batch(const uint8_t *cands, size_t m, const uint8_t *x, size_t n);
/* Number of blocks that allow a swap. */
size_t move_swappable_blocks(const bosch_subproblem *sp);
/* Fills `max` random feasible points (a start batch) and sets *n = max. */
void move_random_batch(const bosch_subproblem *sp, uint8_t *cands, size_t max, size_t *n);
/* Index of the highest value (the first one on ties). */
size_t move_best_index(const double *values, size_t n);

#endif
