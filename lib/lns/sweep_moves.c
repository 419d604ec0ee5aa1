/* Stage 3's flip sweep: the moves its parts share (sweep.c, the flips and
 * pairs; sweep_probe.c, the substitute probe). Kept apart so that neither
 * part calls the other's internals. */
#include <math.h>
#include <string.h>

#include "lns/batch.h"
#include "lns/sweep_state.h"

/* The next chunk (at most batch_size) of the candidates sw_unit[sw_next..
 * total): each is sw_mask with that unit flipped (SIZE_MAX: as it is). */
int lns_sweep_push_chunk(lns *m, size_t total)
{
    struct sweep *sw = m->plan.sweep;
    size_t end = sw->next + (m->cfg.batch ? m->cfg.batch : 1);
    if (end > total)
        end = total;
    sw->chunk = sw->next;
    for (size_t i = sw->next; i < end; i++) {
        size_t u = sw->unit[i];
        if (u != SIZE_MAX)
            sw->mask[u] ^= 1;
        sw->slot[i] = lns_push_fixed(m, sw->mask, BOSCH_STAGE_GROUP);
        if (u != SIZE_MAX)
            sw->mask[u] ^= 1;
        if (sw->slot[i] == INT64_MIN)
            return lns_fail(m, BOSCH_E_NOMEM, "out of memory");
    }
    sw->next = end;
    return (int)m->npend;
}

/* Pushes the committed mask with SWA unit `a` made full and full unit `b`
 * made SWA (sw_mask holds it); LNS_SWAP_INFEASIBLE when that breaks a
 * layer's bounds, else lns_push_fixed's answer. */
int64_t lns_sweep_push_swap(lns *m, size_t a, size_t b)
{
    struct plan *pl = &m->plan;
    struct sweep *sw = m->plan.sweep;
    memcpy(sw->mask, pl->work, m->prob->units);
    sw->mask[a] = 0;
    sw->mask[b] = 1;
    if (!bosch_mask_is_feasible(m->prob, sw->mask))
        return LNS_SWAP_INFEASIBLE;
    return lns_push_fixed(m, sw->mask, BOSCH_STAGE_GROUP);
}

/* The swap (a, b) in sw_mask was scored as record `rec` (< 0: no score):
 * when it gains it becomes the committed mask and both units are used up;
 * returns whether it was kept. */
int lns_sweep_keep(lns *m, int64_t rec, size_t a, size_t b)
{
    struct plan *pl = &m->plan;
    struct sweep *sw = m->plan.sweep;
    double v = rec >= 0 ? lns_objective(m, (size_t)rec) : NAN;
    if (!(v > sw->f))
        return 0;
    memcpy(pl->work, sw->mask, m->prob->units);
    pl->work_record = rec;
    sw->f = v;
    sw->used[a] = 1;
    sw->used[b] = 1;
    return 1;
}
