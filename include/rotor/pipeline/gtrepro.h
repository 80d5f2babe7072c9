/* rotor — GraphTurbo's evaluation (GraphTurbo §5) run on rotor's schedules:
 * what `rotor reproduce graphturbo` prints and writes, with the paper's
 * numbers beside them (docs/reproduction.md, "GraphTurbo").
 *
 *   Fig. 14   GraphTurbo's speedup over the per-layer baseline, per Table 2
 *             model at GraphTurbo's batches per cluster (Table 2)
 *   Fig. 15   the ablation: each step of rotor_dsa_step over per-layer,
 *             and each step's gain over the one before
 *   Table 1   BERT-128 at 2, 4, 8 and 16 batches per cluster
 *   Table 3   activation values in DDR, the GB and the LB (per-layer, graphturbo)
 *   Table 4   the compile time of each model
 *
 * The paper's figures carry their per-model bars in the figure only: its
 * text gives the means (11.15x over TVM; 3.67x, 2.20x, 1.72x), which are
 * here as constants; its tables are here whole (rotor_gtrepro_paper). */
#ifndef ROTOR_GTREPRO_H
#define ROTOR_GTREPRO_H

#include <stdbool.h>
#include <stdint.h>

#include "rotor/base/chip.h"
#include "rotor/base/error.h"
#include "rotor/compile/dsa.h"

#define ROTOR_GTREPRO_MODELS 10  /* Table 2's rows, (A) to (J) */
#define ROTOR_GTREPRO_T1 4       /* Table 1's batch sizes: 8, 16, 32, 64 */
#define ROTOR_GTREPRO_TARGET_S 2.0 /* issue 42's speed target: each model at most 2 s */

/* The paper's means (§5.2, §5.3): GraphTurbo over TVM; the LB step over
 * TVM; the instance step over the LB step; cross-layer over instances. */
#define ROTOR_GTREPRO_PAPER_MEAN 11.15
#define ROTOR_GTREPRO_PAPER_LB 3.67
#define ROTOR_GTREPRO_PAPER_INSTANCES 2.20
#define ROTOR_GTREPRO_PAPER_CROSS 1.72

/* One row of Table 2, with the same row of Tables 3 and 4, and the zoo
 * model rotor runs for it.  A paper number the table leaves blank ("-",
 * the crafted code of (H)-(J)) is -1. */
typedef struct rotor_gtrepro_entry {
    char label;              /* 'A' .. 'J' */
    const char *name;        /* --models' name: "resnet-50", "bert-128", ... */
    const char *paper_name;  /* as Table 2 writes it */
    const char *model;       /* the zoo model */
    int64_t seq;             /* the zoo's seq (BERT's sequence length); 0: the model's own */
    int64_t batch;           /* GraphTurbo's batches per cluster (Table 2) */
    int64_t paper_batch;     /* Table 2's batch size (all clusters) */
    int64_t tvm_batch;       /* TVM's batches per cluster */
    const char *unit;        /* the throughput's unit */
    double tvm_throughput;   /* TVM's result (Table 2) */
    int ddr[3], llb[3], l1[3]; /* Table 3: TVM, crafted, GraphTurbo */
    double compile_s[3];     /* Table 4: TVM, AStitch, GraphTurbo */
} rotor_gtrepro_entry;

extern const rotor_gtrepro_entry rotor_gtrepro_paper[ROTOR_GTREPRO_MODELS];

/* Table 1: the paper's rows, (batch, batches per cluster, iterations,
 * throughput in sentences/s, latency in ms); TVM's and GraphTurbo's. */
typedef struct rotor_gtrepro_t1_row {
    int64_t batch;
    int64_t tvm_per_cluster, tvm_iter;
    double tvm_throughput, tvm_latency_ms;
    int64_t gt_per_cluster, gt_iter;
    double gt_throughput, gt_latency_ms;
} rotor_gtrepro_t1_row;

extern const rotor_gtrepro_t1_row rotor_gtrepro_t1_paper[ROTOR_GTREPRO_T1];

/* The entry named name, or NULL. */
const rotor_gtrepro_entry *rotor_gtrepro_find(const char *name);

/* One model at its Table 2 batch: every schedule, and how long rotor took. */
typedef struct rotor_gtrepro_model {
    const rotor_gtrepro_entry *entry;
    int ops_before, ops;     /* operators as built, after simplify and grouping */
    rotor_dsa_result dsa[ROTOR_DSA_STEPS];
    double speedup[ROTOR_DSA_STEPS]; /* per-layer's time over each step's */
    double gain[ROTOR_DSA_STEPS];    /* the previous step's time over this one's (per-layer: 1) */
    double throughput;       /* GraphTurbo: clusters x batch / time, in the entry's unit */
    /* §5.1's loop execution: each step at its fastest number of passes of
     * the batch a cluster (rotor_pipeline_dsa_loops), and the speedups and
     * gains again between those */
    rotor_dsa_loops loops;
    double loop_speedup[ROTOR_DSA_STEPS], loop_gain[ROTOR_DSA_STEPS];
    /* Table 4: wall seconds (CLOCK_MONOTONIC) of the whole pipeline run
     * (zoo build, simplify, group, the five schedules, and all of it again
     * at each number of passes of §5.1's loops), and of the
     * graphturbo schedule alone, timed again on the grouped graph. */
    double pipeline_s, schedule_s;
} rotor_gtrepro_model;

/* One point of Table 1: BERT-128 at batch per cluster. */
typedef struct rotor_gtrepro_t1 {
    int64_t batch, per_cluster;
    double gt_s, per_layer_s;         /* one cluster's batch, once */
    double gt_throughput, per_layer_throughput; /* sentences/s, every cluster */
    int tensors[3];                   /* graphturbo's values in the LB, GB, DDR */
    double ddr_bytes;                 /* graphturbo's DDR traffic */
    rotor_dsa_loop gt_loop;           /* graphturbo at its fastest number of passes (§5.1) */
    int input_values;                 /* the model's inputs, not in tensors */
} rotor_gtrepro_t1;

/* The means over the models run (arithmetic; the paper does not say
 * which mean it takes), and the geometric mean of Fig. 14. */
typedef struct rotor_gtrepro_summary {
    int n;
    double speedup_mean[ROTOR_DSA_STEPS]; /* each step over per-layer */
    double gain_mean[ROTOR_DSA_STEPS];    /* each step over the previous */
    double speedup_geomean;               /* graphturbo over per-layer */
    double loop_speedup_mean[ROTOR_DSA_STEPS], loop_gain_mean[ROTOR_DSA_STEPS]; /* the same with §5.1's loops */
    double loop_speedup_geomean;
    double slowest_pipeline_s;            /* Table 4's largest pipeline time */
    int over_target;                      /* models whose pipeline took over ROTOR_GTREPRO_TARGET_S */
} rotor_gtrepro_summary;

typedef struct rotor_gtrepro_options {
    const rotor_gtrepro_entry *const *models; /* the rows to run, in order */
    int nmodels;
    bool table1;             /* run Table 1 too */
    void (*progress)(void *ctx, int done, int total); /* NULL: none */
    void *progress_ctx;
} rotor_gtrepro_options;

typedef struct rotor_gtrepro_result {
    char chip[64];
    int64_t clusters;
    int nmodels;
    rotor_gtrepro_model *models;
    bool table1;
    rotor_gtrepro_t1 t1[ROTOR_GTREPRO_T1];
    rotor_gtrepro_summary summary;
} rotor_gtrepro_result;

/* Runs the models (and Table 1) on chip, which needs a GB and off-chip
 * memory (rotor_dsa_cluster_of).  The first failure stops the run, with
 * err naming the model.  Free out with rotor_gtrepro_free, also after an
 * error. */
rotor_status rotor_gtrepro_run(const rotor_gtrepro_options *opt, const rotor_chip *chip, rotor_gtrepro_result *out,
                               rotor_error *err);
void rotor_gtrepro_free(rotor_gtrepro_result *r);

#endif
