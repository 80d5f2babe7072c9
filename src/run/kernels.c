/* kernels.c — reference kernels for vendor ops (docs/run.md, "Kernels").
 *
 * T10 §4.2 runs operators outside tensor expressions from the vendor
 * library; rotor run needs their values, so each type rotor can run has a
 * kernel here, written from the ONNX operator specification, in double on
 * row-major arrays.  One table maps a kernel kind (rotor_kernel, named
 * per operator by the importer's registry, src/model/onnxops.c) to its
 * kernel; an op without one is refused naming its type.  Attributes come from the graph
 * (graph.h, rotor_attr): the node's own, "@K" for a constant parameter
 * input K the lowering dropped, "@in" for the ONNX position of each graph
 * input. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/model/onnx.h"
#include "rotor/run/run.h"
#include "runint.h"

typedef struct kctx {
    const rotor_graph *g;
    int o;
    const rotor_op *op;
    rotor_kernel kind;                     /* which semantics (several kinds share a kernel) */
    double *const *vals;
    rotor_error *err;
} kctx;

static rotor_status kfail(const kctx *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static rotor_status kfail(const kctx *k, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    rotor_status st = run_op_vfail(k->g, k->o, k->err, ROTOR_ERR_INPUT, fmt, ap);
    va_end(ap);
    return st;
}

/* The graph value at ONNX input position pos, or -1 (absent or folded). */
static int input_at(const kctx *k, int pos) { return rotor_op_input_at(k->op, pos); }

static const rotor_value *val(const kctx *k, int v) { return &k->g->values[v]; }

/* The elements of ONNX input pos: a graph value's, or those of a small
 * float constant the lowering kept as attribute "@pos"; NULL (and *n 0)
 * when the input is absent. */
static const double *input_data(const kctx *k, int pos, int64_t *n) {
    int v = input_at(k, pos);
    if (v >= 0) {
        *n = val(k, v)->elements;
        return k->vals[v];
    }
    char at[16];
    snprintf(at, sizeof at, "@%d", pos);
    const rotor_attr *a = rotor_op_attr(k->op, at);
    *n = a ? a->nfloats : 0;
    return a && a->nfloats ? a->floats : NULL;
}

static int64_t attr_int(const kctx *k, const char *name, int64_t dflt) {
    const rotor_attr *a = rotor_op_attr(k->op, name);
    return a && a->nints == 1 ? a->ints[0] : dflt;
}

static double attr_float(const kctx *k, const char *name, double dflt) {
    const rotor_attr *a = rotor_op_attr(k->op, name);
    return a && a->nfloats == 1 ? a->floats[0] : dflt;
}

/* An integer list given as attribute name, or as ONNX input pos (a folded
 * constant "@pos" or a graph input with data); *n -1 when neither. */
static void int_list(const kctx *k, const char *name, int pos, int64_t *out, int cap, int *n) {
    *n = -1;
    const rotor_attr *a = name ? rotor_op_attr(k->op, name) : NULL;
    char at[16];
    snprintf(at, sizeof at, "@%d", pos);
    if (!a && pos >= 0) a = rotor_op_attr(k->op, at);
    if (a && a->nints) {
        *n = a->nints < cap ? a->nints : cap;
        for (int i = 0; i < *n; i++) out[i] = a->ints[i];
        return;
    }
    if (a && a->nfloats) {
        *n = a->nfloats < cap ? a->nfloats : cap;
        for (int i = 0; i < *n; i++) out[i] = (int64_t)a->floats[i];
        return;
    }
    int v = pos >= 0 ? input_at(k, pos) : -1;
    if (v >= 0 && k->vals[v]) {
        int64_t e = val(k, v)->elements;
        *n = e < cap ? (int)e : cap;
        for (int i = 0; i < *n; i++) out[i] = (int64_t)k->vals[v][i];
    }
}

static bool norm_axis(int64_t a, int rank, int *out) {
    if (a < -rank || a >= rank) return false;
    *out = (int)(a < 0 ? a + rank : a);
    return true;
}

/* outer * ext * inner = elements, split at axis. */
static void split_at(const rotor_value *x, int axis, int64_t *outer, int64_t *inner) {
    *outer = 1, *inner = 1;
    for (int d = 0; d < axis; d++) *outer *= x->shape[d];
    for (int d = axis + 1; d < x->rank; d++) *inner *= x->shape[d];
}

/* ---- copies ------------------------------------------------------------------------- */

static rotor_status k_identity(const kctx *k) {
    int x = input_at(k, 0);
    if (x < 0) return kfail(k, "has no data input");
    if (k->kind == ROTOR_KERNEL_DROPOUT) { /* training_mode (input 2) draws a random mask */
        const rotor_attr *tm = rotor_op_attr(k->op, "@2");
        int tv = input_at(k, 2);
        if ((tm && tm->nints && tm->ints[0]) || (tv >= 0 && k->vals[tv] && k->vals[tv][0] != 0))
            return kfail(k, "training-mode Dropout draws a random mask; rotor runs inference");
    }
    const rotor_value *y = val(k, k->op->outputs[0]);
    if (y->elements != val(k, x)->elements) return kfail(k, "output and input differ in size");
    memcpy(k->vals[k->op->outputs[0]], k->vals[x], sizeof(double) * (size_t)y->elements);
    for (int i = 1; i < k->op->noutputs; i++) /* Dropout's mask: nothing dropped at inference */
        for (int64_t e = 0; e < val(k, k->op->outputs[i])->elements; e++) k->vals[k->op->outputs[i]][e] = 1;
    return ROTOR_OK;
}

/* numpy broadcasting of input 0 to the output's shape (Expand). */
static rotor_status k_expand(const kctx *k) {
    int xv = input_at(k, 0);
    if (xv < 0) return kfail(k, "has no data input");
    const rotor_value *x = val(k, xv), *y = val(k, k->op->outputs[0]);
    if (x->rank > y->rank) return kfail(k, "input has a higher rank than the output");
    int64_t idx[ROTOR_GRAPH_MAX_RANK] = {0};
    for (int64_t e = 0; e < y->elements; e++) {
        int64_t off = 0;
        for (int d = 0; d < x->rank; d++) {
            int yd = y->rank - x->rank + d;
            off = off * x->shape[d] + (x->shape[d] == 1 ? 0 : idx[yd]);
        }
        k->vals[k->op->outputs[0]][e] = k->vals[xv][off];
        for (int d = y->rank - 1; d >= 0 && ++idx[d] == y->shape[d]; d--) idx[d] = 0;
    }
    return ROTOR_OK;
}

static rotor_status k_concat(const kctx *k) {
    const rotor_value *y = val(k, k->op->outputs[0]);
    int axis;
    if (!norm_axis(attr_int(k, "axis", 0), y->rank, &axis)) return kfail(k, "axis is out of range");
    int64_t outer, inner, at = 0;
    split_at(y, axis, &outer, &inner);
    for (int i = 0; i < k->op->ninputs; i++) {
        int v = k->op->inputs[i];
        const rotor_value *x = val(k, v);
        int64_t ext = x->rank ? x->shape[axis] : 1;
        for (int64_t a = 0; a < outer; a++)
            memcpy(k->vals[k->op->outputs[0]] + (a * y->shape[axis] + at) * inner, k->vals[v] + a * ext * inner,
                   sizeof(double) * (size_t)(ext * inner));
        at += ext;
    }
    if (at != y->shape[axis]) return kfail(k, "inputs cover %lld of the output's %lld", (long long)at,
                                           (long long)y->shape[axis]);
    return ROTOR_OK;
}

static rotor_status k_split(const kctx *k) {
    int xv = input_at(k, 0);
    if (xv < 0) return kfail(k, "has no data input");
    const rotor_value *x = val(k, xv);
    int axis;
    if (!norm_axis(attr_int(k, "axis", 0), x->rank, &axis)) return kfail(k, "axis is out of range");
    int64_t outer, inner, at = 0;
    split_at(x, axis, &outer, &inner);
    for (int i = 0; i < k->op->noutputs; i++) {
        int v = k->op->outputs[i];
        int64_t ext = val(k, v)->shape[axis];
        for (int64_t a = 0; a < outer; a++)
            memcpy(k->vals[v] + a * ext * inner, k->vals[xv] + (a * x->shape[axis] + at) * inner,
                   sizeof(double) * (size_t)(ext * inner));
        at += ext;
    }
    return ROTOR_OK;
}

/* Gather (axis) and GatherElements. */
static rotor_status k_gather(const kctx *k) {
    bool elements = k->kind == ROTOR_KERNEL_GATHER_ELEMENTS;
    int xv = input_at(k, 0);
    if (xv < 0) return kfail(k, "has no data input");
    const rotor_value *x = val(k, xv), *y = val(k, k->op->outputs[0]);
    int axis;
    if (!norm_axis(attr_int(k, "axis", 0), x->rank, &axis)) return kfail(k, "axis is out of range");
    int64_t nidx = 0;
    int64_t *idx = NULL;
    int iv = input_at(k, 1);
    if (iv >= 0) {
        nidx = val(k, iv)->elements;
        idx = malloc(sizeof *idx * (size_t)(nidx ? nidx : 1));
        if (!idx) return rotor_nomem(k->err);
        for (int64_t i = 0; i < nidx; i++) idx[i] = (int64_t)k->vals[iv][i];
    } else {
        const rotor_attr *a = rotor_op_attr(k->op, "@1");
        if (!a) return kfail(k, "has no indices");
        nidx = a->nints;
        idx = malloc(sizeof *idx * (size_t)(nidx ? nidx : 1));
        if (!idx) return rotor_nomem(k->err);
        memcpy(idx, a->ints, sizeof *idx * (size_t)nidx);
    }
    int64_t ext = x->shape[axis];
    rotor_status st = ROTOR_OK;
    double *out = k->vals[k->op->outputs[0]];
    if (elements) {
        if (nidx != y->elements) st = kfail(k, "indices and output differ in size");
        int64_t pos[ROTOR_GRAPH_MAX_RANK] = {0};
        for (int64_t e = 0; e < y->elements && !st; e++) {
            int64_t j = idx[e] < 0 ? idx[e] + ext : idx[e];
            if (j < 0 || j >= ext) {
                st = kfail(k, "index %lld is out of range for extent %lld", (long long)idx[e], (long long)ext);
                break;
            }
            int64_t off = 0;
            for (int d = 0; d < x->rank; d++) off = off * x->shape[d] + (d == axis ? j : pos[d]);
            out[e] = k->vals[xv][off];
            for (int d = y->rank - 1; d >= 0 && ++pos[d] == y->shape[d]; d--) pos[d] = 0;
        }
    } else {
        int64_t outer, inner;
        split_at(x, axis, &outer, &inner);
        if (outer * nidx * inner != y->elements) st = kfail(k, "indices and output differ in size");
        for (int64_t a = 0; a < outer && !st; a++)
            for (int64_t i = 0; i < nidx && !st; i++) {
                int64_t j = idx[i] < 0 ? idx[i] + ext : idx[i];
                if (j < 0 || j >= ext) {
                    st = kfail(k, "index %lld is out of range for extent %lld", (long long)idx[i], (long long)ext);
                    break;
                }
                memcpy(out + (a * nidx + i) * inner, k->vals[xv] + (a * ext + j) * inner,
                       sizeof(double) * (size_t)inner);
            }
    }
    free(idx);
    return st;
}

static rotor_status k_tile(const kctx *k) {
    int xv = input_at(k, 0);
    if (xv < 0) return kfail(k, "has no data input");
    const rotor_value *x = val(k, xv), *y = val(k, k->op->outputs[0]);
    if (x->rank != y->rank) return kfail(k, "input and output differ in rank");
    int64_t idx[ROTOR_GRAPH_MAX_RANK] = {0};
    for (int64_t e = 0; e < y->elements; e++) {
        int64_t off = 0;
        for (int d = 0; d < x->rank; d++) off = off * x->shape[d] + idx[d] % x->shape[d];
        k->vals[k->op->outputs[0]][e] = k->vals[xv][off];
        for (int d = y->rank - 1; d >= 0 && ++idx[d] == y->shape[d]; d--) idx[d] = 0;
    }
    return ROTOR_OK;
}

/* Pad: constant, reflect, edge (pads as attribute or input 1, value input 2). */
static rotor_status k_pad(const kctx *k) {
    int xv = input_at(k, 0);
    if (xv < 0) return kfail(k, "has no data input");
    const rotor_value *x = val(k, xv), *y = val(k, k->op->outputs[0]);
    int64_t pads[2 * ROTOR_GRAPH_MAX_RANK], axes[ROTOR_GRAPH_MAX_RANK];
    int np, na;
    int_list(k, "pads", 1, pads, 2 * ROTOR_GRAPH_MAX_RANK, &np);
    int_list(k, NULL, 3, axes, ROTOR_GRAPH_MAX_RANK, &na);
    int64_t lo[ROTOR_GRAPH_MAX_RANK] = {0};
    if (na > 0) {
        if (np != 2 * na) return kfail(k, "pads has %d entries for %d axes", np, na);
        for (int i = 0; i < na; i++) {
            int a;
            if (!norm_axis(axes[i], x->rank, &a)) return kfail(k, "axis %lld is out of range", (long long)axes[i]);
            lo[a] = pads[i];
        }
    } else {
        if (np != 2 * x->rank) return kfail(k, "pads has %d entries for rank %d", np, x->rank);
        for (int d = 0; d < x->rank; d++) lo[d] = pads[d];
    }
    double cval = attr_float(k, "value", 0);
    const rotor_attr *cv = rotor_op_attr(k->op, "@2");
    if (cv && cv->nfloats) cval = cv->floats[0];
    else if (cv && cv->nints) cval = (double)cv->ints[0];
    int vv = input_at(k, 2);
    if (vv >= 0 && k->vals[vv]) cval = k->vals[vv][0];
    const rotor_attr *ma = rotor_op_attr(k->op, "mode");
    const char *mode = ma && ma->str ? ma->str : "constant";
    int m = !strcmp(mode, "constant") ? 0 : !strcmp(mode, "reflect") ? 1 : !strcmp(mode, "edge") ? 2 : -1;
    if (m < 0) return kfail(k, "mode '%s' has no kernel (constant, reflect and edge have)", mode);
    int64_t idx[ROTOR_GRAPH_MAX_RANK] = {0};
    for (int64_t e = 0; e < y->elements; e++) {
        int64_t off = 0;
        bool pad = false;
        for (int d = 0; d < x->rank; d++) {
            int64_t c = idx[d] - lo[d], n = x->shape[d];
            if (c < 0 || c >= n) {
                if (m == 0) pad = true;
                else if (m == 2) c = c < 0 ? 0 : n - 1;
                else if (n == 1) c = 0;
                else {
                    int64_t period = 2 * (n - 1);
                    c = ((c % period) + period) % period;
                    if (c >= n) c = period - c;
                }
            }
            off = off * n + c;
        }
        k->vals[k->op->outputs[0]][e] = pad ? cval : k->vals[xv][off];
        for (int d = y->rank - 1; d >= 0 && ++idx[d] == y->shape[d]; d--) idx[d] = 0;
    }
    return ROTOR_OK;
}

/* ---- reductions -------------------------------------------------------------------- */

typedef enum { R_MAX, R_MIN, R_SUM, R_MEAN, R_PROD, R_L1, R_L2, R_SUMSQ, R_LOGSUM, R_LOGSUMEXP } rkind;

static rotor_status k_reduce(const kctx *k) {
    /* the reduction is the kind's: one kernel serves the Reduce family */
    static const rkind kinds[ROTOR_KERNEL_COUNT] = {
        [ROTOR_KERNEL_REDUCE_MAX] = R_MAX,         [ROTOR_KERNEL_REDUCE_MIN] = R_MIN,
        [ROTOR_KERNEL_REDUCE_SUM] = R_SUM,         [ROTOR_KERNEL_REDUCE_MEAN] = R_MEAN,
        [ROTOR_KERNEL_REDUCE_PROD] = R_PROD,       [ROTOR_KERNEL_REDUCE_L1] = R_L1,
        [ROTOR_KERNEL_REDUCE_L2] = R_L2,           [ROTOR_KERNEL_REDUCE_SUM_SQUARE] = R_SUMSQ,
        [ROTOR_KERNEL_REDUCE_LOG_SUM] = R_LOGSUM,  [ROTOR_KERNEL_REDUCE_LOG_SUM_EXP] = R_LOGSUMEXP};
    rkind r = kinds[k->kind];
    int xv = input_at(k, 0);
    if (xv < 0) return kfail(k, "has no data input");
    const rotor_value *x = val(k, xv);
    int64_t axes[ROTOR_GRAPH_MAX_RANK];
    int na;
    int_list(k, "axes", 1, axes, ROTOR_GRAPH_MAX_RANK, &na);
    bool red[ROTOR_GRAPH_MAX_RANK];
    for (int d = 0; d < x->rank; d++) red[d] = na <= 0 && !attr_int(k, "noop_with_empty_axes", 0);
    for (int i = 0; i < na; i++) {
        int a;
        if (!norm_axis(axes[i], x->rank, &a)) return kfail(k, "axis %lld is out of range", (long long)axes[i]);
        red[a] = true;
    }
    int64_t cnt = 1, kept = 1;
    for (int d = 0; d < x->rank; d++) {
        if (red[d]) cnt *= x->shape[d];
        else kept *= x->shape[d];
    }
    double *y = k->vals[k->op->outputs[0]];
    if (kept != val(k, k->op->outputs[0])->elements) return kfail(k, "output size disagrees with the axes");
    double init = r == R_MAX ? -INFINITY : r == R_MIN ? INFINITY : r == R_PROD ? 1 : 0;
    for (int64_t e = 0; e < kept; e++) y[e] = init;
    double *mx = NULL;
    if (r == R_LOGSUMEXP) { /* the stable form: max first */
        if (!(mx = malloc(sizeof *mx * (size_t)(kept ? kept : 1)))) return rotor_nomem(k->err);
        for (int64_t e = 0; e < kept; e++) mx[e] = -INFINITY;
    }
    for (int pass = r == R_LOGSUMEXP ? 0 : 1; pass < 2; pass++) {
        int64_t idx[ROTOR_GRAPH_MAX_RANK] = {0};
        for (int64_t e = 0; e < x->elements; e++) {
            int64_t o = 0;
            for (int d = 0; d < x->rank; d++)
                if (!red[d]) o = o * x->shape[d] + idx[d];
            double v = k->vals[xv][e];
            if (pass == 0) mx[o] = v > mx[o] ? v : mx[o];
            else switch (r) {
                case R_MAX: y[o] = v > y[o] ? v : y[o]; break;
                case R_MIN: y[o] = v < y[o] ? v : y[o]; break;
                case R_PROD: y[o] *= v; break;
                case R_L1: y[o] += fabs(v); break;
                case R_L2: case R_SUMSQ: y[o] += v * v; break;
                case R_LOGSUMEXP: y[o] += exp(v - mx[o]); break;
                default: y[o] += v; break;
                }
            for (int d = x->rank - 1; d >= 0 && ++idx[d] == x->shape[d]; d--) idx[d] = 0;
        }
    }
    for (int64_t e = 0; e < kept; e++) {
        if (r == R_MEAN) y[e] /= (double)cnt;
        else if (r == R_L2) y[e] = sqrt(y[e]);
        else if (r == R_LOGSUM) y[e] = log(y[e]);
        else if (r == R_LOGSUMEXP) y[e] = log(y[e]) + mx[e];
    }
    free(mx);
    return ROTOR_OK;
}

static rotor_status k_argmax(const kctx *k) {
    bool mx = k->kind == ROTOR_KERNEL_ARGMAX;
    int xv = input_at(k, 0);
    if (xv < 0) return kfail(k, "has no data input");
    const rotor_value *x = val(k, xv);
    int axis;
    if (!norm_axis(attr_int(k, "axis", 0), x->rank, &axis)) return kfail(k, "axis is out of range");
    bool last = attr_int(k, "select_last_index", 0) != 0;
    int64_t outer, inner, ext = x->shape[axis];
    split_at(x, axis, &outer, &inner);
    for (int64_t a = 0; a < outer; a++)
        for (int64_t i = 0; i < inner; i++) {
            int64_t best = 0;
            for (int64_t j = 1; j < ext; j++) {
                double v = k->vals[xv][(a * ext + j) * inner + i], b = k->vals[xv][(a * ext + best) * inner + i];
                if (mx ? (v > b || (last && v == b)) : (v < b || (last && v == b))) best = j;
            }
            k->vals[k->op->outputs[0]][a * inner + i] = (double)best;
        }
    return ROTOR_OK;
}

/* ---- pooling and normalisation ------------------------------------------------------------ */

/* MaxPool (with its optional Indices output), GlobalMaxPool, and
 * AveragePool (count_include_pad: divide by the kernel size, else by the
 * elements inside the input). */
static rotor_status k_maxpool(const kctx *k) {
    bool avg = k->kind == ROTOR_KERNEL_AVERAGEPOOL, incl = attr_int(k, "count_include_pad", 0) != 0;
    /* MaxPoolGrad (model/train.h): inputs dY and X, output dX; dY goes to
     * the element the forward window picked */
    bool grad = k->kind == ROTOR_KERNEL_MAXPOOL_GRAD;
    int xv = input_at(k, grad ? 1 : 0), dyv = grad ? input_at(k, 0) : -1;
    if (xv < 0 || (grad && dyv < 0)) return kfail(k, "has no data input");
    const rotor_value *x = val(k, xv), *y = val(k, grad ? dyv : k->op->outputs[0]);
    int ns = x->rank - 2;
    if (ns < 1 || y->rank != x->rank) return kfail(k, "needs [N, C, spatial...] input and output");
    bool global = k->kind == ROTOR_KERNEL_GLOBAL_MAXPOOL;
    int64_t ks[ROTOR_GRAPH_MAX_RANK], st[ROTOR_GRAPH_MAX_RANK], dl[ROTOR_GRAPH_MAX_RANK], pb[ROTOR_GRAPH_MAX_RANK];
    int64_t tmp[2 * ROTOR_GRAPH_MAX_RANK];
    int n;
    for (int i = 0; i < ns; i++) ks[i] = global ? x->shape[2 + i] : 1, st[i] = 1, dl[i] = 1, pb[i] = 0;
    if (!global) {
        int_list(k, "kernel_shape", -1, tmp, ROTOR_GRAPH_MAX_RANK, &n);
        if (n != ns) return kfail(k, "kernel_shape has %d entries for %d spatial dimensions", n, ns);
        for (int i = 0; i < ns; i++) ks[i] = tmp[i];
        int_list(k, "strides", -1, tmp, ROTOR_GRAPH_MAX_RANK, &n);
        for (int i = 0; i < ns && n == ns; i++) st[i] = tmp[i];
        int_list(k, "dilations", -1, tmp, ROTOR_GRAPH_MAX_RANK, &n);
        for (int i = 0; i < ns && n == ns; i++) dl[i] = tmp[i];
        int_list(k, "pads", -1, tmp, 2 * ROTOR_GRAPH_MAX_RANK, &n);
        for (int i = 0; i < ns && n == 2 * ns; i++) pb[i] = tmp[i];
        const rotor_attr *ap = rotor_op_attr(k->op, "auto_pad");
        if (ap && ap->str && (!strcmp(ap->str, "SAME_UPPER") || !strcmp(ap->str, "SAME_LOWER")))
            for (int i = 0; i < ns; i++) {
                int64_t total = (y->shape[2 + i] - 1) * st[i] + dl[i] * (ks[i] - 1) + 1 - x->shape[2 + i];
                if (total < 0) total = 0;
                pb[i] = !strcmp(ap->str, "SAME_UPPER") ? total / 2 : total - total / 2;
            }
        else if (ap && ap->str && !strcmp(ap->str, "VALID"))
            for (int i = 0; i < ns; i++) pb[i] = 0;
        if (attr_int(k, "storage_order", 0)) return kfail(k, "storage_order 1 (column-major indices) has no kernel");
    }
    double *out = k->vals[k->op->outputs[0]];
    double *ind = k->op->noutputs > 1 && !grad ? k->vals[k->op->outputs[1]] : NULL;
    int64_t planes = x->shape[0] * x->shape[1], xin = 1, yin = 1;
    for (int i = 0; i < ns; i++) xin *= x->shape[2 + i], yin *= y->shape[2 + i];
    for (int64_t p = 0; p < planes; p++) {
        int64_t oi[ROTOR_GRAPH_MAX_RANK] = {0};
        for (int64_t e = 0; e < yin; e++) {
            double best = -INFINITY, sum = 0;
            int64_t barg = -1, ki[ROTOR_GRAPH_MAX_RANK] = {0}, kn = 1, cnt = 0;
            for (int i = 0; i < ns; i++) kn *= ks[i];
            for (int64_t q = 0; q < kn; q++) {
                int64_t off = 0;
                bool in = true;
                for (int i = 0; i < ns && in; i++) {
                    int64_t c = oi[i] * st[i] + ki[i] * dl[i] - pb[i];
                    in = c >= 0 && c < x->shape[2 + i];
                    off = off * x->shape[2 + i] + c;
                }
                if (in) sum += k->vals[xv][p * xin + off], cnt++;
                if (in && (barg < 0 || k->vals[xv][p * xin + off] > best)) best = k->vals[xv][p * xin + off], barg = off;
                for (int i = ns - 1; i >= 0 && ++ki[i] == ks[i]; i--) ki[i] = 0;
            }
            if (grad && barg >= 0) out[p * xin + barg] += k->vals[dyv][p * yin + e];
            else if (!grad) out[p * yin + e] = !avg ? best : sum / (double)(incl ? kn : cnt ? cnt : 1);
            if (ind) ind[p * yin + e] = (double)(p * xin + (barg < 0 ? 0 : barg));
            for (int i = ns - 1; i >= 0 && ++oi[i] == y->shape[2 + i]; i--) oi[i] = 0;
        }
    }
    return ROTOR_OK;
}

/* The mean of xs[0 .. n) and 1 / sqrt(variance + eps), two-pass (the
 * normalisations share it). */
static void moments(const double *xs, int64_t n, double eps, double *mean, double *inv) {
    double m = 0, var = 0;
    for (int64_t i = 0; i < n; i++) m += xs[i];
    m /= (double)n;
    for (int64_t i = 0; i < n; i++) var += (xs[i] - m) * (xs[i] - m);
    *mean = m;
    *inv = 1 / sqrt(var / (double)n + eps);
}

/* LayerNormalization over the axes from axis on (outputs Y, Mean, InvStdDev). */
static rotor_status k_layernorm(const kctx *k) {
    int xv = input_at(k, 0);
    int64_t ns, nb;
    const double *scale = input_data(k, 1, &ns), *bias = input_data(k, 2, &nb);
    if (xv < 0 || !scale) return kfail(k, "needs X and Scale");
    const rotor_value *x = val(k, xv);
    int axis;
    if (!norm_axis(attr_int(k, "axis", -1), x->rank, &axis)) return kfail(k, "axis is out of range");
    double eps = attr_float(k, "epsilon", 1e-5);
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < x->rank; d++) *(d < axis ? &outer : &inner) *= x->shape[d];
    if (ns < 1 || inner % ns || (nb && inner % nb)) return kfail(k, "scale or bias does not broadcast");
    for (int64_t a = 0; a < outer; a++) {
        const double *xs = k->vals[xv] + a * inner;
        double mean, inv;
        moments(xs, inner, eps, &mean, &inv);
        for (int64_t i = 0; i < inner; i++)
            k->vals[k->op->outputs[0]][a * inner + i] =
                (xs[i] - mean) * inv * scale[i % ns] + (nb ? bias[i % nb] : 0);
        if (k->op->noutputs > 1) k->vals[k->op->outputs[1]][a] = mean;
        if (k->op->noutputs > 2) k->vals[k->op->outputs[2]][a] = inv;
    }
    return ROTOR_OK;
}

static rotor_status k_instancenorm(const kctx *k) {
    int xv = input_at(k, 0);
    int64_t ns, nb;
    const double *scale = input_data(k, 1, &ns), *bias = input_data(k, 2, &nb);
    if (xv < 0 || !scale || !bias) return kfail(k, "needs input, scale and B");
    const rotor_value *x = val(k, xv);
    if (x->rank < 3) return kfail(k, "needs [N, C, spatial...]");
    double eps = attr_float(k, "epsilon", 1e-5);
    int64_t C = x->shape[1], inner = x->elements / (x->shape[0] * C);
    if (ns != C || nb != C) return kfail(k, "scale and B have %lld and %lld elements; expected C = %lld", (long long)ns,
                                         (long long)nb, (long long)C);
    for (int64_t p = 0; p < x->shape[0] * C; p++) {
        const double *xs = k->vals[xv] + p * inner;
        double mean, inv;
        moments(xs, inner, eps, &mean, &inv);
        for (int64_t i = 0; i < inner; i++)
            k->vals[k->op->outputs[0]][p * inner + i] = (xs[i] - mean) * inv * scale[p % C] + bias[p % C];
    }
    return ROTOR_OK;
}

/* Trilu: keep the upper (or lower) triangle of the last two dimensions, k above the diagonal. */
static rotor_status k_trilu(const kctx *k) {
    int xv = input_at(k, 0);
    if (xv < 0) return kfail(k, "has no data input");
    const rotor_value *x = val(k, xv);
    if (x->rank < 2) return kfail(k, "needs rank 2 or more");
    int64_t kk[1] = {0};
    int n;
    int_list(k, NULL, 1, kk, 1, &n);
    bool upper = attr_int(k, "upper", 1) != 0;
    int64_t R = x->shape[x->rank - 2], C = x->shape[x->rank - 1];
    for (int64_t e = 0; e < x->elements; e++) {
        int64_t j = e % C, i = (e / C) % R;
        bool keep = upper ? j - i >= kk[0] : j - i <= kk[0];
        k->vals[k->op->outputs[0]][e] = keep ? k->vals[xv][e] : 0;
    }
    return ROTOR_OK;
}

/* CumSum along axis (input 1), exclusive and reverse attributes. */
static rotor_status k_cumsum(const kctx *k) {
    int xv = input_at(k, 0);
    if (xv < 0) return kfail(k, "has no data input");
    const rotor_value *x = val(k, xv);
    int64_t ax[1];
    int n, axis;
    int_list(k, NULL, 1, ax, 1, &n);
    if (n != 1 || !norm_axis(ax[0], x->rank, &axis)) return kfail(k, "axis is missing or out of range");
    bool excl = attr_int(k, "exclusive", 0) != 0, rev = attr_int(k, "reverse", 0) != 0;
    int64_t outer, inner, ext = x->shape[axis];
    split_at(x, axis, &outer, &inner);
    for (int64_t a = 0; a < outer; a++)
        for (int64_t i = 0; i < inner; i++) {
            double s = 0;
            for (int64_t q = 0; q < ext; q++) {
                int64_t j = rev ? ext - 1 - q : q, at = (a * ext + j) * inner + i;
                if (excl) k->vals[k->op->outputs[0]][at] = s;
                s += k->vals[xv][at];
                if (!excl) k->vals[k->op->outputs[0]][at] = s;
            }
        }
    return ROTOR_OK;
}

/* DepthToSpace (DCR or CRD) and SpaceToDepth on [N, C, H, W]. */
static rotor_status k_depthspace(const kctx *k) {
    int xv = input_at(k, 0);
    if (xv < 0) return kfail(k, "has no data input");
    const rotor_value *x = val(k, xv), *y = val(k, k->op->outputs[0]);
    if (x->rank != 4) return kfail(k, "needs [N, C, H, W]");
    int64_t b = attr_int(k, "blocksize", 0);
    if (b < 1) return kfail(k, "blocksize is missing");
    bool d2s = k->kind == ROTOR_KERNEL_DEPTH_TO_SPACE;
    const rotor_attr *ma = rotor_op_attr(k->op, "mode");
    bool crd = ma && ma->str && !strcmp(ma->str, "CRD");
    /* in the depth-to-space direction: Y[n, c, h*b+i, w*b+j] = X[n, ch, h, w] */
    const rotor_value *deep = d2s ? x : y, *wide = d2s ? y : x;
    int64_t N = deep->shape[0], Cd = deep->shape[1], H = deep->shape[2], W = deep->shape[3], Cw = Cd / (b * b);
    for (int64_t nn = 0; nn < N; nn++)
        for (int64_t c = 0; c < Cw; c++)
            for (int64_t h = 0; h < H; h++)
                for (int64_t i = 0; i < b; i++)
                    for (int64_t w = 0; w < W; w++)
                        for (int64_t j = 0; j < b; j++) {
                            int64_t ch = crd ? c * b * b + i * b + j : (i * b + j) * Cw + c;
                            int64_t di = ((nn * Cd + ch) * H + h) * W + w;
                            int64_t wi = ((nn * Cw + c) * wide->shape[2] + h * b + i) * wide->shape[3] + w * b + j;
                            if (d2s) k->vals[k->op->outputs[0]][wi] = k->vals[xv][di];
                            else k->vals[k->op->outputs[0]][di] = k->vals[xv][wi];
                        }
    return ROTOR_OK;
}

/* ---- transposed convolution ------------------------------------------------------------------ */

/* ConvTranspose (ONNX opset 11): X (N, C, D...), W (C, M / group, K...), B (M).
 * Each input element scatters into the output:
 * Y[n, g Mg + m, o...] += X[n, g Cg + c, i...] * W[g Cg + c, m, k...] with
 * o_d = i_d stride_d - begin_d + k_d dilation_d, inside the output.  begin_d
 * is the pads attribute's; with auto_pad SAME_UPPER / SAME_LOWER or an
 * output_shape, it comes from the total padding
 * stride (in - 1) + output_padding + (K - 1) dilation + 1 - out (out: the
 * output extent the importer computed), split as the operator's text says:
 * SAME_UPPER puts the odd element at the end, the others at the start;
 * halves round down. */
static rotor_status k_convtranspose(const kctx *k) {
    enum { SD = ROTOR_GRAPH_MAX_RANK };
    int xv = input_at(k, 0);
    int64_t nw, nbias;
    const double *ws = input_data(k, 1, &nw), *bias = input_data(k, 2, &nbias);
    int wv = input_at(k, 1);
    if (xv < 0 || wv < 0 || !ws) return kfail(k, "has no input or no weight data");
    const rotor_value *x = val(k, xv), *w = val(k, wv), *y = val(k, k->op->outputs[0]);
    int sd = x->rank - 2;
    if (sd < 1 || w->rank != x->rank || y->rank != x->rank)
        return kfail(k, "expects an (N, C, spatial...) input, and a weight and an output of its rank");
    int64_t group = attr_int(k, "group", 1), nb = x->shape[0], c = x->shape[1];
    int64_t mg = w->shape[1], m = y->shape[1];
    if (group < 1 || c % group || w->shape[0] != c || mg * group != m || y->shape[0] != nb)
        return kfail(k, "channels do not match the weight (%lld x %lld) and group %lld", (long long)w->shape[0],
                     (long long)mg, (long long)group);
    int64_t stride[SD], dil[SD], opad[SD], pads[2 * SD], begin[SD];
    int n;
    int_list(k, "strides", -1, stride, sd, &n);
    for (int d = n < 0 ? 0 : n; d < sd; d++) stride[d] = 1;
    int_list(k, "dilations", -1, dil, sd, &n);
    for (int d = n < 0 ? 0 : n; d < sd; d++) dil[d] = 1;
    int_list(k, "output_padding", -1, opad, sd, &n);
    for (int d = n < 0 ? 0 : n; d < sd; d++) opad[d] = 0;
    int_list(k, "pads", -1, pads, 2 * sd, &n);
    for (int d = n < 0 ? 0 : n; d < 2 * sd; d++) pads[d] = 0;
    const rotor_attr *ap = rotor_op_attr(k->op, "auto_pad");
    bool upper = ap && ap->str && !strcmp(ap->str, "SAME_UPPER"), lower = ap && ap->str && !strcmp(ap->str, "SAME_LOWER");
    bool from_total = upper || lower || rotor_op_attr(k->op, "output_shape");
    for (int d = 0; d < sd; d++) {
        int64_t in = x->shape[2 + d], kk = w->shape[2 + d], out = y->shape[2 + d];
        int64_t total = stride[d] * (in - 1) + opad[d] + (kk - 1) * dil[d] + 1 - out;
        /* halves rounded down, also when an output_shape larger than the
         * natural one makes the total negative (as ONNX's reference does) */
        int64_t half = total >= 0 ? total / 2 : -((1 - total) / 2);
        begin[d] = !from_total ? pads[d] : upper ? half : total - half;
    }
    /* row-major strides of the spatial parts */
    int64_t xin = 1, win = 1, yin = 1;
    for (int d = 0; d < sd; d++) {
        xin *= x->shape[2 + d];
        win *= w->shape[2 + d];
        yin *= y->shape[2 + d];
    }
    double *out = k->vals[k->op->outputs[0]];
    const double *xs = k->vals[xv];
    if (bias && nbias != m) return kfail(k, "bias has %lld elements; expected %lld", (long long)nbias, (long long)m);
    for (int64_t b = 0; b < nb; b++)
        for (int64_t oc = 0; oc < m; oc++)
            for (int64_t e = 0; e < yin; e++) out[(b * m + oc) * yin + e] = bias ? bias[oc] : 0.0;
    int64_t cg = c / group;
    for (int64_t b = 0; b < nb; b++)
        for (int64_t ic = 0; ic < c; ic++) {
            int64_t g = ic / cg;
            for (int64_t ie = 0; ie < xin; ie++) {
                int64_t ipos[SD];
                for (int d = sd - 1, r = ie; d >= 0; d--) {
                    ipos[d] = r % x->shape[2 + d];
                    r /= x->shape[2 + d];
                }
                double xval = xs[(b * c + ic) * xin + ie];
                for (int64_t ke = 0; ke < win; ke++) {
                    int64_t yo = 0, r = ke;
                    int64_t kpos[SD];
                    for (int d = sd - 1; d >= 0; d--) {
                        kpos[d] = r % w->shape[2 + d];
                        r /= w->shape[2 + d];
                    }
                    bool inside = true;
                    for (int d = 0; d < sd && inside; d++) {
                        int64_t o = ipos[d] * stride[d] - begin[d] + kpos[d] * dil[d];
                        inside = o >= 0 && o < y->shape[2 + d];
                        yo = yo * y->shape[2 + d] + o;
                    }
                    if (!inside) continue;
                    for (int64_t om = 0; om < mg; om++)
                        out[(b * m + g * mg + om) * yin + yo] += xval * ws[(ic * mg + om) * win + ke];
                }
            }
        }
    return ROTOR_OK;
}

/* ---- losses ------------------------------------------------------------------------------- */

/* NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (ONNX opset 13).
 * With x of shape (N, C, d...) and target t = label[n, d...]:
 * loss[n, d...] = -x[n, t, d...] * w[t] (w absent: 1), and 0 with weight 0
 * where t is ignore_index.  reduction "none" keeps (N, d...), "sum" adds,
 * "mean" (the default) divides the sum by the counted weights.
 * SoftmaxCrossEntropyLoss takes x = log_softmax(scores) over axis 1 first
 * and writes it as its optional second output. */
static rotor_status k_loss(const kctx *k) {
    bool sce = k->kind == ROTOR_KERNEL_SCE_LOSS;
    int xv = input_at(k, 0), tv = input_at(k, 1);
    int64_t nw;
    const double *weight = input_data(k, 2, &nw);
    if (xv < 0 || tv < 0) return kfail(k, "has no scores or no target");
    const rotor_value *x = val(k, xv);
    if (x->rank < 2 || x->shape[0] == 0 || x->shape[1] == 0)
        return kfail(k, "input has %d dimensions; expected (N, C, ...) with N, C > 0", x->rank);
    int64_t n = x->shape[0], c = x->shape[1], inner = x->elements / (n * c);
    if (val(k, tv)->elements != n * inner) return kfail(k, "target has %lld elements; expected %lld",
                                                        (long long)val(k, tv)->elements, (long long)(n * inner));
    if (weight && nw != c) return kfail(k, "weight has %lld elements; expected C = %lld", (long long)nw, (long long)c);
    const rotor_attr *ra = rotor_op_attr(k->op, "reduction");
    const char *red = ra && ra->str ? ra->str : "mean";
    if (strcmp(red, "none") && strcmp(red, "sum") && strcmp(red, "mean"))
        return kfail(k, "reduction '%s' is not none, sum or mean", red);
    bool has_ii = rotor_op_attr(k->op, "ignore_index") != NULL;
    int64_t ii = attr_int(k, "ignore_index", 0);
    const double *in = k->vals[xv];
    double *logp = NULL, *own = NULL;
    if (sce) { /* log_softmax over C, each (n, d) apart */
        logp = k->op->noutputs > 1 ? k->vals[k->op->outputs[1]] : NULL;
        if (!logp && !(logp = own = malloc(sizeof *logp * (size_t)x->elements))) return rotor_nomem(k->err);
        for (int64_t a = 0; a < n; a++)
            for (int64_t i = 0; i < inner; i++) {
                double mx = -INFINITY, sum = 0;
                for (int64_t j = 0; j < c; j++) mx = fmax(mx, in[(a * c + j) * inner + i]);
                for (int64_t j = 0; j < c; j++) sum += exp(in[(a * c + j) * inner + i] - mx);
                double lse = mx + log(sum);
                for (int64_t j = 0; j < c; j++) logp[(a * c + j) * inner + i] = in[(a * c + j) * inner + i] - lse;
            }
        in = logp;
    }
    double *out = k->vals[k->op->outputs[0]], total = 0, weights = 0;
    rotor_status st = ROTOR_OK;
    for (int64_t a = 0; a < n && !st; a++)
        for (int64_t i = 0; i < inner; i++) {
            int64_t t = (int64_t)k->vals[tv][a * inner + i];
            double l = 0, w = 0;
            if (!(has_ii && t == ii)) {
                if (t < 0 || t >= c) {
                    st = kfail(k, "target %lld is outside the %lld classes", (long long)t, (long long)c);
                    break;
                }
                w = weight ? weight[t] : 1.0;
                l = -in[(a * c + t) * inner + i] * w;
            }
            if (!strcmp(red, "none")) out[a * inner + i] = l;
            total += l;
            weights += w;
        }
    if (!st && strcmp(red, "none")) out[0] = !strcmp(red, "sum") ? total : total / weights;
    free(own);
    return st;
}

/* ---- the table ----------------------------------------------------------------------------- */

/* onnxruntime's quantized operators (kernmsquant.c), given their inputs by ONNX position. */
static rotor_status k_msquant(const kctx *k) {
    int at[RUN_MSQ_MAX_IN];
    for (int p = 0; p < RUN_MSQ_MAX_IN; p++) at[p] = input_at(k, p);
    return run_msquant_kernel(k->g, k->o, k->kind, at, k->vals, k->err);
}

typedef rotor_status (*kernel_fn)(const kctx *k);

/* The quantized operators' kernels (kernquant.c). */
static rotor_status k_quant(const kctx *k) { return run_kernel_quant(k->g, k->o, k->kind, k->vals, k->err); }

/* The backward pass's (kerntrain.c). */
static rotor_status k_view_grad(const kctx *k) { return run_kernel_view_grad(k->g, k->o, k->vals, k->err); }
static rotor_status k_gather_grad(const kctx *k) { return run_kernel_gather_grad(k->g, k->o, k->vals, k->err); }
static rotor_status k_broadcast(const kctx *k) { return run_kernel_broadcast(k->g, k->o, k->vals, k->err); }

/* Indexed by the kind the ONNX importer's registry names (onnxops.c): a
 * kernel that serves several kinds (Reduce*, ArgMax/ArgMin, the pools) reads
 * which one from k->kind, never from the type string. */
static const kernel_fn kernels[ROTOR_KERNEL_COUNT] = {
    [ROTOR_KERNEL_IDENTITY] = k_identity,
    [ROTOR_KERNEL_DROPOUT] = k_identity,
    [ROTOR_KERNEL_EXPAND] = k_expand,
    [ROTOR_KERNEL_CONCAT] = k_concat,
    [ROTOR_KERNEL_SPLIT] = k_split,
    [ROTOR_KERNEL_GATHER] = k_gather,
    [ROTOR_KERNEL_GATHER_ELEMENTS] = k_gather,
    [ROTOR_KERNEL_TILE] = k_tile,
    [ROTOR_KERNEL_PAD] = k_pad,
    [ROTOR_KERNEL_REDUCE_MAX] = k_reduce,
    [ROTOR_KERNEL_REDUCE_MIN] = k_reduce,
    [ROTOR_KERNEL_REDUCE_SUM] = k_reduce,
    [ROTOR_KERNEL_REDUCE_MEAN] = k_reduce,
    [ROTOR_KERNEL_REDUCE_PROD] = k_reduce,
    [ROTOR_KERNEL_REDUCE_L1] = k_reduce,
    [ROTOR_KERNEL_REDUCE_L2] = k_reduce,
    [ROTOR_KERNEL_REDUCE_SUM_SQUARE] = k_reduce,
    [ROTOR_KERNEL_REDUCE_LOG_SUM] = k_reduce,
    [ROTOR_KERNEL_REDUCE_LOG_SUM_EXP] = k_reduce,
    [ROTOR_KERNEL_ARGMAX] = k_argmax,
    [ROTOR_KERNEL_ARGMIN] = k_argmax,
    [ROTOR_KERNEL_MAXPOOL] = k_maxpool,
    [ROTOR_KERNEL_GLOBAL_MAXPOOL] = k_maxpool,
    [ROTOR_KERNEL_AVERAGEPOOL] = k_maxpool,
    [ROTOR_KERNEL_LAYERNORM] = k_layernorm,
    [ROTOR_KERNEL_INSTANCENORM] = k_instancenorm,
    [ROTOR_KERNEL_TRILU] = k_trilu,
    [ROTOR_KERNEL_CUMSUM] = k_cumsum,
    [ROTOR_KERNEL_DEPTH_TO_SPACE] = k_depthspace,
    [ROTOR_KERNEL_SPACE_TO_DEPTH] = k_depthspace,
    [ROTOR_KERNEL_NLL_LOSS] = k_loss,
    [ROTOR_KERNEL_SCE_LOSS] = k_loss,
    [ROTOR_KERNEL_CONV_TRANSPOSE] = k_convtranspose,
    [ROTOR_KERNEL_MATMUL_INTEGER_TO_FLOAT] = k_msquant,
    [ROTOR_KERNEL_MATMUL_NBITS] = k_msquant,
    [ROTOR_KERNEL_MATMUL_BNB4] = k_msquant,
    [ROTOR_KERNEL_QLINEAR_ADD] = k_msquant,
    [ROTOR_KERNEL_QLINEAR_MUL] = k_msquant,
    [ROTOR_KERNEL_QLINEAR_SIGMOID] = k_msquant,
    [ROTOR_KERNEL_QLINEAR_LEAKY_RELU] = k_msquant,
    [ROTOR_KERNEL_QLINEAR_AVERAGEPOOL] = k_msquant,
    [ROTOR_KERNEL_QLINEAR_GLOBAL_AVERAGEPOOL] = k_msquant,
    [ROTOR_KERNEL_QLINEAR_CONCAT] = k_msquant,
    [ROTOR_KERNEL_QUANTIZE] = k_quant,
    [ROTOR_KERNEL_DEQUANTIZE] = k_quant,
    [ROTOR_KERNEL_DYNAMIC_QUANTIZE] = k_quant,
    [ROTOR_KERNEL_VIEW_GRAD] = k_view_grad,
    [ROTOR_KERNEL_GATHER_GRAD] = k_gather_grad,
    [ROTOR_KERNEL_BROADCAST] = k_broadcast,
    [ROTOR_KERNEL_MAXPOOL_GRAD] = k_maxpool,  /* the window's first maximum, as MaxPool's Indices */
};

/* The op's kind: the one its lowering stored, else its type's in the
 * registry (an operator the ONNX lowering did not make: the zoo's, a
 * hand-built graph's). */
static rotor_kernel kind_of(const rotor_op *op) {
    return op->kernel != ROTOR_KERNEL_NONE ? op->kernel : rotor_onnx_kernel(op->type);
}

bool rotor_run_has_kernel(const char *type) { return kernels[rotor_onnx_kernel(type)] != NULL; }

bool rotor_run_kernel_kind(rotor_kernel kind) {
    return kind > ROTOR_KERNEL_NONE && kind < ROTOR_KERNEL_COUNT && kernels[kind] != NULL;
}

rotor_status rotor_run_kernel(const rotor_graph *g, int op, double *const *vals, rotor_error *err) {
    kctx k = {.g = g, .o = op, .op = &g->ops[op], .vals = vals, .err = err};
    k.kind = kind_of(k.op);
    kernel_fn fn = kernels[k.kind];
    if (!fn) return kfail(&k, "rotor has no reference kernel for this vendor op");
    return fn(&k);
}
