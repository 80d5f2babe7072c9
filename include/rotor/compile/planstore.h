/* rotor — the in-memory plan store (issues 42 and 45; docs/compile.md,
 * "Plan store"): the plan cache's entries (plancache.h) kept in memory for
 * the compiles of one run, so that a caller that runs many compiles
 * (GraphTurbo's instance compiles, gticca.c; a sweep) searches each operator
 * shape once among them, with or without the on-disk cache.
 *
 * The entries are the plan cache's, with the same semantics: each records
 * answers the search gave (a first search, points under caps, tails, slow
 * answers), and the compiler asks the same questions whether they come from
 * here, from disk or from the search, so a hit gives the bytes a miss gives.
 * Not persistence: the store lives as long as its owner (created and freed
 * by the module that runs the compiles; no global state).
 *
 * Threads: every call takes the store's lock, so compiles on several
 * threads may share one.  What a compile finds does not depend on which
 * thread answered first: an answer is the search's, the same whoever
 * computes it; only how many searches run does. */
#ifndef ROTOR_PLANSTORE_H
#define ROTOR_PLANSTORE_H

#include <stdbool.h>
#include <stdint.h>

#include "rotor/base/error.h"
#include "rotor/compile/plancache.h"

typedef struct rotor_plan_store rotor_plan_store;

/* An empty store; NULL when out of memory. */
rotor_plan_store *rotor_plan_store_new(void);
void rotor_plan_store_free(rotor_plan_store *s);

/* The store's entry for key, copied into *e (which gets its own key either
 * way; a miss leaves it otherwise empty, as rotor_plancache_load does):
 * *found true on a hit.  The copy is not dirty. */
rotor_status rotor_plan_store_get(rotor_plan_store *s, const char *key, rotor_plancache_entry *e, bool *found,
                                  rotor_error *err);

/* Merges what e knows (its first search when the store's entry has none,
 * and each answer the store's does not already imply) into the store's
 * entry for e->key.  Entries only grow; merging is idempotent. */
rotor_status rotor_plan_store_put(rotor_plan_store *s, const rotor_plancache_entry *e, rotor_error *err);

/* How many shapes the store holds. */
int rotor_plan_store_count(rotor_plan_store *s);

#endif
