/*
 * A separable objective for strategy tests: the sum of w[v] over the
 * variables set to 1, as a bosch_objective_fn, with its exact optimum under
 * block counts (test_model, test_priors).
 */
#ifndef BOSCH_TEST_LINEAR_H
#define BOSCH_TEST_LINEAR_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    const double *w;
    size_t calls;   /* evaluations so far */
    uint8_t *first; /* non-NULL: receives the first point evaluated */
} linear_objective;

/* bosch_objective_fn; user is a linear_objective. */
int linear_fn(const uint8_t *x, size_t n, double *value, void *user);

/* Best value with exactly counts[b] ones per block: the largest weights. */
double linear_optimum(const double *w, size_t n, const uint32_t *block_of,
                      const uint32_t *counts, size_t nblocks);

#endif /* BOSCH_TEST_LINEAR_H */
