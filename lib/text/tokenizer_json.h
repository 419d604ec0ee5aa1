/* What the files reading tokenizer.json share: the state of one load and
 * checked access to json-c values. Each refusal names its JSON path. */
#ifndef TEXT_TOKENIZER_JSON_H
#define TEXT_TOKENIZER_JSON_H

#include <json-c/json.h>

#include "text/tokenizer.h"

struct tok_load {
    const char *fn;
    bosch_tokenizer *tok;
    int status;
    size_t n_vocab;
};

/* Records the first failure (prefixed with the loader's function name) and
 * returns its status. */
int tok_fail(struct tok_load *L, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define FAIL(L, ...) tok_fail((L), BOSCH_E_INVALID, __VA_ARGS__)
const char *tok_type_name(json_object *o);
/* A member of an object; NULL when absent or null. */
json_object *tok_member(json_object *o, const char *key);
int tok_want_type(struct tok_load *L, json_object *o, json_type t, const char *path);
/* An optional boolean member (absent or null: dflt). */
int tok_opt_bool(struct tok_load *L, json_object *o, const char *key, const char *path, int dflt,
                 int *out);
/* An optional string member (absent or null: *out NULL, *len 0). */
int tok_opt_string(struct tok_load *L, json_object *o, const char *key, const char *path,
                   const char **out, size_t *len);
/* The "type" string of an object, or NULL after a failure. */
const char *tok_type_of(struct tok_load *L, json_object *o, const char *path);

/* tokenizer_pipeline.c: normalizer, pre_tokenizer. */
int tok_load_normalizer(struct tok_load *L, json_object *o, const char *path, int depth);
int tok_load_pretok(struct tok_load *L, json_object *o, const char *path, int depth);
/* tokenizer_post.c: the kind of model the pre-tokenizers make (byte-level
 * or SentencePiece-style) checked against the model, the decoder and the
 * post-processor (its template of special tokens). After the model, the
 * added tokens and the pipeline are loaded. */
int tok_load_finish(struct tok_load *L, json_object *root);

#endif
