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
 * to the best is below sweep_gap (docs/benchmarks-history.md measured both). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lns/batch.h"
#include "lns/stage.h"
#include "lns/sweep_state.h"

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
    if (k == 0)
        return 0;
    if (!pl->sweep && !(pl->sweep = calloc(1, sizeof *pl->sweep)))
        return lns_fail(m, BOSCH_E_NOMEM, "out of memory");
    struct sweep *sw = pl->sweep;
    if (sw->checked >= 2)
        return 0;
    uint64_t n = pl->polish_free, left = lns_budget_left(m);
    /* Two tests: with room for the pairs and the probes (N + 2K), and if
     * that one fails, with room for the pairs alone (N + K): a polish still
     * too short or still climbing at the first may be ready at the second.
     * Under screening only the second: the full scores the test reads are
     * then the screen's survivors, close to the best by selection, and the
     * earlier test took budget the polish uses better (docs/benchmarks-history.md). */
    if (sw->checked == 0 && m->cfg.screen_fidelity < 1.0)
        sw->checked = 1;
    if (left > n + (sw->checked == 0 ? 2 * k : k))
        return 0;
    sw->checked = left > n + k ? 1 : 2;
    /* The sweep replaces the polish's end, not the polish: it needs room for
     * a few pairs, and a polish that ran long enough for the test to read. */
    if (left < n + SWEEP_MIN_PAIRS || pl->work_record < 0)
        return 0;
    int short_polish = m->store.n < pl->polish_first + SWEEP_MIN_SEEN;
    double gap = short_polish ? NAN : recent_gap(m);
    int due = gap < m->cfg.sweep_gap;
    if (due)
        sw->checked = 2; /* once per run */
    lns_log(m, BOSCH_LOG_INFO,
            "flip sweep %s: %s %.4g (sweep_gap %g), %llu evaluations left",
            due ? "begins" : sw->checked == 1 ? "not yet" : "skipped",
            short_polish ? "polish too short to test, gap"
                         : "median gap of the last quarter's candidates to the best",
            gap, m->cfg.sweep_gap, (unsigned long long)left);
    return due;
}

/* Frees the arrays (the state and its test count stay). */
static void free_arrays(struct sweep *sw)
{
    free(sw->gain);
    free(sw->slot);
    free(sw->unit);
    free(sw->swa);
    free(sw->full);
    free(sw->mask);
    free(sw->used);
    free(sw->crit);
    free(sw->excess);
    free(sw->xa);
    free(sw->xb);
    free(sw->off);
    free(sw->kept);
    sw->kept = NULL;
    sw->used = sw->off = NULL;
    sw->crit = sw->xa = sw->xb = NULL;
    sw->excess = NULL;
    sw->gain = NULL;
    sw->slot = NULL;
    sw->unit = NULL;
    sw->swa = sw->full = NULL;
    sw->mask = NULL;
}

void lns_sweep_free(lns *m)
{
    if (!m->plan.sweep)
        return;
    free_arrays(m->plan.sweep);
    free(m->plan.sweep);
    m->plan.sweep = NULL;
}

/* A unit with its gain, sorted without a file-scope pointer: two
 * optimizers may sort on two threads at once. */
struct gain_unit {
    double gain;
    size_t unit;
};

/* Largest gain first; ties by unit, so that the order is the same everywhere. */
static int by_gain_desc(const void *a, const void *b)
{
    const struct gain_unit *x = a, *y = b;
    if (x->gain != y->gain)
        return x->gain < y->gain ? 1 : -1;
    return (x->unit > y->unit) - (x->unit < y->unit);
}

/* Sorts units[0..n) by gain, largest first (tmp: n entries). */
static void sort_by_gain(size_t *units, size_t n, const double *gain, struct gain_unit *tmp)
{
    for (size_t i = 0; i < n; i++)
        tmp[i] = (struct gain_unit){gain[units[i]], units[i]};
    qsort(tmp, n, sizeof *tmp, by_gain_desc);
    for (size_t i = 0; i < n; i++)
        units[i] = tmp[i].unit;
}

static int sweep_begin(lns *m)
{
    struct plan *pl = &m->plan;
    struct sweep *sw = m->plan.sweep;
    const bosch_problem *p = m->prob;
    size_t n = pl->polish_free;
    sw->gain = malloc(p->units * sizeof *sw->gain);
    sw->slot = malloc(n * sizeof *sw->slot);
    sw->unit = malloc(n * sizeof *sw->unit);
    sw->swa = malloc(n * sizeof *sw->swa);
    sw->full = malloc(n * sizeof *sw->full);
    sw->mask = malloc(p->units);
    if (!sw->gain || !sw->slot || !sw->unit || !sw->swa || !sw->full || !sw->mask)
        return lns_fail(m, BOSCH_E_NOMEM, "out of memory");
    sw->n = 0;
    for (size_t u = 0; u < p->units; u++)
        if (p->fix[u] == BOSCH_FIX_NONE)
            sw->unit[sw->n++] = u;
    sw->next = 0;
    sw->pairs = 0;
    sw->exchanges = 0;
    sw->nprobe = 0;
    sw->probe_from = 0;
    sw->probed = 0;
    sw->f = lns_objective(m, (size_t)pl->work_record); /* feasible: no penalty */
    sw->state = SWEEP_FLIPS;
    return BOSCH_OK;
}

/* The next chunk of single flips of the committed mask. */
static int push_flips(lns *m)
{
    struct plan *pl = &m->plan;
    struct sweep *sw = m->plan.sweep;
    memcpy(sw->mask, pl->work, m->prob->units);
    return lns_sweep_push_chunk(m, sw->n);
}

/* The flips of the chunk were told: their gains. */
static void flips_told(lns *m)
{
    struct sweep *sw = m->plan.sweep;
    for (size_t i = sw->chunk; i < sw->next; i++) {
        int64_t rec = lns_slot_record(m, sw->slot[i]);
        /* The score alone: the objective's ratio penalty would charge each
         * flip for leaving the target, which a pair does not. */
        double v = rec >= 0 ? lns_normalized(m, m->store.scores[rec]) : NAN;
        sw->gain[sw->unit[i]] = isfinite(v) ? v - sw->f : -INFINITY;
    }
}

/* All flips known: SWA units by gain when made full, full units by gain
 * (least loss) when made SWA. */
static int order_pairs(lns *m)
{
    struct plan *pl = &m->plan;
    struct sweep *sw = m->plan.sweep;
    sw->nswa = sw->nfull = 0;
    for (size_t i = 0; i < sw->n; i++) {
        size_t u = sw->unit[i];
        if (pl->work[u])
            sw->swa[sw->nswa++] = u;
        else
            sw->full[sw->nfull++] = u;
    }
    struct gain_unit *tmp = malloc((sw->n + 1) * sizeof *tmp);
    if (!tmp)
        return lns_fail(m, BOSCH_E_NOMEM, "out of memory");
    sort_by_gain(sw->swa, sw->nswa, sw->gain, tmp);
    sort_by_gain(sw->full, sw->nfull, sw->gain, tmp);
    free(tmp);
    sw->i = sw->j = 0;
    sw->used = calloc(m->prob->units, 1);
    sw->kept = malloc((sw->nswa + 1) * sizeof *sw->kept);
    sw->nkept = sw->kept_next = 0;
    sw->state = SWEEP_PAIRS;
    if (!sw->used || !sw->kept)
        return lns_fail(m, BOSCH_E_NOMEM, "out of memory");
    return 0;
}

/* The pair (sw_i, sw_j) was scored: kept when it gains (both units are
 * then used up), else its SWA unit is tried with the next full unit. */
static void pair_scored(lns *m, int64_t rec)
{
    struct sweep *sw = m->plan.sweep;
    size_t a = sw->swa[sw->i];
    if (lns_sweep_keep(m, rec, a, sw->full[sw->j])) {
        sw->kept[sw->nkept++] = a;
        sw->i++;
    }
    sw->j++;
}

/* Pushes the next pair worth scoring; 0 when none is left. */
static int push_pair(lns *m)
{
    struct sweep *sw = m->plan.sweep;
    while (sw->i < sw->nswa && sw->j < sw->nfull &&
           sw->pairs < m->cfg.sweep_pairs && lns_budget_left(m) > 0) {
        size_t a = sw->swa[sw->i], b = sw->full[sw->j];
        if (!(sw->gain[a] + sw->gain[b] > 0.0))
            break;
        int64_t slot = lns_sweep_push_swap(m, a, b);
        if (slot == LNS_SWAP_INFEASIBLE) { /* a layer's bounds */
            sw->j++;
            continue;
        }
        if (slot == INT64_MIN)
            return lns_fail(m, BOSCH_E_NOMEM, "out of memory");
        if (slot >= 0) { /* scored before: no evaluation */
            pair_scored(m, slot);
            continue;
        }
        sw->pair_slot = slot;
        sw->pairs++;
        return (int)m->npend;
    }
    return 0;
}

/* The sweep is over: what it left of the budget returns to the polish. */
static int sweep_end(lns *m)
{
    struct plan *pl = &m->plan;
    struct sweep *sw = m->plan.sweep;
    uint64_t left = lns_budget_left(m);
    lns_log(m, BOSCH_LOG_INFO,
            "flip sweep done: %zu flips, %u pairs scored, %zu substitute probes, %u exchanges "
            "kept, best %.6g, %llu evaluations left%s",
            sw->n, sw->pairs, sw->probed, sw->exchanges, sw->f,
            (unsigned long long)left,
            left ? " (for the polish, from the sweep's mask)" : "");
    sw->state = SWEEP_DONE;
    free_arrays(sw);
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
    struct sweep *sw = m->plan.sweep;
    switch (sw->state) {
    case SWEEP_NONE: {
        int rc = sweep_begin(m);
        if (rc < 0)
            return rc;
        return push_flips(m);
    }
    case SWEEP_FLIPS:
        flips_told(m);
        if (sw->next < sw->n) {
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
        pair_scored(m, lns_slot_record(m, sw->pair_slot));
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
