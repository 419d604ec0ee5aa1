/* tokenizer.json into a tokenizer: every field checked, each refusal naming
 * its JSON path. The supported subset is in docs/tokenizer.md. */
#include "text/tokenizer_json.h"
#include "util/json_dup.h"
#include "util/read_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int get_id(struct tok_load *L, json_object *v, const char *path, int32_t *id)
{
    if (!json_object_is_type(v, json_type_int))
        return FAIL(L, "%s: id must be an integer, got %s", path, tok_type_name(v));
    errno = 0;
    int64_t x = json_object_get_int64(v);
    if (errno || x < 0 || x >= (int64_t)TOK_MAX_IDS)
        return FAIL(L, "%s: id %lld out of range 0..%u", path, (long long)x, TOK_MAX_IDS - 1);
    *id = (int32_t)x;
    return BOSCH_OK;
}

/* Stores the string of an id (the vocab or an added token). */
static int set_string(struct tok_load *L, int32_t id, const char *s, size_t n, const char *path)
{
    bosch_tokenizer *t = L->tok;
    if (n == 0)
        return FAIL(L, "%s: empty token", path);
    if (n > TOK_MAX_TOKEN_LEN)
        return FAIL(L, "%s: token of %zu bytes (at most %u)", path, n, TOK_MAX_TOKEN_LEN);
    if (tok_utf8_valid_prefix(s, n) != n || memchr(s, 0, n))
        return FAIL(L, "%s: token is not valid UTF-8 without NUL", path);
    if ((uint32_t)id >= t->n_ids) {
        uint32_t nn = (uint32_t)id + 1;
        if (nn > t->cap_ids) {
            /* Geometric growth: a vocab arrives id by id, and growing by one
             * each time is quadratic wherever realloc cannot extend in place
             * (e.g. under AddressSanitizer: minutes for 151k ids). */
            uint32_t cap = t->cap_ids > nn / 2 ? 2 * t->cap_ids : nn;
            if (cap < 1024)
                cap = 1024;
            if (cap > TOK_MAX_IDS) /* ids are checked below TOK_MAX_IDS */
                cap = TOK_MAX_IDS;
            char **strs = realloc(t->strs, cap * sizeof *strs);
            if (strs)
                t->strs = strs;
            uint32_t *lens = realloc(t->lens, cap * sizeof *lens);
            if (lens)
                t->lens = lens;
            unsigned char *kind = realloc(t->kind, cap);
            if (kind)
                t->kind = kind;
            if (!strs || !lens || !kind)
                return tok_fail(L, BOSCH_E_NOMEM, "out of memory");
            t->cap_ids = cap;
        }
        for (uint32_t i = t->n_ids; i < nn; i++) {
            t->strs[i] = NULL;
            t->lens[i] = 0;
            t->kind[i] = 0;
        }
        t->n_ids = nn;
    }
    t->strs[id] = malloc(n + 1);
    if (!t->strs[id])
        return tok_fail(L, BOSCH_E_NOMEM, "out of memory");
    memcpy(t->strs[id], s, n);
    t->strs[id][n] = '\0';
    t->lens[id] = (uint32_t)n;
    return BOSCH_OK;
}

static int load_vocab(struct tok_load *L, json_object *vocab)
{
    if (tok_want_type(L, vocab, json_type_object, "model.vocab"))
        return L->status;
    bosch_tokenizer *t = L->tok;
    size_t count = (size_t)json_object_object_length(vocab);
    if (count > TOK_MAX_IDS)
        return FAIL(L, "model.vocab: %zu tokens (at most %u)", count, TOK_MAX_IDS);
    L->n_vocab = count;
    if (tok_strmap_init(&t->vocab, count))
        return tok_fail(L, BOSCH_E_NOMEM, "out of memory");
    json_object_object_foreach(vocab, key, val) {
        char path[128];
        snprintf(path, sizeof path, "model.vocab[\"%.60s\"]", key);
        int32_t id;
        if (get_id(L, val, path, &id))
            return L->status;
        if ((uint32_t)id < t->n_ids && t->strs[id])
            return FAIL(L, "%s: id %d is also the id of \"%.60s\"", path, id, t->strs[id]);
        if (set_string(L, id, key, strlen(key), path))
            return L->status;
        t->kind[id] = 1;
        if (tok_strmap_put(&t->vocab, t->strs, t->lens, id) >= 0)
            return FAIL(L, "%s: duplicate token", path);
    }
    return BOSCH_OK;
}

/* The two halves of merges[i]: "a b" or ["a", "b"]. */
static int merge_parts(struct tok_load *L, json_object *m, size_t i, const char **a, size_t *al,
                       const char **b, size_t *bl)
{
    if (json_object_is_type(m, json_type_string)) {
        const char *s = json_object_get_string(m);
        size_t n = (size_t)json_object_get_string_len(m);
        const char *sp = memchr(s, ' ', n);
        if (!sp || memchr(sp + 1, ' ', n - (size_t)(sp - s) - 1) || sp == s || sp == s + n - 1)
            return FAIL(L, "model.merges[%zu]: expected \"A B\" (two tokens, one space)", i);
        *a = s;
        *al = (size_t)(sp - s);
        *b = sp + 1;
        *bl = n - *al - 1;
        return BOSCH_OK;
    }
    if (json_object_is_type(m, json_type_array) && json_object_array_length(m) == 2) {
        json_object *x = json_object_array_get_idx(m, 0), *y = json_object_array_get_idx(m, 1);
        if (json_object_is_type(x, json_type_string) && json_object_is_type(y, json_type_string)) {
            *a = json_object_get_string(x);
            *al = (size_t)json_object_get_string_len(x);
            *b = json_object_get_string(y);
            *bl = (size_t)json_object_get_string_len(y);
            return BOSCH_OK;
        }
    }
    return FAIL(L, "model.merges[%zu]: expected a string \"A B\" or a pair [\"A\", \"B\"], got %s",
                i, tok_type_name(m));
}

static int load_merges(struct tok_load *L, json_object *merges)
{
    bosch_tokenizer *t = L->tok;
    if (merges && tok_want_type(L, merges, json_type_array, "model.merges"))
        return L->status;
    size_t n = merges ? json_object_array_length(merges) : 0;
    /* each merge names vocabulary tokens: far more merges than tokens is
     * not a BPE vocabulary but a way to exhaust memory */
    size_t most = L->n_vocab * 4 + 1024;
    if (most > TOK_MAX_MERGES)
        most = TOK_MAX_MERGES;
    if (n > most)
        return FAIL(L, "model.merges: %zu merges for %zu vocabulary tokens (at most %zu)", n,
                    L->n_vocab, most);
    if (tok_pairmap_init(&t->merges, n))
        return tok_fail(L, BOSCH_E_NOMEM, "out of memory");
    char buf[2 * TOK_MAX_TOKEN_LEN];
    for (size_t i = 0; i < n; i++) {
        const char *a = NULL, *b = NULL;
        size_t al = 0, bl = 0;
        if (merge_parts(L, json_object_array_get_idx(merges, i), i, &a, &al, &b, &bl))
            return L->status;
        int32_t ia = tok_strmap_get(&t->vocab, t->strs, t->lens, a, al);
        int32_t ib = tok_strmap_get(&t->vocab, t->strs, t->lens, b, bl);
        if (ia < 0 || ib < 0)
            return FAIL(L, "model.merges[%zu]: \"%.*s\" is not in model.vocab", i,
                        (int)(ia < 0 ? (al > 60 ? 60 : al) : (bl > 60 ? 60 : bl)),
                        ia < 0 ? a : b);
        memcpy(buf, a, al);
        memcpy(buf + al, b, bl);
        int32_t im = tok_strmap_get(&t->vocab, t->strs, t->lens, buf, al + bl);
        if (im < 0)
            return FAIL(L, "model.merges[%zu]: the merged token \"%.*s\" is not in model.vocab", i,
                        (int)(al + bl > 60 ? 60 : al + bl), buf);
        tok_pairmap_put(&t->merges, ia, ib, (uint32_t)i, im);
    }
    return BOSCH_OK;
}

/* A string member that only may be null or "" (suffixes, prefixes). */
static int check_null_or_empty(struct tok_load *L, json_object *model, const char *key)
{
    json_object *v = tok_member(model, key);
    if (!v || (json_object_is_type(v, json_type_string) && !json_object_get_string_len(v)))
        return BOSCH_OK;
    return FAIL(L, "model.%s: not supported (only null or \"\")", key);
}

static int load_model(struct tok_load *L, json_object *model)
{
    if (!model)
        return FAIL(L, "model: missing");
    if (tok_want_type(L, model, json_type_object, "model"))
        return L->status;
    json_object *type = tok_member(model, "type");
    if (type && !json_object_is_type(type, json_type_string))
        return FAIL(L, "model.type: expected string, got %s", tok_type_name(type));
    const char *ty = type ? json_object_get_string(type) : "BPE";
    if (strcmp(ty, "BPE"))
        return FAIL(L, "model.type: \"%.40s\" is not supported (only BPE)", ty);
    bosch_tokenizer *t = L->tok;
    if (tok_opt_bool(L, model, "byte_fallback", "model", 0, &t->byte_fallback) ||
        tok_opt_bool(L, model, "ignore_merges", "model", 0, &t->ignore_merges) ||
        tok_opt_bool(L, model, "fuse_unk", "model", 0, &t->fuse_unk))
        return L->status;
    json_object *drop = tok_member(model, "dropout");
    if (drop && !(json_object_is_type(drop, json_type_double) ||
                  json_object_is_type(drop, json_type_int)))
        return FAIL(L, "model.dropout: expected number or null, got %s", tok_type_name(drop));
    if (drop && json_object_get_double(drop) != 0)
        return FAIL(L, "model.dropout: BPE dropout is not supported");
    if (check_null_or_empty(L, model, "continuing_subword_prefix") ||
        check_null_or_empty(L, model, "end_of_word_suffix"))
        return L->status;
    const char *unk;
    size_t unk_len;
    if (tok_opt_string(L, model, "unk_token", "model", &unk, &unk_len))
        return L->status;
    json_object *vocab = tok_member(model, "vocab");
    if (!vocab)
        return FAIL(L, "model.vocab: missing");
    if (load_vocab(L, vocab) || load_merges(L, tok_member(model, "merges")))
        return L->status;
    t->unk_id = unk ? tok_strmap_get(&t->vocab, t->strs, t->lens, unk, unk_len) : -1;
    if (unk && t->unk_id < 0)
        return FAIL(L, "model.unk_token: \"%.60s\" is not in model.vocab", unk);
    return BOSCH_OK;
}

static int load_added(struct tok_load *L, json_object *arr)
{
    bosch_tokenizer *t = L->tok;
    if (arr && tok_want_type(L, arr, json_type_array, "added_tokens"))
        return L->status;
    size_t n = arr ? json_object_array_length(arr) : 0;
    if (n > TOK_MAX_ADDED)
        return FAIL(L, "added_tokens: %zu tokens (at most %u)", n, TOK_MAX_ADDED);
    if (tok_strmap_init(&t->added_map, n))
        return tok_fail(L, BOSCH_E_NOMEM, "out of memory");
    t->added = calloc(n ? n : 1, sizeof *t->added);
    if (!t->added)
        return tok_fail(L, BOSCH_E_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        json_object *o = json_object_array_get_idx(arr, i);
        char path[64];
        snprintf(path, sizeof path, "added_tokens[%zu]", i);
        if (tok_want_type(L, o, json_type_object, path))
            return L->status;
        json_object *c = tok_member(o, "content"), *idv = tok_member(o, "id");
        int32_t id;
        char p2[96];
        snprintf(p2, sizeof p2, "%s.id", path);
        if (!idv)
            return FAIL(L, "%s: missing", p2);
        if (get_id(L, idv, p2, &id))
            return L->status;
        snprintf(p2, sizeof p2, "%s.content", path);
        if (!c || !json_object_is_type(c, json_type_string))
            return FAIL(L, "%s: expected string, got %s", p2, tok_type_name(c));
        const char *s = json_object_get_string(c);
        size_t len = (size_t)json_object_get_string_len(c);
        struct tok_added *a = &t->added[t->n_added];
        int special, lstrip, rstrip, single, normalized;
        if (tok_opt_bool(L, o, "special", path, 0, &special) ||
            tok_opt_bool(L, o, "lstrip", path, 0, &lstrip) ||
            tok_opt_bool(L, o, "rstrip", path, 0, &rstrip) ||
            tok_opt_bool(L, o, "single_word", path, 0, &single) ||
            tok_opt_bool(L, o, "normalized", path, !special, &normalized))
            return L->status;
        if ((uint32_t)id < t->n_ids && t->strs[id]) {
            /* an added token may repeat a vocab entry (GPT-2's <|endoftext|>) */
            if (t->kind[id] != 1 || t->lens[id] != len || memcmp(t->strs[id], s, len))
                return FAIL(L, "%s.id: id %d is already \"%.60s\"", path, id, t->strs[id]);
        } else if (set_string(L, id, s, len, p2)) {
            return L->status;
        }
        if (len == 0)
            return FAIL(L, "%s: empty token", p2);
        if (tok_strmap_put(&t->added_map, t->strs, t->lens, id) >= 0)
            return FAIL(L, "%s: \"%.60s\" is added twice", p2, s);
        t->kind[id] = special ? 3 : 2;
        *a = (struct tok_added){t->strs[id], (uint32_t)len, id, (unsigned char)special,
                                (unsigned char)lstrip, (unsigned char)rstrip,
                                (unsigned char)single, (unsigned char)normalized, 0};
        t->added_first[(unsigned char)s[0]] = 1;
        t->n_added++;
    }
    return BOSCH_OK;
}


static int load_all(struct tok_load *L, json_object *root)
{
    bosch_tokenizer *t = L->tok;
    if (tok_want_type(L, root, json_type_object, "(root)"))
        return L->status;
    if (load_model(L, tok_member(root, "model")) ||
        load_added(L, tok_member(root, "added_tokens")) ||
        tok_load_normalizer(L, tok_member(root, "normalizer"), "normalizer", 0))
        return L->status;
    json_object *pre = tok_member(root, "pre_tokenizer");
    if ((pre && tok_load_pretok(L, pre, "pre_tokenizer", 0)) || tok_load_finish(L, root))
        return L->status;
    json_object *trunc = tok_member(root, "truncation"), *pad = tok_member(root, "padding");
    if (trunc || pad)
        return FAIL(L, "%s: not supported (must be null)", trunc ? "truncation" : "padding");
    /* normalized added tokens are found in normalized text by their
     * normalized form, as HF matches them */
    for (size_t i = 0; i < t->n_added && t->n_norms; i++) {
        struct tok_added *a = &t->added[i];
        struct text_buf nb = {0};
        if (!a->normalized)
            continue;
        if (tok_normalize(t->norms, t->n_norms, a->content, a->len, &nb)) {
            text_buf_free(&nb);
            return tok_fail(L, BOSCH_E_NOMEM, "out of memory");
        }
        if (nb.len && (nb.len != a->len || memcmp(nb.data, a->content, a->len))) {
            a->content = nb.data;
            a->len = (uint32_t)nb.len;
            a->owned = 1;
        } else {
            text_buf_free(&nb);
        }
        t->added_first[(unsigned char)a->content[0]] = 1;
    }
    for (int b = 0; b < 256; b++) {
        char u[4];
        size_t l = tok_utf8_put(u, tok_byte_to_cp((unsigned char)b));
        t->byte_id[b] = tok_strmap_get(&t->vocab, t->strs, t->lens, u, l);
    }
    return BOSCH_OK;
}

/* A key given twice anywhere (vocab, added tokens, a pipeline's settings):
 * json-c kept the last value, so the file has no single meaning. */
static int refuse_duplicate(struct tok_load *L, const char *src, const char *json, size_t len)
{
    struct util_json_dup dup;
    int twice = util_json_dup_find(json, len, &dup);
    if (twice < 0)
        return tok_fail(L, BOSCH_E_NOMEM, "out of memory");
    if (!twice)
        return BOSCH_OK;
    char what[160];
    util_json_dup_describe(&dup, what, sizeof what);
    return FAIL(L, "%s%sline %d: %s (give each key once)", src ? src : "", src ? ": " : "",
                dup.line, what);
}

bosch_tokenizer *tok_load_json(const char *fn, const char *src, const char *json, size_t len)
{
    struct tok_load L = {fn, NULL, BOSCH_OK, 0};
    if (!json && len) {
        tok_fail(&L, BOSCH_E_INVALID, "NULL json");
        return NULL;
    }
    if (len > TOK_MAX_FILE || len > INT32_MAX) {
        tok_fail(&L, BOSCH_E_INVALID, "%zu bytes of JSON (at most %zu)", len, TOK_MAX_FILE);
        return NULL;
    }
    json_tokener *jt = json_tokener_new_ex(64);
    if (!jt) {
        tok_fail(&L, BOSCH_E_NOMEM, "out of memory");
        return NULL;
    }
    json_object *root = json_tokener_parse_ex(jt, json ? json : "", (int)len);
    enum json_tokener_error e = json_tokener_get_error(jt);
    size_t end = json_tokener_get_parse_end(jt);
    json_tokener_free(jt);
    if (e == json_tokener_continue || (!root && e == json_tokener_success)) {
        json_object_put(root);
        tok_fail(&L, BOSCH_E_INVALID, "truncated JSON (%zu bytes)", len);
        return NULL;
    }
    if (e != json_tokener_success) {
        tok_fail(&L, BOSCH_E_INVALID, "malformed JSON at byte %zu: %s", end,
                json_tokener_error_desc(e));
        return NULL;
    }
    while (end < len && strchr(" \t\r\n", json[end]))
        end++;
    if (end < len) {
        json_object_put(root);
        tok_fail(&L, BOSCH_E_INVALID, "malformed JSON: data after the document at byte %zu", end);
        return NULL;
    }
    if (refuse_duplicate(&L, src, json, len)) {
        json_object_put(root);
        return NULL;
    }
    L.tok = calloc(1, sizeof *L.tok);
    if (!L.tok) {
        json_object_put(root);
        tok_fail(&L, BOSCH_E_NOMEM, "out of memory");
        return NULL;
    }
    int st = load_all(&L, root);
    json_object_put(root);
    if (st) {
        bosch_tokenizer_free(L.tok);
        return NULL;
    }
    return L.tok;
}

BOSCH_TEXT_API bosch_tokenizer *bosch_tokenizer_from_json(const char *json, size_t len)
{
    return tok_load_json("bosch_tokenizer_from_json", NULL, json, len);
}

BOSCH_TEXT_API bosch_tokenizer *bosch_tokenizer_open(const char *path)
{
    static const char fn[] = "bosch_tokenizer_open";
    if (!path) {
        text_create_fail(BOSCH_E_INVALID, "%s: NULL path", fn);
        return NULL;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        text_create_fail(BOSCH_E_IO, "%s: %s: %s", fn, path, util_file_error(errno));
        return NULL;
    }
    struct text_buf b = {0};
    char chunk[65536];
    size_t got;
    int st = BOSCH_OK;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (b.len + got > TOK_MAX_FILE) {
            st = BOSCH_E_INVALID;
            break;
        }
        if (text_buf_add(&b, chunk, got)) {
            st = BOSCH_E_NOMEM;
            break;
        }
    }
    int rerr = ferror(f);
    fclose(f);
    if (st || rerr) {
        text_buf_free(&b);
        if (rerr)
            text_create_fail(BOSCH_E_IO, "%s: %s: read error", fn, path);
        else if (st == BOSCH_E_INVALID)
            text_create_fail(st, "%s: %s: larger than %zu bytes", fn, path, TOK_MAX_FILE);
        else
            text_create_fail(st, "%s: out of memory", fn);
        return NULL;
    }
    bosch_tokenizer *t = tok_load_json(fn, path, b.data ? b.data : "", b.len);
    text_buf_free(&b);
    return t;
}

BOSCH_TEXT_API void bosch_tokenizer_free(bosch_tokenizer *t)
{
    if (!t)
        return;
    for (uint32_t i = 0; i < t->n_ids; i++)
        free(t->strs[i]);
    free(t->strs);
    free(t->lens);
    free(t->kind);
    for (size_t i = 0; i < t->n_added; i++)
        if (t->added[i].owned)
            free(t->added[i].content);
    free(t->added);
    tok_strmap_free(&t->vocab);
    tok_strmap_free(&t->added_map);
    tok_pairmap_free(&t->merges);
    for (size_t i = 0; i < TOK_MAX_PRETOK; i++)
        pcre2_code_free(t->pretok[i].re);
    free(t);
}
