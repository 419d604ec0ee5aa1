/* Atomic file replacement (atomic_file.h). */
#include "util/atomic_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int afile_open(afile *a, const char *path)
{
    memset(a, 0, sizeof *a);
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
    const char *base = slash ? slash + 1 : path;
    size_t n = strlen(path) + 16;
    a->tmp = malloc(n);
    a->path = strdup(path);
    if (!a->tmp || !a->path) {
        afile_discard(a);
        return ENOMEM;
    }
    /* ".NAME.XXXXXX" in the target's directory: hidden, same filesystem. */
    snprintf(a->tmp, n, "%.*s.%s.XXXXXX", (int)dirlen, path, base);
    int fd = mkstemp(a->tmp);
    if (fd < 0) {
        int err = errno;
        free(a->tmp);
        a->tmp = NULL; /* nothing was created */
        afile_discard(a);
        return err;
    }
    /* mkstemp makes the file 0600; outputs are meant to be read by others. */
    if (fchmod(fd, 0644) != 0 || !(a->f = fdopen(fd, "w"))) {
        int err = errno;
        close(fd);
        afile_discard(a);
        return err;
    }
    return 0;
}

int afile_close(afile *a)
{
    FILE *f = a->f;
    a->f = NULL;
    int bad = ferror(f) || fflush(f) != 0 || fsync(fileno(f)) != 0;
    int err = bad ? (errno ? errno : EIO) : 0;
    if (fclose(f) != 0 && !bad)
        err = errno ? errno : EIO;
    return err;
}

int afile_rename(afile *a)
{
    if (rename(a->tmp, a->path) != 0)
        return errno;
    free(a->tmp);
    a->tmp = NULL; /* nothing left to remove */
    return 0;
}

int afile_commit(afile *a)
{
    int err = afile_close(a);
    if (!err)
        err = afile_rename(a);
    afile_discard(a);
    return err;
}

void afile_discard(afile *a)
{
    int err = errno;
    if (a->f)
        fclose(a->f);
    if (a->tmp)
        unlink(a->tmp);
    free(a->tmp);
    free(a->path);
    memset(a, 0, sizeof *a);
    errno = err;
}
