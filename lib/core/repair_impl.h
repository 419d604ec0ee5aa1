/* The repair primitive shared by bosch_repair() and subproblem repair. */
#ifndef BOSCH_CORE_REPAIR_IMPL_H
#define BOSCH_CORE_REPAIR_IMPL_H

#include <stddef.h>
#include <stdint.h>

/* Among the positions idx[0..n-1] of x, changes as few as possible so that
 * exactly `target` hold 1. Ones are cleared in order of increasing
 * priority, zeros set in order of decreasing priority; ties go to the lower
 * position. `prio` is indexed by position and may be NULL (all equal).
 * `cap_of`/`cap` optionally limit how many changes each group may take:
 * position p belongs to group cap_of[p] whose remaining allowance cap[g] is
 * decremented per change (both NULL = unlimited). Returns the number of
 * changes made, or -1 when target cannot be reached. */
long repair_to_count(uint8_t *x, const size_t *idx, size_t n, size_t target, const double *prio,
                     const uint32_t *cap_of, uint32_t *cap);

#endif
