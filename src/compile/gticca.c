/* gticca.c — GraphTurbo's sub-graph instances on an inter-core connected
 * chip's core groups (GraphTurbo §3.3-§3.4 on the IPU; issue 42 item 7).
 * include/rotor/compile/gticca.h has the model; docs/graphturbo.md, "On an
 * ICCA chip", the measurements.
 *
 * GraphTurbo splits a sub-graph into instances that run on core groups and
 * keep their intermediates in the cores' local buffers.  On the IPU every
 * core's SRAM is its local buffer and there is no global buffer, so an
 * instance is a group of cores running the sub-graph's operators one after
 * another on its share of the batch, its intermediates moving only inside
 * the group.  That is the KAPLA segments' group (segment.c): a range of
 * consecutive cores at the chip's per-core rates, a chip of its own
 * (rotor_segment_group_chip).  One mechanism: the instance is T10's own
 * compile of the sub-graph on that chip, so each operator is planned by the
 * exact search on its group and each move between them is the hand-off
 * priced on the group.
 *
 * Decisions where the paper is silent (docs/graphturbo.md repeats them):
 *  - Instances split the operators' first axis only, where every
 *    activation carries it as its first dimension and no weight has it
 *    (batch_splits): the batch of a CNN, the rows of a transformer's
 *    projections and FFN (batch x tokens, one row a token).  Such a split
 *    needs no halo: each row is computed from its own rows alone.  A
 *    spatial split of a 3x3 convolution chain on the IPU would recompute
 *    halos on cores that are already the bottleneck (compute is 71 % of
 *    ResNet-18's T10 time at batch 8), and its partial rows would break the
 *    T10 plans' even partitions.  So a CNN at batch 1 never groups; BERT at
 *    batch 1 can (its FFN's 128 token rows, tests/test_gticca.c).  Measured on
 *    ResNet-18's stage-0 block: a split along h is 3 to 22 % slower than the
 *    whole image on the same cores (docs/graphturbo.md, "Spatial instances
 *    and longer sub-graphs").
 *  - n, the instances of a sub-graph, is 2, 4, 8 or 16, dividing that axis,
 *    with at least 64 cores a group (the segments' unit, N/64); the n
 *    instances run at once on n groups of N/n cores, one each.
 *  - A sub-graph is a range of 2 to MAX_OPS (3: a residual block with its
 *    downsample) consecutive planned operators
 *    (no vendor op: vendor ops keep every core, as in segments) whose
 *    values only its last operator's output leaves, read by anything after
 *    (GraphTurbo §3.6: a sub-graph has one output).  Each operator's
 *    output, and every activation it reads, must carry the batch as its
 *    first dimension, and a view (a padded window) must map it straight
 *    (dimension 0 to value dimension 0, step 1, offset 0), so that an
 *    instance's slice is the same expression at batch B/n; otherwise the
 *    range is not a candidate.
 *  - What a group's SRAM holds: the instance's own schedule (its operators'
 *    weights, replicated in every group, as idle layouts over the group;
 *    its activations), beside every other operator's idle layout of the
 *    T10 schedule and the largest live activations T10 has around any of
 *    the sub-graph's operators (an over-estimate: those include the
 *    sub-graph's own).  A candidate over the SRAM is not taken.
 *  - Boundary: the instance compile gathers its inputs from the even
 *    layout (crossing the chip once, each core receiving its partition),
 *    at no less than T10's hand-off into the same operator (entry_cost);
 *    its output waits in the even layout; an operator after it that took
 *    that output by hand-off gathers it there, at the cost segment.c
 *    prices for a segment (compile_handoffs_lost), never less than the
 *    hand-off it replaces: the model prices some gathers from the even
 *    layout below the hand-off (up to 0.8 us on ResNet-18's stage 0 at
 *    batch 8), and a sub-graph must win by its instances alone.
 *  - Choice: a dynamic program over the graph order, as the segments'
 *    (KAPLA §IV-B): each operator under T10 alone, or the last of a
 *    sub-graph run as instances, whichever costs less.  The lost hand-offs
 *    are priced per sub-graph, then the final schedule is priced with all
 *    of them lost at once; should that exceed T10 alone, nothing is grouped.
 *    So the result is never slower than T10 alone on the same graph. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/textbuf.h"
#include "compile/compileint.h"
#include "rotor/compile/gticca.h"
#include "rotor/compile/planstore.h"
#include "rotor/compile/program.h"
#include "rotor/compile/segment.h"
#include "rotor/model/elemtype.h"
#include "rotor/model/quantparam.h"

#define MAX_OPS 3      /* operators per sub-graph at most (a residual block; 6 gained at most 0.24 %) */
#define MAX_INST 16    /* instances per sub-graph at most */
#define MIN_GROUP_FRAC 64 /* a group has at least N / 64 cores */
#define NCOUNTS 4         /* the instance counts: n = 2, 4, 8, 16 */
_Static_assert(MAX_INST == 2 << (NCOUNTS - 1), "NCOUNTS counts the instance counts up to MAX_INST");

/* Whether n instances have a group each: at most MAX_INST, and groups of
 * at least N / MIN_GROUP_FRAC cores and of one core at least (a chip of
 * fewer cores than instances made groups of 0 cores: a division by zero
 * in the instance's compile). */
static bool instances_fit(int64_t cores, int64_t n) {
    return n <= MAX_INST && n <= cores && cores / n >= cores / MIN_GROUP_FRAC;
}

void rotor_gticca_result_free(rotor_gticca_result *r) {
    if (!r) return;
    free(r->sg);
    free(r->lost_bytes);
    free(r->lost_rounds);
    memset(r, 0, sizeof *r);
}

/* Operators first..last form a closed range of planned operators: only
 * last's outputs are read after it, and none of the others is a model
 * output. */
static bool closed_range(const compiler *cc, int first, int last) {
    const rotor_graph *g = cc->g;
    for (int o = first; o <= last; o++)
        if (g->ops[o].vendor || cc->st[o].frontier < 0) return false;
    for (int o = first; o < last; o++)
        for (int k = 0; k < g->ops[o].noutputs; k++) {
            int v = g->ops[o].outputs[k];
            if (g->values[v].is_output) return false;
            for (int c = last + 1; c < g->nops; c++)
                for (int i = 0; i < g->ops[c].ninputs; i++)
                    if (g->ops[c].inputs[i] == v) return false;
        }
    return true;
}

/* Whether op o's first axis (its output's first dimension, axis *a: the
 * batch, or a transformer's token rows) splits n ways: every activation
 * its expression names carries that axis as its first dimension, value
 * for value, with no view; no weight has it; and every activation outside
 * the expression (a fused epilogue's) holds the output's rows or one row
 * (below). */
static bool batch_splits(const rotor_graph *g, int o, int64_t n, int *a) {
    const rotor_op *op = &g->ops[o];
    const rotor_expr *e = &op->expr;
    *a = rotor_segment_sole_axis(e, 0, 0);
    if (*a < 0 || e->extent[*a] % n) return false;
    for (int t = 0; t < e->ntensors; t++) {
        int v = op->tensor_value[t];
        bool act = v >= 0 && g->values[v].role == ROTOR_ROLE_ACTIVATION;
        if (!act) {
            if (e->tensors[t].has_axis[*a]) return false;
            continue;
        }
        const rotor_view *w = &op->view[t];
        bool plain = !w->set ? !w->unknown : w->dim[0] == 0 && w->step[0] == 1 && w->offset[0] == 0;
        if (!plain || rotor_segment_sole_axis(e, t, 0) != *a || g->values[v].rank < 1 ||
            g->values[v].shape[0] != e->extent[*a])
            return false;
    }
    /* The values outside the expression: a fused epilogue's other inputs
     * (docs/group.md), broadcast to the output's shape, trailing dimensions
     * aligned.  rotor_gticca_instance slices an activation's first
     * dimension when n divides it, so one of the output's rank must be the
     * output's rows (sliced) or one row (1: kept whole, read by every
     * instance); a lower rank (a [768] vector beside 128 x 768 rows) aligns
     * its first dimension with another axis, and slicing it would be wrong:
     * the range is no candidate.  A value of one element, whatever its rank
     * (a scale or zero point DynamicQuantizeLinear computes), is read whole
     * by every instance: never sliced (rotor_gticca_instance slices a first
     * dimension n divides). */
    const rotor_value *out = &g->values[op->outputs[0]];
    for (int k = 0; k < op->ninputs + op->noutputs; k++) {
        int v = k < op->ninputs ? op->inputs[k] : op->outputs[k - op->ninputs];
        const rotor_value *x = &g->values[v];
        if (x->role != ROTOR_ROLE_ACTIVATION) continue;
        bool named = false;
        for (int t = 0; t < e->ntensors && !named; t++) named = op->tensor_value[t] == v;
        if (!named && x->elements > 1 && (x->rank != out->rank || (x->shape[0] != e->extent[*a] && x->shape[0] != 1)))
            return false;
    }
    return true;
}

/* Whether op o goes into an instance split n ways: its batch splits
 * (batch_splits, axis *a) and its values fit an instance graph's operator
 * (rotor_gticca_instance's arrays). */
static bool op_splits(const rotor_graph *g, int o, int64_t n, int *a) {
    return batch_splits(g, o, n, a) && g->ops[o].ninputs <= 64 && g->ops[o].noutputs <= 8;
}

/* Whether every operator of first..last goes into an instance (op_splits). */
static bool range_splits(const rotor_graph *g, int first, int last, int64_t n) {
    for (int o = first; o <= last; o++) {
        int a;
        if (!op_splits(g, o, n, &a)) return false;
    }
    return true;
}

/* Adds value v of g to the instance graph ig once (map[v] is its index
 * there, -1 before): an activation with its first dimension divided by n
 * when n divides it, and a value `slice` names (a quantized operator's
 * parameter along the batch, batch_params) so too.  *fine false when v
 * is there already the other way (a weight one operator reads whole and
 * another by rows: no instance can hold both). */
static rotor_status add_value(const rotor_graph *g, int v, int64_t n, bool slice, rotor_graph *ig, int *map,
                              bool *fine, rotor_error *err) {
    const rotor_value *x = &g->values[v];
    int64_t shape[ROTOR_GRAPH_MAX_RANK];
    memcpy(shape, x->shape, sizeof shape);
    if ((slice || x->role == ROTOR_ROLE_ACTIVATION) && x->rank >= 1 && shape[0] % n == 0) shape[0] /= n;
    if (map[v] >= 0) {
        if (ig->values[map[v]].rank >= 1 && ig->values[map[v]].shape[0] != shape[0]) *fine = false;
        return ROTOR_OK;
    }
    return rotor_graph_add_value(ig, x->name, x->dtype, x->rank, shape, x->role, &map[v], err);
}

/* Which inputs of quantized operator o an instance reads by its batch
 * rows (slice[i] for op->inputs[i]): a parameter read from the first
 * dimension of an activation the instance splits (rotor_quant_lookups),
 * with more than one element there, holds one entry per row of that
 * batch, and an instance's rows are a slice of them.  Read whole, instance
 * i would take rows 0.. of the parameter for its own rows i B/n..: a
 * silent wrong zero point or scale.  False (o does not split) when such a
 * parameter's first dimension is neither the batch's extent nor 1 (no
 * slice is its rows), or when the operator also reads it another way (one
 * value as A's per-row and B's per-column scale: sliced, B's reads would
 * run past its rows). */
static bool batch_params(const rotor_graph *g, int o, bool *slice) {
    const rotor_op *op = &g->ops[o];
    for (int i = 0; i < op->ninputs; i++) slice[i] = false;
    rotor_quant_lookup q[ROTOR_QP_COUNT];
    if (!rotor_quant_lookups(op, q)) return true;
    int rows[ROTOR_QP_COUNT], whole[ROTOR_QP_COUNT];
    for (int k = 0; k < ROTOR_QP_COUNT; k++) {
        int v = rows[k] = whole[k] = rotor_op_input_at(op, q[k].pos), xv = op->tensor_value[q[k].tensor];
        if (v < 0) continue;
        const rotor_value *p = &g->values[v], *x = xv >= 0 ? &g->values[xv] : NULL;
        bool by_rows = x && x->role == ROTOR_ROLE_ACTIVATION && q[k].start == 0 && p->rank >= 1 && p->shape[0] != 1;
        if (by_rows && p->shape[0] != x->shape[0]) return false;
        if (by_rows) whole[k] = -1;
        else rows[k] = -1;
    }
    for (int k = 0; k < ROTOR_QP_COUNT; k++)
        for (int j = 0; rows[k] >= 0 && j < ROTOR_QP_COUNT; j++)
            if (whole[j] == rows[k] && g->values[rows[k]].elements > 1) return false;
    for (int i = 0; i < op->ninputs; i++)
        for (int k = 0; k < ROTOR_QP_COUNT; k++) slice[i] = slice[i] || op->inputs[i] == rows[k];
    return true;
}

/* One instance of first..last split n ways: the operators' expressions at
 * batch B/n (rotor_segment_micro_expr, the segments' micro-batch), their
 * values sliced alike, last's output the graph's output.  Each operator
 * keeps its attributes (a quantized contraction's parameters: rotor run
 * runs it as the whole graph's).  *ok false when some operator does not
 * split. */
rotor_status rotor_gticca_instance(const rotor_graph *g, int first, int last, int64_t n, rotor_graph *ig, bool *ok,
                                   rotor_error *err) {
    *ok = false;
    rotor_graph_init(ig, g->name);
    int *map = malloc((size_t)g->nvalues * sizeof *map);
    if (!map) return rotor_nomem(err);
    for (int v = 0; v < g->nvalues; v++) map[v] = -1;
    rotor_status st = ROTOR_OK;
    bool fine = true;
    for (int o = first; o <= last && !st && fine; o++) {
        const rotor_op *op = &g->ops[o];
        int a, in[64], outv[8];
        bool slice[64];
        rotor_expr me;
        if (!(fine = op_splits(g, o, n, &a) && batch_params(g, o, slice))) break;
        if ((st = rotor_segment_micro_expr(&op->expr, a, n, &me, err))) break;
        for (int i = 0; i < op->ninputs && !st; i++) st = add_value(g, op->inputs[i], n, slice[i], ig, map, &fine, err);
        for (int i = 0; i < op->noutputs && !st; i++) st = add_value(g, op->outputs[i], n, false, ig, map, &fine, err);
        if (st || !fine) break;
        for (int i = 0; i < op->ninputs; i++) in[i] = map[op->inputs[i]];
        for (int i = 0; i < op->noutputs; i++) outv[i] = map[op->outputs[i]];
        rotor_op_desc d = {.name = op->name, .type = op->type, .inputs = in, .ninputs = op->ninputs,
                           .outputs = outv, .noutputs = op->noutputs, .view = op->view};
        for (int t = 0; t < ROTOR_MAX_TENSORS; t++)
            d.tensor_value[t] = t < op->expr.ntensors && op->tensor_value[t] >= 0 ? map[op->tensor_value[t]] : -1;
        int at;
        if ((st = rotor_graph_add_bound_op(ig, &d, &me, &at, err))) break;
        memcpy(ig->ops[at].fused, op->fused, sizeof op->fused);
        ig->ops[at].nfused = op->nfused;
        for (int k = 0; k < op->nattrs && !st; k++) {
            const rotor_attr *x = &op->attrs[k];
            st = rotor_graph_add_attr(ig, at, x->name, x->ints, x->nints, x->floats, x->nfloats, x->str, err);
        }
    }
    if (!st && fine) st = rotor_graph_set_output(ig, map[g->ops[last].outputs[0]], err);
    *ok = !st && fine;
    free(map);
    return st;
}

rotor_status rotor_gticca_instance_program(const rotor_graph *g, const rotor_chip *chip, const rotor_gticca_sg *s,
                                           const rotor_compile_options *opt, rotor_graph *ig, rotor_chip *gc,
                                           rotor_program *prog, double *model_s, rotor_error *err) {
    memset(prog, 0, sizeof *prog);
    bool ok = false;
    rotor_status st = rotor_gticca_instance(g, s->first, s->last, s->instances, ig, &ok, err);
    if (!st && !ok)
        st = rotor_fail(err, ROTOR_ERR_INPUT, "operator '%s': its batch no longer splits %lld ways",
                        g->ops[s->first].name, (long long)s->instances);
    *gc = rotor_segment_group_chip(chip, s->group_cores);
    rotor_compile_options so = *opt;
    so.graphturbo = so.pipeline = false;
    so.progress = NULL;
    rotor_compile_result cr;
    bool compiled = false;
    if (!st) compiled = !(st = rotor_compile(ig, gc, &so, &cr, err));
    if (!st) st = rotor_program_roundtrip(ig, gc, &cr, ig->name, prog, err);
    if (!st && model_s) *model_s = cr.total_s;
    if (compiled) rotor_compile_result_free(&cr);
    return st;
}

/* One instance compile: its total (INFINITY: it does not split or fit),
 * compute, SRAM peak, and each operator's setup. */
typedef struct inst_cost {
    double s, compute;
    int64_t peak, idle; /* per core: the instance's peak, its idle layouts */
    double setup[MAX_OPS];
} inst_cost;

/* The instance compiles run so far, by shape (a ResNet's repeated blocks
 * compile once). */
typedef struct inst_memo {
    char **key;
    inst_cost *c;
    int n, cap;
} inst_memo;

static void inst_memo_free(inst_memo *m) {
    for (int i = 0; i < m->n; i++) free(m->key[i]);
    free(m->key);
    free(m->c);
}

/* The key of first..last split n ways: the range as rotor_gticca_instance
 * copies it, so that two ranges share an instance compile (and whether
 * one splits at all) only when their instance graphs are alike.  Each
 * operator's expression with its extents and element type
 * (rotor_op_elem_of: an 8-bit contraction and a float one of one shape
 * cost differently); its inputs and outputs as the range's values, each
 * numbered at its first appearance and described there (role, dtype,
 * shape, where inside the range it comes from), so a parameter that two
 * positions share, or that is per row rather than per tensor, is part of
 * the key (batch_params decides by it); the value and view of each
 * expression tensor; and its attributes (a quantized contraction's
 * parameter positions).  Until 2026-12-02 the key held the expressions,
 * extents and sources only, and an 8-bit range took the price of a float
 * range of the same shape compiled before it, silently. */
static char *inst_key(const rotor_graph *g, int first, int last, int64_t n) {
    rotor_textbuf b = ROTOR_TEXTBUF_INIT;
    size_t cap = 1;
    for (int o = first; o <= last; o++) cap += (size_t)(g->ops[o].ninputs + g->ops[o].noutputs);
    int *seen = malloc(cap * sizeof *seen), nseen = 0; /* the range's values by local number */
    if (!seen) return NULL;
    rotor_textbuf_printf(&b, "%lld", (long long)n);
    for (int o = first; o <= last && b.ok; o++) {
        const rotor_op *op = &g->ops[o];
        const rotor_expr *e = &op->expr;
        rotor_op_elem d = rotor_op_elem_of(g, o);
        rotor_textbuf_printf(&b, "|%s:e%lld%s:", e->text, (long long)d.bytes, d.int8 ? "i8" : "");
        for (int a = 0; a < e->naxes; a++) rotor_textbuf_printf(&b, "%lld,", (long long)e->extent[a]);
        for (int k = 0; k < op->ninputs + op->noutputs; k++) {
            int v = k < op->ninputs ? op->inputs[k] : op->outputs[k - op->ninputs], at = 0;
            while (at < nseen && seen[at] != v) at++;
            rotor_textbuf_printf(&b, " %c%d", k < op->ninputs ? 'i' : 'o', at);
            if (at < nseen) continue;
            seen[nseen++] = v;
            const rotor_value *x = &g->values[v];
            rotor_textbuf_printf(&b, "(%d,%d,%d:", (int)x->role, (int)x->dtype,
                                 x->producer >= first ? x->producer - first : -1);
            for (int r = 0; r < x->rank; r++) rotor_textbuf_printf(&b, "%lld,", (long long)x->shape[r]);
            rotor_textbuf_printf(&b, ")");
        }
        for (int t = 0; t < e->ntensors; t++) {
            int v = op->tensor_value[t], at = 0;
            while (v >= 0 && at < nseen && seen[at] != v) at++;
            rotor_textbuf_printf(&b, " t%d", v < 0 ? -1 : at);
            const rotor_view *w = &op->view[t];
            if (!w->set && !w->unknown) continue;
            rotor_textbuf_printf(&b, "v%d%d", w->set, w->unknown);
            for (int i = 0; i < ROTOR_MAX_DIMS; i++)
                rotor_textbuf_printf(&b, ",%d/%lld/%lld", w->dim[i], (long long)w->step[i], (long long)w->offset[i]);
        }
        for (int k = 0; k < op->nattrs; k++) {
            const rotor_attr *x = &op->attrs[k];
            rotor_textbuf_printf(&b, " @%s:", x->name);
            for (int i = 0; i < x->nints; i++) rotor_textbuf_printf(&b, "%lld,", (long long)x->ints[i]);
            for (int i = 0; i < x->nfloats; i++) rotor_textbuf_printf(&b, "%a,", x->floats[i]);
            if (x->str) rotor_textbuf_printf(&b, "'%s'", x->str);
        }
    }
    free(seen);
    return rotor_textbuf_take(&b);
}

/* What one instance compile did: whether it ran (the range splits n
 * ways), the frontier searches it needed and those of them the plan store
 * answered. */
typedef struct inst_run {
    bool compiled;
    int searches, hits;
} inst_run;

/* One instance of first..last on N/n cores, compiled with `threads`
 * search threads: its cost (s INFINITY when it does not split or fit). */
static rotor_status instance_compile(const compiler *cc, const rotor_compile_options *opt, int first, int last,
                                     int64_t n, int threads, inst_cost *out, inst_run *run, rotor_error *err) {
    rotor_graph ig;
    bool ok;
    *out = (inst_cost){.s = INFINITY};
    *run = (inst_run){0};
    rotor_status st = rotor_gticca_instance(cc->g, first, last, n, &ig, &ok, err);
    if (!st && ok) {
        rotor_chip gc = rotor_segment_group_chip(cc->chip, cc->cores / n);
        rotor_compile_options so = *opt;
        so.graphturbo = so.pipeline = false;
        so.progress = NULL;
        so.threads = threads;
        rotor_compile_result r;
        rotor_error ierr;
        rotor_status cs = rotor_compile(&ig, &gc, &so, &r, &ierr);
        run->compiled = true;
        if (cs == ROTOR_ERR_NOMEM) st = rotor_nomem(err);
        if (!cs) {
            run->searches = r.searches;
            run->hits = r.cache_hits;
            out->s = r.total_s, out->compute = r.compute_s, out->peak = r.peak_bytes, out->idle = r.idle_bytes;
            for (int k = 0; k < r.nops && k < MAX_OPS; k++) out->setup[k] = r.ops[k].setup_s;
            rotor_compile_result_free(&r);
        }
    }
    rotor_graph_free(&ig);
    return st;
}

/* The memo's entry for key, or -1. */
static int inst_memo_find(const inst_memo *m, const char *key) {
    for (int i = 0; i < m->n; i++)
        if (!strcmp(m->key[i], key)) return i;
    return -1;
}

/* Adds key (taken over) with its cost to the memo. */
static rotor_status inst_memo_add(inst_memo *m, char *key, const inst_cost *c, rotor_error *err) {
    if (m->n == m->cap) {
        int nc = m->cap ? 2 * m->cap : 32;
        char **k2 = realloc(m->key, (size_t)nc * sizeof *k2);
        if (k2) m->key = k2;
        inst_cost *c2 = k2 ? realloc(m->c, (size_t)nc * sizeof *c2) : NULL;
        if (!c2) {
            free(key);
            return rotor_nomem(err);
        }
        m->c = c2;
        m->cap = nc;
    }
    m->key[m->n] = key;
    m->c[m->n] = *c;
    m->n++;
    return ROTOR_OK;
}

static void run_count(rotor_gticca_result *res, const inst_run *run) {
    res->compiles += run->compiled;
    res->searches += run->searches;
    res->searches_run += run->searches - run->hits;
}

/* One instance of first..last on N/n cores, from the memo or compiled into
 * it (counted in res). */
static rotor_status instance_cost(compiler *cc, const rotor_compile_options *opt, inst_memo *m, int first,
                                  int last, int64_t n, inst_cost *out, rotor_gticca_result *res, rotor_error *err) {
    char *key = inst_key(cc->g, first, last, n);
    if (!key) return rotor_nomem(err);
    int at = inst_memo_find(m, key);
    if (at >= 0) {
        free(key);
        *out = m->c[at];
        return ROTOR_OK;
    }
    inst_run run;
    rotor_status st = instance_compile(cc, opt, first, last, n, opt->threads, out, &run, err);
    run_count(res, &run);
    if (st) {
        free(key);
        return st;
    }
    return inst_memo_add(m, key, out, err);
}

/* A candidate of the dynamic program: first..last split n ways. */
typedef struct inst_job {
    int first, last;
    int64_t n;
    char *key;
    inst_cost c;
    inst_run run;
    bool done; /* nothing to compile: the range does not split n ways */
    rotor_status st;
    rotor_error err;
} inst_job;

/* Each operator's shape: the first operator of the graph with the same
 * expression and extents (its own index when none before it has them).
 * The plan store's key of an instance's operator names the same and its
 * element size (compile.c, shape_key) on the group chip: two operators of
 * one shape here may have two keys, two of different shapes never share
 * one. */
static rotor_status op_shapes(const rotor_graph *g, int **shape, rotor_error *err) {
    int *s = malloc((size_t)(g->nops ? g->nops : 1) * sizeof *s);
    if (!s) return rotor_nomem(err);
    for (int o = 0; o < g->nops; o++) {
        const rotor_expr *e = &g->ops[o].expr;
        s[o] = o;
        for (int p = 0; p < o && s[o] == o; p++) {
            const rotor_expr *f = &g->ops[p].expr;
            if (s[p] == p && e->naxes == f->naxes && !strcmp(e->text, f->text) &&
                !memcmp(e->extent, f->extent, (size_t)e->naxes * sizeof *e->extent))
                s[o] = p;
        }
    }
    *shape = s;
    return ROTOR_OK;
}

static int uf_root(int *up, int k) {
    while (up[k] != k) k = up[k] = up[up[k]];
    return k;
}

/* The jobs in chains: jobs that search a shape in common (an operator of
 * the same shape, op_shapes, on the same group: the same n; transitively)
 * form one chain, run one after another in the loop's order
 * so that each reads the searches of those before it from the plan store;
 * chains share no search, so they run side by side.  order[] lists the
 * jobs chain by chain, the chains by weight, largest first (they are
 * scheduled in that order: the longest start first); chain c is
 * order[at[c]] .. order[at[c + 1] - 1].  A job done already (its range
 * does not split) is in none. */
static rotor_status job_chains(const rotor_graph *g, const inst_job *jobs, int nj, int *order, int *at, int *nchains,
                               rotor_error *err) {
    int *shape = NULL, *up = malloc((size_t)nj * sizeof *up), *w = calloc((size_t)nj, sizeof *w);
    int *root = malloc((size_t)nj * sizeof *root);
    /* by[NCOUNTS * s + i]: the first job with an operator of shape s at n = 2^(i+1) */
    int *by = malloc((size_t)NCOUNTS * (size_t)(g->nops ? g->nops : 1) * sizeof *by);
    rotor_status st = up && w && root && by ? op_shapes(g, &shape, err) : rotor_nomem(err);
    int nc = 0;
    if (!st) {
        for (int k = 0; k < NCOUNTS * g->nops; k++) by[k] = -1;
        for (int k = 0; k < nj; k++) up[k] = k;
        for (int k = 0; k < nj; k++) {
            if (jobs[k].done) continue;
            int i = 0;
            while ((int64_t)2 << i < jobs[k].n) i++;
            for (int o = jobs[k].first; o <= jobs[k].last; o++) {
                int *f = &by[NCOUNTS * shape[o] + i];
                if (*f < 0) *f = k;
                else up[uf_root(up, k)] = uf_root(up, *f);
            }
        }
        /* a chain's weight: its operators, each by its group's share of
         * the chip (an instance compile on N/2 cores takes two to three
         * times one on N/4 on ResNet-50) */
        for (int k = 0; k < nj; k++)
            if (!jobs[k].done) w[uf_root(up, k)] += (jobs[k].last - jobs[k].first + 1) * (int)(MAX_INST / jobs[k].n);
        /* the chains' roots by weight, largest first (ties: the earlier root) */
        for (int k = 0; k < nj; k++) {
            if (up[k] != k || jobs[k].done) continue;
            int i = nc++;
            while (i > 0 && w[root[i - 1]] < w[k]) root[i] = root[i - 1], i--;
            root[i] = k;
        }
        /* w becomes each root's chain, then the jobs are placed chain by
         * chain, each chain's in the loop's order */
        for (int c = 0; c < nc; c++) w[root[c]] = c;
        for (int c = 0; c <= nc; c++) at[c] = 0;
        for (int k = 0; k < nj; k++)
            if (!jobs[k].done) at[w[uf_root(up, k)] + 1]++;
        for (int c = 0; c < nc; c++) at[c + 1] += at[c];
        for (int c = 0; c < nc; c++) root[c] = at[c]; /* root: each chain's next slot */
        for (int k = 0; k < nj; k++)
            if (!jobs[k].done) order[root[w[uf_root(up, k)]]++] = k;
    }
    *nchains = nc;
    free(shape);
    free(up);
    free(w);
    free(root);
    free(by);
    return st;
}

/* The instance compiles of one compile_gticca, collected before T10's walk
 * (compile_gticca_begin) so that they can run beside it (compile.c,
 * walk_beside): the options they share (the plan store: the caller's or
 * own), the jobs, their chains (job_chains) and, beside the walk, each
 * worker's place in its chain.  Owned by the compiler (cc->gt). */
struct gticca_pre {
    const compiler *cc;
    rotor_compile_options io;
    rotor_plan_store *own;
    inst_job *jobs;
    int nj, nc;
    int *order, *at; /* chain c is order[at[c]] .. order[at[c + 1] - 1] */
    int next_chain;  /* the next chain a worker takes (omp atomic) */
    int *wpos;       /* per worker: its next slot in order[] and its chain's end */
    bool ran;        /* the jobs have run (beside the walk) */
};

void compile_gticca_free(struct gticca_pre *p) {
    if (!p) return;
    for (int k = 0; k < p->nj; k++) free(p->jobs[k].key);
    free(p->jobs);
    free(p->order);
    free(p->at);
    free(p->wpos);
    rotor_plan_store_free(p->own);
    free(p);
}

/* One compile of worker k's chain, then the worker again as a new task
 * (beside the walk, compile_gticca_spawn).  A worker runs one compile a
 * task so that the walk's searches, queued as tasks meanwhile (compile.c,
 * learn_batch), wait for at most one compile: the team's queue is first
 * in, first out.  A chain done, the worker takes the next one; none left,
 * it ends.  A chain is only ever one worker's, its compiles in the loop's
 * order, so the plan store answers exactly what it answers in the plain
 * loop. */
static void chain_worker(struct gticca_pre *p, int k) {
    int *w = &p->wpos[2 * k];
    if (w[0] >= w[1]) {
        int c;
#pragma omp atomic capture
        c = p->next_chain++;
        if (c >= p->nc) return;
        w[0] = p->at[c], w[1] = p->at[c + 1];
    }
    inst_job *j = &p->jobs[p->order[w[0]++]];
    j->st = instance_compile(p->cc, &p->io, j->first, j->last, j->n, 1, &j->c, &j->run, &j->err);
#pragma omp task
    chain_worker(p, k);
}

bool compile_gticca_ran(const compiler *cc) { return cc->gt && cc->gt->ran; }

int compile_gticca_team(const compiler *cc, int threads) {
    if (!cc->gt || cc->gt->nc < 1) return 1;
    return threads > 0 ? threads : omp_get_max_threads();
}

void compile_gticca_spawn(compiler *cc, int team) {
    struct gticca_pre *p = cc->gt;
    int nw = team < p->nc ? team : p->nc;
    p->ran = true;
    for (int k = 0; k < nw; k++) {
#pragma omp task
        chain_worker(p, k);
    }
}

/* Every instance the dynamic program below will ask for (each closed range
 * of 2..MAX_OPS operators at each instance count), to compile once each
 * into the memo before it starts: the compiles are independent (each its
 * own rotor_compile of a two- or three-operator graph on its group chip),
 * so they run side by side, one search thread each, rather than one after
 * another, each mostly single-threaded (its walk and hand-off phases);
 * with two threads or more, beside T10's walk (compile_gticca_spawn), else
 * after it (instances_precompile: the same workers in a team of their
 * own, or the plain loop with one thread).  Side by side, two compiles
 * that search the same shape on the same group would both search it (a
 * compile writes the plan store when it ends): such compiles run one
 * after another, in the loop's order, in one chain (job_chains).  Each compile's result does not depend
 * on its thread count, nor on what the shared plan store holds when it
 * runs (a hit gives the bytes a search gives), so the memo, and the
 * schedule, are those of the plain loop; the searches run are too, since
 * chains share no shape. */
rotor_status compile_gticca_begin(compiler *cc, const rotor_compile_options *opt, rotor_error *err) {
    struct gticca_pre *p = calloc(1, sizeof *p);
    if (!p) return rotor_nomem(err);
    cc->gt = p;
    p->cc = cc;
    /* The instance compiles share one plan store (planstore.h): the caller's,
     * or one of their own.  Ranges that overlap hold the same operators at
     * the same group sizes, and each instance compile would otherwise search
     * them again (docs/graphturbo.md, "On an ICCA chip"; a hit gives the
     * bytes a search gives, so the instances' costs do not change). */
    p->io = *opt;
    /* Each instance compile that writes the disk cache would scan its whole
     * directory to keep its size limit: the one eviction is the outer
     * compile's (compile.c, cache_store), after them all, on every path
     * (a walk that fails after them too). */
    p->io.cache_evict_later = true;
    if (!p->io.plan_store) p->io.plan_store = p->own = rotor_plan_store_new();
    if (!p->io.plan_store) return rotor_nomem(err);
    /* ... and the outer compile's search buffers (compile.h, search_pool):
     * a set borrowed keeps its memo of tensor options, whose classes hold
     * the group chip, so a hit gives what a search computes; each instance
     * compile's own pool made and freed its scratch sets afresh. */
    p->io.search_pool = cc->spool;
    int cap = 0;
    rotor_status st = ROTOR_OK;
    for (int j = 2; !st && j <= cc->g->nops; j++)
        for (int len = 2; !st && len <= MAX_OPS && len <= j; len++) {
            int first = j - len;
            if (!closed_range(cc, first, j - 1)) continue;
            for (int64_t n = 2; !st && instances_fit(cc->cores, n); n *= 2) {
                char *key = inst_key(cc->g, first, j - 1, n);
                if (!key) {
                    st = rotor_nomem(err);
                    break;
                }
                bool seen = false;
                for (int k = 0; k < p->nj && !seen; k++) seen = !strcmp(p->jobs[k].key, key);
                if (seen) {
                    free(key);
                    continue;
                }
                if (p->nj == cap) {
                    int nc = cap ? 2 * cap : 32;
                    inst_job *j2 = realloc(p->jobs, (size_t)nc * sizeof *j2);
                    if (!j2) {
                        free(key);
                        st = rotor_nomem(err);
                        break;
                    }
                    p->jobs = j2;
                    cap = nc;
                }
                p->jobs[p->nj++] = (inst_job){.first = first, .last = j - 1, .n = n, .key = key};
            }
        }
    if (st || !p->nj) return st;
    /* a range that does not split n ways compiles nothing (instance_compile:
     * s INFINITY, nothing run); done here, so that a batch no range splits
     * (batch 1, say) walks as without instances */
    for (int k = 0; k < p->nj; k++)
        if (!range_splits(cc->g, p->jobs[k].first, p->jobs[k].last, p->jobs[k].n)) {
            p->jobs[k].done = true;
            p->jobs[k].c = (inst_cost){.s = INFINITY};
        }
    p->order = malloc((size_t)p->nj * sizeof *p->order);
    p->at = malloc(((size_t)p->nj + 1) * sizeof *p->at);
    p->wpos = calloc(2 * (size_t)p->nj, sizeof *p->wpos);
    if (!p->order || !p->at || !p->wpos) return rotor_nomem(err);
    return job_chains(cc->g, p->jobs, p->nj, p->order, p->at, &p->nc, err);
}

/* The jobs run (if not beside the walk), into the memo and counted in res
 * in the loop's order; the first failure in that order is reported. */
static rotor_status instances_precompile(compiler *cc, inst_memo *m, rotor_gticca_result *res, rotor_error *err) {
    struct gticca_pre *p = cc->gt;
    int threads = p->io.threads > 0 ? p->io.threads : omp_get_max_threads();
    if (!p->ran && p->nc >= 1 && p->nj >= 2 && threads >= 2) {
        /* not beside the walk: the same workers in a team of their own */
#pragma omp parallel num_threads(threads)
#pragma omp single
        compile_gticca_spawn(cc, threads);
    } else if (!p->ran) {
        for (int k = 0; k < p->nj; k++) {
            inst_job *j = &p->jobs[k];
            if (j->done) continue;
            j->st = instance_compile(cc, &p->io, j->first, j->last, j->n, p->io.threads, &j->c, &j->run, &j->err);
            if (j->st) break;
        }
    }
    p->ran = true;
    rotor_status st = ROTOR_OK;
    for (int k = 0; k < p->nj; k++) {
        if (!st && p->jobs[k].st) {
            st = p->jobs[k].st;
            *err = p->jobs[k].err;
        }
        run_count(res, &p->jobs[k].run);
        if (!st) {
            st = inst_memo_add(m, p->jobs[k].key, &p->jobs[k].c, err);
            p->jobs[k].key = NULL;
        }
    }
    return st;
}

/* What entering first..last costs beyond the instance's own gathers: an
 * operator that reads an activation from before the sub-graph pays at
 * least the setup T10 gave it (the hand-off from its producer's layout).
 * The instance gathers such an input from the even layout, which the model
 * prices below the hand-off at times (up to 2.6 us on ResNet-18's s1.b0 at
 * batch 8), but the producer's output is in its own layout, not the even
 * one: the tensor still crosses the chip once, at the hand-off's price. */
static double entry_cost(const compiler *cc, const rotor_compile_result *out, int first, int last,
                         const inst_cost *c) {
    double add = 0;
    for (int o = first; o <= last; o++) {
        bool entry = false;
        for (int t = 1; t < cc->g->ops[o].expr.ntensors; t++) {
            int v = cc->g->ops[o].tensor_value[t], p = v < 0 ? -1 : cc->g->values[v].producer;
            if (cc->st[o].kind[t] == T_ACTIVATION && (p < first || p > last)) entry = true;
        }
        if (entry) add += fmax(0, out->ops[o].setup_s - c->setup[o - first]);
    }
    return add;
}

/* What the dynamic program knows of operators 0..j-1. */
typedef struct dp_row {
    double cost;        /* the best schedule of operators 0..j-1 */
    int from;           /* its last sub-graph starts here (j - 1: operator j-1 under T10) */
    rotor_gticca_sg sg; /* that sub-graph */
} dp_row;

/* Each instance count's candidate for first..last, cand[i] for n = 2^(i+1)
 * (instances 0: it does not split n ways, does not fit, or is no faster
 * than T10 alone). */
static rotor_status range_candidates(compiler *cc, const rotor_compile_options *opt, const rotor_compile_result *out,
                                     inst_memo *m, int first, int last, int64_t idle_total, bool *gone,
                                     rotor_gticca_result *res, rotor_gticca_sg cand[NCOUNTS], rotor_error *err) {
    memset(cand, 0, NCOUNTS * sizeof *cand);
    int64_t idle_rest = idle_total, live = 0, idle_own = 0;
    double t10 = 0, t10c = 0;
    for (int o = first; o <= last; o++) {
        idle_own += cc->st[o].idle_bytes;
        idle_rest -= cc->st[o].idle_bytes;
        if (cc->st[o].live > live) live = cc->st[o].live;
        t10 += out->ops[o].setup_s + out->ops[o].exec_s;
        t10c += out->ops[o].compute_s;
    }
    /* a sub-graph must win by itself: no gain from a lost hand-off (a
     * gather from the even layout priced below the hand-off it replaces) */
    double pen = fmax(0, compile_handoffs_lost(cc, out, first, last, gone));
    for (int i = 0, n = 2; i < NCOUNTS && instances_fit(cc->cores, n); i++, n *= 2) {
        inst_cost c;
        res->candidates++;
        rotor_status st = instance_cost(cc, opt, m, first, last, n, &c, res, err);
        if (st) return st;
        int64_t used = c.peak + idle_rest + live;
        if (!isfinite(c.s) || used > cc->sram) continue;
        double t = c.s + entry_cost(cc, out, first, last, &c);
        if (!(t + pen < t10 * (1 - 1e-9))) continue; /* a tie keeps T10 alone */
        cand[i] = (rotor_gticca_sg){.first = first, .last = last, .instances = n, .group_cores = cc->cores / n,
                                    .t10_s = t10, .grouped_s = t, .penalty_s = pen, .t10_compute_s = t10c,
                                    .compute_s = c.compute, .peak_bytes = used, .extra_idle_bytes = c.idle - idle_own};
    }
    return ROTOR_OK;
}

/* The best of a range's candidates (the fewest instances of the fastest),
 * or NULL. */
static const rotor_gticca_sg *best_candidate(const rotor_gticca_sg cand[NCOUNTS]) {
    const rotor_gticca_sg *best = NULL;
    for (int i = 0; i < NCOUNTS; i++)
        if (cand[i].instances &&
            (!best || cand[i].grouped_s + cand[i].penalty_s < best->grouped_s + best->penalty_s))
            best = &cand[i];
    return best;
}

/* A closed range's candidates, priced in the dynamic program's first run
 * and kept for the runs after it (fit_sram). */
typedef struct range_cands {
    bool known;
    rotor_gticca_sg c[NCOUNTS];
} range_cands;

/* The chosen sub-graphs as one program: each keeps its instances' idle
 * layouts, whose excess over T10's (extra_idle_bytes) every other operator
 * and sub-graph holds beside it.  The dynamic program judges each
 * candidate beside T10's layouts alone: sub-graphs that each fit that way
 * can go over the SRAM together (ResNet-18 at batch 64 took stage 3's two
 * blocks as 16 instances each; six 256 x 256 layers on 8 cores took two
 * 1-core sub-graphs, 344,064 bytes of copies each, with an SRAM of
 * 638,976), and one can go over beside T10's other operators.  Returns -1
 * when the whole fits (and raises each sub-graph's peak by the others'
 * excess), else the sub-graph that gains least per byte of its excess (a
 * decision: ties to the first), which the dynamic program then runs
 * without (compile_gticca). */
int64_t rotor_gticca_extra_idle(const rotor_gticca_sg *sg, int nsg) {
    int64_t extra = 0;
    for (int k = 0; k < nsg; k++) extra += sg[k].extra_idle_bytes;
    return extra;
}

static int fit_sram(const compiler *cc, const rotor_compile_result *out, rotor_gticca_sg *sg, int nsg,
                    const bool *gone) {
    int64_t extra = rotor_gticca_extra_idle(sg, nsg);
    bool over = false;
    for (int o = 0; o < cc->g->nops && !over; o++) {
        const rotor_op_schedule *r = &out->ops[o];
        over = !gone[o] && out->idle_bytes - r->idle_bytes + r->live_bytes + r->active_bytes + extra > cc->sram;
    }
    for (int k = 0; k < nsg && !over; k++) over = sg[k].peak_bytes + extra - sg[k].extra_idle_bytes > cc->sram;
    if (!over) {
        for (int k = 0; k < nsg; k++) sg[k].peak_bytes += extra - sg[k].extra_idle_bytes;
        return -1;
    }
    int w = -1;
    double wv = INFINITY;
    for (int k = 0; k < nsg; k++) {
        if (sg[k].extra_idle_bytes <= 0) continue;
        double v = (sg[k].t10_s - sg[k].grouped_s - sg[k].penalty_s) / (double)sg[k].extra_idle_bytes;
        if (v < wv) w = k, wv = v;
    }
    /* -2: none holds more than T10 did, yet the whole is over (not reached:
     * T10's own schedule fits); then none is kept */
    return w < 0 ? -2 : w;
}

/* The final schedule with the chosen sub-graphs (marked in gone), priced
 * with every hand-off they take away lost at once; the gathers charged
 * instead into lost_bytes and lost_rounds (per operator, zeroed). */
static double final_total(const compiler *cc, const rotor_compile_result *out, const rotor_gticca_sg *sg, int nsg,
                          const bool *gone, int64_t *lost_bytes, int64_t *lost_rounds) {
    const rotor_graph *g = cc->g;
    double total = 0;
    for (int k = 0; k < nsg; k++) total += sg[k].grouped_s;
    for (int o = 0; o < g->nops; o++) {
        if (gone[o]) continue;
        const rotor_op_schedule *r = &out->ops[o];
        double setup = r->setup_s;
        bool hit = false;
        for (int t = 1; !r->vendor && t < g->ops[o].expr.ntensors; t++)
            if (r->handoff[t] && gone[r->handoff[t] - 1]) hit = true;
        if (hit) {
            int64_t b, rounds;
            double lost = compile_setup_lost(cc, o, gone, &b, &rounds);
            if (lost > setup) setup = lost, lost_bytes[o] = b, lost_rounds[o] = rounds;
        }
        total += setup + r->exec_s;
    }
    return total;
}

rotor_status compile_gticca_check(const rotor_chip *chip, rotor_error *err) {
    if (chip->chips != 1 || chip->topology == ROTOR_TOPO_MESH || rotor_chip_has_gb(chip))
        return rotor_fail(err, ROTOR_ERR_INPUT,
                          "--group graphturbo: chip '%s' is not one all-to-all chip without a global buffer; "
                          "instances on core groups need one (docs/graphturbo.md, \"On an ICCA chip\")",
                          chip->name);
    return ROTOR_OK;
}

rotor_status compile_gticca(compiler *cc, const rotor_compile_options *opt, rotor_compile_result *out,
                            rotor_error *err) {
    const rotor_graph *g = cc->g;
    rotor_gticca_result *res = &out->gticca;
    memset(res, 0, sizeof *res);
    int n = g->nops;
    int64_t idle_total = 0;
    for (int o = 0; o < n; o++) idle_total += cc->st[o].idle_bytes;
    dp_row *dp = calloc((size_t)n + 1, sizeof *dp);
    bool *gone = calloc((size_t)n + 1, sizeof *gone);
    inst_memo m = {0};
    rotor_status st = dp && gone ? ROTOR_OK : rotor_nomem(err);
    if (!st && !cc->gt) st = compile_gticca_begin(cc, opt, err); /* not begun before the walk */
    const rotor_compile_options *io = st ? opt : &cc->gt->io;
    if (!st) st = instances_precompile(cc, &m, res, err);
    /* the dynamic program, again without each sub-graph the SRAM cannot
     * hold beside the others (fit_sram) until what it chooses fits; each
     * range's candidates priced once */
    range_cands *rc = st ? NULL : calloc((size_t)n * (MAX_OPS - 1), sizeof *rc);
    if (!st && !rc) st = rotor_nomem(err);
    int nsg = 0;
    while (!st) {
        memset(gone, 0, ((size_t)n + 1) * sizeof *gone);
        for (int j = 1; !st && j <= n; j++) {
            int o = j - 1;
            dp[j].cost = dp[j - 1].cost + out->ops[o].setup_s + out->ops[o].exec_s;
            dp[j].from = o;
            for (int len = 2; !st && len <= MAX_OPS && len <= j; len++) {
                int first = j - len;
                if (!closed_range(cc, first, o)) continue;
                range_cands *r = &rc[(size_t)o * (MAX_OPS - 1) + (size_t)(len - 2)];
                if (!r->known) st = range_candidates(cc, io, out, &m, first, o, idle_total, gone, res, r->c, err);
                r->known = true;
                const rotor_gticca_sg *c = st ? NULL : best_candidate(r->c);
                if (c && dp[first].cost + c->grouped_s + c->penalty_s < dp[j].cost) {
                    dp[j].cost = dp[first].cost + c->grouped_s + c->penalty_s;
                    dp[j].from = first;
                    dp[j].sg = *c;
                }
            }
        }
        if (st) break;
        nsg = 0;
        for (int j = n; j > 0; j = dp[j].from)
            if (dp[j].from < j - 1) nsg++;
        free(res->sg);
        res->sg = NULL;
        if (nsg && !(res->sg = calloc((size_t)nsg, sizeof *res->sg))) {
            st = rotor_nomem(err);
            break;
        }
        int k = nsg;
        for (int j = n; j > 0; j = dp[j].from)
            if (dp[j].from < j - 1) {
                res->sg[--k] = dp[j].sg;
                for (int o = dp[j].from; o < j; o++) gone[o] = true;
            }
        int w = fit_sram(cc, out, res->sg, nsg, gone);
        if (w == -1) break;
        if (w == -2) { /* none kept */
            memset(gone, 0, ((size_t)n + 1) * sizeof *gone);
            res->dropped += nsg;
            nsg = 0;
            free(res->sg);
            res->sg = NULL;
            break;
        }
        /* turned away: that range at that count is no candidate now */
        const rotor_gticca_sg *x = &res->sg[w];
        range_cands *r = &rc[(size_t)x->last * (MAX_OPS - 1) + (size_t)(x->last - x->first - 1)];
        for (int i = 0; i < NCOUNTS; i++)
            if (r->c[i].instances == x->instances) r->c[i].instances = 0;
        res->dropped++;
    }
    free(rc);
    if (!st && nsg &&
        (!(res->lost_bytes = calloc((size_t)n, sizeof *res->lost_bytes)) ||
         !(res->lost_rounds = calloc((size_t)n, sizeof *res->lost_rounds))))
        st = rotor_nomem(err);
    if (!st) {
        res->nsg = nsg;
        res->t10_s = out->total_s;
        res->nops = nsg ? n : 0;
        res->total_s = final_total(cc, out, res->sg, nsg, gone, res->lost_bytes, res->lost_rounds);
        if (cc->hst || !(res->total_s <= res->t10_s)) { /* never slower than T10 alone */
            free(res->sg);
            free(res->lost_bytes);
            free(res->lost_rounds);
            res->sg = NULL;
            res->lost_bytes = res->lost_rounds = NULL;
            res->nsg = res->nops = 0;
            res->total_s = res->t10_s;
            cc->hst = ROTOR_OK;
        }
        res->done = true;
    }
    inst_memo_free(&m);
    free(dp);
    free(gone);
    return st;
}
