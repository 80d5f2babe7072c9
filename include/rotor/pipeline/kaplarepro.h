/* rotor — KAPLA's evaluation (KAPLA §V-VI, training and inference) on rotor's
 * solvers and cost model: what `rotor reproduce kapla` prints and writes,
 * with the paper's numbers beside them (docs/reproduction.md, "KAPLA").
 *
 *   Fig. 7    per network, each solver's cost relative to B on the layers
 *             of its SGD training graph (docs/training.md): forward, and
 *             the gradient contractions dX and dW; Fig. 8 is the same
 *             (rotor's cost is time, Fig. 8's metric)
 *   Fig. 9    per network, each solver's cost relative to B (the exact
 *             search): K (`--solver fast`), R (`random`), M (`ml`)
 *   Fig. 10   the same on an edge TPU-like array (the `kapla-edge` preset),
 *             batch 1, R at KAPLA's edge rate of 0.85
 *   Table IV  each solver's wall time (inference and training), and B / K,
 *             M / K beside 518x, 265x
 *   Table V   K's overhead over B on five hardware configurations
 *   Table VI  one segment per network: its inter-layer schemes before and
 *             after KAPLA's pruning (validity, then Pareto)
 *   Fig. 11   that segment's valid schemes ranked by the estimate, the
 *             best of the top k costed: overhead and time against k
 *
 * KAPLA's cost is nn_dataflow's energy; rotor's is cost model v1's time
 * (docs/cost-model-v1.md), so "cost" below is the predicted time. */
#ifndef ROTOR_KAPLAREPRO_H
#define ROTOR_KAPLAREPRO_H

#include <stdbool.h>
#include <stdint.h>

#include "rotor/base/chip.h"
#include "rotor/base/error.h"

#define ROTOR_KAPLAREPRO_NETS 7    /* KAPLA §V's seven networks */
#define ROTOR_KAPLAREPRO_SOLVERS 4 /* B, K, R, M (rotor_kaplarepro_solver_name) */
#define ROTOR_KAPLAREPRO_CONFIGS 5 /* Table V's rows */
#define ROTOR_KAPLAREPRO_KS 5      /* Fig. 11's k: 1, 2, 4, 8, all */
#define ROTOR_KAPLAREPRO_STAGES 3  /* the Table VI segment's layers */

/* The paper's means (§VI-A): inference on the multi-node chip (Fig. 9),
 * the edge device (Fig. 10) and training's speed (Table IV). */
#define ROTOR_KAPLAREPRO_PAPER_K_INF 0.077  /* K over B, Fig. 9 */
#define ROTOR_KAPLAREPRO_PAPER_M_INF 0.361  /* M over B, Fig. 9 */
#define ROTOR_KAPLAREPRO_PAPER_R_INF 0.59   /* R over B, Fig. 9 */
#define ROTOR_KAPLAREPRO_PAPER_K_EDGE 0.019 /* K over B, Fig. 10 */
#define ROTOR_KAPLAREPRO_PAPER_R_EDGE 0.038 /* R over B, Fig. 10 */
#define ROTOR_KAPLAREPRO_PAPER_M_EDGE 0.16  /* M over B at worst, Fig. 10 */
#define ROTOR_KAPLAREPRO_PAPER_K_TRAIN 0.022 /* K over B, Fig. 7 (training): mean */
#define ROTOR_KAPLAREPRO_PAPER_K_TRAIN_WORST 0.10 /* ... worst (MLP) */
#define ROTOR_KAPLAREPRO_PAPER_M_TRAIN 0.177 /* M over B, Fig. 7: mean (up to 1.5x) */
#define ROTOR_KAPLAREPRO_PAPER_M_TRAIN_WORST 0.5
#define ROTOR_KAPLAREPRO_PAPER_R_TRAIN_WORST 0.9 /* R over B, Fig. 7: up to 1.9x (its mean is not in the text) */
#define ROTOR_KAPLAREPRO_PAPER_B_SPEED 518.0 /* Table IV: K's speed-up over B (training) */
#define ROTOR_KAPLAREPRO_PAPER_M_SPEED 265.0 /* Table IV: over M */
#define ROTOR_KAPLAREPRO_PAPER_B_SPEED_INF 174.0 /* §VI-A, inference: over B, M, R */
#define ROTOR_KAPLAREPRO_PAPER_M_SPEED_INF 50.0
#define ROTOR_KAPLAREPRO_PAPER_R_SPEED_INF 1.5

/* A training graph's passes (docs/training.md): where a layer lies. */
#define ROTOR_KAPLAREPRO_FORWARD 0
#define ROTOR_KAPLAREPRO_BACKWARD 1 /* the gradient contractions: dX and dW */
#define ROTOR_KAPLAREPRO_UPDATE 2
#define ROTOR_KAPLAREPRO_PASSES 3

/* One network: --models' name, the paper's, the zoo model, Table VI. */
typedef struct rotor_kaplarepro_net {
    const char *name, *paper_name, *model;
    int paper_total, paper_pruned; /* Table VI */
} rotor_kaplarepro_net;

extern const rotor_kaplarepro_net rotor_kaplarepro_nets[ROTOR_KAPLAREPRO_NETS];
const rotor_kaplarepro_net *rotor_kaplarepro_find(const char *name);
/* "B", "K", "R", "M". */
const char *rotor_kaplarepro_solver_name(int s);

/* Table V's rows: the paper's batch and overhead, and rotor's chip. */
typedef struct rotor_kaplarepro_config {
    const char *label;   /* what rotor changes, e.g. "half the cores" */
    int64_t batch;
    double cores_scale, sram_scale; /* of the base chip */
    double paper_overhead;
} rotor_kaplarepro_config;

extern const rotor_kaplarepro_config rotor_kaplarepro_configs[ROTOR_KAPLAREPRO_CONFIGS];

/* One network on one chip: its distinct contraction layers (at most the
 * options' max_layers, evenly spaced over graph order), each weighted by
 * how often it occurs. */
typedef struct rotor_kaplarepro_point {
    int layers;        /* distinct layers solved */
    int nofit;         /* ... of which B found no plan (left out) */
    int missed[ROTOR_KAPLAREPRO_SOLVERS]; /* layers a solver found no plan for (left out of all sums) */
    double cost[ROTOR_KAPLAREPRO_SOLVERS]; /* sum of count x time (s) over the layers all found */
    double wall[ROTOR_KAPLAREPRO_SOLVERS]; /* solver seconds */
    double rel[ROTOR_KAPLAREPRO_SOLVERS];  /* cost / B's cost */
    double layer_over[ROTOR_KAPLAREPRO_SOLVERS]; /* sum over the layers all found of time / B's - 1 */
    double layer_worst[ROTOR_KAPLAREPRO_SOLVERS]; /* the largest of those */
    int compared;                          /* those layers */
    int pass_layers[ROTOR_KAPLAREPRO_PASSES]; /* those layers by pass (training) */
    double pass_over[ROTOR_KAPLAREPRO_PASSES]; /* K's sum of time / B's - 1 over them */
} rotor_kaplarepro_point;

/* Table VI and Fig. 11 for one network's segment. */
typedef struct rotor_kaplarepro_seg {
    char layers[ROTOR_KAPLAREPRO_STAGES][64]; /* its operators */
    int stages;
    int total, valid, pareto; /* schemes: all, after validity, after Pareto */
    double k_cost[ROTOR_KAPLAREPRO_KS];     /* best of the top k, relative to k = all */
    double k_wall[ROTOR_KAPLAREPRO_KS];     /* seconds costing the top k */
    double pareto_loss;  /* best Pareto survivor over best valid scheme, less 1 */
} rotor_kaplarepro_seg;

typedef struct rotor_kaplarepro_model {
    const rotor_kaplarepro_net *net;
    rotor_kaplarepro_point fig9, fig10;
    rotor_kaplarepro_point fig7; /* the training graph's layers (Fig. 7, Table IV's training) */
    rotor_kaplarepro_point table5[ROTOR_KAPLAREPRO_CONFIGS]; /* B and K only */
    rotor_kaplarepro_seg seg;
} rotor_kaplarepro_model;

typedef struct rotor_kaplarepro_options {
    const rotor_kaplarepro_net *const *nets;
    int nnets;
    int max_layers;        /* distinct layers per network (0: 10) */
    int train_layers;      /* ... of the training graph, Fig. 7 (0: max_layers) */
    int table5_layers;     /* ... for Table V (0: 4) */
    int threads;           /* B's search threads (0: OpenMP's default) */
    void (*progress)(void *ctx, int done, int total);
    void *progress_ctx;
} rotor_kaplarepro_options;

typedef struct rotor_kaplarepro_result {
    char chip[64], edge[64];
    int64_t batch;                           /* Fig. 9's: 64, KAPLA's default */
    int nmodels;
    rotor_kaplarepro_model *models;
    /* means over the networks of rel - 1, and wall totals */
    double mean_over[ROTOR_KAPLAREPRO_SOLVERS], worst_over[ROTOR_KAPLAREPRO_SOLVERS];
    double edge_mean_over[ROTOR_KAPLAREPRO_SOLVERS], edge_worst_over[ROTOR_KAPLAREPRO_SOLVERS];
    double wall[ROTOR_KAPLAREPRO_SOLVERS];   /* Fig. 9's solver seconds, all networks */
    double layer_mean[ROTOR_KAPLAREPRO_SOLVERS]; /* Fig. 9's mean over every layer of time / B's - 1 */
    /* Fig. 7 (training): as mean_over, worst_over, wall, layer_mean; the
     * worst layer; K's mean overhead by pass over every network's layers */
    double train_mean_over[ROTOR_KAPLAREPRO_SOLVERS], train_worst_over[ROTOR_KAPLAREPRO_SOLVERS];
    double train_wall[ROTOR_KAPLAREPRO_SOLVERS];
    double train_layer_mean[ROTOR_KAPLAREPRO_SOLVERS], train_layer_worst[ROTOR_KAPLAREPRO_SOLVERS];
    int train_layers, train_pass_layers[ROTOR_KAPLAREPRO_PASSES];
    double train_pass_over[ROTOR_KAPLAREPRO_PASSES];
    double table5_over[ROTOR_KAPLAREPRO_CONFIGS];
    double k_cost[ROTOR_KAPLAREPRO_KS], k_wall[ROTOR_KAPLAREPRO_KS];
    double min_pruned;                       /* the least share pruned over the networks */
} rotor_kaplarepro_result;

/* Fig. 11's k for index i: 1, 2, 4, 8, and 0 for all. */
int rotor_kaplarepro_k(int i);

/* Runs every figure and table on chip (Fig. 9, Tables IV-VI, Fig. 11) and
 * edge (Fig. 10).  The first failure stops the run, err naming the network.
 * Free out with rotor_kaplarepro_free, also after an error. */
rotor_status rotor_kaplarepro_run(const rotor_kaplarepro_options *opt, const rotor_chip *chip,
                                  const rotor_chip *edge, rotor_kaplarepro_result *out, rotor_error *err);
void rotor_kaplarepro_free(rotor_kaplarepro_result *r);

#endif
