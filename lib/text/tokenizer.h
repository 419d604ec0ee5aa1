/* Internals of the BPE tokenizer (tokenizer_*.c): the loaded tokenizer, and
 * one function group per file. Immutable after load. Two kinds of model: a
 * byte-level BPE (GPT-2, Qwen3, Llama 3, SmolLM2: words in GPT-2's byte
 * alphabet) and a SentencePiece-style BPE (Llama 2, Mistral: words of
 * characters, "\u2581" for a space, <0xNN> byte fallback). */
#ifndef TEXT_TOKENIZER_H
#define TEXT_TOKENIZER_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "text/common.h"

#include <stddef.h>
#include <stdint.h>

/* Limits of what a tokenizer.json may hold (bounds of the loader). */
#define TOK_MAX_FILE ((size_t)512 << 20)
#define TOK_MAX_IDS (1u << 24)
#define TOK_MAX_MERGES (1u << 24)
#define TOK_MAX_TOKEN_LEN 4096u
#define TOK_MAX_ADDED 65536u
#define TOK_MAX_PRETOK 16
#define TOK_MAX_NORMS 8
#define TOK_MAX_TEMPLATE 8 /* special tokens a post-processor adds on a side */
#define TOK_NORM_ARG 64u   /* bytes of a Prepend/Replace argument */

/* --- string -> id and pair -> merge hash tables (tokenizer_hash.c) ------ */
/* Open addressing over ids; the key of a slot is the token string of its
 * id, kept in `strs`/`lens` (not owned). */
struct tok_strmap {
    int32_t *slots; /* -1: empty */
    size_t mask;
};
/* One slot per cache line quarter: key, rank and result are read together. */
struct tok_pair_slot {
    uint64_t key; /* (left << 32 | right) + 1; 0: empty */
    uint32_t rank;
    int32_t merged;
};
struct tok_pairmap {
    struct tok_pair_slot *slots;
    size_t mask;
};
uint64_t tok_hash_bytes(const char *s, size_t n);
int tok_strmap_init(struct tok_strmap *m, size_t expected);
void tok_strmap_free(struct tok_strmap *m);
/* Inserts id under key strs[id]; returns the id already there for an equal
 * key (the map is unchanged then), or -1 after inserting. */
int32_t tok_strmap_put(struct tok_strmap *m, char *const *strs, const uint32_t *lens, int32_t id);
int32_t tok_strmap_get(const struct tok_strmap *m, char *const *strs, const uint32_t *lens,
                       const char *key, size_t n);
int tok_pairmap_init(struct tok_pairmap *m, size_t expected);
void tok_pairmap_free(struct tok_pairmap *m);
/* Inserts or overwrites (a later duplicate merge wins, as in HF). */
void tok_pairmap_put(struct tok_pairmap *m, int32_t a, int32_t b, uint32_t rank, int32_t merged);
/* The rank of pair (a, b) and its merged id, or 0 when there is none. */
int tok_pairmap_get(const struct tok_pairmap *m, int32_t a, int32_t b, uint32_t *rank,
                    int32_t *merged);

/* --- UTF-8 and the byte-level alphabet (tokenizer_utf8.c) -------------- */
/* Length of the valid UTF-8 prefix of s (WHATWG's rules: no surrogates, no
 * overlongs, nothing above U+10FFFF). */
size_t tok_utf8_valid_prefix(const char *s, size_t n);
/* Appends s to b with each maximal invalid subsequence replaced by U+FFFD
 * (WHATWG's UTF-8 decoder, what TextDecoder does). */
int tok_utf8_sanitize(struct text_buf *b, const char *s, size_t n);
/* Decodes one code point of valid UTF-8 at s; returns its length. */
size_t tok_utf8_next(const unsigned char *s, uint32_t *cp);
size_t tok_utf8_put(char *out, uint32_t cp);
/* GPT-2's byte <-> printable code point table. */
uint32_t tok_byte_to_cp(unsigned char b);
/* The byte of a code point of the alphabet, or -1. */
int tok_cp_to_byte(uint32_t cp);

/* --- normalizers and pre-tokenizers (tokenizer_pretok.c) --------------- */
enum tok_norm {
    TOK_NORM_NFC = 1, TOK_NORM_NFD, TOK_NORM_NFKC, TOK_NORM_NFKD,
    TOK_NORM_PREPEND, /* arg before the text (a non-empty text) */
    TOK_NORM_REPLACE  /* each arg (a literal string) by with */
};
struct tok_norm_step {
    int kind;
    uint32_t arg_len, with_len;
    char arg[TOK_NORM_ARG], with[TOK_NORM_ARG];
};
enum tok_pretok_kind { TOK_PRE_SPLIT = 1, TOK_PRE_BYTELEVEL, TOK_PRE_METASPACE };
enum tok_split_behavior { TOK_SPLIT_ISOLATED = 1, TOK_SPLIT_REMOVED };
/* Metaspace's prepend_scheme. */
enum tok_prepend { TOK_PREPEND_ALWAYS = 1, TOK_PREPEND_FIRST, TOK_PREPEND_NEVER };
struct tok_pretok {
    int kind;
    int behavior;         /* Split (and Digits, a Split of ASCII digits) */
    int add_prefix_space; /* ByteLevel */
    int prepend;          /* Metaspace: enum tok_prepend, replacement U+2581 */
    pcre2_code *re;       /* Split's pattern, or ByteLevel's GPT-2 regex (use_regex) */
    int jit;
};
/* A piece of text: a byte range of a buffer. */
struct tok_span {
    size_t off, len;
};
struct tok_spans {
    struct tok_span *v;
    size_t n, cap;
};
int tok_spans_push(struct tok_spans *s, size_t off, size_t len);
/* Applies the normalizers in order to s into out (replacing its content). */
int tok_normalize(const struct tok_norm_step *norms, size_t n_norms, const char *s, size_t n,
                  struct text_buf *out);
/* Compiles a Split pattern: a regex as JavaScript's port reads it (\s is
 * Unicode White_Space), or a literal string. On failure writes the reason
 * to err. */
pcre2_code *tok_regex_compile(const char *pattern, size_t len, int literal, int *jit,
                              char *err, size_t errlen);
pcre2_code *tok_gpt2_regex(int *jit, char *err, size_t errlen);
/* Per-call PCRE2 state (match data, JIT stack): loaded patterns are shared. */
struct tok_match_ctx {
    pcre2_match_data *md;
    pcre2_match_context *mc;
    pcre2_jit_stack *js;
};
int tok_match_ctx_init(struct tok_match_ctx *c);
void tok_match_ctx_free(struct tok_match_ctx *c);
/* Splits each span of `in` (byte ranges of text) by one pre-tokenizer into
 * `out`. ByteLevel's prefix space appends " " + piece to text, Metaspace its
 * rewritten piece. `first`: the text is the first section of the input (not
 * after an added token), for Metaspace's prepend_scheme "first". */
int tok_pretok_apply(const struct tok_pretok *p, struct tok_match_ctx *ctx, struct text_buf *text,
                     const struct tok_spans *in, struct tok_spans *out, int first);

/* --- the tokenizer ----------------------------------------------------- */
struct tok_added {
    char *content;  /* what is matched: a normalized token's normalized form */
    uint32_t len;
    int32_t id;
    unsigned char special, lstrip, rstrip, single_word, normalized;
    unsigned char owned; /* content is its own copy (else the id's string) */
};

/* How ids become text again (the decoder of tokenizer.json). */
enum tok_decoder {
    TOK_DEC_BYTELEVEL = 1, /* GPT-2's alphabet back to bytes */
    TOK_DEC_SPIECE         /* U+2581 to " ", <0xNN> to bytes, strip leading spaces */
};

struct bosch_tokenizer {
    uint32_t n_ids;     /* vocab_size */
    uint32_t cap_ids;   /* allocated length of strs, lens and kind */
    char **strs;        /* [n_ids] stored strings (NULL: no token) */
    uint32_t *lens;
    unsigned char *kind; /* [n_ids] 0 none, 1 vocab, 2 added, 3 added special */
    struct tok_strmap vocab;  /* model.vocab */
    struct tok_strmap added_map; /* added token contents */
    struct tok_pairmap merges;
    int32_t byte_id[256];     /* the id of each byte's alphabet character, -1 */
    int bytelevel;            /* words in GPT-2's alphabet (else characters) */
    int ignore_merges;
    int byte_fallback;        /* a character not in the vocab: its <0xNN> ids */
    int fuse_unk;             /* consecutive unknowns: one unk_id */
    int32_t unk_id;           /* model.unk_token's id, or -1 */
    int32_t fallback_id[256]; /* the id of <0xNN>, or -1 */
    int decoder;              /* enum tok_decoder */
    int strip_start;          /* TOK_DEC_SPIECE: leading spaces removed */
    int32_t tmpl_pre[TOK_MAX_TEMPLATE], tmpl_post[TOK_MAX_TEMPLATE];
    size_t n_pre, n_post;     /* the post-processor's single template */
    struct tok_added *added;
    size_t n_added;
    unsigned char added_first[256]; /* some added token starts with this byte */
    struct tok_norm_step norms[TOK_MAX_NORMS];
    size_t n_norms;
    struct tok_pretok pretok[TOK_MAX_PRETOK];
    size_t n_pretok;
};

/* tokenizer_load.c: the JSON file into a tokenizer; reports through
 * text_create_fail with `fn` as prefix (and `src`, the file's name or NULL,
 * where a message needs it). */
bosch_tokenizer *tok_load_json(const char *fn, const char *src, const char *json, size_t len);
/* tokenizer_bpe.c: appends the ids of one pre-tokenized word (raw bytes;
 * its characters for a SentencePiece-style model). Unknown characters
 * become their byte fallback ids, else unk_id (once for a run with
 * fuse_unk), else nothing. */
struct tok_bpe_scratch {
    struct tok_sym *sym;
    size_t sym_cap;
    struct tok_heap_item *heap;
    size_t heap_cap;
    struct text_buf word; /* the word in the byte-level alphabet */
    uint32_t *cpos;       /* SentencePiece-style: each symbol's first byte */
    size_t cpos_cap;
    size_t call_start;    /* fuse_unk: ids from here on are this call's */
};
struct tok_ids {
    int32_t *v;
    size_t n, cap;
};
int tok_ids_push(struct tok_ids *ids, int32_t id);
int tok_bpe_word(const bosch_tokenizer *tok, struct tok_bpe_scratch *s, const char *w, size_t n,
                 struct tok_ids *out);
void tok_bpe_scratch_free(struct tok_bpe_scratch *s);
/* tokenizer_added.c: the next added token in text[from..n) (leftmost,
 * longest), honouring single_word; `normalized` selects which set. Returns
 * its index in tok->added and its start in *at, or -1. */
long tok_added_find(const bosch_tokenizer *tok, const char *text, size_t from, size_t n,
                    int normalized, size_t *at);
/* Whitespace as JavaScript's trim() sees it, for lstrip/rstrip. */
size_t tok_trim_end(const char *s, size_t n);
size_t tok_trim_start(const char *s, size_t n);

#endif
