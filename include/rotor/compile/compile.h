/* rotor — whole-model compilation onto distributed SRAM (T10 §4.3.2).
 *
 * Every operator of a graph gets its Pareto frontier of (time, memory per
 * core) from the exact search, memoised by expression and extents so that
 * repeated layers are searched once.  While an operator waits it holds an
 * *idle* layout of its resident data (weights); just before it runs a setup
 * phase gathers its *active* plan's partitions over the links.  T10's
 * Algorithm 1 reconciles the memory: it starts from memory-minimal idle
 * layouts, gives each operator the active plan that fits in what is left
 * with the least execution + setup, then repeatedly buys setup time with
 * idle memory, keeping the best end-to-end time (docs/compile.md has the
 * decisions).
 *
 * After an error, rotor_compile leaves out zeroed: nothing to free. */
#ifndef ROTOR_COMPILE_H
#define ROTOR_COMPILE_H

#include <stdbool.h>
#include <stdint.h>

#include "rotor/base/chip.h"
#include "rotor/base/error.h"
#include "rotor/model/graph.h"
#include "rotor/compile/gticca.h"
#include "rotor/compile/segment.h"
#include "rotor/op/search.h"

/* One operator's frontier, shared by every operator of the same shape: the
points the compilation searched (docs/compile.md), each a point of the
whole frontier. */
typedef struct rotor_frontier {
    int n;
    rotor_candidate *v;    /* by time ascending, memory descending */
    bool truncated;        /* not the whole frontier: points past the compile's frontier
                              ratio were searched only where the walk needed them */
} rotor_frontier;

/* The decision for one operator. */
typedef struct rotor_op_schedule {
    int op;                 /* index in the graph */
    bool vendor;            /* no tensor expression: vector-rate fallback */
    int frontier;           /* index of the op's frontier in the result, -1 for vendor ops */
    int active;             /* index of the active plan in that frontier */
    int idle_base;          /* frontier index of the plan the idle layout refines */
    int64_t idle_split;     /* k: each core keeps 1/k of its active weight partition */
    int64_t idle_bytes;     /* per core, while idle (weights only) */
    int64_t active_bytes;   /* per core, while running (the active plan's memory) */
    int64_t live_bytes;     /* per core: other activations live while it runs */
    double setup_s;         /* gather weights and inputs into the active layout */
    int64_t setup_bytes;    /* ... the bytes one core receives for it */
    int64_t setup_rounds;   /* ... and its gather rounds (one link latency each) */
    int64_t setup_link_bytes; /* on a mesh: the bytes through the busiest link ... */
    int64_t setup_hops;       /* ... and the longest route (rotor_mesh_setup_s); 0 elsewhere */
    double exec_s;          /* the active plan's predicted time */
    /* exec_s split: compute + comm + reduction - hidden, hidden the shifts
     * run under compute (a plan with overlap, docs/cost-model.md "Overlap";
     * else 0) */
    double compute_s, comm_s, reduction_s, hidden_s;
    /* per expression tensor: 1 + the index of the operator whose output it
     * gathers straight from where that plan left it (the hand-off); 0:
     * none, so that a zeroed schedule has none (docs/compile.md) */
    int handoff[ROTOR_MAX_TENSORS];
    /* ... through this view of that output (unset: element for element) */
    rotor_view handoff_view[ROTOR_MAX_TENSORS];
    /* 1 + the index of the pipelined segment it is a stage of (0: none);
     * its setup_s and exec_s are then those of the unpipelined schedule,
     * and the segment's times replace them in the totals */
    int segment;
} rotor_op_schedule;

/* One step of Algorithm 1: the idle memory and the end-to-end time it gave
 * (INFINITY when some operator's active plan did not fit). */
typedef struct rotor_curve_point {
    int64_t idle_bytes;
    double total_s;
} rotor_curve_point;

/* The frontier cut by default (docs/compile.md, "Frontiers cut at a time
 * ratio"): plain contractions, and shapes with a compound dimension. */
#define ROTOR_COMPILE_FRONTIER_RATIO 2.0
#define ROTOR_COMPILE_FRONTIER_RATIO_COMPOUND 1.0

typedef struct rotor_compile_options {
    int threads;            /* search threads; 0: OpenMP's default */
    /* Search each frontier first only up to plans this many times slower
     * than the shape's fastest; the rest is searched when Algorithm 1 finds
     * nothing within it that fits.  0: the defaults below; negative: whole
     * frontiers from the start. */
    double frontier_ratio;
    /* Called (from one thread at a time) as each distinct shape's frontier
     * is searched: done of total.  NULL: none.  The library never prints;
     * the CLI draws a progress bar from this. */
    void (*progress)(void *ctx, int done, int total);
    void *progress_ctx;
    /* Every activation waits in the even layout between operators, as
     * before the hand-off (docs/compile.md, "Hand-off"): for comparison. */
    bool even_layout;
    /* The plan search (search.h): exact (zero), or fast, whose frontiers
     * are searched whole at once (docs/kapla.md). */
    rotor_solver solver;
    /* Inter-operator pipelining over core groups (segment.h, docs/kapla.md):
     * after Algorithm 1, run chains of operators as pipelined segments
     * where that is faster by the objective. */
    bool pipeline;
    rotor_pipeline_objective objective;
    int max_stages;         /* operators per segment at most; 0: 4 */
    int64_t max_micro;      /* micro-batches per segment at most; 0: 16 */
    /* GraphTurbo's sub-graph instances on core groups (gticca.h,
     * docs/graphturbo.md "On an ICCA chip"): after Algorithm 1, the
     * sub-graphs that run faster as instances on groups of cores, priced
     * into the result's gticca (the T10 schedule itself is unchanged). */
    bool graphturbo;
    /* Search every candidate segment's stages, without the lower bound that
     * skips those that cannot win (segment.c, "Pruning"): the same choice,
     * slower; for the test that shows it. */
    bool pipeline_no_prune;
    /* The persistent plan cache's directory (compile/plancache.h,
     * docs/compile.md "Plan cache"); NULL: none.  The library never picks a
     * default: the CLI does.  cache_limit: its size limit in bytes (0:
     * ROTOR_PLANCACHE_DEFAULT_LIMIT). */
    const char *cache_dir;
    int64_t cache_limit;
    /* Leave the cache's size limit to the caller, which evicts once after
     * its run of compiles (rotor_plancache_evict): a compile that wrote
     * scans the whole directory to evict, and GraphTurbo's instance
     * compiles (gticca.c), hundreds of them on one directory, made
     * DenseNet-121's first compile at batch 32 stat 196,116 files. */
    bool cache_evict_later;
    /* An in-memory plan store (planstore.h, docs/compile.md "Plan store")
     * shared by the compiles of one run, read before the disk and written
     * with it; NULL: none.  Owned by the caller, which may share it among
     * threads.  Works with or without cache_dir.  GraphTurbo's instance
     * compiles (gticca.c) use this one, or their own when NULL. */
    struct rotor_plan_store *plan_store;
    /* Jumps after T10's walk (compile.c, best_jump; docs/compile.md,
     * "Jumps"; `rotor compile --walk jumps`): where no move refines an idle
     * layout, the operator that would gain most takes its fastest plan as
     * its idle layout, and the walk goes on.  Never worse (the walk's best
     * point is kept); off by default until the documents' figures, measured
     * with T10's walk alone, are measured again with them. */
    bool walk_jumps;
    /* On a mesh, keep the walk's plans, chosen by their setups' bounds,
     * without the exchanges' refinement after it (compile.c, mesh_refine;
     * docs/mesh.md, "Setup"): the schedule the refinement starts from, for
     * comparisons. */
    bool mesh_bound_plans;
    /* Algorithm 1's walk searches one need at a time, as before its
     * searches were batched (compile.c, walk_more): the same schedule, for
     * the test that shows it. */
    bool serial_walk;
    /* The walk prices every setup afresh, with no per-operator memo of
     * hand-off parts, setup seconds and idle-layout splits (compile.c,
     * setup_memo): the same schedule, for the test that shows it. */
    bool walk_unmemoised;
    /* The searches made ahead between the walk's batches (compile.c,
     * "Searches ahead") run to the end of what is foreseen instead of
     * stopping when the walk is ready: the same schedule, and a count of
     * them that does not depend on timing, for the test that shows it. */
    bool ahead_wait;
    /* The searches' buffers (search.h, rotor_search_pool) shared by the
     * compiles of one run; NULL: the compile's own.  Owned by the caller,
     * which may share it among threads (its sets are borrowed under a
     * lock).  What a search finds does not depend on what the pool holds;
     * a pool's memo classes are never forgotten (past 32,766 new tensors
     * go without the memo: slower, never otherwise).
     * GraphTurbo's instance compiles (gticca.c) use their outer compile's:
     * each made and freed its own, hundreds of 3.6 MB scratch sets, each
     * faulted in afresh (docs/compile.md, "The search buffers too"). */
    rotor_search_pool *search_pool;
} rotor_compile_options;

/* The wall seconds of a compile's phases (issue 45, `--profile`), measured
 * always (a few clock reads per search and per hand-off priced):
 *  - search: the plan searches, distinct shapes and capped ones (the plan
 *    cache's reads included);
 *  - handoff: pricing a producer's layout into a consumer's (each pair of
 *    plans once: compile/handoffcache.c), and a mesh's routed setups;
 *  - reconcile: Algorithm 1's walk without the two above;
 *  - pipeline: the segments (options.pipeline), their searches included;
 *  - total: the whole call, so that the rest (liveness, the schedule) is
 *    total less the others. */
typedef struct rotor_compile_profile {
    double search_s, handoff_s, reconcile_s, pipeline_s, total_s;
} rotor_compile_profile;

typedef struct rotor_compile_result {
    int nops;
    rotor_op_schedule *ops;     /* in graph order */
    int nfrontiers;
    rotor_frontier *frontiers;  /* distinct operator shapes */
    int ncurve;
    rotor_curve_point *curve;   /* Algorithm 1's explored points, in order */
    double total_s;             /* sum of setup and exec over operators */
    /* its parts: total_s = setup + compute + comm + reduction + vendor -
     * hidden (comm counts every shift, hidden those under compute) */
    double setup_s, compute_s, comm_s, reduction_s, vendor_s, hidden_s;
    int64_t idle_bytes;         /* per core, every operator idle */
    int64_t peak_bytes;         /* per core, the largest idle + live + active */
    /* the frontier searches the compile needed (distinct shapes, then the
     * capped ones), whether run or answered by the plan cache: the same with
     * or without the cache, so that the table is */
    int searches;
    int cache_hits;             /* ... of them answered by the plan cache (searches run: the difference) */
    int cache_damaged;          /* plan cache entries that did not read back: ignored, rewritten (the CLI warns) */
    /* ... of the capped ones, answered by a search made ahead while the
     * walk priced setups (compile.c, "Searches ahead"): depends on timing,
     * unless options.ahead_wait; nothing else does */
    int searches_ahead;
    int jumps;                  /* with options.walk_jumps: the jumps the walk took (best_jump) */
    /* On a mesh: whether the walk's plans were chosen again by their
     * setups' exchanges (compile.c, mesh_refine; not with
     * options.mesh_bound_plans), how many it changed, and whether it
     * stopped at its budget of work. */
    bool mesh_refined;
    int mesh_moves;
    bool mesh_stopped;
    rotor_solver solver;        /* the solver that found every plan */
    /* With options.pipeline: the segments chosen, by first operator, and
     * the same schedule's total without them.  total_s counts each segment's
     * total_s in place of its operators' setup and exec; setup_s its setup,
     * pipeline_s its runs. */
    int nsegments;
    rotor_segment *segments;
    double unpipelined_s, pipeline_s;
    rotor_pipeline_objective objective;
    int pipeline_searches;      /* plan searches for the stages (distinct shapes and groups) */
    rotor_gticca_result gticca; /* with options.graphturbo */
    rotor_compile_profile profile; /* where the compile's wall time went (--profile) */
    /* With options.pipeline: the operators no segment may hold, those over
     * quantized integers costed at another element size or rate than the
     * chip's (rotor_graph_priced_apart; segment.c: stage plans are priced
     * at the chip's) */
    int pipeline_kept_out;
} rotor_compile_result;

/* Compiles g for chip.  ROTOR_ERR_NOFIT when no assignment fits, with the
 * operator whose active plan cannot fit and the shortfall in bytes named. */
rotor_status rotor_compile(const rotor_graph *g, const rotor_chip *chip,
                           const rotor_compile_options *opt, rotor_compile_result *out,
                           rotor_error *err);

void rotor_compile_result_free(rotor_compile_result *r);

/* Whether op o's tensor t takes its value where the producing operator's
 * plan left it (the hand-off, docs/compile.md): an activation produced by
 * an expression operator, when the graph says which output element each
 * element of the tensor is.  *view gets the map onto the producer's output
 * coordinates (rotor_handoff_fits): unset when the two have the same
 * dimensions and extents; else the tensor's own view composed with the
 * reshape between the value and the producer's output, or, without a
 * view, the reshape that splits the output's dimensions into the tensor's
 * (src/compile/handoffview.c).  Otherwise the value waits in the even
 * layout.  The compiler and rotor run share it. */
bool rotor_compile_handoff_view(const rotor_graph *g, int o, int t, rotor_view *view);

/* The same without the view. */
bool rotor_compile_handoff_applies(const rotor_graph *g, int o, int t);

/* Setup time of `bytes` received per core in `rounds` gather rounds: bytes /
 * beta + rounds * alpha (docs/cost-model.md, "Setup"), the shift formula
 * (rotor_cost_shift_s). */
double rotor_compile_setup_s(const rotor_chip *chip, int64_t bytes, int64_t rounds);

/* On a mesh, the setups r reports (each its exchange's schedule,
 * rotor_mesh_exchange) beside what their busiest links bound them to
 * (rotor_mesh_setup_s of each operator's setup_link_bytes, setup_rounds and
 * setup_hops), both summed over the operators outside pipelined segments:
 * the plans are chosen by the bound, and a greedy exchange can take several
 * times it (docs/mesh.md, "Setup").  *bound_s 0 elsewhere. */
void rotor_compile_mesh_setups(const rotor_chip *chip, const rotor_compile_result *r, double *setup_s,
                               double *bound_s);
/* Whether an operator's setup is in those sums: not a vendor operator's,
 * not a pipelined segment's stage's, and some bytes moved.  The program's
 * writer and its reader (totals.setup_bound_s) count by this one rule. */
static inline bool rotor_compile_setup_counted(bool vendor, int segment, int64_t setup_bytes) {
    return !vendor && !segment && setup_bytes > 0;
}
/* The sentence saying so, into buf (size bytes), where the schedules take
 * more than a quarter longer than their bound (a decision: on ipu-mk2-mesh
 * the zoo's models take 1.31x to 3.80x, on wormhole-n150's 8x9 within it);
 * false (buf "") elsewhere.  `rotor compile` prints it under its totals,
 * `rotor report` in its summary. */
bool rotor_compile_mesh_setup_note(const rotor_chip *chip, const rotor_compile_result *r, char *buf, size_t size);

/* Liveness (docs/compile.md): activations live from their producer to their
 * last consumer (graph inputs from the start, outputs to the end), stored
 * evenly, ceil(elements * elem / cores) bytes per core.  For every operator,
 * live_all gets the bytes live while it runs and live_other the same less its
 * own inputs and outputs.  Either may be NULL. */
rotor_status rotor_compile_liveness(const rotor_graph *g, int64_t elem, int64_t cores,
                                    int64_t *live_other, int64_t *live_all, rotor_error *err);

#endif
