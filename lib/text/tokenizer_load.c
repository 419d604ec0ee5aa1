/* tokenizer.json into a tokenizer: every field checked, each refusal naming
 * its JSON path. The supported subset is in docs/tokenizer.md. */
#include "text/tokenizer.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct load {
    const char *fn;
    bosch_tokenizer *tok;
    int status;
    size_t n_vocab;
};

#define FAIL(L, ...) fail_at((L), BOSCH_E_INVALID, __VA_ARGS__)

__attribute__((format(printf, 3, 4))) static int fail_at(struct load *L, int status,
                                                         const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (L->status == BOSCH_OK) {
        text_create_fail(status, "%s: %s", L->fn, msg);
        L->status = status;
    }
    return status;
}

static const char *type_name(json_object *o)
{
    return o ? json_type_to_name(json_object_get_type(o)) : "null";
}

/* A member of an object; NULL when absent or null. */
static json_object *member(json_object *o, const char *key)
{
    json_object *v = NULL;
    return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static int want_type(struct load *L, json_object *o, json_type t, const char *path)
{
    if (json_object_is_type(o, t))
        return BOSCH_OK;
    return FAIL(L, "%s: expected %s, got %s", path, json_type_to_name(t), type_name(o));
}

/* An optional boolean member (absent or null: dflt). */
static int opt_bool(struct load *L, json_object *o, const char *key, const char *path, int dflt,
                    int *out)
{
    json_object *v = member(o, key);
    *out = dflt;
    if (!v)
        return BOSCH_OK;
    if (!json_object_is_type(v, json_type_boolean))
        return FAIL(L, "%s.%s: expected boolean, got %s", path, key, type_name(v));
    *out = json_object_get_boolean(v);
    return BOSCH_OK;
}

static int get_id(struct load *L, json_object *v, const char *path, int32_t *id)
{
    if (!json_object_is_type(v, json_type_int))
        return FAIL(L, "%s: id must be an integer, got %s", path, type_name(v));
    errno = 0;
    int64_t x = json_object_get_int64(v);
    if (errno || x < 0 || x >= (int64_t)TOK_MAX_IDS)
        return FAIL(L, "%s: id %lld out of range 0..%u", path, (long long)x, TOK_MAX_IDS - 1);
    *id = (int32_t)x;
    return BOSCH_OK;
}

/* Stores the string of an id (the vocab or an added token). */
static int set_string(struct load *L, int32_t id, const char *s, size_t n, const char *path)
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
        char **strs = realloc(t->strs, nn * sizeof *strs);
        if (strs)
            t->strs = strs;
        uint32_t *lens = realloc(t->lens, nn * sizeof *lens);
        if (lens)
            t->lens = lens;
        unsigned char *kind = realloc(t->kind, nn);
        if (kind)
            t->kind = kind;
        if (!strs || !lens || !kind)
            return fail_at(L, BOSCH_E_NOMEM, "out of memory");
        for (uint32_t i = t->n_ids; i < nn; i++) {
            t->strs[i] = NULL;
            t->lens[i] = 0;
            t->kind[i] = 0;
        }
        t->n_ids = nn;
    }
    t->strs[id] = malloc(n + 1);
    if (!t->strs[id])
        return fail_at(L, BOSCH_E_NOMEM, "out of memory");
    memcpy(t->strs[id], s, n);
    t->strs[id][n] = '\0';
    t->lens[id] = (uint32_t)n;
    return BOSCH_OK;
}

static int load_vocab(struct load *L, json_object *vocab)
{
    if (want_type(L, vocab, json_type_object, "model.vocab"))
        return L->status;
    bosch_tokenizer *t = L->tok;
    size_t count = (size_t)json_object_object_length(vocab);
    if (count > TOK_MAX_IDS)
        return FAIL(L, "model.vocab: %zu tokens (at most %u)", count, TOK_MAX_IDS);
    L->n_vocab = count;
    if (tok_strmap_init(&t->vocab, count))
        return fail_at(L, BOSCH_E_NOMEM, "out of memory");
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
static int merge_parts(struct load *L, json_object *m, size_t i, const char **a, size_t *al,
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
                i, type_name(m));
}

static int load_merges(struct load *L, json_object *merges)
{
    bosch_tokenizer *t = L->tok;
    if (merges && want_type(L, merges, json_type_array, "model.merges"))
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
        return fail_at(L, BOSCH_E_NOMEM, "out of memory");
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
static int check_null_or_empty(struct load *L, json_object *model, const char *key)
{
    json_object *v = member(model, key);
    if (!v || (json_object_is_type(v, json_type_string) && !json_object_get_string_len(v)))
        return BOSCH_OK;
    return FAIL(L, "model.%s: not supported (only null or \"\")", key);
}

static int load_model(struct load *L, json_object *model)
{
    if (!model)
        return FAIL(L, "model: missing");
    if (want_type(L, model, json_type_object, "model"))
        return L->status;
    json_object *type = member(model, "type");
    if (type && !json_object_is_type(type, json_type_string))
        return FAIL(L, "model.type: expected string, got %s", type_name(type));
    const char *ty = type ? json_object_get_string(type) : "BPE";
    if (strcmp(ty, "BPE"))
        return FAIL(L, "model.type: \"%.40s\" is not supported (only BPE)", ty);
    int fallback, fuse;
    if (opt_bool(L, model, "byte_fallback", "model", 0, &fallback) ||
        opt_bool(L, model, "ignore_merges", "model", 0, &L->tok->ignore_merges) ||
        opt_bool(L, model, "fuse_unk", "model", 0, &fuse))
        return L->status;
    if (fallback)
        return FAIL(L, "model.byte_fallback: true is not supported");
    json_object *drop = member(model, "dropout");
    if (drop && !(json_object_is_type(drop, json_type_double) ||
                  json_object_is_type(drop, json_type_int)))
        return FAIL(L, "model.dropout: expected number or null, got %s", type_name(drop));
    if (drop && json_object_get_double(drop) != 0)
        return FAIL(L, "model.dropout: BPE dropout is not supported");
    if (check_null_or_empty(L, model, "continuing_subword_prefix") ||
        check_null_or_empty(L, model, "end_of_word_suffix"))
        return L->status;
    if (member(model, "unk_token"))
        return FAIL(L, "model.unk_token: not supported (byte-level BPE needs none)");
    json_object *vocab = member(model, "vocab");
    if (!vocab)
        return FAIL(L, "model.vocab: missing");
    if (load_vocab(L, vocab) || load_merges(L, member(model, "merges")))
        return L->status;
    return BOSCH_OK;
}

static int load_added(struct load *L, json_object *arr)
{
    bosch_tokenizer *t = L->tok;
    if (arr && want_type(L, arr, json_type_array, "added_tokens"))
        return L->status;
    size_t n = arr ? json_object_array_length(arr) : 0;
    if (n > TOK_MAX_ADDED)
        return FAIL(L, "added_tokens: %zu tokens (at most %u)", n, TOK_MAX_ADDED);
    if (tok_strmap_init(&t->added_map, n))
        return fail_at(L, BOSCH_E_NOMEM, "out of memory");
    t->added = calloc(n ? n : 1, sizeof *t->added);
    if (!t->added)
        return fail_at(L, BOSCH_E_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        json_object *o = json_object_array_get_idx(arr, i);
        char path[64];
        snprintf(path, sizeof path, "added_tokens[%zu]", i);
        if (want_type(L, o, json_type_object, path))
            return L->status;
        json_object *c = member(o, "content"), *idv = member(o, "id");
        int32_t id;
        char p2[96];
        snprintf(p2, sizeof p2, "%s.id", path);
        if (!idv)
            return FAIL(L, "%s: missing", p2);
        if (get_id(L, idv, p2, &id))
            return L->status;
        snprintf(p2, sizeof p2, "%s.content", path);
        if (!c || !json_object_is_type(c, json_type_string))
            return FAIL(L, "%s: expected string, got %s", p2, type_name(c));
        const char *s = json_object_get_string(c);
        size_t len = (size_t)json_object_get_string_len(c);
        struct tok_added *a = &t->added[t->n_added];
        int special, lstrip, rstrip, single, normalized;
        if (opt_bool(L, o, "special", path, 0, &special) ||
            opt_bool(L, o, "lstrip", path, 0, &lstrip) ||
            opt_bool(L, o, "rstrip", path, 0, &rstrip) ||
            opt_bool(L, o, "single_word", path, 0, &single) ||
            opt_bool(L, o, "normalized", path, !special, &normalized))
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
                                (unsigned char)single, (unsigned char)normalized};
        t->added_first[(unsigned char)s[0]] = 1;
        t->n_added++;
    }
    return BOSCH_OK;
}

static int norm_kind(const char *ty)
{
    static const char *const names[] = {"NFC", "NFD", "NFKC", "NFKD"};
    for (int i = 0; i < 4; i++)
        if (!strcmp(ty, names[i]))
            return TOK_NORM_NFC + i;
    return 0;
}

static const char *type_of(struct load *L, json_object *o, const char *path)
{
    char p[96];
    if (want_type(L, o, json_type_object, path))
        return NULL;
    json_object *ty = member(o, "type");
    snprintf(p, sizeof p, "%s.type", path);
    if (!ty || !json_object_is_type(ty, json_type_string)) {
        FAIL(L, "%s: expected string, got %s", p, type_name(ty));
        return NULL;
    }
    return json_object_get_string(ty);
}

static int load_normalizer(struct load *L, json_object *o, const char *path, int depth)
{
    if (!o)
        return BOSCH_OK;
    const char *ty = type_of(L, o, path);
    if (!ty)
        return L->status;
    bosch_tokenizer *t = L->tok;
    if (!strcmp(ty, "Sequence") && depth == 0) {
        json_object *seq = member(o, "normalizers");
        char p[96];
        snprintf(p, sizeof p, "%s.normalizers", path);
        if (want_type(L, seq, json_type_array, p))
            return L->status;
        for (size_t i = 0; i < json_object_array_length(seq); i++) {
            snprintf(p, sizeof p, "%s.normalizers[%zu]", path, i);
            if (load_normalizer(L, json_object_array_get_idx(seq, i), p, 1))
                return L->status;
        }
        return BOSCH_OK;
    }
    int k = norm_kind(ty);
    if (!k)
        return FAIL(L, "%s.type: normalizer \"%.40s\" is not supported (NFC, NFD, NFKC, NFKD, "
                       "Sequence)", path, ty);
    if (t->n_norms == sizeof t->norms / sizeof t->norms[0])
        return FAIL(L, "%s: too many normalizers", path);
    t->norms[t->n_norms++] = k;
    return BOSCH_OK;
}

static int load_split(struct load *L, json_object *o, const char *path, struct tok_pretok *p)
{
    char q[128], err[256];
    json_object *pat = member(o, "pattern"), *beh = member(o, "behavior");
    int invert;
    if (opt_bool(L, o, "invert", path, 0, &invert))
        return L->status;
    if (invert)
        return FAIL(L, "%s.invert: true is not supported", path);
    snprintf(q, sizeof q, "%s.behavior", path);
    if (!beh || !json_object_is_type(beh, json_type_string))
        return FAIL(L, "%s: expected string, got %s", q, type_name(beh));
    const char *b = json_object_get_string(beh);
    if (!strcmp(b, "Isolated"))
        p->behavior = TOK_SPLIT_ISOLATED;
    else if (!strcmp(b, "Removed"))
        p->behavior = TOK_SPLIT_REMOVED;
    else
        return FAIL(L, "%s: \"%.40s\" is not supported (Isolated, Removed)", q, b);
    snprintf(q, sizeof q, "%s.pattern", path);
    if (want_type(L, pat, json_type_object, q))
        return L->status;
    json_object *re = member(pat, "Regex"), *str = member(pat, "String");
    json_object *v = re ? re : str;
    snprintf(q, sizeof q, "%s.pattern.%s", path, re ? "Regex" : "String");
    if (!v || !json_object_is_type(v, json_type_string))
        return FAIL(L, "%s: expected string, got %s", q, type_name(v));
    p->kind = TOK_PRE_SPLIT;
    p->re = tok_regex_compile(json_object_get_string(v), (size_t)json_object_get_string_len(v),
                              !re, &p->jit, err, sizeof err);
    if (!p->re)
        return FAIL(L, "%s: %s", q, err);
    return BOSCH_OK;
}

static int load_pretok(struct load *L, json_object *o, const char *path, int depth)
{
    bosch_tokenizer *t = L->tok;
    const char *ty = type_of(L, o, path);
    if (!ty)
        return L->status;
    if (!strcmp(ty, "Sequence") && depth == 0) {
        json_object *seq = member(o, "pretokenizers");
        char p[96];
        snprintf(p, sizeof p, "%s.pretokenizers", path);
        if (want_type(L, seq, json_type_array, p))
            return L->status;
        for (size_t i = 0; i < json_object_array_length(seq); i++) {
            snprintf(p, sizeof p, "%s.pretokenizers[%zu]", path, i);
            if (load_pretok(L, json_object_array_get_idx(seq, i), p, 1))
                return L->status;
        }
        return BOSCH_OK;
    }
    if (t->n_pretok == TOK_MAX_PRETOK)
        return FAIL(L, "%s: too many pre-tokenizers", path);
    struct tok_pretok *p = &t->pretok[t->n_pretok];
    if (!strcmp(ty, "Split")) {
        if (load_split(L, o, path, p))
            return L->status;
    } else if (!strcmp(ty, "ByteLevel")) {
        int use_regex, trim;
        char err[256];
        p->kind = TOK_PRE_BYTELEVEL;
        if (opt_bool(L, o, "add_prefix_space", path, 1, &p->add_prefix_space) ||
            opt_bool(L, o, "use_regex", path, 1, &use_regex) ||
            opt_bool(L, o, "trim_offsets", path, 1, &trim))
            return L->status;
        if (use_regex && !(p->re = tok_gpt2_regex(&p->jit, err, sizeof err)))
            return FAIL(L, "%s: %s", path, err);
    } else {
        return FAIL(L, "%s.type: pre-tokenizer \"%.40s\" is not supported (Split, ByteLevel, "
                       "Sequence)", path, ty);
    }
    t->n_pretok++;
    return BOSCH_OK;
}

/* post_processor and decoder: null or ByteLevel (offsets do not matter). */
static int check_bytelevel(struct load *L, json_object *o, const char *path, int required)
{
    if (!o)
        return required ? FAIL(L, "%s: missing (ByteLevel needed)", path) : BOSCH_OK;
    const char *ty = type_of(L, o, path);
    if (!ty)
        return L->status;
    if (strcmp(ty, "ByteLevel"))
        return FAIL(L, "%s.type: \"%.40s\" is not supported (ByteLevel)", path, ty);
    return BOSCH_OK;
}

static int load_all(struct load *L, json_object *root)
{
    bosch_tokenizer *t = L->tok;
    if (want_type(L, root, json_type_object, "(root)"))
        return L->status;
    if (load_model(L, member(root, "model")) || load_added(L, member(root, "added_tokens")) ||
        load_normalizer(L, member(root, "normalizer"), "normalizer", 0))
        return L->status;
    json_object *pre = member(root, "pre_tokenizer");
    if (!pre)
        return FAIL(L, "pre_tokenizer: missing (a ByteLevel pre-tokenizer is needed)");
    if (load_pretok(L, pre, "pre_tokenizer", 0))
        return L->status;
    if (!t->n_pretok || t->pretok[t->n_pretok - 1].kind != TOK_PRE_BYTELEVEL)
        return FAIL(L, "pre_tokenizer: must end with ByteLevel (a byte-level BPE)");
    for (size_t i = 0; i + 1 < t->n_pretok; i++)
        if (t->pretok[i].kind == TOK_PRE_BYTELEVEL)
            return FAIL(L, "pre_tokenizer: ByteLevel must be the last pre-tokenizer");
    if (check_bytelevel(L, member(root, "decoder"), "decoder", 1) ||
        check_bytelevel(L, member(root, "post_processor"), "post_processor", 0))
        return L->status;
    json_object *trunc = member(root, "truncation"), *pad = member(root, "padding");
    if (trunc || pad)
        return FAIL(L, "%s: not supported (must be null)", trunc ? "truncation" : "padding");
    for (int b = 0; b < 256; b++) {
        char u[4];
        size_t l = tok_utf8_put(u, tok_byte_to_cp((unsigned char)b));
        t->byte_id[b] = tok_strmap_get(&t->vocab, t->strs, t->lens, u, l);
    }
    return BOSCH_OK;
}

bosch_tokenizer *tok_load_json(const char *fn, const char *json, size_t len)
{
    struct load L = {fn, NULL, BOSCH_OK, 0};
    if (!json && len) {
        fail_at(&L, BOSCH_E_INVALID, "NULL json");
        return NULL;
    }
    if (len > TOK_MAX_FILE || len > INT32_MAX) {
        fail_at(&L, BOSCH_E_INVALID, "%zu bytes of JSON (at most %zu)", len, TOK_MAX_FILE);
        return NULL;
    }
    json_tokener *jt = json_tokener_new_ex(64);
    if (!jt) {
        fail_at(&L, BOSCH_E_NOMEM, "out of memory");
        return NULL;
    }
    json_object *root = json_tokener_parse_ex(jt, json ? json : "", (int)len);
    enum json_tokener_error e = json_tokener_get_error(jt);
    size_t end = json_tokener_get_parse_end(jt);
    json_tokener_free(jt);
    if (e == json_tokener_continue || (!root && e == json_tokener_success)) {
        json_object_put(root);
        fail_at(&L, BOSCH_E_INVALID, "truncated JSON (%zu bytes)", len);
        return NULL;
    }
    if (e != json_tokener_success) {
        fail_at(&L, BOSCH_E_INVALID, "malformed JSON at byte %zu: %s", end,
                json_tokener_error_desc(e));
        return NULL;
    }
    while (end < len && strchr(" \t\r\n", json[end]))
        end++;
    if (end < len) {
        json_object_put(root);
        fail_at(&L, BOSCH_E_INVALID, "malformed JSON: data after the document at byte %zu", end);
        return NULL;
    }
    L.tok = calloc(1, sizeof *L.tok);
    if (!L.tok) {
        json_object_put(root);
        fail_at(&L, BOSCH_E_NOMEM, "out of memory");
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
    return tok_load_json("bosch_tokenizer_from_json", json, len);
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
        text_create_fail(BOSCH_E_IO, "%s: %s: %s", fn, path, strerror(errno));
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
    bosch_tokenizer *t = tok_load_json(fn, b.data ? b.data : "", b.len);
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
    free(t->added);
    tok_strmap_free(&t->vocab);
    tok_strmap_free(&t->added_map);
    tok_pairmap_free(&t->merges);
    for (size_t i = 0; i < TOK_MAX_PRETOK; i++)
        pcre2_code_free(t->pretok[i].re);
    free(t);
}
