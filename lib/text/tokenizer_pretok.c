/* Normalizers (utf8proc) and pre-tokenizers (PCRE2): Split by a regex,
 * ByteLevel's optional GPT-2 split and prefix space. */
#include "text/tokenizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

int tok_spans_push(struct tok_spans *s, size_t off, size_t len)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        struct tok_span *v = realloc(s->v, cap * sizeof *v);
        if (!v)
            return BOSCH_E_NOMEM;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = (struct tok_span){off, len};
    return BOSCH_OK;
}

int tok_normalize(const int *norms, size_t n_norms, const char *s, size_t n,
                  struct text_buf *out)
{
    out->len = 0;
    if (text_buf_add(out, s, n))
        return BOSCH_E_NOMEM;
    size_t i = 0;
    while (i < n && !((unsigned char)s[i] & 0x80))
        i++;
    if (i == n) /* ASCII is invariant under every normalization form */
        return BOSCH_OK;
    for (size_t k = 0; k < n_norms; k++) {
        int opt = UTF8PROC_STABLE;
        switch (norms[k]) {
        case TOK_NORM_NFC: opt |= UTF8PROC_COMPOSE; break;
        case TOK_NORM_NFD: opt |= UTF8PROC_DECOMPOSE; break;
        case TOK_NORM_NFKC: opt |= UTF8PROC_COMPOSE | UTF8PROC_COMPAT; break;
        default: opt |= UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT; break;
        }
        utf8proc_uint8_t *r = NULL;
        utf8proc_ssize_t rl = utf8proc_map((const utf8proc_uint8_t *)out->data,
                                           (utf8proc_ssize_t)out->len, &r, opt);
        if (rl < 0)
            return rl == UTF8PROC_ERROR_NOMEM ? BOSCH_E_NOMEM : BOSCH_E_INVALID;
        out->len = 0;
        int st = text_buf_add(out, (const char *)r, (size_t)rl);
        free(r);
        if (st)
            return st;
    }
    return BOSCH_OK;
}

/* The port the reference follows (tokenizers.js) rewrites Oniguruma's \s to
 * Unicode White_Space (which PCRE2's UCP \s is not: it lacks U+0085) and \d
 * to \p{Nd}. Explicit classes keep that independent of the PCRE2 version. */
#define WS_CLASS "\\t-\\r\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}" \
                 "\\x{202F}\\x{205F}\\x{3000}"

static int rewrite_regex(const char *p, size_t n, struct text_buf *o, char *err, size_t errlen)
{
    int in_class = 0;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        int st = BOSCH_OK;
        if (c == '\\' && i + 1 < n) {
            char e = p[++i];
            if (e == 's')
                st = text_buf_adds(o, in_class ? WS_CLASS : "[" WS_CLASS "]");
            else if (e == 'S' && !in_class)
                st = text_buf_adds(o, "[^" WS_CLASS "]");
            else if (e == 'd')
                st = text_buf_adds(o, "\\p{Nd}");
            else if (e == 'D')
                st = text_buf_adds(o, "\\P{Nd}");
            else if (e == 'S') {
                snprintf(err, errlen, "\\S inside a character class is not supported");
                return BOSCH_E_INVALID;
            } else {
                char two[2] = {'\\', e};
                st = text_buf_add(o, two, 2);
            }
        } else {
            if (c == '[' && !in_class) {
                in_class = 1;
                st = text_buf_add(o, p + i, 1);
                /* a ']' right after '[' or '[^' is a literal */
                if (i + 1 < n && p[i + 1] == '^')
                    st = st ? st : text_buf_add(o, p + ++i, 1);
                if (i + 1 < n && p[i + 1] == ']')
                    st = st ? st : text_buf_add(o, p + ++i, 1);
            } else {
                if (c == ']' && in_class)
                    in_class = 0;
                st = text_buf_add(o, p + i, 1);
            }
        }
        if (st)
            return st;
    }
    return o->data || !text_buf_add(o, "", 0) ? BOSCH_OK : BOSCH_E_NOMEM;
}

static pcre2_code *compile(const char *p, size_t n, uint32_t opts, int *jit, char *err,
                           size_t errlen)
{
    int code;
    PCRE2_SIZE off;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)p, n, PCRE2_UTF | PCRE2_UCP | opts, &code, &off,
                                   NULL);
    if (!re) {
        PCRE2_UCHAR msg[160];
        pcre2_get_error_message(code, msg, sizeof msg);
        snprintf(err, errlen, "regex does not compile at offset %zu: %s", (size_t)off,
                 (const char *)msg);
        return NULL;
    }
    *jit = pcre2_jit_compile(re, PCRE2_JIT_COMPLETE) == 0;
    return re;
}

pcre2_code *tok_regex_compile(const char *pattern, size_t len, int literal, int *jit, char *err,
                              size_t errlen)
{
    if (literal)
        return compile(pattern, len, PCRE2_LITERAL, jit, err, errlen);
    struct text_buf b = {0};
    int st = rewrite_regex(pattern, len, &b, err, errlen);
    if (st) {
        if (st == BOSCH_E_NOMEM)
            snprintf(err, errlen, "out of memory");
        text_buf_free(&b);
        return NULL;
    }
    pcre2_code *re = compile(b.data, b.len, 0, jit, err, errlen);
    text_buf_free(&b);
    return re;
}

/* ByteLevel's own split (use_regex), with JavaScript's \s (the reference
 * runs it as a JS literal): White_Space without U+0085, plus U+FEFF. */
#define JS_WS "\\t-\\r\\x{20}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}" \
              "\\x{202F}\\x{205F}\\x{3000}\\x{FEFF}"
pcre2_code *tok_gpt2_regex(int *jit, char *err, size_t errlen)
{
    static const char re[] = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^" JS_WS
                             "\\p{L}\\p{N}]+|[" JS_WS "]+(?![^" JS_WS "])|[" JS_WS "]+";
    return compile(re, sizeof re - 1, 0, jit, err, errlen);
}

int tok_match_ctx_init(struct tok_match_ctx *c)
{
    memset(c, 0, sizeof *c);
    c->md = pcre2_match_data_create(4, NULL);
    c->mc = pcre2_match_context_create(NULL);
    c->js = pcre2_jit_stack_create(32 * 1024, 4 * 1024 * 1024, NULL);
    if (!c->md || !c->mc || !c->js) {
        tok_match_ctx_free(c);
        return BOSCH_E_NOMEM;
    }
    pcre2_jit_stack_assign(c->mc, NULL, c->js);
    return BOSCH_OK;
}

void tok_match_ctx_free(struct tok_match_ctx *c)
{
    pcre2_match_data_free(c->md);
    pcre2_match_context_free(c->mc);
    pcre2_jit_stack_free(c->js);
    memset(c, 0, sizeof *c);
}

static int match(const struct tok_pretok *p, struct tok_match_ctx *c, const char *s, size_t n,
                 size_t from)
{
    uint32_t o = PCRE2_NO_UTF_CHECK;
    int rc = -1;
    if (p->jit)
        rc = pcre2_jit_match(p->re, (PCRE2_SPTR)s, n, from, o, c->md, c->mc);
    /* past the JIT stack: the interpreter keeps its frames on the heap */
    if (!p->jit || rc == PCRE2_ERROR_JIT_STACKLIMIT)
        rc = pcre2_match(p->re, (PCRE2_SPTR)s, n, from, o, c->md, c->mc);
    return rc;
}

/* Each match, and each gap between matches unless removed, as a span. */
static int split_span(const struct tok_pretok *p, struct tok_match_ctx *c, const char *text,
                      struct tok_span sp, int keep_gaps, struct tok_spans *out)
{
    const char *s = text + sp.off;
    size_t n = sp.len, pos = 0, prev = 0;
    while (pos <= n) {
        int rc = match(p, c, s, n, pos);
        if (rc == PCRE2_ERROR_NOMATCH)
            break;
        if (rc < 0)
            return rc == PCRE2_ERROR_NOMEMORY ? BOSCH_E_NOMEM : BOSCH_E_INVALID;
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(c->md);
        size_t a = ov[0], b = ov[1];
        if (a > prev && keep_gaps && tok_spans_push(out, sp.off + prev, a - prev))
            return BOSCH_E_NOMEM;
        if (b > a && tok_spans_push(out, sp.off + a, b - a))
            return BOSCH_E_NOMEM;
        prev = b;
        if (b > a)
            pos = b;
        else { /* an empty match: go on after the next character */
            if (b >= n)
                break;
            pos = b + 1;
            while (pos < n && ((unsigned char)s[pos] & 0xc0) == 0x80)
                pos++;
        }
    }
    if (prev < n && keep_gaps && tok_spans_push(out, sp.off + prev, n - prev))
        return BOSCH_E_NOMEM;
    return BOSCH_OK;
}

int tok_pretok_apply(const struct tok_pretok *p, struct tok_match_ctx *c, struct text_buf *text,
                     const struct tok_spans *in, struct tok_spans *out)
{
    out->n = 0;
    for (size_t i = 0; i < in->n; i++) {
        int st;
        struct tok_span sp = in->v[i];
        if (p->kind == TOK_PRE_BYTELEVEL && p->add_prefix_space && sp.len &&
            text->data[sp.off] != ' ') {
            /* " " + piece, appended to the work text (spans are offsets);
             * copied out first, as appending may move the buffer */
            size_t off = text->len;
            char *piece = malloc(sp.len);
            if (!piece)
                return BOSCH_E_NOMEM;
            memcpy(piece, text->data + sp.off, sp.len);
            st = text_buf_add(text, " ", 1);
            st = st ? st : text_buf_add(text, piece, sp.len);
            free(piece);
            if (st)
                return st;
            sp = (struct tok_span){off, sp.len + 1};
        }
        if (p->kind == TOK_PRE_SPLIT)
            st = split_span(p, c, text->data, sp, p->behavior == TOK_SPLIT_ISOLATED, out);
        else if (p->re) /* ByteLevel use_regex: the reference keeps matches only */
            st = split_span(p, c, text->data, sp, 0, out);
        else
            st = tok_spans_push(out, sp.off, sp.len);
        if (st)
            return st;
    }
    return BOSCH_OK;
}
