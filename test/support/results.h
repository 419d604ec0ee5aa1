/*
 * Results (bosch_result): fetching, history entries, comparisons of two
 * results, checks of the final mask.
 */
#ifndef BOSCH_TEST_RESULTS_H
#define BOSCH_TEST_RESULTS_H

#include <stddef.h>
#include <stdint.h>

#include <bosch/bosch.h>

/* The optimizer's result snapshot (asserts success). */
bosch_result *get_result(const bosch_optimizer *opt);

/* History entry i (asserts success); any output may be NULL. */
void history_entry(const bosch_result *r, size_t i, uint8_t *mask, double *score, int *stage);

/* Same status, best mask, scores, counts and history (in order); messages
 * name `what`. At most J_MAXU units. */
void assert_same(const bosch_result *a, const bosch_result *b, const char *what);

/* Same best mask, scores, objective, counts; histories equal in order
 * (strict) or as sets. */
void assert_same_result(const bosch_result *a, const bosch_result *b, int strict_order);

/* 1 when the two histories hold the same masks in the same order. */
int histories_equal(const bosch_result *a, const bosch_result *b);

/* The best feasible score in the history (NaN if none). */
double best_feasible_in_history(const bosch_result *r, const bosch_problem *p);

/* The result has a feasible, binary final mask with the target count that
 * passes both our own and the library's feasibility check. */
void check_final_mask(const bosch_result *r, const bosch_problem *p);

#endif /* BOSCH_TEST_RESULTS_H */
