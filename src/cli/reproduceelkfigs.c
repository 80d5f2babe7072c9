/* reproduceelkfigs.c — `rotor reproduce elk`'s Table 2, Figures 23, 24
 * and 5-8 (Elk §4.4, §6.4, §3): runs src/pipeline/elkfigs.c and
 * elkfig6.c, prints the
 * tables beside the paper's numbers, writes the CSV and SVG files and the
 * JSON keys (docs/reproduction.md, "Elk"). */
#include "reproduceelkfigs.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"

#define ND ROTOR_PRELOAD_NDESIGNS
#define TRAIN_MODEL "llama2-13b" /* Elk Figure 24's */
#define DIT_MODEL "dit-xl"       /* Elk Figure 23's one-chip model */
/* Figure 24's forward pass: one sequence of 2,048 tokens (docs/reproduction.md) */
#define TRAIN_BATCH 1
#define TRAIN_SEQ 2048

static void progress_begin(cli_progress *p, const char *what, bool quiet) {
    cli_progress_begin(p, "reproduce", what, quiet);
}

int cli_elkfigs_run(const char *const *llms, int nm, int64_t batch, int64_t seq, const rotor_chip *chip, int threads,
                    bool quiet, bool full_grid, rotor_search_memo *memo, const cli_elk_t2 *t2, int nt2,
                    cli_elkfigs *out) {
    memset(out, 0, sizeof *out);
    for (int i = 0; i < nt2 && i < ROTOR_ELKFIGS_MAX_MODELS; i++) out->t2[out->nt2++] = t2[i];
    const char *train = llms[0];
    for (int i = 0; i < nm; i++)
        if (!strcmp(llms[i], TRAIN_MODEL)) train = llms[i];
    rotor_error err = {{0}};
    cli_progress prog;
    progress_begin(&prog, "Figure 23 schedules", quiet);
    rotor_elkcores_options co = {.models = llms, .nmodels = nm < ROTOR_ELKFIGS_MAX_MODELS ? nm : ROTOR_ELKFIGS_MAX_MODELS,
                                 .dit_model = DIT_MODEL, .full_grid = full_grid, .batch = batch, .seq = seq,
                                 .threads = threads, .progress = cli_progress_step, .progress_ctx = &prog,
                                 .memo = memo};
    rotor_status st = rotor_elkcores_run(&co, chip, &out->cores, &err);
    cli_progress_end(&prog);
    if (!st) {
        progress_begin(&prog, "Figure 24 schedules", quiet);
        rotor_elktrain_options to = {.model = train, .batch = TRAIN_BATCH, .seq = TRAIN_SEQ, .full_grid = full_grid,
                                     .threads = threads, .progress = cli_progress_step, .progress_ctx = &prog,
                                     .memo = memo};
        st = rotor_elktrain_run(&to, chip, &out->train, &err);
        cli_progress_end(&prog);
    }
    if (!st) st = rotor_elkmotiv_run(train, batch, seq, chip, threads, &out->motiv, &err);
    if (!st) {
        rotor_elkfig6_options fo = {.model = train, .batch = batch, .seq = seq, .threads = threads, .memo = memo};
        st = rotor_elkfig6_run(&fo, chip, &out->fig6, &err);
    }
    /* Table 2's DiT-XL row: Figure 23's point on one whole chip */
    for (int k = 0; !st && k < out->cores.ncores; k++) {
        const rotor_elk_point *p = rotor_elkcores_at(&out->cores, out->cores.nmodels - 1, k);
        if (out->cores.cores[k] == chip->cores_per_chip)
            out->t2[out->nt2++] = (cli_elk_t2){DIT_MODEL, p->fits, p->batch, p->factors};
    }
    return st ? cli_fail("reproduce", st, &err) : 0;
}

void cli_elkfigs_free(cli_elkfigs *f) {
    rotor_elkcores_free(&f->cores);
    rotor_elktrain_free(&f->train);
    rotor_elkmotiv_free(&f->motiv);
    rotor_elkfig6_free(&f->fig6);
}

/* ---- printing ---- */

static void print_t2(const cli_elkfigs *f) {
    printf("\nTable 2: the search's factors as Full counts them (rotor_preload_factors), paper in parentheses\n");
    printf("%-12s %5s %9s %9s %11s %11s %13s\n", "model", "batch", "C", "H", "P", "K", "N");
    for (int i = 0; i < f->nt2; i++) {
        const cli_elk_t2 *t = &f->t2[i];
        const rotor_preload_factors *p = rotor_elk_table2_paper(t->model);
        printf("%-12s %5lld", t->model, (long long)t->batch);
        if (!t->fits) {
            printf(" %9s\n", "x");
            continue;
        }
        const int64_t v[5] = {t->f.heavy_fit, t->f.heavy, t->f.plans, t->f.preload_numbers, t->f.ops};
        const int64_t q[5] = {p ? p->heavy_fit : -1, p ? p->heavy : -1, p ? p->plans : -1,
                              p ? p->preload_numbers : -1, p ? p->ops : -1};
        const int w[5] = {3, 3, 4, 4, 5};
        for (int k = 0; k < 5; k++) {
            if (q[k] >= 0) printf(" %*lld (%*lld)", w[k] + 1, (long long)v[k], w[k], (long long)q[k]);
            else printf(" %*lld %*s", w[k] + 1, (long long)v[k], w[k] + 2, "");
        }
        printf("\n");
    }
    printf("(LLMs: the Figure 18 point on the package; %s: Figure 23's point on one chip.  C, H: the §4.4 suffix "
           "tree; P: the Pareto plans the §4.3 allocation walks; K: preload numbers the §4.2 induction tried for "
           "one operator; N: operators scheduled, after rotor's grouping)\n",
           DIT_MODEL);
}

static double ratio(const rotor_elk_point *p, int a, int b) { return p->latency_s[a] / p->latency_s[b]; }

static void print_fig23(const rotor_elkcores_result *r) {
    printf("\nFigure 23: per-token latency (ms) against the cores per chip, HBM at %.1f GB/s per core "
           "(LLMs on the package at batch %lld; %s on one chip, one image)\n",
           r->hbm_gbps_per_core, (long long)(r->nmodels > 1 ? rotor_elkcores_at(r, 0, 0)->batch : 1), DIT_MODEL);
    printf("%-12s %6s %8s", "model", "cores", "HBM TB/s");
    for (int d = 0; d < ROTOR_PRELOAD_ROOFLINE; d++) printf(" %9s", rotor_preload_designs[d].name);
    printf(" %7s %7s %7s\n", "/basic", "/static", "% ideal");
    for (int i = 0; i < r->nmodels; i++)
        for (int k = 0; k < r->ncores; k++) {
            const rotor_elk_point *p = rotor_elkcores_at(r, i, k);
            if (!p->fits) continue;
            printf("%-12s %6lld %8.2f", r->models[i], (long long)r->cores[k], p->tbps);
            for (int d = 0; d < ROTOR_PRELOAD_ROOFLINE; d++) printf(" %9.4f", p->latency_s[d] * 1e3);
            printf(" %6.2fx %6.2fx %6.1f%%\n", ratio(p, ROTOR_PRELOAD_BASIC, ROTOR_PRELOAD_FULL),
                   ratio(p, ROTOR_PRELOAD_STATIC, ROTOR_PRELOAD_FULL),
                   100 * ratio(p, ROTOR_PRELOAD_IDEAL, ROTOR_PRELOAD_FULL));
        }
    rotor_elkcores_summary s, d;
    rotor_elkcores_summarise(r, -1, &s);
    rotor_elkcores_summarise(r, r->nmodels - 1, &d);
    printf("LLMs: Full over Basic %.2fx on average (%.2fx at most), over Static %.2fx (%.2fx), %.2f%% of Ideal, "
           "slower than Basic or Static at %d of %d points (paper: 1.71x, 1.36x)\n",
           s.full_over_basic, s.full_over_basic_max, s.full_over_static, s.full_over_static_max, s.full_pct_ideal,
           s.full_slower, s.points);
    if (r->has_dit && d.points)
        printf("%s: Full over Basic %.2fx, over Static %.2fx, %.2f%% of Ideal over %d points (paper: the benefit "
               "is less obvious than on LLMs, Full still best and near Ideal)\n",
               DIT_MODEL, d.full_over_basic, d.full_over_static, d.full_pct_ideal, d.points);
}

static void print_fig24(const rotor_elktrain_result *r) {
    const int F = ROTOR_PRELOAD_FULL;
    printf("\nFigure 24: %s's training forward pass (prefill of %lld x %lld tokens, no backward pass): Full's "
           "TFLOP/s over the %lld chips\n",
           r->model, (long long)r->batch, (long long)r->seq, (long long)r->chips);
    printf("%14s", "TFLOP/s peak");
    for (int h = 0; h < r->nhbm; h++) printf(" %8.2f", r->hbm_tbps[h]);
    printf("  HBM TB/s needed (95%% of the most)\n");
    for (int f = 0; f < r->nflops; f++) {
        printf("%14.0f", r->matrix_tflops[f] * (double)r->chips);
        for (int h = 0; h < r->nhbm; h++) {
            const rotor_elk_point *p = rotor_elktrain_at(r, f, h);
            if (p->fits) printf(" %8.1f", p->tflops[F]);
            else printf(" %8s", "x");
        }
        printf("  %.2f\n", r->need_tbps[f]);
    }
    printf("(columns: HBM TB/s over the chips; paper: 400 GB/s of HBM is enough for more than 650 TFLOP/s, and "
           "scaling HBM or the interconnect has little effect)\n");
}

static void print_motiv(const rotor_elkmotiv_result *r) {
    printf("\nFigures 5, 7, 8: %s's first layer, decode batch %lld, KV cache %lld: each operator's plans and its "
           "per-core interconnect demand (GB/s)\n",
           r->model, (long long)r->batch, (long long)r->seq);
    printf("%-24s %5s %10s %10s %9s %9s %9s %9s\n", "operator", "plans", "fastest us", "slowest us", "min pre",
           "max pre", "min+HBM", "max+HBM");
    for (int i = 0; i < r->nops; i++) {
        const rotor_elkmotiv_op *o = &r->ops[i];
        printf("%-24.24s %5d %10.3f %10.3f %9.2f %9.2f %9.2f %9.2f\n", o->name, o->nplans,
               o->nplans ? o->time_us[0] : 0.0, o->nplans ? o->time_us[o->nplans - 1] : 0.0, o->intercore_min_gbps,
               o->intercore_max_gbps, o->total_min_gbps, o->total_max_gbps);
    }
    printf("(paper Figure 5: faster plans need more space; Figure 7: MaxPreload cuts the inter-core demand; "
           "Figure 8: preloads spread it)\n");
}

/* Whether v[0..n) over the sizes that fit falls (non-increasing). */
static bool falls(const rotor_elkfig6_result *r, size_t off) {
    double last = INFINITY;
    for (int k = 0; k < r->n; k++) {
        if (!r->s[k].fits) continue;
        double v = *(const double *)((const char *)&r->s[k] + off);
        if (v > last) return false;
        last = v;
    }
    return true;
}

static void print_fig6(const rotor_elkfig6_result *r) {
    printf("\nFigure 6: %s's decode step (batch %lld, KV cache %lld), Static with the preload space forced: the "
           "HBM bandwidth demand of one chip (GB/s) across the step\n",
           r->model, (long long)r->batch, (long long)r->seq);
    printf("%9s %9s %11s %8s %5s %10s %10s %10s %7s\n", "preload", "exec", "latency us", "serial", "gaps", "peak",
           "mean", "peak/mean", "CoV");
    for (int k = 0; k < r->n; k++) {
        const rotor_elkfig6_series *s = &r->s[k];
        printf("%6lld KB %6lld KB", (long long)(s->space_bytes / 1024),
               (long long)((r->sram_bytes - s->space_bytes) / 1024));
        if (!s->fits) {
            printf(" %11s  (%s)\n", "x", s->nofit);
            continue;
        }
        printf(" %11.2f %7.2f%% %5d %10.1f %10.1f %10.2f %7.3f\n", s->latency_us,
               s->hbm_bytes ? 100.0 * (double)s->serial_bytes / (double)s->hbm_bytes : 0.0, s->serial_preloads,
               s->peak_gbps, s->mean_gbps, s->peak_over_mean, s->cov);
    }
    printf("(per-core preload and execution space; serial: the bytes of preloads no bandwidth hides, in gaps of "
           "their own at their preload times.  Peak falls as the space grows: %s; CoV falls: %s.  Paper: with small "
           "preload space the demand fluctuates drastically, larger preload space smooths it out; "
           "docs/reproduction.md, \"Figure 6\")\n",
           falls(r, offsetof(rotor_elkfig6_series, peak_gbps)) ? "yes" : "no",
           falls(r, offsetof(rotor_elkfig6_series, cov)) ? "yes" : "no");
}

void cli_elkfigs_print(const cli_elkfigs *f) {
    print_t2(f);
    print_fig23(&f->cores);
    print_fig24(&f->train);
    print_motiv(&f->motiv);
    print_fig6(&f->fig6);
}

/* ---- files ---- */

static void csv_t2(FILE *o, const void *data, int n) {
    const cli_elkfigs *f = data;
    (void)n;
    fputs("model,batch,fits,c,h,p,k,n,paper_c,paper_h,paper_p,paper_k,paper_n\n", o);
    for (int i = 0; i < f->nt2; i++) {
        const cli_elk_t2 *t = &f->t2[i];
        const rotor_preload_factors *p = rotor_elk_table2_paper(t->model);
        rotor_preload_factors z = {0};
        if (!p) p = &z;
        fprintf(o, "%s,%lld,%d,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld\n", t->model, (long long)t->batch,
                t->fits, (long long)t->f.heavy_fit, (long long)t->f.heavy, (long long)t->f.plans,
                (long long)t->f.preload_numbers, (long long)t->f.ops, (long long)p->heavy_fit, (long long)p->heavy,
                (long long)p->plans, (long long)p->preload_numbers, (long long)p->ops);
    }
}

#define POINT_HEADER "design,latency_ms,hbm_util,link_util,tflops\n"

static void csv_designs(FILE *o, const char *prefix, const rotor_elk_point *p) {
    for (int d = 0; d < ND && p->fits; d++)
        fprintf(o, "%s%s,%.9f,%.6f,%.6f,%.6f\n", prefix, rotor_preload_designs[d].name, p->latency_s[d] * 1e3,
                p->hbm[d], p->link[d], p->tflops[d]);
}

static void csv_fig23(FILE *o, const void *data, int n) {
    const rotor_elkcores_result *r = &((const cli_elkfigs *)data)->cores;
    (void)n;
    fputs("model,chips,cores_per_chip,batch,hbm_tbps," POINT_HEADER, o);
    for (int i = 0; i < r->nmodels; i++)
        for (int k = 0; k < r->ncores; k++) {
            const rotor_elk_point *p = rotor_elkcores_at(r, i, k);
            char prefix[128];
            snprintf(prefix, sizeof prefix, "%s,%lld,%lld,%lld,%.6g,", r->models[i],
                     r->has_dit && i == r->nmodels - 1 ? 1LL : (long long)r->chips, (long long)r->cores[k],
                     (long long)p->batch, p->tbps);
            csv_designs(o, prefix, p);
        }
}

static void csv_fig24(FILE *o, const void *data, int n) {
    const rotor_elktrain_result *r = &((const cli_elkfigs *)data)->train;
    (void)n;
    fputs("model,batch,seq,matrix_tflops_per_chip,hbm_tbps," POINT_HEADER, o);
    for (int f = 0; f < r->nflops; f++)
        for (int h = 0; h < r->nhbm; h++) {
            char prefix[128];
            snprintf(prefix, sizeof prefix, "%s,%lld,%lld,%.6g,%.6g,", r->model, (long long)r->batch,
                     (long long)r->seq, r->matrix_tflops[f], r->hbm_tbps[h]);
            csv_designs(o, prefix, rotor_elktrain_at(r, f, h));
        }
}

static void csv_fig5(FILE *o, const void *data, int n) {
    const rotor_elkmotiv_result *r = &((const cli_elkfigs *)data)->motiv;
    (void)n;
    fputs("model,op,plan,time_us,space_kb\n", o);
    for (int i = 0; i < r->nops; i++)
        for (int k = 0; k < r->ops[i].nplans; k++)
            fprintf(o, "%s,%s,%d,%.6f,%.3f\n", r->model, r->ops[i].name, k, r->ops[i].time_us[k],
                    r->ops[i].space_kb[k]);
}

static void csv_fig78(FILE *o, const void *data, int n) {
    const rotor_elkmotiv_result *r = &((const cli_elkfigs *)data)->motiv;
    (void)n;
    fputs("model,index,op,hbm_mb,exec_us,intercore_min_gbps,intercore_max_gbps,total_min_gbps,total_max_gbps\n", o);
    for (int i = 0; i < r->nops; i++) {
        const rotor_elkmotiv_op *x = &r->ops[i];
        fprintf(o, "%s,%d,%s,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f\n", r->model, i, x->name, x->hbm_mb, x->exec_us,
                x->intercore_min_gbps, x->intercore_max_gbps, x->total_min_gbps, x->total_max_gbps);
    }
}

/* Figure 6: a row at every segment boundary of any size, each size's
 * demand from there (blank past its end or when it does not fit). */
static void csv_fig6(FILE *o, const void *data, int n) {
    const rotor_elkfig6_result *r = &((const cli_elkfigs *)data)->fig6;
    (void)n;
    fputs("time_us", o);
    for (int k = 0; k < r->n; k++) fprintf(o, ",demand_gbps_%lldkb", (long long)(r->s[k].space_bytes / 1024));
    fputc('\n', o);
    int at[ROTOR_ELKFIG6_MAX_SIZES] = {0};
    for (;;) {
        double t = INFINITY;
        for (int k = 0; k < r->n; k++)
            if (r->s[k].fits && at[k] <= r->s[k].nseg) t = fmin(t, r->s[k].t_us[at[k]]);
        if (isinf(t)) break;
        fprintf(o, "%.6f", t);
        for (int k = 0; k < r->n; k++) {
            const rotor_elkfig6_series *s = &r->s[k];
            if (s->fits && at[k] <= s->nseg && s->t_us[at[k]] == t) at[k]++;
            if (s->fits && at[k] >= 1 && at[k] <= s->nseg) fprintf(o, ",%.6f", s->gbps[at[k] - 1]);
            else fputc(',', o);
        }
        fputc('\n', o);
    }
}

enum { MAXS = 2 * (ROTOR_ELKFIGS_MAX_MODELS + 1), MAXX = 64 };

/* Figure 23: Full (solid) and Static (dashed) against the cores. */
static void svg_fig23(FILE *o, const void *data, int n) {
    const rotor_elkcores_result *r = &((const cli_elkfigs *)data)->cores;
    (void)n;
    double x[MAXS][ROTOR_ELKFIGS_MAX_GRID], y[MAXS][ROTOR_ELKFIGS_MAX_GRID];
    char names[MAXS][64];
    cli_series s[MAXS];
    int ns = 0;
    const int shown[2] = {ROTOR_PRELOAD_FULL, ROTOR_PRELOAD_STATIC};
    for (int i = 0; i < r->nmodels; i++)
        for (int v = 0; v < 2 && ns < MAXS; v++, ns++) {
            int c = 0;
            for (int k = 0; k < r->ncores; k++) {
                const rotor_elk_point *p = rotor_elkcores_at(r, i, k);
                if (!p->fits) continue;
                x[ns][c] = (double)r->cores[k];
                y[ns][c++] = p->latency_s[shown[v]] * 1e3;
            }
            snprintf(names[ns], sizeof names[ns], "%s %s", r->models[i], rotor_preload_designs[shown[v]].name);
            s[ns] = (cli_series){names[ns], c, x[ns], y[ns], v == 1};
        }
    cli_plot p = {"Elk Figure 23: per-token latency against the cores per chip (HBM 2.7 GB/s per core)",
                  "cores per chip", "latency (ms)", true, true};
    cli_svg_lines(o, &p, s, ns);
}

/* Figure 24: Full's TFLOP/s against the HBM bandwidth, one line per rate. */
static void svg_fig24(FILE *o, const void *data, int n) {
    const rotor_elktrain_result *r = &((const cli_elkfigs *)data)->train;
    (void)n;
    double x[ROTOR_ELKFIGS_MAX_GRID][ROTOR_ELKFIGS_MAX_GRID], y[ROTOR_ELKFIGS_MAX_GRID][ROTOR_ELKFIGS_MAX_GRID];
    char names[ROTOR_ELKFIGS_MAX_GRID][64];
    cli_series s[ROTOR_ELKFIGS_MAX_GRID];
    for (int f = 0; f < r->nflops; f++) {
        int c = 0;
        for (int h = 0; h < r->nhbm; h++) {
            const rotor_elk_point *p = rotor_elktrain_at(r, f, h);
            if (!p->fits) continue;
            x[f][c] = r->hbm_tbps[h];
            y[f][c++] = p->tflops[ROTOR_PRELOAD_FULL];
        }
        snprintf(names[f], sizeof names[f], "%.0f TFLOP/s peak", r->matrix_tflops[f] * (double)r->chips);
        s[f] = (cli_series){names[f], c, x[f], y[f], false};
    }
    cli_plot p = {"Elk Figure 24: Llama2-13B training forward pass, Full's TFLOP/s", "HBM bandwidth, all chips (TB/s)",
                  "TFLOP/s", true, false};
    cli_svg_lines(o, &p, s, r->nflops);
}

/* Figure 5: each operator's plans, time against space. */
static void svg_fig5(FILE *o, const void *data, int n) {
    const rotor_elkmotiv_result *r = &((const cli_elkfigs *)data)->motiv;
    (void)n;
    cli_series s[MAXX];
    int ns = 0;
    for (int i = 0; i < r->nops && ns < MAXX; i++)
        if (r->ops[i].nplans > 1)
            s[ns++] = (cli_series){r->ops[i].name, r->ops[i].nplans, r->ops[i].space_kb, r->ops[i].time_us, false};
    cli_plot p = {"Elk Figure 5: execution time against execution space, one line per operator",
                  "execution space per core (KB)", "execution time (us)", true, true};
    cli_svg_lines(o, &p, s, ns);
}

/* Figures 7 and 8: demand by operator, MinPreload solid, MaxPreload dashed. */
static void svg_fig78(FILE *o, const void *data, int n) {
    const rotor_elkmotiv_result *r = &((const cli_elkfigs *)data)->motiv;
    (void)n;
    double x[MAXX], y[4][MAXX];
    int c = 0;
    for (int i = 0; i < r->nops && c < MAXX; i++, c++) {
        x[c] = i + 1;
        y[0][c] = r->ops[i].intercore_min_gbps;
        y[1][c] = r->ops[i].intercore_max_gbps;
        y[2][c] = r->ops[i].total_min_gbps;
        y[3][c] = r->ops[i].total_max_gbps;
    }
    cli_series s[4] = {{"Fig. 7 MinPreload", c, x, y[0], false},
                       {"Fig. 7 MaxPreload", c, x, y[1], true},
                       {"Fig. 8 MinPreload + HBM", c, x, y[2], false},
                       {"Fig. 8 MaxPreload + HBM", c, x, y[3], true}};
    cli_plot p = {"Elk Figures 7 and 8: per-core interconnect demand, operators of one layer in order",
                  "operator", "GB/s per core", false, false};
    cli_svg_lines(o, &p, s, 4);
}

/* Figure 6: each size's demand as steps over time, the first twentieth of
 * the longest step (a point per step corner: the whole step is thousands;
 * the CSV has it all). */
#define FIG6_SVG_SHARE 20
static void svg_fig6(FILE *o, const void *data, int n) {
    const rotor_elkfig6_result *r = &((const cli_elkfigs *)data)->fig6;
    (void)n;
    cli_series s[ROTOR_ELKFIG6_MAX_SIZES] = {{0}};
    double *xy[ROTOR_ELKFIG6_MAX_SIZES] = {0}, end = 0;
    char names[ROTOR_ELKFIG6_MAX_SIZES][32];
    int ns = 0;
    for (int k = 0; k < r->n; k++)
        if (r->s[k].fits) end = fmax(end, r->s[k].t_us[r->s[k].nseg] / FIG6_SVG_SHARE);
    for (int k = 0; k < r->n; k++) {
        const rotor_elkfig6_series *v = &r->s[k];
        if (!v->fits || !(xy[ns] = malloc(sizeof(double) * 4 * ((size_t)v->nseg + 1)))) continue;
        double *x = xy[ns], *y = x + 2 * ((size_t)v->nseg + 1);
        int c = 0;
        for (int j = 0; j < v->nseg && v->t_us[j] < end; j++, c += 2) {
            x[c] = v->t_us[j], x[c + 1] = fmin(v->t_us[j + 1], end);
            y[c] = y[c + 1] = v->gbps[j];
        }
        snprintf(names[ns], sizeof names[ns], "%lld KB", (long long)(v->space_bytes / 1024));
        s[ns] = (cli_series){names[ns], c, x, y, false};
        ns++;
    }
    char title[128];
    snprintf(title, sizeof title, "Elk Figure 6: HBM demand across the first %.0f us, per-core preload space", end);
    cli_plot p = {title, "time (us)", "HBM demand, one chip (GB/s)", false, false};
    cli_svg_lines(o, &p, s, ns);
    for (int k = 0; k < ns; k++) free(xy[k]);
}

/* The files, in the order CLI_ELKFIGS_FILES names them. */
static const cli_figure_file FILES[] = {{"elk-table2.csv", csv_t2}, {"elk-fig23.csv", csv_fig23}, {"elk-fig23.svg", svg_fig23},
             {"elk-fig24.csv", csv_fig24}, {"elk-fig24.svg", svg_fig24}, {"elk-fig5.csv", csv_fig5},
             {"elk-fig5.svg", svg_fig5}, {"elk-fig7-8.csv", csv_fig78}, {"elk-fig7-8.svg", svg_fig78},
             {"elk-fig6.csv", csv_fig6}, {"elk-fig6.svg", svg_fig6}};

int cli_elkfigs_write(const char *dir, const cli_elkfigs *f) {
    return cli_reproduce_files(dir, FILES, sizeof FILES / sizeof FILES[0], f, 0);
}

/* ---- JSON ---- */

static void json_factors(cJSON *o, const char *key, const rotor_preload_factors *f) {
    cJSON *x = cJSON_AddObjectToObject(o, key);
    cJSON_AddNumberToObject(x, "c", (double)f->heavy_fit);
    cJSON_AddNumberToObject(x, "h", (double)f->heavy);
    cJSON_AddNumberToObject(x, "p", (double)f->plans);
    cJSON_AddNumberToObject(x, "k", (double)f->preload_numbers);
    cJSON_AddNumberToObject(x, "n", (double)f->ops);
}

static cJSON *json_designs(cJSON *arr, const rotor_elk_point *p) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "fits", p->fits);
    for (int d = 0; d < ND && p->fits; d++) {
        cJSON *x = cJSON_AddObjectToObject(o, rotor_preload_designs[d].name);
        cJSON_AddNumberToObject(x, "latency_ms", p->latency_s[d] * 1e3);
        cJSON_AddNumberToObject(x, "hbm_util", p->hbm[d]);
        cJSON_AddNumberToObject(x, "tflops", p->tflops[d]);
    }
    cJSON_AddItemToArray(arr, o);
    return o;
}

static void json_fig23(cJSON *root, const rotor_elkcores_result *r) {
    cJSON *o = cJSON_AddObjectToObject(root, "fig23");
    cJSON_AddNumberToObject(o, "hbm_gbps_per_core", r->hbm_gbps_per_core);
    rotor_elkcores_summary s;
    rotor_elkcores_summarise(r, -1, &s);
    cJSON_AddNumberToObject(o, "full_over_basic_mean", s.full_over_basic);
    cJSON_AddNumberToObject(o, "full_over_static_mean", s.full_over_static);
    cJSON_AddNumberToObject(o, "full_slower", s.full_slower);
    cJSON_AddNumberToObject(o, "paper_full_over_basic", 1.71);
    cJSON_AddNumberToObject(o, "paper_full_over_static", 1.36);
    cJSON *pts = cJSON_AddArrayToObject(o, "points");
    for (int i = 0; i < r->nmodels; i++)
        for (int k = 0; k < r->ncores; k++) {
            cJSON *x = json_designs(pts, rotor_elkcores_at(r, i, k));
            cJSON_AddStringToObject(x, "model", r->models[i]);
            cJSON_AddNumberToObject(x, "cores_per_chip", (double)r->cores[k]);
        }
}

static void json_fig24(cJSON *root, const rotor_elktrain_result *r) {
    cJSON *o = cJSON_AddObjectToObject(root, "fig24");
    cJSON_AddStringToObject(o, "model", r->model);
    cJSON_AddNumberToObject(o, "batch", (double)r->batch);
    cJSON_AddNumberToObject(o, "seq", (double)r->seq);
    cJSON *need = cJSON_AddArrayToObject(o, "hbm_tbps_needed"), *pts = cJSON_AddArrayToObject(o, "points");
    for (int f = 0; f < r->nflops; f++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddNumberToObject(x, "matrix_tflops_per_chip", r->matrix_tflops[f]);
        if (!isnan(r->need_tbps[f])) cJSON_AddNumberToObject(x, "hbm_tbps", r->need_tbps[f]);
        cJSON_AddItemToArray(need, x);
        for (int h = 0; h < r->nhbm; h++) {
            cJSON *y = json_designs(pts, rotor_elktrain_at(r, f, h));
            cJSON_AddNumberToObject(y, "matrix_tflops_per_chip", r->matrix_tflops[f]);
            cJSON_AddNumberToObject(y, "hbm_tbps", r->hbm_tbps[h]);
        }
    }
}

static void json_fig6(cJSON *root, const rotor_elkfig6_result *r) {
    cJSON *o = cJSON_AddObjectToObject(root, "fig6");
    cJSON_AddStringToObject(o, "model", r->model);
    cJSON_AddNumberToObject(o, "batch", (double)r->batch);
    cJSON_AddNumberToObject(o, "seq", (double)r->seq);
    cJSON *arr = cJSON_AddArrayToObject(o, "series");
    for (int k = 0; k < r->n; k++) {
        const rotor_elkfig6_series *s = &r->s[k];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddNumberToObject(x, "preload_kb", (double)(s->space_bytes / 1024));
        cJSON_AddBoolToObject(x, "fits", s->fits);
        if (s->fits) {
            cJSON_AddNumberToObject(x, "latency_us", s->latency_us);
            cJSON_AddNumberToObject(x, "hbm_bytes", (double)s->hbm_bytes);
            cJSON_AddNumberToObject(x, "serial_bytes", (double)s->serial_bytes);
            cJSON_AddNumberToObject(x, "peak_gbps", s->peak_gbps);
            cJSON_AddNumberToObject(x, "mean_gbps", s->mean_gbps);
            cJSON_AddNumberToObject(x, "cov", s->cov);
            cJSON *t = cJSON_AddArrayToObject(x, "time_us"), *g = cJSON_AddArrayToObject(x, "demand_gbps");
            for (int j = 0; j < s->nseg; j++) {
                cJSON_AddItemToArray(t, cJSON_CreateNumber(s->t_us[j]));
                cJSON_AddItemToArray(g, cJSON_CreateNumber(s->gbps[j]));
            }
        }
        cJSON_AddItemToArray(arr, x);
    }
}

void cli_elkfigs_json(cJSON *root, const cli_elkfigs *f) {
    cJSON *t2 = cJSON_AddArrayToObject(root, "table2");
    for (int i = 0; i < f->nt2; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "model", f->t2[i].model);
        cJSON_AddNumberToObject(o, "batch", (double)f->t2[i].batch);
        cJSON_AddBoolToObject(o, "fits", f->t2[i].fits);
        if (f->t2[i].fits) json_factors(o, "rotor", &f->t2[i].f);
        const rotor_preload_factors *p = rotor_elk_table2_paper(f->t2[i].model);
        if (p) json_factors(o, "paper", p);
        cJSON_AddItemToArray(t2, o);
    }
    json_fig23(root, &f->cores);
    json_fig24(root, &f->train);
    cJSON *m = cJSON_AddArrayToObject(root, "fig5_8");
    for (int i = 0; i < f->motiv.nops; i++) {
        const rotor_elkmotiv_op *x = &f->motiv.ops[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "op", x->name);
        cJSON_AddNumberToObject(o, "plans", x->nplans);
        cJSON_AddNumberToObject(o, "intercore_min_gbps", x->intercore_min_gbps);
        cJSON_AddNumberToObject(o, "intercore_max_gbps", x->intercore_max_gbps);
        cJSON_AddNumberToObject(o, "total_min_gbps", x->total_min_gbps);
        cJSON_AddNumberToObject(o, "total_max_gbps", x->total_max_gbps);
        cJSON_AddItemToArray(m, o);
    }
    json_fig6(root, &f->fig6);
}
