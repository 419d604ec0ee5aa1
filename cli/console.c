#include "console.h"

#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
#include <uv.h>

void console_progress_init(struct console_progress *pr)
{
    pr->tty = isatty(STDERR_FILENO);
    pr->last_stage = -1;
    pr->last_draw = -1.0;
    pr->line_open = 0;
}

static void format_eta(double s, char *buf, size_t len)
{
    if (!(s >= 0) || isinf(s))
        snprintf(buf, len, "--");
    else if (s < 60)
        snprintf(buf, len, "%.0fs", s);
    else if (s < 3600)
        snprintf(buf, len, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
    else
        snprintf(buf, len, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
}

void console_on_progress(const bosch_progress *p, void *user)
{
    struct console_progress *pr = user;
    int stage = bosch_progress_stage(p);
    double elapsed = bosch_progress_elapsed(p);
    unsigned long long evals = bosch_progress_evaluations(p), budget = bosch_progress_budget(p);
    unsigned long long replayed = bosch_progress_replayed(p);
    double rate = bosch_progress_rate(p), best = bosch_progress_best_score(p);
    char eta[32], speed[32], bs[32], replay[48] = "";
    format_eta(bosch_progress_eta(p), eta, sizeof eta);
    if (isnan(rate))
        snprintf(speed, sizeof speed, "--");
    else
        snprintf(speed, sizeof speed, "%.2f", rate);
    if (isnan(best))
        snprintf(bs, sizeof bs, "--");
    else
        snprintf(bs, sizeof bs, "%.4f", best);
    if (replayed)
        snprintf(replay, sizeof replay, ", %llu replayed", replayed);
    if (pr->tty) {
        if (stage == pr->last_stage && elapsed - pr->last_draw < 0.1 && evals < budget)
            return;
        pr->last_stage = stage;
        pr->last_draw = elapsed;
        char bar[21];
        int filled = budget ? (int)(20.0 * (double)evals / (double)budget) : 0;
        if (filled > 20)
            filled = 20;
        for (int i = 0; i < 20; i++)
            bar[i] = i < filled ? '#' : '.';
        bar[20] = '\0';
        fprintf(stderr, "\r\033[K[%-7s] [%s] %llu/%llu evals%s, best %s, %s evals/s, ETA %s",
                bosch_stage_name(stage), bar, evals, budget, replay, bs, speed, eta);
        fflush(stderr);
        pr->line_open = 1;
    } else {
        if (stage == pr->last_stage)
            return;
        pr->last_stage = stage;
        fprintf(stderr,
                "[%-7s] %llu/%llu evaluations%s, best normalised score %s, %s evals/s, ETA %s\n",
                bosch_stage_name(stage), evals, budget, replay, bs, speed, eta);
    }
}

struct run {
    bosch_optimizer *opt;
    int rc, stopped_exit;
    atomic_int signals;
    uv_async_t done; /* wakes the loop when the search thread ends */
    uv_signal_t sigint, sigterm;
};

static void search_thread(void *arg)
{
    struct run *r = arg;
    r->rc = bosch_optimize(r->opt);
    uv_async_send(&r->done);
}

static void on_done(uv_async_t *h)
{
    struct run *r = h->data;
    uv_close((uv_handle_t *)&r->done, NULL);
    uv_close((uv_handle_t *)&r->sigint, NULL);
    uv_close((uv_handle_t *)&r->sigterm, NULL);
}

static void on_signal(uv_signal_t *h, int signum)
{
    struct run *r = h->data;
    if (atomic_fetch_add(&r->signals, 1) == 0) {
        fprintf(stderr, "\n%s: stopping after the evaluations in flight "
                        "(send it again to exit at once)\n",
                signum == SIGINT ? "SIGINT" : "SIGTERM");
        bosch_force_stop(r->opt);
    } else {
        fprintf(stderr, "\nsecond signal: exiting now\n");
        _exit(r->stopped_exit);
    }
}

int console_run(bosch_optimizer *opt, struct console_progress *pr, int stopped_exit)
{
    /* Static: the handles must outlive the loop even on a second-signal exit. */
    static struct run run;
    uv_loop_t loop;
    run.opt = opt;
    run.stopped_exit = stopped_exit;
    atomic_init(&run.signals, 0);
    if (uv_loop_init(&loop) != 0)
        return INT32_MIN;
    uv_async_init(&loop, &run.done, on_done);
    uv_signal_init(&loop, &run.sigint);
    uv_signal_init(&loop, &run.sigterm);
    run.done.data = run.sigint.data = run.sigterm.data = &run;
    uv_signal_start(&run.sigint, on_signal, SIGINT);
    uv_signal_start(&run.sigterm, on_signal, SIGTERM);
    /* Threads inherit the mask: signals reach only this thread, and
     * evaluations are never interrupted. */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    uv_thread_t thread;
    int e = uv_thread_create(&thread, search_thread, &run);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e != 0) {
        on_done(&run.done);
        uv_run(&loop, UV_RUN_DEFAULT); /* lets the closed handles go */
        uv_loop_close(&loop);
        return INT32_MIN;
    }
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_thread_join(&thread);
    uv_loop_close(&loop);
    if (pr && pr->line_open)
        fputc('\n', stderr);
    return run.rc;
}
