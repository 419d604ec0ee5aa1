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
 * changes nothing. Measured in docs/benchmarks.md, "Result with the
 * substitute probe". */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lns/lns_impl.h"

#define SWEEP_CRIT 3.0

static double loss_of(const struct plan *pl, size_t u)
{
    return -pl->sw_gain[u];
}

/* The critical units and the probes; 0 when there is nothing to probe. */
static int probe_plan(lns *m)
{
    struct plan *pl = &m->plan;
    uint64_t left = lns_budget_left(m);
    size_t nfull = 0;
    double *loss;
    if (left < 3 || pl->sw_nfull == 0 ||
        (pl->sw_probe_from >= pl->sw_nswa && pl->sw_kept_next >= pl->sw_nkept))
        return 0;
    loss = malloc(pl->sw_nfull * sizeof *loss);
    if (!pl->sw_crit)
        pl->sw_crit = malloc(pl->sw_nfull * sizeof *pl->sw_crit);
    if (!pl->sw_excess)
        pl->sw_excess = malloc((pl->sw_n + 1) * sizeof *pl->sw_excess);
    if (!pl->sw_off)
        pl->sw_off = malloc(pl->sw_n + 1);
    if (!loss || !pl->sw_crit || !pl->sw_excess || !pl->sw_off) {
        free(loss);
        return lns_fail(m, BOSCH_E_NOMEM, "out of memory");
    }
    for (size_t j = 0; j < pl->sw_nfull; j++) {
        size_t u = pl->sw_full[j];
        if (!pl->sw_used[u] && isfinite(pl->sw_gain[u]))
            loss[nfull++] = loss_of(pl, u);
    }
    pl->sw_ncrit = 0;
    pl->sw_crit_min = INFINITY;
    if (nfull > 0) {
        qsort(loss, nfull, sizeof *loss, lns_by_double);
        double cut = SWEEP_CRIT * loss[nfull / 2];
        for (size_t j = 0; j < pl->sw_nfull && cut > 0.0; j++) {
            size_t u = pl->sw_full[j];
            if (!pl->sw_used[u] && isfinite(pl->sw_gain[u]) && loss_of(pl, u) > cut) {
                pl->sw_crit[pl->sw_ncrit++] = u;
                if (loss_of(pl, u) < pl->sw_crit_min)
                    pl->sw_crit_min = loss_of(pl, u);
            }
        }
    }
    free(loss);
    if (pl->sw_ncrit == 0)
        return 0;
    /* Probes: unused SWA units by gain, at most sweep_pairs, and a quarter
     * of what is left kept for the exchanges. */
    size_t cap = (size_t)((left - 1) * 3 / 4);
    if (cap > m->cfg.sweep_pairs)
        cap = m->cfg.sweep_pairs;
    pl->sw_nprobe = 0;
    pl->sw_unit[0] = SIZE_MAX; /* the base */
    /* First the units kept pairs made full: one that restores what a
     * critical unit carries has made that unit redundant. */
    for (; pl->sw_kept_next < pl->sw_nkept && pl->sw_nprobe < cap; pl->sw_kept_next++) {
        size_t u = pl->sw_kept[pl->sw_kept_next];
        if (!pl->work[u] && isfinite(pl->sw_gain[u])) {
            pl->sw_off[1 + pl->sw_nprobe] = 1;
            pl->sw_unit[1 + pl->sw_nprobe++] = u;
        }
    }
    for (; pl->sw_probe_from < pl->sw_nswa && pl->sw_nprobe < cap; pl->sw_probe_from++) {
        size_t u = pl->sw_swa[pl->sw_probe_from];
        if (!pl->sw_used[u] && isfinite(pl->sw_gain[u])) {
            pl->sw_off[1 + pl->sw_nprobe] = 0;
            pl->sw_unit[1 + pl->sw_nprobe++] = u;
        }
    }
    if (pl->sw_nprobe == 0)
        return 0;
    pl->sw_probed += pl->sw_nprobe;
    pl->sw_next = 0;
    pl->sweep_state = SWEEP_PROBES;
    return 1;
}

/* The next chunk of the base and the probes (at most batch_size). */
static int push_probes(lns *m)
{
    struct plan *pl = &m->plan;
    memcpy(pl->sw_mask, pl->work, m->prob->units);
    for (size_t c = 0; c < pl->sw_ncrit; c++)
        pl->sw_mask[pl->sw_crit[c]] = 1;
    return lns_sweep_push_chunk(m, pl->sw_nprobe + 1);
}

static void probes_told(lns *m)
{
    struct plan *pl = &m->plan;
    for (size_t i = pl->sw_chunk; i < pl->sw_next; i++) {
        int64_t rec = lns_slot_record(m, pl->sw_slot[i]);
        double v = rec >= 0 ? lns_normalized(m, m->store.scores[rec]) : NAN;
        if (i == 0)
            pl->sw_base = v;
        else if (pl->sw_off[i]) /* loss beyond the gain it brought */
            pl->sw_excess[i] = (pl->sw_base - v) - pl->sw_gain[pl->sw_unit[i]];
        else /* gain beyond its gain alone */
            pl->sw_excess[i] = v - pl->sw_base - pl->sw_gain[pl->sw_unit[i]];
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
    struct plan *pl = &m->plan;
    size_t np = pl->sw_nprobe;
    size_t *order = malloc(np * sizeof *order);
    double *pred = malloc((np + 1) * sizeof *pred);
    size_t *partner = malloc((np + 1) * sizeof *partner);
    size_t *swa = malloc((np + 1) * sizeof *swa), spare = 0;
    free(pl->sw_xa);
    free(pl->sw_xb);
    pl->sw_xa = malloc(np * sizeof *pl->sw_xa);
    pl->sw_xb = malloc(np * sizeof *pl->sw_xb);
    if (!order || !pred || !partner || !swa || !pl->sw_xa || !pl->sw_xb) {
        free(swa);
        free(order);
        free(pred);
        free(partner);
        return lns_fail(m, BOSCH_E_NOMEM, "out of memory");
    }
    size_t k = 0;
    for (size_t i = 1; i <= np && isfinite(pl->sw_base); i++) {
        double e = pl->sw_excess[i];
        /* Half the smallest critical loss: well above rounding, well below
         * any critical unit's share. */
        if (!(e > 0.5 * pl->sw_crit_min))
            continue;
        size_t best = SIZE_MAX;
        double bd = INFINITY;
        for (size_t c = 0; c < pl->sw_ncrit; c++) {
            double d = loss_of(pl, pl->sw_crit[c]) - e;
            /* the partner's loss covers the excess (up to a tenth) */
            if (d > -0.1 * e && fabs(d) < bd) {
                bd = fabs(d);
                best = pl->sw_crit[c];
            }
        }
        if (best == SIZE_MAX)
            continue;
        size_t a = pl->sw_unit[i];
        if (pl->sw_off[i]) {
            /* `best` is redundant now: its loss is only what `a` cannot
             * restore; its swap partner is the next SWA unit of largest gain. */
            while (spare < pl->sw_nswa &&
                   (pl->sw_used[pl->sw_swa[spare]] || !isfinite(pl->sw_gain[pl->sw_swa[spare]])))
                spare++;
            if (spare == pl->sw_nswa)
                continue;
            a = pl->sw_swa[spare++];
        }
        pred[i] = pl->sw_gain[a] + pl->sw_gain[best] + e;
        if (!(pred[i] > 0.0))
            continue;
        swa[i] = a;
        partner[i] = best;
        order[k++] = i;
    }
    sort_pred = pred;
    qsort(order, k, sizeof *order, by_pred_desc);
    for (size_t t = 0; t < k; t++) {
        pl->sw_xa[t] = swa[order[t]];
        pl->sw_xb[t] = partner[order[t]];
    }
    free(swa);
    pl->sw_nx = k;
    pl->sw_xk = 0;
    free(order);
    free(pred);
    free(partner);
    pl->sweep_state = SWEEP_EXCHANGES;
    return 0;
}

/* An exchange was scored: kept when it gains. */
static void exchange_scored(lns *m, int64_t rec)
{
    struct plan *pl = &m->plan;
    if (lns_sweep_keep(m, rec, pl->sw_xa[pl->sw_xk], pl->sw_xb[pl->sw_xk]))
        pl->sw_exchanges++;
    pl->sw_xk++;
}

/* Pushes the next exchange worth scoring; 0 when none is left. */
static int push_exchange(lns *m)
{
    struct plan *pl = &m->plan;
    while (pl->sw_xk < pl->sw_nx && lns_budget_left(m) > 0) {
        size_t a = pl->sw_xa[pl->sw_xk], b = pl->sw_xb[pl->sw_xk];
        if (pl->sw_used[a] || pl->sw_used[b]) {
            pl->sw_xk++;
            continue;
        }
        int64_t slot = lns_sweep_push_swap(m, a, b);
        if (slot == LNS_SWAP_INFEASIBLE) { /* a layer's bounds */
            pl->sw_xk++;
            continue;
        }
        if (slot == INT64_MIN)
            return lns_fail(m, BOSCH_E_NOMEM, "out of memory");
        if (slot >= 0) {
            exchange_scored(m, slot);
            continue;
        }
        pl->sw_pair_slot = slot;
        return (int)m->npend;
    }
    return 0;
}

/* The pending probes or exchange were told: the next ones, or 0 when the
 * round is over. */
int lns_probe_step(lns *m)
{
    struct plan *pl = &m->plan;
    if (pl->sweep_state == SWEEP_PROBES) {
        for (;;) { /* a chunk scored before asks nothing: on to the next */
            probes_told(m);
            if (pl->sw_next > pl->sw_nprobe)
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
        exchange_scored(m, lns_slot_record(m, pl->sw_pair_slot));
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
