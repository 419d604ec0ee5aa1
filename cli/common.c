/* Messages and settings shared by the commands of the bosch command. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static char last_error[4096];
static const char *error_prefix = "bosch: ";
static char prefix_buf[32];

void errorf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s%s\n", error_prefix, last_error);
}

const char *last_errorf(void)
{
    return last_error;
}

void errorf_rank(int rank)
{
    snprintf(prefix_buf, sizeof prefix_buf, "bosch: rank %d: ", rank);
    error_prefix = prefix_buf;
}

int no_backend(const char *cmd)
{
    errorf("%s: this bosch was built without the libtorch backend (libbosch-torch); "
           "rebuild libbosch with libtorch available (meson setup -Dtorch=enabled)", cmd);
    return EXIT_ERROR;
}

void settings_default(struct settings *s)
{
    memset(s, 0, sizeof *s);
    s->context = 1024;
    s->samples = 8;
    s->needles = 1;
    s->key_len = 2;
    s->value_len = 2;
    s->ratio = 0.5;
    s->window = 128;
    s->sink = 4;
    s->seed = 0;
    s->eval_batch = 0; /* libbosch-torch's default: one candidate per forward */
    s->metric = "exact";
    s->out = "bosch-mask";
    s->device = "auto";
    s->dtype = "auto";
}

unsigned effective_window(const struct settings *s)
{
    if (s->window_given)
        return s->window;
    if (s->niah && s->context / 4 < s->window)
        return s->context / 4 ? s->context / 4 : 1;
    return s->window;
}
