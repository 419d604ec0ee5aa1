/* bosch_selection_export_hf_dir: a directory that loads as the model with
 * the selection's sliding layers: the exported config.json, the served mask
 * (bosch-mask.json) and a link to every other file of the model. What the
 * bosch command's `export --format hf` writes, for every caller. */
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

/* Files of the model directory that are not linked: the config (replaced)
 * and a mask copy (the export writes its own); hidden files are skipped. */
static int is_own_file(const char *name)
{
    return name[0] == '.' || !strcmp(name, "config.json") || !strcmp(name, "bosch-mask.json");
}

/* Refuses the model's own directory as the output (its config.json would be
 * replaced): both are made or exist by now. */
static int check_not_model(const bosch_selection *s, const char *model, const char *out)
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

/* Makes OUT/NAME a link to TARGET, replacing a link already there (through
 * a temporary name and rename, so it is never missing); a file that is not
 * a link is kept. 1 linked, 0 kept, or a status after sel_fail. */
static int link_one(const bosch_selection *s, const char *out, const char *name,
                    const char *target)
{
    char dst[PATH_MAX], tmp[PATH_MAX];
    struct stat st;
    if (snprintf(dst, sizeof dst, "%s/%s", out, name) >= (int)sizeof dst ||
        snprintf(tmp, sizeof tmp, "%s/.%s.link", out, name) >= (int)sizeof tmp)
        return sel_fail(s, BOSCH_E_INVALID, FN ": path too long: %s/%s", out, name);
    if (lstat(dst, &st) == 0 && !S_ISLNK(st.st_mode))
        return 0;
    unlink(tmp);
    if (symlink(target, tmp) != 0 || rename(tmp, dst) != 0) {
        int err = errno;
        unlink(tmp);
        return sel_io_fail(s, err, FN, "link", dst);
    }
    return 1;
}

/* Links every regular file of the model but its own (is_own_file) into
 * `out` by absolute path; counts into *linked and *kept. */
static int link_model_files(const bosch_selection *s, const char *model, const char *out,
                            size_t *linked, size_t *kept)
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
        struct stat st;
        if (is_own_file(e->d_name))
            continue;
        if (snprintf(src, sizeof src, "%s/%s", abs, e->d_name) >= (int)sizeof src) {
            rc = sel_fail(s, BOSCH_E_INVALID, FN ": path too long: %s/%s", abs, e->d_name);
            break;
        }
        if (stat(src, &st) != 0 || !S_ISREG(st.st_mode))
            continue; /* subdirectories, dangling links */
        int n = link_one(s, out, e->d_name, src);
        if (n < 0)
            rc = n;
        else
            *(n ? linked : kept) += 1;
    }
    closedir(d);
    return rc;
}

/* OUT/config.json from MODEL/config.json, and OUT/bosch-mask.json. */
static int write_config_and_mask(const bosch_selection *s, const char *model, const char *out)
{
    char *src = sel_join(model, "config.json"), *dst = sel_join(out, "config.json"),
         *mask = sel_join(out, "bosch-mask.json");
    int rc = !src || !dst || !mask ? sel_fail(s, BOSCH_E_NOMEM, FN ": out of memory") : BOSCH_OK;
    if (!rc && access(src, R_OK) != 0)
        rc = sel_io_fail(s, errno, FN, "read", src);
    if (!rc)
        rc = bosch_selection_export_hf(s, src, dst);
    if (!rc)
        rc = bosch_selection_write_json(s, mask); /* atomic, as every writer */
    free(src);
    free(dst);
    free(mask);
    return rc;
}

int bosch_selection_export_hf_dir(const bosch_selection *s, const char *model_dir,
                                  const char *out_dir, unsigned flags, size_t *linked,
                                  size_t *kept)
{
    size_t nl = 0, nk = 0;
    if (!s)
        return BOSCH_E_INVALID;
    if (!model_dir || !*model_dir || !out_dir || !*out_dir)
        return sel_fail(s, BOSCH_E_INVALID, FN ": the model and output directories must be "
                                               "given");
    if (flags & ~(unsigned)BOSCH_EXPORT_CONFIG_ONLY)
        return sel_fail(s, BOSCH_E_INVALID, FN ": unknown flags 0x%x", flags);
    int rc = sel_ensure_dir(s, out_dir, FN);
    if (!rc)
        rc = check_not_model(s, model_dir, out_dir);
    if (!rc)
        rc = write_config_and_mask(s, model_dir, out_dir);
    if (!rc && !(flags & BOSCH_EXPORT_CONFIG_ONLY))
        rc = link_model_files(s, model_dir, out_dir, &nl, &nk);
    if (linked)
        *linked = nl;
    if (kept)
        *kept = nk;
    return rc;
}
