/* Internal side of the error helpers (lib/core/errors.c). */
#ifndef LIBBOSCH_CORE_ERRORS_H
#define LIBBOSCH_CORE_ERRORS_H

/* Records why a creator failed (bosch_create_status/_error) and returns
 * NULL, so that a creator can `return create_fail(...)`. */
void *create_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
