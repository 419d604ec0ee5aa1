/* The standalone harness: one strategy on a user's subproblem and objective,
 * outside any optimizer (for unit-testing strategies in isolation). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/bitset.h"
#include "search/runner.h"

int bosch_strategy_solve(const bosch_strategy *s, bosch_subproblem *sp, bosch_objective_fn f,
                         void *user, uint64_t budget, uint32_t batch, uint8_t *best_x,
                         double *best_value, uint64_t *evaluations)
{
    if (!s || !sp || !f || batch == 0 || batch > 4096 || sp->store != &sp->own_store)
        return BOSCH_E_INVALID;
    if (sp->solved)
        return BOSCH_E_STATE;
    sp->solved = 1;
    sp->budget = budget;
    runner r;
    int rc = runner_init(&r, sp, s, batch);
    int64_t *records = malloc(batch * sizeof *records);
    if (!records && rc == BOSCH_OK)
        rc = BOSCH_E_NOMEM;
    while (rc == BOSCH_OK) {
        int n = runner_next(&r);
        if (n <= 0) {
            rc = n < 0 ? n : (r.finished == 2 ? BOSCH_BUDGET_REACHED : BOSCH_DONE);
            break;
        }
        for (int i = 0; i < n && rc == BOSCH_OK; i++) {
            double v = 0.0;
            const uint8_t *x = r.pend + (size_t)i * sp->units;
            if (f(x, sp->n, &v, user) != 0)
                rc = BOSCH_E_EVALUATOR;
            else if (!isfinite(v))
                rc = BOSCH_E_BAD_SCORE;
            else {
                int64_t rec = store_add(&sp->own_store,
                                        r.pend_packed + (size_t)i * bitset_words(sp->units), v, 0,
                                        1, NAN);
                if (rec < 0)
                    rc = (int)rec;
                records[i] = rec;
            }
        }
        if (rc == BOSCH_OK)
            rc = runner_complete(&r, records);
    }
    free(records);
    runner_free(&r);
    if (sp->has_inc) {
        if (best_x)
            memcpy(best_x, sp->inc, sp->n);
        if (best_value)
            *best_value = sp->inc_value;
    }
    if (evaluations)
        *evaluations = sp->own_store.n;
    return rc;
}
