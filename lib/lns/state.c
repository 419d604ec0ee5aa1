/* The bottom of lib/lns (state.h): what every part of the method uses:
 * ending with an error, the log and milestone hooks, the budget, the end of
 * the search, and score normalisation. Calls nothing else of lib/lns. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "core/bitset.h"
#include "lns/state.h"

/* Ends the method with an error. The caller logs it (lns_error). */
int lns_fail(lns *m, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->err, sizeof m->err, fmt, ap);
    va_end(ap);
    if (m->status == 0)
        m->status = code;
    return code;
}

void lns_log(lns *m, int level, const char *fmt, ...)
{
    if (!m->hooks.log || (m->hooks.log_wanted && !m->hooks.log_wanted(m->hooks.ctx, level)))
        return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    m->hooks.log(m->hooks.ctx, level, buf);
}

void lns_milestone(lns *m)
{
    if (m->hooks.milestone)
        m->hooks.milestone(m->hooks.ctx);
}

/* In full-evaluation equivalents; the confirmation draws are set aside
 * until their step. */
uint64_t lns_budget_left(const lns *m)
{
    double reserve = m->step != STEP_CONFIRM && lns_confirm_pending(m) ? m->cfg.confirm : 0;
    return evals_left((double)m->cfg.budget - reserve, m->store.cost);
}

void lns_search_ended(lns *m, int status)
{
    m->npend = 0;
    if (lns_confirm_pending(m)) {
        m->plan.end_status = status;
        m->step = STEP_CONFIRM;
        return;
    }
    m->step = STEP_FINISHED;
    if (status)
        m->status = status;
}

int lns_budget_reached(lns *m)
{
    lns_log(m, BOSCH_LOG_INFO, "evaluation budget of %llu reached%s",
            (unsigned long long)m->cfg.budget,
            lns_confirm_pending(m) ? " (confirmation draws next)" : "");
    lns_search_ended(m, BOSCH_BUDGET_REACHED);
    return 0;
}

double lns_normalized(const lns *m, double raw)
{
    if (!m->anchors_known)
        return NAN;
    if (m->raw)
        return raw;
    return (raw - m->s_swa) / (m->s_full - m->s_swa);
}

double lns_objective(const lns *m, size_t record)
{
    const eval_store *s = &m->store;
    double ratio = (double)bitset_popcount(store_mask(s, record), s->words) / (double)s->units;
    double d = ratio - bosch_problem_target_ratio(m->prob);
    return lns_normalized(m, s->scores[record]) - m->cfg.alpha * d * d;
}
