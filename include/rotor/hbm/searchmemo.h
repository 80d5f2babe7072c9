/* rotor — a sweep's memo of shard frontiers (docs/schedule.md, "Sweeps").
 *
 * A sweep schedules one model again and again on chips that differ only in
 * their HBM (Elk's Figures 19, 23, 24: bandwidths, designs), and each
 * schedule searched every shard's frontier afresh, although the plan search
 * (src/op/) reads no HBM field: the same shapes, the same frontiers.  A
 * memo, created by the sweep and handed to every schedule it builds
 * (rotor_schedule_options.memo), keeps each frontier the first schedule
 * searched and gives the later ones a copy: their plans, their frontiers
 * and the schedule's output are the same bytes as without it, in less time.
 *
 * Safe to share between threads (a lock inside): the sweeps build their
 * points in parallel.  Two threads that miss the same shape both search it
 * and the second copy is dropped; the search is deterministic, so which one
 * the memo keeps does not matter. */
#ifndef ROTOR_HBM_SEARCHMEMO_H
#define ROTOR_HBM_SEARCHMEMO_H

#include <stdbool.h>

#include "rotor/base/chip.h"
#include "rotor/base/error.h"
#include "rotor/op/search.h"

typedef struct rotor_search_memo rotor_search_memo;

/* NULL when out of memory. */
rotor_search_memo *rotor_search_memo_new(void);
void rotor_search_memo_free(rotor_search_memo *m);

/* The key of a shard's search: its shape text (expression and extents),
 * the solver, and the chip's fields other than its HBM and inter-chip link
 * (rotor_plancache_key's list, those zeroed).  malloc'd; NULL when out of
 * memory. */
char *rotor_search_memo_key(const char *shape, const rotor_chip *chip, rotor_solver solver);

/* A copy of the frontier kept under key into *out (its own allocation, for
 * rotor_search_result_free): true when kept.  Errors: out of memory. */
rotor_status rotor_search_memo_get(rotor_search_memo *m, const char *key, rotor_search_result *out, bool *found,
                                   rotor_error *err);

/* Keeps a copy of r under key (nothing when the key is kept already).
 * Errors: out of memory. */
rotor_status rotor_search_memo_put(rotor_search_memo *m, const char *key, const rotor_search_result *r,
                                   rotor_error *err);

/* How many lookups found a frontier, and how many frontiers are kept. */
int rotor_search_memo_hits(rotor_search_memo *m);
int rotor_search_memo_size(rotor_search_memo *m);

#endif
