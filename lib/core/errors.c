/* Status codes to text (from BOSCH_ERROR_MAP / BOSCH_STOP_MAP), and the
 * per-thread reason of the last failed creation. */
#include "bosch/bosch.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include "core/errors.h"

struct status_text {
    int code;
    const char *name;
    const char *text;
};

#define STATUS_ROW(name, value, text) {BOSCH_##name, "BOSCH_" #name, text},
static const struct status_text table[] = {
    {BOSCH_OK, "BOSCH_OK", "success"},
    BOSCH_ERROR_MAP(STATUS_ROW)
    BOSCH_STOP_MAP(STATUS_ROW)
};
#undef STATUS_ROW

static const struct status_text *find(int status)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].code == status)
            return &table[i];
    return NULL;
}

int bosch_is_error(int status)
{
    return status < 0;
}

const char *bosch_strerror(int status)
{
    const struct status_text *t = find(status);
    if (t)
        return t->text;
    return status < 0 ? "unknown error" : "unknown status";
}

const char *bosch_err_name(int status)
{
    const struct status_text *t = find(status);
    if (t)
        return t->name;
    return status < 0 ? "BOSCH_E_UNKNOWN" : "BOSCH_UNKNOWN";
}

/* Creators have no handle to keep their reason in: it lives per thread. */
static _Thread_local int create_status;
static _Thread_local char create_message[512];

void *create_fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(create_message, sizeof create_message, fmt, ap);
    va_end(ap);
    create_status = code;
    return NULL;
}

int bosch_create_status(void)
{
    return create_status;
}

const char *bosch_create_error(void)
{
    return create_message;
}
