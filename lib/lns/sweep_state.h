/* The flip sweep's own state and the moves its two parts share (sweep.c:
 * the test, the flips and pairs; sweep_probe.c: the substitute probe;
 * sweep_moves.c: the moves). Only sweep*.c include this header. */
#ifndef LIBBOSCH_LNS_SWEEP_STATE_H
#define LIBBOSCH_LNS_SWEEP_STATE_H

#include "lns/state.h"

/* States of the flip sweep. */
enum sweep_state {
    SWEEP_NONE,
    SWEEP_FLIPS,
    SWEEP_PAIRS,
    SWEEP_PROBES,
    SWEEP_EXCHANGES,
    SWEEP_DONE
};

struct sweep {
    int checked;          /* its tests that ran: at N + 2K, then at N + K */
    int state;            /* enum sweep_state */
    size_t *unit, n;      /* the free units */
    size_t next, chunk;   /* flips handed out, first flip of the pending chunk */
    int64_t *slot;        /* per flip: lns_push_fixed's answer */
    int64_t pair_slot;    /* ... for the pending pair */
    double *gain;         /* per unit: change of S^ when flipped alone (no ratio penalty) */
    size_t *swa, *full, nswa, nfull; /* pair candidates, by gain */
    uint8_t *used;        /* per unit: moved by a kept pair or exchange */
    size_t i, j;          /* pair cursors (indices into swa, full) */
    /* Substitute probe: the critical full units off together (base), then
     * single SWA units on at that mask; exchanges built from them. */
    size_t *crit, ncrit;  /* the critical full units */
    double crit_min;      /* their smallest loss */
    double base;          /* ... its S^ */
    size_t nprobe;        /* probes: units in unit[1..], slots in slot */
    size_t probe_from;    /* next SWA unit (in swa) a probe round takes */
    size_t probed;        /* probes in all rounds */
    uint8_t *off;         /* per probe: a unit a kept pair made full, made SWA at the base */
    size_t *kept, nkept, kept_next; /* units kept pairs made full; next to probe */
    double *excess;       /* per probe: its gain at the base minus its gain alone */
    size_t *xa, *xb, nx, xk; /* exchanges (SWA unit, partner), next */
    uint32_t pairs;       /* pairs scored */
    uint32_t exchanges;   /* exchanges kept */
    double f;             /* objective of the working mask */
    uint8_t *mask;        /* scratch mask (units) */
};

/* sweep_moves.c: the moves both parts of the sweep make. */
#define LNS_SWAP_INFEASIBLE INT64_MAX
int lns_sweep_push_chunk(lns *m, size_t total);
int64_t lns_sweep_push_swap(lns *m, size_t a, size_t b);
int lns_sweep_keep(lns *m, int64_t rec, size_t a, size_t b);

/* sweep_probe.c: a round of substitute probes (> 0: candidates pushed; 0:
 * nothing to probe), and its steps once told (0: the round is over). */
int lns_probe_round(lns *m);
int lns_probe_step(lns *m);

#endif
