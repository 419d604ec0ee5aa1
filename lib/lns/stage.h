/* The stages of the method, as the driver's step table runs them. Each
 * step returns > 0 (a batch is pending), 0 (moved on or ended), or a
 * negative error; a step that fills a batch may set m->pend_told to
 * observe it once told. Between the shared state (state.h, batch.h) and
 * the driver (lns.c). */
#ifndef LIBBOSCH_LNS_STAGE_H
#define LIBBOSCH_LNS_STAGE_H

#include "lns/state.h"

int lns_step_anchors(lns *m);  /* anchors.c: all full and all SWA */
int lns_step_plan(lns *m);     /* plan.c: budgets and per-layer ranges */
int lns_step_probe(lns *m);    /* probe.c: stage 1 */
int lns_step_alloc(lns *m);    /* alloc.c: stage 2 */
int lns_step_group(lns *m);    /* group.c: stage 3 */
int lns_step_polish(lns *m);   /* group.c: stage 3's polish */
int lns_step_sweep(lns *m);    /* sweep.c: stage 3's flip sweep */
int lns_step_layers(lns *m);   /* layers.c: the layer-level variant */
int lns_step_confirm(lns *m);  /* confirm.c: confirmation draws */

/* sweep.c: > 0 when the polish should end here for the flip sweep (tested
 * once, when the budget left first reaches free units + sweep_pairs), 0
 * when not, < 0 on error. */
int lns_sweep_due(lns *m);
/* plateau.c: non-zero when the stopping rule (stop_tolerance) ends the
 * polish here (logged); 0 when it is off or the best still climbs. */
int lns_plateau_due(lns *m);
/* Frees the sweep's state (the driver, at the end). */
void lns_sweep_free(lns *m);

#endif
