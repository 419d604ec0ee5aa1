/*
 * Sleeping, a monotonic clock, and a thread that force-stops an optimizer.
 */
#ifndef BOSCH_TEST_TIMING_H
#define BOSCH_TEST_TIMING_H

#include <stdatomic.h>

#include <bosch/bosch.h>

/* Sleeps `us` microseconds (resumed after signals). */
void sleep_us(long us);

/* CLOCK_MONOTONIC in seconds. */
double now_mono(void);

/* Argument of stop_thread(): waits until *calls >= after_calls (when `calls`
 * is set), then `delay_us`, then calls bosch_force_stop(opt). */
typedef struct {
    bosch_optimizer *opt;
    long delay_us;
    atomic_long *calls; /* wait until this many evaluations started, if set */
    long after_calls;
} stopper;

/* pthread start routine; arg is a stopper. */
void *stop_thread(void *arg);

#endif /* BOSCH_TEST_TIMING_H */
