/* The session's clock and its ways to report: a refused call, the end of
 * the run with an error, the host's log. Calls nothing else of the session
 * (only lns_keep, to keep what was told before an error). */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "journal/journal.h"
#include "session/session.h"

double session_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int session_refuse(bosch_optimizer *opt, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(opt->err, sizeof opt->err, fmt, ap);
    va_end(ap);
    return code;
}

void session_log(bosch_optimizer *opt, int level, const char *fmt, ...)
{
    if (!opt->log || level < opt->log_level)
        return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    opt->log(level, buf, opt->log_user);
}

void session_end_batch(bosch_optimizer *opt)
{
    if (opt->npend)
        lns_keep(opt->method, opt->pend_told, opt->pend_score, opt->pend_wall);
    opt->npend = 0;
    opt->nhost = 0;
}

void session_end_journal(bosch_optimizer *opt)
{
    if (opt->status != 0 && opt->jn) {
        /* The run has ended: nothing more is appended, and the lock goes
         * with the file, so that another run may use the journal while this
         * handle is still alive. */
        journal_close(opt->jn);
        opt->jn = NULL;
    }
}

int session_fail(bosch_optimizer *opt, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(opt->err, sizeof opt->err, fmt, ap);
    va_end(ap);
    session_end_batch(opt);
    if (opt->status == 0)
        opt->status = code;
    session_log(opt, BOSCH_LOG_ERROR, "%s", opt->err);
    session_end_journal(opt);
    return code;
}
