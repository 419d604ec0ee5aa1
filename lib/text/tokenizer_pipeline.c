/* The pipeline of a tokenizer.json: normalizer, pre-tokenizers, and the
 * ByteLevel decoder / post-processor it requires. */
#include "text/tokenizer_json.h"

#include <stdio.h>
#include <string.h>

static int norm_kind(const char *ty)
{
    static const char *const names[] = {"NFC", "NFD", "NFKC", "NFKD"};
    for (int i = 0; i < 4; i++)
        if (!strcmp(ty, names[i]))
            return TOK_NORM_NFC + i;
    return 0;
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
                       "Sequence)", path, ty);
    if (t->n_norms == sizeof t->norms / sizeof t->norms[0])
        return FAIL(L, "%s: too many normalizers", path);
    t->norms[t->n_norms++] = k;
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
    } else {
        return FAIL(L, "%s.type: pre-tokenizer \"%.40s\" is not supported (Split, ByteLevel, "
                       "Sequence)", path, ty);
    }
    t->n_pretok++;
    return BOSCH_OK;
}

/* post_processor and decoder: null or ByteLevel (offsets do not matter). */
int tok_check_bytelevel(struct tok_load *L, json_object *o, const char *path, int required)
{
    if (!o)
        return required ? FAIL(L, "%s: missing (ByteLevel needed)", path) : BOSCH_OK;
    const char *ty = tok_type_of(L, o, path);
    if (!ty)
        return L->status;
    if (strcmp(ty, "ByteLevel"))
        return FAIL(L, "%s.type: \"%.40s\" is not supported (ByteLevel)", path, ty);
    return BOSCH_OK;
}
