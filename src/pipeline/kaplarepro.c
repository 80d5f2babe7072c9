/* kaplarepro.c — KAPLA's evaluation (§V-VI, training and inference) on rotor's solvers
 * (include/rotor/pipeline/kaplarepro.h; docs/reproduction.md, "KAPLA").
 *
 * KAPLA schedules whole networks under nn_dataflow's energy model; rotor's
 * solvers plan one operator at a time under cost model v1's time.  So a
 * network here is its distinct contraction layers (graph order, each
 * weighted by how often it occurs), each planned by every solver on the
 * chip; a network's cost is the weighted sum of its layers' predicted times.
 * Decisions where the paper is silent or rotor differs:
 *  - Layers: at most max_layers distinct layers per network, evenly spaced
 *    over graph order (all of them when fewer), so that the whole command
 *    fits three minutes on two cores; element-wise operators have one plan
 *    and are left out.  A layer B finds no plan for on a chip is left out
 *    (counted); one a baseline finds no plan for (R's "no valid scheme") is
 *    left out of every solver's sum for that network (counted per solver).
 *  - Training (Fig. 7): the network's SGD training graph at batch 64
 *    (KAPLA's default batch, training included), its forward and backward
 *    contractions chosen as above; the update and the bias gradients are
 *    element-wise or reductions (one plan), left out.
 *  - ResNet is ResNet-50, VGGNet VGG-16, MobileNet v1, MLP the PRIME MLP-L
 *    (784-1500-1000-500-10), LSTM the zoo's 4 x 1000 seq2seq step.
 *  - Table VI's segment is the network's first three contraction layers in
 *    graph order.  Its inter-layer schemes are compile/segment.c's
 *    candidate space (segment_best): three core allocations (proportional to
 *    each layer's FLOPs, to their square root, equal; in units of N / 64;
 *    segment.c weighs by each layer's unpipelined time, which needs a
 *    compile; an allocation equal to an earlier one counted once) x the
 *    output dimension streamed x the micro-batch counts 2, 3, 4, 6, 8, 12,
 *    16, and one run (any dimension: counted once).  segment.c also asks
 *    that a stream be handed from a producer in the segment to its
 *    consumer; the layers here need not be adjacent, so validity only asks
 *    that some layer stream.  KAPLA's two prunings (§IV-B) are applied as
 *    the paper states them: validity (with more than one micro-batch some
 *    layer must stream; each layer's data per run, its weights whole, must
 *    fit its group's aggregate SRAM, ignoring fragmentation and
 *    replication: conservative), then Pareto
 *    (a scheme whose estimate is no better on both the optimistic time,
 *    every core busy and the pipeline filled once, and the buffer per core,
 *    than another's is dropped).
 *  - Fig. 11: the valid schemes ranked by that optimistic time; the top
 *    k are costed by the fast solver (each layer's micro-batch planned on
 *    its group's cores: a run's time; the segment m + S - 1 steps of the
 *    slowest run when streamed, the sum of the runs when not; the moves
 *    between groups are left out alike for every k), and the best taken.
 *    rotor's compile picks segments by an exact DP over all candidates
 *    (segment.c), so k exists only here.  The Pareto pruning's loss is the
 *    best Pareto survivor's cost over the best valid scheme's. */
#include "rotor/pipeline/kaplarepro.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/base/clock.h"
#include "rotor/compile/segment.h"
#include "rotor/model/train.h"
#include "rotor/model/zoo.h"
#include "rotor/op/search.h"

/* KAPLA Table VI (schemes before and after pruning, per network). */
const rotor_kaplarepro_net rotor_kaplarepro_nets[ROTOR_KAPLAREPRO_NETS] = {
    {"alexnet", "AlexNet", "alexnet", 700, 2},       {"mobilenet", "MobileNet", "mobilenet-v1", 331, 42},
    {"vgg", "VGGNet", "vgg-16", 7, 1},               {"googlenet", "GoogLeNet", "googlenet", 560, 1},
    {"resnet", "ResNet", "resnet-50", 63, 4},        {"mlp", "MLP", "mlp-l", 784, 18},
    {"lstm", "LSTM", "lstm", 70, 3},
};

/* KAPLA Table V: batch 64 on three hardware variants, then batch 8 and 1.
 * The paper's node, PE and buffer sizes are lost from its text; rotor
 * varies its own chip the same three ways. */
const rotor_kaplarepro_config rotor_kaplarepro_configs[ROTOR_KAPLAREPRO_CONFIGS] = {
    {"the chip", 64, 1.0, 1.0, 0.044},
    {"half the cores", 64, 0.5, 1.0, 0.027},
    {"a quarter of the SRAM", 64, 1.0, 0.25, 0.015},
    {"the chip, batch 8", 8, 1.0, 1.0, 0.083},
    {"the chip, batch 1", 1, 1.0, 1.0, 0.067},
};

static const rotor_solver SOLVERS[ROTOR_KAPLAREPRO_SOLVERS] = {ROTOR_SOLVER_EXACT, ROTOR_SOLVER_FAST,
                                                                ROTOR_SOLVER_RANDOM, ROTOR_SOLVER_ML};
#define EDGE_RATE 0.85 /* KAPLA §VI-A: R's rate on the edge device */
#define ALLOC_UNITS 64 /* segment.c's allocation unit: N / 64 cores */
static const int64_t MICRO[] = {1, 2, 3, 4, 6, 8, 12, 16}; /* segment.c's micro_count up to 16 */
#define NMICRO ((int)(sizeof MICRO / sizeof MICRO[0]))

const rotor_kaplarepro_net *rotor_kaplarepro_find(const char *name) {
    for (int i = 0; i < ROTOR_KAPLAREPRO_NETS; i++)
        if (!strcmp(rotor_kaplarepro_nets[i].name, name)) return &rotor_kaplarepro_nets[i];
    return NULL;
}

const char *rotor_kaplarepro_solver_name(int s) {
    static const char *const n[] = {"B", "K", "R", "M"};
    return s >= 0 && s < ROTOR_KAPLAREPRO_SOLVERS ? n[s] : "?";
}

int rotor_kaplarepro_k(int i) {
    static const int k[ROTOR_KAPLAREPRO_KS] = {1, 2, 4, 8, 0};
    return i >= 0 && i < ROTOR_KAPLAREPRO_KS ? k[i] : 0;
}

/* ---- layers ----------------------------------------------------------------- */

typedef struct layer {
    rotor_expr e;
    char name[64];
    int count;
    int pass; /* ROTOR_KAPLAREPRO_FORWARD, _BACKWARD or _UPDATE */
} layer;

/* The training graph (docs/training.md) of *g in place: SGD, KAPLA's
 * optimizer being unstated and SGD's update the smaller (Adam adds only
 * element-wise operators, which are left out, and no contraction).  The
 * loss is taken of the network's output alone, the output (or, where none
 * is marked, the value no operator reads) that the last operator writes:
 * the zoo's LSTM step marks every layer's cell state an output too, five
 * in all, more than rotor_train's loss takes, and each cell state reaches
 * the last hidden state through its layer's. */
static rotor_status train_graph(rotor_graph *g, rotor_train_info *ti, rotor_error *err) {
    rotor_train_options to = {.optimizer = ROTOR_OPTIM_SGD};
    int last = -1;
    for (int v = 0; v < g->nvalues; v++) {
        const rotor_value *x = &g->values[v];
        if (x->producer >= 0 && (x->is_output || x->consumers == 0) &&
            (last < 0 || x->producer > g->values[last].producer))
            last = v;
        g->values[v].is_output = false;
    }
    if (last >= 0) g->values[last].is_output = true;
    rotor_graph t;
    rotor_status st = rotor_train(g, &to, &t, ti, err);
    rotor_graph_free(g);
    if (!st) *g = t;
    return st;
}

/* The contraction layers of model at batch (of its training graph when
 * train), in graph order: the distinct ones (each with its count) when
 * distinct, else every one. */
static rotor_status layers_of(const char *model, int64_t batch, bool distinct, bool train, layer **out, int *n,
                              rotor_error *err) {
    rotor_zoo_options zo = {.batch = batch};
    rotor_graph g;
    rotor_train_info ti = {0};
    *out = NULL;
    *n = 0;
    rotor_status st = rotor_zoo_build(model, &zo, &g, err);
    if (!st && train) st = train_graph(&g, &ti, err);
    if (st) return st;
    int fwd_end = train ? ti.forward_ops + ti.loss_ops : g.nops, bwd_end = fwd_end + ti.backward_ops;
    rotor_train_info_free(&ti);
    layer *v = calloc((size_t)(g.nops ? g.nops : 1), sizeof *v);
    if (!v) {
        rotor_graph_free(&g);
        return rotor_nomem(err);
    }
    for (int i = 0; i < g.nops; i++) {
        const rotor_expr *e = &g.ops[i].expr;
        if (g.ops[i].vendor || e->op_class != ROTOR_OP_CONTRACTION) continue;
        int j = distinct ? 0 : *n;
        while (j < *n && !(strcmp(v[j].e.text, e->text) == 0 && memcmp(v[j].e.extent, e->extent, sizeof e->extent) == 0))
            j++;
        if (j == *n) {
            v[j].e = *e;
            snprintf(v[j].name, sizeof v[j].name, "%s", g.ops[i].name);
            v[j].pass = i < fwd_end ? ROTOR_KAPLAREPRO_FORWARD : i < bwd_end ? ROTOR_KAPLAREPRO_BACKWARD
                                                                               : ROTOR_KAPLAREPRO_UPDATE;
            (*n)++;
        }
        v[j].count++;
    }
    rotor_graph_free(&g);
    *out = v;
    return ROTOR_OK;
}

/* At most max of the n layers, evenly spaced (in place). */
static int thin(layer *v, int n, int max) {
    if (n <= max) return n;
    for (int i = 0; i < max && max > 1; i++) v[i] = v[(int64_t)i * (n - 1) / (max - 1)];
    return max;
}

/* ---- Figures 9, 10 and Table V: every layer by each solver ---------------------- */

/* One network on chip at batch with the solvers in mask (bit s). */
static rotor_status solve_point(const char *model, const rotor_chip *chip, int64_t batch, bool train, int max,
                                unsigned mask, double rate, int threads, rotor_kaplarepro_point *p, rotor_error *err) {
    layer *v;
    int n;
    memset(p, 0, sizeof *p);
    rotor_status st = layers_of(model, batch, true, train, &v, &n, err);
    if (st) return st;
    n = thin(v, n, max);
    for (int i = 0; i < n && !st; i++) {
        double t[ROTOR_KAPLAREPRO_SOLVERS] = {0};
        bool ok = true, have_b = true;
        for (int s = 0; s < ROTOR_KAPLAREPRO_SOLVERS && !st && have_b; s++) {
            if (!(mask & (1u << s))) continue;
            rotor_search_options so = {.solver = SOLVERS[s], .threads = s == 0 ? threads : 1, .baseline_rate = rate};
            rotor_search_result r;
            double t0 = rotor_clock_s();
            st = rotor_search(&v[i].e, chip, &so, &r, err);
            p->wall[s] += rotor_clock_s() - t0;
            if (st == ROTOR_ERR_NOFIT) {
                st = ROTOR_OK;
                if (s == 0) have_b = false, p->nofit++;
                else ok = false, p->missed[s]++;
                continue;
            }
            if (!st) t[s] = r.best.cost.total * v[i].count;
            rotor_search_result_free(&r);
        }
        if (!st && have_b) p->layers++;
        if (!st && have_b && ok) {
            for (int s = 0; s < ROTOR_KAPLAREPRO_SOLVERS; s++) {
                double o = t[s] / t[0] - 1;
                p->cost[s] += t[s];
                if (!(mask & (1u << s))) continue;
                p->layer_over[s] += o;
                if (o > p->layer_worst[s]) p->layer_worst[s] = o;
            }
            p->pass_layers[v[i].pass]++;
            p->pass_over[v[i].pass] += t[1] / t[0] - 1;
            p->compared++;
        }
    }
    for (int s = 0; s < ROTOR_KAPLAREPRO_SOLVERS; s++) p->rel[s] = p->cost[0] > 0 ? p->cost[s] / p->cost[0] : 0;
    free(v);
    return st;
}

/* ---- Table VI and Fig. 11: one segment's inter-layer schemes --------------------- */

typedef struct scheme {
    int kind, d;
    int64_t m, units[ROTOR_KAPLAREPRO_STAGES];
    double lb;      /* optimistic time */
    int64_t buffer; /* largest bytes per core of a run */
    double cost;    /* costed (Fig. 11) */
    bool in_front;  /* survives the Pareto pruning */
} scheme;

static int64_t tensor_elems(const rotor_expr *e, int t) {
    int64_t n = 1;
    for (int d = 0; d < e->tensors[t].ndims; d++) {
        const rotor_dim *dm = &e->tensors[t].dims[d];
        int64_t x = 1;
        for (int k = 0; k < dm->nterms; k++) x += dm->coef[k] * (e->extent[dm->axis[k]] - 1);
        n *= x;
    }
    return n;
}

/* Units of ALLOC_UNITS per layer: proportional to FLOPs (kind 0), to their
 * square root (1), equal (2); each at least 1. */
static void allocate(const layer *v, int S, int kind, int64_t *u) {
    double w[ROTOR_KAPLAREPRO_STAGES], sum = 0;
    for (int k = 0; k < S; k++) {
        double f = rotor_expr_flops(&v[k].e);
        w[k] = kind == 0 ? f : kind == 1 ? sqrt(f) : 1;
        sum += w[k];
    }
    int64_t left = ALLOC_UNITS;
    for (int k = 0; k < S; k++) {
        u[k] = (int64_t)floor(w[k] / sum * ALLOC_UNITS);
        if (u[k] < 1) u[k] = 1;
        if (u[k] > left - (S - 1 - k)) u[k] = left - (S - 1 - k);
        left -= u[k];
    }
    u[S - 1] += left;
}

/* Layer k's stream axis at output dimension d with m runs, or -1 (runs once). */
static int stream_axis(const rotor_expr *e, int d, int64_t m) {
    if (m == 1 || d >= e->tensors[0].ndims) return -1;
    int a = rotor_segment_sole_axis(e, 0, d);
    return a >= 0 && e->extent[a] % m == 0 && e->extent[a] >= m ? a : -1;
}

/* Scheme s's validity (KAPLA's conservative check) and its estimate. */
static bool estimate(const layer *v, int S, const rotor_chip *chip, scheme *s) {
    int64_t N = rotor_chip_cores(chip);
    bool streams = false;
    double worst = 0, sum = 0;
    s->buffer = 0;
    for (int k = 0; k < S; k++) {
        int a = stream_axis(&v[k].e, s->d, s->m);
        int64_t runs = a >= 0 ? s->m : 1, g = s->units[k] * N / ALLOC_UNITS;
        streams = streams || a >= 0;
        /* a tensor with the stream axis is sliced per run; weights (inputs
         * without it) are whole in every run */
        int64_t per_run = 0;
        for (int t = 0; t < v[k].e.ntensors; t++) {
            int64_t b = tensor_elems(&v[k].e, t) * chip->element_bytes;
            per_run += a >= 0 && v[k].e.tensors[t].has_axis[a] ? b / runs : b;
        }
        if (per_run > g * rotor_chip_sram(chip)) return false;
        if (per_run / g > s->buffer) s->buffer = per_run / g;
        /* optimistic (KAPLA §IV-B): every core computing at the matrix
         * rate, or taking in its share of the run's data once over its
         * link, whichever is longer */
        double run = fmax(rotor_expr_flops(&v[k].e) / (double)runs / ((double)g * rotor_chip_matrix_rate(chip)),
                          (double)per_run / (double)g / rotor_chip_link_bw(chip));
        if (run > worst) worst = run;
        sum += run;
    }
    if (s->m > 1 && !streams) return false;
    s->lb = s->m > 1 ? (double)(s->m + S - 1) * worst : sum;
    return true;
}

static int by_lb(const void *a, const void *b) {
    const scheme *x = a, *y = b;
    return x->lb < y->lb ? -1 : x->lb > y->lb ? 1 : 0;
}

/* Scheme s costed: each layer's run planned by the fast solver on its
 * group's cores. */
static rotor_status cost_scheme(const layer *v, int S, const rotor_chip *chip, scheme *s, rotor_error *err) {
    int64_t N = rotor_chip_cores(chip);
    double worst = 0, sum = 0;
    for (int k = 0; k < S; k++) {
        int a = stream_axis(&v[k].e, s->d, s->m);
        rotor_expr micro;
        rotor_status st = rotor_segment_micro_expr(&v[k].e, a, a >= 0 ? s->m : 1, &micro, err);
        if (st) return st;
        rotor_chip g = rotor_segment_group_chip(chip, s->units[k] * N / ALLOC_UNITS);
        rotor_search_options so = {.solver = ROTOR_SOLVER_FAST, .threads = 1};
        rotor_search_result r;
        st = rotor_search(&micro, &g, &so, &r, err);
        if (st == ROTOR_ERR_NOFIT) {
            s->cost = INFINITY;
            return ROTOR_OK;
        }
        if (st) return st;
        double run = r.best.cost.total;
        rotor_search_result_free(&r);
        if (run > worst) worst = run;
        sum += run;
    }
    s->cost = s->m > 1 ? (double)(s->m + S - 1) * worst : sum;
    return ROTOR_OK;
}

/* Marks the Pareto survivors of v[0..n) (in_front set on entry; ties: the
 * first survives) and returns their number. */
static int pareto(scheme *v, int n) {
    int k = 0;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n && v[i].in_front; j++)
            if (j != i && v[j].lb <= v[i].lb && v[j].buffer <= v[i].buffer &&
                (v[j].lb < v[i].lb || v[j].buffer < v[i].buffer || j < i))
                v[i].in_front = false;
        k += v[i].in_front;
    }
    return k;
}

static rotor_status run_segment(const char *model, const rotor_chip *chip, int64_t batch, rotor_kaplarepro_seg *g,
                                rotor_error *err) {
    layer *v;
    int n;
    memset(g, 0, sizeof *g);
    rotor_status st = layers_of(model, batch, false, false, &v, &n, err);
    if (st) return st;
    int S = n < ROTOR_KAPLAREPRO_STAGES ? n : ROTOR_KAPLAREPRO_STAGES, dmax = 0;
    g->stages = S;
    for (int k = 0; k < S; k++) {
        snprintf(g->layers[k], sizeof g->layers[k], "%s", v[k].name);
        if (v[k].e.tensors[0].ndims > dmax) dmax = v[k].e.tensors[0].ndims;
    }
    scheme *sc = calloc((size_t)(3 * dmax * NMICRO + 1), sizeof *sc);
    if (!sc) {
        free(v);
        return rotor_nomem(err);
    }
    for (int kind = 0; kind < 3; kind++) {
        int64_t units[ROTOR_KAPLAREPRO_STAGES], other[ROTOR_KAPLAREPRO_STAGES];
        allocate(v, S, kind, units);
        bool dup = false; /* the same sizes as an earlier allocation: as segment.c, once */
        for (int k2 = 0; k2 < kind && !dup; k2++) {
            allocate(v, S, k2, other);
            dup = !memcmp(units, other, sizeof(int64_t) * (size_t)S);
        }
        for (int d = 0; d < dmax && !dup; d++)
            for (int i = 0; i < NMICRO; i++) {
                if (MICRO[i] == 1 && d > 0) continue; /* one run: the dimension does not matter */
                scheme s = {.kind = kind, .d = d, .m = MICRO[i]};
                memcpy(s.units, units, sizeof units);
                g->total++;
                if (estimate(v, S, chip, &s)) sc[g->valid++] = s;
            }
    }
    /* Fig. 11 ranks every valid scheme by the estimate (the DP's
     * prioritisation); Table VI's Pareto set is marked on the way, so that
     * what the pruning loses, if anything, is measured too */
    qsort(sc, (size_t)g->valid, sizeof *sc, by_lb);
    for (int i = 0; i < g->valid; i++) sc[i].in_front = true;
    g->pareto = pareto(sc, g->valid);
    double t0 = rotor_clock_s(), best = INFINITY, best_front = INFINITY;
    int ki = 0;
    for (int i = 0; i < g->valid && !st; i++) {
        st = cost_scheme(v, S, chip, &sc[i], err);
        if (st) break;
        if (sc[i].cost < best) best = sc[i].cost;
        if (sc[i].in_front && sc[i].cost < best_front) best_front = sc[i].cost;
        for (; ki < ROTOR_KAPLAREPRO_KS - 1 && rotor_kaplarepro_k(ki) == i + 1; ki++)
            g->k_cost[ki] = best, g->k_wall[ki] = rotor_clock_s() - t0;
    }
    for (; ki < ROTOR_KAPLAREPRO_KS; ki++) g->k_cost[ki] = best, g->k_wall[ki] = rotor_clock_s() - t0;
    for (int i = 0; i < ROTOR_KAPLAREPRO_KS; i++) g->k_cost[i] = best > 0 ? g->k_cost[i] / best : 0;
    g->pareto_loss = best > 0 && isfinite(best_front) ? best_front / best - 1 : 0;
    free(sc);
    free(v);
    return st;
}

/* ---- the run ----------------------------------------------------------------- */

/* Fig. 7's means, worsts and totals. */
static void summarise_train(rotor_kaplarepro_result *r) {
    int n = r->nmodels;
    for (int m = 0; m < n; m++) {
        const rotor_kaplarepro_point *p = &r->models[m].fig7;
        r->train_layers += p->compared;
        for (int k = 0; k < ROTOR_KAPLAREPRO_PASSES; k++) {
            r->train_pass_layers[k] += p->pass_layers[k];
            r->train_pass_over[k] += p->pass_over[k];
        }
        for (int s = 0; s < ROTOR_KAPLAREPRO_SOLVERS; s++) {
            double o = p->rel[s] - 1;
            r->train_mean_over[s] += o / n;
            if (o > r->train_worst_over[s]) r->train_worst_over[s] = o;
            r->train_wall[s] += p->wall[s];
            r->train_layer_mean[s] += p->layer_over[s];
            if (p->layer_worst[s] > r->train_layer_worst[s]) r->train_layer_worst[s] = p->layer_worst[s];
        }
    }
    for (int s = 0; s < ROTOR_KAPLAREPRO_SOLVERS && r->train_layers; s++) r->train_layer_mean[s] /= r->train_layers;
    for (int k = 0; k < ROTOR_KAPLAREPRO_PASSES; k++)
        if (r->train_pass_layers[k]) r->train_pass_over[k] /= r->train_pass_layers[k];
}

static void summarise(rotor_kaplarepro_result *r) {
    int n = r->nmodels;
    summarise_train(r);
    r->min_pruned = 1;
    int layers = 0;
    for (int m = 0; m < n; m++) {
        layers += r->models[m].fig9.compared;
        for (int s = 0; s < ROTOR_KAPLAREPRO_SOLVERS; s++) r->layer_mean[s] += r->models[m].fig9.layer_over[s];
    }
    for (int s = 0; s < ROTOR_KAPLAREPRO_SOLVERS && layers; s++) r->layer_mean[s] /= layers;
    for (int m = 0; m < n; m++) {
        const rotor_kaplarepro_model *x = &r->models[m];
        for (int s = 0; s < ROTOR_KAPLAREPRO_SOLVERS; s++) {
            double o = x->fig9.rel[s] - 1, e = x->fig10.rel[s] - 1;
            r->mean_over[s] += o / n;
            r->edge_mean_over[s] += e / n;
            if (o > r->worst_over[s]) r->worst_over[s] = o;
            if (e > r->edge_worst_over[s]) r->edge_worst_over[s] = e;
            r->wall[s] += x->fig9.wall[s];
        }
        for (int c = 0; c < ROTOR_KAPLAREPRO_CONFIGS; c++) r->table5_over[c] += (x->table5[c].rel[1] - 1) / n;
        for (int k = 0; k < ROTOR_KAPLAREPRO_KS; k++) {
            r->k_cost[k] += (x->seg.k_cost[k] - 1) / n;
            r->k_wall[k] += x->seg.k_wall[k];
        }
        double pruned = x->seg.total ? 1 - (double)x->seg.pareto / x->seg.total : 0;
        if (pruned < r->min_pruned) r->min_pruned = pruned;
    }
}

/* Table V's chip c from chip. */
static rotor_chip config_chip(const rotor_chip *chip, int c) {
    const rotor_kaplarepro_config *k = &rotor_kaplarepro_configs[c];
    rotor_chip x = *chip;
    if (k->cores_scale != 1) x = rotor_segment_group_chip(chip, (int64_t)(rotor_chip_cores(chip) * k->cores_scale));
    x.sram_bytes = (int64_t)(x.sram_bytes * k->sram_scale);
    return x;
}

static rotor_status run_model(const rotor_kaplarepro_options *opt, const rotor_chip *chip, const rotor_chip *edge,
                              rotor_kaplarepro_model *x, rotor_error *err) {
    int max = opt->max_layers > 0 ? opt->max_layers : 10, t5 = opt->table5_layers > 0 ? opt->table5_layers : 4;
    int tmax = opt->train_layers > 0 ? opt->train_layers : opt->max_layers > 0 ? opt->max_layers : 10;
    const char *model = x->net->model;
    rotor_status st = solve_point(model, chip, 64, false, max, 0xF, 0, opt->threads, &x->fig9, err);
    if (!st) st = solve_point(model, chip, 64, true, tmax, 0xF, 0, opt->threads, &x->fig7, err);
    if (!st) st = solve_point(model, edge, 1, false, max, 0xF, EDGE_RATE, opt->threads, &x->fig10, err);
    for (int c = 0; c < ROTOR_KAPLAREPRO_CONFIGS && !st; c++) {
        rotor_chip cc = config_chip(chip, c);
        st = solve_point(model, &cc, rotor_kaplarepro_configs[c].batch, false, t5, 0x3, 0, opt->threads, &x->table5[c], err);
    }
    if (!st) st = run_segment(model, chip, 64, &x->seg, err);
    return st;
}

rotor_status rotor_kaplarepro_run(const rotor_kaplarepro_options *opt, const rotor_chip *chip,
                                  const rotor_chip *edge, rotor_kaplarepro_result *out, rotor_error *err) {
    memset(out, 0, sizeof *out);
    snprintf(out->chip, sizeof out->chip, "%s", chip->name);
    snprintf(out->edge, sizeof out->edge, "%s", edge->name);
    out->batch = 64;
    if (!(out->models = calloc((size_t)(opt->nnets ? opt->nnets : 1), sizeof *out->models))) return rotor_nomem(err);
    rotor_status st = ROTOR_OK;
    for (int i = 0; i < opt->nnets && !st; i++) {
        rotor_kaplarepro_model *x = &out->models[i];
        x->net = opt->nets[i];
        st = run_model(opt, chip, edge, x, err);
        if (st) {
            char prefix[96];
            snprintf(prefix, sizeof prefix, "kapla: %s", x->net->name);
            rotor_error_prefix(err, prefix);
            break;
        }
        out->nmodels = i + 1;
        if (opt->progress) opt->progress(opt->progress_ctx, i + 1, opt->nnets);
    }
    if (!st) summarise(out);
    return st;
}

void rotor_kaplarepro_free(rotor_kaplarepro_result *r) {
    if (!r) return;
    free(r->models);
    r->models = NULL;
    r->nmodels = 0;
}
