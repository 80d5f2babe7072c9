/* run.c — a whole model on real data, operator by operator (docs/run.md).
 *
 * Decisions where the papers are silent:
 *  - The emulator (op/emu.c) takes each operator's inputs as whole arrays
 *    and loads every core's partitions itself, so between operators the
 *    run keeps each value whole.  That is exact because the hand-off puts
 *    every output element on exactly one core (op/handoff.h): the union of
 *    the cores' holdings is the array.  Where the data lies between
 *    operators is checked separately (check_layouts): a consumer may gather
 *    from the even layout only a value the program stores there.
 *  - Each operator's plan runs with the SRAM its core has left beside every
 *    other operator's idle layout and the live activations (docs/compile.md,
 *    "Memory"): the compiler promised that the plan fits there, and the
 *    emulator's own count of partitions and shift buffer must agree.
 *  - A stage of a pipelined segment (compile/segment.h) runs as the
 *    segment runs it: run i of a stage streamed along axis a computes the
 *    slice [i E/m, (i+1) E/m) of a on its group's chip
 *    (rotor_segment_group_chip), with the stage's plan of its micro
 *    expression; every tensor indexed by a is cut to the run's part (at
 *    offset coef * i E/m in each dimension a indexes, so a window's halo
 *    comes along), the others are whole in every run.  The stages follow
 *    the graph's order, and a streamed run i reads only its producer's run
 *    i, so running each stage's runs in turn gives the values the
 *    interleaved pipeline gives.  What the pipeline's order relies on is
 *    checked instead: a tensor the segment streams run for run (streamed)
 *    reads in run i only elements its producer wrote in run i.  Its SRAM
 *    bound is what the compiler left the operator less the pipeline's
 *    buffers (rotor_stage_buffer_bytes).
 *  - Expression operators compute float32 values (the emulator's type);
 *    an operator over another type is refused until rotor supports it,
 *    except the quantized contractions and the copies of integers, which
 *    runquant.c makes exact (docs/run.md, "Quantized operators").  Vendor
 *    kernels compute in double on any type. */
#include "rotor/run/run.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/compile/compile.h"
#include "rotor/compile/segment.h"
#include "rotor/op/emu.h"
#include "rotor/op/place.h"
#include "runint.h"

#define OPFAIL(g, o, code, ...) op_fail(g, o, err, code, __VA_ARGS__)

static rotor_status op_fail(const rotor_graph *g, int o, rotor_error *err, rotor_status code, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static rotor_status op_fail(const rotor_graph *g, int o, rotor_error *err, rotor_status code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    rotor_status st = run_op_vfail(g, o, err, code, fmt, ap);
    va_end(ap);
    return st;
}

/* ---- element views ---------------------------------------------------------------- */

/* map[k] for each element k of expression tensor t (row-major over its
 * dimensions): the value element it is, or -1 for padding.  *map NULL:
 * the identity (no view, same element count).  *n gets the tensor's
 * element count. */
static rotor_status tensor_map(const rotor_graph *g, int o, int t, int64_t **map, int64_t *n, rotor_error *err) {
    const rotor_op *op = &g->ops[o];
    const rotor_expr *e = &op->expr;
    const rotor_value *x = &g->values[op->tensor_value[t]];
    int64_t ext[ROTOR_MAX_DIMS];
    *map = NULL;
    *n = rotor_emu_tensor_elems(e, t, ext);
    const rotor_view *w = &op->view[t];
    if (w->unknown)
        return OPFAIL(g, o, ROTOR_ERR_INPUT, "tensor %s reads '%s' in an order the graph does not record",
                      e->tensors[t].name, x->name);
    if (!w->set) {
        if (*n == x->elements) return ROTOR_OK;
        return OPFAIL(g, o, ROTOR_ERR_INPUT,
                      "tensor %s reads %lld of the %lld elements of '%s' and the graph does not record which",
                      e->tensors[t].name, (long long)*n, (long long)x->elements, x->name);
    }
    int64_t *m = malloc(sizeof *m * (size_t)(*n ? *n : 1));
    if (!m) return rotor_nomem(err);
    int nd = e->tensors[t].ndims;
    int64_t idx[ROTOR_MAX_DIMS] = {0};
    for (int64_t k = 0; k < *n; k++) {
        int64_t coord[ROTOR_GRAPH_MAX_RANK];
        for (int j = 0; j < x->rank; j++) coord[j] = w->offset[j];
        for (int d = 0; d < nd; d++) coord[w->dim[d]] += w->step[d] * idx[d];
        int64_t flat = 0;
        for (int j = 0; j < x->rank && flat >= 0; j++)
            flat = coord[j] < 0 || coord[j] >= x->shape[j] ? -1 : flat * x->shape[j] + coord[j];
        m[k] = flat;
        for (int d = nd - 1; d >= 0; d--) {
            if (++idx[d] < ext[d]) break;
            idx[d] = 0;
        }
    }
    *map = m;
    return ROTOR_OK;
}

/* ---- where values lie between operators -------------------------------------------- */

/* Every consumer of a value gathers from its producer's layout, which
 * stays put; a value waits in the even layout only when some reader cannot
 * take it element for element, a vendor op made it, or nothing did
 * (docs/compile.md, "Hand-off").  A tensor the program gathers from the
 * even layout must read such a value: otherwise no operator wrote the
 * layout it reads, and the program lacks a hand-off. */
static rotor_status check_layouts(const rotor_graph *g, const rotor_program *p, rotor_error *err) {
    bool *even = calloc((size_t)(g->nvalues ? g->nvalues : 1), sizeof *even);
    if (!even) return rotor_nomem(err);
    for (int v = 0; v < g->nvalues; v++) {
        int q = g->values[v].producer;
        even[v] = q < 0 || g->ops[q].vendor || g->ops[q].tensor_value[0] != v;
    }
    for (int o = 0; o < g->nops; o++) {
        const rotor_op *op = &g->ops[o];
        if (op->vendor) {
            for (int i = 0; i < op->ninputs; i++) even[op->inputs[i]] = true;
            continue;
        }
        /* a stage's output read after its segment waits in the even layout */
        if (p->ops[o].segment && op->tensor_value[0] >= 0) even[op->tensor_value[0]] = true;
        for (int t = 1; t < op->expr.ntensors; t++)
            if (op->tensor_value[t] >= 0 && !rotor_compile_handoff_applies(g, o, t)) even[op->tensor_value[t]] = true;
    }
    rotor_status st = ROTOR_OK;
    for (int o = 0; o < g->nops && !st; o++) {
        const rotor_op *op = &g->ops[o];
        if (op->vendor || p->ops[o].segment) continue; /* a stage's inputs come by the segment's moves */
        for (int t = 1; t < op->expr.ntensors && !st; t++) {
            int v = op->tensor_value[t];
            if (v < 0 || g->values[v].role != ROTOR_ROLE_ACTIVATION) continue;
            int h = p->ops[o].handoff[t];
            int q = g->values[v].producer;
            if (h && (h - 1 != q || !rotor_compile_handoff_applies(g, o, t)))
                st = OPFAIL(g, o, ROTOR_ERR_INPUT, "tensor %s is handed off from op '%s', which did not leave '%s' "
                            "element for element", op->expr.tensors[t].name, g->ops[h - 1].name, g->values[v].name);
            else if (!h && !even[v])
                st = OPFAIL(g, o, ROTOR_ERR_INPUT, "tensor %s gathers '%s' from the even layout, but op '%s' left "
                            "it where its plan computed it and nothing stores it there (the program lacks a "
                            "hand-off)", op->expr.tensors[t].name, g->values[v].name, g->ops[q].name);
        }
    }
    free(even);
    return st;
}

/* ---- one expression operator ---------------------------------------------------------- */

typedef struct run_ctx {
    const rotor_graph *g;
    const rotor_run_options *opt;
    double **vals;
    rotor_run_result *res;
    double *stage_s; /* per operator that is a stage: one run's emulated time */
    int32_t **run_of; /* per value a stage wrote in runs: each element's run (run_stage) */
} run_ctx;

/* at[k] for each element k of the box at offset off of extents part[]
 * (row-major): its position in the row-major array of extents ext[]. */
static void box_positions(const int64_t *ext, const int64_t *off, const int64_t *part, int nd, int64_t *at) {
    int64_t idx[ROTOR_MAX_DIMS] = {0}, n = 1;
    for (int d = 0; d < nd; d++) n *= part[d];
    for (int64_t k = 0; k < n; k++) {
        int64_t a = 0;
        for (int d = 0; d < nd; d++) a = a * ext[d] + off[d] + idx[d];
        at[k] = a;
        for (int d = nd - 1; d >= 0; d--) {
            if (++idx[d] < part[d]) break;
            idx[d] = 0;
        }
    }
}

/* Where run i of stage s starts in each dimension of tensor t: coef * the
 * run's first index of the stream axis where the dimension uses it, else 0. */
static void run_offset(const rotor_stage *s, const rotor_expr *e, int t, int64_t i, int64_t *off) {
    const rotor_tensor *x = &e->tensors[t];
    int64_t first = s->axis >= 0 ? i * s->micro.extent[s->axis] : 0; /* not streamed: one run of everything */
    for (int d = 0; d < x->ndims; d++) {
        off[d] = 0;
        for (int k = 0; k < x->dims[d].nterms; k++)
            if (x->dims[d].axis[k] == s->axis) off[d] += x->dims[d].coef[k] * first;
    }
}

/* The segment streams tensor t of stage s run for run (streamed[t]): run i
 * may read only what its producer's run i wrote (c->run_of).  Otherwise the
 * program's pipeline would start run i before its data exists. */
static rotor_status check_streamed(run_ctx *c, int o, int t, int64_t i, const int64_t *at, int64_t n,
                                   const int64_t *map, rotor_error *err) {
    const rotor_graph *g = c->g;
    int v = g->ops[o].tensor_value[t];
    const int32_t *r = c->run_of[v];
    for (int64_t k = 0; k < n; k++) {
        int64_t pos = map ? map[at[k]] : at[k];
        if (pos < 0 || (r && r[pos] == i)) continue;
        char when[48] = "not run by run";
        if (r) snprintf(when, sizeof when, "in run %lld", (long long)r[pos] + 1);
        return OPFAIL(g, o, ROTOR_ERR_INPUT, "the segment streams tensor %s run for run, but run %lld reads "
                      "element %lld of '%s', which its producer wrote %s", g->ops[o].expr.tensors[t].name,
                      (long long)i + 1, (long long)pos, g->values[v].name, when);
    }
    return ROTOR_OK;
}

/* What a stage's core holds beside its plan, per core: every other
 * operator's idle layout as the unpipelined schedule keeps it (the
 * program's idle bytes less what resident stage weights add), the live
 * activations, and the buffers the pipeline adds; as segment.c bounds it. */
static int64_t stage_others(const rotor_program *p, int o, const rotor_stage *s) {
    int64_t added = 0;
    for (int k = 0; k < p->nsegments; k++) added += p->segments[k].idle_added;
    return p->idle_bytes - added - p->ops[o].idle_bytes + p->ops[o].live_bytes + rotor_stage_buffer_bytes(s);
}

/* Operator o as stage s of its segment (run.c's header): its runs in turn on
 * the group's chip, in[] and y the whole tensors, map[] their views
 * (tensor_map).  *run_s gets one run's emulated time (the stage's runs share
 * one shape, plan and time). */
static rotor_status run_stage(run_ctx *c, int o, const rotor_stage *s, float *const *in, float *y,
                              int64_t *const *map, double *run_s, rotor_error *err) {
    const rotor_graph *g = c->g;
    const rotor_expr *e = &g->ops[o].expr;
    const rotor_program *p = c->opt->program;
    const rotor_program_op *po = &p->ops[o];
    rotor_chip gc = rotor_segment_group_chip(c->opt->chip, s->cores);
    int64_t others = stage_others(p, o, s);
    rotor_emu_options eo = {.sram_bytes = rotor_chip_sram(c->opt->chip) - others};
    if (eo.sram_bytes <= 0)
        return OPFAIL(g, o, ROTOR_ERR_NOFIT, "as a stage: the other operators' idle layouts, the live activations "
                      "and the pipeline's buffers take %lld bytes per core, all of the %lld of SRAM",
                      (long long)others, (long long)rotor_chip_sram(c->opt->chip));
    rotor_place *pl = NULL;
    rotor_status st = rotor_place_make(&s->micro, &s->plan.plan, &s->plan.info, &pl, err);
    if (st) {
        run_op_prefix(g, o, err);
        return st;
    }
    int64_t ext[ROTOR_MAX_TENSORS][ROTOR_MAX_DIMS], part[ROTOR_MAX_TENSORS][ROTOR_MAX_DIMS], n[ROTOR_MAX_TENSORS];
    float *box[ROTOR_MAX_TENSORS] = {NULL};
    int64_t *at[ROTOR_MAX_TENSORS] = {NULL};
    const float *run_in[ROTOR_MAX_TENSORS] = {NULL};
    for (int t = 0; t < e->ntensors && !st; t++) {
        rotor_emu_tensor_elems(e, t, ext[t]);
        n[t] = rotor_emu_tensor_elems(&s->micro, t, part[t]);
        bool sliced = s->axis >= 0 && e->tensors[t].has_axis[s->axis];
        if (t > 0 && !sliced) {
            run_in[t] = in[t]; /* whole in every run */
            continue;
        }
        box[t] = malloc(sizeof(float) * (size_t)(n[t] ? n[t] : 1));
        at[t] = malloc(sizeof(int64_t) * (size_t)(n[t] ? n[t] : 1));
        if (!box[t] || !at[t]) st = rotor_nomem(err);
        run_in[t] = box[t];
    }
    /* the runs each element of the output was written in, for the stages
     * that stream it (check_streamed) */
    int v0 = g->ops[o].tensor_value[0];
    if (!st && s->runs > 1 && !c->run_of[v0] &&
        !(c->run_of[v0] = malloc(sizeof(int32_t) * (size_t)(g->values[v0].elements ? g->values[v0].elements : 1))))
        st = rotor_nomem(err);
    double worst = 0;
    for (int64_t i = 0; i < s->runs && !st; i++) {
        int64_t off[ROTOR_MAX_DIMS];
        for (int t = 1; t < e->ntensors && !st; t++) {
            if (!box[t]) continue;
            run_offset(s, e, t, i, off);
            box_positions(ext[t], off, part[t], e->tensors[t].ndims, at[t]);
            for (int64_t k = 0; k < n[t]; k++) box[t][k] = in[t][at[t][k]];
            if (s->streamed[t]) st = check_streamed(c, o, t, i, at[t], n[t], map[t], err);
        }
        rotor_emu_result er;
        if (!st && (st = rotor_emu_run(pl, &gc, &eo, run_in, box[0], &er, err))) {
            char prefix[200];
            snprintf(prefix, sizeof prefix, "op '%s' (%s), stage %d of segment %d, run %lld of %lld", g->ops[o].name,
                     g->ops[o].type, o - p->segments[po->segment - 1].first + 1, po->segment, (long long)i + 1,
                     (long long)s->runs);
            rotor_error_prefix(err, prefix);
        }
        if (st) break;
        run_offset(s, e, 0, i, off);
        box_positions(ext[0], off, part[0], e->tensors[0].ndims, at[0]);
        for (int64_t k = 0; k < n[0]; k++) {
            y[at[0][k]] = box[0][k];
            int64_t pos = map[0] ? map[0][at[0][k]] : at[0][k];
            if (s->runs > 1 && pos >= 0) c->run_of[v0][pos] = (int32_t)i;
        }
        double t_run = s->plan.cost.compute + er.exchange_time + er.reduction_time;
        if (t_run > worst) worst = t_run;
        if (er.memory_per_core + others > c->res->peak_bytes) c->res->peak_bytes = er.memory_per_core + others;
        c->res->stage_runs++;
    }
    *run_s = worst;
    for (int t = 0; t < ROTOR_MAX_TENSORS; t++) {
        free(box[t]);
        free(at[t]);
    }
    rotor_place_free(pl);
    return st;
}

/* After segment k's last stage: its time by the segment's steps
 * (rotor_segment_times) with each stage's emulated run time for the
 * model's, plus its setup. */
static rotor_status segment_done(run_ctx *c, const rotor_segment *sg, rotor_error *err) {
    rotor_segment copy = *sg;
    copy.stages = malloc(sizeof *copy.stages * (size_t)sg->nstages);
    if (!copy.stages) return rotor_nomem(err);
    memcpy(copy.stages, sg->stages, sizeof *copy.stages * (size_t)sg->nstages);
    for (int k = 0; k < sg->nstages; k++) copy.stages[k].exec_s = c->stage_s[sg->first + k];
    double run_s;
    rotor_status st = rotor_segment_times(&copy, NULL, NULL, &run_s, err);
    free(copy.stages);
    if (st) return st;
    c->res->emulated_s += sg->setup_s + run_s;
    c->res->segments_run++;
    return ROTOR_OK;
}

static rotor_status run_expression(run_ctx *c, int o, rotor_error *err) {
    const rotor_graph *g = c->g;
    const rotor_op *op = &g->ops[o];
    const rotor_expr *e = &op->expr;
    const rotor_program *p = c->opt ? c->opt->program : NULL;
    for (int t = 0; t < e->ntensors; t++) {
        int v = op->tensor_value[t];
        if (v < 0) return OPFAIL(g, o, ROTOR_ERR_INPUT, "tensor %s names no graph value", e->tensors[t].name);
        if (g->values[v].dtype != ROTOR_DTYPE_F32 && !run_quant_takes(g, o))
            return OPFAIL(g, o, ROTOR_ERR_INPUT, "'%s' is %s; rotor run computes float32 operators",
                          g->values[v].name, rotor_dtype_name(g->values[v].dtype));
        if (t > 0 && !c->vals[v])
            return OPFAIL(g, o, ROTOR_ERR_INPUT, "'%s' has no data (a weight without elements, or an input not "
                          "given)", g->values[v].name);
    }
    run_quant q; /* integer values: shifted inputs, exactness, the output's conversion (runquant.c) */
    rotor_status st = run_quant_begin(g, o, c->vals, &q, err);
    float *in[ROTOR_MAX_TENSORS] = {NULL};
    int64_t *maps[ROTOR_MAX_TENSORS] = {NULL}; /* kept for a stage's checks */
    int64_t *ymap = NULL, yn = 0;
    float *y = NULL;
    double *ref = NULL, *mag = NULL;
    rotor_place *pl = NULL;
    for (int t = 1; t < e->ntensors && !st; t++) {
        int64_t *map, n;
        if ((st = tensor_map(g, o, t, &map, &n, err))) break;
        maps[t] = map;
        in[t] = malloc(sizeof(float) * (size_t)(n ? n : 1));
        if (!in[t]) {
            st = rotor_nomem(err);
            break;
        }
        const double *src = q.src[t] ? q.src[t] : c->vals[op->tensor_value[t]];
        for (int64_t k = 0; k < n; k++) in[t][k] = (float)(map ? (map[k] < 0 ? 0.0 : src[map[k]]) : src[k]);
    }
    if (!st) st = run_quant_check(&q, g, o, (const float *const *)in, p != NULL, err);
    if (!st) st = tensor_map(g, o, 0, &ymap, &yn, err);
    maps[0] = ymap;
    if (!st && !(y = malloc(sizeof *y * (size_t)(yn ? yn : 1)))) st = rotor_nomem(err);
    if (!st && p && p->ops[o].segment) {
        const rotor_segment *sg = &p->segments[p->ops[o].segment - 1];
        st = run_stage(c, o, &sg->stages[o - sg->first], in, y, maps, &c->stage_s[o], err);
        if (!st) c->res->ops_emulated++;
        if (!st && o == sg->last) st = segment_done(c, sg, err);
    } else if (!st && p) {
        const rotor_program_op *po = &p->ops[o];
        const rotor_chip *chip = c->opt->chip;
        const rotor_gticca_result *gt = c->opt->gticca; /* the sub-graphs' copies of their weights too */
        int64_t others = p->idle_bytes - po->idle_bytes + po->live_bytes;
        if (gt) others += rotor_gticca_extra_idle(gt->sg, gt->nsg);
        rotor_emu_options eo = {.sram_bytes = rotor_chip_sram(chip) - others};
        rotor_emu_result er;
        if (eo.sram_bytes <= 0)
            st = OPFAIL(g, o, ROTOR_ERR_NOFIT, "the other operators' idle layouts and the live activations take "
                        "%lld bytes per core, all of the %lld of SRAM", (long long)others, (long long)rotor_chip_sram(chip));
        if (!st) st = rotor_place_make(e, &po->active, &po->active_info, &pl, err);
        if (!st) {
            rotor_chip oc = rotor_chip_for_op(chip, po->elem); /* its element size and rate (opelem.h) */
            st = rotor_emu_run(pl, &oc, &eo, (const float *const *)in, y, &er, err);
            if (st) {
                run_op_prefix(g, o, err);
            } else {
                c->res->ops_emulated++;
                c->res->emulated_s += po->setup_s + po->active_cost.compute + er.exchange_time + er.reduction_time;
                if (er.memory_per_core + others > c->res->peak_bytes) c->res->peak_bytes = er.memory_per_core + others;
            }
        }
    } else if (!st) {
        ref = malloc(sizeof *ref * (size_t)(yn ? yn : 1));
        mag = malloc(sizeof *mag * (size_t)(yn ? yn : 1));
        if (!ref || !mag) st = rotor_nomem(err);
        if (!st && (st = rotor_emu_reference(e, (const float *const *)in, ref, mag, err))) run_op_prefix(g, o, err);
        if (!st) c->res->ops_direct++;
    }
    if (!st) {
        double *out = c->vals[op->tensor_value[0]];
        for (int64_t k = 0; k < yn; k++) {
            double v = ref ? ref[k] : (double)y[k];
            int64_t at = ymap ? ymap[k] : k;
            if (at >= 0) out[at] = v;
        }
        st = run_quant_end(&q, g, o, c->vals, out, err);
    }
    run_quant_free(&q);
    rotor_place_free(pl);
    for (int t = 0; t < ROTOR_MAX_TENSORS; t++) free(in[t]);
    for (int t = 1; t < ROTOR_MAX_TENSORS; t++) free(maps[t]);
    free(ymap);
    free(y);
    free(ref);
    free(mag);
    return st;
}

/* ---- the run ----------------------------------------------------------------------------- */

/* Op o's refusal when the importer approximated it, else its outputs
 * allocated (zeroed) in vals. */
static rotor_status op_outputs(const rotor_graph *g, int o, double **vals, rotor_error *err) {
    const rotor_op *op = &g->ops[o];
    const rotor_attr *approx = rotor_op_attr(op, "rotor.approximate");
    if (approx && approx->str) return OPFAIL(g, o, ROTOR_ERR_INPUT, "%s", approx->str);
    for (int i = 0; i < op->noutputs; i++) {
        int v = op->outputs[i];
        if (!(vals[v] = calloc((size_t)g->values[v].elements, sizeof(double)))) return rotor_nomem(err);
    }
    return ROTOR_OK;
}

/* The sub-graph of opt->gticca that starts at op o, or NULL. */
static const rotor_gticca_sg *subgraph_at(const rotor_run_options *opt, int o) {
    const rotor_gticca_result *gt = opt && opt->program ? opt->gticca : NULL;
    for (int k = 0; gt && k < gt->nsg; k++)
        if (gt->sg[k].first == o) return &gt->sg[k];
    return NULL;
}

/* The sub-graphs of opt->gticca lie in order inside the graph, apart, their
 * groups within the chip, and their instances are compiled with options
 * given; their operators are planned and no stage of a pipelined segment.
 * A quantized contraction runs in an instance as in the whole graph: the
 * instance graph keeps its attributes and slices its parameters along
 * the batch (rotor_gticca_instance). */
static rotor_status check_subgraphs(const rotor_graph *g, const rotor_run_options *opt, rotor_error *err) {
    const rotor_gticca_result *gt = opt->gticca;
    const rotor_program *p = opt->program;
    if (gt->nsg && !opt->gticca_compile)
        return rotor_fail(err, ROTOR_ERR_INPUT, "run: sub-graph instances need the options they were compiled with");
    for (int k = 0; k < gt->nsg; k++) {
        const rotor_gticca_sg *s = &gt->sg[k];
        int after = k ? gt->sg[k - 1].last : -1;
        if (s->first <= after || s->last < s->first || s->last >= g->nops || s->instances < 2 ||
            s->group_cores < 1 || s->group_cores > rotor_chip_cores(opt->chip) / s->instances)
            return rotor_fail(err, ROTOR_ERR_INPUT, "run: sub-graph %d (operators %d..%d, %lld instances of %lld "
                              "cores) is not one the graph can run on %lld cores", k, s->first, s->last,
                              (long long)s->instances, (long long)s->group_cores,
                              (long long)rotor_chip_cores(opt->chip));
        for (int o = s->first; o <= s->last; o++) {
            const char *why = g->ops[o].vendor    ? "a vendor op runs on the whole chip"
                              : p->ops[o].segment ? "it is a stage of a pipelined segment"
                                                  : NULL;
            if (why) return OPFAIL(g, o, ROTOR_ERR_INPUT, "in sub-graph %d's instances: %s", k, why);
        }
    }
    return ROTOR_OK;
}

static rotor_status check_program(const rotor_graph *g, const rotor_run_options *opt, rotor_error *err) {
    const rotor_program *p = opt->program;
    if (!opt->chip) return rotor_fail(err, ROTOR_ERR_INPUT, "run: a program needs its chip");
    if (p->nops != g->nops)
        return rotor_fail(err, ROTOR_ERR_INPUT,
                          "run: the program has %d operators, the model %d (the run executes the graph ungrouped: "
                          "its program is rotor compile --group none's)", p->nops, g->nops);
    for (int o = 0; o < g->nops; o++) {
        const rotor_program_op *po = &p->ops[o];
        const rotor_op *op = &g->ops[o];
        if (strcmp(po->name, op->name) || po->vendor != op->vendor || (!op->vendor && strcmp(po->expr.text, op->expr.text)))
            return rotor_fail(err, ROTOR_ERR_INPUT, "run: program operator %d is '%s', the model's is '%s' (%s)", o,
                              po->name, op->name, op->vendor ? "vendor" : op->expr.text);
    }
    if (opt->gticca) {
        rotor_status st = check_subgraphs(g, opt, err);
        if (st) return st;
    }
    return check_layouts(g, p, err);
}

rotor_status rotor_run(const rotor_graph *g, const double *const *inputs, const rotor_run_options *opt,
                       rotor_run_result *out, rotor_error *err) {
    memset(out, 0, sizeof *out);
    rotor_status st = ROTOR_OK;
    if (opt && opt->gticca && opt->gticca->nsg && !opt->program)
        return rotor_fail(err, ROTOR_ERR_INPUT, "run: sub-graph instances need T10's program of the graph");
    if (opt && opt->program && (st = check_program(g, opt, err))) return st;
    out->nvalues = g->nvalues;
    out->values = calloc((size_t)(g->nvalues ? g->nvalues : 1), sizeof *out->values);
    if (!out->values) {
        memset(out, 0, sizeof *out);
        return rotor_nomem(err);
    }
    run_ctx c = {.g = g, .opt = opt, .vals = out->values, .res = out};
    if (opt && opt->program && opt->program->nsegments &&
        (!(c.stage_s = calloc((size_t)g->nops, sizeof *c.stage_s)) ||
         !(c.run_of = calloc((size_t)(g->nvalues ? g->nvalues : 1), sizeof *c.run_of))))
        st = rotor_nomem(err);
    for (int v = 0; v < g->nvalues && !st; v++) {
        const rotor_value *x = &g->values[v];
        const double *src = x->data ? x->data : (x->producer < 0 && inputs ? inputs[v] : NULL);
        if (!src) continue;
        if (!(out->values[v] = malloc(sizeof(double) * (size_t)x->elements))) st = rotor_nomem(err);
        else memcpy(out->values[v], src, sizeof(double) * (size_t)x->elements);
    }
    for (int o = 0; o < g->nops && !st; o++) {
        const rotor_op *op = &g->ops[o];
        const rotor_gticca_sg *sg = subgraph_at(opt, o);
        for (int m = o; m <= (sg ? sg->last : o) && !st; m++) st = op_outputs(g, m, out->values, err);
        if (st) break;
        if (sg) {
            st = run_gticca_subgraph(g, opt, sg, out, err);
            o = sg->last;
        } else if (op->vendor) {
            for (int i = 0; i < op->ninputs && !st; i++)
                if (!out->values[op->inputs[i]])
                    st = OPFAIL(g, o, ROTOR_ERR_INPUT, "'%s' has no data (a weight without elements, or an input "
                                "not given)", g->values[op->inputs[i]].name);
            if (!st) st = rotor_run_kernel(g, o, out->values, err);
            if (!st) {
                out->ops_vendor++;
                if (opt && opt->program) out->emulated_s += opt->program->ops[o].exec_s;
            }
        } else {
            st = run_expression(&c, o, err);
        }
        if (!st && opt && opt->progress) opt->progress(opt->progress_ctx, o + 1, g->nops);
    }
    for (int v = 0; v < g->nvalues && !st; v++)
        if (g->values[v].is_output && !out->values[v])
            st = rotor_fail(err, ROTOR_ERR_INPUT, "output '%s' has no value (a constant whose elements the graph "
                            "does not carry, or an input not given)", g->values[v].name);
    free(c.stage_s);
    for (int v = 0; c.run_of && v < g->nvalues; v++) free(c.run_of[v]);
    free(c.run_of);
    if (st) rotor_run_result_free(out);
    return st;
}

/* ---- comparing outputs ------------------------------------------------------------------- */

/* Decision (ONNX's test runner compares with numpy's assert_allclose, whose
 * equal_nan is true): NaN equals NaN, and only NaN; an infinity equals the
 * same infinity.  The tolerance applies to finite pairs alone: with a NaN
 * or an infinity in it, `d > atol + rtol |r|` would be false whatever x
 * is, and a reference full of NaN would pass anything. */
rotor_run_cmp rotor_run_compare(const double *x, const double *ref, int64_t n, bool exact) {
    rotor_run_cmp c = {0, 0, 0};
    for (int64_t k = 0; k < n; k++) {
        double a = x[k], r = ref[k], d;
        bool beyond;
        if (!isfinite(a) || !isfinite(r)) {
            bool same = (isnan(a) && isnan(r)) || a == r;
            d = same ? 0 : INFINITY;
            beyond = !same;
            c.nonfinite += beyond;
        } else {
            d = fabs(a - r); /* may overflow to infinity: then beyond any tolerance */
            beyond = exact ? d != 0 : !(d <= ROTOR_RUN_ATOL + ROTOR_RUN_RTOL * fabs(r));
        }
        if (d > c.max_abs) c.max_abs = d;
        c.bad += beyond;
    }
    return c;
}

void rotor_run_count_nonfinite(const double *x, int64_t n, int64_t *nan, int64_t *inf) {
    *nan = *inf = 0;
    for (int64_t k = 0; k < n; k++) {
        *nan += isnan(x[k]) != 0;
        *inf += isinf(x[k]) != 0;
    }
}

void rotor_run_result_free(rotor_run_result *r) {
    if (!r) return;
    for (int v = 0; r->values && v < r->nvalues; v++) free(r->values[v]);
    free(r->values);
    memset(r, 0, sizeof *r);
}
