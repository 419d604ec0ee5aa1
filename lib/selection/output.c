/* Opening and closing the output file of a text writer (TSV, SVG). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "selection/selection_impl.h"

FILE *sel_open_out(const bosch_selection *s, const char *path, const char *fn)
{
    if (!s || !path) {
        sel_fail(s, BOSCH_E_INVALID, "%s: path is NULL", fn);
        return NULL;
    }
    FILE *f = fopen(path, "w");
    if (!f)
        sel_io_fail(s, errno, fn, "write", path);
    return f;
}

int sel_close_out(const bosch_selection *s, FILE *f, const char *path, const char *fn)
{
    int failed = ferror(f);
    int err = failed ? (errno ? errno : EIO) : 0;
    if (fclose(f) != 0 && !failed) {
        failed = 1;
        err = errno;
    }
    if (!failed)
        return BOSCH_OK;
    return sel_io_fail(s, err, fn, "write", path);
}
