/* Runs a fuzz target over files and folders of inputs (its seed corpus):
 * the regression test of a target when it is not built with libFuzzer.
 *   fuzz_NAME PATH...    (a folder: every regular file in it)
 * Exit 0 when every input ran (a target reports bad input by status, never
 * by crashing; a crash or a sanitizer report fails the test). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        return -1;
    }
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t *b = realloc(buf, cap *= 2);
            if (!b) {
                free(buf);
                buf = NULL;
            }
            buf = b;
        }
    }
    fclose(f);
    if (!buf)
        return -1;
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    size_t inputs = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "no such input: %s\n", argv[i]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (run_file(argv[i]) != 0)
                return 1;
            inputs++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        if (!d)
            return 1;
        struct dirent *e;
        while ((e = readdir(d))) {
            char p[4096];
            snprintf(p, sizeof p, "%s/%s", argv[i], e->d_name);
            if (stat(p, &st) != 0 || !S_ISREG(st.st_mode))
                continue;
            if (run_file(p) != 0) {
                closedir(d);
                return 1;
            }
            inputs++;
        }
        closedir(d);
    }
    printf("%s: %zu inputs ran\n", argv[0], inputs);
    return inputs > 0 ? 0 : 1;
}
