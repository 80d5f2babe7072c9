/* reproducekapla.c — `rotor reproduce kapla`: KAPLA's evaluation, training and inference
 * (KAPLA §V-VI) as rotor_kaplarepro_run computes it
 * (src/pipeline/kaplarepro.c), printed beside the paper's numbers, as JSON
 * (rotor-reproduce-kapla, version 1), and written as CSV and SVG files
 * (docs/reproduction.md, "KAPLA"): Figures 7, 9, 10 and 11, Tables IV, V and
 * VI.  This file only parses, prints and writes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "rotor/base/suggest.h"
#include "rotor/pipeline/kaplarepro.h"

#define NS ROTOR_KAPLAREPRO_SOLVERS
#define NNETS ROTOR_KAPLAREPRO_NETS

/* --models: the seven networks' names, comma separated (NULL: all). */
static int parse_nets(const char *list, const rotor_kaplarepro_net **out, int *n) {
    *n = 0;
    const char *known[NNETS];
    for (int i = 0; i < NNETS; i++) known[i] = rotor_kaplarepro_nets[i].name;
    if (!list) {
        for (int i = 0; i < NNETS; i++) out[(*n)++] = &rotor_kaplarepro_nets[i];
        return 0;
    }
    for (const char *p = list;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char word[64], hint[96];
        snprintf(word, sizeof word, "%.*s", (int)(len < sizeof word ? len : sizeof word - 1), p);
        const rotor_kaplarepro_net *x = rotor_kaplarepro_find(word);
        if (!x)
            return cli_usage_error("reproduce", "--models: unknown network '%s'%s (KAPLA's: alexnet, mobilenet, vgg, "
                                                "googlenet, resnet, mlp, lstm)",
                                   word, rotor_suggest_phrase(word, known, NNETS, hint, sizeof hint));
        for (int i = 0; i < *n; i++) /* a network twice would be two rows of one figure */
            if (out[i] == x) return cli_usage_error("reproduce", "--models: '%s' is given twice", x->name);
        if (*n == NNETS) return cli_usage_error("reproduce", "--models: at most %d networks", NNETS);
        out[(*n)++] = x;
        if (!end) return 0;
        p = end + 1;
    }
}

/* ---- tables ---- */

static void print_fig(const rotor_kaplarepro_result *r, bool edge) {
    /* Figure 10 is KAPLA's edge array, the preset as it is: --chip and
     * --set change Figures 7 and 9 only, which the heading says (it did
     * not until 2026-12-04; found by an audit helper) */
    printf("\nFigure %d: cost relative to B (exact), inference, %s, batch %d%s\n", edge ? 10 : 9,
           edge ? r->edge : r->chip, edge ? 1 : (int)r->batch,
           edge ? ", R at rate 0.85 (the edge preset as it is: --chip and --set apply to Figures 7 and 9)"
                : ", R at rate 0.1");
    printf("%-10s %6s %8s %8s %8s %8s  %s\n", "network", "layers", "B", "K", "R", "M", "left out (B none; R, M none)");
    for (int i = 0; i < r->nmodels; i++) {
        const rotor_kaplarepro_point *p = edge ? &r->models[i].fig10 : &r->models[i].fig9;
        printf("%-10s %6d", r->models[i].net->paper_name, p->layers);
        for (int s = 0; s < NS; s++) printf(" %8.3f", p->rel[s]);
        printf("  %d; %d, %d\n", p->nofit, p->missed[2], p->missed[3]);
    }
    const double *mean = edge ? r->edge_mean_over : r->mean_over, *worst = edge ? r->edge_worst_over : r->worst_over;
    printf("mean overhead: K %.1f%%, R %.1f%%, M %.1f%% (worst %.1f%%, %.1f%%, %.1f%%)\n", 100 * mean[1],
           100 * mean[2], 100 * mean[3], 100 * worst[1], 100 * worst[2], 100 * worst[3]);
    if (!edge)
        printf("per layer (mean over the layers compared): K %.2f%%, R %.1f%%, M %.1f%%\n", 100 * r->layer_mean[1],
               100 * r->layer_mean[2], 100 * r->layer_mean[3]);
    if (edge)
        printf("paper (Fig. 10): K %.1f%% (worst 10%%, ResNet), R %.1f%%, M up to %.0f%%\n",
               100 * ROTOR_KAPLAREPRO_PAPER_K_EDGE, 100 * ROTOR_KAPLAREPRO_PAPER_R_EDGE,
               100 * ROTOR_KAPLAREPRO_PAPER_M_EDGE);
    else
        printf("paper (Fig. 9): K %.1f%%, R %.1f%%, M %.1f%%\n", 100 * ROTOR_KAPLAREPRO_PAPER_K_INF,
               100 * ROTOR_KAPLAREPRO_PAPER_R_INF, 100 * ROTOR_KAPLAREPRO_PAPER_M_INF);
}

/* Fig. 7: Fig. 9 on the training graphs' layers, with the acceptance. */
static void print_fig7(const rotor_kaplarepro_result *r) {
    static const char *const pass[ROTOR_KAPLAREPRO_PASSES] = {"forward", "backward", "update"};
    printf("\nFigure 7: cost relative to B (exact), training (SGD step: forward, backward dX/dW, update), %s, "
           "batch %d, R at rate 0.1\n",
           r->chip, (int)r->batch);
    printf("%-10s %6s %8s %8s %8s %8s  %s\n", "network", "layers", "B", "K", "R", "M", "fwd/bwd; left out (B none; R, M none)");
    for (int i = 0; i < r->nmodels; i++) {
        const rotor_kaplarepro_point *p = &r->models[i].fig7;
        printf("%-10s %6d", r->models[i].net->paper_name, p->layers);
        for (int s = 0; s < NS; s++) printf(" %8.3f", p->rel[s]);
        printf("  %d/%d; %d; %d, %d\n", p->pass_layers[0], p->pass_layers[1], p->nofit, p->missed[2], p->missed[3]);
    }
    const double *mean = r->train_mean_over, *worst = r->train_worst_over;
    printf("mean overhead: K %.2f%%, R %.1f%%, M %.1f%% (worst %.2f%%, %.1f%%, %.1f%%)\n", 100 * mean[1],
           100 * mean[2], 100 * mean[3], 100 * worst[1], 100 * worst[2], 100 * worst[3]);
    printf("per layer (%d compared): K %.2f%% mean, %.2f%% worst; R %.1f%%, M %.1f%% mean\n", r->train_layers,
           100 * r->train_layer_mean[1], 100 * r->train_layer_worst[1], 100 * r->train_layer_mean[2],
           100 * r->train_layer_mean[3]);
    printf("K by pass:");
    for (int k = 0; k < ROTOR_KAPLAREPRO_PASSES; k++)
        if (r->train_pass_layers[k] || k < ROTOR_KAPLAREPRO_UPDATE)
            printf("%s %s %.2f%% (%d layers)", k ? "," : "", pass[k], 100 * r->train_pass_over[k],
                   r->train_pass_layers[k]);
    printf("; the update is element-wise, left out\n");
    printf("paper (Fig. 7): K %.1f%% (worst %.0f%%, MLP), M %.1f%% (up to %.1fx), R up to %.1fx\n",
           100 * ROTOR_KAPLAREPRO_PAPER_K_TRAIN, 100 * ROTOR_KAPLAREPRO_PAPER_K_TRAIN_WORST,
           100 * ROTOR_KAPLAREPRO_PAPER_M_TRAIN, 1 + ROTOR_KAPLAREPRO_PAPER_M_TRAIN_WORST,
           1 + ROTOR_KAPLAREPRO_PAPER_R_TRAIN_WORST);
    printf("Figure 8 (the same schedules' performance) is this table: rotor's cost is time; Figure 7's energy\n"
           "is not a solver objective in rotor (docs/reproduction.md, \"KAPLA\")\n");
    bool met = mean[1] <= 0.03 && worst[1] <= 0.10;
    printf("acceptance (K within 3%% of B on average, 10%% at worst): %s\n", met ? "met" : "MISSED");
}

static void print_table4(const rotor_kaplarepro_result *r) {
    printf("\nTable IV: solver wall time, Figure 9's layers, then Figure 7's (s)\n%-10s", "network");
    for (int s = 0; s < NS; s++) printf(" %9s", rotor_kaplarepro_solver_name(s));
    printf("\n");
    for (int i = 0; i < r->nmodels; i++) {
        printf("%-10s", r->models[i].net->paper_name);
        for (int s = 0; s < NS; s++) printf(" %9.3f", r->models[i].fig9.wall[s]);
        printf("\n");
    }
    printf("%-10s", "total");
    for (int s = 0; s < NS; s++) printf(" %9.3f", r->wall[s]);
    double k = r->wall[1] > 0 ? r->wall[1] : 1e-9, kt = r->train_wall[1] > 0 ? r->train_wall[1] : 1e-9;
    printf("\n%-10s", "training");
    for (int s = 0; s < NS; s++) printf(" %9.3f", r->train_wall[s]);
    printf("  (Figure 7's layers)\nK's speed-up, inference: over B %.2fx, over M %.2fx, over R %.2fx\n",
           r->wall[0] / k, r->wall[3] / k, r->wall[2] / k);
    printf("K's speed-up, training: over B %.2fx, over M %.2fx, over R %.2fx\n", r->train_wall[0] / kt,
           r->train_wall[3] / kt, r->train_wall[2] / kt);
    printf("paper: training %.0fx over B, %.0fx over M (Table IV); inference %.0fx, %.0fx, %.1fx (§VI-A)\n",
           ROTOR_KAPLAREPRO_PAPER_B_SPEED, ROTOR_KAPLAREPRO_PAPER_M_SPEED, ROTOR_KAPLAREPRO_PAPER_B_SPEED_INF,
           ROTOR_KAPLAREPRO_PAPER_M_SPEED_INF, ROTOR_KAPLAREPRO_PAPER_R_SPEED_INF);
}

static void print_table5(const rotor_kaplarepro_result *r) {
    printf("\nTable V: K's overhead over B across hardware (mean over the networks)\n");
    printf("%-24s %5s %9s %9s\n", "configuration", "batch", "rotor", "paper");
    for (int c = 0; c < ROTOR_KAPLAREPRO_CONFIGS; c++)
        printf("%-24s %5lld %8.2f%% %8.1f%%\n", rotor_kaplarepro_configs[c].label,
               (long long)rotor_kaplarepro_configs[c].batch, 100 * r->table5_over[c],
               100 * rotor_kaplarepro_configs[c].paper_overhead);
}

static void print_table6(const rotor_kaplarepro_result *r) {
    printf("\nTable VI: one segment's inter-layer schemes, before and after pruning\n");
    printf("%-10s %6s %6s %7s %8s %6s | %6s %6s %8s\n", "network", "total", "valid", "pareto", "pruned", "loss",
           "paper", "after", "pruned");
    for (int i = 0; i < r->nmodels; i++) {
        const rotor_kaplarepro_model *x = &r->models[i];
        const rotor_kaplarepro_seg *g = &x->seg;
        printf("%-10s %6d %6d %7d %7.1f%% %5.1f%% | %6d %6d %7.1f%%\n", x->net->paper_name, g->total, g->valid,
               g->pareto, g->total ? 100.0 * (1 - (double)g->pareto / g->total) : 0, 100 * g->pareto_loss,
               x->net->paper_total, x->net->paper_pruned,
               100.0 * (1 - (double)x->net->paper_pruned / x->net->paper_total));
    }
    printf("the segments:");
    for (int i = 0; i < r->nmodels; i++) {
        const rotor_kaplarepro_seg *g = &r->models[i].seg;
        printf("%s %s", i ? ";" : "", r->models[i].net->paper_name);
        for (int k = 0; k < g->stages; k++) printf("%s%s", k ? ", " : " ", g->layers[k]);
    }
    printf("\n");
    printf("least pruned: %.1f%% (acceptance: at least 85%% on every network); loss: the best Pareto scheme's\n"
           "cost over the best valid scheme's, as the fast solver costs them\n",
           100 * r->min_pruned);
}

static void print_fig11(const rotor_kaplarepro_result *r) {
    printf("\nFigure 11: the best of the top k valid schemes by the estimate (mean overhead over k = all;\n"
           "seconds costing them, all networks)\n");
    for (int k = 0; k < ROTOR_KAPLAREPRO_KS; k++) {
        int kk = rotor_kaplarepro_k(k);
        if (kk) printf("k = %-4d", kk);
        else printf("k = all ");
        printf(" overhead %6.2f%%  time %.3f s\n", 100 * r->k_cost[k], r->k_wall[k]);
    }
}

/* ---- files ---- */

static void csv_fig(FILE *f, const rotor_kaplarepro_result *r, bool edge) {
    fprintf(f, "network,layers,b_nofit,r_missed,m_missed,b_rel,k_rel,r_rel,m_rel,b_s,k_s,r_s,m_s\n");
    for (int i = 0; i < r->nmodels; i++) {
        const rotor_kaplarepro_point *p = edge ? &r->models[i].fig10 : &r->models[i].fig9;
        fprintf(f, "%s,%d,%d,%d,%d", r->models[i].net->name, p->layers, p->nofit, p->missed[2], p->missed[3]);
        for (int s = 0; s < NS; s++) fprintf(f, ",%.6f", p->rel[s]);
        for (int s = 0; s < NS; s++) fprintf(f, ",%.6f", p->wall[s]);
        fprintf(f, "\n");
    }
}
static void csv_fig9(FILE *f, const void *d, int n) { (void)n, csv_fig(f, d, false); }

static void csv_fig7(FILE *f, const void *d, int n) {
    const rotor_kaplarepro_result *r = d;
    (void)n;
    fprintf(f, "network,layers,forward,backward,b_nofit,r_missed,m_missed,b_rel,k_rel,r_rel,m_rel,k_layer_worst,b_s,k_s,"
               "r_s,m_s\n");
    for (int i = 0; i < r->nmodels; i++) {
        const rotor_kaplarepro_point *p = &r->models[i].fig7;
        fprintf(f, "%s,%d,%d,%d,%d,%d,%d", r->models[i].net->name, p->layers, p->pass_layers[0], p->pass_layers[1],
                p->nofit, p->missed[2], p->missed[3]);
        for (int s = 0; s < NS; s++) fprintf(f, ",%.6f", p->rel[s]);
        fprintf(f, ",%.6f", p->layer_worst[1]);
        for (int s = 0; s < NS; s++) fprintf(f, ",%.6f", p->wall[s]);
        fprintf(f, "\n");
    }
}
static void csv_fig10(FILE *f, const void *d, int n) { (void)n, csv_fig(f, d, true); }

/* A CSV field as RFC 4180 writes it: quoted, its quotes doubled, when it
 * holds a comma, a quote or a line break (Table V's "the chip, batch 8"
 * split its row into five fields until 2026-12-04; found by an audit
 * helper). */
static void csv_text(FILE *f, const char *s) {
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void csv_table5(FILE *f, const void *d, int n) {
    const rotor_kaplarepro_result *r = d;
    (void)n;
    fprintf(f, "configuration,batch,k_overhead,paper_overhead\n");
    for (int c = 0; c < ROTOR_KAPLAREPRO_CONFIGS; c++) {
        csv_text(f, rotor_kaplarepro_configs[c].label);
        fprintf(f, ",%lld,%.6f,%.3f\n",
                (long long)rotor_kaplarepro_configs[c].batch, r->table5_over[c],
                rotor_kaplarepro_configs[c].paper_overhead);
    }
}

static void csv_table6(FILE *f, const void *d, int n) {
    const rotor_kaplarepro_result *r = d;
    (void)n;
    fprintf(f, "network,total,valid,pareto,pruned,pareto_loss,paper_total,paper_after\n");
    for (int i = 0; i < r->nmodels; i++) {
        const rotor_kaplarepro_model *x = &r->models[i];
        fprintf(f, "%s,%d,%d,%d,%.4f,%.6f,%d,%d\n", x->net->name, x->seg.total, x->seg.valid, x->seg.pareto,
                x->seg.total ? 1 - (double)x->seg.pareto / x->seg.total : 0, x->seg.pareto_loss, x->net->paper_total,
                x->net->paper_pruned);
    }
}

static void csv_fig11(FILE *f, const void *d, int n) {
    const rotor_kaplarepro_result *r = d;
    (void)n;
    fprintf(f, "k,overhead,seconds\n");
    for (int k = 0; k < ROTOR_KAPLAREPRO_KS; k++)
        fprintf(f, "%d,%.6f,%.6f\n", rotor_kaplarepro_k(k), r->k_cost[k], r->k_wall[k]);
}

/* fig: 7, 9 or 10. */
static const rotor_kaplarepro_point *fig_point(const rotor_kaplarepro_model *x, int fig) {
    return fig == 7 ? &x->fig7 : fig == 10 ? &x->fig10 : &x->fig9;
}

static void svg_fig(FILE *f, const rotor_kaplarepro_result *r, int fig) {
    static const cli_bar_cat cats[NS - 1] = {{"K", "#1f77b4"}, {"R", "#d62728"}, {"M", "#2ca02c"}};
    int nrows = r->nmodels * (NS - 1);
    cli_bar_rows w;
    if (cli_bar_rows_new(&w, nrows, NS - 1)) {
        for (int i = 0; i < r->nmodels; i++)
            for (int s = 1; s < NS; s++) {
                int row = i * (NS - 1) + s - 1;
                const rotor_kaplarepro_point *p = fig_point(&r->models[i], fig);
                snprintf(w.names[row], sizeof w.names[row], "%s %s", r->models[i].net->paper_name,
                         rotor_kaplarepro_solver_name(s));
                w.labels[row] = w.names[row];
                w.group[row] = i;
                w.values[row * (NS - 1) + s - 1] = p->rel[s];
            }
        cli_bars b = {fig == 10  ? "KAPLA Figure 10: cost relative to B, edge array, batch 1"
                      : fig == 7 ? "KAPLA Figure 7: cost relative to B, training, batch 64"
                                 : "KAPLA Figure 9: cost relative to B, inference, batch 64",
                      "time relative to B (exact)", NS - 1, cats, nrows, r->nmodels, w.labels, w.group, w.values};
        cli_svg_bars(f, &b);
    }
    cli_bar_rows_free(&w);
}
static void svg_fig7(FILE *f, const void *d, int n) { (void)n, svg_fig(f, d, 7); }
static void svg_fig9(FILE *f, const void *d, int n) { (void)n, svg_fig(f, d, 9); }
static void svg_fig10(FILE *f, const void *d, int n) { (void)n, svg_fig(f, d, 10); }

static void svg_fig11(FILE *f, const void *d, int n) {
    const rotor_kaplarepro_result *r = d;
    (void)n;
    double x[ROTOR_KAPLAREPRO_KS - 1], y[2][ROTOR_KAPLAREPRO_KS - 1];
    for (int k = 0; k < ROTOR_KAPLAREPRO_KS - 1; k++) {
        x[k] = rotor_kaplarepro_k(k);
        y[0][k] = 100 * r->k_cost[k];
        y[1][k] = r->k_wall[k];
    }
    cli_series s[2] = {{"overhead over k = all (%)", ROTOR_KAPLAREPRO_KS - 1, x, y[0], false},
                       {"seconds costing the top k", ROTOR_KAPLAREPRO_KS - 1, x, y[1], true}};
    cli_plot p = {"KAPLA Figure 11: sensitivity to k", "k", "overhead (%) / time (s)", true, false};
    cli_svg_lines(f, &p, s, 2);
}

static const cli_figure_file FILES[] = {
    {"kapla-fig7.csv", csv_fig7},
    {"kapla-fig7.svg", svg_fig7},
    {"kapla-fig9.csv", csv_fig9},
    {"kapla-fig10.csv", csv_fig10},
    {"kapla-table5.csv", csv_table5},
    {"kapla-table6.csv", csv_table6},
    {"kapla-fig11.csv", csv_fig11},
    {"kapla-fig9.svg", svg_fig9},
    {"kapla-fig10.svg", svg_fig10},
    {"kapla-fig11.svg", svg_fig11},
};

static int write_files(const char *dir, const rotor_kaplarepro_result *r) {
    return cli_reproduce_files(dir, FILES, sizeof FILES / sizeof FILES[0], r, 0);
}

/* ---- JSON ---- */

/* o[SOLVER_suffix] = v, SOLVER being B, K, R or M. */
static void add_solver(cJSON *o, int s, const char *suffix, double v) {
    char k[48];
    snprintf(k, sizeof k, "%s_%s", rotor_kaplarepro_solver_name(s), suffix);
    cJSON_AddNumberToObject(o, k, v);
}

static void json_point(cJSON *o, const char *key, const rotor_kaplarepro_point *p) {
    cJSON *x = cJSON_AddObjectToObject(o, key);
    cJSON_AddNumberToObject(x, "layers", p->layers);
    cJSON_AddNumberToObject(x, "b_nofit", p->nofit);
    for (int s = 0; s < NS; s++) {
        add_solver(x, s, "rel", p->rel[s]);
        add_solver(x, s, "s", p->wall[s]);
        add_solver(x, s, "missed", p->missed[s]);
    }
}

static int print_json(const rotor_kaplarepro_result *r) {
    cJSON *root = cJSON_CreateObject();
    if (!root) return cli_nomem("reproduce");
    cJSON_AddStringToObject(root, "format", "rotor-reproduce-kapla");
    cJSON_AddNumberToObject(root, "version", 1);
    cJSON_AddStringToObject(root, "chip", r->chip);
    cJSON_AddStringToObject(root, "edge", r->edge);
    cJSON *models = cJSON_AddArrayToObject(root, "models");
    for (int i = 0; i < r->nmodels; i++) {
        const rotor_kaplarepro_model *x = &r->models[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", x->net->name);
        json_point(o, "fig7", &x->fig7);
        json_point(o, "fig9", &x->fig9);
        json_point(o, "fig10", &x->fig10);
        cJSON *t6 = cJSON_AddObjectToObject(o, "table6");
        cJSON_AddNumberToObject(t6, "total", x->seg.total);
        cJSON_AddNumberToObject(t6, "valid", x->seg.valid);
        cJSON_AddNumberToObject(t6, "pareto", x->seg.pareto);
        cJSON_AddNumberToObject(t6, "pareto_loss", x->seg.pareto_loss);
        cJSON *segl = cJSON_AddArrayToObject(t6, "layers");
        for (int k = 0; k < x->seg.stages; k++) cJSON_AddItemToArray(segl, cJSON_CreateString(x->seg.layers[k]));
        cJSON_AddNumberToObject(t6, "paper_total", x->net->paper_total);
        cJSON_AddNumberToObject(t6, "paper_after", x->net->paper_pruned);
        cJSON_AddItemToArray(models, o);
    }
    cJSON *sum = cJSON_AddObjectToObject(root, "summary");
    for (int s = 0; s < NS; s++) {
        add_solver(sum, s, "mean_overhead", r->mean_over[s]);
        add_solver(sum, s, "edge_mean_overhead", r->edge_mean_over[s]);
        add_solver(sum, s, "s", r->wall[s]);
        add_solver(sum, s, "layer_mean_overhead", r->layer_mean[s]);
        add_solver(sum, s, "train_mean_overhead", r->train_mean_over[s]);
        add_solver(sum, s, "train_worst_overhead", r->train_worst_over[s]);
        add_solver(sum, s, "train_layer_worst_overhead", r->train_layer_worst[s]);
        add_solver(sum, s, "train_s", r->train_wall[s]);
    }
    cJSON *t5 = cJSON_AddArrayToObject(sum, "table5");
    for (int c = 0; c < ROTOR_KAPLAREPRO_CONFIGS; c++) cJSON_AddItemToArray(t5, cJSON_CreateNumber(r->table5_over[c]));
    cJSON *f11 = cJSON_AddArrayToObject(sum, "fig11");
    for (int k = 0; k < ROTOR_KAPLAREPRO_KS; k++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "k", rotor_kaplarepro_k(k));
        cJSON_AddNumberToObject(o, "overhead", r->k_cost[k]);
        cJSON_AddNumberToObject(o, "seconds", r->k_wall[k]);
        cJSON_AddItemToArray(f11, o);
    }
    cJSON_AddNumberToObject(sum, "least_pruned", r->min_pruned);
    return cli_print_json("reproduce", root);
}

/* ---- the command ---- */

int cli_reproduce_kapla(const char *models, int max_layers, const char *dir, bool json, const rotor_chip *chip,
                        const rotor_chip *edge, int threads, bool quiet) {
    const rotor_kaplarepro_net *nets[NNETS];
    int n = 0, rc = parse_nets(models, nets, &n);
    if (rc || (rc = cli_reproduce_dir(dir))) return rc;
    rotor_kaplarepro_options o = {.nets = nets, .nnets = n, .max_layers = max_layers, .threads = threads,
                                  .progress = cli_progress_step};
    cli_progress prog;
    cli_progress_begin(&prog, "reproduce", "networks", quiet);
    o.progress_ctx = &prog;
    rotor_kaplarepro_result r;
    rotor_error err = {{0}};
    rotor_status st = rotor_kaplarepro_run(&o, chip, edge, &r, &err);
    cli_progress_end(&prog);
    rc = st ? cli_fail("reproduce", st, &err) : write_files(dir, &r);
    if (!rc && json) rc = print_json(&r);
    else if (!rc) {
        print_fig7(&r);
        print_fig(&r, false);
        print_fig(&r, true);
        print_table4(&r);
        print_table5(&r);
        print_table6(&r);
        print_fig11(&r);
        printf("\nfiles: %s/kapla-fig7.csv, kapla-fig9.csv, kapla-fig10.csv, kapla-table5.csv, kapla-table6.csv, kapla-fig11.csv, "
               "kapla-fig7.svg, kapla-fig9.svg, kapla-fig10.svg, kapla-fig11.svg\n",
               dir);
    }
    rotor_kaplarepro_free(&r);
    return rc;
}
