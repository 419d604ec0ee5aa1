/* A key given twice in one JSON object, found with jansson before the json-c
 * parse that reads the values: json-c keeps the last value of a duplicated
 * key without a word, which changes what a file means. Keys compare decoded
 * ("a" and "\u0061" are one key). Needs neither core nor libuv, so
 * libbosch-text and libbosch-torch compile it in as they do read_file.c. */
#ifndef LIBBOSCH_UTIL_JSON_DUP_H
#define LIBBOSCH_UTIL_JSON_DUP_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct util_json_dup {
    int line;     /* 1-based line of the key's second occurrence */
    char key[80]; /* the decoded key; control bytes as '?', a long one cut with "..." */
};

/* 1 when an object of text[0..len) gives a key twice (*dup says which and
 * where), 0 when none does or when the text is no JSON to jansson (the
 * caller's own parse says why), -1 when out of memory. */
int util_json_dup_find(const char *text, size_t len, struct util_json_dup *dup);

/* The same for a whole file; 0 also when it cannot be read (the caller's
 * read says why). */
int util_json_dup_find_file(const char *path, struct util_json_dup *dup);

/* Writes "key \"K\" is given twice", the words of every reader's refusal
 * (each names the file and the line its own way); snprintf's return. */
int util_json_dup_describe(const struct util_json_dup *dup, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
