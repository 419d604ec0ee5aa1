/* Stage 3's flip sweep, its last part [ours]: the substitute probe.
 * The sweep's pairs predict a swap by adding two flips, which misses units
 * that can stand in for each other: a full unit whose loss is outsized
 * (SWEEP_CRIT times the median loss of the full units: it alone carries
 * something) may share that with a SWA unit, and swapping the two then
 * costs only their own small effects. A round scores one mask with all
 * such critical units SWA (the base), then single units changed on it:
 * - SWA units of largest gain made full: the gain there beyond the unit's
 *   gain alone (its excess) is what it restores, and its partner is the
 *   critical unit whose loss that excess matches; the swap is predicted as
 *   the two flips plus the excess;
 * - units the pairs made full, made SWA again: an excess loss means the
 *   unit now carries what the matched critical unit carries, which is
 *   therefore redundant, and is swapped with the next SWA unit of largest
 *   gain.
 * Exchanges predicted to gain are scored one at a time, kept when they
 * gain; rounds go on down the SWA units while the budget lasts. On a
 * landscape without such units (no excess) a round costs its probes and
 * changes nothing. Measured in docs/benchmarks-history.md, "Result with the
 * substitute probe". */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lns/batch.h"
#include "lns/sweep_state.h"

#define SWEEP_CRIT 3.0

static double loss_of(const struct sweep *sw, size_t u)
{
    return -sw->gain[u];
}

/* The critical units and the probes; 0 when there is nothing to probe. */
static int probe_plan(lns *m)
{
    struct plan *pl = &m->plan;
    struct sweep *sw = m->plan.sweep;
    uint64_t left = lns_budget_left(m);
    size_t nfull = 0;
    double *loss;
    if (left < 3 || sw->nfull == 0 ||
        (sw->probe_from >= sw->nswa && sw->kept_next >= sw->nkept))
        return 0;
    loss = malloc(sw->nfull * sizeof *loss);
    if (!sw->crit)
        sw->crit = malloc(sw->nfull * sizeof *sw->crit);
    if (!sw->excess)
        sw->excess = malloc((sw->n + 1) * sizeof *sw->excess);
    if (!sw->off)
        sw->off = malloc(sw->n + 1);
    if (!loss || !sw->crit || !sw->excess || !sw->off) {
        free(loss);
        return lns_fail(m, BOSCH_E_NOMEM, "out of memory");
    }
    for (size_t j = 0; j < sw->nfull; j++) {
        size_t u = sw->full[j];
        if (!sw->used[u] && isfinite(sw->gain[u]))
            loss[nfull++] = loss_of(sw, u);
    }
    sw->ncrit = 0;
    sw->crit_min = INFINITY;
    if (nfull > 0) {
        qsort(loss, nfull, sizeof *loss, lns_by_double);
        double cut = SWEEP_CRIT * loss[nfull / 2];
        for (size_t j = 0; j < sw->nfull && cut > 0.0; j++) {
            size_t u = sw->full[j];
            if (!sw->used[u] && isfinite(sw->gain[u]) && loss_of(sw, u) > cut) {
                sw->crit[sw->ncrit++] = u;
                if (loss_of(sw, u) < sw->crit_min)
                    sw->crit_min = loss_of(sw, u);
            }
        }
    }
    free(loss);
    if (sw->ncrit == 0)
        return 0;
    /* Probes: unused SWA units by gain, at most sweep_pairs, and a quarter
     * of what is left kept for the exchanges. */
    size_t cap = (size_t)((left - 1) * 3 / 4);
    if (cap > m->cfg.sweep_pairs)
        cap = m->cfg.sweep_pairs;
    sw->nprobe = 0;
    sw->unit[0] = SIZE_MAX; /* the base */
    /* First the units kept pairs made full: one that restores what a
     * critical unit carries has made that unit redundant. */
    for (; sw->kept_next < sw->nkept && sw->nprobe < cap; sw->kept_next++) {
        size_t u = sw->kept[sw->kept_next];
        if (!pl->work[u] && isfinite(sw->gain[u])) {
            sw->off[1 + sw->nprobe] = 1;
            sw->unit[1 + sw->nprobe++] = u;
        }
    }
    for (; sw->probe_from < sw->nswa && sw->nprobe < cap; sw->probe_from++) {
        size_t u = sw->swa[sw->probe_from];
        if (!sw->used[u] && isfinite(sw->gain[u])) {
            sw->off[1 + sw->nprobe] = 0;
            sw->unit[1 + sw->nprobe++] = u;
        }
    }
    if (sw->nprobe == 0)
        return 0;
    sw->probed += sw->nprobe;
    sw->next = 0;
    sw->state = SWEEP_PROBES;
    return 1;
}

/* The next chunk of the base and the probes (at most batch_size). */
static int push_probes(lns *m)
{
    struct plan *pl = &m->plan;
    struct sweep *sw = m->plan.sweep;
    memcpy(sw->mask, pl->work, m->prob->units);
    for (size_t c = 0; c < sw->ncrit; c++)
        sw->mask[sw->crit[c]] = 1;
    return lns_sweep_push_chunk(m, sw->nprobe + 1);
}

static void probes_told(lns *m)
{
    struct sweep *sw = m->plan.sweep;
    for (size_t i = sw->chunk; i < sw->next; i++) {
        int64_t rec = lns_slot_record(m, sw->slot[i]);
        double v = rec >= 0 ? lns_normalized(m, m->store.scores[rec]) : NAN;
        if (i == 0)
            sw->base = v;
        else if (sw->off[i]) /* loss beyond the gain it brought */
            sw->excess[i] = (sw->base - v) - sw->gain[sw->unit[i]];
        else /* gain beyond its gain alone */
            sw->excess[i] = v - sw->base - sw->gain[sw->unit[i]];
    }
}

static const double *sort_pred;

static int by_pred_desc(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    if (sort_pred[x] != sort_pred[y])
        return sort_pred[x] < sort_pred[y] ? 1 : -1;
    return (x > y) - (x < y);
}

/* Exchanges from the probes, best predicted first. */
static int plan_exchanges(lns *m)
{
    struct sweep *sw = m->plan.sweep;
    size_t np = sw->nprobe;
    size_t *order = malloc(np * sizeof *order);
    double *pred = malloc((np + 1) * sizeof *pred);
    size_t *partner = malloc((np + 1) * sizeof *partner);
    size_t *swa = malloc((np + 1) * sizeof *swa), spare = 0;
    free(sw->xa);
    free(sw->xb);
    sw->xa = malloc(np * sizeof *sw->xa);
    sw->xb = malloc(np * sizeof *sw->xb);
    if (!order || !pred || !partner || !swa || !sw->xa || !sw->xb) {
        free(swa);
        free(order);
        free(pred);
        free(partner);
        return lns_fail(m, BOSCH_E_NOMEM, "out of memory");
    }
    size_t k = 0;
    for (size_t i = 1; i <= np && isfinite(sw->base); i++) {
        double e = sw->excess[i];
        /* Half the smallest critical loss: well above rounding, well below
         * any critical unit's share. */
        if (!(e > 0.5 * sw->crit_min))
            continue;
        size_t best = SIZE_MAX;
        double bd = INFINITY;
        for (size_t c = 0; c < sw->ncrit; c++) {
            double d = loss_of(sw, sw->crit[c]) - e;
            /* the partner's loss covers the excess (up to a tenth) */
            if (d > -0.1 * e && fabs(d) < bd) {
                bd = fabs(d);
                best = sw->crit[c];
            }
        }
        if (best == SIZE_MAX)
            continue;
        size_t a = sw->unit[i];
        if (sw->off[i]) {
            /* `best` is redundant now: its loss is only what `a` cannot
             * restore; its swap partner is the next SWA unit of largest gain. */
            while (spare < sw->nswa &&
                   (sw->used[sw->swa[spare]] || !isfinite(sw->gain[sw->swa[spare]])))
                spare++;
            if (spare == sw->nswa)
                continue;
            a = sw->swa[spare++];
        }
        pred[i] = sw->gain[a] + sw->gain[best] + e;
        if (!(pred[i] > 0.0))
            continue;
        swa[i] = a;
        partner[i] = best;
        order[k++] = i;
    }
    sort_pred = pred;
    qsort(order, k, sizeof *order, by_pred_desc);
    for (size_t t = 0; t < k; t++) {
        sw->xa[t] = swa[order[t]];
        sw->xb[t] = partner[order[t]];
    }
    free(swa);
    sw->nx = k;
    sw->xk = 0;
    free(order);
    free(pred);
    free(partner);
    sw->state = SWEEP_EXCHANGES;
    return 0;
}

/* An exchange was scored: kept when it gains. */
static void exchange_scored(lns *m, int64_t rec)
{
    struct sweep *sw = m->plan.sweep;
    if (lns_sweep_keep(m, rec, sw->xa[sw->xk], sw->xb[sw->xk]))
        sw->exchanges++;
    sw->xk++;
}

/* Pushes the next exchange worth scoring; 0 when none is left. */
static int push_exchange(lns *m)
{
    struct sweep *sw = m->plan.sweep;
    while (sw->xk < sw->nx && lns_budget_left(m) > 0) {
        size_t a = sw->xa[sw->xk], b = sw->xb[sw->xk];
        if (sw->used[a] || sw->used[b]) {
            sw->xk++;
            continue;
        }
        int64_t slot = lns_sweep_push_swap(m, a, b);
        if (slot == LNS_SWAP_INFEASIBLE) { /* a layer's bounds */
            sw->xk++;
            continue;
        }
        if (slot == INT64_MIN)
            return lns_fail(m, BOSCH_E_NOMEM, "out of memory");
        if (slot >= 0) {
            exchange_scored(m, slot);
            continue;
        }
        sw->pair_slot = slot;
        return (int)m->npend;
    }
    return 0;
}

/* The pending probes or exchange were told: the next ones, or 0 when the
 * round is over. */
int lns_probe_step(lns *m)
{
    struct sweep *sw = m->plan.sweep;
    if (sw->state == SWEEP_PROBES) {
        for (;;) { /* a chunk scored before asks nothing: on to the next */
            probes_told(m);
            if (sw->next > sw->nprobe)
                break;
            if (lns_budget_left(m) == 0)
                return 0;
            int n = push_probes(m);
            if (n != 0)
                return n;
        }
        int rc = plan_exchanges(m);
        if (rc < 0)
            return rc;
    } else {
        exchange_scored(m, lns_slot_record(m, sw->pair_slot));
    }
    return push_exchange(m);
}

/* The next round of probes, its first candidates pushed; 0 when there is
 * nothing to probe (no critical unit, no SWA unit left, too little budget). */
int lns_probe_round(lns *m)
{
    for (;;) {
        int rc = probe_plan(m);
        if (rc <= 0)
            return rc;
        int n = push_probes(m);
        if (n == 0)
            n = lns_probe_step(m);
        if (n != 0)
            return n;
    }
}
