/* The end of a tokenizer.json's pipeline: the kind of model (byte-level or
 * SentencePiece-style) its pre-tokenizers make, checked against the model's
 * settings and the decoder; the post-processor's template of special tokens
 * (TemplateProcessing's `single`). */
#include "text/tokenizer_json.h"

#include <stdio.h>
#include <string.h>

#define SPACE_MARK "\xe2\x96\x81" /* U+2581, SentencePiece's space */

/* A byte-level pipeline: ByteLevel last, once. */
static int check_bytelevel_pretok(struct tok_load *L)
{
    bosch_tokenizer *t = L->tok;
    if (t->pretok[t->n_pretok - 1].kind != TOK_PRE_BYTELEVEL)
        return FAIL(L, "pre_tokenizer: must end with ByteLevel (a byte-level BPE)");
    for (size_t i = 0; i + 1 < t->n_pretok; i++)
        if (t->pretok[i].kind == TOK_PRE_BYTELEVEL)
            return FAIL(L, "pre_tokenizer: ByteLevel must be the last pre-tokenizer");
        else if (t->pretok[i].kind == TOK_PRE_METASPACE)
            return FAIL(L, "pre_tokenizer: Metaspace does not go with ByteLevel");
    if (t->byte_fallback)
        return FAIL(L, "model.byte_fallback: true is not supported with ByteLevel");
    if (t->unk_id >= 0)
        return FAIL(L, "model.unk_token: not supported with ByteLevel (byte-level BPE needs "
                       "none)");
    return BOSCH_OK;
}

/* A SentencePiece-style pipeline: no pre-tokenizer, or Metaspace alone. */
static int check_spiece_pretok(struct tok_load *L)
{
    bosch_tokenizer *t = L->tok;
    if (t->n_pretok > 1 || (t->n_pretok == 1 && t->pretok[0].kind != TOK_PRE_METASPACE))
        return FAIL(L, "pre_tokenizer: without ByteLevel (a SentencePiece-style BPE) only null "
                       "or Metaspace is supported");
    if (t->ignore_merges)
        return FAIL(L, "model.ignore_merges: true is supported with ByteLevel only");
    return BOSCH_OK;
}

/* One step of Llama 2's decoder Sequence. */
static int load_decoder_step(struct tok_load *L, json_object *o, const char *path, int *replace)
{
    bosch_tokenizer *t = L->tok;
    const char *ty = tok_type_of(L, o, path), *s, *c;
    size_t n, cn;
    char p[128];
    if (!ty)
        return L->status;
    if (!strcmp(ty, "ByteFallback") || !strcmp(ty, "Fuse"))
        return BOSCH_OK;
    if (!strcmp(ty, "Replace")) {
        json_object *pat = tok_member(o, "pattern");
        snprintf(p, sizeof p, "%s.pattern", path);
        if (tok_want_type(L, pat, json_type_object, p) ||
            tok_opt_string(L, pat, "String", p, &s, &n) ||
            tok_opt_string(L, o, "content", path, &c, &cn))
            return L->status;
        if (!s || strcmp(s, SPACE_MARK) || !c || strcmp(c, " "))
            return FAIL(L, "%s: only Replace of \"\\u2581\" by \" \" is supported", path);
        *replace = 1;
        return BOSCH_OK;
    }
    if (!strcmp(ty, "Strip")) {
        json_object *a = tok_member(o, "start"), *b = tok_member(o, "stop");
        if (tok_opt_string(L, o, "content", path, &c, &cn))
            return L->status;
        if (!c || strcmp(c, " ") || !json_object_is_type(a, json_type_int) ||
            json_object_get_int(a) < 0 || json_object_get_int(a) > 8 ||
            (b && (!json_object_is_type(b, json_type_int) || json_object_get_int(b) != 0)))
            return FAIL(L, "%s: only Strip of \" \" with start 0..8 and stop 0 is supported",
                        path);
        t->strip_start = json_object_get_int(a);
        return BOSCH_OK;
    }
    return FAIL(L, "%s.type: decoder \"%.40s\" is not supported here (Replace, ByteFallback, "
                   "Fuse, Strip)", path, ty);
}

/* The decoder: ByteLevel for a byte-level model; Llama 2's Sequence
 * (Replace U+2581 by " ", ByteFallback, Fuse, Strip) or Metaspace for a
 * SentencePiece-style one. */
static int load_decoder(struct tok_load *L, json_object *o)
{
    bosch_tokenizer *t = L->tok;
    if (!o)
        return FAIL(L, "decoder: missing (%s needed)", t->bytelevel ? "ByteLevel"
                                                                    : "Metaspace or Sequence");
    const char *ty = tok_type_of(L, o, "decoder");
    if (!ty)
        return L->status;
    if (t->bytelevel) {
        if (strcmp(ty, "ByteLevel"))
            return FAIL(L, "decoder.type: \"%.40s\" is not supported (ByteLevel)", ty);
        t->decoder = TOK_DEC_BYTELEVEL;
        return BOSCH_OK;
    }
    t->decoder = TOK_DEC_SPIECE;
    if (!strcmp(ty, "Metaspace")) {
        const char *s;
        size_t n;
        if (tok_opt_string(L, o, "prepend_scheme", "decoder", &s, &n))
            return L->status;
        t->strip_start = !s || strcmp(s, "never") ? 1 : 0;
        return BOSCH_OK;
    }
    if (strcmp(ty, "Sequence"))
        return FAIL(L, "decoder.type: \"%.40s\" is not supported without ByteLevel (Metaspace, "
                       "Sequence)", ty);
    json_object *seq = tok_member(o, "decoders");
    if (tok_want_type(L, seq, json_type_array, "decoder.decoders"))
        return L->status;
    int replace = 0;
    for (size_t i = 0; i < json_object_array_length(seq); i++) {
        char p[64];
        snprintf(p, sizeof p, "decoder.decoders[%zu]", i);
        if (load_decoder_step(L, json_object_array_get_idx(seq, i), p, &replace))
            return L->status;
    }
    if (!replace)
        return FAIL(L, "decoder.decoders: a Replace of \"\\u2581\" by \" \" is needed");
    return BOSCH_OK;
}

/* special_tokens[name] of a TemplateProcessing: one id, the token `name`
 * (both references agree then: the JavaScript port adds the token by name,
 * Hugging Face's Rust crate by these ids). */
static int template_id(struct tok_load *L, json_object *specials, const char *name,
                       const char *path, int32_t *id)
{
    json_object *e = specials ? tok_member(specials, name) : NULL;
    json_object *ids = e ? tok_member(e, "ids") : NULL;
    int32_t want = bosch_tokenizer_token_id(L->tok, name);
    if (!e)
        return FAIL(L, "%s: \"%.60s\" is not in special_tokens", path, name);
    if (!json_object_is_type(ids, json_type_array) || json_object_array_length(ids) != 1)
        return FAIL(L, "%s: special_tokens[\"%.60s\"].ids must hold one id", path, name);
    json_object *v = json_object_array_get_idx(ids, 0);
    if (want < 0 || !json_object_is_type(v, json_type_int) || json_object_get_int64(v) != want)
        return FAIL(L, "%s: special_tokens[\"%.60s\"].ids is not the id of the token \"%.60s\"",
                    path, name, name);
    *id = want;
    return BOSCH_OK;
}

/* TemplateProcessing: the special tokens `single` puts around $A. `pair` is
 * not used (bosch_tokenizer_encode encodes one text). */
static int load_template(struct tok_load *L, json_object *o, const char *path)
{
    bosch_tokenizer *t = L->tok;
    char p[128];
    json_object *single = tok_member(o, "single"), *specials = tok_member(o, "special_tokens");
    snprintf(p, sizeof p, "%s.single", path);
    if (tok_want_type(L, single, json_type_array, p))
        return L->status;
    if (specials && tok_want_type(L, specials, json_type_object, "special_tokens"))
        return L->status;
    int seen_a = 0;
    t->n_pre = t->n_post = 0;
    for (size_t i = 0; i < json_object_array_length(single); i++) {
        json_object *it = json_object_array_get_idx(single, i);
        json_object *sp = tok_member(it, "SpecialToken"), *sq = tok_member(it, "Sequence");
        json_object *idv = tok_member(sp ? sp : sq, "id");
        snprintf(p, sizeof p, "%s.single[%zu]", path, i);
        if (!idv || !json_object_is_type(idv, json_type_string) || (!sp == !sq))
            return FAIL(L, "%s: expected {\"SpecialToken\": {\"id\": ...}} or {\"Sequence\": "
                           "{\"id\": \"A\"}}", p);
        const char *name = json_object_get_string(idv);
        if (sq) {
            if (strcmp(name, "A") || seen_a++)
                return FAIL(L, "%s: the single template takes the sequence \"A\" once", p);
            continue;
        }
        int32_t id = -1;
        size_t *n = seen_a ? &t->n_post : &t->n_pre;
        if (template_id(L, specials, name, p, &id))
            return L->status;
        if (*n == TOK_MAX_TEMPLATE)
            return FAIL(L, "%s: more than %u special tokens on a side", p, TOK_MAX_TEMPLATE);
        (seen_a ? t->tmpl_post : t->tmpl_pre)[(*n)++] = id;
    }
    if (!seen_a)
        return FAIL(L, "%s.single: the sequence \"A\" is missing", path);
    json_object *pair = tok_member(o, "pair");
    snprintf(p, sizeof p, "%s.pair", path);
    return pair ? tok_want_type(L, pair, json_type_array, p) : BOSCH_OK;
}

/* post_processor: null, ByteLevel (offsets only), TemplateProcessing, or a
 * Sequence of these (Llama 3's: ByteLevel, then TemplateProcessing). */
static int load_post(struct tok_load *L, json_object *o, const char *path, int depth, int *tmpl)
{
    if (!o)
        return BOSCH_OK;
    const char *ty = tok_type_of(L, o, path);
    if (!ty)
        return L->status;
    if (!strcmp(ty, "ByteLevel"))
        return BOSCH_OK;
    if (!strcmp(ty, "TemplateProcessing")) {
        if ((*tmpl)++)
            return FAIL(L, "%s: a second TemplateProcessing is not supported", path);
        return load_template(L, o, path);
    }
    if (strcmp(ty, "Sequence") || depth)
        return FAIL(L, "%s.type: \"%.40s\" is not supported (ByteLevel, TemplateProcessing, "
                       "Sequence of them)", path, ty);
    json_object *seq = tok_member(o, "processors");
    char p[96];
    snprintf(p, sizeof p, "%s.processors", path);
    if (tok_want_type(L, seq, json_type_array, p))
        return L->status;
    for (size_t i = 0; i < json_object_array_length(seq); i++) {
        snprintf(p, sizeof p, "%s.processors[%zu]", path, i);
        if (load_post(L, json_object_array_get_idx(seq, i), p, 1, tmpl))
            return L->status;
    }
    return BOSCH_OK;
}

int tok_load_finish(struct tok_load *L, json_object *root)
{
    bosch_tokenizer *t = L->tok;
    t->bytelevel = 0;
    for (size_t i = 0; i < t->n_pretok; i++)
        t->bytelevel |= t->pretok[i].kind == TOK_PRE_BYTELEVEL;
    if (t->bytelevel ? check_bytelevel_pretok(L) : check_spiece_pretok(L))
        return L->status;
    for (int b = 0; b < 256; b++) {
        char name[8];
        snprintf(name, sizeof name, "<0x%02X>", b);
        t->fallback_id[b] = tok_strmap_get(&t->vocab, t->strs, t->lens, name, 6);
    }
    int tmpl = 0;
    if (load_decoder(L, tok_member(root, "decoder")) ||
        load_post(L, tok_member(root, "post_processor"), "post_processor", 0, &tmpl))
        return L->status;
    return BOSCH_OK;
}
