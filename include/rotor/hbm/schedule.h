/* rotor — Elk end-to-end schedules: a model on a chip with HBM (Elk §3-§4, §6.1).
 *
 * rotor_schedule_build turns a graph and an HBM chip into the operator
 * sequence the preload scheduler (preload.h) works on:
 *
 *  - the model is split over the chips by tensor parallelism (Elk §6.1: "we
 *    use model parallelism across the four chips"), Megatron style: each
 *    operator becomes the shard one chip runs, and every chip runs the same
 *    sequence, so one chip's schedule is the pod's;
 *  - each shard's execute-state plans are its Pareto frontier of (time,
 *    memory per core) from the exact T10 search (search.h) on one chip;
 *  - weights and the KV cache are what the HBM holds.
 *
 * rotor_schedule_run then runs one preload design on it and derives what Elk
 * Figure 17/18 report: per-token latency, the breakdown, HBM and interconnect
 * utilisation, achieved FLOPS.  Every decision is in docs/schedule.md. */
#ifndef ROTOR_SCHEDULE_H
#define ROTOR_SCHEDULE_H

#include <stdbool.h>
#include <stdint.h>

#include "rotor/base/chip.h"
#include "rotor/base/error.h"
#include "rotor/compile/energy.h"
#include "rotor/model/graph.h"
#include "rotor/hbm/preload.h"
#include "rotor/hbm/searchmemo.h"
#include "rotor/op/search.h"

/* How a shard divides its operator over the tensor-parallel chips. */
typedef enum rotor_shard {
    ROTOR_SHARD_REPLICATED = 0, /* every chip runs the whole operator */
    ROTOR_SHARD_OUTPUT,         /* split on an output axis: the output stays split */
    ROTOR_SHARD_REDUCTION       /* split on a reduced axis: an all-reduce joins the partial sums */
} rotor_shard;

const char *rotor_shard_name(rotor_shard s); /* "replicated", "output", "reduction" */

#define ROTOR_SCHEDULE_NAME_MAX 48

/* One operator as one chip runs it. */
typedef struct rotor_schedule_op {
    char name[ROTOR_SCHEDULE_NAME_MAX];
    int graph_op;              /* index in the graph */
    bool vendor;               /* no tensor expression: one plan at the vector rate */
    rotor_expr expr;           /* the shard's expression (extents divided); unused when vendor */
    rotor_shard shard;
    int split_axis;            /* expression axis divided by the parallel degree, -1 */
    int hbm_tensor;            /* expression tensor loaded from HBM, -1 (vendor: -1) */
    int64_t hbm_bytes;         /* bytes one chip loads from HBM for it */
    double flops;              /* the shard's useful FLOPs */
    int64_t interchip_ps;      /* the all-reduce and the reshards across chips, included in every
                                  plan's time */
    int64_t reshard_ps;        /* of which the reshards: its inputs brought to the layout its cut
                                  needs (docs/schedule.md, "Reshards") */
    int64_t reshard_bytes;     /* bytes the busiest chip moves for them (sends or receives, the
                                  larger), which sets their time */
    int64_t reshard_total_bytes; /* bytes all the chips receive for them (the energy's) */
    int layer;                 /* 0: no layer; identical layers share an id >= 1 (Elk §4.4) */
    bool layer_begin;
    int nplans;
    rotor_candidate *cands;    /* the frontier, by time ascending (NULL when vendor) */
    rotor_preload_plan *plans; /* the same plans in preload.h's terms */
} rotor_schedule_op;

typedef struct rotor_schedule_options {
    int64_t tensor_parallel;   /* chips the model is split over, 1..chips (0: every chip) */
    bool sram_nonblocking;     /* inter-core writes do not pause a core's SRAM (the IPU's do:
                                  Elk footnote 2), see preload.h */
    int threads;               /* plan searches (0: OpenMP's default); results do not depend on it */
    rotor_solver solver;       /* the plan search (search.h): exact (zero) or fast (docs/kapla.md) */
    rotor_preload_options preload;
    /* Called (never concurrently) after each distinct shape's search with
     * the shapes done and their total, when set; the CLI draws a progress
     * bar from this. */
    void (*progress)(void *ctx, int done, int total);
    void *progress_ctx;
    /* A sweep's memo of frontiers (searchmemo.h), borrowed; NULL: none.
     * The schedule is the same with or without it. */
    rotor_search_memo *memo;
    /* An LLM's prefill: the bytes of KV cache it writes to HBM over all
     * the chips (the pipeline counts them from the model's decode step).
     * The schedule has no HBM writes, so it reports them as not priced
     * (prefill_kv_bytes below; docs/schedule.md, "What is not priced"). */
    int64_t prefill_kv_bytes;
    /* A training step: the bytes its update writes back to HBM over all the
     * chips (the updated parameters, and Adam's moments; the pipeline counts
     * them, rotor_train_info.write_elements), reported as not priced, as
     * prefill_kv_bytes (docs/schedule.md, "What is not priced"). */
    int64_t train_write_bytes;
} rotor_schedule_options;

typedef struct rotor_schedule {
    rotor_chip chip;           /* one chip of the package: the cores a shard runs on */
    int64_t tensor_parallel;
    rotor_preload_chip pchip;
    int nops;
    rotor_schedule_op *ops;    /* graph order, one per graph operator */
    rotor_preload_model *model;
    int searches;              /* distinct shard shapes searched (repeated layers share one) */
    rotor_solver solver;       /* the solver that found every plan */
    double model_flops;        /* the whole model's FLOPs (every chip) */
    int64_t hbm_bytes;         /* one chip's HBM bytes per token (weights and KV cache) */
    int64_t hbm_held;          /* one chip's HBM bytes held: each weight and KV-cache value once,
                                  the largest shard its readers hold (docs/schedule.md) */
    int64_t interchip_ps;      /* sum of the all-reduces and the reshards */
    int64_t reshard_ps;        /* sum of the reshards */
    double hbm_intake;         /* mesh: bytes/s of HBM the edge ports take into one chip when
                                  every core receives alike (docs/schedule.md); 0: all-to-all */
    rotor_preload_options preload; /* from the options, for rotor_schedule_run */
    /* Operators over quantized integers that T10's compile costs at another
     * element size or rate than the chip's (rotor_graph_priced_apart).  The
     * schedule prices every operator at the chip's (docs/cost-model.md,
     * "Element types"), so theirs are not their own: the CLI and the JSON
     * say so. */
    int quantized_ops;
    /* One chip's share of options.prefill_kv_bytes: written to HBM, left out of
     * the schedule's HBM time, utilisation and energy (the CLI and JSON say so). */
    int64_t prefill_kv_bytes;
    int64_t train_write_bytes; /* one chip's share of options.train_write_bytes, likewise */
} rotor_schedule;

/* Builds the schedule input.  The chip needs HBM (hbm_gbps > 0).  Errors name
 * the operator; ROTOR_ERR_NOFIT when a shard has no plan that fits one core's
 * SRAM, or when one chip's HBM cannot hold its share of the weights and KV
 * cache (hbm_held over chip.hbm_bytes).  Free with rotor_schedule_free, also after an error. */
rotor_status rotor_schedule_build(const rotor_graph *g, const rotor_chip *chip,
                                  const rotor_schedule_options *opt, rotor_schedule **out,
                                  rotor_error *err);
void rotor_schedule_free(rotor_schedule *s);

/* Whether a schedule on chip has an on-chip link latency, which the
 * replay pays for each 1 KiB packet of a plan's shifts, one after another,
 * where the analytical timing (the cost model's plans) pays it once a step:
 * the simulated latency can be far above the analytical one (docs/
 * schedule.md, "Link latency").  Then buf gets the sentence `rotor
 * schedule` and `rotor explore` print as a note and the schedule's JSON
 * carries as "caveat". */
bool rotor_schedule_latency_caveat(const rotor_chip *chip, char *buf, size_t cap);

/* One design's schedule and what Elk §6.2-§6.3 report about it. */
typedef struct rotor_schedule_report {
    rotor_preload_result result;   /* per-operator choices and times (preload.h) */
    double latency_s;              /* per token (decode) or per step */
    double hbm_util;               /* HBM busy at full bandwidth / latency */
    double link_util;              /* bytes into one core over the interconnect (preload,
                                      distribution, shifts) / (link bandwidth x latency) */
    int64_t link_bytes;            /* those bytes, per core */
    double tflops;                 /* model FLOPs / latency, in TFLOP/s */
} rotor_schedule_report;

/* Runs design d (preload.h's table).  opt->preload is taken from the build. */
rotor_status rotor_schedule_run(const rotor_schedule *s, rotor_preload_design d,
                                rotor_schedule_report *out, rotor_error *err);
void rotor_schedule_report_free(rotor_schedule_report *r);

/* The energy events of one token (decode) or step of design report r
 * over the tensor-parallel chips (docs/energy.md, "Schedules";
 * src/hbm/schedenergy.c): T times one chip's events as
 * rotor_schedule_replay emits them (rotor_schedule_chip_energy), plus the
 * ring all-reduces' bytes across chips, 2 (T - 1) times the output's bytes
 * per reduction-split operator, and the reshards' (what every chip
 * receives, reshard_total_bytes), which the replay models as a delay only.
 * ROTOR_ERR_INPUT when a count leaves int64 or r is not a report of s;
 * *out is zeroed after an error. */
rotor_status rotor_schedule_energy(const rotor_schedule *s, const rotor_schedule_report *r,
                                   rotor_energy_counts *out, rotor_error *err);
/* One chip's events, the tasks rotor_schedule_replay emits for it counted
 * without their timing: per operator its preload (HBM bytes, a byte-hop
 * and an SRAM write per receiving core; on a mesh the path's forwards),
 * its distribution from peers, and its plan's sub-tasks (the FLOPs of
 * their padded extents, as the cores execute them, and their operand
 * bytes), shifts and reduce-scatter (rotor_energy_plan), or a vendor
 * operator's FLOPs on the vector units.  On all-to-all the simulator's
 * counts of that replay equal these exactly (tests/test_energy.c). */
rotor_status rotor_schedule_chip_energy(const rotor_schedule *s, const rotor_schedule_report *r,
                                        rotor_energy_counts *out, rotor_error *err);

#endif
