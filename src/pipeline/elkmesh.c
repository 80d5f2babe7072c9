/* elkmesh.c — Elk's evaluation points, and the network sweeps of Elk §6.4
 * (Figures 19, 21 and 22): the decode step of an LLM scheduled on ipu-pod4
 * as it is (all-to-all, Elk §2.1) and on a 2D mesh with the same cores,
 * links and HBM (Elk §5, §6.1: "We simulate both all-to-all and 2D mesh
 * networks"), across HBM and link bandwidths (include/rotor/pipeline/
 * elkmesh.h).
 *
 * Decisions where Elk is silent (docs/reproduction.md, "Figures 19, 21 and
 * 22: all-to-all against mesh", gives the numbers behind them):
 *  - The mesh is the chip's own cores on the factor pair of cores_per_chip
 *    nearest a square (32 x 46 for the IPU's 1,472), every link at the
 *    chip's link_gbps, HBM entering through the grid's edge ports as the
 *    simulator models them (docs/simulator.md, "HBM on the mesh").
 *  - The batch is the caller's (rotor reproduce elk: 8, where a mesh
 *    schedule takes 0.2-0.6 s of CPU; at 16 it takes 5-13 s, at 32 up to 30:
 *    the plan replays of rotor_schedule_build on a mesh).
 *  - The grids below.  HBM: Figure 19's from 1 TB/s, where both networks
 *    are bound by HBM, to 64; 40 and 48 left out, where neither network
 *    changes.  Links: 0.25x to 8x the IPU's 5.5 GB/s; at 8x the mesh's edge
 *    takes in 16 TB/s over the four chips, Elk's default HBM.  Figure 22's
 *    HBM: 8 TB/s (Elk's low example), 16 (its default) and 32.
 *  - Interconnect use (Figure 21) counts every link a byte crosses: the
 *    byte-hops of the design's replay (rotor_schedule_chip_energy) over
 *    rotor_elk_links links at link rate for the latency.  Elk's "mesh takes
 *    multiple hops to deliver HBM data" is that count; the schedule's own
 *    link_util counts a byte once, at the core it lands in. */
#include "rotor/pipeline/elkmesh.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/compile/energy.h"
#include "rotor/hbm/schedule.h"
#include "rotor/pipeline/pipeline.h"

#define ND ROTOR_ELK_ND

static const double DEFAULT_HBM_TBPS[] = {1, 2, 4, 8, 16, 24, 32, 64};
static const double DEFAULT_LINK_GBPS[] = {1.375, 2.75, 5.5, 11, 22, 44};
static const double DEFAULT_LINK_HBM_TBPS[] = {8, 16, 32};
#define COUNT(a) ((int)(sizeof(a) / sizeof(a)[0]))

/* The knees of Figures 19 and 22: within this of the latency at the largest
 * bandwidth (Elk gives its knees by eye: "about 8 TB/s", "e.g., 40TB/s"). */
#define KNEE_SLACK 1.05

int64_t rotor_elk_links(const rotor_chip *chip) {
    if (chip->topology != ROTOR_TOPO_MESH) return chip->cores_per_chip;
    int64_t w = chip->mesh_width, h = chip->mesh_height;
    return 2 * ((w - 1) * h + w * (h - 1)) + 2 * (w + h);
}

double rotor_elkmesh_aggregate_tbps(const rotor_chip *chip, double link_gbps) {
    return (double)chip->cores_per_chip * (double)chip->chips * link_gbps / 1000.0;
}

/* Design d's report into pt; with hops, its byte-hops over the links. */
static rotor_status point_design(const rotor_schedule *s, int d, bool hops, rotor_elk_point *pt, rotor_error *err) {
    rotor_schedule_report r;
    rotor_status st = rotor_schedule_run(s, (rotor_preload_design)d, &r, err);
    if (st) return st;
    pt->latency_s[d] = r.latency_s;
    pt->hbm[d] = r.hbm_util;
    pt->link[d] = r.link_util;
    pt->tflops[d] = r.tflops;
    const rotor_preload_breakdown *bd = &r.result.breakdown;
    pt->preload_s[d] = (double)bd->preload_ps * 1e-12;
    pt->execute_s[d] = (double)bd->execute_ps * 1e-12;
    pt->overlap_s[d] = (double)bd->overlap_ps * 1e-12;
    pt->stall_s[d] = (double)bd->stall_ps * 1e-12;
    if (d == ROTOR_PRELOAD_FULL) pt->factors = r.result.factors;
    if (hops && r.latency_s > 0) {
        rotor_energy_counts c;
        st = rotor_schedule_chip_energy(s, &r, &c, err);
        if (!st)
            pt->hop[d] = (double)c.byte_hops /
                         ((double)rotor_elk_links(&s->chip) * rotor_chip_link_bw(&s->chip) * r.latency_s);
    }
    rotor_schedule_report_free(&r);
    return st;
}

rotor_status rotor_elk_point_run(const rotor_elk_point_options *opt, const rotor_chip *chip, rotor_elk_point *pt,
                                 rotor_error *err) {
    memset(pt, 0, sizeof *pt);
    pt->batch = opt->batch;
    pt->topology = chip->topology;
    pt->tbps = chip->hbm_gbps * (double)chip->chips / 1000.0;
    pt->link_gbps = chip->link_gbps;
    rotor_schedule_options so = {.threads = opt->threads, .sram_nonblocking = opt->sram_nonblocking, .memo = opt->memo};
    rotor_pipeline_options po = {.model = opt->model,
                                 .zoo = {.batch = opt->batch, .seq = opt->seq, .layers = opt->layers,
                                         .phase = opt->prefill ? ROTOR_PHASE_PREFILL : ROTOR_PHASE_DECODE},
                                 .schedule = &so};
    po.compile.threads = opt->threads;
    rotor_pipeline p;
    rotor_status st = rotor_pipeline_run(&po, chip, &p, err);
    for (int d = 0; d < ND && !st; d++) st = point_design(p.schedule, d, opt->hops, pt, err);
    rotor_pipeline_free(&p);
    pt->fits = st == ROTOR_OK;
    return st == ROTOR_ERR_NOFIT ? ROTOR_OK : st;
}

/* ---- the sweeps ---- */

rotor_status rotor_elkmesh_chip(const rotor_chip *chip, rotor_chip *mesh, rotor_error *err) {
    *mesh = *chip;
    if (chip->topology == ROTOR_TOPO_MESH) return ROTOR_OK;
    int64_t n = chip->cores_per_chip, w = 1;
    for (int64_t a = 2; a * a <= n; a++)
        if (n % a == 0) w = a;
    if (w == 1)
        return rotor_fail(err, ROTOR_ERR_INPUT, "chip '%s': %lld cores per chip have no factor pair for a 2D mesh", chip->name,
                          (long long)n);
    mesh->topology = ROTOR_TOPO_MESH;
    mesh->mesh_width = w;
    mesh->mesh_height = n / w;
    return rotor_chip_validate(mesh, err);
}

/* One point to run: where it goes, the model, the chip. */
typedef struct job {
    rotor_elk_point *out;
    const char *model;
    rotor_chip chip;
    rotor_status st;
    rotor_error err;
} job;

static rotor_chip variant(const rotor_chip *base, double tbps, double link_gbps) {
    rotor_chip c = *base;
    c.hbm_gbps = tbps * 1000.0 / (double)c.chips;
    if (link_gbps > 0) c.link_gbps = link_gbps;
    return c;
}

/* Copies a grid (or the default) into dst; false when it is too long or
 * not positive. */
static bool take_grid(const double *v, int n, const double *def, int ndef, double *dst, int *count) {
    if (!v || n == 0) v = def, n = ndef;
    if (n < 1 || n > ROTOR_ELKMESH_MAX_GRID) return false;
    for (int i = 0; i < n; i++) {
        if (!(v[i] > 0)) return false;
        dst[i] = v[i];
    }
    *count = n;
    return true;
}

/* The result's grids and arrays from the options. */
static rotor_status setup(const rotor_elkmesh_options *opt, const rotor_chip *chip, rotor_elkmesh_result *r,
                          rotor_error *err) {
    if (chip->hbm_gbps <= 0 || chip->hbm_controllers == 0)
        return rotor_fail(err, ROTOR_ERR_INPUT, "chip '%s' has no HBM", chip->name);
    if (opt->nmodels < 1 || opt->nmodels > ROTOR_ELKMESH_MAX_MODELS || !opt->models)
        return rotor_fail(err, ROTOR_ERR_INPUT, "models: expected 1..%d, got %d", ROTOR_ELKMESH_MAX_MODELS,
                          opt->nmodels);
    if (opt->batch < 1 || opt->seq < 1)
        return rotor_fail(err, ROTOR_ERR_INPUT, "batch and seq: expected positive, got %lld and %lld",
                          (long long)opt->batch, (long long)opt->seq);
    if (!take_grid(opt->hbm_tbps, opt->nhbm, DEFAULT_HBM_TBPS, COUNT(DEFAULT_HBM_TBPS), r->hbm_tbps, &r->nhbm) ||
        !take_grid(opt->link_gbps, opt->nlink, DEFAULT_LINK_GBPS, COUNT(DEFAULT_LINK_GBPS), r->link_gbps,
                   &r->nlink) ||
        !take_grid(opt->link_hbm_tbps, opt->nlink_hbm, DEFAULT_LINK_HBM_TBPS, COUNT(DEFAULT_LINK_HBM_TBPS),
                   r->link_hbm_tbps, &r->nlink_hbm))
        return rotor_fail(err, ROTOR_ERR_INPUT, "a bandwidth grid: expected 1..%d positive values",
                          ROTOR_ELKMESH_MAX_GRID);
    r->chip[0] = *chip;
    if (chip->topology == ROTOR_TOPO_MESH) {
        r->chip[0].topology = ROTOR_TOPO_ALL_TO_ALL;
        r->chip[0].mesh_width = r->chip[0].mesh_height = 0;
    }
    rotor_status st = rotor_elkmesh_chip(chip, &r->chip[1], err);
    if (st) return st;
    r->nmodels = opt->nmodels;
    r->models = opt->models;
    r->link_model = opt->link_model;
    r->hbm = calloc((size_t)r->nmodels * (size_t)r->nhbm * ROTOR_ELKMESH_TOPOS, sizeof *r->hbm);
    if (!r->hbm) return rotor_nomem(err);
    if (!opt->link_model) {
        r->nlink = r->nlink_hbm = 0;
        return ROTOR_OK;
    }
    r->link = calloc((size_t)r->nlink * (size_t)r->nlink_hbm * ROTOR_ELKMESH_TOPOS, sizeof *r->link);
    return r->link ? ROTOR_OK : rotor_nomem(err);
}

/* Figure 22's point (h, k, t) when Figures 19 and 21 run it too, else NULL. */
static const rotor_elk_point *shared_point(const rotor_elkmesh_result *r, int h, int k, int t) {
    if (r->link_gbps[k] != r->chip[t].link_gbps) return NULL;
    for (int i = 0; i < r->nmodels; i++)
        for (int j = 0; j < r->nhbm; j++)
            if (!strcmp(r->models[i], r->link_model) && r->hbm_tbps[j] == r->link_hbm_tbps[h])
                return rotor_elkmesh_hbm_at(r, i, j, t);
    return NULL;
}

/* Every point to run, in order: Figures 19 and 21, then Figure 22's not
 * shared with them.  *n of them. */
static job *make_jobs(const rotor_elkmesh_result *r, int *n) {
    int most = r->nmodels * r->nhbm * ROTOR_ELKMESH_TOPOS + r->nlink * r->nlink_hbm * ROTOR_ELKMESH_TOPOS;
    job *jobs = calloc((size_t)most, sizeof *jobs);
    if (!jobs) return NULL;
    *n = 0;
    for (int i = 0; i < r->nmodels; i++)
        for (int k = 0; k < r->nhbm; k++)
            for (int t = 0; t < ROTOR_ELKMESH_TOPOS; t++)
                jobs[(*n)++] = (job){.out = rotor_elkmesh_hbm_at(r, i, k, t), .model = r->models[i],
                                     .chip = variant(&r->chip[t], r->hbm_tbps[k], 0)};
    for (int h = 0; h < r->nlink_hbm; h++)
        for (int k = 0; k < r->nlink; k++)
            for (int t = 0; t < ROTOR_ELKMESH_TOPOS; t++)
                if (!shared_point(r, h, k, t))
                    jobs[(*n)++] = (job){.out = rotor_elkmesh_link_at(r, h, k, t), .model = r->link_model,
                                         .chip = variant(&r->chip[t], r->link_hbm_tbps[h], r->link_gbps[k])};
    return jobs;
}

rotor_status rotor_elkmesh_run(const rotor_elkmesh_options *opt, const rotor_chip *chip, rotor_elkmesh_result *out,
                               rotor_error *err) {
    memset(out, 0, sizeof *out);
    rotor_status st = setup(opt, chip, out, err);
    if (st) return st;
    int n = 0, done = 0;
    job *jobs = make_jobs(out, &n);
    rotor_search_memo *own = opt->memo ? NULL : rotor_search_memo_new(), *memo = opt->memo ? opt->memo : own;
    if (!jobs || !memo) {
        free(jobs);
        rotor_search_memo_free(own);
        return rotor_nomem(err);
    }
    /* Points in parallel, each schedule on one thread: a mesh schedule's
     * plan replays dominate and parallelise less well than whole points.
     * Every point is deterministic, so the order does not matter. */
#pragma omp parallel for schedule(dynamic) num_threads(opt->threads > 0 ? opt->threads : omp_get_max_threads())
    for (int x = 0; x < n; x++) {
        rotor_elk_point_options po = {.model = jobs[x].model, .batch = opt->batch, .seq = opt->seq,
                                      .layers = opt->layers, .hops = true, .threads = 1, .memo = memo};
        jobs[x].st = rotor_elk_point_run(&po, &jobs[x].chip, jobs[x].out, &jobs[x].err);
        if (opt->progress) {
#pragma omp critical(elkmesh_progress)
            opt->progress(opt->progress_ctx, ++done, n);
        }
    }
    for (int x = 0; x < n && !st; x++)
        if (jobs[x].st) {
            *err = jobs[x].err;
            char prefix[160];
            snprintf(prefix, sizeof prefix, "%s on %s at %.6g TB/s, links %.6g GB/s", jobs[x].model,
                     jobs[x].chip.topology == ROTOR_TOPO_MESH ? "the mesh" : "all-to-all",
                     jobs[x].chip.hbm_gbps * (double)jobs[x].chip.chips / 1000.0, jobs[x].chip.link_gbps);
            rotor_error_prefix(err, prefix);
            st = jobs[x].st;
        }
    free(jobs);
    rotor_search_memo_free(own);
    for (int h = 0; h < out->nlink_hbm && !st; h++)
        for (int k = 0; k < out->nlink; k++)
            for (int t = 0; t < ROTOR_ELKMESH_TOPOS; t++) {
                const rotor_elk_point *s = shared_point(out, h, k, t);
                if (s) *rotor_elkmesh_link_at(out, h, k, t) = *s;
            }
    return st;
}

void rotor_elkmesh_free(rotor_elkmesh_result *r) {
    if (!r) return;
    free(r->hbm);
    free(r->link);
    r->hbm = r->link = NULL;
}

/* ---- Elk's claims ---- */

/* The smallest x[k] whose point's Full latency is within KNEE_SLACK of the
 * last point's, of the n points at(ctx, k); NAN when the last does not fit.
 * Figure 19's HBM knee and Figure 22's link knee. */
static double knee(const double *x, int n, const rotor_elk_point *(*at)(const rotor_elkmesh_result *, int, int, int),
                   const rotor_elkmesh_result *r, int g, int t) {
    const rotor_elk_point *last = at(r, g, n - 1, t);
    if (!last->fits) return NAN;
    for (int k = 0; k < n; k++) {
        const rotor_elk_point *p = at(r, g, k, t);
        if (p->fits && p->latency_s[ROTOR_PRELOAD_FULL] <= KNEE_SLACK * last->latency_s[ROTOR_PRELOAD_FULL])
            return x[k];
    }
    return NAN;
}

static const rotor_elk_point *hbm_at(const rotor_elkmesh_result *r, int i, int k, int t) {
    return rotor_elkmesh_hbm_at(r, i, k, t);
}
static const rotor_elk_point *link_at(const rotor_elkmesh_result *r, int h, int k, int t) {
    return rotor_elkmesh_link_at(r, h, k, t);
}

/* Figures 19 and 21 at point (i, k). */
static void add_hbm_point(const rotor_elkmesh_result *r, int i, int k, rotor_elkmesh_summary *s) {
    const rotor_elk_point *a = rotor_elkmesh_hbm_at(r, i, k, 0), *m = rotor_elkmesh_hbm_at(r, i, k, 1);
    if (!a->fits || !m->fits) return;
    const int F = ROTOR_PRELOAD_FULL;
    double q = m->latency_s[F] / a->latency_s[F];
    s->mesh_over_min = s->points ? fmin(s->mesh_over_min, q) : q;
    s->mesh_over_max = s->points ? fmax(s->mesh_over_max, q) : q;
    s->mesh_over_mean += q;
    s->points++;
    s->mesh_slower += q >= 1;
    s->mesh_busier += m->hop[F] > a->hop[F];
    for (int t = 0; t < ROTOR_ELKMESH_TOPOS; t++) {
        const rotor_elk_point *p = t ? m : a;
        s->ideal_pct[t] += 100 * p->latency_s[ROTOR_PRELOAD_IDEAL] / p->latency_s[F];
        bool busiest = true;
        for (int d = 0; d < ROTOR_PRELOAD_IDEAL; d++) busiest = busiest && p->hop[F] >= p->hop[d];
        s->full_busiest[t] += busiest;
        s->full_hop_max[t] = fmax(s->full_hop_max[t], p->hop[F]);
        /* hop = byte-hops / (links bw T), link = bytes per core / (bw T) */
        s->hops_per_byte[t] += p->link[F] > 0 ? p->hop[F] * (double)rotor_elk_links(&r->chip[t]) /
                                                    (p->link[F] * (double)r->chip[t].cores_per_chip)
                                              : 0;
    }
}

/* Figure 22: the gains from the link bandwidth. */
static void link_claims(const rotor_elkmesh_result *r, rotor_elkmesh_summary *s) {
    const int F = ROTOR_PRELOAD_FULL;
    double agg[ROTOR_ELKMESH_MAX_GRID];
    for (int k = 0; k < r->nlink; k++) agg[k] = rotor_elkmesh_aggregate_tbps(&r->chip[0], r->link_gbps[k]);
    for (int h = 0; h < r->nlink_hbm; h++)
        for (int t = 0; t < ROTOR_ELKMESH_TOPOS; t++) {
            const rotor_elk_point *lo = link_at(r, h, 0, t), *hi = link_at(r, h, r->nlink - 1, t);
            s->link_gain[h][t] = lo->fits && hi->fits ? lo->latency_s[F] / hi->latency_s[F] : NAN;
            s->link_knee_tbps[h][t] = knee(agg, r->nlink, link_at, r, h, t);
        }
}

void rotor_elkmesh_summarise(const rotor_elkmesh_result *r, rotor_elkmesh_summary *s) {
    memset(s, 0, sizeof *s);
    for (int i = 0; i < r->nmodels; i++) {
        for (int t = 0; t < ROTOR_ELKMESH_TOPOS; t++) s->knee_tbps[i][t] = knee(r->hbm_tbps, r->nhbm, hbm_at, r, i, t);
        for (int k = 0; k < r->nhbm; k++) add_hbm_point(r, i, k, s);
    }
    if (s->points) {
        s->mesh_over_mean /= s->points;
        for (int t = 0; t < ROTOR_ELKMESH_TOPOS; t++) {
            s->ideal_pct[t] /= s->points;
            s->hops_per_byte[t] /= s->points;
        }
    }
    if (r->link) link_claims(r, s);
}
