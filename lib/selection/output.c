/* Opening and closing the output file of a text writer (TSV, SVG, JSON):
 * through the atomic replacement of atomic.c, so that a failed write (a
 * full disk) leaves the earlier file, never a cut-off one. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "selection/selection_impl.h"

FILE *sel_open_out(const bosch_selection *s, afile *t, const char *path, const char *fn)
{
    memset(t, 0, sizeof *t);
    if (!s || !path) {
        sel_fail(s, BOSCH_E_INVALID, "%s: path is NULL", fn);
        return NULL;
    }
    return sel_tmp_open(s, t, path, fn) == BOSCH_OK ? t->f : NULL;
}

int sel_close_out(const bosch_selection *s, afile *t, const char *fn)
{
    int rc = sel_tmp_close(s, t, fn);
    if (rc == BOSCH_OK)
        rc = sel_tmp_commit(s, t, fn);
    sel_tmp_discard(t);
    return rc;
}
