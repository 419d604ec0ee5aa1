/* Stage 2's allocation arithmetic, apart from any state (allocation.c). */
#ifndef LIBBOSCH_LNS_ALLOCATION_H
#define LIBBOSCH_LNS_ALLOCATION_H

#include <stddef.h>
#include <stdint.h>

/* Exact per-layer counts k[l] in [lo[l], hi[l]] summing to target (BOSCH_OK,
 * or BOSCH_E_INFEASIBLE / BOSCH_E_NOMEM); layers
 * of small weight (easy) get more SWA. weight NULL = uniform. */
int alloc_counts(uint32_t layers, uint32_t groups, const uint32_t *lo, const uint32_t *hi,
                 size_t target, double rho, const double *weight, double spread, uint32_t *k);

#endif
