/* Result files (PREFIX.json, .tsv, .svg) and terminal output. */
#include "output.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib_options.h"

char *path_with(const char *prefix, const char *suffix)
{
    size_t n = strlen(prefix) + strlen(suffix) + 1;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s%s", prefix, suffix);
    return p;
}

/* The task part of the settings: a RULER task and its parameters, the task
 * file, or the NIAH parameters. */
static int record_task(bosch_selection *sel, const struct settings *s)
{
    int rc = s->tokenizer ? bosch_selection_setting_set_string(sel, "tokenizer", s->tokenizer) : 0;
    if (rc)
        return rc;
    if (s->task && !strncmp(s->task, "ruler:", 6)) {
        rc = bosch_selection_setting_set_string(sel, "task", s->task);
        rc = rc ? rc : bosch_selection_setting_set_int(sel, "ruler.context", s->context);
        rc = rc ? rc : bosch_selection_setting_set_int(sel, "ruler.samples", s->samples);
        if (s->screen_length) /* the length screened candidates were scored at */
            rc = rc ? rc : bosch_selection_setting_set_int(sel, "ruler.screen_length",
                                                            s->screen_length);
        return rc ? rc : bosch_selection_setting_set_int(sel, "ruler.seed", (int64_t)s->seed);
    }
    if (s->task && s->screen_task) /* the file screened candidates were scored on */
        rc = bosch_selection_setting_set_string(sel, "screen_task", s->screen_task);
    if (s->task)
        return rc ? rc : bosch_selection_setting_set_string(sel, "task", s->task);
    rc = bosch_selection_setting_set_int(sel, "niah.context", s->context);
    rc = rc ? rc : bosch_selection_setting_set_int(sel, "niah.samples", s->samples);
    rc = rc ? rc : bosch_selection_setting_set_int(sel, "niah.needles", s->needles);
    rc = rc ? rc : bosch_selection_setting_set_int(sel, "niah.key_len", s->key_len);
    rc = rc ? rc : bosch_selection_setting_set_int(sel, "niah.value_len", s->value_len);
    return rc ? rc : bosch_selection_setting_set_int(sel, "niah.seed", (int64_t)s->seed);
}

static int record_settings(bosch_selection *sel, const struct settings *s)
{
    int rc = record_task(sel, s);
    rc = rc ? rc : bosch_selection_setting_set_int(sel, "window", effective_window(s));
    rc = rc ? rc : bosch_selection_setting_set_int(sel, "sink", s->sink);
    rc = rc ? rc : bosch_selection_setting_set_string(sel, "metric", s->metric);
    rc = rc ? rc : bosch_selection_setting_set_double(sel, "ratio", s->ratio);
    rc = rc ? rc : bosch_selection_setting_set_int(sel, "seed", (int64_t)s->seed);
    rc = rc ? rc : bosch_selection_setting_set_int(sel, "eval_batch", s->eval_batch ? s->eval_batch : 1);
    rc = rc ? rc : bosch_selection_setting_set_int(sel, "forward_samples", s->forward_samples);
    rc = rc ? rc : bosch_selection_setting_set_bool(sel, "prefix_cache", !s->no_prefix_cache);
    rc = rc ? rc : bosch_selection_setting_set_string(sel, "device", s->device);
    rc = rc ? rc : bosch_selection_setting_set_string(sel, "dtype", s->dtype);
    if (s->kind)
        rc = rc ? rc : bosch_selection_setting_set_string(sel, "kind", s->kind);
    if (s->job_ranks) {
        rc = rc ? rc : bosch_selection_setting_set_int(sel, "job.ranks", s->job_ranks);
        rc = rc ? rc : bosch_selection_setting_set_string(sel, "job.devices", s->job_devices);
    }
    return rc;
}

/* One library option's value in its type (a value the library accepted). */
static int record_option(bosch_selection *sel, const char *name, const char *value)
{
    switch (bosch_option_type(name)) {
    case BOSCH_OPTION_UINT:
        return bosch_selection_setting_set_int(sel, name, strtoll(value, NULL, 10));
    case BOSCH_OPTION_DOUBLE:
        return bosch_selection_setting_set_double(sel, name, strtod(value, NULL));
    case BOSCH_OPTION_BOOL:
        return bosch_selection_setting_set_bool(sel, name, value[0] == '1');
    default:
        return bosch_selection_setting_set_string(sel, name, value);
    }
}

/* The search's library options in the table's order: every option given
 * (or suggested by bosch.json), and budget, strategy, variant and threads
 * at the library's default when not. */
static int record_search_options(bosch_selection *sel, const struct settings *s)
{
    static const char *const always[] = {"budget", "strategy", "variant", "threads"};
    int rc = 0;
    for (size_t i = 0; i < bosch_option_count() && !rc; i++) {
        const char *name = bosch_option_name(i), *value = lib_option_given(s, name);
        for (size_t k = 0; !value && k < sizeof always / sizeof always[0]; k++)
            if (!strcmp(name, always[k]))
                value = bosch_option_default(name);
        if (value && strcmp(name, "seed"))
            rc = record_option(sel, name, value);
    }
    return rc;
}

int record_run(bosch_selection *sel, const struct settings *s, const char *method)
{
    int rc = bosch_selection_set_method(sel, method);
    rc = rc ? rc : bosch_selection_set_model_path(sel, s->model);
    rc = rc ? rc : bosch_selection_set_metric(sel, s->metric);
    rc = rc ? rc : bosch_selection_set_kv_saving(sel, s->context, effective_window(s), s->sink);
    rc = rc ? rc : record_settings(sel, s);
    if (!strcmp(method, "bosch"))
        rc = rc ? rc : record_search_options(sel, s);
    if (rc) {
        errorf("%s", bosch_selection_last_error(sel));
        return EXIT_ERROR;
    }
    return 0;
}

int check_output_prefix(const char *prefix)
{
    /* The directory of PREFIX: a file made and removed there is the one
     * test that also holds for root and read-only mounts. */
    const char *slash = strrchr(prefix, '/');
    size_t n = !slash ? 1 : slash == prefix ? 1 : (size_t)(slash - prefix);
    char *dir = malloc(n + 1), *probe = malloc(n + 32);
    if (!dir || !probe) {
        free(dir);
        free(probe);
        errorf("out of memory");
        return -1;
    }
    snprintf(dir, n + 1, "%s", !slash ? "." : slash == prefix ? "/" : prefix);
    snprintf(probe, n + 32, "%s/.bosch-out-XXXXXX", dir);
    int fd = mkstemp(probe), rc = 0;
    if (fd < 0) {
        errorf("cannot write the outputs %s.json, .tsv, .svg: directory '%s': %s", prefix, dir,
               strerror(errno));
        rc = -1;
    } else {
        close(fd);
        unlink(probe);
    }
    free(dir);
    free(probe);
    return rc;
}

int write_outputs(const bosch_selection *sel, const char *prefix)
{
    static const char *sfx[3] = {".json", ".tsv", ".svg"};
    for (int i = 0; i < 3; i++) {
        char *p = path_with(prefix, sfx[i]);
        if (!p)
            return -1;
        int rc = i == 0   ? bosch_selection_write_json(sel, p)
                 : i == 1 ? bosch_selection_write_tsv(sel, p)
                          : bosch_selection_write_svg(sel, p);
        if (rc) {
            errorf("cannot write %s: %s", p, strerror(errno));
            free(p);
            return -1;
        }
        free(p);
    }
    return 0;
}

const char *shown_method(const bosch_selection *sel)
{
    const char *m = bosch_selection_method(sel);
    return m ? m : "mask";
}

void print_picture(const bosch_selection *sel)
{
    uint32_t L = bosch_selection_layers(sel), G = bosch_selection_kv_groups(sel);
    uint8_t *mask = malloc(bosch_selection_units(sel));
    double *ratios = malloc(L * sizeof *ratios);
    if (mask && ratios && !bosch_selection_mask(sel, mask, bosch_selection_units(sel)) &&
        !bosch_selection_layer_ratios(sel, ratios, L)) {
        printf("layer  units (# = sliding window, . = full)  SWA ratio\n");
        for (uint32_t l = 0; l < L; l++) {
            printf("%5u  ", l);
            for (uint32_t g = 0; g < G; g++)
                putchar(mask[(size_t)l * G + g] ? '#' : '.');
            printf("  %.3f\n", ratios[l]);
        }
    }
    free(mask);
    free(ratios);
}

void print_scores(const bosch_selection *sel)
{
    double raw = bosch_selection_score(sel, BOSCH_SCORE_RAW);
    double norm = bosch_selection_score(sel, BOSCH_SCORE_NORMALIZED);
    double full = bosch_selection_score(sel, BOSCH_SCORE_FULL);
    double swa = bosch_selection_score(sel, BOSCH_SCORE_ALL_SWA);
    /* %.63s: the method as it was shown before (at most 63 characters). */
    printf("%.63s: %u layers x %u KV groups x %u query heads/group, SWA units %zu/%zu (ratio %.4f)\n",
           shown_method(sel), bosch_selection_layers(sel), bosch_selection_kv_groups(sel),
           bosch_selection_heads_per_group(sel), bosch_selection_swa_units(sel),
           bosch_selection_units(sel), bosch_selection_ratio(sel));
    if (isfinite(raw))
        printf("score: raw %.6g", raw);
    else
        printf("score: raw n/a");
    if (isfinite(norm))
        printf(", normalised %.4f", norm);
    if (isfinite(full) && isfinite(swa))
        printf(" (full %.6g, all-SWA %.6g)", full, swa);
    printf("\n");
}

bosch_selection *read_mask(const char *path)
{
    static const char prefix[] = "bosch_selection_read_json: ";
    bosch_selection *sel = bosch_selection_read_json(path);
    if (!sel) {
        const char *msg = bosch_create_error();
        errorf("%s", strncmp(msg, prefix, sizeof prefix - 1) ? msg : msg + sizeof prefix - 1);
    }
    return sel;
}

void mask_settings(const bosch_selection *sel, struct mask_settings *ms)
{
    double w, k, c;
    const char *m = bosch_selection_setting_string(sel, "metric");
    memset(ms, 0, sizeof *ms);
    if (!bosch_selection_setting_double(sel, "window", &w) && w >= 1 && w < 1e9)
        ms->window = (unsigned)w;
    if (!bosch_selection_setting_double(sel, "sink", &k) && k >= 0 && k < 1e9) {
        ms->sink = (unsigned)k;
        ms->have_sink = 1;
    }
    if (m && (!strcmp(m, "exact") || !strcmp(m, "logprob") || !strcmp(m, "match")))
        snprintf(ms->metric, sizeof ms->metric, "%s", m);
    if (!bosch_selection_setting_double(sel, "niah.context", &c) && c >= 8 && c <= (1 << 24))
        ms->context = (unsigned)c;
    const char *t = bosch_selection_setting_string(sel, "task");
    double sd;
    if (t && !strncmp(t, "ruler:", 6) && strlen(t) < sizeof ms->ruler_task) {
        snprintf(ms->ruler_task, sizeof ms->ruler_task, "%s", t);
        if (!bosch_selection_setting_double(sel, "ruler.context", &c) && c >= 8 && c <= (1 << 24))
            ms->context = (unsigned)c;
        if (!bosch_selection_setting_double(sel, "ruler.seed", &sd) && sd >= 0 && sd < 9e15)
            ms->ruler_seed = (unsigned long long)sd;
    }
}

/* Window, sink, metric (and a NIAH mask's context) default to the mask's settings. */
void settings_from_mask(struct settings *s, const bosch_selection *sel)
{
    struct mask_settings ms;
    mask_settings(sel, &ms);
    if (!s->window_given && ms.window) {
        s->window = ms.window;
        s->window_given = 1;
    }
    if (!s->sink_given && ms.have_sink) {
        s->sink = ms.sink;
        s->sink_given = 1;
    }
    if (!s->metric_given && *ms.metric) {
        snprintf(s->metric_buf, sizeof s->metric_buf, "%s", ms.metric);
        s->metric = s->metric_buf;
        s->metric_given = 1;
    }
    if (!s->task && *ms.ruler_task) {
        /* The same RULER task on a held-out set: the next seed. */
        snprintf(s->task_buf, sizeof s->task_buf, "%s", ms.ruler_task);
        s->task = s->task_buf;
        if (!s->context_given)
            s->context = ms.context;
        if (!s->seed_given)
            s->seed = ms.ruler_seed + 1;
    } else if (!s->task && ms.context) {
        s->niah = 1;
        if (!s->context_given)
            s->context = ms.context;
    }
}
