/* The terminal side of a search, shared by the command-line programs (the
 * `bosch` command and examples/bosch-testbed-search): a progress display and
 * an interruptible run. Not part of libbosch: the library itself never
 * prints and never handles signals. */
#ifndef BOSCH_CLI_CONSOLE_H
#define BOSCH_CLI_CONSOLE_H

#include <bosch/bosch.h>

struct console_progress {
    int tty;          /* stderr is a terminal: one line redrawn in place */
    int last_stage;
    double last_draw; /* elapsed seconds of the last redraw */
    int line_open;    /* a redrawn line waits for its newline */
};

void console_progress_init(struct console_progress *pr);
/* bosch_progress_fn: on a terminal a bar redrawn at most 10 times a second
 * (stage, evaluations/budget, replayed, best score, rate, ETA); otherwise one
 * line per stage change. Pass the console_progress as `user`. */
void console_on_progress(const bosch_progress *p, void *user);

/* Runs bosch_optimize(opt) on a libuv thread while the calling thread waits
 * in a libuv loop for SIGINT/SIGTERM: the first signal calls
 * bosch_force_stop (evaluations in flight finish and are journaled), a
 * second one exits at once with `stopped_exit`. The search thread, and the
 * worker threads the library starts from it, block both signals. Ends an
 * open progress line (pr may be NULL). Returns bosch_optimize's status, or
 * INT32_MIN when the loop or the thread could not start. */
int console_run(bosch_optimizer *opt, struct console_progress *pr, int stopped_exit);

#endif
