/* Atomic replacement of the files the exports write (selection_impl.h):
 * write a temporary in the target's directory, sync, rename. rename(2)
 * within one directory replaces the target in one step, so a consumer
 * reading the directory sees the old file or the new one, never half. */
#include "bosch/bosch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "selection/selection_impl.h"

char *sel_join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, name);
    return p;
}

int sel_tmp_open(const bosch_selection *s, afile *t, const char *path, const char *fn)
{
    int err = afile_open(t, path);
    if (err == ENOMEM)
        return sel_fail(s, BOSCH_E_NOMEM, "%s: out of memory", fn);
    if (err) {
        sel_io_fail(s, err, fn, "write", path);
        errno = err;
        return BOSCH_E_IO;
    }
    return BOSCH_OK;
}

/* sel_io_fail for step `what` of t, then the temporary removed. */
static int tmp_fail(const bosch_selection *s, afile *t, int err, const char *fn,
                    const char *what)
{
    sel_io_fail(s, err, fn, what, t->path);
    afile_discard(t);
    errno = err;
    return BOSCH_E_IO;
}

int sel_tmp_close(const bosch_selection *s, afile *t, const char *fn)
{
    int err = afile_close(t);
    return err ? tmp_fail(s, t, err, fn, "write") : BOSCH_OK;
}

int sel_tmp_commit(const bosch_selection *s, afile *t, const char *fn)
{
    int err = afile_rename(t);
    if (err)
        return tmp_fail(s, t, err, fn, "replace");
    afile_discard(t);
    return BOSCH_OK;
}

void sel_tmp_discard(afile *t) { afile_discard(t); }

int sel_ensure_dir(const bosch_selection *s, const char *dir, const char *fn, int *made)
{
    struct stat st;
    *made = 0;
    if (stat(dir, &st) != 0) {
        if (errno != ENOENT)
            return sel_io_fail(s, errno, fn, "use directory", dir);
        if (mkdir(dir, 0777) == 0)
            *made = 1;
        else if (errno != EEXIST)
            return sel_io_fail(s, errno, fn, "make directory", dir);
        if (stat(dir, &st) != 0)
            return sel_io_fail(s, errno, fn, "use directory", dir);
    }
    if (!S_ISDIR(st.st_mode))
        return sel_io_fail(s, ENOTDIR, fn, "use directory", dir);
    return BOSCH_OK;
}
