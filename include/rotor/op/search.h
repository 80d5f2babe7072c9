/* rotor — exact search for the fastest plan and the Pareto frontier of
 * (time, memory per core) (T10 §4.3.1).
 *
 * The search considers every valid plan of cost-model-v1.md: every F_op with
 * product <= N (not only divisors: the operator is padded), every temporal
 * factor that divides its sharing degree and respects alignment, and every
 * loop order (each factor choice is costed under its optimal order, which
 * rotor_plan_best_order finds exactly).  It never lists the space: it walks
 * F_op, then the steps S_a, then each tensor's f_t, and prunes with the cost
 * model's lower bounds (branch and bound).  Results do not depend on the
 * number of threads: ties are broken by (time, memory, plan order).
 *
 * After an error, rotor_search leaves out without allocations (its stats may be filled):
 * rotor_search_result_free is safe but not needed. */
#ifndef ROTOR_SEARCH_H
#define ROTOR_SEARCH_H

#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "rotor/op/cost.h"
#include "rotor/op/plan.h"

typedef struct rotor_constraints {
    int64_t min_cores;   /* T10's parallelism constraint: prod F_op >= this (0: none) */
    double max_padding;  /* prod P_a / prod E_a <= this (0: none), e.g. 1.25 */
    int64_t memory_cap;  /* bytes per core a plan may use (0: the chip's SRAM) */
} rotor_constraints;

/* Parses "min_cores=1024,max_padding=1.2,memory_cap=400000" (any subset). */
rotor_status rotor_constraints_parse(const char *text, rotor_constraints *out, rotor_error *err);

/* How the frontier is found.  Both are exact and give the same frontier
 * (docs/cost-model.md, "Pareto frontier"); they differ only in speed. */
typedef enum rotor_pareto_method {
    ROTOR_PARETO_AUTO = 0,     /* single pass unless a tensor has a compound dimension */
    ROTOR_PARETO_EPSILON,      /* one search per point, each capped below the last */
    ROTOR_PARETO_SINGLE_PASS   /* one search pruning by dominance against a growing front */
} rotor_pareto_method;

/* Which solver answers rotor_search.  EXACT is the branch and bound above;
 * FAST is KAPLA's greedy stacking and caching (KAPLA §IV-C; kapla.c,
 * docs/kapla.md): valid plans under the same cost model, in far less time,
 * with no guarantee of optimality (its measured gap: docs/kapla.md).  Its
 * frontier is the non-dominated set of the plans it costed: each point is
 * valid, but may be dominated by a plan it did not find. */
typedef enum rotor_solver {
    ROTOR_SOLVER_EXACT = 0,
    ROTOR_SOLVER_FAST,
    /* KAPLA's baselines (KAPLA §V; kaplabase.c, docs/kapla.md "Baselines"):
     * R, random sampling of the plan space at KAPLA's rate of 0.1 per level,
     * and M, AutoTVM-style annealing guided by a learned surrogate.  Fastest
     * plan only (no frontier); seeded by ROTOR_BASELINE_SEED. */
    ROTOR_SOLVER_RANDOM,
    ROTOR_SOLVER_ML
} rotor_solver;

#define ROTOR_BASELINE_SEED 44 /* the baselines' splitmix64 seed */

/* "exact", "fast", "random" or "ml". */
const char *rotor_solver_name(rotor_solver s);
/* The solver called name; false when there is none. */
bool rotor_solver_find(const char *name, rotor_solver *out);

/* The solvers' version: raise it with any change to which plan or frontier
 * they return (ties, the frontier's points, the fast solver's result), so
 * that the persistent plan cache (compile/plancache.h) keyed by it misses. */
#define ROTOR_SEARCH_VERSION 2

/* The per-search-thread buffers of exact searches (workers, the
 * knapsack's scratch with its tensor-options memo: about 5 MB per thread),
 * shared by every search and session given it, one search at a time per
 * set, so that a compile allocates and faults them in once rather than per
 * session.  Thread-safe (searches in parallel each take their own set).  A
 * set handed to another search is reset as a fresh one: no answer depends
 * on the pool.  Free it after every session using it is closed. */
typedef struct rotor_search_pool rotor_search_pool;

rotor_search_pool *rotor_search_pool_new(void); /* NULL: out of memory */
void rotor_search_pool_free(rotor_search_pool *p);

typedef struct rotor_search_options {
    const rotor_cost_model *model; /* NULL: the default model */
    rotor_solver solver;           /* zero: exact */
    rotor_constraints constraints;
    bool pareto;                   /* also return the frontier */
    rotor_pareto_method pareto_method;
    /* With pareto: keep only frontier points at most this many times slower
     * than the fastest plan (0: the whole frontier).  The points kept are
     * exactly the whole frontier's points below that time (the fastest plan
     * is found first, then every search also prunes by the time cap). */
    double pareto_time_ratio;
    int threads;                   /* 0: OpenMP's default (the fast solver runs on one) */
    /* ROTOR_SOLVER_RANDOM's probability per level (0: KAPLA's 0.1 for the
     * multi-node chip; KAPLA's edge device needs 0.85) */
    double baseline_rate;
    /* When set, called as each search's F_op vectors are done (its exact
     * pass, done of total); a Pareto search of a convolution runs several
     * searches, each counting from 0.  Calls come one at a time, from any
     * thread; the CLI draws a progress bar from them.  The result does not
     * depend on it. */
    void (*progress)(void *ctx, int done, int total);
    void *progress_ctx;
    rotor_search_pool *pool; /* NULL: each search or session its own buffers */
} rotor_search_options;

typedef struct rotor_candidate {
    rotor_plan plan;
    rotor_plan_info info;
    rotor_cost cost;
} rotor_candidate;

typedef struct rotor_search_stats {
    int64_t fops;            /* F_op vectors enumerated */
    int64_t fops_searched;   /* ... whose bounds survived the first pass */
    int64_t step_vectors;    /* (F_op, S) pairs examined */
    int64_t steps_pruned;    /* ... cut by a time, memory or padding bound */
    int64_t plans;           /* complete plans costed */
    int64_t nodes_pruned;    /* partial f_t assignments cut by a bound */
    int threads;
    double wall_seconds;
} rotor_search_stats;

typedef struct rotor_search_result {
    rotor_candidate best;       /* fastest; ties: least memory, then plan order */
    rotor_candidate *pareto;    /* with options.pareto: by time ascending */
    int npareto;
    rotor_search_stats stats;
} rotor_search_result;

/* Finds the fastest valid plan (and the frontier).  No valid plan:
 * ROTOR_ERR_NOFIT with a message saying why.  Free the result with
 * rotor_search_result_free. */
rotor_status rotor_search(const rotor_expr *e, const rotor_chip *chip,
                          const rotor_search_options *opt, rotor_search_result *out,
                          rotor_error *err);

void rotor_search_result_free(rotor_search_result *r);

/* A session answers many capped searches of one operator, each exactly as
 * rotor_search with that memory_cap would (same plan, same ties), sharing
 * what one search learns that stays true under smaller caps (floors, and
 * plans costed so far as seeds): the compiler's walk down a frontier
 * (docs/compile.md).  e and chip must outlive the session.  opt as for
 * rotor_search, without pareto; its memory_cap (or the SRAM) bounds every
 * cap.  Exact solver only.  Not for use by two threads at once. */
typedef struct rotor_search_session rotor_search_session;

rotor_status rotor_search_session_open(const rotor_expr *e, const rotor_chip *chip,
                                       const rotor_search_options *opt, rotor_search_session **out,
                                       rotor_error *err);

/* The fastest plan with memory <= cap (ties: least memory, then plan
 * order; cap <= 0: the session's own cap) with `threads` search threads (0:
 * the options'); ROTOR_ERR_NOFIT when none fits.  stats may be NULL. */
rotor_status rotor_search_session_best(rotor_search_session *s, int64_t cap, int threads,
                                       rotor_candidate *best, rotor_search_stats *stats,
                                       rotor_error *err);

/* The same, for a caller that wants the plan only when it runs in at most
 * time_cap seconds: that plan when it does (exactly the one above),
 * ROTOR_ERR_NOFIT when every plan under the cap is slower than time_cap or
 * none fits.  Plans slower than time_cap prune from the start, so the
 * answer costs far less when it is "none" (INFINITY: as above). */
rotor_status rotor_search_session_within(rotor_search_session *s, int64_t cap, double time_cap, int threads,
                                         rotor_candidate *best, rotor_search_stats *stats, rotor_error *err);

/* The time cap those searches read time_cap as: itself, or INFINITY when
 * it is not positive.  A plan is wanted when its time is at most this. */
static inline double rotor_search_time_cap(double time_cap) { return time_cap > 0 ? time_cap : INFINITY; }

/* rotor_search_session_within given up as soon as *stop is true (read
 * between F_op vectors, from any thread): *stopped then says so, and
 * *best and the status are not an answer.  A search given up leaves the
 * session as true as a whole one: what it keeps holds under any cap (the
 * floors of the F_op it reached, the plans it costed).  A compile searches
 * ahead of its walk with it (compile.c, "Searches ahead"). */
rotor_status rotor_search_session_until(rotor_search_session *s, int64_t cap, double time_cap, int threads,
                                        const _Atomic bool *stop, bool *stopped, rotor_candidate *best,
                                        rotor_search_stats *stats, rotor_error *err);

void rotor_search_session_close(rotor_search_session *s);

/* (time, memory, plan order): negative when a is the better candidate. */
int rotor_candidate_compare(const rotor_expr *e, const rotor_candidate *a,
                            const rotor_candidate *b);

#endif
