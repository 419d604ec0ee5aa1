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

int sel_tmp_open(const bosch_selection *s, struct sel_tmp *t, const char *path, const char *fn)
{
    memset(t, 0, sizeof *t);
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
    const char *base = slash ? slash + 1 : path;
    size_t n = strlen(path) + 16;
    t->tmp = malloc(n);
    t->path = malloc(strlen(path) + 1);
    if (!t->tmp || !t->path) {
        sel_tmp_discard(t);
        return sel_fail(s, BOSCH_E_NOMEM, "%s: out of memory", fn);
    }
    strcpy(t->path, path);
    snprintf(t->tmp, n, "%.*s.%s.XXXXXX", (int)dirlen, path, base);
    int fd = mkstemp(t->tmp);
    if (fd < 0) {
        int err = errno;
        free(t->tmp);
        t->tmp = NULL;
        sel_tmp_discard(t);
        return sel_io_fail(s, err, fn, "write", path);
    }
    /* mkstemp makes the file 0600; model files are meant to be read by others. */
    if (fchmod(fd, 0644) != 0 || !(t->f = fdopen(fd, "w"))) {
        int err = errno;
        close(fd);
        sel_tmp_discard(t);
        return sel_io_fail(s, err, fn, "write", path);
    }
    return BOSCH_OK;
}

int sel_tmp_close(const bosch_selection *s, struct sel_tmp *t, const char *fn)
{
    FILE *f = t->f;
    t->f = NULL;
    int bad = ferror(f) || fflush(f) != 0 || fsync(fileno(f)) != 0;
    int err = bad ? (errno ? errno : EIO) : 0;
    if (fclose(f) != 0 && !bad) {
        bad = 1;
        err = errno;
    }
    if (!bad)
        return BOSCH_OK;
    char *path = t->path;
    t->path = NULL;
    sel_tmp_discard(t);
    sel_io_fail(s, err, fn, "write", path);
    free(path);
    errno = err;
    return BOSCH_E_IO;
}

int sel_tmp_commit(const bosch_selection *s, struct sel_tmp *t, const char *fn)
{
    if (rename(t->tmp, t->path) != 0) {
        int err = errno;
        char *path = t->path;
        t->path = NULL;
        sel_tmp_discard(t);
        sel_io_fail(s, err, fn, "replace", path);
        free(path);
        errno = err;
        return BOSCH_E_IO;
    }
    free(t->tmp);
    t->tmp = NULL;
    return BOSCH_OK;
}

void sel_tmp_discard(struct sel_tmp *t)
{
    int err = errno; /* keep the failing call's errno for the caller */
    if (t->f)
        fclose(t->f);
    if (t->tmp)
        unlink(t->tmp);
    free(t->tmp);
    free(t->path);
    memset(t, 0, sizeof *t);
    errno = err;
}

int sel_ensure_dir(const bosch_selection *s, const char *dir, const char *fn)
{
    struct stat st;
    if (stat(dir, &st) != 0) {
        if (errno != ENOENT)
            return sel_io_fail(s, errno, fn, "use directory", dir);
        if (mkdir(dir, 0777) != 0 && errno != EEXIST)
            return sel_io_fail(s, errno, fn, "make directory", dir);
        if (stat(dir, &st) != 0)
            return sel_io_fail(s, errno, fn, "use directory", dir);
    }
    if (!S_ISDIR(st.st_mode))
        return sel_io_fail(s, ENOTDIR, fn, "use directory", dir);
    return BOSCH_OK;
}
