/* Duplicated JSON keys through jansson's JSON_REJECT_DUPLICATES: json_dup.h.
 * This file alone includes jansson (its json_object() would clash with
 * json-c's type of the same name). */
#include "util/json_dup.h"

#include "util/read_file.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The decoded key that jansson refused: its error position is just past the
 * key's closing quote; the opening one is the first unescaped quote before. */
static void name_key(const char *text, size_t len, size_t end, struct util_json_dup *dup)
{
    dup->key[0] = '\0';
    if (end < 2 || end > len || text[end - 1] != '"')
        return;
    size_t open = end - 1;
    while (open > 0) {
        open--;
        size_t slashes = 0;
        while (open >= slashes + 1 && text[open - slashes - 1] == '\\')
            slashes++;
        if (text[open] == '"' && slashes % 2 == 0)
            break;
    }
    json_t *k = json_loadb(text + open, end - open, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    const char *s = json_string_value(k);
    size_t n = s ? json_string_length(k) : 0, cap = sizeof dup->key - 4, i;
    for (i = 0; i < n && i < cap; i++)
        dup->key[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
    if (n > cap) {
        while (i > 0 && ((unsigned char)s[i] & 0xc0) == 0x80)
            i--; /* cut at a character, not inside one */
        memcpy(dup->key + i, "...", 3);
        i += 3;
    }
    dup->key[i] = '\0';
    json_decref(k);
}

int util_json_dup_find(const char *text, size_t len, struct util_json_dup *dup)
{
    json_error_t e;
    /* Any top-level value, big integers as reals, "\u0000" in strings: only
     * the keys matter here, and json-c's parse judges the rest. */
    const size_t flags = JSON_REJECT_DUPLICATES | JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL |
                         JSON_ALLOW_NUL;
    json_t *v = json_loadb(text, len, flags, &e);
    if (v) {
        json_decref(v);
        return 0;
    }
    if (json_error_code(&e) == json_error_out_of_memory)
        return -1;
    if (json_error_code(&e) != json_error_duplicate_key)
        return 0;
    dup->line = e.line;
    name_key(text, len, e.position > 0 ? (size_t)e.position : 0, dup);
    return 1;
}

int util_json_dup_find_file(const char *path, struct util_json_dup *dup)
{
    char *text;
    size_t len;
    int err = util_read_file(path, 0, &text, &len);
    if (err)
        return err == ENOMEM ? -1 : 0;
    int rc = util_json_dup_find(text, len, dup);
    free(text);
    return rc;
}

int util_json_dup_describe(const struct util_json_dup *dup, char *buf, size_t len)
{
    return snprintf(buf, len, "key \"%s\" is given twice", dup->key);
}
