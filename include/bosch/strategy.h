/*
 * libbosch search strategies: the pluggable black-box binary optimizer that
 * BOSCH runs inside every subproblem of its Large Neighborhood Search.
 * Include <bosch/bosch.h> rather than this file.
 *
 * A *subproblem* is a small binary problem: n variables x[0..n-1] in {0,1}
 * (1 = SWA), split into blocks; a candidate is feasible when every block b
 * holds exactly block_count(b) ones. In stage 1 the variables are the units
 * of one layer; in stage 3 the units of a chunk of layers (one block per
 * layer); in the layer-level variant whole layers (one block).
 *
 * A strategy is ask/tell itself: propose() writes up to `max` candidates,
 * observe() receives them back with their values (higher is better), in
 * proposal order, once all are known. The library repairs every proposal to
 * the block counts first (random tie-breaking from the subproblem's seeded
 * stream), answers already evaluated candidates from its cache without
 * spending budget, and evaluates each distinct new candidate once.
 * observe() sees the repaired candidates. propose() returning *n == 0 means
 * "finished": the unused budget rolls over to later subproblems. After 64
 * consecutive batches without a new evaluation the subproblem is closed.
 *
 * Strategies must be deterministic given the subproblem's random stream,
 * never depend on timing, and never print. Callbacks return 0 on success;
 * anything else stops the search with BOSCH_E_STRATEGY.
 */
#ifndef BOSCH_STRATEGY_H
#define BOSCH_STRATEGY_H

#include "bosch/bosch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* bosch_strategy and bosch_subproblem are declared in <bosch/bosch.h>. */

/* Creates the per-subproblem state in *state (may stay NULL). */
typedef int (*bosch_strategy_init_fn)(void **state, const bosch_subproblem *sp, void *user);
/* Writes up to `max` candidates (n_vars bytes each, back to back) into
 * `cands` and their number into *n (0 = finished). */
typedef int (*bosch_strategy_propose_fn)(void *state, const bosch_subproblem *sp, uint8_t *cands,
                                         size_t max, size_t *n);
/* The candidates of the last proposal after repair, with their values. */
typedef int (*bosch_strategy_observe_fn)(void *state, const bosch_subproblem *sp,
                                         const uint8_t *cands, const double *values, size_t n);
/* Frees the per-subproblem state (called once per successful init). */
typedef void (*bosch_strategy_destroy_fn)(void *state, void *user);

/* A user strategy. `name` is copied; `destroy` may be NULL; `user` is
 * passed to every callback and must outlive every optimizer using the
 * strategy (the library never frees it). Returns NULL on bad arguments
 * (bosch_create_error() says which). */
BOSCH_API bosch_strategy *bosch_strategy_create(const char *name, bosch_strategy_init_fn init,
                                                bosch_strategy_propose_fn propose,
                                                bosch_strategy_observe_fn observe,
                                                bosch_strategy_destroy_fn destroy, void *user);
/* Pre-1.0 name of bosch_strategy_create, kept until 1.0. */
BOSCH_API BOSCH_DEPRECATED("bosch_strategy_create") bosch_strategy *bosch_strategy_new(
    const char *name, bosch_strategy_init_fn init, bosch_strategy_propose_fn propose,
    bosch_strategy_observe_fn observe, bosch_strategy_destroy_fn destroy, void *user);
/* A built-in strategy by name, NULL if unknown:
 *   "auto"       exhaustive when the subproblem's feasible set fits its
 *                budget, else "model" (the default strategy)
 *   "exhaustive" every feasible candidate once: per block the k-subsets of
 *                its variables in lexicographic order of their sorted
 *                positions ({0,1} first), the last block varying fastest
 *   "random"     independent uniform feasible samples
 *   "swap"       iterated local search over swap moves (one SWA and
 *                one full unit of the same block trade places), moving to the
 *                best of each batch of neighbours when it improves, with
 *                restarts from the incumbent after three random swaps
 *   "ea"         (1+lambda) evolutionary algorithm with swap mutation
 *   "mads"       MADS-style poll on {0,1}: random flip directions of a mesh
 *                size that doubles on success and halves on failure, repaired
 *                to feasibility; restarts when the mesh collapses
 *   "model"      surrogate-screened annealing (the default): a linear model
 *                of the objective, fitted by recursive least squares on
 *                every point evaluated in the subproblem (its history
 *                included), scores many random swap moves and the best
 *                unseen one is evaluated; Metropolis acceptance on the
 *                measured values under a falling temperature */
BOSCH_API bosch_strategy *bosch_strategy_builtin(const char *name);
BOSCH_API size_t bosch_strategy_builtin_count(void);
BOSCH_API const char *bosch_strategy_builtin_name(size_t i); /* NULL past the end */
BOSCH_API bosch_strategy *bosch_strategy_clone(const bosch_strategy *s);
BOSCH_API const char *bosch_strategy_name(const bosch_strategy *s);
BOSCH_API void bosch_strategy_free(bosch_strategy *s);

/* ------------------------------------------------------------------------ */
/* Subproblem view (what a strategy may read)                                */
/* ------------------------------------------------------------------------ */
BOSCH_API size_t bosch_subproblem_vars(const bosch_subproblem *sp);
BOSCH_API size_t bosch_subproblem_blocks(const bosch_subproblem *sp);
BOSCH_API uint32_t bosch_subproblem_block_of(const bosch_subproblem *sp, size_t var);
BOSCH_API uint32_t bosch_subproblem_block_size(const bosch_subproblem *sp, size_t block);
BOSCH_API uint32_t bosch_subproblem_block_count(const bosch_subproblem *sp, size_t block);
/* Number of feasible candidates (UINT64_MAX when it does not fit). */
BOSCH_API uint64_t bosch_subproblem_size(const bosch_subproblem *sp);
/* Evaluations this subproblem may still spend. */
BOSCH_API uint64_t bosch_subproblem_budget_left(const bosch_subproblem *sp);
/* Best candidate seen in this subproblem (or the start point it was given).
 * BOSCH_E_NOT_FOUND when there is none yet. Either pointer may be NULL. */
BOSCH_API int bosch_subproblem_incumbent(const bosch_subproblem *sp, uint8_t *x, double *value);
/* 1 and *value when x (feasible) has already been evaluated, else 0. */
BOSCH_API int bosch_subproblem_lookup(const bosch_subproblem *sp, const uint8_t *x, double *value);
/* The points already evaluated that lie in this subproblem (block counts
 * met, every unit outside its variables as in the subproblem's base), in
 * evaluation order, its own evaluations included: what a strategy can
 * warm-start from, e.g. earlier stages' evaluations in stage 3's polish
 * (full-fidelity first evaluations only: screened scores and confirmation
 * draws are not listed).
 * The count grows as the subproblem evaluates; bosch_subproblem_history
 * writes point i (x: bosch_subproblem_vars bytes; either pointer may be
 * NULL) and returns BOSCH_E_NOT_FOUND past the end. */
BOSCH_API size_t bosch_subproblem_history_count(const bosch_subproblem *sp);
BOSCH_API int bosch_subproblem_history(const bosch_subproblem *sp, size_t i, uint8_t *x,
                                       double *value);
/* The host's priors for the subproblem's variables (bosch_set_priors: per
 * unit, higher = more important to keep full attention, e.g. FISHER; a
 * variable that stands for several units gets their mean), written to
 * prior (bosch_subproblem_vars values). BOSCH_E_NOT_FOUND when the host gave
 * none. A strategy may warm-start from them (the variables of lowest prior
 * set to 1) or feed them to a surrogate; the builtin "model" does both. */
BOSCH_API int bosch_subproblem_prior(const bosch_subproblem *sp, double *prior);
/* The subproblem's deterministic random stream (the only randomness a
 * strategy should use). */
BOSCH_API uint64_t bosch_subproblem_random(const bosch_subproblem *sp);
/* Uniform integer in [0, bound) (bound >= 1), unbiased. */
BOSCH_API uint64_t bosch_subproblem_random_below(const bosch_subproblem *sp, uint64_t bound);
/* Repairs x in place to the block counts (minimal changes; priority as in
 * bosch_repair(), NULL = random tie-breaking from the stream). Returns the
 * number of changed variables. */
BOSCH_API int bosch_subproblem_repair(const bosch_subproblem *sp, uint8_t *x,
                                      const double *priority);

/* ------------------------------------------------------------------------ */
/* Standalone harness: run one strategy on a problem of your own             */
/* ------------------------------------------------------------------------ */
/* EXPERIMENTAL TIER (docs/abi.md): not covered by the ABI promise, visible
 * only with BOSCH_EXPERIMENTAL_API defined; its symbols are in the version
 * node LIBBOSCH_EXPERIMENTAL_0. */
#if defined(BOSCH_EXPERIMENTAL_API) && !defined(BOSCH_STRATEGY_H_EXPERIMENTAL)
#define BOSCH_STRATEGY_H_EXPERIMENTAL
/* block_of[v] < n_blocks for every variable; counts[b] <= size of block b.
 * Returns NULL on inconsistent arguments. */
BOSCH_API bosch_subproblem *bosch_subproblem_create(size_t n_vars, size_t n_blocks,
                                                    const uint32_t *block_of,
                                                    const uint32_t *counts, uint64_t seed);
BOSCH_API void bosch_subproblem_free(bosch_subproblem *sp);
/* Optional start point with its known value (becomes the incumbent). */
BOSCH_API int bosch_subproblem_set_start(bosch_subproblem *sp, const uint8_t *x, double value);
/* Optional priors of the variables (bosch_subproblem_vars values, copied;
 * NULL clears), as bosch_subproblem_prior reads them. BOSCH_E_BAD_SCORE
 * when one is not finite. */
BOSCH_API int bosch_subproblem_set_prior(bosch_subproblem *sp, const double *prior);

typedef int (*bosch_objective_fn)(const uint8_t *x, size_t n_vars, double *value, void *user);
/* Runs `s` on `sp` until the strategy finishes or `budget` evaluations are
 * spent, proposing `batch` candidates at a time, with exactly the machinery
 * the optimizer uses (repair, cache, budget). Writes the best candidate (if
 * best_x is non-NULL), its value and the evaluations used. Returns
 * BOSCH_DONE (strategy finished), BOSCH_BUDGET_REACHED, or an error
 * (BOSCH_E_EVALUATOR when f returns non-zero, BOSCH_E_BAD_SCORE on NaN/inf,
 * BOSCH_E_STRATEGY). A subproblem can be solved once; create a new one to
 * solve again. */
BOSCH_API int bosch_strategy_solve(const bosch_strategy *s, bosch_subproblem *sp,
                                   bosch_objective_fn f, void *user, uint64_t budget,
                                   uint32_t batch, uint8_t *best_x, double *best_value,
                                   uint64_t *evaluations);
#endif /* BOSCH_EXPERIMENTAL_API */

#ifdef __cplusplus
}
#endif

#endif /* BOSCH_STRATEGY_H */
