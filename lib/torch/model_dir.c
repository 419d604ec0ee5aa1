/* A model directory's bosch.json and config.json, read with json-c (no
 * libtorch): model_dir.h. */
#include "torch/model_dir.h"

#include "bosch/torch.h"
#include "util/json_dup.h"
#include "util/read_file.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define BT_KEY(e, key) key,
static const char *const file_keys[] = {BT_FILE_KEYS(BT_KEY)};
static const char *const number_keys[] = {BT_NUMBER_KEYS(BT_KEY)};
#undef BT_KEY

const char *bt_file_key(int i)
{
    return i >= 0 && i < BT_FILES ? file_keys[i] : NULL;
}

const char *bt_number_key(int i)
{
    return i >= 0 && i < BT_NUMBERS ? number_keys[i] : NULL;
}

static int fail(char *msg, size_t len, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(char *msg, size_t len, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, len, fmt, ap);
    va_end(ap);
    return status;
}

void bt_suggestions_free(struct bt_suggestions *s)
{
    for (int i = 0; i < BT_FILES; i++)
        free(s->file[i]);
    memset(s, 0, sizeof *s);
}

/* Every key must be one of the tables': "windw" is an error, not ignored. */
static int check_keys(json_object *root, const char *path, char *msg, size_t len)
{
    json_object_object_foreach(root, key, val)
    {
        (void)val;
        int known = 0;
        for (int i = 0; i < BT_FILES; i++)
            known |= !strcmp(key, file_keys[i]);
        for (int i = 0; i < BT_NUMBERS; i++)
            known |= !strcmp(key, number_keys[i]);
        if (!known)
            return fail(msg, len, BOSCH_E_INVALID,
                        "%s: unknown key \"%s\" (known: calib, heldout, heldout_multi, "
                        "heldout_two_hop, window, sink, metric, budget)",
                        path, key);
    }
    return BOSCH_OK;
}

/* A task file, resolved against the directory (absolute paths kept). */
static int read_file_key(struct bt_suggestions *s, int i, json_object *root, const char *path,
                         const char *dir, char *msg, size_t len)
{
    json_object *v;
    if (!json_object_object_get_ex(root, file_keys[i], &v))
        return BOSCH_OK;
    if (!json_object_is_type(v, json_type_string) || !*json_object_get_string(v))
        return fail(msg, len, BOSCH_E_INVALID, "%s: \"%s\" must be a file name", path,
                    file_keys[i]);
    const char *f = json_object_get_string(v);
    size_t n = strlen(dir) + strlen(f) + 2;
    if (n > 4096)
        return fail(msg, len, BOSCH_E_INVALID, "%s: path of \"%s\" too long", path, file_keys[i]);
    if (!(s->file[i] = malloc(n)))
        return fail(msg, len, BOSCH_E_NOMEM, "out of memory");
    if (f[0] == '/')
        snprintf(s->file[i], n, "%s", f);
    else
        snprintf(s->file[i], n, "%s/%s", dir, f);
    return BOSCH_OK;
}

/* window and sink (integers >= 1 and >= 0), budget (>= 2), metric. */
static int read_number_key(struct bt_suggestions *s, int i, json_object *root, const char *path,
                           char *msg, size_t len)
{
    json_object *v;
    if (!json_object_object_get_ex(root, number_keys[i], &v))
        return BOSCH_OK;
    if (i == BT_METRIC) {
        const char *m = json_object_get_string(v);
        if (!json_object_is_type(v, json_type_string) ||
            (strcmp(m, "exact") && strcmp(m, "logprob")))
            return fail(msg, len, BOSCH_E_INVALID,
                        "%s: \"metric\" must be \"exact\" or \"logprob\"", path);
        s->number[i] = !strcmp(m, "exact") ? BOSCH_TORCH_METRIC_EXACT : BOSCH_TORCH_METRIC_LOGPROB;
        s->has[i] = 1;
        return BOSCH_OK;
    }
    const int64_t lo = i == BT_WINDOW ? 1 : i == BT_SINK ? 0 : 2;
    const int64_t hi = i == BT_BUDGET ? INT64_MAX : (int64_t)1 << 30;
    int64_t x = json_object_get_int64(v);
    if (!json_object_is_type(v, json_type_int) || x < lo || x > hi)
        return fail(msg, len, BOSCH_E_INVALID, "%s: \"%s\" must be an integer >= %lld", path,
                    number_keys[i], (long long)lo);
    s->number[i] = x;
    s->has[i] = 1;
    return BOSCH_OK;
}

int bt_suggestions_read(const char *dir, struct bt_suggestions *s, char *msg, size_t len)
{
    memset(s, 0, sizeof *s);
    char path[4096];
    if (snprintf(path, sizeof path, "%s/bosch.json", dir) >= (int)sizeof path)
        return fail(msg, len, BOSCH_E_INVALID, "model path too long");
    struct stat st;
    if (stat(path, &st) != 0) /* none: a plain checkpoint; a symlink loop is no absence */
        return errno == ENOENT ? BOSCH_OK
                               : fail(msg, len, BOSCH_E_IO, "%s: %s", path, util_file_error(errno));
    struct util_json_dup dup;
    int twice = util_json_dup_find_file(path, &dup);
    if (twice < 0)
        return fail(msg, len, BOSCH_E_NOMEM, "out of memory");
    if (twice) {
        char what[160];
        util_json_dup_describe(&dup, what, sizeof what);
        return fail(msg, len, BOSCH_E_INVALID, "%s: line %d: %s (give each key once)", path,
                    dup.line, what);
    }
    json_object *root = json_object_from_file(path);
    if (!root || !json_object_is_type(root, json_type_object)) {
        json_object_put(root);
        return fail(msg, len, BOSCH_E_INVALID,
                    "%s: not a JSON object (unreadable, invalid JSON or another type)", path);
    }
    int rc = check_keys(root, path, msg, len);
    for (int i = 0; !rc && i < BT_FILES; i++)
        rc = read_file_key(s, i, root, path, dir, msg, len);
    for (int i = 0; !rc && i < BT_NUMBERS; i++)
        rc = read_number_key(s, i, root, path, msg, len);
    json_object_put(root);
    if (rc)
        bt_suggestions_free(s);
    return rc;
}

/* config.json was read by the model's open (config.cpp), which refuses a
 * duplicated key, before this runs. */
long bt_lowest_special_id(const char *dir)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s/config.json", dir) >= (int)sizeof path)
        return -1;
    json_object *root = json_object_from_file(path);
    if (!root)
        return -1;
    long low = -1;
    static const char *const keys[] = {"bos_token_id", "eos_token_id", "pad_token_id"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        json_object *v;
        if (!json_object_is_type(root, json_type_object) ||
            !json_object_object_get_ex(root, keys[k], &v) || !v)
            continue;
        int list = json_object_is_type(v, json_type_array);
        size_t n = list ? json_object_array_length(v) : 1;
        for (size_t i = 0; i < n; i++) {
            json_object *e = list ? json_object_array_get_idx(v, i) : v;
            if (!json_object_is_type(e, json_type_int))
                continue;
            int64_t id = json_object_get_int64(e);
            if (id >= 0 && id <= 0x7fffffff && (low < 0 || id < low))
                low = (long)id;
        }
    }
    json_object_put(root);
    return low;
}

int bt_is_text_jsonl(const char *path)
{
    enum { LINE = 65536 };
    FILE *f = fopen(path, "rb");
    char *line = f ? malloc(LINE) : NULL; /* not on a host thread's stack */
    if (!line) {
        if (f)
            fclose(f);
        return 0;
    }
    int text = 0;
    while (fgets(line, LINE, f)) {
        if (strspn(line, " \t\r\n") == strlen(line))
            continue;
        text = (strstr(line, "\"text\"") || strstr(line, "\"messages\"")) &&
               !strstr(line, "\"prompt\"");
        break;
    }
    free(line);
    fclose(f);
    return text;
}
