/* onnxquant.c — ONNX's own quantized operators (docs/onnx.md, "Quantized
 * operators"): the shape rules of QuantizeLinear, DequantizeLinear,
 * DynamicQuantizeLinear, QLinearMatMul, MatMulInteger, QLinearConv and
 * ConvInteger with the checks of their scales and zero points, and what
 * other quantized operators share (onnxir.h, "Quantization"): those checks,
 * and ONNX's rounding rule (rotor_onnx_quantize, onnx.h), which rotor run's
 * kernels apply too.
 *
 * The checks are the operators' type constraints and input descriptions in
 * ONNX's operator specification (Operators.md).  Decisions where it leaves
 * room:
 *  - A scale or zero point of one element is per tensor whatever its rank,
 *    as ONNX's reference implementation reads it (MIGraphX's files give
 *    shape [1] for a 1-D input without an axis).
 *  - block_size is read at every opset: MIGraphX's blocked files declare
 *    opset 19, two below the attribute's.
 *  - A 4-bit output_dtype (uint4, int4, float4e2m1; opsets 21 and 23) has no
 *    rotor dtype: the output is typed as the 8-bit type of its kind (uint8,
 *    int8, float8e4m3fn), one byte per element where the packed data takes
 *    half.
 *  - ConvInteger's and QLinearConv's input zero point and scale are per
 *    tensor (ONNX: "a scalar"), the weight's per tensor or one per output
 *    channel; QLinearMatMul's output scale and zero point per tensor. */
#include "onnxir.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* float4e2m1 (onnx.proto IR 10) is read as an 8-bit float; int4 and
 * uint4 are element types of their own (onnxir.h, decoded two per byte). */
enum { T_FLOAT4E2M1 = 23 };

static int widen_4bit(int t) { return t == T_FLOAT4E2M1 ? T_F8_E4M3FN : t; }

static const char *qtype_name(int t) {
    return t == T_UINT4 ? "uint4" : t == T_INT4 ? "int4" : t == T_FLOAT4E2M1 ? "float4e2m1" : ox_type_name(t);
}

bool ox_quant_int_type(int t) {
    return t == T_INT8 || t == T_UINT8 || t == T_INT16 || t == T_UINT16 || t == T_INT32;
}

/* A type ONNX quantizes to: the integers above and the 8-bit floats. */
static bool quant_type(int t) { return ox_quant_int_type(t) || (t >= T_F8_E4M3FN && t <= T_F8_E5M2FNUZ); }

/* Input i, or NULL when absent (i < 0: the operator has no such input). */
static ox_val *in_at(ox_model *m, const ox_node *n, int i) { return i >= 0 ? ox_in(m, n, i) : NULL; }

static bool eight_bit(int t) { return t == T_INT8 || t == T_UINT8; }

/* "2x3", or "scalar". */
static void shape_text(const ox_val *v, char *buf, size_t cap) {
    size_t k = (size_t)snprintf(buf, cap, "%s", v->rank ? "" : "scalar");
    for (int d = 0; d < v->rank && k < cap; d++)
        k += (size_t)snprintf(buf + k, cap - k, "%s%lld", d ? "x" : "", (long long)v->shape[d]);
}

static bool same_shape(const ox_val *a, const ox_val *b) {
    if (a->rank != b->rank) return false;
    for (int d = 0; d < a->rank; d++)
        if (a->shape[d] != b->shape[d]) return false;
    return true;
}

/* ---- the checks other quantized operators share (onnxir.h) -------------------------------------- */

rotor_status ox_check_zero_point(ox_model *m, ox_node *n, int zi, const char *tensor, int qtype, rotor_error *err) {
    const ox_val *zp = in_at(m, n, zi);
    if (zp && zp->onnx_type != qtype)
        NFAIL("zero point '%s' is %s but its tensor '%s' is %s", zp->name, ox_type_name(zp->onnx_type), tensor,
              qtype_name(qtype));
    return ROTOR_OK;
}

rotor_status ox_check_scale(ox_model *m, ox_node *n, int si, int zi, bool int32_ok, rotor_error *err) {
    const ox_val *s = in_at(m, n, si), *z = in_at(m, n, zi);
    if (s && s->onnx_type != T_FLOAT && s->onnx_type != T_FLOAT16 && s->onnx_type != T_BFLOAT16 &&
        !(int32_ok && s->onnx_type == T_INT32))
        NFAIL("scale '%s' is %s; ONNX's scales are float, float16 or bfloat16%s", s->name, ox_type_name(s->onnx_type),
              int32_ok ? " (or int32)" : "");
    if (s && z && !same_shape(s, z)) {
        char a[96], b[96];
        shape_text(s, a, sizeof a);
        shape_text(z, b, sizeof b);
        NFAIL("scale '%s' (%s) and zero point '%s' (%s) differ in shape", s->name, a, z->name, b);
    }
    return ROTOR_OK;
}

rotor_status ox_check_tensor_qparam(ox_model *m, ox_node *n, int si, int zi, const char *tensor, int qtype,
                                    rotor_error *err) {
    rotor_status st;
    if ((st = ox_check_zero_point(m, n, zi, tensor, qtype, err)) || (st = ox_check_scale(m, n, si, zi, false, err)))
        return st;
    for (int i = 0; i < 2; i++) {
        const ox_val *p = in_at(m, n, i ? zi : si);
        if (p && p->elems != 1)
            NFAIL("%s '%s' has %lld elements; '%s' is quantized per tensor (one element)", i ? "zero point" : "scale",
                  p->name, (long long)p->elems, tensor);
    }
    return ROTOR_OK;
}

rotor_status ox_check_qaxis(ox_model *m, ox_node *n, const ox_val *x, int si, rotor_error *err) {
    const ox_val *s = in_at(m, n, si);
    if (!s || s->elems == 1) return ROTOR_OK; /* per tensor */
    int64_t block = ox_attr_int(n, "block_size", 0), a = ox_attr_int(n, "axis", 1);
    int axis;
    if (block < 0) NFAIL("block_size %lld is negative", (long long)block);
    if (!ox_norm_axis(a, x->rank, &axis)) NFAIL("axis %lld is out of range for '%s' of rank %d", (long long)a, x->name,
                                                x->rank);
    char sh[96];
    shape_text(s, sh, sizeof sh);
    if (block == 0) {
        if (s->rank != 1 || s->shape[0] != x->shape[axis])
            NFAIL("scale '%s' (%s) is neither per tensor (one element) nor per axis (1-D of %lld, the extent of '%s' "
                  "along axis %d)", s->name, sh, (long long)x->shape[axis], x->name, axis);
        return ROTOR_OK;
    }
    if (s->rank != x->rank)
        NFAIL("block_size %lld: scale '%s' (%s) has rank %d; blocked quantization needs the rank of '%s', %d",
              (long long)block, s->name, sh, s->rank, x->name, x->rank);
    for (int d = 0; d < x->rank; d++) {
        int64_t want = d == axis ? (x->shape[d] + block - 1) / block : x->shape[d];
        if (s->shape[d] == want) continue;
        if (d == axis)
            NFAIL("block_size %lld: scale '%s' (%s) has %lld blocks along axis %d, where the %lld elements of '%s' "
                  "make %lld", (long long)block, s->name, sh, (long long)s->shape[d], d, (long long)x->shape[d],
                  x->name, (long long)want);
        NFAIL("block_size %lld: scale '%s' (%s) has %lld in dimension %d, '%s' %lld (only the blocked axis %d "
              "differs)", (long long)block, s->name, sh, (long long)s->shape[d], d, x->name, (long long)x->shape[d],
              axis);
    }
    return ROTOR_OK;
}

rotor_status ox_check_matmul_qparam(ox_model *m, ox_node *n, int xi, int si, int zi, bool row, rotor_error *err) {
    const ox_val *x = in_at(m, n, xi), *p = in_at(m, n, si) ? in_at(m, n, si) : in_at(m, n, zi);
    rotor_status st;
    if ((st = ox_check_zero_point(m, n, zi, x->name, x->onnx_type, err)) ||
        (st = ox_check_scale(m, n, si, zi, false, err)))
        return st;
    if (!p || p->elems == 1) return ROTOR_OK;
    /* per row of A [.., M, K] or column of B [.., K, N]: 1-D of M (N), or
     * A's rank with [.., M, 1] (B's: [.., 1, N]), batch extents A's or 1 */
    int r = x->rank, at = row ? r - 2 : r - 1, one = row ? r - 1 : r - 2;
    bool ok = false;
    if (r >= 2 && p->rank == 1) ok = p->shape[0] == x->shape[at];
    else if (r >= 2 && p->rank == r) {
        ok = p->shape[at] == x->shape[at] && p->shape[one] == 1;
        for (int d = 0; d < r - 2; d++) ok = ok && (p->shape[d] == x->shape[d] || p->shape[d] == 1);
    }
    if (!ok) {
        char sh[96];
        shape_text(p, sh, sizeof sh);
        NFAIL("'%s' (%s) is neither per tensor (one element) nor per %s of '%s' (%lld, or [..., %s])", p->name, sh,
              row ? "row" : "column", x->name, r >= 2 ? (long long)x->shape[at] : 1LL, row ? "M, 1" : "1, N");
    }
    return ROTOR_OK;
}

rotor_status ox_check_channel_qparam(ox_model *m, ox_node *n, int wi, int si, int zi, rotor_error *err) {
    const ox_val *w = in_at(m, n, wi), *p = in_at(m, n, si) ? in_at(m, n, si) : in_at(m, n, zi);
    rotor_status st;
    if ((st = ox_check_zero_point(m, n, zi, w->name, w->onnx_type, err)) ||
        (st = ox_check_scale(m, n, si, zi, false, err)))
        return st;
    if (p && p->elems != 1 && (p->rank != 1 || p->shape[0] != w->shape[0])) {
        char sh[96];
        shape_text(p, sh, sizeof sh);
        NFAIL("'%s' (%s) is neither per tensor (one element) nor per output channel (1-D of %lld)", p->name, sh,
              (long long)w->shape[0]);
    }
    return ROTOR_OK;
}

/* Input i of the operator is int8 or uint8. */
static rotor_status need_8bit(ox_model *m, ox_node *n, int i, rotor_error *err) {
    const ox_val *x = in_at(m, n, i);
    if (!eight_bit(x->onnx_type))
        NFAIL("input '%s' is %s; %s takes int8 or uint8", x->name, ox_type_name(x->onnx_type), n->p->op_type);
    return ROTOR_OK;
}

/* ---- the rounding rule (onnx.h) ------------------------------------------------------------------ */

bool rotor_onnx_quant_range(rotor_dtype t, double *lo, double *hi) {
    switch (t) {
    case ROTOR_DTYPE_I8: *lo = -128, *hi = 127; return true;
    case ROTOR_DTYPE_U8: *lo = 0, *hi = 255; return true;
    case ROTOR_DTYPE_I16: *lo = -32768, *hi = 32767; return true;
    case ROTOR_DTYPE_U16: *lo = 0, *hi = 65535; return true;
    case ROTOR_DTYPE_I4: *lo = -8, *hi = 7; return true;
    case ROTOR_DTYPE_U4: *lo = 0, *hi = 15; return true;
    case ROTOR_DTYPE_I32: *lo = -2147483648.0, *hi = 2147483647.0; return true;
    default: return false;
    }
}

/* ONNX QuantizeLinear: y = saturate(round(x / y_scale) + y_zero_point),
 * round to nearest, ties to even (rint under the default rounding mode),
 * then the zero point, then the type's range. */
double rotor_onnx_quantize(double x, double zero_point, rotor_dtype t) {
    double lo = 0, hi = 0, y = rint(x) + zero_point;
    if (!rotor_onnx_quant_range(t, &lo, &hi)) return y;
    return y < lo ? lo : y > hi ? hi : y;
}

/* ---- the shape rules ---------------------------------------------------------------------------- */

static rotor_status infer_dynamic(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 1, err))) return st;
    ox_val *x = in_at(m, n, 0);
    if (x->onnx_type != T_FLOAT)
        NFAIL("input '%s' is %s; DynamicQuantizeLinear takes float", x->name, ox_type_name(x->onnx_type));
    /* y, y_scale, y_zero_point: uint8, a float scalar, a uint8 scalar */
    if ((st = ox_set_out(m, n, 0, T_UINT8, x->rank, x->shape, err))) return st;
    if ((st = ox_set_out(m, n, 1, T_FLOAT, 0, NULL, err))) return st;
    return ox_set_out(m, n, 2, T_UINT8, 0, NULL, err);
}

/* DequantizeLinear: y = (x - x_zero_point) * x_scale. */
static rotor_status infer_dequantize(ox_model *m, ox_node *n, rotor_error *err) {
    ox_val *x = in_at(m, n, 0), *s = in_at(m, n, 1);
    if (!quant_type(x->onnx_type))
        NFAIL("input '%s' is %s; DequantizeLinear takes int8, uint8, int16, uint16, int32 or a float8 type", x->name,
              ox_type_name(x->onnx_type));
    rotor_status st;
    if ((st = ox_check_zero_point(m, n, 2, x->name, x->onnx_type, err)) ||
        (st = ox_check_scale(m, n, 1, 2, false, err)) || (st = ox_check_qaxis(m, n, x, 1, err)))
        return st;
    int type = (int)ox_attr_int(n, "output_dtype", 0); /* opset 23; else the scale's type */
    return ox_set_out(m, n, 0, type ? type : s->onnx_type, x->rank, x->shape, err);
}

/* QuantizeLinear: y = saturate(round(x / y_scale) + y_zero_point). */
static rotor_status infer_quantize(ox_model *m, ox_node *n, rotor_error *err) {
    ox_val *x = in_at(m, n, 0), *z = in_at(m, n, 2);
    if (x->onnx_type != T_FLOAT && x->onnx_type != T_FLOAT16 && x->onnx_type != T_BFLOAT16 &&
        x->onnx_type != T_INT32)
        NFAIL("input '%s' is %s; QuantizeLinear takes float, float16, bfloat16 or int32", x->name,
              ox_type_name(x->onnx_type));
    int od = (int)ox_attr_int(n, "output_dtype", 0); /* opset 21 */
    if (od && z && widen_4bit(od) != z->onnx_type)
        NFAIL("output_dtype %s disagrees with zero point '%s', which is %s", qtype_name(od), z->name,
              ox_type_name(z->onnx_type));
    int type = z ? z->onnx_type : od ? widen_4bit(od) : T_UINT8;
    if (!quant_type(type))
        NFAIL("output type %s is not one ONNX quantizes to (int8, uint8, int16, uint16, int32 or a float8 type)",
              ox_type_name(type));
    ox_val *y = ox_out(m, n, 0);
    rotor_status st;
    if ((st = ox_check_zero_point(m, n, 2, y ? y->name : "y", type, err)) ||
        (st = ox_check_scale(m, n, 1, 2, true, err)) || (st = ox_check_qaxis(m, n, x, 1, err)))
        return st;
    return ox_set_out(m, n, 0, type, x->rank, x->shape, err);
}

rotor_status ox_infer_qdq(ox_model *m, ox_node *n, rotor_error *err) {
    const char *op = n->p->op_type;
    if (!strcmp(op, "DynamicQuantizeLinear")) return infer_dynamic(m, n, err);
    if (n->nin < 2 || n->nin > 3)
        NFAIL("takes 2 or 3 inputs (x, scale and an optional zero point), not %d", n->nin);
    rotor_status st;
    if ((st = ox_need(m, n, 2, err))) return st;
    return !strcmp(op, "QuantizeLinear") ? infer_quantize(m, n, err) : infer_dequantize(m, n, err);
}

/* MatMulInteger: int32 Y = (A - a_zero_point) (B - b_zero_point). */
rotor_status ox_infer_matmul_integer(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 2, err))) return st;
    for (int i = 0; i < 2; i++)
        if ((st = need_8bit(m, n, i, err)) || (st = ox_check_matmul_qparam(m, n, i, -1, i + 2, i == 0, err)))
            return st;
    return ox_matmul_shape(m, n, 0, 1, T_INT32, err);
}

/* QLinearMatMul(a, a_scale, a_zero_point, b, b_scale, b_zero_point,
 * y_scale, y_zero_point): every input is required. */
rotor_status ox_infer_qlinear_matmul(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 8, err)) || (st = need_8bit(m, n, 0, err)) || (st = need_8bit(m, n, 3, err)) ||
        (st = ox_check_matmul_qparam(m, n, 0, 1, 2, true, err)) ||
        (st = ox_check_matmul_qparam(m, n, 3, 4, 5, false, err)))
        return st;
    ox_val *yz = in_at(m, n, 7), *y = ox_out(m, n, 0);
    if (!eight_bit(yz->onnx_type))
        NFAIL("y_zero_point '%s' is %s; QLinearMatMul outputs int8 or uint8", yz->name, ox_type_name(yz->onnx_type));
    if ((st = ox_check_tensor_qparam(m, n, 6, 7, y ? y->name : "y", yz->onnx_type, err))) return st;
    return ox_matmul_shape(m, n, 0, 3, yz->onnx_type, err);
}

/* ConvInteger(x, w, x_zero_point, w_zero_point): int32. */
rotor_status ox_infer_conv_integer(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 2, err)) || (st = need_8bit(m, n, 0, err)) || (st = need_8bit(m, n, 1, err))) return st;
    ox_val *x = in_at(m, n, 0);
    if ((st = ox_check_tensor_qparam(m, n, -1, 2, x->name, x->onnx_type, err)) ||
        (st = ox_check_channel_qparam(m, n, 1, -1, 3, err)))
        return st;
    return ox_conv_shape(m, n, 0, 1, T_INT32, err);
}

/* QLinearConv(x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale,
 * y_zero_point, B): B, when given, is int32, one per output channel. */
rotor_status ox_infer_qlinear_conv(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 8, err)) || (st = need_8bit(m, n, 0, err)) || (st = need_8bit(m, n, 3, err))) return st;
    ox_val *x = in_at(m, n, 0), *w = in_at(m, n, 3), *yz = in_at(m, n, 7), *b = in_at(m, n, 8), *y = ox_out(m, n, 0);
    if (!eight_bit(yz->onnx_type))
        NFAIL("y_zero_point '%s' is %s; QLinearConv outputs int8 or uint8", yz->name, ox_type_name(yz->onnx_type));
    if ((st = ox_check_tensor_qparam(m, n, 1, 2, x->name, x->onnx_type, err)) ||
        (st = ox_check_channel_qparam(m, n, 3, 4, 5, err)) ||
        (st = ox_check_tensor_qparam(m, n, 6, 7, y ? y->name : "y", yz->onnx_type, err)))
        return st;
    if (b && (b->onnx_type != T_INT32 || b->rank != 1 || b->shape[0] != w->shape[0]))
        NFAIL("bias '%s' must be int32 with one element per output channel (%lld)", b->name, (long long)w->shape[0]);
    return ox_conv_shape(m, n, 0, 3, yz->onnx_type, err);
}
