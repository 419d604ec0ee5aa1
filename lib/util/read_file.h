/* A whole file in memory, the one reader of the project's C libraries (the
 * journal, libbosch-text's task files, the HF export's config.json). */
#ifndef LIBBOSCH_UTIL_READ_FILE_H
#define LIBBOSCH_UTIL_READ_FILE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Reads all of `path` into *data (malloc'd, NUL-terminated; *len excludes the
 * NUL). 0, or an errno value: the open's or read's, ENOMEM, or EFBIG when
 * the file holds more than `cap` bytes (0 = no cap); then *data is NULL. */
int util_read_file(const char *path, size_t cap, char **data, size_t *len);

/* The words for a path that could not be opened: strerror(err), but a
 * symlink loop (ELOOP) named as one. */
const char *util_file_error(int err);

#ifdef __cplusplus
}
#endif

#endif
