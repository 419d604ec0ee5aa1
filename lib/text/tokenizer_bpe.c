/* BPE on one pre-tokenized word: start from the ids of its bytes' alphabet
 * characters, then repeatedly merge the pair of lowest rank (leftmost on a
 * tie), as HF does. A binary heap of candidate pairs over a linked list of
 * symbols: O(n log n) per word, not a rescan per merge. */
#include "text/tokenizer.h"

#include <stdlib.h>
#include <string.h>

struct tok_sym {
    int32_t id;
    int32_t prev, next; /* -1: none */
};
struct tok_heap_item {
    uint32_t rank;
    int32_t pos;          /* the left symbol */
    int32_t left, right;  /* its id and its right neighbour's when pushed */
    int32_t merged;
};

int tok_ids_push(struct tok_ids *ids, int32_t id)
{
    if (ids->n == ids->cap) {
        size_t cap = ids->cap ? ids->cap * 2 : 256;
        int32_t *v = realloc(ids->v, cap * sizeof *v);
        if (!v)
            return BOSCH_E_NOMEM;
        ids->v = v;
        ids->cap = cap;
    }
    ids->v[ids->n++] = id;
    return BOSCH_OK;
}

void tok_bpe_scratch_free(struct tok_bpe_scratch *s)
{
    free(s->sym);
    free(s->heap);
    free(s->cpos);
    text_buf_free(&s->word);
    memset(s, 0, sizeof *s);
}

static int before(const struct tok_heap_item *a, const struct tok_heap_item *b)
{
    return a->rank < b->rank || (a->rank == b->rank && a->pos < b->pos);
}

static void heap_push(struct tok_heap_item *h, size_t *n, struct tok_heap_item it)
{
    size_t i = (*n)++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!before(&it, &h[p]))
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = it;
}

static struct tok_heap_item heap_pop(struct tok_heap_item *h, size_t *n)
{
    struct tok_heap_item top = h[0], last = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && before(&h[c + 1], &h[c]))
            c++;
        if (!before(&h[c], &last))
            break;
        h[i] = h[c];
        i = c;
    }
    if (*n)
        h[i] = last;
    return top;
}

static void push_pair(const bosch_tokenizer *tok, struct tok_bpe_scratch *s, size_t *hn,
                      int32_t pos)
{
    int32_t nx = s->sym[pos].next;
    if (nx < 0 || s->sym[pos].id < 0 || s->sym[nx].id < 0)
        return;
    uint32_t rank;
    int32_t merged;
    if (tok_pairmap_get(&tok->merges, s->sym[pos].id, s->sym[nx].id, &rank, &merged))
        heap_push(s->heap, hn,
                  (struct tok_heap_item){rank, pos, s->sym[pos].id, s->sym[nx].id, merged});
}

/* The word in the alphabet, for the whole-word lookup of ignore_merges. */
static int32_t whole_word_id(const bosch_tokenizer *tok, struct tok_bpe_scratch *s,
                             const char *w, size_t n)
{
    s->word.len = 0;
    for (size_t i = 0; i < n; i++) {
        char u[4];
        size_t l = tok_utf8_put(u, tok_byte_to_cp((unsigned char)w[i]));
        if (text_buf_add(&s->word, u, l))
            return -2;
    }
    return tok_strmap_get(&tok->vocab, tok->strs, tok->lens, s->word.data, s->word.len);
}

static int ensure_cap(struct tok_bpe_scratch *s, size_t n)
{
    if (n <= s->sym_cap)
        return BOSCH_OK;
    free(s->sym);
    free(s->heap);
    s->sym = malloc(n * sizeof *s->sym);
    /* each merge pushes at most two pairs: 3n bounds the heap */
    s->heap = malloc(3 * n * sizeof *s->heap);
    s->sym_cap = s->sym && s->heap ? n : 0;
    return s->sym_cap ? BOSCH_OK : BOSCH_E_NOMEM;
}

/* Merges the n symbols of s->sym, lowest rank first. */
static void merge_all(const bosch_tokenizer *tok, struct tok_bpe_scratch *s, size_t n)
{
    size_t hn = 0;
    for (size_t i = 0; i + 1 < n; i++)
        push_pair(tok, s, &hn, (int32_t)i);
    while (hn) {
        struct tok_heap_item it = heap_pop(s->heap, &hn);
        struct tok_sym *a = &s->sym[it.pos];
        /* stale: the symbol or its neighbour changed since the push */
        if (a->id != it.left || a->next < 0 || s->sym[a->next].id != it.right)
            continue;
        int32_t b = a->next;
        a->id = it.merged;
        a->next = s->sym[b].next;
        if (a->next >= 0)
            s->sym[a->next].prev = it.pos;
        s->sym[b].id = -1;
        s->sym[b].next = -1;
        if (a->prev >= 0)
            push_pair(tok, s, &hn, a->prev);
        push_pair(tok, s, &hn, it.pos);
    }
}

/* fuse_unk: an unknown right after an unknown of the same call is left
 * out (the reference fuses them into one). */
static int push_fused(const bosch_tokenizer *tok, const struct tok_bpe_scratch *s, int32_t id,
                      struct tok_ids *out)
{
    if (tok->fuse_unk && id == tok->unk_id && out->n > s->call_start &&
        out->v[out->n - 1] == id)
        return BOSCH_OK;
    return tok_ids_push(out, id);
}

/* An unknown character: its <0xNN> ids when all exist, else unk_id, else
 * nothing (as the reference's BPE does). */
static int unknown_char(const bosch_tokenizer *tok, const struct tok_bpe_scratch *s,
                        const unsigned char *c, size_t len, struct tok_ids *out)
{
    int all = tok->byte_fallback;
    for (size_t i = 0; i < len && all; i++)
        all = tok->fallback_id[c[i]] >= 0;
    for (size_t i = 0; i < len && all; i++)
        if (tok_ids_push(out, tok->fallback_id[c[i]]))
            return BOSCH_E_NOMEM;
    if (all || tok->unk_id < 0)
        return BOSCH_OK;
    return push_fused(tok, s, tok->unk_id, out);
}

/* A SentencePiece-style word: its characters are the symbols. */
static int spiece_word(const bosch_tokenizer *tok, struct tok_bpe_scratch *s, const char *w,
                       size_t n, struct tok_ids *out)
{
    if (ensure_cap(s, n))
        return BOSCH_E_NOMEM;
    if (n > s->cpos_cap) {
        free(s->cpos);
        s->cpos = malloc((n + 1) * sizeof *s->cpos);
        s->cpos_cap = s->cpos ? n : 0;
        if (!s->cpos)
            return BOSCH_E_NOMEM;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; k++) {
        uint32_t cp;
        size_t l = tok_utf8_next((const unsigned char *)w + i, &cp);
        s->cpos[k] = (uint32_t)i;
        s->sym[k] = (struct tok_sym){tok_strmap_get(&tok->vocab, tok->strs, tok->lens, w + i, l),
                                     (int32_t)k - 1, (int32_t)k + 1};
        i += l;
    }
    s->cpos[k] = (uint32_t)n;
    s->sym[k - 1].next = -1;
    merge_all(tok, s, k);
    for (int32_t i = 0; i >= 0; i = s->sym[i].next) {
        int st = s->sym[i].id >= 0
                     ? push_fused(tok, s, s->sym[i].id, out)
                     : unknown_char(tok, s, (const unsigned char *)w + s->cpos[i],
                                    s->cpos[i + 1] - s->cpos[i], out);
        if (st)
            return st;
    }
    return BOSCH_OK;
}

int tok_bpe_word(const bosch_tokenizer *tok, struct tok_bpe_scratch *s, const char *w, size_t n,
                 struct tok_ids *out)
{
    if (!n)
        return BOSCH_OK;
    if (n > INT32_MAX / 2)
        return BOSCH_E_INVALID;
    if (!tok->bytelevel)
        return spiece_word(tok, s, w, n, out);
    if (tok->ignore_merges) {
        int32_t id = whole_word_id(tok, s, w, n);
        if (id == -2)
            return BOSCH_E_NOMEM;
        if (id >= 0)
            return tok_ids_push(out, id);
    }
    if (n == 1) /* no merge possible; an id missing from the vocab is dropped */
        return tok->byte_id[(unsigned char)w[0]] >= 0
                   ? tok_ids_push(out, tok->byte_id[(unsigned char)w[0]]) : BOSCH_OK;
    if (ensure_cap(s, n))
        return BOSCH_E_NOMEM;
    for (size_t i = 0; i < n; i++)
        s->sym[i] = (struct tok_sym){tok->byte_id[(unsigned char)w[i]], (int32_t)i - 1,
                                     i + 1 < n ? (int32_t)i + 1 : -1};
    merge_all(tok, s, n);
    for (int32_t i = 0; i >= 0; i = s->sym[i].next)
        if (s->sym[i].id >= 0 && tok_ids_push(out, s->sym[i].id))
            return BOSCH_E_NOMEM;
    return BOSCH_OK;
}
