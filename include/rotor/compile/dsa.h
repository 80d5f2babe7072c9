/* rotor — GraphTurbo's schedules timed on a DSA with a memory hierarchy
 * (GraphTurbo §1 Fig. 1, §4, §5): d clusters of c cores, a local buffer (LB)
 * per core, a global buffer (GB) per cluster, DDR or HBM behind DMA.
 *
 * One cluster runs its share of the batch (§2.1: data parallelism across
 * clusters); the graph given is that share.  Five schedules, the per-layer
 * baseline and the four steps of Fig. 15:
 *
 *   per-layer   every operator a kernel, its output to DDR (TVM, §5.2)
 *   gb          outputs kept in the GB while it holds them (Fig. 15, 1st)
 *   lb          outputs kept in the LB, else the GB, else DDR (2nd)
 *   instances   + sub-graphs, instances and their order (§3; 3rd)
 *   graphturbo  + cross-layer scheduling: weights prefetched DDR -> GB -> LB
 *               while the previous instance computes, and the matrix and
 *               vector units working at once (§4.4; 4th, all of GraphTurbo)
 *
 * The model (docs/graphturbo.md, "Time"): an instance's matrix FLOPs run at
 * the cluster's matrix rate, the rest at its vector rate; it reads its
 * inputs and writes its output at the bandwidth of the level each lives in
 * (the LB costs nothing: the data is on core), promotes its weights from
 * the GB (brought from DDR once per sub-graph), and moves what it cannot
 * keep in the LB through the GB.  Without cross-layer scheduling an
 * instance loads its weights, then overlaps its tiles' moves with compute
 * (double buffering inside a kernel; DDR and the GB are separate
 * channels); with it, every resource works at once and the slowest sets
 * the time. */
#ifndef ROTOR_DSA_H
#define ROTOR_DSA_H

#include <stdint.h>

#include "rotor/base/chip.h"
#include "rotor/base/error.h"
#include "rotor/model/graph.h"
#include "rotor/model/graphturbo.h"

typedef enum rotor_dsa_step {
    ROTOR_DSA_PER_LAYER = 0,
    ROTOR_DSA_GB,
    ROTOR_DSA_LB,
    ROTOR_DSA_INSTANCES,
    ROTOR_DSA_GRAPHTURBO,
    ROTOR_DSA_STEPS
} rotor_dsa_step;

/* "per-layer", "gb", "lb", "instances", "graphturbo". */
const char *rotor_dsa_step_name(rotor_dsa_step s);

/* One cluster of a chip, in SI units. */
typedef struct rotor_dsa_cluster {
    int64_t cores;           /* c */
    int64_t lb_bytes;        /* every core's LB together */
    int64_t gb_bytes;        /* the cluster's GB */
    double gb_bw;            /* bytes/s */
    double ddr_bw;           /* the cluster's share of the off-chip bandwidth, bytes/s */
    double mm_rate;          /* matrix FLOP/s of the cluster */
    double vec_rate;         /* vector FLOP/s of the cluster */
    bool units_overlap;      /* u >= 2: matrix and vector units run at once */
    /* The grouped steps keep what waits in the GB within its bytes at every
     * point of the order, resident weights included (rotor_gt_limits
     * .gb_capacity; docs/graphturbo.md, "The GB's capacity"): true, as
     * rotor_dsa_cluster_of sets it; false keeps the half-GB rules alone,
     * which let the GB over-fill where the order interleaves sub-graphs
     * (ResNet-50 at 16 images: 26.5 MB in its 8 MiB). */
    bool gb_capacity;
    /* DDR's bytes, which the chip's clusters share (rotor_chip.hbm_bytes),
     * and how many clusters share them: a schedule DDR cannot hold is
     * refused (rotor_dsa_ddr_check; docs/graphturbo.md, "DDR's capacity"). */
    int64_t ddr_capacity;
    int64_t clusters;
    double mm8_rate;         /* the matrix FLOP/s of a contraction of 8-bit integers (int8_tops; 0: mm_rate) */
} rotor_dsa_cluster;

/* The cluster of chip; refused (one line naming what is missing) when the
 * chip has no GB or no off-chip memory: the model prices neither away. */
rotor_status rotor_dsa_cluster_of(const rotor_chip *chip, rotor_dsa_cluster *out, rotor_error *err);
/* Whether GraphTurbo's DSA timing tells chips a and b apart: their clusters
 * (rotor_dsa_cluster_of: compute rates, LB, GB, DDR) or their element size
 * (the graph's bytes) differ, or either has no cluster.  A chip field that
 * changes neither changes nothing the schedule prints: `rotor compile
 * --group graphturbo` refuses a --set of it on a chip with a GB (link_gbps
 * or link_latency_ns gave the same schedules; found by an audit helper). */
bool rotor_dsa_tells_apart(const rotor_chip *a, const rotor_chip *b);

/* What the graph scheduler needs of a cluster: the LB of its cores, its GB,
 * and its rates for the cost of splits and merges (rotor_gt_limits), and
 * this stage's time of a schedule, which judges §3.3's two orders and the
 * GB capacity's builds (limits.price; it borrows c as price_ctx, so c must
 * outlive every build with *lim). */
void rotor_dsa_limits(const rotor_dsa_cluster *c, rotor_gt_limits *lim);

typedef struct rotor_dsa_result {
    rotor_dsa_step step;
    double seconds;          /* the cluster's graph, once */
    double mm_s, vec_s;      /* busy time of the matrix and vector units */
    double ddr_s, gb_s;      /* ... of DDR and the GB (per instance its busier side, reads or writes) */
    double ddr_bytes, gb_bytes; /* through each: the GB's read and written, the weights from DDR included */
    int subgraphs;
    int64_t instances;
    rotor_gt_order_kind order;
    int tensors[3];          /* activation values in the LB, GB, DDR (Table 3) */
    int64_t gb_peak;         /* the most the GB holds at a point of the order (rotor_gt_schedule.gb_peak) */
    int64_t ddr_io, ddr_peak; /* activations DDR holds for the cluster (rotor_gt_schedule's) */
    int input_values;        /* the model's inputs, in DDR, not in tensors (Table 3) */
} rotor_dsa_result;

/* One step run as `passes` passes of a cluster's batch / passes, one after
 * another (GraphTurbo §5.1's loop execution; rotor_pipeline_dsa_loops). */
typedef struct rotor_dsa_loop {
    int64_t passes;
    rotor_dsa_result pass;   /* one pass: its schedule, time, values and bytes by level */
} rotor_dsa_loop;

/* All the passes' seconds: the passes carry nothing between them, so
 * passes x one pass's (rotor_pipeline_dsa_loops). */
static inline double rotor_dsa_loop_s(const rotor_dsa_loop *l) { return (double)l->passes * l->pass.seconds; }

/* Each step at its fastest number of passes. */
typedef struct rotor_dsa_loops {
    bool ran;                /* rotor_pipeline_dsa_loops filled it (it succeeded) */
    bool file_batch;         /* an ONNX file: its batch is its own, one pass only (batch 0) */
    int64_t batch;           /* a cluster's batch, all passes together; 0 with file_batch */
    int tried;               /* the numbers of passes tried: the divisors of batch */
    rotor_dsa_loop step[ROTOR_DSA_STEPS];
} rotor_dsa_loops;

/* Whether time a is faster than time b beyond rounding (rotor_gt_faster,
 * the one rule): the loops' choice and the steps' gains use it. */
static inline bool rotor_dsa_faster(double a, double b) { return rotor_gt_faster(a, b); }

/* Each step's speedup over the first (per-layer) and gain over the one
 * before (the first's: 1), from the steps' seconds. */
void rotor_dsa_ratios(const double seconds[ROTOR_DSA_STEPS], double speedup[ROTOR_DSA_STEPS],
                      double gain[ROTOR_DSA_STEPS]);

/* What one instance of a schedule does: the one owner of these quantities,
 * which the time model (rotor_dsa_run) and the replay (sim/gtreplay.h)
 * both read. */
typedef struct rotor_dsa_work {
    double mm_s, vec_s;          /* its matrix and vector units' time */
    double read[2], write[2];    /* activation bytes it reads and writes at DDR [0] and the GB [1]:
                                  * inputs where their producers' instances put them, its output
                                  * block at its scope, an overflow half each way */
    double w_ddr, w_gb;          /* weight bytes DDR -> GB and GB -> LB */
    bool w_resident;             /* its sub-graph's weights wait in the GB (rotor_gt_split.w_resident) */
} rotor_dsa_work;

/* The schedule step times (its mode and limits on c) into s; free it with
 * rotor_gt_schedule_free, also after an error. */
rotor_status rotor_dsa_schedule(const rotor_graph *g, const rotor_dsa_cluster *c, rotor_dsa_step step,
                                rotor_gt_schedule *s, rotor_error *err);

/* Every instance's work in s's order: *out gets s->ninst entries (free()). */
rotor_status rotor_dsa_works(const rotor_graph *g, const rotor_gt_schedule *s, const rotor_dsa_cluster *c,
                             rotor_dsa_work **out, rotor_error *err);

/* One activation value of a step's schedule and where it lives: Table 3's
 * count (rotor_dsa_result.tensors) value by value, so that a user sees
 * which values went to DDR, not only how many. */
typedef struct rotor_dsa_value {
    int value;               /* the graph's value */
    int first_op, last_op;   /* the sub-graph that writes it: its first and last operator */
    int64_t bytes;           /* the value's bytes (of the graph given: one pass) */
    int64_t instances;       /* its sub-graph's instances */
    rotor_gt_scope level;    /* where Table 3 counts it (rotor_gt_value_level) */
    bool intermediate;       /* inside its sub-graph: on core, or through the GB when an instance overflows the LB */
    int64_t blocks[3];       /* a sub-graph's output: its instances' blocks put in the LB, GB, DDR */
    bool output;             /* a model output (always in DDR) */
} rotor_dsa_value;

/* Every activation value step's schedule of g writes (rotor_dsa_schedule:
 * the schedule rotor_dsa_run times), in the graph's value order: *out
 * gets *n entries (free()); their levels count to rotor_dsa_result.tensors. */
rotor_status rotor_dsa_values(const rotor_graph *g, const rotor_dsa_cluster *c, rotor_dsa_step step,
                              rotor_dsa_value **out, int *n, rotor_error *err);

/* The bytes DDR holds at once for r's schedule run as `passes` passes by
 * every cluster: the weights of g once (the clusters read the same ones),
 * and in each cluster the pass's peak of activations beside the other
 * passes' inputs and outputs (rotor_gt_schedule.ddr_io, held the whole
 * run).  g is one pass's graph.  In doubles: exact below 2^53 bytes, past
 * any DDR (1 PiB at most, docs/chip-format.md). */
double rotor_dsa_ddr_need(const rotor_graph *g, const rotor_dsa_cluster *c, const rotor_dsa_result *r,
                          int64_t passes);

/* Whether DDR holds what rotor_dsa_ddr_need counts (at most the chip's
 * ddr_capacity); ROTOR_ERR_NOFIT, one line with the bytes, when it does
 * not. */
rotor_status rotor_dsa_ddr_check(const rotor_graph *g, const rotor_dsa_cluster *c, const rotor_dsa_result *r,
                                 int64_t passes, rotor_error *err);

/* Schedules g (one cluster's share) as step says and times it; refused
 * when DDR cannot hold it (rotor_dsa_ddr_check, one pass). */
rotor_status rotor_dsa_run(const rotor_graph *g, const rotor_dsa_cluster *c, rotor_dsa_step step,
                           rotor_dsa_result *out, rotor_error *err);

#endif
