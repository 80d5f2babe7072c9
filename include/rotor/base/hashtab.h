/* hashtab.h — a hash table keyed by byte strings: open addressing, linear
 * probing, doubled when it would pass half full, entries only added.
 *
 * Written once here because the compile stage's keyed stores each wrote it
 * (energystore.c's operator counts, handoffstore.c's hand-off prices,
 * program.c's placement memo, and handoffcache.c's pair memo): the house
 * rule that a rule used by two modules lives once, in the lower stage.
 *
 * The table copies each key and keeps a fixed-size value per key inline
 * (value_size bytes, copied in on add, written in place by the caller
 * after).  It frees the keys and its slots; a value that owns memory is
 * the caller's to free (walk it with rotor_hashtab_next before
 * rotor_hashtab_free).
 *
 * Decisions (each user's behaviour before this file, kept so that the files
 * they write stay byte for byte the same):
 *  - The hash is the caller's (a function of the key's bytes), FNV-1a 64
 *    (base/hash.h) when it passes none.  Keys compare by length and bytes
 *    after a hash match, so a collision is a probe, never a wrong answer.
 *  - Slots are a power of two: first_slots (rounded up to one, and 2 at
 *    the least) at the first add, doubled before an add would leave the
 *    table more than half full; growing re-inserts the entries in slot
 *    order.  At most half full, a probe always ends at an empty slot.  Slot order is the only
 *    order rotor_hashtab_next walks, and it is a function of the keys, the
 *    hash and the order of the adds alone, so two runs that add the same
 *    keys in the same order walk them in the same order.
 *  - No removal: every user only grows, and linear probing without
 *    tombstones stays simple.  rotor_hashtab_clear empties the whole table.
 *  - A pointer to a value stays valid until the next add (which may grow
 *    the table and move the values). */
#ifndef ROTOR_BASE_HASHTAB_H
#define ROTOR_BASE_HASHTAB_H

#include <stdbool.h>
#include <stdint.h>

#include "rotor/base/error.h"

typedef struct rotor_hashtab rotor_hashtab;

/* The hash of a key of len bytes. */
typedef uint64_t (*rotor_hashtab_hash)(const void *key, int64_t len);

/* The most slots a table holds (2^40): a table with more would not be a
 * memo of a compile, and the bound keeps every size product far from
 * int64_t's end. */
#define ROTOR_HASHTAB_SLOTS_MAX ((int64_t)1 << 40)

/* The longest key (2^32 bytes): far past any key a user builds (the
 * energy store's reader refuses keys over 1 MiB), and short of what malloc
 * could be asked in error. */
#define ROTOR_HASHTAB_KEY_MAX ((int64_t)1 << 32)

/* A new empty table of values of value_size bytes (1 or more), with
 * first_slots (1 to ROTOR_HASHTAB_SLOTS_MAX, rounded up to a power of two,
 * 2 at the least) slots at its first add, keys hashed by hash (NULL: FNV-1a 64 of the
 * bytes).  Allocates nothing more until the first add.  ROTOR_ERR_INPUT
 * when a size is out of range or first_slots values of value_size bytes
 * overflow; *out NULL after an error. */
rotor_status rotor_hashtab_new(int64_t value_size, int64_t first_slots, rotor_hashtab_hash hash, rotor_hashtab **out,
                               rotor_error *err);

/* Frees t, its keys and its slots (not what values point to); NULL is a
 * no-op. */
void rotor_hashtab_free(rotor_hashtab *t);

/* The value under key[0..len), or NULL when the key is not there (or len is
 * negative). */
void *rotor_hashtab_find(const rotor_hashtab *t, const void *key, int64_t len);

/* Adds key[0..len) (copied; len 0 to ROTOR_HASHTAB_KEY_MAX) with a copy
 * of value's value_size bytes (value NULL: zeros), unless the key is there
 * already, whose value is then left as it is.  *at (when at is non-NULL) is
 * the key's value in the table either way, *added (when non-NULL) whether
 * this call added it.  Fails with ROTOR_ERR_NOMEM when out of memory or
 * when the table would pass ROTOR_HASHTAB_SLOTS_MAX slots, ROTOR_ERR_INPUT
 * for a len out of range; t is unchanged after an error, *at NULL and
 * *added false. */
rotor_status rotor_hashtab_add(rotor_hashtab *t, const void *key, int64_t len, const void *value, void **at,
                               bool *added, rotor_error *err);

/* How many keys t holds. */
int64_t rotor_hashtab_count(const rotor_hashtab *t);

/* How many slots t has now: 0 before the first add, then a power of two at
 * least twice the count. */
int64_t rotor_hashtab_slots(const rotor_hashtab *t);

/* Walks t in slot order: start *pos at 0; each call that returns true sets
 * the next entry's key, its length and its value (any of the three
 * pointers may be NULL) and moves *pos past it; false at the end.  The walk
 * is valid while nothing is added. */
bool rotor_hashtab_next(const rotor_hashtab *t, int64_t *pos, const void **key, int64_t *len, void **value);

/* Empties t (keys and slots freed; its value size, first slots and hash
 * kept). */
void rotor_hashtab_clear(rotor_hashtab *t);

#endif
