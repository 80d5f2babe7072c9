/* rotor reproduce t10 — T10's evaluation (T10 §6.2-§6.5) run end to end and
 * set beside the paper's numbers wherever its text gives them
 * (docs/reproduction.md):
 *   Figure 12  latency per model and batch, T10 and the VGM baseline;
 *   Figure 13  the share of time spent moving data;
 *   Figure 14  the per-operator speedup distribution at each model's
 *              smallest and largest batch;
 *   Figure 19  Algorithm 1's explored (idle memory, time) curve there;
 *   Figure 20  scaling with the core count at batch 1.
 * The grid is T10's: every model from batch 1, doubling until T10 no longer
 * fits.  Tables go to stdout (or JSON with --json); CSV and SVG files to the
 * output folder. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>
#include <omp.h>

#include "cli.h"
#include "rotor/compile/planstore.h"
#include "rotor/op/gpu.h"
#include "rotor/pipeline/t10gpu.h"
#include "rotor/base/suggest.h"

#define MAX_MODELS 8
#define MAX_POINTS 24
#define CORES_STEPS 3

static const char *const DEFAULT_MODELS = "bert-large,vit-base,resnet-18,nerf-t10";
static const char *const ELK_MODELS = "llama2-13b,gemma2-27b,opt-30b,llama2-70b"; /* Elk Table 2's LLMs */
/* T10 §6.7's LLMs for Figure 22: OPT 1.3B to 13B, Llama 2 7B and 13B, RetNet-1.3B */
static const char *const FIG22_MODELS = "opt-1.3b,opt-13b,llama2-7b,llama2-13b,retnet-1.3b";

static void reproduce_usage(FILE *f) {
    fprintf(f,
            "usage: rotor reproduce t10|elk|graphturbo|kapla [options]\n"
            "\n"
            "t10: T10's evaluation grid (T10 §6: each model from batch 1, doubling until it no\n"
            "longer fits) with T10, the VGM baseline as Roller tiles it and the VGM oracle;\n"
            "Figures 12, 13, 14, 19 and 20; the same grid on a GPU, Figure 21 (T10 §6.6); and\n"
            "the LLMs' layers that fit one chip against the GPU, prefill and decode, Figure 22\n"
            "(T10 §6.7: %s, or the LLMs --models names).\n"
            "elk: Elk's evaluation (Elk §6: each LLM's decode step, KV cache 2048, batch 1 to 32\n"
            "at 16 TB/s, and batch 32 at 2-64 TB/s) with Basic, Static, Dyn, Full and Ideal;\n"
            "Figures 17, 18 and 19, and the points in the paper's regime; at batch 8, all-to-all\n"
            "against a 2D mesh across HBM and link bandwidths (Figures 19, 21 and 22); Table 2's\n"
            "search factors, the cores at 2.7 GB/s of HBM each (Figure 23, with dit-xl on one\n"
            "chip), Llama2-13B's training forward pass (Figure 24) and Figures 5, 7 and 8.\n"
            "graphturbo: GraphTurbo's evaluation (GraphTurbo §5: Table 2's models on stcp920 at\n"
            "its batches per cluster) with the per-layer baseline and the four Fig. 15 steps;\n"
            "Figures 14 and 15, Tables 1, 3 and 4.\n"
            "kapla: KAPLA's training and inference evaluation (KAPLA §V-VI: AlexNet, MobileNet, VGG,\n"
            "GoogLeNet, ResNet, MLP, LSTM at batch 64) with the exact search (B), the fast solver (K)\n"
            "and the baselines random (R) and ml (M); Figures 7 (training), 9, 10 (the kapla-edge\n"
            "preset, batch 1) and 11, Tables IV, V and VI.\n"
            "Each prints the figures beside the paper's numbers where its text gives them, and\n"
            "writes CSV and SVG files to the output folder (docs/reproduction.md says what each\n"
            "holds).\n"
            "\n"
            "  --models LIST       zoo models (default t10: %s;\n"
            "                      elk: %s); graphturbo: Table 2's rows\n"
            "                      (default all: resnet-50, bert-128, bert-256, bert-384,\n"
            "                      bert-512, dlrm, mobilenet-v2, vit-large, densenet-121,\n"
            "                      conformer-m); kapla: alexnet, mobilenet, vgg, googlenet,\n"
            "                      resnet, mlp, lstm (default all)\n"
            "  --max-batch N       stop the doubling at N (default t10: until T10 no longer fits;\n"
            "                      elk: 32; graphturbo: not taken)\n"
            "  -o, --output DIR    output folder (default reproduce-t10, reproduce-elk,\n"
            "                      reproduce-graphturbo or reproduce-kapla; created if missing)\n"
            "  --json              print the results as JSON (rotor-reproduce-t10,\n"
            "                      rotor-reproduce-elk, rotor-reproduce-graphturbo or\n"
            "                      rotor-reproduce-kapla, version 1)\n"
            "  --full-grid         elk: Figures 23 and 24 on their finer grids (184-2944 cores;\n"
            "                      0.05-16 TB/s x 5 matrix rates)\n"
            "  --gpu NAME|FILE     t10's GPU for Figures 21 and 22 (default a100-80gb;\n"
            "                      docs/gpu.md)\n"
            "  --chip NAME|FILE    chip (default t10: ipu-mk2, elk: ipu-pod4, graphturbo:\n"
            "                      stcp920); --set KEY=VALUE overrides a field\n"
            "  --threads N         search threads\n"
            CLI_CACHE_USAGE
            "  --list              list the zoo (the models --models takes)\n"
            "  -q, --quiet         no progress on stderr\n"
            "  --progress WHEN     auto (a bar on a terminal), always (also lines every 5 s in a log), never\n"
            "  -h, --help          this help\n"
            "\n"
            "exit status: 0 done, 1 a model does not fit even at batch 1, 2 bad input\n",
            FIG22_MODELS, DEFAULT_MODELS, ELK_MODELS);
}

/* One (model, batch) of the grid. */
typedef struct gpoint {
    int64_t batch;
    bool fits;          /* T10 fits */
    bool vgm_fits, oracle_fits;
    double t10_s, vgm_s, oracle_s; /* vgm: Roller; oracle: the exhaustive VGM bound */
    double t10_move_s;  /* T10: shifts, reductions and setup, the shifts under compute aside */
    double vgm_move_s;  /* VGM: loads and stores */
    rotor_t10gpu_side gpu; /* Figure 21: the same graph on the GPU */
} gpoint;

/* Figure 14 at one batch: the operators faster, slower, and the extremes. */
typedef struct opdist {
    int64_t batch;
    int ops, faster, slower;
    double max_speedup, min_speedup;
    double *speedups;   /* per expression operator, graph order */
    char (*names)[64];  /* ... and its name */
} opdist;

typedef struct mresult {
    const char *model;
    int npts;
    gpoint pts[MAX_POINTS];
    opdist dist[2];            /* smallest and largest batch that fit */
    int ncurve[2];
    rotor_curve_point *curve[2];
    int64_t cores[CORES_STEPS]; /* Figure 20's core counts: a quarter, a half and all of the chip's */
    double cores_t10[CORES_STEPS], cores_vgm[CORES_STEPS];
} mresult;

typedef struct repro_args {
    cli_shared_args sa;
    const char *what, *models, *max_batch, *outdir, *gpu;
    bool json, full_grid;
} repro_args;

/* Figure 20's parts of the chip: 1/4, 1/2, all (on the IPU 368, 736 and
 * 1472 cores, the paper's) */
static const int64_t PART[CORES_STEPS] = {4, 2, 1};

/* One pipeline run: T10 and VGM of model at batch b on chip. */
static rotor_status run_point(const char *model, int64_t b, const rotor_chip *chip, const rotor_compile_options *co,
                              rotor_pipeline *p, rotor_error *err) {
    rotor_pipeline_options po = {.model = model, .zoo = {.batch = b}, .t10 = true, .vgm = true, .vgm_oracle = true};
    po.compile.threads = co->threads;
    po.compile.cache_dir = co->cache_dir;
    po.compile.cache_limit = co->cache_limit;
    po.compile.plan_store = co->plan_store;
    rotor_status st = rotor_pipeline_run(&po, chip, p, err);
    if (!st) cli_cache_warn("reproduce", co, &p->t10);
    return st;
}

/* Figure 14 of one compiled point: T10's time of each expression operator
 * (execution + setup) against the VGM baseline's; vendor operators, the same
 * on both sides, are left out. */
static bool op_distribution(const rotor_pipeline *p, opdist *d) {
    d->ops = d->faster = d->slower = 0;
    d->max_speedup = 0;
    d->min_speedup = INFINITY;
    size_t n = (size_t)(p->t10.nops ? p->t10.nops : 1);
    d->speedups = malloc(sizeof(double) * n);
    d->names = malloc(sizeof *d->names * n);
    if (!d->speedups || !d->names) return false;
    for (int o = 0; o < p->t10.nops; o++) {
        const rotor_op_schedule *t = &p->t10.ops[o];
        if (t->vendor) continue;
        double sp = p->vgm.ops[o].total_s / (t->exec_s + t->setup_s);
        snprintf(d->names[d->ops], sizeof d->names[d->ops], "%s", p->graph.ops[o].name);
        d->speedups[d->ops++] = sp;
        if (sp > 1.0005) d->faster++;
        else if (sp < 0.9995) d->slower++;
        d->max_speedup = fmax(d->max_speedup, sp);
        d->min_speedup = fmin(d->min_speedup, sp);
    }
    return true;
}

/* Keeps point b's distribution and curve as the model's smallest (slot 0)
 * or, so far, largest (slot 1) batch. */
static bool keep_extremes(mresult *m, const rotor_pipeline *p, int64_t b, int slot) {
    opdist *d = &m->dist[slot];
    free(d->speedups);
    free(d->names);
    d->names = NULL;
    free(m->curve[slot]);
    m->curve[slot] = NULL;
    d->batch = b;
    if (!op_distribution(p, d)) return false;
    m->ncurve[slot] = p->t10.ncurve;
    m->curve[slot] = malloc(sizeof *m->curve[slot] * (size_t)(p->t10.ncurve ? p->t10.ncurve : 1));
    if (!m->curve[slot]) return false;
    memcpy(m->curve[slot], p->t10.curve, sizeof *m->curve[slot] * (size_t)p->t10.ncurve);
    return true;
}

/* What stopped one model's sweep or scaling: recorded by the worker that
 * ran it, printed by the caller in model order (report_fail), so that the
 * models can run at once and the first failure is still the one shown. */
typedef struct unit_fail {
    int kind; /* 0: none; 1: st and err; 2: out of memory; 3: T10 does not fit even at batch 1 */
    rotor_status st;
    rotor_error err;
} unit_fail;

static int report_fail(const unit_fail *f, const mresult *m, const rotor_chip *chip) {
    if (f->kind == 1) return cli_fail("reproduce", f->st, &f->err);
    if (f->kind == 2) return cli_nomem("reproduce");
    if (f->kind == 3) {
        fprintf(stderr, "rotor reproduce: %s does not fit on %s even at batch 1\n", m->model, chip->name);
        return EXIT_NOFIT;
    }
    return 0;
}

static void fail_with(unit_fail *f, rotor_status st, const rotor_error *err) {
    f->kind = 1;
    f->st = st;
    f->err = *err;
}

/* The model's batch sweep (Figures 12, 13, 14, 19); *f: what stopped it. */
static void sweep_model(mresult *m, const rotor_chip *chip, const rotor_gpu *gpu, const rotor_compile_options *co,
                        int64_t max_batch, cli_progress *prog, int *done, int total, unit_fail *f) {
    for (int64_t b = 1; b <= max_batch && m->npts < MAX_POINTS; b *= 2) {
        rotor_pipeline p;
        rotor_error err = {{0}};
        rotor_status st = run_point(m->model, b, chip, co, &p, &err);
#pragma omp critical(reproduce_progress)
        cli_progress_step(prog, ++*done, total);
        gpoint *g = &m->pts[m->npts];
        g->batch = b;
        if (st && st != ROTOR_ERR_NOFIT) {
            rotor_pipeline_free(&p);
            return fail_with(f, st, &err);
        }
        if (st) { /* T10 no longer fits: the sweep ends here, marked x */
            m->npts++;
            rotor_pipeline_free(&p);
            break;
        }
        g->fits = true;
        g->t10_s = p.t10.total_s;
        /* the share of the time spent moving data: on a chip with
         * compute_overlap a shift under compute costs none (hidden_s) */
        g->t10_move_s = p.t10.comm_s - p.t10.hidden_s + p.t10.reduction_s + p.t10.setup_s;
        g->vgm_fits = p.vgm_status == ROTOR_OK;
        if (g->vgm_fits) {
            g->vgm_s = p.vgm.total_s;
            g->vgm_move_s = p.vgm.load_s + p.vgm.store_s;
        }
        g->oracle_fits = p.oracle_status == ROTOR_OK;
        if (g->oracle_fits) g->oracle_s = p.oracle.total_s;
        if ((st = rotor_t10gpu_price_model(m->model, &(rotor_zoo_options){.batch = b}, gpu, &g->gpu, &err))) {
            /* Figure 21: the same model as TensorRT builds it */
            rotor_pipeline_free(&p);
            return fail_with(f, st, &err);
        }
        bool ok = !g->vgm_fits || ((m->npts > 0 || keep_extremes(m, &p, b, 0)) && keep_extremes(m, &p, b, 1));
        rotor_pipeline_free(&p);
        m->npts++;
        if (!ok) {
            f->kind = 2;
            return;
        }
    }
    if (m->npts == 0 || !m->pts[0].fits) f->kind = 3;
}

/* Figure 20: the model at batch 1 on a quarter, a half and all of the
 * cores.  All of them is the sweep's batch 1 (the same chip and
 * compile), taken from it rather than compiled again. */
static void scale_model(mresult *m, const rotor_chip *chip, const rotor_compile_options *co, unit_fail *f) {
    for (int k = 0; k < CORES_STEPS; k++) {
        /* fewer cores, each with its own compute (rotor_chip_with_cores):
         * until 2026-12-02 the chip kept its 250 TFLOP/s on a quarter of
         * its cores, each core four times as fast */
        int64_t cores = m->cores[k];
        rotor_chip c;
        rotor_error err = {{0}};
        m->cores_t10[k] = m->cores_vgm[k] = NAN;
        /* a mesh's part is a rectangle of it (until 2026-12-03 the 8x9
         * mesh of wormhole-n150 kept its shape on 18 cores: refused) */
        rotor_status pst = rotor_chip_part(chip, cores, &c, &err);
        if (pst) return fail_with(f, pst, &err);
        if (cores == chip->cores_per_chip) { /* the sweep's batch 1, which fits (else no scaling) */
            m->cores_t10[k] = m->pts[0].t10_s;
            if (m->pts[0].vgm_fits) m->cores_vgm[k] = m->pts[0].vgm_s;
            continue;
        }
        rotor_pipeline p;
        rotor_status st = run_point(m->model, 1, &c, co, &p, &err);
        if (!st) m->cores_t10[k] = p.t10.total_s;
        if (!st && p.vgm_status == ROTOR_OK) m->cores_vgm[k] = p.vgm.total_s;
        rotor_pipeline_free(&p);
        if (st && st != ROTOR_ERR_NOFIT) return fail_with(f, st, &err);
    }
}

/* The LLMs of Figure 22 (reproducegpu.c's first half): rs, st, errs. */
typedef struct fig22_run {
    const char *const *llms;
    int nl;
    rotor_t10gpu_llm *rs;
    rotor_status *st;
    rotor_error *errs;
} fig22_run;

/* Figures 12-22's work: every model's sweep then its scaling, and every
 * LLM of Figure 22, at once on the search threads (each compile on one
 * thread, as `rotor explore` runs its points: every point is
 * deterministic, so the results are those of one after another).  The
 * first failure of the grid in model order, sweeps before scalings, as
 * when they ran in turn; Figure 22's are reported by its second half. */
static int run_grid(mresult *ms, int nm, fig22_run *f22, const rotor_chip *chip, const rotor_gpu *gpu,
                    const rotor_compile_options *co, int64_t max_batch, cli_progress *prog, int total) {
    size_t n = (size_t)(nm ? nm : 1);
    unit_fail *sweep = calloc(n, sizeof *sweep), *scale = calloc(n, sizeof *scale);
    if (!sweep || !scale) {
        free(sweep);
        free(scale);
        return cli_nomem("reproduce");
    }
    rotor_compile_options one = *co;
    one.threads = 1;
    int done = 0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(co->threads > 0 ? co->threads : omp_get_max_threads())
    for (int u = 0; u < nm + f22->nl; u++) {
        if (u < nm) {
            sweep_model(&ms[u], chip, gpu, &one, max_batch, prog, &done, total, &sweep[u]);
            if (!sweep[u].kind) scale_model(&ms[u], chip, &one, &scale[u]);
            continue;
        }
        int i = u - nm;
        f22->st[i] = cli_fig22_llm(f22->llms[i], chip, gpu, &one, &f22->rs[i], &f22->errs[i]);
#pragma omp critical(reproduce_progress)
        cli_progress_step(prog, ++done, total);
    }
    int rc = 0;
    for (int i = 0; i < nm && !rc; i++) rc = report_fail(&sweep[i], &ms[i], chip);
    for (int i = 0; i < nm && !rc; i++) rc = report_fail(&scale[i], &ms[i], chip);
    free(sweep);
    free(scale);
    return rc;
}

/* The statistics of Figures 12 and 13 over every point where both fit. */
typedef struct summary {
    int n;
    double mean, max, min, t10_move_lo, t10_move_hi, vgm_move_lo, vgm_move_hi;
    int n_oracle;
    double mean_oracle, max_oracle, min_oracle; /* T10 over the VGM oracle */
} summary;

static summary summarise(const mresult *ms, int nm) {
    summary s = {.min = INFINITY, .t10_move_lo = 1, .vgm_move_lo = 1, .min_oracle = INFINITY};
    double sum = 0, sum_oracle = 0;
    for (int i = 0; i < nm; i++)
        for (int j = 0; j < ms[i].npts; j++) {
            const gpoint *g = &ms[i].pts[j];
            if (g->fits && g->oracle_fits) {
                double so = g->oracle_s / g->t10_s;
                sum_oracle += so;
                s.n_oracle++;
                s.max_oracle = fmax(s.max_oracle, so);
                s.min_oracle = fmin(s.min_oracle, so);
            }
            if (!g->fits || !g->vgm_fits) continue;
            double sp = g->vgm_s / g->t10_s;
            sum += sp;
            s.n++;
            s.max = fmax(s.max, sp);
            s.min = fmin(s.min, sp);
            s.t10_move_lo = fmin(s.t10_move_lo, g->t10_move_s / g->t10_s);
            s.t10_move_hi = fmax(s.t10_move_hi, g->t10_move_s / g->t10_s);
            s.vgm_move_lo = fmin(s.vgm_move_lo, g->vgm_move_s / g->vgm_s);
            s.vgm_move_hi = fmax(s.vgm_move_hi, g->vgm_move_s / g->vgm_s);
        }
    s.mean = s.n ? sum / s.n : NAN;
    s.mean_oracle = s.n_oracle ? sum_oracle / s.n_oracle : NAN;
    return s;
}

/* Figure 21: the GPU's time over T10's at each point of Figure 12, with
 * what rules the GPU's: its HBM bytes (the L2's misses), its FLOP and HBM
 * bounds, and the share of its time in kernels bound by compute. */
static void print_fig21(const mresult *ms, int nm, const rotor_chip *chip, const rotor_gpu *gpu) {
    printf("\nFigure 21: %s (T10) against %s, the Figure 12 grid (us)\n", chip->name, gpu->name);
    printf("%-12s %7s %13s %13s %8s %11s %11s %11s %9s\n", "model", "batch", "T10", gpu->name, "ratio",
           "GPU HBM MB", "FLOP bound", "HBM bound", "compute");
    double most = 0;
    for (int i = 0; i < nm; i++)
        for (int j = 0; j < ms[i].npts; j++) {
            const gpoint *g = &ms[i].pts[j];
            if (!g->fits) continue;
            double r = g->gpu.total_s / g->t10_s;
            most = fmax(most, r);
            printf("%-12s %7lld %13.3f %13.3f %7.2fx %11.1f %11.3f %11.3f %8.0f%%\n", ms[i].model,
                   (long long)g->batch, g->t10_s * 1e6, g->gpu.total_s * 1e6, r, g->gpu.hbm_bytes / 1e6,
                   g->gpu.flop_bound_s * 1e6, g->gpu.hbm_bound_s * 1e6,
                   100 * g->gpu.bound_s[ROTOR_GPU_BOUND_COMPUTE] / g->gpu.total_s);
        }
    printf("T10 over %s: %.2fx at most (paper: IPU up to 2.44x faster at small batch, the A100 faster at large "
           "batch)\n", gpu->name, most);
    for (int i = 0; i < nm; i++) {
        const gpoint *last = NULL;
        for (int j = 0; j < ms[i].npts; j++)
            if (ms[i].pts[j].fits) last = &ms[i].pts[j];
        if (last)
            printf("%s at its largest batch (%lld): %s\n", ms[i].model, (long long)last->batch,
                   last->gpu.total_s < last->t10_s ? "the GPU is faster (the crossover)" : "T10 is still faster");
    }
}

static void print_tables(const mresult *ms, int nm, const rotor_chip *chip, const rotor_gpu *gpu) {
    printf("T10 evaluation (T10 §6) on %s: T10 against the VGM baseline as Roller tiles it, and against the\n"
           "VGM oracle, every split searched (docs/vgm.md)\n\n", chip->name);
    printf("Figure 12 and 13: latency, and the share of time moving data\n");
    printf("%-12s %7s %13s %13s %8s %9s %9s %13s %8s\n", "model", "batch", "T10 (us)", "VGM (us)", "speedup",
           "T10 move", "VGM move", "oracle (us)", "speedup");
    for (int i = 0; i < nm; i++)
        for (int j = 0; j < ms[i].npts; j++) {
            const gpoint *g = &ms[i].pts[j];
            if (!g->fits) {
                printf("%-12s %7lld %13s\n", ms[i].model, (long long)g->batch, "x");
                continue;
            }
            if (g->vgm_fits)
                printf("%-12s %7lld %13.3f %13.3f %7.2fx %8.1f%% %8.1f%%", ms[i].model, (long long)g->batch,
                       g->t10_s * 1e6, g->vgm_s * 1e6, g->vgm_s / g->t10_s, 100 * g->t10_move_s / g->t10_s,
                       100 * g->vgm_move_s / g->vgm_s);
            else
                printf("%-12s %7lld %13.3f %13s %8s %8.1f%% %9s", ms[i].model, (long long)g->batch, g->t10_s * 1e6,
                       "x", "", 100 * g->t10_move_s / g->t10_s, "");
            if (g->oracle_fits) printf(" %13.3f %7.2fx\n", g->oracle_s * 1e6, g->oracle_s / g->t10_s);
            else printf(" %13s\n", "x");
        }
    summary s = summarise(ms, nm);
    printf("T10 over VGM: %.2fx on average, %.2fx at most, %.2fx at least over %d points (paper: 1.69x on "
           "average, 3.3x at most)\n",
           s.mean, s.max, s.min, s.n);
    printf("T10 over the VGM oracle: %.2fx on average, %.2fx at most, %.2fx at least over %d points\n",
           s.mean_oracle, s.max_oracle, s.min_oracle, s.n_oracle);
    printf("time moving data: T10 %.0f%%-%.0f%% (paper 8%%-43%%), VGM %.0f%%-%.0f%% (paper, Roller: 50%%-74%%)\n\n",
           100 * s.t10_move_lo, 100 * s.t10_move_hi, 100 * s.vgm_move_lo, 100 * s.vgm_move_hi);
    printf("Figure 14: operators faster and slower with T10 (paper: over 80%% faster, under 10%% slower, up to "
           "10.79x)\n");
    printf("%-12s %7s %5s %8s %8s %9s %9s\n", "model", "batch", "ops", "faster", "slower", "best", "worst");
    for (int i = 0; i < nm; i++)
        for (int k = 0; k < 2; k++) {
            const opdist *d = &ms[i].dist[k];
            if (!d->ops || (k == 1 && d->batch == ms[i].dist[0].batch)) continue;
            printf("%-12s %7lld %5d %7.1f%% %7.1f%% %8.2fx %8.2fx\n", ms[i].model, (long long)d->batch, d->ops,
                   100.0 * d->faster / d->ops, 100.0 * d->slower / d->ops, d->max_speedup, d->min_speedup);
        }
    printf("\nFigure 20: batch 1 on part of the chip (us)\n%-12s", "model");
    for (int k = 0; k < CORES_STEPS && nm > 0; k++)
        printf(" %7lld T10 %7lld VGM", (long long)ms[0].cores[k], (long long)ms[0].cores[k]);
    printf("\n");
    for (int i = 0; i < nm; i++) {
        printf("%-12s", ms[i].model);
        for (int k = 0; k < CORES_STEPS; k++)
            for (int v = 0; v < 2; v++) {
                double t = v ? ms[i].cores_vgm[k] : ms[i].cores_t10[k];
                if (isnan(t)) printf(" %11s", "x"); /* does not fit on that many cores */
                else printf(" %11.3f", t * 1e6);
            }
        printf("\n");
    }    print_fig21(ms, nm, chip, gpu);
}

/* ---- files ---- */

/* Figure 21: every point of Figure 12 on the GPU. */
static void csv_fig21(FILE *f, const void *data, int nm) {
    const mresult *ms = data;
    fprintf(f, "model,batch,t10_us,gpu_us,ratio,gpu_hbm_bytes,gpu_flop_bound_us,gpu_hbm_bound_us,gpu_compute_us,"
               "gpu_hbm_us,gpu_l2_us,gpu_launch_us\n");
    for (int i = 0; i < nm; i++)
        for (int j = 0; j < ms[i].npts; j++) {
            const gpoint *g = &ms[i].pts[j];
            if (!g->fits) continue;
            fprintf(f, "%s,%lld,%.6f,%.6f,%.6f,%.0f,%.6f,%.6f", ms[i].model, (long long)g->batch, g->t10_s * 1e6,
                    g->gpu.total_s * 1e6, g->gpu.total_s / g->t10_s, g->gpu.hbm_bytes, g->gpu.flop_bound_s * 1e6,
                    g->gpu.hbm_bound_s * 1e6);
            for (int b = 0; b < 4; b++) fprintf(f, ",%.6f", g->gpu.bound_s[b] * 1e6);
            fprintf(f, "\n");
        }
}

/* Figure 12/13 rows, Figure 14 speedups, Figure 19 curves, Figure 20. */
static void csv_grid(FILE *f, const void *data, int nm) {
    const mresult *ms = data;
    fprintf(f, "model,batch,t10_us,vgm_us,speedup,t10_move_share,vgm_move_share,vgm_oracle_us,speedup_oracle\n");
    for (int i = 0; i < nm; i++)
        for (int j = 0; j < ms[i].npts; j++) {
            const gpoint *g = &ms[i].pts[j];
            fprintf(f, "%s,%lld,", ms[i].model, (long long)g->batch);
            if (!g->fits) {
                fprintf(f, ",,,,,,\n");
                continue;
            }
            fprintf(f, "%.6f,", g->t10_s * 1e6);
            if (g->vgm_fits)
                fprintf(f, "%.6f,%.6f,%.6f,%.6f,", g->vgm_s * 1e6, g->vgm_s / g->t10_s, g->t10_move_s / g->t10_s,
                        g->vgm_move_s / g->vgm_s);
            else
                fprintf(f, ",,%.6f,,", g->t10_move_s / g->t10_s);
            if (g->oracle_fits) fprintf(f, "%.6f,%.6f\n", g->oracle_s * 1e6, g->oracle_s / g->t10_s);
            else fprintf(f, ",\n");
        }
}

static void csv_ops(FILE *f, const void *data, int nm) {
    const mresult *ms = data;
    fprintf(f, "model,batch,operator,name,speedup\n");
    for (int i = 0; i < nm; i++)
        for (int k = 0; k < 2; k++) {
            const opdist *d = &ms[i].dist[k];
            if (k == 1 && d->batch == ms[i].dist[0].batch) continue;
            for (int o = 0; o < d->ops; o++)
                fprintf(f, "%s,%lld,%d,%s,%.6f\n", ms[i].model, (long long)d->batch, o, d->names[o], d->speedups[o]);
        }
}

static void csv_curves(FILE *f, const void *data, int nm) {
    const mresult *ms = data;
    fprintf(f, "model,batch,step,idle_bytes_per_core,total_us\n");
    for (int i = 0; i < nm; i++)
        for (int k = 0; k < 2; k++) {
            if (k == 1 && ms[i].dist[1].batch == ms[i].dist[0].batch) continue;
            for (int c = 0; c < ms[i].ncurve[k]; c++)
                fprintf(f, "%s,%lld,%d,%lld,%.6f\n", ms[i].model, (long long)ms[i].dist[k].batch, c,
                        (long long)ms[i].curve[k][c].idle_bytes, ms[i].curve[k][c].total_s * 1e6);
        }
}

static void csv_cores(FILE *f, const void *data, int nm) {
    const mresult *ms = data;
    fprintf(f, "model,batch,cores,t10_us,vgm_us\n");
    for (int i = 0; i < nm; i++)
        for (int k = 0; k < CORES_STEPS; k++) {
            fprintf(f, "%s,1,%lld,", ms[i].model, (long long)ms[i].cores[k]);
            for (int v = 0; v < 2; v++) {
                double t = v ? ms[i].cores_vgm[k] : ms[i].cores_t10[k];
                if (!isnan(t)) fprintf(f, "%.6f", t * 1e6); /* empty: does not fit */
                fputs(v ? "\n" : ",", f);
            }
        }
}

/* Each model's points against batch, T10 solid and VGM dashed: the
 * latency in us, or (move) the share of the time moving data in %. */
static void svg_batch_lines(FILE *f, const mresult *ms, int nm, bool move, const cli_plot *p) {
    double x[MAX_MODELS][2][MAX_POINTS], y[MAX_MODELS][2][MAX_POINTS];
    cli_series s[2 * MAX_MODELS];
    char names[2 * MAX_MODELS][48];
    int ns = 0;
    for (int i = 0; i < nm; i++)
        for (int v = 0; v < 2; v++) {
            int n = 0;
            for (int j = 0; j < ms[i].npts; j++) {
                const gpoint *g = &ms[i].pts[j];
                if (!g->fits || (v && !g->vgm_fits)) continue;
                x[i][v][n] = (double)g->batch;
                if (move) y[i][v][n++] = 100 * (v ? g->vgm_move_s / g->vgm_s : g->t10_move_s / g->t10_s);
                else y[i][v][n++] = (v ? g->vgm_s : g->t10_s) * 1e6;
            }
            snprintf(names[ns], sizeof names[ns], "%s %s", ms[i].model, v ? "VGM" : "T10");
            s[ns] = (cli_series){names[ns], n, x[i][v], y[i][v], v == 1};
            ns++;
        }
    cli_svg_lines(f, p, s, ns);
}

/* Figure 12 as lines: latency against batch. */
static void svg_grid(FILE *f, const void *data, int nm) {
    cli_plot p = {"T10 Figure 12: latency per model and batch", "batch", "latency (us)", true, true};
    svg_batch_lines(f, data, nm, false, &p);
}

/* Figure 13 as lines: the share of time moving data against batch. */
static void svg_move(FILE *f, const void *data, int nm) {
    cli_plot p = {"T10 Figure 13: time moving data", "batch", "share of the time (%)", true, false};
    svg_batch_lines(f, data, nm, true, &p);
}

/* Figure 21 as lines: the GPU's time over T10's against batch. */
static void svg_fig21(FILE *f, const void *data, int nm) {
    const mresult *ms = data;
    double x[MAX_MODELS][MAX_POINTS], y[MAX_MODELS][MAX_POINTS];
    cli_series s[MAX_MODELS];
    for (int i = 0; i < nm; i++) {
        int n = 0;
        for (int j = 0; j < ms[i].npts; j++)
            if (ms[i].pts[j].fits) {
                x[i][n] = (double)ms[i].pts[j].batch;
                y[i][n++] = ms[i].pts[j].gpu.total_s / ms[i].pts[j].t10_s;
            }
        s[i] = (cli_series){ms[i].model, n, x[i], y[i], false};
    }
    cli_plot p = {"T10 Figure 21: GPU time over T10's", "batch", "speedup of T10 (x)", true, true};
    cli_svg_lines(f, &p, s, nm);
}

/* One line a model, each its own length (Figures 14 and 19): series_add
 * makes room for the next one's n points, series_plot draws them all and
 * frees them. */
typedef struct series_set {
    double *x[MAX_MODELS], *y[MAX_MODELS];
    cli_series s[MAX_MODELS];
    char names[MAX_MODELS][48];
    int ns;
} series_set;

/* The next line, "MODEL batch B", of n points: its x and y to fill are
 * ss->x and ss->y [ss->ns - 1].  False when out of memory. */
static bool series_add(series_set *ss, int n, const char *model, int64_t batch) {
    int k = ss->ns;
    ss->x[k] = malloc(sizeof(double) * (size_t)(n ? n : 1));
    ss->y[k] = malloc(sizeof(double) * (size_t)(n ? n : 1));
    if (!ss->x[k] || !ss->y[k]) return false;
    snprintf(ss->names[k], sizeof ss->names[k], "%s batch %lld", model, (long long)batch);
    ss->s[k] = (cli_series){ss->names[k], n, ss->x[k], ss->y[k], false};
    ss->ns++;
    return true;
}

static void series_plot(FILE *f, series_set *ss, const cli_plot *p) {
    cli_svg_lines(f, p, ss->s, ss->ns);
    for (int i = 0; i < MAX_MODELS; i++) {
        free(ss->x[i]);
        free(ss->y[i]);
    }
}

/* Figure 19 as lines: Algorithm 1's curve at each model's largest batch. */
static void svg_curves(FILE *f, const void *data, int nm) {
    const mresult *ms = data;
    series_set ss = {0};
    for (int i = 0; i < nm; i++) {
        int n = ms[i].ncurve[1];
        if (!series_add(&ss, n, ms[i].model, ms[i].dist[1].batch)) break;
        double *x = ss.x[ss.ns - 1], *y = ss.y[ss.ns - 1];
        for (int c = 0; c < n; c++) {
            x[c] = (double)ms[i].curve[1][c].idle_bytes / 1024.0;
            y[c] = ms[i].curve[1][c].total_s * 1e6;
        }
    }
    cli_plot p = {"T10 Figure 19: Algorithm 1's explored plans", "idle memory per core (KiB)", "end-to-end time (us)",
                  false, true};
    series_plot(f, &ss, &p);
}

/* Figure 14 as lines: each model's operators by speedup, at its largest batch. */
static void svg_ops(FILE *f, const void *data, int nm) {
    const mresult *ms = data;
    series_set ss = {0};
    for (int i = 0; i < nm; i++) {
        const opdist *d = &ms[i].dist[1];
        if (!series_add(&ss, d->ops, ms[i].model, d->batch)) break;
        double *x = ss.x[ss.ns - 1], *y = ss.y[ss.ns - 1];
        for (int o = 0; o < d->ops; o++) y[o] = d->speedups[o];
        for (int a = 1; a < d->ops; a++) /* ascending: the curve of Figure 14 */
            for (int b = a; b > 0 && y[b - 1] > y[b]; b--) {
                double t = y[b];
                y[b] = y[b - 1];
                y[b - 1] = t;
            }
        for (int o = 0; o < d->ops; o++) x[o] = d->ops > 1 ? 100.0 * o / (d->ops - 1) : 0;
    }
    cli_plot p = {"T10 Figure 14: operator speedup over VGM", "operators, slowest to fastest (%)",
                  "T10 over VGM", false, true};
    series_plot(f, &ss, &p);
}

/* Figure 20 as lines: batch 1 latency against the core count. */
static void svg_cores(FILE *f, const void *data, int nm) {
    const mresult *ms = data;
    double x[CORES_STEPS], y[MAX_MODELS][2][CORES_STEPS];
    cli_series s[2 * MAX_MODELS];
    char names[2 * MAX_MODELS][48];
    int ns = 0;
    for (int k = 0; k < CORES_STEPS; k++) x[k] = nm > 0 ? (double)ms[0].cores[k] : 0;
    for (int i = 0; i < nm; i++)
        for (int v = 0; v < 2; v++) {
            for (int k = 0; k < CORES_STEPS; k++) y[i][v][k] = (v ? ms[i].cores_vgm[k] : ms[i].cores_t10[k]) * 1e6;
            snprintf(names[ns], sizeof names[ns], "%s %s", ms[i].model, v ? "VGM" : "T10");
            s[ns] = (cli_series){names[ns], CORES_STEPS, x, y[i][v], v == 1};
            ns++;
        }
    cli_plot p = {"T10 Figure 20: batch 1 on fewer cores", "cores", "latency (us)", true, true};
    cli_svg_lines(f, &p, s, ns);
}

/* Writes one output file of the folder: created under a temporary name,
 * renamed into place when complete. */
/* dir/name written by fn (src/cli/output.c: checked, under a temporary
 * name, renamed into place); `rotor reproduce elk` writes through it too. */
int cli_reproduce_file(const char *dir, const char *name, cli_figure_fn fn, const void *data, int n) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    cli_output out;
    int rc = cli_output_open("reproduce", "-o", path, name, &out);
    if (rc) return rc;
    fn(out.f, data, n);
    return cli_output_commit("reproduce", "-o", &out);
}

int cli_reproduce_files(const char *dir, const cli_figure_file *files, size_t nfiles, const void *data, int n) {
    int rc = 0;
    for (size_t i = 0; i < nfiles && !rc; i++) rc = cli_reproduce_file(dir, files[i].name, files[i].fn, data, n);
    return rc;
}

static cJSON *json_results(const mresult *ms, int nm, const rotor_chip *chip, const rotor_gpu *gpu) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "format", "rotor-reproduce-t10");
    cJSON_AddNumberToObject(root, "version", 1);
    cJSON_AddStringToObject(root, "chip", chip->name);
    cJSON_AddStringToObject(root, "gpu", gpu->name);
    summary s = summarise(ms, nm);
    cJSON *sum = cJSON_AddObjectToObject(root, "summary");
    cJSON_AddNumberToObject(sum, "points", s.n);
    cJSON_AddNumberToObject(sum, "speedup_mean", s.mean);
    cJSON_AddNumberToObject(sum, "speedup_max", s.max);
    cJSON_AddNumberToObject(sum, "speedup_min", s.min);
    cJSON_AddNumberToObject(sum, "oracle_points", s.n_oracle);
    cJSON_AddNumberToObject(sum, "speedup_oracle_mean", s.mean_oracle);
    cJSON_AddNumberToObject(sum, "speedup_oracle_max", s.max_oracle);
    cJSON_AddNumberToObject(sum, "speedup_oracle_min", s.min_oracle);
    cJSON *paper = cJSON_AddObjectToObject(root, "paper");
    cJSON_AddNumberToObject(paper, "speedup_mean", 1.69);
    cJSON_AddNumberToObject(paper, "speedup_max", 3.3);
    cJSON_AddStringToObject(paper, "t10_move_share", "8%-43%");
    cJSON_AddStringToObject(paper, "roller_move_share", "50%-74%");
    cJSON_AddNumberToObject(paper, "fig21_t10_over_gpu_max", 2.44);
    cJSON_AddNumberToObject(paper, "fig22_t10_over_gpu_mean", 3.10);
    cJSON_AddNumberToObject(paper, "fig22_t10_over_gpu_max", 16.38);
    cJSON *grid = cJSON_AddArrayToObject(root, "grid");
    for (int i = 0; i < nm; i++)
        for (int j = 0; j < ms[i].npts; j++) {
            const gpoint *g = &ms[i].pts[j];
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "model", ms[i].model);
            cJSON_AddNumberToObject(o, "batch", (double)g->batch);
            cJSON_AddBoolToObject(o, "fits", g->fits);
            if (g->fits) {
                cJSON_AddNumberToObject(o, "t10_us", g->t10_s * 1e6);
                cJSON_AddNumberToObject(o, "t10_move_share", g->t10_move_s / g->t10_s);
            }
            if (g->fits && g->vgm_fits) {
                cJSON_AddNumberToObject(o, "vgm_us", g->vgm_s * 1e6);
                cJSON_AddNumberToObject(o, "vgm_move_share", g->vgm_move_s / g->vgm_s);
                cJSON_AddNumberToObject(o, "speedup", g->vgm_s / g->t10_s);
            }
            if (g->fits && g->oracle_fits) {
                cJSON_AddNumberToObject(o, "vgm_oracle_us", g->oracle_s * 1e6);
                cJSON_AddNumberToObject(o, "speedup_oracle", g->oracle_s / g->t10_s);
            }
            if (g->fits) { /* Figure 21 */
                cJSON_AddNumberToObject(o, "gpu_us", g->gpu.total_s * 1e6);
                cJSON_AddNumberToObject(o, "gpu_ratio", g->gpu.total_s / g->t10_s);
                cJSON_AddNumberToObject(o, "gpu_hbm_bytes", g->gpu.hbm_bytes);
                cJSON_AddNumberToObject(o, "gpu_flop_bound_us", g->gpu.flop_bound_s * 1e6);
                cJSON_AddNumberToObject(o, "gpu_hbm_bound_us", g->gpu.hbm_bound_s * 1e6);
            }
            cJSON_AddItemToArray(grid, o);
        }
    return root;
}

/* ---- the command ---- */

static int parse_reproduce(int argc, char **argv, repro_args *a) {
    static const cli_opt own[] = {
        {"models", 0, CLI_VALUE, offsetof(repro_args, models), 0, 0},
        {"max-batch", 0, CLI_VALUE, offsetof(repro_args, max_batch), 0, 0},
        {"output", 'o', CLI_VALUE, offsetof(repro_args, outdir), 0, 0},
        {"json", 0, CLI_FLAG, offsetof(repro_args, json), 0, 0},
        {"gpu", 0, CLI_VALUE, offsetof(repro_args, gpu), 0, 0},
        {"full-grid", 0, CLI_FLAG, offsetof(repro_args, full_grid), 0, 0},
        {0}};
    int rc = cli_parse_options("reproduce", argc, argv, CLI_TAKES_CHIP | CLI_TAKES_THREADS | CLI_TAKES_CACHE, &a->sa, own, a,
                               reproduce_usage, cli_list_zoo, &a->what,
                               "which paper? (rotor reproduce t10, rotor reproduce elk, rotor reproduce graphturbo, "
                               "rotor reproduce kapla)");
    if (rc >= 0) return rc;
    static const char *const known[] = {"t10", "elk", "graphturbo", "kapla"};
    char hint[96];
    bool found = false;
    for (int i = 0; i < 4; i++) found = found || !strcmp(a->what, known[i]);
    if (!found)
        return cli_usage_error("reproduce", "unknown evaluation '%s'%s (known: t10, elk, graphturbo, kapla)", a->what,
                               rotor_suggest_phrase(a->what, known, 4, hint, sizeof hint));
    return -1;
}

/* The folder, made if missing. */
int cli_reproduce_dir(const char *dir) {
    if (cli_is_dir(dir)) return 0;
    if (mkdir(dir, 0777) != 0) return cli_usage_error("reproduce", "-o: %s: cannot create (%s)", dir, strerror(errno));
    return 0;
}

static int write_outputs(const char *dir, const mresult *ms, int nm) {
    int rc = cli_reproduce_file(dir, "t10-fig12-13.csv", csv_grid, ms, nm);
    if (!rc) rc = cli_reproduce_file(dir, "t10-fig14.csv", csv_ops, ms, nm);
    if (!rc) rc = cli_reproduce_file(dir, "t10-fig19.csv", csv_curves, ms, nm);
    if (!rc) rc = cli_reproduce_file(dir, "t10-fig20.csv", csv_cores, ms, nm);
    if (!rc) rc = cli_reproduce_file(dir, "t10-fig12.svg", svg_grid, ms, nm);
    if (!rc) rc = cli_reproduce_file(dir, "t10-fig13.svg", svg_move, ms, nm);
    if (!rc) rc = cli_reproduce_file(dir, "t10-fig14.svg", svg_ops, ms, nm);
    if (!rc) rc = cli_reproduce_file(dir, "t10-fig19.svg", svg_curves, ms, nm);
    if (!rc) rc = cli_reproduce_file(dir, "t10-fig20.svg", svg_cores, ms, nm);
    if (!rc) rc = cli_reproduce_file(dir, "t10-fig21.csv", csv_fig21, ms, nm);
    if (!rc) rc = cli_reproduce_file(dir, "t10-fig21.svg", svg_fig21, ms, nm);
    return rc;
}

/* Splits --models into names (pointers into buf). */
static int split_models(const char *list, char *buf, size_t size, const char **names, int *n) {
    snprintf(buf, size, "%s", list);
    *n = 0;
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
        if (*n == MAX_MODELS) return cli_usage_error("reproduce", "--models: at most %d models", MAX_MODELS);
        if (!rotor_zoo_find(t)) {
            const char *known[64];
            int nk = 0;
            for (int i = 0; i < rotor_zoo_count() && nk < 64; i++) known[nk++] = rotor_zoo_at(i)->name;
            char hint[96];
            return cli_usage_error("reproduce", "--models: unknown model '%s'%s", t,
                                   rotor_suggest_phrase(t, known, nk, hint, sizeof hint));
        }
        names[(*n)++] = t;
    }
    if (*n == 0) return cli_usage_error("reproduce", "--models: expected a comma list of zoo models");
    return 0;
}

/* src/cli/reproducekapla.c: the seven networks on the chip (default
 * ipu-mk2) and the kapla-edge preset (Fig. 10). */
static int reproduce_kapla(const repro_args *a) {
    const char *cmd = "reproduce";
    if (a->max_batch) return cli_usage_error(cmd, "--max-batch: kapla runs KAPLA's batches (64, and 1 on the edge)");
    int threads = 0;
    rotor_chip chip, edge;
    rotor_error err = {{0}};
    if (cli_shared_threads(cmd, &a->sa, &threads)) return EXIT_BADINPUT;
    rotor_status st = cli_chip(a->sa.chip, a->sa.sets, a->sa.nsets, &chip, &err);
    if (!st) st = rotor_chip_preset("kapla-edge", &edge, &err);
    if (st) return cli_fail(cmd, st, &err);
    return cli_reproduce_kapla(a->models, 0, a->outdir ? a->outdir : "reproduce-kapla", a->json, &chip, &edge, threads,
                               a->sa.quiet);
}

int cmd_reproduce(int argc, char **argv) {
    const char *cmd = "reproduce";
    repro_args a = {0};
    int rc = parse_reproduce(argc, argv, &a);
    if (rc >= 0) return rc;
    if (a.full_grid && strcmp(a.what, "elk")) return cli_usage_error(cmd, "--full-grid: only elk takes it");
    if (!strcmp(a.what, "graphturbo")) { /* src/cli/reproducegt.c: Table 2's rows, its batches */
        rotor_chip gt;
        rotor_error gerr = {{0}};
        rotor_status gst = cli_chip(a.sa.chip ? a.sa.chip : "stcp920", a.sa.sets, a.sa.nsets, &gt, &gerr);
        if (a.max_batch) return cli_usage_error(cmd, "--max-batch: graphturbo runs Table 2's batches per cluster");
        if (gst) return cli_fail(cmd, gst, &gerr);
        return cli_reproduce_gt(a.models, a.outdir ? a.outdir : "reproduce-graphturbo", a.json, &gt, a.sa.quiet);
    }
    if (!strcmp(a.what, "kapla")) return reproduce_kapla(&a);
    int64_t max_batch = CLI_MAX_BATCH;
    rotor_compile_options co = {0}; /* the sweep's threads and plan cache */
    char buf[512];
    const char *names[MAX_MODELS];
    int nm = 0;
    if ((a.max_batch && cli_parse_i64(cmd, "--max-batch", a.max_batch, 1, CLI_MAX_BATCH, &max_batch)) ||
        cli_shared_threads(cmd, &a.sa, &co.threads) || cli_shared_cache(cmd, &a.sa, &co) || split_models(a.models       ? a.models
                                   : strcmp(a.what, "elk") ? DEFAULT_MODELS
                                                           : ELK_MODELS,
                                   buf, sizeof buf, names, &nm))
        return EXIT_BADINPUT;
    bool elk = !strcmp(a.what, "elk");
    rotor_error err = {{0}};
    rotor_chip chip;
    rotor_status st = cli_chip(a.sa.chip ? a.sa.chip : elk ? "ipu-pod4" : NULL, a.sa.sets, a.sa.nsets, &chip, &err);
    if (st) return cli_fail(cmd, st, &err);
    const char *dir = a.outdir ? a.outdir : elk ? "reproduce-elk" : "reproduce-t10";
    if ((rc = cli_reproduce_dir(dir))) return rc;
    if (elk) return cli_reproduce_elk(names, nm, max_batch, dir, a.json, &chip, co.threads, a.sa.quiet, a.full_grid);
    /* Figure 22 takes the LLMs (its own default list without --models);
     * Figures 12-21 the rest */
    rotor_gpu gpu;
    if ((st = rotor_gpu_resolve(a.gpu ? a.gpu : "a100-80gb", &gpu, &err))) return cli_fail(cmd, st, &err);
    char lbuf[512];
    const char *llms[MAX_MODELS];
    int nl = 0;
    if (!a.models && split_models(FIG22_MODELS, lbuf, sizeof lbuf, llms, &nl)) return EXIT_BADINPUT;
    for (int i = 0, k = 0; i < nm; i++) {
        if (a.models && rotor_zoo_find(names[i])->llm) llms[nl++] = names[i];
        else names[k++] = names[i];
        if (i == nm - 1) nm = k;
    }
    mresult *ms = calloc((size_t)(nm ? nm : 1), sizeof *ms);
    size_t nlm = (size_t)(nl ? nl : 1);
    fig22_run f22 = {.llms = llms, .nl = nl, .rs = calloc(nlm, sizeof *f22.rs), .st = calloc(nlm, sizeof *f22.st),
                     .errs = calloc(nlm, sizeof *f22.errs)};
    if (!ms || !f22.rs || !f22.st || !f22.errs) {
        free(ms);
        free(f22.rs);
        free(f22.st);
        free(f22.errs);
        return cli_nomem(cmd);
    }
    int total = nl;
    for (int i = 0; i < nm; i++) {
        ms[i].model = names[i];
        for (int k = 0; k < CORES_STEPS; k++) ms[i].cores[k] = chip.cores_per_chip / PART[k];
        for (int64_t b = 1; b <= max_batch; b *= 2) total++;
    }
    cli_progress prog;
    cli_progress_begin(&prog, cmd, "grid points and LLMs (up to)", a.sa.quiet);
    /* the grid's compiles share their searches within the run (planstore.h;
     * with or without the disk cache): out of memory, each searches alone */
    co.plan_store = rotor_plan_store_new();
    rc = run_grid(ms, nm, &f22, &chip, &gpu, &co, max_batch, &prog, total);
    rotor_plan_store_free(co.plan_store);
    co.plan_store = NULL;
    cli_progress_end(&prog);
    if (!rc) rc = write_outputs(dir, ms, nm);
    cJSON *root = NULL, *fig22 = NULL;
    if (!rc && a.json) {
        root = json_results(ms, nm, &chip, &gpu);
        rc = cli_reproduce_fig22(llms, nl, f22.rs, f22.st, f22.errs, &chip, &gpu, dir, true, &fig22);
        if (fig22) cJSON_AddItemToObject(root, "fig22", fig22);
        if (!rc) rc = cli_print_json(cmd, root);
        else cJSON_Delete(root);
    } else if (!rc) {
        if (nm) print_tables(ms, nm, &chip, &gpu);
        rc = cli_reproduce_fig22(llms, nl, f22.rs, f22.st, f22.errs, &chip, &gpu, dir, false, NULL);
        if (!rc)
            printf("\nfiles: %s/t10-fig12-13.csv, t10-fig14.csv, t10-fig19.csv, t10-fig20.csv, t10-fig21.csv, "
                   "t10-fig12.svg, t10-fig13.svg, t10-fig14.svg, t10-fig19.svg, t10-fig20.svg, t10-fig21.svg%s\n",
                   dir, nl ? ", t10-fig22.csv, t10-fig22.svg" : "");
    }
    free(f22.rs);
    free(f22.st);
    free(f22.errs);
    for (int i = 0; i < nm; i++)
        for (int k = 0; k < 2; k++) {
            free(ms[i].dist[k].speedups);
            free(ms[i].dist[k].names);
            free(ms[i].curve[k]);
        }
    free(ms);
    return rc;
}
