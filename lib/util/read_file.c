#include "util/read_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *util_file_error(int err)
{
    return err == ELOOP ? "a symlink loop (too many levels of symbolic links)" : strerror(err);
}

int util_read_file(const char *path, size_t cap, char **data, size_t *len)
{
    *data = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return errno ? errno : EIO;
    size_t size = 1 << 14, n = 0;
    char *buf = malloc(size);
    int err = buf ? 0 : ENOMEM;
    while (!err) {
        n += fread(buf + n, 1, size - n - 1, f); /* room for the NUL */
        if (ferror(f))
            err = errno ? errno : EIO;
        else if (cap && n > cap)
            err = EFBIG;
        else if (feof(f))
            break;
        else if (n == size - 1) {
            char *bigger = realloc(buf, size * 2);
            if (bigger) {
                buf = bigger;
                size *= 2;
            } else {
                err = ENOMEM;
            }
        }
    }
    fclose(f);
    if (err) {
        free(buf);
        return err;
    }
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return 0;
}
