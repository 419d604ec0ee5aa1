/* The first step: the two anchors, S_full and S_allSWA, that normalise
 * every score, and the checks that they can. */
#include <stdlib.h>
#include <string.h>

#include "lns/batch.h"
#include "lns/stage.h"

static int anchors_told(lns *m);

/* The two reference models: all full and all SWA (unless given). */
int lns_step_anchors(lns *m)
{
    if (m->anchors_known) {
        m->step = STEP_PLAN;
        return 0;
    }
    uint8_t *mask = calloc(m->prob->units, 1);
    if (!mask)
        return lns_fail(m, BOSCH_E_NOMEM, "out of memory");
    lns_push_fixed(m, mask, BOSCH_STAGE_ANCHORS);
    memset(mask, 1, m->prob->units);
    lns_push_fixed(m, mask, BOSCH_STAGE_ANCHORS);
    free(mask);
    m->pend_told = anchors_told;
    return (int)m->npend;
}

static int anchors_told(lns *m)
{
    m->s_full = m->store.scores[m->pend_record[0]];
    m->s_swa = m->store.scores[m->pend_record[1]];
    /* Ordered by more than the tolerance: a gap within an evaluator's
     * numerical noise would normalise every score by rounding error. */
    const int ordered = m->s_full - m->s_swa > m->cfg.anchor_tolerance;
    if (!ordered && m->cfg.raw_scores) {
        m->raw = 1;
        m->anchors_known = 1;
        lns_log(m, BOSCH_LOG_WARN,
                "anchors not ordered (S_full = %g, S_allSWA = %g, anchor_tolerance %g): "
                "searching raw scores without normalisation (raw_scores); normalized scores "
                "are NaN",
                m->s_full, m->s_swa, m->cfg.anchor_tolerance);
        return BOSCH_OK;
    }
    if (!ordered && m->cfg.anchor_tolerance > 0 && m->s_full > m->s_swa)
        return lns_fail(m, BOSCH_E_ANCHORS,
                        "anchor scores cannot normalise: S_full = %g is above S_allSWA = %g "
                        "by %g, not more than anchor_tolerance = %g (the evaluator's numerical "
                        "noise: the gap could be rounding error)",
                        m->s_full, m->s_swa, m->s_full - m->s_swa, m->cfg.anchor_tolerance);
    if (!ordered)
        return lns_fail(m, BOSCH_E_ANCHORS,
                        "anchor scores cannot normalise: S_full = %g is not above "
                        "S_allSWA = %g (the task does not tell full from SWA attention)",
                        m->s_full, m->s_swa);
    m->anchors_known = 1;
    lns_log(m, BOSCH_LOG_INFO, "anchors: S_full = %g, S_allSWA = %g", m->s_full, m->s_swa);
    return BOSCH_OK;
}
