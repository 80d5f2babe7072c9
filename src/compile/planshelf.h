/* planshelf.h — the plan store's shelf (private to the compile stage;
 * include/rotor/compile/planstore.h has the store).
 *
 * The compiles that share a plan store also price the same hand-offs: the
 * instance compiles of GraphTurbo's ranges that overlap hold the same
 * operator pairs on the same group chip (gticca.c).  A hand-off price
 * memo (handoffstore.c) is kept per consumer shape, keyed by the same kind
 * of key the disk file has; the shelf keeps those memos beside the plans,
 * by key, for the run.
 *
 * Decisions (no paper keeps one):
 *  - A memo is lent whole to one compile at a time, not copied: lend takes
 *    it off the shelf, give puts it back when the compile ends.  A compile
 *    that asks for a memo another has borrowed gets none and starts its own
 *    (a miss: it prices again, never a wrong answer); when both come back,
 *    the one with more records stays, the other is freed.
 *  - The values are opaque here: the giver names the function that frees
 *    one, and its weight (the records it holds).
 *  - Best effort: out of memory, give frees the memo (what it knew is
 *    priced again next time).  Every call takes the store's lock. */
#ifndef ROTOR_COMPILE_PLANSHELF_H
#define ROTOR_COMPILE_PLANSHELF_H

#include <stdint.h>

#include "rotor/compile/planstore.h"

/* The memo shelved under key, taken off the shelf; NULL when there is none
 * (never given, or lent and not back). */
void *compile_plan_store_lend(rotor_plan_store *s, const char *key);

/* Puts v (weight: its records) back under key, or keeps the heavier of v
 * and one given meanwhile and frees the other with free_fn; v is the
 * shelf's (or freed) after the call. */
void compile_plan_store_give(rotor_plan_store *s, const char *key, void *v, int64_t weight, void (*free_fn)(void *));

#endif
