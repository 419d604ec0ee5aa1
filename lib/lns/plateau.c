/* The stopping rule [ours] (option stop_tolerance): stage 3's polish ends
 * when the best's recent rate of gain, carried over the budget left, would
 * raise it by less than the tolerance. The evidence is the store alone (no
 * clock, no thread), so a resumed, replayed or distributed run decides the
 * same at the same evaluation. */
#include <math.h>

#include "lns/stage.h"

/* Fewest evaluations (full-evaluation equivalents) a decision rests on, and
 * the polish must have made of its own. */
#define PLATEAU_MIN_WINDOW 24.0

/* Best objective of the records that may become the result, among the
 * first `end`; -INFINITY when there is none. */
static double best_before(const lns *m, size_t end)
{
    const eval_store *s = &m->store;
    double best = -INFINITY;
    for (size_t r = 0; r < end; r++)
        if (s->eligible[r] && store_is_plain(s, r)) {
            double v = lns_objective(m, r);
            if (v > best)
                best = v;
        }
    return best;
}

int lns_plateau_due(lns *m)
{
    const eval_store *s = &m->store;
    const struct plan *pl = &m->plan;
    if (!(m->cfg.stop_tolerance > 0.0) || !m->anchors_known)
        return 0;
    double group = 0.0, polish = 0.0;
    for (size_t r = 0; r < s->n; r++)
        if (s->stages[r] == BOSCH_STAGE_GROUP) {
            group += s->fidelity[r];
            polish += r >= pl->polish_first ? s->fidelity[r] : 0.0;
        }
    uint64_t left = lns_budget_left(m);
    if (polish < PLATEAU_MIN_WINDOW || left == 0)
        return 0;
    /* The window: the newest records worth at least w evaluations. */
    double w = fmax(PLATEAU_MIN_WINDOW, group / 3.0), span = 0.0;
    size_t from = s->n;
    while (from > 0 && span < w)
        span += s->fidelity[--from];
    double now = m->best_record >= 0 ? lns_objective(m, (size_t)m->best_record) : -INFINITY;
    double then = best_before(m, from);
    if (!isfinite(then) || !isfinite(now))
        return 0; /* no feasible best before the window: no rate to project */
    double gain = now - then, projected = gain * (double)left / span;
    if (projected >= m->cfg.stop_tolerance)
        return 0;
    lns_log(m, BOSCH_LOG_INFO,
            "plateau: the best S^ rose %.3g over the last %.6g evaluations; at that rate the "
            "%llu left would add %.3g < stop_tolerance %g: stopping after %.6g of %llu "
            "evaluations",
            gain, span, (unsigned long long)left, projected, m->cfg.stop_tolerance, s->cost,
            (unsigned long long)m->cfg.budget);
    return 1;
}
