/* Hash tables of the tokenizer: token string -> id (keys are the strings
 * of the ids themselves) and merge pair -> (rank, merged id). Open
 * addressing, linear probing, load factor at most 1/2. */
#include "text/tokenizer.h"

#include <stdlib.h>
#include <string.h>

uint64_t tok_hash_bytes(const char *s, size_t n)
{
    /* FNV-1a, then a final mix so that the low bits are usable. */
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    return h;
}

static size_t table_size(size_t expected)
{
    size_t n = 16;
    while (n < expected * 2 + 1)
        n *= 2;
    return n;
}

int tok_strmap_init(struct tok_strmap *m, size_t expected)
{
    size_t n = table_size(expected);
    m->slots = malloc(n * sizeof *m->slots);
    if (!m->slots)
        return BOSCH_E_NOMEM;
    memset(m->slots, 0xff, n * sizeof *m->slots);
    m->mask = n - 1;
    return BOSCH_OK;
}

void tok_strmap_free(struct tok_strmap *m)
{
    free(m->slots);
    m->slots = NULL;
}

int32_t tok_strmap_put(struct tok_strmap *m, char *const *strs, const uint32_t *lens, int32_t id)
{
    size_t i = tok_hash_bytes(strs[id], lens[id]) & m->mask;
    for (;; i = (i + 1) & m->mask) {
        int32_t s = m->slots[i];
        if (s < 0) {
            m->slots[i] = id;
            return -1;
        }
        if (lens[s] == lens[id] && !memcmp(strs[s], strs[id], lens[id]))
            return s;
    }
}

int32_t tok_strmap_get(const struct tok_strmap *m, char *const *strs, const uint32_t *lens,
                       const char *key, size_t n)
{
    size_t i = tok_hash_bytes(key, n) & m->mask;
    for (;; i = (i + 1) & m->mask) {
        int32_t s = m->slots[i];
        if (s < 0)
            return -1;
        if (lens[s] == n && !memcmp(strs[s], key, n))
            return s;
    }
}

static uint64_t pair_key(int32_t a, int32_t b)
{
    return ((uint64_t)(uint32_t)a << 32 | (uint32_t)b) + 1;
}

static size_t pair_slot(const struct tok_pairmap *m, uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return (size_t)k & m->mask;
}

int tok_pairmap_init(struct tok_pairmap *m, size_t expected)
{
    size_t n = table_size(expected);
    m->slots = calloc(n, sizeof *m->slots);
    m->mask = n - 1;
    return m->slots ? BOSCH_OK : BOSCH_E_NOMEM;
}

void tok_pairmap_free(struct tok_pairmap *m)
{
    free(m->slots);
    m->slots = NULL;
}

void tok_pairmap_put(struct tok_pairmap *m, int32_t a, int32_t b, uint32_t rank, int32_t merged)
{
    uint64_t k = pair_key(a, b);
    size_t i = pair_slot(m, k);
    while (m->slots[i].key && m->slots[i].key != k)
        i = (i + 1) & m->mask;
    m->slots[i] = (struct tok_pair_slot){k, rank, merged};
}

int tok_pairmap_get(const struct tok_pairmap *m, int32_t a, int32_t b, uint32_t *rank,
                    int32_t *merged)
{
    uint64_t k = pair_key(a, b);
    for (size_t i = pair_slot(m, k); m->slots[i].key; i = (i + 1) & m->mask)
        if (m->slots[i].key == k) {
            *rank = m->slots[i].rank;
            *merged = m->slots[i].merged;
            return 1;
        }
    return 0;
}
