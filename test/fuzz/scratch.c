/* Scratch files of the fuzz targets (fuzz.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

static char dir[512];
static char made[8][64]; /* names fuzz_file wrote, removed at exit */

static void cleanup(void)
{
    char p[sizeof dir + sizeof made[0] + 1];
    for (int i = 0; i < 8 && made[i][0]; i++) {
        if (snprintf(p, sizeof p, "%s/%s", dir, made[i]) < (int)sizeof p)
            unlink(p);
    }
    rmdir(dir);
}

const char *fuzz_dir(void)
{
    if (!dir[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/bosch-fuzz-%ld", t && *t ? t : "/tmp", (long)getpid());
        if (mkdir(dir, 0700) != 0) {
            struct stat st;
            if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
                dir[0] = '\0';
                return NULL;
            }
        }
        atexit(cleanup);
    }
    return dir;
}

const char *fuzz_file(const char *name, const uint8_t *data, size_t size)
{
    static char path[sizeof dir + 256];
    if (!fuzz_dir())
        return NULL;
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
        return NULL;
    for (int i = 0; i < 8; i++) {
        if (!strcmp(made[i], name))
            break;
        if (!made[i][0]) {
            snprintf(made[i], sizeof made[i], "%s", name);
            break;
        }
    }
    FILE *f = fopen(path, "wb");
    if (!f)
        return NULL;
    int ok = fwrite(data, 1, size, f) == size;
    ok = fclose(f) == 0 && ok;
    return ok ? path : NULL;
}
