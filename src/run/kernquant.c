/* kernquant.c — reference kernels of ONNX's quantization operators
 * (docs/run.md, "Quantized operators"): QuantizeLinear, DequantizeLinear
 * and DynamicQuantizeLinear, from the ONNX operator specification.  Their
 * scales and zero points are per tensor, per axis or blocked
 * (run_param_index), read by ONNX position from the graph or from the
 * attributes the lowering kept (run_op_param); the rounding is ONNX's
 * (rotor_onnx_quantize: ties to even, then the zero point, then the
 * type's range).
 *
 * Decisions where ONNX leaves room:
 *  - QuantizeLinear divides a float32 x by its scale in float32, as ONNX's
 *    reference implementation (numpy on float32 arrays) and onnxruntime do,
 *    so that a quotient rounds to the same integer as theirs; an int32 or
 *    float16 x divides in double.  DequantizeLinear to float32 subtracts and
 *    multiplies in float32 for the same reason.
 *  - A NaN to quantize is refused, naming the element: ONNX does not say
 *    which integer it becomes.
 *  - A float8 output is refused: rotor run computes integer quantization.
 *  - DynamicQuantizeLinear computes in float32, as the function body of its
 *    specification does.  An input whose range holds only 0 (all zeros)
 *    has scale 0 there, and the body divides by it; rotor gives scale 0,
 *    zero point 0 and zeros. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rotor/model/onnx.h"
#include "runint.h"

/* A parameter (scale or zero point) of at most this many elements may be an
 * attribute ("@K", graph.h); more are graph values. */
#define PARAM_ATTR_MAX 64

typedef struct qk {
    const rotor_graph *g;
    int o;
    const rotor_op *op;
    double *const *vals;
    rotor_error *err;
} qk;

#define QFAIL(k, ...) run_op_fail((k)->g, (k)->o, (k)->err, __VA_ARGS__)

static int64_t attr_int(const rotor_op *op, const char *name, int64_t dflt) {
    const rotor_attr *a = rotor_op_attr(op, name);
    return a && a->nints == 1 ? a->ints[0] : dflt;
}

/* How a parameter of np elements runs over x (the importer checked it,
 * onnxquant.c): per tensor, per axis (1-D along `axis`, default 1) or
 * blocked (x's rank, ceil(extent / block_size) along the axis). */
typedef struct playout {
    int64_t shape[ROTOR_GRAPH_MAX_RANK];
    int rank, start;
    int64_t block;
} playout;

static playout layout_of(const rotor_op *op, const rotor_value *x, int64_t np) {
    playout l = {.rank = 0};
    if (np <= 1) return l;
    int64_t a = attr_int(op, "axis", 1);
    int axis = (int)(a < 0 ? a + x->rank : a);
    l.block = attr_int(op, "block_size", 0);
    if (l.block > 0) {
        l.rank = x->rank;
        memcpy(l.shape, x->shape, sizeof l.shape);
        l.shape[axis] = (x->shape[axis] + l.block - 1) / l.block;
    } else {
        l.rank = 1, l.start = axis, l.shape[0] = np;
    }
    return l;
}

static int64_t at(const playout *l, const rotor_value *x, int64_t k) {
    return run_param_index(x->shape, x->rank, l->shape, l->rank, l->start, l->block, k);
}

/* The op's input x (ONNX position 0), its scale and zero point and how
 * they run over it, and its output y. */
typedef struct qin {
    const rotor_value *x, *y;
    playout l;
    const double *xd, *s, *z;
    int64_t ns, nz;
    double sbuf[PARAM_ATTR_MAX], zbuf[PARAM_ATTR_MAX];
} qin;

static rotor_status read_inputs(const qk *k, qin *in) {
    int64_t nx;
    int vx, vs, vz;
    in->xd = run_op_param(k->g, k->o, k->vals, 0, NULL, 0, &nx, &vx);
    in->s = run_op_param(k->g, k->o, k->vals, 1, in->sbuf, PARAM_ATTR_MAX, &in->ns, &vs);
    in->z = run_op_param(k->g, k->o, k->vals, 2, in->zbuf, PARAM_ATTR_MAX, &in->nz, &vz);
    if (!in->xd || vx < 0) return QFAIL(k, "has no data input");
    if (!in->s || in->ns < 1) return QFAIL(k, "its scale has no elements");
    in->x = &k->g->values[vx];
    in->y = &k->g->values[k->op->outputs[0]];
    in->l = layout_of(k->op, in->x, in->ns);
    if (in->z && in->nz != in->ns)
        return QFAIL(k, "its zero point has %lld elements, its scale %lld", (long long)in->nz, (long long)in->ns);
    return ROTOR_OK;
}

static rotor_status k_quantize(const qk *k) {
    qin in;
    rotor_status st = read_inputs(k, &in);
    if (st) return st;
    const rotor_value *y = in.y;
    double lo, hi;
    if (!rotor_onnx_quant_range(y->dtype, &lo, &hi))
        return QFAIL(k, "output '%s' is %s; rotor run quantizes to int8, uint8, int16, uint16 and int32", y->name,
                     rotor_dtype_name(y->dtype));
    const playout l = in.l;
    bool f32 = in.x->dtype == ROTOR_DTYPE_F32;
    double *out = k->vals[k->op->outputs[0]];
    for (int64_t e = 0; e < in.x->elements; e++) {
        int64_t p = at(&l, in.x, e);
        double q = f32 ? (double)((float)in.xd[e] / (float)in.s[p]) : in.xd[e] / in.s[p];
        if (isnan(q))
            return QFAIL(k, "element %lld of '%s' is NaN (or its scale 0): ONNX does not say which integer it "
                         "quantizes to", (long long)e, in.x->name);
        out[e] = rotor_onnx_quantize(q, in.z ? in.z[p] : 0, y->dtype);
    }
    return ROTOR_OK;
}

static rotor_status k_dequantize(const qk *k) {
    qin in;
    rotor_status st = read_inputs(k, &in);
    if (st) return st;
    const playout l = in.l;
    bool f32 = in.y->dtype == ROTOR_DTYPE_F32;
    double *out = k->vals[k->op->outputs[0]];
    for (int64_t e = 0; e < in.x->elements; e++) {
        int64_t p = at(&l, in.x, e);
        double z = in.z ? in.z[p] : 0;
        out[e] = f32 ? (double)(((float)in.xd[e] - (float)z) * (float)in.s[p]) : (in.xd[e] - z) * in.s[p];
    }
    return ROTOR_OK;
}

/* The specification's function body: the range [min(x, 0), max(x, 0)]
 * over 0..255, the zero point rounded and clipped, then QuantizeLinear. */
static rotor_status k_dynamic_quantize(const qk *k) {
    int64_t n;
    int vx;
    const double *x = run_op_param(k->g, k->o, k->vals, 0, NULL, 0, &n, &vx);
    if (!x) return QFAIL(k, "has no data input");
    float lo = 0, hi = 0;
    for (int64_t e = 0; e < n; e++) {
        if (isnan(x[e])) return QFAIL(k, "element %lld of its input is NaN", (long long)e);
        lo = fminf(lo, (float)x[e]);
        hi = fmaxf(hi, (float)x[e]);
    }
    float scale = (hi - lo) / 255.0f, zp = 0;
    if (scale > 0) {
        float z = 0.0f - lo / scale;
        zp = nearbyintf(z < 0 ? 0 : z > 255 ? 255 : z);
    }
    double *out[3] = {NULL, NULL, NULL};
    for (int i = 0; i < k->op->noutputs && i < 3; i++) out[i] = k->vals[k->op->outputs[i]];
    for (int64_t e = 0; e < n && out[0]; e++)
        out[0][e] = scale > 0 ? rotor_onnx_quantize((double)((float)x[e] / scale), zp, ROTOR_DTYPE_U8) : 0;
    if (out[1]) out[1][0] = scale;
    if (out[2]) out[2][0] = zp;
    return ROTOR_OK;
}

rotor_status run_kernel_quant(const rotor_graph *g, int o, rotor_kernel kind, double *const *vals, rotor_error *err) {
    qk k = {.g = g, .o = o, .op = &g->ops[o], .vals = vals, .err = err};
    switch (kind) {
    case ROTOR_KERNEL_QUANTIZE: return k_quantize(&k);
    case ROTOR_KERNEL_DEQUANTIZE: return k_dequantize(&k);
    case ROTOR_KERNEL_DYNAMIC_QUANTIZE: return k_dynamic_quantize(&k);
    default: return QFAIL(&k, "is not a quantization operator");
    }
}
