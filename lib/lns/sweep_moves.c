/* Stage 3's flip sweep: the moves its parts share (sweep.c, the flips and
 * pairs; sweep_probe.c, the substitute probe). Kept apart so that neither
 * part calls the other's internals. */
#include <math.h>
#include <string.h>

#include "lns/lns_impl.h"

/* The next chunk (at most batch_size) of the candidates sw_unit[sw_next..
 * total): each is sw_mask with that unit flipped (SIZE_MAX: as it is). */
int lns_sweep_push_chunk(lns *m, size_t total)
{
    struct plan *pl = &m->plan;
    size_t end = pl->sw_next + (m->cfg.batch ? m->cfg.batch : 1);
    if (end > total)
        end = total;
    pl->sw_chunk = pl->sw_next;
    for (size_t i = pl->sw_next; i < end; i++) {
        size_t u = pl->sw_unit[i];
        if (u != SIZE_MAX)
            pl->sw_mask[u] ^= 1;
        pl->sw_slot[i] = lns_push_fixed(m, pl->sw_mask, BOSCH_STAGE_GROUP);
        if (u != SIZE_MAX)
            pl->sw_mask[u] ^= 1;
        if (pl->sw_slot[i] == INT64_MIN)
            return lns_fail(m, BOSCH_E_NOMEM, "out of memory");
    }
    pl->sw_next = end;
    return (int)m->npend;
}

/* Pushes the committed mask with SWA unit `a` made full and full unit `b`
 * made SWA (sw_mask holds it); LNS_SWAP_INFEASIBLE when that breaks a
 * layer's bounds, else lns_push_fixed's answer. */
int64_t lns_sweep_push_swap(lns *m, size_t a, size_t b)
{
    struct plan *pl = &m->plan;
    memcpy(pl->sw_mask, pl->work, m->prob->units);
    pl->sw_mask[a] = 0;
    pl->sw_mask[b] = 1;
    if (!bosch_mask_is_feasible(m->prob, pl->sw_mask))
        return LNS_SWAP_INFEASIBLE;
    return lns_push_fixed(m, pl->sw_mask, BOSCH_STAGE_GROUP);
}

/* The swap (a, b) in sw_mask was scored as record `rec` (< 0: no score):
 * when it gains it becomes the committed mask and both units are used up;
 * returns whether it was kept. */
int lns_sweep_keep(lns *m, int64_t rec, size_t a, size_t b)
{
    struct plan *pl = &m->plan;
    double v = rec >= 0 ? lns_objective(m, (size_t)rec) : NAN;
    if (!(v > pl->sw_f))
        return 0;
    memcpy(pl->work, pl->sw_mask, m->prob->units);
    pl->work_record = rec;
    pl->sw_f = v;
    pl->sw_used[a] = 1;
    pl->sw_used[b] = 1;
    return 1;
}
