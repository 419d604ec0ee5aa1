/* The pauses of the root's and the workers' polling loops (protocol.h).
 * MPI's blocking calls spin, which would take the core of an evaluator
 * sharing it; fixed short sleeps still cost a poll every ~100 µs. A wait
 * starts at 10 µs and doubles while nothing comes, up to a fiftieth of
 * the pieces being waited for (within 10 µs .. 1 ms): a wait then costs
 * about fifty polls, and finds its message at most ~2% of a piece late. */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "mpi/protocol.h"

enum { PAUSE_MIN_US = 10, PAUSE_MAX_US = 1000 };

void mpi_backoff_init(struct mpi_backoff *b)
{
    b->pause_us = PAUSE_MIN_US;
    b->cap_us = 100; /* until a piece has been timed */
    b->piece_us = 0.0;
}

void mpi_backoff_reset(struct mpi_backoff *b)
{
    b->pause_us = PAUSE_MIN_US;
}

void mpi_backoff_wait(struct mpi_backoff *b)
{
    struct timespec ts = {0, (long)b->pause_us * 1000L};
    nanosleep(&ts, NULL);
    b->pause_us = b->pause_us * 2 < b->cap_us ? b->pause_us * 2 : b->cap_us;
}

void mpi_backoff_piece(struct mpi_backoff *b, double seconds)
{
    const double us = seconds * 1e6;
    /* A running mean, so that one slow piece does not slow the polls. */
    b->piece_us = b->piece_us > 0.0 ? 0.8 * b->piece_us + 0.2 * us : us;
    const double cap = b->piece_us / 50.0;
    b->cap_us = cap < PAUSE_MIN_US ? PAUSE_MIN_US
                : cap > PAUSE_MAX_US ? PAUSE_MAX_US
                                     : (unsigned)cap;
}

double mpi_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
