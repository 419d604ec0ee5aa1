/* bosch tokenize --tokenizer FILE: UTF-8 text on stdin to one JSON array of
 * ids on stdout, with the BOS/EOS of the tokenizer's post-processor as
 * Hugging Face adds them (a note on stderr names them; --no-add-special:
 * none); --decode reads a JSON array of ids and prints their text. For
 * checking prompts; libbosch-text does the work. */
#include <bosch/text.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "options.h"

#define MAX_INPUT ((size_t)1 << 30)

/* All of stdin; NULL after a message. */
static char *read_stdin(size_t *n)
{
    size_t cap = 65536, len = 0;
    char *b = malloc(cap + 1);
    while (b) {
        size_t got = fread(b + len, 1, cap - len, stdin);
        len += got;
        if (len < cap) {
            if (ferror(stdin)) {
                errorf("tokenize: error reading standard input");
                free(b);
                return NULL;
            }
            break;
        }
        if (cap >= MAX_INPUT) {
            errorf("tokenize: input larger than %zu bytes", MAX_INPUT);
            free(b);
            return NULL;
        }
        char *nb = realloc(b, cap * 2 + 1);
        if (!nb)
            free(b);
        b = nb;
        cap *= 2;
    }
    if (!b) {
        errorf("tokenize: out of memory");
        return NULL;
    }
    b[len] = '\0';
    *n = len;
    return b;
}

/* The tokens of ids[0..n), space-separated, into buf. */
static void names(const bosch_tokenizer *tok, const int32_t *ids, size_t n, char *buf, size_t cap)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && at < cap; i++) {
        int w = snprintf(buf + at, cap - at, "%s%s", i ? " " : "", bosch_tokenizer_token(tok, ids[i]));
        at += w > 0 ? (size_t)w : 0;
    }
}

/* Says on stderr which special tokens BOSCH_TOKENIZE_ADD_SPECIAL added
 * (nothing when the tokenizer adds none, Qwen3's). */
static void note_added(const bosch_tokenizer *tok)
{
    const int32_t *pre, *post;
    size_t np, nq;
    char a[256], b[256];
    if (bosch_tokenizer_template(tok, &pre, &np, &post, &nq) || (!np && !nq))
        return;
    names(tok, pre, np, a, sizeof a);
    names(tok, post, nq, b, sizeof b);
    fprintf(stderr, "bosch: tokenize: special tokens added: %s%s%s%s%s (--no-add-special: none)\n",
            a, np ? " at start" : "", np && nq ? ", " : "", b, nq ? " at end" : "");
}

static int encode(const bosch_tokenizer *tok, const char *in, size_t n, unsigned flags)
{
    int32_t *ids;
    size_t k;
    int st = bosch_tokenizer_encode(tok, in, n, flags, &ids, &k);
    if (st) {
        errorf("tokenize: encoding failed (%s)", bosch_strerror(st));
        return EXIT_ERROR;
    }
    putchar('[');
    for (size_t i = 0; i < k; i++)
        printf(i ? ",%d" : "%d", ids[i]);
    puts("]");
    bosch_text_free(ids);
    if (flags & BOSCH_TOKENIZE_ADD_SPECIAL)
        note_added(tok);
    return EXIT_OK;
}

/* The ids of a JSON array; NULL after a message. */
static int32_t *parse_ids(const bosch_tokenizer *tok, const char *in, size_t n, size_t *k)
{
    json_tokener *jt = json_tokener_new();
    json_object *a = jt ? json_tokener_parse_ex(jt, in, (int)n) : NULL;
    int err = !jt || json_tokener_get_error(jt) != json_tokener_success;
    size_t end = jt ? json_tokener_get_parse_end(jt) : 0;
    json_tokener_free(jt);
    while (!err && end < n && strchr(" \t\r\n", in[end]))
        end++;
    if (err || end < n || !json_object_is_type(a, json_type_array)) {
        errorf("tokenize --decode: the input is not one JSON array of ids");
        json_object_put(a);
        return NULL;
    }
    *k = json_object_array_length(a);
    int32_t *ids = malloc((*k ? *k : 1) * sizeof *ids);
    if (!ids)
        errorf("tokenize --decode: out of memory");
    uint32_t vocab = bosch_tokenizer_vocab_size(tok);
    for (size_t i = 0; ids && i < *k; i++) {
        json_object *v = json_object_array_get_idx(a, i);
        int64_t x = json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : -1;
        if (x < 0 || x >= (int64_t)vocab || !bosch_tokenizer_token(tok, (int32_t)x)) {
            errorf("tokenize --decode: element %zu is not an id of this tokenizer (0..%u)", i,
                   vocab ? vocab - 1 : 0);
            free(ids);
            ids = NULL;
            break;
        }
        ids[i] = (int32_t)x;
    }
    json_object_put(a);
    return ids;
}

static int decode(const bosch_tokenizer *tok, const char *in, size_t n, unsigned flags)
{
    size_t k;
    int32_t *ids = parse_ids(tok, in, n, &k);
    if (!ids)
        return EXIT_ERROR;
    char *text;
    size_t len;
    int st = bosch_tokenizer_decode(tok, ids, k, flags, &text, &len);
    free(ids);
    if (st) {
        errorf("tokenize --decode: decoding failed (%s)", bosch_strerror(st));
        return EXIT_ERROR;
    }
    fwrite(text, 1, len, stdout);
    bosch_text_free(text);
    return EXIT_OK;
}

int cmd_tokenize(int argc, char **argv)
{
    struct settings s;
    settings_default(&s);
    int rc = parse_command(CMD_TOKENIZE, argc, argv, &s, NULL);
    if (rc)
        return rc;
    if (!s.tokenizer) {
        errorf("tokenize: --tokenizer FILE is required (a tokenizer.json)");
        return EXIT_USAGE;
    }
    if (s.decode ? s.no_special || s.no_add_special : s.skip_special) {
        errorf("tokenize: %s", s.decode ? "--no-special and --no-add-special are for encoding "
                                          "(decode: --skip-special)"
                                        : "--skip-special needs --decode");
        return EXIT_USAGE;
    }
    bosch_tokenizer *tok = bosch_tokenizer_open(s.tokenizer);
    if (!tok) {
        errorf("tokenize: %s", bosch_text_create_error());
        return EXIT_ERROR;
    }
    size_t n;
    char *in = read_stdin(&n);
    if (!in) {
        bosch_tokenizer_free(tok);
        return EXIT_ERROR;
    }
    rc = s.decode ? decode(tok, in, n, s.skip_special ? BOSCH_DECODE_SKIP_SPECIAL : 0)
                  : encode(tok, in, n, (s.no_special ? BOSCH_TOKENIZE_NO_SPECIAL : 0) |
                                           (s.no_add_special ? 0 : BOSCH_TOKENIZE_ADD_SPECIAL));
    free(in);
    bosch_tokenizer_free(tok);
    if (rc == EXIT_OK && fflush(stdout)) {
        errorf("tokenize: error writing standard output");
        rc = EXIT_ERROR;
    }
    return rc;
}
