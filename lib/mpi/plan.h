/* How a batch is cut into pieces for the ranks (internal; no MPI). */
#ifndef BOSCH_MPI_PLAN_H
#define BOSCH_MPI_PLAN_H

#include <stddef.h>

/* Parts per request for a batch of n requests of k[i] samples over
 * `ranks` evaluating ranks: the s (request i cut into min(s, k[i]) parts
 * of consecutive samples, as equal as they go) whose estimated makespan,
 * ceil(pieces / ranks) x the longest piece's samples, is smallest; the
 * smallest such s. 1 for n = 0 or ranks <= 1. */
size_t mpi_parts(const size_t *k, size_t n, size_t ranks);

/* Samples [*first, *first + *count) of part p of a request of k samples
 * cut into `parts` parts (parts <= k). */
void mpi_part(size_t k, size_t parts, size_t p, size_t *first, size_t *count);

#endif
