/* rotor — GraphTurbo's graph scheduler (GraphTurbo §3): sub-graphs grouped
 * by their splitting information, split into instances that keep their
 * intermediates in the cores' local buffers (LB), ordered, bound to cores,
 * and given the buffer scope (LB, GB or DDR) of each output (docs/graphturbo.md).
 *
 *   rotor_gt_input_range  the range of an operator's input a range of its
 *                       output needs, halos included
 *   rotor_gt_analyse    Algorithm 1 (SplitInfo) and Eq. 1 (BestSplit) for a
 *                       set of operators
 *   rotor_gt_schedule   Algorithm 2 (straight, diamond and branch merges),
 *                       §3.3 instances in the BFS and the Algorithm 3 order,
 *                       §3.4 Algorithm 4 (core binding, buffer scopes) and
 *                       §4.3 longest-liveness spilling
 *
 * The pass reads only the graph and a few numbers of the chip (the limits),
 * so it lives in the model stage; the compile stage prices its schedule,
 * and lends it the price that judges §3.3's two orders and the GB
 * capacity's builds (limits.price). */
#ifndef ROTOR_GRAPHTURBO_H
#define ROTOR_GRAPHTURBO_H

#include <stdbool.h>
#include <stdint.h>

#include "rotor/base/error.h"
#include "rotor/model/graph.h"

/* ---- ranges ------------------------------------------------------------------ */

/* The range [lo, hi) of each axis of input k of operator op that the range
 * [olo, ohi) of its output needs: a window widens it by its halo, a stride
 * scales it, a padding view shifts it (lo may be negative, hi past the
 * extent: the rows a padded window reads as zeros), and an axis the output
 * does not carry (a reduced one) is whole.  Tensor expressions are read
 * through their element views and merged dimensions; vendor ops follow a
 * table by type; anything else needs the whole input (docs/graphturbo.md,
 * "Ranges"). */
void rotor_gt_input_range(const rotor_graph *g, int op, int k, const int64_t *olo, const int64_t *ohi, int64_t *lo,
                          int64_t *hi);

/* An operator's FLOPs on the matrix units (a tensor contraction's own) and
 * on the vector units (everything else: fused epilogues, element-wise and
 * reduction expressions, vendor ops). */
void rotor_gt_op_flops(const rotor_op *op, double *mm, double *vec);

/* What operators ops[0..n) compute and read, once each: their matrix and
 * vector FLOPs (rotor_gt_op_flops), of the matrix FLOPs those of
 * contractions of 8-bit integers (*mm8, rotor_op_elem_of's int8, which run
 * at the int8 rate; mm8 may be NULL), and the bytes of the weights they
 * read, a weight two of them read counted once, a gather's by its rows
 * (rotor_op_read_elements).  The one owner for the split's cost and the
 * time model (compile/dsa.c). */
void rotor_gt_ops_work(const rotor_graph *g, const int *ops, int n, double *mm, double *mm8, double *vec,
                       double *weights);

/* The matrix units' seconds for mm FLOPs of which mm8 are int8 ones, at
 * mm_rate and mm8_rate (0: mm_rate): the one rule of the split's cost and
 * the time model (compile/dsa.c). */
double rotor_gt_mm_seconds(double mm, double mm8, double mm_rate, double mm8_rate);

/* Whether bytes wait in a GB of gb_bytes between their uses: when they fit
 * half of it, the other half left to what runs meanwhile (docs/graphturbo.md,
 * "Cost"; a decision, the paper gives no rule).  Boundary values, spills and
 * weights all follow it, in the split's cost and in the time model. */
static inline bool rotor_gt_gb_holds(double bytes, int64_t gb_bytes) { return 2 * bytes <= (double)gb_bytes; }

/* Whether time a is faster than time b beyond rounding: two schedules
 * that run alike sum their times in another order (1 - 6e-15 apart on
 * ViT-Large), so a relative 1e-9 is a tie.  The one comparison the order's
 * choice (gtorder.c), the loops' choice and the steps' gains use
 * (rotor_dsa_faster). */
static inline bool rotor_gt_faster(double a, double b) { return a < b * (1 - 1e-9); }

/* ---- Algorithm 1 and Eq. 1 -------------------------------------------------- */

struct rotor_gt_schedule; /* below */

typedef struct rotor_gt_limits {
    int64_t lb_bytes;        /* the LB one instance may fill: every core of the group */
    int64_t gb_bytes;        /* the cluster's GB (0: none, as the IPU) */
    int64_t cores;           /* cores one instance binds (Algorithm 4) */
    /* The cluster's rates (FLOP/s, bytes/s) for the profitability of a
     * split and of a merge, rotor's reading of §3.1's "simple cost model
     * to prevent excessive recomputations that offset the benefits brought
     * by fusion" (the paper gives none; docs/graphturbo.md, "Cost"): a
     * split is taken only if its sub-graph costs no more than running it
     * whole, a merge only if the merged sub-graph costs no more than the
     * two apart.  mm_rate 0: no costs, every fitting split and every merge
     * the rules allow is taken (the algorithms as the paper states them). */
    double mm_rate, vec_rate;
    double gb_bw, ddr_bw;
    /* Where a sub-graph's weights wait between its loads (docs/graphturbo.md,
     * "The GB's capacity"): in the GB when they fit half of it.  gb_capacity
     * false: the output blocks may fill the whole GB beside them (the rules
     * until 2026-11-30, kept to measure the over-fill).  true (what
     * rotor_dsa_cluster_of sets): in grouped schedules §4.3's scope pass
     * reserves them over their sub-graph's span of the order and revokes
     * what does not fit beside the weights already reserved, the blocks
     * going on to DDR where the rest would not fit, and the schedule is
     * built again with the revoked operators' weights streamed (w_stream,
     * per operator; rotor_gt_schedule_build owns it: callers leave it
     * NULL); the per-operator steps count each kernel's (count_weights). */
    bool gb_capacity;
    /* The GB a sub-graph's weights may wait in by the half-GB rule (0: the
     * GB, gb_bytes).  The per-layer baseline writes every output to DDR
     * (gb_bytes 0) but its kernels' weights wait in the GB as its time
     * prices them (compile/dsa.c): its splits are chosen on that too
     * (until 2026-12-02 they were chosen as if the weights came from DDR
     * every load, and timed as if they waited in the GB). */
    int64_t w_gb_bytes;
    /* The per-operator steps under gb_capacity (set by rotor_gt_schedule_build,
     * callers leave it false): each kernel's weights that wait in the GB (the
     * half-GB rule, one kernel at a time) take their room there while it
     * runs, the output blocks around them going on to DDR when the rest
     * would not fit; nothing is revoked. */
    bool count_weights;
    const uint8_t *w_stream;
    /* How the caller times a schedule, to keep the better of §3.3's two
     * instance orders (gtorder.c) and the fastest of the GB capacity's
     * builds (gtgroup.c): the seconds of *s, its scopes and spills placed
     * (rotor_dsa_limits sets compile/dsa.c's cost model; price_ctx is the
     * caller's, read only, and must outlive the build).  NULL: the order
     * that spills fewer bytes to DDR is kept, and the last build. */
    rotor_status (*price)(const rotor_graph *g, const struct rotor_gt_schedule *s, const void *ctx,
                          double *seconds, rotor_error *err);
    const void *price_ctx;
    /* The matrix FLOP/s of a contraction of 8-bit integers (the chip's
     * int8_tops' share; 0: mm_rate), in the costs above as in the time
     * (compile/dsa.c). */
    double mm8_rate;
    /* A grouped schedule whose every sub-graph runs as one instance (in
     * chunks where it does not fit the LB): Algorithm 2's groups and
     * §3.3's order without the instance splits, the alternative a caller
     * weighs them against (compile/dsa.c, rotor_dsa_schedule). */
    bool whole;
} rotor_gt_limits;

/* A split of a sub-graph's output into instances.  Algorithm 1 splits one
 * axis d by f_d; when no single axis gives an instance that fits the LB,
 * rotor splits the Eq. 1 axis whole and applies Algorithm 1 again inside
 * it (docs/graphturbo.md, "Nested splits": one image of ResNet-50's first
 * stage is 1.6 MB, three times the STCP920 cluster's L1).  factor[a] is
 * the split of output axis a (1: not split); the instances are their
 * product. */
typedef struct rotor_gt_split {
    int64_t factor[ROTOR_GRAPH_MAX_RANK];
    int64_t instances;
    int axis;                /* d of the last Eq. 1 tuple; -1: runs whole */
    int nsplit;              /* n_d: operators the split reaches */
    int64_t peak;            /* footprint of one instance, bytes */
    double recompute;        /* FLOPs computed again, fraction of the sub-graph's */
    double extra_flops;      /* ... the same in FLOPs, over all instances */
    int64_t kept_bytes;      /* intermediates kept on core: the sub-graph's values but its output */
    double cost;             /* seconds by the cost model of rotor_gt_limits (0 without rates) */
    /* An instance larger than the LB (fits false) sends what does not fit of
     * its intermediates out and reads it back: these bytes (out and back)
     * per instance, through the GB for the intermediates that fit half of
     * it, else DDR (in proportion: the overflow's share of each). */
    double spill_gb, spill_ddr;
    /* How often one instance streams its weights and reads its inputs: 1
     * and 1 when it fits the LB.  Larger, it runs in chunks, and the
     * cheaper of two loop orders is taken (docs/graphturbo.md, "Cost"):
     * rows outside (ceil(peak / LB) chunks, each streaming the weights), or,
     * for a single operator, weights outside (tiles of half the LB, each
     * reading the inputs again). */
    double w_loads, in_loads;
    bool fits;               /* peak <= the LB */
    /* The weights wait in the GB between loads (brought from DDR once): the
     * cost takes it when they fit half the GB; §4.3's scope pass (gtscope.c) revokes it where
     * the sub-graphs whose instances interleave in the order would hold
     * more than the GB (docs/graphturbo.md, "The GB's capacity"). */
    bool w_resident;
} rotor_gt_split;

/* Algorithm 1 and Eq. 1 for the operators ops[0..n) (ascending indices,
 * i.e. topological order) producing value out: the whole footprint in
 * *peak (activations live at once: §2.2 streams weights through a small
 * fixed LB buffer, so they are not in it) and the split in *best: the
 * lexicographic maximum of (n_d, -f_d, -d) over the admissible tuples,
 * nested when needed.  best->fits false: even the finest admissible split
 * does not fit (the rules then treat its factor as infinite). */
void rotor_gt_analyse(const rotor_graph *g, const int *ops, int n, int out, const rotor_gt_limits *lim,
                      int64_t *peak, rotor_gt_split *best);
/* The same, with *whole the sub-graph run whole (one instance, in chunks
 * when larger than the LB): what the per-operator kernels run. */
void rotor_gt_analyse_whole(const rotor_graph *g, const int *ops, int n, int out, const rotor_gt_limits *lim,
                            rotor_gt_split *whole);

/* ---- the schedule ---------------------------------------------------------------- */

typedef enum rotor_gt_scope { ROTOR_GT_LB = 0, ROTOR_GT_GB, ROTOR_GT_DDR } rotor_gt_scope;
const char *rotor_gt_scope_name(rotor_gt_scope s); /* "LB", "GB", "DDR" */

typedef enum rotor_gt_order_kind { ROTOR_GT_BFS = 0, ROTOR_GT_DFS } rotor_gt_order_kind;
const char *rotor_gt_order_name(rotor_gt_order_kind k); /* "bfs", "dfs" */

typedef struct rotor_gt_subgraph {
    int first, count;        /* its operators: members[first .. first + count), ascending */
    int output;              /* the one value it gives the rest of the graph */
    int64_t peak;            /* footprint of the whole sub-graph */
    rotor_gt_split best;     /* BestSplit; factor 1 when it fits whole */
    rotor_gt_scope scope;    /* where its output lives (Algorithm 4, then §4.3) */
    int64_t bind[ROTOR_GRAPH_MAX_RANK]; /* cores along each output axis (Algorithm 4) */
    int first_input, ninputs;           /* its rotor_gt_input entries in the schedule's inputs */
    int64_t in_scope[3];                /* instances whose output went to the LB, GB, DDR */
    bool w_revoked;          /* the cost kept its weights in the GB; the scope pass found no room */
} rotor_gt_subgraph;

/* What the schedule is for: GraphTurbo, or the per-operator kernels of the
 * Fig. 15 ablation's first two steps (every operator one instance, its
 * output kept in the GB, or in the LB, as long as they hold it). */
typedef enum rotor_gt_mode {
    ROTOR_GT_GROUPED = 0,    /* Algorithm 2, instances, order, Algorithm 4, §4.3 */
    ROTOR_GT_PER_OP_GB,      /* one sub-graph per operator; outputs to the GB, else DDR */
    ROTOR_GT_PER_OP_LB       /* one sub-graph per operator; outputs to the LB, else GB, else DDR */
} rotor_gt_mode;

/* One activation a sub-graph reads from outside: the bytes of it one
 * instance reads (halos included; the largest over its instances). */
typedef struct rotor_gt_input {
    int value;
    int64_t bytes;
} rotor_gt_input;

typedef struct rotor_gt_instance {
    int sg;                  /* its sub-graph */
    int64_t index;           /* 0 .. instances of that sub-graph - 1 */
} rotor_gt_instance;

typedef struct rotor_gt_schedule {
    rotor_gt_mode mode;
    int nops;                /* operators of the graph */
    int *members;            /* operator indices, grouped by sub-graph */
    int *sg_of;              /* operator -> its sub-graph */
    int nsg;
    rotor_gt_subgraph *sg;   /* in topological order */
    int ninputs;
    rotor_gt_input *inputs;  /* every sub-graph's, grouped by sub-graph */
    int64_t ninst;
    rotor_gt_instance *order; /* the chosen order of every instance */
    rotor_gt_scope *scope;   /* per position of order: where that instance's output lives */
    rotor_gt_order_kind kind; /* which search gave it */
    int64_t live_peak[2];    /* peak bytes of live instance outputs: BFS, DFS */
    int merges[3];           /* straight, diamond and branch merges made */
    int tensors[3];          /* activation values per scope (Table 3): model outputs in
                              * DDR, a sub-graph's intermediates in the LB, its output where
                              * its instances' outputs went (the lowest level); the model's
                              * inputs not among them */
    int64_t spilled[2];      /* bytes of instance outputs spilled to the GB, to DDR (§4.3) */
    /* The most the GB holds at any point of the order: the output blocks
     * waiting there, the block the running instance writes there, and the
     * resident weights of every sub-graph whose instances span that point
     * (grouped schedules; the per-operator ones with count_weights).  Never
     * above gb_bytes with gb_capacity, which revokes weights that find no
     * room, nor with count_weights, whose one kernel at a time keeps its
     * weights resident only when they fit half the GB; the half-GB rules
     * alone do not count the weights against the blocks, and may exceed it. */
    int64_t gb_peak;
    /* What one run of the schedule keeps in DDR, activations only (the
     * caller adds the weights, which every cluster of a chip shares;
     * docs/graphturbo.md, "DDR's capacity").  ddr_io: the model's inputs
     * and outputs, whose buffers are held the whole run (a decision: the
     * host writes the inputs before and reads the outputs after).
     * ddr_peak: the most at a point of the order, ddr_io included: every
     * other block that goes to DDR holds its room from its instance to its
     * last reader (a compiler lays DDR out statically: a block spilled on
     * from the LB or the GB later keeps the room from its instance), and
     * the running instance's intermediates that overflow to DDR (half of
     * rotor_gt_split.spill_ddr: out and back). */
    int64_t ddr_io, ddr_peak;
    int capacity_rounds;     /* builds until no weights' residency was revoked (rotor_gt_schedule_build) */
    int capacity_kept;       /* the build kept, 1 .. capacity_rounds: the fastest by limits.price
                              * (0 with capacity_rounds: without gb_capacity, one build) */
    int input_values;        /* the model's inputs (read), which the host writes into DDR
                              * whatever the schedule (Table 3 does not count them) */
} rotor_gt_schedule;

/* Algorithm 2 from one sub-graph per operator, then instances, order,
 * binding, scopes and spills (mode ROTOR_GT_GROUPED), or the per-operator
 * kernels of the ablation.  Free with rotor_gt_schedule_free (also after
 * an error). */
rotor_status rotor_gt_schedule_build(const rotor_graph *g, const rotor_gt_limits *lim, rotor_gt_mode mode,
                                     rotor_gt_schedule *out, rotor_error *err);
void rotor_gt_schedule_free(rotor_gt_schedule *s);

/* Where schedule s keeps value v of g, as Table 3 counts it (tensors):
 * a sub-graph's output at the lowest level any of its instances put a
 * block of it, an intermediate in the LB, or in the GB when its sub-graph's
 * instances overflow the LB; -1 for a weight or a model input. */
int rotor_gt_value_level(const rotor_graph *g, const rotor_gt_schedule *s, int v);

/* The block of sub-graph sg's output its instance idx computes, [lo, hi)
 * per axis: the split's equal blocks, numbered row-major over the factors. */
void rotor_gt_instance_block(const rotor_graph *g, const rotor_gt_schedule *s, int sg, int64_t idx, int64_t *lo,
                             int64_t *hi);

/* Instances of sub-graph sg (its split factor, or 1). */
int64_t rotor_gt_instances(const rotor_gt_schedule *s, int sg);

#endif
