/* The points already evaluated that lie in a subproblem: store records whose
 * full mask is exactly the expansion of their own restriction (the base
 * outside the variables, one value per variable) and whose restriction meets
 * the block counts. Strategies warm-start from them (the model strategy fits
 * its surrogate on them). Scanned lazily, extended as the store grows. */
#include <stdlib.h>
#include <string.h>

#include "core/bitset.h"
#include "search/subproblem_impl.h"

static int meets_counts(const bosch_subproblem *sp, const uint8_t *x)
{
    for (size_t b = 0; b < sp->nblocks; b++) {
        uint32_t c = 0;
        for (size_t i = sp->block_start[b]; i < sp->block_start[b + 1]; i++)
            c += x[sp->block_vars[i]] != 0;
        if (c != sp->counts[b])
            return 0;
    }
    return 1;
}

/* Brings the list up to date with the store; < 0 when out of memory. */
static int scan(const bosch_subproblem *sp)
{
    struct sp_history *h = sp->hist;
    const eval_store *st = sp->store;
    if (!h)
        return -1;
    if (!st)
        return 0; /* nothing evaluated anywhere yet */
    if (h->scanned == st->n)
        return 0;
    size_t words = bitset_words(sp->units);
    if (!h->full) {
        h->full = malloc(sp->units);
        h->x = malloc(sp->n);
        h->packed = malloc(words * sizeof *h->packed);
        if (!h->full || !h->x || !h->packed)
            return -1;
    }
    for (; h->scanned < st->n; h->scanned++) {
        size_t r = h->scanned;
        /* One point per mask, with its full-fidelity score: screened scores
         * and confirmation draws are not listed. */
        if (!store_is_plain(st, r))
            continue;
        bitset_unpack(store_mask(st, r), sp->units, h->full);
        subproblem_restrict(sp, h->full, h->x);
        if (!meets_counts(sp, h->x))
            continue;
        /* The expansion without the global repair: a record lies in the
         * subproblem only when nothing outside its variables differs. */
        subproblem_apply(sp, h->x, h->full);
        bitset_pack(h->full, sp->units, h->packed);
        if (memcmp(h->packed, store_mask(st, r), words * sizeof *h->packed) != 0)
            continue;
        if (h->n == h->cap) {
            size_t cap = h->cap ? 2 * h->cap : 64;
            int64_t *rec = realloc(h->rec, cap * sizeof *rec);
            if (!rec)
                return -1;
            h->rec = rec;
            h->cap = cap;
        }
        h->rec[h->n++] = (int64_t)r;
    }
    return 0;
}

size_t bosch_subproblem_history_count(const bosch_subproblem *sp)
{
    if (!sp || scan(sp) < 0)
        return 0;
    return sp->hist->n;
}

int bosch_subproblem_history(const bosch_subproblem *sp, size_t i, uint8_t *x, double *value)
{
    if (!sp)
        return BOSCH_E_INVALID;
    if (scan(sp) < 0)
        return BOSCH_E_NOMEM;
    if (!sp->store || i >= sp->hist->n)
        return BOSCH_E_NOT_FOUND;
    size_t r = (size_t)sp->hist->rec[i];
    if (x) {
        bitset_unpack(store_mask(sp->store, r), sp->units, sp->hist->full);
        subproblem_restrict(sp, sp->hist->full, x);
    }
    if (value)
        *value = sp->value_of(sp->value_ctx, r);
    return BOSCH_OK;
}
