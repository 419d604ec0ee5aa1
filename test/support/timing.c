#include "timing.h"

#include <errno.h>
#include <stddef.h>
#include <time.h>

void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

double now_mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void *stop_thread(void *arg)
{
    stopper *s = arg;
    while (s->calls && atomic_load(s->calls) < s->after_calls)
        sleep_us(500);
    sleep_us(s->delay_us);
    bosch_force_stop(s->opt);
    return NULL;
}
