/* The result file's error messages and text fields: what every part of
 * lib/selection uses (no call cycle between its files). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "selection/selection_impl.h"

int sel_fail(const bosch_selection *s, int code, const char *fmt, ...)
{
    if (!s)
        return code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->error, SEL_ERROR_LEN, fmt, ap);
    va_end(ap);
    return code;
}

int sel_io_fail(const bosch_selection *s, int err, const char *fn, const char *what,
                const char *path)
{
    sel_fail(s, BOSCH_E_IO, "%s: cannot %s %s: %s", fn, what, path, strerror(err));
    errno = err;
    return BOSCH_E_IO;
}

int sel_set_text(char **dst, const char *value)
{
    char *copy = NULL;
    if (value) {
        size_t n = strlen(value) + 1;
        copy = malloc(n);
        if (!copy)
            return BOSCH_E_NOMEM;
        memcpy(copy, value, n);
    }
    free(*dst);
    *dst = copy;
    return BOSCH_OK;
}
