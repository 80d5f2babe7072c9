/* hashtab.c — a hash table keyed by byte strings (include/rotor/base/hashtab.h
 * says what it keeps and why it is written once).
 *
 * The slots (hash, key length, key) and the values are two arrays of the
 * same count: a probe reads only the 24-byte slots, whatever the values'
 * size, and a value sits at its slot's index. */
#include "rotor/base/hashtab.h"

#include <stdlib.h>
#include <string.h>

#include "rotor/base/hash.h"

typedef struct slot {
    uint64_t h;
    int64_t len;
    unsigned char *key; /* NULL: empty */
} slot;

struct rotor_hashtab {
    slot *slot;
    unsigned char *val; /* cap values of vsize bytes */
    int64_t cap, n;     /* cap 0 or a power of two, n at most cap / 2 */
    int64_t vsize, first;
    rotor_hashtab_hash hash; /* NULL: FNV-1a 64 */
};

static uint64_t hash_of(const rotor_hashtab *t, const void *key, int64_t len) {
    return t->hash ? t->hash(key, len) : rotor_fnv1a_bytes(ROTOR_FNV1A_SEED, key, (size_t)len);
}

/* The bytes of cap values of vsize bytes into *bytes: false on overflow. */
static bool values_bytes(int64_t cap, int64_t vsize, int64_t *bytes) {
    return rotor_mul_i64(cap, vsize, bytes) && (uint64_t)*bytes <= SIZE_MAX;
}

rotor_status rotor_hashtab_new(int64_t value_size, int64_t first_slots, rotor_hashtab_hash hash, rotor_hashtab **out,
                               rotor_error *err) {
    *out = NULL;
    if (value_size < 1)
        return rotor_fail(err, ROTOR_ERR_INPUT, "hash table: value size %lld: expected 1 byte or more",
                          (long long)value_size);
    if (first_slots < 1 || first_slots > ROTOR_HASHTAB_SLOTS_MAX)
        return rotor_fail(err, ROTOR_ERR_INPUT, "hash table: first slots %lld: expected 1 to %lld",
                          (long long)first_slots, (long long)ROTOR_HASHTAB_SLOTS_MAX);
    int64_t first = 1, bytes;
    while (first < first_slots) first *= 2; /* at most ROTOR_HASHTAB_SLOTS_MAX, itself a power of two */
    if (!values_bytes(first, value_size, &bytes))
        return rotor_fail(err, ROTOR_ERR_INPUT, "hash table: %lld values of %lld bytes overflow", (long long)first,
                          (long long)value_size);
    rotor_hashtab *t = calloc(1, sizeof *t);
    if (!t) return rotor_nomem(err);
    t->vsize = value_size;
    t->first = first;
    t->hash = hash;
    *out = t;
    return ROTOR_OK;
}

void rotor_hashtab_clear(rotor_hashtab *t) {
    for (int64_t i = 0; i < t->cap; i++) free(t->slot[i].key);
    free(t->slot);
    free(t->val);
    t->slot = NULL;
    t->val = NULL;
    t->cap = t->n = 0;
}

void rotor_hashtab_free(rotor_hashtab *t) {
    if (!t) return;
    rotor_hashtab_clear(t);
    free(t);
}

int64_t rotor_hashtab_count(const rotor_hashtab *t) { return t->n; }
int64_t rotor_hashtab_slots(const rotor_hashtab *t) { return t->cap; }

/* The slot of key (hash h) in t, or the empty slot where its probe ends:
 * t has slots and at least one is empty (at most half are full). */
static int64_t probe(const rotor_hashtab *t, uint64_t h, const void *key, int64_t len) {
    uint64_t mask = (uint64_t)t->cap - 1;
    uint64_t j = h & mask;
    for (const slot *s = &t->slot[j]; s->key; s = &t->slot[j = (j + 1) & mask])
        if (s->h == h && s->len == len && !memcmp(s->key, key, (size_t)len)) break;
    return (int64_t)j;
}

void *rotor_hashtab_find(const rotor_hashtab *t, const void *key, int64_t len) {
    if (!t->cap || len < 0) return NULL;
    int64_t j = probe(t, hash_of(t, key, len), key, len);
    return t->slot[j].key ? t->val + j * t->vsize : NULL;
}

/* Doubles t's slots (or makes its first ones, doubled while one more key
 * would fill them past half: a first 1 slot is 2), the entries re-inserted
 * in slot order. */
static rotor_status grow(rotor_hashtab *t, rotor_error *err) {
    int64_t cap = t->cap ? 2 * t->cap : t->first, bytes;
    while (cap <= ROTOR_HASHTAB_SLOTS_MAX && (t->n + 1) * 2 > cap) cap *= 2;
    if (cap > ROTOR_HASHTAB_SLOTS_MAX)
        return rotor_fail(err, ROTOR_ERR_NOMEM, "hash table: %lld keys need more than %lld slots", (long long)t->n + 1,
                          (long long)ROTOR_HASHTAB_SLOTS_MAX);
    if (!values_bytes(cap, t->vsize, &bytes))
        return rotor_fail(err, ROTOR_ERR_NOMEM, "hash table: %lld values of %lld bytes overflow", (long long)cap,
                          (long long)t->vsize);
    slot *s = calloc((size_t)cap, sizeof *s);
    unsigned char *v = calloc((size_t)cap, (size_t)t->vsize);
    if (!s || !v) {
        free(s);
        free(v);
        return rotor_nomem(err);
    }
    uint64_t mask = (uint64_t)cap - 1;
    for (int64_t i = 0; i < t->cap; i++) {
        if (!t->slot[i].key) continue;
        uint64_t j = t->slot[i].h & mask;
        while (s[j].key) j = (j + 1) & mask;
        s[j] = t->slot[i];
        memcpy(v + (int64_t)j * t->vsize, t->val + i * t->vsize, (size_t)t->vsize);
    }
    free(t->slot);
    free(t->val);
    t->slot = s;
    t->val = v;
    t->cap = cap;
    return ROTOR_OK;
}

rotor_status rotor_hashtab_add(rotor_hashtab *t, const void *key, int64_t len, const void *value, void **at,
                               bool *added, rotor_error *err) {
    if (at) *at = NULL;
    if (added) *added = false;
    if (len < 0 || len > ROTOR_HASHTAB_KEY_MAX)
        return rotor_fail(err, ROTOR_ERR_INPUT, "hash table: key of %lld bytes: expected 0 to %lld", (long long)len,
                          (long long)ROTOR_HASHTAB_KEY_MAX);
    uint64_t h = hash_of(t, key, len);
    int64_t j = t->cap ? probe(t, h, key, len) : 0;
    if (t->cap && t->slot[j].key) {
        if (at) *at = t->val + j * t->vsize;
        return ROTOR_OK;
    }
    /* the key's copy first, so that a failure leaves t as it was (not even
     * grown: growing reorders the walk) */
    unsigned char *k = malloc(len ? (size_t)len : 1);
    if (!k) return rotor_nomem(err);
    memcpy(k, key, (size_t)len);
    if ((t->n + 1) * 2 > t->cap) {
        rotor_status st = grow(t, err);
        if (st) {
            free(k);
            return st;
        }
        j = probe(t, h, key, len); /* the key is not there: the empty slot its probe ends at */
    }
    t->slot[j] = (slot){.h = h, .len = len, .key = k};
    unsigned char *v = t->val + j * t->vsize;
    if (value) memcpy(v, value, (size_t)t->vsize);
    else memset(v, 0, (size_t)t->vsize);
    t->n++;
    if (at) *at = v;
    if (added) *added = true;
    return ROTOR_OK;
}

bool rotor_hashtab_next(const rotor_hashtab *t, int64_t *pos, const void **key, int64_t *len, void **value) {
    for (int64_t i = *pos < 0 ? 0 : *pos; i < t->cap; i++) {
        if (!t->slot[i].key) continue;
        if (key) *key = t->slot[i].key;
        if (len) *len = t->slot[i].len;
        if (value) *value = t->val + i * t->vsize;
        *pos = i + 1;
        return true;
    }
    *pos = t->cap;
    return false;
}
