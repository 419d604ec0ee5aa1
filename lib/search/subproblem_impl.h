/* Internal layout of a subproblem: a block-constrained binary problem whose
 * variables map onto units of the full mask, plus its evaluation budget,
 * random stream and incumbent. */
#ifndef LIBBOSCH_SEARCH_SUBPROBLEM_IMPL_H
#define LIBBOSCH_SEARCH_SUBPROBLEM_IMPL_H

#include "bosch/bosch.h"
#include "core/cache.h"
#include "core/rng.h"

/* The evaluated points lying in a subproblem (filled by history.c). */
struct sp_history {
    int64_t *rec;           /* their store records, in evaluation order */
    size_t n, cap, scanned; /* scanned: store records looked at so far */
    uint8_t *full, *x;      /* scratch */
    uint64_t *packed;
};

/* Value of a stored record as the strategy sees it (higher is better). */
typedef double (*record_value_fn)(const void *ctx, size_t record);

struct bosch_subproblem {
    size_t n, nblocks;
    uint32_t *block_of;    /* n */
    uint32_t *counts;      /* nblocks: required ones per block */
    size_t *block_start;   /* nblocks + 1, into block_vars */
    size_t *block_vars;    /* vars grouped by block, increasing */
    size_t units;          /* full mask size */
    uint8_t *base;         /* full mask the variables are written into */
    size_t *var_start;     /* n + 1, into var_units */
    size_t *var_units;     /* units each variable sets */
    prng *rng;             /* the random stream (behind a pointer: a strategy's const
                              view draws from it; scratch and full likewise) */
    uint64_t budget;
    double used;           /* full-evaluation equivalents spent */
    uint8_t *inc;          /* incumbent (n) */
    double inc_value;
    int has_inc;
    int64_t inc_record;    /* store record of the incumbent, -1 if unknown */
    const eval_store *store;
    record_value_fn value_of;
    const void *value_ctx;
    int solved;            /* standalone: bosch_strategy_solve already ran */
    const bosch_problem *global_repair; /* non-NULL: expanded masks are repaired to
                                           the problem's global target (layer-level) */
    double *repair_prio;   /* priorities for that repair (units) */
    eval_store own_store; /* standalone subproblems evaluate into this */
    uint64_t *scratch;     /* packed full mask (store words) */
    uint8_t *full;         /* unpacked full mask (units) */
    struct sp_history *hist; /* evaluated points lying in the subproblem (history.c) */
    double *prior;         /* n: the host's priors per variable, NULL = none (prior.c) */
};

/* Builds a subproblem over `n` variables. var_units: CSR mapping (NULL =
 * identity, units == n). base: full mask copied (NULL = all zero). */
bosch_subproblem *subproblem_new(size_t n, size_t nblocks, const uint32_t *block_of,
                                 const uint32_t *counts, size_t units, const uint8_t *base,
                                 const size_t *var_start, const size_t *var_units,
                                 uint64_t seed, uint64_t stream);
/* Writes the base with the variables x applied into full (units bytes),
 * without any repair. */
void subproblem_apply(const bosch_subproblem *sp, const uint8_t *x, uint8_t *full);
/* Writes x into sp->full (the base with the variables applied, repaired to
 * the global target when global_repair is set) and packs it into sp->scratch. */
void subproblem_expand(const bosch_subproblem *sp, const uint8_t *x);
/* Sets the variables' priors from per-unit priors (non-NULL; the mean over
 * each variable's units). BOSCH_E_NOMEM when memory runs out. */
int subproblem_prior_from_units(bosch_subproblem *sp, const double *unit_prior);
/* Repair to block counts with random tie-breaking. */
int subproblem_repair_random(const bosch_subproblem *sp, uint8_t *x);
/* Restricts a full mask to the variables (var takes its first unit's value). */
void subproblem_restrict(const bosch_subproblem *sp, const uint8_t *full, uint8_t *x);

#endif
