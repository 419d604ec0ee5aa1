/* bosch_selection_export_hf_dir: a directory that loads as the model with
 * the selection's sliding layers: the exported config.json, the served mask
 * (bosch-mask.json) and a link to every other file of the model. What the
 * bosch command's `export --format hf` writes, for every caller.
 * Everything is staged before anything is replaced (the two files as
 * temporaries, each link under a temporary name) and renamed into place
 * only when all of it is there, so a failed export leaves the directory as
 * it was, and no directory when it made one. */
#define _XOPEN_SOURCE 700 /* realpath (XSI), beside the build's _POSIX_C_SOURCE */
#include "bosch/bosch.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "selection/selection_impl.h"

#define FN "bosch_selection_export_hf_dir"

/* What an export has put in the output directory so far. */
struct stage {
    afile cfg, mask;
    char **tmp, **dst; /* each link's temporary (NULL once renamed) and target */
    size_t n, cap;
};

/* Files of the model directory that are not linked: the config (replaced)
 * and a mask copy (the export writes its own); hidden files are skipped. */
static int is_own_file(const char *name)
{
    return name[0] == '.' || !strcmp(name, "config.json") || !strcmp(name, "bosch-mask.json");
}

/* A model that is a directory, and an output that is not that directory
 * (its config.json would be replaced); checked before anything is made. */
static int check_dirs(const bosch_selection *s, const char *model, const char *out)
{
    struct stat so, sm;
    if (stat(model, &sm) != 0)
        return sel_io_fail(s, errno, FN, "use model directory", model);
    if (!S_ISDIR(sm.st_mode))
        return sel_io_fail(s, ENOTDIR, FN, "use model directory", model);
    if (stat(out, &so) == 0 && so.st_dev == sm.st_dev && so.st_ino == sm.st_ino)
        return sel_fail(s, BOSCH_E_INVALID,
                        FN ": %s is the model directory itself (its config.json would be "
                           "replaced); give another directory",
                        out);
    return BOSCH_OK;
}

/* Records a staged link (takes neither string). */
static int push_link(const bosch_selection *s, struct stage *st, const char *tmp,
                     const char *dst)
{
    if (st->n == st->cap) {
        size_t cap = st->cap ? 2 * st->cap : 16;
        char **t = realloc(st->tmp, cap * sizeof *t);
        if (t)
            st->tmp = t;
        char **d = t ? realloc(st->dst, cap * sizeof *d) : NULL;
        if (d)
            st->dst = d;
        if (!t || !d)
            return sel_fail(s, BOSCH_E_NOMEM, FN ": out of memory");
        st->cap = cap;
    }
    st->tmp[st->n] = strdup(tmp);
    st->dst[st->n] = strdup(dst);
    if (!st->tmp[st->n] || !st->dst[st->n]) {
        free(st->tmp[st->n]);
        free(st->dst[st->n]);
        return sel_fail(s, BOSCH_E_NOMEM, FN ": out of memory");
    }
    st->n++;
    return BOSCH_OK;
}

/* Stages OUT/NAME as a link to TARGET: the link made as OUT/.NAME.link. A
 * file there that is not a link is kept. 1 staged, 0 kept, or a status
 * after sel_fail. */
static int stage_link(const bosch_selection *s, struct stage *st, const char *out,
                      const char *name, const char *target)
{
    char dst[PATH_MAX], tmp[PATH_MAX];
    struct stat sb;
    if (snprintf(dst, sizeof dst, "%s/%s", out, name) >= (int)sizeof dst ||
        snprintf(tmp, sizeof tmp, "%s/.%s.link", out, name) >= (int)sizeof tmp)
        return sel_fail(s, BOSCH_E_INVALID, FN ": path too long: %s/%s", out, name);
    if (lstat(dst, &sb) == 0 && !S_ISLNK(sb.st_mode))
        return 0;
    unlink(tmp); /* a leftover of an export that was killed */
    if (symlink(target, tmp) != 0)
        return sel_io_fail(s, errno, FN, "link", dst);
    int rc = push_link(s, st, tmp, dst);
    if (rc)
        unlink(tmp);
    return rc ? rc : 1;
}

/* Stages a link for every regular file of the model but its own
 * (is_own_file), by absolute path; counts the files kept into *kept. */
static int stage_links(const bosch_selection *s, struct stage *st, const char *model,
                       const char *out, size_t *kept)
{
    char abs[PATH_MAX], src[PATH_MAX];
    if (!realpath(model, abs))
        return sel_io_fail(s, errno, FN, "resolve", model);
    DIR *d = opendir(abs);
    if (!d)
        return sel_io_fail(s, errno, FN, "list", abs);
    int rc = BOSCH_OK;
    struct dirent *e;
    while (rc == BOSCH_OK && (e = readdir(d))) {
        struct stat sb;
        if (is_own_file(e->d_name))
            continue;
        if (snprintf(src, sizeof src, "%s/%s", abs, e->d_name) >= (int)sizeof src) {
            rc = sel_fail(s, BOSCH_E_INVALID, FN ": path too long: %s/%s", abs, e->d_name);
            break;
        }
        if (stat(src, &sb) != 0 || !S_ISREG(sb.st_mode))
            continue; /* subdirectories, dangling links */
        int n = stage_link(s, st, out, e->d_name, src);
        if (n < 0)
            rc = n;
        else if (n == 0)
            *kept += 1;
    }
    closedir(d);
    return rc;
}

/* OUT/config.json (the exported config `text`) and OUT/bosch-mask.json as
 * closed temporaries. */
static int stage_files(const bosch_selection *s, struct stage *st, const char *out,
                       const char *text)
{
    char *cfg = sel_join(out, "config.json"), *mask = sel_join(out, "bosch-mask.json");
    int rc = cfg && mask ? BOSCH_OK : sel_fail(s, BOSCH_E_NOMEM, FN ": out of memory");
    if (!rc && !(rc = sel_tmp_open(s, &st->cfg, cfg, FN))) {
        fputs(text, st->cfg.f);
        rc = sel_tmp_close(s, &st->cfg, FN);
    }
    if (!rc && !(rc = sel_tmp_open(s, &st->mask, mask, FN))) {
        rc = sel_put_json(st->mask.f, s, FN);
        int closed = sel_tmp_close(s, &st->mask, FN);
        rc = rc ? rc : closed;
    }
    free(cfg);
    free(mask);
    return rc;
}

/* Renames everything staged into place. */
static int commit(const bosch_selection *s, struct stage *st)
{
    int rc = sel_tmp_commit(s, &st->cfg, FN);
    rc = rc ? rc : sel_tmp_commit(s, &st->mask, FN);
    for (size_t i = 0; !rc && i < st->n; i++) {
        if (rename(st->tmp[i], st->dst[i]) != 0)
            return sel_io_fail(s, errno, FN, "link", st->dst[i]);
        free(st->tmp[i]);
        st->tmp[i] = NULL;
    }
    return rc;
}

/* Removes what is still staged; after a failure in a directory this call
 * made (`out`, else NULL), also what was renamed into it, and the
 * directory. Keeps errno (the status's). */
static void unstage(struct stage *st, const char *out)
{
    int err = errno;
    sel_tmp_discard(&st->cfg);
    sel_tmp_discard(&st->mask);
    for (size_t i = 0; i < st->n; i++) {
        if (st->tmp[i])
            unlink(st->tmp[i]);
        else if (out)
            unlink(st->dst[i]);
        free(st->tmp[i]);
        free(st->dst[i]);
    }
    free(st->tmp);
    free(st->dst);
    if (out) {
        char *cfg = sel_join(out, "config.json"), *mask = sel_join(out, "bosch-mask.json");
        if (cfg)
            unlink(cfg);
        if (mask)
            unlink(mask);
        free(cfg);
        free(mask);
        rmdir(out);
    }
    errno = err;
}

int bosch_selection_export_hf_dir(const bosch_selection *s, const char *model_dir,
                                  const char *out_dir, unsigned flags, size_t *linked,
                                  size_t *kept)
{
    size_t nk = 0;
    if (linked)
        *linked = 0;
    if (kept)
        *kept = 0;
    if (!s)
        return BOSCH_E_INVALID;
    if (!model_dir || !*model_dir || !out_dir || !*out_dir)
        return sel_fail(s, BOSCH_E_INVALID, FN ": the model and output directories must be "
                                               "given");
    if (flags & ~(unsigned)BOSCH_EXPORT_CONFIG_ONLY)
        return sel_fail(s, BOSCH_E_INVALID, FN ": unknown flags 0x%x", flags);
    /* Every check before the directory is touched. */
    char *src = sel_join(model_dir, "config.json"), *text = NULL;
    int rc = src ? check_dirs(s, model_dir, out_dir)
                 : sel_fail(s, BOSCH_E_NOMEM, FN ": out of memory");
    if (!rc && access(src, R_OK) != 0)
        rc = sel_io_fail(s, errno, FN, "read", src);
    if (!rc)
        rc = sel_hf_config_text(s, src, FN, &text);
    free(src);
    int made = 0;
    if (!rc)
        rc = sel_ensure_dir(s, out_dir, FN, &made);
    struct stage st;
    memset(&st, 0, sizeof st);
    if (!rc)
        rc = stage_files(s, &st, out_dir, text);
    if (!rc && !(flags & BOSCH_EXPORT_CONFIG_ONLY))
        rc = stage_links(s, &st, model_dir, out_dir, &nk);
    if (!rc)
        rc = commit(s, &st);
    if (!rc && linked)
        *linked = st.n;
    if (!rc && kept)
        *kept = nk;
    unstage(&st, rc && made ? out_dir : NULL);
    free(text);
    return rc;
}
