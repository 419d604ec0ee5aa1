/* Internal layout of bosch_selection (lib/selection/). */
#ifndef LIBBOSCH_SELECTION_IMPL_H
#define LIBBOSCH_SELECTION_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bosch/bosch.h"
#include "util/atomic_file.h"

struct setting {
    char *key; /* "name" or "group.name" */
    int type;  /* enum bosch_setting_type */
    union {
        char *s;
        int64_t i;
        double d;
        int b;
    } v;
};

struct bosch_selection {
    uint32_t layers, kv_groups, heads_per_group;
    size_t units;
    uint8_t *mask; /* units bytes, 0/1 */
    char *method, *status, *model_path, *library_version, *metric;
    double target_ratio; /* NaN = unset */
    double *importance;  /* units values, NULL = unset */
    int has_score;
    double score[BOSCH_SCORE_COUNT];
    int has_kv;
    uint64_t kv_context, kv_window, kv_sink;
    struct setting *settings;
    size_t n_settings, cap_settings;
    int has_evals, has_stage_evals;
    uint64_t evals[BOSCH_STAGE_COUNT], total, replayed;
    char *error;          /* SEL_ERROR_LEN bytes, behind a pointer: see sel_fail */
};

#define SEL_ERROR_LEN 512

/* Records the message of a failed call in the handle's error buffer (held
 * behind a pointer, so a const handle's value is never written) and returns
 * code. report.c, with sel_set_text. */
int sel_fail(const bosch_selection *s, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* "FN: cannot WHAT PATH: strerror(err)" as BOSCH_E_IO, with errno set to
 * err (report.c); returns BOSCH_E_IO. */
int sel_io_fail(const bosch_selection *s, int err, const char *fn, const char *what,
                const char *path);

/* Copies a string into *dst (NULL unsets); BOSCH_OK or BOSCH_E_NOMEM. */
int sel_set_text(char **dst, const char *value);

/* Frees every setting. */
void sel_settings_clear(bosch_selection *s);

/* Checks a settings key; NULL when valid, else why not. */
const char *sel_setting_key_problem(const bosch_selection *s, const char *key);

/* The output file of a text writer `fn` (output.c), written as a
 * temporary `t` beside `path`: NULL after sel_fail (BOSCH_E_INVALID for a
 * NULL handle or path, else BOSCH_E_IO with errno kept). sel_close_out
 * syncs it and renames it over `path`: BOSCH_OK, or BOSCH_E_IO after
 * sel_fail when a write, the close or the rename failed (errno kept; the
 * temporary removed, an earlier `path` left as it was). */
FILE *sel_open_out(const bosch_selection *s, afile *t, const char *path, const char *fn);
int sel_close_out(const bosch_selection *s, afile *t, const char *fn);

/* The TSV body: one line per layer, one tab-separated value per KV group,
 * 1 = full (write.c). */
void sel_put_tsv(FILE *f, const bosch_selection *s);

/* Atomic file replacement (atomic.c, over util/atomic_file.h): a file is
 * written under a temporary name in its own directory (".NAME.XXXXXX",
 * which the HF export's links skip), flushed and synced, then renamed over
 * PATH, so a reader never sees half a file and a failure leaves no
 * temporary behind. These add the selection's error messages. */
/* Creates the temporary of `path`. BOSCH_OK, or BOSCH_E_IO/NOMEM after
 * sel_fail naming `fn` (errno kept); *t then holds nothing. */
int sel_tmp_open(const bosch_selection *s, afile *t, const char *path, const char *fn);
/* Flushes, syncs and closes; any earlier write error counts. On failure
 * the temporary is removed (sel_fail, errno kept). */
int sel_tmp_close(const bosch_selection *s, afile *t, const char *fn);
/* Renames a closed temporary over its path; on failure removes it. */
int sel_tmp_commit(const bosch_selection *s, afile *t, const char *fn);
/* Removes whatever is left (open or closed temporary) and frees *t; safe on
 * a zeroed or already committed *t. */
void sel_tmp_discard(afile *t);
/* Makes directory `dir` (one level) unless it exists; BOSCH_E_IO when it
 * cannot be made or exists as something else (errno ENOTDIR). *made is 1
 * when this call made it (a failed export removes it again), else 0. */
int sel_ensure_dir(const bosch_selection *s, const char *dir, const char *fn, int *made);
/* "DIR/NAME", malloc'ed (NULL when out of memory). */
char *sel_join(const char *dir, const char *name);

/* Exports of whole sliding layers (export_hf.c): BOSCH_OK when `s` records
 * a window (which gives `what`) in 1..2^31-1 and is layer-level, else
 * sel_fail naming `fn`. */
int sel_check_layer_export(const bosch_selection *s, const char *fn, const char *what);
/* A model's config.json (at most 64 MiB) as a JSON object in *out (the
 * caller puts it); a status after sel_fail naming `fn`. */
struct json_object;
int sel_read_config(const bosch_selection *s, const char *path, const char *fn,
                    struct json_object **out);
/* The exported Hugging Face config (export_hf.c): `source_config` read,
 * checked (shape, window, Qwen3-MoE) and given the sliding members, as
 * malloc'ed text ending in a newline in *text; a status after sel_fail. */
int sel_hf_config_text(const bosch_selection *s, const char *source_config, const char *fn,
                       char **text);
/* The selection's JSON text (write.c) into f; BOSCH_OK, or BOSCH_E_NOMEM
 * after sel_fail naming `fn`. */
int sel_put_json(FILE *f, const bosch_selection *s, const char *fn);

/* Checks of a model's config.json (config_check.c). BOSCH_E_MISMATCH
 * naming both shapes when its num_hidden_layers (required: else
 * BOSCH_E_CORRUPT), num_key_value_heads or num_attention_heads (when
 * present) differ from the selection's. */
int sel_check_config_shape(const bosch_selection *s, struct json_object *cfg, const char *path,
                           const char *fn);
/* What a family's transformers 5 config can say about sliding windows
 * (config_family.c; docs/export.md). */
enum sel_hf_windows {
    SEL_HF_PER_LAYER,       /* use_sliding_window, sliding_window, layer_types: Qwen3, Qwen2 */
    SEL_HF_USE_SLIDING_ALL, /* use_sliding_window slides every layer or none: Qwen3-MoE */
    SEL_HF_WINDOW_ALL,      /* sliding_window (or null) for every layer: Mistral */
    SEL_HF_NO_WINDOW        /* no sliding window at all: Llama */
};
struct sel_family {
    const char *arch;       /* "Qwen3ForCausalLM", as in config.json's architectures */
    const char *model_type; /* "qwen3" */
    enum sel_hf_windows hf;
};
/* The family of a model's config.json in *out (static): its architectures
 * (every entry the same known one) and model_type, either may be absent but
 * not both, and they must agree. BOSCH_E_INVALID naming an unknown
 * architecture or model type with the supported ones, BOSCH_E_CORRUPT for
 * members of the wrong type; after sel_fail naming `fn`. */
int sel_config_family(const bosch_selection *s, struct json_object *cfg, const char *path,
                      const char *fn, const struct sel_family **out);
/* max_position_embeddings when a positive integer, else 0. */
uint64_t sel_config_max_positions(struct json_object *cfg);
/* Layers whose first unit is SWA (of a layer-level selection: its sliding
 * layers). */
uint32_t sel_sliding_layers(const bosch_selection *s);
/* BOSCH_E_INVALID naming the window and `limit` when some layer slides
 * and the window is not below `limit` positions (named `name`, from
 * `source` when not NULL): such a window sees every key. */
int sel_check_window_slides(const bosch_selection *s, const char *fn, uint64_t limit,
                            const char *name, const char *source);

#endif
