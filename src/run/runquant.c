/* runquant.c — expression operators over integer values (docs/run.md,
 * "Quantized operators"): what the run does around the emulator so that
 * their integer results are exact.  run.c calls it for every expression
 * operator (runint.h: run_quant_takes, _begin, _end).
 *
 * The emulator computes in float32 (op/emu.c).  A quantized contraction
 * (QLinearMatMul, MatMulInteger, QLinearConv, ConvInteger; the lowering
 * marks it with "rotor.quant.a", model/lower.c) runs its plan there on its
 * zero-point-shifted inputs a' = a - a_zero_point and b' = b - b_zero_point,
 * integers of at most 9 bits for 8-bit data.  Every partial sum a plan
 * forms, on one core or across a reduction ring, adds some of the products
 * of one output element, so its magnitude is at most that element's
 * sum of |a' b'|, itself at most K max|a'| max|b'| (K: the product of the
 * reduced extents).  While the bound is at most 2^24, every float32
 * product and sum on the way is an integer float32 holds exactly, in
 * whatever order the plan adds them.  The run checks it per operator on
 * the data before it emulates (run_quant_check): K max|a'| max|b'| first,
 * and when that is over 2^24 the largest sum of |a' b'| (the reference's
 * magnitude, in double).  It refuses the operator when that is over 2^24
 * too, naming the bound: such a planned run cannot be exact, and the run
 * says so rather than give a rounded integer.  The direct run evaluates in
 * double, exact to 2^53.
 *
 * The output is then the operator's, by a reference step in double:
 * MatMulInteger's and ConvInteger's int32 accumulator (wrapped as int32
 * wraps: ONNX lets "accumulation overflow if and only if in 32 bits"), or
 * for QLinearMatMul and QLinearConv the requantized accumulator
 * y = saturate(round((acc + bias) * M) + y_zero_point) (rotor_onnx_quantize:
 * ties to even), with M = a_scale * b_scale / y_scale formed in float32 and
 * the product in double, as ONNX's reference implementation (numpy over
 * float32 scales and an int32 accumulator) and onnxruntime form it.  ONNX's
 * reference adds the zero point before it rounds, which differs from the
 * operator specification's order only on an exact tie with an odd zero
 * point; rotor follows the specification (QuantizeLinear's formula).
 *
 * A copy (an expression whose right side is one tensor: Identity, Reshape,
 * Transpose, Slice, Expand, Cast, ...) over integer or boolean values is
 * exact in float32 while every integer it reads is at most 2^24 in
 * magnitude; a larger one is refused.  An integer output follows ONNX's
 * Cast: truncation toward zero; a value outside the output type's range,
 * which ONNX leaves undefined, or a NaN, is refused.  A boolean output is
 * x != 0. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/model/onnx.h"
#include "rotor/op/emu.h"
#include "runint.h"

#define EXACT_F64 9007199254740992.0 /* 2^53 */

static bool is_int(rotor_dtype t) { return t >= ROTOR_DTYPE_I8 && t <= ROTOR_DTYPE_U64; }

/* The right-hand side is one tensor, read as it is. */
static bool is_copy(const rotor_expr *e) {
    return !e->accumulate && e->nnodes == 1 && e->rhs[0].op == ROTOR_NODE_TENSOR;
}

bool run_quant_takes(const rotor_graph *g, int o) {
    return rotor_op_attr(&g->ops[o], "rotor.quant.a") || run_copy_takes(g, o);
}

bool run_copy_takes(const rotor_graph *g, int o) {
    const rotor_op *op = &g->ops[o];
    if (!is_copy(&op->expr)) return false;
    for (int t = 0; t < op->expr.ntensors; t++) {
        int v = op->tensor_value[t];
        rotor_dtype d = v >= 0 ? g->values[v].dtype : ROTOR_DTYPE_F32;
        if (d != ROTOR_DTYPE_F32 && d != ROTOR_DTYPE_BOOL && !is_int(d)) return false;
    }
    return true;
}

/* ---- parameters ------------------------------------------------------------------------------- */

/* Reads the parameter at ONNX position pos (absent: p->d NULL); a graph
 * value without data (an input not given) is an error, never a zero. */
static rotor_status param_read(const rotor_graph *g, int o, double *const *vals, int64_t pos, run_qparam *p,
                               rotor_error *err) {
    int v;
    p->d = run_op_param(g, o, vals, (int)pos, p->buf, RUN_QPARAM_ATTR_MAX, &p->n, &v);
    if (v >= 0 && !vals[v])
        return run_op_fail(g, o, err, "'%s' has no data (an input not given)", g->values[v].name);
    p->shape = v >= 0 && p->n > 1 ? g->values[v].shape : NULL;
    p->rank = p->shape ? g->values[v].rank : 0;
    return ROTOR_OK;
}

/* Parameter k's element for element i of its tensor's value (the output's,
 * or input A's or B's: rotor_quant_lookups); 0 when the parameter is
 * absent (a zero point), 1 for a scale. */
static double param_at(const run_qop *q, rotor_quant_param k, int64_t i, double absent) {
    const run_qparam *p = &q->p[k];
    const rotor_value *x = q->look[k].tensor ? q->x[q->look[k].tensor] : q->y;
    if (!p->d) return absent;
    if (!p->shape) return p->d[0];
    return p->d[run_param_index(x->shape, x->rank, p->shape, p->rank, q->look[k].start, 0, i)];
}

/* ---- a quantized contraction, element by element ------------------------------------------------ */

/* The operator's parameters and output, nothing read yet. */
static void qop_init(const rotor_graph *g, int o, run_qop *q) {
    memset(q, 0, sizeof *q);
    const rotor_op *op = &g->ops[o];
    q->g = g, q->o = o;
    q->quant = rotor_quant_lookups(op, q->look);
    q->y = &g->values[op->tensor_value[0]];
}

static rotor_status qop_read(run_qop *q, double *const *vals, rotor_quant_param k, rotor_error *err) {
    return param_read(q->g, q->o, vals, q->look[k].pos, &q->p[k], err);
}

/* Input t's (1: A, 2: B) value and zero point. */
static rotor_status qop_side(run_qop *q, double *const *vals, int t, rotor_error *err) {
    const rotor_op *op = &q->g->ops[q->o];
    int v = op->expr.ntensors > t ? op->tensor_value[t] : -1;
    if (!q->quant || v < 0) return run_op_fail(q->g, q->o, err, "the lowering left no quantization of tensor %d", t);
    q->x[t] = &q->g->values[v];
    return qop_read(q, vals, t == 1 ? ROTOR_QP_A_ZERO : ROTOR_QP_B_ZERO, err);
}

/* What the output needs: the scales, the output's zero point, the bias
 * (after both sides: the lookups are there), in rotor_quant_param's order. */
static rotor_status qop_out_params(run_qop *q, double *const *vals, rotor_error *err) {
    rotor_status st = ROTOR_OK;
    for (int k = ROTOR_QP_A_SCALE; k < ROTOR_QP_COUNT && !st; k++) st = qop_read(q, vals, (rotor_quant_param)k, err);
    return st;
}

rotor_status run_qop_begin(const rotor_graph *g, int o, double *const *vals, run_qop *q, rotor_error *err) {
    qop_init(g, o, q);
    rotor_status st;
    if ((st = qop_side(q, vals, 1, err)) || (st = qop_side(q, vals, 2, err))) return st;
    return qop_out_params(q, vals, err);
}

double run_qop_zero(const run_qop *q, int t, int64_t k) {
    return param_at(q, t == 1 ? ROTOR_QP_A_ZERO : ROTOR_QP_B_ZERO, k, 0);
}

rotor_status run_qop_out(const run_qop *q, int64_t k, double *y, rotor_error *err) {
    double acc = *y + param_at(q, ROTOR_QP_BIAS, k, 0);
    if (!q->p[ROTOR_QP_Y_SCALE].d) { /* MatMulInteger, ConvInteger: int32, as it wraps */
        *y = (double)(int32_t)(uint32_t)(int64_t)acc;
        return ROTOR_OK;
    }
    float m = (float)param_at(q, ROTOR_QP_A_SCALE, k, 1) * (float)param_at(q, ROTOR_QP_B_SCALE, k, 1);
    m = m / (float)param_at(q, ROTOR_QP_Y_SCALE, k, 1);
    double r = acc * (double)m;
    if (isnan(r))
        return run_op_fail(q->g, q->o, err, "output element %lld requantizes to NaN (a scale is 0, infinite or NaN)",
                           (long long)k);
    *y = rotor_onnx_quantize(r, param_at(q, ROTOR_QP_Y_ZERO, k, 0), q->y->dtype);
    return ROTOR_OK;
}

static void int_range(rotor_dtype t, double *lo, double *hi);

/* K: the terms each output element sums, the reduced extents' product. */
static double reduced_terms(const rotor_expr *e) {
    double k = 1;
    for (int a = 0; a < e->naxes; a++)
        if (rotor_expr_is_reduction_axis(e, a)) k *= (double)e->extent[a];
    return k;
}

rotor_status run_qop_exact_f64(const run_qop *q, rotor_error *err) {
    double k = reduced_terms(&q->g->ops[q->o].expr), w[3] = {0};
    for (int t = 1; t <= 2; t++) {
        double lo, hi;
        int_range(q->x[t]->dtype, &lo, &hi);
        w[t] = hi - lo; /* |x - zero point| at most, both in the type */
    }
    if (k * w[1] * w[2] <= EXACT_F64) return ROTOR_OK;
    return run_op_fail(q->g, q->o, err, "an output could sum %.17g (%.17g terms of |a - a_zero_point| |b - "
                       "b_zero_point| at most %.17g), beyond 2^53, where double sums of integers stop being exact",
                       k * w[1] * w[2], k, w[1] * w[2]);
}

/* ---- a quantized contraction, whole tensors ------------------------------------------------------ */

/* src[t] = x - zero point for t = 1, 2; *bound = K max|a'| max|b'|. */
static rotor_status shift_inputs(const rotor_graph *g, int o, double *const *vals, run_quant *q, double *bound,
                                 rotor_error *err) {
    *bound = reduced_terms(&g->ops[o].expr);
    run_qop qo; /* each side's zero point read, then its elements checked, A then B */
    qop_init(g, o, &qo);
    rotor_status st = ROTOR_OK;
    for (int t = 1; t <= 2 && !(st = qop_side(&qo, vals, t, err)); t++) {
        int v = g->ops[o].tensor_value[t];
        const rotor_value *x = &g->values[v];
        if (!(q->src[t] = malloc(sizeof(double) * (size_t)(x->elements ? x->elements : 1)))) return rotor_nomem(err);
        double most = 0;
        for (int64_t i = 0; i < x->elements; i++) {
            if (vals[v][i] != floor(vals[v][i]))
                return run_op_fail(g, o, err, "element %lld of '%s' (%s) is %.17g, not an integer", (long long)i, x->name,
                             rotor_dtype_name(x->dtype), vals[v][i]);
            double s = vals[v][i] - run_qop_zero(&qo, t, i);
            q->src[t][i] = s;
            if (fabs(s) > most) most = fabs(s);
        }
        *bound *= most;
    }
    return st;
}

/* The requantizing epilogue (QLinear*) or the int32 accumulator (*Integer)
 * of output value y's elements. */
static rotor_status requantize(const rotor_graph *g, int o, double *const *vals, double *y, rotor_error *err) {
    run_qop qo; /* the output's parameters only: its inputs were shifted before */
    qop_init(g, o, &qo);
    rotor_status st = qop_out_params(&qo, vals, err);
    for (int64_t k = 0; !st && k < qo.y->elements; k++) st = run_qop_out(&qo, k, &y[k], err);
    return st;
}

/* ---- a copy ------------------------------------------------------------------------------------ */

/* The integer inputs of a copy are exact in float32. */
static rotor_status copy_inputs(const rotor_graph *g, int o, double *const *vals, rotor_error *err) {
    const rotor_op *op = &g->ops[o];
    for (int t = 1; t < op->expr.ntensors; t++) {
        int v = op->tensor_value[t];
        if (v < 0 || !vals[v] || !is_int(g->values[v].dtype)) continue;
        for (int64_t k = 0; k < g->values[v].elements; k++)
            if (fabs(vals[v][k]) > RUN_EXACT_F32)
                return run_op_fail(g, o, err, "element %lld of '%s' is %.17g; " RUN_EXACT_F32_WHY, (long long)k,
                                   g->values[v].name, vals[v][k]);
    }
    return ROTOR_OK;
}

/* The range of integer type t (int64, uint64 and uint32 beside the
 * quantized types). */
static void int_range(rotor_dtype t, double *lo, double *hi) {
    if (rotor_onnx_quant_range(t, lo, hi)) return;
    *lo = t == ROTOR_DTYPE_I64 ? -9223372036854775808.0 : 0;
    *hi = t == ROTOR_DTYPE_I64 ? 9223372036854775807.0 : t == ROTOR_DTYPE_U32 ? 4294967295.0 : 18446744073709551615.0;
}

bool run_cast_one(rotor_dtype t, double *y) {
    if (t == ROTOR_DTYPE_BOOL) {
        *y = *y != 0;
        return true;
    }
    if (!is_int(t)) return true;
    double lo, hi;
    int_range(t, &lo, &hi);
    double x = trunc(*y);
    if (!(x >= lo && x <= hi)) return false;
    *y = x;
    return true;
}

/* ONNX Cast into the output's type: truncation toward zero, or x != 0. */
static rotor_status cast_output(const rotor_graph *g, int o, double *y, rotor_error *err) {
    const rotor_value *yv = &g->values[g->ops[o].tensor_value[0]];
    for (int64_t k = 0; k < yv->elements; k++) {
        double was = y[k];
        if (!run_cast_one(yv->dtype, &y[k]))
            return run_op_fail(g, o, err, "element %lld is %.17g, outside %s (ONNX does not define the cast)", (long long)k,
                         was, rotor_dtype_name(yv->dtype));
    }
    return ROTOR_OK;
}

/* ---- the steps --------------------------------------------------------------------------------- */

rotor_status run_quant_begin(const rotor_graph *g, int o, double *const *vals, run_quant *q, rotor_error *err) {
    memset(q, 0, sizeof *q);
    const rotor_op *op = &g->ops[o];
    bool any = false;
    for (int t = 0; t < op->expr.ntensors; t++)
        any = any || (op->tensor_value[t] >= 0 && g->values[op->tensor_value[t]].dtype != ROTOR_DTYPE_F32);
    if (!rotor_op_attr(op, "rotor.quant.a")) {
        q->kind = any ? 2 : 0;
        return any ? copy_inputs(g, o, vals, err) : ROTOR_OK;
    }
    q->kind = 1;
    return shift_inputs(g, o, vals, q, &q->bound, err);
}

rotor_status run_quant_check(const run_quant *q, const rotor_graph *g, int o, const float *const *in, bool planned,
                             rotor_error *err) {
    double limit = planned ? RUN_EXACT_F32 : EXACT_F64, most = q->bound;
    if (q->kind != 1 || most <= limit) return ROTOR_OK;
    /* the tighter bound: each output's sum of |a' b'| over its terms (the
     * reference's magnitude), which bounds every partial sum of it */
    const rotor_expr *e = &g->ops[o].expr;
    int64_t n = rotor_emu_tensor_elems(e, 0, NULL);
    double *ref = malloc(sizeof *ref * (size_t)(n ? n : 1)), *mag = malloc(sizeof *mag * (size_t)(n ? n : 1));
    float *abs_in[ROTOR_MAX_TENSORS] = {NULL};
    rotor_status st = ref && mag ? ROTOR_OK : rotor_nomem(err);
    for (int t = 1; t < e->ntensors && !st; t++) {
        int64_t m = rotor_emu_tensor_elems(e, t, NULL);
        if (!(abs_in[t] = malloc(sizeof(float) * (size_t)(m ? m : 1)))) st = rotor_nomem(err);
        for (int64_t k = 0; k < m && !st; k++) abs_in[t][k] = fabsf(in[t][k]);
    }
    if (!st) st = rotor_emu_reference(e, (const float *const *)abs_in, ref, mag, err);
    most = 0;
    for (int64_t k = 0; k < n && !st; k++) most = fmax(most, mag[k]);
    if (!st && most > limit)
        st = run_op_fail(g, o, err, "the %s run cannot be exact: an output sums |a - a_zero_point| |b - b_zero_point| to "
                   "%.17g over its terms (K max|a'| max|b'| = %.17g), beyond 2^%d, where %s sums of integers stop "
                   "being exact", planned ? "planned" : "direct", most, q->bound, planned ? 24 : 53,
                   planned ? "float32" : "double");
    for (int t = 0; t < ROTOR_MAX_TENSORS; t++) free(abs_in[t]);
    free(ref);
    free(mag);
    return st;
}

rotor_status run_quant_end(const run_quant *q, const rotor_graph *g, int o, double *const *vals, double *y,
                           rotor_error *err) {
    if (q->kind == 1) return requantize(g, o, vals, y, err);
    if (q->kind == 2) return cast_output(g, o, y, err);
    return ROTOR_OK;
}

void run_quant_free(run_quant *q) {
    for (int t = 0; t < ROTOR_MAX_TENSORS; t++) free(q->src[t]);
    memset(q, 0, sizeof *q);
}
