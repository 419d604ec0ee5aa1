/* Evaluation store: every evaluated mask with its score, in evaluation
 * order (the history), plus a hash index so that no mask is ever sent to
 * the evaluator twice. */
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
    size_t tcap;      /* hash table capacity, a power of two */
    int64_t *slots;   /* record index, -1 = empty */
} eval_store;

int store_init(eval_store *s, size_t units);
void store_free(eval_store *s);
/* Deep copy (for result snapshots). */
int store_copy(eval_store *dst, const eval_store *src);
/* Index of the record holding `packed`, or -1. */
int64_t store_find(const eval_store *s, const uint64_t *packed);
/* Appends a record; returns its index or BOSCH_E_NOMEM. The mask must not
 * be in the store yet. */
int64_t store_add(eval_store *s, const uint64_t *packed, double score, int stage, int eligible,
                  double wall);

static inline const uint64_t *store_mask(const eval_store *s, size_t i)
{
    return s->masks + i * s->words;
}

#endif
