/* What a model directory says besides its weights, read without libtorch:
 * the settings its bosch.json suggests, the lowest special token id of its
 * config.json, whether a task file holds text. Used by the checkpoint
 * handle (shim_checkpoint.c) and fuzzed on its own (test/fuzz). */
#ifndef BOSCH_TORCH_MODEL_DIR_H
#define BOSCH_TORCH_MODEL_DIR_H

#include <stddef.h>
#include <stdint.h>

/* bosch.json's keys: task files (paths relative to the directory) and
 * numbers. X(ENUM, "key"). */
#define BT_FILE_KEYS(X)                                                                           \
    X(CALIB, "calib") X(HELDOUT, "heldout") X(HELDOUT_MULTI, "heldout_multi")                     \
    X(HELDOUT_TWO_HOP, "heldout_two_hop")
#define BT_NUMBER_KEYS(X) X(WINDOW, "window") X(SINK, "sink") X(BUDGET, "budget") X(METRIC, "metric")

#define BT_ENUM(e, key) BT_##e,
enum bt_file { BT_FILE_KEYS(BT_ENUM) BT_FILES };
enum bt_number { BT_NUMBER_KEYS(BT_ENUM) BT_NUMBERS };
#undef BT_ENUM

struct bt_suggestions {
    char *file[BT_FILES];       /* resolved against the directory; NULL when not given */
    int64_t number[BT_NUMBERS]; /* METRIC: enum bosch_torch_metric */
    int has[BT_NUMBERS];
};

/* The key of a file or number; NULL out of range. */
const char *bt_file_key(int i);
const char *bt_number_key(int i);

/* Reads DIR/bosch.json into *s (zeroed first; nothing suggested when there
 * is no such file). Every key must be known: a typo would otherwise leave a
 * default in place. BOSCH_OK, or BOSCH_E_INVALID / BOSCH_E_NOMEM with the
 * reason in msg ("DIR/bosch.json: ..."); *s holds nothing then. */
int bt_suggestions_read(const char *dir, struct bt_suggestions *s, char *msg, size_t len);
void bt_suggestions_free(struct bt_suggestions *s);

/* The lowest of bos_token_id, eos_token_id, pad_token_id (an id or a list
 * of ids) that DIR/config.json names; -1 when it names none or cannot be
 * read (the model's loader has said why by then). */
long bt_lowest_special_id(const char *dir);

/* Whether a JSON Lines task holds text: its first non-blank line has a
 * "text" or "messages" key and no "prompt" (the token-id format's). 0 when
 * the file cannot be read (the id reader reports it). */
int bt_is_text_jsonl(const char *path);

#endif
