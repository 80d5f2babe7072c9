/* rotor — the persistent plan cache (issue 45; docs/compile.md, "Plan
 * cache"): what the compiler learned of one operator shape's Pareto
 * frontier, kept on disk between runs, so that a shape compiled before is
 * not searched again.
 *
 * An entry answers exactly the questions the compiler asks of the search
 * (compile.c), with the answers the search gave: the shape's first search
 * (the frontier up to its time ratio), the fastest plan under a memory cap
 * (a convolution's lazily searched frontier), and the frontier's tail under
 * a cap (a plain contraction's).  The compiler asks the same questions
 * whether the answers come from the cache or from the search, so a hit
 * gives the same program, byte for byte, as a miss.
 *
 * Key: the shape (expression text, extents, the operator's element size),
 * every chip field the search's cost reads, the solver and the frontier's
 * time ratio, and the versions of the cost model (op/cost.h), the solvers
 * (op/search.h) and this format.  The file is the key's FNV-1a 64 hash in
 * hex, ".rpc"; the entry holds the whole key, so a hash collision reads as
 * a miss.  Entries are written to a temporary name in the same directory
 * and renamed into place (readers never see a partial file); one that does
 * not read back (truncated, corrupt: its checksum, counts or numbers) is
 * reported as damaged, ignored, and rewritten.  The library never prints:
 * the caller warns.  The directory is bounded: after a write, the oldest
 * entries (by modification time) are removed while the total is over the
 * limit.  The library never reads the environment; the CLI resolves the
 * default directory (src/cli/options.c). */
#ifndef ROTOR_PLANCACHE_H
#define ROTOR_PLANCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rotor/base/chip.h"
#include "rotor/base/error.h"
#include "rotor/op/search.h"

#define ROTOR_PLANCACHE_FORMAT "rotor-plancache"
/* 2: the SLOW answers of the time-capped searches (issue 45) */
#define ROTOR_PLANCACHE_VERSION 2
/* the directory's size limit when none is given: 256 MiB */
#define ROTOR_PLANCACHE_DEFAULT_LIMIT ((int64_t)256 << 20)

/* What a capped question was answered with. */
typedef enum rotor_plancache_kind {
    ROTOR_PLANCACHE_POINT = 0, /* the fastest plan under cap: v[0] */
    ROTOR_PLANCACHE_NONE,      /* no plan fits under cap */
    ROTOR_PLANCACHE_TAIL,      /* the frontier's points under cap: v[0..n) (n may be 0) */
    ROTOR_PLANCACHE_SLOW       /* every plan under cap executes slower than tmax (n is 0) */
} rotor_plancache_kind;

typedef struct rotor_plancache_answer {
    rotor_plancache_kind kind;
    int64_t cap;
    double tmax;               /* SLOW's time, s; 0 for the others */
    int n;
    rotor_candidate *v;
} rotor_plancache_answer;

/* One shape's entry, as read or as the compile leaves it. */
typedef struct rotor_plancache_entry {
    char *key;
    bool has_first;          /* the first search below is known */
    bool first_truncated;    /* ... its frontier is cut at the ratio (rotor_frontier.truncated) */
    double first_tcut;       /* ... every point not in it executes slower than this */
    int nfirst;
    rotor_candidate *first;  /* ... by time ascending */
    int nanswers;
    rotor_plancache_answer *answers;
    bool dirty;              /* learned something since read: to be written */
} rotor_plancache_entry;

/* How a read went. */
typedef enum rotor_plancache_read {
    ROTOR_PLANCACHE_HIT = 0, /* the entry read, its key the one asked */
    ROTOR_PLANCACHE_MISS,    /* no file, or another key's (a hash collision) */
    ROTOR_PLANCACHE_DAMAGED  /* a file that does not read back: ignore and rewrite */
} rotor_plancache_read;

/* The key text of a shape (`shape`: the compiler's expression-and-extents
 * text) on chip (the chip its shape is costed on), with the solver and the
 * first search's time ratio (0: whole).  NULL when out of memory. */
char *rotor_plancache_key(const char *shape, const rotor_chip *chip, rotor_solver solver, double ratio);

/* The entry's file name under dir: DIR/HHHHHHHHHHHHHHHH.rpc (malloc'd; NULL:
 * out of memory); _ext with another extension (the hand-off memo's .rho). */
char *rotor_plancache_path(const char *dir, const char *key);
char *rotor_plancache_path_ext(const char *dir, const char *key, const char *ext);

/* The key's chip line (every field the costs read, "chip ...\n"; malloc'd,
 * NULL: out of memory): shared with the hand-off memo
 * (compile/handoffcache.c).  Names and checksums hash with FNV-1a
 * (base/hash.h). */
char *rotor_plancache_chip_text(const rotor_chip *chip);

/* dir's entry for key into *e, which gets its own copy of key whatever the
 * outcome (a miss or damage leaves it otherwise empty).  *how says which;
 * the status is an error only for out of memory. */
rotor_status rotor_plancache_load(const char *dir, const char *key, rotor_plancache_entry *e,
                                  rotor_plancache_read *how, rotor_error *err);

/* The entry as file text (malloc'd, *len bytes, NUL-terminated), and back:
 * decode checks the format, version, key, counts, every number and the
 * checksum; a key other than `key` is a MISS, anything else wrong DAMAGED. */
char *rotor_plancache_encode(const rotor_plancache_entry *e, size_t *len);
rotor_status rotor_plancache_decode(const char *text, size_t len, const char *key, rotor_plancache_entry *e,
                                    rotor_plancache_read *how, rotor_error *err);

/* Records the first search's frontier (copied) and its cut. */
rotor_status rotor_plancache_set_first(rotor_plancache_entry *e, const rotor_candidate *v, int n, bool truncated,
                                       double tcut, rotor_error *err);

/* The fastest plan under cap, when a recorded answer tells: 1 (*out set),
 * 0 (no plan fits), -1 (unknown).  A plan found under cap c with memory m is
 * the answer for every cap in [m, c] (the fastest of a set is the fastest of
 * any subset holding it), none under c for every cap up to c. */
int rotor_plancache_point(const rotor_plancache_entry *e, int64_t cap, rotor_candidate *out);
/* Records the search's answer under cap (found NULL: none fits). */
rotor_status rotor_plancache_note_point(rotor_plancache_entry *e, int64_t cap, const rotor_candidate *found,
                                        rotor_error *err);

/* Whether a recorded answer tells that every plan under cap executes
 * slower than tmax: a SLOW answer (c, t) with cap <= c and tmax <= t (every
 * plan under c is slower than t >= tmax, and the plans under cap are among
 * them).  The compile's time-capped searches (rotor_search_session_within)
 * record what they found so, which a warm compile then need not search. */
bool rotor_plancache_slow(const rotor_plancache_entry *e, int64_t cap, double tmax);
rotor_status rotor_plancache_note_slow(rotor_plancache_entry *e, int64_t cap, double tmax, rotor_error *err);

/* The frontier's points under cap, when a tail recorded under a cap at least
 * as large tells (the frontier under a cap is the whole frontier's points
 * under it): true, *v (malloc'd, NULL when *n is 0) and *n; false unknown
 * (or out of memory: then *v is NULL and *n -1). */
bool rotor_plancache_tail(const rotor_plancache_entry *e, int64_t cap, rotor_candidate **v, int *n);
rotor_status rotor_plancache_note_tail(rotor_plancache_entry *e, int64_t cap, const rotor_candidate *v, int n,
                                       rotor_error *err);

/* Writes e under dir (created if missing) through a temporary name renamed
 * into place.  Best effort: false when it could not write (the compile goes
 * on without).  The caller evicts after its writes (one directory listing
 * for all of them). */
bool rotor_plancache_store(const char *dir, const rotor_plancache_entry *e);
/* The same for any text: len bytes to path (under dir) through a temporary
 * name in dir, renamed into place; false when it could not. */
bool rotor_plancache_write(const char *dir, const char *path, const char *text, size_t len);

/* Removes the oldest entries of dir (*.rpc, *.rho and *.ren, by modification time, then name)
 * while their sizes add up to more than limit bytes (0:
 * ROTOR_PLANCACHE_DEFAULT_LIMIT); returns how many. */
int rotor_plancache_evict(const char *dir, int64_t limit);

void rotor_plancache_entry_free(rotor_plancache_entry *e);

#endif
