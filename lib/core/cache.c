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
    dst->slots = dup_bytes(src->slots, src->tcap * sizeof *src->slots);
    if (!dst->masks || !dst->scores || !dst->walls || !dst->stages || !dst->eligible || !dst->slots) {
        store_free(dst);
        return BOSCH_E_NOMEM;
    }
    return BOSCH_OK;
}

static size_t slot_of(const eval_store *s, const uint64_t *packed)
{
    return (size_t)bitset_hash(packed, s->words) & (s->tcap - 1);
}

int64_t store_find(const eval_store *s, const uint64_t *packed)
{
    size_t mask = s->tcap - 1;
    for (size_t i = slot_of(s, packed);; i = (i + 1) & mask) {
        int64_t r = s->slots[i];
        if (r < 0)
            return -1;
        if (memcmp(store_mask(s, (size_t)r), packed, s->words * sizeof *packed) == 0)
            return r;
    }
}

static int grow_table(eval_store *s)
{
    size_t ncap = s->tcap * 2;
    int64_t *slots = malloc(ncap * sizeof *slots);
    if (!slots)
        return BOSCH_E_NOMEM;
    memset(slots, 0xff, ncap * sizeof *slots);
    free(s->slots);
    s->slots = slots;
    s->tcap = ncap;
    for (size_t r = 0; r < s->n; r++) {
        size_t i = slot_of(s, store_mask(s, r));
        while (slots[i] >= 0)
            i = (i + 1) & (ncap - 1);
        slots[i] = (int64_t)r;
    }
    return BOSCH_OK;
}

static int grow_records(eval_store *s)
{
    size_t ncap = s->cap ? s->cap * 2 : 64;
    uint64_t *m = realloc(s->masks, ncap * s->words * sizeof *m);
    if (!m)
        return BOSCH_E_NOMEM;
    s->masks = m;
    double *sc = realloc(s->scores, ncap * sizeof *sc);
    if (!sc)
        return BOSCH_E_NOMEM;
    s->scores = sc;
    double *wl = realloc(s->walls, ncap * sizeof *wl);
    if (!wl)
        return BOSCH_E_NOMEM;
    s->walls = wl;
    int8_t *st = realloc(s->stages, ncap);
    if (!st)
        return BOSCH_E_NOMEM;
    s->stages = st;
    uint8_t *el = realloc(s->eligible, ncap);
    if (!el)
        return BOSCH_E_NOMEM;
    s->eligible = el;
    s->cap = ncap;
    return BOSCH_OK;
}

int64_t store_add(eval_store *s, const uint64_t *packed, double score, int stage, int eligible,
                  double wall)
{
    int rc;
    if (s->n == s->cap && (rc = grow_records(s)) < 0)
        return rc;
    /* Keep the load factor under 1/2. */
    if ((s->n + 1) * 2 > s->tcap && (rc = grow_table(s)) < 0)
        return rc;
    size_t r = s->n;
    memcpy(s->masks + r * s->words, packed, s->words * sizeof *packed);
    s->scores[r] = score;
    s->walls[r] = wall;
    s->stages[r] = (int8_t)stage;
    s->eligible[r] = (uint8_t)(eligible != 0);
    size_t i = slot_of(s, packed);
    while (s->slots[i] >= 0)
        i = (i + 1) & (s->tcap - 1);
    s->slots[i] = (int64_t)r;
    s->n++;
    return (int64_t)r;
}
