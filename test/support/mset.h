/*
 * A set of byte strings (open addressing), to detect repeated evaluations.
 * Keys are normalised: any non-zero byte is stored and compared as 1.
 */
#ifndef BOSCH_TEST_MSET_H
#define BOSCH_TEST_MSET_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    size_t len;   /* bytes per key */
    size_t cap;   /* slots (power of two) */
    size_t count; /* keys stored */
    uint8_t *keys;
    uint8_t *used;
    double *vals;
} mset;

/* FNV-1a of the normalised key. */
uint64_t mset_hash(const uint8_t *k, size_t len);

void mset_init(mset *s, size_t len);
void mset_free(mset *s);

/* Normalised comparison (any non-zero byte is 1). */
int mset_keyeq(const uint8_t *a, const uint8_t *b, size_t len);

/* Returns the slot of key, or the empty slot where it would go. */
size_t mset_slot(const mset *s, const uint8_t *k);

/* 1 when k is in the set (its value into *val unless NULL). */
int mset_find(const mset *s, const uint8_t *k, double *val);

/* Inserts; returns 1 when new, 0 when already present. */
int mset_add(mset *s, const uint8_t *k, double val);

#endif /* BOSCH_TEST_MSET_H */
