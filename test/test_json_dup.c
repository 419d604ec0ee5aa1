/* White-box tests of lib/util/json_dup.c: which key is given twice, where,
 * decoded, and that nothing else is called a duplicate. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/json_dup.h"

static int find(const char *text, struct util_json_dup *dup)
{
    memset(dup, 0x55, sizeof *dup);
    return util_json_dup_find(text, strlen(text), dup);
}

START_TEST(no_duplicate)
{
    struct util_json_dup d;
    static const char *const ok[] = {
        "{\"a\": 1, \"b\": {\"a\": 2}, \"c\": [{\"a\": 3}, {\"a\": 4}]}", /* one per object */
        "{\"a\": 1, \"A\": 2, \"a \": 3}",                              /* other keys */
        "[1, 2, 3]",
        "\"text\"",
        "",                           /* no JSON: the caller's parse says why */
        "{\"a\": 1,",                 /* cut short */
        "{\"a\": 1} trailing",        /* json-c's rules on what may follow */
        "{\"big\": 123456789012345678901234567890, \"s\": \"\\u0000\"}",
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        ck_assert_msg(find(ok[i], &d) == 0, "case %zu: '%s' called a duplicate", i, ok[i]);
}
END_TEST

/* text, the key reported, its line. */
static const struct {
    const char *text, *key;
    int line;
} dups[] = {
    {"{\"a\": 1, \"a\": 2}", "a", 1},
    {"{\n  \"window\": 6,\n  \"sink\": 1,\n  \"window\": 7\n}", "window", 4},
    {"{\"a\": 1, \"\\u0061\": 2}", "a", 1},                   /* equal once decoded */
    {"{\"\\u00e9\": 1, \"\xc3\xa9\": 2}", "\xc3\xa9", 1},     /* an escape and UTF-8 */
    {"{\"m\": {\"vocab\": {\"x\": 0, \"y\": 1, \"x\": 2}}}", "x", 1}, /* nested */
    {"[{\"k\": 1}, {\"k\": 1, \"k\": 1}]", "k", 1},           /* in an array, same value */
    {"{\"q\\\"t\": 1, \"q\\\"t\": 2}", "q\"t", 1},            /* an escaped quote */
    {"{\"b\\\\\": 1, \"b\\\\\": 2}", "b\\", 1},               /* a key ending in a backslash */
    {"{\"a\\nb\": 1, \"a\\nb\": 2}", "a?b", 1},               /* control bytes shown as '?' */
    {"{\"n\": 99999999999999999999999, \"n\": 1}", "n", 1},   /* past int64: still read */
    {"{\"a\": 1, \"a\": ", "a", 1},                           /* before the text breaks off */
};

START_TEST(duplicate_found)
{
    struct util_json_dup d;
    size_t i = (size_t)_i;
    ck_assert_msg(find(dups[i].text, &d) == 1, "case %zu: no duplicate found", i);
    ck_assert_str_eq(d.key, dups[i].key);
    ck_assert_int_eq(d.line, dups[i].line);
    char msg[200];
    util_json_dup_describe(&d, msg, sizeof msg);
    char want[200];
    snprintf(want, sizeof want, "key \"%s\" is given twice", dups[i].key);
    ck_assert_str_eq(msg, want);
}
END_TEST

/* A long key is cut to fit, marked with "...", still NUL-terminated. */
START_TEST(long_key)
{
    char key[300], text[700];
    memset(key, 'k', sizeof key - 1);
    key[sizeof key - 1] = '\0';
    snprintf(text, sizeof text, "{\"%s\": 1, \"%s\": 2}", key, key);
    struct util_json_dup d;
    ck_assert_int_eq(find(text, &d), 1);
    size_t n = strlen(d.key);
    ck_assert_uint_lt(n, sizeof d.key);
    ck_assert_str_eq(d.key + n - 3, "...");
    ck_assert(!strncmp(d.key, key, n - 3));
    /* "x" and two-byte characters: the cut falls between two of them. */
    char wide[300] = "x";
    for (int i = 0; i < 100; i++)
        strcat(wide, "\xc3\xa9");
    snprintf(text, sizeof text, "{\"%s\": 1, \"%s\": 2}", wide, wide);
    ck_assert_int_eq(find(text, &d), 1);
    n = strlen(d.key);
    ck_assert_uint_eq((n - 3) % 2, 1);
    ck_assert_str_eq(d.key + n - 3, "...");
}
END_TEST

START_TEST(file)
{
    char path[] = "/tmp/bosch-json-dup-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs("{\"calib\": \"a.jsonl\",\n \"calib\": \"b.jsonl\"}\n", f);
    fclose(f);
    struct util_json_dup d;
    ck_assert_int_eq(util_json_dup_find_file(path, &d), 1);
    ck_assert_str_eq(d.key, "calib");
    ck_assert_int_eq(d.line, 2);
    remove(path);
    ck_assert_int_eq(util_json_dup_find_file(path, &d), 0); /* the caller's read says why */
}
END_TEST

int main(void)
{
    Suite *s = suite_create("json_dup");
    TCase *tc = tcase_create("json_dup");
    tcase_add_test(tc, no_duplicate);
    tcase_add_loop_test(tc, duplicate_found, 0, (int)(sizeof dups / sizeof dups[0]));
    tcase_add_test(tc, long_key);
    tcase_add_test(tc, file);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
