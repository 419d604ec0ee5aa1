#include "core/cache.h"

#include <stdlib.h>
#include <string.h>

#include "bosch/bosch.h"
#include "core/bitset.h"

int store_init(eval_store *s, size_t units)
{
    memset(s, 0, sizeof *s);
    s->units = units;
    s->words = bitset_words(units);
    s->tcap = 64;
    s->slots = malloc(s->tcap * sizeof *s->slots);
    if (!s->slots)
        return BOSCH_E_NOMEM;
    memset(s->slots, 0xff, s->tcap * sizeof *s->slots);
    return BOSCH_OK;
}

void store_free(eval_store *s)
{
    free(s->masks);
    free(s->scores);
    free(s->walls);
    free(s->stages);
    free(s->eligible);
    free(s->fidelity);
    free(s->draws);
    free(s->next);
    free(s->slots);
    memset(s, 0, sizeof *s);
}

static void *dup_bytes(const void *src, size_t n)
{
    void *p = malloc(n ? n : 1);
    if (p && n)
        memcpy(p, src, n);
    return p;
}

int store_copy(eval_store *dst, const eval_store *src)
{
    *dst = *src;
    dst->cap = src->n;
    dst->masks = dup_bytes(src->masks, src->n * src->words * sizeof *src->masks);
    dst->scores = dup_bytes(src->scores, src->n * sizeof *src->scores);
    dst->walls = dup_bytes(src->walls, src->n * sizeof *src->walls);
    dst->stages = dup_bytes(src->stages, src->n);
    dst->eligible = dup_bytes(src->eligible, src->n);
    dst->fidelity = dup_bytes(src->fidelity, src->n * sizeof *src->fidelity);
    dst->draws = dup_bytes(src->draws, src->n * sizeof *src->draws);
    dst->next = dup_bytes(src->next, src->n * sizeof *src->next);
    dst->slots = dup_bytes(src->slots, src->tcap * sizeof *src->slots);
    if (!dst->masks || !dst->scores || !dst->walls || !dst->stages || !dst->eligible ||
        !dst->fidelity || !dst->draws || !dst->next || !dst->slots) {
        store_free(dst);
        return BOSCH_E_NOMEM;
    }
    return BOSCH_OK;
}

static size_t slot_of(const eval_store *s, const uint64_t *packed)
{
    return (size_t)bitset_hash(packed, s->words) & (s->tcap - 1);
}

/* The index slot holding the mask's primary record, or the empty slot
 * where it would go. */
static size_t find_slot(const eval_store *s, const uint64_t *packed)
{
    size_t mask = s->tcap - 1;
    for (size_t i = slot_of(s, packed);; i = (i + 1) & mask) {
        int64_t r = s->slots[i];
        if (r < 0 || memcmp(store_mask(s, (size_t)r), packed, s->words * sizeof *packed) == 0)
            return i;
    }
}

int64_t store_find(const eval_store *s, const uint64_t *packed)
{
    return s->slots[find_slot(s, packed)];
}

int64_t store_find_request(const eval_store *s, const uint64_t *packed, double fidelity,
                           uint32_t draw)
{
    int64_t first = store_find(s, packed);
    if (first < 0)
        return -1;
    int64_t r = first;
    do {
        if (s->fidelity[r] == fidelity && s->draws[r] == draw)
            return r;
        r = s->next[r];
    } while (r != first);
    return -1;
}

static int grow_table(eval_store *s)
{
    size_t ncap = s->tcap * 2;
    int64_t *slots = malloc(ncap * sizeof *slots);
    if (!slots)
        return BOSCH_E_NOMEM;
    memset(slots, 0xff, ncap * sizeof *slots);
    int64_t *old = s->slots;
    size_t ocap = s->tcap;
    s->slots = slots;
    s->tcap = ncap;
    for (size_t i = 0; i < ocap; i++)
        if (old[i] >= 0)
            slots[find_slot(s, store_mask(s, (size_t)old[i]))] = old[i];
    free(old);
    return BOSCH_OK;
}

#define GROW(field)                                                                          \
    do {                                                                                     \
        void *p_ = realloc(s->field, ncap * sizeof *s->field);                               \
        if (!p_)                                                                             \
            return BOSCH_E_NOMEM;                                                            \
        s->field = p_;                                                                       \
    } while (0)

static int grow_records(eval_store *s)
{
    size_t ncap = s->cap ? s->cap * 2 : 64;
    uint64_t *m = realloc(s->masks, ncap * s->words * sizeof *m);
    if (!m)
        return BOSCH_E_NOMEM;
    s->masks = m;
    GROW(scores);
    GROW(walls);
    GROW(stages);
    GROW(eligible);
    GROW(fidelity);
    GROW(draws);
    GROW(next);
    s->cap = ncap;
    return BOSCH_OK;
}

int64_t store_add_request(eval_store *s, const uint64_t *packed, double score, int stage,
                          int eligible, double wall, double fidelity, uint32_t draw)
{
    int rc;
    if (s->n == s->cap && (rc = grow_records(s)) < 0)
        return rc;
    /* Keep the load factor under 1/2 (the table holds masks, not records). */
    if ((s->n + 1) * 2 > s->tcap && (rc = grow_table(s)) < 0)
        return rc;
    size_t r = s->n;
    memcpy(s->masks + r * s->words, packed, s->words * sizeof *packed);
    s->scores[r] = score;
    s->walls[r] = wall;
    s->stages[r] = (int8_t)stage;
    s->eligible[r] = (uint8_t)(eligible != 0);
    s->fidelity[r] = fidelity;
    s->draws[r] = draw;
    s->cost += fidelity;
    s->n++;
    size_t i = find_slot(s, packed);
    int64_t prim = s->slots[i];
    if (prim < 0) {
        s->next[r] = (int64_t)r;
        s->slots[i] = (int64_t)r;
        return (int64_t)r;
    }
    s->next[r] = s->next[prim];
    s->next[prim] = (int64_t)r;
    if (!store_is_plain(s, (size_t)prim) && store_is_plain(s, r))
        s->slots[i] = (int64_t)r; /* the full-fidelity first draw becomes primary */
    return (int64_t)r;
}

int64_t store_add(eval_store *s, const uint64_t *packed, double score, int stage, int eligible,
                  double wall)
{
    return store_add_request(s, packed, score, stage, eligible, wall, 1.0, 0);
}
