/* Normalizers (utf8proc; Prepend, Replace) and pre-tokenizers (PCRE2):
 * Split by a regex, ByteLevel's optional GPT-2 split and prefix space,
 * Metaspace's U+2581. */
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

/* The first occurrence of p[0..m) in s[0..n), or NULL (memmem is not
 * POSIX). */
static const char *find_bytes(const char *s, size_t n, const char *p, size_t m)
{
    for (const char *e = s + n; m && (size_t)(e - s) >= m; s++) {
        s = memchr(s, p[0], (size_t)(e - s) - m + 1);
        if (!s)
            return NULL;
        if (!memcmp(s, p, m))
            return s;
    }
    return NULL;
}

/* Each occurrence of st->arg (left to right) by st->with, in b. */
static int replace_all(const struct tok_norm_step *st, struct text_buf *b, struct text_buf *tmp)
{
    if (!b->len || !find_bytes(b->data, b->len, st->arg, st->arg_len))
        return BOSCH_OK;
    tmp->len = 0;
    size_t i = 0;
    while (i < b->len) {
        const char *hit = find_bytes(b->data + i, b->len - i, st->arg, st->arg_len);
        size_t upto = hit ? (size_t)(hit - b->data) : b->len;
        if (text_buf_add(tmp, b->data + i, upto - i) ||
            (hit && text_buf_add(tmp, st->with, st->with_len)))
            return BOSCH_E_NOMEM;
        i = hit ? upto + st->arg_len : b->len;
    }
    struct text_buf x = *b;
    *b = *tmp;
    *tmp = x;
    return BOSCH_OK;
}

static int prepend(const struct tok_norm_step *st, struct text_buf *b, struct text_buf *tmp)
{
    tmp->len = 0;
    if (text_buf_add(tmp, st->arg, st->arg_len) || text_buf_add(tmp, b->data, b->len))
        return BOSCH_E_NOMEM;
    struct text_buf x = *b;
    *b = *tmp;
    *tmp = x;
    return BOSCH_OK;
}

static int unicode_form(int kind, struct text_buf *out)
{
    size_t i = 0;
    while (i < out->len && !((unsigned char)out->data[i] & 0x80))
        i++;
    if (i == out->len) /* ASCII is invariant under every normalization form */
        return BOSCH_OK;
    int opt = UTF8PROC_STABLE;
    switch (kind) {
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
    return st;
}

int tok_normalize(const struct tok_norm_step *norms, size_t n_norms, const char *s, size_t n,
                  struct text_buf *out)
{
    out->len = 0;
    if (text_buf_add(out, s, n))
        return BOSCH_E_NOMEM;
    struct text_buf tmp = {0};
    int st = BOSCH_OK;
    for (size_t k = 0; k < n_norms && !st; k++) {
        if (norms[k].kind == TOK_NORM_PREPEND)
            st = prepend(&norms[k], out, &tmp);
        else if (norms[k].kind == TOK_NORM_REPLACE)
            st = replace_all(&norms[k], out, &tmp);
        else
            st = unicode_form(norms[k].kind, out);
    }
    text_buf_free(&tmp);
    return st;
}

/* The port the reference follows (tokenizers.js) rewrites Oniguruma's \s to
 * Unicode White_Space (which PCRE2's UCP \s is not: it lacks U+0085) and \d
 * to \p{Nd}. Explicit classes keep that independent of the PCRE2 version. */
#define WS_CLASS "\\t-\\r\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}" \
                 "\\x{202F}\\x{205F}\\x{3000}"

/* An escape at p[i] ('\\' and what follows; \p{..}, \P{..} and \x{..}
 * whole) into o; returns the index of its last character. */
static size_t rewrite_escape(const char *p, size_t n, size_t i, int in_class,
                             struct text_buf *o, int *st, char *err, size_t errlen)
{
    char e = p[++i];
    if (e == 's')
        *st = text_buf_adds(o, in_class ? WS_CLASS : "[" WS_CLASS "]");
    else if (e == 'S' && !in_class)
        *st = text_buf_adds(o, "[^" WS_CLASS "]");
    else if (e == 'd')
        *st = text_buf_adds(o, "\\p{Nd}");
    else if (e == 'D')
        *st = text_buf_adds(o, "\\P{Nd}");
    else if (e == 'S') {
        snprintf(err, errlen, "\\S inside a character class is not supported");
        *st = BOSCH_E_INVALID;
    } else {
        size_t end = i;
        if ((e == 'p' || e == 'P' || e == 'x') && i + 1 < n && p[i + 1] == '{') {
            while (end + 1 < n && p[end] != '}')
                end++;
        } else if ((e == 'p' || e == 'P') && i + 1 < n) {
            end = i + 1; /* \pL */
        }
        *st = text_buf_add(o, p + i - 1, end - i + 2);
        return end;
    }
    return i;
}

/* A group's opening at p[i] ('('): "(?i:" becomes "(?:" with ASCII case
 * folding inside, as the JavaScript port rewrites it (an ASCII letter
 * matches both cases, nothing else); other inline options are refused.
 * Returns the index of the last character consumed. */
static size_t rewrite_group(const char *p, size_t n, size_t i, int *fold, int *depth,
                            struct text_buf *o, int *st, char *err, size_t errlen)
{
    if (*depth == 63) {
        snprintf(err, errlen, "groups nested deeper than 63");
        *st = BOSCH_E_INVALID;
        return i;
    }
    int parent = fold[*depth];
    fold[++*depth] = parent;
    if (n - i >= 4 && !memcmp(p + i, "(?i:", 4)) {
        fold[*depth] = 1;
        *st = text_buf_adds(o, "(?:");
        return i + 3;
    }
    if (n - i >= 3 && p[i + 1] == '?' &&
        ((p[i + 2] >= 'a' && p[i + 2] <= 'z') || (p[i + 2] >= 'A' && p[i + 2] <= 'Z') ||
         p[i + 2] == '^' || p[i + 2] == '-')) {
        snprintf(err, errlen, "inline options other than (?i:...) are not supported");
        *st = BOSCH_E_INVALID;
        return i;
    }
    *st = text_buf_add(o, "(", 1);
    return i;
}

static int rewrite_regex(const char *p, size_t n, struct text_buf *o, char *err, size_t errlen)
{
    int in_class = 0, fold[64] = {0}, depth = 0;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        int st = BOSCH_OK;
        if (c == '\\' && i + 1 < n) {
            i = rewrite_escape(p, n, i, in_class, o, &st, err, errlen);
        } else if (c == '[' && !in_class) {
            if (fold[depth]) {
                snprintf(err, errlen, "a character class inside (?i:...) is not supported");
                return BOSCH_E_INVALID;
            }
            in_class = 1;
            st = text_buf_add(o, p + i, 1);
            /* a ']' right after '[' or '[^' is a literal */
            if (i + 1 < n && p[i + 1] == '^')
                st = st ? st : text_buf_add(o, p + ++i, 1);
            if (i + 1 < n && p[i + 1] == ']')
                st = st ? st : text_buf_add(o, p + ++i, 1);
        } else if (in_class) {
            in_class = c != ']';
            st = text_buf_add(o, p + i, 1);
        } else if (c == '(') {
            i = rewrite_group(p, n, i, fold, &depth, o, &st, err, errlen);
        } else if (fold[depth] && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) {
            char cls[4] = {'[', (char)(c | 0x20), (char)(c & ~0x20), ']'};
            st = text_buf_add(o, cls, 4);
        } else {
            if (c == ')' && depth > 0)
                depth--;
            st = text_buf_add(o, p + i, 1);
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

/* Metaspace: the piece with each " " as U+2581, after a U+2581 when its
 * prepend_scheme asks for one, appended to the work text as one span. */
static int metaspace(const struct tok_pretok *p, struct text_buf *text, struct tok_span sp,
                     int first, struct tok_spans *out)
{
    static const char mark[] = "\xe2\x96\x81";
    struct text_buf w = {0};
    int st = BOSCH_OK;
    const char *s = text->data + sp.off;
    int marked = sp.len && (s[0] == ' ' || (sp.len >= 3 && !memcmp(s, mark, 3)));
    if (!marked && (p->prepend == TOK_PREPEND_ALWAYS || (p->prepend == TOK_PREPEND_FIRST && first)))
        st = text_buf_add(&w, mark, 3);
    for (size_t i = 0; i < sp.len && !st; i++)
        st = s[i] == ' ' ? text_buf_add(&w, mark, 3) : text_buf_add(&w, s + i, 1);
    size_t off = text->len;
    st = st ? st : text_buf_add(text, w.data, w.len);
    st = st ? st : tok_spans_push(out, off, w.len);
    text_buf_free(&w);
    return st;
}

int tok_pretok_apply(const struct tok_pretok *p, struct tok_match_ctx *c, struct text_buf *text,
                     const struct tok_spans *in, struct tok_spans *out, int first)
{
    out->n = 0;
    for (size_t i = 0; i < in->n; i++) {
        int st;
        struct tok_span sp = in->v[i];
        if (p->kind == TOK_PRE_METASPACE) {
            if ((st = metaspace(p, text, sp, first, out)))
                return st;
            continue;
        }
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
