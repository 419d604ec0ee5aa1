/* The pipeline of a tokenizer.json: normalizers and pre-tokenizers. */
#include "text/tokenizer_json.h"

#include <stdio.h>
#include <string.h>

static int norm_kind(const char *ty)
{
    static const char *const names[] = {"NFC", "NFD", "NFKC", "NFKD", "Prepend", "Replace"};
    for (int i = 0; i < 6; i++)
        if (!strcmp(ty, names[i]))
            return TOK_NORM_NFC + i;
    return 0;
}

/* A string argument of Prepend/Replace into a fixed buffer. */
static int norm_arg(struct tok_load *L, const char *s, size_t n, const char *path, int empty_ok,
                    char *to, uint32_t *to_len)
{
    if (!s)
        return FAIL(L, "%s: missing (a string)", path);
    if ((!n && !empty_ok) || n >= TOK_NORM_ARG)
        return FAIL(L, "%s: a string of 1..%u bytes is needed", path, TOK_NORM_ARG - 1);
    if (tok_utf8_valid_prefix(s, n) != n || memchr(s, 0, n))
        return FAIL(L, "%s: not valid UTF-8 without NUL", path);
    memcpy(to, s, n);
    *to_len = (uint32_t)n;
    return BOSCH_OK;
}

/* Prepend {prepend} and Replace {pattern: {String}, content} (Llama 2's
 * "\u2581" prefix and spaces). */
static int load_text_norm(struct tok_load *L, json_object *o, const char *path,
                          struct tok_norm_step *st)
{
    char p[128];
    const char *s;
    size_t n;
    if (st->kind == TOK_NORM_PREPEND) {
        snprintf(p, sizeof p, "%s.prepend", path);
        if (tok_opt_string(L, o, "prepend", path, &s, &n))
            return L->status;
        return norm_arg(L, s, n, p, 0, st->arg, &st->arg_len);
    }
    json_object *pat = tok_member(o, "pattern");
    snprintf(p, sizeof p, "%s.pattern", path);
    if (tok_want_type(L, pat, json_type_object, p))
        return L->status;
    if (tok_member(pat, "Regex"))
        return FAIL(L, "%s.Regex: a Replace by regex is not supported (only String)", p);
    snprintf(p, sizeof p, "%s.pattern.String", path);
    if (tok_opt_string(L, pat, "String", p, &s, &n) || norm_arg(L, s, n, p, 0, st->arg, &st->arg_len))
        return L->status;
    snprintf(p, sizeof p, "%s.content", path);
    if (tok_opt_string(L, o, "content", path, &s, &n))
        return L->status;
    return norm_arg(L, s, n, p, 1, st->with, &st->with_len);
}

int tok_load_normalizer(struct tok_load *L, json_object *o, const char *path, int depth)
{
    if (!o)
        return BOSCH_OK;
    const char *ty = tok_type_of(L, o, path);
    if (!ty)
        return L->status;
    bosch_tokenizer *t = L->tok;
    if (!strcmp(ty, "Sequence") && depth == 0) {
        json_object *seq = tok_member(o, "normalizers");
        char p[96];
        snprintf(p, sizeof p, "%s.normalizers", path);
        if (tok_want_type(L, seq, json_type_array, p))
            return L->status;
        for (size_t i = 0; i < json_object_array_length(seq); i++) {
            snprintf(p, sizeof p, "%s.normalizers[%zu]", path, i);
            if (tok_load_normalizer(L, json_object_array_get_idx(seq, i), p, 1))
                return L->status;
        }
        return BOSCH_OK;
    }
    int k = norm_kind(ty);
    if (!k)
        return FAIL(L, "%s.type: normalizer \"%.40s\" is not supported (NFC, NFD, NFKC, NFKD, "
                       "Prepend, Replace, Sequence)", path, ty);
    if (t->n_norms == TOK_MAX_NORMS)
        return FAIL(L, "%s: too many normalizers", path);
    struct tok_norm_step *st = &t->norms[t->n_norms];
    memset(st, 0, sizeof *st);
    st->kind = k;
    if (k >= TOK_NORM_PREPEND && load_text_norm(L, o, path, st))
        return L->status;
    t->n_norms++;
    return BOSCH_OK;
}

static int load_split(struct tok_load *L, json_object *o, const char *path, struct tok_pretok *p)
{
    char q[128], err[256];
    json_object *pat = tok_member(o, "pattern"), *beh = tok_member(o, "behavior");
    int invert;
    if (tok_opt_bool(L, o, "invert", path, 0, &invert))
        return L->status;
    if (invert)
        return FAIL(L, "%s.invert: true is not supported", path);
    snprintf(q, sizeof q, "%s.behavior", path);
    if (!beh || !json_object_is_type(beh, json_type_string))
        return FAIL(L, "%s: expected string, got %s", q, tok_type_name(beh));
    const char *b = json_object_get_string(beh);
    if (!strcmp(b, "Isolated"))
        p->behavior = TOK_SPLIT_ISOLATED;
    else if (!strcmp(b, "Removed"))
        p->behavior = TOK_SPLIT_REMOVED;
    else
        return FAIL(L, "%s: \"%.40s\" is not supported (Isolated, Removed)", q, b);
    snprintf(q, sizeof q, "%s.pattern", path);
    if (tok_want_type(L, pat, json_type_object, q))
        return L->status;
    json_object *re = tok_member(pat, "Regex"), *str = tok_member(pat, "String");
    json_object *v = re ? re : str;
    snprintf(q, sizeof q, "%s.pattern.%s", path, re ? "Regex" : "String");
    if (!v || !json_object_is_type(v, json_type_string))
        return FAIL(L, "%s: expected string, got %s", q, tok_type_name(v));
    p->kind = TOK_PRE_SPLIT;
    p->re = tok_regex_compile(json_object_get_string(v), (size_t)json_object_get_string_len(v),
                              !re, &p->jit, err, sizeof err);
    if (!p->re)
        return FAIL(L, "%s: %s", q, err);
    return BOSCH_OK;
}

/* Metaspace as both references read it alike: replacement U+2581, no
 * split (the JavaScript port ignores `split`). */
static int load_metaspace(struct tok_load *L, json_object *o, const char *path,
                          struct tok_pretok *p)
{
    const char *s;
    size_t n;
    int split, prefix;
    if (tok_opt_string(L, o, "replacement", path, &s, &n))
        return L->status;
    if (s && strcmp(s, "\xe2\x96\x81"))
        return FAIL(L, "%s.replacement: only \"\\u2581\" is supported", path);
    if (tok_opt_string(L, o, "str_rep", path, &s, &n))
        return L->status;
    if (s && strcmp(s, "\xe2\x96\x81"))
        return FAIL(L, "%s.str_rep: only \"\\u2581\" is supported", path);
    if (tok_opt_bool(L, o, "split", path, 0, &split))
        return L->status;
    if (split)
        return FAIL(L, "%s.split: true is not supported", path);
    if (tok_opt_string(L, o, "prepend_scheme", path, &s, &n))
        return L->status;
    if (!s) {
        /* the older add_prefix_space: the JavaScript port reads "always" */
        if (tok_opt_bool(L, o, "add_prefix_space", path, 1, &prefix))
            return L->status;
        if (!prefix)
            return FAIL(L, "%s.add_prefix_space: false without prepend_scheme is not supported "
                           "(give prepend_scheme \"never\")", path);
        s = "always";
    }
    p->kind = TOK_PRE_METASPACE;
    if (!strcmp(s, "always"))
        p->prepend = TOK_PREPEND_ALWAYS;
    else if (!strcmp(s, "first"))
        p->prepend = TOK_PREPEND_FIRST;
    else if (!strcmp(s, "never"))
        p->prepend = TOK_PREPEND_NEVER;
    else
        return FAIL(L, "%s.prepend_scheme: \"%.40s\" is not supported (always, first, never)",
                    path, s);
    return BOSCH_OK;
}

/* Digits: runs of ASCII digits (or each digit) apart from the rest, as a
 * Split that isolates them. */
static int load_digits(struct tok_load *L, json_object *o, const char *path, struct tok_pretok *p)
{
    int single;
    char err[256];
    if (tok_opt_bool(L, o, "individual_digits", path, 0, &single))
        return L->status;
    const char *re = single ? "[0-9]" : "[0-9]+";
    p->kind = TOK_PRE_SPLIT;
    p->behavior = TOK_SPLIT_ISOLATED;
    if (!(p->re = tok_regex_compile(re, strlen(re), 0, &p->jit, err, sizeof err)))
        return FAIL(L, "%s: %s", path, err);
    return BOSCH_OK;
}

int tok_load_pretok(struct tok_load *L, json_object *o, const char *path, int depth)
{
    bosch_tokenizer *t = L->tok;
    const char *ty = tok_type_of(L, o, path);
    if (!ty)
        return L->status;
    if (!strcmp(ty, "Sequence") && depth == 0) {
        json_object *seq = tok_member(o, "pretokenizers");
        char p[96];
        snprintf(p, sizeof p, "%s.pretokenizers", path);
        if (tok_want_type(L, seq, json_type_array, p))
            return L->status;
        for (size_t i = 0; i < json_object_array_length(seq); i++) {
            snprintf(p, sizeof p, "%s.pretokenizers[%zu]", path, i);
            if (tok_load_pretok(L, json_object_array_get_idx(seq, i), p, 1))
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
        if (tok_opt_bool(L, o, "add_prefix_space", path, 1, &p->add_prefix_space) ||
            tok_opt_bool(L, o, "use_regex", path, 1, &use_regex) ||
            tok_opt_bool(L, o, "trim_offsets", path, 1, &trim))
            return L->status;
        if (use_regex && !(p->re = tok_gpt2_regex(&p->jit, err, sizeof err)))
            return FAIL(L, "%s: %s", path, err);
    } else if (!strcmp(ty, "Metaspace")) {
        if (load_metaspace(L, o, path, p))
            return L->status;
    } else if (!strcmp(ty, "Digits")) {
        if (load_digits(L, o, path, p))
            return L->status;
    } else {
        return FAIL(L, "%s.type: pre-tokenizer \"%.40s\" is not supported (Split, ByteLevel, "
                       "Digits, Metaspace, Sequence)", path, ty);
    }
    t->n_pretok++;
    return BOSCH_OK;
}
