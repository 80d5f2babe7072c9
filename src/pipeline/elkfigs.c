/* elkfigs.c — Elk's Table 2, Figures 23 and 24, and the motivation curves
 * of §3 (Figures 5, 7 and 8) on rotor's schedules (include/rotor/pipeline/
 * elkfigs.h).
 *
 * Decisions where Elk is silent (docs/reproduction.md, "Elk", gives the
 * numbers behind them):
 *  - Table 2 is counted, not derived: Full's search at the paper's setting
 *    (batch 32, sequence 2048) reports its own factors (preload.h,
 *    rotor_preload_factors), and `rotor reproduce elk` takes them from its
 *    Figure 17 point at batch 32.
 *  - Figure 23's cores: 368, 736 and 1,472 per chip (a quarter of the IPU
 *    to all of it; full_grid: 184 to 2,944), the HBM at 2.7 GB/s per core (Elk §6.4), so
 *    1,472 cores have 3.97 TB/s per chip, Elk's 16 TB/s over four chips.
 *    Elk "scale[s] the ICCA chip": each core keeps its compute
 *    (rotor_chip_with_cores: the chip's matrix and vector rates follow the
 *    cores), as it keeps its SRAM and links.  Until 2026-12-02 the chip
 *    kept its 250 TFLOP/s at every core count, a quarter-chip with four
 *    times the compute per core (DiT-XL, compute-bound, barely slowed).
 *    The LLMs at the caller's batch; DiT-XL on one chip, up to 1,472 cores
 *    (Elk: "on one ICCA chip (up to 1472 cores)").
 *  - Figure 24: "the forward pass of training" is rotor's prefill of batch
 *    sequences of seq tokens, the activations' shapes of a training step
 *    without its backward pass or optimizer (Elk: "the backward pass has
 *    similar trends"); the weights stream from HBM as in decode.  Grids:
 *    HBM 0.1 to 16 TB/s over the chips (Elk's 400 GB/s among them), the
 *    matrix rate at half, once and twice the IPU's 250 TFLOP/s per chip
 *    (full_grid: 0.05 to 16 TB/s in 11 steps, a quarter to 4x the rate),
 *    the vector rate in proportion (rotor_chip_with_matrix_tflops, as
 *    rotor explore's flops key: Elk varies the "computation resources";
 *    until 2026-12-02 the vector rate stayed the IPU's, and the norms and
 *    softmax capped the faster chips).
 *  - Figures 5, 7, 8 show the first layer's operators: Figure 5 every
 *    execute-state plan of the frontier, Figures 7 and 8 the fastest plan's
 *    demand with its largest preload state (MaxPreload: no distribution)
 *    and its smallest (MinPreload: everything but a 1/P share fetched from
 *    peers), over its execution time, and the HBM-to-core bytes over the
 *    state's preload time.  Figure 6 (HBM demand over time) is
 *    src/pipeline/elkfig6.c's. */
#include "rotor/pipeline/elkfigs.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/hbm/schedule.h"
#include "rotor/pipeline/pipeline.h"

#define COUNT(a) ((int)(sizeof(a) / sizeof(a)[0]))

/* Elk Table 2 (batch 32, sequence 2048; C and K from IPU-POD4's SRAM). */
static const struct {
    const char *model;
    rotor_preload_factors f;
} TABLE2[] = {
    {"llama2-13b", {.heavy_fit = 6, .heavy = 6, .plans = 66, .preload_numbers = 88, .ops = 1928}},
    {"gemma2-27b", {.heavy_fit = 6, .heavy = 6, .plans = 206, .preload_numbers = 128, .ops = 2216}},
    {"opt-30b", {.heavy_fit = 5, .heavy = 6, .plans = 58, .preload_numbers = 46, .ops = 2269}},
    {"llama2-70b", {.heavy_fit = 6, .heavy = 6, .plans = 168, .preload_numbers = 86, .ops = 3808}},
    {"dit-xl", {.heavy_fit = 4, .heavy = 4, .plans = 123, .preload_numbers = 136, .ops = 1521}},
};

const rotor_preload_factors *rotor_elk_table2_paper(const char *model) {
    for (int i = 0; model && i < COUNT(TABLE2); i++)
        if (!strcmp(TABLE2[i].model, model)) return &TABLE2[i].f;
    return NULL;
}

/* The grids: the default, and with full_grid the finer one. */
static const int64_t DEFAULT_CORES[] = {368, 736, 1472}, FULL_CORES[] = {184, 368, 736, 1472, 2944};
#define ELK_GBPS_PER_CORE 2.7
static const double DEFAULT_TRAIN_HBM[] = {0.1, 0.2, 0.4, 0.8, 1.6, 16},
                    FULL_TRAIN_HBM[] = {0.05, 0.1, 0.2, 0.3, 0.4, 0.6, 0.8, 1.2, 1.6, 3.2, 16};
static const double DEFAULT_TRAIN_FLOPS[] = {125, 250, 500}, FULL_TRAIN_FLOPS[] = {62.5, 125, 250, 500, 1000};
/* Figure 24's "needs": Full within this share of its TFLOP/s at the most HBM. */
#define TRAIN_ENOUGH 0.95

/* ---- points in parallel ---- */

typedef struct job {
    rotor_elk_point *out;
    rotor_elk_point_options po;
    rotor_chip chip;
    rotor_status st;
    rotor_error err;
} job;

/* Runs the n jobs, points in parallel and each schedule on one thread (as
 * elkmesh.c: every point is deterministic), sharing memo's frontiers (a
 * memo of their own when NULL); the first error, prefixed with its point. */
static rotor_status run_jobs(job *jobs, int n, int threads, rotor_search_memo *memo,
                             void (*progress)(void *, int, int), void *ctx, rotor_error *err) {
    rotor_search_memo *own = memo ? NULL : rotor_search_memo_new();
    if (!memo && !own) return rotor_nomem(err);
    int done = 0;
#pragma omp parallel for schedule(dynamic) num_threads(threads > 0 ? threads : omp_get_max_threads())
    for (int x = 0; x < n; x++) {
        jobs[x].po.threads = 1;
        jobs[x].po.memo = memo ? memo : own;
        jobs[x].st = rotor_elk_point_run(&jobs[x].po, &jobs[x].chip, jobs[x].out, &jobs[x].err);
        if (progress) {
#pragma omp critical(elkfigs_progress)
            progress(ctx, ++done, n);
        }
    }
    for (int x = 0; x < n; x++)
        if (jobs[x].st) {
            *err = jobs[x].err;
            char prefix[160];
            snprintf(prefix, sizeof prefix, "%s on %lld x %lld cores at %.6g GB/s per chip", jobs[x].po.model,
                     (long long)jobs[x].chip.chips, (long long)jobs[x].chip.cores_per_chip, jobs[x].chip.hbm_gbps);
            rotor_error_prefix(err, prefix);
            rotor_search_memo_free(own);
            return jobs[x].st;
        }
    rotor_search_memo_free(own);
    return ROTOR_OK;
}

/* ---- Figure 23 ---- */

static rotor_status cores_setup(const rotor_elkcores_options *opt, const rotor_chip *chip, rotor_elkcores_result *r,
                                rotor_error *err) {
    if (chip->hbm_controllers == 0 || chip->hbm_gbps <= 0)
        return rotor_fail(err, ROTOR_ERR_INPUT, "chip '%s' has no HBM", chip->name);
    if (opt->nmodels < 0 || opt->nmodels > ROTOR_ELKFIGS_MAX_MODELS || (opt->nmodels > 0 && !opt->models) ||
        (opt->nmodels == 0 && !opt->dit_model))
        return rotor_fail(err, ROTOR_ERR_INPUT, "models: expected 1..%d, got %d", ROTOR_ELKFIGS_MAX_MODELS,
                          opt->nmodels);
    if (opt->batch < 1 || opt->seq < 1)
        return rotor_fail(err, ROTOR_ERR_INPUT, "batch and seq: expected positive, got %lld and %lld",
                          (long long)opt->batch, (long long)opt->seq);
    const int64_t *cores = opt->cores ? opt->cores : opt->full_grid ? FULL_CORES : DEFAULT_CORES;
    int nc = opt->cores ? opt->ncores : opt->full_grid ? COUNT(FULL_CORES) : COUNT(DEFAULT_CORES);
    if (nc < 1 || nc > ROTOR_ELKFIGS_MAX_GRID)
        return rotor_fail(err, ROTOR_ERR_INPUT, "cores: expected 1..%d values, got %d", ROTOR_ELKFIGS_MAX_GRID, nc);
    for (int k = 0; k < nc; k++) {
        if (cores[k] < 1)
            return rotor_fail(err, ROTOR_ERR_INPUT, "cores: expected positive counts, got %lld", (long long)cores[k]);
        r->cores[k] = cores[k];
    }
    r->ncores = nc;
    r->chips = chip->chips;
    r->hbm_gbps_per_core = opt->hbm_gbps_per_core > 0 ? opt->hbm_gbps_per_core : ELK_GBPS_PER_CORE;
    r->nmodels = opt->nmodels;
    for (int i = 0; i < opt->nmodels; i++) r->models[i] = opt->models[i];
    if (opt->dit_model) {
        r->has_dit = true;
        r->models[r->nmodels++] = opt->dit_model;
    }
    r->pts = calloc((size_t)r->nmodels * (size_t)nc, sizeof *r->pts);
    return r->pts ? ROTOR_OK : rotor_nomem(err);
}

rotor_status rotor_elkcores_run(const rotor_elkcores_options *opt, const rotor_chip *chip, rotor_elkcores_result *out,
                                rotor_error *err) {
    memset(out, 0, sizeof *out);
    rotor_status st = cores_setup(opt, chip, out, err);
    if (st) return st;
    int n = 0;
    job *jobs = calloc((size_t)out->nmodels * (size_t)out->ncores, sizeof *jobs);
    if (!jobs) return rotor_nomem(err);
    for (int i = 0; i < out->nmodels; i++) {
        bool dit = out->has_dit && i == out->nmodels - 1;
        for (int k = 0; k < out->ncores; k++) {
            /* DiT-XL: one chip, at most the chip's own cores (Elk §6.4) */
            if (dit && out->cores[k] > chip->cores_per_chip) continue;
            job *j = &jobs[n++];
            j->out = rotor_elkcores_at(out, i, k);
            j->chip = rotor_chip_with_cores(chip, out->cores[k]);
            if (dit) j->chip.chips = 1;
            j->chip.hbm_gbps = out->hbm_gbps_per_core * (double)out->cores[k];
            j->po = (rotor_elk_point_options){.model = out->models[i], .batch = dit ? 1 : opt->batch,
                                              .seq = dit ? 0 : opt->seq, .layers = opt->layers,
                                              .prefill = dit};
            if ((st = rotor_chip_validate(&j->chip, err))) break;
        }
        if (st) break;
    }
    if (!st) st = run_jobs(jobs, n, opt->threads, opt->memo, opt->progress, opt->progress_ctx, err);
    free(jobs);
    return st;
}

void rotor_elkcores_free(rotor_elkcores_result *r) {
    if (!r) return;
    free(r->pts);
    r->pts = NULL;
}

void rotor_elkcores_summarise(const rotor_elkcores_result *r, int model, rotor_elkcores_summary *s) {
    memset(s, 0, sizeof *s);
    const int B = ROTOR_PRELOAD_BASIC, S = ROTOR_PRELOAD_STATIC, F = ROTOR_PRELOAD_FULL;
    int last = r->nmodels - (r->has_dit ? 1 : 0);
    for (int i = model >= 0 ? model : 0; i < (model >= 0 ? model + 1 : last); i++)
        for (int k = 0; k < r->ncores; k++) {
            const rotor_elk_point *p = rotor_elkcores_at(r, i, k);
            if (!p->fits) continue;
            double b = p->latency_s[B] / p->latency_s[F], st = p->latency_s[S] / p->latency_s[F];
            s->full_over_basic += b;
            s->full_over_static += st;
            s->full_over_basic_max = fmax(s->full_over_basic_max, b);
            s->full_over_static_max = fmax(s->full_over_static_max, st);
            s->full_pct_ideal += 100 * p->latency_s[ROTOR_PRELOAD_IDEAL] / p->latency_s[F];
            s->full_slower += b < 1 || st < 1;
            s->points++;
        }
    if (s->points) {
        s->full_over_basic /= s->points;
        s->full_over_static /= s->points;
        s->full_pct_ideal /= s->points;
    }
}

/* ---- Figure 24 ---- */

static bool take_grid(const double *v, int n, const double *def, int ndef, double *dst, int *count) {
    if (!v) v = def, n = ndef;
    if (n < 1 || n > ROTOR_ELKFIGS_MAX_GRID) return false;
    for (int i = 0; i < n; i++) {
        if (!(v[i] > 0)) return false;
        dst[i] = v[i];
    }
    *count = n;
    return true;
}

/* The least HBM bandwidth of row f whose Full reaches TRAIN_ENOUGH of the
 * row's best TFLOP/s (the grid ascending or not). */
static double train_need(const rotor_elktrain_result *r, int f) {
    const int F = ROTOR_PRELOAD_FULL;
    double best = 0, need = NAN;
    for (int h = 0; h < r->nhbm; h++)
        if (rotor_elktrain_at(r, f, h)->fits) best = fmax(best, rotor_elktrain_at(r, f, h)->tflops[F]);
    for (int h = 0; h < r->nhbm; h++) {
        const rotor_elk_point *p = rotor_elktrain_at(r, f, h);
        if (p->fits && best > 0 && p->tflops[F] >= TRAIN_ENOUGH * best && !(need <= r->hbm_tbps[h]))
            need = r->hbm_tbps[h];
    }
    return need;
}

rotor_status rotor_elktrain_run(const rotor_elktrain_options *opt, const rotor_chip *chip, rotor_elktrain_result *out,
                                rotor_error *err) {
    memset(out, 0, sizeof *out);
    if (chip->hbm_controllers == 0 || chip->hbm_gbps <= 0)
        return rotor_fail(err, ROTOR_ERR_INPUT, "chip '%s' has no HBM", chip->name);
    if (!opt->model || opt->batch < 1 || opt->seq < 1)
        return rotor_fail(err, ROTOR_ERR_INPUT, "model, batch and seq: expected a model and positive sizes");
    bool fg = opt->full_grid;
    if (!take_grid(opt->hbm_tbps, opt->nhbm, fg ? FULL_TRAIN_HBM : DEFAULT_TRAIN_HBM,
                   fg ? COUNT(FULL_TRAIN_HBM) : COUNT(DEFAULT_TRAIN_HBM), out->hbm_tbps, &out->nhbm) ||
        !take_grid(opt->matrix_tflops, opt->nflops, fg ? FULL_TRAIN_FLOPS : DEFAULT_TRAIN_FLOPS,
                   fg ? COUNT(FULL_TRAIN_FLOPS) : COUNT(DEFAULT_TRAIN_FLOPS), out->matrix_tflops, &out->nflops))
        return rotor_fail(err, ROTOR_ERR_INPUT, "a grid: expected 1..%d positive values", ROTOR_ELKFIGS_MAX_GRID);
    out->model = opt->model;
    out->batch = opt->batch;
    out->seq = opt->seq;
    out->chips = chip->chips;
    int n = out->nhbm * out->nflops;
    out->pts = calloc((size_t)n, sizeof *out->pts);
    job *jobs = calloc((size_t)n, sizeof *jobs);
    if (!out->pts || !jobs) {
        free(jobs);
        return rotor_nomem(err);
    }
    for (int f = 0; f < out->nflops; f++)
        for (int h = 0; h < out->nhbm; h++) {
            job *j = &jobs[f * out->nhbm + h];
            j->out = rotor_elktrain_at(out, f, h);
            j->chip = rotor_chip_with_matrix_tflops(chip, out->matrix_tflops[f]);
            j->chip.hbm_gbps = out->hbm_tbps[h] * 1000.0 / (double)chip->chips;
            j->po = (rotor_elk_point_options){.model = opt->model, .batch = opt->batch, .seq = opt->seq,
                                              .prefill = true};
        }
    rotor_status st = run_jobs(jobs, n, opt->threads, opt->memo, opt->progress, opt->progress_ctx, err);
    free(jobs);
    for (int f = 0; f < out->nflops && !st; f++) out->need_tbps[f] = train_need(out, f);
    return st;
}

void rotor_elktrain_free(rotor_elktrain_result *r) {
    if (!r) return;
    free(r->pts);
    r->pts = NULL;
}

/* ---- Figures 5, 7 and 8 ---- */

/* Op i's fastest plan that fits (its first with preload states), -1. */
static int fastest_fit(const rotor_schedule *s, int i, const rotor_preload_state **st, int *nst) {
    for (int k = 0; k < s->ops[i].nplans; k++) {
        *st = rotor_preload_model_states(s->model, i, k, nst);
        if (*st) return k;
    }
    return -1;
}

/* The demands of op i's plan k (Figures 7 and 8), GB/s per core. */
static void motiv_demand(const rotor_schedule *s, int i, int k, const rotor_preload_state *st, int nst,
                         rotor_elkmotiv_op *o) {
    const rotor_preload_plan *p = &s->ops[i].plans[k];
    const rotor_preload_state *mx = &st[0], *mn = &st[nst - 1];
    double t = (double)p->time_ps * 1e-12;
    o->exec_us = t * 1e6;
    o->intercore_max_gbps = (double)p->traffic_bytes / t / 1e9;
    o->intercore_min_gbps = (double)(p->traffic_bytes + mn->dist_bytes) / t / 1e9;
    double hmx = mx->preload_ps > 0 ? (double)mx->space_bytes / ((double)mx->preload_ps * 1e-12) / 1e9 : 0;
    double hmn = mn->preload_ps > 0 ? (double)mn->space_bytes / ((double)mn->preload_ps * 1e-12) / 1e9 : 0;
    o->total_max_gbps = o->intercore_max_gbps + hmx;
    o->total_min_gbps = o->intercore_min_gbps + hmn;
}

/* The first layer instance: [*a, *b). */
static void first_layer(const rotor_schedule *s, int *a, int *b) {
    *a = 0;
    while (*a < s->nops && s->ops[*a].layer == 0) (*a)++;
    *b = *a + 1;
    while (*b < s->nops && s->ops[*b].layer == s->ops[*a].layer && !s->ops[*b].layer_begin) (*b)++;
    if (*b > s->nops) *b = s->nops;
}

static rotor_status motiv_fill(const rotor_schedule *s, rotor_elkmotiv_result *out, rotor_error *err) {
    int a, b;
    first_layer(s, &a, &b);
    if (a >= s->nops) return ROTOR_OK; /* no layer */
    out->ops = calloc((size_t)(unsigned)(b - a), sizeof *out->ops);
    if (!out->ops) return rotor_nomem(err);
    for (int i = a; i < b; i++) {
        rotor_elkmotiv_op *o = &out->ops[out->nops++];
        const rotor_schedule_op *so = &s->ops[i];
        snprintf(o->name, sizeof o->name, "%s", so->name);
        o->hbm_mb = (double)so->hbm_bytes / 1e6;
        o->time_us = malloc(sizeof(double) * (size_t)so->nplans);
        o->space_kb = malloc(sizeof(double) * (size_t)so->nplans);
        if (!o->time_us || !o->space_kb) return rotor_nomem(err);
        for (int k = 0; k < so->nplans; k++) {
            o->time_us[o->nplans] = (double)so->plans[k].time_ps * 1e-6;
            o->space_kb[o->nplans++] = (double)so->plans[k].space_bytes / 1024.0;
        }
        const rotor_preload_state *st = NULL;
        int nst = 0, k = fastest_fit(s, i, &st, &nst);
        if (k >= 0) motiv_demand(s, i, k, st, nst, o);
    }
    return ROTOR_OK;
}

rotor_status rotor_elkmotiv_run(const char *model, int64_t batch, int64_t seq, const rotor_chip *chip, int threads,
                                rotor_elkmotiv_result *out, rotor_error *err) {
    memset(out, 0, sizeof *out);
    out->model = model;
    out->batch = batch;
    out->seq = seq;
    rotor_schedule_options so = {.threads = threads};
    rotor_pipeline_options po = {.model = model,
                                 .zoo = {.batch = batch, .seq = seq, .phase = ROTOR_PHASE_DECODE},
                                 .schedule = &so};
    po.compile.threads = threads;
    rotor_pipeline p;
    rotor_status st = rotor_pipeline_run(&po, chip, &p, err);
    if (!st) st = motiv_fill(p.schedule, out, err);
    rotor_pipeline_free(&p);
    return st;
}

void rotor_elkmotiv_free(rotor_elkmotiv_result *r) {
    if (!r) return;
    for (int i = 0; r->ops && i < r->nops; i++) free(r->ops[i].time_us), free(r->ops[i].space_kb);
    free(r->ops);
    r->ops = NULL;
    r->nops = 0;
}
