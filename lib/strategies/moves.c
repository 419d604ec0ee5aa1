#include <stdlib.h>
#include <string.h>

#include "strategies/builtin.h"

void move_random_point(const bosch_subproblem *sp, uint8_t *x)
{
    size_t n = bosch_subproblem_vars(sp);
    memset(x, 0, n);
    size_t nb = bosch_subproblem_blocks(sp);
    for (size_t b = 0; b < nb; b++) {
        /* Selection sampling (Knuth's algorithm S): k of the block's vars. */
        uint32_t size = bosch_subproblem_block_size(sp, b);
        uint32_t need = bosch_subproblem_block_count(sp, b);
        uint32_t seen = 0;
        for (size_t v = 0; v < n && need > 0; v++) {
            if (bosch_subproblem_block_of(sp, v) != b)
                continue;
            if (bosch_subproblem_random_below(sp, size - seen) < need) {
                x[v] = 1;
                need--;
            }
            seen++;
        }
    }
}

int move_start_point(const bosch_subproblem *sp, uint8_t *x, double *value)
{
    if (bosch_subproblem_incumbent(sp, x, value) == BOSCH_OK)
        return 1;
    move_random_point(sp, x);
    return 0;
}

size_t move_swappable_blocks(const bosch_subproblem *sp)
{
    size_t c = 0;
    for (size_t b = 0; b < bosch_subproblem_blocks(sp); b++) {
        uint32_t k = bosch_subproblem_block_count(sp, b);
        c += k > 0 && k < bosch_subproblem_block_size(sp, b);
    }
    return c;
}

int move_random_swap_at(const bosch_subproblem *sp, uint8_t *x, uint32_t *changed)
{
    size_t nswap = move_swappable_blocks(sp);
    if (nswap == 0)
        return 0;
    size_t pick = (size_t)bosch_subproblem_random_below(sp, nswap), b;
    for (b = 0;; b++) {
        uint32_t k = bosch_subproblem_block_count(sp, b);
        if (k > 0 && k < bosch_subproblem_block_size(sp, b) && pick-- == 0)
            break;
    }
    uint32_t k = bosch_subproblem_block_count(sp, b);
    uint32_t size = bosch_subproblem_block_size(sp, b);
    uint64_t one = bosch_subproblem_random_below(sp, k);
    uint64_t zero = bosch_subproblem_random_below(sp, size - k);
    size_t n = bosch_subproblem_vars(sp), vo = n, vz = n;
    for (size_t v = 0; v < n; v++) {
        if (bosch_subproblem_block_of(sp, v) != b)
            continue;
        if (x[v]) {
            if (one-- == 0)
                vo = v;
        } else if (zero-- == 0) {
            vz = v;
        }
    }
    x[vo] = 0;
    x[vz] = 1;
    if (changed) {
        changed[0] = (uint32_t)vo;
        changed[1] = (uint32_t)vz;
    }
    return 1;
}

int move_random_swap(const bosch_subproblem *sp, uint8_t *x)
{
    return move_random_swap_at(sp, x, NULL);
}

int move_in_batch(const uint8_t *cands, size_t m, const uint8_t *x, size_t n)
{
    for (size_t i = 0; i < m; i++)
        if (memcmp(cands + i * n, x, n) == 0)
            return 1;
    return 0;
}

void move_random_batch(const bosch_subproblem *sp, uint8_t *cands, size_t max, size_t *n)
{
    size_t nv = bosch_subproblem_vars(sp);
    for (size_t i = 0; i < max; i++)
        move_random_point(sp, cands + i * nv);
    *n = max;
}

size_t move_best_index(const double *values, size_t n)
{
    size_t best = 0;
    for (size_t i = 1; i < n; i++)
        if (values[i] > values[best])
            best = i;
    return best;
}
