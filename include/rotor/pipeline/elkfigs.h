/* rotor — the rest of Elk's evaluation (Elk §4.4 Table 2, §6.4 Figures 23
 * and 24) and its motivation curves (§3, Figures 5, 7 and 8), on rotor's
 * schedules (hbm/schedule.h) and the evaluation points of elkmesh.h.
 *
 *  - Table 2: the factors of the search, O(C^H P K^2 N), as the scheduler
 *    counts them while it runs Full (rotor_preload_factors, preload.h); the
 *    paper's rows are constants here (rotor_elk_table2_paper).
 *  - Figure 23: every design at several core counts per chip with the HBM
 *    at a fixed bandwidth per core (Elk: 2.7 GB/s), the LLMs on the
 *    package, DiT-XL on one chip (rotor_elkcores_run).
 *  - Figure 24: Llama2-13B's training forward pass, rotor's prefill of a
 *    batch of sequences (no backward pass), against the HBM bandwidth at
 *    several matrix rates (rotor_elktrain_run).
 *  - Figures 5, 7 and 8: per operator of one layer, its execute-state
 *    plans (time against space) and the per-core interconnect demand with
 *    the least and the most preload space (rotor_elkmotiv_run).
 * docs/reproduction.md ("Elk": "Table 2", "Figure 23", "Figure 24",
 * "Figures 5-8") has every decision where Elk is silent and the numbers.
 * After an error the results are freed by their _free (also safe then). */
#ifndef ROTOR_ELKFIGS_H
#define ROTOR_ELKFIGS_H

#include <stdbool.h>
#include <stdint.h>

#include "rotor/base/chip.h"
#include "rotor/base/error.h"
#include "rotor/hbm/preload.h"
#include "rotor/pipeline/elkmesh.h"

#define ROTOR_ELKFIGS_MAX_GRID 16
#define ROTOR_ELKFIGS_MAX_MODELS 8

/* ---- Table 2 ---- */

/* Elk Table 2's row for a zoo model (llama2-13b, gemma2-27b, opt-30b,
 * llama2-70b, dit-xl), or NULL. */
const rotor_preload_factors *rotor_elk_table2_paper(const char *model);

/* ---- Figure 23: core counts ---- */

typedef struct rotor_elkcores_options {
    const char *const *models;  /* LLMs, decode step, on the whole package */
    int nmodels;
    const char *dit_model;      /* NULL: none; else run on one chip of the package (Elk: DiT-XL) */
    const int64_t *cores;       /* cores per chip; NULL: rotor's default grid */
    int ncores;
    bool full_grid;             /* with cores NULL: the finer grid (elkfigs.c) */
    double hbm_gbps_per_core;   /* 0: Elk's 2.7 */
    int64_t batch, seq;         /* the LLMs' */
    int64_t layers;             /* 0: each model's own */
    int threads;                /* points in parallel (0: OpenMP's default) */
    void (*progress)(void *ctx, int done, int total);
    void *progress_ctx;
    rotor_search_memo *memo;    /* as rotor_elkmesh_options's (NULL: the run keeps its own) */
} rotor_elkcores_options;

typedef struct rotor_elkcores_result {
    int nmodels, ncores;        /* nmodels counts the DiT row too, last, when asked */
    const char *models[ROTOR_ELKFIGS_MAX_MODELS + 1];
    bool has_dit;
    int64_t cores[ROTOR_ELKFIGS_MAX_GRID];
    int64_t chips;              /* the LLMs' (the chip's); the DiT row runs on 1 */
    double hbm_gbps_per_core;
    rotor_elk_point *pts;       /* rotor_elkcores_at */
} rotor_elkcores_result;

static inline rotor_elk_point *rotor_elkcores_at(const rotor_elkcores_result *r, int model, int k) {
    return &r->pts[(int64_t)model * r->ncores + k];
}

/* Elk §6.4's claims over the points that fit (designs Full over Basic and
 * Static; the paper: 1.71x and 1.36x on average). */
typedef struct rotor_elkcores_summary {
    int points;
    double full_over_basic, full_over_static, full_over_basic_max, full_over_static_max;
    double full_pct_ideal;      /* mean of Ideal / Full latency, % */
    int full_slower;            /* points where Full is slower than Static or Basic (Elk: none) */
} rotor_elkcores_summary;

rotor_status rotor_elkcores_run(const rotor_elkcores_options *opt, const rotor_chip *chip, rotor_elkcores_result *out,
                                rotor_error *err);
void rotor_elkcores_free(rotor_elkcores_result *r);
/* The summary of one row (model >= 0) or of every LLM row (model -1). */
void rotor_elkcores_summarise(const rotor_elkcores_result *r, int model, rotor_elkcores_summary *out);

/* ---- Figure 24: the training forward pass ---- */

typedef struct rotor_elktrain_options {
    const char *model;          /* Elk: llama2-13b */
    int64_t batch, seq;         /* the forward pass of batch sequences of seq tokens */
    const double *hbm_tbps;     /* HBM of all chips, TB/s; NULL: default grid */
    int nhbm;
    const double *matrix_tflops; /* per chip; NULL: default grid */
    int nflops;
    bool full_grid;             /* NULL grids: the finer ones (elkfigs.c) */
    int threads;
    void (*progress)(void *ctx, int done, int total);
    void *progress_ctx;
    rotor_search_memo *memo;    /* as rotor_elkmesh_options's (NULL: the run keeps its own) */
} rotor_elktrain_options;

typedef struct rotor_elktrain_result {
    const char *model;
    int64_t batch, seq;
    int nhbm, nflops;
    double hbm_tbps[ROTOR_ELKFIGS_MAX_GRID], matrix_tflops[ROTOR_ELKFIGS_MAX_GRID];
    int64_t chips;
    rotor_elk_point *pts;       /* rotor_elktrain_at */
    /* per matrix rate: the least HBM bandwidth (TB/s) at which Full reaches
       95% of its TFLOP/s at the most; NAN when none fits */
    double need_tbps[ROTOR_ELKFIGS_MAX_GRID];
} rotor_elktrain_result;

static inline rotor_elk_point *rotor_elktrain_at(const rotor_elktrain_result *r, int f, int h) {
    return &r->pts[(int64_t)f * r->nhbm + h];
}

rotor_status rotor_elktrain_run(const rotor_elktrain_options *opt, const rotor_chip *chip, rotor_elktrain_result *out,
                                rotor_error *err);
void rotor_elktrain_free(rotor_elktrain_result *r);

/* ---- Figures 5, 7 and 8: the motivation ---- */

/* One operator of the first layer, in execution order. */
typedef struct rotor_elkmotiv_op {
    char name[48];
    int nplans;
    double *time_us, *space_kb; /* Figure 5: its execute-state plans (the frontier) */
    double exec_us;             /* its fastest plan's execution */
    double hbm_mb;              /* bytes it loads from HBM, one chip */
    double intercore_min_gbps;  /* Figure 7, MinPreload: (plan traffic + distribution) / execution */
    double intercore_max_gbps;  /* Figure 7, MaxPreload: plan traffic / execution */
    double total_min_gbps, total_max_gbps; /* Figure 8: + HBM-to-core bytes / HBM load time */
} rotor_elkmotiv_op;

typedef struct rotor_elkmotiv_result {
    const char *model;
    int64_t batch, seq;
    int nops;
    rotor_elkmotiv_op *ops;
} rotor_elkmotiv_result;

/* The first layer of model's decode step at batch (KV cache seq) on chip. */
rotor_status rotor_elkmotiv_run(const char *model, int64_t batch, int64_t seq, const rotor_chip *chip, int threads,
                                rotor_elkmotiv_result *out, rotor_error *err);
void rotor_elkmotiv_free(rotor_elkmotiv_result *r);

#endif
