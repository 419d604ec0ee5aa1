/* Encode (added tokens, normalizer, pre-tokenizers, BPE) and decode (the
 * byte-level alphabet back to bytes), and the lookups of the public API. All
 * working memory is per call: a loaded tokenizer is shared read-only. */
#include "text/tokenizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A per-call word cache (direct mapped): words repeat in long text, and a
 * cache per call keeps the tokenizer free of locks. */
#define WC_SLOTS 2048
#define WC_WORD 24
#define WC_IDS 6
struct wc_slot {
    unsigned char len, n; /* len 0: empty */
    char word[WC_WORD];
    int32_t ids[WC_IDS];
};

struct enc {
    const bosch_tokenizer *tok;
    struct wc_slot *cache; /* NULL: short input, no cache */
    struct tok_match_ctx mc;
    struct tok_bpe_scratch bpe;
    struct text_buf norm;        /* the normalized segment (and prefix spaces) */
    struct tok_spans a, b;       /* pieces between pre-tokenizer steps */
    struct tok_ids ids;
    int first; /* the segment being encoded is the input's first section */
};

static void enc_free(struct enc *e)
{
    free(e->cache);
    tok_match_ctx_free(&e->mc);
    tok_bpe_scratch_free(&e->bpe);
    text_buf_free(&e->norm);
    free(e->a.v);
    free(e->b.v);
    free(e->ids.v);
}

/* Pre-tokenizers and BPE on text that holds no added token. */
static int encode_plain(struct enc *e, const char *s, size_t n)
{
    const bosch_tokenizer *t = e->tok;
    e->norm.len = 0;
    if (text_buf_add(&e->norm, s, n))
        return BOSCH_E_NOMEM;
    e->a.n = 0;
    if (tok_spans_push(&e->a, 0, n))
        return BOSCH_E_NOMEM;
    for (size_t k = 0; k < t->n_pretok; k++) {
        int st = tok_pretok_apply(&t->pretok[k], &e->mc, &e->norm, &e->a, &e->b, e->first);
        if (st)
            return st;
        struct tok_spans x = e->a;
        e->a = e->b;
        e->b = x;
    }
    e->bpe.call_start = e->ids.n;
    for (size_t i = 0; i < e->a.n; i++) {
        const char *w = e->norm.data + e->a.v[i].off;
        size_t len = e->a.v[i].len;
        struct wc_slot *c = NULL;
        if (e->cache && len <= WC_WORD) {
            c = &e->cache[tok_hash_bytes(w, len) & (WC_SLOTS - 1)];
            if (c->len == len && !memcmp(c->word, w, len)) {
                for (unsigned k = 0; k < c->n; k++)
                    if (tok_ids_push(&e->ids, c->ids[k]))
                        return BOSCH_E_NOMEM;
                continue;
            }
        }
        size_t before = e->ids.n;
        int st = tok_bpe_word(t, &e->bpe, w, len, &e->ids);
        if (st)
            return st;
        if (c && e->ids.n - before <= WC_IDS) {
            c->len = (unsigned char)len;
            c->n = (unsigned char)(e->ids.n - before);
            memcpy(c->word, w, len);
            memcpy(c->ids, e->ids.v + before, c->n * sizeof *c->ids);
        }
    }
    return BOSCH_OK;
}

/* Splits s by the added tokens of one set (normalized or not), trimming
 * around lstrip/rstrip tokens; `plain` gets the text between them. */
static int split_added(struct enc *e, const char *s, size_t n, int normalized,
                       int (*plain)(struct enc *, const char *, size_t))
{
    const bosch_tokenizer *t = e->tok;
    size_t pos = 0;
    int strip_next = 0;
    for (;;) {
        size_t at = n;
        long k = tok_added_find(t, s, pos, n, normalized, &at);
        size_t seg_start = pos, seg_end = k >= 0 ? at : n;
        if (strip_next)
            seg_start += tok_trim_start(s + seg_start, seg_end - seg_start);
        if (k >= 0 && t->added[k].lstrip)
            seg_end = seg_start + tok_trim_end(s + seg_start, seg_end - seg_start);
        if (!normalized) /* sections are counted in the raw text */
            e->first = pos == 0;
        if (seg_end > seg_start) {
            int st = plain(e, s + seg_start, seg_end - seg_start);
            if (st)
                return st;
        }
        if (k < 0)
            return BOSCH_OK;
        if (tok_ids_push(&e->ids, t->added[k].id))
            return BOSCH_E_NOMEM;
        strip_next = t->added[k].rstrip;
        pos = at + t->added[k].len;
    }
}

/* A segment between unnormalized added tokens: normalize, then split by the
 * normalized added tokens. */
static int encode_segment(struct enc *e, const char *s, size_t n)
{
    const bosch_tokenizer *t = e->tok;
    if (!t->n_norms)
        return split_added(e, s, n, 1, encode_plain);
    struct text_buf nb = {0};
    int st = tok_normalize(t->norms, t->n_norms, s, n, &nb);
    if (!st)
        st = split_added(e, nb.data, nb.len, 1, encode_plain);
    text_buf_free(&nb);
    return st;
}

BOSCH_TEXT_API int bosch_tokenizer_encode(const bosch_tokenizer *tok, const char *text,
                                          size_t len, unsigned flags, int32_t **ids, size_t *n)
{
    if (!tok || !ids || !n || (!text && len))
        return BOSCH_E_INVALID;
    *ids = NULL;
    *n = 0;
    struct enc e = {.tok = tok, .first = 1};
    struct text_buf clean = {0};
    int st = tok_match_ctx_init(&e.mc);
    /* (a SentencePiece-style word is a whole section: nothing to cache) */
    if (!st && len > 1024 && tok->bytelevel && !(e.cache = calloc(WC_SLOTS, sizeof *e.cache)))
        st = BOSCH_E_NOMEM;
    for (size_t i = 0; i < tok->n_pre && !st && (flags & BOSCH_TOKENIZE_ADD_SPECIAL); i++)
        st = tok_ids_push(&e.ids, tok->tmpl_pre[i]);
    if (!st && tok_utf8_valid_prefix(text, len) != len) {
        st = tok_utf8_sanitize(&clean, text, len);
        text = clean.data;
        len = clean.len;
    }
    if (!st && len) {
        if (flags & BOSCH_TOKENIZE_NO_SPECIAL) {
            struct text_buf nb = {0};
            st = tok->n_norms ? tok_normalize(tok->norms, tok->n_norms, text, len, &nb) : 0;
            if (!st)
                st = tok->n_norms ? encode_plain(&e, nb.data, nb.len) : encode_plain(&e, text, len);
            text_buf_free(&nb);
        } else {
            st = split_added(&e, text, len, 0, encode_segment);
        }
    }
    text_buf_free(&clean);
    for (size_t i = 0; i < tok->n_post && !st && (flags & BOSCH_TOKENIZE_ADD_SPECIAL); i++)
        st = tok_ids_push(&e.ids, tok->tmpl_post[i]);
    if (!st) {
        /* an empty result is still an allocation the caller frees */
        *ids = e.ids.v ? e.ids.v : malloc(sizeof(int32_t));
        *n = e.ids.n;
        e.ids.v = NULL;
        if (!*ids)
            st = BOSCH_E_NOMEM;
    }
    enc_free(&e);
    return st;
}

/* A SentencePiece-style token: <0xNN> is its byte, U+2581 a space. */
static int spiece_bytes(const bosch_tokenizer *t, int32_t id, struct text_buf *bytes)
{
    const char *s = t->strs[id];
    size_t n = t->lens[id];
    unsigned b;
    if (n == 6 && !memcmp(s, "<0x", 3) && s[5] == '>' && sscanf(s + 3, "%2x", &b) == 1 &&
        b < 256 && t->fallback_id[b] == id) {
        char c = (char)b;
        return text_buf_add(bytes, &c, 1);
    }
    for (size_t i = 0; i < n; i++) {
        int mark = i + 3 <= n && !memcmp(s + i, "\xe2\x96\x81", 3);
        if (mark ? text_buf_add(bytes, " ", 1) : text_buf_add(bytes, s + i, 1))
            return BOSCH_E_NOMEM;
        i += mark ? 2 : 0;
    }
    return BOSCH_OK;
}

/* The bytes of a vocabulary token: each alphabet character to its byte; a
 * character outside the alphabet stays as it is (as HF's decoder does). */
static int token_bytes(const bosch_tokenizer *t, int32_t id, struct text_buf *bytes)
{
    if (t->decoder == TOK_DEC_SPIECE)
        return spiece_bytes(t, id, bytes);
    const unsigned char *s = (const unsigned char *)t->strs[id];
    size_t i = 0, n = t->lens[id];
    while (i < n) {
        uint32_t cp;
        size_t l = tok_utf8_next(s + i, &cp);
        int b = tok_cp_to_byte(cp);
        char c = (char)b;
        if (b >= 0 ? text_buf_add(bytes, &c, 1) : text_buf_add(bytes, (const char *)s + i, l))
            return BOSCH_E_NOMEM;
        i += l;
    }
    return BOSCH_OK;
}

BOSCH_TEXT_API int bosch_tokenizer_decode(const bosch_tokenizer *tok, const int32_t *ids,
                                          size_t n, unsigned flags, char **text, size_t *len)
{
    if (!tok || !text || !len || (!ids && n))
        return BOSCH_E_INVALID;
    *text = NULL;
    *len = 0;
    for (size_t i = 0; i < n; i++)
        if (ids[i] < 0 || (uint32_t)ids[i] >= tok->n_ids || !tok->strs[ids[i]])
            return BOSCH_E_INVALID;
    struct text_buf out = {0}, bytes = {0};
    int st = text_buf_add(&out, "", 0);
    for (size_t i = 0; i < n && !st; i++) {
        int32_t id = ids[i];
        if (tok->kind[id] >= 2) {
            /* added tokens come out as written, between byte runs */
            if (bytes.len)
                st = tok_utf8_sanitize(&out, bytes.data, bytes.len);
            bytes.len = 0;
            if (!st && !(tok->kind[id] == 3 && (flags & BOSCH_DECODE_SKIP_SPECIAL)))
                st = text_buf_add(&out, tok->strs[id], tok->lens[id]);
        } else {
            st = token_bytes(tok, id, &bytes);
        }
    }
    if (!st && bytes.len)
        st = tok_utf8_sanitize(&out, bytes.data, bytes.len);
    text_buf_free(&bytes);
    if (st) {
        text_buf_free(&out);
        return st;
    }
    /* SentencePiece's Strip: the leading spaces of the whole text */
    size_t cut = 0;
    while (cut < (size_t)tok->strip_start && cut < out.len && out.data[cut] == ' ')
        cut++;
    memmove(out.data, out.data + cut, out.len - cut + 1);
    out.len -= cut;
    *text = out.data;
    *len = out.len;
    return BOSCH_OK;
}

BOSCH_TEXT_API uint32_t bosch_tokenizer_vocab_size(const bosch_tokenizer *tok)
{
    return tok ? tok->n_ids : 0;
}

BOSCH_TEXT_API int32_t bosch_tokenizer_token_id(const bosch_tokenizer *tok, const char *token)
{
    if (!tok || !token)
        return -1;
    size_t n = strlen(token);
    int32_t id = tok_strmap_get(&tok->added_map, tok->strs, tok->lens, token, n);
    return id >= 0 ? id : tok_strmap_get(&tok->vocab, tok->strs, tok->lens, token, n);
}

BOSCH_TEXT_API const char *bosch_tokenizer_token(const bosch_tokenizer *tok, int32_t id)
{
    if (!tok || id < 0 || (uint32_t)id >= tok->n_ids)
        return NULL;
    return tok->strs[id];
}

BOSCH_TEXT_API int bosch_tokenizer_is_special(const bosch_tokenizer *tok, int32_t id)
{
    return tok && id >= 0 && (uint32_t)id < tok->n_ids && tok->kind[id] == 3;
}

BOSCH_TEXT_API int bosch_tokenizer_is_ordinary(const bosch_tokenizer *tok, int32_t id)
{
    return tok && id >= 0 && (uint32_t)id < tok->n_ids && tok->kind[id] == 1;
}

/* The stop rule of a greedy continuation (libbosch-torch's match metric
 * applies the same one): a special token, or a row with no token. */
static int ends_continuation(const bosch_tokenizer *tok, int32_t id)
{
    return !bosch_tokenizer_token(tok, id) || bosch_tokenizer_is_special(tok, id);
}

BOSCH_TEXT_API int bosch_tokenizer_stop_ids(const bosch_tokenizer *tok, uint32_t rows,
                                            int32_t **ids, size_t *n)
{
    if (!tok || !ids || !n)
        return BOSCH_E_INVALID;
    *ids = NULL;
    *n = 0;
    size_t count = 0;
    for (uint32_t i = 0; i < rows; i++)
        count += ends_continuation(tok, (int32_t)i);
    if (!count)
        return BOSCH_OK;
    int32_t *out = malloc(count * sizeof *out);
    if (!out)
        return BOSCH_E_NOMEM;
    for (uint32_t i = 0; i < rows; i++)
        if (ends_continuation(tok, (int32_t)i))
            out[(*n)++] = (int32_t)i;
    *ids = out;
    return BOSCH_OK;
}

BOSCH_TEXT_API int bosch_tokenizer_template(const bosch_tokenizer *tok, const int32_t **before,
                                            size_t *n_before, const int32_t **after,
                                            size_t *n_after)
{
    if (!tok || !before || !n_before || !after || !n_after)
        return BOSCH_E_INVALID;
    *before = tok->tmpl_pre;
    *n_before = tok->n_pre;
    *after = tok->tmpl_post;
    *n_after = tok->n_post;
    return BOSCH_OK;
}
