/* compileint.h — the compiler's state, private to the compile stage: the
 * whole-model compilation (compile.c) and the inter-operator pipelining over
 * core groups that refines its result (segment.c) share it. */
#ifndef ROTOR_COMPILE_COMPILEINT_H
#define ROTOR_COMPILE_COMPILEINT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "compile/handoffcache.h"
#include "rotor/compile/compile.h"
#include "rotor/compile/plancache.h"

/* An expression tensor's role in the schedule. */
enum { T_OUTPUT, T_RESIDENT, T_ACTIVATION };

typedef struct op_state {
    int frontier;              /* -1: vendor */
    int kind[ROTOR_MAX_TENSORS];
    int64_t even[ROTOR_MAX_TENSORS]; /* even share per core of each tensor */
    int src[ROTOR_MAX_TENSORS]; /* the planned producer it gathers from (hand-off), or -1 */
    int64_t elem;              /* bytes per element of its tensors (opelem.h: e, or its own) */
    rotor_view view[ROTOR_MAX_TENSORS]; /* ... and through which view of its output */
    int64_t live;              /* other activations live while it runs */
    int64_t vendor_bytes;      /* vendor op: memory while running */
    int64_t vendor_idle;       /* vendor op: its resident data, even layout */
    double vendor_s;
    /* current choice */
    int active;                /* frontier index, -1: does not fit */
    int idle_base;
    int64_t idle_k;
    int64_t idle_bytes;
} op_state;

/* At most SLOW_MAX facts per frontier "every plan under cap[k] bytes is
 * slower than t[k]" (compile.c, frontier_learn); one more replaces the
 * oldest: a fact forgotten costs a search, never a plan. */
#define SLOW_MAX 4
typedef struct slow_known {
    int n, next;
    int64_t cap[SLOW_MAX];
    double t[SLOW_MAX];
} slow_known;

/* A frontier's next capped search, made ahead (compile.c, "Searches
 * ahead"): under cap, wanted up to time t (INFINITY: always), its
 * answer st (ROTOR_OK or ROTOR_ERR_NOFIT) and point.  last_t: the time of
 * the walk's last need of the frontier (INFINITY: none yet). */
typedef struct ahead_slot {
    bool have;
    int used; /* the walk's searches it answered (this frontier's own: no race) */
    int64_t cap;
    double t, last_t;
    rotor_status st;
    rotor_candidate found;
} ahead_slot;

typedef struct compiler {
    const rotor_graph *g;
    const rotor_chip *chip;
    int64_t cores, sram, elem;
    rotor_solver solver;
    op_state *st;
    rotor_frontier *fr;
    int nfr;
    char **keys;
    int *fr_op;        /* per frontier: the first operator of its shape */
    rotor_chip *fchip; /* per frontier: the chip its shape is costed on (opelem.h) */
    /* What is known of each frontier beyond its points (frontier_pick):
     * cov[i][j] is the largest cap under which point j is known to be the
     * fastest plan of all, none_upto[i] the largest cap known to admit no
     * plan (-1: none known). */
    int64_t **cov;
    int64_t *none_upto;
    /* tcut[i]: every point of frontier i not found yet executes slower than
     * this (the time ratio of its first search; INFINITY once whole) */
    double *tcut;
    /* slow[i]: what frontier i's time-capped searches found (frontier_learn):
     * every plan under slow[i].cap[k] bytes executes slower than slow[i].t[k] */
    struct slow_known *slow;
    rotor_search_session **sess; /* per frontier, opened at its first capped search */
    ahead_slot *ahead;           /* per frontier (compile.c, "Searches ahead"); NULL: none */
    rotor_search_pool *spool;    /* the searches' per-thread buffers, shared by them all */
    bool spool_own;              /* made by this compile (no rotor_compile_options.search_pool) */
    /* the plan cache (options.cache_dir; NULL: none): per frontier, its
     * entry, read before the first search and written after the walk */
    const char *cache_dir;
    int64_t cache_limit;
    bool cache_evict_later; /* options.cache_evict_later */
    rotor_plancache_entry *pce;
    struct rotor_plan_store *store; /* options.plan_store: read before the disk, written with it */
    int cache_hits, cache_damaged;
    handoff_cache *hc;  /* NULL: every activation in the even layout (options.even_layout) */
    double search_s;    /* wall seconds in plan searches so far (the profile) */
    rotor_status hst;   /* the first hand-off failure (setup costs are INFINITY after it) */
    rotor_error herr;
    /* The walk's memo of hand-off parts of setups (compile.c, handoff_memo;
     * issue 45), per operator, and per frontier a count of the changes to
     * its points (an inserted point shifts the indices the memo holds).
     * NULL outside the walk. */
    struct setup_memo *memo;
    int *fr_gen;
    /* GraphTurbo's instance compiles (gticca.c), collected before the walk
     * to run beside it; `beside`: the walk runs in their team, its batches'
     * searches as tasks (compile.c, walk_beside) */
    struct gticca_pre *gt;
    bool beside;
    /* The searches ahead (compile.c, "Searches ahead"): per frontier its
     * claim, the next frontier a search ahead looks at, whether a chain of
     * them runs, whether the walk is done, whether the search ahead running
     * is to give up (the walk waits for its frontier, or is done), and
     * whether the walk runs in their team (walk_ahead). */
    _Atomic int *ahead_claim;
    _Atomic int ahead_next;
    _Atomic bool ahead_live, ahead_stop, ahead_cancel;
    bool ahead_team;
    bool ahead_wait; /* options.ahead_wait */
} compiler;

/* Setup of operator o (state s) into frontier plan j from idle layout
 * (base, k): the bytes the busiest core receives and its gather rounds;
 * *bytes is -1 after a hand-off failure (cc->hst set).  Hand-offs follow
 * s->src. */
void compile_setup_need(const compiler *cc, const op_state *s, const rotor_expr *e, const rotor_frontier *f, int j,
                        int base, int64_t k, int64_t *bytes, int64_t *nrounds);
/* The same, and on a mesh what its price reads (rotor_mesh_setup_s): the
 * bytes through the busiest link and the longest route. */
void compile_setup_mesh(const compiler *cc, const op_state *s, const rotor_expr *e, const rotor_frontier *f, int j,
                        int base, int64_t k, int64_t *bytes, int64_t *nrounds, int64_t *link_bytes, int64_t *hops);

/* Inter-operator pipelining (segment.c, docs/kapla.md): chooses segments
 * over cc's schedule `out` (filled) and records them in out; the check,
 * run before compiling, refuses chips it does not model. */
rotor_status compile_segments_check(const rotor_chip *chip, rotor_error *err);
rotor_status compile_segments(compiler *cc, const rotor_compile_options *opt, rotor_compile_result *out,
                              rotor_error *err);

/* Hand-offs lost to core groups (segment.c): what operators after
 * first..last pay when those take their outputs from the even layout
 * (gone: scratch, all false), and operator o's setup with every hand-off
 * from an operator marked in gone lost.  GraphTurbo's instances on core
 * groups (gticca.c, options.graphturbo) run after Algorithm 1 as segments do. */
double compile_handoffs_lost(compiler *cc, const rotor_compile_result *base, int first, int last, bool *gone);
double compile_setup_lost(const compiler *cc, int o, const bool *gone, int64_t *bytes, int64_t *rounds);
rotor_status compile_gticca_check(const rotor_chip *chip, rotor_error *err);
rotor_status compile_gticca(compiler *cc, const rotor_compile_options *opt, rotor_compile_result *out,
                            rotor_error *err);
/* GraphTurbo's instance compiles beside the walk: collected after prepare
 * (cc->gt, freed by compile_gticca_free); the team the walk and they share
 * (1: run them after the walk); their tasks started, from a task inside
 * that team.  compile_gticca takes their results. */
rotor_status compile_gticca_begin(compiler *cc, const rotor_compile_options *opt, rotor_error *err);
int compile_gticca_team(const compiler *cc, int threads);
void compile_gticca_spawn(compiler *cc, int team);
void compile_gticca_free(struct gticca_pre *p);
/* Whether instance compiles ran for cc (they may have written the plan
 * cache, and leave its size limit to cc's own cache_store). */
bool compile_gticca_ran(const compiler *cc);

#endif
