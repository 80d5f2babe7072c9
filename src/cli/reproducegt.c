/* reproducegt.c — `rotor reproduce graphturbo`: GraphTurbo's evaluation
 * (GraphTurbo §5) as rotor_gtrepro_run computes it (src/pipeline/gtrepro.c),
 * printed beside the paper's numbers, as JSON (rotor-reproduce-graphturbo,
 * version 2), and written as CSV and SVG files (docs/reproduction.md,
 * "GraphTurbo"): Figures 14 and 15, Tables 1, 3 and 4.  This file only
 * parses, prints and writes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "rotor/base/suggest.h"
#include "pipeline/docint.h"
#include "rotor/pipeline/gtrepro.h"

#define NSTEPS ROTOR_DSA_STEPS

/* --models: Table 2's names, comma separated (NULL: every row). */
static int parse_models(const char *list, const rotor_gtrepro_entry **out, int *n) {
    *n = 0;
    if (!list) {
        for (int i = 0; i < ROTOR_GTREPRO_MODELS; i++) out[(*n)++] = &rotor_gtrepro_paper[i];
        return 0;
    }
    const char *known[ROTOR_GTREPRO_MODELS];
    char names[256] = "";
    for (int i = 0; i < ROTOR_GTREPRO_MODELS; i++) {
        known[i] = rotor_gtrepro_paper[i].name;
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", known[i]);
    }
    for (const char *p = list;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == 0)
            return cli_usage_error("reproduce", "--models: an empty name in '%s' (Table 2's: %s)", list, names);
        char word[64];
        snprintf(word, sizeof word, "%.*s", (int)(len < sizeof word ? len : sizeof word - 1), p);
        const rotor_gtrepro_entry *e = rotor_gtrepro_find(word);
        char hint[96];
        if (!e)
            return cli_usage_error("reproduce", "--models: unknown model '%s'%s (Table 2's: %s)", word,
                                   rotor_suggest_phrase(word, known, ROTOR_GTREPRO_MODELS, hint, sizeof hint), names);
        for (int i = 0; i < *n; i++) /* a model twice would be two rows of one table */
            if (out[i] == e) return cli_usage_error("reproduce", "--models: '%s' is given twice", e->name);
        if (*n == ROTOR_GTREPRO_MODELS) return cli_usage_error("reproduce", "--models: at most %d models", *n);
        out[(*n)++] = e;
        if (!end) return 0;
        p = end + 1;
    }
}

/* ---- tables ---- */

static void print_fig14(const rotor_gtrepro_result *r) {
    printf("Figure 14: GraphTurbo (step graphturbo) over the per-layer baseline (TVM's schedule, step per-layer),\n"
           "at GraphTurbo's batches per cluster (Table 2)\n");
    printf("%-5s %-13s %-11s %9s %15s %15s %8s %11s %-12s %11s\n", "label", "model", "zoo", "batch/cl",
           "per-layer (ms)", "graphturbo (ms)", "speedup", "throughput", "unit", "paper TVM");
    for (int i = 0; i < r->nmodels; i++) {
        const rotor_gtrepro_model *m = &r->models[i];
        const rotor_gtrepro_entry *e = m->entry;
        printf("(%c)   %-13s %-11s %9lld %15.3f %15.3f %7.2fx %11.1f %-12s %11.0f\n", e->label, e->name, e->model,
               (long long)e->batch, m->dsa[ROTOR_DSA_PER_LAYER].seconds * 1e3,
               m->dsa[ROTOR_DSA_GRAPHTURBO].seconds * 1e3, m->speedup[ROTOR_DSA_GRAPHTURBO], m->throughput, e->unit,
               e->tvm_throughput);
    }
    const rotor_gtrepro_summary *s = &r->summary;
    printf("mean %.2fx (geometric %.2fx) over %d models (paper: %.2fx over TVM on average; its per-model speedups\n"
           "are in its figure only)\n\n",
           s->speedup_mean[ROTOR_DSA_GRAPHTURBO], s->speedup_geomean, s->n, ROTOR_GTREPRO_PAPER_MEAN);
}

static void print_fig15(const rotor_gtrepro_result *r) {
    printf("Figure 15: each step over per-layer, and (gain) over the step before\n");
    printf("%-13s", "model");
    for (int k = 1; k < NSTEPS; k++) printf(" %10s", rotor_dsa_step_name((rotor_dsa_step)k));
    for (int k = 1; k < NSTEPS; k++) printf(" %9s", rotor_dsa_step_name((rotor_dsa_step)k));
    printf("\n%-13s %43s %39s\n", "", "(over per-layer)", "(gain over the step before)");
    for (int i = 0; i < r->nmodels; i++) {
        const rotor_gtrepro_model *m = &r->models[i];
        printf("%-13s", m->entry->name);
        for (int k = 1; k < NSTEPS; k++) printf(" %9.2fx", m->speedup[k]);
        for (int k = 1; k < NSTEPS; k++) printf(" %8.2fx", m->gain[k]);
        printf("\n");
    }
    const rotor_gtrepro_summary *s = &r->summary;
    printf("%-13s", "mean");
    for (int k = 1; k < NSTEPS; k++) printf(" %9.2fx", s->speedup_mean[k]);
    for (int k = 1; k < NSTEPS; k++) printf(" %8.2fx", s->gain_mean[k]);
    printf("\n(paper: lb %.2fx over TVM on average, here %.2fx; instances %.2fx over lb, here %.2fx; cross-layer\n"
           "%.2fx over instances, here %.2fx; gb \"do[es] not always obtain positive speedups over TVM\")\n\n",
           ROTOR_GTREPRO_PAPER_LB, s->speedup_mean[ROTOR_DSA_LB], ROTOR_GTREPRO_PAPER_INSTANCES,
           s->gain_mean[ROTOR_DSA_INSTANCES], ROTOR_GTREPRO_PAPER_CROSS, s->gain_mean[ROTOR_DSA_GRAPHTURBO]);
}

static void print_table1(const rotor_gtrepro_result *r) {
    printf("Table 1: BERT-128 (bert-large, seq 128) over %lld clusters, sentences/s and latency (ms)\n",
           (long long)r->clusters);
    printf("%5s %6s %11s %10s %11s %10s %5s %5s %5s %9s | %11s %8s | %11s %8s %5s\n", "batch", "per cl", "graphturbo",
           "latency", "per-layer", "latency", "LB", "GB", "DDR", "DDR (MB)", "paper GT", "latency", "paper TVM",
           "latency", "iter");
    for (int k = 0; k < ROTOR_GTREPRO_T1; k++) {
        const rotor_gtrepro_t1 *t = &r->t1[k];
        const rotor_gtrepro_t1_row *p = &rotor_gtrepro_t1_paper[k];
        printf("%5lld %6lld %11.1f %10.3f %11.1f %10.3f %5d %5d %5d %9.1f | %11.0f %8.2f | %11.0f %8.2f %5lld\n",
               (long long)t->batch, (long long)t->per_cluster, t->gt_throughput, t->gt_s * 1e3,
               t->per_layer_throughput, t->per_layer_s * 1e3, t->tensors[ROTOR_GT_LB], t->tensors[ROTOR_GT_GB],
               t->tensors[ROTOR_GT_DDR], t->ddr_bytes / 1e6, p->gt_throughput, p->gt_latency_ms, p->tvm_throughput, p->tvm_latency_ms,
               (long long)p->tvm_iter);
    }
    printf("(paper: GraphTurbo's throughput rises to 4052 at 8 a cluster, then falls to 2716 at 16 as §4.3 spills;\n"
           "TVM runs at most 4 a cluster and loops; 4052 sentences/s would need 347 TFLOP/s of BERT-Large's\n"
           "2 x 335M x 128 FLOPs a sentence, over the 128 TFLOP/s FP16 peak: docs/reproduction.md)\n\n");
}

/* A paper count, "-" when the table leaves it blank. */
static void paper_count(int v) {
    if (v < 0) printf(" %5s", "-");
    else printf(" %5d", v);
}

static void print_table3(const rotor_gtrepro_result *r) {
    printf("Table 3: activation values in DDR, the GB (LLB) and the LB (L1): rotor's per-layer (TVM) and graphturbo\n"
           "(GT), then the paper's TVM, crafted code and GraphTurbo; the model's inputs, which the host writes into\n"
           "DDR whatever the schedule, are counted by neither\n");
    const char *lv[3] = {"DDR", "GB", "LB"};
    printf("%-13s", "model");
    for (int l = 0; l < 3; l++) printf(" | %-3s %5s %5s %5s %5s %5s", lv[l], "TVM", "GT", "pTVM", "pcraf", "pGT");
    printf("\n");
    const rotor_gt_scope sc[3] = {ROTOR_GT_DDR, ROTOR_GT_GB, ROTOR_GT_LB};
    for (int i = 0; i < r->nmodels; i++) {
        const rotor_gtrepro_model *m = &r->models[i];
        const rotor_gtrepro_entry *e = m->entry;
        const int *paper[3] = {e->ddr, e->llb, e->l1};
        printf("%-13s", e->name);
        for (int l = 0; l < 3; l++) {
            printf(" |    %5d %5d", m->dsa[ROTOR_DSA_PER_LAYER].tensors[sc[l]], m->dsa[ROTOR_DSA_GRAPHTURBO].tensors[sc[l]]);
            for (int v = 0; v < 3; v++) paper_count(paper[l][v]);
        }
        printf("\n");
    }
    printf("\n");
}

static void print_table4(const rotor_gtrepro_result *r) {
    printf("Table 4: compile time (s): rotor's pipeline (zoo build, simplify, group, the five schedules, and\n"
           "again at each number of passes) and the graphturbo schedule alone, beside the paper's TVM, AStitch\n"
           "and GraphTurbo\n");
    printf("%-13s %10s %10s %8s %8s %10s\n", "model", "pipeline", "schedule", "TVM", "AStitch", "GraphTurbo");
    for (int i = 0; i < r->nmodels; i++) {
        const rotor_gtrepro_model *m = &r->models[i];
        const double *c = m->entry->compile_s;
        printf("%-13s %10.3f %10.3f %8.0f %8.0f %10.0f%s\n", m->entry->name, m->pipeline_s, m->schedule_s, c[0], c[1],
               c[2], m->pipeline_s > ROTOR_GTREPRO_TARGET_S ? "  over the 2 s target" : "");
    }
    const rotor_gtrepro_summary *s = &r->summary;
    if (s->over_target)
        printf("issue 42's speed target (each model at most %.0f s): %d over, the slowest %.3f s\n\n",
               ROTOR_GTREPRO_TARGET_S, s->over_target, s->slowest_pipeline_s);
    else
        printf("issue 42's speed target (each model at most %.0f s): met, the slowest %.3f s\n\n",
               ROTOR_GTREPRO_TARGET_S, s->slowest_pipeline_s);
}

/* §5.1's loop execution within a cluster: each step at its fastest number
 * of passes of Table 2's batch a cluster (rotor_pipeline_dsa_loops), and
 * Table 1's batches likewise. */
static void print_loops(const rotor_gtrepro_result *r) {
    printf("Loop execution within a cluster (§5.1): each step at its fastest number of passes of Table 2's batch a\n"
           "cluster, one after another; a pass of fewer holds fewer activations and reads the weights again\n");
    printf("%-13s %9s %7s %15s %7s %15s %8s %9s %5s %11s\n", "model", "batch/cl", "passes", "per-layer (ms)", "passes",
           "graphturbo (ms)", "speedup", "inst gain", "DDR", "throughput");
    for (int i = 0; i < r->nmodels; i++) {
        const rotor_gtrepro_model *m = &r->models[i];
        const rotor_dsa_loop *b = &m->loops.step[ROTOR_DSA_PER_LAYER], *g = &m->loops.step[ROTOR_DSA_GRAPHTURBO];
        printf("%-13s %9lld %7lld %15.3f %7lld %15.3f %7.2fx %8.2fx %5d %11.1f\n", m->entry->name,
               (long long)m->entry->batch, (long long)b->passes, rotor_dsa_loop_s(b) * 1e3, (long long)g->passes,
               rotor_dsa_loop_s(g) * 1e3, m->loop_speedup[ROTOR_DSA_GRAPHTURBO], m->loop_gain[ROTOR_DSA_INSTANCES],
               g->pass.tensors[ROTOR_GT_DDR], (double)(m->entry->batch * r->clusters) / rotor_dsa_loop_s(g));
    }
    const rotor_gtrepro_summary *s = &r->summary;
    printf("mean %.2fx (geometric %.2fx); Figure 15's gains with loops:", s->loop_speedup_mean[ROTOR_DSA_GRAPHTURBO],
           s->loop_speedup_geomean);
    for (int k = 1; k < NSTEPS; k++)
        printf(" %s %.2fx%s", rotor_dsa_step_name((rotor_dsa_step)k), s->loop_gain_mean[k], k + 1 < NSTEPS ? "," : "\n");
    for (int k = 0; k < ROTOR_GTREPRO_T1 && r->table1; k++) {
        const rotor_gtrepro_t1 *t = &r->t1[k];
        printf("%-24s batch %lld (%lld a cluster): %lld pass%s of %lld, %.1f sentences/s, %.3f ms\n",
               k ? "" : "Table 1 with loops (GT):", (long long)t->batch, (long long)t->per_cluster,
               (long long)t->gt_loop.passes, t->gt_loop.passes > 1 ? "es" : "", (long long)(t->per_cluster / t->gt_loop.passes),
               (double)t->batch / rotor_dsa_loop_s(&t->gt_loop), rotor_dsa_loop_s(&t->gt_loop) * 1e3);
    }
    printf("(paper: Table 2's batches a cluster are each approach's own, TVM's smaller; Table 1's TVM loops at\n"
           "4 a cluster; docs/graphturbo.md, \"Loop execution within a cluster\")\n\n");
}

/* Issue 42's acceptance on the models run (those it names that were run),
 * at Table 2's batches in one pass, and with §5.1's loops. */
static void print_acceptance_of(const rotor_gtrepro_result *r, bool loops) {
    const rotor_gtrepro_summary *s = &r->summary;
    const double *mean = loops ? s->loop_speedup_mean : s->speedup_mean;
    printf("  mean speedup over per-layer at least 5x: %.2fx, %s\n", mean[ROTOR_DSA_GRAPHTURBO],
           mean[ROTOR_DSA_GRAPHTURBO] >= 5 ? "met" : "not met");
    /* a step slower than the one before beyond rounding (rotor_dsa_faster:
     * ViT-Large's instances and lb steps with loops are 1 - 6e-15 apart) */
    int below = 0;
    for (int i = 0; i < r->nmodels; i++)
        for (int k = 1; k < NSTEPS; k++) {
            const rotor_gtrepro_model *m = &r->models[i];
            double before = loops ? rotor_dsa_loop_s(&m->loops.step[k - 1]) : m->dsa[k - 1].seconds;
            below += rotor_dsa_faster(before, loops ? rotor_dsa_loop_s(&m->loops.step[k]) : m->dsa[k].seconds);
        }
    printf("  every Figure 15 step gains at least 1.0x: %s (%d step gains below)\n", below ? "not met" : "met", below);
    for (int i = 0; i < r->nmodels; i++) {
        const rotor_gtrepro_model *m = &r->models[i];
        const char *n = m->entry->name;
        double g = (loops ? m->loop_gain : m->gain)[ROTOR_DSA_INSTANCES];
        int ddr = loops ? m->loops.step[ROTOR_DSA_GRAPHTURBO].pass.tensors[ROTOR_GT_DDR]
                        : m->dsa[ROTOR_DSA_GRAPHTURBO].tensors[ROTOR_GT_DDR];
        if (!strcmp(n, "resnet-50") || !strcmp(n, "mobilenet-v2"))
            printf("  %s: instance step at least 1.5x: %.2fx, %s\n", n, g, g >= 1.5 ? "met" : "not met");
        if (!strcmp(n, "bert-128"))
            printf("  %s: instance step at most 1.1x: %.2fx, %s\n", n, g, g <= 1.1 ? "met" : "not met");
        if (!strcmp(n, "resnet-50") || !strcmp(n, "bert-128"))
            printf("  %s: at most 2 tensors in DDR: %d, %s\n", n, ddr, ddr <= 2 ? "met" : "not met");
    }
}

static void print_acceptance(const rotor_gtrepro_result *r) {
    printf("Issue 42's acceptance on these models:\n");
    print_acceptance_of(r, false);
    printf("With §5.1's loops (each step at its fastest number of passes):\n");
    print_acceptance_of(r, true);
}

static void print_tables(const rotor_gtrepro_result *r) {
    printf("GraphTurbo evaluation (GraphTurbo §5) on %s, %lld clusters: rotor's schedules (docs/graphturbo.md)\n"
           "beside the paper's numbers.  Absolute numbers do not compare one to one: the paper's kernels, its TVM\n"
           "and STCP920's real rates are not rotor's model (docs/reproduction.md, \"GraphTurbo\").\n\n",
           r->chip, (long long)r->clusters);
    print_fig14(r);
    print_fig15(r);
    print_table1(r);
    print_table3(r);
    print_table4(r);
    print_loops(r);
    print_acceptance(r);
}

/* ---- files ---- */

static void csv_count(FILE *f, int v) {
    if (v >= 0) fprintf(f, ",%d", v);
    else fputs(",", f); /* blank in the paper */
}

static void csv_fig14_15(FILE *f, const void *data, int n) {
    const rotor_gtrepro_result *r = data;
    (void)n;
    fputs("model,label,zoo_model,seq,batch_per_cluster,step,time_ms,speedup,gain,throughput,lb_tensors,gb_tensors,"
          "ddr_tensors,ddr_mb,gb_mb\n", f);
    for (int i = 0; i < r->nmodels; i++) {
        const rotor_gtrepro_model *m = &r->models[i];
        const rotor_gtrepro_entry *e = m->entry;
        for (int k = 0; k < NSTEPS; k++) {
            const rotor_dsa_result *d = &m->dsa[k];
            fprintf(f, "%s,%c,%s,%lld,%lld,%s,%.6f,%.6f,%.6f,%.3f,%d,%d,%d,%.6f,%.6f\n", e->name, e->label, e->model,
                    (long long)e->seq, (long long)e->batch, rotor_dsa_step_name(d->step), d->seconds * 1e3,
                    m->speedup[k], m->gain[k], (double)(e->batch * r->clusters) / d->seconds, d->tensors[ROTOR_GT_LB],
                    d->tensors[ROTOR_GT_GB], d->tensors[ROTOR_GT_DDR], d->ddr_bytes / 1e6, d->gb_bytes / 1e6);
        }
    }
}

static void csv_loops(FILE *f, const void *data, int n) {
    const rotor_gtrepro_result *r = data;
    (void)n;
    fputs("model,label,batch_per_cluster,step,passes,batch_per_pass,time_ms,speedup,gain,pass_ddr_tensors,ddr_mb\n", f);
    for (int i = 0; i < r->nmodels; i++) {
        const rotor_gtrepro_model *m = &r->models[i];
        const rotor_gtrepro_entry *e = m->entry;
        for (int k = 0; k < NSTEPS; k++) {
            const rotor_dsa_loop *l = &m->loops.step[k];
            fprintf(f, "%s,%c,%lld,%s,%lld,%lld,%.6f,%.6f,%.6f,%d,%.6f\n", e->name, e->label, (long long)e->batch,
                    rotor_dsa_step_name((rotor_dsa_step)k), (long long)l->passes, (long long)(e->batch / l->passes),
                    rotor_dsa_loop_s(l) * 1e3, m->loop_speedup[k], m->loop_gain[k], l->pass.tensors[ROTOR_GT_DDR],
                    (double)l->passes * l->pass.ddr_bytes / 1e6);
        }
    }
}

static void csv_table1(FILE *f, const void *data, int n) {
    const rotor_gtrepro_result *r = data;
    (void)n;
    fputs("batch,batch_per_cluster,graphturbo_ms,graphturbo_per_s,per_layer_ms,per_layer_per_s,lb_tensors,gb_tensors,"
          "ddr_tensors,ddr_mb,paper_graphturbo_per_s,paper_graphturbo_ms,paper_tvm_per_s,paper_tvm_ms\n", f);
    for (int k = 0; k < ROTOR_GTREPRO_T1 && r->table1; k++) {
        const rotor_gtrepro_t1 *t = &r->t1[k];
        const rotor_gtrepro_t1_row *p = &rotor_gtrepro_t1_paper[k];
        fprintf(f, "%lld,%lld,%.6f,%.3f,%.6f,%.3f,%d,%d,%d,%.6f,%.0f,%.2f,%.0f,%.2f\n", (long long)t->batch,
                (long long)t->per_cluster, t->gt_s * 1e3, t->gt_throughput, t->per_layer_s * 1e3,
                t->per_layer_throughput, t->tensors[ROTOR_GT_LB], t->tensors[ROTOR_GT_GB], t->tensors[ROTOR_GT_DDR],
                t->ddr_bytes / 1e6, p->gt_throughput, p->gt_latency_ms, p->tvm_throughput, p->tvm_latency_ms);
    }
}

static void csv_table3(FILE *f, const void *data, int n) {
    const rotor_gtrepro_result *r = data;
    (void)n;
    fputs("model,label,per_layer_ddr,per_layer_gb,per_layer_lb,graphturbo_ddr,graphturbo_gb,graphturbo_lb,"
          "paper_tvm_ddr,paper_crafted_ddr,paper_graphturbo_ddr,paper_tvm_llb,paper_crafted_llb,paper_graphturbo_llb,"
          "paper_tvm_l1,paper_crafted_l1,paper_graphturbo_l1\n", f);
    for (int i = 0; i < r->nmodels; i++) {
        const rotor_gtrepro_model *m = &r->models[i];
        const rotor_gtrepro_entry *e = m->entry;
        fprintf(f, "%s,%c", e->name, e->label);
        for (int s = 0; s < 2; s++) {
            const int *t = m->dsa[s ? ROTOR_DSA_GRAPHTURBO : ROTOR_DSA_PER_LAYER].tensors;
            fprintf(f, ",%d,%d,%d", t[ROTOR_GT_DDR], t[ROTOR_GT_GB], t[ROTOR_GT_LB]);
        }
        const int *paper[3] = {e->ddr, e->llb, e->l1};
        for (int l = 0; l < 3; l++)
            for (int v = 0; v < 3; v++) csv_count(f, paper[l][v]);
        fputs("\n", f);
    }
}

static void csv_table4(FILE *f, const void *data, int n) {
    const rotor_gtrepro_result *r = data;
    (void)n;
    fputs("model,label,pipeline_s,schedule_s,over_target,paper_tvm_s,paper_astitch_s,paper_graphturbo_s\n", f);
    for (int i = 0; i < r->nmodels; i++) {
        const rotor_gtrepro_model *m = &r->models[i];
        const double *c = m->entry->compile_s;
        fprintf(f, "%s,%c,%.6f,%.6f,%d,%.0f,%.0f,%.0f\n", m->entry->name, m->entry->label, m->pipeline_s,
                m->schedule_s, m->pipeline_s > ROTOR_GTREPRO_TARGET_S, c[0], c[1], c[2]);
    }
}

/* Figure 14 (steps false) or 15 (steps true) as horizontal bars: one row a
 * model, or a model's four steps, coloured by step. */
static void svg_speedups(FILE *f, const rotor_gtrepro_result *r, bool steps) {
    static const cli_bar_cat cats[NSTEPS - 1] = {
        {"gb", "#d62728"}, {"lb", "#2ca02c"}, {"instances", "#ff7f0e"}, {"graphturbo", "#1f77b4"}};
    int per = steps ? NSTEPS - 1 : 1, nrows = r->nmodels * per, nc = per; /* Fig. 14: graphturbo's alone */
    cli_bar_rows w;
    if (cli_bar_rows_new(&w, nrows, nc)) {
        for (int i = 0; i < r->nmodels; i++)
            for (int j = 0; j < per; j++) {
                int row = i * per + j, k = steps ? j + 1 : ROTOR_DSA_GRAPHTURBO;
                snprintf(w.names[row], sizeof w.names[row], "%s%s%s", r->models[i].entry->name, steps ? " " : "",
                         steps ? rotor_dsa_step_name((rotor_dsa_step)k) : "");
                w.labels[row] = w.names[row];
                w.group[row] = i;
                w.values[row * nc + (steps ? k - 1 : 0)] = r->models[i].speedup[k];
            }
        cli_bars b = {steps ? "GraphTurbo Figure 15: each step over the per-layer baseline"
                            : "GraphTurbo Figure 14: GraphTurbo over the per-layer baseline",
                      "speedup over per-layer (x)", nc, steps ? cats : &cats[NSTEPS - 2], nrows, steps ? r->nmodels : 1,
                      w.labels, steps ? w.group : NULL, w.values};
        cli_svg_bars(f, &b);
    }
    cli_bar_rows_free(&w);
}

/* §5.1's loops: each model's graphturbo speedup over per-layer in one pass
 * of Table 2's batch, and with every step at its fastest passes. */
static void svg_loops(FILE *f, const void *data, int n) {
    const rotor_gtrepro_result *r = data;
    (void)n;
    static const cli_bar_cat cats[2] = {{"one pass", "#1f77b4"}, {"fastest passes", "#ff7f0e"}};
    int nrows = 2 * r->nmodels;
    cli_bar_rows w;
    if (cli_bar_rows_new(&w, nrows, 2)) {
        for (int i = 0; i < r->nmodels; i++) {
            const rotor_gtrepro_model *m = &r->models[i];
            const rotor_dsa_loop *g = &m->loops.step[ROTOR_DSA_GRAPHTURBO];
            snprintf(w.names[2 * i], sizeof w.names[0], "%s 1 x %lld", m->entry->name, (long long)m->entry->batch);
            snprintf(w.names[2 * i + 1], sizeof w.names[0], "%s %lld x %lld", m->entry->name, (long long)g->passes,
                     (long long)(m->entry->batch / g->passes));
            for (int j = 0; j < 2; j++) w.labels[2 * i + j] = w.names[2 * i + j], w.group[2 * i + j] = i;
            w.values[2 * i * 2] = m->speedup[ROTOR_DSA_GRAPHTURBO];
            w.values[(2 * i + 1) * 2 + 1] = m->loop_speedup[ROTOR_DSA_GRAPHTURBO];
        }
        cli_bars b = {"GraphTurbo §5.1: graphturbo over per-layer, one pass and the fastest passes",
                      "speedup over per-layer (x)", 2, cats, nrows, r->nmodels, w.labels, w.group, w.values};
        cli_svg_bars(f, &b);
    }
    cli_bar_rows_free(&w);
}

static void svg_fig14(FILE *f, const void *data, int n) { (void)n, svg_speedups(f, data, false); }
static void svg_fig15(FILE *f, const void *data, int n) { (void)n, svg_speedups(f, data, true); }

/* Table 1 as lines: throughput against the batch, rotor solid, the paper dashed. */
static void svg_table1(FILE *f, const void *data, int n) {
    const rotor_gtrepro_result *r = data;
    (void)n;
    double x[ROTOR_GTREPRO_T1], y[4][ROTOR_GTREPRO_T1];
    for (int k = 0; k < ROTOR_GTREPRO_T1; k++) {
        x[k] = (double)rotor_gtrepro_t1_paper[k].batch;
        y[0][k] = r->table1 ? r->t1[k].gt_throughput : NAN;
        y[1][k] = r->table1 ? r->t1[k].per_layer_throughput : NAN;
        y[2][k] = rotor_gtrepro_t1_paper[k].gt_throughput;
        y[3][k] = rotor_gtrepro_t1_paper[k].tvm_throughput;
    }
    cli_series s[4] = {{"rotor graphturbo", ROTOR_GTREPRO_T1, x, y[0], false},
                       {"rotor per-layer", ROTOR_GTREPRO_T1, x, y[1], false},
                       {"paper GraphTurbo", ROTOR_GTREPRO_T1, x, y[2], true},
                       {"paper TVM", ROTOR_GTREPRO_T1, x, y[3], true}};
    cli_plot p = {"GraphTurbo Table 1: BERT-128 throughput", "batch (all clusters)", "sentences/s", true, true};
    cli_svg_lines(f, &p, s, 4);
}

/* Table 3 as stacked bars: each model's per-layer and graphturbo values by level. */
static void svg_table3(FILE *f, const void *data, int n) {
    const rotor_gtrepro_result *r = data;
    (void)n;
    static const cli_bar_cat cats[3] = {{"DDR", "#d62728"}, {"GB", "#ff7f0e"}, {"LB", "#2ca02c"}};
    int nrows = 2 * r->nmodels;
    cli_bar_rows w;
    if (cli_bar_rows_new(&w, nrows, 3)) {
        const rotor_gt_scope sc[3] = {ROTOR_GT_DDR, ROTOR_GT_GB, ROTOR_GT_LB};
        for (int i = 0; i < r->nmodels; i++)
            for (int s = 0; s < 2; s++) {
                int row = 2 * i + s;
                snprintf(w.names[row], sizeof w.names[row], "%s %s", r->models[i].entry->name,
                         s ? "graphturbo" : "per-layer");
                w.labels[row] = w.names[row];
                w.group[row] = i;
                for (int l = 0; l < 3; l++)
                    w.values[row * 3 + l] = r->models[i].dsa[s ? ROTOR_DSA_GRAPHTURBO : ROTOR_DSA_PER_LAYER].tensors[sc[l]];
            }
        cli_bars b = {"GraphTurbo Table 3: where activation values live", "activation values", 3, cats, nrows,
                      r->nmodels, w.labels, w.group, w.values};
        cli_svg_bars(f, &b);
    }
    cli_bar_rows_free(&w);
}

/* Table 4 as bars: rotor's pipeline seconds per model. */
static void svg_table4(FILE *f, const void *data, int n) {
    const rotor_gtrepro_result *r = data;
    (void)n;
    static const cli_bar_cat cats[2] = {{"graphturbo schedule", "#1f77b4"}, {"rest of the pipeline", "#aec7e8"}};
    int nrows = r->nmodels;
    double *values = calloc((size_t)(nrows ? nrows : 1) * 2, sizeof *values);
    const char **labels = calloc((size_t)(nrows ? nrows : 1), sizeof *labels);
    if (values && labels) {
        for (int i = 0; i < nrows; i++) {
            labels[i] = r->models[i].entry->name;
            values[2 * i] = r->models[i].schedule_s;
            values[2 * i + 1] = fmax(0, r->models[i].pipeline_s - r->models[i].schedule_s);
        }
        cli_bars b = {"GraphTurbo Table 4: rotor's compile time", "seconds", 2, cats, nrows, 1, labels, NULL, values};
        cli_svg_bars(f, &b);
    }
    free(values);
    free(labels);
}

static const cli_figure_file FILES[] = {
    {"graphturbo-fig14-15.csv", csv_fig14_15},
    {"graphturbo-table1.csv", csv_table1},
    {"graphturbo-table3.csv", csv_table3},
    {"graphturbo-table4.csv", csv_table4},
    {"graphturbo-loops.csv", csv_loops},
    {"graphturbo-fig14.svg", svg_fig14},
    {"graphturbo-fig15.svg", svg_fig15},
    {"graphturbo-table1.svg", svg_table1},
    {"graphturbo-table3.svg", svg_table3},
    {"graphturbo-table4.svg", svg_table4},
    {"graphturbo-loops.svg", svg_loops},
};

static int write_files(const char *dir, const rotor_gtrepro_result *r) {
    return cli_reproduce_files(dir, FILES, sizeof FILES / sizeof FILES[0], r, 0);
}

/* ---- JSON ---- */

static void json_model(cJSON *arr, const rotor_gtrepro_model *m, int64_t clusters) {
    const rotor_gtrepro_entry *e = m->entry;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToArray(arr, o);
    cJSON_AddStringToObject(o, "model", e->name);
    char label[2] = {e->label, 0};
    cJSON_AddStringToObject(o, "label", label);
    cJSON_AddStringToObject(o, "zoo_model", e->model);
    cJSON_AddNumberToObject(o, "seq", (double)e->seq);
    cJSON_AddNumberToObject(o, "batch_per_cluster", (double)e->batch);
    cJSON_AddNumberToObject(o, "operators", m->ops);
    cJSON_AddNumberToObject(o, "pipeline_s", m->pipeline_s);
    cJSON_AddNumberToObject(o, "schedule_s", m->schedule_s);
    cJSON_AddStringToObject(o, "unit", e->unit);
    cJSON *steps = cJSON_AddArrayToObject(o, "steps");
    for (int k = 0; k < NSTEPS; k++) {
        const rotor_dsa_result *d = &m->dsa[k];
        cJSON *s = cJSON_CreateObject();
        cJSON_AddItemToArray(steps, s);
        cJSON_AddStringToObject(s, "step", rotor_dsa_step_name(d->step));
        cJSON_AddNumberToObject(s, "seconds", d->seconds);
        cJSON_AddNumberToObject(s, "speedup", m->speedup[k]);
        cJSON_AddNumberToObject(s, "gain", m->gain[k]);
        cJSON_AddNumberToObject(s, "throughput", (double)(e->batch * clusters) / d->seconds);
        rotor_doc_dsa_tensors_json(s, "tensors", d->tensors, d->input_values);
    }
    cJSON *loops = cJSON_AddArrayToObject(o, "loops"); /* §5.1: each step at its fastest number of passes */
    for (int k = 0; k < NSTEPS; k++) {
        cJSON *s = rotor_doc_dsa_loop_json(&m->loops, (rotor_dsa_step)k);
        cJSON_AddItemToArray(loops, s);
        cJSON_AddNumberToObject(s, "gain", m->loop_gain[k]);
    }
    cJSON *p = cJSON_AddObjectToObject(o, "paper");
    cJSON_AddStringToObject(p, "name", e->paper_name);
    cJSON_AddNumberToObject(p, "batch", (double)e->paper_batch);
    cJSON_AddNumberToObject(p, "tvm_batch_per_cluster", (double)e->tvm_batch);
    cJSON_AddNumberToObject(p, "tvm_throughput", e->tvm_throughput);
    static const char *const who[3] = {"tvm", "crafted", "graphturbo"};
    static const char *const comp[3] = {"tvm", "astitch", "graphturbo"};
    cJSON *t = cJSON_AddObjectToObject(p, "tensors"), *c = cJSON_AddObjectToObject(p, "compile_s");
    for (int v = 0; v < 3; v++) {
        cJSON_AddNumberToObject(c, comp[v], e->compile_s[v]);
        if (e->ddr[v] < 0) continue; /* blank in Table 3 */
        cJSON *x = cJSON_AddObjectToObject(t, who[v]);
        cJSON_AddNumberToObject(x, "ddr", e->ddr[v]);
        cJSON_AddNumberToObject(x, "gb", e->llb[v]);
        cJSON_AddNumberToObject(x, "lb", e->l1[v]);
    }
}

static void json_table1(cJSON *root, const rotor_gtrepro_result *r) {
    cJSON *arr = cJSON_AddArrayToObject(root, "table1");
    for (int k = 0; k < ROTOR_GTREPRO_T1 && r->table1; k++) {
        const rotor_gtrepro_t1 *t = &r->t1[k];
        const rotor_gtrepro_t1_row *p = &rotor_gtrepro_t1_paper[k];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(arr, o);
        cJSON_AddNumberToObject(o, "batch", (double)t->batch);
        cJSON_AddNumberToObject(o, "batch_per_cluster", (double)t->per_cluster);
        cJSON_AddNumberToObject(o, "graphturbo_s", t->gt_s);
        cJSON_AddNumberToObject(o, "graphturbo_per_s", t->gt_throughput);
        cJSON_AddNumberToObject(o, "per_layer_s", t->per_layer_s);
        cJSON_AddNumberToObject(o, "per_layer_per_s", t->per_layer_throughput);
        rotor_doc_dsa_tensors_json(o, "tensors", t->tensors, t->input_values);
        cJSON_AddNumberToObject(o, "ddr_bytes", t->ddr_bytes);
        cJSON_AddNumberToObject(o, "graphturbo_loop_passes", (double)t->gt_loop.passes);
        cJSON_AddNumberToObject(o, "graphturbo_loop_s", rotor_dsa_loop_s(&t->gt_loop));
        cJSON_AddNumberToObject(o, "paper_graphturbo_per_s", p->gt_throughput);
        cJSON_AddNumberToObject(o, "paper_graphturbo_ms", p->gt_latency_ms);
        cJSON_AddNumberToObject(o, "paper_tvm_per_s", p->tvm_throughput);
        cJSON_AddNumberToObject(o, "paper_tvm_ms", p->tvm_latency_ms);
    }
}

static int print_json(const rotor_gtrepro_result *r) {
    cJSON *root = cJSON_CreateObject();
    if (!root) return cli_nomem("reproduce");
    cJSON_AddStringToObject(root, "format", "rotor-reproduce-graphturbo");
    cJSON_AddNumberToObject(root, "version", 2); /* 2: "tensors" without the model's inputs, and "inputs" */
    cJSON_AddStringToObject(root, "chip", r->chip);
    cJSON_AddNumberToObject(root, "clusters", (double)r->clusters);
    const rotor_gtrepro_summary *s = &r->summary;
    cJSON *sum = cJSON_AddObjectToObject(root, "summary");
    cJSON_AddNumberToObject(sum, "models", s->n);
    cJSON_AddNumberToObject(sum, "speedup_geomean", s->speedup_geomean);
    cJSON *sm = cJSON_AddObjectToObject(sum, "speedup_mean"), *gm = cJSON_AddObjectToObject(sum, "gain_mean");
    for (int k = 1; k < NSTEPS; k++) {
        cJSON_AddNumberToObject(sm, rotor_dsa_step_name((rotor_dsa_step)k), s->speedup_mean[k]);
        cJSON_AddNumberToObject(gm, rotor_dsa_step_name((rotor_dsa_step)k), s->gain_mean[k]);
    }
    cJSON *lm = cJSON_AddObjectToObject(sum, "loops"); /* §5.1's loops: each step at its fastest passes */
    cJSON_AddNumberToObject(lm, "speedup_geomean", s->loop_speedup_geomean);
    cJSON *lsm = cJSON_AddObjectToObject(lm, "speedup_mean"), *lgm = cJSON_AddObjectToObject(lm, "gain_mean");
    for (int k = 1; k < NSTEPS; k++) {
        cJSON_AddNumberToObject(lsm, rotor_dsa_step_name((rotor_dsa_step)k), s->loop_speedup_mean[k]);
        cJSON_AddNumberToObject(lgm, rotor_dsa_step_name((rotor_dsa_step)k), s->loop_gain_mean[k]);
    }
    cJSON_AddNumberToObject(sum, "slowest_pipeline_s", s->slowest_pipeline_s);
    cJSON_AddNumberToObject(sum, "over_target", s->over_target);
    cJSON_AddNumberToObject(sum, "target_s", ROTOR_GTREPRO_TARGET_S);
    cJSON *paper = cJSON_AddObjectToObject(root, "paper");
    cJSON_AddNumberToObject(paper, "speedup_mean", ROTOR_GTREPRO_PAPER_MEAN);
    cJSON_AddNumberToObject(paper, "lb_over_tvm_mean", ROTOR_GTREPRO_PAPER_LB);
    cJSON_AddNumberToObject(paper, "instances_over_lb_mean", ROTOR_GTREPRO_PAPER_INSTANCES);
    cJSON_AddNumberToObject(paper, "graphturbo_over_instances_mean", ROTOR_GTREPRO_PAPER_CROSS);
    cJSON *models = cJSON_AddArrayToObject(root, "models");
    for (int i = 0; i < r->nmodels; i++) json_model(models, &r->models[i], r->clusters);
    json_table1(root, r);
    return cli_print_json("reproduce", root);
}

/* ---- the command ---- */

int cli_reproduce_gt(const char *models, const char *dir, bool json, const rotor_chip *chip, bool quiet) {
    const rotor_gtrepro_entry *rows[ROTOR_GTREPRO_MODELS];
    int n = 0, rc = parse_models(models, rows, &n);
    if (rc) return rc;
    rotor_error err = {{0}};
    rotor_dsa_cluster cluster; /* a chip without a GB is refused before the folder is made */
    rotor_status st = rotor_dsa_cluster_of(chip, &cluster, &err);
    if (st) return cli_fail("reproduce", st, &err);
    if ((rc = cli_reproduce_dir(dir))) return rc;
    rotor_gtrepro_options o = {.models = rows, .nmodels = n, .table1 = true, .progress = cli_progress_step};
    cli_progress prog;
    cli_progress_begin(&prog, "reproduce", "models", quiet);
    o.progress_ctx = &prog;
    rotor_gtrepro_result r;
    st = rotor_gtrepro_run(&o, chip, &r, &err);
    cli_progress_end(&prog);
    rc = st ? cli_fail("reproduce", st, &err) : write_files(dir, &r);
    if (!rc && json) rc = print_json(&r);
    else if (!rc) {
        print_tables(&r);
        printf("\nfiles: %s/graphturbo-fig14-15.csv, graphturbo-table1.csv, graphturbo-table3.csv, "
               "graphturbo-table4.csv, graphturbo-loops.csv, graphturbo-fig14.svg, graphturbo-fig15.svg, "
               "graphturbo-table1.svg, graphturbo-table3.svg, graphturbo-table4.svg, graphturbo-loops.svg\n",
               dir);
    }
    rotor_gtrepro_free(&r);
    return rc;
}
