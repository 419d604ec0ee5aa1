/* The runner: one strategy on one subproblem. Every proposal is repaired,
 * expanded to a full mask, answered from the store when already evaluated,
 * and deduplicated within its batch, so the evaluator never sees a mask
 * twice. The strategy observes the batch only once every value is known, in
 * proposal order, which keeps results independent of evaluation order. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/bitset.h"
#include "search/runner.h"

#define IDLE_LIMIT 64
/* Screening: every new mask is promoted to full fidelity until this many
 * screened/full pairs set the margin; then a mask is promoted when its
 * screened value plus SCREEN_Z times the pairs' rms difference reaches the
 * incumbent's value. */
#define SCREEN_WARMUP 4
#define SCREEN_Z 1.5
/* After SCREEN_JUDGE pairs, screening is switched off for the rest of the
 * run when the screened scores' error exceeds SCREEN_RATIO times the
 * promoted candidates' rms gap to the incumbent: the screen could not tell
 * them apart, and its noisy values would mislead the strategy. */
#define SCREEN_JUDGE 16
#define SCREEN_RATIO 0.5

int runner_init(runner *r, bosch_subproblem *sp, const bosch_strategy *s, size_t batch)
{
    memset(r, 0, sizeof *r);
    r->sp = sp;
    r->strat = *s;
    r->batch = batch;
    size_t words = bitset_words(sp->units);
    r->props = malloc(batch * sp->n);
    r->values = malloc(batch * sizeof *r->values);
    r->slot = malloc(batch * sizeof *r->slot);
    r->pend = malloc(batch * sp->units);
    r->pend_packed = malloc(batch * words * sizeof *r->pend_packed);
    r->pend_fid = malloc(batch * sizeof *r->pend_fid);
    r->prom_lo = malloc(batch * sizeof *r->prom_lo);
    r->screen = 1.0;
    r->var_sum = calloc(sp->n, sizeof *r->var_sum);
    r->var_cnt = calloc(sp->n, sizeof *r->var_cnt);
    if (!r->props || !r->values || !r->slot || !r->pend || !r->pend_packed || !r->pend_fid ||
        !r->prom_lo || !r->var_sum || !r->var_cnt) {
        runner_free(r);
        return BOSCH_E_NOMEM;
    }
    if (s->init && s->init(&r->state, sp, s->user) != 0) {
        r->state = NULL;
        return BOSCH_E_STRATEGY;
    }
    r->inited = 1;
    return BOSCH_OK;
}

void runner_free(runner *r)
{
    if (r->inited && r->strat.destroy)
        r->strat.destroy(r->state, r->strat.user);
    free(r->props);
    free(r->values);
    free(r->slot);
    free(r->pend);
    free(r->pend_packed);
    free(r->pend_fid);
    free(r->prom_lo);
    free(r->var_sum);
    free(r->var_cnt);
    memset(r, 0, sizeof *r);
}

void runner_screen(runner *r, double fidelity, struct screen_stats *stats)
{
    if (fidelity > 0.0 && fidelity < 1.0 && stats) {
        r->screen = fidelity;
        r->stats = stats;
    }
}

static int observe_batch(runner *r)
{
    bosch_subproblem *sp = r->sp;
    for (size_t i = 0; i < r->nprops; i++) {
        const uint8_t *x = r->props + i * sp->n;
        double v = r->values[i];
        /* Only a full-fidelity score may become the incumbent. */
        if ((!sp->has_inc || v > sp->inc_value) && store_is_plain(sp->store, (size_t)r->slot[i])) {
            memcpy(sp->inc, x, sp->n);
            sp->inc_value = v;
            sp->has_inc = 1;
            sp->inc_record = r->slot[i];
        }
        for (size_t j = 0; j < sp->n; j++)
            if (x[j]) {
                r->var_sum[j] += v;
                r->var_cnt[j]++;
            }
    }
    if (r->strat.observe &&
        r->strat.observe(r->state, sp, r->props, r->values, r->nprops) != 0)
        return BOSCH_E_STRATEGY;
    return BOSCH_OK;
}

int runner_next(runner *r)
{
    bosch_subproblem *sp = r->sp;
    size_t words = bitset_words(sp->units);
    if (r->promoting)
        return (int)r->npend;
    while (!r->finished) {
        uint64_t left = bosch_subproblem_budget_left(sp);
        if (left == 0) {
            r->finished = 2;
            break;
        }
        size_t max = left < r->batch ? (size_t)left : r->batch;
        size_t n = 0;
        if (r->strat.propose(r->state, sp, r->props, max, &n) != 0 || n > max)
            return BOSCH_E_STRATEGY;
        if (n == 0) {
            r->finished = 1;
            break;
        }
        r->nprops = n;
        r->npend = 0;
        for (size_t i = 0; i < n; i++) {
            uint8_t *x = r->props + i * sp->n;
            int rc = subproblem_repair_random(sp, x);
            if (rc < 0)
                return rc;
            subproblem_expand(sp, x);
            int64_t rec = store_find(sp->store, sp->scratch);
            if (rec >= 0) {
                r->slot[i] = rec;
                r->values[i] = sp->value_of(sp->value_ctx, (size_t)rec);
                continue;
            }
            size_t k;
            for (k = 0; k < r->npend; k++)
                if (memcmp(r->pend_packed + k * words, sp->scratch, words * sizeof(uint64_t)) == 0)
                    break;
            if (k == r->npend) {
                memcpy(r->pend + k * sp->units, sp->full, sp->units);
                memcpy(r->pend_packed + k * words, sp->scratch, words * sizeof(uint64_t));
                r->pend_fid[k] = r->stats && r->stats->off ? 1.0 : r->screen;
                r->npend++;
            }
            r->slot[i] = -(int64_t)(k + 1);
        }
        if (r->npend > 0) {
            r->idle = 0;
            return (int)r->npend;
        }
        /* Everything was known: let the strategy see it and go on. */
        int rc = observe_batch(r);
        if (rc < 0)
            return rc;
        if (++r->idle >= IDLE_LIMIT)
            r->finished = 1;
    }
    return 0;
}

/* Picks the screened masks worth a full-fidelity score (at most what the
 * budget allows, best screened value first) into the pending list. */
static void choose_promotions(runner *r)
{
    bosch_subproblem *sp = r->sp;
    size_t words = bitset_words(sp->units), n = r->npend;
    struct screen_stats *st = r->stats;
    double margin = st->n >= SCREEN_WARMUP ? SCREEN_Z * sqrt(st->sum_sq / st->n) : INFINITY;
    uint64_t room = bosch_subproblem_budget_left(sp);
    /* Candidates by screened value, best first (insertion sort; n <= batch). */
    size_t order[4096], nc = 0;
    for (size_t k = 0; k < n; k++) {
        double v = sp->value_of(sp->value_ctx, (size_t)r->prom_lo[k]);
        if (sp->has_inc && !(v + margin >= sp->inc_value))
            continue;
        size_t j = nc++;
        while (j > 0 && sp->value_of(sp->value_ctx, (size_t)r->prom_lo[order[j - 1]]) < v) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = k;
    }
    if (nc > room)
        nc = (size_t)room;
    /* Compact the chosen ones to the front, in pending order. */
    uint8_t chosen[4096] = {0};
    for (size_t j = 0; j < nc; j++)
        chosen[order[j]] = 1;
    size_t m = 0;
    for (size_t k = 0; k < n; k++) {
        if (!chosen[k])
            continue;
        if (m != k) {
            memmove(r->pend + m * sp->units, r->pend + k * sp->units, sp->units);
            memmove(r->pend_packed + m * words, r->pend_packed + k * words,
                    words * sizeof(uint64_t));
            r->prom_lo[m] = r->prom_lo[k];
        }
        r->pend_fid[m] = 1.0;
        m++;
    }
    r->nprom = m;
    r->npend = m;
    r->promoting = m > 0;
}

int runner_complete(runner *r, const int64_t *records)
{
    bosch_subproblem *sp = r->sp;
    for (size_t k = 0; k < r->npend; k++)
        sp->used += r->pend_fid[k];
    if (r->promoting) {
        /* Full scores of the promoted masks replace their screened ones. */
        for (size_t k = 0; k < r->nprom; k++) {
            double full = sp->value_of(sp->value_ctx, (size_t)records[k]);
            double d = sp->value_of(sp->value_ctx, (size_t)r->prom_lo[k]) - full;
            double g = sp->has_inc ? full - sp->inc_value : 0.0;
            struct screen_stats *st = r->stats;
            st->sum_sq += d * d;
            st->gap_sq += g * g;
            if (++st->n == SCREEN_JUDGE && st->sum_sq > SCREEN_RATIO * SCREEN_RATIO * st->gap_sq)
                st->off = 1;
            for (size_t i = 0; i < r->nprops; i++)
                if (r->slot[i] == r->prom_lo[k])
                    r->slot[i] = records[k];
        }
        r->promoting = 0;
        r->nprom = 0;
    } else {
        int screened = 0;
        for (size_t i = 0; i < r->nprops; i++)
            if (r->slot[i] < 0)
                r->slot[i] = records[(size_t)(-r->slot[i] - 1)];
        for (size_t k = 0; k < r->npend; k++) {
            r->prom_lo[k] = records[k];
            screened |= r->pend_fid[k] < 1.0;
        }
        if (screened) {
            choose_promotions(r);
            if (r->promoting)
                return BOSCH_OK; /* runner_next hands out the promotions */
        }
    }
    for (size_t i = 0; i < r->nprops; i++)
        r->values[i] = sp->value_of(sp->value_ctx, (size_t)r->slot[i]);
    r->npend = 0;
    return observe_batch(r);
}
