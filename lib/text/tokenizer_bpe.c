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

int tok_bpe_word(const bosch_tokenizer *tok, struct tok_bpe_scratch *s, const char *w, size_t n,
                 struct tok_ids *out)
{
    if (!n)
        return BOSCH_OK;
    if (n > INT32_MAX / 2)
        return BOSCH_E_INVALID;
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
    if (n > s->sym_cap) {
        free(s->sym);
        free(s->heap);
        s->sym = malloc(n * sizeof *s->sym);
        /* each merge pushes at most two pairs: 3n bounds the heap */
        s->heap = malloc(3 * n * sizeof *s->heap);
        s->sym_cap = s->sym && s->heap ? n : 0;
        if (!s->sym_cap)
            return BOSCH_E_NOMEM;
    }
    for (size_t i = 0; i < n; i++)
        s->sym[i] = (struct tok_sym){tok->byte_id[(unsigned char)w[i]], (int32_t)i - 1,
                                     i + 1 < n ? (int32_t)i + 1 : -1};
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
    for (int32_t i = 0; i >= 0; i = s->sym[i].next)
        if (s->sym[i].id >= 0 && tok_ids_push(out, s->sym[i].id))
            return BOSCH_E_NOMEM;
    return BOSCH_OK;
}
