/* dsa.c — GraphTurbo's schedules timed on a DSA's memory hierarchy
 * (include/rotor/compile/dsa.h has the model; docs/graphturbo.md, "Time",
 * its decisions). */
#include "rotor/compile/dsa.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/compile/opelem.h"

static const char *const STEP_NAMES[ROTOR_DSA_STEPS] = {"per-layer", "gb", "lb", "instances", "graphturbo"};

const char *rotor_dsa_step_name(rotor_dsa_step s) {
    return (unsigned)s < ROTOR_DSA_STEPS ? STEP_NAMES[s] : "?";
}

void rotor_dsa_ratios(const double seconds[ROTOR_DSA_STEPS], double speedup[ROTOR_DSA_STEPS],
                      double gain[ROTOR_DSA_STEPS]) {
    for (int k = 0; k < ROTOR_DSA_STEPS; k++) {
        speedup[k] = seconds[0] / seconds[k];
        gain[k] = k ? seconds[k - 1] / seconds[k] : 1.0;
    }
}

rotor_status rotor_dsa_cluster_of(const rotor_chip *chip, rotor_dsa_cluster *out, rotor_error *err) {
    *out = (rotor_dsa_cluster){0};
    if (chip->gb_bytes <= 0)
        return rotor_fail(err, ROTOR_ERR_INPUT,
                          "chip '%s' has no global buffer (gb_bytes 0): GraphTurbo's DSA schedule needs one "
                          "(stcp920 has one); on an inter-core connected chip `rotor compile --group graphturbo` "
                          "runs sub-graph instances on core groups (docs/graphturbo.md)", chip->name);
    /* GraphTurbo's machine is one chip of d clusters (§1, Fig. 1); how
     * chips would split a batch and share DDR is not modelled, so several
     * are refused rather than timed as one (a decision) */
    if (chip->chips != 1)
        return rotor_fail(err, ROTOR_ERR_INPUT,
                          "chip '%s' has %lld chips: GraphTurbo's DSA schedule times one chip of clusters "
                          "(set chips=1; docs/graphturbo.md, \"Time\")", chip->name, (long long)chip->chips);
    if (chip->hbm_gbps <= 0)
        return rotor_fail(err, ROTOR_ERR_INPUT,
                          "chip '%s' has no off-chip memory (hbm_gbps 0): GraphTurbo's schedule keeps "
                          "weights and spills there", chip->name);
    double d = (double)chip->clusters;
    out->cores = rotor_chip_cluster_cores(chip);
    out->lb_bytes = out->cores * rotor_chip_sram(chip);
    out->gb_bytes = chip->gb_bytes;
    out->gb_bw = chip->gb_gbps * 1e9;
    out->ddr_bw = chip->hbm_gbps * 1e9 / d; /* the clusters share it (§2.1: each runs its share at once) */
    out->mm_rate = chip->matrix_tflops * 1e12 / d;
    /* a quantized contraction runs at the chip's int8 rate, as on an ICCA
     * chip: the rate rotor_chip_for_op gives it */
    out->mm8_rate = rotor_chip_for_op(chip, (rotor_op_elem){.int8 = true}).matrix_tflops * 1e12 / d;
    out->vec_rate = chip->vector_tflops * 1e12 / d;
    out->units_overlap = chip->compute_units >= 2;
    /* the GB never holds more than its bytes (docs/graphturbo.md, "The GB's
     * capacity"): the half-GB rules alone let ResNet-50's order fill it to
     * 26.5 MB, a schedule no STCP920 can run */
    out->gb_capacity = true;
    out->ddr_capacity = chip->hbm_bytes;
    out->clusters = chip->clusters;
    return ROTOR_OK;
}

bool rotor_dsa_tells_apart(const rotor_chip *a, const rotor_chip *b) {
    rotor_dsa_cluster ca, cb;
    rotor_error err;
    if (rotor_dsa_cluster_of(a, &ca, &err) || rotor_dsa_cluster_of(b, &cb, &err)) return true;
    return a->element_bytes != b->element_bytes || ca.cores != cb.cores || ca.lb_bytes != cb.lb_bytes ||
           ca.gb_bytes != cb.gb_bytes || ca.gb_bw != cb.gb_bw || ca.ddr_bw != cb.ddr_bw || ca.mm_rate != cb.mm_rate ||
           ca.mm8_rate != cb.mm8_rate || ca.vec_rate != cb.vec_rate || ca.units_overlap != cb.units_overlap ||
           ca.gb_capacity != cb.gb_capacity || ca.ddr_capacity != cb.ddr_capacity || ca.clusters != cb.clusters;
}

/* What a sub-graph computes and holds, over all its instances. */
typedef struct sg_cost {
    double mm, vec;          /* FLOPs, recomputation included */
    double mm8;              /* of mm, those of contractions of 8-bit integers */
    double weights;          /* weight bytes it reads, each value once */
} sg_cost;

static void sg_costs(const rotor_graph *g, const rotor_gt_schedule *s, sg_cost *sc) {
    for (int i = 0; i < s->nsg; i++) {
        const rotor_gt_subgraph *sg = &s->sg[i];
        sg_cost c = {0};
        rotor_gt_ops_work(g, s->members + sg->first, sg->count, &c.mm, &c.mm8, &c.vec, &c.weights);
        double again = 1 + sg->best.recompute;
        c.mm *= again, c.vec *= again, c.mm8 *= again;
        sc[i] = c;
    }
}

/* The activation bytes of the instance at pos (rotor_dsa_work.read, .write). */
static void activation_bytes(const rotor_graph *g, const rotor_gt_schedule *s, int64_t pos, rotor_dsa_work *w) {
    const rotor_gt_subgraph *sg = &s->sg[s->order[pos].sg];
    double again = sg->best.in_loads; /* a chunked instance may read its inputs more than once */
    for (int i = 0; i < sg->ninputs; i++) {
        const rotor_gt_input *in = &s->inputs[sg->first_input + i];
        int pr = g->values[in->value].producer;
        if (pr < 0) { /* a model input waits in DDR */
            w->read[0] += again * (double)in->bytes;
            continue;
        }
        /* the producer's instances' outputs live in their scopes in these shares */
        const rotor_gt_subgraph *px = &s->sg[s->sg_of[pr]];
        double n = (double)px->best.instances;
        w->read[1] += again * (double)in->bytes * (double)px->in_scope[ROTOR_GT_GB] / n;
        w->read[0] += again * (double)in->bytes * (double)px->in_scope[ROTOR_GT_DDR] / n;
    }
    double block = (double)g->values[sg->output].bytes / (double)sg->best.instances;
    if (s->scope[pos] == ROTOR_GT_GB) w->write[1] += block;
    else if (s->scope[pos] == ROTOR_GT_DDR) w->write[0] += block;
    /* an instance larger than the LB sends what does not fit of its
     * intermediates out and back */
    w->read[1] += sg->best.spill_gb / 2, w->write[1] += sg->best.spill_gb / 2;
    w->read[0] += sg->best.spill_ddr / 2, w->write[0] += sg->best.spill_ddr / 2;
}

rotor_status rotor_dsa_works(const rotor_graph *g, const rotor_gt_schedule *s, const rotor_dsa_cluster *c,
                             rotor_dsa_work **out, rotor_error *err) {
    *out = NULL;
    sg_cost *sc = malloc(sizeof *sc * (size_t)(s->nsg > 0 ? s->nsg : 1));
    rotor_dsa_work *w = calloc((size_t)(s->ninst > 0 ? s->ninst : 1), sizeof *w);
    if (!sc || !w) return free(sc), free(w), rotor_nomem(err);
    sg_costs(g, s, sc);
    for (int64_t pos = 0; pos < s->ninst; pos++) {
        int k = s->order[pos].sg;
        const rotor_gt_subgraph *sg = &s->sg[k];
        double n = (double)sg->best.instances;
        w[pos].mm_s = rotor_gt_mm_seconds(sc[k].mm, sc[k].mm8, c->mm_rate, c->mm8_rate) / n;
        w[pos].vec_s = sc[k].vec / n / c->vec_rate;
        activation_bytes(g, s, pos, &w[pos]);
        /* weights (docs/graphturbo.md, "Time"): streamed into the LB w_loads
         * times an instance (more than once when it runs in chunks); those
         * that wait in the GB are brought from DDR once per sub-graph, the
         * others come from DDR through the GB every time */
        /* grouped steps: as the cost and §4.3's scope pass decided it
         * (docs/graphturbo.md, "The GB's capacity"); the per-operator steps
         * keep the half-GB rule (one kernel at a time; a decision) */
        w[pos].w_resident = s->mode == ROTOR_GT_GROUPED ? sg->best.w_resident
                                                        : rotor_gt_gb_holds(sc[k].weights, c->gb_bytes);
        w[pos].w_gb = sc[k].weights * sg->best.w_loads;
        w[pos].w_ddr = w[pos].w_resident ? (s->order[pos].index == 0 ? sc[k].weights : 0) : w[pos].w_gb;
    }
    free(sc);
    *out = w;
    return ROTOR_OK;
}

static rotor_status time_schedule(const rotor_graph *g, const rotor_gt_schedule *s, const rotor_dsa_cluster *c,
                                  rotor_dsa_step step, rotor_dsa_result *r, rotor_error *err) {
    rotor_dsa_work *works;
    rotor_status st = rotor_dsa_works(g, s, c, &works, err);
    if (st) return st;
    bool cross = step == ROTOR_DSA_GRAPHTURBO;
    for (int64_t pos = 0; pos < s->ninst; pos++) {
        const rotor_dsa_work *w = &works[pos];
        /* The GB serves reads and writes at gb_gbps each (docs/chip-format.md,
         * "gb_gbps"; docs/simulator.md, "The global buffer"): its read side
         * carries the tiles' reads and the weights into the LB, its write
         * side the tiles' writes and the weights DMA brings in from DDR.
         * Until 2026-12-02 both went on one side here, half the bandwidth
         * the chip file gives (found by a review helper). */
        double ddr = w->read[0] + w->write[0], gb = w->read[1] + w->write[1];
        double gb_rd = w->read[1] + w->w_gb, gb_wr = w->write[1] + w->w_ddr;
        double t_ddr = (ddr + w->w_ddr) / c->ddr_bw, t_gb = fmax(gb_rd, gb_wr) / c->gb_bw, t;
        if (cross) {
            double comp = c->units_overlap ? (w->mm_s > w->vec_s ? w->mm_s : w->vec_s) : w->mm_s + w->vec_s;
            t = fmax(comp, fmax(t_ddr, t_gb));
        } else { /* the weights first (DDR into the GB, then into the LB; their landing on
                  * the write side under that), then the tiles' moves (DDR and the GB's two
                  * sides apart) under the compute */
            double load = w->w_ddr / c->ddr_bw + w->w_gb / c->gb_bw;
            t = load + fmax(w->mm_s + w->vec_s, fmax(ddr / c->ddr_bw, fmax(w->read[1], w->write[1]) / c->gb_bw));
        }
        r->seconds += t;
        r->mm_s += w->mm_s, r->vec_s += w->vec_s, r->ddr_s += t_ddr, r->gb_s += t_gb;
        r->ddr_bytes += ddr + w->w_ddr, r->gb_bytes += gb + w->w_gb + w->w_ddr;
    }
    free(works);
    return ROTOR_OK;
}

/* rotor_gt_limits.price: which of §3.3's two instance orders is better is
 * judged by this model's time of the schedule each gives (a decision; the
 * paper says "with respect to memory utilization", and what the memory
 * costs is what the time prices: spills to DDR, weights streamed), and so
 * is which of the GB capacity's builds is kept (model/gtgroup.c), each as
 * the step it is built for (dsa_pricer).  rotor_dsa_limits' price, for
 * callers that build a schedule themselves, times a grouped schedule as
 * the graphturbo step and a per-operator one as its kernels. */
typedef struct dsa_pricer {
    const rotor_dsa_cluster *c;
    rotor_dsa_step step;
} dsa_pricer;

static rotor_status dsa_price_step(const rotor_graph *g, const rotor_gt_schedule *s, const void *ctx,
                                   double *seconds, rotor_error *err) {
    const dsa_pricer *p = ctx;
    rotor_dsa_result r = {0};
    rotor_status st = time_schedule(g, s, p->c, p->step, &r, err);
    *seconds = r.seconds;
    return st;
}

static rotor_status dsa_price(const rotor_graph *g, const rotor_gt_schedule *s, const void *ctx, double *seconds,
                              rotor_error *err) {
    dsa_pricer p = {ctx, s->mode == ROTOR_GT_GROUPED ? ROTOR_DSA_GRAPHTURBO : ROTOR_DSA_GB};
    return dsa_price_step(g, s, &p, seconds, err);
}

void rotor_dsa_limits(const rotor_dsa_cluster *c, rotor_gt_limits *lim) {
    *lim = (rotor_gt_limits){.lb_bytes = c->lb_bytes, .gb_bytes = c->gb_bytes, .cores = c->cores,
                             .mm_rate = c->mm_rate, .vec_rate = c->vec_rate, .gb_bw = c->gb_bw, .ddr_bw = c->ddr_bw,
                             .gb_capacity = c->gb_capacity, .price = dsa_price, .price_ctx = c,
                             .mm8_rate = c->mm8_rate};
}

/* A grouped step's schedule is the faster, as that step times it, of
 * Algorithm 2's sub-graphs split into instances and the same sub-graphs
 * each run as one instance (rotor_gt_limits.whole; a tie keeps the
 * instances).  A decision: Eq. 1 (gtsplit.c) admits a split whose summed
 * transfers cost less than the sub-graph's run whole, which the step's
 * time, with its overlaps and the GB's two sides, can see otherwise
 * (BERT-128 at 4 sentences a pass: the instances step 69.363 ms split,
 * 69.264 whole).  Each step so takes its own better schedule: the
 * instances step and the graphturbo step may differ in it (docs/graphturbo.md,
 * "Instances or none"). */
rotor_status rotor_dsa_schedule(const rotor_graph *g, const rotor_dsa_cluster *c, rotor_dsa_step step,
                                rotor_gt_schedule *s, rotor_error *err) {
    *s = (rotor_gt_schedule){0};
    if ((unsigned)step >= ROTOR_DSA_STEPS) return rotor_fail(err, ROTOR_ERR_INPUT, "dsa: unknown step %d", (int)step);
    rotor_gt_limits lim;
    rotor_dsa_limits(c, &lim);
    dsa_pricer pr = {c, step == ROTOR_DSA_PER_LAYER || step == ROTOR_DSA_LB ? ROTOR_DSA_GB : step};
    lim.price = dsa_price_step, lim.price_ctx = &pr;
    rotor_gt_mode mode = step == ROTOR_DSA_LB ? ROTOR_GT_PER_OP_LB
                         : step <= ROTOR_DSA_GB ? ROTOR_GT_PER_OP_GB : ROTOR_GT_GROUPED;
    if (step == ROTOR_DSA_PER_LAYER) /* no output stays on chip: every one to DDR; the weights as timed */
        lim.w_gb_bytes = lim.gb_bytes, lim.gb_bytes = 0;
    rotor_status st = rotor_gt_schedule_build(g, &lim, mode, s, err);
    bool split = false;
    for (int k = 0; !st && mode == ROTOR_GT_GROUPED && k < s->nsg; k++) split |= s->sg[k].best.instances > 1;
    if (st || !split) return st;
    rotor_gt_schedule w;
    double ts = 0, tw = 0;
    lim.whole = true;
    if ((st = rotor_gt_schedule_build(g, &lim, mode, &w, err)) || (st = dsa_price_step(g, s, &pr, &ts, err)) ||
        (st = dsa_price_step(g, &w, &pr, &tw, err))) {
        rotor_gt_schedule_free(&w);
        return st;
    }
    if (rotor_gt_faster(tw, ts)) rotor_gt_schedule_free(s), *s = w;
    else rotor_gt_schedule_free(&w);
    return ROTOR_OK;
}

rotor_status rotor_dsa_run(const rotor_graph *g, const rotor_dsa_cluster *c, rotor_dsa_step step,
                           rotor_dsa_result *out, rotor_error *err) {
    *out = (rotor_dsa_result){.step = step};
    rotor_gt_schedule s;
    rotor_status st = rotor_dsa_schedule(g, c, step, &s, err);
    if (st == ROTOR_OK) st = time_schedule(g, &s, c, step, out, err);
    if (st == ROTOR_OK) {
        out->subgraphs = s.nsg, out->instances = s.ninst, out->order = s.kind;
        for (int i = 0; i < 3; i++) out->tensors[i] = s.tensors[i];
        out->input_values = s.input_values;
        out->gb_peak = s.gb_peak;
        out->ddr_io = s.ddr_io, out->ddr_peak = s.ddr_peak;
        st = rotor_dsa_ddr_check(g, c, out, 1, err);
    }
    rotor_gt_schedule_free(&s);
    return st;
}

rotor_status rotor_dsa_values(const rotor_graph *g, const rotor_dsa_cluster *c, rotor_dsa_step step,
                              rotor_dsa_value **out, int *n, rotor_error *err) {
    *out = NULL, *n = 0;
    rotor_gt_schedule s;
    rotor_status st = rotor_dsa_schedule(g, c, step, &s, err);
    rotor_dsa_value *rows = st ? NULL : malloc(sizeof *rows * (size_t)(g->nvalues + 1));
    if (!st && !rows) st = rotor_nomem(err);
    int k = 0;
    for (int v = 0; !st && v < g->nvalues; v++) {
        int level = rotor_gt_value_level(g, &s, v);
        if (level < 0) continue;
        const rotor_gt_subgraph *sg = &s.sg[s.sg_of[g->values[v].producer]];
        bool inside = v != sg->output;
        rotor_dsa_value *r = &rows[k++];
        *r = (rotor_dsa_value){.value = v, .first_op = s.members[sg->first],
                               .last_op = s.members[sg->first + sg->count - 1], .bytes = g->values[v].bytes,
                               .instances = sg->best.instances, .level = (rotor_gt_scope)level,
                               .intermediate = inside, .output = g->values[v].is_output};
        if (!inside) memcpy(r->blocks, sg->in_scope, sizeof r->blocks);
    }
    rotor_gt_schedule_free(&s);
    if (st) {
        free(rows);
        return st;
    }
    *out = rows, *n = k;
    return ROTOR_OK;
}

/* One cluster's activations in DDR at once, passes as rotor_dsa_ddr_need. */
static double cluster_act(const rotor_dsa_result *r, int64_t passes) {
    return (double)r->ddr_peak + (double)(passes - 1) * (double)r->ddr_io;
}

double rotor_dsa_ddr_need(const rotor_graph *g, const rotor_dsa_cluster *c, const rotor_dsa_result *r,
                          int64_t passes) {
    rotor_graph_totals t;
    rotor_graph_totals_of(g, &t);
    return (double)t.weight_bytes + (double)c->clusters * cluster_act(r, passes);
}

rotor_status rotor_dsa_ddr_check(const rotor_graph *g, const rotor_dsa_cluster *c, const rotor_dsa_result *r,
                                 int64_t passes, rotor_error *err) {
    if (c->clusters < 1 || passes < 1)
        return rotor_fail(err, ROTOR_ERR_INPUT, "dsa: %lld clusters, %lld passes: expected at least 1 of each",
                          (long long)c->clusters, (long long)passes);
    double need = rotor_dsa_ddr_need(g, c, r, passes);
    if (need <= (double)c->ddr_capacity) return ROTOR_OK;
    rotor_graph_totals t; /* the weights again, for the message only */
    rotor_graph_totals_of(g, &t);
    return rotor_fail(err, ROTOR_ERR_NOFIT,
                      "step '%s'%s: DDR would hold %.0f bytes at once, more than the chip's %lld (hbm_bytes): "
                      "the weights' %lld and %.0f bytes of activations in each of %lld clusters "
                      "(docs/graphturbo.md, \"DDR's capacity\")",
                      rotor_dsa_step_name(r->step), passes > 1 ? " in passes" : "", need,
                      (long long)c->ddr_capacity, (long long)t.weight_bytes, cluster_act(r, passes),
                      (long long)c->clusters);
}
