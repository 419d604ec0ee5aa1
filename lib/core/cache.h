/* Evaluation store: every evaluation with its score, in evaluation order
 * (the history), plus a hash index so that no request (mask, fidelity,
 * draw) is ever sent to the evaluator twice. A mask may hold several
 * records (a screened score, its full-fidelity score, confirmation draws):
 * they form a ring (next), and the index points at the mask's primary
 * record, its first at full fidelity and draw 0 when there is one. */
#ifndef BOSCH_CORE_CACHE_H
#define BOSCH_CORE_CACHE_H

#include <stddef.h>
#include <stdint.h>

typedef struct eval_store {
    size_t units, words;
    size_t n, cap;
    uint64_t *masks;  /* n * words */
    double *scores;   /* raw scores */
    double *walls;    /* wall time of each evaluation in seconds (NaN = unknown) */
    int8_t *stages;   /* enum bosch_stage */
    uint8_t *eligible; /* 1 = may be returned as the final answer */
    double *fidelity; /* share of the samples scored, (0, 1] */
    uint32_t *draws;  /* 0 = first evaluation, >= 1 = confirmation draws */
    int64_t *next;    /* ring of the records of one mask */
    double cost;      /* sum of fidelity: full-evaluation equivalents */
    size_t tcap;      /* hash table capacity, a power of two */
    int64_t *slots;   /* record index, -1 = empty */
} eval_store;

int store_init(eval_store *s, size_t units);
void store_free(eval_store *s);
/* Deep copy (for result snapshots). */
int store_copy(eval_store *dst, const eval_store *src);
/* The primary record of `packed`, or -1. */
int64_t store_find(const eval_store *s, const uint64_t *packed);
/* The record of exactly this request, or -1. */
int64_t store_find_request(const eval_store *s, const uint64_t *packed, double fidelity,
                           uint32_t draw);
/* Appends a record (fidelity 1, draw 0); returns its index or BOSCH_E_NOMEM. */
int64_t store_add(eval_store *s, const uint64_t *packed, double score, int stage, int eligible,
                  double wall);
/* Appends a record of any request; the request must not be in the store. */
int64_t store_add_request(eval_store *s, const uint64_t *packed, double score, int stage,
                          int eligible, double wall, double fidelity, uint32_t draw);
/* Whole evaluations left of `budget` after spending `spent` full-evaluation
 * equivalents (0 when none; a hair of rounding error is forgiven). */
static inline uint64_t evals_left(double budget, double spent)
{
    double left = budget - spent;
    return left > 1e-9 ? (uint64_t)(left + 1e-9) : 0;
}

/* Non-zero for a record at full fidelity and draw 0. */
static inline int store_is_plain(const eval_store *s, size_t r)
{
    return s->fidelity[r] >= 1.0 && s->draws[r] == 0;
}

static inline const uint64_t *store_mask(const eval_store *s, size_t i)
{
    return s->masks + i * s->words;
}

#endif
