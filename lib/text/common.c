/* Errors of creators (per thread, as the core's) and the byte buffer. */
#include "text/common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local int create_status = BOSCH_OK;
static _Thread_local char create_error[512];

void text_create_fail(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(create_error, sizeof create_error, fmt, ap);
    va_end(ap);
    create_status = status;
}

BOSCH_TEXT_API int bosch_text_create_status(void) { return create_status; }
BOSCH_TEXT_API const char *bosch_text_create_error(void) { return create_error; }
BOSCH_TEXT_API void bosch_text_free(void *p) { free(p); }

int text_buf_add(struct text_buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->len + n + 1) {
            if (cap > (size_t)-1 / 2)
                return BOSCH_E_NOMEM;
            cap *= 2;
        }
        char *d = realloc(b->data, cap);
        if (!d)
            return BOSCH_E_NOMEM;
        b->data = d;
        b->cap = cap;
    }
    if (n)
        memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
    return BOSCH_OK;
}

int text_buf_adds(struct text_buf *b, const char *s) { return text_buf_add(b, s, strlen(s)); }

void text_buf_free(struct text_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}
