#include "mset.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

uint64_t mset_hash(const uint8_t *k, size_t len)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < len; i++) {
        h ^= (uint64_t)(k[i] != 0) + 1;
        h *= 1099511628211ULL;
    }
    return h;
}

void mset_init(mset *s, size_t len)
{
    s->len = len;
    s->cap = 1024;
    s->count = 0;
    s->keys = calloc(s->cap, len ? len : 1);
    s->used = calloc(s->cap, 1);
    s->vals = calloc(s->cap, sizeof(double));
    ck_assert(s->keys && s->used && s->vals);
}

void mset_free(mset *s)
{
    free(s->keys);
    free(s->used);
    free(s->vals);
    memset(s, 0, sizeof *s);
}

int mset_keyeq(const uint8_t *a, const uint8_t *b, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if ((a[i] != 0) != (b[i] != 0))
            return 0;
    return 1;
}

size_t mset_slot(const mset *s, const uint8_t *k)
{
    size_t i = (size_t)mset_hash(k, s->len) & (s->cap - 1);
    while (s->used[i] && !mset_keyeq(s->keys + i * s->len, k, s->len))
        i = (i + 1) & (s->cap - 1);
    return i;
}

int mset_find(const mset *s, const uint8_t *k, double *val)
{
    size_t i = mset_slot(s, k);
    if (!s->used[i])
        return 0;
    if (val)
        *val = s->vals[i];
    return 1;
}

int mset_add(mset *s, const uint8_t *k, double val)
{
    if ((s->count + 1) * 2 > s->cap) {
        mset old = *s;
        s->cap *= 2;
        s->count = 0;
        s->keys = calloc(s->cap, s->len ? s->len : 1);
        s->used = calloc(s->cap, 1);
        s->vals = calloc(s->cap, sizeof(double));
        ck_assert(s->keys && s->used && s->vals);
        for (size_t i = 0; i < old.cap; i++)
            if (old.used[i])
                mset_add(s, old.keys + i * old.len, old.vals[i]);
        mset_free(&old);
    }
    size_t i = mset_slot(s, k);
    if (s->used[i])
        return 0;
    s->used[i] = 1;
    for (size_t b = 0; b < s->len; b++)
        s->keys[i * s->len + b] = k[b] != 0;
    s->vals[i] = val;
    s->count++;
    return 1;
}
