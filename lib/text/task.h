/* The text task's builder, for the generators (lib/text/ruler.c). */
#ifndef TEXT_TASK_H
#define TEXT_TASK_H

#include "bosch/text.h"

/* An empty task, or NULL when out of memory. */
bosch_text_task *text_task_new(void);
/* Appends a sample, copying every string: `text` (plain prompt) or
 * `messages` (n_messages > 0, rendered in chat format `style`), exactly
 * one; answers (n_answers > 0); answer_prefix may be NULL (none).
 * BOSCH_OK, BOSCH_E_NOMEM or BOSCH_E_INVALID. */
int text_task_add(bosch_text_task *t, const char *text,
                  const struct bosch_chat_message *messages, size_t n_messages, int style,
                  const char *const *answers, size_t n_answers, const char *answer_prefix,
                  uint32_t max_new_tokens);

/* "system", "user" or "assistant". */
int text_known_role(const char *r);

#endif
