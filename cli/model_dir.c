/* The model directory of a command: which one (what is in it is
 * libbosch-torch's to read: bosch_torch_checkpoint_open). */
/* realpath() is an XSI extension in glibc's headers. */
#define _XOPEN_SOURCE 700
#include "model_dir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef BOSCH_DEFAULT_MODEL_DIR
#define BOSCH_DEFAULT_MODEL_DIR "/usr/local/share/libbosch/organism"
#endif
/* <datadir>/libbosch/organism relative to <bindir>: found next to the running
 * program, so an installed tree works from any prefix (or DESTDIR), and the
 * build tree works through build/share (a link the configure step makes). */
#ifndef BOSCH_MODEL_DIR_FROM_BINDIR
#define BOSCH_MODEL_DIR_FROM_BINDIR "../share/libbosch/organism"
#endif

static int is_dir(const char *p)
{
    struct stat st;
    return p && *p && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Why `p` is no directory: the cause, not "does not exist" for all. */
static const char *why_not_dir(const char *p)
{
    struct stat st;
    if (!*p)
        return "is empty";
    if (stat(p, &st) == 0)
        return "is not a directory";
    if (errno == ELOOP)
        return "is a symlink loop (too many levels of symbolic links)";
    return errno == ENOENT ? "does not exist" : strerror(errno);
}

/* The organism next to the running program, resolved (links followed) into
 * buf; NULL when there is none. */
static const char *model_beside_program(char *buf, size_t len)
{
    char exe[4096], joined[8192];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return NULL;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return NULL;
    *slash = '\0';
    snprintf(joined, sizeof joined, "%s/%s", exe, BOSCH_MODEL_DIR_FROM_BINDIR);
    char *real = realpath(joined, NULL);
    if (!real || !is_dir(real) || strlen(real) >= len) {
        free(real);
        return NULL;
    }
    memcpy(buf, real, strlen(real) + 1);
    free(real);
    return buf;
}

/* The model directory: --model, $BOSCH_DEFAULT_MODEL, the organism beside the
 * program, the one under the configured prefix. NULL after a message. */
static const char *resolve_model(const struct settings *s)
{
    static char beside[4096];
    if (s->model) {
        if (!is_dir(s->model)) {
            errorf("model directory '%s' %s", s->model, why_not_dir(s->model));
            return NULL;
        }
        return s->model;
    }
    const char *env = getenv("BOSCH_DEFAULT_MODEL");
    if (env && *env) {
        if (!is_dir(env)) {
            errorf("BOSCH_DEFAULT_MODEL='%s' %s", env, why_not_dir(env));
            return NULL;
        }
        return env;
    }
    const char *near = model_beside_program(beside, sizeof beside);
    if (near)
        return near;
    if (is_dir(BOSCH_DEFAULT_MODEL_DIR))
        return BOSCH_DEFAULT_MODEL_DIR;
    errorf("no model: give --model DIR or set BOSCH_DEFAULT_MODEL (the default model is "
           "looked for in <program's directory>/%s and %s, not found)",
           BOSCH_MODEL_DIR_FROM_BINDIR, BOSCH_DEFAULT_MODEL_DIR);
    return NULL;
}

int model_setup(struct settings *s, int for_eval)
{
    const char *dir = resolve_model(s);
    if (!dir)
        return EXIT_ERROR;
    s->model = dir;
    s->heldout = for_eval;
    return 0;
}
