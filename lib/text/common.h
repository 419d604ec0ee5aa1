/* Shared by the files of libbosch-text: the per-thread reason of a failed
 * creator, and allocation helpers that report through a status. */
#ifndef TEXT_COMMON_H
#define TEXT_COMMON_H

#include "bosch/text.h"

#include <stdarg.h>
#include <stddef.h>

/* Records the status and message of a failing creator on this thread
 * (printf-style message, prefixed by the caller with its function name). */
void text_create_fail(int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A growable byte buffer (the library's strings are built in these). */
struct text_buf {
    char *data;
    size_t len, cap;
};
/* Each returns BOSCH_OK or BOSCH_E_NOMEM; data stays NUL-terminated. */
int text_buf_add(struct text_buf *b, const char *s, size_t n);
int text_buf_adds(struct text_buf *b, const char *s);
void text_buf_free(struct text_buf *b);
/* The arguments every chat format takes (chat.c): NULL outputs, NULL
 * messages with n > 0, a role other than system / user / assistant or a
 * NULL content give BOSCH_E_INVALID; else the outputs are reset and 0. */
int chat_check_args(const struct bosch_chat_message *messages, size_t n, char **text,
                    size_t *len);

#endif
