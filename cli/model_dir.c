/* The model directory of a command and its bosch.json suggestions. */
/* realpath() is an XSI extension in glibc's headers. */
#define _XOPEN_SOURCE 700
#include "model_dir.h"

#include "lib_options.h"

#include <json-c/json.h>
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
            errorf("model directory '%s' does not exist", s->model);
            return NULL;
        }
        return s->model;
    }
    const char *env = getenv("BOSCH_DEFAULT_MODEL");
    if (env && *env) {
        if (!is_dir(env)) {
            errorf("BOSCH_DEFAULT_MODEL='%s' is not a directory", env);
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

/* The default task ("calib" or "heldout", relative to the directory). */
static int default_task(struct settings *s, json_object *root, const char *path,
                        const char *dir, const char *key)
{
    json_object *v;
    if (s->task || s->niah_given || !json_object_object_get_ex(root, key, &v))
        return 0;
    if (!json_object_is_type(v, json_type_string) || !*json_object_get_string(v)) {
        errorf("%s: \"%s\" must be a file name", path, key);
        return EXIT_ERROR;
    }
    const char *f = json_object_get_string(v);
    int n = f[0] == '/' ? snprintf(s->task_buf, sizeof s->task_buf, "%s", f)
                        : snprintf(s->task_buf, sizeof s->task_buf, "%s/%s", dir, f);
    if (n >= (int)sizeof s->task_buf) {
        errorf("%s: path of \"%s\" too long", path, key);
        return EXIT_ERROR;
    }
    s->task = s->task_buf;
    return 0;
}

/* window, sink, budget, metric: replace the built-in defaults. */
static int default_numbers(struct settings *s, json_object *root, const char *path)
{
    json_object *v;
    struct { const char *name; unsigned *dst; int *given; unsigned lo; } nums[] = {
        {"window", &s->window, &s->window_given, 1},
        {"sink", &s->sink, &s->sink_given, 0},
    };
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        if (!json_object_object_get_ex(root, nums[i].name, &v))
            continue;
        int64_t x = json_object_get_int64(v);
        if (!json_object_is_type(v, json_type_int) || x < nums[i].lo || x > (1 << 30)) {
            errorf("%s: \"%s\" must be an integer >= %u", path, nums[i].name, nums[i].lo);
            return EXIT_ERROR;
        }
        if (!*nums[i].given) {
            *nums[i].dst = (unsigned)x;
            *nums[i].given = 1;
        }
    }
    if (json_object_object_get_ex(root, "budget", &v)) {
        int64_t x = json_object_get_int64(v);
        if (!json_object_is_type(v, json_type_int) || x < 2) {
            errorf("%s: \"budget\" must be an integer >= 2", path);
            return EXIT_ERROR;
        }
        char text[32];
        snprintf(text, sizeof text, "%lld", (long long)x);
        lib_option_suggest(s, "budget", text);
    }
    if (json_object_object_get_ex(root, "metric", &v)) {
        const char *m = json_object_get_string(v);
        if (!json_object_is_type(v, json_type_string) ||
            (strcmp(m, "exact") && strcmp(m, "logprob"))) {
            errorf("%s: \"metric\" must be \"exact\" or \"logprob\"", path);
            return EXIT_ERROR;
        }
        if (!s->metric_given)
            s->metric = !strcmp(m, "exact") ? "exact" : "logprob";
    }
    return 0;
}

/* Settings a model directory may suggest in bosch.json (all optional):
 *   {"calib": "calib.jsonl", "heldout": "heldout.jsonl", "window": 32,
 *    "sink": 4, "metric": "exact", "budget": 300}
 * (and heldout_multi / heldout_two_hop, further held-out tasks); any other
 * key is an error.
 * calib is the default task of search and baseline, heldout that of eval
 * (paths relative to the directory). Command-line options win. 0 or
 * EXIT_ERROR after a message. */
static int apply_model_defaults(struct settings *s, const char *dir, int for_eval)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s/bosch.json", dir) >= (int)sizeof path) {
        errorf("model path too long");
        return EXIT_ERROR;
    }
    struct stat st;
    if (stat(path, &st) != 0)
        return 0; /* no suggestions: plain checkpoint */
    json_object *root = json_object_from_file(path);
    if (!root || !json_object_is_type(root, json_type_object)) {
        errorf("%s: not a JSON object (unreadable, invalid JSON or another type)", path);
        json_object_put(root);
        return EXIT_ERROR;
    }
    /* Every key must be one this command knows: a typo ("windw") would
     * otherwise be ignored and the default used. */
    static const char *const known[] = {"calib", "heldout", "heldout_multi", "heldout_two_hop",
                                        "window", "sink", "metric", "budget"};
    json_object_object_foreach(root, key, val)
    {
        (void)val;
        size_t k = 0;
        while (k < sizeof known / sizeof known[0] && strcmp(key, known[k]))
            k++;
        if (k == sizeof known / sizeof known[0]) {
            errorf("%s: unknown key \"%s\" (known: calib, heldout, heldout_multi, "
                   "heldout_two_hop, window, sink, metric, budget)",
                   path, key);
            json_object_put(root);
            return EXIT_ERROR;
        }
    }
    int status = default_task(s, root, path, dir, for_eval ? "heldout" : "calib");
    if (!status)
        status = default_numbers(s, root, path);
    json_object_put(root);
    return status;
}

int model_setup(struct settings *s, int for_eval)
{
    const char *dir = resolve_model(s);
    if (!dir || apply_model_defaults(s, dir, for_eval))
        return EXIT_ERROR;
    s->model = dir;
    if (!s->task)
        s->niah = 1;
    /* A generated task's size, checked before anything is allocated: its
     * token ids alone take samples x context x 4 bytes, and a forward over
     * it far more. */
    const unsigned long long tokens = (unsigned long long)s->samples * s->context;
    const unsigned long long cap = 1ull << 26;
    if ((s->niah || (s->task && !strncmp(s->task, "ruler:", 6))) && tokens > cap) {
        errorf("--samples %u x --context %u = %llu tokens: a generated task is limited to %llu "
               "tokens (fewer samples or a shorter context)",
               s->samples, s->context, tokens, cap);
        return EXIT_ERROR;
    }
    return 0;
}
