/* schedule.c — a model on a chip with HBM, as Elk's operator sequence
 * (Elk §3-§4, §6.1), and one preload design run on it.
 *
 * Decisions where Elk is silent (docs/schedule.md repeats them):
 *  - Tensor parallelism, Megatron style, decided operator by operator from
 *    the graph alone.  A value is "split" or "whole" on each chip.  An
 *    operator with an HBM tensor H (a weight or the KV cache) is split on a
 *    reduced axis of H when H is a weight and an activation input is already
 *    split (the row-parallel half of a Megatron pair: an all-reduce makes
 *    the output whole), otherwise on an axis H shares with the output (the
 *    column-parallel half, or attention by batch or heads: the output stays
 *    split).  An operator without an HBM tensor is split on an output axis
 *    when an input is split, and runs whole on every chip otherwise.  Which
 *    of several eligible axes is cut does not change a shard's FLOPs or HBM
 *    bytes, only its shape and its reshards: axes that cut every split
 *    input as it lies come first, then axes every input shares (attention
 *    by batch or heads, not by sequence), then axes the degree divides, then
 *    the longest.
 *  - The all-reduce is a ring over the T chips of the whole output Y:
 *    2 (T - 1) / T bytes(Y) per chip over the chip's own link (1 / chips of
 *    the aggregate inter-chip bandwidth), plus 2 (T - 1) link latencies.
 *    It is part of the operator's execution, in every plan.
 *  - A split value lies on one dimension of its value; an operator whose
 *    cut needs it another way pays a reshard across the chips before it
 *    runs (an all-gather to whole, an all-to-all to another dimension), and
 *    a row operator split along its rows an all-reduce of the rows'
 *    statistics (docs/schedule.md, "Reshards").
 *  - A shard's execute-state plans are its whole Pareto frontier from the
 *    exact search on one chip; the plan's P (preload.h's share) is R_H, the
 *    rings of the HBM tensor (cores holding each of its bytes), and its
 *    traffic is what cost-model v1 moves into a core: shifts and the
 *    reduction's received bytes.
 *  - Vendor operators have one plan: cost at the vector rate as compile.c
 *    does, every value spread evenly; a Gather reads from HBM only the rows
 *    it writes.
 *  - Identical layers: operators named "l<N>.<name>" (the zoo's names) form
 *    layer instances; instances with the same sequence of shard shapes and
 *    HBM bytes share a layer id (Elk §4.4 reorders them together). */
#include "rotor/hbm/schedule.h"

#include "rotor/compile/opelem.h"
#include "rotor/model/elemtype.h"
#include "rotor/sim/replay.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t to_ps(double s) { return (int64_t)llround(s * 1e12); }

const char *rotor_shard_name(rotor_shard s) {
    switch (s) {
    case ROTOR_SHARD_REPLICATED: return "replicated";
    case ROTOR_SHARD_OUTPUT: return "output";
    case ROTOR_SHARD_REDUCTION: return "reduction";
    }
    return "?";
}

/* ---- sharding --------------------------------------------------------------- */

/* Expression tensor t is held in HBM: a weight, the KV cache, or a constant
 * folded into the expression (compile.c keeps those resident too). */
static bool in_hbm(const rotor_graph *g, const rotor_op *op, int t) {
    int v = op->tensor_value[t];
    return v < 0 || g->values[v].role != ROTOR_ROLE_ACTIVATION;
}

/* The largest HBM tensor of an expression operator, -1 if none. */
static int hbm_tensor_of(const rotor_graph *g, const rotor_op *op) {
    int best = -1;
    int64_t most = -1;
    for (int t = 1; t < op->expr.ntensors; t++) {
        if (!in_hbm(g, op, t)) continue;
        int64_t n = rotor_tensor_elements(&op->expr, t);
        if (n > most) most = n, best = t;
    }
    return best;
}

/* How a value lies across the chips: whole on every chip (dim LAY_WHOLE),
 * split on one dimension of the value (dim >= 0), or split in a way the
 * graph no longer records (dim LAY_UNKNOWN: a view grouping folded).  A cut
 * of an axis of extent E moving s along the dimension gives chip i the
 * coordinates j with j mod (s E) in [i B, (i + 1) B), B = s ceil(E / T):
 * two cuts with the same dimension, block B and period s E are the same
 * slices (a batch cut of [b*s, n] rows is its row cut).  Decision: where a
 * weight's order sets the slices (flex: a column-parallel output, whose
 * columns the weight's order makes; on the reader, a row-parallel cut, whose
 * weight rows can follow any order of its input), that side orders its
 * weights to match the other, as Megatron orders QKV's columns by head, so
 * any cut of the same dimension is the same slices when the degree divides
 * both cuts (a padded cut holds fewer of them on its last chips).  The
 * first reader that takes a flex value in other slices fixes its order
 * (fix_order); until 2026-12-03 each reader was matched alone, so two that
 * needed two orders of it moved nothing. */
enum { LAY_WHOLE = -1, LAY_UNKNOWN = -2, LAY_FLAT = -3 };

typedef struct lay_t {
    int dim;
    int64_t block, period, extent; /* B, s E and E above */
    int64_t offset;                /* where the cut's first slice starts, mod s E */
    int64_t start;                 /* ... not reduced: where a view's block of the dimension starts */
    int64_t span;                  /* the view's block's length along the dimension (0: no view) */
    bool flex;
    /* the same cut in row-major elements where its slices are runs of them
     * (a cut of the outermost dimension, or LAY_FLAT): run and period; 0 not */
    int64_t fblock, fperiod;
    /* flex: the windows of it whose order a reader fixed (fix_order) */
    int nwin;
    struct lay_win {
        int64_t block, period, offset, start, span; /* the window: [start, start + span) */
    } win[4];
} lay_t;

static lay_t lay_cut(int dim, int64_t step, int64_t extent, int64_t offset, int64_t T) {
    int64_t period = step * extent;
    return (lay_t){.dim = dim, .block = step * ceil_div(extent, T), .period = period, .extent = extent,
                   .offset = period > 0 ? offset % period : 0, .start = offset};
}

static const lay_t lay_whole = {.dim = LAY_WHOLE};
static const lay_t lay_unknown = {.dim = LAY_UNKNOWN};

/* A cut of a value's elements in row-major order (dim LAY_FLAT): the
 * one-dimensional expressions over a whole tensor (an optimizer's update,
 * W[i] = P[i] - G[i] lr) cut it into T runs of ceil(E / T) elements, the
 * same slices whatever the value's shape.  Until 2026-12-03 such a cut was
 * a lost layout, and every reader of it paid an all-to-all: Adam's update of
 * BERT-Base's embedding table 110 us of reshards that move nothing. */
static lay_t lay_flat(int64_t elements, int64_t T) {
    int64_t b = ceil_div(elements, T);
    return (lay_t){.dim = LAY_FLAT, .block = b, .period = elements, .extent = elements, .fblock = b,
                   .fperiod = elements};
}

/* l, a cut of value val's dimension l.dim, with its row-major runs where
 * they are runs: every dimension before l.dim of size 1, no offset (a cut
 * of a weight's rows, its gradient's, is the flat cut of an update over
 * it when T divides the rows). */
static lay_t with_runs(lay_t l, const rotor_value *val) {
    if (l.dim < 0 || l.offset != 0 || l.dim >= val->rank) return l;
    int64_t inner = 1;
    for (int j = 0; j < val->rank; j++) {
        if (j < l.dim && val->shape[j] != 1) return l;
        if (j > l.dim) inner *= val->shape[j];
    }
    int64_t fb = 0, fp = 0;
    if (rotor_mul_i64(l.block, inner, &fb) && rotor_mul_i64(l.period, inner, &fp)) l.fblock = fb, l.fperiod = fp;
    return l;
}

/* A layout on no one dimension of the value (lost, or flat): a vendor
 * operator that works on batch, channels or rows cannot take it as one. */
static bool lay_dimless(int d) { return d == LAY_UNKNOWN || d == LAY_FLAT; }

static bool input_split(const rotor_op *op, const lay_t *lay) {
    for (int i = 0; i < op->ninputs; i++)
        if (lay[op->inputs[i]].dim != LAY_WHOLE) return true;
    return false;
}

/* Where a cut of axis a leaves tensor t's value: dim LAY_WHOLE when t does
 * not have a (it needs its value whole), LAY_UNKNOWN when the graph does not
 * say.  A view names the value dimension and the step; without one the
 * tensor reads its value row-major, so the dimension is the one whose
 * row-major stride range holds the tensor dimension's stride (a reshape:
 * [b*h, q, c] read as S[b,g,r,m,n] puts both g and b on dimension 0, at
 * steps r and g*r), unknown when the axis runs past it. */
static lay_t value_dim(const rotor_graph *g, const rotor_op *op, int t, int a, int64_t T) {
    const rotor_expr *e = &op->expr;
    const rotor_tensor *x = &e->tensors[t];
    if (!x->has_axis[a]) return lay_whole;
    int p = -1;
    for (int d = 0; d < x->ndims && p < 0; d++)
        if (x->dims[d].nterms == 1 && x->dims[d].axis[0] == a) p = d;
    int v = op->tensor_value[t];
    const rotor_view *w = &op->view[t];
    /* a window's axis (h of h+kh) cuts overlapping slices: not a plain cut */
    if (p < 0 || v < 0 || w->unknown) return lay_unknown;
    const rotor_value *val = &g->values[v];
    if (w->set) {
        lay_t l = lay_cut(w->dim[p], w->step[p], e->extent[a], w->offset[w->dim[p]], T);
        /* the block of value dimension dim[p] the tensor reads: every tensor
         * dimension moving it, over its extent */
        l.span = 1;
        for (int d = 0; d < x->ndims; d++) {
            if (w->dim[d] != w->dim[p]) continue;
            int64_t ext = 1;
            for (int i = 0; i < x->dims[d].nterms; i++) ext *= e->extent[x->dims[d].axis[i]];
            l.span += (ext - 1) * w->step[d];
        }
        return with_runs(l, val);
    }
    if (x->ndims == 1 && e->extent[a] == val->elements && val->rank > 1) return lay_flat(val->elements, T);
    /* strides stay below the tensor's element count, which fits int64 */
    int64_t stride = 1, vs = 1;
    for (int d = x->ndims - 1; d > p; d--)
        for (int i = 0; i < x->dims[d].nterms; i++) stride *= e->extent[x->dims[d].axis[i]];
    for (int j = val->rank - 1; j >= 0; j--) {
        if (stride >= vs && stride / vs < val->shape[j]) {
            /* the axis repeats along j with period s E: it must tile j */
            int64_t step = stride / vs;
            bool inside = stride % vs == 0 && val->shape[j] % (step * e->extent[a]) == 0;
            return inside ? with_runs(lay_cut(j, step, e->extent[a], 0, T), val) : lay_unknown;
        }
        if (!rotor_mul_i64(vs, val->shape[j], &vs)) break;
    }
    return lay_unknown;
}

/* Some weight tensor of op has axis a. */
static bool weight_has(const rotor_graph *g, const rotor_op *op, int a) {
    for (int t = 1; t < op->expr.ntensors; t++) {
        int v = op->tensor_value[t];
        if ((v < 0 || g->values[v].role == ROTOR_ROLE_WEIGHT) && op->expr.tensors[t].has_axis[a]) return true;
    }
    return false;
}

/* Cutting axis a, op can take a split input in any order of its slices: a
 * is reduced against a weight (its rows follow the input, row-parallel). */
static bool reads_any_order(const rotor_graph *g, const rotor_op *op, int a) {
    return rotor_expr_is_reduction_axis(&op->expr, a) && weight_has(g, op, a);
}

/* Cutting axis a into an output split on a, op makes its slices in any order
 * a weight sets: a indexes a weight and no split activation input
 * (column-parallel; a whole input, as a bias added after an all-reduce,
 * gives each chip every column it may take). */
static bool writes_any_order(const rotor_graph *g, const rotor_op *op, const lay_t *lay, int a) {
    for (int t = 1; t < op->expr.ntensors; t++) {
        int v = op->tensor_value[t];
        if (v >= 0 && g->values[v].role == ROTOR_ROLE_ACTIVATION && op->expr.tensors[t].has_axis[a] &&
            lay[v].dim != LAY_WHOLE)
            return false;
    }
    return weight_has(g, op, a);
}

/* Two cuts of one dimension are the same slices (period 0: a Concat's
 * parts, a permutation of a cut, matches no cut). */
static bool same_slices(lay_t a, lay_t b) {
    return a.dim == b.dim && a.period > 0 && a.block == b.block && a.period == b.period && a.offset == b.offset;
}

/* The fixed window of flex value `have` that reader window `need` meets:
 * its index, -1 none; *same: it is that window. */
static int window_of(const lay_t *have, lay_t need, bool *same) {
    *same = false;
    for (int k = 0; k < have->nwin; k++) {
        const struct lay_win *w = &have->win[k];
        if (w->start < need.start + need.span && need.start < w->start + w->span) {
            *same = w->start == need.start && w->span == need.span;
            return k;
        }
    }
    return -1;
}

/* A value lying as `have` is what a reader needs (`need`; any_order: the
 * reader takes its slices in any order; window: it reads a block of the
 * value's dimension, as Q reads its columns of a fused QKV): no reshard. */
static bool lies_as(lay_t have, lay_t need, bool any_order, bool window, int64_t T) {
    if (have.dim == LAY_WHOLE) return true;
    if (have.dim == LAY_FLAT || need.dim == LAY_FLAT) /* the same runs of elements */
        return have.fperiod > 0 && have.fblock == need.fblock && have.fperiod == need.fperiod;
    if (need.dim < 0 || have.dim != need.dim) return false;
    if (have.flex && !any_order) {
        bool same = false;
        int k = window && need.period > 0 ? window_of(&have, need, &same) : -1;
        if (k >= 0) /* a window whose order a reader fixed: that order, or another that overlaps it */
            return same && have.win[k].block == need.block && have.win[k].period == need.period &&
                   have.win[k].offset == need.offset;
        if (!window && have.nwin > 0) return false; /* the whole value, some windows of it fixed */
    }
    if ((have.flex || any_order) && have.extent % T == 0 && need.extent % T == 0) return true;
    return same_slices(have, need);
}

/* A reader that takes a flex value in one order of its slices has its
 * producer order the weights for it: the value then lies as that reader
 * needs, its order fixed, so a later reader needing another order moves it
 * (all-to-all).  Decision: the first reader in the graph's order fixes it
 * (not the order that moves least), and only the value itself is fixed,
 * not the flex value it followed (a bias added to QKV fixes the sum's
 * order, not QKV's for QKV's other readers).  A reader of the nominal order
 * fixes it too: until 2026-12-03 only one that reordered did, so a first
 * reader in the nominal order and a second in another both read it free
 * (found by a review helper).  A reader of a window of the value (Q's
 * columns of QKV) fixes that window's order only, the weights' columns
 * being ordered window by window, as Megatron gives each chip its Q, K and
 * V heads together: fixed whole by Q's reader, Llama 2 70B's K and V moved
 * 9.8 us a layer on ipu-pod4 that nothing moves (until 2026-12-03).  At
 * most 4 windows are kept; a fifth loses the value's layout. */
static void fix_order(lay_t *have, lay_t need, bool any_order, bool window) {
    if (!have->flex || any_order || !(need.dim >= 0 || need.dim == LAY_FLAT)) return;
    if (window && need.dim == have->dim && need.period > 0) {
        bool same = false;
        if (window_of(have, need, &same) >= 0) return; /* lies_as judged it */
        if (have->nwin < 4) {
            have->win[have->nwin++] = (struct lay_win){need.block, need.period, need.offset, need.start, need.span};
            return;
        }
        /* a fifth: the five orders cannot all be kept in one layout, so
         * the value's is lost and every later reader moves it (fixed whole
         * to the fifth's cut, a reader of the first window in that order
         * read free what its first reader ordered otherwise; found by a
         * review helper) */
        *have = lay_unknown;
        return;
    }
    *have = need, have->flex = false, have->nwin = 0;
}

/* An element-wise expression whose one split activation input v is shaped
 * as its output runs on whatever slices each chip holds of it, cut along
 * the dimension they lie on, its output lying alike (a Relu after a
 * Concat's parts); -1 when op is not one. */
static int follower_input(const rotor_graph *g, const rotor_op *op, const lay_t *lay) {
    if (op->vendor || op->expr.op_class != ROTOR_OP_ELEMENTWISE || op->noutputs != 1) return -1;
    const rotor_value *y = &g->values[op->outputs[0]];
    int v = -1;
    for (int t = 1; t < op->expr.ntensors; t++) {
        int w = op->tensor_value[t];
        if (w < 0 || g->values[w].role != ROTOR_ROLE_ACTIVATION || lay[w].dim == LAY_WHOLE) continue;
        if (v >= 0 && w != v) return -1;
        v = w;
    }
    if (v < 0 || lay[v].dim < 0 || op->view[0].set || op->view[0].unknown) return -1;
    const rotor_value *x = &g->values[v];
    if (x->rank != y->rank || memcmp(x->shape, y->shape, sizeof(int64_t) * (size_t)y->rank) != 0) return -1;
    for (int t = 1; t < op->expr.ntensors; t++)
        if (op->tensor_value[t] == v && (op->view[t].set || op->view[t].unknown)) return -1;
    return v;
}

/* Expression tensor t of op, cut as `need`, reads a block of its value's
 * dimension, not all of it (Q's columns of QKV; a strided convolution
 * reads fewer elements but every channel: no window). */
static bool reads_window(const rotor_graph *g, const rotor_op *op, int t, lay_t need) {
    int v = op->tensor_value[t];
    if (v < 0 || need.dim < 0 || need.period <= 0 || need.dim >= g->values[v].rank) return false;
    const rotor_value *x = &g->values[v];
    return need.span > 0 && rotor_tensor_elements(&op->expr, t) < x->elements &&
           (need.start > 0 || need.start + need.span < x->shape[need.dim]);
}

/* Axis a cuts every split activation input of op as it already lies: the
 * cut needs no reshard. */
static bool cut_in_place(const rotor_graph *g, const rotor_op *op, const lay_t *lay, int a, int64_t T) {
    int f = follower_input(g, op, lay);
    if (f >= 0) {
        for (int t = 1; t < op->expr.ntensors; t++)
            if (op->tensor_value[t] == f) return value_dim(g, op, t, a, T).dim == lay[f].dim;
    }
    bool any = reads_any_order(g, op, a);
    for (int t = 1; t < op->expr.ntensors; t++) {
        int v = op->tensor_value[t];
        if (v < 0 || g->values[v].role != ROTOR_ROLE_ACTIVATION) continue;
        lay_t need = value_dim(g, op, t, a, T);
        if (!lies_as(lay[v], need, any, reads_window(g, op, t, need), T)) return false;
    }
    return true;
}

/* Rank of axis a as a cut (larger is better), -1 when it cannot be cut. */
static int64_t axis_rank(const rotor_graph *g, const rotor_op *op, const lay_t *lay, int a, int64_t T) {
    const rotor_expr *e = &op->expr;
    if (e->extent[a] < T) return -1;
    bool every = true;
    for (int t = 1; t < e->ntensors; t++) every = every && e->tensors[t].has_axis[a];
    /* no reshard first, then every input, then divisible, then the longest
     * (extents < 2^32) */
    return ((int64_t)cut_in_place(g, op, lay, a, T) << 62) | ((int64_t)every << 61) |
           ((int64_t)(e->extent[a] % T == 0) << 60) | e->extent[a];
}

/* The best axis of tensor `of` that is (reduced ? a reduced axis : an output
 * axis); -1 if none can be cut. */
static int pick_axis(const rotor_graph *g, const rotor_op *op, const lay_t *lay, int of, bool reduced, int64_t T) {
    const rotor_expr *e = &op->expr;
    int best = -1;
    int64_t rank = -1;
    for (int a = 0; a < e->naxes; a++) {
        if (!e->tensors[of].has_axis[a]) continue;
        if (reduced != rotor_expr_is_reduction_axis(e, a)) continue;
        int64_t r = axis_rank(g, op, lay, a, T);
        if (r > rank) rank = r, best = a;
    }
    return best;
}

/* How a vendor operator takes split inputs (decision: rotor knows these
 * operators' semantics, no others).  An element-wise one works on any
 * split of inputs shaped as its output, 1/T of its work; a row operator
 * (Softmax, LogSoftmax, the layer and RMS norms) likewise, its chips sharing
 * each row's statistics when the split runs along its axis; any other
 * (a Concat, a Gather, GroupNormalization, a reshaping Add) gathers its
 * split inputs whole and runs whole on every chip. */
typedef enum { VENDOR_WHOLE, VENDOR_ELEMENTWISE, VENDOR_ROW, VENDOR_CHANNEL, VENDOR_CONCAT } vendor_kind;

/* op's axis attribute over `rank` dimensions (a negative one from the end),
 * `otherwise` without one. */
static int attr_axis(const rotor_op *op, int rank, int otherwise) {
    const rotor_attr *ax = rotor_op_attr(op, "axis");
    if (!ax || ax->nints != 1) return otherwise;
    return (int)(ax->ints[0] < 0 ? ax->ints[0] + rank : ax->ints[0]);
}

static int row_axis(const rotor_op *op, int rank);

/* A Concat's axis: its attribute, else (the zoo's, which carry none) the one
 * dimension where an input's extent is not the output's; -1 when neither
 * says. */
static int concat_axis(const rotor_graph *g, const rotor_op *op) {
    const rotor_value *y = &g->values[op->outputs[0]];
    int axis = attr_axis(op, y->rank, -1);
    if (axis >= 0) return axis;
    for (int i = 0; i < op->ninputs; i++) {
        const rotor_value *x = &g->values[op->inputs[i]];
        if (x->rank != y->rank) return -1;
        for (int d = 0; d < y->rank; d++)
            if (x->shape[d] != y->shape[d]) {
                if (axis >= 0 && axis != d) return -1;
                axis = d;
            }
    }
    return axis;
}

/* A Concat works split when every activation input lies as the first split
 * one, on one dimension that is not its axis, at the same slices (the
 * output's slices are the inputs'; a whole input is sliced alike), or when
 * every input is an activation cut along its axis into T even contiguous
 * blocks (chip i holds part i of each input: a permutation of a cut of the
 * output, which a reader that takes any order, a row-parallel convolution,
 * reads as it lies; period 0 marks it, which no other layout equals). */
static vendor_kind concat_kind(const rotor_graph *g, const rotor_op *op, const lay_t *lay, int64_t T) {
    const rotor_value *y = &g->values[op->outputs[0]];
    int axis = concat_axis(g, op), lead = -1;
    if (axis < 0 || axis >= y->rank) return VENDOR_WHOLE;
    bool whole = false, weights = false;
    for (int i = 0; i < op->ninputs; i++) {
        int v = op->inputs[i];
        const rotor_value *x = &g->values[v];
        if (x->role != ROTOR_ROLE_ACTIVATION) {
            weights = true;
            continue;
        }
        if (x->rank != y->rank || lay_dimless(lay[v].dim)) return VENDOR_WHOLE;
        if (lay[v].dim == LAY_WHOLE) {
            whole = true;
            continue;
        }
        if (lead < 0) lead = v;
        const lay_t *a = &lay[lead], *b = &lay[v];
        if (a->dim != b->dim) return VENDOR_WHOLE;
        if (b->dim == axis) {
            if (b->period != x->shape[axis] || b->offset != 0 || b->block * T != b->period) return VENDOR_WHOLE;
        } else if (b->period <= 0 || a->block != b->block || a->period != b->period || a->offset != b->offset) {
            return VENDOR_WHOLE;
        }
    }
    if (lead >= 0 && lay[lead].dim == axis && (whole || weights)) return VENDOR_WHOLE;
    return VENDOR_CONCAT;
}

static vendor_kind vendor_kind_of(const rotor_graph *g, const rotor_op *op, const lay_t *lay, int64_t T) {
    if (strcmp(op->type, "Concat") == 0 && op->noutputs == 1) return concat_kind(g, op, lay, T);
    /* per channel: split by batch or channels ([N, C, ...]), not by space */
    static const char *const chan[] = {"BatchNormalization", "MaxPool", "AveragePool", "GlobalAveragePool",
                                       "GlobalMaxPool", "LpPool", "GlobalLpPool"};
    static const char *const rows[] = {"Softmax", "LogSoftmax", "LayerNormalization", "RMSNormalization",
                                       "SimplifiedLayerNormalization", "SkipLayerNormalization",
                                       "SkipSimplifiedLayerNormalization"};
    static const char *const elem[] = {
        "Relu", "LeakyRelu", "Gelu", "FastGelu", "QuickGelu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh",
        "Erf", "Exp", "Log", "Sqrt", "Reciprocal", "Neg", "Abs", "Sign", "Floor", "Ceil", "Round", "Cast",
        "Identity", "Dropout", "Clip", "Softplus", "Softsign", "Elu", "Selu", "Celu", "Mish", "Sin", "Cos",
        "Not", "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Mod", "Where", "Equal", "Greater", "Less",
        "And", "Or"};
    vendor_kind k = VENDOR_WHOLE;
    for (size_t i = 0; i < sizeof chan / sizeof *chan && k == VENDOR_WHOLE; i++)
        if (strcmp(op->type, chan[i]) == 0) k = VENDOR_CHANNEL;
    for (size_t i = 0; i < sizeof rows / sizeof *rows && k == VENDOR_WHOLE; i++)
        if (strcmp(op->type, rows[i]) == 0) k = VENDOR_ROW;
    for (size_t i = 0; i < sizeof elem / sizeof *elem && k == VENDOR_WHOLE; i++)
        if (strcmp(op->type, elem[i]) == 0) k = VENDOR_ELEMENTWISE;
    if (k == VENDOR_WHOLE || op->noutputs != 1) return VENDOR_WHOLE;
    /* every activation input shaped as the output (a per-channel one: in
     * batch and channels), no broadcast, no reshape */
    const rotor_value *y = &g->values[op->outputs[0]];
    int same = k == VENDOR_CHANNEL ? 2 : y->rank;
    if (k == VENDOR_CHANNEL && y->rank < 2) return VENDOR_WHOLE;
    for (int i = 0; i < op->ninputs; i++) {
        const rotor_value *x = &g->values[op->inputs[i]];
        if (x->role != ROTOR_ROLE_ACTIVATION) continue;
        /* (a global pool may drop the spatial dimensions: [N, C]) */
        if ((k != VENDOR_CHANNEL && x->rank != y->rank) || x->rank < same ||
            memcmp(x->shape, y->shape, sizeof(int64_t) * (size_t)same) != 0)
            return VENDOR_WHOLE;
        int d = lay[op->inputs[i]].dim;
        if (k == VENDOR_CHANNEL && (lay_dimless(d) || d > 1)) return VENDOR_WHOLE;
    }
    return k;
}

/* The dimension a row operator normalises along: its axis attribute, else
 * the last. */
static int row_axis(const rotor_op *op, int rank) { return attr_axis(op, rank, rank - 1); }

/* Decides how op o is split; fills so->shard, split_axis, expr, hbm_tensor;
 * a vendor op's kind (reshard prices its inputs by it; VENDOR_WHOLE for an
 * expression). */
static vendor_kind shard_op(const rotor_graph *g, int o, const lay_t *lay, int64_t T, rotor_schedule_op *so) {
    const rotor_op *op = &g->ops[o];
    bool in = input_split(op, lay);
    so->shard = ROTOR_SHARD_REPLICATED;
    so->split_axis = -1;
    so->hbm_tensor = -1;
    if (op->vendor) {
        /* one it knows works on its split inputs (1/T of its work); any other
         * gathers them and runs whole (reshard) */
        vendor_kind kind = vendor_kind_of(g, op, lay, T);
        if (in && T > 1 && kind != VENDOR_WHOLE) so->shard = ROTOR_SHARD_OUTPUT;
        return kind;
    }
    so->expr = op->expr;
    const rotor_expr *e = &op->expr;
    int h = hbm_tensor_of(g, op);
    so->hbm_tensor = h;
    if (T == 1) return VENDOR_WHOLE;
    int a = -1;
    rotor_shard kind = ROTOR_SHARD_OUTPUT;
    if (h >= 0) {
        int v = op->tensor_value[h];
        bool weight = v < 0 || g->values[v].role == ROTOR_ROLE_WEIGHT;
        if (weight && in) {
            a = pick_axis(g, op, lay, h, true, T);
            kind = ROTOR_SHARD_REDUCTION;
        }
        if (a < 0) {
            a = pick_axis(g, op, lay, h, false, T);
            kind = ROTOR_SHARD_OUTPUT;
        }
        if (a < 0) {
            a = pick_axis(g, op, lay, h, true, T);
            kind = ROTOR_SHARD_REDUCTION;
        }
    } else if (in) {
        a = pick_axis(g, op, lay, 0, false, T);
    }
    if (a < 0) return VENDOR_WHOLE;
    so->shard = kind;
    so->split_axis = a;
    so->expr.extent[a] = ceil_div(e->extent[a], T);
    return VENDOR_WHOLE;
}

/* What op o's inputs cost to bring to the layout its cut needs, and how its
 * outputs then lie (lay[] of its outputs set).  Per chip, over its own link
 * (1 / chips of the aggregate, as the all-reduce):
 *   split -> whole: an all-gather, (T - 1) / T of the tensor's bytes each
 *     way at an even cut (the fullest chip's sends of a padded one);
 *   split -> other slices (another dimension, block, period or offset, or
 *     a layout the graph lost): an all-to-all, (T - 1) / T^2 of them at an
 *     even cut (moved);
 *   whole -> split: nothing, each chip takes its slice;
 * each with T - 1 link latencies; and a row operator split along its axis
 * an all-reduce of two statistics a row.  A tensor's bytes are the
 * elements its expression reads (a column block of QKV, not the value),
 * at the chip's element size; a vendor operator's, its inputs'.  (Until
 * 2026-12-03 every cut was taken as even: a padded cut's fuller chips were
 * priced at the mean.) */

/* The most bytes of b one chip holds when b lies as l: a cut's block of its
 * period, where the last chips of a padded cut hold less (40 heads over 16
 * chips: 3 on each of the first 13, 1, then none); an even share where the
 * layout is lost or a Concat's parts. */
static bool held_most(int64_t b, lay_t l, int64_t T, int64_t *most) {
    int64_t x = 0;
    if (l.dim < 0 || l.period <= 0) return *most = ceil_div(b, T), true;
    bool ok = rotor_mul_i64(b, l.block, &x);
    *most = ceil_div(x, l.period);
    return ok;
}

/* Bytes the busiest chip moves over its link when b bytes lying as `have`
 * go to `need` (*busy), and what all the chips receive (*total): gathered
 * whole, the fullest chip sends its part to the T - 1 others (no chip
 * receives more: one that lacks all of b holds no part only when the
 * others' parts are full, T - 1 of them at most), and every chip receives
 * what it lacks, (T - 1) b in all; to other slices (all-to-all), (T - 1) /
 * T of the larger part either side, T times over in all.  The all-to-all
 * is an even one's: between two cuts of one dimension a chip may keep none
 * of its part (rows in blocks of 2 read as rows i and i + 4 of 8 on 4
 * chips: chip 1 sends 2 rows and receives 2, not 1.5; found by a review
 * helper), but counting each chip's coordinates needs the layouts to be
 * the chips' real ones, and a flexible value fixed by one reader of a
 * window of it (Q of a fused QKV) is not (docs/schedule.md, "Reshards":
 * measured, not taken). */
static bool moved(int64_t b, int64_t T, lay_t have, lay_t need, int64_t *busy, int64_t *total) {
    int64_t most = 0, most2 = 0;
    if (!held_most(b, have, T, &most)) return false;
    if (need.dim == LAY_WHOLE) return rotor_mul_i64(T - 1, most, busy) && rotor_mul_i64(T - 1, b, total);
    if (!held_most(b, need, T, &most2)) return false;
    *busy = (T - 1) * ceil_div(most > most2 ? most : most2, T);
    return rotor_mul_i64(*busy, T, total);
}

static rotor_status reshard(const rotor_graph *g, int o, vendor_kind kind, lay_t *lay, int64_t T,
                            const rotor_chip *chip, rotor_schedule_op *so, rotor_error *err) {
    const rotor_op *op = &g->ops[o];
    int64_t e = chip->element_bytes, recv = 0, recv_all = 0, rounds = 0;
    double stats = 0; /* bytes of row statistics all-reduced */
    lay_t out = lay_whole;
    bool ok = true;
    if (op->vendor) {
        int lead = -1;
        for (int i = 0; i < op->ninputs && ok; i++) {
            int v = op->inputs[i];
            if (g->values[v].role != ROTOR_ROLE_ACTIVATION || lay[v].dim == LAY_WHOLE) continue;
            if (kind != VENDOR_WHOLE && lead < 0) {
                lead = v;
                continue;
            }
            bool gather = kind == VENDOR_WHOLE;
            if (kind == VENDOR_CONCAT) continue; /* its parts lie as concat_kind checked */
            /* read slice by slice beside the lead: one order for both, the
             * fixed one's (both flex: the output stays flex); a value with
             * windows fixed is not one cut, so v is brought to the lead
             * (taken alike, the windows' orders were lost: found by a
             * review helper) */
            bool windows = !gather && (lay[v].nwin > 0 || lay[lead].nwin > 0); /* gathered: no lead */
            if (!gather && !windows && lay[v].dim != LAY_UNKNOWN && lies_as(lay[v], lay[lead], false, false, T)) {
                if (lay[v].flex && lay[lead].flex) continue;
                lay_t one = lay[v].flex ? lay[lead] : lay[v];
                fix_order(&lay[v], one, false, false);
                fix_order(&lay[lead], one, false, false);
                continue;
            }
            int64_t b = 0, m = 0, all = 0;
            ok = rotor_mul_i64(g->values[v].elements, e, &b) &&
                 moved(b, T, lay[v], gather ? lay_whole : lay[lead], &m, &all) &&
                 rotor_add_i64(recv, m, &recv) && rotor_add_i64(recv_all, all, &recv_all);
            rounds++;
        }
        if (lead >= 0) {
            const rotor_value *x = &g->values[lead];
            /* Softmax normalises along its axis, the norms over [axis, rank) */
            int axis = row_axis(op, x->rank), d = lay[lead].dim;
            bool soft = strstr(op->type, "Softmax") != NULL;
            if (kind == VENDOR_ROW && axis >= 0 && axis < x->rank &&
                (lay_dimless(d) || (soft ? d == axis : d >= axis))) {
                int64_t across = 1;
                for (int j = axis; j < (soft ? axis + 1 : x->rank); j++) across *= x->shape[j];
                stats = 2.0 * (double)(x->elements / across) * (double)e;
            }
            out = lay[lead]; /* the same slices, in any order they all had */
            for (int i = 0; i < op->ninputs; i++) {
                int v = op->inputs[i];
                if (g->values[v].role == ROTOR_ROLE_ACTIVATION && lay[v].dim != LAY_WHOLE && !lay[v].flex)
                    out.flex = false;
            }
            const rotor_value *y = &g->values[op->outputs[0]];
            if (kind == VENDOR_CONCAT && out.dim == concat_axis(g, op))
                /* parts of every chip's slices: no cut's block or period */
                out = (lay_t){.dim = out.dim, .extent = y->shape[out.dim]};
        }
        for (int i = 0; i < op->noutputs; i++) lay[op->outputs[i]] = out;
    } else {
        int a = so->split_axis, f = a >= 0 ? follower_input(g, op, lay) : -1;
        bool any = a >= 0 && reads_any_order(g, op, a);
        if (f >= 0 && !cut_in_place(g, op, lay, a, T)) f = -1;
        for (int t = 1; t < op->expr.ntensors && ok; t++) {
            int v = op->tensor_value[t];
            if (v < 0 || g->values[v].role != ROTOR_ROLE_ACTIVATION || lay[v].dim == LAY_WHOLE) continue;
            lay_t need = a >= 0 ? value_dim(g, op, t, a, T) : lay_whole;
            if (v == f) continue;
            bool win = reads_window(g, op, t, need);
            if (lies_as(lay[v], need, any, win, T)) {
                fix_order(&lay[v], need, any, win);
                continue;
            }
            int64_t b = 0, m = 0, all = 0;
            ok = rotor_mul_i64(rotor_tensor_elements(&op->expr, t), e, &b) && moved(b, T, lay[v], need, &m, &all) &&
                 rotor_add_i64(recv, m, &recv) &&
                 rotor_add_i64(recv_all, all, &recv_all);
            rounds++;
        }
        if (so->shard == ROTOR_SHARD_OUTPUT) {
            /* a weight's order, or an input's whose slices the output's
             * repeat (a bias added to QKV), sets the output's */
            out = value_dim(g, op, 0, a, T);
            bool inherit = false, pinned = false; /* a split input that is flex / that is not */
            for (int t = 1; t < op->expr.ntensors && out.dim >= 0; t++) {
                int v = op->tensor_value[t];
                if (v < 0 || g->values[v].role != ROTOR_ROLE_ACTIVATION || lay[v].dim == LAY_WHOLE) continue;
                lay_t in = value_dim(g, op, t, a, T);
                bool same = in.dim == lay[v].dim && in.dim == out.dim && in.block == out.block &&
                            in.period == out.period && lay[v].extent % T == 0 && out.extent % T == 0;
                if (lay[v].flex && same && lay[v].nwin == 0) inherit = true; /* windows fixed: pinned */
                else if (in.dim != LAY_WHOLE) pinned = true;
            }
            out.flex = out.dim >= 0 && (writes_any_order(g, op, lay, a) || (inherit && !pinned));
            if (f >= 0) out = lay[f]; /* an element-wise follower's output lies as its input */
        }
        for (int i = 0; i < op->noutputs; i++) lay[op->outputs[i]] = out;
    }
    if (!ok)
        return rotor_fail(err, ROTOR_ERR_INPUT, "op '%s' (%s): reshard bytes overflow 64 bits", op->name, op->type);
    if (recv == 0 && stats == 0) return ROTOR_OK;
    double bw = chip->interchip_gbps * 1e9 / (double)chip->chips, lat = rotor_chip_link_latency(chip);
    double ar = 2.0 * (double)(T - 1) / (double)T * stats;
    so->reshard_bytes = recv + (int64_t)llround(ar);
    so->reshard_total_bytes = recv_all + (int64_t)llround(ar * (double)T); /* each chip's all-reduce share */
    so->reshard_ps = to_ps(((double)recv + ar) / bw + (double)(rounds * (T - 1)) * lat +
                           (stats > 0 ? 2.0 * (double)(T - 1) * lat : 0));
    return ROTOR_OK;
}

/* ---- plans ------------------------------------------------------------------- */

typedef struct shape {
    char key[ROTOR_EXPR_TEXT_MAX + 256];
    rotor_search_result res;
    rotor_status st;
    rotor_error err;
    int first_op;
    int64_t *mesh_ps;   /* mesh: each frontier plan replayed alone on the chip; NULL on all-to-all */
    int64_t *mesh_link_ps; /* mesh: how long that replay kept its busiest link busy */
} shape;

static void shape_key(const rotor_expr *e, char *buf, size_t cap) {
    char dims[256];
    rotor_expr_dims_string(e, dims, (int)sizeof dims);
    snprintf(buf, cap, "%s|%s", e->text, dims);
}

/* Bytes one core receives while a plan executes (cost-model v1): every
 * shift, and the reduce-scatter of the output's partial sums. */
static int64_t plan_traffic(const rotor_expr *e, const rotor_plan_info *info) {
    int64_t moved = 0;
    for (int t = 0; t < e->ntensors; t++) moved += info->shifts[t] * info->bytes[t];
    int64_t r = info->rings[0];
    if (r > 1) moved += ceil_div((r - 1) * info->bytes[0], r);
    return moved;
}

static rotor_status vendor_plan(const rotor_graph *g, const rotor_schedule *s, int o, rotor_schedule_op *so,
                                rotor_error *err) {
    const rotor_op *op = &g->ops[o];
    bool gather = strncmp(op->type, "Gather", 6) == 0;
    int64_t act = 0, hbm = 0, out_bytes = 0;
    for (int i = 0; i < op->noutputs; i++) out_bytes += g->values[op->outputs[i]].bytes;
    for (int i = 0; i < op->ninputs; i++) {
        const rotor_value *v = &g->values[op->inputs[i]];
        if (v->role == ROTOR_ROLE_ACTIVATION) act += v->bytes;
        else hbm += gather && v->role == ROTOR_ROLE_WEIGHT && v->bytes > out_bytes ? out_bytes : v->bytes;
    }
    act += out_bytes;
    int64_t T = so->shard == ROTOR_SHARD_REPLICATED ? 1 : s->tensor_parallel;
    so->hbm_bytes = ceil_div(hbm, T);
    so->flops = op->flops / (double)T;
    so->plans = calloc(1, sizeof *so->plans);
    if (!so->plans) return rotor_nomem(err);
    so->nplans = 1;
    int64_t cores = s->chip.cores_per_chip;
    double t = so->flops / ((double)cores * rotor_chip_vector_rate(&s->chip));
    so->plans[0] = (rotor_preload_plan){
        .time_ps = (to_ps(t) > 0 ? to_ps(t) : 1) + so->interchip_ps,
        .space_bytes = ceil_div(ceil_div(act, T) + so->hbm_bytes, cores),
        .share = 1,
        .traffic_bytes = 0,
    };
    return ROTOR_OK;
}

/* A plan's time counting the core's link: its own traffic plus the weight
 * bytes it holds in execute state all cross the link, at preload or at
 * distribution, whatever the preload state. */
static int64_t link_aware_ps(const rotor_schedule *s, const rotor_schedule_op *so, const rotor_preload_plan *p) {
    int64_t d = ceil_div(so->hbm_bytes * p->share, s->pchip.cores);
    int64_t link = to_ps((double)(p->traffic_bytes + d) / (double)s->pchip.link_bw);
    return p->time_ps > link ? p->time_ps : link;
}

static rotor_status expr_plans(const rotor_schedule *s, const shape *sh, rotor_schedule_op *so, rotor_error *err) {
    const rotor_search_result *r = &sh->res;
    so->nplans = r->npareto;
    so->cands = malloc((size_t)r->npareto * sizeof *so->cands);
    so->plans = malloc((size_t)r->npareto * sizeof *so->plans);
    if (!so->cands || !so->plans) return rotor_nomem(err);
    memcpy(so->cands, r->pareto, (size_t)r->npareto * sizeof *so->cands);
    for (int k = 0; k < r->npareto; k++) {
        const rotor_candidate *c = &r->pareto[k];
        int64_t run_ps = to_ps(c->cost.total);
        if (sh->mesh_ps && sh->mesh_ps[k] > run_ps) run_ps = sh->mesh_ps[k];
        so->plans[k] = (rotor_preload_plan){
            .time_ps = run_ps + so->interchip_ps,
            .space_bytes = c->info.memory,
            .share = so->hbm_tensor >= 0 ? c->info.rings[so->hbm_tensor] : 1,
            .traffic_bytes = plan_traffic(&so->expr, &c->info),
            .link_bytes = sh->mesh_link_ps ? (int64_t)((double)sh->mesh_link_ps[k] * 1e-12 * (double)s->pchip.link_bw) : 0,
        };
        if (so->plans[k].time_ps <= 0) so->plans[k].time_ps = 1;
    }
    /* Keep the plans no other beats on both link-aware time and space
     * (docs/schedule.md, "Which plans are offered"). */
    int kept = 0;
    for (int k = 0; k < so->nplans; k++) {
        bool dominated = false;
        int64_t tk = link_aware_ps(s, so, &so->plans[k]);
        for (int j = 0; j < so->nplans && !dominated; j++) {
            if (j == k) continue;
            int64_t tj = link_aware_ps(s, so, &so->plans[j]);
            const rotor_preload_plan *a = &so->plans[j], *b = &so->plans[k];
            dominated = tj <= tk && a->space_bytes <= b->space_bytes && (tj < tk || a->space_bytes < b->space_bytes ||
                                                                        (j < k));
        }
        if (!dominated) {
            so->plans[kept] = so->plans[k];
            so->cands[kept] = so->cands[k];
            kept++;
        }
    }
    so->nplans = kept;
    return ROTOR_OK;
}

/* ---- layers --------------------------------------------------------------------- */

/* "l12.qkv" -> 12; -1 for names outside a layer. */
static long layer_number(const char *name) {
    if (name[0] != 'l' || name[1] < '0' || name[1] > '9') return -1;
    char *end;
    long n = strtol(name + 1, &end, 10);
    return *end == '.' ? n : -1;
}

static bool same_op(const rotor_schedule_op *a, const rotor_schedule_op *b) {
    if (a->vendor != b->vendor || a->hbm_bytes != b->hbm_bytes || a->nplans != b->nplans) return false;
    if (a->vendor) return a->plans[0].time_ps == b->plans[0].time_ps;
    if (strcmp(a->expr.text, b->expr.text) != 0) return false;
    return memcmp(a->expr.extent, b->expr.extent, sizeof a->expr.extent) == 0;
}

/* Instances [b0, b0 + len) and [b1, b1 + len) hold the same operators. */
static bool same_instance(const rotor_schedule *s, int b0, int b1, int len) {
    for (int k = 0; k < len; k++)
        if (!same_op(&s->ops[b0 + k], &s->ops[b1 + k])) return false;
    return true;
}

static void assign_layers(rotor_schedule *s) {
    int n = s->nops;
    int *begin = malloc(((size_t)n + 1) * sizeof *begin), *len = malloc(((size_t)n + 1) * sizeof *len);
    int *id = malloc(((size_t)n + 1) * sizeof *id);
    int ninst = 0;
    if (begin && len && id) {
        for (int o = 0; o < n;) {
            long num = layer_number(s->ops[o].name);
            int e = o + 1;
            while (e < n && num >= 0 && layer_number(s->ops[e].name) == num) e++;
            if (num >= 0) {
                begin[ninst] = o;
                len[ninst] = e - o;
                id[ninst] = 0;
                for (int j = 0; j < ninst && !id[ninst]; j++)
                    if (len[j] == len[ninst] && same_instance(s, begin[j], o, len[ninst])) id[ninst] = id[j];
                if (!id[ninst]) id[ninst] = ninst + 1;
                for (int k = o; k < e; k++) {
                    s->ops[k].layer = id[ninst];
                    s->ops[k].layer_begin = k == o;
                }
                ninst++;
            }
            o = e;
        }
    }
    /* Out of memory here only loses the §4.4 pruning's layer structure: every
     * operator stays in layer 0, which is still a valid input. */
    free(begin);
    free(len);
    free(id);
}

/* ---- HBM through the edge of a mesh --------------------------------------------------- */

/* On a mesh the HBM controllers feed the chip through its edge ports (Elk §5;
 * the simulator's geometry, docs/simulator.md "HBM on the mesh", is the one
 * place that decides which port serves which core).  What a preload into
 * groups of m consecutive cores costs there depends on the geometry twice
 * over: a port feeds several groups one after another, and a group that
 * straddles rows reaches its cores over a multicast tree that shares mesh
 * links with the trees of groups fed from other ports.  Counting the groups
 * per port misses the second (at m = 27 on the 32 x 46 mesh a preload takes
 * 10x the count), so each group size the preload model asks for is
 * measured once: preloads of MEASURE_PIECES and twice as many pieces per
 * group, alone on the idle chip through the replay's own code
 * (rotor_replay_preload), give load = the extra time x link_bw / the extra
 * bytes per group.  The time grows linearly in the pieces (within 0.1 %
 * from 1 to 64 pieces per group); the slope leaves out the first piece's
 * way in, which a preload of many pieces hides.  Memoised: load[m] = 0
 * until measured. */
#define MEASURE_PIECES 8

typedef struct port_meter {
    const rotor_chip *chip;
    double *load;   /* [cores + 1]: by group size */
    double *shift;  /* [cores + 1]: by distribution distance */
} port_meter;

static rotor_status measure_port_load(void *ctx, int64_t m, double *load, rotor_error *err) {
    port_meter *pm = ctx;
    int64_t n = pm->chip->cores_per_chip;
    *load = 0;
    if (m < 1 || m > n)
        return rotor_fail(err, ROTOR_ERR_INPUT, "preload group of %lld cores: expected 1..%lld", (long long)m,
                          (long long)n);
    if (pm->load[m] <= 0) {
        int64_t per = (int64_t)MEASURE_PIECES * ROTOR_REPLAY_PACKET, groups = (n + m - 1) / m, t1 = 0, t2 = 0;
        rotor_status st = rotor_replay_preload(pm->chip, per * groups, m, &t1, err);
        if (!st) st = rotor_replay_preload(pm->chip, 2 * per * groups, m, &t2, err);
        if (st) return st;
        pm->load[m] = (double)(t2 - t1) * 1e-12 * rotor_chip_link_bw(pm->chip) / (double)per;
    }
    *load = pm->load[m];
    return ROTOR_OK;
}

/* ---- build ------------------------------------------------------------------------ */

bool rotor_schedule_latency_caveat(const rotor_chip *chip, char *buf, size_t cap) {
    if (cap) buf[0] = '\0';
    if (!(chip->link_latency_ns > 0)) return false;
    snprintf(buf, cap,
             "with a link latency (%g ns on %s) the replay sends a plan's shifts in 1 KiB packets, each paying "
             "it after the one before, where the analytical times pay it once a step: `--simulate` times it "
             "(nerf's basic on stcp920: +2.50 %% at 20 ns, +65.81 %% at 100; docs/schedule.md, \"Link latency\")",
             chip->link_latency_ns, chip->name);
    return true;
}

void rotor_schedule_free(rotor_schedule *s) {
    if (!s) return;
    for (int o = 0; o < s->nops; o++) {
        free(s->ops[o].cands);
        free(s->ops[o].plans);
    }
    free(s->ops);
    rotor_preload_model_free(s->model);
    free(s);
}

/* On a mesh, cost model v1 still prices a plan as on all-to-all (one port per
 * core, one hop), and a plan's rings can land rows apart on the grid: Llama
 * and Gemma plans replay 1.0 to 10 times slower there (docs/schedule.md, "On
 * a mesh").  So each frontier plan of every distinct shape is replayed alone
 * on the chip, as the schedule replay runs it (1 KiB packets), and the
 * schedule takes the slower of the two times.  Decision: Elk §5 restricts
 * mesh plans to at most two partitioned dimensions mapped to the mesh axes;
 * rotor keeps the whole frontier and lets the measured time rank it, so a
 * plan that maps well (some run at 1.00x) stays and the rest fall behind.
 * Parallel over (shape, plan) pairs; every replay is deterministic. */
static rotor_status mesh_times(const rotor_schedule *s, const rotor_graph *g, shape *shapes, int nshapes,
                               int threads, rotor_error *err) {
    int npairs = 0;
    for (int k = 0; k < nshapes; k++) {
        size_t np = (size_t)(shapes[k].res.npareto ? shapes[k].res.npareto : 1);
        shapes[k].mesh_ps = calloc(np, sizeof(int64_t));
        shapes[k].mesh_link_ps = calloc(np, sizeof(int64_t));
        if (!shapes[k].mesh_ps || !shapes[k].mesh_link_ps) return rotor_nomem(err);
        npairs += shapes[k].res.npareto;
    }
    int (*pairs)[2] = malloc(sizeof *pairs * (size_t)(npairs ? npairs : 1));
    rotor_status *pst = calloc((size_t)(npairs ? npairs : 1), sizeof *pst);
    rotor_error *perr = calloc((size_t)(npairs ? npairs : 1), sizeof *perr);
    if (!pairs || !pst || !perr) {
        free(pairs), free(pst), free(perr);
        return rotor_nomem(err);
    }
    int n = 0;
    for (int k = 0; k < nshapes; k++)
        for (int c = 0; c < shapes[k].res.npareto; c++) pairs[n][0] = k, pairs[n++][1] = c;
#pragma omp parallel for schedule(dynamic) num_threads(threads > 0 ? threads : omp_get_max_threads())
    for (int x = 0; x < npairs; x++) {
        shape *sh = &shapes[pairs[x][0]];
        const rotor_candidate *c = &sh->res.pareto[pairs[x][1]];
        pst[x] = rotor_replay_plan(&s->ops[sh->first_op].expr, &c->plan, &c->info, &s->chip, ROTOR_REPLAY_PACKET,
                                   &sh->mesh_ps[pairs[x][1]], &sh->mesh_link_ps[pairs[x][1]], &perr[x]);
    }
    rotor_status st = ROTOR_OK;
    for (int x = 0; x < npairs && !st; x++)
        if (pst[x]) {
            const rotor_op *op = &g->ops[shapes[pairs[x][0]].first_op];
            *err = perr[x];
            char prefix[200];
            snprintf(prefix, sizeof prefix, "op '%s' (%s): plan %d on the mesh", op->name, op->type, pairs[x][1]);
            rotor_error_prefix(err, prefix);
            st = pst[x];
        }
    free(pairs), free(pst), free(perr);
    return st;
}

/* The same for a distribution round at distance d (rotor_replay_shift):
 * rows apart, every core's fetch crosses the rows between, so a round costs
 * more than its bytes over one link. */
static rotor_status measure_shift_load(void *ctx, int64_t d, double *load, rotor_error *err) {
    port_meter *pm = ctx;
    int64_t n = pm->chip->cores_per_chip;
    *load = 0;
    if (d < 1 || d >= n)
        return rotor_fail(err, ROTOR_ERR_INPUT, "distribution distance %lld: expected 1..%lld", (long long)d,
                          (long long)(n - 1));
    if (pm->shift[d] <= 0) {
        int64_t per = (int64_t)MEASURE_PIECES * ROTOR_REPLAY_PACKET, t1 = 0, t2 = 0;
        rotor_status st = rotor_replay_shift(pm->chip, d, per, &t1, err);
        if (!st) st = rotor_replay_shift(pm->chip, d, 2 * per, &t2, err);
        if (st) return st;
        pm->shift[d] = (double)(t2 - t1) * 1e-12 * rotor_chip_link_bw(pm->chip) / (double)per;
    }
    *load = pm->shift[d];
    return ROTOR_OK;
}

/* An expression operator's HBM reads besides its largest HBM tensor (which
 * the plans hold and hbm_bytes counts): a grouped operator's epilogue
 * weights (a bias, or SGD's weights W' = W - lr G fused into the weight
 * gradient) and any smaller weight tensor of its expression, each value
 * once.  A cut by output slices reads 1/T of each (decision: an epilogue
 * runs on the output partitions the chip holds); a reduction cut or a
 * replicated operator reads them whole.  Until 2026-12-03 they were left out
 * of the HBM bytes: a training step's SGD read of every weight (found by an
 * audit helper) and every fused bias. */
static rotor_status other_hbm_inputs(const rotor_graph *g, int o, rotor_schedule_op *so, int64_t T, int64_t e,
                                     rotor_error *err) {
    const rotor_op *op = &g->ops[o];
    int main_v = so->hbm_tensor >= 0 ? op->tensor_value[so->hbm_tensor] : -1;
    int64_t extra = 0;
    bool ok = true;
    for (int i = 0; i < op->ninputs && ok; i++) {
        int v = op->inputs[i];
        const rotor_value *x = &g->values[v];
        bool seen = v == main_v || x->role == ROTOR_ROLE_ACTIVATION;
        for (int j = 0; j < i && !seen; j++) seen = op->inputs[j] == v;
        int64_t b = 0;
        if (!seen) ok = rotor_mul_i64(x->elements, e, &b) && rotor_add_i64(extra, b, &extra);
    }
    if (ok && so->shard == ROTOR_SHARD_OUTPUT) extra = ceil_div(extra, T);
    if (!ok || !rotor_add_i64(so->hbm_bytes, extra, &so->hbm_bytes))
        return rotor_fail(err, ROTOR_ERR_INPUT, "op '%s' (%s): HBM bytes overflow 64 bits", op->name, op->type);
    return ROTOR_OK;
}

/* Shards every operator of g over T chips into s->ops (lay: per value, how
 * its producer left it, LAY_WHOLE for the graph's inputs), counts the
 * model's FLOPs, the inter-chip all-reduces and reshards, and collects the
 * distinct shapes into shapes (*nshapes of them; shape_of[o]: op o's, -1
 * for vendor ops). */
static rotor_status shard_ops(const rotor_graph *g, const rotor_chip *chip, int64_t T, rotor_schedule *s, lay_t *lay,
                              shape *shapes, int *shape_of, int *nshapes, rotor_error *err) {
    int64_t e = chip->element_bytes;
    for (int o = 0; o < g->nops; o++) {
        const rotor_op *op = &g->ops[o];
        rotor_schedule_op *so = &s->ops[o];
        snprintf(so->name, sizeof so->name, "%s", op->name);
        so->graph_op = o;
        so->vendor = op->vendor;
        vendor_kind kind = shard_op(g, o, lay, T, so);
        rotor_status st = reshard(g, o, kind, lay, T, chip, so, err);
        if (st) return st;
        so->interchip_ps = so->reshard_ps;
        s->interchip_ps += so->reshard_ps;
        s->reshard_ps += so->reshard_ps;
        s->model_flops += op->flops;
        shape_of[o] = -1;
        if (op->vendor) continue;
        if (so->hbm_tensor >= 0) {
            int64_t n = rotor_tensor_elements(&so->expr, so->hbm_tensor);
            if (!rotor_mul_i64(n, e, &so->hbm_bytes)) {
                return rotor_fail(err, ROTOR_ERR_INPUT, "op '%s' (%s): HBM bytes overflow 64 bits", op->name, op->type);
            }
        }
        if ((st = other_hbm_inputs(g, o, so, T, e, err))) return st;
        so->flops = rotor_expr_flops(&so->expr);
        if (so->shard == ROTOR_SHARD_REDUCTION) {
            int64_t y;
            if (!rotor_mul_i64(rotor_tensor_elements(&so->expr, 0), e, &y)) {
                return rotor_fail(err, ROTOR_ERR_INPUT, "op '%s' (%s): output bytes overflow 64 bits", op->name, op->type);
            }
            /* a ring over the T chips: each sends 2 (T - 1) / T of Y over its
             * own link, the aggregate's 1 / chips share (with --tp below the
             * chips the others' links carry nothing of it; until 2026-12-02
             * each got 1 / T of the whole aggregate) */
            double bw = chip->interchip_gbps * 1e9 / (double)chip->chips;
            int64_t ring = to_ps(2.0 * (double)(T - 1) / (double)T * (double)y / bw +
                                 2.0 * (double)(T - 1) * rotor_chip_link_latency(chip));
            so->interchip_ps += ring;
            s->interchip_ps += ring;
        }
        char key[sizeof shapes[0].key];
        shape_key(&so->expr, key, sizeof key);
        int k = 0;
        while (k < *nshapes && strcmp(shapes[k].key, key) != 0) k++;
        if (k == *nshapes) {
            snprintf(shapes[k].key, sizeof shapes[k].key, "%s", key);
            shapes[k].first_op = o;
            (*nshapes)++;
        }
        shape_of[o] = k;
    }
    return ROTOR_OK;
}

/* A shape's frontier: the sweep's memo's copy when it has one (a schedule
 * of the same shapes on a chip with other HBM, searchmemo.h), else
 * searched and then kept there. */
static rotor_status memo_search(rotor_search_memo *memo, const char *shape_text, const rotor_expr *e,
                                const rotor_chip *chip, const rotor_search_options *so, rotor_search_result *res,
                                rotor_error *err) {
    if (!memo) return rotor_search(e, chip, so, res, err);
    char *key = rotor_search_memo_key(shape_text, chip, so->solver);
    bool found = false;
    rotor_status st = key ? rotor_search_memo_get(memo, key, res, &found, err) : rotor_nomem(err);
    if (!st && !found) {
        st = rotor_search(e, chip, so, res, err);
        if (!st) st = rotor_search_memo_put(memo, key, res, err);
    }
    free(key);
    return st;
}

/* The frontier of every distinct shape (T10 §4.3.1), in parallel across
 * shapes; each search is deterministic, so the order does not matter.  The
 * first failure in shape order is reported. */
static rotor_status search_shapes(const rotor_graph *g, rotor_schedule *s, shape *shapes, int nshapes,
                                  const rotor_schedule_options *opt, rotor_error *err) {
    rotor_search_options so_opt = {.pareto = true, .threads = 1, .solver = opt->solver};
    int threads = opt->threads, done = 0;
#pragma omp parallel for schedule(dynamic) num_threads(threads > 0 ? threads : omp_get_max_threads())
    for (int k = 0; k < nshapes; k++) {
        shape *sh = &shapes[k];
        sh->st = memo_search(opt->memo, sh->key, &s->ops[sh->first_op].expr, &s->chip, &so_opt, &sh->res, &sh->err);
        if (opt->progress) {
#pragma omp critical(schedule_progress)
            opt->progress(opt->progress_ctx, ++done, nshapes);
        }
    }
    for (int k = 0; k < nshapes; k++)
        if (shapes[k].st) {
            const rotor_op *op = &g->ops[shapes[k].first_op];
            *err = shapes[k].err;
            char prefix[160];
            snprintf(prefix, sizeof prefix, "op '%s' (%s, one chip's shard)", op->name, op->type);
            rotor_error_prefix(err, prefix);
            return shapes[k].st;
        }
    return ROTOR_OK;
}

/* What one chip's HBM holds (rotor_schedule.hbm_held): every weight and
 * KV-cache value an operator reads, once (a tied embedding too), as the
 * largest shard its readers take.  An expression's tensors as its shard
 * holds them (so->expr, the split axis divided: the elements its HBM
 * tensor's hbm_bytes counts, at the chip's element size), a folded
 * constant counted with its operator; a weight an expression reads
 * without naming it in a tensor, whole; a vendor op's inputs 1/T when it
 * runs split, else whole (a Gather's table whole, though a step reads only
 * its rows).  Refused when that is more than the chip's HBM: the same rule
 * as GraphTurbo's DDR (compile/dsa.c, rotor_dsa_ddr_check): a model the
 * memory cannot hold has no time.  Summed in doubles, exact below 2^53
 * bytes, past any HBM (1 PiB at most). */
static rotor_status hbm_held(const rotor_graph *g, const rotor_chip *chip, rotor_schedule *s, rotor_error *err) {
    double *part = calloc((size_t)g->nvalues + 1, sizeof *part), held = 0;
    bool *at_e = calloc((size_t)g->nvalues + 1, sizeof *at_e); /* an integer value counted at e, not its size */
    if (!part || !at_e) {
        free(part);
        free(at_e);
        return rotor_nomem(err);
    }
    double T = (double)s->tensor_parallel, e = (double)chip->element_bytes;
    for (int o = 0; o < g->nops; o++) {
        const rotor_op *op = &g->ops[o];
        const rotor_schedule_op *so = &s->ops[o];
        for (int i = 0; i < op->ninputs; i++) { /* the vendor op's, or one no tensor names */
            int v = op->inputs[i];
            if (g->values[v].role == ROTOR_ROLE_ACTIVATION) continue;
            bool named = false;
            for (int t = 1; !op->vendor && t < op->expr.ntensors && !named; t++) named = op->tensor_value[t] == v;
            if (named) continue;
            double whole = (double)g->values[v].bytes;
            double b = op->vendor && so->shard != ROTOR_SHARD_REPLICATED ? ceil(whole / T) : whole;
            if (b > part[v]) part[v] = b;
        }
        for (int t = 1; !op->vendor && t < op->expr.ntensors; t++) { /* the expression's, as sharded */
            int v = op->tensor_value[t];
            if (v >= 0 && g->values[v].role == ROTOR_ROLE_ACTIVATION) continue;
            double b = (double)rotor_tensor_elements(&so->expr, t) * e;
            if (v < 0) held += b; /* a folded constant: its operator's own */
            else if (b > part[v]) part[v] = b;
            if (v >= 0) at_e[v] = rotor_value_elem_bytes(chip->element_bytes, &g->values[v]) != chip->element_bytes;
        }
    }
    /* the weights of integer types counted so (an 8-bit weight a
     * contraction names), which a refusal names */
    int other = 0;
    for (int v = 0; v < g->nvalues; v++) {
        held += part[v];
        other += at_e[v];
    }
    free(part);
    free(at_e);
    s->hbm_held = rotor_i64_held(held);
    if (held <= (double)chip->hbm_bytes) return ROTOR_OK;
    char over[48] = "the whole model";
    if (s->tensor_parallel > 1) snprintf(over, sizeof over, "its share over %lld chips", (long long)s->tensor_parallel);
    char why[160] = "";
    if (other)
        snprintf(why, sizeof why, "; %d weights of integer types counted at the chip's %lld-byte elements, not "
                 "their own", other, (long long)chip->element_bytes);
    return rotor_fail(err, ROTOR_ERR_NOFIT,
                      "one chip's HBM would hold %.0f bytes of weights and KV cache (%s), more than the chip's %lld "
                      "(hbm_bytes)%s",
                      held, over, (long long)chip->hbm_bytes, why);
}

rotor_status rotor_schedule_build(const rotor_graph *g, const rotor_chip *chip,
                                  const rotor_schedule_options *opt, rotor_schedule **out,
                                  rotor_error *err) {
    *out = NULL;
    rotor_schedule_options none = {0};
    if (!opt) opt = &none;
    rotor_status st = rotor_chip_validate(chip, err);
    if (st) return st;
    if (chip->hbm_gbps <= 0)
        return rotor_fail(err, ROTOR_ERR_INPUT,
                          "chip '%s' has no HBM (hbm_gbps is 0): use a chip with HBM, e.g. ipu-pod4, "
                          "or --set hbm_bytes=...,hbm_gbps=...,hbm_controllers=...",
                          chip->name);
    int64_t T = opt->tensor_parallel ? opt->tensor_parallel : chip->chips;
    if (T < 1 || T > chip->chips)
        return rotor_fail(err, ROTOR_ERR_INPUT, "tensor_parallel: expected 1..%lld (the chips), got %lld",
                          (long long)chip->chips, (long long)T);
    if (g->nops == 0) return rotor_fail(err, ROTOR_ERR_INPUT, "graph '%s' has no operators", g->name);

    int nshapes = 0;
    rotor_schedule *s = calloc(1, sizeof *s);
    if (!s) return rotor_nomem(err);
    s->chip = *chip;
    s->chip.chips = 1;
    s->chip.interchip_gbps = 0;
    s->tensor_parallel = T;
    s->prefill_kv_bytes = opt->prefill_kv_bytes > 0 ? ceil_div(opt->prefill_kv_bytes, T) : 0;
    s->train_write_bytes = opt->train_write_bytes > 0 ? ceil_div(opt->train_write_bytes, T) : 0;
    s->preload = opt->preload;
    s->solver = opt->solver;
    s->pchip = (rotor_preload_chip){
        .cores = chip->cores_per_chip,
        .sram_bytes = rotor_chip_sram(chip),
        .hbm_bw = (int64_t)llround(chip->hbm_gbps * 1e9),
        .link_bw = (int64_t)llround(rotor_chip_link_bw(chip)),
        .latency_ps = llround(chip->link_latency_ns * 1000.0),
        .sram_blocking = !opt->sram_nonblocking,
    };
    port_meter meter = {.chip = &s->chip};
    if (s->chip.topology == ROTOR_TOPO_MESH) {
        double load1 = 0;
        meter.load = calloc((size_t)s->chip.cores_per_chip + 1, sizeof *meter.load);
        meter.shift = calloc((size_t)s->chip.cores_per_chip + 1, sizeof *meter.shift);
        if (!meter.load || !meter.shift) st = rotor_nomem(err);
        if (!st) st = measure_port_load(&meter, 1, &load1, err);
        if (st) {
            free(meter.load);
            free(meter.shift);
            free(s);
            return st;
        }
        /* every core receiving alike: cores / load[1] core links' worth */
        s->hbm_intake = (double)s->chip.cores_per_chip / load1 * rotor_chip_link_bw(&s->chip);
        s->pchip.port_load = measure_port_load;
        s->pchip.shift_load = measure_shift_load;
        s->pchip.mesh_ctx = &meter;
    }
    s->ops = calloc((size_t)g->nops, sizeof *s->ops);
    lay_t *lay = malloc(((size_t)g->nvalues + 1) * sizeof *lay);
    shape *shapes = calloc((size_t)g->nops, sizeof *shapes);
    int *shape_of = calloc((size_t)g->nops, sizeof *shape_of);
    rotor_preload_op_desc *desc = calloc((size_t)g->nops, sizeof *desc);
    if (!s->ops || !lay || !shapes || !shape_of || !desc) {
        st = rotor_nomem(err);
        goto done;
    }
    s->nops = g->nops;
    for (int v = 0; v < g->nvalues; v++) lay[v] = lay_whole;

    /* Shard every operator and collect the distinct shapes. */
    int threads = opt->threads;
    if ((st = shard_ops(g, chip, T, s, lay, shapes, shape_of, &nshapes, err))) goto done;
    if ((st = hbm_held(g, chip, s, err))) goto done;
    s->searches = nshapes;
    s->quantized_ops = rotor_graph_priced_apart(g, chip);
    if ((st = search_shapes(g, s, shapes, nshapes, opt, err))) goto done;
    if (s->chip.topology == ROTOR_TOPO_MESH && (st = mesh_times(s, g, shapes, nshapes, threads, err))) goto done;

    for (int o = 0; o < g->nops && !st; o++) {
        rotor_schedule_op *so = &s->ops[o];
        st = so->vendor ? vendor_plan(g, s, o, so, err) : expr_plans(s, &shapes[shape_of[o]], so, err);
        if (!st && !rotor_add_i64(s->hbm_bytes, so->hbm_bytes, &s->hbm_bytes))
            st = rotor_fail(err, ROTOR_ERR_INPUT, "HBM bytes overflow 64 bits");
    }
    if (st) goto done;
    assign_layers(s);
    for (int o = 0; o < g->nops; o++) {
        const rotor_schedule_op *so = &s->ops[o];
        desc[o] = (rotor_preload_op_desc){.name = so->name, .hbm_bytes = so->hbm_bytes, .layer = so->layer,
                                          .layer_begin = so->layer_begin, .nplans = so->nplans,
                                          .plans = so->plans};
    }
    st = rotor_preload_model_create(&s->pchip, desc, g->nops, &s->model, err);

done:
    for (int k = 0; k < nshapes; k++) {
        rotor_search_result_free(&shapes[k].res);
        free(shapes[k].mesh_ps);
        free(shapes[k].mesh_link_ps);
    }
    free(shapes);
    free(shape_of);
    free(lay);
    free(desc);
    free(meter.load);
    free(meter.shift);
    s->pchip.port_load = NULL; /* called by rotor_preload_model_create only */
    s->pchip.shift_load = NULL;
    s->pchip.mesh_ctx = NULL;
    if (st) rotor_schedule_free(s);
    else *out = s;
    return st;
}

/* ---- run ---------------------------------------------------------------------------- */

void rotor_schedule_report_free(rotor_schedule_report *r) {
    if (r) rotor_preload_result_free(&r->result);
}

rotor_status rotor_schedule_run(const rotor_schedule *s, rotor_preload_design d, rotor_schedule_report *out,
                                rotor_error *err) {
    memset(out, 0, sizeof *out);
    rotor_status st = rotor_preload_schedule(s->model, d, &s->preload, &out->result, err);
    if (st) return st;
    const rotor_preload_result *r = &out->result;
    out->latency_s = (double)r->latency_ps * 1e-12;
    out->hbm_util = r->hbm_util;
    int64_t bytes = rotor_preload_link_bytes(s->model, r);
    out->link_bytes = bytes;
    if (r->latency_ps > 0) {
        out->link_util = (double)bytes / ((double)s->pchip.link_bw * out->latency_s);
        out->tflops = s->model_flops / out->latency_s / 1e12;
    }
    return ROTOR_OK;
}
