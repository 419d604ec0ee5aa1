/* Scratch directory and text files of a test process (scratch.h). */
#include "scratch.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[256];

void scratch_setup(const char *prefix)
{
    if (dir[0])
        return;
    snprintf(dir, sizeof dir, "/tmp/%s-XXXXXX", prefix);
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

const char *scratch_dir(void)
{
    return dir;
}

const char *scratch_path(const char *name)
{
    static char buf[8][320];
    static int next;
    char *p = buf[next++ % 8];
    snprintf(p, sizeof buf[0], "%s/%s", dir, name);
    return p;
}

void scratch_write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

char *scratch_read_text(const char *path)
{
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    char *buf = NULL;
    size_t n = 0, cap = 0;
    int c;
    while ((c = fgetc(f)) != EOF) {
        if (n + 2 > cap)
            ck_assert_ptr_nonnull(buf = realloc(buf, cap = cap ? 2 * cap : 4096));
        buf[n++] = (char)c;
    }
    fclose(f);
    if (!buf)
        ck_assert_ptr_nonnull(buf = malloc(1));
    buf[n] = '\0';
    return buf;
}
