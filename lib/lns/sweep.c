/* Stage 3's flip sweep [ours]. Where the polish is refining small effects
 * that add up (its recent candidates land just below the incumbent), its
 * surrogate cannot resolve them any more, but they can be measured: the
 * last evaluations go to the N masks one free unit off the incumbent (each
 * infeasible, one unit off the target; together the exact local effect of
 * every unit), then to swaps built from them, the SWA unit of largest gain
 * paired with the full unit of least loss, applied one at a time and
 * undone when they do not gain. Where the landscape is not locally
 * additive (the polish still climbs) the sweep would waste its budget, so
 * it runs only when the median gap of the last quarter of the evaluations
 * to the best is below sweep_gap (docs/benchmarks.md measured both). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lns/lns_impl.h"

/* Fewest polish evaluations the test reads. */
#define SWEEP_MIN_SEEN 32
/* Fewest pairs the sweep must have room for. */
#define SWEEP_MIN_PAIRS 8

/* Median over the last quarter of the evaluations so far (full fidelity,
 * first draws), the polish's only, of (best - value) / (best - all SWA);
 * NaN when undefined. */
static double recent_gap(const lns *m)
{
    const eval_store *s = &m->store;
    size_t first = m->plan.polish_first;
    if (m->best_record < 0)
        return NAN;
    double best = lns_objective(m, (size_t)m->best_record);
    double base = lns_normalized(m, m->s_swa); /* 0, or S_allSWA when raw */
    if (!(best > base))
        return NAN;
    size_t from = s->n - s->n / 4, k = 0;
    if (from < first)
        from = first;
    double *gap = malloc((s->n - from) * sizeof *gap);
    if (!gap)
        return NAN;
    for (size_t r = from; r < s->n; r++)
        if (store_is_plain(s, r) && isfinite(lns_objective(m, r)))
            gap[k++] = (best - lns_objective(m, r)) / (best - base);
    double med = NAN;
    if (k > 0) {
        qsort(gap, k, sizeof *gap, lns_by_double);
        med = k % 2 ? gap[k / 2] : 0.5 * (gap[k / 2 - 1] + gap[k / 2]);
    }
    free(gap);
    return med;
}

int lns_sweep_due(lns *m)
{
    struct plan *pl = &m->plan;
    uint64_t k = m->cfg.sweep_pairs;
    if (k == 0 || pl->sweep_checked >= 2)
        return 0;
    uint64_t n = pl->polish_free, left = lns_budget_left(m);
    /* Two tests: with room for the pairs and the probes (N + 2K), and if
     * that one fails, with room for the pairs alone (N + K): a polish still
     * too short or still climbing at the first may be ready at the second.
     * Under screening only the second: the full scores the test reads are
     * then the screen's survivors, close to the best by selection, and the
     * earlier test took budget the polish uses better (docs/benchmarks.md). */
    if (pl->sweep_checked == 0 && m->cfg.screen_fidelity < 1.0)
        pl->sweep_checked = 1;
    if (left > n + (pl->sweep_checked == 0 ? 2 * k : k))
        return 0;
    pl->sweep_checked = left > n + k ? 1 : 2;
    /* The sweep replaces the polish's end, not the polish: it needs room for
     * a few pairs, and a polish that ran long enough for the test to read. */
    if (left < n + SWEEP_MIN_PAIRS || pl->work_record < 0)
        return 0;
    int short_polish = m->store.n < pl->polish_first + SWEEP_MIN_SEEN;
    double gap = short_polish ? NAN : recent_gap(m);
    int due = gap < m->cfg.sweep_gap;
    if (due)
        pl->sweep_checked = 2; /* once per run */
    lns_log(m, BOSCH_LOG_INFO,
            "flip sweep %s: %s %.4g (sweep_gap %g), %llu evaluations left",
            due ? "begins" : pl->sweep_checked == 1 ? "not yet" : "skipped",
            short_polish ? "polish too short to test, gap"
                         : "median gap of the last quarter's candidates to the best",
            gap, m->cfg.sweep_gap, (unsigned long long)left);
    return due;
}

void lns_sweep_free(struct plan *pl)
{
    free(pl->sw_gain);
    free(pl->sw_slot);
    free(pl->sw_unit);
    free(pl->sw_swa);
    free(pl->sw_full);
    free(pl->sw_mask);
    free(pl->sw_used);
    free(pl->sw_crit);
    free(pl->sw_excess);
    free(pl->sw_xa);
    free(pl->sw_xb);
    free(pl->sw_off);
    free(pl->sw_kept);
    pl->sw_kept = NULL;
    pl->sw_used = pl->sw_off = NULL;
    pl->sw_crit = pl->sw_xa = pl->sw_xb = NULL;
    pl->sw_excess = NULL;
    pl->sw_gain = NULL;
    pl->sw_slot = NULL;
    pl->sw_unit = NULL;
    pl->sw_swa = pl->sw_full = NULL;
    pl->sw_mask = NULL;
}

static const double *sort_gain;

/* Largest gain first; ties by unit, so that the order is the same everywhere. */
static int by_gain_desc(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    double gx = sort_gain[x], gy = sort_gain[y];
    if (gx != gy)
        return gx < gy ? 1 : -1;
    return (x > y) - (x < y);
}

static int sweep_begin(lns *m)
{
    struct plan *pl = &m->plan;
    const bosch_problem *p = m->prob;
    size_t n = pl->polish_free;
    pl->sw_gain = malloc(p->units * sizeof *pl->sw_gain);
    pl->sw_slot = malloc(n * sizeof *pl->sw_slot);
    pl->sw_unit = malloc(n * sizeof *pl->sw_unit);
    pl->sw_swa = malloc(n * sizeof *pl->sw_swa);
    pl->sw_full = malloc(n * sizeof *pl->sw_full);
    pl->sw_mask = malloc(p->units);
    if (!pl->sw_gain || !pl->sw_slot || !pl->sw_unit || !pl->sw_swa || !pl->sw_full ||
        !pl->sw_mask)
        return lns_fail(m, BOSCH_E_NOMEM, "out of memory");
    pl->sw_n = 0;
    for (size_t u = 0; u < p->units; u++)
        if (p->fix[u] == BOSCH_FIX_NONE)
            pl->sw_unit[pl->sw_n++] = u;
    pl->sw_next = 0;
    pl->sw_pairs = 0;
    pl->sw_exchanges = 0;
    pl->sw_nprobe = 0;
    pl->sw_probe_from = 0;
    pl->sw_probed = 0;
    pl->sw_f = lns_objective(m, (size_t)pl->work_record); /* feasible: no penalty */
    pl->sweep_state = SWEEP_FLIPS;
    return BOSCH_OK;
}

/* The next chunk of single flips of the committed mask. */
static int push_flips(lns *m)
{
    struct plan *pl = &m->plan;
    memcpy(pl->sw_mask, pl->work, m->prob->units);
    return lns_sweep_push_chunk(m, pl->sw_n);
}

/* The flips of the chunk were told: their gains. */
static void flips_told(lns *m)
{
    struct plan *pl = &m->plan;
    for (size_t i = pl->sw_chunk; i < pl->sw_next; i++) {
        int64_t rec = lns_slot_record(m, pl->sw_slot[i]);
        /* The score alone: the objective's ratio penalty would charge each
         * flip for leaving the target, which a pair does not. */
        double v = rec >= 0 ? lns_normalized(m, m->store.scores[rec]) : NAN;
        pl->sw_gain[pl->sw_unit[i]] = isfinite(v) ? v - pl->sw_f : -INFINITY;
    }
}

/* All flips known: SWA units by gain when made full, full units by gain
 * (least loss) when made SWA. */
static int order_pairs(lns *m)
{
    struct plan *pl = &m->plan;
    pl->sw_nswa = pl->sw_nfull = 0;
    for (size_t i = 0; i < pl->sw_n; i++) {
        size_t u = pl->sw_unit[i];
        if (pl->work[u])
            pl->sw_swa[pl->sw_nswa++] = u;
        else
            pl->sw_full[pl->sw_nfull++] = u;
    }
    sort_gain = pl->sw_gain;
    qsort(pl->sw_swa, pl->sw_nswa, sizeof *pl->sw_swa, by_gain_desc);
    qsort(pl->sw_full, pl->sw_nfull, sizeof *pl->sw_full, by_gain_desc);
    pl->sw_i = pl->sw_j = 0;
    pl->sw_used = calloc(m->prob->units, 1);
    pl->sw_kept = malloc((pl->sw_nswa + 1) * sizeof *pl->sw_kept);
    pl->sw_nkept = pl->sw_kept_next = 0;
    pl->sweep_state = SWEEP_PAIRS;
    if (!pl->sw_used || !pl->sw_kept)
        return lns_fail(m, BOSCH_E_NOMEM, "out of memory");
    return 0;
}

/* The pair (sw_i, sw_j) was scored: kept when it gains (both units are
 * then used up), else its SWA unit is tried with the next full unit. */
static void pair_scored(lns *m, int64_t rec)
{
    struct plan *pl = &m->plan;
    size_t a = pl->sw_swa[pl->sw_i];
    if (lns_sweep_keep(m, rec, a, pl->sw_full[pl->sw_j])) {
        pl->sw_kept[pl->sw_nkept++] = a;
        pl->sw_i++;
    }
    pl->sw_j++;
}

/* Pushes the next pair worth scoring; 0 when none is left. */
static int push_pair(lns *m)
{
    struct plan *pl = &m->plan;
    while (pl->sw_i < pl->sw_nswa && pl->sw_j < pl->sw_nfull &&
           pl->sw_pairs < m->cfg.sweep_pairs && lns_budget_left(m) > 0) {
        size_t a = pl->sw_swa[pl->sw_i], b = pl->sw_full[pl->sw_j];
        if (!(pl->sw_gain[a] + pl->sw_gain[b] > 0.0))
            break;
        int64_t slot = lns_sweep_push_swap(m, a, b);
        if (slot == LNS_SWAP_INFEASIBLE) { /* a layer's bounds */
            pl->sw_j++;
            continue;
        }
        if (slot == INT64_MIN)
            return lns_fail(m, BOSCH_E_NOMEM, "out of memory");
        if (slot >= 0) { /* scored before: no evaluation */
            pair_scored(m, slot);
            continue;
        }
        pl->sw_pair_slot = slot;
        pl->sw_pairs++;
        return (int)m->npend;
    }
    return 0;
}

/* The sweep is over: what it left of the budget returns to the polish. */
static int sweep_end(lns *m)
{
    struct plan *pl = &m->plan;
    uint64_t left = lns_budget_left(m);
    lns_log(m, BOSCH_LOG_INFO,
            "flip sweep done: %zu flips, %u pairs scored, %zu substitute probes, %u exchanges "
            "kept, best %.6g, %llu evaluations left%s",
            pl->sw_n, pl->sw_pairs, pl->sw_probed, pl->sw_exchanges, pl->sw_f,
            (unsigned long long)left,
            left ? " (for the polish, from the sweep's mask)" : "");
    pl->sweep_state = SWEEP_DONE;
    lns_sweep_free(pl);
    lns_milestone(m);
    /* Budget the pairs did not need goes back to the polish. */
    if (left > 0) {
        pl->polished = 0;
        pl->group_total = (uint64_t)ceil(pl->group_used) + left; /* the polish gets >= left */
        m->step = STEP_POLISH;
    } else {
        m->step = STEP_FINISHED;
    }
    return 0;
}

/* No pair left: a round of substitute probes when there is something to
 * probe (sweep_probe.c), else the end. */
static int after_pairs(lns *m)
{
    int n = lns_probe_round(m);
    if (n != 0)
        return n;
    return sweep_end(m);
}

int lns_step_sweep(lns *m)
{
    struct plan *pl = &m->plan;
    switch (pl->sweep_state) {
    case SWEEP_NONE: {
        int rc = sweep_begin(m);
        if (rc < 0)
            return rc;
        return push_flips(m);
    }
    case SWEEP_FLIPS:
        flips_told(m);
        if (pl->sw_next < pl->sw_n) {
            if (lns_budget_left(m) == 0)
                break;
            return push_flips(m);
        }
        {
            int rc = order_pairs(m);
            if (rc < 0)
                return rc;
        }
        {
            int n = push_pair(m);
            if (n != 0)
                return n;
        }
        return after_pairs(m);
    case SWEEP_PAIRS:
        pair_scored(m, lns_slot_record(m, pl->sw_pair_slot));
        {
            int n = push_pair(m);
            if (n != 0)
                return n;
        }
        return after_pairs(m);
    case SWEEP_PROBES:
    case SWEEP_EXCHANGES: {
        int n = lns_probe_step(m);
        if (n != 0)
            return n;
        return after_pairs(m); /* the next round, while the budget lasts */
    }
    default:
        break;
    }
    return sweep_end(m);
}
