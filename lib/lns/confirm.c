/* Confirmation draws [ours]: the search's own score of its best mask is the
 * luckiest of many noisy draws, so it overstates the mask. After the
 * search, the `confirm_top` best distinct feasible masks are scored again,
 * `confirm` fresh draws in all (draws 1, 2, ... at full fidelity, spread
 * round-robin), and the mask with the best mean of its fresh draws becomes
 * the result, reported with that mean. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/bitset.h"
#include "lns/batch.h"
#include "lns/stage.h"

/* The best `want` eligible records by objective, best first. */
static uint32_t top_records(const lns *m, int64_t *out, uint32_t want)
{
    const eval_store *s = &m->store;
    uint32_t n = 0;
    for (size_t r = 0; r < s->n; r++) {
        if (!s->eligible[r])
            continue;
        double v = lns_objective(m, r);
        uint32_t j = n < want ? n++ : want;
        while (j > 0 && lns_objective(m, (size_t)out[j - 1]) < v) {
            if (j < want)
                out[j] = out[j - 1];
            j--;
        }
        if (j < want)
            out[j] = (int64_t)r;
    }
    return n;
}

/* Mean raw score of a mask's fresh draws and its standard error. */
static uint32_t draw_stats(const lns *m, int64_t rec, double *mean, double *se)
{
    const eval_store *s = &m->store;
    double sum = 0.0, sq = 0.0;
    uint32_t n = 0;
    int64_t r = rec;
    do {
        if (s->draws[r] > 0 && s->fidelity[r] >= 1.0) {
            sum += s->scores[r];
            sq += s->scores[r] * s->scores[r];
            n++;
        }
        r = s->next[r];
    } while (r != rec);
    *mean = n ? sum / n : NAN;
    double var = n > 1 ? (sq - sum * sum / n) / (n - 1) : NAN;
    *se = n > 1 ? sqrt(var > 0.0 ? var : 0.0) / sqrt((double)n) : NAN;
    return n;
}

static void choose_confirmed(lns *m)
{
    struct plan *pl = &m->plan;
    for (uint32_t j = 0; j < pl->nconf; j++) {
        double mean, se;
        uint32_t n = draw_stats(m, pl->conf_rec[j], &mean, &se);
        if (n == 0)
            continue;
        if (m->conf_n == 0 || mean > m->conf_mean) {
            m->conf_best = pl->conf_rec[j];
            m->conf_mean = mean;
            m->conf_se = se;
            m->conf_n = n;
        }
    }
    if (m->conf_n)
        lns_log(m, BOSCH_LOG_INFO,
                "confirmation: %u fresh draws over %u masks; reported score %.6g "
                "(standard error %.3g), the search saw %.6g",
                pl->conf_next, pl->nconf, m->conf_mean, m->conf_se,
                m->store.scores[m->conf_best]);
}

int lns_step_confirm(lns *m)
{
    struct plan *pl = &m->plan;
    uint32_t total = m->cfg.confirm;
    if (pl->confirm_state == 0) {
        pl->confirm_state = 1;
        uint32_t want = m->cfg.confirm_top < total ? m->cfg.confirm_top : total;
        pl->conf_rec = malloc((want ? want : 1) * sizeof *pl->conf_rec);
        if (!pl->conf_rec)
            return lns_fail(m, BOSCH_E_NOMEM, "out of memory");
        pl->nconf = m->anchors_known ? top_records(m, pl->conf_rec, want) : 0;
        pl->conf_next = 0;
        if (pl->nconf == 0)
            lns_log(m, BOSCH_LOG_WARN, "confirmation skipped: no feasible mask was evaluated");
    }
    uint64_t left = lns_budget_left(m);
    if (pl->nconf > 0 && pl->conf_next < total && left > 0) {
        size_t units = m->prob->units;
        uint8_t *mask = malloc(units);
        if (!mask)
            return lns_fail(m, BOSCH_E_NOMEM, "out of memory");
        m->npend = 0;
        while (pl->conf_next < total && m->npend < m->cfg.batch && m->npend < left) {
            uint32_t q = pl->conf_next++;
            int64_t rec = pl->conf_rec[q % pl->nconf];
            bitset_unpack(store_mask(&m->store, (size_t)rec), units, mask);
            if (lns_push_request(m, mask, BOSCH_STAGE_GROUP, 1.0, q / pl->nconf + 1) < 0) {
                free(mask);
                return lns_fail(m, BOSCH_E_NOMEM, "out of memory");
            }
        }
        free(mask);
        return (int)m->npend;
    }
    choose_confirmed(m);
    pl->confirm_state = 2;
    m->step = STEP_FINISHED;
    lns_milestone(m);
    return 0;
}
