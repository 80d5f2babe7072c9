/* rotor — Elk's evaluation points, and its design-space sweeps of the
 * network (Elk §6.4, Figures 19, 21 and 22): all-to-all against a 2D mesh,
 * across HBM and interconnect (link) bandwidths.
 *
 * A point is one model's decode step at one batch on one chip, scheduled
 * with rotor_schedule_build (through rotor_pipeline_run) and run under every
 * design of preload.h: what `rotor reproduce elk` prints and writes for each
 * of its figures.  rotor_elkmesh_run sweeps such points over both networks;
 * rotor_elkmesh_summarise reduces them to the claims Elk's text makes.
 * Every decision where Elk is silent is in docs/reproduction.md ("Figures
 * 19, 21 and 22: all-to-all against mesh") and at its constant in
 * elkmesh.c. */
#ifndef ROTOR_ELKMESH_H
#define ROTOR_ELKMESH_H

#include <stdbool.h>
#include <stdint.h>

#include "rotor/base/chip.h"
#include "rotor/base/error.h"
#include "rotor/hbm/preload.h"
#include "rotor/hbm/searchmemo.h"

#define ROTOR_ELK_ND ROTOR_PRELOAD_NDESIGNS

/* One schedule: a model at one batch on one chip, every design (indexed by
 * rotor_preload_design). */
typedef struct rotor_elk_point {
    bool fits;                  /* false: a shard has no plan that fits one core (ROTOR_ERR_NOFIT) */
    int64_t batch;
    rotor_topology topology;
    double tbps;                /* HBM bandwidth of all the chips, TB/s */
    double link_gbps;           /* the chip's link_gbps: a core's port (all-to-all), one mesh link */
    double latency_s[ROTOR_ELK_ND];
    double hbm[ROTOR_ELK_ND];   /* HBM busy at full bandwidth / latency */
    double link[ROTOR_ELK_ND];  /* bytes into a core / (link bandwidth x latency): the schedule's link_util */
    double tflops[ROTOR_ELK_ND];
    /* Elk Figure 18 (a)'s parts of the latency, s */
    double preload_s[ROTOR_ELK_ND], execute_s[ROTOR_ELK_ND], overlap_s[ROTOR_ELK_ND], stall_s[ROTOR_ELK_ND];
    /* With hops asked: the interconnect's use as Elk Figure 21 counts it, every
       link a byte crosses (rotor_elk_links); 0 otherwise. */
    double hop[ROTOR_ELK_ND];
    /* Elk Table 2's factors of Full's search (preload.h) */
    rotor_preload_factors factors;
} rotor_elk_point;

/* What one point is: the model's decode step with a KV cache of seq at
 * batch, on chip (its HBM bandwidth and network as set). */
typedef struct rotor_elk_point_options {
    const char *model;          /* a zoo LLM */
    int64_t batch, seq;
    int64_t layers;             /* 0: the model's own */
    bool sram_nonblocking;      /* rotor schedule --sram-nonblocking */
    bool prefill;               /* the whole sequence at once (rotor schedule --prefill), not a decode step */
    bool hops;                  /* fill hop[] (rotor_schedule_chip_energy per design) */
    int threads;                /* plan searches (0: OpenMP's default); results do not depend on it */
    rotor_search_memo *memo;    /* the sweep's frontiers (hbm/searchmemo.h), borrowed; NULL: none */
} rotor_elk_point_options;

/* Schedules the point and runs every design into *out.  A model with a shard
 * that fits no core is not an error: out->fits is false and the status
 * ROTOR_OK. */
rotor_status rotor_elk_point_run(const rotor_elk_point_options *opt, const rotor_chip *chip, rotor_elk_point *out,
                                 rotor_error *err);

/* The directed links of one chip a byte-hop may occupy, the denominator of
 * hop[]: all-to-all, each core's port into the exchange (cores: one hop per
 * transfer, as rotor_schedule_report's link_util); a W x H mesh, both
 * directions of every link between neighbours, 2 ((W - 1) H + W (H - 1)),
 * and the 2 (W + H) edge ports HBM enters by (docs/simulator.md, "HBM on
 * the mesh"). */
int64_t rotor_elk_links(const rotor_chip *chip);

/* ---- Figures 19, 21 and 22: all-to-all against mesh ---- */

#define ROTOR_ELKMESH_TOPOS 2      /* 0: all-to-all, 1: mesh */
#define ROTOR_ELKMESH_MAX_GRID 16  /* values per grid */
#define ROTOR_ELKMESH_MAX_MODELS 8

typedef struct rotor_elkmesh_options {
    const char *const *models;  /* Figures 19 and 21 */
    int nmodels;
    const char *link_model;     /* Figure 22's model (Elk: Llama2-70B); NULL: no Figure 22 */
    int64_t batch, seq;
    int64_t layers;             /* 0: each model's own */
    /* The grids; 0 values: rotor's defaults (elkmesh.c, docs/reproduction.md). */
    const double *hbm_tbps;     /* Figures 19 and 21: HBM bandwidth of all the chips, TB/s */
    int nhbm;
    const double *link_gbps;    /* Figure 22: the chip's link_gbps, GB/s */
    int nlink;
    const double *link_hbm_tbps; /* Figure 22: its HBM bandwidths, TB/s */
    int nlink_hbm;
    int threads;                /* points in parallel (0: OpenMP's default); results do not depend on it */
    /* Called (never concurrently) after each point with the points done and
       their total, when set. */
    void (*progress)(void *ctx, int done, int total);
    void *progress_ctx;
    /* The frontiers its points share (hbm/searchmemo.h), borrowed, e.g. a
       command's across its figures; NULL: the run keeps its own. */
    rotor_search_memo *memo;
} rotor_elkmesh_options;

typedef struct rotor_elkmesh_result {
    rotor_chip chip[ROTOR_ELKMESH_TOPOS]; /* the all-to-all chip and its mesh twin (HBM as given) */
    int nmodels, nhbm, nlink, nlink_hbm;
    const char *const *models;  /* the options' (not copied) */
    const char *link_model;
    double hbm_tbps[ROTOR_ELKMESH_MAX_GRID], link_gbps[ROTOR_ELKMESH_MAX_GRID],
        link_hbm_tbps[ROTOR_ELKMESH_MAX_GRID];
    rotor_elk_point *hbm;       /* Figures 19, 21: rotor_elkmesh_hbm_at */
    rotor_elk_point *link;      /* Figure 22: rotor_elkmesh_link_at; NULL without link_model */
} rotor_elkmesh_result;

static inline rotor_elk_point *rotor_elkmesh_hbm_at(const rotor_elkmesh_result *r, int model, int k, int topo) {
    return &r->hbm[((int64_t)model * r->nhbm + k) * ROTOR_ELKMESH_TOPOS + topo];
}
static inline rotor_elk_point *rotor_elkmesh_link_at(const rotor_elkmesh_result *r, int h, int k, int topo) {
    return &r->link[((int64_t)h * r->nlink + k) * ROTOR_ELKMESH_TOPOS + topo];
}

/* The mesh twin of chip: the same cores, links and HBM on a W x H grid per
 * chip, W x H the factor pair of cores_per_chip nearest a square with W <=
 * H (1,472 cores: 32 x 46, the ipu-mk2-mesh preset's).  A chip that is a
 * mesh already is its own twin.  ROTOR_ERR_INPUT when cores_per_chip is
 * prime (a 1 x N line is no 2D mesh). */
rotor_status rotor_elkmesh_chip(const rotor_chip *chip, rotor_chip *mesh, rotor_error *err);

/* Runs every point on chip (it needs HBM) and its mesh twin.  Free *out
 * with rotor_elkmesh_free, also after an error. */
rotor_status rotor_elkmesh_run(const rotor_elkmesh_options *opt, const rotor_chip *chip, rotor_elkmesh_result *out,
                               rotor_error *err);
void rotor_elkmesh_free(rotor_elkmesh_result *r);

/* Elk §6.4's claims, measured (design Full unless named). */
typedef struct rotor_elkmesh_summary {
    /* Figure 19: mesh over all-to-all latency at the same point */
    int points;                 /* points where both networks fit */
    int mesh_slower;            /* of them, mesh latency >= all-to-all (Elk: mesh suffers more contention) */
    double mesh_over_min, mesh_over_max, mesh_over_mean;
    double ideal_pct[ROTOR_ELKMESH_TOPOS]; /* Full as % of Ideal, mean (Elk: harder to match Ideal on mesh) */
    /* per model and network: the smallest HBM bandwidth within 5% of the
       latency at the largest (Elk: about 8 TB/s for Llama2-70B) */
    double knee_tbps[ROTOR_ELKMESH_MAX_MODELS][ROTOR_ELKMESH_TOPOS];
    /* Figure 21 */
    int mesh_busier;            /* points where the mesh's hop use exceeds all-to-all's (Elk: always) */
    int full_busiest[ROTOR_ELKMESH_TOPOS]; /* points where Full's hop use is the highest of basic..full */
    double full_hop_max[ROTOR_ELKMESH_TOPOS]; /* Full's highest hop use (Elk: "almost fully") */
    /* byte-hops per byte landing in a core, mean (Elk: "mesh takes multiple
       hops to deliver HBM data to cores"; all-to-all: 1) */
    double hops_per_byte[ROTOR_ELKMESH_TOPOS];
    /* Figure 22, per HBM bandwidth and network: latency at the lowest link
       bandwidth over the highest (Elk: the mesh more sensitive), and the
       smallest aggregate link bandwidth (rotor_elkmesh_aggregate_tbps) within
       5% of the latency at the highest (Elk: about 40 TB/s at 8 TB/s of HBM) */
    double link_gain[ROTOR_ELKMESH_MAX_GRID][ROTOR_ELKMESH_TOPOS];
    double link_knee_tbps[ROTOR_ELKMESH_MAX_GRID][ROTOR_ELKMESH_TOPOS];
} rotor_elkmesh_summary;

/* The aggregate interconnect bandwidth of the chip's network in Elk §2.1's
 * convention, every core of every chip at link rate (1,472 x 5.5 GB/s =
 * 8 TB/s per IPU), TB/s. */
double rotor_elkmesh_aggregate_tbps(const rotor_chip *chip, double link_gbps);

void rotor_elkmesh_summarise(const rotor_elkmesh_result *r, rotor_elkmesh_summary *out);

#endif
