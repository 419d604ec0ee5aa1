/* RULER's needle-in-a-haystack generator behind bosch_text_ruler_create,
 * written against a token counter so that its tests can count words. */
#ifndef TEXT_RULER_H
#define TEXT_RULER_H

#include "bosch/text.h"

/* Counts the tokens of n bytes of s into *tokens; BOSCH_OK or a status. */
struct ruler_counter {
    int (*count)(void *ctx, const char *s, size_t n, size_t *tokens);
    void *ctx;
    int chat_style; /* the chat format of the prompts (params' chat); 0: Qwen3's */
};
/* The counter's chat format (enum bosch_chat_style). */
int ruler_chat_style(const struct ruler_counter *c);

#define RULER_MAX_NEEDLES 16

/* What the generator did for one sample (tests). Offsets are bytes into
 * the sample's input (the user turn, or the plain text). */
struct ruler_info {
    size_t units;                         /* haystack units (sentences, lines) */
    size_t tokens;                        /* the rendered prompt's count */
    size_t n_needles;
    double depth[RULER_MAX_NEEDLES];      /* fraction of the haystack, in text order */
    size_t offset[RULER_MAX_NEEDLES];     /* where each needle starts, in text order */
};

/* Generates the task of p into *out; on failure a status and the reason in
 * err (without the function name). `info`, when not NULL, receives
 * p->samples entries (allocated, free()). */
int ruler_generate(const struct ruler_counter *c, const struct bosch_text_ruler_params *p,
                   bosch_text_task **out, struct ruler_info **info, char *err, size_t errlen);

#endif
